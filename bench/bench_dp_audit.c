/*
 * bench/bench_dp_audit.c - `vpaudit dp audit` over 10M scores (issue 28: goal
 * under 2 s on this machine, one sort).
 *
 *   bench_dp_audit [N]     N scores in all (default 10,000,000), half "in"
 *
 * Times, in one run on the same scores (5M "in" ~ N(1, 1), 5M "out" ~ N(0, 1),
 * float32-rounded as a .npy of scores would hold them):
 *   audit cp    sort both lists (vpa_sort_scores) + vpa_dp_audit_scores (AUROC,
 *               TPR at FPR, Bonferroni sweep of every threshold, CP bounds)
 *   audit gdp   the same with --method gdp at delta 1e-5
 *   one-run     sort + vpa_dp_audit_one_run_scores at delta 1e-9 (2 m delta must stay
 *               well below alpha for any bound: m = 10M)
 *   baseline    libc qsort of the same 10M doubles
 * and the ratio of each audit to the qsort baseline.  File reading is not
 * included (bench/run.sh's metrics benchmark measures the readers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "metrics/metrics.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 10000000;
	size_t nin = n / 2, nout = n - nin;
	double *in = xmalloc(nin * sizeof(double)), *out = xmalloc(nout * sizeof(double));
	double *a = xmalloc(nin * sizeof(double)), *b = xmalloc(nout * sizeof(double));
	struct vpa_rng r;
	vpa_rng_seed(&r, 28);
	for (size_t i = 0; i < nin; i++)
		in[i] = (float)(1 + vpa_rng_normal(&r));
	for (size_t i = 0; i < nout; i++)
		out[i] = (float)vpa_rng_normal(&r);

	struct vpa_dp_audit res;
	memcpy(a, in, nin * sizeof(double));
	memcpy(b, out, nout * sizeof(double));
	double t0 = vpa_now();
	vpa_sort_scores(a, NULL, nin);
	vpa_sort_scores(b, NULL, nout);
	vpa_dp_audit_scores(a, nin, b, nout, 0.05, 0, VPA_AUDIT_CP, &res);
	double t_cp = vpa_now() - t0;
	printf("audit cp    %zu scores: %.3f s  eps >= %.6f  (%.0f thresholds, AUROC %.4f)\n", n, t_cp,
	       res.epsilon, res.n_thresholds, res.auroc);

	memcpy(a, in, nin * sizeof(double));
	memcpy(b, out, nout * sizeof(double));
	t0 = vpa_now();
	vpa_sort_scores(a, NULL, nin);
	vpa_sort_scores(b, NULL, nout);
	vpa_dp_audit_scores(a, nin, b, nout, 0.05, 1e-5, VPA_AUDIT_GDP, &res);
	double t_gdp = vpa_now() - t0;
	printf("audit gdp   %zu scores: %.3f s  eps >= %.6f  (mu %.6f; assumes a Gaussian trade-off)\n", n,
	       t_gdp, res.epsilon, res.mu);

	struct vpa_one_run o;
	memcpy(a, in, nin * sizeof(double));
	memcpy(b, out, nout * sizeof(double));
	t0 = vpa_now();
	vpa_sort_scores(a, NULL, nin);
	vpa_sort_scores(b, NULL, nout);
	vpa_dp_audit_one_run_scores(a, nin, b, nout, 0.05, 1e-9, &o);
	double t_one = vpa_now() - t0;
	printf("one-run     %zu scores: %.3f s  eps >= %.6f  (%.0f of %.0f correct, %.0f pairs)\n", n,
	       t_one, o.epsilon, o.correct, o.guesses, o.pairs);

	double *c = xmalloc(n * sizeof(double));
	memcpy(c, in, nin * sizeof(double));
	memcpy(c + nin, out, nout * sizeof(double));
	t0 = vpa_now();
	qsort(c, n, sizeof(double), cmp_double);
	double t_q = vpa_now() - t0;
	printf("baseline: libc qsort of the same %zu doubles: %.3f s\n", n, t_q);
	printf("ratio: audit cp / qsort = %.3f, audit gdp / qsort = %.3f, one-run / qsort = %.3f"
	       "  (goal: audit under 2 s)\n", t_cp / t_q, t_gdp / t_q, t_one / t_q);
	free(in);
	free(out);
	free(a);
	free(b);
	free(c);
	return 0;
}
