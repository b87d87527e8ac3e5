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

/*
 * erf of 8 floats: x + x (P(x^2) - 1) below 0.9, 1 - exp(-x^2) Q(t) from 0.9 to 4 (Q
 * fitted to erfcx, t = (|x| - 2.45) / 1.55), 1 beyond, the sign put back.
 * Both branches are computed and blended (no per-lane branch).  Coefficients
 * from tests/golden/onnx_erf/gen.py (coef.txt).
 */
INL void erf8(const float *x, float *y)
{
	v8f v, one = {1, 1, 1, 1, 1, 1, 1, 1};
	memcpy(&v, x, sizeof(v));
	v8i sign = (v8i)v & (v8i)(one * -0.0f);
	v8f a = (v8f)((v8i)v & ~(v8i)(one * -0.0f)); /* |x|; NaN stays NaN */
	v8f z = a * a;
	v8f p = 8.505646346e-05f * one;
	p = p * z - 8.173717078e-04f;
	p = p * z + 5.203670183e-03f;
	p = p * z - 2.686042054e-02f;
	p = p * z + 1.128371310e-01f;
	p = p * z - 3.761263481e-01f;
	/* x + x (P - 1), as fdlibm: the rounding of the sum then falls on the
	 * small correction, not on x P (2.5 ulp -> see test_vmath_erf) */
	p = p * z + 1.283791671e-01f;
	v8f small = a + a * p;
	v8f c = a;
	v8i hi = c > 4.0f;
	c = (v8f)(((v8i)c & ~hi) | ((v8i)(one * 4.0f) & hi));
	v8i lo = c < 0.9f; /* also false for NaN: the small branch is taken below */
	c = (v8f)(((v8i)c & ~lo) | ((v8i)(one * 0.9f) & lo));
	v8f t = (c - 2.45f) * (1.0f / 1.55f);
	v8f q = 2.320797730e-05f * one;
	q = q * t - 6.365269082e-05f;
	q = q * t + 9.022330820e-05f;
	q = q * t - 2.147930417e-04f;
	q = q * t + 6.039660779e-04f;
	q = q * t - 1.431424967e-03f;
	q = q * t + 3.227302386e-03f;
	q = q * t - 7.152221007e-03f;
	q = q * t + 1.534548346e-02f;
	q = q * t - 3.170528519e-02f;
	q = q * t + 6.288827798e-02f;
	q = q * t - 1.191987172e-01f;
	q = q * t + 2.145870919e-01f;
	float nz[8], ez[8];
	v8f m = -(c * c);
	memcpy(nz, &m, sizeof(nz));
	exp8(nz, 0.0f, ez);
	v8f e;
	memcpy(&e, ez, sizeof(e));
	v8f big = 1.0f - e * q;
	v8i use_small = ~(a >= 0.9f); /* |x| < 0.9, and NaN (small is NaN there) */
	v8f r = (v8f)(((v8i)small & use_small) | ((v8i)big & ~use_small));
	r = (v8f)((v8i)r | sign);
	memcpy(y, &r, sizeof(r));
}

INL void erf_body(const float *x, float *y, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		erf8(x + i, y + i);
	if (i < n) {
		float xt[8] = {0}, yt[8];
		memcpy(xt, x + i, (n - i) * sizeof(float));
		erf8(xt, yt);
		memcpy(y + i, yt, (n - i) * sizeof(float));
	}
}

/*
 * sigmoid of 8 floats: e = exp(-|x|) (never overflows), r = 1 / (1 + e),
 * then r where x >= 0 and e r below, selected with x's sign as a mask.
 * Reads all 8 before writing, so y may be x.
 */
INL void sig8(const float *x, float *y)
{
	v8f v, one = {1, 1, 1, 1, 1, 1, 1, 1};
	memcpy(&v, x, sizeof(v));
	v8f na = (v8f)((v8i)v | (v8i)(one * -0.0f)); /* -|x| */
	float t[8], et[8];
	memcpy(t, &na, sizeof(t));
	exp8(t, 0.0f, et);
	v8f e;
	memcpy(&e, et, sizeof(e));
	v8f r = one / (one + e);
	v8i neg = v < 0.0f; /* false for NaN: r, NaN, is kept */
	v8f out = (v8f)(((v8i)e & neg) | ((v8i)one & ~neg)) * r;
	memcpy(y, &out, sizeof(out));
}

INL void sig_body(const float *x, float *y, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		sig8(x + i, y + i);
	if (i < n) {
		float xt[8] = {0, 0, 0, 0, 0, 0, 0, 0}, yt[8];
		memcpy(xt, x + i, (n - i) * sizeof(float));
		sig8(xt, yt);
		memcpy(y + i, yt, (n - i) * sizeof(float));
	}
}

static void sig_base(const float *x, float *y, size_t n)
{
	sig_body(x, y, n);
}

static void erf_base(const float *x, float *y, size_t n)
{
	erf_body(x, y, n);
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

__attribute__((target("avx2,fma"))) static void erf_avx2(const float *x, float *y, size_t n)
{
	erf_body(x, y, n);
}

__attribute__((target("avx2,fma"))) static void sig_avx2(const float *x, float *y, size_t n)
{
	sig_body(x, y, n);
}
#endif

static void (*exp_fn)(const float *, float, float *, size_t) = exp_base;
static void (*erf_fn)(const float *, float *, size_t) = erf_base;
static void (*sig_fn)(const float *, float *, size_t) = sig_base;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
#ifdef VMATH_AVX2
	if (vpa_cpu_simd()) { /* not in portable mode (base/cpu.h) */
		exp_fn = exp_avx2;
		erf_fn = erf_avx2;
		sig_fn = sig_avx2;
	}
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

void ox_erf_f32(const float *x, float *y, size_t n)
{
	pthread_once(&once, init);
	erf_fn(x, y, n);
}

void ox_sigmoid_f32(const float *x, float *y, size_t n)
{
	pthread_once(&once, init);
	sig_fn(x, y, n);
}
