/*
 * tests/unit/test_gate.c - gate evaluation (record selection, worst case over
 * subs / layers / sweep values, undefined metrics, errors with the gate's
 * location) and the baseline comparison (leaky directions, tolerance).
 */
#include "harness.h"

#include <stdlib.h>

#include "base/json.h"
#include "reports/report.h"
#include "scenarios/scenario.h"

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

static struct outcome gate_on(const char *text, const char *g, struct vpa_json **gate_out)
{
	struct outcome o = {0, -1, NAN, "", ""};
	struct vpa_json *r = J(text);
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
		if (gate_out)
			*gate_out = vpa_json_clone(out->items[0]);
	}
	vpa_json_free(gates);
	vpa_json_free(r);
	return o;
}

static struct outcome gate(const char *g)
{
	return gate_on(results_text, g, NULL);
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
	CHECK_STR(o.message, "und linkability is undefined and fails closed, unreliable: undefined "
			     "value (sub x)");
	o = gate("{\"attack\":\"und.x\",\"metric\":\"linkability\",\"min\":0}");
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_STR(o.message, "und.x linkability is undefined and fails closed, unreliable: undefined value");
	/* allow_unreliable does not make an undefined value pass */
	o = gate("{\"attack\":\"und.x\",\"metric\":\"linkability\",\"min\":0,\"allow_unreliable\":true}");
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
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
	CHECK_STR(o.err, "gate on 'a1' eer needs 'min', 'max' or 'max_of'");
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

/* The regressions of a baseline comparison (borrowed from *summary, which the caller frees). */
static int regressions(const struct vpa_json *n, const struct vpa_json *o, double tol,
		       struct vpa_json **summary, const struct vpa_json **list)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_baseline_opts bo = {"old.json", tol, NULL, NULL, 0, 0, 0};
	int rc = n ? vpa_gates_baseline(n, o, &bo, summary, &err) : 0;
	static struct vpa_json *regs;
	vpa_json_free(regs);
	regs = NULL;
	if (!n) /* the last call frees the list */
		return rc;
	regs = vpa_json_arr();
	const struct vpa_json *c = vpa_json_get(*summary, "comparisons");
	for (size_t i = 0; c && i < c->n; i++)
		if (!strcmp(vpa_json_get_str(c->items[i], "status"), "regression"))
			vpa_json_push(regs, vpa_json_clone(c->items[i]));
	*list = regs;
	return rc;
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
	struct vpa_json *o = J(old), *n = J(now), *sum = NULL;
	const struct vpa_json *flags = NULL;
	/* tolerance 0.02: eer fell 0.03 (flag), linkability rose 0.015 (no), dece rose 0.1 (flag),
	   cllr_min rose (private direction: no), n_target not compared, sub c has no baseline */
	CHECK(regressions(n, o, 0.02, &sum, &flags) == VPA_EGATE);
	CHECK(flags && flags->n == 2);
	if (flags && flags->n == 2) {
		CHECK_STR(vpa_json_get_str(flags->items[0], "metric"), "eer");
		CHECK_NEAR(vpa_json_get_num(flags->items[0], "delta", 0), -0.03, 1e-12);
		CHECK_STR(vpa_json_get_str(flags->items[0], "message"),
			  "e.a eer moved from 0.3 to 0.27 (-0.03, lower is leakier; tolerance 0.02)");
		CHECK_STR(vpa_json_get_str(flags->items[1], "metric"), "zebra.dece");
	}
	/* counts and one-sided records (c only in the results, b only in the baseline) */
	CHECK(vpa_json_get_num(sum, "matched", 0) == 1 && vpa_json_get_num(sum, "records", 0) == 2 &&
	      vpa_json_get_num(sum, "baseline_records", 0) == 2);
	const struct vpa_json *u = vpa_json_get(sum, "unmatched");
	CHECK(u && u->n == 2);
	if (u && u->n == 2) {
		CHECK_STR(vpa_json_get_str(u->items[0], "message"), "e.c: only in the results (new: not compared)");
		CHECK_STR(vpa_json_get_str(u->items[1], "message"),
			  "e.b: only in the baseline (a failure: no longer compared)");
		/* what the baseline checked must not drop out unnoticed (issue 25 item 3) */
		CHECK(vpa_json_get(u->items[0], "fail")->boolean == 0);
		CHECK(vpa_json_get(u->items[1], "fail")->boolean == 1);
	}
	vpa_json_free(sum);
	/* a larger tolerance flags no metric; b, only in the baseline, still fails */
	CHECK(regressions(n, o, 0.2, &sum, &flags) == VPA_EGATE);
	CHECK(flags && flags->n == 0);
	CHECK(vpa_json_get_num(sum, "failures", 0) == 1);
	vpa_json_free(sum);
	/* tolerance 0: the linkability rise is flagged too */
	CHECK(regressions(n, o, 0, &sum, &flags) == VPA_EGATE);
	CHECK(flags && flags->n == 3);
	vpa_json_free(sum);
	/* identical results: nothing */
	CHECK(regressions(o, o, 0, &sum, &flags) == 0);
	CHECK(flags && flags->n == 0);
	vpa_json_free(sum);
	/* per-metric tolerances, --metrics, --strict */
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *tols = J("{\"eer\": 0.05}");
	const char *only[] = {"eer", "linkability"};
	struct vpa_baseline_opts bo = {NULL, 0.02, tols, NULL, 0, 0, 0};
	CHECK(vpa_gates_baseline(n, o, &bo, &sum, &err) == VPA_EGATE);
	CHECK(vpa_json_get_num(sum, "regressions", 0) == 1); /* dece only: eer within 0.05 */
	vpa_json_free(sum);
	bo.metrics = only;
	bo.n_metrics = 2;
	CHECK(vpa_gates_baseline(n, o, &bo, &sum, &err) == VPA_EGATE); /* dece not compared */
	CHECK(vpa_json_get_num(sum, "regressions", 1) == 0 && vpa_json_get_num(sum, "failures", 0) == 1);
	CHECK(vpa_json_get(sum, "comparisons")->n == 2);
	vpa_json_free(sum);
	bo.strict = 1;
	CHECK(vpa_gates_baseline(n, o, &bo, &sum, &err) == VPA_EGATE);
	CHECK(vpa_json_get_num(sum, "failures", 0) == 2 && vpa_json_get_num(sum, "regressions", 1) == 0);
	vpa_json_free(sum);
	vpa_json_free(tols);
	/* nothing in common */
	struct vpa_json *x = J("{\"records\":[{\"attack\":\"z\",\"sub\":null,\"metrics\":{\"eer\":0.1}}]}");
	bo.name = "old.json";
	CHECK(vpa_gates_baseline(n, x, &bo, &sum, &err) == VPA_EINPUT && !sum);
	CHECK_STR(err.msg, "old.json: matched 0 of 2 records: the baseline shares no record with the "
			   "results; is it the same scenario?");
	vpa_json_free(x);
	/* a value that became undefined is a regression */
	x = J("{\"records\":[{\"attack\":\"e\",\"sub\":\"b\",\"layer\":null,\"sweep\":null,\"metrics\":{\"eer\":null}}]}");
	CHECK(regressions(x, o, 1, &sum, &flags) == VPA_EGATE && flags->n == 1);
	vpa_json_free(sum);
	vpa_json_free(x);
	CHECK(vpa_metric_direction("eer") == -1 && vpa_metric_direction("linkability") == 1 &&
	      vpa_metric_direction("n_target") == 0 && vpa_metric_direction("zebra.category") == 0);
	vpa_json_free(o);
	vpa_json_free(n);
	regressions(NULL, NULL, 0, &sum, &flags); /* frees the static list */
}

/* Tolerances by unit (issue 25 item 3): one number is not the tolerance of an EER, a rank and
 * a number of bits alike. */
static void test_tolerance_units(void)
{
	double f = 0;
	CHECK_STR(vpa_metric_unit("eer", &f), "fraction");
	CHECK(f == 1);
	CHECK_STR(vpa_metric_unit("cllr_min", &f), "bits");
	CHECK(f == 2);
	CHECK_STR(vpa_metric_unit("zebra.log10_lr_worst", &f), "log10 LR");
	CHECK_STR(vpa_metric_unit("mean_rank", &f), "rank");
	CHECK(f == 100);
	CHECK_STR(vpa_metric_unit("exposure", NULL), "bits of exposure");
	CHECK_STR(vpa_metric_unit("epsilon", NULL), "epsilon");
	CHECK(vpa_metric_unit("n_target", &f) == NULL);
	for (size_t i = 0; vpa_compared_metric(i); i++) /* every compared metric has a unit */
		CHECK(vpa_metric_unit(vpa_compared_metric(i), NULL) != NULL);
	/* the default, then `tolerance: 0.02`, then `tolerances:` (absolute, the metric's unit) */
	CHECK_NEAR(vpa_baseline_tolerance("eer", NAN, NULL), 0.01, 1e-15);
	CHECK_NEAR(vpa_baseline_tolerance("mean_rank", NAN, NULL), 1, 1e-15);
	CHECK_NEAR(vpa_baseline_tolerance("eer", 0.02, NULL), 0.02, 1e-15);
	CHECK_NEAR(vpa_baseline_tolerance("cllr", 0.02, NULL), 0.04, 1e-15);
	CHECK_NEAR(vpa_baseline_tolerance("zebra.log10_lr_worst", 0.02, NULL), 0.2, 1e-15);
	CHECK_NEAR(vpa_baseline_tolerance("mean_rank", 0.02, NULL), 2, 1e-15);
	CHECK_NEAR(vpa_baseline_tolerance("d_exposure", 0.02, NULL), 0.2, 1e-15);
	CHECK(vpa_baseline_tolerance("mean_rank", 0, NULL) == 0); /* 0 stays exact everywhere */
	struct vpa_json *tols = J("{\"mean_rank\": 0.5}");
	CHECK(vpa_baseline_tolerance("mean_rank", 0.02, tols) == 0.5);
	vpa_json_free(tols);
	/* end to end: mean rank 160 -> 158.5 (1.5 places) with tolerance 0.02 is within 2 ranks;
	 * before, 0.02 ranks flagged it; cllr_min 0.5 -> 0.45 exceeds 0.04 bits */
	struct vpa_json *o = J("{\"records\":[{\"attack\":\"i\",\"sub\":null,\"metrics\":{\"mean_rank\":160,\"cllr_min\":0.5}}]}");
	struct vpa_json *n = J("{\"records\":[{\"attack\":\"i\",\"sub\":null,\"metrics\":{\"mean_rank\":158.5,\"cllr_min\":0.45}}]}");
	struct vpa_json *sum = NULL;
	const struct vpa_json *flags = NULL;
	CHECK(regressions(n, o, 0.02, &sum, &flags) == VPA_EGATE);
	CHECK(flags && flags->n == 1);
	if (flags && flags->n == 1)
		CHECK_STR(vpa_json_get_str(flags->items[0], "message"),
			  "i cllr_min moved from 0.5 to 0.45 (-0.05, lower is leakier; tolerance 0.04 bits)");
	const struct vpa_json *c = vpa_json_get(sum, "comparisons");
	CHECK(c && c->n == 2);
	if (c && c->n == 2) {
		CHECK_STR(vpa_json_get_str(c->items[0], "unit"), "rank");
		CHECK_STR(vpa_json_get_str(c->items[0], "status"), "stable");
		CHECK(vpa_json_get_num(c->items[0], "tolerance", 0) == 2);
	}
	vpa_json_free(sum);
	vpa_json_free(o);
	vpa_json_free(n);
	regressions(NULL, NULL, 0, &sum, &flags); /* frees the static list */
}

/* Is the baseline of the same audit?  (vpa_baseline_provenance; issue 25 item 3) */
static void test_provenance(void)
{
	const char *a =
		"{\"schema\":\"vpaudit.results/1\",\"scenario\":{\"name\":\"s\",\"file\":\"s.yaml\"},\"seed\":1,"
		"\"targets\":[{\"id\":\"b\"},{\"id\":\"a\"}],\"baseline\":{\"file\":\"old.json\"},"
		"\"inputs\":[{\"path\":\"s.yaml\",\"sha256\":\"11\"},{\"path\":\"x.txt\",\"sha256\":\"aa\"},"
		" {\"path\":\"/abs/y.txt\",\"sha256\":\"bb\"},{\"path\":\"old.json\",\"sha256\":\"c1\"}],"
		"\"records\":[{\"attack\":\"e\",\"sub\":null,\"metrics\":{\"eer\":0.3}}]}";
	/* the same audit: targets in another order, y.txt at another path, an edited scenario
	 * file, another baseline file read by `run --baseline` */
	const char *same =
		"{\"schema\":\"vpaudit.results/1\",\"scenario\":{\"name\":\"s\",\"file\":\"s.yaml\"},\"seed\":1,"
		"\"targets\":[{\"id\":\"a\"},{\"id\":\"b\"}],\"baseline\":{\"file\":\"old.json\"},"
		"\"inputs\":[{\"path\":\"s.yaml\",\"sha256\":\"22\"},{\"path\":\"x.txt\",\"sha256\":\"aa\"},"
		" {\"path\":\"y.txt\",\"sha256\":\"bb\"},{\"path\":\"old.json\",\"sha256\":\"c0\"}],"
		"\"records\":[{\"attack\":\"e\",\"sub\":null,\"metrics\":{\"eer\":0.3}}]}";
	const char *other =
		"{\"schema\":\"vpaudit.results/1\",\"scenario\":{\"name\":\"t\"},\"seed\":2,"
		"\"targets\":[{\"id\":\"a\"}],"
		"\"inputs\":[{\"path\":\"x.txt\",\"sha256\":\"ab\"},{\"path\":\"z.txt\",\"sha256\":\"cc\"}],"
		"\"records\":[{\"attack\":\"e\",\"sub\":null,\"metrics\":{\"eer\":0.3}}]}";
	struct vpa_json *ja = J(a), *js = J(same), *jo = J(other), *m = vpa_json_arr();
	vpa_baseline_provenance(ja, js, "old.json", m);
	CHECK(m->n == 0);
	/* a file that lists a path twice with two hashes does not differ from itself */
	struct vpa_json *twice = J("{\"inputs\":[{\"path\":\"x\",\"sha256\":\"1\"},{\"path\":\"x\",\"sha256\":\"2\"}]}");
	vpa_baseline_provenance(twice, twice, NULL, m);
	CHECK(m->n == 0);
	vpa_json_free(twice);
	vpa_baseline_provenance(ja, jo, "other.json", m);
	CHECK(m->n == 4);
	if (m->n == 4) {
		CHECK_STR(m->items[0]->str, "the baseline is of scenario 't', the results of 's'");
		CHECK_STR(m->items[1]->str, "the baseline has targets [a], the results [a, b]");
		CHECK_STR(m->items[2]->str, "the baseline's seed is 2, the results' 1");
		CHECK_STR(m->items[3]->str, "3 input files differ from the baseline's: x.txt (sha256 ab in the "
					    "baseline, aa in the results), /abs/y.txt (only in the results), z.txt "
					    "(only in the baseline)");
	}
	/* --strict: an error naming every difference; without: stored, the comparison goes on */
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_baseline_opts bo = {"other.json", 0, NULL, NULL, 0, 0, 1};
	struct vpa_json *sum = NULL;
	CHECK(vpa_gates_baseline(ja, jo, &bo, &sum, &err) == VPA_EINPUT && !sum);
	CHECK(!strncmp(err.msg, "other.json: the baseline is not of the same audit (an error with "
				"--strict): the baseline is of scenario 't', the results of 's'; the baseline has",
		       strlen("other.json: the baseline is not of the same audit (an error with --strict): "
			      "the baseline is of scenario 't', the results of 's'; the baseline has")));
	bo.strict = 0;
	CHECK(vpa_gates_baseline(ja, jo, &bo, &sum, &err) == 0);
	CHECK(vpa_json_get(sum, "mismatches") && vpa_json_get(sum, "mismatches")->n == 4);
	vpa_json_free(sum);
	vpa_json_free(m);
	vpa_json_free(ja);
	vpa_json_free(js);
	vpa_json_free(jo);
}

/* The --significant rule on hand-computed cases. */
static void test_significance(void)
{
	/* lower is leakier: 0.30 [0.25, 0.35] -> 0.27 [0.22, 0.32]: 0.03 < sqrt(2) 0.05 */
	CHECK(vpa_baseline_significance(-1, 0.30, 0.25, 0.35, 0.27, 0.22, 0.32) == 0);
	/* -> 0.22 [0.17, 0.27]: 0.08 > 0.0707, although the intervals overlap */
	CHECK(vpa_baseline_significance(-1, 0.30, 0.25, 0.35, 0.22, 0.17, 0.27) == 1);
	/* only the facing sides count: old lower half-width 0.01, new upper 0.01 -> 0.01414 */
	CHECK(vpa_baseline_significance(-1, 0.30, 0.29, 0.90, 0.28, 0.00, 0.29) == 1);
	CHECK(vpa_baseline_significance(-1, 0.30, 0.29, 0.90, 0.29, 0.00, 0.30) == 0);
	/* higher is leakier: 0.2 [0.1, 0.25] -> 0.3 [0.28, 0.5]: h 0.05, 0.02 -> 0.0539 < 0.1 */
	CHECK(vpa_baseline_significance(1, 0.2, 0.1, 0.25, 0.3, 0.28, 0.5) == 1);
	/* an interval that excludes its estimate counts as half-width 0 on that side */
	CHECK(vpa_baseline_significance(1, 0.2, 0.21, 0.3, 0.21, 0.1, 0.3) == 0);
	CHECK(vpa_baseline_significance(1, 0.2, 0.21, 0.19, 0.21, 0.22, 0.3) == 1);
	/* a move in the private direction is never significant */
	CHECK(vpa_baseline_significance(1, 0.5, 0.5, 0.5, 0.1, 0.1, 0.1) == 0);
}

/* Gate selection: subs, exclude, sweep; on: ci_low/ci_high; unreliable records. */
static void test_selection_and_reliability(void)
{
	struct outcome o = gate("{\"attack\":\"eval\",\"metric\":\"eer\",\"min\":0.3,\"exclude\":[\"b\"]}");
	CHECK(o.rc == 0 && o.pass == 1 && o.value == 0.35);
	CHECK_STR(o.message, "eval eer = 0.35 >= 0.3 (worst of 2 records: sub a, sweep 2)");
	o = gate("{\"attack\":\"eval\",\"metric\":\"eer\",\"min\":0.3,\"subs\":[\"b\"],\"sweep\":1}");
	CHECK(o.rc == 0 && o.pass == 1 && o.value == 0.31);
	o = gate("{\"attack\":\"eval\",\"metric\":\"eer\",\"min\":0.3,\"subs\":[\"a\"],\"exclude\":[\"a\"]}");
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "gate on 'eval' selects no record: subs [a] and exclude [a] leaves none of "
			 "its subs in the results");
	o = gate("{\"attack\":\"eval\",\"metric\":\"eer\",\"min\":0.3,\"sweep\":7}");
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "gate names sweep value 7 of 'eval', which has no records in the results");
	o = gate("{\"attack\":\"eval\",\"metric\":\"eer\",\"min\":0.3,\"on\":\"ci_low\"}");
	CHECK(o.rc == VPA_EINPUT);
	CHECK_STR(o.err, "gate on ci_low of 'eval' eer, but its records have no interval for 'eer' "
			 "(the attack's `ci:` key computes them)");

	const char *text =
		"{\"records\":["
		"{\"attack\":\"e\",\"sub\":\"a\",\"metrics\":{\"eer\":0.3,\"linkability\":0.4,"
		" \"zebra\":{\"dece\":0.2}},\"ci\":{\"eer\":[0.2,0.4],\"linkability\":[0.3,0.6]},"
		" \"unreliable\":{\"zebra\":\"12 mated scores (fewer than 100)\"}},"
		"{\"attack\":\"e\",\"sub\":\"b\",\"metrics\":{\"eer\":0.35,\"linkability\":0.1,"
		" \"zebra\":{\"dece\":0.1}},\"ci\":{\"eer\":[0.3,0.38],\"linkability\":null},"
		" \"unreliable\":{\"eer\":\"90 target trials (fewer than 100)\"}}]}";
	struct {
		const char *gate;
		int rc, pass;
		double value;
		const char *message;
	} cases[] = {
		{"{\"attack\":\"e.a\",\"metric\":\"eer\",\"min\":0.25,\"on\":\"ci_low\"}", VPA_EGATE, 0,
		 0.2, "e.a eer ci_low = 0.2 < 0.25"},
		{"{\"attack\":\"e.a\",\"metric\":\"linkability\",\"max\":0.5,\"on\":\"ci_high\"}", VPA_EGATE,
		 0, 0.6, "e.a linkability ci_high = 0.6 > 0.5"},
		{"{\"attack\":\"e.a\",\"metric\":\"linkability\",\"max\":0.5,\"on\":\"value\"}", 0, 1, 0.4,
		 "e.a linkability = 0.4 <= 0.5"},
		/* a null interval is undefined */
		{"{\"attack\":\"e.b\",\"metric\":\"linkability\",\"max\":0.5,\"on\":\"ci_high\"}", VPA_EGATE,
		 0, NAN, "e.b linkability ci_high is undefined and fails closed, unreliable: undefined value"},
		/* unreliable: the key, or a dotted prefix of the metric */
		{"{\"attack\":\"e.a\",\"metric\":\"zebra.dece\",\"max\":0.5}", VPA_EGATE, 0, 0.2,
		 "e.a zebra.dece = 0.2 fails closed, unreliable: 12 mated scores (fewer than 100)"},
		{"{\"attack\":\"e.a\",\"metric\":\"zebra.dece\",\"max\":0.5,\"allow_unreliable\":true}", 0, 1,
		 0.2, "e.a zebra.dece = 0.2 <= 0.5"},
		{"{\"attack\":\"e\",\"metric\":\"eer\",\"min\":0.1}", VPA_EGATE, 0, 0.35,
		 "e eer = 0.35 fails closed, unreliable: 90 target trials (fewer than 100) (first of 2 "
		 "records: sub b)"},
		{"{\"attack\":\"e\",\"metric\":\"eer\",\"min\":0.1,\"exclude\":[\"b\"]}", 0, 1, 0.3,
		 "e eer = 0.3 >= 0.1"},
		/* "eer" does not cover "eer_sweep", nor "zebra" a metric "zebrafish" */
		{"{\"attack\":\"e.b\",\"metric\":\"linkability\",\"max\":0.5}", 0, 1, 0.1,
		 "e.b linkability = 0.1 <= 0.5"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vpa_json *r = J(text), *gs = vpa_json_arr();
		struct vpa_err err;
		vpa_err_init(&err);
		vpa_json_push(gs, J(cases[i].gate));
		int rc = vpa_gates_evaluate(r, gs, &err);
		CHECK(rc == cases[i].rc);
		const struct vpa_json *g = vpa_json_get(r, "gates");
		if (g && g->n == 1) {
			const struct vpa_json *p = vpa_json_get(g->items[0], "pass");
			CHECK(p && p->boolean == cases[i].pass);
			double v = vpa_json_get_num(g->items[0], "value", NAN);
			CHECK(isnan(cases[i].value) ? isnan(v) : v == cases[i].value);
			CHECK_STR(vpa_json_get_str(g->items[0], "message"), cases[i].message);
		} else {
			CHECK(!"one gate result");
			printf("#   case %zu: %s\n", i, err.msg);
		}
		vpa_json_free(gs);
		vpa_json_free(r);
	}
}

/*
 * Issue 25 item 4f: per-layer records where layer 1 fails closed (too few trials, EER 0.243,
 * within the bound) and layer 3 (0.142) breaks it.  The gate named layer 1 and the trial count
 * only ("a1 eer = 0.243 fails closed, unreliable: ... (first of 3 records: layer 1)"): the
 * worst value and its layer come first, then the record that fails closed and why.
 */
static void test_breach_before_fail_closed(void)
{
	const char *text =
		"{\"records\":["
		"{\"attack\":\"a1\",\"sub\":null,\"layer\":1,\"sweep\":null,\"metrics\":{\"eer\":0.243},"
		" \"unreliable\":{\"eer\":\"60 target trials (fewer than 100)\"}},"
		"{\"attack\":\"a1\",\"sub\":null,\"layer\":2,\"sweep\":null,\"metrics\":{\"eer\":0.31}},"
		"{\"attack\":\"a1\",\"sub\":null,\"layer\":3,\"sweep\":null,\"metrics\":{\"eer\":0.142}},"
		"{\"attack\":\"s\",\"sub\":\"a\",\"layer\":null,\"sweep\":null,"
		" \"anti_correlated\":true,\"metrics\":{\"eer\":0.5,\"eer_flipped\":0.122}},"
		"{\"attack\":\"s\",\"sub\":\"b\",\"layer\":null,\"sweep\":null,\"metrics\":{\"eer\":0.1}},"
		"{\"attack\":\"s\",\"sub\":\"c\",\"layer\":null,\"sweep\":null,\"metrics\":{\"eer\":null}},"
		"{\"attack\":\"u\",\"sub\":null,\"layer\":null,\"sweep\":null,\"metrics\":{\"eer\":0.1},"
		" \"unreliable\":{\"eer\":\"9 target trials (fewer than 100)\"}}]}";
	struct vpa_json *g = NULL;
	struct outcome o = gate_on(text, "{\"attack\":\"a1\",\"metric\":\"eer\",\"min\":0.2}", &g);
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_NEAR(o.value, 0.142, 0);
	CHECK_STR(o.message, "a1 eer = 0.142 < 0.2 (worst of 3 records: layer 3); and layer 1 fails "
			     "closed, unreliable: 60 target trials (fewer than 100)");
	CHECK_STR(vpa_json_get_str(g, "record"), "layer 3");
	CHECK_STR(vpa_json_get_str(g, "unreliable"), "60 target trials (fewer than 100)");
	CHECK_STR(vpa_json_get_str(g, "unreliable_record"), "layer 1");
	vpa_json_free(g);
	/* no value breaks the bound: the fail-closed wording, naming layer 1 */
	g = NULL;
	o = gate_on(text, "{\"attack\":\"a1\",\"metric\":\"eer\",\"min\":0.1}", &g);
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_NEAR(o.value, 0.243, 0);
	CHECK_STR(o.message, "a1 eer = 0.243 fails closed, unreliable: 60 target trials (fewer than "
			     "100) (first of 3 records: layer 1)");
	CHECK_STR(vpa_json_get_str(g, "unreliable_record"), "layer 1");
	vpa_json_free(g);
	/* allow_unreliable: the bound alone decides */
	o = gate_on(text, "{\"attack\":\"a1\",\"metric\":\"eer\",\"min\":0.2,\"allow_unreliable\":true}",
		    NULL);
	CHECK_STR(o.message, "a1 eer = 0.142 < 0.2 (worst of 3 records: layer 3)");
	/* anti-correlated and undefined records: the breach first, then each fail-closed reason */
	g = NULL;
	o = gate_on(text, "{\"attack\":\"s\",\"metric\":\"eer\",\"min\":0.2}", &g);
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_NEAR(o.value, 0.1, 0);
	CHECK_STR(o.message, "s eer = 0.1 < 0.2 (worst of 3 records: sub b); and sub c is undefined "
			     "and fails closed, unreliable: undefined value; and sub a fails closed, "
			     "anti-correlated: the scores are anti-correlated with identity: an attacker "
			     "who reverses them reaches EER 12.2%");
	CHECK_STR(vpa_json_get_str(g, "anti_correlated_record"), "sub a");
	CHECK_STR(vpa_json_get_str(g, "unreliable_record"), "sub c");
	vpa_json_free(g);
	o = gate_on(text, "{\"attack\":\"s\",\"metric\":\"eer\",\"min\":0.2,\"exclude\":[\"c\"]}", NULL);
	CHECK_STR(o.message, "s eer = 0.1 < 0.2 (worst of 2 records: sub b); and sub a fails closed, "
			     "anti-correlated: the scores are anti-correlated with identity: an attacker "
			     "who reverses them reaches EER 12.2%");
	/* without the breach: the anti-correlated wording as before */
	o = gate_on(text, "{\"attack\":\"s\",\"metric\":\"eer\",\"min\":0.05,\"exclude\":[\"c\"]}", NULL);
	CHECK_STR(o.message, "s eer = 0.5 fails closed, anti-correlated: the scores are anti-correlated "
			     "with identity: an attacker who reverses them reaches EER 12.2% (first of 2 "
			     "records: sub a)");
	/* one record that both breaks the bound and fails closed */
	o = gate_on(text, "{\"attack\":\"u\",\"metric\":\"eer\",\"min\":0.2}", NULL);
	CHECK(o.rc == VPA_EGATE && o.pass == 0);
	CHECK_STR(o.message, "u eer = 0.1 < 0.2; and it fails closed too, unreliable: 9 target trials "
			     "(fewer than 100)");
}

/* `tolerances:` accepts exactly the metrics the comparison checks. */
static void test_tolerance_keys(void)
{
	size_t i = 0;
	for (; vpa_compared_metric(i) && vpa_scenario_tolerance_key(i); i++)
		CHECK_STR(vpa_scenario_tolerance_key(i), vpa_compared_metric(i));
	CHECK(!vpa_compared_metric(i) && !vpa_scenario_tolerance_key(i));
	CHECK(i == 19);
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
	RUN(test_significance);
	RUN(test_selection_and_reliability);
	RUN(test_breach_before_fail_closed);
	RUN(test_tolerance_keys);
	RUN(test_provenance);
	RUN(test_tolerance_units);
	return DONE();
}
