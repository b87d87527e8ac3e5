/*
 * tests/unit/test_metrics_sv.c - the score-set (verification) metrics:
 * PAV, ROCCH-EER, sweep EER, Cllr, Cllr_min, min DCF, DET, linkability,
 * ZEBRA, everything-at-once, and the golden sets of tests/golden/metrics/
 * (expected values from an independent numpy / scikit-learn computation).
 * Sorting and the bootstrap have their own files (test_metrics_sort.c,
 * test_metrics_ci.c).
 */
#include "metrics/metrics.h"
#include "tests/unit/harness.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

static double *sorted_copy(const double *x, size_t n)
{
	double *y = malloc((n ? n : 1) * sizeof *y);
	memcpy(y, x, n * sizeof *y);
	vpa_sort_scores(y, NULL, n);
	return y;
}

/* a score set of sorted copies; free with set_free */
static struct vpa_scores set_of(const double *tar, size_t nt, const double *non, size_t nn)
{
	struct vpa_scores s = { sorted_copy(tar, nt), nt, sorted_copy(non, nn), nn, NULL, NULL };
	return s;
}

static void set_free(struct vpa_scores *s)
{
	free((void *)s->tar);
	free((void *)s->non);
}

static struct vpa_metrics all_of(const struct vpa_scores *s)
{
	struct vpa_metrics m;
	struct vpa_err e;
	vpa_err_init(&e);
	int rc = vpa_metrics_all(s, NULL, &m, &e);
	CHECK(rc == 0);
	if (rc)
		printf("#   %s\n", e.msg);
	return m;
}

/* deterministic N(0,1) draws (the test must not depend on base/ RNG changes) */
static uint64_t lcg = 88172645463325252ull;
static double unif(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return ((double)(lcg >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

/* ---- hand-computed tiny case -------------------------------------------- */

/*
 * tar = {2, 4, 5}, non = {1, 3, 6}.
 *
 * PAV (ties pooled; merged order 1n 2t 3n 4t 5t 6n): {1} (0t,1n) p=0;
 * {2} (1,0) p=1; {3} (0,1) violates -> {2,3} (1,1) p=1/2; {4,5} (2,0) p=1;
 * {6} (0,1) violates -> {4,5,6} (2,1) p=2/3 > 1/2.  Blocks: (0,1) (1,1) (2,1).
 *
 * ROCCH points (P_fa, P_miss): (1,0) (2/3,0) (1/3,1/3) (0,1): the hull goes
 * through (1/3,1/3), so ROCCH-EER = 1/3; threshold between blocks 2 and 3:
 * (3 + 4)/2 = 3.5.
 *
 * Sweep, thresholds 6,5,4,...: t=6: P_miss 1, P_fa 1/3 (|d| = 2/3);
 * t=5: 2/3, 1/3 (1/3); t=4: 1/3, 1/3 (0) -> sweep EER 1/3 at t = 4.
 *
 * Cllr: mean_tar log2(1+e^-s) = (0.183119 + 0.026237 + 0.009691)/3 =
 * 0.073016; mean_non log2(1+e^s) = (1.894615 + 4.398209 + 8.659694)/3 =
 * 4.984173; Cllr = (0.073016 + 4.984173)/2 = 2.528592.
 *
 * Cllr_min: LLR = log(t/n) - log(3/3): block 1 -inf (cost 0), block 2 0
 * (1 bit for its target and for its non-target), block 3 log 2 (each target
 * log2(3/2), the non-target log2 3): 1/2 [(1 + 2 log2 1.5)/3 + (1 + log2 3)/3]
 * = 1/2 [0.723308 + 0.861654] = 0.792481.
 *
 * min DCF (p = 0.01): "accept nothing" costs 0.01/0.01 = 1; the best real
 * threshold, t = 6, costs (0.01*1 + 0.99/3)/0.01 = 34: min DCF = 1.
 *
 * ZEBRA: Z(a) = 1/4 + (a - b)/(2 b^2), b = e^a - 1.  Non-target of block 1:
 * Z(+inf) = 1/4; block 2: Z(0) = 0 twice; block 3: targets Z(ln 2) =
 * 1/4 + (ln 2 - 1)/2 = 0.096574, non-target Z(-ln 2) = 1/4 + (-ln 2 + 1/2)/
 * (2 * 1/4) = -0.136294.  D_ECE = [(2*0.096574)/3 + (1/4 - 0.136294)/3]/ln 2
 * = 0.147565 bits.  Laplace PAV: (1,0),(0,1) at -inf pool with {1}: (1,2);
 * (1,1) {2,3}; {4,5,6} with the +inf dummies: (3,2).  LLRs log(1/2), 0,
 * log(3/2): worst |LLR| = ln 2, log10 = 0.30103, tag A.
 *
 * Linkability: 3 mated scores < 10: undefined.
 */
static void test_tiny_hand(void)
{
	const double tar[] = { 4, 2, 5 }, non[] = { 6, 1, 3 };
	struct vpa_scores s = set_of(tar, 3, non, 3);
	struct vpa_pav p;
	struct vpa_err e;
	vpa_err_init(&e);

	CHECK(vpa_pav_fit(&s, 0, &p, &e) == 0);
	CHECK(p.n_blocks == 3);
	if (p.n_blocks == 3) {
		CHECK(p.b[0].t == 0 && p.b[0].n == 1 && p.b[0].lo == 1 && p.b[0].hi == 1);
		CHECK(p.b[1].t == 1 && p.b[1].n == 1 && p.b[1].lo == 2 && p.b[1].hi == 3);
		CHECK(p.b[2].t == 2 && p.b[2].n == 1 && p.b[2].lo == 4 && p.b[2].hi == 6);
		CHECK(vpa_pav_llr(&p, 0) == -INFINITY);
		CHECK_NEAR(vpa_pav_llr(&p, 1), 0, 1e-15);
		CHECK_NEAR(vpa_pav_llr(&p, 2), M_LN2, 1e-15);
	}
	double thr;
	CHECK_NEAR(vpa_eer_rocch(&p, &thr), 1.0 / 3, 1e-15);
	CHECK(thr == 3.5);
	CHECK_NEAR(vpa_cllr_min(&p), 0.5 * ((1 + 2 * log2(1.5)) / 3 + (1 + log2(3)) / 3), 1e-15);
	vpa_pav_release(&p);

	CHECK_NEAR(vpa_eer_sweep(&s, &thr), 1.0 / 3, 1e-15);
	CHECK(thr == 4);
	CHECK_NEAR(vpa_cllr(&s), 2.528592, 5e-7);
	CHECK_NEAR(vpa_min_dcf(&s, 0.01, 1, 1, &thr), 1, 1e-15);
	CHECK(thr > 6); /* accept nothing */

	struct vpa_zebra z;
	CHECK(vpa_zebra(&s, &z, &e) == 0);
	CHECK_NEAR(z.dece, 0.147565, 5e-7);
	CHECK_NEAR(z.log10_lr_worst, M_LN2 / M_LN10, 1e-15);
	CHECK(z.category == 'A');

	struct vpa_linkability l;
	CHECK(vpa_linkability(&s, 1, 0, &l, &e) == 0);
	CHECK(l.defined == 0 && isnan(l.dsys) && l.n_bins == 0);
	vpa_linkability_release(&l);

	struct vpa_metrics m = all_of(&s);
	CHECK(m.linkability_defined == 0 && isnan(m.linkability));
	CHECK(m.tied_fraction == 0);
	set_free(&s);
}

/*
 * Linkability by hand, 30 mated scores -> 3 bins over [0, 3], edges 0 1 2 3:
 *   mated 10x1, 10x2, 10x3: 1 is ON the edge 1 -> bin [1,2); 2 -> [2,3];
 *     3 = max -> last (closed) bin: counts (0, 10, 20), y1 = (0, 1/3, 2/3)
 *   non 20x0, 10x3: counts (20, 0, 10), y2 = (2/3, 0, 1/3)
 *   D: bin 0 LR = 0 -> 0; bin 1 y2 = 0 < y1 -> 1; bin 2 LR = 2 ->
 *     2*2/3 - 1 = 1/3.  D*y1 = (0, 1/3, 2/9) at centres 0.5 1.5 2.5.
 *   trapz = (0 + 1/3)/2 + (1/3 + 2/9)/2 = 4/9.
 *   omega = 2: bin 2: 2*4/5 - 1 = 3/5; trapz = 1/6 + (1/3 + 2/5)/2 = 8/15.
 * 20 mated (same range) -> 2 bins, edges 0 1.5 3: mated 10x2 + 10x3 all in
 * bin 1, non 20x0 in bin 0: D = (0, 1), y1 = (0, 1/1.5 = 2/3) ...
 */
static void test_linkability_hand(void)
{
	double tar[30], non[30];
	for (int i = 0; i < 10; i++) {
		tar[i] = 1;
		tar[10 + i] = 2;
		tar[20 + i] = 3;
		non[i] = non[10 + i] = 0;
		non[20 + i] = 3;
	}
	struct vpa_scores s = { tar, 30, non, 30, NULL, NULL };
	struct vpa_linkability l;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_linkability(&s, 1, 0, &l, &e) == 0);
	CHECK(l.defined == 1 && l.n_bins == 3);
	if (l.n_bins == 3) {
		CHECK_NEAR(l.p_mated[0], 0, 0);
		CHECK_NEAR(l.p_mated[1], 1.0 / 3, 1e-15);
		CHECK_NEAR(l.p_mated[2], 2.0 / 3, 1e-15);
		CHECK_NEAR(l.p_non[0], 2.0 / 3, 1e-15);
		CHECK_NEAR(l.p_non[1], 0, 0);
		CHECK_NEAR(l.d_local[1], 1, 0);
		CHECK_NEAR(l.d_local[2], 1.0 / 3, 1e-15);
		CHECK_NEAR(l.centers[0], 0.5, 0);
		CHECK_NEAR(l.centers[2], 2.5, 0);
	}
	CHECK_NEAR(l.dsys, 4.0 / 9, 1e-15);
	vpa_linkability_release(&l);
	CHECK(vpa_linkability(&s, 2, 0, &l, &e) == 0);
	CHECK_NEAR(l.dsys, 8.0 / 15, 1e-15);
	vpa_linkability_release(&l);

	/* 20 mated -> 2 bins: D = (0, 1), y1 = (0, 2/3), centres 0.75 2.25:
	 * trapz = 1.5 * (0 + 2/3)/2 = 1/2 (separated, yet only 1/2: the
	 * reference integrates between bin centres) */
	struct vpa_scores s2 = { tar + 10, 20, non, 20, NULL, NULL };
	CHECK(vpa_linkability(&s2, 1, 0, &l, &e) == 0);
	CHECK(l.n_bins == 2);
	CHECK_NEAR(l.dsys, 0.5, 1e-15);
	vpa_linkability_release(&l);

	/* 10..19 mated: one bin, and trapz over one point is 0 (reference quirk) */
	struct vpa_scores s3 = { tar + 10, 12, non, 20, NULL, NULL };
	CHECK(vpa_linkability(&s3, 1, 0, &l, &e) == 0);
	CHECK(l.defined == 1 && l.n_bins == 1 && l.dsys == 0);
	vpa_linkability_release(&l);

	/* 9 mated: undefined, never 0 */
	struct vpa_scores s4 = { tar + 10, 9, non, 20, NULL, NULL };
	CHECK(vpa_linkability(&s4, 1, 0, &l, &e) == 0);
	CHECK(l.defined == 0 && isnan(l.dsys));
	vpa_linkability_release(&l);

	/* all scores equal: no information, 0 */
	double same[12] = { 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5 };
	struct vpa_scores s5 = { same, 12, same, 12, NULL, NULL };
	CHECK(vpa_linkability(&s5, 1, 0, &l, &e) == 0);
	CHECK(l.defined == 1 && l.dsys == 0);
	vpa_linkability_release(&l);
}

/* ---- golden sets -------------------------------------------------------- */

struct golden {
	double *tar, *non; /* unsorted, file order */
	size_t nt, nn;
	char key[32][32];
	char val[32][64];
	int nkeys;
};

static int golden_load(const char *name, struct golden *g)
{
	char path[256];
	memset(g, 0, sizeof *g);
	snprintf(path, sizeof path, "tests/golden/metrics/%s.scores", name);
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("#   cannot open %s (run from the repository root)\n", path);
		return -1;
	}
	int c;
	double v;
	size_t cap = 0;
	while (fscanf(f, "%d %lf", &c, &v) == 2) {
		if (g->nt + g->nn >= cap) {
			cap = cap ? 2 * cap : 256;
			g->tar = realloc(g->tar, cap * sizeof(double));
			g->non = realloc(g->non, cap * sizeof(double));
		}
		if (c == 1)
			g->tar[g->nt++] = v;
		else
			g->non[g->nn++] = v;
	}
	fclose(f);
	snprintf(path, sizeof path, "tests/golden/metrics/%s.expected", name);
	f = fopen(path, "r");
	if (!f) {
		printf("#   cannot open %s\n", path);
		return -1;
	}
	char line[256];
	while (fgets(line, sizeof line, f) && g->nkeys < 32) {
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%31s %63s", g->key[g->nkeys], g->val[g->nkeys]) == 2)
			g->nkeys++;
	}
	fclose(f);
	return 0;
}

static const char *gval(const struct golden *g, const char *key)
{
	for (int i = 0; i < g->nkeys; i++)
		if (!strcmp(g->key[i], key))
			return g->val[i];
	return NULL;
}

static double gnum(const struct golden *g, const char *key)
{
	const char *v = gval(g, key);
	if (!v) {
		printf("#   golden key %s missing\n", key);
		h_failed_checks++;
		return NAN;
	}
	return strtod(v, NULL);
}

static void golden_check(const char *name)
{
	struct golden g;
	if (golden_load(name, &g)) {
		CHECK(!"golden file");
		return;
	}
	printf("# golden %s: %zu target, %zu non-target\n", name, g.nt, g.nn);
	struct vpa_scores s = set_of(g.tar, g.nt, g.non, g.nn);
	struct vpa_metrics m = all_of(&s);

	CHECK_NEAR(m.eer, gnum(&g, "eer_rocch"), 1e-12);
	CHECK_NEAR(m.eer_sweep, gnum(&g, "eer_sweep"), 1e-15);
	CHECK(m.eer_sweep_threshold == gnum(&g, "eer_sweep_threshold"));
	CHECK_NEAR(m.cllr, gnum(&g, "cllr"), 1e-12);
	CHECK_NEAR(m.cllr_min, gnum(&g, "cllr_min"), 1e-12);
	CHECK_NEAR(m.min_dcf, gnum(&g, "min_dcf"), 1e-12);
	/* the reference's exp(a) - 1 vs our expm1: agreement to 1e-9 bits */
	CHECK_NEAR(m.zebra.dece, gnum(&g, "dece"), 1e-9);
	CHECK_NEAR(m.zebra.log10_lr_worst, gnum(&g, "log10_lr_worst"), 1e-12);
	CHECK(m.zebra.category == gval(&g, "category")[0]);
	if (gval(&g, "linkability")) {
		CHECK(m.linkability_defined);
		CHECK_NEAR(m.linkability, gnum(&g, "linkability"), 1e-13);
		/* the unsorted path (file order) gives the same bins */
		struct vpa_scores u = { g.tar, g.nt, g.non, g.nn, NULL, NULL };
		struct vpa_linkability l;
		struct vpa_err e;
		vpa_err_init(&e);
		CHECK(vpa_linkability(&u, 1, 0, &l, &e) == 0);
		CHECK(l.dsys == m.linkability);
		vpa_linkability_release(&l);
	} else {
		CHECK(!m.linkability_defined && isnan(m.linkability));
	}

	/*
	 * The VoicePrivacy 2024 convention (non-targets before targets inside a
	 * tie) is PAV on scores where every target is nudged to the next double
	 * up; our engine run that way must reproduce the reference's number,
	 * which cross-checks both implementations.
	 */
	double *tn = malloc(g.nt * sizeof *tn);
	for (size_t i = 0; i < g.nt; i++)
		tn[i] = nextafter(g.tar[i], INFINITY);
	struct vpa_scores sv = set_of(tn, g.nt, g.non, g.nn);
	struct vpa_pav p;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_pav_fit(&sv, 0, &p, &e) == 0);
	CHECK_NEAR(vpa_eer_rocch(&p, NULL), gnum(&g, "eer_rocch_vpc"), 1e-12);
	/* the reference adds up to 1e-6 to its LLRs: agreement to ~1e-6 */
	CHECK_NEAR(vpa_cllr_min(&p), gnum(&g, "cllr_min_vpc"), 2e-6);
	vpa_pav_release(&p);
	set_free(&sv);
	free(tn);

	set_free(&s);
	free(g.tar);
	free(g.non);
}

static void test_golden_tiny3(void) { golden_check("tiny3"); }
static void test_golden_gauss(void) { golden_check("gauss"); }
static void test_golden_separated(void) { golden_check("separated"); }

/*
 * Integer ratings 0..10 (many ties): pooled PAV gives ROCCH-EER 0.3603 and
 * Cllr_min 0.8724; the VoicePrivacy order gives 0.27 and 0.6888: a quarter
 * lower, the flattering the docs warn about.
 */
static void test_golden_ties_pooled_vs_vpc(void)
{
	golden_check("ties_int");
	struct golden g;
	if (golden_load("ties_int", &g))
		return;
	CHECK(gnum(&g, "eer_rocch") > gnum(&g, "eer_rocch_vpc") + 0.05);
	CHECK(gnum(&g, "cllr_min") > gnum(&g, "cllr_min_vpc") + 0.1);
	free(g.tar);
	free(g.non);
}

/*
 * Every score equal: no threshold separates anything.  Pooled: EER 1/2,
 * Cllr_min 1, D_ECE 0, tag 0.  The VoicePrivacy order calls the same system
 * perfect (EER 0, Cllr_min 0, D_ECE 0.72 bits): see the golden file.
 */
static void test_golden_allties(void)
{
	golden_check("allties");
	struct golden g;
	if (golden_load("allties", &g))
		return;
	struct vpa_scores s = set_of(g.tar, g.nt, g.non, g.nn);
	struct vpa_metrics m = all_of(&s);
	CHECK(m.eer == 0.5 && m.cllr_min == 1 && m.zebra.dece == 0);
	CHECK(m.zebra.category == '0');
	CHECK(m.tied_fraction == 1);
	CHECK(isfinite(m.eer_threshold) && isfinite(m.min_dcf_threshold));
	CHECK(gnum(&g, "eer_rocch_vpc") == 0);
	set_free(&s);
	free(g.tar);
	free(g.non);
}

/* ---- properties --------------------------------------------------------- */

static void test_perfect_separation(void)
{
	double tar[50], non[200];
	for (int i = 0; i < 50; i++)
		tar[i] = 10 + gauss();
	for (int i = 0; i < 200; i++)
		non[i] = -10 + gauss();
	struct vpa_scores s = set_of(tar, 50, non, 200);
	struct vpa_metrics m = all_of(&s);
	CHECK(m.eer == 0 && m.eer_sweep == 0 && m.cllr_min == 0 && m.min_dcf == 0);
	CHECK(m.eer_threshold > s.non[199] && m.eer_threshold < s.tar[0]);
	CHECK(m.min_dcf_threshold > s.non[199] && m.min_dcf_threshold <= s.tar[0]);
	/* Z(+inf) = 1/4 for every trial: D_ECE = 1/(2 ln 2), its maximum */
	CHECK_NEAR(m.zebra.dece, 1 / (2 * M_LN2), 1e-15);
	/* laplace: worst block (1 + 200 + 1... ) is finite */
	CHECK(isfinite(m.zebra.log10_lr_worst) && m.zebra.log10_lr_worst > 1);
	/* D(s) = 1 wherever mated scores are, so D<->sys = trapz(p(s|H)) over
	 * the bin centres: below 1 (the reference integrates centre to centre) */
	struct vpa_linkability l;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_linkability(&s, 1, 0, &l, &e) == 0);
	CHECK(l.n_bins == 5);
	double tz = 0;
	for (size_t i = 0; i < l.n_bins; i++) {
		if (l.p_mated[i] > 0)
			CHECK(l.d_local[i] == 1);
		if (i > 0)
			tz += (l.centers[i] - l.centers[i - 1]) * (l.p_mated[i] + l.p_mated[i - 1]) / 2;
	}
	CHECK_NEAR(l.dsys, tz, 1e-14);
	CHECK(m.linkability_defined && m.linkability == l.dsys);
	CHECK(l.dsys > 0.3 && l.dsys < 1);
	vpa_linkability_release(&l);
	set_free(&s);
}

static void test_full_overlap(void)
{
	double x[100];
	for (int i = 0; i < 100; i++)
		x[i] = gauss();
	struct vpa_scores s = set_of(x, 100, x, 100);
	struct vpa_metrics m = all_of(&s);
	/* every value a (1,1) tie: one block, posterior 1/2 */
	CHECK_NEAR(m.eer, 0.5, 1e-15);
	CHECK_NEAR(m.eer_sweep, 0.5, 1e-15);
	CHECK_NEAR(m.cllr_min, 1, 1e-15);
	CHECK_NEAR(m.zebra.dece, 0, 1e-15);
	CHECK(m.zebra.category == '0');
	CHECK(m.linkability_defined && m.linkability == 0);
	CHECK(m.tied_fraction == 1);
	CHECK(m.min_dcf <= 1);
	set_free(&s);
}

static void negate(double *y, const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = -x[i];
}

/* swap classes and negate: ROCCH-EER, Cllr, Cllr_min, ZEBRA unchanged (pooled ties make it exact) */
static void check_symmetry(const double *tar, size_t nt, const double *non, size_t nn)
{
	double *a = malloc(nn * sizeof *a), *b = malloc(nt * sizeof *b);
	negate(a, non, nn);
	negate(b, tar, nt);
	struct vpa_scores s = set_of(tar, nt, non, nn), r = set_of(a, nn, b, nt);
	struct vpa_metrics m = all_of(&s), q = all_of(&r);
	CHECK_NEAR(m.eer, q.eer, 1e-14);
	CHECK_NEAR(m.cllr, q.cllr, 1e-13);
	CHECK_NEAR(m.cllr_min, q.cllr_min, 1e-13);
	CHECK_NEAR(m.zebra.dece, q.zebra.dece, 1e-13);
	CHECK_NEAR(m.zebra.log10_lr_worst, q.zebra.log10_lr_worst, 1e-13);
	set_free(&s);
	set_free(&r);
	free(a);
	free(b);
}

static void test_symmetry(void)
{
	double tar[300], non[900];
	for (int i = 0; i < 300; i++)
		tar[i] = 1.5 + gauss();
	for (int i = 0; i < 900; i++)
		non[i] = gauss();
	check_symmetry(tar, 300, non, 900);
	/* with heavy ties too */
	for (int i = 0; i < 300; i++)
		tar[i] = round(tar[i] * 2);
	for (int i = 0; i < 900; i++)
		non[i] = round(non[i] * 2);
	check_symmetry(tar, 300, non, 900);
}

typedef double (*map_fn)(double);
static double affine(double x) { return 3 * x + 1; }
static double expo(double x) { return exp(x); }
static double cube(double x) { return x * x * x - 7; }

static void test_monotone_invariance(void)
{
	enum { NT = 400, NN = 1600 };
	double tar[NT], non[NN], t2[NT], n2[NN];
	for (int i = 0; i < NT; i++)
		tar[i] = round((1 + gauss()) * 1000) / 1000;
	for (int i = 0; i < NN; i++)
		non[i] = round(gauss() * 1000) / 1000;
	struct vpa_scores s = set_of(tar, NT, non, NN);
	struct vpa_metrics m = all_of(&s);
	map_fn maps[] = { affine, expo, cube };
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < NT; i++)
			t2[i] = maps[k](tar[i]);
		for (int i = 0; i < NN; i++)
			n2[i] = maps[k](non[i]);
		struct vpa_scores r = set_of(t2, NT, n2, NN);
		struct vpa_metrics q = all_of(&r);
		/* order-only metrics: exactly the same blocks and counts */
		CHECK(q.eer == m.eer);
		CHECK(q.eer_sweep == m.eer_sweep);
		CHECK(q.cllr_min == m.cllr_min);
		CHECK(q.min_dcf == m.min_dcf);
		CHECK(q.zebra.dece == m.zebra.dece);
		CHECK(q.zebra.log10_lr_worst == m.zebra.log10_lr_worst);
		CHECK(q.tied_fraction == m.tied_fraction);
		CHECK(maps[k](m.eer_sweep_threshold) == q.eer_sweep_threshold);
		if (k == 0) /* equal-width bins: affine maps only */
			CHECK_NEAR(q.linkability, m.linkability, 1e-12);
		else
			CHECK(fabs(q.linkability - m.linkability) > 1e-6);
		set_free(&r);
	}
	set_free(&s);
}

struct minmax {
	double v;
};
static int minmax_emit(void *ctx, double t, double pm, double pf)
{
	struct minmax *m = ctx;
	double x = pm > pf ? pm : pf;
	(void)t;
	if (x < m->v)
		m->v = x;
	return 0;
}

static void test_bounds_random(void)
{
	for (int trial = 0; trial < 40; trial++) {
		size_t nt = 10 + (size_t)(unif() * 300), nn = 1 + (size_t)(unif() * 2000);
		double mu = unif() * 4 - 1, sc = 0.1 + unif() * 10, off = unif() * 20 - 10;
		int ties = trial % 3 == 0;
		double *tar = malloc(nt * sizeof *tar), *non = malloc(nn * sizeof *non);
		for (size_t i = 0; i < nt; i++)
			tar[i] = sc * (mu + gauss()) + off;
		for (size_t i = 0; i < nn; i++)
			non[i] = sc * gauss() + off;
		if (ties) {
			for (size_t i = 0; i < nt; i++)
				tar[i] = round(tar[i]);
			for (size_t i = 0; i < nn; i++)
				non[i] = round(non[i]);
		}
		struct vpa_scores s = set_of(tar, nt, non, nn);
		struct vpa_metrics m = all_of(&s);
		CHECK(m.eer >= 0 && m.eer <= 0.5 + 1e-15);
		CHECK(m.eer_sweep >= 0 && m.eer_sweep <= 1);
		/* the hull lies below every ROC point, so it meets the diagonal
		 * at or below max(P_miss, P_fa) of every point */
		struct minmax mm = { 1 };
		vpa_det_walk(&s, minmax_emit, &mm);
		CHECK(m.eer <= mm.v + 1e-12);
		CHECK(m.cllr_min <= m.cllr + 1e-12);
		CHECK(m.cllr_min <= 1 + 1e-12 && m.cllr_min >= 0);
		CHECK(m.min_dcf >= 0 && m.min_dcf <= 1);
		CHECK(m.zebra.dece >= -1e-15 && m.zebra.dece <= 1 / (2 * M_LN2) + 1e-12);
		CHECK(m.linkability_defined);
		CHECK(m.linkability >= 0 && m.linkability <= 1);
		CHECK(isfinite(m.eer_threshold) && isfinite(m.eer_sweep_threshold) &&
		      isfinite(m.min_dcf_threshold));
		CHECK(m.tied_fraction >= 0 && m.tied_fraction <= 1);
		if (!ties)
			CHECK(m.tied_fraction == 0);
		set_free(&s);
		free(tar);
		free(non);
	}
}

/* weight k on a trial == the trial repeated k times */
static void test_weights_equal_repeats(void)
{
	enum { NT = 60, NN = 200 };
	double tar[NT], non[NN], wt[NT], wn[NN];
	double rt[NT * 3], rn[NN * 3];
	size_t kt = 0, kn = 0;
	for (int i = 0; i < NT; i++)
		tar[i] = round((1 + gauss()) * 4) / 4;
	for (int i = 0; i < NN; i++)
		non[i] = round(gauss() * 4) / 4;
	vpa_sort_scores(tar, NULL, NT);
	vpa_sort_scores(non, NULL, NN);
	for (int i = 0; i < NT; i++) {
		wt[i] = (double)(i % 3);
		for (int r = 0; r < i % 3; r++)
			rt[kt++] = tar[i];
	}
	for (int i = 0; i < NN; i++) {
		wn[i] = (double)((i * 7) % 4 == 0 ? 0 : (i % 2) + 1);
		for (int r = 0; r < (int)wn[i]; r++)
			rn[kn++] = non[i];
	}
	struct vpa_scores w = { tar, NT, non, NN, wt, wn };
	struct vpa_scores r = set_of(rt, kt, rn, kn);
	struct vpa_metrics a = all_of(&w), b = all_of(&r);
	CHECK_NEAR(a.eer, b.eer, 1e-14);
	CHECK_NEAR(a.eer_sweep, b.eer_sweep, 1e-14);
	CHECK_NEAR(a.cllr, b.cllr, 1e-13);
	CHECK_NEAR(a.cllr_min, b.cllr_min, 1e-13);
	CHECK_NEAR(a.min_dcf, b.min_dcf, 1e-13);
	CHECK_NEAR(a.zebra.dece, b.zebra.dece, 1e-13);
	CHECK_NEAR(a.linkability, b.linkability, 1e-13);
	set_free(&r);
}

/*
 * The unweighted sweep skips most groups of a single-class run (only the
 * groups where a first minimum can be are evaluated); with unit weights the
 * full per-group walk runs.  Both must agree to the bit, thresholds too.
 */
static void test_sweep_fast_equals_full(void)
{
	for (int trial = 0; trial < 300; trial++) {
		size_t nt = 1 + (size_t)(unif() * (trial % 7 == 0 ? 3 : 400));
		size_t nn = 1 + (size_t)(unif() * (trial % 5 == 0 ? 3 : 3000));
		double q = trial % 3 == 0 ? 1 : trial % 3 == 1 ? 8 : 1e6; /* tie density */
		double mu = unif() * 6 - 3;
		double *tar = malloc(nt * sizeof *tar), *non = malloc(nn * sizeof *non);
		double *w1 = malloc((nt > nn ? nt : nn) * sizeof *w1);
		for (size_t i = 0; i < nt; i++)
			tar[i] = round((mu + gauss()) * q) / q;
		for (size_t i = 0; i < nn; i++)
			non[i] = round(gauss() * q) / q;
		for (size_t i = 0; i < (nt > nn ? nt : nn); i++)
			w1[i] = 1;
		vpa_sort_scores(tar, NULL, nt);
		vpa_sort_scores(non, NULL, nn);
		struct vpa_scores f = { tar, nt, non, nn, NULL, NULL }, w = { tar, nt, non, nn, w1, w1 };
		double pt = trial % 2 ? 0.01 : 0.5 + 0.4 * unif();
		double cm = 1 + (trial % 4), cf = 1 + (trial % 3);
		double t1, t2, u1, u2;
		double e1 = vpa_eer_sweep(&f, &t1), e2 = vpa_eer_sweep(&w, &t2);
		double d1 = vpa_min_dcf(&f, pt, cm, cf, &u1), d2 = vpa_min_dcf(&w, pt, cm, cf, &u2);
		int same = e1 == e2 && t1 == t2 && d1 == d2 && u1 == u2;
		if (!same)
			printf("#   trial %d: eer %.17g/%.17g thr %g/%g dcf %.17g/%.17g thr %g/%g\n",
			       trial, e1, e2, t1, t2, d1, d2, u1, u2);
		CHECK(same);
		struct vpa_metrics a = all_of(&f), b = all_of(&w);
		CHECK(a.tied_fraction == b.tied_fraction);
		free(w1);
		free(tar);
		free(non);
	}
}

/* ---- DET ---------------------------------------------------------------- */

/* probit by bisection on erfc (independent of the library's) */
static double test_probit(double p)
{
	double lo = -40, hi = 40;
	for (int i = 0; i < 200; i++) {
		double m = (lo + hi) / 2;
		if (0.5 * erfc(-m / M_SQRT2) < p)
			lo = m;
		else
			hi = m;
	}
	return (lo + hi) / 2;
}

struct det_rec {
	double t[16], pm[16], pf[16];
	int n;
};
static int det_rec_emit(void *ctx, double t, double pm, double pf)
{
	struct det_rec *r = ctx;
	if (r->n < 16) {
		r->t[r->n] = t;
		r->pm[r->n] = pm;
		r->pf[r->n] = pf;
		r->n++;
	}
	return 0;
}

static void test_det(void)
{
	/* tar {2,4,5}, non {1,3,6}, tie-free: accept >= t for t = 1..6, then none */
	const double tar[] = { 2, 4, 5 }, non[] = { 1, 3, 6 };
	struct vpa_scores s = { tar, 3, non, 3, NULL, NULL };
	struct det_rec r = { .n = 0 };
	vpa_det_walk(&s, det_rec_emit, &r);
	CHECK(r.n == 7);
	const double pm[] = { 0, 0, 1. / 3, 1. / 3, 2. / 3, 1, 1 };
	const double pf[] = { 1, 2. / 3, 2. / 3, 1. / 3, 1. / 3, 1. / 3, 0 };
	for (int i = 0; i < 7 && i < r.n; i++) {
		CHECK_NEAR(r.pm[i], pm[i], 1e-15);
		CHECK_NEAR(r.pf[i], pf[i], 1e-15);
	}
	CHECK(r.t[0] == 1 && r.t[5] == 6 && r.t[6] == INFINITY);

	/* the sample of a large curve */
	enum { NT = 5000, NN = 50000 };
	double *t = malloc(NT * sizeof *t), *n = malloc(NN * sizeof *n);
	for (int i = 0; i < NT; i++)
		t[i] = 2 + gauss();
	for (int i = 0; i < NN; i++)
		n[i] = gauss();
	struct vpa_scores b = set_of(t, NT, n, NN);
	double spm[64], spf[64];
	size_t k = vpa_det_sample(&b, 64, spm, spf);
	CHECK(k > 40 && k <= 64);
	CHECK(spm[0] == 0 && spf[0] == 1);
	CHECK(spm[k - 1] == 1 && spf[k - 1] == 0);
	int mono = 1;
	for (size_t i = 1; i < k; i++)
		if (!(spm[i] >= spm[i - 1] && spf[i] <= spf[i - 1]) ||
		    (spm[i] == spm[i - 1] && spf[i] == spf[i - 1]))
			mono = 0;
	CHECK(mono);
	/* the sweep-EER point is one of them */
	double eer = vpa_eer_sweep(&b, NULL);
	int found = 0;
	for (size_t i = 0; i < k; i++)
		if (fabs((spm[i] + spf[i]) / 2 - eer) < 1e-12 && fabs(spm[i] - spf[i]) < 1e-3)
			found = 1;
	CHECK(found);
	/*
	 * spread: between consecutive points strictly inside (0,1) on both axes
	 * the curve moves less than ~2 grid steps in probit space (grid step:
	 * about 7.1/30 = 0.24 for P_miss, 8.2/30 = 0.27 for P_fa here)
	 */
	double gap = 0;
	for (size_t i = 1; i < k; i++) {
		if (spm[i - 1] <= 0 || spf[i] <= 0 || spm[i] >= 1 || spf[i - 1] >= 1)
			continue;
		double dz = fabs(test_probit(spf[i]) - test_probit(spf[i - 1]));
		double dm = fabs(test_probit(spm[i]) - test_probit(spm[i - 1]));
		double d = dz > dm ? dz : dm;
		if (d > gap)
			gap = d;
	}
	CHECK(gap > 0.1 && gap < 0.6);
	/* the unweighted walk by runs equals the walk over every group */
	{
		double *w1 = malloc(NN * sizeof *w1), qm[64], qf[64];
		for (int i = 0; i < NN; i++)
			w1[i] = 1;
		for (int q = 0; q < 3; q++) {
			double *t2 = malloc(NT * sizeof *t2), *n2 = malloc(NN * sizeof *n2);
			double r = q == 0 ? 1e9 : q == 1 ? 10 : 1; /* tie density */
			for (int i = 0; i < NT; i++)
				t2[i] = round(b.tar[i] * r) / r;
			for (int i = 0; i < NN; i++)
				n2[i] = round(b.non[i] * r) / r;
			struct vpa_scores f = { t2, NT, n2, NN, NULL, NULL };
			struct vpa_scores w = { t2, NT, n2, NN, w1, w1 };
			for (size_t mp = 1; mp <= 64; mp += 7) {
				size_t k1 = vpa_det_sample(&f, mp, spm, spf);
				size_t k2 = vpa_det_sample(&w, mp, qm, qf);
				CHECK(k1 == k2 && k1 <= mp);
				CHECK(k1 == k2 && !memcmp(spm, qm, k1 * sizeof *qm) &&
				      !memcmp(spf, qf, k1 * sizeof *qf));
			}
			free(t2);
			free(n2);
		}
		free(w1);
	}
	/* tiny budgets */
	CHECK(vpa_det_sample(&b, 0, spm, spf) == 0);
	CHECK(vpa_det_sample(&b, 1, spm, spf) == 1);
	k = vpa_det_sample(&b, 3, spm, spf);
	CHECK(k == 3 && spm[0] == 0 && spf[2] == 0);
	set_free(&b);
	free(t);
	free(n);
}

/* ---- min DCF / tied fraction / misc ------------------------------------- */

static void test_min_dcf_hand(void)
{
	/* tar {1,2,3,4}, non {0,1,2,5} (ties at 1 and 2), p = 0.5:
	 * norm = 0.5; t = 5: Pm 1, Pf 1/4 -> (0.5 + 0.125)/0.5 = 1.25
	 * t = 4: Pm 3/4, Pf 1/4 -> 1; t = 3: 1/2, 1/4 -> 3/4; t = 2: 1/4, 1/2 -> 3/4;
	 * t = 1: 0, 3/4 -> 3/4; t = 0: 0, 1 -> 1.  First minimum (scan down): t = 3. */
	const double tar[] = { 1, 2, 3, 4 }, non[] = { 0, 1, 2, 5 };
	struct vpa_scores s = { tar, 4, non, 4, NULL, NULL };
	double thr;
	CHECK_NEAR(vpa_min_dcf(&s, 0.5, 1, 1, &thr), 0.75, 1e-15);
	CHECK(thr == 3);
	/* C_miss = 10 at p = 0.5: norm 0.5; t = 1: (0 + 0.5*0.75)/0.5 = 0.75;
	 * t = 0: 1; t = 3: (0.5*10*0.5 + 0.125)/0.5 = 5.25 -> 0.75 at t = 1 */
	CHECK_NEAR(vpa_min_dcf(&s, 0.5, 10, 1, &thr), 0.75, 1e-15);
	CHECK(thr == 1);
	struct vpa_metrics m = all_of(&s);
	/* tied trials: 1 (2 trials) and 2 (2 trials) of 8 */
	CHECK_NEAR(m.tied_fraction, 0.5, 0);
}

static void test_errors(void)
{
	const double x[] = { 1, 2, 3 };
	struct vpa_scores none_t = { x, 0, x, 3, NULL, NULL }, none_n = { x, 3, x, 0, NULL, NULL };
	struct vpa_err e;
	struct vpa_pav p;
	struct vpa_metrics m;
	struct vpa_zebra z;
	struct vpa_linkability l;

	vpa_err_init(&e);
	CHECK(vpa_pav_fit(&none_t, 0, &p, &e) == VPA_EINPUT);
	CHECK_STR(e.msg, "no target scores");
	CHECK(p.b == NULL && p.n_blocks == 0);
	vpa_pav_release(&p);
	vpa_err_init(&e);
	CHECK(vpa_metrics_all(&none_n, NULL, &m, &e) == VPA_EINPUT);
	CHECK_STR(e.msg, "no non-target scores");
	CHECK(isnan(m.eer) && isnan(m.cllr));
	vpa_err_init(&e);
	CHECK(vpa_zebra(&none_t, &z, &e) == VPA_EINPUT);
	vpa_err_init(&e);
	CHECK(vpa_linkability(&none_n, 1, 0, &l, &e) == VPA_EINPUT);
	CHECK_STR(e.msg, "no non-target scores");
	vpa_linkability_release(&l);
	vpa_err_init(&e);
	struct vpa_scores ok = { x, 3, x, 3, NULL, NULL };
	CHECK(vpa_linkability(&ok, 0, 0, &l, &e) == VPA_EINPUT);
	CHECK_STR(e.msg, "omega must be a positive number, got 0");
	struct vpa_metrics_opts o;
	vpa_metrics_opts_init(&o);
	o.p_target = 1;
	vpa_err_init(&e);
	CHECK(vpa_metrics_all(&ok, &o, &m, &e) == VPA_EINPUT);
	CHECK_STR(e.msg, "p_target must be strictly between 0 and 1, got 1");
	CHECK(isnan(vpa_eer_sweep(&none_t, NULL)));
	CHECK(isnan(vpa_cllr(&none_n)));
	double zeros[3] = { 0, 0, 0 };
	struct vpa_scores zw = { x, 3, x, 3, zeros, NULL };
	vpa_err_init(&e);
	CHECK(vpa_pav_fit(&zw, 0, &p, &e) == VPA_EINPUT);
	CHECK_STR(e.msg, "target weights sum to zero");
}

/* extreme scores: no overflow, no NaN */
static void test_extreme_scores(void)
{
	const double tar[] = { 1e300, 800, -800, 5 }, non[] = { -1e300, -800, 800, -5, 0 };
	struct vpa_scores s = set_of(tar, 4, non, 5);
	struct vpa_metrics m = all_of(&s);
	CHECK(isfinite(m.cllr) && isfinite(m.cllr_min) && isfinite(m.eer));
	CHECK(isfinite(m.zebra.dece) && isfinite(m.min_dcf_threshold));
	/* a target at -800 costs 800/ln 2 bits: Cllr finite and large */
	CHECK(m.cllr > 800 / M_LN2 / 2 / 4);
	set_free(&s);
	/* the range max - min overflows a double: linkability still finite */
	double t2[10], n2[10];
	for (int i = 0; i < 10; i++) {
		t2[i] = 1e308 - i * 1e300;
		n2[i] = -1e308 + i * 1e300;
	}
	struct vpa_scores s2 = set_of(t2, 10, n2, 10);
	struct vpa_linkability l;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_linkability(&s2, 1, 0, &l, &e) == 0);
	CHECK(l.defined && l.dsys == 0); /* one bin */
	vpa_linkability_release(&l);
	set_free(&s2);
}

/* Every metric of vpa_metrics_all and vpa_metrics_flipped is the same bits
 * on 1, 2 and 3 threads (the parts run side by side, each on its own slots),
 * and the flipped run leaves the scores as they were. */
static void test_threads_identical(void)
{
	size_t nt = 3001, nn = 40003;
	double *tar = malloc(nt * sizeof *tar), *non = malloc(nn * sizeof *non);
	for (size_t i = 0; i < nt; i++)
		tar[i] = 1.5 + gauss();
	for (size_t i = 0; i < nn; i++)
		non[i] = gauss();
	struct vpa_scores s = set_of(tar, nt, non, nn);
	double *t0 = malloc(nt * sizeof *t0), *n0 = malloc(nn * sizeof *n0);
	memcpy(t0, s.tar, nt * sizeof *t0);
	memcpy(n0, s.non, nn * sizeof *n0);
	struct vpa_metrics ref, m;
	struct vpa_err e;
	vpa_err_init(&e);
	for (int t = 1; t <= 3; t++) {
		struct vpa_metrics_opts o;
		vpa_metrics_opts_init(&o);
		o.threads = t;
		CHECK(vpa_metrics_all(&s, &o, t == 1 ? &ref : &m, &e) == 0);
		CHECK(vpa_metrics_flipped((double *)s.tar, nt, (double *)s.non, nn, &o,
					  t == 1 ? &ref : &m, &e) == 0);
		CHECK(memcmp(s.tar, t0, nt * sizeof *t0) == 0 && memcmp(s.non, n0, nn * sizeof *n0) == 0);
		if (t == 1)
			continue;
		const double a[] = {ref.eer, ref.eer_threshold, ref.eer_sweep, ref.eer_sweep_threshold,
				    ref.cllr, ref.cllr_min, ref.min_dcf, ref.min_dcf_threshold,
				    ref.linkability, ref.linkability_hist, ref.tied_fraction,
				    ref.zebra.dece, ref.zebra.log10_lr_worst, ref.eer_flipped,
				    ref.cllr_min_flipped, ref.min_dcf_flipped};
		const double b[] = {m.eer, m.eer_threshold, m.eer_sweep, m.eer_sweep_threshold,
				    m.cllr, m.cllr_min, m.min_dcf, m.min_dcf_threshold,
				    m.linkability, m.linkability_hist, m.tied_fraction,
				    m.zebra.dece, m.zebra.log10_lr_worst, m.eer_flipped,
				    m.cllr_min_flipped, m.min_dcf_flipped};
		CHECK(memcmp(a, b, sizeof a) == 0);
		CHECK(isfinite(b[0]) && isfinite(b[4]) && isfinite(b[8]) && isfinite(b[13]));
		CHECK(m.linkability_bins == ref.linkability_bins);
	}
	free(t0);
	free(n0);
	set_free(&s);
	free(tar);
	free(non);
}

int main(void)
{
	RUN(test_threads_identical);
	RUN(test_tiny_hand);
	RUN(test_linkability_hand);
	RUN(test_golden_tiny3);
	RUN(test_golden_gauss);
	RUN(test_golden_separated);
	RUN(test_golden_ties_pooled_vs_vpc);
	RUN(test_golden_allties);
	RUN(test_perfect_separation);
	RUN(test_full_overlap);
	RUN(test_symmetry);
	RUN(test_monotone_invariance);
	RUN(test_bounds_random);
	RUN(test_weights_equal_repeats);
	RUN(test_sweep_fast_equals_full);
	RUN(test_det);
	RUN(test_min_dcf_hand);
	RUN(test_errors);
	RUN(test_extreme_scores);
	return DONE();
}
