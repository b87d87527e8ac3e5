/*
 * metrics/eer.c - the descending threshold sweep: sweep EER, min DCF and the
 * fraction of tied trials in one merge walk of the two sorted arrays.
 *
 * Sweep EER (DESIGN.md): the scikit-learn `roc_curve` recipe with every
 * threshold kept.  Thresholds are the distinct scores from the highest to the
 * lowest, "accept" is score >= threshold; with tps, fps the accepted counts,
 * fnr = 1 - tps/N_tar, fpr = fps/N_non are computed exactly as numpy does (a
 * division, then 1 - x) so that the first index minimising |fnr - fpr| is the
 * one numpy's argmin finds; EER = (fnr + fpr) / 2 there.  (roc_curve also
 * puts a threshold +inf first, with fnr = 1, fpr = 0; it can never be the
 * first minimum, because the highest distinct score already has |fnr - fpr|
 * < 1, so it is left out.)
 *
 * Min DCF (BOSARIS / NIST normalised): over the same thresholds plus
 * "accept nothing" (P_miss = 1, P_fa = 0, threshold just above the highest
 * score), the smallest (p C_miss P_miss + (1-p) C_fa P_fa) / min(p C_miss,
 * (1-p) C_fa); the first minimum in the descending order wins.  "Accept
 * nothing" costs at most 1 with the normalisation, so min DCF <= 1.
 */
#include "sv_metrics.h"

#include <math.h>

void sv_sweep(const struct vpa_scores *s, double p_target, double c_miss, double c_fa,
	      struct sv_sweep *out)
{
	const double *tar = s->tar, *non = s->non, *wt = s->w_tar, *wn = s->w_non;
	size_t i = s->n_tar, j = s->n_non;
	double W_t = sv_total(wt, i), W_n = sv_total(wn, j);
	double a = p_target * c_miss, b = (1 - p_target) * c_fa;
	double norm = a < b ? a : b;
	double tp = 0, fp = 0, best_d = INFINITY;
	size_t tied = 0;
	double hi = tar[i - 1] > non[j - 1] ? tar[i - 1] : non[j - 1];

	out->eer = NAN;
	out->eer_threshold = hi;
	out->min_dcf = a / norm; /* accept nothing */
	out->min_dcf_threshold = nextafter(hi, INFINITY);
	if (!isfinite(out->min_dcf_threshold))
		out->min_dcf_threshold = hi;

	while (i > 0 || j > 0) {
		double v;
		if (i == 0)
			v = non[j - 1];
		else if (j == 0)
			v = tar[i - 1];
		else
			v = tar[i - 1] > non[j - 1] ? tar[i - 1] : non[j - 1];
		size_t c = 0;
		while (i > 0 && tar[i - 1] == v) {
			i--;
			tp += SV_W(wt, i);
			c++;
		}
		while (j > 0 && non[j - 1] == v) {
			j--;
			fp += SV_W(wn, j);
			c++;
		}
		if (c > 1)
			tied += c;
		double fnr = 1 - tp / W_t, fpr = fp / W_n;
		double d = fabs(fnr - fpr);
		if (d < best_d) {
			best_d = d;
			out->eer = (fnr + fpr) / 2;
			out->eer_threshold = v;
		}
		double dcf = (a * ((W_t - tp) / W_t) + b * fpr) / norm;
		if (dcf < out->min_dcf) {
			out->min_dcf = dcf;
			out->min_dcf_threshold = v;
		}
	}
	out->frac_tied = (double)tied / (double)(s->n_tar + s->n_non);
}

double vpa_eer_sweep(const struct vpa_scores *s, double *threshold)
{
	if (sv_check(s, NULL)) {
		if (threshold)
			*threshold = NAN;
		return NAN;
	}
	struct sv_sweep w;
	sv_sweep(s, 0.01, 1, 1, &w);
	if (threshold)
		*threshold = w.eer_threshold;
	return w.eer;
}

double vpa_min_dcf(const struct vpa_scores *s, double p_target, double c_miss,
		   double c_fa, double *threshold)
{
	if (sv_check(s, NULL) || !(p_target > 0 && p_target < 1) || !(c_miss > 0) ||
	    !(c_fa > 0)) {
		if (threshold)
			*threshold = NAN;
		return NAN;
	}
	struct sv_sweep w;
	sv_sweep(s, p_target, c_miss, c_fa, &w);
	if (threshold)
		*threshold = w.min_dcf_threshold;
	return w.min_dcf;
}
