/*
 * reports/pdf_doc.c - report.pdf typeset from the document model
 * (reports/doc.h) with cairo's PDF surface, Pango for text layout and
 * librsvg to draw the gnuplot SVG figures as vectors.
 *
 * A4 portrait.  Page 1: title, description, the verdict in colour, version,
 * start time, simulated targets.  Then the contents (linked), then the
 * sections, each on a new page unless 60% of the page is free.  Every page has "page k of n" in its
 * footer; the document outline has one entry per section and one per attack
 * (children of "Results per attack"); metadata Title = scenario name,
 * Author = "vpaudit", Creator = "vpaudit VERSION".
 *
 * Layout runs twice over the same code: pass 1 measures (nothing is drawn;
 * it finds the page of every heading and the page count), pass 2 draws with
 * those numbers, so the contents and the footers are right.  Tables are set
 * in 8 pt proportional type; numeric columns keep their natural width, text
 * columns wrap, and when the natural widths do not fit the type shrinks to
 * 7 and 6.5 pt and headers wrap; rows never split and the header row repeats
 * on every page a table continues on.
 */
#include <cairo-pdf.h>
#include <cairo.h>
#include <librsvg/rsvg.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <stdlib.h>
#include <string.h>

#include "reports/doc.h"

#define PAGE_W 595.276
#define PAGE_H 841.89
#define M_L 62.0
#define M_R 62.0
#define M_T 60.0
#define M_B 64.0
#define CW (PAGE_W - M_L - M_R)
#define FONT "DejaVu Sans"

struct pdf {
	cairo_surface_t *surf;
	cairo_t *cr;
	PangoLayout *lay;
	int draw;          /* pass 2 */
	int page, n_pages; /* current page (1-based); n from pass 1 */
	double y;
	const struct vpa_doc *d;
	int *blk_page;     /* per block: the page of a heading (pass 1) */
	double *blk_y;
	RsvgHandle **svg;  /* per figure, or NULL */
	size_t n_figs;
	int outline_sec;   /* outline id of the current section */
	double **plan_w;   /* per block: table column widths from pass 1 */
	double *plan_size; /* per block: their font size */
	double **plan_h;   /* per block: header and row heights from pass 1 */
	size_t cur;        /* the block being laid out */
	struct vpa_buf words; /* scratch of breakable() */
	int failed;
};

static cairo_status_t sink(void *closure, const unsigned char *data, unsigned int len)
{
	struct vpa_buf *b = closure;
	if (b)
		vpa_buf_add(b, data, len);
	return CAIRO_STATUS_SUCCESS;
}

static void set_font(struct pdf *p, const char *desc)
{
	PangoFontDescription *fd = pango_font_description_from_string(desc);
	pango_layout_set_font_description(p->lay, fd);
	pango_font_description_free(fd);
}

/*
 * Pango wraps a line by shaping ahead to the next break opportunity, so a word
 * of n characters without one costs O(n^2) even with PANGO_WRAP_WORD_CHAR (a
 * 100,000-character description took 32 s; issue 26 item 4).  A run of more
 * than WORD_MAX characters without white space gets a zero-width space
 * (U+200B, a break opportunity that draws nothing) after every WORD_CUT
 * characters: the cost is linear, and the run wraps like words of 8
 * characters (with cuts every 256 characters, each cut also ended a line
 * early).  Shorter runs (SHA-256 sums, paths) are laid out as given.  Never
 * before a combining mark or a joiner, which belong to the character before.
 */
#define WORD_MAX 256
#define WORD_CUT 8

static int joins_previous(const unsigned char *s)
{
	unsigned c;
	if ((s[0] & 0xe0) == 0xc0 && s[1])
		c = (unsigned)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
	else if ((s[0] & 0xf0) == 0xe0 && s[1] && s[2])
		c = (unsigned)(s[0] & 0x0f) << 12 | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
	else
		return 0;
	return (c >= 0x300 && c <= 0x36f) || (c >= 0x1ab0 && c <= 0x1aff) ||
	       (c >= 0x1dc0 && c <= 0x1dff) || (c >= 0x20d0 && c <= 0x20ff) ||
	       (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xfe20 && c <= 0xfe2f) || c == 0x200d;
}

static int is_space(const unsigned char *s)
{
	return *s == ' ' || *s == '\t' || *s == '\n' || (s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0x8b);
}

/* text, or a copy in *tmp with break opportunities in long runs (above). */
static const char *breakable(const char *text, struct vpa_buf *tmp)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t done = 0, i = 0;
	int copied = 0;
	while (s[i]) {
		if (is_space(s + i)) {
			i++;
			continue;
		}
		size_t start = i, n = 0;
		for (; s[i] && !is_space(s + i); i++)
			n += (s[i] & 0xc0) != 0x80;
		if (n <= WORD_MAX)
			continue;
		if (!copied)
			tmp->len = 0, copied = 1;
		vpa_buf_add(tmp, text + done, start - done);
		size_t from = start, k = 0;
		for (size_t j = start; j < i; j++) {
			if ((s[j] & 0xc0) == 0x80)
				continue;
			if (k++ >= WORD_CUT && !joins_previous(s + j)) {
				vpa_buf_add(tmp, text + from, j - from);
				vpa_buf_puts(tmp, "\xe2\x80\x8b");
				from = j;
				k = 1;
			}
		}
		vpa_buf_add(tmp, text + from, i - from);
		done = i;
	}
	if (!copied)
		return text;
	vpa_buf_puts(tmp, text + done);
	return tmp->data;
}

/* Lay out text in the given width (pt); returns its height (pt). */
static double layout(struct pdf *p, const char *font, const char *text, double width)
{
	set_font(p, font);
	pango_layout_set_width(p->lay, width > 0 ? (int)(width * PANGO_SCALE) : -1);
	pango_layout_set_wrap(p->lay, PANGO_WRAP_WORD_CHAR);
	pango_layout_set_alignment(p->lay, PANGO_ALIGN_LEFT);
	pango_layout_set_text(p->lay, breakable(text ? text : "", &p->words), -1);
	/* a word broken to fit is not given a hyphen: "linkabilit-y" read as a
	 * different word (metric ids are quoted verbatim elsewhere) */
	PangoAttrList *al = pango_attr_list_new();
	pango_attr_list_insert(al, pango_attr_insert_hyphens_new(FALSE));
	pango_layout_set_attributes(p->lay, al);
	pango_attr_list_unref(al);
	int w, h;
	pango_layout_get_size(p->lay, &w, &h);
	return (double)h / PANGO_SCALE;
}

static double layout_width(struct pdf *p)
{
	int w, h;
	pango_layout_get_size(p->lay, &w, &h);
	return (double)w / PANGO_SCALE;
}

static void show(struct pdf *p, double x, double y, double r, double g, double b)
{
	if (!p->draw)
		return;
	cairo_set_source_rgb(p->cr, r, g, b);
	cairo_move_to(p->cr, x, y);
	pango_cairo_show_layout(p->cr, p->lay);
}

static void footer(struct pdf *p)
{
	if (!p->draw || p->page < 1)
		return;
	char s[64];
	snprintf(s, sizeof(s), "page %d of %d", p->page, p->n_pages);
	layout(p, FONT " 8", s, -1);
	double w = layout_width(p);
	show(p, PAGE_W - M_R - w, PAGE_H - M_B + 24, 0.4, 0.4, 0.4);
	layout(p, FONT " 8", p->d->title, CW * 0.6);
	pango_layout_set_ellipsize(p->lay, PANGO_ELLIPSIZE_END);
	show(p, M_L, PAGE_H - M_B + 24, 0.4, 0.4, 0.4);
	pango_layout_set_ellipsize(p->lay, PANGO_ELLIPSIZE_NONE);
	if (p->draw) {
		cairo_set_source_rgb(p->cr, 0.8, 0.82, 0.85);
		cairo_set_line_width(p->cr, 0.5);
		cairo_move_to(p->cr, M_L, PAGE_H - M_B + 18);
		cairo_line_to(p->cr, PAGE_W - M_R, PAGE_H - M_B + 18);
		cairo_stroke(p->cr);
	}
}

static void new_page(struct pdf *p)
{
	if (p->page >= 1) {
		footer(p);
		if (p->draw)
			cairo_show_page(p->cr);
	}
	p->page++;
	p->y = M_T;
}

static int fits(struct pdf *p, double h)
{
	return p->y + h <= PAGE_H - M_B;
}

static void ensure(struct pdf *p, double h)
{
	if (!fits(p, h) && p->y > M_T)
		new_page(p);
}

static void rect(struct pdf *p, double x, double y, double w, double h, double r, double g, double b)
{
	if (!p->draw)
		return;
	cairo_set_source_rgb(p->cr, r, g, b);
	cairo_rectangle(p->cr, x, y, w, h);
	cairo_fill(p->cr);
}

/*
 * A paragraph taller than a page (p->lay holds it, laid out): line by line,
 * continued on the next pages.  A copy of the layout is walked, because the
 * footers of new pages are laid out in p->lay.
 */
static void para_lines(struct pdf *p, double x, double r, double g, double b)
{
	PangoLayout *l = pango_layout_copy(p->lay);
	PangoLayoutIter *it = pango_layout_get_iter(l);
	do {
		PangoRectangle lr;
		pango_layout_iter_get_line_extents(it, NULL, &lr);
		double lh = (double)lr.height / PANGO_SCALE;
		if (!fits(p, lh) && p->y > M_T)
			new_page(p);
		if (p->draw) {
			double base = (double)(pango_layout_iter_get_baseline(it) - lr.y) / PANGO_SCALE;
			cairo_set_source_rgb(p->cr, r, g, b);
			cairo_move_to(p->cr, x, p->y + base);
			pango_cairo_show_layout_line(p->cr, pango_layout_iter_get_line_readonly(it));
		}
		p->y += lh;
	} while (pango_layout_iter_next_line(it));
	pango_layout_iter_free(it);
	g_object_unref(l);
}

/* A paragraph; whole paragraphs move to the next page (unless taller than one). */
static void para(struct pdf *p, const char *font, const char *text, double x, double w,
		 double r, double g, double b, double after)
{
	double h = layout(p, font, text, w);
	if (h > PAGE_H - M_T - M_B) {
		para_lines(p, x, r, g, b);
		p->y += after;
		return;
	}
	ensure(p, h);
	layout(p, font, text, w);
	show(p, x, p->y, r, g, b);
	p->y += h + after;
}

/* ---- title page and contents ---- */

static void title_page(struct pdf *p)
{
	const struct vpa_doc *d = p->d;
	p->y = 150;
	para(p, FONT " Bold 9", "PRIVACY AUDIT REPORT", M_L, CW, 0.4, 0.4, 0.4, 6);
	para(p, FONT " Bold 28", d->title, M_L, CW, 0.1, 0.1, 0.1, 12);
	if (d->description)
		para(p, FONT " 11", d->description, M_L, CW, 0.2, 0.2, 0.2, 24);
	double h = layout(p, FONT " Bold 12", d->verdict, CW - 24);
	double fr = 0.3, fg = 0.3, fb = 0.3, br = 0.95, bg = 0.95, bb = 0.96;
	if (d->status == VPA_P_PASS) {
		fr = 0.09, fg = 0.41, fb = 0.17, br = 0.93, bg = 0.97, bb = 0.94;
	} else if (d->status == VPA_P_FAIL) {
		fr = 0.69, fg = 0, fb = 0.13, br = 0.99, bg = 0.93, bb = 0.93;
	}
	ensure(p, h + 24); /* after a long title and description: not over the footer */
	rect(p, M_L, p->y, CW, h + 24, fr, fg, fb);
	rect(p, M_L + 2, p->y + 2, CW - 4, h + 20, br, bg, bb);
	layout(p, FONT " Bold 12", d->verdict, CW - 24);
	show(p, M_L + 12, p->y + 12, fr, fg, fb);
	p->y += h + 44;
	if (d->simulated) {
		struct vpa_buf s;
		vpa_buf_init(&s);
		vpa_buf_printf(&s, "SIMULATED targets: %s. Their numbers show what the attacks measure "
			       "on a simulator, not the privacy of a deployed system.", d->simulated);
		para(p, FONT " Bold 10", s.data, M_L, CW, 0.36, 0.22, 0, 16);
		vpa_buf_release(&s);
	}
	struct vpa_buf m;
	vpa_buf_init(&m);
	vpa_buf_printf(&m, "Written by %s", d->version);
	if (d->started)
		vpa_buf_printf(&m, " from the run started %s", d->started);
	vpa_buf_puts(&m, ".");
	para(p, FONT " 9", m.data, M_L, CW, 0.35, 0.35, 0.35, 0);
	vpa_buf_release(&m);
}

static void link_begin(struct pdf *p, size_t blk)
{
	if (!p->draw || !p->blk_page[blk])
		return;
	char a[96];
	snprintf(a, sizeof(a), "page=%d pos=[%.1f %.1f]", p->blk_page[blk], M_L, p->blk_y[blk]);
	cairo_tag_begin(p->cr, CAIRO_TAG_LINK, a);
}

static void link_end(struct pdf *p, size_t blk)
{
	if (p->draw && p->blk_page[blk])
		cairo_tag_end(p->cr, CAIRO_TAG_LINK);
}

static void contents(struct pdf *p)
{
	para(p, FONT " Bold 18", "Contents", M_L, CW, 0.1, 0.1, 0.1, 14);
	for (size_t i = 0; i < p->d->n; i++) {
		const struct vpa_blk *b = &p->d->b[i];
		if (b->kind != VPA_B_HEAD || !b->outline)
			continue;
		double ind = b->level == 1 ? 0 : 18;
		const char *font = b->level == 1 ? FONT " Bold 10.5" : FONT " 9.5";
		double h = layout(p, font, b->text, CW - ind - 50);
		ensure(p, h + 4);
		if (b->level == 1)
			p->y += 4;
		link_begin(p, i);
		layout(p, font, b->text, CW - ind - 50);
		show(p, M_L + ind, p->y, 0.1, 0.1, 0.1);
		char pg[16];
		snprintf(pg, sizeof(pg), "%d", p->blk_page[i]);
		layout(p, font, pg, -1);
		show(p, PAGE_W - M_R - layout_width(p), p->y, 0.1, 0.1, 0.1);
		link_end(p, i);
		p->y += h + 3;
	}
}

/* ---- tables ---- */

struct tl {
	double size;        /* font size */
	double *w;          /* column widths (padding included) */
	int wrap_head;
};

static const double PAD = 3.5;

static void cell_font(char *out, size_t cap, double size, int bold)
{
	snprintf(out, cap, FONT "%s %.1f", bold ? " Bold" : "", size);
}

static double natural(struct pdf *p, const char *font, const char *s)
{
	layout(p, font, s, -1);
	return layout_width(p);
}

/* A header id ("zebra.log10_lr_worst") with a break opportunity (U+200B)
 * after each '_' and '.', so a narrow column wraps it between its parts
 * rather than inside one. */
static void head_text(const char *s, struct vpa_buf *out)
{
	for (; s && *s; s++) {
		vpa_buf_add(out, s, 1);
		if ((*s == '_' || *s == '.') && s[1])
			vpa_buf_puts(out, "\xe2\x80\x8b");
	}
}

/*
 * The widest piece of s between ' ' and '/' (a cell's words), or with
 * `at_ids` also between '_' and '.', each such piece kept with the separator
 * that ends it, as head_text breaks after it (a header's parts).
 */
static double longest_piece(struct pdf *p, const char *font, const char *s, int at_ids)
{
	const char *cut = at_ids ? " /_." : " /";
	if (!at_ids && !strpbrk(s, cut))
		return natural(p, font, s);
	double best = 0;
	while (s && *s) {
		size_t l = strcspn(s, cut);
		if (s[l] == '_' || s[l] == '.')
			l++;
		char piece[160];
		snprintf(piece, sizeof(piece), "%.*s", (int)(l < 159 ? l : 159), s);
		double x = natural(p, font, piece);
		if (x > best)
			best = x;
		s += l;
		while (*s == ' ' || *s == '/')
			s++;
	}
	return best;
}

/* Column widths for a table at a font size; 0 when it cannot fit. */
static int table_plan(struct pdf *p, const struct vpa_table *t, double size, double *w)
{
	char f[64], fb[64];
	cell_font(f, sizeof(f), size, 0);
	cell_font(fb, sizeof(fb), size, 1);
	double fixed = 0, flex = 0;
	double *nat = xcalloc(t->n_cols, sizeof(*nat)), *minw = xcalloc(t->n_cols, sizeof(*minw));
	for (size_t c = 0; c < t->n_cols; c++) {
		double m = 0, head = natural(p, fb, t->head[c]);
		for (size_t r = 0; r < t->n_rows; r++) {
			const char *s = t->cells[r * t->n_cols + c];
			/* the '*' of a noted cell measured with the value: an estimate
			 * of its width let it wrap under the number, clipped */
			struct vpa_buf sv;
			vpa_buf_init(&sv);
			vpa_buf_printf(&sv, "%s%s", s ? s : "",
				       t->cell_note && t->cell_note[r * t->n_cols + c] ? "*" : "");
			double x = natural(p, f, vpa_buf_str(&sv));
			vpa_buf_release(&sv);
			if (x > m)
				m = x;
		}
		/* cells wrap at word boundaries (numbers never); a long header word
		 * (a sweep parameter path) breaks rather than widen the column */
		double cw = 0;
		for (size_t r = 0; !t->numeric[c] && r < t->n_rows; r++) {
			const char *cs = t->cells[r * t->n_cols + c];
			double x = cs ? longest_piece(p, f, cs, 0) : 0;
			if (x > cw)
				cw = x;
		}
		if (t->numeric[c])
			cw = m;
		/* headers break between the parts of an id (head_text), so the
		 * longest part sets the minimum; only a part longer than 12 em may
		 * still break inside */
		double hw = fmin(longest_piece(p, fb, t->head[c], 1), fmax(cw, size * 12));
		nat[c] = fmax(m, head) + 2 * PAD;
		minw[c] = fmax(cw, hw) + 2 * PAD;
		if (t->numeric[c] || nat[c] <= minw[c])
			fixed += minw[c];
		else
			flex += nat[c];
	}
	double total = 0;
	for (size_t c = 0; c < t->n_cols; c++)
		total += nat[c];
	int ok = 1;
	if (total <= CW) {
		for (size_t c = 0; c < t->n_cols; c++)
			w[c] = nat[c];
	} else if (fixed < CW) {
		/* text columns share what is left, in proportion to their natural width */
		double left = CW - fixed;
		double flex_min = 0;
		for (size_t c = 0; c < t->n_cols; c++)
			if (!(t->numeric[c] || nat[c] <= minw[c]))
				flex_min += minw[c];
		if (flex_min > left)
			ok = 0;
		for (size_t c = 0; c < t->n_cols; c++)
			w[c] = t->numeric[c] || nat[c] <= minw[c] ? minw[c]
								 : fmax(minw[c], left * nat[c] / flex);
		double sum = 0;
		for (size_t c = 0; c < t->n_cols; c++)
			sum += w[c];
		ok = ok && sum <= CW + 0.5;
		if (!ok && size > 6.1) {
			free(nat);
			free(minw);
			return 0;
		}
		if (sum > CW) /* the smallest size: scale the text columns down */
			for (size_t c = 0; c < t->n_cols; c++)
				w[c] *= CW / sum;
		ok = 1;
	} else {
		ok = 0;
		if (size <= 6.1)
			for (size_t c = 0; c < t->n_cols; c++)
				w[c] = minw[c] * CW / fixed, ok = 1;
	}
	free(nat);
	free(minw);
	return ok;
}

static double row_height(struct pdf *p, const struct vpa_table *t, long r, const double *w,
			 double size)
{
	char f[64];
	cell_font(f, sizeof(f), size, r < 0);
	double h = 0;
	for (size_t c = 0; c < t->n_cols; c++) {
		const char *s = r < 0 ? t->head[c] : t->cells[(size_t)r * t->n_cols + c];
		struct vpa_buf hs;
		vpa_buf_init(&hs);
		if (r < 0)
			head_text(s, &hs);
		else
			vpa_buf_printf(&hs, "%s%s", s ? s : "",
				       t->cell_note && t->cell_note[(size_t)r * t->n_cols + c] ? "*" : "");
		double x = layout(p, f, vpa_buf_str(&hs), w[c] - 2 * PAD);
		vpa_buf_release(&hs);
		if (x > h)
			h = x;
	}
	return h + 2 * PAD - 1;
}

static void draw_row(struct pdf *p, const struct vpa_table *t, long r, const double *w, double size,
		     double h)
{
	if (!p->draw) { /* pass 1 only needs the height */
		p->y += h;
		return;
	}
	char f[64];
	cell_font(f, sizeof(f), size, r < 0);
	double x = M_L, tw = 0;
	for (size_t c = 0; c < t->n_cols; c++)
		tw += w[c];
	int cls = r < 0 ? -1 : t->row_class[r];
	if (r < 0)
		rect(p, M_L, p->y, tw, h, 0.93, 0.945, 0.96);
	else if (cls == VPA_ROW_PASS)
		rect(p, M_L, p->y, tw, h, 0.93, 0.97, 0.94);
	else if (cls == VPA_ROW_FAIL)
		rect(p, M_L, p->y, tw, h, 0.99, 0.93, 0.93);
	else if (r % 2 == 1)
		rect(p, M_L, p->y, tw, h, 0.975, 0.978, 0.982);
	for (size_t c = 0; c < t->n_cols; c++) {
		size_t at = r < 0 ? 0 : (size_t)r * t->n_cols + c;
		const char *s = r < 0 ? t->head[c] : t->cells[at];
		int grey = r >= 0 && t->cell_class && t->cell_class[at] == VPA_CELL_UNRELIABLE;
		int marked = r >= 0 && t->cell_note && t->cell_note[at];
		struct vpa_buf txt;
		vpa_buf_init(&txt);
		if (r < 0)
			head_text(s, &txt);
		else
			vpa_buf_puts(&txt, s ? s : "");
		if (marked)
			vpa_buf_puts(&txt, "*");
		layout(p, f, vpa_buf_str(&txt), w[c] - 2 * PAD);
		double cx = x + PAD;
		if (r >= 0 && t->numeric[c]) {
			pango_layout_set_alignment(p->lay, PANGO_ALIGN_RIGHT);
		}
		double rr = 0.1, gg = 0.1, bb = 0.1;
		if (grey)
			rr = gg = bb = 0.6;
		else if (r >= 0 && c == t->n_cols - 1 && cls == VPA_ROW_PASS)
			rr = 0.09, gg = 0.41, bb = 0.17;
		else if (r >= 0 && c == t->n_cols - 1 && cls == VPA_ROW_FAIL)
			rr = 0.69, gg = 0, bb = 0.13;
		show(p, cx, p->y + PAD - 0.5, rr, gg, bb);
		vpa_buf_release(&txt);
		x += w[c];
	}
	if (p->draw) {
		cairo_set_source_rgb(p->cr, 0.8, 0.82, 0.85);
		cairo_set_line_width(p->cr, 0.4);
		cairo_move_to(p->cr, M_L, p->y + h);
		cairo_line_to(p->cr, M_L + tw, p->y + h);
		cairo_stroke(p->cr);
	}
	p->y += h;
}

static void table(struct pdf *p, const struct vpa_table *t, const char *caption)
{
	double *w = p->plan_w[p->cur];
	double size = p->plan_size[p->cur];
	if (!w) { /* pass 1 plans, pass 2 reuses the plan (the layout is the same) */
		w = xcalloc(t->n_cols ? t->n_cols : 1, sizeof(*w));
		static const double sizes[] = {8, 7, 6.5, 6};
		for (size_t k = 0; k < 4; k++) {
			size = sizes[k];
			if (table_plan(p, t, size, w))
				break;
		}
		p->plan_w[p->cur] = w;
		p->plan_size[p->cur] = size;
	}
	double *rh = p->plan_h[p->cur];
	if (!rh) {
		rh = xcalloc(t->n_rows + 1, sizeof(*rh));
		for (size_t r = 0; r <= t->n_rows; r++)
			rh[r] = row_height(p, t, (long)r - 1, w, size);
		p->plan_h[p->cur] = rh;
	}
	double hh = rh[0];
	double first = t->n_rows ? rh[1] : 0;
	double cap_h = caption ? layout(p, FONT " Bold 8.5", caption, CW) + 3 : 0;
	ensure(p, cap_h + hh + first + 2);
	if (caption) {
		layout(p, FONT " Bold 8.5", caption, CW);
		show(p, M_L, p->y, 0.2, 0.2, 0.2);
		p->y += cap_h;
	}
	draw_row(p, t, -1, w, size, hh);
	for (size_t r = 0; r < t->n_rows; r++) {
		double h = rh[r + 1];
		if (!fits(p, h)) {
			new_page(p);
			draw_row(p, t, -1, w, size, hh);
		}
		draw_row(p, t, (long)r, w, size, h);
	}
	p->y += 10;
}

/* ---- figures ---- */

/*
 * Figures one per row, 85% of the text width, each with its caption under it.
 * gnuplot draws them 640 px wide with a 10 px font: at this width the labels
 * are about 6 pt on paper (two abreast they were 3.6 pt, too small to read).
 */
static void figures(struct pdf *p, const struct vpa_blk *b, size_t n)
{
	double gap = 14, fw = n > 1 ? (CW - gap) / 2 : CW * 0.85;
	double fh[2] = {fw * 420.0 / 640.0, fw * 420.0 / 640.0}, cap[2] = {0, 0};
	for (size_t k = 0; k < n; k++) {
		RsvgHandle *h = b[k].fig < p->n_figs ? p->svg[b[k].fig] : NULL;
		gdouble iw = 0, ih = 0;
		if (h && rsvg_handle_get_intrinsic_size_in_pixels(h, &iw, &ih) && iw > 0 && ih > 0)
			fh[k] = fw * ih / iw;
		cap[k] = layout(p, FONT " Oblique 7.5", b[k].text, fw);
	}
	double H = fmax(fh[0], n > 1 ? fh[1] : 0) + 4 + fmax(cap[0], n > 1 ? cap[1] : 0) + 14;
	ensure(p, H);
	for (size_t k = 0; k < n; k++) {
		RsvgHandle *h = b[k].fig < p->n_figs ? p->svg[b[k].fig] : NULL;
		double x = n > 1 ? M_L + k * (fw + gap) : M_L + (CW - fw) / 2;
		if (p->draw && h) {
			RsvgRectangle vp = {x, p->y, fw, fh[k]};
			GError *e = NULL;
			cairo_save(p->cr);
			if (!rsvg_handle_render_document(h, p->cr, &vp, &e)) {
				if (e)
					g_error_free(e);
				p->failed = 1;
			}
			cairo_restore(p->cr);
		}
		layout(p, FONT " Oblique 7.5", b[k].text, fw);
		show(p, x, p->y + fh[k] + 4, 0.25, 0.25, 0.25);
	}
	p->y += H;
}

/* ---- the body ---- */

static void heading(struct pdf *p, size_t i)
{
	const struct vpa_blk *b = &p->d->b[i];
	const char *font = b->level == 1 ? FONT " Bold 17" : FONT " Bold 12.5";
	/* a section starts a new page unless most of the page is still free:
	 * no blank half pages */
	if (b->level == 1 && p->y > M_T + 0.4 * (PAGE_H - M_T - M_B))
		new_page(p);
	else if (b->level == 1 && p->y > M_T)
		p->y += 18;
	double h = layout(p, font, b->text, CW);
	ensure(p, h + 80); /* keep with what follows */
	if (b->level == 2)
		p->y += 8;
	p->blk_page[i] = p->page;
	p->blk_y[i] = p->y;
	if (p->draw && b->outline) {
		char a[96];
		snprintf(a, sizeof(a), "page=%d pos=[%.1f %.1f]", p->page, M_L, p->y);
		int id = cairo_pdf_surface_add_outline(p->surf,
						       b->level == 1 ? CAIRO_PDF_OUTLINE_ROOT : p->outline_sec,
						       b->text, a,
						       b->level == 1 ? CAIRO_PDF_OUTLINE_FLAG_OPEN : 0);
		if (b->level == 1)
			p->outline_sec = id;
	}
	layout(p, font, b->text, CW);
	show(p, M_L, p->y, 0.08, 0.08, 0.1);
	p->y += h + (b->level == 1 ? 4 : 4);
	if (b->level == 1 && p->draw) {
		cairo_set_source_rgb(p->cr, 0.8, 0.82, 0.85);
		cairo_set_line_width(p->cr, 1.2);
		cairo_move_to(p->cr, M_L, p->y);
		cairo_line_to(p->cr, PAGE_W - M_R, p->y);
		cairo_stroke(p->cr);
	}
	p->y += b->level == 1 ? 12 : 4;
}

static void pre(struct pdf *p, const char *text)
{
	/* line by line, so a long scenario continues on the next page */
	const char *s = text;
	while (*s) {
		size_t l = strcspn(s, "\n");
		char *line = xcalloc(l + 2, 1);
		memcpy(line, s, l);
		if (!l)
			line[0] = ' ';
		para(p, "DejaVu Sans Mono 7", line, M_L + 6, CW - 6, 0.15, 0.15, 0.15, 0.5);
		free(line);
		s += l;
		if (*s)
			s++;
	}
	p->y += 8;
}

static void body(struct pdf *p)
{
	const struct vpa_doc *d = p->d;
	for (size_t i = 0; i < d->n; i++) {
		const struct vpa_blk *b = &d->b[i];
		p->cur = i;
		switch (b->kind) {
		case VPA_B_HEAD:
			heading(p, i);
			break;
		case VPA_B_PARA:
			if (b->style == VPA_P_PASS || b->style == VPA_P_FAIL || b->style == VPA_P_BANNER) {
				double fr = 0.09, fg = 0.41, fb = 0.17, br = 0.93, bg = 0.97, bb = 0.94;
				if (b->style == VPA_P_FAIL)
					fr = 0.69, fg = 0, fb = 0.13, br = 0.99, bg = 0.93, bb = 0.93;
				if (b->style == VPA_P_BANNER)
					fr = 0.36, fg = 0.22, fb = 0, br = 1, bg = 0.96, bb = 0.88;
				double h = layout(p, FONT " Bold 9.5", b->text, CW - 16);
				ensure(p, h + 14);
				rect(p, M_L, p->y, CW, h + 12, br, bg, bb);
				layout(p, FONT " Bold 9.5", b->text, CW - 16);
				show(p, M_L + 8, p->y + 6, fr, fg, fb);
				p->y += h + 22;
			} else if (b->style == VPA_P_NOTE) {
				para(p, FONT " 8", b->text, M_L, CW, 0.35, 0.35, 0.35, 8);
			} else if (b->style == VPA_P_LEAD) {
				double h = layout(p, FONT " Bold 10", b->text, CW);
				ensure(p, h + 40);
				para(p, FONT " Bold 10", b->text, M_L, CW, 0.1, 0.1, 0.1, 3);
			} else {
				para(p, FONT " 10", b->text, M_L, CW, 0.1, 0.1, 0.1, 8);
			}
			break;
		case VPA_B_LIST:
			for (size_t k = 0; k < b->n_items; k++) {
				double h = layout(p, FONT " 9.5", b->items[k], CW - 14);
				ensure(p, h);
				layout(p, FONT " 9.5", "\xe2\x80\xa2", -1);
				show(p, M_L + 3, p->y, 0.3, 0.3, 0.3);
				para(p, FONT " 9.5", b->items[k], M_L + 14, CW - 14, 0.1, 0.1, 0.1, 4);
			}
			p->y += 5;
			break;
		case VPA_B_TABLE:
			table(p, b->table, b->text);
			break;
		case VPA_B_FIG:
			if (!p->svg) {
				size_t k = 0;
				while (i + k < d->n && d->b[i + k].kind == VPA_B_FIG)
					k++;
				char s[96];
				snprintf(s, sizeof(s), "%zu figure%s omitted (--no-plots).", k, k == 1 ? "" : "s");
				para(p, FONT " 8", s, M_L, CW, 0.35, 0.35, 0.35, 8);
				i += k - 1;
			} else {
				figures(p, b, 1);
			}
			break;
		case VPA_B_PRE:
			pre(p, b->text);
			break;
		case VPA_B_DEF: {
			/* an entry stays on one page */
			double h = layout(p, FONT " Bold 10", b->text, CW) + 2;
			for (size_t k = 0; k < b->n_items; k++)
				h += layout(p, FONT " 9", b->items[k], CW - 14) + 2;
			ensure(p, h);
			para(p, FONT " Bold 10", b->text, M_L, CW, 0.1, 0.1, 0.1, 2);
			for (size_t k = 0; k < b->n_items; k++)
				para(p, FONT " 9", b->items[k], M_L + 14, CW - 14, 0.15, 0.15, 0.15, 2);
			p->y += 8;
			break;
		}
		}
	}
}

static void run(struct pdf *p)
{
	p->page = 0;
	p->outline_sec = CAIRO_PDF_OUTLINE_ROOT;
	new_page(p);
	title_page(p);
	new_page(p);
	contents(p);
	new_page(p);
	body(p);
	footer(p);
	if (p->draw)
		cairo_show_page(p->cr);
}

int vpa_pdf_doc(const struct vpa_doc *d, const struct vpa_buf *svgs, size_t n_figs,
		struct vpa_buf *out, struct vpa_err *err)
{
	struct pdf p;
	memset(&p, 0, sizeof(p));
	p.d = d;
	p.n_figs = svgs ? n_figs : 0;
	p.blk_page = xcalloc(d->n ? d->n : 1, sizeof(*p.blk_page));
	p.blk_y = xcalloc(d->n ? d->n : 1, sizeof(*p.blk_y));
	p.plan_w = xcalloc(d->n ? d->n : 1, sizeof(*p.plan_w));
	p.plan_size = xcalloc(d->n ? d->n : 1, sizeof(*p.plan_size));
	p.plan_h = xcalloc(d->n ? d->n : 1, sizeof(*p.plan_h));
	int rc = 0;
	if (svgs) {
		p.svg = xcalloc(n_figs ? n_figs : 1, sizeof(*p.svg));
		for (size_t i = 0; i < n_figs; i++) {
			GError *e = NULL;
			p.svg[i] = rsvg_handle_new_from_data((const guint8 *)svgs[i].data, svgs[i].len, &e);
			if (!p.svg[i]) {
				rc = vpa_fail(err, VPA_EIO, NULL, "report.pdf: figure %zu: SVG not readable: %s",
					      i + 1, e ? e->message : "unknown error");
				if (e)
					g_error_free(e);
				goto out;
			}
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		p.draw = pass == 1;
		p.surf = cairo_pdf_surface_create_for_stream(sink, pass ? out : NULL, PAGE_W, PAGE_H);
		if (pass) {
			cairo_pdf_surface_set_metadata(p.surf, CAIRO_PDF_METADATA_TITLE, d->title);
			cairo_pdf_surface_set_metadata(p.surf, CAIRO_PDF_METADATA_AUTHOR, "vpaudit");
			cairo_pdf_surface_set_metadata(p.surf, CAIRO_PDF_METADATA_CREATOR, d->version);
			cairo_pdf_surface_set_metadata(p.surf, CAIRO_PDF_METADATA_SUBJECT,
						       "Privacy audit report");
			if (d->started)
				cairo_pdf_surface_set_metadata(p.surf, CAIRO_PDF_METADATA_CREATE_DATE,
							       d->started);
		}
		p.cr = cairo_create(p.surf);
		p.lay = pango_cairo_create_layout(p.cr);
		cairo_font_options_t *fo = cairo_font_options_create();
		cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
		cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
		pango_cairo_context_set_font_options(pango_layout_get_context(p.lay), fo);
		pango_layout_context_changed(p.lay);
		cairo_font_options_destroy(fo);
		run(&p);
		p.n_pages = p.page;
		g_object_unref(p.lay);
		cairo_destroy(p.cr);
		cairo_surface_finish(p.surf);
		cairo_status_t st = cairo_surface_status(p.surf);
		cairo_surface_destroy(p.surf);
		if (st != CAIRO_STATUS_SUCCESS) {
			rc = vpa_fail(err, VPA_EIO, NULL, "report.pdf: cairo: %s",
				      cairo_status_to_string(st));
			goto out;
		}
	}
	if (p.failed)
		rc = vpa_fail(err, VPA_EIO, NULL, "report.pdf: a figure could not be drawn");
out:
	for (size_t i = 0; p.svg && i < n_figs; i++)
		if (p.svg[i])
			g_object_unref(p.svg[i]);
	free(p.svg);
	free(p.blk_page);
	free(p.blk_y);
	for (size_t i = 0; i < d->n; i++) {
		free(p.plan_w[i]);
		free(p.plan_h[i]);
	}
	free(p.plan_h);
	free(p.plan_w);
	free(p.plan_size);
	vpa_buf_release(&p.words);
	return rc;
}
