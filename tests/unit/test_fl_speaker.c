/*
 * tests/unit/test_fl_speaker.c - the federated vocal classifier
 * (targets/fl_speaker.c, targets/sim_supervec.c): the simulated population's
 * moments, import (Kaldi archive + lists), what a device releases in each
 * regime, one local update by hand, speaker-verification scoring (eq. 1) by
 * hand, and a small built target: the accountant's noise multiplier, the
 * noise norms against their expected values, the SNR and accuracy order of
 * the paper, bit-identical results for any thread count, and the
 * scenario-level validation messages.
 */
#include "harness.h"
#include "attacks/attacks.h"
#include "metrics/metrics.h"
#include "targets/fl_speaker.h"
#include "scenarios/scenario.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_simulate(void)
{
	struct vpa_fls_sim_opts o;
	struct vpa_fls_pop a, b, c;
	vpa_fls_sim_opts_init(&o);
	o.n_users = 600;
	o.n_utts = 6;
	o.seed = 7;
	CHECK(vpa_fls_simulate(&o, &a, NULL) == 0);
	CHECK(vpa_fls_simulate(&o, &b, NULL) == 0);
	o.seed = 8;
	CHECK(vpa_fls_simulate(&o, &c, NULL) == 0);
	CHECK(a.d == 520 && a.n_rows == 3600 && a.n_users == 600 && a.n_classes == 6);
	CHECK(memcmp(a.x, b.x, a.n_rows * a.d * sizeof(float)) == 0);
	CHECK(memcmp(a.x, c.x, a.n_rows * a.d * sizeof(float)) != 0);
	CHECK_STR(a.user[12], "u00012");
	CHECK_STR(a.class_name[5], "c5");
	size_t cnt[6] = {0};
	for (size_t u = 0; u < a.n_users; u++) {
		CHECK(a.cls[u] < 6);
		cnt[a.cls[u] < 6 ? a.cls[u] : 0]++;
		CHECK(a.off[u] == u * 6);
	}
	for (int k = 0; k < 6; k++)
		CHECK(cnt[k] > 60 && cnt[k] < 140); /* 100 expected */
	/* moments: within a user the per-dimension variance is noise^2 (= 1);
	   between users' means it is spk_scale^2 + class_shift^2 (+ noise^2/6) */
	double within = 0, between = 0;
	double *mu = calloc(a.d, sizeof(double)), *um = malloc(a.d * sizeof(double));
	for (size_t r = 0; r < a.n_rows; r++)
		for (size_t k = 0; k < a.d; k++)
			mu[k] += a.x[r * a.d + k] / (double)a.n_rows;
	for (size_t u = 0; u < a.n_users; u++) {
		for (size_t k = 0; k < a.d; k++) {
			um[k] = 0;
			for (size_t r = a.off[u]; r < a.off[u + 1]; r++)
				um[k] += a.x[r * a.d + k] / 6.0;
			for (size_t r = a.off[u]; r < a.off[u + 1]; r++) {
				double e = a.x[r * a.d + k] - um[k];
				within += e * e / 5.0; /* unbiased within-user variance */
			}
			between += (um[k] - mu[k]) * (um[k] - mu[k]);
		}
	}
	within /= (double)(a.n_users * a.d);
	between /= (double)(a.n_users * a.d);
	CHECK_REL(within, 1.0, 0.01);
	CHECK_REL(between, 0.3 * 0.3 + 0.12 * 0.12 + 1.0 / 6, 0.1);
	free(mu);
	free(um);
	vpa_fls_pop_release(&a);
	vpa_fls_pop_release(&b);
	vpa_fls_pop_release(&c);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_import(void)
{
	char dir[] = "/tmp/vpa_fls_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char ark[128], u2u[128], lab[128], bad[128];
	snprintf(ark, sizeof(ark), "%s/sv.ark", dir);
	snprintf(u2u, sizeof(u2u), "%s/utt2user", dir);
	snprintf(lab, sizeof(lab), "%s/labels", dir);
	snprintf(bad, sizeof(bad), "%s/labels_bad", dir);
	write_file(ark, "a1 [ 1 2 3 ]\nb1 [ 4 5 6 ]\na2 [ 7 8 9 ]\nc1 [ 0 0 1 ]\n");
	write_file(u2u, "a1 alice\na2 alice\nb1 bob\nc1 carol\n");
	write_file(lab, "bob m\nalice f\ncarol f\nzed m\n");
	write_file(bad, "bob m\nalice f\n");
	struct vpa_fls_pop p;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_fls_import(ark, u2u, lab, &p, &err) == 0);
	CHECK(p.n_users == 3 && p.d == 3 && p.n_rows == 4 && p.n_classes == 2);
	CHECK_STR(p.user[0], "alice");
	CHECK_STR(p.user[1], "bob");
	CHECK_STR(p.class_name[0], "f"); /* sorted */
	CHECK(p.cls[0] == 0 && p.cls[1] == 1 && p.cls[2] == 0);
	CHECK(p.off[0] == 0 && p.off[1] == 2 && p.off[2] == 3 && p.off[3] == 4);
	CHECK(p.x[0] == 1 && p.x[3] == 7 && p.x[6] == 4); /* alice's rows, then bob's */
	vpa_fls_pop_release(&p);
	vpa_err_init(&err);
	CHECK(vpa_fls_import(ark, u2u, bad, &p, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "labels_bad: no class for user 'carol'") != NULL);
	write_file(bad, "bob m\nalice f\ncarol f\nbob f\n");
	vpa_err_init(&err);
	CHECK(vpa_fls_import(ark, u2u, bad, &p, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "labels_bad:4: duplicate user 'bob'") != NULL);
	write_file(bad, "bob m\nalice m\ncarol m\n");
	vpa_err_init(&err);
	CHECK(vpa_fls_import(ark, u2u, bad, &p, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "at least 2 classes, found 1") != NULL);
	/* a value a float cannot hold */
	write_file(ark, "a1 [ 1 2 3 ]\nb1 [ 4 5e300 6 ]\na2 [ 7 8 9 ]\nc1 [ 0 0 1 ]\n");
	vpa_err_init(&err);
	CHECK(vpa_fls_import(ark, u2u, lab, &p, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "sv.ark: utterance 'b1' has a value out of range (5e+300): "
			      "expected |x| <= 1e30") != NULL);
	unlink(ark);
	unlink(u2u);
	unlink(lab);
	unlink(bad);
	rmdir(dir);
}

static void test_release(void)
{
	struct vpa_fls_privacy p;
	struct vpa_rng rng;
	memset(&p, 0, sizeof(p));
	vpa_rng_seed(&rng, 3);
	float v[4] = {3, 4, 0, 0};
	/* none: clipped to C, direction kept */
	p.regime = VPA_FLS_NONE;
	p.clip = 1;
	CHECK_NEAR(vpa_fls_release(&p, v, 4, &rng), 5, 1e-6);
	CHECK_NEAR(v[0], 0.6, 1e-6);
	CHECK_NEAR(v[1], 0.8, 1e-6);
	float w[2] = {0.3f, 0.4f};
	p.clip = 1;
	vpa_fls_release(&p, w, 2, &rng);
	CHECK(w[0] == 0.3f && w[1] == 0.4f); /* under the bound: unchanged */
	/* local: Gaussian noise of std sigma_local */
	const size_t n = 200000;
	float *x = calloc(n, sizeof(float));
	p.regime = VPA_FLS_LOCAL;
	p.sigma_local = 2.5;
	vpa_fls_release(&p, x, n, &rng);
	double s = 0, s2 = 0;
	for (size_t i = 0; i < n; i++) {
		s += x[i];
		s2 += (double)x[i] * x[i];
	}
	CHECK(fabs(s / n) < 5 * 2.5 / sqrt((double)n));
	CHECK_REL(sqrt(s2 / n), 2.5, 0.01);
	free(x);
	/* central_local: PrivUnit2 x scalar DP, unbiased for the clipped update */
	const size_t d = 12;
	p.regime = VPA_FLS_CENTRAL_LOCAL;
	p.clip = 2;
	CHECK(vpa_privunit_init(&p.pu, d, 6, NULL) == 0);
	CHECK(vpa_scalar_dp_init(&p.sdp, 2, 2, 0, NULL) == 0);
	float in[12], out[12];
	for (size_t i = 0; i < d; i++)
		in[i] = (float)(0.5 * sin((double)i + 1));
	double norm = vpa_nn_norm(in, d); /* ~1.3 < C */
	CHECK(norm < 2);
	double sum[12] = {0}, sq[12] = {0};
	const int draws = 100000;
	for (int k = 0; k < draws; k++) {
		memcpy(out, in, sizeof(in));
		vpa_fls_release(&p, out, d, &rng);
		for (size_t i = 0; i < d; i++) {
			sum[i] += out[i];
			sq[i] += (double)out[i] * out[i];
		}
	}
	for (size_t i = 0; i < d; i++) {
		double m = sum[i] / draws, se = sqrt((sq[i] / draws - m * m) / draws);
		CHECK(fabs(m - in[i]) < 5 * se);
	}
}

static void test_local_update_hand(void)
{
	/* 2 -> dense(2), zero weights: p = (1/2, 1/2); x = (1, 2), label 0, lr 0.5 */
	struct vpa_nn *net = vpa_nn_new(2);
	vpa_nn_add_dense(net, 2);
	size_t np;
	vpa_nn_params(net, &np);
	CHECK(np == 6);
	float g[6] = {0}, out[6];
	float x[2] = {1, 2};
	uint32_t y[1] = {0};
	CHECK(vpa_fls_local_update(net, g, x, y, 1, 1, 0, 0.5, out, NULL) == 0);
	/* dL/dz = p - onehot = (-1/2, 1/2); dW = dz x^T; delta = -lr grad */
	float want[6] = {0.25f, 0.5f, -0.25f, -0.5f, 0.25f, -0.25f};
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(out[i], want[i], 1e-7);
	/* two epochs: the second step starts from the first one's weights */
	CHECK(vpa_fls_local_update(net, g, x, y, 1, 2, 0, 0.5, out, NULL) == 0);
	/* z = W x + b after step 1: z0 = 0.25 + 1 + 0.25 = 1.5, z1 = -1.5 */
	double p0 = 1 / (1 + exp(-3.0));
	CHECK_NEAR(out[0], 0.25 + 0.5 * (1 - p0) * 1, 1e-6);
	CHECK_NEAR(out[5], -0.25 - 0.5 * (1 - p0), 1e-6);
	vpa_nn_free(net);
}

static void test_sv_eer_hand(void)
{
	/* speakers A, B with one enrolment and one test vector each */
	float e[8] = {1, 0, 1, 0.2f, 0, 1, 1, 0.9f};
	size_t off[3] = {0, 2, 4}, nt, nn;
	double eer;
	CHECK(vpa_fls_sv_eer(e, 2, off, 2, 1, &eer, &nt, &nn, NULL) == 0);
	CHECK(nt == 2 && nn == 2);
	/* tar {0.981, 0.669}, non {0.196, 0.743}: the ROC hull gives 1/4 */
	CHECK_NEAR(eer, 0.25, 1e-12);
	/* two enrolment vectors: the score is the MEAN of the cosines (eq. 1):
	   tar {0.707, 0.877} > non {0.671, 0.693}, EER 0; the cosine with the mean
	   enrolment vector would give tar {1, 0.894}, non {0.949, 0.707}, EER > 0 */
	float f[12] = {1, 0, 0, 1, 1, 1,       /* A: enrol (1,0), (0,1); test (1,1) */
		       1, 0.2f, 1, -0.2f, 1, 0.5f}; /* B: enrol (1,.2), (1,-.2); test (1,.5) */
	size_t off2[3] = {0, 3, 6};
	CHECK(vpa_fls_sv_eer(f, 2, off2, 2, 2, &eer, &nt, &nn, NULL) == 0);
	CHECK(nt == 2 && nn == 2);
	CHECK_NEAR(eer, 0, 1e-12);
	/* no test row: an error */
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_fls_sv_eer(e, 2, off, 2, 2, &eer, &nt, &nn, &err) == VPA_EINPUT);
}

static const char *small_cfg =
	"{users: 900, test_users: 150, sv_train_users: 60, sv_test_users: 40, cohort: 100,"
	" population: 1e8,"
	" rounds: 12, eval_every: 4, emb_epochs: 3, emb_hidden: 32, emb_dim: 16}";

static int build_small(int threads, struct vpa_target *t, struct vpa_ynode **root)
{
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_yaml_parse("cfg", small_cfg, strlen(small_cfg), root, &err)) {
		printf("# %s\n", err.msg);
		return -1;
	}
	struct vpa_run_ctx ctx = {"cfg", ".", 5, threads, NULL, NULL};
	memset(t, 0, sizeof(*t));
	t->kind = &vpa_target_fl_speaker;
	t->id = "fl";
	/* the options as validation fills them; the target owns them (released with it) */
	t->opts = vpa_opts_new(vpa_target_fl_speaker.schema, *root);
	int rc = vpa_target_fl_speaker.build(&ctx, t->opts, t, &err);
	if (rc)
		printf("# %s\n", err.msg);
	return rc;
}

static void test_target(void)
{
	struct vpa_target t1, t2;
	struct vpa_ynode *r1, *r2;
	CHECK(build_small(1, &t1, &r1) == 0);
	CHECK(build_small(2, &t2, &r2) == 0);
	const struct vpa_fls_target *T = t1.data, *U = t2.data;
	CHECK(T->n_reg == 4 && T->n_train == 650 && T->n_params == 520 * 16 + 16 + 16 * 6 + 6);
	/* bit-identical for any thread count */
	for (size_t i = 0; i < 4; i++) {
		CHECK(T->reg[i].n_curve == 4);
		CHECK(memcmp(T->reg[i].curve_acc, U->reg[i].curve_acc, 4 * sizeof(double)) == 0);
		CHECK(T->reg[i].snr == U->reg[i].snr || (isinf(T->reg[i].snr) && isinf(U->reg[i].snr)));
		CHECK(T->reg[i].sv_eer == U->reg[i].sv_eer);
	}
	const struct vpa_fls_regime_res *none = vpa_fls_find(T, VPA_FLS_NONE),
					*loc = vpa_fls_find(T, VPA_FLS_LOCAL),
					*cen = vpa_fls_find(T, VPA_FLS_CENTRAL),
					*cl = vpa_fls_find(T, VPA_FLS_CENTRAL_LOCAL);
	CHECK(none && loc && cen && cl);
	if (!(none && loc && cen && cl))
		return;
	/* the accountant: the noise for the stated deployment, q = 100/1e8, 12
	 * rounds, eps 2, delta 1e-5; the run's epsilon for q = 100/650 */
	double z, eps, eps_run;
	CHECK(vpa_dp_sigma(1e-6, 2, 12, 1e-5, &z, NULL) == 0);
	CHECK(cen->priv.z == z && cl->priv.z == z);
	CHECK(vpa_dp_epsilon(1e-6, z, 12, 1e-5, &eps, NULL, NULL) == 0);
	CHECK(eps <= 2 + 1e-9 && cen->priv.eps_deploy == eps);
	CHECK(cen->priv.q_deploy == 1e-6 && cen->priv.q_run == 100.0 / 650);
	CHECK(vpa_dp_epsilon(100.0 / 650, z, 12, 1e-5, &eps_run, NULL, NULL) == 0);
	CHECK(cen->priv.eps_central == eps_run && eps_run > 10 * eps);
	/* local, the run's: composed over the most participations of one user */
	double el;
	CHECK(loc->max_participations >= 2);
	CHECK(vpa_gauss_analytic_epsilon(loc->priv.sigma_local, 1e-5,
					 2 * T->clip * sqrt((double)loc->max_participations), &el,
					 NULL) == 0);
	CHECK(loc->priv.eps_local_run == el && el > 2);
	/* local: analytic Gaussian for sensitivity 2C at (2, 1e-5) */
	double sl;
	CHECK(vpa_gauss_analytic_sigma(2, 1e-5, 2 * T->clip, &sl, NULL) == 0);
	CHECK(loc->priv.sigma_local == sl);
	CHECK(isnan(none->priv.eps_local) && isnan(none->priv.eps_central));
	CHECK_NEAR(cl->priv.eps_local, 25.7, 1e-12);
	CHECK_NEAR(cl->priv.pu.eps, 23.7, 1e-12);
	/* noise norms of round 1 against their expectations (chi concentrates):
	   central ||N(0, (zC)^2 I_n)|| / cohort, local ||mean of cohort draws||;
	   none: exactly no noise */
	double n = (double)T->n_params, C = (double)T->cohort;
	CHECK_REL(cen->noise_norm, z * T->clip * sqrt(n) / C, 0.05);
	CHECK_REL(loc->noise_norm, sl * sqrt(n / C), 0.05);
	CHECK(none->noise_norm == 0 && isinf(none->snr));
	CHECK(none->first_norm == cen->first_norm && none->first_norm > 0);
	/* the paper's order: SNR and accuracy, local < central + weak local < central */
	CHECK(loc->snr < cl->snr && cl->snr < cen->snr);
	CHECK(loc->acc_final < cl->acc_final && cl->acc_final < cen->acc_final);
	CHECK(none->acc_final > none->curve_acc[0] + 0.1);
	/* speaker verification ran for the baseline and every regime */
	CHECK(T->sv_eer_baseline >= 0 && T->sv_eer_baseline < 0.5);
	for (size_t i = 0; i < 4; i++)
		CHECK(T->reg[i].sv_eer >= 0 && T->reg[i].sv_eer <= 1 && T->reg[i].emb != NULL);
	CHECK(T->n_sv_trials_tar == 40 * 4 && T->n_sv_trials_non == 40 * 4 * 39);
	vpa_target_release(&t1);
	vpa_target_release(&t2);
	vpa_ynode_free(r1);
	vpa_ynode_free(r2);
}

/* Scenario-level validation through the loader (the kinds are registered). */
static void check_scn(const char *target, const char *want)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "name: t\ntargets:\n  - %s\nattacks:\n  - {id: a, kind: fl_training, target: fl}\n",
		 target);
	struct vpa_scenario *s = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = vpa_scenario_parse("t.yaml", ".", buf, strlen(buf), &s, &err);
	if (!want) {
		CHECK(rc == 0);
		if (rc)
			printf("#   %s\n", err.msg);
	} else {
		CHECK(rc == VPA_EINPUT);
		if (!strstr(err.msg, want))
			printf("#   got '%s', expected '%s'\n", err.msg, want);
		CHECK(strstr(err.msg, want) != NULL);
	}
	vpa_scenario_free(s);
}

static void test_validate(void)
{
	check_scn("{id: fl, kind: fl_speaker_classifier}", NULL);
	check_scn("{id: fl, kind: fl_speaker_classifier, users: 1000}",
		  "t.yaml:3:50: users must be at least test_users + sv_train_users + sv_test_users "
		  "+ cohort = 1400, got 1000");
	check_scn("{id: fl, kind: fl_speaker_classifier, source: import}",
		  "source: import needs 'vectors'");
	check_scn("{id: fl, kind: fl_speaker_classifier, labels: x}",
		  "'labels' is only used with source: import");
	check_scn("{id: fl, kind: fl_speaker_classifier, norm_epsilon: 30}",
		  "norm_epsilon (30) must be less than local_epsilon (25.7)");
	check_scn("{id: fl, kind: fl_speaker_classifier, regimes: [none, none]}",
		  "duplicate regime 'none'");
	check_scn("{id: fl, kind: fl_speaker_classifier, regimes: [nonee]}",
		  "regimes");
	check_scn("{id: fl, kind: fl_speaker_classifier, enrol: 8}",
		  "enrol must be less than utterances (8), got 8");
	check_scn("{id: fl, kind: fl_speaker_classifier, regimes: [none, local], norm_epsilon: 30}",
		  NULL);
}

int main(void)
{
	RUN(test_simulate);
	RUN(test_import);
	RUN(test_release);
	RUN(test_local_update_hand);
	RUN(test_sv_eer_hand);
	RUN(test_target);
	RUN(test_validate);
	return DONE();
}
