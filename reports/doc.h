/*
 * reports/doc.h - private to reports/: the document both report.html and
 * report.pdf render.  vpa_doc_build() turns a checked results DOM into a
 * list of blocks (headings with stable ids, paragraphs, lists, tables,
 * figures, preformatted text); html.c and pdf_*.c only lay them out, so the
 * two files say the same thing in the same order.  Every text is plain
 * (UTF-8, not escaped): each renderer escapes for its own format.
 *
 * The content comes from one builder per section:
 *   summary.c     executive summary (verdict, one sentence per attack and
 *                 metric from templates), limitations, comparison (--baseline)
 *   risk.c        the risk rating per target (a summary without gates)
 *   threat.c      the threat-model table (also generates the docs section)
 *   glossary.c    metric definitions with interpretation and references
 *   advice.c      rule-based recommendations (each rule with its source)
 *   provenance.c  data and provenance (inputs with SHA-256, set sizes, scenario)
 *   doc_build.c   the results section (tables split into groups, figures with
 *                 captions) and the assembly in page order (vpa_doc_build)
 * on the building blocks of doc.c (the model), which sit on the table model,
 * the lookups and the text helpers of reports/table.h.  The layers, from
 * the bottom: table.h's files, doc.c, the sections, doc_build.c, the
 * renderers, render.c (reports/README.md "Layers").
 */
#ifndef VPA_REPORT_DOC_H
#define VPA_REPORT_DOC_H

#include "reports/table.h"

enum vpa_blk_kind {
	VPA_B_HEAD,  /* level 1: section (new page in print), 2: attack/subsection */
	VPA_B_PARA,
	VPA_B_LIST,  /* items */
	VPA_B_TABLE, /* table, text = caption */
	VPA_B_FIG,   /* fig = index in vpa_collect_figures order, text = caption */
	VPA_B_PRE,   /* monospace text (the scenario echo) */
	VPA_B_DEF,   /* glossary entry: text = term, items = paragraphs */
};

enum vpa_para_style {
	VPA_P_PLAIN,
	VPA_P_NOTE,    /* small, grey */
	VPA_P_PASS,    /* the verdict, green */
	VPA_P_FAIL,    /* the verdict, red */
	VPA_P_BANNER,  /* simulated targets: a framed warning */
	VPA_P_LEAD,    /* a bold run-in head (the attack before its sentences) */
};

struct vpa_blk {
	enum vpa_blk_kind kind;
	int level;            /* HEAD */
	int style;            /* PARA: vpa_para_style; LIST item style */
	char *id;             /* HEAD: stable anchor ("summary", "attack-1") */
	char *text;           /* HEAD title, PARA text, TABLE/FIG caption, PRE, DEF term */
	char **items;         /* LIST, DEF */
	size_t n_items;
	struct vpa_table *table; /* TABLE (owned) */
	size_t fig;              /* FIG */
	int outline;             /* HEAD: has a PDF bookmark (sections and attacks) */
};

struct vpa_doc {
	struct vpa_blk *b;
	size_t n, cap;
	/* the title page */
	char *title;       /* scenario name */
	char *description; /* or NULL */
	char *verdict;     /* one sentence */
	int status;        /* VPA_P_PASS, VPA_P_FAIL or VPA_P_PLAIN (no gates) */
	char *version;     /* "vpaudit 0.1.0" */
	char *started;     /* or NULL */
	char *simulated;   /* ", "-separated ids, or NULL */
};

/* The whole document of a checked results DOM (doc_build.c). */
void vpa_doc_build(const struct vpa_json *results, struct vpa_doc *doc /* OUT */);

/* ---- building blocks (doc.c) ---- */
void vpa_doc_release(struct vpa_doc *doc);
struct vpa_blk *vpa_doc_add(struct vpa_doc *d, enum vpa_blk_kind kind);
void vpa_doc_head(struct vpa_doc *d, int level, const char *id, const char *title, int outline);
void vpa_doc_para(struct vpa_doc *d, int style, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A list; items are added with vpa_doc_item on the block returned. */
struct vpa_blk *vpa_doc_list(struct vpa_doc *d);
void vpa_doc_item(struct vpa_blk *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Takes ownership of *t (a heap copy is made; *t is zeroed). */
void vpa_doc_table(struct vpa_doc *d, struct vpa_table *t, const char *caption);

/* ---- sections ---- */
void vpa_doc_summary(const struct vpa_json *r, struct vpa_doc *d);
void vpa_doc_threat(const struct vpa_json *r, struct vpa_doc *d);
void vpa_doc_glossary(const struct vpa_json *r, struct vpa_doc *d);
void vpa_doc_limitations(const struct vpa_json *r, struct vpa_doc *d);
void vpa_doc_data(const struct vpa_json *r, struct vpa_doc *d);
void vpa_doc_advice(const struct vpa_json *r, struct vpa_doc *d);
void vpa_doc_compare(const struct vpa_json *r, struct vpa_doc *d);
/* "Is the claimed guarantee credible?" (sec_dp.c): every DP audit record; and
 * the sentence on what a lower bound lb of a claim means (confidence 1 - alpha). */
void vpa_doc_dp(const struct vpa_json *r, struct vpa_doc *d);
void vpa_dp_meaning(double lb, double claim, double alpha, struct vpa_buf *out);
/* The risk rating per target (risk.c): a paragraph and one item per target;
 * the summary adds it when the scenario sets no gates. */
void vpa_doc_risk(const struct vpa_json *r, struct vpa_doc *d);
/* sec_utility.c: the utility section (WER, UAR, rho_F0, G_VD, the
 * privacy-utility figure) and the summary's trade-off sentences */
void vpa_doc_utility(const struct vpa_json *r, struct vpa_doc *d);
void vpa_utility_sentences(const struct vpa_json *r, struct vpa_buf *out);

/* ---- helpers shared by the section builders (summary.c) ---- */
/* The reasons why values cannot be trusted, each up to its first ';', with the
 * metrics they concern ("eer,cllr: 19 target trials (fewer than 100); ..."),
 * over the records of `attack` (or the one record `only`), restricted to
 * paths[0..n) when paths is not NULL.  "undefined value" is left out. */
void vpa_unreliable_note(const struct vpa_json *r, const char *attack, const struct vpa_json *only,
			 const char *const *paths, size_t n_paths, struct vpa_buf *out);

/* ---- the threat model (threat.c) ---- */
struct vpa_threat {
	const char *kind;   /* attack kind ("linkage"), "*" for any */
	const char *sub;    /* attacker/condition, NULL for any */
	const char *who;    /* noun phrase starting a summary sentence */
	const char *knows;  /* what the attacker knows and has, in words */
	/* 'y' yes, 'n' no, '-' does not apply */
	char orig_enrol, anon_enrol, retrained, updates, indicator;
	const char *source; /* the reference that defines the attacker */
};
/* The row for (kind, sub): the exact one, else the kind's row with sub NULL,
 * else NULL. */
const struct vpa_threat *vpa_threat_find(const char *kind, const char *sub);
/* What an attack kind does not cover (limitations), or NULL. */
const char *vpa_threat_not_covered(const char *kind);
/* What the DP regime ("none", "local", "central", "central_local") of an FL
 * target protects and against whom, as a clause starting with the regime's
 * name, or NULL for another name. */
const char *vpa_regime_protects(const char *regime);
/* 1 when the regime's epsilon bounds what one update, as the device sends it,
 * reveals (local, central_local: its local epsilon); 0 when it does not (none,
 * central: its noise is added after the server has seen the update); -1 for
 * another name. */
int vpa_regime_covers_updates(const char *regime);
/* The docs section (Markdown table) generated from the same rows. */
void vpa_threat_markdown(struct vpa_buf *out);

/* ---- renderers (html.c, pdf_child.c, pdf_doc.c; render.c calls them) ---- */
/* svgs: one per figure in vpa_collect_figures order, or NULL (no_plots). */
void vpa_html_doc(const struct vpa_doc *d, const struct vpa_buf *svgs, size_t n_figs,
		  struct vpa_buf *out);
/*
 * vpa_pdf_doc (below) in a forked child (reports/pdf_child.c): the same result and
 * errors, and whatever ends the child (GLib's abort when memory runs out
 * included) is one error: "out of memory (allocating N bytes) while
 * typesetting report.pdf" (VPA_ENOMEM) or "report.pdf: the typesetter was
 * killed by signal N (...)" (VPA_EIO).  The PDF is appended to out.
 */
int vpa_pdf_doc_child(const struct vpa_doc *d, const struct vpa_buf *svgs, size_t n_figs,
		      struct vpa_buf *out, struct vpa_err *err);
/* report.pdf with cairo + Pango; figures drawn from the SVGs with librsvg
 * (svgs NULL: figures omitted, a note instead). */
int vpa_pdf_doc(const struct vpa_doc *d, const struct vpa_buf *svgs, size_t n_figs,
		struct vpa_buf *out, struct vpa_err *err);

#endif
