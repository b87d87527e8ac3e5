/*
 * reports/report.h - results.json, report.html, report.pdf, junit.xml, the
 * gnuplot driver and gate evaluation.
 *
 * Everything renders from the results DOM (core/json.h) whose schema,
 * "vpaudit.results/1", is documented in reports/README.md.  `vpaudit run`
 * builds that DOM; `vpaudit report` parses it back from results.json and
 * renders the same files, so a report never needs a re-run.
 *
 * Figures are JSON objects (see reports/README.md):
 *   {"type":"det", "title":T, "series":[{"name":N, "p_miss":[..], "p_fa":[..], "eer":x}]}
 *   {"type":"linkability", "title":T, "centers":[..], "p_mated":[..], "p_non":[..],
 *    "d_local":[..], "dsys":x, "omega":w}
 *   {"type":"lines", "title":T, "xlabel":X, "ylabel":Y, "logx":bool,
 *    "series":[{"name":N, "x":[..], "y":[..]}]}
 * Optional "id" (a file-name-safe slug used for --plot file names).
 */
#ifndef VPA_REPORT_H
#define VPA_REPORT_H

#include "core/base.h"
#include "core/json.h"

enum {
	VPA_REPORT_JSON = 1,
	VPA_REPORT_HTML = 2,
	VPA_REPORT_PDF = 4,
	VPA_REPORT_JUNIT = 8,
	VPA_REPORT_ALL = 15,
};

/*
 * Write the chosen report files into outdir (created if missing), each to a
 * temporary name and renamed when complete.  no_plots: HTML without SVG and
 * PDF without figures (gnuplot is then not needed; PDF needs gnuplot anyway,
 * so with no_plots the PDF is skipped with a warning).  A missing gnuplot
 * is an error (VPA_EIO, "gnuplot not found: install gnuplot-nox or use
 * --no-plots").
 */
int vpa_report_write(const struct vpa_json *results, const char *outdir, unsigned formats,
		     int no_plots, struct vpa_err *err);

/*
 * Render one figure with gnuplot (fork/exec, data on stdin, no shell) into
 * out as "svg" or "pdf" bytes.
 */
int vpa_plot_render(const struct vpa_json *fig, const char *format, struct vpa_buf *out,
		    struct vpa_err *err);

/* Render a figure to BASE.svg and BASE.pdf (atomic writes). */
int vpa_plot_files(const struct vpa_json *fig, const char *base, struct vpa_err *err);

/*
 * Gates.  `gates` is a JSON array of
 *   {"attack":"ID[.SUB]", "metric":NAME, "min":X | "max":X, ["layer":N],
 *    "file":F, "line":L, "col":C}
 * (the scenario loader converts YAML gates to this form, keeping their marks).
 * Evaluates each against results["records"], sets results["gates"] to
 * [{..., "value":V, "pass":bool, "message":M}] and results["status"] to
 * "pass"/"fail".  Returns 0 when all hold, VPA_EGATE when one fails, or an
 * error (VPA_EINPUT: a gate names an attack/metric not in the results,
 * blaming the gate's file:line:col).
 */
int vpa_gates_evaluate(struct vpa_json *results, const struct vpa_json *gates,
		       struct vpa_err *err);

#endif
