/*
 * reports/html.c - report.html: one self-contained page (inline CSS, inline
 * SVG, no script, no external resource), readable at 1280 px and printable.
 *
 * Order: header (scenario, version, seed, start, wall time, status), the
 * SIMULATED banner, the gate summary, targets, one section per attack (its
 * metrics table, then its figures), the scenario-level figures (sweeps), the
 * warnings.  Every string that comes from the results is escaped; all
 * figures are drawn by one gnuplot run (vpa_plot_svgs).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/table.h"

static const char css[] =
	":root{--pass:#17692b;--fail:#b00020;--line:#d0d4da}\n"
	"*{box-sizing:border-box}\n"
	"body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,\"DejaVu Sans\",Arial,sans-serif;"
	"margin:0 auto;max-width:1240px;padding:16px 24px 48px;color:#1a1a1a;background:#fff;line-height:1.45}\n"
	"h1{font-size:1.75em;margin:.2em 0}\n"
	"h2{font-size:1.3em;border-bottom:2px solid var(--line);padding-bottom:.15em;margin-top:1.8em}\n"
	"h2 small{font-weight:normal;color:#555;font-size:.75em}\n"
	".desc{margin:.2em 0 .8em;color:#333}\n"
	"dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 18px;margin:.5em 0}\n"
	"dl.meta dt{font-weight:600;color:#555}\n"
	"dl.meta dd{margin:0}\n"
	".banner{border:2px solid #b36b00;background:#fff4e0;color:#5c3700;padding:8px 14px;margin:14px 0;border-radius:4px}\n"
	"nav{font-size:.92em;margin:.8em 0}\n"
	"nav a{margin-right:.9em;white-space:nowrap}\n"
	".scroll{overflow-x:auto;max-width:100%}\n"
	"table{border-collapse:collapse;margin:.5em 0;font-size:.9em}\n"
	"th,td{border:1px solid var(--line);padding:4px 9px;text-align:left;vertical-align:top}\n"
	"th{background:#eef1f5;font-weight:600}\n"
	"td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"tr.pass td{background:#edf7ef}\n"
	"tr.fail td{background:#fdecee}\n"
	".verdict{font-weight:700;white-space:nowrap}\n"
	".pass .verdict,.status-pass{color:var(--pass)}\n"
	".fail .verdict,.status-fail{color:var(--fail)}\n"
	".status-pass,.status-fail{font-weight:700}\n"
	".note{color:#555;font-style:italic;font-size:.92em}\n"
	".figs{display:flex;flex-wrap:wrap;gap:12px}\n"
	"figure{margin:8px 0;flex:0 1 calc(50% - 6px);min-width:320px}\n"
	"figure svg{width:100%;height:auto;display:block;border:1px solid var(--line)}\n"
	"figcaption{font-size:.88em;color:#444;text-align:center;margin-top:3px}\n"
	"ul.warnings li{margin:.2em 0}\n"
	"td.unrel{color:#9a9a9a}\n"
	".why{display:block;font-size:.78em;color:#777;font-style:italic;white-space:normal;"
	"max-width:18em;text-align:left}\n"
	"footer{margin-top:3em;font-size:.85em;color:#666;border-top:1px solid var(--line);padding-top:.5em}\n"
	"@media (max-width:900px){figure{flex-basis:100%}}\n"
	"@media print{@page{margin:14mm}\n"
	" body{max-width:none;padding:0;font-size:10pt}\n"
	" nav{display:none}\n"
	" h2{break-after:avoid}\n"
	" figure,tr,.banner{break-inside:avoid}\n"
	" figure{flex-basis:calc(50% - 6px);min-width:0}\n"
	" .scroll{overflow:visible}\n"
	" th,tr.pass td,tr.fail td,.banner{-webkit-print-color-adjust:exact;print-color-adjust:exact}\n"
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
			if (why) {
				vpa_buf_puts(b, "<span class=\"why\">");
				esc(b, why);
				vpa_buf_puts(b, "</span>");
			}
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

static const struct vpa_json *arr_at(const struct vpa_json *obj, const char *key)
{
	const struct vpa_json *a = vpa_json_get(obj, key);
	return a && a->type == VPA_JSON_ARR ? a : NULL;
}

/* Figures [first, first + n) of the global figure list, as <figure>s. */
static void put_figures(struct vpa_buf *b, const struct vpa_json *figs, const struct vpa_buf *svgs,
			size_t first, int no_plots)
{
	if (!figs || figs->n == 0)
		return;
	if (no_plots) {
		vpa_buf_printf(b, "<p class=\"note\">%zu figure%s omitted (--no-plots).</p>\n",
			       figs->n, figs->n == 1 ? "" : "s");
		return;
	}
	vpa_buf_puts(b, "<div class=\"figs\">\n");
	for (size_t i = 0; i < figs->n; i++) {
		const struct vpa_json *f = figs->items[i];
		const char *id = vpa_json_get_str(f, "id"), *title = vpa_json_get_str(f, "title");
		vpa_buf_puts(b, "<figure");
		if (id) {
			vpa_buf_puts(b, " id=\"fig-");
			esc(b, id);
			vpa_buf_puts(b, "\"");
		}
		vpa_buf_puts(b, ">\n");
		vpa_buf_add(b, svgs[first + i].data, svgs[first + i].len);
		vpa_buf_puts(b, "<figcaption>");
		esc(b, title ? title : id ? id : vpa_json_get_str(f, "type"));
		vpa_buf_puts(b, "</figcaption>\n</figure>\n");
	}
	vpa_buf_puts(b, "</div>\n");
}

static void put_seconds(struct vpa_buf *b, double s)
{
	if (s < 10)
		vpa_buf_printf(b, "%.2f s", s);
	else if (s < 120)
		vpa_buf_printf(b, "%.1f s", s);
	else
		vpa_buf_printf(b, "%.0f min %.0f s", floor(s / 60), fmod(s, 60));
}

static void put_meta(struct vpa_buf *b, const char *dt, const char *dd)
{
	vpa_buf_puts(b, "<dt>");
	esc(b, dt);
	vpa_buf_puts(b, "</dt><dd>");
	esc(b, dd);
	vpa_buf_puts(b, "</dd>\n");
}

static void put_header(struct vpa_buf *b, const struct vpa_json *r)
{
	const struct vpa_json *sc = vpa_json_get(r, "scenario");
	const char *name = vpa_json_get_str(sc, "name"), *desc = vpa_json_get_str(sc, "description");
	const char *file = vpa_json_get_str(sc, "file"), *ver = vpa_json_get_str(r, "vpaudit_version");
	const char *started = vpa_json_get_str(r, "started"), *status = vpa_json_get_str(r, "status");
	const struct vpa_json *seed = vpa_json_get(r, "seed"), *wt = vpa_json_get(r, "wall_time");
	struct vpa_buf t;
	vpa_buf_init(&t);

	vpa_buf_puts(b, "<header>\n<h1>");
	esc(b, name);
	vpa_buf_puts(b, "</h1>\n");
	if (desc && *desc) {
		vpa_buf_puts(b, "<p class=\"desc\">");
		esc(b, desc);
		vpa_buf_puts(b, "</p>\n");
	}
	vpa_buf_puts(b, "<dl class=\"meta\">\n");
	if (status) {
		int pass = !strcmp(status, "pass");
		vpa_buf_printf(b, "<dt>status</dt><dd class=\"status-%s\">", pass ? "pass" : "fail");
		esc(b, pass ? "PASS" : !strcmp(status, "fail") ? "FAIL" : status);
		vpa_buf_puts(b, pass ? " (all gates hold)" : "");
		vpa_buf_puts(b, "</dd>\n");
	}
	if (file)
		put_meta(b, "scenario file", file);
	if (ver)
		put_meta(b, "vpaudit version", ver);
	if (seed && seed->type == VPA_JSON_NUM) {
		t.len = 0;
		vpa_report_fmt(&t, "seed", seed);
		put_meta(b, "seed", vpa_buf_str(&t));
	}
	if (started)
		put_meta(b, "started", started);
	if (wt && wt->type == VPA_JSON_OBJ) {
		t.len = 0;
		double total = vpa_json_get_num(wt, "total", NAN);
		if (isfinite(total))
			put_seconds(&t, total);
		const struct vpa_json *st = vpa_json_get(wt, "stages");
		if (st && st->type == VPA_JSON_OBJ && st->n) {
			vpa_buf_puts(&t, t.len ? " (" : "(");
			for (size_t i = 0; i < st->n; i++) {
				vpa_buf_printf(&t, "%s%s ", i ? ", " : "", st->keys[i]);
				if (st->items[i]->type == VPA_JSON_NUM)
					put_seconds(&t, st->items[i]->num);
				else
					vpa_buf_puts(&t, "?");
			}
			vpa_buf_puts(&t, ")");
		}
		if (t.len)
			put_meta(b, "wall time", vpa_buf_str(&t));
	}
	vpa_buf_puts(b, "</dl>\n</header>\n");
	vpa_buf_release(&t);
}

static void put_targets(struct vpa_buf *b, const struct vpa_json *r)
{
	const struct vpa_json *ts = arr_at(r, "targets");
	if (!ts || ts->n == 0)
		return;
	vpa_buf_puts(b, "<section id=\"targets\">\n<h2>Targets</h2>\n<div class=\"scroll\"><table>\n"
			"<thead><tr><th>id</th><th>kind</th><th>source</th><th>simulated</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < ts->n; i++) {
		const struct vpa_json *t = ts->items[i], *sim = vpa_json_get(t, "simulated");
		const char *kind = vpa_json_get_str(t, "kind"), *src = vpa_json_get_str(t, "source");
		int simulated = sim && sim->type == VPA_JSON_BOOL && sim->boolean;
		vpa_buf_puts(b, "<tr><td>");
		esc(b, vpa_json_get_str(t, "id"));
		vpa_buf_puts(b, "</td><td>");
		esc(b, kind ? kind : "-");
		vpa_buf_puts(b, "</td><td>");
		esc(b, src ? src : "-");
		struct vpa_buf syn;
		vpa_buf_init(&syn);
		vpa_synthetic_sets(t, &syn);
		if (simulated) {
			vpa_buf_puts(b, "</td><td><strong>SIMULATED</strong></td></tr>\n");
		} else if (syn.len) {
			vpa_buf_puts(b, "</td><td><strong>SYNTHETIC</strong> score files: ");
			esc(b, syn.data);
			vpa_buf_puts(b, "</td></tr>\n");
		} else {
			vpa_buf_puts(b, "</td><td>no</td></tr>\n");
		}
		vpa_buf_release(&syn);
	}
	vpa_buf_puts(b, "</tbody></table></div>\n</section>\n");
}

void vpa_collect_figures(const struct vpa_json *r, const struct vpa_json **figs)
{
	const struct vpa_json *attacks = arr_at(r, "attacks"), *sfigs = arr_at(r, "figures");
	size_t k = 0;
	for (size_t i = 0; attacks && i < attacks->n; i++) {
		const struct vpa_json *f = arr_at(attacks->items[i], "figures");
		for (size_t j = 0; f && j < f->n; j++)
			figs[k++] = f->items[j];
	}
	for (size_t j = 0; sfigs && j < sfigs->n; j++)
		figs[k++] = sfigs->items[j];
}

int vpa_report_html(const struct vpa_json *r, int no_plots, struct vpa_buf *b, struct vpa_err *err)
{
	size_t n_figs = vpa_count_figures(r);
	struct vpa_buf *svgs = xcalloc(n_figs ? n_figs : 1, sizeof(*svgs));
	const struct vpa_json **figs = xcalloc(n_figs ? n_figs : 1, sizeof(*figs));
	vpa_collect_figures(r, figs);
	/* All figures in one gnuplot run, in page order. */
	int rc = no_plots ? 0 : vpa_plot_svgs(figs, n_figs, 0, svgs, err);
	if (!rc)
		vpa_html_assemble(r, no_plots, svgs, b);
	for (size_t i = 0; i < n_figs; i++)
		vpa_buf_release(&svgs[i]);
	free(svgs);
	free(figs);
	return rc;
}

void vpa_html_assemble(const struct vpa_json *r, int no_plots, const struct vpa_buf *svgs,
		       struct vpa_buf *b)
{
	const struct vpa_json *attacks = arr_at(r, "attacks"), *sfigs = arr_at(r, "figures");
	const struct vpa_json *warnings = arr_at(r, "warnings"), *gates = arr_at(r, "gates");
	const struct vpa_json *sc = vpa_json_get(r, "scenario");
	struct vpa_buf sim;
	vpa_buf_init(&sim);

	vpa_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
	vpa_buf_printf(b, "<meta name=\"generator\" content=\"vpaudit %s\">\n<title>vpaudit report: ", VPA_VERSION);
	esc(b, vpa_json_get_str(sc, "name"));
	vpa_buf_printf(b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
	put_header(b, r);

	vpa_simulated_targets(r, &sim);
	if (sim.len) {
		vpa_buf_puts(b, "<div class=\"banner\" role=\"alert\"><strong>SIMULATED</strong> &mdash; "
				"these targets are simulated, not real systems: ");
		esc(b, sim.data);
		vpa_buf_puts(b, ". Their numbers show what the attacks measure on a simulator "
				"whose leakage is known, not the privacy of a deployed system.</div>\n");
	}

	if (attacks && attacks->n > 1) {
		vpa_buf_puts(b, "<nav>Contents: <a href=\"#summary\">Summary</a>");
		for (size_t i = 0; i < attacks->n; i++) {
			vpa_buf_printf(b, "<a href=\"#attack-%zu\">", i + 1);
			esc(b, vpa_json_get_str(attacks->items[i], "id"));
			vpa_buf_puts(b, "</a>");
		}
		vpa_buf_puts(b, "</nav>\n");
	}

	vpa_buf_puts(b, "<section id=\"summary\">\n<h2>Summary</h2>\n");
	if (gates && gates->n) {
		struct vpa_table t;
		vpa_table_gates(r, &t);
		size_t failed = 0;
		for (size_t i = 0; i < t.n_rows; i++)
			failed += t.row_class[i] == VPA_ROW_FAIL;
		vpa_buf_printf(b, "<p>%zu gate%s, %zu failed.</p>\n", t.n_rows, t.n_rows == 1 ? "" : "s",
			       failed);
		put_table(b, &t, NULL);
		vpa_table_release(&t);
	} else {
		vpa_buf_puts(b, "<p class=\"note\">The scenario defines no gates.</p>\n");
	}
	vpa_buf_puts(b, "</section>\n");
	put_targets(b, r);

	size_t first = 0;
	for (size_t i = 0; attacks && i < attacks->n; i++) {
		const struct vpa_json *a = attacks->items[i], *f = arr_at(a, "figures");
		const char *id = vpa_json_get_str(a, "id"), *kind = vpa_json_get_str(a, "kind");
		const char *target = vpa_json_get_str(a, "target"), *title = vpa_json_get_str(a, "title");
		vpa_buf_printf(b, "<section class=\"attack\" id=\"attack-%zu\">\n<h2>Attack ", i + 1);
		esc(b, id);
		if (kind || target) {
			vpa_buf_puts(b, " <small>");
			if (kind) {
				vpa_buf_puts(b, "kind ");
				esc(b, kind);
			}
			if (target) {
				vpa_buf_puts(b, kind ? ", target " : "target ");
				esc(b, target);
			}
			vpa_buf_puts(b, "</small>");
		}
		vpa_buf_puts(b, "</h2>\n");
		if (title && *title) {
			vpa_buf_puts(b, "<p>");
			esc(b, title);
			vpa_buf_puts(b, "</p>\n");
		}
		struct vpa_table t;
		vpa_table_attack(r, id, &t);
		if (t.n_rows)
			put_table(b, &t, NULL);
		else
			vpa_buf_puts(b, "<p class=\"note\">No results recorded for this attack.</p>\n");
		vpa_table_release(&t);
		put_figures(b, f, svgs, first, no_plots);
		first += f ? f->n : 0;
		vpa_buf_puts(b, "</section>\n");
	}

	const struct vpa_json *sweep = vpa_json_get(r, "sweep");
	if ((sfigs && sfigs->n) || (sweep && sweep->type == VPA_JSON_OBJ)) {
		vpa_buf_puts(b, "<section id=\"scenario-figures\">\n<h2>Sweep</h2>\n");
		const char *param = sweep && sweep->type == VPA_JSON_OBJ ? vpa_json_get_str(sweep, "param") : NULL;
		const struct vpa_json *values = sweep ? arr_at(sweep, "values") : NULL;
		if (param) {
			struct vpa_buf v;
			vpa_buf_init(&v);
			vpa_buf_puts(b, "<p>Parameter <code>");
			esc(b, param);
			vpa_buf_puts(b, "</code>");
			if (values) {
				vpa_report_fmt(&v, "sweep", values);
				vpa_buf_puts(b, " over ");
				esc(b, vpa_buf_str(&v));
			}
			vpa_buf_puts(b, ".</p>\n");
			vpa_buf_release(&v);
		}
		put_figures(b, sfigs, svgs, first, no_plots);
		vpa_buf_puts(b, "</section>\n");
	}

	if (warnings && warnings->n) {
		vpa_buf_puts(b, "<section id=\"warnings\">\n<h2>Warnings</h2>\n<ul class=\"warnings\">\n");
		for (size_t i = 0; i < warnings->n; i++) {
			vpa_buf_puts(b, "<li>");
			esc(b, warnings->items[i]->str);
			vpa_buf_puts(b, "</li>\n");
		}
		vpa_buf_puts(b, "</ul>\n</section>\n");
	}
	vpa_buf_printf(b, "<footer>Rendered by vpaudit %s from results schema vpaudit.results/1%s.</footer>\n"
			  "</body>\n</html>\n",
		       VPA_VERSION, no_plots ? "; plots omitted (--no-plots)" : "; plots by gnuplot");
	vpa_buf_release(&sim);
}
