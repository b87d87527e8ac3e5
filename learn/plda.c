/*
 * learn/plda.c - two-covariance PLDA: Kaldi's PldaEstimator (EM), GetOutput
 * (the simultaneous diagonalisation), TransformIvector, LogLikelihoodRatio,
 * and a GEMM formulation of the LLR for whole score matrices.
 * See plda.h and BACKENDS.md.  Written from Kaldi's src/ivector/plda.cc.
 */
#include "learn/plda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/kaldi.h"
#include "base/la.h"

#define LOG_2PI 1.8378770664093454836

struct vpa_plda {
	size_t d;
	double *mean;      /* (d) */
	double *transform; /* (d, d) rows: T */
	double *psi;       /* (d), decreasing, >= 0 */
	double *offset;    /* (d) = -T mean */
};

static struct vpa_plda *plda_alloc(size_t d)
{
	struct vpa_plda *p = xcalloc(1, sizeof(*p));
	p->d = d;
	p->mean = xcalloc(d, sizeof(double));
	p->transform = xcalloc(xmul(d, d), sizeof(double));
	p->psi = xcalloc(d, sizeof(double));
	p->offset = xcalloc(d, sizeof(double));
	return p;
}

void vpa_plda_free(struct vpa_plda *p)
{
	if (!p)
		return;
	free(p->mean);
	free(p->transform);
	free(p->psi);
	free(p->offset);
	free(p);
}

size_t vpa_plda_dim(const struct vpa_plda *p)
{
	return p->d;
}
const double *vpa_plda_mean(const struct vpa_plda *p)
{
	return p->mean;
}
const double *vpa_plda_transform(const struct vpa_plda *p)
{
	return p->transform;
}
const double *vpa_plda_psi(const struct vpa_plda *p)
{
	return p->psi;
}

static void derived(struct vpa_plda *p)
{
	vpa_dgemv(0, p->d, p->d, -1.0, p->transform, p->d, p->mean, 0.0, p->offset);
}

static void symmetrize(double *a, size_t d)
{
	for (size_t i = 0; i < d; i++)
		for (size_t j = i + 1; j < d; j++) {
			double m = 0.5 * (a[i * d + j] + a[j * d + i]);
			a[i * d + j] = a[j * d + i] = m;
		}
}

/*
 * Kaldi's GetOutput: T makes W unit and B diagonal.  Kaldi takes the
 * Cholesky factor W = C C^T, projects B by C^-1 and eigen-decomposes; the
 * generalised symmetric-definite solver (dsygv) does exactly that
 * internally, and returns the columns of C^-T U, i.e. the rows of U^T C^-1.
 * Eigenvalues are floored at 0 and sorted decreasing (SortSvd).
 */
static int get_output(struct vpa_plda *p, const double *B, const double *W, struct vpa_err *err)
{
	size_t d = p->d;
	double *a = xmalloc(xmul(d * d, sizeof(double)));
	double *b = xmalloc(xmul(d * d, sizeof(double)));
	double *w = xmalloc(xmul(d, sizeof(double)));
	memcpy(a, B, d * d * sizeof(double));
	memcpy(b, W, d * d * sizeof(double));
	int rc = vpa_dsygv(d, a, b, w, "within-class covariance", err);
	if (rc == 0) {
		size_t floored = 0;
		for (size_t k = 0; k < d; k++) {
			size_t col = d - 1 - k; /* decreasing eigenvalue */
			double s = w[col];
			if (s < 0) {
				s = 0;
				floored++;
			}
			p->psi[k] = s;
			double big = 0;
			for (size_t j = 0; j < d; j++)
				if (fabs(a[j * d + col]) > fabs(big))
					big = a[j * d + col];
			double sg = big < 0 ? -1.0 : 1.0;
			for (size_t j = 0; j < d; j++)
				p->transform[k * d + j] = sg * a[j * d + col];
		}
		if (floored)
			vpa_warn("PLDA: floored %zu negative eigenvalues of the between-class covariance to zero",
				 floored);
		derived(p);
	}
	free(a);
	free(b);
	free(w);
	return rc;
}

struct vpa_plda *vpa_plda_from_cov(size_t d, const double *mean, const double *B,
				   const double *W, struct vpa_err *err)
{
	struct vpa_plda *p = plda_alloc(d);
	memcpy(p->mean, mean, d * sizeof(double));
	if (get_output(p, B, W, err)) {
		vpa_plda_free(p);
		return NULL;
	}
	return p;
}

int vpa_plda_covariances(const struct vpa_plda *p, double *B, double *W, struct vpa_err *err)
{
	size_t d = p->d;
	/* W^-1 = T^T T. */
	vpa_dgemm(1, 0, d, d, d, 1.0, p->transform, d, p->transform, d, 0.0, W, d);
	symmetrize(W, d);
	int rc = vpa_dspd_inverse(d, W, "PLDA transform", err);
	if (rc)
		return rc;
	/* T^-1 = W T^T, so B = T^-1 diag(psi) T^-T = (W T^T) diag(psi) (T W). */
	double *tw = xmalloc(xmul(d * d, sizeof(double))); /* T W */
	double *ptw = xmalloc(xmul(d * d, sizeof(double)));
	vpa_dgemm(0, 0, d, d, d, 1.0, p->transform, d, W, d, 0.0, tw, d);
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j < d; j++)
			ptw[i * d + j] = p->psi[i] * tw[i * d + j];
	vpa_dgemm(1, 0, d, d, d, 1.0, tw, d, ptw, d, 0.0, B, d);
	symmetrize(B, d);
	free(tw);
	free(ptw);
	return 0;
}

/* ------------------------------------------------------------------ EM */

struct group { /* classes with the same number of examples */
	size_t n;       /* examples per class */
	size_t k;       /* classes */
	double *m;      /* (k, d) class means minus the global mean */
};

struct stats {
	size_t d, n_ex, n_cls;
	double *scatter; /* (d, d) offset scatter: sum (x - class mean)(...)^T */
	struct group *g;
	size_t ng;
};

static void stats_release(struct stats *s)
{
	for (size_t i = 0; i < s->ng; i++)
		free(s->g[i].m);
	free(s->g);
	free(s->scatter);
}

/* Kaldi's ComputeObjf (per example): part 1 (offsets) + part 2 (class means). */
static int objf(const struct stats *s, const double *B, const double *W, double *out,
		struct vpa_err *err)
{
	size_t d = s->d;
	double *inv = xmalloc(xmul(d * d, sizeof(double)));
	double *tmp = xmalloc(xmul(d, sizeof(double)));
	double logdet, tot = 0;
	int rc = vpa_dspd_logdet(d, W, &logdet, "within-class covariance", err);
	if (rc)
		goto out;
	memcpy(inv, W, d * d * sizeof(double));
	if ((rc = vpa_dspd_inverse(d, inv, "within-class covariance", err)))
		goto out;
	double tr = 0;
	for (size_t i = 0; i < d * d; i++)
		tr += inv[i] * s->scatter[i];
	double wc = (double)s->n_ex - (double)s->n_cls;
	tot = -0.5 * (wc * (logdet + LOG_2PI * d) + tr);
	for (size_t gi = 0; gi < s->ng; gi++) {
		const struct group *g = &s->g[gi];
		for (size_t i = 0; i < d * d; i++)
			inv[i] = B[i] + W[i] / (double)g->n;
		if ((rc = vpa_dspd_logdet(d, inv, &logdet, "between-class covariance", err)) ||
		    (rc = vpa_dspd_inverse(d, inv, "between-class covariance", err)))
			goto out;
		for (size_t c = 0; c < g->k; c++) {
			const double *m = g->m + c * d;
			vpa_dgemv(0, d, d, 1.0, inv, d, m, 0.0, tmp);
			tot += -0.5 * (logdet + LOG_2PI * d + vpa_ddot(d, m, tmp));
		}
	}
	*out = tot / (double)s->n_ex;
out:
	free(inv);
	free(tmp);
	return rc;
}

/*
 * One EM iteration (Kaldi's EstimateOneIter).  For a class mean m of n
 * examples, x = m's between-class part has posterior N(w, M) with
 * M = (B^-1 + n W^-1)^-1, w = M n W^-1 m.  Stats:
 *   between += M + w w^T (count 1 per class)
 *   within  += scatter (count sum(n - 1)) + n (M + (m - w)(m - w)^T) (count 1)
 * Classes with the same n share M, so each group is two GEMMs.
 */
static int em_iter(const struct stats *s, double *B, double *W, struct vpa_err *err)
{
	size_t d = s->d;
	double *binv = xmalloc(xmul(d * d, sizeof(double)));
	double *winv = xmalloc(xmul(d * d, sizeof(double)));
	double *mix = xmalloc(xmul(d * d, sizeof(double)));
	double *bs = xcalloc(d * d, sizeof(double));
	double *ws = xmalloc(xmul(d * d, sizeof(double)));
	double *tmp = NULL, *wv = NULL;
	size_t kmax = 0;
	for (size_t gi = 0; gi < s->ng; gi++)
		if (s->g[gi].k > kmax)
			kmax = s->g[gi].k;
	tmp = xmalloc(xmul(kmax * d, sizeof(double)));
	wv = xmalloc(xmul(kmax * d, sizeof(double)));
	memcpy(binv, B, d * d * sizeof(double));
	memcpy(winv, W, d * d * sizeof(double));
	int rc;
	if ((rc = vpa_dspd_inverse(d, binv, "between-class covariance", err)) ||
	    (rc = vpa_dspd_inverse(d, winv, "within-class covariance", err)))
		goto out;
	memcpy(ws, s->scatter, d * d * sizeof(double));
	double wcount = (double)s->n_ex - (double)s->n_cls, bcount = 0;
	for (size_t gi = 0; gi < s->ng; gi++) {
		const struct group *g = &s->g[gi];
		double n = (double)g->n, k = (double)g->k;
		for (size_t i = 0; i < d * d; i++)
			mix[i] = binv[i] + n * winv[i];
		symmetrize(mix, d);
		if ((rc = vpa_dspd_inverse(d, mix, "PLDA posterior covariance", err)))
			goto out;
		/* tmp = n m W^-1 (k, d); wv = tmp M (k, d): rows are w^T. */
		vpa_dgemm(0, 0, g->k, d, d, n, g->m, d, winv, d, 0.0, tmp, d);
		vpa_dgemm(0, 0, g->k, d, d, 1.0, tmp, d, mix, d, 0.0, wv, d);
		/* between += k M + wv^T wv */
		for (size_t i = 0; i < d * d; i++)
			bs[i] += k * mix[i];
		vpa_dgemm(1, 0, d, d, g->k, 1.0, wv, d, wv, d, 1.0, bs, d);
		bcount += k;
		/* within += n k M + n (m - w)^T (m - w) */
		for (size_t i = 0; i < g->k * d; i++)
			tmp[i] = g->m[i] - wv[i];
		for (size_t i = 0; i < d * d; i++)
			ws[i] += n * k * mix[i];
		vpa_dgemm(1, 0, d, d, g->k, n, tmp, d, tmp, d, 1.0, ws, d);
		wcount += k;
	}
	for (size_t i = 0; i < d * d; i++) {
		W[i] = ws[i] / wcount;
		B[i] = bs[i] / bcount;
	}
	symmetrize(W, d);
	symmetrize(B, d);
out:
	free(binv);
	free(winv);
	free(mix);
	free(bs);
	free(ws);
	free(tmp);
	free(wv);
	return rc;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = ((const size_t *)a)[0], y = ((const size_t *)b)[0];
	if (x != y)
		return x < y ? -1 : 1;
	x = ((const size_t *)a)[1];
	y = ((const size_t *)b)[1];
	return x < y ? -1 : x > y;
}

struct vpa_plda *vpa_plda_train(const double *x, size_t n, size_t d, const uint32_t *spk,
				size_t n_spk, int em_iters, double *objf_out,
				struct vpa_err *err)
{
	struct vpa_plda *p = NULL;
	struct stats s;
	memset(&s, 0, sizeof(s));
	s.d = d;
	size_t *cnt = xcalloc(n_spk ? n_spk : 1, sizeof(size_t));
	double *means = xcalloc(xmul(n_spk ? n_spk : 1, d), sizeof(double));
	double *res = NULL, *B = NULL, *W = NULL;
	size_t *order = NULL;
	int rc = 0;
	if (d == 0) {
		vpa_fail(err, VPA_EINPUT, NULL, "PLDA: empty vectors");
		goto out;
	}
	if (em_iters < 0) {
		vpa_fail(err, VPA_EINPUT, NULL, "PLDA: em_iters must be >= 0, got %d", em_iters);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (spk[i] >= n_spk)
			VPA_BUG("speaker index %u >= %zu", (unsigned)spk[i], n_spk);
		cnt[spk[i]]++;
		vpa_daxpy(d, 1.0, x + i * d, means + (size_t)spk[i] * d);
	}
	size_t multi = 0;
	double *mu = xcalloc(d, sizeof(double));
	for (size_t c = 0; c < n_spk; c++) {
		if (!cnt[c])
			continue;
		for (size_t j = 0; j < d; j++)
			means[c * d + j] /= (double)cnt[c];
		vpa_daxpy(d, 1.0, means + c * d, mu);
		s.n_cls++;
		s.n_ex += cnt[c];
		multi += cnt[c] > 1;
	}
	if (multi == 0) {
		free(mu);
		vpa_fail(err, VPA_EINPUT, NULL,
			 "no speaker with two or more utterances: cannot estimate the within-class covariance");
		goto out;
	}
	for (size_t j = 0; j < d; j++)
		mu[j] /= (double)s.n_cls; /* mean of the class means (Kaldi's sum_ / class_weight_) */
	/* Offset scatter from residuals: R^T R, R = x - class mean. */
	res = xmalloc(xmul(n * d, sizeof(double)));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < d; j++)
			res[i * d + j] = x[i * d + j] - means[(size_t)spk[i] * d + j];
	s.scatter = xmalloc(xmul(d * d, sizeof(double)));
	vpa_dgemm(1, 0, d, d, n, 1.0, res, d, res, d, 0.0, s.scatter, d);
	symmetrize(s.scatter, d);
	/* Groups of classes by example count (Kaldi sorts class_info_ by count). */
	order = xmalloc(xmul(s.n_cls, 2 * sizeof(size_t)));
	size_t k = 0;
	for (size_t c = 0; c < n_spk; c++)
		if (cnt[c]) {
			order[2 * k] = cnt[c];
			order[2 * k + 1] = c;
			k++;
		}
	qsort(order, s.n_cls, 2 * sizeof(size_t), cmp_size);
	s.g = xcalloc(s.n_cls, sizeof(struct group));
	for (size_t i = 0; i < s.n_cls;) {
		size_t j = i;
		while (j < s.n_cls && order[2 * j] == order[2 * i])
			j++;
		struct group *g = &s.g[s.ng++];
		g->n = order[2 * i];
		g->k = j - i;
		g->m = xmalloc(xmul(g->k * d, sizeof(double)));
		for (size_t t = 0; t < g->k; t++)
			for (size_t q = 0; q < d; q++)
				g->m[t * d + q] = means[order[2 * (i + t) + 1] * d + q] - mu[q];
		i = j;
	}
	B = xcalloc(d * d, sizeof(double));
	W = xcalloc(d * d, sizeof(double));
	for (size_t j = 0; j < d; j++)
		B[j * d + j] = W[j * d + j] = 1.0;
	if (objf_out && (rc = objf(&s, B, W, &objf_out[0], err))) {
		free(mu);
		goto out;
	}
	for (int it = 0; it < em_iters; it++) {
		if ((rc = em_iter(&s, B, W, err)) ||
		    (objf_out && (rc = objf(&s, B, W, &objf_out[it + 1], err)))) {
			free(mu);
			goto out;
		}
	}
	p = plda_alloc(d);
	memcpy(p->mean, mu, d * sizeof(double));
	free(mu);
	if (get_output(p, B, W, err)) {
		vpa_plda_free(p);
		p = NULL;
	}
out:
	stats_release(&s);
	free(cnt);
	free(means);
	free(res);
	free(order);
	free(B);
	free(W);
	return p;
}

/* ------------------------------------------------------------- scoring */

void vpa_plda_transform_rows(const struct vpa_plda *p, const double *x, size_t n,
			     const uint32_t *counts, int norm, double *out)
{
	size_t d = p->d;
	/* out = x T^T + offset */
	for (size_t i = 0; i < n; i++)
		memcpy(out + i * d, p->offset, d * sizeof(double));
	vpa_dgemm(0, 1, n, d, d, 1.0, x, d, p->transform, d, 1.0, out, d);
	if (norm == VPA_PLDA_NORM_NONE)
		return;
	for (size_t i = 0; i < n; i++) {
		double *y = out + i * d, f;
		if (norm == VPA_PLDA_NORM_SIMPLE) {
			double nr = vpa_dnrm2(d, y);
			f = nr > 0 ? sqrt((double)d) / nr : 1.0;
		} else {
			/* Kaldi's GetNormalizationFactor: y^T (psi + I/n)^-1 y = d. */
			double c = counts ? (double)counts[i] : 1.0, dot = 0;
			if (c < 1)
				VPA_BUG("PLDA count 0 for row %zu", i);
			for (size_t j = 0; j < d; j++)
				dot += y[j] * y[j] / (p->psi[j] + 1.0 / c);
			f = dot > 0 ? sqrt((double)d / dot) : 1.0;
		}
		for (size_t j = 0; j < d; j++)
			y[j] *= f;
	}
}

double vpa_plda_llr(const struct vpa_plda *p, const double *u, uint32_t count, const double *v)
{
	size_t d = p->d;
	double n = (double)count, given = 0, without = 0;
	for (size_t i = 0; i < d; i++) {
		double psi = p->psi[i];
		double mean = n * psi / (n * psi + 1.0) * u[i];
		double var = 1.0 + psi / (n * psi + 1.0);
		double diff = v[i] - mean;
		given += log(var) + diff * diff / var;
		without += log(1.0 + psi) + v[i] * v[i] / (1.0 + psi);
	}
	/* The 2 pi terms cancel. */
	return -0.5 * given + 0.5 * without;
}

/*
 * LLR(u, n, v) = sum_i (a_i/c_i) u_i v_i                       cross term
 *              + sum_i g_i(n) v_i^2,  g = -(1/c - 1/(1+psi))/2 test term
 *              + k(u, n)                                        enrolment constant
 * with k = -1/2 sum (a^2 u^2 / c + log c - log(1 + psi)).
 * Distinct counts are few in practice; their test terms are one more GEMM.
 */
struct score_prep {
	double *up;      /* (ne, d) scaled enrolment rows */
	double *k;       /* (ne) */
	size_t *gidx;    /* (ne) index into the distinct counts */
	double *g;       /* (ng, d) */
	size_t ng;
	double *v2;      /* (nt, d) squared test rows */
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void score_prep(const struct vpa_plda *p, const double *u, const uint32_t *counts, size_t ne,
		       const double *v, size_t nt, struct score_prep *sp)
{
	size_t d = p->d;
	uint32_t *dist = xmalloc(xmul(ne ? ne : 1, sizeof(uint32_t)));
	for (size_t e = 0; e < ne; e++)
		dist[e] = counts ? counts[e] : 1;
	qsort(dist, ne, sizeof(uint32_t), cmp_u32);
	size_t ng = 0;
	for (size_t e = 0; e < ne; e++)
		if (ng == 0 || dist[ng - 1] != dist[e])
			dist[ng++] = dist[e];
	sp->ng = ng;
	sp->g = xmalloc(xmul(xmul(ng ? ng : 1, d), sizeof(double)));
	double *a_c = xmalloc(xmul(xmul(ng ? ng : 1, d), sizeof(double)));  /* a/c per count */
	double *kq = xmalloc(xmul(xmul(ng ? ng : 1, d), sizeof(double)));   /* a^2/c per count */
	double *kc = xmalloc(xmul(ng ? ng : 1, sizeof(double)));             /* sum log c - log(1+psi) */
	for (size_t q = 0; q < ng; q++) {
		double n = (double)dist[q], lc = 0;
		if (dist[q] == 0)
			VPA_BUG("PLDA enrolment count 0");
		for (size_t i = 0; i < d; i++) {
			double psi = p->psi[i];
			double a = n * psi / (n * psi + 1.0), c = 1.0 + psi / (n * psi + 1.0);
			a_c[q * d + i] = a / c;
			kq[q * d + i] = a * a / c;
			sp->g[q * d + i] = -0.5 * (1.0 / c - 1.0 / (1.0 + psi));
			lc += log(c) - log1p(psi);
		}
		kc[q] = lc;
	}
	sp->up = xmalloc(xmul(xmul(ne ? ne : 1, d), sizeof(double)));
	sp->k = xmalloc(xmul(ne ? ne : 1, sizeof(double)));
	sp->gidx = xmalloc(xmul(ne ? ne : 1, sizeof(size_t)));
	for (size_t e = 0; e < ne; e++) {
		uint32_t c = counts ? counts[e] : 1;
		const uint32_t *f = bsearch(&c, dist, ng, sizeof(uint32_t), cmp_u32);
		size_t q = (size_t)(f - dist);
		sp->gidx[e] = q;
		double kk = 0;
		for (size_t i = 0; i < d; i++) {
			double ui = u[e * d + i];
			sp->up[e * d + i] = a_c[q * d + i] * ui;
			kk += kq[q * d + i] * ui * ui;
		}
		sp->k[e] = -0.5 * (kk + kc[q]);
	}
	sp->v2 = xmalloc(xmul(xmul(nt ? nt : 1, d), sizeof(double)));
	for (size_t i = 0; i < nt * d; i++)
		sp->v2[i] = v[i] * v[i];
	free(dist);
	free(a_c);
	free(kq);
	free(kc);
}

static void score_prep_release(struct score_prep *sp)
{
	free(sp->up);
	free(sp->k);
	free(sp->gidx);
	free(sp->g);
	free(sp->v2);
}

void vpa_plda_score_matrix(const struct vpa_plda *p, const double *u, const uint32_t *counts,
			   size_t ne, const double *v, size_t nt, double *out)
{
	if (ne == 0 || nt == 0)
		return;
	size_t d = p->d;
	struct score_prep sp;
	score_prep(p, u, counts, ne, v, nt, &sp);
	double *gt = xmalloc(xmul(sp.ng * nt, sizeof(double))); /* (ng, nt) test terms */
	vpa_dgemm(0, 1, sp.ng, nt, d, 1.0, sp.g, d, sp.v2, d, 0.0, gt, nt);
	for (size_t e = 0; e < ne; e++) {
		const double *g = gt + sp.gidx[e] * nt;
		double k = sp.k[e], *o = out + e * nt;
		for (size_t t = 0; t < nt; t++)
			o[t] = g[t] + k;
	}
	vpa_dgemm(0, 1, ne, nt, d, 1.0, sp.up, d, v, d, 1.0, out, nt);
	free(gt);
	score_prep_release(&sp);
}

void vpa_plda_score_matrix_f(const struct vpa_plda *p, const double *u, const uint32_t *counts,
			     size_t ne, const double *v, size_t nt, float *out)
{
	if (ne == 0 || nt == 0)
		return;
	size_t d = p->d;
	struct score_prep sp;
	score_prep(p, u, counts, ne, v, nt, &sp);
	double *gt = xmalloc(xmul(sp.ng * nt, sizeof(double)));
	vpa_dgemm(0, 1, sp.ng, nt, d, 1.0, sp.g, d, sp.v2, d, 0.0, gt, nt);
	float *uf = xmalloc(xmul(ne * d, sizeof(float)));
	float *vf = xmalloc(xmul(nt * d, sizeof(float)));
	for (size_t i = 0; i < ne * d; i++)
		uf[i] = (float)sp.up[i];
	for (size_t i = 0; i < nt * d; i++)
		vf[i] = (float)v[i];
	for (size_t e = 0; e < ne; e++) {
		const double *g = gt + sp.gidx[e] * nt;
		double k = sp.k[e];
		float *o = out + e * nt;
		for (size_t t = 0; t < nt; t++)
			o[t] = (float)(g[t] + k);
	}
	vpa_sgemm(0, 1, ne, nt, d, 1.0f, uf, d, vf, d, 1.0f, out, nt);
	free(uf);
	free(vf);
	free(gt);
	score_prep_release(&sp);
}

/* ------------------------------------------------------------- save/load */

int vpa_plda_save(const struct vpa_plda *p, const char *path, struct vpa_err *err)
{
	struct vpa_atomic a;
	FILE *f = vpa_atomic_open(path, &a, err);
	if (!f)
		return err ? err->status : VPA_EIO;
	fputs("<Plda> ", f);
	vpa_kaldi_fprint_vector(f, p->mean, p->d, 17);
	vpa_kaldi_fprint_matrix(f, p->transform, p->d, p->d, 17);
	vpa_kaldi_fprint_vector(f, p->psi, p->d, 17);
	fputs("</Plda> \n", f);
	return vpa_atomic_commit(&a, err);
}

static int expect_token(const char *name, const unsigned char *buf, size_t len, size_t *pos,
			const char *tok, struct vpa_err *err)
{
	while (*pos < len && (buf[*pos] == ' ' || buf[*pos] == '\n' || buf[*pos] == '\t' || buf[*pos] == '\r'))
		(*pos)++;
	size_t n = strlen(tok);
	if (len - *pos < n || memcmp(buf + *pos, tok, n))
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: byte %zu: expected '%s'", name, *pos, tok);
	*pos += n;
	return 0;
}

struct vpa_plda *vpa_plda_parse(const char *name, const unsigned char *buf, size_t len,
				struct vpa_err *err)
{
	size_t pos = 0;
	int binary = len >= 2 && buf[0] == 0 && buf[1] == 'B';
	double *v[3] = { NULL, NULL, NULL };
	size_t r[3], c[3];
	int m[3];
	struct vpa_plda *p = NULL;
	const char *what[3] = { "PLDA mean", "PLDA transform", "PLDA psi" };
	if (binary)
		pos = 2;
	if (expect_token(name, buf, len, &pos, "<Plda>", err))
		goto out;
	if (binary) {
		if (pos >= len || buf[pos] != ' ') {
			vpa_fail(err, VPA_EINPUT, NULL, "%s: byte %zu: expected a space after '<Plda>'", name, pos);
			goto out;
		}
		pos++;
	}
	for (int i = 0; i < 3; i++) {
		if (binary && (len - pos < 2 || buf[pos] != 'D')) {
			vpa_fail(err, VPA_EINPUT, NULL, "%s: byte %zu: expected a double-precision %s (DV/DM)",
				 name, pos, what[i]);
			goto out;
		}
		if (vpa_kaldi_parse_object(name, buf, len, &pos, binary, what[i], &v[i], &r[i], &c[i], &m[i],
					   err))
			goto out;
	}
	if (expect_token(name, buf, len, &pos, "</Plda>", err))
		goto out;
	size_t d = c[0];
	if (m[0] || m[2] || !m[1] || d == 0 || r[1] != d || c[1] != d || c[2] != d) {
		vpa_fail(err, VPA_EINPUT, NULL,
			 "%s: inconsistent PLDA: mean of %zu, transform %zu x %zu, psi of %zu (expected vectors of d and a d x d matrix)",
			 name, c[0], r[1], c[1], c[2]);
		goto out;
	}
	for (size_t i = 0; i < d; i++)
		if (!(v[2][i] >= 0)) {
			vpa_fail(err, VPA_EINPUT, NULL, "%s: PLDA psi[%zu] = %g is negative", name, i, v[2][i]);
			goto out;
		}
	p = plda_alloc(d);
	memcpy(p->mean, v[0], d * sizeof(double));
	memcpy(p->transform, v[1], d * d * sizeof(double));
	memcpy(p->psi, v[2], d * sizeof(double));
	derived(p);
out:
	for (int i = 0; i < 3; i++)
		free(v[i]);
	return p;
}

struct vpa_plda *vpa_plda_load(const char *path, struct vpa_err *err)
{
	char *buf;
	size_t len;
	if (vpa_read_file(path, &buf, &len, err))
		return NULL;
	struct vpa_plda *p = vpa_plda_parse(path, (const unsigned char *)buf, len, err);
	free(buf);
	return p;
}
