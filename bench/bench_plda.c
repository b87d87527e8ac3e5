/*
 * bench/bench_plda.c - PLDA scoring throughput against baselines measured in
 * the same run:
 *   1. d = 200 (after LDA), 1,000 enrolment x 10,000 test vectors:
 *      vpa_plda_score_matrix (double) vs a pure DGEMM of the same shape, and
 *      vs Kaldi's per-trial loop (vpa_plda_llr; timed on a slice);
 *      vpa_plda_score_matrix_f (float) vs a pure SGEMM of the same shape.
 *   2. the COMPRISE population: 24,616 enrolment speakers x 4,696 test
 *      embeddings, d = 200, float path vs SGEMM (issue 4 asks >= 50% of the
 *      machine's SGEMM throughput).
 * Enrolment counts vary (1..8), as with real speakers.  Each timing is the
 * best of 3.  Usage: bench_plda [--quick]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/la.h"
#include "learn/plda.h"

static struct vpa_plda *make_plda(size_t d, struct vpa_rng *r)
{
	double *a = calloc(d * d, sizeof(double)), *B = malloc(d * d * sizeof(double));
	double *W = malloc(d * d * sizeof(double)), *mu = calloc(d, sizeof(double));
	for (size_t i = 0; i < d * d; i++)
		a[i] = vpa_rng_normal(r);
	vpa_dgemm(0, 1, d, d, d, 2.0 / (double)d, a, d, a, d, 0.0, B, d);
	for (size_t i = 0; i < d * d; i++)
		a[i] = vpa_rng_normal(r);
	vpa_dgemm(0, 1, d, d, d, 1.0 / (double)d, a, d, a, d, 0.0, W, d);
	for (size_t i = 0; i < d; i++) {
		B[i * d + i] += 0.1;
		W[i * d + i] += 0.1;
	}
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_plda *p = vpa_plda_from_cov(d, mu, B, W, &err);
	if (!p) {
		fprintf(stderr, "bench_plda: %s\n", err.msg);
		exit(1);
	}
	free(a);
	free(B);
	free(W);
	free(mu);
	return p;
}

static double *rand_rows(size_t n, size_t d, struct vpa_rng *r)
{
	double *x = malloc(n * d * sizeof(double));
	for (size_t i = 0; i < n * d; i++)
		x[i] = vpa_rng_normal(r);
	return x;
}

#define BEST3(t, stmt)                                \
	do {                                          \
		t = 1e30;                             \
		for (int rep_ = 0; rep_ < 3; rep_++) { \
			double t0_ = vpa_now();       \
			stmt;                         \
			double dt_ = vpa_now() - t0_; \
			if (dt_ < t)                  \
				t = dt_;              \
		}                                     \
	} while (0)

static void block(size_t ne, size_t nt, size_t d, int with_double, int with_naive)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, 42);
	struct vpa_plda *p = make_plda(d, &r);
	double *x = rand_rows(ne, d, &r), *y = rand_rows(nt, d, &r);
	double *u = malloc(ne * d * sizeof(double)), *v = malloc(nt * d * sizeof(double));
	uint32_t *cnt = malloc(ne * sizeof(uint32_t));
	for (size_t e = 0; e < ne; e++)
		cnt[e] = 1 + (uint32_t)(e % 8);
	vpa_plda_transform_rows(p, x, ne, cnt, VPA_PLDA_NORM_KALDI, u);
	vpa_plda_transform_rows(p, y, nt, NULL, VPA_PLDA_NORM_KALDI, v);
	double trials = (double)ne * (double)nt, t;
	printf("-- %zu enrolment x %zu test, d = %zu (%.3g trials), %d BLAS threads\n", ne, nt, d, trials,
	       vpa_la_get_threads());
	if (with_double) {
		double *out = malloc(ne * nt * sizeof(double));
		BEST3(t, vpa_dgemm(0, 1, ne, nt, d, 1.0, u, d, v, d, 0.0, out, nt));
		double t_dgemm = t;
		BEST3(t, vpa_plda_score_matrix(p, u, cnt, ne, v, nt, out));
		double t_plda = t;
		printf("baseline DGEMM (%zux%zux%zu)           %8.4f s  %10.3g trials/s  %6.1f GFLOP/s\n", ne, nt,
		       d, t_dgemm, trials / t_dgemm, 2 * trials * d / t_dgemm * 1e-9);
		printf("vpa_plda_score_matrix (double)        %8.4f s  %10.3g trials/s\n", t_plda, trials / t_plda);
		printf("ratio: PLDA double throughput / DGEMM = %.3f\n", t_dgemm / t_plda);
		/* spot check against the per-trial LLR */
		double maxdiff = 0;
		for (size_t k = 0; k < 1000; k++) {
			size_t e = (k * 7919) % ne, tt = (k * 104729) % nt;
			double ref = vpa_plda_llr(p, u + e * d, cnt[e], v + tt * d);
			double df = fabs(out[e * nt + tt] - ref);
			if (df > maxdiff)
				maxdiff = df;
		}
		printf("check: max |matrix - per-trial LLR| over 1000 trials = %.2e\n", maxdiff);
		if (with_naive) {
			size_t ns = ne / 20 ? ne / 20 : 1;
			double acc = 0;
			BEST3(t, for (size_t e = 0; e < ns; e++) for (size_t tt = 0; tt < nt; tt++) acc +=
				     vpa_plda_llr(p, u + e * d, cnt[e], v + tt * d));
			double per = t / ((double)ns * (double)nt);
			printf("baseline per-trial loop (Kaldi style) %8.4f s  %10.3g trials/s  (timed on %zu x %zu, sum %.3g)\n",
			       per * trials, 1 / per, ns, nt, acc);
			printf("ratio: PLDA double / per-trial loop = %.1fx faster\n", per * trials / t_plda);
		}
		free(out);
	}
	float *of = malloc(ne * nt * sizeof(float));
	float *uf = malloc(ne * d * sizeof(float)), *vf = malloc(nt * d * sizeof(float));
	for (size_t i = 0; i < ne * d; i++)
		uf[i] = (float)u[i];
	for (size_t i = 0; i < nt * d; i++)
		vf[i] = (float)v[i];
	BEST3(t, vpa_sgemm(0, 1, ne, nt, d, 1.0f, uf, d, vf, d, 0.0f, of, nt));
	double t_sgemm = t;
	BEST3(t, vpa_plda_score_matrix_f(p, u, cnt, ne, v, nt, of));
	double t_pf = t;
	printf("baseline SGEMM (%zux%zux%zu)           %8.4f s  %10.3g trials/s  %6.1f GFLOP/s\n", ne, nt, d,
	       t_sgemm, trials / t_sgemm, 2 * trials * d / t_sgemm * 1e-9);
	printf("vpa_plda_score_matrix_f (float)       %8.4f s  %10.3g trials/s\n", t_pf, trials / t_pf);
	printf("ratio: PLDA float throughput / SGEMM = %.3f  (issue 4 budget: >= 0.50)\n", t_sgemm / t_pf);
	free(of);
	free(uf);
	free(vf);
	free(x);
	free(y);
	free(u);
	free(v);
	free(cnt);
	vpa_plda_free(p);
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && !strcmp(argv[1], "--quick");
	block(1000, 10000, 200, 1, 1);
	if (!quick)
		block(24616, 4696, 200, 0, 0);
	return 0;
}
