/*
 * reports/html.c - report.html: one self-contained page (inline CSS, inline
 * SVG, no script, no external resource), readable at 1280 px and printable.
 *
 * Order: header (scenario, version, seed, start, wall time, status), the
 * SIMULATED banner, the gate summary, targets, one section per attack (its
 * metrics table, then its figures), the scenario-level figures (sweeps), the
 * warnings.  Every string that comes from the results is escaped; all
 * figures are drawn by one gnuplot run (vpa_plot_svgs, called by render.c,
 * which builds the document and hands it to vpa_html_doc here).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/doc.h"

static const char css[] =
	":root{--pass:#17692b;--fail:#b00020;--line:#d0d4da;--ink:#1a1a1a}\n"
	"*{box-sizing:border-box}\n"
	"body{font-family:\"DejaVu Sans\",system-ui,-apple-system,\"Segoe UI\",Roboto,Arial,sans-serif;"
	"margin:0 auto;max-width:1100px;padding:16px 28px 48px;color:var(--ink);background:#fff;"
	"line-height:1.5;font-size:15px}\n"
	"p,li,dd{max-width:52em}\n"
	".kicker{text-transform:uppercase;letter-spacing:.08em;color:#666;font-size:.8em;margin:1em 0 0}\n"
	"h1{font-size:1.9em;margin:.1em 0 .2em}\n"
	"h2{font-size:1.4em;border-bottom:2px solid var(--line);padding-bottom:.15em;margin-top:2em}\n"
	"h3{font-size:1.12em;margin:1.6em 0 .4em}\n"
	".desc{margin:.2em 0 .8em;color:#333}\n"
	".meta{color:#555;font-size:.9em}\n"
	".verdict-box{font-weight:700;padding:10px 14px;border-radius:4px;border:2px solid}\n"
	".status-pass{color:var(--pass);background:#edf7ef;border-color:var(--pass)}\n"
	".status-fail{color:var(--fail);background:#fdecee;border-color:var(--fail)}\n"
	".status-none{color:#333;background:#f3f4f6;border-color:#999}\n"
	".banner{border:2px solid #b36b00;background:#fff4e0;color:#5c3700;padding:8px 14px;margin:14px 0;border-radius:4px}\n"
	"p.lead{font-weight:700;margin:1em 0 .2em}\n"
	"nav#contents ol{margin:.2em 0;padding-left:1.6em}\n"
	"nav#contents li{margin:.1em 0}\n"
	"nav#contents h2{margin-top:1em}\n"
	".scroll{overflow-x:auto;max-width:100%}\n"
	"table{border-collapse:collapse;margin:.6em 0 1em;font-size:.86em}\n"
	"caption{caption-side:top;text-align:left;font-weight:600;color:#333;padding:.2em 0}\n"
	"th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}\n"
	"th{background:#eef1f5;font-weight:600}\n"
	"td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"tr.pass td{background:#edf7ef}\n"
	"tr.fail td{background:#fdecee}\n"
	".verdict{font-weight:700;white-space:nowrap}\n"
	".pass .verdict{color:var(--pass)}\n"
	".fail .verdict{color:var(--fail)}\n"
	".note{color:#555;font-size:.9em}\n"
	".figs{display:flex;flex-wrap:wrap;gap:14px}\n"
	"figure{margin:8px 0;flex:0 1 calc(50% - 7px);min-width:320px}\n"
	"figure svg{width:100%;height:auto;display:block;border:1px solid var(--line)}\n"
	"figcaption{font-size:.85em;color:#333;margin-top:4px}\n"
	"dl.def{margin:.9em 0}\n"
	"dl.def dt{font-weight:700}\n"
	"dl.def dd{margin:.15em 0 .15em 1.4em}\n"
	"pre{background:#f6f7f9;border:1px solid var(--line);padding:8px 10px;font-size:.8em;"
	"white-space:pre-wrap;word-break:break-word}\n"
	"td.unrel{color:#9a9a9a}\n"
	".why{display:block;font-size:.78em;color:#777;font-style:italic;white-space:normal;"
	"max-width:16em;text-align:left}\n"
	"footer{margin-top:3em;font-size:.85em;color:#666;border-top:1px solid var(--line);padding-top:.5em}\n"
	"@media (max-width:900px){figure{flex-basis:100%}}\n"
	"@media print{@page{size:A4;margin:16mm 14mm}\n"
	" body{max-width:none;padding:0;font-size:9.5pt}\n"
	" section.sec{break-before:page}\n"
	" h2,h3,caption,p.lead{break-after:avoid}\n"
	" figure,tr,.banner,.verdict-box,dl.def{break-inside:avoid}\n"
	" figure{flex-basis:calc(50% - 7px);min-width:0}\n"
	" .scroll{overflow:visible}\n"
	" table{font-size:8pt;max-width:100%}\n"
	" td,th{padding:2px 4px;overflow-wrap:break-word}\n"
	" th{overflow-wrap:normal}\n"
	" th,tr.pass td,tr.fail td,.banner,.verdict-box{-webkit-print-color-adjust:exact;print-color-adjust:exact}\n"
	" a{color:inherit;text-decoration:none}}\n";

static void esc(struct vpa_buf *b, const char *s)
{
	vpa_xml_escape(b, s ? s : "");
}

static void put_table(struct vpa_buf *b, const struct vpa_table *t, const char *caption)
{
	vpa_buf_puts(b, "<div class=\"scroll\"><table>\n");
	if (caption) {
		vpa_buf_puts(b, "<caption class=\"note\">");
		esc(b, caption);
		vpa_buf_puts(b, "</caption>\n");
	}
	vpa_buf_puts(b, "<thead><tr>");
	for (size_t c = 0; c < t->n_cols; c++) {
		vpa_buf_puts(b, "<th scope=\"col\">");
		esc(b, t->head[c]);
		vpa_buf_puts(b, "</th>");
	}
	vpa_buf_puts(b, "</tr></thead>\n<tbody>\n");
	for (size_t r = 0; r < t->n_rows; r++) {
		int cls = t->row_class[r];
		vpa_buf_puts(b, cls == VPA_ROW_PASS ? "<tr class=\"pass\">" :
				cls == VPA_ROW_FAIL ? "<tr class=\"fail\">" : "<tr>");
		for (size_t c = 0; c < t->n_cols; c++) {
			const char *cell = t->cells[r * t->n_cols + c];
			int verdict = cls != VPA_ROW_PLAIN && c == t->n_cols - 1;
			size_t at = r * t->n_cols + c;
			int unrel = t->cell_class && t->cell_class[at] == VPA_CELL_UNRELIABLE;
			const char *why = t->cell_note ? t->cell_note[at] : NULL;
			if (verdict)
				vpa_buf_puts(b, "<td class=\"verdict\">");
			else if (t->numeric[c] || unrel)
				vpa_buf_printf(b, "<td class=\"%s%s\"", t->numeric[c] ? "num" : "",
					       unrel ? (t->numeric[c] ? " unrel" : "unrel") : "");
			else
				vpa_buf_puts(b, "<td");
			if (!verdict && why) {
				vpa_buf_puts(b, " title=\"");
				esc(b, why);
				vpa_buf_puts(b, "\"");
			}
			if (!verdict)
				vpa_buf_puts(b, ">");
			if (verdict)
				vpa_buf_puts(b, cls == VPA_ROW_PASS ? "&#10004; " : "&#10008; ");
			esc(b, cell);
			if (why) /* the reason is the tooltip; the note under the tables lists them */
				vpa_buf_puts(b, "<sup class=\"why\">*</sup>");
			vpa_buf_puts(b, "</td>");
		}
		vpa_buf_puts(b, "</tr>\n");
	}
	vpa_buf_puts(b, "</tbody></table></div>\n");
	if (t->note) {
		vpa_buf_puts(b, "<p class=\"note\">");
		esc(b, t->note);
		vpa_buf_puts(b, "</p>\n");
	}
}

static void put_svg_or_note(struct vpa_buf *b, const struct vpa_doc *d, size_t *i,
			    const struct vpa_buf *svgs, size_t n_figs)
{
	if (!svgs) {
		size_t k = 0;
		while (*i + k < d->n && d->b[*i + k].kind == VPA_B_FIG)
			k++;
		vpa_buf_printf(b, "<p class=\"note\">%zu figure%s omitted (--no-plots).</p>\n", k,
			       k == 1 ? "" : "s");
		*i += k - 1;
		return;
	}
	vpa_buf_puts(b, "<div class=\"figs\">\n");
	for (; *i < d->n && d->b[*i].kind == VPA_B_FIG; (*i)++) {
		const struct vpa_blk *f = &d->b[*i];
		vpa_buf_puts(b, "<figure");
		if (f->id) {
			vpa_buf_puts(b, " id=\"fig-");
			esc(b, f->id);
			vpa_buf_puts(b, "\"");
		}
		vpa_buf_puts(b, ">\n");
		if (f->fig < n_figs)
			vpa_buf_add(b, svgs[f->fig].data, svgs[f->fig].len);
		vpa_buf_puts(b, "\n<figcaption>");
		esc(b, f->text);
		vpa_buf_puts(b, "</figcaption>\n</figure>\n");
	}
	(*i)--;
	vpa_buf_puts(b, "</div>\n");
}

void vpa_html_doc(const struct vpa_doc *d, const struct vpa_buf *svgs, size_t n_figs,
		  struct vpa_buf *b)
{
	vpa_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
	vpa_buf_puts(b, "<meta name=\"generator\" content=\"");
	esc(b, d->version);
	vpa_buf_puts(b, "\">\n<title>Privacy audit: ");
	esc(b, d->title);
	vpa_buf_printf(b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);

	/* title block */
	vpa_buf_puts(b, "<header>\n<p class=\"kicker\">Privacy audit report</p>\n<h1>");
	esc(b, d->title);
	vpa_buf_puts(b, "</h1>\n");
	if (d->description) {
		vpa_buf_puts(b, "<p class=\"desc\">");
		esc(b, d->description);
		vpa_buf_puts(b, "</p>\n");
	}
	vpa_buf_puts(b, "<p class=\"meta\">");
	esc(b, d->version);
	if (d->started) {
		vpa_buf_puts(b, " &middot; run started ");
		esc(b, d->started);
	}
	vpa_buf_puts(b, "</p>\n</header>\n");
	if (d->simulated) {
		vpa_buf_puts(b, "<div class=\"banner\" role=\"alert\"><strong>SIMULATED</strong> &mdash; "
				"these targets are simulated, not real systems: ");
		esc(b, d->simulated);
		vpa_buf_puts(b, ". Their numbers show what the attacks measure on a simulator "
				"whose leakage is known, not the privacy of a deployed system.</div>\n");
	}

	/* contents */
	vpa_buf_puts(b, "<nav id=\"contents\" aria-label=\"Contents\">\n<h2>Contents</h2>\n<ol>\n");
	int open = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct vpa_blk *h = &d->b[i];
		if (h->kind != VPA_B_HEAD || !h->id)
			continue;
		if (h->level == 1) {
			vpa_buf_puts(b, open == 2 ? "</ol></li>\n" : open == 1 ? "</li>\n" : "");
			vpa_buf_puts(b, "<li><a href=\"#");
			open = 1;
		} else {
			vpa_buf_puts(b, open == 1 ? "\n<ol>\n" : "");
			vpa_buf_puts(b, "<li><a href=\"#");
			open = 2;
		}
		esc(b, h->id);
		vpa_buf_puts(b, "\">");
		esc(b, h->text);
		vpa_buf_puts(b, h->level == 1 ? "</a>" : "</a></li>\n");
	}
	vpa_buf_puts(b, open == 2 ? "</ol></li>\n" : open == 1 ? "</li>\n" : "");
	vpa_buf_puts(b, "</ol>\n</nav>\n<main>\n");

	int in_sec = 0, in_sub = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct vpa_blk *k = &d->b[i];
		switch (k->kind) {
		case VPA_B_HEAD:
			if (in_sub && k->level <= 2)
				vpa_buf_puts(b, "</section>\n");
			if (in_sec && k->level == 1)
				vpa_buf_puts(b, "</section>\n");
			if (k->level <= 2)
				in_sub = k->level == 2;
			if (k->level == 1)
				in_sec = 1;
			vpa_buf_printf(b, "<section class=\"%s\"", k->level == 1 ? "sec" : "sub");
			if (k->id) {
				vpa_buf_puts(b, " id=\"");
				esc(b, k->id);
				vpa_buf_puts(b, "\"");
			}
			vpa_buf_printf(b, ">\n<h%d>", k->level + 1);
			esc(b, k->text);
			vpa_buf_printf(b, "</h%d>\n", k->level + 1);
			break;
		case VPA_B_PARA:
			vpa_buf_puts(b, k->style == VPA_P_NOTE ? "<p class=\"note\">" :
					k->style == VPA_P_PASS ? "<p class=\"verdict-box status-pass\">" :
					k->style == VPA_P_FAIL ? "<p class=\"verdict-box status-fail\">" :
					k->style == VPA_P_BANNER ? "<p class=\"banner\">" :
					k->style == VPA_P_LEAD ? "<p class=\"lead\">" : "<p>");
			esc(b, k->text);
			vpa_buf_puts(b, "</p>\n");
			break;
		case VPA_B_LIST:
			vpa_buf_puts(b, "<ul>\n");
			for (size_t j = 0; j < k->n_items; j++) {
				vpa_buf_puts(b, "<li>");
				esc(b, k->items[j]);
				vpa_buf_puts(b, "</li>\n");
			}
			vpa_buf_puts(b, "</ul>\n");
			break;
		case VPA_B_TABLE:
			put_table(b, k->table, k->text);
			break;
		case VPA_B_FIG:
			put_svg_or_note(b, d, &i, svgs, n_figs);
			break;
		case VPA_B_PRE:
			vpa_buf_puts(b, "<pre>");
			esc(b, k->text);
			vpa_buf_puts(b, "</pre>\n");
			break;
		case VPA_B_DEF:
			vpa_buf_puts(b, "<dl class=\"def\"><dt>");
			esc(b, k->text);
			vpa_buf_puts(b, "</dt>\n");
			for (size_t j = 0; j < k->n_items; j++) {
				vpa_buf_puts(b, "<dd>");
				esc(b, k->items[j]);
				vpa_buf_puts(b, "</dd>\n");
			}
			vpa_buf_puts(b, "</dl>\n");
			break;
		}
	}
	if (in_sub)
		vpa_buf_puts(b, "</section>\n");
	if (in_sec)
		vpa_buf_puts(b, "</section>\n");
	vpa_buf_puts(b, "</main>\n<footer>Rendered by ");
	esc(b, d->version);
	vpa_buf_printf(b, " from results schema vpaudit.results/1%s.</footer>\n</body>\n</html>\n",
		       svgs ? "; figures drawn by gnuplot" : "; figures omitted (--no-plots)");
}
