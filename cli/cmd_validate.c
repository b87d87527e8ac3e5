/* cli/cmd_validate.c - `vpaudit validate SCENARIO.yaml`: silent and 0 when valid. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "scenarios/scenario.h"

static const char usage[] =
	"usage: vpaudit validate SCENARIO.yaml [--allow-writes-outside]\n\n"
	"Checks the scenario completely (keys, types, ranges, ids, kinds, links between\n"
	"attacks and targets, import files, gates, sweep) without running anything.\n"
	"Every recording of the data directories a run would read is opened at its\n"
	"header (exists, readable, samples, the front-end's rate, the channel, segments\n"
	"inside it); such an error names its wav.scp (or segments) line.\n"
	"Prints nothing and exits 0 when it is valid; otherwise prints the first error\n"
	"as FILE:LINE:COL: message, with the offending line, and exits 1.\n\n"
	"A path the scenario writes (`dump_*`, `pseudo_out`) must lie inside its output\n"
	"folder (`output:`, else out/NAME), and `output:` below the current folder, unless\n"
	"--allow-writes-outside is given, as `vpaudit run` checks (there -o sets the folder).\n";

int cmd_validate(int argc, char **argv)
{
	enum { O_ALLOW_OUT = 256 };
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
					     {"allow-writes-outside", no_argument, NULL, O_ALLOW_OUT},
					     {0}};
	int c, allow_outside = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (c == O_ALLOW_OUT) {
			allow_outside = 1;
			continue;
		}
		return cli_getopt_error("validate", c, argv);
	}
	if (argc - optind != 1)
		return cli_usage_error("validate", argc - optind ? "expected one scenario file"
								: "missing the scenario file");
	struct vpa_err err;
	struct vpa_scenario *s = NULL;
	vpa_err_init(&err);
	if (vpa_scenario_load(argv[optind], &s, &err) ||
	    (!allow_outside && vpa_scenario_check_writes(s, NULL, &err))) {
		vpa_scenario_free(s);
		return cli_scenario_error(&err);
	}
	vpa_scenario_free(s);
	return 0;
}
