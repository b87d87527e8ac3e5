/*
 * onnx/conv.h - the Conv kernels (internal): im2col + SGEMM for every
 * geometry (onnx/conv.c) and Winograd F(2x2,3x3) / F(4x4,3x3) for 3x3
 * stride-1 2-D convolutions (onnx/conv_wino.c).  ops_nn.c checks the node
 * and its geometry, then calls ox_conv_run.
 */
#ifndef VPA_ONNX_CONV_H
#define VPA_ONNX_CONV_H

#include <stddef.h>
#include <stdint.h>

/* A sliding window over up to three spatial axes, as 3-D (leading axes 1). */
struct ox_geom {
	size_t ns;                    /* spatial axes of the model (1..3) */
	int64_t in[3], k[3], out[3];  /* as 3-D: leading axes 1 */
	int64_t st[3], dil[3], pb[3], pe[3];
};

/* One Conv: N images of C channels (NC + spatial, row-major) in grp groups,
 * M output channels; W is (M, C / grp, k...). */
struct ox_wino_cache;
struct ox_conv {
	size_t N, C, M, grp;
	struct ox_geom g;
	/* W is the model's constant value wid: Winograd keeps its transforms in
	 * wc (the model's, conv_wino.c); NULL: transformed per call. */
	struct ox_wino_cache *wc;
	size_t wid;
};

/*
 * The output epilogue.  Every kernel hands each finished run of output
 * values of one output channel to ox_conv_finish, and nothing writes the
 * output after it: the one place where a Conv output is finalised (bias
 * today; a fused activation hooks in here).
 */
struct ox_epi;
/* n values of y through a fused activation (onnx/fuse.c). */
void ox_epi_act(const struct ox_epi *e, float *y, size_t n);

struct ox_conv_epi {
	const float *bias;       /* M values or NULL */
	const struct ox_epi *act; /* a fused activation (onnx/fuse.c) or NULL */
};

static inline void ox_conv_finish(const struct ox_conv_epi *e, size_t ch, float *restrict y,
				  size_t n)
{
	if (e->bias) {
		float b = e->bias[ch];
		for (size_t j = 0; j < n; j++)
			y[j] += b;
	}
	if (e->act)
		ox_epi_act(e->act, y, n);
}

/* Methods: im2col + SGEMM, Winograd F(2x2,3x3), F(4x4,3x3). */
enum { OX_CONV_IM2COL = 1, OX_CONV_WINO2 = 2, OX_CONV_WINO4 = 4 };

/* 1 when Winograd applies: 2-D (or 3-D with a leading axis of 1), kernel 3x3,
 * strides and dilations 1. */
int ox_conv_wino_ok(const struct ox_conv *cv);

/*
 * The method for cv: Winograd where it applies and pays (channels per group
 * and output size, measured: onnx/README.md), else im2col.  The environment
 * variable VPA_ONNX_CONV=im2col|winograd2|winograd4 (read once) forces a
 * method wherever it applies (diagnostics, tests).
 */
int ox_conv_method(const struct ox_conv *cv);
/* Tests: force a method as VPA_ONNX_CONV does (0: back to the choice by
 * shape).  Not thread-safe: call it before runs start. */
void ox_conv_force(int method);

/*
 * Y (N, M, out...) = conv(X, W) with the epilogue, by each method.  X, W, Y
 * borrowed; Y fully written.  Threads: any number may run these at once
 * (scratch comes from the calling thread's buffer pool, ox_scratch; the
 * method override and the AVX2 choice are set up once under pthread_once).
 */
void ox_conv_im2col(const struct ox_conv *cv, const float *x, const float *w,
		    const struct ox_conv_epi *e, float *y);
/* The path of the Winograd transforms in this process: "avx2+fma" or
 * "generic" (always in portable mode: base/cpu.h). */
const char *ox_conv_wino_path(void);

/*
 * A model's Winograd weights (U = G g G^T of each constant W, per m), made by
 * the first call that needs them and kept until ox_wino_cache_free, up to
 * 256 MiB per model (beyond it calls transform per call as before).  Any
 * number of threads may share one: a slot is published once by an atomic
 * compare-and-swap (a loser frees its copy, which holds the same bits: the
 * transform is a fixed sequence of float operations on fixed weights).
 */
struct ox_wino_cache *ox_wino_cache_new(size_t n_values);
void ox_wino_cache_free(struct ox_wino_cache *wc);

/* m = 2 or 4; cv must pass ox_conv_wino_ok. */
void ox_conv_wino(const struct ox_conv *cv, int m, const float *x, const float *w,
		  const struct ox_conv_epi *e, float *y);

/* ox_conv_method's choice, then that kernel. */
void ox_conv_run(const struct ox_conv *cv, const float *x, const float *w,
		 const struct ox_conv_epi *e, float *y);

#endif
