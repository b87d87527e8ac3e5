/* cli/util.c - shared CLI helpers: error printing and strict option parsing. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int cli_error(const struct vpa_err *err)
{
	fprintf(stderr, "vpaudit: error: %s\n", err->msg[0] ? err->msg : "unknown error");
	return vpa_exit_code(err->status ? err->status : VPA_EINPUT);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "vpaudit %s: error: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'vpaudit %s --help')\n", cmd);
	return 2;
}

int cli_double(const char *opt, const char *s, double lo, double hi, int open_lo, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(x) || x < lo || x > hi ||
	    (open_lo && x <= lo)) {
		if (isinf(hi))
			fprintf(stderr, "vpaudit: error: %s must be a number %s %g, got '%s'\n", opt,
				open_lo ? ">" : ">=", lo, s);
		else
			fprintf(stderr, "vpaudit: error: %s must be a number in %s%g, %g], got '%s'\n",
				opt, open_lo ? "(" : "[", lo, hi, s);
		return 1;
	}
	*out = x;
	return 0;
}

int cli_ulong(const char *opt, const char *s, unsigned long lo, unsigned long hi,
	      unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long x = strtoul(s, &end, 10);
	if (end == s || *end || errno == ERANGE || *s == '-' || x < lo || x > hi) {
		fprintf(stderr, "vpaudit: error: %s must be an integer in [%lu, %lu], got '%s'\n",
			opt, lo, hi, s);
		return 1;
	}
	*out = x;
	return 0;
}
