/*
 * tests/unit/test_plda.c - the two-covariance PLDA against independent values:
 *  - the LLR equals the ratio of the two joint Gaussian likelihoods (same vs
 *    different speaker) computed here by Cholesky, for n = 1 and n = 3;
 *  - EM on balanced simulated data converges to the closed-form maximum
 *    likelihood estimate and recovers the generating B and W within sampling
 *    error, with a non-decreasing objective;
 *  - the GEMM score matrix equals the pair-by-pair LLR;
 *  - save / load (Kaldi text and binary forms) is exact.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "base/la.h"
#include "learn/plda.h"
#include "harness.h"

/* A random SPD matrix A A^T / d + floor I. */
static void rand_spd(struct vpa_rng *r, size_t d, double scale, double floor, double *out)
{
	double *a = malloc(d * d * sizeof(double));
	for (size_t i = 0; i < d * d; i++)
		a[i] = vpa_rng_normal(r);
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j < d; j++) {
			double s = 0;
			for (size_t k = 0; k < d; k++)
				s += a[i * d + k] * a[j * d + k];
			out[i * d + j] = scale * s / (double)d + (i == j ? floor : 0.0);
		}
	free(a);
}

/* x = L z with L lower-triangular (d, d). */
static void mul_lower(const double *L, const double *z, size_t d, double *x)
{
	for (size_t i = 0; i < d; i++) {
		double s = 0;
		for (size_t k = 0; k <= i; k++)
			s += L[i * d + k] * z[k];
		x[i] = s;
	}
}

/* log N(z; 0, S) by Cholesky: forward substitution and 2 sum log L_ii. */
static double log_gauss(const double *S, const double *z, size_t D)
{
	struct vpa_err err;
	vpa_err_init(&err);
	double *L = malloc(D * D * sizeof(double)), *w = malloc(D * sizeof(double));
	memcpy(L, S, D * D * sizeof(double));
	if (vpa_dcholesky(D, L, "test covariance", &err))
		printf("# cholesky failed: %s\n", err.msg);
	double logdet = 0, q = 0;
	for (size_t i = 0; i < D; i++) {
		double s = z[i];
		for (size_t k = 0; k < i; k++)
			s -= L[i * D + k] * w[k];
		w[i] = s / L[i * D + i];
		q += w[i] * w[i];
		logdet += 2 * log(L[i * D + i]);
	}
	free(L);
	free(w);
	return -0.5 * (logdet + q + (double)D * log(2 * M_PI));
}

/*
 * Brute force: z = (x_1 - mu, ..., x_n - mu, y - mu).  Same speaker: every
 * pair of blocks shares B, diagonal blocks B + W.  Different speakers: the
 * test block is independent of the enrolment blocks.
 */
static double brute_llr(const double *B, const double *W, const double *mu, const double *x,
			size_t n, const double *y, size_t d)
{
	size_t D = (n + 1) * d;
	double *ss = calloc(D * D, sizeof(double)), *sd = calloc(D * D, sizeof(double));
	double *z = malloc(D * sizeof(double));
	for (size_t bi = 0; bi <= n; bi++)
		for (size_t bj = 0; bj <= n; bj++)
			for (size_t i = 0; i < d; i++)
				for (size_t j = 0; j < d; j++) {
					double v = B[i * d + j] + (bi == bj ? W[i * d + j] : 0.0);
					size_t at = (bi * d + i) * D + bj * d + j;
					ss[at] = v;
					sd[at] = (bi == n) != (bj == n) ? 0.0 : v;
				}
	for (size_t bi = 0; bi < n; bi++)
		for (size_t i = 0; i < d; i++)
			z[bi * d + i] = x[bi * d + i] - mu[i];
	for (size_t i = 0; i < d; i++)
		z[n * d + i] = y[i] - mu[i];
	double r = log_gauss(ss, z, D) - log_gauss(sd, z, D);
	free(ss);
	free(sd);
	free(z);
	return r;
}

static void test_llr_equals_gaussian_ratio(void)
{
	const size_t d = 6;
	struct vpa_rng r;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_rng_seed(&r, 11);
	double B[36], W[36], mu[6], LB[36], LW[36];
	rand_spd(&r, d, 3.0, 0.2, B);
	rand_spd(&r, d, 1.0, 0.1, W);
	for (size_t i = 0; i < d; i++)
		mu[i] = vpa_rng_normal(&r);
	struct vpa_plda *p = vpa_plda_from_cov(d, mu, B, W, &err);
	CHECK(p != NULL);
	if (!p)
		return;
	memcpy(LB, B, sizeof(B));
	memcpy(LW, W, sizeof(W));
	vpa_dcholesky(d, LB, "B", &err);
	vpa_dcholesky(d, LW, "W", &err);
	int checked = 0;
	for (int trial = 0; trial < 40; trial++) {
		size_t n = trial % 2 ? 3 : 1;
		int same = trial % 4 < 2;
		double x[18], y[6], z[6], s1[6], s2[6], t[6];
		/* Draw from the model: same-speaker pairs share the speaker factor. */
		for (size_t i = 0; i < d; i++)
			z[i] = vpa_rng_normal(&r);
		mul_lower(LB, z, d, s1);
		for (size_t i = 0; i < d; i++)
			z[i] = vpa_rng_normal(&r);
		mul_lower(LB, z, d, s2);
		for (size_t k = 0; k < n; k++) {
			for (size_t i = 0; i < d; i++)
				z[i] = vpa_rng_normal(&r);
			mul_lower(LW, z, d, t);
			for (size_t i = 0; i < d; i++)
				x[k * d + i] = mu[i] + s1[i] + t[i];
		}
		for (size_t i = 0; i < d; i++)
			z[i] = vpa_rng_normal(&r);
		mul_lower(LW, z, d, t);
		for (size_t i = 0; i < d; i++)
			y[i] = mu[i] + (same ? s1[i] : s2[i]) + t[i];
		double xbar[6] = { 0 }, u[6], v[6];
		for (size_t k = 0; k < n; k++)
			for (size_t i = 0; i < d; i++)
				xbar[i] += x[k * d + i] / (double)n;
		uint32_t cnt = (uint32_t)n;
		vpa_plda_transform_rows(p, xbar, 1, &cnt, VPA_PLDA_NORM_NONE, u);
		vpa_plda_transform_rows(p, y, 1, NULL, VPA_PLDA_NORM_NONE, v);
		double llr = vpa_plda_llr(p, u, cnt, v);
		double ref = brute_llr(B, W, mu, x, n, y, d);
		CHECK_NEAR(llr, ref, 1e-6);
		/* The GEMM form of the same trial. */
		double m;
		vpa_plda_score_matrix(p, u, &cnt, 1, v, 1, &m);
		CHECK_NEAR(m, ref, 1e-6);
		checked++;
	}
	CHECK(checked == 40);
	vpa_plda_free(p);
}

static void test_transform_diagonalises(void)
{
	const size_t d = 7;
	struct vpa_rng r;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_rng_seed(&r, 5);
	double B[49], W[49], mu[7] = { 0 }, tmp[49], out[49], B2[49], W2[49];
	rand_spd(&r, d, 2.0, 0.1, B);
	rand_spd(&r, d, 1.0, 0.3, W);
	struct vpa_plda *p = vpa_plda_from_cov(d, mu, B, W, &err);
	CHECK(p != NULL);
	if (!p)
		return;
	const double *T = vpa_plda_transform(p), *psi = vpa_plda_psi(p);
	/* T W T^T = I, T B T^T = diag(psi), psi decreasing. */
	vpa_dgemm(0, 0, d, d, d, 1.0, T, d, W, d, 0.0, tmp, d);
	vpa_dgemm(0, 1, d, d, d, 1.0, tmp, d, T, d, 0.0, out, d);
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j < d; j++)
			CHECK_NEAR(out[i * d + j], i == j ? 1.0 : 0.0, 1e-10);
	vpa_dgemm(0, 0, d, d, d, 1.0, T, d, B, d, 0.0, tmp, d);
	vpa_dgemm(0, 1, d, d, d, 1.0, tmp, d, T, d, 0.0, out, d);
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j < d; j++)
			CHECK_NEAR(out[i * d + j], i == j ? psi[i] : 0.0, 1e-10);
	for (size_t i = 0; i + 1 < d; i++)
		CHECK(psi[i] >= psi[i + 1]);
	/* The model gives back B and W. */
	CHECK(vpa_plda_covariances(p, B2, W2, &err) == 0);
	for (size_t i = 0; i < d * d; i++) {
		CHECK_NEAR(B2[i], B[i], 1e-10);
		CHECK_NEAR(W2[i], W[i], 1e-10);
	}
	vpa_plda_free(p);
}

static void test_length_norm_in_plda(void)
{
	const size_t d = 5;
	struct vpa_rng r;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_rng_seed(&r, 8);
	double B[25], W[25], mu[5] = { 1, 2, 3, 4, 5 }, x[15], y[15];
	rand_spd(&r, d, 2.0, 0.1, B);
	rand_spd(&r, d, 1.0, 0.3, W);
	struct vpa_plda *p = vpa_plda_from_cov(d, mu, B, W, &err);
	for (size_t i = 0; i < 15; i++)
		x[i] = 3 * vpa_rng_normal(&r);
	uint32_t cnt[3] = { 1, 4, 9 };
	vpa_plda_transform_rows(p, x, 3, cnt, VPA_PLDA_NORM_KALDI, y);
	const double *psi = vpa_plda_psi(p);
	for (size_t k = 0; k < 3; k++) {
		double q = 0;
		for (size_t i = 0; i < d; i++)
			q += y[k * d + i] * y[k * d + i] / (psi[i] + 1.0 / cnt[k]);
		CHECK_NEAR(q, (double)d, 1e-10);
	}
	vpa_plda_transform_rows(p, x, 3, cnt, VPA_PLDA_NORM_SIMPLE, y);
	for (size_t k = 0; k < 3; k++)
		CHECK_NEAR(vpa_dnrm2(d, y + k * d), sqrt((double)d), 1e-12);
	vpa_plda_free(p);
}

/* Simulated balanced data from a known model. */
struct sim {
	size_t d, ns, nu, n;
	double *x;
	uint32_t *spk;
	double *B, *W;
};

static void simulate(struct sim *s, size_t d, size_t ns, size_t nu, uint64_t seed)
{
	struct vpa_rng r;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_rng_seed(&r, seed);
	s->d = d;
	s->ns = ns;
	s->nu = nu;
	s->n = ns * nu;
	s->x = malloc(s->n * d * sizeof(double));
	s->spk = malloc(s->n * sizeof(uint32_t));
	s->B = malloc(d * d * sizeof(double));
	s->W = malloc(d * d * sizeof(double));
	rand_spd(&r, d, 4.0, 0.5, s->B);
	rand_spd(&r, d, 1.0, 0.2, s->W);
	double *LB = malloc(d * d * sizeof(double)), *LW = malloc(d * d * sizeof(double));
	double *z = malloc(d * sizeof(double)), *y = malloc(d * sizeof(double)), *e = malloc(d * sizeof(double));
	memcpy(LB, s->B, d * d * sizeof(double));
	memcpy(LW, s->W, d * d * sizeof(double));
	vpa_dcholesky(d, LB, "B", &err);
	vpa_dcholesky(d, LW, "W", &err);
	for (size_t k = 0; k < ns; k++) {
		for (size_t i = 0; i < d; i++)
			z[i] = vpa_rng_normal(&r);
		mul_lower(LB, z, d, y);
		for (size_t u = 0; u < nu; u++) {
			for (size_t i = 0; i < d; i++)
				z[i] = vpa_rng_normal(&r);
			mul_lower(LW, z, d, e);
			size_t row = k * nu + u;
			for (size_t i = 0; i < d; i++)
				s->x[row * d + i] = 10.0 + y[i] + e[i];
			s->spk[row] = (uint32_t)k;
		}
	}
	free(LB);
	free(LW);
	free(z);
	free(y);
	free(e);
}

static void sim_free(struct sim *s)
{
	free(s->x);
	free(s->spk);
	free(s->B);
	free(s->W);
}

static double rel_frob(const double *a, const double *b, size_t d)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < d * d; i++) {
		num += (a[i] - b[i]) * (a[i] - b[i]);
		den += b[i] * b[i];
	}
	return sqrt(num / den);
}

static void test_em_recovers_model(void)
{
	struct sim s;
	struct vpa_err err;
	vpa_err_init(&err);
	simulate(&s, 10, 500, 10, 2024);
	size_t d = s.d;
	double objf[11];
	struct vpa_plda *p = vpa_plda_train(s.x, s.n, d, s.spk, s.ns, 10, objf, &err);
	CHECK(p != NULL);
	if (!p) {
		printf("# %s\n", err.msg);
		sim_free(&s);
		return;
	}
	/* Monotone EM: the objective never decreases. */
	for (int i = 0; i < 10; i++)
		CHECK(objf[i + 1] >= objf[i] - 1e-12);
	CHECK(objf[10] > objf[0]);
	/*
	 * Closed-form ML for balanced classes (n utterances each): the
	 * likelihood separates into W (offsets, N - K dof) and the covariance of
	 * the class means S = B + W/n, so W_ml = S_w / (N - K) and
	 * B_ml = S_b / K - W_ml / n.  EM must converge to it.
	 */
	double *Bml = calloc(d * d, sizeof(double)), *Wml = calloc(d * d, sizeof(double));
	double *m = calloc(s.ns * d, sizeof(double)), *mu = calloc(d, sizeof(double));
	for (size_t i = 0; i < s.n; i++)
		for (size_t j = 0; j < d; j++)
			m[s.spk[i] * d + j] += s.x[i * d + j] / (double)s.nu;
	for (size_t k = 0; k < s.ns; k++)
		for (size_t j = 0; j < d; j++)
			mu[j] += m[k * d + j] / (double)s.ns;
	for (size_t i = 0; i < s.n; i++)
		for (size_t a = 0; a < d; a++)
			for (size_t b = 0; b < d; b++)
				Wml[a * d + b] += (s.x[i * d + a] - m[s.spk[i] * d + a]) *
						  (s.x[i * d + b] - m[s.spk[i] * d + b]) / (double)(s.n - s.ns);
	for (size_t k = 0; k < s.ns; k++)
		for (size_t a = 0; a < d; a++)
			for (size_t b = 0; b < d; b++)
				Bml[a * d + b] += (m[k * d + a] - mu[a]) * (m[k * d + b] - mu[b]) / (double)s.ns;
	for (size_t i = 0; i < d * d; i++)
		Bml[i] -= Wml[i] / (double)s.nu;
	double *B = malloc(d * d * sizeof(double)), *W = malloc(d * d * sizeof(double));
	struct vpa_plda *p200 = vpa_plda_train(s.x, s.n, d, s.spk, s.ns, 200, NULL, &err);
	CHECK(p200 != NULL);
	if (p200) {
		vpa_plda_covariances(p200, B, W, &err);
		CHECK(rel_frob(W, Wml, d) < 1e-6);
		CHECK(rel_frob(B, Bml, d) < 1e-6);
		for (size_t j = 0; j < d; j++)
			CHECK_NEAR(vpa_plda_mean(p200)[j], mu[j], 1e-9);
	}
	/*
	 * Kaldi's 10 iterations already recover the generating model within
	 * sampling error.  For a Wishart sample covariance S of Sigma with k
	 * degrees of freedom, E |S - Sigma|_F^2 = (tr(Sigma)^2 + |Sigma|_F^2) / k:
	 * W has N - K = 4500 dof, the class-mean covariance B + W/n has K = 500.
	 * Accept twice the expected RMS error.
	 */
	vpa_plda_covariances(p, B, W, &err);
	double eb = rel_frob(B, s.B, d), ew = rel_frob(W, s.W, d);
	double trw = 0, fw = 0, trs = 0, fs = 0, fb = 0;
	for (size_t i = 0; i < d; i++) {
		trw += s.W[i * d + i];
		trs += s.B[i * d + i] + s.W[i * d + i] / (double)s.nu;
	}
	for (size_t i = 0; i < d * d; i++) {
		double sm = s.B[i] + s.W[i] / (double)s.nu;
		fw += s.W[i] * s.W[i];
		fs += sm * sm;
		fb += s.B[i] * s.B[i];
	}
	double rms_w = sqrt((trw * trw + fw) / (double)(s.n - s.ns) / fw);
	double rms_b = sqrt((trs * trs + fs) / (double)s.ns / fb);
	printf("# 10 EM iterations: |B - B0|/|B0| = %.4f (expected RMS %.4f), |W - W0|/|W0| = %.4f (%.4f)\n",
	       eb, rms_b, ew, rms_w);
	CHECK(eb < 2 * rms_b);
	CHECK(ew < 2 * rms_w);
	/* and 10 iterations are already close to the ML point */
	CHECK(rel_frob(B, Bml, d) < 1e-2);
	CHECK(rel_frob(W, Wml, d) < 1e-2);
	free(Bml);
	free(Wml);
	free(m);
	free(mu);
	free(B);
	free(W);
	vpa_plda_free(p);
	vpa_plda_free(p200);
	sim_free(&s);
}

static void test_unbalanced_monotone(void)
{
	/* Unequal class sizes (1..7 utterances, single-utterance speakers too). */
	struct sim s;
	struct vpa_err err;
	vpa_err_init(&err);
	simulate(&s, 8, 300, 7, 99);
	size_t n = 0;
	double *x = malloc(s.n * s.d * sizeof(double));
	uint32_t *spk = malloc(s.n * sizeof(uint32_t));
	for (size_t i = 0; i < s.n; i++) {
		size_t k = s.spk[i], u = i % s.nu;
		if (u <= k % 7) {
			memcpy(x + n * s.d, s.x + i * s.d, s.d * sizeof(double));
			spk[n++] = (uint32_t)k;
		}
	}
	double objf[31];
	struct vpa_plda *p = vpa_plda_train(x, n, s.d, spk, s.ns, 30, objf, &err);
	CHECK(p != NULL);
	for (int i = 0; i < 30; i++)
		CHECK(objf[i + 1] >= objf[i] - 1e-12);
	vpa_plda_free(p);
	free(x);
	free(spk);
	sim_free(&s);
}

static void test_score_matrix_matches_pairs(void)
{
	struct sim s;
	struct vpa_err err;
	vpa_err_init(&err);
	simulate(&s, 12, 100, 5, 7);
	struct vpa_plda *p = vpa_plda_train(s.x, s.n, s.d, s.spk, s.ns, 10, NULL, &err);
	CHECK(p != NULL);
	size_t d = s.d, ne = 23, nt = 31;
	double *u = malloc(ne * d * sizeof(double)), *v = malloc(nt * d * sizeof(double));
	uint32_t cnt[23];
	for (size_t e = 0; e < ne; e++)
		cnt[e] = (uint32_t)(1 + e % 4);
	vpa_plda_transform_rows(p, s.x, ne, cnt, VPA_PLDA_NORM_KALDI, u);
	vpa_plda_transform_rows(p, s.x + 100 * d, nt, NULL, VPA_PLDA_NORM_KALDI, v);
	double *out = malloc(ne * nt * sizeof(double));
	float *outf = malloc(ne * nt * sizeof(float));
	vpa_plda_score_matrix(p, u, cnt, ne, v, nt, out);
	vpa_plda_score_matrix_f(p, u, cnt, ne, v, nt, outf);
	for (size_t e = 0; e < ne; e++)
		for (size_t t = 0; t < nt; t++) {
			double ref = vpa_plda_llr(p, u + e * d, cnt[e], v + t * d);
			CHECK_NEAR(out[e * nt + t], ref, 1e-9 * (1 + fabs(ref)));
			CHECK_NEAR(outf[e * nt + t], ref, 1e-4 * (1 + fabs(ref)));
		}
	/* Counts NULL means 1. */
	vpa_plda_score_matrix(p, u, NULL, 1, v, 1, out);
	CHECK_NEAR(out[0], vpa_plda_llr(p, u, 1, v), 1e-9);
	free(u);
	free(v);
	free(out);
	free(outf);
	vpa_plda_free(p);
	sim_free(&s);
}

static void put_marked_int(FILE *f, int32_t v)
{
	fputc(4, f);
	fwrite(&v, 4, 1, f);
}

static void test_save_load(void)
{
	struct sim s;
	struct vpa_err err;
	vpa_err_init(&err);
	simulate(&s, 6, 50, 4, 3);
	struct vpa_plda *p = vpa_plda_train(s.x, s.n, s.d, s.spk, s.ns, 10, NULL, &err);
	char dir[] = "/tmp/vpa_plda_XXXXXX", path[256], bpath[256];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/plda.txt", dir);
	snprintf(bpath, sizeof(bpath), "%s/plda.bin", dir);
	CHECK(vpa_plda_save(p, path, &err) == 0);
	struct vpa_plda *q = vpa_plda_load(path, &err);
	CHECK(q != NULL);
	size_t d = s.d;
	if (q) {
		CHECK(vpa_plda_dim(q) == d);
		CHECK(!memcmp(vpa_plda_mean(p), vpa_plda_mean(q), d * sizeof(double)));
		CHECK(!memcmp(vpa_plda_transform(p), vpa_plda_transform(q), d * d * sizeof(double)));
		CHECK(!memcmp(vpa_plda_psi(p), vpa_plda_psi(q), d * sizeof(double)));
	}
	/* Kaldi binary form, written here byte by byte. */
	FILE *f = fopen(bpath, "wb");
	fwrite("\0B<Plda> DV ", 1, 12, f);
	put_marked_int(f, (int32_t)d);
	fwrite(vpa_plda_mean(p), sizeof(double), d, f);
	fwrite("DM ", 1, 3, f);
	put_marked_int(f, (int32_t)d);
	put_marked_int(f, (int32_t)d);
	fwrite(vpa_plda_transform(p), sizeof(double), d * d, f);
	fwrite("DV ", 1, 3, f);
	put_marked_int(f, (int32_t)d);
	fwrite(vpa_plda_psi(p), sizeof(double), d, f);
	fwrite("</Plda> ", 1, 8, f);
	fclose(f);
	struct vpa_plda *b = vpa_plda_load(bpath, &err);
	CHECK(b != NULL);
	if (b) {
		CHECK(!memcmp(vpa_plda_transform(p), vpa_plda_transform(b), d * d * sizeof(double)));
		CHECK(!memcmp(vpa_plda_psi(p), vpa_plda_psi(b), d * sizeof(double)));
	}
	/* Bad models. */
	const char *bad = "<Plda> [ 1 2 ]\n [\n 1 0\n 0 1 ]\n [ 1 ]\n</Plda> ";
	vpa_err_init(&err);
	CHECK(vpa_plda_parse("m.txt", (const unsigned char *)bad, strlen(bad), &err) == NULL);
	CHECK_STR(err.msg, "m.txt: inconsistent PLDA: mean of 2, transform 2 x 2, psi of 1 (expected vectors of d and a d x d matrix)");
	const char *neg = "<Plda> [ 0 ]\n [\n 1 ]\n [ -1 ]\n</Plda> ";
	vpa_err_init(&err);
	CHECK(vpa_plda_parse("m.txt", (const unsigned char *)neg, strlen(neg), &err) == NULL);
	CHECK_STR(err.msg, "m.txt: PLDA psi[0] = -1 is negative");
	const char *tok = "<Pld> [ 0 ]";
	vpa_err_init(&err);
	CHECK(vpa_plda_parse("m.txt", (const unsigned char *)tok, strlen(tok), &err) == NULL);
	CHECK_STR(err.msg, "m.txt: byte 0: expected '<Plda>'");
	unlink(path);
	unlink(bpath);
	rmdir(dir);
	vpa_plda_free(p);
	vpa_plda_free(q);
	vpa_plda_free(b);
	sim_free(&s);
}

static void test_errors(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	double x[6] = { 1, 2, 3, 4, 5, 6 };
	uint32_t spk[3] = { 0, 1, 2 };
	CHECK(vpa_plda_train(x, 3, 2, spk, 3, 10, NULL, &err) == NULL);
	CHECK_STR(err.msg, "no speaker with two or more utterances: cannot estimate the within-class covariance");
	uint32_t sp2[3] = { 0, 0, 1 };
	vpa_err_init(&err);
	CHECK(vpa_plda_train(x, 3, 2, sp2, 2, -1, NULL, &err) == NULL);
	CHECK_STR(err.msg, "PLDA: em_iters must be >= 0, got -1");
}

int main(void)
{
	vpa_la_set_threads(1);
	RUN(test_llr_equals_gaussian_ratio);
	RUN(test_transform_diagonalises);
	RUN(test_length_norm_in_plda);
	RUN(test_em_recovers_model);
	RUN(test_unbalanced_monotone);
	RUN(test_score_matrix_matches_pairs);
	RUN(test_save_load);
	RUN(test_errors);
	return DONE();
}
