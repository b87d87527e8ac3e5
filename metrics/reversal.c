/*
 * metrics/reversal.c - reversed scores: the metrics an attacker reaches who
 * negates them, and the rule that calls a score set anti-correlated with
 * identity (metrics.h, metrics/README.md "Reversed scores").
 */
#include "sv_metrics.h"

#include <math.h>
#include <stdlib.h>

/* the negation of a sorted array, sorted again: reversed */
static double *negated(const double *a, size_t n)
{
	double *b = xmalloc(xmul(n ? n : 1, sizeof(double)));
	for (size_t i = 0; i < n; i++)
		b[i] = -a[n - 1 - i];
	return b;
}

int vpa_metrics_flipped(const struct vpa_scores *s, const struct vpa_metrics_opts *o,
			struct vpa_metrics *m, struct vpa_err *err)
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
	if ((rc = sv_check(s, err)))
		return rc;
	double *tar = negated(s->tar, s->n_tar), *non = negated(s->non, s->n_non);
	double *wt = NULL, *wn = NULL;
	if (s->w_tar)
		wt = negated(s->w_tar, s->n_tar);
	if (s->w_non)
		wn = negated(s->w_non, s->n_non);
	/* negated() negates: the weights want the order only */
	for (size_t i = 0; wt && i < s->n_tar; i++)
		wt[i] = -wt[i];
	for (size_t i = 0; wn && i < s->n_non; i++)
		wn[i] = -wn[i];
	struct vpa_scores f = { tar, s->n_tar, non, s->n_non, wt, wn };
	if ((rc = vpa_pav_fit(&f, 0, &p, err)))
		goto out;
	m->eer_flipped = vpa_eer_rocch(&p, NULL);
	m->cllr_min_flipped = vpa_cllr_min(&p);
	sv_sweep(&f, o->p_target, o->c_miss, o->c_fa, &w);
	m->min_dcf_flipped = w.min_dcf;
out:
	vpa_pav_release(&p);
	free(wn);
	free(wt);
	free(non);
	free(tar);
	return rc;
}

void vpa_metrics_judge_reversal(struct vpa_metrics *m, double lo, double hi)
{
	m->eer_sweep_lo = lo;
	m->eer_sweep_hi = hi;
	m->eer_sweep_level = isfinite(lo) ? VPA_REVERSAL_LEVEL : NAN;
	m->anti_correlated = m->eer_sweep > 0.5 && isfinite(lo) && lo > 0.5;
}
