/*
 * cli/cmd_dp_audit.c - `vpaudit dp audit`: an empirical lower bound on epsilon
 * from a distinguisher's errors (counts) or from its scores (issue 28, item 1;
 * metrics/dp_audit.c).  Everything is computed before anything is printed.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "base/json.h"
#include "formats/io.h"
#include "metrics/metrics.h"

int cmd_dp_audit(int argc, char **argv);

static const char usage_text[] =
	"usage: vpaudit dp audit --fp K --negatives N --fn K --positives N [--method cp|gdp]\n"
	"                        [--alpha A] [--delta D] [--json]\n"
	"       vpaudit dp audit --in FILE --out FILE [--method cp|gdp] [--alpha A] [--delta D] [--json]\n"
	"       vpaudit dp audit --one-run --canaries M --guesses R --correct V [--alpha A] [--delta D] [--json]\n"
	"       vpaudit dp audit --one-run --in FILE --out FILE [--alpha A] [--delta D] [--json]\n"
	"\n"
	"A lower bound on the epsilon of an (epsilon, delta)-DP claim, at confidence 1 - alpha:\n"
	"if the bound is above the claimed epsilon, the claim is wrong (implementation or\n"
	"accounting).  A small bound is NOT evidence of privacy: it only says this attack did\n"
	"not do better.\n"
	"\n"
	"counts    a distinguisher's errors on trials of neighbouring datasets: FP of N trials\n"
	"          where the record was out, FN of N where it was in\n"
	"scores    attack scores of members / canaries included (--in) and excluded (--out),\n"
	"          higher = \"in\"; one number per line or a 1-D .npy.  Every threshold t (each\n"
	"          distinct score, and +inf) is tried (\"in\" iff score >= t) and the best is\n"
	"          reported, with a Bonferroni correction: with T thresholds each of the 2T\n"
	"          one-sided bounds is taken at alpha/(2T), so all hold at once with probability\n"
	"          >= 1 - alpha and the threshold picked after seeing the scores stays valid\n"
	"          (all the data serve the bound, no random split, the same result every run).\n"
	"          Also printed: AUROC (ties count 1/2) and TPR at FPR 0.1% and 1% (the largest\n"
	"          TPR of a threshold whose FPR is at most the target; no randomisation).\n"
	"\n"
	"methods   cp   (default) Jagielski, Ullman, Oprea 2020: eps >= max(ln((1-delta-FNR_hi)/FPR_hi),\n"
	"               ln((1-delta-FPR_hi)/FNR_hi)), FPR_hi and FNR_hi Clopper-Pearson upper bounds\n"
	"               (two-sided at level alpha: each one-sided at alpha/2)\n"
	"          gdp  Nasr et al. 2023: mu = Phi^-1(1-FPR_hi) - Phi^-1(FNR_hi), then the mu-GDP\n"
	"               -> (eps, delta) conversion of Dong, Roth, Su 2019, Cor. 2.13, solved at\n"
	"               --delta (> 0).  ASSUMES A GAUSSIAN TRADE-OFF CURVE: not a valid bound\n"
	"               otherwise\n"
	"one-run   Steinke, Nasr, Jagielski 2023: M canaries, each included with probability 1/2\n"
	"          independently; R guesses (the rest abstain), V correct.  The bound is the\n"
	"          largest eps whose p-value P[Bin(R, e^eps/(1+e^eps)) >= V] + 2 M delta\n"
	"          max_i P[V-i <= Bin < V]/i (their Theorem's delta term) is at most alpha.\n"
	"          From scores (M = canaries in both files): the guesses are the k+ highest\n"
	"          scores (\"in\") and the k- lowest (\"out\"), k+ and k- from {0, 1, 2, 4, ..., M}\n"
	"          (fixed by M alone; a cut never splits equal scores, so it is moved down to\n"
	"          the nearest group boundary), and the best of the K pairs is reported at\n"
	"          alpha/K (Bonferroni over the pairs tried)\n"
	"\n"
	"options:\n"
	"  --fp K --negatives N   false positives of N negative trials (whole numbers up to 1e10, K <= N)\n"
	"  --fn K --positives N   false negatives of N positive trials\n"
	"  --in FILE --out FILE   scores instead of counts\n"
	"  --method cp|gdp        default cp\n"
	"  --alpha A              significance, in (0, 1) (default 0.05): confidence 1 - A\n"
	"  --delta D              the delta of the claim, in [0, 1) (default 0; gdp needs D > 0)\n"
	"  --one-run              the one-run audit (with --canaries/--guesses/--correct or scores)\n"
	"  --canaries M --guesses R --correct V   whole numbers, V <= R <= M, M >= 1\n"
	"  --json                 one JSON object: epsilon_lower_bound, method, alpha, delta and\n"
	"                         the counts, bounds and thresholds behind it\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: 0 ok, 1 bad input (a value out of range, a bad file), 2 usage.\n";

enum { O_FP = 256, O_NEG, O_FN, O_POS, O_IN, O_OUT, O_METHOD, O_ALPHA, O_DELTA, O_ONERUN,
       O_CAN, O_GUESS, O_CORR, O_JSON };

/* A whole number in [0, 1e10] (the incomplete beta's continued fraction needs
 * O(sqrt(n)) steps: beyond, its cap of 1e6 steps would cost digits); bad input
 * (exit 1), named by its option. */
static int count_arg(const char *opt, const char *s, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(x) || x < 0 || x > 1e10 ||
	    x != floor(x)) {
		cli_errorf("%s must be a whole number in [0, 1e10], got '%s'", opt, s);
		return 1;
	}
	*out = x;
	return 0;
}

static int real_arg(const char *opt, const char *s, double lo, int lo_open, double hi,
		    const char *range, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(x) || x < lo || (lo_open && x == lo) ||
	    x >= hi) {
		cli_errorf("%s must be a number in %s, got '%s'", opt, range, s);
		return 1;
	}
	*out = x;
	return 0;
}

static void emit(struct vpa_json *j)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_json_write(&b, j, 0);
	printf("%s\n", vpa_buf_str(&b));
	vpa_buf_release(&b);
	vpa_json_free(j);
}

static const char gdp_note[] = "assumes a Gaussian trade-off curve: not a valid bound otherwise";

static void print_audit(const struct vpa_dp_audit *a, int scores, int gdp, double alpha,
			double delta, const char *fin, const char *fout)
{
	if (gdp)
		printf("method               gdp: mu-GDP (Nasr et al. 2023; Dong, Roth, Su 2019 Cor. 2.13)\n"
		       "                     ASSUMES a Gaussian trade-off curve: not a valid bound otherwise\n");
	else
		printf("method               cp: Clopper-Pearson (Jagielski, Ullman, Oprea 2020)\n");
	printf("alpha                %.10g  (confidence %.10g)\n", alpha, 1 - alpha);
	printf("delta                %.10g\n", delta);
	if (scores) {
		printf("scores               %.15g in (%s), %.15g out (%s)\n", a->positives, fin,
		       a->negatives, fout);
		printf("thresholds           %.15g swept; Bonferroni: each of the %.15g one-sided bounds at "
		       "alpha/(2T) = %.6g\n", a->n_thresholds, 2 * a->n_thresholds, a->level);
		printf("AUROC                %.6f\n", a->auroc);
		printf("TPR at FPR 0.1%%      %.6f\n", a->tpr_at_fpr_1e3);
		printf("TPR at FPR 1%%        %.6f\n", a->tpr_at_fpr_1e2);
		if (isfinite(a->threshold))
			printf("threshold            \"in\" iff score >= %.10g\n", a->threshold);
		else if (a->direction)
			printf("threshold            +inf (nothing \"in\")\n");
		else
			printf("threshold            none gives a positive bound\n");
	} else {
		printf("bounds               each one-sided at alpha/2 = %.6g\n", a->level);
	}
	if (a->direction || !scores) {
		printf("false positives      %.15g of %.15g  (FPR upper bound %.8g)\n", a->fp,
		       a->negatives, a->fpr_hi);
		printf("false negatives      %.15g of %.15g  (FNR upper bound %.8g)\n", a->fn,
		       a->positives, a->fnr_hi);
	}
	if (gdp && isfinite(a->mu))
		printf("mu                   %.8g\n", a->mu);
	printf("epsilon lower bound  %.6f", a->epsilon);
	if (gdp)
		printf("  (%s)", gdp_note);
	else if (a->direction == 1)
		printf("  = ln((1 - delta - FNR_hi) / FPR_hi)");
	else if (a->direction == 2)
		printf("  = ln((1 - delta - FPR_hi) / FNR_hi)");
	else
		printf("  (no positive bound: this attack proves nothing)");
	printf("\n");
}

static struct vpa_json *audit_json(const struct vpa_dp_audit *a, int scores, int gdp, double alpha,
				   double delta)
{
	struct vpa_json *j = vpa_json_obj();
	vpa_json_set_num(j, "epsilon_lower_bound", a->epsilon);
	vpa_json_set_str(j, "method", gdp ? "gdp" : "cp");
	vpa_json_set_num(j, "alpha", alpha);
	vpa_json_set_num(j, "delta", delta);
	if (gdp) {
		vpa_json_set_str(j, "assumption", gdp_note);
		vpa_json_set_num(j, "mu", a->mu);
	}
	vpa_json_set_num(j, "fp", a->fp);
	vpa_json_set_num(j, "negatives", a->negatives);
	vpa_json_set_num(j, "fn", a->fn);
	vpa_json_set_num(j, "positives", a->positives);
	vpa_json_set_num(j, "fpr_upper", a->fpr_hi);
	vpa_json_set_num(j, "fnr_upper", a->fnr_hi);
	vpa_json_set_num(j, "bound_level", a->level);
	if (scores) {
		vpa_json_set_num(j, "thresholds", a->n_thresholds);
		vpa_json_set_str(j, "correction", "bonferroni");
		vpa_json_set_num(j, "threshold", a->threshold); /* +inf / none -> null */
		vpa_json_set_num(j, "auroc", a->auroc);
		vpa_json_set_num(j, "tpr_at_fpr_0.001", a->tpr_at_fpr_1e3);
		vpa_json_set_num(j, "tpr_at_fpr_0.01", a->tpr_at_fpr_1e2);
	}
	return j;
}

/* Read one score list and sort it (the reader rejects empty files and
 * non-finite values with FILE:LINE). */
static int read_sorted(const char *path, double **x, size_t *n)
{
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_read_score_list(path, x, n, &err))
		return cli_error(&err);
	if (*n == 0) {
		vpa_fail(&err, VPA_EINPUT, NULL, "%s: no scores", path);
		return cli_error(&err);
	}
	for (size_t i = 0; i < *n; i++) {
		if (!isfinite((*x)[i])) { /* the reader's promise, kept here too */
			vpa_fail(&err, VPA_EINPUT, NULL, "%s: score %zu is not finite", path, i + 1);
			return cli_error(&err);
		}
	}
	vpa_sort_scores(*x, NULL, *n);
	return 0;
}

int cmd_dp_audit(int argc, char **argv)
{
	static const struct option lo[] = {
		{"fp", required_argument, NULL, O_FP},
		{"negatives", required_argument, NULL, O_NEG},
		{"fn", required_argument, NULL, O_FN},
		{"positives", required_argument, NULL, O_POS},
		{"in", required_argument, NULL, O_IN},
		{"out", required_argument, NULL, O_OUT},
		{"method", required_argument, NULL, O_METHOD},
		{"alpha", required_argument, NULL, O_ALPHA},
		{"delta", required_argument, NULL, O_DELTA},
		{"one-run", no_argument, NULL, O_ONERUN},
		{"canaries", required_argument, NULL, O_CAN},
		{"guesses", required_argument, NULL, O_GUESS},
		{"correct", required_argument, NULL, O_CORR},
		{"json", no_argument, NULL, O_JSON},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *cmd = "dp audit", *fin = NULL, *fout = NULL;
	double fp = 0, neg = 0, fn = 0, pos = 0, m = 0, r = 0, v = 0, alpha = 0.05, delta = 0;
	int has_fp = 0, has_neg = 0, has_fn = 0, has_pos = 0, has_m = 0, has_r = 0, has_v = 0;
	int gdp = 0, has_method = 0, one_run = 0, json = 0, c;

	vpa_cmd = cmd;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_FP:
			if (count_arg("--fp", optarg, &fp))
				return 1;
			has_fp = 1;
			break;
		case O_NEG:
			if (count_arg("--negatives", optarg, &neg))
				return 1;
			has_neg = 1;
			break;
		case O_FN:
			if (count_arg("--fn", optarg, &fn))
				return 1;
			has_fn = 1;
			break;
		case O_POS:
			if (count_arg("--positives", optarg, &pos))
				return 1;
			has_pos = 1;
			break;
		case O_CAN:
			if (count_arg("--canaries", optarg, &m))
				return 1;
			has_m = 1;
			break;
		case O_GUESS:
			if (count_arg("--guesses", optarg, &r))
				return 1;
			has_r = 1;
			break;
		case O_CORR:
			if (count_arg("--correct", optarg, &v))
				return 1;
			has_v = 1;
			break;
		case O_IN:
			fin = optarg;
			break;
		case O_OUT:
			fout = optarg;
			break;
		case O_METHOD:
			if (!strcmp(optarg, "cp"))
				gdp = 0;
			else if (!strcmp(optarg, "gdp"))
				gdp = 1;
			else
				return cli_usage_error(cmd, "--method must be 'cp' or 'gdp', got '%s'", optarg);
			has_method = 1;
			break;
		case O_ALPHA:
			if (real_arg("--alpha", optarg, 0, 1, 1, "(0, 1)", &alpha))
				return 1;
			break;
		case O_DELTA:
			if (real_arg("--delta", optarg, 0, 0, 1, "[0, 1)", &delta))
				return 1;
			break;
		case O_ONERUN:
			one_run = 1;
			break;
		case O_JSON:
			json = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);

	/* which input: counts, scores or one-run counts; never two */
	int any_counts = has_fp || has_neg || has_fn || has_pos;
	int any_run = has_m || has_r || has_v;
	int scores = fin || fout;
	if (scores && !(fin && fout))
		return cli_usage_error(cmd, "--in and --out go together");
	if (any_run && !one_run)
		return cli_usage_error(cmd, "--canaries/--guesses/--correct need --one-run");
	if (one_run && has_method)
		return cli_usage_error(cmd, "--method is not an option of --one-run");
	if (one_run && any_counts)
		return cli_usage_error(cmd, "--one-run takes --canaries/--guesses/--correct or "
					    "--in/--out, not --fp/--fn/--negatives/--positives");
	if (scores && (any_counts || any_run))
		return cli_usage_error(cmd, "give counts or --in/--out scores, not both");
	if (one_run && !scores) {
		if (!has_m)
			return cli_usage_error(cmd, "missing --canaries");
		if (!has_r)
			return cli_usage_error(cmd, "missing --guesses");
		if (!has_v)
			return cli_usage_error(cmd, "missing --correct");
	}
	if (!one_run && !scores) {
		if (!any_counts)
			return cli_usage_error(cmd, "give --fp/--negatives/--fn/--positives, "
						    "--in/--out, or --one-run");
		if (!has_fp)
			return cli_usage_error(cmd, "missing --fp");
		if (!has_neg)
			return cli_usage_error(cmd, "missing --negatives");
		if (!has_fn)
			return cli_usage_error(cmd, "missing --fn");
		if (!has_pos)
			return cli_usage_error(cmd, "missing --positives");
	}
	/* values against each other: bad input */
	if (!one_run && !scores) {
		if (neg < 1) {
			cli_errorf("--negatives must be at least 1, got 0");
			return 1;
		}
		if (pos < 1) {
			cli_errorf("--positives must be at least 1, got 0");
			return 1;
		}
		if (fp > neg) {
			cli_errorf("--fp %.15g is larger than --negatives %.15g", fp, neg);
			return 1;
		}
		if (fn > pos) {
			cli_errorf("--fn %.15g is larger than --positives %.15g", fn, pos);
			return 1;
		}
	}
	if (one_run && !scores) {
		if (m < 1) {
			cli_errorf("--canaries must be at least 1, got 0");
			return 1;
		}
		if (r > m) {
			cli_errorf("--guesses %.15g is larger than --canaries %.15g", r, m);
			return 1;
		}
		if (v > r) {
			cli_errorf("--correct %.15g is larger than --guesses %.15g", v, r);
			return 1;
		}
	}
	if (gdp && delta <= 0) {
		cli_errorf("--delta must be in (0, 1) with --method gdp, got %g (a Gaussian trade-off "
			   "curve with mu > 0 is (eps, 0)-DP for no finite eps)", delta);
		return 1;
	}

	double *xin = NULL, *xout = NULL;
	size_t nin = 0, nout = 0;
	int rc = 0;
	if (scores) {
		if ((rc = read_sorted(fin, &xin, &nin)) || (rc = read_sorted(fout, &xout, &nout)))
			goto out;
	}

	if (one_run) {
		struct vpa_one_run o;
		memset(&o, 0, sizeof(o));
		if (scores) {
			vpa_dp_audit_one_run_scores(xin, nin, xout, nout, alpha, delta, &o);
		} else {
			o.m = m;
			o.guesses = r;
			o.correct = v;
			o.pairs = 1;
			o.level = alpha;
			o.epsilon = vpa_one_run_epsilon(m, r, v, alpha, delta);
			o.k_plus = o.k_minus = NAN;
		}
		if (json) {
			struct vpa_json *j = vpa_json_obj();
			vpa_json_set_num(j, "epsilon_lower_bound", o.epsilon);
			vpa_json_set_str(j, "method", "one_run");
			vpa_json_set_num(j, "alpha", alpha);
			vpa_json_set_num(j, "delta", delta);
			vpa_json_set_num(j, "canaries", o.m);
			vpa_json_set_num(j, "guesses", o.guesses);
			vpa_json_set_num(j, "correct", o.correct);
			if (scores) {
				vpa_json_set_num(j, "k_plus", o.k_plus);
				vpa_json_set_num(j, "k_minus", o.k_minus);
				vpa_json_set_num(j, "pairs", o.pairs);
				vpa_json_set_str(j, "correction", "bonferroni");
				vpa_json_set_num(j, "pair_level", o.level);
			}
			emit(j);
			goto out;
		}
		printf("method               one-run audit (Steinke, Nasr, Jagielski 2023)\n");
		printf("alpha                %.10g  (confidence %.10g)\n", alpha, 1 - alpha);
		printf("delta                %.10g\n", delta);
		printf("canaries             %.15g  (each included with probability 1/2: the audit's "
		       "assumption)\n", o.m);
		if (scores) {
			printf("scores               %zu in (%s), %zu out (%s)\n", nin, fin, nout, fout);
			printf("guess pairs tried    %.15g (k+, k- in {0, 1, 2, 4, ..., M}); Bonferroni: each "
			       "at alpha/%.15g = %.6g\n", o.pairs, o.pairs, o.level);
			if (o.guesses > 0)
				printf("best pair            %.15g highest guessed in, %.15g lowest guessed out\n",
				       o.k_plus, o.k_minus);
		}
		printf("guesses              %.15g, %.15g correct\n", o.guesses, o.correct);
		printf("epsilon lower bound  %.6f%s\n", o.epsilon,
		       o.epsilon > 0 ? "" : "  (no positive bound: this attack proves nothing)");
		goto out;
	}

	struct vpa_dp_audit a;
	if (scores)
		vpa_dp_audit_scores(xin, nin, xout, nout, alpha, delta, gdp ? VPA_AUDIT_GDP : VPA_AUDIT_CP, &a);
	else
		vpa_dp_audit_counts(fp, neg, fn, pos, alpha, delta, gdp ? VPA_AUDIT_GDP : VPA_AUDIT_CP, &a);
	if (json)
		emit(audit_json(&a, scores, gdp, alpha, delta));
	else
		print_audit(&a, scores, gdp, alpha, delta, fin, fout);
out:
	free(xin);
	free(xout);
	return rc;
}
