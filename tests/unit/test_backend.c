/*
 * tests/unit/test_backend.c - centering, length normalisation, cosine, LDA
 * and the trained back-end pipeline, against hand values and properties.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "formats/embset.h"
#include "base/la.h"
#include "learn/plda.h"
#include "harness.h"

static void test_center_and_length_norm(void)
{
	double x[6] = { 1, 2, 3, 4, 5, 9 }, m[3];
	vpa_rows_mean(x, 2, 3, m);
	CHECK_NEAR(m[0], 2.5, 0);
	CHECK_NEAR(m[1], 3.5, 0);
	CHECK_NEAR(m[2], 6.0, 0);
	vpa_rows_center(x, 2, 3, m);
	CHECK_NEAR(x[0], -1.5, 0);
	CHECK_NEAR(x[5], 3.0, 0);
	/* [3, 4] has norm 5: scaled to sqrt(2) -> [3, 4] * sqrt(2) / 5. */
	double v[6] = { 3, 4, 0, 0, -1, 1 };
	vpa_rows_length_norm(v, 3, 2);
	CHECK_NEAR(v[0], 0.6 * sqrt(2.0), 1e-15);
	CHECK_NEAR(v[1], 0.8 * sqrt(2.0), 1e-15);
	CHECK(v[2] == 0 && v[3] == 0); /* zero row stays zero */
	CHECK_NEAR(v[4], -1.0, 1e-15);
	CHECK_NEAR(v[5], 1.0, 1e-15);
	/* norms equal sqrt(dim) on random rows */
	struct vpa_rng r;
	vpa_rng_seed(&r, 1);
	double y[50 * 7];
	for (size_t i = 0; i < 350; i++)
		y[i] = 5 * vpa_rng_normal(&r);
	vpa_rows_length_norm(y, 50, 7);
	for (size_t i = 0; i < 50; i++)
		CHECK_NEAR(vpa_dnrm2(7, y + 7 * i), sqrt(7.0), 1e-13);
}

static void test_cosine(void)
{
	double a[2] = { 1, 0 }, b[2] = { 1, 1 }, c[2] = { -2, 0 }, z[2] = { 0, 0 };
	CHECK_NEAR(vpa_cosine(a, b, 2), 1 / sqrt(2.0), 1e-15);
	CHECK_NEAR(vpa_cosine(a, c, 2), -1.0, 1e-15);
	CHECK(vpa_cosine(a, z, 2) == 0.0);
	double p[6] = { 1, 2, 3, 0, 1, 0 }, q[6] = { 4, 5, 6, 1, 0, 0 }, out[4];
	vpa_cosine_scores(p, 2, q, 2, 3, out);
	CHECK_NEAR(out[0], 32 / (sqrt(14.0) * sqrt(77.0)), 1e-15); /* 1.4+10+18 = 32 */
	CHECK_NEAR(out[1], 1 / sqrt(14.0), 1e-15);
	CHECK_NEAR(out[2], 5 / sqrt(77.0), 1e-15);
	CHECK_NEAR(out[3], 0.0, 1e-15);
}

/*
 * Classes that differ only along u, with a non-isotropic within-class
 * covariance W: the Fisher direction is W^-1 u.
 */
static void test_lda_direction(void)
{
	const size_t d = 6, ns = 300, nu = 40, n = ns * nu;
	struct vpa_rng r;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_rng_seed(&r, 77);
	double L[36] = { 0 }, W[36], u[6] = { 1, -2, 0.5, 0, 3, 1 };
	/* W = L L^T with a fixed lower-triangular L. */
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j <= i; j++)
			L[i * d + j] = i == j ? 1.0 + 0.3 * (double)i : 0.4 * vpa_rng_normal(&r);
	vpa_dgemm(0, 1, d, d, d, 1.0, L, d, L, d, 0.0, W, d);
	double *x = malloc(n * d * sizeof(double));
	uint32_t *spk = malloc(n * sizeof(uint32_t));
	for (size_t s = 0; s < ns; s++) {
		double t = 3 * vpa_rng_normal(&r);
		for (size_t k = 0; k < nu; k++) {
			size_t row = s * nu + k;
			double z[6];
			for (size_t i = 0; i < d; i++)
				z[i] = vpa_rng_normal(&r);
			for (size_t i = 0; i < d; i++) {
				double e = 0;
				for (size_t j = 0; j <= i; j++)
					e += L[i * d + j] * z[j];
				x[row * d + i] = 7.0 + t * u[i] + e;
			}
			spk[row] = (uint32_t)s;
		}
	}
	double w[36], eig[6];
	CHECK(vpa_lda_train(x, n, d, spk, ns, d, w, eig, &err) == 0);
	/* Expected direction W^-1 u. */
	double winv[36], dir[6];
	memcpy(winv, W, sizeof(W));
	vpa_dspd_inverse(d, winv, "W", &err);
	vpa_dgemv(0, d, d, 1.0, winv, d, u, 0.0, dir);
	double c = vpa_cosine(w, dir, d);
	printf("# cos(top LDA direction, W^-1 u) = %.6f, eigenvalues %.3f %.3f\n", c, eig[0], eig[1]);
	CHECK(fabs(c) > 0.999);
	for (size_t i = 0; i + 1 < d; i++)
		CHECK(eig[i] >= eig[i + 1]);
	CHECK(eig[0] > 50 * eig[1]); /* one discriminant direction */
	/* After LDA: within-class covariance = I, between = diag(eig). */
	double *y = malloc(n * d * sizeof(double));
	vpa_dgemm(0, 1, n, d, d, 1.0, x, d, w, d, 0.0, y, d);
	double *m = calloc(ns * d, sizeof(double)), mu[6] = { 0 }, sw[36] = { 0 }, sb[36] = { 0 };
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < d; j++) {
			m[spk[i] * d + j] += y[i * d + j] / nu;
			mu[j] += y[i * d + j] / n;
		}
	for (size_t i = 0; i < n; i++)
		for (size_t a = 0; a < d; a++)
			for (size_t b = 0; b < d; b++)
				sw[a * d + b] += (y[i * d + a] - m[spk[i] * d + a]) * (y[i * d + b] - m[spk[i] * d + b]) / n;
	for (size_t s = 0; s < ns; s++)
		for (size_t a = 0; a < d; a++)
			for (size_t b = 0; b < d; b++)
				sb[a * d + b] += (double)nu * (m[s * d + a] - mu[a]) * (m[s * d + b] - mu[b]) / n;
	for (size_t a = 0; a < d; a++)
		for (size_t b = 0; b < d; b++) {
			CHECK_NEAR(sw[a * d + b], a == b ? 1.0 : 0.0, 1e-9);
			CHECK_NEAR(sb[a * d + b], a == b ? eig[a] : 0.0, 1e-9 * (1 + eig[0]));
		}
	/* Reduced dimension keeps the leading rows. */
	double w2[12];
	CHECK(vpa_lda_train(x, n, d, spk, ns, 2, w2, NULL, &err) == 0);
	for (size_t i = 0; i < 12; i++)
		CHECK_NEAR(w2[i], w[i], 1e-9);
	vpa_err_init(&err);
	CHECK(vpa_lda_train(x, n, d, spk, ns, 7, w2, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "lda_dim must be between 1 and the embedding dimension 6, got 7");
	vpa_err_init(&err);
	CHECK(vpa_lda_train(x, 3, d, spk, ns, 2, w2, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "LDA needs at least 2 speakers and one with two or more utterances (got 1 speakers, 1 with several)");
	free(x);
	free(spk);
	free(y);
	free(m);
}

/* A simulated embedding set: speaker offset (B) plus utterance noise (W). */
static void sim_set(struct vpa_embset *es, size_t d, size_t ns, size_t nu, const char *prefix,
		    uint64_t seed)
{
	/* Speaker factors from a stream per speaker name, so two sets made with
	 * the same prefix share speakers; utterance noise from its own stream. */
	struct vpa_rng r, rs;
	vpa_rng_split(&r, seed, "noise");
	double *spk = malloc(d * sizeof(double)), *x = malloc(d * sizeof(double));
	for (size_t s = 0; s < ns; s++) {
		char sid[64], uid[96];
		snprintf(sid, sizeof(sid), "%s%zu", prefix, s);
		vpa_rng_split(&rs, 1, sid);
		for (size_t i = 0; i < d; i++)
			spk[i] = (1.0 + (double)(i % 3)) * vpa_rng_normal(&rs);
		for (size_t k = 0; k < nu; k++) {
			snprintf(uid, sizeof(uid), "%s-u%zu", sid, k);
			for (size_t i = 0; i < d; i++)
				x[i] = 3.0 + spk[i] + 0.8 * vpa_rng_normal(&r);
			vpa_embset_add(es, uid, sid, x, d, NULL);
		}
	}
	free(spk);
	free(x);
}

static void test_pipeline(void)
{
	struct vpa_embset tr, en, te;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embset_init(&tr);
	vpa_embset_init(&en);
	vpa_embset_init(&te);
	sim_set(&tr, 16, 200, 8, "t", 1);
	/* Enrolment and test share speakers (same seed, other utterances). */
	sim_set(&en, 16, 20, 3, "e", 2);
	sim_set(&te, 16, 20, 5, "e", 3);
	struct vpa_backend_cfg cfg;
	vpa_backend_cfg_init(&cfg);
	CHECK(cfg.center == 1 && cfg.lda_dim == 0 && cfg.length_norm == 1 && cfg.em_iters == 10 &&
	      cfg.plda_norm == VPA_PLDA_NORM_KALDI && cfg.scoring == VPA_SCORE_PLDA);
	cfg.lda_dim = 10;
	struct vpa_backend *b = vpa_backend_train(&tr, &cfg, &err);
	CHECK(b != NULL);
	if (!b)
		return;
	CHECK(vpa_backend_out_dim(b) == 10 && vpa_backend_in_dim(b) == 16);
	double *sc = malloc(en.n_spk * te.n * sizeof(double));
	CHECK(vpa_backend_score_sets(b, &en, &te, sc, &err) == 0);
	/* The same by hand: mean -> prepare -> transform with count -> LLR. */
	double mean[16], pe[10], pt[10], ue[10], vt[10];
	uint32_t cnt[20];
	double *means = malloc(en.n_spk * 16 * sizeof(double));
	vpa_embset_spk_means(&en, means, cnt);
	memcpy(mean, means + 16 * 3, sizeof(mean));
	const struct vpa_plda *p = vpa_backend_plda(b);
	vpa_backend_prepare(b, mean, 1, pe);
	CHECK_NEAR(vpa_dnrm2(10, pe), sqrt(10.0), 1e-12);
	vpa_backend_prepare(b, te.x + 16 * 7, 1, pt);
	vpa_plda_transform_rows(p, pe, 1, &cnt[3], VPA_PLDA_NORM_KALDI, ue);
	vpa_plda_transform_rows(p, pt, 1, NULL, VPA_PLDA_NORM_KALDI, vt);
	CHECK(cnt[3] == 3);
	CHECK_NEAR(sc[3 * te.n + 7], vpa_plda_llr(p, ue, 3, vt), 1e-9);
	/* Targets score above non-targets. */
	double tar = 0, non = 0;
	size_t nt = 0, nn = 0, errs = 0;
	for (size_t s = 0; s < en.n_spk; s++)
		for (size_t t = 0; t < te.n; t++) {
			int same = !strcmp(en.spk_id[s], te.spk_id[te.spk[t]]);
			if (same) {
				tar += sc[s * te.n + t];
				nt++;
				errs += sc[s * te.n + t] < 0;
			} else {
				non += sc[s * te.n + t];
				nn++;
				errs += sc[s * te.n + t] > 0;
			}
		}
	printf("# mean target LLR %.2f, non-target %.2f, %zu sign errors of %zu\n", tar / nt, non / nn,
	       errs, nt + nn);
	CHECK(tar / nt > 5 && non / nn < -5);
	CHECK(errs < (nt + nn) / 50);
	/* The float path agrees. */
	float *sf = malloc(en.n_spk * te.n * sizeof(float));
	vpa_backend_score_f(b, means, cnt, en.n_spk, te.x, te.n, sf);
	for (size_t i = 0; i < en.n_spk * te.n; i++)
		CHECK_NEAR(sf[i], sc[i], 1e-4 * (1 + fabs(sc[i])));
	vpa_backend_free(b);
	/* Cosine back-end: prepare then cosine. */
	cfg.scoring = VPA_SCORE_COSINE;
	cfg.lda_dim = 0;
	b = vpa_backend_train(&tr, &cfg, &err);
	CHECK(b != NULL && vpa_backend_plda(b) == NULL);
	CHECK(vpa_backend_score_sets(b, &en, &te, sc, &err) == 0);
	double a16[16], t16[16];
	memcpy(a16, means + 16 * 3, sizeof(a16));
	memcpy(t16, te.x + 16 * 7, sizeof(t16));
	/* centred by the training mean */
	double trm[16];
	vpa_rows_mean(tr.x, tr.n, 16, trm);
	vpa_rows_center(a16, 1, 16, trm);
	vpa_rows_center(t16, 1, 16, trm);
	CHECK_NEAR(sc[3 * te.n + 7], vpa_cosine(a16, t16, 16), 1e-12);
	vpa_backend_free(b);
	/* Errors. */
	cfg.lda_dim = 17;
	vpa_err_init(&err);
	CHECK(vpa_backend_train(&tr, &cfg, &err) == NULL);
	CHECK_STR(err.msg, "lda_dim 17 is larger than the embedding dimension 16");
	cfg.lda_dim = 0;
	b = vpa_backend_train(&tr, &cfg, &err);
	struct vpa_embset small;
	vpa_embset_init(&small);
	sim_set(&small, 4, 2, 2, "x", 3);
	vpa_err_init(&err);
	CHECK(vpa_backend_score_sets(b, &small, &te, sc, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "enrolment set has dimension 4, the back-end expects 16");
	vpa_backend_free(b);
	vpa_embset_release(&small);
	free(sc);
	free(sf);
	free(means);
	vpa_embset_release(&tr);
	vpa_embset_release(&en);
	vpa_embset_release(&te);
}

/* log N(x; mu, S) for a small dense S (Cholesky in the test, no LAPACK). */
static double gauss_logpdf(const double *x, const double *mu, const double *S, size_t d)
{
	double L[64 * 64], z[64];
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j <= i; j++) {
			double v = S[i * d + j];
			for (size_t k = 0; k < j; k++)
				v -= L[i * 64 + k] * L[j * 64 + k];
			L[i * 64 + j] = i == j ? sqrt(v) : v / L[j * 64 + j];
		}
	double logdet = 0, q = 0;
	for (size_t i = 0; i < d; i++) {
		double v = x[i] - mu[i];
		for (size_t k = 0; k < i; k++)
			v -= L[i * 64 + k] * z[k];
		z[i] = v / L[i * 64 + i];
		q += z[i] * z[i];
		logdet += 2 * log(L[i * 64 + i]);
	}
	return -0.5 * ((double)d * log(2 * M_PI) + logdet + q);
}

/*
 * With LDA, length_norm and plda_normalize_length off, the back-end's score
 * is the two-covariance LLR of its trained model: for an enrolment mean e of
 * n utterances and a test vector t (both centred with the training mean m),
 *   log N([e; t]; [mu; mu], [[B + W/n, B], [B, B + W]])
 *     - log N(e; mu, B + W/n) - log N(t; mu, B + W),
 * computed here from B, W and mu of the model by dense Gaussians (not by the
 * transformed diagonal form the back-end uses).  With Kaldi's
 * --normalize-length on (the default) the scores differ.
 */
static void test_plain_plda_is_two_covariance_llr(void)
{
	enum { D = 5 };
	struct vpa_embset tr, en, te;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embset_init(&tr);
	vpa_embset_init(&en);
	vpa_embset_init(&te);
	sim_set(&tr, D, 60, 6, "t", 4);
	sim_set(&en, D, 6, 3, "e", 5);
	sim_set(&te, D, 6, 4, "e", 6);
	struct vpa_backend_cfg cfg;
	vpa_backend_cfg_init(&cfg);
	cfg.length_norm = 0;
	cfg.plda_norm = VPA_PLDA_NORM_NONE;
	struct vpa_backend *b = vpa_backend_train(&tr, &cfg, &err);
	cfg.plda_norm = VPA_PLDA_NORM_KALDI;
	struct vpa_backend *bk = vpa_backend_train(&tr, &cfg, &err);
	CHECK(b && bk);
	if (!b || !bk)
		return;
	double *sc = malloc(en.n_spk * te.n * sizeof(double));
	double *sk = malloc(en.n_spk * te.n * sizeof(double));
	CHECK(vpa_backend_score_sets(b, &en, &te, sc, &err) == 0);
	CHECK(vpa_backend_score_sets(bk, &en, &te, sk, &err) == 0);
	const struct vpa_plda *p = vpa_backend_plda(b);
	double B[D * D], W[D * D], m[D] = {0};
	CHECK(vpa_plda_covariances(p, B, W, &err) == 0);
	const double *mu = vpa_plda_mean(p);
	for (size_t i = 0; i < tr.n; i++)
		for (size_t k = 0; k < D; k++)
			m[k] += (double)tr.x[i * D + k] / (double)tr.n;
	double *means = malloc(en.n_spk * D * sizeof(double));
	uint32_t cnt[64];
	vpa_embset_spk_means(&en, means, cnt);
	double maxdiff = 0, maxk = 0;
	for (size_t s = 0; s < en.n_spk; s++)
		for (size_t u = 0; u < te.n; u++) {
			double e[D], t[D], j[2 * D], mj[2 * D], S[4 * D * D], Se[D * D], St[D * D];
			double n = cnt[s];
			for (size_t k = 0; k < D; k++) {
				e[k] = means[s * D + k] - m[k];
				t[k] = (double)te.x[u * D + k] - m[k];
				j[k] = e[k];
				j[D + k] = t[k];
				mj[k] = mj[D + k] = mu[k];
			}
			for (size_t a = 0; a < D; a++)
				for (size_t c = 0; c < D; c++) {
					double bb = B[a * D + c], ww = W[a * D + c];
					Se[a * D + c] = bb + ww / n;
					St[a * D + c] = bb + ww;
					S[a * 2 * D + c] = bb + ww / n;
					S[a * 2 * D + D + c] = bb;
					S[(D + a) * 2 * D + c] = bb;
					S[(D + a) * 2 * D + D + c] = bb + ww;
				}
			double llr = gauss_logpdf(j, mj, S, 2 * D) - gauss_logpdf(e, mu, Se, D) -
				     gauss_logpdf(t, mu, St, D);
			double got = sc[s * te.n + u];
			maxdiff = fmax(maxdiff, fabs(got - llr) / (1 + fabs(llr)));
			maxk = fmax(maxk, fabs(sk[s * te.n + u] - llr) / (1 + fabs(llr)));
		}
	CHECK(maxdiff < 1e-6);
	CHECK(maxk > 1e-3); /* Kaldi's --normalize-length changes the scores */
	free(means);
	free(sc);
	free(sk);
	vpa_backend_free(b);
	vpa_backend_free(bk);
	vpa_embset_release(&tr);
	vpa_embset_release(&en);
	vpa_embset_release(&te);
}

static void test_embset_helpers(void)
{
	struct vpa_embset es, sub;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embset_init(&es);
	vpa_embset_init(&sub);
	double v[3][2] = { { 1, 2 }, { 3, 4 }, { 10, 20 } };
	CHECK(vpa_embset_add(&es, "a1", "A", v[0], 2, &err) == 0);
	CHECK(vpa_embset_add(&es, "b1", "B", v[2], 2, &err) == 1);
	CHECK(vpa_embset_add(&es, "a2", "A", v[1], 2, &err) == 2);
	CHECK(vpa_embset_add(&es, "a2", "A", v[1], 2, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "duplicate utterance 'a2'");
	vpa_err_init(&err);
	CHECK(vpa_embset_add(&es, "a3", "A", v[1], 3, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "utterance 'a3' has dimension 3, expected 2 as 'a1'");
	double nan2[2] = { 1, NAN };
	vpa_err_init(&err);
	CHECK(vpa_embset_add(&es, "a4", "A", nan2, 2, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "utterance 'a4' has a value that is not finite");
	CHECK(es.n == 3 && es.n_spk == 2);
	vpa_embset_set_gender(&es, 0, 'f');
	vpa_embset_set_gender(&es, 1, 'm');
	vpa_embset_set_dur(&es, 2, 4.5);
	double means[4];
	uint32_t cnt[2];
	vpa_embset_spk_means(&es, means, cnt);
	CHECK(cnt[0] == 2 && cnt[1] == 1);
	CHECK_NEAR(means[0], 2, 0);
	CHECK_NEAR(means[1], 3, 0);
	CHECK_NEAR(means[2], 10, 0);
	uint32_t keep = 0;
	vpa_embset_subset_spk(&es, &keep, 1, &sub);
	CHECK(sub.n == 2 && sub.n_spk == 1 && sub.gender && sub.gender[0] == 'f');
	CHECK_STR(sub.utt[1], "a2");
	CHECK(sub.dur && sub.dur[1] == 4.5);
	size_t rows[2] = { 2, 1 };
	vpa_embset_subset_rows(&es, rows, 2, &sub);
	CHECK(sub.n == 2 && sub.n_spk == 2);
	CHECK_STR(sub.spk_id[0], "A");
	CHECK(vpa_embset_find_utt(&sub, "b1") == 1 && vpa_embset_find_utt(&sub, "a1") == -1);
	CHECK(vpa_embset_utt_gender(&sub, 1) == 'm');
	vpa_embset_release(&es);
	vpa_embset_release(&sub);
}

int main(void)
{
	RUN(test_plain_plda_is_two_covariance_llr);
	vpa_la_set_threads(1);
	RUN(test_center_and_length_norm);
	RUN(test_cosine);
	RUN(test_lda_direction);
	RUN(test_pipeline);
	RUN(test_embset_helpers);
	return DONE();
}
