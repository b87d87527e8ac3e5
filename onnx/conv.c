/*
 * onnx/conv.c - Conv by im2col + SGEMM (every geometry: 1-3 spatial axes,
 * pads, strides, dilations, groups) and the choice between it and Winograd
 * (onnx/conv_wino.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/la.h"
#include "onnx/conv.h"
#include "onnx/internal.h"

void ox_conv_im2col(const struct ox_conv *cv, const float *X, const float *W,
		    const struct ox_conv_epi *e, float *Y)
{
	const struct ox_geom *g = &cv->g;
	size_t cg = cv->C / cv->grp, mg = cv->M / cv->grp;
	size_t kk = (size_t)(g->k[0] * g->k[1] * g->k[2]);
	size_t osz = (size_t)(g->out[0] * g->out[1] * g->out[2]);
	size_t isz = (size_t)(g->in[0] * g->in[1] * g->in[2]);
	/* 1x1 stride-1 unpadded: the input is the column matrix. */
	int direct = kk == 1 && g->st[0] == 1 && g->st[1] == 1 && g->st[2] == 1 && !g->pb[0] &&
		     !g->pb[1] && !g->pb[2] && !g->pe[0] && !g->pe[1] && !g->pe[2];
	/* im2col in blocks of whole output rows (about 4096 columns, so the block
	 * stays in cache), one SGEMM per block. */
	int64_t o2n = g->out[2] > 0 ? g->out[2] : 1;
	int64_t step = 4096 / o2n > 1 ? 4096 / o2n : 1;
	size_t blk = direct ? osz : (size_t)(o2n * step);
	if (blk > osz)
		blk = osz; /* a block never has more columns than the output */
	size_t col_bytes = xmul(xmul(cg, kk), blk ? blk : 1) * sizeof(float);
	float *col = direct ? NULL : ox_scratch(col_bytes);
	int64_t rows = g->out[0] * g->out[1];
	for (size_t nb = 0; nb < cv->N; nb++)
		for (size_t gi = 0; gi < cv->grp; gi++) {
			const float *xin = X + (nb * cv->C + gi * cg) * isz;
			float *yo = Y + (nb * cv->M + gi * mg) * osz;
			const float *wg = W + gi * mg * cg * kk;
			if (direct) {
				vpa_sgemm(0, 0, mg, osz, cg, 1.0f, wg, cg, xin, osz, 0.0f, yo, osz);
				for (size_t m = 0; m < mg; m++)
					ox_conv_finish(e, gi * mg + m, yo + m * osz, osz);
				continue;
			}
			for (int64_t r0 = 0; r0 < rows; r0 += step) {
				int64_t r1 = r0 + step < rows ? r0 + step : rows;
				size_t ncol = (size_t)((r1 - r0) * g->out[2]);
				float *p = col;
				for (size_t ci = 0; ci < cg; ci++)
					for (int64_t a = 0; a < g->k[0]; a++)
						for (int64_t bb = 0; bb < g->k[1]; bb++)
							for (int64_t cc = 0; cc < g->k[2]; cc++) {
								const float *xc = xin + ci * isz;
								/* output columns whose input column is inside: [lo, hi) */
								int64_t off2 = cc * g->dil[2] - g->pb[2];
								int64_t lo = off2 >= 0 ? 0 : (-off2 + g->st[2] - 1) / g->st[2];
								int64_t hi = g->in[2] - off2 <= 0 ? 0
									     : (g->in[2] - off2 + g->st[2] - 1) / g->st[2];
								hi = hi > g->out[2] ? g->out[2] : hi;
								lo = lo > hi ? hi : lo;
								for (int64_t r = r0; r < r1; r++, p += g->out[2]) {
									int64_t o0 = r / g->out[1], o1 = r % g->out[1];
									int64_t i0 = o0 * g->st[0] - g->pb[0] + a * g->dil[0];
									int64_t i1 = o1 * g->st[1] - g->pb[1] + bb * g->dil[1];
									if (i0 < 0 || i0 >= g->in[0] || i1 < 0 || i1 >= g->in[1]) {
										memset(p, 0, (size_t)g->out[2] * sizeof(float));
										continue;
									}
									const float *row = xc + (i0 * g->in[1] + i1) * g->in[2];
									if (lo > 0)
										memset(p, 0, (size_t)lo * sizeof(float));
									if (g->st[2] == 1) {
										if (hi > lo)
											memcpy(p + lo, row + lo + off2, (size_t)(hi - lo) * sizeof(float));
									} else {
										for (int64_t o2 = lo; o2 < hi; o2++)
											p[o2] = row[o2 * g->st[2] + off2];
									}
									if (hi < g->out[2])
										memset(p + hi, 0, (size_t)(g->out[2] - hi) * sizeof(float));
								}
							}
				float *yb = yo + (size_t)(r0 * g->out[2]);
				vpa_sgemm(0, 0, mg, ncol, cg * kk, 1.0f, wg, cg * kk, col, ncol, 0.0f, yb, osz);
				for (size_t m = 0; m < mg; m++)
					ox_conv_finish(e, gi * mg + m, yb + m * osz, ncol);
			}
		}
	ox_scratch_put(col, col_bytes);
}

int ox_conv_wino_ok(const struct ox_conv *cv)
{
	const struct ox_geom *g = &cv->g;
	return g->ns >= 2 && g->in[0] == 1 && g->k[0] == 1 && g->out[0] == 1 && g->pb[0] == 0 &&
	       g->k[1] == 3 && g->k[2] == 3 &&
	       g->st[1] == 1 && g->st[2] == 1 && g->dil[1] == 1 && g->dil[2] == 1 &&
	       g->out[1] > 0 && g->out[2] > 0;
}

static pthread_once_t force_once = PTHREAD_ONCE_INIT;
static int force_method; /* 0: by shape */

static void force_init(void)
{
	const char *s = getenv("VPA_ONNX_CONV");
	if (!s)
		return;
	if (!strcmp(s, "im2col"))
		force_method = OX_CONV_IM2COL;
	else if (!strcmp(s, "winograd2"))
		force_method = OX_CONV_WINO2;
	else if (!strcmp(s, "winograd4"))
		force_method = OX_CONV_WINO4;
}

void ox_conv_force(int method)
{
	pthread_once(&force_once, force_init);
	force_method = method;
}

int ox_conv_method(const struct ox_conv *cv)
{
	pthread_once(&force_once, force_init);
	if (!ox_conv_wino_ok(cv))
		return OX_CONV_IM2COL;
	if (force_method)
		return force_method;
	size_t cg = cv->C / cv->grp, mg = cv->M / cv->grp;
	int64_t ho = cv->g.out[1], wo = cv->g.out[2];
	/* Measured on the ResNet shapes (onnx/README.md): the transforms cost
	 * about as much as a GEMM with a handful of channels, so Winograd pays
	 * from 16 channels in and out per group; F(4x4) needs output tiles that
	 * are mostly inside the output. */
	if (cg < 16 || mg < 16 || ho < 4 || wo < 4)
		return OX_CONV_IM2COL;
	return ho >= 8 && wo >= 8 ? OX_CONV_WINO4 : OX_CONV_WINO2;
}

void ox_conv_run(const struct ox_conv *cv, const float *x, const float *w,
		 const struct ox_conv_epi *e, float *y)
{
	int m = ox_conv_method(cv);
	if (m == OX_CONV_IM2COL)
		ox_conv_im2col(cv, x, w, e, y);
	else
		ox_conv_wino(cv, m, x, w, e, y);
}
