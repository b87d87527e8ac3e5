/*
 * tests/unit/test_dp_report.c - issue 28 items 3-5 on the reports side: the
 * gate form `max_of` (fails only when the audited lower bound exceeds the
 * claim, naming both numbers; a weak bound, however far below, passes; records
 * outside the guarantee's scope skipped; undefined values fail closed; the
 * evaluated gate evaluates again from results.json), the section "Is the
 * claimed guarantee credible?" (its sentences, one per case, each checked for
 * what it must and must not say), the executive summary's sentence on a
 * contradicted claim, the glossary's entries, and the results check's
 * acceptance of the dp_audit object's words.
 */
#include <stdlib.h>

#include "harness.h"
#include "reports/report.h"
#include "reports/doc.h"

static struct vpa_json *J(const char *text)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *j = vpa_json_parse("test", text, strlen(text), &err);
	if (!j)
		printf("#   bad test JSON: %s\n", err.msg);
	return j;
}

/* An audit record: attack A, lower bound LB (JSON text), claim C, scope S. */
static void rec(struct vpa_buf *b, const char *a, const char *lb, double c, const char *scope)
{
	if (!strcmp(scope, "outside")) {
		vpa_buf_printf(b, "{\"attack\":\"%s\",\"sub\":\"dp-audit\",\"layer\":null,\"sweep\":null,"
			       "\"metrics\":{\"epsilon\":%.17g,\"dp_audit\":{\"scope\":\"outside\","
			       "\"why\":\"local DP protects the updates, not the model\"}}}", a, c);
		return;
	}
	vpa_buf_printf(b, "{\"attack\":\"%s\",\"sub\":\"dp-audit\",\"layer\":null,\"sweep\":null,"
		       "\"metrics\":{\"epsilon\":%.17g,\"epsilon_lower_bound\":%s,\"epsilon_rdp\":1,"
		       "\"epsilon_pld\":%.17g,\"dp_audit\":{\"method\":\"one-run\",\"alpha\":0.05,"
		       "\"delta\":1e-5,\"claimed_epsilon\":%.17g,\"claim_key\":\"epsilon\","
		       "\"accountant\":\"pld\",\"adjacency\":\"example-level\",\"scope\":\"%s\","
		       "\"counts\":{\"m\":400,\"guesses\":256,\"correct\":236},"
		       "\"note\":\"n\"}}}", a, c, lb, c, c, scope);
}

/* results: attacks ok (0.3 <= 0.9125), bad (1.708 > 0.9125), weak (0 <= 0.9125),
 * out (outside scope), und (undefined bound), eq (bound = claim). */
static struct vpa_json *results(void)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_puts(&b, "{\"schema\":\"vpaudit.results/1\",\"records\":[");
	rec(&b, "ok", "0.3", 0.9125, "covered");
	vpa_buf_puts(&b, ",");
	rec(&b, "bad", "1.708", 0.9125, "covered");
	vpa_buf_puts(&b, ",");
	rec(&b, "weak", "0", 0.9125, "covered");
	vpa_buf_puts(&b, ",");
	rec(&b, "out", "0", 2.5, "outside");
	vpa_buf_puts(&b, ",");
	rec(&b, "und", "null", 0.9125, "covered");
	vpa_buf_puts(&b, ",");
	rec(&b, "eq", "0.9125", 0.9125, "covered");
	vpa_buf_puts(&b, "],\"attacks\":[{\"id\":\"ok\",\"kind\":\"exposure\",\"target\":\"lm\"},"
			 "{\"id\":\"bad\",\"kind\":\"exposure\",\"target\":\"lm_faulty\"}],"
			 "\"targets\":[{\"id\":\"lm\",\"kind\":\"language_model\"},"
			 "{\"id\":\"lm_faulty\",\"kind\":\"language_model\"}]}");
	struct vpa_json *j = J(b.data);
	vpa_buf_release(&b);
	return j;
}

struct outcome {
	int rc, pass;
	double value;
	char message[1024], err[1024];
	struct vpa_json *gate; /* the evaluated gate, owned */
};

static struct outcome run_gate(const char *g)
{
	struct outcome o = {0, -1, NAN, "", "", NULL};
	struct vpa_json *r = results(), *gates = vpa_json_arr();
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_json_push(gates, J(g));
	o.rc = vpa_gates_evaluate(r, gates, &err);
	snprintf(o.err, sizeof(o.err), "%s", err.msg);
	const struct vpa_json *out = vpa_json_get(r, "gates");
	if (out && out->n == 1) {
		const struct vpa_json *p = vpa_json_get(out->items[0], "pass");
		o.pass = p && p->type == VPA_JSON_BOOL ? p->boolean : -1;
		o.value = vpa_json_get_num(out->items[0], "value", NAN);
		const char *m = vpa_json_get_str(out->items[0], "message");
		snprintf(o.message, sizeof(o.message), "%s", m ? m : "");
		o.gate = vpa_json_clone(out->items[0]);
	}
	vpa_json_free(gates);
	vpa_json_free(r);
	return o;
}

#define MAX_OF(a) "{\"attack\":\"" a "\",\"metric\":\"epsilon_lower_bound\",\"max_of\":\"epsilon\"}"

static void test_max_of_contradiction(void)
{
	struct outcome o = run_gate(MAX_OF("bad"));
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_NEAR(o.value, 1.708, 0);
	CHECK_STR(o.message, "bad epsilon_lower_bound = 1.708 > epsilon = 0.9125: the audit "
		  "contradicts the claim (the lower bound exceeds it by 0.795, which proves a defect "
		  "in the implementation or the accounting)");
	CHECK(vpa_gate_breached(o.gate));
	/* the evaluated gate, as results.json stores it, evaluates again the same way */
	struct vpa_json *r = results(), *gates = vpa_json_arr();
	vpa_json_push(gates, o.gate);
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_gates_evaluate(r, gates, &err) == VPA_EGATE);
	const struct vpa_json *out = vpa_json_get(r, "gates");
	CHECK(out && out->n == 1 &&
	      !strcmp(vpa_json_get_str(out->items[0], "message"), o.message));
	struct vpa_buf bound;
	vpa_buf_init(&bound);
	vpa_gate_bound(&bound, out->items[0], 0);
	CHECK_STR(bound.data, "<= epsilon");
	vpa_buf_release(&bound);
	vpa_json_free(gates);
	vpa_json_free(r);
}

static void test_max_of_weak_bounds_pass(void)
{
	const char *const a[] = {"ok", "weak", "eq"};
	const double v[] = {0.3, 0, 0.9125};
	for (int i = 0; i < 3; i++) {
		char g[256];
		snprintf(g, sizeof(g), MAX_OF("%s"), a[i]);
		struct outcome o = run_gate(g);
		CHECK(o.rc == 0 && o.pass == 1);
		CHECK_NEAR(o.value, v[i], 0);
		CHECK(strstr(o.message, "<= epsilon = 0.9125: the audit does not contradict the claim "
				       "(a lower bound below it does not prove it)") != NULL);
		CHECK(!vpa_gate_breached(o.gate));
		vpa_json_free(o.gate);
	}
}

static void test_max_of_scope_and_undefined(void)
{
	struct outcome o = run_gate(MAX_OF("out"));
	CHECK(o.rc == 0 && o.pass == 1);
	CHECK_STR(o.message, "out epsilon_lower_bound: all 1 selected record is outside the "
		  "guarantee's scope: nothing to compare with epsilon");
	CHECK_NEAR(vpa_json_get_num(o.gate, "outside_scope", 0), 1, 0);
	vpa_json_free(o.gate);
	o = run_gate(MAX_OF("und"));
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_STR(o.message, "und epsilon_lower_bound or epsilon is undefined "
		  "and fails closed (sub dp-audit)");
	vpa_json_free(o.gate);
	/* a metric no record has, an attack without records, max_of with max: errors */
	o = run_gate("{\"attack\":\"ok\",\"metric\":\"nope\",\"max_of\":\"epsilon\","
		     "\"file\":\"s.yaml\",\"line\":4,\"col\":5}");
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "s.yaml:4:5: unknown metric 'nope' for 'ok' (not in its records)");
	o = run_gate(MAX_OF("ghost"));
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "gate names 'ghost', which has no records in the results");
	o = run_gate("{\"attack\":\"ok\",\"metric\":\"epsilon_lower_bound\",\"max_of\":\"epsilon\","
		     "\"max\":1}");
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "gate on 'ok' epsilon_lower_bound: 'max_of' with 'min' or 'max' (expected "
		  "one of them)");
}

/* Each case's sentence says what is true of it, and never what is not. */
static void test_meaning_sentences(void)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_dp_meaning(1.708, 0.9125, 0.05, &b);
	CHECK_STR(b.data, "The audited lower bound exceeds the claim by 0.795: at 95% confidence "
		  "the claimed guarantee is false. This proves a defect in the implementation or in "
		  "the accounting (noise not applied, clipping missing, a misstated sampling rate or "
		  "neighbouring relation, a wrong accountant), not a weakness of the claim's size.");
	b.len = 0;
	vpa_dp_meaning(0, 0.9125, 0.05, &b);
	CHECK(strstr(b.data, "does not contradict the claim") && strstr(b.data, "does not prove "
									   "the claim"));
	CHECK(!strstr(b.data, "defect") && !strstr(b.data, "false"));
	CHECK(strstr(b.data, "between 0 and 0.9125"));
	b.len = 0;
	vpa_dp_meaning(0.3, 0.9125, 0.01, &b);
	CHECK_STR(b.data, "The audit does not contradict the claim: it demonstrates an epsilon of "
		  "at least 0.3, 32.9% of the claimed 0.9125. A lower bound below the claim does not "
		  "prove the claim (a stronger attack might show more); if the claim is correct, the "
		  "true epsilon lies between 0.3 and 0.9125.");
	b.len = 0;
	/* 1.708 - 0.9125 is 0.79549999... in doubles: %.3g prints 0.795 */
	/* a bound equal to the claim does not contradict it */
	vpa_dp_meaning(0.9125, 0.9125, 0.05, &b);
	CHECK(strstr(b.data, "does not contradict") && !strstr(b.data, "defect"));
	b.len = 0;
	vpa_dp_meaning(NAN, 0.9125, 0.05, &b);
	CHECK(strstr(b.data, "cannot be read") && strstr(b.data, "neither supports nor refutes"));
	b.len = 0;
	vpa_dp_meaning(99, 2, 0.001, &b);
	CHECK(strstr(b.data, "at 99.9% confidence the claimed guarantee is false"));
	vpa_buf_release(&b);
}

static int doc_has(const struct vpa_doc *d, const char *text)
{
	for (size_t i = 0; i < d->n; i++) {
		if (d->b[i].text && strstr(d->b[i].text, text))
			return 1;
		for (size_t k = 0; k < d->b[i].n_items; k++)
			if (strstr(d->b[i].items[k], text))
				return 1;
	}
	return 0;
}

static void test_section(void)
{
	struct vpa_json *r = results();
	struct vpa_doc d;
	memset(&d, 0, sizeof(d));
	vpa_doc_dp(r, &d);
	CHECK(d.n > 0 && d.b[0].kind == VPA_B_HEAD && !strcmp(d.b[0].id, "dp-credible"));
	CHECK_STR(d.b[0].text, "Is the claimed guarantee credible?");
	CHECK(doc_has(&d, "lm_faulty: bad.dp-audit"));
	CHECK(doc_has(&d, "Claimed: epsilon 0.9125 at delta 1e-05 (pld accountant; RDP gives 1, "
			  "PLD 0.9125, the claim is the smaller, both being valid upper bounds), "
			  "neighbouring datasets: example-level."));
	CHECK(doc_has(&d, "Audited lower bound: epsilon >= 1.708 with 95% confidence, by the "
			  "one-run audit of Steinke, Nasr, Jagielski 2023 (400 canaries, 256 "
			  "guesses, 236 correct)."));
	CHECK(doc_has(&d, "Distance: claim - lower bound = -0.7955 (negative: the bound is above "
			  "the claim)."));
	CHECK(doc_has(&d, "Distance: claim - lower bound = 0.6125."));
	CHECK(doc_has(&d, "out.dp-audit: outside the guarantee's scope, not compared with it: "
			  "local DP protects the updates, not the model."));
	/* the contradiction is a FAIL paragraph, the others plain */
	int fails = 0;
	for (size_t i = 0; i < d.n; i++)
		fails += d.b[i].kind == VPA_B_PARA && d.b[i].style == VPA_P_FAIL;
	CHECK(fails == 1);
	vpa_doc_release(&d);
	vpa_json_free(r);
	/* no audit record: no section */
	r = J("{\"records\":[{\"attack\":\"x\",\"metrics\":{\"eer\":0.3}}]}");
	memset(&d, 0, sizeof(d));
	vpa_doc_dp(r, &d);
	CHECK(d.n == 0);
	vpa_doc_release(&d);
	vpa_json_free(r);
}

static void test_summary_and_glossary(void)
{
	struct vpa_json *r = results();
	struct vpa_doc d;
	vpa_doc_build(r, &d);
	CHECK(doc_has(&d, "The claimed epsilon 0.9125 of target lm_faulty (pld accountant) is "
			  "contradicted: the one-run audit by bad proves epsilon >= 1.708, 0.795 "
			  "above the claim, with 95% confidence."));
	/* only the contradicted claim gets that sentence */
	CHECK(!doc_has(&d, "of target lm (pld accountant) is contradicted"));
	static const char *const terms[] = {
		"Jagielski, Ullman, Oprea 2020", "Nasr et al. 2023", "Steinke, Nasr, Jagielski 2023",
		"Koskela, Jälkö, Honkela 2020", "Doroshenko et al. 2022", "Mironov 2017"};
	for (size_t i = 0; i < sizeof(terms) / sizeof(*terms); i++)
		CHECK(doc_has(&d, terms[i]));
	vpa_doc_release(&d);
	vpa_json_free(r);
}

/* The results check accepts the dp_audit object's words, and still refuses a word
 * elsewhere among the metrics. */
static void test_results_check(void)
{
	struct vpa_json *r = results();
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_results_check(r, "r.json", &err) == 0);
	vpa_json_free(r);
	r = J("{\"schema\":\"vpaudit.results/1\",\"records\":[{\"attack\":\"a\",\"metrics\":"
	      "{\"epsilon\":\"x\",\"dp_audit\":{\"method\":\"cp\"}}}]}");
	vpa_err_init(&err);
	CHECK(vpa_results_check(r, "r.json", &err) != 0);
	CHECK(strstr(err.msg, "metric 'epsilon' must be a number or null, got a string") != NULL);
	vpa_json_free(r);
}

int main(void)
{
	RUN(test_max_of_contradiction);
	RUN(test_max_of_weak_bounds_pass);
	RUN(test_max_of_scope_and_undefined);
	RUN(test_meaning_sentences);
	RUN(test_section);
	RUN(test_summary_and_glossary);
	RUN(test_results_check);
	return DONE();
}
