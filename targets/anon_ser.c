/*
 * targets/anon_ser.c - the `ser:` key of an anonymised_speech audio target
 * (issue 30 item 2): the utility an anonymiser keeps for emotion recognition,
 * measured as the VoicePrivacy Challenge 2024 does (UAR of its speech emotion
 * recogniser on IEMOCAP and on IEMOCAP anonymised), with the user's ONNX
 * classifier (embed/classify.h) and metrics/classify.c.  The same JSON is
 * what `vpaudit classify --json` prints per set.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed/classify.h"
#include "metrics/metrics.h"
#include "targets/anon.h"

#define INF INFINITY

static const struct vpa_key ser_keys[] = {
	{"model", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "ser.onnx",
	 "the classifier (ONNX): logits [1, C] or [C], C the labels of `labels`; or `folds`",
	 VPA_AT(struct vpa_anon_ser_opts, model), VPA_MARK(struct vpa_anon_ser_opts, model_at)},
	{"folds", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "ser/folds.txt",
	 "the VPC's per-speaker folds instead of `model`: lines `SPEAKER MODEL.onnx` (a "
	 "relative MODEL next to this file); each utterance by its speaker's model, pooled",
	 VPA_AT(struct vpa_anon_ser_opts, folds), VPA_MARK(struct vpa_anon_ser_opts, folds_at)},
	{"labels", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "emotions.txt",
	 "the label map: one label per line, line k = output k",
	 VPA_AT(struct vpa_anon_ser_opts, labels), VPA_MARK(struct vpa_anon_ser_opts, labels_at)},
	{"data", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "data/iemocap_dev",
	 "the labelled original audio (Kaldi data directory; utt2spk for `folds`)",
	 VPA_AT(struct vpa_anon_ser_opts, data), VPA_MARK(struct vpa_anon_ser_opts, data_at)},
	{"data_anon", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "data/iemocap_dev_b2",
	 "the same utterances anonymised",
	 VPA_AT(struct vpa_anon_ser_opts, data_anon), VPA_MARK(struct vpa_anon_ser_opts, data_anon_at)},
	{"utt2label", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/iemocap_dev/utt2emo",
	 "the true labels of `data`, lines `UTT LABEL` (default: DATA/utt2emo); every "
	 "utterance must have one",
	 VPA_AT(struct vpa_anon_ser_opts, utt2label), VPA_MARK(struct vpa_anon_ser_opts, utt2label_at)},
	{"utt2label_anon", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL,
	 "data/iemocap_dev/utt2emo",
	 "the true labels of `data_anon` (default: DATA_ANON/utt2emo)",
	 VPA_AT(struct vpa_anon_ser_opts, utt2label_anon), VPA_MARK(struct vpa_anon_ser_opts, utt2label_anon_at)},
	{"input_kind", VPA_K_ENUM, 0, "wave", -INF, INF, 0, "wave|fbank|mfcc", NULL, "wave",
	 "what the model takes: the waveform (1, samples) scaled to [-1, 1) as torchaudio.load "
	 "gives, or fbank / MFCC features (1, T, F)",
	 VPA_AT(struct vpa_anon_ser_opts, input_kind), VPA_MARK(struct vpa_anon_ser_opts, input_kind_at)},
	{"options", VPA_K_LIST, 0, NULL, -INF, INF, 0, NULL, NULL, "[--num-mel-bins=80]",
	 "front-end options as on the command line of `vpaudit features` (`--name=value`; "
	 "--sample-frequency is the rate of the model for `wave` too)",
	 VPA_AT(struct vpa_anon_ser_opts, options), VPA_MARK(struct vpa_anon_ser_opts, options_at)},
	{"cmn", VPA_K_BOOL, 0, "false", -INF, INF, 0, NULL, NULL, "true",
	 "features: subtract their mean over time",
	 VPA_AT(struct vpa_anon_ser_opts, cmn), VPA_MARK(struct vpa_anon_ser_opts, cmn_at)},
	{"input", VPA_K_STR, 0, NULL, -INF, INF, 0, NULL, NULL, "wave",
	 "the graph input (default: the only one)",
	 VPA_AT(struct vpa_anon_ser_opts, input), VPA_MARK(struct vpa_anon_ser_opts, input_at)},
	{"output", VPA_K_STR, 0, NULL, -INF, INF, 0, NULL, NULL, "logits",
	 "the value read as logits (default: the first graph output)",
	 VPA_AT(struct vpa_anon_ser_opts, output), VPA_MARK(struct vpa_anon_ser_opts, output_at)},
	{NULL},
};
const struct vpa_schema vpa_anon_ser_schema = {"ser", ser_keys, sizeof(struct vpa_anon_ser_opts)};

int vpa_anon_ser_validate(const struct vpa_kind_ctx *ctx, const struct vpa_anon_ser_opts *s,
			  struct vpa_mark s_at, struct vpa_err *err)
{
	if (!s->model_at.line == !s->folds_at.line) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, s->folds_at.line ? s->folds_at : s_at);
		return vpa_fail(err, VPA_EINPUT, &loc, "`ser` needs one of `model` and `folds`");
	}
	if (vpa_check_path_at(ctx, s->model, s->model_at, VPA_PATH_FILE, err) ||
	    vpa_check_path_at(ctx, s->folds, s->folds_at, VPA_PATH_FILE, err) ||
	    vpa_check_path_at(ctx, s->labels, s->labels_at, VPA_PATH_FILE, err) ||
	    vpa_check_path_at(ctx, s->data, s->data_at, VPA_PATH_DIR, err) ||
	    vpa_check_path_at(ctx, s->data_anon, s->data_anon_at, VPA_PATH_DIR, err) ||
	    vpa_check_path_at(ctx, s->utt2label, s->utt2label_at, VPA_PATH_FILE, err) ||
	    vpa_check_path_at(ctx, s->utt2label_anon, s->utt2label_anon_at, VPA_PATH_FILE, err))
		return err->status;
	struct vpa_cls_opts o;
	vpa_cls_opts_init(&o, VPA_CLS_WAVE);
	static const char *const own[] = {"cmn", "input", "output", NULL};
	return vpa_target_frontend_strs(ctx->file, &s->options, "--num-mel-bins=80", own, &o.feat,
					err);
}

struct vpa_json *vpa_anon_cls_json(const struct vpa_cls_run *r, const struct vpa_cls_metrics *m)
{
	struct vpa_json *o = vpa_json_obj(), *rec = vpa_json_obj(), *sup = vpa_json_obj();
	struct vpa_json *cm = vpa_json_arr();
	vpa_json_set_num(o, "n", (double)m->n);
	vpa_json_set_num(o, "uar", m->uar);
	vpa_json_set_num(o, "accuracy", m->accuracy);
	for (size_t c = 0; c < r->C; c++) {
		vpa_json_set_num(rec, r->labels[c], m->recall[c]); /* NAN (no sample) -> null */
		vpa_json_set_num(sup, r->labels[c], (double)m->support[c]);
		struct vpa_json *row = vpa_json_arr();
		for (size_t k = 0; k < r->C; k++)
			vpa_json_push(row, vpa_json_num((double)m->confusion[c * r->C + k]));
		vpa_json_push(cm, row);
	}
	vpa_json_set(o, "recall", rec);
	vpa_json_set(o, "support", sup);
	vpa_json_set(o, "confusion", cm);
	vpa_json_set_num(o, "uar_macro", m->uar_macro);
	if (r->group) {
		/* the VPC's number: each speaker scored alone, then the mean */
		double u, *cmean = xcalloc(r->C, sizeof(double));
		size_t ng;
		struct vpa_err err;
		vpa_err_init(&err);
		if (!vpa_cls_fold_uar(r->truth, r->pred, r->group, r->n, r->C, r->n_groups, &u, cmean,
				      &ng, &err)) {
			struct vpa_json *rf = vpa_json_obj();
			vpa_json_set_num(o, "folds", (double)ng);
			vpa_json_set_num(o, "uar_folds", u);
			for (size_t c = 0; c < r->C; c++)
				vpa_json_set_num(rf, r->labels[c], cmean[c]);
			vpa_json_set(o, "recall_folds", rf);
		}
		free(cmean);
	}
	return o;
}

/* The UAR a set is judged by: the VPC's mean over speaker folds with folds,
 * else the UAR of all utterances. */
double vpa_anon_cls_uar(const struct vpa_json *set)
{
	const struct vpa_json *f = vpa_json_get(set, "uar_folds");
	return f ? vpa_json_get_num(set, "uar_folds", NAN) : vpa_json_get_num(set, "uar", NAN);
}

/* info.audio.ser = {"model", "protocol", "labels", "original", "anonymised",
 * "uar_orig", "uar_anon", "uar_change"} */
int vpa_anon_ser_run(const char *file, const char *dir, int threads,
		     const struct vpa_anon_ser_opts *s, struct vpa_json *info, struct vpa_err *err)
{
	int kind = !strcmp(s->input_kind, "fbank") ? VPA_CLS_FBANK
		   : !strcmp(s->input_kind, "mfcc") ? VPA_CLS_MFCC
						     : VPA_CLS_WAVE;
	struct vpa_cls_opts o;
	vpa_cls_opts_init(&o, kind);
	o.cmn = s->cmn;
	o.input = s->input;
	o.output = s->output;
	o.threads = threads > 0 ? threads : 1;
	static const char *const own[] = {"cmn", "input", "output", NULL};
	int rc = vpa_target_frontend_strs(file, &s->options, "--num-mel-bins=80", own, &o.feat, err);
	if (rc)
		return rc;
	char *model = s->model ? vpa_path_join(dir, s->model) : NULL;
	char *folds = s->folds ? vpa_path_join(dir, s->folds) : NULL;
	char *labels = vpa_path_join(dir, s->labels);
	char *data[2] = {vpa_path_join(dir, s->data), vpa_path_join(dir, s->data_anon)};
	char *u2l[2] = {s->utt2label ? vpa_path_join(dir, s->utt2label) : NULL,
			s->utt2label_anon ? vpa_path_join(dir, s->utt2label_anon) : NULL};
	struct vpa_cls_run r[2];
	struct vpa_cls_metrics m[2];
	memset(r, 0, sizeof(r));
	memset(m, 0, sizeof(m));
	for (int k = 0; k < 2 && !rc; k++)
		rc = vpa_classify_dir(data[k], model, folds, labels, u2l[k], &o, &r[k], err) ||
		     vpa_cls_metrics(r[k].truth, r[k].pred, r[k].n, r[k].C, &m[k], err);
	if (rc)
		rc = err->status;
	if (!rc) {
		struct vpa_json *j = vpa_json_obj(), *labs = vpa_json_arr();
		vpa_json_set_str(j, "model", s->model ? s->model : s->folds);
		vpa_json_set_str(j, "protocol", s->folds ? "per-speaker folds" : "one model");
		vpa_json_set_str(j, "data", s->data);
		vpa_json_set_str(j, "data_anon", s->data_anon);
		for (size_t c = 0; c < r[0].C; c++)
			vpa_json_push(labs, vpa_json_str(r[0].labels[c]));
		vpa_json_set(j, "labels", labs);
		struct vpa_json *so = vpa_anon_cls_json(&r[0], &m[0]);
		struct vpa_json *sa = vpa_anon_cls_json(&r[1], &m[1]);
		double uo = vpa_anon_cls_uar(so), ua = vpa_anon_cls_uar(sa);
		vpa_json_set(j, "original", so);
		vpa_json_set(j, "anonymised", sa);
		vpa_json_set_num(j, "uar_orig", uo);
		vpa_json_set_num(j, "uar_anon", ua);
		vpa_json_set_num(j, "uar_change", ua - uo);
		vpa_json_set(info, "ser", j);
	}
	for (int k = 0; k < 2; k++) {
		vpa_cls_run_release(&r[k]);
		vpa_cls_metrics_release(&m[k]);
		free(data[k]);
		free(u2l[k]);
	}
	free(model);
	free(folds);
	free(labels);
	return rc;
}
