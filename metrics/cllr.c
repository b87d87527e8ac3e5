/*
 * metrics/cllr.c - Cllr (Brummer & du Preez 2006) of scores read as natural
 * log likelihood ratios.
 *
 *   Cllr = 1/2 [ mean_tar log2(1 + e^-s) + mean_non log2(1 + e^s) ]
 *
 * log(1 + e^x) is evaluated as max(x, 0) + log1p(e^-|x|), which neither
 * overflows for large x nor loses the tail for very negative x (the
 * VoicePrivacy `cllr` goes through sigmoid() and returns inf once a
 * posterior rounds to 0, at |s| > ~745; here such a score costs |s|/ln 2
 * bits, its true value).
 */
#include "sv_metrics.h"

#include <math.h>

/* sum of w_i log(1 + e^(sign x_i)) */
static double sum_softplus(const double *x, const double *w, size_t n, double sign)
{
	double acc = 0;
	if (!w) {
		/* a run of equal scores (sorted float32 scores of 10^8 trials are
		 * mostly ties) adds the same term: computed once per run, the sum
		 * and its order are as before */
		double prev = NAN, term = 0;
		for (size_t i = 0; i < n; i++) {
			if (!(x[i] == prev)) {
				prev = x[i];
				double v = sign * prev;
				term = (v > 0 ? v : 0) + log1p(exp(-fabs(v)));
			}
			acc += term;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			if (w[i] == 0)
				continue;
			double v = sign * x[i];
			acc += w[i] * ((v > 0 ? v : 0) + log1p(exp(-fabs(v))));
		}
	}
	return acc;
}

double sv_softplus_part(const double *x, const double *w, size_t n, double sign, size_t k)
{
	size_t lo = n * k / SV_CLLR_PARTS, hi = n * (k + 1) / SV_CLLR_PARTS;
	return sum_softplus(x + lo, w ? w + lo : NULL, hi - lo, sign);
}

double sv_cllr_from_parts(const struct vpa_scores *s, const double *tar, const double *non)
{
	double st = 0, sn = 0;
	for (size_t k = 0; k < SV_CLLR_PARTS; k++) {
		st += tar[k];
		sn += non[k];
	}
	double ct = st / sv_total(s->w_tar, s->n_tar), cn = sn / sv_total(s->w_non, s->n_non);
	return (ct + cn) / (2 * M_LN2);
}

double vpa_cllr(const struct vpa_scores *s)
{
	if (sv_check(s, NULL))
		return NAN;
	double t[SV_CLLR_PARTS], n[SV_CLLR_PARTS];
	for (size_t k = 0; k < SV_CLLR_PARTS; k++) {
		t[k] = sv_softplus_part(s->tar, s->w_tar, s->n_tar, -1, k);
		n[k] = sv_softplus_part(s->non, s->w_non, s->n_non, 1, k);
	}
	return sv_cllr_from_parts(s, t, n);
}
