/*
 * tests/unit/test_nn.c - finite-difference gradient checks of every layer of
 * learn/nn (input and parameter gradients), of the losses, of whole networks.
 *
 * Method.  The loss is evaluated in double from the float32 network output:
 * either L = sum_i w_i y_i with fixed random weights w (so dL/dy = w exactly),
 * or the softmax cross-entropy of nn.h.  Every parameter and every input
 * value is perturbed and the derivative estimated with the five-point stencil
 *     f'(x) ~ (f(x-2h) - 8 f(x-h) + 8 f(x+h) - f(x+2h)) / (12 h),  h = 2e-2,
 * whose truncation error is O(h^4) (~1e-7 relative for the smooth functions
 * here).  The remaining error is float32 rounding of the forward pass: each
 * output carries a relative error of a few 1e-7, which the stencil divides
 * by h, so the estimate is off by about 1e-5 of the loss's magnitude (more
 * behind batch norm, which divides by small standard deviations).  h = 2e-2
 * balances the two (measured: h = 1e-2 doubles the noise, h = 5e-2 lets the
 * truncation term reach 3e-2 on the whole network).  The reported error of a
 * gradient g (analytic) against n (numeric) is
 *     max_i |g_i - n_i| / max(|g_i|, |n_i|, 0.01 max_j |n_j|),
 * i.e. relative, with entries below 1% of the gradient's scale judged
 * against that 1% (there the rounding noise above dominates any relative
 * measure).  A wrong term in a backward pass (a missing factor, a wrong
 * index, an edge frame dropped) gives errors of order 0.1 to 1; the
 * threshold 2e-3 sits two orders of magnitude below that and above the
 * float32 noise observed (at most 1.1e-3, batch norm's input gradient;
 * 1e-5 to 7e-4 elsewhere; every check prints its value).
 * ReLU is checked on inputs kept 0.1 away from its kink (> 2h).
 */
#include "learn/nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define GC_TOL 2e-3

struct gc {
	struct vpa_nn *net;
	struct vpa_nn_batch b;
	float *x;              /* mutable input (NULL for ids) */
	size_t nx;
	double *w;             /* projection of the output, or NULL */
	struct vpa_nn_targets *t; /* CE targets, or NULL */
};

static double gc_loss(struct gc *g)
{
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_nn_set_seed(g->net, 77); /* the same dropout mask every time */
	if (vpa_nn_forward(g->net, &g->b, VPA_NN_TRAIN, &err) != 0) {
		printf("#   forward failed: %s\n", err.msg);
		return NAN;
	}
	size_t R, K;
	const float *y = vpa_nn_output(g->net, &R, &K);
	if (g->t) {
		double l;
		if (vpa_nn_loss(g->net, g->t, &l, NULL, &err) != 0)
			return NAN;
		return l;
	}
	double s = 0;
	for (size_t i = 0; i < R * K; i++)
		s += g->w[i] * y[i];
	return s;
}

static double fd(struct gc *g, float *v)
{
	const double h = 2e-2;
	float v0 = *v;
	double f[4];
	const double d[4] = {-2, -1, 1, 2};
	for (int k = 0; k < 4; k++) {
		*v = (float)(v0 + d[k] * h);
		f[k] = gc_loss(g);
	}
	*v = v0;
	return (f[0] - 8 * f[1] + 8 * f[2] - f[3]) / (12 * h);
}

static double rel_err(const double *a, const double *n, size_t m)
{
	double sc = 0, e = 0;
	for (size_t i = 0; i < m; i++)
		sc = fabs(n[i]) > sc ? fabs(n[i]) : sc;
	for (size_t i = 0; i < m; i++) {
		double den = fmax(fmax(fabs(a[i]), fabs(n[i])), 0.01 * sc);
		double r = den > 0 ? fabs(a[i] - n[i]) / den : 0;
		e = r > e ? r : e;
	}
	return e;
}

/*
 * Check all parameter and input gradients; prints and returns the errors.
 * Also fails when a gradient is identically zero (a check that cannot fail
 * would pass a backward pass that does nothing).
 */
static void gradcheck(struct gc *g, const char *what, int check_input)
{
	struct vpa_err err;
	vpa_err_init(&err);
	size_t np, R, K;
	float *P = vpa_nn_params(g->net, &np);
	vpa_nn_set_seed(g->net, 77);
	CHECK(vpa_nn_forward(g->net, &g->b, VPA_NN_TRAIN, &err) == 0);
	vpa_nn_output(g->net, &R, &K);
	float *dz = calloc(R * K + 1, sizeof(float));
	if (g->t) {
		double l;
		CHECK(vpa_nn_loss(g->net, g->t, &l, dz, &err) == 0);
	} else {
		for (size_t i = 0; i < R * K; i++)
			dz[i] = (float)g->w[i];
	}
	float *dx = check_input ? calloc(g->nx + 1, sizeof(float)) : NULL;
	vpa_nn_zero_grad(g->net);
	vpa_nn_backward(g->net, dz, dx);
	size_t n;
	const float *G = vpa_nn_grads(g->net, &n);
	double *a = malloc((np + g->nx + 1) * sizeof(double));
	double *num = malloc((np + g->nx + 1) * sizeof(double));
	for (size_t i = 0; i < np; i++)
		a[i] = G[i];
	for (size_t i = 0; i < np; i++)
		num[i] = fd(g, &P[i]);
	double ep = np ? rel_err(a, num, np) : 0, ex = 0;
	double amax = 0;
	for (size_t i = 0; i < np; i++)
		amax = fmax(amax, fabs(a[i]));
	if (np)
		CHECK(amax > 1e-3);
	if (check_input) {
		double xmax = 0;
		for (size_t i = 0; i < g->nx; i++) {
			a[i] = dx[i];
			num[i] = fd(g, &g->x[i]);
			xmax = fmax(xmax, fabs(a[i]));
		}
		ex = rel_err(a, num, g->nx);
		CHECK(xmax > 1e-3);
	}
	printf("# gradcheck %-34s params %5zu max rel err %.2e   inputs %4zu max rel err %.2e\n",
	       what, np, ep, check_input ? g->nx : 0, ex);
	CHECK(ep < GC_TOL);
	CHECK(ex < GC_TOL);
	free(a);
	free(num);
	free(dx);
	free(dz);
}

/* Random input, away from 0 by at least `gap` (for ReLU). */
static float *rand_input(struct vpa_rng *r, size_t n, double scale, double gap)
{
	float *x = malloc((n + 1) * sizeof(float));
	for (size_t i = 0; i < n; i++) {
		double v = scale * vpa_rng_normal(r);
		if (fabs(v) < gap)
			v = v < 0 ? v - gap : v + gap;
		x[i] = (float)v;
	}
	return x;
}

static double *rand_w(struct vpa_rng *r, size_t n)
{
	double *w = malloc((n + 1) * sizeof(double));
	for (size_t i = 0; i < n; i++)
		w[i] = vpa_rng_normal(r);
	return w;
}

/* Sequences of lengths lens[0..n_seq-1] of D-dim frames. */
static void make_gc(struct gc *g, struct vpa_nn *net, const size_t *lens, size_t n_seq,
		    size_t *off, uint64_t seed, double scale, double gap)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, seed);
	memset(g, 0, sizeof(*g));
	g->net = net;
	off[0] = 0;
	for (size_t b = 0; b < n_seq; b++)
		off[b + 1] = off[b] + lens[b];
	g->nx = off[n_seq] * vpa_nn_input_dim(net);
	g->x = rand_input(&r, g->nx, scale, gap);
	g->b.n_seq = n_seq;
	g->b.off = off;
	g->b.x = g->x;
	/* output rows: frames, or sequences after pooling */
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_nn_forward(net, &g->b, VPA_NN_EVAL, &err);
	size_t R, K;
	vpa_nn_output(net, &R, &K);
	g->w = rand_w(&r, R * K);
}

static void free_gc(struct gc *g)
{
	free(g->x);
	free(g->w);
	vpa_nn_free(g->net);
}

static void test_grad_dense(void)
{
	struct vpa_nn *net = vpa_nn_new(5);
	vpa_nn_add_dense(net, 4);
	vpa_nn_init_params(net, 1);
	size_t lens[] = {3, 2}, off[3];
	struct gc g;
	make_gc(&g, net, lens, 2, off, 11, 1.0, 0);
	gradcheck(&g, "dense 5->4", 1);
	free_gc(&g);
}

static void tdnn_case(const int *ctx, size_t k, const char *what)
{
	struct vpa_nn *net = vpa_nn_new(3);
	vpa_nn_add_tdnn(net, 4, ctx, k);
	vpa_nn_init_params(net, 2);
	/* lengths 1 and 2 put every frame on an edge; 6 has an interior */
	size_t lens[] = {1, 2, 6}, off[4];
	struct gc g;
	make_gc(&g, net, lens, 3, off, 12, 1.0, 0);
	gradcheck(&g, what, 1);
	free_gc(&g);
}

static void test_grad_tdnn(void)
{
	int a[] = {-2, 0, 3}, b[] = {-1, 0, 1}, c[] = {-3, 0, 3}, d[] = {0}, e[] = {1, 4};
	tdnn_case(a, 3, "tdnn {-2,0,3} (asymmetric)");
	tdnn_case(b, 3, "tdnn {-1,0,1}");
	tdnn_case(c, 3, "tdnn {-3,0,3}");
	tdnn_case(d, 1, "tdnn {0}");
	tdnn_case(e, 2, "tdnn {1,4} (future only)");
}

static void test_tdnn_edges(void)
{
	/* Hand check: input 1-D frames 1, 2, 3 in one sequence and 10 in another;
	 * context {-1, 1}, W = [1, 10], b = 0: y_t = x_{t-1} + 10 x_{t+1} with
	 * edges replicated: [1 + 20, 1 + 30, 2 + 30] and [10 + 100]. */
	struct vpa_nn *net = vpa_nn_new(1);
	int ctx[] = {-1, 1};
	vpa_nn_add_tdnn(net, 1, ctx, 2);
	size_t n;
	float *P = vpa_nn_params(net, &n);
	CHECK(n == 3);
	P[0] = 1;
	P[1] = 10;
	P[2] = 0;
	float x[] = {1, 2, 3, 10};
	size_t off[] = {0, 3, 4};
	struct vpa_nn_batch b = {2, off, x, NULL};
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_nn_forward(net, &b, VPA_NN_EVAL, &err) == 0);
	size_t R, K;
	const float *y = vpa_nn_output(net, &R, &K);
	CHECK(R == 4 && K == 1);
	CHECK_NEAR(y[0], 21, 0);
	CHECK_NEAR(y[1], 31, 0);
	CHECK_NEAR(y[2], 32, 0);
	CHECK_NEAR(y[3], 110, 0);
	/* TRAIN mode (whole splice kept) gives the same */
	CHECK(vpa_nn_forward(net, &b, VPA_NN_TRAIN, &err) == 0);
	y = vpa_nn_output(net, &R, &K);
	CHECK_NEAR(y[2], 32, 0);
	vpa_nn_free(net);
}

static void act_case(enum vpa_nn_kind k, const char *what, double gap)
{
	struct vpa_nn *net = vpa_nn_new(6);
	vpa_nn_add_simple(net, k);
	size_t lens[] = {4, 3}, off[3];
	struct gc g;
	make_gc(&g, net, lens, 2, off, 13, 1.5, gap);
	gradcheck(&g, what, 1);
	free_gc(&g);
}

static void test_grad_activations(void)
{
	act_case(VPA_NN_RELU, "relu", 0.1);
	act_case(VPA_NN_SIGMOID, "sigmoid", 0);
	act_case(VPA_NN_TANH, "tanh", 0);
}

static void test_grad_batchnorm(void)
{
	struct vpa_nn *net = vpa_nn_new(4);
	vpa_nn_add_dense(net, 5);
	vpa_nn_add_simple(net, VPA_NN_BATCHNORM);
	vpa_nn_init_params(net, 3);
	/* non-trivial gamma and beta */
	size_t n;
	float *P = vpa_nn_params(net, &n);
	for (size_t j = 0; j < 5; j++) {
		P[4 * 5 + 5 + j] = 0.5f + 0.3f * (float)j;
		P[4 * 5 + 5 + 5 + j] = 0.1f * (float)j - 0.2f;
	}
	size_t lens[] = {5, 3, 4}, off[4];
	struct gc g;
	make_gc(&g, net, lens, 3, off, 14, 1.0, 0);
	gradcheck(&g, "dense + batchnorm (train)", 1);
	free_gc(&g);
}

static void test_batchnorm_values(void)
{
	/* column [1, 2, 3, 6]: mean 3, biased var 3.5, unbiased 14/3 */
	struct vpa_nn *net = vpa_nn_new(1);
	vpa_nn_add_simple(net, VPA_NN_BATCHNORM);
	float x[] = {1, 2, 3, 6};
	size_t off[] = {0, 4};
	struct vpa_nn_batch b = {1, off, x, NULL};
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_nn_forward(net, &b, VPA_NN_TRAIN, &err) == 0);
	const float *y = vpa_nn_output(net, NULL, NULL);
	CHECK_NEAR(y[0], -2 / sqrt(3.5 + 1e-5), 1e-6);
	CHECK_NEAR(y[3], 3 / sqrt(3.5 + 1e-5), 1e-6);
	size_t ns;
	const float *S = vpa_nn_state(net, &ns);
	CHECK(ns == 2);
	CHECK_NEAR(S[0], 0.1 * 3, 1e-7);                  /* 0.9 * 0 + 0.1 * 3 */
	CHECK_NEAR(S[1], 0.9 + 0.1 * 14.0 / 3.0, 1e-6);   /* 0.9 * 1 + 0.1 * 14/3 */
	CHECK(vpa_nn_forward(net, &b, VPA_NN_EVAL, &err) == 0);
	y = vpa_nn_output(net, NULL, NULL);
	CHECK_NEAR(y[3], (6 - S[0]) / sqrt(S[1] + 1e-5), 1e-6);
	vpa_nn_free(net);
}

static void test_grad_dropout(void)
{
	struct vpa_nn *net = vpa_nn_new(4);
	vpa_nn_add_dense(net, 6);
	vpa_nn_add_dropout(net, 0.4f);
	vpa_nn_init_params(net, 4);
	size_t lens[] = {3, 3}, off[3];
	struct gc g;
	make_gc(&g, net, lens, 2, off, 15, 1.0, 0);
	gradcheck(&g, "dense + dropout p=0.4 (fixed mask)", 1);
	free_gc(&g);
}

static void test_dropout_values(void)
{
	/* TRAIN: every output is 0 or x / (1 - p), about p of them dropped;
	 * EVAL: identity. */
	struct vpa_nn *net = vpa_nn_new(1000);
	vpa_nn_add_dropout(net, 0.25f);
	vpa_nn_init_params(net, 5);
	float *x = malloc(1000 * sizeof(float));
	for (int i = 0; i < 1000; i++)
		x[i] = 1.0f + (float)i;
	size_t off[] = {0, 1};
	struct vpa_nn_batch b = {1, off, x, NULL};
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_nn_forward(net, &b, VPA_NN_TRAIN, &err) == 0);
	const float *y = vpa_nn_output(net, NULL, NULL);
	int zeros = 0, bad = 0;
	for (int i = 0; i < 1000; i++) {
		if (y[i] == 0)
			zeros++;
		else if (fabsf(y[i] - x[i] / 0.75f) > 1e-3f * x[i])
			bad++;
	}
	CHECK(bad == 0);
	CHECK(zeros > 200 && zeros < 300); /* binomial(1000, 0.25): sd 13.7 */
	CHECK(vpa_nn_forward(net, &b, VPA_NN_EVAL, &err) == 0);
	y = vpa_nn_output(net, NULL, NULL);
	CHECK(memcmp(y, x, 1000 * sizeof(float)) == 0);
	free(x);
	vpa_nn_free(net);
}

static void test_grad_statspool(void)
{
	struct vpa_nn *net = vpa_nn_new(3);
	vpa_nn_add_dense(net, 4);
	vpa_nn_add_simple(net, VPA_NN_TANH);
	vpa_nn_add_simple(net, VPA_NN_STATSPOOL);
	vpa_nn_add_dense(net, 3);
	vpa_nn_init_params(net, 6);
	size_t lens[] = {2, 3, 7}, off[4];
	struct gc g;
	make_gc(&g, net, lens, 3, off, 16, 1.0, 0);
	gradcheck(&g, "dense+tanh+statspool+dense", 1);
	free_gc(&g);
	/* pooling alone */
	net = vpa_nn_new(2);
	vpa_nn_add_simple(net, VPA_NN_STATSPOOL);
	size_t lens2[] = {2, 5}, off2[3];
	make_gc(&g, net, lens2, 2, off2, 17, 1.0, 0);
	gradcheck(&g, "statspool", 1);
	free_gc(&g);
}

static void test_statspool_values(void)
{
	/* sequence 1: (1, 0), (3, 0), (5, 0): mean (3, 0), std (sqrt(8/3), floor) */
	struct vpa_nn *net = vpa_nn_new(2);
	vpa_nn_add_simple(net, VPA_NN_STATSPOOL);
	float x[] = {1, 0, 3, 0, 5, 0, 7, 1};
	size_t off[] = {0, 3, 4};
	struct vpa_nn_batch b = {2, off, x, NULL};
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_nn_forward(net, &b, VPA_NN_EVAL, &err) == 0);
	size_t R, K;
	const float *y = vpa_nn_output(net, &R, &K);
	CHECK(R == 2 && K == 4);
	CHECK_NEAR(y[0], 3, 1e-6);
	CHECK_NEAR(y[1], 0, 0);
	CHECK_NEAR(y[2], sqrt(8.0 / 3.0), 1e-6);
	CHECK_NEAR(y[3], 1e-5, 1e-9); /* sqrt of the floor 1e-10 */
	CHECK_NEAR(y[4], 7, 0);
	CHECK_NEAR(y[7], 1e-5, 1e-9);
	size_t ns;
	const size_t *o = vpa_nn_offsets(net, 0, &ns);
	CHECK(ns == 2 && o[0] == 0 && o[1] == 1 && o[2] == 2);
	/* an empty sequence is an input error */
	size_t off2[] = {0, 0, 4};
	struct vpa_nn_batch b2 = {2, off2, x, NULL};
	CHECK(vpa_nn_forward(net, &b2, VPA_NN_EVAL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "sequence 0 of the batch is empty: statistics pooling needs at least "
			   "one frame");
	vpa_nn_free(net);
}

static void test_grad_softmax_ce(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_nn *net = vpa_nn_new(4);
	vpa_nn_add_dense(net, 5);
	vpa_nn_init_params(net, 7);
	size_t lens[] = {3, 4}, off[3];
	struct gc g;
	make_gc(&g, net, lens, 2, off, 18, 1.0, 0);
	uint32_t lab[7] = {0, 4, 2, 2, 1, 3, 0};
	float wts[7] = {1, 0.5f, 2, 1, 0.25f, 1, 3};
	struct vpa_nn_targets t;
	vpa_nn_targets_init(&t);
	t.labels = lab;
	g.t = &t;
	gradcheck(&g, "softmax-CE hard labels", 1);
	t.weights = wts;
	gradcheck(&g, "softmax-CE hard labels, weights", 1);
	/* soft targets, temperature 3: teacher distributions */
	float soft[7 * 5];
	struct vpa_rng r;
	vpa_rng_seed(&r, 5);
	for (int i = 0; i < 7; i++) {
		double s = 0;
		for (int k = 0; k < 5; k++)
			s += soft[i * 5 + k] = (float)vpa_rng_uniform(&r) + 0.05f;
		for (int k = 0; k < 5; k++)
			soft[i * 5 + k] /= (float)s;
	}
	t.labels = NULL;
	t.weights = NULL;
	t.soft = soft;
	t.temperature = 3;
	gradcheck(&g, "softmax-CE soft targets T=3", 1);
	/* per-sequence labels on per-frame outputs */
	uint32_t slab[2] = {3, 1};
	vpa_nn_targets_init(&t);
	t.labels = slab;
	t.per_sequence = 1;
	gradcheck(&g, "softmax-CE per-sequence labels", 1);
	free_gc(&g);
}

/*
 * Granqvist et al. eq. 3 (vpa_nn_distill_sq): the value by hand, and the
 * gradient against central finite differences (loss in double on float
 * logits; the step is the one the float actually took).
 */
static void test_distill_sq(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	/* z = (0, 2 ln 3), T = 2: q = (1/4, 3/4); p = (1/2, 1/2):
	 * T^2/K sum e^2 = 4/2 (1/16 + 1/16) = 1/4 */
	float z[2] = {0, (float)(2 * log(3.0))}, p[2] = {0.5f, 0.5f}, d[2];
	double l;
	CHECK(vpa_nn_distill_sq(z, 1, 2, p, 2, &l, d, &err) == 0);
	CHECK_NEAR(l, 0.25, 1e-7);
	/* dL/dz_j = 2T/K q_j (e_j - sum q e): sum q e = -1/16 + 3/16 = 1/8;
	 * j=0: 2 (1/4)(-1/4 - 1/8) = -3/16, j=1: 2 (3/4)(1/4 - 1/8) = 3/16 */
	CHECK_NEAR(d[0], -0.1875, 1e-6);
	CHECK_NEAR(d[1], 0.1875, 1e-6);
	CHECK(vpa_nn_distill_sq(z, 1, 2, p, 0, &l, d, &err) == VPA_EINPUT);
	/* 7 rows of 5 logits, teacher distributions, T = 3 and T = 10 */
	enum { R = 7, K = 5 };
	float zz[R * K], pp[R * K], g[R * K];
	struct vpa_rng r;
	vpa_rng_seed(&r, 77);
	for (size_t i = 0; i < R; i++) {
		double s = 0;
		for (size_t k = 0; k < K; k++) {
			zz[i * K + k] = (float)(3 * vpa_rng_normal(&r));
			s += pp[i * K + k] = (float)vpa_rng_uniform(&r) + 0.05f;
		}
		for (size_t k = 0; k < K; k++)
			pp[i * K + k] /= (float)s;
	}
	const double Ts[2] = {3, 10};
	for (int ti = 0; ti < 2; ti++) {
		CHECK(vpa_nn_distill_sq(zz, R, K, pp, Ts[ti], &l, g, &err) == 0);
		double worst = 0, scale = 0;
		for (size_t j = 0; j < R * K; j++)
			scale = fmax(scale, fabs(g[j]));
		for (size_t j = 0; j < R * K; j++) {
			float z0 = zz[j];
			double lp, lm;
			zz[j] = z0 + 1e-2f;
			float hp = zz[j] - z0;
			vpa_nn_distill_sq(zz, R, K, pp, Ts[ti], &lp, NULL, &err);
			zz[j] = z0 - 1e-2f;
			float hm = z0 - zz[j];
			vpa_nn_distill_sq(zz, R, K, pp, Ts[ti], &lm, NULL, &err);
			zz[j] = z0;
			double num = (lp - lm) / ((double)hp + (double)hm);
			worst = fmax(worst, fabs(num - g[j]) / scale);
		}
		CHECK(scale > 1e-4); /* a check that can fail: the gradient is not zero */
		CHECK(worst < 1e-4);
	}
}

/*
 * AAM-softmax (vpa_nn_aam_softmax): the value by hand for one row, and both
 * gradients (embeddings and class weights) against central finite
 * differences, with margins on both branches of phi.
 */
static double aam_loss(const float *e, size_t R, size_t D, const float *W, size_t K,
		       const uint32_t *y, double m, double s)
{
	struct vpa_err err;
	vpa_err_init(&err);
	double l = NAN;
	vpa_nn_aam_softmax(e, R, D, W, K, y, m, s, &l, NULL, NULL, &err);
	return l;
}

static void test_aam_softmax(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	/* e = (1, 0), W = {(1, 0), (0, 2)}, y = 0: c = (1, 0); m = 0.5, s = 2:
	 * z = (2 cos 0.5, 0), loss = log(1 + exp(-2 cos 0.5)) */
	float e1[2] = {3, 0}, W1[4] = {1, 0, 0, 2}, de1[2], dW1[4];
	uint32_t y1 = 0;
	double l;
	CHECK(vpa_nn_aam_softmax(e1, 1, 2, W1, 2, &y1, 0.5, 2, &l, de1, dW1, &err) == 0);
	CHECK_NEAR(l, log(1 + exp(-2 * cos(0.5))), 1e-6);
	/* m = 0 is the cosine softmax: e = (1, 1), W = {(1, 0), (0, 1)}, y = 1:
	 * c = (1/sqrt2, 1/sqrt2), loss = log 2 */
	float e2[2] = {1, 1}, W2[4] = {1, 0, 0, 1};
	uint32_t y2 = 1;
	CHECK(vpa_nn_aam_softmax(e2, 1, 2, W2, 2, &y2, 0, 5, &l, NULL, NULL, &err) == 0);
	CHECK_NEAR(l, log(2.0), 1e-6);
	/* errors */
	uint32_t bad = 2;
	CHECK(vpa_nn_aam_softmax(e2, 1, 2, W2, 2, &bad, 0.2, 30, &l, NULL, NULL, &err) ==
	      VPA_EINPUT);
	CHECK(vpa_nn_aam_softmax(e2, 1, 2, W2, 2, &y2, 0.2, 0, &l, NULL, NULL, &err) ==
	      VPA_EINPUT);
	CHECK(vpa_nn_aam_softmax(e2, 1, 2, W2, 2, &y2, 2.0, 30, &l, NULL, NULL, &err) ==
	      VPA_EINPUT);
	/* finite differences: 6 rows, 5 dims, 4 classes */
	enum { R = 6, D = 5, K = 4 };
	float e[R * D], W[K * D], de[R * D], dW[K * D];
	uint32_t y[R];
	struct vpa_rng r;
	vpa_rng_seed(&r, 4242);
	for (size_t i = 0; i < R * D; i++)
		e[i] = (float)vpa_rng_normal(&r);
	for (size_t i = 0; i < K * D; i++)
		W[i] = (float)vpa_rng_normal(&r);
	for (size_t i = 0; i < R; i++)
		y[i] = (uint32_t)(i % K);
	/* m = 0.2, s = 4 (cos branch); m = 1.4, s = 3 (some targets on the
	 * fallback branch: acos(c) + 1.4 > pi for c < cos(pi - 1.4) = -0.17) */
	const double ms[2] = {0.2, 1.4}, ss[2] = {4, 3};
	for (int t = 0; t < 2; t++) {
		CHECK(vpa_nn_aam_softmax(e, R, D, W, K, y, ms[t], ss[t], &l, de, dW, &err) == 0);
		double worst = 0, scale = 0;
		for (int which = 0; which < 2; which++) {
			float *x = which ? W : e, *g = which ? dW : de;
			size_t n = which ? (size_t)K * D : (size_t)R * D;
			for (size_t j = 0; j < n; j++)
				scale = fmax(scale, fabs(g[j]));
			for (size_t j = 0; j < n; j++) {
				float x0 = x[j];
				x[j] = x0 + 1e-2f;
				float hp = x[j] - x0;
				double lp = aam_loss(e, R, D, W, K, y, ms[t], ss[t]);
				x[j] = x0 - 1e-2f;
				float hm = x0 - x[j];
				double lm = aam_loss(e, R, D, W, K, y, ms[t], ss[t]);
				x[j] = x0;
				double num = (lp - lm) / ((double)hp + (double)hm);
				worst = fmax(worst, fabs(num - g[j]));
			}
		}
		CHECK(scale > 1e-3); /* a check that can fail: the gradient is not zero */
		CHECK(worst / scale < 2e-3);
		if (!(worst / scale < 2e-3))
			printf("#   aam m=%g: worst relative gradient error %g\n", ms[t], worst / scale);
	}
}

static void test_softmax_ce_values(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	/* z = (0, ln 3): softmax (1/4, 3/4); CE for label 1 = -ln(3/4) */
	float z[2] = {0, (float)log(3.0)}, d[2];
	uint32_t y = 1;
	struct vpa_nn_targets t;
	vpa_nn_targets_init(&t);
	t.labels = &y;
	double l;
	CHECK(vpa_nn_softmax_ce(z, 1, 2, NULL, 1, &t, &l, d, &err) == 0);
	CHECK_NEAR(l, -log(0.75), 1e-7);
	CHECK_NEAR(d[0], 0.25, 1e-7);
	CHECK_NEAR(d[1], -0.25, 1e-7);
	/* KD: z = (0, 2 ln 3), T = 2: q = softmax(0, ln 3) = (1/4, 3/4); p = (1/2, 1/2)
	 * loss = 4 * -(0.5 ln 0.25 + 0.5 ln 0.75); grad = T (q - p) = (-0.5, 0.5) */
	float z2[2] = {0, (float)(2 * log(3.0))}, p[2] = {0.5f, 0.5f};
	vpa_nn_targets_init(&t);
	t.soft = p;
	t.temperature = 2;
	CHECK(vpa_nn_softmax_ce(z2, 1, 2, NULL, 1, &t, &l, d, &err) == 0);
	CHECK_NEAR(l, -4 * (0.5 * log(0.25) + 0.5 * log(0.75)), 1e-6);
	CHECK_NEAR(d[0], -0.5, 1e-6);
	CHECK_NEAR(d[1], 0.5, 1e-6);
	/* bad label */
	y = 2;
	vpa_nn_targets_init(&t);
	t.labels = &y;
	CHECK(vpa_nn_softmax_ce(z, 1, 2, NULL, 1, &t, &l, d, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "label 2 of row 0 is outside 0..1");
	float ls[2];
	vpa_nn_log_softmax(z, 1, 2, ls);
	CHECK_NEAR(ls[0], log(0.25), 1e-7);
	vpa_nn_softmax(z, 1, 2, ls);
	CHECK_NEAR(ls[1], 0.75, 1e-7);
}

static void lstm_case(struct vpa_nn *net, const char *what, uint64_t seed)
{
	vpa_nn_init_params(net, seed);
	size_t lens[] = {1, 4, 6, 3}, off[5];
	struct gc g;
	make_gc(&g, net, lens, 4, off, seed + 100, 1.0, 0);
	gradcheck(&g, what, 1);
	free_gc(&g);
}

static void test_grad_lstm(void)
{
	struct vpa_nn *net = vpa_nn_new(3);
	vpa_nn_add_lstm(net, 4, 0);
	lstm_case(net, "lstm H=4, lengths 1,4,6,3", 21);
	net = vpa_nn_new(3);
	vpa_nn_add_lstm(net, 4, 1);
	lstm_case(net, "lstm reversed", 22);
	net = vpa_nn_new(3);
	vpa_nn_add_lstm(net, 4, 0);
	vpa_nn_add_lstm(net, 3, 0);
	lstm_case(net, "lstm stacked 4+3", 23);
	net = vpa_nn_new(3);
	vpa_nn_add_bilstm(net, 3);
	lstm_case(net, "bilstm H=3", 24);
	net = vpa_nn_new(2);
	vpa_nn_add_bilstm(net, 3);
	vpa_nn_add_bilstm(net, 2);
	vpa_nn_add_dense(net, 3);
	lstm_case(net, "bilstm stacked + dense", 25);
}

static void test_lstm_values(void)
{
	/* H = 1, in = 1, all weights 0 except bias: gates constant
	 * i = sig(b_i) ... c_1 = i g, h_1 = o tanh(c_1), c_2 = f c_1 + i g */
	struct vpa_nn *net = vpa_nn_new(1);
	vpa_nn_add_lstm(net, 1, 0);
	size_t n;
	float *P = vpa_nn_params(net, &n);
	CHECK(n == 4 + 4 + 4);
	memset(P, 0, n * sizeof(float));
	float *b = P + 8;
	b[0] = 0.5f;  /* i */
	b[1] = 1.0f;  /* f */
	b[2] = 0.3f;  /* g */
	b[3] = -0.2f; /* o */
	float x[2] = {0, 0};
	size_t off[] = {0, 2};
	struct vpa_nn_batch bt = {1, off, x, NULL};
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_nn_forward(net, &bt, VPA_NN_EVAL, &err) == 0);
	const float *y = vpa_nn_output(net, NULL, NULL);
	double i = 1 / (1 + exp(-0.5)), f = 1 / (1 + exp(-1.0)), g = tanh(0.3),
	       o = 1 / (1 + exp(0.2));
	double c1 = i * g, c2 = f * c1 + i * g;
	CHECK_NEAR(y[0], o * tanh(c1), 1e-6);
	CHECK_NEAR(y[1], o * tanh(c2), 1e-6);
	/* default init: forget-gate bias 1, others 0 */
	vpa_nn_init_params(net, 3);
	P = vpa_nn_params(net, &n);
	CHECK(P[8] == 0 && P[9] == 1 && P[10] == 0 && P[11] == 0);
	vpa_nn_free(net);
}

static void test_grad_embedding(void)
{
	struct vpa_nn *net = vpa_nn_new(0);
	vpa_nn_add_embedding(net, 7, 3);
	vpa_nn_add_lstm(net, 4, 0);
	vpa_nn_add_dense(net, 7);
	vpa_nn_init_params(net, 31);
	uint32_t ids[] = {1, 5, 5, 0, 6, 2, 3, 1};
	size_t off[] = {0, 3, 8};
	struct gc g;
	memset(&g, 0, sizeof(g));
	g.net = net;
	g.b.n_seq = 2;
	g.b.off = off;
	g.b.ids = ids;
	uint32_t next[] = {5, 5, 0, 6, 2, 3, 1, 4};
	struct vpa_nn_targets t;
	vpa_nn_targets_init(&t);
	t.labels = next;
	g.t = &t;
	gradcheck(&g, "embedding+lstm+dense, LM loss", 0);
	/* token id outside the vocabulary */
	uint32_t bad[] = {1, 7};
	size_t off2[] = {0, 2};
	struct vpa_nn_batch b = {1, off2, NULL, bad};
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_nn_forward(net, &b, VPA_NN_EVAL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "token id 7 at position 1 is outside the vocabulary (7 words)");
	vpa_nn_free(net);
}

static void test_grad_whole_net(void)
{
	/* An x-vector-like network in miniature, with every frame-level kind. */
	struct vpa_nn *net = vpa_nn_new(3);
	int c1[] = {-2, -1, 0, 1, 2}, c2[] = {-1, 0, 1}, c3[] = {-3, 0, 3};
	vpa_nn_add_tdnn(net, 5, c1, 5);
	vpa_nn_add_simple(net, VPA_NN_SIGMOID);
	vpa_nn_add_simple(net, VPA_NN_BATCHNORM);
	vpa_nn_add_tdnn(net, 4, c2, 3);
	vpa_nn_add_simple(net, VPA_NN_TANH);
	vpa_nn_add_tdnn(net, 4, c3, 3);
	vpa_nn_add_dropout(net, 0.2f);
	vpa_nn_add_simple(net, VPA_NN_STATSPOOL);
	vpa_nn_add_dense(net, 4);
	vpa_nn_add_simple(net, VPA_NN_SIGMOID);
	vpa_nn_add_dense(net, 3);
	vpa_nn_init_params(net, 41);
	size_t lens[] = {5, 8, 4}, off[4];
	struct gc g;
	make_gc(&g, net, lens, 3, off, 42, 1.0, 0);
	uint32_t lab[3] = {2, 0, 1};
	struct vpa_nn_targets t;
	vpa_nn_targets_init(&t);
	t.labels = lab;
	g.t = &t;
	gradcheck(&g, "x-vector-like net + CE", 1);
	free_gc(&g);
}

/* vpa_nn_release_work: a forward after it gives the same bits as before it
 * (EVAL, every kind with a cache: tdnn splice, batch norm, LSTM), and a
 * training step still works (the buffers come back). */
static void test_release_work(void)
{
	struct vpa_nn *net = vpa_nn_new(3);
	int c1[] = {-1, 0, 1};
	vpa_nn_add_tdnn(net, 6, c1, 3);
	vpa_nn_add_simple(net, VPA_NN_RELU);
	vpa_nn_add_simple(net, VPA_NN_BATCHNORM);
	vpa_nn_add_lstm(net, 4, 0);
	vpa_nn_add_dense(net, 3);
	vpa_nn_init_params(net, 5);
	size_t off[3] = {0, 7, 12};
	float x[12 * 3];
	for (int i = 0; i < 36; i++)
		x[i] = (float)((i * 37 % 11) - 5) * 0.2f;
	struct vpa_nn_batch b = {2, off, x, NULL};
	struct vpa_err err;
	vpa_err_init(&err);
	size_t R, K;
	CHECK(vpa_nn_forward(net, &b, VPA_NN_EVAL, &err) == 0);
	const float *z = vpa_nn_output(net, &R, &K);
	float before[12 * 3];
	CHECK(R == 12 && K == 3);
	memcpy(before, z, sizeof before);
	vpa_nn_release_work(net);
	vpa_nn_release_work(net); /* twice: a no-op the second time */
	CHECK(vpa_nn_forward(net, &b, VPA_NN_EVAL, &err) == 0);
	z = vpa_nn_output(net, &R, &K);
	CHECK(R == 12 && K == 3 && memcmp(before, z, sizeof before) == 0);
	vpa_nn_release_work(net);
	struct vpa_optim o;
	size_t np;
	vpa_nn_params(net, &np);
	vpa_optim_init_sgd(&o, np, 0.1, 0, 0);
	uint32_t lab[12] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2};
	struct vpa_nn_targets t;
	vpa_nn_targets_init(&t);
	t.labels = lab;
	double loss;
	CHECK(vpa_nn_train_step(net, &o, &b, &t, 0, &loss, &err) == 0 && isfinite(loss));
	vpa_optim_release(&o);
	vpa_nn_free(net);
}

int main(void)
{
	RUN(test_release_work);
	RUN(test_grad_dense);
	RUN(test_grad_tdnn);
	RUN(test_tdnn_edges);
	RUN(test_grad_activations);
	RUN(test_grad_batchnorm);
	RUN(test_batchnorm_values);
	RUN(test_grad_dropout);
	RUN(test_dropout_values);
	RUN(test_grad_statspool);
	RUN(test_statspool_values);
	RUN(test_grad_softmax_ce);
	RUN(test_softmax_ce_values);
	RUN(test_distill_sq);
	RUN(test_aam_softmax);
	RUN(test_grad_lstm);
	RUN(test_lstm_values);
	RUN(test_grad_embedding);
	RUN(test_grad_whole_net);
	return DONE();
}
