/*
 * targets/fl_am_onnx.c - `fl_acoustic_models` imports of ONNX models (global
 * and personalised) with hidden layers named by graph values, and the
 * Indicator set given as audio (contract in fl_am.h).
 */
#include <stdlib.h>
#include <string.h>

#include "audio/audio.h"
#include "base/dist.h"
#include "base/la.h"
#include "targets/fl_am.h"

/* Locate the time axis of a layer output for an utterance of T frames. */
static int layer_view(const struct vpa_onnx_tensor *y, size_t T, const char *name,
		      const char *utt, size_t *dim, int *time_last, struct vpa_err *err)
{
	char shp[128];
	vpa_onnx_shape_str(shp, sizeof(shp), y->ndim, y->dims);
	if (y->dtype != VPA_ONNX_FLOAT)
		return vpa_fail(err, VPA_EINPUT, NULL, "layer '%s' is %s, expected float32", name,
				vpa_onnx_dtype_name(y->dtype));
	const int64_t *d = y->dims;
	if (y->ndim == 2 && (size_t)d[0] == T) {
		*dim = (size_t)d[1];
		*time_last = 0;
	} else if (y->ndim == 3 && d[0] == 1 && (size_t)d[1] == T && (size_t)d[2] != T) {
		*dim = (size_t)d[2];
		*time_last = 0;
	} else if (y->ndim == 3 && d[0] == 1 && (size_t)d[2] == T && (size_t)d[1] != T) {
		*dim = (size_t)d[1];
		*time_last = 1;
	} else if (y->ndim == 3 && d[0] == 1 && (size_t)d[1] == T && (size_t)d[2] == T) {
		return vpa_fail(err, VPA_EINPUT, NULL,
				"layer '%s' gives %s for the %zu frames of '%s': which axis is time "
				"is ambiguous", name, shp, T, utt);
	} else {
		return vpa_fail(err, VPA_EINPUT, NULL,
				"layer '%s' gives %s for the %zu frames of '%s': per-frame "
				"activations of the input's length are needed ((1, T, D), (1, D, T) "
				"or (T, D))", name, shp, T, utt);
	}
	if (*dim == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "layer '%s' is empty", name);
	return 0;
}

/* Run model m on utterance u, outputs = every hidden layer. */
static int run_utt(const struct vpa_flam *t, const struct vpa_onnx_model *m, size_t u,
		   struct vpa_onnx_tensor *ys, struct vpa_err *err)
{
	size_t T = t->off[u + 1] - t->off[u], F = t->in_dim;
	const float *x = t->x + t->off[u] * F;
	float *tr = NULL;
	int64_t dims[3] = {1, (int64_t)T, (int64_t)F};
	if (t->onnx_bft) {
		tr = xmalloc(xmul(T * F, sizeof(float)));
		for (size_t i = 0; i < T; i++)
			for (size_t f = 0; f < F; f++)
				tr[f * T + i] = x[i * F + f];
		dims[1] = (int64_t)F;
		dims[2] = (int64_t)T;
		x = tr;
	}
	struct vpa_onnx_tensor in = vpa_onnx_tensor_f32(3, dims, x);
	const char *iname = vpa_onnx_input(m, 0)->name;
	int rc = vpa_onnx_run(m, 1, &iname, &in, t->n_layers, (const char *const *)t->layer_name,
			      ys, err);
	free(tr);
	return rc;
}

/* Loading and checking the personalised ONNX models: a job per model
 * (vpa_dist_jobs), as for model folders (targets/fl_am_files.c).  Under MPI (more
 * than one rank) a rank keeps no personalised model: the job checks it and
 * keeps its path; the rank whose A1/A2 job needs the model loads it again
 * (vpa_flam_onnx_acts), so a rank's memory holds the global model and the
 * models its running jobs use.  Nothing travels. */
struct onnx_job {
	struct vpa_flam *t;
	const char *model_dir;
	const char *const *names;
	size_t n;
	int lazy;
};

static char *onnx_file(const char *model_dir, const char *id)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s.onnx", model_dir, id) < 0)
		VPA_BUG("asprintf");
	return p;
}

static int load_check(struct onnx_job *j, struct vpa_flam_model *m, struct vpa_err *err)
{
	struct vpa_flam *t = j->t;
	char *p = onnx_file(j->model_dir, m->id);
	int rc = vpa_onnx_load(p, NULL, &m->onnx, err);
	if (!rc && vpa_onnx_n_inputs(m->onnx) != 1)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: %zu graph inputs, an acoustic model takes the features only", p,
			      vpa_onnx_n_inputs(m->onnx));
	char near[600];
	for (size_t h = 0; h < j->n && !rc; h++)
		if (!vpa_onnx_has_value(m->onnx, j->names[h]))
			rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no value named '%s' (a hidden layer)%s",
				      p, j->names[h],
				      vpa_onnx_nearest_values(m->onnx, j->names[h], near,
							      sizeof(near)));
	if (!rc && m != &t->global) {
		const struct vpa_onnx_model *g = t->global.onnx;
		int same = vpa_onnx_n_nodes(m->onnx) == vpa_onnx_n_nodes(g) &&
			   vpa_onnx_n_params(m->onnx) == vpa_onnx_n_params(g);
		for (size_t k = 0; same && k < vpa_onnx_n_nodes(g); k++)
			same = !strcmp(vpa_onnx_node_op(m->onnx, k), vpa_onnx_node_op(g, k));
		if (!same)
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s: the graph differs from the global model's (%s/%s.onnx): "
				      "a personalised model must be the global model fine-tuned",
				      p, j->model_dir, t->global.id);
	}
	if (j->lazy && m != &t->global) {
		vpa_onnx_free(m->onnx);
		m->onnx = NULL;
		m->onnx_path = p;
		p = NULL;
	}
	free(p);
	return rc;
}

static int onnx_job(void *arg, size_t i, struct vpa_err *err)
{
	struct onnx_job *j = arg;
	return load_check(j, &j->t->models[i], err);
}

static void onnx_pack(void *arg, size_t i, struct vpa_buf *b)
{
	(void)arg;
	(void)i;
	(void)b;
}

static int onnx_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct onnx_job *j = arg;
	(void)p;
	j->t->models[i].onnx_path = onnx_file(j->model_dir, j->t->models[i].id);
	return len != 0;
}

int vpa_flam_onnx_load(const char *model_dir, const char *const *names, size_t n, int bft,
		       struct vpa_flam *t, struct vpa_err *err)
{
	t->onnx_bft = bft;
	t->n_layers = n;
	t->layer_name = xcalloc(n ? n : 1, sizeof(char *));
	for (size_t h = 0; h < n; h++)
		t->layer_name[h] = xstrdup(names[h]);
	struct onnx_job j = {t, model_dir, names, n, vpa_dist_size() > 1};
	int rc = load_check(&j, &t->global, err); /* every rank: the reference */
	if (!rc)
		rc = vpa_dist_jobs(t->n_models, 1, onnx_job, onnx_pack, onnx_unpack, &j, "models",
				   NULL, err);
	if (rc || !t->n_utt)
		return rc;
	/* the layer widths: the global model on the first utterance */
	struct vpa_onnx_tensor *ys = xcalloc(n ? n : 1, sizeof(*ys));
	rc = run_utt(t, t->global.onnx, 0, ys, err);
	t->dim = xcalloc(n ? n : 1, sizeof(size_t));
	for (size_t h = 0; h < n && !rc; h++) {
		int tl;
		rc = layer_view(&ys[h], t->off[1] - t->off[0], names[h], t->utt_id[0], &t->dim[h],
				&tl, err);
	}
	for (size_t h = 0; h < n; h++)
		vpa_onnx_tensor_release(&ys[h]);
	free(ys);
	return rc;
}

int vpa_flam_onnx_acts(const struct vpa_flam *t, const struct vpa_flam_model *md, float **a,
		       struct vpa_err *err)
{
	struct vpa_onnx_model *own = NULL; /* loaded for this call (MPI) */
	const struct vpa_onnx_model *m = md->onnx;
	if (!m && md->onnx_path) {
		int rc = vpa_onnx_load(md->onnx_path, NULL, &own, err);
		if (rc)
			return rc;
		m = own;
	}
	if (!m)
		VPA_BUG("model '%s' has neither an ONNX model nor its path", md->id);
	struct vpa_onnx_tensor *ys = xcalloc(t->n_layers ? t->n_layers : 1, sizeof(*ys));
	int rc = 0;
	for (size_t u = 0; u < t->n_utt && !rc; u++) {
		size_t T = t->off[u + 1] - t->off[u];
		if ((rc = run_utt(t, m, u, ys, err)))
			break;
		for (size_t h = 0; h < t->n_layers && !rc; h++) {
			size_t dim;
			int tl;
			rc = layer_view(&ys[h], T, t->layer_name[h], t->utt_id[u], &dim, &tl, err);
			if (!rc && dim != t->dim[h])
				rc = vpa_fail(err, VPA_EINPUT, NULL,
					      "model '%s': layer '%s' has %zu values per frame for '%s', "
					      "%zu for the first utterance of the global model", md->id,
					      t->layer_name[h], dim, t->utt_id[u], t->dim[h]);
			if (rc)
				break;
			const float *y = ys[h].data;
			float *dst = a[h] + t->off[u] * dim;
			if (!tl)
				memcpy(dst, y, T * dim * sizeof(float));
			else
				for (size_t i = 0; i < T; i++)
					for (size_t c = 0; c < dim; c++)
						dst[i * dim + c] = y[c * T + i];
		}
		for (size_t h = 0; h < t->n_layers; h++)
			vpa_onnx_tensor_release(&ys[h]);
	}
	free(ys);
	vpa_onnx_free(own);
	return rc;
}

/* ---- the Indicator set as audio ----------------------------------------------- */

/* Utterance i's features: a job of vpa_dist_jobs (under MPI the ranks share
 * the utterances out and exchange the matrices: every model runs on all). */
struct ind_job {
	const struct vpa_datadir *d;
	const struct vpa_feat *fe;
	struct vpa_fmat *m;
};

static int ind_job(void *arg, size_t i, struct vpa_err *err)
{
	struct ind_job *j = arg;
	struct vpa_wave w;
	vpa_wave_init(&w);
	int rc = vpa_datadir_load(j->d, i, &w, NULL, err);
	if (!rc)
		rc = vpa_feat_apply(j->fe, &w, j->d->utt[i], &j->m[i], err);
	if (!rc && j->m[i].rows == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "Indicator utterance '%s' gives no feature frame",
			      j->d->utt[i]);
	vpa_wave_release(&w);
	return rc;
}

static void ind_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct ind_job *j = arg;
	vpa_fmat_pack(b, &j->m[i]);
}

static int ind_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct ind_job *j = arg;
	const unsigned char *end = p + len;
	return vpa_fmat_unpack(&p, end, &j->m[i]) || p != end;
}

int vpa_flam_indicator_audio(const char *dir, const struct vpa_feat_opts *fo, int threads,
			     struct vpa_flam *t, struct vpa_err *err)
{
	struct vpa_datadir d;
	struct vpa_feat *fe = vpa_feat_new(fo, err);
	if (!fe)
		return err->status;
	vpa_datadir_init(&d);
	int rc = vpa_datadir_open(&d, dir, -1, err);
	if (!rc) /* audio as it comes: resampled to the front-end's rate */
		vpa_datadir_set_rate(&d, fo->sample_frequency, VPA_ALLOW_DOWN | VPA_ALLOW_UP, 0);
	size_t n = rc ? 0 : d.n_utt;
	struct ind_job j = {&d, fe, xcalloc(n ? n : 1, sizeof(struct vpa_fmat))};
	for (size_t i = 0; i < n; i++)
		vpa_fmat_init(&j.m[i]);
	if (!rc)
		rc = vpa_dist_jobs(n, threads > 0 ? threads : 1, ind_job, ind_pack, ind_unpack, &j,
				   NULL, NULL, err);
	if (!rc) {
		size_t D = vpa_feat_dim(fe), N = 0;
		t->n_utt = n;
		t->utt_id = xcalloc(n ? n : 1, sizeof(char *));
		t->off = xmalloc((n + 1) * sizeof(size_t));
		t->off[0] = 0;
		for (size_t i = 0; i < n; i++) {
			t->utt_id[i] = xstrdup(d.utt[i]);
			N += j.m[i].rows;
			t->off[i + 1] = N;
		}
		t->x = xmalloc(xmul(N * D > 0 ? N * D : 1, sizeof(float)));
		for (size_t i = 0; i < n; i++)
			memcpy(t->x + t->off[i] * D, j.m[i].x, j.m[i].rows * D * sizeof(float));
		t->in_dim = D;
	}
	for (size_t i = 0; i < n; i++)
		vpa_fmat_release(&j.m[i]);
	free(j.m);
	vpa_datadir_release(&d);
	vpa_feat_free(fe);
	return rc;
}

/* ---- the models' outputs (held-out utility, targets/fl_am_utility.c) ------------- */

int vpa_flam_onnx_frame_out(const struct vpa_flam *t, const struct vpa_flam_model *md,
			    const float *x, size_t T, float **out, size_t *K, struct vpa_err *err)
{
	struct vpa_onnx_model *own = NULL; /* loaded for this call (MPI) */
	const struct vpa_onnx_model *m = md->onnx;
	*out = NULL;
	if (!m && md->onnx_path) {
		int rc = vpa_onnx_load(md->onnx_path, NULL, &own, err);
		if (rc)
			return rc;
		m = own;
	}
	if (!m)
		VPA_BUG("model '%s' has neither an ONNX model nor its path", md->id);
	size_t F = t->in_dim;
	float *tr = NULL;
	int64_t dims[3] = {1, (int64_t)T, (int64_t)F};
	if (t->onnx_bft) {
		tr = xmalloc(xmul(T * F > 0 ? T * F : 1, sizeof(float)));
		for (size_t i = 0; i < T; i++)
			for (size_t f = 0; f < F; f++)
				tr[f * T + i] = x[i * F + f];
		dims[1] = (int64_t)F;
		dims[2] = (int64_t)T;
		x = tr;
	}
	struct vpa_onnx_tensor in = vpa_onnx_tensor_f32(3, dims, x), y;
	const char *iname = vpa_onnx_input(m, 0)->name, *oname = vpa_onnx_output(m, 0)->name;
	int rc = vpa_onnx_run(m, 1, &iname, &in, 1, &oname, &y, err);
	free(tr);
	int tl = 0;
	if (!rc) {
		rc = layer_view(&y, T, oname, "a held-out utterance", K, &tl, err);
		if (!rc) {
			const float *v = y.data;
			*out = xmalloc(xmul(T * *K, sizeof(float)));
			for (size_t i = 0; i < T; i++)
				for (size_t c = 0; c < *K; c++)
					(*out)[i * *K + c] = tl ? v[c * T + i] : v[i * *K + c];
		}
		vpa_onnx_tensor_release(&y);
	}
	vpa_onnx_free(own);
	return rc;
}
