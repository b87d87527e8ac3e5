/*
 * bench/bench_lm.c - the language-model target's speeds, against the SGEMM
 * peak measured in the same run:
 *   1. LSTM LM training (the target's default size: vocabulary 10,000 +
 *      <unk>, <s>, </s>, embedding 256, one LSTM layer of 256; Adam; batches
 *      of 32 sentences of 20 words): tokens/s and GFLOP/s, where a token
 *      costs 6 (V H + 4 H (E + H)) FLOPs forward + backward (the products; the
 *      softmax and gates are not counted), as a ratio to SGEMM;
 *   2. exact exposure of a 10^4 PIN space ("my pin number is {d4}") on that
 *      model: every candidate scored with shared prefixes (target: < 2 s);
 *      the same 10^4 sequences scored one by one as the naive baseline;
 *   3. the ARPA scorer: 3-gram KN model on 20,000 random sentences, scoring
 *      throughput in words/s.
 * Usage: bench_lm [threads]  (default 2).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/arpa.h"
#include "base/base.h"
#include "base/la.h"
#include "learn/nn.h"
#include "targets/lm.h"

static double sgemm_gflops(size_t n)
{
	float *a = malloc(n * n * sizeof(float)), *b = malloc(n * n * sizeof(float)),
	      *c = malloc(n * n * sizeof(float));
	struct vpa_rng r;
	vpa_rng_seed(&r, 1);
	for (size_t i = 0; i < n * n; i++) {
		a[i] = (float)vpa_rng_uniform(&r);
		b[i] = (float)vpa_rng_uniform(&r);
	}
	vpa_sgemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
	double best = 1e30;
	for (int k = 0; k < 4; k++) {
		double t0 = vpa_now();
		vpa_sgemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
		double t = vpa_now() - t0;
		best = t < best ? t : best;
	}
	free(a);
	free(b);
	free(c);
	return 2.0 * n * n * n / best / 1e9;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	vpa_la_set_threads(threads);
	struct vpa_err err;
	vpa_err_init(&err);
	double peak = sgemm_gflops(2048);
	printf("SGEMM 2048^3, %d threads:                       %8.1f GFLOP/s\n", threads, peak);

	size_t V = 10003, E = 256, H = 256, B = 32, T = 20;
	struct vpa_nn *net = vpa_nn_new(0);
	vpa_nn_add_embedding(net, V, E);
	vpa_nn_add_lstm(net, H, 0);
	vpa_nn_add_dense(net, V);
	vpa_nn_init_params(net, 1);
	size_t np;
	vpa_nn_params(net, &np);
	struct vpa_optim o;
	vpa_optim_init_adam(&o, np, 0.002, 0.9, 0.999, 1e-8, 0);
	uint32_t *ids = malloc(B * T * sizeof(uint32_t)), *lab = malloc(B * T * sizeof(uint32_t));
	size_t off[33];
	struct vpa_rng r;
	vpa_rng_seed(&r, 2);
	for (size_t b = 0; b <= B; b++)
		off[b] = b * T;
	struct vpa_nn_batch nb = {B, off, NULL, ids};
	struct vpa_nn_targets tg;
	vpa_nn_targets_init(&tg);
	tg.labels = lab;
	double best = 1e30, loss;
	for (int k = 0; k < 6; k++) {
		for (size_t i = 0; i < B * T; i++) {
			ids[i] = (uint32_t)vpa_rng_below(&r, V);
			lab[i] = (uint32_t)vpa_rng_below(&r, V);
		}
		double t0 = vpa_now();
		if (vpa_nn_train_step(net, &o, &nb, &tg, 5, &loss, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		double t = vpa_now() - t0;
		if (k > 0 && t < best)
			best = t;
	}
	double tok_s = (double)(B * T) / best;
	double flop_tok = 6.0 * ((double)V * H + 4.0 * H * (E + H));
	double gf = tok_s * flop_tok / 1e9;
	printf("LSTM LM train step (V %zu, E %zu, H %zu, %zux%zu tokens): %.0f tokens/s, %.1f GFLOP/s\n",
	       V, E, H, B, T, tok_s, gf);
	printf("ratio: LSTM LM training / SGEMM = %.3f\n", gf / peak);
	printf("  one epoch of the Brown corpus (1.16M tokens) would take about %.0f s\n",
	       1.16e6 / tok_s);
	vpa_optim_release(&o);
	free(ids);
	free(lab);

	/* exposure of a 10^4 PIN space */
	struct vpa_lm_target t;
	memset(&t, 0, sizeof(t));
	t.source = VPA_LM_LSTM;
	t.net = net;
	t.bos = (uint32_t)(V - 2);
	size_t L = 8, M = 10000;
	uint32_t *seqs = malloc(M * L * sizeof(uint32_t));
	for (size_t m = 0; m < M; m++) {
		uint32_t pre[4] = {101, 2002, 303, 44};
		memcpy(seqs + m * L, pre, sizeof(pre));
		for (size_t d = 0, x = m; d < 4; d++, x /= 10)
			seqs[m * L + 7 - d] = (uint32_t)(10 + x % 10);
	}
	double *lp = malloc(M * sizeof(double)), *lp1 = malloc(M * sizeof(double));
	double t0 = vpa_now();
	if (vpa_lm_logppl(&t, 0, seqs, M, L, 0, lp, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double te = vpa_now() - t0;
	printf("exact exposure, 10^4 PINs after a 4-word prefix (shared prefixes): %.3f s "
	       "(target < 2 s)\n", te);
	/* baseline: score 200 sequences one by one, extrapolate to 10^4 */
	size_t n1 = 200;
	t0 = vpa_now();
	for (size_t m = 0; m < n1; m++)
		vpa_lm_logppl(&t, 0, seqs + m * 49 * L, 1, L, 0, lp1 + m, &err);
	double t1 = (vpa_now() - t0) / (double)n1 * (double)M;
	double dmax = 0;
	for (size_t m = 0; m < n1; m++)
		dmax = fmax(dmax, fabs(lp1[m] - lp[m * 49]));
	printf("baseline: one sequence at a time (extrapolated):      %.3f s\n", t1);
	printf("ratio: shared prefixes / one at a time = %.4f   (max |difference| %.2g bits)\n",
	       te / t1, dmax);
	free(seqs);
	free(lp);
	free(lp1);
	vpa_nn_free(net);

	/* the ARPA scorer */
	size_t NS = 20000, SL = 15, NV = 5000;
	const char **vocab = malloc(NV * sizeof(char *));
	char (*names)[16] = malloc(NV * 16);
	for (size_t i = 0; i < NV; i++) {
		snprintf(names[i], 16, "w%zu", i);
		vocab[i] = names[i];
	}
	uint32_t *toks = malloc(NS * SL * sizeof(uint32_t));
	const uint32_t **ss = malloc(NS * sizeof(uint32_t *));
	size_t *lens = malloc(NS * sizeof(size_t));
	for (size_t s = 0; s < NS; s++) {
		for (size_t i = 0; i < SL; i++) /* Zipf-like: squares of uniforms */
			toks[s * SL + i] = (uint32_t)(pow(vpa_rng_uniform(&r), 2) * NV);
		ss[s] = toks + s * SL;
		lens[s] = SL;
	}
	struct vpa_arpa *m = NULL;
	t0 = vpa_now();
	if (vpa_ngram_train_kn(ss, lens, NS, vocab, NV, 3, &m, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double ttrain = vpa_now() - t0;
	const char *w[15];
	double sum = 0;
	t0 = vpa_now();
	for (size_t s = 0; s < NS; s++) {
		for (size_t i = 0; i < SL; i++)
			w[i] = vocab[toks[s * SL + i]];
		sum += vpa_arpa_sentence(m, w, SL, NULL);
	}
	double tsc = vpa_now() - t0;
	printf("KN 3-gram training on %zu words: %.2f s; ARPA scoring: %.2f M words/s (log10 sum %.1f)\n",
	       NS * SL, ttrain, (double)(NS * (SL + 1)) / tsc / 1e6, sum);
	vpa_arpa_free(m);
	free(vocab);
	free(names);
	free(toks);
	free(ss);
	free(lens);
	return 0;
}
