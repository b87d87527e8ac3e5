/*
 * cli/cmd_report.c - `vpaudit report RESULTS.json [-o DIR] [--no-plots]`:
 * re-render report.html, report.pdf, junit.xml and the VoicePrivacy text
 * files (result_for_rank.txt, vpc2022_results.txt) from a results file
 * without re-running anything.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "base/json.h"
#include "reports/report.h"

static const char usage_text[] =
	"usage: vpaudit report RESULTS.json [-o DIR] [--no-plots]\n"
	"\n"
	"Re-renders report.html, report.pdf and junit.xml from a results file written by\n"
	"'vpaudit run' (schema vpaudit.results/1), without re-running anything; with\n"
	"linkage records of anonymised speech also result_for_rank.txt and\n"
	"vpc2022_results.txt (the VoicePrivacy text formats).\n"
	"\n"
	"options:\n"
	"  -o, --output DIR   write the files into DIR (created if missing; default: the\n"
	"                     folder of RESULTS.json); results.json is copied there too\n"
	"                     when DIR is another folder\n"
	"  --no-plots         no figures: the HTML gets a note instead of SVG and the PDF\n"
	"                     is not written (gnuplot is then not needed)\n"
	"  -h, --help         this text\n"
	"\n"
	"Exit status: 0 ok and all gates hold, 1 error, 2 usage, 3 the results record a\n"
	"failed gate.\n";

/* The folder part of path ("." when none); caller frees. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* 1 when a and b name the same existing folder. */
static int same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	if (!realpath(a, ra) || !realpath(b, rb))
		return 0;
	return !strcmp(ra, rb);
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"no-plots", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *outdir = NULL;
	int no_plots = 0, c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return cli_usage_error("report", "-o needs a folder name");
			outdir = optarg;
			break;
		case 'P':
			no_plots = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cli_usage_error("report", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return cli_usage_error("report", "unknown option '-%c'", optopt);
			return cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("report", "missing RESULTS.json");
	if (optind + 1 < argc)
		return cli_usage_error("report", "unexpected argument '%s'", argv[optind + 1]);
	const char *path = argv[optind];

	struct vpa_err err;
	vpa_err_init(&err);
	char *text = NULL, *src_dir = dir_of(path);
	size_t len = 0;
	struct vpa_json *results = NULL;
	int rc = vpa_read_file(path, &text, &len, &err);
	if (!rc) {
		results = vpa_json_parse(path, text, len, &err);
		if (!results)
			rc = err.status ? err.status : VPA_EINPUT;
	}
	if (!rc)
		rc = vpa_report_check(results, path, &err);
	unsigned formats = VPA_REPORT_HTML | VPA_REPORT_PDF | VPA_REPORT_JUNIT | VPA_REPORT_VPC;
	if (!outdir)
		outdir = src_dir;
	else if (!same_dir(outdir, src_dir))
		formats |= VPA_REPORT_JSON;
	if (!rc)
		rc = vpa_report_write(results, outdir, formats, no_plots, &err);
	int status;
	if (rc) {
		status = cli_error(&err);
	} else {
		const char *st = vpa_json_get_str(results, "status");
		status = st && !strcmp(st, "fail") ? vpa_exit_code(VPA_EGATE) : 0;
	}
	vpa_json_free(results);
	free(text);
	free(src_dir);
	return status;
}
