/*
 * metrics/reversal.c - reversed scores: the metrics an attacker reaches who
 * negates them, and the rule that calls a score set anti-correlated with
 * identity (metrics.h, metrics/README.md "Reversed scores").
 */
#include "sv_metrics.h"

#include <math.h>

/* a[0..n) reversed and negated, in place: applied twice, a is as before
 * (negation is exact).  Pairs (i, n-1-i) are split into `parts` disjoint
 * ranges of i, one job each. */
struct flip_arr {
	double *a;
	size_t n, parts;
};

static int flip_part(void *arg, size_t p)
{
	const struct flip_arr *f = arg;
	size_t half = f->n / 2, lo = half * p / f->parts, hi = half * (p + 1) / f->parts;
	double *a = f->a;
	for (size_t i = lo; i < hi; i++) {
		size_t j = f->n - 1 - i;
		double t = a[i];
		a[i] = -a[j];
		a[j] = -t;
	}
	if (p == 0 && (f->n & 1))
		a[half] = -a[half];
	return 0;
}

static void flip(double *tar, size_t n_tar, double *non, size_t n_non, int threads)
{
	struct flip_arr t = {tar, n_tar, 1}, n = {non, n_non, threads > 1 ? (size_t)threads : 1};
	if (tar)
		flip_part(&t, 0);
	if (non)
		vpa_par_jobs(n.parts, threads, flip_part, &n, NULL, NULL);
}

/* The PAV fit and the sweep of the flipped scores, side by side. */
struct flip_job {
	const struct vpa_scores *s;
	const struct vpa_metrics_opts *o;
	struct vpa_pav *p;
	struct sv_sweep *w;
	int rc;
	struct vpa_err err;
};

static int flipped_one(void *arg, size_t i)
{
	struct flip_job *j = arg;
	if (i == 0)
		j->rc = vpa_pav_fit(j->s, 0, j->p, &j->err);
	else
		sv_sweep_ties(j->s, j->o->p_target, j->o->c_miss, j->o->c_fa, 0, j->w);
	return 0;
}

int vpa_metrics_flipped(double *tar, size_t n_tar, double *non, size_t n_non,
			const struct vpa_metrics_opts *o, struct vpa_metrics *m, struct vpa_err *err)
{
	struct vpa_metrics_opts def;
	struct vpa_pav p = { NULL, 0, 0, 0 };
	struct sv_sweep w;
	int rc;
	m->eer_flipped = m->cllr_min_flipped = m->min_dcf_flipped = NAN;
	if (!o) {
		vpa_metrics_opts_init(&def);
		o = &def;
	}
	struct vpa_scores s = { tar, n_tar, non, n_non, NULL, NULL };
	if ((rc = sv_check(&s, err)))
		return rc;
	/* -s sorted is s reversed and negated: done in place, undone below */
	flip(tar, n_tar, non, n_non, o->threads);
	struct flip_job j = {&s, o, &p, &w, 0, {0, ""}};
	vpa_err_init(&j.err);
	vpa_par_jobs(2, o->threads, flipped_one, &j, NULL, NULL);
	if ((rc = j.rc)) {
		if (err)
			*err = j.err;
		goto out;
	}
	m->eer_flipped = vpa_eer_rocch(&p, NULL);
	m->cllr_min_flipped = vpa_cllr_min(&p);
	m->min_dcf_flipped = w.min_dcf;
out:
	flip(tar, n_tar, non, n_non, o->threads);
	vpa_pav_release(&p);
	return rc;
}

size_t vpa_reversal_reps(size_t reps, size_t n)
{
	size_t cap = n ? (size_t)(2e8 / (double)n) : reps;
	if (cap < 50)
		cap = 50;
	return reps < cap ? reps : cap;
}

void vpa_metrics_judge_reversal(struct vpa_metrics *m, double lo, double hi)
{
	m->eer_sweep_lo = lo;
	m->eer_sweep_hi = hi;
	m->eer_sweep_level = isfinite(lo) ? VPA_REVERSAL_LEVEL : NAN;
	m->anti_correlated = m->eer_sweep > 0.5 && isfinite(lo) && lo > 0.5;
}

int vpa_metrics_reversal(double *tar, size_t n_tar, double *non, size_t n_non,
			 const struct vpa_metrics_opts *mo, const struct vpa_ci_opts *co,
			 const struct vpa_ci *have, struct vpa_metrics *m, struct vpa_ci *used,
			 struct vpa_err *err)
{
	int rc = vpa_metrics_flipped(tar, n_tar, non, n_non, mo, m, err);
	if (rc)
		return rc;
	vpa_metrics_judge_reversal(m, NAN, NAN);
	/* at most 0.5: an interval containing its estimate cannot lie above 0.5 */
	if (!(m->eer_sweep > 0.5))
		return 0;
	struct vpa_ci sw;
	if (!have) {
		struct vpa_scores s = {tar, n_tar, non, n_non, NULL, NULL};
		struct vpa_ci_opts o = *co;
		o.level = VPA_REVERSAL_LEVEL;
		o.reps = o.jack_max = vpa_reversal_reps(co->reps, n_tar + n_non);
		o.sweep_only = 1;
		if ((rc = vpa_bootstrap_ci(&s, &o, &sw, err)))
			return rc;
		have = &sw;
	}
	vpa_metrics_judge_reversal(m, have->eer_sweep_lo, have->eer_sweep_hi);
	if (used)
		*used = *have;
	return 0;
}
