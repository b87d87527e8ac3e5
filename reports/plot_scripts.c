/*
 * reports/plot_scripts.c - the gnuplot script of each figure type
 * (vpa_plot_script) and the quoting of text for gnuplot scripts
 * (vpa_gnuplot_quote); split from reports/plot.c, which calls it (this file
 * calls only reports/plot_check.c).
 *
 * Figures (see reports/README.md):
 *   det          probit ("normal deviate") axes: a probability p is drawn at
 *                invnorm(p).  p is clamped to the axis limits, so p = 0 and
 *                p = 1 lie on the frame instead of at -/+infinity.  The axes
 *                span 0.1%..40% when every EER is at most 30%, else
 *                0.1%..99.9% (anonymised systems sit near 50%).
 *   linkability  mated and non-mated score densities as translucent boxes,
 *                D<->(s) on the second y axis (0..1), D<->sys and omega in
 *                the title (Gomez-Barrero et al. 2017; the VoicePrivacy
 *                linkability figure).
 *   lines        x/y series with points, optional log x axis.
 *   bars         named categories on the x axis, one bar per series in each
 *                (side by side), on the figure's fixed y range when it has
 *                one; the names slant when they would not fit side by side.
 */
#include <math.h>
#include <string.h>

#include "reports/table.h"

/* ---- script text ---- */

/*
 * gnuplot (5.4) reads '' inside a single-quoted string as one quote only
 * after an ordinary character: a quote right after the opening quote or
 * after an escaped '' closes the string ('''B1' and 'a''''b' are syntax
 * errors).  So the text becomes a concatenation of single-quoted pieces in
 * which every quote follows an ordinary character, and each quote that
 * cannot be written so is the expression sprintf('%c',39):
 *   it's   -> 'it''s'
 *   'B1'   -> sprintf('%c',39).'B1'''
 *   a''b   -> 'a'''.sprintf('%c',39).'b'
 * Double-quoted strings are never used (they expand backquotes).  Control
 * characters (and DEL) become spaces: a newline would end the command.
 */
static void quote_text(struct vpa_buf *out, const char *s, int tic)
{
	int open = 0, plain = 0, first = 1;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\'') {
			if (open && plain) {
				vpa_buf_puts(out, "''");
				plain = 0;
				continue;
			}
			if (open)
				vpa_buf_puts(out, "'");
			vpa_buf_puts(out, first ? "sprintf('%c',39)" : ".sprintf('%c',39)");
			open = plain = first = 0;
			continue;
		}
		if (!open) {
			vpa_buf_puts(out, first ? "'" : ".'");
			open = 1;
			first = 0;
		}
		if (c < 0x20 || c == 0x7f)
			vpa_buf_puts(out, " ");
		else if (c == '%' && tic)
			vpa_buf_puts(out, "%%");
		else
			vpa_buf_add(out, s, 1);
		plain = 1;
	}
	if (open)
		vpa_buf_puts(out, "'");
	else if (first)
		vpa_buf_puts(out, "''");
}

void vpa_gnuplot_quote(struct vpa_buf *out, const char *s)
{
	quote_text(out, s, 0);
}

/* A tic label is a format for the tic's value: % is written %%. */
void vpa_gnuplot_quote_tic(struct vpa_buf *out, const char *s)
{
	quote_text(out, s, 1);
}

/* ---- figure scripts ---- */

/* A number for the script or a data block: shortest that round-trips well enough. */
static void put_num(struct vpa_buf *b, double x)
{
	vpa_buf_printf(b, "%.10g", x);
}

static int has_yrange(const struct vpa_json *fig, double *lo, double *hi)
{
	const struct vpa_json *y = vpa_json_get(fig, "yrange");
	if (!y || y->type != VPA_JSON_ARR || y->n != 2)
		return 0;
	*lo = y->items[0]->num;
	*hi = y->items[1]->num;
	return 1;
}

static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
				"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define N_PALETTE (sizeof(palette) / sizeof(palette[0]))

/* A finite number at arr[i], or NAN. */
static double num_at(const struct vpa_json *arr, size_t i)
{
	const struct vpa_json *v = arr->items[i];
	return v->type == VPA_JSON_NUM && isfinite(v->num) ? v->num : NAN;
}

static void set_title(struct vpa_buf *s, const struct vpa_json *fig, const char *extra)
{
	const char *t = vpa_json_get_str(fig, "title");
	struct vpa_buf tb;
	vpa_buf_init(&tb);
	vpa_buf_puts(&tb, t ? t : "");
	if (extra) {
		if (tb.len)
			vpa_buf_puts(&tb, " - ");
		vpa_buf_puts(&tb, extra);
	}
	if (tb.len) {
		vpa_buf_puts(s, "set title ");
		vpa_gnuplot_quote(s, tb.data);
		vpa_buf_puts(s, "\n");
	}
	vpa_buf_release(&tb);
}

static double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* Percent text of a probability for legends: "12.3%". */
static void put_pct(struct vpa_buf *b, double p)
{
	vpa_buf_printf(b, "%.2f%%", 100 * p);
}

static void det_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *s)
{
	const struct vpa_json *series = vpa_json_get(fig, "series");
	/* The axis range follows the largest EER; a series without "eer" gets
	 * the crossing of its curve with the diagonal, min_k max(p_miss, p_fa). */
	double max_eer = 0;
	for (size_t i = 0; i < series->n; i++) {
		const struct vpa_json *one = series->items[i];
		double e = vpa_json_get_num(one, "eer", NAN);
		if (!isfinite(e)) {
			const struct vpa_json *pf = vpa_json_get(one, "p_fa"), *pm = vpa_json_get(one, "p_miss");
			for (size_t k = 0; k < pf->n; k++) {
				double m = fmax(num_at(pf, k), num_at(pm, k));
				if (isfinite(m) && !(m >= e))
					e = m;
			}
		}
		if (isfinite(e) && e > max_eer)
			max_eer = e;
	}
	int wide = max_eer > 0.30;
	const double lo = 0.001, hi = wide ? 0.999 : 0.40;
	static const double narrow_ticks[] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4};
	/* no 2% / 98%: on the probit scale they sit 0.27 from 1% / 99%, and their
	 * labels ran into each other ("98 99") */
	static const double wide_ticks[] = {0.001, 0.01, 0.05, 0.1, 0.2, 0.4, 0.6,
					    0.8, 0.9, 0.95, 0.99, 0.999};
	const double *ticks = wide ? wide_ticks : narrow_ticks;
	size_t nt = wide ? sizeof(wide_ticks) / sizeof(*wide_ticks)
			 : sizeof(narrow_ticks) / sizeof(*narrow_ticks);

	set_title(s, fig, NULL);
	/* the key outside the plot: inside (even opaque) it hid the lower-left
	 * part of the curves, where a baseline's EER dot sits; an opaque key is
	 * also drawn twice by the SVG terminal, which duplicated its ids */
	vpa_buf_puts(s, "set size square\nset grid\nset key outside right top box\n"
			"set xlabel 'false alarm rate (%)'\nset ylabel 'miss rate (%)'\n");
	vpa_buf_printf(s, "set xrange [invnorm(%g):invnorm(%g)]\nset yrange [invnorm(%g):invnorm(%g)]\n",
		       lo, hi, lo, hi);
	for (int axis = 0; axis < 2; axis++) {
		vpa_buf_puts(s, axis ? "set ytics (" : "set xtics (");
		for (size_t i = 0; i < nt; i++)
			vpa_buf_printf(s, "%s'%g' invnorm(%g)", i ? ", " : "", 100 * ticks[i], ticks[i]);
		vpa_buf_puts(s, ")\n");
	}
	vpa_buf_printf(s, "set arrow from invnorm(%g),invnorm(%g) to invnorm(%g),invnorm(%g) nohead dt 2 lc rgb '#888888'\n",
		       lo, lo, hi, hi);

	struct vpa_buf plot;
	vpa_buf_init(&plot);
	size_t drawn = 0;
	for (size_t i = 0; i < series->n; i++) {
		const struct vpa_json *one = series->items[i];
		const struct vpa_json *pf = vpa_json_get(one, "p_fa"), *pm = vpa_json_get(one, "p_miss");
		const char *color = palette[i % N_PALETTE];
		const char *name = vpa_json_get_str(one, "name");
		double eer = vpa_json_get_num(one, "eer", NAN);
		size_t valid = 0;
		vpa_buf_printf(s, "$%s_s%zu << EOD\n", tag, i);
		for (size_t k = 0; k < pf->n; k++) {
			double x = num_at(pf, k), y = num_at(pm, k);
			if (isnan(x) || isnan(y)) {
				vpa_buf_puts(s, "\n"); /* a gap in the curve */
				continue;
			}
			put_num(s, clampd(x, lo, hi));
			vpa_buf_puts(s, " ");
			put_num(s, clampd(y, lo, hi));
			vpa_buf_puts(s, "\n");
			valid++;
		}
		vpa_buf_puts(s, "EOD\n");
		struct vpa_buf label;
		vpa_buf_init(&label);
		vpa_buf_puts(&label, name ? name : "");
		if (isfinite(eer)) {
			vpa_buf_puts(&label, label.len ? " (EER " : "EER ");
			put_pct(&label, eer);
			if (name && *name)
				vpa_buf_puts(&label, ")");
		}
		if (valid) {
			vpa_buf_printf(&plot, "%s$%s_s%zu using (invnorm($1)):(invnorm($2)) with lines lw 2 lc rgb '%s' title ",
				       drawn++ ? ", " : "", tag, i, color);
			vpa_gnuplot_quote(&plot, vpa_buf_str(&label));
		}
		if (isfinite(eer)) {
			vpa_buf_printf(s, "$%s_e%zu << EOD\n", tag, i);
			put_num(s, clampd(eer, lo, hi));
			vpa_buf_puts(s, "\nEOD\n");
			vpa_buf_printf(&plot, "%s$%s_e%zu using (invnorm($1)):(invnorm($1)) with points pt 7 ps 1.2 lc rgb '%s' ",
				       drawn++ ? ", " : "", tag, i, color);
			if (valid)
				vpa_buf_puts(&plot, "notitle");
			else {
				vpa_buf_puts(&plot, "title ");
				vpa_gnuplot_quote(&plot, vpa_buf_str(&label));
			}
		}
		vpa_buf_release(&label);
	}
	if (!drawn)
		vpa_buf_puts(&plot, "NaN notitle");
	vpa_buf_puts(s, "plot ");
	vpa_buf_add(s, plot.data, plot.len);
	vpa_buf_puts(s, "\n");
	vpa_buf_release(&plot);
}

static void linkability_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *s)
{
	const struct vpa_json *c = vpa_json_get(fig, "centers"), *pm = vpa_json_get(fig, "p_mated"),
			      *pn = vpa_json_get(fig, "p_non"), *dl = vpa_json_get(fig, "d_local");
	double dsys = vpa_json_get_num(fig, "dsys", NAN), omega = vpa_json_get_num(fig, "omega", NAN);
	struct vpa_buf extra;
	vpa_buf_init(&extra);
	vpa_buf_puts(&extra, "D\xe2\x86\x94sys = ");
	if (isfinite(dsys))
		vpa_buf_printf(&extra, "%.3f", dsys);
	else
		vpa_buf_puts(&extra, "undefined");
	if (isfinite(omega))
		vpa_buf_printf(&extra, ", \xcf\x89 = %g", omega);
	set_title(s, fig, extra.data);
	vpa_buf_release(&extra);

	/* Box width: the smallest spacing of consecutive finite centres. */
	double width = INFINITY, prev = NAN;
	size_t n_valid = 0;
	for (size_t i = 0; i < c->n; i++) {
		double x = num_at(c, i);
		if (isnan(x))
			continue;
		if (!isnan(prev) && fabs(x - prev) > 0 && fabs(x - prev) < width)
			width = fabs(x - prev);
		prev = x;
		n_valid++;
	}
	if (!isfinite(width))
		width = 1;
	vpa_buf_puts(s, "set grid\nset key outside right top box\n"
			"set style fill transparent solid 0.45 noborder\n"
			"set xlabel 'score'\nset ylabel 'probability density'\n"
			"set y2label 'D\xe2\x86\x94(s)'\nset y2range [0:1]\nset y2tics 0.2\n"
			"set ytics nomirror\nset yrange [0:*]\n");
	vpa_buf_puts(s, "set boxwidth ");
	put_num(s, width);
	vpa_buf_puts(s, " absolute\n");
	static const char *names[] = {"m", "n", "d"};
	const struct vpa_json *ys[] = {pm, pn, dl};
	for (int k = 0; k < 3; k++) {
		vpa_buf_printf(s, "$%s_%s << EOD\n", tag, names[k]);
		for (size_t i = 0; i < c->n; i++) {
			double x = num_at(c, i), y = num_at(ys[k], i);
			if (isnan(x) || isnan(y)) {
				vpa_buf_puts(s, "\n");
				continue;
			}
			put_num(s, x);
			vpa_buf_puts(s, " ");
			put_num(s, k == 2 ? clampd(y, 0, 1) : y);
			vpa_buf_puts(s, "\n");
		}
		vpa_buf_puts(s, "EOD\n");
	}
	if (n_valid == 0) {
		vpa_buf_puts(s, "set xrange [0:1]\nset label 'no data' at graph 0.5,0.5 center\n"
				"plot NaN notitle\n");
		return;
	}
	vpa_buf_printf(s, "plot $%s_m using 1:2 with boxes lc rgb '#1f77b4' title 'mated', "
			  "$%s_n using 1:2 with boxes lc rgb '#d62728' title 'non-mated', "
			  "$%s_d using 1:2 axes x1y2 with lines lw 2 lc rgb '#000000' title 'D\xe2\x86\x94(s)'\n",
		       tag, tag, tag);
}

static void lines_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *s)
{
	const struct vpa_json *series = vpa_json_get(fig, "series");
	const struct vpa_json *lx = vpa_json_get(fig, "logx");
	int logx = lx && lx->type == VPA_JSON_BOOL && lx->boolean;
	const char *xl = vpa_json_get_str(fig, "xlabel"), *yl = vpa_json_get_str(fig, "ylabel");
	set_title(s, fig, NULL);
	vpa_buf_puts(s, "set grid\nset key outside right top\n");
	if (xl) {
		vpa_buf_puts(s, "set xlabel ");
		vpa_gnuplot_quote(s, xl);
		vpa_buf_puts(s, "\n");
	}
	if (yl) {
		vpa_buf_puts(s, "set ylabel ");
		vpa_gnuplot_quote(s, yl);
		vpa_buf_puts(s, "\n");
	}
	if (logx)
		vpa_buf_puts(s, "set logscale x\n");
	/* Categorical x (a sweep over names): x = 0, 1, ... labelled by xticlabels. */
	const struct vpa_json *tl = vpa_json_get(fig, "xticlabels");
	if (tl && tl->type == VPA_JSON_ARR && tl->n) {
		vpa_buf_puts(s, "set xtics (");
		for (size_t i = 0; i < tl->n; i++) {
			if (i)
				vpa_buf_puts(s, ", ");
			vpa_gnuplot_quote_tic(s, tl->items[i]->str);
			vpa_buf_printf(s, " %zu", i);
		}
		vpa_buf_printf(s, ")\nset xrange [-0.5:%zu.5]\n", tl->n - 1);
	}
	/* One distinct x (a single repetition count, a one-value sweep) or one
	 * distinct y (a flat series): gnuplot cannot autoscale an empty range
	 * (it warns and widens it); centre the value ourselves. */
	double lo = INFINITY, hi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	for (size_t i = 0; i < series->n; i++) {
		const struct vpa_json *x = vpa_json_get(series->items[i], "x");
		const struct vpa_json *y = vpa_json_get(series->items[i], "y");
		for (size_t k = 0; k < x->n; k++) {
			double a = num_at(x, k), b = num_at(y, k);
			if (isnan(a) || isnan(b) || (logx && a <= 0))
				continue;
			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
			ylo = b < ylo ? b : ylo;
			yhi = b > yhi ? b : yhi;
		}
	}
	if (lo == hi && !(tl && tl->type == VPA_JSON_ARR && tl->n))
		vpa_buf_printf(s, "set xrange [%.17g:%.17g]\n", logx ? lo / 2 : lo - 1,
			       logx ? hi * 2 : hi + 1);
	double flo, fhi;
	if (has_yrange(fig, &flo, &fhi))
		vpa_buf_printf(s, "set yrange [%.17g:%.17g]\n", flo, fhi);
	else if (ylo == yhi)
		vpa_buf_printf(s, "set yrange [%.17g:%.17g]\n", ylo - 1, yhi + 1);
	struct vpa_buf plot;
	vpa_buf_init(&plot);
	size_t drawn = 0;
	for (size_t i = 0; i < series->n; i++) {
		const struct vpa_json *one = series->items[i];
		const struct vpa_json *x = vpa_json_get(one, "x"), *y = vpa_json_get(one, "y");
		const char *name = vpa_json_get_str(one, "name");
		size_t valid = 0;
		vpa_buf_printf(s, "$%s_s%zu << EOD\n", tag, i);
		for (size_t k = 0; k < x->n; k++) {
			double a = num_at(x, k), b = num_at(y, k);
			/* Undefined points and x <= 0 on a log axis are gaps. */
			if (isnan(a) || isnan(b) || (logx && a <= 0)) {
				vpa_buf_puts(s, "\n");
				continue;
			}
			put_num(s, a);
			vpa_buf_puts(s, " ");
			put_num(s, b);
			vpa_buf_puts(s, "\n");
			valid++;
		}
		vpa_buf_puts(s, "EOD\n");
		if (!valid)
			continue;
		vpa_buf_printf(&plot, "%s$%s_s%zu using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '%s' title ",
			       drawn++ ? ", " : "", tag, i, palette[i % N_PALETTE]);
		vpa_gnuplot_quote(&plot, name ? name : "");
	}
	if (!drawn) {
		vpa_buf_puts(s, "unset logscale x\nset xrange [0:1]\nset yrange [0:1]\n"
				"set label 'no data' at graph 0.5,0.5 center\n");
		vpa_buf_puts(&plot, "NaN notitle");
	}
	vpa_buf_puts(s, "plot ");
	vpa_buf_add(s, plot.data, plot.len);
	vpa_buf_puts(s, "\n");
	vpa_buf_release(&plot);
}

/* Bars: the categories named on the x axis, one bar per series in each
 * category (side by side), on the figure's fixed y range when it has one. */
static void bars_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *s)
{
	const struct vpa_json *cat = vpa_json_get(fig, "categories"), *series = vpa_json_get(fig, "series");
	const char *yl = vpa_json_get_str(fig, "ylabel");
	size_t m = series->n;
	double w = 0.8 / (double)m;
	set_title(s, fig, NULL);
	vpa_buf_puts(s, "set grid ytics\nset style fill solid 0.85 border lc rgb '#333333'\n");
	vpa_buf_printf(s, "set boxwidth %.6f absolute\n", w);
	vpa_buf_puts(s, m > 1 ? "set key outside right top\n" : "unset key\n");
	if (yl) {
		vpa_buf_puts(s, "set ylabel ");
		vpa_gnuplot_quote(s, yl);
		vpa_buf_puts(s, "\n");
	}
	vpa_buf_puts(s, "set xtics (");
	for (size_t i = 0; i < cat->n; i++) {
		if (i)
			vpa_buf_puts(s, ", ");
		vpa_gnuplot_quote(s, cat->items[i]->str);
		vpa_buf_printf(s, " %zu", i);
	}
	vpa_buf_printf(s, ") scale 0\nset xrange [-0.6:%zu.6]\n", cat->n - 1);
	/* slanted when the names would not fit side by side (about 70 characters
	 * across the plot) */
	size_t longest = 0;
	for (size_t i = 0; i < cat->n; i++)
		if (strlen(cat->items[i]->str) > longest)
			longest = strlen(cat->items[i]->str);
	if (cat->n > 4 || longest * cat->n > 70)
		vpa_buf_puts(s, "set xtics rotate by -30\n");
	double lo, hi;
	if (has_yrange(fig, &lo, &hi))
		vpa_buf_printf(s, "set yrange [%.17g:%.17g]\n", lo, hi);
	else
		vpa_buf_puts(s, "set yrange [0:*]\n");
	for (size_t j = 0; j < m; j++) {
		const struct vpa_json *y = vpa_json_get(series->items[j], "y");
		vpa_buf_printf(s, "$%s_b%zu << EOD\n", tag, j);
		for (size_t i = 0; i < y->n; i++) {
			double v = num_at(y, i);
			if (isnan(v))
				continue; /* an undefined value has no bar */
			put_num(s, (double)i - 0.4 + w * ((double)j + 0.5));
			vpa_buf_puts(s, " ");
			put_num(s, v);
			vpa_buf_puts(s, "\n");
		}
		vpa_buf_puts(s, "EOD\n");
	}
	vpa_buf_puts(s, "plot ");
	for (size_t j = 0; j < m; j++) {
		const char *name = vpa_json_get_str(series->items[j], "name");
		vpa_buf_printf(s, "%s$%s_b%zu using 1:2 with boxes lc rgb '%s' title ", j ? ", " : "", tag, j,
			       palette[j % N_PALETTE]);
		vpa_gnuplot_quote(s, name ? name : "");
	}
	vpa_buf_puts(s, "\n");
}

int vpa_plot_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *script,
		    struct vpa_err *err)
{
	int rc = vpa_plot_check(fig, NULL, err);
	if (rc)
		return rc;
	const char *type = vpa_json_get_str(fig, "type");
	vpa_buf_puts(script, "reset\nset encoding utf8\n");
	if (!strcmp(type, "det"))
		det_script(fig, tag, script);
	else if (!strcmp(type, "linkability"))
		linkability_script(fig, tag, script);
	else if (!strcmp(type, "bars"))
		bars_script(fig, tag, script);
	else
		lines_script(fig, tag, script);
	return 0;
}

