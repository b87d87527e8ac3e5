/*
 * onnx/conv_wino.c - 3x3 stride-1 2-D convolution by Winograd's minimal
 * filtering algorithm F(m x m, 3 x 3), m = 2 or 4 (Lavin and Gray, "Fast
 * Algorithms for Convolutional Neural Networks", CVPR 2016; the
 * interpolation points 0, 1, -1 (m = 2) and 0, 1, -1, 2, -2 (m = 4), the
 * matrices of their section 4.1-4.2).
 *
 * The output is cut into m x m tiles; tile (i, j) reads the (m+2) x (m+2)
 * input patch d at rows i m - pad_top, columns j m - pad_left (zeros
 * outside).  With a = m + 2 and xi = 0..a^2-1 indexing the transformed
 * a x a patch:
 *   U[xi][o][c] = (G g[o][c] G^T)[xi]            weights, once per model
 *   V[xi][c][t] = (B^T d[c][t] B)[xi]            input, per block of tiles
 *   Z[xi]       = U[xi] V[xi]                    a^2 SGEMMs (M x C x tiles)
 *   Y tile      = A^T Z[.][o][t] A               output, then ox_conv_finish
 * so a tile costs a^2 multiply-adds per input-output channel pair instead
 * of 9 m^2: 2.25x fewer for m = 2, 4x for m = 4.  Tiles are processed in
 * blocks of T (a multiple of 8) so V and Z stay in cache; the transforms
 * work on 8 tiles at once (GCC vector extension, compiled for AVX2+FMA as
 * well, taken when the CPU has it and the run is not portable: base/cpu.h).
 * Float rounding: the transforms' constants (1/6, 1/24, 8, ...) add error
 * that grows with m: tests/unit/test_conv.c bounds it against a
 * double-precision direct convolution.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "base/la.h"
#include "onnx/conv.h"
#include "onnx/internal.h"

typedef float v8 __attribute__((vector_size(32)));
#define LD(v, p) memcpy(&(v), (p), sizeof(v8))
#define ST(p, v) memcpy((p), &(v), sizeof(v8))
#define INL static inline __attribute__((always_inline))

/* ---- 1-D transforms of 8 lanes: o[k*so] from d[k*sd] */

/* B^T for m = 4 (a = 6). */
INL void bt4(v8 *o, size_t so, const v8 *d, size_t sd)
{
	v8 d0 = d[0], d1 = d[sd], d2 = d[2 * sd], d3 = d[3 * sd], d4 = d[4 * sd], d5 = d[5 * sd];
	v8 a = d4 - d2 * 4.0f, b = d3 - d1 * 4.0f, c = d4 - d2, e = (d3 - d1) * 2.0f;
	o[0] = d0 * 4.0f - d2 * 5.0f + d4;
	o[so] = a + b;
	o[2 * so] = a - b;
	o[3 * so] = c + e;
	o[4 * so] = c - e;
	o[5 * so] = d1 * 4.0f - d3 * 5.0f + d5;
}

/* A^T for m = 4: 6 -> 4. */
INL void at4(v8 *o, size_t so, const v8 *z, size_t sz)
{
	v8 s1 = z[sz] + z[2 * sz], s2 = z[sz] - z[2 * sz];
	v8 s3 = z[3 * sz] + z[4 * sz], s4 = z[3 * sz] - z[4 * sz];
	o[0] = z[0] + s1 + s3;
	o[so] = s2 + s4 * 2.0f;
	o[2 * so] = s1 + s3 * 4.0f;
	o[3 * so] = s2 + s4 * 8.0f + z[5 * sz];
}

/* G for m = 4: 3 -> 6. */
INL void g4(v8 *o, size_t so, const v8 *g, size_t sg)
{
	v8 g0 = g[0], g1 = g[sg], g2 = g[2 * sg];
	v8 p = g0 + g2, q = g0 * (1.0f / 24) + g2 * (1.0f / 6), r = g1 * (1.0f / 12);
	o[0] = g0 * 0.25f;
	o[so] = (p + g1) * (-1.0f / 6);
	o[2 * so] = (p - g1) * (-1.0f / 6);
	o[3 * so] = q + r;
	o[4 * so] = q - r;
	o[5 * so] = g2;
}

/* B^T for m = 2 (a = 4). */
INL void bt2(v8 *o, size_t so, const v8 *d, size_t sd)
{
	v8 d0 = d[0], d1 = d[sd], d2 = d[2 * sd], d3 = d[3 * sd];
	o[0] = d0 - d2;
	o[so] = d1 + d2;
	o[2 * so] = d2 - d1;
	o[3 * so] = d1 - d3;
}

/* A^T for m = 2: 4 -> 2. */
INL void at2(v8 *o, size_t so, const v8 *z, size_t sz)
{
	o[0] = z[0] + z[sz] + z[2 * sz];
	o[so] = z[sz] - z[2 * sz] - z[3 * sz];
}

/* G for m = 2: 3 -> 4. */
INL void g2(v8 *o, size_t so, const v8 *g, size_t sg)
{
	v8 p = (g[0] + g[2 * sg]) * 0.5f, h = g[sg] * 0.5f;
	o[0] = g[0];
	o[so] = p + h;
	o[2 * so] = p - h;
	o[3 * so] = g[2 * sg];
}

/* ---- 2-D transforms over a block of tiles, 8 tiles (lanes) at a time */

/*
 * A group of 8 consecutive tiles of the block.  fast_in: all in one tile row
 * and wholly inside the input horizontally, so their patches are read as
 * vectors (m = 4); fast_out: the same for the output.  y0, x0: the first
 * tile's input origin (row, column); oy, ox: its output origin.  Otherwise
 * each lane's patch is gathered (zero outside) from py[t], px[t], and its
 * outputs written one by one, clipped (oy[t], ox[t]).
 */
struct wgroup {
	int fast_in, fast_out;
	int64_t y0, x0, oy, ox;
};

/* Deinterleave 32 consecutive floats p[0..32) into 4 phases: P[q][j] = p[4 j + q]. */
#define DEINT4(P0, P1, P2, P3, p)                                                          \
	do {                                                                               \
		v8 a0_, a1_, a2_, a3_;                                                     \
		LD(a0_, (p));                                                              \
		LD(a1_, (p) + 8);                                                          \
		LD(a2_, (p) + 16);                                                         \
		LD(a3_, (p) + 24);                                                         \
		v8 s0_ = __builtin_shufflevector(a0_, a1_, 0, 4, 8, 12, 1, 5, 9, 13);      \
		v8 s1_ = __builtin_shufflevector(a0_, a1_, 2, 6, 10, 14, 3, 7, 11, 15);    \
		v8 s2_ = __builtin_shufflevector(a2_, a3_, 0, 4, 8, 12, 1, 5, 9, 13);      \
		v8 s3_ = __builtin_shufflevector(a2_, a3_, 2, 6, 10, 14, 3, 7, 11, 15);    \
		P0 = __builtin_shufflevector(s0_, s2_, 0, 1, 2, 3, 8, 9, 10, 11);          \
		P1 = __builtin_shufflevector(s0_, s2_, 4, 5, 6, 7, 12, 13, 14, 15);        \
		P2 = __builtin_shufflevector(s1_, s3_, 0, 1, 2, 3, 8, 9, 10, 11);          \
		P3 = __builtin_shufflevector(s1_, s3_, 4, 5, 6, 7, 12, 13, 14, 15);        \
	} while (0)

/* The inverse: p[4 j + q] = Yq[j] for 32 consecutive floats. */
#define INTER4(p, Y0, Y1, Y2, Y3)                                                          \
	do {                                                                               \
		v8 s0_ = __builtin_shufflevector(Y0, Y1, 0, 8, 1, 9, 2, 10, 3, 11);        \
		v8 s1_ = __builtin_shufflevector(Y2, Y3, 0, 8, 1, 9, 2, 10, 3, 11);        \
		v8 s2_ = __builtin_shufflevector(Y0, Y1, 4, 12, 5, 13, 6, 14, 7, 15);      \
		v8 s3_ = __builtin_shufflevector(Y2, Y3, 4, 12, 5, 13, 6, 14, 7, 15);      \
		v8 o_ = __builtin_shufflevector(s0_, s1_, 0, 1, 8, 9, 2, 3, 10, 11);       \
		ST((p), o_);                                                               \
		o_ = __builtin_shufflevector(s0_, s1_, 4, 5, 12, 13, 6, 7, 14, 15);        \
		ST((p) + 8, o_);                                                           \
		o_ = __builtin_shufflevector(s2_, s3_, 0, 1, 8, 9, 2, 3, 10, 11);          \
		ST((p) + 16, o_);                                                          \
		o_ = __builtin_shufflevector(s2_, s3_, 4, 5, 12, 13, 6, 7, 14, 15);        \
		ST((p) + 24, o_);                                                          \
	} while (0)

/*
 * V[xi * vs + t] = (B^T d B)[xi] for the block's patches of input channel xc
 * (H x Wd); lanes nt..8 ng-1 are zero patches.
 */
INL void in_body(int m, const float *restrict xc, int64_t H, int64_t Wd, const struct wgroup *gd,
		 size_t ng, const int64_t *py, const int64_t *px, size_t nt, float *restrict V,
		 size_t vs)
{
	int a = m + 2;
	for (size_t gi = 0; gi < ng; gi++) {
		size_t t0 = gi * 8;
		v8 d[36], u[36], v[36];
		if (m == 4 && gd[gi].fast_in) {
			/* each row r: its 6 phases q, then B^T along q: u[r][l] */
			for (int r = 0; r < 6; r++) {
				int64_t yy = gd[gi].y0 + r;
				if (yy < 0 || yy >= H) {
					for (int l = 0; l < 6; l++)
						u[r * 6 + l] = (v8){0};
					continue;
				}
				const float *p = xc + yy * Wd + gd[gi].x0;
				v8 q[6], q6, q7;
				DEINT4(q[0], q[1], q[2], q[3], p);
				DEINT4(q[4], q[5], q6, q7, p + 4);
				(void)q6, (void)q7;
				bt4(u + r * 6, 1, q, 1);
			}
			for (int l = 0; l < 6; l++) /* columns: v[k][l] = sum_r BT[k][r] u[r][l] */
				bt4(v + l, 6, u + l, 6);
		} else {
			float ds[36][8];
			for (size_t l = 0; l < 8; l++) {
				size_t t = t0 + l;
				for (int r = 0; r < a; r++) {
					int64_t yy = t < nt ? py[t] + r : -1;
					for (int q = 0; q < a; q++) {
						int64_t xx = t < nt ? px[t] + q : -1;
						ds[r * a + q][l] = yy >= 0 && yy < H && xx >= 0 && xx < Wd
								   ? xc[yy * Wd + xx] : 0.0f;
					}
				}
			}
			for (int k = 0; k < a * a; k++)
				LD(d[k], ds[k]);
			for (int q = 0; q < a; q++) /* columns: u[k][q] = sum_r BT[k][r] d[r][q] */
				m == 4 ? bt4(u + q, 6, d + q, 6) : bt2(u + q, 4, d + q, 4);
			for (int k = 0; k < a; k++) /* rows: v[k][l] = sum_q BT[l][q] u[k][q] */
				m == 4 ? bt4(v + k * a, 1, u + k * a, 1) : bt2(v + k * a, 1, u + k * a, 1);
		}
		for (int k = 0; k < a * a; k++)
			ST(V + (size_t)k * vs + t0, v[k]);
	}
}

/*
 * Output channel yc (Ho x Wo) of the block's tiles from Z[xi * zs + t]:
 * A^T Z A written in place, clipped to the output.
 */
INL void out_body(int m, const float *restrict Z, size_t zs, const struct wgroup *gd, size_t ng,
		  const int64_t *oy, const int64_t *ox, size_t nt, float *restrict yc, int64_t Ho,
		  int64_t Wo)
{
	int a = m + 2;
	for (size_t gi = 0; gi < ng; gi++) {
		size_t t0 = gi * 8;
		v8 z[36], s[24], y[16];
		for (int k = 0; k < a * a; k++)
			LD(z[k], Z + (size_t)k * zs + t0);
		for (int l = 0; l < a; l++) /* columns: s[r][l] = sum_k AT[r][k] z[k][l] */
			m == 4 ? at4(s + l, 6, z + l, 6) : at2(s + l, 4, z + l, 4);
		for (int r = 0; r < m; r++) /* rows: y[r][c] = sum_l AT[c][l] s[r][l] */
			m == 4 ? at4(y + r * m, 1, s + r * a, 1) : at2(y + r * m, 1, s + r * a, 1);
		if (m == 4 && gd[gi].fast_out) {
			for (int r = 0; r < 4 && gd[gi].oy + r < Ho; r++)
				INTER4(yc + (gd[gi].oy + r) * Wo + gd[gi].ox, y[r * 4], y[r * 4 + 1],
				       y[r * 4 + 2], y[r * 4 + 3]);
			continue;
		}
		float ys[16][8];
		for (int k = 0; k < m * m; k++)
			ST(ys[k], y[k]);
		for (size_t l = 0; l < 8 && t0 + l < nt; l++) {
			size_t t = t0 + l;
			int64_t rn = Ho - oy[t] < m ? Ho - oy[t] : m, cn = Wo - ox[t] < m ? Wo - ox[t] : m;
			float *yt = yc + oy[t] * Wo + ox[t];
			for (int64_t r = 0; r < rn; r++)
				for (int64_t c = 0; c < cn; c++)
					yt[r * Wo + c] = ys[r * m + c][l];
		}
	}
}

/*
 * U[xi][o][c] (o < mg, c < cg) from W[o][c][3][3]: 8 input channels at a time.
 */
INL void wt_body(int m, const float *restrict W, size_t mg, size_t cg, float *restrict U)
{
	int a = m + 2;
	for (size_t o = 0; o < mg; o++)
		for (size_t c0 = 0; c0 < cg; c0 += 8) {
			size_t nl = cg - c0 < 8 ? cg - c0 : 8;
			float gs[9][8] = {{0}}, us[36][8];
			for (size_t l = 0; l < nl; l++)
				for (int k = 0; k < 9; k++)
					gs[k][l] = W[((o * cg) + c0 + l) * 9 + (size_t)k];
			v8 gv[9], tmp[18], u[36];
			for (int k = 0; k < 9; k++)
				LD(gv[k], gs[k]);
			for (int c = 0; c < 3; c++) /* tmp[k][c] = sum_r G[k][r] g[r][c] */
				m == 4 ? g4(tmp + c, 3, gv + c, 3) : g2(tmp + c, 3, gv + c, 3);
			for (int k = 0; k < a; k++) /* u[k][l] = sum_c G[l][c] tmp[k][c] */
				m == 4 ? g4(u + k * a, 1, tmp + k * 3, 1) : g2(u + k * a, 1, tmp + k * 3, 1);
			for (int k = 0; k < a * a; k++) {
				ST(us[k], u[k]);
				memcpy(U + ((size_t)k * mg + o) * cg + c0, us[k], nl * sizeof(float));
			}
		}
}

/* The same code compiled twice, for the baseline ISA and for AVX2 + FMA; m
 * is a constant in each branch, so the bodies are specialised. */
#define IN_ARGS const float *xc, int64_t H, int64_t Wd, const struct wgroup *gd, size_t ng, \
		const int64_t *py, const int64_t *px, size_t nt, float *V, size_t vs
#define IN_PASS xc, H, Wd, gd, ng, py, px, nt, V, vs
#define OUT_ARGS const float *Z, size_t zs, const struct wgroup *gd, size_t ng, \
		 const int64_t *oy, const int64_t *ox, size_t nt, float *yc, int64_t Ho, int64_t Wo
#define OUT_PASS Z, zs, gd, ng, oy, ox, nt, yc, Ho, Wo
static void in_base(int m, IN_ARGS)
{
	m == 4 ? in_body(4, IN_PASS) : in_body(2, IN_PASS);
}
static void out_base(int m, OUT_ARGS)
{
	m == 4 ? out_body(4, OUT_PASS) : out_body(2, OUT_PASS);
}
static void wt_base(int m, const float *W, size_t mg, size_t cg, float *U)
{
	m == 4 ? wt_body(4, W, mg, cg, U) : wt_body(2, W, mg, cg, U);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define WINO_AVX2 1
__attribute__((target("avx2,fma"))) static void in_avx2(int m, IN_ARGS)
{
	m == 4 ? in_body(4, IN_PASS) : in_body(2, IN_PASS);
}
__attribute__((target("avx2,fma"))) static void out_avx2(int m, OUT_ARGS)
{
	m == 4 ? out_body(4, OUT_PASS) : out_body(2, OUT_PASS);
}
__attribute__((target("avx2,fma"))) static void wt_avx2(int m, const float *W, size_t mg,
							 size_t cg, float *U)
{
	m == 4 ? wt_body(4, W, mg, cg, U) : wt_body(2, W, mg, cg, U);
}
#endif

static struct {
	void (*in)(int, IN_ARGS);
	void (*out)(int, OUT_ARGS);
	void (*wt)(int, const float *, size_t, size_t, float *);
} kern = {in_base, out_base, wt_base};
static pthread_once_t kern_once = PTHREAD_ONCE_INIT;

static void kern_init(void)
{
#ifdef WINO_AVX2
	if (vpa_cpu_simd()) { /* not in portable mode (base/cpu.h) */
		kern.in = in_avx2;
		kern.out = out_avx2;
		kern.wt = wt_avx2;
	}
#endif
}

const char *ox_conv_wino_path(void)
{
	pthread_once(&kern_once, kern_init);
	return kern.in == in_base ? "generic" : "avx2+fma";
}

static size_t round8(size_t n) { return (n + 7) / 8 * 8; }

/* ---- a model's transformed weights
 *
 * A model runs the same Conv weights on every utterance; transforming them
 * on every call wrote a^2 / 9 times the weights (4x for m = 4) per call and
 * cost the transform's flops.  The weights are the model's constant values
 * (initializers, BatchNormalization folded at load), never written after
 * the load, so a slot per (value, m) needs no check of the weights; it
 * lives and dies with the model (a process-wide cache keyed by a weight
 * pointer, tried on branch onnxplan, needed a memcmp of the weights on every
 * hit to be safe against reused addresses and kept its entries after the
 * model was freed). */
struct ox_wino_cache {
	size_t n;
	_Atomic(float *) *u;  /* 2 n slots: value w's U for m = 2 at 2 w, m = 4 at 2 w + 1 */
	atomic_size_t bytes;  /* reserved by the kept transforms */
};
#define WKEEP_MAX ((size_t)256 << 20)

struct ox_wino_cache *ox_wino_cache_new(size_t n_values)
{
	struct ox_wino_cache *wc = xcalloc(1, sizeof(*wc));
	wc->n = n_values;
	wc->u = xmalloc((2 * n_values + 1) * sizeof(wc->u[0]));
	for (size_t i = 0; i < 2 * n_values; i++)
		atomic_init(&wc->u[i], NULL);
	atomic_init(&wc->bytes, 0);
	return wc;
}

void ox_wino_cache_free(struct ox_wino_cache *wc)
{
	if (!wc)
		return;
	for (size_t i = 0; i < 2 * wc->n; i++)
		free(atomic_load(&wc->u[i]));
	free(wc->u);
	free(wc);
}

/* cv's U for m from its model's cache, made there by the first caller;
 * NULL when W is not a constant of the model or the cache is full. */
static const float *wino_kept(const struct ox_conv *cv, int m, const float *Wt, size_t u_n)
{
	struct ox_wino_cache *wc = cv->wc;
	if (!wc || cv->wid >= wc->n)
		return NULL;
	_Atomic(float *) *slot = &wc->u[2 * cv->wid + (m == 4)];
	float *u = atomic_load_explicit(slot, memory_order_acquire);
	if (u)
		return u;
	size_t b = u_n * sizeof(float);
	if (atomic_fetch_add(&wc->bytes, b) + b > WKEEP_MAX ||
	    !(u = aligned_alloc(64, (b + 63) / 64 * 64))) {
		atomic_fetch_sub(&wc->bytes, b);
		return NULL;
	}
	size_t a2 = (size_t)((m + 2) * (m + 2)), cg = cv->C / cv->grp, mg = cv->M / cv->grp;
	for (size_t gi = 0; gi < cv->grp; gi++)
		kern.wt(m, Wt + gi * mg * cg * 9, mg, cg, u + gi * a2 * mg * cg);
	float *none = NULL;
	if (!atomic_compare_exchange_strong_explicit(slot, &none, u, memory_order_acq_rel,
						     memory_order_acquire)) {
		/* another thread published first: its U has the same bits */
		free(u);
		atomic_fetch_sub(&wc->bytes, b);
		return none;
	}
	return u;
}

/* Tiles per block (a multiple of 8): V and Z together about 1 MiB (the L2
 * of the Zen 4 cores measured), at least 32 tiles (narrower SGEMMs lose more
 * than the cache misses cost), at most 512. */
static size_t wino_block(size_t a2, size_t cg, size_t mg, size_t ntiles)
{
	size_t tb = (size_t)(1u << 20) / (a2 * (cg + mg) * sizeof(float));
	tb = tb < 32 ? 32 : tb > 512 ? 512 : tb;
	tb = round8(tb);
	return tb > round8(ntiles) ? round8(ntiles) : tb;
}
void ox_conv_wino(const struct ox_conv *cv, int m, const float *X, const float *Wt,
		  const struct ox_conv_epi *e, float *Y)
{
	pthread_once(&kern_once, kern_init);
	const struct ox_geom *g = &cv->g;
	int a = m + 2;
	size_t a2 = (size_t)(a * a);
	size_t cg = cv->C / cv->grp, mg = cv->M / cv->grp;
	int64_t H = g->in[1], Wd = g->in[2], Ho = g->out[1], Wo = g->out[2];
	int64_t pt = g->pb[1], pl = g->pb[2];
	size_t th = (size_t)((Ho + m - 1) / m), tw = (size_t)((Wo + m - 1) / m), ntiles = th * tw;
	size_t tb = wino_block(a2, cg, mg, ntiles);
	size_t u_n = xmul(xmul(a2, cv->M), cg), v_n = a2 * cg * tb, z_n = a2 * mg * tb;
	const float *U = wino_kept(cv, m, Wt, u_n);
	size_t u_s = U ? 0 : u_n; /* U in the scratch: weights the model does not keep */
	size_t bytes = (u_s + v_n + z_n) * sizeof(float) + 4 * tb * sizeof(int64_t) +
		       tb / 8 * sizeof(struct wgroup);
	float *S = ox_scratch(bytes);
	float *V = S + u_s, *Z = V + v_n;
	int64_t *py = (int64_t *)(Z + z_n), *px = py + tb, *oy = px + tb, *ox = oy + tb;
	struct wgroup *gd = (struct wgroup *)(ox + tb);
	if (!U) {
		for (size_t gi = 0; gi < cv->grp; gi++)
			kern.wt(m, Wt + gi * mg * cg * 9, mg, cg, S + gi * a2 * mg * cg);
		U = S;
	}
	for (size_t t0 = 0; t0 < ntiles; t0 += tb) {
		size_t nt = ntiles - t0 < tb ? ntiles - t0 : tb, tv = round8(nt), ng = tv / 8;
		for (size_t t = 0; t < nt; t++) {
			int64_t i = (int64_t)((t0 + t) / tw), j = (int64_t)((t0 + t) % tw);
			oy[t] = i * m;
			ox[t] = j * m;
			py[t] = oy[t] - pt;
			px[t] = ox[t] - pl;
		}
		for (size_t k = 0; k < ng; k++) {
			size_t t = k * 8;
			int whole = t + 8 <= nt && oy[t] == oy[t + 7];
			gd[k] = (struct wgroup){whole && px[t] >= 0 && px[t] + 36 <= Wd,
						whole && ox[t] + 32 <= Wo, py[t], px[t], oy[t], ox[t]};
		}
		for (size_t nb = 0; nb < cv->N; nb++)
			for (size_t gi = 0; gi < cv->grp; gi++) {
				const float *xg = X + (nb * cv->C + gi * cg) * (size_t)(H * Wd);
				float *yg = Y + (nb * cv->M + gi * mg) * (size_t)(Ho * Wo);
				const float *Ug = U + gi * a2 * mg * cg;
				for (size_t c = 0; c < cg; c++)
					kern.in(m, xg + c * (size_t)(H * Wd), H, Wd, gd, ng, py, px, nt,
						V + c * tv, cg * tv);
				for (size_t xi = 0; xi < a2; xi++)
					vpa_sgemm(0, 0, mg, tv, cg, 1.0f, Ug + xi * mg * cg, cg,
						  V + xi * cg * tv, tv, 0.0f, Z + xi * mg * tv, tv);
				for (size_t o = 0; o < mg; o++) {
					float *yc = yg + o * (size_t)(Ho * Wo);
					kern.out(m, Z + o * tv, mg * tv, gd, ng, oy, ox, nt, yc, Ho, Wo);
					/* finish the output rows this block completed, tile row by tile row */
					for (size_t t = 0; t < nt;) {
						size_t i = (t0 + t) / tw, j0 = (t0 + t) % tw;
						size_t j1 = tw - j0 < nt - t ? tw : j0 + (nt - t);
						int64_t c0 = (int64_t)j0 * m, c1 = (int64_t)j1 * m;
						c1 = c1 > Wo ? Wo : c1;
						for (int64_t r = (int64_t)i * m; r < (int64_t)(i + 1) * m && r < Ho; r++)
							ox_conv_finish(e, gi * mg + o, yc + r * Wo + c0, (size_t)(c1 - c0));
						t += j1 - j0;
					}
				}
			}
	}
	ox_scratch_put(S, bytes);
}
