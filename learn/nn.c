/*
 * learn/nn.c - layers, the sequential container, softmax cross-entropy.
 * See nn.h for the contract and NN.md for the conventions.
 *
 * Every matrix product is a vpa_sgemm call on whole batches: a layer's
 * input is all frames of all sequences of the batch, (rows, dim) row-major.
 * Reductions (batch-norm statistics, pooling, losses) accumulate in double.
 */
#include "learn/nn.h"
#include "learn/nn_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/la.h"

/* Rows of the TDNN splice buffer per GEMM in EVAL mode: small enough that the
 * spliced block stays in cache between the copy and the product. */
#define TDNN_CHUNK 1024

static const char *const kind_names[VPA_NN_N_KINDS] = {
	[VPA_NN_DENSE] = "dense",       [VPA_NN_TDNN] = "tdnn",
	[VPA_NN_RELU] = "relu",         [VPA_NN_SIGMOID] = "sigmoid",
	[VPA_NN_TANH] = "tanh",         [VPA_NN_BATCHNORM] = "batchnorm",
	[VPA_NN_DROPOUT] = "dropout",   [VPA_NN_STATSPOOL] = "statspool",
	[VPA_NN_EMBEDDING] = "embedding", [VPA_NN_LSTM] = "lstm",
	[VPA_NN_BILSTM] = "bilstm",
};

const char *vpa_nn_kind_name(enum vpa_nn_kind k)
{
	return (unsigned)k < VPA_NN_N_KINDS ? kind_names[k] : "?";
}

void vpa_nn_layer_spec_init(struct vpa_nn_layer_spec *s, enum vpa_nn_kind kind)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->p = 0.5f;
	s->eps = 1e-5f;
	s->momentum = 0.1f;
	s->var_floor = 1e-10f;
}

/* Grow *p to hold n floats (contents not kept). */
float *nn_grow(float **p, size_t *cap, size_t n)
{
	if (n > *cap) {
		free(*p);
		*p = xmalloc(xmul(n, sizeof(float)));
		*cap = n;
	}
	return *p;
}

static size_t *grow_sz(size_t **p, size_t *cap, size_t n)
{
	if (n > *cap) {
		free(*p);
		*p = xmalloc(xmul(n, sizeof(size_t)));
		*cap = n;
	}
	return *p;
}

/* ------------------------------------------------------------ building */

struct vpa_nn *vpa_nn_new(size_t input_dim)
{
	struct vpa_nn *net = xcalloc(1, sizeof(*net));
	net->in_dim = input_dim;
	return net;
}

static void layer_release(struct layer *l)
{
	free(l->y);
	free(l->off);
	free(l->c1);
	free(l->c2);
}

void vpa_nn_free(struct vpa_nn *net)
{
	if (!net)
		return;
	for (size_t i = 0; i < net->n; i++)
		layer_release(&net->L[i]);
	free(net->L);
	free(net->params);
	free(net->grads);
	free(net->state);
	free(net->scratch);
	free(net->scratch2);
	free(net->d[0]);
	free(net->d[1]);
	free(net->ibuf);
	free(net);
}

static int name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

/* Number of parameters and state values of a layer. */
static void layer_sizes(const struct layer *l, size_t *np, size_t *ns)
{
	size_t in = l->in, H = l->s.out;
	*np = *ns = 0;
	switch (l->s.kind) {
	case VPA_NN_DENSE:
		*np = l->out * in + l->out;
		break;
	case VPA_NN_TDNN:
		*np = l->out * in * l->s.n_context + l->out;
		break;
	case VPA_NN_BATCHNORM:
		*np = 2 * in;
		*ns = 2 * in;
		break;
	case VPA_NN_EMBEDDING:
		*np = l->s.vocab * l->s.out;
		break;
	case VPA_NN_LSTM:
		*np = 4 * H * in + 4 * H * H + 4 * H;
		break;
	case VPA_NN_BILSTM:
		*np = 2 * (4 * H * in + 4 * H * H + 4 * H);
		break;
	default:
		break;
	}
}

/*
 * Parameters are allocated on first use, not by vpa_nn_add, so that parsing
 * a model.yaml (the fuzz target) never allocates the tensors it describes.
 * New layers get zero parameters, batch norm gamma 1 and running var 1.
 */
void nn_ensure(struct vpa_nn *net)
{
	if (net->params && net->alloc_np == net->np && net->alloc_ns == net->ns)
		return;
	net->params = xrealloc(net->params, xmul(net->np + 1, sizeof(float)));
	net->grads = xrealloc(net->grads, xmul(net->np + 1, sizeof(float)));
	net->state = xrealloc(net->state, xmul(net->ns + 1, sizeof(float)));
	memset(net->params + net->alloc_np, 0, (net->np - net->alloc_np) * sizeof(float));
	memset(net->grads + net->alloc_np, 0, (net->np - net->alloc_np) * sizeof(float));
	memset(net->state + net->alloc_ns, 0, (net->ns - net->alloc_ns) * sizeof(float));
	for (size_t i = 0; i < net->n; i++) {
		struct layer *l = &net->L[i];
		if (l->s.kind != VPA_NN_BATCHNORM || l->poff < net->alloc_np)
			continue;
		for (size_t j = 0; j < l->in; j++) {
			net->params[l->poff + j] = 1.0f;
			net->state[l->soff + l->in + j] = 1.0f;
		}
	}
	net->alloc_np = net->np;
	net->alloc_ns = net->ns;
}

int vpa_nn_add(struct vpa_nn *net, const struct vpa_nn_layer_spec *s, struct vpa_err *err)
{
	const struct vpa_loc *loc = s->loc.file ? &s->loc : NULL;
	const char *kn = vpa_nn_kind_name(s->kind);
	size_t in = net->n ? net->L[net->n - 1].out : net->in_dim;
	if ((unsigned)s->kind >= VPA_NN_N_KINDS)
		return vpa_fail(err, VPA_EINPUT, loc, "unknown layer kind %d", (int)s->kind);
	if (s->kind == VPA_NN_EMBEDDING) {
		if (net->n != 0 || net->in_dim != 0)
			return vpa_fail(err, VPA_EINPUT, loc,
					"an embedding must be the first layer of a network without "
					"input_dim");
		if (s->vocab == 0 || s->out == 0)
			return vpa_fail(err, VPA_EINPUT, loc,
					"embedding needs a positive 'vocab' and 'dim'");
	} else if (in == 0) {
		return vpa_fail(err, VPA_EINPUT, loc,
				"%s layer has no input: give input_dim or start with an embedding", kn);
	}
	if (s->out > VPA_NN_MAX_DIM || s->vocab > VPA_NN_MAX_DIM)
		return vpa_fail(err, VPA_EINPUT, loc, "%s layer: sizes must be at most %d", kn,
				VPA_NN_MAX_DIM);
	struct layer l;
	memset(&l, 0, sizeof(l));
	l.s = *s;
	l.in = in;
	if (!l.s.name[0])
		snprintf(l.s.name, sizeof(l.s.name), "layer%zu", net->n + 1);
	if (!name_ok(l.s.name))
		return vpa_fail(err, VPA_EINPUT, loc,
				"layer name '%s' may contain only letters, digits, '_' and '-'",
				l.s.name);
	for (size_t i = 0; i < net->n; i++)
		if (strcmp(net->L[i].s.name, l.s.name) == 0)
			return vpa_fail(err, VPA_EINPUT, loc, "duplicate layer name '%s'", l.s.name);
	switch (s->kind) {
	case VPA_NN_TDNN:
		if (s->n_context == 0 || s->n_context > VPA_NN_MAX_CONTEXT)
			return vpa_fail(err, VPA_EINPUT, loc,
					"tdnn needs a 'context' of 1 to %d offsets", VPA_NN_MAX_CONTEXT);
		for (size_t j = 1; j < s->n_context; j++)
			if (s->context[j] <= s->context[j - 1])
				return vpa_fail(err, VPA_EINPUT, loc,
						"tdnn 'context' must be strictly increasing");
		for (size_t j = 0; j < s->n_context; j++)
			if (s->context[j] < -1000 || s->context[j] > 1000)
				return vpa_fail(err, VPA_EINPUT, loc,
						"tdnn 'context' offsets must be within -1000..1000");
		/* fall through */
	case VPA_NN_DENSE:
		if (s->out == 0)
			return vpa_fail(err, VPA_EINPUT, loc, "%s layer needs a positive 'out'", kn);
		l.out = s->out;
		break;
	case VPA_NN_DROPOUT:
		if (!(s->p >= 0 && s->p < 1))
			return vpa_fail(err, VPA_EINPUT, loc, "dropout 'p' must be in [0, 1)");
		l.out = in;
		break;
	case VPA_NN_BATCHNORM:
		if (!(s->eps > 0) || !(s->momentum >= 0 && s->momentum <= 1))
			return vpa_fail(err, VPA_EINPUT, loc,
					"batchnorm needs 'eps' > 0 and 'momentum' in [0, 1]");
		l.out = in;
		break;
	case VPA_NN_STATSPOOL:
		if (!(s->var_floor >= 0) || !isfinite(s->var_floor))
			return vpa_fail(err, VPA_EINPUT, loc,
					"statspool 'variance_floor' must be >= 0");
		l.out = 2 * in;
		break;
	case VPA_NN_EMBEDDING:
		l.out = s->out;
		break;
	case VPA_NN_LSTM:
	case VPA_NN_BILSTM:
		if (s->out == 0)
			return vpa_fail(err, VPA_EINPUT, loc, "%s layer needs a positive 'hidden'", kn);
		l.out = s->kind == VPA_NN_BILSTM ? 2 * s->out : s->out;
		break;
	default:
		l.out = in;
		break;
	}
	if (s->kind != VPA_NN_LSTM)
		l.s.reverse = 0;
	size_t np, ns;
	layer_sizes(&l, &np, &ns);
	l.poff = net->np;
	l.np = np;
	l.soff = net->ns;
	l.ns = ns;
	net->np += np;
	net->ns += ns;
	if (net->n == net->cap) {
		net->cap = net->cap ? 2 * net->cap : 8;
		net->L = xrealloc(net->L, xmul(net->cap, sizeof(*net->L)));
	}
	vpa_rng_split(&l.rng, net->seed, l.s.name);
	net->L[net->n++] = l;
	return 0;
}

static void add_or_bug(struct vpa_nn *net, const struct vpa_nn_layer_spec *s)
{
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_nn_add(net, s, &err) != 0)
		VPA_BUG("vpa_nn_add: %s", err.msg);
}

void vpa_nn_add_dense(struct vpa_nn *net, size_t out)
{
	struct vpa_nn_layer_spec s;
	vpa_nn_layer_spec_init(&s, VPA_NN_DENSE);
	s.out = out;
	add_or_bug(net, &s);
}

void vpa_nn_add_tdnn(struct vpa_nn *net, size_t out, const int *context, size_t n_context)
{
	struct vpa_nn_layer_spec s;
	vpa_nn_layer_spec_init(&s, VPA_NN_TDNN);
	s.out = out;
	if (n_context > VPA_NN_MAX_CONTEXT)
		VPA_BUG("tdnn context too long");
	memcpy(s.context, context, n_context * sizeof(int));
	s.n_context = n_context;
	add_or_bug(net, &s);
}

void vpa_nn_add_simple(struct vpa_nn *net, enum vpa_nn_kind kind)
{
	if (kind != VPA_NN_RELU && kind != VPA_NN_SIGMOID && kind != VPA_NN_TANH &&
	    kind != VPA_NN_BATCHNORM && kind != VPA_NN_STATSPOOL)
		VPA_BUG("vpa_nn_add_simple: kind %d takes arguments", (int)kind);
	struct vpa_nn_layer_spec s;
	vpa_nn_layer_spec_init(&s, kind);
	add_or_bug(net, &s);
}

void vpa_nn_add_dropout(struct vpa_nn *net, float p)
{
	struct vpa_nn_layer_spec s;
	vpa_nn_layer_spec_init(&s, VPA_NN_DROPOUT);
	s.p = p;
	add_or_bug(net, &s);
}

void vpa_nn_add_embedding(struct vpa_nn *net, size_t vocab, size_t dim)
{
	struct vpa_nn_layer_spec s;
	vpa_nn_layer_spec_init(&s, VPA_NN_EMBEDDING);
	s.vocab = vocab;
	s.out = dim;
	add_or_bug(net, &s);
}

void vpa_nn_add_lstm(struct vpa_nn *net, size_t hidden, int reverse)
{
	struct vpa_nn_layer_spec s;
	vpa_nn_layer_spec_init(&s, VPA_NN_LSTM);
	s.out = hidden;
	s.reverse = reverse != 0;
	add_or_bug(net, &s);
}

void vpa_nn_add_bilstm(struct vpa_nn *net, size_t hidden)
{
	struct vpa_nn_layer_spec s;
	vpa_nn_layer_spec_init(&s, VPA_NN_BILSTM);
	s.out = hidden;
	add_or_bug(net, &s);
}

void vpa_nn_set_seed(struct vpa_nn *net, uint64_t seed)
{
	net->seed = seed;
	for (size_t i = 0; i < net->n; i++)
		vpa_rng_split(&net->L[i].rng, seed ^ 0x64726f70ULL, net->L[i].s.name);
}

static void fill_uniform(struct vpa_rng *r, float *w, size_t n, double a)
{
	for (size_t i = 0; i < n; i++)
		w[i] = (float)((2.0 * vpa_rng_uniform(r) - 1.0) * a);
}

void vpa_nn_init_params(struct vpa_nn *net, uint64_t seed)
{
	nn_ensure(net);
	for (size_t i = 0; i < net->n; i++) {
		struct layer *l = &net->L[i];
		float *P = net->params + l->poff;
		struct vpa_rng r;
		vpa_rng_split(&r, seed, l->s.name);
		memset(P, 0, l->np * sizeof(float));
		switch (l->s.kind) {
		case VPA_NN_DENSE:
		case VPA_NN_TDNN: {
			size_t fan_in = l->np / l->out - 1, fan_out = l->out;
			int relu = i + 1 < net->n && net->L[i + 1].s.kind == VPA_NN_RELU;
			double a = relu ? sqrt(6.0 / (double)fan_in)
					: sqrt(6.0 / (double)(fan_in + fan_out));
			fill_uniform(&r, P, fan_in * fan_out, a);
			break;
		}
		case VPA_NN_BATCHNORM:
			for (size_t j = 0; j < l->in; j++) {
				P[j] = 1.0f;
				net->state[l->soff + j] = 0.0f;
				net->state[l->soff + l->in + j] = 1.0f;
			}
			break;
		case VPA_NN_EMBEDDING:
			for (size_t j = 0; j < l->np; j++)
				P[j] = (float)vpa_rng_normal(&r);
			break;
		case VPA_NN_LSTM:
		case VPA_NN_BILSTM: {
			size_t H = l->s.out, nd = l->s.kind == VPA_NN_BILSTM ? 2 : 1;
			size_t per = 4 * H * l->in + 4 * H * H + 4 * H;
			double a = 1.0 / sqrt((double)H);
			for (size_t d = 0; d < nd; d++) {
				float *Q = P + d * per;
				fill_uniform(&r, Q, 4 * H * l->in + 4 * H * H, a);
				float *b = Q + 4 * H * l->in + 4 * H * H;
				for (size_t j = 0; j < H; j++)
					b[H + j] = 1.0f; /* forget gate */
			}
			break;
		}
		default:
			break;
		}
	}
	vpa_nn_set_seed(net, seed);
}

size_t vpa_nn_n_layers(const struct vpa_nn *net)
{
	return net->n;
}

size_t vpa_nn_input_dim(const struct vpa_nn *net)
{
	return net->in_dim;
}

size_t vpa_nn_output_dim(const struct vpa_nn *net)
{
	return net->n ? net->L[net->n - 1].out : net->in_dim;
}

size_t vpa_nn_layer_dim(const struct vpa_nn *net, size_t i)
{
	if (i >= net->n)
		VPA_BUG("layer %zu of %zu", i, net->n);
	return net->L[i].out;
}

const struct vpa_nn_layer_spec *vpa_nn_layer(const struct vpa_nn *net, size_t i)
{
	if (i >= net->n)
		VPA_BUG("layer %zu of %zu", i, net->n);
	return &net->L[i].s;
}

float *vpa_nn_params(struct vpa_nn *net, size_t *n)
{
	nn_ensure(net);
	*n = net->np;
	return net->params;
}

float *vpa_nn_grads(struct vpa_nn *net, size_t *n)
{
	nn_ensure(net);
	*n = net->np;
	return net->grads;
}

float *vpa_nn_state(struct vpa_nn *net, size_t *n)
{
	nn_ensure(net);
	*n = net->ns;
	return net->state;
}

void vpa_nn_zero_grad(struct vpa_nn *net)
{
	nn_ensure(net);
	memset(net->grads, 0, net->np * sizeof(float));
}

size_t vpa_nn_n_tensors(const struct vpa_nn *net, size_t layer)
{
	if (layer >= net->n)
		VPA_BUG("layer %zu of %zu", layer, net->n);
	switch (net->L[layer].s.kind) {
	case VPA_NN_DENSE:
	case VPA_NN_TDNN:
		return 2;
	case VPA_NN_BATCHNORM:
		return 4;
	case VPA_NN_EMBEDDING:
		return 1;
	case VPA_NN_LSTM:
		return 3;
	case VPA_NN_BILSTM:
		return 6;
	default:
		return 0;
	}
}

void vpa_nn_tensor(struct vpa_nn *net, size_t layer, size_t k, struct vpa_nn_tensor *t)
{
	nn_ensure(net);
	if (k >= vpa_nn_n_tensors(net, layer))
		VPA_BUG("tensor %zu of layer %zu", k, layer);
	const struct layer *l = &net->L[layer];
	float *P = net->params + l->poff, *G = net->grads + l->poff;
	size_t in = l->in;
	memset(t, 0, sizeof(*t));
	t->trainable = 1;
	size_t off = 0;
	switch (l->s.kind) {
	case VPA_NN_DENSE:
	case VPA_NN_TDNN: {
		size_t fan_in = l->np / l->out - 1;
		if (k == 0) {
			t->name = "weight";
			t->ndim = 2;
			t->shape[0] = l->out;
			t->shape[1] = fan_in;
		} else {
			t->name = "bias";
			t->ndim = 1;
			t->shape[0] = l->out;
			off = l->out * fan_in;
		}
		break;
	}
	case VPA_NN_BATCHNORM: {
		static const char *const nm[4] = {"gamma", "beta", "running_mean", "running_var"};
		t->name = nm[k];
		t->ndim = 1;
		t->shape[0] = in;
		if (k >= 2) {
			t->trainable = 0;
			t->data = net->state + l->soff + (k - 2) * in;
			t->grad = NULL;
			return;
		}
		off = k * in;
		break;
	}
	case VPA_NN_EMBEDDING:
		t->name = "weight";
		t->ndim = 2;
		t->shape[0] = l->s.vocab;
		t->shape[1] = l->s.out;
		break;
	case VPA_NN_LSTM:
	case VPA_NN_BILSTM: {
		static const char *const nm[6] = {"w_ih", "w_hh", "bias",
						  "w_ih_reverse", "w_hh_reverse", "bias_reverse"};
		size_t H = l->s.out, per = 4 * H * in + 4 * H * H + 4 * H, j = k % 3;
		t->name = nm[k];
		off = (k / 3) * per;
		t->shape[0] = 4 * H;
		if (j == 0) {
			t->ndim = 2;
			t->shape[1] = in;
		} else if (j == 1) {
			t->ndim = 2;
			t->shape[1] = H;
			off += 4 * H * in;
		} else {
			t->ndim = 1;
			off += 4 * H * in + 4 * H * H;
		}
		break;
	}
	default:
		VPA_BUG("layer kind without tensors");
	}
	t->data = P + off;
	t->grad = G + off;
}

struct vpa_nn *vpa_nn_clone(const struct vpa_nn *net)
{
	struct vpa_nn *c = vpa_nn_new(net->in_dim);
	c->seed = net->seed;
	for (size_t i = 0; i < net->n; i++)
		add_or_bug(c, &net->L[i].s);
	vpa_nn_copy_params(c, net);
	for (size_t i = 0; i < net->n; i++)
		c->L[i].rng = net->L[i].rng;
	return c;
}

void vpa_nn_copy_params(struct vpa_nn *dst, const struct vpa_nn *src)
{
	nn_ensure(dst);
	nn_ensure((struct vpa_nn *)src); /* logically const: defaults */
	if (dst->np != src->np || dst->ns != src->ns || dst->n != src->n)
		VPA_BUG("vpa_nn_copy_params: different topologies");
	memcpy(dst->params, src->params, src->np * sizeof(float));
	memcpy(dst->state, src->state, src->ns * sizeof(float));
}

/* -------------------------------------------------------------- helpers */

static void fill_bias(float *y, size_t rows, size_t n, const float *b)
{
	for (size_t r = 0; r < rows; r++)
		memcpy(y + r * n, b, n * sizeof(float));
}

static void add_colsum(float *db, const float *dy, size_t rows, size_t n)
{
	for (size_t r = 0; r < rows; r++) {
		const float *d = dy + r * n;
		for (size_t j = 0; j < n; j++)
			db[j] += d[j];
	}
}

static inline float sigm(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/*
 * Splice rows r0..r1-1 of the batch: block j of output row r is input frame
 * clamp(t + context[j]) of r's sequence, clamped to the sequence's first and
 * last frames (Kaldi's convention when evaluating a whole utterance).
 */
static void splice(const float *x, size_t in, const size_t *off, size_t n_seq, const int *ctx,
		   size_t k, size_t r0, size_t r1, float *S)
{
	size_t lo = 0, hi = n_seq; /* find b with off[b] <= r0 < off[b+1] */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (off[mid] <= r0)
			lo = mid;
		else
			hi = mid;
	}
	size_t b = lo;
	for (size_t r = r0; r < r1; r++) {
		while (r >= off[b + 1])
			b++;
		long s = (long)off[b], e = (long)off[b + 1] - 1;
		float *o = S + (r - r0) * k * in;
		for (size_t j = 0; j < k; j++) {
			long u = (long)r + ctx[j];
			u = u < s ? s : u > e ? e : u;
			memcpy(o + j * in, x + (size_t)u * in, in * sizeof(float));
		}
	}
}

/* dx[clamp(t + c_j)] += dS[t, block j] */
static void unsplice_add(float *dx, size_t in, const size_t *off, size_t n_seq, const int *ctx,
			 size_t k, const float *dS)
{
	for (size_t b = 0; b < n_seq; b++) {
		long s = (long)off[b], e = (long)off[b + 1] - 1;
		for (long r = s; r <= e; r++) {
			const float *d = dS + (size_t)r * k * in;
			for (size_t j = 0; j < k; j++) {
				long u = r + ctx[j];
				u = u < s ? s : u > e ? e : u;
				float *o = dx + (size_t)u * in;
				const float *dj = d + j * in;
				for (size_t q = 0; q < in; q++)
					o[q] += dj[q];
			}
		}
	}
}

static int tdnn_is_plain(const struct layer *l)
{
	return l->s.n_context == 1 && l->s.context[0] == 0;
}

/* -------------------------------------------------------------- forward */

static void dense_fwd(struct vpa_nn *net, struct layer *l, const float *x, size_t rows)
{
	const float *W = net->params + l->poff, *b = W + l->out * l->in;
	fill_bias(l->y, rows, l->out, b);
	vpa_sgemm(0, 1, rows, l->out, l->in, 1.0f, x, l->in, W, l->in, 1.0f, l->y, l->out);
}

static void tdnn_fwd(struct vpa_nn *net, struct layer *l, const float *x, const size_t *off,
		     size_t n_seq, size_t rows, int train)
{
	size_t k = l->s.n_context, in = l->in, kin = k * in, out = l->out;
	const float *W = net->params + l->poff, *b = W + out * kin;
	if (tdnn_is_plain(l)) {
		dense_fwd(net, l, x, rows);
		return;
	}
	fill_bias(l->y, rows, out, b);
	if (train) { /* keep the whole splice for the weight gradient */
		float *S = nn_grow(&l->c1, &l->c1_cap, xmul(rows, kin));
		splice(x, in, off, n_seq, l->s.context, k, 0, rows, S);
		vpa_sgemm(0, 1, rows, out, kin, 1.0f, S, kin, W, kin, 1.0f, l->y, out);
		return;
	}
	size_t ch = rows < TDNN_CHUNK ? rows : TDNN_CHUNK;
	float *S = nn_grow(&net->scratch, &net->scratch_cap, xmul(ch, kin));
	for (size_t r0 = 0; r0 < rows; r0 += ch) {
		size_t r1 = r0 + ch < rows ? r0 + ch : rows;
		splice(x, in, off, n_seq, l->s.context, k, r0, r1, S);
		vpa_sgemm(0, 1, r1 - r0, out, kin, 1.0f, S, kin, W, kin, 1.0f, l->y + r0 * out, out);
	}
}

static void bn_fwd(struct vpa_nn *net, struct layer *l, const float *x, size_t rows, int train)
{
	size_t D = l->in;
	const float *gamma = net->params + l->poff, *beta = gamma + D;
	float *rmean = net->state + l->soff, *rvar = rmean + D;
	float *xhat = nn_grow(&l->c1, &l->c1_cap, xmul(rows, D));
	float *istd = nn_grow(&l->c2, &l->c2_cap, D);
	float *mu = nn_grow(&net->scratch2, &net->scratch2_cap, D);
	if (train) {
		double *s1 = xcalloc(2 * D, sizeof(double)), *s2 = s1 + D;
		for (size_t r = 0; r < rows; r++)
			for (size_t j = 0; j < D; j++)
				s1[j] += x[r * D + j];
		for (size_t j = 0; j < D; j++)
			s1[j] /= (double)rows;
		for (size_t r = 0; r < rows; r++)
			for (size_t j = 0; j < D; j++) {
				double d = x[r * D + j] - s1[j];
				s2[j] += d * d;
			}
		double m = l->s.momentum;
		for (size_t j = 0; j < D; j++) {
			double var = s2[j] / (double)rows;
			mu[j] = (float)s1[j];
			istd[j] = (float)(1.0 / sqrt(var + l->s.eps));
			/* running variance with the unbiased estimate, as PyTorch */
			double uv = rows > 1 ? s2[j] / (double)(rows - 1) : var;
			rmean[j] = (float)((1 - m) * rmean[j] + m * s1[j]);
			rvar[j] = (float)((1 - m) * rvar[j] + m * uv);
		}
		free(s1);
	} else {
		for (size_t j = 0; j < D; j++) {
			mu[j] = rmean[j];
			istd[j] = (float)(1.0 / sqrt((double)rvar[j] + l->s.eps));
		}
	}
	for (size_t r = 0; r < rows; r++) {
		const float *xr = x + r * D;
		float *h = xhat + r * D, *y = l->y + r * D;
		for (size_t j = 0; j < D; j++) {
			h[j] = (xr[j] - mu[j]) * istd[j];
			y[j] = gamma[j] * h[j] + beta[j];
		}
	}
}

static void dropout_fwd(struct layer *l, const float *x, size_t rows, int train)
{
	size_t n = rows * l->in;
	if (!train || l->s.p == 0) {
		memcpy(l->y, x, n * sizeof(float));
		return;
	}
	float *m = nn_grow(&l->c1, &l->c1_cap, n);
	float keep = 1.0f / (1.0f - l->s.p);
	for (size_t i = 0; i < n; i++) {
		m[i] = vpa_rng_uniform(&l->rng) < l->s.p ? 0.0f : keep;
		l->y[i] = x[i] * m[i];
	}
}

static int statspool_fwd(struct layer *l, const float *x, const size_t *off, size_t n_seq,
			 struct vpa_err *err)
{
	size_t D = l->in;
	double *s = xmalloc(xmul(2 * D, sizeof(double))), *v = s + D;
	for (size_t b = 0; b < n_seq; b++) {
		size_t T = off[b + 1] - off[b];
		if (T == 0) {
			free(s);
			return vpa_fail(err, VPA_EINPUT, NULL,
					"sequence %zu of the batch is empty: statistics pooling "
					"needs at least one frame", b);
		}
		const float *xb = x + off[b] * D;
		memset(s, 0, 2 * D * sizeof(double));
		for (size_t t = 0; t < T; t++)
			for (size_t j = 0; j < D; j++)
				s[j] += xb[t * D + j];
		for (size_t j = 0; j < D; j++)
			s[j] /= (double)T;
		for (size_t t = 0; t < T; t++)
			for (size_t j = 0; j < D; j++) {
				double d = xb[t * D + j] - s[j];
				v[j] += d * d;
			}
		float *y = l->y + b * 2 * D;
		for (size_t j = 0; j < D; j++) {
			double var = v[j] / (double)T;
			y[j] = (float)s[j];
			y[D + j] = (float)sqrt(var > l->s.var_floor ? var : l->s.var_floor);
		}
	}
	free(s);
	return 0;
}

static int embedding_fwd(struct vpa_nn *net, struct layer *l, const uint32_t *ids, size_t rows,
			 struct vpa_err *err)
{
	const float *E = net->params + l->poff;
	size_t D = l->out;
	for (size_t r = 0; r < rows; r++) {
		if (ids[r] >= l->s.vocab)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"token id %u at position %zu is outside the vocabulary (%zu words)",
					ids[r], r, l->s.vocab);
		memcpy(l->y + r * D, E + (size_t)ids[r] * D, D * sizeof(float));
	}
	return 0;
}

/*
 * One LSTM direction (gates i f g o, PyTorch's order):
 *   [i f g o] = x_t W_ih^T + h_{t-1} W_hh^T + b
 *   c_t = sig(f) c_{t-1} + sig(i) tanh(g);   h_t = sig(o) tanh(c_t)
 * h is written to l->y at column dir*H (row stride l->out).  Caches: the
 * activated gates (rows, 4H) at c1 + dir*rows*4H and c_t (rows, H) at
 * c2 + dir*rows*H.  All sequences advance together: step t gathers the
 * h_{t-1} of the sequences still running into one (n_active, H) matrix.
 */
static void lstm_fwd_dir(struct vpa_nn *net, struct layer *l, size_t dir, int rev, const float *x,
			 const size_t *off, size_t n_seq, size_t rows)
{
	size_t H = l->s.out, in = l->in, G4 = 4 * H, ldy = l->out;
	size_t per = G4 * in + G4 * H + G4;
	const float *Wih = net->params + l->poff + dir * per, *Whh = Wih + G4 * in,
		    *bias = Whh + G4 * H;
	float *G = l->c1 + dir * rows * G4, *C = l->c2 + dir * rows * H, *Y = l->y + dir * H;
	fill_bias(G, rows, G4, bias);
	vpa_sgemm(0, 1, rows, G4, in, 1.0f, x, in, Wih, in, 1.0f, G, G4);
	size_t maxlen = 0;
	for (size_t b = 0; b < n_seq; b++)
		if (off[b + 1] - off[b] > maxlen)
			maxlen = off[b + 1] - off[b];
	float *hg = nn_grow(&net->scratch, &net->scratch_cap, xmul(n_seq, H + G4));
	float *gg = hg + n_seq * H;
	size_t *ridx = grow_sz(&net->ibuf, &net->ibuf_cap, n_seq);
	for (size_t t = 0; t < maxlen; t++) {
		size_t na = 0;
		for (size_t b = 0; b < n_seq; b++) {
			size_t len = off[b + 1] - off[b];
			if (t >= len)
				continue;
			size_t r = rev ? off[b] + len - 1 - t : off[b] + t;
			ridx[na] = r;
			if (t > 0)
				memcpy(hg + na * H, Y + (rev ? r + 1 : r - 1) * ldy, H * sizeof(float));
			na++;
		}
		if (t > 0) {
			vpa_sgemm(0, 1, na, G4, H, 1.0f, hg, H, Whh, H, 0.0f, gg, G4);
			for (size_t a = 0; a < na; a++) {
				float *g = G + ridx[a] * G4;
				const float *q = gg + a * G4;
				for (size_t j = 0; j < G4; j++)
					g[j] += q[j];
			}
		}
		for (size_t a = 0; a < na; a++) {
			size_t r = ridx[a];
			float *g = G + r * G4, *c = C + r * H, *y = Y + r * ldy;
			const float *cp = t > 0 ? C + (rev ? r + 1 : r - 1) * H : NULL;
			for (size_t j = 0; j < H; j++) {
				float i = sigm(g[j]), f = sigm(g[H + j]), gt = tanhf(g[2 * H + j]),
				      o = sigm(g[3 * H + j]);
				g[j] = i;
				g[H + j] = f;
				g[2 * H + j] = gt;
				g[3 * H + j] = o;
				c[j] = (cp ? f * cp[j] : 0.0f) + i * gt;
				y[j] = o * tanhf(c[j]);
			}
		}
	}
}

static void lstm_fwd(struct vpa_nn *net, struct layer *l, const float *x, const size_t *off,
		     size_t n_seq, size_t rows)
{
	size_t H = l->s.out, nd = l->s.kind == VPA_NN_BILSTM ? 2 : 1;
	nn_grow(&l->c1, &l->c1_cap, xmul(nd * rows, 4 * H));
	nn_grow(&l->c2, &l->c2_cap, xmul(nd * rows, H));
	if (nd == 1) {
		lstm_fwd_dir(net, l, 0, l->s.reverse, x, off, n_seq, rows);
	} else {
		lstm_fwd_dir(net, l, 0, 0, x, off, n_seq, rows);
		lstm_fwd_dir(net, l, 1, 1, x, off, n_seq, rows);
	}
}

int vpa_nn_forward(struct vpa_nn *net, const struct vpa_nn_batch *in, enum vpa_nn_mode mode,
		   struct vpa_err *err)
{
	if (net->n == 0)
		VPA_BUG("forward through an empty network");
	if (!in->off || in->off[0] != 0)
		VPA_BUG("batch offsets must start at 0");
	for (size_t b = 0; b < in->n_seq; b++)
		if (in->off[b + 1] < in->off[b])
			VPA_BUG("batch offsets must be non-decreasing");
	size_t rows = in->n_seq ? in->off[in->n_seq] : 0;
	if (rows == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "a batch with no frame");
	int emb = net->L[0].s.kind == VPA_NN_EMBEDDING;
	if (emb ? !in->ids : !in->x)
		VPA_BUG("batch lacks %s", emb ? "ids" : "x");
	nn_ensure(net);
	net->in = *in;
	net->train = mode == VPA_NN_TRAIN;
	const float *x = in->x;
	const size_t *off = in->off;
	size_t n_seq = in->n_seq;
	for (size_t i = 0; i < net->n; i++) {
		struct layer *l = &net->L[i];
		size_t orows = l->s.kind == VPA_NN_STATSPOOL ? n_seq : rows;
		size_t *lo = grow_sz(&l->off, &l->off_cap, n_seq + 1);
		for (size_t b = 0; b <= n_seq; b++)
			lo[b] = l->s.kind == VPA_NN_STATSPOOL ? b : off[b];
		l->n_seq = n_seq;
		l->rows = orows;
		nn_grow(&l->y, &l->y_cap, xmul(orows, l->out) + 1);
		size_t n = rows * l->in;
		int rc = 0;
		switch (l->s.kind) {
		case VPA_NN_DENSE:
			dense_fwd(net, l, x, rows);
			break;
		case VPA_NN_TDNN:
			tdnn_fwd(net, l, x, off, n_seq, rows, net->train);
			break;
		case VPA_NN_RELU:
			for (size_t j = 0; j < n; j++)
				l->y[j] = x[j] > 0 ? x[j] : 0.0f;
			break;
		case VPA_NN_SIGMOID:
			for (size_t j = 0; j < n; j++)
				l->y[j] = sigm(x[j]);
			break;
		case VPA_NN_TANH:
			for (size_t j = 0; j < n; j++)
				l->y[j] = tanhf(x[j]);
			break;
		case VPA_NN_BATCHNORM:
			bn_fwd(net, l, x, rows, net->train);
			break;
		case VPA_NN_DROPOUT:
			dropout_fwd(l, x, rows, net->train);
			break;
		case VPA_NN_STATSPOOL:
			rc = statspool_fwd(l, x, off, n_seq, err);
			break;
		case VPA_NN_EMBEDDING:
			rc = embedding_fwd(net, l, in->ids, rows, err);
			break;
		case VPA_NN_LSTM:
		case VPA_NN_BILSTM:
			lstm_fwd(net, l, x, off, n_seq, rows);
			break;
		default:
			VPA_BUG("layer kind %d", (int)l->s.kind);
		}
		if (rc)
			return rc;
		x = l->y;
		off = l->off;
		rows = orows;
	}
	net->fwd_ok = 1;
	return 0;
}

const float *vpa_nn_activation(const struct vpa_nn *net, size_t i, size_t *rows, size_t *dim)
{
	if (i >= net->n)
		VPA_BUG("layer %zu of %zu", i, net->n);
	if (rows)
		*rows = net->L[i].rows;
	if (dim)
		*dim = net->L[i].out;
	return net->L[i].y;
}

const float *vpa_nn_output(const struct vpa_nn *net, size_t *rows, size_t *dim)
{
	return vpa_nn_activation(net, net->n - 1, rows, dim);
}

const size_t *vpa_nn_offsets(const struct vpa_nn *net, size_t i, size_t *n_seq)
{
	if (i >= net->n)
		VPA_BUG("layer %zu of %zu", i, net->n);
	if (n_seq)
		*n_seq = net->L[i].n_seq;
	return net->L[i].off;
}

/* ------------------------------------------------------------- backward */

static void dense_bwd(struct vpa_nn *net, struct layer *l, const float *x, size_t fan_in,
		      size_t rows, const float *dy, float *dx)
{
	const float *W = net->params + l->poff;
	float *dW = net->grads + l->poff, *db = dW + l->out * fan_in;
	vpa_sgemm(1, 0, l->out, fan_in, rows, 1.0f, dy, l->out, x, fan_in, 1.0f, dW, fan_in);
	add_colsum(db, dy, rows, l->out);
	if (dx)
		vpa_sgemm(0, 0, rows, fan_in, l->out, 1.0f, dy, l->out, W, fan_in, 0.0f, dx, fan_in);
}

static void tdnn_bwd(struct vpa_nn *net, struct layer *l, const float *x, const size_t *off,
		     size_t n_seq, size_t rows, const float *dy, float *dx)
{
	if (tdnn_is_plain(l)) {
		dense_bwd(net, l, x, l->in, rows, dy, dx);
		return;
	}
	size_t k = l->s.n_context, kin = k * l->in;
	dense_bwd(net, l, l->c1, kin, rows, dy, NULL);
	if (!dx)
		return;
	const float *W = net->params + l->poff;
	float *dS = nn_grow(&net->scratch, &net->scratch_cap, xmul(rows, kin));
	vpa_sgemm(0, 0, rows, kin, l->out, 1.0f, dy, l->out, W, kin, 0.0f, dS, kin);
	memset(dx, 0, rows * l->in * sizeof(float));
	unsplice_add(dx, l->in, off, n_seq, l->s.context, k, dS);
}

static void bn_bwd(struct vpa_nn *net, struct layer *l, size_t rows, const float *dy, float *dx,
		   int train)
{
	size_t D = l->in;
	const float *gamma = net->params + l->poff, *xhat = l->c1, *istd = l->c2;
	float *dgamma = net->grads + l->poff, *dbeta = dgamma + D;
	double *sd = xcalloc(2 * D, sizeof(double)), *sdx = sd + D; /* sum dxhat, sum dxhat xhat */
	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < D; j++) {
			float d = dy[r * D + j], h = xhat[r * D + j];
			dgamma[j] += d * h;
			dbeta[j] += d;
			sd[j] += (double)d * gamma[j];
			sdx[j] += (double)d * gamma[j] * h;
		}
	if (dx) {
		double R = (double)rows;
		for (size_t r = 0; r < rows; r++)
			for (size_t j = 0; j < D; j++) {
				double dh = (double)dy[r * D + j] * gamma[j];
				if (train)
					dx[r * D + j] = (float)(istd[j] *
						(dh - sd[j] / R - xhat[r * D + j] * sdx[j] / R));
				else
					dx[r * D + j] = (float)(istd[j] * dh);
			}
	}
	free(sd);
}

static void statspool_bwd(struct layer *l, const float *x, const size_t *off, size_t n_seq,
			  const float *dy, float *dx)
{
	size_t D = l->in;
	for (size_t b = 0; b < n_seq; b++) {
		size_t T = off[b + 1] - off[b];
		const float *y = l->y + b * 2 * D, *d = dy + b * 2 * D;
		const float *xb = x + off[b] * D;
		float *o = dx + off[b] * D;
		for (size_t j = 0; j < D; j++) {
			double mu = y[j], sd = y[D + j];
			/* above the floor, d std / d x_t = (x_t - mu) / (T std) */
			int live = (double)sd * sd > l->s.var_floor && sd > 0;
			double a = d[j] / (double)T, c = live ? d[D + j] / ((double)T * sd) : 0.0;
			for (size_t t = 0; t < T; t++)
				o[t * D + j] = (float)(a + c * (xb[t * D + j] - mu));
		}
	}
}

/*
 * Back-propagation through time for one direction.  Going backwards in
 * time, dh and dc flowing from step t+1 to step t are kept per sequence in
 * DH, DC (n_seq, H); the recurrent product dG_t W_hh runs on the gathered
 * rows of the sequences active at t.  The weight gradients are then whole-
 * batch GEMMs: dW_hh += dG^T Hprev, dW_ih += dG^T X.
 */
static void lstm_bwd_dir(struct vpa_nn *net, struct layer *l, size_t dir, int rev, const float *x,
			 const size_t *off, size_t n_seq, size_t rows, const float *dy, float *dx,
			 float beta)
{
	size_t H = l->s.out, in = l->in, G4 = 4 * H, ldy = l->out;
	size_t per = G4 * in + G4 * H + G4;
	const float *Wih = net->params + l->poff + dir * per, *Whh = Wih + G4 * in;
	float *dWih = net->grads + l->poff + dir * per, *dWhh = dWih + G4 * in, *db = dWhh + G4 * H;
	const float *G = l->c1 + dir * rows * G4, *C = l->c2 + dir * rows * H, *Y = l->y + dir * H;
	const float *DY = dy + dir * H;
	size_t maxlen = 0;
	for (size_t b = 0; b < n_seq; b++)
		if (off[b + 1] - off[b] > maxlen)
			maxlen = off[b + 1] - off[b];
	/* scratch: dG (rows, 4H) | Hprev (rows, H) | DH, DC (n_seq, H) | gathered dG (n_seq, 4H)
	 * | gathered dh (n_seq, H) */
	size_t need = rows * G4 + rows * H + 2 * n_seq * H + n_seq * G4 + n_seq * H;
	float *dG = nn_grow(&net->scratch, &net->scratch_cap, need);
	float *Hp = dG + rows * G4, *DH = Hp + rows * H, *DC = DH + n_seq * H;
	float *gdg = DC + n_seq * H, *gdh = gdg + n_seq * G4;
	size_t *bidx = grow_sz(&net->ibuf, &net->ibuf_cap, 2 * n_seq);
	size_t *ridx = bidx + n_seq;
	memset(DH, 0, 2 * n_seq * H * sizeof(float));
	for (size_t t = maxlen; t-- > 0;) {
		size_t na = 0;
		for (size_t b = 0; b < n_seq; b++) {
			size_t len = off[b + 1] - off[b];
			if (t >= len)
				continue;
			size_t r = rev ? off[b] + len - 1 - t : off[b] + t;
			size_t rp = rev ? r + 1 : r - 1;
			const float *g = G + r * G4, *c = C + r * H, *cp = t > 0 ? C + rp * H : NULL;
			const float *d = DY + r * ldy;
			float *dh = DH + b * H, *dc = DC + b * H, *o = dG + r * G4;
			for (size_t j = 0; j < H; j++) {
				float i = g[j], f = g[H + j], gt = g[2 * H + j], og = g[3 * H + j];
				float tc = tanhf(c[j]);
				float dhj = d[j] + dh[j];
				float dcj = dc[j] + dhj * og * (1.0f - tc * tc);
				float cpj = cp ? cp[j] : 0.0f;
				o[j] = dcj * gt * i * (1.0f - i);
				o[H + j] = dcj * cpj * f * (1.0f - f);
				o[2 * H + j] = dcj * i * (1.0f - gt * gt);
				o[3 * H + j] = dhj * tc * og * (1.0f - og);
				dc[j] = dcj * f;
			}
			if (t > 0) {
				memcpy(Hp + r * H, Y + rp * ldy, H * sizeof(float));
				memcpy(gdg + na * G4, o, G4 * sizeof(float));
			} else {
				memset(Hp + r * H, 0, H * sizeof(float));
				memset(dh, 0, H * sizeof(float));
				memset(dc, 0, H * sizeof(float));
			}
			bidx[na] = b;
			ridx[na] = r;
			na++;
		}
		if (t > 0) {
			vpa_sgemm(0, 0, na, H, G4, 1.0f, gdg, G4, Whh, H, 0.0f, gdh, H);
			for (size_t a = 0; a < na; a++)
				memcpy(DH + bidx[a] * H, gdh + a * H, H * sizeof(float));
		}
	}
	vpa_sgemm(1, 0, G4, H, rows, 1.0f, dG, G4, Hp, H, 1.0f, dWhh, H);
	vpa_sgemm(1, 0, G4, in, rows, 1.0f, dG, G4, x, in, 1.0f, dWih, in);
	add_colsum(db, dG, rows, G4);
	if (dx)
		vpa_sgemm(0, 0, rows, in, G4, 1.0f, dG, G4, Wih, in, beta, dx, in);
}

static void lstm_bwd(struct vpa_nn *net, struct layer *l, const float *x, const size_t *off,
		     size_t n_seq, size_t rows, const float *dy, float *dx)
{
	if (l->s.kind == VPA_NN_LSTM) {
		lstm_bwd_dir(net, l, 0, l->s.reverse, x, off, n_seq, rows, dy, dx, 0.0f);
	} else {
		lstm_bwd_dir(net, l, 0, 0, x, off, n_seq, rows, dy, dx, 0.0f);
		lstm_bwd_dir(net, l, 1, 1, x, off, n_seq, rows, dy, dx, 1.0f);
	}
}

void vpa_nn_backward(struct vpa_nn *net, const float *dout, float *dx)
{
	if (!net->fwd_ok || !net->train)
		VPA_BUG("vpa_nn_backward needs a TRAIN forward first");
	if (dx && net->L[0].s.kind == VPA_NN_EMBEDDING)
		VPA_BUG("no input gradient for an embedding network");
	const float *d = dout;
	for (size_t i = net->n; i-- > 0;) {
		struct layer *l = &net->L[i];
		const float *x = i ? net->L[i - 1].y : net->in.x;
		const size_t *off = i ? net->L[i - 1].off : net->in.off;
		size_t n_seq = net->in.n_seq;
		size_t rows = off[n_seq];
		float *o;
		if (i == 0)
			o = dx;
		else
			o = nn_grow(&net->d[i & 1], &net->d_cap[i & 1], xmul(rows, l->in) + 1);
		size_t n = rows * l->in;
		switch (l->s.kind) {
		case VPA_NN_DENSE:
			dense_bwd(net, l, x, l->in, rows, d, o);
			break;
		case VPA_NN_TDNN:
			tdnn_bwd(net, l, x, off, n_seq, rows, d, o);
			break;
		case VPA_NN_RELU:
			if (o)
				for (size_t j = 0; j < n; j++)
					o[j] = l->y[j] > 0 ? d[j] : 0.0f;
			break;
		case VPA_NN_SIGMOID:
			if (o)
				for (size_t j = 0; j < n; j++)
					o[j] = d[j] * l->y[j] * (1.0f - l->y[j]);
			break;
		case VPA_NN_TANH:
			if (o)
				for (size_t j = 0; j < n; j++)
					o[j] = d[j] * (1.0f - l->y[j] * l->y[j]);
			break;
		case VPA_NN_BATCHNORM:
			bn_bwd(net, l, rows, d, o, 1);
			break;
		case VPA_NN_DROPOUT:
			if (o) {
				if (l->s.p == 0)
					memcpy(o, d, n * sizeof(float));
				else
					for (size_t j = 0; j < n; j++)
						o[j] = d[j] * l->c1[j];
			}
			break;
		case VPA_NN_STATSPOOL:
			if (o)
				statspool_bwd(l, x, off, n_seq, d, o);
			break;
		case VPA_NN_EMBEDDING: {
			float *dE = net->grads + l->poff;
			size_t D = l->out;
			for (size_t r = 0; r < rows; r++) {
				float *e = dE + (size_t)net->in.ids[r] * D;
				for (size_t j = 0; j < D; j++)
					e[j] += d[r * D + j];
			}
			break;
		}
		case VPA_NN_LSTM:
		case VPA_NN_BILSTM:
			lstm_bwd(net, l, x, off, n_seq, rows, d, o);
			break;
		default:
			VPA_BUG("layer kind %d", (int)l->s.kind);
		}
		d = o;
	}
}

/* ----------------------------------------------------------------- loss */

void vpa_nn_targets_init(struct vpa_nn_targets *t)
{
	memset(t, 0, sizeof(*t));
	t->temperature = 1.0f;
}

void vpa_nn_softmax(const float *z, size_t R, size_t K, float *out)
{
	for (size_t r = 0; r < R; r++) {
		const float *a = z + r * K;
		float *o = out + r * K;
		float mx = a[0];
		for (size_t k = 1; k < K; k++)
			mx = a[k] > mx ? a[k] : mx;
		double s = 0;
		for (size_t k = 0; k < K; k++)
			s += exp((double)a[k] - mx);
		for (size_t k = 0; k < K; k++)
			o[k] = (float)(exp((double)a[k] - mx) / s);
	}
}

void vpa_nn_log_softmax(const float *z, size_t R, size_t K, float *out)
{
	for (size_t r = 0; r < R; r++) {
		const float *a = z + r * K;
		float *o = out + r * K;
		float mx = a[0];
		for (size_t k = 1; k < K; k++)
			mx = a[k] > mx ? a[k] : mx;
		double s = 0;
		for (size_t k = 0; k < K; k++)
			s += exp((double)a[k] - mx);
		double lse = mx + log(s);
		for (size_t k = 0; k < K; k++)
			o[k] = (float)((double)a[k] - lse);
	}
}

int vpa_nn_softmax_ce(const float *z, size_t R, size_t K, const size_t *off, size_t n_seq,
		      const struct vpa_nn_targets *t, double *loss, float *dlogits,
		      struct vpa_err *err)
{
	if (!t->labels == !t->soft)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"softmax cross-entropy needs either hard labels or soft targets");
	if (!(t->temperature > 0) || !isfinite(t->temperature))
		return vpa_fail(err, VPA_EINPUT, NULL, "temperature must be positive");
	if (t->per_sequence && (!off || off[n_seq] != R))
		VPA_BUG("per-sequence targets need the output offsets");
	if (R == 0 || K == 0) {
		*loss = 0;
		return 0;
	}
	double T = t->temperature, total = 0;
	float invT = (float)(1.0 / T);
	float *q = xmalloc(xmul(K, sizeof(float)));
	size_t b = 0;
	int rc = 0;
	for (size_t r = 0; r < R; r++) {
		size_t ti = r;
		if (t->per_sequence) {
			while (r >= off[b + 1])
				b++;
			ti = b;
		}
		const float *zr = z + r * K;
		float mx = zr[0];
		for (size_t k = 1; k < K; k++)
			mx = zr[k] > mx ? zr[k] : mx;
		mx *= invT;
		/* exponentials in float (the bulk of the work for a 10k-word
		 * vocabulary), sums and logs in double */
		double s = 0;
		for (size_t k = 0; k < K; k++) {
			q[k] = expf(zr[k] * invT - mx);
			s += q[k];
		}
		double lse = mx + log(s), w = t->weights ? t->weights[ti] : 1.0;
		float inv_s = (float)(1.0 / s);
		double lr = 0, psum = 1;
		if (t->labels) {
			uint32_t y = t->labels[ti];
			if (y >= K) {
				rc = vpa_fail(err, VPA_EINPUT, NULL,
					      "label %u of row %zu is outside 0..%zu", y, ti, K - 1);
				goto out;
			}
			lr = lse - (double)zr[y] / T;
		} else {
			const float *p = t->soft + ti * K;
			psum = 0;
			for (size_t k = 0; k < K; k++) {
				lr += p[k] * (lse - (double)zr[k] / T);
				psum += p[k];
			}
		}
		total += w * T * T * lr;
		if (dlogits) {
			/* d/dz_k of T^2 sum_j p_j (lse - z_j/T) = T (q_k sum_j p_j - p_k) */
			float *d = dlogits + r * K;
			float c = (float)(w * T / (double)R), qs = (float)psum * inv_s;
			if (t->labels) {
				for (size_t k = 0; k < K; k++)
					d[k] = c * q[k] * qs;
				d[t->labels[ti]] -= c;
			} else {
				const float *p = t->soft + ti * K;
				for (size_t k = 0; k < K; k++)
					d[k] = c * (q[k] * qs - p[k]);
			}
		}
	}
	*loss = total / (double)R;
out:
	free(q);
	return rc;
}

int vpa_nn_loss(const struct vpa_nn *net, const struct vpa_nn_targets *t, double *loss,
		float *dlogits, struct vpa_err *err)
{
	if (!net->fwd_ok)
		VPA_BUG("vpa_nn_loss before a forward");
	const struct layer *l = &net->L[net->n - 1];
	return vpa_nn_softmax_ce(l->y, l->rows, l->out, l->off, l->n_seq, t, loss, dlogits, err);
}
