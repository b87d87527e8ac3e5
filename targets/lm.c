/*
 * targets/lm.c - target kind `language_model`: what a scenario may write
 * (its keys, struct vpa_lm_opts and struct vpa_lm_canary_opts in
 * targets/lm.h) and the checks across keys at validation; building is in
 * targets/lm_build.c, training in targets/lm_train.c, canary templates in
 * targets/lm_canary.c, scoring in targets/lm_score.c.  Documentation:
 * targets/README.md "language_model".
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
	{"audit_canaries", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "200",
	 "DP audit (issue 28): this many canaries of `audit_template`, each inserted once with "
	 "probability 1/2 (seeded; the target info records which); the `exposure` attack audits "
	 "the claimed epsilon with them in one training run (Steinke, Nasr, Jagielski 2023)",
	 VPA_AT(struct vpa_lm_opts, audit_canaries), VPA_MARK(struct vpa_lm_opts, audit_canaries_at)},
	{"audit_template", VPA_K_STR, 0, "the access code is {d4}", -INFINITY, INFINITY, 0, NULL,
	 NULL, "\"the access code is {d4}\"",
	 "the audit canaries' template (as a canary's `template`; its secrets are distinct)",
	 VPA_AT(struct vpa_lm_opts, audit_template), VPA_MARK(struct vpa_lm_opts, audit_template_at)},
	{"dp_fault", VPA_K_ENUM, 0, "none", -INFINITY, INFINITY, 0, "none|skip_noise|skip_clipping",
	 NULL, "skip_noise",
	 "for testing an audit: train with a deliberate DP defect (`skip_noise`: no Gaussian noise; "
	 "`skip_clipping`: no per-sentence (per-client) clipping, noise still sigma * clip); the "
	 "claimed epsilon is printed unchanged",
	 VPA_AT(struct vpa_lm_opts, dp_fault), VPA_MARK(struct vpa_lm_opts, dp_fault_at)},
	{NULL},
};
static const struct vpa_schema schema = {"target language_model", keys, sizeof(struct vpa_lm_opts)};

/* Validation: every word exists, each with its own id. */
static uint32_t any_word(void *ctx, const char *w)
{
	(void)w;
	return (*(uint32_t *)ctx)++;
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, struct vpa_err *err)
{
	const struct vpa_lm_opts *o = opts;
	int imp = !strcmp(o->source, "import");
	/* the whole target's mapping */
	struct vpa_loc loc = vpa_mark_loc(ctx->file, ctx->self);
	if (imp && (o->audit_canaries > 0 || strcmp(o->dp_fault, "none"))) {
		int au = o->audit_canaries > 0;
		struct vpa_loc kl = vpa_mark_key_loc(ctx->file, au ? o->audit_canaries_at
								   : o->dp_fault_at);
		return vpa_fail(err, VPA_EINPUT, &kl, "'%s' needs a model vpaudit trains (not "
				"'source: import')", au ? "audit_canaries" : "dp_fault");
	}
	if (imp) {
		if (!!o->model == !!o->candidates)
			return vpa_fail(err, VPA_EINPUT, &loc, "language_model import needs exactly one "
					"of 'model' (ARPA) or 'candidates'");
		if (o->candidates && !o->canary_logppl_at.line)
			return vpa_fail(err, VPA_EINPUT, &loc, "'candidates' needs 'canary_logppl'");
		const char *f = o->model ? o->model : o->candidates;
		char *path = vpa_path_join(ctx->dir, f);
		struct stat st;
		int bad = stat(path, &st) != 0 || S_ISDIR(st.st_mode);
		free(path);
		if (bad) {
			struct vpa_loc fl = vpa_mark_loc(ctx->file, o->model ? o->model_at
									: o->candidates_at);
			return vpa_fail(err, VPA_EINPUT, &fl, "cannot open '%s'", f);
		}
	} else if (o->model || o->candidates) {
		struct vpa_loc kl = vpa_mark_key_loc(ctx->file, o->model ? o->model_at
								      : o->candidates_at);
		return vpa_fail(err, VPA_EINPUT, &kl, "'%s' needs 'source: import'",
				o->model ? "model" : "candidates");
	}
	if ((o->audit_canaries > 0 || strcmp(o->dp_fault, "none")) && o->noise_multiplier <= 0 &&
	    o->target_epsilon <= 0) {
		int au = o->audit_canaries > 0;
		struct vpa_loc kl = vpa_mark_key_loc(ctx->file, au ? o->audit_canaries_at
								   : o->dp_fault_at);
		return vpa_fail(err, VPA_EINPUT, &kl, "'%s' needs a DP claim to %s: set "
				"'noise_multiplier' or 'target_epsilon'", au ? "audit_canaries" : "dp_fault",
				au ? "audit" : "break");
	}
	if (o->audit_canaries > 0) {
		/* the template's checks; its space must hold the distinct secrets and a rival */
		struct vpa_loc tl = vpa_mark_loc(ctx->file, o->audit_template_at.line
							    ? o->audit_template_at : ctx->self);
		struct vpa_lm_canary cc;
		struct vpa_err e2;
		vpa_err_init(&e2);
		uint32_t ids[2] = {1, 2}, next = 10;
		const char *nm[2] = {"a", "b"};
		if (vpa_lm_parse_template("x", o->audit_template, any_word, &next, nm, 2, ids, 2, &cc,
					  &e2))
			return vpa_fail(err, VPA_EINPUT, &tl, "audit_template: %s",
					e2.msg + strlen("canary 'x': "));
		int word = strstr(o->audit_template, "{word}") || strstr(o->audit_template, "{name}");
		double space = cc.space;
		vpa_lm_canary_release(&cc);
		if (!word && space < 2.0 * (double)o->audit_canaries) {
			struct vpa_loc al = vpa_mark_loc(ctx->file, o->audit_canaries_at);
			return vpa_fail(err, VPA_EINPUT, &al, "audit_canaries %lld: the template's %.0f "
					"secrets must be at least twice as many (distinct secrets, and "
					"rivals to rank them against)", o->audit_canaries, space);
		}
	}
	for (size_t i = 0; i < o->canaries.n; i++) {
		const struct vpa_lm_canary_opts *c =
			VPA_OPTLIST_AT(struct vpa_lm_canary_opts, o->canaries, i);
		/* names (default c1, c2, ...) are the records' subs: unique, as ids are */
		char base[64];
		vpa_lm_canary_base(c->name, i, base, sizeof(base));
		for (size_t j = 0; j < i; j++) {
			const struct vpa_lm_canary_opts *first =
				VPA_OPTLIST_AT(struct vpa_lm_canary_opts, o->canaries, j);
			char other[64];
			vpa_lm_canary_base(first->name, j, other, sizeof(other));
			if (strcmp(base, other))
				continue;
			/* a name left out: the canary's mapping */
			struct vpa_loc nl = vpa_mark_loc(ctx->file, c->name ? c->name_at
									: o->canaries.marks[i]);
			long fline = first->name ? first->name_at.line : o->canaries.marks[j].line;
			return vpa_fail(err, VPA_EINPUT, &nl,
					"duplicate canary name '%s' (first at line %ld%s)", base, fline,
					first->name ? "" : ", by default");
		}
		struct vpa_loc tl = vpa_mark_loc(ctx->file, c->template_at);
		struct vpa_lm_canary cc;
		struct vpa_err e2;
		vpa_err_init(&e2);
		uint32_t ids[2] = {1, 2}, next = 10;
		const char *nm[2] = {"a", "b"};
		if (vpa_lm_parse_template("x", c->template, any_word, &next, nm, 2, ids, 2, &cc, &e2))
			return vpa_fail(err, VPA_EINPUT, &tl, "%s", e2.msg + strlen("canary 'x': "));
		vpa_lm_canary_release(&cc);
		/* the default [16] needs no check: only counts written are checked */
		const struct vpa_strs *ins = &c->insertions;
		if (ins->given && imp) {
			struct vpa_loc il = vpa_mark_key_loc(ctx->file, c->insertions_at);
			return vpa_fail(err, VPA_EINPUT, &il, "'insertions' does not apply to an "
					"imported model: it cannot be retrained (its canary is `secret`, "
					"inserted when the model was trained)");
		}
		for (size_t j = 0; ins->given && j < ins->n; j++) {
			char *end;
			long x = strtol(ins->v[j], &end, 10);
			if (*end || x < 1 || x > 1000000) {
				struct vpa_loc vl = vpa_mark_loc(ctx->file, ins->marks[j]);
				return vpa_fail(err, VPA_EINPUT, &vl, "insertions must be integers in "
						"[1, 1000000]");
			}
			for (size_t k = 0; k < j; k++)
				if (strtol(ins->v[k], NULL, 10) == x) {
					/* one canary (record sub NAME-xN) per count */
					struct vpa_loc vl = vpa_mark_loc(ctx->file, ins->marks[j]);
					return vpa_fail(err, VPA_EINPUT, &vl,
							"duplicate insertion count %ld of canary '%s'",
							x, base);
				}
		}
		if (imp && o->model && !c->secret)
			return vpa_fail(err, VPA_EINPUT, &tl, "a canary of an imported model needs "
					"'secret' (the text that was inserted)");
	}
	return 0;
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
	.build = vpa_lm_build,
	.free = vpa_lm_free,
};
