/*
 * embed/embed.c - audio -> front-end -> ONNX extractor -> one vector per
 * utterance (contract in embed.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/io.h"
#include "formats/kaldi.h"
#include "base/dist.h"
#include "base/la.h"
#include "embed/embed.h"
#include "onnx/onnx.h"

struct vpa_embedder {
	struct vpa_onnx_model *m;
	struct vpa_feat *fe;
	char *path;        /* model file, for messages */
	const char *input; /* borrowed from the model */
	char *output;      /* owned */
	size_t dim;        /* front-end dimension (1 for a waveform) */
	int layout, cmn;
	size_t chunk;
	int waveform;      /* samples fed, no front-end */
	size_t wave_rank;  /* 2: (1, T); 3: (1, 1, T) when wave_t_last, else (1, T, 1) */
	int wave_t_last;
};

void vpa_embed_opts_init(struct vpa_embed_opts *o, int kind)
{
	memset(o, 0, sizeof(*o));
	vpa_feat_opts_init(&o->feat, kind);
	o->cmn = 1;
	o->layout = VPA_EMBED_AUTO;
	o->threads = 1;
	o->channel = -1;
}

int vpa_embed_opts_set(struct vpa_embed_opts *o, const char *name, const char *value,
		       struct vpa_err *err)
{
	if (!strcmp(name, "cmn")) {
		if (strcmp(value, "true") && strcmp(value, "false"))
			return vpa_fail(err, VPA_EINPUT, NULL, "--cmn must be true or false, got '%s'",
					value);
		o->cmn = !strcmp(value, "true");
		o->cmn_set = 1;
		return 0;
	}
	if (!strcmp(name, "layout")) {
		if (strcmp(value, "auto") && strcmp(value, "btf") && strcmp(value, "bft"))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"--layout must be auto, btf or bft, got '%s'", value);
		o->layout = !strcmp(value, "bft")   ? VPA_EMBED_BFT
			    : !strcmp(value, "btf") ? VPA_EMBED_BTF
						    : VPA_EMBED_AUTO;
		return 0;
	}
	if (!strcmp(name, "input") || !strcmp(name, "input-name")) {
		if (!*value)
			return vpa_fail(err, VPA_EINPUT, NULL, "--%s wants a value, got ''", name);
		/* --input selects what is fed; any other word names the graph input of
		 * features, as --input did before waveforms were fed */
		if (!strcmp(name, "input") && !strcmp(value, "waveform"))
			o->waveform = 1;
		else if (!strcmp(name, "input") && !strcmp(value, "features"))
			o->waveform = 0;
		else
			o->input = value;
		return 0;
	}
	if (!strcmp(name, "chunk")) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(value, &end, 10);
		if (!*value || *end || errno || value[0] == '-' || v > 100000000ULL)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"--chunk must be a frame count in [0, 100000000] (0: the whole "
					"utterance), got '%s'",
					value);
		o->chunk = (size_t)v;
		return 0;
	}
	return vpa_feat_opts_set(&o->feat, name, value, err);
}

void vpa_embedder_free(struct vpa_embedder *e)
{
	if (!e)
		return;
	vpa_onnx_free(e->m);
	vpa_feat_free(e->fe);
	free(e->path);
	free(e->output);
	free(e);
}

const struct vpa_feat *vpa_embedder_feat(const struct vpa_embedder *e)
{
	return e->fe;
}

int vpa_embedder_new(const char *model_path, const struct vpa_embed_opts *o,
		     struct vpa_embedder **out, struct vpa_err *err)
{
	*out = NULL;
	struct vpa_embedder *e = xcalloc(1, sizeof(*e));
	e->path = xstrdup(model_path);
	e->layout = o->layout;
	e->cmn = o->cmn;
	e->chunk = o->chunk;
	struct vpa_loc loc = {model_path, 0, 0};
	int rc;
	if (!(e->fe = vpa_feat_new(&o->feat, err))) {
		rc = err->status;
		goto fail;
	}
	e->dim = vpa_feat_dim(e->fe);
	if ((rc = vpa_onnx_load(model_path, NULL, &e->m, err)))
		goto fail;
	const struct vpa_onnx_value_info *in = NULL;
	size_t ni = vpa_onnx_n_inputs(e->m);
	if (o->input) {
		for (size_t i = 0; i < ni; i++)
			if (!strcmp(vpa_onnx_input(e->m, i)->name, o->input))
				in = vpa_onnx_input(e->m, i);
		if (!in) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "no graph input named '%s'", o->input);
			goto fail;
		}
	} else if (ni != 1) {
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "the model has %zu graph inputs: name the features' one (--input)", ni);
		goto fail;
	} else {
		in = vpa_onnx_input(e->m, 0);
	}
	e->input = in->name;
	e->waveform = o->waveform;
	if (e->waveform) {
		if (o->cmn_set && o->cmn) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "--cmn applies to features: a waveform input is fed as it is "
				      "(--input=waveform)");
			goto fail;
		}
		e->cmn = 0;
		e->dim = 1;
	}
	if (in->dtype && in->dtype != VPA_ONNX_FLOAT) {
		rc = vpa_fail(err, VPA_EINPUT, &loc, "input '%s' is %s, %s are float32", in->name,
			      vpa_onnx_dtype_name(in->dtype), e->waveform ? "samples" : "features");
		goto fail;
	}
	char shp[256];
	shp[0] = '\0';
	if (in->has_shape) {
		size_t at = 0;
		for (size_t k = 0; k < in->ndim && at < sizeof(shp); k++) {
			if (in->dims[k] >= 0)
				at += (size_t)snprintf(shp + at, sizeof(shp) - at, "%s%lld", k ? ", " : "(",
						       (long long)in->dims[k]);
			else
				at += (size_t)snprintf(shp + at, sizeof(shp) - at, "%s%s", k ? ", " : "(",
						       in->dim_names[k] ? in->dim_names[k] : "?");
		}
		if (at < sizeof(shp))
			snprintf(shp + at, sizeof(shp) - at, in->ndim ? ")" : "()");
	}
	int64_t fixed_t = -1; /* the declared time axis when the graph fixes it */
	if (e->waveform) {
		e->wave_rank = 2;
		if (in->has_shape) {
			int ok = in->ndim == 2;
			if (in->ndim == 3 && in->dims[1] == 1 && in->dims[2] != 1) {
				ok = 1;
				e->wave_rank = 3;
				e->wave_t_last = 1;
			} else if (in->ndim == 3 && in->dims[2] == 1 && in->dims[1] != 1) {
				ok = 1;
				e->wave_rank = 3;
			}
			if (!ok) {
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "input '%s' %s is not a waveform input: expected (batch, "
					      "time), (batch, 1, time) or (batch, time, 1)",
					      in->name, shp);
				goto fail;
			}
			fixed_t = in->dims[e->wave_rank == 2 || e->wave_t_last ? in->ndim - 1 : 1];
		}
	} else if (in->has_shape) {
		if (in->ndim != 3) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "input '%s' %s has rank %zu: expected (batch, time, features) "
				      "(--layout btf) or (batch, features, time) (--layout bft)%s",
				      in->name, shp, in->ndim,
				      in->ndim == 2 ? "; a waveform input (batch, time) takes "
						      "--input=waveform"
						    : "");
			goto fail;
		}
		if (e->layout == VPA_EMBED_AUTO) {
			/* the axis fixed at the front-end's dimension is the features' one;
			 * a shape that does not tell (both symbolic, or both that size) is btf */
			int f2 = in->dims[2] == (int64_t)e->dim, f1 = in->dims[1] == (int64_t)e->dim;
			e->layout = f1 && !f2 ? VPA_EMBED_BFT : VPA_EMBED_BTF;
		}
		int64_t want = in->dims[e->layout == VPA_EMBED_BTF ? 2 : 1];
		if (want > 0 && (size_t)want != e->dim) {
			const struct vpa_feat_opts *fo = vpa_feat_get_opts(e->fe);
			int mf = fo->kind == VPA_FEAT_MFCC;
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "input '%s' %s wants %lld features per frame (--layout %s), "
				      "the front-end gives %zu (%s --%s=%d%s)",
				      in->name, shp, (long long)want,
				      e->layout == VPA_EMBED_BTF ? "btf" : "bft", e->dim,
				      mf ? "mfcc" : "fbank", mf ? "num-ceps" : "num-mel-bins",
				      mf ? fo->num_ceps : fo->num_mel_bins,
				      fo->use_energy ? " and --use-energy" : "");
			goto fail;
		}
		fixed_t = in->dims[e->layout == VPA_EMBED_BTF ? 1 : 2];
	}
	if (e->layout == VPA_EMBED_AUTO)
		e->layout = VPA_EMBED_BTF;
	if (fixed_t > 0 && (size_t)fixed_t != e->chunk) {
		/* a model exported without a dynamic time axis runs only on that length:
		 * cut the utterance into chunks of it (embeddings averaged) */
		const char *unit = e->waveform ? "samples" : "frames";
		if (!e->chunk)
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "input '%s' %s has a fixed time axis of %lld %s: use "
				      "--chunk=%lld (scenario key chunk: %lld; chunk embeddings averaged)",
				      in->name, shp, (long long)fixed_t, unit, (long long)fixed_t,
				      (long long)fixed_t);
		else
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "input '%s' %s has a fixed time axis of %lld %s: --chunk=%zu does "
				      "not fit it, use --chunk=%lld",
				      in->name, shp, (long long)fixed_t, unit, e->chunk,
				      (long long)fixed_t);
		goto fail;
	}
	if (o->output) {
		if (!vpa_onnx_has_value(e->m, o->output)) {
			struct vpa_buf b;
			vpa_buf_init(&b);
			for (size_t i = 0; i < vpa_onnx_n_outputs(e->m); i++)
				vpa_buf_printf(&b, "%s%s", i ? ", " : "", vpa_onnx_output(e->m, i)->name);
			char near[600];
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "no value named '%s' in the graph (graph outputs: %s)%s", o->output,
				      b.data ? b.data : "none",
				      vpa_onnx_nearest_values(e->m, o->output, near, sizeof(near)));
			vpa_buf_release(&b);
			goto fail;
		}
		e->output = xstrdup(o->output);
	} else {
		if (!vpa_onnx_n_outputs(e->m)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "the graph has no output");
			goto fail;
		}
		e->output = xstrdup(vpa_onnx_output(e->m, 0)->name);
	}
	*out = e;
	return 0;
fail:
	vpa_embedder_free(e);
	return rc;
}

/*
 * One forward pass on frames x (T, F) (copied into buf, mean-subtracted, laid
 * out); the output's values are added to *acc (allocated on the first pass,
 * when *dim is 0).
 */
static int forward(const struct vpa_embedder *e, const char *id, const float *x, size_t T,
		   size_t F, float *buf, double **acc, size_t *dim, struct vpa_err *err)
{
	int btf = e->layout == VPA_EMBED_BTF;
	if (btf) {
		memcpy(buf, x, T * F * sizeof(float));
	} else {
		for (size_t t = 0; t < T; t++)
			for (size_t f = 0; f < F; f++)
				buf[f * T + t] = x[t * F + f];
	}
	if (e->cmn) {
		/* mean over time in double, subtracted in float */
		for (size_t f = 0; f < F; f++) {
			double s = 0;
			for (size_t t = 0; t < T; t++)
				s += btf ? buf[t * F + f] : buf[f * T + t];
			float mu = (float)(s / (double)T);
			for (size_t t = 0; t < T; t++)
				*(btf ? &buf[t * F + f] : &buf[f * T + t]) -= mu;
		}
	}
	int64_t dims[3] = {1, btf ? (int64_t)T : (int64_t)F, btf ? (int64_t)F : (int64_t)T};
	size_t rank = 3;
	if (e->waveform) { /* (1, T), (1, 1, T) or (1, T, 1): the same samples */
		rank = e->wave_rank;
		dims[1] = rank == 2 || !e->wave_t_last ? (int64_t)T : 1;
		dims[2] = rank == 3 && e->wave_t_last ? (int64_t)T : 1;
	}
	struct vpa_onnx_tensor in = vpa_onnx_tensor_f32(rank, dims, buf), y;
	const char *want[] = {e->output};
	const char *in_name = e->input;
	int rc = vpa_onnx_run(e->m, 1, &in_name, &in, 1, want, &y, err);
	if (rc)
		return rc;
	size_t n = vpa_onnx_numel(&y);
	if (y.dtype != VPA_ONNX_FLOAT)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: output '%s' is %s, expected float32", e->path,
			      e->output, vpa_onnx_dtype_name(y.dtype));
	else if (n == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: output '%s' is empty", e->path, e->output);
	else if (*dim && n != *dim)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: output '%s' has %zu values for one chunk of '%s', %zu for another",
			      e->path, e->output, n, id, *dim);
	if (!rc) {
		if (!*dim) {
			*acc = xcalloc(n, sizeof(double));
			*dim = n;
		}
		const float *v = y.data;
		for (size_t j = 0; j < n; j++)
			(*acc)[j] += v[j];
	}
	vpa_onnx_tensor_release(&y);
	return rc;
}

int vpa_embedder_feats(const struct vpa_embedder *e, const char *id, const float *x, size_t T,
		       size_t F, float **emb, size_t *dim, struct vpa_err *err)
{
	*emb = NULL;
	*dim = 0;
	if (F != e->dim)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"'%s': %zu features per frame, the extractor's front-end gives %zu", id,
				F, e->dim);
	if (T == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "'%s': no frame", id);
	size_t C = e->chunk ? e->chunk : T;
	size_t full = e->chunk ? T / C : 1, rest = e->chunk ? T % C : 0;
	size_t n_chunks = full + (rest ? 1 : 0), d = 0;
	float *buf = xmalloc(xmul(xmul(C, F), sizeof(float)));
	float *chunk = e->chunk ? xmalloc(xmul(xmul(C, F), sizeof(float))) : NULL;
	double *acc = NULL;
	int rc = 0;
	for (size_t k = 0; k < n_chunks && !rc; k++) {
		const float *src = chunk;
		if (!e->chunk) {
			src = x;
		} else if (k < full) {
			src = x + k * C * F;
		} else if (full == 0) { /* shorter than a chunk: repeated to C frames */
			for (size_t t = 0; t < C; t++)
				memcpy(chunk + t * F, x + (t % T) * F, F * sizeof(float));
		} else { /* the last partial chunk completed with the first chunk's first frames */
			memcpy(chunk, x + full * C * F, rest * F * sizeof(float));
			memcpy(chunk + rest * F, x, (C - rest) * F * sizeof(float));
		}
		rc = forward(e, id, src, C, F, buf, &acc, &d, err);
	}
	free(buf);
	free(chunk);
	if (rc) {
		free(acc);
		return rc;
	}
	float *v = xmalloc(xmul(d, sizeof(float)));
	for (size_t j = 0; j < d; j++) {
		double a = acc[j] / (double)n_chunks;
		if (!isfinite(a) || fabs(a) > 3.4e38) {
			free(acc);
			free(v);
			return vpa_fail(err, VPA_EINPUT, NULL,
					"'%s': the embedding has a value that is not finite (%s)", id,
					e->path);
		}
		v[j] = (float)a;
	}
	free(acc);
	*emb = v;
	*dim = d;
	return 0;
}

/*
 * What the model is fed for one utterance: the front-end's frames, or with a
 * waveform input the samples scaled from the int16 scale to [-1, 1) (T, 1)
 * (what torchaudio.load and soundfile give the exporting code).
 */
static int model_input(const struct vpa_embedder *e, const struct vpa_wave *w, const char *id,
		       struct vpa_fmat *m, struct vpa_err *err)
{
	if (!e->waveform)
		return vpa_feat_apply(e->fe, w, id, m, err);
	m->x = xmalloc(xmul(w->n ? w->n : 1, sizeof(float)));
	for (size_t t = 0; t < w->n; t++)
		m->x[t] = w->x[t] / 32768.0f; /* a power of two: exact */
	m->rows = w->n;
	m->cols = 1;
	return 0;
}

int vpa_embedder_utt(const struct vpa_embedder *e, const struct vpa_datadir *d, size_t i,
		     float **emb, size_t *dim, const char **line, struct vpa_err *err)
{
	struct vpa_wave w;
	struct vpa_fmat m;
	const char *ln = NULL;
	*emb = NULL;
	*dim = 0;
	vpa_wave_init(&w);
	vpa_fmat_init(&m);
	int rc = vpa_datadir_load(d, i, &w, &ln, err);
	if (line)
		*line = rc ? ln : NULL;
	if (!rc)
		rc = model_input(e, &w, d->utt[i], &m, err);
	vpa_wave_release(&w);
	if (!rc && m.rows)
		rc = vpa_embedder_feats(e, d->utt[i], m.x, m.rows, m.cols, emb, dim, err);
	vpa_fmat_release(&m);
	return rc;
}

/* ---- embedding sets ------------------------------------------------------------ */

/* Utterance i's embedding and duration: a job of vpa_dist_jobs (under MPI the
 * ranks share the utterances out; the duration and the embedding travel). */
struct set_job {
	const struct vpa_embedder *e;
	const struct vpa_datadir *d;
	float **emb;
	size_t *dim;
	double *dur;
};

static int set_job(void *arg, size_t i, struct vpa_err *err)
{
	struct set_job *j = arg;
	struct vpa_wave w;
	struct vpa_fmat m;
	vpa_wave_init(&w);
	vpa_fmat_init(&m);
	int rc = vpa_datadir_load(j->d, i, &w, NULL, err);
	if (!rc) {
		j->dur[i] = w.rate > 0 ? (double)w.n / w.rate : 0;
		rc = model_input(j->e, &w, j->d->utt[i], &m, err);
	}
	vpa_wave_release(&w);
	if (!rc && m.rows == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "utterance '%s' gives no frame (shorter than one frame%s)", j->d->utt[i],
			      vpa_feat_get_opts(j->e->fe)->vad ? ", or no voiced frame" : "");
	if (!rc)
		rc = vpa_embedder_feats(j->e, j->d->utt[i], m.x, m.rows, m.cols, &j->emb[i],
					&j->dim[i], err);
	vpa_fmat_release(&m);
	return rc;
}

static void set_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct set_job *j = arg;
	vpa_pack_f64s(b, &j->dur[i], 1);
	vpa_pack_u64(b, j->dim[i]);
	vpa_pack_f32s(b, j->emb[i], j->dim[i]);
}

static int set_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct set_job *j = arg;
	const unsigned char *end = p + len;
	uint64_t d;
	if (vpa_unpack_f64s(&p, end, &j->dur[i], 1) || vpa_unpack_u64(&p, end, &d) ||
	    d != (uint64_t)(end - p) / sizeof(float) || (uint64_t)(end - p) % sizeof(float))
		return -1;
	free(j->emb[i]);
	j->dim[i] = (size_t)d;
	j->emb[i] = xmalloc(xmul(d ? d : 1, sizeof(float)));
	return vpa_unpack_f32s(&p, end, j->emb[i], j->dim[i]);
}

static int file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int vpa_embset_from_audio_with(const char *data, const struct vpa_embedder *e,
			       const struct vpa_embed_opts *o, struct vpa_embset *out,
			       struct vpa_err *err)
{
	struct vpa_datadir d;
	struct vpa_kaldi_list g;
	struct vpa_embset es;
	vpa_datadir_init(&d);
	vpa_kaldi_list_init(&g);
	vpa_embset_init(&es);
	int rc = vpa_datadir_open(&d, data, o->channel, err);
	if (rc)
		goto out;
	/* a scenario takes audio as it comes: any rate, resampled to the front-end's */
	vpa_datadir_set_rate(&d, o->feat.sample_frequency, VPA_ALLOW_DOWN | VPA_ALLOW_UP, 0);
	if (!d.utt_spk) {
		struct vpa_loc loc = {data, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "no utt2spk: the speakers of the utterances are needed");
		goto out;
	}
	size_t n = d.n_utt;
	struct set_job j = {e, &d, xcalloc(n ? n : 1, sizeof(float *)),
			    xcalloc(n ? n : 1, sizeof(size_t)), xcalloc(n ? n : 1, sizeof(double))};
	rc = vpa_dist_jobs(n, o->threads > 0 ? o->threads : 1, set_job, set_pack, set_unpack, &j,
			   NULL, vpa_la_run_workers, err);
	for (size_t i = 0; i < n && !rc; i++) {
		double *x = xmalloc(xmul(j.dim[i] ? j.dim[i] : 1, sizeof(double)));
		for (size_t k = 0; k < j.dim[i]; k++)
			x[k] = j.emb[i][k];
		long r = vpa_embset_add(&es, d.utt[i], d.utt_spk[i], x, j.dim[i], err);
		free(x);
		if (r < 0) {
			rc = err->status;
			break;
		}
		vpa_embset_set_dur(&es, (size_t)r, j.dur[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(j.emb[i]);
	free(j.emb);
	free(j.dim);
	free(j.dur);
	if (rc)
		goto out;
	/* genders from DATA/spk2gender (checked by vpa_datadir_open) */
	struct vpa_buf p;
	vpa_buf_init(&p);
	vpa_buf_printf(&p, "%s/spk2gender", data);
	if (file_exists(p.data)) {
		rc = vpa_kaldi_read_list(p.data, 2, &g, err);
		for (size_t i = 0; i < g.n && !rc; i++) {
			long s = vpa_embset_find_spk(&es, g.f[i * 2]);
			const char *gv = g.f[i * 2 + 1];
			if (s >= 0 && (!strcmp(gv, "m") || !strcmp(gv, "f")))
				vpa_embset_set_gender(&es, (uint32_t)s, gv[0]);
		}
	}
	vpa_buf_release(&p);
out:
	if (rc) {
		vpa_embset_release(&es);
		vpa_embset_init(&es);
	}
	*out = es;
	vpa_kaldi_list_release(&g);
	vpa_datadir_release(&d);
	return rc;
}

int vpa_embset_from_audio(const char *data, const char *model_path,
			  const struct vpa_embed_opts *o, struct vpa_embset *out,
			  struct vpa_err *err)
{
	struct vpa_embedder *e;
	vpa_embset_init(out);
	int rc = vpa_embedder_new(model_path, o, &e, err);
	if (rc)
		return rc;
	rc = vpa_embset_from_audio_with(data, e, o, out, err);
	vpa_embedder_free(e);
	return rc;
}
