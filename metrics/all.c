/*
 * metrics/all.c - every score-set metric on one sorted score set, sharing
 * the work: one PAV fit (ROCCH-EER, Cllr_min, ZEBRA's D_ECE) re-pooled with
 * the laplace dummies (ZEBRA's worst case), one descending sweep (sweep EER,
 * min DCF, tied fraction), one softplus pass (Cllr) and the linkability
 * histogram by binary search on the sorted arrays.  The four are independent
 * and run side by side on opts->threads threads, Cllr's sum in its fixed parts
 * (sv_metrics.h: same values for any count).
 */
#include "sv_metrics.h"

#include <math.h>
#include <string.h>

/* The independent parts of vpa_metrics_all, each writing its own slots. */
struct all_job {
	const struct vpa_scores *s;
	const struct vpa_metrics_opts *o;
	struct vpa_metrics *m;
	struct vpa_pav plain, lap;
	struct vpa_linkability l;
	struct sv_sweep w;
	double cllr_tar[SV_CLLR_PARTS], cllr_non[SV_CLLR_PARTS];
	int rc_pav, rc_link;
	struct vpa_err err_pav, err_link;
};

/* Jobs by falling cost: the sweep (its tie count passes over every trial),
 * the non-target parts of Cllr's softplus sum (the longest work on 10^8
 * trials, cut in SV_CLLR_PARTS), PAV, linkability, the target parts. */
enum { J_SWEEP, J_CLLR_NON, J_PAV = J_CLLR_NON + SV_CLLR_PARTS, J_LINK, J_CLLR_TAR, J_ALL };

static int all_one(void *arg, size_t i)
{
	struct all_job *j = arg;
	const struct vpa_scores *s = j->s;
	if (i >= J_CLLR_NON && i < J_CLLR_NON + SV_CLLR_PARTS) {
		size_t k = i - J_CLLR_NON;
		j->cllr_non[k] = sv_softplus_part(s->non, s->w_non, s->n_non, 1, k);
		return 0;
	}
	switch (i) {
	case J_CLLR_TAR:
		for (size_t k = 0; k < SV_CLLR_PARTS; k++)
			j->cllr_tar[k] = sv_softplus_part(s->tar, s->w_tar, s->n_tar, -1, k);
		break;
	case J_PAV:
		j->rc_pav = vpa_pav_fit(j->s, 0, &j->plain, &j->err_pav);
		if (!j->rc_pav) {
			j->m->eer = vpa_eer_rocch(&j->plain, &j->m->eer_threshold);
			j->m->cllr_min = vpa_cllr_min(&j->plain);
			sv_pav_laplace_from(&j->plain, &j->lap);
			sv_zebra_from(&j->plain, &j->lap, &j->m->zebra);
		}
		break;
	case J_SWEEP:
		sv_sweep(j->s, j->o->p_target, j->o->c_miss, j->o->c_fa, &j->w);
		break;
	default:
		j->rc_link = sv_linkability_sorted(j->s, j->o->omega, j->o->bins, &j->l, &j->err_link);
		break;
	}
	return 0;
}

int vpa_metrics_all(const struct vpa_scores *s, const struct vpa_metrics_opts *o,
		    struct vpa_metrics *m, struct vpa_err *err)
{
	struct vpa_metrics_opts def;
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

	struct all_job j = {.s = s, .o = o, .m = m};
	vpa_err_init(&j.err_pav);
	vpa_err_init(&j.err_link);
	memset(&j.l, 0, sizeof j.l);
	vpa_par_jobs(J_ALL, o->threads, all_one, &j, NULL, NULL);
	m->cllr = sv_cllr_from_parts(s, j.cllr_tar, j.cllr_non);
	/* the first failure in the serial order (PAV before linkability) is reported */
	if (j.rc_pav || j.rc_link) {
		rc = j.rc_pav ? j.rc_pav : j.rc_link;
		if (err)
			*err = j.rc_pav ? j.err_pav : j.err_link;
		m->cllr = m->eer = m->eer_threshold = m->cllr_min = NAN;
		goto out;
	}
	m->eer_sweep = j.w.eer;
	m->eer_sweep_threshold = j.w.eer_threshold;
	m->min_dcf = j.w.min_dcf;
	m->min_dcf_threshold = j.w.min_dcf_threshold;
	m->tied_fraction = j.w.tied_fraction;

	m->linkability_defined = j.l.defined;
	m->linkability = j.l.defined ? j.l.dsys : NAN;
	m->linkability_hist = j.l.defined ? j.l.dsys_hist : NAN;
	m->linkability_bins = j.l.n_bins;
	m->linkability_bins_mated = j.l.n_bins_mated;
	vpa_metrics_reliability(m, o, NULL, NULL);
out:
	vpa_linkability_release(&j.l);
	vpa_pav_release(&j.lap);
	vpa_pav_release(&j.plain);
	return rc;
}
