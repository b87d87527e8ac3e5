/*
 * reports/table.h - private to reports/: the lower layers of reports/
 * (reports/README.md "Layers"), which every file above may use:
 *   text.c    text helpers (escaping and number formatting are in report.h)
 *   lookup.c  lookups in a checked results DOM
 *   table.c   the table model: the tables the HTML and PDF writers share
 *             (gate summary, per-attack metrics, and those the sections
 *             build), as plain text cells.  Both writers render the same
 *             model, so the PDF says what the HTML says.
 * and, at the end, entry points of upper files that write.c and the tests
 * call (plot.c, render.c).
 */
#ifndef VPA_REPORT_TABLE_H
#define VPA_REPORT_TABLE_H

#include <stdarg.h>

#include "reports/report.h"

/* ---- text helpers (text.c; vpa_xml_escape and vpa_report_fmt are in report.h) ---- */

/* printf(fmt, ap) into a fresh heap string (xcalloc: never NULL). */
char *vpa_vfmt(const char *fmt, va_list ap);
/* "12.3%" with one decimal (percent of x). */
void vpa_put_pct(struct vpa_buf *b, double x);
/* Number of UTF-8 code points in s (for monospace alignment). */
size_t vpa_utf8_width(const char *s);

/* ---- lookups in the results (lookup.c) ---- */

/* Value of metric path ("zebra.dece") in a record's metrics, or NAN. */
double vpa_rec_num(const struct vpa_json *rec, const char *path);
/* The record's "unreliable" reason for path (or a prefix of it: "zebra"
 * covers "zebra.dece"), or NULL. */
const char *vpa_rec_unreliable(const struct vpa_json *rec, const char *path);
/* Whether record i of recs speaks for its (attack, sub) in the summary and
 * the recommendations: records without a layer always; per-layer records the
 * leakiest layer (lowest EER); identification (kind "identification", whose
 * "layer" is the population) the largest population. */
int vpa_rec_representative(const struct vpa_json *recs, size_t i, const char *kind);
/* Whether the attack's target has "simulated": true. */
int vpa_attack_simulated(const struct vpa_json *r, const char *attack);
/* The attack's target object, or NULL. */
const struct vpa_json *vpa_attack_target(const struct vpa_json *r, const char *attack);
/* The attack object with that id, or NULL. */
const struct vpa_json *vpa_attack_find(const struct vpa_json *r, const char *attack);
/* (vpa_link_estimated, read by vpc_format.c, is in report.h.) */

/* The "simulated" target ids, ", "-separated, each followed by " (synthetic
 * speech)" when the target's info has a "synthetic" note; empty when none. */
void vpa_simulated_targets(const struct vpa_json *results, struct vpa_buf *out);
/* A target's info "synthetic" note (the synthetic speech corpus of an audio
 * target: "SYNTHETIC speech (espeak-ng / flite voices ...), not recordings of
 * people"), or NULL. */
const char *vpa_target_synthetic(const struct vpa_json *target);
/* Names of a target's score sets marked "synthetic" in its info ("a, b"), appended. */
void vpa_synthetic_sets(const struct vpa_json *target, struct vpa_buf *out);

/* Number of figures in results (attacks' and scenario-level). */
size_t vpa_count_figures(const struct vpa_json *results);

/*
 * The figures of results in page order (each attack's, then the scenario's);
 * figs has room for vpa_count_figures(results) pointers (borrowed).
 */
void vpa_collect_figures(const struct vpa_json *results, const struct vpa_json **figs);

/* ---- the table model (table.c) ---- */

enum { VPA_ROW_PLAIN, VPA_ROW_PASS, VPA_ROW_FAIL };

struct vpa_table {
	size_t n_rows, n_cols;
	size_t n_key;   /* leading label columns (repeated when a table is split) */
	char **head;    /* (n_cols), owned */
	int *numeric;   /* (n_cols): right-aligned numbers */
	char **cells;   /* (n_rows * n_cols), owned, plain text (not escaped) */
	int *row_class; /* (n_rows): VPA_ROW_* */
	char *note;     /* owned or NULL: a sentence shown under the table */
	/* Per cell (n_rows * n_cols), display only: */
	int *cell_class;  /* VPA_CELL_*: UNRELIABLE cells are drawn grey */
	char **cell_note; /* owned or NULL: shown beside the value ("unreliable:
			     12 mated scores (fewer than 100)", "not calibrated ...") */
	char *cell_summary; /* owned or NULL: the cell notes gathered in sentences,
			       for a page that cannot show them beside the values */
};

enum { VPA_CELL_PLAIN = 0, VPA_CELL_UNRELIABLE = 1 };

/* A fresh table n_rows x n_cols (one key column) whose cells the caller
 * fills with xstrdup'd text. */
void vpa_table_new(struct vpa_table *t, size_t n_rows, size_t n_cols);
/* cells[r][c] = printf(...); r == (size_t)-1: head[c] */
void vpa_table_set(struct vpa_table *t, size_t r, size_t c, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void vpa_table_release(struct vpa_table *t);

/* Summary: one row per gate (attack, metric, [layer], value, bound, result). */
void vpa_table_gates(const struct vpa_json *results, struct vpa_table *t /* OUT */);

/*
 * Metrics of one attack: one row per record of that attack (label columns
 * sub/layer/sweep when any record sets them), one column per metric key
 * present (nested objects flattened as "zebra.dece"), a "KEY 95% CI" column
 * after each metric with a confidence interval.  0 rows when the attack has
 * no records.  A value the record names in "unreliable" (by its key or a
 * prefix) is VPA_CELL_UNRELIABLE with the note "unreliable: REASON" (its CI
 * cell grey too); a Cllr above 1 bit has the note that the scores are not
 * calibrated LLRs (read cllr_min).
 */
void vpa_table_attack(const struct vpa_json *results, const char *attack,
		      struct vpa_table *t /* OUT */);

/* The bound of a gate as text: ">= 30.00%", "<= 0.2", "in [a, b]". */
void vpa_gate_bound(struct vpa_buf *out, const struct vpa_json *gate, int raw);

/* ---- entry points of upper files, for write.c and the tests ---- */

/* vpa_plot_svgs in two halves (plot.c), so that its gnuplot run can run alongside others. */
int vpa_plot_svgs_script(const struct vpa_json *const *figs, size_t n, struct vpa_buf *script,
			 struct vpa_err *err);
int vpa_plot_svgs_split(const struct vpa_buf *gnuplot_out, size_t n, size_t prefix,
			struct vpa_buf *svgs, struct vpa_err *err);

/* report.html around SVGs already rendered (render.c) (svgs: one per figure, page order; unused with no_plots). */
void vpa_html_assemble(const struct vpa_json *results, int no_plots, const struct vpa_buf *svgs,
		       struct vpa_buf *out);

/* report.html and report.pdf sharing one gnuplot run for their figures (render.c). */
int vpa_report_html_pdf(const struct vpa_json *results, struct vpa_buf *html, struct vpa_buf *pdf,
			struct vpa_err *err);

#endif
