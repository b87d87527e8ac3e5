/*
 * embed/classify.h - utterance classifiers (speech emotion recognition as in
 * the VoicePrivacy Challenge 2024, or any utterance-level classifier) with an
 * ONNX model: one vector of logits per utterance of a data directory, the
 * answer its argmax, scored against a label file (metrics/classify.c).
 * Used by `vpaudit classify` (cli/cmd_classify.c).
 *
 * Inputs the model may take (o.input_kind):
 *   wave   the raw waveform (1, samples), float, samples / 32768 (the scale
 *          torchaudio.load gives, which the VPC's wav2vec2-based SER models
 *          are trained on), at o.feat.sample_frequency (16 kHz default);
 *   fbank / mfcc  audio/'s Kaldi front-end (1, T, F), optional mean removal.
 * The output (o.output, default the first graph output) must be [1, C] or
 * [C], C the number of labels in the label map: anything else is an error
 * naming the model and the shape.
 *
 * The per-speaker folds of the VPC (IEMOCAP: one model per held-out
 * session): a folds file of lines `SPEAKER MODEL.onnx` (a relative MODEL is
 * read next to the folds file); each utterance is classified by the model of
 * its speaker (utt2spk); the VPC then scores each speaker alone and averages
 * (metrics/metrics.h vpa_cls_fold_uar; run.group gives the speakers).
 */
#ifndef VPA_CLASSIFY_H
#define VPA_CLASSIFY_H

#include <stdint.h>

#include "audio/audio.h"

enum vpa_cls_input { VPA_CLS_WAVE = 0, VPA_CLS_FBANK = 1, VPA_CLS_MFCC = 2 };

struct vpa_cls_opts {
	int input_kind;            /* enum vpa_cls_input, wave */
	struct vpa_feat_opts feat; /* the front-end (features) and the rate (all kinds) */
	int cmn;                   /* features: subtract the mean over time (default 0) */
	const char *input;         /* graph input (borrowed); NULL: the model's only input */
	const char *output;        /* value to read (borrowed); NULL: the first graph output */
	int threads;               /* utterances in parallel, >= 1 */
};
void vpa_cls_opts_init(struct vpa_cls_opts *o, int input_kind);

/* The result on one data directory, in data-directory order. */
struct vpa_cls_run {
	size_t n, C;
	char **utt;       /* (n) owned */
	uint32_t *truth;  /* (n) label index of each utterance */
	uint32_t *pred;   /* (n) argmax of the logits (first on a tie) */
	float *logits;    /* (n * C) */
	char **labels;    /* (C) the label map, owned */
	/* with folds: the speaker of each utterance, the VPC's scoring unit */
	size_t n_groups;
	uint32_t *group;  /* (n) index into group_name, or NULL without folds */
	char **group_name; /* (n_groups) speakers in order of first utterance, owned */
};
void vpa_cls_run_release(struct vpa_cls_run *r);

/*
 * Classify every utterance of the data directory `data` with `model` (or,
 * when folds is not NULL, the model of each utterance's speaker), with the
 * label map `labels_path` (one label per line, line k = output k) and the
 * truth `utt2label` (lines `UTT LABEL`; NULL: DATA/utt2emo).  Errors, one
 * line each, nothing in *out: a data-directory utterance with no label
 * ("utt2emo: no label for utterance 'u3' (DATA/wav.scp line 3)"), a label not
 * in the map (FILE:LINE), a duplicate label in the map, an output not [1, C]
 * / [C], C not the label count, a speaker with no fold, a non-finite logit.
 */
int vpa_classify_dir(const char *data, const char *model, const char *folds,
		     const char *labels_path, const char *utt2label, const struct vpa_cls_opts *o,
		     struct vpa_cls_run *out, struct vpa_err *err);

#endif
