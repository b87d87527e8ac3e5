/*
 * targets/fl_am_audio.c - `fl_acoustic_models` with `source: audio`: the
 * federated acoustic models of Tomashenko et al. (ICASSP 2022) trained in C
 * from a Kaldi data directory of audio and its frame alignments, instead of
 * the simulator's frames (issue 32).
 *
 * Data: wav.scp and utt2spk of `data`, frame labels from `ali` (Kaldi
 * `ali-to-phones --per-frame` text: one phone or state id per feature frame;
 * formats/kaldi_ali.c), features from the audio front end (`features`,
 * `feature_options`).  The label ids found are renumbered 0..K-1 in
 * increasing order: the model's K output classes.
 *
 * Speaker sets (the paper's, disjoint): the speakers, sorted by id and
 * shuffled by the stream "am_audio/speakers", are dealt to the Indicator
 * set, Part-1, Part-2 and Train-G in that order (Train-G: the rest, or
 * `train_speakers` of them).  A Part-1/Part-2 speaker's utterances, shuffled
 * by "am_audio/utts/SPK", give `heldout_utts` held-out utterances (the
 * utility) and the rest as adaptation data; a speaker with two models
 * (vpa_flam_pick_two) splits the rest in two disjoint halves (even and odd
 * places of the shuffled order).  An Indicator speaker gives its first
 * `indicator_utts` utterances by id.  Then vpa_flam_federate trains W_g and
 * personalises every model (targets/fl_am_train.c).
 */
#include "targets/fl_am.h"
#include "audio/audio.h"
#include "base/dist.h"
#include "formats/kaldi.h"
#include "audio/xvector.h"
#include "base/inputs.h"
#include "asr/ctc_align.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- features of every utterance (vpa_dist_jobs: shared over threads and ranks) ---- */

struct feat_job {
	const struct vpa_datadir *d;
	const struct vpa_feat *fe;
	struct vpa_fmat *m;
};

static int feat_job(void *arg, size_t i, struct vpa_err *err)
{
	struct feat_job *j = arg;
	struct vpa_wave w;
	vpa_wave_init(&w);
	int rc = vpa_datadir_load(j->d, i, &w, NULL, err);
	if (!rc)
		rc = vpa_feat_apply(j->fe, &w, j->d->utt[i], &j->m[i], err);
	vpa_wave_release(&w);
	return rc;
}

static void feat_pack(void *arg, size_t i, struct vpa_buf *b)
{
	vpa_fmat_pack(b, &((struct feat_job *)arg)->m[i]);
}

static int feat_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;
	return vpa_fmat_unpack(&p, end, &((struct feat_job *)arg)->m[i]) || p != end;
}

/* ---- the data set ------------------------------------------------------------ */

struct adata {
	size_t n_utt, D;
	struct vpa_fmat *m;     /* (n_utt) features */
	uint32_t **lab;         /* (n_utt) class ids per frame, owned */
	size_t *spk_of;         /* (n_utt) speaker index */
	size_t n_spk;
	char **spk;             /* (n_spk) speaker ids sorted, borrowed from the datadir */
	size_t **utts;          /* (n_spk) utterance indices of each speaker, by utterance id */
	size_t *n_utts;         /* (n_spk) */
	/* the personalisation: per Part speaker (n_part) its adaptation utterances */
	size_t **adapt;         /* (n_part) shuffled adaptation utterances */
	size_t *n_adapt;
	const unsigned char *two;
};

/* u := the utterances idx[0..k) (every `step`-th from `first`) of a. */
static void uset_of(const struct adata *a, const size_t *idx, size_t k, size_t first,
		    size_t step, struct vpa_flam_uset *u)
{
	size_t n = 0, N = 0, D = a->D;
	for (size_t i = first; i < k; i += step, n++)
		N += a->m[idx[i]].rows;
	u->n = n;
	u->off = xmalloc((n + 1) * sizeof(size_t));
	u->x = xmalloc(xmul(N ? N * D : 1, sizeof(float)));
	u->lab = xmalloc(xmul(N ? N : 1, sizeof(uint32_t)));
	u->off[0] = 0;
	size_t at = 0, j = 0;
	for (size_t i = first; i < k; i += step, j++) {
		const struct vpa_fmat *m = &a->m[idx[i]];
		memcpy(u->x + at * D, m->x, m->rows * D * sizeof(float));
		memcpy(u->lab + at, a->lab[idx[i]], m->rows * sizeof(uint32_t));
		at += m->rows;
		u->off[j + 1] = at;
	}
}

static void adapt_data(void *arg, size_t spk, size_t which, struct vpa_rng *r,
		       struct vpa_flam_uset *u)
{
	const struct adata *a = arg;
	(void)r; /* the data are fixed; r goes on to the batch order */
	if (a->two[spk])
		uset_of(a, a->adapt[spk], a->n_adapt[spk], which, 2, u);
	else
		uset_of(a, a->adapt[spk], a->n_adapt[spk], 0, 1, u);
}

/*
 * Per utterance: the speaker vector (when c->spk_vec_dim > 0), then the
 * front end's mean normalisation, then the vector appended to every frame.
 * The vector is a STAND-IN for the paper's i-vectors, not an i-vector (no
 * UBM, no total-variability model): a fixed random projection (stream
 * "am_audio/spk-vec", entries N(0, 1/(2F))) of the utterance's per-dimension
 * feature mean and log standard deviation before normalisation, which carry
 * the speaker and channel that the normalisation removes from the frames.
 */
static void spk_vectors(const struct vpa_flam_audio_cfg *c, struct adata *a)
{
	size_t F = a->D, V = c->spk_vec_dim;
	float *P = NULL;
	if (V) {
		struct vpa_rng r;
		vpa_rng_split(&r, c->seed, "am_audio/spk-vec");
		P = xmalloc(xmul(V * 2 * F, sizeof(float)));
		for (size_t i = 0; i < V * 2 * F; i++)
			P[i] = (float)(vpa_rng_normal(&r) / sqrt(2.0 * (double)F));
	}
	double *st = xmalloc(2 * F * sizeof(double));
	for (size_t u = 0; u < a->n_utt; u++) {
		struct vpa_fmat *m = &a->m[u];
		size_t T = m->rows;
		if (V) {
			for (size_t j = 0; j < 2 * F; j++)
				st[j] = 0;
			for (size_t t = 0; t < T; t++)
				for (size_t j = 0; j < F; j++)
					st[j] += m->x[t * F + j];
			for (size_t j = 0; j < F; j++)
				st[j] = T ? st[j] / (double)T : 0;
			for (size_t t = 0; t < T; t++)
				for (size_t j = 0; j < F; j++) {
					double e = m->x[t * F + j] - st[j];
					st[F + j] += e * e;
				}
			for (size_t j = 0; j < F; j++)
				st[F + j] = 0.5 * log((T ? st[F + j] / (double)T : 0) + 1e-10);
		}
		if (c->fo.cmvn == VPA_CMVN_UTT)
			vpa_cmvn_utt(m->x, T, F, c->fo.norm_vars);
		else if (c->fo.cmvn == VPA_CMVN_SLIDING)
			vpa_cmvn_sliding(m->x, T, F, c->fo.cmn_window, c->fo.min_cmn_window,
					 c->fo.center, c->fo.norm_vars);
		if (!V)
			continue;
		float *v = xmalloc(V * sizeof(float)), *x = xmalloc(xmul(T ? T * (F + V) : 1, sizeof(float)));
		for (size_t k = 0; k < V; k++) {
			double acc = 0;
			for (size_t j = 0; j < 2 * F; j++)
				acc += P[k * 2 * F + j] * st[j];
			v[k] = (float)acc;
		}
		for (size_t t = 0; t < T; t++) {
			memcpy(x + t * (F + V), m->x + t * F, F * sizeof(float));
			memcpy(x + t * (F + V) + F, v, V * sizeof(float));
		}
		free(m->x);
		m->x = x;
		m->cols = F + V;
		free(v);
	}
	free(st);
	free(P);
	a->D = F + V;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void shuffle(size_t *v, size_t n, struct vpa_rng *r)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = vpa_rng_below(r, i), t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

struct idx_str {
	const char *s;
	size_t i;
};

static int cmp_idx_str(const void *x, const void *y)
{
	return strcmp(((const struct idx_str *)x)->s, ((const struct idx_str *)y)->s);
}

/* The speakers, sorted, and each one's utterances in utterance-id order. */
static void group_speakers(const struct vpa_datadir *d, struct adata *a)
{
	size_t nu = d->n_utt;
	char **ids = xmalloc(xmul(nu ? nu : 1, sizeof(char *)));
	for (size_t i = 0; i < nu; i++)
		ids[i] = d->utt_spk[i];
	qsort(ids, nu, sizeof(char *), cmp_str);
	size_t n = 0;
	for (size_t i = 0; i < nu; i++)
		if (n == 0 || strcmp(ids[n - 1], ids[i]))
			ids[n++] = ids[i];
	a->n_spk = n;
	a->spk = ids;
	a->spk_of = xmalloc(xmul(nu ? nu : 1, sizeof(size_t)));
	a->n_utts = xcalloc(n ? n : 1, sizeof(size_t));
	a->utts = xcalloc(n ? n : 1, sizeof(size_t *));
	for (size_t i = 0; i < nu; i++) {
		char *key = d->utt_spk[i];
		char **hit = bsearch(&key, ids, n, sizeof(char *), cmp_str);
		a->spk_of[i] = (size_t)(hit - ids);
		a->n_utts[a->spk_of[i]]++;
	}
	for (size_t s = 0; s < n; s++) {
		a->utts[s] = xmalloc(a->n_utts[s] * sizeof(size_t));
		a->n_utts[s] = 0;
	}
	struct idx_str *u = xmalloc(xmul(nu ? nu : 1, sizeof(*u)));
	for (size_t i = 0; i < nu; i++) {
		u[i].s = d->utt[i];
		u[i].i = i;
	}
	qsort(u, nu, sizeof(*u), cmp_idx_str);
	for (size_t k = 0; k < nu; k++) {
		size_t s = a->spk_of[u[k].i];
		a->utts[s][a->n_utts[s]++] = u[k].i;
	}
	free(u);
}

static void adata_release(struct adata *a)
{
	for (size_t i = 0; i < a->n_utt; i++) {
		if (a->m)
			vpa_fmat_release(&a->m[i]);
		if (a->lab)
			free(a->lab[i]);
	}
	free(a->m);
	free(a->lab);
	free(a->spk_of);
	for (size_t s = 0; s < a->n_spk; s++)
		free(a->utts ? a->utts[s] : NULL);
	free(a->utts);
	free(a->n_utts);
	free(a->spk);
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return (a > b) - (a < b);
}

/*
 * Frame labels by forced alignment (asr/ctc_align.h): the data directory's
 * audio at the model's rate, one label per feature frame of a->m, into al
 * as vpa_kaldi_read_ali would hold them (utterances in d's order).
 */
static int ctc_labels(const struct vpa_flam_audio_cfg *c, const struct vpa_ctc *ctc,
		      struct vpa_datadir *d, const struct adata *a, struct vpa_kaldi_ali *al,
		      struct vpa_err *err)
{
	size_t nu = d->n_utt, *nf = xmalloc((nu ? nu : 1) * sizeof(size_t));
	for (size_t i = 0; i < nu; i++)
		nf[i] = a->m[i].rows;
	uint32_t **lab = NULL;
	/* the audio again, at the model's rate (the front end's put back after) */
	vpa_datadir_set_rate(d, vpa_ctc_rate(ctc, c->ctc), VPA_ALLOW_DOWN | VPA_ALLOW_UP, 0);
	vpa_progress_note("aligning %zu utterances to their transcripts with %s", nu,
			  c->ctc->model);
	int rc = vpa_ctc_align_dd(ctc, c->threads, d, c->text, nf, NULL, &lab, err);
	vpa_datadir_set_rate(d, c->fo.sample_frequency, VPA_ALLOW_DOWN | VPA_ALLOW_UP, 0);
	if (!rc) {
		size_t tot = 0;
		for (size_t i = 0; i < nu; i++)
			tot += nf[i];
		al->name = xstrdup(c->text);
		al->n = nu;
		al->utt = xcalloc(nu ? nu : 1, sizeof(char *));
		al->line = xcalloc(nu ? nu : 1, sizeof(long));
		al->off = xmalloc((nu + 1) * sizeof(size_t));
		al->lab = xmalloc((tot ? tot : 1) * sizeof(uint32_t));
		al->off[0] = 0;
		for (size_t i = 0; i < nu; i++) {
			al->utt[i] = xstrdup(d->utt[i]);
			memcpy(al->lab + al->off[i], lab[i], nf[i] * sizeof(uint32_t));
			al->off[i + 1] = al->off[i] + nf[i];
			free(lab[i]);
		}
		free(lab);
	}
	free(nf);
	return rc;
}

void vpa_flam_audio_cfg_init(struct vpa_flam_audio_cfg *c)
{
	memset(c, 0, sizeof(*c));
	vpa_feat_opts_init(&c->fo, VPA_FEAT_FBANK);
	c->part1_speakers = 24;
	c->part2_speakers = 24;
	c->indicator_speakers = 8;
	c->two_models = 0.8;
	c->heldout_utts = 2;
	c->indicator_utts = 4;
	c->hidden_layers = 4;
	c->hidden_dim = 128;
	c->global_epochs = 8;
	c->global_lr = 2e-3;
	c->batch = 8;
	c->adapt_epochs = 10;
	c->adapt_lr = 0.02;
	c->dp_delta = 1e-5;
	c->seed = 1;
	c->threads = 1;
}

int vpa_flam_from_audio(const struct vpa_flam_audio_cfg *c, struct vpa_flam *t,
			struct vpa_json *info, struct vpa_err *err)
{
	struct vpa_datadir d;
	struct vpa_kaldi_ali al;
	struct adata a;
	struct vpa_flam_fed f;
	struct vpa_feat *fe = NULL;
	struct vpa_ctc *ctc = NULL;
	uint32_t *cls = NULL;
	size_t K = 0, n_sp = c->part1_speakers + c->part2_speakers, *order = NULL;
	unsigned char *two = NULL;
	int rc;
	memset(&a, 0, sizeof(a));
	memset(&f, 0, sizeof(f));
	vpa_datadir_init(&d);
	vpa_kaldi_ali_init(&al);
	struct vpa_loc dloc = {c->data, 0, 0};

	if ((rc = vpa_datadir_open(&d, c->data, -1, err)))
		goto out;
	if (!d.utt_spk) {
		rc = vpa_fail(err, VPA_EINPUT, &dloc,
			      "no utt2spk: the speaker of every utterance decides its set "
			      "(Train-G, Part-1, Part-2, Indicator)");
		goto out;
	}
	vpa_datadir_set_rate(&d, c->fo.sample_frequency, VPA_ALLOW_DOWN | VPA_ALLOW_UP, 0);
	if (c->ctc) { /* labels by forced alignment, after the features */
		if ((rc = vpa_ctc_new(c->ctc, &ctc, err)))
			goto out;
	} else if ((rc = vpa_kaldi_read_ali(c->ali, &al, err))) {
		goto out;
	}
	const char *lab_src = ctc ? c->text : c->ali;
	size_t *ali_of = xmalloc(xmul(d.n_utt ? d.n_utt : 1, sizeof(size_t)));
	for (size_t i = 0; i < d.n_utt && ctc; i++)
		ali_of[i] = i;
	for (size_t i = 0; i < d.n_utt && !rc && !ctc; i++)
		if ((ali_of[i] = vpa_kaldi_ali_find(&al, d.utt[i])) == SIZE_MAX) {
			struct vpa_loc l = {c->ali, 0, 0};
			rc = vpa_fail(err, VPA_EINPUT, &l,
				      "no alignment for utterance '%s' (of %s): every utterance of the "
				      "data directory needs its frame labels", d.utt[i], c->data);
		}
	if (rc) {
		free(ali_of);
		goto out;
	}

	/* the speaker sets (before the features: a data set too small fails at once) */
	group_speakers(&d, &a);
	size_t need = c->indicator_speakers + n_sp + (c->train_speakers ? c->train_speakers : 1);
	if (a.n_spk < need) {
		rc = vpa_fail(err, VPA_EINPUT, &dloc,
			      "%zu speakers; the sets need %zu (indicator_speakers %zu + "
			      "part1_speakers %zu + part2_speakers %zu + train_speakers %zu)",
			      a.n_spk, need, c->indicator_speakers, c->part1_speakers,
			      c->part2_speakers, c->train_speakers ? c->train_speakers : 1);
		free(ali_of);
		goto out;
	}
	order = xmalloc(a.n_spk * sizeof(size_t));
	for (size_t s = 0; s < a.n_spk; s++)
		order[s] = s;
	struct vpa_rng r;
	vpa_rng_split(&r, c->seed, "am_audio/speakers");
	shuffle(order, a.n_spk, &r);
	const size_t *ind = order, *part = order + c->indicator_speakers, *trn = part + n_sp;
	size_t n_trn = c->train_speakers ? c->train_speakers : a.n_spk - c->indicator_speakers - n_sp;

	two = xcalloc(n_sp ? n_sp : 1, 1);
	vpa_flam_pick_two(c->seed, "am_audio", c->part1_speakers, c->part2_speakers, c->two_models,
			  two);
	a.two = two;
	for (size_t p = 0; p < n_sp && !rc; p++) {
		size_t s = part[p], nu = a.n_utts[s];
		size_t want = c->heldout_utts + 1 + two[p];
		if (nu < want)
			rc = vpa_fail(err, VPA_EINPUT, &dloc,
				      "speaker '%s' (%s) has %zu utterances; it needs %zu: heldout_utts "
				      "%zu and %s", a.spk[s], p < c->part1_speakers ? "Part-1" : "Part-2",
				      nu, want, c->heldout_utts,
				      two[p] ? "one for each of its two models" : "one to adapt on");
	}
	if (rc) {
		free(ali_of);
		goto out;
	}

	/* features: the front end without its mean normalisation, which is applied
	 * below after the utterance's statistics are taken for the speaker vector */
	struct vpa_feat_opts fo_raw = c->fo;
	fo_raw.cmvn = VPA_CMVN_NONE;
	fe = vpa_feat_new(&fo_raw, err);
	if (!fe) {
		rc = err->status;
		free(ali_of);
		goto out;
	}
	a.n_utt = d.n_utt;
	a.D = vpa_feat_dim(fe);
	a.m = xcalloc(d.n_utt ? d.n_utt : 1, sizeof(*a.m));
	for (size_t i = 0; i < d.n_utt; i++)
		vpa_fmat_init(&a.m[i]);
	struct feat_job fj = {&d, fe, a.m};
	rc = vpa_dist_jobs(d.n_utt, c->threads, feat_job, feat_pack, feat_unpack, &fj,
			   "features", NULL, err);
	if (!rc && ctc) /* one label per feature frame, held in al as if read */
		rc = ctc_labels(c, ctc, &d, &a, &al, err);
	if (!rc)
		spk_vectors(c, &a);
	/* labels: one per feature frame; ids renumbered 0..K-1 */
	if (!rc) {
		cls = xmalloc(xmul(al.off[al.n] ? al.off[al.n] : 1, sizeof(uint32_t)));
		memcpy(cls, al.lab, al.off[al.n] * sizeof(uint32_t));
		qsort(cls, al.off[al.n], sizeof(uint32_t), cmp_u32);
		for (size_t i = 0; i < al.off[al.n]; i++)
			if (K == 0 || cls[K - 1] != cls[i])
				cls[K++] = cls[i];
		if (K < 2) {
			struct vpa_loc l = {lab_src, 0, 0};
			rc = vpa_fail(err, VPA_EINPUT, &l, "every frame has the label %u: a model needs "
				      "at least 2 classes", K ? cls[0] : 0);
		}
	}
	a.lab = xcalloc(d.n_utt ? d.n_utt : 1, sizeof(uint32_t *));
	for (size_t i = 0; i < d.n_utt && !rc; i++) {
		size_t k = ali_of[i], n = al.off[k + 1] - al.off[k];
		if (n != a.m[i].rows) {
			struct vpa_loc l = {c->ali, al.line[k], 0};
			rc = vpa_fail(err, VPA_EINPUT, &l,
				      "utterance '%s' has %zu frame labels, its features have %zu frames "
				      "(%g ms window, %g ms shift): alignments must be at the "
				      "features' frame rate", d.utt[i], n, a.m[i].rows,
				      c->fo.frame_length, c->fo.frame_shift);
			break;
		}
		a.lab[i] = xmalloc((n ? n : 1) * sizeof(uint32_t));
		for (size_t f2 = 0; f2 < n; f2++) {
			uint32_t *hit = bsearch(&al.lab[al.off[k] + f2], cls, K, sizeof(uint32_t), cmp_u32);
			a.lab[i][f2] = (uint32_t)(hit - cls);
		}
	}
	free(ali_of);
	if (rc)
		goto out;

	a.adapt = xcalloc(n_sp ? n_sp : 1, sizeof(size_t *));
	a.n_adapt = xcalloc(n_sp ? n_sp : 1, sizeof(size_t));
	f.heldout = xcalloc(n_sp ? n_sp : 1, sizeof(*f.heldout));
	f.spk_id = xcalloc(n_sp ? n_sp : 1, sizeof(char *));
	for (size_t p = 0; p < n_sp && !rc; p++) {
		size_t s = part[p], nu = a.n_utts[s];
		f.spk_id[p] = xstrdup(a.spk[s]);
		size_t *u = xmalloc(nu * sizeof(size_t));
		memcpy(u, a.utts[s], nu * sizeof(size_t));
		char nm[300];
		snprintf(nm, sizeof(nm), "am_audio/utts/%s", a.spk[s]);
		struct vpa_rng ur;
		vpa_rng_split(&ur, c->seed, nm);
		shuffle(u, nu, &ur);
		uset_of(&a, u, c->heldout_utts, 0, 1, &f.heldout[p]);
		a.n_adapt[p] = nu - c->heldout_utts;
		a.adapt[p] = xmalloc(a.n_adapt[p] * sizeof(size_t));
		memcpy(a.adapt[p], u + c->heldout_utts, a.n_adapt[p] * sizeof(size_t));
		free(u);
	}
	if (rc)
		goto out;
	/* Train-G: every utterance of its speakers */
	size_t ntu = 0;
	for (size_t k = 0; k < n_trn; k++)
		ntu += a.n_utts[trn[k]];
	size_t *tu = xmalloc((ntu ? ntu : 1) * sizeof(size_t)), at = 0;
	for (size_t k = 0; k < n_trn; k++) {
		memcpy(tu + at, a.utts[trn[k]], a.n_utts[trn[k]] * sizeof(size_t));
		at += a.n_utts[trn[k]];
	}
	uset_of(&a, tu, ntu, 0, 1, &f.train);
	free(tu);
	/* the Indicator set: the first indicator_utts utterances (by id) of its speakers */
	size_t niu = 0;
	for (size_t k = 0; k < c->indicator_speakers; k++) {
		size_t nu = a.n_utts[ind[k]];
		niu += nu < c->indicator_utts ? nu : c->indicator_utts;
	}
	size_t *iu = xmalloc((niu ? niu : 1) * sizeof(size_t));
	f.ind_utt_id = xcalloc(niu + 1, sizeof(char *));
	at = 0;
	for (size_t k = 0; k < c->indicator_speakers; k++)
		for (size_t j = 0; j < a.n_utts[ind[k]] && j < c->indicator_utts; j++) {
			iu[at] = a.utts[ind[k]][j];
			f.ind_utt_id[at] = xstrdup(d.utt[iu[at]]);
			at++;
		}
	/* in utterance-id order: the order in which a dump (dump_models:
	 * indicator/UTT.npy) is read back, so that a re-import sums the same frames
	 * in the same order and gives the same numbers */
	struct idx_str *io = xmalloc((niu ? niu : 1) * sizeof(*io));
	for (size_t k = 0; k < niu; k++) {
		io[k].s = f.ind_utt_id[k];
		io[k].i = iu[k];
	}
	qsort(io, niu, sizeof(*io), cmp_idx_str);
	for (size_t k = 0; k < niu; k++) {
		iu[k] = io[k].i;
		f.ind_utt_id[k] = (char *)io[k].s;
	}
	free(io);
	uset_of(&a, iu, niu, 0, 1, &f.indicator);
	free(iu);

	/* chance: the Train-G majority class, on the held-out frames */
	size_t *freq = xcalloc(K, sizeof(size_t)), best = 0, hit = 0, tot = 0;
	for (size_t i = 0; i < f.train.off[f.train.n]; i++)
		freq[f.train.lab[i]]++;
	for (size_t k = 1; k < K; k++)
		if (freq[k] > freq[best])
			best = k;
	for (size_t p = 0; p < n_sp; p++)
		for (size_t i = 0; i < f.heldout[p].off[f.heldout[p].n]; i++) {
			hit += f.heldout[p].lab[i] == best;
			tot++;
		}
	free(freq);
	double chance = tot ? (double)hit / (double)tot : NAN;

	f.in_dim = a.D;
	f.states = K;
	VPA_FLAM_FED_TRAINING(&f, c);
	f.stream = "am_audio";
	f.two = two;
	f.adapt = adapt_data;
	f.adapt_arg = &a;
	size_t train_frames = f.train.off[f.train.n], train_utts = f.train.n;
	rc = vpa_flam_federate(&f, t, err);
	if (!rc && info) {
		struct vpa_json *sz = vpa_flam_fed_sizes(&f, t, n_trn, info);
		vpa_json_set_num(sz, "train_utterances", (double)train_utts);
		vpa_json_set_num(sz, "train_frames", (double)train_frames);
		vpa_json_set_num(sz, "classes", (double)K);
		struct vpa_json *ut = vpa_json_get(info, "utility");
		if (ut) {
			vpa_json_set_num(ut, "chance_accuracy", chance);
			vpa_json_set_str(ut, "chance_rule",
					 "the Train-G majority class's share of the held-out frames");
		}
		vpa_json_set_str(info, "data", c->data);
		vpa_json_set_str(info, "alignments", c->ali ? c->ali : "CTC forced alignment");
		if (ctc) {
			struct vpa_json *al_info = vpa_json_obj();
			vpa_json_set_str(al_info, "model", c->ctc->model);
			vpa_json_set_str(al_info, "tokens", c->ctc->tokens);
			vpa_json_set_str(al_info, "text", c->text);
			vpa_json_set_str(al_info, "units", "the model's tokens (a blank frame takes the "
				"token emitted before it)");
			vpa_json_set(info, "aligner", al_info);
		}
	}
out:
	if (f.spk_id)
		for (size_t s = 0; s < n_sp; s++)
			free(f.spk_id[s]);
	free(f.spk_id);
	if (f.ind_utt_id)
		for (size_t i = 0; f.ind_utt_id[i]; i++)
			free(f.ind_utt_id[i]);
	free(f.ind_utt_id);
	if (f.heldout)
		for (size_t p = 0; p < n_sp; p++)
			vpa_flam_uset_release(&f.heldout[p]);
	free(f.heldout);
	vpa_flam_uset_release(&f.train);
	vpa_flam_uset_release(&f.indicator);
	if (a.adapt)
		for (size_t p = 0; p < n_sp; p++)
			free(a.adapt[p]);
	free(a.adapt);
	free(a.n_adapt);
	adata_release(&a);
	free(two);
	free(order);
	free(cls);
	vpa_feat_free(fe);
	vpa_kaldi_ali_release(&al);
	vpa_ctc_free(ctc);
	vpa_datadir_release(&d);
	return rc;
}

/* ---- the built-in corpus ----------------------------------------------------- */

int vpa_flam_synth_corpus(int speakers, int utts, const char *brown, uint64_t seed,
			  int threads, char **tmp, char **data, struct vpa_err *err)
{
	*tmp = *data = NULL;
	/* under $TMPDIR (POSIX), else /tmp */
	const char *td = getenv("TMPDIR");
	char *tpl = vpa_xvec_join(td && *td ? td : "/tmp", "vpaudit-am-XXXXXX");
	if (!mkdtemp(tpl)) {
		int rc = vpa_fail(err, VPA_EIO, NULL, "cannot make a temporary folder in %s: %s",
				  td && *td ? td : "/tmp", strerror(errno));
		free(tpl);
		return rc;
	}
	vpa_tmp_register(tpl, 1); /* removed on SIGINT/SIGTERM (base/tmp.c) */
	vpa_inputs_ignore(tpl);   /* made here: not an input (its name is random) */
	*tmp = tpl;
	char *cdir = vpa_xvec_join(tpl, "corpus");
	int rc = vpa_xvec_synth(speakers, utts, brown, seed, cdir, threads, err);
	static const char *const sub[] = {"train", "enrol", "trials"};
	char *dirs[3] = {NULL, NULL, NULL};
	for (int i = 0; i < 3; i++)
		dirs[i] = vpa_xvec_join(cdir, sub[i]);
	char *all = vpa_xvec_join(tpl, "all");
	double rate = -1;
	if (!rc)
		rc = vpa_datadir_merge((const char *const *)dirs, 3, all, &rate, err);
	/* the three alignment files, one after the other (no utterance is in two) */
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (int i = 0; i < 3 && !rc; i++) {
		char *p = vpa_xvec_join(dirs[i], "ali.txt"), *s;
		size_t n;
		rc = vpa_read_file(p, &s, &n, err);
		if (!rc) {
			vpa_buf_add(&b, s, n);
			if (n && s[n - 1] != '\n')
				vpa_buf_puts(&b, "\n");
			free(s);
		}
		free(p);
	}
	if (!rc) {
		char *p = vpa_xvec_join(all, "ali.txt");
		struct vpa_atomic at;
		FILE *f = vpa_atomic_open(p, &at, err);
		if (!f) {
			rc = err->status;
		} else if (b.len && fwrite(b.data, 1, b.len, f) != b.len) {
			vpa_atomic_abort(&at);
			rc = vpa_fail(err, VPA_EIO, NULL, "%s: write error", p);
		} else {
			rc = vpa_atomic_commit(&at, err);
		}
		free(p);
	}
	vpa_buf_release(&b);
	for (int i = 0; i < 3; i++)
		free(dirs[i]);
	free(cdir);
	if (rc)
		free(all);
	else
		*data = all;
	return rc;
}

void vpa_flam_synth_remove(char *tmp)
{
	if (!tmp)
		return;
	vpa_xvec_rm_tree(tmp);
	vpa_tmp_unregister(tmp);
	free(tmp);
}
