/*
 * audio/pitch.c - YIN (de Cheveigne and Kawahara, JASA 111(4) 1917-1930,
 * 2002), steps 1-5 of section II, and rho_F0 of the VoicePrivacy 2022
 * evaluation plan.  Step 6 (best local estimate) is not applied.
 *
 * Frame t covers samples t*shift .. t*shift + W + tau_max - 1: the
 * difference function (step 2, eq. 6) integrates W = win_ms samples at lags
 * up to tau_max = floor(rate / min_f0).  Cost: W * tau_max multiply-adds per
 * frame (direct sums; 40 ms at 16 kHz and 60 Hz: 170k per frame).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/anon.h"

void vpa_pitch_opts_init(struct vpa_pitch_opts *o)
{
	o->min_f0 = 60;
	o->max_f0 = 400;
	o->win_ms = 40;
	o->shift_ms = 10;
	o->threshold = 0.15;
	o->silence_db = 40;
}

void vpa_pitch_init(struct vpa_pitch *p)
{
	memset(p, 0, sizeof(*p));
}

void vpa_pitch_release(struct vpa_pitch *p)
{
	free(p->f0);
	free(p->voiced);
	vpa_pitch_init(p);
}

int vpa_pitch_track(const float *x, size_t n, double rate, const struct vpa_pitch_opts *o,
		    struct vpa_pitch *out, struct vpa_err *err)
{
	vpa_pitch_init(out);
	if (!(rate > 0 && rate < 1e7))
		return vpa_fail(err, VPA_EINPUT, NULL, "sample rate must be positive, got %g", rate);
	if (!(o->min_f0 > 0 && o->max_f0 > o->min_f0 && o->max_f0 < rate / 4))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"pitch range must satisfy 0 < min_f0 < max_f0 < rate/4, got %g..%g Hz",
				o->min_f0, o->max_f0);
	if (!(o->threshold > 0 && o->threshold < 1) || !(o->silence_db > 0))
		return vpa_fail(err, VPA_EINPUT, NULL, "YIN threshold must be in (0, 1), got %g",
				o->threshold);
	size_t W = (size_t)floor(o->win_ms * 0.001 * rate);
	size_t shift = (size_t)floor(o->shift_ms * 0.001 * rate);
	size_t tmax = (size_t)floor(rate / o->min_f0);
	size_t tmin = (size_t)floor(rate / o->max_f0);
	if (tmin < 2)
		tmin = 2;
	if (shift < 1 || W < tmax)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"pitch window of %g ms must hold one period of min_f0 %g Hz", o->win_ms,
				o->min_f0);
	size_t span = W + tmax + 1;
	size_t nfr = n >= span ? 1 + (n - span) / shift : 0;
	out->n = nfr;
	out->f0 = xcalloc(nfr ? nfr : 1, sizeof(float));
	out->voiced = xcalloc(nfr ? nfr : 1, 1);
	double *d = xmalloc(xmul(tmax + 2, sizeof(double)));
	double *energy = xmalloc(xmul(nfr ? nfr : 1, sizeof(double)));
	double *cand = xmalloc(xmul(nfr ? nfr : 1, sizeof(double)));
	double *dmin = xmalloc(xmul(nfr ? nfr : 1, sizeof(double)));
	double emax = 0;
	for (size_t t = 0; t < nfr; t++) {
		const float *s = x + t * shift;
		double e = 0;
		for (size_t j = 0; j < W; j++)
			e += (double)s[j] * s[j];
		energy[t] = e;
		if (e > emax)
			emax = e;
		/* step 2: difference function d(tau) = sum_j (x_j - x_{j+tau})^2 */
		d[0] = 0;
		for (size_t tau = 1; tau <= tmax + 1; tau++) {
			double acc = 0;
			for (size_t j = 0; j < W; j++) {
				double v = (double)s[j] - s[j + tau];
				acc += v * v;
			}
			d[tau] = acc;
		}
		/* step 3: cumulative mean normalised difference d'(tau) */
		double run = 0;
		d[0] = 1;
		for (size_t tau = 1; tau <= tmax + 1; tau++) {
			run += d[tau];
			d[tau] = run > 0 ? d[tau] * (double)tau / run : 1;
		}
		/* step 4: the first lag below the threshold, followed to its local
		 * minimum; else the global minimum over [tmin, tmax] */
		size_t best = 0;
		for (size_t tau = tmin; tau <= tmax; tau++)
			if (d[tau] < o->threshold) {
				while (tau + 1 <= tmax && d[tau + 1] < d[tau])
					tau++;
				best = tau;
				break;
			}
		if (!best) {
			best = tmin;
			for (size_t tau = tmin; tau <= tmax; tau++)
				if (d[tau] < d[best])
					best = tau;
		}
		/* step 5: parabolic interpolation of d' around the chosen lag */
		double p = (double)best;
		double a = d[best - 1], b = d[best], c = d[best + 1];
		double den = a - 2 * b + c;
		if (den > 0) {
			double delta = 0.5 * (a - c) / den;
			if (fabs(delta) < 1)
				p += delta;
		}
		cand[t] = rate / p;
		dmin[t] = b;
	}
	double floor_e = emax * pow(10, -o->silence_db / 10);
	for (size_t t = 0; t < nfr; t++) {
		int v = emax > 0 && energy[t] > floor_e && dmin[t] < o->threshold;
		out->voiced[t] = (unsigned char)v;
		out->f0[t] = v ? (float)cand[t] : 0;
	}
	free(dmin);
	free(cand);
	free(energy);
	free(d);
	return 0;
}

int vpa_rho_f0(const struct vpa_pitch *a, const struct vpa_pitch *b, double *rho,
	       size_t *n_common, struct vpa_err *err)
{
	size_t n = a->n < b->n ? a->n : b->n, k = 0;
	double ma = 0, mb = 0;
	*rho = 0;
	for (size_t t = 0; t < n; t++)
		if (a->voiced[t] && b->voiced[t]) {
			ma += a->f0[t];
			mb += b->f0[t];
			k++;
		}
	if (n_common)
		*n_common = k;
	if (k < 2)
		return vpa_fail(err, VPA_EINPUT, NULL, "rho_F0 undefined: %zu frame%s voiced in both", k,
				k == 1 ? "" : "s");
	ma /= (double)k;
	mb /= (double)k;
	double saa = 0, sbb = 0, sab = 0;
	for (size_t t = 0; t < n; t++)
		if (a->voiced[t] && b->voiced[t]) {
			double u = a->f0[t] - ma, v = b->f0[t] - mb;
			saa += u * u;
			sbb += v * v;
			sab += u * v;
		}
	if (!(saa > 0 && sbb > 0))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"rho_F0 undefined: F0 constant on the %zu frames voiced in both", k);
	*rho = sab / sqrt(saa * sbb);
	return 0;
}
