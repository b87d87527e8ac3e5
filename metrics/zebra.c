/*
 * metrics/zebra.c - ZEBRA (Nautsch et al., "The privacy ZEBRA: zero evidence
 * biometric recognition assessment", Interspeech 2020), as the VoicePrivacy
 * code (github Voice-Privacy-Challenge/zebra, zebra.py + plo_plots.py, and
 * the copy in the VoicePrivacy evaluation metrics):
 *
 * Population level, D_ECE in bits: the area between the ECE curve of the
 * default (zero-evidence) system and the ECE curve of the PAV-calibrated
 * LLRs, integrated over the prior.  The reference does not integrate on its
 * plotted prior-log-odds grid (linspace(-10, 10, 201)); get_delta_ECE uses
 * the closed form per trial,
 *     Z(a) = 1/4 + 1/2 (a - b) / b^2,   b = e^a - 1,
 *     D_ECE = [ mean_tar Z(llr) + mean_non Z(-llr) ] / ln 2,
 * with Z(0) = 0 (the reference hardcodes the limit -1/2 of (a - b)/b^2 for
 * |a| < 1e-6) and Z(+inf) = 1/4.  We evaluate b with expm1 (the reference's
 * exp(a) - 1 loses digits for small a; the difference is below 1e-9 bits)
 * and take the same 1e-6 cut.  PAV LLRs are -inf only on blocks without
 * targets and +inf only on blocks without non-targets, so Z only ever sees
 * +inf.  The reference's `monotonicity_epsilon` (up to 1e-6 added to the
 * LLRs) is left out (see pav.c).
 *
 * Individual level: the worst-case strength of evidence
 *     log10(l) = max |LLR| / ln 10
 * over the LLRs of the real trials under the laplace-smoothed PAV (one
 * dummy target and non-target below and above all scores), and its tag:
 *     0: x <= DBL_EPSILON   A: <= 1   B: <= 2   C: <= 4   D: <= 5
 *     E: <= 6               F: > 6
 * (the reference's table {0: [0, eps], A: [eps, 1], B: [1, 2], C: [2, 4],
 * D: [4, 5], E: [5, 6], F: [6, inf]} picks the row with lo < x <= hi; at
 * x = 0 no row matches and the reference fails, we say '0').
 */
#include "sv_metrics.h"

#include <float.h>
#include <math.h>

/* (a - b) / b^2 with b = e^a - 1, the reference's `contrib` */
static double contrib(double a)
{
	if (isinf(a) || a > 700)
		return 0; /* the reference's +inf; -inf never reaches here */
	if (fabs(a) < 1e-6)
		return -0.5;
	double b = expm1(a);
	return (a - b) / b / b;
}

void sv_zebra_from(const struct vpa_pav *plain, const struct vpa_pav *lap,
		   struct vpa_zebra *out)
{
	double zt = 0, zn = 0;
	for (size_t i = 0; i < plain->n_blocks; i++) {
		const struct vpa_pav_block *b = &plain->b[i];
		double llr = vpa_pav_llr(plain, i);
		if (b->t > 0)
			zt += b->t * (0.25 + 0.5 * contrib(llr));
		if (b->n > 0)
			zn += b->n * (0.25 + 0.5 * contrib(-llr));
	}
	out->dece = (zt / plain->n_tar + zn / plain->n_non) / M_LN2;

	double worst = 0;
	for (size_t i = 0; i < lap->n_blocks; i++) {
		const struct vpa_pav_block *b = &lap->b[i];
		if (isinf(b->lo) && isinf(b->hi))
			continue; /* laplace dummies only: no real trial */
		double a = fabs(vpa_pav_llr(lap, i));
		if (a > worst)
			worst = a;
	}
	double x = worst / M_LN10;
	out->log10_lr_worst = x;
	out->category = x <= DBL_EPSILON ? '0'
		: x <= 1 ? 'A'
		: x <= 2 ? 'B'
		: x <= 4 ? 'C'
		: x <= 5 ? 'D'
		: x <= 6 ? 'E'
		: 'F';
}

int vpa_zebra(const struct vpa_scores *s, struct vpa_zebra *out, struct vpa_err *err)
{
	struct vpa_pav plain, lap;
	int rc = vpa_pav_fit(s, 0, &plain, err);
	if (rc)
		return rc;
	sv_pav_laplace_from(&plain, &lap);
	sv_zebra_from(&plain, &lap, out);
	vpa_pav_release(&lap);
	vpa_pav_release(&plain);
	return 0;
}
