/*
 * targets/fl_speaker_sv.c - the speaker-embedding network of the target kind
 * `fl_speaker_classifier` (Granqvist et al. 2020 section 5; split from
 * targets/fl_speaker.c; contracts in targets/fl_speaker_int.h and
 * targets/fl_speaker.h): the trunk, its training with the speaker head and the
 * distillation head, the embeddings, and the speaker-verification EER.
 */
#include "targets/fl_speaker_int.h"
#include "base/la.h"
#include "learn/nn.h"
#include "metrics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the speaker-embedding network (section 5) ---------------------------------- */

static struct vpa_nn *trunk_new(size_t d, size_t hidden, size_t emb)
{
	struct vpa_nn *t = vpa_nn_new(d);
	for (int l = 0; l < 4; l++) {
		vpa_nn_add_dense(t, hidden);
		vpa_nn_add_simple(t, VPA_NN_BATCHNORM);
		vpa_nn_add_simple(t, VPA_NN_SIGMOID);
	}
	vpa_nn_add_dense(t, emb);
	return t;
}

/*
 * Train trunk + speaker head (+ distillation head when D->soft): the loss of
 * Granqvist et al. eq. 2, L = CE(speaker) + gamma L_distill over a batch (both
 * terms are batch means), with L_distill (squared = 1) eq. 3,
 * T^2/N sum_i (softmax(V/T)_i - teacher_T_i)^2 (vpa_nn_distill_sq), or
 * (squared = 0) Hinton et al.'s T^2 CE(softmax(V/T), teacher_T).
 */
int vpa_fls_sv_train(const struct sv_data *D, size_t hidden, size_t emb, size_t epochs,
		    double lr, double T, double gamma, int squared, uint64_t seed,
		    struct vpa_nn **trunk_out, struct vpa_err *err)
{
	struct vpa_nn *trunk = trunk_new(D->d, hidden, emb);
	struct vpa_nn *hs = vpa_nn_new(emb), *hk = NULL;
	vpa_nn_add_dense(hs, D->n_spk);
	vpa_nn_init_params(trunk, seed);
	vpa_nn_init_params(hs, seed ^ 0x5151);
	if (D->soft) {
		hk = vpa_nn_new(emb);
		vpa_nn_add_dense(hk, D->K);
		vpa_nn_init_params(hk, seed ^ 0x7373);
	} else {
		gamma = 0;
	}
	struct vpa_optim ot, os, ok;
	size_t n1, n2, n3 = 0;
	float *w1 = vpa_nn_params(trunk, &n1), *w2 = vpa_nn_params(hs, &n2), *w3 = NULL;
	vpa_optim_init_adam(&ot, n1, lr, 0.9, 0.999, 1e-8, 0);
	vpa_optim_init_adam(&os, n2, lr, 0.9, 0.999, 1e-8, 0);
	if (hk) {
		w3 = vpa_nn_params(hk, &n3);
		vpa_optim_init_adam(&ok, n3, lr, 0.9, 0.999, 1e-8, 0);
	}
	const size_t B = 64;
	size_t *perm = xmalloc(xmul(D->n, sizeof(size_t)));
	float *xb = xmalloc(xmul(xmul(B, D->d), sizeof(float)));
	uint32_t *yb = xmalloc(xmul(B, sizeof(uint32_t)));
	float *sb = xmalloc(xmul(xmul(B, D->K ? D->K : 1), sizeof(float)));
	float *d1 = xmalloc(xmul(xmul(B, D->n_spk), sizeof(float)));
	float *d2 = xmalloc(xmul(xmul(B, D->K ? D->K : 1), sizeof(float)));
	float *dx = xmalloc(xmul(xmul(B, emb), sizeof(float)));
	float *dx2 = xmalloc(xmul(xmul(B, emb), sizeof(float)));
	size_t off[65];
	for (size_t i = 0; i <= B; i++)
		off[i] = i;
	struct vpa_rng rng;
	vpa_rng_seed(&rng, seed ^ 0x1234567);
	for (size_t i = 0; i < D->n; i++)
		perm[i] = i;
	int rc = 0;
	for (size_t e = 0; e < epochs && !rc; e++) {
		for (size_t i = D->n; i > 1; i--) {
			size_t j = (size_t)vpa_rng_below(&rng, i), t = perm[i - 1];
			perm[i - 1] = perm[j];
			perm[j] = t;
		}
		for (size_t b0 = 0; b0 + 2 <= D->n && !rc; b0 += B) {
			size_t nb = D->n - b0 < B ? D->n - b0 : B;
			if (nb < 2)
				break; /* batch norm needs two rows */
			for (size_t i = 0; i < nb; i++) {
				size_t r = perm[b0 + i];
				memcpy(xb + i * D->d, D->x + r * D->d, D->d * sizeof(float));
				yb[i] = D->spk[r];
				if (D->soft)
					memcpy(sb + i * D->K, D->soft + r * D->K, D->K * sizeof(float));
			}
			struct vpa_nn_batch in = {nb, off, xb, NULL};
			vpa_nn_zero_grad(trunk);
			vpa_nn_zero_grad(hs);
			if ((rc = vpa_nn_forward(trunk, &in, VPA_NN_TRAIN, err)))
				break;
			size_t rows, dim;
			const float *h = vpa_nn_output(trunk, &rows, &dim);
			struct vpa_nn_batch hin = {nb, off, h, NULL};
			struct vpa_nn_targets t;
			double loss;
			vpa_nn_targets_init(&t);
			t.labels = yb;
			if ((rc = vpa_nn_forward(hs, &hin, VPA_NN_TRAIN, err)) ||
			    (rc = vpa_nn_loss(hs, &t, &loss, d1, err)))
				break;
			vpa_nn_backward(hs, d1, dx);
			if (hk) {
				vpa_nn_zero_grad(hk);
				struct vpa_nn_targets tk;
				vpa_nn_targets_init(&tk);
				tk.soft = sb;
				tk.temperature = (float)T;
				if ((rc = vpa_nn_forward(hk, &hin, VPA_NN_TRAIN, err)))
					break;
				if (squared) {
					size_t kr, kk;
					const float *zk = vpa_nn_output(hk, &kr, &kk);
					rc = vpa_nn_distill_sq(zk, kr, kk, sb, T, &loss, d2, err);
				} else {
					rc = vpa_nn_loss(hk, &tk, &loss, d2, err);
				}
				if (rc)
					break;
				for (size_t k = 0; k < nb * D->K; k++)
					d2[k] *= (float)gamma;
				vpa_nn_backward(hk, d2, dx2);
				for (size_t k = 0; k < nb * emb; k++)
					dx[k] += dx2[k];
			}
			vpa_nn_backward(trunk, dx, NULL);
			vpa_optim_step(&ot, w1, vpa_nn_grads(trunk, &n1));
			vpa_optim_step(&os, w2, vpa_nn_grads(hs, &n2));
			if (hk)
				vpa_optim_step(&ok, w3, vpa_nn_grads(hk, &n3));
		}
	}
	vpa_optim_release(&ot);
	vpa_optim_release(&os);
	if (hk)
		vpa_optim_release(&ok);
	vpa_nn_free(hs);
	vpa_nn_free(hk);
	free(perm);
	free(xb);
	free(yb);
	free(sb);
	free(d1);
	free(d2);
	free(dx);
	free(dx2);
	if (rc) {
		vpa_nn_free(trunk);
		return rc;
	}
	*trunk_out = trunk;
	return 0;
}

int vpa_fls_embed(struct vpa_nn *trunk, const float *x, size_t n, float **out, struct vpa_err *err)
{
	size_t off[2] = {0, n}, rows, dim;
	struct vpa_nn_batch in = {1, off, x, NULL};
	int rc = vpa_nn_forward(trunk, &in, VPA_NN_EVAL, err);
	if (rc)
		return rc;
	const float *e = vpa_nn_output(trunk, &rows, &dim);
	*out = xmalloc(xmul(xmul(rows, dim), sizeof(float)));
	memcpy(*out, e, rows * dim * sizeof(float));
	return 0;
}

/*
 * Speaker verification on the sv_test users: the first n_enrol rows of each
 * user enrol, the rest are tests; score = mean over enrolment vectors of the
 * cosine (eq. 1), every test against every enrolled speaker.  ROCCH-EER.
 */
int vpa_fls_sv_eer(const float *emb, size_t dim, const size_t *off, size_t n_spk, size_t n_enrol,
		   double *eer, size_t *n_tar_out, size_t *n_non_out, struct vpa_err *err)
{
	double *en = xcalloc(xmul(n_spk, dim), sizeof(double));
	size_t n_test = 0;
	for (size_t s = 0; s < n_spk; s++) {
		size_t a = off[s], b = off[s + 1], ne = b - a < n_enrol ? b - a : n_enrol;
		for (size_t r = a; r < a + ne; r++) {
			double nn = 0;
			for (size_t k = 0; k < dim; k++)
				nn += (double)emb[r * dim + k] * emb[r * dim + k];
			nn = nn > 0 ? 1 / sqrt(nn) : 0;
			for (size_t k = 0; k < dim; k++)
				en[s * dim + k] += emb[r * dim + k] * nn / (double)ne;
		}
		if (b - a > n_enrol)
			n_test += b - a - n_enrol;
	}
	double *tar = xmalloc(xmul(n_test ? n_test : 1, sizeof(double)));
	double *non = xmalloc(xmul(xmul(n_test ? n_test : 1, n_spk), sizeof(double)));
	size_t nt = 0, nn_ = 0;
	double *tv = xmalloc(xmul(dim, sizeof(double)));
	for (size_t s = 0; s < n_spk; s++)
		for (size_t r = off[s] + n_enrol; r < off[s + 1]; r++) {
			double nrm = 0;
			for (size_t k = 0; k < dim; k++) {
				tv[k] = emb[r * dim + k];
				nrm += tv[k] * tv[k];
			}
			nrm = nrm > 0 ? 1 / sqrt(nrm) : 0;
			for (size_t e = 0; e < n_spk; e++) {
				double sc = 0;
				for (size_t k = 0; k < dim; k++)
					sc += en[e * dim + k] * tv[k];
				sc *= nrm;
				if (e == s)
					tar[nt++] = sc;
				else
					non[nn_++] = sc;
			}
		}
	int rc = 0;
	if (nt == 0 || nn_ == 0) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "speaker verification needs users with more than %zu utterances "
			      "(enrol) among the sv_test users", n_enrol);
	} else {
		vpa_sort_scores(tar, NULL, nt);
		vpa_sort_scores(non, NULL, nn_);
		struct vpa_scores sc = {tar, nt, non, nn_, NULL, NULL};
		struct vpa_metrics_opts mo;
		struct vpa_metrics m;
		vpa_metrics_opts_init(&mo);
		rc = vpa_metrics_all(&sc, &mo, &m, err);
		if (!rc) {
			*eer = m.eer;
			*n_tar_out = nt;
			*n_non_out = nn_;
		}
	}
	free(en);
	free(tar);
	free(non);
	free(tv);
	return rc;
}

