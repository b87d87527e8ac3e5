/*
 * tests/unit/test_dexposure.c - d-exposure (Helali et al. 2020) on hand-made
 * confidence lists, ties included.  All expected values by hand.
 */
#include <math.h>

#include "harness.h"
#include "metrics/metrics.h"

static void test_basic(void)
{
	/* class 0: 8 words, canary beats all -> count clamps to 1 -> log2 8 = 3
	 * class 1: 4 words, 2 are >= canary -> -log2(2/4) = 1
	 * class 2: 4 words, all above -> -log2(4/4) = 0 */
	const double r0[8] = {0.1, 0.2, 0.05, 0.3, 0.01, 0.02, 0.03, 0.04};
	const double r1[4] = {0.5, 0.1, 0.7, 0.2};
	const double r2[4] = {0.9, 0.8, 0.95, 0.85};
	struct vpa_dexp_class c[3] = {{0.6, r0, 8}, {0.4, r1, 4}, {0.5, r2, 4}};
	double per[3], mx[3], mean;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_dexposure(c, 3, per, mx, &mean, &err) == 0);
	CHECK(per[0] == 3 && per[1] == 1 && per[2] == 0);
	CHECK(mx[0] == 3 && mx[1] == 2 && mx[2] == 2);
	CHECK_NEAR(mean, 4.0 / 3, 1e-15);
	for (int i = 0; i < 3; i++)
		CHECK(per[i] <= mx[i] && per[i] >= 0);
}

static void test_ties(void)
{
	/* ties count against the canary: 0.5 tied with two words, one higher
	 * -> 3 of 6 are >= -> 1 bit (strict > would give log2 6) */
	const double r[6] = {0.5, 0.5, 0.7, 0.1, 0.2, 0.3};
	struct vpa_dexp_class c = {0.5, r, 6};
	double per, mx, mean;
	CHECK(vpa_dexposure(&c, 1, &per, &mx, &mean, NULL) == 0);
	CHECK(per == 1);
	CHECK(mean == 1);
	CHECK(mx == log2(6.0));
	/* all equal: no exposure */
	const double e[3] = {0.2, 0.2, 0.2};
	struct vpa_dexp_class ce = {0.2, e, 3};
	CHECK(vpa_dexposure(&ce, 1, &per, &mx, &mean, NULL) == 0 && per == 0);
	/* a single reference word the canary beats: log2 1 = 0, clamp, not inf */
	const double one[1] = {0.1};
	struct vpa_dexp_class c1 = {0.9, one, 1};
	CHECK(vpa_dexposure(&c1, 1, &per, &mx, &mean, NULL) == 0 && per == 0 && mx == 0);
}

static void test_errors(void)
{
	const double r[2] = {0.1, 0.2};
	struct vpa_dexp_class c[2] = {{0.5, r, 2}, {0.5, r, 0}};
	double per[2], mx[2], mean;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_dexposure(c, 2, per, mx, &mean, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "class 2") != NULL);
	CHECK(vpa_dexposure(c, 0, per, mx, &mean, NULL) == VPA_EINPUT);
	const double bad[2] = {0.1, NAN};
	struct vpa_dexp_class cb = {0.5, bad, 2};
	CHECK(vpa_dexposure(&cb, 1, per, mx, &mean, NULL) == VPA_EINPUT);
	struct vpa_dexp_class cn = {NAN, r, 2};
	CHECK(vpa_dexposure(&cn, 1, per, mx, &mean, NULL) == VPA_EINPUT);
}

int main(void)
{
	RUN(test_basic);
	RUN(test_ties);
	RUN(test_errors);
	return DONE();
}
