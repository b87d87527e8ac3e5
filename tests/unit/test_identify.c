/*
 * tests/unit/test_identify.c - the identification attack (ranks, normalised
 * ranks, top-k on hand-made score matrices; the gap-counted EER against the
 * plain metrics on the explicit trial lists, ties included; the study on the
 * simulation) and the slicing attack (linkability falls as the trial
 * utterances get shorter; uncut slices equal the linkage attack).
 */
#include "attacks/attacks.h"
#include "targets/anon.h"
#include "scenarios/scenario.h"
#include "harness.h"

#include <stdlib.h>

/* Ranks by hand (ties count half). */
static void test_ranks_hand(void)
{
	/* rows: population speakers, columns: probes */
	const float S[4 * 3] = {
		5, 1, 3, /* row 0 */
		2, 4, 3, /* row 1 */
		5, 0, 7, /* row 2 */
		1, 4, 2, /* row 3 */
	};
	const uint32_t truth[3] = {0, 1, 0};
	struct vpa_ident_matrix m;
	struct vpa_ident_eval e;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_ident_prepare(S, 4, 3, truth, &m, &err) == 0);
	/* whole population: probe ranks 1.5 (tie with row 2), 1.5 (tie with row 3),
	   2.5 (row 2 higher, row 1 tied) */
	const uint32_t all[4] = {0, 1, 2, 3};
	CHECK(vpa_ident_subset(&m, all, 4, 2, 1, 0, &e, &err) == 0);
	CHECK_NEAR(e.mean_rank, 5.5 / 3, 1e-15);
	CHECK_NEAR(e.mean_norm_rank, 5.5 / 12, 1e-15);
	CHECK_NEAR(e.chance_rank, 2.5, 0);
	CHECK_NEAR(e.top1, 0, 0);   /* 1.5 is not within the top 1 */
	CHECK_NEAR(e.topk, 2.0 / 3, 1e-15); /* k = 2 */
	CHECK_NEAR(e.top5, 1, 0);
	CHECK(e.n_target == 3 && e.n_nontarget == 9 && e.population == 4);
	CHECK(isnan(e.linkability)); /* fewer than 10 probes */
	/* without row 2, in another order: ranks 1, 1.5, 1.5 */
	const uint32_t sub[3] = {3, 0, 1};
	CHECK(vpa_ident_subset(&m, sub, 3, 1, 1, 0, &e, &err) == 0);
	CHECK_NEAR(e.mean_rank, 4.0 / 3, 1e-15);
	CHECK_NEAR(e.mean_norm_rank, 4.0 / 9, 1e-15);
	CHECK_NEAR(e.chance_rank, 2, 0);
	CHECK_NEAR(e.top1, 1.0 / 3, 1e-15);
	CHECK_NEAR(e.topk, 1.0 / 3, 1e-15); /* k = 1 */
	CHECK(e.n_nontarget == 6);
	/* the same numbers from vpa_identification on the probe-major matrix */
	double P[3 * 3];
	size_t tr[3];
	for (int t = 0; t < 3; t++) {
		for (int j = 0; j < 3; j++)
			P[t * 3 + j] = S[sub[j] * 3 + t];
		tr[t] = truth[t] == 0 ? 1 : 2;
	}
	struct vpa_ident id;
	CHECK(vpa_identification(P, 3, 3, tr, &id, &err) == 0);
	CHECK_NEAR(id.mean_rank, 4.0 / 3, 1e-15);
	CHECK_NEAR(id.top1, 1.0 / 3, 1e-15);
	/* every probe's speaker must be in the population */
	const uint32_t bad[2] = {1, 2};
	CHECK(vpa_ident_subset(&m, bad, 2, 1, 1, 0, &e, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "probe 1: its speaker is not in the population") != NULL);
	vpa_ident_matrix_release(&m);
}

/* The gap-counted PAV gives exactly the ROCCH-EER and Cllr_min of the full
 * sorted score set, with scores on a coarse grid (many target/non-target
 * ties); linkability equals vpa_linkability on the explicit lists. */
static void test_eer_exact(void)
{
	enum { R = 60, T = 80, NE = 20 };
	float *S = malloc(R * T * sizeof(float));
	uint32_t truth[T];
	struct vpa_rng r;
	vpa_rng_seed(&r, 7);
	for (int t = 0; t < T; t++)
		truth[t] = (uint32_t)vpa_rng_below(&r, NE);
	for (int i = 0; i < R; i++)
		for (int t = 0; t < T; t++) {
			double x = vpa_rng_normal(&r) + (truth[t] == (uint32_t)i ? 1.5 : 0);
			S[i * T + t] = (float)(floor(x * 4) / 4); /* a 0.25 grid: ties */
		}
	struct vpa_ident_matrix m;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_ident_prepare(S, R, T, truth, &m, &err) == 0);
	for (int trial = 0; trial < 4; trial++) {
		/* the enrolment rows, then a random share of the others */
		uint32_t rows[R];
		size_t n = 0;
		for (int i = 0; i < R; i++)
			if (i < NE || vpa_rng_uniform(&r) < 0.25 * (trial + 1))
				rows[n++] = (uint32_t)i;
		struct vpa_ident_eval e;
		CHECK(vpa_ident_subset(&m, rows, n, 3, 1, 0, &e, &err) == 0);
		double *tar = malloc(T * sizeof(double)), *non = malloc(T * n * sizeof(double));
		size_t nn = 0;
		for (int t = 0; t < T; t++) {
			tar[t] = S[truth[t] * T + t];
			for (size_t j = 0; j < n; j++)
				if (rows[j] != truth[t])
					non[nn++] = S[rows[j] * T + t];
		}
		vpa_sort_scores(tar, NULL, T);
		vpa_sort_scores(non, NULL, nn);
		struct vpa_scores sc = {tar, T, non, nn, NULL, NULL};
		struct vpa_metrics mm;
		struct vpa_metrics_opts o;
		vpa_metrics_opts_init(&o);
		CHECK(vpa_metrics_all(&sc, &o, &mm, &err) == 0);
		CHECK(nn == e.n_nontarget);
		CHECK_NEAR(e.eer, mm.eer, 1e-12);
		CHECK_NEAR(e.cllr_min, mm.cllr_min, 1e-12);
		CHECK_NEAR(e.linkability, mm.linkability, 1e-12);
		CHECK(mm.tied_fraction > 0.5); /* the grid made ties */
		/* ranks against vpa_identification on the probe-major matrix */
		double *P = malloc(T * n * sizeof(double));
		size_t tr[T];
		for (int t = 0; t < T; t++)
			for (size_t j = 0; j < n; j++) {
				P[t * n + j] = S[rows[j] * T + t];
				if (rows[j] == truth[t])
					tr[t] = j;
			}
		struct vpa_ident id;
		CHECK(vpa_identification(P, T, n, tr, &id, &err) == 0);
		CHECK_NEAR(e.mean_rank, id.mean_rank, 1e-12);
		CHECK_NEAR(e.mean_norm_rank, id.mean_norm_rank, 1e-12);
		CHECK_NEAR(e.top1, id.top1, 0);
		CHECK_NEAR(e.top10, id.top10, 0);
		free(P);
		free(tar);
		free(non);
	}
	vpa_ident_matrix_release(&m);
	free(S);
}

static int run_yaml(const char *y, int threads, struct vpa_json **R, struct vpa_err *err)
{
	struct vpa_scenario *s = NULL;
	int rc = vpa_scenario_parse("t.yaml", ".", y, strlen(y), &s, err);
	if (!rc) {
		struct vpa_run_opts o = {0, 0, threads, 1};
		rc = vpa_scenario_run(s, &o, R, err);
	}
	vpa_scenario_free(s);
	return rc;
}

static const struct vpa_json *rec(const struct vpa_json *R, const char *attack, const char *sub,
				  double layer)
{
	const struct vpa_json *recs = vpa_json_get(R, "records");
	for (size_t i = 0; i < recs->n; i++) {
		const struct vpa_json *x = recs->items[i];
		const struct vpa_json *l = vpa_json_get(x, "layer");
		if (!strcmp(vpa_json_get_str(x, "attack"), attack) &&
		    !strcmp(vpa_json_get_str(x, "sub"), sub) && l && l->type == VPA_JSON_NUM &&
		    l->num == layer)
			return vpa_json_get(x, "metrics");
	}
	return NULL;
}

static double num(const struct vpa_json *m, const char *k)
{
	return m ? vpa_json_get_num(m, k, NAN) : NAN;
}

/* The study on the simulation: sizes 10, 20, 40, 80, 130; repeats; ordering. */
static void test_study(void)
{
	const char *y =
		"name: t\nseed: 3\ntargets:\n  - {id: sim, kind: anonymised_speech, simulate: "
		"{test_speakers: 10, train_speakers: 150, pool_speakers: 300, population: 120}, "
		"anonymiser: {n: 60, n_star: 30}}\n"
		"attacks:\n  - {id: id, kind: identification, target: sim, attackers: [baseline, "
		"ignorant, semi_informed], repeats: 4, top_k: 5}\n";
	struct vpa_json *R1 = NULL, *R2 = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(run_yaml(y, 1, &R1, &err) == 0);
	if (!R1) {
		printf("#   %s\n", err.msg);
		return;
	}
	CHECK(run_yaml(y, 2, &R2, &err) == 0);
	const double sizes[5] = {10, 20, 40, 80, 130};
	CHECK(vpa_json_get(R1, "records")->n == 15);
	double prev_rank = 0;
	for (int z = 0; z < 5; z++) {
		const struct vpa_json *b = rec(R1, "id", "baseline", sizes[z]);
		const struct vpa_json *ig = rec(R1, "id", "ignorant", sizes[z]);
		const struct vpa_json *se = rec(R1, "id", "semi_informed", sizes[z]);
		CHECK(b && ig && se);
		if (!b || !ig || !se)
			continue;
		CHECK_NEAR(num(b, "population"), sizes[z], 0);
		CHECK_NEAR(num(b, "repeats"), (z == 0 || z == 4) ? 1 : 4, 0);
		CHECK_NEAR(num(b, "chance_rank"), (sizes[z] + 1) / 2, 1e-12);
		CHECK_NEAR(num(b, "n_target"), 200, 0); /* 10 speakers x 20 trial utterances */
		CHECK_NEAR(num(b, "n_nontarget"), 200 * (sizes[z] - 1), 0);
		CHECK(num(b, "eer_min") <= num(b, "eer") && num(b, "eer") <= num(b, "eer_max"));
		CHECK(num(b, "topk_min") <= num(b, "topk") && num(b, "topk") <= num(b, "topk_max"));
		if (z == 0 || z == 4)
			CHECK_NEAR(num(b, "eer_std"), 0, 0);
		/* the unprotected baseline ranks the speaker near the top; the
		   anonymised speech is much closer to chance */
		CHECK(num(b, "mean_norm_rank") < 0.2 * num(b, "chance_norm_rank"));
		CHECK(num(ig, "mean_norm_rank") > 0.5 * num(ig, "chance_norm_rank"));
		CHECK(num(se, "mean_norm_rank") < num(ig, "mean_norm_rank"));
		CHECK(num(b, "eer") < num(se, "eer") && num(se, "eer") < num(ig, "eer"));
		/* a larger population can only push the true speaker down */
		CHECK(num(b, "mean_rank") >= prev_rank);
		prev_rank = num(b, "mean_rank");
		/* threads do not change anything */
		const struct vpa_json *b2 = R2 ? rec(R2, "id", "baseline", sizes[z]) : NULL;
		CHECK(num(b2, "eer") == num(b, "eer") && num(b2, "mean_rank") == num(b, "mean_rank"));
	}
	CHECK(num(rec(R1, "id", "baseline", 130), "top1") < num(rec(R1, "id", "baseline", 10), "top1"));
	/* two figures per attacker, lines against population size */
	const struct vpa_json *figs = vpa_json_get(vpa_json_get(R1, "attacks")->items[0], "figures");
	CHECK(figs->n == 6);
	CHECK_STR(vpa_json_get_str(figs->items[0], "type"), "lines");
	CHECK_STR(vpa_json_get_str(figs->items[0], "id"), "id-baseline-eer");
	CHECK(vpa_json_get(figs->items[0], "series")->n == 6);
	CHECK(vpa_json_get(figs->items[1], "series")->n == 7);
	vpa_json_free(R1);
	vpa_json_free(R2);
}

static void expect_error(const char *y, const char *msg)
{
	struct vpa_scenario *s = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = vpa_scenario_parse("t.yaml", ".", y, strlen(y), &s, &err);
	CHECK(rc == VPA_EINPUT);
	if (!strstr(err.msg, msg))
		printf("#   got '%s', expected '%s'\n", err.msg, msg);
	CHECK(strstr(err.msg, msg) != NULL);
	vpa_scenario_free(s);
}

static void test_validation(void)
{
	expect_error("name: t\ntargets:\n  - {id: sim, kind: anonymised_speech}\n"
		     "attacks:\n  - {id: i, kind: identification, target: sim}\n",
		     "t.yaml:5:5: identification needs extra population speakers");
	expect_error("name: t\ntargets:\n  - {id: sim, kind: anonymised_speech}\n"
		     "attacks:\n  - {id: s, kind: slicing, target: sim}\n",
		     "t.yaml:5:5: slicing a simulated target needs `durations`");
	expect_error("name: t\ntargets:\n  - {id: sim, kind: anonymised_speech}\n"
		     "attacks:\n  - {id: s, kind: slicing, target: sim, durations: [2, 1.5]}\n",
		     "t.yaml:5:56: a duration must be a whole number of seconds in [1, 3600], got '1.5'");
	expect_error("name: t\ntargets:\n  - {id: sim, kind: anonymised_speech}\n"
		     "attacks:\n  - {id: s, kind: slicing, target: sim, durations: [2, 2]}\n",
		     "duration 2 is listed twice");
	/* a key written where it does not apply: blamed at the key */
	expect_error("name: t\ntargets:\n  - {id: sim, kind: anonymised_speech}\n"
		     "attacks:\n  - {id: s, kind: slicing, target: sim, slices: [{duration: 2}]}\n",
		     "t.yaml:5:41: `slices` is for imported targets");
	expect_error("name: t\ntargets:\n  - {id: sim, kind: anonymised_speech, simulate: {population: 10}}\n"
		     "attacks:\n  - {id: i, kind: identification, target: sim, top_k: 0}\n",
		     "'top_k' must be an integer");
}

/* Slicing on the simulation: shorter trials link worse; uncut = linkage. */
static void test_slicing(void)
{
	const char *y =
		"name: t\nseed: 2\ntargets:\n  - {id: sim, kind: anonymised_speech, simulate: "
		"{test_speakers: 20, train_speakers: 200, pool_speakers: 400}, anonymiser: {n: 100, "
		"n_star: 50}}\nattacks:\n  - {id: s, kind: slicing, target: sim, attackers: [baseline, "
		"semi_informed, informed], durations: [8, 1, 2, 4, 30]}\n"
		"  - {id: l, kind: linkage, target: sim, attackers: [baseline, semi_informed, informed]}\n";
	struct vpa_json *R = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(run_yaml(y, 1, &R, &err) == 0);
	if (!R) {
		printf("#   %s\n", err.msg);
		return;
	}
	const char *subs[3] = {"baseline", "semi_informed", "informed"};
	const double d[4] = {1, 2, 4, 8};
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i + 1 < 4; i++) {
			double l0 = num(rec(R, "s", subs[k], d[i]), "linkability");
			double l1 = num(rec(R, "s", subs[k], d[i + 1]), "linkability");
			double e0 = num(rec(R, "s", subs[k], d[i]), "eer");
			double e1 = num(rec(R, "s", subs[k], d[i + 1]), "eer");
			printf("# %s %gs: linkability %.4f EER %.4f\n", subs[k], d[i], l0, e0);
			CHECK(l0 < l1);
			CHECK(e0 > e1);
		}
		/* 30 s is longer than every simulated utterance: nothing is cut */
		const struct vpa_json *recs = vpa_json_get(R, "records");
		double lk = NAN;
		for (size_t i = 0; i < recs->n; i++)
			if (!strcmp(vpa_json_get_str(recs->items[i], "attack"), "l") &&
			    !strcmp(vpa_json_get_str(recs->items[i], "sub"), subs[k]))
				lk = num(vpa_json_get(recs->items[i], "metrics"), "linkability");
		CHECK(num(rec(R, "s", subs[k], 30), "linkability") == lk);
	}
	const struct vpa_json *figs = vpa_json_get(vpa_json_get(R, "attacks")->items[0], "figures");
	CHECK(figs->n == 2);
	CHECK_STR(vpa_json_get_str(figs->items[0], "id"), "s-linkability");
	const struct vpa_json *x0 = vpa_json_get(vpa_json_get(figs->items[0], "series")->items[0], "x");
	CHECK(x0->n == 5 && x0->items[0]->num == 1 && x0->items[4]->num == 30); /* ascending */
	vpa_json_free(R);
}

int main(void)
{
	RUN(test_ranks_hand);
	RUN(test_eer_exact);
	RUN(test_study);
	RUN(test_validation);
	RUN(test_slicing);
	return DONE();
}
