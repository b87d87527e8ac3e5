/*
 * tests/unit/test_nn_train.c - optimisers against hand computation, gradient
 * clipping, per-example gradients and DP-SGD, and small learning tasks that
 * the engine must solve (classification, recurrence in both directions,
 * statistics pooling, knowledge distillation).
 */
#include "learn/nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void test_adam_hand(void)
{
	/* f(w) = 0.5 (w0^2 + 3 w1^2), w = (1, -2), lr 0.1, b1 0.9, b2 0.999, eps 1e-8.
	 * Step 1: g = (1, -6); m = 0.1 g, v = 0.001 g^2; corrected m/v^.5 = sign(g)
	 *   -> w = (0.9, -1.9) (to 1e-8).
	 * Step 2 (w0): g = 0.9; m = 0.09 + 0.09 = 0.18, v = 0.000999 + 0.00081 = 0.001809;
	 *   mhat = 0.18 / 0.19, vhat = 0.001809 / 0.001999;
	 *   w0 = 0.9 - 0.1 mhat / sqrt(vhat) = 0.80041223 (and w1 = -1.80016649). */
	float w[2] = {1, -2}, g[2];
	struct vpa_optim o;
	vpa_optim_init_adam(&o, 2, 0.1, 0.9, 0.999, 1e-8, 0);
	g[0] = w[0];
	g[1] = 3 * w[1];
	vpa_optim_step(&o, w, g);
	CHECK_NEAR(w[0], 0.9, 1e-6);
	CHECK_NEAR(w[1], -1.9, 1e-6);
	g[0] = w[0];
	g[1] = 3 * w[1];
	vpa_optim_step(&o, w, g);
	CHECK_NEAR(w[0], 0.9 - 0.1 * (0.18 / 0.19) / sqrt(0.001809 / 0.001999), 1e-6);
	CHECK_NEAR(w[0], 0.8004122297, 1e-6);
	CHECK_NEAR(w[1], -1.8001664859, 1e-6);
	CHECK(o.t == 2);
	vpa_optim_release(&o);
}

static void test_fedadam_hand(void)
{
	/* Liu et al. eq. 6-8, lr 0.1, b1 0.9, b2 0.99, eps 0.25 (large, so that
	 * its place inside the root shows), d = (0.5, -2) in rounds 1 and 2.
	 * Round 1: m = (0.05, -0.2), v = (0.0025, 0.04); m^ = d, v^ = d^2:
	 *   w += 0.1 d / sqrt(d^2 + 0.25) = (0.05/sqrt(0.5), -0.2/sqrt(4.25)).
	 * Round 2: m = 0.9 m + 0.1 d = 0.19 d, m^ = d; v = 0.0199 d^2, v^ = d^2:
	 *   the same step again (a constant delta gives a constant step). */
	float w[2] = {0, 0}, m[2] = {0, 0}, v[2] = {0, 0}, d[2] = {0.5f, -2};
	vpa_fedadam_step(VPA_FEDADAM_LIU, 0.1, 0.9, 0.99, 0.25, 1, m, v, w, d, 2);
	CHECK_NEAR(m[0], 0.05, 1e-8);
	CHECK_NEAR(v[1], 0.04, 1e-8);
	CHECK_NEAR(w[0], 0.05 / sqrt(0.5), 1e-7);
	CHECK_NEAR(w[1], -0.2 / sqrt(4.25), 1e-7);
	vpa_fedadam_step(VPA_FEDADAM_LIU, 0.1, 0.9, 0.99, 0.25, 2, m, v, w, d, 2);
	CHECK_NEAR(w[0], 2 * 0.05 / sqrt(0.5), 1e-7);
	CHECK_NEAR(w[1], 2 * -0.2 / sqrt(4.25), 1e-7);
	/* Reddi et al. (no bias correction, tau outside), tau 1e-3, round 1:
	 * w += 0.1 m / (sqrt(v) + tau) = 0.1 (0.05, -0.2) / ((0.05, 0.2) + 0.001) */
	float w2[2] = {0, 0}, m2[2] = {0, 0}, v2[2] = {0, 0};
	vpa_fedadam_step(VPA_FEDADAM_REDDI, 0.1, 0.9, 0.99, 1e-3, 1, m2, v2, w2, d, 2);
	CHECK_NEAR(w2[0], 0.005 / 0.051, 1e-7);
	CHECK_NEAR(w2[1], -0.02 / 0.201, 1e-7);
	/* round 2 (Reddi): m = 0.095, v = 0.004975 -> w0 += 0.1 0.095 / (sqrt(v) + 1e-3) */
	vpa_fedadam_step(VPA_FEDADAM_REDDI, 0.1, 0.9, 0.99, 1e-3, 2, m2, v2, w2, d, 2);
	CHECK_NEAR(w2[0], 0.005 / 0.051 + 0.0095 / (sqrt(0.004975) + 1e-3), 1e-7);
}

static void test_sgd_hand(void)
{
	/* f(w) = w^2, w0 = 1, lr 0.1, momentum 0.9, weight decay 0.1:
	 * g' = 2 + 0.1 = 2.1, v = 2.1, w = 1 - 0.21 = 0.79;
	 * g' = 1.58 + 0.079 = 1.659, v = 1.89 + 1.659 = 3.549, w = 0.79 - 0.3549 = 0.4351 */
	float w = 1, g;
	struct vpa_optim o;
	vpa_optim_init_sgd(&o, 1, 0.1, 0.9, 0.1);
	g = 2 * w;
	vpa_optim_step(&o, &w, &g);
	CHECK_NEAR(w, 0.79, 1e-6);
	g = 2 * w;
	vpa_optim_step(&o, &w, &g);
	CHECK_NEAR(w, 0.4351, 1e-6);
	vpa_optim_reset(&o);
	CHECK(o.t == 0 && o.m[0] == 0);
	vpa_optim_release(&o);
}

static void test_clip(void)
{
	float g[2] = {3, 4};
	CHECK_NEAR(vpa_nn_clip_norm(g, 2, 1.0), 5, 1e-12);
	CHECK_NEAR(g[0], 0.6, 1e-7);
	CHECK_NEAR(g[1], 0.8, 1e-7);
	CHECK_NEAR(vpa_nn_clip_norm(g, 2, 2.0), 1, 1e-6); /* under the bound: unchanged */
	CHECK_NEAR(g[1], 0.8, 1e-7);
}

/* Three Gaussian blobs in 2-D (std 0.6) at angles 0, 120, 240 degrees, radius 2. */
static void blobs(size_t n, float *x, uint32_t *y, uint64_t seed)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++) {
		uint32_t c = (uint32_t)(i % 3);
		double a = 2.0943951023931953 * c;
		y[i] = c;
		x[2 * i] = (float)(2 * cos(a) + 0.6 * vpa_rng_normal(&r));
		x[2 * i + 1] = (float)(2 * sin(a) + 0.6 * vpa_rng_normal(&r));
	}
}

static double accuracy(struct vpa_nn *net, const struct vpa_nn_batch *b, const uint32_t *y)
{
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_nn_forward(net, b, VPA_NN_EVAL, &err) != 0)
		return -1;
	size_t R, K;
	const float *z = vpa_nn_output(net, &R, &K);
	size_t ok = 0;
	for (size_t r = 0; r < R; r++) {
		size_t best = 0;
		for (size_t k = 1; k < K; k++)
			if (z[r * K + k] > z[r * K + best])
				best = k;
		ok += best == y[r];
	}
	return (double)ok / (double)R;
}

static struct vpa_nn *blob_mlp(uint64_t seed)
{
	struct vpa_nn *net = vpa_nn_new(2);
	vpa_nn_add_dense(net, 16);
	vpa_nn_add_simple(net, VPA_NN_RELU);
	vpa_nn_add_dense(net, 3);
	vpa_nn_init_params(net, seed);
	return net;
}

static void test_classification(void)
{
	enum { N = 300 };
	float x[2 * N], xt[2 * N];
	uint32_t y[N], yt[N];
	blobs(N, x, y, 1);
	blobs(N, xt, yt, 2);
	size_t off[2] = {0, N};
	struct vpa_nn_batch b = {1, off, x, NULL}, bt = {1, off, xt, NULL};
	struct vpa_nn *net = blob_mlp(3);
	size_t np;
	vpa_nn_params(net, &np);
	struct vpa_optim o;
	vpa_optim_init_adam(&o, np, 0.05, 0.9, 0.999, 1e-8, 0);
	struct vpa_nn_targets t;
	vpa_nn_targets_init(&t);
	t.labels = y;
	struct vpa_err err;
	vpa_err_init(&err);
	double l0 = 0, l = 0;
	for (int s = 0; s < 150; s++) {
		CHECK(vpa_nn_train_step(net, &o, &b, &t, 5.0, &l, &err) == 0);
		if (s == 0)
			l0 = l;
	}
	double acc = accuracy(net, &bt, yt);
	printf("# blobs: loss %.3f -> %.3f, held-out accuracy %.3f (chance 0.333)\n", l0, l, acc);
	CHECK(l0 > 0.9);         /* about ln 3 = 1.10 at the start */
	CHECK(l < 0.1);          /* the blobs are 2.9 sd apart: nearly separable */
	CHECK(acc > 0.9);

	/* knowledge distillation: a student learns from the teacher's outputs at
	 * T = 4 alone (no labels) and reaches the teacher's held-out accuracy */
	CHECK(vpa_nn_forward(net, &b, VPA_NN_EVAL, &err) == 0);
	size_t R, K;
	const float *z = vpa_nn_output(net, &R, &K);
	float *soft = malloc(R * K * sizeof(float));
	for (size_t i = 0; i < R * K; i++)
		soft[i] = z[i] / 4.0f;
	vpa_nn_softmax(soft, R, K, soft);
	struct vpa_nn *st = blob_mlp(4);
	struct vpa_optim os;
	vpa_optim_init_adam(&os, np, 0.05, 0.9, 0.999, 1e-8, 0);
	struct vpa_nn_targets ts;
	vpa_nn_targets_init(&ts);
	ts.soft = soft;
	ts.temperature = 4;
	for (int s = 0; s < 150; s++)
		CHECK(vpa_nn_train_step(st, &os, &b, &ts, 0, &l, &err) == 0);
	double sacc = accuracy(st, &bt, yt);
	printf("# distilled student (T=4): held-out accuracy %.3f (teacher %.3f)\n", sacc, acc);
	CHECK(sacc > acc - 0.03);
	free(soft);
	vpa_optim_release(&os);
	vpa_nn_free(st);
	vpa_optim_release(&o);
	vpa_nn_free(net);
}

/*
 * Token sequences over 5 symbols; target at t is the token at t - shift
 * (shift 1: remember the previous token; shift -1: predict from the next
 * token, which only a right-to-left pass can see).  Edges: the token itself.
 */
static void make_seqs(uint64_t seed, size_t ns, size_t *off, uint32_t **ids, uint32_t **y,
		      int shift)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, seed);
	off[0] = 0;
	for (size_t b = 0; b < ns; b++)
		off[b + 1] = off[b] + 5 + vpa_rng_below(&r, 8);
	size_t T = off[ns];
	*ids = malloc(T * sizeof(uint32_t));
	*y = malloc(T * sizeof(uint32_t));
	for (size_t i = 0; i < T; i++)
		(*ids)[i] = (uint32_t)vpa_rng_below(&r, 5);
	for (size_t b = 0; b < ns; b++)
		for (size_t i = off[b]; i < off[b + 1]; i++) {
			long j = (long)i - shift;
			(*y)[i] = j >= (long)off[b] && j < (long)off[b + 1] ? (*ids)[j] : (*ids)[i];
		}
}

/* Held-out accuracy after training on 100 sequences. */
static double seq_task(int bidir, int shift, int steps)
{
	enum { NS = 100 };
	size_t off[NS + 1], offt[NS + 1];
	uint32_t *ids, *y, *idt, *yt;
	make_seqs(7, NS, off, &ids, &y, shift);
	make_seqs(8, NS, offt, &idt, &yt, shift);
	struct vpa_nn *net = vpa_nn_new(0);
	vpa_nn_add_embedding(net, 5, 8);
	if (bidir)
		vpa_nn_add_bilstm(net, 12);
	else
		vpa_nn_add_lstm(net, 16, 0);
	vpa_nn_add_dense(net, 5);
	vpa_nn_init_params(net, 11);
	size_t np;
	vpa_nn_params(net, &np);
	struct vpa_optim o;
	vpa_optim_init_adam(&o, np, 0.03, 0.9, 0.999, 1e-8, 0);
	struct vpa_nn_targets t;
	vpa_nn_targets_init(&t);
	t.labels = y;
	struct vpa_nn_batch b = {NS, off, NULL, ids}, bt = {NS, offt, NULL, idt};
	struct vpa_err err;
	vpa_err_init(&err);
	double l;
	for (int s = 0; s < steps; s++)
		if (vpa_nn_train_step(net, &o, &b, &t, 5.0, &l, &err) != 0)
			break;
	double acc = accuracy(net, &bt, yt);
	vpa_optim_release(&o);
	vpa_nn_free(net);
	free(ids);
	free(y);
	free(idt);
	free(yt);
	return acc;
}

static void test_recurrence(void)
{
	double a1 = seq_task(0, 1, 200), a2 = seq_task(1, -1, 200), a3 = seq_task(0, -1, 200);
	printf("# lstm remembers the previous token: held-out accuracy %.3f (chance 0.2)\n", a1);
	printf("# bilstm predicts the next token: accuracy %.3f; a left-to-right lstm: %.3f\n", a2, a3);
	CHECK(a1 > 0.9);
	CHECK(a2 > 0.9);
	/* a left-to-right pass cannot see the next token (except at the last
	 * frame, whose target is itself): it stays near chance */
	CHECK(a3 < 0.5); /* the future token is invisible to it: the reverse pass matters */
}

static void test_statspool_task(void)
{
	/* sequences of 2-D frames, class = which of two standard deviations
	 * (0.5 or 1.5) generated them; same mean, so only the std carries it */
	enum { NS = 60 };
	struct vpa_rng r;
	vpa_rng_seed(&r, 9);
	size_t off[NS + 1];
	uint32_t y[NS];
	off[0] = 0;
	for (int b = 0; b < NS; b++)
		off[b + 1] = off[b] + 20 + vpa_rng_below(&r, 21);
	float *x = malloc(off[NS] * 2 * sizeof(float));
	for (int b = 0; b < NS; b++) {
		y[b] = (uint32_t)(b % 2);
		for (size_t i = off[b] * 2; i < off[b + 1] * 2; i++)
			x[i] = (float)((y[b] ? 1.5 : 0.5) * vpa_rng_normal(&r));
	}
	struct vpa_nn *net = vpa_nn_new(2);
	int ctx[] = {-1, 0, 1};
	vpa_nn_add_tdnn(net, 8, ctx, 3);
	vpa_nn_add_simple(net, VPA_NN_TANH);
	vpa_nn_add_simple(net, VPA_NN_STATSPOOL);
	vpa_nn_add_dense(net, 2);
	vpa_nn_init_params(net, 12);
	size_t np;
	vpa_nn_params(net, &np);
	struct vpa_optim o;
	vpa_optim_init_sgd(&o, np, 0.1, 0.9, 1e-4);
	struct vpa_nn_targets t;
	vpa_nn_targets_init(&t);
	t.labels = y;
	struct vpa_nn_batch b = {NS, off, x, NULL};
	struct vpa_err err;
	vpa_err_init(&err);
	double l0 = 0, l = 0;
	for (int s = 0; s < 200; s++) {
		CHECK(vpa_nn_train_step(net, &o, &b, &t, 0, &l, &err) == 0);
		if (!s)
			l0 = l;
	}
	double acc = accuracy(net, &b, y);
	printf("# std-only classes through statspool: loss %.3f -> %.3f, accuracy %.3f\n", l0, l, acc);
	CHECK(l < l0 / 3);
	CHECK(acc > 0.95);
	vpa_optim_release(&o);
	vpa_nn_free(net);
	free(x);
}

/* The full-batch gradient is the weighted mean of the per-example ones. */
static void test_example_grads(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	/* (a) pooled: one output row per sequence, per-sequence labels */
	struct vpa_nn *net = vpa_nn_new(3);
	int ctx[] = {-1, 0, 2};
	vpa_nn_add_tdnn(net, 5, ctx, 3);
	vpa_nn_add_simple(net, VPA_NN_SIGMOID);
	vpa_nn_add_simple(net, VPA_NN_STATSPOOL);
	vpa_nn_add_dense(net, 4);
	vpa_nn_init_params(net, 13);
	/* (b) per-frame labels through an LSTM */
	struct vpa_nn *lnet = vpa_nn_new(3);
	vpa_nn_add_lstm(lnet, 5, 0);
	vpa_nn_add_dense(lnet, 4);
	vpa_nn_init_params(lnet, 14);
	size_t off[4] = {0, 3, 8, 10};
	float x[30];
	struct vpa_rng r;
	vpa_rng_seed(&r, 15);
	for (int i = 0; i < 30; i++)
		x[i] = (float)vpa_rng_normal(&r);
	uint32_t ys[3] = {1, 3, 0}, yf[10] = {0, 1, 2, 3, 0, 1, 2, 3, 3, 2};
	struct vpa_nn_batch b = {3, off, x, NULL};
	for (int c = 0; c < 2; c++) {
		struct vpa_nn *n = c ? lnet : net;
		struct vpa_nn_targets t;
		vpa_nn_targets_init(&t);
		t.labels = c ? yf : ys;
		t.per_sequence = !c;
		size_t np;
		float *G = vpa_nn_grads(n, &np);
		double *acc = calloc(np, sizeof(double)), l, ltot = 0;
		for (size_t e = 0; e < 3; e++) {
			CHECK(vpa_nn_example_grad(n, &b, e, &t, &l, &err) == 0);
			double wgt = c ? (double)(off[e + 1] - off[e]) / 10.0 : 1.0 / 3.0;
			ltot += wgt * l;
			for (size_t i = 0; i < np; i++)
				acc[i] += wgt * G[i];
		}
		CHECK(vpa_nn_forward(n, &b, VPA_NN_TRAIN, &err) == 0);
		size_t R, K;
		vpa_nn_output(n, &R, &K);
		float *dz = malloc(R * K * sizeof(float));
		double lfull;
		CHECK(vpa_nn_loss(n, &t, &lfull, dz, &err) == 0);
		vpa_nn_zero_grad(n);
		vpa_nn_backward(n, dz, NULL);
		double md = 0, mg = 0;
		for (size_t i = 0; i < np; i++) {
			md = fmax(md, fabs(acc[i] - G[i]));
			mg = fmax(mg, fabs(G[i]));
		}
		CHECK(mg > 1e-3);
		CHECK(md < 1e-5 * fmax(mg, 1));
		CHECK_NEAR(ltot, lfull, 1e-6);
		free(dz);
		free(acc);
	}
	vpa_nn_free(net);
	vpa_nn_free(lnet);
}

static void test_dpsgd(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	enum { N = 12 };
	float x[2 * N];
	uint32_t y[N];
	blobs(N, x, y, 5);
	size_t off[N + 1];
	for (int i = 0; i <= N; i++)
		off[i] = (size_t)i; /* one frame per example */
	struct vpa_nn_batch b = {N, off, x, NULL};
	struct vpa_nn_targets t;
	vpa_nn_targets_init(&t);
	t.labels = y;
	struct vpa_nn *a = blob_mlp(21), *c = vpa_nn_clone(a);
	size_t np;
	float *Pa = vpa_nn_params(a, &np), *Pc = vpa_nn_params(c, &np);
	struct vpa_optim oa, oc;
	struct vpa_rng rng;
	vpa_rng_seed(&rng, 1);
	double l, lc;
	size_t ncl;
	/* (1) no clipping in effect, no noise: the ordinary SGD step */
	vpa_optim_init_sgd(&oa, np, 0.1, 0, 0);
	vpa_optim_init_sgd(&oc, np, 0.1, 0, 0);
	CHECK(vpa_nn_dpsgd_step(a, &oa, &b, &t, 1e9, 0, 0, &rng, &l, &ncl, &err) == 0);
	CHECK(vpa_nn_train_step(c, &oc, &b, &t, 0, &lc, &err) == 0);
	double md = 0;
	for (size_t i = 0; i < np; i++)
		md = fmax(md, fabs(Pa[i] - Pc[i]));
	CHECK(md < 1e-6);
	CHECK(ncl == 0);
	CHECK_NEAR(l, lc, 1e-6);
	/* (2) tiny clip: every example clipped; the update is a mean of vectors
	 * of norm clip, so its norm is at most lr * clip */
	float *before = malloc(np * sizeof(float));
	memcpy(before, Pa, np * sizeof(float));
	CHECK(vpa_nn_dpsgd_step(a, &oa, &b, &t, 1e-3, 0, 0, &rng, &l, &ncl, &err) == 0);
	CHECK(ncl == N);
	double un = 0;
	for (size_t i = 0; i < np; i++)
		un += ((double)Pa[i] - before[i]) * ((double)Pa[i] - before[i]);
	un = sqrt(un);
	CHECK(un <= 0.1 * 1e-3 * (1 + 1e-4));
	CHECK(un > 0.1 * 1e-3 * 0.2);
	/* (3) noise: sigma 2, clip 1, denom 4, lr 1: the update differs from the
	 * noiseless one by N(0, (2 * 1 / 4)^2) per coordinate */
	vpa_nn_copy_params(c, a);
	struct vpa_optim o1, o2;
	vpa_optim_init_sgd(&o1, np, 1, 0, 0);
	vpa_optim_init_sgd(&o2, np, 1, 0, 0);
	CHECK(vpa_nn_dpsgd_step(a, &o1, &b, &t, 1.0, 2.0, 4.0, &rng, &l, NULL, &err) == 0);
	CHECK(vpa_nn_dpsgd_step(c, &o2, &b, &t, 1.0, 0.0, 4.0, &rng, &l, NULL, &err) == 0);
	double s = 0, m = 0;
	for (size_t i = 0; i < np; i++)
		m += Pa[i] - Pc[i];
	m /= (double)np;
	for (size_t i = 0; i < np; i++)
		s += (Pa[i] - Pc[i] - m) * (Pa[i] - Pc[i] - m);
	double sd = sqrt(s / (double)(np - 1));
	printf("# dp-sgd noise: sd %.4f over %zu coordinates (expected 0.5)\n", sd, np);
	CHECK(fabs(sd - 0.5) < 0.5 * 4 / sqrt(2.0 * (double)np)); /* 4 standard errors */
	free(before);
	vpa_optim_release(&oa);
	vpa_optim_release(&oc);
	vpa_optim_release(&o1);
	vpa_optim_release(&o2);
	vpa_nn_free(a);
	vpa_nn_free(c);
}

static void test_dpsgd_units(void)
{
	/* user-level DP-SGD (vpa_nn_dpsgd_step_units) on blobs: 12 examples */
	struct vpa_err err;
	vpa_err_init(&err);
	enum { N = 12 };
	float x[2 * N];
	uint32_t y[N];
	blobs(N, x, y, 7);
	size_t off[N + 1];
	for (int i = 0; i <= N; i++)
		off[i] = (size_t)i;
	struct vpa_nn_batch b = {N, off, x, NULL};
	struct vpa_nn_targets t;
	vpa_nn_targets_init(&t);
	t.labels = y;
	struct vpa_nn *a = blob_mlp(23), *c = vpa_nn_clone(a);
	size_t np;
	float *Pa = vpa_nn_params(a, &np), *Pc = vpa_nn_params(c, &np);
	struct vpa_rng rng;
	vpa_rng_seed(&rng, 3);
	double l, lc;
	size_t ncl, nclc;
	struct vpa_optim oa, oc, o1, o2, o3, o4;
	/* (1) one example per unit: exactly the per-example step */
	size_t uo[N + 1];
	for (int i = 0; i <= N; i++)
		uo[i] = (size_t)i;
	vpa_optim_init_sgd(&oa, np, 0.1, 0, 0);
	vpa_optim_init_sgd(&oc, np, 0.1, 0, 0);
	CHECK(vpa_nn_dpsgd_step_units(a, &oa, &b, &t, uo, N, 0.05, 0, 6, &rng, &l, &ncl, &err) ==
	      0);
	CHECK(vpa_nn_dpsgd_step(c, &oc, &b, &t, 0.05, 0, 6, &rng, &lc, &nclc, &err) == 0);
	double md = 0;
	for (size_t i = 0; i < np; i++)
		md = fmax(md, fabs(Pa[i] - Pc[i]));
	CHECK(md < 1e-6);
	CHECK(ncl == nclc);
	CHECK(ncl > 0);
	CHECK_NEAR(l, lc, 1e-9);
	/* (2) no clipping, no noise, units {0..3} and {4..11}, denom 2, lr 1:
	 * the step is minus the mean of the two units' mean gradients, which
	 * ordinary steps on each half (mean loss) give independently */
	vpa_nn_copy_params(c, a);
	float *p0 = malloc(np * sizeof(float)), *g1 = malloc(np * sizeof(float));
	memcpy(p0, Pa, np * sizeof(float));
	size_t u2[3] = {0, 4, N};
	vpa_optim_init_sgd(&o1, np, 1, 0, 0);
	CHECK(vpa_nn_dpsgd_step_units(a, &o1, &b, &t, u2, 2, 1e9, 0, 2, &rng, &l, &ncl, &err) ==
	      0);
	CHECK(ncl == 0);
	struct vpa_nn_batch h1 = {4, off, x, NULL}, h2 = {8, off, x + 2 * 4, NULL};
	struct vpa_nn_targets t1, t2;
	vpa_nn_targets_init(&t1);
	vpa_nn_targets_init(&t2);
	t1.labels = y;
	t2.labels = y + 4;
	vpa_optim_init_sgd(&o2, np, 1, 0, 0);
	CHECK(vpa_nn_train_step(c, &o2, &h1, &t1, 0, &lc, &err) == 0);
	for (size_t i = 0; i < np; i++)
		g1[i] = p0[i] - Pc[i]; /* the first unit's mean gradient */
	memcpy(Pc, p0, np * sizeof(float));
	CHECK(vpa_nn_train_step(c, &o2, &h2, &t2, 0, &lc, &err) == 0);
	md = 0;
	double gn = 0;
	for (size_t i = 0; i < np; i++) {
		double want = p0[i] - 0.5 * ((double)g1[i] + (p0[i] - Pc[i]));
		md = fmax(md, fabs(Pa[i] - want));
		gn = fmax(gn, fabs((double)g1[i]));
	}
	CHECK(gn > 1e-4);
	CHECK(md < 1e-5 * fmax(gn, 1));
	/* (3) a unit of 8 copies of one example moves the sum by at most clip,
	 * exactly as one copy alone does */
	float xc[2 * 8];
	uint32_t yc[8];
	for (int i = 0; i < 8; i++) {
		xc[2 * i] = x[0];
		xc[2 * i + 1] = x[1];
		yc[i] = y[0];
	}
	struct vpa_nn_batch bc = {8, off, xc, NULL}, b1 = {1, off, xc, NULL};
	struct vpa_nn_targets tc;
	vpa_nn_targets_init(&tc);
	tc.labels = yc;
	size_t u8[2] = {0, 8}, u1[2] = {0, 1};
	vpa_nn_copy_params(c, a);
	vpa_optim_init_sgd(&o3, np, 1, 0, 0);
	vpa_optim_init_sgd(&o4, np, 1, 0, 0);
	memcpy(p0, Pa, np * sizeof(float));
	CHECK(vpa_nn_dpsgd_step_units(a, &o3, &bc, &tc, u8, 1, 1e-3, 0, 1, &rng, &l, &ncl, &err) ==
	      0);
	CHECK(ncl == 1);
	CHECK(vpa_nn_dpsgd_step_units(c, &o4, &b1, &tc, u1, 1, 1e-3, 0, 1, &rng, &lc, &nclc,
				      &err) == 0);
	double un = 0;
	md = 0;
	for (size_t i = 0; i < np; i++) {
		un += ((double)Pa[i] - p0[i]) * ((double)Pa[i] - p0[i]);
		md = fmax(md, fabs(Pa[i] - Pc[i]));
	}
	CHECK(sqrt(un) <= 1e-3 * (1 + 1e-4));
	CHECK(sqrt(un) > 1e-3 * 0.99);
	CHECK(md < 1e-7);
	/* ... whereas per example the 8 copies move it 8 times as far */
	memcpy(Pa, p0, np * sizeof(float));
	CHECK(vpa_nn_dpsgd_step(a, &o3, &bc, &tc, 1e-3, 0, 1, &rng, &l, &ncl, &err) == 0);
	CHECK(ncl == 8);
	un = 0;
	for (size_t i = 0; i < np; i++)
		un += ((double)Pa[i] - p0[i]) * ((double)Pa[i] - p0[i]);
	CHECK(fabs(sqrt(un) - 8e-3) < 8e-3 * 1e-3);
	free(p0);
	free(g1);
	vpa_optim_release(&oa);
	vpa_optim_release(&oc);
	vpa_optim_release(&o1);
	vpa_optim_release(&o2);
	vpa_optim_release(&o3);
	vpa_optim_release(&o4);
	vpa_nn_free(a);
	vpa_nn_free(c);
}

static void test_flat_views_clone(void)
{
	/* flat views line up with the tensors; a clone is independent */
	struct vpa_nn *net = vpa_nn_new(3);
	vpa_nn_add_dense(net, 4);
	vpa_nn_add_simple(net, VPA_NN_BATCHNORM);
	vpa_nn_add_lstm(net, 2, 0);
	vpa_nn_init_params(net, 1);
	size_t np, ns, tot = 0;
	float *P = vpa_nn_params(net, &np);
	vpa_nn_state(net, &ns);
	CHECK(np == (12 + 4) + (4 + 4) + (8 * 4 + 8 * 2 + 8));
	CHECK(ns == 8);
	for (size_t i = 0; i < vpa_nn_n_layers(net); i++)
		for (size_t k = 0; k < vpa_nn_n_tensors(net, i); k++) {
			struct vpa_nn_tensor t;
			vpa_nn_tensor(net, i, k, &t);
			if (t.trainable) {
				CHECK(t.data == P + tot);
				tot += t.shape[0] * (t.ndim == 2 ? t.shape[1] : 1);
			}
		}
	CHECK(tot == np);
	struct vpa_nn *c = vpa_nn_clone(net);
	size_t nc;
	float *Q = vpa_nn_params(c, &nc);
	CHECK(nc == np && memcmp(P, Q, np * sizeof(float)) == 0);
	Q[0] += 1;
	CHECK(P[0] != Q[0]);
	vpa_nn_free(c);
	vpa_nn_free(net);
}

int main(void)
{
	RUN(test_adam_hand);
	RUN(test_sgd_hand);
	RUN(test_fedadam_hand);
	RUN(test_clip);
	RUN(test_classification);
	RUN(test_recurrence);
	RUN(test_statspool_task);
	RUN(test_example_grads);
	RUN(test_dpsgd);
	RUN(test_dpsgd_units);
	RUN(test_flat_views_clone);
	return DONE();
}
