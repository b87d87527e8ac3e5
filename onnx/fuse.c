/*
 * onnx/fuse.c - load-time fusions: a second node list (the fused graph) next
 * to the original one.
 *
 * 1. BatchNormalization folded into the Conv or Gemm before it: when the BN
 *    reads the Conv/Gemm output and nothing else does, that output is not a
 *    graph output, and W, B (if any) and the BN's scale, bias, mean and var
 *    are float initializers (Gemm: beta 1, B of (K, N) or (N, K) with transB),
 *    W'[m] = W[m] s[m] and B'[m] = (B[m] - mean[m]) s[m] + bias[m] with
 *    s = scale / sqrt(var + eps), in double, as new initializers.
 * 2. A bias Add after MatMul (the other input a float initializer of one row
 *    of B's column count, B an initializer) and one activation after Conv,
 *    Gemm or MatMul (Relu, LeakyRelu, Sigmoid, Tanh, Clip with constant
 *    bounds) become the producer's epilogue: Conv applies it where it
 *    finalises each output run (ox_conv_finish in onnx/conv.h, through ox_epi_act), Gemm
 *    and MatMul right after their SGEMM (ox_epilogue, from run.c), in one pass
 *    with the same float formulas as the standalone operators (so only the BN
 *    folding changes the arithmetic).
 * 3. PyTorch's exported GELU after Conv or MatMul (+ bias), the chain
 *    y = Mul(Mul(x, Add(Erf(Div(x, c1)), c2)), c3) of five nodes with scalar
 *    constants (initializers or Constant nodes; wav2vec2's feature encoder
 *    and every transformer feed-forward layer) becomes the producer's
 *    epilogue: one pass while the output is in cache instead of five over
 *    memory, with the same float operations in the same order (the Erf by
 *    the same ox_erf_f32), so the values are those of the unfused chain.
 * The values a fusion removes are marked `gone`; a run that requests any of
 *    them by name (an intermediate output, an A1/A2 layer) runs the original
 *    node list, so no requested value is ever fused away.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/conv.h"
#include "onnx/internal.h"
#include "onnx/vmath.h"

enum { ACT_NONE, ACT_RELU, ACT_LEAKY, ACT_SIGMOID, ACT_TANH, ACT_CLIP, ACT_GELU };

static const struct vpa_onnx_tensor *init_f32(const struct vpa_onnx_model *m, int v)
{
	if (v < 0 || m->values[v].kind != OX_V_INIT || m->values[v].init.dtype != VPA_ONNX_FLOAT)
		return NULL;
	return &m->values[v].init;
}

static int add_init(struct vpa_onnx_model *m, const char *node, const char *what,
		    struct vpa_onnx_tensor *t)
{
	m->values = xrealloc(m->values, (m->n_values + 1) * sizeof(*m->values));
	struct ox_value *v = &m->values[m->n_values];
	memset(v, 0, sizeof(*v));
	size_t len = strlen(node) + strlen(what) + 16;
	v->name = xmalloc(len);
	snprintf(v->name, len, "%s/%s(fused)", node, what);
	v->kind = OX_V_INIT;
	v->init = *t;
	v->last_use = v->last_data = -1;
	return (int)m->n_values++;
}

/* Fold BN node b into its producer p (Conv or Gemm); 1 when done. */
static int fold_bn(struct vpa_onnx_model *m, struct ox_node *p, const struct ox_node *b)
{
	if (b->n_in != 5 || b->n_out != 1)
		return 0;
	const struct vpa_onnx_tensor *w = init_f32(m, p->in[1]);
	const struct vpa_onnx_tensor *bias = p->n_in > 2 ? init_f32(m, p->in[2]) : NULL;
	if (!w || (p->n_in > 2 && p->in[2] >= 0 && !bias) || w->ndim < 2)
		return 0;
	int gemm = !strcmp(p->op_type, "Gemm");
	int tb = gemm && ox_attr_i(p, "transB", 0) != 0;
	if (gemm && (w->ndim != 2 || ox_attr_f(p, "beta", 1.0f) != 1.0f))
		return 0;
	int64_t M = gemm ? (tb ? w->dims[0] : w->dims[1]) : w->dims[0];
	if (bias && (bias->ndim != 1 || bias->dims[0] != M))
		return 0;
	const struct vpa_onnx_tensor *s[4];
	for (int i = 0; i < 4; i++)
		if (!(s[i] = init_f32(m, b->in[1 + i])) || s[i]->ndim != 1 || s[i]->dims[0] != M)
			return 0;
	double eps = ox_attr_f(b, "epsilon", 1e-5f);
	struct vpa_onnx_tensor w2, b2;
	ox_copy(&w2, w);
	int64_t bd[1] = {M};
	ox_alloc(&b2, VPA_ONNX_FLOAT, 1, bd);
	const float *sc = s[0]->data, *sh = s[1]->data, *mu = s[2]->data, *var = s[3]->data;
	float *W = w2.data, *B = b2.data;
	size_t per = vpa_onnx_numel(w) / (size_t)(M ? M : 1);
	for (int64_t c = 0; c < M; c++) {
		double f = (double)sc[c] / sqrt((double)var[c] + eps);
		double b0 = bias ? ((const float *)bias->data)[c] : 0.0;
		B[c] = (float)((b0 - mu[c]) * f + sh[c]);
		if (gemm && !tb) /* B is (K, N): column c */
			for (int64_t k = 0; k < w->dims[0]; k++)
				W[k * M + c] = (float)(W[k * M + c] * f);
		else
			for (size_t j = 0; j < per; j++)
				W[(size_t)c * per + j] = (float)(W[(size_t)c * per + j] * f);
	}
	int wv = add_init(m, p->name, "W", &w2), bv = add_init(m, p->name, "B", &b2);
	if (p->n_in < 3) {
		p->in = xrealloc(p->in, 3 * sizeof(int));
		p->n_in = 3;
	}
	p->in[1] = wv;
	p->in[2] = bv;
	p->out[0] = b->out[0];
	return 1;
}

/* Activation node a as p's epilogue; 1 when done. */
static int fuse_act(struct vpa_onnx_model *m, struct ox_node *p, const struct ox_node *a)
{
	struct ox_epi e = {ACT_NONE, 0.01f, -INFINITY, INFINITY, -1};
	if (p->epi && p->epi->act != ACT_NONE)
		return 0;
	if (a->n_out != 1)
		return 0;
	if (!strcmp(a->op_type, "Relu")) {
		e.act = ACT_RELU;
	} else if (!strcmp(a->op_type, "LeakyRelu")) {
		e.act = ACT_LEAKY;
		e.alpha = ox_attr_f(a, "alpha", 0.01f);
	} else if (!strcmp(a->op_type, "Sigmoid")) {
		e.act = ACT_SIGMOID;
	} else if (!strcmp(a->op_type, "Tanh")) {
		e.act = ACT_TANH;
	} else if (!strcmp(a->op_type, "Clip")) {
		e.act = ACT_CLIP;
		for (size_t j = 1; j < a->n_in; j++) {
			if (a->in[j] < 0)
				continue;
			const struct vpa_onnx_tensor *t = init_f32(m, a->in[j]);
			if (!t || vpa_onnx_numel(t) != 1)
				return 0;
			float v = *(const float *)t->data;
			if (j == 1)
				e.lo = v;
			else
				e.hi = v;
		}
	} else {
		return 0;
	}
	if (!p->epi) {
		p->epi = xmalloc(sizeof(*p->epi));
		*p->epi = e;
	} else {
		e.bias = p->epi->bias;
		*p->epi = e;
	}
	p->out[0] = a->out[0];
	return 1;
}

/* Add node a (MatMul output + a bias row) as p's epilogue bias; 1 when done. */
static int fuse_bias(struct vpa_onnx_model *m, struct ox_node *p, const struct ox_node *a,
		     int x)
{
	if (a->n_in != 2 || a->n_out != 1 || p->epi)
		return 0;
	int bv = a->in[0] == x ? a->in[1] : a->in[0];
	const struct vpa_onnx_tensor *bias = init_f32(m, bv), *w = init_f32(m, p->in[1]);
	if (!bias || !w || w->ndim != 2 || bias->ndim != 1 || bias->dims[0] != w->dims[1])
		return 0;
	p->epi = xmalloc(sizeof(*p->epi));
	*p->epi = (struct ox_epi){ACT_NONE, 0.01f, -INFINITY, INFINITY, bv, 0, 0, 0};
	p->out[0] = a->out[0];
	return 1;
}

/* The float scalar of value v: a one-element float initializer or the output
 * of a Constant node holding one float (f: the fused list, prod: producers). */
static int scalar_f32(const struct vpa_onnx_model *m, const struct ox_node *f, const int *prod,
		      int v, float *out)
{
	const struct vpa_onnx_tensor *t = init_f32(m, v);
	if (!t && v >= 0 && prod[v] >= 0 && !strcmp(f[prod[v]].op_type, "Constant")) {
		const struct ox_attr *a = ox_attr(&f[prod[v]], "value");
		if (a && a->type == OX_A_TENSOR && a->t.dtype == VPA_ONNX_FLOAT)
			t = &a->t;
	}
	if (!t || vpa_onnx_numel(t) != 1)
		return 0;
	*out = *(const float *)t->data;
	return 1;
}

/* The one reader of value v that is op `op` (uses[v] == 1 checked by the caller). */
static int reader(const struct ox_node *f, size_t nn, size_t from, int v, const char *op)
{
	for (size_t i = from; i < nn; i++)
		for (size_t j = 0; j < f[i].n_in; j++)
			if (f[i].in[j] == v)
				return !strcmp(f[i].op_type, op) && f[i].n_out == 1 ? (int)i : -1;
	return -1;
}

/*
 * Node d = Div(x, c1) opens PyTorch's GELU chain over x, the only output of
 * p (Conv or MatMul, maybe with its bias fused): Erf, Add(c2), Mul(x, .),
 * Mul(c3), every intermediate read once and no graph output, x read by the
 * Div and the first Mul only.  Fused into p's epilogue: 1, the chain's nodes
 * flagged in dead, its values in gone.
 */
static int fuse_gelu(struct vpa_onnx_model *m, struct ox_node *f, size_t nn, const int *prod,
		     const int *uses, size_t di, struct ox_node *p, unsigned char *dead,
		     unsigned char *gone)
{
	const struct ox_node *d = &f[di];
	int x = d->in[0];
	float c[3];
	if (d->n_in != 2 || d->n_out != 1 || uses[x] != 2 || (p->epi && p->epi->act) ||
	    !scalar_f32(m, f, prod, d->in[1], &c[0]))
		return 0;
	int ch[4], v = d->out[0];
	const char *ops[4] = {"Erf", "Add", "Mul", "Mul"};
	for (int k = 0; k < 4; k++) {
		if (v < 0 || uses[v] != 1 || m->values[v].is_output)
			return 0;
		if ((ch[k] = reader(f, nn, di + 1, v, ops[k])) < 0)
			return 0;
		const struct ox_node *n = &f[ch[k]];
		if (k > 0) {
			if (n->n_in != 2)
				return 0;
			int other = n->in[0] == v ? n->in[1] : n->in[0];
			if (k == 2 ? other != x : !scalar_f32(m, f, prod, other, &c[k == 1 ? 1 : 2]))
				return 0;
		}
		v = n->out[0];
	}
	if (!p->epi) {
		p->epi = xmalloc(sizeof(*p->epi));
		*p->epi = (struct ox_epi){ACT_NONE, 0.01f, -INFINITY, INFINITY, -1, 0, 0, 0};
	}
	p->epi->act = ACT_GELU;
	p->epi->gdiv = c[0];
	p->epi->gadd = c[1];
	p->epi->gmul = c[2];
	p->out[0] = v;
	gone[x] = 1;
	dead[di] = 1;
	for (int k = 0; k < 4; k++) {
		dead[ch[k]] = 1;
		if (k < 3)
			gone[f[ch[k]].out[0]] = 1;
	}
	gone[d->out[0]] = 1;
	return 1;
}

void ox_fuse(struct vpa_onnx_model *m)
{
	size_t nn = m->n_nodes, nv0 = m->n_values;
	if (!m->runnable || !nn)
		return;
	struct ox_node *f = xcalloc(nn + 1, sizeof(*f));
	for (size_t i = 0; i < nn; i++) {
		f[i] = m->nodes[i]; /* name, op_type, attrs, op borrowed */
		f[i].unsupported = NULL;
		f[i].in = xmalloc((f[i].n_in + 1) * sizeof(int));
		f[i].out = xmalloc((f[i].n_out + 1) * sizeof(int));
		memcpy(f[i].in, m->nodes[i].in, f[i].n_in * sizeof(int));
		memcpy(f[i].out, m->nodes[i].out, f[i].n_out * sizeof(int));
		f[i].epi = NULL;
	}
	int *uses = xcalloc(nv0 + 1, sizeof(int)), *prod = xmalloc((nv0 + 1) * sizeof(int));
	unsigned char *dead = xcalloc(nn + 1, 1), *gone = xcalloc(nv0 + 1, 1);
	for (size_t v = 0; v < nv0; v++)
		prod[v] = -1;
	for (size_t i = 0; i < nn; i++) {
		for (size_t j = 0; j < f[i].n_in; j++)
			if (f[i].in[j] >= 0)
				uses[f[i].in[j]]++;
		for (size_t o = 0; o < f[i].n_out; o++)
			if (f[i].out[o] >= 0)
				prod[f[i].out[o]] = (int)i;
	}
	size_t n_bn = 0, n_epi = 0;
	/* In topological order, so a chain Conv -> BN -> Relu folds then fuses. */
	for (size_t i = 0; i < nn; i++) {
		struct ox_node *a = &f[i];
		if (dead[i])
			continue; /* inside a fused GELU chain */
		int x = a->n_in ? a->in[0] : -1;
		if (!strcmp(a->op_type, "Div") && x >= 0 && x < (int)nv0 && prod[x] >= 0 &&
		    !m->values[x].is_output) {
			struct ox_node *p = &f[prod[x]];
			if (p->n_out == 1 && p->out[0] == x &&
			    (!strcmp(p->op_type, "Conv") || !strcmp(p->op_type, "MatMul")) &&
			    fuse_gelu(m, f, nn, prod, uses, i, p, dead, gone)) {
				n_epi++;
				int o = p->out[0];
				if (o >= 0 && o < (int)nv0)
					prod[o] = (int)(p - f);
				continue;
			}
		}
		if (!strcmp(a->op_type, "Add") && a->n_in == 2 && a->in[0] >= 0 && a->in[1] >= 0 &&
		    prod[a->in[0]] < 0)
			x = a->in[1];
		if (x < 0 || x >= (int)nv0 || prod[x] < 0 || uses[x] != 1 || m->values[x].is_output)
			continue;
		struct ox_node *p = &f[prod[x]];
		if (p->n_out != 1 || p->out[0] != x)
			continue;
		int conv = !strcmp(p->op_type, "Conv"), gemm = !strcmp(p->op_type, "Gemm"),
		    mm = !strcmp(p->op_type, "MatMul");
		int done = 0;
		if (!strcmp(a->op_type, "BatchNormalization") && (conv || gemm) && !p->epi)
			done = fold_bn(m, p, a) ? (n_bn++, 1) : 0;
		else if (!strcmp(a->op_type, "Add") && mm)
			done = fuse_bias(m, p, a, x) ? (n_epi++, 1) : 0;
		else if (conv || gemm || mm)
			done = fuse_act(m, p, a) ? (n_epi++, 1) : 0;
		if (!done)
			continue;
		/* p now produces a's output, in a's place of the order. */
		gone[x] = 1;
		dead[i] = 1;
		int o = p->out[0];
		if (o >= 0 && o < (int)nv0)
			prod[o] = (int)(p - f);
	}
	size_t k = 0;
	for (size_t i = 0; i < nn; i++) {
		if (dead[i]) {
			free(f[i].in);
			free(f[i].out);
			free(f[i].epi);
			continue;
		}
		f[k++] = f[i];
	}
	free(uses);
	free(prod);
	free(dead);
	if (k == nn) {
		ox_fuse_free(f, k);
		free(gone);
		return;
	}
	/* The producer of a folded pair runs where it ran: every value it now
	 * produces was produced at a later position, whose readers come later still. */
	m->fnodes = f;
	m->n_fnodes = k;
	m->n_fused = nn - k;
	m->n_bn_folded = n_bn;
	m->gone = xrealloc(gone, m->n_values + 1);
	memset(m->gone + nv0, 0, m->n_values - nv0 + 1);
	m->f_last_use = xmalloc((m->n_values + 1) * sizeof(int));
	m->f_last_data = xmalloc((m->n_values + 1) * sizeof(int));
	for (size_t v = 0; v < m->n_values; v++)
		m->f_last_use[v] = m->f_last_data[v] = -1;
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < f[i].n_in; j++)
			if (f[i].in[j] >= 0) {
				m->f_last_use[f[i].in[j]] = (int)i;
				if (ox_reads_data(&f[i]))
					m->f_last_data[f[i].in[j]] = (int)i;
			}
	(void)n_epi;
}

void ox_fuse_free(struct ox_node *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++) {
		free(f[i].in);
		free(f[i].out);
		free(f[i].epi);
	}
	free(f);
}

/* GELU as the exported chain computes it, node by node in float, in blocks
 * of 256 (the Erf's argument on the stack). */
static void gelu_f32(const struct ox_epi *e, float *restrict y, size_t n)
{
	float t[256];
	for (size_t i = 0; i < n; i += 256) {
		size_t len = n - i < 256 ? n - i : 256;
		for (size_t k = 0; k < len; k++)
			t[k] = y[i + k] / e->gdiv;
		ox_erf_f32(t, t, len);
		for (size_t k = 0; k < len; k++)
			y[i + k] = y[i + k] * (t[k] + e->gadd) * e->gmul;
	}
}

static void act_f32(const struct ox_epi *e, float *y, size_t n)
{
	switch (e->act) {
	case ACT_GELU:
		gelu_f32(e, y, n);
		break;
	case ACT_RELU:
		for (size_t i = 0; i < n; i++)
			y[i] = y[i] > 0 ? y[i] : 0;
		break;
	case ACT_LEAKY:
		for (size_t i = 0; i < n; i++)
			y[i] = y[i] < 0 ? e->alpha * y[i] : y[i];
		break;
	case ACT_SIGMOID: /* the standalone Sigmoid's function (ops_math.c) */
		ox_sigmoid_f32(y, y, n);
		break;
	case ACT_TANH:
		for (size_t i = 0; i < n; i++)
			y[i] = tanhf(y[i]);
		break;
	case ACT_CLIP:
		for (size_t i = 0; i < n; i++) {
			double v = y[i];
			v = v < e->lo ? e->lo : v;
			v = v > e->hi ? e->hi : v;
			y[i] = (float)v;
		}
		break;
	default:
		break;
	}
}

void ox_epi_act(const struct ox_epi *e, float *y, size_t n)
{
	act_f32(e, y, n);
}

void ox_epilogue(const struct vpa_onnx_model *m, const struct ox_node *n,
		 struct vpa_onnx_tensor *out)
{
	if (!n->epi || !strcmp(n->op_type, "Conv") || !out->data ||
	    out->dtype != VPA_ONNX_FLOAT)
		return;
	float *y = out->data;
	size_t total = vpa_onnx_numel(out);
	if (n->epi->bias >= 0) {
		const struct vpa_onnx_tensor *b = &m->values[n->epi->bias].init;
		size_t L = (size_t)b->dims[0];
		const float *bd = b->data;
		for (size_t i = 0; L && i + L <= total; i += L) {
			for (size_t j = 0; j < L; j++)
				y[i + j] += bd[j];
			act_f32(n->epi, y + i, L);
		}
		return;
	}
	act_f32(n->epi, y, total);
}
