/*
 * asr/ctc.h - speech recognition with the user's ONNX CTC acoustic model
 * (issue 30 item 1: wav2vec2 / HuBERT / Conformer-CTC exported by
 * torch.onnx, SpeechBrain, NeMo or Hugging Face), greedy decoding, VPC text
 * normalisation, a Kaldi `text` of hypotheses for a data directory.
 * Depends on base/, formats/, audio/ (data directories, features, the WER
 * normaliser) and onnx/ (the engine); sits on embed/'s row.
 *
 *   struct vpa_ctc_opts o;  vpa_ctc_opts_init(&o);
 *   o.model = "w2v.onnx";  o.tokens = "tokens.txt";
 *   struct vpa_err err;  vpa_err_init(&err);
 *   if (vpa_ctc_transcribe_datadir(&o, "data/test", "hyp.txt", &err)) ... err.msg ...
 *
 * Per utterance: its samples (vpa_datadir_load, at o->rate: another rate is
 * an error naming the wav.scp line unless o->resample), then either
 *   waveform input: samples / 32768 (the [-1, 1] scale models are trained on;
 *     o->wave_scale), optionally zero mean and unit variance per utterance
 *     (o->wave_norm, as Hugging Face's Wav2Vec2FeatureExtractor do_normalize:
 *     (x - mean) / sqrt(var + 1e-7), var the population variance), fed as
 *     [1, samples]; or
 *   features input: audio/'s front-end (o->feat, any `vpaudit features`
 *     option), fed as [1, T, F] (o->layout btf) or [1, F, T] (bft);
 * the whole utterance in one pass (no chunking, no truncation), output
 * [1, T, V] or [T, V] float32 (logits or log-probabilities: the argmax is the
 * same), V = the number of tokens.  Greedy CTC decoding: the best token per
 * frame (the lowest index among equal scores, as torch.argmax), repeats
 * collapsed, blanks (o->blank) dropped, the tokens concatenated, every
 * occurrence of the word delimiter (o->delimiter: "|" as wav2vec2's
 * vocabularies, or SentencePiece's "\xe2\x96\x81" U+2581) turned into a word
 * break, then the VPC normalisation of audio/wer.c (o->norm: upper case and
 * punctuation removed but an apostrophe inside a word; "none" keeps the
 * text), words separated by one space.
 *
 * Threads: a vpa_ctc is immutable after vpa_ctc_new; any number of threads
 * may call vpa_ctc_wave at once.  vpa_ctc_transcribe_datadir shares the
 * utterances over o->threads (and MPI ranks): the text does not depend on
 * the count (each utterance is computed alone, in one pass).
 */
#ifndef VPA_ASR_CTC_H
#define VPA_ASR_CTC_H

#include "audio/anon.h"
#include "audio/audio.h"

enum vpa_ctc_input { VPA_CTC_WAVEFORM = 0, VPA_CTC_FEATURES = 1 };
enum vpa_ctc_layout { VPA_CTC_BTF = 0, VPA_CTC_BFT = 1 };

struct vpa_ctc_opts {
	const char *model;        /* ONNX file (borrowed) */
	const char *tokens;       /* tokens file: line k is output index k (borrowed) */
	long blank;               /* index of the CTC blank; 0 */
	const char *delimiter;    /* word delimiter token text; "|" ("" : none) */
	int input;                /* enum vpa_ctc_input; waveform */
	double rate;              /* sample rate the model takes (waveform input); 16000 */
	int resample;             /* 1: audio at another rate is resampled (soxr); 0: an error */
	double wave_scale;        /* waveform multiplier; 1/32768 */
	int wave_norm;            /* 1: zero mean, unit variance per utterance; 0 */
	struct vpa_feat_opts feat; /* features input: the front-end (fbank defaults) */
	int layout;               /* features input: enum vpa_ctc_layout; btf */
	const char *input_name;   /* graph input (borrowed); NULL: the model's only input */
	const char *output_name;  /* value read (borrowed); NULL: the first graph output */
	struct vpa_wer_opts norm; /* text normalisation (upper, punct); VPC's: both on */
	int threads;              /* utterances in parallel; >= 1 */
	int channel;              /* channel of multi-channel files; -1: mono required */
};
/* The defaults above. */
void vpa_ctc_opts_init(struct vpa_ctc_opts *o);
/*
 * Set one option by its command-line name (without "--"; for `vpaudit asr
 * --onnx`): "blank" (index), "delimiter" (a token text, or "sentencepiece"
 * for U+2581, or "none"), "input" (waveform|features), "rate" (Hz),
 * "wave-scale", "wave-norm" and "resample" (true|false), "normalise"
 * (vpc|upper|punct|none), "layout" (btf|bft), "input-name", "output" (value
 * names; borrowed), or any option of audio's front-end (vpa_feat_opts_set:
 * "num-mel-bins", ...; its errors, e.g. "unknown option '--x'").  Errors
 * name the option and what was expected.
 */
int vpa_ctc_opts_set(struct vpa_ctc_opts *o, const char *name, const char *value,
		     struct vpa_err *err);

/* The tokens file: formats/tokens.h (vpa_tokens_read). */
struct vpa_ctc; /* model + tokens + front-end: opaque, immutable, shareable between threads */

/*
 * Load the model and the tokens, build the front-end.  Checks, naming the
 * file: the input (the only graph input unless o->input_name names one; its
 * rank: 2 for waveform, 3 for features), the output (a graph value; when
 * the graph declares its shape: rank 2 or 3 with a leading 1, and a fixed
 * class axis equal to the number of tokens: "M.onnx: output 'logits' has 32
 * classes per frame but T.txt has 30 tokens (line k is output index k)"),
 * the blank index (< tokens), the options' ranges.  Unsupported operators
 * fail here (vpa_onnx_load).  Caller frees with vpa_ctc_free.
 */
int vpa_ctc_new(const struct vpa_ctc_opts *o, struct vpa_ctc **out, struct vpa_err *err);
void vpa_ctc_free(struct vpa_ctc *c); /* NULL-safe */
size_t vpa_ctc_n_tokens(const struct vpa_ctc *c);
/* The loaded model's tokens (vpa_ctc_n_tokens of them), blank index, word
 * delimiter ("" none), tokens file path and text normalisation. */
char *const *vpa_ctc_tokens(const struct vpa_ctc *c);
size_t vpa_ctc_blank(const struct vpa_ctc *c);
const char *vpa_ctc_delimiter(const struct vpa_ctc *c);
const char *vpa_ctc_tokens_path(const struct vpa_ctc *c);
const struct vpa_wer_opts *vpa_ctc_norm(const struct vpa_ctc *c);

/*
 * Greedy CTC decoding of scores x (T, V) row-major: the text as above into
 * *text (caller frees; "" for no word).  tok has V entries.  Pure; the unit
 * of the other functions.
 */
char *vpa_ctc_greedy(const float *x, size_t T, size_t V, char *const *tok, size_t blank,
		     const char *delimiter, const struct vpa_wer_opts *norm);

/*
 * One utterance's samples (at the int16 scale, at o->rate when waveform
 * input) through the model: *scores (caller frees; may be NULL) gets the
 * output (T, V) as computed, *text (may be NULL) the normalised greedy
 * transcript.  Errors (naming id, or the model and node): an output whose
 * shape is not [1, T, V] / [T, V] or whose V is not the number of tokens
 * (one line, naming both), a value that is not finite, an utterance too
 * short for the model or the front-end.
 */
int vpa_ctc_wave(const struct vpa_ctc *c, const char *id, const struct vpa_wave *w,
		 float **scores /* OUT */, size_t *T /* OUT */, char **text /* OUT */,
		 struct vpa_err *err);

/*
 * Every utterance of a Kaldi data directory (or wav.scp) decoded; out_text
 * gets the Kaldi `text` of hypotheses, `UTT WORD WORD ...` (an utterance
 * without a word: `UTT` alone), in the data directory's order, written
 * atomically after every utterance succeeded (on error nothing is written
 * and an existing file is left as it was).  Errors: those of vpa_ctc_new,
 * of the data directory (naming FILE:LINE), of each utterance.
 */
int vpa_ctc_transcribe_datadir(const struct vpa_ctc_opts *o, const char *datadir,
			       const char *out_text, struct vpa_err *err);
/* The same with a loaded model (o gives threads and channel). */
int vpa_ctc_transcribe_datadir_with(const struct vpa_ctc *c, const struct vpa_ctc_opts *o,
				    const char *datadir, const char *out_text,
				    struct vpa_err *err);
/* The sample rate the model's input is computed at: o->rate (waveform input)
 * or the front-end's (features input). */
double vpa_ctc_rate(const struct vpa_ctc *c, const struct vpa_ctc_opts *o);
/*
 * An opened data directory (its rate set and probed by the caller, as
 * cli_audio_open does for `vpaudit asr --onnx`): *texts gets one normalised
 * transcript per utterance (caller frees each and the array), shared over
 * o->threads and MPI ranks as vpa_ctc_transcribe_datadir.
 */
int vpa_ctc_transcribe_dd(const struct vpa_ctc *c, const struct vpa_ctc_opts *o,
			  const struct vpa_datadir *d, char ***texts /* OUT */, struct vpa_err *err);

#endif
