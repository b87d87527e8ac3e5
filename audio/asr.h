/*
 * audio/asr.h - the embedded speech recogniser (issue 30): CMU PocketSphinx
 * (Debian libpocketsphinx 0.8+5prealpha, model pocketsphinx-en-us) through
 * its C API, one hypothesis per utterance of a data directory.
 *
 * Each utterance is decoded whole on exactly its samples (int16, 16 kHz): one
 * ps_start_utt / ps_process_raw(full_utt) / ps_end_utt, no voice-activity
 * splitting into several utterances, which is what `pocketsphinx_batch
 * -adcin yes` does for one control-file entry.  An utterance's decode does not
 * depend on the ones before it: the model's feat.params asks for batch CMN
 * (the mean of the utterance itself); a model with live CMN (which carries the
 * mean over from one utterance to the next) gets its initial CMN vector put
 * back before every utterance.  So the hypotheses are the same for any order
 * and any thread count (one decoder per worker).
 */
#ifndef VPA_ASR_H
#define VPA_ASR_H

#include "audio/audio.h"

/* The rate the recogniser takes (the acoustic model's -samprate). */
#define VPA_ASR_RATE 16000.0

/* Debian's pocketsphinx-en-us folder: en-us/ (acoustic model), en-us.lm.bin,
   cmudict-en-us.dict. */
#define VPA_ASR_PS_MODEL_DIR "/usr/share/pocketsphinx/model/en-us"

struct vpa_asr_ps; /* n decoders of one model; each used by one thread at a time */

/*
 * Load the model of dir (NULL: VPA_ASR_PS_MODEL_DIR) into n decoders (n >= 1).
 * The files are checked first (PocketSphinx ends the process on some of its
 * own load errors): "MODEL DIR: cannot read 'en-us/mdef': No such file or
 * directory".  PocketSphinx's log goes nowhere.
 */
int vpa_asr_ps_new(const char *dir, size_t n, struct vpa_asr_ps **out, struct vpa_err *err);
void vpa_asr_ps_free(struct vpa_asr_ps *a); /* NULL-safe */
/* The files of the model folder dir (NULL: the default) exist, are readable and not empty
   (what vpa_asr_ps_new checks first; errors as its). */
int vpa_asr_ps_check(const char *dir, struct vpa_err *err);
/* The same with the model's -cmn overridden ("live" or "batch"; NULL: the model's), for
   tests/unit/test_asr.c's check that live CMN is put back before every utterance. */
int vpa_asr_ps_new_cmn(const char *dir, size_t n, const char *cmn, struct vpa_asr_ps **out,
		       struct vpa_err *err);

/*
 * Decoder k decodes the samples of w (at VPA_ASR_RATE; rounded to int16 and
 * clipped to its range, which 16-bit files never need): *hyp gets the words
 * separated by single blanks ("" when none), owned by the caller.
 * name is for messages.
 */
int vpa_asr_ps_decode(struct vpa_asr_ps *a, size_t k, const struct vpa_wave *w, const char *name,
		      char **hyp, struct vpa_err *err);

/* "PocketSphinx 5prealpha (Debian 0.8+5prealpha)" (static). */
const char *vpa_asr_ps_version(void);
/* The model as files: "DIR/en-us, DIR/en-us.lm.bin, DIR/cmudict-en-us.dict" (owned by a). */
const char *vpa_asr_ps_model(const struct vpa_asr_ps *a);

/*
 * Every utterance of d (which gives them at VPA_ASR_RATE: vpa_datadir_set_rate)
 * decoded by threads workers; hyps (n_utt) get the hypotheses in d's order,
 * the same for any thread count.  On error *line (may be NULL) as
 * vpa_datadir_load's.  dir as for vpa_asr_ps_new.  *about (may be NULL) gets
 * the model string (caller frees).
 */
int vpa_asr_ps_datadir(const struct vpa_datadir *d, const char *dir, int threads, char ***hyps,
		       char **about, const char **line, struct vpa_err *err);

/*
 * WER of Kaldi texts in memory as audio/wer.c scores them (vpa_wer_text_opts), norm
 * vpc|upper|punct|none, strict as compute-wer --mode=strict (audio/asr_wer.c).
 */
struct vpa_asr_wer {
	double wer; /* percent */
	size_t ref_words, ins, del, sub, n_utt;
	size_t n_absent; /* reference utterances without a hypothesis (scored as deletions) */
};
int vpa_asr_wer_text(const char *ref_name, const char *ref, size_t ref_len, const char *hyp_name,
		     const char *hyp, size_t hyp_len, const char *norm, int strict,
		     struct vpa_asr_wer *out, struct vpa_err *err);

#endif
