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

double vpa_cllr(const struct vpa_scores *s)
{
	if (sv_check(s, NULL))
		return NAN;
	double ct = sum_softplus(s->tar, s->w_tar, s->n_tar, -1) / sv_total(s->w_tar, s->n_tar);
	double cn = sum_softplus(s->non, s->w_non, s->n_non, 1) / sv_total(s->w_non, s->n_non);
	return (ct + cn) / (2 * M_LN2);
}
