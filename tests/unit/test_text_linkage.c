/*
 * tests/unit/test_text_linkage.c - the successive-text attacker on text
 * whose successions are certain (counting sequences over 200 words: EER
 * about 1/200, the chance that a random piece is the true successor) and on i.i.d. random words (nothing links: EER near 0.5), and its
 * records and figures; the real-corpus numbers come from tests/e2e/test_lm.sh.
 */
#include "config/yaml.h"
#include "attacks/attacks.h"
#include "harness.h"
#include "targets/lm.h"

#include <stdlib.h>

/* A target holding text only: n_train + n_test sentences of length len. */
static void make_target(struct vpa_lm_target *t, int counting, size_t n_train, size_t n_test,
			size_t len, uint64_t seed)
{
	memset(t, 0, sizeof(*t));
	t->source = VPA_LM_LSTM;
	vpa_vocab_init(&t->vocab);
	char w[16];
	for (int i = 0; i < 200; i++) {
		snprintf(w, sizeof(w), "w%d", i);
		vpa_vocab_add(&t->vocab, w);
	}
	t->bos = vpa_vocab_add(&t->vocab, "<s>");
	t->eos = vpa_vocab_add(&t->vocab, "</s>");
	struct vpa_rng r;
	vpa_rng_seed(&r, seed);
	size_t ns[2] = {n_train, n_test};
	uint32_t **tok[2] = {&t->train_tok, &t->test_tok};
	size_t **off[2] = {&t->train_off, &t->test_off};
	for (int k = 0; k < 2; k++) {
		*tok[k] = malloc(ns[k] * len * sizeof(uint32_t));
		*off[k] = malloc((ns[k] + 1) * sizeof(size_t));
		for (size_t s = 0; s <= ns[k]; s++)
			(*off[k])[s] = s * len;
		for (size_t s = 0; s < ns[k]; s++) {
			uint32_t start = (uint32_t)vpa_rng_below(&r, 200);
			for (size_t i = 0; i < len; i++)
				(*tok[k])[s * len + i] = 1 + (counting ? (start + (uint32_t)i) % 200
								 : (uint32_t)vpa_rng_below(&r, 200));
		}
	}
	t->n_train = n_train;
	t->n_test = n_test;
}

static void release_target(struct vpa_lm_target *t)
{
	vpa_vocab_release(&t->vocab);
	free(t->train_tok);
	free(t->train_off);
	free(t->test_tok);
	free(t->test_off);
}

static int attack(struct vpa_lm_target *lt, struct vpa_attack_out *out)
{
	struct vpa_ynode *cfg = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	const char *y = "{slices: [2, 3], nonmated: 5}";
	if (vpa_yaml_parse("a.yaml", y, strlen(y), &cfg, &err))
		return -1;
	struct vpa_json *warn = vpa_json_arr();
	struct vpa_run_ctx ctx = {"a.yaml", ".", 5, 1, warn, NULL};
	struct vpa_target t = {0};
	t.id = "lm";
	t.data = lt;
	out->records = vpa_json_arr();
	out->figures = vpa_json_arr();
	const struct vpa_attack_kind *k = vpa_attack_kind_find("text_linkage");
	void *opts = k ? vpa_opts_new(k->schema, cfg) : NULL;
	int rc = k ? k->run(&ctx, "tl", opts, &t, out, &err) : -1;
	if (rc)
		printf("#   %s\n", err.msg);
	if (k)
		vpa_opts_free(k->schema, opts);
	vpa_ynode_free(cfg);
	vpa_json_free(warn);
	return rc;
}

static double rec(const struct vpa_attack_out *o, size_t i, const char *key)
{
	return vpa_json_get_num(vpa_json_get(o->records->items[i], "metrics"), key, NAN);
}

static void test_certain_successions(void)
{
	struct vpa_lm_target t;
	make_target(&t, 1, 400, 100, 12, 1);
	struct vpa_attack_out o;
	CHECK(attack(&t, &o) == 0);
	CHECK(o.records->n == 2);
	if (o.records->n == 2) {
		CHECK_STR(vpa_json_get_str(o.records->items[0], "sub"), "slice2");
		/* 100 sentences of 12 words: 6 slices of 2 -> 5 successive pairs each */
		CHECK_NEAR(rec(&o, 0, "n_target"), 500, 0);
		CHECK_NEAR(rec(&o, 1, "n_target"), 300, 0);
		CHECK(rec(&o, 0, "eer") < 0.02 && rec(&o, 1, "eer") < 0.02);
		/* all mated scores are equal (one bin at the top edge, which the
		 * trapezoidal integral weighs by 1/2): D<->sys is just under 0.5 */
		CHECK(rec(&o, 0, "linkability") > 0.45);
		CHECK_NEAR(rec(&o, 1, "slice"), 3, 0);
	}
	CHECK(o.figures->n == 1 + 2 + 1); /* DET, 2 linkability, lines against slice length */
	vpa_json_free(o.records);
	vpa_json_free(o.figures);
	release_target(&t);
}

static void test_random_text(void)
{
	struct vpa_lm_target t;
	make_target(&t, 0, 400, 200, 12, 2);
	struct vpa_attack_out o;
	CHECK(attack(&t, &o) == 0);
	if (o.records->n == 2) {
		CHECK(fabs(rec(&o, 0, "eer") - 0.5) < 0.08);
		CHECK(fabs(rec(&o, 1, "eer") - 0.5) < 0.08);
	}
	vpa_json_free(o.records);
	vpa_json_free(o.figures);
	release_target(&t);
}

int main(void)
{
	RUN(test_certain_successions);
	RUN(test_random_text);
	return DONE();
}
