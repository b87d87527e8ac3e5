/*
 * learn/ngram.c - interpolated Kneser-Ney n-gram training, written out as an
 * exact ARPA back-off model (formats/arpa.h documents the estimator).
 *
 * Why ARPA: an interpolated model p(w|h) = alpha(h w) + gamma(h) p(w|h') is
 * exactly a back-off model whose stored n-grams carry the full interpolated
 * probability and whose contexts carry gamma(h) as back-off weight, so one
 * scorer (formats/io_arpa.c) serves imported and trained models, and a trained
 * model can be written for SRILM/KenLM users to check.
 *
 * Counting uses vpa_arpa tables as plain hash maps (the log-prob slot holds
 * a count): raw counts, adjusted (continuation) counts, and per-context sums.
 */
#include "learn/ngram.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double get_lp(const struct vpa_arpa *t, const int32_t *ids, size_t k)
{
	double v = 0;
	vpa_arpa_get(t, ids, k, &v, NULL);
	return v;
}

/* Add (dlp, dbow) to the entry's values (created at 0). */
static void add(struct vpa_arpa *t, const int32_t *ids, size_t k, double dlp, double dbow)
{
	double lp = 0, bow = 0;
	vpa_arpa_get(t, ids, k, &lp, &bow);
	vpa_arpa_set(t, ids, k, lp + dlp, bow + dbow);
}

int vpa_ngram_train_kn(const uint32_t *const *sents, const size_t *lens, size_t n_sents,
		       const char *const *vocab, size_t n_vocab, size_t order,
		       struct vpa_arpa **out, struct vpa_err *err)
{
	*out = NULL;
	if (order < 1 || order > VPA_ARPA_MAX_ORDER)
		return vpa_fail(err, VPA_EINPUT, NULL, "n-gram order %zu: expected 1 to %d", order,
				VPA_ARPA_MAX_ORDER);
	if (n_vocab == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "n-gram training needs a vocabulary");
	for (size_t i = 0; i < n_vocab; i++)
		if (!strcmp(vocab[i], "<s>") || !strcmp(vocab[i], "</s>"))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"vocabulary word %zu is '%s': <s> and </s> are added by "
					"the trainer", i, vocab[i]);
	for (size_t s = 0; s < n_sents; s++)
		for (size_t i = 0; i < lens[s]; i++)
			if (sents[s][i] >= n_vocab)
				return vpa_fail(err, VPA_EINPUT, NULL,
						"sentence %zu: word id %u >= vocabulary size %zu", s,
						sents[s][i], n_vocab);

	size_t N = order;
	struct vpa_arpa *m = vpa_arpa_new(N);
	for (size_t i = 0; i < n_vocab; i++)
		vpa_arpa_add_word(m, vocab[i]); /* model id i = vocabulary id i (duplicates merge) */
	int32_t *map = xmalloc(xmul(n_vocab, sizeof(int32_t)));
	for (size_t i = 0; i < n_vocab; i++)
		map[i] = vpa_arpa_word(m, vocab[i]);
	int32_t bos = vpa_arpa_add_word(m, "<s>"), eos = vpa_arpa_add_word(m, "</s>");
	size_t nw = vpa_arpa_vocab_size(m);
	/* the same word table in the counting tables, so ids agree */
	struct vpa_arpa *raw = vpa_arpa_new(N), *adj = vpa_arpa_new(N), *ctx = vpa_arpa_new(N);
	for (size_t i = 0; i < nw; i++) {
		vpa_arpa_add_word(raw, vpa_arpa_word_str(m, (int32_t)i));
		vpa_arpa_add_word(adj, vpa_arpa_word_str(m, (int32_t)i));
		vpa_arpa_add_word(ctx, vpa_arpa_word_str(m, (int32_t)i));
	}

	/* raw counts */
	size_t cap = 0;
	int32_t *seq = NULL;
	for (size_t s = 0; s < n_sents; s++) {
		size_t L = lens[s] + 2;
		if (L > cap) {
			cap = 2 * L;
			seq = xrealloc(seq, xmul(cap, sizeof(int32_t)));
		}
		seq[0] = bos;
		for (size_t i = 0; i < lens[s]; i++)
			seq[i + 1] = map[sents[s][i]];
		seq[L - 1] = eos;
		for (size_t i = 0; i < L; i++)
			for (size_t k = 1; k <= N && i + k <= L; k++)
				add(raw, seq + i, k, 1, 0);
	}
	free(seq);

	/* adjusted counts: raw at the top order and for <s>-initial n-grams, else
	 * the number of distinct left extensions */
	size_t ne = vpa_arpa_n_entries(raw);
	for (size_t e = 0; e < ne; e++) {
		size_t k;
		double c, b;
		const int32_t *ids = vpa_arpa_entry(raw, e, &k, &c, &b);
		if (k == N || ids[0] == bos)
			add(adj, ids, k, c, 0);
		if (k >= 2)
			add(adj, ids + 1, k - 1, 1, 0);
	}
	/* count-of-counts -> discounts; context sums A(h) (lp slot), N1+(h .) (bow slot) */
	double n1[VPA_ARPA_MAX_ORDER + 1] = {0}, n2[VPA_ARPA_MAX_ORDER + 1] = {0};
	double D[VPA_ARPA_MAX_ORDER + 1];
	double A0 = 0, N0 = 0; /* the empty context (unigrams) */
	ne = vpa_arpa_n_entries(adj);
	for (size_t e = 0; e < ne; e++) {
		size_t k;
		double a, b;
		const int32_t *ids = vpa_arpa_entry(adj, e, &k, &a, &b);
		if (k == 1 && ids[0] == bos)
			continue;
		if (a == 1)
			n1[k]++;
		else if (a == 2)
			n2[k]++;
		if (k == 1) {
			A0 += a;
			N0 += a > 0;
		} else {
			add(ctx, ids, k - 1, a, a > 0);
		}
	}
	for (size_t k = 1; k <= N; k++) {
		D[k] = (n1[k] > 0 && n2[k] > 0) ? n1[k] / (n1[k] + 2 * n2[k]) : 0.5;
		if (D[k] < 0.05)
			D[k] = 0.05;
		if (D[k] > 0.95)
			D[k] = 0.95;
	}

	/* unigrams: every word but <s>, interpolated with the uniform distribution */
	double nv = (double)(nw - 1);
	double g0 = A0 > 0 ? D[1] * N0 / A0 : 1;
	for (size_t i = 0; i < nw; i++) {
		int32_t id = (int32_t)i;
		if (id == bos)
			continue;
		double a = get_lp(adj, &id, 1);
		double p = (A0 > 0 ? fmax(a - D[1], 0) / A0 : 0) + g0 / nv;
		vpa_arpa_set(m, &id, 1, log10(p), 0);
	}
	vpa_arpa_set(m, &bos, 1, -99, 0);
	/* higher orders, lowest first: first the back-off weights of the contexts,
	 * then the n-grams (whose lower-order term uses what is already stored) */
	for (size_t k = 2; k <= N; k++) {
		size_t nc = vpa_arpa_n_entries(ctx);
		for (size_t e = 0; e < nc; e++) {
			size_t kk;
			double A, n1p;
			const int32_t *h = vpa_arpa_entry(ctx, e, &kk, &A, &n1p);
			if (kk != k - 1 || A <= 0)
				continue;
			double lp = -99;
			vpa_arpa_get(m, h, kk, &lp, NULL);
			vpa_arpa_set(m, h, kk, lp, log10(D[k] * n1p / A));
		}
		for (size_t e = 0; e < ne; e++) {
			size_t kk;
			double a, b;
			const int32_t *ids = vpa_arpa_entry(adj, e, &kk, &a, &b);
			if (kk != k)
				continue;
			double A = 0, n1p = 0;
			vpa_arpa_get(ctx, ids, k - 1, &A, &n1p);
			double lower = pow(10, vpa_arpa_logprob(m, ids + 1, k - 2, ids[k - 1]));
			double p = fmax(a - D[k], 0) / A + D[k] * n1p / A * lower;
			vpa_arpa_set(m, ids, k, log10(p), 0);
		}
	}
	vpa_arpa_free(raw);
	vpa_arpa_free(adj);
	vpa_arpa_free(ctx);
	free(map);
	*out = m;
	return 0;
}
