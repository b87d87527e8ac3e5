/*
 * audio/pshift.c - pitch shifting by TD-PSOLA (Moulines and Charpentier,
 * "Pitch-synchronous waveform processing techniques for text-to-speech
 * synthesis using diphones", Speech Communication 9(5-6) 453-467, 1990) with
 * the utterance-level Gaussian normalisation of log F0 of COMPRISE D2.3
 * section 4.2.4 (eq. 3) as the F0 mapping.  Definition in audio/anon.h.
 *
 * Pitch marks come from the YIN track (audio/pitch.c): one per period in
 * voiced stretches, the first on the largest peak and each next one a period
 * on at the same phase of the waveform (best normalised correlation of one
 * period; so that every grain is centred on the same phase of its period and
 * its two-period Hann window is zero on the neighbouring periods' peaks), one
 * every unvoiced_ms elsewhere.  Cost: the tracker (W * tau_max per 10 ms
 * frame) dominates; the alignment is 0.4 P x P per period, the overlap-add
 * two periods per synthesis mark.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/anon.h"

void vpa_pshift_opts_init(struct vpa_pshift_opts *o)
{
	o->semitones = 0;
	o->sigma_ratio = 1;
	o->unvoiced_ms = 10;
	o->dilate = 2;
	vpa_pitch_opts_init(&o->pitch);
}

/* The frame whose centre is nearest sample i. */
static double fmin2(double a, double b)
{
	return a < b ? a : b;
}

static size_t frame_of(double i, double c0, double shift, size_t nfr)
{
	double t = floor((i - c0) / shift + 0.5);
	if (t < 0)
		return 0;
	if (t > (double)(nfr - 1))
		return nfr - 1;
	return (size_t)t;
}

/* argmax of |x[i]| over i in [a, b] clipped to [lo, n-1]; -1 when empty. */
static long peak(const float *x, size_t n, long a, long b, long lo)
{
	if (a < lo)
		a = lo;
	if (b > (long)n - 1)
		b = (long)n - 1;
	long best = -1;
	double bv = -INFINITY;
	for (long i = a; i <= b; i++) {
		double v = fabs((double)x[i]);
		if (v > bv) {
			bv = v;
			best = i;
		}
	}
	return best;
}

static int check_opts(const struct vpa_pshift_opts *o, double rate, struct vpa_err *err)
{
	if (!(o->semitones >= -24 && o->semitones <= 24))
		return vpa_fail(err, VPA_EINPUT, NULL, "semitones must be in [-24, 24], got %g",
				o->semitones);
	if (!(o->sigma_ratio >= 0 && o->sigma_ratio <= 4))
		return vpa_fail(err, VPA_EINPUT, NULL, "sigma ratio must be in [0, 4], got %g",
				o->sigma_ratio);
	if (!(o->dilate >= 0 && o->dilate <= 10))
		return vpa_fail(err, VPA_EINPUT, NULL, "voicing dilation must be in [0, 10] frames, got %d",
				o->dilate);
	if (!(o->unvoiced_ms >= 1 && o->unvoiced_ms <= 50))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"unvoiced pseudo-period must be in [1, 50] ms, got %g", o->unvoiced_ms);
	if (!(rate >= 1000 && rate < 1e7))
		return vpa_fail(err, VPA_EINPUT, NULL, "sample rate must be at least 1000 Hz, got %g",
				rate);
	return 0;
}

/*
 * The lag in [lo, hi] (clipped so that m + lag <= n - 1) whose one-period
 * segment x[m + lag - h .. m + lag + h] best matches x[m - h .. m + h]:
 * largest sum_j x[m+j] x[m+lag+j] / sqrt(sum_j x[m+lag+j]^2) (samples outside
 * the signal count as 0; an all-zero segment scores 0), the earliest on a
 * tie; m + lag, or -1 when m + lo > n - 1.
 */
static long align(const float *x, size_t n, long m, long lo, long hi, long h)
{
	long last = (long)n - 1;
	if (lo < 1)
		lo = 1;
	if (m + hi > last)
		hi = last - m;
	long best = -1;
	double bv = -INFINITY;
	for (long lag = lo; lag <= hi; lag++) {
		double c = 0, e = 0;
		for (long j = -h; j <= h; j++) {
			long i = m + j, k = m + lag + j;
			double u = i >= 0 && i <= last ? x[i] : 0, v = k >= 0 && k <= last ? x[k] : 0;
			c += u * v;
			e += v * v;
		}
		double s = e > 0 ? c / sqrt(e) : 0;
		if (s > bv) {
			bv = s;
			best = m + lag;
		}
	}
	return best;
}

int vpa_pshift(const float *x, size_t n, double rate, const struct vpa_pshift_opts *o, float **y,
	       struct vpa_err *err)
{
	*y = NULL;
	if (check_opts(o, rate, err))
		return err->status;
	struct vpa_pitch p;
	int rc = vpa_pitch_track(x, n, rate, &o->pitch, &p, err);
	if (!rc)
		rc = vpa_pshift_track(x, n, rate, o, &p, y, err);
	vpa_pitch_release(&p);
	return rc;
}

int vpa_pshift_track(const float *x, size_t n, double rate, const struct vpa_pshift_opts *o,
		     const struct vpa_pitch *pt, float **y, struct vpa_err *err)
{
	*y = NULL;
	if (check_opts(o, rate, err))
		return err->status;
	const struct vpa_pitch_opts *po = &o->pitch;
	size_t W = (size_t)floor(po->win_ms * 0.001 * rate);
	size_t tmax = (size_t)floor(rate / po->min_f0);
	size_t sh = (size_t)floor(po->shift_ms * 0.001 * rate);
	if (!(po->min_f0 > 0 && po->max_f0 > po->min_f0) || sh < 1)
		return vpa_fail(err, VPA_EINPUT, NULL, "pitch options out of range");
	size_t span = W + tmax + 1, nfr = n >= span ? 1 + (n - span) / sh : 0;
	if (nfr == 0)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"signal of %zu samples is shorter than the pitch tracker's frame of %zu "
				"samples", n, span);
	if (pt->n != nfr)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"pitch track of %zu frames for a signal of %zu frames", pt->n, nfr);
	for (size_t t = 0; t < nfr; t++)
		if (pt->voiced[t] && !(pt->f0[t] > 0 && isfinite(pt->f0[t])))
			return vpa_fail(err, VPA_EINPUT, NULL, "pitch track frame %zu: voiced with F0 %g",
					t, (double)pt->f0[t]);
	const struct vpa_pitch p = *pt;
	double shift = (double)sh;
	int rc = 0;
	double c0 = (double)(W + tmax + 1) / 2;
	/* eq. 3 statistics: mean and population std of ln F0 over voiced frames */
	double mu = 0;
	size_t nv = 0;
	for (size_t t = 0; t < p.n; t++)
		if (p.voiced[t]) {
			mu += log(p.f0[t]);
			nv++;
		}
	float *out = xmalloc(xmul(n, sizeof(float)));
	if (!nv) { /* nothing voiced: nothing to shift */
		memcpy(out, x, n * sizeof(float));
		*y = out;
		return 0;
	}
	mu /= (double)nv;
	double *beta_fr = xmalloc(xmul(p.n, sizeof(double)));
	double fmin = po->min_f0 / 4, fmax = fmin2(4 * po->max_f0, rate / 4);
	for (size_t t = 0; t < p.n; t++) {
		beta_fr[t] = 1;
		if (!p.voiced[t])
			continue;
		double f = p.f0[t] * exp((log(p.f0[t]) - mu) * (o->sigma_ratio - 1) +
					 o->semitones * M_LN2 / 12);
		f = f < fmin ? fmin : f > fmax ? fmax : f;
		beta_fr[t] = f / p.f0[t];
	}
	/* voicing of the marks: a frame within `dilate` frames of a voiced frame
	 * takes the nearest voiced frame's F0 and beta (the earlier on a tie) */
	long dil = o->dilate;
	unsigned char *vv = xcalloc(p.n, 1);
	float *vf = xcalloc(p.n, sizeof(float));
	for (size_t t = 0; t < p.n; t++) {
		long best = -1;
		for (long d = 0; d <= dil && best < 0; d++) {
			if ((long)t - d >= 0 && p.voiced[t - (size_t)d])
				best = (long)t - d;
			else if (t + (size_t)d < p.n && p.voiced[t + (size_t)d])
				best = (long)t + d;
		}
		if (best >= 0) {
			vv[t] = 1;
			vf[t] = p.f0[best];
			beta_fr[t] = beta_fr[best];
		}
	}
	/* analysis marks */
	size_t cap = 64, K = 0;
	long *a = xmalloc(xmul(cap, sizeof(long)));
	double *beta = xmalloc(xmul(cap, sizeof(double)));
	long U = lrint(o->unvoiced_ms * 0.001 * rate);
	if (U < 2)
		U = 2;
	long m = 0, last = (long)n - 1;
	int synced = 0; /* m was placed by a voiced rule */
	for (;;) {
		size_t fm = frame_of((double)m, c0, shift, p.n);
		if (K == cap) {
			cap *= 2;
			a = xrealloc(a, xmul(cap, sizeof(long)));
			beta = xrealloc(beta, xmul(cap, sizeof(double)));
		}
		a[K] = m;
		beta[K] = beta_fr[fm];
		K++;
		if (m >= last)
			break;
		long next;
		if (!vv[fm]) {
			synced = 0;
			long c = m + U;
			size_t fc = frame_of((double)c, c0, shift, p.n);
			if (c < last && vv[fc]) {
				long P = lrint(rate / vf[fc]);
				next = peak(x, n, m + U / 2, m + U / 2 + P - 1, m + 1);
				synced = 1;
			} else
				next = c;
		} else {
			double P = rate / vf[fm];
			if (!synced) {
				next = peak(x, n, m + lrint(P / 2), m + lrint(1.5 * P) - 1, m + 1);
				if (next >= 0)
					synced = 1;
			} else
				next = align(x, n, m, (long)ceil(0.8 * P), (long)floor(1.2 * P),
					     lrint(P / 2));
		}
		if (next < 0 || next > last)
			next = last;
		m = next;
	}
	free(beta_fr);
	free(vv);
	free(vf);
	/* synthesis: grain k (window of its two periods) at round(t_j) */
	double *acc = xcalloc(n, sizeof(double));
	double tj = 0;
	size_t q = 0, k = 0;
	long placed = -1;
	while (tj <= (double)last) {
		while (q + 1 < K - 1 && (double)a[q + 1] <= tj)
			q++;
		while (k + 1 < K && fabs((double)a[k + 1] - tj) < fabs((double)a[k] - tj))
			k++;
		long s = lrint(tj);
		for (int side = 0; side < 2; side++) {
			long L = side ? (k + 1 < K ? a[k + 1] - a[k] : 0)
				      : (k > 0 ? a[k] - a[k - 1] : 0);
			for (long d = side ? 0 : -L + 1; side ? d < L : d <= 0; d++) {
				if (!side && d == 0 && k + 1 < K)
					continue; /* d = 0 once, by the right half (or here at the end) */
				long i = s + d, src = a[k] + d;
				if (i < 0 || i > last || src < 0 || src > last)
					continue;
				double w = 0.5 + 0.5 * cos(M_PI * (double)d / (double)L);
				acc[i] += w * x[src];
			}
		}
		placed = s;
		if (K == 1)
			break;
		double per = (double)(a[q + 1] - a[q]);
		tj += per / beta[k];
	}
	if (placed < last && K > 1) { /* cover the end with the last grain at n - 1 */
		long L = a[K - 1] - a[K - 2];
		for (long d = -L + 1; d <= 0; d++)
			acc[last + d] += (0.5 + 0.5 * cos(M_PI * (double)d / (double)L)) * x[last + d];
	}
	if (K == 1)
		acc[0] = x[0];
	for (size_t i = 0; i < n && !rc; i++) {
		if (!isfinite(acc[i]))
			rc = vpa_fail(err, VPA_ENUMERIC, NULL, "pitch-shifted sample %zu is not finite", i);
		out[i] = (float)acc[i];
	}
	free(acc);
	free(beta);
	free(a);
	if (rc)
		free(out);
	else
		*y = out;
	return rc;
}
