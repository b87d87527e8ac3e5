/*
 * audio/xvector_train.c - extractor training, data-parallel over a fixed
 * number of shards per mini-batch (xvector.h has the rule and what it
 * guarantees).  A step: (1) every shard copies the master trunk's parameters
 * and state and runs its chunks forward (the shards shared out to threads
 * and MPI ranks by vpa_dist_jobs);
 * (2) the head (AAM-softmax or softmax) and its loss on the whole batch's
 * embeddings, on the caller's thread; (3) every shard back-propagates its rows
 * of d(loss)/d(embeddings); (4) the shard gradients summed in shard order,
 * the batch-norm state averaged in shard order, one Adam step on the master.
 * Nothing a thread computes depends on which thread it is or how many there
 * are, and the reductions have one fixed order, so the weights are the same
 * bytes for any thread and rank count.
 */
#include "audio/xvector.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/dist.h"
#include "base/la.h"

/* Sequences s0 .. s0+n-1 of the batch, with the shard's own trunk (whose
 * activations live from the forward to the backward) and local offsets. */
struct shard {
	struct vpa_xvec net;
	size_t s0, n;
	size_t *off; /* (B + 1) */
};

struct step {
	struct vpa_xvec *master;
	struct shard *sh;
	const float *x;     /* the batch's frames */
	const size_t *off;  /* the batch's offsets */
	size_t dim, E;
	float *emb;         /* (bs, E) the embeddings, written by phase 0 */
	const float *demb;  /* (bs, E) d(loss)/d(embeddings), read by phase 1 */
	int phase;          /* 0 forward, 1 backward */
};

/*
 * The shards of a batch of bs chunks: `shards`, fewer when that would leave
 * a shard under VPA_XVEC_SHARD_MIN chunks; a function of the options and bs
 * only.  Why a floor: batch norm normalises over a shard's frames, and over
 * 4 chunks of 4 speakers its mean carries the speakers' own offsets away
 * (test_xvector's corpus, batch 16: the last epoch's loss 0.70 on one
 * shard, 1.86 on 4 shards of 4, 1.06 on 2 shards of 8).
 */
static size_t shard_count(size_t shards, size_t bs)
{
	size_t most = bs / VPA_XVEC_SHARD_MIN;
	if (most < 1)
		most = 1;
	return shards < most ? shards : most;
}

static int step_job(void *arg, size_t i, struct vpa_err *err)
{
	struct step *st = arg;
	struct shard *s = &st->sh[i];
	const size_t nn = vpa_xvec_n_nets(&s->net);
	if (st->phase == 1) {
		const float *d = st->demb + s->s0 * st->E;
		if (s->net.ecapa)
			vpa_ecapa_backward(s->net.ecapa, d, NULL);
		else
			vpa_nn_backward(s->net.net, d, NULL);
		return 0;
	}
	for (size_t k = 0; k < nn; k++) {
		struct vpa_nn *c = vpa_xvec_net(&s->net, k);
		vpa_nn_copy_params(c, vpa_xvec_net(st->master, k));
		vpa_nn_zero_grad(c);
	}
	const size_t base = st->off[s->s0];
	for (size_t b = 0; b <= s->n; b++)
		s->off[b] = st->off[s->s0 + b] - base;
	struct vpa_nn_batch in = {.n_seq = s->n, .off = s->off, .x = st->x + base * st->dim,
				  .ids = NULL};
	const float *emb;
	int rc = vpa_xvec_forward(&s->net, &in, VPA_NN_TRAIN, &emb, err);
	if (rc == 0) /* the shards' rows of the batch's embeddings (disjoint) */
		memcpy(st->emb + s->s0 * st->E, emb, s->n * st->E * sizeof(float));
	return rc;
}

/*
 * Under MPI (base/dist.h: shard i on rank i mod N, the same rank in both
 * phases, so its activations are there for the backward) the other ranks
 * get a shard's embeddings after the forward, and its gradients and
 * batch-norm state after the backward: every rank then reduces all shards
 * in shard order and takes the same step.
 */
static void step_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct step *st = arg;
	struct shard *s = &st->sh[i];
	if (st->phase == 0) {
		vpa_pack_f32s(b, st->emb + s->s0 * st->E, s->n * st->E);
		return;
	}
	for (size_t k = 0; k < vpa_xvec_n_nets(&s->net); k++) {
		size_t np, ns;
		struct vpa_nn *c = vpa_xvec_net(&s->net, k);
		const float *g = vpa_nn_grads(c, &np), *sv = vpa_nn_state(c, &ns);
		vpa_pack_f32s(b, g, np);
		vpa_pack_f32s(b, sv, ns);
	}
}

static int step_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct step *st = arg;
	struct shard *s = &st->sh[i];
	const unsigned char *end = p + len;
	if (st->phase == 0)
		return len != s->n * st->E * sizeof(float) ||
		       vpa_unpack_f32s(&p, end, st->emb + s->s0 * st->E, s->n * st->E);
	for (size_t k = 0; k < vpa_xvec_n_nets(&s->net); k++) {
		size_t np, ns;
		struct vpa_nn *c = vpa_xvec_net(&s->net, k);
		float *g = vpa_nn_grads(c, &np), *sv = vpa_nn_state(c, &ns);
		if (vpa_unpack_f32s(&p, end, g, np) || vpa_unpack_f32s(&p, end, sv, ns))
			return 1;
	}
	return p != end;
}

/*
 * Step (4): the master's gradient is shard 0's plus shard 1's plus ... in
 * that order; its batch-norm state the mean of the shards' (each shard moved
 * the running averages from the same master state by its own statistics, so
 * the mean is the master state moved by the mean of the shards' statistics).
 */
static void reduce_shards(struct vpa_xvec *master, struct shard *sh, size_t n_sh)
{
	const size_t nn = vpa_xvec_n_nets(master);
	for (size_t k = 0; k < nn; k++) {
		size_t np, ns, n1;
		struct vpa_nn *m = vpa_xvec_net(master, k);
		float *g = vpa_nn_grads(m, &np), *st = vpa_nn_state(m, &ns);
		memcpy(g, vpa_nn_grads(vpa_xvec_net(&sh[0].net, k), &n1), np * sizeof(float));
		for (size_t s = 1; s < n_sh; s++) {
			const float *gs = vpa_nn_grads(vpa_xvec_net(&sh[s].net, k), &n1);
			for (size_t j = 0; j < np; j++)
				g[j] += gs[j];
		}
		for (size_t j = 0; j < ns; j++) {
			double a = 0;
			for (size_t s = 0; s < n_sh; s++)
				a += vpa_nn_state(vpa_xvec_net(&sh[s].net, k), &n1)[j];
			st[j] = (float)(a / (double)n_sh);
		}
	}
}

/*
 * reduce_shards where the shards' gradients are: on rank 0 (they were
 * gathered there: vpa_dist_jobs_to_root), whose master gradient and state
 * then go to every rank in one broadcast; or here, with one rank.  Every
 * rank ends with the same master, bit for bit.  b: scratch.
 */
static void reduce_to_all(struct vpa_xvec *master, struct shard *sh, size_t n_sh,
			  struct vpa_buf *b)
{
	if (!vpa_dist_spans_ranks()) {
		reduce_shards(master, sh, n_sh);
		return;
	}
	const size_t nn = vpa_xvec_n_nets(master);
	b->len = 0;
	if (vpa_dist_rank() == 0) {
		reduce_shards(master, sh, n_sh);
		for (size_t k = 0; k < nn; k++) {
			size_t np, ns;
			struct vpa_nn *m = vpa_xvec_net(master, k);
			const float *g = vpa_nn_grads(m, &np), *sv = vpa_nn_state(m, &ns);
			vpa_pack_f32s(b, g, np);
			vpa_pack_f32s(b, sv, ns);
		}
	}
	vpa_dist_bcast(b);
	if (vpa_dist_rank() != 0) {
		const unsigned char *p = (const unsigned char *)b->data, *end = p + b->len;
		for (size_t k = 0; k < nn; k++) {
			size_t np, ns;
			struct vpa_nn *m = vpa_xvec_net(master, k);
			float *g = vpa_nn_grads(m, &np), *sv = vpa_nn_state(m, &ns);
			if (vpa_unpack_f32s(&p, end, g, np) || vpa_unpack_f32s(&p, end, sv, ns))
				VPA_BUG("the master gradient broadcast does not read back");
		}
		if (p != end)
			VPA_BUG("the master gradient broadcast does not read back");
	}
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
		tr.net = vpa_xvec_tdnn_new(dim, o->hidden, o->emb_dim);
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
	/* Every product on one BLAS thread, whatever `threads` is: the shards
	 * are the parallelism (one BLAS thread per worker), and a shard's
	 * numbers must not depend on how OpenBLAS splits a product.  (For the
	 * ECAPA's many small products one BLAS thread was faster anyway.)
	 * Restored below. */
	const int blas_threads = vpa_la_get_threads();
	vpa_la_set_threads(1);
	const size_t n_nets = vpa_xvec_n_nets(&tr);
	struct vpa_optim oh, *ot = xmalloc(xmul(n_nets, sizeof(*ot)));
	for (size_t i = 0; i < n_nets; i++) {
		size_t n_trunk;
		/* also allocates the master's tensors before the shards read them
		 * from several threads */
		vpa_nn_state(vpa_xvec_net(&tr, i), &n_trunk);
		vpa_nn_params(vpa_xvec_net(&tr, i), &n_trunk);
		vpa_optim_init_adam(&ot[i], n_trunk, o->lr, 0.9, 0.999, 1e-8, 0);
	}
	vpa_optim_init_adam(&oh, n_head, o->lr, 0.9, 0.999, 1e-8, 0);
	/* the shards' trunks: copies of the master (parameters overwritten at
	 * every step) */
	const size_t S = o->shards ? o->shards : 1;
	const size_t n_sh_max = shard_count(S, B);
	struct shard *sh = xcalloc(n_sh_max, sizeof(*sh));
	for (size_t s = 0; s < n_sh_max; s++) {
		sh[s].net.arch = tr.arch;
		sh[s].net.emb_dim = E;
		if (tr.ecapa)
			sh[s].net.ecapa = vpa_ecapa_clone(tr.ecapa);
		else
			sh[s].net.net = vpa_nn_clone(tr.net);
		sh[s].off = xmalloc(xmul(B + 1, sizeof(size_t)));
	}

	float *x = xmalloc(xmul(xmul(B, max_rows), xmul(dim, sizeof(float))));
	size_t *off = xmalloc(xmul(B + 1, sizeof(size_t)));
	size_t *hoff = xmalloc(xmul(B + 1, sizeof(size_t)));
	uint32_t *lab = xmalloc(xmul(B, sizeof(uint32_t)));
	float *emb = xmalloc(xmul(xmul(B, E), sizeof(float)));
	float *demb = xmalloc(xmul(xmul(B, E), sizeof(float)));
	float *dhead = xmalloc(xmul(xmul(B, K), sizeof(float)));
	struct vpa_buf rb; /* reduce_to_all's broadcast */
	vpa_buf_init(&rb);
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
			const size_t n_sh = shard_count(S, bs);
			for (size_t s = 0; s < n_sh; s++) {
				sh[s].s0 = s * bs / n_sh;
				sh[s].n = (s + 1) * bs / n_sh - sh[s].s0;
			}
			struct step st = {.master = &tr, .sh = sh, .x = x, .off = off, .dim = dim,
					  .E = E, .emb = emb, .demb = demb, .phase = 0};
			rc = vpa_dist_jobs(n_sh, o->threads, step_job, step_pack, step_unpack, &st,
					   NULL, vpa_la_run_workers, err);
			if (rc)
				break;
			double loss;
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
			st.phase = 1;
			rc = vpa_dist_jobs_to_root(n_sh, o->threads, step_job, step_pack, step_unpack,
						   &st, NULL, vpa_la_run_workers, err);
			if (rc)
				break;
			reduce_to_all(&tr, sh, n_sh, &rb);
			size_t np;
			float *p;
			for (size_t i = 0; i < n_nets; i++) {
				struct vpa_nn *tn = vpa_xvec_net(&tr, i);
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
	for (size_t s = 0; s < n_sh_max; s++) {
		vpa_xvec_release(&sh[s].net);
		free(sh[s].off);
	}
	free(sh);
	free(x);
	free(off);
	free(hoff);
	free(lab);
	free(emb);
	free(demb);
	free(dhead);
	vpa_buf_release(&rb);
	free(idx);
	free(W);
	free(dW);
	vpa_nn_free(head);
	for (size_t i = 0; i < n_nets; i++)
		vpa_optim_release(&ot[i]);
	free(ot);
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
