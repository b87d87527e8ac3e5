/*
 * formats/arpa.h - back-off n-gram language models: the ARPA text format
 * (SRILM / KenLM), scoring and writing; the Kneser-Ney trainer that builds
 * one is learn/ngram.h.
 *
 * Scoring follows metrics/README.md ("ARPA language models") to the letter:
 *   - log10 probabilities and log10 back-off weights, as stored in the file;
 *   - the history of a sentence starts at <s>; <s> itself is not scored;
 *   - p(w | h): the longest stored n-gram (h', w) with h' a suffix of h (at most
 *     order-1 words) gives log10 p(w | h) = lp(h', w) + sum of the back-off
 *     weights bow(g) of every context g of h that was skipped on the way down
 *     (bow(g) = 0 when the n-gram g is absent or has no back-off);
 *   - </s> is scored at the end of every sentence.
 * Unknown words map to <unk> when the model has it (KenLM); without <unk> they
 * are skipped and counted as OOV (SRILM: "OOVs"), their probability is not
 * added and they stay in the history, where no stored n-gram can match them.
 *
 * Accepted files: optional blank lines (and anything before \data\ that is
 * blank), `\data\`, `ngram K=COUNT` for K = 1..order (order <= 16), then per
 * order `\K-grams:` with COUNT lines `logprob w1 .. wK [backoff]` (fields
 * separated by spaces or tabs, no back-off at the highest order), blank lines
 * between sections, `\end\`.  CRLF is accepted.  Rejected with one line
 * `FILE:LINE: what was expected`: a missing or malformed header, a count that
 * does not match the lines of its section, a log probability that is not a
 * number in [-1000, 0], a back-off weight that is not a number in
 * [-1000, 1000] (back-offs may be positive), a duplicate n-gram, an n-gram whose words
 * are not unigrams, a missing \end\, text after \end\, a NUL byte.
 */
#ifndef VPA_ARPA_H
#define VPA_ARPA_H

#include "base/base.h"

#define VPA_ARPA_MAX_ORDER 16
#define VPA_ARPA_NONE (-1) /* a word id that matches no stored n-gram (OOV) */

struct vpa_arpa; /* opaque */

/* Parse an ARPA text held in memory (the fuzz entry point); name for messages.
 * *out: caller frees with vpa_arpa_free; NULL on error. */
int vpa_arpa_parse(const char *name, const char *buf, size_t len, struct vpa_arpa **out,
		   struct vpa_err *err);
/* Read and parse a file (VPA_EIO when it cannot be read). */
int vpa_arpa_load(const char *path, struct vpa_arpa **out, struct vpa_err *err);
void vpa_arpa_free(struct vpa_arpa *m);

size_t vpa_arpa_order(const struct vpa_arpa *m);
size_t vpa_arpa_vocab_size(const struct vpa_arpa *m);
/* Number of stored n-grams of order k (1-based). */
size_t vpa_arpa_count(const struct vpa_arpa *m, size_t k);
/* Word id of w, or VPA_ARPA_NONE when it is not a unigram. */
int32_t vpa_arpa_word(const struct vpa_arpa *m, const char *w);
/* Word id of w, <unk> when absent and the model has it, else VPA_ARPA_NONE. */
int32_t vpa_arpa_word_or_unk(const struct vpa_arpa *m, const char *w);
/* The spelling of a word id (borrowed, valid until vpa_arpa_free). */
const char *vpa_arpa_word_str(const struct vpa_arpa *m, int32_t id);
/* Ids of <s>, </s>, <unk> (VPA_ARPA_NONE when absent). */
int32_t vpa_arpa_bos(const struct vpa_arpa *m);
int32_t vpa_arpa_eos(const struct vpa_arpa *m);
int32_t vpa_arpa_unk(const struct vpa_arpa *m);

/*
 * log10 p(w | ctx): ctx (n ids, oldest first; only the last order-1 are used;
 * may hold VPA_ARPA_NONE).  w == VPA_ARPA_NONE returns 0 (an OOV adds nothing:
 * the caller counts it).
 */
double vpa_arpa_logprob(const struct vpa_arpa *m, const int32_t *ctx, size_t n, int32_t w);

/*
 * log10 p(sentence) = sum over w_1 .. w_n, </s> of log10 p(w_i | <s> w_1 .. w_{i-1})
 * (words need not be in the model; see the top of this file).  *n_oov (may be
 * NULL) gets the number of skipped OOV words.  Perplexity as SRILM's ppl:
 * 10^(-logprob / (n - n_oov + 1)).
 */
double vpa_arpa_sentence(const struct vpa_arpa *m, const char *const *words, size_t n,
			 size_t *n_oov /* OUT */);

/* ARPA text of the model (n-grams in the order they were added). */
void vpa_arpa_write(const struct vpa_arpa *m, struct vpa_buf *out);

/* ---- building a model in code (learn/ngram.c uses these) ------------------ */

/* An empty model of the given order (1..VPA_ARPA_MAX_ORDER).  Caller frees. */
struct vpa_arpa *vpa_arpa_new(size_t order);
/* Add (or find) a word; returns its id. */
int32_t vpa_arpa_add_word(struct vpa_arpa *m, const char *w);
/* Store n-gram ids (k ids, 1 <= k <= order) with log10 prob and back-off
 * (bow 0 is "none").  Replaces an existing entry. */
void vpa_arpa_set(struct vpa_arpa *m, const int32_t *ids, size_t k, double logprob,
		  double bow);
/* Look an n-gram up: 1 and its values when stored, else 0. */
int vpa_arpa_get(const struct vpa_arpa *m, const int32_t *ids, size_t k,
		 double *logprob /* OUT, may be NULL */, double *bow /* OUT, may be NULL */);

/* Number of stored n-grams of all orders, and entry i (0-based, in the order
 * they were added): its ids (borrowed, valid until the next vpa_arpa_set),
 * order and values. */
size_t vpa_arpa_n_entries(const struct vpa_arpa *m);
const int32_t *vpa_arpa_entry(const struct vpa_arpa *m, size_t i, size_t *k /* OUT */,
			      double *logprob /* OUT */, double *bow /* OUT */);

#endif
