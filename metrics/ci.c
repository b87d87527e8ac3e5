/*
 * metrics/ci.c - percentile bootstrap confidence intervals for ROCCH-EER,
 * Cllr_min and linkability.
 *
 * A replicate never copies or re-sorts the scores: it is a pair of weight
 * vectors over the sorted arrays (a trial drawn k times has weight k), and
 * the weighted PAV and histogram give the replicate's metrics.
 *
 * Two schemes:
 *  - identities given: the trials of a verification list are not independent
 *    (every trial of a speaker shares that speaker), so each replicate draws
 *    n_e enrolment identities and n_t test identities with replacement
 *    (counts c_e, c_t) and gives a trial (e, t) the weight c_e[e] c_t[t] (the
 *    two-way bootstrap of Poh & Bengio / Bolle et al. "subsets bootstrap");
 *  - otherwise: N = n_tar + n_non trials drawn with replacement from the
 *    pooled list (multinomial weights).
 * A replicate without a target or without a non-target is skipped and
 * counted (reps - reps_used); linkability replicates with fewer than 10
 * mated draws are undefined and left out of its interval (link_reps_used).
 * The interval is the (1-level)/2 and (1+level)/2 quantiles of the used
 * replicates with linear interpolation (numpy.percentile's default).
 * Randomness: one vpa_rng seeded with opts->seed, so a seed gives the same
 * interval on every machine.
 */
#include "sv_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double quantile(double *v, size_t m, double q)
{
	double pos = q * (double)(m - 1);
	size_t lo = (size_t)floor(pos);
	if (lo + 1 >= m)
		return v[m - 1];
	double f = pos - (double)lo;
	return v[lo] + f * (v[lo + 1] - v[lo]);
}

static void interval(double *v, size_t m, double level, double *lo, double *hi)
{
	if (m == 0) {
		*lo = *hi = NAN;
		return;
	}
	vpa_sort_scores(v, NULL, m);
	*lo = quantile(v, m, (1 - level) / 2);
	*hi = quantile(v, m, (1 + level) / 2);
}

static int check_ids(const uint32_t *id, size_t n, size_t n_id, const char *what,
		     struct vpa_err *err)
{
	for (size_t i = 0; i < n; i++)
		if (id[i] >= n_id)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"bootstrap: %s identity %u of trial %zu out of range [0, %zu)",
					what, (unsigned)id[i], i, n_id);
	return 0;
}

int vpa_bootstrap_ci(const struct vpa_scores *s, const struct vpa_ci_opts *o,
		     struct vpa_ci *out, struct vpa_err *err)
{
	int rc;
	memset(out, 0, sizeof *out);
	out->eer_lo = out->eer_hi = out->cllr_min_lo = out->cllr_min_hi = NAN;
	out->link_lo = out->link_hi = NAN;
	rc = sv_check(s, err);
	if (rc)
		return rc;
	if (!(o->level > 0 && o->level < 1))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"bootstrap level must be strictly between 0 and 1, got %g", o->level);
	if (!(o->omega > 0) || !isfinite(o->omega))
		return vpa_fail(err, VPA_EINPUT, NULL, "omega must be a positive number, got %g",
				o->omega);
	int nid = (o->tar_e != NULL) + (o->tar_t != NULL) + (o->non_e != NULL) +
		  (o->non_t != NULL);
	if (nid != 0 && nid != 4)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"bootstrap: identity lists must be given for all four of "
				"tar_e, tar_t, non_e, non_t or for none");
	int by_id = nid == 4;
	if (by_id) {
		if (o->n_e == 0 || o->n_t == 0)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"bootstrap: n_e and n_t must be positive");
		if ((rc = check_ids(o->tar_e, s->n_tar, o->n_e, "enrolment", err)) ||
		    (rc = check_ids(o->tar_t, s->n_tar, o->n_t, "test", err)) ||
		    (rc = check_ids(o->non_e, s->n_non, o->n_e, "enrolment", err)) ||
		    (rc = check_ids(o->non_t, s->n_non, o->n_t, "test", err)))
			return rc;
	}

	size_t reps = o->reps ? o->reps : 1000;
	size_t nt = s->n_tar, nn = s->n_non, N = nt + nn;
	double *wt = xmalloc(xmul(nt, sizeof *wt)), *wn = xmalloc(xmul(nn, sizeof *wn));
	double *v_eer = xmalloc(xmul(reps, sizeof(double)));
	double *v_cmin = xmalloc(xmul(reps, sizeof(double)));
	double *v_link = xmalloc(xmul(reps, sizeof(double)));
	double *ce = NULL, *ct = NULL;
	size_t used = 0, used_link = 0;
	struct vpa_rng rng;

	if (by_id) {
		ce = xmalloc(xmul(o->n_e, sizeof *ce));
		ct = xmalloc(xmul(o->n_t, sizeof *ct));
	}
	vpa_rng_seed(&rng, o->seed);
	out->by_identity = by_id;
	out->reps = reps;

	for (size_t r = 0; r < reps; r++) {
		double st = 0, sn = 0;
		if (by_id) {
			memset(ce, 0, o->n_e * sizeof *ce);
			memset(ct, 0, o->n_t * sizeof *ct);
			for (size_t k = 0; k < o->n_e; k++)
				ce[vpa_rng_below(&rng, o->n_e)] += 1;
			for (size_t k = 0; k < o->n_t; k++)
				ct[vpa_rng_below(&rng, o->n_t)] += 1;
			for (size_t i = 0; i < nt; i++)
				st += wt[i] = ce[o->tar_e[i]] * ct[o->tar_t[i]] * SV_W(s->w_tar, i);
			for (size_t i = 0; i < nn; i++)
				sn += wn[i] = ce[o->non_e[i]] * ct[o->non_t[i]] * SV_W(s->w_non, i);
		} else {
			memset(wt, 0, nt * sizeof *wt);
			memset(wn, 0, nn * sizeof *wn);
			for (size_t k = 0; k < N; k++) {
				uint64_t u = vpa_rng_below(&rng, N);
				if (u < nt)
					wt[u] += 1;
				else
					wn[u - nt] += 1;
			}
			for (size_t i = 0; i < nt; i++)
				st += wt[i] *= SV_W(s->w_tar, i);
			for (size_t i = 0; i < nn; i++)
				sn += wn[i] *= SV_W(s->w_non, i);
		}
		if (!(st > 0) || !(sn > 0))
			continue; /* a class is missing: skipped, counted */

		struct vpa_scores rs = { s->tar, nt, s->non, nn, wt, wn };
		struct vpa_pav p;
		struct vpa_linkability l;
		if ((rc = vpa_pav_fit(&rs, 0, &p, err)))
			goto out;
		v_eer[used] = vpa_eer_rocch(&p, NULL);
		v_cmin[used] = vpa_cllr_min(&p);
		used++;
		vpa_pav_release(&p);
		if ((rc = sv_linkability_sorted(&rs, o->omega, o->bins, &l, err)))
			goto out;
		if (l.defined)
			v_link[used_link++] = l.dsys;
		vpa_linkability_release(&l);
	}
	out->reps_used = used;
	out->link_reps_used = used_link;
	if (used == 0) {
		rc = vpa_fail(err, VPA_ENUMERIC, NULL,
			      "bootstrap: none of %zu replicates drew both a target and a "
			      "non-target trial", reps);
		goto out;
	}
	interval(v_eer, used, o->level, &out->eer_lo, &out->eer_hi);
	interval(v_cmin, used, o->level, &out->cllr_min_lo, &out->cllr_min_hi);
	interval(v_link, used_link, o->level, &out->link_lo, &out->link_hi);
out:
	free(ct);
	free(ce);
	free(v_link);
	free(v_cmin);
	free(v_eer);
	free(wn);
	free(wt);
	return rc;
}
