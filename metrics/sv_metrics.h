/*
 * metrics/sv_metrics.h - helpers shared by the score-set metrics files of
 * metrics/ (pav.c eer.c det.c cllr.c linkability.c zebra.c all.c ci.c).
 * Private to metrics/: not part of the public API in metrics.h.
 */
#ifndef VPA_SV_METRICS_H
#define VPA_SV_METRICS_H

#include "metrics.h"

/* weight of trial i of an array with optional weights (i is evaluated once or not at all: no side effects) */
#define SV_W(w, i) ((w) ? (w)[i] : 1.0)

/* Weighted class totals (sums of weights; counts when unweighted). */
double sv_total(const double *w, size_t n);

/* The empty-class check every score-set metric starts with. */
int sv_check(const struct vpa_scores *s, struct vpa_err *err);

/*
 * PAV on top of an existing fit: the blocks of `in` (laplace == 0) pooled
 * again with the four VoicePrivacy laplace dummies (target, non-target at
 * -inf; target, non-target at +inf).  Pooling the blocks of a fit is the
 * same as pooling its trials: any order of pooling adjacent violators ends
 * at the unique isotonic solution.
 */
void sv_pav_laplace_from(const struct vpa_pav *in, struct vpa_pav *out);

/*
 * One descending threshold sweep over a score set: thresholds at every
 * distinct score from the highest to the lowest, accept score >= t.  Gives
 * the sweep EER (first index minimising |P_miss - P_fa|), the normalised
 * min DCF and the fraction of tied trials.
 */
struct sv_sweep {
	double eer, eer_threshold;
	double min_dcf, min_dcf_threshold;
	double tied_fraction;
};
void sv_sweep(const struct vpa_scores *s, double p_target, double c_miss, double c_fa,
	      struct sv_sweep *out);
/* The same; ties 0 skips counting the tied trials (tied_fraction NaN), the one
 * pass over every trial of an unweighted sweep, which otherwise looks at only
 * O(runs log n) scores: for a caller that needs the EER and min DCF only. */
void sv_sweep_ties(const struct vpa_scores *s, double p_target, double c_miss, double c_fa,
		   int ties, struct sv_sweep *out);

/*
 * Cllr's two sums in SV_CLLR_PARTS fixed parts per class (part k: trials
 * [n k / P, n (k + 1) / P)), each summed in trial order and the parts added
 * in part order: the same value computed in one thread (vpa_cllr) or with the
 * parts side by side (vpa_metrics_all), whatever the thread count.
 */
#define SV_CLLR_PARTS 8
/* sum of w_i log(1 + e^(sign x_i)) over part k of the n trials */
double sv_softplus_part(const double *x, const double *w, size_t n, double sign, size_t k);
/* Cllr from the parts' sums: tar[k] (sign -1), non[k] (sign +1) */
double sv_cllr_from_parts(const struct vpa_scores *s, const double *tar, const double *non);

/* Linkability on sorted arrays (binary search for the bin edges). */
int sv_linkability_sorted(const struct vpa_scores *s, double omega, size_t n_bins,
			  struct vpa_linkability *out, struct vpa_err *err);

/* ZEBRA from the two PAV fits (plain and laplace). */
void sv_zebra_from(const struct vpa_pav *plain, const struct vpa_pav *lap,
		   struct vpa_zebra *out);

/* Inverse of the standard normal CDF, and the CDF. */
double sv_probit(double p);
double sv_phi(double z);

#endif
