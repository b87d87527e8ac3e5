/*
 * tests/unit/test_vmath.c - onnx/vmath.c's vectorised exp against libm's
 * exp in double: at most 2 ulp (of the float result) over a dense grid of
 * [-87.33, 88], the edges (0 below the normal range and for -inf, NaN kept),
 * any length (the tail of fewer than 8 values) and the shift.  The sigmoid
 * built on it against 1 / (1 + exp(-x)) in double: at most 3 ulp where the
 * value is a normal float, 0 below -87.33, NaN kept, in place, any length.
 */
#include <stdlib.h>

#include "harness.h"
#include "onnx/vmath.h"

/* |y - e| in units of the float spacing at e */
static double ulps(float y, double e)
{
	int ex;
	frexp(e, &ex); /* e = f 2^ex, f in [0.5, 1) */
	return fabs((double)y - e) / ldexp(1.0, ex - 24);
}

static void test_exp_grid(void)
{
	size_t n = 200001;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(-87.33 + (88.0 + 87.33) * (double)i / (double)(n - 1));
	ox_exp_shift_f32(x, 0.0f, y, n);
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double u = ulps(y[i], exp((double)x[i]));
		worst = u > worst || isnan(u) ? u : worst;
	}
	printf("#   worst error on [-87.33, 88]: %.3f ulp\n", worst);
	CHECK(worst <= 2.0);
	/* the shift: exp(x - s) */
	ox_exp_shift_f32(x, 3.5f, y, n);
	worst = 0;
	int zeros = 1;
	for (size_t i = 0; i < n; i++) {
		float d = x[i] - 3.5f;
		if (d < -87.33654f) { /* below the normal range: 0 */
			zeros &= y[i] == 0.0f;
			continue;
		}
		double u = ulps(y[i], exp((double)d));
		worst = u > worst || isnan(u) ? u : worst;
	}
	CHECK(worst <= 2.0);
	CHECK(zeros);
	free(x), free(y);
}

static void test_exp_edges(void)
{
	float x[13] = {0.0f, -0.0f, 1.0f, -1.0f, -87.0f, -87.4f, -100.0f, -INFINITY, NAN,
		       88.0f, 1e-8f, -1e-8f, 0.5f};
	float y[13];
	ox_exp_shift_f32(x, 0.0f, y, 13); /* 8 + a tail of 5 */
	CHECK(y[0] == 1.0f && y[1] == 1.0f);
	CHECK(ulps(y[2], exp(1.0)) <= 2 && ulps(y[3], exp(-1.0)) <= 2);
	CHECK(ulps(y[4], exp(-87.0)) <= 2);
	CHECK(y[5] == 0.0f && y[6] == 0.0f && y[7] == 0.0f);
	CHECK(isnan(y[8]));
	CHECK(ulps(y[9], exp(88.0)) <= 2 && isfinite(y[9]));
	CHECK(y[10] == 1.0f && ulps(y[11], exp(-1e-8)) <= 1);
	CHECK(ulps(y[12], exp(0.5)) <= 2);
	/* every length 0..20 equals the values computed 8 at a time */
	float xs[20], ys[20], ref[24];
	for (int i = 0; i < 20; i++)
		xs[i] = -0.37f * (float)i;
	ox_exp_shift_f32(xs, 0.0f, ref, 20);
	for (size_t len = 0; len <= 20; len++) {
		for (int i = 0; i < 20; i++)
			ys[i] = -1.0f;
		ox_exp_shift_f32(xs, 0.0f, ys, len);
		int same = 1;
		for (size_t i = 0; i < 20; i++)
			same &= i < len ? ys[i] == ref[i] : ys[i] == -1.0f;
		CHECK(same);
	}
}

static void test_sigmoid(void)
{
	size_t n = 200001;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(-87.0 + 120.0 * (double)i / (double)(n - 1));
	ox_sigmoid_f32(x, y, n);
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double u = ulps(y[i], 1.0 / (1.0 + exp(-(double)x[i])));
		worst = u > worst || isnan(u) ? u : worst;
	}
	printf("#   sigmoid: worst error on [-87, 33]: %.3f ulp\n", worst);
	CHECK(worst <= 3);
	float e[6] = {-100.0f, -INFINITY, INFINITY, NAN, 0.0f, 20.0f};
	ox_sigmoid_f32(e, e, 6); /* in place */
	CHECK(e[0] == 0.0f && e[1] == 0.0f && e[2] == 1.0f && isnan(e[3]) && e[4] == 0.5f &&
	      e[5] == 1.0f);
	/* every length 0..20 equals the values computed 8 at a time */
	float xs[20], ys[20], ref[20];
	for (int i = 0; i < 20; i++)
		xs[i] = 0.9f * (float)i - 9.0f;
	ox_sigmoid_f32(xs, ref, 20);
	for (size_t len = 0; len <= 20; len++) {
		for (int i = 0; i < 20; i++)
			ys[i] = -1.0f;
		ox_sigmoid_f32(xs, ys, len);
		int same = 1;
		for (size_t i = 0; i < 20; i++)
			same &= i < len ? ys[i] == ref[i] : ys[i] == -1.0f;
		CHECK(same);
	}
	free(x);
	free(y);
}

int main(void)
{
	RUN(test_exp_grid);
	RUN(test_exp_edges);
	RUN(test_sigmoid);
	return DONE();
}
