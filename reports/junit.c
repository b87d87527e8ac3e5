/*
 * reports/junit.c - junit.xml: one <testsuite> per scenario, one <testcase>
 * per gate, per attack no gate checks (skipped, its values in <system-out>)
 * and per baseline comparison; a passing case has its measured value in
 * <system-out>; a failed gate (an undefined or
 * unreliable metric included) is a <failure> whose message names the
 * metric, its value and the bound, e.g.
 *   <failure message="eer = 0.25, bound &gt;= 0.3" type="gate">...</failure>
 * A run that failed writes vpa_report_junit_error's one <error> testcase.
 * CI systems (GitLab, Jenkins, GitHub test reporters) read this form.
 */
#include <math.h>
#include <string.h>

#include "reports/table.h"

static void esc(struct vpa_buf *b, const char *s)
{
	vpa_xml_escape(b, s ? s : "");
}

static int is_true(const struct vpa_json *v)
{
	return v && v->type == VPA_JSON_BOOL && v->boolean;
}

static void testsuites_open(struct vpa_buf *b, size_t tests, size_t failures, size_t errors,
			    double total)
{
	vpa_buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	vpa_buf_printf(b, "<testsuites name=\"vpaudit\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n",
		       tests, failures, errors, total);
}

static void property(struct vpa_buf *b, const char *name, const char *value)
{
	vpa_buf_printf(b, "      <property name=\"%s\" value=\"", name);
	esc(b, value);
	vpa_buf_puts(b, "\"/>\n");
}

/* Close a passing testcase with the measured value as its <system-out> (the name stays the
 * same from run to run, so that CI systems keep the test's history). */
static void system_out(struct vpa_buf *b, const char *msg)
{
	if (!msg || !*msg) {
		vpa_buf_puts(b, "/>\n");
		return;
	}
	vpa_buf_puts(b, ">\n      <system-out>");
	esc(b, msg);
	vpa_buf_puts(b, "</system-out>\n    </testcase>\n");
}

/* 1 when a gate of `gates` names attack id (as "ID" or "ID.SUB"). */
static int gated(const struct vpa_json *gates, const char *id)
{
	size_t n = strlen(id);
	for (size_t i = 0; gates && gates->type == VPA_JSON_ARR && i < gates->n; i++) {
		const char *a = vpa_json_get_str(gates->items[i], "attack");
		if (a && !strncmp(a, id, n) && (a[n] == '\0' || a[n] == '.'))
			return 1;
	}
	return 0;
}

/* The attacks no gate checks: each is one skipped testcase carrying its compared metrics, so
 * that every attack is in junit.xml and a run without gates is not an empty report (a
 * tests="0" file fails Jenkins' junit step). */
static size_t n_ungated(const struct vpa_json *r)
{
	const struct vpa_json *as = vpa_json_get(r, "attacks"), *gates = vpa_json_get(r, "gates");
	size_t n = 0;
	for (size_t i = 0; as && as->type == VPA_JSON_ARR && i < as->n; i++) {
		const char *id = vpa_json_get_str(as->items[i], "id");
		n += id && !gated(gates, id);
	}
	return n;
}

static void attack_cases(struct vpa_buf *b, const struct vpa_json *r, struct vpa_buf *t)
{
	const struct vpa_json *as = vpa_json_get(r, "attacks"), *gates = vpa_json_get(r, "gates");
	const struct vpa_json *recs = vpa_json_get(r, "records");
	for (size_t i = 0; as && as->type == VPA_JSON_ARR && i < as->n; i++) {
		const char *id = vpa_json_get_str(as->items[i], "id");
		if (!id || gated(gates, id))
			continue;
		t->len = 0;
		if (vpa_results_simulated(r, id))
			vpa_buf_puts(t, "[simulated] ");
		vpa_buf_printf(t, "%s: no gate", id);
		vpa_buf_puts(b, "    <testcase classname=\"vpaudit.attacks\" name=\"");
		esc(b, vpa_buf_str(t));
		vpa_buf_puts(b, "\" time=\"0\">\n      <skipped message=\"");
		t->len = 0;
		vpa_buf_printf(t, "no gate checks attack '%s': its values are measured, not checked", id);
		esc(b, vpa_buf_str(t));
		vpa_buf_puts(b, "\"/>\n");
		/* one line per record: its compared metrics (reports/baseline.c) */
		t->len = 0;
		for (size_t k = 0; recs && recs->type == VPA_JSON_ARR && k < recs->n; k++) {
			const struct vpa_json *rec = recs->items[k];
			const char *a = vpa_json_get_str(rec, "attack"), *sub = vpa_json_get_str(rec, "sub");
			if (!a || strcmp(a, id))
				continue;
			vpa_buf_printf(t, "%s%s%s%s", t->len ? "\n" : "", id, sub ? "." : "", sub ? sub : "");
			struct vpa_buf d;
			vpa_buf_init(&d);
			vpa_record_describe(&d, rec, 0);
			if (d.len)
				vpa_buf_printf(t, " [%s]", d.data);
			vpa_buf_release(&d);
			vpa_buf_puts(t, ":");
			size_t before = t->len;
			for (size_t m = 0; vpa_compared_metric(m); m++) {
				int present;
				const struct vpa_json *v =
					vpa_metric_at(vpa_json_get(rec, "metrics"), vpa_compared_metric(m), &present);
				if (!present)
					continue;
				vpa_buf_printf(t, "%s %s ", t->len > before ? "," : "", vpa_compared_metric(m));
				if (v && v->type == VPA_JSON_NUM && isfinite(v->num))
					vpa_buf_printf(t, "%.6g", v->num);
				else
					vpa_buf_puts(t, "undefined");
			}
			if (t->len == before)
				vpa_buf_puts(t, " no compared metric");
		}
		if (t->len) {
			vpa_buf_puts(b, "      <system-out>");
			esc(b, vpa_buf_str(t));
			vpa_buf_puts(b, "</system-out>\n");
		}
		vpa_buf_puts(b, "    </testcase>\n");
	}
}

/* One baseline testcase: a comparison or an unmatched record. */
static void baseline_case(struct vpa_buf *b, const struct vpa_json *r, const struct vpa_json *c,
			  int unmatched, struct vpa_buf *t)
{
	const char *name = vpa_json_get_str(c, "name"), *metric = vpa_json_get_str(c, "metric");
	const char *msg = vpa_json_get_str(c, "message");
	t->len = 0;
	if (vpa_results_simulated(r, vpa_json_get_str(c, "attack")))
		vpa_buf_puts(t, "[simulated] ");
	if (unmatched)
		vpa_buf_printf(t, "%s only in the %s", name ? name : "?",
			       vpa_json_get_str(c, "side") ? vpa_json_get_str(c, "side") : "?");
	else
		vpa_buf_printf(t, "%s %s against the baseline", name ? name : "?", metric ? metric : "?");
	vpa_buf_puts(b, "    <testcase classname=\"vpaudit.baseline\" name=\"");
	esc(b, vpa_buf_str(t));
	vpa_buf_puts(b, "\" time=\"0\"");
	int fail = unmatched ? is_true(vpa_json_get(c, "fail"))
			     : !strcmp(vpa_json_get_str(c, "status") ? vpa_json_get_str(c, "status") : "",
				       "regression");
	if (!fail && !unmatched) {
		system_out(b, msg);
		return;
	}
	if (!fail) {
		vpa_buf_puts(b, ">\n      <skipped message=\"");
		esc(b, msg);
		vpa_buf_puts(b, "\"/>\n    </testcase>\n");
		return;
	}
	vpa_buf_printf(b, ">\n      <failure type=\"%s\" message=\"", unmatched ? "unmatched" : "regression");
	esc(b, msg);
	vpa_buf_puts(b, "\">");
	esc(b, msg);
	vpa_buf_puts(b, "</failure>\n    </testcase>\n");
}

void vpa_report_junit(const struct vpa_json *r, struct vpa_buf *b)
{
	const struct vpa_json *gates = vpa_json_get(r, "gates");
	const struct vpa_json *sc = vpa_json_get(r, "scenario"), *wt = vpa_json_get(r, "wall_time");
	const struct vpa_json *bl = vpa_json_get(r, "baseline");
	const struct vpa_json *comps = vpa_json_get(bl, "comparisons"), *unm = vpa_json_get(bl, "unmatched");
	size_t n = gates && gates->type == VPA_JSON_ARR ? gates->n : 0, failures = 0, skipped = 0;
	size_t nc = comps && comps->type == VPA_JSON_ARR ? comps->n : 0;
	size_t nu = unm && unm->type == VPA_JSON_ARR ? unm->n : 0;
	for (size_t i = 0; i < n; i++)
		failures += !is_true(vpa_json_get(gates->items[i], "pass"));
	for (size_t i = 0; i < nc; i++) {
		const char *st = vpa_json_get_str(comps->items[i], "status");
		failures += st && !strcmp(st, "regression");
	}
	for (size_t i = 0; i < nu; i++) {
		int f = is_true(vpa_json_get(unm->items[i], "fail"));
		failures += f;
		skipped += !f;
	}
	double total = wt ? vpa_json_get_num(wt, "total", 0) : 0;
	if (!isfinite(total) || total < 0)
		total = 0;
	const char *name = vpa_json_get_str(sc, "name"), *started = vpa_json_get_str(r, "started");
	size_t na = n_ungated(r);
	size_t tests = n + na + nc + nu;
	skipped += na;
	struct vpa_buf sim;
	vpa_buf_init(&sim);
	vpa_simulated_targets(r, &sim);

	testsuites_open(b, tests, failures, 0, total);
	vpa_buf_puts(b, "  <testsuite name=\"");
	esc(b, name);
	vpa_buf_printf(b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\"",
		       tests, failures, skipped, total);
	if (started) {
		vpa_buf_puts(b, " timestamp=\"");
		esc(b, started);
		vpa_buf_puts(b, "\"");
	}
	vpa_buf_puts(b, ">\n    <properties>\n");
	const char *ver = vpa_json_get_str(r, "vpaudit_version");
	property(b, "vpaudit_version", ver ? ver : VPA_VERSION);
	const struct vpa_json *seed = vpa_json_get(r, "seed");
	if (seed && seed->type == VPA_JSON_NUM)
		vpa_buf_printf(b, "      <property name=\"seed\" value=\"%.17g\"/>\n", seed->num);
	const char *file = vpa_json_get_str(sc, "file");
	if (file)
		property(b, "scenario_file", file);
	property(b, "simulated", sim.len ? "true" : "false");
	if (sim.len)
		property(b, "simulated_targets", sim.data);
	if (vpa_json_get_str(bl, "file"))
		property(b, "baseline", vpa_json_get_str(bl, "file"));
	/* how the baseline is of another audit (warnings of gate/run --baseline) */
	const struct vpa_json *mism = vpa_json_get(bl, "mismatches");
	for (size_t i = 0; mism && mism->type == VPA_JSON_ARR && i < mism->n; i++)
		if (mism->items[i]->type == VPA_JSON_STR)
			property(b, "baseline_mismatch", mism->items[i]->str);
	vpa_buf_puts(b, "    </properties>\n");
	vpa_buf_release(&sim);

	struct vpa_buf t;
	vpa_buf_init(&t);
	for (size_t i = 0; i < n; i++) {
		const struct vpa_json *g = gates->items[i];
		const char *attack = vpa_json_get_str(g, "attack"), *metric = vpa_json_get_str(g, "metric");
		const struct vpa_json *v = vpa_json_get(g, "value");
		const struct vpa_json *layer = vpa_json_get(g, "layer");
		const char *on = vpa_json_get_str(g, "on"), *why = vpa_json_get_str(g, "unreliable");
		int ok = is_true(vpa_json_get(g, "pass"));

		t.len = 0;
		if (is_true(vpa_json_get(g, "simulated")))
			vpa_buf_puts(&t, "[simulated] ");
		vpa_buf_printf(&t, "%s %s ", attack ? attack : "?", metric ? metric : "?");
		if (on)
			vpa_buf_printf(&t, "%s ", on);
		vpa_gate_bound(&t, g, 1);
		if (layer && layer->type == VPA_JSON_NUM)
			vpa_buf_printf(&t, " (layer %.17g)", layer->num);
		vpa_buf_puts(b, "    <testcase classname=\"vpaudit.gates\" name=\"");
		esc(b, vpa_buf_str(&t));
		vpa_buf_puts(b, "\" time=\"0\"");
		if (ok) {
			system_out(b, vpa_json_get_str(g, "message"));
			continue;
		}
		t.len = 0;
		vpa_buf_printf(&t, "%s = ", metric ? metric : "?");
		if (v && v->type == VPA_JSON_NUM && isfinite(v->num))
			vpa_buf_printf(&t, "%.6g", v->num);
		else
			vpa_buf_puts(&t, "undefined");
		const char *rec = vpa_json_get_str(g, "record");
		if (rec)
			vpa_buf_printf(&t, " at %s", rec);
		vpa_buf_puts(&t, ", bound ");
		vpa_gate_bound(&t, g, 1);
		/* after a value that breaks the bound, the records that fail closed besides */
		int breach = vpa_gate_breached(g);
		const char *anti = vpa_json_get_str(g, "anti_correlated");
		const char *uwhere = vpa_json_get_str(g, "unreliable_record");
		const char *awhere = vpa_json_get_str(g, "anti_correlated_record");
		if (breach && anti)
			vpa_buf_printf(&t, "; %s fails closed, anti-correlated: %s", awhere ? awhere : "it",
				       anti);
		if (breach && why)
			vpa_buf_printf(&t, "; %s fails closed, unreliable: %s", uwhere ? uwhere : "it",
				       why);
		if (!breach && why)
			vpa_buf_printf(&t, ", unreliable: %s", why);
		if (!breach && anti)
			vpa_buf_printf(&t, ", anti-correlated: %s", anti);
		vpa_buf_puts(b, ">\n      <failure type=\"gate\" message=\"");
		esc(b, vpa_buf_str(&t));
		vpa_buf_puts(b, "\">");
		const char *msg = vpa_json_get_str(g, "message"), *gf = vpa_json_get_str(g, "file");
		t.len = 0;
		if (gf) {
			vpa_buf_puts(&t, gf);
			double line = vpa_json_get_num(g, "line", 0), col = vpa_json_get_num(g, "col", 0);
			if (line > 0)
				vpa_buf_printf(&t, ":%.0f", line);
			if (line > 0 && col > 0)
				vpa_buf_printf(&t, ":%.0f", col);
			vpa_buf_puts(&t, ": ");
		}
		vpa_buf_puts(&t, msg ? msg : "gate failed");
		esc(b, vpa_buf_str(&t));
		vpa_buf_puts(b, "</failure>\n    </testcase>\n");
	}
	attack_cases(b, r, &t);
	for (size_t i = 0; i < nu; i++)
		baseline_case(b, r, unm->items[i], 1, &t);
	for (size_t i = 0; i < nc; i++)
		baseline_case(b, r, comps->items[i], 0, &t);
	vpa_buf_release(&t);
	vpa_buf_puts(b, "  </testsuite>\n</testsuites>\n");
}

void vpa_report_junit_error(const char *suite, const char *message, struct vpa_buf *b)
{
	testsuites_open(b, 1, 0, 1, 0);
	vpa_buf_puts(b, "  <testsuite name=\"");
	esc(b, suite ? suite : "vpaudit");
	vpa_buf_puts(b, "\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0.000\">\n");
	vpa_buf_puts(b, "    <testcase classname=\"vpaudit.run\" name=\"vpaudit run\" time=\"0\">\n"
			"      <error type=\"error\" message=\"");
	esc(b, message);
	vpa_buf_puts(b, "\">");
	esc(b, message);
	vpa_buf_puts(b, "</error>\n    </testcase>\n  </testsuite>\n</testsuites>\n");
}
