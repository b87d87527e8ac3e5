/*
 * targets/fl_am_files.c - the files of kind `fl_acoustic_models`
 * (targets/README.md documents the layouts): the import (models.txt, model
 * folders or ONNX models with Indicator features, or precomputed
 * activations) and the dumps that write the same layouts (dump_models,
 * dump_activations).  Called by the kind (targets/fl_am.c); reads the
 * models through targets/fl_am_acts.c and targets/fl_am_onnx.c.
 */
#include "base/dist.h"
#include "targets/fl_am.h"
#include "audio/audio.h"
#include "formats/io.h"
#include "formats/embset.h"
#include "formats/kaldi.h"

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- import ----------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names (without the suffix) of the files DIR/ *.npy. */
static int list_npy(const char *dir, char ***names, size_t *n, struct vpa_err *err)
{
	DIR *d = opendir(dir);
	*names = NULL;
	*n = 0;
	if (!d)
		return vpa_fail(err, VPA_EIO, NULL, "cannot open folder '%s': %s", dir,
				strerror(errno));
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l <= 4 || strcmp(e->d_name + l - 4, ".npy"))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			*names = xrealloc(*names, cap * sizeof(char *));
		}
		(*names)[*n] = xstrdup(e->d_name);
		(*names)[*n][l - 4] = 0;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*names, *n, sizeof(char *), cmp_str);
	else
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: no .npy files", dir);
	return 0;
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int read_models(const char *path, struct vpa_flam *t, struct vpa_err *err)
{
	struct vpa_kaldi_list l;
	vpa_kaldi_list_init(&l);
	int rc = vpa_kaldi_read_list(path, 3, &l, err);
	if (rc)
		return rc;
	struct vpa_strmap ids, spk;
	vpa_strmap_init(&ids);
	vpa_strmap_init(&spk);
	t->models = xcalloc(l.n, sizeof(*t->models));
	t->spk_id = xcalloc(l.n, sizeof(char *));
	long gline = 0;
	for (size_t i = 0; i < l.n && !rc; i++) {
		const char *id = l.f[i * 3], *s = l.f[i * 3 + 1], *part = l.f[i * 3 + 2];
		struct vpa_loc loc = {path, l.line[i], 0};
		uint32_t old;
		if (vpa_strmap_put(&ids, id, (uint32_t)l.line[i], &old)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "duplicate model '%s' (first on line %u)",
				      id, old);
			break;
		}
		if (strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
			    strlen(id) || !strcmp(id, ".") || !strcmp(id, "..")) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "model id '%s' must be made of [A-Za-z0-9._-] (it names a folder)",
				      id);
			break;
		}
		int p;
		if (!strcmp(part, "global"))
			p = VPA_FLAM_GLOBAL;
		else if (!strcmp(part, "part1"))
			p = VPA_FLAM_PART1;
		else if (!strcmp(part, "part2"))
			p = VPA_FLAM_PART2;
		else {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "unknown partition '%s': expected global, part1 or part2", part);
			break;
		}
		struct vpa_flam_model *m;
		if (p == VPA_FLAM_GLOBAL) {
			if (gline) {
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "a second global model '%s' (the first on line %ld)", id,
					      gline);
				break;
			}
			gline = l.line[i];
			m = &t->global;
		} else {
			m = &t->models[t->n_models++];
			uint32_t si;
			if (!vpa_strmap_get(&spk, s, &si)) {
				si = (uint32_t)t->n_spk;
				t->spk_id[t->n_spk++] = xstrdup(s);
				vpa_strmap_put(&spk, t->spk_id[si], si, NULL);
			}
			m->spk = si;
		}
		m->id = xstrdup(id);
		m->part = p;
		m->acc = m->acc_global = m->update_norm = NAN;
		m->loss_own = m->loss_other = NAN;
	}
	if (!rc && !gline)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no global model (a line `ID - global`)",
			      path);
	if (!rc && t->n_models == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no personalised model (part1/part2 lines)",
			      path);
	vpa_strmap_release(&ids);
	vpa_strmap_release(&spk);
	vpa_kaldi_list_release(&l);
	return rc;
}

/* Indicator features: a folder of UTT.npy or a Kaldi archive of matrices. */
int vpa_flam_read_features(const char *path, struct vpa_flam *t, struct vpa_err *err)
{
	int rc = 0;
	size_t D = 0, N = 0;
	if (is_dir(path)) {
		char **names;
		size_t n;
		if ((rc = list_npy(path, &names, &n, err)))
			return rc;
		t->utt_id = names;
		t->n_utt = n;
		t->off = xmalloc((n + 1) * sizeof(size_t));
		t->off[0] = 0;
		for (size_t u = 0; u < n && !rc; u++) {
			char *p = NULL;
			if (asprintf(&p, "%s/%s.npy", path, names[u]) < 0)
				VPA_BUG("asprintf");
			double *v = NULL;
			size_t r, c;
			rc = vpa_flam_read_act(p, SIZE_MAX, 0, &v, &r, &c, err);
			if (!rc && u > 0 && c != D)
				rc = vpa_fail(err, VPA_EINPUT, NULL,
					      "%s: %zu columns, expected %zu as '%s'", p, c, D,
					      names[0]);
			if (!rc) {
				D = c;
				t->x = xrealloc(t->x, xmul((N + r) * D, sizeof(float)));
				for (size_t i = 0; i < r * c; i++)
					t->x[N * D + i] = (float)v[i];
				N += r;
				t->off[u + 1] = N;
			}
			free(v);
			free(p);
		}
	} else {
		struct vpa_kaldi_ark a;
		vpa_kaldi_ark_init(&a);
		if ((rc = vpa_kaldi_read(path, VPA_KALDI_MATRICES, &a, err)))
			return rc;
		t->n_utt = a.n;
		t->utt_id = xcalloc(a.n, sizeof(char *));
		t->off = xmalloc((a.n + 1) * sizeof(size_t));
		t->off[0] = 0;
		D = a.e[0].cols;
		for (size_t u = 0; u < a.n; u++) {
			t->utt_id[u] = xstrdup(a.e[u].key);
			N += a.e[u].rows;
			t->off[u + 1] = N;
		}
		t->x = xmalloc(xmul(N * D > 0 ? N * D : 1, sizeof(float)));
		for (size_t u = 0; u < a.n && !rc; u++)
			for (size_t i = t->off[u] * D; i < t->off[u + 1] * D && !rc; i++) {
				/* finite (the archive reader checks), but kept as float */
				if (fabs(a.data[i]) > FLT_MAX) {
					char where[600];
					vpa_kaldi_where(&a, u, where, sizeof(where));
					rc = vpa_fail(err, VPA_EINPUT, NULL,
						      "%s: utterance '%s': element (%zu, %zu) (0-based) is "
						      "outside the float32 range", where, a.e[u].key,
						      i / D - t->off[u], i % D);
				}
				t->x[i] = (float)a.data[i];
			}
		vpa_kaldi_ark_release(&a);
		for (size_t u = 0; u < t->n_utt && !rc; u++)
			if (t->off[u + 1] == t->off[u])
				rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: utterance '%s' has no frames",
					      path, t->utt_id[u]);
	}
	t->in_dim = D;
	return rc;
}

int vpa_flam_frontend(const char *file, const struct vpa_flam_import_opts *imp,
		      struct vpa_mark imp_at, struct vpa_feat_opts *fo, struct vpa_err *err)
{
	vpa_feat_opts_init(fo, !strcmp(imp->features, "mfcc") ? VPA_FEAT_MFCC : VPA_FEAT_FBANK);
	const struct vpa_strs *l = &imp->feature_options;
	int rc = vpa_target_frontend_strs(file, l, "--num-mel-bins=40", NULL, fo, err);
	if (rc)
		return rc;
	struct vpa_feat *fe = vpa_feat_new(fo, err); /* the options together */
	if (!fe) {
		/* the list when written, else the import mapping */
		struct vpa_loc loc = vpa_mark_loc(file, l->given ? imp->feature_options_at : imp_at);
		char m[sizeof(err->msg)];
		memcpy(m, err->msg, sizeof(m));
		int st = err->status;
		vpa_err_init(err);
		return vpa_fail(err, st, &loc, "%s", m);
	}
	vpa_feat_free(fe);
	return 0;
}

/* Loading and checking the personalised models: a job per model
 * (vpa_dist_jobs).  Under MPI (more than one rank) a rank keeps no network:
 * the job checks the model and keeps its folder; the rank whose A1/A2 job
 * needs the model loads it again (vpa_flam_activations), so no rank holds
 * every model.  Only update_norm travels. */
struct imp_job {
	struct vpa_flam *t;
	const char *mdp, *md, *yg;
	int lazy;
};

static char *model_dir(const struct imp_job *j, size_t i)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", j->mdp, j->t->models[i].id) < 0)
		VPA_BUG("asprintf");
	return p;
}

static int import_job(void *arg, size_t i, struct vpa_err *e)
{
	struct imp_job *j = arg;
	struct vpa_flam_model *m = &j->t->models[i];
	char *p = model_dir(j, i);
	int rc = vpa_nn_load(p, &m->net, e);
	if (!rc) {
		struct vpa_buf ym;
		vpa_buf_init(&ym);
		vpa_nn_yaml(m->net, &ym);
		if (strcmp(vpa_buf_str(&ym), j->yg))
			rc = vpa_fail(e, VPA_EINPUT, NULL,
				      "%s/%s/model.yaml: the topology differs from the global "
				      "model's (%s/%s/model.yaml): a personalised model must be "
				      "the global model fine-tuned", j->md, m->id, j->md,
				      j->t->global.id);
		vpa_buf_release(&ym);
	}
	if (!rc) {
		size_t np;
		float *w = vpa_nn_params(m->net, &np);
		const float *g = vpa_nn_params(j->t->global.net, &np);
		double s2 = 0;
		for (size_t k = 0; k < np; k++)
			s2 += ((double)w[k] - g[k]) * ((double)w[k] - g[k]);
		m->update_norm = sqrt(s2);
	}
	if (j->lazy) {
		vpa_nn_free(m->net);
		m->net = NULL;
		m->net_dir = p;
		p = NULL;
	}
	free(p);
	return rc;
}

static void import_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct imp_job *j = arg;
	vpa_pack_f64s(b, &j->t->models[i].update_norm, 1);
}

static int import_unpack(void *arg, size_t i, const unsigned char *q, size_t len)
{
	struct imp_job *j = arg;
	if (vpa_unpack_f64s(&q, q + len, &j->t->models[i].update_norm, 1) || len != sizeof(double))
		return -1;
	j->t->models[i].net_dir = model_dir(j, i);
	return 0;
}

static int import_models(struct vpa_run_ctx *ctx, const struct vpa_flam_import_opts *imp,
			 struct vpa_mark imp_at, struct vpa_flam *t, struct vpa_err *err)
{
	const char *md = imp->model_dir;
	char *mdp = vpa_path_join(ctx->dir, md), *indp = vpa_path_join(ctx->dir, imp->indicator);
	int rc;
	char *scp = NULL;
	if (asprintf(&scp, "%s/wav.scp", indp) < 0)
		VPA_BUG("asprintf");
	if (is_dir(indp) && access(scp, F_OK) == 0) {
		struct vpa_feat_opts fo;
		rc = vpa_flam_frontend(ctx->file, imp, imp_at, &fo, err);
		if (!rc)
			rc = vpa_flam_indicator_audio(indp, &fo, ctx->threads, t, err);
	} else {
		rc = vpa_flam_read_features(indp, t, err);
	}
	free(scp);
	if (imp->onnx_layers.given) {
		int bft = !strcmp(imp->onnx_layout, "bft");
		if (!rc)
			rc = vpa_flam_onnx_load(mdp, imp->onnx_layers.v, imp->onnx_layers.n, bft, t,
						err);
		free(mdp);
		free(indp);
		return rc;
	}
	if (!rc) {
		char *p = NULL;
		if (asprintf(&p, "%s/%s", mdp, t->global.id) < 0)
			VPA_BUG("asprintf");
		rc = vpa_nn_load(p, &t->global.net, err);
		free(p);
	}
	if (!rc)
		rc = vpa_flam_hidden_layers(t->global.net, &t->layer_at, &t->n_layers, err);
	if (!rc && vpa_nn_input_dim(t->global.net) != t->in_dim)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "the Indicator features have %zu columns, the global model '%s' "
			      "takes %zu", t->in_dim, t->global.id, vpa_nn_input_dim(t->global.net));
	if (!rc) {
		struct vpa_buf yg;
		vpa_buf_init(&yg);
		vpa_nn_yaml(t->global.net, &yg);
		struct imp_job j = {t, mdp, md, vpa_buf_str(&yg), vpa_dist_size() > 1};
		rc = vpa_dist_jobs(t->n_models, ctx->threads, import_job, import_pack, import_unpack,
				   &j, "models", NULL, err);
		vpa_buf_release(&yg);
	}
	if (!rc) {
		t->dim = xmalloc(t->n_layers * sizeof(size_t));
		for (size_t h = 0; h < t->n_layers; h++)
			t->dim[h] = vpa_nn_layer_dim(t->global.net, t->layer_at[h]);
	}
	free(mdp);
	free(indp);
	return rc;
}

static int import_acts(struct vpa_run_ctx *ctx, const struct vpa_flam_import_opts *imp,
		       struct vpa_flam *t, struct vpa_err *err)
{
	const char *ad = imp->activations;
	char *adp = vpa_path_join(ctx->dir, ad);
	int rc = 0;
	for (size_t i = 0; i <= t->n_models && !rc; i++) {
		struct vpa_flam_model *m = i == t->n_models ? &t->global : &t->models[i];
		if (asprintf(&m->act_dir, "%s/%s", adp, m->id) < 0)
			VPA_BUG("asprintf");
		if (!is_dir(m->act_dir))
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s/%s: missing activations folder of model '%s'", ad, m->id,
				      m->id);
	}
	/* layers and utterances from the global model */
	char *p = NULL;
	size_t L = 0;
	while (!rc) {
		free(p);
		if (asprintf(&p, "%s/layer%zu", t->global.act_dir, L + 1) < 0)
			VPA_BUG("asprintf");
		if (!is_dir(p))
			break;
		L++;
	}
	if (!rc && L == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no layer1 folder (expected layer1, "
				"layer2, ... with one UTT.npy per Indicator utterance)", p);
	free(p);
	p = NULL;
	if (!rc) {
		t->n_layers = L;
		t->dim = xcalloc(L, sizeof(size_t));
		if (asprintf(&p, "%s/layer1", t->global.act_dir) < 0)
			VPA_BUG("asprintf");
		rc = list_npy(p, &t->utt_id, &t->n_utt, err);
		free(p);
		p = NULL;
	}
	if (!rc) {
		t->off = xmalloc((t->n_utt + 1) * sizeof(size_t));
		t->off[0] = 0;
		for (size_t h = 0; h < L && !rc; h++) {
			for (size_t u = 0; u < t->n_utt && !rc; u++) {
				if (asprintf(&p, "%s/layer%zu/%s.npy", t->global.act_dir, h + 1,
					     t->utt_id[u]) < 0)
					VPA_BUG("asprintf");
				double *v = NULL;
				size_t r, c;
				rc = vpa_flam_read_act(p, SIZE_MAX, 0, &v, &r, &c, err);
				if (!rc && h == 0)
					t->off[u + 1] = t->off[u] + r;
				else if (!rc && r != t->off[u + 1] - t->off[u])
					rc = vpa_fail(err, VPA_EINPUT, NULL,
						      "%s: %zu frames, but layer1 of the same "
						      "utterance has %zu", p, r, t->off[u + 1] - t->off[u]);
				if (!rc && u == 0)
					t->dim[h] = c;
				else if (!rc && c != t->dim[h])
					rc = vpa_fail(err, VPA_EINPUT, NULL,
						      "%s: %zu columns, expected %zu as '%s'", p, c,
						      t->dim[h], t->utt_id[0]);
				free(v);
				free(p);
				p = NULL;
			}
		}
	}
	free(adp);
	return rc;
}

int vpa_flam_import(struct vpa_run_ctx *ctx, const struct vpa_flam_import_opts *imp,
		    struct vpa_mark imp_at, struct vpa_flam *t, struct vpa_err *err)
{
	char *mp = vpa_path_join(ctx->dir, imp->models);
	int rc = read_models(mp, t, err);
	free(mp);
	if (!rc)
		rc = imp->activations ? import_acts(ctx, imp, t, err)
				      : import_models(ctx, imp, imp_at, t, err);
	return rc;
}

/* ---- dumps --------------------------------------------------------------------------- */

static int write_models_list(const char *dir, const struct vpa_flam *t, struct vpa_err *err)
{
	char *p = NULL;
	if (asprintf(&p, "%s/models.txt", dir) < 0)
		VPA_BUG("asprintf");
	struct vpa_atomic a;
	FILE *f = vpa_atomic_open(p, &a, err);
	free(p);
	if (!f)
		return err->status ? err->status : VPA_EIO;
	fprintf(f, "%s - global\n", t->global.id);
	for (size_t i = 0; i < t->n_models; i++)
		fprintf(f, "%s %s %s\n", t->models[i].id, t->spk_id[t->models[i].spk],
			t->models[i].part == VPA_FLAM_PART1 ? "part1" : "part2");
	return vpa_atomic_commit(&a, err);
}

int vpa_flam_dump_models(const char *dir, struct vpa_flam *t, struct vpa_err *err)
{
	int rc = vpa_mkdirs(dir, err);
	if (!rc)
		rc = write_models_list(dir, t, err);
	for (size_t i = 0; i <= t->n_models && !rc; i++) {
		struct vpa_flam_model *m = i == t->n_models ? &t->global : &t->models[i];
		char *p = NULL;
		if (asprintf(&p, "%s/%s", dir, m->id) < 0)
			VPA_BUG("asprintf");
		rc = vpa_nn_save(m->net, p, err);
		free(p);
	}
	char *id = NULL;
	if (!rc && asprintf(&id, "%s/indicator", dir) < 0)
		VPA_BUG("asprintf");
	if (!rc)
		rc = vpa_mkdirs(id, err);
	for (size_t u = 0; u < t->n_utt && !rc; u++) {
		size_t T = t->off[u + 1] - t->off[u], shape[2] = {T, t->in_dim};
		double *v = xmalloc(xmul(T * t->in_dim, sizeof(double)));
		for (size_t i = 0; i < T * t->in_dim; i++)
			v[i] = t->x[t->off[u] * t->in_dim + i];
		char *p = NULL;
		if (asprintf(&p, "%s/%s.npy", id, t->utt_id[u]) < 0)
			VPA_BUG("asprintf");
		rc = vpa_npy_write(p, v, 2, shape, err);
		free(p);
		free(v);
	}
	free(id);
	return rc;
}

int vpa_flam_dump_acts(const char *dir, struct vpa_flam *t, struct vpa_err *err)
{
	int rc = vpa_mkdirs(dir, err);
	if (!rc)
		rc = write_models_list(dir, t, err);
	for (size_t i = 0; i <= t->n_models && !rc; i++) {
		struct vpa_flam_model *m = i == t->n_models ? &t->global : &t->models[i];
		float **a;
		if ((rc = vpa_flam_activations(t, i, &a, err)))
			break;
		for (size_t h = 0; h < t->n_layers && !rc; h++) {
			char *ld = NULL;
			if (asprintf(&ld, "%s/%s/layer%zu", dir, m->id, h + 1) < 0)
				VPA_BUG("asprintf");
			rc = vpa_mkdirs(ld, err);
			for (size_t u = 0; u < t->n_utt && !rc; u++) {
				size_t T = t->off[u + 1] - t->off[u], shape[2] = {T, t->dim[h]};
				double *v = xmalloc(xmul(T * t->dim[h], sizeof(double)));
				for (size_t k = 0; k < T * t->dim[h]; k++)
					v[k] = a[h][t->off[u] * t->dim[h] + k];
				char *p = NULL;
				if (asprintf(&p, "%s/%s.npy", ld, t->utt_id[u]) < 0)
					VPA_BUG("asprintf");
				rc = vpa_npy_write(p, v, 2, shape, err);
				free(p);
				free(v);
			}
			free(ld);
		}
		vpa_flam_acts_free(a, t->n_layers);
	}
	return rc;
}

