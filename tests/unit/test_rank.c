/*
 * tests/unit/test_rank.c - closed-set identification: rank with half-counted
 * ties, normalised rank, top-k, chance rank.  All expected values by hand.
 */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "metrics/metrics.h"

static void test_rank(void)
{
	const double s[5] = {0.1, 0.9, 0.5, 0.7, 0.3};
	CHECK(vpa_rank(s, 5, 1) == 1); /* the best */
	CHECK(vpa_rank(s, 5, 3) == 2);
	CHECK(vpa_rank(s, 5, 0) == 5); /* the worst */
	/* ties count half: 0.5 tied with two others, one higher -> 1 + 1 + 2/2 */
	const double t[5] = {0.5, 0.9, 0.5, 0.5, 0.1};
	CHECK(vpa_rank(t, 5, 0) == 3);
	CHECK(vpa_rank(t, 5, 2) == 3);
	/* everyone equal: chance rank (n+1)/2 */
	const double e[4] = {2, 2, 2, 2};
	CHECK(vpa_rank(e, 4, 3) == 2.5);
	CHECK(vpa_rank(e, 1, 0) == 1);
	CHECK(isnan(vpa_rank(e, 4, 4)));
}

static void test_identification(void)
{
	/* 3 probes x 4 candidates */
	const double sc[12] = {
		0.9, 0.1, 0.2, 0.3, /* truth 0: rank 1 */
		0.5, 0.4, 0.6, 0.7, /* truth 1: rank 4 */
		0.2, 0.2, 0.1, 0.0, /* truth 1: tied with one higher-or-equal -> 1.5 */
	};
	const size_t truth[3] = {0, 1, 1};
	struct vpa_ident id;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_identification(sc, 3, 4, truth, &id, &err) == 0);
	CHECK(id.n_probes == 3 && id.population == 4);
	CHECK_NEAR(id.mean_rank, (1 + 4 + 1.5) / 3, 1e-15);
	CHECK_NEAR(id.mean_norm_rank, (1 + 4 + 1.5) / 12, 1e-15);
	CHECK(id.chance_rank == 2.5);
	CHECK_NEAR(id.top1, 1.0 / 3, 1e-15); /* the tied 1.5 is not top-1 */
	CHECK(id.top5 == 1 && id.top10 == 1);
}

static void test_identification_random_is_chance(void)
{
	/* random scores: mean rank near (N+1)/2, top-1 near 1/N */
	size_t np = 4000, pop = 50;
	double *sc = malloc(np * pop * sizeof *sc);
	size_t *truth = malloc(np * sizeof *truth);
	struct vpa_rng r;
	vpa_rng_seed(&r, 3);
	for (size_t i = 0; i < np * pop; i++)
		sc[i] = vpa_rng_uniform(&r);
	for (size_t p = 0; p < np; p++)
		truth[p] = vpa_rng_below(&r, pop);
	struct vpa_ident id;
	CHECK(vpa_identification(sc, np, pop, truth, &id, NULL) == 0);
	/* sd of a uniform rank on 1..50 is 14.4; of the mean over 4000: 0.23 */
	CHECK_NEAR(id.mean_rank, 25.5, 1.0);
	CHECK_NEAR(id.top1, 0.02, 0.01);
	CHECK_NEAR(id.top10, 0.2, 0.03);
	free(sc);
	free(truth);
}

static void test_identification_errors(void)
{
	const double sc[4] = {1, 2, 3, 4};
	const size_t bad[1] = {4}, ok[1] = {0};
	struct vpa_ident id;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_identification(sc, 1, 4, bad, &id, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "outside the population") != NULL);
	CHECK(vpa_identification(sc, 0, 4, ok, &id, NULL) == VPA_EINPUT);
	CHECK(vpa_identification(sc, 1, 0, ok, &id, NULL) == VPA_EINPUT);
	const double nan4[4] = {1, NAN, 3, 4};
	CHECK(vpa_identification(nan4, 1, 4, ok, &id, NULL) == VPA_EINPUT);
}

int main(void)
{
	RUN(test_rank);
	RUN(test_identification);
	RUN(test_identification_random_is_chance);
	RUN(test_identification_errors);
	return DONE();
}
