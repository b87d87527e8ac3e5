/*
 * targets/anon_extractor_onnx.c - the extractors vpaudit trains
 * (audio/xvector.h: the x-vector, a learn/nn network of TDNN, ReLU,
 * batch-norm, statistics pooling and dense layers; the ECAPA-TDNN of
 * audio/ecapa.h, learn/nn networks wired by hand) written as ONNX models
 * (opset 13), so that `vpaudit embed` and other tools (onnxruntime, Python
 * onnx) run them.  See anon_extractor_io.h.
 *
 * The x-vector's graph, on input `feats` (1, T, F) (vpaudit embed's btf layout):
 *   Transpose -> (1, F, T)
 *   tdnn {c_1..c_k}: the first frame repeated -c_1 times and the last c_k
 *        times (Concat of Slices: learn/nn's TDNN clamps frame indices to the
 *        sequence, PyTorch would pad zeros), then Conv with dilation d = gcd
 *        of the offsets' steps, kernel (c_k - c_1)/d + 1, the weight of an
 *        offset the context leaves out 0
 *   relu: Relu; batchnorm: BatchNormalization (running statistics, eps)
 *   statspool: [mean_t, sqrt(max(mean_t((x - mean)^2), floor))] -> (1, 2C)
 *              (learn/nn's two-pass variance, there in double)
 *   dense (after the pooling): Gemm transB -> `embedding` (1, E)
 * The ECAPA-TDNN's: each of its learn/nn networks as above (a dense layer on
 * frames a 1x1 Conv), wired as vpa_ecapa_forward: Res2 groups as Slices of the
 * channel axis with the cascade's Adds, squeeze-excitation on ReduceMean with
 * Unsqueeze, Mul and the residual Add, MFA on the Concat of the three blocks,
 * attentive pooling with the frames' mean and std Expanded over the frames,
 * Softmax over the frames, ReduceSum for mu and sum(alpha h^2), sigma =
 * sqrt(max(sum(alpha h^2) - mu^2, 1e-10)) as audio/ecapa.c computes it.
 * The front-end travels in metadata_props: `vpaudit.embed_options`, the
 * options that make `vpaudit embed` compute the features the network was
 * trained on (its own mean subtraction off: the front-end's CMVN is the one).
 */
#include "targets/anon_extractor_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"

/* everything allocated for the model, freed at once */
struct gb {
	void **own;
	size_t n_own, cap_own;
	Onnx__NodeProto **nodes;
	size_t n_nodes, cap_nodes;
	Onnx__TensorProto **inits;
	size_t n_inits, cap_inits;
	unsigned next; /* value names */
};

static void *keep(struct gb *g, void *p)
{
	if (g->n_own == g->cap_own) {
		g->cap_own = g->cap_own ? 2 * g->cap_own : 64;
		g->own = xrealloc(g->own, xmul(g->cap_own, sizeof(void *)));
	}
	g->own[g->n_own++] = p;
	return p;
}

static void *gmalloc(struct gb *g, size_t n)
{
	return keep(g, xcalloc(1, n ? n : 1));
}

static char *gstr(struct gb *g, const char *s)
{
	return keep(g, xstrdup(s));
}

static char *fresh(struct gb *g, const char *what)
{
	char b[64];
	snprintf(b, sizeof(b), "%s_%u", what, g->next++);
	return gstr(g, b);
}

static Onnx__TensorProto *init_f32(struct gb *g, const char *name, size_t ndim,
				   const int64_t *dims, const float *data)
{
	Onnx__TensorProto *t = gmalloc(g, sizeof(*t));
	onnx__tensor_proto__init(t);
	t->name = gstr(g, name);
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	t->n_dims = ndim;
	t->dims = gmalloc(g, ndim * sizeof(int64_t));
	size_t n = 1;
	for (size_t i = 0; i < ndim; i++) {
		t->dims[i] = dims[i];
		n *= (size_t)dims[i];
	}
	t->n_float_data = n;
	t->float_data = gmalloc(g, n * sizeof(float));
	memcpy(t->float_data, data, n * sizeof(float));
	if (g->n_inits == g->cap_inits) {
		g->cap_inits = g->cap_inits ? 2 * g->cap_inits : 32;
		g->inits = xrealloc(g->inits, xmul(g->cap_inits, sizeof(void *)));
	}
	g->inits[g->n_inits++] = t;
	return t;
}

static Onnx__TensorProto *init_i64(struct gb *g, const char *name, int64_t v)
{
	Onnx__TensorProto *t = gmalloc(g, sizeof(*t));
	onnx__tensor_proto__init(t);
	t->name = gstr(g, name);
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	t->n_dims = 1;
	t->dims = gmalloc(g, sizeof(int64_t));
	t->dims[0] = 1;
	t->n_int64_data = 1;
	t->int64_data = gmalloc(g, sizeof(int64_t));
	t->int64_data[0] = v;
	if (g->n_inits == g->cap_inits) {
		g->cap_inits = g->cap_inits ? 2 * g->cap_inits : 32;
		g->inits = xrealloc(g->inits, xmul(g->cap_inits, sizeof(void *)));
	}
	g->inits[g->n_inits++] = t;
	return t;
}

static Onnx__AttributeProto *attr_i(struct gb *g, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = gmalloc(g, sizeof(*a));
	onnx__attribute_proto__init(a);
	a->name = gstr(g, name);
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = 1;
	a->i = v;
	return a;
}

static Onnx__AttributeProto *attr_f(struct gb *g, const char *name, float v)
{
	Onnx__AttributeProto *a = gmalloc(g, sizeof(*a));
	onnx__attribute_proto__init(a);
	a->name = gstr(g, name);
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	a->has_f = 1;
	a->f = v;
	return a;
}

static Onnx__AttributeProto *attr_ints(struct gb *g, const char *name, size_t n, const int64_t *v)
{
	Onnx__AttributeProto *a = gmalloc(g, sizeof(*a));
	onnx__attribute_proto__init(a);
	a->name = gstr(g, name);
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->n_ints = n;
	a->ints = gmalloc(g, n * sizeof(int64_t));
	memcpy(a->ints, v, n * sizeof(int64_t));
	return a;
}

/* a node with n_in inputs, one output (returned), up to 4 attributes */
static char *node(struct gb *g, const char *op, size_t n_in, char *const *in, const char *out,
		  size_t n_attr, Onnx__AttributeProto *const *attr)
{
	Onnx__NodeProto *nd = gmalloc(g, sizeof(*nd));
	onnx__node_proto__init(nd);
	nd->op_type = gstr(g, op);
	nd->n_input = n_in;
	nd->input = gmalloc(g, n_in * sizeof(char *));
	for (size_t i = 0; i < n_in; i++)
		nd->input[i] = in[i];
	nd->n_output = 1;
	nd->output = gmalloc(g, sizeof(char *));
	nd->output[0] = out ? gstr(g, out) : fresh(g, op);
	nd->name = fresh(g, op);
	nd->n_attribute = n_attr;
	nd->attribute = gmalloc(g, n_attr * sizeof(void *));
	for (size_t i = 0; i < n_attr; i++)
		nd->attribute[i] = attr[i];
	if (g->n_nodes == g->cap_nodes) {
		g->cap_nodes = g->cap_nodes ? 2 * g->cap_nodes : 64;
		g->nodes = xrealloc(g->nodes, xmul(g->cap_nodes, sizeof(void *)));
	}
	g->nodes[g->n_nodes++] = nd;
	return nd->output[0];
}

static Onnx__ValueInfoProto *value_info(struct gb *g, const char *name, size_t ndim,
					const int64_t *dims, const char *const *params)
{
	Onnx__ValueInfoProto *v = gmalloc(g, sizeof(*v));
	onnx__value_info_proto__init(v);
	v->name = gstr(g, name);
	Onnx__TypeProto *tp = gmalloc(g, sizeof(*tp));
	onnx__type_proto__init(tp);
	Onnx__TypeProto__Tensor *tt = gmalloc(g, sizeof(*tt));
	onnx__type_proto__tensor__init(tt);
	tt->has_elem_type = 1;
	tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	Onnx__TensorShapeProto *sh = gmalloc(g, sizeof(*sh));
	onnx__tensor_shape_proto__init(sh);
	sh->n_dim = ndim;
	sh->dim = gmalloc(g, ndim * sizeof(void *));
	for (size_t i = 0; i < ndim; i++) {
		Onnx__TensorShapeProto__Dimension *d = gmalloc(g, sizeof(*d));
		onnx__tensor_shape_proto__dimension__init(d);
		if (params && params[i]) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = gstr(g, params[i]);
		} else {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
		}
		sh->dim[i] = d;
	}
	tt->shape = sh;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	v->type = tp;
	return v;
}

static size_t gcd(size_t a, size_t b)
{
	while (b) {
		size_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* the tensor of a layer by name ("weight", "gamma", ...) */
static int tensor_of(struct vpa_nn *net, size_t layer, const char *name, struct vpa_nn_tensor *t)
{
	for (size_t k = 0; k < vpa_nn_n_tensors(net, layer); k++) {
		vpa_nn_tensor(net, layer, k, t);
		if (!strcmp(t->name, name))
			return 1;
	}
	return 0;
}

/* an int64 constant (1-D, n values) as an initializer; its name */
static char *consts(struct gb *g, const char *what, size_t n, const int64_t *v)
{
	Onnx__TensorProto *t = init_i64(g, fresh(g, what), v[0]);
	if (n > 1) {
		t->dims[0] = (int64_t)n;
		t->n_int64_data = n;
		t->int64_data = gmalloc(g, n * sizeof(int64_t));
		memcpy(t->int64_data, v, n * sizeof(int64_t));
	}
	return t->name;
}

static char *const1(struct gb *g, const char *what, int64_t v)
{
	return consts(g, what, 1, &v);
}

/* Slice of x along axis from a to b (b may be INT64_MAX) */
static char *slice(struct gb *g, char *x, int64_t axis, int64_t a, int64_t b)
{
	char *in[4] = {x, const1(g, "start", a), const1(g, "end", b), const1(g, "axis", axis)};
	return node(g, "Slice", 4, in, NULL, 0, NULL);
}

static char *binop(struct gb *g, const char *op, char *a, char *b)
{
	char *in[2] = {a, b};
	return node(g, op, 2, in, NULL, 0, NULL);
}

/* ReduceMean over the frames (axis 2) */
static char *tmean(struct gb *g, char *x, int keep)
{
	int64_t axes[1] = {2};
	Onnx__AttributeProto *a[2] = {attr_ints(g, "axes", 1, axes), attr_i(g, "keepdims", keep)};
	return node(g, "ReduceMean", 1, &x, NULL, 2, a);
}

/* ReduceSum over the frames (opset 13: axes an input) */
static char *tsum(struct gb *g, char *x)
{
	char *in[2] = {x, const1(g, "axes", 2)};
	Onnx__AttributeProto *a[1] = {attr_i(g, "keepdims", 0)};
	return node(g, "ReduceSum", 2, in, NULL, 1, a);
}

static char *concat(struct gb *g, size_t n, char **in, int64_t axis)
{
	Onnx__AttributeProto *a[1] = {attr_i(g, "axis", axis)};
	return node(g, "Concat", n, in, NULL, 1, a);
}

static char *floor_const(struct gb *g, const char *name, float v)
{
	int64_t one[1] = {1};
	return init_f32(g, name, 1, one, &v)->name;
}

/*
 * The layers of net on x: frame-level values are (1, C, T), vectors (1, D);
 * *frame says which x is and becomes (statistics pooling turns frames into a
 * vector).  prefix names the initializers.  0, or VPA_EINPUT for a layer it
 * cannot express.
 */
static int emit_net(struct gb *g, struct vpa_nn *net, const char *prefix, char **xio, int *frame,
		    struct vpa_err *err)
{
	char *x = *xio;
	size_t dim = vpa_nn_input_dim(net);
	for (size_t i = 0; i < vpa_nn_n_layers(net); i++) {
		const struct vpa_nn_layer_spec *s = vpa_nn_layer(net, i);
		struct vpa_nn_tensor w, b;
		char nm[160];
		switch (s->kind) {
		case VPA_NN_TDNN: {
			if (!*frame)
				goto unsupported;
			int c1 = s->context[0], ck = s->context[s->n_context - 1];
			if (c1 > 0 || ck < 0)
				goto unsupported;
			size_t d = 0;
			for (size_t j = 1; j < s->n_context; j++)
				d = gcd(d, (size_t)(s->context[j] - s->context[j - 1]));
			if (!d)
				d = 1;
			size_t K = (size_t)(ck - c1) / d + 1;
			size_t L = (size_t)-c1, R = (size_t)ck;
			if (L || R) {
				char *first = L ? slice(g, x, 2, 0, 1) : NULL;
				char *last = R ? slice(g, x, 2, -1, INT64_MAX) : NULL;
				char **cat = gmalloc(g, (L + R + 1) * sizeof(char *));
				size_t n = 0;
				for (size_t j = 0; j < L; j++)
					cat[n++] = first;
				cat[n++] = x;
				for (size_t j = 0; j < R; j++)
					cat[n++] = last;
				x = concat(g, n, cat, 2);
			}
			if (!tensor_of(net, i, "weight", &w) || !tensor_of(net, i, "bias", &b))
				goto unsupported;
			/* (out, k*in), block j = offset c_j -> (out, in, K) at (c_j - c_1)/d */
			size_t out = s->out;
			float *W = xcalloc(xmul(out * dim, K), sizeof(float));
			for (size_t o = 0; o < out; o++)
				for (size_t j = 0; j < s->n_context; j++) {
					size_t kk = (size_t)(s->context[j] - c1) / d;
					for (size_t c = 0; c < dim; c++)
						W[(o * dim + c) * K + kk] =
							w.data[o * s->n_context * dim + j * dim + c];
				}
			snprintf(nm, sizeof(nm), "%s%s.weight", prefix, s->name);
			int64_t wd[3] = {(int64_t)out, (int64_t)dim, (int64_t)K};
			char *wn = init_f32(g, nm, 3, wd, W)->name;
			free(W);
			snprintf(nm, sizeof(nm), "%s%s.bias", prefix, s->name);
			int64_t bd[1] = {(int64_t)out};
			char *bn = init_f32(g, nm, 1, bd, b.data)->name;
			int64_t dil[1] = {(int64_t)d}, ks[1] = {(int64_t)K};
			Onnx__AttributeProto *a[2] = {attr_ints(g, "dilations", 1, dil),
						      attr_ints(g, "kernel_shape", 1, ks)};
			char *in[3] = {x, wn, bn};
			x = node(g, "Conv", 3, in, NULL, 2, a);
			dim = out;
			break;
		}
		case VPA_NN_DENSE: {
			if (!tensor_of(net, i, "weight", &w) || !tensor_of(net, i, "bias", &b))
				goto unsupported;
			snprintf(nm, sizeof(nm), "%s%s.bias", prefix, s->name);
			int64_t bd[1] = {(int64_t)s->out};
			char *bn = init_f32(g, nm, 1, bd, b.data)->name;
			snprintf(nm, sizeof(nm), "%s%s.weight", prefix, s->name);
			if (*frame) { /* a 1x1 convolution over the frames */
				int64_t wd[3] = {(int64_t)s->out, (int64_t)dim, 1};
				char *in[3] = {x, init_f32(g, nm, 3, wd, w.data)->name, bn};
				int64_t ks[1] = {1};
				Onnx__AttributeProto *a[1] = {attr_ints(g, "kernel_shape", 1, ks)};
				x = node(g, "Conv", 3, in, NULL, 1, a);
			} else {
				int64_t wd[2] = {(int64_t)s->out, (int64_t)dim};
				char *in[3] = {x, init_f32(g, nm, 2, wd, w.data)->name, bn};
				Onnx__AttributeProto *a[1] = {attr_i(g, "transB", 1)};
				x = node(g, "Gemm", 3, in, NULL, 1, a);
			}
			dim = s->out;
			break;
		}
		case VPA_NN_RELU:
			x = node(g, "Relu", 1, &x, NULL, 0, NULL);
			break;
		case VPA_NN_TANH:
			x = node(g, "Tanh", 1, &x, NULL, 0, NULL);
			break;
		case VPA_NN_SIGMOID:
			x = node(g, "Sigmoid", 1, &x, NULL, 0, NULL);
			break;
		case VPA_NN_BATCHNORM: {
			/* channel axis 1 of (1, C, T) and of (1, D) alike */
			static const char *const tn[4] = {"gamma", "beta", "running_mean", "running_var"};
			char *in[5] = {x};
			for (int k = 0; k < 4; k++) {
				struct vpa_nn_tensor t;
				if (!tensor_of(net, i, tn[k], &t))
					goto unsupported;
				snprintf(nm, sizeof(nm), "%s%s.%s", prefix, s->name, tn[k]);
				int64_t dd[1] = {(int64_t)dim};
				in[k + 1] = init_f32(g, nm, 1, dd, t.data)->name;
			}
			Onnx__AttributeProto *a[1] = {attr_f(g, "epsilon", s->eps)};
			x = node(g, "BatchNormalization", 5, in, NULL, 1, a);
			break;
		}
		case VPA_NN_STATSPOOL: {
			if (!*frame)
				goto unsupported;
			char *mean = tmean(g, x, 1);
			char *dev = binop(g, "Sub", x, mean);
			char *var = tmean(g, binop(g, "Mul", dev, dev), 0);
			snprintf(nm, sizeof(nm), "%s%s.variance_floor", prefix, s->name);
			char *sd = binop(g, "Max", var, floor_const(g, nm, s->var_floor));
			sd = node(g, "Sqrt", 1, &sd, NULL, 0, NULL);
			char *in[2] = {tmean(g, x, 0), sd};
			x = concat(g, 2, in, 1);
			dim *= 2;
			*frame = 0;
			break;
		}
		default:
		unsupported:
			return vpa_fail(err, VPA_EINPUT, NULL,
					"layer %zu (%s) of the network has no ONNX form here", i + 1,
					vpa_nn_kind_name(s->kind));
		}
	}
	*xio = x;
	return 0;
}

/* the x-vector: its one network; the embedding a vector after the pooling */
static int build_xvector(struct gb *g, struct vpa_nn *net, char **x, struct vpa_err *err)
{
	int frame = 1;
	int rc = emit_net(g, net, "", x, &frame, err);
	if (!rc && frame)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "the network has no statistics pooling");
	return rc;
}

/*
 * The ECAPA-TDNN of audio/ecapa.c, net by net in vpa_ecapa_net order (stem,
 * per block: 1x1 in, K_2..K_s, 1x1 out, SE MLP; MFA; attention; head), wired
 * as vpa_ecapa_forward wires them.
 */
static int build_ecapa(struct gb *g, struct vpa_ecapa *e, char **xio, struct vpa_err *err)
{
	const struct vpa_ecapa_opts *o = vpa_ecapa_opts(e);
	const size_t C = o->channels, S = o->scale, W = C / S;
	size_t k = 0;
	char pre[32], *x = *xio;
	int frame = 1, rc;
#define NET(var)                                                                   \
	do {                                                                       \
		snprintf(pre, sizeof(pre), "net%zu.", k);                          \
		if ((rc = emit_net(g, vpa_ecapa_net(e, k), pre, &(var), &frame, err))) \
			return rc;                                                 \
		k++;                                                               \
	} while (0)
	NET(x);
	char *bo[3];
	for (int blk = 0; blk < 3; blk++) {
		char *h = x;
		NET(h);
		char **ys = gmalloc(g, S * sizeof(char *));
		ys[0] = S > 1 ? slice(g, h, 1, 0, (int64_t)W) : h;
		for (size_t i = 1; i < S; i++) {
			char *u = slice(g, h, 1, (int64_t)(i * W), (int64_t)((i + 1) * W));
			if (i >= 2) /* u_i = h_i + y_{i-1} */
				u = binop(g, "Add", u, ys[i - 1]);
			NET(u);
			ys[i] = u;
		}
		char *z = S > 1 ? concat(g, S, ys, 1) : ys[0];
		NET(z);
		/* squeeze-excitation on the frames' mean, then the residual */
		char *m = tmean(g, z, 0);
		frame = 0;
		NET(m);
		frame = 1;
		char *in[2] = {m, const1(g, "axes", 2)};
		char *g3 = node(g, "Unsqueeze", 2, in, NULL, 0, NULL);
		x = binop(g, "Add", binop(g, "Mul", z, g3), x);
		bo[blk] = x;
	}
	char *H = concat(g, 3, bo, 1);
	NET(H);
	/* attentive statistics pooling (audio/ecapa.c vpa_ecapa_asp_forward) */
	char *mean = tmean(g, H, 1);
	char *dev = binop(g, "Sub", H, mean);
	char *var = tmean(g, binop(g, "Mul", dev, dev), 1);
	char *fl = floor_const(g, "asp.variance_floor", 1e-10f);
	char *sd = binop(g, "Max", var, fl);
	sd = node(g, "Sqrt", 1, &sd, NULL, 0, NULL);
	char *shape = node(g, "Shape", 1, &H, NULL, 0, NULL);
	char *ctx[3] = {H, binop(g, "Expand", mean, shape), binop(g, "Expand", sd, shape)};
	char *att = concat(g, 3, ctx, 1);
	NET(att);
	Onnx__AttributeProto *a[1] = {attr_i(g, "axis", 2)};
	char *alpha = node(g, "Softmax", 1, &att, NULL, 1, a);
	char *aH = binop(g, "Mul", alpha, H);
	char *mu = tsum(g, aH);
	char *q = tsum(g, binop(g, "Mul", aH, H));
	char *v2 = binop(g, "Sub", q, binop(g, "Mul", mu, mu));
	char *sg = binop(g, "Max", v2, fl);
	sg = node(g, "Sqrt", 1, &sg, NULL, 0, NULL);
	char *pool[2] = {mu, sg};
	x = concat(g, 2, pool, 1);
	frame = 0;
	NET(x);
#undef NET
	if (k != vpa_ecapa_n_nets(e))
		VPA_BUG("ECAPA export used %zu of %zu nets", k, vpa_ecapa_n_nets(e));
	*xio = x;
	return 0;
}

void vpa_anon_extractor_embed_options(const struct vpa_xvec_meta *m, char *buf, size_t sz)
{
	char ceps[48] = "";
	if (!strcmp(m->features, "mfcc"))
		snprintf(ceps, sizeof(ceps), " --num-ceps=%ld", m->num_ceps);
	snprintf(buf, sz,
		 "--features=%s --num-mel-bins=%ld%s --cmvn=%s --vad=%s --sample-frequency=%g "
		 "--frame-length=%g --frame-shift=%g --cmn=false --layout=btf",
		 m->features, m->num_mel_bins, ceps, m->cmvn, m->vad ? "true" : "false",
		 m->sample_frequency, m->frame_length, m->frame_shift);
}

int vpa_anon_extractor_onnx(struct vpa_xvec *x, const struct vpa_xvec_meta *m, const char *path,
			    struct vpa_err *err)
{
	struct gb g;
	memset(&g, 0, sizeof(g));
	static char feats[] = "feats";
	char *out = feats;
	size_t dim = x->emb_dim;
	{
		int64_t perm[3] = {0, 2, 1};
		Onnx__AttributeProto *a[1] = {attr_ints(&g, "perm", 3, perm)};
		out = node(&g, "Transpose", 1, &out, NULL, 1, a);
	}
	int rc = x->ecapa ? build_ecapa(&g, x->ecapa, &out, err) : build_xvector(&g, x->net, &out, err);
	void *buf = NULL;
	if (rc)
		goto done;
	/* the last node's output is the graph output `embedding` */
	Onnx__NodeProto *last = g.nodes[g.n_nodes - 1];
	last->output[0] = gstr(&g, "embedding");
	Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
	gp.name = gstr(&g, x->ecapa ? "vpaudit_ecapa_tdnn" : "vpaudit_xvector");
	gp.n_node = g.n_nodes;
	gp.node = g.nodes;
	gp.n_initializer = g.n_inits;
	gp.initializer = g.inits;
	int64_t ind[3] = {1, 0, (int64_t)vpa_xvec_input_dim(x)};
	const char *inp[3] = {NULL, "T", NULL};
	Onnx__ValueInfoProto *vi = value_info(&g, "feats", 3, ind, inp);
	int64_t outd[2] = {1, (int64_t)dim};
	Onnx__ValueInfoProto *vo = value_info(&g, "embedding", 2, outd, NULL);
	gp.n_input = 1;
	gp.input = &vi;
	gp.n_output = 1;
	gp.output = &vo;
	Onnx__OperatorSetIdProto ops = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	ops.domain = gstr(&g, "");
	ops.has_version = 1;
	ops.version = 13;
	Onnx__OperatorSetIdProto *opsp = &ops;
	char opts[512];
	vpa_anon_extractor_embed_options(m, opts, sizeof(opts));
	char fl[32];
	snprintf(fl, sizeof(fl), "%.17g", m->final_loss);
	const char *kv[][2] = {{"vpaudit.embed_options", opts},
			       {"vpaudit.role", m->role},
			       {"vpaudit.architecture", vpa_xvec_arch_name(x->arch)},
			       {"vpaudit.loss", m->loss},
			       {"vpaudit.final_loss", fl}};
	enum { NKV = sizeof(kv) / sizeof(kv[0]) };
	Onnx__StringStringEntryProto *md[NKV];
	for (int i = 0; i < NKV; i++) {
		md[i] = gmalloc(&g, sizeof(*md[i]));
		onnx__string_string_entry_proto__init(md[i]);
		md[i]->key = gstr(&g, kv[i][0]);
		md[i]->value = gstr(&g, kv[i][1]);
	}
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1;
	mp.ir_version = 7; /* ONNX 1.8+, opset 13 */
	mp.n_opset_import = 1;
	mp.opset_import = &opsp;
	mp.producer_name = gstr(&g, "vpaudit");
	mp.producer_version = gstr(&g, "0.1.0");
	mp.doc_string = gstr(&g, "speaker-embedding extractor trained by vpaudit in C "
				 "(audio/xvector.h); input feats (1, T, F) from the front-end in "
				 "vpaudit.embed_options");
	mp.graph = &gp;
	mp.n_metadata_props = NKV;
	mp.metadata_props = md;
	size_t len = onnx__model_proto__get_packed_size(&mp);
	buf = xmalloc(len);
	onnx__model_proto__pack(&mp, buf);
	struct vpa_atomic a;
	FILE *f = vpa_atomic_open(path, &a, err);
	if (!f) {
		rc = err->status ? err->status : VPA_EIO;
		goto done;
	}
	if (fwrite(buf, 1, len, f) != len) {
		vpa_atomic_abort(&a);
		struct vpa_loc l = {path, 0, 0};
		rc = vpa_fail(err, VPA_EIO, &l, "write error");
		goto done;
	}
	rc = vpa_atomic_commit(&a, err);
done:
	free(buf);
	for (size_t i = 0; i < g.n_own; i++)
		free(g.own[i]);
	free(g.own);
	free(g.nodes);
	free(g.inits);
	return rc;
}
