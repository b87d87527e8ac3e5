/*
 * audio/feat.c - Kaldi's fbank and MFCC (feat/feature-window.cc,
 * feature-fbank.cc, feature-mfcc.cc, mel-computations.cc), our own code
 * written from their definitions:
 *
 *   frame   frame_length samples every frame_shift (snip-edges: frames inside
 *           the signal; else centred on t*shift + shift/2, reflected at the ends)
 *   window  dither, DC removal (frame mean), raw log energy, pre-emphasis
 *           x[i] -= c x[i-1] with x[-1] = x[0], window, zero padding
 *   power   |FFT|^2 over bins 0 .. N/2 (sqrt when --use-power=false)
 *   mel     triangles on mel(f) = 1127 ln(1 + f/700) between low and high
 *           freq (high <= 0: Nyquist + high), over FFT bins 0 .. N/2-1
 *   fbank   log(max(mel, FLT_EPSILON)); energy first (or last with htk-compat)
 *   MFCC    DCT-II (orthonormal rows) of the log mel energies, first num_ceps,
 *           lifter 1 + Q/2 sin(pi i / Q), C0 replaced by the energy
 *
 * Arithmetic is in float where Kaldi's is (BaseFloat), sums in double.  The
 * FFT is KissFFT's complex transform of N/2 points (its plan is read-only
 * after kiss_fft_alloc, so threads share it) plus the usual real-input
 * split, with caller-side scratch; that is what makes one plan per size
 * safe to share (kiss_fftr keeps scratch inside its plan).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <kiss_fft.h>

#include "audio/audio.h"

struct mel_bin {
	size_t first, n; /* FFT bins first .. first+n-1 */
	float *w;        /* (n) weights, owned */
};

struct vpa_feat {
	struct vpa_feat_opts o;
	size_t len, shift, padded; /* samples */
	size_t dim;
	float *window;             /* (len) */
	struct mel_bin *mel;       /* (num_mel_bins) */
	float *dct;                /* (num_ceps, num_mel_bins) for MFCC */
	float *lifter;             /* (num_ceps) or NULL */
	kiss_fft_cfg fft;          /* padded/2 points */
	kiss_fft_cpx *tw;          /* (padded/2) e^{-2 pi i k / padded} */
	double log_energy_floor;
};

const struct vpa_feat_opts *vpa_feat_get_opts(const struct vpa_feat *f)
{
	return &f->o;
}

size_t vpa_feat_dim(const struct vpa_feat *f)
{
	return f->dim;
}

size_t vpa_feat_num_frames(const struct vpa_feat *f, size_t n)
{
	if (f->o.snip_edges)
		return n < f->len ? 0 : 1 + (n - f->len) / f->shift;
	return (n + f->shift / 2) / f->shift;
}

static float mel_scale(float hz)
{
	return 1127.0f * logf(1.0f + hz / 700.0f);
}

static double window_value(const struct vpa_feat_opts *o, size_t i, size_t len)
{
	double a = 2 * M_PI / (double)(len - 1), x = (double)i;
	switch (o->window_type) {
	case VPA_WIN_HANNING:
		return 0.5 - 0.5 * cos(a * x);
	case VPA_WIN_HAMMING:
		return 0.54 - 0.46 * cos(a * x);
	case VPA_WIN_POVEY:
		return pow(0.5 - 0.5 * cos(a * x), 0.85);
	case VPA_WIN_RECTANGULAR:
		return 1.0;
	case VPA_WIN_BLACKMAN:
		return o->blackman_coeff - 0.5 * cos(a * x) + (0.5 - o->blackman_coeff) * cos(2 * a * x);
	}
	VPA_BUG("window type %d", o->window_type);
}

void vpa_feat_free(struct vpa_feat *f)
{
	if (!f)
		return;
	if (f->mel)
		for (int b = 0; b < f->o.num_mel_bins; b++)
			free(f->mel[b].w);
	free(f->mel);
	free(f->window);
	free(f->dct);
	free(f->lifter);
	free(f->tw);
	kiss_fft_free(f->fft);
	free(f);
}

struct vpa_feat *vpa_feat_new(const struct vpa_feat_opts *o, struct vpa_err *err)
{
	struct vpa_feat *f = xcalloc(1, sizeof(*f));
	f->o = *o;
	double rate = o->sample_frequency;
	/* Kaldi: static_cast<int32>(samp_freq * 0.001 * ms) */
	double len = rate * 0.001 * o->frame_length, shift = rate * 0.001 * o->frame_shift;
	if (len < 2 || shift < 1 || len > 1e7) {
		vpa_fail(err, VPA_EINPUT, NULL,
			 "--frame-length=%g and --frame-shift=%g ms give frames of %g and shifts of %g samples at %g Hz: need at least 2 and 1",
			 o->frame_length, o->frame_shift, floor(len), floor(shift), rate);
		goto fail;
	}
	f->len = (size_t)len;
	f->shift = (size_t)shift;
	f->padded = f->len;
	if (o->round_to_power_of_two) {
		f->padded = 1;
		while (f->padded < f->len)
			f->padded <<= 1;
	}
	if (f->padded % 2) {
		vpa_fail(err, VPA_EINPUT, NULL,
			 "frames of %zu samples with --round-to-power-of-two=false: the FFT length must be even",
			 f->padded);
		goto fail;
	}
	double nyq = 0.5 * rate, lo = o->low_freq;
	double hi = o->high_freq > 0 ? o->high_freq : nyq + o->high_freq;
	if (lo < 0 || lo >= nyq || hi <= 0 || hi > nyq || hi <= lo) {
		vpa_fail(err, VPA_EINPUT, NULL,
			 "bad mel band edges: --low-freq=%g and --high-freq=%g give %g .. %g Hz, need 0 <= low < high <= Nyquist %g",
			 o->low_freq, o->high_freq, lo, hi, nyq);
		goto fail;
	}
	if (o->kind == VPA_FEAT_MFCC && o->num_ceps > o->num_mel_bins) {
		vpa_fail(err, VPA_EINPUT, NULL, "--num-ceps=%d exceeds --num-mel-bins=%d", o->num_ceps,
			 o->num_mel_bins);
		goto fail;
	}
	f->window = xmalloc(xmul(f->len, sizeof(float)));
	for (size_t i = 0; i < f->len; i++)
		f->window[i] = (float)window_value(o, i, f->len);

	/* mel banks (mel-computations.cc), in float as Kaldi */
	size_t nfft = f->padded / 2;
	float fft_bin_width = (float)rate / (float)f->padded;
	float mlo = mel_scale((float)lo), mhi = mel_scale((float)hi);
	float delta = (mhi - mlo) / (float)(o->num_mel_bins + 1);
	f->mel = xcalloc((size_t)o->num_mel_bins, sizeof(struct mel_bin));
	float *tmp = xmalloc(xmul(nfft, sizeof(float)));
	for (int b = 0; b < o->num_mel_bins; b++) {
		float left = mlo + (float)b * delta, center = mlo + (float)(b + 1) * delta,
		      right = mlo + (float)(b + 2) * delta;
		long first = -1, last = -1;
		for (size_t i = 0; i < nfft; i++) {
			float m = mel_scale(fft_bin_width * (float)i);
			if (m > left && m < right) {
				tmp[i] = m <= center ? (m - left) / (center - left)
						     : (right - m) / (right - center);
				if (first < 0)
					first = (long)i;
				last = (long)i;
			}
		}
		if (first < 0) {
			free(tmp);
			vpa_fail(err, VPA_EINPUT, NULL,
				 "mel bin %d has no FFT bin: --num-mel-bins=%d is too large for %zu-point frames between %g and %g Hz",
				 b, o->num_mel_bins, f->padded, lo, hi);
			goto fail;
		}
		f->mel[b].first = (size_t)first;
		f->mel[b].n = (size_t)(last - first + 1);
		f->mel[b].w = xmalloc(xmul(f->mel[b].n, sizeof(float)));
		memcpy(f->mel[b].w, tmp + first, f->mel[b].n * sizeof(float));
	}
	free(tmp);

	if (o->kind == VPA_FEAT_MFCC) {
		size_t K = (size_t)o->num_ceps, N = (size_t)o->num_mel_bins;
		f->dct = xmalloc(xmul(K * N, sizeof(float)));
		for (size_t k = 0; k < K; k++)
			for (size_t n = 0; n < N; n++)
				f->dct[k * N + n] = (float)(k == 0 ? sqrt(1.0 / (double)N)
							   : sqrt(2.0 / (double)N) *
								     cos(M_PI / (double)N * ((double)n + 0.5) * (double)k));
		if (o->cepstral_lifter != 0) {
			f->lifter = xmalloc(xmul(K, sizeof(float)));
			for (size_t i = 0; i < K; i++)
				f->lifter[i] = (float)(1.0 + 0.5 * o->cepstral_lifter *
							     sin(M_PI * (double)i / o->cepstral_lifter));
		}
		f->dim = K;
	} else {
		f->dim = (size_t)o->num_mel_bins + (o->use_energy ? 1 : 0);
	}
	f->fft = kiss_fft_alloc((int)nfft, 0, NULL, NULL);
	if (!f->fft)
		VPA_BUG("kiss_fft_alloc(%zu)", nfft);
	f->tw = xmalloc(xmul(nfft, sizeof(kiss_fft_cpx)));
	for (size_t k = 0; k < nfft; k++) {
		double ph = -2 * M_PI * (double)k / (double)f->padded;
		f->tw[k].r = (float)cos(ph);
		f->tw[k].i = (float)sin(ph);
	}
	f->log_energy_floor = o->energy_floor > 0 ? log(o->energy_floor) : -INFINITY;
	return f;
fail:
	vpa_feat_free(f);
	return NULL;
}

/* sum of squares in double, four partial sums */
static double sumsq(const float *x, size_t n)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		s0 += (double)x[i] * x[i];
		s1 += (double)x[i + 1] * x[i + 1];
		s2 += (double)x[i + 2] * x[i + 2];
		s3 += (double)x[i + 3] * x[i + 3];
	}
	for (; i < n; i++)
		s0 += (double)x[i] * x[i];
	return s0 + s1 + s2 + s3;
}

/* Scratch of one vpa_feat_compute call. */
struct scratch {
	float *frame;       /* (padded) */
	kiss_fft_cpx *z, *Z; /* (padded/2) */
	float *pow;         /* (padded/2 + 1) */
	float *mel;         /* (num_mel_bins) */
};

/*
 * Power spectrum of the real frame in s->z (padded floats) into s->pow (padded/2 + 1):
 * z[k] = x[2k] + i x[2k+1], Z = FFT(z), X[k] = E[k] + W^k O[k] with
 * E = (Z[k] + conj Z[M-k]) / 2, O = (Z[k] - conj Z[M-k]) / 2i.
 */
static void power_spectrum(const struct vpa_feat *f, struct scratch *s)
{
	size_t M = f->padded / 2;
	kiss_fft(f->fft, s->z, s->Z); /* s->z holds the windowed, padded frame */
	const kiss_fft_cpx *Z = s->Z;
	float dc = Z[0].r + Z[0].i, ny = Z[0].r - Z[0].i;
	s->pow[0] = dc * dc;
	s->pow[M] = ny * ny;
	for (size_t k = 1; k < M; k++) {
		kiss_fft_cpx a = Z[k], b = Z[M - k];
		float er = 0.5f * (a.r + b.r), ei = 0.5f * (a.i - b.i);
		/* O = (a - conj b) / 2i: (a.r - b.r, a.i + b.i)/2 divided by i */
		float or_ = 0.5f * (a.i + b.i), oi = -0.5f * (a.r - b.r);
		float wr = f->tw[k].r, wi = f->tw[k].i;
		float xr = er + wr * or_ - wi * oi, xi = ei + wr * oi + wi * or_;
		s->pow[k] = xr * xr + xi * xi;
	}
}

void vpa_feat_compute(const struct vpa_feat *f, const float *wave, size_t n, float *out,
		      float *log_energy, uint64_t dither_seed)
{
	const struct vpa_feat_opts *o = &f->o;
	size_t T = vpa_feat_num_frames(f, n), M = f->padded / 2, nb = (size_t)o->num_mel_bins;
	if (T == 0)
		return;
	struct scratch s;
	s.frame = xmalloc(xmul(f->padded, sizeof(float)));
	s.z = xmalloc(xmul(M, sizeof(kiss_fft_cpx)));
	s.Z = xmalloc(xmul(M, sizeof(kiss_fft_cpx)));
	s.pow = xmalloc(xmul(M + 1, sizeof(float)));
	s.mel = xmalloc(xmul(nb, sizeof(float)));
	struct vpa_rng rng;
	vpa_rng_seed(&rng, dither_seed);
	int need_raw = o->raw_energy && (o->use_energy || log_energy);
	for (size_t t = 0; t < T; t++) {
		float *x = s.frame;
		long start = o->snip_edges ? (long)(t * f->shift)
					   : (long)(t * f->shift + f->shift / 2) - (long)(f->len / 2);
		if (start >= 0 && (size_t)start + f->len <= n) {
			memcpy(x, wave + start, f->len * sizeof(float));
		} else {
			for (size_t i = 0; i < f->len; i++) {
				long k = start + (long)i;
				while (k < 0 || k >= (long)n)
					k = k < 0 ? -k - 1 : 2 * (long)n - 1 - k;
				x[i] = wave[k];
			}
		}
		if (o->dither != 0)
			for (size_t i = 0; i < f->len; i++)
				x[i] += (float)(vpa_rng_normal(&rng) * o->dither);
		if (o->remove_dc_offset) { /* four partial sums: no serial add chain */
			double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
			size_t i = 0;
			for (; i + 4 <= f->len; i += 4) {
				s0 += x[i];
				s1 += x[i + 1];
				s2 += x[i + 2];
				s3 += x[i + 3];
			}
			for (; i < f->len; i++)
				s0 += x[i];
			float mean = (float)((s0 + s1 + s2 + s3) / (double)f->len);
			for (i = 0; i < f->len; i++)
				x[i] -= mean;
		}
		double energy = 0;
		if (need_raw)
			energy = log(fmax(sumsq(x, f->len), FLT_EPSILON));
		/* pre-emphasis (x[i] - c x[i-1], x[-1] = x[0]) and window, fused, into the FFT input */
		float *restrict zin = (float *)s.z;
		const float *restrict xin = x, *restrict win = f->window;
		float c = (float)o->preemphasis_coefficient;
		zin[0] = (xin[0] - c * xin[0]) * win[0];
		for (size_t i = 1; i < f->len; i++)
			zin[i] = (xin[i] - c * xin[i - 1]) * win[i];
		memset(zin + f->len, 0, (f->padded - f->len) * sizeof(float));
		if (!o->raw_energy && (o->use_energy || log_energy))
			energy = log(fmax(sumsq(zin, f->len), FLT_EPSILON));
		if (energy < f->log_energy_floor)
			energy = f->log_energy_floor;
		if (log_energy)
			log_energy[t] = (float)energy;

		power_spectrum(f, &s);
		if (o->kind == VPA_FEAT_FBANK && !o->use_power)
			for (size_t k = 0; k <= M; k++)
				s.pow[k] = sqrtf(s.pow[k]);
		for (size_t b = 0; b < nb; b++) {
			const struct mel_bin *mb = &f->mel[b];
			const float *p = s.pow + mb->first, *wt = mb->w;
			float a0 = 0, a1 = 0;
			size_t k = 0;
			for (; k + 2 <= mb->n; k += 2) {
				a0 += wt[k] * p[k];
				a1 += wt[k + 1] * p[k + 1];
			}
			if (k < mb->n)
				a0 += wt[k] * p[k];
			s.mel[b] = a0 + a1;
		}
		float *y = out + t * f->dim;
		if (o->kind == VPA_FEAT_FBANK) {
			size_t off = o->use_energy && !o->htk_compat ? 1 : 0;
			for (size_t b = 0; b < nb; b++)
				y[off + b] = o->use_log_fbank ? logf(fmaxf(s.mel[b], FLT_EPSILON)) : s.mel[b];
			if (o->use_energy)
				y[o->htk_compat ? nb : 0] = (float)energy;
		} else {
			size_t K = (size_t)o->num_ceps;
			for (size_t b = 0; b < nb; b++)
				s.mel[b] = logf(fmaxf(s.mel[b], FLT_EPSILON));
			for (size_t k = 0; k < K; k++) {
				const float *row = f->dct + k * nb;
				double acc = 0;
				for (size_t b = 0; b < nb; b++)
					acc += (double)row[b] * s.mel[b];
				y[k] = (float)acc;
			}
			if (f->lifter)
				for (size_t k = 0; k < K; k++)
					y[k] *= f->lifter[k];
			if (o->use_energy)
				y[0] = (float)energy;
			if (o->htk_compat) {
				float e0 = y[0];
				memmove(y, y + 1, (K - 1) * sizeof(float));
				y[K - 1] = o->use_energy ? e0 : e0 * (float)M_SQRT2;
			}
		}
	}
	free(s.frame), free(s.z), free(s.Z), free(s.pow), free(s.mel);
}

/* FNV-1a of the utterance id: its dither stream does not depend on threads or order. */
static uint64_t id_seed(const char *id)
{
	return vpa_fnv1a(id);
}

int vpa_feat_apply(const struct vpa_feat *f, const struct vpa_wave *w, const char *id,
		   struct vpa_fmat *out, struct vpa_err *err)
{
	const struct vpa_feat_opts *o = &f->o;
	if (w->rate != o->sample_frequency)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: sample rate %g Hz differs from --sample-frequency=%g", id, w->rate,
				o->sample_frequency);
	size_t T = vpa_feat_num_frames(f, w->n), D = f->dim;
	vpa_fmat_init(out);
	out->cols = D;
	if (T == 0)
		return 0;
	float *x = xmalloc(xmul(xmul(T, D), sizeof(float)));
	float *e = o->vad ? xmalloc(xmul(T, sizeof(float))) : NULL;
	vpa_feat_compute(f, w->x, w->n, x, e, id_seed(id));
	for (size_t i = 0; i < T * D; i++)
		if (!isfinite(x[i])) { /* a float file far beyond full scale overflows float */
			free(x);
			free(e);
			return vpa_fail(err, VPA_EINPUT, NULL,
					"%s: features are not finite (frame %zu): samples far beyond full scale?",
					id, i / D + 1);
		}
	if (o->cmvn == VPA_CMVN_UTT)
		vpa_cmvn_utt(x, T, D, o->norm_vars);
	else if (o->cmvn == VPA_CMVN_SLIDING)
		vpa_cmvn_sliding(x, T, D, o->cmn_window, o->min_cmn_window, o->center, o->norm_vars);
	if (o->vad) {
		unsigned char *v = xmalloc(T);
		vpa_vad_compute(e, T, o->vad_energy_threshold, o->vad_energy_mean_scale,
				o->vad_frames_context, o->vad_proportion_threshold, v);
		size_t k = 0;
		for (size_t t = 0; t < T; t++)
			if (v[t]) {
				if (k != t)
					memmove(x + k * D, x + t * D, D * sizeof(float));
				k++;
			}
		T = k;
		free(v);
		free(e);
	}
	out->x = x;
	out->rows = T;
	return 0;
}
