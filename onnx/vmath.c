/*
 * onnx/vmath.c - vectorised float maths (see vmath.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "base/cpu.h"
#include "onnx/vmath.h"

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
#define INL static inline __attribute__((always_inline))

INL void exp8(const float *x, float shift, float *y)
{
	v8f v, one = {1, 1, 1, 1, 1, 1, 1, 1};
	memcpy(&v, x, sizeof(v));
	v = v - shift;
	v8i low = v < -87.33654f; /* -1 where the result is below the normal range */
	v8f c = v;
	v8i hi = c > 88.0f;
	c = (v8f)(((v8i)c & ~hi) | ((v8i)(one * 88.0f) & hi));
	c = (v8f)(((v8i)c & ~low) | ((v8i)(one * -87.0f) & low));
	/* n = round(c / ln 2): floor(c log2 e + 0.5) */
	v8f t = c * 1.44269504088896341f + 0.5f;
	v8i n = __builtin_convertvector(t, v8i); /* truncation */
	v8f nf = __builtin_convertvector(n, v8f);
	v8i adj = nf > t;
	n = n + adj; /* adj is -1 where truncation went up (t < 0) */
	nf = __builtin_convertvector(n, v8f);
	v8f r = c - nf * 0.693359375f - nf * -2.12194440e-4f;
	v8f p = 1.9875691500e-4f * one;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * r * r + r + 1.0f;
	v8i e = (n + 127) << 23;
	v8f out = p * (v8f)e;
	out = (v8f)((v8i)out & ~low); /* 0 below the range (NaN: low is 0, p NaN) */
	memcpy(y, &out, sizeof(out));
}

INL void exp_body(const float *x, float shift, float *y, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		exp8(x + i, shift, y + i);
	if (i < n) {
		float xt[8], yt[8];
		for (size_t k = 0; k < 8; k++)
			xt[k] = i + k < n ? x[i + k] : shift;
		exp8(xt, shift, yt);
		memcpy(y + i, yt, (n - i) * sizeof(float));
	}
}

static void exp_base(const float *x, float shift, float *y, size_t n)
{
	exp_body(x, shift, y, n);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define VMATH_AVX2 1
__attribute__((target("avx2,fma"))) static void exp_avx2(const float *x, float shift, float *y,
							  size_t n)
{
	exp_body(x, shift, y, n);
}
#endif

static void (*exp_fn)(const float *, float, float *, size_t) = exp_base;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
#ifdef VMATH_AVX2
	if (vpa_cpu_simd()) /* not in portable mode (base/cpu.h) */
		exp_fn = exp_avx2;
#endif
}

void ox_exp_shift_f32(const float *x, float shift, float *y, size_t n)
{
	pthread_once(&once, init);
	exp_fn(x, shift, y, n);
}

const char *ox_exp_path(void)
{
	pthread_once(&once, init);
	return exp_fn == exp_base ? "generic" : "avx2+fma";
}
