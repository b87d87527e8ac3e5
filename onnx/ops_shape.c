/*
 * onnx/ops_shape.c - shapes and data movement: Constant, ConstantOfShape,
 * Shape, Size, Range, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat,
 * Split, Slice, Gather, Expand, Tile, Pad, Identity, Dropout (inference).
 *
 * Shape computations run on real int64 tensors, so the Shape -> Gather ->
 * Concat -> Reshape chains of PyTorch exports work for any input length.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/internal.h"

static int is_index(const struct vpa_onnx_tensor *t)
{
	return t->dtype == VPA_ONNX_INT64 || t->dtype == VPA_ONNX_INT32;
}

/* A 1-D (or scalar) int64/int32 tensor into v[]; at most cap values. */
static int get_ints(struct ox_ctx *c, const struct vpa_onnx_tensor *t, const char *what,
		    int64_t *v, size_t cap, size_t *n)
{
	if (!is_index(t) || t->ndim > 1)
		return ox_fail(c, "'%s' must be a 1-D int64 tensor", what);
	*n = vpa_onnx_numel(t);
	if (*n > cap)
		return ox_fail(c, "'%s' has %zu values (at most %zu)", what, *n, cap);
	for (size_t i = 0; i < *n; i++)
		v[i] = ox_geti(t, i);
	return 0;
}

/* dst[out index] = src[base + sum idx_k * strides_k] over the output shape. */
static void strided_copy(void *dst, const void *src, size_t es, size_t nd, const int64_t *dims,
			 const int64_t *strides, int64_t base)
{
	size_t total = 1;
	for (size_t i = 0; i < nd; i++)
		total *= (size_t)dims[i];
	if (total == 0)
		return;
	int64_t idx[VPA_ONNX_MAX_DIMS] = {0};
	int64_t off = base;
	char *d = dst;
	const char *s = src;
	if (nd == 0) {
		memcpy(d, s + base * (int64_t)es, es);
		return;
	}
	size_t last = nd - 1;
	size_t len = (size_t)dims[last];
	int64_t st = strides[last];
	for (size_t o = 0; o < total; o += len) {
		if (st == 1) {
			memcpy(d + o * es, s + off * (int64_t)es, len * es);
		} else if (es == 4) {
			for (size_t i = 0; i < len; i++)
				memcpy(d + (o + i) * 4, s + (off + (int64_t)i * st) * 4, 4);
		} else {
			for (size_t i = 0; i < len; i++)
				memcpy(d + (o + i) * es, s + (off + (int64_t)i * st) * (int64_t)es, es);
		}
		for (size_t k = last; k-- > 0;) {
			idx[k]++;
			off += strides[k];
			if (idx[k] < dims[k])
				break;
			off -= strides[k] * dims[k];
			idx[k] = 0;
		}
	}
}

static void contiguous_strides(size_t nd, const int64_t *dims, int64_t *s)
{
	int64_t st = 1;
	for (size_t i = nd; i-- > 0;) {
		s[i] = st;
		st *= dims[i];
	}
}

/* ------------------------------------------------------------ constants */

static int check_constant(const char *file, const struct ox_node *n, int64_t opset,
			  struct vpa_err *err)
{
	if (n->n_attr != 1)
		return ox_check_fail(file, n, opset, err,
				     "exactly one of 'value', 'value_float', 'value_floats', "
				     "'value_int', 'value_ints' is required");
	return 0;
}

static int run_constant(struct ox_ctx *c, const struct ox_node *n,
			const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	(void)in;
	const struct ox_attr *a = &n->attrs[0];
	int64_t d[1] = {0};
	if (!strcmp(a->name, "value")) {
		ox_copy(&out[0], &a->t);
	} else if (!strcmp(a->name, "value_float") && a->type == OX_A_FLOAT) {
		ox_alloc(&out[0], VPA_ONNX_FLOAT, 0, d);
		*(float *)out[0].data = a->f;
	} else if (!strcmp(a->name, "value_int") && a->type == OX_A_INT) {
		ox_alloc(&out[0], VPA_ONNX_INT64, 0, d);
		*(int64_t *)out[0].data = a->i;
	} else if (!strcmp(a->name, "value_floats") && a->type == OX_A_FLOATS) {
		d[0] = (int64_t)a->n;
		ox_alloc(&out[0], VPA_ONNX_FLOAT, 1, d);
		memcpy(out[0].data, a->floats, a->n * sizeof(float));
	} else if (!strcmp(a->name, "value_ints") && a->type == OX_A_INTS) {
		d[0] = (int64_t)a->n;
		ox_alloc(&out[0], VPA_ONNX_INT64, 1, d);
		memcpy(out[0].data, a->ints, a->n * sizeof(int64_t));
	} else {
		return ox_fail(c, "attribute '%s' has the wrong type", a->name);
	}
	return 0;
}

static int run_constant_of_shape(struct ox_ctx *c, const struct ox_node *n,
				 const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	int64_t dims[VPA_ONNX_MAX_DIMS];
	size_t nd;
	if (get_ints(c, in[0], "shape", dims, VPA_ONNX_MAX_DIMS, &nd))
		return VPA_EINPUT;
	for (size_t i = 0; i < nd; i++)
		if (dims[i] < 0)
			return ox_fail(c, "negative dimension %lld", (long long)dims[i]);
	const struct ox_attr *a = ox_attr(n, "value");
	if (a && (a->type != OX_A_TENSOR || vpa_onnx_numel(&a->t) != 1))
		return ox_fail(c, "'value' must be a one-element tensor");
	int dt = a ? a->t.dtype : VPA_ONNX_FLOAT;
	ox_alloc(&out[0], dt, nd, dims);
	if (a) {
		size_t es = vpa_onnx_dtype_size(dt), k = vpa_onnx_numel(&out[0]);
		for (size_t i = 0; i < k; i++)
			memcpy((char *)out[0].data + i * es, a->t.data, es);
	}
	return 0;
}

static int run_shape(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		     struct vpa_onnx_tensor *out)
{
	(void)c;
	int64_t r = (int64_t)in[0]->ndim;
	int64_t s = ox_attr_i(n, "start", 0), e = ox_attr_i(n, "end", r);
	s = s < 0 ? s + r : s;
	e = e < 0 ? e + r : e;
	s = s < 0 ? 0 : s > r ? r : s;
	e = e < 0 ? 0 : e > r ? r : e;
	int64_t len = e > s ? e - s : 0;
	ox_alloc(&out[0], VPA_ONNX_INT64, 1, &len);
	for (int64_t i = 0; i < len; i++)
		((int64_t *)out[0].data)[i] = in[0]->dims[s + i];
	return 0;
}

static int run_size(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		    struct vpa_onnx_tensor *out)
{
	(void)c, (void)n;
	ox_alloc(&out[0], VPA_ONNX_INT64, 0, NULL);
	*(int64_t *)out[0].data = (int64_t)vpa_onnx_numel(in[0]);
	return 0;
}

static int run_range(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		     struct vpa_onnx_tensor *out)
{
	(void)n;
	for (int i = 0; i < 3; i++)
		if (vpa_onnx_numel(in[i]) != 1 || in[i]->dtype != in[0]->dtype)
			return ox_fail(c, "start, limit and delta must be scalars of one type");
	int dt = in[0]->dtype;
	int64_t cnt;
	if (dt == VPA_ONNX_FLOAT || dt == VPA_ONNX_DOUBLE) {
		double s = ox_getd(in[0], 0), l = ox_getd(in[1], 0), d = ox_getd(in[2], 0);
		if (d == 0)
			return ox_fail(c, "delta is zero");
		double k = ceil((l - s) / d);
		if (!(k < 1e9))
			return ox_fail(c, "too many elements");
		cnt = k > 0 ? (int64_t)k : 0;
		ox_alloc(&out[0], dt, 1, &cnt);
		for (int64_t i = 0; i < cnt; i++) /* start + i * delta, as the spec loop accumulates */
			ox_setd(&out[0], (size_t)i, dt == VPA_ONNX_FLOAT
							     ? (double)((float)s + (float)i * (float)d)
							     : s + (double)i * d);
	} else if (dt == VPA_ONNX_INT64 || dt == VPA_ONNX_INT32) {
		int64_t s = ox_geti(in[0], 0), l = ox_geti(in[1], 0), d = ox_geti(in[2], 0);
		if (d == 0)
			return ox_fail(c, "delta is zero");
		double k = ceil(((double)l - (double)s) / (double)d);
		if (!(k < 1e9))
			return ox_fail(c, "too many elements");
		cnt = k > 0 ? (int64_t)k : 0;
		ox_alloc(&out[0], dt, 1, &cnt);
		for (int64_t i = 0; i < cnt; i++) {
			if (dt == VPA_ONNX_INT64)
				((int64_t *)out[0].data)[i] = s + i * d;
			else
				((int32_t *)out[0].data)[i] = (int32_t)(s + i * d);
		}
	} else {
		return ox_fail(c, "type %s is not supported", vpa_onnx_dtype_name(dt));
	}
	return 0;
}

/* ------------------------------------------------------------ reshaping */

/* Same data, new shape: x's buffer itself when the run hands it over (this
 * node is its last reader, run.c), else a copy (values are owned per node). */
static void reshaped(struct ox_ctx *c, struct vpa_onnx_tensor *out,
		     const struct vpa_onnx_tensor *x, size_t nd, const int64_t *dims)
{
	if (c->give == x && x->data) {
		out->dtype = x->dtype;
		out->ndim = nd;
		memcpy(out->dims, dims, nd * sizeof(dims[0]));
		out->data = x->data;
		c->taken = 1;
		return;
	}
	ox_alloc(out, x->dtype, nd, dims);
	memcpy(out->data, x->data, vpa_onnx_numel(x) * vpa_onnx_dtype_size(x->dtype));
}

static int run_reshape(struct ox_ctx *c, const struct ox_node *n,
		       const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	int64_t d[VPA_ONNX_MAX_DIMS];
	size_t nd;
	if (get_ints(c, in[1], "shape", d, VPA_ONNX_MAX_DIMS, &nd))
		return VPA_EINPUT;
	int allowzero = (int)ox_attr_i(n, "allowzero", 0);
	int infer = -1;
	size_t known = 1, total = vpa_onnx_numel(in[0]);
	for (size_t i = 0; i < nd; i++) {
		if (d[i] == 0 && !allowzero) {
			if (i >= in[0]->ndim)
				return ox_fail(c, "shape value 0 at axis %zu copies a missing dimension", i);
			d[i] = in[0]->dims[i];
		}
		if (d[i] == -1) {
			if (infer >= 0)
				return ox_fail(c, "more than one -1 in the target shape");
			infer = (int)i;
			continue;
		}
		if (d[i] < 0)
			return ox_fail(c, "bad target dimension %lld", (long long)d[i]);
		known *= (size_t)d[i];
	}
	if (infer >= 0) {
		if (known == 0 || total % known)
			return ox_fail(c, "cannot infer the -1 dimension (%zu elements)", total);
		d[infer] = (int64_t)(total / known);
		known *= (size_t)d[infer];
	}
	if (known != total) {
		char a[128], b[128];
		vpa_onnx_shape_str(a, sizeof(a), in[0]->ndim, in[0]->dims);
		vpa_onnx_shape_str(b, sizeof(b), nd, d);
		return ox_fail(c, "cannot reshape %s into %s", a, b);
	}
	reshaped(c, &out[0], in[0], nd, d);
	return 0;
}

static int run_flatten(struct ox_ctx *c, const struct ox_node *n,
		       const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	int64_t r = (int64_t)in[0]->ndim, ax = ox_attr_i(n, "axis", 1);
	if (ax < -r || ax > r)
		return ox_fail(c, "axis %lld out of range for rank %lld", (long long)ax, (long long)r);
	ax = ax < 0 ? ax + r : ax;
	int64_t d[2] = {1, 1};
	for (int64_t i = 0; i < r; i++)
		d[i < ax ? 0 : 1] *= in[0]->dims[i];
	reshaped(c, &out[0], in[0], 2, d);
	return 0;
}

/* Axes of Squeeze/Unsqueeze: attribute before opset 13, input since. */
static int get_axes(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		    int64_t *ax, size_t *na)
{
	*na = 0;
	if (c->opset < 13) {
		size_t k;
		const int64_t *a = ox_attr_ints(n, "axes", &k);
		if (k > VPA_ONNX_MAX_DIMS)
			return ox_fail(c, "too many axes");
		for (size_t i = 0; i < k; i++)
			ax[i] = a[i];
		*na = k;
		return 0;
	}
	if (n->n_in > 1 && in[1])
		return get_ints(c, in[1], "axes", ax, VPA_ONNX_MAX_DIMS, na);
	return 0;
}

static int check_axes_version(const char *file, const struct ox_node *n, int64_t opset,
			      struct vpa_err *err)
{
	if (opset >= 13 && ox_attr(n, "axes"))
		return ox_check_fail(file, n, opset, err,
				     "attribute 'axes' is an input since opset 13");
	if (opset < 13 && n->n_in > 1)
		return ox_check_fail(file, n, opset, err, "input 'axes' needs opset 13");
	if (!strcmp(n->op_type, "Unsqueeze") && opset >= 13 && n->n_in < 2)
		return ox_check_fail(file, n, opset, err, "input 'axes' is required");
	if (!strcmp(n->op_type, "Unsqueeze") && opset < 13 && !ox_attr(n, "axes"))
		return ox_check_fail(file, n, opset, err, "attribute 'axes' is required");
	return 0;
}

static int run_squeeze(struct ox_ctx *c, const struct ox_node *n,
		       const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	int64_t ax[VPA_ONNX_MAX_DIMS];
	size_t na;
	if (get_axes(c, n, in, ax, &na))
		return VPA_EINPUT;
	const struct vpa_onnx_tensor *x = in[0];
	int drop[VPA_ONNX_MAX_DIMS] = {0};
	for (size_t i = 0; i < na; i++) {
		int a = ox_axis(c, ax[i], x->ndim);
		if (a < 0)
			return VPA_EINPUT;
		if (x->dims[a] != 1)
			return ox_fail(c, "cannot squeeze axis %d of size %lld", a,
				       (long long)x->dims[a]);
		drop[a] = 1;
	}
	int64_t d[VPA_ONNX_MAX_DIMS];
	size_t nd = 0;
	for (size_t i = 0; i < x->ndim; i++)
		if (!(na ? drop[i] : x->dims[i] == 1))
			d[nd++] = x->dims[i];
	reshaped(c, &out[0], x, nd, d);
	return 0;
}

static int run_unsqueeze(struct ox_ctx *c, const struct ox_node *n,
			 const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	int64_t ax[VPA_ONNX_MAX_DIMS];
	size_t na;
	if (get_axes(c, n, in, ax, &na))
		return VPA_EINPUT;
	const struct vpa_onnx_tensor *x = in[0];
	size_t r = x->ndim + na;
	if (r > VPA_ONNX_MAX_DIMS)
		return ox_fail(c, "result rank %zu above %d", r, VPA_ONNX_MAX_DIMS);
	int ins[VPA_ONNX_MAX_DIMS] = {0};
	for (size_t i = 0; i < na; i++) {
		int a = ox_axis(c, ax[i], r);
		if (a < 0)
			return VPA_EINPUT;
		if (ins[a]++)
			return ox_fail(c, "axis %d given twice", a);
	}
	int64_t d[VPA_ONNX_MAX_DIMS];
	for (size_t i = 0, k = 0; i < r; i++)
		d[i] = ins[i] ? 1 : x->dims[k++];
	reshaped(c, &out[0], x, r, d);
	return 0;
}

static int run_transpose(struct ox_ctx *c, const struct ox_node *n,
			 const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0];
	size_t np;
	const int64_t *p = ox_attr_ints(n, "perm", &np);
	int64_t perm[VPA_ONNX_MAX_DIMS];
	int seen[VPA_ONNX_MAX_DIMS] = {0};
	if (p && np != x->ndim)
		return ox_fail(c, "'perm' has %zu entries for rank %zu", np, x->ndim);
	for (size_t i = 0; i < x->ndim; i++) {
		perm[i] = p ? p[i] : (int64_t)(x->ndim - 1 - i);
		if (perm[i] < 0 || perm[i] >= (int64_t)x->ndim || seen[perm[i]]++)
			return ox_fail(c, "'perm' is not a permutation");
	}
	int64_t st[VPA_ONNX_MAX_DIMS], d[VPA_ONNX_MAX_DIMS], ost[VPA_ONNX_MAX_DIMS];
	contiguous_strides(x->ndim, x->dims, st);
	for (size_t i = 0; i < x->ndim; i++) {
		d[i] = x->dims[perm[i]];
		ost[i] = st[perm[i]];
	}
	ox_alloc(&out[0], x->dtype, x->ndim, d);
	strided_copy(out[0].data, x->data, vpa_onnx_dtype_size(x->dtype), x->ndim, d, ost, 0);
	return 0;
}

static int run_concat(struct ox_ctx *c, const struct ox_node *n,
		      const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x0 = in[0];
	if (x0->ndim == 0)
		return ox_fail(c, "cannot concatenate scalars");
	int ax = ox_axis(c, ox_attr_i(n, "axis", 0), x0->ndim);
	if (ax < 0)
		return VPA_EINPUT;
	int64_t d[VPA_ONNX_MAX_DIMS];
	memcpy(d, x0->dims, sizeof(d));
	d[ax] = 0;
	for (size_t i = 0; i < n->n_in; i++) {
		const struct vpa_onnx_tensor *x = in[i];
		if (!x || x->ndim != x0->ndim || x->dtype != x0->dtype)
			return ox_fail(c, "input %zu differs in rank or type from input 0", i);
		for (size_t k = 0; k < x->ndim; k++)
			if ((int)k != ax && x->dims[k] != x0->dims[k])
				return ox_fail(c, "input %zu differs in dimension %zu", i, k);
		d[ax] += x->dims[ax];
	}
	ox_alloc_raw(&out[0], x0->dtype, x0->ndim, d); /* every element is copied below */
	size_t es = vpa_onnx_dtype_size(x0->dtype), outer = 1, inner = es;
	for (int k = 0; k < ax; k++)
		outer *= (size_t)d[k];
	for (size_t k = (size_t)ax + 1; k < x0->ndim; k++)
		inner *= (size_t)d[k];
	size_t row = (size_t)d[ax] * inner, off = 0;
	for (size_t i = 0; i < n->n_in; i++) {
		size_t blk = (size_t)in[i]->dims[ax] * inner;
		for (size_t o = 0; o < outer; o++)
			memcpy((char *)out[0].data + o * row + off, (const char *)in[i]->data + o * blk,
			       blk);
		off += blk;
	}
	return 0;
}

static int check_split(const char *file, const struct ox_node *n, int64_t opset,
		       struct vpa_err *err)
{
	if (opset >= 13 && ox_attr(n, "split"))
		return ox_check_fail(file, n, opset, err,
				     "attribute 'split' is an input since opset 13");
	if (opset < 13 && n->n_in > 1)
		return ox_check_fail(file, n, opset, err, "input 'split' needs opset 13");
	return 0;
}

static int run_split(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		     struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0];
	int ax = ox_axis(c, ox_attr_i(n, "axis", 0), x->ndim);
	if (ax < 0)
		return VPA_EINPUT;
	int64_t sp[64];
	size_t ns = 0;
	if (c->opset < 13) {
		const int64_t *a = ox_attr_ints(n, "split", &ns);
		if (ns > 64)
			return ox_fail(c, "too many splits");
		for (size_t i = 0; i < ns; i++)
			sp[i] = a[i];
	} else if (n->n_in > 1 && in[1]) {
		if (get_ints(c, in[1], "split", sp, 64, &ns))
			return VPA_EINPUT;
	}
	if (!ns) {
		ns = n->n_out;
		if (x->dims[ax] % (int64_t)ns)
			return ox_fail(c, "axis of size %lld does not split into %zu equal parts",
				       (long long)x->dims[ax], ns);
		for (size_t i = 0; i < ns; i++)
			sp[i] = x->dims[ax] / (int64_t)ns;
	}
	if (ns != n->n_out)
		return ox_fail(c, "%zu split sizes for %zu outputs", ns, n->n_out);
	int64_t sum = 0;
	for (size_t i = 0; i < ns; i++) {
		if (sp[i] < 0)
			return ox_fail(c, "negative split size");
		sum += sp[i];
	}
	if (sum != x->dims[ax])
		return ox_fail(c, "split sizes sum to %lld, the axis has %lld", (long long)sum,
			       (long long)x->dims[ax]);
	size_t es = vpa_onnx_dtype_size(x->dtype), outer = 1, inner = es;
	for (int k = 0; k < ax; k++)
		outer *= (size_t)x->dims[k];
	for (size_t k = (size_t)ax + 1; k < x->ndim; k++)
		inner *= (size_t)x->dims[k];
	size_t row = (size_t)x->dims[ax] * inner, off = 0;
	for (size_t i = 0; i < ns; i++) {
		int64_t d[VPA_ONNX_MAX_DIMS];
		memcpy(d, x->dims, sizeof(d));
		d[ax] = sp[i];
		ox_alloc(&out[i], x->dtype, x->ndim, d);
		size_t blk = (size_t)sp[i] * inner;
		for (size_t o = 0; o < outer; o++)
			memcpy((char *)out[i].data + o * blk, (const char *)x->data + o * row + off, blk);
		off += blk;
	}
	return 0;
}

static int run_slice(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		     struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0];
	int64_t st[VPA_ONNX_MAX_DIMS], en[VPA_ONNX_MAX_DIMS], ax[VPA_ONNX_MAX_DIMS],
		sp[VPA_ONNX_MAX_DIMS];
	size_t ns, ne, na, nsp;
	if (get_ints(c, in[1], "starts", st, VPA_ONNX_MAX_DIMS, &ns) ||
	    get_ints(c, in[2], "ends", en, VPA_ONNX_MAX_DIMS, &ne))
		return VPA_EINPUT;
	if (ns != ne)
		return ox_fail(c, "'starts' and 'ends' differ in length");
	na = nsp = ns;
	if (n->n_in > 3 && in[3]) {
		if (get_ints(c, in[3], "axes", ax, VPA_ONNX_MAX_DIMS, &na))
			return VPA_EINPUT;
	} else {
		for (size_t i = 0; i < ns; i++)
			ax[i] = (int64_t)i;
	}
	if (n->n_in > 4 && in[4]) {
		if (get_ints(c, in[4], "steps", sp, VPA_ONNX_MAX_DIMS, &nsp))
			return VPA_EINPUT;
	} else {
		for (size_t i = 0; i < ns; i++)
			sp[i] = 1;
	}
	if (na != ns || nsp != ns)
		return ox_fail(c, "'axes' and 'steps' must have the length of 'starts'");
	int64_t s0[VPA_ONNX_MAX_DIMS], step[VPA_ONNX_MAX_DIMS], d[VPA_ONNX_MAX_DIMS];
	int seen[VPA_ONNX_MAX_DIMS] = {0};
	for (size_t i = 0; i < x->ndim; i++) {
		s0[i] = 0;
		step[i] = 1;
		d[i] = x->dims[i];
	}
	for (size_t i = 0; i < ns; i++) {
		int a = ox_axis(c, ax[i], x->ndim);
		if (a < 0)
			return VPA_EINPUT;
		if (seen[a]++)
			return ox_fail(c, "axis %d repeated", a);
		int64_t dim = x->dims[a], s = st[i], e = en[i], k = sp[i];
		if (k == 0)
			return ox_fail(c, "step is zero");
		if (s < 0)
			s += dim;
		if (e < 0)
			e += dim;
		if (k > 0) {
			s = s < 0 ? 0 : s > dim ? dim : s;
			e = e < 0 ? 0 : e > dim ? dim : e;
			d[a] = e > s ? (e - s + k - 1) / k : 0;
		} else {
			s = s < 0 ? -1 : s > dim - 1 ? dim - 1 : s;
			e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
			d[a] = s > e ? (s - e + (-k) - 1) / (-k) : 0;
		}
		s0[a] = s;
		step[a] = k;
	}
	int64_t cs[VPA_ONNX_MAX_DIMS], os[VPA_ONNX_MAX_DIMS], base = 0;
	contiguous_strides(x->ndim, x->dims, cs);
	for (size_t i = 0; i < x->ndim; i++) {
		os[i] = cs[i] * step[i];
		if (d[i] > 0)
			base += cs[i] * s0[i];
	}
	ox_alloc_raw(&out[0], x->dtype, x->ndim, d); /* strided_copy writes every element */
	strided_copy(out[0].data, x->data, vpa_onnx_dtype_size(x->dtype), x->ndim, d, os, base);
	return 0;
}

static int run_gather(struct ox_ctx *c, const struct ox_node *n,
		      const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0], *idx = in[1];
	if (!is_index(idx))
		return ox_fail(c, "indices must be int64 or int32");
	if (x->ndim == 0)
		return ox_fail(c, "data must have rank >= 1");
	int ax = ox_axis(c, ox_attr_i(n, "axis", 0), x->ndim);
	if (ax < 0)
		return VPA_EINPUT;
	size_t r = x->ndim - 1 + idx->ndim;
	if (r > VPA_ONNX_MAX_DIMS)
		return ox_fail(c, "result rank above %d", VPA_ONNX_MAX_DIMS);
	int64_t d[VPA_ONNX_MAX_DIMS];
	size_t k = 0;
	for (int i = 0; i < ax; i++)
		d[k++] = x->dims[i];
	for (size_t i = 0; i < idx->ndim; i++)
		d[k++] = idx->dims[i];
	for (size_t i = (size_t)ax + 1; i < x->ndim; i++)
		d[k++] = x->dims[i];
	size_t es = vpa_onnx_dtype_size(x->dtype), outer = 1, inner = es, ni = vpa_onnx_numel(idx);
	for (int i = 0; i < ax; i++)
		outer *= (size_t)x->dims[i];
	for (size_t i = (size_t)ax + 1; i < x->ndim; i++)
		inner *= (size_t)x->dims[i];
	int64_t dim = x->dims[ax];
	for (size_t j = 0; j < ni; j++) {
		int64_t v = ox_geti(idx, j);
		if (v < -dim || v >= dim)
			return ox_fail(c, "index %lld out of range for an axis of size %lld",
				       (long long)v, (long long)dim);
	}
	ox_alloc(&out[0], x->dtype, r, d);
	char *o = out[0].data;
	for (size_t a = 0; a < outer; a++)
		for (size_t j = 0; j < ni; j++) {
			int64_t v = ox_geti(idx, j);
			v = v < 0 ? v + dim : v;
			memcpy(o, (const char *)x->data + (a * (size_t)dim + (size_t)v) * inner, inner);
			o += inner;
		}
	return 0;
}

static int run_expand(struct ox_ctx *c, const struct ox_node *n,
		      const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	(void)n;
	const struct vpa_onnx_tensor *x = in[0];
	int64_t s[VPA_ONNX_MAX_DIMS], d[VPA_ONNX_MAX_DIMS], st[VPA_ONNX_MAX_DIMS], cs[VPA_ONNX_MAX_DIMS];
	size_t ns, nd;
	if (get_ints(c, in[1], "shape", s, VPA_ONNX_MAX_DIMS, &ns))
		return VPA_EINPUT;
	for (size_t i = 0; i < ns; i++)
		if (s[i] < 0)
			return ox_fail(c, "negative dimension in 'shape'");
	if (ox_broadcast(c, x->ndim, x->dims, ns, s, &nd, d))
		return VPA_EINPUT;
	contiguous_strides(x->ndim, x->dims, cs);
	for (size_t i = 0; i < nd; i++) {
		size_t off = nd - x->ndim;
		st[i] = i < off || x->dims[i - off] == 1 ? 0 : cs[i - off];
	}
	ox_alloc(&out[0], x->dtype, nd, d);
	strided_copy(out[0].data, x->data, vpa_onnx_dtype_size(x->dtype), nd, d, st, 0);
	return 0;
}

static int run_tile(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		    struct vpa_onnx_tensor *out)
{
	(void)n;
	const struct vpa_onnx_tensor *x = in[0];
	int64_t rep[VPA_ONNX_MAX_DIMS], d[VPA_ONNX_MAX_DIMS], cs[VPA_ONNX_MAX_DIMS];
	size_t nr;
	if (get_ints(c, in[1], "repeats", rep, VPA_ONNX_MAX_DIMS, &nr))
		return VPA_EINPUT;
	if (nr != x->ndim)
		return ox_fail(c, "'repeats' has %zu values for rank %zu", nr, x->ndim);
	for (size_t i = 0; i < nr; i++) {
		if (rep[i] < 0)
			return ox_fail(c, "negative repeat");
		d[i] = x->dims[i] * rep[i];
	}
	ox_alloc(&out[0], x->dtype, x->ndim, d);
	contiguous_strides(x->ndim, x->dims, cs);
	size_t es = vpa_onnx_dtype_size(x->dtype), total = vpa_onnx_numel(&out[0]);
	if (x->ndim > 0 && total > 0) {
		/* Whole rows of the last axis: copy each input row rep[last] times. */
		size_t last = x->ndim - 1, rowb = (size_t)x->dims[last] * es;
		size_t rows = total / (size_t)d[last];
		int64_t idx[VPA_ONNX_MAX_DIMS] = {0};
		char *o = out[0].data;
		for (size_t r = 0; r < rows; r++) {
			int64_t off = 0;
			for (size_t k = 0; k < last; k++)
				off += (idx[k] % x->dims[k]) * cs[k];
			/* one copy of the row, then doubling what is written: log2(rep)
			 * copies instead of rep (a (C, 1) -> (C, T) Tile is C x T of 4 bytes) */
			size_t all = rowb * (size_t)rep[last], done = rep[last] > 0 ? rowb : 0;
			if (done)
				memcpy(o, (const char *)x->data + off * (int64_t)es, rowb);
			while (done < all) {
				size_t k = done < all - done ? done : all - done;
				memcpy(o + done, o, k);
				done += k;
			}
			o += all;
			for (size_t k = last; k-- > 0;) {
				if (++idx[k] < d[k])
					break;
				idx[k] = 0;
			}
		}
		return 0;
	}
	int64_t idx[VPA_ONNX_MAX_DIMS] = {0};
	for (size_t o = 0; o < total; o++) {
		int64_t off = 0;
		for (size_t k = 0; k < x->ndim; k++)
			off += (idx[k] % x->dims[k]) * cs[k];
		memcpy((char *)out[0].data + o * es, (const char *)x->data + off * (int64_t)es, es);
		for (size_t k = x->ndim; k-- > 0;) {
			if (++idx[k] < d[k])
				break;
			idx[k] = 0;
		}
	}
	return 0;
}

static int check_pad(const char *file, const struct ox_node *n, int64_t opset,
		     struct vpa_err *err)
{
	const char *mode = ox_attr_s(n, "mode", "constant");
	if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
		return ox_check_fail(file, n, opset, err,
				     "mode '%s' is not supported (constant, reflect, edge)", mode);
	return 0;
}

static int run_pad(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		   struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0];
	const char *mode = ox_attr_s(n, "mode", "constant");
	int64_t p[2 * VPA_ONNX_MAX_DIMS], d[VPA_ONNX_MAX_DIMS], cs[VPA_ONNX_MAX_DIMS];
	size_t np;
	if (get_ints(c, in[1], "pads", p, 2 * VPA_ONNX_MAX_DIMS, &np))
		return VPA_EINPUT;
	if (np != 2 * x->ndim)
		return ox_fail(c, "'pads' has %zu values for rank %zu", np, x->ndim);
	const struct vpa_onnx_tensor *cv = n->n_in > 2 ? in[2] : NULL;
	if (cv && (vpa_onnx_numel(cv) != 1 || cv->dtype != x->dtype))
		return ox_fail(c, "'constant_value' must be a scalar of the input's type");
	for (size_t i = 0; i < x->ndim; i++) {
		d[i] = x->dims[i] + p[i] + p[i + x->ndim];
		if (d[i] < 0)
			return ox_fail(c, "pads make axis %zu negative", i);
		if (strcmp(mode, "constant") && x->dims[i] == 0 && d[i] > 0)
			return ox_fail(c, "cannot %s-pad an empty axis", mode);
		if (!strcmp(mode, "reflect") && (p[i] >= x->dims[i] || p[i + x->ndim] >= x->dims[i]) &&
		    (p[i] > 0 || p[i + x->ndim] > 0))
			return ox_fail(c, "reflect pads must be smaller than the axis (%lld)",
				       (long long)x->dims[i]);
	}
	ox_alloc(&out[0], x->dtype, x->ndim, d);
	contiguous_strides(x->ndim, x->dims, cs);
	size_t es = vpa_onnx_dtype_size(x->dtype), total = vpa_onnx_numel(&out[0]);
	int64_t idx[VPA_ONNX_MAX_DIMS] = {0};
	int m = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "reflect") ? 1 : 2;
	for (size_t o = 0; o < total; o++) {
		int64_t off = 0;
		int inside = 1;
		for (size_t k = 0; k < x->ndim; k++) {
			int64_t i = idx[k] - p[k], dim = x->dims[k];
			if (i < 0 || i >= dim) {
				if (m == 0) {
					inside = 0;
					break;
				}
				if (m == 2) {
					i = i < 0 ? 0 : dim - 1;
				} else if (dim == 1) {
					i = 0;
				} else {
					int64_t period = 2 * (dim - 1);
					i = i % period;
					i = i < 0 ? i + period : i;
					i = i >= dim ? period - i : i;
				}
			}
			off += i * cs[k];
		}
		char *dst = (char *)out[0].data + o * es;
		if (inside)
			memcpy(dst, (const char *)x->data + off * (int64_t)es, es);
		else if (cv)
			memcpy(dst, cv->data, es);
		for (size_t k = x->ndim; k-- > 0;) {
			if (++idx[k] < d[k])
				break;
			idx[k] = 0;
		}
	}
	return 0;
}

static int run_identity(struct ox_ctx *c, const struct ox_node *n,
			const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	(void)c, (void)n;
	ox_copy(&out[0], in[0]);
	return 0;
}

static int check_dropout(const char *file, const struct ox_node *n, int64_t opset,
			 struct vpa_err *err)
{
	if (opset >= 12 && ox_attr(n, "ratio"))
		return ox_check_fail(file, n, opset, err, "attribute 'ratio' is an input since opset 12");
	if (opset < 12 && n->n_in > 1)
		return ox_check_fail(file, n, opset, err, "inputs 'ratio' and 'training_mode' need opset 12");
	return 0;
}

static int run_dropout(struct ox_ctx *c, const struct ox_node *n,
		       const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	if (n->n_in > 2 && in[2] && (in[2]->dtype != VPA_ONNX_BOOL || vpa_onnx_numel(in[2]) != 1))
		return ox_fail(c, "'training_mode' must be a bool scalar");
	if (n->n_in > 2 && in[2] && *(const uint8_t *)in[2]->data)
		return ox_fail(c, "training mode is not supported (inference only)");
	ox_copy(&out[0], in[0]);
	if (n->n_out > 1) {
		ox_alloc(&out[1], VPA_ONNX_BOOL, in[0]->ndim, in[0]->dims);
		memset(out[1].data, 1, vpa_onnx_numel(in[0]));
	}
	return 0;
}

static const char *const a_none[] = {NULL};
static const char *const a_const[] = {"value", "value_float", "value_floats", "value_int",
				      "value_ints", NULL};
static const char *const a_value[] = {"value", NULL};
static const char *const a_shape[] = {"start", "end", NULL};
static const char *const a_allowzero[] = {"allowzero", NULL};
static const char *const a_axis[] = {"axis", NULL};
static const char *const a_axes[] = {"axes", NULL};
static const char *const a_perm[] = {"perm", NULL};
static const char *const a_split[] = {"axis", "split", NULL};
static const char *const a_mode[] = {"mode", NULL};
static const char *const a_seed[] = {"seed", "ratio", NULL};

const struct ox_op ox_ops_shape[] = {
	{"Constant", a_const, check_constant, run_constant, 0, 0, 1, 1},
	{"ConstantOfShape", a_value, NULL, run_constant_of_shape, 1, 1, 1, 1},
	{"Shape", a_shape, NULL, run_shape, 1, 1, 1, 1},
	{"Size", a_none, NULL, run_size, 1, 1, 1, 1},
	{"Range", a_none, NULL, run_range, 3, 3, 1, 1},
	{"Reshape", a_allowzero, NULL, run_reshape, 2, 2, 1, 1},
	{"Flatten", a_axis, NULL, run_flatten, 1, 1, 1, 1},
	{"Squeeze", a_axes, check_axes_version, run_squeeze, 1, 2, 1, 1},
	{"Unsqueeze", a_axes, check_axes_version, run_unsqueeze, 1, 2, 1, 1},
	{"Transpose", a_perm, NULL, run_transpose, 1, 1, 1, 1},
	{"Concat", a_axis, NULL, run_concat, 1, 64, 1, 1},
	{"Split", a_split, check_split, run_split, 1, 2, 1, 64},
	{"Slice", a_none, NULL, run_slice, 3, 5, 1, 1},
	{"Gather", a_axis, NULL, run_gather, 2, 2, 1, 1},
	{"Expand", a_none, NULL, run_expand, 2, 2, 1, 1},
	{"Tile", a_none, NULL, run_tile, 2, 2, 1, 1},
	{"Pad", a_mode, check_pad, run_pad, 2, 3, 1, 1},
	{"Identity", a_none, NULL, run_identity, 1, 1, 1, 1},
	{"Dropout", a_seed, check_dropout, run_dropout, 1, 3, 1, 2},
	{NULL, NULL, NULL, NULL, 0, 0, 0, 0},
};
