/*
 * targets/sim_speech.c - the generative simulator of x-vectors and of the
 * x-vectors extracted from anonymised (re-synthesised) speech.  The model
 * and its defaults are documented in targets/README.md; in short:
 *
 *   x  = m + g(gender) + V y + s(dur) (U z + sigma_e e)
 *   x~ = c + G (p - c) + leakage V y + C w + s(dur) (U z~ + sigma_e e~)
 *   (c = m + g(gender of p), G = synth_gain)
 *
 * y ~ N(0, I) per speaker, z, e, w ~ N(0, I) per utterance, s(dur) =
 * sqrt(1 + tau / dur).  V spans a speaker subspace with geometrically
 * decaying scales, U is a dense session subspace (overlapping the speaker
 * subspace, so a back-end must learn to separate them), C is the
 * synthesiser's channel inside the leading speaker directions: to a back-end
 * trained on original speech it looks like speaker variation, which is why
 * retraining on anonymised speech (semi-informed) helps.
 *
 * Every draw comes from a stream named after the speaker or utterance, so
 * sets are reproducible and an utterance cut to another duration keeps its
 * draws.
 */
#include "targets/anon.h"
#include "base/la.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vpa_sim_cfg_init(struct vpa_sim_cfg *c)
{
	c->dim = 256;
	c->spk_rank = 150;
	c->utt_rank = 100;
	c->synth_rank = 8;
	c->spk_scale = 0.35;
	c->spk_decay = 0.3;
	c->utt_scale = 0.6;
	c->noise = 0.25;
	c->gender_sep = 4.0;
	c->tau = 4.0;
	c->dur_mean = 8.0;
	c->dur_sigma = 0.5;
	c->leakage = 0.1;
	c->synth_noise = 2.0;
	c->synth_gain = 12.0;
}

struct vpa_sim {
	struct vpa_sim_cfg c;
	uint64_t seed;
	size_t d, rs, ru, rc;
	double *m;  /* (d) global mean */
	double *g;  /* (d) half the male - female offset */
	double *V;  /* (d, rs) */
	double *U;  /* (d, ru) */
	double *C;  /* (d, rc) */
};

size_t vpa_sim_dim(const struct vpa_sim *s)
{
	return s->d;
}

void vpa_sim_free(struct vpa_sim *s)
{
	if (!s)
		return;
	free(s->m);
	free(s->g);
	free(s->V);
	free(s->U);
	free(s->C);
	free(s);
}

static void normal_vec(struct vpa_rng *r, double *x, size_t n, double sd)
{
	for (size_t i = 0; i < n; i++)
		x[i] = sd * vpa_rng_normal(r);
}

struct vpa_sim *vpa_sim_new(const struct vpa_sim_cfg *c, uint64_t seed)
{
	struct vpa_sim *s = xcalloc(1, sizeof(*s));
	struct vpa_rng r;
	s->c = *c;
	s->seed = seed;
	s->d = c->dim;
	s->rs = c->spk_rank;
	s->ru = c->utt_rank;
	s->rc = c->synth_rank < c->spk_rank ? c->synth_rank : c->spk_rank;
	size_t d = s->d;
	vpa_rng_split(&r, seed, "sim/model");
	s->m = xmalloc(xmul(d, sizeof(double)));
	s->g = xmalloc(xmul(d, sizeof(double)));
	normal_vec(&r, s->m, d, 1.0);
	/* orthonormal basis Q (rs + 1 columns: the speaker directions and the
	   gender direction) by modified Gram-Schmidt on Gaussian columns, stored
	   column j as row j of q */
	size_t nq = s->rs + 1;
	double *q = xmalloc(xmul(xmul(nq, d), sizeof(double)));
	for (size_t j = 0; j < nq; j++) {
		double *v = q + j * d;
		for (;;) {
			normal_vec(&r, v, d, 1.0);
			for (size_t k = 0; k < j; k++)
				vpa_daxpy(d, -vpa_ddot(d, v, q + k * d), q + k * d, v);
			double nv = vpa_dnrm2(d, v);
			if (nv > 1e-6) {
				for (size_t i = 0; i < d; i++)
					v[i] /= nv;
				break;
			}
		}
	}
	s->V = xmalloc(xmul(xmul(d, s->rs), sizeof(double)));
	s->C = xmalloc(xmul(xmul(d, s->rc ? s->rc : 1), sizeof(double)));
	for (size_t k = 0; k < s->rs; k++) {
		double t = s->rs > 1 ? (double)k / (double)(s->rs - 1) : 0;
		double sc = c->spk_scale * pow(c->spk_decay, t);
		for (size_t i = 0; i < d; i++)
			s->V[i * s->rs + k] = sc * q[k * d + i];
	}
	for (size_t k = 0; k < s->rc; k++)
		for (size_t i = 0; i < d; i++)
			s->C[i * s->rc + k] = c->synth_noise * q[k * d + i];
	for (size_t i = 0; i < d; i++)
		s->g[i] = 0.5 * c->gender_sep * q[s->rs * d + i];
	s->U = xmalloc(xmul(xmul(d, s->ru ? s->ru : 1), sizeof(double)));
	normal_vec(&r, s->U, d * s->ru, c->utt_scale / sqrt((double)d));
	free(q);
	return s;
}

void vpa_sim_speaker(const struct vpa_sim *s, const char *spk, double *y)
{
	struct vpa_rng r;
	char name[512];
	snprintf(name, sizeof(name), "sim/spk/%s", spk);
	vpa_rng_split(&r, s->seed, name);
	normal_vec(&r, y, s->rs, 1.0);
}

double vpa_sim_duration(const struct vpa_sim *s, const char *utt)
{
	struct vpa_rng r;
	char name[512];
	snprintf(name, sizeof(name), "sim/dur/%s", utt);
	vpa_rng_split(&r, s->seed, name);
	double dur = exp(log(s->c.dur_mean) + s->c.dur_sigma * vpa_rng_normal(&r));
	if (dur < 1)
		dur = 1;
	if (dur > 30)
		dur = 30;
	return dur;
}

/* x += s(dur) (U z + sigma_e e), the draws from stream `name`. */
static void add_session(const struct vpa_sim *s, double dur, const char *name, double *x)
{
	struct vpa_rng r;
	vpa_rng_split(&r, s->seed, name);
	double sc = sqrt(1 + s->c.tau / (dur > 0.01 ? dur : 0.01));
	double *z = xmalloc(xmul(s->ru ? s->ru : 1, sizeof(double)));
	normal_vec(&r, z, s->ru, 1.0);
	vpa_dgemv(0, s->d, s->ru, sc, s->U, s->ru, z, 1.0, x);
	for (size_t i = 0; i < s->d; i++)
		x[i] += sc * s->c.noise * vpa_rng_normal(&r);
	free(z);
}

void vpa_sim_utterance(const struct vpa_sim *s, const double *y, char gender, double dur,
		       const char *utt, double *x)
{
	char name[512];
	for (size_t i = 0; i < s->d; i++)
		x[i] = s->m[i] + (gender == 'm' ? s->g[i] : gender == 'f' ? -s->g[i] : 0);
	vpa_dgemv(0, s->d, s->rs, 1.0, s->V, s->rs, y, 1.0, x);
	snprintf(name, sizeof(name), "sim/utt/%s", utt);
	add_session(s, dur, name, x);
}

void vpa_sim_anon_utterance(const struct vpa_sim *s, const double *y, const double *p, char pg,
			    double dur, const char *utt, double *x)
{
	char name[512];
	struct vpa_rng r;
	/* the synthesiser renders the pseudo voice: its deviation from the mean
	   voice of its gender is scaled by synth_gain */
	for (size_t i = 0; i < s->d; i++) {
		double c = s->m[i] + (pg == 'm' ? s->g[i] : pg == 'f' ? -s->g[i] : 0);
		x[i] = c + s->c.synth_gain * (p[i] - c);
	}
	vpa_dgemv(0, s->d, s->rs, s->c.leakage, s->V, s->rs, y, 1.0, x);
	snprintf(name, sizeof(name), "sim/synth/%s", utt);
	vpa_rng_split(&r, s->seed, name);
	double *w = xmalloc(xmul(s->rc ? s->rc : 1, sizeof(double)));
	normal_vec(&r, w, s->rc, 1.0);
	vpa_dgemv(0, s->d, s->rc, 1.0, s->C, s->rc, w, 1.0, x);
	free(w);
	snprintf(name, sizeof(name), "sim/anon/%s", utt);
	add_session(s, dur, name, x);
}

void vpa_sim_make_set(const struct vpa_sim *s, const char *prefix, size_t n_spk,
		      size_t utt_per_spk, struct vpa_embset *out)
{
	double *y = xmalloc(xmul(s->rs ? s->rs : 1, sizeof(double)));
	double *x = xmalloc(xmul(s->d, sizeof(double)));
	char spk[256], utt[300];
	struct vpa_err err;
	vpa_err_init(&err);
	for (size_t k = 0; k < n_spk; k++) {
		snprintf(spk, sizeof(spk), "%s-s%04zu", prefix, k + 1);
		char g = (k % 2) ? 'm' : 'f';
		vpa_sim_speaker(s, spk, y);
		uint32_t si = vpa_embset_intern_spk(out, spk);
		vpa_embset_set_gender(out, si, g);
		for (size_t u = 0; u < utt_per_spk; u++) {
			snprintf(utt, sizeof(utt), "%s-u%03zu", spk, u + 1);
			double dur = vpa_sim_duration(s, utt);
			vpa_sim_utterance(s, y, g, dur, utt, x);
			long row = vpa_embset_add(out, utt, spk, x, s->d, &err);
			if (row < 0)
				VPA_BUG("simulated set: %s", err.msg);
			vpa_embset_set_dur(out, (size_t)row, dur);
		}
	}
	free(y);
	free(x);
}

/* Copy the structure (speakers with genders) of src into empty out. */
static void intern_all(const struct vpa_embset *src, struct vpa_embset *out)
{
	for (size_t k = 0; k < src->n_spk; k++) {
		uint32_t si = vpa_embset_intern_spk(out, src->spk_id[k]);
		if (src->gender && src->gender[k])
			vpa_embset_set_gender(out, si, src->gender[k]);
	}
}

static double utt_dur(const struct vpa_sim *s, const struct vpa_embset *src, size_t i,
		      double cap)
{
	double dur = src->dur && src->dur[i] > 0 ? src->dur[i] : vpa_sim_duration(s, src->utt[i]);
	return cap > 0 && dur > cap ? cap : dur;
}

void vpa_sim_anon_set(const struct vpa_sim *s, const struct vpa_embset *src,
		      const struct vpa_anon_result *r, double dur_cap, const char *tag,
		      struct vpa_embset *out)
{
	double *y = xmalloc(xmul(s->rs ? s->rs : 1, sizeof(double)));
	double *x = xmalloc(xmul(s->d, sizeof(double)));
	char name[600];
	struct vpa_err err;
	vpa_err_init(&err);
	intern_all(src, out);
	for (size_t i = 0; i < src->n; i++) {
		const char *spk = src->spk_id[src->spk[i]];
		vpa_sim_speaker(s, spk, y);
		double dur = utt_dur(s, src, i, dur_cap);
		snprintf(name, sizeof(name), "%s/%s", tag, src->utt[i]);
		vpa_sim_anon_utterance(s, y, r->pseudo + (size_t)r->of_utt[i] * s->d,
				       r->gender ? r->gender[r->of_utt[i]] : 0, dur, name, x);
		long row = vpa_embset_add(out, src->utt[i], spk, x, s->d, &err);
		if (row < 0)
			VPA_BUG("simulated set: %s", err.msg);
		vpa_embset_set_dur(out, (size_t)row, dur);
	}
	free(y);
	free(x);
}

void vpa_sim_remake(const struct vpa_sim *s, const struct vpa_embset *src, double dur_cap,
		    struct vpa_embset *out)
{
	double *y = xmalloc(xmul(s->rs ? s->rs : 1, sizeof(double)));
	double *x = xmalloc(xmul(s->d, sizeof(double)));
	struct vpa_err err;
	vpa_err_init(&err);
	intern_all(src, out);
	for (size_t i = 0; i < src->n; i++) {
		uint32_t sk = src->spk[i];
		vpa_sim_speaker(s, src->spk_id[sk], y);
		double dur = utt_dur(s, src, i, dur_cap);
		vpa_sim_utterance(s, y, src->gender ? src->gender[sk] : 0, dur, src->utt[i], x);
		long row = vpa_embset_add(out, src->utt[i], src->spk_id[sk], x, s->d, &err);
		if (row < 0)
			VPA_BUG("simulated set: %s", err.msg);
		vpa_embset_set_dur(out, (size_t)row, dur);
	}
	free(y);
	free(x);
}
