/*
 * learn/nn_loss.c - the squared-error distillation loss of Granqvist et al.
 * (Apple, Interspeech 2020), eq. 3:
 *
 *   L_vc(x) = T^2 / N sum_i ( softmax(V(x)/T)_i - softmax(z/T)_i )^2
 *
 * the mean squared error between the student's and the teacher's outputs
 * softened at temperature T, over the N outputs, times T^2 so that its
 * gradient does not shrink as 1/T^2 for large T (the paper, after Hinton et
 * al. 2015 section 2.1).  Hinton's cross-entropy form is vpa_nn_softmax_ce
 * with soft targets (learn/nn.c); a separate file because nn.c is past the
 * house limit of about 1,000 lines.
 */
#include <math.h>
#include <stdlib.h>

#include "learn/nn.h"

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
