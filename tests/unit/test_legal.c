/*
 * tests/unit/test_legal.c - pi_link and pi_sing (metrics/legal.c) against a
 * hand-computed 4-speaker case, literal subset sampling (random candidate
 * sets / random N-sets, agreement within 4.5 standard errors of the
 * sampling), brute-force enumeration of subsets, the trivial-predicate check
 * (e^-1), a perfect attacker, the N' = 2 <-> pairwise-ranking identity, and
 * published Student t quantiles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "metrics/metrics.h"

static void test_hand_4(void)
{
	/* 4 test items (one per speaker) x 4 enrolments, truth = the row index */
	const double S[16] = {
		0.9, 0.1, 0.2, 0.3, /* m = 0 */
		0.5, 0.4, 0.6, 0.7, /* m = 3 */
		0.8, 0.1, 0.5, 0.2, /* m = 1 (0.8 beats 0.5) */
		0.3, 0.6, 0.2, 0.6, /* m = 0: the tie at 0.6 goes to the true speaker */
	};
	size_t m[4];
	uint32_t spk[4] = {0, 1, 2, 3};
	for (size_t i = 0; i < 4; i++)
		m[i] = vpa_pilink_beaten(S + 4 * i, 4, i);
	CHECK(m[0] == 0 && m[1] == 3 && m[2] == 1 && m[3] == 0);
	/* by hand: m = 1 of n = 4: N' = 2 -> C(2,1)/C(3,1) = 2/3; N' = 3 ->
	 * C(2,2)/C(3,2) = 1/3 (only the pair {1, 3} of {0, 1, 3} avoids 0);
	 * N' = 4 -> 0 */
	CHECK_NEAR(vpa_pilink_prob(4, 1, 2), 2.0 / 3, 1e-15);
	CHECK_NEAR(vpa_pilink_prob(4, 1, 3), 1.0 / 3, 1e-15);
	CHECK(vpa_pilink_prob(4, 1, 4) == 0);
	CHECK(vpa_pilink_prob(4, 3, 2) == 0);
	CHECK(vpa_pilink_prob(4, 0, 4) == 1);
	CHECK(vpa_pilink_prob(4, 2, 1) == 1);
	CHECK(isnan(vpa_pilink_prob(4, 0, 5)));
	struct vpa_legal_est e;
	struct vpa_err err;
	vpa_err_init(&err);
	const double want[5] = {NAN, 1, 8.0 / 12, 7.0 / 12, 0.5};
	for (size_t np = 1; np <= 4; np++) {
		CHECK(vpa_pilink(m, spk, 4, 4, 4, np, 0.95, &e, &err) == 0);
		CHECK_NEAR(e.value, want[np], 1e-15);
		CHECK_NEAR(e.chance, 1.0 / (double)np, 1e-15);
	}
	/* the interval at N' = 2 by hand: values 1, 0, 2/3, 1, mean 2/3,
	 * cluster deviations 1/3, -2/3, 0, 1/3 -> ss = 6/9; CR1 se =
	 * sqrt(4/3 * 6/9) / 4; t with 3 degrees of freedom */
	CHECK(vpa_pilink(m, spk, 4, 4, 4, 2, 0.95, &e, &err) == 0);
	double se = sqrt(4.0 / 3 * 6.0 / 9) / 4, t = vpa_t_quantile(0.975, 3);
	CHECK_NEAR(e.lo, fmax(0, 2.0 / 3 - t * se), 1e-12);
	CHECK_NEAR(e.hi, fmin(1, 2.0 / 3 + t * se), 1e-12);
	CHECK(e.n_spk == 4 && e.n_items == 4);
	/* bad input */
	CHECK(vpa_pilink(m, spk, 4, 4, 4, 5, 0.95, &e, &err) != 0);
	CHECK(strstr(err.msg, "N' = 5") != NULL);
	vpa_err_init(&err);
	CHECK(vpa_pilink(m, spk, 0, 4, 4, 2, 0.95, &e, &err) != 0);
}

static void test_t_quantile(void)
{
	/* published two-sided 95% points (any t table) */
	CHECK_NEAR(vpa_t_quantile(0.975, 3), 3.182446, 0.03);
	CHECK_NEAR(vpa_t_quantile(0.975, 5), 2.570582, 4e-3);
	CHECK_NEAR(vpa_t_quantile(0.975, 10), 2.228139, 3e-4);
	CHECK_NEAR(vpa_t_quantile(0.975, 30), 2.042272, 1e-5);
	CHECK_NEAR(vpa_t_quantile(0.995, 20), 2.845340, 2e-3);
	CHECK_NEAR(vpa_t_quantile(0.975, 1e9), 1.959964, 1e-6);
	CHECK(isnan(vpa_t_quantile(1, 3)));
}

/* n_items x n scores with a speaker signal of strength `sig` */
static double *random_matrix(struct vpa_rng *r, size_t ni, size_t n, const uint32_t *truth,
			     double sig)
{
	double *S = malloc(ni * n * sizeof(double));
	for (size_t i = 0; i < ni; i++)
		for (size_t j = 0; j < n; j++)
			S[i * n + j] = vpa_rng_normal(r) + (j == truth[i] ? sig : 0);
	return S;
}

static void test_literal_sampling(void)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, 29);
	const size_t n = 60, ni = 180;
	uint32_t truth[180];
	size_t m[180];
	for (size_t i = 0; i < ni; i++)
		truth[i] = (uint32_t)(i % n);
	double *S = random_matrix(&r, ni, n, truth, 1.5);
	/* a few exact ties with the true score, which must go to the true one */
	for (size_t i = 0; i < ni; i += 7)
		S[i * n + (truth[i] + 1) % n] = S[i * n + truth[i]];
	for (size_t i = 0; i < ni; i++)
		m[i] = vpa_pilink_beaten(S + i * n, n, truth[i]);
	const size_t grid[5] = {2, 5, 10, 30, 60};
	size_t *idx = malloc(n * sizeof(size_t));
	struct vpa_err err;
	vpa_err_init(&err);
	for (size_t g = 0; g < 5; g++) {
		size_t np = grid[g], K = 200, succ = 0, tot = 0;
		for (size_t i = 0; i < ni; i++)
			for (size_t k = 0; k < K; k++) {
				/* N'-1 others without replacement (partial Fisher-Yates) */
				size_t c = 0;
				for (size_t j = 0; j < n; j++)
					if (j != truth[i])
						idx[c++] = j;
				int ok = 1;
				for (size_t d = 0; d + 1 < np; d++) {
					size_t pick = d + (size_t)vpa_rng_below(&r, c - d);
					size_t tmp = idx[d];
					idx[d] = idx[pick];
					idx[pick] = tmp;
					ok &= !(S[i * n + idx[d]] > S[i * n + truth[i]]);
				}
				succ += (size_t)ok;
				tot++;
			}
		struct vpa_legal_est e;
		CHECK(vpa_pilink(m, truth, ni, n, n, np, 0.95, &e, &err) == 0);
		double lit = (double)succ / (double)tot;
		double sd = sqrt(e.value * (1 - e.value) / (double)tot);
		CHECK(fabs(lit - e.value) <= 4.5 * sd + 1e-12);
		if (np == n) /* all candidates: exactly the items nobody beats */
			CHECK(lit == e.value);
		CHECK(e.lo <= e.value && e.value <= e.hi);
	}
	/* N' = 2 is the pairwise ranking: the fraction of (item, impostor)
	 * pairs the true enrolment does not lose */
	size_t won = 0;
	for (size_t i = 0; i < ni; i++)
		for (size_t j = 0; j < n; j++)
			won += j != truth[i] && !(S[i * n + j] > S[i * n + truth[i]]);
	struct vpa_legal_est e2;
	CHECK(vpa_pilink(m, truth, ni, n, n, 2, 0, &e2, &err) == 0);
	CHECK_NEAR(e2.value, (double)won / (double)(ni * (n - 1)), 1e-14);
	CHECK(isnan(e2.lo)); /* level 0: no interval */
	/* a perfect attacker: pi_link 1 at every N' */
	for (size_t i = 0; i < ni; i++)
		S[i * n + truth[i]] = 100;
	for (size_t i = 0; i < ni; i++)
		m[i] = vpa_pilink_beaten(S + i * n, n, truth[i]);
	for (size_t g = 0; g < 5; g++) {
		CHECK(vpa_pilink(m, truth, ni, n, n, grid[g], 0.95, &e2, &err) == 0);
		CHECK(e2.value == 1 && e2.lo == 1 && e2.hi == 1);
	}
	/* a huge set: log-space terms stay finite where C() overflows */
	double direct = 1;
	for (int j = 0; j < 10; j++) /* C(a,k)/C(b,k) = prod_j (b - k - j) / (b - j) */
		direct *= (999999.0 - 499999 - j) / (999999.0 - j);
	CHECK_REL(vpa_pilink_prob(1000000, 10, 500000), direct, 1e-12);
	free(idx);
	free(S);
}

static void test_isolation(void)
{
	/* everyone fires with 1/N: exactly the baseline */
	double p[200], work[2 * 201];
	for (size_t N = 1; N <= 50; N += 7) {
		for (size_t i = 0; i < 200; i++)
			p[i] = 1.0 / (double)N;
		CHECK_NEAR(vpa_pising_isolation(p, 200, N, work), vpa_pising_baseline(N), 1e-12);
	}
	CHECK_NEAR(vpa_pising_baseline(2), 0.5, 1e-15);
	CHECK_NEAR(vpa_pising_baseline(1000000), exp(-1), 1e-6);
	/* brute force over every 3-subset of 6 speakers */
	const double q[6] = {0.9, 0.05, 0.3, 0.0, 1.0, 0.42};
	double sum = 0;
	int cnt = 0;
	for (int a = 0; a < 6; a++)
		for (int b = a + 1; b < 6; b++)
			for (int c = b + 1; c < 6; c++) {
				int s[3] = {a, b, c};
				double one = 0;
				for (int k = 0; k < 3; k++) {
					double t = q[s[k]];
					for (int l = 0; l < 3; l++)
						if (l != k)
							t *= 1 - q[s[l]];
					one += t;
				}
				sum += one;
				cnt++;
			}
	CHECK(cnt == 20);
	CHECK_NEAR(vpa_pising_isolation(q, 6, 3, work), sum / 20, 1e-15);
	CHECK(isnan(vpa_pising_isolation(q, 6, 7, work)));
	/* threshold: 10 distinct scores, N = 5 -> fires on the top 2 */
	double c[10] = {3, 9, 1, 7, 5, 2, 8, 4, 6, 0};
	double tau = vpa_pising_threshold(c, 10, 5);
	CHECK(tau == 7);
	double c2[3] = {1, 2, 3};
	CHECK(vpa_pising_threshold(c2, 3, 1) == -INFINITY); /* N = 1: fires on all */
}

/* ns speakers, `per` calibration and `per` test items each, n_enr = ns */
static void pising_case(double sig, size_t ns, size_t per, const size_t *Ns, size_t nN,
			int literal)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, 2025 + (uint64_t)ns);
	size_t nc = ns * per, nt = ns * per;
	uint32_t *cs = malloc(nc * sizeof(uint32_t)), *ts = malloc(nt * sizeof(uint32_t));
	for (size_t i = 0; i < nc; i++)
		cs[i] = ts[i] = (uint32_t)(i / per);
	double *C = malloc(ns * nc * sizeof(double)), *T = malloc(ns * nt * sizeof(double));
	for (size_t j = 0; j < ns; j++) {
		for (size_t i = 0; i < nc; i++)
			C[j * nc + i] = vpa_rng_normal(&r) + (cs[i] == j ? sig : 0);
		for (size_t i = 0; i < nt; i++)
			T[j * nt + i] = vpa_rng_normal(&r) + (ts[i] == j ? sig : 0);
	}
	struct vpa_legal_est out[8];
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_pising(C, cs, nc, T, ts, nt, ns, ns, Ns, nN, 0.95, out, &err) == 0);
	for (size_t g = 0; g < nN; g++) {
		CHECK(out[g].n_set == Ns[g]);
		CHECK(out[g].lo <= out[g].value && out[g].value <= out[g].hi);
		if (sig == 0 && Ns[g] >= 20) /* no information: isolates at the baseline */
			CHECK_NEAR(out[g].value, out[g].chance, 0.02);
		if (!literal)
			continue;
		/* literally: an enrolment, its threshold from the calibration row,
		 * N distinct speakers and a conversation of each */
		double *c = malloc(nc * sizeof(double));
		size_t *sp = malloc(ns * sizeof(size_t));
		size_t K = 40000, hit = 0;
		for (size_t k = 0; k < K; k++) {
			size_t j = (size_t)vpa_rng_below(&r, ns);
			memcpy(c, C + j * nc, nc * sizeof(double));
			double tau = vpa_pising_threshold(c, nc, Ns[g]);
			for (size_t s = 0; s < ns; s++)
				sp[s] = s;
			size_t fired = 0;
			for (size_t d = 0; d < Ns[g]; d++) {
				size_t pick = d + (size_t)vpa_rng_below(&r, ns - d);
				size_t tmp = sp[d];
				sp[d] = sp[pick];
				sp[pick] = tmp;
				size_t u = sp[d] * per + (size_t)vpa_rng_below(&r, per);
				fired += T[j * nt + u] > tau;
			}
			hit += fired == 1;
		}
		double lit = (double)hit / (double)K;
		double sd = sqrt(out[g].value * (1 - out[g].value) / (double)K);
		CHECK(fabs(lit - out[g].value) <= 4.5 * sd);
		free(c);
		free(sp);
	}
	/* N above the test speakers */
	size_t big = ns + 1;
	CHECK(vpa_pising(C, cs, nc, T, ts, nt, ns, ns, &big, 1, 0.95, out, &err) != 0);
	CHECK(strstr(err.msg, "(the test speakers)") != NULL);
	free(cs);
	free(ts);
	free(C);
	free(T);
}

static void test_pising(void)
{
	const size_t small[3] = {2, 5, 10};
	pising_case(2.0, 30, 4, small, 3, 1); /* a linking signal, checked literally */
	pising_case(0.0, 30, 4, small, 3, 1);
	const size_t large[2] = {20, 50};
	pising_case(0.0, 400, 3, large, 2, 0); /* no information: e^-1-ish */
}

int main(void)
{
	RUN(test_hand_4);
	RUN(test_t_quantile);
	RUN(test_literal_sampling);
	RUN(test_isolation);
	RUN(test_pising);
	return DONE();
}
