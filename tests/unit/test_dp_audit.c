/*
 * tests/unit/test_dp_audit.c - empirical epsilon lower bounds (metrics/dp_audit.c):
 * published values (TF Privacy's test), the one-run closed form, goldens from
 * tests/golden/dp_audit/gen.py (scipy / mpmath), a hand-computed AUROC and
 * TPR at FPR, and the threshold sweep against a brute force.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "metrics/metrics.h"

/* |a - b| <= rtol |b| + atol */
static int close_to(double a, double b, double rtol, double atol)
{
	return a == b || fabs(a - b) <= rtol * fabs(b) + atol;
}

#define CHECK_CLOSE(a, b, rtol, atol, what)                                              \
	do {                                                                             \
		double c_a = (a), c_b = (b);                                             \
		if (!close_to(c_a, c_b, rtol, atol)) {                                   \
			h_failed_checks++;                                               \
			printf("#   %s: got %.17g, golden %.17g\n", what, c_a, c_b);         \
		}                                                                        \
	} while (0)

/* TF Privacy privacy_tests/epsilon_lower_bound_test.py: 0 of 500 and 0 of 500
 * errors, alpha 0.01, two-sided Clopper-Pearson -> eps >= 4.54. */
static void test_tf_privacy_published(void)
{
	struct vpa_dp_audit a;
	vpa_dp_audit_counts(0, 500, 0, 500, 0.01, 0, VPA_AUDIT_CP, &a);
	CHECK(fabs(a.epsilon - 4.54) < 0.005);
	/* closed form for zero errors: FPR_hi = 1 - (alpha/2)^(1/n) */
	double u = -expm1(log(0.005) / 500);
	CHECK_NEAR(a.fpr_hi, u, 1e-15);
	CHECK_NEAR(a.epsilon, log((1 - u) / u), 1e-12);
	CHECK(a.direction == 1);
}

/* v = r (all guesses correct), delta 0: p(eps) = q^r with q = e^eps/(1+e^eps),
 * so the bound is max(0, logit(alpha^(1/r))) = ln(a / (1 - a)), a = alpha^(1/r). */
static void test_one_run_all_correct(void)
{
	const double rs[] = { 1, 3, 5, 10, 37, 100, 1000, 100000 };
	const double alphas[] = { 0.05, 0.01, 1e-6 };
	for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
		for (size_t k = 0; k < 3; k++) {
			double r = rs[i], al = alphas[k], l = log(al) / r;
			double a = exp(l), want = log(a / -expm1(l));
			if (want < 0)
				want = 0;
			double got = vpa_one_run_epsilon(r * 10, r, r, al, 0);
			CHECK_CLOSE(got, want, 1e-11, 1e-11, "one-run all correct");
		}
	}
	/* a delta term can only weaken the bound */
	CHECK(vpa_one_run_epsilon(1000, 100, 100, 0.05, 1e-5) <=
	      vpa_one_run_epsilon(1000, 100, 100, 0.05, 0));
}

static void test_golden(void)
{
	FILE *f = fopen("tests/golden/dp_audit/golden.txt", "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char line[512], kind[16], meth[8];
	size_t n = 0, bad_before = (size_t)h_failed_checks;
	double a, b, c, d, e, g, x;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (sscanf(line, "ibeta %lf %lf %lf %lf", &a, &b, &c, &x) == 4) {
			double cpl;
			double got = vpa_ibeta(a, b, c, &cpl);
			CHECK_CLOSE(got, x, 1e-11, 1e-300, line);
			CHECK_CLOSE(cpl, 1 - x, 1e-11, 1e-15, line);
		} else if (sscanf(line, "cpu %lf %lf %lf %lf", &a, &b, &c, &x) == 4) {
			CHECK_CLOSE(vpa_cp_upper(a, b, c), x, 1e-11, 1e-300, line);
		} else if (sscanf(line, "cpl %lf %lf %lf %lf", &a, &b, &c, &x) == 4) {
			CHECK_CLOSE(vpa_cp_lower(a, b, c), x, 1e-11, 1e-300, line);
		} else if (sscanf(line, "ndtri %lf %lf", &a, &x) == 2) {
			CHECK_CLOSE(vpa_norm_quantile(a), x, 1e-14, 1e-300, line);
		} else if (sscanf(line, "gdpeps %lf %lf %lf", &a, &b, &x) == 3) {
			CHECK_CLOSE(vpa_gdp_epsilon(a, b), x, 1e-10, 1e-12, line);
		} else if (sscanf(line, "orp %lf %lf %lf %lf %lf %lf", &a, &b, &c, &d, &e, &x) == 6) {
			CHECK_CLOSE(vpa_one_run_pvalue(a, b, c, d, e), x, 1e-10, 1e-300, line);
		} else if (sscanf(line, "oreps %lf %lf %lf %lf %lf %lf", &a, &b, &c, &d, &e, &x) == 6) {
			CHECK_CLOSE(vpa_one_run_epsilon(a, b, c, d, e), x, 1e-9, 1e-10, line);
		} else if (sscanf(line, "audit %lf %lf %lf %lf %lf %lf %7s %lf", &a, &b, &c, &d, &e, &g,
				  meth, &x) == 8) {
			struct vpa_dp_audit r;
			vpa_dp_audit_counts(a, b, c, d, e, g,
					    strcmp(meth, "gdp") ? VPA_AUDIT_CP : VPA_AUDIT_GDP, &r);
			CHECK_CLOSE(r.epsilon, x, 1e-10, 1e-11, line);
		} else {
			sscanf(line, "%15s", kind);
			printf("#   unknown golden line: %s", line);
			h_failed_checks++;
		}
	}
	fclose(f);
	CHECK(n > 700);
	if ((size_t)h_failed_checks != bad_before)
		printf("#   %zu golden lines read\n", n);
}

/* properties every interval must have */
static void test_cp_properties(void)
{
	const double ns[] = { 1, 7, 100, 4321, 1e6 };
	for (size_t i = 0; i < 5; i++) {
		for (double k = 0; k <= ns[i]; k += ns[i] > 100 ? floor(ns[i] / 7) : 1) {
			double lo = vpa_cp_lower(k, ns[i], 0.025), hi = vpa_cp_upper(k, ns[i], 0.025);
			CHECK(lo <= k / ns[i] && k / ns[i] <= hi);
			/* a stricter level widens the interval */
			CHECK(vpa_cp_upper(k, ns[i], 1e-6) >= hi);
		}
	}
}

/*
 * Hand computation: in = 150.5 + i (i < 100), out = i (i < 200).
 * AUROC: in-score 150.5+i beats min(200, 151+i) out-scores:
 *   sum_{i<49} (151+i) + 51 * 200 = 7399 + 1176 + 10200 = 18775, / 20000 = 0.93875.
 * TPR at FPR <= 1%: at most 2 false positives: the lowest such threshold is
 *   197.5 (out 198, 199 above it), 53 in-scores >= 197.5 -> 0.53.
 * TPR at FPR <= 0.1%: no false positive: threshold 199.5, 51 in-scores -> 0.51.
 * A tie: in = {0.5, 2, 3, 5}, out = {0, 1, 2, 4}: (1 + 2.5 + 3 + 4) / 16 = 0.65625.
 */
static void test_auroc_tpr_hand(void)
{
	double in[100], out[200];
	for (int i = 0; i < 100; i++)
		in[i] = 150.5 + i;
	for (int i = 0; i < 200; i++)
		out[i] = i;
	struct vpa_dp_audit a;
	vpa_dp_audit_scores(in, 100, out, 200, 0.05, 0, VPA_AUDIT_CP, &a);
	CHECK_NEAR(a.auroc, 0.93875, 1e-15);
	CHECK_NEAR(a.tpr_at_fpr_1e2, 0.53, 1e-15);
	CHECK_NEAR(a.tpr_at_fpr_1e3, 0.51, 1e-15);
	CHECK(a.n_thresholds == 301); /* 300 distinct scores and +inf */
	double in2[] = { 0.5, 2, 3, 5 }, out2[] = { 0, 1, 2, 4 };
	vpa_dp_audit_scores(in2, 4, out2, 4, 0.05, 0, VPA_AUDIT_CP, &a);
	CHECK_NEAR(a.auroc, 0.65625, 1e-15);
	CHECK(a.n_thresholds == 8);
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The pruned sweep equals an exhaustive one over every threshold. */
static void test_sweep_brute_force(void)
{
	struct vpa_rng rng;
	vpa_rng_seed(&rng, 28);
	for (int trial = 0; trial < 12; trial++) {
		size_t P = 50 + vpa_rng_below(&rng, 400), N = 50 + vpa_rng_below(&rng, 400);
		double shift = 0.5 * (trial % 6), *in = malloc(P * sizeof(double)),
		       *out = malloc(N * sizeof(double));
		for (size_t i = 0; i < P; i++)
			in[i] = round(8 * (shift + vpa_rng_normal(&rng))) / 8; /* ties */
		for (size_t i = 0; i < N; i++)
			out[i] = round(8 * vpa_rng_normal(&rng)) / 8;
		qsort(in, P, sizeof(double), cmp_d);
		qsort(out, N, sizeof(double), cmp_d);
		/* the thresholds: distinct pooled values and +inf */
		double *pool = malloc((P + N + 1) * sizeof(double));
		memcpy(pool, in, P * sizeof(double));
		memcpy(pool + P, out, N * sizeof(double));
		qsort(pool, P + N, sizeof(double), cmp_d);
		size_t T = 0;
		for (size_t i = 0; i < P + N; i++)
			if (i == 0 || pool[i] != pool[i - 1])
				pool[T++] = pool[i];
		pool[T++] = INFINITY;
		for (int meth = 0; meth < 2; meth++) {
			double delta = meth ? 1e-5 : (trial % 2 ? 1e-3 : 0), level = 0.05 / (2.0 * T);
			double best = 0;
			for (size_t t = 0; t < T; t++) {
				double fn = 0, fp = 0;
				for (size_t i = 0; i < P; i++)
					fn += in[i] < pool[t];
				for (size_t i = 0; i < N; i++)
					fp += out[i] >= pool[t];
				double fu = vpa_cp_upper(fp, N, level), nu = vpa_cp_upper(fn, P, level), e = 0;
				if (meth) {
					double mu = vpa_gdp_mu(fu, nu);
					e = mu > 0 ? vpa_gdp_epsilon(mu, delta) : 0;
				} else {
					if (1 - delta - nu > 0 && log((1 - delta - nu) / fu) > e)
						e = log((1 - delta - nu) / fu);
					if (1 - delta - fu > 0 && log((1 - delta - fu) / nu) > e)
						e = log((1 - delta - fu) / nu);
				}
				if (e > best)
					best = e;
			}
			struct vpa_dp_audit a;
			vpa_dp_audit_scores(in, P, out, N, 0.05, delta, meth ? VPA_AUDIT_GDP : VPA_AUDIT_CP, &a);
			CHECK(a.n_thresholds == (double)T);
			CHECK_CLOSE(a.epsilon, best, 1e-12, 1e-13, meth ? "sweep gdp" : "sweep cp");
		}
		free(pool);
		free(in);
		free(out);
	}
}

/* One run from scores: every pair of the grid, brute force (distinct scores). */
static void test_one_run_scores(void)
{
	struct vpa_rng rng;
	vpa_rng_seed(&rng, 7);
	for (int trial = 0; trial < 4; trial++) {
		size_t P = 100 + 37 * trial, N = 120;
		double *in = malloc(P * sizeof(double)), *out = malloc(N * sizeof(double));
		for (size_t i = 0; i < P; i++)
			in[i] = 1.5 * trial + vpa_rng_normal(&rng);
		for (size_t i = 0; i < N; i++)
			out[i] = vpa_rng_normal(&rng);
		qsort(in, P, sizeof(double), cmp_d);
		qsort(out, N, sizeof(double), cmp_d);
		double m = (double)(P + N), delta = trial % 2 ? 1e-5 : 0;
		double g[40];
		size_t ng = 0;
		g[ng++] = 0;
		for (double p = 1; p < m; p *= 2)
			g[ng++] = p;
		g[ng++] = m;
		double K = 0;
		for (size_t a = 0; a < ng; a++)
			for (size_t b = 0; b < ng; b++)
				K += (a || b) && g[a] + g[b] <= m;
		double best = 0;
		for (size_t a = 0; a < ng; a++) {
			for (size_t b = 0; b < ng; b++) {
				if (!(a || b) || g[a] + g[b] > m)
					continue;
				/* top g[a] pooled scores guessed in, bottom g[b] out */
				double v = 0;
				size_t i = P, j = N;
				for (double k = 0; k < g[a]; k++) {
					if (j == 0 || (i > 0 && in[i - 1] > out[j - 1])) {
						i--;
						v++;
					} else {
						j--;
					}
				}
				i = j = 0;
				for (double k = 0; k < g[b]; k++) {
					if (i == P || (j < N && out[j] < in[i])) {
						j++;
						v++;
					} else {
						i++;
					}
				}
				double e = vpa_one_run_epsilon(m, g[a] + g[b], v, 0.05 / K, delta);
				if (e > best)
					best = e;
			}
		}
		struct vpa_one_run o;
		vpa_dp_audit_one_run_scores(in, P, out, N, 0.05, delta, &o);
		CHECK(o.pairs == K);
		CHECK_CLOSE(o.epsilon, best, 1e-9, 1e-10, "one-run scores");
		if (trial == 3)
			CHECK(o.epsilon > 0.5); /* well separated: a real bound */
		free(in);
		free(out);
	}
}

/* GDP: the conversion at the solution gives back delta; mu from symmetric bounds. */
static void test_gdp_roundtrip(void)
{
	const double mus[] = { 0.3, 1, 2.5, 5 };
	for (int i = 0; i < 4; i++) {
		double e = vpa_gdp_epsilon(mus[i], 1e-5);
		if (e > 0)
			CHECK_CLOSE(vpa_gdp_log_delta(mus[i], e), log(1e-5), 1e-10, 1e-12, "gdp delta(eps)");
	}
	/* Phi^-1(1 - 0.01) - Phi^-1(0.01) = 2 * 2.3263478740408408 */
	CHECK_NEAR(vpa_gdp_mu(0.01, 0.01), 2 * 2.3263478740408408, 1e-14);
	CHECK(vpa_gdp_epsilon(0, 1e-5) == 0);
}

int main(void)
{
	RUN(test_tf_privacy_published);
	RUN(test_one_run_all_correct);
	RUN(test_golden);
	RUN(test_cp_properties);
	RUN(test_auroc_tpr_hand);
	RUN(test_sweep_brute_force);
	RUN(test_one_run_scores);
	RUN(test_gdp_roundtrip);
	return DONE();
}
