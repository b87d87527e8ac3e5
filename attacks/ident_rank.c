/*
 * attacks/ident_rank.c - the identification engine of the attack kind
 * `identification` (attacks/identify.c): one probe x population score
 * matrix prepared once (vpa_ident_prepare, vpa_ident_prepare_mt), then any
 * subset of its rows (a drawn population) evaluated (vpa_ident_subset):
 * open-set ROCCH-EER, Cllr_min and linkability, closed-set ranks and top-k
 * precision.  Declared in targets/anon.h; it calls nothing in identify.c.
 *
 * Cost: one GEMM block (vpa_backend_score_f, single precision) per attacker
 * for the whole population; each subset is then a selection of rows.  The
 * EER of a subset does not need its ~10^8 non-target scores sorted: PAV
 * (and so ROCCH-EER and Cllr_min) depend only on the order of the scores, so
 * the non-targets are counted per gap between consecutive distinct target
 * scores (each cell's gap is found once per attacker by binary search) and
 * the fit runs on n_t targets against at most 2 n_t + 1 weighted groups;
 * linkability (which depends on the values) and the ranks take one pass over
 * the subset's cells.
 */
#include "attacks/attacks.h"
#include "targets/anon.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the score matrix ------------------------------------------------------ */

void vpa_ident_matrix_release(struct vpa_ident_matrix *m)
{
	free(m->tar);
	free(m->rep);
	free(m->bin);
	free(m->ttrue);
	free(m->rmin);
	free(m->rmax);
	free(m->has_tar);
	memset(m, 0, sizeof(*m));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* first index j with u[j] >= x */
static size_t lower_bound(const double *u, size_t n, double x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The gap bin of every cell of rows [r0, r1) (threads split the rows). */
struct prep_job {
	struct vpa_ident_matrix *m;
	const double *u;
	size_t nu, r0, r1;
};

static void *prep_rows(void *arg)
{
	struct prep_job *j = arg;
	struct vpa_ident_matrix *m = j->m;
	size_t nt = m->n_t;
	for (size_t r = j->r0; r < j->r1; r++) {
		float lo = INFINITY, hi = -INFINITY;
		for (size_t t = 0; t < nt; t++) {
			float xf = m->S[r * nt + t];
			double x = (double)xf;
			size_t q = lower_bound(j->u, j->nu, x);
			m->bin[r * nt + t] = (uint32_t)(q < j->nu && j->u[q] == x ? 2 * q + 1 : 2 * q);
			if (m->truth[t] != r) {
				lo = xf < lo ? xf : lo;
				hi = xf > hi ? xf : hi;
			}
		}
		m->rmin[r] = lo;
		m->rmax[r] = hi;
	}
	return NULL;
}

int vpa_ident_prepare(const float *S, size_t n_rows, size_t n_t, const uint32_t *truth,
		      struct vpa_ident_matrix *out, struct vpa_err *err)
{
	return vpa_ident_prepare_mt(S, n_rows, n_t, truth, 1, out, err);
}

int vpa_ident_prepare_mt(const float *S, size_t n_rows, size_t n_t, const uint32_t *truth,
			 int threads, struct vpa_ident_matrix *out, struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!n_t || !n_rows)
		return vpa_fail(err, VPA_EINPUT, NULL, "identification needs probes and a population");
	for (size_t t = 0; t < n_t; t++)
		if (truth[t] >= n_rows)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"probe %zu: true speaker %u is outside the population of %zu",
					t + 1, (unsigned)truth[t], n_rows);
	size_t nc = xmul(n_rows, n_t);
	for (size_t i = 0; i < nc; i++)
		if (!isfinite(S[i]))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"score of population speaker %zu and probe %zu is not finite",
					i / n_t + 1, i % n_t + 1);
	out->S = S;
	out->n_rows = n_rows;
	out->n_t = n_t;
	out->truth = truth;
	out->tar = xmalloc(xmul(n_t, sizeof(double)));
	out->ttrue = xmalloc(xmul(n_t, sizeof(float)));
	for (size_t t = 0; t < n_t; t++) {
		out->ttrue[t] = S[(size_t)truth[t] * n_t + t];
		out->tar[t] = (double)out->ttrue[t];
	}
	qsort(out->tar, n_t, sizeof(double), cmp_double);
	/* distinct target scores u[0..nu) */
	double *u = xmalloc(xmul(n_t, sizeof(double)));
	size_t nu = 0;
	for (size_t t = 0; t < n_t; t++)
		if (!nu || out->tar[t] != u[nu - 1])
			u[nu++] = out->tar[t];
	out->n_bins = 2 * nu + 1;
	out->rep = xmalloc(xmul(out->n_bins, sizeof(double)));
	for (size_t j = 0; j <= nu; j++) {
		double r;
		if (j == 0)
			r = u[0] - fabs(u[0]) - 1;
		else if (j == nu)
			r = u[nu - 1] + fabs(u[nu - 1]) + 1;
		else
			r = u[j - 1] / 2 + u[j] / 2;
		/* inputs are floats, so a double lies strictly between two of them */
		if ((j > 0 && !(r > u[j - 1])) || (j < nu && !(r < u[j])))
			VPA_BUG("identification: no score between %g and %g", j ? u[j - 1] : r,
				j < nu ? u[j] : r);
		out->rep[2 * j] = r;
		if (j < nu)
			out->rep[2 * j + 1] = u[j];
	}
	out->bin = xmalloc(xmul(nc, sizeof(uint32_t)));
	out->has_tar = xcalloc(n_rows, 1);
	for (size_t t = 0; t < n_t; t++)
		out->has_tar[truth[t]] = 1;
	out->rmin = xmalloc(xmul(n_rows, sizeof(float)));
	out->rmax = xmalloc(xmul(n_rows, sizeof(float)));
	size_t nth = threads > 1 ? (size_t)threads : 1;
	if (nth > n_rows)
		nth = n_rows;
	struct prep_job *jobs = xmalloc(xmul(nth, sizeof(*jobs)));
	pthread_t *th = xmalloc(xmul(nth, sizeof(*th)));
	unsigned char *started = xcalloc(nth, 1);
	for (size_t i = 0; i < nth; i++) {
		jobs[i] = (struct prep_job){out, u, nu, n_rows * i / nth, n_rows * (i + 1) / nth};
		/* the first share runs here, after the others started; also a share
		   whose thread could not start */
		if (i > 0)
			started[i] = pthread_create(&th[i], NULL, prep_rows, &jobs[i]) == 0;
	}
	prep_rows(&jobs[0]);
	for (size_t i = 1; i < nth; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			prep_rows(&jobs[i]);
	}
	free(started);
	free(th);
	free(jobs);
	free(u);
	return 0;
}

/* Scratch of one evaluation (reused across evaluations by a worker). */
struct ident_ws {
	long *pos;          /* (n_rows) */
	double *cnt, *rep;  /* (n_bins) */
	uint32_t *higher, *tied; /* (n_t) */
	double *e;          /* (lnb + 1) linkability edges */
	double *lcnt;       /* (lnb) */
	float *lmin, *lmax; /* (lnb) */
	double *lval, *lw;  /* (2 lnb) */
	size_t lcap;
};

static void ws_init(struct ident_ws *w, const struct vpa_ident_matrix *m)
{
	memset(w, 0, sizeof(*w));
	w->pos = xmalloc(xmul(m->n_rows, sizeof(long)));
	for (size_t r = 0; r < m->n_rows; r++)
		w->pos[r] = -1;
	w->cnt = xmalloc(xmul(m->n_bins, sizeof(double)));
	w->rep = xmalloc(xmul(m->n_bins, sizeof(double)));
	w->higher = xmalloc(xmul(m->n_t, sizeof(uint32_t)));
	w->tied = xmalloc(xmul(m->n_t, sizeof(uint32_t)));
}

static void ws_release(struct ident_ws *w)
{
	free(w->pos);
	free(w->cnt);
	free(w->rep);
	free(w->higher);
	free(w->tied);
	free(w->e);
	free(w->lcnt);
	free(w->lmin);
	free(w->lmax);
	free(w->lval);
	free(w->lw);
	memset(w, 0, sizeof(*w));
}

static void ws_link(struct ident_ws *w, size_t lnb)
{
	if (lnb <= w->lcap)
		return;
	w->lcap = lnb;
	w->e = xrealloc(w->e, xmul(lnb + 1, sizeof(double)));
	w->lcnt = xrealloc(w->lcnt, xmul(lnb, sizeof(double)));
	w->lmin = xrealloc(w->lmin, xmul(lnb, sizeof(float)));
	w->lmax = xrealloc(w->lmax, xmul(lnb, sizeof(float)));
	w->lval = xrealloc(w->lval, xmul(2 * lnb, sizeof(double)));
	w->lw = xrealloc(w->lw, xmul(2 * lnb, sizeof(double)));
}

static int subset_core(const struct vpa_ident_matrix *m, struct ident_ws *w, const uint32_t *rows,
		       size_t n, size_t k, double omega, size_t bins, struct vpa_ident_eval *out,
		       struct vpa_err *err)
{
	size_t nt = m->n_t;
	int rc = 0;
	struct vpa_pav pav = {0};
	struct vpa_linkability lk = {0};
	memset(out, 0, sizeof(*out));
	for (size_t j = 0; j < n; j++) {
		if (rows[j] >= m->n_rows || w->pos[rows[j]] >= 0) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "population row %u is out of range or repeated", (unsigned)rows[j]);
			goto out;
		}
		w->pos[rows[j]] = (long)j;
	}
	for (size_t t = 0; t < nt; t++)
		if (w->pos[m->truth[t]] < 0) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "probe %zu: its speaker is not in the population", t + 1);
			goto out;
		}
	if (n < 2) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "a population of one speaker gives no non-target trial");
		goto out;
	}
	/* linkability bins over the subset's extremes (as vpa_linkability finds them) */
	double lo = m->tar[0], hi = m->tar[nt - 1];
	for (size_t j = 0; j < n; j++) {
		lo = fmin(lo, (double)m->rmin[rows[j]]);
		hi = fmax(hi, (double)m->rmax[rows[j]]);
	}
	size_t lnb = bins;
	if (!lnb) {
		double f = floor((double)nt / 10);
		lnb = f < 100 ? (size_t)f : 100;
	}
	int do_link = nt >= 10 && lnb > 0 && lo < hi;
	double step = 0;
	if (do_link) {
		ws_link(w, lnb);
		vpa_linkability_edges(lo, hi, lnb, w->e);
		step = (w->e[lnb] - w->e[0]) / (double)lnb;
		if (!(step > 0) || !isfinite(step))
			step = INFINITY;
		memset(w->lcnt, 0, lnb * sizeof(double));
		for (size_t b = 0; b < lnb; b++) {
			w->lmin[b] = INFINITY;
			w->lmax[b] = -INFINITY;
		}
	}
	memset(w->cnt, 0, m->n_bins * sizeof(double));
	memset(w->higher, 0, nt * sizeof(uint32_t));
	memset(w->tied, 0, nt * sizeof(uint32_t));

	/* one pass over the non-target cells (rows of no probe's speaker have no
	   target cell to skip) */
	double inv = 1 / step;
	for (size_t j = 0; j < n; j++) {
		size_t r = rows[j];
		const float *Sr = m->S + r * nt;
		const uint32_t *Br = m->bin + r * nt;
		int has_tar = m->has_tar[r];
		if (!has_tar && do_link) {
			/* the common case, without the two tests below */
			for (size_t t = 0; t < nt; t++) {
				float x = Sr[t];
				w->cnt[Br[t]] += 1;
				w->higher[t] += x > m->ttrue[t];
				w->tied[t] += x == m->ttrue[t];
				size_t b = vpa_linkability_bin((double)x, w->e, lnb, lo, inv);
				w->lcnt[b] += 1;
				w->lmin[b] = x < w->lmin[b] ? x : w->lmin[b];
				w->lmax[b] = x > w->lmax[b] ? x : w->lmax[b];
			}
			continue;
		}
		for (size_t t = 0; t < nt; t++) {
			if (has_tar && m->truth[t] == r)
				continue;
			float x = Sr[t];
			w->cnt[Br[t]] += 1;
			w->higher[t] += x > m->ttrue[t];
			w->tied[t] += x == m->ttrue[t];
			if (do_link) {
				size_t b = vpa_linkability_bin((double)x, w->e, lnb, lo, inv);
				w->lcnt[b] += 1;
				w->lmin[b] = x < w->lmin[b] ? x : w->lmin[b];
				w->lmax[b] = x > w->lmax[b] ? x : w->lmax[b];
			}
		}
	}
	size_t n_non = xmul(nt, n - 1);

	/* ROCCH-EER and Cllr_min: PAV on the targets against the gap counts */
	size_t nb = 0;
	for (size_t b = 0; b < m->n_bins; b++)
		if (w->cnt[b] > 0) {
			w->rep[nb] = m->rep[b];
			w->cnt[nb++] = w->cnt[b];
		}
	struct vpa_scores sc = {m->tar, nt, w->rep, nb, NULL, w->cnt};
	if ((rc = vpa_pav_fit(&sc, 0, &pav, err)))
		goto out;
	out->eer = vpa_eer_rocch(&pav, NULL);
	out->cllr_min = vpa_cllr_min(&pav);

	/* linkability: the extremes of each bin carry its count */
	size_t nl = 0;
	if (do_link) {
		for (size_t b = 0; b < lnb; b++) {
			if (w->lcnt[b] == 0)
				continue;
			w->lval[nl] = (double)w->lmin[b];
			w->lw[nl++] = w->lcnt[b] > 1 ? w->lcnt[b] - 1 : 1;
			if (w->lcnt[b] > 1) {
				w->lval[nl] = (double)w->lmax[b];
				w->lw[nl++] = 1;
			}
		}
	} else {
		/* fewer than 10 probes or one value: vpa_linkability decides (undefined / 0) */
		ws_link(w, 1);
		w->lval[0] = lo < m->tar[0] ? lo : hi;
		w->lw[0] = 1;
		nl = 1;
	}
	struct vpa_scores sl = {m->tar, nt, w->lval, nl, NULL, w->lw};
	if ((rc = vpa_linkability(&sl, omega, bins, &lk, err)))
		goto out;
	out->linkability = lk.defined ? lk.dsys : NAN;
	/* the integral over finer bins than lnb would need the scores themselves */
	out->linkability_hist = lk.defined && (bins || lnb >= VPA_LINK_MIN_BINS) ? lk.dsys_hist : NAN;
	out->link_bins = lk.n_bins;
	out->link_bins_mated = lk.n_bins_mated;

	/* closed-set ranks (vpa_rank: 1 + #higher + #tied / 2) */
	double sum_rank = 0;
	size_t top1 = 0, top5 = 0, top10 = 0, topk = 0;
	for (size_t t = 0; t < nt; t++) {
		double rk = 1.0 + (double)w->higher[t] + (double)w->tied[t] / 2.0;
		sum_rank += rk;
		top1 += rk <= 1;
		top5 += rk <= 5;
		top10 += rk <= 10;
		topk += rk <= (double)k;
	}
	out->population = n;
	out->n_target = nt;
	out->n_nontarget = n_non;
	out->mean_rank = sum_rank / (double)nt;
	out->mean_norm_rank = out->mean_rank / (double)n;
	out->chance_rank = ((double)n + 1) / 2;
	out->top1 = (double)top1 / (double)nt;
	out->top5 = (double)top5 / (double)nt;
	out->top10 = (double)top10 / (double)nt;
	out->topk = (double)topk / (double)nt;
out:
	for (size_t j = 0; j < n; j++)
		if (rows[j] < m->n_rows)
			w->pos[rows[j]] = -1;
	vpa_linkability_release(&lk);
	vpa_pav_release(&pav);
	return rc;
}

int vpa_ident_subset(const struct vpa_ident_matrix *m, const uint32_t *rows, size_t n, size_t k,
		     double omega, size_t bins, struct vpa_ident_eval *out, struct vpa_err *err)
{
	struct ident_ws w;
	ws_init(&w, m);
	int rc = subset_core(m, &w, rows, n, k, omega, bins, out, err);
	ws_release(&w);
	return rc;
}
