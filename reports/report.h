/*
 * reports/report.h - results.json, report.html, report.pdf, junit.xml, the
 * gnuplot driver and gate evaluation.
 *
 * Everything renders from the results DOM (base/json.h) whose schema,
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

#include "base/base.h"
#include "base/json.h"

enum {
	VPA_REPORT_JSON = 1,
	VPA_REPORT_HTML = 2,
	VPA_REPORT_PDF = 4,
	VPA_REPORT_JUNIT = 8,
	VPA_REPORT_VPC = 16, /* result_for_rank.txt and vpc2022_results.txt */
	VPA_REPORT_ALL = 31,
};

/* Whether a record's linkability (the VoicePrivacy D<->sys) is an estimate
 * worth printing: defined (not null) and from at least VPA_LINK_MIN_ESTIMATE mated
 * scores (n_target).  With 10..19 the VoicePrivacy histogram has one bin and
 * D<->sys is 0 whatever the scores, so the report and vpc2022_results.txt say
 * "not estimated" where results.json keeps the reference's 0 (flagged in
 * "unreliable").  *n_mated (may be NULL) gets n_target or NAN. */
#define VPA_LINK_MIN_ESTIMATE 20
int vpa_link_estimated(const struct vpa_json *rec, double *n_mated /* OUT */);

/*
 * The VoicePrivacy text formats of the linkage records of anonymised speech
 * (reports/vpc_format.c, reports/README.md "VoicePrivacy formats"): the VPC
 * 2024 result_for_rank summary appended to rank, the VPC 2022 results.txt
 * blocks appended to vpc2022.  Returns 1 when the results have such records,
 * 0 (nothing appended) when not.
 */
int vpa_report_vpc(const struct vpa_json *results, struct vpa_buf *rank, struct vpa_buf *vpc2022);

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
 * VPA_REPORT_VPC writes result_for_rank.txt and vpc2022_results.txt when the
 * results have linkage records of anonymised speech (vpa_report_vpc), and
 * otherwise removes those two files of an earlier run (after the others are
 * in place), so the folder never mixes runs.
 */
int vpa_report_write(const struct vpa_json *results, const char *outdir, unsigned formats,
		     int no_plots, struct vpa_err *err);

/*
 * The output folder of `vpaudit run` (reports/outdir.c).
 * vpa_outdir_prepare, before any computation: create outdir, remove the
 * stale temporaries of killed runs (vpa_outdir_remove_stale, with a
 * warning), check that a file can be created there (as a temporary is:
 * vpa_create_new), remove the report files of an earlier run (so that a run
 * killed later leaves none looking current), warn when less than 64 MiB are
 * free there, and, when HTML or PDF is asked for without no_plots, that
 * gnuplot runs.  Errors: VPA_EIO ("OUT: cannot write in the output folder:
 * Permission denied", the gnuplot errors of vpa_gnuplot_run).
 */
int vpa_outdir_prepare(const char *outdir, unsigned formats, int no_plots, struct vpa_err *err);
/*
 * Remove OUTDIR/R.tmp.PID for each report file R (results.json, report.html,
 * report.pdf, junit.xml) whose PID (digits only) is no live process: the
 * temporaries of a killed run.  Returns how many were removed.
 */
size_t vpa_outdir_remove_stale(const char *outdir);
/* Remove the report files whose VPA_REPORT_* bit is not in keep (warns when one cannot be);
 * VPA_REPORT_VPC covers result_for_rank.txt and vpc2022_results.txt. */
void vpa_outdir_remove_reports(const char *outdir, unsigned keep);
/*
 * After a failed run: remove every report file, and, when formats asks for
 * junit.xml, write one with a single <error> testcase carrying message
 * (vpa_report_junit_error).  Best effort: problems are warnings that say why
 * ("write error: No space left on device"); none when vpa_outdir_prepare found
 * the folder unwritable (the run's one error line says so).
 */
void vpa_outdir_fail(const char *outdir, unsigned formats, const char *suite, const char *message);

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
 *    ["sweep":V], ["subs":[S,..]], ["exclude":[S,..]], ["on":"value"|"ci_low"|"ci_high"],
 *    ["allow_unreliable":bool], ["allow_anti_correlated":bool], "file":F, "line":L, "col":C}
 * (the scenario loader converts YAML gates to this form, keeping their marks).
 * Evaluates each against results["records"], sets results["gates"] to
 * [{..., "value":V, "pass":bool, "simulated":bool, ["unreliable":REASON],
 * "message":M}] and results["status"] to "pass"/"fail".  Fail closed: a
 * selected record whose value is undefined, or whose "unreliable" object
 * names the metric (or a dotted prefix of it) fails the gate with
 * "unreliable: REASON" in its message; "allow_unreliable" waives the latter
 * only.  A record marked "anti_correlated" fails a gate on a metric that
 * reads the score direction (vpa_metric_reads_direction) with
 * "anti-correlated: FINDING" in its message and "anti_correlated":FINDING
 * in the gate's object, unless the gate says "allow_anti_correlated".  When
 * a selected value breaks the bound, the message names that (the worst value
 * and its record) first and each reason to fail closed after it ("a1 eer =
 * 0.142 < 0.2 (worst of 3 records: layer 3); and layer 1 fails closed,
 * unreliable: REASON"), "value" is the worst value and, when the gate selects
 * several records, "record", "unreliable_record" and "anti_correlated_record"
 * name them ("layer 3") in a failed gate.  Without a breach the first reason
 * to fail closed is the message, and "value" that record's.  Returns 0 when
 * all hold, VPA_EGATE when one fails, or an error (VPA_EINPUT: a gate names an attack/sub/layer/sweep value/metric not in the
 * results, selects no record, or asks for an interval the records lack,
 * blaming the gate's file:line:col).
 */
int vpa_gates_evaluate(struct vpa_json *results, const struct vpa_json *gates,
		       struct vpa_err *err);

/*
 * 1 when the gate object's "value" (a number) breaks its "min" or "max": the gate
 * failed on the bound, whatever else failed closed (its "unreliable" and
 * "anti_correlated" then concern other records, "unreliable_record" and
 * "anti_correlated_record").  0 for an undefined value or one within the bounds.
 */
int vpa_gate_breached(const struct vpa_json *gate);
/* "PASS msg" / "FAIL [simulated] msg": a gate's line on stdout (appended to out). */
void vpa_gate_line(struct vpa_buf *out, const struct vpa_json *gate);
/* 1 when attack "ID[.SUB]" of results attacks a target with "simulated": true. */
int vpa_results_simulated(const struct vpa_json *results, const char *attack);
/* 1 for the metrics attacks store bootstrap intervals of (ci[METRIC] = [lo, hi]). */
int vpa_metric_has_interval(const char *metric);

/*
 * Reversed scores (reports/reversal.c).  vpa_rec_anti_correlated: 1 when
 * record rec says "anti_correlated": true (metrics/README.md "Reversed
 * scores"), and then, when b is not NULL, appends the finding "the scores are
 * anti-correlated with identity: an attacker who reverses them reaches EER
 * 12.2%" (lowercase, no full stop; with evidence, the sweep EER and its
 * interval in parentheses after "identity").  0 otherwise, b untouched.
 * vpa_metric_reads_direction: 1 for the metrics that read scores as "higher
 * = same source" and so read reversed scores as chance (eer, eer_sweep,
 * cllr, cllr_min, min_dcf, zebra.*), the ones a gate fails closed on for an
 * anti-correlated record unless it says "allow_anti_correlated".
 */
int vpa_rec_anti_correlated(const struct vpa_json *rec, int evidence, struct vpa_buf *b);
int vpa_metric_reads_direction(const char *metric);
/* The value at a dotted path ("zebra.dece") in an object; *present 0 when absent. */
const struct vpa_json *vpa_metric_at(const struct vpa_json *m, const char *path, int *present);
/* Equal scalars (numbers, strings, booleans; null or absent equal each other). */
int vpa_json_same(const struct vpa_json *a, const struct vpa_json *b);
/* "sub x, layer 3, sweep 0.5" naming a record (sub only when name_sub), appended. */
void vpa_record_describe(struct vpa_buf *b, const struct vpa_json *rec, int name_sub);

/*
 * The baseline comparison (`vpaudit gate --baseline`, `vpaudit run
 * --baseline`).  Records are matched on (attack, sub, layer, sweep); no
 * record in common is an error (VPA_EINPUT, "OLD: matched 0 of N records:
 * the baseline shares no record with the results; is it the same
 * scenario?").  For every matched pair, every compared metric
 * (vpa_metric_direction != 0; only `metrics` when n_metrics > 0) that moved
 * in its leaky direction by more than its tolerance (vpa_baseline_tolerance:
 * tolerances[METRIC], else tolerance scaled by the metric's unit) is a
 * regression, and so is a value that became undefined.
 * With `significant`, a move of a metric with intervals in both files counts
 * only when it also exceeds sqrt(h_old^2 + h_new^2), the half-widths of the
 * two intervals on the sides facing each other (vpa_baseline_significance);
 * the other comparisons are made on the tolerance alone, their messages say
 * so, each comparison has "basis" ("intervals" | "tolerance") and a second
 * BASELINE line counts and names both groups.
 * Records on one side only are listed ("unmatched"): one only in the
 * baseline is a failure (a record the baseline checked is no longer
 * compared, e.g. a renamed attacker), one only in the results a failure with
 * `strict` only.  vpa_baseline_provenance's differences are stored as
 * "mismatches" (strings; the CLI prints them as warnings); with `strict` any
 * is an error (VPA_EINPUT, "OLD: the baseline is not of the same audit (an
 * error with --strict): the baseline's seed is 2, the results' 1").
 * *out (caller frees): {"file","matched","records","baseline_records",
 * "tolerance","tolerances","metrics","significant","strict","regressions",
 * "failures","status","mismatches":[..],"unmatched":[..],"comparisons":[{"attack","sub","layer",
 * "sweep","name","metric","old","new","delta","tolerance",["significant"],
 * "status":"regression"|"stable","message"}],"lines":[{"kind","text"}]} where
 * lines are the log: BASELINE (the counts), WARNING (other arithmetic:
 * vpa_machine_mismatch), UNMATCHED, REGRESSION, STABLE (one per record
 * without regression); each comparison also has "unit".
 * o == NULL: the defaults (VPA_DEFAULT_TOLERANCE,
 * every compared metric, neither significant nor strict).  Returns 0,
 * VPA_EGATE (a failure) or an error.
 */
#define VPA_DEFAULT_TOLERANCE 0.01 /* for fractions: one point of EER or linkability */
struct vpa_baseline_opts {
	const char *name;                  /* the baseline's file name for messages, or NULL */
	double tolerance;                  /* for fractions, scaled by unit; NAN -> VPA_DEFAULT_TOLERANCE */
	const struct vpa_json *tolerances; /* object METRIC -> number, or NULL; borrowed */
	const char *const *metrics;        /* compare only these (n_metrics > 0); borrowed */
	size_t n_metrics;
	int significant, strict;
};
int vpa_gates_baseline(const struct vpa_json *results, const struct vpa_json *baseline,
		       const struct vpa_baseline_opts *o, struct vpa_json **out /* OUT */,
		       struct vpa_err *err);
/*
 * How the baseline differs from the results as an audit, one sentence each
 * appended to out (a JSON array) as strings: another scenario name, another
 * set of target ids, another seed, input files (results["inputs"], by path
 * and sha256; not the scenario files, nor baseline_name or the baseline's own
 * baseline file: results files `run --baseline` read) that changed or are on
 * one side only.  A key absent from either file is not compared.
 *   "the baseline is of scenario 'b', the results of 'a'"
 *   "the baseline has targets [vpc], the results [vpc2]"
 *   "the baseline's seed is 2, the results' 1"
 *   "1 input file differs from the baseline's: data/x.txt (sha256 8bc743d1e3a2 in the
 *    baseline, 19733c5e1e36 in the results)"
 */
void vpa_baseline_provenance(const struct vpa_json *results, const struct vpa_json *baseline,
			     const char *baseline_name, struct vpa_json *out);
/*
 * Whether the baseline and the results were computed with different
 * arithmetic (their "machine": BLAS version and kernel, libm's FMA variants,
 * vpaudit's own paths, portable mode, and the CPU model unless both are
 * portable; reports/machine.c): 1 with the sentence appended to out (the
 * baseline comparison's WARNING line), 0 when they agree or neither file
 * records it (older files).
 */
int vpa_machine_mismatch(const struct vpa_json *results, const struct vpa_json *baseline,
			 struct vpa_buf *out);
/* results["machine"]'s arithmetic in words, appended: "OpenBLAS 0.3.21, kernel
 * Haswell; glibc 2.36, libm with its FMA variants; ..." (the provenance). */
void vpa_machine_describe(struct vpa_buf *b, const struct vpa_json *m);
/* The significance rule of --significant: 1 when the move is beyond the intervals. */
int vpa_baseline_significance(int dir, double old, double old_lo, double old_hi, double new_v,
			      double new_lo, double new_hi);
/* +1: higher is leakier (linkability), -1: lower is leakier (eer), 0: not compared. */
int vpa_metric_direction(const char *metric);
/*
 * Tolerances by unit (reports/README.md "Tolerances by unit").  The unit of
 * a compared metric ("fraction", "bits", "bits of exposure", "log10 LR",
 * "rank", "epsilon", "ratio"; NULL when not compared) and, in *factor when
 * not NULL, the factor its tolerance takes: a tolerance X (`tolerance:`,
 * `gate --tolerance`) is stated for fractions and a metric of another unit
 * gets X * factor.  vpa_baseline_tolerance: tolerances[metric] when set
 * (absolute, in the metric's own unit), else X * factor, X NAN meaning
 * VPA_DEFAULT_TOLERANCE.  Examples with X = 0.02: eer 0.02, cllr 0.04 bits,
 * zebra.log10_lr_worst 0.2, mean_rank 2 ranks, exposure 0.2 bits.
 */
const char *vpa_metric_unit(const char *metric, double *factor /* OUT, may be NULL */);
double vpa_baseline_tolerance(const char *metric, double tolerance,
			      const struct vpa_json *tolerances);
/* The i-th compared metric name (i from 0), NULL past the end. */
const char *vpa_compared_metric(size_t i);

/* ---- Building blocks of the writers (exposed for tests and tools) ---- */

/*
 * The check every reader of a results file shares (`vpaudit gate`, `run
 * --baseline`, `report` through vpa_report_check): a JSON object with
 * "schema" exactly "vpaudit.results/1" and a "records" array of objects,
 * each with a string "attack", a "sub" string or null, a "layer" number or
 * null, a "sweep" number, string or null, an object "metrics" whose values
 * are numbers, null, booleans or nested objects (a string only under a key
 * named "category", such as zebra.category) and an optional object "ci";
 * no two records with the same key (attack, sub, layer, sweep).  `name`
 * (borrowed) names the file:
 *   "new.json:1:12: unsupported schema 'vpaudit.results/999' (expected 'vpaudit.results/1')"
 *   "new.json:4:3: record 2 has the same (attack, sub, layer, sweep) as record 1: eval.semi"
 *   "new.json:3:60: record 1: metric 'eer' must be a number or null, got a string"
 * VPA_EINPUT.
 */
int vpa_results_check(const struct vpa_json *results, const char *name, struct vpa_err *err);

/*
 * Check that `results` is a "vpaudit.results/1" document the writers can
 * render: vpa_results_check, then "scenario" (an object with
 * a string "name"), "attacks" (objects with a string "id" and optional valid
 * "figures"), "records" (objects with a string "attack" and an object
 * "metrics"); optional "targets", "figures", "gates" (objects with string
 * "attack", "metric" and a boolean "pass"), "warnings" (strings); the
 * scenario's "description" at most VPA_DESCRIPTION_MAX characters and no
 * string or key longer than 1 MiB (what reaches the renderers).  `name`
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
 * (none when no_plots).  PDF: the same document model typeset with cairo and
 * Pango (reports/pdf_doc.c), the figures drawn from gnuplot's SVGs with
 * librsvg (one gnuplot run for both files).  JUnit: cannot fail.
 */
int vpa_report_html(const struct vpa_json *results, int no_plots, struct vpa_buf *out,
		    struct vpa_err *err);
int vpa_report_pdf(const struct vpa_json *results, struct vpa_buf *out, struct vpa_err *err);
void vpa_report_junit(const struct vpa_json *results, struct vpa_buf *out);
/*
 * junit.xml of a run that failed: one testsuite (named suite, or "vpaudit")
 * with one testcase whose <error> carries message, so that a CI job that
 * publishes JUnit "always" shows the error.  Cannot fail.
 */
void vpa_report_junit_error(const char *suite, const char *message, struct vpa_buf *out);

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
