/*
 * reports/plot.c - the rendering of figures (one figure to SVG or PDF, many
 * figures in one gnuplot run, the two files of a figure): the caller of the
 * files below it, reports/plot_scripts.c (the script of each figure type and
 * the quoting of text for gnuplot, described there), reports/plot_check.c
 * (validation of figure JSON) and reports/plot_gnuplot.c (the gnuplot
 * process: fork/execv, pipes, poll loop, error messages).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "reports/table.h"

/* ---- rendering ---- */

static const char svg_term[] =
	"set terminal svg size 640,420 fixed font 'sans,10' noenhanced background '#ffffff'\n";
static const char pdf_term[] =
	"set terminal pdfcairo size 6.4in,4.2in font 'sans,10' noenhanced\n";

int vpa_plot_render(const struct vpa_json *fig, const char *format, struct vpa_buf *out,
		    struct vpa_err *err)
{
	struct vpa_buf s;
	vpa_buf_init(&s);
	int rc = 0;
	if (!strcmp(format, "svg"))
		vpa_buf_puts(&s, svg_term);
	else if (!strcmp(format, "pdf"))
		vpa_buf_puts(&s, pdf_term);
	else
		VPA_BUG("unknown plot format '%s'", format);
	rc = vpa_plot_script(fig, "f0", &s, err);
	if (!rc)
		rc = vpa_gnuplot_run(s.data, s.len, out, err);
	vpa_buf_release(&s);
	return rc;
}

/*
 * Copy one gnuplot SVG document [p, end) into out without its prolog
 * (<?xml ...?>, <!DOCTYPE ...>), with every id and #reference prefixed.
 */
static void copy_svg(struct vpa_buf *out, const char *p, const char *end, const char *prefix)
{
	const char *svg = memmem(p, (size_t)(end - p), "<svg", 4);
	if (svg)
		p = svg;
	static const char *const pats[] = {" id='", " id=\"", "href='#", "href=\"#", "url(#"};
	enum { NP = sizeof(pats) / sizeof(*pats) };
	/* next[k]: the next hit of pats[k] at or after p (NULL: none left), so
	 * the text is scanned once per pattern, not once per hit. */
	const char *next[NP];
	for (size_t k = 0; k < NP; k++)
		next[k] = memmem(p, (size_t)(end - p), pats[k], strlen(pats[k]));
	for (;;) {
		size_t best = NP;
		for (size_t k = 0; k < NP; k++)
			if (next[k] && (best == NP || next[k] < next[best]))
				best = k;
		if (best == NP) {
			vpa_buf_add(out, p, (size_t)(end - p));
			break;
		}
		size_t n = strlen(pats[best]);
		vpa_buf_add(out, p, (size_t)(next[best] - p) + n);
		vpa_buf_puts(out, prefix);
		p = next[best] + n;
		for (size_t k = 0; k < NP; k++)
			if (next[k] && next[k] < p)
				next[k] = memmem(p, (size_t)(end - p), pats[k], strlen(pats[k]));
	}
}

int vpa_plot_svgs_script(const struct vpa_json *const *figs, size_t n, struct vpa_buf *s,
			 struct vpa_err *err)
{
	vpa_buf_puts(s, svg_term);
	for (size_t i = 0; i < n; i++) {
		char tag[32];
		snprintf(tag, sizeof(tag), "f%zu", i);
		int rc = vpa_plot_script(figs[i], tag, s, err);
		if (rc)
			return rc;
	}
	return 0;
}

int vpa_plot_svgs_split(const struct vpa_buf *gout, size_t n, size_t prefix, struct vpa_buf *svgs,
			struct vpa_err *err)
{
	/* gnuplot writes one complete document per plot, each ending "</svg>". */
	const char *p = gout->data, *end = gout->data + gout->len;
	for (size_t i = 0; i < n; i++) {
		const char *close = p ? memmem(p, (size_t)(end - p), "</svg>", 6) : NULL;
		if (!close)
			return vpa_fail(err, VPA_EIO, NULL,
					"gnuplot produced %zu SVG documents for %zu figures", i, n);
		close += 6;
		char pre[48];
		snprintf(pre, sizeof(pre), "vpa%zu-", prefix + i);
		copy_svg(&svgs[i], p, close, pre);
		vpa_buf_puts(&svgs[i], "\n");
		p = close;
	}
	return 0;
}

int vpa_plot_svgs(const struct vpa_json *const *figs, size_t n, size_t prefix,
		  struct vpa_buf *svgs, struct vpa_err *err)
{
	if (n == 0)
		return 0;
	struct vpa_buf s, out;
	vpa_buf_init(&s);
	vpa_buf_init(&out);
	int rc = vpa_plot_svgs_script(figs, n, &s, err);
	if (!rc)
		rc = vpa_gnuplot_run(s.data, s.len, &out, err);
	if (!rc)
		rc = vpa_plot_svgs_split(&out, n, prefix, svgs, err);
	vpa_buf_release(&s);
	vpa_buf_release(&out);
	return rc;
}

int vpa_plot_files(const struct vpa_json *fig, const char *base, struct vpa_err *err)
{
	struct vpa_buf svg, pdf, path;
	vpa_buf_init(&svg);
	vpa_buf_init(&pdf);
	vpa_buf_init(&path);
	struct vpa_atomic a[2] = {{0}, {0}};
	int rc = vpa_plot_render(fig, "svg", &svg, err);
	if (!rc)
		rc = vpa_plot_render(fig, "pdf", &pdf, err);
	const struct vpa_buf *data[2] = {&svg, &pdf};
	static const char *ext[2] = {".svg", ".pdf"};
	for (int k = 0; k < 2 && !rc; k++) {
		path.len = 0;
		vpa_buf_puts(&path, base);
		vpa_buf_puts(&path, ext[k]);
		FILE *f = vpa_atomic_open(path.data, &a[k], err);
		if (!f) {
			rc = VPA_EIO;
			break;
		}
		if (data[k]->len && fwrite(data[k]->data, 1, data[k]->len, f) != data[k]->len) {
			struct vpa_loc loc = {path.data, 0, 0};
			rc = vpa_fail(err, VPA_EIO, &loc, "write error: %s", strerror(errno));
		}
	}
	/* Commit both or neither (an aborted or committed vpa_atomic has path NULL). */
	for (int k = 0; k < 2; k++) {
		if (!a[k].path)
			continue;
		if (rc)
			vpa_atomic_abort(&a[k]);
		else
			rc = vpa_atomic_commit(&a[k], err);
	}
	vpa_buf_release(&svg);
	vpa_buf_release(&pdf);
	vpa_buf_release(&path);
	return rc;
}
