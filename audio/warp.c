/*
 * audio/warp.c - VTLN-style bilinear frequency warping of the short-time
 * spectrum (the VoiceMask approach: Qian, Du, Wang, Li, Liu, "VoiceMask:
 * anonymize and sanitize voice input on mobile devices", arXiv 1711.11460,
 * 2017; surveyed in COMPRISE D2.3 section 2.2).  Definition in audio/anon.h.
 *
 * Phases by a phase vocoder (Flanagan and Golden 1966; Laroche and Dolson
 * 1999): the instantaneous frequency of each analysis bin is its bin
 * frequency plus the wrapped phase advance deviation over one hop; target bin
 * k takes the instantaneous frequency of its nearest source bin mapped
 * through the warping function, and accumulates it over the hops.  Keeping
 * each bin's own phase instead (no vocoder) makes frames incoherent: a tone
 * comes out on the grid f0 + m * rate/hop, not at its warped frequency.
 * Analysis and synthesis windows are the
 * periodic Hann window; the overlap-add is divided by the summed squared
 * window, and the signal is padded by one frame on both sides so that every
 * sample is covered by frames with a non-zero window.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <kiss_fft.h>

#include "audio/anon.h"

void vpa_warp_opts_init(struct vpa_warp_opts *o)
{
	o->alpha = 0.1;
	o->win_ms = 32;
	o->shift_ms = 8;
}

double vpa_warp_freq(double omega, double alpha)
{
	return omega + 2 * atan(alpha * sin(omega) / (1 - alpha * cos(omega)));
}

int vpa_warp(const float *x, size_t n, double rate, const struct vpa_warp_opts *o, float **y,
	     struct vpa_err *err)
{
	*y = NULL;
	if (!(o->alpha > -1 && o->alpha < 1))
		return vpa_fail(err, VPA_EINPUT, NULL, "warping alpha must be in (-1, 1), got %g",
				o->alpha);
	if (!(rate > 0 && rate < 1e7))
		return vpa_fail(err, VPA_EINPUT, NULL, "sample rate must be positive, got %g", rate);
	/* the window rounded to the nearest even count (the spectrum's half needs
	 * one): 32 ms is 512 samples at 16 kHz, 1411.2 -> 1412 at 44.1 kHz (issue 31) */
	size_t N = 2 * (size_t)llround(o->win_ms * 0.001 * rate / 2);
	size_t hop = (size_t)floor(o->shift_ms * 0.001 * rate);
	if (N < 16)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"--win-ms %g at %g Hz is %zu samples: at least 16 are needed (--win-ms >= %g)",
				o->win_ms, rate, N, ceil(15.0 / rate * 1000 * 1000) / 1000);
	if (hop < 1 || hop > N / 2)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"--shift-ms %g at %g Hz: the shift must be at least one sample and at most "
				"half of --win-ms (%g ms)",
				o->shift_ms, rate, o->win_ms / 2);
	if (n == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "no samples");
	size_t half = N / 2;
	double *w = xmalloc(xmul(N, sizeof(double)));
	for (size_t j = 0; j < N; j++)
		w[j] = 0.5 - 0.5 * cos(2 * M_PI * (double)j / (double)N);
	/* src[k]: the source bin (fractional) whose magnitude lands on bin k */
	double *src = xmalloc(xmul(half + 1, sizeof(double)));
	for (size_t k = 0; k <= half; k++) {
		double om = M_PI * (double)k / (double)half;
		src[k] = vpa_warp_freq(om, -o->alpha) / M_PI * (double)half; /* the inverse warp */
		if (src[k] < 0)
			src[k] = 0;
		if (src[k] > (double)half)
			src[k] = (double)half;
	}
	kiss_fft_cfg fwd = kiss_fft_alloc((int)N, 0, NULL, NULL);
	kiss_fft_cfg inv = kiss_fft_alloc((int)N, 1, NULL, NULL);
	if (!fwd || !inv)
		VPA_BUG("kiss_fft_alloc(%zu)", N);
	kiss_fft_cpx *in = xmalloc(xmul(N, sizeof(kiss_fft_cpx)));
	kiss_fft_cpx *X = xmalloc(xmul(N, sizeof(kiss_fft_cpx)));
	kiss_fft_cpx *Y = xmalloc(xmul(N, sizeof(kiss_fft_cpx)));
	double *mag = xmalloc(xmul(half + 1, sizeof(double)));
	double *inst = xmalloc(xmul(half + 1, sizeof(double)));  /* rad/sample */
	double *prevph = xcalloc(half + 1, sizeof(double));
	double *synph = xcalloc(half + 1, sizeof(double));
	/* padded signal positions: sample i of x sits at i + N */
	size_t total = n + 2 * N;
	double *acc = xcalloc(total, sizeof(double));
	double *norm = xcalloc(total, sizeof(double));
	for (size_t start = 0; start + N <= total; start += hop) {
		for (size_t j = 0; j < N; j++) {
			size_t p = start + j;
			double v = p >= N && p < N + n ? x[p - N] : 0;
			in[j].r = (float)(v * w[j]);
			in[j].i = 0;
		}
		kiss_fft(fwd, in, X);
		for (size_t k = 0; k <= half; k++) {
			mag[k] = hypot(X[k].r, X[k].i);
			double ph = atan2(X[k].i, X[k].r);
			double om = M_PI * (double)k / (double)half;
			double dev = ph - prevph[k] - om * (double)hop;
			dev -= 2 * M_PI * floor(dev / (2 * M_PI) + 0.5);
			inst[k] = om + dev / (double)hop;
			prevph[k] = ph;
		}
		for (size_t k = 0; k <= half; k++) {
			double s = src[k];
			size_t k0 = (size_t)floor(s);
			double fr = s - (double)k0;
			double m = k0 >= half ? mag[half] : (1 - fr) * mag[k0] + fr * mag[k0 + 1];
			size_t kn = (size_t)floor(s + 0.5);
			double f = inst[kn];
			if (f < 0)
				f = 0;
			if (f > M_PI)
				f = M_PI;
			synph[k] += vpa_warp_freq(f, o->alpha) * (double)hop;
			synph[k] -= 2 * M_PI * floor(synph[k] / (2 * M_PI));
			if (o->alpha == 0)
				Y[k] = X[k]; /* exact identity */
			else {
				Y[k].r = (float)(m * cos(synph[k]));
				Y[k].i = (float)(m * sin(synph[k]));
			}
			if (k == 0 || k == half)
				Y[k].i = 0;
		}
		for (size_t k = 1; k < half; k++) { /* Hermitian symmetry: a real frame */
			Y[N - k].r = Y[k].r;
			Y[N - k].i = -Y[k].i;
		}
		kiss_fft(inv, Y, in);
		for (size_t j = 0; j < N; j++) {
			acc[start + j] += in[j].r / (double)N * w[j];
			norm[start + j] += w[j] * w[j];
		}
	}
	float *out = xmalloc(xmul(n, sizeof(float)));
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		double d = norm[i + N];
		double v = d > 1e-9 ? acc[i + N] / d : 0;
		if (!isfinite(v)) {
			rc = vpa_fail(err, VPA_ENUMERIC, NULL, "warped sample %zu is not finite", i);
			break;
		}
		out[i] = (float)v;
	}
	if (rc)
		free(out);
	else
		*y = out;
	free(norm);
	free(acc);
	free(synph);
	free(prevph);
	free(inst);
	free(mag);
	free(Y);
	free(X);
	free(in);
	kiss_fft_free(inv);
	kiss_fft_free(fwd);
	free(src);
	free(w);
	return rc;
}
