/*
 * reports/table.h - private to reports/: the tables the HTML and PDF writers
 * share (gate summary, per-attack metrics), as plain text cells.  Both
 * writers render the same model, so the PDF says what the HTML says.
 */
#ifndef VPA_REPORT_TABLE_H
#define VPA_REPORT_TABLE_H

#include "reports/report.h"

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

/* vpa_plot_svgs in two halves, so that its gnuplot run can run alongside others. */
int vpa_plot_svgs_script(const struct vpa_json *const *figs, size_t n, struct vpa_buf *script,
			 struct vpa_err *err);
int vpa_plot_svgs_split(const struct vpa_buf *gnuplot_out, size_t n, size_t prefix,
			struct vpa_buf *svgs, struct vpa_err *err);

/* report.html around SVGs already rendered (svgs: one per figure, page order; unused with no_plots). */
void vpa_html_assemble(const struct vpa_json *results, int no_plots, const struct vpa_buf *svgs,
		       struct vpa_buf *out);

/* report.html and report.pdf sharing one gnuplot run for their figures. */
int vpa_report_html_pdf(const struct vpa_json *results, struct vpa_buf *html, struct vpa_buf *pdf,
			struct vpa_err *err);

/* Number of UTF-8 code points in s (for monospace alignment). */
size_t vpa_utf8_width(const char *s);

#endif
