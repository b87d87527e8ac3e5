/*
 * metrics/all.c - every score-set metric on one sorted score set, sharing
 * the work: one PAV fit (ROCCH-EER, Cllr_min, ZEBRA's D_ECE) re-pooled with
 * the laplace dummies (ZEBRA's worst case), one descending sweep (sweep EER,
 * min DCF, tied fraction), one softplus pass (Cllr) and the linkability
 * histogram by binary search on the sorted arrays.
 */
#include "sv_metrics.h"

#include <math.h>
#include <string.h>

int vpa_metrics_all(const struct vpa_scores *s, const struct vpa_metrics_opts *o,
		    struct vpa_metrics *m, struct vpa_err *err)
{
	struct vpa_metrics_opts def;
	struct vpa_pav plain = { NULL, 0, 0, 0 }, lap = { NULL, 0, 0, 0 };
	struct vpa_linkability l;
	struct sv_sweep w;
	int rc;

	memset(m, 0, sizeof *m);
	m->eer = m->eer_threshold = m->eer_sweep = m->eer_sweep_threshold = NAN;
	m->cllr = m->cllr_min = m->min_dcf = m->min_dcf_threshold = NAN;
	m->linkability = m->linkability_hist = m->tied_fraction = NAN;
	m->zebra.dece = m->zebra.log10_lr_worst = NAN;
	m->zebra.category = '0';
	m->eer_flipped = m->cllr_min_flipped = m->min_dcf_flipped = NAN;
	m->eer_sweep_lo = m->eer_sweep_hi = m->eer_sweep_level = NAN;
	if (!o) {
		vpa_metrics_opts_init(&def);
		o = &def;
	}
	if (!(o->omega > 0) || !isfinite(o->omega))
		return vpa_fail(err, VPA_EINPUT, NULL, "omega must be a positive number, got %g",
				o->omega);
	if (!(o->p_target > 0 && o->p_target < 1))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"p_target must be strictly between 0 and 1, got %g", o->p_target);
	if (!(o->c_miss > 0) || !(o->c_fa > 0) || !isfinite(o->c_miss) || !isfinite(o->c_fa))
		return vpa_fail(err, VPA_EINPUT, NULL, "c_miss and c_fa must be positive numbers");
	rc = sv_check(s, err);
	if (rc)
		return rc;
	m->n_tar = s->n_tar;
	m->n_non = s->n_non;

	rc = vpa_pav_fit(s, 0, &plain, err);
	if (rc)
		goto out;
	m->eer = vpa_eer_rocch(&plain, &m->eer_threshold);
	m->cllr_min = vpa_cllr_min(&plain);
	sv_pav_laplace_from(&plain, &lap);
	sv_zebra_from(&plain, &lap, &m->zebra);

	sv_sweep(s, o->p_target, o->c_miss, o->c_fa, &w);
	m->eer_sweep = w.eer;
	m->eer_sweep_threshold = w.eer_threshold;
	m->min_dcf = w.min_dcf;
	m->min_dcf_threshold = w.min_dcf_threshold;
	m->tied_fraction = w.tied_fraction;

	m->cllr = vpa_cllr(s);

	rc = sv_linkability_sorted(s, o->omega, o->bins, &l, err);
	if (rc)
		goto out;
	m->linkability_defined = l.defined;
	m->linkability = l.defined ? l.dsys : NAN;
	m->linkability_hist = l.defined ? l.dsys_hist : NAN;
	m->linkability_bins = l.n_bins;
	m->linkability_bins_mated = l.n_bins_mated;
	vpa_linkability_release(&l);
	vpa_metrics_reliability(m, o, NULL, NULL);
out:
	vpa_pav_release(&lap);
	vpa_pav_release(&plain);
	return rc;
}
