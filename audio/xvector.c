/*
 * audio/xvector.c - the extractor's networks and extraction (training is in
 * audio/xvector_train.c).  See xvector.h.
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
	o->shards = VPA_XVEC_SHARDS;
	o->threads = 1;
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
int vpa_xvec_forward(struct vpa_xvec *x, const struct vpa_nn_batch *in,
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
size_t vpa_xvec_n_nets(const struct vpa_xvec *x)
{
	return x->ecapa ? vpa_ecapa_n_nets(x->ecapa) : 1;
}

struct vpa_nn *vpa_xvec_net(struct vpa_xvec *x, size_t i)
{
	return x->ecapa ? vpa_ecapa_net(x->ecapa, i) : x->net;
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
	int rc = vpa_xvec_forward(&c, &in, VPA_NN_EVAL, &e, err);
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
