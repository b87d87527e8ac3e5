/*
 * targets/lm.c - target kind `language_model` (contracts in targets/lm.h,
 * documentation in targets/README.md "language_model").
 *
 * Trained models: a word-level LSTM LM on the neural engine (embedding ->
 * LSTM x layers -> dense over the vocabulary, softmax cross-entropy of the
 * next word), on the Brown corpus or a plain-text corpus, with canaries
 * inserted before training and optional text anonymisation and simulated
 * ASR confidence weights.  Three ways to train:
 *   central      Adam on shuffled mini-batches;
 *   central DP   DP-SGD (Abadi et al. 2016): Poisson-sampled lots of expected
 *                size `batch`, per-sentence clipping to `clip`, Gaussian noise
 *                noise_multiplier * clip, epsilon from the RDP accountant;
 *   federated    Liu et al. (Facebook): clients from a Zipf assignment of
 *                sentences (or one per document), Poisson cohort sampling with
 *                rate q, client SGD for K local epochs, weighted averaging of
 *                the client deltas, FedAvg or FedAdam server (eq. 6-8); with DP
 *                each delta is clipped to `clip`, N(0, (sigma clip)^2) is added
 *                to their (unweighted) sum, divided by the expected cohort size.
 * Imports: an ARPA model (scored by formats/io_arpa.c) or a candidates file.
 */
#include "targets/lm_int.h"

#include "metrics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the kind's keys ------------------------------------------------------------ */

static const struct vpa_key canary_keys[] = {
	{"name", VPA_K_ID, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "pin",
	 "records' sub prefix (`pin-x16` for 16 insertions); default c1, c2, ...",
	 VPA_AT(struct vpa_lm_canary_opts, name), VPA_MARK(struct vpa_lm_canary_opts, name_at)},
	{"template", VPA_K_STR, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL,
	 "\"my pin number is {d4}\"",
	 "text with slots {dN} (N digits), {name}, {word}, {choice:a|b|c}",
	 VPA_AT(struct vpa_lm_canary_opts, template), VPA_MARK(struct vpa_lm_canary_opts, template_at)},
	{"insertions", VPA_K_LIST, 0, "[16]", -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[1, 4, 16, 64]",
	 "one canary per count, each with its own random secret inserted that many times "
	 "(trained models only: a validation error on an import); the others are left out of "
	 "each one's candidate set",
	 VPA_AT(struct vpa_lm_canary_opts, insertions), VPA_MARK(struct vpa_lm_canary_opts, insertions_at)},
	{"others", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "8",
	 "multiple insertion: this many other random secrets of the same format are inserted "
	 "as often as the canary (they stay candidates)",
	 VPA_AT(struct vpa_lm_canary_opts, others), VPA_MARK(struct vpa_lm_canary_opts, others_at)},
	{"secret", VPA_K_STR, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "\"my pin number is 1 2 3 4\"",
	 "the inserted text (required for an imported ARPA model; else drawn at random)",
	 VPA_AT(struct vpa_lm_canary_opts, secret), VPA_MARK(struct vpa_lm_canary_opts, secret_at)},
	{NULL},
};
static const struct vpa_schema canary_schema = {"canary", canary_keys, sizeof(struct vpa_lm_canary_opts)};

/* The name of canary i (0-based) of the list: its `name`, else c1, c2, ... */
static void canary_base(const struct vpa_ynode *c, size_t i, char *buf, size_t cap)
{
	const char *nm = vpa_cfg_str(c, &canary_schema, "name");
	if (nm)
		snprintf(buf, cap, "%s", nm);
	else
		snprintf(buf, cap, "c%zu", i + 1);
}

static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "train", -INFINITY, INFINITY, 0, "train|import", NULL, "train",
	 "`train` an LSTM LM, or `import` an ARPA model (`model`) or log-perplexities "
	 "(`candidates`)",
	 VPA_AT(struct vpa_lm_opts, source), VPA_MARK(struct vpa_lm_opts, source_at)},
	{"corpus", VPA_K_ENUM, 0, "brown", -INFINITY, INFINITY, 0, "brown|text", NULL, "brown",
	 "training text: the Brown corpus folder (`corpus_path`, default ../data/brown) or a "
	 "plain-text file, one sentence per line",
	 VPA_AT(struct vpa_lm_opts, corpus), VPA_MARK(struct vpa_lm_opts, corpus_at)},
	{"corpus_path", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "../data/brown",
	 "the Brown folder or the text file (relative to the scenario)",
	 VPA_AT(struct vpa_lm_opts, corpus_path), VPA_MARK(struct vpa_lm_opts, corpus_path_at)},
	{"max_documents", VPA_K_INT, 0, "0", 0, 1e9, 0, NULL, NULL, "50",
	 "Brown: read at most this many documents (0 = all)",
	 VPA_AT(struct vpa_lm_opts, max_documents), VPA_MARK(struct vpa_lm_opts, max_documents_at)},
	{"max_sentences", VPA_K_INT, 0, "0", 0, 1e9, 0, NULL, NULL, "5000",
	 "use the first N sentences of at most max_len words (0 = all)",
	 VPA_AT(struct vpa_lm_opts, max_sentences), VPA_MARK(struct vpa_lm_opts, max_sentences_at)},
	{"max_len", VPA_K_INT, 0, "40", 2, 1000, 0, NULL, NULL, "40",
	 "sentences longer than this are left out",
	 VPA_AT(struct vpa_lm_opts, max_len), VPA_MARK(struct vpa_lm_opts, max_len_at)},
	{"heldout", VPA_K_NUM, 0, "0.05", 0, 0.5, VPA_KF_OPEN_LO, NULL, NULL, "0.05",
	 "fraction of the sentences kept for the held-out perplexity (every k-th)",
	 VPA_AT(struct vpa_lm_opts, heldout), VPA_MARK(struct vpa_lm_opts, heldout_at)},
	{"vocab_size", VPA_K_INT, 0, "10000", 10, 1000000, 0, NULL, NULL, "10000",
	 "the most frequent words kept, plus <unk>; words the canaries need are added",
	 VPA_AT(struct vpa_lm_opts, vocab_size), VPA_MARK(struct vpa_lm_opts, vocab_size_at)},
	{"embedding", VPA_K_INT, 0, "256", 1, 65536, 0, NULL, NULL, "128", "word embedding size",
	 VPA_AT(struct vpa_lm_opts, embedding), VPA_MARK(struct vpa_lm_opts, embedding_at)},
	{"hidden", VPA_K_INT, 0, "256", 1, 65536, 0, NULL, NULL, "256", "LSTM hidden size",
	 VPA_AT(struct vpa_lm_opts, hidden), VPA_MARK(struct vpa_lm_opts, hidden_at)},
	{"lstm", VPA_K_BOOL, 0, "true", -INFINITY, INFINITY, 0, NULL, NULL, "false",
	 "false: prepare the text only (for `text_linkage`), train no network",
	 VPA_AT(struct vpa_lm_opts, lstm), VPA_MARK(struct vpa_lm_opts, lstm_at)},
	{"layers", VPA_K_INT, 0, "1", 1, 2, 0, NULL, NULL, "1", "LSTM layers (1 or 2)",
	 VPA_AT(struct vpa_lm_opts, layers), VPA_MARK(struct vpa_lm_opts, layers_at)},
	{"training", VPA_K_ENUM, 0, "central", -INFINITY, INFINITY, 0, "central|federated", NULL,
	 "federated", "central (Adam or DP-SGD) or federated (FedAvg/FedAdam)",
	 VPA_AT(struct vpa_lm_opts, training), VPA_MARK(struct vpa_lm_opts, training_at)},
	{"epochs", VPA_K_INT, 0, "10", 1, 100000, 0, NULL, NULL, "20", "central: passes over the data",
	 VPA_AT(struct vpa_lm_opts, epochs), VPA_MARK(struct vpa_lm_opts, epochs_at)},
	{"batch", VPA_K_INT, 0, "32", 1, 1000000, 0, NULL, NULL, "32",
	 "central: sentences per batch (DP-SGD: the expected lot size)",
	 VPA_AT(struct vpa_lm_opts, batch), VPA_MARK(struct vpa_lm_opts, batch_at)},
	{"lr", VPA_K_NUM, 0, "0.002", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.002",
	 "central: Adam learning rate",
	 VPA_AT(struct vpa_lm_opts, lr), VPA_MARK(struct vpa_lm_opts, lr_at)},
	{"grad_clip", VPA_K_NUM, 0, "5", 0, INFINITY, 0, NULL, NULL, "5",
	 "central without DP: clip the global gradient norm (0 = off)",
	 VPA_AT(struct vpa_lm_opts, grad_clip), VPA_MARK(struct vpa_lm_opts, grad_clip_at)},
	{"noise_multiplier", VPA_K_NUM, 0, "0", 0, 1000, 0, NULL, NULL, "1.1",
	 "DP noise sigma (std = sigma * clip); 0 = no DP unless target_epsilon is set",
	 VPA_AT(struct vpa_lm_opts, noise_multiplier), VPA_MARK(struct vpa_lm_opts, noise_multiplier_at)},
	{"clip", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "0.5",
	 "DP clipping norm C: per sentence (DP-SGD) or per client delta (federated)",
	 VPA_AT(struct vpa_lm_opts, clip), VPA_MARK(struct vpa_lm_opts, clip_at)},
	{"target_epsilon", VPA_K_NUM, 0, "0", 0, 1e6, 0, NULL, NULL, "1",
	 "when > 0: choose the noise multiplier that meets this epsilon (vpa_dp_sigma)",
	 VPA_AT(struct vpa_lm_opts, target_epsilon), VPA_MARK(struct vpa_lm_opts, target_epsilon_at)},
	{"delta", VPA_K_NUM, 0, "1e-5", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "1e-5",
	 "DP delta",
	 VPA_AT(struct vpa_lm_opts, delta), VPA_MARK(struct vpa_lm_opts, delta_at)},
	{"clients", VPA_K_ENUM, 0, "zipf", -INFINITY, INFINITY, 0, "zipf|document", NULL, "zipf",
	 "federated: sentences assigned to devices by a Zipf law, or one client per document",
	 VPA_AT(struct vpa_lm_opts, clients), VPA_MARK(struct vpa_lm_opts, clients_at)},
	{"n_clients", VPA_K_INT, 0, "500", 2, 10000000, 0, NULL, NULL, "1000",
	 "federated, zipf: number of devices",
	 VPA_AT(struct vpa_lm_opts, n_clients), VPA_MARK(struct vpa_lm_opts, n_clients_at)},
	{"zipf_s", VPA_K_NUM, 0, "1", 0, 10, 0, NULL, NULL, "1",
	 "federated, zipf: P(client k) proportional to k^-s",
	 VPA_AT(struct vpa_lm_opts, zipf_s), VPA_MARK(struct vpa_lm_opts, zipf_s_at)},
	{"cohort", VPA_K_INT, 0, "50", 1, 10000000, 0, NULL, NULL, "100",
	 "federated: expected clients per round (Poisson sampling, q = cohort / clients)",
	 VPA_AT(struct vpa_lm_opts, cohort), VPA_MARK(struct vpa_lm_opts, cohort_at)},
	{"rounds", VPA_K_INT, 0, "100", 1, 10000000, 0, NULL, NULL, "200", "federated: rounds",
	 VPA_AT(struct vpa_lm_opts, rounds), VPA_MARK(struct vpa_lm_opts, rounds_at)},
	{"local_epochs", VPA_K_INT, 0, "1", 1, 1000, 0, NULL, NULL, "1",
	 "federated: client SGD epochs K",
	 VPA_AT(struct vpa_lm_opts, local_epochs), VPA_MARK(struct vpa_lm_opts, local_epochs_at)},
	{"local_lr", VPA_K_NUM, 0, "0.5", 0, 100, VPA_KF_OPEN_LO, NULL, NULL, "0.5",
	 "federated: client SGD learning rate",
	 VPA_AT(struct vpa_lm_opts, local_lr), VPA_MARK(struct vpa_lm_opts, local_lr_at)},
	{"local_batch", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "8",
	 "federated: client mini-batch (sentences)",
	 VPA_AT(struct vpa_lm_opts, local_batch), VPA_MARK(struct vpa_lm_opts, local_batch_at)},
	{"server", VPA_K_ENUM, 0, "fedadam", -INFINITY, INFINITY, 0,
	 "fedavg|fedadam|fedadam_reddi", NULL, "fedadam",
	 "federated: server update: `fedadam` as Liu et al. eq. 6-8 (bias correction, "
	 "`server_eps` inside the square root), `fedadam_reddi` as Reddi et al. 2021 (no bias "
	 "correction, `tau` outside), `fedavg`",
	 VPA_AT(struct vpa_lm_opts, server), VPA_MARK(struct vpa_lm_opts, server_at)},
	{"server_lr", VPA_K_NUM, 0, "0.01", 0, 100, VPA_KF_OPEN_LO, NULL, NULL, "0.01",
	 "federated: server learning rate eta (FedAvg: 1 is plain averaging)",
	 VPA_AT(struct vpa_lm_opts, server_lr), VPA_MARK(struct vpa_lm_opts, server_lr_at)},
	{"beta1", VPA_K_NUM, 0, "0.9", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.9", "FedAdam beta1",
	 VPA_AT(struct vpa_lm_opts, beta1), VPA_MARK(struct vpa_lm_opts, beta1_at)},
	{"beta2", VPA_K_NUM, 0, "0.99", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.99", "FedAdam beta2",
	 VPA_AT(struct vpa_lm_opts, beta2), VPA_MARK(struct vpa_lm_opts, beta2_at)},
	{"server_eps", VPA_K_NUM, 0, "1e-6", 0, 1, VPA_KF_OPEN_LO, NULL, NULL, "1e-6",
	 "fedadam: epsilon_g of Liu et al. eq. 8, inside the square root (1e-6 = tau 1e-3 "
	 "where the second moment is 0)",
	 VPA_AT(struct vpa_lm_opts, server_eps), VPA_MARK(struct vpa_lm_opts, server_eps_at)},
	{"tau", VPA_K_NUM, 0, "0.001", 0, 1, VPA_KF_OPEN_LO, NULL, NULL, "0.001",
	 "fedadam_reddi: adaptivity tau, outside the square root",
	 VPA_AT(struct vpa_lm_opts, tau), VPA_MARK(struct vpa_lm_opts, tau_at)},
	{"loss_average", VPA_K_ENUM, 0, "utterance", -INFINITY, INFINITY, 0, "utterance|token", NULL,
	 "utterance", "training loss of a batch: `utterance`, the mean over its sentences of each "
	 "one's mean over its tokens (Liu et al. eq. 2-4; DP-SGD's per-sentence gradients always "
	 "are), or `token`, the mean over all its tokens",
	 VPA_AT(struct vpa_lm_opts, loss_average), VPA_MARK(struct vpa_lm_opts, loss_average_at)},
	{"confidence", VPA_K_ENUM, 0, "none", -INFINITY, INFINITY, 0,
	 "none|hard|utterance|token", NULL, "token",
	 "per-token confidence weights (Liu et al. eq. 2-4) on a simulated noisy transcription",
	 VPA_AT(struct vpa_lm_opts, confidence), VPA_MARK(struct vpa_lm_opts, confidence_at)},
	{"wer", VPA_K_NUM, 0, "0.15", 0, 1, 0, NULL, NULL, "0.15",
	 "confidence: word error rate of the simulated transcription",
	 VPA_AT(struct vpa_lm_opts, wer), VPA_MARK(struct vpa_lm_opts, wer_at)},
	{"threshold", VPA_K_NUM, 0, "0.7", 0, 1, 0, NULL, NULL, "0.7",
	 "confidence hard: keep an utterance when its mean confidence >= threshold",
	 VPA_AT(struct vpa_lm_opts, threshold), VPA_MARK(struct vpa_lm_opts, threshold_at)},
	{"anonymise", VPA_K_ENUM, 0, "none", -INFINITY, INFINITY, 0,
	 "none|redact|typed_placeholder|named_placeholder|word_by_word|full_entity", NULL,
	 "typed_placeholder", "text anonymisation of the training text (canaries included) "
	 "before training (COMPRISE D2.3 4.3.1)",
	 VPA_AT(struct vpa_lm_opts, anonymise), VPA_MARK(struct vpa_lm_opts, anonymise_at)},
	{"names", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "data/names.txt",
	 "extra first names (one per line) for {name} and the gazetteer",
	 VPA_AT(struct vpa_lm_opts, names), VPA_MARK(struct vpa_lm_opts, names_at)},
	{"canaries", VPA_K_MAPLIST, 0, NULL, -INFINITY, INFINITY, 0, NULL, &canary_schema,
	 "[{name: pin, template: \"my pin number is {d4}\", insertions: [1, 4, 16, 64]}]",
	 "secrets inserted into the training text (the `exposure` attack ranks them)",
	 VPA_AT(struct vpa_lm_opts, canaries), VPA_MARK(struct vpa_lm_opts, canaries_at)},
	{"checkpoints", VPA_K_INT, 0, "5", 1, 1000, 0, NULL, NULL, "5",
	 "parameter snapshots at evenly spaced epochs/rounds (exposure against training time)",
	 VPA_AT(struct vpa_lm_opts, checkpoints), VPA_MARK(struct vpa_lm_opts, checkpoints_at)},
	{"model", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "lm.arpa",
	 "import: an ARPA model (SRILM/KenLM text format)",
	 VPA_AT(struct vpa_lm_opts, model), VPA_MARK(struct vpa_lm_opts, model_at)},
	{"candidates", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "cands.txt",
	 "import: log-perplexities of the other candidates (one per line, or .npy)",
	 VPA_AT(struct vpa_lm_opts, candidates), VPA_MARK(struct vpa_lm_opts, candidates_at)},
	{"canary_logppl", VPA_K_NUM, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "12.5",
	 "import with candidates: the canary's log-perplexity (same unit as the candidates)",
	 VPA_AT(struct vpa_lm_opts, canary_logppl), VPA_MARK(struct vpa_lm_opts, canary_logppl_at)},
	{NULL},
};
static const struct vpa_schema schema = {"target language_model", keys, sizeof(struct vpa_lm_opts)};

/* Validation: every word exists, each with its own id. */
static uint32_t any_word(void *ctx, const char *w)
{
	(void)w;
	return (*(uint32_t *)ctx)++;
}

static int validate(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *cfg,
		    struct vpa_err *err)
{
	const char *src = vpa_cfg_str(cfg, &schema, "source");
	const struct vpa_ynode *model = vpa_ymap_get(cfg, "model"),
			       *cands = vpa_ymap_get(cfg, "candidates");
	struct vpa_loc loc = vpa_node_loc(ctx->file, cfg);
	if (!strcmp(src, "import")) {
		if (!!model == !!cands)
			return vpa_fail(err, VPA_EINPUT, &loc, "language_model import needs exactly one "
					"of 'model' (ARPA) or 'candidates'");
		if (cands && !vpa_ymap_get(cfg, "canary_logppl"))
			return vpa_fail(err, VPA_EINPUT, &loc, "'candidates' needs 'canary_logppl'");
		const struct vpa_ynode *f = model ? model : cands;
		char *path = vpa_path_join(ctx->dir, f->str);
		struct stat st;
		int bad = stat(path, &st) != 0 || S_ISDIR(st.st_mode);
		free(path);
		if (bad) {
			struct vpa_loc fl = vpa_node_loc(ctx->file, f);
			return vpa_fail(err, VPA_EINPUT, &fl, "cannot open '%s'", f->str);
		}
	} else if (model || cands) {
		const struct vpa_ynode *k = vpa_ymap_key(cfg, model ? "model" : "candidates");
		struct vpa_loc kl = vpa_node_loc(ctx->file, k);
		return vpa_fail(err, VPA_EINPUT, &kl, "'%s' needs 'source: import'",
				model ? "model" : "candidates");
	}
	const struct vpa_ynode *cn = vpa_ymap_get(cfg, "canaries");
	for (size_t i = 0; cn && i < cn->n; i++) {
		const struct vpa_ynode *c = cn->items[i];
		const struct vpa_ynode *tn = vpa_ymap_get(c, "template");
		/* names (default c1, c2, ...) are the records' subs: unique, as ids are */
		char base[64];
		canary_base(c, i, base, sizeof(base));
		for (size_t j = 0; j < i; j++) {
			char other[64];
			canary_base(cn->items[j], j, other, sizeof(other));
			if (strcmp(base, other))
				continue;
			const struct vpa_ynode *at = vpa_ymap_get(c, "name");
			struct vpa_loc nl = vpa_node_loc(ctx->file, at ? at : c);
			const struct vpa_ynode *fn = vpa_ymap_get(cn->items[j], "name");
			struct vpa_loc fl = vpa_node_loc(ctx->file, fn ? fn : cn->items[j]);
			return vpa_fail(err, VPA_EINPUT, &nl,
					"duplicate canary name '%s' (first at line %ld%s)", base, fl.line,
					fn ? "" : ", by default");
		}
		struct vpa_loc tl = vpa_node_loc(ctx->file, tn);
		struct vpa_lm_canary cc;
		struct vpa_err e2;
		vpa_err_init(&e2);
		uint32_t ids[2] = {1, 2}, next = 10;
		const char *nm[2] = {"a", "b"};
		if (vpa_lm_parse_template("x", tn->str, any_word, &next, nm, 2, ids, 2, &cc, &e2))
			return vpa_fail(err, VPA_EINPUT, &tl, "%s", e2.msg + strlen("canary 'x': "));
		vpa_lm_canary_release(&cc);
		const struct vpa_ynode *ins = vpa_ymap_get(c, "insertions");
		if (ins && !strcmp(src, "import")) {
			struct vpa_loc il = vpa_node_loc(ctx->file, vpa_ymap_key(c, "insertions"));
			return vpa_fail(err, VPA_EINPUT, &il, "'insertions' does not apply to an "
					"imported model: it cannot be retrained (its canary is `secret`, "
					"inserted when the model was trained)");
		}
		for (size_t j = 0; ins && j < ins->n; j++) {
			char *end;
			const struct vpa_ynode *v = ins->items[j];
			long x = v->type == VPA_YSCALAR ? strtol(v->str, &end, 10) : -1;
			if (v->type != VPA_YSCALAR || *end || x < 1 || x > 1000000) {
				struct vpa_loc vl = vpa_node_loc(ctx->file, v);
				return vpa_fail(err, VPA_EINPUT, &vl, "insertions must be integers in "
						"[1, 1000000]");
			}
			for (size_t k = 0; k < j; k++)
				if (strtol(ins->items[k]->str, NULL, 10) == x) {
					/* one canary (record sub NAME-xN) per count */
					struct vpa_loc vl = vpa_node_loc(ctx->file, v);
					return vpa_fail(err, VPA_EINPUT, &vl,
							"duplicate insertion count %ld of canary '%s'",
							x, base);
				}
		}
		if (!strcmp(src, "import") && model && !vpa_ymap_get(c, "secret"))
			return vpa_fail(err, VPA_EINPUT, &tl, "a canary of an imported model needs "
					"'secret' (the text that was inserted)");
	}
	return 0;
}

/* ---- building -------------------------------------------------------------------- */

static uint32_t vocab_lookup(void *ctx, const char *w)
{
	const struct vpa_vocab *v = ctx;
	uint32_t id = vpa_vocab_id(v, w);
	return id == VPA_VOCAB_UNK && strcmp(w, "<unk>") ? UINT32_MAX : id;
}

static uint32_t arpa_lookup(void *ctx, const char *w)
{
	int32_t id = vpa_arpa_word(ctx, w);
	return id == VPA_ARPA_NONE ? UINT32_MAX : (uint32_t)id;
}

/* Secret from text: tokens matched position by position against the template. */
static int secret_from_text(struct vpa_lm_canary *c, const char *text,
			    uint32_t (*lookup)(void *, const char *), void *ctx, struct vpa_err *err)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	size_t n = vpa_tokenize(text, strlen(text), 1, &b);
	int rc = 0;
	if (n != c->L) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': secret '%s' has %zu words, the "
				"template %zu", c->name, text, n, c->L);
	} else {
		char *s = b.data;
		c->secret = xmalloc(xmul(c->L, sizeof(uint32_t)));
		for (size_t i = 0; i < n && !rc; i++) {
			char *sp = strchr(s, ' ');
			if (sp)
				*sp = 0;
			uint32_t id = lookup(ctx, s);
			int ok = 0;
			for (size_t k = 0; k < c->pos[i].n_alt; k++)
				ok |= c->pos[i].alt[k] == id;
			if (!ok)
				rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': secret word %zu '%s' "
						"does not fit the template '%s'", c->name, i + 1, s, c->tmpl);
			c->secret[i] = id;
			s = sp ? sp + 1 : s;
		}
	}
	if (!rc)
		c->secret_text = xstrdup(text);
	vpa_buf_release(&b);
	return rc;
}

static void random_secret(const struct vpa_lm_canary *c, struct vpa_rng *r, uint32_t *out)
{
	for (size_t i = 0; i < c->L; i++)
		out[i] = c->pos[i].alt[vpa_rng_below(r, c->pos[i].n_alt)];
}

static char *secret_text(const struct vpa_vocab *v, const uint32_t *s, size_t L)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (size_t i = 0; i < L; i++)
		vpa_buf_printf(&b, "%s%s", i ? " " : "", v->words[s[i]]);
	return b.data;
}

static void lm_free(struct vpa_target *t)
{
	struct vpa_lm_target *lt = t->data;
	if (!lt)
		return;
	vpa_nn_free(lt->net);
	vpa_vocab_release(&lt->vocab);
	free(lt->train_tok);
	free(lt->train_off);
	free(lt->test_tok);
	free(lt->test_off);
	for (size_t i = 0; i < lt->n_ckpt; i++)
		free(lt->ckpt[i].params);
	free(lt->ckpt);
	vpa_arpa_free(lt->arpa);
	for (size_t i = 0; i < lt->n_canaries; i++)
		vpa_lm_canary_release(&lt->canaries[i]);
	free(lt->canaries);
	free(lt->cand);
	free(lt->cand_name);
	free(lt);
	t->data = NULL;
}

static int read_names(const char *path, char ***names, size_t *n, struct vpa_err *err)
{
	char *buf;
	size_t len;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_lm_parse_names(path, buf, len, names, n, err);
	free(buf);
	return rc;
}

/* Canaries of a model: parse templates, choose secrets (tracked + others). */
struct canary_plan {
	uint32_t *seq;  /* (L) */
	size_t L, count;
};

static int make_canaries(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg,
			 struct vpa_lm_target *lt, uint32_t (*lookup)(void *, const char *),
			 void *lctx, const char *const *names, size_t n_names,
			 const uint32_t *vocab_ids, size_t n_vids, int trained,
			 struct canary_plan **plan, size_t *n_plan, struct vpa_err *err)
{
	const struct vpa_ynode *cn = vpa_ymap_get(cfg, "canaries");
	struct vpa_rng r;
	vpa_rng_split(&r, ctx->seed, "lm/canaries");
	int rc = 0;
	size_t cap_p = 0;
	for (size_t i = 0; cn && i < cn->n && !rc; i++) {
		const struct vpa_ynode *c = cn->items[i];
		char base[64];
		canary_base(c, i, base, sizeof(base));
		const char *tmpl = vpa_cfg_str(c, &canary_schema, "template");
		const char *sec = vpa_cfg_str(c, &canary_schema, "secret");
		size_t others = (size_t)vpa_cfg_int(c, &canary_schema, "others");
		const struct vpa_ynode *ins = vpa_ymap_get(c, "insertions");
		size_t n_ins = trained ? (ins ? ins->n : 1) : 1;
		size_t first = lt->n_canaries;
		lt->canaries = xrealloc(lt->canaries, xmul(first + n_ins, sizeof(*lt->canaries)));
		for (size_t j = 0; j < n_ins && !rc; j++) {
			struct vpa_lm_canary *cc = &lt->canaries[lt->n_canaries];
			size_t count = trained ? (ins ? (size_t)strtol(ins->items[j]->str, NULL, 10) : 16) : 0;
			char name[96];
			if (trained)
				snprintf(name, sizeof(name), "%s-x%zu", base, count);
			else
				snprintf(name, sizeof(name), "%s", base);
			if ((rc = vpa_lm_parse_template(name, tmpl, lookup, lctx, names, n_names,
							vocab_ids, n_vids, cc, err)))
				break;
			lt->n_canaries++;
			cc->insertions = count;
			cc->others = others;
			if (sec) {
				if ((rc = secret_from_text(cc, sec, lookup, lctx, err)))
					break;
			} else {
				cc->secret = xmalloc(xmul(cc->L, sizeof(uint32_t)));
				/* distinct from the earlier tracked secrets of this template */
				for (int tries = 0;; tries++) {
					random_secret(cc, &r, cc->secret);
					int dup = 0;
					for (size_t k = first; k < lt->n_canaries - 1; k++)
						dup |= !memcmp(lt->canaries[k].secret, cc->secret,
							       cc->L * sizeof(uint32_t));
					if (!dup || tries > 100)
						break;
				}
				cc->secret_text = secret_text(&lt->vocab, cc->secret, cc->L);
			}
			if (!trained)
				continue;
			/* plan: the canary, then its `others` */
			for (size_t o = 0; o <= others; o++) {
				if (*n_plan == cap_p)
					*plan = xrealloc(*plan, xmul(cap_p = cap_p ? 2 * cap_p : 16,
								      sizeof(**plan)));
				struct canary_plan *p = &(*plan)[(*n_plan)++];
				p->L = cc->L;
				p->count = count;
				p->seq = xmalloc(xmul(cc->L, sizeof(uint32_t)));
				if (o == 0)
					memcpy(p->seq, cc->secret, cc->L * sizeof(uint32_t));
				else
					random_secret(cc, &r, p->seq);
			}
		}
		/* exclusions: the other tracked secrets of this entry */
		for (size_t j = first; j < lt->n_canaries && !rc; j++) {
			struct vpa_lm_canary *cc = &lt->canaries[j];
			size_t ne = lt->n_canaries - first - 1;
			cc->excl = xmalloc(xmul(ne ? ne : 1, cc->L * sizeof(uint32_t)));
			for (size_t k = first; k < lt->n_canaries; k++)
				if (k != j)
					memcpy(cc->excl + (cc->n_excl++) * cc->L, lt->canaries[k].secret,
					       cc->L * sizeof(uint32_t));
		}
	}
	return rc;
}

static int build_import(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg,
			struct vpa_lm_target *lt, struct vpa_json *info, struct vpa_err *err)
{
	const char *model = vpa_cfg_str(cfg, &schema, "model");
	int rc = 0;
	if (model) {
		char *p = vpa_path_join(ctx->dir, model);
		lt->source = VPA_LM_ARPA;
		rc = vpa_arpa_load(p, &lt->arpa, err);
		free(p);
		if (rc)
			return rc;
		size_t V = vpa_arpa_vocab_size(lt->arpa);
		uint32_t *vids = xmalloc(xmul(V, sizeof(uint32_t)));
		size_t nv = 0;
		for (size_t i = 0; i < V; i++)
			if ((int32_t)i != vpa_arpa_bos(lt->arpa) && (int32_t)i != vpa_arpa_eos(lt->arpa) &&
			    (int32_t)i != vpa_arpa_unk(lt->arpa))
				vids[nv++] = (uint32_t)i;
		/* the vocabulary for secret texts and {word}: the ARPA words */
		vpa_vocab_init(&lt->vocab);
		for (size_t i = 0; i < V; i++)
			vpa_vocab_add(&lt->vocab, vpa_arpa_word_str(lt->arpa, (int32_t)i));
		struct canary_plan *plan = NULL;
		size_t n_plan = 0;
		rc = make_canaries(ctx, cfg, lt, arpa_lookup, lt->arpa, vpa_first_names,
				   vpa_n_first_names, vids, nv, 0, &plan, &n_plan, err);
		free(vids);
		vpa_json_set_str(info, "model", model);
		vpa_json_set_num(info, "order", (double)vpa_arpa_order(lt->arpa));
		vpa_json_set_num(info, "vocabulary", (double)V);
		struct vpa_json *cnt = vpa_json_arr();
		for (size_t k = 1; k <= vpa_arpa_order(lt->arpa); k++)
			vpa_json_push(cnt, vpa_json_num((double)vpa_arpa_count(lt->arpa, k)));
		vpa_json_set(info, "ngrams", cnt);
		return rc;
	}
	const char *cands = vpa_cfg_str(cfg, &schema, "candidates");
	char *p = vpa_path_join(ctx->dir, cands);
	lt->source = VPA_LM_CANDIDATES;
	rc = vpa_read_score_list(p, &lt->cand, &lt->n_cand, err);
	free(p);
	lt->cand_canary = vpa_cfg_num(cfg, &schema, "canary_logppl");
	lt->cand_name = xstrdup("canary");
	vpa_json_set_str(info, "candidates", cands);
	vpa_json_set_num(info, "n_candidates", (double)lt->n_cand);
	return rc;
}

static int build_trained(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg,
			 struct vpa_lm_target *lt, struct vpa_json *info, struct vpa_err *err)
{
	struct vpa_corpus corp;
	struct vpa_corpus_opts co;
	vpa_corpus_init(&corp);
	vpa_corpus_opts_init(&co);
	co.lower = 1;
	int rc = 0;
	const char *kind = vpa_cfg_str(cfg, &schema, "corpus");
	const char *cp = vpa_cfg_str(cfg, &schema, "corpus_path");
	int brown = !strcmp(kind, "brown");
	char *path = vpa_path_join(ctx->dir, cp ? cp : (brown ? "../data/brown" : "corpus.txt"));
	char **extra = NULL;
	size_t n_extra = 0;
	struct sents tr = {0}, ho = {0};
	struct vpa_gazetteer *gz = NULL;
	struct canary_plan *plan = NULL;
	size_t n_plan = 0;
	char **anon_tok = NULL;
	size_t *keep = NULL, n_keep = 0;
	const char **names = NULL;
	size_t n_names = 0;
	uint32_t *vids = NULL;
	size_t *canary_group = NULL;
	float *sent_w = NULL;
	size_t n_canary_total = 0;
	if (brown)
		rc = vpa_corpus_load_brown(&corp, path,
					   (size_t)vpa_cfg_int(cfg, &schema, "max_documents"), &co, err);
	else
		rc = vpa_corpus_load_text(&corp, path, &co, err);
	if (rc) {
		if (brown && err && strlen(err->msg) + 50 < sizeof(err->msg))
			strcat(err->msg, " (`make deps` fetches the Brown corpus)");
		goto out;
	}
	const char *np = vpa_cfg_str(cfg, &schema, "names");
	if (np) {
		char *p = vpa_path_join(ctx->dir, np);
		rc = read_names(p, &extra, &n_extra, err);
		free(p);
		if (rc)
			goto out;
	}
	/* sentence selection */
	size_t max_len = (size_t)vpa_cfg_int(cfg, &schema, "max_len");
	size_t max_s = (size_t)vpa_cfg_int(cfg, &schema, "max_sentences");
	keep = xmalloc(xmul(corp.n_sent ? corp.n_sent : 1, sizeof(size_t)));
	for (size_t s = 0; s < corp.n_sent && (!max_s || n_keep < max_s); s++) {
		size_t len = corp.sent_off[s + 1] - corp.sent_off[s];
		if (len >= 1 && len <= max_len)
			keep[n_keep++] = s;
	}
	if (n_keep < 20) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "corpus '%s': only %zu usable sentences (at least "
				"20 needed)", path, n_keep);
		goto out;
	}
	double hfrac = vpa_cfg_num(cfg, &schema, "heldout");
	size_t every = (size_t)fmax(2, floor(1 / hfrac + 0.5));
	/* anonymisation works on strings: the training words after the strategy */
	const char *strategy = vpa_cfg_str(cfg, &schema, "anonymise");
	int strat = vpa_anon_strategy_parse(strategy);
	names = xmalloc(xmul(vpa_n_first_names + n_extra, sizeof(char *)));
	for (size_t i = 0; i < vpa_n_first_names; i++)
		names[n_names++] = vpa_first_names[i];
	for (size_t i = 0; i < n_extra; i++)
		names[n_names++] = extra[i];
	/* vocabulary from the training sentences; canary words added */
	size_t *trs = xmalloc(xmul(n_keep, sizeof(size_t)));
	size_t n_trs = 0;
	for (size_t i = 0; i < n_keep; i++)
		if (i % every != every - 1)
			trs[n_trs++] = keep[i];
	vpa_vocab_init(&lt->vocab);
	vpa_vocab_build(&lt->vocab, &corp, trs, n_trs, (size_t)vpa_cfg_int(cfg, &schema, "vocab_size"),
			1);
	free(trs);
	const struct vpa_ynode *cn = vpa_ymap_get(cfg, "canaries");
	for (size_t i = 0; cn && i < cn->n; i++) {
		const char *tmpl = vpa_cfg_str(cn->items[i], &canary_schema, "template");
		if (strstr(tmpl, "{d"))
			for (int d = 0; d < 10; d++) {
				char w[2] = {(char)('0' + d), 0};
				vpa_vocab_add(&lt->vocab, w);
			}
		if (strstr(tmpl, "{name}"))
			for (size_t k = 0; k < n_names; k++)
				vpa_vocab_add(&lt->vocab, names[k]);
		/* literal words and choices */
		struct vpa_buf b;
		vpa_buf_init(&b);
		char *t = xstrdup(tmpl);
		for (char *q = t; *q; q++)
			if (*q == '{' || *q == '}' || *q == '|' || *q == ':')
				*q = ' ';
		vpa_tokenize(t, strlen(t), 1, &b);
		char *save = NULL;
		for (char *w = b.data ? strtok_r(b.data, " ", &save) : NULL; w;
		     w = strtok_r(NULL, " ", &save))
			if (strcmp(w, "choice") && strcmp(w, "name") && strcmp(w, "word") &&
			    !(w[0] == 'd' && w[1] >= '1' && w[1] <= '9' && !w[2]))
				vpa_vocab_add(&lt->vocab, w);
		free(t);
		vpa_buf_release(&b);
	}
	/* anonymisation placeholders must be words of the model too */
	static const char *const ph[] = {"<redacted>", "<person>", "<number>", "<proper>"};
	if (strat != VPA_ANON_NONE)
		for (size_t i = 0; i < 4; i++)
			vpa_vocab_add(&lt->vocab, ph[i]);
	if (strat == VPA_ANON_NAMED_PLACEHOLDER) /* indices beyond 50 map to <unk> */
		for (int k = 1; k <= 50; k++)
			for (size_t i = 1; i < 4; i++) {
				char w[32];
				snprintf(w, sizeof(w), "%.*s_%d>", (int)strlen(ph[i]) - 1, ph[i], k);
				vpa_vocab_add(&lt->vocab, w);
			}
	size_t V_words = lt->vocab.n; /* {word}: every word so far but <unk> */
	vids = xmalloc(xmul(V_words, sizeof(uint32_t)));
	size_t n_vids = 0;
	for (size_t i = 1; i < V_words; i++)
		if (lt->vocab.words[i][0] != '<')
			vids[n_vids++] = (uint32_t)i;
	lt->bos = vpa_vocab_add(&lt->vocab, "<s>");
	lt->eos = vpa_vocab_add(&lt->vocab, "</s>");
	if ((rc = make_canaries(ctx, cfg, lt, vocab_lookup, &lt->vocab, names, n_names, vids, n_vids,
				1, &plan, &n_plan, err)))
		goto out;

	/* token lists: training text, then the canary copies; anonymised as strings */
	{
		size_t n_canary_sents = 0, Kc = 0;
		for (size_t i = 0; i < n_plan; i++)
			n_canary_sents += plan[i].count;
		n_canary_total = n_canary_sents;
		size_t n_train_text = n_keep - n_keep / every;
		size_t n_all = n_train_text + n_canary_sents;
		const char **tok = NULL;
		const char **tags = NULL;
		size_t *off = xmalloc(xmul(n_all + 1, sizeof(size_t))), *doc = xmalloc(xmul(n_all, sizeof(size_t)));
		size_t nt = 0, cap = 0, si = 0;
		off[0] = 0;
		canary_group = xmalloc(xmul(n_canary_sents ? n_canary_sents : 1, sizeof(size_t)));
		for (size_t i = 0; i < n_keep; i++) {
			size_t s = keep[i];
			size_t a = corp.sent_off[s], e = corp.sent_off[s + 1];
			if (i % every == every - 1) { /* held out (never anonymised: utility on real text) */
				uint32_t buf[1024];
				for (size_t k = a; k < e; k++)
					buf[k - a] = vpa_vocab_id(&lt->vocab, corp.word[k]);
				vpa_lm_sents_push(&ho, buf, e - a, NULL);
				continue;
			}
			if (nt + (e - a) > cap) {
				cap = 2 * (nt + (e - a)) + 1024;
				tok = xrealloc(tok, xmul(cap, sizeof(char *)));
				tags = xrealloc(tags, xmul(cap, sizeof(char *)));
			}
			for (size_t k = a; k < e; k++) {
				tok[nt] = corp.word[k];
				tags[nt++] = corp.tag ? corp.tag[k] : NULL;
			}
			doc[si] = corp.sent_doc[s];
			off[++si] = nt;
		}
		/* canaries: each copy is a sentence of its own document (a speaker's) */
		size_t gi = 0;
		for (size_t p = 0; p < n_plan; p++) {
			for (size_t k = 0; k < plan[p].count; k++) {
				if (nt + plan[p].L > cap) {
					cap = 2 * (nt + plan[p].L) + 1024;
					tok = xrealloc(tok, xmul(cap, sizeof(char *)));
					tags = xrealloc(tags, xmul(cap, sizeof(char *)));
				}
				for (size_t t = 0; t < plan[p].L; t++) {
					tok[nt] = lt->vocab.words[plan[p].seq[t]];
					tags[nt++] = NULL;
				}
				doc[si] = corp.n_doc + p;
				canary_group[gi++] = p;
				off[++si] = nt;
			}
		}
		struct vpa_textanon_out ao = {0};
		const char *const *final_tok = tok;
		const size_t *final_off = off;
		if (strat != VPA_ANON_NONE) {
			struct vpa_rng ar;
			vpa_rng_split(&ar, ctx->seed, "lm/anonymise");
			gz = vpa_gazetteer_new(&corp, (const char *const *)extra, n_extra);
			rc = vpa_textanon(gz, (enum vpa_anon_strategy)strat, tok,
					  corp.tag ? tags : NULL, off, doc, n_all, &ar, &ao, err);
			final_tok = (const char *const *)ao.tok;
			final_off = ao.off;
			vpa_json_set_num(info, "anonymised_spans", (double)ao.n_spans);
		}
		if (!rc)
			for (size_t s = 0; s < n_all; s++) {
				size_t a = final_off[s], e = final_off[s + 1];
				uint32_t *buf = xmalloc(xmul(e - a + 1, sizeof(uint32_t)));
				for (size_t k = a; k < e; k++)
					buf[k - a] = vpa_vocab_id(&lt->vocab, final_tok[k]);
				vpa_lm_sents_push(&tr, buf, e - a, NULL);
				free(buf);
			}
		vpa_textanon_out_release(&ao);
		free(tok);
		free(tags);
		/* federated clients need the documents */
		if (!rc && !strcmp(vpa_cfg_str(cfg, &schema, "training"), "federated")) {
			struct vpa_rng cr;
			vpa_rng_split(&cr, ctx->seed, "lm/clients");
			int by_doc = !strcmp(vpa_cfg_str(cfg, &schema, "clients"), "document");
			size_t K = vpa_lm_assign_clients(&tr, doc, corp.n_doc, by_doc,
						  (size_t)vpa_cfg_int(cfg, &schema, "n_clients"),
						  vpa_cfg_num(cfg, &schema, "zipf_s"), n_canary_sents,
						  canary_group, &cr);
			vpa_json_set_num(info, "n_clients", (double)K);
			Kc = K;
		}
		free(off);
		free(doc);
		if (rc)
			goto out;

		/* confidence weights */
		const char *cm = vpa_cfg_str(cfg, &schema, "confidence");
		int tok_w = 0;
		if (strcmp(cm, "none")) {
			struct vpa_rng wr;
			vpa_rng_split(&wr, ctx->seed, "lm/transcription");
			size_t n_sub = vpa_lm_noisy_transcription(&tr, n_train_text, V_words,
							   vpa_cfg_num(cfg, &schema, "wer"), &wr);
			vpa_json_set_num(info, "substituted_tokens", (double)n_sub);
			if (!strcmp(cm, "token")) {
				tok_w = 1;
			} else {
				double th = vpa_cfg_num(cfg, &schema, "threshold");
				size_t dropped = 0;
				sent_w = xmalloc(xmul(tr.n, sizeof(float)));
				for (size_t s = 0; s < tr.n; s++) {
					double m = 0;
					size_t a = tr.off[s], e = tr.off[s + 1];
					for (size_t k = a; k < e; k++)
						m += tr.conf[k];
					m = e > a ? m / (double)(e - a) : 1;
					if (!strcmp(cm, "hard")) {
						sent_w[s] = m >= th ? 1.0f : 0.0f;
						dropped += m < th;
					} else {
						sent_w[s] = (float)m;
					}
				}
				if (!strcmp(cm, "hard"))
					vpa_json_set_num(info, "dropped_utterances", (double)dropped);
			}
		}

		if (!vpa_cfg_bool(cfg, &schema, "lstm")) {
			vpa_json_set_str(info, "model", "none");
			vpa_json_set_num(info, "train_sentences", (double)n_train_text);
			vpa_json_set_num(info, "heldout_sentences", (double)ho.n);
			goto text_only;
		}
		/* the network */
		size_t V = lt->vocab.n, E = (size_t)vpa_cfg_int(cfg, &schema, "embedding"),
		       Hd = (size_t)vpa_cfg_int(cfg, &schema, "hidden");
		size_t nl = (size_t)vpa_cfg_int(cfg, &schema, "layers");
		lt->net = vpa_nn_new(0);
		vpa_nn_add_embedding(lt->net, V, E);
		for (size_t l = 0; l < nl; l++)
			vpa_nn_add_lstm(lt->net, Hd, 0);
		vpa_nn_add_dense(lt->net, V);
		vpa_nn_init_params(lt->net, ctx->seed ^ 0x6c6du);
		vpa_nn_params(lt->net, &lt->n_params);

		struct train_cfg c = {0};
		c.epochs = (size_t)vpa_cfg_int(cfg, &schema, "epochs");
		c.batch = (size_t)vpa_cfg_int(cfg, &schema, "batch");
		c.lr = vpa_cfg_num(cfg, &schema, "lr");
		c.grad_clip = vpa_cfg_num(cfg, &schema, "grad_clip");
		c.sigma = vpa_cfg_num(cfg, &schema, "noise_multiplier");
		c.clip = vpa_cfg_num(cfg, &schema, "clip");
		c.delta = vpa_cfg_num(cfg, &schema, "delta");
		c.federated = tr.client != NULL;
		c.rounds = (size_t)vpa_cfg_int(cfg, &schema, "rounds");
		c.cohort = (size_t)vpa_cfg_int(cfg, &schema, "cohort");
		c.local_epochs = (size_t)vpa_cfg_int(cfg, &schema, "local_epochs");
		c.local_batch = (size_t)vpa_cfg_int(cfg, &schema, "local_batch");
		c.local_lr = vpa_cfg_num(cfg, &schema, "local_lr");
		c.server_lr = vpa_cfg_num(cfg, &schema, "server_lr");
		c.beta1 = vpa_cfg_num(cfg, &schema, "beta1");
		c.beta2 = vpa_cfg_num(cfg, &schema, "beta2");
		c.tau = vpa_cfg_num(cfg, &schema, "tau");
		const char *sv = vpa_cfg_str(cfg, &schema, "server");
		c.fedadam = !strcmp(sv, "fedadam") ? 1 : !strcmp(sv, "fedadam_reddi") ? 2 : 0;
		c.server_eps = vpa_cfg_num(cfg, &schema, "server_eps");
		c.utt_mean = !strcmp(vpa_cfg_str(cfg, &schema, "loss_average"), "utterance");
		c.n_ckpt = (size_t)vpa_cfg_int(cfg, &schema, "checkpoints");
		double target_eps = vpa_cfg_num(cfg, &schema, "target_epsilon");
		double q = c.federated ? fmin(1, (double)c.cohort / (double)Kc)
				       : (double)c.batch / (double)tr.n;
		double steps = c.federated ? (double)c.rounds
					   : (double)(c.epochs * ((tr.n + c.batch - 1) / c.batch));
		if (!c.federated && q > 1)
			q = 1;
		if (target_eps > 0) {
			if ((rc = vpa_dp_sigma(q, target_eps, steps, c.delta, &c.sigma, err)))
				goto out;
		}
		c.dp = c.sigma > 0;
		size_t total = c.federated ? c.rounds : c.epochs;
		lt->ckpt = xcalloc(c.n_ckpt + 1, sizeof(*lt->ckpt));
		lt->time_unit = c.federated ? "round" : "epoch";
		vpa_json_set_str(info, "model", "lstm");
		vpa_json_set_num(info, "vocabulary", (double)V);
		vpa_json_set_num(info, "embedding", (double)E);
		vpa_json_set_num(info, "hidden", (double)Hd);
		vpa_json_set_num(info, "layers", (double)nl);
		vpa_json_set_num(info, "parameters", (double)lt->n_params);
		vpa_json_set_num(info, "train_sentences", (double)n_train_text);
		vpa_json_set_num(info, "train_tokens", (double)tr.off[n_train_text]);
		vpa_json_set_num(info, "canary_sentences", (double)n_canary_sents);
		vpa_json_set_num(info, "heldout_sentences", (double)ho.n);
		vpa_json_set_str(info, "training", c.federated ? "federated" : (c.dp ? "dp-sgd" : "adam"));
		vpa_json_set_num(info, "noise_multiplier", c.sigma);
		vpa_json_set_num(info, "clip", c.dp ? c.clip : NAN);
		vpa_json_set_num(info, "delta", c.dp ? c.delta : NAN);
		vpa_json_set_str(info, "anonymise", strategy);
		vpa_json_set_str(info, "confidence", cm);
		if (c.federated)
			rc = vpa_lm_train_federated(ctx, lt, &tr, Kc, sent_w, tok_w, &c, info, err);
		else
			rc = vpa_lm_train_central(ctx, lt, &tr, sent_w, tok_w, &c, info, err);
		(void)total;
		if (rc)
			goto out;
		if (!c.dp)
			vpa_json_set(info, "epsilon", vpa_json_null());
		double ppl;
		if ((rc = vpa_lm_perplexity(lt->net, ho.tok, ho.off, ho.n, lt->bos, lt->eos, &ppl, err)))
			goto out;
		vpa_json_set_num(info, "perplexity", ppl);
		struct vpa_json *ck = vpa_json_arr();
		for (size_t i = 0; i < lt->n_ckpt; i++)
			vpa_json_push(ck, vpa_json_num(lt->ckpt[i].when));
		vpa_json_set(info, "checkpoints", ck);
	text_only:;
	}
	lt->source = VPA_LM_LSTM;
	/* keep the text (the canary copies are the last sentences of tr) */
	lt->n_train = tr.n - n_canary_total;
	lt->train_tok = tr.tok;
	lt->train_off = tr.off;
	lt->n_test = ho.n;
	lt->test_tok = ho.tok;
	lt->test_off = ho.off;
	tr.tok = ho.tok = NULL;
	tr.off = ho.off = NULL;
out:
	free(path);
	for (size_t i = 0; i < n_extra; i++)
		free(extra[i]);
	free(extra);
	free(names);
	free(vids);
	free(keep);
	free(canary_group);
	free(sent_w);
	for (size_t i = 0; i < n_plan; i++)
		free(plan[i].seq);
	free(plan);
	free(anon_tok);
	vpa_gazetteer_free(gz);
	vpa_lm_sents_release(&tr);
	vpa_lm_sents_release(&ho);
	vpa_corpus_release(&corp);
	return rc;
}

static int build(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg, struct vpa_target *out,
		 struct vpa_err *err)
{
	struct vpa_lm_target *lt = xcalloc(1, sizeof(*lt));
	struct vpa_json *info = vpa_json_obj();
	out->data = lt;
	out->info = info;
	int imp = !strcmp(vpa_cfg_str(cfg, &schema, "source"), "import");
	out->simulated = 0;
	vpa_json_set_str(info, "source", imp ? "import" : "train");
	int rc = imp ? build_import(ctx, cfg, lt, info, err) : build_trained(ctx, cfg, lt, info, err);
	if (!rc) {
		struct vpa_json *ca = vpa_json_arr();
		for (size_t i = 0; i < lt->n_canaries; i++) {
			struct vpa_json *o = vpa_json_obj();
			vpa_json_set_str(o, "name", lt->canaries[i].name);
			vpa_json_set_str(o, "template", lt->canaries[i].tmpl);
			vpa_json_set_str(o, "secret", lt->canaries[i].secret_text);
			vpa_json_set_num(o, "insertions", (double)lt->canaries[i].insertions);
			vpa_json_set_num(o, "others", (double)lt->canaries[i].others);
			vpa_json_set_num(o, "space", lt->canaries[i].space);
			vpa_json_push(ca, o);
		}
		vpa_json_set(info, "canaries", ca);
	}
	return rc;
}

const struct vpa_target_kind vpa_target_language_model = {
	.name = "language_model",
	.schema = &schema,
	.doc = "A word-level LSTM language model trained by vpaudit on the Brown corpus or a "
	       "plain-text corpus (centrally with Adam or DP-SGD, or federated with FedAvg/"
	       "FedAdam and per-client clipping and noise), with canaries inserted into the "
	       "training text, optional text anonymisation and confidence weights; or an "
	       "imported ARPA model or candidate log-perplexities.  Attack it with `exposure`.",
	.validate = validate,
	.build = build,
	.free = lm_free,
};
