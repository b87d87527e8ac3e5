/*
 * bench/bench_legal.c - issue 29's budget: pi_link over the N' grid (2, 5,
 * 10, 50, all) and pi_sing over the N grid (2, 5, 10, 50) for 1,000 speakers
 * x 1,000 enrolments (one test conversation per speaker for pi_link; one
 * calibration and one test conversation per speaker for pi_sing, so three
 * 1,000 x 1,000 score matrices), under 1 s.  Baseline measured in the same
 * run: one libc qsort of a 1,000 x 1,000 matrix's scores.  Best of 3.
 * Usage: bench_legal [--speakers N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t n = 1000;
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--speakers"))
			n = (size_t)atol(argv[++i]);
	struct vpa_rng r;
	vpa_rng_seed(&r, 29);
	/* link (item i, enrolment j) = S[i n + j]; calib / test (enrolment j, item i) */
	double *S = xmalloc(n * n * sizeof(double)), *C = xmalloc(n * n * sizeof(double)),
	       *T = xmalloc(n * n * sizeof(double)), *Q = xmalloc(n * n * sizeof(double));
	uint32_t *spk = xmalloc(n * sizeof(uint32_t));
	size_t *m = xmalloc(n * sizeof(size_t));
	for (size_t i = 0; i < n; i++) {
		spk[i] = (uint32_t)i;
		for (size_t j = 0; j < n; j++) {
			S[i * n + j] = vpa_rng_normal(&r) + (i == j ? 2 : 0);
			C[j * n + i] = vpa_rng_normal(&r) + (i == j ? 2 : 0);
			T[j * n + i] = vpa_rng_normal(&r) + (i == j ? 2 : 0);
		}
	}
	const size_t link[5] = {2, 5, 10, 50, n}, sing[4] = {2, 5, 10, 50};
	struct vpa_legal_est pl[5], ps[4];
	struct vpa_err err;
	vpa_err_init(&err);
	double best = 1e30, qbest = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		double t0 = vpa_now();
		for (size_t i = 0; i < n; i++)
			m[i] = vpa_pilink_beaten(S + i * n, n, i);
		for (size_t g = 0; g < 5; g++)
			if (vpa_pilink(m, spk, n, n, n, link[g], 0.95, &pl[g], &err))
				return fprintf(stderr, "bench_legal: %s\n", err.msg), 1;
		if (vpa_pising(C, spk, n, T, spk, n, n, n, sing, 4, 0.95, ps, &err))
			return fprintf(stderr, "bench_legal: %s\n", err.msg), 1;
		double dt = vpa_now() - t0;
		best = dt < best ? dt : best;
		memcpy(Q, S, n * n * sizeof(double));
		t0 = vpa_now();
		qsort(Q, n * n, sizeof(double), cmp);
		dt = vpa_now() - t0;
		qbest = dt < qbest ? dt : qbest;
	}
	printf("pi_link N'=2,5,10,50,%zu and pi_sing N=2,5,10,50 on %zu speakers x %zu "
	       "enrolments: %.3f s\n", n, n, n, best);
	printf("  pi_link(2) %.4f  pi_link(all) %.4f  pi_sing(50) %.4f (baseline %.4f)\n",
	       pl[0].value, pl[4].value, ps[3].value, ps[3].chance);
	printf("baseline: libc qsort of the %zu x %zu matrix: %.3f s\n", n, n, qbest);
	printf("ratio: legal metrics / qsort = %.2f   (budget: 1 s; used %.3f s)\n", best / qbest,
	       best);
	free(S);
	free(C);
	free(T);
	free(Q);
	free(spk);
	free(m);
	return 0;
}
