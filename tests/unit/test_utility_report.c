/*
 * tests/unit/test_utility_report.c - issue 30 item 4: the privacy-utility
 * trade-off in words (reports/sec_utility.c vpa_utility_sentences, shown in
 * the executive summary and the utility section) on hand-made results DOMs:
 * a WER cost, none, a WER gain, a cost below the printed precision, no
 * defined EER, a UAR only, a sweep; and a property check over 300 random
 * DOMs that every sentence printed is true (the EER printed is the lowest
 * defined EER of the pooled attackers but the baseline, the attacker named
 * has it, the WER words match the sign of the change and the numbers are
 * the DOM's).  Then the document: the utility section, its tables and the
 * privacy-utility figure outside the "Sweep" subsection; the figure's points
 * (attacks/privacy_utility.c) on records of two sweep values.
 */
#include "harness.h"

#include "attacks/attacks.h"
#include "base/json.h"
#include "reports/doc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* results with one linkage attack "link" on target "a"; recs: the records' JSON */
static struct vpa_json *dom(const char *audio, const char *recs, const char *extra)
{
	char *t = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&t, &n);
	fprintf(f,
		"{\"targets\": [{\"id\": \"a\", \"kind\": \"anonymised_speech\", \"info\": "
		"{\"audio\": {%s}}}], \"attacks\": [{\"id\": \"link\", \"kind\": \"linkage\", "
		"\"target\": \"a\", \"figures\": []}], \"records\": [%s]%s}",
		audio, recs, extra ? extra : "");
	fclose(f);
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *j = vpa_json_parse("r.json", t, n, &err);
	if (!j)
		printf("# %s\n# %s\n", err.msg, t);
	free(t);
	return j;
}

static char *sentences(struct vpa_json *r)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_utility_sentences(r, &b);
	char *s = xstrdup(vpa_buf_str(&b));
	vpa_buf_release(&b);
	return s;
}

#define REC(sub, eer, util) \
	"{\"attack\": \"link\", \"sub\": \"" sub "\", \"sweep\": null, \"metrics\": {\"eer\": " eer util "}}"
#define W(o, a, d) ", \"wer_orig\": " o ", \"wer_anon\": " a ", \"wer_increase\": " d

static void expect(const char *audio, const char *recs, const char *want)
{
	struct vpa_json *r = dom(audio, recs, NULL);
	CHECK(r != NULL);
	if (!r)
		return;
	char *s = sentences(r);
	CHECK_STR(s, want);
	free(s);
	vpa_json_free(r);
}

static void test_cases(void)
{
	const char *au = "\"wer_anon\": {\"wer\": 0.08, \"recogniser\": \"pocketsphinx\"}";
	/* the example: the strongest of three, the baseline left out */
	expect(au,
	       REC("baseline", "0.01", W("0.053", "0.08", "0.027")) ","
	       REC("ignorant", "0.4", W("0.053", "0.08", "0.027")) ","
	       REC("semi_informed", "0.15", W("0.053", "0.08", "0.027")) ","
	       REC("lazy_informed", "0.3", W("0.053", "0.08", "0.027")) ","
	       "{\"attack\": \"link\", \"sub\": \"semi_informed/f\", \"gender\": \"f\", \"metrics\": "
	       "{\"eer\": 0.02}}",
	       "a: EER 15.0% for the semi-informed attacker (the strongest) at a WER cost of +2.7 "
	       "points (WER 5.3% on the original trials, 8.0% anonymised; pocketsphinx).");
	/* no cost */
	expect("", REC("ignorant", "0.4", W("0.05", "0.05", "0")),
	       "a: EER 40.0% for the ignorant attacker (the strongest) at no WER cost (WER 5.0% on "
	       "the original trials, 5.0% anonymised; from your hyp files).");
	/* a gain */
	expect("", REC("ignorant", "0.4", W("0.054", "0.05", "-0.004")),
	       "a: EER 40.0% for the ignorant attacker (the strongest) with the WER lower after "
	       "anonymisation (-0.4 points) (WER 5.4% on the original trials, 5.0% anonymised; from "
	       "your hyp files).");
	/* a cost that rounds to 0.0 at one decimal is not printed as +0.0 */
	expect("", REC("ignorant", "0.4", W("0.05", "0.0502", "0.0002")),
	       "a: EER 40.0% for the ignorant attacker (the strongest) at a WER cost of +0.02 "
	       "points (WER 5.0% on the original trials, 5.0% anonymised; from your hyp files).");
	/* no defined EER */
	expect("", REC("ignorant", "null", W("0.05", "0.06", "0.01")),
	       "a: no attacker's EER is defined at a WER cost of +1.0 points (WER 5.0% on the "
	       "original trials, 6.0% anonymised; from your hyp files).");
	/* an emotion recogniser only */
	expect("", REC("semi_informed", "0.15", ", \"uar_orig\": 0.6523, \"uar_anon\": 0.361111"),
	       "a: EER 15.0% for the semi-informed attacker (the strongest). The emotion "
	       "recogniser's UAR goes from 65.2% to 36.1% (-29.1 points).");
	/* nothing measured: nothing said */
	expect("", REC("semi_informed", "0.15", ""), "");
}

static void test_sweep(void)
{
	struct vpa_json *r = dom("",
				 "{\"attack\": \"link\", \"sub\": \"ignorant\", \"sweep\": 0.5, \"metrics\": "
				 "{\"eer\": 0.3, \"wer_orig\": 0.05, \"wer_anon\": 0.09, \"wer_increase\": 0.04}},"
				 "{\"attack\": \"link\", \"sub\": \"ignorant\", \"sweep\": 0.9, \"metrics\": "
				 "{\"eer\": 0.1, \"wer_orig\": 0.05, \"wer_anon\": 0.06, \"wer_increase\": 0.01}}",
				 ", \"sweep\": {\"param\": \"alpha\", \"values\": [0.5, 0.9]}");
	char *s = sentences(r);
	CHECK_STR(s, "a at alpha = 0.5: EER 30.0% for the ignorant attacker (the strongest) at a WER "
		     "cost of +4.0 points (WER 5.0% on the original trials, 9.0% anonymised; from your "
		     "hyp files). a at alpha = 0.9: EER 10.0% for the ignorant attacker (the strongest) "
		     "at a WER cost of +1.0 points (WER 5.0% on the original trials, 6.0% anonymised; "
		     "from your hyp files).");
	free(s);
	vpa_json_free(r);
}

/* every sentence true: random attackers, EERs (some undefined) and WERs */
static void test_property(void)
{
	static const char *const subs[] = {"baseline", "ignorant", "lazy_informed", "semi_informed",
					   "informed"};
	srand(30);
	int bad = 0;
	for (int it = 0; it < 300 && !bad; it++) {
		char recs[4096] = "", one[512];
		double eer[5], best = INFINITY;
		int who = -1;
		double wo = (rand() % 400) / 1000.0, wa = (rand() % 3 ? (rand() % 400) / 1000.0 : wo);
		for (int k = 0; k < 5; k++) {
			eer[k] = rand() % 5 ? (rand() % 1001) / 1000.0 : NAN;
			snprintf(one, sizeof(one),
				 "%s{\"attack\": \"link\", \"sub\": \"%s\", \"metrics\": {\"eer\": %s%.3f, "
				 "\"wer_orig\": %.3f, \"wer_anon\": %.3f, \"wer_increase\": %.17g}}",
				 k ? "," : "", subs[k], isnan(eer[k]) ? "null, \"x\": " : "",
				 isnan(eer[k]) ? 0.0 : eer[k], wo, wa, wa - wo);
			strcat(recs, one);
			if (k && isfinite(eer[k]) && eer[k] < best) {
				best = eer[k];
				who = k;
			}
		}
		struct vpa_json *r = dom("", recs, NULL);
		char *s = r ? sentences(r) : xstrdup("");
		char want[256];
		if (who < 0) {
			bad |= !strstr(s, "no attacker's EER is defined");
		} else {
			char name[32];
			snprintf(name, sizeof(name), "%s", subs[who]);
			for (char *p = name; *p; p++)
				*p = *p == '_' ? '-' : *p;
			snprintf(want, sizeof(want), "EER %.1f%% for the %s attacker (the strongest)",
				 100 * best, name);
			bad |= !strstr(s, want);
		}
		if (wa > wo)
			bad |= !strstr(s, " at a WER cost of +");
		else if (wa < wo)
			bad |= !strstr(s, " with the WER lower after anonymisation (-");
		else
			bad |= !strstr(s, " at no WER cost");
		snprintf(want, sizeof(want), "(WER %.1f%% on the original trials, %.1f%% anonymised",
			 100 * wo, 100 * wa);
		bad |= !strstr(s, want);
		if (bad)
			printf("# case %d: %s\n", it, s);
		free(s);
		vpa_json_free(r);
	}
	CHECK(!bad);
}

static void test_document(void)
{
	const char *fig = ", \"figures\": [{\"type\": \"lines\", \"id\": \"privacy-utility\", \"title\": "
			  "\"P\", \"xlabel\": \"x\", \"ylabel\": \"y\", \"series\": [{\"name\": \"link "
			  "(ignorant)\", \"x\": [2.7], \"y\": [15]}]}], \"sweep\": null";
	struct vpa_json *r = dom(
		"\"wer_orig\": {\"wer\": 0.053}, \"wer_anon\": {\"wer\": 0.08}, \"rho_f0\": 0.8, "
		"\"rho_f0_utterances\": 12, \"ser\": {\"model\": \"ser.onnx\", \"protocol\": \"one model\", "
		"\"labels\": [\"ang\", \"sad\"], \"uar_orig\": 1, \"uar_anon\": 0.5, \"original\": "
		"{\"accuracy\": 1, \"recall\": {\"ang\": 1, \"sad\": 1}, \"support\": {\"ang\": 2, \"sad\": 1}, "
		"\"confusion\": [[2, 0], [0, 1]]}, \"anonymised\": {\"accuracy\": 0.667, \"recall\": "
		"{\"ang\": 1, \"sad\": 0}, \"confusion\": [[2, 0], [1, 0]]}}",
		REC("lazy_informed", "0.15", W("0.053", "0.08", "0.027") ", \"gvd\": -3.5") ","
		REC("semi_informed", "0.18", W("0.053", "0.08", "0.027")), fig);
	CHECK(r != NULL);
	if (!r)
		return;
	struct vpa_doc d;
	vpa_doc_build(r, &d);
	int head = 0, sweep = 0, figs = 0, tables = 0, summary = 0;
	for (size_t i = 0; i < d.n; i++) {
		const struct vpa_blk *b = &d.b[i];
		if (b->kind == VPA_B_HEAD && b->id && !strcmp(b->id, "utility"))
			head = 1;
		if (b->kind == VPA_B_HEAD && b->id && !strcmp(b->id, "sweep"))
			sweep = 1;
		if (b->kind == VPA_B_FIG && b->id && !strcmp(b->id, "privacy-utility"))
		{
			figs++;
			CHECK(b->fig == 0);
		}
		if (head && b->kind == VPA_B_TABLE && b->text && !strncmp(b->text, "a:", 2))
			tables++;
		static const char lead[] = "Privacy against utility: a: EER 15.0% for the lazy-informed";
		if (b->kind == VPA_B_PARA && b->text && !strncmp(b->text, lead, strlen(lead)))
			summary++;
	}
	CHECK(head);
	CHECK(!sweep); /* the figure is the utility section's, not a sweep's */
	CHECK(figs == 1);
	CHECK(tables == 4); /* utility, recall per class, two confusion matrices */
	CHECK(summary == 1);
	/* the recommendation to anonymise more strongly says what the current one costs */
	int advice = 0;
	for (size_t i = 0; i < d.n; i++)
		for (size_t k = 0; d.b[i].kind == VPA_B_LIST && k < d.b[i].n_items; k++)
			advice += strstr(d.b[i].items[k], "Use a stronger anonymisation") &&
				  strstr(d.b[i].items[k], "The current one already costs +2.7 WER points");
	CHECK(advice == 1);
	/* the utility table: WER, UAR, accuracy, rho_F0, G_VD */
	for (size_t i = 0; i < d.n; i++) {
		const struct vpa_blk *b = &d.b[i];
		if (b->kind != VPA_B_TABLE || !b->text || strcmp(b->text, "a: utility on the original "
									 "and the anonymised speech."))
			continue;
		CHECK(b->table->n_rows == 5);
		CHECK_STR(b->table->cells[0 * 5 + 3], "+2.7 points");
		CHECK_STR(b->table->cells[1 * 5 + 3], "-50.0 points");
		CHECK_STR(b->table->cells[3 * 5 + 2], "0.800");
		CHECK_STR(b->table->cells[4 * 5 + 2], "-3.50 dB");
	}
	vpa_doc_release(&d);
	vpa_json_free(r);
	/* no utility measured: no section */
	r = dom("", REC("ignorant", "0.3", ""), NULL);
	vpa_doc_build(r, &d);
	for (size_t i = 0; i < d.n; i++)
		CHECK(!(d.b[i].kind == VPA_B_HEAD && d.b[i].id && !strcmp(d.b[i].id, "utility")));
	vpa_doc_release(&d);
	vpa_json_free(r);
}

/* the figure's points: per attack and sweep value, x = WER increase in points,
 * y = the lowest pooled EER but the baseline's, in % */
static void test_figure(void)
{
	struct vpa_json *r = dom("",
		"{\"attack\": \"link\", \"sub\": \"baseline\", \"sweep\": 0.5, \"metrics\": "
		"{\"eer\": 0.01, \"wer_increase\": 0.04}},"
		"{\"attack\": \"link\", \"sub\": \"ignorant\", \"sweep\": 0.5, \"metrics\": "
		"{\"eer\": 0.3, \"wer_increase\": 0.04}},"
		"{\"attack\": \"link\", \"sub\": \"semi_informed\", \"sweep\": 0.5, \"metrics\": "
		"{\"eer\": 0.2, \"wer_increase\": 0.04}},"
		"{\"attack\": \"link\", \"sub\": \"semi_informed/f\", \"gender\": \"f\", "
		"\"sweep\": 0.5, \"metrics\": {\"eer\": 0.05, \"wer_increase\": 0.04}},"
		"{\"attack\": \"link\", \"sub\": \"ignorant\", \"sweep\": 0.9, \"metrics\": "
		"{\"eer\": 0.1, \"wer_increase\": 0.01}},"
		"{\"attack\": \"other\", \"sub\": \"ignorant\", \"sweep\": 0.9, \"metrics\": "
		"{\"eer\": 0.1}}", NULL);
	struct vpa_json *figs = vpa_json_arr();
	CHECK(vpa_privacy_utility_figure(vpa_json_get(r, "records"), "alpha", figs) == 1);
	const struct vpa_json *f = figs->n ? figs->items[0] : NULL;
	CHECK_STR(vpa_json_get_str(f, "id"), VPA_PRIVACY_UTILITY_FIG);
	const struct vpa_json *se = vpa_json_get(f, "series");
	CHECK(se && se->n == 2);
	if (se && se->n == 2) {
		CHECK_STR(vpa_json_get_str(se->items[0], "name"), "link, alpha = 0.5 (semi-informed)");
		CHECK_NEAR(vpa_json_get(se->items[0], "x")->items[0]->num, 4, 1e-12);
		CHECK_NEAR(vpa_json_get(se->items[0], "y")->items[0]->num, 20, 1e-12);
		CHECK_STR(vpa_json_get_str(se->items[1], "name"), "link, alpha = 0.9 (ignorant)");
		CHECK_NEAR(vpa_json_get(se->items[1], "x")->items[0]->num, 1, 1e-12);
		CHECK_NEAR(vpa_json_get(se->items[1], "y")->items[0]->num, 10, 1e-12);
	}
	vpa_json_free(figs);
	/* no WER cost anywhere: no figure */
	figs = vpa_json_arr();
	struct vpa_json *r2 = dom("", REC("ignorant", "0.3", ""), NULL);
	CHECK(vpa_privacy_utility_figure(vpa_json_get(r2, "records"), NULL, figs) == 0);
	CHECK(figs->n == 0);
	vpa_json_free(figs);
	vpa_json_free(r2);
	vpa_json_free(r);
}

int main(void)
{
	RUN(test_figure);
	RUN(test_cases);
	RUN(test_sweep);
	RUN(test_property);
	RUN(test_document);
	return DONE();
}
