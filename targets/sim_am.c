/*
 * targets/sim_am.c - the simulator of federated speaker-adapted acoustic
 * models (the default data of target kind `fl_acoustic_models`; model and
 * sizes in targets/README.md, "fl_acoustic_models").
 *
 * Speech: a phone-state sequence model.  Each of `states` phone states has a
 * mean m_p (feat_dim); an utterance is a walk over the states (each state has
 * three likely successors, segments of 3..8 frames).  Speaker s transforms
 * the state means with its own affine map and bias (a vocal-tract / channel
 * model): x_t = A_s m_{p_t} + b_s + e_t, A_s = I + spk_affine G_s / sqrt(d),
 * b_s ~ N(0, spk_bias^2 I), e_t ~ N(0, noise^2 I).  Optionally a speaker
 * vector (an i-vector stand-in: a fixed random projection of the speaker's
 * bias and first affine rows, plus per-utterance noise) is appended to every
 * frame, as the paper's acoustic models had i-vectors.
 *
 * Models: a TDNN (hidden_layers blocks of tdnn + relu, an output dense layer
 * over the phone states) trained with Adam on Train-G; each personalised
 * model fine-tunes ALL parameters of W_g with SGD on its own adaptation data
 * (two models on disjoint data for a `two_models` fraction of the speakers),
 * then the released update W_s - W_g is optionally clipped to L2 norm C and
 * noised with N(0, (sigma C)^2) per coordinate (local DP; epsilon per
 * release by the analytic Gaussian mechanism with sensitivity C).
 */
#include "targets/fl_am.h"
#include "base/dist.h"
#include "base/la.h"
#include "metrics/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void vpa_flam_sim_cfg_init(struct vpa_flam_sim_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->feat_dim = 40;
	c->states = 32;
	c->spk_vec_dim = 0;
	c->spk_affine = 0.7;
	c->spk_bias = 1.0;
	c->noise = 1.0;
	c->spk_vec_noise = 0.1;
	c->utt_frames = 100;
	c->train_speakers = 100;
	c->train_utts = 8;
	c->part1_speakers = 24;
	c->part2_speakers = 24;
	c->two_models = 0.8;
	c->adapt_utts = 30;
	c->heldout_utts = 3;
	c->indicator_speakers = 8;
	c->indicator_utts = 4;
	c->hidden_layers = 4;
	c->hidden_dim = 64;
	c->global_epochs = 6;
	c->global_lr = 2e-3;
	c->batch = 8;
	c->adapt_epochs = 2;
	c->adapt_lr = 0.02;
	c->dp_clip = 0;
	c->dp_noise = 0;
	c->dp_delta = 1e-5;
	c->seed = 1;
	c->threads = 1;
}

/* The generative model shared by every speaker. */
struct world {
	const struct vpa_flam_sim_cfg *c;
	size_t d, in_dim;
	float *means;     /* (states, d) */
	uint32_t *succ;   /* (states, 3) */
	float *proj;      /* (spk_vec_dim, 2 d) speaker-vector projection */
};

struct speaker {
	float *A;  /* (d, d) */
	float *b;  /* (d) */
	float *v;  /* (spk_vec_dim) noiseless speaker vector */
};

/* A set of utterances: features (off[n], in_dim) and frame labels. */
struct uset {
	size_t n;
	size_t *off;   /* (n + 1) */
	float *x;      /* (off[n], in_dim) */
	uint32_t *lab; /* (off[n]) */
};

static void uset_release(struct uset *u)
{
	free(u->off);
	free(u->x);
	free(u->lab);
	memset(u, 0, sizeof(*u));
}

static void world_init(struct world *w, const struct vpa_flam_sim_cfg *c)
{
	struct vpa_rng r;
	w->c = c;
	w->d = c->feat_dim;
	w->in_dim = c->feat_dim + c->spk_vec_dim;
	vpa_rng_split(&r, c->seed, "sim_am/world");
	w->means = xmalloc(xmul(c->states * w->d, sizeof(float)));
	for (size_t i = 0; i < c->states * w->d; i++)
		w->means[i] = (float)vpa_rng_normal(&r);
	w->succ = xmalloc(xmul(c->states * 3, sizeof(uint32_t)));
	for (size_t i = 0; i < c->states * 3; i++)
		w->succ[i] = (uint32_t)vpa_rng_below(&r, c->states);
	size_t pk = c->spk_vec_dim * 2 * w->d;
	w->proj = xmalloc(xmul(pk ? pk : 1, sizeof(float)));
	for (size_t i = 0; i < pk; i++)
		w->proj[i] = (float)(vpa_rng_normal(&r) / sqrt(2.0 * (double)w->d));
}

static void world_release(struct world *w)
{
	free(w->means);
	free(w->succ);
	free(w->proj);
}

static void speaker_draw(const struct world *w, const char *name, struct speaker *s)
{
	const struct vpa_flam_sim_cfg *c = w->c;
	size_t d = w->d;
	struct vpa_rng r;
	char nm[128];
	snprintf(nm, sizeof(nm), "sim_am/speaker/%s", name);
	vpa_rng_split(&r, c->seed, nm);
	s->A = xmalloc(xmul(d * d, sizeof(float)));
	s->b = xmalloc(d * sizeof(float));
	s->v = xmalloc((c->spk_vec_dim ? c->spk_vec_dim : 1) * sizeof(float));
	double a = c->spk_affine / sqrt((double)d);
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j < d; j++)
			s->A[i * d + j] = (float)((i == j) + a * vpa_rng_normal(&r));
	for (size_t i = 0; i < d; i++)
		s->b[i] = (float)(c->spk_bias * vpa_rng_normal(&r));
	/* the speaker vector sees the bias and the first row block of A - I */
	for (size_t k = 0; k < c->spk_vec_dim; k++) {
		double acc = 0;
		const float *p = w->proj + k * 2 * d;
		for (size_t i = 0; i < d; i++)
			acc += p[i] * s->b[i] / (c->spk_bias > 0 ? c->spk_bias : 1);
		for (size_t i = 0; i < d; i++)
			acc += p[d + i] * (s->A[i] - (i == 0)) / (a > 0 ? a : 1);
		s->v[k] = (float)acc;
	}
}

static void speaker_free(struct speaker *s)
{
	free(s->A);
	free(s->b);
	free(s->v);
}

/* n utterances of speaker s from stream r (labels when lab != NULL). */
static void gen_utts(const struct world *w, const struct speaker *s, size_t n,
		     struct vpa_rng *r, struct uset *u)
{
	const struct vpa_flam_sim_cfg *c = w->c;
	size_t d = w->d, D = w->in_dim;
	u->n = n;
	u->off = xmalloc((n + 1) * sizeof(size_t));
	u->off[0] = 0;
	size_t half = c->utt_frames / 2 > 0 ? c->utt_frames / 2 : 1;
	for (size_t i = 0; i < n; i++)
		u->off[i + 1] = u->off[i] + half + vpa_rng_below(r, c->utt_frames + 1);
	size_t N = u->off[n];
	u->x = xmalloc(xmul(N * D, sizeof(float)));
	u->lab = xmalloc(xmul(N, sizeof(uint32_t)));
	float *e = xmalloc(d * sizeof(float));
	for (size_t i = 0; i < n; i++) {
		uint32_t p = (uint32_t)vpa_rng_below(r, c->states);
		size_t left = 3 + vpa_rng_below(r, 6);
		float *vu = NULL;
		if (c->spk_vec_dim) {
			vu = xmalloc(c->spk_vec_dim * sizeof(float));
			for (size_t k = 0; k < c->spk_vec_dim; k++)
				vu[k] = (float)(s->v[k] + c->spk_vec_noise * vpa_rng_normal(r));
		}
		for (size_t t = u->off[i]; t < u->off[i + 1]; t++) {
			if (left == 0) {
				p = w->succ[p * 3 + vpa_rng_below(r, 3)];
				left = 3 + vpa_rng_below(r, 6);
			}
			left--;
			u->lab[t] = p;
			const float *m = w->means + (size_t)p * d;
			float *x = u->x + t * D;
			for (size_t j = 0; j < d; j++)
				e[j] = (float)(c->noise * vpa_rng_normal(r));
			for (size_t a = 0; a < d; a++) {
				double acc = s->b[a] + e[a];
				const float *Ar = s->A + a * d;
				for (size_t j = 0; j < d; j++)
					acc += Ar[j] * m[j];
				x[a] = (float)acc;
			}
			for (size_t k = 0; k < c->spk_vec_dim; k++)
				x[d + k] = vu[k];
		}
		free(vu);
	}
	free(e);
}

/* Append b's utterances to a. */
static void uset_cat(struct uset *a, const struct uset *b, size_t D)
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

static struct vpa_nn *make_am(const struct vpa_flam_sim_cfg *c, size_t in_dim)
{
	const int *ctx[6] = {C5, C3, C3, C3W, C3W, C1};
	const size_t nctx[6] = {5, 3, 3, 3, 3, 1};
	struct vpa_nn *net = vpa_nn_new(in_dim);
	for (size_t l = 0; l < c->hidden_layers; l++) {
		size_t k = l < 6 ? l : 5;
		vpa_nn_add_tdnn(net, c->hidden_dim, ctx[k], nctx[k]);
		vpa_nn_add_simple(net, VPA_NN_RELU);
	}
	vpa_nn_add_dense(net, c->states);
	return net;
}

/* A sub-batch of utterances idx[0..k-1] of u copied into contiguous buffers. */
struct sub {
	size_t *off;
	float *x;
	uint32_t *lab;
};

static void sub_make(const struct uset *u, const size_t *idx, size_t k, size_t D, struct sub *s)
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

/* Epochs of mini-batch training over u in a seeded order. */
static int train(struct vpa_nn *net, struct vpa_optim *o, const struct uset *u, size_t D,
		 size_t epochs, size_t batch, struct vpa_rng *r, double *last_loss,
		 struct vpa_err *err)
{
	size_t *perm = xmalloc(u->n * sizeof(size_t));
	int rc = 0;
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
			struct vpa_nn_batch bt = {k, s.off, s.x, NULL};
			struct vpa_nn_targets tg;
			vpa_nn_targets_init(&tg);
			tg.labels = s.lab;
			double loss;
			rc = vpa_nn_train_step(net, o, &bt, &tg, 0, &loss, err);
			sum += loss;
			nb++;
			sub_free(&s);
		}
		if (last_loss && nb)
			*last_loss = sum / (double)nb;
	}
	free(perm);
	return rc;
}

/* Frame accuracy of net on u. */
static int frame_acc(struct vpa_nn *net, const struct uset *u, double *acc, struct vpa_err *err)
{
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
	size_t spk_global;  /* speaker number in the simulation */
	size_t which;       /* 0 or 1: the model of that speaker */
	struct vpa_flam_model *m;
	int rc;
	struct vpa_err err;
};

struct pctx {
	const struct world *w;
	const struct vpa_flam_sim_cfg *c;
	struct vpa_nn *global;
	struct speaker *spk;   /* (n_sim_speakers) Part-1 then Part-2 */
	struct uset *heldout;  /* per speaker */
	double *acc_g;         /* per speaker */
	struct pjob *jobs;
	size_t n_jobs, next;
	pthread_mutex_t mu;
};

static void run_job(struct pctx *p, struct pjob *j)
{
	const struct vpa_flam_sim_cfg *c = p->c;
	size_t D = p->w->in_dim;
	char nm[128];
	struct vpa_rng r;
	struct uset ad = {0};
	vpa_err_init(&j->err);
	snprintf(nm, sizeof(nm), "sim_am/adapt/%zu/%zu", j->spk_global, j->which);
	vpa_rng_split(&r, c->seed, nm);
	gen_utts(p->w, &p->spk[j->spk_global], c->adapt_utts, &r, &ad);
	struct vpa_nn *net = vpa_nn_clone(p->global);
	size_t np;
	float *w = vpa_nn_params(net, &np);
	struct vpa_optim o;
	vpa_optim_init_sgd(&o, np, c->adapt_lr, 0.0, 0.0);
	j->rc = train(net, &o, &ad, D, c->adapt_epochs, c->batch, &r, NULL, &j->err);
	vpa_optim_release(&o);
	uset_release(&ad);
	if (!j->rc) {
		/* the released update: W_s - W_g, clipped and noised (local DP) */
		size_t ng;
		const float *g = vpa_nn_params(p->global, &ng);
		double s2 = 0;
		for (size_t i = 0; i < np; i++)
			s2 += ((double)w[i] - g[i]) * ((double)w[i] - g[i]);
		j->m->update_norm = sqrt(s2);
		if (c->dp_clip > 0) {
			double scale = j->m->update_norm > c->dp_clip ? c->dp_clip / j->m->update_norm : 1;
			struct vpa_rng nr;
			snprintf(nm, sizeof(nm), "sim_am/dp/%zu/%zu", j->spk_global, j->which);
			vpa_rng_split(&nr, c->seed, nm);
			/* the fault switch `skip_noise`: no noise, the claim unchanged */
			double sd = c->dp_skip_noise ? 0 : c->dp_noise * c->dp_clip;
			for (size_t i = 0; i < np; i++) {
				double dlt = ((double)w[i] - g[i]) * scale;
				if (sd > 0)
					dlt += sd * vpa_rng_normal(&nr);
				w[i] = (float)(g[i] + dlt);
			}
		}
		j->rc = frame_acc(net, &p->heldout[j->spk_global], &j->m->acc, &j->err);
		j->m->acc_global = p->acc_g[j->spk_global];
	}
	j->m->net = net;
}

/* Model i's personalisation, a job of vpa_dist_jobs.  Simulated models are
 * small: under MPI each travels whole (its parameters, its batch-norm state
 * and three numbers) to the other ranks, which the attacks then run on; an
 * imported target's models never travel (targets/fl_am_files.c). */
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

static char *fmt(const char *f, size_t a, size_t b)
{
	char s[64];
	snprintf(s, sizeof(s), f, a, b);
	return xstrdup(s);
}

int vpa_flam_simulate(const struct vpa_flam_sim_cfg *c, struct vpa_flam *t,
		      struct vpa_json *info, struct vpa_err *err)
{
	struct world w;
	struct uset trg = {0};
	struct vpa_optim o;
	struct pctx p;
	int rc = 0;
	size_t D;
	double t0 = vpa_now();
	world_init(&w, c);
	D = w.in_dim;
	memset(&p, 0, sizeof(p));
	size_t n_sp = c->part1_speakers + c->part2_speakers;

	/* Train-G and the global model */
	for (size_t s = 0; s < c->train_speakers; s++) {
		struct speaker sp;
		struct uset u;
		struct vpa_rng r;
		char *nm = fmt("train%zu", s, 0);
		speaker_draw(&w, nm, &sp);
		free(nm);
		nm = fmt("sim_am/train/%zu", s, 0);
		vpa_rng_split(&r, c->seed, nm);
		free(nm);
		gen_utts(&w, &sp, c->train_utts, &r, &u);
		uset_cat(&trg, &u, D);
		uset_release(&u);
		speaker_free(&sp);
	}
	struct vpa_nn *g = make_am(c, D);
	vpa_nn_init_params(g, c->seed ^ 0x9e3779b97f4a7c15ULL);
	size_t np;
	vpa_nn_params(g, &np);
	vpa_optim_init_adam(&o, np, c->global_lr, 0.9, 0.999, 1e-8, 0);
	struct vpa_rng tr;
	vpa_rng_split(&tr, c->seed, "sim_am/global-order");
	double gloss = NAN;
	rc = train(g, &o, &trg, D, c->global_epochs, c->batch, &tr, &gloss, err);
	vpa_optim_release(&o);
	uset_release(&trg);
	t->global.id = xstrdup("global");
	t->global.part = VPA_FLAM_GLOBAL;
	t->global.net = g;
	t->global.acc = t->global.acc_global = t->global.update_norm = NAN;
	t->in_dim = D;
	if (rc)
		goto out;
	double t_global = vpa_now() - t0;

	/* Part-1 / Part-2 speakers: who has two models */
	p.w = &w;
	p.c = c;
	p.global = g;
	p.spk = xcalloc(n_sp ? n_sp : 1, sizeof(*p.spk));
	p.heldout = xcalloc(n_sp ? n_sp : 1, sizeof(*p.heldout));
	p.acc_g = xcalloc(n_sp ? n_sp : 1, sizeof(double));
	t->spk_id = xcalloc(n_sp ? n_sp : 1, sizeof(char *));
	t->n_spk = n_sp;
	unsigned char *two = xcalloc(n_sp ? n_sp : 1, 1);
	struct vpa_rng sr;
	vpa_rng_split(&sr, c->seed, "sim_am/two-models");
	for (int part = 1; part <= 2; part++) {
		size_t base = part == 1 ? 0 : c->part1_speakers;
		size_t n = part == 1 ? c->part1_speakers : c->part2_speakers;
		size_t k = (size_t)floor(c->two_models * (double)n + 0.5);
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
	size_t n_models = 0;
	for (size_t s = 0; s < n_sp; s++)
		n_models += 1 + two[s];
	t->models = xcalloc(n_models ? n_models : 1, sizeof(*t->models));
	t->n_models = n_models;
	p.jobs = xcalloc(n_models ? n_models : 1, sizeof(*p.jobs));
	p.n_jobs = n_models;
	size_t mi = 0;
	for (size_t s = 0; s < n_sp && !rc; s++) {
		int part = s < c->part1_speakers ? VPA_FLAM_PART1 : VPA_FLAM_PART2;
		t->spk_id[s] = part == VPA_FLAM_PART1 ? fmt("p1spk%03zu", s, 0)
						      : fmt("p2spk%03zu", s - c->part1_speakers, 0);
		speaker_draw(&w, t->spk_id[s], &p.spk[s]);
		struct vpa_rng r;
		char *nm = fmt("sim_am/heldout/%zu", s, 0);
		vpa_rng_split(&r, c->seed, nm);
		free(nm);
		gen_utts(&w, &p.spk[s], c->heldout_utts, &r, &p.heldout[s]);
		rc = frame_acc(g, &p.heldout[s], &p.acc_g[s], err);
		for (size_t k = 0; k <= two[s]; k++, mi++) {
			struct vpa_flam_model *m = &t->models[mi];
			char id[96];
			snprintf(id, sizeof(id), "%s-m%zu", t->spk_id[s], k + 1);
			m->id = xstrdup(id);
			m->spk = (uint32_t)s;
			m->part = part;
			m->acc = m->acc_global = m->update_norm = NAN;
			p.jobs[mi].spk_global = s;
			p.jobs[mi].which = k;
			p.jobs[mi].m = m;
		}
	}
	if (rc)
		goto out2;

	/* personalisation, in parallel over models (per-model streams: the result
	   does not depend on the thread count) */
	{
		rc = vpa_dist_jobs(n_models, c->threads, pers_job, pers_pack, pers_unpack, &p,
				   "personalisation", vpa_la_run_workers, err);
	}
	if (rc)
		goto out2;
	double t_pers = vpa_now() - t0 - t_global;

	/* the Indicator set: other speakers */
	{
		struct uset ind = {0};
		t->n_utt = c->indicator_speakers * c->indicator_utts;
		t->utt_id = xcalloc(t->n_utt ? t->n_utt : 1, sizeof(char *));
		for (size_t s = 0; s < c->indicator_speakers; s++) {
			struct speaker sp;
			struct uset u;
			struct vpa_rng r;
			char *nm = fmt("ind%zu", s, 0);
			speaker_draw(&w, nm, &sp);
			free(nm);
			nm = fmt("sim_am/indicator/%zu", s, 0);
			vpa_rng_split(&r, c->seed, nm);
			free(nm);
			gen_utts(&w, &sp, c->indicator_utts, &r, &u);
			uset_cat(&ind, &u, D);
			for (size_t k = 0; k < c->indicator_utts; k++)
				t->utt_id[s * c->indicator_utts + k] = fmt("ind%03zu-u%02zu", s, k + 1);
			uset_release(&u);
			speaker_free(&sp);
		}
		t->off = ind.off;
		t->x = ind.x;
		free(ind.lab);
		if (!t->off) {
			t->off = xcalloc(1, sizeof(size_t));
		}
	}
	rc = vpa_flam_hidden_layers(g, &t->layer_at, &t->n_layers, err);
	if (rc)
		goto out2;
	t->dim = xmalloc(t->n_layers * sizeof(size_t));
	for (size_t h = 0; h < t->n_layers; h++)
		t->dim[h] = vpa_nn_layer_dim(g, t->layer_at[h]);

	/* local DP accounting: one release per model, and per speaker of the run
	 * the composition of its k releases (k Gaussian releases of sensitivity C
	 * and std sigma C are one Gaussian mechanism of sensitivity C sqrt(k)) */
	t->dp_clip = c->dp_clip;
	t->dp_noise = c->dp_noise;
	t->dp_delta = c->dp_delta;
	t->dp_mech = c->dp_clip > 0 ? VPA_FLAM_DP_LOCAL : VPA_FLAM_DP_NONE;
	t->dp_skip_noise = c->dp_skip_noise;
	t->dp_releases_max = 1;
	for (size_t s = 0; s < n_sp; s++)
		if (two[s])
			t->dp_releases_max = 2;
	if ((rc = vpa_flam_dp_account(t, NULL, err)))
		goto out2;

	if (info) {
		double sa = 0, sg = 0, sn = 0;
		for (size_t i = 0; i < n_models; i++) {
			sa += t->models[i].acc;
			sg += t->models[i].acc_global;
			sn += t->models[i].update_norm;
		}
		size_t n1 = 0;
		for (size_t i = 0; i < n_models; i++)
			n1 += t->models[i].part == VPA_FLAM_PART1;
		struct vpa_json *sz = vpa_json_obj();
		vpa_json_set_num(sz, "train_speakers", (double)c->train_speakers);
		vpa_json_set_num(sz, "part1_speakers", (double)c->part1_speakers);
		vpa_json_set_num(sz, "part2_speakers", (double)c->part2_speakers);
		vpa_json_set_num(sz, "part1_models", (double)n1);
		vpa_json_set_num(sz, "part2_models", (double)(n_models - n1));
		vpa_json_set_num(sz, "indicator_utterances", (double)t->n_utt);
		vpa_json_set_num(sz, "indicator_frames", (double)t->off[t->n_utt]);
		vpa_json_set_num(sz, "input_dim", (double)D);
		vpa_json_set_num(sz, "hidden_layers", (double)c->hidden_layers);
		vpa_json_set_num(sz, "hidden_dim", (double)c->hidden_dim);
		vpa_json_set_num(sz, "parameters", (double)np);
		vpa_json_set(info, "sizes", sz);
		struct vpa_json *ut = vpa_json_obj();
		vpa_json_set_num(ut, "global_train_loss", gloss);
		vpa_json_set_num(ut, "global_accuracy", n_models ? sg / (double)n_models : NAN);
		vpa_json_set_num(ut, "personalised_accuracy", n_models ? sa / (double)n_models : NAN);
		vpa_json_set_num(ut, "mean_update_norm", n_models ? sn / (double)n_models : NAN);
		vpa_json_set(info, "utility", ut);
		struct vpa_json *dp = vpa_json_obj();
		vpa_json_set_num(dp, "clip", c->dp_clip);
		vpa_json_set_num(dp, "noise_multiplier", c->dp_noise);
		vpa_json_set_num(dp, "delta", c->dp_delta);
		vpa_json_set(dp, "epsilon",
			     c->dp_clip > 0 ? vpa_json_num(t->dp_epsilon_speaker) : vpa_json_null());
		vpa_json_set(dp, "epsilon_per_release",
			     c->dp_clip > 0 ? vpa_json_num(t->dp_epsilon) : vpa_json_null());
		vpa_json_set_num(dp, "releases_per_speaker_max", (double)t->dp_releases_max);
		if (c->dp_clip > 0) {
			vpa_json_set(dp, "epsilon_per_release_replace",
				     vpa_json_num(t->dp_epsilon_replace));
			vpa_json_set(dp, "epsilon_rdp", vpa_json_num(t->dp_epsilon_rdp));
			vpa_json_set_str(dp, "epsilon_accountant", t->dp_accountant);
			/* the fault switch is said where the claim is */
			vpa_json_set_str(dp, "fault", c->dp_skip_noise ? "skip_noise" : "none");
		}
		vpa_json_set(info, "local_dp", dp);
		struct vpa_json *tm = vpa_json_obj();
		vpa_json_set_num(tm, "global", t_global);
		vpa_json_set_num(tm, "personalisation", t_pers);
		vpa_json_set(info, "seconds", tm);
	}
out2:
	for (size_t s = 0; s < n_sp; s++) {
		if (p.spk[s].A)
			speaker_free(&p.spk[s]);
		uset_release(&p.heldout[s]);
	}
	free(p.spk);
	free(p.heldout);
	free(p.acc_g);
	free(p.jobs);
	free(two);
out:
	world_release(&w);
	return rc;
}
