/*
 * audio/mcadams.c - the McAdams-coefficient anonymiser (VPC B2 `anonym_v2`,
 * Patino et al. 2021).  The definition is in audio/anon.h; this file follows
 * the published Python step by step so that the NumPy transcription in
 * tests/golden/anon/gen_mcadams.py is its independent reference.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/anon.h"
#include "base/la.h"

#define MAX_ORDER 64

void vpa_mcadams_opts_init(struct vpa_mcadams_opts *o)
{
	o->alpha = 0.8;
	o->win_ms = 20;
	o->shift_ms = 10;
	o->lp_order = 20;
}

/*
 * librosa.lpc (Burg's method, librosa >= 0.7 `__lpc`) of y (n) into a
 * (order + 1), a[0] = 1.  The forward/backward error vectors shrink by one
 * sample per order as in librosa (fwd = y[1:], bwd = y[:-1] at the start).
 * fwd/bwd: scratch of n doubles each.  Returns -1 when the denominator is not
 * positive (librosa's FloatingPointError).
 */
static int burg(const double *y, size_t n, int order, double *a, double *fwd, double *bwd)
{
	double prev[MAX_ORDER + 1];
	memset(a, 0, (size_t)(order + 1) * sizeof(double));
	a[0] = 1;
	if (n < 2 || n <= (size_t)order)
		return -1;
	size_t m = n - 1; /* current length of both error vectors */
	memcpy(fwd, y + 1, m * sizeof(double));
	memcpy(bwd, y, m * sizeof(double));
	double den = 0, den2 = 0;
	for (size_t j = 0; j < m; j++) {
		den += fwd[j] * fwd[j];
		den2 += bwd[j] * bwd[j];
	}
	den += den2;
	double *fw = fwd, *bw = bwd;
	for (int i = 0; i < order; i++) {
		if (!(den > 0))
			return -1;
		double dot = 0;
		for (size_t j = 0; j < m; j++)
			dot += bw[j] * fw[j];
		double k = -2 * dot / den;
		memcpy(prev, a, (size_t)(order + 1) * sizeof(double));
		for (int j = 1; j <= i + 1; j++)
			a[j] = prev[j] + k * prev[i - j + 1];
		for (size_t j = 0; j < m; j++) {
			double ft = fw[j];
			fw[j] = ft + k * bw[j];
			bw[j] = bw[j] + k * ft;
		}
		double q = 1 - k * k;
		den = q * den - bw[m - 1] * bw[m - 1] - fw[0] * fw[0];
		/* fwd = fwd[1:], bwd = bwd[:-1] */
		fw++;
		m--;
	}
	return 0;
}

/*
 * One frame: LPC, pole rotation, residual and resynthesis, the window again.
 * f (len) windowed frame, g (len) output.
 */
static int frame_anon(const double *f, size_t len, const double *w, int order, double alpha,
		      double *g, double *s1, double *s2, struct vpa_err *err)
{
	double a[MAX_ORDER + 1], an[MAX_ORDER + 1], re[MAX_ORDER], im[MAX_ORDER];
	double complex c[MAX_ORDER + 1];
	for (size_t j = 0; j < len; j++)
		s1[j] = f[j] + FLT_EPSILON; /* librosa.lpc(windowed_frames + eps) */
	/* s2 holds fwd then bwd */
	if (burg(s1, len, order, a, s2, s2 + len) < 0)
		return vpa_fail(err, VPA_ENUMERIC, NULL,
				"LPC (Burg) ill-conditioned: non-positive prediction error");
	int rc = vpa_poly_roots((size_t)order, a, re, im, err);
	if (rc)
		return rc;
	/* np.poly of the new poles: convolve with [1, -r] root by root, in order */
	c[0] = 1;
	for (int k = 0; k < order; k++) {
		double complex r = re[k] + I * im[k];
		if (im[k] != 0) {
			double phi = atan2(im[k], re[k]);
			double mag = hypot(re[k], im[k]);
			double nphi = (phi < 0 ? -1 : 1) * pow(fabs(phi), alpha);
			r = mag * cos(nphi) + I * (mag * sin(nphi));
		}
		c[k + 1] = -r * c[k];
		for (int j = k; j >= 1; j--)
			c[j] = c[j] - r * c[j - 1];
	}
	for (int j = 0; j <= order; j++)
		an[j] = creal(c[j]);
	/* residual e = A(z) f (FIR), then g = e / A'(z) (IIR), both from rest */
	for (size_t t = 0; t < len; t++) {
		double e = f[t];
		int kmax = t < (size_t)order ? (int)t : order;
		for (int k = 1; k <= kmax; k++)
			e += a[k] * f[t - (size_t)k];
		double y = e;
		for (int k = 1; k <= kmax; k++)
			y -= an[k] * g[t - (size_t)k];
		g[t] = y;
	}
	for (size_t t = 0; t < len; t++)
		g[t] *= w[t];
	return 0;
}

int vpa_mcadams(const float *x, size_t n, double rate, const struct vpa_mcadams_opts *o, float **y,
		struct vpa_err *err)
{
	*y = NULL;
	if (!(o->alpha > 0 && o->alpha <= 2))
		return vpa_fail(err, VPA_EINPUT, NULL, "McAdams alpha must be in (0, 2], got %g",
				o->alpha);
	if (!(rate > 0 && rate < 1e7))
		return vpa_fail(err, VPA_EINPUT, NULL, "sample rate must be positive, got %g", rate);
	if (!(o->win_ms > 0 && o->win_ms <= 1000) || !(o->shift_ms > 0 && o->shift_ms <= o->win_ms))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"--win-ms must be in (0, 1000] and --shift-ms in (0, win-ms], got %g and %g",
				o->win_ms, o->shift_ms);
	/* np.floor(winLengthinms * 0.001 * freq) */
	size_t winlen = (size_t)floor(o->win_ms * 0.001 * rate);
	size_t shift = (size_t)floor(o->shift_ms * 0.001 * rate);
	if (o->lp_order < 1 || o->lp_order > MAX_ORDER)
		return vpa_fail(err, VPA_EINPUT, NULL, "--lp-order must be in [1, %d], got %d", MAX_ORDER,
				o->lp_order);
	if (shift < 1 || winlen < (size_t)o->lp_order + 2)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"a %zu-sample frame is too short for LPC order %d", winlen, o->lp_order);
	if (n < winlen)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"signal of %zu samples is shorter than one %zu-sample frame", n, winlen);

	double *w = xmalloc(xmul(winlen, sizeof(double)));
	double hsum = 0;
	for (size_t j = 0; j < winlen; j++) { /* np.hanning (symmetric) */
		double h = winlen > 1 ? 0.5 - 0.5 * cos(2 * M_PI * (double)j / (double)(winlen - 1)) : 1;
		w[j] = h;
		hsum += h;
	}
	double K = hsum / (double)shift;
	for (size_t j = 0; j < winlen; j++)
		w[j] = sqrt(w[j] / K);

	size_t nfr = 1 + (n - winlen) / shift;
	double *out = xcalloc(n, sizeof(double));
	double *f = xmalloc(xmul(winlen, sizeof(double)));
	double *g = xmalloc(xmul(winlen, sizeof(double)));
	double *s1 = xmalloc(xmul(winlen, sizeof(double)));
	double *s2 = xmalloc(xmul(2 * winlen, sizeof(double)));
	int rc = 0;
	for (size_t t = 0; t < nfr && !rc; t++) {
		const float *xs = x + t * shift;
		for (size_t j = 0; j < winlen; j++) {
			float s = xs[j] / 32768.0f + FLT_EPSILON; /* float32: librosa.load + eps */
			f[j] = (double)s * w[j];
		}
		rc = frame_anon(f, winlen, w, o->lp_order, o->alpha, g, s1, s2, err);
		for (size_t j = 0; j < winlen && !rc; j++)
			out[t * shift + j] += g[j];
	}
	if (!rc) {
		double mx = 0;
		for (size_t j = 0; j < n; j++)
			if (fabs(out[j]) > mx)
				mx = fabs(out[j]);
		if (!(mx > 0) || !isfinite(mx))
			rc = vpa_fail(err, VPA_ENUMERIC, NULL,
				      "McAdams output is %s: nothing to normalise",
				      mx > 0 ? "not finite" : "all zero");
		else {
			float *yy = xmalloc(xmul(n, sizeof(float)));
			for (size_t j = 0; j < n; j++)
				yy[j] = (float)trunc(out[j] / mx * 32766.0); /* astype(int16) */
			*y = yy;
		}
	}
	free(s2);
	free(s1);
	free(g);
	free(f);
	free(out);
	free(w);
	return rc;
}
