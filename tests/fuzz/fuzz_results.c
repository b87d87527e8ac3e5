/*
 * tests/fuzz/fuzz_results.c - results.json as `vpaudit report` and `vpaudit
 * gate` read it, on arbitrary bytes: vpa_json_parse, then
 *   report: vpa_report_check; when it passes, every writer that does not need
 *           gnuplot runs in memory (report.html without plots, junit.xml, the
 *           gates table, every figure's gnuplot script, the document model
 *           and report.pdf typeset from it without figures);
 *   gate:   vpa_results_check (what `gate` refuses); when it passes, the
 *           stored gates (or none) re-evaluated with vpa_gates_evaluate,
 *           and vpa_gates_baseline against the file itself (nothing can move).
 * Any error must be one non-empty line; nothing may crash or leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "reports/report.h"
#include "reports/doc.h"
#include "reports/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const struct vpa_err *err)
{
	if (err->msg[0] == '\0' || strchr(err->msg, '\n'))
		abort();
}

static void report_side(const struct vpa_json *r)
{
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_report_check(r, "results.json", &err)) {
		one_line(&err);
		return;
	}
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_html_assemble(r, 1, NULL, &b);
	vpa_report_junit(r, &b);
	struct vpa_table t;
	vpa_table_gates(r, &t);
	vpa_table_release(&t);
	size_t nf = vpa_count_figures(r);
	const struct vpa_json **figs = calloc(nf ? nf : 1, sizeof(*figs));
	vpa_collect_figures(r, figs);
	for (size_t i = 0; i < nf; i++) {
		vpa_err_init(&err);
		if (vpa_plot_script(figs[i], "f", &b, &err))
			abort(); /* vpa_report_check accepted every figure */
	}
	free(figs);
	/* the document model both reports render, and the typeset PDF of it
	 * without figures (no gnuplot) */
	struct vpa_doc doc;
	vpa_doc_build(r, &doc);
	vpa_err_init(&err);
	if (vpa_pdf_doc(&doc, NULL, 0, &b, &err))
		one_line(&err);
	vpa_doc_release(&doc);
	vpa_buf_release(&b);
}

static void gate_side(const struct vpa_json *r)
{
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_results_check(r, "results.json", &err)) {
		one_line(&err);
		return; /* `vpaudit gate` refuses it before evaluating */
	}
	struct vpa_json *copy = vpa_json_clone(r);
	const struct vpa_json *g = vpa_json_get(r, "gates");
	struct vpa_json *gates = g ? vpa_json_clone(g) : vpa_json_arr();
	vpa_err_init(&err);
	int rc = vpa_gates_evaluate(copy, gates, &err);
	if (rc && rc != VPA_EGATE)
		one_line(&err);
	struct vpa_json *flags = NULL;
	vpa_err_init(&err);
	/* significant: the intervals of a file compared with itself cannot separate */
	struct vpa_baseline_opts bo = {"results.json", 0, NULL, NULL, 0, 1, 0};
	rc = vpa_gates_baseline(r, r, &bo, &flags, &err);
	if (rc == VPA_EGATE)
		abort(); /* a file compared with itself cannot have moved */
	vpa_json_free(flags);
	flags = NULL;
	vpa_err_init(&err);
	rc = vpa_gates_baseline(r, r, NULL, &flags, &err); /* the defaults */
	if (rc == VPA_EGATE)
		abort();
	if (rc)
		one_line(&err);
	vpa_json_free(flags);
	vpa_json_free(gates);
	vpa_json_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = vpa_json_parse("results.json", (const char *)data, size, &err);
	if (!r) {
		one_line(&err);
		return 0;
	}
	report_side(r);
	gate_side(r);
	vpa_json_free(r);
	return 0;
}
