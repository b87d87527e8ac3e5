/*
 * reports/doc.c - the document model (reports/doc.h): its building blocks
 * (headings, paragraphs, lists, tables, their release).  It calls only the
 * table model and the text helpers below it; the sections that fill a
 * document and vpa_doc_build (doc_build.c) sit above it.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "reports/doc.h"

/* ---- blocks ---- */

struct vpa_blk *vpa_doc_add(struct vpa_doc *d, enum vpa_blk_kind kind)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->b = xrealloc(d->b, xmul(d->cap, sizeof(*d->b)));
	}
	struct vpa_blk *b = &d->b[d->n++];
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	return b;
}

void vpa_doc_head(struct vpa_doc *d, int level, const char *id, const char *title, int outline)
{
	struct vpa_blk *b = vpa_doc_add(d, VPA_B_HEAD);
	b->level = level;
	b->id = id ? xstrdup(id) : NULL;
	b->text = xstrdup(title);
	b->outline = outline;
}

void vpa_doc_para(struct vpa_doc *d, int style, const char *fmt, ...)
{
	struct vpa_blk *b = vpa_doc_add(d, VPA_B_PARA);
	b->style = style;
	va_list ap;
	va_start(ap, fmt);
	b->text = vpa_vfmt(fmt, ap);
	va_end(ap);
}

struct vpa_blk *vpa_doc_list(struct vpa_doc *d)
{
	return vpa_doc_add(d, VPA_B_LIST);
}

void vpa_doc_item(struct vpa_blk *b, const char *fmt, ...)
{
	b->items = xrealloc(b->items, xmul(b->n_items + 1, sizeof(*b->items)));
	va_list ap;
	va_start(ap, fmt);
	b->items[b->n_items++] = vpa_vfmt(fmt, ap);
	va_end(ap);
}

void vpa_doc_table(struct vpa_doc *d, struct vpa_table *t, const char *caption)
{
	struct vpa_blk *b = vpa_doc_add(d, VPA_B_TABLE);
	b->table = xcalloc(1, sizeof(*b->table));
	*b->table = *t;
	memset(t, 0, sizeof(*t));
	b->text = caption ? xstrdup(caption) : NULL;
}

void vpa_doc_release(struct vpa_doc *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct vpa_blk *b = &d->b[i];
		free(b->id);
		free(b->text);
		for (size_t k = 0; k < b->n_items; k++)
			free(b->items[k]);
		free(b->items);
		if (b->table) {
			vpa_table_release(b->table);
			free(b->table);
		}
	}
	free(d->b);
	free(d->title);
	free(d->description);
	free(d->verdict);
	free(d->version);
	free(d->started);
	free(d->simulated);
	memset(d, 0, sizeof(*d));
}
