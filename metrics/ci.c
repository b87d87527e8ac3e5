/*
 * metrics/ci.c - bootstrap confidence intervals for ROCCH-EER, Cllr_min and
 * linkability: bias-corrected and accelerated (BCa, Efron & Tibshirani 1993
 * ch. 14.3, eq. 14.10 and 14.15; scipy.stats.bootstrap(method='BCa')).
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
 *
 * Why BCa: the percentile interval of a biased statistic can exclude its own
 * point estimate (seen: linkability 0.1054 with [0.1239, 0.2414]: a
 * resample repeats scores, so its histograms are spikier and read higher).
 * BCa moves the percentiles by the bias z0 = Phi^-1(share of replicates below
 * the estimate, ties counting half) and the acceleration a, from the
 * jackknife: over the enrolment and the test identities as two samples
 * (scipy's multi-sample rule: a = sum_j sum_i U_ji^3 / n_j^3 /
 * (6 (sum_j sum_i U_ji^2 / n_j^2)^1.5), U_ji = (n_j - 1)(mean_j - theta_ji)),
 * or over the trials.  The interval is the alpha1 and alpha2 quantiles of the
 * replicates, alpha = Phi(z0 + (z0 + z)/(1 - a (z0 + z))) for z = Phi^-1((1 -
 * level)/2) and its negative, with linear interpolation (numpy.percentile).
 *
 * Documented departures, each flagged in struct vpa_ci:
 *  - a sample with more than VPA_JACK_MAX_GROUPS units (identities or
 *    trials) is jackknifed in that many groups (unit u in group u mod G, in
 *    sorted order: every group spans the score range), the delete-a-group
 *    jackknife; leave-one-out estimates that are undefined (a class or, for
 *    linkability, 10 mated scores missing) are left out;
 *  - when every replicate lies on one side of the estimate (z0 infinite) BCa
 *    is undefined: the percentile interval is used;
 *  - an interval that still excludes its estimate is extended to it
 *    (`extended`), so no reported interval excludes its own estimate.
 * Randomness: one vpa_rng seeded with opts->seed, so a seed gives the same
 * interval on every machine.
 */
#include "sv_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NSTAT 4 /* eer, cllr_min, linkability, eer_sweep */

static double quantile(double *v, size_t m, double q)
{
	double pos = q * (double)(m - 1);
	size_t lo = (size_t)floor(pos);
	if (lo + 1 >= m)
		return v[m - 1];
	double f = pos - (double)lo;
	return v[lo] + f * (v[lo + 1] - v[lo]);
}

/*
 * The metrics of one weighting: eer, cllr_min, linkability, eer_sweep (NAN:
 * undefined; with o->sweep_only only eer_sweep).
 */
static int stats_of(const struct vpa_scores *rs, const struct vpa_ci_opts *o, double th[NSTAT],
		    struct vpa_err *err)
{
	struct vpa_pav p;
	struct vpa_linkability l;
	struct sv_sweep w;
	int rc;
	th[0] = th[1] = th[2] = th[3] = NAN;
	if (!(sv_total(rs->w_tar, rs->n_tar) > 0) || !(sv_total(rs->w_non, rs->n_non) > 0))
		return 0;
	/* the weighted sweep: a trial of weight 0 adds a threshold that moves nothing */
	sv_sweep(rs, 0.01, 1, 1, &w);
	th[3] = w.eer;
	if (o->sweep_only)
		return 0;
	if ((rc = vpa_pav_fit(rs, 0, &p, err)))
		return rc;
	th[0] = vpa_eer_rocch(&p, NULL);
	th[1] = vpa_cllr_min(&p);
	vpa_pav_release(&p);
	if ((rc = sv_linkability_sorted(rs, o->omega, o->bins, &l, err)))
		return rc;
	if (l.defined)
		th[2] = l.dsys;
	vpa_linkability_release(&l);
	return 0;
}

/*
 * Jackknife acceleration of the three metrics.  Samples: by identity, the
 * enrolment ids (id arrays tar_e / non_e) and the test ids (tar_t / non_t);
 * by trial, one sample of all trials.  Units of a sample beyond
 * VPA_JACK_MAX_GROUPS are pooled in groups (unit mod G).
 */
static int jackknife(const struct vpa_scores *s, const struct vpa_ci_opts *o, int by_id,
		     struct vpa_ci *out, struct vpa_err *err)
{
	size_t nt = s->n_tar, nn = s->n_non;
	double num[NSTAT] = {0, 0, 0, 0}, den[NSTAT] = {0, 0, 0, 0};
	double *wt = xmalloc(xmul(nt ? nt : 1, sizeof *wt)), *wn = xmalloc(xmul(nn ? nn : 1, sizeof *wn));
	int rc = 0;
	int n_samples = by_id ? 2 : 1;
	for (int j = 0; j < n_samples && !rc; j++) {
		size_t units = by_id ? (j == 0 ? o->n_e : o->n_t) : nt + nn;
		const uint32_t *idt = by_id ? (j == 0 ? o->tar_e : o->tar_t) : NULL;
		const uint32_t *idn = by_id ? (j == 0 ? o->non_e : o->non_t) : NULL;
		size_t maxg = o->jack_max ? o->jack_max : VPA_JACK_MAX_GROUPS;
		size_t G = units > maxg ? maxg : units;
		out->jack_groups[j] = G;
		out->jack_grouped |= units > G;
		double *th = xmalloc(xmul(G ? G : 1, NSTAT * sizeof(double)));
		for (size_t g = 0; g < G && !rc; g++) {
			for (size_t i = 0; i < nt; i++) {
				size_t u = by_id ? idt[i] : i;
				wt[i] = u % G == g ? 0 : SV_W(s->w_tar, i);
			}
			for (size_t i = 0; i < nn; i++) {
				size_t u = by_id ? idn[i] : nt + i;
				wn[i] = u % G == g ? 0 : SV_W(s->w_non, i);
			}
			struct vpa_scores rs = {s->tar, nt, s->non, nn, wt, wn};
			rc = stats_of(&rs, o, th + NSTAT * g, err);
		}
		for (int k = 0; k < NSTAT && !rc; k++) {
			double sum = 0;
			size_t n = 0;
			for (size_t g = 0; g < G; g++)
				if (isfinite(th[NSTAT * g + k])) {
					sum += th[NSTAT * g + k];
					n++;
				}
			if (n < 2)
				continue;
			double mean = sum / (double)n, dn = (double)n;
			for (size_t g = 0; g < G; g++) {
				double t = th[NSTAT * g + k];
				if (!isfinite(t))
					continue;
				double U = (dn - 1) * (mean - t);
				num[k] += U * U * U / (dn * dn * dn);
				den[k] += U * U / (dn * dn);
			}
		}
		free(th);
	}
	double *a[NSTAT] = {&out->eer_a, &out->cllr_min_a, &out->link_a, &out->eer_sweep_a};
	for (int k = 0; k < NSTAT; k++)
		*a[k] = den[k] > 0 ? num[k] / (6 * pow(den[k], 1.5)) : 0;
	free(wn);
	free(wt);
	return rc;
}

/*
 * BCa interval of the replicates v (m, sorted here) around the estimate
 * theta with acceleration a; *z0 the bias; bit `bit` of *extended set when
 * the interval had to be widened to theta.
 */
static void interval(double *v, size_t m, double theta, double a, double level, double *lo,
		     double *hi, double *z0, unsigned *extended, unsigned bit)
{
	*z0 = NAN;
	if (m == 0) {
		*lo = *hi = NAN;
		return;
	}
	vpa_sort_scores(v, NULL, m);
	double alpha1 = (1 - level) / 2, alpha2 = (1 + level) / 2;
	if (isfinite(theta)) {
		size_t below = 0, upto = 0;
		for (size_t i = 0; i < m; i++) {
			below += v[i] < theta;
			upto += v[i] <= theta;
		}
		double p = (double)(below + upto) / (2.0 * (double)m);
		if (p > 0 && p < 1) {
			double z = sv_probit(p), zl = sv_probit(alpha1), zh = -zl;
			double n1 = z + zl, n2 = z + zh;
			double b1 = sv_phi(z + n1 / (1 - a * n1)), b2 = sv_phi(z + n2 / (1 - a * n2));
			*z0 = z;
			if (isfinite(b1) && isfinite(b2) && b1 <= b2) {
				alpha1 = b1;
				alpha2 = b2;
			}
		}
	}
	*lo = quantile(v, m, alpha1);
	*hi = quantile(v, m, alpha2);
	if (isfinite(theta) && (theta < *lo || theta > *hi)) {
		*lo = fmin(*lo, theta);
		*hi = fmax(*hi, theta);
		*extended |= bit;
	}
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
	out->link_lo = out->link_hi = out->eer_sweep_lo = out->eer_sweep_hi = NAN;
	out->eer_z0 = out->cllr_min_z0 = out->link_z0 = out->eer_sweep_z0 = NAN;
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
	double *v_sweep = xmalloc(xmul(reps, sizeof(double)));
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
		double th[NSTAT];
		if ((rc = stats_of(&rs, o, th, err)))
			goto out;
		v_eer[used] = th[0];
		v_cmin[used] = th[1];
		v_sweep[used] = th[3];
		used++;
		if (isfinite(th[2]))
			v_link[used_link++] = th[2];
	}
	out->reps_used = used;
	out->link_reps_used = used_link;
	if (used == 0) {
		rc = vpa_fail(err, VPA_ENUMERIC, NULL,
			      "bootstrap: none of %zu replicates drew both a target and a "
			      "non-target trial", reps);
		goto out;
	}
	/* the estimates on the full set, and the jackknife acceleration */
	{
		struct vpa_scores fs = { s->tar, nt, s->non, nn, s->w_tar, s->w_non };
		if ((rc = stats_of(&fs, o, out->estimate, err)) ||
		    (rc = jackknife(s, o, by_id, out, err)))
			goto out;
	}
	interval(v_sweep, used, out->estimate[3], out->eer_sweep_a, o->level, &out->eer_sweep_lo,
		 &out->eer_sweep_hi, &out->eer_sweep_z0, &out->extended, 8);
	if (o->sweep_only)
		goto out;
	interval(v_eer, used, out->estimate[0], out->eer_a, o->level, &out->eer_lo, &out->eer_hi,
		 &out->eer_z0, &out->extended, 1);
	interval(v_cmin, used, out->estimate[1], out->cllr_min_a, o->level, &out->cllr_min_lo,
		 &out->cllr_min_hi, &out->cllr_min_z0, &out->extended, 2);
	interval(v_link, used_link, out->estimate[2], out->link_a, o->level, &out->link_lo,
		 &out->link_hi, &out->link_z0, &out->extended, 4);
out:
	free(ct);
	free(ce);
	free(v_sweep);
	free(v_link);
	free(v_cmin);
	free(v_eer);
	free(wn);
	free(wt);
	return rc;
}
