/*
 * tests/unit/test_gate.c - gate evaluation (record selection, worst case over
 * subs / layers / sweep values, undefined metrics, errors with the gate's
 * location) and the baseline comparison (leaky directions, tolerance).
 */
#include "harness.h"

#include <stdlib.h>

#include "core/json.h"
#include "reports/report.h"

static struct vpa_json *J(const char *text)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *j = vpa_json_parse("test", text, strlen(text), &err);
	if (!j)
		printf("#   bad test JSON: %s\n", err.msg);
	return j;
}

/*
 * Records: attack "eval" with subs a, b (and b at two sweep values), attack
 * "a1" with layers 1..3 and no sub, attack "und" with an undefined metric.
 */
static const char *results_text =
	"{\"records\": ["
	"{\"attack\":\"eval\",\"sub\":\"a\",\"layer\":null,\"sweep\":1,"
	" \"metrics\":{\"eer\":0.40,\"linkability\":0.10,\"zebra\":{\"dece\":0.05}}},"
	"{\"attack\":\"eval\",\"sub\":\"b\",\"layer\":null,\"sweep\":1,"
	" \"metrics\":{\"eer\":0.31,\"linkability\":0.20,\"zebra\":{\"dece\":0.10}}},"
	"{\"attack\":\"eval\",\"sub\":\"a\",\"layer\":null,\"sweep\":2,"
	" \"metrics\":{\"eer\":0.35,\"linkability\":0.12,\"zebra\":{\"dece\":0.06}}},"
	"{\"attack\":\"eval\",\"sub\":\"b\",\"layer\":null,\"sweep\":2,"
	" \"metrics\":{\"eer\":0.25,\"linkability\":0.30,\"zebra\":{\"dece\":0.20}}},"
	"{\"attack\":\"a1\",\"sub\":null,\"layer\":1,\"sweep\":null,\"metrics\":{\"eer\":0.45}},"
	"{\"attack\":\"a1\",\"sub\":null,\"layer\":2,\"sweep\":null,\"metrics\":{\"eer\":0.20}},"
	"{\"attack\":\"a1\",\"sub\":null,\"layer\":3,\"sweep\":null,\"metrics\":{\"eer\":0.33}},"
	"{\"attack\":\"und\",\"sub\":\"x\",\"layer\":null,\"sweep\":null,"
	" \"metrics\":{\"eer\":0.3,\"linkability\":null}}"
	"]}";

struct outcome {
	int rc;
	int pass;
	double value; /* NAN when null */
	char message[512];
	char err[1024];
};

static struct outcome gate(const char *g)
{
	struct outcome o = {0, -1, NAN, "", ""};
	struct vpa_json *r = J(results_text);
	struct vpa_json *gates = vpa_json_arr();
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
		const char *st = vpa_json_get_str(r, "status");
		if (!st || strcmp(st, o.pass ? "pass" : "fail"))
			o.pass = -2; /* status disagrees */
	}
	vpa_json_free(gates);
	vpa_json_free(r);
	return o;
}

static void test_worst_over_subs_and_sweep(void)
{
	struct outcome o = gate("{\"attack\":\"eval\",\"metric\":\"eer\",\"min\":0.3}");
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_NEAR(o.value, 0.25, 0);
	CHECK_STR(o.message, "eval eer = 0.25 < 0.3 (worst of 4 records: sub b, sweep 2)");
	o = gate("{\"attack\":\"eval\",\"metric\":\"eer\",\"min\":0.2}");
	CHECK(o.rc == 0 && o.pass == 1);
	CHECK_NEAR(o.value, 0.25, 0);
	CHECK_STR(o.message, "eval eer = 0.25 >= 0.2 (worst of 4 records: sub b, sweep 2)");
	o = gate("{\"attack\":\"eval\",\"metric\":\"linkability\",\"max\":0.25}");
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_NEAR(o.value, 0.30, 0);
	CHECK_STR(o.message, "eval linkability = 0.3 > 0.25 (worst of 4 records: sub b, sweep 2)");
}

static void test_one_sub(void)
{
	struct outcome o = gate("{\"attack\":\"eval.a\",\"metric\":\"eer\",\"min\":0.3,"
				"\"file\":\"s.yaml\",\"line\":3,\"col\":5}");
	CHECK(o.rc == 0 && o.pass == 1);
	CHECK_NEAR(o.value, 0.35, 0);
	CHECK_STR(o.message, "eval.a eer = 0.35 >= 0.3 (worst of 2 records: sweep 2)");
	/* nested metric, max */
	o = gate("{\"attack\":\"eval.a\",\"metric\":\"zebra.dece\",\"max\":0.06}");
	CHECK(o.rc == 0 && o.pass == 1);
	CHECK_NEAR(o.value, 0.06, 0);
	/* both bounds */
	o = gate("{\"attack\":\"eval.a\",\"metric\":\"eer\",\"min\":0.3,\"max\":0.38}");
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_NEAR(o.value, 0.40, 0);
	CHECK_STR(o.message, "eval.a eer = 0.4 > 0.38 (worst of 2 records: sweep 1)");
	o = gate("{\"attack\":\"eval.a\",\"metric\":\"eer\",\"min\":0.3,\"max\":0.5}");
	CHECK(o.rc == 0 && o.pass == 1);
	CHECK_STR(o.message, "eval.a eer = 0.35 >= 0.3 and 0.4 <= 0.5 (worst of 2 records: sweep 2)");
}

static void test_layers(void)
{
	/* worst layer: min gate -> smallest, max gate -> largest */
	struct outcome o = gate("{\"attack\":\"a1\",\"metric\":\"eer\",\"min\":0.3}");
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_NEAR(o.value, 0.20, 0);
	CHECK_STR(o.message, "a1 eer = 0.2 < 0.3 (worst of 3 records: layer 2)");
	o = gate("{\"attack\":\"a1\",\"metric\":\"eer\",\"max\":0.4}");
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_NEAR(o.value, 0.45, 0);
	CHECK_STR(o.message, "a1 eer = 0.45 > 0.4 (worst of 3 records: layer 1)");
	o = gate("{\"attack\":\"a1\",\"metric\":\"eer\",\"min\":0.3,\"layer\":3}");
	CHECK(o.rc == 0 && o.pass == 1);
	CHECK_NEAR(o.value, 0.33, 0);
	CHECK_STR(o.message, "a1 eer = 0.33 >= 0.3");
}

static void test_undefined_fails(void)
{
	struct outcome o = gate("{\"attack\":\"und\",\"metric\":\"linkability\",\"max\":0.5}");
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK(isnan(o.value));
	CHECK_STR(o.message, "und linkability is undefined (first of 1 records: sub x)");
	o = gate("{\"attack\":\"und.x\",\"metric\":\"linkability\",\"min\":0}");
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_STR(o.message, "und.x linkability is undefined");
}

static void test_errors(void)
{
	struct outcome o = gate("{\"attack\":\"nope\",\"metric\":\"eer\",\"min\":0.3,"
				"\"file\":\"s.yaml\",\"line\":7,\"col\":5}");
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "s.yaml:7:5: gate names attack 'nope', which has no records in the results");
	o = gate("{\"attack\":\"eval.c\",\"metric\":\"eer\",\"min\":0.3,\"file\":\"s.yaml\",\"line\":8,\"col\":5}");
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "s.yaml:8:5: gate names 'eval.c', but attack 'eval' has no sub 'c' in the results");
	o = gate("{\"attack\":\"eval\",\"metric\":\"err\",\"min\":0.3,\"file\":\"s.yaml\",\"line\":9,\"col\":5}");
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "s.yaml:9:5: unknown metric 'err' for 'eval' (not in its records)");
	o = gate("{\"attack\":\"a1\",\"metric\":\"eer\",\"min\":0.3,\"layer\":9}");
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "gate names layer 9 of 'a1', which has no records in the results");
	o = gate("{\"attack\":\"a1\",\"metric\":\"eer\"}");
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "gate on 'a1' eer needs 'min' or 'max'");
}

static void test_many_gates_status(void)
{
	struct vpa_json *r = J(results_text);
	struct vpa_json *g = J("[{\"attack\":\"eval\",\"metric\":\"eer\",\"min\":0.2},"
			       "{\"attack\":\"a1\",\"metric\":\"eer\",\"min\":0.1}]");
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_gates_evaluate(r, g, &err) == 0);
	CHECK_STR(vpa_json_get_str(r, "status"), "pass");
	CHECK(vpa_json_get(r, "gates")->n == 2);
	vpa_json_free(g);
	/* no gates: pass, empty list */
	CHECK(vpa_gates_evaluate(r, NULL, &err) == 0);
	CHECK(vpa_json_get(r, "gates")->n == 0);
	CHECK_STR(vpa_json_get_str(r, "status"), "pass");
	vpa_json_free(r);
}

static void test_baseline(void)
{
	const char *old =
		"{\"records\":["
		"{\"attack\":\"e\",\"sub\":\"a\",\"layer\":null,\"sweep\":null,"
		" \"metrics\":{\"eer\":0.30,\"linkability\":0.20,\"n_target\":100,\"cllr_min\":0.9,"
		"  \"zebra\":{\"dece\":0.1,\"category\":\"A\"}}},"
		"{\"attack\":\"e\",\"sub\":\"b\",\"layer\":null,\"sweep\":null,\"metrics\":{\"eer\":0.30}}]}";
	const char *now =
		"{\"records\":["
		"{\"attack\":\"e\",\"sub\":\"a\",\"layer\":null,\"sweep\":null,"
		" \"metrics\":{\"eer\":0.27,\"linkability\":0.215,\"n_target\":50,\"cllr_min\":0.95,"
		"  \"zebra\":{\"dece\":0.2,\"category\":\"B\"}}},"
		"{\"attack\":\"e\",\"sub\":\"c\",\"layer\":null,\"sweep\":null,\"metrics\":{\"eer\":0.01}}]}";
	struct vpa_json *o = J(old), *n = J(now), *flags = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	/* tolerance 0.02: eer fell 0.03 (flag), linkability rose 0.015 (no), dece rose 0.1 (flag),
	   cllr_min rose (private direction: no), n_target not compared, sub c has no baseline */
	CHECK(vpa_gates_baseline(n, o, 0.02, &flags, &err) == VPA_EGATE);
	CHECK(flags && flags->n == 2);
	if (flags && flags->n == 2) {
		CHECK_STR(vpa_json_get_str(flags->items[0], "metric"), "eer");
		CHECK_NEAR(vpa_json_get_num(flags->items[0], "delta", 0), -0.03, 1e-12);
		CHECK_STR(vpa_json_get_str(flags->items[0], "message"),
			  "e.a eer moved from 0.3 to 0.27 (-0.03, lower is leakier; tolerance 0.02)");
		CHECK_STR(vpa_json_get_str(flags->items[1], "metric"), "zebra.dece");
	}
	vpa_json_free(flags);
	/* a larger tolerance flags nothing */
	CHECK(vpa_gates_baseline(n, o, 0.2, &flags, &err) == 0);
	CHECK(flags && flags->n == 0);
	vpa_json_free(flags);
	/* tolerance 0: the linkability rise is flagged too */
	CHECK(vpa_gates_baseline(n, o, 0, &flags, &err) == VPA_EGATE);
	CHECK(flags && flags->n == 3);
	vpa_json_free(flags);
	/* identical results: nothing */
	CHECK(vpa_gates_baseline(o, o, 0, &flags, &err) == 0);
	CHECK(flags && flags->n == 0);
	vpa_json_free(flags);
	CHECK(vpa_metric_direction("eer") == -1 && vpa_metric_direction("linkability") == 1 &&
	      vpa_metric_direction("n_target") == 0 && vpa_metric_direction("zebra.category") == 0);
	vpa_json_free(o);
	vpa_json_free(n);
}

int main(void)
{
	RUN(test_worst_over_subs_and_sweep);
	RUN(test_one_sub);
	RUN(test_layers);
	RUN(test_undefined_fails);
	RUN(test_errors);
	RUN(test_many_gates_status);
	RUN(test_baseline);
	return DONE();
}
