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
 * Models: the TDNN of targets/fl_am_train.c trained on these frames, the
 * personalised models fine-tuned from it (vpa_flam_federate), with the
 * streams named "sim_am/...".
 */
#include "targets/fl_am.h"

#include <math.h>
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

#define uset vpa_flam_uset
#define uset_release vpa_flam_uset_release
#define uset_cat vpa_flam_uset_cat

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

static char *fmt(const char *f, size_t a, size_t b)
{
	char s[64];
	snprintf(s, sizeof(s), f, a, b);
	return xstrdup(s);
}

/* The simulator's adaptation data: speaker spk's utterances drawn from the
 * model's stream (which the personalisation's batch order continues). */
struct sim_adapt {
	const struct world *w;
	const struct speaker *spk;
};

static void sim_adapt_data(void *arg, size_t spk, size_t which, struct vpa_rng *r,
			   struct uset *u)
{
	const struct sim_adapt *a = arg;
	(void)which;
	gen_utts(a->w, &a->spk[spk], a->w->c->adapt_utts, r, u);
}

int vpa_flam_simulate(const struct vpa_flam_sim_cfg *c, struct vpa_flam *t,
		      struct vpa_json *info, struct vpa_err *err)
{
	struct world w;
	struct vpa_flam_fed f;
	int rc = 0;
	size_t D;
	world_init(&w, c);
	D = w.in_dim;
	memset(&f, 0, sizeof(f));
	size_t n_sp = c->part1_speakers + c->part2_speakers;
	f.in_dim = D;
	f.states = c->states;
	VPA_FLAM_FED_TRAINING(&f, c);
	f.stream = "sim_am";

	/* Train-G */
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
		uset_cat(&f.train, &u, D);
		uset_release(&u);
		speaker_free(&sp);
	}

	/* Part-1 / Part-2 speakers, their held-out utterances, who has two models */
	struct speaker *spk = xcalloc(n_sp ? n_sp : 1, sizeof(*spk));
	unsigned char *two = xcalloc(n_sp ? n_sp : 1, 1);
	f.spk_id = xcalloc(n_sp ? n_sp : 1, sizeof(char *));
	f.heldout = xcalloc(n_sp ? n_sp : 1, sizeof(*f.heldout));
	vpa_flam_pick_two(c->seed, "sim_am", c->part1_speakers, c->part2_speakers, c->two_models,
			  two);
	f.two = two;
	for (size_t s = 0; s < n_sp; s++) {
		f.spk_id[s] = s < c->part1_speakers ? fmt("p1spk%03zu", s, 0)
						    : fmt("p2spk%03zu", s - c->part1_speakers, 0);
		speaker_draw(&w, f.spk_id[s], &spk[s]);
		struct vpa_rng r;
		char *nm = fmt("sim_am/heldout/%zu", s, 0);
		vpa_rng_split(&r, c->seed, nm);
		free(nm);
		gen_utts(&w, &spk[s], c->heldout_utts, &r, &f.heldout[s]);
	}
	struct sim_adapt sa = {&w, spk};
	f.adapt = sim_adapt_data;
	f.adapt_arg = &sa;

	/* the Indicator set: other speakers */
	f.ind_utt_id = xcalloc(c->indicator_speakers * c->indicator_utts + 1, sizeof(char *));
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
		uset_cat(&f.indicator, &u, D);
		for (size_t k = 0; k < c->indicator_utts; k++)
			f.ind_utt_id[s * c->indicator_utts + k] = fmt("ind%03zu-u%02zu", s, k + 1);
		uset_release(&u);
		speaker_free(&sp);
	}

	rc = vpa_flam_federate(&f, t, err);
	if (!rc && info)
		vpa_flam_fed_sizes(&f, t, c->train_speakers, info);
	for (size_t s = 0; s < n_sp; s++)
		if (spk[s].A)
			speaker_free(&spk[s]);
	free(spk);
	free(f.heldout);
	if (f.spk_id) /* not moved into t (an early failure) */
		for (size_t s = 0; s < n_sp; s++)
			free(f.spk_id[s]);
	free(f.spk_id);
	if (f.ind_utt_id)
		for (size_t i = 0; i < c->indicator_speakers * c->indicator_utts; i++)
			free(f.ind_utt_id[i]);
	free(f.ind_utt_id);
	free(two);
	world_release(&w);
	return rc;
}
