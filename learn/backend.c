/*
 * learn/backend.c - centering, LDA, length normalisation, cosine scoring and
 * the trained back-end pipeline.  See plda.h and BACKENDS.md.
 */
#include "learn/plda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/la.h"

void vpa_rows_mean(const double *x, size_t n, size_t d, double *mean)
{
	memset(mean, 0, d * sizeof(double));
	for (size_t i = 0; i < n; i++)
		vpa_daxpy(d, 1.0, x + i * d, mean);
	if (n)
		for (size_t j = 0; j < d; j++)
			mean[j] /= (double)n;
}

void vpa_rows_center(double *x, size_t n, size_t d, const double *mean)
{
	for (size_t i = 0; i < n; i++)
		vpa_daxpy(d, -1.0, mean, x + i * d);
}

void vpa_rows_length_norm(double *x, size_t n, size_t d)
{
	double target = sqrt((double)d);
	for (size_t i = 0; i < n; i++) {
		double nr = vpa_dnrm2(d, x + i * d);
		if (nr > 0)
			for (size_t j = 0; j < d; j++)
				x[i * d + j] *= target / nr;
	}
}

double vpa_cosine(const double *a, const double *b, size_t d)
{
	double na = vpa_dnrm2(d, a), nb = vpa_dnrm2(d, b);
	if (na == 0 || nb == 0)
		return 0.0;
	return vpa_ddot(d, a, b) / (na * nb);
}

void vpa_cosine_scores(const double *a, size_t na, const double *b, size_t nb, size_t d,
		       double *out)
{
	if (na == 0 || nb == 0)
		return;
	double *ia = xmalloc(xmul(na, sizeof(double)));
	double *ib = xmalloc(xmul(nb, sizeof(double)));
	for (size_t i = 0; i < na; i++) {
		double r = vpa_dnrm2(d, a + i * d);
		ia[i] = r > 0 ? 1.0 / r : 0.0;
	}
	for (size_t i = 0; i < nb; i++) {
		double r = vpa_dnrm2(d, b + i * d);
		ib[i] = r > 0 ? 1.0 / r : 0.0;
	}
	vpa_dgemm(0, 1, na, nb, d, 1.0, a, d, b, d, 0.0, out, nb);
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			out[i * nb + j] *= ia[i] * ib[j];
	free(ia);
	free(ib);
}

int vpa_lda_train(const double *x, size_t n, size_t d, const uint32_t *spk, size_t n_spk,
		  size_t lda_dim, double *w, double *eig, struct vpa_err *err)
{
	if (lda_dim == 0 || lda_dim > d)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"lda_dim must be between 1 and the embedding dimension %zu, got %zu", d, lda_dim);
	int rc = 0;
	size_t *cnt = xcalloc(n_spk ? n_spk : 1, sizeof(size_t));
	double *means = xcalloc(xmul(n_spk ? n_spk : 1, d), sizeof(double));
	double *mu = xcalloc(d, sizeof(double));
	double *sw = NULL, *sb = NULL, *ev = NULL, *res = NULL;
	size_t k = 0, multi = 0;
	for (size_t i = 0; i < n; i++) {
		if (spk[i] >= n_spk)
			VPA_BUG("speaker index %u >= %zu", (unsigned)spk[i], n_spk);
		cnt[spk[i]]++;
		vpa_daxpy(d, 1.0, x + i * d, means + (size_t)spk[i] * d);
		vpa_daxpy(d, 1.0, x + i * d, mu);
	}
	for (size_t s = 0; s < n_spk; s++) {
		k += cnt[s] > 0;
		multi += cnt[s] > 1;
		if (cnt[s])
			for (size_t j = 0; j < d; j++)
				means[s * d + j] /= (double)cnt[s];
	}
	if (k < 2 || multi == 0) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "LDA needs at least 2 speakers and one with two or more utterances (got %zu speakers, %zu with several)",
			      k, multi);
		goto out;
	}
	if (n < d) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "LDA: %zu utterances are too few for dimension %zu", n, d);
		goto out;
	}
	for (size_t j = 0; j < d; j++)
		mu[j] /= (double)n;
	/* S_w from residuals (better conditioned than total - between). */
	res = xmalloc(xmul(n * d, sizeof(double)));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < d; j++)
			res[i * d + j] = x[i * d + j] - means[(size_t)spk[i] * d + j];
	sw = xmalloc(xmul(d * d, sizeof(double)));
	vpa_dgemm(1, 0, d, d, n, 1.0 / (double)n, res, d, res, d, 0.0, sw, d);
	/* S_b = sum_s n_s (m_s - mu)(m_s - mu)^T / N: rows sqrt(n_s)(m_s - mu). */
	size_t r = 0;
	for (size_t s = 0; s < n_spk; s++) {
		if (!cnt[s])
			continue;
		double sc = sqrt((double)cnt[s]);
		for (size_t j = 0; j < d; j++)
			res[r * d + j] = sc * (means[s * d + j] - mu[j]);
		r++;
	}
	sb = xmalloc(xmul(d * d, sizeof(double)));
	vpa_dgemm(1, 0, d, d, r, 1.0 / (double)n, res, d, res, d, 0.0, sb, d);
	for (size_t i = 0; i < d; i++)
		for (size_t j = i + 1; j < d; j++) {
			sw[j * d + i] = sw[i * d + j] = 0.5 * (sw[i * d + j] + sw[j * d + i]);
			sb[j * d + i] = sb[i * d + j] = 0.5 * (sb[i * d + j] + sb[j * d + i]);
		}
	ev = xmalloc(xmul(d, sizeof(double)));
	if ((rc = vpa_dsygv(d, sb, sw, ev, "LDA within-class covariance", err)))
		goto out;
	for (size_t q = 0; q < lda_dim; q++) {
		size_t col = d - 1 - q;
		double big = 0;
		for (size_t j = 0; j < d; j++)
			if (fabs(sb[j * d + col]) > fabs(big))
				big = sb[j * d + col];
		double sg = big < 0 ? -1.0 : 1.0;
		for (size_t j = 0; j < d; j++)
			w[q * d + j] = sg * sb[j * d + col];
		if (eig)
			eig[q] = ev[col];
	}
out:
	free(cnt);
	free(means);
	free(mu);
	free(sw);
	free(sb);
	free(ev);
	free(res);
	return rc;
}

/* ------------------------------------------------------------ pipeline */

struct vpa_backend {
	struct vpa_backend_cfg cfg;
	size_t d, dout;
	double *mean;   /* (d), zeros when not centering */
	double *lda;    /* (dout, d) or NULL */
	struct vpa_plda *plda;
};

void vpa_backend_cfg_init(struct vpa_backend_cfg *cfg)
{
	cfg->center = 1;
	cfg->lda_dim = 0;
	cfg->length_norm = 1;
	cfg->scoring = VPA_SCORE_PLDA;
	cfg->em_iters = 10;
	cfg->plda_norm = VPA_PLDA_NORM_KALDI;
}

void vpa_backend_free(struct vpa_backend *b)
{
	if (!b)
		return;
	free(b->mean);
	free(b->lda);
	vpa_plda_free(b->plda);
	free(b);
}

size_t vpa_backend_in_dim(const struct vpa_backend *b)
{
	return b->d;
}
size_t vpa_backend_out_dim(const struct vpa_backend *b)
{
	return b->dout;
}
const struct vpa_plda *vpa_backend_plda(const struct vpa_backend *b)
{
	return b->plda;
}

void vpa_backend_prepare(const struct vpa_backend *b, const double *x, size_t n, double *out)
{
	size_t d = b->d;
	if (b->lda) {
		double *xc = xmalloc(xmul(xmul(n ? n : 1, d), sizeof(double)));
		memcpy(xc, x, n * d * sizeof(double));
		vpa_rows_center(xc, n, d, b->mean);
		vpa_dgemm(0, 1, n, b->dout, d, 1.0, xc, d, b->lda, d, 0.0, out, b->dout);
		free(xc);
	} else {
		memcpy(out, x, n * d * sizeof(double));
		vpa_rows_center(out, n, d, b->mean);
	}
	if (b->cfg.length_norm)
		vpa_rows_length_norm(out, n, b->dout);
}

struct vpa_backend *vpa_backend_train(const struct vpa_embset *train,
				      const struct vpa_backend_cfg *cfg, struct vpa_err *err)
{
	size_t n = train->n, d = train->d;
	if (n == 0 || d == 0) {
		vpa_fail(err, VPA_EINPUT, NULL, "back-end training set is empty");
		return NULL;
	}
	if (cfg->scoring != VPA_SCORE_PLDA && cfg->scoring != VPA_SCORE_COSINE)
		VPA_BUG("unknown scoring %d", cfg->scoring);
	if (cfg->lda_dim > d) {
		vpa_fail(err, VPA_EINPUT, NULL, "lda_dim %zu is larger than the embedding dimension %zu",
			 cfg->lda_dim, d);
		return NULL;
	}
	struct vpa_backend *b = xcalloc(1, sizeof(*b));
	b->cfg = *cfg;
	b->d = d;
	b->dout = cfg->lda_dim ? cfg->lda_dim : d;
	b->mean = xcalloc(d, sizeof(double));
	double *xc = xmalloc(xmul(n * d, sizeof(double)));
	double *y = NULL;
	memcpy(xc, train->x, n * d * sizeof(double));
	if (cfg->center) {
		vpa_rows_mean(xc, n, d, b->mean);
		vpa_rows_center(xc, n, d, b->mean);
	}
	if (cfg->lda_dim) {
		b->lda = xmalloc(xmul(cfg->lda_dim * d, sizeof(double)));
		if (vpa_lda_train(xc, n, d, train->spk, train->n_spk, cfg->lda_dim, b->lda, NULL, err))
			goto fail;
	}
	y = xmalloc(xmul(n * b->dout, sizeof(double)));
	vpa_backend_prepare(b, train->x, n, y);
	if (cfg->scoring == VPA_SCORE_PLDA) {
		b->plda = vpa_plda_train(y, n, b->dout, train->spk, train->n_spk, cfg->em_iters, NULL, err);
		if (!b->plda)
			goto fail;
	}
	free(xc);
	free(y);
	return b;
fail:
	free(xc);
	free(y);
	vpa_backend_free(b);
	return NULL;
}

/* Prepared and (for PLDA) transformed enrolment and test rows. */
static void backend_vectors(const struct vpa_backend *b, const double *e, const uint32_t *counts,
			    size_t ne, const double *t, size_t nt, double **ue, double **vt)
{
	size_t k = b->dout;
	double *pe = xmalloc(xmul(xmul(ne ? ne : 1, k), sizeof(double)));
	double *pt = xmalloc(xmul(xmul(nt ? nt : 1, k), sizeof(double)));
	vpa_backend_prepare(b, e, ne, pe);
	vpa_backend_prepare(b, t, nt, pt);
	if (!b->plda) {
		*ue = pe;
		*vt = pt;
		return;
	}
	*ue = xmalloc(xmul(xmul(ne ? ne : 1, k), sizeof(double)));
	*vt = xmalloc(xmul(xmul(nt ? nt : 1, k), sizeof(double)));
	vpa_plda_transform_rows(b->plda, pe, ne, counts, b->cfg.plda_norm, *ue);
	vpa_plda_transform_rows(b->plda, pt, nt, NULL, b->cfg.plda_norm, *vt);
	free(pe);
	free(pt);
}

void vpa_backend_score(const struct vpa_backend *b, const double *e, const uint32_t *counts,
		       size_t ne, const double *t, size_t nt, double *out)
{
	double *ue, *vt;
	backend_vectors(b, e, counts, ne, t, nt, &ue, &vt);
	if (b->plda)
		vpa_plda_score_matrix(b->plda, ue, counts, ne, vt, nt, out);
	else
		vpa_cosine_scores(ue, ne, vt, nt, b->dout, out);
	free(ue);
	free(vt);
}

void vpa_backend_score_f(const struct vpa_backend *b, const double *e, const uint32_t *counts,
			 size_t ne, const double *t, size_t nt, float *out)
{
	double *ue, *vt;
	backend_vectors(b, e, counts, ne, t, nt, &ue, &vt);
	if (b->plda) {
		vpa_plda_score_matrix_f(b->plda, ue, counts, ne, vt, nt, out);
	} else {
		double *tmp = xmalloc(xmul(xmul(ne ? ne : 1, nt ? nt : 1), sizeof(double)));
		vpa_cosine_scores(ue, ne, vt, nt, b->dout, tmp);
		for (size_t i = 0; i < ne * nt; i++)
			out[i] = (float)tmp[i];
		free(tmp);
	}
	free(ue);
	free(vt);
}

int vpa_backend_score_sets(const struct vpa_backend *b, const struct vpa_embset *enroll,
			   const struct vpa_embset *test, double *out, struct vpa_err *err)
{
	if (enroll->n && enroll->d != b->d)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"enrolment set has dimension %zu, the back-end expects %zu", enroll->d, b->d);
	if (test->n && test->d != b->d)
		return vpa_fail(err, VPA_EINPUT, NULL, "test set has dimension %zu, the back-end expects %zu",
				test->d, b->d);
	double *means = xmalloc(xmul(xmul(enroll->n_spk ? enroll->n_spk : 1, b->d), sizeof(double)));
	uint32_t *cnt = xmalloc(xmul(enroll->n_spk ? enroll->n_spk : 1, sizeof(uint32_t)));
	vpa_embset_spk_means(enroll, means, cnt);
	int rc = 0;
	for (size_t s = 0; s < enroll->n_spk; s++)
		if (cnt[s] == 0) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "enrolment speaker '%s' has no utterance",
				      enroll->spk_id[s]);
			goto out;
		}
	vpa_backend_score(b, means, cnt, enroll->n_spk, test->x, test->n, out);
out:
	free(means);
	free(cnt);
	return rc;
}
