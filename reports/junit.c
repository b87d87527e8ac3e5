/*
 * reports/junit.c - junit.xml: one <testsuite> per scenario, one <testcase>
 * per gate; a failed gate (an undefined metric included) is a <failure>
 * whose message names the metric, its value and the bound, e.g.
 *   <failure message="eer = 0.25, bound &gt;= 0.3" type="gate">...</failure>
 * CI systems (GitLab, Jenkins, GitHub test reporters) read this form.
 */
#include <math.h>
#include <string.h>

#include "reports/table.h"

static void esc(struct vpa_buf *b, const char *s)
{
	vpa_xml_escape(b, s ? s : "");
}

void vpa_report_junit(const struct vpa_json *r, struct vpa_buf *b)
{
	const struct vpa_json *gates = vpa_json_get(r, "gates");
	const struct vpa_json *sc = vpa_json_get(r, "scenario"), *wt = vpa_json_get(r, "wall_time");
	size_t n = gates && gates->type == VPA_JSON_ARR ? gates->n : 0, failures = 0;
	for (size_t i = 0; i < n; i++) {
		const struct vpa_json *p = vpa_json_get(gates->items[i], "pass");
		failures += !(p && p->type == VPA_JSON_BOOL && p->boolean);
	}
	double total = wt ? vpa_json_get_num(wt, "total", 0) : 0;
	if (!isfinite(total) || total < 0)
		total = 0;
	const char *name = vpa_json_get_str(sc, "name"), *started = vpa_json_get_str(r, "started");

	vpa_buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	vpa_buf_printf(b, "<testsuites name=\"vpaudit\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n",
		       n, failures, total);
	vpa_buf_puts(b, "  <testsuite name=\"");
	esc(b, name);
	vpa_buf_printf(b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"%.3f\"",
		       n, failures, total);
	if (started) {
		vpa_buf_puts(b, " timestamp=\"");
		esc(b, started);
		vpa_buf_puts(b, "\"");
	}
	vpa_buf_puts(b, ">\n    <properties>\n");
	vpa_buf_printf(b, "      <property name=\"vpaudit_version\" value=\"");
	const char *ver = vpa_json_get_str(r, "vpaudit_version");
	esc(b, ver ? ver : VPA_VERSION);
	vpa_buf_puts(b, "\"/>\n");
	const struct vpa_json *seed = vpa_json_get(r, "seed");
	if (seed && seed->type == VPA_JSON_NUM)
		vpa_buf_printf(b, "      <property name=\"seed\" value=\"%.17g\"/>\n", seed->num);
	const char *file = vpa_json_get_str(sc, "file");
	if (file) {
		vpa_buf_puts(b, "      <property name=\"scenario_file\" value=\"");
		esc(b, file);
		vpa_buf_puts(b, "\"/>\n");
	}
	vpa_buf_puts(b, "    </properties>\n");

	struct vpa_buf t;
	vpa_buf_init(&t);
	for (size_t i = 0; i < n; i++) {
		const struct vpa_json *g = gates->items[i];
		const char *attack = vpa_json_get_str(g, "attack"), *metric = vpa_json_get_str(g, "metric");
		const struct vpa_json *p = vpa_json_get(g, "pass"), *v = vpa_json_get(g, "value");
		const struct vpa_json *layer = vpa_json_get(g, "layer");
		int ok = p && p->type == VPA_JSON_BOOL && p->boolean;

		t.len = 0;
		vpa_buf_printf(&t, "%s %s ", attack ? attack : "?", metric ? metric : "?");
		vpa_gate_bound(&t, g, 1);
		if (layer && layer->type == VPA_JSON_NUM)
			vpa_buf_printf(&t, " (layer %.17g)", layer->num);
		vpa_buf_puts(b, "    <testcase classname=\"vpaudit.gates\" name=\"");
		esc(b, vpa_buf_str(&t));
		vpa_buf_puts(b, "\" time=\"0\"");
		if (ok) {
			vpa_buf_puts(b, "/>\n");
			continue;
		}
		t.len = 0;
		vpa_buf_printf(&t, "%s = ", metric ? metric : "?");
		if (v && v->type == VPA_JSON_NUM && isfinite(v->num))
			vpa_buf_printf(&t, "%.6g", v->num);
		else
			vpa_buf_puts(&t, "undefined");
		vpa_buf_puts(&t, ", bound ");
		vpa_gate_bound(&t, g, 1);
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
	vpa_buf_release(&t);
	vpa_buf_puts(b, "  </testsuite>\n</testsuites>\n");
}
