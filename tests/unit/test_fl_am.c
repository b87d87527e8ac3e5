/*
 * tests/unit/test_fl_am.c - the simulated FL acoustic-model target
 * (targets/sim_am.c, targets/fl_am.c): sizes, determinism across thread
 * counts, adaptation helps its own speaker, the hidden-layer rule, local DP
 * (clipping bound, epsilon of the analytic Gaussian mechanism, utility cost);
 * the kind on its typed options: the table's defaults are the simulator's,
 * a build from options, the cross-key checks and their marks.
 */
#include "config/yaml.h"
#include "base/la.h"
#include "harness.h"
#include "attacks/attacks.h"
#include "metrics/metrics.h"
#include "targets/fl_am.h"

#include <stdlib.h>

static void small(struct vpa_flam_sim_cfg *c)
{
	vpa_flam_sim_cfg_init(c);
	c->train_speakers = 20;
	c->train_utts = 5;
	c->part1_speakers = 5;
	c->part2_speakers = 5;
	c->adapt_utts = 10;
	c->indicator_speakers = 3;
	c->indicator_utts = 2;
	c->hidden_layers = 3;
	c->hidden_dim = 24;
	c->states = 12;
	c->utt_frames = 60;
	c->global_epochs = 4;
	c->seed = 5;
}

static double mean_acc(const struct vpa_flam *t, int global)
{
	double s = 0;
	for (size_t i = 0; i < t->n_models; i++)
		s += global ? t->models[i].acc_global : t->models[i].acc;
	return s / (double)t->n_models;
}

static void test_sizes_and_determinism(void)
{
	struct vpa_flam_sim_cfg c;
	struct vpa_flam a, b;
	struct vpa_err err;
	vpa_err_init(&err);
	small(&c);
	c.spk_vec_dim = 4;
	vpa_flam_init(&a);
	vpa_flam_init(&b);
	struct vpa_json *info = vpa_json_obj();
	CHECK(vpa_flam_simulate(&c, &a, info, &err) == 0);
	c.threads = 2;
	CHECK(vpa_flam_simulate(&c, &b, NULL, &err) == 0);
	/* 5 + 5 speakers, round(0.8 * 5) = 4 of each part with two models */
	CHECK(a.n_models == 18);
	CHECK(a.n_spk == 10);
	CHECK(a.n_utt == 6);
	CHECK(a.in_dim == 44);
	CHECK(a.n_layers == 3);
	for (size_t h = 0; h < a.n_layers; h++)
		CHECK(a.dim[h] == 24);
	size_t n1 = 0;
	for (size_t i = 0; i < a.n_models; i++) {
		n1 += a.models[i].part == VPA_FLAM_PART1;
		CHECK(a.models[i].update_norm > 0);
	}
	CHECK(n1 == 9);
	/* bit-identical whatever the thread count */
	CHECK(a.n_models == b.n_models);
	for (size_t i = 0; i < a.n_models && i < b.n_models; i++) {
		size_t na, nb;
		const float *wa = vpa_nn_params(a.models[i].net, &na);
		const float *wb = vpa_nn_params(b.models[i].net, &nb);
		CHECK(na == nb && memcmp(wa, wb, na * sizeof(float)) == 0);
	}
	CHECK(a.off[a.n_utt] == b.off[b.n_utt]);
	CHECK(memcmp(a.x, b.x, a.off[a.n_utt] * a.in_dim * sizeof(float)) == 0);
	/* the speaker vector is constant inside an utterance */
	for (size_t t = a.off[0] + 1; t < a.off[1]; t++)
		CHECK(a.x[t * a.in_dim + 40] == a.x[a.off[0] * a.in_dim + 40]);
	/* personalisation helps its own speaker (held-out frame accuracy) */
	double pa = mean_acc(&a, 0), ga = mean_acc(&a, 1);
	printf("# global %.3f personalised %.3f\n", ga, pa);
	CHECK(pa > ga);
	CHECK(ga > 1.0 / 12 * 2); /* the global model learnt something */
	CHECK(vpa_json_get(info, "utility") != NULL);
	vpa_json_free(info);
	vpa_flam_release(&a);
	vpa_flam_release(&b);
}

static void test_local_dp(void)
{
	struct vpa_flam_sim_cfg c;
	struct vpa_flam a, b;
	struct vpa_err err;
	vpa_err_init(&err);
	small(&c);
	c.dp_clip = 0.05;
	c.dp_noise = 0;
	vpa_flam_init(&a);
	CHECK(vpa_flam_simulate(&c, &a, NULL, &err) == 0);
	/* clipping only: every released update has norm min(norm, C) */
	for (size_t i = 0; i < a.n_models; i++) {
		size_t n;
		const float *w = vpa_nn_params(a.models[i].net, &n);
		const float *g = vpa_nn_params(a.global.net, &n);
		double s2 = 0;
		for (size_t k = 0; k < n; k++)
			s2 += ((double)w[k] - g[k]) * ((double)w[k] - g[k]);
		double want = a.models[i].update_norm < 0.05 ? a.models[i].update_norm : 0.05;
		CHECK_NEAR(sqrt(s2), want, 1e-5);
	}
	CHECK(isinf(a.dp_epsilon));
	/* heavy noise: epsilon from the analytic Gaussian mechanism, utility falls */
	c.dp_noise = 2;
	vpa_flam_init(&b);
	CHECK(vpa_flam_simulate(&c, &b, NULL, &err) == 0);
	double eps;
	CHECK(vpa_gauss_analytic_epsilon(2 * 0.05, 1e-5, 0.05, &eps, &err) == 0);
	CHECK_NEAR(b.dp_epsilon, eps, 1e-12);
	CHECK(b.dp_epsilon > 0 && b.dp_epsilon < 3);
	/* the run's epsilon per speaker: speakers with two released models compose
	 * two Gaussian releases = sensitivity C sqrt 2 (issue 20 section 4) */
	CHECK(b.dp_releases_max == (c.two_models > 0 ? 2u : 1u));
	CHECK(vpa_gauss_analytic_epsilon(2 * 0.05, 1e-5, 0.05 * sqrt((double)b.dp_releases_max),
					 &eps, &err) == 0);
	CHECK_NEAR(b.dp_epsilon_speaker, eps, 1e-12);
	CHECK(b.dp_releases_max == 1 || b.dp_epsilon_speaker > b.dp_epsilon);
	printf("# clip only %.3f, noise 2: %.3f (eps %.3f)\n", mean_acc(&a, 0), mean_acc(&b, 0),
	       b.dp_epsilon);
	CHECK(mean_acc(&b, 0) < mean_acc(&a, 0) - 0.1);
	vpa_flam_release(&a);
	vpa_flam_release(&b);
}

static void test_hidden_layers(void)
{
	const int c3[] = {-1, 0, 1};
	struct vpa_nn *n = vpa_nn_new(5);
	vpa_nn_add_tdnn(n, 4, c3, 3);
	vpa_nn_add_simple(n, VPA_NN_RELU);
	vpa_nn_add_simple(n, VPA_NN_BATCHNORM);
	vpa_nn_add_dense(n, 4);
	vpa_nn_add_simple(n, VPA_NN_SIGMOID);
	vpa_nn_add_dense(n, 3);
	size_t *at, k;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_flam_hidden_layers(n, &at, &k, &err) == 0);
	CHECK(k == 2 && at[0] == 2 && at[1] == 4);
	free(at);
	vpa_nn_free(n);
	n = vpa_nn_new(5);
	vpa_nn_add_dense(n, 4);
	CHECK(vpa_flam_hidden_layers(n, &at, &k, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "the acoustic model has 1 affine (dense/tdnn) layer: at least two are "
			   "needed for a hidden layer");
	vpa_nn_free(n);
	vpa_err_init(&err);
	n = vpa_nn_new(5);
	vpa_nn_add_dense(n, 4);
	vpa_nn_add_simple(n, VPA_NN_STATSPOOL);
	vpa_nn_add_dense(n, 4);
	CHECK(vpa_flam_hidden_layers(n, &at, &k, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "is a statspool layer") != NULL);
	vpa_nn_free(n);
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

/* The simulate and dp defaults of the key table are the simulator's own. */
static void test_option_defaults(void)
{
	const struct vpa_target_kind *k = &vpa_target_fl_acoustic_models;
	struct vpa_ynode *n = yaml("{id: fl, kind: fl_acoustic_models}");
	struct vpa_flam_opts *o = vpa_opts_new(k->schema, n);
	struct vpa_flam_sim_cfg c;
	vpa_flam_sim_cfg_init(&c);
	const struct vpa_flam_sim_opts *s = &o->simulate;
	CHECK_STR(o->source, "simulate");
	CHECK(o->simulate_at.line == 0 && o->import_at.line == 0);
	CHECK(!o->dump_models && !o->dump_activations);
#define SAME(f) CHECK((double)s->f == (double)c.f)
	SAME(feat_dim); SAME(states); SAME(spk_vec_dim); SAME(spk_affine); SAME(spk_bias);
	SAME(noise); SAME(spk_vec_noise); SAME(utt_frames); SAME(train_speakers);
	SAME(train_utts); SAME(part1_speakers); SAME(part2_speakers); SAME(two_models);
	SAME(adapt_utts); SAME(heldout_utts); SAME(indicator_speakers); SAME(indicator_utts);
	SAME(hidden_layers); SAME(hidden_dim); SAME(global_epochs); SAME(global_lr);
	SAME(batch); SAME(adapt_epochs); SAME(adapt_lr);
#undef SAME
	CHECK(o->dp.clip == c.dp_clip && o->dp.noise == c.dp_noise && o->dp.delta == c.dp_delta);
	vpa_opts_free(k->schema, o);
	vpa_ynode_free(n);
}

/* A simulated target built from its options (build), as the pipeline does. */
static void test_build_from_options(void)
{
	const struct vpa_target_kind *k = &vpa_target_fl_acoustic_models;
	struct vpa_ynode *n = yaml(
		"{id: fl, kind: fl_acoustic_models, simulate: {train_speakers: 20, train_utts: 5, "
		"part1_speakers: 5, part2_speakers: 5, adapt_utts: 10, indicator_speakers: 3, "
		"indicator_utts: 2, hidden_layers: 3, hidden_dim: 24, states: 12, utt_frames: 60, "
		"global_epochs: 4}}");
	void *o = vpa_opts_new(k->schema, n);
	struct vpa_run_ctx ctx = {"x.yaml", ".", 5, 1, NULL, NULL};
	struct vpa_target t = {0};
	struct vpa_err err;
	vpa_err_init(&err);
	t.kind = k;
	t.id = "fl";
	CHECK(k->build(&ctx, o, &t, &err) == 0);
	const struct vpa_flam *f = t.data;
	CHECK(t.simulated == 1);
	CHECK(f && f->n_models == 18 && f->n_spk == 10 && f->n_utt == 6 && f->n_layers == 3);
	CHECK_STR(vpa_json_get_str(t.info, "source"), "simulate");
	const struct vpa_json *dims = vpa_json_get(t.info, "hidden_layer_dims");
	CHECK(dims && dims->n == 3 && dims->items[0]->num == 24);
	vpa_target_release(&t);
	vpa_opts_free(k->schema, o);
	vpa_ynode_free(n);
}

/* The cross-key checks of the target and of A1/A2 blame the value they read. */
static int check_target(const char *text, struct vpa_err *err)
{
	const struct vpa_target_kind *k = &vpa_target_fl_acoustic_models;
	const struct vpa_kind_ctx ctx = {"x.yaml", "."};
	struct vpa_ynode *n = yaml(text);
	void *o = vpa_opts_new(k->schema, n);
	vpa_err_init(err);
	int rc = k->validate(&ctx, o, err);
	vpa_opts_free(k->schema, o);
	vpa_ynode_free(n);
	return rc;
}

static int check_attack(const char *kind, const char *text, struct vpa_err *err)
{
	const struct vpa_attack_kind *k = vpa_attack_kind_find(kind);
	const struct vpa_kind_ctx ctx = {"x.yaml", "."};
	struct vpa_ynode *n = yaml(text);
	void *o = vpa_opts_new(k->schema, n);
	vpa_err_init(err);
	int rc = k->validate(&ctx, o, NULL, err);
	vpa_opts_free(k->schema, o);
	vpa_ynode_free(n);
	return rc;
}

static void test_checks(void)
{
	struct vpa_err err;
	CHECK(check_target("{id: fl, kind: fl_acoustic_models, dp: {noise: 1}}", &err) ==
	      VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:1:40: dp: noise needs a clipping bound `clip` > 0 (the noise "
			   "is sigma * clip)");
	CHECK(check_target("{id: fl, kind: fl_acoustic_models, dp: {noise: 1, clip: 1}}", &err) == 0);
	CHECK(check_target("{id: fl, kind: fl_acoustic_models, source: import,\n"
			   "  import: {models: m.txt, activations: a, indicator: i}}", &err) ==
	      VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:2:11: give either `activations` or `model_dir` and "
			   "`indicator`, not both");
	CHECK(check_target("{id: fl, kind: fl_acoustic_models, source: import,\n"
			   "  import: {models: m.txt, model_dir: d}}", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:2:11: import needs `activations`, or both `model_dir` and "
			   "`indicator`");
	CHECK(check_target("{id: fl, kind: fl_acoustic_models, source: import,\n"
			   "  import: {models: nope.txt, activations: a}}", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:2:20: cannot open 'nope.txt': No such file or directory");
	CHECK(check_attack("a1_footprint", "{alpha_mu: 0}", &err) == 0);
	CHECK(check_attack("a1_footprint", "{layers: []}", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:1:10: 'layers' is empty: list hidden layers (1-based) or leave "
			   "the key out for all");
	CHECK(check_attack("a1_footprint", "{layers: [1, 4097]}", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:1:14: a layer must be an integer in [1, 4096], got '4097'");
	CHECK(check_attack("a2_footprint", "{layers: [2, x]}", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:1:14: a layer must be an integer in [1, 4096], got 'x'");
	CHECK(check_attack("a2_footprint", "{layers: [1, 3]}", &err) == 0);
}

int main(void)
{
	/* OpenBLAS single-threaded, as vpaudit's main() sets it: the thread-count
	 * checks below compare our loops, not OpenBLAS's kernels */
	vpa_la_set_threads(1);
	RUN(test_sizes_and_determinism);
	RUN(test_local_dp);
	RUN(test_hidden_layers);
	RUN(test_option_defaults);
	RUN(test_build_from_options);
	RUN(test_checks);
	return DONE();
}
