/*
 * targets/anon_asr_ctc.h - `asr: {recogniser: onnx}` of the anonymised_speech
 * target on asr/ctc.h.  A file of its own because asr/ctc.h brings
 * audio/anon.h, whose struct vpa_anon_opts (the anonymiser's) and
 * targets/anon.h's (the target's) share a name: targets/anon_asr.c includes
 * this header instead, with plain fields.
 */
#ifndef VPA_TARGETS_ANON_ASR_CTC_H
#define VPA_TARGETS_ANON_ASR_CTC_H

#include "audio/audio.h"

struct vpa_anon_ctc_req {
	const char *model, *tokens; /* paths as given to the run (joined to the scenario's folder) */
	long blank;
	const char *delimiter; /* a token, "sentencepiece" (U+2581) or "none" */
	int features;          /* 0 waveform, 1 features input */
	int bft;               /* features input: 1 [1, F, T], 0 [1, T, F] */
	int wave_norm;
	int threads;
};

struct vpa_anon_ctc; /* a loaded model with its options */

/* Load the model and the tokens (asr/ctc.h's checks): errors name the file. */
int vpa_anon_ctc_open(const struct vpa_anon_ctc_req *r, struct vpa_anon_ctc **out,
		      struct vpa_err *err);
void vpa_anon_ctc_close(struct vpa_anon_ctc *c); /* NULL-safe */
/* The sample rate the model takes. */
double vpa_anon_ctc_rate(const struct vpa_anon_ctc *c);
/*
 * Transcribe every utterance of d (opened; its rate is set here to the model's, any other
 * resampled): *hyps one normalised transcript per utterance (caller frees each and the
 * array).
 */
int vpa_anon_ctc_run(const struct vpa_anon_ctc *c, struct vpa_datadir *d, char ***hyps,
		     struct vpa_err *err);

#endif
