/*
 * targets/apcluster.c - Affinity Propagation (Frey & Dueck, "Clustering by
 * passing messages between data points", Science 315, 2007), with damping
 * and the median preference, for the dense/sparse proximity choices of the
 * anonymiser (COMPRISE D2.3 4.2.3).
 *
 * O(n^2) memory and time per iteration; the pools it serves hold a few
 * thousand speakers per gender at most.
 */
#include "targets/anon.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vpa_ap_opts_init(struct vpa_ap_opts *o)
{
	o->damping = 0.5;
	o->max_iter = 200;
	o->conv_iter = 15;
	o->pref_median = 1;
	o->preference = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of the off-diagonal entries (mean of the two middle ones when even). */
static double offdiag_median(const double *s, size_t n)
{
	size_t m = n * (n - 1), k = 0;
	double *v = xmalloc(xmul(m, sizeof(double)));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (i != j)
				v[k++] = s[i * n + j];
	qsort(v, m, sizeof(double), cmp_double);
	double med = (m % 2) ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
	free(v);
	return med;
}

int vpa_apcluster(const double *s_in, size_t n, const struct vpa_ap_opts *o, uint32_t *label,
		  uint32_t *exemplar, size_t *n_clusters, int *iters, int *converged,
		  struct vpa_err *err)
{
	if (n == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "affinity propagation: no points");
	if (!(o->damping >= 0.5 && o->damping < 1))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"affinity propagation: damping must be in [0.5, 1), got %g", o->damping);
	for (size_t i = 0; i < n * n; i++)
		if (!isfinite(s_in[i]))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"affinity propagation: similarity (%zu, %zu) is not finite",
					i / n, i % n);
	if (iters)
		*iters = 0;
	if (converged)
		*converged = 0;
	if (n == 1) {
		label[0] = 0;
		exemplar[0] = 0;
		*n_clusters = 1;
		if (converged)
			*converged = 1;
		return 0;
	}
	double pref = o->pref_median ? offdiag_median(s_in, n) : o->preference;
	double lam = o->damping;
	double *s = xmalloc(xmul(n * n, sizeof(double)));
	double *r = xcalloc(n * n, sizeof(double));
	double *a = xcalloc(n * n, sizeof(double));
	double *colsum = xmalloc(xmul(n, sizeof(double)));
	unsigned char *ex = xcalloc(n, 1), *ex_old = xcalloc(n, 1);
	memcpy(s, s_in, n * n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		s[i * n + i] = pref;

	int stable = 0, it = 0, conv = 0;
	for (it = 1; it <= o->max_iter; it++) {
		/* responsibilities, row by row: the best and second best a + s */
		for (size_t i = 0; i < n; i++) {
			const double *si = s + i * n, *ai = a + i * n;
			double *ri = r + i * n;
			double m1 = -INFINITY, m2 = -INFINITY;
			size_t k1 = 0;
			for (size_t k = 0; k < n; k++) {
				double v = ai[k] + si[k];
				if (v > m1) {
					m2 = m1;
					m1 = v;
					k1 = k;
				} else if (v > m2) {
					m2 = v;
				}
			}
			for (size_t k = 0; k < n; k++) {
				double nr = si[k] - (k == k1 ? m2 : m1);
				ri[k] = lam * ri[k] + (1 - lam) * nr;
			}
		}
		/* availabilities, column by column */
		for (size_t k = 0; k < n; k++) {
			double sum = 0;
			for (size_t i = 0; i < n; i++)
				if (i != k && r[i * n + k] > 0)
					sum += r[i * n + k];
			colsum[k] = sum;
		}
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < n; k++) {
				double na;
				if (i == k) {
					na = colsum[k];
				} else {
					double rik = r[i * n + k] > 0 ? r[i * n + k] : 0;
					na = r[k * n + k] + colsum[k] - rik;
					if (na > 0)
						na = 0;
				}
				a[i * n + k] = lam * a[i * n + k] + (1 - lam) * na;
			}
		/* convergence: the exemplar set unchanged for conv_iter iterations */
		int any = 0, same = 1;
		for (size_t k = 0; k < n; k++) {
			ex[k] = r[k * n + k] + a[k * n + k] > 0;
			any |= ex[k];
			if (ex[k] != ex_old[k])
				same = 0;
		}
		memcpy(ex_old, ex, n);
		stable = (same && any) ? stable + 1 : 0;
		if (stable >= o->conv_iter) {
			conv = 1;
			break;
		}
	}
	if (it > o->max_iter)
		it = o->max_iter;

	size_t K = 0;
	for (size_t k = 0; k < n; k++)
		if (ex[k])
			exemplar[K++] = (uint32_t)k;
	if (K == 0) {
		size_t best = 0;
		for (size_t k = 1; k < n; k++)
			if (r[k * n + k] + a[k * n + k] > r[best * n + best] + a[best * n + best])
				best = k;
		exemplar[K++] = (uint32_t)best;
		ex[best] = 1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t bc = 0;
		double bs = -INFINITY;
		for (size_t c = 0; c < K; c++) {
			if (exemplar[c] == i) {
				bc = c;
				break;
			}
			double v = s_in[i * n + exemplar[c]];
			if (v > bs) {
				bs = v;
				bc = c;
			}
		}
		label[i] = (uint32_t)bc;
	}
	*n_clusters = K;
	if (iters)
		*iters = it;
	if (converged)
		*converged = conv;
	free(s);
	free(r);
	free(a);
	free(colsum);
	free(ex);
	free(ex_old);
	return 0;
}
