/* tests/unit/test_apcluster.c - Affinity Propagation on hand-made examples. */
#include "targets/anon.h"
#include "harness.h"

#include <stdlib.h>

/* Three tight groups of 5 points (a centre and 4 neighbours at distance 1)
   around (0,0), (20,0), (0,20); similarity = minus the squared distance as in
   Frey & Dueck. */
static void groups(double *pts)
{
	const double c[3][2] = {{0, 0}, {20, 0}, {0, 20}};
	const double off[5][2] = {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}};
	for (int g = 0; g < 3; g++)
		for (int k = 0; k < 5; k++) {
			pts[(g * 5 + k) * 2] = c[g][0] + off[k][0];
			pts[(g * 5 + k) * 2 + 1] = c[g][1] + off[k][1];
		}
}

static void sim_matrix(const double *p, size_t n, double *s)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			double dx = p[2 * i] - p[2 * j], dy = p[2 * i + 1] - p[2 * j + 1];
			s[i * n + j] = -(dx * dx + dy * dy);
		}
}

static void test_three_groups(void)
{
	double p[30], s[225];
	uint32_t label[15], ex[15];
	size_t K = 0;
	int it = 0, conv = 0;
	struct vpa_ap_opts o;
	struct vpa_err err;
	vpa_err_init(&err);
	groups(p);
	sim_matrix(p, 15, s);
	vpa_ap_opts_init(&o);
	CHECK(vpa_apcluster(s, 15, &o, label, ex, &K, &it, &conv, &err) == 0);
	CHECK(K == 3);
	CHECK(conv == 1);
	CHECK(it < o.max_iter);
	/* the centres are the exemplars (they minimise the within-group squared distances) */
	CHECK(ex[0] == 0 && ex[1] == 5 && ex[2] == 10);
	for (int i = 0; i < 15; i++)
		CHECK(label[i] == (uint32_t)(i / 5));
}

static void test_damping_and_property(void)
{
	/* 36 points on a line in 4 clumps of 9 (unique medoids: the middle points
	   4, 13, 22, 31); heavier damping reaches the same exemplars */
	double p[72], s[1296];
	uint32_t l1[36], e1[36], l2[36], e2[36];
	size_t K1, K2;
	struct vpa_ap_opts o;
	struct vpa_err err;
	vpa_err_init(&err);
	for (int i = 0; i < 36; i++) {
		p[2 * i] = (i / 9) * 50 + (i % 9) * 0.5;
		p[2 * i + 1] = 0;
	}
	sim_matrix(p, 36, s);
	vpa_ap_opts_init(&o);
	CHECK(vpa_apcluster(s, 36, &o, l1, e1, &K1, NULL, NULL, &err) == 0);
	o.damping = 0.9;
	o.max_iter = 1000;
	CHECK(vpa_apcluster(s, 36, &o, l2, e2, &K2, NULL, NULL, &err) == 0);
	CHECK(K1 == 4 && K2 == 4);
	CHECK(e1[0] == 4 && e1[1] == 13 && e1[2] == 22 && e1[3] == 31);
	for (size_t k = 0; k < K1 && k < K2; k++)
		CHECK(e1[k] == e2[k]);
	/* every point joins its most similar exemplar; clusters never cross clumps */
	for (int i = 0; i < 36; i++) {
		double best = -1e300;
		for (size_t k = 0; k < K1; k++)
			if (s[i * 36 + e1[k]] > best)
				best = s[i * 36 + e1[k]];
		if (e1[l1[i]] != (uint32_t)i)
			CHECK(s[i * 36 + e1[l1[i]]] == best);
		CHECK(e1[l1[i]] / 9 == (uint32_t)i / 9);
	}
	/* a very low preference gives fewer clusters than the median */
	o.damping = 0.5;
	o.pref_median = 0;
	o.preference = -1e5;
	CHECK(vpa_apcluster(s, 36, &o, l2, e2, &K2, NULL, NULL, &err) == 0);
	CHECK(K2 < K1);
}

static void test_errors(void)
{
	double s[4] = {0, -1, -1, 0};
	uint32_t l[2], e[2];
	size_t K;
	struct vpa_ap_opts o;
	struct vpa_err err;
	vpa_ap_opts_init(&o);
	o.damping = 1.0;
	vpa_err_init(&err);
	CHECK(vpa_apcluster(s, 2, &o, l, e, &K, NULL, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "affinity propagation: damping must be in [0.5, 1), got 1");
	vpa_ap_opts_init(&o);
	s[1] = NAN;
	vpa_err_init(&err);
	CHECK(vpa_apcluster(s, 2, &o, l, e, &K, NULL, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "affinity propagation: similarity (0, 1) is not finite");
	vpa_err_init(&err);
	CHECK(vpa_apcluster(s, 1, &o, l, e, &K, NULL, NULL, &err) == 0);
	CHECK(K == 1 && l[0] == 0 && e[0] == 0);
}

int main(void)
{
	RUN(test_three_groups);
	RUN(test_damping_and_property);
	RUN(test_errors);
	return DONE();
}
