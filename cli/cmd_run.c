/*
 * cli/cmd_run.c - `vpaudit run SCENARIO.yaml [-o OUTDIR] [--baseline OLD]
 * [--seed N] [--threads N] [--portable] [--no-plots] [--quiet]`: load and validate, check
 * the output folder, build targets, run attacks, evaluate gates and the
 * baseline, write the report.  On error the folder keeps no report file (a
 * junit.xml with the error when junit is asked for).  Exit: 0 all gates
 * hold, 1 error, 2 usage, 3 a gate or a baseline check failed.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/inputs.h"
#include "cli/cli.h"
#include "base/la.h"
#include "base/dist.h"
#include "reports/report.h"
#include "scenarios/scenario.h"

static const char usage[] =
	"usage: vpaudit run SCENARIO.yaml [-o OUTDIR] [--baseline OLD.json [--strict] [--significant]]\n"
	"                   [--seed N] [--threads N] [--portable] [--no-plots] [--quiet]\n"
	"                   [--allow-writes-outside]\n\n"
	"  -o, --output OUTDIR  write the report here (default: the scenario's `output:`,\n"
	"                       else out/NAME/ in the current directory)\n"
	"  --baseline OLD.json  compare the results with an older results file in the same run,\n"
	"                       as `vpaudit gate --baseline` does (the scenario's `tolerance:`\n"
	"                       and `tolerances:`); each comparison is a junit.xml test case\n"
	"  --strict             with --baseline: a record only in the results fails too (one\n"
	"                       only in the baseline always fails), and a baseline of another\n"
	"                       audit (scenario name, targets, seed, input files) is an error\n"
	"  --significant        with --baseline: a move must also exceed what the two bootstrap\n"
	"                       intervals allow (see `vpaudit gate --help`)\n"
	"  --seed N             override the scenario's seed (an integer >= 0)\n"
	"  --threads N          threads for vpaudit's own parallel loops (default: the number\n"
	"                       of online CPUs); OpenBLAS runs single-threaded, so results\n"
	"                       are identical for every N\n"
	"  --portable           the same results.json on every x86-64 CPU with AVX2 and FMA\n"
	"                       (the scenario key `portable: true` does the same): pins\n"
	"                       OpenBLAS's Haswell kernel (OPENBLAS_CORETYPE), glibc's libm\n"
	"                       without its FMA variants (GLIBC_TUNABLES) and vpaudit's generic\n"
	"                       paths, re-executing vpaudit with the two variables set; 1.02x\n"
	"                       the CPU time of the quickstart on an AMD EPYC (README.md,\n"
	"                       \"Reproducible results\")\n"
	"  --no-plots           no figures in the HTML, no PDF (gnuplot not needed)\n"
	"  --quiet              no progress lines and no verdicts on stdout\n"
	"  --allow-writes-outside  let the scenario's `output:`, `dump_*` and `pseudo_out`\n"
	"                       keys write outside the output folder (a scenario is code:\n"
	"                       run only scenarios you trust)\n\n"
	"Before computing, checks that OUTDIR can be written and that gnuplot runs (when\n"
	"plots are asked for), removes temporaries (NAME.tmp.PID) left there by a killed\n"
	"run and the report files of an earlier run (so a run killed later leaves no stale\n"
	"junit.xml; SIGINT/SIGTERM remove the run's temporaries).  Writes OUTDIR/results.json, report.html, report.pdf, junit.xml and, when\n"
	"the run has a linkage attack on anonymised speech, the VoicePrivacy text files\n"
	"result_for_rank.txt and vpc2022_results.txt (the scenario's `report:` list: json,\n"
	"html, pdf, junit, vpc) and removes the report files of an earlier run it did\n"
	"not write; when the run fails, OUTDIR keeps no report file, only a junit.xml with\n"
	"one <error> test case when junit is asked for.  Prints one PASS/FAIL line per gate\n"
	"and the baseline's lines, and exits 0 when all hold, 1 on error, 2 on usage errors,\n"
	"3 when a gate or a baseline check fails.\n";

/*
 * With --baseline --strict, what can be compared before hours of computation
 * (the scenario name, its target ids, the seed; the inputs only after the run)
 * is, so that a baseline of another audit is an error at once.
 */
static int strict_early_check(const struct vpa_scenario *s, const struct vpa_run_opts *ro,
			      const struct vpa_json *old, const char *base, struct vpa_err *err)
{
	struct vpa_json *stub = vpa_json_obj(), *sc = vpa_json_obj(), *ts = vpa_json_arr();
	vpa_json_set_str(sc, "name", s->name);
	vpa_json_set(stub, "scenario", sc);
	vpa_json_set_num(stub, "seed", (double)(ro->seed_set ? ro->seed : s->seed));
	for (size_t i = 0; i < s->n_targets; i++) {
		struct vpa_json *t = vpa_json_obj();
		vpa_json_set_str(t, "id", s->targets[i].id);
		vpa_json_push(ts, t);
	}
	vpa_json_set(stub, "targets", ts);
	struct vpa_json *m = vpa_json_arr();
	vpa_baseline_provenance(stub, old, base, m);
	int rc = 0;
	if (m->n) {
		struct vpa_buf e;
		vpa_buf_init(&e);
		for (size_t i = 0; i < m->n; i++)
			vpa_buf_printf(&e, "%s%s", i ? "; " : "", m->items[i]->str);
		struct vpa_loc loc = {base, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "the baseline is not of the same audit (an error with --strict): %s",
			      vpa_buf_str(&e));
		vpa_buf_release(&e);
	}
	vpa_json_free(m);
	vpa_json_free(stub);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	enum { O_SEED = 256, O_THREADS, O_NOPLOTS, O_QUIET, O_BASELINE, O_STRICT, O_SIG, O_ALLOW_OUT,
	       O_PORTABLE };
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"baseline", required_argument, NULL, O_BASELINE},
		{"strict", no_argument, NULL, O_STRICT},
		{"significant", no_argument, NULL, O_SIG},
		{"seed", required_argument, NULL, O_SEED},
		{"threads", required_argument, NULL, O_THREADS},
		{"no-plots", no_argument, NULL, O_NOPLOTS},
		{"quiet", no_argument, NULL, O_QUIET},
		{"allow-writes-outside", no_argument, NULL, O_ALLOW_OUT},
		{"portable", no_argument, NULL, O_PORTABLE},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *outdir = NULL, *base = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct vpa_run_opts ro = {0, 0, ncpu < 1 ? 1 : ncpu > 256 ? 256 : (int)ncpu, 0};
	int quiet = 0, strict = 0, significant = 0, allow_outside = 0, portable = 0, c;
	unsigned long v;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return cli_usage_error("run", "-o needs a folder");
			outdir = optarg;
			break;
		case O_BASELINE:
			if (!*optarg)
				return cli_usage_error("run", "--baseline needs a file");
			base = optarg;
			break;
		case O_STRICT:
			strict = 1;
			break;
		case O_SIG:
			significant = 1;
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
		case O_ALLOW_OUT:
			allow_outside = 1;
			break;
		case O_PORTABLE:
			portable = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_getopt_error("run", c, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("run", argc - optind ? "expected one scenario file"
							   : "missing the scenario file");
	if (!base && (strict || significant))
		return cli_usage_error("run", "--strict and --significant need --baseline");
	vpa_quiet = quiet;
	/* OpenBLAS stays single-threaded: its multi-threaded kernels round
	 * differently from the single-threaded ones, and a model trained with
	 * other bits is another model.  --threads parallelises vpaudit's own
	 * loops (targets, score sets, models), which are bit-identical for every
	 * thread count (results do not depend on threads: metrics/README.md, "Reproducibility"). */
	vpa_la_set_threads(1);

	struct vpa_err err;
	struct vpa_scenario *s = NULL;
	struct vpa_json *results = NULL, *gates = NULL, *old = NULL, *summary = NULL, *tols = NULL;
	char *def_out = NULL;
	/* Without a scenario the report list is unknown: the default has junit. */
	unsigned formats = VPA_REPORT_ALL;
	int rc = 0, failed = 0;
	int scen = 1; /* an error is printed with its scenario context */
	vpa_err_init(&err);
	double t0 = vpa_now();
	vpa_inputs_begin(); /* results.json lists every file read (base/inputs.h) */
	if (vpa_scenario_load(argv[optind], &s, &err))
		goto fail;
	formats = s->formats;
	/* before any output: portable mode may re-execute vpaudit (base/cpu.h) */
	if ((portable || s->portable) && cli_portable(argc, argv, &err))
		goto fail;
	if (vpa_dist_test_fault("scenario", &err))
		goto fail;
	if (!allow_outside && vpa_scenario_check_writes(s, outdir, &err))
		goto fail;
	double t_load = vpa_now() - t0;
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
	/* Everything that can be checked before hours of computation.  Under MPI
	 * rank 0 alone touches the folder.  Each stage ends in an agreement of
	 * every rank (base/dist.c, "Errors outside a loop"): an error on any rank
	 * stops every rank there or in its next loop, and rank 0 prints it. */
	scen = 0;
	if (base && !(old = cli_read_results(base, &err)))
		goto fail;
	if (old && strict && strict_early_check(s, &ro, old, base, &err))
		goto fail;
	if (vpa_dist_rank() == 0 && vpa_outdir_prepare(outdir, formats, ro.no_plots, &err))
		goto fail;
	if (vpa_dist_agree(0, &err))
		goto fail;
	scen = 1;
	ro.outdir = outdir;
	if (vpa_scenario_run(s, &ro, &results, &err))
		goto fail;
	struct vpa_json *stages = vpa_json_get(vpa_json_get(results, "wall_time"), "stages");
	vpa_json_set_num(stages, "load", t_load);
	gates = vpa_scenario_gates(s);
	int grc = vpa_gates_evaluate(results, gates, &err);
	if (grc && grc != VPA_EGATE)
		goto fail;
	scen = 0;
	failed = grc == VPA_EGATE;
	if (old) {
		tols = vpa_scenario_tolerances(s);
		struct vpa_baseline_opts bo = {base, s->tolerance, tols, NULL, 0, significant, strict};
		int brc = vpa_gates_baseline(results, old, &bo, &summary, &err);
		if (brc && brc != VPA_EGATE)
			goto fail;
		cli_warn_baseline(summary);
		vpa_json_set(results, "baseline", summary);
		summary = NULL;
		failed |= brc == VPA_EGATE;
		if (failed)
			vpa_json_set_str(results, "status", "fail");
	}
	/* the report's own duration cannot be inside the file it writes */
	vpa_json_set(stages, "report", vpa_json_null());
	vpa_json_set_num(vpa_json_get(results, "wall_time"), "total", vpa_now() - t0);
	/* under MPI only rank 0 writes (base/dist.c), once every rank is done */
	if (vpa_dist_agree(0, &err))
		goto fail;
	if (vpa_dist_rank() == 0 && vpa_report_write(results, outdir, formats, ro.no_plots, &err))
		goto fail;
	if (vpa_dist_test_fault("report", &err))
		goto fail;
	/* a failure on any rank removes the reports */
	if (vpa_dist_agree(0, &err))
		goto fail;
	/* the folder holds this run's files only */
	if (vpa_dist_rank() == 0)
		vpa_outdir_remove_reports(outdir,
					  formats & ~(ro.no_plots ? (unsigned)VPA_REPORT_PDF : 0u));
	if (!quiet)
		cli_print_verdicts(results);
	const struct vpa_json *g = vpa_json_get(results, "gates");
	for (size_t i = 0; g && i < g->n; i++) {
		const struct vpa_json *pj = vpa_json_get(g->items[i], "pass");
		const char *msg = vpa_json_get_str(g->items[i], "message");
		if (!(pj && pj->type == VPA_JSON_BOOL && pj->boolean))
			fprintf(stderr, "vpaudit: gate failed: %s\n", msg ? msg : "");
	}
	const struct vpa_json *bl = vpa_json_get(results, "baseline");
	if (bl && vpa_json_get_num(bl, "failures", 0) > 0)
		fprintf(stderr, "vpaudit: baseline check failed: %.0f failure(s) against %s\n",
			vpa_json_get_num(bl, "failures", 0), base);
	if (!quiet)
		printf("report: %s\n", outdir);
	rc = failed ? 3 : 0;
	goto out;
fail:
	/* every rank takes the same error (base/dist.c); rank 0 prints it */
	vpa_dist_agree(err.status ? err.status : VPA_EIO, &err);
	rc = scen ? cli_scenario_error(&err) : cli_error(&err);
	if (outdir && vpa_dist_rank() == 0)
		vpa_outdir_fail(outdir, formats, s ? s->name : NULL, err.msg);
out:
	free(def_out);
	vpa_json_free(tols);
	vpa_json_free(summary);
	vpa_json_free(old);
	vpa_json_free(gates);
	vpa_json_free(results);
	vpa_scenario_free(s);
	return rc;
}
