/*
 * tests/unit/test_privunit.c - PrivUnit2 and the scalar norm mechanism
 * (targets/privunit.c): the incomplete beta against exact binomial sums, cap
 * masses and the unbiasing factor against closed forms in low dimension
 * (d = 3: <V,u> is uniform on [-1,1]; d = 5: density 3/4 (1 - t^2)), the
 * paper's epsilon bounds (16a)/(16b) against hand values, unbiasedness of
 * the output over many draws, and the scalar mechanism's unbiasedness,
 * variance and epsilon (ratio of output probabilities).
 */
#include "harness.h"
#include "targets/fl_speaker.h"
#include "metrics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_betainc_exact(void)
{
	/* I_x(a,b) = sum_{j=a}^{a+b-1} C(a+b-1, j) x^j (1-x)^(a+b-1-j), exact in Python */
	CHECK_NEAR(vpa_log_ibeta(2, 3, 0.3), -1.0546911016101816, 1e-12);
	CHECK_NEAR(vpa_log_ibeta(10, 10, 0.45), -1.1118066904714183, 1e-12);
	CHECK_NEAR(vpa_log_ibeta(50, 50, 0.3), -11.071591423791261, 1e-10);
	CHECK_REL(vpa_log_ibeta(3, 7, 0.9), -2.9980044935484784e-06, 1e-8);
	CHECK_NEAR(vpa_log_ibeta(200, 200, 0.1), -208.02379618212092, 1e-9);
	/* symmetry point, edges */
	CHECK_NEAR(vpa_log_ibeta(7.5, 7.5, 0.5), log(0.5), 1e-13);
	CHECK(vpa_log_ibeta(3, 3, 0) == -INFINITY);
	CHECK(vpa_log_ibeta(3, 3, 1) == 0);
	/* very large half-integer parameters (d = 20001) stay finite and monotone */
	double a = 10000, prev = -INFINITY;
	for (double x = 0.40; x <= 0.5; x += 0.01) {
		double l = vpa_log_ibeta(a, a, x);
		CHECK(isfinite(l) && l > prev);
		prev = l;
	}
	CHECK_NEAR(vpa_log_ibeta(a, a, 0.5), log(0.5), 1e-9);
}

static void test_cap_mass_closed_forms(void)
{
	/* d = 3: t uniform on [-1, 1], q = (1 - gamma) / 2 */
	for (double g = 0; g < 0.95; g += 0.15)
		CHECK_NEAR(exp(vpa_privunit_log_cap_mass(g, 3)), (1 - g) / 2, 1e-13);
	/* d = 5: q = 3/4 (2/3 - g + g^3/3) */
	CHECK_NEAR(exp(vpa_privunit_log_cap_mass(0.3, 5)), 0.28175, 1e-13);
	/* gamma = 0 is half the sphere in any dimension */
	CHECK_NEAR(exp(vpa_privunit_log_cap_mass(0, 1001)), 0.5, 1e-12);
}

static void test_epsilon_bounds(void)
{
	/* (16a): log((1 + g')/(1 - g')), g' = gamma sqrt(2(d-1)/pi) */
	CHECK_NEAR(vpa_privunit_cap_epsilon(0.05, 101), 0.8447807468706054, 1e-12);
	/* (16b) when gamma >= sqrt(2/d) and (16a) does not apply (g' = 5.04 > 1) */
	CHECK_NEAR(vpa_privunit_cap_epsilon(0.2, 1000), 24.026785459152478, 1e-11);
	CHECK(vpa_privunit_cap_epsilon(1.0, 100) == INFINITY);
	CHECK(vpa_privunit_cap_epsilon(-0.1, 100) == INFINITY);
	/* the accounting: eps = eps0 + eps_cap, p = e^eps0 / (1 + e^eps0) */
	struct vpa_privunit pu;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_privunit_init_gamma(&pu, 101, 3, 0.05, &err) == 0);
	CHECK_NEAR(pu.eps_cap, 0.8447807468706054, 1e-12);
	CHECK_NEAR(pu.eps0, 3 - 0.8447807468706054, 1e-12);
	CHECK_NEAR(pu.p, exp(pu.eps0) / (1 + exp(pu.eps0)), 1e-14);
	/* the exact loss of the cap choice never exceeds the paper's bound */
	size_t ds[] = {3, 10, 101, 1000, 20000};
	for (size_t i = 0; i < 5; i++)
		for (double g = 0.001; g < 0.9; g *= 1.7) {
			double b = vpa_privunit_cap_epsilon(g, ds[i]);
			if (!isfinite(b) || b > 200)
				continue;
			struct vpa_privunit q;
			if (vpa_privunit_init_gamma(&q, ds[i], b + 1, g, NULL))
				continue;
			CHECK(q.eps_cap_exact <= q.eps_cap + 1e-12);
			CHECK(q.eps_cap_exact >= 0);
		}
	/* a cap that needs more than the whole budget is refused */
	vpa_err_init(&err);
	CHECK(vpa_privunit_init_gamma(&pu, 1000, 20, 0.2, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "needs epsilon > 24.02") != NULL);
	vpa_err_init(&err);
	CHECK(vpa_privunit_init(&pu, 2, 1, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "PrivUnit needs a dimension >= 3, got 2");
}

static void test_scale_closed_form(void)
{
	/* d = 3: E[t | t >= g] = (1+g)/2, E[t | t < g] = (g-1)/2 */
	struct vpa_privunit pu;
	double g = 0.3;
	CHECK(vpa_privunit_init_gamma(&pu, 3, 4, g, NULL) == 0);
	double m = pu.p * (1 + g) / 2 + (1 - pu.p) * (g - 1) / 2;
	CHECK_NEAR(pu.m, m, 1e-12);
	CHECK_NEAR(pu.scale, 1 / m, 1e-10);
	/* d = 5, gamma = 0: E[t | t >= 0] = int_0^1 t 3/4 (1-t^2) dt / (1/2) = 3/8 */
	CHECK(vpa_privunit_init_gamma(&pu, 5, 2, 0, NULL) == 0);
	CHECK_NEAR(pu.m, (2 * pu.p - 1) * 0.375, 1e-12);
}

static void test_optimal_gamma(void)
{
	struct vpa_privunit best, q;
	CHECK(vpa_privunit_init(&best, 1000, 8, NULL) == 0);
	CHECK_NEAR(best.eps, 8, 1e-12);
	CHECK(best.eps_cap < 8 && best.eps0 > 0);
	/* no feasible gamma on a fine grid does better */
	for (double g = 0; g < 0.5; g += 0.0025)
		if (vpa_privunit_init_gamma(&q, 1000, 8, g, NULL) == 0)
			CHECK(q.m <= best.m * (1 + 1e-9));
	/* more budget, less variance; more dimensions, more variance */
	struct vpa_privunit a, b, c;
	CHECK(vpa_privunit_init(&a, 1000, 4, NULL) == 0);
	CHECK(vpa_privunit_init(&b, 1000, 16, NULL) == 0);
	CHECK(vpa_privunit_init(&c, 10000, 16, NULL) == 0);
	CHECK(a.scale > best.scale && best.scale > b.scale && c.scale > b.scale);
}

/* The mean of many outputs is the input (unbiased), every output has norm 1/m. */
static void check_unbiased(size_t d, double eps, size_t n_draw, uint64_t seed)
{
	struct vpa_privunit pu;
	CHECK(vpa_privunit_init(&pu, d, eps, NULL) == 0);
	double *u = malloc(d * sizeof(double)), *z = malloc(d * sizeof(double));
	double *s = calloc(d, sizeof(double)), *s2 = calloc(d, sizeof(double));
	double nn = 0;
	for (size_t i = 0; i < d; i++) {
		u[i] = (double)(i % 3) - 0.7;
		nn += u[i] * u[i];
	}
	for (size_t i = 0; i < d; i++)
		u[i] /= sqrt(nn);
	struct vpa_rng rng;
	vpa_rng_seed(&rng, seed);
	size_t in_cap = 0, bad_norm = 0;
	for (size_t k = 0; k < n_draw; k++) {
		vpa_privunit_apply(&pu, u, z, &rng);
		double dot = 0, zn = 0;
		for (size_t i = 0; i < d; i++) {
			s[i] += z[i];
			s2[i] += z[i] * z[i];
			dot += z[i] * u[i];
			zn += z[i] * z[i];
		}
		if (fabs(sqrt(zn) - pu.scale) > 1e-9 * pu.scale)
			bad_norm++;
		in_cap += dot * pu.m >= pu.gamma - 1e-12;
	}
	CHECK(bad_norm == 0);
	size_t off = 0;
	for (size_t i = 0; i < d; i++) {
		double mean = s[i] / n_draw, var = s2[i] / n_draw - mean * mean;
		double se = sqrt(var / n_draw);
		if (fabs(mean - u[i]) > 5 * se) {
			off++;
			printf("#   d=%zu coordinate %zu: mean %.5f, input %.5f, se %.5f\n", d, i, mean,
			       u[i], se);
		}
	}
	CHECK(off == 0);
	/* the cap is chosen with probability p */
	double pe = (double)in_cap / n_draw, se = sqrt(pu.p * (1 - pu.p) / n_draw);
	CHECK(fabs(pe - pu.p) < 5 * se + 1e-12);
	free(u);
	free(z);
	free(s);
	free(s2);
}

static void test_unbiased(void)
{
	check_unbiased(3, 1.0, 200000, 11);
	check_unbiased(8, 4.0, 100000, 12);
	check_unbiased(64, 10.0, 40000, 13);
}

static void test_scalar(void)
{
	struct vpa_scalar_dp s;
	struct vpa_err err;
	vpa_err_init(&err);
	/* e^eps = 3, k = 2: a = 5/2, b = 3/5 (hand) */
	CHECK(vpa_scalar_dp_init(&s, log(3.0), 1, 2, &err) == 0);
	CHECK_NEAR(s.a, 2.5, 1e-14);
	CHECK_NEAR(s.b, 0.6, 1e-14);
	/* unbiased for several r, and the exact variance */
	struct vpa_rng rng;
	vpa_rng_seed(&rng, 5);
	double rs[] = {0, 0.13, 0.5, 0.77, 1};
	for (int i = 0; i < 5; i++) {
		double sum = 0, sum2 = 0;
		const int n = 400000;
		for (int k = 0; k < n; k++) {
			double v = vpa_scalar_dp_apply(&s, rs[i], &rng);
			sum += v;
			sum2 += v * v;
		}
		double mean = sum / n, var = sum2 / n - mean * mean;
		double tv = vpa_scalar_dp_variance(&s, rs[i]);
		CHECK(fabs(mean - rs[i]) < 5 * sqrt(tv / n));
		CHECK_REL(var, tv, 0.02);
		CHECK(tv <= s.var_max * (1 + 1e-12));
	}
	/* epsilon: P(out = j | r = 0) / P(out = j | r = rmax) is e^eps for j = 0 */
	const int n = 400000;
	int c0 = 0, c1 = 0;
	double lo = -s.a * s.b / s.k; /* the output for J_hat = 0 */
	for (int k = 0; k < n; k++) {
		c0 += fabs(vpa_scalar_dp_apply(&s, 0, &rng) - lo) < 1e-12;
		c1 += fabs(vpa_scalar_dp_apply(&s, 1, &rng) - lo) < 1e-12;
	}
	CHECK_NEAR((double)c0 / n, 3.0 / 5, 0.004);
	CHECK_NEAR((double)c1 / n, 1.0 / 5, 0.004);
	CHECK_NEAR(log((double)c0 / c1), log(3.0), 0.03);
	/* k = 0 picks the k of the smallest worst-case variance */
	CHECK(vpa_scalar_dp_init(&s, 2, 1, 0, &err) == 0);
	struct vpa_scalar_dp t;
	for (unsigned k = 1; k <= 20; k++) {
		CHECK(vpa_scalar_dp_init(&t, 2, 1, k, &err) == 0);
		CHECK(t.var_max >= s.var_max * (1 - 1e-12));
	}
	vpa_err_init(&err);
	CHECK(vpa_scalar_dp_init(&s, 0, 1, 0, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "scalar mechanism needs epsilon > 0, got 0");
}

int main(void)
{
	RUN(test_betainc_exact);
	RUN(test_cap_mass_closed_forms);
	RUN(test_epsilon_bounds);
	RUN(test_scale_closed_form);
	RUN(test_optimal_gamma);
	RUN(test_unbiased);
	RUN(test_scalar);
	return DONE();
}
