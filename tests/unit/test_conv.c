/*
 * tests/unit/test_conv.c - the Conv kernels of onnx/conv.c and
 * onnx/conv_wino.c against a direct convolution computed in double here
 * (zero padding, groups, strides, dilations), on random shapes with odd
 * sizes, asymmetric pads, batch 2 and channel counts that are not multiples
 * of 4 or 8.
 *
 * Error measure: |y - ref| / S with S = |b| + sum |w x| over the output's
 * terms (the scale every floating-point bound of a sum is written in).
 * im2col + SGEMM sums K = C/group x kernel products in float: at most
 * gamma_K = K u / (1 - K u) of S (u = 2^-24), the bound asserted.  Winograd
 * adds the transforms' rounding, amplified by their constants; for the
 * points used (0, +-1, +-2 for F(4x4)) the error analyses (Barabasz et al.,
 * "Error analysis and improving the accuracy of Winograd convolution for
 * deep neural networks", ACM TOMS 2020) give growth factors of order 10 for
 * F(2x2,3x3) and 100 for F(4x4,3x3) over direct convolution's bound; since
 * sums of rounding errors grow like sqrt(K) rather than K, the errors
 * measured here are far below those bounds (printed: about 0.05 and 0.6 K u
 * S).  Asserted: 2 K u S for F(2x2) and 16 K u S for F(4x4): room for other
 * rounding orders (FMA, BLAS kernels), and a transform constant off by 1e-4
 * fails (tried: 8 -> 8.001 in A^T gives 211).
 * Independent of rounding: on small integers F(2x2) is exact (every
 * intermediate is a multiple of 1/4 below 2^20), so it must equal the
 * direct convolution exactly; every output is written exactly once (the
 * output starts as NaN) and the bias is added once.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "onnx/conv.h"

struct shape {
	size_t N, C, M, grp;
	int64_t H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
	int bias;
};

static struct ox_conv make(const struct shape *s)
{
	struct ox_conv cv = {s->N, s->C, s->M, s->grp, {0}};
	struct ox_geom *g = &cv.g;
	g->ns = 2;
	int64_t in[3] = {1, s->H, s->W}, k[3] = {1, s->kh, s->kw}, st[3] = {1, s->sh, s->sw},
		dil[3] = {1, s->dh, s->dw}, pb[3] = {0, s->pt, s->pl}, pe[3] = {0, s->pb, s->pr};
	for (int i = 0; i < 3; i++) {
		g->in[i] = in[i], g->k[i] = k[i], g->st[i] = st[i], g->dil[i] = dil[i];
		g->pb[i] = pb[i], g->pe[i] = pe[i];
		g->out[i] = (in[i] + pb[i] + pe[i] - dil[i] * (k[i] - 1) - 1) / st[i] + 1;
	}
	return cv;
}

static double urand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return ((*s >> 8) & 0xffff) / 65536.0;
}

/* ref = direct convolution in double; scale = |b| + sum |w x| per output. */
static void direct(const struct ox_conv *cv, const float *x, const float *w, const float *b,
		   double *ref, double *scale)
{
	const struct ox_geom *g = &cv->g;
	size_t cg = cv->C / cv->grp, mg = cv->M / cv->grp;
	int64_t Ho = g->out[1], Wo = g->out[2], H = g->in[1], W = g->in[2];
	for (size_t n = 0; n < cv->N; n++)
		for (size_t o = 0; o < cv->M; o++)
			for (int64_t yy = 0; yy < Ho; yy++)
				for (int64_t xx = 0; xx < Wo; xx++) {
					size_t gi = o / mg;
					double acc = b ? b[o] : 0, sc = b ? fabs(b[o]) : 0;
					for (size_t c = 0; c < cg; c++)
						for (int64_t ky = 0; ky < g->k[1]; ky++)
							for (int64_t kx = 0; kx < g->k[2]; kx++) {
								int64_t iy = yy * g->st[1] - g->pb[1] + ky * g->dil[1];
								int64_t ix = xx * g->st[2] - g->pb[2] + kx * g->dil[2];
								if (iy < 0 || iy >= H || ix < 0 || ix >= W)
									continue;
								double xv = x[((n * cv->C + gi * cg + c) * (size_t)H + (size_t)iy) * (size_t)W + (size_t)ix];
								double wv = w[((o * cg + c) * (size_t)g->k[1] + (size_t)ky) * (size_t)g->k[2] + (size_t)kx];
								acc += xv * wv;
								sc += fabs(xv * wv);
							}
					size_t i = ((n * cv->M + o) * (size_t)Ho + (size_t)yy) * (size_t)Wo + (size_t)xx;
					ref[i] = acc;
					scale[i] = sc;
				}
}

/*
 * Run `method` on shape s with random data (integers in [-4, 4] when ints)
 * and return the worst |y - ref| / scale in units of K u; -1 when an output
 * is not written (NaN) or is not finite.
 */
static double worst_error(const struct shape *s, int method, int ints, unsigned seed)
{
	struct ox_conv cv = make(s);
	const struct ox_geom *g = &cv.g;
	size_t cg = s->C / s->grp, kk = (size_t)(s->kh * s->kw);
	size_t nx = s->N * s->C * (size_t)(s->H * s->W), nw = s->M * cg * kk;
	size_t ny = s->N * s->M * (size_t)(g->out[1] * g->out[2]);
	float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
	float *b = malloc(s->M * sizeof(float)), *y = malloc(ny * sizeof(float));
	double *ref = malloc(ny * sizeof(double)), *scale = malloc(ny * sizeof(double));
	for (size_t i = 0; i < nx; i++)
		x[i] = ints ? (float)((int)(urand(&seed) * 9) - 4) : (float)(urand(&seed) * 2 - 1);
	for (size_t i = 0; i < nw; i++)
		w[i] = ints ? (float)((int)(urand(&seed) * 9) - 4) : (float)(urand(&seed) - 0.5);
	for (size_t i = 0; i < s->M; i++)
		b[i] = ints ? (float)((int)(urand(&seed) * 9) - 4) : (float)(urand(&seed) - 0.5);
	for (size_t i = 0; i < ny; i++)
		y[i] = NAN;
	struct ox_conv_epi e = {s->bias ? b : NULL, NULL};
	if (method == OX_CONV_IM2COL)
		ox_conv_im2col(&cv, x, w, &e, y);
	else
		ox_conv_wino(&cv, method, x, w, &e, y);
	direct(&cv, x, w, s->bias ? b : NULL, ref, scale);
	double worst = 0, ku = (double)(cg * kk) * 0x1p-24;
	for (size_t i = 0; i < ny && worst >= 0; i++) {
		if (!isfinite(y[i])) {
			worst = -1;
			break;
		}
		double d = fabs(y[i] - ref[i]);
		if (ints && d != 0)
			worst = d > worst ? d : worst; /* exactness: any difference counts */
		else if (!ints && scale[i] > 0)
			worst = d / scale[i] / ku > worst ? d / scale[i] / ku : worst;
	}
	free(x), free(w), free(b), free(y), free(ref), free(scale);
	return worst;
}

/* 3x3 stride-1 shapes (Winograd's domain) and general ones (im2col only). */
static const struct shape wino_shapes[] = {
	/* N  C   M grp  H   W  kh kw sh sw dh dw pt pl pb pr bias */
	{1, 3, 5, 1, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	{2, 17, 13, 1, 11, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	{1, 20, 33, 1, 13, 77, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0},
	{1, 16, 18, 2, 9, 70, 3, 3, 1, 1, 1, 1, 2, 0, 1, 2, 1},
	{1, 6, 7, 1, 4, 5, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 1},
	{1, 32, 24, 1, 21, 100, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	{2, 9, 40, 1, 3, 131, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0},
	{1, 5, 3, 1, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1},
};
static const struct shape gen_shapes[] = {
	{1, 6, 4, 1, 9, 11, 5, 3, 2, 1, 1, 2, 2, 1, 0, 3, 1},
	{2, 8, 6, 2, 7, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
	{1, 12, 12, 12, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* depthwise */
	{1, 7, 9, 1, 1, 50, 1, 5, 1, 1, 1, 3, 0, 6, 0, 6, 1},   /* 1-D, dilated */
	{2, 10, 5, 1, 6, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},   /* 1x1: the input is the matrix */
};

static void test_im2col_vs_direct(void)
{
	for (size_t i = 0; i < sizeof(gen_shapes) / sizeof(gen_shapes[0]); i++) {
		double e = worst_error(&gen_shapes[i], OX_CONV_IM2COL, 0, 7u + (unsigned)i);
		CHECK(e >= 0 && e <= 1.0);
		CHECK(worst_error(&gen_shapes[i], OX_CONV_IM2COL, 1, 3u + (unsigned)i) == 0);
	}
	for (size_t i = 0; i < sizeof(wino_shapes) / sizeof(wino_shapes[0]); i++) {
		double e = worst_error(&wino_shapes[i], OX_CONV_IM2COL, 0, 11u + (unsigned)i);
		CHECK(e >= 0 && e <= 1.0);
	}
}

static void test_winograd_vs_direct(void)
{
	double w2 = 0, w4 = 0;
	for (size_t i = 0; i < sizeof(wino_shapes) / sizeof(wino_shapes[0]); i++) {
		struct ox_conv cv = make(&wino_shapes[i]);
		CHECK(ox_conv_wino_ok(&cv));
		double e2 = worst_error(&wino_shapes[i], OX_CONV_WINO2, 0, 21u + (unsigned)i);
		double e4 = worst_error(&wino_shapes[i], OX_CONV_WINO4, 0, 31u + (unsigned)i);
		CHECK(e2 >= 0 && e2 <= 2);
		CHECK(e4 >= 0 && e4 <= 16);
		w2 = e2 > w2 ? e2 : w2;
		w4 = e4 > w4 ? e4 : w4;
	}
	printf("#   worst error / (K u S): F(2x2,3x3) %.3g, F(4x4,3x3) %.3g\n", w2, w4);
}

static void test_winograd2_exact_on_integers(void)
{
	for (size_t i = 0; i < sizeof(wino_shapes) / sizeof(wino_shapes[0]); i++)
		CHECK(worst_error(&wino_shapes[i], OX_CONV_WINO2, 1, 41u + (unsigned)i) == 0);
}

static void test_method_choice(void)
{
	/* ResNet34's 3x3 shapes take F(4x4); few channels, small outputs, other
	 * kernels, strides and dilations take im2col (or F(2x2) below 8 x 8). */
	struct shape r = {1, 32, 32, 1, 80, 800, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0};
	struct ox_conv cv = make(&r);
	CHECK(ox_conv_method(&cv) == OX_CONV_WINO4);
	r.C = r.M = 256, r.H = 10, r.W = 100;
	cv = make(&r);
	CHECK(ox_conv_method(&cv) == OX_CONV_WINO4);
	r.H = 5;
	cv = make(&r);
	CHECK(ox_conv_method(&cv) == OX_CONV_WINO2);
	r.C = 8;
	cv = make(&r);
	CHECK(ox_conv_method(&cv) == OX_CONV_IM2COL);
	r.C = 64, r.sh = 2;
	cv = make(&r);
	CHECK(!ox_conv_wino_ok(&cv) && ox_conv_method(&cv) == OX_CONV_IM2COL);
	r.sh = 1, r.dw = 2;
	cv = make(&r);
	CHECK(!ox_conv_wino_ok(&cv));
	r.dw = 1, r.kh = 1;
	cv = make(&r);
	CHECK(!ox_conv_wino_ok(&cv));
	/* 3-D with a depth of 1 is 2-D, unless padded in depth (2 or more outputs) */
	r.kh = 3;
	cv = make(&r);
	cv.g.ns = 3;
	CHECK(ox_conv_wino_ok(&cv));
	cv.g.pb[0] = cv.g.pe[0] = 1, cv.g.out[0] = 3;
	CHECK(!ox_conv_wino_ok(&cv));
	/* forcing (VPA_ONNX_CONV's mechanism) applies only where Winograd does */
	ox_conv_force(OX_CONV_IM2COL);
	cv = make(&r);
	CHECK(ox_conv_method(&cv) == OX_CONV_IM2COL);
	ox_conv_force(OX_CONV_WINO2);
	CHECK(ox_conv_method(&cv) == OX_CONV_WINO2);
	r.sh = 2;
	cv = make(&r);
	CHECK(ox_conv_method(&cv) == OX_CONV_IM2COL);
	ox_conv_force(0);
}

/*
 * A model's kept Winograd weights (issue 33 item 5): on every Winograd
 * shape, m = 2 and 4, the output with the weights' transform kept in a
 * cache (made by the first call, read by the next two, and by two threads
 * racing to make it in a fresh cache) equals the per-call transform's byte
 * for byte.
 */
struct keep_job {
	const struct ox_conv *cv;
	int m;
	const float *x, *w;
	const struct ox_conv_epi *e;
	float *y;
};

static void *keep_run(void *p)
{
	struct keep_job *j = p;
	ox_conv_wino(j->cv, j->m, j->x, j->w, j->e, j->y);
	return NULL;
}

static void test_winograd_kept_weights(void)
{
	for (size_t i = 0; i < sizeof(wino_shapes) / sizeof(wino_shapes[0]); i++)
		for (int m = 2; m <= 4; m += 2) {
			const struct shape *s = &wino_shapes[i];
			struct ox_conv cv = make(s);
			unsigned seed = 7 + (unsigned)i;
			size_t cg = s->C / s->grp, nx = s->N * s->C * (size_t)(s->H * s->W);
			size_t nw = s->M * cg * 9, ny = s->N * s->M * (size_t)(cv.g.out[1] * cv.g.out[2]);
			float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
			float *y0 = malloc(ny * sizeof(float)), *y = malloc(ny * sizeof(float));
			float *y2 = malloc(ny * sizeof(float));
			for (size_t k = 0; k < nx; k++)
				x[k] = (float)(urand(&seed) * 2 - 1);
			for (size_t k = 0; k < nw; k++)
				w[k] = (float)(urand(&seed) - 0.5);
			struct ox_conv_epi e = {NULL, NULL};
			ox_conv_wino(&cv, m, x, w, &e, y0); /* per call */
			struct ox_wino_cache *wc = ox_wino_cache_new(3);
			cv.wc = wc;
			cv.wid = 2;
			for (int r = 0; r < 3; r++) {
				memset(y, 0xff, ny * sizeof(float));
				ox_conv_wino(&cv, m, x, w, &e, y);
				CHECK(!memcmp(y, y0, ny * sizeof(float)));
			}
			ox_wino_cache_free(wc);
			cv.wc = ox_wino_cache_new(3);
			struct keep_job a = {&cv, m, x, w, &e, y}, b = {&cv, m, x, w, &e, y2};
			pthread_t th;
			pthread_create(&th, NULL, keep_run, &b);
			keep_run(&a);
			pthread_join(th, NULL);
			CHECK(!memcmp(y, y0, ny * sizeof(float)) && !memcmp(y2, y0, ny * sizeof(float)));
			ox_wino_cache_free(cv.wc);
			free(x), free(w), free(y0), free(y), free(y2);
		}
}

int main(void)
{
	RUN(test_im2col_vs_direct);
	RUN(test_winograd_vs_direct);
	RUN(test_winograd2_exact_on_integers);
	RUN(test_method_choice);
	RUN(test_winograd_kept_weights);
	return DONE();
}
