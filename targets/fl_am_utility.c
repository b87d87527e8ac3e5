/*
 * targets/fl_am_utility.c - utility of imported FL acoustic models (issue 31
 * item 11): frame accuracy on a labelled held-out set, so that an import's
 * records show what the personalisation (and its DP) costs or gains, as the
 * simulator's do (`utility_acc` beside `utility_acc_global`).
 *
 * Each personalised model is scored on the held-out utterances of its own
 * speaker (utt2spk), the global model on the same utterances: the accuracy is
 * the fraction of frames whose arg-max output is the frame's label.  Calls
 * fl_am_files.c (the features reader) and fl_am_onnx.c (ONNX outputs).
 */
#include "targets/fl_am.h"
#include "formats/kaldi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Arg-max hits of z (T, K) against lab (T): ties go to the lowest class. */
static size_t hits(const float *z, size_t T, size_t K, const double *lab)
{
	size_t ok = 0;
	for (size_t i = 0; i < T; i++) {
		size_t best = 0;
		for (size_t k = 1; k < K; k++)
			if (z[i * K + k] > z[i * K + best])
				best = k;
		ok += (double)best == lab[i];
	}
	return ok;
}

/* Correct frames of model md on held-out utterance u of hf; labels lab (T). */
static int score_utt(const struct vpa_flam *t, struct vpa_flam_model *md, struct vpa_nn **own,
		     const struct vpa_flam *hf, size_t u, const double *lab, double kmax,
		     const char *lab_where, size_t *ok, struct vpa_err *err)
{
	size_t T = hf->off[u + 1] - hf->off[u], K = 0;
	const float *x = hf->x + hf->off[u] * hf->in_dim;
	float *z = NULL;
	int rc = 0;
	if (md->onnx || md->onnx_path) {
		rc = vpa_flam_onnx_frame_out(t, md, x, T, &z, &K, err);
	} else {
		struct vpa_nn *net = md->net;
		if (!net && md->net_dir) { /* under MPI: loaded by the rank that uses it */
			if (!*own && (rc = vpa_nn_load(md->net_dir, own, err)))
				return rc;
			net = *own;
		}
		if (!net)
			VPA_BUG("model '%s' has no network", md->id);
		size_t off[2] = {0, T}, R;
		struct vpa_nn_batch bt = {1, off, x, NULL};
		rc = vpa_nn_forward(net, &bt, VPA_NN_EVAL, err);
		if (!rc) {
			const float *o = vpa_nn_output(net, &R, &K);
			if (R != T)
				return vpa_fail(err, VPA_EINPUT, NULL,
						"model '%s' gives %zu output frames for the %zu of "
						"held-out utterance '%s'", md->id, R, T, hf->utt_id[u]);
			z = xmalloc(xmul(T * K > 0 ? T * K : 1, sizeof(float)));
			memcpy(z, o, T * K * sizeof(float));
		}
	}
	if (!rc && kmax >= (double)K)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: utterance '%s' has class %.0f, but model '%s' has %zu outputs "
			      "(classes 0 to %zu)", lab_where, hf->utt_id[u], kmax, md->id, K,
			      K ? K - 1 : 0);
	if (!rc)
		*ok = hits(z, T, K, lab);
	free(z);
	return rc;
}

/* The labels of held-out utterance u: a vector of hf's frame count, integers >= 0. */
static int check_labels(const struct vpa_kaldi_ark *a, size_t e, const struct vpa_flam *hf,
			size_t u, double *kmax, struct vpa_err *err)
{
	char where[600];
	vpa_kaldi_where(a, e, where, sizeof(where));
	const struct vpa_kaldi_entry *en = &a->e[e];
	size_t T = hf->off[u + 1] - hf->off[u];
	if (en->is_matrix && en->rows != 1)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: utterance '%s': labels must be a vector (one class per frame), "
				"found a %zu x %zu matrix", where, en->key, en->rows, en->cols);
	if (en->rows * en->cols != T)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: utterance '%s' has %zu labels for %zu feature frames", where,
				en->key, en->rows * en->cols, T);
	*kmax = 0;
	for (size_t i = 0; i < T; i++) {
		double v = a->data[en->off + i];
		if (v < 0 || v != floor(v) || v > 1e9)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"%s: utterance '%s', frame %zu: a label must be a class id "
					"(an integer >= 0), got %g", where, en->key, i + 1, v);
		if (v > *kmax)
			*kmax = v;
	}
	return 0;
}

int vpa_flam_heldout(struct vpa_run_ctx *ctx, const struct vpa_flam_heldout_opts *h,
		     struct vpa_flam *t, struct vpa_json *info, struct vpa_err *err)
{
	char *fp = vpa_path_join(ctx->dir, h->features), *lp = vpa_path_join(ctx->dir, h->labels);
	char *sp = vpa_path_join(ctx->dir, h->utt2spk);
	struct vpa_flam hf;
	struct vpa_kaldi_ark a;
	struct vpa_kaldi_list l;
	vpa_flam_init(&hf);
	vpa_kaldi_ark_init(&a);
	vpa_kaldi_list_init(&l);
	size_t n = 0, *lab_of = NULL, *spk_of = NULL, *ok_g = NULL, n_scored = 0;
	double *kmax = NULL, sa = 0, sg = 0;
	int rc = vpa_flam_read_features(fp, &hf, err);
	if (!rc && hf.in_dim != t->in_dim)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: the held-out features have %zu columns, the models take %zu", fp,
			      hf.in_dim, t->in_dim);
	if (!rc)
		rc = vpa_kaldi_read(lp, VPA_KALDI_ANY, &a, err);
	if (!rc)
		rc = vpa_kaldi_read_list(sp, 2, &l, err);
	n = rc ? 0 : hf.n_utt;
	lab_of = xmalloc((n ? n : 1) * sizeof(size_t));
	spk_of = xmalloc((n ? n : 1) * sizeof(size_t));
	kmax = xmalloc((n ? n : 1) * sizeof(double));
	ok_g = xcalloc(n ? n : 1, sizeof(size_t));
	/* every held-out utterance has its labels and a speaker with models */
	for (size_t u = 0; u < n && !rc; u++) {
		lab_of[u] = SIZE_MAX;
		spk_of[u] = SIZE_MAX;
		for (size_t e = 0; e < a.n && lab_of[u] == SIZE_MAX; e++)
			if (!strcmp(a.e[e].key, hf.utt_id[u]))
				lab_of[u] = e;
		if (lab_of[u] == SIZE_MAX) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no labels for held-out utterance '%s'",
				      lp, hf.utt_id[u]);
			break;
		}
		rc = check_labels(&a, lab_of[u], &hf, u, &kmax[u], err);
		size_t li = SIZE_MAX;
		for (size_t i = 0; i < l.n && li == SIZE_MAX; i++)
			if (!strcmp(l.f[2 * i], hf.utt_id[u]))
				li = i;
		if (!rc && li == SIZE_MAX)
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s: held-out utterance '%s' has no speaker", sp, hf.utt_id[u]);
		for (size_t s = 0; !rc && s < t->n_spk && spk_of[u] == SIZE_MAX; s++)
			if (!strcmp(t->spk_id[s], l.f[2 * li + 1]))
				spk_of[u] = s;
		if (!rc && spk_of[u] == SIZE_MAX)
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s:%ld: speaker '%s' has no model in models.txt", sp, l.line[li],
				      l.f[2 * li + 1]);
	}
	/* the global model on every utterance, then each model on its speaker's */
	struct vpa_nn *own = NULL;
	for (size_t u = 0; u < n && !rc; u++)
		rc = score_utt(t, &t->global, &own, &hf, u, a.data + a.e[lab_of[u]].off, kmax[u],
			       a.name, &ok_g[u], err);
	vpa_nn_free(own);
	for (size_t m = 0; m < t->n_models && !rc; m++) {
		struct vpa_flam_model *md = &t->models[m];
		size_t ok = 0, okg = 0, fr = 0;
		own = NULL;
		for (size_t u = 0; u < n && !rc; u++) {
			if (spk_of[u] != md->spk)
				continue;
			size_t k = 0;
			rc = score_utt(t, md, &own, &hf, u, a.data + a.e[lab_of[u]].off, kmax[u],
				       a.name, &k, err);
			ok += k;
			okg += ok_g[u];
			fr += hf.off[u + 1] - hf.off[u];
		}
		vpa_nn_free(own);
		if (!rc && fr) {
			md->acc = (double)ok / (double)fr;
			md->acc_global = (double)okg / (double)fr;
			sa += md->acc;
			sg += md->acc_global;
			n_scored++;
		}
	}
	if (!rc && info) {
		struct vpa_json *o = vpa_json_obj();
		vpa_json_set_num(o, "utterances", (double)n);
		vpa_json_set_num(o, "frames", (double)hf.off[n]);
		vpa_json_set_num(o, "models", (double)n_scored);
		vpa_json_set(o, "personalised_accuracy",
			     vpa_json_num(n_scored ? sa / (double)n_scored : NAN));
		vpa_json_set(o, "global_accuracy", vpa_json_num(n_scored ? sg / (double)n_scored : NAN));
		vpa_json_set(info, "heldout", o);
	}
	free(lab_of);
	free(spk_of);
	free(kmax);
	free(ok_g);
	vpa_kaldi_list_release(&l);
	vpa_kaldi_ark_release(&a);
	vpa_flam_release(&hf);
	free(fp);
	free(lp);
	free(sp);
	return rc;
}
