/*
 * embed/embed.h - speaker embeddings from audio with an ONNX extractor: the
 * front-end of audio/ (fbank or MFCC, CMVN, VAD) then an ONNX model (onnx/),
 * one vector per utterance.  The one public header of embed/; depends on
 * core/, audio/ and onnx/.  Used by `vpaudit embed` (cli/cmd_embed.c) and by
 * the targets that take a data directory of audio (anonymised_speech, the
 * anonymised-audio target).
 *
 *   struct vpa_embed_opts o;
 *   vpa_embed_opts_init(&o, VPA_FEAT_FBANK);
 *   vpa_embed_opts_set(&o, "num-mel-bins", "80", &err);   // any `vpaudit features` option
 *   vpa_embed_opts_set(&o, "chunk", "200", &err);         // or cmn, layout
 *   o.output = "embedding";                               // NULL: the first graph output
 *   struct vpa_embset es;  vpa_embset_init(&es);
 *   if (vpa_embset_from_audio("data/test", "ecapa.onnx", &o, &es, &err)) ...
 *
 * Per utterance: the front-end's matrix (T, F) (after its CMVN and VAD), then
 * with --chunk C the frames cut into consecutive chunks of C as WeSpeaker's
 * runtime does (SpeakerEngine::ExtractFeature: a last partial chunk is
 * completed with the first frames of the first chunk; an utterance shorter
 * than C is repeated to C frames), each chunk (or, without --chunk, the whole
 * utterance) mean-subtracted when cmn (per chunk, as WeSpeaker's ApplyMean),
 * laid out as (1, T, F) (btf) or (1, F, T) (bft), run, and the chunk outputs
 * averaged with equal weights.  The output value's elements are the
 * embedding (any shape: (1, D), (D), (1, 1, D) ...).
 *
 * Threads: a vpa_embedder is immutable after vpa_embedder_new; any number of
 * threads may call vpa_embedder_utt / vpa_embedder_feats at once.
 */
#ifndef VPA_EMBED_H
#define VPA_EMBED_H

#include "audio/audio.h"
#include "formats/embset.h"

/* AUTO: from the input's declared shape (the axis whose fixed size is the
 * front-end's dimension is the features'), btf when the shape does not tell. */
enum vpa_embed_layout { VPA_EMBED_AUTO = -1, VPA_EMBED_BTF = 0, VPA_EMBED_BFT = 1 };

struct vpa_embed_opts {
	struct vpa_feat_opts feat; /* the front-end (audio/audio.h) */
	int cmn;                   /* 1 (default): subtract the mean of the frames fed to the model */
	int cmn_set;               /* 1: cmn was given (refused with a waveform input) */
	int layout;                /* enum vpa_embed_layout, auto */
	size_t chunk;              /* frames (samples with waveform) per forward pass; 0 (default):
				      the whole utterance */
	/*
	 * 1: the model's front-end is inside the graph (SpeechBrain's Fbank, an
	 * STFT, a Conv1d framing, wav2vec2's feature encoder): the samples are fed
	 * as they are, scaled to [-1, 1) (int16 / 32768, as torchaudio.load and
	 * soundfile read them), as (1, T), (1, 1, T) or (1, T, 1), whichever the
	 * input declares; no front-end, no cmn.  The front-end options still give
	 * the sample rate audio is resampled to (--sample-frequency).
	 */
	int waveform;
	const char *input;         /* graph input (borrowed); NULL: the model's only input */
	const char *output;        /* value to read (borrowed); NULL: the first graph output */
	int threads;               /* utterances in parallel (vpa_embset_from_audio); >= 1 */
	int channel;               /* channel of multi-channel files, -1: mono required */
};
/* Defaults: audio's defaults for `kind`, cmn on, btf, whole utterance, 1 thread, mono. */
void vpa_embed_opts_init(struct vpa_embed_opts *o, int kind);
/*
 * Set one option by its command-line name (without "--"): "cmn" (true|false),
 * "layout" (auto|btf|bft), "chunk" (frames, 0 = whole utterance, else >= 1),
 * "input" (waveform | features | the graph input's name: the two words select
 * what is fed, any other value names the graph input of features, as before),
 * "input-name" (the graph input's name, whatever it is), or
 * any option of audio's table (vpa_feat_opts_set: "num-mel-bins", "vad", ...).
 * Errors as vpa_feat_opts_set ("unknown option '--x'", "--chunk must be ...").
 */
int vpa_embed_opts_set(struct vpa_embed_opts *o, const char *name, const char *value,
		       struct vpa_err *err);

struct vpa_embedder; /* model + front-end: opaque, immutable, shareable between threads */

/*
 * Load the model and build the front-end.  Checks, naming the model file:
 * the input (the only graph input unless o->input names one; rank 3 for
 * features, 2 or 3 with a 1 for a waveform), its feature axis against the
 * front-end's dimension when the graph fixes it ("ecapa.onnx: input 'feats'
 * (1, T, 80) wants 80 features per frame, the front-end gives 40 (fbank
 * --num-mel-bins=40)"), a fixed time axis against o->chunk ("input 'wav'
 * (1, 16000) has a fixed time axis of 16000 samples: use --chunk=16000 ..."),
 * and that o->output is a value of the graph (else the nearest names are
 * suggested).  Unsupported operators fail here (vpa_onnx_load).
 * Caller frees with vpa_embedder_free.
 */
int vpa_embedder_new(const char *model_path, const struct vpa_embed_opts *o,
		     struct vpa_embedder **out, struct vpa_err *err);
void vpa_embedder_free(struct vpa_embedder *e); /* NULL-safe */
/* The front-end (borrowed). */
const struct vpa_feat *vpa_embedder_feat(const struct vpa_embedder *e);

/*
 * The embedding of a feature matrix x (T, F) (T >= 1; F must be the
 * front-end's dimension; with o->waveform the samples, scaled, F = 1): *emb (caller frees) gets *dim floats.  x is not
 * changed.  Errors: the model's (naming the node), a non-finite embedding
 * ("ID: the embedding has a value that is not finite"), an output that is
 * not float32.
 */
int vpa_embedder_feats(const struct vpa_embedder *e, const char *id, const float *x, size_t T,
		       size_t F, float **emb /* OUT */, size_t *dim /* OUT */,
		       struct vpa_err *err);

/*
 * Utterance i of a data directory: audio, front-end, model.  *dim = 0 and
 * *emb = NULL when the front-end gives no frame (shorter than one frame, or
 * no voiced frame with VAD): the caller decides (warn and leave out).  *line
 * (may be NULL) gets the data-directory line a load error blames.
 */
int vpa_embedder_utt(const struct vpa_embedder *e, const struct vpa_datadir *d, size_t i,
		     float **emb /* OUT */, size_t *dim /* OUT */, const char **line /* OUT */,
		     struct vpa_err *err);

/*
 * An embedding set from a Kaldi data directory of audio: one row per
 * utterance (data-directory order), speakers from its utt2spk (required:
 * "DATA: no utt2spk: the speakers of the utterances are needed"), genders
 * from its spk2gender when present, durations from the audio (samples /
 * rate).  Utterances run in parallel on o->threads and, under MPI, over the
 * ranks (vpa_dist_jobs; the set does not depend on the thread or rank count).  An utterance with no frame is an
 * error here ("DATA: utterance 'u3' gives no frame ..."): a set with holes
 * would silently change the trials.  *out must be initialised and empty; on
 * error it is left empty.  Errors name the file and line (list files), the
 * audio file, or the model and node.
 */
int vpa_embset_from_audio(const char *data, const char *model_path,
			  const struct vpa_embed_opts *o, struct vpa_embset *out,
			  struct vpa_err *err);
/* The same with a loaded embedder (to compute several sets with one model). */
int vpa_embset_from_audio_with(const char *data, const struct vpa_embedder *e,
			       const struct vpa_embed_opts *o, struct vpa_embset *out,
			       struct vpa_err *err);

#endif
