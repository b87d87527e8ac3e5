/*
 * cli/cmd_metrics.c - `vpaudit metrics`: evaluate one score set.
 *
 * Reads the trials (formats/io.h), sorts each class once (radix), runs every
 * metric on the sorted arrays (metrics/metrics.h), optionally a bootstrap CI,
 * DET points and plots, and prints a table or one JSON object.  All output
 * (files and stdout) is produced only after every computation succeeded.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "formats/io.h"
#include "attacks/attacks.h"
#include "base/json.h"
#include "metrics/metrics.h"
#include "reports/report.h"

static const char usage_text[] =
	"usage: vpaudit metrics SCORES [--key TRIALS] [options]\n"
	"       vpaudit metrics --tar FILE --non FILE [options]\n"
	"\n"
	"SCORES has lines 'score label' or 'enroll test score label' (label target/nontarget,\n"
	"tar/non or 1/0); with --key, SCORES has Kaldi lines 'enroll test score' and TRIALS\n"
	"'enroll test target|nontarget', joined on (enroll, test).  --tar/--non take one score\n"
	"per line or a 1-D .npy (float32/float64).\n"
	"\n"
	"options:\n"
	"  --json             one JSON object on stdout instead of the table (with\n"
	"                     linkability_hist, linkability_reliable, unreliable, warnings)\n"
	"  --omega W          linkability prior ratio (default 1)\n"
	"  --bins N           linkability bins (default min(floor(n_target/10), 100))\n"
	"  --p-target P       prior for min DCF (default 0.01, unit costs)\n"
	"  --det FILE         write DET points: threshold p_miss p_fa\n"
	"  --plot DIR         DET curve and linkability figure as SVG and PDF (gnuplot)\n"
	"  --ci LEVEL         BCa bootstrap confidence intervals (e.g. 0.95) for EER,\n"
	"                     Cllr_min, linkability, sweep EER; resamples identities when\n"
	"                     ids are given\n"
	"  --ci-reps N        bootstrap replicates (default 1000; also of the 95% sweep EER\n"
	"                     interval that decides 'anti-correlated', drawn when the sweep\n"
	"                     EER is above 50%)\n"
	"  --seed N           bootstrap seed (default 1)\n"
	"  --threads N        threads for the sort and the metrics (default: online\n"
	"                     CPUs; every value is the same for any N)\n"
	"  --pi-link N1,N2,.. closed-set linkability pi_link (Vauquier et al. 2025) at each\n"
	"                     N' (a number >= 1, or 'all' = every enrolment), exact\n"
	"                     estimator, chance 1/N', with a cluster-robust t interval over\n"
	"                     test speakers at the --ci level (default 0.95); needs the\n"
	"                     full test x enrolment matrix (4 columns or --key), each test\n"
	"                     id with exactly one target enrolment\n"
	"  -h, --help         this text\n"
	"\n"
	"Scores are 'higher = same source'; Cllr reads them as natural-log LRs.  Scores\n"
	"whose sweep EER lies above 50% with its 95% interval are anti-correlated with\n"
	"identity (said, with the EER of the negated scores, eer_flipped).\n"
	"Exit status: 0 ok, 1 bad input, 2 usage.\n";

struct opts {
	const char *scores, *key, *tar, *non, *det, *plot;
	int json;
	struct vpa_metrics_opts m;
	double ci_level;
	unsigned long ci_reps, seed;
	const char *pi_link;                 /* the --pi-link text */
	size_t np[64];                       /* its N' (0 = all) */
	size_t n_np;
};

static const char *source_name(const struct opts *o)
{
	return o->scores ? o->scores : o->tar;
}

/* --pi-link "2,5,all": numbers >= 1 or 'all', at most 64. */
static int parse_pilink(const char *arg, struct opts *o)
{
	const char *p = arg;
	o->n_np = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		char tok[32];
		if (!len || len >= sizeof(tok) || o->n_np == 64)
			return cli_usage_error("metrics",
					       "--pi-link expects N1,N2,... (numbers >= 1 or 'all', at most "
					       "64), got '%s'", arg);
		memcpy(tok, p, len);
		tok[len] = 0;
		unsigned long v = 0;
		if (!strcmp(tok, "all"))
			v = 0;
		else if (cli_ulong("--pi-link", tok, 1, 1000000000UL, &v))
			return 2;
		o->np[o->n_np++] = v;
		if (!p[len])
			break;
		p += len + 1;
	}
	o->pi_link = arg;
	return 0;
}

/*
 * pi_link at each N' of o->np from the trials' ids: the full test x
 * enrolment matrix, each test id with exactly one target enrolment (its
 * speaker, the interval's cluster).  Before any sorting (the ids index the
 * reader's order).  Errors name an example pair.
 */
static int pilink_compute(const struct opts *o, const struct vpa_trials *tr,
			  struct vpa_legal_est *est, struct vpa_err *err)
{
	struct vpa_loc where = {source_name(o), 0, 0};
	if (!tr->tar_e || !tr->ids_e)
		return vpa_fail(err, VPA_EINPUT, &where,
				"--pi-link needs enrolment and test ids: the 4-column form "
				"'enroll test score label' or --key");
	size_t ne = tr->n_ids_e, nt = tr->n_ids_t;
	double *S = xmalloc(xmul(xmul(ne, nt), sizeof(double)));
	unsigned char *seen = xcalloc(xmul(ne, nt), 1);
	uint32_t *truth = xmalloc(xmul(nt, sizeof(uint32_t)));
	size_t *m = xmalloc(xmul(nt, sizeof(size_t)));
	int rc = 0;
	for (size_t t = 0; t < nt; t++)
		truth[t] = UINT32_MAX;
	for (int c = 0; c < 2 && !rc; c++) {
		size_t n = c ? tr->n_non : tr->n_tar;
		const uint32_t *E = c ? tr->non_e : tr->tar_e, *T = c ? tr->non_t : tr->tar_t;
		const double *x = c ? tr->non : tr->tar;
		for (size_t i = 0; i < n; i++) {
			size_t cell = (size_t)T[i] * ne + E[i];
			if (seen[cell]) {
				rc = vpa_fail(err, VPA_EINPUT, &where,
					      "--pi-link: the pair (%s, %s) appears twice",
					      tr->ids_e[E[i]], tr->ids_t[T[i]]);
				break;
			}
			seen[cell] = 1;
			S[cell] = x[i];
			if (c)
				continue;
			if (truth[T[i]] != UINT32_MAX) {
				rc = vpa_fail(err, VPA_EINPUT, &where,
					      "--pi-link: test '%s' has two target enrolments, '%s' and "
					      "'%s' (expected exactly one)", tr->ids_t[T[i]],
					      tr->ids_e[truth[T[i]]], tr->ids_e[E[i]]);
				break;
			}
			truth[T[i]] = E[i];
		}
	}
	for (size_t t = 0; t < nt && !rc; t++) {
		if (truth[t] == UINT32_MAX) {
			rc = vpa_fail(err, VPA_EINPUT, &where,
				      "--pi-link: test '%s' has no target enrolment (expected exactly "
				      "one)", tr->ids_t[t]);
			break;
		}
		for (size_t e = 0; e < ne; e++)
			if (!seen[t * ne + e]) {
				rc = vpa_fail(err, VPA_EINPUT, &where,
					      "--pi-link needs the full test x enrolment matrix: the "
					      "pair (%s, %s) is missing", tr->ids_e[e], tr->ids_t[t]);
				break;
			}
		if (!rc)
			m[t] = vpa_pilink_beaten(S + t * ne, ne, truth[t]);
	}
	for (size_t g = 0; g < o->n_np && !rc; g++) {
		size_t np = o->np[g] ? o->np[g] : ne;
		if (np > ne) {
			rc = vpa_fail(err, VPA_EINPUT, &where,
				      "--pi-link: N' = %zu is larger than the %zu enrolment speakers", np,
				      ne);
			break;
		}
		rc = vpa_pilink(m, truth, nt, ne, ne, np, o->ci_level > 0 ? o->ci_level : 0.95,
				&est[g], err);
	}
	free(S);
	free(seen);
	free(truth);
	free(m);
	return rc;
}

/* Sort one class; carry its id columns along when present. */
static void sort_class(double *x, uint32_t *e, uint32_t *t, size_t n, int threads)
{
	if (!e) {
		vpa_sort_scores_threads(x, NULL, n, threads);
		return;
	}
	uint32_t *perm = xmalloc(xmul(n, sizeof(*perm)));
	uint32_t *tmp = xmalloc(xmul(n, sizeof(*tmp)));
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	vpa_sort_scores(x, perm, n);
	for (size_t i = 0; i < n; i++)
		tmp[i] = e[perm[i]];
	memcpy(e, tmp, n * sizeof(*e));
	for (size_t i = 0; i < n; i++)
		tmp[i] = t[perm[i]];
	memcpy(t, tmp, n * sizeof(*t));
	free(tmp);
	free(perm);
}

static int load(const struct opts *o, struct vpa_trials *tr, struct vpa_err *err)
{
	if (o->tar) {
		int rc = vpa_read_score_list_threads(o->tar, &tr->tar, &tr->n_tar, o->m.threads, err);
		if (!rc)
			rc = vpa_read_score_list_threads(o->non, &tr->non, &tr->n_non, o->m.threads,
							 err);
		return rc;
	}
	if (o->key)
		return vpa_read_scores_key(o->scores, o->key, tr, err);
	return vpa_read_scores(o->scores, tr, err);
}

struct det_file {
	struct vpa_buf *b;
};

static int det_emit(void *ctx, double thr, double p_miss, double p_fa)
{
	struct vpa_buf *b = ctx;
	if (isinf(thr))
		vpa_buf_printf(b, "inf %.10g %.10g\n", p_miss, p_fa);
	else
		vpa_buf_printf(b, "%.17g %.10g %.10g\n", thr, p_miss, p_fa);
	return 0;
}

static struct vpa_json *num_array(const double *x, size_t n)
{
	struct vpa_json *a = vpa_json_arr();
	for (size_t i = 0; i < n; i++)
		vpa_json_push(a, vpa_json_num(x[i]));
	return a;
}

static struct vpa_json *det_figure(const struct vpa_scores *s, const char *name, double eer)
{
	enum { MAXP = 300 };
	double pm[MAXP], pf[MAXP];
	size_t k = vpa_det_sample(s, MAXP, pm, pf);
	struct vpa_json *fig = vpa_json_obj(), *series = vpa_json_arr(), *one = vpa_json_obj();
	vpa_json_set_str(fig, "type", "det");
	vpa_json_set_str(fig, "id", "det");
	vpa_json_set_str(fig, "title", "DET curve");
	vpa_json_set_str(one, "name", name);
	vpa_json_set(one, "p_miss", num_array(pm, k));
	vpa_json_set(one, "p_fa", num_array(pf, k));
	vpa_json_set_num(one, "eer", eer);
	vpa_json_push(series, one);
	vpa_json_set(fig, "series", series);
	return fig;
}

static struct vpa_json *link_figure(const struct vpa_linkability *l, double omega)
{
	struct vpa_json *fig = vpa_json_obj();
	vpa_json_set_str(fig, "type", "linkability");
	vpa_json_set_str(fig, "id", "linkability");
	vpa_json_set_str(fig, "title", "Linkability");
	vpa_json_set(fig, "centers", num_array(l->centers, l->n_bins));
	vpa_json_set(fig, "p_mated", num_array(l->p_mated, l->n_bins));
	vpa_json_set(fig, "p_non", num_array(l->p_non, l->n_bins));
	vpa_json_set(fig, "d_local", num_array(l->d_local, l->n_bins));
	vpa_json_set_num(fig, "dsys", l->dsys);
	vpa_json_set_num(fig, "omega", omega);
	return fig;
}

/* Render a figure to SVG and PDF bytes (nothing written yet). */
static int render(const struct vpa_json *fig, struct vpa_buf *svg, struct vpa_buf *pdf,
		  struct vpa_err *err)
{
	int rc = vpa_plot_render(fig, "svg", svg, err);
	if (!rc)
		rc = vpa_plot_render(fig, "pdf", pdf, err);
	return rc;
}

static int write_bytes(const char *path, const struct vpa_buf *b, struct vpa_err *err)
{
	struct vpa_atomic a;
	vpa_tmp_clean_stale(path);
	FILE *f = vpa_atomic_open(path, &a, err);
	if (!f)
		return err->status;
	if (b->len)
		fwrite(b->data, 1, b->len, f);
	return vpa_atomic_commit(&a, err);
}

/* Warnings are collected first (into the JSON "warnings"), printed at the end. */
static void warn_emit(void *ctx, const char *msg)
{
	vpa_json_push(ctx, vpa_json_str(msg));
}

static void unrel_emit(void *ctx, const char *path, const char *reason)
{
	vpa_json_set_str(ctx, path, reason);
}

static struct vpa_json *to_json(const struct opts *o, const struct vpa_metrics *m,
				const struct vpa_ci *ci, size_t n_bins, const struct vpa_json *warnings,
				const struct vpa_legal_est *pl)
{
	struct vpa_json *j = vpa_json_obj(), *z = vpa_json_obj();
	vpa_json_set_num(j, "n_target", (double)m->n_tar);
	vpa_json_set_num(j, "n_nontarget", (double)m->n_non);
	vpa_json_set_num(j, "eer", m->eer);
	vpa_json_set_num(j, "eer_threshold", m->eer_threshold);
	vpa_json_set_num(j, "eer_sweep", m->eer_sweep);
	vpa_json_set_num(j, "eer_sweep_threshold", m->eer_sweep_threshold);
	vpa_json_set_num(j, "cllr", m->cllr);
	vpa_json_set_num(j, "cllr_min", m->cllr_min);
	vpa_json_set(j, "linkability",
		     m->linkability_defined ? vpa_json_num(m->linkability) : vpa_json_null());
	vpa_json_set(j, "linkability_hist", vpa_json_num(m->linkability_hist)); /* NAN -> null */
	vpa_json_set(j, "linkability_reliable", vpa_json_bool(m->linkability_reliable));
	vpa_json_set(j, "linkability_reason",
		     m->linkability_reliable ? vpa_json_null() : vpa_json_str(m->linkability_why));
	vpa_json_set_num(j, "linkability_bins", (double)n_bins);
	vpa_json_set_num(j, "omega", o->m.omega);
	vpa_json_set_num(j, "min_dcf", m->min_dcf);
	vpa_json_set_num(j, "min_dcf_threshold", m->min_dcf_threshold);
	vpa_json_set_num(j, "p_target", o->m.p_target);
	vpa_json_set_num(z, "dece", m->zebra.dece);
	vpa_json_set_num(z, "log10_lr_worst", m->zebra.log10_lr_worst);
	char cat[2] = {m->zebra.category, 0};
	vpa_json_set_str(z, "category", cat);
	vpa_json_set(j, "zebra", z);
	vpa_json_set_num(j, "tied_fraction", m->tied_fraction);
	vpa_json_set_num(j, "eer_flipped", m->eer_flipped);
	vpa_json_set_num(j, "cllr_min_flipped", m->cllr_min_flipped);
	vpa_json_set_num(j, "min_dcf_flipped", m->min_dcf_flipped);
	vpa_json_set(j, "anti_correlated", vpa_json_bool(m->anti_correlated));
	struct vpa_json *ac = vpa_json_obj(), *p = vpa_json_null();
	if (isfinite(m->eer_sweep_lo)) {
		vpa_json_free(p);
		p = vpa_json_arr();
		vpa_json_push(p, vpa_json_num(m->eer_sweep_lo));
		vpa_json_push(p, vpa_json_num(m->eer_sweep_hi));
	}
	vpa_json_set(ac, "eer_sweep_ci", p);
	vpa_json_set(ac, "level", vpa_json_num(m->eer_sweep_level)); /* NAN -> null */
	vpa_json_set(j, "anti_correlation", ac);
	if (ci) {
		struct vpa_json *c = vpa_json_obj(), *a;
		vpa_json_set_num(c, "level", o->ci_level);
		vpa_json_set_str(c, "method", ci->by_identity ? "bootstrap-identities" : "bootstrap-trials");
		vpa_json_set_num(c, "reps", (double)ci->reps);
		vpa_json_set_num(c, "reps_used", (double)ci->reps_used);
		vpa_json_set_num(c, "linkability_reps_used", (double)ci->link_reps_used);
		vpa_json_set_num(c, "seed", (double)o->seed);
		vpa_json_set_str(c, "interval", "BCa");
		vpa_json_set(c, "extended", vpa_ci_extended_json(ci));
		double v[4][2] = {{ci->eer_lo, ci->eer_hi}, {ci->cllr_min_lo, ci->cllr_min_hi},
				  {ci->link_lo, ci->link_hi}, {ci->eer_sweep_lo, ci->eer_sweep_hi}};
		const char *names[4] = {"eer", "cllr_min", "linkability", "eer_sweep"};
		for (int i = 0; i < 4; i++) {
			a = vpa_json_arr();
			vpa_json_push(a, vpa_json_num(v[i][0]));
			vpa_json_push(a, vpa_json_num(v[i][1]));
			vpa_json_set(c, names[i], a);
		}
		vpa_json_set(j, "ci", c);
	}
	struct vpa_json *un = vpa_json_obj();
	struct vpa_metrics mc = *m;
	vpa_metrics_reliability(&mc, &o->m, unrel_emit, un);
	vpa_json_set(j, "unreliable", un);
	vpa_json_set(j, "warnings", vpa_json_clone(warnings));
	if (o->pi_link) {
		/* keyed by N' as given ("all" stays "all"); chance 1/N' */
		struct vpa_json *v = vpa_json_obj(), *ch = vpa_json_obj(), *iv = vpa_json_obj();
		const char *p = o->pi_link;
		for (size_t g = 0; g < o->n_np; g++) {
			size_t len = strcspn(p, ",");
			char key[32];
			snprintf(key, sizeof(key), "%.*s", (int)len, p);
			p += len + (p[len] != 0);
			vpa_json_set_num(v, key, pl[g].value);
			vpa_json_set_num(ch, key, pl[g].chance);
			struct vpa_json *a = vpa_json_arr();
			vpa_json_push(a, vpa_json_num(pl[g].lo)); /* NAN -> null */
			vpa_json_push(a, vpa_json_num(pl[g].hi));
			vpa_json_set(iv, key, a);
		}
		vpa_json_set(j, "pi_link", v);
		vpa_json_set(j, "pi_link_chance", ch);
		vpa_json_set(j, "pi_link_ci", iv);
		struct vpa_json *info = vpa_json_obj();
		vpa_json_set_num(info, "level", o->ci_level > 0 ? o->ci_level : 0.95);
		vpa_json_set_str(info, "interval", "cluster-robust (CR1) t over test speakers");
		vpa_json_set_num(info, "test_items", (double)pl[0].n_items);
		vpa_json_set_num(info, "test_speakers", (double)pl[0].n_spk);
		vpa_json_set(j, "pi_link_info", info);
	}
	return j;
}

/* "  METRIC  REASON" lines of the metrics that cannot be trusted. */
static void unrel_line(void *ctx, const char *path, const char *reason)
{
	if (strcmp(path, "linkability")) /* printed under its value */
		vpa_buf_printf(ctx, "  %-14s %s\n", path, reason);
}

static void print_table(struct vpa_buf *b, const struct opts *o, const struct vpa_metrics *m,
			const struct vpa_ci *ci, size_t n_bins, const struct vpa_legal_est *pl)
{
	if (o->scores)
		vpa_buf_printf(b, "scores          %s%s%s\n", o->scores, o->key ? " joined with " : "",
			       o->key ? o->key : "");
	else
		vpa_buf_printf(b, "scores          target %s, non-target %s\n", o->tar, o->non);
	vpa_buf_printf(b, "trials          %zu target, %zu non-target\n", m->n_tar, m->n_non);
	vpa_buf_printf(b, "EER (ROCCH)     %8.4f %%   threshold %.6g\n", 100 * m->eer, m->eer_threshold);
	vpa_buf_printf(b, "EER (sweep)     %8.4f %%   threshold %.6g\n", 100 * m->eer_sweep,
		       m->eer_sweep_threshold);
	vpa_buf_printf(b, "Cllr            %8.4f bits\n", m->cllr);
	vpa_buf_printf(b, "Cllr_min        %8.4f bits\n", m->cllr_min);
	vpa_buf_printf(b, "min DCF         %8.4f     p_target %g, threshold %.6g\n", m->min_dcf,
		       o->m.p_target, m->min_dcf_threshold);
	if (m->linkability_defined) {
		vpa_buf_printf(b, "linkability     %8.4f     D<->sys, omega %g, %zu bins\n", m->linkability,
			       o->m.omega, n_bins);
		if (isfinite(m->linkability_hist))
			vpa_buf_printf(b, "linkability_hist %7.4f     sum of D(bin) P(mated in bin)\n",
				       m->linkability_hist);
		else
			vpa_buf_printf(b, "linkability_hist undefined\n");
		if (!m->linkability_reliable)
			vpa_buf_printf(b, "  unreliable:   %s\n", m->linkability_why);
	} else {
		vpa_buf_printf(b, "linkability     undefined  (fewer than 10 target scores)\n");
	}
	vpa_buf_printf(b, "ZEBRA D_ECE     %8.4f bits\n", m->zebra.dece);
	vpa_buf_printf(b, "ZEBRA log10 LR  %8.4f     worst case, category %c\n", m->zebra.log10_lr_worst,
		       m->zebra.category);
	vpa_buf_printf(b, "EER (reversed)  %8.4f %%   the scores negated: what an attacker who reverses them reaches\n",
		       100 * m->eer_flipped);
	if (m->anti_correlated)
		vpa_buf_printf(b, "ANTI-CORRELATED with identity: sweep EER %g%% interval [%.4f %%, %.4f %%] above 50%%\n",
			       100 * m->eer_sweep_level, 100 * m->eer_sweep_lo, 100 * m->eer_sweep_hi);
	struct vpa_buf u;
	vpa_buf_init(&u);
	struct vpa_metrics mc = *m;
	vpa_metrics_reliability(&mc, &o->m, unrel_line, &u);
	if (u.len)
		vpa_buf_printf(b, "cannot be trusted (metrics/README.md \"Reliability\"):\n%s", u.data);
	vpa_buf_release(&u);
	if (ci) {
		vpa_buf_printf(b, "%g%% confidence intervals: BCa bootstrap over %s, %zu replicates "
				  "(%zu used), seed %lu\n",
			       100 * o->ci_level, ci->by_identity ? "enrolment and test identities" : "trials",
			       ci->reps, ci->reps_used, o->seed);
		vpa_buf_printf(b, "  EER           [%.4f %%, %.4f %%]\n", 100 * ci->eer_lo, 100 * ci->eer_hi);
		vpa_buf_printf(b, "  Cllr_min      [%.4f, %.4f] bits\n", ci->cllr_min_lo, ci->cllr_min_hi);
		vpa_buf_printf(b, "  EER (sweep)   [%.4f %%, %.4f %%]\n", 100 * ci->eer_sweep_lo,
			       100 * ci->eer_sweep_hi);
		if (m->linkability_defined && ci->link_reps_used > 0)
			vpa_buf_printf(b, "  linkability   [%.4f, %.4f]  (%zu replicates with >= 10 target scores)\n",
				       ci->link_lo, ci->link_hi, ci->link_reps_used);
		else if (m->linkability_defined)
			vpa_buf_printf(b, "  linkability   undefined in every replicate\n");
	}
	if (o->pi_link) {
		vpa_buf_printf(b, "pi_link (closed-set linkability, exact): %zu test items of %zu "
				  "speakers; %g%% cluster-robust t interval over speakers\n",
			       pl[0].n_items, pl[0].n_spk, 100 * (o->ci_level > 0 ? o->ci_level : 0.95));
		for (size_t g = 0; g < o->n_np; g++) {
			vpa_buf_printf(b, "  N' = %-8zu %8.4f     chance %.4f", pl[g].n_set, pl[g].value,
				       pl[g].chance);
			if (isfinite(pl[g].lo))
				vpa_buf_printf(b, "   [%.4f, %.4f]\n", pl[g].lo, pl[g].hi);
			else
				vpa_buf_printf(b, "   (no interval: fewer than 3 speakers)\n");
		}
	}
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_KEY = 256, O_TAR, O_NON, O_JSON, O_OMEGA, O_BINS, O_PT, O_DET, O_PLOT, O_CI,
	       O_REPS, O_SEED, O_PILINK, O_THREADS };
	static const struct option lo[] = {
		{"key", required_argument, 0, O_KEY},   {"tar", required_argument, 0, O_TAR},
		{"non", required_argument, 0, O_NON},   {"json", no_argument, 0, O_JSON},
		{"omega", required_argument, 0, O_OMEGA}, {"bins", required_argument, 0, O_BINS},
		{"p-target", required_argument, 0, O_PT}, {"det", required_argument, 0, O_DET},
		{"plot", required_argument, 0, O_PLOT}, {"ci", required_argument, 0, O_CI},
		{"ci-reps", required_argument, 0, O_REPS}, {"seed", required_argument, 0, O_SEED},
		{"pi-link", required_argument, 0, O_PILINK},
		{"threads", required_argument, 0, O_THREADS},
		{"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
	unsigned long ul;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_KEY: o->key = optarg; break;
		case O_TAR: o->tar = optarg; break;
		case O_NON: o->non = optarg; break;
		case O_JSON: o->json = 1; break;
		case O_OMEGA:
			if (cli_double("--omega", optarg, 0, INFINITY, 1, &o->m.omega))
				return 2;
			break;
		case O_BINS:
			if (cli_ulong("--bins", optarg, 1, 1000000, &ul))
				return 2;
			o->m.bins = ul;
			break;
		case O_PT:
			if (cli_double("--p-target", optarg, 0, 1, 1, &o->m.p_target) || o->m.p_target >= 1) {
				if (o->m.p_target >= 1)
					cli_errorf("--p-target must be in (0, 1), got '%s'", optarg);
				return 2;
			}
			break;
		case O_DET: o->det = optarg; break;
		case O_PLOT: o->plot = optarg; break;
		case O_CI:
			if (cli_double("--ci", optarg, 0, 1, 1, &o->ci_level) || o->ci_level >= 1) {
				if (o->ci_level >= 1)
					cli_errorf("--ci must be in (0, 1), got '%s'", optarg);
				return 2;
			}
			break;
		case O_REPS:
			if (cli_ulong("--ci-reps", optarg, 10, 1000000, &o->ci_reps))
				return 2;
			break;
		case O_SEED:
			if (cli_ulong("--seed", optarg, 0, ULONG_MAX, &o->seed))
				return 2;
			break;
		case O_PILINK:
			if (parse_pilink(optarg, o))
				return 2;
			break;
		case O_THREADS:
			if (cli_ulong("--threads", optarg, 1, 256, &ul))
				return 2;
			o->m.threads = (int)ul;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			return cli_usage_error("metrics", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("metrics", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->scores = argv[optind++];
	if (optind < argc)
		return cli_usage_error("metrics", "unexpected argument '%s'", argv[optind]);
	if (o->pi_link && o->tar)
		return cli_usage_error("metrics", "--pi-link needs SCORES with ids, not --tar/--non");
	if (o->tar || o->non) {
		if (!o->tar || !o->non)
			return cli_usage_error("metrics", "--tar and --non go together");
		if (o->scores || o->key)
			return cli_usage_error("metrics", "give either SCORES or --tar/--non, not both");
	} else if (!o->scores) {
		return cli_usage_error("metrics", "no score file given");
	}
	return 0;
}

int cmd_metrics(int argc, char **argv)
{
	struct opts o;
	memset(&o, 0, sizeof(o));
	vpa_metrics_opts_init(&o.m);
	o.ci_reps = 1000;
	o.seed = 1;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	o.m.threads = ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;

	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_trials tr;
	vpa_trials_init(&tr);
	struct vpa_metrics m;
	struct vpa_ci ci;
	struct vpa_linkability link = {0};
	struct vpa_json *figs[2] = {NULL, NULL}, *warnings = NULL;
	struct vpa_buf out, det, svg[2], pdf[2];
	vpa_buf_init(&out);
	vpa_buf_init(&det);
	for (int i = 0; i < 2; i++) {
		vpa_buf_init(&svg[i]);
		vpa_buf_init(&pdf[i]);
	}
	int have_ci = 0;
	size_t n_bins = 0;
	struct vpa_legal_est pl[64];

	if ((rc = load(&o, &tr, &err)))
		goto out;
	struct vpa_loc where = {source_name(&o), 0, 0};
	if (tr.n_tar == 0) {
		rc = vpa_fail(&err, VPA_EINPUT, &where, "no target trials: every metric needs both classes");
		goto out;
	}
	if (tr.n_non == 0) {
		rc = vpa_fail(&err, VPA_EINPUT, &where, "no non-target trials: every metric needs both classes");
		goto out;
	}
	if (o.ci_level > 0 && (tr.n_tar > UINT32_MAX || tr.n_non > UINT32_MAX)) {
		rc = vpa_fail(&err, VPA_EINPUT, &where, "--ci supports at most 2^32 trials per class");
		goto out;
	}
	if (o.pi_link && (rc = pilink_compute(&o, &tr, pl, &err)))
		goto out;
	/* ids travel with the scores: any bootstrap (--ci, or the sweep EER's
	 * interval for anti-correlation) resamples identities */
	int ids = tr.tar_e && tr.n_tar <= UINT32_MAX && tr.n_non <= UINT32_MAX;
	sort_class(tr.tar, ids ? tr.tar_e : NULL, tr.tar_t, tr.n_tar, o.m.threads);
	sort_class(tr.non, ids ? tr.non_e : NULL, tr.non_t, tr.n_non, o.m.threads);
	struct vpa_scores s = {tr.tar, tr.n_tar, tr.non, tr.n_non, NULL, NULL};
	if ((rc = vpa_metrics_all(&s, &o.m, &m, &err)))
		goto out;
	n_bins = o.m.bins ? o.m.bins : (tr.n_tar / 10 < 100 ? tr.n_tar / 10 : 100);
	struct vpa_ci_opts co = {.level = o.ci_level, .reps = o.ci_reps, .seed = o.seed,
				 .omega = o.m.omega, .bins = o.m.bins};
	if (ids) {
		co.tar_e = tr.tar_e;
		co.tar_t = tr.tar_t;
		co.non_e = tr.non_e;
		co.non_t = tr.non_t;
		co.n_e = tr.n_ids_e;
		co.n_t = tr.n_ids_t;
	}
	if (o.ci_level > 0) {
		if ((rc = vpa_bootstrap_ci(&s, &co, &ci, &err)))
			goto out;
		have_ci = 1;
	}
	/* reversed scores (metrics/README.md "Reversed scores") */
	int own = have_ci && o.ci_level == VPA_REVERSAL_LEVEL;
	if ((rc = vpa_metrics_reversal(tr.tar, tr.n_tar, tr.non, tr.n_non, &o.m, &co,
				       own ? &ci : NULL, &m, NULL, &err)))
		goto out;
	if (o.det)
		vpa_det_walk(&s, det_emit, &det);
	if (o.plot) {
		figs[0] = det_figure(&s, source_name(&o), m.eer);
		if ((rc = render(figs[0], &svg[0], &pdf[0], &err)))
			goto out;
		if (m.linkability_defined) {
			if ((rc = vpa_linkability(&s, o.m.omega, o.m.bins, &link, &err)))
				goto out;
			figs[1] = link_figure(&link, o.m.omega);
			if ((rc = render(figs[1], &svg[1], &pdf[1], &err)))
				goto out;
		}
	}
	warnings = vpa_json_arr();
	vpa_sanity_warnings(source_name(&o), &m, 0, warn_emit, warnings);
	if (o.json) {
		struct vpa_json *j = to_json(&o, &m, have_ci ? &ci : NULL, n_bins, warnings, pl);
		vpa_json_write(&out, j, 2);
		vpa_buf_puts(&out, "\n");
		vpa_json_free(j);
	} else {
		print_table(&out, &o, &m, have_ci ? &ci : NULL, n_bins, pl);
	}

	/* Everything computed: now write. */
	if (o.det && (rc = write_bytes(o.det, &det, &err)))
		goto out;
	if (o.plot) {
		if ((rc = vpa_mkdirs(o.plot, &err)))
			goto out;
		const char *names[2] = {"det", "linkability"};
		for (int i = 0; i < 2 && figs[i]; i++) {
			struct vpa_buf p;
			vpa_buf_init(&p);
			vpa_buf_printf(&p, "%s/%s.svg", o.plot, names[i]);
			rc = write_bytes(vpa_buf_str(&p), &svg[i], &err);
			p.len = 0;
			vpa_buf_printf(&p, "%s/%s.pdf", o.plot, names[i]);
			if (!rc)
				rc = write_bytes(vpa_buf_str(&p), &pdf[i], &err);
			vpa_buf_release(&p);
			if (rc)
				goto out;
		}
	}
	for (size_t i = 0; i < warnings->n; i++)
		vpa_warn("%s", warnings->items[i]->str);
	fwrite(out.data, 1, out.len, stdout);
out:
	if (rc)
		cli_error(&err);
	for (int i = 0; i < 2; i++) {
		vpa_json_free(figs[i]);
		vpa_buf_release(&svg[i]);
		vpa_buf_release(&pdf[i]);
	}
	vpa_linkability_release(&link);
	vpa_json_free(warnings);
	vpa_buf_release(&out);
	vpa_buf_release(&det);
	vpa_trials_release(&tr);
	return rc ? vpa_exit_code(rc) : 0;
}
