/*
 * targets/fl_am_acts.c - the built target of kind `fl_acoustic_models`
 * (struct vpa_flam, targets/fl_am.h): its release, the hidden layers of a
 * network, and the hidden-layer activations of a model on the Indicator set
 * (a network's forward pass, an ONNX model's (targets/fl_am_onnx.c) or
 * imported .npy files).  The kind (targets/fl_am.c), its files
 * (targets/fl_am_files.c) and the simulator (targets/sim_am.c) call here;
 * nothing here calls them.
 */
#include "targets/fl_am.h"
#include "formats/io.h"
#include "metrics/metrics.h"
#include "metrics/pld.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vpa_flam_init(struct vpa_flam *t)
{
	memset(t, 0, sizeof(*t));
}

static void model_release(struct vpa_flam_model *m)
{
	free(m->id);
	vpa_nn_free(m->net);
	vpa_onnx_free(m->onnx);
	free(m->onnx_path);
	free(m->act_dir);
	free(m->net_dir);
}

void vpa_flam_release(struct vpa_flam *t)
{
	model_release(&t->global);
	for (size_t i = 0; i < t->n_models; i++)
		model_release(&t->models[i]);
	free(t->models);
	for (size_t i = 0; i < t->n_spk; i++)
		free(t->spk_id[i]);
	free(t->spk_id);
	for (size_t i = 0; i < t->n_utt; i++)
		free(t->utt_id[i]);
	free(t->utt_id);
	free(t->off);
	free(t->x);
	free(t->layer_at);
	free(t->dim);
	for (size_t h = 0; t->layer_name && h < t->n_layers; h++)
		free(t->layer_name[h]);
	free(t->layer_name);
	memset(t, 0, sizeof(*t));
}

void vpa_flam_acts_free(float **acts, size_t n_layers)
{
	if (!acts)
		return;
	for (size_t h = 0; h < n_layers; h++)
		free(acts[h]);
	free(acts);
}

static int is_affine(enum vpa_nn_kind k)
{
	return k == VPA_NN_DENSE || k == VPA_NN_TDNN;
}

int vpa_flam_hidden_layers(const struct vpa_nn *net, size_t **layer_at, size_t *n,
			   struct vpa_err *err)
{
	size_t L = vpa_nn_n_layers(net), n_aff = 0;
	*layer_at = NULL;
	*n = 0;
	for (size_t i = 0; i < L; i++) {
		const struct vpa_nn_layer_spec *s = vpa_nn_layer(net, i);
		if (s->kind == VPA_NN_STATSPOOL || s->kind == VPA_NN_EMBEDDING ||
		    s->kind == VPA_NN_LSTM || s->kind == VPA_NN_BILSTM)
			return vpa_fail(err, VPA_EINPUT, &s->loc,
					"layer '%s' is a %s layer: an acoustic model for the footprint "
					"attacks has dense, tdnn, activation, batchnorm and dropout "
					"layers only", s->name, vpa_nn_kind_name(s->kind));
		n_aff += is_affine(s->kind);
	}
	if (n_aff < 2)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"the acoustic model has %zu affine (dense/tdnn) layer%s: at least two "
				"are needed for a hidden layer", n_aff, n_aff == 1 ? "" : "s");
	*layer_at = xmalloc((n_aff - 1) * sizeof(size_t));
	size_t seen = 0;
	for (size_t i = 0; i < L; i++) {
		if (is_affine(vpa_nn_layer(net, i)->kind)) {
			if (seen >= 1)
				(*layer_at)[seen - 1] = i - 1;
			seen++;
		}
	}
	*n = n_aff - 1;
	return 0;
}

int vpa_flam_read_act(const char *path, size_t rows, size_t cols, double **out, size_t *r_out,
		      size_t *c_out, struct vpa_err *err)
{
	struct vpa_npy a;
	memset(&a, 0, sizeof(a));
	int rc = vpa_npy_read(path, &a, err);
	if (rc)
		return rc;
	size_t r = a.shape[0], c = a.ndim == 2 ? a.shape[1] : 1, nd = a.ndim;
	if (nd != 2) {
		vpa_npy_release(&a); /* (it zeroes a: the count was taken before) */
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: expected a 2-D array (frames x dim), "
				"found %zu dimension%s", path, nd, nd == 1 ? "" : "s");
	}
	if (rows != SIZE_MAX && (r != rows || c != cols)) {
		vpa_npy_release(&a);
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: expected %zu x %zu as the global model, found %zu x %zu", path,
				rows, cols, r, c);
	}
	if (r == 0 || c == 0) {
		vpa_npy_release(&a);
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: empty array (%zu x %zu)", path, r, c);
	}
	/* NaN or inf (or a float64 beyond float32, as the values are kept as
	 * float) would reach the metrics as Cllr 6.5e307. */
	if ((rc = vpa_npy_check_finite(path, &a, 1, err))) {
		vpa_npy_release(&a);
		return rc;
	}
	*out = a.data;
	*r_out = r;
	*c_out = c;
	return 0;
}

int vpa_flam_activations(struct vpa_flam *t, size_t m, float ***acts, struct vpa_err *err)
{
	struct vpa_flam_model *md = m == t->n_models ? &t->global : &t->models[m];
	size_t N = t->off[t->n_utt];
	float **a = xcalloc(t->n_layers ? t->n_layers : 1, sizeof(float *));
	int rc = 0;
	for (size_t h = 0; h < t->n_layers; h++)
		a[h] = xmalloc(xmul(N * t->dim[h], sizeof(float)));
	struct vpa_nn *own = NULL, *net = md->net; /* own: loaded for this call (MPI) */
	if (!md->onnx && !net && md->net_dir && !(rc = vpa_nn_load(md->net_dir, &own, err)))
		net = own;
	if (rc) {
		/* the lazily loaded model did not load */
	} else if (md->onnx || md->onnx_path) {
		rc = vpa_flam_onnx_acts(t, md, a, err);
	} else if (net) {
		/* utterances in chunks of about 4,096 frames (TDNN context stays inside an
		   utterance, so chunking changes nothing) */
		for (size_t u0 = 0; u0 < t->n_utt && !rc;) {
			size_t u1 = u0 + 1;
			while (u1 < t->n_utt && t->off[u1 + 1] - t->off[u0] <= 4096)
				u1++;
			size_t k = u1 - u0;
			size_t *off = xmalloc((k + 1) * sizeof(size_t));
			for (size_t i = 0; i <= k; i++)
				off[i] = t->off[u0 + i] - t->off[u0];
			struct vpa_nn_batch b = {k, off, t->x + t->off[u0] * t->in_dim, NULL};
			rc = vpa_nn_forward(net, &b, VPA_NN_EVAL, err);
			for (size_t h = 0; h < t->n_layers && !rc; h++) {
				size_t rows, dim;
				const float *y = vpa_nn_activation(net, t->layer_at[h], &rows, &dim);
				memcpy(a[h] + t->off[u0] * dim, y, rows * dim * sizeof(float));
			}
			free(off);
			u0 = u1;
		}
		/* the model keeps its parameters, not this pass's buffers (about 60 MB for
		 * 4 x 256 on 4,096 frames: 86 models held 4 GB before) */
		if (net != own)
			vpa_nn_release_work(net);
	} else {
		for (size_t h = 0; h < t->n_layers && !rc; h++) {
			for (size_t u = 0; u < t->n_utt && !rc; u++) {
				char *p = NULL;
				if (asprintf(&p, "%s/layer%zu/%s.npy", md->act_dir, h + 1, t->utt_id[u]) < 0)
					VPA_BUG("asprintf");
				double *v = NULL;
				size_t r, c, T = t->off[u + 1] - t->off[u];
				rc = vpa_flam_read_act(p, T, t->dim[h], &v, &r, &c, err);
				if (!rc)
					for (size_t i = 0; i < T * c; i++)
						a[h][t->off[u] * c + i] = (float)v[i];
				free(v);
				free(p);
			}
		}
	}
	vpa_nn_free(own);
	if (rc) {
		vpa_flam_acts_free(a, t->n_layers);
		a = NULL;
	}
	*acts = a;
	return rc;
}


/* ---- DP accounting (fl_am.h) ----------------------------------------------------- */

/* The analytic Gaussian mechanism's epsilon, +inf without noise. */
static int gauss_eps(double sd, double delta, double sens, double *eps, struct vpa_err *err)
{
	*eps = INFINITY;
	return sd > 0 ? vpa_gauss_analytic_epsilon(sd, delta, sens, eps, err) : 0;
}

int vpa_flam_dp_account(struct vpa_flam *t, struct vpa_json *info, struct vpa_err *err)
{
	double C = t->dp_clip, z = t->dp_noise, d = t->dp_delta;
	double k = (double)(t->dp_releases_max ? t->dp_releases_max : 1);
	int rc = 0;
	t->dp_epsilon = t->dp_epsilon_speaker = t->dp_epsilon_rdp = INFINITY;
	t->dp_epsilon_replace = t->dp_epsilon_replace_speaker = INFINITY;
	t->dp_accountant = NULL;
	if (t->dp_mech == VPA_FLAM_DP_NONE)
		return 0;
	if (t->dp_mech == VPA_FLAM_DP_LOCAL) {
		/* one release: Gaussian noise sd z C on an update of norm <= C.  Adding or
		   removing the speaker (update 0 against at most C) is sensitivity C;
		   replacing its data by another speaker's is 2C (two updates of norm <= C).
		   The analytic Gaussian mechanism is exact for one Gaussian release, so it
		   is the tightest valid accountant here; RDP (q = 1, k steps) beside it. */
		t->dp_accountant = "analytic_gaussian";
		rc = gauss_eps(z * C, d, C, &t->dp_epsilon, err);
		if (!rc)
			rc = gauss_eps(z * C, d, C * sqrt(k), &t->dp_epsilon_speaker, err);
		if (!rc)
			rc = gauss_eps(z * C, d, 2 * C, &t->dp_epsilon_replace, err);
		if (!rc)
			rc = gauss_eps(z * C, d, 2 * C * sqrt(k), &t->dp_epsilon_replace_speaker, err);
		if (!rc && z > 0)
			rc = vpa_dp_epsilon(1, z, k, d, &t->dp_epsilon_rdp, NULL, err);
	} else {
		/* DP-SGD: add/remove of one example, Poisson sampling; PLD (an upper
		   bound by its pessimistic discretisation) is the tightest valid one */
		struct vpa_pld *p = NULL;
		t->dp_accountant = "pld";
		rc = vpa_dp_epsilon(t->dp_q, z, t->dp_steps, d, &t->dp_epsilon_rdp, NULL, err);
		if (!rc)
			rc = vpa_pld_new(t->dp_q, z, t->dp_steps, VPA_PLD_INTERVAL_DEFAULT, &p, err);
		if (!rc)
			t->dp_epsilon_speaker = vpa_pld_epsilon(p, d, 1);
		vpa_pld_free(p);
	}
	if (rc || !info)
		return rc;
	struct vpa_json *o = vpa_json_obj();
	int loc = t->dp_mech == VPA_FLAM_DP_LOCAL;
	vpa_json_set_str(o, "mechanism", loc ? "local" : "dp_sgd");
	vpa_json_set_str(o, "adjacency", loc ? "user-level: one speaker's released update"
					     : "example-level: one adaptation example");
	vpa_json_set_num(o, "clip", C);
	vpa_json_set_num(o, "noise_multiplier", z);
	vpa_json_set_num(o, "delta", d);
	if (!loc) {
		vpa_json_set_num(o, "steps", t->dp_steps);
		vpa_json_set_num(o, "q", t->dp_q);
	}
	vpa_json_set(o, "epsilon", vpa_json_num(t->dp_epsilon_speaker));
	vpa_json_set_str(o, "epsilon_accountant", t->dp_accountant);
	vpa_json_set(o, "epsilon_rdp", vpa_json_num(t->dp_epsilon_rdp));
	if (loc) {
		vpa_json_set(o, "epsilon_per_release", vpa_json_num(t->dp_epsilon));
		vpa_json_set(o, "epsilon_per_release_replace", vpa_json_num(t->dp_epsilon_replace));
		vpa_json_set_num(o, "releases_per_speaker_max", k);
	}
	vpa_json_set(info, "dp", o);
	return 0;
}

void vpa_flam_dp_metrics(const struct vpa_flam *t, struct vpa_json *rec, struct vpa_json *mj)
{
	/* no DP: +inf, as the records always said */
	int on = t->dp_mech != VPA_FLAM_DP_NONE;
	vpa_json_set_num(mj, "epsilon", on ? t->dp_epsilon_speaker : INFINITY);
	if (!on) {
		vpa_json_set_num(mj, "epsilon_per_release", INFINITY);
		return;
	}
	/* a word, so beside the metrics (which are numbers) */
	vpa_json_set_str(rec, "epsilon_accountant", t->dp_accountant);
	vpa_json_set_num(mj, "epsilon_rdp", t->dp_epsilon_rdp);
	if (t->dp_mech == VPA_FLAM_DP_LOCAL) {
		vpa_json_set_num(mj, "epsilon_per_release", t->dp_epsilon);
		vpa_json_set_num(mj, "epsilon_per_release_replace", t->dp_epsilon_replace);
	}
}
