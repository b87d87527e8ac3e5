/*
 * tests/unit/test_vmath_erf.c - onnx/vmath.c's vectorised erf (ox_erf_f32, the
 * Erf operator) against libm's erf in double: at most 2 ulp of the float
 * result on every 16th float of [2^-30, 6] and their negatives (the branch
 * edges 0.9 and 4 included), exact odd symmetry, the edges (+-0, +-inf, NaN,
 * tiny values), any length, in place; and the Erf node on it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "onnx/vmath.h"

/* |y - e| in units of the float spacing at e (2^-149 among subnormals) */
static double ulps(float y, double e)
{
	int ex;
	frexp(e, &ex);
	return fabs((double)y - e) / fmax(ldexp(1.0, ex - 24), 0x1p-149);
}

static float from_bits(uint32_t b)
{
	float f;
	memcpy(&f, &b, sizeof(f));
	return f;
}

static uint32_t bits(float f)
{
	uint32_t b;
	memcpy(&b, &f, sizeof(b));
	return b;
}

static void test_erf_grid(void)
{
	uint32_t lo = bits(0x1p-30f), hi = bits(6.0f);
	size_t n = (hi - lo) / 16 + 3;
	float *x = malloc(2 * n * sizeof(float)), *y = malloc(2 * n * sizeof(float));
	size_t k = 0;
	for (uint32_t b = lo; b <= hi; b += 16)
		x[k++] = from_bits(b);
	x[k++] = 0.9f;
	x[k++] = 4.0f;
	for (size_t i = 0, m = k; i < m; i++)
		x[k++] = -x[i];
	ox_erf_f32(x, y, k);
	double worst = 0, at = 0;
	int odd = 1;
	for (size_t i = 0; i < k; i++) {
		double u = ulps(y[i], erf((double)x[i]));
		if (u > worst || isnan(u)) {
			worst = u;
			at = x[i];
		}
		if (i >= k / 2 && y[i] != -y[i - k / 2])
			odd = 0;
	}
	printf("#   worst error over %zu values of [-6, 6]: %.3f ulp (at %.9g)\n", k, worst, at);
	CHECK(worst <= 2.0);
	CHECK(odd);
	free(x);
	free(y);
}

static void test_erf_edges(void)
{
	float x[11] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-38f, -1e-45f, 100.0f, -3.99f,
		       0.8999999f, 0.9000001f};
	float y[11];
	ox_erf_f32(x, y, 11);
	CHECK(y[0] == 0 && !signbit(y[0]));
	CHECK(y[1] == 0 && signbit(y[1]));
	CHECK(y[2] == 1.0f);
	CHECK(y[3] == -1.0f);
	CHECK(isnan(y[4]));
	CHECK(ulps(y[5], erf((double)x[5])) <= 2.0);
	CHECK(y[6] <= 0 && ulps(y[6], erf((double)x[6])) <= 2.0);
	CHECK(y[7] == 1.0f);
	CHECK(ulps(y[8], erf((double)x[8])) <= 2.0);
	CHECK(ulps(y[9], erf((double)x[9])) <= 2.0);
	CHECK(ulps(y[10], erf((double)x[10])) <= 2.0);
	/* any length (tails of 1 to 7 values), in place */
	for (size_t n = 1; n <= 19; n++) {
		float a[19], b[19];
		for (size_t i = 0; i < n; i++)
			a[i] = b[i] = (float)i * 0.37f - 2.5f;
		ox_erf_f32(a, a, n);
		for (size_t i = 0; i < n; i++)
			CHECK(ulps(a[i], erf((double)b[i])) <= 2.0);
	}
}

int main(void)
{
	RUN(test_erf_grid);
	RUN(test_erf_edges);
	return DONE();
}
