/*
 * reports/sec_legal.h - the report's "Singling out / Linkability / Inference"
 * section (reports/sec_legal.c, issue 29 item 5): the three criteria of the
 * Article 29 Working Party's Opinion 05/2014 measured against chance for the
 * strongest attacker of every `linkage` attack, on the first page.
 */
#ifndef VPA_SEC_LEGAL_H
#define VPA_SEC_LEGAL_H

#include "reports/doc.h"

enum vpa_legal_crit { VPA_LEGAL_SING, VPA_LEGAL_LINK, VPA_LEGAL_INFER };

/* One criterion's measurement for one attacker. */
struct vpa_legal_cell {
	double value, lo, hi; /* NAN when absent (value: not measured) */
	double chance;        /* pi_sing: (1-1/N)^(N-1); pi_link: 1/N'; inference: majority share */
	double level;         /* the interval's level */
	const char *set;      /* "2", "all": N or N' (pi_sing, pi_link) */
	double L;             /* conversation length (pi_sing, pi_link) */
	const char *attribute, *majority; /* inference */
	double bacc;          /* inference: balanced accuracy, NAN when absent */
	const char *why;      /* unreliable or undefined: the reason, else NULL */
};

/* "above chance", "not distinguishable from chance", "below chance",
 * "unreliable" or "not measured" for a cell. */
const char *vpa_legal_verdict(const struct vpa_legal_cell *c);
/* The sentence of a criterion for attacker `who` (appended to b). */
void vpa_legal_sentence(struct vpa_buf *b, enum vpa_legal_crit k, const char *who,
			const struct vpa_legal_cell *c);
/* The cell of criterion k in a linkage record (pooled or per gender). */
void vpa_legal_cell_of(const struct vpa_json *rec, enum vpa_legal_crit k,
		       struct vpa_legal_cell *c);
/* The first-page table per linkage attack (called by the executive summary)
 * and the section with the sentences (called by the assembly); nothing when
 * no linkage record carries a criterion. */
void vpa_doc_legal_table(const struct vpa_json *r, struct vpa_doc *d);
void vpa_doc_legal(const struct vpa_json *r, struct vpa_doc *d);

#endif
