/*
 * attacks/a2.c - attack kind `a2_footprint`: attack A2 of Tomashenko et al.,
 * "Privacy attacks for ASR acoustic models in a federated learning
 * framework", ICASSP 2022, section 3.2.2.
 *
 * For a hidden layer h, every (Part-1 model, Indicator utterance) gives a
 * Delta sequence act_h(W_s) - act_h(W_g) (T x D), labelled with the model's
 * speaker.  An x-vector-like network (five frame-level layers: TDNN
 * {-2..2}, {-2,0,2}, {-3,0,3}, two dense; statistics pooling after the fifth;
 * an embedding layer; a softmax over the Part-1 speakers) learns to predict
 * the speaker.  A Part-2 model's embedding is the average of its Indicator
 * utterances' embeddings; pairs of Part-2 models are scored with a PLDA
 * (centering, length normalisation, Kaldi two-covariance PLDA) trained on the
 * Part-1 utterance embeddings.  The trials are those of A1 on Part-2 (same
 * seed), and every record also carries A1's EER on them (`a1_eer`, the
 * paper's Table 2).
 *
 * Delta inputs are standardised per dimension with the Part-1 mean and
 * standard deviation (the network's input normalisation; fine-tuning changes
 * are small and their scale differs widely between layers).
 */
#include "attacks/attacks.h"
#include "attacks/flam_audit.h"
#include "base/dist.h"
#include "base/la.h"
#include "learn/plda.h"
#include "targets/fl_am.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define INF INFINITY
/* typed options (config/schema.h), filled by validation */
struct a2_opts {
	struct vpa_strs layers;
	long long hidden;
	long long embedding_dim;
	long long epochs;
	double lr;
	long long batch;
	long long em_iters;
	long long n_nontarget;
	double alpha_mu;
	double alpha_sigma;
	double ci;
	long long reps;
	double audit_alpha;
	struct vpa_mark layers_at, hidden_at, embedding_dim_at, epochs_at, lr_at, batch_at,
		em_iters_at, n_nontarget_at, alpha_mu_at, alpha_sigma_at, ci_at, reps_at,
		audit_alpha_at;
};

static const struct vpa_key keys[] = {
	{"layers", VPA_K_LIST, 0, NULL, -INF, INF, 0, NULL, NULL, "[1, 3, 5]",
	 "hidden layers to attack (1-based); default all",
	 VPA_AT(struct a2_opts, layers), VPA_MARK(struct a2_opts, layers_at)},
	{"hidden", VPA_K_INT, 0, "64", 1, 16384, 0, NULL, NULL, "512",
	 "width of the x-vector network's frame-level layers (the fifth has 3 times as many)",
	 VPA_AT(struct a2_opts, hidden), VPA_MARK(struct a2_opts, hidden_at)},
	{"embedding_dim", VPA_K_INT, 0, "32", 1, 16384, 0, NULL, NULL, "512",
	 "dimension of the embedding layer",
	 VPA_AT(struct a2_opts, embedding_dim), VPA_MARK(struct a2_opts, embedding_dim_at)},
	{"epochs", VPA_K_INT, 0, "12", 1, 100000, 0, NULL, NULL, "20", "training epochs (Adam)",
	 VPA_AT(struct a2_opts, epochs), VPA_MARK(struct a2_opts, epochs_at)},
	{"lr", VPA_K_NUM, 0, "0.002", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.001",
	 "Adam learning rate",
	 VPA_AT(struct a2_opts, lr), VPA_MARK(struct a2_opts, lr_at)},
	{"batch", VPA_K_INT, 0, "32", 1, 100000, 0, NULL, NULL, "64",
	 "Delta sequences per mini-batch",
	 VPA_AT(struct a2_opts, batch), VPA_MARK(struct a2_opts, batch_at)},
	{"em_iters", VPA_K_INT, 0, "10", 1, 1000, 0, NULL, NULL, "10", "PLDA EM iterations",
	 VPA_AT(struct a2_opts, em_iters), VPA_MARK(struct a2_opts, em_iters_at)},
	{"n_nontarget", VPA_K_INT, 0, "10000", 1, 100000000, 0, NULL, NULL, "10000",
	 "non-target trials among Part-2 models (as A1)",
	 VPA_AT(struct a2_opts, n_nontarget), VPA_MARK(struct a2_opts, n_nontarget_at)},
	{"alpha_mu", VPA_K_NUM, 0, "1", 0, INF, 0, NULL, NULL, "1",
	 "A1's a_mu for the A1 column of the comparison",
	 VPA_AT(struct a2_opts, alpha_mu), VPA_MARK(struct a2_opts, alpha_mu_at)},
	{"alpha_sigma", VPA_K_NUM, 0, "10", 0, INF, 0, NULL, NULL, "10",
	 "A1's a_sigma for the A1 column of the comparison",
	 VPA_AT(struct a2_opts, alpha_sigma), VPA_MARK(struct a2_opts, alpha_sigma_at)},
	{"ci", VPA_K_NUM, 0, "0", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.95",
	 "bootstrap confidence level (models resampled); 0 = none",
	 VPA_AT(struct a2_opts, ci), VPA_MARK(struct a2_opts, ci_at)},
	{"reps", VPA_K_INT, 0, "1000", 10, 1000000, 0, NULL, NULL, "1000", "bootstrap replicates",
	 VPA_AT(struct a2_opts, reps), VPA_MARK(struct a2_opts, reps_at)},
	{"audit_alpha", VPA_K_NUM, 0, "0.05", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL,
	 "0.01",
	 "a target with local DP: the level of the DP audit's lower bound (Clopper-Pearson on "
	 "A2's scores of disjoint model pairs, Bonferroni over the thresholds swept and the "
	 "layers audited), as the A1 attack's",
	 VPA_AT(struct a2_opts, audit_alpha), VPA_MARK(struct a2_opts, audit_alpha_at)},
	{NULL},
};
static const struct vpa_schema schema = {"attack a2_footprint", keys, sizeof(struct a2_opts)};

static const char *const target_kinds[] = {"fl_acoustic_models", NULL};
static const char *const metrics[] = {
	"eer", "eer_sweep", "cllr", "cllr_min", "linkability", "min_dcf", "zebra.dece",
	"zebra.log10_lr_worst", "n_target", "n_nontarget", "eer_threshold", "tied_fraction",
	"linkability_hist", "eer_flipped", "cllr_min_flipped", "min_dcf_flipped",
	"a1_eer", "train_accuracy", "train_loss_first", "train_loss_last", "epsilon",
	"epsilon_rdp", "epsilon_per_release", "epsilon_per_release_replace", "epsilon_lower_bound",
	NULL,
};

/*
 * The DP audit of one layer's A2 record (issue 28), as A1's (attacks/a1.c
 * dp_audit): with local DP, Clopper-Pearson over the threshold sweep of A2's
 * PLDA scores on the target trials ("in": two models of one speaker) and the
 * non-target trials ("out"), each set thinned greedily in the trials' order so
 * that no model appears twice in it (released with independent noise and
 * fine-tuned on disjoint data, disjoint models give independent trials), at
 * level level_alpha (alpha split over the layers), against the per-release
 * epsilon under replacement.  The PLDA and the network are trained on Part-1
 * models only, so a Part-2 pair's score is a function of the two released
 * models and of public data.
 */
static void a2_dp_audit(const struct vpa_flam *t, const struct vpa_trials *tr, double level_alpha,
			double alpha, struct vpa_json *mj)
{
	if (t->dp_mech != VPA_FLAM_DP_LOCAL || !isfinite(t->dp_epsilon_replace))
		return;
	unsigned char *used = xcalloc(t->n_models ? t->n_models : 1, 1);
	double *in = xmalloc((tr->n_tar + 1) * sizeof(double));
	double *out = xmalloc((tr->n_non + 1) * sizeof(double));
	size_t ni = 0, no = 0;
	for (int c = 0; c < 2; c++) {
		memset(used, 0, t->n_models ? t->n_models : 1);
		size_t n = c ? tr->n_non : tr->n_tar;
		for (size_t i = 0; i < n; i++) {
			uint32_t a = c ? tr->non_e[i] : tr->tar_e[i], b = c ? tr->non_t[i] : tr->tar_t[i];
			if (used[a] || used[b])
				continue;
			used[a] = used[b] = 1;
			if (c)
				out[no++] = tr->non[i];
			else
				in[ni++] = tr->tar[i];
		}
	}
	free(used);
	if (ni == 0 || no == 0) {
		struct vpa_json *au = vpa_json_obj();
		vpa_json_set_str(au, "scope", "covered");
		vpa_json_set_str(au, "note", "no disjoint pair of models in one of the sets: nothing "
					     "to audit (no bound)");
		vpa_json_set(mj, "dp_audit", au);
	} else {
		vpa_flam_audit_cp(t, in, ni, out, no, level_alpha, alpha,
				  "in: a Part-2 model scored by A2's PLDA against another model of "
				  "its speaker, out: against a model of another speaker, each model "
				  "at most once per set so the trials are independent; "
				  "Clopper-Pearson bounds with Bonferroni over the thresholds swept "
				  "and the layers audited; a bound above the claim proves a defect, "
				  "one below it does not prove the claim",
				  mj);
	}
	free(in);
	free(out);
}

/*
 * The key check made every item of `layers` a value; a quoted one ("2") was
 * refused here when the check read nodes, the options do not say whether a
 * value was quoted: it is read as the number it holds.
 */
static int validate(const struct vpa_kind_ctx *ctx, const void *opts, const void *target_opts,
		    struct vpa_err *err)
{
	const struct a2_opts *o = opts;
	const struct vpa_strs *l = &o->layers;
	(void)target_opts;
	if (l->given && l->n == 0) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, o->layers_at);
		return vpa_fail(err, VPA_EINPUT, &loc, "'layers' is empty: list hidden layers "
				"(1-based) or leave the key out for all");
	}
	for (size_t i = 0; i < l->n; i++) {
		const char *v = l->v[i];
		char *end;
		long x = strtol(v, &end, 10);
		if (!l->plain[i] || *end || end == v || x < 1 || x > 4096) {
			struct vpa_loc loc = vpa_mark_loc(ctx->file, l->marks[i]);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"a layer must be an integer in [1, 4096], got '%s'", v);
		}
	}
	return 0;
}

static const int C5[] = {-2, -1, 0, 1, 2}, C3W2[] = {-2, 0, 2}, C3W3[] = {-3, 0, 3};
enum { EMB_LAYER = 11 };

static struct vpa_nn *make_xvector(size_t in, size_t hid, size_t emb, size_t n_spk)
{
	struct vpa_nn *net = vpa_nn_new(in);
	vpa_nn_add_tdnn(net, hid, C5, 5);
	vpa_nn_add_simple(net, VPA_NN_RELU);
	vpa_nn_add_tdnn(net, hid, C3W2, 3);
	vpa_nn_add_simple(net, VPA_NN_RELU);
	vpa_nn_add_tdnn(net, hid, C3W3, 3);
	vpa_nn_add_simple(net, VPA_NN_RELU);
	vpa_nn_add_dense(net, hid);
	vpa_nn_add_simple(net, VPA_NN_RELU);
	vpa_nn_add_dense(net, 3 * hid);
	vpa_nn_add_simple(net, VPA_NN_RELU);
	vpa_nn_add_simple(net, VPA_NN_STATSPOOL);
	vpa_nn_add_dense(net, emb); /* EMB_LAYER: the embedding ("segment6" of Kaldi) */
	vpa_nn_add_simple(net, VPA_NN_RELU);
	vpa_nn_add_dense(net, n_spk);
	return net;
}

/* The Delta sequences of one model on one layer, standardised: (N, d).
 * locks[m] (NULL: none) serialises the model's forward pass (its network's
 * buffers) between layers run in parallel. */
static int model_delta(struct vpa_flam *t, size_t m, const float *g, size_t h,
		       const double *mean, const double *isd, float *out, double *mu, double *sd,
		       pthread_mutex_t *locks, struct vpa_err *err)
{
	float **a;
	if (locks)
		pthread_mutex_lock(&locks[m]);
	int rc = vpa_flam_activations(t, m, &a, err);
	if (locks)
		pthread_mutex_unlock(&locks[m]);
	if (rc)
		return rc;
	size_t N = t->off[t->n_utt], d = t->dim[h];
	if (mu) /* A1's statistics, computed exactly as attacks/a1.c does */
		vpa_footprint_stats(a[h], g, N, d, mu, sd);
	for (size_t i = 0; i < N * d; i++)
		out[i] = a[h][i] - g[i];
	if (mean)
		for (size_t i = 0; i < N; i++)
			for (size_t j = 0; j < d; j++)
				out[i * d + j] = (float)((out[i * d + j] - mean[j]) * isd[j]);
	vpa_flam_acts_free(a, t->n_layers);
	return 0;
}

/* Embeddings (n_utt, emb) of one model's Delta sequences (N, d) in EVAL mode. */
static int embed(struct vpa_nn *net, const struct vpa_flam *t, const float *x, double *e,
		 struct vpa_err *err)
{
	struct vpa_nn_batch b = {t->n_utt, t->off, x, NULL};
	int rc = vpa_nn_forward(net, &b, VPA_NN_EVAL, err);
	if (rc)
		return rc;
	size_t rows, dim;
	const float *y = vpa_nn_activation(net, EMB_LAYER, &rows, &dim);
	for (size_t i = 0; i < rows * dim; i++)
		e[i] = y[i];
	return 0;
}

static double eer_of(const double *tar, size_t nt, const double *non, size_t nn)
{
	double *a = xmalloc(nt * sizeof(double)), *b = xmalloc(nn * sizeof(double));
	memcpy(a, tar, nt * sizeof(double));
	memcpy(b, non, nn * sizeof(double));
	vpa_sort_scores(a, NULL, nt);
	vpa_sort_scores(b, NULL, nn);
	struct vpa_scores s = {a, nt, b, nn, NULL, NULL};
	struct vpa_metrics_opts o;
	struct vpa_metrics m;
	struct vpa_err e;
	vpa_metrics_opts_init(&o);
	vpa_err_init(&e);
	double r = vpa_metrics_all(&s, &o, &m, &e) ? NAN : m.eer;
	free(a);
	free(b);
	return r;
}

struct layer_res {
	double loss_first, loss_last, acc, chance, a1_eer;
};

/*
 * A2 on hidden layer h (0-based): trials scores into tr (pairs tp/np among
 * Part-2 models).  Per-layer numbers into lr.
 */
static int a2_layer(struct vpa_run_ctx *ctx, const struct a2_opts *ao, struct vpa_flam *t,
		    const float *g, size_t h, const uint32_t *tp, size_t nt, const uint32_t *np,
		    size_t nn, pthread_mutex_t *locks, struct vpa_trials *tr, struct layer_res *lr,
		    struct vpa_err *err)
{
	size_t N = t->off[t->n_utt], d = t->dim[h], U = t->n_utt;
	size_t hid = (size_t)ao->hidden;
	size_t edim = (size_t)ao->embedding_dim;
	size_t epochs = (size_t)ao->epochs;
	size_t batch = (size_t)ao->batch;
	double lrate = ao->lr;
	int em = (int)ao->em_iters;
	double a_mu = ao->alpha_mu;
	double a_sg = ao->alpha_sigma;
	int rc = 0;
	/* Part-1 models and their speakers (renumbered 0..K-1) */
	size_t n1 = 0, K = 0;
	size_t *p1 = xmalloc((t->n_models ? t->n_models : 1) * sizeof(size_t));
	uint32_t *lab = xmalloc((t->n_models ? t->n_models : 1) * sizeof(uint32_t));
	uint32_t *map = xmalloc((t->n_spk ? t->n_spk : 1) * sizeof(uint32_t));
	for (size_t s = 0; s < t->n_spk; s++)
		map[s] = UINT32_MAX;
	for (size_t m = 0; m < t->n_models; m++)
		if (t->models[m].part == VPA_FLAM_PART1) {
			uint32_t s = t->models[m].spk;
			if (map[s] == UINT32_MAX)
				map[s] = (uint32_t)K++;
			lab[n1] = map[s];
			p1[n1++] = m;
		}
	float *X = NULL, *bx = NULL;
	double *mean = NULL, *isd = NULL, *E1 = NULL, *E2 = NULL, *tmp = NULL, *tv = NULL;
	double **mu2 = NULL, **sd2 = NULL;
	uint32_t *elab = NULL, *seq_lab = NULL;
	size_t *perm = NULL, *boff = NULL;
	struct vpa_nn *net = NULL;
	struct vpa_plda *pl = NULL;
	struct vpa_optim o;
	memset(&o, 0, sizeof(o));
	if (K < 2) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "A2 needs Part-1 models of at least two speakers, the target has %zu",
			      K);
		goto out;
	}
	/* 1. Part-1 Delta sequences and their standardisation */
	X = xmalloc(xmul(xmul(n1, N), d * sizeof(float)));
	for (size_t i = 0; i < n1 && !rc; i++)
		rc = model_delta(t, p1[i], g, h, NULL, NULL, X + i * N * d, NULL, NULL, locks,
				 err);
	if (rc)
		goto out;
	mean = xcalloc(d, sizeof(double));
	isd = xcalloc(d, sizeof(double));
	for (size_t i = 0; i < n1 * N; i++)
		for (size_t j = 0; j < d; j++)
			mean[j] += X[i * d + j];
	for (size_t j = 0; j < d; j++)
		mean[j] /= (double)(n1 * N);
	for (size_t i = 0; i < n1 * N; i++)
		for (size_t j = 0; j < d; j++) {
			double e = X[i * d + j] - mean[j];
			isd[j] += e * e;
		}
	for (size_t j = 0; j < d; j++) {
		double sd = sqrt(isd[j] / (double)(n1 * N));
		isd[j] = sd > 1e-12 ? 1 / sd : 0; /* a dead unit stays 0 */
	}
	for (size_t i = 0; i < n1 * N; i++)
		for (size_t j = 0; j < d; j++)
			X[i * d + j] = (float)((X[i * d + j] - mean[j]) * isd[j]);

	/* 2. the x-vector network, trained on (model, utterance) sequences */
	char nm[64];
	snprintf(nm, sizeof(nm), "a2/layer%zu", h + 1);
	struct vpa_rng r;
	vpa_rng_split(&r, ctx->seed, nm);
	net = make_xvector(d, hid, edim, K);
	vpa_nn_init_params(net, vpa_rng_u64(&r));
	size_t npar;
	vpa_nn_params(net, &npar);
	vpa_optim_init_adam(&o, npar, lrate, 0.9, 0.999, 1e-8, 0);
	size_t n_ex = n1 * U;
	perm = xmalloc(n_ex * sizeof(size_t));
	for (size_t i = 0; i < n_ex; i++)
		perm[i] = i;
	size_t maxT = 0;
	for (size_t u = 0; u < U; u++)
		if (t->off[u + 1] - t->off[u] > maxT)
			maxT = t->off[u + 1] - t->off[u];
	bx = xmalloc(xmul(batch * maxT, d * sizeof(float)));
	boff = xmalloc((batch + 1) * sizeof(size_t));
	seq_lab = xmalloc(batch * sizeof(uint32_t));
	lr->loss_first = lr->loss_last = NAN;
	for (size_t ep = 0; ep < epochs && !rc; ep++) {
		for (size_t i = n_ex; i > 1; i--) {
			size_t j = vpa_rng_below(&r, i), s = perm[i - 1];
			perm[i - 1] = perm[j];
			perm[j] = s;
		}
		double sum = 0;
		size_t nb = 0;
		for (size_t b0 = 0; b0 < n_ex && !rc; b0 += batch) {
			size_t k = n_ex - b0 < batch ? n_ex - b0 : batch;
			boff[0] = 0;
			for (size_t i = 0; i < k; i++) {
				size_t ex = perm[b0 + i], m = ex / U, u = ex % U;
				size_t T = t->off[u + 1] - t->off[u];
				memcpy(bx + boff[i] * d, X + (m * N + t->off[u]) * d,
				       T * d * sizeof(float));
				boff[i + 1] = boff[i] + T;
				seq_lab[i] = lab[m];
			}
			struct vpa_nn_batch bt = {k, boff, bx, NULL};
			struct vpa_nn_targets tg;
			vpa_nn_targets_init(&tg);
			tg.labels = seq_lab;
			tg.per_sequence = 1;
			double loss;
			rc = vpa_nn_train_step(net, &o, &bt, &tg, 0, &loss, err);
			sum += loss;
			nb++;
		}
		if (nb && ep == 0)
			lr->loss_first = sum / (double)nb;
		if (nb)
			lr->loss_last = sum / (double)nb;
	}
	if (rc)
		goto out;

	/* 3. accuracy on the seen (Part-1) sequences and their embeddings */
	E1 = xmalloc(xmul(n_ex, edim * sizeof(double)));
	elab = xmalloc(n_ex * sizeof(uint32_t));
	size_t ok = 0;
	for (size_t i = 0; i < n1 && !rc; i++) {
		struct vpa_nn_batch b = {U, t->off, X + i * N * d, NULL};
		rc = vpa_nn_forward(net, &b, VPA_NN_EVAL, err);
		if (rc)
			break;
		size_t R, C;
		const float *z = vpa_nn_output(net, &R, &C);
		for (size_t u = 0; u < R; u++) {
			size_t best = 0;
			for (size_t c = 1; c < C; c++)
				if (z[u * C + c] > z[u * C + best])
					best = c;
			ok += best == lab[i];
		}
		size_t rows, dim;
		const float *y = vpa_nn_activation(net, EMB_LAYER, &rows, &dim);
		for (size_t k = 0; k < rows * dim; k++)
			E1[i * U * edim + k] = y[k];
		for (size_t u = 0; u < U; u++)
			elab[i * U + u] = lab[i];
	}
	if (rc)
		goto out;
	lr->acc = (double)ok / (double)n_ex;
	lr->chance = 1.0 / (double)K;
	free(X);
	X = NULL;

	/* 4. PLDA on the Part-1 utterance embeddings (centred, length-normalised) */
	double *cm = xmalloc(edim * sizeof(double));
	vpa_rows_mean(E1, n_ex, edim, cm);
	vpa_rows_center(E1, n_ex, edim, cm);
	vpa_rows_length_norm(E1, n_ex, edim);
	pl = vpa_plda_train(E1, n_ex, edim, elab, K, em, NULL, err);
	if (!pl) {
		free(cm);
		rc = err->status ? err->status : VPA_ENUMERIC;
		goto out;
	}

	/* 5. Part-2 model embeddings (average over the Indicator utterances) and A1 stats */
	E2 = xcalloc(xmul(t->n_models, edim), sizeof(double));
	tmp = xmalloc(xmul(U, edim * sizeof(double)));
	mu2 = xcalloc(t->n_models, sizeof(double *));
	sd2 = xcalloc(t->n_models, sizeof(double *));
	unsigned char *use = xcalloc(t->n_models, 1);
	for (size_t i = 0; i < nt; i++)
		use[tp[2 * i]] = use[tp[2 * i + 1]] = 1;
	for (size_t i = 0; i < nn; i++)
		use[np[2 * i]] = use[np[2 * i + 1]] = 1;
	float *Xm = xmalloc(xmul(N, d * sizeof(float)));
	for (size_t m = 0; m < t->n_models && !rc; m++) {
		if (!use[m])
			continue;
		mu2[m] = xmalloc(d * sizeof(double));
		sd2[m] = xmalloc(d * sizeof(double));
		rc = model_delta(t, m, g, h, NULL, NULL, Xm, mu2[m], sd2[m], locks, err);
		if (rc)
			break;
		for (size_t i = 0; i < N; i++)
			for (size_t j = 0; j < d; j++)
				Xm[i * d + j] = (float)((Xm[i * d + j] - mean[j]) * isd[j]);
		rc = embed(net, t, Xm, tmp, err);
		for (size_t u = 0; u < U && !rc; u++)
			for (size_t k = 0; k < edim; k++)
				E2[m * edim + k] += tmp[u * edim + k] / (double)U;
	}
	free(Xm);
	free(use);
	if (rc) {
		free(cm);
		goto out;
	}
	vpa_rows_center(E2, t->n_models, edim, cm);
	vpa_rows_length_norm(E2, t->n_models, edim);
	free(cm);
	tv = xmalloc(xmul(t->n_models, edim * sizeof(double)));
	vpa_plda_transform_rows(pl, E2, t->n_models, NULL, VPA_PLDA_NORM_KALDI, tv);

	/* 6. trials: PLDA LLR (A2) and -rho (A1, for the comparison) */
	vpa_trials_init(tr);
	tr->n_tar = nt;
	tr->n_non = nn;
	tr->tar = xmalloc(nt * sizeof(double));
	tr->non = xmalloc(nn * sizeof(double));
	tr->tar_e = xmalloc(nt * sizeof(uint32_t));
	tr->tar_t = xmalloc(nt * sizeof(uint32_t));
	tr->non_e = xmalloc(nn * sizeof(uint32_t));
	tr->non_t = xmalloc(nn * sizeof(uint32_t));
	tr->n_ids_e = tr->n_ids_t = t->n_models;
	tr->ids_e = xcalloc(t->n_models, sizeof(char *));
	tr->ids_t = xcalloc(t->n_models, sizeof(char *));
	for (size_t i = 0; i < t->n_models; i++) {
		tr->ids_e[i] = xstrdup(t->models[i].id);
		tr->ids_t[i] = xstrdup(t->models[i].id);
	}
	double *a1t = xmalloc(nt * sizeof(double)), *a1n = xmalloc(nn * sizeof(double));
	for (int c = 0; c < 2; c++) {
		const uint32_t *p = c ? np : tp;
		size_t n = c ? nn : nt;
		for (size_t i = 0; i < n; i++) {
			uint32_t a = p[2 * i], b = p[2 * i + 1];
			double s = vpa_plda_llr(pl, tv + a * edim, 1, tv + b * edim);
			double r1 = -vpa_footprint_rho(mu2[a], sd2[a], mu2[b], sd2[b], d, a_mu, a_sg);
			(c ? tr->non : tr->tar)[i] = s;
			(c ? tr->non_e : tr->tar_e)[i] = a;
			(c ? tr->non_t : tr->tar_t)[i] = b;
			(c ? a1n : a1t)[i] = r1;
		}
	}
	lr->a1_eer = (a_mu > 0 || a_sg > 0) ? eer_of(a1t, nt, a1n, nn) : NAN;
	free(a1t);
	free(a1n);
out:
	if (mu2)
		for (size_t m = 0; m < t->n_models; m++) {
			free(mu2[m]);
			free(sd2[m]);
		}
	free(mu2);
	free(sd2);
	vpa_optim_release(&o);
	vpa_plda_free(pl);
	vpa_nn_free(net);
	free(X);
	free(bx);
	free(boff);
	free(seq_lab);
	free(perm);
	free(mean);
	free(isd);
	free(E1);
	free(E2);
	free(tmp);
	free(tv);
	free(elab);
	free(p1);
	free(lab);
	free(map);
	return rc;
}

static struct vpa_json *num_arr(const double *x, size_t n)
{
	struct vpa_json *a = vpa_json_arr();
	for (size_t i = 0; i < n; i++)
		vpa_json_push(a, vpa_json_num(x[i]));
	return a;
}

/* One layer's A2 (a job of vpa_dist_jobs) and what every layer shares. */
struct ljob {
	size_t h;
	struct vpa_trials tr;
	struct layer_res res;
	int rc;
	struct vpa_err err;
};

struct lshared {
	struct vpa_run_ctx *ctx;
	const struct a2_opts *o;
	struct vpa_flam *t;
	float **g;
	const uint32_t *tp, *np;
	size_t nt, nn;
	struct ljob *jobs;
	pthread_mutex_t *locks; /* (n_models) one per personalised model, or NULL */
};

static int layer_job(void *arg, size_t k, struct vpa_err *e)
{
	struct lshared *p = arg;
	struct ljob *j = &p->jobs[k];
	j->rc = a2_layer(p->ctx, p->o, p->t, p->g[j->h], j->h, p->tp, p->nt, p->np, p->nn,
			 p->locks, &j->tr, &j->res, e);
	return j->rc;
}

/* A layer's output travels as its score set and its five numbers (base/dist.c). */
static void layer_pack(void *arg, size_t k, struct vpa_buf *b)
{
	struct ljob *j = &((struct lshared *)arg)->jobs[k];
	vpa_pack_trials(b, &j->tr);
	vpa_pack_f64s(b, (const double *)&j->res, sizeof(j->res) / sizeof(double));
}

static int layer_unpack(void *arg, size_t k, const unsigned char *q, size_t len)
{
	struct ljob *j = &((struct lshared *)arg)->jobs[k];
	const unsigned char *end = q + len;
	return vpa_unpack_trials(&q, end, &j->tr) ||
	       vpa_unpack_f64s(&q, end, (double *)&j->res, sizeof(j->res) / sizeof(double)) ||
	       q != end;
}

static int run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
	       const struct vpa_target *tg, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct a2_opts *o = opts;
	struct vpa_flam *t = tg->data;
	const struct vpa_strs *l = o->layers.given ? &o->layers : NULL;
	size_t nl = l ? l->n : t->n_layers;
	size_t *lay = xmalloc((nl ? nl : 1) * sizeof(size_t));
	uint32_t *tp = NULL, *np = NULL;
	size_t nt = 0, nn = 0;
	float **g = NULL;
	double *eer2 = xmalloc((nl ? nl : 1) * sizeof(double));
	double *eer1 = xmalloc((nl ? nl : 1) * sizeof(double));
	double *xs = xmalloc((nl ? nl : 1) * sizeof(double));
	struct vpa_json *det = vpa_json_arr();
	struct ljob *jobs = NULL;
	int rc = 0;
	struct vpa_eval_opts eo;
	vpa_eval_opts_init(&eo);
	eo.ci_level = o->ci;
	eo.ci_reps = (size_t)o->reps;
	eo.seed = ctx->seed;
	for (size_t i = 0; i < nl && !rc; i++) {
		if (!l) {
			lay[i] = i;
			continue;
		}
		long x = strtol(l->v[i], NULL, 10);
		if ((size_t)x > t->n_layers) {
			struct vpa_loc loc = vpa_mark_loc(ctx->file, l->marks[i]);
			rc = vpa_fail(err, VPA_EINPUT, &loc, "layer %ld: the target has %zu hidden "
				      "layer%s", x, t->n_layers, t->n_layers == 1 ? "" : "s");
		}
		lay[i] = (size_t)(x - 1);
	}
	if (rc)
		goto out;
	vpa_flam_pairs(t, VPA_FLAM_PART2, (size_t)o->n_nontarget,
		       ctx->seed, &tp, &nt, &np, &nn);
	if (nt == 0 || nn == 0) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "target '%s': the part2 models give no %s trial (a target trial needs "
			      "a speaker with two models, a non-target one two speakers)", tg->id,
			      nt == 0 ? "target" : "non-target");
		goto out;
	}
	if ((rc = vpa_flam_activations(t, t->n_models, &g, err)))
		goto out;
	/* the layers are independent (each its own seed): shared out to the
	 * run's threads, then recorded in order; the first failing layer's
	 * error in that order */
	jobs = xcalloc(nl ? nl : 1, sizeof(*jobs));
	for (size_t k = 0; k < nl; k++) {
		jobs[k].h = lay[k];
		jobs[k].res = (struct layer_res){NAN, NAN, NAN, NAN, NAN};
		vpa_trials_init(&jobs[k].tr);
		vpa_err_init(&jobs[k].err);
	}
	{
		pthread_mutex_t *locks = NULL; /* needed when two layers run at once */
		if (ctx->threads > 1 && nl > 1) {
			locks = xmalloc(xmul(t->n_models + 1, sizeof(*locks)));
			for (size_t m = 0; m < t->n_models; m++)
				pthread_mutex_init(&locks[m], NULL);
		}
		struct lshared p = {ctx, o, t, g, tp, np, nt, nn, jobs, locks};
		rc = vpa_dist_jobs(nl, ctx->threads, layer_job, layer_pack, layer_unpack, &p,
				   "a2 layers", vpa_la_run_workers, err);
		for (size_t m = 0; locks && m < t->n_models; m++)
			pthread_mutex_destroy(&locks[m]);
		free(locks);
	}
	for (size_t k = 0; k < nl && !rc; k++) {
		size_t h = lay[k];
		struct vpa_trials *trp = &jobs[k].tr;
		struct layer_res res = jobs[k].res;
		{
			size_t nr = out->records->n, nd = det->n;
			struct vpa_attack_out tmp = {out->records, NULL};
			rc = vpa_record_from_scores(ctx, id, NULL, (long)(h + 1), trp, &eo, &tmp,
						    det, err);
			if (!rc) {
				struct vpa_json *mj = vpa_json_get(out->records->items[nr], "metrics");
				eer2[k] = vpa_json_get_num(mj, "eer", NAN);
				eer1[k] = res.a1_eer;
				vpa_json_set_num(mj, "a1_eer", res.a1_eer);
				vpa_json_set_num(mj, "train_loss_first", res.loss_first);
				vpa_json_set_num(mj, "train_loss_last", res.loss_last);
				vpa_json_set_num(mj, "train_accuracy", res.acc);
				vpa_json_set_num(mj, "chance_accuracy", res.chance);
				vpa_json_set_num(mj, "layer_dim", (double)t->dim[h]);
				/* the DP claim beside the EER (a target without DP: as before) */
				if (t->dp_mech != VPA_FLAM_DP_NONE)
					vpa_flam_dp_metrics(t, out->records->items[nr], mj);
				a2_dp_audit(t, trp, o->audit_alpha / (double)nl, o->audit_alpha, mj);
				if (t->dp_mech == VPA_FLAM_DP_DPSGD) { /* as A1's (attacks/a1.c) */
					struct vpa_json *au = vpa_json_obj();
					vpa_json_set_str(au, "scope", "outside");
					vpa_json_set_str(au, "why",
							 "DP-SGD protects one adaptation example of a "
							 "model; A2 tells whether two models were "
							 "fine-tuned on the same speaker's whole data, "
							 "which example-level DP does not bound");
					vpa_json_set(mj, "dp_audit", au);
				}
				if (det->n > nd) {
					char nm[32];
					snprintf(nm, sizeof(nm), "layer %zu", h + 1);
					vpa_json_set_str(det->items[nd], "name", nm);
				}
			}
		}
		xs[k] = (double)(h + 1);
	}
	if (rc)
		goto out;
	{
		/* Table 2 of the paper: A1 against A2, EER per layer */
		struct vpa_json *fig = vpa_json_obj(), *series = vpa_json_arr();
		char buf[512];
		snprintf(buf, sizeof(buf), "%s-a1-vs-a2", id);
		vpa_json_set_str(fig, "type", "lines");
		vpa_json_set_str(fig, "id", buf);
		snprintf(buf, sizeof(buf), "A1 (mu+sigma) against A2: EER per hidden layer (%s on %s, "
			 "Part-2 trials)", id, tg->id);
		vpa_json_set_str(fig, "title", buf);
		vpa_json_set_str(fig, "xlabel", "hidden layer");
		vpa_json_set_str(fig, "ylabel", "EER");
		vpa_json_set(fig, "logx", vpa_json_bool(0));
		struct vpa_json *s1 = vpa_json_obj(), *s2 = vpa_json_obj();
		vpa_json_set_str(s1, "name", "A1");
		vpa_json_set(s1, "x", num_arr(xs, nl));
		vpa_json_set(s1, "y", num_arr(eer1, nl));
		vpa_json_set_str(s2, "name", "A2");
		vpa_json_set(s2, "x", num_arr(xs, nl));
		vpa_json_set(s2, "y", num_arr(eer2, nl));
		vpa_json_push(series, s1);
		vpa_json_push(series, s2);
		vpa_json_set(fig, "series", series);
		vpa_json_push(out->figures, fig);
		snprintf(buf, sizeof(buf), "DET: %s (A2, PLDA) on %s, per hidden layer", id, tg->id);
		char fid[256];
		snprintf(fid, sizeof(fid), "%s-det", id);
		vpa_json_push(out->figures, vpa_det_figure(fid, buf, det));
		det = NULL;
	}
out:
	for (size_t k = 0; jobs && k < nl; k++)
		vpa_trials_release(&jobs[k].tr);
	free(jobs);
	vpa_json_free(det);
	vpa_flam_acts_free(g, t->n_layers);
	free(lay);
	free(tp);
	free(np);
	free(eer1);
	free(eer2);
	free(xs);
	return rc;
}

static char *title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: A2 footprint attack (x-vector on Delta sequences, PLDA) on '%s'", id,
		       target_id);
	return b.data;
}

const struct vpa_attack_kind vpa_attack_a2_footprint = {
	.name = "a2_footprint",
	.schema = &schema,
	.target_kinds = target_kinds,
	.metrics = metrics,
	.has_layers = 1,
	.doc = "Attack A2 of Tomashenko et al. (ICASSP 2022, 3.2.2): per chosen hidden layer, an "
	       "x-vector-like network (TDNN layers, statistics pooling after the fifth, embedding, "
	       "softmax over Part-1 speakers) trained on the Delta sequences of the Part-1 models "
	       "to predict their speaker; a Part-2 model's embedding is averaged over the "
	       "Indicator utterances and pairs are scored with a PLDA trained on Part-1 "
	       "embeddings.  Trials as A1 on Part-2.  Records per layer (sub null) also carry "
	       "`a1_eer` (A1 on the same trials, the paper's Table 2), the training losses of the "
	       "first and last epochs and the accuracy on the seen Part-1 sequences.",
	.validate = validate,
	.subs = NULL,
	.run = run,
	.title = title,
};
