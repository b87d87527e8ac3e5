/*
 * tests/unit/test_sec_legal.c - the report's "Singling out / Linkability /
 * Inference" table and section (reports/sec_legal.c, issue 29 item 5): the
 * verdicts, the sentences word for word, and the first-page table built from a small
 * results DOM (strongest attacker per criterion, baseline left out, an
 * unreliable value passed over for a reliable one).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "reports/sec_legal.h"

static struct vpa_legal_cell cell(double v, double lo, double hi, double chance)
{
	struct vpa_legal_cell c;
	memset(&c, 0, sizeof(c));
	c.value = v;
	c.lo = lo;
	c.hi = hi;
	c.chance = chance;
	c.level = 0.95;
	c.set = "2";
	c.L = 1;
	c.bacc = NAN;
	return c;
}

static void test_verdicts(void)
{
	struct vpa_legal_cell c = cell(0.8, 0.7, 0.9, 0.5);
	CHECK_STR(vpa_legal_verdict(&c), "above chance");
	c = cell(0.52, 0.45, 0.6, 0.5);
	CHECK_STR(vpa_legal_verdict(&c), "not distinguishable from chance");
	c = cell(0.3, 0.2, 0.4, 0.5);
	CHECK_STR(vpa_legal_verdict(&c), "below chance");
	c = cell(0.9, 0.8, 1, 0.5);
	c.why = "5 test speakers (fewer than 10)";
	CHECK_STR(vpa_legal_verdict(&c), "unreliable");
	c = cell(NAN, NAN, NAN, 0.5);
	CHECK_STR(vpa_legal_verdict(&c), "not measured");
	c = cell(0.6, NAN, NAN, 0.5);
	CHECK_STR(vpa_legal_verdict(&c), "above chance (no interval)");
}

static void test_sentences(void)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	struct vpa_legal_cell c = cell(0.849, 0.8, 0.9, 0.5);
	vpa_legal_sentence(&b, VPA_LEGAL_LINK, "semi_informed", &c);
	CHECK_STR(vpa_buf_str(&b),
		  "Linkability: the semi_informed attacker links an anonymised conversation of 1 "
		  "utterance to its speaker's enrolment among N' = 2 candidates with probability "
		  "0.849 (95% interval 0.800 to 0.900), against the chance 1/N' = 0.500: above "
		  "chance, records of one person can be linked.");
	b.len = 0;
	c = cell(0.36, 0.3, 0.42, pow(0.9, 9));
	c.set = "10";
	c.L = 3;
	vpa_legal_sentence(&b, VPA_LEGAL_SING, "ignorant", &c);
	CHECK_STR(vpa_buf_str(&b),
		  "Singling out: the ignorant attacker's predicate (one enrolment and a threshold "
		  "that fires on 1/N of held-out conversations) isolates exactly one of N = 10 test "
		  "speakers' conversations of 3 utterances with probability 0.360 (95% interval "
		  "0.300 to 0.420), against 0.387 for a predicate that ignores the voice "
		  "((1-1/N)^(N-1), e^-1 = 0.368 for large N): not distinguishable from chance, no "
		  "singling out beyond the trivial predicate was measured.");
	b.len = 0;
	c = cell(0.97, 0.93, 1, 0.55);
	c.attribute = "gender";
	c.majority = "f";
	c.bacc = 0.965;
	vpa_legal_sentence(&b, VPA_LEGAL_INFER, "informed", &c);
	CHECK_STR(vpa_buf_str(&b),
		  "Inference: the informed attacker guesses the gender of the anonymised test "
		  "utterances with accuracy 0.970 (95% interval 0.930 to 1.000) and balanced accuracy "
		  "0.965, against 0.550 for always guessing the majority class 'f': above chance, "
		  "the attribute can be inferred.");
	b.len = 0;
	c.why = "5 test speakers (fewer than 10)";
	vpa_legal_sentence(&b, VPA_LEGAL_INFER, "informed", &c);
	CHECK(strstr(vpa_buf_str(&b), ": unreliable (5 test speakers (fewer than 10)), evidence "
					"neither way.") != NULL);
	b.len = 0;
	c = cell(NAN, NAN, NAN, NAN);
	c.why = "undefined: N = 50 is above the 10 test speakers";
	vpa_legal_sentence(&b, VPA_LEGAL_SING, "ignorant", &c);
	CHECK_STR(vpa_buf_str(&b),
		  "Singling out: not measured (undefined: N = 50 is above the 10 test speakers).");
	vpa_buf_release(&b);
}

/* a results DOM: two anonymised-speech attackers, the baseline scoring
 * highest (left out), semi_informed's inference unreliable */
static const char doc_json[] =
	"{\"scenario\": {\"name\": \"t\"}, \"targets\": [{\"id\": \"tg\", \"kind\": "
	"\"anonymised_speech\"}], \"attacks\": [{\"id\": \"link\", \"kind\": \"linkage\", "
	"\"target\": \"tg\"}], \"records\": ["
	"{\"attack\": \"link\", \"sub\": \"baseline\", \"metrics\": {\"pi_link\": 1, \"pi_sing\": "
	"0.9, \"inference_acc\": 1}},"
	"{\"attack\": \"link\", \"sub\": \"ignorant\", \"metrics\": {\"pi_link\": 0.6, "
	"\"pi_sing\": 0.55, \"inference_acc\": 0.9},"
	" \"legal\": {\"level\": 0.95, \"by_length\": [{\"L\": 1, \"pi_link\": {\"2\": {\"value\": "
	"0.6, \"ci\": [0.55, 0.65], \"chance\": 0.5}}, \"pi_sing\": {\"2\": {\"value\": 0.55, "
	"\"ci\": [0.45, 0.65], \"baseline\": 0.5}}}]},"
	" \"inference\": {\"attribute\": \"gender\", \"majority_class\": \"m\", \"level\": 0.95, "
	"\"accuracy\": {\"value\": 0.9, \"ci\": [0.85, 0.95], \"chance\": 0.6}, "
	"\"balanced_accuracy\": {\"value\": 0.88, \"ci\": [0.8, 0.95], \"chance\": 0.5}}},"
	"{\"attack\": \"link\", \"sub\": \"semi_informed\", \"metrics\": {\"pi_link\": 0.8, "
	"\"pi_sing\": 0.5, \"inference_acc\": 0.99}, \"unreliable\": {\"inference_acc\": \"x\"},"
	" \"legal\": {\"level\": 0.95, \"by_length\": [{\"L\": 1, \"pi_link\": {\"2\": {\"value\": "
	"0.8, \"ci\": [0.75, 0.85], \"chance\": 0.5}}, \"pi_sing\": {\"2\": {\"value\": 0.5, "
	"\"ci\": [0.4, 0.6], \"baseline\": 0.5}}}]},"
	" \"inference\": {\"attribute\": \"gender\", \"majority_class\": \"m\", \"level\": 0.95, "
	"\"accuracy\": {\"value\": 0.99, \"ci\": [0.97, 1], \"chance\": 0.6}}},"
	"{\"attack\": \"link\", \"sub\": \"semi_informed/trials_f\", \"metrics\": {\"pi_link\": 1}}"
	"]}";

static void test_table(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = vpa_json_parse("doc", doc_json, strlen(doc_json), &err);
	CHECK(r != NULL);
	if (!r) {
		printf("# %s\n", err.msg);
		return;
	}
	/* the summary's table, then the section's sentences */
	struct vpa_doc d, d2;
	memset(&d, 0, sizeof(d));
	memset(&d2, 0, sizeof(d2));
	vpa_doc_legal_table(r, &d);
	vpa_doc_legal(r, &d2);
	const struct vpa_table *t = NULL;
	const struct vpa_blk *list = NULL;
	CHECK(d.n == 1 && d.b[0].kind == VPA_B_TABLE);
	if (d.n == 1 && d.b[0].kind == VPA_B_TABLE) {
		t = d.b[0].table;
		const char *want = "Singling out / Linkability / Inference: measured vs chance, for "
				   "the strongest attacker (attack link on tg; Article 29 WP Opinion "
				   "05/2014, Vauquier et al. 2025).";
		CHECK_STR(d.b[0].text, want);
	}
	for (size_t i = 0; i < d2.n; i++)
		if (d2.b[i].kind == VPA_B_LIST)
			list = &d2.b[i];
	CHECK(d2.n > 0 && d2.b[0].kind == VPA_B_HEAD &&
	      !strcmp(d2.b[0].text, "Singling out / Linkability / Inference"));
	CHECK(t != NULL && list != NULL);
	if (t && list) {
		CHECK(t->n_rows == 3 && t->n_cols == 6);
		/* singling out: ignorant (0.55) beats semi_informed (0.5); baseline left out */
		CHECK_STR(t->cells[0 * 6 + 2], "ignorant");
		CHECK_STR(t->cells[0 * 6 + 3], "0.550 (0.450-0.650)");
		CHECK_STR(t->cells[0 * 6 + 5], "not distinguishable from chance");
		CHECK_STR(t->cells[1 * 6 + 1], "pi_link (N' = 2, L = 1)");
		CHECK_STR(t->cells[1 * 6 + 2], "semi_informed");
		CHECK_STR(t->cells[1 * 6 + 4], "0.500");
		CHECK_STR(t->cells[1 * 6 + 5], "above chance");
		/* inference: semi_informed's 0.99 is unreliable, ignorant's 0.9 is not */
		CHECK_STR(t->cells[2 * 6 + 1], "accuracy (gender)");
		CHECK_STR(t->cells[2 * 6 + 2], "ignorant");
		CHECK_STR(t->cells[2 * 6 + 3], "0.900 (0.850-0.950)");
		CHECK_STR(t->cells[2 * 6 + 4], "0.600");
		CHECK(list->n_items == 3);
		CHECK(list->n_items == 3 &&
		      strstr(list->items[2], "with accuracy 0.900 (95% interval 0.850 to 0.950) and "
					     "balanced accuracy 0.880, against 0.600 for always guessing "
					     "the majority class 'm': above chance") != NULL);
	}
	vpa_doc_release(&d);
	vpa_doc_release(&d2);
	vpa_json_free(r);
}

/* no linkage attack: no section */
static void test_none(void)
{
	const char *j = "{\"attacks\": [{\"id\": \"e\", \"kind\": \"evaluate\"}], \"records\": []}";
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = vpa_json_parse("doc", j, strlen(j), &err);
	struct vpa_doc d;
	memset(&d, 0, sizeof(d));
	vpa_doc_legal(r, &d);
	vpa_doc_legal_table(r, &d);
	CHECK(d.n == 0);
	vpa_doc_release(&d);
	vpa_json_free(r);
}

int main(void)
{
	RUN(test_verdicts);
	RUN(test_sentences);
	RUN(test_table);
	RUN(test_none);
	return DONE();
}
