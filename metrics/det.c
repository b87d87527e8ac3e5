/*
 * metrics/det.c - DET curve points: the full walk, and a sample for plots.
 *
 * A DET point of threshold t is the operating point of "accept score >= t":
 * P_miss = targets below t / N_tar, P_fa = non-targets at or above t / N_non.
 * Walking the distinct scores upwards, P_miss grows and P_fa shrinks.
 *
 * Sampling for plots (vpa_det_sample): a DET plot has probit axes, and a
 * curve of 10^8 points must come down to a few hundred without losing its
 * shape in either tail.  We lay K levels evenly in probit space on each axis
 * and keep the first point past each level on either axis (comparing
 * probabilities with precomputed Phi(z_k), so no probit per point), plus
 * the two extremes (accept all: (0, 1); accept nothing: (1, 0)) and the
 * sweep-EER point.  Steep parts of the curve are then spaced by the P_fa
 * levels and flat parts by the P_miss levels.
 */
#include "sv_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- normal CDF and its inverse ----------------------------------------- */

double sv_phi(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

/*
 * Acklam's rational approximation (relative error 1.15e-9) refined by one
 * Halley step on erfc, which brings it to full double precision.
 */
double sv_probit(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
				    -2.759285104469687e+02, 1.383577518672690e+02,
				    -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
				    -1.556989798598866e+02, 6.680131188771972e+01,
				    -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
				    -2.400758277161838e+00, -2.549732539343734e+00,
				    4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
				    2.445134137142996e+00, 3.754408661907416e+00 };
	if (!(p > 0))
		return -INFINITY;
	if (!(p < 1))
		return INFINITY;
	double x, q, r;
	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p > 1 - 0.02425) {
		q = sqrt(-2 * log1p(-p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	}
	/* Halley step: e = Phi(x) - p, u = e sqrt(2 pi) exp(x^2/2) */
	double e = 0.5 * erfc(-x / M_SQRT2) - p;
	double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

/* ---- the full walk ------------------------------------------------------ */

void vpa_det_walk(const struct vpa_scores *s, vpa_det_emit emit, void *ctx)
{
	if (sv_check(s, NULL))
		return;
	const double *tar = s->tar, *non = s->non, *wt = s->w_tar, *wn = s->w_non;
	size_t nt = s->n_tar, nn = s->n_non, i = 0, j = 0;
	double W_t = sv_total(wt, nt), W_n = sv_total(wn, nn);
	double miss = 0, fa = W_n;

	while (i < nt || j < nn) {
		double v;
		if (i == nt)
			v = non[j];
		else if (j == nn)
			v = tar[i];
		else
			v = tar[i] < non[j] ? tar[i] : non[j];
		if (emit(ctx, v, miss / W_t, fa / W_n))
			return;
		for (; i < nt && tar[i] == v; i++)
			miss += SV_W(wt, i);
		for (; j < nn && non[j] == v; j++)
			fa -= SV_W(wn, j);
	}
	emit(ctx, INFINITY, 1, 0);
}

/* ---- the sample --------------------------------------------------------- */

struct sample {
	double *pm, *pf; /* caller's arrays */
	size_t n, cap;
	double *lev_m, *lev_f; /* (K) ascending probabilities Phi(z_k), owned */
	size_t k, km, kf;      /* K, next P_miss level (up), next P_fa level (down) + 1 */
};

static void put(struct sample *S, double pm, double pf)
{
	if (S->n > 0 && S->pm[S->n - 1] == pm && S->pf[S->n - 1] == pf)
		return;
	if (S->n < S->cap) {
		S->pm[S->n] = pm;
		S->pf[S->n] = pf;
		S->n++;
	}
}

/* keep the point if it is the first one or passes a level on either axis */
static void check(struct sample *S, double pm, double pf)
{
	if (pm == 1 && pf == 0)
		return; /* accept nothing: appended at the end */
	if (S->n == 0) { /* accept all */
		put(S, pm, pf);
		return;
	}
	int hit = 0;
	while (S->km < S->k && pm >= S->lev_m[S->km]) {
		S->km++;
		hit = 1;
	}
	while (S->kf > 0 && pf <= S->lev_f[S->kf - 1]) {
		S->kf--;
		hit = 1;
	}
	if (hit)
		put(S, pm, pf);
}

static int sample_emit(void *ctx, double threshold, double pm, double pf)
{
	(void)threshold;
	check(ctx, pm, pf);
	return 0;
}

/* first index in [i, n) with a[i] >= v */
static size_t lower_bound(const double *a, size_t i, size_t n, double v)
{
	while (i < n) {
		size_t m = i + (n - i) / 2;
		if (a[m] < v)
			i = m + 1;
		else
			n = m;
	}
	return i;
}

/* the group start at or after index k of a[lo..hi) (k > lo) */
static size_t group_at_or_after(const double *a, size_t k, size_t hi)
{
	if (a[k - 1] != a[k])
		return k;
	return lower_bound(a, k, hi, nextafter(a[k], INFINITY));
}

/*
 * The unweighted walk by runs: inside a run of one class only the other
 * axis moves, and the first group past each of its levels is found by
 * binary search, so a run of 10^8 non-targets costs K searches.  Same
 * points as the walk over every group.
 */
static void sample_fast(const struct vpa_scores *s, struct sample *S)
{
	const double *tar = s->tar, *non = s->non;
	size_t nt = s->n_tar, nn = s->n_non, i = 0, j = 0;
	double W_t = (double)nt, W_n = (double)nn;

	while (i < nt || j < nn) {
		if (i < nt && j < nn && tar[i] == non[j]) {
			check(S, (double)i / W_t, (double)(nn - j) / W_n);
			double v = tar[i];
			i = lower_bound(tar, i, nt, nextafter(v, INFINITY));
			j = lower_bound(non, j, nn, nextafter(v, INFINITY));
		} else if (j < nn && (i == nt || non[j] < tar[i])) {
			size_t hi = i < nt ? lower_bound(non, j, nn, tar[i]) : nn, g = j;
			double pm = (double)i / W_t;
			check(S, pm, (double)(nn - g) / W_n);
			while (S->kf > 0) {
				double q = S->lev_f[S->kf - 1];
				/* smallest k in (g, hi) with (nn - k)/W_n <= q */
				size_t l = g + 1, h = hi;
				while (l < h) {
					size_t m = l + (h - l) / 2;
					if ((double)(nn - m) / W_n <= q)
						h = m;
					else
						l = m + 1;
				}
				if (l >= hi)
					break;
				g = group_at_or_after(non, l, hi);
				if (g >= hi)
					break;
				check(S, pm, (double)(nn - g) / W_n);
			}
			j = hi;
		} else {
			size_t hi = j < nn ? lower_bound(tar, i, nt, non[j]) : nt, g = i;
			double pf = (double)(nn - j) / W_n;
			check(S, (double)g / W_t, pf);
			while (S->km < S->k) {
				double q = S->lev_m[S->km];
				/* smallest k in (g, hi) with k/W_t >= q */
				size_t l = g + 1, h = hi;
				while (l < h) {
					size_t m = l + (h - l) / 2;
					if ((double)m / W_t >= q)
						h = m;
					else
						l = m + 1;
				}
				if (l >= hi)
					break;
				g = group_at_or_after(tar, l, hi);
				if (g >= hi)
					break;
				check(S, (double)g / W_t, pf);
			}
			i = hi;
		}
	}
}

/* probabilities of K levels evenly spaced in probit space for N trials */
static void levels(double *lev, size_t K, double N)
{
	double zlo = sv_probit(1 / (N + 1)), zhi = -zlo;
	for (size_t k = 0; k < K; k++)
		lev[k] = sv_phi(zlo + ((double)k + 0.5) * (zhi - zlo) / (double)K);
}

/* the DET point of the sweep-EER threshold t: (targets < t, non-targets >= t) */
static void eer_point(const struct vpa_scores *s, double t, double *pm, double *pf)
{
	double W_t = sv_total(s->w_tar, s->n_tar), W_n = sv_total(s->w_non, s->n_non);
	size_t a = lower_bound(s->tar, 0, s->n_tar, t), b = lower_bound(s->non, 0, s->n_non, t);
	double miss = 0, fa = 0;
	if (s->w_tar)
		for (size_t i = 0; i < a; i++)
			miss += s->w_tar[i];
	else
		miss = (double)a;
	if (s->w_non)
		for (size_t i = b; i < s->n_non; i++)
			fa += s->w_non[i];
	else
		fa = (double)(s->n_non - b);
	*pm = miss / W_t;
	*pf = fa / W_n;
}

size_t vpa_det_sample(const struct vpa_scores *s, size_t max_points, double *p_miss,
		      double *p_fa)
{
	if (max_points == 0 || sv_check(s, NULL))
		return 0;
	struct sample S;
	memset(&S, 0, sizeof S);
	S.pm = p_miss;
	S.pf = p_fa;
	/* room: accept all + accept nothing + EER + K per axis */
	S.k = max_points >= 5 ? (max_points - 3) / 2 : 0;
	S.cap = max_points >= 3 ? max_points - 2 : 0; /* keep room for the last two */
	if (S.k) {
		S.lev_m = xmalloc(xmul(S.k, sizeof(double)));
		S.lev_f = xmalloc(xmul(S.k, sizeof(double)));
		levels(S.lev_m, S.k, sv_total(s->w_tar, s->n_tar));
		levels(S.lev_f, S.k, sv_total(s->w_non, s->n_non));
	}
	S.kf = S.k;
	if (!s->w_tar && !s->w_non)
		sample_fast(s, &S);
	else
		vpa_det_walk(s, sample_emit, &S);
	free(S.lev_m);
	free(S.lev_f);

	S.cap = max_points;
	if (max_points >= 2)
		put(&S, 1, 0);
	/* insert the sweep-EER point in order (P_miss up, then P_fa down) */
	struct sv_sweep w;
	double epm, epf;
	sv_sweep(s, 0.01, 1, 1, &w);
	eer_point(s, w.eer_threshold, &epm, &epf);
	if (S.n < max_points) {
		size_t at = 0;
		while (at < S.n && (S.pm[at] < epm || (S.pm[at] == epm && S.pf[at] > epf)))
			at++;
		if (!(at < S.n && S.pm[at] == epm && S.pf[at] == epf)) {
			memmove(S.pm + at + 1, S.pm + at, (S.n - at) * sizeof(double));
			memmove(S.pf + at + 1, S.pf + at, (S.n - at) * sizeof(double));
			S.pm[at] = epm;
			S.pf[at] = epf;
			S.n++;
		}
	}
	return S.n;
}
