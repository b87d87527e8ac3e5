/*
 * learn/nn.c - the sequential container: layer specs and kinds, building a
 * network (vpa_nn_add and its shorthands), parameter layout, allocation and
 * initialisation, the accessors (dims, parameters, gradients, state, named
 * tensors), clone and copy.  See nn.h for the contract and NN.md for the
 * conventions.  What runs a network is in nn_layers.c (each layer's forward
 * and backward and the passes through the sequence) and nn_loss.c (the
 * losses); they share the container's insides through nn_internal.h.
 */
#include "learn/nn.h"
#include "learn/nn_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void vpa_nn_release_work(struct vpa_nn *net)
{
	if (!net)
		return;
	for (size_t i = 0; i < net->n; i++) {
		struct layer *l = &net->L[i];
		layer_release(l);
		l->y = l->c1 = l->c2 = NULL;
		l->off = NULL;
		l->y_cap = l->c1_cap = l->c2_cap = l->off_cap = 0;
		l->rows = l->n_seq = 0;
	}
	free(net->scratch);
	free(net->scratch2);
	free(net->d[0]);
	free(net->d[1]);
	free(net->ibuf);
	net->scratch = net->scratch2 = net->d[0] = net->d[1] = NULL;
	net->ibuf = NULL;
	net->scratch_cap = net->scratch2_cap = net->d_cap[0] = net->d_cap[1] = 0;
	net->ibuf_cap = 0;
	net->fwd_ok = 0;
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
