/*
 * tests/unit/test_ecapa.c - finite-difference gradient checks of the ECAPA-TDNN
 * parts audio/ecapa.c wires by hand: the SE-Res2Block (dilated convolutions,
 * the Res2 split and cascade, squeeze-excitation, the residual), attentive
 * statistics pooling (through the attention weights and the global context),
 * and the whole network (stem, three blocks, MFA concatenation, pooling, BN,
 * embedding).  Every parameter of every part and every input value is checked.
 *
 * Method: that of tests/unit/test_nn.c (read its header): the loss is L =
 * sum_i w_i y_i in double over the float32 output with fixed random w, the
 * numeric derivative the five-point stencil, the error
 * max_i |g_i - n_i| / max(|g_i|, |n_i|, 0.01 max_j |n_j|) per learn/nn network
 * of the part.  Two differences, both measured:
 *  - every ReLU is a tanh here (vpa_ecapa_opts.smooth): with ReLUs, the
 *    perturbations crossed kinks of the hidden units (inside the blocks they
 *    cannot be kept away from 0 as test_nn keeps its inputs), giving errors
 *    0.1-1.9 that vanished with tanh; ReLU's own backward is learn/nn's, checked
 *    in test_nn.  The wiring checked here does not depend on the activation.
 *  - the estimate is taken at h = 5e-3, 1e-2 and 2e-2 and the one nearest the
 *    analytic value counts: float32 rounding of the forward pass, amplified by
 *    the batch norms' division by small batch deviations, dominates at small h,
 *    truncation (sqrt of small variances, sequences of 2 frames) at large h
 *    (single-h errors measured 2e-3 to 5e-2 depending on h, moving between
 *    entries with h, the estimates straddling the analytic value).  A wrong term
 *    in a backward pass is wrong at every h (errors 0.1-1).
 *  - the error counted is the part of |g_i - n_i| beyond the entry's measured
 *    noise s_i, the spread (max - min) of its three estimates:
 *    max_i (|g_i - n_i| - s_i)+ / max(|g_i|, |n_i|, 0.01 max_j |n_j|).  The
 *    rounding noise is not a property of the code under test but of OpenBLAS's
 *    kernel (its summation order): with the plain error, the block's inputs
 *    measured 1.82e-3 with the SkylakeX kernel and 2.05e-3 with Haswell (tol
 *    2e-3), the whole network's parameters 6.39e-3 and 1.12e-2 (tol 1e-2;
 *    Sandybridge 1.15e-2).  The estimates at the three h straddle or scatter
 *    around the analytic value by that noise; beyond it, the worst errors are
 *    (Haswell, SkylakeX, Sandybridge, the same for 1 and 2 threads) block
 *    5.2e-5, 5.1e-4, 3.8e-4; pooling 5.5e-6, 5.5e-6, 1.1e-4; network 1.9e-3,
 *    1.3e-3, 6.1e-4.  A wrong term is not hidden by it (mutation tests of
 *    audio/ecapa.c, Haswell: the SE mean's gradient times 0.9 gave block errors
 *    0.09-1.6 and network 0.46-0.94; the Res2 cascade's du dropped gave 1.8-2.0
 *    for s = 3, 4): the spread bounds the noise, not a term wrong at every h.
 *    The plain error is printed too, as "raw".
 * Thresholds: 2e-3 for the block and the pooling (test_nn's); 1e-2 for the
 * whole network, whose eleven batch norms in series leave estimates of its
 * small-gradient parts (the SE MLPs: entries 0.005-0.04) with absolute noise
 * about 3e-4 (every check prints its value).
 */
#include "audio/ecapa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum part { BLOCK, ASP, NET };

struct gc {
	enum part part;
	struct vpa_ecapa_block *blk;
	struct vpa_ecapa_asp *asp;
	struct vpa_ecapa *net;
	float *x;
	size_t nx, n_seq, nout;
	size_t off[8];
	double *w;
};

static const float *gc_forward(struct gc *g, size_t *nout)
{
	struct vpa_err err;
	vpa_err_init(&err);
	const float *y = NULL;
	int rc = 0;
	size_t rows = g->off[g->n_seq];
	if (g->part == BLOCK) {
		rc = vpa_ecapa_block_forward(g->blk, g->x, g->off, g->n_seq, VPA_NN_TRAIN, &y, &err);
		*nout = rows * (g->nx / rows);
	} else if (g->part == ASP) {
		rc = vpa_ecapa_asp_forward(g->asp, g->x, g->off, g->n_seq, VPA_NN_TRAIN, &y, &err);
		*nout = g->n_seq * 2 * (g->nx / rows);
	} else {
		struct vpa_nn_batch in = {.n_seq = g->n_seq, .off = g->off, .x = g->x, .ids = NULL};
		rc = vpa_ecapa_forward(g->net, &in, VPA_NN_TRAIN, &err);
		size_t r;
		y = vpa_ecapa_output(g->net, &r);
		*nout = r * vpa_ecapa_emb_dim(g->net);
	}
	if (rc) {
		printf("#   forward failed: %s\n", err.msg);
		return NULL;
	}
	return y;
}

static double gc_loss(struct gc *g)
{
	size_t n;
	const float *y = gc_forward(g, &n);
	if (!y)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += g->w[i] * y[i];
	return s;
}

/* The five-point estimate with step h. */
static double fd_h(struct gc *g, float *v, double h)
{
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

/* Of the estimates at the steps H, the one nearest the analytic value a;
 * *spread (OUT) is max - min of the estimates: the entry's measured noise. */
static const double H[] = {5e-3, 1e-2, 2e-2};
static double fd(struct gc *g, float *v, double a, double *spread)
{
	double best = 0, lo = 0, hi = 0;
	for (size_t k = 0; k < sizeof(H) / sizeof(H[0]); k++) {
		double n = fd_h(g, v, H[k]);
		if (k == 0 || fabs(n - a) < fabs(best - a))
			best = n;
		lo = k == 0 || n < lo ? n : lo;
		hi = k == 0 || n > hi ? n : hi;
	}
	*spread = hi - lo;
	return best;
}

/* max_i (|a_i - n_i| - s_i) / max(|a_i|, |n_i|, 0.01 max_j |n_j|), floored at 0:
 * the relative error beyond the entry's measured noise s_i (s = NULL: none). */
static double rel_err(const double *a, const double *n, const double *s, size_t m)
{
	double sc = 0, e = 0;
	for (size_t i = 0; i < m; i++)
		sc = fabs(n[i]) > sc ? fabs(n[i]) : sc;
	for (size_t i = 0; i < m; i++) {
		double den = fmax(fmax(fabs(a[i]), fabs(n[i])), 0.01 * sc);
		double d = fabs(a[i] - n[i]) - (s ? s[i] : 0);
		double r = den > 0 && d > 0 ? d / den : 0;
		e = r > e ? r : e;
	}
	return e;
}

static size_t gc_n_nets(struct gc *g)
{
	return g->part == BLOCK ? vpa_ecapa_block_n_nets(g->blk)
	       : g->part == ASP ? 1
				: vpa_ecapa_n_nets(g->net);
}

static struct vpa_nn *gc_net(struct gc *g, size_t i)
{
	return g->part == BLOCK ? vpa_ecapa_block_net(g->blk, i)
	       : g->part == ASP ? vpa_ecapa_asp_net(g->asp)
				: vpa_ecapa_net(g->net, i);
}

/* Every parameter (per learn/nn network of the part) and every input value. */
static void gradcheck(struct gc *g, const char *what, double tol)
{
	size_t nout;
	const float *y = gc_forward(g, &nout);
	CHECK(y != NULL);
	if (!y)
		return;
	float *dy = malloc(nout * sizeof(float)), *dx = calloc(g->nx, sizeof(float));
	for (size_t i = 0; i < nout; i++)
		dy[i] = (float)g->w[i];
	for (size_t i = 0; i < gc_n_nets(g); i++)
		vpa_nn_zero_grad(gc_net(g, i));
	if (g->part == BLOCK)
		vpa_ecapa_block_backward(g->blk, dy, dx);
	else if (g->part == ASP)
		vpa_ecapa_asp_backward(g->asp, dy, dx);
	else
		vpa_ecapa_backward(g->net, dy, dx);
	double worst_p = 0, worst_raw = 0, worst_net = -1;
	size_t total = 0;
	for (size_t k = 0; k < gc_n_nets(g); k++) {
		struct vpa_nn *net = gc_net(g, k);
		size_t np;
		float *P = vpa_nn_params(net, &np);
		const float *G = vpa_nn_grads(net, &np);
		double *a = malloc((np + 1) * sizeof(double)), *num = malloc((np + 1) * sizeof(double));
		double *sp = malloc((np + 1) * sizeof(double));
		for (size_t i = 0; i < np; i++)
			a[i] = G[i]; /* copied first: fd's forwards do not touch gradients */
		double amax = 0;
		for (size_t i = 0; i < np; i++) {
			num[i] = fd(g, &P[i], a[i], &sp[i]);
			amax = fmax(amax, fabs(a[i]));
		}
		double e = rel_err(a, num, sp, np);
		worst_raw = fmax(worst_raw, rel_err(a, num, NULL, np));
		if (getenv("GC_DEBUG") && e > 2e-3)
			for (size_t i = 0; i < np; i++)
				if (fabs(a[i] - num[i]) > 1e-3 * fabs(num[i]) + 1e-4)
					printf("#  net %zu param %zu/%zu a %.6g n %.6g | %.6g %.6g %.6g\n", k, i, np, a[i],
					       num[i], fd_h(g, &P[i], 5e-3), fd_h(g, &P[i], 1e-2),
					       fd_h(g, &P[i], 2e-2));
		if (e > worst_p) {
			worst_p = e;
			worst_net = (double)k;
		}
		/* a network whose gradient is identically zero would pass any check */
		CHECK(amax > 1e-5);
		total += np;
		free(a);
		free(num);
		free(sp);
	}
	double *a = calloc(g->nx + 1, sizeof(double)), *num = calloc(g->nx + 1, sizeof(double));
	double *sp = calloc(g->nx + 1, sizeof(double));
	double xmax = 0;
	for (size_t i = 0; i < g->nx; i++) {
		a[i] = dx[i];
		num[i] = fd(g, &g->x[i], a[i], &sp[i]);
		xmax = fmax(xmax, fabs(a[i]));
	}
	double ex = rel_err(a, num, sp, g->nx), ex_raw = rel_err(a, num, NULL, g->nx);
	CHECK(xmax > 1e-3);
	printf("# gradcheck %-40s params %5zu err %.2e (raw %.2e, part %g)  inputs %4zu err %.2e "
	       "(raw %.2e)\n",
	       what, total, worst_p, worst_raw, worst_net, g->nx, ex, ex_raw);
	CHECK(worst_p < tol);
	CHECK(ex < tol);
	free(a);
	free(num);
	free(sp);
	free(dx);
	free(dy);
}

static void setup(struct gc *g, enum part part, const size_t *lens, size_t n_seq, size_t D,
		  size_t nout, uint64_t seed)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, seed);
	g->part = part;
	g->n_seq = n_seq;
	g->off[0] = 0;
	for (size_t b = 0; b < n_seq; b++)
		g->off[b + 1] = g->off[b] + lens[b];
	g->nx = g->off[n_seq] * D;
	g->x = malloc(g->nx * sizeof(float));
	for (size_t i = 0; i < g->nx; i++) {
		double v = vpa_rng_normal(&r);
		g->x[i] = (float)(v < 0 ? v - 0.1 : v + 0.1);
	}
	g->w = malloc(nout * sizeof(double));
	for (size_t i = 0; i < nout; i++)
		g->w[i] = vpa_rng_normal(&r);
	/* the networks' parameters: random, biases and BN affine parts away from 0/1 */
	for (size_t k = 0; k < gc_n_nets(g); k++) {
		struct vpa_nn *net = gc_net(g, k);
		vpa_nn_init_params(net, seed + 17 * k);
		size_t np;
		float *P = vpa_nn_params(net, &np);
		for (size_t i = 0; i < np; i++)
			P[i] += (float)(0.1 * vpa_rng_normal(&r));
	}
}

static void release(struct gc *g)
{
	free(g->x);
	free(g->w);
	vpa_ecapa_block_free(g->blk);
	vpa_ecapa_asp_free(g->asp);
	vpa_ecapa_free(g->net);
}

/* SE-Res2Block: scale 4 (three cascaded convolutions), dilation 2 and 3, sequences
 * shorter than the dilated context (the replicated edges) and of one frame. */
static void test_grad_block(void)
{
	static const struct {
		size_t C, s;
		int d;
		size_t B;
		size_t lens[3];
	} cases[] = {{8, 4, 2, 3, {7, 5, 9}}, {6, 3, 3, 2, {4, 1, 6}}, {6, 2, 2, 2, {3, 8, 2}},
		     {4, 1, 2, 2, {5, 6, 4}}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct gc g;
		memset(&g, 0, sizeof(g));
		g.blk = vpa_ecapa_block_new(cases[c].C, cases[c].s, cases[c].d, cases[c].B, 1);
		g.part = BLOCK;
		size_t rows = cases[c].lens[0] + cases[c].lens[1] + cases[c].lens[2];
		setup(&g, BLOCK, cases[c].lens, 3, cases[c].C, rows * cases[c].C, 100 + c);
		char what[80];
		snprintf(what, sizeof(what), "SE-Res2Block C=%zu s=%zu d=%d B=%zu", cases[c].C,
			 cases[c].s, cases[c].d, cases[c].B);
		gradcheck(&g, what, 2e-3);
		release(&g);
	}
}

/* Attentive statistics pooling, including a sequence of one frame (sigma at the
 * variance floor: no gradient through it) and a long one. */
static void test_grad_asp(void)
{
	static const size_t lens[3][3] = {{6, 4, 9}, {1, 5, 3}, {20, 2, 7}};
	for (int c = 0; c < 3; c++) {
		struct gc g;
		memset(&g, 0, sizeof(g));
		g.asp = vpa_ecapa_asp_new(5, 3);
		g.part = ASP;
		setup(&g, ASP, lens[c], 3, 5, 3 * 2 * 5, 200 + (uint64_t)c);
		char what[80];
		snprintf(what, sizeof(what), "attentive stats pooling D=5 A=3 (%zu,%zu,%zu)", lens[c][0],
			 lens[c][1], lens[c][2]);
		gradcheck(&g, what, 2e-3);
		release(&g);
	}
}

/* The whole network, tiny: 3-dim frames, C = 8, s = 2 and 4. */
static void test_grad_network(void)
{
	static const size_t lens[4] = {9, 6, 11, 7};
	for (int c = 0; c < 2; c++) {
		struct vpa_ecapa_opts o;
		vpa_ecapa_opts_init(&o);
		o.channels = 8;
		o.scale = c ? 4 : 2;
		o.emb_dim = 4;
		o.smooth = 1;
		struct gc g;
		memset(&g, 0, sizeof(g));
		struct vpa_err err;
		vpa_err_init(&err);
		CHECK(vpa_ecapa_new(3, &o, &g.net, &err) == 0);
		g.part = NET;
		setup(&g, NET, lens, 4, 3, 4 * 4, 300 + (uint64_t)c);
		char what[80];
		snprintf(what, sizeof(what), "ECAPA-TDNN C=8 s=%zu E=4 (whole)", o.scale);
		gradcheck(&g, what, 1e-2);
		release(&g);
	}
}

static void test_ecapa_sizes(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_ecapa_opts o;
	vpa_ecapa_opts_init(&o);
	struct vpa_ecapa *e;
	o.channels = 30;
	CHECK(vpa_ecapa_new(40, &o, &e, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "channels 30 not a multiple of scale 4") != NULL);
	vpa_err_init(&err);
	o.channels = 64;
	o.scale = 17;
	CHECK(vpa_ecapa_new(40, &o, &e, &err) == VPA_EINPUT);
	vpa_err_init(&err);
	o.scale = 4;
	CHECK(vpa_ecapa_new(40, &o, &e, &err) == 0);
	/* parameters, counted by hand for C = 64, s = 4 (w 16), B = A = 16, C' = 192,
	 * E = 64, 40-dim input: stem 40*5*64+64 + BN 128; block: 2 x (64*64+64+128)
	 * + 3 x (16*48+16+32) + SE (64*16+16 + 16*64+64); MFA 192*192+192; attention
	 * 576*16+16 + 16*192+192; head BN 2*384, dense 384*64+64 */
	size_t block = 2 * (64 * 64 + 64 + 128) + 3 * (16 * 48 + 16 + 32) + (64 * 16 + 16 + 16 * 64 + 64);
	size_t expect = (40 * 5 * 64 + 64 + 128) + 3 * block + (192 * 192 + 192) +
			(576 * 16 + 16 + 16 * 192 + 192) + 2 * 384 + (384 * 64 + 64);
	printf("# ECAPA C=64 s=4 on 40-dim frames: %zu parameters\n", vpa_ecapa_n_params(e));
	CHECK(vpa_ecapa_n_params(e) == expect);
	/* a clone gives the same embeddings */
	vpa_ecapa_init_params(e, 3);
	struct vpa_ecapa *c = vpa_ecapa_clone(e);
	float *x = malloc(50 * 40 * sizeof(float));
	struct vpa_rng r;
	vpa_rng_seed(&r, 9);
	for (int i = 0; i < 50 * 40; i++)
		x[i] = (float)vpa_rng_normal(&r);
	size_t off[2] = {0, 50};
	struct vpa_nn_batch in = {.n_seq = 1, .off = off, .x = x, .ids = NULL};
	CHECK(vpa_ecapa_forward(e, &in, VPA_NN_EVAL, &err) == 0);
	CHECK(vpa_ecapa_forward(c, &in, VPA_NN_EVAL, &err) == 0);
	size_t n1, n2;
	CHECK(memcmp(vpa_ecapa_output(e, &n1), vpa_ecapa_output(c, &n2), 64 * sizeof(float)) == 0);
	size_t off0[3] = {0, 50, 50};
	struct vpa_nn_batch bad = {.n_seq = 2, .off = off0, .x = x, .ids = NULL};
	CHECK(vpa_ecapa_forward(e, &bad, VPA_NN_EVAL, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "sequence 1 of the batch is empty") != NULL);
	free(x);
	vpa_ecapa_free(c);
	vpa_ecapa_free(e);
}

int main(void)
{
	RUN(test_grad_block);
	RUN(test_grad_asp);
	RUN(test_grad_network);
	RUN(test_ecapa_sizes);
	return DONE();
}
