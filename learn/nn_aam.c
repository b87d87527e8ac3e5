/*
 * learn/nn_aam.c - the additive angular margin softmax loss (AAM-softmax,
 * ArcFace: Deng et al., CVPR 2019, eq. 3; for speaker embeddings e.g.
 * Desplanques et al. 2020, ECAPA-TDNN):
 *
 *   c_rk = <e_r/|e_r|, W_k/|W_k|>         the cosine to class k's centre
 *   z_rk = s c_rk                          k != y_r
 *   z_ry = s phi(c_ry),  phi(c) = cos(acos(c) + m)  when c > cos(pi - m)
 *                        phi(c) = c - m sin(pi - m) otherwise
 *   loss = (1/R) sum_r -log softmax(z_r)[y_r]
 *
 * The fallback branch keeps phi monotone when theta + m passes pi (the
 * `easy_margin = false` rule of the insightface and SpeechBrain
 * implementations).  cos(theta + m) = c cos m - sqrt(1 - c^2) sin m; the
 * square root's argument is floored at 1e-12 so the gradient stays finite at
 * c = 1 (a stationary point of the loss for any reasonable class).
 *
 * Gradients: with G_rk = dL/dc_rk (s (p_rk - [k = y_r]) / R, times phi'(c) on
 * the target), u_r = e_r/|e_r|, v_k = W_k/|W_k|:
 *   dL/de_r = (sum_k G_rk v_k - (sum_k G_rk c_rk) u_r) / |e_r|
 *   dL/dW_k = (sum_r G_rk u_r - (sum_r G_rk c_rk) v_k) / |W_k|
 * Checked against finite differences in tests/unit/test_nn.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/la.h"
#include "learn/nn.h"

#define AAM_NORM_FLOOR 1e-12

static void unit_rows(const float *x, size_t n, size_t d, float *u, double *norm)
{
	for (size_t i = 0; i < n; i++) {
		double s = 0;
		for (size_t j = 0; j < d; j++)
			s += (double)x[i * d + j] * x[i * d + j];
		double nr = sqrt(s);
		if (nr < AAM_NORM_FLOOR)
			nr = AAM_NORM_FLOOR;
		norm[i] = nr;
		for (size_t j = 0; j < d; j++)
			u[i * d + j] = (float)(x[i * d + j] / nr);
	}
}

int vpa_nn_aam_softmax(const float *e, size_t R, size_t D, const float *W, size_t K,
		       const uint32_t *labels, double margin, double scale, double *loss,
		       float *de, float *dW, struct vpa_err *err)
{
	if (!(scale > 0) || !isfinite(scale))
		return vpa_fail(err, VPA_EINPUT, NULL, "AAM-softmax scale must be positive");
	if (!(margin >= 0) || !(margin < M_PI / 2))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"AAM-softmax margin must be in [0, pi/2) radians");
	for (size_t r = 0; r < R; r++)
		if (labels[r] >= K)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"label %u out of range (%zu classes)", labels[r], K);
	if (de)
		memset(de, 0, xmul(R, D) * sizeof(float));
	if (dW)
		memset(dW, 0, xmul(K, D) * sizeof(float));
	*loss = 0;
	if (R == 0 || K == 0 || D == 0)
		return 0;
	float *u = xmalloc(xmul(xmul(R, D), sizeof(float)));
	float *v = xmalloc(xmul(xmul(K, D), sizeof(float)));
	float *c = xmalloc(xmul(xmul(R, K), sizeof(float)));
	float *G = xmalloc(xmul(xmul(R, K), sizeof(float)));
	double *ne = xmalloc(xmul(R, sizeof(double)));
	double *nw = xmalloc(xmul(K, sizeof(double)));
	double *z = xmalloc(xmul(K, sizeof(double)));
	unit_rows(e, R, D, u, ne);
	unit_rows(W, K, D, v, nw);
	vpa_sgemm(0, 1, R, K, D, 1.0f, u, D, v, D, 0.0f, c, K);
	const double cm = cos(margin), sm = sin(margin);
	const double th = cos(M_PI - margin), mm = sin(M_PI - margin) * margin;
	double total = 0;
	for (size_t r = 0; r < R; r++) {
		const float *cr = c + r * K;
		float *gr = G + r * K;
		uint32_t y = labels[r];
		double cy = cr[y] > 1 ? 1 : cr[y] < -1 ? -1 : cr[y];
		double phi, dphi;
		if (cy > th) {
			double s2 = 1 - cy * cy;
			if (s2 < AAM_NORM_FLOOR)
				s2 = AAM_NORM_FLOOR;
			double sn = sqrt(s2);
			phi = cy * cm - sn * sm;
			dphi = cm + cy * sm / sn;
		} else {
			phi = cy - mm;
			dphi = 1;
		}
		double mx = -INFINITY, s = 0;
		for (size_t k = 0; k < K; k++) {
			z[k] = scale * (k == y ? phi : (double)cr[k]);
			mx = z[k] > mx ? z[k] : mx;
		}
		for (size_t k = 0; k < K; k++)
			s += z[k] = exp(z[k] - mx);
		total += -log(z[y] / s);
		double gc = 0;
		for (size_t k = 0; k < K; k++) {
			double g = scale * (z[k] / s - (k == y ? 1.0 : 0.0)) / (double)R;
			if (k == y)
				g *= dphi;
			gr[k] = (float)g;
			gc += g * cr[k];
		}
		if (de) {
			/* de_r = (G_r V - (G_r . c_r) u_r) / |e_r| */
			float *dr = de + r * D;
			vpa_sgemv(1, K, D, 1.0f, v, D, gr, 0.0f, dr);
			for (size_t j = 0; j < D; j++)
				dr[j] = (float)((dr[j] - gc * u[r * D + j]) / ne[r]);
		}
	}
	if (dW) {
		/* dW_k = (G^T U)_k - (sum_r G_rk c_rk) v_k, over |W_k| */
		vpa_sgemm(1, 0, K, D, R, 1.0f, G, K, u, D, 0.0f, dW, D);
		for (size_t k = 0; k < K; k++) {
			double gc = 0;
			for (size_t r = 0; r < R; r++)
				gc += (double)G[r * K + k] * c[r * K + k];
			for (size_t j = 0; j < D; j++)
				dW[k * D + j] = (float)((dW[k * D + j] - gc * v[k * D + j]) / nw[k]);
		}
	}
	free(u);
	free(v);
	free(c);
	free(G);
	free(ne);
	free(nw);
	free(z);
	*loss = total / (double)R;
	return 0;
}
