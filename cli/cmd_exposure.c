/*
 * cli/cmd_exposure.c - `vpaudit exposure`: canary exposure (Carlini et al.
 * 2019, TF Privacy conventions; metrics/exposure.c).
 *
 *   vpaudit exposure --canary X --candidates FILE [--drop-canary] [--extrapolate] [--json]
 *
 * Exact: log2 N - log2(1 + #{candidates <= X}).  Extrapolated: -log2 F(X)
 * with F a skew-normal fitted by maximum likelihood to the candidates.
 * Everything is computed before anything is printed.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "formats/io.h"
#include "base/json.h"
#include "metrics/metrics.h"

static const char usage_text[] =
	"usage: vpaudit exposure --canary X --candidates FILE [--drop-canary] [--extrapolate]\n"
	"                        [--json]\n"
	"\n"
	"Exposure of a canary (Carlini et al. 2019, 'The secret sharer'), TF Privacy's convention:\n"
	"X is the canary's log-perplexity, FILE the log-perplexities of the N other candidates\n"
	"(one number per line, or a 1-D .npy).  Lower log-perplexity = more likely.\n"
	"\n"
	"  exact         log2 N - log2(1 + #{candidates <= X})      (at most log2 N)\n"
	"  extrapolated  -log2 F(X), F the CDF of a skew-normal fitted to the candidates by\n"
	"                maximum likelihood (needs at least 3 distinct values)\n"
	"\n"
	"options:\n"
	"  --canary X         the canary's log-perplexity (a finite number)\n"
	"  --candidates FILE  the other candidates' log-perplexities\n"
	"  --drop-canary      remove one candidate equal to X first: for a FILE that scores the\n"
	"                     whole space, the canary included (an error when none equals X).\n"
	"                     Without it, a candidate equal to X counts as a rival (the exact\n"
	"                     exposure is then at most log2 N - 1) and a warning says so\n"
	"  --extrapolate      report the extrapolated exposure (the exact one is shown too)\n"
	"  --json             one JSON object: exposure, method, n_candidates,\n"
	"                     candidates_equal_to_canary (after --drop-canary), dropped_canary,\n"
	"                     and with --extrapolate exposure_exact, loc, scale, shape\n"
	"  -h, --help         this text\n"
	"\n"
	"Exit status: 0 ok, 1 bad input, 2 usage.\n";

/* A finite number, any sign.  cli_double's messages are made for ranges. */
static int parse_finite(const char *opt, const char *s, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(x)) {
		cli_errorf("%s must be a finite number, got '%s'", opt, s);
		return 1;
	}
	*out = x;
	return 0;
}

enum { O_CANARY = 256, O_CAND, O_EXTRA, O_JSON, O_DROP };

int cmd_exposure(int argc, char **argv)
{
	static const struct option lo[] = {
		{"canary", required_argument, NULL, O_CANARY},
		{"candidates", required_argument, NULL, O_CAND},
		{"extrapolate", no_argument, NULL, O_EXTRA},
		{"drop-canary", no_argument, NULL, O_DROP},
		{"json", no_argument, NULL, O_JSON},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *file = NULL;
	double canary = 0;
	int has_canary = 0, extrapolate = 0, json = 0, drop = 0, c, rc = 0;
	double *cand = NULL;
	size_t n = 0;
	struct vpa_err err;
	vpa_err_init(&err);

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_CANARY:
			if (parse_finite("--canary", optarg, &canary))
				return 2;
			has_canary = 1;
			break;
		case O_CAND:
			file = optarg;
			break;
		case O_EXTRA:
			extrapolate = 1;
			break;
		case O_JSON:
			json = 1;
			break;
		case O_DROP:
			drop = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cli_usage_error("exposure", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("exposure", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("exposure", "unexpected argument '%s'", argv[optind]);
	if (!has_canary)
		return cli_usage_error("exposure", "missing --canary");
	if (!file)
		return cli_usage_error("exposure", "missing --candidates");

	if (vpa_read_score_list(file, &cand, &n, &err)) {
		rc = cli_error(&err);
		goto out;
	}
	if (n == 0) { /* the reader rejects empty files; keep the guard */
		vpa_fail(&err, VPA_EINPUT, NULL, "%s: no candidates", file);
		rc = cli_error(&err);
		goto out;
	}
	size_t ties = vpa_exposure_ties(canary, cand, n);
	if (drop) {
		if (ties == 0) {
			vpa_fail(&err, VPA_EINPUT, NULL, "%s: --drop-canary: no candidate equals the "
				 "canary %.17g", file, canary);
			rc = cli_error(&err);
			goto out;
		}
		n = vpa_exposure_drop_canary(canary, cand, n);
		ties--;
		if (n == 0) {
			vpa_fail(&err, VPA_EINPUT, NULL, "%s: no candidate left after --drop-canary", file);
			rc = cli_error(&err);
			goto out;
		}
	}
	double exact = vpa_exposure_exact(canary, cand, n), extra = NAN;
	struct vpa_skewnorm sn = {0, 1, 0};
	if (extrapolate) {
		if (vpa_skewnorm_fit(cand, n, &sn, &err)) {
			struct vpa_err named; /* say which file could not be fitted */
			vpa_err_init(&named);
			vpa_fail(&named, err.status, NULL, "%s: %s", file, err.msg);
			rc = cli_error(&named);
			goto out;
		}
		extra = vpa_exposure_extrapolated(canary, &sn);
		if (!isfinite(extra)) {
			vpa_fail(&err, VPA_ENUMERIC, NULL,
				 "extrapolated exposure is not finite (skew-normal loc %g scale %g shape %g)",
				 sn.loc, sn.scale, sn.shape);
			rc = cli_error(&err);
			goto out;
		}
	}

	/* warned only once everything is computed: an error prints its line alone */
	if (!drop && ties > 0)
		fprintf(stderr, "vpaudit exposure: warning: %zu candidate%s of %s equal%s the canary "
			"%.10g: counted as rivals, so the exact exposure is at most log2 N - 1; if %s "
			"holds the canary itself, pass --drop-canary\n", ties, ties == 1 ? "" : "s",
			file, ties == 1 ? "s" : "", canary, file);
	if (json) {
		struct vpa_json *j = vpa_json_obj();
		struct vpa_buf b;
		vpa_json_set_num(j, "exposure", extrapolate ? extra : exact);
		vpa_json_set_str(j, "method", extrapolate ? "extrapolated" : "exact");
		vpa_json_set_num(j, "n_candidates", (double)n);
		vpa_json_set_num(j, "candidates_equal_to_canary", (double)ties);
		vpa_json_set(j, "dropped_canary", vpa_json_bool(drop));
		if (extrapolate) {
			vpa_json_set_num(j, "exposure_exact", exact);
			vpa_json_set_num(j, "loc", sn.loc);
			vpa_json_set_num(j, "scale", sn.scale);
			vpa_json_set_num(j, "shape", sn.shape);
		}
		vpa_buf_init(&b);
		vpa_json_write(&b, j, 0);
		printf("%s\n", vpa_buf_str(&b));
		vpa_buf_release(&b);
		vpa_json_free(j);
		goto out;
	}
	printf("candidates              %zu  (%s%s)\n", n, file,
	       drop ? ", one equal to the canary dropped" : "");
	printf("canary                  %.10g\n", canary);
	printf("exposure (exact)        %.4f bits  (max log2 N = %.4f)\n", exact, log2((double)n));
	if (extrapolate) {
		printf("exposure (extrapolated) %.4f bits\n", extra);
		printf("skew-normal fit         loc %.6g  scale %.6g  shape %.6g\n", sn.loc, sn.scale,
		       sn.shape);
	}
out:
	free(cand);
	return rc;
}
