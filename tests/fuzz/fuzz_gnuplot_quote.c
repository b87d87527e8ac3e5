/*
 * tests/fuzz/fuzz_gnuplot_quote.c - vpa_gnuplot_quote and vpa_gnuplot_quote_tic
 * on arbitrary text (the input up to its first NUL).  The result is read back
 * by a model of gnuplot 5.4's scanner (checked against gnuplot itself by
 * tests/unit/test_plot.c, test_quote_gnuplot_roundtrip): pieces joined by
 * '.', each either sprintf('%c',39) or a single-quoted string in which a
 * quote right after the opening quote or after an escaped '' ends the string,
 * and '' after an ordinary character is one quote.  The expression must be
 * read completely, be one line without a double quote outside its pieces,
 * and give back the text with control characters as spaces (and, for a tic
 * label, every % doubled).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char QUOTE_EXPR[] = "sprintf('%c',39)";

/* Decode expr as gnuplot would; NULL when gnuplot would not read it as one string. */
static char *gnuplot_read(const char *expr)
{
	size_t n = strlen(expr), k = 0;
	char *out = malloc(n + 1);
	const char *p = expr;
	int first = 1;
	if (*p == '\0')
		goto bad;
	while (*p) {
		if (!first) {
			if (*p != '.')
				goto bad;
			p++;
		}
		first = 0;
		if (!strncmp(p, QUOTE_EXPR, sizeof(QUOTE_EXPR) - 1)) {
			out[k++] = '\'';
			p += sizeof(QUOTE_EXPR) - 1;
			continue;
		}
		if (*p != '\'')
			goto bad;
		p++;
		int can_escape = 0; /* a quote here is '' only after an ordinary character */
		for (;;) {
			if (*p == '\0' || *p == '\n')
				goto bad; /* unterminated */
			if (*p == '\'') {
				if (can_escape && p[1] == '\'') {
					out[k++] = '\'';
					p += 2;
					can_escape = 0;
					continue;
				}
				p++;
				break;
			}
			out[k++] = *p++;
			can_escape = 1;
		}
	}
	out[k] = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

static void check(const char *text, int tic)
{
	struct vpa_buf b, want;
	vpa_buf_init(&b);
	vpa_buf_init(&want);
	if (tic)
		vpa_gnuplot_quote_tic(&b, text);
	else
		vpa_gnuplot_quote(&b, text);
	for (const char *s = text; *s; s++) {
		unsigned char c = (unsigned char)*s;
		vpa_buf_add(&want, c < 0x20 || c == 0x7f ? " " : s, 1);
		if (tic && c == '%')
			vpa_buf_add(&want, s, 1);
	}
	const char *expr = vpa_buf_str(&b);
	for (const char *s = expr; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			abort(); /* one line, nothing gnuplot could read as a line end */
	char *got = gnuplot_read(expr);
	if (!got || strcmp(got, vpa_buf_str(&want)))
		abort();
	/* Outside the quoted pieces there is only '.' and sprintf('%c',39): no " at all. */
	int in = 0;
	for (const char *s = expr; *s; s++) {
		if (!in && !strncmp(s, QUOTE_EXPR, sizeof(QUOTE_EXPR) - 1)) {
			s += sizeof(QUOTE_EXPR) - 2;
			continue;
		}
		if (*s == '\'') {
			if (in && s[1] == '\'') {
				s++;
				continue;
			}
			in = !in;
		} else if (!in && *s != '.') {
			abort();
		}
	}
	free(got);
	vpa_buf_release(&b);
	vpa_buf_release(&want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	check(text, 0);
	check(text, 1);
	free(text);
	return 0;
}
