/*
 * embed/classify.c - an ONNX utterance classifier over a data directory
 * (contract in embed/classify.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/dist.h"
#include "base/la.h"
#include "base/strmap.h"
#include "embed/classify.h"
#include "formats/io.h"
#include "formats/kaldi.h"
#include "onnx/onnx.h"

void vpa_cls_opts_init(struct vpa_cls_opts *o, int input_kind)
{
	memset(o, 0, sizeof(*o));
	o->input_kind = input_kind;
	vpa_feat_opts_init(&o->feat, input_kind == VPA_CLS_MFCC ? VPA_FEAT_MFCC : VPA_FEAT_FBANK);
	o->threads = 1;
}

void vpa_cls_run_release(struct vpa_cls_run *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->utt[i]);
	for (size_t c = 0; c < r->C; c++)
		free(r->labels[c]);
	free(r->utt);
	free(r->truth);
	free(r->pred);
	free(r->logits);
	free(r->labels);
	for (size_t g = 0; g < r->n_groups; g++)
		free(r->group_name[g]);
	free(r->group);
	free(r->group_name);
	memset(r, 0, sizeof(*r));
}

/* ---- one model ----------------------------------------------------------------- */

struct cls_model {
	struct vpa_onnx_model *m;
	char *path;
	const char *input; /* borrowed from the model */
	char *output;
};

static void model_free(struct cls_model *c)
{
	vpa_onnx_free(c->m);
	free(c->path);
	free(c->output);
	memset(c, 0, sizeof(*c));
}

static void shape_str(char *buf, size_t cap, const struct vpa_onnx_value_info *v)
{
	size_t at = 0;
	buf[0] = 0;
	for (size_t k = 0; k < v->ndim && at < cap; k++)
		at += (size_t)(v->dims[k] >= 0 ? snprintf(buf + at, cap - at, "%s%lld", k ? ", " : "[",
							  (long long)v->dims[k])
					       : snprintf(buf + at, cap - at, "%s%s", k ? ", " : "[",
							  v->dim_names[k] ? v->dim_names[k] : "?"));
	if (at < cap)
		snprintf(buf + at, cap - at, v->ndim ? "]" : "[]");
}

/*
 * Load and check what the graph declares: the input's rank (2 for the
 * waveform, 3 for features) and, when the output is a declared graph output
 * with a shape, that it is [1, C] / [C] with C the label count.  The shape
 * the model really gives is checked again on every run (run_one).
 */
static int model_load(struct cls_model *c, const char *path, const struct vpa_cls_opts *o,
		      size_t C, size_t feat_dim, struct vpa_err *err)
{
	struct vpa_loc loc = {path, 0, 0};
	memset(c, 0, sizeof(*c));
	c->path = xstrdup(path);
	int rc = vpa_onnx_load(path, NULL, &c->m, err);
	if (rc)
		return rc;
	const struct vpa_onnx_value_info *in = NULL;
	size_t ni = vpa_onnx_n_inputs(c->m);
	for (size_t i = 0; o->input && i < ni; i++)
		if (!strcmp(vpa_onnx_input(c->m, i)->name, o->input))
			in = vpa_onnx_input(c->m, i);
	if (o->input && !in)
		return vpa_fail(err, VPA_EINPUT, &loc, "no graph input named '%s'", o->input);
	if (!o->input && ni != 1)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"the model has %zu graph inputs: name the audio's one (--input)", ni);
	if (!in)
		in = vpa_onnx_input(c->m, 0);
	c->input = in->name;
	if (in->dtype && in->dtype != VPA_ONNX_FLOAT)
		return vpa_fail(err, VPA_EINPUT, &loc, "input '%s' is %s, expected float32", in->name,
				vpa_onnx_dtype_name(in->dtype));
	int wave = o->input_kind == VPA_CLS_WAVE;
	char shp[256];
	if (in->has_shape) {
		shape_str(shp, sizeof(shp), in);
		if (in->ndim != (wave ? 2u : 3u))
			return vpa_fail(err, VPA_EINPUT, &loc,
					"input '%s' %s has rank %zu: --input-kind %s wants %s", in->name,
					shp, in->ndim, wave ? "wave" : "fbank/mfcc",
					wave ? "(1, samples)" : "(1, time, features)");
		if (!wave && in->dims[2] > 0 && (size_t)in->dims[2] != feat_dim)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"input '%s' %s wants %lld features per frame, the front-end "
					"gives %zu",
					in->name, shp, (long long)in->dims[2], feat_dim);
	}
	const struct vpa_onnx_value_info *out = NULL;
	if (o->output) {
		if (!vpa_onnx_has_value(c->m, o->output))
			return vpa_fail(err, VPA_EINPUT, &loc, "no value named '%s' in the graph",
					o->output);
		for (size_t i = 0; i < vpa_onnx_n_outputs(c->m); i++)
			if (!strcmp(vpa_onnx_output(c->m, i)->name, o->output))
				out = vpa_onnx_output(c->m, i);
		c->output = xstrdup(o->output);
	} else {
		if (!vpa_onnx_n_outputs(c->m))
			return vpa_fail(err, VPA_EINPUT, &loc, "the graph has no output");
		out = vpa_onnx_output(c->m, 0);
		c->output = xstrdup(out->name);
	}
	if (out && out->has_shape) {
		shape_str(shp, sizeof(shp), out);
		int64_t last = out->ndim ? out->dims[out->ndim - 1] : -1;
		if (out->ndim < 1 || out->ndim > 2 || (out->ndim == 2 && out->dims[0] > 1))
			return vpa_fail(err, VPA_EINPUT, &loc,
					"output '%s' is %s: expected logits [1, C] or [C]", out->name,
					shp);
		if (last > 0 && (size_t)last != C)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"output '%s' %s has %lld classes, the label map has %zu", out->name,
					shp, (long long)last, C);
	}
	return 0;
}

/* The logits of one input tensor into dst (C floats). */
static int run_one(const struct cls_model *c, const char *id, struct vpa_onnx_tensor *in,
		   size_t C, float *dst, struct vpa_err *err)
{
	struct vpa_onnx_tensor y;
	const char *want[] = {c->output};
	const char *in_name = c->input;
	int rc = vpa_onnx_run(c->m, 1, &in_name, in, 1, want, &y, err);
	if (rc)
		return rc;
	char shp[128];
	vpa_onnx_shape_str(shp, sizeof(shp), y.ndim, y.dims);
	if (y.dtype != VPA_ONNX_FLOAT)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: output '%s' is %s, expected float32 logits",
			      c->path, c->output, vpa_onnx_dtype_name(y.dtype));
	else if (y.ndim < 1 || y.ndim > 2 || (y.ndim == 2 && y.dims[0] != 1))
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: output '%s' of '%s' is %s: expected logits [1, C] or [C]", c->path,
			      c->output, id, shp);
	else if ((size_t)y.dims[y.ndim - 1] != C)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: output '%s' of '%s' is %s: %lld classes, the label map has %zu",
			      c->path, c->output, id, shp, (long long)y.dims[y.ndim - 1], C);
	if (!rc) {
		const float *v = y.data;
		for (size_t k = 0; k < C && !rc; k++) {
			if (!isfinite(v[k]))
				rc = vpa_fail(err, VPA_EINPUT, NULL,
					      "%s: logit %zu of '%s' is not finite", c->path, k, id);
			dst[k] = v[k];
		}
	}
	vpa_onnx_tensor_release(&y);
	return rc;
}

/* The index of the largest logit, the first one on a tie, as numpy.argmax and
 * torch.argmax do, so the answers equal PyTorch's. */
static uint32_t argmax(const float *x, size_t n)
{
	size_t best = 0;
	for (size_t i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return (uint32_t)best;
}

/* ---- the data directory --------------------------------------------------------- */

struct job {
	const struct vpa_datadir *d;
	const struct cls_model *models;
	const uint32_t *model_of; /* (n) index into models */
	const struct vpa_feat *fe; /* NULL for the waveform */
	int cmn;
	size_t C;
	float *logits;
};

static int job_run(void *arg, size_t i, struct vpa_err *err)
{
	struct job *j = arg;
	struct vpa_wave w;
	vpa_wave_init(&w);
	const char *id = j->d->utt[i];
	int rc = vpa_datadir_load(j->d, i, &w, NULL, err);
	if (rc)
		goto out;
	if (!j->fe) {
		if (!w.n) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "utterance '%s' has no sample", id);
			goto out;
		}
		/* int16 scale -> [-1, 1), torchaudio.load's scale */
		for (size_t k = 0; k < w.n; k++)
			w.x[k] /= 32768.0f;
		int64_t dims[2] = {1, (int64_t)w.n};
		struct vpa_onnx_tensor in = vpa_onnx_tensor_f32(2, dims, w.x);
		rc = run_one(&j->models[j->model_of[i]], id, &in, j->C, j->logits + i * j->C, err);
	} else {
		struct vpa_fmat m;
		vpa_fmat_init(&m);
		rc = vpa_feat_apply(j->fe, &w, id, &m, err);
		if (!rc && !m.rows)
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "utterance '%s' gives no frame (shorter than one frame%s)", id,
				      vpa_feat_get_opts(j->fe)->vad ? ", or no voiced frame" : "");
		if (!rc && j->cmn) {
			for (size_t f = 0; f < m.cols; f++) {
				double s = 0;
				for (size_t t = 0; t < m.rows; t++)
					s += m.x[t * m.cols + f];
				float mu = (float)(s / (double)m.rows);
				for (size_t t = 0; t < m.rows; t++)
					m.x[t * m.cols + f] -= mu;
			}
		}
		if (!rc) {
			int64_t dims[3] = {1, (int64_t)m.rows, (int64_t)m.cols};
			struct vpa_onnx_tensor in = vpa_onnx_tensor_f32(3, dims, m.x);
			rc = run_one(&j->models[j->model_of[i]], id, &in, j->C, j->logits + i * j->C,
				     err);
		}
		vpa_fmat_release(&m);
	}
out:
	vpa_wave_release(&w);
	return rc;
}

static void job_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct job *j = arg;
	vpa_pack_f32s(b, j->logits + i * j->C, j->C);
}

static int job_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct job *j = arg;
	if (len != j->C * sizeof(float))
		return -1;
	return vpa_unpack_f32s(&p, p + len, j->logits + i * j->C, j->C);
}

/* path of `rel` read next to the file `base` (rel itself when absolute) */
static char *next_to(const char *base, const char *rel)
{
	const char *slash = strrchr(base, '/');
	if (rel[0] == '/' || !slash)
		return xstrdup(rel);
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%.*s/%s", (int)(slash - base), base, rel);
	return b.data;
}

int vpa_classify_dir(const char *data, const char *model, const char *folds,
		     const char *labels_path, const char *utt2label, const struct vpa_cls_opts *o,
		     struct vpa_cls_run *out, struct vpa_err *err)
{
	struct vpa_datadir d;
	struct vpa_kaldi_list lm, ul, fl;
	struct vpa_strmap lab, truth_of, fold_of;
	struct vpa_feat *fe = NULL;
	struct cls_model *models = NULL;
	size_t n_models = 0;
	char *u2l = NULL;
	struct vpa_cls_run r;
	memset(&r, 0, sizeof(r));
	memset(out, 0, sizeof(*out));
	vpa_datadir_init(&d);
	vpa_kaldi_list_init(&lm);
	vpa_kaldi_list_init(&ul);
	vpa_kaldi_list_init(&fl);
	vpa_strmap_init(&lab);
	vpa_strmap_init(&truth_of);
	vpa_strmap_init(&fold_of);
	int rc;
	/* the label map: line k = output k */
	if ((rc = vpa_kaldi_read_list(labels_path, 1, &lm, err)))
		goto done;
	for (size_t k = 0; k < lm.n; k++) {
		uint32_t old;
		if (vpa_strmap_put(&lab, lm.f[k], (uint32_t)k, &old)) {
			struct vpa_loc loc = {labels_path, lm.line[k], 0};
			rc = vpa_fail(err, VPA_EINPUT, &loc, "label '%s' is already on line %ld",
				      lm.f[k], lm.line[old]);
			goto done;
		}
	}
	r.C = lm.n;
	r.labels = xcalloc(r.C, sizeof(char *));
	for (size_t k = 0; k < r.C; k++)
		r.labels[k] = xstrdup(lm.f[k]);
	/* the truth */
	if (!utt2label) {
		struct vpa_buf b;
		vpa_buf_init(&b);
		vpa_buf_printf(&b, "%s/utt2emo", data);
		u2l = b.data;
	}
	const char *u2l_path = utt2label ? utt2label : u2l;
	if ((rc = vpa_kaldi_read_list(u2l_path, 2, &ul, err)))
		goto done;
	for (size_t i = 0; i < ul.n; i++) {
		struct vpa_loc loc = {u2l_path, ul.line[i], 0};
		uint32_t c, old;
		if (!vpa_strmap_get(&lab, ul.f[i * 2 + 1], &c)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "label '%s' of '%s' is not in the label map %s (%zu labels)",
				      ul.f[i * 2 + 1], ul.f[i * 2], labels_path, r.C);
			goto done;
		}
		if (vpa_strmap_put(&truth_of, ul.f[i * 2], c, &old)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "utterance '%s' is already labelled",
				      ul.f[i * 2]);
			goto done;
		}
	}
	/* the audio */
	if ((rc = vpa_datadir_open(&d, data, -1, err)))
		goto done;
	vpa_datadir_set_rate(&d, o->feat.sample_frequency, VPA_ALLOW_DOWN | VPA_ALLOW_UP, 0);
	size_t n = d.n_utt;
	if (!n) {
		struct vpa_loc loc = {data, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &loc, "no utterance");
		goto done;
	}
	r.n = n;
	r.utt = xcalloc(n, sizeof(char *));
	r.truth = xcalloc(n, sizeof(uint32_t));
	r.pred = xcalloc(n, sizeof(uint32_t));
	r.logits = xcalloc(xmul(n, r.C), sizeof(float));
	uint32_t *model_of = xcalloc(n, sizeof(uint32_t));
	for (size_t i = 0; i < n; i++) {
		r.utt[i] = xstrdup(d.utt[i]);
		if (!vpa_strmap_get(&truth_of, d.utt[i], &r.truth[i])) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s: no label for utterance '%s' (%s line %ld)", u2l_path,
				      d.utt[i], d.seg_file ? d.seg_file : d.scp ? d.scp : data,
				      d.utt_line ? d.utt_line[i] : 0L);
			goto done_mo;
		}
	}
	if (o->input_kind != VPA_CLS_WAVE && !(fe = vpa_feat_new(&o->feat, err))) {
		rc = err->status;
		goto done_mo;
	}
	size_t fdim = fe ? vpa_feat_dim(fe) : 0;
	if (!folds) {
		models = xcalloc(1, sizeof(*models));
		n_models = 1;
		if ((rc = model_load(&models[0], model, o, r.C, fdim, err)))
			goto done_mo;
	} else {
		if (!d.utt_spk) {
			struct vpa_loc loc = {data, 0, 0};
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "no utt2spk: the folds are per speaker (%s)", folds);
			goto done_mo;
		}
		if ((rc = vpa_kaldi_read_list(folds, 2, &fl, err)))
			goto done_mo;
		/* one model per distinct path, loaded once; speakers point at it */
		struct vpa_strmap path_idx;
		vpa_strmap_init(&path_idx);
		models = xcalloc(fl.n, sizeof(*models));
		for (size_t i = 0; i < fl.n && !rc; i++) {
			uint32_t mi, old;
			if (!vpa_strmap_get(&path_idx, fl.f[i * 2 + 1], &mi)) {
				char *p = next_to(folds, fl.f[i * 2 + 1]);
				mi = (uint32_t)n_models++;
				vpa_strmap_put(&path_idx, fl.f[i * 2 + 1], mi, NULL);
				rc = model_load(&models[mi], p, o, r.C, fdim, err);
				free(p);
			}
			if (!rc && vpa_strmap_put(&fold_of, fl.f[i * 2], mi, &old)) {
				struct vpa_loc loc = {folds, fl.line[i], 0};
				rc = vpa_fail(err, VPA_EINPUT, &loc, "speaker '%s' already has a fold",
					      fl.f[i * 2]);
			}
		}
		vpa_strmap_release(&path_idx);
		for (size_t i = 0; i < n && !rc; i++)
			if (!vpa_strmap_get(&fold_of, d.utt_spk[i], &model_of[i]))
				rc = vpa_fail(err, VPA_EINPUT, NULL,
					      "%s: no fold for speaker '%s' (of utterance '%s')", folds,
					      d.utt_spk[i], d.utt[i]);
		/* the speakers, numbered in order of their first utterance */
		struct vpa_strmap spk;
		vpa_strmap_init(&spk);
		r.group = xcalloc(n, sizeof(uint32_t));
		r.group_name = xcalloc(n, sizeof(char *));
		for (size_t i = 0; i < n && !rc; i++) {
			if (!vpa_strmap_get(&spk, d.utt_spk[i], &r.group[i])) {
				r.group[i] = (uint32_t)r.n_groups;
				r.group_name[r.n_groups++] = xstrdup(d.utt_spk[i]);
				vpa_strmap_put(&spk, r.group_name[r.group[i]], r.group[i], NULL);
			}
		}
		vpa_strmap_release(&spk);
		if (rc)
			goto done_mo;
	}
	struct job j = {&d, models, model_of, fe, o->cmn, r.C, r.logits};
	rc = vpa_dist_jobs(n, o->threads > 0 ? o->threads : 1, job_run, job_pack, job_unpack, &j,
			   NULL, vpa_la_run_workers, err);
	for (size_t i = 0; i < n && !rc; i++)
		r.pred[i] = argmax(r.logits + i * r.C, r.C);
done_mo:
	free(model_of);
done:
	for (size_t i = 0; i < n_models; i++)
		model_free(&models[i]);
	free(models);
	vpa_feat_free(fe);
	free(u2l);
	vpa_strmap_release(&lab);
	vpa_strmap_release(&truth_of);
	vpa_strmap_release(&fold_of);
	vpa_kaldi_list_release(&lm);
	vpa_kaldi_list_release(&ul);
	vpa_kaldi_list_release(&fl);
	vpa_datadir_release(&d);
	if (rc)
		vpa_cls_run_release(&r);
	else
		*out = r;
	return rc;
}
