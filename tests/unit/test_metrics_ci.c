/*
 * tests/unit/test_metrics_ci.c - percentile bootstrap intervals: seeding,
 * coverage of the point estimate, the skipped-replicate count, identity
 * resampling, and input errors.
 */
#include "metrics/metrics.h"
#include "formats/io.h"
#include "tests/unit/harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t lcg = 1234567;
static double unif(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return ((double)(lcg >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void) { return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif()); }

static struct vpa_ci_opts opts(uint64_t seed)
{
	struct vpa_ci_opts o;
	memset(&o, 0, sizeof o);
	o.level = 0.95;
	o.reps = 300;
	o.seed = seed;
	o.omega = 1;
	return o;
}

static void test_trials(void)
{
	enum { NT = 200, NN = 800 };
	double tar[NT], non[NN];
	for (int i = 0; i < NT; i++)
		tar[i] = 2 + gauss();
	for (int i = 0; i < NN; i++)
		non[i] = gauss();
	vpa_sort_scores(tar, NULL, NT);
	vpa_sort_scores(non, NULL, NN);
	struct vpa_scores s = { tar, NT, non, NN, NULL, NULL };
	struct vpa_metrics m;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_metrics_all(&s, NULL, &m, &e) == 0);

	struct vpa_ci_opts o = opts(7);
	struct vpa_ci a, b, c;
	CHECK(vpa_bootstrap_ci(&s, &o, &a, &e) == 0);
	CHECK(a.by_identity == 0 && a.reps == 300 && a.reps_used == 300);
	CHECK(a.link_reps_used == 300);
	CHECK(a.eer_lo <= m.eer && m.eer <= a.eer_hi && a.eer_lo < a.eer_hi);
	CHECK(a.cllr_min_lo <= m.cllr_min && m.cllr_min <= a.cllr_min_hi);
	CHECK(a.link_lo <= m.linkability && m.linkability <= a.link_hi);
	/* EER of 2-sigma separated Gaussians ~0.16; with 200/800 trials the
	 * 95% interval is a few points wide, not 0 and not 0.5 */
	CHECK(a.eer_hi - a.eer_lo > 0.02 && a.eer_hi - a.eer_lo < 0.15);
	/* same seed, same interval; another seed, another */
	CHECK(vpa_bootstrap_ci(&s, &o, &b, &e) == 0);
	CHECK(memcmp(&a, &b, sizeof a) == 0);
	o.seed = 8;
	CHECK(vpa_bootstrap_ci(&s, &o, &c, &e) == 0);
	CHECK(c.eer_lo != a.eer_lo || c.eer_hi != a.eer_hi);
	/* a wider level gives a wider interval */
	o.seed = 7;
	o.level = 0.5;
	CHECK(vpa_bootstrap_ci(&s, &o, &c, &e) == 0);
	CHECK(c.eer_lo >= a.eer_lo && c.eer_hi <= a.eer_hi);
}

/* 1 target + 1 non-target: a replicate of 2 draws misses a class w.p. 1/2 */
static void test_skipped(void)
{
	double tar[] = { 1 }, non[] = { 0 };
	struct vpa_scores s = { tar, 1, non, 1, NULL, NULL };
	struct vpa_ci_opts o = opts(3);
	o.reps = 1000;
	struct vpa_ci ci;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_bootstrap_ci(&s, &o, &ci, &e) == 0);
	CHECK(ci.reps == 1000 && ci.reps_used > 420 && ci.reps_used < 580);
	CHECK(ci.eer_lo == 0 && ci.eer_hi == 0);
	CHECK(ci.link_reps_used == 0 && isnan(ci.link_lo) && isnan(ci.link_hi));
}

/*
 * Identities: scores carry a strong per-speaker offset, so trials of one
 * speaker are correlated and resampling trials understates the spread;
 * resampling speakers must give a wider interval.
 */
static void test_identities(void)
{
	enum { NS = 20, PER = 5 };
	/* enrol speaker e, test utterance t (speaker t / PER); all pairs */
	size_t nt = 0, nn = 0;
	static double tar[NS * NS * PER], non[NS * NS * PER];
	static uint32_t te[NS * NS * PER], tt[NS * NS * PER], ne[NS * NS * PER], nt_[NS * NS * PER];
	double off[NS];
	for (int i = 0; i < NS; i++)
		off[i] = 2 * gauss();
	struct rec {
		double v;
		uint32_t e, t;
	};
	static struct rec rt[NS * NS * PER], rn[NS * NS * PER];
	for (uint32_t e = 0; e < NS; e++)
		for (uint32_t t = 0; t < NS * PER; t++) {
			uint32_t spk = t / PER;
			if (spk == e)
				rt[nt++] = (struct rec){ 3 + off[e] + 0.3 * gauss(), e, t };
			else
				rn[nn++] = (struct rec){ off[e] + 0.3 * gauss(), e, t };
		}
	/* sort with perm to carry the ids */
	uint32_t *pt = malloc(nt * sizeof *pt), *pn = malloc(nn * sizeof *pn);
	for (size_t i = 0; i < nt; i++) {
		tar[i] = rt[i].v;
		pt[i] = (uint32_t)i;
	}
	for (size_t i = 0; i < nn; i++) {
		non[i] = rn[i].v;
		pn[i] = (uint32_t)i;
	}
	vpa_sort_scores(tar, pt, nt);
	vpa_sort_scores(non, pn, nn);
	for (size_t i = 0; i < nt; i++) {
		te[i] = rt[pt[i]].e;
		tt[i] = rt[pt[i]].t;
		CHECK(tar[i] == rt[pt[i]].v);
	}
	for (size_t i = 0; i < nn; i++) {
		ne[i] = rn[pn[i]].e;
		nt_[i] = rn[pn[i]].t;
	}
	struct vpa_scores s = { tar, nt, non, nn, NULL, NULL };
	struct vpa_ci_opts o = opts(11);
	struct vpa_ci by_trial, by_id;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_bootstrap_ci(&s, &o, &by_trial, &e) == 0);
	o.tar_e = te;
	o.tar_t = tt;
	o.non_e = ne;
	o.non_t = nt_;
	o.n_e = NS;
	o.n_t = NS * PER;
	CHECK(vpa_bootstrap_ci(&s, &o, &by_id, &e) == 0);
	CHECK(by_id.by_identity == 1 && by_trial.by_identity == 0);
	CHECK(by_id.reps_used > 250);
	CHECK(by_id.cllr_min_hi - by_id.cllr_min_lo > 1.5 * (by_trial.cllr_min_hi - by_trial.cllr_min_lo));
	CHECK(by_id.eer_hi - by_id.eer_lo > 1.5 * (by_trial.eer_hi - by_trial.eer_lo));

	/* errors */
	o.non_t = NULL;
	vpa_err_init(&e);
	CHECK(vpa_bootstrap_ci(&s, &o, &by_id, &e) == VPA_EINPUT);
	CHECK_STR(e.msg, "bootstrap: identity lists must be given for all four of tar_e, "
			 "tar_t, non_e, non_t or for none");
	o.non_t = nt_;
	o.n_t = 10;
	vpa_err_init(&e);
	CHECK(vpa_bootstrap_ci(&s, &o, &by_id, &e) == VPA_EINPUT);
	CHECK(strstr(e.msg, "out of range [0, 10)") != NULL);
	free(pt);
	free(pn);
}

static void test_errors(void)
{
	double x[] = { 1, 2 };
	struct vpa_scores empty = { x, 2, x, 0, NULL, NULL }, ok = { x, 2, x, 2, NULL, NULL };
	struct vpa_ci_opts o = opts(1);
	struct vpa_ci ci;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_bootstrap_ci(&empty, &o, &ci, &e) == VPA_EINPUT);
	CHECK_STR(e.msg, "no non-target scores");
	o.level = 1;
	vpa_err_init(&e);
	CHECK(vpa_bootstrap_ci(&ok, &o, &ci, &e) == VPA_EINPUT);
	CHECK_STR(e.msg, "bootstrap level must be strictly between 0 and 1, got 1");
}

/* Read a score file, sort each class carrying its ids (as attacks/evaluate.c). */
static int load_sorted(const char *path, struct vpa_trials *t)
{
	struct vpa_err e;
	vpa_err_init(&e);
	vpa_trials_init(t);
	const char *key = strchr(path, '+'); /* "SCORES+KEY": Kaldi scores joined with a key */
	char sp[256];
	snprintf(sp, sizeof sp, "%.*s", key ? (int)(key - path) : (int)strlen(path), path);
	if ((key ? vpa_read_scores_key(sp, key + 1, t, &e) : vpa_read_scores(sp, t, &e)) ||
	    !t->n_tar || !t->n_non) {
		/* the golden metric sets: "1 SCORE" / "0 SCORE" lines */
		FILE *f = fopen(sp, "r");
		int lab;
		double v;
		size_t cap = 4096;
		vpa_trials_release(t);
		vpa_trials_init(t);
		t->tar = malloc(cap * sizeof(double));
		t->non = malloc(cap * sizeof(double));
		while (f && fscanf(f, "%d %lf", &lab, &v) == 2 && t->n_tar < cap && t->n_non < cap) {
			if (lab)
				t->tar[t->n_tar++] = v;
			else
				t->non[t->n_non++] = v;
		}
		if (f)
			fclose(f);
		if (!t->n_tar || !t->n_non) {
			printf("#   %s\n", e.msg);
			return -1;
		}
	}
	double *x[2] = {t->tar, t->non};
	size_t n[2] = {t->n_tar, t->n_non};
	uint32_t *ie[2] = {t->tar_e, t->non_e}, *it[2] = {t->tar_t, t->non_t};
	for (int c = 0; c < 2; c++) {
		uint32_t *perm = malloc((n[c] ? n[c] : 1) * sizeof *perm);
		uint32_t *tmp = malloc((n[c] ? n[c] : 1) * sizeof *tmp);
		for (size_t i = 0; i < n[c]; i++)
			perm[i] = (uint32_t)i;
		vpa_sort_scores(x[c], perm, n[c]);
		for (int k = 0; k < 2 && ie[c]; k++) {
			uint32_t *a = k ? it[c] : ie[c];
			for (size_t i = 0; i < n[c]; i++)
				tmp[i] = a[perm[i]];
			memcpy(a, tmp, n[c] * sizeof *tmp);
		}
		free(tmp);
		free(perm);
	}
	return 0;
}

static double golden_num(const char *text, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\n%s ", key);
	const char *p = strstr(text, pat);
	return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/*
 * BCa against scipy.stats.bootstrap(method='BCa') on the same set
 * (tests/golden/bca/gen_bca.py: numpy linkability, the enrolment and test
 * ids as two samples).  The acceleration is deterministic (jackknife over
 * identities) and must agree to rounding; the interval is Monte-Carlo on
 * both sides (20000 replicates each, different generators) and must agree
 * within a tenth of its width, while the percentile interval - which barely
 * contains the estimate here - is far from it.
 */
static void test_bca_golden(void)
{
	struct vpa_trials t;
	char *exp = NULL;
	size_t len;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(load_sorted("tests/golden/bca/ids.scores", &t) == 0);
	CHECK(vpa_read_file("tests/golden/bca/ids.expected", &exp, &len, &e) == 0);
	if (!exp || !t.tar_e)
		return;
	struct vpa_scores s = {t.tar, t.n_tar, t.non, t.n_non, NULL, NULL};
	struct vpa_ci_opts o = opts(5);
	o.reps = 20000;
	o.tar_e = t.tar_e;
	o.tar_t = t.tar_t;
	o.non_e = t.non_e;
	o.non_t = t.non_t;
	o.n_e = t.n_ids_e;
	o.n_t = t.n_ids_t;
	struct vpa_ci ci;
	CHECK(vpa_bootstrap_ci(&s, &o, &ci, &e) == 0);
	double theta = golden_num(exp, "linkability"), a = golden_num(exp, "a_hat");
	double lo = golden_num(exp, "bca_lo"), hi = golden_num(exp, "bca_hi");
	double plo = golden_num(exp, "pct_lo"), phi = golden_num(exp, "pct_hi");
	CHECK_NEAR(ci.estimate[2], theta, 1e-12);
	CHECK_NEAR(ci.link_a, a, 1e-10);
	CHECK(ci.jack_groups[0] == 12 && ci.jack_groups[1] == 96 && !ci.jack_grouped);
	double w = hi - lo;
	CHECK_NEAR(ci.link_lo, lo, 0.1 * w);
	CHECK_NEAR(ci.link_hi, hi, 0.1 * w);
	CHECK(fabs(phi - hi) > 0.5 * w); /* the percentile interval would fail the check above */
	CHECK(ci.link_lo <= ci.estimate[2] && ci.estimate[2] <= ci.link_hi);
	CHECK(!(ci.extended & 4));
	(void)plo;
	printf("#   linkability %.4f: BCa [%.4f, %.4f] (scipy [%.4f, %.4f], percentile [%.4f, %.4f]), "
	       "a %.6f z0 %.3f\n", ci.estimate[2], ci.link_lo, ci.link_hi, lo, hi, plo, phi, ci.link_a,
	       ci.link_z0);
	free(exp);
	vpa_trials_release(&t);
}

/* Every interval contains its estimate on the shipped score sets. */
static void test_contains_estimate(void)
{
	static const char *const files[] = {
		"scenarios/data/ignorant.txt", "scenarios/data/lazy_informed.txt",
		"tests/golden/bca/ids.scores", "tests/golden/bca/trials.scores",
		"tests/golden/metrics/gauss.scores",
		"tests/golden/metrics/ties_int.scores", "tests/golden/metrics/separated.scores",
		"tests/e2e/data/tiny.txt", "tests/golden/metrics/allties.scores",
		"scenarios/data/semi_informed.scores+scenarios/data/semi_informed.trials", NULL,
	};
	for (int f = 0; files[f]; f++) {
		struct vpa_trials t;
		if (load_sorted(files[f], &t))
			continue;
		struct vpa_scores s = {t.tar, t.n_tar, t.non, t.n_non, NULL, NULL};
		struct vpa_metrics m;
		struct vpa_err e;
		vpa_err_init(&e);
		CHECK(vpa_metrics_all(&s, NULL, &m, &e) == 0);
		for (int by_id = 0; by_id < 2; by_id++) {
			if (by_id && !t.tar_e)
				continue;
			struct vpa_ci_opts o = opts(3);
			o.reps = 500;
			if (by_id) {
				o.tar_e = t.tar_e;
				o.tar_t = t.tar_t;
				o.non_e = t.non_e;
				o.non_t = t.non_t;
				o.n_e = t.n_ids_e;
				o.n_t = t.n_ids_t;
			}
			struct vpa_ci ci;
			CHECK(vpa_bootstrap_ci(&s, &o, &ci, &e) == 0);
			CHECK(ci.estimate[0] == m.eer && ci.estimate[1] == m.cllr_min);
			CHECK(ci.eer_lo <= m.eer && m.eer <= ci.eer_hi);
			CHECK(ci.cllr_min_lo <= m.cllr_min && m.cllr_min <= ci.cllr_min_hi);
			if (m.linkability_defined && ci.link_reps_used)
				CHECK(ci.link_lo <= m.linkability && m.linkability <= ci.link_hi);
			printf("#   %s by %s: eer %.4f [%.4f, %.4f] cllr_min %.4f [%.4f, %.4f] link %.4f "
			       "[%.4f, %.4f] extended %u\n", files[f], by_id ? "ids" : "trials", m.eer,
			       ci.eer_lo, ci.eer_hi, m.cllr_min, ci.cllr_min_lo, ci.cllr_min_hi,
			       m.linkability, ci.link_lo, ci.link_hi, ci.extended);
		}
		vpa_trials_release(&t);
	}
}

/* The same by trial (tests/golden/bca/trials.*: 600 trials, one sample). */
static void test_bca_golden_trials(void)
{
	struct vpa_trials t;
	char *exp = NULL;
	size_t len;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(load_sorted("tests/golden/bca/trials.scores", &t) == 0);
	CHECK(vpa_read_file("tests/golden/bca/trials.expected", &exp, &len, &e) == 0);
	if (!exp)
		return;
	struct vpa_scores s = {t.tar, t.n_tar, t.non, t.n_non, NULL, NULL};
	struct vpa_ci_opts o = opts(9);
	o.reps = 20000;
	struct vpa_ci ci;
	CHECK(vpa_bootstrap_ci(&s, &o, &ci, &e) == 0);
	double lo = golden_num(exp, "bca_lo"), hi = golden_num(exp, "bca_hi");
	CHECK(t.n_tar + t.n_non == 600);
	CHECK_NEAR(ci.estimate[2], golden_num(exp, "linkability"), 1e-12);
	CHECK_NEAR(ci.link_a, golden_num(exp, "a_hat"), 1e-10);
	CHECK(ci.by_identity == 0 && ci.jack_groups[0] == 600 && !ci.jack_grouped);
	CHECK_NEAR(ci.link_lo, lo, 0.1 * (hi - lo));
	CHECK_NEAR(ci.link_hi, hi, 0.1 * (hi - lo));
	printf("#   by trial: linkability %.4f: BCa [%.4f, %.4f] (scipy [%.4f, %.4f]), a %.6f\n",
	       ci.estimate[2], ci.link_lo, ci.link_hi, lo, hi, ci.link_a);
	free(exp);
	vpa_trials_release(&t);
}

int main(void)
{
	RUN(test_trials);
	RUN(test_skipped);
	RUN(test_identities);
	RUN(test_errors);
	RUN(test_bca_golden);
	RUN(test_bca_golden_trials);
	RUN(test_contains_estimate);
	return DONE();
}
