/*
 * cli/cmd_run.c - `vpaudit run SCENARIO.yaml [-o OUTDIR] [--seed N]
 * [--threads N] [--no-plots] [--quiet]`: load and validate, build targets,
 * run attacks, evaluate gates, write the report.  Nothing is written when an
 * error happens before the report (the report files are written atomically).
 * Exit: 0 all gates hold, 1 error, 2 usage, 3 a gate failed.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/inputs.h"
#include "cli/cli.h"
#include "core/la.h"
#include "reports/report.h"
#include "scenarios/scenario.h"

static const char usage[] =
	"usage: vpaudit run SCENARIO.yaml [-o OUTDIR] [--seed N] [--threads N] [--no-plots] [--quiet]\n\n"
	"  -o, --output OUTDIR  write the report here (default: the scenario's `output:`,\n"
	"                       else out/NAME/ in the current directory)\n"
	"  --seed N             override the scenario's seed (an integer >= 0)\n"
	"  --threads N          threads for vpaudit's own parallel loops (default: the number\n"
	"                       of online CPUs); OpenBLAS runs single-threaded, so results\n"
	"                       are identical for every N\n"
	"  --no-plots           no figures in the HTML, no PDF (gnuplot not needed)\n"
	"  --quiet              no progress lines and no gate summary on stdout\n\n"
	"Writes OUTDIR/results.json, report.html, report.pdf and junit.xml (the\n"
	"scenario's `report:` list), prints one PASS/FAIL line per gate and exits\n"
	"0 when all gates hold, 1 on error, 2 on usage errors, 3 when a gate fails.\n";

static int scenario_error(const struct vpa_err *err)
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

int cmd_run(int argc, char **argv)
{
	enum { O_SEED = 256, O_THREADS, O_NOPLOTS, O_QUIET };
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"seed", required_argument, NULL, O_SEED},
		{"threads", required_argument, NULL, O_THREADS},
		{"no-plots", no_argument, NULL, O_NOPLOTS},
		{"quiet", no_argument, NULL, O_QUIET},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *outdir = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct vpa_run_opts ro = {0, 0, ncpu < 1 ? 1 : ncpu > 256 ? 256 : (int)ncpu, 0};
	int quiet = 0, c;
	unsigned long v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return cli_usage_error("run", "-o needs a folder");
			outdir = optarg;
			break;
		case O_SEED:
			if (cli_ulong("--seed", optarg, 0, 9007199254740991UL, &v))
				return 2;
			ro.seed = v;
			ro.seed_set = 1;
			break;
		case O_THREADS:
			if (cli_ulong("--threads", optarg, 1, 256, &v))
				return 2;
			ro.threads = (int)v;
			break;
		case O_NOPLOTS:
			ro.no_plots = 1;
			break;
		case O_QUIET:
			quiet = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_usage_error("run", "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("run", argc - optind ? "expected one scenario file"
							   : "missing the scenario file");
	vpa_quiet = quiet;
	/* OpenBLAS stays single-threaded: its multi-threaded kernels round
	 * differently from the single-threaded ones, and a model trained with
	 * other bits is another model.  --threads parallelises vpaudit's own
	 * loops (targets, score sets, models), which are bit-identical for every
	 * thread count (DESIGN.md: results do not depend on threads). */
	vpa_la_set_threads(1);

	struct vpa_err err;
	struct vpa_scenario *s = NULL;
	struct vpa_json *results = NULL, *gates = NULL;
	char *def_out = NULL;
	int rc = 0, gate_rc = 0;
	vpa_err_init(&err);
	double t0 = vpa_now();
	vpa_inputs_begin(); /* results.json lists every file read (core/inputs.h) */
	if (vpa_scenario_load(argv[optind], &s, &err)) {
		rc = scenario_error(&err);
		goto out;
	}
	double t_load = vpa_now() - t0;
	if (vpa_scenario_run(s, &ro, &results, &err)) {
		rc = scenario_error(&err);
		goto out;
	}
	struct vpa_json *stages = vpa_json_get(vpa_json_get(results, "wall_time"), "stages");
	vpa_json_set_num(stages, "load", t_load);
	gates = vpa_scenario_gates(s);
	gate_rc = vpa_gates_evaluate(results, gates, &err);
	if (gate_rc && gate_rc != VPA_EGATE) {
		rc = scenario_error(&err);
		goto out;
	}
	if (!outdir) {
		if (s->output) {
			outdir = s->output;
		} else {
			struct vpa_buf b;
			vpa_buf_init(&b);
			vpa_buf_printf(&b, "out/%s", s->name);
			def_out = b.data;
			outdir = def_out;
		}
	}
	/* the report's own duration cannot be inside the file it writes */
	vpa_json_set(stages, "report", vpa_json_null());
	vpa_json_set_num(vpa_json_get(results, "wall_time"), "total", vpa_now() - t0);
	if (vpa_report_write(results, outdir, s->formats, ro.no_plots, &err)) {
		rc = cli_error(&err);
		goto out;
	}
	const struct vpa_json *g = vpa_json_get(results, "gates");
	for (size_t i = 0; g && i < g->n; i++) {
		const struct vpa_json *pj = vpa_json_get(g->items[i], "pass");
		int pass = pj && pj->type == VPA_JSON_BOOL && pj->boolean;
		const char *msg = vpa_json_get_str(g->items[i], "message");
		if (!quiet)
			printf("%s %s\n", pass ? "PASS" : "FAIL", msg ? msg : "");
		if (!pass)
			fprintf(stderr, "vpaudit: gate failed: %s\n", msg ? msg : "");
	}
	if (!quiet)
		printf("report: %s\n", outdir);
	rc = gate_rc == VPA_EGATE ? 3 : 0;
out:
	free(def_out);
	vpa_json_free(gates);
	vpa_json_free(results);
	vpa_scenario_free(s);
	return rc;
}
