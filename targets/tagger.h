/*
 * targets/tagger.h - target kind `tagger`: a BiLSTM part-of-speech tagger
 * trained on the Brown corpus with a coarse tag set (Helali, Kleinbauer,
 * Klakow, "Assessing Unintended Memorization in Neural Discriminative
 * Sequence Models", TSD 2020; COMPRISE D2.3 section 4.3.4), or imported
 * confidences of a user's tagger.  Implemented by targets/tagger.c (the
 * kind: keys, data, build), targets/tagger_net.c (the network, training,
 * evaluation) and targets/tagger_tags.c (the tag set, the confidence TSV);
 * used by the d-exposure attack (attacks/dexposure_train.c), which retrains
 * the tagger with canary sentences inserted.
 *
 * Coarse tag set (on vpa_brown_tag_base of each Brown tag):
 *   NOUN   nn nns nn$ nns$ nr nrs nr$        common and adverbial nouns
 *   VERB   vb vbd vbg vbn vbz, be* (be bed bedz beg bem ben ber bez),
 *          hv* (hv hvd hvg hvn hvz), do* (do dod doz), md
 *   ADJ    jj jjr jjs jjt od                  adjectives and ordinals
 *   PROPN  np nps np$ nps$                    proper nouns
 *   OTHER  everything else (determiners, pronouns, prepositions, adverbs,
 *          conjunctions, numbers, punctuation, ...)
 * (the universal-tagset mapping of Petrov et al. folded into five classes;
 * combined tags take their first part: `pps+bez` "it's" is OTHER,
 * `vb+ppo` "let's" is VERB).
 */
#ifndef VPA_TAGGER_H
#define VPA_TAGGER_H

#include "formats/corpus.h"
#include "learn/nn.h"
#include "targets/targets.h"

enum { VPA_TAG_NOUN, VPA_TAG_VERB, VPA_TAG_ADJ, VPA_TAG_PROPN, VPA_TAG_OTHER, VPA_TAG_N };
extern const char *const vpa_tag_names[VPA_TAG_N];

/* The coarse class of a raw Brown tag (any case, suffixes allowed). */
int vpa_tag_coarse(const char *brown_tag);
/* Class index of a coarse tag name, or -1. */
int vpa_tag_find(const char *name);

/* ---- imported confidences ------------------------------------------------ */

/*
 * A user's tagger confidences: lines `word class confidence` separated by
 * tabs or spaces; '#' comment lines and blank lines are skipped; CRLF is
 * fine.  class is any name [A-Za-z0-9_.$-]+ (classes are numbered in order
 * of first appearance); confidence a number in [0, 1] (the model's
 * probability of that class for the word placed in the canary's context).
 * A (word, class) pair may appear once.  Errors:
 *   "f.tsv:3: expected 3 columns 'word class confidence', found 2"
 *   "f.tsv:4:12: confidence must be a number in [0, 1], got '1.5'"
 *   "f.tsv:5:6: invalid class name 'a/b'"
 *   "f.tsv:7: duplicate word 'run' for class 'VERB' (first on line 2)"
 *   "f.tsv: no confidence line"
 */
struct vpa_tagconf {
	size_t n_class;
	char **class_name; /* (n_class) owned */
	size_t n_rows;
	char **word;       /* (n_rows) owned */
	uint32_t *cls;     /* (n_rows) */
	double *conf;      /* (n_rows) */
	long *line;        /* (n_rows) 1-based line */
};
int vpa_tagconf_parse(const char *name, const char *buf, size_t len, struct vpa_tagconf *out,
		      struct vpa_err *err);
int vpa_tagconf_read(const char *path, struct vpa_tagconf *out, struct vpa_err *err);
void vpa_tagconf_release(struct vpa_tagconf *t);

/* ---- training ------------------------------------------------------------ */

struct vpa_tagger_cfg {
	size_t embedding, hidden, vocab_size;
	double dropout, weight_decay, lr;
	int adam;           /* 1 Adam, 0 SGD (momentum 0.9) */
	size_t batch;       /* sentences per step (the expected lot size with DP) */
	size_t epochs;
	int dp;             /* DP-SGD: Poisson sampling, per-unit clipping, noise */
	int dp_user;        /* privacy unit: 0 a sentence, 1 a user (see vpa_tagger_train) */
	size_t user_sentences; /* dp_user: sentences per user (runs within a document) */
	double clip, noise_multiplier, target_epsilon, delta; /* target_epsilon > 0: sigma from it */
	uint64_t seed;
	/* DP with a deliberate defect, for testing an audit (issue 28): 0 none, 1 skip_noise
	 * (no Gaussian noise), 2 skip_clipping (no clipping; the noise still sigma * clip).
	 * The claimed epsilon stays the correct run's. */
	int fault;
};

struct vpa_tagger_opts;
/* The training settings of a `tagger` target's options (validated); seed as given. */
void vpa_tagger_cfg_from(const struct vpa_tagger_opts *o, uint64_t seed, struct vpa_tagger_cfg *c);

/* The data a tagger is trained on: the corpus, its coarse classes, a split
 * by documents, the vocabulary of the training part. */
struct vpa_tagger_data {
	struct vpa_corpus corpus;
	uint8_t *cls;           /* (corpus.n_tok) coarse class of each token, owned */
	size_t *train, n_train; /* training sentences (corpus indices), owned */
	size_t *test, n_test;   /* held-out sentences (whole documents), owned */
	size_t n_train_docs, n_test_docs;
	struct vpa_vocab vocab; /* the vocab_size most frequent training words + <unk> */
	int lower;
};
void vpa_tagger_data_release(struct vpa_tagger_data *d);

/* Extra training sentences (canaries): `reps` copies of one sentence. */
struct vpa_tagger_extra {
	const uint32_t *ids;    /* (len) vocabulary ids; (n_distinct * len) when n_distinct > 1 */
	const uint32_t *labels; /* (len) coarse classes; the same layout */
	size_t len, reps;
	/* 0 or 1: one sentence, reps copies (one privacy unit under dp_user: the
	 * canary's owner).  > 1: n_distinct sentences of len tokens each, every one
	 * inserted once (reps ignored) and its own privacy unit under dp_user too:
	 * the audit canaries of a one-run DP audit (issue 28). */
	size_t n_distinct;
};

struct vpa_tagger_stats {
	double epsilon;     /* DP only (else NAN); per privacy unit */
	double sigma, q;    /* DP noise multiplier and sampling rate */
	size_t units;       /* DP: privacy units sampled from (sentences or users) */
	double steps;
	double train_loss;  /* mean token loss of the last epoch */
	double seconds, tokens_per_s;
	size_t n_params;
};

/* Called after each epoch (1-based); a non-zero return stops with that status. */
typedef int (*vpa_tagger_epoch_fn)(void *arg, size_t epoch, struct vpa_nn *net,
				   double train_loss, struct vpa_err *err);

/*
 * Train a tagger (embedding -> dropout -> BiLSTM -> dropout -> dense to the
 * five classes) on the sentences `sents` of d plus the extra sentences.
 * Without DP: each epoch shuffles and takes batches of cfg->batch sentences
 * (Adam or SGD on the mean token loss).  With DP: each step draws a Poisson
 * sample (each example with q = batch / N, N = sentences + extra copies),
 * clips each example's gradient to cfg->clip, adds N(0, (sigma clip)^2) and
 * divides by q N (vpa_nn_dpsgd_step); epochs * round(1/q) steps; epsilon
 * from the RDP accountant (metrics/metrics.h) at cfg->delta.  With
 * cfg->dp_user the privacy unit is a user instead of a sentence: the
 * training sentences form users of cfg->user_sentences consecutive sentences
 * of one document (the last run of a document may be shorter), the extra
 * copies are all held by one more user (the canary's owner), lots are
 * Poisson samples of users with q = batch / users, and each user's gradient
 * (of its mean sentence loss) is clipped as a whole (vpa_nn_dpsgd_step_units):
 * epsilon then bounds what a user's data reveals, all k copies together.
 * *out: caller frees with vpa_nn_free.
 */
int vpa_tagger_train(const struct vpa_tagger_data *d, const struct vpa_tagger_cfg *cfg,
		     const size_t *sents, size_t n_sents, const struct vpa_tagger_extra *extra,
		     vpa_tagger_epoch_fn cb, void *arg, struct vpa_nn **out,
		     struct vpa_tagger_stats *st, struct vpa_err *err);

/* Token accuracy and mean token loss on sentences of d (EVAL mode). */
int vpa_tagger_eval(struct vpa_nn *net, const struct vpa_tagger_data *d, const size_t *sents,
		    size_t n, double *accuracy /* OUT */, double *loss /* OUT, may be NULL */,
		    struct vpa_err *err);

/*
 * Class probabilities at position `slot` of the sentence ctx (len ids) with
 * the slot filled by each of words[0..n): probs (n, VPA_TAG_N).  One EVAL
 * batch of n sequences.
 */
int vpa_tagger_slot_probs(struct vpa_nn *net, const uint32_t *ctx, size_t len, size_t slot,
			  const uint32_t *words, size_t n, double *probs /* OUT */,
			  struct vpa_err *err);

/* What a built `tagger` target holds (target->data). */
struct vpa_tagger_target {
	int imported;
	/* source: train */
	struct vpa_tagger_data data;
	struct vpa_tagger_cfg cfg;
	struct vpa_nn *net;      /* the tagger trained without canary, owned */
	double accuracy;
	/* source: import */
	struct vpa_tagconf conf;
	char *canary;            /* the canary word of the import, owned */
	char *conf_path;         /* for messages, owned */
};

extern const struct vpa_target_kind vpa_target_tagger;

/* ---- the options of the kind (config/schema.h "Typed options"; filled by validation) ---- */

struct vpa_tagger_opts {
	const char *source;
	const char *corpus;
	long long max_docs;
	double test_fraction;
	int lower;
	long long vocab_size;
	long long embedding;
	long long hidden;
	double dropout;
	double weight_decay;
	const char *optimizer;
	double lr;
	long long batch;
	long long epochs;
	int dp;
	const char *dp_unit;
	long long user_sentences;
	double clip;
	double noise_multiplier;
	double target_epsilon;
	double delta;
	const char *confidences;
	const char *canary;
	struct vpa_mark source_at, corpus_at, max_docs_at, test_fraction_at, lower_at,
		vocab_size_at, embedding_at, hidden_at, dropout_at, weight_decay_at,
		optimizer_at, lr_at, batch_at, epochs_at, dp_at, dp_unit_at,
		user_sentences_at, clip_at, noise_multiplier_at, target_epsilon_at,
		delta_at, confidences_at, canary_at;
};


#endif
