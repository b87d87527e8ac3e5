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
 * is an error (VPA_EIO, "gnuplot not found: install gnuplot-nox or run with
 * --no-plots").
 *
 * Every file is rendered in memory first (results.json, report.html,
 * report.pdf, junit.xml); only when all succeeded are they written, each to
 * OUTDIR/NAME.tmp.PID, and renamed into place after all temporaries were
 * written.  On error the temporaries are removed and nothing is renamed.
 * The results are checked first with vpa_report_check(results, "results", ...).
 */
int vpa_report_write(const struct vpa_json *results, const char *outdir, unsigned formats,
		     int no_plots, struct vpa_err *err);

/*
 * Render one figure with gnuplot (fork/exec, data on stdin, no shell) into
 * out as "svg" or "pdf" bytes.  The SVG is a complete document (XML prolog
 * included); the PDF is 6.4 x 4.2 inches.  Bytes are appended to out.
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

/*
 * `vpaudit gate --baseline`: compare every record of results with the record
 * of baseline that has the same (attack, sub, layer, sweep) and flag each
 * metric that moved in its leaky direction (vpa_metric_direction) by more
 * than tolerance (absolute).  *flags: array of {"attack","sub","layer",
 * "sweep","metric","old","new","delta","message"}, caller frees.  Returns 0
 * when nothing moved, VPA_EGATE when something did, VPA_EINPUT on bad input.
 */
int vpa_gates_baseline(const struct vpa_json *results, const struct vpa_json *baseline,
		       double tolerance, struct vpa_json **flags /* OUT */, struct vpa_err *err);
/* +1: higher is leakier (linkability), -1: lower is leakier (eer), 0: not compared. */
int vpa_metric_direction(const char *metric);

/* ---- Building blocks of the writers (exposed for tests and tools) ---- */

/*
 * Check that `results` is a "vpaudit.results/1" document the writers can
 * render: "schema" (exactly "vpaudit.results/1"), "scenario" (an object with
 * a string "name"), "attacks" (objects with a string "id" and optional valid
 * "figures"), "records" (objects with a string "attack" and an object
 * "metrics"); optional "targets", "figures", "gates" (objects with string
 * "attack", "metric" and a boolean "pass"), "warnings" (strings).  `name`
 * (borrowed) names the file in messages:
 *   "results.json: missing 'records'"
 *   "results.json:3:13: unsupported schema 'x' (expected 'vpaudit.results/1')"
 * (line:col come from the parsed DOM; omitted for a built DOM).  VPA_EINPUT.
 */
int vpa_report_check(const struct vpa_json *results, const char *name, struct vpa_err *err);

/* The same check for one figure (see the FIGURE types above). */
int vpa_plot_check(const struct vpa_json *fig, const char *name, struct vpa_err *err);

/*
 * Render the files into memory (appended to out).  Each expects a checked
 * DOM (vpa_report_check).  HTML: self-contained, one inline <svg> per figure
 * (none when no_plots).  PDF: one multi-page document made by one gnuplot
 * run.  JUnit: cannot fail.
 */
int vpa_report_html(const struct vpa_json *results, int no_plots, struct vpa_buf *out,
		    struct vpa_err *err);
int vpa_report_pdf(const struct vpa_json *results, struct vpa_buf *out, struct vpa_err *err);
void vpa_report_junit(const struct vpa_json *results, struct vpa_buf *out);

/* Append s with & < > " ' escaped (valid in HTML/XML text and attributes). */
void vpa_xml_escape(struct vpa_buf *out, const char *s);

/*
 * Format a metric value for a table cell (plain text, not escaped):
 * null -> "undefined"; counts (key "n", "n_*", "*_count", "reps", integral
 * values only) -> "900"; rates (key "eer", "eer_*" except "*_threshold",
 * "*_rate", "accuracy", "top1", "top5", "tpr", "fpr", "fnr", "tnr",
 * "p_miss", "p_fa") -> "12.34%"; other numbers -> at most 4 decimals
 * ("0.1235", "2.1", "1.235e-05"); strings as they are; booleans
 * "true"/"false"; arrays "[a, b]" (each element by the same rule).
 * The key's last dotted component decides ("zebra.dece" -> "dece").
 */
void vpa_report_fmt(struct vpa_buf *out, const char *key, const struct vpa_json *v);

/*
 * Render n figures as n SVG documents in one gnuplot run.  svgs is an array
 * of n initialised buffers; svgs[i] receives figure i's SVG element without
 * the XML prolog, with its element ids prefixed "vpa<prefix+i>-" so several
 * can be inlined into one HTML page.
 */
int vpa_plot_svgs(const struct vpa_json *const *figs, size_t n, size_t prefix,
		  struct vpa_buf *svgs, struct vpa_err *err);

/*
 * Append the gnuplot commands that draw one figure (from `reset` to its
 * `plot` command, data as inline blocks named $<tag>_...).  The terminal is
 * set by the caller.  Checks the figure first (vpa_plot_check).
 */
int vpa_plot_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *script,
		    struct vpa_err *err);

/*
 * Append s as a gnuplot string expression that evaluates to s with control
 * characters turned into spaces: single-quoted pieces ('' for a quote after
 * an ordinary character) joined by '.', and sprintf('%c',39) for a quote
 * gnuplot cannot read inside a piece (at its start or after ''); never a
 * double-quoted string.  Any text is safe wherever gnuplot takes a string
 * expression (titles, labels, tic labels, key entries).
 */
void vpa_gnuplot_quote(struct vpa_buf *out, const char *s);
/* The same for a tic label, which gnuplot reads as a format: % -> %%. */
void vpa_gnuplot_quote_tic(struct vpa_buf *out, const char *s);

/*
 * Run gnuplot (the first executable "gnuplot" on PATH, with -d: no init
 * files) with `script` on its standard input; its standard output is
 * appended to out.  Errors (VPA_EIO): "gnuplot not found: install
 * gnuplot-nox or run with --no-plots"; "gnuplot failed: line 3: undefined
 * variable: foo" (gnuplot's first error line, or its exit status);
 * "gnuplot timed out after 300 s".  Warnings gnuplot prints are passed on
 * with vpa_warn().
 */
int vpa_gnuplot_run(const char *script, size_t len, struct vpa_buf *out, struct vpa_err *err);

/*
 * n gnuplot runs at once (one process each, all serviced by one poll loop,
 * so they use several cores): scripts[i] (lens[i] bytes) in, standard output
 * appended to outs[i].  When a run fails, the error is that of the first
 * failing run in index order; the others are still waited for.
 */
int vpa_gnuplot_run_many(const char *const *scripts, const size_t *lens, size_t n,
			 struct vpa_buf *outs, struct vpa_err *err);

#endif
