/*
 * audio/xvector_data.c - Kaldi data directories for the extractor trained in
 * C: features of every utterance (threads), the original/anonymised match,
 * speaker labels, embedding into a struct vpa_embset.  See xvector.h.
 */
#include "audio/xvector.h"
#include "audio/anon.h"
#include "audio/anon_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/dist.h"
#include "formats/kaldi.h"
#include "base/la.h"

void vpa_xvec_set_init(struct vpa_xvec_set *s)
{
	memset(s, 0, sizeof(*s));
}

void vpa_xvec_set_release(struct vpa_xvec_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->utt[i]);
		free(s->spk[i]);
		if (s->feats)
			vpa_fmat_release(&s->feats[i]);
	}
	free(s->utt);
	free(s->spk);
	free(s->gender);
	free(s->feats);
	free(s->dir);
	vpa_xvec_set_init(s);
}

/* Utterance i's features: a job of vpa_dist_jobs (under MPI the ranks share
 * the utterances out and exchange the feature matrices: every rank trains the
 * extractor on all of them). */
struct load_job {
	const struct vpa_datadir *d;
	const struct vpa_feat *f;
	struct vpa_xvec_set *s;
};

static int load_one(void *arg, size_t i, struct vpa_err *err)
{
	struct load_job *j = arg;
	struct vpa_wave w;
	vpa_wave_init(&w);
	int rc = vpa_datadir_load(j->d, i, &w, NULL, err);
	if (rc == 0) {
		struct vpa_err e;
		vpa_err_init(&e);
		rc = vpa_feat_apply(j->f, &w, j->s->utt[i], &j->s->feats[i], &e);
		if (rc)
			vpa_fail(err, rc, NULL, "%s: utterance %s", j->s->dir, e.msg);
	}
	vpa_wave_release(&w);
	return rc;
}

static void load_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct load_job *j = arg;
	vpa_fmat_pack(b, &j->s->feats[i]);
}

static int load_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct load_job *j = arg;
	const unsigned char *end = p + len;
	return vpa_fmat_unpack(&p, end, &j->s->feats[i]) || p != end;
}

int vpa_xvec_set_load(const char *dir, const struct vpa_feat *f, int threads,
		      struct vpa_xvec_set *out, struct vpa_err *err)
{
	vpa_xvec_set_init(out);
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	int rc = vpa_datadir_open(&d, dir, -1, err);
	if (rc) {
		vpa_datadir_release(&d);
		return rc;
	}
	/* a scenario takes audio as it comes: any rate, resampled to the front-end's */
	vpa_datadir_set_rate(&d, vpa_feat_get_opts(f)->sample_frequency, VPA_ALLOW_DOWN | VPA_ALLOW_UP, 0);
	if (!d.utt_spk) {
		vpa_datadir_release(&d);
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: utt2spk is required (the speaker of every utterance)", dir);
	}
	struct vpa_kaldi_list g;
	vpa_kaldi_list_init(&g);
	size_t dl = strlen(dir);
	char *gpath = xmalloc(dl + sizeof("/spk2gender"));
	memcpy(gpath, dir, dl);
	memcpy(gpath + dl, "/spk2gender", sizeof("/spk2gender"));
	struct stat st;
	if (stat(gpath, &st) == 0 && (rc = vpa_kaldi_read_list(gpath, 2, &g, err))) {
		free(gpath);
		vpa_datadir_release(&d);
		return rc;
	}
	free(gpath);
	const size_t n = d.n_utt;
	out->dir = xstrdup(dir);
	out->n = n;
	out->utt = xcalloc(n ? n : 1, sizeof(char *));
	out->spk = xcalloc(n ? n : 1, sizeof(char *));
	out->gender = xcalloc(n ? n : 1, 1);
	out->feats = xcalloc(n ? n : 1, sizeof(struct vpa_fmat));
	struct vpa_strmap gm; /* speaker -> its spk2gender row (one lookup per utterance) */
	vpa_strmap_init(&gm);
	for (size_t k = 0; k < g.n; k++)
		vpa_strmap_put(&gm, g.f[2 * k], (uint32_t)k, NULL);
	for (size_t i = 0; i < n; i++) {
		uint32_t k;
		out->utt[i] = xstrdup(d.utt[i]);
		out->spk[i] = xstrdup(d.utt_spk[i]);
		vpa_fmat_init(&out->feats[i]);
		if (vpa_strmap_get(&gm, out->spk[i], &k))
			out->gender[i] = g.f[2 * k + 1][0] == 'f' ? 'f' : 'm';
	}
	vpa_strmap_release(&gm);
	vpa_kaldi_list_release(&g);
	struct load_job j = {&d, f, out};
	rc = vpa_dist_jobs(n, threads, load_one, load_pack, load_unpack, &j, "computing features",
			   vpa_la_run_workers, err);
	vpa_datadir_release(&d);
	if (rc)
		vpa_xvec_set_release(out);
	return rc;
}

int vpa_xvec_set_match(const struct vpa_xvec_set *orig, const struct vpa_xvec_set *anon,
		       struct vpa_err *err)
{
	struct vpa_strmap m;
	vpa_strmap_init(&m);
	int rc = 0;
	for (size_t i = 0; i < anon->n; i++)
		vpa_strmap_put(&m, anon->utt[i], (uint32_t)i, NULL);
	for (size_t i = 0; i < orig->n && rc == 0; i++) {
		uint32_t k;
		if (!vpa_strmap_get(&m, orig->utt[i], &k))
			rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: utterance '%s' of %s is missing",
				      anon->dir, orig->utt[i], orig->dir);
		else if (strcmp(anon->spk[k], orig->spk[i]))
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s: utterance '%s' has speaker '%s' there but '%s' in %s",
				      anon->dir, orig->utt[i], anon->spk[k], orig->spk[i], orig->dir);
	}
	if (rc == 0 && anon->n != orig->n) {
		struct vpa_strmap o;
		vpa_strmap_init(&o);
		for (size_t i = 0; i < orig->n; i++)
			vpa_strmap_put(&o, orig->utt[i], (uint32_t)i, NULL);
		for (size_t i = 0; i < anon->n && rc == 0; i++) {
			uint32_t k;
			if (!vpa_strmap_get(&o, anon->utt[i], &k))
				rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: utterance '%s' is not in %s",
					      anon->dir, anon->utt[i], orig->dir);
		}
		vpa_strmap_release(&o);
	}
	vpa_strmap_release(&m);
	return rc;
}

void vpa_xvec_set_labels(const struct vpa_xvec_set *s, uint32_t *labels, size_t *n_class)
{
	struct vpa_strmap m;
	vpa_strmap_init(&m);
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++) {
		uint32_t v;
		if (!vpa_strmap_get(&m, s->spk[i], &v)) {
			v = (uint32_t)k++;
			vpa_strmap_put(&m, s->spk[i], (uint32_t)v, NULL);
		}
		labels[i] = v;
	}
	vpa_strmap_release(&m);
	*n_class = k;
}

int vpa_xvec_set_embed(const struct vpa_xvec *x, const struct vpa_xvec_set *s, int threads,
		       struct vpa_embset *out, struct vpa_err *err)
{
	const size_t E = x->emb_dim;
	float *e = xmalloc(xmul(xmul(s->n ? s->n : 1, E), sizeof(float)));
	int rc = vpa_xvec_embed(x, s->feats, (const char *const *)s->utt, s->n, threads, e, err);
	double *row = xmalloc(xmul(E, sizeof(double)));
	for (size_t i = 0; i < s->n && rc == 0; i++) {
		for (size_t j = 0; j < E; j++)
			row[j] = e[i * E + j];
		if (vpa_embset_add(out, s->utt[i], s->spk[i], row, E, err) < 0) {
			rc = err->status;
			break;
		}
		if (s->gender[i])
			vpa_embset_set_gender(out, out->spk[out->n - 1], s->gender[i]);
	}
	if (rc && err->status && !strchr(err->msg, ':')) {
		char old[sizeof(err->msg)];
		memcpy(old, err->msg, sizeof(old));
		vpa_err_init(err);
		rc = vpa_fail(err, rc, NULL, "%s: %s", s->dir, old);
	}
	free(row);
	free(e);
	return rc;
}

int vpa_xvec_synth(int speakers, int utts, const char *brown, uint64_t seed, const char *out,
		   int threads, struct vpa_err *err)
{
	struct vpa_synth_opts so;
	vpa_synth_opts_init(&so);
	so.speakers = speakers;
	so.utts = utts;
	if (brown)
		so.brown = brown;
	so.seed = seed;
	return vpa_synth_corpus(&so, out, threads, err);
}

int vpa_xvec_anonymise(const char *in, const char *out, int kind, int utt_level, double lo,
		       double hi, uint64_t seed, int threads, struct vpa_err *err)
{
	struct vpa_anon_opts ao;
	vpa_anon_opts_init(&ao, kind);
	ao.level = utt_level ? VPA_SIGANON_UTTERANCE : VPA_SIGANON_SPEAKER;
	ao.lo = lo;
	ao.hi = hi;
	ao.seed = seed;
	return vpa_anonymise_datadir(in, out, &ao, threads, err);
}

char *vpa_xvec_join(const char *a, const char *b)
{
	return vpa_anon_join(a, b);
}

void vpa_xvec_rm_tree(const char *path)
{
	vpa_rm_tree(path);
}

int vpa_xvec_wer(const char *ref, const char *hyp, const char *norm, int strict,
		 struct vpa_xvec_wer *out, struct vpa_err *err)
{
	struct vpa_wer w;
	struct vpa_wer_opts o;
	vpa_wer_opts_init(&o);
	if (vpa_wer_norm_parse(norm, &o))
		VPA_BUG("WER normalisation '%s' passed the scenario's choices", norm);
	o.strict = strict;
	memset(&w, 0, sizeof(w));
	int rc = vpa_wer_files_opts(ref, hyp, &o, &w, err);
	if (rc)
		return rc;
	out->wer = w.wer;
	out->ref_words = w.ref_words;
	out->ins = w.ins;
	out->del = w.del;
	out->sub = w.sub;
	out->n_utt = w.n_utt;
	out->n_absent = w.n_absent;
	return 0;
}

/* rho_F0 of utterance i: a job of vpa_dist_jobs (one number travels). */
struct rho_job {
	const struct vpa_datadir *a, *b;
	const size_t *ib; /* (a->n_utt) index in b */
	double *rho;      /* (n) NaN when undefined */
};

static void rho_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct rho_job *j = arg;
	vpa_pack_f64s(b, &j->rho[i], 1);
}

static int rho_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct rho_job *j = arg;
	return vpa_unpack_f64s(&p, p + len, &j->rho[i], 1) || len != sizeof(double);
}

static int rho_one(void *arg, size_t i, struct vpa_err *err)
{
	struct rho_job *j = arg;
	struct vpa_wave wa, wb;
	struct vpa_pitch pa, pb;
	struct vpa_pitch_opts po;
	vpa_wave_init(&wa);
	vpa_wave_init(&wb);
	vpa_pitch_init(&pa);
	vpa_pitch_init(&pb);
	vpa_pitch_opts_init(&po);
	j->rho[i] = NAN;
	int rc = vpa_datadir_load(j->a, i, &wa, NULL, err);
	if (!rc)
		rc = vpa_datadir_load(j->b, j->ib[i], &wb, NULL, err);
	if (!rc)
		rc = vpa_pitch_track(wa.x, wa.n, wa.rate, &po, &pa, err);
	if (!rc)
		rc = vpa_pitch_track(wb.x, wb.n, wb.rate, &po, &pb, err);
	if (!rc) {
		struct vpa_err e;
		vpa_err_init(&e);
		double r;
		if (vpa_rho_f0(&pa, &pb, &r, NULL, &e) == 0)
			j->rho[i] = r;
	}
	vpa_wave_release(&wa);
	vpa_wave_release(&wb);
	vpa_pitch_release(&pa);
	vpa_pitch_release(&pb);
	return rc;
}

int vpa_xvec_rho_f0(const char *orig, const char *anon, int threads, double *mean,
		    size_t *n_used, struct vpa_err *err)
{
	double sd;
	return vpa_xvec_rho_f0_std(orig, anon, threads, mean, &sd, n_used, err);
}

int vpa_xvec_rho_f0_std(const char *orig, const char *anon, int threads, double *mean,
			double *std, size_t *n_used, struct vpa_err *err)
{
	struct vpa_datadir a, b;
	vpa_datadir_init(&a);
	vpa_datadir_init(&b);
	int rc = vpa_datadir_open(&a, orig, -1, err);
	if (!rc)
		rc = vpa_datadir_open(&b, anon, -1, err);
	size_t n = rc ? 0 : a.n_utt;
	size_t *ib = xmalloc(xmul(n ? n : 1, sizeof(size_t)));
	if (!rc) {
		struct vpa_strmap m;
		vpa_strmap_init(&m);
		for (size_t i = 0; i < b.n_utt; i++)
			vpa_strmap_put(&m, b.utt[i], (uint32_t)i, NULL);
		for (size_t i = 0; i < n && !rc; i++) {
			uint32_t k;
			if (!vpa_strmap_get(&m, a.utt[i], &k))
				rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: utterance '%s' of %s is missing",
					      anon, a.utt[i], orig);
			else
				ib[i] = k;
		}
		vpa_strmap_release(&m);
	}
	if (!rc) {
		struct rho_job j = {&a, &b, ib, NULL};
		j.rho = xmalloc(xmul(n ? n : 1, sizeof(double)));
		rc = vpa_dist_jobs(n, threads, rho_one, rho_pack, rho_unpack, &j, "rho_F0",
				   vpa_la_run_workers, err);
		double s = 0;
		size_t k = 0;
		for (size_t i = 0; i < n && !rc; i++)
			if (isfinite(j.rho[i])) {
				s += j.rho[i];
				k++;
			}
		*mean = k ? s / (double)k : NAN;
		/* population std (numpy's np.std), as the VPC 2022 prints beside the mean */
		double v = 0;
		for (size_t i = 0; i < n && !rc && k; i++)
			if (isfinite(j.rho[i]))
				v += (j.rho[i] - *mean) * (j.rho[i] - *mean);
		*std = k ? sqrt(v / (double)k) : NAN;
		*n_used = k;
		free(j.rho);
	}
	free(ib);
	vpa_datadir_release(&a);
	vpa_datadir_release(&b);
	return rc;
}
