/*
 * tests/unit/test_report_doc.c - the report's document model (reports/doc.c,
 * doc_build.c) and what it says: sections with stable ids in reading order,
 * the threat-model table of reports/README.md (reports/threat.c), and the
 * sentences, captions, table cells and verdict the model writes for
 * differential privacy, linkage, dexposure, identification, the risk rating
 * and the smaller kinds.  The writers themselves are tests/unit/test_report.c.
 */
#include <stdlib.h>

#include "harness.h"
#include "reports/report.h"
#include "reports/doc.h"
#include "report_golden.h"

/* The document model: sections with stable ids, in reading order, filled from the results. */
static void test_doc(void)
{
	struct vpa_json *g = golden();
	CHECK(g != NULL);
	if (!g)
		return;
	struct vpa_doc d;
	vpa_doc_build(g, &d);
	static const char *const ids[] = {"summary", "threat-model", "results", "limitations",
					  "recommendations", "glossary", "data"};
	size_t at[7];
	for (int k = 0; k < 7; k++) {
		at[k] = (size_t)-1;
		for (size_t i = 0; i < d.n; i++)
			if (d.b[i].kind == VPA_B_HEAD && d.b[i].id && !strcmp(d.b[i].id, ids[k]))
				at[k] = i;
		CHECK(at[k] != (size_t)-1);
		/* every section has content of its own */
		CHECK(at[k] + 1 < d.n && d.b[at[k] + 1].kind != VPA_B_HEAD);
	}
	for (int k = 1; k < 7; k++)
		CHECK(at[k - 1] < at[k]);
	CHECK(d.status == VPA_P_FAIL);
	CHECK(strstr(d.verdict, "FAIL: 2 of 3 gates failed") != NULL);
	CHECK_STR(d.title, "golden-report");
	CHECK(d.simulated && strstr(d.simulated, "sim<1>"));
	vpa_doc_release(&d);
	vpa_json_free(g);
}

/* The threat-model section of reports/README.md is the one the code generates. */
static void test_threat_docs(void)
{
	struct vpa_buf md;
	vpa_buf_init(&md);
	vpa_threat_markdown(&md);
	char *text = NULL;
	size_t len = 0;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_read_file("reports/README.md", &text, &len, &err) == 0);
	const char *b = text ? strstr(text, "<!-- threat-model: begin") : NULL;
	const char *e = text ? strstr(text, "<!-- threat-model: end -->") : NULL;
	CHECK(b && e && b < e);
	if (b && e) {
		b = strchr(b, '\n') + 1;
		int same = (size_t)(e - b) == md.len && !memcmp(b, md.data, md.len);
		CHECK(same);
		if (!same)
			printf("#   reports/README.md threat model differs from vpa_threat_markdown():\n%s",
			       md.data);
	}
	free(text);
	vpa_buf_release(&md);
	/* lookups: the exact attacker, the kind's row, nothing */
	const struct vpa_threat *t = vpa_threat_find("linkage", "semi_informed");
	CHECK(t && t->retrained == 'y' && t->anon_enrol == 'y' && t->orig_enrol == 'n');
	t = vpa_threat_find("a1_footprint", "mu_sigma");
	CHECK(t && t->updates == 'y' && t->indicator == 'y');
	CHECK(vpa_threat_find("nosuch", "x") == NULL);
}


/* Every sentence of the report built from `json` (paragraphs, list items,
 * captions), one per line; caller frees.  For the sentence tests below. */
static char *doc_text(const char *json)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = load_text("sent.json", json, &err);
	if (!r) {
		printf("#   %s\n", err.msg);
		return xstrdup("");
	}
	struct vpa_doc d;
	vpa_doc_build(r, &d);
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (size_t i = 0; i < d.n; i++) {
		if (d.b[i].text)
			vpa_buf_printf(&b, "%s\n", d.b[i].text);
		for (size_t k = 0; k < d.b[i].n_items; k++)
			vpa_buf_printf(&b, "%s\n", d.b[i].items[k]);
		const struct vpa_table *tb = d.b[i].kind == VPA_B_TABLE ? d.b[i].table : NULL;
		for (size_t k = 0; tb && k < tb->n_rows * tb->n_cols; k++)
			vpa_buf_printf(&b, "CELL %s\n", tb->cells[k] ? tb->cells[k] : "");
		for (size_t k = 0; tb && k < tb->n_cols; k++)
			vpa_buf_printf(&b, "HEAD %s\n", tb->head[k] ? tb->head[k] : "");
		if (tb && tb->note)
			vpa_buf_printf(&b, "%s\n", tb->note);
	}
	vpa_buf_printf(&b, "VERDICT %s\n", d.verdict ? d.verdict : "");
	vpa_doc_release(&d);
	vpa_json_free(r);
	char *t = xstrdup(vpa_buf_str(&b));
	vpa_buf_release(&b);
	return t;
}

#define FL_RESULTS(RECS)                                                                       \
	"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"                 \
	" \"targets\": [{\"id\": \"flv\", \"kind\": \"fl_speaker_classifier\", \"simulated\": true}],"\
	" \"attacks\": [{\"id\": \"tr\", \"kind\": \"fl_training\", \"target\": \"flv\"},"         \
	"  {\"id\": \"ln\", \"kind\": \"update_linkage\", \"target\": \"flv\"}],"                   \
	" \"gates\": [], \"records\": [" RECS "]}"

/* Issue 25 item 4a: every epsilon says what it protects and against whom;
 * central DP's epsilon is never offered as a bound on what the server learns
 * from the updates (update_linkage links them 99% of the time). */
static void test_dp_regime_sentences(void)
{
	char *t = doc_text(FL_RESULTS(
		"{\"attack\": \"tr\", \"sub\": \"central\", \"metrics\": {\"accuracy\": 0.34,"
		" \"epsilon\": 2, \"delta\": 1e-5, \"epsilon_central\": 2}},"
		"{\"attack\": \"tr\", \"sub\": \"local\", \"metrics\": {\"accuracy\": 0.14,"
		" \"epsilon\": 7.99, \"epsilon_local\": 2, \"delta\": 1e-5}},"
		"{\"attack\": \"ln\", \"sub\": \"central\", \"metrics\": {\"eer\": 0.01,"
		" \"linkability\": 0.94}},"
		"{\"attack\": \"ln\", \"sub\": \"local\", \"metrics\": {\"eer\": 0.44,"
		" \"linkability\": 0.05}}"));
	/* the old sentence: the regime bounds what a curious server learns */
	CHECK(strstr(t, "the DP regime bounds what it learns") == NULL);
	CHECK(strstr(t, "(moderate)") == NULL && strstr(t, "(strong)") == NULL);
	const char *c = strstr(t, "With the central regime, the model reaches 34.0% test accuracy with "
				  "epsilon 2 for this run, delta 1e-05. Central DP: the server adds "
				  "noise to the sum of a cohort's updates, so epsilon bounds what the "
				  "trained model reveals about a user to anyone who gets it; it does not "
				  "protect the updates the server sees before adding the noise.");
	CHECK(c != NULL);
	const char *l = strstr(t, "With the local regime, the model reaches 14.0% test accuracy with "
				  "epsilon 7.99 per user over this run's releases (2 per update), delta "
				  "1e-05. Local DP: each device adds noise before sending its update");
	CHECK(l != NULL);
	/* the central one only for central, the local one only for local */
	CHECK(count(t, "Central DP: the server adds noise") == 1);
	CHECK(count(t, "Local DP: each device adds noise") == 1);
	/* update linkage: central DP does not cover it, local DP does, once each */
	const char *ul = strstr(t, "A server that sees two model updates of the federated training "
				   "(central) decides correctly");
	CHECK(ul && strstr(ul, "Central DP does not cover this attack"));
	CHECK(count(t, "Central DP does not cover this attack") == 1);
	const char *ll = strstr(t, "(local) decides correctly whether two updates");
	CHECK(ll && strstr(ll, "Local DP covers this attack"));
	CHECK(count(t, "Local DP covers this attack") == 1);
	/* the glossary neither: no strong/moderate/weak ladder for every epsilon,
	 * and what central and local DP cover */
	CHECK(strstr(t, "up to 10 moderate") == NULL);
	CHECK(strstr(t, "a local epsilon per user or per update is on another scale") != NULL);
	CHECK(strstr(t, "central DP the trained model (not the updates a server sees before it adds "
			"the noise)") != NULL);
	/* the threat model's row for the training says the same */
	CHECK(strstr(t, "central DP only what the trained model reveals (not the updates the server "
			"sees)") != NULL);
	free(t);
	/* no regime named (another kind's record): no regime clause, no coverage sentence */
	t = doc_text(FL_RESULTS("{\"attack\": \"ln\", \"sub\": \"none\", \"metrics\": {\"eer\": 0.01}},"
				"{\"attack\": \"tr\", \"sub\": \"none\", \"metrics\": {\"accuracy\": 0.5}}"));
	CHECK(strstr(t, "cover this attack") == NULL && strstr(t, "covers this attack") == NULL);
	CHECK(strstr(t, "With the none regime (no differential privacy), the model reaches 50.0% test "
			"accuracy with no formal privacy guarantee.") != NULL);
	CHECK(strstr(t, "Central DP:") == NULL && strstr(t, "Local DP:") == NULL);
	free(t);
}


#define SC_RESULTS(RECS)                                                                       \
	"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"                 \
	" \"targets\": [{\"id\": \"sc\", \"kind\": \"scores\"}],"                                 \
	" \"attacks\": [{\"id\": \"ev\", \"kind\": \"evaluate\", \"target\": \"sc\"}],"            \
	" \"records\": [" RECS "]}"

/* Issue 25 item 4b: a linkability from fewer than 20 mated scores (one
 * histogram bin: the VoicePrivacy value is 0 whatever the scores) is "not
 * estimated" in the summary, never "0.00 (0: recordings cannot be linked)";
 * from 20 on (and null below 10: no sentence) as before. */
static void test_link_not_estimated(void)
{
	char *t = doc_text(SC_RESULTS(
		"{\"attack\": \"ev\", \"sub\": \"ignorant\", \"metrics\": {\"eer\": 0.08,"
		" \"n_target\": 14, \"linkability\": 0}},"
		"{\"attack\": \"ev\", \"sub\": \"lazy_informed\", \"metrics\": {\"eer\": 0.3,"
		" \"n_target\": 20, \"linkability\": 0}},"
		"{\"attack\": \"ev\", \"sub\": \"semi_informed\", \"metrics\": {\"eer\": 0.3,"
		" \"n_target\": 9, \"linkability\": null}}"));
	const char *a = strstr(t, "(ignorant) decides correctly");
	CHECK(a && strstr(a, "Its linkability D\u2194sys is not estimated: 14 mated scores (fewer "
			       "than 20) make one histogram bin, where it reads 0 whatever the scores."));
	CHECK(count(t, "is not estimated") == 1);
	/* 20 mated scores: two bins, an estimate (0 here), explained once */
	const char *b = strstr(t, "(lazy-informed) decides correctly");
	CHECK(b && strstr(b, "Its linkability D\u2194sys is 0.00 (0: recordings cannot be linked, 1: "
			       "fully linkable)."));
	CHECK(count(t, "Its linkability") == 2);
	free(t);
}


#define DX_RESULTS(RECS)                                                                       \
	"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"                 \
	" \"targets\": [{\"id\": \"tg\", \"kind\": \"tagger\"}],"                                 \
	" \"attacks\": [{\"id\": \"dx\", \"kind\": \"d_exposure\", \"target\": \"tg\"}],"          \
	" \"records\": [" RECS "]}"

/* Issue 25 item 4c: the d-exposure summary reads the canary label's value
 * against unseen control words (the quickstart: 2.57 vs 0.15 bits at 64
 * repetitions, confidence 0.08 -> 0.96), not the class average that falls
 * from 0.81 to 0.52; the verdict only where it holds. */
static void test_dexposure_sentences(void)
{
	char *t = doc_text(DX_RESULTS(
		"{\"attack\": \"dx\", \"sub\": \"k0\", \"metrics\": {\"d_exposure\": 0.8146,"
		" \"d_exposure_chance\": 0.555, \"d_exposure_label\": 0.0196, \"d_exposure_label_chance\":"
		" 0.1695, \"d_exposure_label_chance_p90\": 0.4086, \"d_exposure_NOUN\": 0.94,"
		" \"d_exposure_VERB\": 0.0196, \"repetitions\": 0, \"canary_conf_label\": 0.077}},"
		"{\"attack\": \"dx\", \"sub\": \"k64\", \"metrics\": {\"d_exposure\": 0.517,"
		" \"d_exposure_chance\": 0.7886, \"d_exposure_label\": 2.5656, \"d_exposure_label_chance\":"
		" 0.1492, \"d_exposure_label_chance_p90\": 0.3329, \"d_exposure_NOUN\": 0.0085,"
		" \"d_exposure_VERB\": 2.5656, \"repetitions\": 64, \"canary_conf_label\": 0.957}},"
		"{\"attack\": \"dx\", \"sub\": \"k8\", \"metrics\": {\"d_exposure\": 0.6,"
		" \"d_exposure_chance\": 0.5, \"d_exposure_label\": 0.6, \"d_exposure_label_chance\":"
		" 0.15, \"d_exposure_label_chance_p90\": 0.4, \"repetitions\": 8}}"));
	CHECK(strstr(t, "A sentence repeated 64 times in training: the tagger gives its canary word the "
			"inserted label VERB with confidence 96% (label d-exposure 2.57 bits; unseen "
			"control words: 0.15 bits, 90th percentile 0.33): the tagger has memorised the "
			"label of this sentence. Averaged over all classes the d-exposure is 0.52 bits "
			"(controls 0.79)") != NULL);
	CHECK(strstr(t, "A sentence repeated 0 times in training: the tagger gives its canary word the "
			"inserted label VERB with confidence 8% (label d-exposure 0.02 bits; unseen "
			"control words: 0.17 bits, 90th percentile 0.41): no more than for unseen "
			"sentences, not singled out.") != NULL);
	/* above the 90th percentile by less than a bit: partly, no label name found */
	CHECK(strstr(t, "A sentence repeated 8 times in training: the tagger gives its canary word the "
			"inserted label (label d-exposure 0.60 bits; unseen control words: 0.15 bits, "
			"90th percentile 0.40): above the unseen control words, partly memorised.") != NULL);
	CHECK(count(t, "has memorised the label") == 1);
	/* R4 fires on the label's value, for the memorised record only */
	CHECK(strstr(t, "dx: a sentence repeated 64 times reaches a d-exposure of 2.57 bits against "
			"0.15 for unseen ones") != NULL);
	CHECK(count(t, "[R4;") == 1);
	free(t);
	/* a record without the label's values: the class average, as before */
	t = doc_text(DX_RESULTS("{\"attack\": \"dx\", \"sub\": \"import\", \"metrics\": {"
				"\"d_exposure\": 2.5, \"d_exposure_chance\": 0.5, \"repetitions\": 4}}"));
	CHECK(strstr(t, "A sentence repeated 4 times in training has a d-exposure of 2.50 bits (unseen "
			"control sentences: 0.50 bits): the tagger remembers it.") != NULL);
	CHECK(strstr(t, "inserted label") == NULL);
	free(t);
}


#define ID_RESULTS(RECS)                                                                       \
	"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"                 \
	" \"targets\": [{\"id\": \"an\", \"kind\": \"anonymised_speech\"}],"                      \
	" \"attacks\": [{\"id\": \"id\", \"kind\": \"identification\", \"target\": \"an\"}],"    \
	" \"records\": [" RECS "]}"

/* Issue 25 item 4d: identification is said as picking a speaker out of the
 * population (not "at hidden layer 320", not a verification EER), top-1 and
 * top-10 both in % against chance; the recommendation quotes the same
 * (largest) population as the summary. */
static void test_ident_sentences(void)
{
	char *t = doc_text(ID_RESULTS(
		"{\"attack\": \"id\", \"sub\": \"baseline\", \"layer\": 20, \"metrics\": {"
		"\"population\": 20, \"eer\": 0.01, \"top1\": 0.98, \"top10\": 1}},"
		"{\"attack\": \"id\", \"sub\": \"baseline\", \"layer\": 320, \"metrics\": {"
		"\"population\": 320, \"eer\": 0.019, \"top1\": 0.8875, \"top10\": 0.995}},"
		"{\"attack\": \"id\", \"sub\": \"ignorant\", \"layer\": 320, \"metrics\": {"
		"\"population\": 320, \"eer\": 0.39, \"top1\": 0, \"top10\": 0.0025}},"
		"{\"attack\": \"id\", \"sub\": \"semi_informed\", \"layer\": 20, \"metrics\": {"
		"\"population\": 20, \"eer\": 0.12, \"top1\": 0.35, \"top10\": 1}},"
		"{\"attack\": \"id\", \"sub\": \"semi_informed\", \"layer\": 320, \"metrics\": {"
		"\"population\": 320, \"eer\": 0.188, \"top1\": 0.135, \"top10\": 0.3725}}"));
	CHECK(strstr(t, "hidden layer") == NULL);
	CHECK(strstr(t, "Without anonymisation, a speaker-verification attacker (baseline) picks the true "
			"speaker out of 320 people first time 88.8% of the time (chance 0.3%), and has "
			"them among its first 10 99.5% of the time (chance 3.1%): the speaker is singled "
			"out.") != NULL);
	CHECK(strstr(t, "(ignorant) picks the true speaker out of 320 people first time 0.0% of the "
			"time (chance 0.3%), and has them among its first 10 0.2% of the time (chance "
			"3.1%): no better than twice chance.") != NULL);
	const char *si = strstr(t, "(semi-informed) picks the true speaker out of 320 people first "
				   "time 13.5% of the time (chance 0.3%), and has them among its first 10 "
				   "37.2% of the time (chance 3.1%).");
	CHECK(si != NULL);
	/* only the largest population in the summary */
	CHECK(strstr(t, "out of 20 people") == NULL);
	/* R2 from the same population (EER 18.8% at 320, not 12.0% at 20) */
	CHECK(strstr(t, "reaches an EER of 18.8% in a population of 320") != NULL);
	CHECK(strstr(t, "12.0%") == NULL);
	free(t);
	/* top-k values in the tables in %, as top1 */
	struct vpa_buf b;
	vpa_buf_init(&b);
	struct vpa_json *v = vpa_json_num(0.3725);
	vpa_report_fmt(&b, "top10", v);
	CHECK_STR(vpa_buf_str(&b), "37.25%");
	b.len = 0;
	vpa_report_fmt(&b, "topk", v);
	CHECK_STR(vpa_buf_str(&b), "37.25%");
	vpa_json_free(v);
	vpa_buf_release(&b);
}


/* Issue 25 item 4g: with no gates, a risk rating per target instead of "No
 * verdict"; the references (baseline, none) and untrusted values not rated;
 * with gates, no rating. */
static void test_risk_rating(void)
{
#define RISK_RESULTS(GATES)                                                                    \
	"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"                 \
	" \"targets\": [{\"id\": \"an\", \"kind\": \"scores\"}, {\"id\": \"lm\","              \
	"  \"kind\": \"language_model\"}, {\"id\": \"am\", \"kind\": \"fl_acoustic_models\","    \
	"  \"simulated\": true}],"                                                                 \
	" \"attacks\": [{\"id\": \"ev\", \"kind\": \"evaluate\", \"target\": \"an\"},"          \
	"  {\"id\": \"ex\", \"kind\": \"exposure\", \"target\": \"lm\"},"                        \
	"  {\"id\": \"fp\", \"kind\": \"a1_footprint\", \"target\": \"am\"}],"                   \
	" \"gates\": " GATES ", \"records\": ["                                                   \
	"{\"attack\": \"ev\", \"sub\": \"baseline\", \"metrics\": {\"eer\": 0.01}},"            \
	"{\"attack\": \"ev\", \"sub\": \"ignorant\", \"metrics\": {\"eer\": 0.45}},"            \
	"{\"attack\": \"ev\", \"sub\": \"semi_informed\", \"metrics\": {\"eer\": 0.122}},"      \
	"{\"attack\": \"ex\", \"sub\": \"pin-x1\", \"metrics\": {\"exposure\": 4.7,"           \
	"  \"max_exposure\": 13.3}},"                                                              \
	"{\"attack\": \"fp\", \"sub\": \"mu\", \"layer\": 1, \"metrics\": {\"eer\": 0.07},"    \
	"  \"unreliable\": {\"eer\": \"19 target trials (fewer than 100)\"}}]}"
	char *t = doc_text(RISK_RESULTS("[]"));
	CHECK(strstr(t, "No verdict") == NULL);
	CHECK(strstr(t, "VERDICT No gates: the scenario requires nothing of the system") != NULL);
	CHECK(strstr(t, "an: MEDIUM (the strongest attack: ev (semi_informed) reaches an EER of "
			"12.2%).") != NULL);
	CHECK(strstr(t, "lm: LOW (the strongest attack: the canary pin-x1 reaches an exposure of 4.7 "
			"of at most 13.3 bits).") != NULL);
	CHECK(strstr(t, "am: not rated: no attack on it gave a value that can be trusted. 1 value "
			"that cannot be trusted (too few trials) is not rated. The target is "
			"simulated") != NULL);
	CHECK(strstr(t, "(baseline) reaches") == NULL); /* the reference is not rated */
	free(t);
	/* a gate: the verdict is PASS/FAIL and there is no rating */
	t = doc_text(RISK_RESULTS("[{\"attack\": \"ev\", \"metric\": \"eer\", \"min\": 0.1,"
				  " \"value\": 0.122, \"pass\": true}]"));
	CHECK(strstr(t, "VERDICT PASS: all 1 gate held") != NULL);
	CHECK(strstr(t, "Risk rating") == NULL && strstr(t, "MEDIUM") == NULL);
	free(t);
#undef RISK_RESULTS
}


/* Issue 25 item 4e: smaller sentences a DPO would repeat wrongly. */
static void test_smaller_sentences(void)
{
	/* linkability is not "links 36% of pairs"; pseudo-speaker advice only for
	 * the x-vector anonymiser (its info has "anonymiser"), not for McAdams */
	char *t = doc_text(
		"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"
		" \"targets\": [{\"id\": \"xv\", \"kind\": \"anonymised_speech\", \"info\":"
		"  {\"anonymiser\": {\"assignment\": \"speaker\"}}},"
		"  {\"id\": \"mc\", \"kind\": \"anonymised_speech\", \"info\": {\"audio\": {}}}],"
		" \"attacks\": [{\"id\": \"lx\", \"kind\": \"linkage\", \"target\": \"xv\"},"
		"  {\"id\": \"lm\", \"kind\": \"linkage\", \"target\": \"mc\"}],"
		" \"gates\": [], \"records\": ["
		"{\"attack\": \"lx\", \"sub\": \"lazy_informed\", \"metrics\": {\"eer\": 0.27,"
		" \"linkability\": 0.36}},"
		"{\"attack\": \"lx\", \"sub\": \"semi_informed\", \"metrics\": {\"eer\": 0.12}},"
		"{\"attack\": \"lm\", \"sub\": \"lazy_informed\", \"metrics\": {\"eer\": 0.27,"
		" \"linkability\": 0.4}},"
		"{\"attack\": \"lm\", \"sub\": \"semi_informed\", \"metrics\": {\"eer\": 0.15},"
		" \"unreliable\": {\"eer\": \"40 target trials (fewer than 100)\"}},"
		"{\"attack\": \"lm\", \"sub\": \"informed\", \"metrics\": {\"eer\": 0.1,"
		" \"linkability\": 0.2}, \"unreliable\": {\"linkability\": \"the integral over bin "
		"centres misses 0.21 of the histogram's 0.41 (see linkability_hist)\", \"eer\": \"40 target "
		"trials (fewer than 100)\"}},"
		"{\"attack\": \"lm\", \"sub\": \"baseline/trials_f\", \"trials\": \"trials_f\","
		" \"gender\": \"f\", \"metrics\": {\"eer\": 0.05, \"epsilon\": null},"
		" \"unreliable\": {\"epsilon\": \"undefined value\"}}]}");
	CHECK(strstr(t, "% of pairs") == NULL);
	CHECK(strstr(t, "lx: the lazy-informed attacker reaches a linkability of 0.36 (D\u2194sys, 0: "
			"recordings cannot be linked, 1: fully linkable): assign pseudo-speakers per "
			"utterance") != NULL);
	CHECK(strstr(t, "lm: the lazy-informed attacker reaches a linkability of 0.40 (D\u2194sys, 0: "
			"recordings cannot be linked, 1: fully linkable): anonymise each utterance with "
			"its own parameters") != NULL);
	CHECK(count(t, "pseudo-speakers") == 2); /* R1 and R2 of lx only */
	CHECK(strstr(t, "lx: the semi_informed attacker, who retrains on anonymised speech, reaches "
			"an EER of 12.0%: the anonymisation does not resist an attacker who knows the "
			"method. Use a stronger anonymisation (e.g. more distant pseudo-speakers") != NULL);
	/* one flagged metric: "This value"; two: "These values"; no jargon */
	CHECK(strstr(t, "This value cannot be trusted (eer: 40 target trials (fewer than 100)).") != NULL);
	CHECK(strstr(t, "These values cannot be trusted (linkability: the VoicePrivacy linkability "
			"leaves out part of what the score histogram shows (linkability_hist is "
			"higher); eer: 40 target trials (fewer than 100)).") != NULL);
	/* no sentence of the summary or the limitations keeps the jargon (the
	 * tables' notes and cells, for experts, may) */
	for (const char *ln = t; ln && *ln;) {
		const char *nl = strchr(ln, '\n');
		size_t len = nl ? (size_t)(nl - ln) : strlen(ln);
		int table = !strncmp(ln, "CELL ", 5) || !strncmp(ln, "* Values in grey", 16);
		CHECK(table || !memmem(ln, len, "integral over bin centres", 25));
		ln = nl ? nl + 1 : NULL;
	}
	/* per-gender records in words */
	CHECK(strstr(t, "Without anonymisation, a speaker-verification attacker (baseline), on female "
			"speakers only (trials_f), decides correctly") != NULL);
	CHECK(strstr(t, "baseline/trials_f'") == NULL);
	/* the undefined-value limitation names this attack's own value */
	CHECK(strstr(t, "lm: 1 value is undefined (shown as \"undefined\"), e.g. epsilon (no "
			"differential privacy was applied).") != NULL);
	free(t);
	/* exposure: 4.7 bits is above chance (a random canary averages 1.4 bits,
	 * reaches 4.7 one time in 26); 3.0 bits is within chance */
	t = doc_text(
		"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"
		" \"targets\": [{\"id\": \"lm\", \"kind\": \"language_model\"}],"
		" \"attacks\": [{\"id\": \"ex\", \"kind\": \"exposure\", \"target\": \"lm\"}],"
		" \"records\": ["
		"{\"attack\": \"ex\", \"sub\": \"pin-x1\", \"metrics\": {\"exposure\": 4.7,"
		" \"max_exposure\": 13.3, \"insertions\": 1}},"
		"{\"attack\": \"ex\", \"sub\": \"pin-x0\", \"metrics\": {\"exposure\": 3.0,"
		" \"max_exposure\": 13.3, \"insertions\": 0}}]}");
	CHECK(strstr(t, "close to chance") == NULL);
	CHECK(strstr(t, "The canary pin-x1 inserted 1 time reaches an exposure of 4.7 bits of at most "
			"13.3 bits: above chance, a random canary ranks this high only 1 time in 26 (it "
			"averages 1.4 bits).") != NULL);
	CHECK(strstr(t, "The canary pin-x0 inserted 0 times reaches an exposure of 3.0 bits of at most "
			"13.3 bits: within chance, a random canary averages 1.4 bits and ranks this "
			"high 1 time in 20 or more.") != NULL);
	free(t);
}

int main(void)
{
	RUN(test_doc);
	RUN(test_threat_docs);
	RUN(test_dp_regime_sentences);
	RUN(test_link_not_estimated);
	RUN(test_dexposure_sentences);
	RUN(test_ident_sentences);
	RUN(test_risk_rating);
	RUN(test_smaller_sentences);
	return DONE();
}
