/*
 * onnx/ops_nn.c - Conv (checks and geometry; the kernels are in onnx/conv.c
 * and onnx/conv_wino.c) and ConvTranspose (1-D, 2-D, 3-D; col2im and SGEMM
 * per group), MatMul and Gemm (SGEMM), BatchNormalization,
 * InstanceNormalization, LayerNormalization, MaxPool, AveragePool,
 * GlobalAveragePool, GlobalMaxPool.  float32 only.
 *
 * Spatial operators work on up to three spatial axes: a 1-D or 2-D input is
 * viewed as 3-D with leading axes of size 1 (kernel 1, stride 1, no pad).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/la.h"
#include "onnx/conv.h"
#include "onnx/internal.h"

static int need_f32(struct ox_ctx *c, const struct vpa_onnx_tensor *t, const char *what)
{
	if (t->dtype != VPA_ONNX_FLOAT)
		return ox_fail(c, "input type %s is not supported (%s: float32 only)",
			       vpa_onnx_dtype_name(t->dtype), what);
	return 0;
}

/* ------------------------------------------------------------ geometry */

static int check_auto_pad(const char *file, const struct ox_node *n, int64_t opset,
			  struct vpa_err *err)
{
	const char *ap = ox_attr_s(n, "auto_pad", "NOTSET");
	if (strcmp(ap, "NOTSET") && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER") &&
	    strcmp(ap, "VALID"))
		return ox_check_fail(file, n, opset, err,
				     "auto_pad '%s' is not supported (NOTSET, SAME_UPPER, "
				     "SAME_LOWER, VALID)", ap);
	if (!strcmp(n->op_type, "MaxPool") && ox_attr_i(n, "storage_order", 0) != 0)
		return ox_check_fail(file, n, opset, err,
				     "storage_order 1 (column-major indices) is not supported");
	if (!strcmp(n->op_type, "BatchNormalization") && ox_attr_i(n, "training_mode", 0) != 0)
		return ox_check_fail(file, n, opset, err,
				     "training_mode 1 is not supported (inference only)");
	if (!strcmp(n->op_type, "BatchNormalization") && n->n_out > 1)
		return ox_check_fail(file, n, opset, err,
				     "the running mean/var outputs exist only in training mode");
	return 0;
}

/*
 * Output geometry of a sliding window over x's spatial axes.  kernel: the
 * kernel's spatial sizes; ceil: ceil_mode of pooling.
 */
static int geometry(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor *x,
		    const int64_t *kernel, int ceil, struct ox_geom *g)
{
	if (x->ndim < 3 || x->ndim > 5)
		return ox_fail(c, "input must have 1 to 3 spatial axes (rank 3 to 5), not rank %zu",
			       x->ndim);
	size_t ns = x->ndim - 2, na;
	const int64_t *a;
	g->ns = ns;
	for (int i = 0; i < 3; i++) {
		g->in[i] = g->k[i] = g->out[i] = g->st[i] = g->dil[i] = 1;
		g->pb[i] = g->pe[i] = 0;
	}
	size_t o = 3 - ns;
	for (size_t i = 0; i < ns; i++) {
		g->in[o + i] = x->dims[2 + i];
		g->k[o + i] = kernel[i];
		if (kernel[i] < 1)
			return ox_fail(c, "kernel size %lld", (long long)kernel[i]);
	}
	if ((a = ox_attr_ints(n, "strides", &na))) {
		if (na != ns)
			return ox_fail(c, "'strides' has %zu values for %zu spatial axes", na, ns);
		for (size_t i = 0; i < ns; i++)
			if ((g->st[o + i] = a[i]) < 1)
				return ox_fail(c, "stride %lld", (long long)a[i]);
	}
	if ((a = ox_attr_ints(n, "dilations", &na))) {
		if (na != ns)
			return ox_fail(c, "'dilations' has %zu values for %zu spatial axes", na, ns);
		for (size_t i = 0; i < ns; i++)
			if ((g->dil[o + i] = a[i]) < 1)
				return ox_fail(c, "dilation %lld", (long long)a[i]);
	}
	const char *ap = ox_attr_s(n, "auto_pad", "NOTSET");
	if ((a = ox_attr_ints(n, "pads", &na))) {
		if (na != 2 * ns)
			return ox_fail(c, "'pads' has %zu values for %zu spatial axes", na, ns);
		if (strcmp(ap, "NOTSET"))
			return ox_fail(c, "'pads' given with auto_pad '%s'", ap);
		for (size_t i = 0; i < ns; i++) {
			g->pb[o + i] = a[i];
			g->pe[o + i] = a[i + ns];
			if (a[i] < 0 || a[i + ns] < 0)
				return ox_fail(c, "negative pads");
		}
	}
	for (size_t i = o; i < 3; i++) {
		int64_t ek = g->dil[i] * (g->k[i] - 1) + 1;
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			int64_t out = (g->in[i] + g->st[i] - 1) / g->st[i];
			int64_t tot = (out - 1) * g->st[i] + ek - g->in[i];
			tot = tot < 0 ? 0 : tot;
			g->pb[i] = !strcmp(ap, "SAME_UPPER") ? tot / 2 : tot - tot / 2;
			g->pe[i] = tot - g->pb[i];
			g->out[i] = out;
			continue;
		}
		int64_t span = g->in[i] + g->pb[i] + g->pe[i] - ek;
		if (span < 0)
			return ox_fail(c, "the kernel (%lld with dilation) is larger than the padded "
				       "input (%lld)", (long long)ek,
				       (long long)(g->in[i] + g->pb[i] + g->pe[i]));
		g->out[i] = (ceil ? (span + g->st[i] - 1) / g->st[i] : span / g->st[i]) + 1;
		/* The last window must start inside the input or the begin pad. */
		if (ceil && (g->out[i] - 1) * g->st[i] >= g->in[i] + g->pb[i])
			g->out[i]--;
	}
	return 0;
}

/* ------------------------------------------------------------ Conv */

static int run_conv(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		    struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0], *w = in[1], *b = n->n_in > 2 ? in[2] : NULL;
	if (need_f32(c, x, "X") || need_f32(c, w, "W") || (b && need_f32(c, b, "B")))
		return VPA_EINPUT;
	if (w->ndim != x->ndim)
		return ox_fail(c, "W has rank %zu, X rank %zu", w->ndim, x->ndim);
	int64_t grp = ox_attr_i(n, "group", 1);
	int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0];
	if (grp < 1 || C % grp || M % grp || w->dims[1] != C / grp)
		return ox_fail(c, "W of %lld x %lld channels does not fit %lld input channels in %lld "
			       "groups", (long long)M, (long long)w->dims[1], (long long)C,
			       (long long)grp);
	size_t nk;
	const int64_t *ks = ox_attr_ints(n, "kernel_shape", &nk);
	if (ks && (nk != x->ndim - 2 || memcmp(ks, w->dims + 2, nk * sizeof(int64_t))))
		return ox_fail(c, "'kernel_shape' does not match W");
	struct ox_geom g;
	if (geometry(c, n, x, w->dims + 2, 0, &g))
		return VPA_EINPUT;
	if (b && (b->ndim != 1 || b->dims[0] != M))
		return ox_fail(c, "B must have %lld values", (long long)M);
	int64_t od[VPA_ONNX_MAX_DIMS] = {N, M};
	for (size_t i = 0; i < g.ns; i++)
		od[2 + i] = g.out[3 - g.ns + i];
	ox_alloc_raw(&out[0], VPA_ONNX_FLOAT, x->ndim, od); /* every element is written */
	struct ox_conv cv = {(size_t)N, (size_t)C, (size_t)M, (size_t)grp, g, NULL, 0};
	if (n->in[1] >= 0 && c->m->values[n->in[1]].kind == OX_V_INIT) {
		/* a constant of the model: its Winograd transform is kept on the model */
		cv.wc = c->m->wino;
		cv.wid = (size_t)n->in[1];
	}
	struct ox_conv_epi e = {b ? b->data : NULL, n->epi}; /* bias and a fused activation (onnx/fuse.c) */
	ox_conv_run(&cv, x->data, w->data, &e, out[0].data);
	return 0;
}

/*
 * ConvTranspose: per group, col = W_g^T X_g (SGEMM), then col2im scatters
 * col into the (possibly padded) output.
 */
static int check_convtranspose(const char *file, const struct ox_node *n, int64_t opset,
			       struct vpa_err *err)
{
	int rc = check_auto_pad(file, n, opset, err);
	if (rc)
		return rc;
	if (ox_attr(n, "output_shape") && ox_attr(n, "pads"))
		return ox_check_fail(file, n, opset, err, "both 'output_shape' and 'pads' given");
	return 0;
}

static int run_convtranspose(struct ox_ctx *c, const struct ox_node *n,
			     const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0], *w = in[1], *b = n->n_in > 2 ? in[2] : NULL;
	if (need_f32(c, x, "X") || need_f32(c, w, "W") || (b && need_f32(c, b, "B")))
		return VPA_EINPUT;
	if (w->ndim != x->ndim || x->ndim < 3 || x->ndim > 5)
		return ox_fail(c, "X and W must have the same rank, 3 to 5");
	int64_t grp = ox_attr_i(n, "group", 1);
	int64_t N = x->dims[0], C = x->dims[1];
	if (grp < 1 || C % grp || w->dims[0] != C)
		return ox_fail(c, "W's first axis must be the %lld input channels", (long long)C);
	int64_t mg = w->dims[1], M = mg * grp;
	if (b && (b->ndim != 1 || b->dims[0] != M))
		return ox_fail(c, "B must have %lld values", (long long)M);
	size_t ns = x->ndim - 2, o = 3 - ns, na;
	int64_t in3[3] = {1, 1, 1}, k[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dil[3] = {1, 1, 1},
		pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0}, op[3] = {0, 0, 0}, out3[3] = {1, 1, 1};
	const int64_t *a;
	for (size_t i = 0; i < ns; i++) {
		in3[o + i] = x->dims[2 + i];
		k[o + i] = w->dims[2 + i];
	}
	if ((a = ox_attr_ints(n, "kernel_shape", &na)) &&
	    (na != ns || memcmp(a, w->dims + 2, ns * sizeof(int64_t))))
		return ox_fail(c, "'kernel_shape' does not match W");
#define GETV(nm, arr, cnt, lo)                                                              \
	if ((a = ox_attr_ints(n, nm, &na))) {                                               \
		if (na != (cnt))                                                            \
			return ox_fail(c, "'%s' has %zu values", nm, na);                  \
		for (size_t i = 0; i < (cnt); i++)                                          \
			if (a[i] < (lo))                                                    \
				return ox_fail(c, "bad value in '%s'", nm);                 \
	}
	GETV("strides", st, ns, 1)
	if (a) for (size_t i = 0; i < ns; i++) st[o + i] = a[i];
	GETV("dilations", dil, ns, 1)
	if (a) for (size_t i = 0; i < ns; i++) dil[o + i] = a[i];
	GETV("output_padding", op, ns, 0)
	if (a) for (size_t i = 0; i < ns; i++) op[o + i] = a[i];
	GETV("pads", pb, 2 * ns, 0)
	if (a) for (size_t i = 0; i < ns; i++) { pb[o + i] = a[i]; pe[o + i] = a[ns + i]; }
#undef GETV
	const char *ap = ox_attr_s(n, "auto_pad", "NOTSET");
	const int64_t *os = ox_attr_ints(n, "output_shape", &na);
	if (os && na != ns && na != ns + 2)
		return ox_fail(c, "'output_shape' has %zu values", na);
	if (os && na == ns + 2)
		os += 2;
	for (size_t i = o; i < 3; i++) {
		int64_t full = st[i] * (in3[i] - 1) + op[i] + (k[i] - 1) * dil[i] + 1;
		if (os || !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			int64_t want = os ? os[i - o] : in3[i] * st[i];
			if (want < 0)
				return ox_fail(c, "negative output_shape");
			/* As onnxruntime: an output_shape beyond the full output pads its end with
			 * zeros (bias only), the pads never negative. */
			int64_t tot = full - want;
			tot = tot < 0 ? 0 : tot;
			/* onnx: SAME_UPPER puts the extra pad at the end */
			if (!strcmp(ap, "SAME_UPPER")) {
				pb[i] = tot / 2;
				pe[i] = tot - tot / 2;
			} else {
				pe[i] = tot / 2;
				pb[i] = tot - tot / 2;
			}
		}
		out3[i] = os ? os[i - o] : full - pb[i] - pe[i];
		if (out3[i] < 0)
			return ox_fail(c, "pads larger than the output");
	}
	int64_t od[VPA_ONNX_MAX_DIMS] = {N, M};
	for (size_t i = 0; i < ns; i++)
		od[2 + i] = out3[o + i];
	ox_alloc(&out[0], VPA_ONNX_FLOAT, x->ndim, od);
	size_t cg = (size_t)(C / grp), kk = (size_t)(k[0] * k[1] * k[2]);
	size_t isz = (size_t)(in3[0] * in3[1] * in3[2]), osz = (size_t)(out3[0] * out3[1] * out3[2]);
	float *col = xmalloc(xmul(xmul((size_t)mg, kk), isz ? isz : 1) * sizeof(float));
	const float *X = x->data, *W = w->data;
	float *Y = out[0].data;
	for (int64_t nb = 0; nb < N; nb++)
		for (int64_t gi = 0; gi < grp; gi++) {
			/* col (mg*kk, isz) = W_g^T (mg*kk, cg) x X_g (cg, isz) */
			const float *wg = W + (size_t)gi * cg * (size_t)mg * kk;
			const float *xg = X + ((size_t)nb * (size_t)C + (size_t)gi * cg) * isz;
			vpa_sgemm(1, 0, (size_t)mg * kk, isz, cg, 1.0f, wg, (size_t)mg * kk, xg, isz,
				  0.0f, col, isz);
			float *yg = Y + ((size_t)nb * (size_t)M + (size_t)gi * (size_t)mg) * osz;
			const float *p = col;
			for (int64_t m = 0; m < mg; m++)
				for (int64_t a0 = 0; a0 < k[0]; a0++)
					for (int64_t a1 = 0; a1 < k[1]; a1++)
						for (int64_t a2 = 0; a2 < k[2]; a2++)
							for (int64_t i0 = 0; i0 < in3[0]; i0++) {
								int64_t y0 = i0 * st[0] - pb[0] + a0 * dil[0];
								for (int64_t i1 = 0; i1 < in3[1]; i1++) {
									int64_t y1 = i1 * st[1] - pb[1] + a1 * dil[1];
									for (int64_t i2 = 0; i2 < in3[2]; i2++, p++) {
										int64_t y2 = i2 * st[2] - pb[2] + a2 * dil[2];
										if (y0 < 0 || y0 >= out3[0] || y1 < 0 ||
										    y1 >= out3[1] || y2 < 0 || y2 >= out3[2])
											continue;
										yg[(size_t)m * osz + (size_t)((y0 * out3[1] + y1) * out3[2] + y2)] += *p;
									}
								}
							}
			if (b)
				for (int64_t m = 0; m < mg; m++) {
					float bv = ((const float *)b->data)[gi * mg + m];
					for (size_t j = 0; j < osz; j++)
						yg[(size_t)m * osz + j] += bv;
				}
		}
	free(col);
	return 0;
}

/* ------------------------------------------------------------ MatMul, Gemm */

static int run_matmul(struct ox_ctx *c, const struct ox_node *n,
		      const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	(void)n;
	const struct vpa_onnx_tensor *A = in[0], *B = in[1];
	if (need_f32(c, A, "A") || need_f32(c, B, "B"))
		return VPA_EINPUT;
	if (A->ndim == 0 || B->ndim == 0)
		return ox_fail(c, "inputs must have rank >= 1");
	/* numpy: 1-D A is (1, k) and 1-D B is (k, 1), the added axis dropped after. */
	int64_t ad[VPA_ONNX_MAX_DIMS + 1], bd[VPA_ONNX_MAX_DIMS + 1];
	size_t na = A->ndim, nb = B->ndim;
	if (na == 1) {
		ad[0] = 1, ad[1] = A->dims[0], na = 2;
	} else {
		memcpy(ad, A->dims, na * sizeof(int64_t));
	}
	if (nb == 1) {
		bd[0] = B->dims[0], bd[1] = 1, nb = 2;
	} else {
		memcpy(bd, B->dims, nb * sizeof(int64_t));
	}
	int64_t m = ad[na - 2], k = ad[na - 1], k2 = bd[nb - 2], nn = bd[nb - 1];
	if (k != k2)
		return ox_fail(c, "inner dimensions differ (%lld and %lld)", (long long)k, (long long)k2);
	size_t nbat;
	int64_t bat[VPA_ONNX_MAX_DIMS];
	if (ox_broadcast(c, na - 2, ad, nb - 2, bd, &nbat, bat))
		return VPA_EINPUT;
	int64_t od[VPA_ONNX_MAX_DIMS + 2];
	size_t nd = 0;
	for (size_t i = 0; i < nbat; i++)
		od[nd++] = bat[i];
	if (A->ndim > 1)
		od[nd++] = m;
	if (B->ndim > 1)
		od[nd++] = nn;
	if (nd > VPA_ONNX_MAX_DIMS)
		return ox_fail(c, "result rank above %d", VPA_ONNX_MAX_DIMS);
	ox_alloc(&out[0], VPA_ONNX_FLOAT, nd, od);
	size_t nbatch = 1;
	for (size_t i = 0; i < nbat; i++)
		nbatch *= (size_t)bat[i];
	const float *a = A->data, *b = B->data;
	float *y = out[0].data;
	size_t sm = (size_t)m, sk = (size_t)k, sn = (size_t)nn;
	if (nb == 2) {
		/* B shared by every batch: one SGEMM over all rows of A. */
		size_t rows = 1;
		for (size_t i = 0; i < na - 2; i++)
			rows *= (size_t)ad[i];
		if (rows == nbatch) {
			vpa_sgemm(0, 0, rows * sm, sn, sk, 1.0f, a, sk, b, sn, 0.0f, y, sn);
			return 0;
		}
	}
	int64_t sa[VPA_ONNX_MAX_DIMS], sb[VPA_ONNX_MAX_DIMS], idx[VPA_ONNX_MAX_DIMS] = {0};
	/* batch strides (in matrices) with broadcasting */
	for (size_t i = nbat, s1 = 1, s2 = 1; i-- > 0;) {
		size_t oa = nbat - (na - 2), ob = nbat - (nb - 2);
		int64_t da = i < oa ? 1 : ad[i - oa], db = i < ob ? 1 : bd[i - ob];
		sa[i] = da == 1 ? 0 : (int64_t)s1;
		sb[i] = db == 1 ? 0 : (int64_t)s2;
		s1 *= (size_t)da;
		s2 *= (size_t)db;
	}
	for (size_t t = 0; t < nbatch; t++) {
		size_t ia = 0, ib = 0;
		for (size_t i = 0; i < nbat; i++) {
			ia += (size_t)(idx[i] * sa[i]);
			ib += (size_t)(idx[i] * sb[i]);
		}
		vpa_sgemm(0, 0, sm, sn, sk, 1.0f, a + ia * sm * sk, sk, b + ib * sk * sn, sn, 0.0f,
			  y + t * sm * sn, sn);
		for (size_t i = nbat; i-- > 0;) {
			if (++idx[i] < bat[i])
				break;
			idx[i] = 0;
		}
	}
	return 0;
}

static int run_gemm(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		    struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *A = in[0], *B = in[1], *C = n->n_in > 2 ? in[2] : NULL;
	if (need_f32(c, A, "A") || need_f32(c, B, "B") || (C && need_f32(c, C, "C")))
		return VPA_EINPUT;
	if (A->ndim != 2 || B->ndim != 2)
		return ox_fail(c, "A and B must be 2-D");
	int ta = ox_attr_i(n, "transA", 0) != 0, tb = ox_attr_i(n, "transB", 0) != 0;
	float alpha = ox_attr_f(n, "alpha", 1.0f), beta = ox_attr_f(n, "beta", 1.0f);
	int64_t M = ta ? A->dims[1] : A->dims[0], K = ta ? A->dims[0] : A->dims[1];
	int64_t K2 = tb ? B->dims[1] : B->dims[0], N = tb ? B->dims[0] : B->dims[1];
	if (K != K2)
		return ox_fail(c, "inner dimensions differ (%lld and %lld)", (long long)K, (long long)K2);
	int64_t od[2] = {M, N};
	ox_alloc(&out[0], VPA_ONNX_FLOAT, 2, od);
	float *y = out[0].data;
	if (C && beta != 0.0f) {
		/* Unidirectional broadcast of C to (M, N). */
		size_t nd;
		int64_t bd[VPA_ONNX_MAX_DIMS];
		if (C->ndim > 2 || ox_broadcast(c, C->ndim, C->dims, 2, od, &nd, bd) || bd[0] != M ||
		    bd[1] != N)
			return ox_fail(c, "C does not broadcast to (%lld, %lld)", (long long)M,
				       (long long)N);
		int64_t r = C->ndim == 2 ? C->dims[0] : 1, cl = C->ndim >= 1 ? C->dims[C->ndim - 1] : 1;
		const float *cd = C->data;
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++)
				y[i * N + j] = beta * cd[(r == 1 ? 0 : i) * cl + (cl == 1 ? 0 : j)];
	}
	vpa_sgemm(ta, tb, (size_t)M, (size_t)N, (size_t)K, alpha, A->data, (size_t)A->dims[1],
		  B->data, (size_t)B->dims[1], C && beta != 0.0f ? 1.0f : 0.0f, y, (size_t)N);
	return 0;
}

/* ------------------------------------------------------------ normalisation */

/*
 * Mean and variance of n floats in double (the normalisations' statistics):
 * 8 partial sums so that gcc -O2 vectorises the loops (one chain of
 * dependent double additions ran at a few hundred MB/s: InstanceNormalization
 * over wav2vec2's first feature layer, 512 rows of 16,000 and more, took
 * 3% of a run); the partial sums are added in a fixed order, so the result
 * does not depend on anything but x.
 */
static void norm_stats(const float *restrict x, size_t n, double *mean, double *var)
{
	double p[8] = {0, 0, 0, 0, 0, 0, 0, 0}, mu = 0, v = 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		for (size_t k = 0; k < 8; k++)
			p[k] += x[i + k];
	for (size_t k = 0; k < 8; k++)
		mu += p[k];
	for (; i < n; i++)
		mu += x[i];
	mu /= (double)n;
	for (size_t k = 0; k < 8; k++)
		p[k] = 0;
	for (i = 0; i + 8 <= n; i += 8)
		for (size_t k = 0; k < 8; k++) {
			double d = x[i + k] - mu;
			p[k] += d * d;
		}
	for (size_t k = 0; k < 8; k++)
		v += p[k];
	for (; i < n; i++)
		v += (x[i] - mu) * (x[i] - mu);
	*mean = mu;
	*var = v / (double)n;
}

/* y = (x - mu) sc s + b in double, rounded once to float; s, b per element
 * (NULL: 1 and b0).  Without `%` in the loop so that it vectorises. */
static void norm_apply(const float *restrict x, const float *restrict s, const float *restrict b,
		       float *restrict y, size_t n, double mu, double sc, double b0)
{
	if (s && b) {
		for (size_t j = 0; j < n; j++)
			y[j] = (float)((x[j] - mu) * sc * s[j] + b[j]);
	} else if (s) {
		for (size_t j = 0; j < n; j++)
			y[j] = (float)((x[j] - mu) * sc * s[j]);
	} else {
		for (size_t j = 0; j < n; j++)
			y[j] = (float)((x[j] - mu) * sc + b0);
	}
}

/* y = x sc + sh, restrict and blocks of 8 so that gcc -O2 vectorises it. */
static void scale_shift(const float *restrict x, float *restrict y, size_t n, float sc, float sh)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		for (size_t k = 0; k < 8; k++)
			y[i + k] = x[i + k] * sc + sh;
	for (; i < n; i++)
		y[i] = x[i] * sc + sh;
}

static int run_batchnorm(struct ox_ctx *c, const struct ox_node *n,
			 const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0];
	for (int i = 0; i < 5; i++)
		if (need_f32(c, in[i], "every input"))
			return VPA_EINPUT;
	if (x->ndim < 2)
		return ox_fail(c, "X must have rank >= 2");
	int64_t C = x->dims[1];
	for (int i = 1; i < 5; i++)
		if (in[i]->ndim != 1 || in[i]->dims[0] != C)
			return ox_fail(c, "scale, B, mean and var must have %lld values", (long long)C);
	float eps = ox_attr_f(n, "epsilon", 1e-5f);
	ox_alloc_raw(&out[0], VPA_ONNX_FLOAT, x->ndim, x->dims); /* every element is written */
	size_t inner = 1;
	for (size_t i = 2; i < x->ndim; i++)
		inner *= (size_t)x->dims[i];
	const float *X = x->data, *s = in[1]->data, *bb = in[2]->data, *mu = in[3]->data,
		    *var = in[4]->data;
	float *Y = out[0].data;
	for (int64_t nb = 0; nb < x->dims[0]; nb++)
		for (int64_t ch = 0; ch < C; ch++) {
			float sc = s[ch] / sqrtf(var[ch] + eps), sh = bb[ch] - mu[ch] * sc;
			size_t base = ((size_t)nb * (size_t)C + (size_t)ch) * inner;
			scale_shift(X + base, Y + base, inner, sc, sh);
		}
	return 0;
}

static int run_instancenorm(struct ox_ctx *c, const struct ox_node *n,
			    const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0];
	for (int i = 0; i < 3; i++)
		if (need_f32(c, in[i], "every input"))
			return VPA_EINPUT;
	if (x->ndim < 3)
		return ox_fail(c, "X must have rank >= 3");
	int64_t C = x->dims[1];
	if (in[1]->ndim != 1 || in[1]->dims[0] != C || in[2]->ndim != 1 || in[2]->dims[0] != C)
		return ox_fail(c, "scale and B must have %lld values", (long long)C);
	double eps = ox_attr_f(n, "epsilon", 1e-5f);
	ox_alloc_raw(&out[0], VPA_ONNX_FLOAT, x->ndim, x->dims); /* every element is written */
	size_t inner = 1;
	for (size_t i = 2; i < x->ndim; i++)
		inner *= (size_t)x->dims[i];
	const float *X = x->data, *s = in[1]->data, *bb = in[2]->data;
	float *Y = out[0].data;
	for (int64_t r = 0; r < x->dims[0] * C; r++) {
		const float *xr = X + (size_t)r * inner;
		double mu, v;
		norm_stats(xr, inner, &mu, &v);
		double sc = s[r % C] / sqrt(v + eps);
		norm_apply(xr, NULL, NULL, Y + (size_t)r * inner, inner, mu, sc, bb[r % C]);
	}
	return 0;
}

static int check_layernorm(const char *file, const struct ox_node *n, int64_t opset,
			   struct vpa_err *err)
{
	if (opset < 17)
		return ox_check_fail(file, n, opset, err, "LayerNormalization needs opset 17");
	if (ox_attr_i(n, "stash_type", 1) != 1)
		return ox_check_fail(file, n, opset, err,
				     "stash_type %lld is not supported (1: float)",
				     (long long)ox_attr_i(n, "stash_type", 1));
	return 0;
}

static int run_layernorm(struct ox_ctx *c, const struct ox_node *n,
			 const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0], *s = in[1], *b = n->n_in > 2 ? in[2] : NULL;
	if (need_f32(c, x, "X") || need_f32(c, s, "Scale") || (b && need_f32(c, b, "B")))
		return VPA_EINPUT;
	int ax = ox_axis(c, ox_attr_i(n, "axis", -1), x->ndim);
	if (ax < 0)
		return VPA_EINPUT;
	double eps = ox_attr_f(n, "epsilon", 1e-5f);
	size_t outer = 1, inner = 1;
	for (size_t i = 0; i < x->ndim; i++)
		if ((int)i < ax)
			outer *= (size_t)x->dims[i];
		else
			inner *= (size_t)x->dims[i];
	/* Scale and B broadcast to X.shape[axis:] (from the right). */
	int64_t tail[VPA_ONNX_MAX_DIMS], bd[VPA_ONNX_MAX_DIMS];
	size_t nt = x->ndim - (size_t)ax, nd;
	memcpy(tail, x->dims + ax, nt * sizeof(int64_t));
	const struct vpa_onnx_tensor *sb[2] = {s, b};
	for (int t = 0; t < 2; t++) {
		if (!sb[t])
			continue;
		if (sb[t]->ndim > nt || ox_broadcast(c, sb[t]->ndim, sb[t]->dims, nt, tail, &nd, bd) ||
		    memcmp(bd, tail, nt * sizeof(int64_t)))
			return ox_fail(c, "%s does not broadcast to the normalised shape",
				       t ? "B" : "Scale");
	}
	ox_alloc_raw(&out[0], VPA_ONNX_FLOAT, x->ndim, x->dims); /* every element is written */
	int64_t md[VPA_ONNX_MAX_DIMS];
	for (size_t i = 0; i < x->ndim; i++)
		md[i] = (int)i < ax ? x->dims[i] : 1;
	for (size_t o = 1; o < n->n_out && o < 3; o++)
		if (n->out[o] >= 0)
			ox_alloc(&out[o], VPA_ONNX_FLOAT, x->ndim, md);
	size_t ns = vpa_onnx_numel(s), nbias = b ? vpa_onnx_numel(b) : 0;
	const float *X = x->data, *S = s->data, *B = b ? b->data : NULL;
	float *Y = out[0].data;
	/* Scale and B as whole rows of the normalised shape (the usual case: one
	 * value per element) or repeated into one (a broadcast from the right). */
	float *srow = NULL, *brow = NULL;
	if (ns != inner) {
		srow = xmalloc(inner * sizeof(float));
		for (size_t j = 0; j < inner; j++)
			srow[j] = S[j % ns];
	}
	if (B && nbias != inner) {
		brow = xmalloc(inner * sizeof(float));
		for (size_t j = 0; j < inner; j++)
			brow[j] = B[j % nbias];
	}
	const float *Sr = srow ? srow : S, *Br = B ? (brow ? brow : B) : NULL;
	for (size_t r = 0; r < outer; r++) {
		const float *xr = X + r * inner;
		/* float accumulation as the reference (stash_type float) does, in double here */
		double mu, v;
		norm_stats(xr, inner, &mu, &v);
		double is = 1.0 / sqrt(v + eps);
		norm_apply(xr, Sr, Br, Y + r * inner, inner, mu, is, 0);
		if (out[1].data)
			((float *)out[1].data)[r] = (float)mu;
		if (out[2].data)
			((float *)out[2].data)[r] = (float)is;
	}
	free(srow);
	free(brow);
	return 0;
}

/* ------------------------------------------------------------ pooling */

static int run_pool(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		    struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0];
	int is_max = !strcmp(n->op_type, "MaxPool");
	if (need_f32(c, x, "X"))
		return VPA_EINPUT;
	size_t nk;
	const int64_t *ks = ox_attr_ints(n, "kernel_shape", &nk);
	if (!ks || nk + 2 != x->ndim)
		return ox_fail(c, "'kernel_shape' must have one value per spatial axis");
	struct ox_geom g;
	if (geometry(c, n, x, ks, ox_attr_i(n, "ceil_mode", 0) != 0, &g))
		return VPA_EINPUT;
	int incl = ox_attr_i(n, "count_include_pad", 0) != 0;
	int64_t od[VPA_ONNX_MAX_DIMS] = {x->dims[0], x->dims[1]};
	for (size_t i = 0; i < g.ns; i++)
		od[2 + i] = g.out[3 - g.ns + i];
	ox_alloc(&out[0], VPA_ONNX_FLOAT, x->ndim, od);
	int64_t *ind = NULL;
	if (n->n_out > 1 && n->out[1] >= 0) {
		ox_alloc(&out[1], VPA_ONNX_INT64, x->ndim, od);
		ind = out[1].data;
	}
	size_t isz = (size_t)(g.in[0] * g.in[1] * g.in[2]);
	size_t osz = (size_t)(g.out[0] * g.out[1] * g.out[2]);
	const float *X = x->data;
	float *Y = out[0].data;
	for (int64_t r = 0; r < x->dims[0] * x->dims[1]; r++) {
		const float *xr = X + (size_t)r * isz;
		size_t yo = (size_t)r * osz;
		for (int64_t o0 = 0; o0 < g.out[0]; o0++)
			for (int64_t o1 = 0; o1 < g.out[1]; o1++)
				for (int64_t o2 = 0; o2 < g.out[2]; o2++, yo++) {
					double acc = is_max ? -INFINITY : 0;
					int64_t cnt = 0, best = -1, cnt_pad = 1;
					int64_t oo[3] = {o0, o1, o2};
					for (int d = 0; d < 3; d++) {
						/* window extent clipped to the padded input */
						int64_t s = oo[d] * g.st[d] - g.pb[d];
						int64_t e = s + (g.k[d] - 1) * g.dil[d] + 1;
						int64_t lim = g.in[d] + g.pe[d];
						e = e > lim ? lim : e;
						cnt_pad *= (e - s + g.dil[d] - 1) / g.dil[d];
					}
					for (int64_t a = 0; a < g.k[0]; a++) {
						int64_t i0 = o0 * g.st[0] - g.pb[0] + a * g.dil[0];
						if (i0 < 0 || i0 >= g.in[0])
							continue;
						for (int64_t bb = 0; bb < g.k[1]; bb++) {
							int64_t i1 = o1 * g.st[1] - g.pb[1] + bb * g.dil[1];
							if (i1 < 0 || i1 >= g.in[1])
								continue;
							for (int64_t cc = 0; cc < g.k[2]; cc++) {
								int64_t i2 = o2 * g.st[2] - g.pb[2] + cc * g.dil[2];
								if (i2 < 0 || i2 >= g.in[2])
									continue;
								int64_t off = (i0 * g.in[1] + i1) * g.in[2] + i2;
								float v = xr[off];
								if (is_max) {
									if (v > acc || best < 0) {
										acc = v;
										best = off;
									}
								} else {
									acc += v;
								}
								cnt++;
							}
						}
					}
					if (is_max) {
						Y[yo] = (float)acc;
						if (ind)
							ind[yo] = best < 0 ? 0 : (int64_t)((size_t)r * isz) + best;
					} else {
						int64_t dv = incl ? cnt_pad : cnt;
						Y[yo] = dv > 0 ? (float)(acc / (double)dv) : 0.0f;
					}
				}
	}
	return 0;
}

static int run_global_pool(struct ox_ctx *c, const struct ox_node *n,
			   const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0];
	if (need_f32(c, x, "X"))
		return VPA_EINPUT;
	if (x->ndim < 2)
		return ox_fail(c, "X must have rank >= 2");
	int is_max = !strcmp(n->op_type, "GlobalMaxPool");
	int64_t od[VPA_ONNX_MAX_DIMS];
	size_t inner = 1;
	for (size_t i = 0; i < x->ndim; i++) {
		od[i] = i < 2 ? x->dims[i] : 1;
		if (i >= 2)
			inner *= (size_t)x->dims[i];
	}
	ox_alloc(&out[0], VPA_ONNX_FLOAT, x->ndim, od);
	const float *X = x->data;
	for (int64_t r = 0; r < x->dims[0] * x->dims[1]; r++) {
		double acc = is_max ? -INFINITY : 0;
		for (size_t j = 0; j < inner; j++) {
			float v = X[(size_t)r * inner + j];
			acc = is_max ? (v > acc ? v : acc) : acc + v;
		}
		((float *)out[0].data)[r] = (float)(is_max ? acc : acc / (double)inner);
	}
	return 0;
}

static const char *const a_none[] = {NULL};
static const char *const a_conv[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads",
				     "strides", NULL};
static const char *const a_convt[] = {"auto_pad", "dilations", "group", "kernel_shape",
				      "output_padding", "output_shape", "pads", "strides", NULL};
static const char *const a_gemm[] = {"alpha", "beta", "transA", "transB", NULL};
static const char *const a_bn[] = {"epsilon", "momentum", "training_mode", NULL};
static const char *const a_eps[] = {"epsilon", NULL};
static const char *const a_ln[] = {"axis", "epsilon", "stash_type", NULL};
static const char *const a_maxpool[] = {"auto_pad", "ceil_mode", "dilations", "kernel_shape",
					"pads", "storage_order", "strides", NULL};
static const char *const a_avgpool[] = {"auto_pad", "ceil_mode", "count_include_pad",
					"kernel_shape", "pads", "strides", NULL};

const struct ox_op ox_ops_nn[] = {
	{"Conv", a_conv, check_auto_pad, run_conv, 2, 3, 1, 1},
	{"ConvTranspose", a_convt, check_convtranspose, run_convtranspose, 2, 3, 1, 1},
	{"MatMul", a_none, NULL, run_matmul, 2, 2, 1, 1},
	{"Gemm", a_gemm, NULL, run_gemm, 2, 3, 1, 1},
	{"BatchNormalization", a_bn, check_auto_pad, run_batchnorm, 5, 5, 1, 3},
	{"InstanceNormalization", a_eps, NULL, run_instancenorm, 3, 3, 1, 1},
	{"LayerNormalization", a_ln, check_layernorm, run_layernorm, 2, 3, 1, 3},
	{"MaxPool", a_maxpool, check_auto_pad, run_pool, 1, 1, 1, 2},
	{"AveragePool", a_avgpool, check_auto_pad, run_pool, 1, 1, 1, 1},
	{"GlobalAveragePool", a_none, NULL, run_global_pool, 1, 1, 1, 1},
	{"GlobalMaxPool", a_none, NULL, run_global_pool, 1, 1, 1, 1},
	{NULL, NULL, NULL, NULL, 0, 0, 0, 0},
};
