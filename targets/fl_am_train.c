/*
 * targets/fl_am_train.c - federated acoustic models from frames and frame
 * labels, for both sources of `fl_acoustic_models` that train them: the
 * simulator (targets/sim_am.c) and audio (targets/fl_am_audio.c).
 *
 * Models: a TDNN (hidden_layers blocks of tdnn + relu, an output dense layer
 * over the classes) trained with Adam on Train-G; each personalised model
 * fine-tunes ALL parameters of W_g with SGD on its own adaptation data (two
 * models on disjoint data for the `two_models` fraction of the speakers),
 * then the released update W_s - W_g is optionally clipped to L2 norm C and
 * noised with N(0, (sigma C)^2) per coordinate (local DP; epsilon per
 * release by the analytic Gaussian mechanism with sensitivity C).  Every
 * random draw comes from a stream named after what it is for (prefix
 * f->stream), so the models do not depend on the thread or rank count.
 */
#include "targets/fl_am.h"
#include "base/dist.h"
#include "base/la.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vpa_flam_uset_release(struct vpa_flam_uset *u)
{
	free(u->off);
	free(u->x);
	free(u->lab);
	memset(u, 0, sizeof(*u));
}

void vpa_flam_uset_cat(struct vpa_flam_uset *a, const struct vpa_flam_uset *b, size_t D)
{
	size_t na = a->n, Na = na ? a->off[na] : 0, Nb = b->off[b->n];
	a->off = xrealloc(a->off, (na + b->n + 1) * sizeof(size_t));
	if (na == 0)
		a->off[0] = 0;
	for (size_t i = 1; i <= b->n; i++)
		a->off[na + i] = Na + b->off[i];
	a->x = xrealloc(a->x, xmul((Na + Nb) * D, sizeof(float)));
	memcpy(a->x + Na * D, b->x, Nb * D * sizeof(float));
	a->lab = xrealloc(a->lab, xmul(Na + Nb, sizeof(uint32_t)));
	memcpy(a->lab + Na, b->lab, Nb * sizeof(uint32_t));
	a->n = na + b->n;
}

static const int C5[] = {-2, -1, 0, 1, 2}, C3[] = {-1, 0, 1}, C3W[] = {-3, 0, 3}, C1[] = {0};

struct vpa_nn *vpa_flam_make_tdnn(size_t hidden_layers, size_t hidden_dim, size_t states,
				  size_t in_dim)
{
	const int *ctx[6] = {C5, C3, C3, C3W, C3W, C1};
	const size_t nctx[6] = {5, 3, 3, 3, 3, 1};
	struct vpa_nn *net = vpa_nn_new(in_dim);
	for (size_t l = 0; l < hidden_layers; l++) {
		size_t k = l < 6 ? l : 5;
		vpa_nn_add_tdnn(net, hidden_dim, ctx[k], nctx[k]);
		vpa_nn_add_simple(net, VPA_NN_RELU);
	}
	vpa_nn_add_dense(net, states);
	return net;
}

static char *name2(const char *stream, const char *what, size_t a, size_t b, int two)
{
	char s[160];
	if (two)
		snprintf(s, sizeof(s), "%s/%s/%zu/%zu", stream, what, a, b);
	else
		snprintf(s, sizeof(s), "%s/%s", stream, what);
	return xstrdup(s);
}

void vpa_flam_pick_two(uint64_t seed, const char *stream, size_t n1, size_t n2, double frac,
		       unsigned char *two)
{
	struct vpa_rng sr;
	char *nm = name2(stream, "two-models", 0, 0, 0);
	vpa_rng_split(&sr, seed, nm);
	free(nm);
	memset(two, 0, n1 + n2);
	for (int part = 1; part <= 2; part++) {
		size_t base = part == 1 ? 0 : n1;
		size_t n = part == 1 ? n1 : n2;
		size_t k = (size_t)floor(frac * (double)n + 0.5);
		size_t *perm = xmalloc((n ? n : 1) * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			perm[i] = i;
		for (size_t i = n; i > 1; i--) {
			size_t j = vpa_rng_below(&sr, i), tt = perm[i - 1];
			perm[i - 1] = perm[j];
			perm[j] = tt;
		}
		for (size_t i = 0; i < k && i < n; i++)
			two[base + perm[i]] = 1;
		free(perm);
	}
}

/* A sub-batch of utterances idx[0..k-1] of u copied into contiguous buffers. */
struct sub {
	size_t *off;
	float *x;
	uint32_t *lab;
};

static void sub_make(const struct vpa_flam_uset *u, const size_t *idx, size_t k, size_t D,
		     struct sub *s)
{
	size_t N = 0;
	for (size_t i = 0; i < k; i++)
		N += u->off[idx[i] + 1] - u->off[idx[i]];
	s->off = xmalloc((k + 1) * sizeof(size_t));
	s->x = xmalloc(xmul(N * D, sizeof(float)));
	s->lab = xmalloc(xmul(N ? N : 1, sizeof(uint32_t)));
	s->off[0] = 0;
	for (size_t i = 0; i < k; i++) {
		size_t a = u->off[idx[i]], n = u->off[idx[i] + 1] - a;
		memcpy(s->x + s->off[i] * D, u->x + a * D, n * D * sizeof(float));
		memcpy(s->lab + s->off[i], u->lab + a, n * sizeof(uint32_t));
		s->off[i + 1] = s->off[i] + n;
	}
}

static void sub_free(struct sub *s)
{
	free(s->off);
	free(s->x);
	free(s->lab);
}

/*
 * Data-parallel training (issue 33 item 1, as audio/xvector_train.c does for
 * the extractors): a mini-batch of k utterances is cut into
 * min(FLAM_SHARDS, k) shards of consecutive utterances, a number that does
 * not depend on the thread count; each shard's forward and backward run on
 * its own copy of the network (whichever thread holds it), its frames'
 * losses weighted by R_s / R so that the shard gradients add up to the
 * gradient of the batch's mean frame loss; the gradients are summed in
 * shard order into the master's, then one optimiser step.  The TDNN has no
 * batch norm or dropout, so a shard computes exactly what the batch does on
 * its rows; only the summation order differs from a whole-batch step.
 */
#define FLAM_SHARDS 4

struct shard {
	struct vpa_nn *net;
	size_t u0, n;      /* utterances of the batch */
	size_t *off;       /* (n + 1) local offsets */
	float *w;          /* (rows) loss weights R_s / R */
	size_t w_cap;
	double loss;       /* the shard's weighted loss (its part of the batch's) */
	int rc;
	struct vpa_err err;
};

struct tstep {
	struct vpa_nn *master;
	struct shard *sh;
	const struct sub *b;
	size_t D, R;
};

static int shard_job(void *arg, size_t i)
{
	struct tstep *st = arg;
	struct shard *s = &st->sh[i];
	const struct sub *b = st->b;
	vpa_nn_copy_params(s->net, st->master);
	vpa_nn_zero_grad(s->net);
	size_t base = b->off[s->u0], rows = b->off[s->u0 + s->n] - base;
	for (size_t k = 0; k <= s->n; k++)
		s->off[k] = b->off[s->u0 + k] - base;
	if (rows > s->w_cap) {
		s->w = xrealloc(s->w, rows * sizeof(float));
		s->w_cap = rows;
	}
	for (size_t r = 0; r < rows; r++)
		s->w[r] = (float)((double)rows / (double)st->R);
	struct vpa_nn_batch in = {s->n, s->off, b->x + base * st->D, NULL};
	struct vpa_nn_targets tg;
	vpa_nn_targets_init(&tg);
	tg.labels = b->lab + base;
	tg.weights = s->w;
	float *dz = NULL;
	s->rc = vpa_nn_forward(s->net, &in, VPA_NN_TRAIN, &s->err);
	if (!s->rc) {
		dz = xmalloc(xmul(rows * vpa_nn_output_dim(s->net), sizeof(float)));
		s->rc = vpa_nn_loss(s->net, &tg, &s->loss, dz, &s->err);
	}
	if (!s->rc)
		vpa_nn_backward(s->net, dz, NULL);
	free(dz);
	return s->rc;
}

/* Epochs of mini-batch training over u in a seeded order, the shards of each
 * batch on `threads` threads (the same weights for any count). */
static int train(struct vpa_nn *net, struct vpa_optim *o, const struct vpa_flam_uset *u,
		 size_t D, size_t epochs, size_t batch, struct vpa_rng *r, double *last_loss,
		 int threads, struct vpa_err *err)
{
	size_t *perm = xmalloc((u->n ? u->n : 1) * sizeof(size_t));
	struct shard sh[FLAM_SHARDS];
	int rc = 0;
	memset(sh, 0, sizeof(sh));
	for (size_t k = 0; k < FLAM_SHARDS; k++) {
		sh[k].net = vpa_nn_clone(net);
		sh[k].off = xmalloc((batch + 1) * sizeof(size_t));
		vpa_err_init(&sh[k].err);
	}
	size_t np;
	vpa_nn_params(net, &np);
	for (size_t i = 0; i < u->n; i++)
		perm[i] = i;
	for (size_t ep = 0; ep < epochs && !rc; ep++) {
		for (size_t i = u->n; i > 1; i--) {
			size_t j = vpa_rng_below(r, i), t = perm[i - 1];
			perm[i - 1] = perm[j];
			perm[j] = t;
		}
		double sum = 0;
		size_t nb = 0;
		for (size_t b0 = 0; b0 < u->n && !rc; b0 += batch) {
			size_t k = u->n - b0 < batch ? u->n - b0 : batch;
			struct sub s;
			sub_make(u, perm + b0, k, D, &s);
			size_t ns = k < FLAM_SHARDS ? k : FLAM_SHARDS;
			for (size_t i = 0; i < ns; i++) {
				sh[i].u0 = k * i / ns;
				sh[i].n = k * (i + 1) / ns - sh[i].u0;
			}
			struct tstep st = {net, sh, &s, D, s.off[k]};
			vpa_par_jobs(ns, threads, shard_job, &st, NULL, vpa_la_run_workers);
			double loss = 0;
			for (size_t i = 0; i < ns && !rc; i++)
				if (sh[i].rc)
					rc = vpa_fail(err, sh[i].rc, NULL, "%s", sh[i].err.msg);
			if (!rc) {
				/* the shard gradients, summed in shard order */
				float *g = vpa_nn_grads(net, &np);
				memset(g, 0, np * sizeof(float));
				for (size_t i = 0; i < ns; i++) {
					size_t n2;
					const float *gi = vpa_nn_grads(sh[i].net, &n2);
					for (size_t q = 0; q < np; q++)
						g[q] += gi[q];
					loss += sh[i].loss;
				}
				vpa_optim_step(o, vpa_nn_params(net, &np), g);
			}
			sum += loss;
			nb++;
			sub_free(&s);
		}
		if (last_loss && nb)
			*last_loss = sum / (double)nb;
	}
	for (size_t k = 0; k < FLAM_SHARDS; k++) {
		vpa_nn_free(sh[k].net);
		free(sh[k].off);
		free(sh[k].w);
	}
	free(perm);
	return rc;
}

/* Frame accuracy of net on u. */
static int frame_acc(struct vpa_nn *net, const struct vpa_flam_uset *u, double *acc,
		     struct vpa_err *err)
{
	if (u->n == 0) {
		*acc = NAN;
		return 0;
	}
	struct vpa_nn_batch bt = {u->n, u->off, u->x, NULL};
	int rc = vpa_nn_forward(net, &bt, VPA_NN_EVAL, err);
	if (rc)
		return rc;
	size_t R, K, ok = 0;
	const float *z = vpa_nn_output(net, &R, &K);
	for (size_t i = 0; i < R; i++) {
		size_t best = 0;
		for (size_t k = 1; k < K; k++)
			if (z[i * K + k] > z[i * K + best])
				best = k;
		ok += best == u->lab[i];
	}
	*acc = R ? (double)ok / (double)R : NAN;
	return 0;
}

/* One personalised model's job. */
struct pjob {
	size_t spk;    /* speaker (Part-1 first) */
	size_t which;  /* 0 or 1: the model of that speaker */
	struct vpa_flam_model *m;
	int rc;
	struct vpa_err err;
};

struct pctx {
	const struct vpa_flam_fed *f;
	struct vpa_nn *global;
	double *acc_g; /* per speaker */
	struct pjob *jobs;
};

static void run_job(struct pctx *p, struct pjob *j)
{
	const struct vpa_flam_fed *f = p->f;
	size_t D = f->in_dim;
	struct vpa_rng r;
	struct vpa_flam_uset ad = {0};
	vpa_err_init(&j->err);
	char *nm = name2(f->stream, "adapt", j->spk, j->which, 1);
	vpa_rng_split(&r, f->seed, nm);
	free(nm);
	f->adapt(f->adapt_arg, j->spk, j->which, &r, &ad);
	struct vpa_nn *net = vpa_nn_clone(p->global);
	size_t np;
	float *w = vpa_nn_params(net, &np);
	struct vpa_optim o;
	vpa_optim_init_sgd(&o, np, f->adapt_lr, 0.0, 0.0);
	/* one thread: the models themselves are shared out over the threads */
	j->rc = train(net, &o, &ad, D, f->adapt_epochs, f->batch, &r, NULL, 1, &j->err);
	vpa_optim_release(&o);
	vpa_flam_uset_release(&ad);
	if (!j->rc) {
		/* the released update: W_s - W_g, clipped and noised (local DP) */
		size_t ng;
		const float *g = vpa_nn_params(p->global, &ng);
		double s2 = 0;
		for (size_t i = 0; i < np; i++)
			s2 += ((double)w[i] - g[i]) * ((double)w[i] - g[i]);
		j->m->update_norm = sqrt(s2);
		if (f->dp_clip > 0) {
			double scale = j->m->update_norm > f->dp_clip ? f->dp_clip / j->m->update_norm : 1;
			struct vpa_rng nr;
			nm = name2(f->stream, "dp", j->spk, j->which, 1);
			vpa_rng_split(&nr, f->seed, nm);
			free(nm);
			/* the fault switch `skip_noise`: no noise, the claim unchanged */
			double sd = f->dp_skip_noise ? 0 : f->dp_noise * f->dp_clip;
			for (size_t i = 0; i < np; i++) {
				double dlt = ((double)w[i] - g[i]) * scale;
				if (sd > 0)
					dlt += sd * vpa_rng_normal(&nr);
				w[i] = (float)(g[i] + dlt);
			}
		}
		j->rc = frame_acc(net, &f->heldout[j->spk], &j->m->acc, &j->err);
		j->m->acc_global = p->acc_g[j->spk];
	}
	/* thousands of models are kept: their parameters, not the training's
	 * buffers (measured: 4 GB for 86 models of 4 x 256 on 8-utterance batches) */
	vpa_nn_release_work(net);
	j->m->net = net;
}

/* Model i's personalisation, a job of vpa_dist_jobs.  The models are small:
 * under MPI each travels whole (its parameters, its batch-norm state and
 * three numbers) to the other ranks, which the attacks then run on. */
static int pers_job(void *arg, size_t i, struct vpa_err *e)
{
	struct pctx *p = arg;
	struct pjob *j = &p->jobs[i];
	run_job(p, j);
	return j->rc ? vpa_fail(e, j->rc, NULL, "personalising model '%s': %s", j->m->id,
				j->err.msg) : 0;
}

static void pers_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct vpa_flam_model *m = ((struct pctx *)arg)->jobs[i].m;
	size_t np, ns;
	const float *w = vpa_nn_params(m->net, &np), *st = vpa_nn_state(m->net, &ns);
	double v[3] = {m->update_norm, m->acc, m->acc_global};
	vpa_pack_f64s(b, v, 3);
	vpa_pack_f32s(b, w, np);
	vpa_pack_f32s(b, st, ns);
}

static int pers_unpack(void *arg, size_t i, const unsigned char *q, size_t len)
{
	struct pctx *p = arg;
	struct vpa_flam_model *m = p->jobs[i].m;
	const unsigned char *end = q + len;
	struct vpa_nn *net = vpa_nn_clone(p->global);
	size_t np, ns;
	float *w = vpa_nn_params(net, &np), *st = vpa_nn_state(net, &ns);
	double v[3];
	vpa_nn_free(m->net);
	m->net = net;
	if (len != 3 * sizeof(double) + (np + ns) * sizeof(float) || vpa_unpack_f64s(&q, end, v, 3) ||
	    vpa_unpack_f32s(&q, end, w, np) || vpa_unpack_f32s(&q, end, st, ns))
		return -1;
	m->update_norm = v[0];
	m->acc = v[1];
	m->acc_global = v[2];
	return 0;
}

/* Mean cross-entropy of net on u (NAN for an empty set). */
static int heldout_loss(struct vpa_nn *net, const struct vpa_flam_uset *u, double *loss,
			struct vpa_err *err)
{
	*loss = NAN;
	if (u->n == 0)
		return 0;
	struct vpa_nn_batch bt = {u->n, u->off, u->x, NULL};
	int rc = vpa_nn_forward(net, &bt, VPA_NN_EVAL, err);
	if (rc)
		return rc;
	struct vpa_nn_targets tg;
	vpa_nn_targets_init(&tg);
	tg.labels = u->lab;
	return vpa_nn_loss(net, &tg, loss, NULL, err);
}

/* Model i's loss on its own speaker's held-out data and on other speakers'
 * (the property "a personalised model fits its own speaker"): the next
 * LOSS_OTHERS speakers after its own in the Part order, cyclically, so the
 * cost grows with the models, not with their square. */
#define LOSS_OTHERS 8

struct loss_job {
	struct vpa_flam *t;
	const struct vpa_flam_fed *f;
	int *rc;
	struct vpa_err *err;
};

static int loss_one(void *arg, size_t i)
{
	struct loss_job *j = arg;
	struct vpa_flam_model *m = &j->t->models[i];
	size_t n_sp = j->f->n_part1 + j->f->n_part2, k = 0;
	double sum = 0, l;
	int rc = heldout_loss(m->net, &j->f->heldout[m->spk], &m->loss_own, &j->err[i]);
	for (size_t d = 1; d < n_sp && d <= LOSS_OTHERS && !rc; d++) {
		size_t s = (m->spk + d) % n_sp;
		if (j->f->heldout[s].n) {
			rc = heldout_loss(m->net, &j->f->heldout[s], &l, &j->err[i]);
			sum += l;
			k++;
		}
	}
	m->loss_other = k ? sum / (double)k : NAN;
	vpa_nn_release_work(m->net);
	j->rc[i] = rc;
	return rc;
}

int vpa_flam_federate(struct vpa_flam_fed *f, struct vpa_flam *t, struct vpa_err *err)
{
	struct vpa_optim o;
	struct pctx p;
	int rc = 0;
	size_t D = f->in_dim, n_sp = f->n_part1 + f->n_part2;
	double t0 = vpa_now();
	memset(&p, 0, sizeof(p));

	/* the global model on Train-G */
	struct vpa_nn *g = vpa_flam_make_tdnn(f->hidden_layers, f->hidden_dim, f->states, D);
	vpa_nn_init_params(g, f->seed ^ 0x9e3779b97f4a7c15ULL);
	size_t np;
	vpa_nn_params(g, &np);
	f->n_params = np;
	vpa_optim_init_adam(&o, np, f->global_lr, 0.9, 0.999, 1e-8, 0);
	struct vpa_rng tr;
	char *nm = name2(f->stream, "global-order", 0, 0, 0);
	vpa_rng_split(&tr, f->seed, nm);
	free(nm);
	f->global_loss = NAN;
	rc = train(g, &o, &f->train, D, f->global_epochs, f->batch, &tr, &f->global_loss,
		   f->threads, err);
	vpa_optim_release(&o);
	vpa_flam_uset_release(&f->train);
	t->global.id = xstrdup("global");
	t->global.part = VPA_FLAM_GLOBAL;
	t->global.net = g;
	t->global.acc = t->global.acc_global = t->global.update_norm = NAN;
	t->global.loss_own = t->global.loss_other = NAN;
	t->in_dim = D;
	t->spk_id = f->spk_id;
	f->spk_id = NULL;
	t->n_spk = n_sp;
	if (rc)
		goto out;
	f->t_global = vpa_now() - t0;

	/* the models: one or two per Part-1 / Part-2 speaker */
	p.f = f;
	p.global = g;
	p.acc_g = xcalloc(n_sp ? n_sp : 1, sizeof(double));
	size_t n_models = 0;
	for (size_t s = 0; s < n_sp; s++)
		n_models += 1 + f->two[s];
	t->models = xcalloc(n_models ? n_models : 1, sizeof(*t->models));
	t->n_models = n_models;
	p.jobs = xcalloc(n_models ? n_models : 1, sizeof(*p.jobs));
	size_t mi = 0;
	for (size_t s = 0; s < n_sp && !rc; s++) {
		int part = s < f->n_part1 ? VPA_FLAM_PART1 : VPA_FLAM_PART2;
		rc = frame_acc(g, &f->heldout[s], &p.acc_g[s], err);
		for (size_t k = 0; k <= f->two[s]; k++, mi++) {
			struct vpa_flam_model *m = &t->models[mi];
			char id[160];
			snprintf(id, sizeof(id), "%s-m%zu", t->spk_id[s], k + 1);
			m->id = xstrdup(id);
			m->spk = (uint32_t)s;
			m->part = part;
			m->acc = m->acc_global = m->update_norm = NAN;
			m->loss_own = m->loss_other = NAN;
			p.jobs[mi].spk = s;
			p.jobs[mi].which = k;
			p.jobs[mi].m = m;
		}
	}
	/* personalisation, in parallel over models (per-model streams: the result
	   does not depend on the thread count) */
	if (!rc)
		rc = vpa_dist_jobs(n_models, f->threads, pers_job, pers_pack, pers_unpack, &p,
				   "personalisation", vpa_la_run_workers, err);
	if (rc)
		goto out;
	f->t_pers = vpa_now() - t0 - f->t_global;
	{
		int *lrc = xcalloc(n_models ? n_models : 1, sizeof(int));
		struct vpa_err *lerr = xcalloc(n_models ? n_models : 1, sizeof(*lerr));
		struct loss_job lj = {t, f, lrc, lerr};
		vpa_par_jobs(n_models, f->threads, loss_one, &lj, NULL, vpa_la_run_workers);
		for (size_t i = 0; i < n_models && !rc; i++)
			if (lrc[i])
				rc = vpa_fail(err, lrc[i], NULL, "model '%s' on the held-out data: %s",
					      t->models[i].id, lerr[i].msg);
		free(lerr);
		free(lrc);
		if (rc)
			goto out;
	}

	/* the Indicator set */
	t->n_utt = f->indicator.n;
	t->utt_id = f->ind_utt_id;
	f->ind_utt_id = NULL;
	if (!t->utt_id)
		t->utt_id = xcalloc(1, sizeof(char *));
	t->off = f->indicator.off;
	t->x = f->indicator.x;
	free(f->indicator.lab);
	memset(&f->indicator, 0, sizeof(f->indicator));
	if (!t->off)
		t->off = xcalloc(1, sizeof(size_t));
	rc = vpa_flam_hidden_layers(g, &t->layer_at, &t->n_layers, err);
	if (rc)
		goto out;
	t->dim = xmalloc(t->n_layers * sizeof(size_t));
	for (size_t h = 0; h < t->n_layers; h++)
		t->dim[h] = vpa_nn_layer_dim(g, t->layer_at[h]);

	/* local DP accounting: one release per model, and per speaker of the run
	 * the composition of its k releases (k Gaussian releases of sensitivity C
	 * and std sigma C are one Gaussian mechanism of sensitivity C sqrt(k)) */
	t->dp_clip = f->dp_clip;
	t->dp_noise = f->dp_noise;
	t->dp_delta = f->dp_delta;
	t->dp_mech = f->dp_clip > 0 ? VPA_FLAM_DP_LOCAL : VPA_FLAM_DP_NONE;
	t->dp_skip_noise = f->dp_skip_noise;
	t->dp_releases_max = 1;
	for (size_t s = 0; s < n_sp; s++)
		if (f->two[s])
			t->dp_releases_max = 2;
	rc = vpa_flam_dp_account(t, NULL, err);
out:
	if (f->heldout)
		for (size_t s = 0; s < n_sp; s++)
			vpa_flam_uset_release(&f->heldout[s]);
	vpa_flam_uset_release(&f->train);
	vpa_flam_uset_release(&f->indicator);
	free(p.acc_g);
	free(p.jobs);
	return rc;
}

struct vpa_json *vpa_flam_fed_sizes(const struct vpa_flam_fed *f, const struct vpa_flam *t,
				    size_t train_speakers, struct vpa_json *info)
{
	size_t n1 = 0;
	for (size_t i = 0; i < t->n_models; i++)
		n1 += t->models[i].part == VPA_FLAM_PART1;
	struct vpa_json *sz = vpa_json_obj();
	vpa_json_set_num(sz, "train_speakers", (double)train_speakers);
	vpa_json_set_num(sz, "part1_speakers", (double)f->n_part1);
	vpa_json_set_num(sz, "part2_speakers", (double)f->n_part2);
	vpa_json_set_num(sz, "part1_models", (double)n1);
	vpa_json_set_num(sz, "part2_models", (double)(t->n_models - n1));
	vpa_json_set_num(sz, "indicator_utterances", (double)t->n_utt);
	vpa_json_set_num(sz, "indicator_frames", (double)t->off[t->n_utt]);
	vpa_json_set_num(sz, "input_dim", (double)f->in_dim);
	vpa_json_set_num(sz, "hidden_layers", (double)f->hidden_layers);
	vpa_json_set_num(sz, "hidden_dim", (double)f->hidden_dim);
	vpa_json_set_num(sz, "parameters", (double)f->n_params);
	vpa_json_set(info, "sizes", sz);
	vpa_flam_fed_info(f, t, info);
	return sz;
}

void vpa_flam_fed_info(const struct vpa_flam_fed *f, const struct vpa_flam *t,
		       struct vpa_json *info)
{
	double sa = 0, sg = 0, sn = 0;
	size_t n_models = t->n_models;
	for (size_t i = 0; i < n_models; i++) {
		sa += t->models[i].acc;
		sg += t->models[i].acc_global;
		sn += t->models[i].update_norm;
	}
	double lo = 0, lx = 0;
	size_t closer = 0, nl = 0;
	for (size_t i = 0; i < n_models; i++)
		if (isfinite(t->models[i].loss_own) && isfinite(t->models[i].loss_other)) {
			lo += t->models[i].loss_own;
			lx += t->models[i].loss_other;
			closer += t->models[i].loss_own < t->models[i].loss_other;
			nl++;
		}
	struct vpa_json *ut = vpa_json_obj();
	vpa_json_set_num(ut, "global_train_loss", f->global_loss);
	/* a personalised model fits its own speaker: its held-out loss against
	   LOSS_OTHERS other Part speakers' (means over models; the share of models
	   where own < other) */
	vpa_json_set_num(ut, "heldout_loss_own", nl ? lo / (double)nl : NAN);
	vpa_json_set_num(ut, "heldout_loss_other_speakers", nl ? lx / (double)nl : NAN);
	vpa_json_set_num(ut, "models_closer_to_own_speaker", nl ? (double)closer / (double)nl : NAN);
	vpa_json_set_num(ut, "global_accuracy", n_models ? sg / (double)n_models : NAN);
	vpa_json_set_num(ut, "personalised_accuracy", n_models ? sa / (double)n_models : NAN);
	vpa_json_set_num(ut, "mean_update_norm", n_models ? sn / (double)n_models : NAN);
	vpa_json_set(info, "utility", ut);
	struct vpa_json *dp = vpa_json_obj();
	vpa_json_set_num(dp, "clip", f->dp_clip);
	vpa_json_set_num(dp, "noise_multiplier", f->dp_noise);
	vpa_json_set_num(dp, "delta", f->dp_delta);
	vpa_json_set(dp, "epsilon",
		     f->dp_clip > 0 ? vpa_json_num(t->dp_epsilon_speaker) : vpa_json_null());
	vpa_json_set(dp, "epsilon_per_release",
		     f->dp_clip > 0 ? vpa_json_num(t->dp_epsilon) : vpa_json_null());
	vpa_json_set_num(dp, "releases_per_speaker_max", (double)t->dp_releases_max);
	if (f->dp_clip > 0) {
		vpa_json_set(dp, "epsilon_per_release_replace", vpa_json_num(t->dp_epsilon_replace));
		vpa_json_set(dp, "epsilon_rdp", vpa_json_num(t->dp_epsilon_rdp));
		vpa_json_set_str(dp, "epsilon_accountant", t->dp_accountant);
		/* the fault switch is said where the claim is */
		vpa_json_set_str(dp, "fault", f->dp_skip_noise ? "skip_noise" : "none");
	}
	vpa_json_set(info, "local_dp", dp);
	struct vpa_json *tm = vpa_json_obj();
	vpa_json_set_num(tm, "global", f->t_global);
	vpa_json_set_num(tm, "personalisation", f->t_pers);
	vpa_json_set(info, "seconds", tm);
}
