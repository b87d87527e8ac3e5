/*
 * tests/unit/test_fl_am.c - the simulated FL acoustic-model target
 * (targets/sim_am.c, targets/fl_am.c): sizes, determinism across thread
 * counts, adaptation helps its own speaker, the hidden-layer rule, local DP
 * (clipping bound, epsilon of the analytic Gaussian mechanism, utility cost).
 */
#include "harness.h"
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

int main(void)
{
	RUN(test_sizes_and_determinism);
	RUN(test_local_dp);
	RUN(test_hidden_layers);
	return DONE();
}
