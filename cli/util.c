/* cli/util.c - shared CLI helpers: error printing and strict option parsing. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "cli/cli.h"
#include "base/cpu.h"
#include "reports/report.h"
#include "scenarios/scenario.h"


static void prefix(void)
{
	if (vpa_cmd)
		fprintf(stderr, "vpaudit %s: error: ", vpa_cmd);
	else
		fputs("vpaudit: error: ", stderr);
}

int cli_error(const struct vpa_err *err)
{
	prefix();
	fprintf(stderr, "%s\n", err->msg[0] ? err->msg : "unknown error");
	return vpa_exit_code(err->status ? err->status : VPA_EINPUT);
}

void cli_errorf(const char *fmt, ...)
{
	va_list ap;
	prefix();
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
			cli_errorf("%s must be a number %s %g, got '%s'", opt, open_lo ? ">" : ">=", lo,
				   s);
		else
			cli_errorf("%s must be a number in %s%g, %g], got '%s'", opt,
				   open_lo ? "(" : "[", lo, hi, s);
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
		cli_errorf("%s must be an integer in [%lu, %lu], got '%s'", opt, lo, hi, s);
		return 1;
	}
	*out = x;
	return 0;
}

int cli_getopt_error(const char *cmd, int c, char **argv)
{
	extern int optind, optopt;
	const char *arg = argv[optind - 1];
	if (c == ':')
		return cli_usage_error(cmd, "option '%s' needs a value", arg);
	if (optopt && !(arg[0] == '-' && arg[1] == '-'))
		return cli_usage_error(cmd, "unknown option '-%c'", optopt);
	return cli_usage_error(cmd, "unknown option '%s'", arg);
}

struct vpa_json *cli_read_results(const char *path, struct vpa_err *err)
{
	char *buf;
	size_t len;
	if (vpa_read_file(path, &buf, &len, err))
		return NULL;
	struct vpa_json *j = vpa_json_parse(path, buf, len, err);
	free(buf);
	if (j && vpa_results_check(j, path, err)) { /* the check `vpaudit report` makes too */
		vpa_json_free(j);
		return NULL;
	}
	return j;
}

void cli_echo_line(const char *line)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_puts(&b, "  ");
	vpa_buf_add_shown(&b, line, strlen(line));
	fprintf(stderr, "%s\n", vpa_buf_str(&b));
	vpa_buf_release(&b);
}

int cli_scenario_error(const struct vpa_err *err)
{
	int rc = cli_error(err);
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_error_context(err->msg, &b);
	if (b.len)
		fputs(b.data, stderr);
	vpa_buf_release(&b);
	return rc;
}

int cli_write_file(const char *path, const char *data, size_t len, struct vpa_err *err)
{
	struct vpa_atomic a;
	memset(&a, 0, sizeof(a));
	vpa_tmp_clean_stale(path);
	FILE *f = vpa_atomic_open(path, &a, err);
	if (!f)
		return VPA_EIO;
	if ((len && fwrite(data, 1, len, f) != len) || fflush(f) != 0) {
		struct vpa_loc loc = {path, 0, 0};
		int rc = vpa_fail(err, VPA_EIO, &loc, "cannot write: %s", strerror(errno));
		vpa_atomic_abort(&a);
		return rc;
	}
	return vpa_atomic_commit(&a, err);
}

void cli_warn_baseline(const struct vpa_json *summary)
{
	const struct vpa_json *m = vpa_json_get(summary, "mismatches");
	const char *file = vpa_json_get_str(summary, "file");
	for (size_t i = 0; m && m->type == VPA_JSON_ARR && i < m->n; i++)
		if (m->items[i]->type == VPA_JSON_STR)
			vpa_warn("%s%s%s (--strict makes this an error)", file ? file : "",
				 file ? ": " : "", m->items[i]->str);
}

void cli_print_verdicts(const struct vpa_json *results)
{
	const struct vpa_json *g = vpa_json_get(results, "gates");
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (size_t i = 0; g && g->type == VPA_JSON_ARR && i < g->n; i++) {
		b.len = 0;
		vpa_gate_line(&b, g->items[i]);
		printf("%s\n", vpa_buf_str(&b));
	}
	vpa_buf_release(&b);
	const struct vpa_json *l = vpa_json_get(vpa_json_get(results, "baseline"), "lines");
	for (size_t i = 0; l && l->type == VPA_JSON_ARR && i < l->n; i++) {
		const char *kind = vpa_json_get_str(l->items[i], "kind");
		const char *text = vpa_json_get_str(l->items[i], "text");
		printf("%s %s\n", kind ? kind : "?", text ? text : "");
	}
}

int cli_parse_metrics(const char *cmd, const char *arg, struct cli_metrics *out)
{
	memset(out, 0, sizeof(*out));
	const char *p = arg;
	for (;;) {
		size_t n = strcspn(p, ",");
		char *name = xmalloc(n + 1);
		memcpy(name, p, n);
		name[n] = '\0';
		if (!vpa_metric_direction(name)) {
			struct vpa_buf all;
			vpa_buf_init(&all);
			for (size_t i = 0; vpa_compared_metric(i); i++)
				vpa_buf_printf(&all, "%s%s", i ? ", " : "", vpa_compared_metric(i));
			cli_usage_error(cmd, "--metrics: '%s' is not a compared metric (one of %s)", name,
					all.data);
			vpa_buf_release(&all);
			free(name);
			cli_metrics_release(out);
			return 2;
		}
		out->names = xrealloc(out->names, (out->n + 1) * sizeof(*out->names));
		out->names[out->n++] = name;
		if (!p[n])
			break;
		p += n + 1;
	}
	return 0;
}

void cli_metrics_release(struct cli_metrics *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->names[i]);
	free(m->names);
	memset(m, 0, sizeof(*m));
}

int cli_portable(int argc, char **argv, struct vpa_err *err)
{
	if (vpa_portable())
		return 0;
	/* the program's own argv[0] (glibc), then the subcommand's arguments */
	char **av = xmalloc(((size_t)argc + 2) * sizeof(*av));
	av[0] = program_invocation_name;
	for (int i = 0; i < argc; i++)
		av[i + 1] = argv[i];
	av[argc + 1] = NULL;
	int rc = vpa_portable_enter(av, err);
	free(av);
	return rc;
}
