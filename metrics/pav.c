/*
 * metrics/pav.c - pool-adjacent-violators fit of P(target | score), with the
 * ROC convex hull EER and Cllr_min that derive from it.
 *
 * Ties: every group of equal scores enters PAV as ONE element (its target and
 * non-target counts together), so no threshold splits a tie.  This is the
 * BOSARIS / pyllr convention.  The VoicePrivacy 2024 evaluation code
 * (`optimal_llr`, from the INRIA anonymization_metrics) instead concatenates
 * [non, tar] and sorts with a stable mergesort, so inside a tie every
 * non-target comes before every target; PAV then sees the tie as "targets
 * above non-targets" and can split it, which flatters the system (a lower
 * ROCCH-EER and Cllr_min; on integer-valued scores the EER can be a third
 * lower).  We pool.  tests/unit/test_metrics_sv.c pins a case where the two
 * differ (tests/golden/metrics/README.md has both values).
 *
 * The VoicePrivacy code also adds `arange(N) * 1e-6 / N` to the PAV LLRs
 * ("monotonicity epsilon") before computing Cllr_min and D_ECE; that shifts
 * them by less than 1e-6 and breaks the exact tie structure, so we leave it
 * out, as BOSARIS does (differences below 1e-6 bits).
 *
 * The walk: both arrays are sorted, so the merged order is a merge walk.  A
 * run of consecutive target-only (or non-target-only) distinct scores enters
 * PAV as one element: consecutive elements of posterior 1 (or 0) always pool
 * with each other, so the result is the same and a run of 10^8 non-targets
 * costs one galloping search when the arrays are unweighted.
 */
#include "sv_metrics.h"

#include <math.h>
#include <stdlib.h>

double sv_total(const double *w, size_t n)
{
	if (!w)
		return (double)n;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += w[i];
	return s;
}

int sv_check(const struct vpa_scores *s, struct vpa_err *err)
{
	if (!s || s->n_tar == 0 || !s->tar)
		return vpa_fail(err, VPA_EINPUT, NULL, "no target scores");
	if (s->n_non == 0 || !s->non)
		return vpa_fail(err, VPA_EINPUT, NULL, "no non-target scores");
	if (s->w_tar && !(sv_total(s->w_tar, s->n_tar) > 0))
		return vpa_fail(err, VPA_EINPUT, NULL, "target weights sum to zero");
	if (s->w_non && !(sv_total(s->w_non, s->n_non) > 0))
		return vpa_fail(err, VPA_EINPUT, NULL, "non-target weights sum to zero");
	return 0;
}

/* ---- the block stack ---------------------------------------------------- */

struct stack {
	struct vpa_pav_block *b; /* owned */
	size_t n, cap;
};

/*
 * Append a group and pool it with its predecessors while they violate
 * monotonicity.  The previous posterior t_p/(t_p+n_p) >= t/(t+n) is
 * t_p n >= t n_p; equal posteriors pool too (as BOSARIS pavx), so the blocks
 * of a fit have strictly increasing posteriors.
 */
static void push(struct stack *k, double lo, double hi, double t, double n)
{
	while (k->n > 0) {
		struct vpa_pav_block *p = &k->b[k->n - 1];
		if (p->t * n < t * p->n)
			break;
		lo = p->lo;
		t += p->t;
		n += p->n;
		k->n--;
	}
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 64;
		k->b = xrealloc(k->b, xmul(k->cap, sizeof *k->b));
	}
	k->b[k->n++] = (struct vpa_pav_block){ lo, hi, t, n };
}

/* first index j in [i, n) with a[j] >= v (a sorted), by galloping */
static size_t gallop_ge(const double *a, size_t i, size_t n, double v)
{
	if (i >= n || a[i] >= v)
		return i;
	size_t lo = i, step = 1, hi; /* a[lo] < v */
	for (;;) {
		hi = lo + step;
		if (hi >= n) {
			hi = n;
			break;
		}
		if (a[hi] >= v)
			break;
		lo = hi;
		step *= 2;
	}
	/* a[lo] < v, (hi == n or a[hi] >= v) */
	while (hi - lo > 1) {
		size_t m = lo + (hi - lo) / 2;
		if (a[m] >= v)
			hi = m;
		else
			lo = m;
	}
	return hi;
}

/* first index j in [i, n) with a[j] > v */
static size_t gallop_gt(const double *a, size_t i, size_t n, double v)
{
	if (i >= n || a[i] > v)
		return i;
	size_t lo = i, step = 1, hi;
	for (;;) {
		hi = lo + step;
		if (hi >= n) {
			hi = n;
			break;
		}
		if (a[hi] > v)
			break;
		lo = hi;
		step *= 2;
	}
	while (hi - lo > 1) {
		size_t m = lo + (hi - lo) / 2;
		if (a[m] > v)
			hi = m;
		else
			lo = m;
	}
	return hi;
}

static double wsum(const double *w, size_t i, size_t j)
{
	if (!w)
		return (double)(j - i);
	double s = 0;
	for (; i < j; i++)
		s += w[i];
	return s;
}

/* push the group only if it carries weight (a bootstrap weight can be 0) */
static void push_w(struct stack *k, double lo, double hi, double t, double n)
{
	if (t + n > 0)
		push(k, lo, hi, t, n);
}

int vpa_pav_fit(const struct vpa_scores *s, int laplace, struct vpa_pav *out,
		struct vpa_err *err)
{
	out->b = NULL;
	out->n_blocks = 0;
	out->n_tar = out->n_non = 0;
	int rc = sv_check(s, err);
	if (rc)
		return rc;

	const double *tar = s->tar, *non = s->non;
	size_t nt = s->n_tar, nn = s->n_non, i = 0, j = 0;
	struct stack k = { NULL, 0, 0 };

	if (laplace) {
		push(&k, -INFINITY, -INFINITY, 1, 0);
		push(&k, -INFINITY, -INFINITY, 0, 1);
	}
	while (i < nt || j < nn) {
		if (i < nt && j < nn && tar[i] == non[j]) {
			/* a tie between the classes: one element */
			double v = tar[i];
			size_t i2 = gallop_gt(tar, i, nt, v), j2 = gallop_gt(non, j, nn, v);
			push_w(&k, v, v, wsum(s->w_tar, i, i2), wsum(s->w_non, j, j2));
			i = i2;
			j = j2;
		} else if (j == nn || (i < nt && tar[i] < non[j])) {
			size_t i2 = j < nn ? gallop_ge(tar, i, nt, non[j]) : nt;
			push_w(&k, tar[i], tar[i2 - 1], wsum(s->w_tar, i, i2), 0);
			i = i2;
		} else {
			size_t j2 = i < nt ? gallop_ge(non, j, nn, tar[i]) : nn;
			push_w(&k, non[j], non[j2 - 1], 0, wsum(s->w_non, j, j2));
			j = j2;
		}
	}
	if (laplace) {
		push(&k, INFINITY, INFINITY, 1, 0);
		push(&k, INFINITY, INFINITY, 0, 1);
	}
	out->b = k.b;
	out->n_blocks = k.n;
	out->n_tar = sv_total(s->w_tar, nt);
	out->n_non = sv_total(s->w_non, nn);
	return 0;
}

void sv_pav_laplace_from(const struct vpa_pav *in, struct vpa_pav *out)
{
	struct stack k = { NULL, 0, 0 };
	push(&k, -INFINITY, -INFINITY, 1, 0);
	push(&k, -INFINITY, -INFINITY, 0, 1);
	for (size_t i = 0; i < in->n_blocks; i++)
		push(&k, in->b[i].lo, in->b[i].hi, in->b[i].t, in->b[i].n);
	push(&k, INFINITY, INFINITY, 1, 0);
	push(&k, INFINITY, INFINITY, 0, 1);
	out->b = k.b;
	out->n_blocks = k.n;
	out->n_tar = in->n_tar;
	out->n_non = in->n_non;
}

void vpa_pav_release(struct vpa_pav *p)
{
	if (!p)
		return;
	free(p->b);
	p->b = NULL;
	p->n_blocks = 0;
}

double vpa_pav_llr(const struct vpa_pav *p, size_t i)
{
	const struct vpa_pav_block *b = &p->b[i];
	if (b->n == 0)
		return INFINITY;
	if (b->t == 0)
		return -INFINITY;
	return log(b->t / b->n) - log(p->n_tar / p->n_non);
}

/* ---- ROCCH EER (BOSARIS rocch2eer) -------------------------------------- */

/*
 * The hull points are the operating points between blocks: point k accepts
 * blocks k.. (P_miss = targets in blocks < k / N_tar, P_fa = non-targets in
 * blocks >= k / N_non), k = 0..n_blocks.  rocch2eer: for each segment
 * between consecutive points that is neither horizontal nor vertical, the
 * line through it meets P_miss = P_fa at
 *     x = (x2 y1 - x1 y2) / ((x2 - x1) - (y2 - y1))     (x = P_fa, y = P_miss)
 * and the EER is the largest of these (the hull is convex, so every other
 * segment's line crosses the diagonal lower).
 *
 * Worked example: tar = {2, 4, 5}, non = {1, 3, 6}.  Merged: 1n 2t 3n 4t 5t 6n;
 * PAV pools 2t,3n (posterior 1/2) and 4t,5t,6n (2/3): blocks {1} (0t,1n),
 * {2,3} (1,1), {4,5,6} (2,1).  Points (P_fa, P_miss): (1,0) (2/3,0)
 * (1/3,1/3) (0,1).  Segment (2/3,0)-(1/3,1/3): x = (0 - 2/9) / (-1/3 - 1/3)
 * = 1/3; segment (1/3,1/3)-(0,1): x = (0 - 1/3) / (-1/3 - 2/3) = 1/3.
 * EER = 1/3, threshold 3.5 (between the blocks at point (1/3,1/3)).
 *
 * *threshold: the point closest to the diagonal (|P_miss - P_fa| smallest,
 * first in ascending order) is an end point of the segment where the EER is
 * met; its threshold is the midpoint of the gap between its two blocks
 * (b[0].lo for the accept-all point).
 */
double vpa_eer_rocch(const struct vpa_pav *p, double *threshold)
{
	double nt = p->n_tar, nn = p->n_non;
	double miss = 0, fa = nn; /* counts at point k */
	double x1 = 1, y1 = 0, eer = 0, best_d = INFINITY;
	size_t best_k = 0;

	for (size_t k = 0; k <= p->n_blocks; k++) {
		double x2 = fa / nn, y2 = miss / nt;
		if (k > 0) {
			double dx = x2 - x1, dy = y2 - y1;
			if (dx != 0 && dy != 0) {
				double e = (x2 * y1 - x1 * y2) / (dx - dy);
				if (e > eer)
					eer = e;
			}
		}
		double d = fabs(y2 - x2);
		if (d < best_d) {
			best_d = d;
			best_k = k;
		}
		x1 = x2;
		y1 = y2;
		if (k < p->n_blocks) {
			miss += p->b[k].t;
			fa -= p->b[k].n;
		}
	}
	if (threshold) {
		size_t nb = p->n_blocks;
		if (nb == 0)
			*threshold = 0;
		else if (best_k == 0)
			*threshold = p->b[0].lo;
		else if (best_k == nb)
			*threshold = p->b[nb - 1].hi;
		else
			*threshold = 0.5 * p->b[best_k - 1].hi + 0.5 * p->b[best_k].lo;
	}
	return eer;
}

/* ---- Cllr_min ----------------------------------------------------------- */

/* log(1 + e^x) without overflow */
static inline double softplus(double x)
{
	return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/*
 * Cllr of the PAV LLRs: each block contributes t log2(1 + e^-llr) / N_tar and
 * n log2(1 + e^llr) / N_non.  A block without non-targets has llr = +inf and
 * its targets cost 0 (and symmetrically), so infinite LLRs never meet a
 * trial of the other class.
 */
double vpa_cllr_min(const struct vpa_pav *p)
{
	double ct = 0, cn = 0;
	for (size_t i = 0; i < p->n_blocks; i++) {
		const struct vpa_pav_block *b = &p->b[i];
		if (b->t == 0 || b->n == 0)
			continue; /* pure block: cost 0 */
		double llr = vpa_pav_llr(p, i);
		ct += b->t * softplus(-llr);
		cn += b->n * softplus(llr);
	}
	return (ct / p->n_tar + cn / p->n_non) / (2 * M_LN2);
}
