/*
 * tests/unit/report_golden.h - helpers shared by tests/unit/test_report.c and
 * tests/unit/test_report_doc.c: the golden results (tests/golden/reports/
 * results.json, see its README), results parsed from a string, and counting
 * a needle in a text.  Header-only, static inline functions.
 */
#ifndef VPA_REPORT_GOLDEN_H
#define VPA_REPORT_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"

#define GOLDEN "tests/golden/reports/results.json"

static inline struct vpa_json *load_text(const char *name, const char *text, struct vpa_err *err)
{
	return vpa_json_parse(name, text, strlen(text), err);
}

static inline struct vpa_json *golden(void)
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

static inline size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

#endif
