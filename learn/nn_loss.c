/*
 * learn/nn_loss.c - the losses on a network's outputs (logits): softmax and
 * log-softmax, the softmax cross-entropy with hard labels or soft targets at
 * a temperature (vpa_nn_softmax_ce, vpa_nn_loss on the last forward's
 * output), and the squared-error distillation loss of Granqvist et al.
 * (Apple, Interspeech 2020), eq. 3:
 *
 *   L_vc(x) = T^2 / N sum_i ( softmax(V(x)/T)_i - softmax(z/T)_i )^2
 *
 * the mean squared error between the student's and the teacher's outputs
 * softened at temperature T, over the N outputs, times T^2 so that its
 * gradient does not shrink as 1/T^2 for large T (the paper, after Hinton et
 * al. 2015 section 2.1).  Hinton's cross-entropy form is vpa_nn_softmax_ce
 * with soft targets (below).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "learn/nn.h"
#include "learn/nn_internal.h"

int vpa_nn_distill_sq(const float *z, size_t R, size_t K, const float *p, double T,
		      double *loss, float *dlogits, struct vpa_err *err)
{
	if (!(T > 0) || !isfinite(T))
		return vpa_fail(err, VPA_EINPUT, NULL, "temperature must be positive");
	if (R == 0 || K == 0) {
		*loss = 0;
		return 0;
	}
	double *q = xmalloc(xmul(K, sizeof(double)));
	double total = 0;
	for (size_t r = 0; r < R; r++) {
		const float *zr = z + r * K, *pr = p + r * K;
		double mx = zr[0], s = 0;
		for (size_t k = 1; k < K; k++)
			mx = zr[k] > mx ? zr[k] : mx;
		for (size_t k = 0; k < K; k++)
			s += q[k] = exp(((double)zr[k] - mx) / T);
		/* e = q - p; L_r = T^2/K sum e^2 */
		double l = 0, qe = 0;
		for (size_t k = 0; k < K; k++) {
			q[k] /= s;
			double e = q[k] - pr[k];
			l += e * e;
			qe += q[k] * e;
		}
		total += T * T / (double)K * l;
		if (dlogits) {
			/*
			 * dL_r/dq_i = 2 T^2/K e_i and dq_i/dz_j = q_i (delta_ij - q_j) / T, so
			 * dL_r/dz_j = 2 T/K q_j (e_j - sum_i q_i e_i); the loss is the mean
			 * over the R rows.
			 */
			double c = 2 * T / (double)K / (double)R;
			for (size_t k = 0; k < K; k++)
				dlogits[r * K + k] = (float)(c * q[k] * ((q[k] - pr[k]) - qe));
		}
	}
	free(q);
	*loss = total / (double)R;
	return 0;
}

/* ------------------------------------------ softmax and cross-entropy */

void vpa_nn_targets_init(struct vpa_nn_targets *t)
{
	memset(t, 0, sizeof(*t));
	t->temperature = 1.0f;
}

void vpa_nn_softmax(const float *z, size_t R, size_t K, float *out)
{
	for (size_t r = 0; r < R; r++) {
		const float *a = z + r * K;
		float *o = out + r * K;
		float mx = a[0];
		for (size_t k = 1; k < K; k++)
			mx = a[k] > mx ? a[k] : mx;
		double s = 0;
		for (size_t k = 0; k < K; k++)
			s += exp((double)a[k] - mx);
		for (size_t k = 0; k < K; k++)
			o[k] = (float)(exp((double)a[k] - mx) / s);
	}
}

void vpa_nn_log_softmax(const float *z, size_t R, size_t K, float *out)
{
	for (size_t r = 0; r < R; r++) {
		const float *a = z + r * K;
		float *o = out + r * K;
		float mx = a[0];
		for (size_t k = 1; k < K; k++)
			mx = a[k] > mx ? a[k] : mx;
		double s = 0;
		for (size_t k = 0; k < K; k++)
			s += exp((double)a[k] - mx);
		double lse = mx + log(s);
		for (size_t k = 0; k < K; k++)
			o[k] = (float)((double)a[k] - lse);
	}
}

int vpa_nn_softmax_ce(const float *z, size_t R, size_t K, const size_t *off, size_t n_seq,
		      const struct vpa_nn_targets *t, double *loss, float *dlogits,
		      struct vpa_err *err)
{
	if (!t->labels == !t->soft)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"softmax cross-entropy needs either hard labels or soft targets");
	if (!(t->temperature > 0) || !isfinite(t->temperature))
		return vpa_fail(err, VPA_EINPUT, NULL, "temperature must be positive");
	if (t->per_sequence && (!off || off[n_seq] != R))
		VPA_BUG("per-sequence targets need the output offsets");
	if (R == 0 || K == 0) {
		*loss = 0;
		return 0;
	}
	double T = t->temperature, total = 0;
	float invT = (float)(1.0 / T);
	float *q = xmalloc(xmul(K, sizeof(float)));
	size_t b = 0;
	int rc = 0;
	for (size_t r = 0; r < R; r++) {
		size_t ti = r;
		if (t->per_sequence) {
			while (r >= off[b + 1])
				b++;
			ti = b;
		}
		const float *zr = z + r * K;
		float mx = zr[0];
		for (size_t k = 1; k < K; k++)
			mx = zr[k] > mx ? zr[k] : mx;
		mx *= invT;
		/* exponentials in float (the bulk of the work for a 10k-word
		 * vocabulary), sums and logs in double */
		double s = 0;
		for (size_t k = 0; k < K; k++) {
			q[k] = expf(zr[k] * invT - mx);
			s += q[k];
		}
		double lse = mx + log(s), w = t->weights ? t->weights[ti] : 1.0;
		float inv_s = (float)(1.0 / s);
		double lr = 0, psum = 1;
		if (t->labels) {
			uint32_t y = t->labels[ti];
			if (y >= K) {
				rc = vpa_fail(err, VPA_EINPUT, NULL,
					      "label %u of row %zu is outside 0..%zu", y, ti, K - 1);
				goto out;
			}
			lr = lse - (double)zr[y] / T;
		} else {
			const float *p = t->soft + ti * K;
			psum = 0;
			for (size_t k = 0; k < K; k++) {
				lr += p[k] * (lse - (double)zr[k] / T);
				psum += p[k];
			}
		}
		total += w * T * T * lr;
		if (dlogits) {
			/* d/dz_k of T^2 sum_j p_j (lse - z_j/T) = T (q_k sum_j p_j - p_k) */
			float *d = dlogits + r * K;
			float c = (float)(w * T / (double)R), qs = (float)psum * inv_s;
			if (t->labels) {
				for (size_t k = 0; k < K; k++)
					d[k] = c * q[k] * qs;
				d[t->labels[ti]] -= c;
			} else {
				const float *p = t->soft + ti * K;
				for (size_t k = 0; k < K; k++)
					d[k] = c * (q[k] * qs - p[k]);
			}
		}
	}
	*loss = total / (double)R;
out:
	free(q);
	return rc;
}

int vpa_nn_loss(const struct vpa_nn *net, const struct vpa_nn_targets *t, double *loss,
		float *dlogits, struct vpa_err *err)
{
	if (!net->fwd_ok)
		VPA_BUG("vpa_nn_loss before a forward");
	const struct layer *l = &net->L[net->n - 1];
	return vpa_nn_softmax_ce(l->y, l->rows, l->out, l->off, l->n_seq, t, loss, dlogits, err);
}
