/*
 * reports/text.c - the text helpers every layer of reports/ shares, at the
 * bottom (they call nothing else in reports/): escaping for HTML and XML,
 * the number formatting of every table cell and sentence (vpa_report_fmt),
 * percentages, printf into a fresh string, UTF-8 widths.  Split from
 * write.c, table.c, summary.c and doc.c, whose users sit above them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/table.h"

/* ---- escaping and formatting ---- */

void vpa_xml_escape(struct vpa_buf *out, const char *s)
{
	const char *run = s;
	for (; *s; s++) {
		const char *rep = NULL;
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			/* XML 1.0 forbids most control characters, even escaped. */
			if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
				rep = " ";
		}
		if (rep) {
			vpa_buf_add(out, run, (size_t)(s - run));
			vpa_buf_puts(out, rep);
			run = s + 1;
		}
	}
	vpa_buf_add(out, run, (size_t)(s - run));
}

static const char *last_component(const char *key)
{
	const char *dot = strrchr(key, '.');
	return dot ? dot + 1 : key;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

static int is_count_key(const char *k)
{
	return !strcmp(k, "n") || !strncmp(k, "n_", 2) || ends_with(k, "_count") ||
	       !strcmp(k, "count") || !strcmp(k, "reps") || !strcmp(k, "reps_used");
}

static int is_rate_key(const char *k)
{
	static const char *const rates[] = {"eer", "accuracy", "top1", "top5", "tpr", "fpr",
					    "fnr", "tnr", "p_miss", "p_fa"};
	for (size_t i = 0; i < sizeof(rates) / sizeof(*rates); i++)
		if (!strcmp(k, rates[i]))
			return 1;
	if (!strncmp(k, "eer_", 4) && !ends_with(k, "threshold"))
		return 1;
	/* top-k of identification, every k and its spread (top10, topk, topk_min):
	 * all in %, as top1 (issue 25 item 4d) */
	if (!strncmp(k, "top", 3) && (k[3] == 'k' || (k[3] >= '0' && k[3] <= '9')))
		return 1;
	return ends_with(k, "_rate");
}

/* Plain number: integers whole, else at most 4 decimals, else 4 digits. */
static void fmt_plain(struct vpa_buf *out, double x)
{
	if (x == 0)
		x = 0; /* no "-0" */
	double ax = fabs(x);
	if (x == floor(x) && ax < 1e15) {
		vpa_buf_printf(out, "%.0f", x);
		return;
	}
	if (ax >= 1e-3 && ax < 1e6) {
		char tmp[64];
		snprintf(tmp, sizeof(tmp), "%.4f", x);
		char *e = tmp + strlen(tmp);
		while (e[-1] == '0')
			*--e = '\0';
		if (e[-1] == '.')
			*--e = '\0';
		if (!strcmp(tmp, "-0"))
			strcpy(tmp, "0");
		vpa_buf_puts(out, tmp);
		return;
	}
	vpa_buf_printf(out, "%.4g", x);
}

static void fmt_number(struct vpa_buf *out, const char *k, double x)
{
	if (!isfinite(x)) {
		vpa_buf_puts(out, "undefined");
		return;
	}
	if (is_count_key(k) && x == floor(x) && fabs(x) < 1e15) {
		vpa_buf_printf(out, "%.0f", x == 0 ? 0 : x);
		return;
	}
	if (is_rate_key(k)) {
		double p = 100 * x;
		if (p == 0 || fabs(p) >= 0.01)
			vpa_buf_printf(out, "%.2f%%", p == 0 ? 0 : p);
		else
			vpa_buf_printf(out, "%.2g%%", p);
		return;
	}
	fmt_plain(out, x);
}

void vpa_report_fmt(struct vpa_buf *out, const char *key, const struct vpa_json *v)
{
	const char *k = last_component(key);
	if (!v) {
		vpa_buf_puts(out, "undefined");
		return;
	}
	switch (v->type) {
	case VPA_JSON_NULL:
		vpa_buf_puts(out, "undefined");
		break;
	case VPA_JSON_BOOL:
		vpa_buf_puts(out, v->boolean ? "true" : "false");
		break;
	case VPA_JSON_NUM:
		fmt_number(out, k, v->num);
		break;
	case VPA_JSON_STR:
		vpa_buf_puts(out, v->str);
		break;
	case VPA_JSON_ARR:
		if (v->n > 6) {
			vpa_buf_printf(out, "(%zu values)", v->n);
			break;
		}
		vpa_buf_puts(out, "[");
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				vpa_buf_puts(out, ", ");
			vpa_report_fmt(out, key, v->items[i]);
		}
		vpa_buf_puts(out, "]");
		break;
	case VPA_JSON_OBJ:
		vpa_buf_printf(out, "(%zu fields)", v->n);
		break;
	}
}

/* ---- small text helpers ---- */

char *vpa_vfmt(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	char *s = xcalloc((size_t)(n < 0 ? 0 : n) + 1, 1);
	if (n > 0)
		vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

void vpa_put_pct(struct vpa_buf *b, double x)
{
	vpa_buf_printf(b, "%.1f%%", 100 * x);
}

size_t vpa_utf8_width(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}
