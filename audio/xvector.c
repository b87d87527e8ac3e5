/*
 * audio/xvector.c - the x-vector extractor trained in C.  See xvector.h.
 */
#include "audio/xvector.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/dist.h"
#include "base/la.h"

void vpa_xvec_opts_init(struct vpa_xvec_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->arch = VPA_XVEC_TDNN;
	o->hidden = 128;
	o->channels = 64;
	o->res2_scale = 4;
	o->emb_dim = 64;
	o->loss = VPA_XVEC_AAM;
	o->margin = 0.2;
	o->scale = 30;
	o->epochs = 30;
	o->batch = 32;
	o->chunk = 200;
	o->lr = 2e-3;
	o->seed = 1;
}

void vpa_xvec_init(struct vpa_xvec *x)
{
	memset(x, 0, sizeof(*x));
}

void vpa_xvec_release(struct vpa_xvec *x)
{
	vpa_nn_free(x->net);
	vpa_ecapa_free(x->ecapa);
	vpa_xvec_init(x);
}

int vpa_xvec_trained(const struct vpa_xvec *x)
{
	return x->net || x->ecapa;
}

size_t vpa_xvec_input_dim(const struct vpa_xvec *x)
{
	return x->ecapa ? vpa_ecapa_input_dim(x->ecapa) : vpa_nn_input_dim(x->net);
}

const char *vpa_xvec_arch_name(int arch)
{
	return arch == VPA_XVEC_ECAPA ? "ecapa" : "xvector";
}

/* The trunk of either architecture: forward to the embeddings (rows = n_seq). */
static int trunk_forward(struct vpa_xvec *x, const struct vpa_nn_batch *in,
			 enum vpa_nn_mode mode, const float **emb, struct vpa_err *err)
{
	size_t rows, d;
	if (x->ecapa) {
		int rc = vpa_ecapa_forward(x->ecapa, in, mode, err);
		if (rc == 0)
			*emb = vpa_ecapa_output(x->ecapa, &rows);
		return rc;
	}
	int rc = vpa_nn_forward(x->net, in, mode, err);
	if (rc == 0)
		*emb = vpa_nn_output(x->net, &rows, &d);
	return rc;
}

/* The parameter holders: the x-vector's one network or the ECAPA's parts. */
static size_t trunk_n_nets(const struct vpa_xvec *x)
{
	return x->ecapa ? vpa_ecapa_n_nets(x->ecapa) : 1;
}

static struct vpa_nn *trunk_net(struct vpa_xvec *x, size_t i)
{
	return x->ecapa ? vpa_ecapa_net(x->ecapa, i) : x->net;
}

static struct vpa_nn *build_trunk(size_t dim, const struct vpa_xvec_opts *o)
{
	return vpa_xvec_tdnn_new(dim, o->hidden, o->emb_dim);
}

/* exported so that a saved extractor (audio/xvector_io.c) is rebuilt by the
 * same recipe it was trained with, never by a copy of it */
struct vpa_nn *vpa_xvec_tdnn_new(size_t dim, size_t hidden, size_t emb_dim)
{
	static const int c1[] = {-2, -1, 0, 1, 2}, c2[] = {-2, 0, 2}, c3[] = {-3, 0, 3}, c0[] = {0};
	struct vpa_nn *net = vpa_nn_new(dim);
	const int *ctx[5] = {c1, c2, c3, c0, c0};
	const size_t nc[5] = {5, 3, 3, 1, 1};
	for (int l = 0; l < 5; l++) {
		vpa_nn_add_tdnn(net, l == 4 ? 2 * hidden : hidden, ctx[l], nc[l]);
		vpa_nn_add_simple(net, VPA_NN_RELU);
		vpa_nn_add_simple(net, VPA_NN_BATCHNORM);
	}
	vpa_nn_add_simple(net, VPA_NN_STATSPOOL);
	vpa_nn_add_dense(net, emb_dim);
	return net;
}

int vpa_xvec_train(const struct vpa_fmat *feats, const uint32_t *labels, size_t n,
		   size_t n_class, const struct vpa_xvec_opts *o, const struct vpa_xvec *init,
		   struct vpa_xvec *out, struct vpa_err *err)
{
	vpa_xvec_init(out);
	if (n_class < 2)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"training an extractor needs at least 2 speakers, found %zu", n_class);
	size_t dim = 0, n_used = 0, max_rows = 0;
	for (size_t i = 0; i < n; i++) {
		if (labels[i] >= n_class)
			return vpa_fail(err, VPA_EINPUT, NULL, "speaker label %u out of range (%zu)",
					labels[i], n_class);
		if (feats[i].rows == 0)
			continue;
		if (dim && feats[i].cols != dim)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"utterance %zu has %zu-dimensional features, expected %zu", i,
					feats[i].cols, dim);
		dim = feats[i].cols;
		n_used++;
	}
	if (n_used < 2)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"training an extractor needs at least 2 utterances with frames");
	if (init && (vpa_xvec_input_dim(init) != dim || init->emb_dim != o->emb_dim))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"cannot fine-tune: the initial extractor takes %zu-dim frames to %zu-dim "
				"embeddings, the training set has %zu-dim frames and %zu-dim was asked",
				vpa_xvec_input_dim(init), init->emb_dim, dim, o->emb_dim);
	if (init && (init->ecapa != NULL) != (o->arch == VPA_XVEC_ECAPA))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"cannot fine-tune: the initial extractor is %s, %s was asked",
				init->ecapa ? "an ECAPA-TDNN" : "an x-vector TDNN",
				o->arch == VPA_XVEC_ECAPA ? "an ECAPA-TDNN" : "an x-vector TDNN");
	struct vpa_xvec tr;
	vpa_xvec_init(&tr);
	tr.arch = o->arch;
	tr.emb_dim = o->emb_dim;
	if (init && init->ecapa) {
		tr.ecapa = vpa_ecapa_clone(init->ecapa);
	} else if (init) {
		tr.net = vpa_nn_clone(init->net);
	} else if (o->arch == VPA_XVEC_ECAPA) {
		struct vpa_ecapa_opts eo;
		vpa_ecapa_opts_init(&eo);
		eo.channels = o->channels;
		eo.scale = o->res2_scale;
		eo.emb_dim = o->emb_dim;
		int rc = vpa_ecapa_new(dim, &eo, &tr.ecapa, err);
		if (rc)
			return rc;
		vpa_ecapa_init_params(tr.ecapa, o->seed);
	} else {
		tr.net = build_trunk(dim, o);
		vpa_nn_init_params(tr.net, o->seed);
	}
	size_t *idx = xmalloc(xmul(n_used, sizeof(size_t)));
	n_used = 0;
	for (size_t i = 0; i < n; i++)
		if (feats[i].rows) {
			idx[n_used++] = i;
			size_t r = feats[i].rows < o->chunk ? feats[i].rows : o->chunk;
			max_rows = r > max_rows ? r : max_rows;
		}
	const size_t B = o->batch < 2 ? 2 : o->batch, E = o->emb_dim, K = n_class;
	/* the classifier head */
	struct vpa_nn *head = NULL;
	float *W = NULL, *dW = NULL;
	size_t n_head;
	struct vpa_rng rng;
	vpa_rng_split(&rng, o->seed, "xvector-head");
	if (o->loss == VPA_XVEC_SOFTMAX) {
		head = vpa_nn_new(E);
		vpa_nn_add_simple(head, VPA_NN_RELU);
		vpa_nn_add_simple(head, VPA_NN_BATCHNORM);
		vpa_nn_add_dense(head, K);
		vpa_nn_init_params(head, o->seed ^ 0x9e3779b97f4a7c15ull);
		vpa_nn_params(head, &n_head);
	} else {
		n_head = K * E;
		W = xmalloc(xmul(n_head, sizeof(float)));
		dW = xmalloc(xmul(n_head, sizeof(float)));
		for (size_t j = 0; j < n_head; j++)
			W[j] = (float)vpa_rng_normal(&rng);
	}
	/* the ECAPA's many small products run faster on one BLAS thread (measured:
	 * 14.5 s -> 7.4 s in test_xvector's ECAPA at 2 cores; the numbers are the
	 * same); restored below */
	const int blas_threads = vpa_la_get_threads();
	if (tr.ecapa)
		vpa_la_set_threads(1);
	const size_t n_nets = trunk_n_nets(&tr);
	struct vpa_optim oh, *ot = xmalloc(xmul(n_nets, sizeof(*ot)));
	for (size_t i = 0; i < n_nets; i++) {
		size_t n_trunk;
		vpa_nn_params(trunk_net(&tr, i), &n_trunk);
		vpa_optim_init_adam(&ot[i], n_trunk, o->lr, 0.9, 0.999, 1e-8, 0);
	}
	vpa_optim_init_adam(&oh, n_head, o->lr, 0.9, 0.999, 1e-8, 0);

	float *x = xmalloc(xmul(xmul(B, max_rows), xmul(dim, sizeof(float))));
	size_t *off = xmalloc(xmul(B + 1, sizeof(size_t)));
	size_t *hoff = xmalloc(xmul(B + 1, sizeof(size_t)));
	uint32_t *lab = xmalloc(xmul(B, sizeof(uint32_t)));
	float *demb = xmalloc(xmul(xmul(B, E), sizeof(float)));
	float *dhead = xmalloc(xmul(xmul(B, K), sizeof(float)));
	for (size_t b = 0; b <= B; b++)
		hoff[b] = b;
	const size_t steps_per_epoch = n_used / B + (n_used % B >= 2 ? 1 : 0);
	const size_t total_steps = steps_per_epoch * (size_t)(o->epochs > 0 ? o->epochs : 0);
	size_t step = 0;
	int rc = 0;
	double t0 = vpa_now(), epoch_loss = 0;
	for (int ep = 0; ep < o->epochs && rc == 0; ep++) {
		/* Fisher-Yates shuffle of the utterance order */
		for (size_t i = n_used; i > 1; i--) {
			size_t j = (size_t)vpa_rng_below(&rng, i);
			size_t t = idx[i - 1];
			idx[i - 1] = idx[j];
			idx[j] = t;
		}
		double sum = 0;
		size_t nb = 0;
		for (size_t s0 = 0; s0 < n_used && rc == 0; s0 += B) {
			size_t bs = n_used - s0 < B ? n_used - s0 : B;
			if (bs < 2)
				break;
			off[0] = 0;
			for (size_t b = 0; b < bs; b++) {
				const struct vpa_fmat *f = &feats[idx[s0 + b]];
				size_t len = f->rows < o->chunk ? f->rows : o->chunk;
				size_t start = f->rows > len ? (size_t)vpa_rng_below(&rng, f->rows - len + 1) : 0;
				memcpy(x + off[b] * dim, f->x + start * dim, len * dim * sizeof(float));
				off[b + 1] = off[b] + len;
				lab[b] = labels[idx[s0 + b]];
			}
			double frac = total_steps > 1 ? (double)step / (double)(total_steps - 1) : 0;
			oh.lr = o->lr * (1 - 0.9 * frac);
			for (size_t i = 0; i < n_nets; i++)
				ot[i].lr = oh.lr;
			struct vpa_nn_batch in = {.n_seq = bs, .off = off, .x = x, .ids = NULL};
			const float *emb;
			rc = trunk_forward(&tr, &in, VPA_NN_TRAIN, &emb, err);
			if (rc)
				break;
			double loss;
			for (size_t i = 0; i < n_nets; i++)
				vpa_nn_zero_grad(trunk_net(&tr, i));
			if (head) {
				struct vpa_nn_batch hin = {.n_seq = bs, .off = hoff, .x = emb, .ids = NULL};
				rc = vpa_nn_forward(head, &hin, VPA_NN_TRAIN, err);
				if (rc)
					break;
				struct vpa_nn_targets t;
				vpa_nn_targets_init(&t);
				t.labels = lab;
				rc = vpa_nn_loss(head, &t, &loss, dhead, err);
				if (rc)
					break;
				vpa_nn_zero_grad(head);
				vpa_nn_backward(head, dhead, demb);
			} else {
				rc = vpa_nn_aam_softmax(emb, bs, E, W, K, lab, o->margin, o->scale, &loss,
							demb, dW, err);
				if (rc)
					break;
			}
			if (tr.ecapa)
				vpa_ecapa_backward(tr.ecapa, demb, NULL);
			else
				vpa_nn_backward(tr.net, demb, NULL);
			size_t np;
			float *p;
			for (size_t i = 0; i < n_nets; i++) {
				struct vpa_nn *tn = trunk_net(&tr, i);
				p = vpa_nn_params(tn, &np);
				vpa_optim_step(&ot[i], p, vpa_nn_grads(tn, &np));
			}
			if (head) {
				p = vpa_nn_params(head, &np);
				vpa_optim_step(&oh, p, vpa_nn_grads(head, &np));
			} else {
				vpa_optim_step(&oh, W, dW);
			}
			sum += loss;
			nb++;
			step++;
			if (o->verbose)
				vpa_progress("training extractor", step, total_steps, t0);
		}
		epoch_loss = nb ? sum / (double)nb : NAN;
	}
	free(x);
	free(off);
	free(hoff);
	free(lab);
	free(demb);
	free(dhead);
	free(idx);
	free(W);
	free(dW);
	vpa_nn_free(head);
	for (size_t i = 0; i < n_nets; i++)
		vpa_optim_release(&ot[i]);
	free(ot);
	if (tr.ecapa)
		vpa_la_set_threads(blas_threads);
	vpa_optim_release(&oh);
	if (rc) {
		vpa_xvec_release(&tr);
		return rc;
	}
	*out = tr;
	out->emb_dim = E;
	out->final_loss = epoch_loss;
	return 0;
}

/* Utterance i's embedding: a job of vpa_dist_jobs (under MPI the ranks share
 * the utterances out; an embedding, emb_dim floats, travels). */
struct embed_job {
	const struct vpa_xvec *x;
	const struct vpa_fmat *feats;
	const char *const *ids;
	float *out;
};

static int embed_one(void *arg, size_t i, struct vpa_err *err)
{
	struct embed_job *j = arg;
	const struct vpa_fmat *f = &j->feats[i];
	if (f->rows == 0) {
		if (j->ids)
			return vpa_fail(err, VPA_EINPUT, NULL, "utterance '%s' has no frame to embed",
					j->ids[i]);
		return vpa_fail(err, VPA_EINPUT, NULL, "utterance %zu has no frame to embed", i);
	}
	struct vpa_xvec c;
	vpa_xvec_init(&c);
	if (j->x->ecapa)
		c.ecapa = vpa_ecapa_clone(j->x->ecapa);
	else
		c.net = vpa_nn_clone(j->x->net);
	size_t off[2] = {0, f->rows};
	struct vpa_nn_batch in = {.n_seq = 1, .off = off, .x = f->x, .ids = NULL};
	const float *e;
	int rc = trunk_forward(&c, &in, VPA_NN_EVAL, &e, err);
	if (rc == 0)
		memcpy(j->out + i * j->x->emb_dim, e, j->x->emb_dim * sizeof(float));
	vpa_xvec_release(&c);
	return rc;
}

static void embed_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct embed_job *j = arg;
	vpa_pack_f32s(b, j->out + i * j->x->emb_dim, j->x->emb_dim);
}

static int embed_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct embed_job *j = arg;
	size_t E = j->x->emb_dim;
	return len != E * sizeof(float) || vpa_unpack_f32s(&p, p + len, j->out + i * E, E);
}

int vpa_xvec_embed(const struct vpa_xvec *x, const struct vpa_fmat *feats,
		   const char *const *ids, size_t n, int threads, float *out,
		   struct vpa_err *err)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (feats[i].rows && feats[i].cols != vpa_xvec_input_dim(x))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"%s%s%s has %zu-dimensional features, the extractor takes %zu",
					ids ? "utterance '" : "an utterance", ids ? ids[i] : "",
					ids ? "'" : "", feats[i].cols, vpa_xvec_input_dim(x));
	struct embed_job j = {.x = x, .feats = feats, .ids = ids, .out = out};
	return vpa_dist_jobs(n, threads, embed_one, embed_pack, embed_unpack, &j,
			     "extracting embeddings", vpa_la_run_workers, err);
}
