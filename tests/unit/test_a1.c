/*
 * tests/unit/test_a1.c - attack A1 (attacks/a1.c): footprint statistics and
 * rho on a hand-made pair of tiny models computed by hand, the trial pairs,
 * and the attack kind end to end on a hand-made target.
 *
 * Tiny models: input 2, hidden layer relu(W1 x + b1) with W1 = I, output
 * dense.  Global b1 = (0, 0); model i: b1 = (0.5, 0); model k: b1 = (0, 1).
 * Indicator frames (two utterances): (1, 2), (3, -1) | (-1, 1).
 *   g = relu(x)        = (1,2) (3,0) (0,1)
 *   a_i = relu(x+.5,0) = (1.5,2) (3.5,0) (0,1)   Delta_i = (.5,0) (.5,0) (0,0)
 *   a_k = relu(x+0,1)  = (1,3) (3,0) (0,2)        Delta_k = (0,1) (0,0) (0,1)
 *   mu_i = (1/3, 0), sd_i = (sqrt(1/18), 0); mu_k = (0, 2/3), sd_k = (0, sqrt(2/9))
 *   |mu_i - mu_k| / (|mu_i||mu_k|) = (sqrt5/3) / (2/9) = 1.5 sqrt5
 *   |sd_i - sd_k| / (|sd_i||sd_k|) = sqrt(5/18) / (1/9) = 9 sqrt(5/18)
 *   rho(1, 10) = 1.5 sqrt5 + 90 sqrt(5/18) = 50.78826...
 */
#include "config/yaml.h"
#include "harness.h"
#include "attacks/attacks.h"
#include "targets/fl_am.h"

#include <stdlib.h>

static struct vpa_nn *tiny(float b0, float b1)
{
	struct vpa_nn *n = vpa_nn_new(2);
	vpa_nn_add_dense(n, 2);
	vpa_nn_add_simple(n, VPA_NN_RELU);
	vpa_nn_add_dense(n, 3);
	vpa_nn_init_params(n, 7);
	struct vpa_nn_tensor w, b;
	vpa_nn_tensor(n, 0, 0, &w);
	vpa_nn_tensor(n, 0, 1, &b);
	w.data[0] = 1, w.data[1] = 0, w.data[2] = 0, w.data[3] = 1;
	b.data[0] = b0, b.data[1] = b1;
	return n;
}

static const float X[] = {1, 2, 3, -1, -1, 1};

/* A hand-made target: the global model and models with the given biases. */
static void make_target(struct vpa_flam *t, const float (*bias)[2], const uint32_t *spk,
			size_t n, size_t n_spk)
{
	vpa_flam_init(t);
	t->global.id = xstrdup("g");
	t->global.net = tiny(0, 0);
	t->models = xcalloc(n, sizeof(*t->models));
	t->n_models = n;
	for (size_t i = 0; i < n; i++) {
		char id[32];
		snprintf(id, sizeof(id), "m%zu", i);
		t->models[i].id = xstrdup(id);
		t->models[i].net = tiny(bias[i][0], bias[i][1]);
		t->models[i].spk = spk[i];
		t->models[i].part = VPA_FLAM_PART2;
		t->models[i].acc = t->models[i].acc_global = NAN;
	}
	t->spk_id = xcalloc(n_spk, sizeof(char *));
	t->n_spk = n_spk;
	for (size_t s = 0; s < n_spk; s++) {
		char id[32];
		snprintf(id, sizeof(id), "s%zu", s);
		t->spk_id[s] = xstrdup(id);
	}
	t->n_utt = 2;
	t->utt_id = xcalloc(2, sizeof(char *));
	t->utt_id[0] = xstrdup("u1");
	t->utt_id[1] = xstrdup("u2");
	t->off = xmalloc(3 * sizeof(size_t));
	t->off[0] = 0, t->off[1] = 2, t->off[2] = 3;
	t->x = xmalloc(sizeof(X));
	memcpy(t->x, X, sizeof(X));
	t->in_dim = 2;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_flam_hidden_layers(t->global.net, &t->layer_at, &t->n_layers, &err))
		printf("# %s\n", err.msg);
	t->dim = xmalloc(t->n_layers * sizeof(size_t));
	for (size_t h = 0; h < t->n_layers; h++)
		t->dim[h] = vpa_nn_layer_dim(t->global.net, t->layer_at[h]);
}

static void test_hand_stats(void)
{
	const float bias[2][2] = {{0.5f, 0}, {0, 1}};
	const uint32_t spk[2] = {0, 1};
	struct vpa_flam t;
	struct vpa_err err;
	vpa_err_init(&err);
	make_target(&t, bias, spk, 2, 2);
	CHECK(t.n_layers == 1);
	CHECK(t.layer_at[0] == 1);
	CHECK(t.dim[0] == 2);
	float **g, **a, **k;
	CHECK(vpa_flam_activations(&t, 2, &g, &err) == 0);
	CHECK(vpa_flam_activations(&t, 0, &a, &err) == 0);
	CHECK(vpa_flam_activations(&t, 1, &k, &err) == 0);
	const float gw[] = {1, 2, 3, 0, 0, 1}, aw[] = {1.5f, 2, 3.5f, 0, 0, 1}, kw[] = {1, 3, 3, 0, 0, 2};
	for (int i = 0; i < 6; i++) {
		CHECK(g[0][i] == gw[i]);
		CHECK(a[0][i] == aw[i]);
		CHECK(k[0][i] == kw[i]);
	}
	double mi[2], si[2], mk[2], sk[2];
	vpa_footprint_stats(a[0], g[0], 3, 2, mi, si);
	vpa_footprint_stats(k[0], g[0], 3, 2, mk, sk);
	CHECK_NEAR(mi[0], 1.0 / 3, 1e-15);
	CHECK_NEAR(mi[1], 0, 0);
	CHECK_NEAR(si[0], sqrt(1.0 / 18), 1e-15);
	CHECK_NEAR(si[1], 0, 0);
	CHECK_NEAR(mk[0], 0, 0);
	CHECK_NEAR(mk[1], 2.0 / 3, 1e-15);
	CHECK_NEAR(sk[0], 0, 0);
	CHECK_NEAR(sk[1], sqrt(2.0 / 9), 1e-15);
	double want = 1.5 * sqrt(5.0) + 90 * sqrt(5.0 / 18);
	CHECK_NEAR(vpa_footprint_rho(mi, si, mk, sk, 2, 1, 10), want, 1e-12);
	CHECK_NEAR(vpa_footprint_rho(mi, si, mk, sk, 2, 1, 0), 1.5 * sqrt(5.0), 1e-13);
	CHECK_NEAR(vpa_footprint_rho(mi, si, mk, sk, 2, 0, 10), 90 * sqrt(5.0 / 18), 1e-12);
	/* symmetric, zero on itself */
	CHECK_NEAR(vpa_footprint_rho(mk, sk, mi, si, 2, 1, 10), want, 1e-12);
	CHECK(vpa_footprint_rho(mi, si, mi, si, 2, 1, 10) == 0);
	/* an unchanged model (Delta = 0) against a changed one stays finite */
	double z[2] = {0, 0};
	double r = vpa_footprint_rho(z, z, mi, si, 2, 1, 10);
	CHECK(isfinite(r) && r > 1e300);
	vpa_flam_acts_free(g, 1);
	vpa_flam_acts_free(a, 1);
	vpa_flam_acts_free(k, 1);
	vpa_flam_release(&t);
}

/* vpa_a1_footprints: the hand values, the same numbers on 1 and 3 threads,
 * unused models skipped, and the error of the lowest failing model. */
static void test_footprint_pool(void)
{
	const float bias[6][2] = {{0.5f, 0}, {0, 1}, {0.5f, 0}, {0, 1}, {1, 1}, {0.5f, 0}};
	const uint32_t spk[6] = {0, 1, 0, 1, 2, 0};
	const size_t lay[1] = {0};
	unsigned char use[6] = {1, 1, 0, 1, 1, 1};
	struct vpa_flam t;
	struct vpa_err err;
	vpa_err_init(&err);
	make_target(&t, bias, spk, 6, 3);
	double **mu1, **sd1, **mu3, **sd3;
	CHECK(vpa_a1_footprints(&t, lay, 1, use, 1, NULL, &mu1, &sd1, &err) == 0);
	CHECK(vpa_a1_footprints(&t, lay, 1, use, 3, NULL, &mu3, &sd3, &err) == 0);
	CHECK(mu1[2] == NULL && mu3[2] == NULL && sd3[2] == NULL);
	CHECK_NEAR(mu1[0][0], 1.0 / 3, 1e-15);
	CHECK_NEAR(sd1[0][0], sqrt(1.0 / 18), 1e-15);
	CHECK_NEAR(mu1[1][1], 2.0 / 3, 1e-15);
	CHECK_NEAR(sd1[3][1], sqrt(2.0 / 9), 1e-15);
	for (size_t m = 0; m < 6; m++) {
		if (!use[m])
			continue;
		for (int j = 0; j < 2; j++) {
			CHECK(mu1[m][j] == mu3[m][j]);
			CHECK(sd1[m][j] == sd3[m][j]);
		}
		free(mu1[m]), free(sd1[m]), free(mu3[m]), free(sd3[m]);
	}
	free(mu1), free(sd1), free(mu3), free(sd3);
	/* every model when use is NULL */
	CHECK(vpa_a1_footprints(&t, lay, 1, NULL, 2, NULL, &mu1, &sd1, &err) == 0);
	CHECK(mu1[2] && mu1[2][0] == mu1[0][0]);
	for (size_t m = 0; m < 6; m++)
		free(mu1[m]), free(sd1[m]);
	free(mu1), free(sd1);
	/* models 3 and 5 read activations from missing folders: model 3's error
	 * whatever the thread count, and nothing allocated */
	for (int m = 3; m <= 5; m += 2) {
		vpa_nn_free(t.models[m].net);
		t.models[m].net = NULL;
		t.models[m].act_dir = xstrdup(m == 3 ? "/nonexistent/m3" : "/nonexistent/m5");
	}
	for (int th = 1; th <= 3; th += 2) {
		vpa_err_init(&err);
		mu1 = sd1 = (double **)&err;
		CHECK(vpa_a1_footprints(&t, lay, 1, NULL, th, NULL, &mu1, &sd1, &err) != 0);
		CHECK(strstr(err.msg, "/nonexistent/m3/") != NULL);
		CHECK(mu1 == NULL && sd1 == NULL);
	}
	vpa_flam_release(&t);
}

static void test_pairs(void)
{
	/* speakers 0,0,1,1,2 (and a part1 model of speaker 0 that is not used) */
	const float bias[6][2] = {{0}, {0}, {0}, {0}, {0}, {0}};
	const uint32_t spk[6] = {0, 0, 1, 1, 2, 0};
	struct vpa_flam t;
	make_target(&t, bias, spk, 6, 3);
	t.models[5].part = VPA_FLAM_PART1;
	uint32_t *tp, *np;
	size_t nt, nn;
	vpa_flam_pairs(&t, VPA_FLAM_PART2, 1000, 1, &tp, &nt, &np, &nn);
	CHECK(nt == 2);
	CHECK(tp[0] == 0 && tp[1] == 1 && tp[2] == 2 && tp[3] == 3);
	CHECK(nn == 8); /* C(5,2) - 2 */
	free(tp);
	free(np);
	vpa_flam_pairs(&t, VPA_FLAM_PART2, 5, 1, &tp, &nt, &np, &nn);
	CHECK(nn == 5);
	for (size_t i = 0; i < nn; i++) {
		CHECK(np[2 * i] < np[2 * i + 1]);
		CHECK(t.models[np[2 * i]].spk != t.models[np[2 * i + 1]].spk);
		CHECK(np[2 * i + 1] < 5);
		for (size_t j = 0; j < i; j++)
			CHECK(!(np[2 * i] == np[2 * j] && np[2 * i + 1] == np[2 * j + 1]));
	}
	uint32_t *tp2, *np2;
	size_t nt2, nn2;
	vpa_flam_pairs(&t, VPA_FLAM_PART2, 5, 1, &tp2, &nt2, &np2, &nn2);
	CHECK(nn2 == 5 && memcmp(np, np2, 10 * sizeof(uint32_t)) == 0); /* seeded */
	free(tp2);
	free(np2);
	free(tp);
	free(np);
	vpa_flam_pairs(&t, 0, 1000, 1, &tp, &nt, &np, &nn); /* all partitions */
	CHECK(nt == 4);   /* (0,1) (0,5) (1,5) (2,3) */
	CHECK(nn == 11);  /* C(6,2) - 4 */
	free(tp);
	free(np);
	vpa_flam_release(&t);
}

static struct vpa_ynode *yaml(const char *s)
{
	struct vpa_ynode *n = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_yaml_parse("cfg", s, strlen(s), &n, &err))
		printf("# %s\n", err.msg);
	return n;
}

static void test_attack(void)
{
	/* two speakers, two models each: same-speaker models shift the same unit */
	const float bias[4][2] = {{0.5f, 0}, {0.6f, 0}, {0, 1}, {0, 0.9f}};
	const uint32_t spk[4] = {0, 0, 1, 1};
	struct vpa_target tg = {0};
	struct vpa_flam *t = xcalloc(1, sizeof(*t));
	make_target(t, bias, spk, 4, 2);
	tg.id = "tiny";
	tg.data = t;
	tg.kind = &vpa_target_fl_acoustic_models;
	const struct vpa_attack_kind *k = vpa_attack_kind_find("a1_footprint");
	CHECK(k != NULL);
	struct vpa_ynode *cfg = yaml("{id: a1, kind: a1_footprint, target: tiny}");
	void *o = vpa_opts_new(k->schema, cfg); /* the options validation fills */
	struct vpa_json *warn = vpa_json_arr();
	struct vpa_run_ctx ctx = {"x.yaml", ".", 1, 1, warn, NULL};
	struct vpa_attack_out out = {vpa_json_arr(), vpa_json_arr()};
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(k->run(&ctx, "a1", o, &tg, &out, &err) == 0);
	CHECK(out.records->n == 3);
	const char *subs[3] = {"mu_sigma", "mu", "sigma"};
	for (size_t i = 0; i < out.records->n && i < 3; i++) {
		const struct vpa_json *r = out.records->items[i];
		CHECK_STR(vpa_json_get_str(r, "sub"), subs[i]);
		CHECK(vpa_json_get_num(r, "layer", -1) == 1);
		const struct vpa_json *m = vpa_json_get(r, "metrics");
		CHECK(vpa_json_get_num(m, "n_target", 0) == 2);
		CHECK(vpa_json_get_num(m, "n_nontarget", 0) == 4);
		CHECK(vpa_json_get_num(m, "eer", 1) == 0);
	}
	/* the EER-vs-layer figure has the three variants */
	const struct vpa_json *f = out.figures->items[0];
	CHECK_STR(vpa_json_get_str(f, "type"), "bars");
	CHECK(vpa_json_get(f, "series")->n == 3);
	const struct vpa_json *cats = vpa_json_get(f, "categories");
	CHECK(cats && cats->n == 1 && !strcmp(cats->items[0]->str, "layer 1"));
	const struct vpa_json *yr = vpa_json_get(f, "yrange");
	CHECK(yr && yr->n == 2 && yr->items[1]->num == 0.5);
	vpa_json_free(out.records);
	vpa_json_free(out.figures);
	vpa_json_free(warn);
	/* a layer beyond the target's */
	vpa_opts_free(k->schema, o);
	vpa_ynode_free(cfg);
	cfg = yaml("{id: a1, kind: a1_footprint, target: tiny, layers: [2]}");
	o = vpa_opts_new(k->schema, cfg);
	out.records = vpa_json_arr();
	out.figures = vpa_json_arr();
	ctx.warnings = NULL;
	CHECK(k->run(&ctx, "a1", o, &tg, &out, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:1:53: layer 2: the target has 1 hidden layer");
	vpa_json_free(out.records);
	vpa_json_free(out.figures);
	vpa_opts_free(k->schema, o);
	vpa_ynode_free(cfg);
	vpa_flam_release(t);
	free(t);
}

int main(void)
{
	RUN(test_hand_stats);
	RUN(test_footprint_pool);
	RUN(test_pairs);
	RUN(test_attack);
	return DONE();
}
