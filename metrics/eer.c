/*
 * metrics/eer.c - the descending threshold sweep: sweep EER, min DCF and the
 * fraction of tied trials in one merge walk of the two sorted arrays.
 *
 * Sweep EER (metrics/README.md): the scikit-learn `roc_curve` recipe with every
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

/* smallest k <= hi with a[k..hi) all >= v (a sorted ascending), galloping down */
static size_t down_ge(const double *a, size_t hi, double v)
{
	size_t k = hi, step = 1; /* a[k..hi) >= v */
	while (k > 0 && a[k - 1] >= v) {
		size_t t = k > step ? k - step : 0;
		if (a[t] >= v) {
			k = t;
			step *= 2;
		} else {
			/* a[t] < v <= a[k-1]: the answer is in (t, k) */
			size_t lo = t; /* a[lo] < v */
			while (k - lo > 1) {
				size_t m = lo + (k - lo) / 2;
				if (a[m] >= v)
					k = m;
				else
					lo = m;
			}
			break;
		}
	}
	return k;
}

/* smallest k <= hi with a[k..hi) all > v */
static size_t down_gt(const double *a, size_t hi, double v)
{
	return down_ge(a, hi, nextafter(v, INFINITY));
}

struct sweep_state {
	double W_t, W_n, a, b, norm;
	double best_d;
	int ties; /* count the tied trials (a pass over every run) */
	struct sv_sweep *out;
};

/* one operating point in scan order: first minimum wins (strict <) */
static inline void point(struct sweep_state *S, double v, double tp, double fp)
{
	double fnr = 1 - tp / S->W_t, fpr = fp / S->W_n;
	double d = fabs(fnr - fpr);
	if (d < S->best_d) {
		S->best_d = d;
		S->out->eer = (fnr + fpr) / 2;
		S->out->eer_threshold = v;
	}
	double dcf = (S->a * ((S->W_t - tp) / S->W_t) + S->b * fpr) / S->norm;
	if (dcf < S->out->min_dcf) {
		S->out->min_dcf = dcf;
		S->out->min_dcf_threshold = v;
	}
}

/* trials in [lo, hi) of a sorted array that equal a neighbour inside it */
static size_t tied_in(const double *a, size_t lo, size_t hi)
{
	size_t t = 0;
	unsigned prev = 0;
	for (size_t k = lo; k + 1 < hi; k++) {
		unsigned e = a[k] == a[k + 1];
		t += e + (e & !prev);
		prev = e;
	}
	return t;
}

/*
 * A run of one class, a[lo..hi) (its values strictly between the other
 * class's neighbours), scanned downwards while the other class's count
 * stays fixed.  Along the run fnr - fpr only falls (rounded division and
 * subtraction are monotone), so |fnr - fpr| falls then rises, and the DCF
 * only rises (non-target run) or only falls (target run).  The first minimum
 * in scan order of each therefore sits at a known group: next to the sign
 * change of fnr - fpr, or at one end of the run (moved to the front of a
 * plateau of equal values, which rounding can make).  Evaluating just those
 * groups, in scan order, gives the result of evaluating every group.
 *
 * is_tar: the run is targets (after the group starting at g, tp = n_cls - g;
 * fp fixed), else non-targets (fp = n_cls - g; tp fixed).
 */
struct run {
	struct sweep_state *S;
	const double *a;
	size_t lo, hi, n_cls;
	int is_tar;
	double fixed;
};

static inline double run_tp(const struct run *r, size_t g)
{
	return r->is_tar ? (double)(r->n_cls - g) : r->fixed;
}
static inline double run_fp(const struct run *r, size_t g)
{
	return r->is_tar ? r->fixed : (double)(r->n_cls - g);
}
/* fnr - fpr as point() computes it: non-decreasing in g */
static double run_x(const struct run *r, size_t g)
{
	return (1 - run_tp(r, g) / r->S->W_t) - run_fp(r, g) / r->S->W_n;
}
/* DCF as point() computes it: non-decreasing in g for a target run */
static double run_dcf(const struct run *r, size_t g)
{
	const struct sweep_state *S = r->S;
	double tp = run_tp(r, g);
	return (S->a * ((S->W_t - tp) / S->W_t) + S->b * (run_fp(r, g) / S->W_n)) / S->norm;
}

/* the group start of the last index k in [g0, hi) with f(k) <= f(g0), f non-decreasing */
static size_t plateau_front(const struct run *r, double (*f)(const struct run *, size_t),
			    size_t g0)
{
	double v = f(r, g0);
	size_t l = g0, h = r->hi; /* f(l) <= v */
	while (h - l > 1) {
		size_t m = l + (h - l) / 2;
		if (f(r, m) <= v)
			l = m;
		else
			h = m;
	}
	return l == g0 ? g0 : down_ge(r->a, l + 1, r->a[l]);
}

static void run_points(struct sweep_state *S, const double *a, size_t lo, size_t hi,
		       size_t n_cls, int is_tar, double fixed)
{
	struct run r = { S, a, lo, hi, n_cls, is_tar, fixed };
	size_t c[4], nc = 0;
	size_t g_top = down_ge(a, hi, a[hi - 1]); /* first group in scan order */

	if (!is_tar) /* DCF rises along a non-target run: its first group */
		c[nc++] = g_top;
	/* smallest k in [lo, hi) with fnr - fpr >= 0 */
	size_t l = lo, h = hi;
	while (l < h) {
		size_t m = l + (h - l) / 2;
		if (run_x(&r, m) >= 0)
			h = m;
		else
			l = m + 1;
	}
	/* A: the smallest group start >= l (the last group with x >= 0) */
	size_t gA = l;
	if (l < hi && l > lo && a[l - 1] == a[l])
		while (gA < hi && a[gA] == a[l])
			gA++;
	if (gA < hi) {
		c[nc++] = plateau_front(&r, run_x, gA);
		if (gA > lo) /* B: the group after A in scan order */
			c[nc++] = down_ge(a, gA, a[gA - 1]);
	} else {
		c[nc++] = g_top; /* x < 0 everywhere: |x| smallest first */
	}
	if (is_tar) /* DCF falls along a target run: its last group */
		c[nc++] = plateau_front(&r, run_dcf, lo);

	/* evaluate in scan order (descending start), each group once */
	for (size_t x = 0; x < nc; x++)
		for (size_t y = x + 1; y < nc; y++)
			if (c[y] > c[x]) {
				size_t t = c[x];
				c[x] = c[y];
				c[y] = t;
			}
	for (size_t x = 0; x < nc; x++)
		if (x == 0 || c[x] != c[x - 1])
			point(S, a[c[x]], run_tp(&r, c[x]), run_fp(&r, c[x]));
}

/* unweighted: runs of one class handled by run_points, ties counted apart */
static void sweep_fast(const struct vpa_scores *s, struct sweep_state *S)
{
	const double *tar = s->tar, *non = s->non;
	size_t nt = s->n_tar, nn = s->n_non, i = nt, j = nn, tied = 0;

	while (i > 0 || j > 0) {
		if (i > 0 && j > 0 && tar[i - 1] == non[j - 1]) {
			double v = tar[i - 1];
			size_t i2 = down_ge(tar, i, v), j2 = down_ge(non, j, v);
			tied += (i - i2) + (j - j2);
			i = i2;
			j = j2;
			point(S, v, (double)(nt - i), (double)(nn - j));
		} else if (j > 0 && (i == 0 || non[j - 1] > tar[i - 1])) {
			size_t lo = i > 0 ? down_gt(non, j, tar[i - 1]) : 0;
			if (S->ties)
				tied += tied_in(non, lo, j);
			run_points(S, non, lo, j, nn, 0, (double)(nt - i));
			j = lo;
		} else {
			size_t lo = j > 0 ? down_gt(tar, i, non[j - 1]) : 0;
			if (S->ties)
				tied += tied_in(tar, lo, i);
			run_points(S, tar, lo, i, nt, 1, (double)(nn - j));
			i = lo;
		}
	}
	S->out->tied_fraction = S->ties ? (double)tied / (double)(nt + nn) : NAN;
}

void sv_sweep(const struct vpa_scores *s, double p_target, double c_miss, double c_fa,
	      struct sv_sweep *out)
{
	sv_sweep_ties(s, p_target, c_miss, c_fa, 1, out);
}

void sv_sweep_ties(const struct vpa_scores *s, double p_target, double c_miss, double c_fa,
		   int ties, struct sv_sweep *out)
{
	const double *tar = s->tar, *non = s->non, *wt = s->w_tar, *wn = s->w_non;
	size_t i = s->n_tar, j = s->n_non;
	struct sweep_state S;
	size_t tied = 0;
	double tp = 0, fp = 0;
	double hi = tar[i - 1] > non[j - 1] ? tar[i - 1] : non[j - 1];

	S.W_t = sv_total(wt, i);
	S.W_n = sv_total(wn, j);
	S.a = p_target * c_miss;
	S.b = (1 - p_target) * c_fa;
	S.norm = S.a < S.b ? S.a : S.b;
	S.best_d = INFINITY;
	S.ties = ties;
	S.out = out;
	out->eer = NAN;
	out->eer_threshold = hi;
	out->min_dcf = S.a / S.norm; /* accept nothing */
	out->min_dcf_threshold = nextafter(hi, INFINITY);
	if (!isfinite(out->min_dcf_threshold))
		out->min_dcf_threshold = hi;

	if (!wt && !wn) {
		sweep_fast(s, &S);
		return;
	}
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
		point(&S, v, tp, fp);
	}
	out->tied_fraction = (double)tied / (double)(s->n_tar + s->n_non);
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
