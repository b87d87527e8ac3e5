/*
 * targets/fl_am.c - target kind `fl_acoustic_models`: a global acoustic
 * model W_g and personalised models W_s (each W_g fine-tuned on one
 * speaker's data, as a device does in federated learning), with an
 * Indicator data set, for the footprint attacks A1 and A2 of Tomashenko et
 * al., ICASSP 2022.  Built by the simulator (targets/sim_am.c) or imported:
 * model folders (learn/NN.md) plus Indicator features, or precomputed
 * activations.  targets/README.md documents the layouts.
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

/* ---- schema ----------------------------------------------------------------- */

#define INF INFINITY
static const struct vpa_key sim_keys[] = {
	{"feat_dim", VPA_K_INT, 0, "40", 2, 4096, 0, NULL, NULL, "40", "acoustic feature dimension",
	 VPA_AT(struct vpa_flam_sim_opts, feat_dim), VPA_MARK(struct vpa_flam_sim_opts, feat_dim_at)},
	{"states", VPA_K_INT, 0, "32", 2, 100000, 0, NULL, NULL, "48",
	 "phone states: the acoustic model's output classes",
	 VPA_AT(struct vpa_flam_sim_opts, states), VPA_MARK(struct vpa_flam_sim_opts, states_at)},
	{"spk_vec_dim", VPA_K_INT, 0, "0", 0, 4096, 0, NULL, NULL, "10",
	 "dimension of a speaker vector appended to every input frame (an i-vector stand-in; 0 = "
	 "none)",
	 VPA_AT(struct vpa_flam_sim_opts, spk_vec_dim), VPA_MARK(struct vpa_flam_sim_opts, spk_vec_dim_at)},
	{"spk_affine", VPA_K_NUM, 0, "0.7", 0, INF, 0, NULL, NULL, "0.5",
	 "speaker affine map A_s = I + spk_affine G / sqrt(feat_dim), G standard normal",
	 VPA_AT(struct vpa_flam_sim_opts, spk_affine), VPA_MARK(struct vpa_flam_sim_opts, spk_affine_at)},
	{"spk_bias", VPA_K_NUM, 0, "1", 0, INF, 0, NULL, NULL, "1",
	 "standard deviation of the speaker bias b_s",
	 VPA_AT(struct vpa_flam_sim_opts, spk_bias), VPA_MARK(struct vpa_flam_sim_opts, spk_bias_at)},
	{"noise", VPA_K_NUM, 0, "1", 0, INF, 0, NULL, NULL, "1", "frame noise standard deviation",
	 VPA_AT(struct vpa_flam_sim_opts, noise), VPA_MARK(struct vpa_flam_sim_opts, noise_at)},
	{"spk_vec_noise", VPA_K_NUM, 0, "0.1", 0, INF, 0, NULL, NULL, "0.1",
	 "per-utterance noise of the speaker vector",
	 VPA_AT(struct vpa_flam_sim_opts, spk_vec_noise), VPA_MARK(struct vpa_flam_sim_opts, spk_vec_noise_at)},
	{"utt_frames", VPA_K_INT, 0, "100", 2, 100000, 0, NULL, NULL, "300",
	 "mean frames per utterance (uniform between half and 1.5 times)",
	 VPA_AT(struct vpa_flam_sim_opts, utt_frames), VPA_MARK(struct vpa_flam_sim_opts, utt_frames_at)},
	{"train_speakers", VPA_K_INT, 0, "100", 1, 1000000, 0, NULL, NULL, "880",
	 "Train-G speakers (the global model's training data)",
	 VPA_AT(struct vpa_flam_sim_opts, train_speakers), VPA_MARK(struct vpa_flam_sim_opts, train_speakers_at)},
	{"train_utts", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "20",
	 "utterances per Train-G speaker",
	 VPA_AT(struct vpa_flam_sim_opts, train_utts), VPA_MARK(struct vpa_flam_sim_opts, train_utts_at)},
	{"part1_speakers", VPA_K_INT, 0, "24", 2, 1000000, 0, NULL, NULL, "736",
	 "Part-1 speakers (personalised models the A2 attacker trains on)",
	 VPA_AT(struct vpa_flam_sim_opts, part1_speakers), VPA_MARK(struct vpa_flam_sim_opts, part1_speakers_at)},
	{"part2_speakers", VPA_K_INT, 0, "24", 2, 1000000, 0, NULL, NULL, "300",
	 "Part-2 speakers (personalised models attacked)",
	 VPA_AT(struct vpa_flam_sim_opts, part2_speakers), VPA_MARK(struct vpa_flam_sim_opts, part2_speakers_at)},
	{"two_models", VPA_K_NUM, 0, "0.8", 0, 1, 0, NULL, NULL, "0.8",
	 "fraction of Part-1/Part-2 speakers with two personalised models on disjoint data",
	 VPA_AT(struct vpa_flam_sim_opts, two_models), VPA_MARK(struct vpa_flam_sim_opts, two_models_at)},
	{"adapt_utts", VPA_K_INT, 0, "30", 1, 100000, 0, NULL, NULL, "10",
	 "adaptation utterances per personalised model",
	 VPA_AT(struct vpa_flam_sim_opts, adapt_utts), VPA_MARK(struct vpa_flam_sim_opts, adapt_utts_at)},
	{"heldout_utts", VPA_K_INT, 0, "3", 1, 100000, 0, NULL, NULL, "5",
	 "held-out utterances per speaker for the utility (frame accuracy)",
	 VPA_AT(struct vpa_flam_sim_opts, heldout_utts), VPA_MARK(struct vpa_flam_sim_opts, heldout_utts_at)},
	{"indicator_speakers", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "32",
	 "speakers of the Indicator set (none of them in Train-G, Part-1 or Part-2)",
	 VPA_AT(struct vpa_flam_sim_opts, indicator_speakers), VPA_MARK(struct vpa_flam_sim_opts, indicator_speakers_at)},
	{"indicator_utts", VPA_K_INT, 0, "4", 1, 100000, 0, NULL, NULL, "10",
	 "utterances per Indicator speaker",
	 VPA_AT(struct vpa_flam_sim_opts, indicator_utts), VPA_MARK(struct vpa_flam_sim_opts, indicator_utts_at)},
	{"hidden_layers", VPA_K_INT, 0, "4", 1, 64, 0, NULL, NULL, "6",
	 "TDNN hidden layers (contexts {-2..2}, {-1,0,1}, {-1,0,1}, {-3,0,3}, {-3,0,3}, {0}, "
	 "then {0}), each followed by a ReLU",
	 VPA_AT(struct vpa_flam_sim_opts, hidden_layers), VPA_MARK(struct vpa_flam_sim_opts, hidden_layers_at)},
	{"hidden_dim", VPA_K_INT, 0, "64", 1, 16384, 0, NULL, NULL, "512", "width of every hidden layer",
	 VPA_AT(struct vpa_flam_sim_opts, hidden_dim), VPA_MARK(struct vpa_flam_sim_opts, hidden_dim_at)},
	{"global_epochs", VPA_K_INT, 0, "6", 1, 10000, 0, NULL, NULL, "10",
	 "epochs of Adam over Train-G for W_g",
	 VPA_AT(struct vpa_flam_sim_opts, global_epochs), VPA_MARK(struct vpa_flam_sim_opts, global_epochs_at)},
	{"global_lr", VPA_K_NUM, 0, "0.002", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.001",
	 "Adam learning rate of W_g",
	 VPA_AT(struct vpa_flam_sim_opts, global_lr), VPA_MARK(struct vpa_flam_sim_opts, global_lr_at)},
	{"batch", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "8", "utterances per mini-batch",
	 VPA_AT(struct vpa_flam_sim_opts, batch), VPA_MARK(struct vpa_flam_sim_opts, batch_at)},
	{"adapt_epochs", VPA_K_INT, 0, "2", 1, 10000, 0, NULL, NULL, "4",
	 "epochs of SGD over a personalised model's adaptation data (all parameters fine-tuned)",
	 VPA_AT(struct vpa_flam_sim_opts, adapt_epochs), VPA_MARK(struct vpa_flam_sim_opts, adapt_epochs_at)},
	{"adapt_lr", VPA_K_NUM, 0, "0.02", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.02",
	 "SGD learning rate of the personalisation",
	 VPA_AT(struct vpa_flam_sim_opts, adapt_lr), VPA_MARK(struct vpa_flam_sim_opts, adapt_lr_at)},
	{NULL},
};
static const struct vpa_schema sim_schema = {"simulation", sim_keys, sizeof(struct vpa_flam_sim_opts)};

static const struct vpa_key dp_keys[] = {
	{"clip", VPA_K_NUM, 0, "0", 0, INF, 0, NULL, NULL, "1",
	 "C: every released update W_s - W_g is clipped to L2 norm C (0 = no local DP)",
	 VPA_AT(struct vpa_flam_dp_opts, clip), VPA_MARK(struct vpa_flam_dp_opts, clip_at)},
	{"noise", VPA_K_NUM, 0, "0", 0, INF, 0, NULL, NULL, "0.1",
	 "noise multiplier sigma: N(0, (sigma C)^2) is added to every coordinate of the update",
	 VPA_AT(struct vpa_flam_dp_opts, noise), VPA_MARK(struct vpa_flam_dp_opts, noise_at)},
	{"delta", VPA_K_NUM, 0, "1e-5", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "1e-5",
	 "delta of the (epsilon, delta) reported per release (analytic Gaussian mechanism, "
	 "sensitivity C)",
	 VPA_AT(struct vpa_flam_dp_opts, delta), VPA_MARK(struct vpa_flam_dp_opts, delta_at)},
	{NULL},
};
static const struct vpa_schema dp_schema = {"local DP", dp_keys, sizeof(struct vpa_flam_dp_opts)};

static const struct vpa_key import_keys[] = {
	{"models", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "models.txt",
	 "`MODEL SPEAKER PART` lines, PART one of global (exactly one line, speaker `-`), part1, "
	 "part2",
	 VPA_AT(struct vpa_flam_import_opts, models), VPA_MARK(struct vpa_flam_import_opts, models_at)},
	{"model_dir", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "models",
	 "folder holding one model folder (model.yaml + .npy, learn/NN.md) per MODEL",
	 VPA_AT(struct vpa_flam_import_opts, model_dir), VPA_MARK(struct vpa_flam_import_opts, model_dir_at)},
	{"indicator", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "indicator",
	 "the Indicator features: a folder of UTT.npy (T x input_dim), a Kaldi feature "
	 "archive (text or binary matrices), or a Kaldi data directory of audio (a folder "
	 "with wav.scp; features by `features` and `feature_options`)",
	 VPA_AT(struct vpa_flam_import_opts, indicator), VPA_MARK(struct vpa_flam_import_opts, indicator_at)},
	{"onnx_layers", VPA_K_LIST, 0, NULL, -INF, INF, VPA_KF_NONEMPTY, NULL, NULL,
	 "[/tdnn2/Relu_output_0, hidden5]",
	 "ONNX models instead of model folders: MODEL_DIR/MODEL.onnx per MODEL, the hidden "
	 "layers being these graph values (any intermediate value; per-frame outputs "
	 "(1, T, D), (1, D, T) or (T, D)); `vpaudit onnx info` lists the outputs, `onnx run "
	 "--outputs` shows any value",
	 VPA_AT(struct vpa_flam_import_opts, onnx_layers), VPA_MARK(struct vpa_flam_import_opts, onnx_layers_at)},
	{"onnx_layout", VPA_K_ENUM, 0, "btf", -INF, INF, 0, "btf|bft", NULL, "bft",
	 "the ONNX models' input: (1, time, features) or (1, features, time)",
	 VPA_AT(struct vpa_flam_import_opts, onnx_layout), VPA_MARK(struct vpa_flam_import_opts, onnx_layout_at)},
	{"features", VPA_K_ENUM, 0, "fbank", -INF, INF, 0, "fbank|mfcc", NULL, "mfcc",
	 "an Indicator set given as audio: the features the models take",
	 VPA_AT(struct vpa_flam_import_opts, features), VPA_MARK(struct vpa_flam_import_opts, features_at)},
	{"feature_options", VPA_K_LIST, 0, NULL, -INF, INF, 0, NULL, NULL,
	 "[--num-mel-bins=40, --cmvn=utt]",
	 "an Indicator set given as audio: the front-end options the models were trained "
	 "with (`vpaudit features` names, `--name=value`)",
	 VPA_AT(struct vpa_flam_import_opts, feature_options), VPA_MARK(struct vpa_flam_import_opts, feature_options_at)},
	{"activations", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "acts",
	 "instead of models: ACTS/MODEL/layerH/UTT.npy (T x D), hidden layers H = 1, 2, ...; "
	 "utterances are those of the global model's layer1 folder",
	 VPA_AT(struct vpa_flam_import_opts, activations), VPA_MARK(struct vpa_flam_import_opts, activations_at)},
	{NULL},
};
static const struct vpa_schema import_schema = {"import", import_keys, sizeof(struct vpa_flam_import_opts)};

static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "simulate", -INF, INF, 0, "simulate|import", NULL, "simulate",
	 "`simulate`: the simulator of targets/README.md; `import`: your models or activations",
	 VPA_AT(struct vpa_flam_opts, source), VPA_MARK(struct vpa_flam_opts, source_at)},
	{"simulate", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &sim_schema,
	 "{part1_speakers: 100, hidden_layers: 6}", "the simulation model and sizes",
	 VPA_AT(struct vpa_flam_opts, simulate), VPA_MARK(struct vpa_flam_opts, simulate_at)},
	{"dp", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &dp_schema, "{clip: 1, noise: 0.1}",
	 "local differential privacy on each released update (source: simulate)",
	 VPA_AT(struct vpa_flam_opts, dp), VPA_MARK(struct vpa_flam_opts, dp_at)},
	{"import", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &import_schema,
	 "{models: models.txt, activations: acts}", "the files (source: import)",
	 VPA_AT(struct vpa_flam_opts, import), VPA_MARK(struct vpa_flam_opts, import_at)},
	{"dump_models", VPA_K_STR, 0, NULL, -INF, INF, VPA_KF_WRITE, NULL, NULL, "out/am-models",
	 "write models.txt, every model folder and the Indicator features (indicator/UTT.npy) "
	 "here (relative to the current directory; inside the output folder unless the run has "
	 "`--allow-writes-outside`), to be imported again",
	 VPA_AT(struct vpa_flam_opts, dump_models), VPA_MARK(struct vpa_flam_opts, dump_models_at)},
	{"dump_activations", VPA_K_STR, 0, NULL, -INF, INF, VPA_KF_WRITE, NULL, NULL, "out/am-acts",
	 "write models.txt and every model's hidden-layer activations (MODEL/layerH/UTT.npy) here "
	 "(relative to the current directory; inside the output folder unless the run has "
	 "`--allow-writes-outside`)",
	 VPA_AT(struct vpa_flam_opts, dump_activations), VPA_MARK(struct vpa_flam_opts, dump_activations_at)},
	{NULL},
};
static const struct vpa_schema schema = {"target fl_acoustic_models", keys, sizeof(struct vpa_flam_opts)};

/* ---- the built target ---------------------------------------------------------- */

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

/* Read one activation file, checking its shape when rows != SIZE_MAX. */
static int read_act(const char *path, size_t rows, size_t cols, double **out, size_t *r_out,
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
	} else {
		for (size_t h = 0; h < t->n_layers && !rc; h++) {
			for (size_t u = 0; u < t->n_utt && !rc; u++) {
				char *p = NULL;
				if (asprintf(&p, "%s/layer%zu/%s.npy", md->act_dir, h + 1, t->utt_id[u]) < 0)
					VPA_BUG("asprintf");
				double *v = NULL;
				size_t r, c, T = t->off[u + 1] - t->off[u];
				rc = read_act(p, T, t->dim[h], &v, &r, &c, err);
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
static int read_indicator(const char *path, struct vpa_flam *t, struct vpa_err *err)
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
			rc = read_act(p, SIZE_MAX, 0, &v, &r, &c, err);
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

/* The front-end of an Indicator set given as audio (`features`, `feature_options`). */
static int frontend_opts(const char *file, const struct vpa_ynode *imp, struct vpa_feat_opts *fo,
			 struct vpa_err *err)
{
	const char *kind = vpa_cfg_str(imp, &import_schema, "features");
	vpa_feat_opts_init(fo, !strcmp(kind, "mfcc") ? VPA_FEAT_MFCC : VPA_FEAT_FBANK);
	const struct vpa_ynode *l = vpa_ymap_get(imp, "feature_options");
	int rc = vpa_target_frontend_list(file, l, "--num-mel-bins=40", NULL, fo, err);
	if (rc)
		return rc;
	struct vpa_feat *fe = vpa_feat_new(fo, err); /* the options together */
	if (!fe) {
		struct vpa_loc loc = vpa_node_loc(file, l ? l : imp);
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

static int import_models(struct vpa_run_ctx *ctx, const struct vpa_ynode *imp, struct vpa_flam *t,
			 struct vpa_err *err)
{
	const char *md = vpa_cfg_str(imp, &import_schema, "model_dir");
	const char *ind = vpa_cfg_str(imp, &import_schema, "indicator");
	char *mdp = vpa_path_join(ctx->dir, md), *indp = vpa_path_join(ctx->dir, ind);
	int rc;
	char *scp = NULL;
	if (asprintf(&scp, "%s/wav.scp", indp) < 0)
		VPA_BUG("asprintf");
	if (is_dir(indp) && access(scp, F_OK) == 0) {
		struct vpa_feat_opts fo;
		rc = frontend_opts(ctx->file, imp, &fo, err);
		if (!rc)
			rc = vpa_flam_indicator_audio(indp, &fo, ctx->threads, t, err);
	} else {
		rc = read_indicator(indp, t, err);
	}
	free(scp);
	const struct vpa_ynode *ol = vpa_ymap_get(imp, "onnx_layers");
	if (ol) {
		char **names = xcalloc(ol->n, sizeof(char *));
		for (size_t h = 0; h < ol->n; h++)
			names[h] = ol->items[h]->str;
		int bft = !strcmp(vpa_cfg_str(imp, &import_schema, "onnx_layout"), "bft");
		if (!rc)
			rc = vpa_flam_onnx_load(mdp, names, ol->n, bft, t, err);
		free(names);
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

static int import_acts(struct vpa_run_ctx *ctx, const struct vpa_ynode *imp, struct vpa_flam *t,
		       struct vpa_err *err)
{
	const char *ad = vpa_cfg_str(imp, &import_schema, "activations");
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
				rc = read_act(p, SIZE_MAX, 0, &v, &r, &c, err);
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

static int dump_models(const char *dir, struct vpa_flam *t, struct vpa_err *err)
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

static int dump_acts(const char *dir, struct vpa_flam *t, struct vpa_err *err)
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

/* ---- the kind ------------------------------------------------------------------------- */

/*
 * ONNX import: the global model loads (an unsupported operator is one line
 * naming the operator, node and opset) and has every named layer.
 */
static int validate_onnx(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *imp,
			 const struct vpa_ynode *ol, struct vpa_err *err)
{
	for (size_t h = 0; h < ol->n; h++)
		if (ol->items[h]->type != VPA_YSCALAR) {
			struct vpa_loc l2 = vpa_node_loc(ctx->file, ol->items[h]);
			return vpa_fail(err, VPA_EINPUT, &l2, "expected the name of a graph value");
		}
	char *mp = vpa_path_join(ctx->dir, vpa_cfg_str(imp, &import_schema, "models"));
	char *mdp = vpa_path_join(ctx->dir, vpa_cfg_str(imp, &import_schema, "model_dir"));
	struct vpa_kaldi_list l;
	struct vpa_onnx_model *m = NULL;
	struct vpa_err e2;
	vpa_kaldi_list_init(&l);
	vpa_err_init(&e2);
	int rc = vpa_kaldi_read_list(mp, 3, &l, err);
	const char *gid = NULL;
	for (size_t i = 0; !rc && i < l.n; i++)
		if (!strcmp(l.f[i * 3 + 2], "global") && !gid)
			gid = l.f[i * 3];
	if (!rc && gid) { /* no global line: the build says so */
		char *p = NULL;
		if (asprintf(&p, "%s/%s.onnx", mdp, gid) < 0)
			VPA_BUG("asprintf");
		if (vpa_onnx_load(p, NULL, &m, &e2)) {
			struct vpa_loc l2 = vpa_node_loc(ctx->file, vpa_ymap_get(imp, "model_dir"));
			rc = vpa_fail(err, e2.status, &l2, "%s", e2.msg);
		}
		for (size_t h = 0; !rc && h < ol->n; h++)
			if (!vpa_onnx_has_value(m, ol->items[h]->str)) {
				struct vpa_loc l2 = vpa_node_loc(ctx->file, ol->items[h]);
				rc = vpa_fail(err, VPA_EINPUT, &l2, "%s: no value named '%s'", p,
					      ol->items[h]->str);
			}
		free(p);
	}
	vpa_onnx_free(m);
	vpa_kaldi_list_release(&l);
	free(mp);
	free(mdp);
	return rc;
}

static int validate(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *cfg,
		    struct vpa_err *err)
{
	const char *source = vpa_cfg_str(cfg, &schema, "source");
	const struct vpa_ynode *imp = vpa_ymap_get(cfg, "import");
	struct vpa_loc loc = vpa_node_loc(ctx->file, cfg);
	if (!strcmp(source, "simulate")) {
		if (imp) {
			loc = vpa_node_loc(ctx->file, vpa_ymap_key(cfg, "import"));
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`import:` needs `source: import` (the source is 'simulate')");
		}
		const struct vpa_ynode *dp = vpa_ymap_get(cfg, "dp");
		if (dp && vpa_cfg_num(dp, &dp_schema, "noise") > 0 &&
		    vpa_cfg_num(dp, &dp_schema, "clip") == 0) {
			loc = vpa_node_loc(ctx->file, dp);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"dp: noise needs a clipping bound `clip` > 0 (the noise is "
					"sigma * clip)");
		}
		return 0;
	}
	if (!imp)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"source 'import' needs an `import:` mapping (models and activations, "
				"or models, model_dir and indicator)");
	const char *bad[] = {"simulate", "dp", "dump_models"};
	for (size_t i = 0; i < 3; i++)
		if (vpa_ymap_get(cfg, bad[i])) {
			loc = vpa_node_loc(ctx->file, vpa_ymap_key(cfg, bad[i]));
			return vpa_fail(err, VPA_EINPUT, &loc, "`%s:` applies to source 'simulate' only",
					bad[i]);
		}
	const struct vpa_ynode *acts = vpa_ymap_get(imp, "activations");
	const struct vpa_ynode *md = vpa_ymap_get(imp, "model_dir");
	const struct vpa_ynode *ind = vpa_ymap_get(imp, "indicator");
	loc = vpa_node_loc(ctx->file, imp);
	if (acts && (md || ind))
		return vpa_fail(err, VPA_EINPUT, &loc,
				"give either `activations` or `model_dir` and `indicator`, not both");
	if (!acts && !(md && ind))
		return vpa_fail(err, VPA_EINPUT, &loc,
				"import needs `activations`, or both `model_dir` and `indicator`");
	if (acts && vpa_ymap_get(cfg, "dump_activations")) {
		loc = vpa_node_loc(ctx->file, vpa_ymap_key(cfg, "dump_activations"));
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`dump_activations:` with imported activations would only copy them");
	}
	const struct vpa_ynode *ol = vpa_ymap_get(imp, "onnx_layers");
	if (acts && ol) {
		loc = vpa_node_loc(ctx->file, vpa_ymap_key(imp, "onnx_layers"));
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`onnx_layers` names the hidden layers of ONNX models (`model_dir`), "
				"not of imported activations");
	}
	int rc = vpa_check_path(ctx, vpa_ymap_get(imp, "models"), VPA_PATH_FILE, err);
	if (!rc && acts)
		rc = vpa_check_path(ctx, acts, VPA_PATH_DIR, err);
	if (!rc && md)
		rc = vpa_check_path(ctx, md, VPA_PATH_DIR, err);
	if (!rc && ind)
		rc = vpa_check_path(ctx, ind, VPA_PATH_ANY, err);
	if (!rc && ind) {
		struct vpa_feat_opts fo;
		rc = frontend_opts(ctx->file, imp, &fo, err);
	}
	if (!rc && ol)
		rc = validate_onnx(ctx, imp, ol, err);
	return rc;
}

static void read_sim_cfg(const struct vpa_ynode *cfg, struct vpa_flam_sim_cfg *c)
{
	const struct vpa_ynode *s = vpa_ymap_get(cfg, "simulate");
	const struct vpa_ynode *dp = vpa_ymap_get(cfg, "dp");
#define I(k) c->k = (size_t)vpa_cfg_int(s, &sim_schema, #k)
#define N(k) c->k = vpa_cfg_num(s, &sim_schema, #k)
	I(feat_dim); I(states); I(spk_vec_dim); N(spk_affine); N(spk_bias); N(noise);
	N(spk_vec_noise); I(utt_frames); I(train_speakers); I(train_utts); I(part1_speakers);
	I(part2_speakers); N(two_models); I(adapt_utts); I(heldout_utts);
	I(indicator_speakers); I(indicator_utts); I(hidden_layers); I(hidden_dim);
	I(global_epochs); N(global_lr); I(batch); I(adapt_epochs); N(adapt_lr);
#undef I
#undef N
	c->dp_clip = vpa_cfg_num(dp, &dp_schema, "clip");
	c->dp_noise = vpa_cfg_num(dp, &dp_schema, "noise");
	c->dp_delta = vpa_cfg_num(dp, &dp_schema, "delta");
}

static void flam_free(struct vpa_target *t)
{
	struct vpa_flam *f = t->data;
	if (!f)
		return;
	vpa_flam_release(f);
	free(f);
	t->data = NULL;
}

static int build(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg, struct vpa_target *out,
		 struct vpa_err *err)
{
	struct vpa_flam *t = xcalloc(1, sizeof(*t));
	struct vpa_json *info = vpa_json_obj();
	const char *source = vpa_cfg_str(cfg, &schema, "source");
	int rc = 0;
	vpa_flam_init(t);
	out->data = t;
	out->info = info;
	vpa_json_set_str(info, "source", source);
	if (!strcmp(source, "simulate")) {
		struct vpa_flam_sim_cfg c;
		vpa_flam_sim_cfg_init(&c);
		read_sim_cfg(cfg, &c);
		struct vpa_rng r;
		vpa_rng_split(&r, ctx->seed, out->id ? out->id : "fl_am");
		c.seed = vpa_rng_u64(&r);
		c.threads = ctx->threads;
		out->simulated = 1;
		rc = vpa_flam_simulate(&c, t, info, err);
		if (!rc && c.part1_speakers + c.part2_speakers > 0 && t->n_models == 0)
			VPA_BUG("no models");
	} else {
		const struct vpa_ynode *imp = vpa_ymap_get(cfg, "import");
		const char *models = vpa_cfg_str(imp, &import_schema, "models");
		char *mp = vpa_path_join(ctx->dir, models);
		out->simulated = 0;
		rc = read_models(mp, t, err);
		free(mp);
		if (!rc)
			rc = vpa_ymap_get(imp, "activations") ? import_acts(ctx, imp, t, err)
							       : import_models(ctx, imp, t, err);
		if (!rc) {
			struct vpa_json *sz = vpa_json_obj();
			size_t n1 = 0;
			for (size_t i = 0; i < t->n_models; i++)
				n1 += t->models[i].part == VPA_FLAM_PART1;
			vpa_json_set_num(sz, "part1_models", (double)n1);
			vpa_json_set_num(sz, "part2_models", (double)(t->n_models - n1));
			vpa_json_set_num(sz, "speakers", (double)t->n_spk);
			vpa_json_set_num(sz, "indicator_utterances", (double)t->n_utt);
			vpa_json_set_num(sz, "indicator_frames", (double)t->off[t->n_utt]);
			vpa_json_set_num(sz, "hidden_layers", (double)t->n_layers);
			vpa_json_set(info, "sizes", sz);
			vpa_json_set_str(info, "models", models);
		}
	}
	const char *dm = vpa_cfg_str(cfg, &schema, "dump_models");
	const char *da = vpa_cfg_str(cfg, &schema, "dump_activations");
	/* under MPI only rank 0 writes (base/dist.c) */
	if (!rc && dm && vpa_dist_rank() == 0)
		rc = dump_models(dm, t, err);
	if (!rc && da && vpa_dist_rank() == 0)
		rc = dump_acts(da, t, err);
	if (!rc) {
		struct vpa_json *dims = vpa_json_arr();
		for (size_t h = 0; h < t->n_layers; h++)
			vpa_json_push(dims, vpa_json_num((double)t->dim[h]));
		vpa_json_set(info, "hidden_layer_dims", dims);
	}
	if (!rc && t->n_utt == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "target '%s': the Indicator set is empty",
			      out->id);
	return rc;
}

const struct vpa_target_kind vpa_target_fl_acoustic_models = {
	.name = "fl_acoustic_models",
	.schema = &schema,
	.doc = "Federated-learning speaker-adapted acoustic models (Tomashenko et al., ICASSP "
	       "2022): a global model W_g and personalised models W_s (W_g fine-tuned on one "
	       "speaker's data), split into Part-1 (the A2 attacker's training models) and Part-2 "
	       "(the attacked models), with an Indicator data set of other speakers.  Simulated "
	       "(phone-state frame features with per-speaker affine maps, a TDNN trained on "
	       "Train-G, optional local DP on the released updates; targets/README.md) or "
	       "imported as model folders plus Indicator features, or as precomputed "
	       "activations.  Attack it with `a1_footprint` and `a2_footprint`.",
	.validate = validate,
	.build = build,
	.free = flam_free,
};
