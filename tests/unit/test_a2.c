/*
 * tests/unit/test_a2.c - attack A2 (attacks/a2.c) on a small simulated
 * target: the x-vector network's training loss decreases, its accuracy on the
 * seen (Part-1) Delta sequences beats chance by a wide margin, the trials are
 * A1's (same counts) and the `a1_eer` column equals A1's mu+sigma EER on the
 * same layer; A2 itself separates the speakers far better than chance.
 */
#include "config/yaml.h"
#include "harness.h"
#include "attacks/attacks.h"
#include "targets/fl_am.h"

#include <stdlib.h>

static struct vpa_ynode *yaml(const char *s)
{
	struct vpa_ynode *n = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_yaml_parse("cfg", s, strlen(s), &n, &err))
		printf("# %s\n", err.msg);
	return n;
}

static const struct vpa_json *find(const struct vpa_json *recs, const char *attack,
				   const char *sub, double layer)
{
	for (size_t i = 0; i < recs->n; i++) {
		const struct vpa_json *r = recs->items[i];
		const char *s = vpa_json_get_str(r, "sub");
		if (!strcmp(vpa_json_get_str(r, "attack"), attack) &&
		    ((!sub && !s) || (sub && s && !strcmp(s, sub))) &&
		    vpa_json_get_num(r, "layer", -1) == layer)
			return r;
	}
	return NULL;
}

static void test_a2_small(void)
{
	struct vpa_flam_sim_cfg c;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_flam_sim_cfg_init(&c);
	c.train_speakers = 40;
	c.part1_speakers = 8;
	c.part2_speakers = 8;
	c.two_models = 1;
	c.adapt_utts = 20;
	c.indicator_speakers = 4;
	c.indicator_utts = 3;
	c.hidden_layers = 2;
	c.hidden_dim = 32;
	c.seed = 11;
	struct vpa_flam *t = xcalloc(1, sizeof(*t));
	vpa_flam_init(t);
	CHECK(vpa_flam_simulate(&c, t, NULL, &err) == 0);
	struct vpa_target tg = {&vpa_target_fl_acoustic_models, "sim", 1, NULL, t};
	struct vpa_run_ctx ctx = {"x.yaml", ".", 3, 1, NULL, NULL};
	struct vpa_attack_out out = {vpa_json_arr(), vpa_json_arr()};
	struct vpa_ynode *c1 = yaml("{id: a1, kind: a1_footprint, target: sim}");
	struct vpa_ynode *c2 = yaml("{id: a2, kind: a2_footprint, target: sim, layers: [1], "
				    "epochs: 8, hidden: 32, embedding_dim: 16}");
	const struct vpa_attack_kind *k1 = vpa_attack_kind_find("a1_footprint");
	const struct vpa_attack_kind *k2 = vpa_attack_kind_find("a2_footprint");
	CHECK(k1 && k2);
	/* the options validation fills */
	void *o1 = vpa_opts_new(k1->schema, c1), *o2 = vpa_opts_new(k2->schema, c2);
	CHECK(k1->run(&ctx, "a1", o1, &tg, &out, &err) == 0);
	CHECK(k2->run(&ctx, "a2", o2, &tg, &out, &err) == 0);
	if (err.status)
		printf("# %s\n", err.msg);
	const struct vpa_json *r1 = find(out.records, "a1", "mu_sigma", 1);
	const struct vpa_json *r2 = find(out.records, "a2", NULL, 1);
	CHECK(r1 && r2);
	if (r1 && r2) {
		const struct vpa_json *m1 = vpa_json_get(r1, "metrics"), *m2 = vpa_json_get(r2, "metrics");
		double lf = vpa_json_get_num(m2, "train_loss_first", NAN);
		double ll = vpa_json_get_num(m2, "train_loss_last", NAN);
		double acc = vpa_json_get_num(m2, "train_accuracy", NAN);
		double ch = vpa_json_get_num(m2, "chance_accuracy", NAN);
		double e2 = vpa_json_get_num(m2, "eer", NAN);
		printf("# loss %.4f -> %.4f, accuracy %.3f (chance %.3f), A2 EER %.3f, A1 EER %.3f\n",
		       lf, ll, acc, ch, e2, vpa_json_get_num(m1, "eer", NAN));
		CHECK(ll < 0.5 * lf);                /* the loss decreases */
		CHECK_NEAR(ch, 1.0 / 8, 1e-15);
		CHECK(acc > 4 * ch);                 /* far above chance on seen speakers */
		CHECK(vpa_json_get_num(m2, "n_target", 0) == 8);
		CHECK(vpa_json_get_num(m2, "n_target", 0) == vpa_json_get_num(m1, "n_target", -1));
		CHECK(vpa_json_get_num(m2, "n_nontarget", 0) ==
		      vpa_json_get_num(m1, "n_nontarget", -1));
		CHECK(vpa_json_get_num(m2, "a1_eer", -1) == vpa_json_get_num(m1, "eer", -2));
		CHECK(e2 < 0.25);                    /* chance is 0.5 */
	}
	/* Table-2 figure: A1 and A2 series */
	const struct vpa_json *f = NULL;
	for (size_t i = 0; i < out.figures->n; i++)
		if (strstr(vpa_json_get_str(out.figures->items[i], "id"), "a1-vs-a2"))
			f = out.figures->items[i];
	CHECK(f && vpa_json_get(f, "series")->n == 2);
	vpa_json_free(out.records);
	vpa_json_free(out.figures);
	vpa_opts_free(k1->schema, o1);
	vpa_opts_free(k2->schema, o2);
	vpa_ynode_free(c1);
	vpa_ynode_free(c2);
	vpa_flam_release(t);
	free(t);
}

int main(void)
{
	RUN(test_a2_small);
	return DONE();
}
