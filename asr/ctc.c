/*
 * asr/ctc.c - the ONNX CTC recogniser (see asr/ctc.h): tokens, model checks,
 * one utterance through the engine in one pass, greedy decoding, the
 * hypotheses of a data directory.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "asr/ctc.h"
#include "base/dist.h"
#include "base/la.h"
#include "formats/tokens.h"
#include "onnx/onnx.h"

/* A number in [lo, hi] from the whole of value, or -1 with *v untouched. */
static int parse_num(const char *value, double lo, double hi, double *v)
{
	char *end;
	errno = 0;
	double x = strtod(value, &end);
	if (!*value || *end || errno || !isfinite(x) || x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

static int parse_bool(const char *value, int *v)
{
	if (!strcmp(value, "true") || !strcmp(value, "false")) {
		*v = !strcmp(value, "true");
		return 0;
	}
	return -1;
}

int vpa_ctc_opts_set(struct vpa_ctc_opts *o, const char *name, const char *value,
		     struct vpa_err *err)
{
	double x;
	if (!strcmp(name, "blank")) {
		/* an integer: the index of a token */
		if (parse_num(value, 0, 1e9, &x) || x != floor(x))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"--blank must be a token index (0, 1, ...), got '%s'", value);
		o->blank = (long)x;
		return 0;
	}
	if (!strcmp(name, "delimiter")) {
		/* "|" and SentencePiece's U+2581 by name, so a shell need not type it */
		if (!strcmp(value, "sentencepiece"))
			o->delimiter = "\xe2\x96\x81";
		else if (!strcmp(value, "none"))
			o->delimiter = "";
		else
			o->delimiter = value;
		return 0;
	}
	if (!strcmp(name, "input")) {
		if (strcmp(value, "waveform") && strcmp(value, "features"))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"--input must be waveform or features, got '%s'", value);
		o->input = !strcmp(value, "features") ? VPA_CTC_FEATURES : VPA_CTC_WAVEFORM;
		return 0;
	}
	if (!strcmp(name, "rate")) {
		if (parse_num(value, 1, 1e6, &x))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"--rate must be the model's sample rate in Hz (1 .. 1000000), got '%s'", value);
		o->rate = x;
		return 0;
	}
	if (!strcmp(name, "wave-scale")) {
		if (parse_num(value, 1e-30, 1e30, &x))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"--wave-scale must be a positive number, got '%s'", value);
		o->wave_scale = x;
		return 0;
	}
	if (!strcmp(name, "wave-norm") || !strcmp(name, "resample")) {
		int b;
		if (parse_bool(value, &b))
			return vpa_fail(err, VPA_EINPUT, NULL, "--%s must be true or false, got '%s'",
					name, value);
		*(!strcmp(name, "resample") ? &o->resample : &o->wave_norm) = b;
		return 0;
	}
	if (!strcmp(name, "normalise") || !strcmp(name, "normalize")) {
		if (vpa_wer_norm_parse(value, &o->norm))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"--%s must be vpc, upper, punct or none, got '%s'", name, value);
		return 0;
	}
	if (!strcmp(name, "layout")) {
		if (strcmp(value, "btf") && strcmp(value, "bft"))
			return vpa_fail(err, VPA_EINPUT, NULL, "--layout must be btf or bft, got '%s'",
					value);
		o->layout = !strcmp(value, "bft") ? VPA_CTC_BFT : VPA_CTC_BTF;
		return 0;
	}
	if (!strcmp(name, "input-name")) {
		o->input_name = value;
		return 0;
	}
	if (!strcmp(name, "output")) {
		o->output_name = value;
		return 0;
	}
	return vpa_feat_opts_set(&o->feat, name, value, err);
}

struct vpa_ctc {
	struct vpa_onnx_model *m;
	struct vpa_feat *fe;    /* features input only */
	char **tok;
	size_t n_tok;
	char *model_path, *tok_path, *in_name, *out_name, *delim;
	long blank;
	int input, layout, wave_norm;
	double wave_scale;
	struct vpa_wer_opts norm;
};

void vpa_ctc_opts_init(struct vpa_ctc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->blank = 0;
	o->delimiter = "|";
	o->input = VPA_CTC_WAVEFORM;
	o->rate = 16000;
	o->wave_scale = 1.0 / 32768.0;
	vpa_feat_opts_init(&o->feat, VPA_FEAT_FBANK);
	o->layout = VPA_CTC_BTF;
	vpa_wer_opts_init(&o->norm);
	o->threads = 1;
	o->channel = -1;
}

void vpa_ctc_free(struct vpa_ctc *c)
{
	if (!c)
		return;
	vpa_onnx_free(c->m);
	vpa_feat_free(c->fe);
	vpa_tokens_free(c->tok, c->n_tok);
	free(c->model_path);
	free(c->tok_path);
	free(c->in_name);
	free(c->out_name);
	free(c->delim);
	free(c);
}

size_t vpa_ctc_n_tokens(const struct vpa_ctc *c)
{
	return c->n_tok;
}

char *const *vpa_ctc_tokens(const struct vpa_ctc *c)
{
	return c->tok;
}

size_t vpa_ctc_blank(const struct vpa_ctc *c)
{
	return (size_t)c->blank;
}

const char *vpa_ctc_delimiter(const struct vpa_ctc *c)
{
	return c->delim;
}

const char *vpa_ctc_tokens_path(const struct vpa_ctc *c)
{
	return c->tok_path;
}

const struct vpa_wer_opts *vpa_ctc_norm(const struct vpa_ctc *c)
{
	return &c->norm;
}

/* A declared shape with its symbolic names: "(1, frames, 30)" */
static void info_shape(char *buf, size_t cap, const struct vpa_onnx_value_info *vi)
{
	size_t off = (size_t)snprintf(buf, cap, "(");
	for (size_t d = 0; d < vi->ndim && off < cap; d++) {
		if (vi->dims[d] >= 0)
			off += (size_t)snprintf(buf + off, cap - off, "%s%lld", d ? ", " : "",
						(long long)vi->dims[d]);
		else
			off += (size_t)snprintf(buf + off, cap - off, "%s%s", d ? ", " : "",
						vi->dim_names[d] ? vi->dim_names[d] : "?");
	}
	if (off < cap)
		snprintf(buf + off, cap - off, ")");
}

/* The declared shape of graph output `name`, or NULL (an intermediate value). */
static const struct vpa_onnx_value_info *output_info(const struct vpa_onnx_model *m,
						     const char *name)
{
	for (size_t i = 0; i < vpa_onnx_n_outputs(m); i++)
		if (!strcmp(vpa_onnx_output(m, i)->name, name))
			return vpa_onnx_output(m, i);
	return NULL;
}

int vpa_ctc_new(const struct vpa_ctc_opts *o, struct vpa_ctc **out, struct vpa_err *err)
{
	*out = NULL;
	if (!o->model || !o->tokens)
		return vpa_fail(err, VPA_EINPUT, NULL, "a CTC model needs both the model and its tokens file");
	if (o->input != VPA_CTC_WAVEFORM && o->input != VPA_CTC_FEATURES)
		return vpa_fail(err, VPA_EINPUT, NULL, "input must be waveform or features");
	if (o->input == VPA_CTC_WAVEFORM && !(o->rate >= 1 && o->rate <= 1e6))
		return vpa_fail(err, VPA_EINPUT, NULL, "the model's sample rate must be 1 .. 1000000 Hz, got %g", o->rate);
	if (!(isfinite(o->wave_scale) && o->wave_scale > 0))
		return vpa_fail(err, VPA_EINPUT, NULL, "the waveform scale must be a positive number, got %g", o->wave_scale);
	if (o->blank < 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "the blank index must be >= 0, got %ld", o->blank);
	struct vpa_ctc *c = xcalloc(1, sizeof(*c));
	c->model_path = xstrdup(o->model);
	c->tok_path = xstrdup(o->tokens);
	c->delim = xstrdup(o->delimiter ? o->delimiter : "");
	c->blank = o->blank;
	c->input = o->input;
	c->layout = o->layout;
	c->wave_norm = o->wave_norm;
	c->wave_scale = o->wave_scale;
	c->norm = o->norm;
	int rc = vpa_tokens_read(o->tokens, &c->tok, &c->n_tok, err);
	if (!rc && (size_t)c->blank >= c->n_tok)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "the blank index %ld is past the %zu tokens of %s", c->blank, c->n_tok,
			      o->tokens);
	if (!rc)
		rc = vpa_onnx_load(o->model, NULL, &c->m, err);
	if (rc)
		goto fail;
	struct vpa_loc mloc = {o->model, 0, 0};
	size_t rank_in = o->input == VPA_CTC_WAVEFORM ? 2 : 3;
	const struct vpa_onnx_value_info *in = NULL;
	if (o->input_name) {
		for (size_t i = 0; i < vpa_onnx_n_inputs(c->m); i++)
			if (!strcmp(vpa_onnx_input(c->m, i)->name, o->input_name))
				in = vpa_onnx_input(c->m, i);
		if (!in) {
			rc = vpa_fail(err, VPA_EINPUT, &mloc, "no graph input '%s'", o->input_name);
			goto fail;
		}
	} else if (vpa_onnx_n_inputs(c->m) != 1) {
		rc = vpa_fail(err, VPA_EINPUT, &mloc,
			      "the model has %zu inputs: name the one that takes the %s",
			      vpa_onnx_n_inputs(c->m), o->input == VPA_CTC_WAVEFORM ? "waveform" : "features");
		goto fail;
	} else {
		in = vpa_onnx_input(c->m, 0);
	}
	c->in_name = xstrdup(in->name);
	if (in->has_shape && in->ndim != rank_in) {
		char s[256];
		info_shape(s, sizeof(s), in);
		rc = vpa_fail(err, VPA_EINPUT, &mloc,
			      "input '%s' %s has rank %zu, %s input wants rank %zu (%s)", in->name, s,
			      in->ndim, o->input == VPA_CTC_WAVEFORM ? "waveform" : "features", rank_in,
			      o->input == VPA_CTC_WAVEFORM ? "[1, samples]" : "[1, frames, features]");
		goto fail;
	}
	if (o->output_name) {
		if (!vpa_onnx_has_value(c->m, o->output_name)) {
			rc = vpa_fail(err, VPA_EINPUT, &mloc, "no value '%s' in the graph", o->output_name);
			goto fail;
		}
		c->out_name = xstrdup(o->output_name);
	} else {
		c->out_name = xstrdup(vpa_onnx_output(c->m, 0)->name);
	}
	const struct vpa_onnx_value_info *oi = output_info(c->m, c->out_name);
	if (oi && oi->has_shape) {
		char s[256];
		info_shape(s, sizeof(s), oi);
		if (!(oi->ndim == 2 || (oi->ndim == 3 && oi->dims[0] <= 1))) {
			rc = vpa_fail(err, VPA_EINPUT, &mloc,
				      "output '%s' %s is not [1, T, V] or [T, V] (frames x tokens)",
				      oi->name, s);
			goto fail;
		}
		int64_t v = oi->dims[oi->ndim - 1];
		if (v >= 0 && (uint64_t)v != c->n_tok) {
			rc = vpa_fail(err, VPA_EINPUT, &mloc,
				      "output '%s' %s has %lld classes per frame but %s has %zu tokens (line k is output index k)",
				      oi->name, s, (long long)v, o->tokens, c->n_tok);
			goto fail;
		}
	}
	if (o->input == VPA_CTC_FEATURES) {
		c->fe = vpa_feat_new(&o->feat, err);
		if (!c->fe) {
			rc = err->status ? err->status : VPA_EINPUT;
			goto fail;
		}
	}
	*out = c;
	return 0;
fail:
	vpa_ctc_free(c);
	return rc;
}

/* UTF-8 aware: is the byte at p the start of `delim`? */
static int at_delim(const char *p, const char *delim, size_t dl)
{
	return dl && !strncmp(p, delim, dl);
}

char *vpa_ctc_greedy(const float *x, size_t T, size_t V, char *const *tok, size_t blank,
		     const char *delimiter, const struct vpa_wer_opts *norm)
{
	struct vpa_buf raw;
	vpa_buf_init(&raw);
	size_t prev = (size_t)-1;
	for (size_t t = 0; t < T; t++) {
		const float *r = x + t * V;
		size_t best = 0;
		/* the first maximum, as torch.argmax and numpy.argmax */
		for (size_t v = 1; v < V; v++)
			if (r[v] > r[best])
				best = v;
		if (best != prev && best != blank)
			vpa_buf_puts(&raw, tok[best]);
		prev = best;
	}
	const char *s = raw.len ? vpa_buf_str(&raw) : "";
	/* the delimiter becomes a space, then the normaliser's word breaks */
	size_t dl = delimiter ? strlen(delimiter) : 0;
	size_t n = strlen(s);
	char *w = xmalloc(n + 1);
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		if (at_delim(s + i, delimiter, dl)) {
			w[k++] = ' ';
			i += dl;
		} else {
			w[k++] = s[i++];
		}
	}
	w[k] = '\0';
	vpa_buf_release(&raw);
	if (norm)
		vpa_wer_normalise(w, norm);
	/* words separated by one space, no space at either end */
	size_t o = 0;
	for (size_t i = 0; w[i];) {
		while (w[i] == ' ' || w[i] == '\t' || w[i] == '\r' || w[i] == '\n')
			i++;
		if (!w[i])
			break;
		if (o)
			w[o++] = ' ';
		while (w[i] && w[i] != ' ' && w[i] != '\t' && w[i] != '\r' && w[i] != '\n')
			w[o++] = w[i++];
	}
	w[o] = '\0';
	return w;
}

int vpa_ctc_wave(const struct vpa_ctc *c, const char *id, const struct vpa_wave *w,
		 float **scores, size_t *T, char **text, struct vpa_err *err)
{
	if (scores)
		*scores = NULL;
	if (text)
		*text = NULL;
	*T = 0;
	struct vpa_onnx_tensor x, y = {0};
	float *buf = NULL;
	struct vpa_fmat m;
	vpa_fmat_init(&m);
	int rc = 0;
	if (c->input == VPA_CTC_WAVEFORM) {
		if (w->n == 0)
			return vpa_fail(err, VPA_EINPUT, NULL, "utterance '%s' has no samples", id);
		buf = xmalloc(xmul(w->n, sizeof(float)));
		if (c->wave_norm) {
			/* Hugging Face's zero_mean_unit_var_norm, in double */
			double mean = 0, var = 0;
			for (size_t i = 0; i < w->n; i++)
				mean += (double)w->x[i] * c->wave_scale;
			mean /= (double)w->n;
			for (size_t i = 0; i < w->n; i++) {
				double d = (double)w->x[i] * c->wave_scale - mean;
				var += d * d;
			}
			var /= (double)w->n;
			double sd = sqrt(var + 1e-7);
			for (size_t i = 0; i < w->n; i++)
				buf[i] = (float)(((double)w->x[i] * c->wave_scale - mean) / sd);
		} else {
			for (size_t i = 0; i < w->n; i++)
				buf[i] = (float)((double)w->x[i] * c->wave_scale);
		}
		x = vpa_onnx_tensor_f32(2, (int64_t[]){1, (int64_t)w->n}, buf);
	} else {
		rc = vpa_feat_apply(c->fe, w, id, &m, err);
		if (rc)
			return rc;
		if (m.rows == 0) {
			vpa_fmat_release(&m);
			return vpa_fail(err, VPA_EINPUT, NULL,
					"utterance '%s' gives no frame (shorter than one frame)", id);
		}
		if (c->layout == VPA_CTC_BFT) {
			buf = xmalloc(xmul(xmul(m.rows, m.cols), sizeof(float)));
			for (size_t t = 0; t < m.rows; t++)
				for (size_t f = 0; f < m.cols; f++)
					buf[f * m.rows + t] = m.x[t * m.cols + f];
			x = vpa_onnx_tensor_f32(3, (int64_t[]){1, (int64_t)m.cols, (int64_t)m.rows}, buf);
		} else {
			x = vpa_onnx_tensor_f32(3, (int64_t[]){1, (int64_t)m.rows, (int64_t)m.cols}, m.x);
		}
	}
	const char *in_names[] = {c->in_name};
	const char *out_names[] = {c->out_name};
	rc = vpa_onnx_run(c->m, 1, in_names, &x, 1, out_names, &y, err);
	free(buf);
	vpa_fmat_release(&m);
	if (rc)
		return rc;
	struct vpa_loc mloc = {c->model_path, 0, 0};
	char s[128];
	vpa_onnx_shape_str(s, sizeof(s), y.ndim, y.dims);
	if (y.dtype != VPA_ONNX_FLOAT) {
		rc = vpa_fail(err, VPA_EINPUT, &mloc, "output '%s' is %s, not float32 scores",
			      c->out_name, vpa_onnx_dtype_name(y.dtype));
	} else if (!(y.ndim == 2 || (y.ndim == 3 && y.dims[0] == 1))) {
		rc = vpa_fail(err, VPA_EINPUT, &mloc,
			      "output '%s' %s for utterance '%s' is not [1, T, V] or [T, V] (frames x tokens)",
			      c->out_name, s, id);
	} else if ((uint64_t)y.dims[y.ndim - 1] != c->n_tok) {
		rc = vpa_fail(err, VPA_EINPUT, &mloc,
			      "output '%s' %s has %lld classes per frame but the tokens file has %zu tokens (line k is output index k)",
			      c->out_name, s, (long long)y.dims[y.ndim - 1], c->n_tok);
	}
	size_t nt = y.ndim >= 2 ? (size_t)y.dims[y.ndim - 2] : 0;
	const float *p = y.data;
	for (size_t i = 0; !rc && i < nt * c->n_tok; i++)
		if (!isfinite(p[i]))
			rc = vpa_fail(err, VPA_EINPUT, &mloc,
				      "utterance '%s': output '%s' frame %zu token %zu is not finite",
				      id, c->out_name, i / c->n_tok, i % c->n_tok);
	if (rc) {
		vpa_onnx_tensor_release(&y);
		return rc;
	}
	*T = nt;
	if (text)
		*text = vpa_ctc_greedy(p, nt, c->n_tok, c->tok, (size_t)c->blank, c->delim, &c->norm);
	if (scores) {
		*scores = y.data; /* owned tensor data: handed over */
		y.data = NULL;
	}
	vpa_onnx_tensor_release(&y);
	return 0;
}

/* ---- data directories ---------------------------------------------------------- */

struct dir_job {
	const struct vpa_ctc *c;
	const struct vpa_datadir *d;
	char **text;
};

static int dir_job(void *arg, size_t i, struct vpa_err *err)
{
	struct dir_job *j = arg;
	struct vpa_wave w;
	vpa_wave_init(&w);
	size_t T;
	int rc = vpa_datadir_load(j->d, i, &w, NULL, err);
	if (!rc)
		rc = vpa_ctc_wave(j->c, j->d->utt[i], &w, NULL, &T, &j->text[i], err);
	vpa_wave_release(&w);
	return rc;
}

static void dir_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct dir_job *j = arg;
	size_t n = strlen(j->text[i]);
	vpa_pack_u64(b, n);
	vpa_buf_add(b, j->text[i], n);
}

static int dir_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct dir_job *j = arg;
	const unsigned char *end = p + len;
	uint64_t n;
	if (vpa_unpack_u64(&p, end, &n) || n != (uint64_t)(end - p))
		return -1;
	free(j->text[i]);
	j->text[i] = xmalloc((size_t)n + 1);
	memcpy(j->text[i], p, (size_t)n);
	j->text[i][n] = '\0';
	return 0;
}

/* the rate the model's input takes: the waveform's, or the front-end's */
double vpa_ctc_rate(const struct vpa_ctc *c, const struct vpa_ctc_opts *o)
{
	return c->input == VPA_CTC_WAVEFORM ? o->rate : o->feat.sample_frequency;
}

int vpa_ctc_transcribe_dd(const struct vpa_ctc *c, const struct vpa_ctc_opts *o,
			  const struct vpa_datadir *d, char ***texts, struct vpa_err *err)
{
	size_t n = d->n_utt;
	struct dir_job j = {c, d, xcalloc(n ? n : 1, sizeof(char *))};
	int rc = vpa_dist_jobs(n, o->threads > 0 ? o->threads : 1, dir_job, dir_pack, dir_unpack,
			       &j, NULL, vpa_la_run_workers, err);
	if (rc) {
		for (size_t i = 0; i < n; i++)
			free(j.text[i]);
		free(j.text);
		return rc;
	}
	*texts = j.text;
	return 0;
}

int vpa_ctc_transcribe_datadir_with(const struct vpa_ctc *c, const struct vpa_ctc_opts *o,
				    const char *datadir, const char *out_text,
				    struct vpa_err *err)
{
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	char **text = NULL;
	int rc = vpa_datadir_open(&d, datadir, o->channel, err);
	if (rc)
		goto out;
	if (d.n_utt == 0) {
		struct vpa_loc loc = {datadir, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &loc, "no utterance to transcribe");
		goto out;
	}
	/* the model takes one rate: another is resampled only when asked */
	double rate = vpa_ctc_rate(c, o);
	vpa_datadir_set_rate(&d, rate, o->resample ? VPA_ALLOW_DOWN | VPA_ALLOW_UP : 0, 0);
	rc = vpa_datadir_probe(&d, o->resample ? 0 : rate, err);
	if (rc)
		goto out;
	rc = vpa_ctc_transcribe_dd(c, o, &d, &text, err);
	if (!rc) {
		struct vpa_atomic a;
		FILE *f = vpa_atomic_open(out_text, &a, err);
		if (!f) {
			rc = err->status ? err->status : VPA_EIO;
		} else {
			for (size_t i = 0; i < d.n_utt; i++)
				fprintf(f, "%s%s%s\n", d.utt[i], text[i][0] ? " " : "", text[i]);
			rc = vpa_atomic_commit(&a, err);
		}
		for (size_t i = 0; i < d.n_utt; i++)
			free(text[i]);
		free(text);
	}
out:
	vpa_datadir_release(&d);
	return rc;
}

int vpa_ctc_transcribe_datadir(const struct vpa_ctc_opts *o, const char *datadir,
			       const char *out_text, struct vpa_err *err)
{
	struct vpa_ctc *c;
	int rc = vpa_ctc_new(o, &c, err);
	if (rc)
		return rc;
	rc = vpa_ctc_transcribe_datadir_with(c, o, datadir, out_text, err);
	vpa_ctc_free(c);
	return rc;
}
