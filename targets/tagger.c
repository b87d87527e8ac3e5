/*
 * targets/tagger.c - target kind `tagger` (contracts in targets/tagger.h):
 * its keys and checks, the training settings from its options, the data
 * (load, label, split by documents, vocabulary), the baseline, and the
 * build (train and evaluate, or read imported confidences).  The network
 * and its training are in targets/tagger_net.c, the tag set and the
 * confidence TSV in targets/tagger_tags.c.
 *
 * Why a split by documents: sentences of one Brown document share names and
 * topics, so a sentence-level split would put near-copies on both sides and
 * flatter the held-out accuracy.
 */
#include "targets/tagger.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- data ------------------------------------------------------------------ */

void vpa_tagger_data_release(struct vpa_tagger_data *d)
{
	vpa_corpus_release(&d->corpus);
	free(d->cls);
	free(d->train);
	free(d->test);
	vpa_vocab_release(&d->vocab);
	memset(d, 0, sizeof(*d));
}

/* ---- the target kind -------------------------------------------------------- */

static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "train", -INFINITY, INFINITY, 0, "train|import", NULL, "train",
	 "`train`: train a BiLSTM tagger on a Brown-format corpus; `import`: read a user's "
	 "tagger confidences (`confidences`, `canary`)",
	 VPA_AT(struct vpa_tagger_opts, source), VPA_MARK(struct vpa_tagger_opts, source_at)},
	{"corpus", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "../data/brown",
	 "train: a folder of Brown files (ca01 .. cr09, as fetched by `sh .ci/deps`) or one file "
	 "in the Brown `word/tag` format",
	 VPA_AT(struct vpa_tagger_opts, corpus), VPA_MARK(struct vpa_tagger_opts, corpus_at)},
	{"max_docs", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "100",
	 "train: use the first N documents of the folder (0 = all)",
	 VPA_AT(struct vpa_tagger_opts, max_docs), VPA_MARK(struct vpa_tagger_opts, max_docs_at)},
	{"test_fraction", VPA_K_NUM, 0, "0.1", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL,
	 "0.1", "train: fraction of the documents held out (seeded draw) for the accuracy",
	 VPA_AT(struct vpa_tagger_opts, test_fraction), VPA_MARK(struct vpa_tagger_opts, test_fraction_at)},
	{"lower", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "train: lowercase the words",
	 VPA_AT(struct vpa_tagger_opts, lower), VPA_MARK(struct vpa_tagger_opts, lower_at)},
	{"vocab_size", VPA_K_INT, 0, "5000", 1, 1000000, 0, NULL, NULL, "5000",
	 "train: the most frequent training words kept; the others are <unk>",
	 VPA_AT(struct vpa_tagger_opts, vocab_size), VPA_MARK(struct vpa_tagger_opts, vocab_size_at)},
	{"embedding", VPA_K_INT, 0, "64", 1, 4096, 0, NULL, NULL, "64", "train: embedding size",
	 VPA_AT(struct vpa_tagger_opts, embedding), VPA_MARK(struct vpa_tagger_opts, embedding_at)},
	{"hidden", VPA_K_INT, 0, "64", 1, 4096, 0, NULL, NULL, "64",
	 "train: BiLSTM hidden size per direction",
	 VPA_AT(struct vpa_tagger_opts, hidden), VPA_MARK(struct vpa_tagger_opts, hidden_at)},
	{"dropout", VPA_K_NUM, 0, "0.2", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.2",
	 "train: dropout after the embedding and after the BiLSTM",
	 VPA_AT(struct vpa_tagger_opts, dropout), VPA_MARK(struct vpa_tagger_opts, dropout_at)},
	{"weight_decay", VPA_K_NUM, 0, "0", 0, INFINITY, 0, NULL, NULL, "1e-6",
	 "train: L2 weight decay",
	 VPA_AT(struct vpa_tagger_opts, weight_decay), VPA_MARK(struct vpa_tagger_opts, weight_decay_at)},
	{"optimizer", VPA_K_ENUM, 0, "adam", -INFINITY, INFINITY, 0, "adam|sgd", NULL, "adam",
	 "train: Adam, or SGD with momentum 0.9",
	 VPA_AT(struct vpa_tagger_opts, optimizer), VPA_MARK(struct vpa_tagger_opts, optimizer_at)},
	{"lr", VPA_K_NUM, 0, "0.002", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.002",
	 "train: learning rate",
	 VPA_AT(struct vpa_tagger_opts, lr), VPA_MARK(struct vpa_tagger_opts, lr_at)},
	{"batch", VPA_K_INT, 0, "32", 1, 100000, 0, NULL, NULL, "32",
	 "train: sentences per step (with DP: the expected lot size, q = batch / N)",
	 VPA_AT(struct vpa_tagger_opts, batch), VPA_MARK(struct vpa_tagger_opts, batch_at)},
	{"epochs", VPA_K_INT, 0, "3", 1, 10000, 0, NULL, NULL, "3", "train: passes over the data",
	 VPA_AT(struct vpa_tagger_opts, epochs), VPA_MARK(struct vpa_tagger_opts, epochs_at)},
	{"dp", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "train: DP-SGD (Poisson sampling, per-example clipping, Gaussian noise)",
	 VPA_AT(struct vpa_tagger_opts, dp), VPA_MARK(struct vpa_tagger_opts, dp_at)},
	{"dp_unit", VPA_K_ENUM, 0, "sentence", -INFINITY, INFINITY, 0, "sentence|user", NULL,
	 "user", "DP-SGD: the privacy unit; `user`: users of `user_sentences` consecutive "
	 "sentences of one document, each user's gradient clipped as a whole and lots sampled "
	 "by user (q = batch / users)",
	 VPA_AT(struct vpa_tagger_opts, dp_unit), VPA_MARK(struct vpa_tagger_opts, dp_unit_at)},
	{"user_sentences", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "4",
	 "DP-SGD with dp_unit user: training sentences per user",
	 VPA_AT(struct vpa_tagger_opts, user_sentences), VPA_MARK(struct vpa_tagger_opts, user_sentences_at)},
	{"clip", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "DP-SGD: per-unit (sentence or user) gradient L2 bound C",
	 VPA_AT(struct vpa_tagger_opts, clip), VPA_MARK(struct vpa_tagger_opts, clip_at)},
	{"noise_multiplier", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1.1",
	 "DP-SGD: noise standard deviation / C (ignored when target_epsilon > 0)",
	 VPA_AT(struct vpa_tagger_opts, noise_multiplier), VPA_MARK(struct vpa_tagger_opts, noise_multiplier_at)},
	{"target_epsilon", VPA_K_NUM, 0, "0", 0, INFINITY, 0, NULL, NULL, "1",
	 "DP-SGD: choose the noise multiplier for this epsilon (0 = use noise_multiplier)",
	 VPA_AT(struct vpa_tagger_opts, target_epsilon), VPA_MARK(struct vpa_tagger_opts, target_epsilon_at)},
	{"delta", VPA_K_NUM, 0, "1e-5", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "1e-5",
	 "DP-SGD: delta of (epsilon, delta)",
	 VPA_AT(struct vpa_tagger_opts, delta), VPA_MARK(struct vpa_tagger_opts, delta_at)},
	{"confidences", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL,
	 "data/tagger-conf.tsv",
	 "import: TSV `word class confidence` for the canary (one line per class) and every "
	 "reference word of each class",
	 VPA_AT(struct vpa_tagger_opts, confidences), VPA_MARK(struct vpa_tagger_opts, confidences_at)},
	{"canary", VPA_K_STR, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "like",
	 "import: the canary word in `confidences`",
	 VPA_AT(struct vpa_tagger_opts, canary), VPA_MARK(struct vpa_tagger_opts, canary_at)},
	{NULL},
};
static const struct vpa_schema schema = {"target tagger", keys, sizeof(struct vpa_tagger_opts)};

/*
 * A key that `source` needs (present) or excludes.  Written or not is told
 * by the key's mark (line 0: not written).  A missing key is blamed on the
 * target's entry (ctx->self), an excluded one at its key.
 */
static int want(const struct vpa_kind_ctx *ctx, const char *key, struct vpa_mark at, int present,
		const char *why, struct vpa_err *err)
{
	if (present && !at.line) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, ctx->self);
		return vpa_fail(err, VPA_EINPUT, &loc, "tagger target needs '%s' %s", key, why);
	}
	if (!present && at.line) {
		struct vpa_loc loc = vpa_mark_key_loc(ctx->file, at);
		return vpa_fail(err, VPA_EINPUT, &loc, "'%s' is not used %s", key, why);
	}
	return 0;
}

/* vpa_check_path_at with this kind's own messages (the path looked for, the
 * Brown hint for the corpus, which may be a folder). */
static int path_ok(const struct vpa_kind_ctx *ctx, const char *rel, struct vpa_mark at, int dir_ok,
		   struct vpa_err *err)
{
	char *path = vpa_path_join(ctx->dir, rel);
	struct vpa_loc loc = vpa_mark_loc(ctx->file, at);
	struct stat st;
	int rc = 0;
	if (stat(path, &st) != 0)
		rc = vpa_fail(err, VPA_EINPUT, &loc, "cannot open '%s' (looked for '%s'): %s%s",
			      rel, path, strerror(errno),
			      dir_ok ? " (the Brown corpus is fetched by `sh .ci/deps`)" : "");
	else if (S_ISDIR(st.st_mode) && !dir_ok)
		rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' is a folder, expected a file", rel);
	free(path);
	return rc;
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, struct vpa_err *err)
{
	const struct vpa_tagger_opts *o = opts;
	int imp = !strcmp(o->source, "import");
	int rc;
	if (imp) {
		if ((rc = want(ctx, "confidences", o->confidences_at, 1, "with source: import", err)) ||
		    (rc = want(ctx, "canary", o->canary_at, 1, "with source: import", err)) ||
		    (rc = want(ctx, "corpus", o->corpus_at, 0, "with source: import", err)))
			return rc;
		return path_ok(ctx, o->confidences, o->confidences_at, 0, err);
	}
	if ((rc = want(ctx, "corpus", o->corpus_at, 1, "with source: train", err)) ||
	    (rc = want(ctx, "confidences", o->confidences_at, 0, "with source: train", err)) ||
	    (rc = want(ctx, "canary", o->canary_at, 0, "with source: train (the d_exposure attack "
			       "chooses the canary)", err)))
		return rc;
	return path_ok(ctx, o->corpus, o->corpus_at, 1, err);
}

void vpa_tagger_cfg_from(const struct vpa_tagger_opts *o, uint64_t seed, struct vpa_tagger_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->embedding = (size_t)o->embedding;
	c->hidden = (size_t)o->hidden;
	c->vocab_size = (size_t)o->vocab_size;
	c->dropout = o->dropout;
	c->weight_decay = o->weight_decay;
	c->lr = o->lr;
	c->adam = !strcmp(o->optimizer, "adam");
	c->batch = (size_t)o->batch;
	c->epochs = (size_t)o->epochs;
	c->dp = o->dp;
	c->dp_user = !strcmp(o->dp_unit, "user");
	c->user_sentences = (size_t)o->user_sentences;
	c->clip = o->clip;
	c->noise_multiplier = o->noise_multiplier;
	c->target_epsilon = o->target_epsilon;
	c->delta = o->delta;
	c->seed = seed;
}

/* Load, label, split (by documents) and build the vocabulary. */
static int prepare(struct vpa_run_ctx *ctx, const struct vpa_tagger_opts *cfg,
		   struct vpa_tagger_data *d, struct vpa_err *err)
{
	memset(d, 0, sizeof(*d));
	vpa_corpus_init(&d->corpus);
	vpa_vocab_init(&d->vocab);
	struct vpa_corpus_opts o;
	vpa_corpus_opts_init(&o);
	o.lower = cfg->lower;
	d->lower = o.lower;
	char *path = vpa_path_join(ctx->dir, cfg->corpus);
	struct stat st;
	int rc = 0;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = vpa_corpus_load_brown(&d->corpus, path, (size_t)cfg->max_docs, &o, err);
	} else {
		char *buf = NULL;
		size_t len = 0;
		if (!(rc = vpa_read_file(path, &buf, &len, err)))
			rc = vpa_corpus_add_brown(&d->corpus, path, buf, len, &o, err);
		free(buf);
	}
	free(path);
	if (rc)
		return rc;
	size_t nd = d->corpus.n_doc;
	if (nd < 2)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"the tagger needs at least 2 documents (training and held-out), "
				"the corpus has %zu", nd);
	d->cls = xmalloc(xmul(d->corpus.n_tok ? d->corpus.n_tok : 1, 1));
	for (size_t i = 0; i < d->corpus.n_tok; i++)
		d->cls[i] = (uint8_t)vpa_tag_coarse(d->corpus.tag[i]);
	/* seeded draw of the held-out documents */
	size_t *perm = xmalloc(xmul(nd, sizeof(size_t)));
	for (size_t i = 0; i < nd; i++)
		perm[i] = i;
	struct vpa_rng r;
	vpa_rng_split(&r, ctx->seed, "tagger/split");
	for (size_t i = nd; i > 1; i--) {
		size_t j = (size_t)vpa_rng_below(&r, i), t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	size_t n_test = (size_t)llround(cfg->test_fraction * (double)nd);
	if (n_test < 1)
		n_test = 1;
	if (n_test > nd - 1)
		n_test = nd - 1;
	char *is_test = xcalloc(nd, 1);
	for (size_t i = 0; i < n_test; i++)
		is_test[perm[i]] = 1;
	free(perm);
	d->train = xmalloc(xmul(d->corpus.n_sent + 1, sizeof(size_t)));
	d->test = xmalloc(xmul(d->corpus.n_sent + 1, sizeof(size_t)));
	for (size_t s = 0; s < d->corpus.n_sent; s++) {
		if (is_test[d->corpus.sent_doc[s]])
			d->test[d->n_test++] = s;
		else
			d->train[d->n_train++] = s;
	}
	d->n_test_docs = n_test;
	d->n_train_docs = nd - n_test;
	free(is_test);
	if (!d->n_train || !d->n_test)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"the corpus split left no %s sentence (documents without sentences?)",
				d->n_train ? "held-out" : "training");
	vpa_vocab_build(&d->vocab, &d->corpus, d->train, d->n_train,
			(size_t)cfg->vocab_size, 1);
	return 0;
}

/* Accuracy of the most-frequent-class-per-word baseline (unknown words: the
 * most frequent class overall), for the report: what the tagger must beat. */
static double baseline_accuracy(const struct vpa_tagger_data *d)
{
	size_t V = d->vocab.n;
	uint32_t *cnt = xcalloc(xmul(V, VPA_TAG_N), sizeof(uint32_t));
	size_t all[VPA_TAG_N] = {0};
	for (size_t k = 0; k < d->n_train; k++) {
		size_t s = d->train[k];
		for (size_t i = d->corpus.sent_off[s]; i < d->corpus.sent_off[s + 1]; i++) {
			uint32_t id = vpa_vocab_id(&d->vocab, d->corpus.word[i]);
			cnt[(size_t)id * VPA_TAG_N + d->cls[i]]++;
			all[d->cls[i]]++;
		}
	}
	int top = 0;
	for (int c = 1; c < VPA_TAG_N; c++)
		if (all[c] > all[top])
			top = c;
	size_t right = 0, total = 0;
	for (size_t k = 0; k < d->n_test; k++) {
		size_t s = d->test[k];
		for (size_t i = d->corpus.sent_off[s]; i < d->corpus.sent_off[s + 1]; i++) {
			uint32_t id = vpa_vocab_id(&d->vocab, d->corpus.word[i]);
			const uint32_t *c = cnt + (size_t)id * VPA_TAG_N;
			int best = top;
			if (id != VPA_VOCAB_UNK)
				for (int j = 0; j < VPA_TAG_N; j++)
					if (c[j] > c[best])
						best = j;
			right += d->cls[i] == best;
			total++;
		}
	}
	free(cnt);
	return total ? (double)right / (double)total : NAN;
}

static void tagger_free(struct vpa_target *t)
{
	struct vpa_tagger_target *tt = t->data;
	if (!tt)
		return;
	vpa_tagger_data_release(&tt->data);
	vpa_nn_free(tt->net);
	vpa_tagconf_release(&tt->conf);
	free(tt->canary);
	free(tt->conf_path);
	free(tt);
	t->data = NULL;
}

static int build(struct vpa_run_ctx *ctx, const void *opts, struct vpa_target *out,
		 struct vpa_err *err)
{
	const struct vpa_tagger_opts *cfg = opts;
	struct vpa_tagger_target *tt = xcalloc(1, sizeof(*tt));
	struct vpa_json *info = vpa_json_obj();
	out->data = tt;
	out->info = info;
	out->simulated = 0;
	int rc = 0;
	if (!strcmp(cfg->source, "import")) {
		tt->imported = 1;
		tt->canary = xstrdup(cfg->canary);
		const char *rel = cfg->confidences;
		tt->conf_path = vpa_path_join(ctx->dir, rel);
		if ((rc = vpa_tagconf_read(tt->conf_path, &tt->conf, err)))
			return rc;
		vpa_json_set_str(info, "source", "import");
		vpa_json_set_str(info, "confidences", rel);
		vpa_json_set_str(info, "canary", tt->canary);
		vpa_json_set_num(info, "n_rows", (double)tt->conf.n_rows);
		struct vpa_json *cl = vpa_json_arr();
		for (size_t i = 0; i < tt->conf.n_class; i++)
			vpa_json_push(cl, vpa_json_str(tt->conf.class_name[i]));
		vpa_json_set(info, "classes", cl);
		return 0;
	}
	vpa_tagger_cfg_from(cfg, ctx->seed, &tt->cfg);
	{
		struct vpa_rng r;
		vpa_rng_split(&r, ctx->seed, "tagger/model");
		tt->cfg.seed = vpa_rng_u64(&r);
	}
	if ((rc = prepare(ctx, cfg, &tt->data, err)))
		return rc;
	const struct vpa_tagger_data *d = &tt->data;
	struct vpa_tagger_stats st;
	if ((rc = vpa_tagger_train(d, &tt->cfg, d->train, d->n_train, NULL, NULL, NULL, &tt->net,
				   &st, err)))
		return rc;
	double loss;
	if ((rc = vpa_tagger_eval(tt->net, d, d->test, d->n_test, &tt->accuracy, &loss, err)))
		return rc;
	size_t tr_tok = 0, te_tok = 0;
	for (size_t k = 0; k < d->n_train; k++)
		tr_tok += d->corpus.sent_off[d->train[k] + 1] - d->corpus.sent_off[d->train[k]];
	for (size_t k = 0; k < d->n_test; k++)
		te_tok += d->corpus.sent_off[d->test[k] + 1] - d->corpus.sent_off[d->test[k]];
	vpa_json_set_str(info, "source", "train");
	vpa_json_set_str(info, "corpus", cfg->corpus);
	vpa_json_set_str(info, "tag_set", "NOUN VERB ADJ PROPN OTHER");
	vpa_json_set_num(info, "train_documents", (double)d->n_train_docs);
	vpa_json_set_num(info, "test_documents", (double)d->n_test_docs);
	vpa_json_set_num(info, "train_sentences", (double)d->n_train);
	vpa_json_set_num(info, "test_sentences", (double)d->n_test);
	vpa_json_set_num(info, "train_tokens", (double)tr_tok);
	vpa_json_set_num(info, "test_tokens", (double)te_tok);
	vpa_json_set_num(info, "vocabulary", (double)d->vocab.n);
	vpa_json_set_num(info, "parameters", (double)st.n_params);
	vpa_json_set_str(info, "model", "embedding, BiLSTM, dense, softmax");
	vpa_json_set_num(info, "accuracy", tt->accuracy);
	vpa_json_set_num(info, "test_loss", loss);
	vpa_json_set_num(info, "baseline_accuracy", baseline_accuracy(d));
	vpa_json_set_num(info, "train_loss", st.train_loss);
	vpa_json_set_num(info, "train_seconds", st.seconds);
	vpa_json_set_num(info, "tokens_per_s", st.tokens_per_s);
	vpa_json_set(info, "dp", vpa_json_bool(tt->cfg.dp));
	if (tt->cfg.dp) {
		vpa_json_set_num(info, "epsilon", st.epsilon);
		vpa_json_set_num(info, "delta", tt->cfg.delta);
		vpa_json_set_num(info, "noise_multiplier", st.sigma);
		vpa_json_set_num(info, "sampling_rate", st.q);
		vpa_json_set_num(info, "steps", st.steps);
		vpa_json_set(info, "dp_unit", vpa_json_str(tt->cfg.dp_user ? "user" : "sentence"));
		vpa_json_set_num(info, "dp_units", (double)st.units);
	}
	return 0;
}

const struct vpa_target_kind vpa_target_tagger = {
	.name = "tagger",
	.schema = &schema,
	.doc = "A BiLSTM part-of-speech tagger (embedding, BiLSTM, softmax over NOUN, VERB, ADJ, "
	       "PROPN, OTHER; the Brown-tag mapping is in targets/README.md) trained on a Brown-"
	       "format corpus split by documents, with Adam/SGD or DP-SGD (the privacy unit a "
	       "sentence or a user); its utility is the token accuracy on the held-out "
	       "documents.  Or (`source: import`) a user's tagger "
	       "confidences.  Attack it with `d_exposure`.",
	.validate = validate,
	.build = build,
	.free = tagger_free,
};
