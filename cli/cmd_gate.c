/*
 * cli/cmd_gate.c - `vpaudit gate RESULTS.json [--scenario S.yaml]
 * [--baseline OLD.json [--tolerance X] [--metrics a,b] [--significant]
 * [--strict]] [--junit FILE]`: evaluate gates on a results file (those
 * stored in it, or the scenario's) and, with --baseline, compare it with an
 * older results file.  One line per gate ("PASS ..." / "FAIL ...") and one
 * per baseline finding (BASELINE / UNMATCHED / REGRESSION / STABLE), a
 * warning per difference between the two audits (reports/baseline_match.c);
 * exit 3 when one fails.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "reports/report.h"
#include "scenarios/scenario.h"

static const char usage[] =
	"usage: vpaudit gate RESULTS.json [--scenario S.yaml] [--baseline OLD.json [--tolerance X]\n"
	"                    [--metrics M1,M2] [--significant] [--strict]] [--junit FILE]\n\n"
	"  --scenario S.yaml    evaluate this scenario's gates (and tolerances) instead of\n"
	"                       those stored in RESULTS.json\n"
	"  --baseline OLD.json  also compare with OLD.json: records are matched on (attack, sub,\n"
	"                       layer, sweep); prints \"matched K of N records (M in the\n"
	"                       baseline)\", lists records on one side only (UNMATCHED: one\n"
	"                       only in the baseline fails, one only in the results is new),\n"
	"                       and flags every metric that moved in its leaky direction (lower\n"
	"                       EER/Cllr/minDCF, higher linkability/D_ECE/...) by more than its\n"
	"                       tolerance (REGRESSION); a record without one is STABLE.  No\n"
	"                       record in common is an error (exit 1).  A baseline of another\n"
	"                       scenario name, set of targets, seed or input files (SHA-256)\n"
	"                       is a warning\n"
	"  --tolerance X        the tolerance (>= 0) instead of the scenario's `tolerance:` and\n"
	"                       `tolerances:` (default 0.01): X for fractions (EER,\n"
	"                       linkability, ...), X times the unit's factor for the others\n"
	"                       (bits x2, bits of exposure x10, log10 LR x10, ranks x100);\n"
	"                       0 makes every comparison exact\n"
	"  --metrics M1,M2      compare only these metrics (e.g. eer,linkability,zebra.dece)\n"
	"  --significant        a move of a metric with bootstrap intervals in both files counts\n"
	"                       only when it also exceeds sqrt(h_old^2 + h_new^2), the two\n"
	"                       intervals' half-widths on the sides facing each other; the\n"
	"                       others (no interval in both files: all but eer, cllr_min and\n"
	"                       linkability) are compared on the tolerance alone, and a\n"
	"                       'BASELINE --significant:' line names both groups\n"
	"  --strict             a record only in the results fails too, and a baseline of\n"
	"                       another audit (the warnings above) is an error (exit 1)\n"
	"  --junit FILE         also write FILE: JUnit XML, one testcase per gate, per\n"
	"                       baseline comparison (passing ones with the measured value in\n"
	"                       <system-out>) and per attack no gate checks (skipped)\n\n"
	"Exit 0 when all hold, 3 when a gate or a baseline check fails, 1 on error,\n"
	"2 on usage errors.\n";

int cmd_gate(int argc, char **argv)
{
	enum { O_TOL = 256, O_METRICS, O_SIG, O_STRICT, O_JUNIT };
	static const struct option opts[] = {
		{"scenario", required_argument, NULL, 's'},
		{"baseline", required_argument, NULL, 'b'},
		{"tolerance", required_argument, NULL, O_TOL},
		{"metrics", required_argument, NULL, O_METRICS},
		{"significant", no_argument, NULL, O_SIG},
		{"strict", no_argument, NULL, O_STRICT},
		{"junit", required_argument, NULL, O_JUNIT},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *scn = NULL, *base = NULL, *junit = NULL, *metrics_arg = NULL;
	double tol_opt = NAN;
	int significant = 0, strict = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			scn = optarg;
			break;
		case 'b':
			base = optarg;
			break;
		case O_TOL:
			if (cli_double("--tolerance", optarg, 0, INFINITY, 0, &tol_opt))
				return 2;
			break;
		case O_METRICS:
			metrics_arg = optarg;
			break;
		case O_SIG:
			significant = 1;
			break;
		case O_STRICT:
			strict = 1;
			break;
		case O_JUNIT:
			if (!*optarg)
				return cli_usage_error("gate", "--junit needs a file name");
			junit = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_getopt_error("gate", c, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("gate", argc - optind ? "expected one results file"
							    : "missing the results file");
	if (!base && (metrics_arg || significant || strict || !isnan(tol_opt)))
		return cli_usage_error("gate", "--tolerance, --metrics, --significant and --strict "
					       "need --baseline");
	struct cli_metrics ms = {0};
	if (metrics_arg && cli_parse_metrics("gate", metrics_arg, &ms))
		return 2;
	struct vpa_err err;
	struct vpa_json *results = NULL, *old = NULL, *gates = NULL, *tols = NULL;
	struct vpa_scenario *s = NULL;
	int rc = 0;
	vpa_err_init(&err);
	if (!(results = cli_read_results(argv[optind], &err)) ||
	    (base && !(old = cli_read_results(base, &err)))) {
		rc = cli_error(&err);
		goto out;
	}
	double tol = vpa_json_get_num(results, "tolerance", NAN);
	const struct vpa_json *rt = vpa_json_get(results, "tolerances");
	if (rt && rt->type == VPA_JSON_OBJ)
		tols = vpa_json_clone(rt);
	if (scn) {
		if (vpa_scenario_load(scn, &s, &err)) {
			rc = cli_scenario_error(&err);
			goto out;
		}
		gates = vpa_scenario_gates(s);
		tol = s->tolerance;
		vpa_json_free(tols);
		tols = vpa_scenario_tolerances(s);
	} else {
		const struct vpa_json *g = vpa_json_get(results, "gates");
		gates = g ? vpa_json_clone(g) : vpa_json_arr();
	}
	int grc = vpa_gates_evaluate(results, gates, &err);
	if (grc && grc != VPA_EGATE) {
		rc = cli_error(&err);
		goto out;
	}
	int failed = grc == VPA_EGATE;
	if (old) {
		struct vpa_baseline_opts bo = {base, tol, tols, (const char *const *)ms.names, ms.n,
					       significant, strict};
		if (!isnan(tol_opt)) {
			bo.tolerance = tol_opt;
			bo.tolerances = NULL;
		}
		struct vpa_json *summary = NULL;
		int brc = vpa_gates_baseline(results, old, &bo, &summary, &err);
		if (brc && brc != VPA_EGATE) {
			rc = cli_error(&err);
			goto out;
		}
		cli_warn_baseline(summary);
		vpa_json_set(results, "baseline", summary);
		failed |= brc == VPA_EGATE;
		if (failed)
			vpa_json_set_str(results, "status", "fail");
	}
	if (junit) {
		struct vpa_buf x;
		vpa_buf_init(&x);
		vpa_report_junit(results, &x);
		int wrc = cli_write_file(junit, x.data, x.len, &err);
		vpa_buf_release(&x);
		if (wrc) {
			rc = cli_error(&err);
			goto out;
		}
	}
	cli_print_verdicts(results);
	rc = failed ? 3 : 0;
out:
	cli_metrics_release(&ms);
	vpa_json_free(tols);
	vpa_json_free(gates);
	vpa_json_free(old);
	vpa_json_free(results);
	vpa_scenario_free(s);
	return rc;
}
