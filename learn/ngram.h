/*
 * learn/ngram.h - n-gram language models trained from text: interpolated
 * Kneser-Ney, written out as an exact ARPA back-off model (formats/arpa.h
 * holds the format, the scorer and the builder it uses).
 */
#ifndef VPA_NGRAM_H
#define VPA_NGRAM_H

#include "formats/arpa.h"

/* ---- Kneser-Ney training (learn/ngram.c) ---------------------------------- */

/*
 * Interpolated Kneser-Ney (Chen & Goodman 1998, one discount per order,
 * D_k = n1 / (n1 + 2 n2) from the count-of-counts of that order's adjusted
 * counts; 0.5 when n1 or n2 is 0, clamped to [0.05, 0.95]) of the given order,
 * trained on sentences of word ids (ids < n_vocab index `vocab`), each padded
 * as <s> w_1 .. w_n </s>.  Adjusted counts: raw counts at the highest order
 * and for n-grams starting with <s>; otherwise the number of distinct words
 * seen before the n-gram (continuation counts).  The unigram distribution is
 * interpolated with the uniform one over the vocabulary plus </s> (so every
 * vocabulary word has a non-zero probability); <s> gets log10 p = -99.  The
 * result is an exact back-off representation: for a stored n-gram (h, w) its
 * interpolated probability, and for each context h its interpolation weight
 * gamma(h) = D_k N1+(h .) / sum_w a(h w) as back-off weight.  vocab[i] must
 * not be "<s>" or "</s>"; "<unk>" may be one of them.
 * Errors: order outside 1..VPA_ARPA_MAX_ORDER, no vocabulary, an id >= n_vocab.
 */
int vpa_ngram_train_kn(const uint32_t *const *sents, const size_t *lens, size_t n_sents,
		       const char *const *vocab, size_t n_vocab, size_t order,
		       struct vpa_arpa **out, struct vpa_err *err);

#endif
