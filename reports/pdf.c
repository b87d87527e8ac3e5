/*
 * reports/pdf.c - report.pdf: one multi-page A4 landscape PDF made by ONE
 * gnuplot run with the pdfcairo terminal (each `plot` starts a page).
 *
 * Text pages are empty plots carrying labels at screen coordinates, so all
 * text is real PDF text (pdftotext finds it): page 1 has the scenario header
 * and the gate summary; each attack has a page with its metrics table
 * (monospace, split into column groups that fit the page width, continued
 * on further pages when long) followed by one page per figure; then the
 * sweep figures and the warnings.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/table.h"

#define TOP 0.93
#define BOTTOM 0.06
#define LEFT 0.045
#define MONO_COLS 136 /* characters of 'Monospace,9' across the page */
#define TEXT_COLS 125 /* characters of 'Sans,10' per wrapped line */

struct pages {
	struct vpa_buf *s; /* the script, borrowed */
	const char *footer;
	double y;  /* next baseline, screen units */
	int open;  /* a text page is being filled */
	int label; /* labels on the current page */
};

static void page_end(struct pages *p)
{
	if (!p->open)
		return;
	vpa_buf_puts(p->s, "plot NaN notitle\n");
	p->open = 0;
}

static void page_begin(struct pages *p)
{
	page_end(p);
	vpa_buf_puts(p->s, "reset\nset encoding utf8\nunset border\nunset tics\nunset key\n"
			   "set xrange [0:1]\nset yrange [0:1]\n");
	p->label = 0;
	p->y = TOP;
	p->open = 1;
	if (p->footer) {
		vpa_buf_printf(p->s, "set label %d ", ++p->label);
		vpa_gnuplot_quote(p->s, p->footer);
		vpa_buf_puts(p->s, " at screen 0.5, screen 0.025 center font 'Sans,8' tc rgb '#777777'\n");
	}
}

/* One line of text; h is its height in screen units. */
static void put_line(struct pages *p, const char *text, const char *font, const char *color,
		     double h)
{
	if (!p->open || p->y - h < BOTTOM)
		page_begin(p);
	p->y -= h;
	if (*text) {
		vpa_buf_printf(p->s, "set label %d ", ++p->label);
		vpa_gnuplot_quote(p->s, text);
		vpa_buf_printf(p->s, " at screen %.4f, screen %.4f left font '%s' tc rgb '%s'\n", LEFT,
			       p->y, font, color);
	}
}

static void put_title(struct pages *p, const char *t)
{
	put_line(p, t, "Sans:Bold,18", "#000000", 0.05);
}

static void put_heading(struct pages *p, const char *t)
{
	if (p->open && p->y < TOP)
		p->y -= 0.015;
	put_line(p, t, "Sans:Bold,13", "#000000", 0.04);
}

/* Word-wrapped text (UTF-8 aware enough: breaks at spaces only). */
static void put_text(struct pages *p, const char *text, const char *color)
{
	const char *s = text;
	while (*s) {
		const char *end = s, *brk = NULL;
		size_t w = 0;
		while (*end && *end != '\n' && w < TEXT_COLS) {
			if (*end == ' ')
				brk = end;
			if (((unsigned char)*end & 0xc0) != 0x80)
				w++;
			end++;
		}
		if (*end && *end != '\n' && brk)
			end = brk;
		char *line = xstrndup(s, (size_t)(end - s));
		put_line(p, line, "Sans,10", color, 0.027);
		free(line);
		s = end;
		while (*s == ' ' || *s == '\n')
			s++;
	}
}

/* cell padded to width w (code points), right- or left-aligned, cut with "~". */
static void pad(struct vpa_buf *b, const char *cell, size_t w, int right)
{
	size_t n = vpa_utf8_width(cell);
	if (n > w) {
		/* keep w-1 code points */
		size_t k = 0;
		const char *c = cell;
		while (*c && k < w - 1) {
			c++;
			while (((unsigned char)*c & 0xc0) == 0x80)
				c++;
			k++;
		}
		vpa_buf_add(b, cell, (size_t)(c - cell));
		vpa_buf_puts(b, "~");
		return;
	}
	if (right)
		for (size_t i = n; i < w; i++)
			vpa_buf_puts(b, " ");
	vpa_buf_puts(b, cell);
	if (!right)
		for (size_t i = n; i < w; i++)
			vpa_buf_puts(b, " ");
}

#define MAX_CELL 40
#define ROW_H 0.024

/* Columns of one group of a table. */
struct group {
	const struct vpa_table *t;
	const size_t *w; /* column widths */
	size_t n_key;    /* key columns [0, n_key) lead every group */
	size_t c0, c1;   /* then columns [c0, c1) */
};

/* 1 when cell (r, c) is drawn grey (an unreliable value). */
static int grey(const struct vpa_table *t, long r, size_t c)
{
	return r >= 0 && t->cell_class && t->cell_class[(size_t)r * t->n_cols + c] == VPA_CELL_UNRELIABLE;
}

/*
 * Line r of a group: -2 the header, -1 the rule, else row r.  mode 0: every
 * cell; 1: grey cells as blanks; 2: only the grey cells (the others blank), a
 * second label over the first in grey - monospace keeps the columns aligned.
 */
static void group_text(const struct group *g, long r, int mode, struct vpa_buf *line)
{
	const struct vpa_table *t = g->t;
	int first = 1;
	line->len = 0;
	for (int pass = 0; pass < 2; pass++) {
		size_t a = pass ? g->c0 : 0, z = pass ? g->c1 : g->n_key;
		for (size_t c = a; c < z; c++) {
			if (!first)
				vpa_buf_puts(line, "  ");
			first = 0;
			int blank = (mode == 1 && grey(t, r, c)) || (mode == 2 && !grey(t, r, c));
			if (blank)
				for (size_t i = 0; i < g->w[c]; i++)
					vpa_buf_puts(line, " ");
			else if (r == -2)
				pad(line, t->head[c], g->w[c], t->numeric[c]);
			else if (r == -1)
				for (size_t i = 0; i < g->w[c]; i++)
					vpa_buf_puts(line, "-");
			else
				pad(line, t->cells[(size_t)r * t->n_cols + c], g->w[c], t->numeric[c]);
		}
	}
}

static void group_line(struct pages *p, const struct group *g, long r, struct vpa_buf *line)
{
	const struct vpa_table *t = g->t;
	int any_grey = 0;
	for (int pass = 0; pass < 2 && r >= 0; pass++)
		for (size_t c = pass ? g->c0 : 0; c < (pass ? g->c1 : g->n_key); c++)
			any_grey |= grey(t, r, c);
	group_text(g, r, any_grey ? 1 : 0, line);
	const char *color = "#000000";
	if (r >= 0 && t->row_class[r] == VPA_ROW_FAIL)
		color = "#b00020";
	else if (r >= 0 && t->row_class[r] == VPA_ROW_PASS)
		color = "#17692b";
	put_line(p, vpa_buf_str(line), r == -2 ? "Monospace:Bold,9" : "Monospace,9", color, ROW_H);
	if (any_grey) {
		/* the grey cells, over the same baseline */
		group_text(g, r, 2, line);
		vpa_buf_printf(p->s, "set label %d ", ++p->label);
		vpa_gnuplot_quote(p->s, vpa_buf_str(line));
		vpa_buf_printf(p->s, " at screen %.4f, screen %.4f left font 'Monospace,9' tc rgb "
				     "'#9a9a9a'\n", LEFT, p->y);
	}
}

/*
 * A table as monospace lines, split into column groups that fit the page
 * width; a group that continues on a new page repeats its header there.
 */
static void put_table(struct pages *p, const struct vpa_table *t)
{
	size_t *w = xcalloc(t->n_cols ? t->n_cols : 1, sizeof(*w));
	for (size_t c = 0; c < t->n_cols; c++) {
		w[c] = vpa_utf8_width(t->head[c]);
		for (size_t r = 0; r < t->n_rows; r++) {
			size_t n = vpa_utf8_width(t->cells[r * t->n_cols + c]);
			if (n > w[c])
				w[c] = n;
		}
		if (w[c] > MAX_CELL)
			w[c] = MAX_CELL;
	}
	struct group g = {t, w, t->n_key < t->n_cols ? t->n_key : t->n_cols, 0, 0};
	size_t key_w = 0;
	for (size_t c = 0; c < g.n_key; c++)
		key_w += w[c] + 2;
	struct vpa_buf line;
	vpa_buf_init(&line);
	g.c0 = g.n_key;
	int first_group = 1;
	do {
		/* Columns [c0, c1) join the key columns in this group. */
		size_t width = key_w;
		g.c1 = g.c0;
		while (g.c1 < t->n_cols && (g.c1 == g.c0 || width + w[g.c1] + 2 <= MONO_COLS))
			width += w[g.c1++] + 2;
		if (!first_group)
			put_line(p, "", "Monospace,9", "#000000", 0.012);
		first_group = 0;
		/* No header alone at the foot of a page. */
		if (p->open && p->y - 3 * ROW_H < BOTTOM)
			page_begin(p);
		group_line(p, &g, -2, &line);
		group_line(p, &g, -1, &line);
		for (long r = 0; r < (long)t->n_rows; r++) {
			if (p->y - ROW_H < BOTTOM) {
				page_begin(p);
				group_line(p, &g, -2, &line);
				group_line(p, &g, -1, &line);
			}
			group_line(p, &g, r, &line);
		}
		g.c0 = g.c1;
	} while (g.c0 < t->n_cols);
	vpa_buf_release(&line);
	free(w);
	if (t->note)
		put_text(p, t->note, "#444444");
	if (t->cell_summary)
		put_text(p, t->cell_summary, "#666666");
}

static const struct vpa_json *arr_at(const struct vpa_json *obj, const char *key)
{
	const struct vpa_json *a = vpa_json_get(obj, key);
	return a && a->type == VPA_JSON_ARR ? a : NULL;
}

static int put_figures(struct pages *p, const struct vpa_json *figs, size_t *k, struct vpa_err *err)
{
	for (size_t i = 0; figs && i < figs->n; i++) {
		page_end(p);
		char tag[32];
		snprintf(tag, sizeof(tag), "p%zu", (*k)++);
		int rc = vpa_plot_script(figs->items[i], tag, p->s, err);
		if (rc)
			return rc;
	}
	return 0;
}

static void put_front(struct pages *p, const struct vpa_json *r)
{
	const struct vpa_json *sc = vpa_json_get(r, "scenario");
	const char *desc = vpa_json_get_str(sc, "description"), *file = vpa_json_get_str(sc, "file");
	const char *ver = vpa_json_get_str(r, "vpaudit_version"), *started = vpa_json_get_str(r, "started");
	const char *status = vpa_json_get_str(r, "status");
	const struct vpa_json *seed = vpa_json_get(r, "seed"), *wt = vpa_json_get(r, "wall_time");
	struct vpa_buf t;
	vpa_buf_init(&t);

	vpa_buf_printf(&t, "vpaudit report: %s", vpa_json_get_str(sc, "name"));
	put_title(p, t.data);
	if (desc && *desc)
		put_text(p, desc, "#333333");
	t.len = 0;
	vpa_buf_printf(&t, "vpaudit %s", ver ? ver : VPA_VERSION);
	if (file)
		vpa_buf_printf(&t, "   scenario %s", file);
	if (seed && seed->type == VPA_JSON_NUM) {
		vpa_buf_puts(&t, "   seed ");
		vpa_report_fmt(&t, "seed", seed);
	}
	if (started)
		vpa_buf_printf(&t, "   started %s", started);
	double total = wt ? vpa_json_get_num(wt, "total", NAN) : NAN;
	if (isfinite(total))
		vpa_buf_printf(&t, "   wall time %.2f s", total);
	put_text(p, t.data, "#333333");
	if (status) {
		int pass = !strcmp(status, "pass");
		t.len = 0;
		vpa_buf_printf(&t, "Status: %s", pass ? "PASS (all gates hold)" : !strcmp(status, "fail") ? "FAIL" : status);
		put_line(p, t.data, "Sans:Bold,11", pass ? "#17692b" : "#b00020", 0.03);
	}
	t.len = 0;
	vpa_simulated_targets(r, &t);
	if (t.len) {
		struct vpa_buf m;
		vpa_buf_init(&m);
		vpa_buf_printf(&m, "SIMULATED targets: %s. Their numbers come from a simulator whose leakage "
				   "is known, not from a deployed system.", t.data);
		put_text(p, m.data, "#9a5800");
		vpa_buf_release(&m);
	}
	vpa_buf_release(&t);

	put_heading(p, "Summary");
	const struct vpa_json *gates = arr_at(r, "gates");
	if (gates && gates->n) {
		struct vpa_table tb;
		vpa_table_gates(r, &tb);
		put_table(p, &tb);
		vpa_table_release(&tb);
	} else {
		put_text(p, "The scenario defines no gates.", "#444444");
	}
	const struct vpa_json *targets = arr_at(r, "targets");
	if (targets && targets->n) {
		put_heading(p, "Targets");
		for (size_t i = 0; i < targets->n; i++) {
			const struct vpa_json *tg = targets->items[i], *sim = vpa_json_get(tg, "simulated");
			const char *kind = vpa_json_get_str(tg, "kind"), *src = vpa_json_get_str(tg, "source");
			struct vpa_buf l;
			vpa_buf_init(&l);
			vpa_buf_printf(&l, "%s: kind %s, source %s%s", vpa_json_get_str(tg, "id"),
				       kind ? kind : "-", src ? src : "-",
				       sim && sim->type == VPA_JSON_BOOL && sim->boolean ? ", SIMULATED" : "");
			size_t before = l.len;
			vpa_synthetic_sets(tg, &l);
			if (l.len > before) {
				char *names = xstrdup(l.data + before);
				l.len = before;
				vpa_buf_printf(&l, ", SYNTHETIC score files: %s", names);
				free(names);
			}
			put_text(p, l.data, "#000000");
			vpa_buf_release(&l);
		}
	}
}

int vpa_report_pdf(const struct vpa_json *r, struct vpa_buf *out, struct vpa_err *err)
{
	struct vpa_buf s;
	vpa_buf_init(&s);
	int rc = vpa_report_pdf_script(r, &s, err);
	if (!rc)
		rc = vpa_gnuplot_run(s.data, s.len, out, err);
	vpa_buf_release(&s);
	return rc;
}

int vpa_report_pdf_script(const struct vpa_json *r, struct vpa_buf *script, struct vpa_err *err)
{
	struct vpa_buf footer;
	vpa_buf_init(&footer);
	vpa_buf_printf(&footer, "vpaudit report: %s", vpa_json_get_str(vpa_json_get(r, "scenario"), "name"));
	struct pages p = {script, footer.data, TOP, 0, 0};
	int rc = 0;
	size_t k = 0;

	vpa_buf_puts(script, "set terminal pdfcairo size 11.69in,8.27in font 'Sans,12' noenhanced\n");
	put_front(&p, r);

	const struct vpa_json *attacks = arr_at(r, "attacks");
	for (size_t i = 0; attacks && i < attacks->n && !rc; i++) {
		const struct vpa_json *a = attacks->items[i];
		const char *id = vpa_json_get_str(a, "id"), *kind = vpa_json_get_str(a, "kind");
		const char *target = vpa_json_get_str(a, "target"), *title = vpa_json_get_str(a, "title");
		struct vpa_buf h;
		vpa_buf_init(&h);
		vpa_buf_printf(&h, "Attack %s", id);
		if (kind)
			vpa_buf_printf(&h, "  (kind %s%s%s)", kind, target ? ", target " : "", target ? target : "");
		page_begin(&p);
		put_heading(&p, h.data);
		vpa_buf_release(&h);
		if (title && *title)
			put_text(&p, title, "#333333");
		struct vpa_table t;
		vpa_table_attack(r, id, &t);
		if (t.n_rows)
			put_table(&p, &t);
		else
			put_text(&p, "No results recorded for this attack.", "#444444");
		vpa_table_release(&t);
		rc = put_figures(&p, arr_at(a, "figures"), &k, err);
	}

	const struct vpa_json *sfigs = arr_at(r, "figures"), *sweep = vpa_json_get(r, "sweep");
	if (!rc && sfigs && sfigs->n) {
		page_begin(&p);
		put_heading(&p, "Sweep");
		const char *param = sweep && sweep->type == VPA_JSON_OBJ ? vpa_json_get_str(sweep, "param") : NULL;
		if (param) {
			struct vpa_buf t;
			vpa_buf_init(&t);
			vpa_buf_printf(&t, "Parameter %s", param);
			const struct vpa_json *values = arr_at(sweep, "values");
			if (values) {
				vpa_buf_puts(&t, " over ");
				vpa_report_fmt(&t, "sweep", values);
			}
			put_text(&p, t.data, "#000000");
			vpa_buf_release(&t);
		}
		put_text(&p, "The following pages plot every metric against the swept value.", "#444444");
		rc = put_figures(&p, sfigs, &k, err);
	}

	const struct vpa_json *warnings = arr_at(r, "warnings");
	if (!rc && warnings && warnings->n) {
		page_begin(&p);
		put_heading(&p, "Warnings");
		for (size_t i = 0; i < warnings->n; i++) {
			struct vpa_buf t;
			vpa_buf_init(&t);
			vpa_buf_printf(&t, "- %s", warnings->items[i]->str);
			put_text(&p, t.data, "#000000");
			vpa_buf_release(&t);
		}
	}
	page_end(&p);
	vpa_buf_release(&footer);
	return rc;
}
