/*
 * cli/cmd_dp.c - `vpaudit dp`: the differential-privacy accountant.
 *
 *   vpaudit dp epsilon  --q Q --sigma Z --steps T --delta D [--table K] [--series S] [--json]
 *   vpaudit dp sigma    --q Q --epsilon E --steps T --delta D [--series S] [--json]
 *   vpaudit dp epsilon|sigma ... --accountant pld [--discretisation D]
 *   vpaudit dp delta    --q Q --sigma Z --steps T --epsilon E [--accountant pld] [--json]
 *   vpaudit dp gaussian --epsilon E --delta D [--sensitivity S] [--json]
 *
 * epsilon/sigma: RDP of the Poisson-sampled Gaussian mechanism over
 * dp_accounting's order grid (metrics/dp.c, metrics/DP.md), or with
 * --accountant pld the privacy loss distribution (metrics/pld.c), which alone
 * gives delta; gaussian: one
 * release, analytic (Balle & Wang 2018) and classical (Dwork & Roth Thm 3.22)
 * noise.  Everything is computed before anything is printed.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "base/json.h"
#include "metrics/pld.h"
#include "metrics/metrics.h"

int cmd_dp_audit(int argc, char **argv); /* cli/cmd_dp_audit.c */

static const char usage_text[] =
	"usage: vpaudit dp epsilon  --q Q --sigma Z --steps T --delta D [--table K] [--series S] [--json]\n"
	"       vpaudit dp sigma    --q Q --epsilon E --steps T --delta D [--series S] [--json]\n"
	"       vpaudit dp gaussian --epsilon E --delta D [--sensitivity S] [--json]\n"
	"       vpaudit dp epsilon|sigma ... --accountant pld [--discretisation D]\n"
	"       vpaudit dp delta    --q Q --sigma Z --steps T --epsilon E [--accountant pld]\n"
	"                           [--discretisation D] [--json]\n"
	"       vpaudit dp audit ...  (an empirical lower bound on epsilon: 'vpaudit dp audit --help')\n"
	"\n"
	"epsilon   (epsilon, delta) after T steps of the Poisson-sampled Gaussian mechanism:\n"
	"          RDP accountant (Mironov, Talwar, Zhang 2019) over the order grid of Google's\n"
	"          dp_accounting, converted with eps = rdp + log1p(-1/a) - (log delta + log a)/(a-1);\n"
	"          prints epsilon and the optimal order\n"
	"sigma     the smallest noise multiplier whose epsilon is at most E\n"
	"delta     delta at epsilon E after T steps: PLD (default) or RDP (--accountant rdp, the\n"
	"          smallest over the orders of dp_accounting's compute_delta bound)\n"
	"gaussian  noise for one release of a query with L2 sensitivity S: the analytic Gaussian\n"
	"          mechanism (Balle & Wang 2018) and the classical S sqrt(2 ln(1.25/delta))/eps,\n"
	"          which is only valid for epsilon < 1 (Dwork & Roth, Thm 3.22)\n"
	"\n"
	"options:\n"
	"  --q Q             sampling rate per step, in [0, 1] (e.g. clients per round / population),\n"
	"                    a number or a fraction A/B (--q 300/5000)\n"
	"  --cohort N --population M\n"
	"                    the same as --q N/M: N of M users sampled per round\n"
	"  --sigma Z         noise multiplier (noise std / clipping norm), > 0\n"
	"                    (alias --noise-multiplier, as in TF Privacy and Opacus)\n"
	"  --steps T         number of steps (rounds), an integer >= 1 (alias --rounds)\n"
	"  --table K         'epsilon' only: epsilon after every K-th step (K, 2K, ..., and T),\n"
	"                    one line each (at most 10000 lines)\n"
	"  --delta D         target delta, in (0, 1)\n"
	"  --epsilon E       target epsilon, > 0\n"
	"  --series S        RDP: the series of the fractional RDP orders:\n"
	"                    'signed' (default) keeps the alternating signs of the binomial\n"
	"                    coefficients, the exact value (TF Privacy, Opacus, older dp_accounting);\n"
	"                    'unsigned' adds their absolute values, an upper bound, higher where\n"
	"                    the best order is fractional (today's dp_accounting; metrics/DP.md)\n"
	"  --accountant A    'epsilon', 'sigma', 'delta': 'rdp' (default; 'pld' for 'delta') or 'pld':\n"
	"                    the privacy loss distribution under add/remove adjacency (the larger of\n"
	"                    the two directions), composed by FFT, discretised pessimistically\n"
	"                    (connect the dots): the printed epsilon/delta is an upper bound; a lower\n"
	"                    bound on the same grid is printed beside it, so the upper bound exceeds\n"
	"                    the exact value by at most their difference (metrics/pld.h)\n"
	"  --discretisation D  with --accountant pld: the grid interval of privacy losses, in\n"
	"                    [1e-6, 0.1] (default 1e-4); smaller is tighter and slower\n"
	"  --sensitivity S   L2 sensitivity for 'gaussian' (default 1), > 0\n"
	"  --json            one JSON object on stdout: {\"epsilon\", \"order\"} (with --table also\n"
	"                    \"table\": [{\"steps\", \"epsilon\", \"order\"}, ...]), {\"sigma\"} or\n"
	"                    {\"sigma\", \"sigma_classic\", \"classic_valid\"}; with --accountant pld\n"
	"                    also \"accountant\", \"discretisation\" and the lower bound \"epsilon_lower\"\n"
	"                    ('delta': {\"delta\", \"delta_lower\", \"accountant\", \"discretisation\"})\n"
	"  -h, --help        this text\n"
	"\n"
	"Exit status: 0 ok, 1 numeric failure, 2 usage.\n";

enum sub { SUB_EPSILON, SUB_SIGMA, SUB_GAUSSIAN, SUB_DELTA };

struct opts {
	enum sub sub;
	const char *name; /* "dp epsilon" etc. for messages */
	double q, sigma, steps, delta, eps, sens, cohort, population, table;
	int has_q, has_sigma, has_steps, has_delta, has_eps, has_sens, json, has_cohort,
		has_population, has_table, has_series;
	enum vpa_rdp_series series;
	int pld, has_accountant, has_disc; /* --accountant pld, --discretisation */
	double disc;
};

/* x in (0, 1): cli_double checks (0, 1], the open upper end is ours */
static int open_unit(const char *opt, const char *s, double *out)
{
	if (cli_double(opt, s, 0, 1, 1, out))
		return 1;
	if (*out >= 1) {
		cli_errorf("%s must be a number in (0, 1), got '%s'", opt, s);
		return 1;
	}
	return 0;
}

enum { O_Q = 256, O_SIGMA, O_STEPS, O_DELTA, O_EPS, O_SENS, O_JSON, O_NM, O_ROUNDS, O_COHORT,
       O_POP, O_TABLE, O_SERIES, O_ACCOUNTANT, O_DISC };

/* A whole number in [lo, hi] given as a double (1e6 accepted). */
static int whole(const char *opt, const char *s, double lo, double hi, double *out)
{
	if (cli_double(opt, s, lo, hi, 0, out))
		return 1;
	if (*out != floor(*out)) {
		cli_errorf("%s must be a whole number >= %g, got '%s'", opt, lo, s);
		return 1;
	}
	return 0;
}

/* --q: a number in [0, 1] or a fraction A/B (B > 0, 0 <= A <= B). */
static int parse_q(const char *s, double *q)
{
	const char *slash = strchr(s, '/');
	if (!slash)
		return cli_double("--q", s, 0, 1, 0, q);
	char a[64];
	double num, den;
	size_t n = (size_t)(slash - s);
	if (n >= sizeof(a)) {
		cli_errorf("--q must be a number in [0, 1] or a fraction A/B, got '%s'", s);
		return 1;
	}
	memcpy(a, s, n);
	a[n] = '\0';
	if (cli_double("--q numerator", a, 0, INFINITY, 0, &num) ||
	    cli_double("--q denominator", slash + 1, 0, INFINITY, 1, &den))
		return 1;
	if (num > den) {
		cli_errorf("--q must be at most 1, got '%s'", s);
		return 1;
	}
	*q = num / den;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"q", required_argument, NULL, O_Q},
		{"sigma", required_argument, NULL, O_SIGMA},
		{"noise-multiplier", required_argument, NULL, O_NM},
		{"steps", required_argument, NULL, O_STEPS},
		{"rounds", required_argument, NULL, O_ROUNDS},
		{"cohort", required_argument, NULL, O_COHORT},
		{"population", required_argument, NULL, O_POP},
		{"table", required_argument, NULL, O_TABLE},
		{"series", required_argument, NULL, O_SERIES},
		{"accountant", required_argument, NULL, O_ACCOUNTANT},
		{"discretisation", required_argument, NULL, O_DISC},
		{"delta", required_argument, NULL, O_DELTA},
		{"epsilon", required_argument, NULL, O_EPS},
		{"sensitivity", required_argument, NULL, O_SENS},
		{"json", no_argument, NULL, O_JSON},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_Q:
			if (parse_q(optarg, &o->q))
				return 2;
			o->has_q = 1;
			break;
		case O_COHORT:
			if (whole("--cohort", optarg, 0, 1e15, &o->cohort))
				return 2;
			o->has_cohort = 1;
			break;
		case O_POP:
			if (whole("--population", optarg, 1, 1e15, &o->population))
				return 2;
			o->has_population = 1;
			break;
		case O_SIGMA:
		case O_NM:
			if (o->has_sigma)
				return cli_usage_error(o->name, "the noise multiplier is given twice "
								"(--noise-multiplier is --sigma)");
			if (cli_double(c == O_NM ? "--noise-multiplier" : "--sigma", optarg, 0, INFINITY, 1,
				       &o->sigma))
				return 2;
			o->has_sigma = 1;
			break;
		case O_STEPS:
		case O_ROUNDS:
			if (o->has_steps)
				return cli_usage_error(o->name, "the number of steps is given twice "
								"(--rounds is --steps)");
			/* a double so that 1e6 is accepted; it must be a whole number */
			if (whole(c == O_ROUNDS ? "--rounds" : "--steps", optarg, 1, 1e15, &o->steps))
				return 2;
			o->has_steps = 1;
			break;
		case O_TABLE:
			if (whole("--table", optarg, 1, 1e15, &o->table))
				return 2;
			o->has_table = 1;
			break;
		case O_SERIES:
			if (!strcmp(optarg, "signed"))
				o->series = VPA_RDP_SIGNED;
			else if (!strcmp(optarg, "unsigned"))
				o->series = VPA_RDP_UNSIGNED;
			else
				return cli_usage_error(o->name, "--series must be 'signed' or 'unsigned', "
								"got '%s'", optarg);
			o->has_series = 1;
			break;
		case O_ACCOUNTANT:
			if (!strcmp(optarg, "rdp"))
				o->pld = 0;
			else if (!strcmp(optarg, "pld"))
				o->pld = 1;
			else
				return cli_usage_error(o->name, "--accountant must be 'rdp' or 'pld', got '%s'",
						       optarg);
			o->has_accountant = 1;
			break;
		case O_DISC:
			if (cli_double("--discretisation", optarg, 1e-6, 0.1, 0, &o->disc))
				return 2;
			o->has_disc = 1;
			break;
		case O_DELTA:
			if (open_unit("--delta", optarg, &o->delta))
				return 2;
			o->has_delta = 1;
			break;
		case O_EPS:
			if (cli_double("--epsilon", optarg, 0, INFINITY, 1, &o->eps))
				return 2;
			o->has_eps = 1;
			break;
		case O_SENS:
			if (cli_double("--sensitivity", optarg, 0, INFINITY, 1, &o->sens))
				return 2;
			o->has_sens = 1;
			break;
		case O_JSON:
			o->json = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			return cli_usage_error(o->name, "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error(o->name, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error(o->name, "unexpected argument '%s'", argv[optind]);

	if (o->has_cohort != o->has_population)
		return cli_usage_error(o->name, "--cohort and --population go together (q = cohort / population)");
	if (o->has_cohort) {
		if (o->has_q)
			return cli_usage_error(o->name, "give --q or --cohort/--population, not both");
		if (o->cohort > o->population)
			return cli_usage_error(o->name, "--cohort %.15g is larger than --population %.15g",
					       o->cohort, o->population);
		o->q = o->cohort / o->population;
		o->has_q = 1;
	}
	if (o->sub == SUB_DELTA && !o->has_accountant)
		o->pld = 1; /* the tighter accountant is the default of 'dp delta' (it came first) */
	if (o->has_accountant && o->sub == SUB_GAUSSIAN)
		return cli_usage_error(o->name, "--accountant is an option of 'dp epsilon', 'dp sigma' "
						"and 'dp delta'");
	if (o->has_disc && !o->pld)
		return cli_usage_error(o->name, "--discretisation is an option of --accountant pld");
	if (o->pld && o->has_table)
		return cli_usage_error(o->name, "--table is an option of the RDP accountant");
	if (o->pld && o->has_series)
		return cli_usage_error(o->name, "--series is an option of the RDP accountant");
	if (o->pld && o->has_steps && o->steps > VPA_PLD_MAX_STEPS)
		return cli_usage_error(o->name, "--steps: the PLD accountant takes at most %.0f steps, "
						"got %.15g", VPA_PLD_MAX_STEPS, o->steps);
	if (!o->has_disc)
		o->disc = VPA_PLD_INTERVAL_DEFAULT;
	if (o->has_table && o->sub != SUB_EPSILON)
		return cli_usage_error(o->name, "--table is only an option of 'dp epsilon'");
	if (o->has_series && o->sub == SUB_GAUSSIAN)
		return cli_usage_error(o->name, "--series is an option of 'dp epsilon' and 'dp sigma'");
	/* which options each subcommand needs, and which it does not take */
	const int need_q = o->sub != SUB_GAUSSIAN;
	const int need_sigma = o->sub == SUB_EPSILON || o->sub == SUB_DELTA;
	const int need_steps = o->sub != SUB_GAUSSIAN, need_eps = o->sub != SUB_EPSILON;
	const int need_delta = o->sub != SUB_DELTA;
	if (need_q && !o->has_q)
		return cli_usage_error(o->name, "missing --q");
	if (need_sigma && !o->has_sigma)
		return cli_usage_error(o->name, "missing --sigma");
	if (need_eps && !o->has_eps)
		return cli_usage_error(o->name, "missing --epsilon");
	if (need_steps && !o->has_steps)
		return cli_usage_error(o->name, "missing --steps");
	if (need_delta && !o->has_delta)
		return cli_usage_error(o->name, "missing --delta");
	if (!need_delta && o->has_delta)
		return cli_usage_error(o->name, "--delta is not an option of '%s' (it is the result)",
				       o->name);
	if (!need_q && o->has_q)
		return cli_usage_error(o->name, "--q is not an option of '%s'", o->name);
	if (!need_sigma && o->has_sigma)
		return cli_usage_error(o->name, "--sigma is not an option of '%s'", o->name);
	if (!need_eps && o->has_eps)
		return cli_usage_error(o->name, "--epsilon is not an option of '%s'", o->name);
	if (!need_steps && o->has_steps)
		return cli_usage_error(o->name, "--steps is not an option of '%s'", o->name);
	if (o->sub != SUB_GAUSSIAN && o->has_sens)
		return cli_usage_error(o->name, "--sensitivity is only an option of 'dp gaussian'");
	return 0;
}

static void emit_json(struct vpa_json *obj)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_json_write(&b, obj, 0);
	printf("%s\n", vpa_buf_str(&b));
	vpa_buf_release(&b);
	vpa_json_free(obj);
}

/* The unsigned series is named: its epsilon is not the exact one. */
static void accountant_line(const struct opts *o)
{
	printf("accountant        RDP, Poisson-sampled Gaussian (dp_accounting order grid)%s\n",
	       o->series == VPA_RDP_UNSIGNED ? "; unsigned fractional series (upper bound)" : "");
}

/* The PLD accountant's first line: what the bound is and on which grid. */
static void pld_accountant_line(const struct opts *o)
{
	printf("accountant        PLD, Poisson-sampled Gaussian, add/remove (connect-the-dots "
	       "upper bound, interval %g)\n", o->disc);
}

static int pld_new(const struct opts *o, double sigma, struct vpa_pld **p)
{
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_pld_new(o->q, sigma, o->steps, o->disc, p, &err))
		return cli_error(&err);
	return 0;
}

/* epsilon at o->delta: the upper bound and the lower bound on the same grid */
static int pld_epsilons(const struct opts *o, const struct vpa_pld *p, double sigma,
			double *up, double *lo)
{
	*up = vpa_pld_epsilon(p, o->delta, 1);
	*lo = vpa_pld_epsilon(p, o->delta, 0);
	if (!isfinite(*up)) {
		struct vpa_err err;
		vpa_err_init(&err);
		vpa_fail(&err, VPA_ENUMERIC, NULL,
			 "delta %g is below the PLD's mass at infinity (%.3g) with noise multiplier %g: "
			 "no epsilon reaches it", o->delta, vpa_pld_inf_mass(p), sigma);
		return cli_error(&err);
	}
	return 0;
}

/* The JSON of a PLD answer: {KEY: v, [KEY_lower: lower,] "accountant": "pld",
   "discretisation": ...}; with_lower 0 for sigma (no bracket). */
static void pld_emit_json(const struct opts *o, const char *key, double v, int with_lower,
			  double lower)
{
	struct vpa_json *j = vpa_json_obj();
	char lk[32];
	vpa_json_set_num(j, key, v);
	if (with_lower) {
		snprintf(lk, sizeof(lk), "%s_lower", key);
		vpa_json_set_num(j, lk, lower);
	}
	vpa_json_set(j, "accountant", vpa_json_str("pld"));
	vpa_json_set_num(j, "discretisation", o->disc);
	emit_json(j);
}

static void pld_bracket_line(const char *what, double lo, double up)
{
	printf("exact %-11s in [%.8g, %.8g]: the bound exceeds it by at most %.2g\n", what, lo, up,
	       up - lo);
}

static int run_epsilon_pld(const struct opts *o)
{
	struct vpa_pld *p;
	double up, lo;
	int rc = pld_new(o, o->sigma, &p);
	if (rc)
		return rc;
	rc = pld_epsilons(o, p, o->sigma, &up, &lo);
	vpa_pld_free(p);
	if (rc)
		return rc;
	if (o->json) {
		pld_emit_json(o, "epsilon", up, 1, lo);
		return 0;
	}
	pld_accountant_line(o);
	printf("sampling rate q   %.10g\n", o->q);
	printf("noise multiplier  %.10g\n", o->sigma);
	printf("steps             %.15g\n", o->steps);
	printf("delta             %.10g\n", o->delta);
	printf("epsilon           %.8g  (upper bound)\n", up);
	pld_bracket_line("epsilon", lo, up);
	return 0;
}

static int run_delta_rdp(const struct opts *o)
{
	struct vpa_err err;
	double delta, order;
	vpa_err_init(&err);
	if (vpa_dp_delta_series(o->q, o->sigma, o->steps, o->eps, o->series, &delta, &order, &err))
		return cli_error(&err);
	if (o->json) {
		struct vpa_json *j = vpa_json_obj();
		vpa_json_set_num(j, "delta", delta);
		vpa_json_set_num(j, "order", order);
		vpa_json_set_str(j, "accountant", "rdp");
		emit_json(j);
		return 0;
	}
	accountant_line(o);
	printf("sampling rate q   %.10g\n", o->q);
	printf("noise multiplier  %.10g\n", o->sigma);
	printf("steps             %.15g\n", o->steps);
	printf("epsilon           %.10g\n", o->eps);
	printf("delta             %.8g\n", delta);
	printf("optimal order     %.10g\n", order);
	return 0;
}

static int run_delta(const struct opts *o)
{
	if (!o->pld)
		return run_delta_rdp(o);
	struct vpa_pld *p;
	int rc = pld_new(o, o->sigma, &p);
	if (rc)
		return rc;
	double up = vpa_pld_delta(p, o->eps, 1), lo = vpa_pld_delta(p, o->eps, 0);
	vpa_pld_free(p);
	if (o->json) {
		pld_emit_json(o, "delta", up, 1, lo);
		return 0;
	}
	pld_accountant_line(o);
	printf("sampling rate q   %.10g\n", o->q);
	printf("noise multiplier  %.10g\n", o->sigma);
	printf("steps             %.15g\n", o->steps);
	printf("epsilon           %.10g\n", o->eps);
	printf("delta             %.8g  (upper bound)\n", up);
	pld_bracket_line("delta", lo, up);
	return 0;
}

static int run_sigma_pld(const struct opts *o)
{
	struct vpa_err err;
	double sigma;
	vpa_err_init(&err);
	if (vpa_pld_sigma(o->q, o->eps, o->steps, o->delta, o->disc, &sigma, &err))
		return cli_error(&err);
	double up = 0, lo = 0;
	if (sigma > 0) {
		struct vpa_pld *p;
		int rc = pld_new(o, sigma, &p);
		if (rc)
			return rc;
		rc = pld_epsilons(o, p, sigma, &up, &lo);
		vpa_pld_free(p);
		if (rc)
			return rc;
	}
	if (o->json) {
		pld_emit_json(o, "sigma", sigma, 0, 0);
		return 0;
	}
	pld_accountant_line(o);
	printf("sampling rate q   %.10g\n", o->q);
	printf("steps             %.15g\n", o->steps);
	printf("delta             %.10g\n", o->delta);
	printf("target epsilon    %.10g\n", o->eps);
	if (sigma == 0) {
		printf("noise multiplier  0  (nothing is released: q = 0)\n");
		return 0;
	}
	printf("noise multiplier  %.8g\n", sigma);
	printf("epsilon reached   %.8g  (upper bound)\n", up);
	pld_bracket_line("epsilon", lo, up);
	return 0;
}

static int run_epsilon(const struct opts *o)
{
	if (o->pld)
		return run_epsilon_pld(o);
	struct vpa_err err;
	double eps, order;
	vpa_err_init(&err);
	if (vpa_dp_epsilon_series(o->q, o->sigma, o->steps, o->delta, o->series, &eps, &order, &err))
		return cli_error(&err);
	if (!isfinite(eps)) {
		vpa_fail(&err, VPA_ENUMERIC, NULL,
			 "epsilon is unbounded at every RDP order: noise multiplier %g is too small",
			 o->sigma);
		return cli_error(&err);
	}
	/* --table K: epsilon after K, 2K, ... steps and after the last one */
	size_t rows = 0;
	double *tab = NULL; /* (rows, 3): steps, epsilon, order */
	if (o->has_table) {
		double n = floor(o->steps / o->table) + (fmod(o->steps, o->table) != 0);
		if (n > 10000)
			return cli_usage_error(o->name, "--table %.15g gives %.15g lines (more than "
							"10000): choose a larger K", o->table, n);
		rows = (size_t)n;
		tab = xcalloc(rows * 3, sizeof(*tab));
		for (size_t i = 0; i < rows; i++) {
			double t = i + 1 < rows ? (double)(i + 1) * o->table : o->steps;
			tab[3 * i] = t;
			if (vpa_dp_epsilon_series(o->q, o->sigma, t, o->delta, o->series, &tab[3 * i + 1],
						  &tab[3 * i + 2], &err)) {
				free(tab);
				return cli_error(&err);
			}
		}
	}
	if (o->json) {
		struct vpa_json *j = vpa_json_obj();
		vpa_json_set_num(j, "epsilon", eps);
		vpa_json_set_num(j, "order", order);
		if (o->has_table) {
			struct vpa_json *a = vpa_json_arr();
			for (size_t i = 0; i < rows; i++) {
				struct vpa_json *r = vpa_json_obj();
				vpa_json_set_num(r, "steps", tab[3 * i]);
				vpa_json_set_num(r, "epsilon", tab[3 * i + 1]); /* inf -> null */
				vpa_json_set_num(r, "order", tab[3 * i + 2]);
				vpa_json_push(a, r);
			}
			vpa_json_set(j, "table", a);
		}
		free(tab);
		emit_json(j);
		return 0;
	}
	accountant_line(o);
	printf("sampling rate q   %.10g\n", o->q);
	printf("noise multiplier  %.10g\n", o->sigma);
	printf("steps             %.15g\n", o->steps);
	printf("delta             %.10g\n", o->delta);
	printf("epsilon           %.8g\n", eps);
	printf("optimal order     %.10g\n", order);
	if (o->has_table) {
		printf("\n%15s  %14s  %s\n", "steps", "epsilon", "order");
		for (size_t i = 0; i < rows; i++) {
			if (isfinite(tab[3 * i + 1]))
				printf("%15.15g  %14.8g  %.10g\n", tab[3 * i], tab[3 * i + 1], tab[3 * i + 2]);
			else
				printf("%15.15g  %14s  -\n", tab[3 * i], "unbounded");
		}
	}
	free(tab);
	return 0;
}

static int run_sigma(const struct opts *o)
{
	if (o->pld)
		return run_sigma_pld(o);
	struct vpa_err err;
	double sigma, eps = 0, order = 0;
	vpa_err_init(&err);
	if (vpa_dp_sigma_series(o->q, o->eps, o->steps, o->delta, o->series, &sigma, &err))
		return cli_error(&err);
	if (sigma > 0 &&
	    vpa_dp_epsilon_series(o->q, sigma, o->steps, o->delta, o->series, &eps, &order, &err))
		return cli_error(&err);
	if (o->json) {
		struct vpa_json *j = vpa_json_obj();
		vpa_json_set_num(j, "sigma", sigma);
		emit_json(j);
		return 0;
	}
	accountant_line(o);
	printf("sampling rate q   %.10g\n", o->q);
	printf("steps             %.15g\n", o->steps);
	printf("delta             %.10g\n", o->delta);
	printf("target epsilon    %.10g\n", o->eps);
	if (sigma == 0) {
		printf("noise multiplier  0  (nothing is released: q = 0)\n");
		return 0;
	}
	printf("noise multiplier  %.8g\n", sigma);
	printf("epsilon reached   %.8g at order %.10g\n", eps, order);
	return 0;
}

static int run_gaussian(const struct opts *o)
{
	struct vpa_err err;
	double sens = o->has_sens ? o->sens : 1, sigma;
	vpa_err_init(&err);
	if (vpa_gauss_analytic_sigma(o->eps, o->delta, sens, &sigma, &err))
		return cli_error(&err);
	double classic = vpa_gauss_classic_sigma(o->eps, o->delta, sens);
	int valid = o->eps < 1;
	if (o->json) {
		struct vpa_json *j = vpa_json_obj();
		vpa_json_set_num(j, "sigma", sigma);
		vpa_json_set_num(j, "sigma_classic", classic);
		vpa_json_set(j, "classic_valid", vpa_json_bool(valid));
		emit_json(j);
		return 0;
	}
	printf("epsilon           %.10g\n", o->eps);
	printf("delta             %.10g\n", o->delta);
	printf("sensitivity       %.10g\n", sens);
	printf("sigma (analytic)  %.8g  Balle & Wang 2018\n", sigma);
	printf("sigma (classical) %.8g  S sqrt(2 ln(1.25/delta)) / epsilon%s\n", classic,
	       valid ? "" : "  NOT VALID: Dwork & Roth Thm 3.22 needs epsilon < 1");
	return 0;
}

int cmd_dp(int argc, char **argv)
{
	struct opts o;
	memset(&o, 0, sizeof o);
	if (argc < 2)
		return cli_usage_error("dp", "missing subcommand: epsilon, sigma, delta, gaussian or "
					     "audit");
	const char *s = argv[1];
	if (!strcmp(s, "-h") || !strcmp(s, "--help") || !strcmp(s, "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(s, "audit")) /* cli/cmd_dp_audit.c: empirical lower bounds */
		return cmd_dp_audit(argc - 1, argv + 1);
	if (!strcmp(s, "epsilon")) {
		o.sub = SUB_EPSILON;
		o.name = "dp epsilon";
	} else if (!strcmp(s, "sigma")) {
		o.sub = SUB_SIGMA;
		o.name = "dp sigma";
	} else if (!strcmp(s, "gaussian")) {
		o.sub = SUB_GAUSSIAN;
		o.name = "dp gaussian";
	} else if (!strcmp(s, "delta")) {
		o.sub = SUB_DELTA;
		o.name = "dp delta";
	} else {
		return cli_usage_error("dp", "unknown subcommand '%s' (epsilon, sigma, delta, gaussian "
					     "or audit)", s);
	}
	vpa_cmd = o.name;
	int rc = parse(argc - 1, argv + 1, &o);
	if (rc == -1)
		return 0; /* --help */
	if (rc)
		return rc;
	switch (o.sub) {
	case SUB_EPSILON:
		return run_epsilon(&o);
	case SUB_SIGMA:
		return run_sigma(&o);
	case SUB_DELTA:
		return run_delta(&o);
	default:
		return run_gaussian(&o);
	}
}
