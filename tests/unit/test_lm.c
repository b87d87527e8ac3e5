/*
 * tests/unit/test_lm.c - the language_model target and the exposure attack:
 *   - canary templates (slots, spaces, errors);
 *   - the prefix-sharing scorer equals the engine's forward pass, sequence by
 *     sequence (independent code path: vpa_nn_forward + log-softmax);
 *   - ARPA-backed scoring against hand-computed log-probabilities;
 *   - end to end on a synthetic plain-text corpus: a canary inserted 32 times
 *     is ranked first among 10^3 candidates (exposure = log2 999), exposure
 *     grows with insertions, exact and extrapolated exposure agree within 1 bit
 *     where the canary is not ranked first, DP-SGD at epsilon ~ 1 lowers it,
 *     federated training runs and reports q, rounds and epsilon;
 *   - the held-out perplexity of a uniform model equals the vocabulary size.
 * The same on the Brown corpus is in tests/e2e/test_lm.sh (skipped without it).
 */
#include "config/yaml.h"
#include "attacks/attacks.h"
#include "harness.h"
#include "targets/lm.h"
#include "metrics/pld.h"

#include <stdlib.h>
#include <unistd.h>

static uint32_t lk(void *ctx, const char *w)
{
	const struct vpa_vocab *v = ctx;
	uint32_t id = vpa_vocab_id(v, w);
	return id == VPA_VOCAB_UNK ? UINT32_MAX : id;
}

static void test_template(void)
{
	struct vpa_vocab v;
	vpa_vocab_init(&v);
	const char *ws[] = {"my", "pin", "is", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
			    "john", "mary", "has", "flu", "cold"};
	for (size_t i = 0; i < 18; i++)
		vpa_vocab_add(&v, ws[i]);
	const char *names[] = {"john", "mary", "zed"};
	uint32_t vids[3] = {1, 2, 3};
	struct vpa_lm_canary c;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_lm_parse_template("pin", "My PIN is {d4}", lk, &v, names, 3, vids, 3, &c, &err) == 0);
	CHECK(c.L == 7);
	CHECK_NEAR(c.space, 1e4, 0);
	CHECK(c.pos[0].n_alt == 1 && c.pos[0].alt[0] == vpa_vocab_id(&v, "my"));
	CHECK(c.pos[6].n_alt == 10);
	vpa_lm_canary_release(&c);
	CHECK(vpa_lm_parse_template("d", "{name} has {choice:flu|cold|flu}", lk, &v, names, 3, vids, 3,
				    &c, &err) == 0);
	CHECK(c.L == 3 && c.pos[0].n_alt == 2 && c.pos[2].n_alt == 2); /* zed unknown; flu twice */
	CHECK_NEAR(c.space, 4, 0);
	vpa_lm_canary_release(&c);
	CHECK(vpa_lm_parse_template("w", "my {word}", lk, &v, names, 3, vids, 3, &c, &err) == 0);
	CHECK_NEAR(c.space, 3, 0);
	vpa_lm_canary_release(&c);
	struct {
		const char *t, *msg;
	} bad[] = {
		{"my {foo}", "canary 'x': unknown slot '{foo}': expected {dN} (N = 1..9), {name}, {word} "
			     "or {choice:a|b}"},
		{"my pin", "canary 'x': template 'my pin' has no slot"},
		{"my {d4", "canary 'x': '{' without '}' in 'my {d4'"},
		{"zzz {d2}", "canary 'x': word 'zzz' is not in the model's vocabulary"},
		{"{choice:flu}", "canary 'x': {choice:...} needs at least 2 different words"},
		{"my } pin {d1}", "canary 'x': '}' without '{' in 'my } pin {d1}'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		vpa_err_init(&err);
		CHECK(vpa_lm_parse_template("x", bad[i].t, lk, &v, names, 3, vids, 3, &c, &err) ==
		      VPA_EINPUT);
		CHECK_STR(err.msg, bad[i].msg);
	}
	vpa_vocab_release(&v);
}

/* Sum of log2 p(x_t | <s> x_<t) by the engine's forward pass on one sequence. */
static double engine_logppl(struct vpa_nn *net, uint32_t bos, const uint32_t *x, size_t L)
{
	uint32_t ids[16];
	size_t off[2] = {0, L};
	ids[0] = bos;
	memcpy(ids + 1, x, (L - 1) * sizeof(uint32_t));
	struct vpa_nn_batch b = {1, off, NULL, ids};
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_nn_forward(net, &b, VPA_NN_EVAL, &err))
		return NAN;
	size_t R, K;
	const float *z = vpa_nn_output(net, &R, &K);
	float *ls = malloc(R * K * sizeof(float));
	vpa_nn_log_softmax(z, R, K, ls);
	double s = 0;
	for (size_t t = 0; t < L; t++)
		s += ls[t * K + x[t]];
	free(ls);
	return -s / log(2.0);
}

/* The same with the sentence end: + -log2 p(eos | <s> x_1 .. x_L). */
static double engine_logppl_end(struct vpa_nn *net, uint32_t bos, uint32_t eos, const uint32_t *x,
				size_t L)
{
	uint32_t ids[16];
	size_t off[2] = {0, L + 1};
	ids[0] = bos;
	memcpy(ids + 1, x, L * sizeof(uint32_t));
	struct vpa_nn_batch b = {1, off, NULL, ids};
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_nn_forward(net, &b, VPA_NN_EVAL, &err))
		return NAN;
	size_t R, K;
	const float *z = vpa_nn_output(net, &R, &K);
	float *ls = malloc(R * K * sizeof(float));
	vpa_nn_log_softmax(z, R, K, ls);
	double s = 0;
	for (size_t t = 0; t < L; t++)
		s += ls[t * K + x[t]];
	s += ls[L * K + eos];
	free(ls);
	return -s / log(2.0);
}

static void check_scorer(size_t layers)
{
	size_t V = 13, E = 5, H = 7;
	struct vpa_lm_target t;
	memset(&t, 0, sizeof(t));
	t.source = VPA_LM_LSTM;
	t.net = vpa_nn_new(0);
	vpa_nn_add_embedding(t.net, V, E);
	for (size_t l = 0; l < layers; l++)
		vpa_nn_add_lstm(t.net, H, 0);
	vpa_nn_add_dense(t.net, V);
	vpa_nn_init_params(t.net, 42 + layers);
	t.bos = 12;
	/* 3 digits after a fixed prefix of 2, plus two unrelated sequences */
	size_t L = 5, M = 0;
	uint32_t seqs[1002 * 5];
	for (uint32_t a = 0; a < 10; a++)
		for (uint32_t b = 0; b < 10; b++)
			for (uint32_t c = 0; c < 10; c++) {
				uint32_t s[5] = {10, 11, a, b, c};
				memcpy(seqs + M++ * L, s, sizeof(s));
			}
	uint32_t s1[5] = {3, 3, 3, 3, 3}, s2[5] = {11, 10, 0, 0, 0};
	memcpy(seqs + M++ * L, s1, sizeof(s1));
	memcpy(seqs + M++ * L, s2, sizeof(s2));
	double *out = malloc(M * sizeof(double));
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_lm_logppl(&t, 0, seqs, M, L, 0, out, &err) == 0);
	double worst = 0;
	for (size_t m = 0; m < M; m += (m < 990 ? 37 : 1)) {
		double e = engine_logppl(t.net, t.bos, seqs + m * L, L);
		if (fabs(e - out[m]) > worst)
			worst = fabs(e - out[m]);
	}
	CHECK(worst < 1e-3); /* float32 forward passes, different summation orders */
	/* sentence_end: the sentence end after each sequence, against the engine
	 * on L + 1 positions (fails without the extra step: the same as above) */
	t.eos = 9;
	double *oe = malloc(M * sizeof(double));
	CHECK(vpa_lm_logppl(&t, 0, seqs, M, L, 1, oe, &err) == 0);
	double worst_e = 0, min_gap = INFINITY;
	for (size_t m = 0; m < M; m += (m < 990 ? 37 : 1)) {
		double e = engine_logppl_end(t.net, t.bos, t.eos, seqs + m * L, L);
		worst_e = fmax(worst_e, fabs(e - oe[m]));
		min_gap = fmin(min_gap, oe[m] - out[m]);
	}
	CHECK(worst_e < 1e-3);
	CHECK(min_gap > 0.01); /* -log2 p(</s>) of a random 13-word model: about log2 13 */
	free(oe);
	/* one sequence alone gives the same as in the shared batch */
	double one;
	CHECK(vpa_lm_logppl(&t, 0, seqs + 500 * L, 1, L, 0, &one, &err) == 0);
	CHECK_NEAR(one, out[500], 1e-4);
	uint32_t badseq[5] = {0, 1, 2, 3, 99};
	CHECK(vpa_lm_logppl(&t, 0, badseq, 1, L, 0, &one, &err) == VPA_EINPUT);
	free(out);
	vpa_nn_free(t.net);
}

static void test_scorer_matches_engine_1layer(void) { check_scorer(1); }
static void test_scorer_matches_engine_2layers(void) { check_scorer(2); }

/*
 * Liu et al. eq. 2-4: the weighted mean over rows with vpa_lm_utt_mean_weights
 * equals the mean over sentences of each one's (confidence-weighted) mean over
 * its tokens, computed directly in double; and its gradient matches central
 * finite differences.  Before the change the loss was the mean over all tokens
 * (checked to differ here: sentences of 2, 4 and 7 rows).
 */
static void test_utt_mean_loss(void)
{
	enum { K = 6, R = 13 };
	const size_t off[4] = {0, 2, 6, 13}, n = 3;
	float z[R * K], w[R], d[R * K];
	float conf[R];
	uint32_t y[R];
	struct vpa_rng r;
	vpa_rng_seed(&r, 5);
	for (size_t i = 0; i < R; i++) {
		for (size_t k = 0; k < K; k++)
			z[i * K + k] = (float)(2 * vpa_rng_normal(&r));
		y[i] = (uint32_t)vpa_rng_below(&r, K);
		conf[i] = (float)(0.2 + 0.8 * vpa_rng_uniform(&r));
	}
	for (int weighted = 0; weighted < 2; weighted++) {
		/* direct: (1/n) sum_j (1/T_j) sum_t c_jt (-log softmax(z)[y]) */
		double direct = 0, token_mean = 0;
		for (size_t j = 0; j < n; j++) {
			double sj = 0;
			for (size_t t = off[j]; t < off[j + 1]; t++) {
				double mx = z[t * K], s = 0;
				for (size_t k = 1; k < K; k++)
					mx = fmax(mx, z[t * K + k]);
				for (size_t k = 0; k < K; k++)
					s += exp(z[t * K + k] - mx);
				double l = (mx + log(s) - z[t * K + y[t]]) * (weighted ? conf[t] : 1);
				sj += l;
				token_mean += l / R;
			}
			direct += sj / (double)(off[j + 1] - off[j]) / (double)n;
		}
		for (size_t i = 0; i < R; i++)
			w[i] = weighted ? conf[i] : 1;
		vpa_lm_utt_mean_weights(off, n, w);
		struct vpa_nn_targets tg;
		vpa_nn_targets_init(&tg);
		tg.labels = y;
		tg.weights = w;
		double loss;
		struct vpa_err err;
		vpa_err_init(&err);
		CHECK(vpa_nn_softmax_ce(z, R, K, NULL, n, &tg, &loss, d, &err) == 0);
		CHECK_NEAR(loss, direct, 1e-6);
		CHECK(fabs(token_mean - direct) > 1e-2); /* the two averages differ here */
		double worst = 0, scale = 0;
		for (size_t j = 0; j < R * K; j++)
			scale = fmax(scale, fabs(d[j]));
		for (size_t j = 0; j < R * K; j++) {
			float z0 = z[j];
			double lp, lm;
			z[j] = z0 + 1e-2f;
			float hp = z[j] - z0;
			vpa_nn_softmax_ce(z, R, K, NULL, n, &tg, &lp, NULL, &err);
			z[j] = z0 - 1e-2f;
			float hm = z0 - z[j];
			vpa_nn_softmax_ce(z, R, K, NULL, n, &tg, &lm, NULL, &err);
			z[j] = z0;
			worst = fmax(worst, fabs((lp - lm) / ((double)hp + hm) - d[j]) / scale);
		}
		CHECK(scale > 1e-3);
		CHECK(worst < 1e-3);
	}
	/* hard thresholding: a sentence of zero weight is not counted in n */
	float wh[R];
	for (size_t i = 0; i < R; i++)
		wh[i] = i < 2 ? 0.0f : 1.0f;
	vpa_lm_utt_mean_weights(off, n, wh);
	CHECK(wh[0] == 0 && wh[1] == 0);
	CHECK_NEAR(wh[2], 13.0 / (2 * 4), 1e-6);
	CHECK_NEAR(wh[6], 13.0 / (2 * 7), 1e-6);
}

static void test_uniform_perplexity(void)
{
	/* all-zero parameters: every next-word distribution is uniform over V */
	size_t V = 17;
	struct vpa_nn *net = vpa_nn_new(0);
	vpa_nn_add_embedding(net, V, 4);
	vpa_nn_add_lstm(net, 3, 0);
	vpa_nn_add_dense(net, V);
	uint32_t tok[6] = {1, 2, 3, 4, 5, 6};
	size_t off[3] = {0, 2, 6};
	double ppl;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_lm_perplexity(net, tok, off, 2, 15, 16, &ppl, &err) == 0);
	CHECK_NEAR(ppl, 17, 1e-4);
	vpa_nn_free(net);
}

static void test_arpa_scoring(void)
{
	struct vpa_lm_target t;
	memset(&t, 0, sizeof(t));
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_arpa_load("tests/e2e/data/lm/small.arpa", &t.arpa, &err) == 0);
	if (!t.arpa)
		return;
	t.source = VPA_LM_ARPA;
	uint32_t a = (uint32_t)vpa_arpa_word(t.arpa, "a"), b = (uint32_t)vpa_arpa_word(t.arpa, "b");
	uint32_t seqs[4] = {a, b, a, a};
	double out[2];
	CHECK(vpa_lm_logppl(&t, 0, seqs, 2, 2, 0, out, &err) == 0);
	/* "a b": -(-0.4 - 0.2) log2(10); "a a": a|<s> -0.4, a|<s> a: bow(<s> a) -0.1 +
	 * bow(a) -0.3 + p(a) -0.6 = -1.0 -> 1.4 log2(10)  (no </s>: not part of a canary) */
	CHECK_NEAR(out[0], 0.6 * log2(10.0), 1e-12);
	CHECK_NEAR(out[1], 1.4 * log2(10.0), 1e-12);
	/* sentence_end: "a b </s>": + trigram -0.25 -> 0.85 log2(10); "a a </s>":
	 * no "a a </s>", bow("a a") absent (0), no "a </s>": bow(a) -0.3 + p(</s>) -1.2
	 * -> 1.4 + 1.5 = 2.9 log2(10) */
	CHECK(vpa_lm_logppl(&t, 0, seqs, 2, 2, 1, out, &err) == 0);
	CHECK_NEAR(out[0], 0.85 * log2(10.0), 1e-12);
	CHECK_NEAR(out[1], 2.9 * log2(10.0), 1e-12);
	vpa_arpa_free(t.arpa);
}

/* ---- end to end on a synthetic corpus ------------------------------------------ */

/* A corpus of 3000 sentences from a small grammar (file written to /tmp). */
static const char *synthetic_corpus(void)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/vpa_test_lm_%d.txt", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return NULL;
	const char *subj[] = {"the cat", "a dog", "my friend", "the man", "our teacher", "she", "he"};
	const char *verb[] = {"sees", "likes", "paints", "finds", "wants", "sells"};
	const char *obj[] = {"the house", "a car", "the river", "some bread", "a red boat", "the key",
			     "a book", "the garden"};
	struct vpa_rng r;
	vpa_rng_seed(&r, 3);
	const char *pre[] = {"my room number is", "the code is", "call me at", "my number is",
			     "the pin was"};
	for (int i = 0; i < 3000; i++) {
		if (vpa_rng_below(&r, 4) == 0) { /* digits in many contexts, uniformly random */
			fprintf(f, "%s", pre[vpa_rng_below(&r, 5)]);
			for (int k = 0; k < 3; k++)
				fprintf(f, " %d", (int)vpa_rng_below(&r, 10));
		} else {
			fprintf(f, "%s %s %s", subj[vpa_rng_below(&r, 7)], verb[vpa_rng_below(&r, 6)],
				obj[vpa_rng_below(&r, 8)]);
		}
		fprintf(f, " .\n");
	}
	fclose(f);
	return path;
}

struct built {
	struct vpa_target t;
	struct vpa_json *records, *figures, *warnings;
	int rc;
};

static void build_and_attack(const char *yaml_target, struct built *b)
{
	struct vpa_err err;
	vpa_err_init(&err);
	memset(b, 0, sizeof(*b));
	struct vpa_ynode *cfg = NULL, *acfg = NULL;
	b->rc = vpa_yaml_parse("t.yaml", yaml_target, strlen(yaml_target), &cfg, &err);
	if (!b->rc)
		b->rc = vpa_yaml_parse("a.yaml", "{max_exact: 100000}", 19, &acfg, &err);
	struct vpa_kind_ctx kc = {"t.yaml", "."};
	const struct vpa_schema *sch[] = {vpa_target_language_model.schema};
	if (!b->rc)
		b->rc = vpa_schema_check(&kc, sch, 1, cfg, "target 'lm'", &err);
	const struct vpa_schema *ls = vpa_target_language_model.schema;
	void *opts = b->rc ? NULL : vpa_opts_new(ls, cfg);
	if (!b->rc)
		b->rc = vpa_target_language_model.validate(&kc, opts, &err);
	b->warnings = vpa_json_arr();
	struct vpa_run_ctx ctx = {"t.yaml", ".", 7, 1, b->warnings, NULL};
	b->t.kind = &vpa_target_language_model;
	b->t.id = "lm";
	if (!b->rc)
		b->rc = vpa_target_language_model.build(&ctx, opts, &b->t, &err);
	b->t.opts = opts; /* released with the target, as the pipeline's */
	const struct vpa_attack_kind *ek = vpa_attack_kind_find("exposure");
	void *aopts = b->rc ? NULL : vpa_opts_new(ek->schema, acfg);
	struct vpa_attack_out out = {vpa_json_arr(), vpa_json_arr()};
	b->records = out.records;
	b->figures = out.figures;
	if (!b->rc)
		b->rc = ek->run(&ctx, "exp", aopts, &b->t, &out, &err);
	if (b->rc)
		printf("#   %s\n", err.msg);
	vpa_opts_free(ek->schema, aopts);
	vpa_ynode_free(cfg);
	vpa_ynode_free(acfg);
}

static void built_release(struct built *b)
{
	vpa_target_release(&b->t);
	vpa_json_free(b->records);
	vpa_json_free(b->figures);
	vpa_json_free(b->warnings);
}

static double metric(const struct built *b, const char *sub, const char *key)
{
	for (size_t i = 0; b->records && i < b->records->n; i++) {
		const struct vpa_json *r = b->records->items[i];
		if (!strcmp(vpa_json_get_str(r, "sub"), sub))
			return vpa_json_get_num(vpa_json_get(r, "metrics"), key, NAN);
	}
	return NAN;
}

#define LM_COMMON                                                                         \
	"{corpus: text, corpus_path: %s, vocab_size: 100, embedding: 16, hidden: 32, "    \
	"max_len: 20, checkpoints: 3, "                                                  \
	"canaries: [{name: pin, template: \"my pin number is {d3}\", insertions: [1, 8, 32]}], "

static void test_exposure_end_to_end(void)
{
	const char *corpus = synthetic_corpus();
	CHECK(corpus != NULL);
	if (!corpus)
		return;
	char y[1024];
	struct built b;
	snprintf(y, sizeof(y), LM_COMMON "epochs: 4, batch: 32, lr: 0.01}", corpus);
	build_and_attack(y, &b);
	CHECK(b.rc == 0);
	double e1 = metric(&b, "pin-x1", "exposure"), e4 = metric(&b, "pin-x8", "exposure"),
	       e32 = metric(&b, "pin-x32", "exposure");
	double mx = metric(&b, "pin-x32", "max_exposure");
	printf("# no DP: exposure x1 %.2f, x8 %.2f, x32 %.2f (max %.2f), extrapolated x32 %.2f, "
	       "perplexity %.2f\n", e1, e4, e32, mx, metric(&b, "pin-x32", "exposure_extrapolated"),
	       metric(&b, "pin-x32", "perplexity"));
	CHECK_NEAR(mx, log2(997.0), 1e-12); /* 10^3 minus the canary and the 2 other secrets */
	CHECK(e32 > mx - 0.5);              /* ranked first or second */
	CHECK(e32 >= e4 && e4 > e1);
	for (size_t i = 0; i < b.records->n; i++) {
		const struct vpa_json *m = vpa_json_get(b.records->items[i], "metrics");
		double ex = vpa_json_get_num(m, "exposure", NAN), xt = vpa_json_get_num(m, "exposure_extrapolated", NAN);
		if (vpa_json_get_num(m, "rank", 1) > 1)
			CHECK(fabs(ex - xt) < 1);
		CHECK(ex == ex && xt == xt);
	}
	CHECK(b.figures->n == 2); /* against insertions, against epochs */
	built_release(&b);

	/* DP-SGD at epsilon 1 */
	snprintf(y, sizeof(y), LM_COMMON "epochs: 4, batch: 64, lr: 0.01, target_epsilon: 1, clip: 1}",
		 corpus);
	build_and_attack(y, &b);
	CHECK(b.rc == 0);
	double d32 = metric(&b, "pin-x32", "exposure"), eps = metric(&b, "pin-x32", "epsilon");
	printf("# DP-SGD: epsilon %.3f, exposure x32 %.2f, perplexity %.2f\n", eps, d32,
	       metric(&b, "pin-x32", "perplexity"));
	/* target_epsilon picks sigma by RDP; the claim is the smaller of RDP and PLD (issue 28) */
	double eps_rdp = metric(&b, "pin-x32", "epsilon_rdp");
	CHECK(eps_rdp > 0.9 && eps_rdp <= 1.0 + 1e-9);
	CHECK(eps > 0 && eps <= eps_rdp);
	CHECK(d32 < e32 - 3);
	built_release(&b);

	/* federated with DP: runs, reports q, rounds and epsilon */
	snprintf(y, sizeof(y), LM_COMMON "training: federated, n_clients: 50, cohort: 10, rounds: 20, "
		 "noise_multiplier: 0.5, clip: 0.5, local_lr: 0.5}", corpus);
	build_and_attack(y, &b);
	CHECK(b.rc == 0);
	if (!b.rc) {
		CHECK_NEAR(vpa_json_get_num(b.t.info, "q", NAN), 0.2, 1e-12);
		CHECK_NEAR(vpa_json_get_num(b.t.info, "rounds", NAN), 20, 0);
		double fe = vpa_json_get_num(b.t.info, "epsilon", NAN), ref = NAN;
		struct vpa_err err;
		vpa_err_init(&err);
		vpa_dp_epsilon(0.2, 0.5, 20, 1e-5, &ref, NULL, &err);
		/* issue 28: both accountants recorded, the claim is the smaller, named */
		double rdp = vpa_json_get_num(b.t.info, "epsilon_rdp", NAN);
		double pld = vpa_json_get_num(b.t.info, "epsilon_pld", NAN), pref = NAN;
		CHECK_NEAR(rdp, ref, 1e-12);
		struct vpa_pld *p = NULL;
		CHECK(vpa_pld_new(0.2, 0.5, 20, VPA_PLD_INTERVAL_DEFAULT, &p, &err) == 0);
		if (p)
			pref = vpa_pld_epsilon(p, 1e-5, 1);
		vpa_pld_free(p);
		CHECK_NEAR(pld, pref, 1e-12);
		CHECK_NEAR(fe, fmin(rdp, pld), 0);
		const char *acc = vpa_json_get_str(b.t.info, "epsilon_accountant");
		CHECK(acc && !strcmp(acc, pld < rdp ? "pld" : "rdp"));
		CHECK(vpa_json_get_num(b.t.info, "perplexity", NAN) > 1);
	}
	built_release(&b);

	/* confidence weights on a simulated transcription, anonymised text */
	snprintf(y, sizeof(y), LM_COMMON "epochs: 2, confidence: utterance, wer: 0.2, "
		 "anonymise: typed_placeholder}", corpus);
	build_and_attack(y, &b);
	CHECK(b.rc == 0);
	if (!b.rc) {
		CHECK(vpa_json_get_num(b.t.info, "substituted_tokens", 0) > 0);
		CHECK(vpa_json_get_num(b.t.info, "anonymised_spans", 0) >= 41); /* 41 canary copies */
		/* the digits never reached training: the secret is not memorised */
		CHECK(metric(&b, "pin-x32", "exposure") < 6);
	}
	built_release(&b);

	/* hard threshold: utterances whose mean confidence is below it are dropped;
	 * with N(0.85, 0.1) right and N(0.35, 0.15) wrong tokens at 20% WER, a
	 * threshold of 0 drops none and 0.75 drops some but not most */
	snprintf(y, sizeof(y), LM_COMMON "epochs: 1, confidence: hard, wer: 0.2, threshold: 0}",
		 corpus);
	build_and_attack(y, &b);
	CHECK(b.rc == 0 && vpa_json_get_num(b.t.info, "dropped_utterances", -1) == 0);
	built_release(&b);
	snprintf(y, sizeof(y), LM_COMMON "epochs: 1, confidence: hard, wer: 0.2, threshold: 0.7}",
		 corpus);
	build_and_attack(y, &b);
	double dropped = vpa_json_get_num(b.t.info, "dropped_utterances", -1);
	printf("# hard threshold 0.7: %.0f utterances dropped\n", dropped);
	CHECK(b.rc == 0 && dropped > 30 && dropped < 1500);
	built_release(&b);
	snprintf(y, sizeof(y), LM_COMMON "epochs: 1, confidence: token, wer: 0.2}", corpus);
	build_and_attack(y, &b);
	CHECK(b.rc == 0 && vpa_json_get_num(b.t.info, "perplexity", NAN) > 1);
	built_release(&b);
	remove(corpus);
}

static void test_candidates_import(void)
{
	const char *p = "/tmp/vpa_test_lm_cands.txt";
	FILE *f = fopen(p, "w");
	if (!f)
		return;
	for (int i = 0; i < 1000; i++)
		fprintf(f, "%d\n", 10 + i % 100);
	fclose(f);
	char y[256];
	snprintf(y, sizeof(y), "{source: import, candidates: %s, canary_logppl: 10.5}", p);
	struct built b;
	build_and_attack(y, &b);
	CHECK(b.rc == 0);
	/* 10 candidates (value 10) are <= 10.5: log2 1000 - log2 11 */
	CHECK_NEAR(metric(&b, "canary", "exposure"), log2(1000.0) - log2(11.0), 1e-12);
	CHECK_NEAR(metric(&b, "canary", "rank"), 11, 0);
	built_release(&b);
	remove(p);
}

/* Names of the `names` file: the first error of each kind (issue 26 item 12, found
 * while writing its fuzz target: a NUL byte dropped the rest of the file). */
static const char *names_msg(const char *buf, size_t len, char *got, size_t cap)
{
	static struct vpa_err err;
	char **names = NULL;
	size_t n = 99;
	vpa_err_init(&err);
	got[0] = 0;
	if (!vpa_lm_parse_names("names.txt", buf, len, &names, &n, &err)) {
		size_t o = 0;
		for (size_t i = 0; i < n; i++) {
			o += (size_t)snprintf(got + o, cap - o, "%s%s", i ? "," : "", names[i]);
			free(names[i]);
		}
		free(names);
	}
	return err.msg;
}

static void test_names(void)
{
	char got[256];
	const char ok[] = "# extra names\r\n  Anna \r\n\n\tbOB\nzoë\n#x y\n";
	CHECK_STR(names_msg(ok, sizeof(ok) - 1, got, sizeof(got)), "");
	CHECK_STR(got, "anna,bob,zoë");
	CHECK_STR(names_msg("", 0, got, sizeof(got)), "");
	CHECK_STR(got, "");
	const char nul[] = "anna\nbo\0b\ncarl\n";
	CHECK_STR(names_msg(nul, sizeof(nul) - 1, got, sizeof(got)),
		  "names.txt:2: NUL byte: expected one name per line");
	CHECK_STR(names_msg("anna\nmary ann\n", 14, got, sizeof(got)),
		  "names.txt:2: expected one name per line, got 'mary ann'");
	CHECK_STR(names_msg("anna\rbob\n", 9, got, sizeof(got)),
		  "names.txt:1: expected one name per line, got 'anna\\x0dbob'");
	CHECK_STR(names_msg("anna\n<UNK>\n", 11, got, sizeof(got)),
		  "names.txt:2: '<unk>' is a word the model reserves, not a name");
	CHECK_STR(names_msg("\xEF\xBB\xBF" "anna\n", 8, got, sizeof(got)),
		  "names.txt:1: the file starts with a UTF-8 byte order mark (bytes EF BB BF), which "
		  "would become part of the first id: save it without the mark");
}

int main(void)
{
	RUN(test_template);
	RUN(test_names);
	RUN(test_scorer_matches_engine_1layer);
	RUN(test_scorer_matches_engine_2layers);
	RUN(test_uniform_perplexity);
	RUN(test_utt_mean_loss);
	RUN(test_arpa_scoring);
	RUN(test_candidates_import);
	RUN(test_exposure_end_to_end);
	return DONE();
}
