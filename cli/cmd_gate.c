/*
 * cli/cmd_gate.c - `vpaudit gate RESULTS.json [--scenario S.yaml]
 * [--baseline OLD.json]`: evaluate gates on a results file (those stored in
 * it, or the scenario's) and, with --baseline, flag every metric that moved
 * in its leaky direction by more than the tolerance.  One line per gate
 * ("PASS ..." / "FAIL ...") and per flagged metric; exit 3 when one fails.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "reports/report.h"
#include "scenarios/scenario.h"

static const char usage[] =
	"usage: vpaudit gate RESULTS.json [--scenario S.yaml] [--baseline OLD.json]\n\n"
	"  --scenario S.yaml    evaluate this scenario's gates (and tolerance) instead of\n"
	"                       those stored in RESULTS.json\n"
	"  --baseline OLD.json  also flag every metric that moved in its leaky direction\n"
	"                       (lower EER/Cllr/minDCF, higher linkability/D_ECE/...) by\n"
	"                       more than the scenario's `tolerance` since OLD.json\n\n"
	"Prints one PASS/FAIL line per gate and per flagged metric; exit 0 when all\n"
	"hold, 3 when one fails, 1 on error, 2 on usage errors.\n";

static struct vpa_json *read_json(const char *path, struct vpa_err *err)
{
	char *buf;
	size_t len;
	if (vpa_read_file(path, &buf, &len, err))
		return NULL;
	struct vpa_json *j = vpa_json_parse(path, buf, len, err);
	free(buf);
	if (j && (j->type != VPA_JSON_OBJ || !vpa_json_get(j, "records"))) {
		struct vpa_loc loc = {path, 0, 0};
		vpa_fail(err, VPA_EINPUT, &loc, "not a vpaudit results file (no \"records\")");
		vpa_json_free(j);
		return NULL;
	}
	return j;
}

int cmd_gate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"scenario", required_argument, NULL, 's'},
		{"baseline", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *scn = NULL, *base = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			scn = optarg;
			break;
		case 'b':
			base = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_usage_error("gate", "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("gate", argc - optind ? "expected one results file"
							    : "missing the results file");
	struct vpa_err err;
	struct vpa_json *results = NULL, *old = NULL, *gates = NULL, *flags = NULL;
	struct vpa_scenario *s = NULL;
	int rc = 0, failed = 0;
	vpa_err_init(&err);
	if (!(results = read_json(argv[optind], &err))) {
		rc = cli_error(&err);
		goto out;
	}
	if (base && !(old = read_json(base, &err))) {
		rc = cli_error(&err);
		goto out;
	}
	double tol = vpa_json_get_num(results, "tolerance", NAN);
	if (scn) {
		if (vpa_scenario_load(scn, &s, &err)) {
			rc = cli_error(&err);
			struct vpa_buf b;
			vpa_buf_init(&b);
			vpa_error_context(err.msg, &b);
			if (b.len)
				fputs(b.data, stderr);
			vpa_buf_release(&b);
			goto out;
		}
		gates = vpa_scenario_gates(s);
		tol = s->tolerance;
	} else {
		const struct vpa_json *g = vpa_json_get(results, "gates");
		gates = g ? vpa_json_clone(g) : vpa_json_arr();
	}
	int grc = vpa_gates_evaluate(results, gates, &err);
	if (grc && grc != VPA_EGATE) {
		rc = cli_error(&err);
		goto out;
	}
	const struct vpa_json *ev = vpa_json_get(results, "gates");
	for (size_t i = 0; ev && i < ev->n; i++) {
		const struct vpa_json *pj = vpa_json_get(ev->items[i], "pass");
		int pass = pj && pj->type == VPA_JSON_BOOL && pj->boolean;
		const char *msg = vpa_json_get_str(ev->items[i], "message");
		printf("%s %s\n", pass ? "PASS" : "FAIL", msg ? msg : "");
		failed += !pass;
	}
	if (old) {
		if (!(tol >= 0))
			tol = 0;
		int brc = vpa_gates_baseline(results, old, tol, &flags, &err);
		if (brc && brc != VPA_EGATE) {
			rc = cli_error(&err);
			goto out;
		}
		for (size_t i = 0; flags && i < flags->n; i++)
			printf("FAIL baseline: %s\n", vpa_json_get_str(flags->items[i], "message"));
		if (flags && !flags->n)
			printf("PASS baseline: no metric moved in its leaky direction by more than %g\n",
			       tol);
		failed += flags ? (int)flags->n : 0;
	}
	rc = failed ? 3 : 0;
out:
	vpa_json_free(flags);
	vpa_json_free(gates);
	vpa_json_free(old);
	vpa_json_free(results);
	vpa_scenario_free(s);
	return rc;
}
