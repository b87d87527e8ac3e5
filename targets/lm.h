/*
 * targets/lm.h - language models as audit targets: the kind `language_model`
 * (targets/lm.c its keys and checks, targets/lm_build.c building: a
 * word-level LSTM LM trained centrally, with DP-SGD or by federated learning
 * with DP, or an imported ARPA model or candidate log-perplexities), canaries
 * (templates with slots, inserted before training), the prefix-sharing
 * candidate scorer the `exposure` attack uses, and the text anonymisation
 * strategies applied before training (targets/textanon.c).
 * targets/README.md ("language_model") documents the keys, the training
 * algorithms and the measured speeds.
 */
#ifndef VPA_LM_H
#define VPA_LM_H

#include "learn/ngram.h"
#include "formats/corpus.h"
#include "learn/nn.h"
#include "targets/targets.h"

/* ---- canaries -------------------------------------------------------------- */

/*
 * A canary template is text with slots, tokenised like the corpus:
 *   {d4}            four positions, each a digit token 0..9 (a PIN: 10^4 values)
 *   {dN}            N digit positions (1 <= N <= 9)
 *   {name}          one position: a first name from the name list
 *   {word}          one position: any vocabulary word but <unk>, <s>, </s>
 *   {choice:a|b|c}  one position: one of the listed words
 * e.g. "my pin number is {d4}", "{name} is suffering from {word}".
 * The candidate space is the product of the positions' alternatives.
 */
struct vpa_lm_pos {
	uint32_t *alt; /* (n_alt) token ids allowed here, owned; n_alt == 1: a fixed word */
	size_t n_alt;
};

struct vpa_lm_canary {
	char *name;        /* the sub of exposure records: "pin-x16", owned */
	char *tmpl;        /* the template text, owned */
	size_t L;          /* positions (tokens) */
	struct vpa_lm_pos *pos; /* (L), owned */
	uint32_t *secret;  /* (L) the inserted value's token ids, owned */
	char *secret_text; /* owned */
	size_t insertions; /* how many times it was inserted (0 for imports) */
	size_t others;     /* multiple insertion: other secrets of the same format inserted */
	uint32_t *excl;    /* (n_excl, L) other tracked secrets of the same template, removed
			      from the candidate set when ranking this one, owned */
	size_t n_excl;
	double space;      /* product of n_alt */
};
void vpa_lm_canary_release(struct vpa_lm_canary *c);

/* ---- the target `language_model` ------------------------------------------- */

enum vpa_lm_source { VPA_LM_LSTM, VPA_LM_ARPA, VPA_LM_CANDIDATES };

/* Parameters after some training (for exposure against epochs/rounds). */
struct vpa_lm_checkpoint {
	double when;   /* epoch or round number */
	float *params; /* (n_params), owned */
};

struct vpa_lm_target {
	enum vpa_lm_source source;
	/* LSTM */
	struct vpa_nn *net;      /* embedding -> lstm x layers -> dense(V), owned */
	struct vpa_vocab vocab;  /* id 0 <unk>, then words; owned */
	uint32_t bos, eos;       /* ids of <s>, </s> in vocab */
	size_t n_params;
	struct vpa_lm_checkpoint *ckpt; /* (n_ckpt), owned; the last equals the final model */
	size_t n_ckpt;
	const char *time_unit;   /* "epoch" or "round" (static) */
	/* the text it was trained on (vocabulary ids), for the text_linkage attack:
	 * training sentences without the canary copies, and the held-out ones */
	uint32_t *train_tok, *test_tok; /* owned */
	size_t *train_off, *test_off;   /* (n_train + 1), (n_test + 1), owned */
	size_t n_train, n_test;
	/* ARPA */
	struct vpa_arpa *arpa;   /* owned */
	/* canaries (LSTM and ARPA) */
	struct vpa_lm_canary *canaries; /* (n_canaries), owned */
	size_t n_canaries;
	/* candidates file (source: import, candidates:) */
	double cand_canary;      /* the canary's log-perplexity */
	double *cand;            /* (n_cand), owned */
	size_t n_cand;
	char *cand_name;         /* sub name, owned */
	/* the one-run DP audit (issue 28): audit canaries of one template, each
	 * inserted once with probability 1/2; audit.pos and audit.L the template,
	 * audit.secret (n_audit, L) every canary's secret, in[] which were inserted */
	struct vpa_lm_canary audit;
	size_t n_audit;
	unsigned char *audit_in; /* (n_audit), owned */
	const char *dp_fault;    /* "none", "skip_noise", "skip_clipping" (the option) */
	const char *dp_unit;     /* the DP adjacency in words (static), NULL without DP */
};

extern const struct vpa_target_kind vpa_target_language_model;

/*
 * Log-perplexity in bits, -sum_t log2 p(x_t | <s> x_1 .. x_{t-1}), of M token
 * sequences of length L (seqs (M, L) row-major, vocabulary ids of the target),
 * into out (M).  By default the sentence end </s> is not part of a canary (the
 * secret sharer's and TF Privacy's convention: the secret's tokens only);
 * sentence_end != 0 adds -log2 p(</s> | <s> x_1 .. x_L), as a sentence-level
 * LM scores a sentence (SRILM/KenLM), for ARPA and LSTM models alike.  For the LSTM,
 * `ckpt` picks a checkpoint (n_ckpt - 1 = the final model); sequences sharing a
 * prefix share its computation (the LSTM state after a prefix is computed once
 * and branched per continuation), so the 10^4 PINs after a common prefix cost
 * 1 + 10 + 100 + 1000 softmax rows.  Errors: a token id out of range.
 */
int vpa_lm_logppl(const struct vpa_lm_target *t, size_t ckpt, const uint32_t *seqs, size_t M,
		  size_t L, int sentence_end, double *out /* OUT (M) */, struct vpa_err *err);

/*
 * Row weights for the loss of Liu et al. eq. 2-4: sentence j holds rows
 * off[j] .. off[j+1]-1 (its tokens and </s>, T_j rows); w (off[n]) holds each
 * row's weight (1, or its confidence, eq. 3-4) and is scaled in place by
 * R / (n_eff T_j), so that the weighted mean over the R rows, (1/R) sum_r w_r
 * loss_r, becomes (1/n_eff) sum_j (1/T_j) sum_t w_jt loss_jt: the mean over
 * sentences of each one's mean over its tokens.  n_eff counts the sentences
 * with a nonzero weight (hard thresholding drops the others, eq. 2's n_b).
 */
void vpa_lm_utt_mean_weights(const size_t *off, size_t n, float *w /* IN/OUT (off[n]) */);

/* Held-out perplexity (natural exp of the mean token NLL, </s> included) of the
 * LSTM with the given parameters on sentences (ids) with offsets. */
int vpa_lm_perplexity(struct vpa_nn *net, const uint32_t *tok, const size_t *off, size_t n,
		      uint32_t bos, uint32_t eos, double *ppl /* OUT */, struct vpa_err *err);

/*
 * Parse a template into positions against a vocabulary given by a lookup
 * (word -> id, or UINT32_MAX when absent).  names: the {name} list (borrowed).
 * vocab_ids: the {word} alternatives (borrowed, copied).  Errors name the
 * template: "canary 'x': unknown slot '{foo}': expected {dN}, {name}, {word}
 * or {choice:a|b}", "canary 'x': word 'zz' is not in the model's vocabulary".
 */
int vpa_lm_parse_template(const char *cname, const char *tmpl,
			  uint32_t (*lookup)(void *ctx, const char *w), void *ctx,
			  const char *const *names, size_t n_names, const uint32_t *vocab_ids,
			  size_t n_vocab_ids, struct vpa_lm_canary *out, struct vpa_err *err);

/*
 * The `names` file of a target `lm` (extra first names for {name} and the
 * gazetteer) in memory (buf need not be NUL-terminated); name is for messages.
 * One name per line: blank lines and lines starting with '#' are skipped,
 * blanks around a name are dropped, A-Z is lowered, CRLF is accepted.
 * Errors, one line each ("names.txt:3: ..."): a UTF-8 byte order mark, a NUL
 * byte (before, the rest of the file was dropped without a word), a line of
 * two words or more ("expected one name per line, got 'mary ann'": a name is
 * one token of a canary and of the gazetteer), a word the model reserves
 * (<s>, </s>, <unk>).  On success *names (caller frees each and the array)
 * gets *n names (none for a file of comments); on error nothing is returned.
 */
int vpa_lm_parse_names(const char *name, const char *buf, size_t len, char ***names /* OUT */,
		       size_t *n /* OUT */, struct vpa_err *err);

/* The built-in list of first names ({name} slot, gazetteer). */
extern const char *const vpa_first_names[];
extern const size_t vpa_n_first_names;

/* ---- text anonymisation (targets/textanon.c; COMPRISE D2.3 4.3.1) ------------ */

enum vpa_ent_type { VPA_ENT_NONE = 0, VPA_ENT_PERSON, VPA_ENT_NUMBER, VPA_ENT_PROPER,
		    VPA_ENT_N_TYPES };

enum vpa_anon_strategy {
	VPA_ANON_NONE,
	VPA_ANON_REDACT,            /* every entity span -> one "<redacted>" token */
	VPA_ANON_TYPED_PLACEHOLDER, /* span -> "<person>", "<number>", "<proper>" */
	VPA_ANON_NAMED_PLACEHOLDER, /* span -> "<person_3>": one index per distinct entity
				       within a document (co-reference kept) */
	VPA_ANON_WORD_BY_WORD,      /* each token of a span -> a random word of the same
				       type, drawn per occurrence */
	VPA_ANON_FULL_ENTITY,       /* the whole span -> one random entity of the same
				       type, the same surrogate for every occurrence of that
				       entity in a document */
};
/* "redact", ... -> strategy; -1 when unknown. */
int vpa_anon_strategy_parse(const char *s);

/*
 * The gazetteer detector: a word is PERSON when it is in the first-name list
 * (vpa_first_names plus `extra_names`), NUMBER when it is made of digits (with
 * inner '.' or ',') or, in a tagged corpus, tagged `cd`, PROPER when, in a
 * tagged corpus, some occurrence of it is tagged `np*` (the corpus-wide
 * proper-noun list, so untagged occurrences are caught too).  Adjacent tokens
 * of one type form one entity span.  Lookups are case-insensitive.
 */
struct vpa_gazetteer;
struct vpa_gazetteer *vpa_gazetteer_new(const struct vpa_corpus *c, const char *const *extra_names,
					size_t n_extra);
void vpa_gazetteer_free(struct vpa_gazetteer *g);
enum vpa_ent_type vpa_gazetteer_type(const struct vpa_gazetteer *g, const char *w, const char *tag);

/*
 * Anonymise sentences: in (tokens with offsets, n sentences, doc of each
 * sentence for the per-document consistency; tags may be NULL) -> out, a new
 * token list with its own offsets (owned strings: caller frees each and the
 * arrays).  Surrogates are drawn from rng.  *n_spans gets the number of entity
 * spans replaced.
 */
struct vpa_textanon_out {
	char **tok;    /* (n_tok), owned strings */
	size_t n_tok;
	size_t *off;   /* (n_sent + 1), owned */
	size_t n_spans;
};
void vpa_textanon_out_release(struct vpa_textanon_out *o);
int vpa_textanon(const struct vpa_gazetteer *g, enum vpa_anon_strategy s, const char *const *tok,
		 const char *const *tags, const size_t *off, const size_t *doc, size_t n_sent,
		 struct vpa_rng *rng, struct vpa_textanon_out *out, struct vpa_err *err);

/* ---- the options of the kind (config/schema.h "Typed options"; filled by validation) ----
 * Read by targets/lm.c and targets/lm_build.c, and by the attacks on the kind
 * (attacks/exposure.c, attacks/text_linkage.c) as their target's options. */

struct vpa_lm_canary_opts {
	const char *name;
	const char *template;
	struct vpa_strs insertions;
	long long others;
	const char *secret;
	struct vpa_mark name_at, template_at, insertions_at, others_at, secret_at;
};

struct vpa_lm_opts {
	const char *source;
	const char *corpus;
	const char *corpus_path;
	long long max_documents;
	long long max_sentences;
	long long max_len;
	double heldout;
	long long vocab_size;
	long long embedding;
	long long hidden;
	int lstm;
	long long layers;
	const char *training;
	long long epochs;
	long long batch;
	double lr;
	double grad_clip;
	double noise_multiplier;
	double clip;
	double target_epsilon;
	double delta;
	const char *clients;
	long long n_clients;
	double zipf_s;
	long long cohort;
	long long rounds;
	long long local_epochs;
	double local_lr;
	long long local_batch;
	const char *server;
	double server_lr;
	double beta1;
	double beta2;
	double server_eps;
	double tau;
	const char *loss_average;
	const char *confidence;
	double wer;
	double threshold;
	const char *anonymise;
	const char *names;
	struct vpa_optlist canaries;
	long long checkpoints;
	const char *model;
	const char *candidates;
	double canary_logppl;
	long long audit_canaries;
	const char *audit_template;
	const char *dp_fault;
	struct vpa_mark source_at, corpus_at, corpus_path_at, max_documents_at,
		max_sentences_at, max_len_at, heldout_at, vocab_size_at, embedding_at,
		hidden_at, lstm_at, layers_at, training_at, epochs_at, batch_at, lr_at,
		grad_clip_at, noise_multiplier_at, clip_at, target_epsilon_at, delta_at,
		clients_at, n_clients_at, zipf_s_at, cohort_at, rounds_at, local_epochs_at,
		local_lr_at, local_batch_at, server_at, server_lr_at, beta1_at, beta2_at,
		server_eps_at, tau_at, loss_average_at, confidence_at, wer_at,
		threshold_at, anonymise_at, names_at, canaries_at, checkpoints_at,
		model_at, candidates_at, canary_logppl_at,
		audit_canaries_at, audit_template_at, dp_fault_at;
};


#endif
