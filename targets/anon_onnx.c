/*
 * targets/anon_onnx.c - the ONNX speaker extractor of `anonymised_speech`
 * (`import.extractor`, `audio.onnx`, `audio.onnx_anon`): its keys and its
 * loading (model checks, operators, the input against the front-end, as
 * `vpaudit embed`).  Below the kind (anon_speech.c), the import build
 * (anon_import.c) and the audio build (anon_audio.c), which all call it.
 */
#include "targets/anon.h"
#include "embed/embed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INF INFINITY
/* The ONNX extractor of `import.extractor` (embed/embed.h, as `vpaudit embed`). */
static const struct vpa_key extractor_keys[] = {
	{"model", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "ecapa.onnx",
	 "the ONNX model (external data files next to it); an unsupported operator is "
	 "reported by `vpaudit validate`",
	 VPA_AT(struct vpa_anon_onnx_opts, model), VPA_MARK(struct vpa_anon_onnx_opts, model_at)},
	{"features", VPA_K_ENUM, 0, "fbank", -INF, INF, 0, "fbank|mfcc", NULL, "fbank",
	 "the front-end's features (Kaldi's compute-fbank-feats / compute-mfcc-feats)",
	 VPA_AT(struct vpa_anon_onnx_opts, features), VPA_MARK(struct vpa_anon_onnx_opts, features_at)},
	{"options", VPA_K_LIST, 0, NULL, -INF, INF, 0, NULL, NULL,
	 "[--num-mel-bins=80, --frame-shift=10]",
	 "front-end options as on the command line of `vpaudit features` (Kaldi's names, "
	 "`--name=value`, CMVN and `--vad` included)",
	 VPA_AT(struct vpa_anon_onnx_opts, options), VPA_MARK(struct vpa_anon_onnx_opts, options_at)},
	{"cmn", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "true",
	 "subtract the mean of the frames fed to the model (per chunk with `chunk`; features "
	 "only: refused when written with `input: waveform`)",
	 VPA_AT(struct vpa_anon_onnx_opts, cmn), VPA_MARK(struct vpa_anon_onnx_opts, cmn_at)},
	{"chunk", VPA_K_INT, 0, "0", 0, 100000000, 0, NULL, NULL, "198",
	 "frames (samples with `input: waveform`) per forward pass, chunk embeddings averaged "
	 "as WeSpeaker's runtime (0: the whole utterance); a model without a dynamic time "
	 "axis needs its length here (the error names it)",
	 VPA_AT(struct vpa_anon_onnx_opts, chunk), VPA_MARK(struct vpa_anon_onnx_opts, chunk_at)},
	{"layout", VPA_K_ENUM, 0, "auto", -INF, INF, 0, "auto|btf|bft", NULL, "btf",
	 "the model input (batch, time, features) or (batch, features, time); auto: the axis "
	 "the model's declared shape fixes at the front-end's dimension, btf when it does not "
	 "tell",
	 VPA_AT(struct vpa_anon_onnx_opts, layout), VPA_MARK(struct vpa_anon_onnx_opts, layout_at)},
	{"input", VPA_K_STR, 0, NULL, -INF, INF, 0, NULL, NULL, "waveform",
	 "what the model is fed: `features` (default: the front-end's frames) or `waveform` "
	 "(the samples scaled to [-1, 1), for a model whose front-end is inside the graph: "
	 "SpeechBrain's Fbank, an opset-17 STFT, a Conv1d framing; `options` then only set the "
	 "sample rate); any other value names the graph input of the features",
	 VPA_AT(struct vpa_anon_onnx_opts, input), VPA_MARK(struct vpa_anon_onnx_opts, input_at)},
	{"input_name", VPA_K_STR, 0, NULL, -INF, INF, 0, NULL, NULL, "wav",
	 "the graph input fed (default: the only one)",
	 VPA_AT(struct vpa_anon_onnx_opts, input_name),
	 VPA_MARK(struct vpa_anon_onnx_opts, input_name_at)},
	{"output", VPA_K_STR, 0, NULL, -INF, INF, 0, NULL, NULL, "embedding",
	 "the value read as the embedding: a graph output or any intermediate value "
	 "(default: the first graph output)",
	 VPA_AT(struct vpa_anon_onnx_opts, output), VPA_MARK(struct vpa_anon_onnx_opts, output_at)},
	{NULL},
};
const struct vpa_schema vpa_anon_onnx_schema = {"extractor", extractor_keys, sizeof(struct vpa_anon_onnx_opts)};

/*
 * The extractor's options from its mapping (strings borrowed from the
 * options).  Errors blame the offending item: "S.yaml:12:20: unknown option
 * '--num-bins'".
 */
static int extractor_opts(const char *file, const struct vpa_anon_onnx_opts *ex, int threads,
			  struct vpa_embed_opts *o, struct vpa_err *err)
{
	vpa_embed_opts_init(o, !strcmp(ex->features, "mfcc") ? VPA_FEAT_MFCC : VPA_FEAT_FBANK);
	o->cmn = ex->cmn;
	o->cmn_set = ex->cmn_at.line != 0;
	o->chunk = (size_t)ex->chunk;
	o->layout = !strcmp(ex->layout, "bft")   ? VPA_EMBED_BFT
		    : !strcmp(ex->layout, "btf") ? VPA_EMBED_BTF
						 : VPA_EMBED_AUTO;
	/* input: waveform | features | a graph input's name (embed.h) */
	o->input = NULL;
	o->waveform = ex->input && !strcmp(ex->input, "waveform");
	if (ex->input && strcmp(ex->input, "waveform") && strcmp(ex->input, "features"))
		o->input = ex->input;
	if (ex->input_name)
		o->input = ex->input_name;
	o->output = ex->output;
	o->threads = threads > 0 ? threads : 1;
	static const char *const own[] = {"cmn", "chunk", "layout", "features", "input",
					  "output", NULL};
	return vpa_target_frontend_strs(file, &ex->options, "--num-mel-bins=80", own, &o->feat,
					err);
}

int vpa_anon_onnx_new(const char *file, const char *dir, const struct vpa_anon_onnx_opts *ex,
		      int threads, struct vpa_embed_opts *o, struct vpa_embedder **out,
		      struct vpa_err *err)
{
	*out = NULL;
	int rc = extractor_opts(file, ex, threads, o, err);
	if (rc)
		return rc;
	char *p = vpa_path_join(dir, ex->model);
	struct vpa_err e2;
	vpa_err_init(&e2);
	rc = vpa_embedder_new(p, o, out, &e2);
	free(p);
	if (rc) {
		struct vpa_loc loc = vpa_mark_loc(file, ex->model_at);
		return vpa_fail(err, e2.status, &loc, "%s", e2.msg);
	}
	return 0;
}

int vpa_anon_onnx_rate(const char *file, const struct vpa_anon_onnx_opts *ex, double *rate,
		       struct vpa_err *err)
{
	struct vpa_embed_opts o;
	int rc = extractor_opts(file, ex, 1, &o, err);
	*rate = rc ? 0 : o.feat.sample_frequency;
	return rc;
}
