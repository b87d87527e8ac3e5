/*
 * tests/unit/test_metrics_reliability.c - linkability_hist (hand values),
 * the reliability rules of metrics/reliability.c (perfect attacks on 12 and
 * 1,000 targets, the count and bin limits at their boundaries, min DCF), the
 * "unreliable" map of a record made by vpa_record_from_scores, and the
 * grouped sanity warnings.
 */
#include "attacks/attacks.h"
#include "metrics/metrics.h"
#include "tests/unit/harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Hand values (the 3-bin set of test_metrics_sv.c test_linkability_hand):
 * 30 mated 10x1 10x2 10x3, 30 non-mated 20x0 10x3; edges 0 1 2 3;
 * P(mated in bin) = (0, 1/3, 2/3), D = (0, 1, 1/3) at omega 1 ->
 * hist = 1/3 + 2/9 = 5/9; omega 2: D(2) = 3/5 -> 1/3 + 2/5 = 11/15 (bins
 * fixed at 3).  With the default rule (3 bins < 5) the integral takes 5 bins,
 * edges 0 .6 1.2 1.8 2.4 3: mated in bins 1, 3, 4 (1/3 each), non-mated in
 * 0 and 4; D = 1, 1, 0 there -> 2/3; omega 2: D(4) = 1/3 -> 7/9.
 * 20 mated 10x2 10x3, 20 non-mated 0: VoicePrivacy's 2 bins read 1/2; the
 * histogram integral uses 5 bins (edges 0 .6 1.2 1.8 2.4 3): mated in bins
 * 3 and 4, non-mated in bin 0, D = 1 where the mated are -> 1.
 */
static void test_hist_hand(void)
{
	double tar[30], non[30];
	for (int i = 0; i < 10; i++) {
		tar[i] = 1;
		tar[10 + i] = 2;
		tar[20 + i] = 3;
		non[i] = non[10 + i] = 0;
		non[20 + i] = 3;
	}
	struct vpa_scores s = {tar, 30, non, 30, NULL, NULL};
	struct vpa_linkability l;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_linkability(&s, 1, 3, &l, &e) == 0);
	CHECK_NEAR(l.dsys, 4.0 / 9, 1e-15);
	CHECK_NEAR(l.dsys_hist, 5.0 / 9, 1e-15);
	CHECK(l.n_bins_mated == 2);
	vpa_linkability_release(&l);
	CHECK(vpa_linkability(&s, 2, 3, &l, &e) == 0);
	CHECK_NEAR(l.dsys_hist, 11.0 / 15, 1e-15);
	vpa_linkability_release(&l);
	CHECK(vpa_linkability(&s, 1, 0, &l, &e) == 0);
	CHECK_NEAR(l.dsys, 4.0 / 9, 1e-15); /* VoicePrivacy's value is unchanged */
	CHECK_NEAR(l.dsys_hist, 2.0 / 3, 1e-15);
	vpa_linkability_release(&l);
	CHECK(vpa_linkability(&s, 2, 0, &l, &e) == 0);
	CHECK_NEAR(l.dsys_hist, 7.0 / 9, 1e-15);
	vpa_linkability_release(&l);

	struct vpa_scores s2 = {tar + 10, 20, non, 20, NULL, NULL};
	CHECK(vpa_linkability(&s2, 1, 0, &l, &e) == 0);
	CHECK(l.n_bins == 2 && l.n_bins_mated == 1);
	CHECK_NEAR(l.dsys, 0.5, 1e-15);
	CHECK_NEAR(l.dsys_hist, 1, 0);
	vpa_linkability_release(&l);
	/* bins fixed by the caller: the same 2 bins for both numbers */
	CHECK(vpa_linkability(&s2, 1, 2, &l, &e) == 0);
	CHECK_NEAR(l.dsys_hist, 1, 0); /* bin 1 holds only mated scores */
	vpa_linkability_release(&l);

	/* weights: a weight of 2 is the same as the trial twice */
	double w[30];
	for (int i = 0; i < 30; i++)
		w[i] = i < 10 ? 2 : 1; /* 20x1 10x2 10x3 */
	double tar2[40];
	for (int i = 0; i < 40; i++)
		tar2[i] = i < 20 ? 1 : i < 30 ? 2 : 3;
	struct vpa_scores sw = {tar, 30, non, 30, w, NULL}, sr = {tar2, 40, non, 30, NULL, NULL};
	struct vpa_linkability a, b;
	CHECK(vpa_linkability(&sw, 1, 0, &a, &e) == 0);
	CHECK(vpa_linkability(&sr, 1, 0, &b, &e) == 0);
	CHECK_NEAR(a.dsys_hist, b.dsys_hist, 1e-15);
	vpa_linkability_release(&a);
	vpa_linkability_release(&b);
}

/* n targets evenly in [10, 11), 5n non-targets in [0, 1): perfectly separated */
static void perfect(size_t n, double **tar, double **non)
{
	*tar = malloc(n * sizeof(double));
	*non = malloc(5 * n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		(*tar)[i] = 10 + (double)i / (double)n;
	for (size_t i = 0; i < 5 * n; i++)
		(*non)[i] = (double)i / (double)(5 * n);
}

struct seen {
	char path[16][32];
	char why[16][256];
	int n;
};
static void seen_emit(void *ctx, const char *path, const char *reason)
{
	struct seen *s = ctx;
	if (s->n < 16) {
		snprintf(s->path[s->n], 32, "%s", path);
		snprintf(s->why[s->n], 256, "%s", reason);
		s->n++;
	}
}
static const char *why_of(const struct seen *s, const char *path)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->path[i], path))
			return s->why[i];
	return NULL;
}

static void test_perfect_12_and_1000(void)
{
	struct vpa_err e;
	vpa_err_init(&e);
	size_t ns[2] = {12, 1000};
	for (int k = 0; k < 2; k++) {
		double *tar, *non;
		perfect(ns[k], &tar, &non);
		struct vpa_scores s = {tar, ns[k], non, 5 * ns[k], NULL, NULL};
		struct vpa_metrics m;
		CHECK(vpa_metrics_all(&s, NULL, &m, &e) == 0);
		CHECK(m.eer == 0);
		CHECK(m.linkability_hist == 1);
		struct seen sn = {.n = 0};
		vpa_metrics_reliability(&m, NULL, seen_emit, &sn);
		if (k == 0) {
			/* VoicePrivacy: one bin, D<->sys = 0 on a perfect attack */
			CHECK(m.linkability == 0);
			CHECK(!m.linkability_reliable);
			CHECK(strstr(m.linkability_why, "12 mated scores") != NULL);
			CHECK(strstr(m.linkability_why, "occupy 1 of 1 bins (fewer than 5)") != NULL);
			CHECK(why_of(&sn, "linkability") &&
			      !strcmp(why_of(&sn, "linkability"), m.linkability_why));
			CHECK(why_of(&sn, "eer") &&
			      !strcmp(why_of(&sn, "eer"),
				      "12 target trials and 60 non-target trials (fewer than 100 each)"));
			CHECK(why_of(&sn, "zebra") != NULL);
			CHECK(why_of(&sn, "linkability_hist") != NULL);
		} else {
			CHECK(m.linkability > 0.9 && m.linkability < 1);
			CHECK(m.linkability_reliable);
			CHECK(m.linkability_why[0] == 0);
			/* 5000 non-targets resolve min DCF at p 0.01: everything holds */
			CHECK(sn.n == 0);
		}
		free(tar);
		free(non);
	}
}

/* 100 bins whose mated fractions do not sum to exactly 1 in floating point
 * (0.001-spaced scores): linkability_hist must still be exactly 1, never
 * 1 + 1 ulp (a gate `max: 1` on it failed before the single division). */
static void test_perfect_hist_exactly_one(void)
{
	struct vpa_err e;
	vpa_err_init(&e);
	double *tar = xmalloc(1000 * sizeof *tar), *non = xmalloc(2000 * sizeof *non);
	for (int i = 0; i < 1000; i++)
		tar[i] = 2 + i / 1000.0;
	for (int i = 0; i < 2000; i++)
		non[i] = -3.999 + i / 1000.0; /* ascending: vpa_metrics_all takes sorted sets */
	struct vpa_scores s = {tar, 1000, non, 2000, NULL, NULL};
	struct vpa_metrics m;
	CHECK(vpa_metrics_all(&s, NULL, &m, &e) == 0);
	CHECK(m.linkability_hist == 1);
	CHECK(m.linkability_hist <= 1);
	free(tar);
	free(non);
}

/* Perfectly separated, but the mated scores sit in one bin of a wide range:
 * the integral over bin centres reads 1/2. */
static void test_one_bin_of_wide_range(void)
{
	double tar[1000], non[1000];
	for (int i = 0; i < 1000; i++) {
		tar[i] = 100 + i * 1e-6;
		non[i] = i * 1e-3;
	}
	struct vpa_scores s = {tar, 1000, non, 1000, NULL, NULL};
	struct vpa_metrics m;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_metrics_all(&s, NULL, &m, &e) == 0);
	CHECK_NEAR(m.linkability, 0.5, 1e-12);
	CHECK(m.linkability_hist == 1);
	CHECK(!m.linkability_reliable);
	CHECK(strstr(m.linkability_why, "occupy 1 of 100 bins") != NULL);
	CHECK(strstr(m.linkability_why, "misses 0.50") != NULL);
}

/* The count limits at their boundary, and min DCF's false-alarm step. */
static void test_limits(void)
{
	struct vpa_metrics m;
	memset(&m, 0, sizeof m);
	m.eer = m.eer_sweep = m.cllr = m.cllr_min = m.min_dcf = 0.1;
	m.zebra.dece = m.zebra.log10_lr_worst = 0.1;
	m.linkability = m.linkability_hist = 0.3;
	m.linkability_defined = 1;
	m.linkability_bins = 100;
	m.linkability_bins_mated = 5;
	m.n_tar = 100;
	m.n_non = 990;
	struct seen sn = {.n = 0};
	vpa_metrics_reliability(&m, NULL, seen_emit, &sn);
	CHECK(sn.n == 0);
	CHECK(m.linkability_reliable);

	m.n_tar = 99;
	m.n_non = 989;
	sn.n = 0;
	vpa_metrics_reliability(&m, NULL, seen_emit, &sn);
	CHECK(why_of(&sn, "eer") && !strcmp(why_of(&sn, "eer"), "99 target trials (fewer than 100)"));
	CHECK(why_of(&sn, "linkability") &&
	      !strcmp(why_of(&sn, "linkability"), "99 mated scores (fewer than 100)"));
	CHECK(why_of(&sn, "min_dcf") && strstr(why_of(&sn, "min_dcf"), "990 needed at p_target 0.01"));
	/* p_target 0.5: a false alarm costs 1 / N_non, 100 non-targets suffice for it */
	struct vpa_metrics_opts o;
	vpa_metrics_opts_init(&o);
	o.p_target = 0.5;
	m.n_tar = 100;
	m.n_non = 100;
	sn.n = 0;
	vpa_metrics_reliability(&m, &o, seen_emit, &sn);
	CHECK(sn.n == 0);

	/* 4 mated bins; an undefined value; all scores equal */
	m.linkability_bins_mated = 4;
	m.cllr = NAN;
	sn.n = 0;
	vpa_metrics_reliability(&m, &o, seen_emit, &sn);
	CHECK(why_of(&sn, "linkability") &&
	      !strcmp(why_of(&sn, "linkability"), "mated scores occupy 4 of 100 bins (fewer than 5)"));
	CHECK(why_of(&sn, "cllr") && !strcmp(why_of(&sn, "cllr"), "undefined value"));
	CHECK(why_of(&sn, "linkability_hist") == NULL);
	m.linkability_bins = 0;
	m.linkability = m.linkability_hist = 0;
	vpa_metrics_reliability(&m, &o, NULL, NULL);
	CHECK(!strcmp(m.linkability_why, "all scores are equal (no histogram)"));
	m.linkability_defined = 0;
	m.linkability = m.linkability_hist = NAN;
	sn.n = 0;
	vpa_metrics_reliability(&m, &o, seen_emit, &sn);
	CHECK(!m.linkability_reliable);
	CHECK(why_of(&sn, "linkability_hist") &&
	      !strcmp(why_of(&sn, "linkability_hist"), "undefined value"));
}

/* ---- records and warnings ----------------------------------------------- */

static struct vpa_json *record_of(struct vpa_run_ctx *ctx, size_t n, int reversed,
				  const char *sub, int chance)
{
	double *tar, *non;
	perfect(n, &tar, &non);
	struct vpa_trials t;
	vpa_trials_init(&t);
	t.tar = tar;
	t.n_tar = n;
	t.non = non;
	t.n_non = 5 * n;
	if (reversed) {
		t.tar = non;
		t.non = tar;
		t.n_tar = 5 * n;
		t.n_non = n;
	}
	struct vpa_eval_opts o;
	vpa_eval_opts_init(&o);
	o.chance_expected = chance;
	struct vpa_attack_out out = {vpa_json_arr(), vpa_json_arr()};
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_record_from_scores(ctx, "a", sub, -1, &t, &o, &out, NULL, &e) == 0);
	struct vpa_json *rec = out.records->n ? vpa_json_clone(out.records->items[0]) : NULL;
	vpa_json_free(out.records);
	vpa_json_free(out.figures);
	free(tar);
	free(non);
	return rec;
}

static void test_record(void)
{
	struct vpa_json *warn = vpa_json_arr();
	struct vpa_run_ctx ctx = {"x.yaml", ".", 1, 1, warn, NULL};
	struct vpa_json *r12 = record_of(&ctx, 12, 0, NULL, 0);
	struct vpa_json *r1k = record_of(&ctx, 1000, 0, NULL, 0);
	CHECK(r12 && r1k);
	if (r12 && r1k) {
		const struct vpa_json *m = vpa_json_get(r12, "metrics");
		const struct vpa_json *u = vpa_json_get(r12, "unreliable");
		CHECK(vpa_json_get_num(m, "linkability_hist", NAN) == 1);
		const struct vpa_json *rel = vpa_json_get(m, "linkability_reliable");
		CHECK(rel && rel->type == VPA_JSON_BOOL && !rel->boolean);
		CHECK(vpa_json_get(m, "tied_fraction") != NULL && vpa_json_get(m, "frac_tied") == NULL);
		const char *why = vpa_json_get_str(u, "linkability");
		CHECK(why && strstr(why, "12 mated scores (fewer than 100)") == NULL &&
		      strstr(why, "12 mated scores and 60 non-mated scores (fewer than 100 each)"));
		CHECK(why && strstr(why, "unreliable") == NULL);
		CHECK(vpa_json_get_str(u, "eer") != NULL);

		m = vpa_json_get(r1k, "metrics");
		u = vpa_json_get(r1k, "unreliable");
		CHECK(vpa_json_get_num(m, "linkability_hist", NAN) == 1);
		rel = vpa_json_get(m, "linkability_reliable");
		CHECK(rel && rel->type == VPA_JSON_BOOL && rel->boolean);
		CHECK(u && u->type == VPA_JSON_OBJ && u->n == 0);
	}
	vpa_json_free(r12);
	vpa_json_free(r1k);
	vpa_json_free(warn);
}

static int count_with(const struct vpa_json *w, const char *s)
{
	int n = 0;
	for (size_t i = 0; i < w->n; i++)
		n += strstr(w->items[i]->str, s) != NULL;
	return n;
}

static void test_grouped_warnings(void)
{
	struct vpa_json *warn = vpa_json_arr();
	struct vpa_run_ctx ctx = {"x.yaml", ".", 1, 1, warn, vpa_warn_groups_new()};
	/* three reversed sets of 12 + 60: the finding and the count warnings of
	 * the three come as one line each, with the count */
	const char *subs[3] = {"one", "two", "three"};
	for (int i = 0; i < 3; i++)
		vpa_json_free(record_of(&ctx, 12, 1, subs[i], 0));
	/* the ignorant attacker's perfectly reversed scores: anti-correlated with
	 * identity is a finding for it too (issue 25: it was left out) */
	vpa_json_free(record_of(&ctx, 12, 1, "ignorant", 1));
	CHECK(warn->n == 0); /* nothing until the flush */
	vpa_warn_groups_flush(&ctx);
	CHECK(ctx.warn_groups == NULL);
	/* the finding replaces the weaker "may be reversed" */
	CHECK(count_with(warn, "scores may be reversed") == 0);
	CHECK(count_with(warn, "a: the scores are anti-correlated with identity in 4 records: an "
			       "attacker who reverses them reaches EER 0.0%") == 1);
	CHECK(count_with(warn, "a: fewer than 100 target trials in 4 records (60)") == 1);
	CHECK(count_with(warn, "a: fewer than 100 non-target trials in 4 records (12)") == 1);
	for (size_t i = 0; i < warn->n; i++)
		CHECK(strstr(warn->items[i]->str, "ignorant") == NULL);
	vpa_json_free(warn);

	/* alone: the record's own line */
	warn = vpa_json_arr();
	struct vpa_run_ctx c2 = {"x.yaml", ".", 1, 1, warn, vpa_warn_groups_new()};
	vpa_json_free(record_of(&c2, 12, 1, "ignorant", 0));
	vpa_warn_groups_flush(&c2);
	CHECK(count_with(warn, "a.ignorant: the scores are anti-correlated with identity "
			       "(threshold-sweep EER 100.0%, 95% interval 100.0-100.0%, above 50%): "
			       "an attacker who reverses them reaches EER 0.0%") == 1);
	vpa_json_free(warn);
}

static void push(void *ctx, const char *msg);

/*
 * The sweep EER above 50%: a finding when its interval lies above 50% (for
 * every attacker), a hint when it does not (not for an attacker expected at
 * chance), nothing at or below 50%.
 */
static void test_reversal_warnings(void)
{
	struct vpa_metrics m;
	memset(&m, 0, sizeof m);
	m.n_tar = m.n_non = 1000;
	m.linkability_defined = m.linkability_reliable = 1;
	m.cllr = 0.9;
	m.eer_sweep = 0.53;
	m.eer_flipped = 0.47;
	vpa_metrics_judge_reversal(&m, 0.48, 0.58); /* borderline: the interval reaches 0.5 */
	CHECK(!m.anti_correlated);
	for (int chance = 0; chance < 2; chance++) {
		struct vpa_json *w = vpa_json_arr();
		vpa_sanity_warnings("set", &m, chance, push, w);
		CHECK(count_with(w, "anti-correlated") == 0);
		CHECK(count_with(w, "set: EER (threshold sweep) above 50% (53.0%): scores may be "
				    "reversed") == !chance);
		vpa_json_free(w);
	}
	m.eer_sweep = 0.68;
	m.eer_flipped = 0.31;
	vpa_metrics_judge_reversal(&m, 0.62, 0.71);
	CHECK(m.anti_correlated);
	for (int chance = 0; chance < 2; chance++) {
		struct vpa_json *w = vpa_json_arr();
		vpa_sanity_warnings("set", &m, chance, push, w);
		CHECK(w->n == 1);
		CHECK(count_with(w, "set: the scores are anti-correlated with identity (threshold-sweep "
				    "EER 68.0%, 95% interval 62.0-71.0%, above 50%): an attacker who "
				    "reverses them reaches EER 31.0%") == 1);
		vpa_json_free(w);
	}
}

static void push(void *ctx, const char *msg)
{
	vpa_json_push(ctx, vpa_json_str(msg));
}

/* Cllr above 1 bit: a warning that points to Cllr_min. */
static void test_cllr_warning(void)
{
	double tar[200], non[200];
	for (int i = 0; i < 200; i++) {
		tar[i] = 20 + i % 7;      /* overconfident: separated but huge LLRs */
		non[i] = 21 + i % 5;
	}
	vpa_sort_scores(tar, NULL, 200);
	vpa_sort_scores(non, NULL, 200);
	struct vpa_scores s = {tar, 200, non, 200, NULL, NULL};
	struct vpa_metrics m;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_metrics_all(&s, NULL, &m, &e) == 0);
	CHECK(m.cllr > 1);
	struct vpa_json *w = vpa_json_arr();
	vpa_sanity_warnings("set", &m, 0, push, w);
	CHECK(count_with(w, "set: Cllr above 1 bit (") == 1);
	CHECK(count_with(w, "not calibrated log-likelihood ratios") == 1);
	CHECK(count_with(w, "read Cllr_min") == 1);
	vpa_json_free(w);
	/* calibrated scores (Cllr <= 1): no such line */
	for (int i = 0; i < 200; i++) {
		tar[i] = 1 + (i % 7) * 0.1;
		non[i] = -1 - (i % 5) * 0.1;
	}
	vpa_sort_scores(tar, NULL, 200);
	vpa_sort_scores(non, NULL, 200);
	CHECK(vpa_metrics_all(&s, NULL, &m, &e) == 0);
	CHECK(m.cllr < 1);
	w = vpa_json_arr();
	vpa_sanity_warnings("set", &m, 0, push, w);
	CHECK(count_with(w, "Cllr above") == 0);
	vpa_json_free(w);
}

int main(void)
{
	RUN(test_hist_hand);
	RUN(test_perfect_12_and_1000);
	RUN(test_perfect_hist_exactly_one);
	RUN(test_one_bin_of_wide_range);
	RUN(test_limits);
	RUN(test_record);
	RUN(test_grouped_warnings);
	RUN(test_reversal_warnings);
	RUN(test_cllr_warning);
	return DONE();
}
