/*
 * reports/render.c - report.html and report.pdf from a results DOM, the
 * entry points write.c calls (reports/report.h, reports/table.h): the
 * figures drawn by one gnuplot run (plot.c), the document built once
 * (doc_build.c), then laid out by the renderers below, html.c and pdf_doc.c
 * (in a child process, pdf_child.c).  Split from html.c and pdf_doc.c so
 * that the renderers only lay out a document and never call back up.
 */
#include <stdlib.h>

#include "reports/doc.h"

/* ---- report.html ---- */

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
	struct vpa_doc d;
	vpa_doc_build(r, &d);
	vpa_html_doc(&d, no_plots ? NULL : svgs, vpa_count_figures(r), b);
	vpa_doc_release(&d);
}

/* ---- report.pdf, and both sharing one gnuplot run ---- */

int vpa_report_pdf(const struct vpa_json *r, struct vpa_buf *out, struct vpa_err *err)
{
	size_t n_figs = vpa_count_figures(r);
	const struct vpa_json **figs = xcalloc(n_figs ? n_figs : 1, sizeof(*figs));
	struct vpa_buf *svgs = xcalloc(n_figs ? n_figs : 1, sizeof(*svgs));
	vpa_collect_figures(r, figs);
	int rc = vpa_plot_svgs(figs, n_figs, 0, svgs, err);
	if (!rc) {
		struct vpa_doc d;
		vpa_doc_build(r, &d);
		rc = vpa_pdf_doc_child(&d, svgs, n_figs, out, err);
		vpa_doc_release(&d);
	}
	for (size_t i = 0; i < n_figs; i++)
		vpa_buf_release(&svgs[i]);
	free(svgs);
	free(figs);
	return rc;
}

int vpa_report_html_pdf(const struct vpa_json *r, struct vpa_buf *html, struct vpa_buf *pdf,
			struct vpa_err *err)
{
	size_t n_figs = vpa_count_figures(r);
	const struct vpa_json **figs = xcalloc(n_figs ? n_figs : 1, sizeof(*figs));
	struct vpa_buf *svgs = xcalloc(n_figs ? n_figs : 1, sizeof(*svgs));
	vpa_collect_figures(r, figs);
	/* one gnuplot run: the same SVGs are inlined in the HTML and drawn in the PDF */
	int rc = vpa_plot_svgs(figs, n_figs, 0, svgs, err);
	if (!rc) {
		struct vpa_doc d;
		vpa_doc_build(r, &d);
		vpa_html_doc(&d, svgs, n_figs, html);
		rc = vpa_pdf_doc_child(&d, svgs, n_figs, pdf, err);
		vpa_doc_release(&d);
	}
	for (size_t i = 0; i < n_figs; i++)
		vpa_buf_release(&svgs[i]);
	free(svgs);
	free(figs);
	return rc;
}
