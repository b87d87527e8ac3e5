/*
 * tests/unit/test_pdf_child.c - reports/pdf_child.c: report.pdf typeset in a
 * forked child gives the same bytes and the same errors as in-process, and
 * the child's death when memory runs out is one error, not an abort of the
 * caller (issue 26 item 5).  Uses tests/golden/reports/results.json.
 */
#include <stdlib.h>

#include "harness.h"
#include "base/json.h"
#include "reports/doc.h"
#include "reports/report.h"

#define GOLDEN "tests/golden/reports/results.json"

static struct vpa_json *golden(void)
{
	struct vpa_err err;
	char *text = NULL;
	size_t len = 0;
	vpa_err_init(&err);
	if (vpa_read_file(GOLDEN, &text, &len, &err)) {
		printf("#   %s\n", err.msg);
		return NULL;
	}
	struct vpa_json *r = vpa_json_parse(GOLDEN, text, len, &err);
	if (!r)
		printf("#   %s\n", err.msg);
	free(text);
	return r;
}

/* The child's PDF is byte for byte the in-process one (no figures). */
static void test_same_bytes(void)
{
	struct vpa_json *g = golden();
	CHECK(g != NULL);
	if (!g)
		return;
	struct vpa_doc d;
	vpa_doc_build(g, &d);
	struct vpa_buf a, b;
	struct vpa_err ea, eb;
	vpa_buf_init(&a);
	vpa_buf_init(&b);
	vpa_err_init(&ea);
	vpa_err_init(&eb);
	CHECK(vpa_pdf_doc(&d, NULL, 0, &a, &ea) == 0);
	CHECK(vpa_pdf_doc_child(&d, NULL, 0, &b, &eb) == 0);
	if (eb.status)
		printf("#   %s\n", eb.msg);
	CHECK(a.len > 1000 && a.len == b.len && !memcmp(a.data, b.data, a.len));
	vpa_buf_release(&a);
	vpa_buf_release(&b);
	vpa_doc_release(&d);
	vpa_json_free(g);
}

/* An error of vpa_pdf_doc in the child is the same error (status and text). */
static void test_same_error(void)
{
	struct vpa_json *g = golden();
	if (!g)
		return;
	struct vpa_doc d;
	vpa_doc_build(g, &d);
	struct vpa_buf svg, a, b;
	vpa_buf_init(&svg);
	vpa_buf_puts(&svg, "<svg this is not");
	vpa_buf_init(&a);
	vpa_buf_init(&b);
	struct vpa_err ea, eb;
	vpa_err_init(&ea);
	vpa_err_init(&eb);
	int ra = vpa_pdf_doc(&d, &svg, 1, &a, &ea);
	int rb = vpa_pdf_doc_child(&d, &svg, 1, &b, &eb);
	CHECK(ra == VPA_EIO && rb == ra);
	CHECK(eb.status == ea.status && !strcmp(eb.msg, ea.msg));
	CHECK(!strncmp(eb.msg, "report.pdf: figure 1: SVG not readable", 38));
	CHECK(b.len == 0);
	vpa_buf_release(&svg);
	vpa_buf_release(&a);
	vpa_buf_release(&b);
	vpa_doc_release(&d);
	vpa_json_free(g);
}

/*
 * No room to grow (VPAUDIT_TEST_PDF_HEADROOM_MB=0): the child dies in
 * whichever allocator fails first (ours, GLib's, librsvg's); this process
 * gets one error and carries on.
 */
static void test_out_of_memory(void)
{
	struct vpa_json *g = golden();
	if (!g)
		return;
	struct vpa_doc d;
	vpa_doc_build(g, &d);
	/* more than the memory the earlier tests freed: a paragraph of 8 MB */
	char *big = xmalloc(8 << 20);
	for (size_t i = 0; i < (8 << 20) - 1; i++)
		big[i] = i % 7 ? 'x' : ' ';
	big[(8 << 20) - 1] = '\0';
	vpa_doc_para(&d, VPA_P_PLAIN, "%s", big);
	free(big);
	struct vpa_buf b;
	vpa_buf_init(&b);
	struct vpa_err e;
	vpa_err_init(&e);
	setenv("VPAUDIT_TEST_PDF_HEADROOM_MB", "0", 1);
	int rc = vpa_pdf_doc_child(&d, NULL, 0, &b, &e);
	unsetenv("VPAUDIT_TEST_PDF_HEADROOM_MB");
	CHECK(rc != 0 && rc == e.status);
	printf("#   headroom 0: %s\n", e.msg);
	CHECK(!strncmp(e.msg, "out of memory (allocating ", 26) ||
	      !strncmp(e.msg, "report.pdf: the typesetter ", 27));
	CHECK(!strchr(e.msg, '\n'));
	CHECK(b.len == 0);
	vpa_buf_release(&b);
	vpa_doc_release(&d);
	vpa_json_free(g);
}

int main(void)
{
	RUN(test_same_bytes);
	RUN(test_same_error);
	RUN(test_out_of_memory);
	return DONE();
}
