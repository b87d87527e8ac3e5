/*
 * audio/anon.h - signal-level anonymisers and utility measures of issue 17:
 * the McAdams-coefficient anonymiser (VoicePrivacy B2), a frequency-warping
 * anonymiser, a TD-PSOLA pitch-shifting anonymiser, a pitch tracker with
 * rho_F0, WER of Kaldi `text` files, and the synthetic multi-speaker corpus.
 * Part of audio/ (depends on audio.h and core/ only).
 *
 * Units and scales as audio/audio.h: samples are float at the int16 scale
 * (16-bit PCM values are exact integers), rates in Hz, lengths in ms.
 *
 * Errors: every fallible call returns 0 or a negative enum vpa_status and
 * fills err with one line ("FILE:LINE: ..." for list files, "ID: ..." for an
 * utterance).
 *
 * Threads: every function here is reentrant (no global state, scratch per
 * call): any number of threads may call them at once.
 */
#ifndef VPA_AUDIO_ANON_H
#define VPA_AUDIO_ANON_H

#include <stdint.h>

#include "audio/audio.h"
#include "base/base.h"

/* ------------------------------------------------------------ McAdams */

/*
 * The McAdams-coefficient anonymiser, `anonym_v2` of the VoicePrivacy
 * Challenge 2022/2024 baseline B2 (Patino, Tomashenko, Todisco, Nautsch,
 * Evans, "Speaker anonymisation using the McAdams coefficient", Interspeech
 * 2021):
 *   s = x / 32768 + FLT_EPSILON (float32, as librosa.load + eps);
 *   winlen = floor(win_ms * rate / 1000), shift = floor(shift_ms * rate / 1000);
 *   w = sqrt(hann / K), hann = NumPy's symmetric np.hanning(winlen),
 *   K = sum(hann) / shift;
 *   frames t = 0 .. 1 + (n - winlen) / shift - 1 (librosa.util.frame: only
 *   complete frames), f = s[t*shift ..] * w;
 *   A(z) = LPC of order lp_order of f + FLT_EPSILON by Burg's method, exactly
 *   as librosa.lpc (>= 0.7);
 *   poles of 1/A(z) (companion-matrix eigenvalues, LAPACK dgeev, as np.roots);
 *   every non-real pole r e^{i phi} -> r e^{i sign(phi) |phi|^alpha};
 *   A'(z) = real(poly(new poles)); e = A(z) f; g = (1/A'(z)) e; g *= w;
 *   overlap-add at t*shift into an n-sample zero signal;
 *   y = trunc(y / max|y| * 32766) (NumPy's astype(int16)).
 * So *y holds integers in [-32766, 32766] (what the WAV file gets).
 */
struct vpa_mcadams_opts {
	double alpha;    /* McAdams coefficient, (0, 2]; 0.8 (VPC B2 default) */
	double win_ms;   /* 20 */
	double shift_ms; /* 10 */
	int lp_order;    /* 20 */
};
void vpa_mcadams_opts_init(struct vpa_mcadams_opts *o);

/*
 * Anonymise n samples x at `rate`.  *y (OUT) gets n samples, caller frees
 * with free().  Errors (VPA_EINPUT): options out of range ("alpha must be in
 * (0, 2], got 3"), a signal shorter than one frame ("signal of 100 samples
 * is shorter than one 320-sample frame"), lp_order >= winlen, an all-zero
 * output (nothing to normalise).  VPA_ENUMERIC when an eigenvalue
 * computation fails to converge.
 */
int vpa_mcadams(const float *x, size_t n, double rate, const struct vpa_mcadams_opts *o,
		float **y /* OUT, n samples, caller frees */, struct vpa_err *err);

/* ------------------------------------------------- frequency warping */

/*
 * VTLN-style bilinear frequency warping (the VoiceMask approach: Qian et al.,
 * "VoiceMask: anonymize and sanitize voice input on mobile devices", 2017;
 * COMPRISE D2.3 section 2.2).  The all-pass warping function
 *   omega' = omega + 2 atan( alpha sin(omega) / (1 - alpha cos(omega)) )
 * moves spectral content at normalised angular frequency omega to omega'
 * (alpha > 0 raises frequencies, alpha < 0 lowers them; alpha = 0 is the
 * identity).  Short-time Fourier analysis/synthesis: frames of win_ms every
 * shift_ms, the magnitude spectrum resampled along the warped axis
 * (|Y(omega')| = |X(omega)|, linear interpolation), the phase kept from the
 * frame at the target bin, weighted overlap-add normalised by the summed
 * squared window (so alpha = 0 returns x up to float rounding).  Output at
 * the input scale (not normalised), n samples.
 */
struct vpa_warp_opts {
	double alpha;    /* (-1, 1); 0 identity */
	double win_ms;   /* 32 */
	double shift_ms; /* 8 */
};
void vpa_warp_opts_init(struct vpa_warp_opts *o);
/* The warping function omega -> omega' above (radians in [0, pi]). */
double vpa_warp_freq(double omega, double alpha);
int vpa_warp(const float *x, size_t n, double rate, const struct vpa_warp_opts *o,
	     float **y /* OUT, n samples, caller frees */, struct vpa_err *err);

/* ---------------------------------------------------------- pitch */

/*
 * YIN pitch tracker (de Cheveigne and Kawahara, "YIN, a fundamental frequency
 * estimator for speech and music", JASA 111(4), 2002): steps 1-5 (difference
 * function, cumulative mean normalised difference d', absolute threshold,
 * parabolic interpolation of d'; step 6 not applied).  Frame t spans samples
 * t*shift .. t*shift + W + tau_max (W = win_ms samples integrated, tau_max =
 * floor(rate / min_f0)), so its centre is t*shift + (W + tau_max + 1)/2;
 * frames = 1 + (n - W - tau_max - 1) / shift (0 when shorter).
 * voiced[t] = 1 when d' at the chosen lag is below `threshold` and the frame
 * energy is above `silence_db` dB below the loudest frame, else 0 and
 * f0[t] = 0.
 */
struct vpa_pitch_opts {
	double min_f0, max_f0; /* Hz: 60, 400 */
	double win_ms;         /* integration window W, at least one period of min_f0: 40 */
	double shift_ms;       /* 10 */
	double threshold;      /* YIN absolute threshold: 0.15 */
	double silence_db;     /* 40 */
};
void vpa_pitch_opts_init(struct vpa_pitch_opts *o);
struct vpa_pitch {
	size_t n;               /* frames */
	float *f0;              /* (n) Hz, 0 when unvoiced; owned */
	unsigned char *voiced;  /* (n) 0/1; owned */
};
void vpa_pitch_init(struct vpa_pitch *p);
void vpa_pitch_release(struct vpa_pitch *p);
int vpa_pitch_track(const float *x, size_t n, double rate, const struct vpa_pitch_opts *o,
		    struct vpa_pitch *out /* OUT, release with vpa_pitch_release */,
		    struct vpa_err *err);

/*
 * rho_F0 (VoicePrivacy 2022 evaluation plan, section on utility): the
 * Pearson correlation of the F0 of the original (a) and anonymised (b)
 * utterance on the frames voiced in both (the first min(a->n, b->n) frames).
 * *n_common (may be NULL) gets that frame count.  Errors (VPA_EINPUT): fewer
 * than 2 common voiced frames, or a constant F0 on them (correlation
 * undefined): "rho_F0 undefined: 1 frame voiced in both".
 */
int vpa_rho_f0(const struct vpa_pitch *a, const struct vpa_pitch *b, double *rho /* OUT */,
	       size_t *n_common /* OUT */, struct vpa_err *err);

/* ------------------------------------------------------ pitch shifting */

/*
 * Pitch shifting that keeps duration and formants (issue 17 item 2: the F0
 * transformation of COMPRISE D2.3 section 4.2.4 as a signal anonymiser), by
 * TD-PSOLA (Moulines and Charpentier, "Pitch-synchronous waveform processing
 * techniques for text-to-speech synthesis using diphones", Speech
 * Communication 9(5-6), 1990).
 *
 * F0 mapping (COMPRISE D2.3 eq. 3, Gaussian normalisation of log F0, applied
 * to the utterance): F0 by vpa_pitch_track with o->pitch; mu, sigma = mean
 * and population standard deviation of ln F0 over the voiced frames;
 *   ln F0' = (ln F0 - mu) / sigma * sigma' + mu',
 *   mu' = mu + semitones * ln(2) / 12,  sigma' = sigma_ratio * sigma,
 * i.e. per voiced frame the factor beta = F0'/F0 =
 *   exp((ln F0 - mu) (sigma_ratio - 1) + semitones ln(2) / 12)
 * (written without the division, so a constant F0 (sigma = 0) is allowed),
 * F0 * beta limited to [min_f0 / 4, min(4 max_f0, rate / 4)] of o->pitch.
 * Frame of a sample i: the frame whose centre (YIN section above) is nearest.
 * Voicing of the marks: frame t counts as voiced with the F0 and beta of
 * the nearest voiced frame within `dilate` frames (t itself first, then
 * t - 1, t + 1, t - 2, ...), else unvoiced (a YIN frame spans W + tau_max
 * samples, 57 ms by default, so its decision is about more than its 10 ms
 * slot: without the dilation the first and last 10-20 ms of every voiced
 * stretch kept the original pitch, and on espeak-ng speech shifted by +4
 * semitones the output had 44% as many voiced frames as the input, 89% with
 * 2 frames (both with the earlier largest-peak marks; audio/README.md has
 * the figures with the marks below)).  The statistics mu, sigma use the
 * tracker's voiced frames only.
 *
 * Analysis marks a_0 = 0 < a_1 < ... < a_{K-1} = n - 1, placed left to right
 * from mark m (voicing and F0 of frames as just said): if m's frame is
 * unvoiced, c = m + U (U = round(unvoiced_ms * rate / 1000), the
 * pseudo-period); if c < n - 1 and c's frame is voiced (voicing starts), the
 * next mark is the sample of largest |x| in [m + floor(U/2), m + floor(U/2) +
 * P) (P = round(rate / F0 of c's frame)), else c.  If m's frame is voiced
 * (P = rate / its F0): when m was not placed by a voiced rule (the signal
 * starts voiced), the largest |x| in [m + round(P/2), m + round(1.5 P)); else
 * m + the lag in [ceil(0.8 P), floor(1.2 P)] with the largest
 *   sum_{|j| <= h} x[m+j] x[m+lag+j] / sqrt(sum_{|j| <= h} x[m+lag+j]^2),
 * h = round(P/2) (samples outside the signal 0, an all-zero segment scores
 * 0): one period on, at the same phase of the waveform.  (Taking the largest
 * peak instead let the marks jump between two peaks of similar height, up to
 * 10% of the period on espeak-ng voices, and the output had period doubling.)
 * Searches stop at n - 1, a mark beyond it becomes n - 1, ties go to the
 * earliest sample.  Mark k has beta_k = beta of its frame when it is voiced,
 * else 1 (unvoiced stretches keep their time scale: period U).
 *
 * Grains: grain k is x around a_k under a two-period Hann window, asymmetric
 * when the periods differ: w(d) = (1 + cos(pi d / L))/2 for -L < d <= 0 with
 * L = a_k - a_{k-1}, and (1 + cos(pi d / R))/2 for 0 <= d < R with R =
 * a_{k+1} - a_k (the first grain has no left half, the last no right half).
 * These windows sum to 1 on every sample, so placing every grain at its own
 * mark gives back x exactly.
 *
 * Synthesis marks: t_0 = 0; t_{j+1} = t_j + (a_{q+1} - a_q) / beta_k where
 * a_q <= t_j < a_{q+1} (the analysis period there) and k is the analysis
 * mark nearest t_j (ties to the earlier), while t_j <= n - 1 (real numbers;
 * a grain goes to round(t_j)).  Grain k is added at round(t_j), samples
 * outside [0, n) dropped; the last grain is also added at n - 1 when the last
 * synthesis mark fell short of it (the end stays covered).  No other
 * normalisation (standard TD-PSOLA: a lowered pitch leaves gaps between the
 * grains, a raised one overlaps them).
 *
 * So: n samples out (duration kept), semitones = 0 and sigma_ratio = 1 give x
 * back up to float rounding (beta = 1: t_j = a_j), an utterance with no voiced
 * frame is returned unchanged.  Output at the input scale, not normalised
 * (may exceed the int16 range when the pitch is raised: the data-directory
 * driver scales down only what would clip, as for warping).
 */
struct vpa_pshift_opts {
	double semitones;   /* shift of the mean log F0, [-24, 24]; 0 */
	double sigma_ratio; /* sigma' / sigma of log F0, [0, 4]; 1 */
	double unvoiced_ms; /* pseudo-period of unvoiced stretches, [1, 50]; 10 */
	int dilate;         /* voicing dilation of the marks, frames, [0, 10]; 2 */
	struct vpa_pitch_opts pitch; /* the F0 tracker's options (vpa_pitch_opts_init) */
};
void vpa_pshift_opts_init(struct vpa_pshift_opts *o);
/*
 * Errors (VPA_EINPUT): options out of range ("semitones must be in [-24, 24],
 * got 30"), a signal shorter than one pitch-tracker frame ("signal of 100
 * samples is shorter than the pitch tracker's frame of 907 samples"), the
 * tracker's option errors; VPA_ENUMERIC for a non-finite output sample.
 */
int vpa_pshift(const float *x, size_t n, double rate, const struct vpa_pshift_opts *o,
	       float **y /* OUT, n samples, caller frees */, struct vpa_err *err);
/*
 * The same with a given F0 track instead of vpa_pitch_track's (what
 * vpa_pshift does after tracking; the golden test feeds its generator's
 * track): p must have the frame count the tracker gives for n samples under
 * o->pitch ("pitch track of 12 frames for a signal of 13 frames"), and a
 * positive finite F0 on every voiced frame.
 */
int vpa_pshift_track(const float *x, size_t n, double rate, const struct vpa_pshift_opts *o,
		     const struct vpa_pitch *p, float **y /* OUT, n samples, caller frees */,
		     struct vpa_err *err);

/* ------------------------------------------------ data directories */

enum vpa_anon_kind { VPA_ANON_MCADAMS = 0, VPA_ANON_WARP = 1, VPA_ANON_PITCH = 2 };
enum vpa_anon_level {
	VPA_ANON_FIXED = 0,     /* the coefficient of the options for every utterance */
	VPA_SIGANON_SPEAKER = 1,   /* one coefficient per speaker drawn from [lo, hi) */
	VPA_SIGANON_UTTERANCE = 2, /* one per utterance */
};
struct vpa_anon_opts {
	int kind;                        /* enum vpa_anon_kind */
	struct vpa_mcadams_opts mcadams; /* used when kind = MCADAMS (alpha overridden by the draw) */
	struct vpa_warp_opts warp;       /* used when kind = WARP (alpha overridden by the draw) */
	struct vpa_pshift_opts pshift;   /* used when kind = PITCH (semitones overridden by the draw) */
	int level;                       /* enum vpa_anon_level */
	int channel;                     /* channel of multi-channel recordings (0-based), -1: mono required */
	double lo, hi;                   /* the coefficient range for SPEAKER/UTTERANCE */
	uint64_t seed;                   /* the draw: vpa_rng_split(seed, speaker or utterance id) */
	/* optional: the stream name of an utterance's draw instead of its speaker or
	 * utterance id (the informed attacker of targets/anon_audio.c draws an
	 * enrolment utterance's coefficient from a trial utterance's stream); NULL
	 * = the id.  Must be safe to call from several threads. */
	const char *(*stream)(void *ctx, const char *utt, const char *spk);
	void *stream_ctx;
};
void vpa_anon_opts_init(struct vpa_anon_opts *o, int kind);

/*
 * Anonymise every utterance of the Kaldi data directory in_dir into out_dir:
 * out_dir/wav/UTT.wav (16-bit PCM at the input rate), out_dir/wav.scp
 * (`UTT out_dir/wav/UTT.wav`, absolute path when out_dir is absolute),
 * copies of utt2spk, spk2utt, spk2gender, text, utt2dur, enrolls, trials*
 * (when present), and `anon_coeffs` (`UTT COEFFICIENT`, the value used:
 * alpha for MCADAMS and WARP, the semitone shift for PITCH).
 * A segments file in in_dir gives one output file per segment (no segments
 * file written).  Utterances are shared over `threads` and, under MPI, over
 * the ranks (vpa_dist_jobs: the samples travel and every rank writes the
 * whole out_dir, so out_dir must be a folder of the rank's own, e.g. under
 * /tmp); the output is byte-identical for any thread or rank count (the draw
 * is per speaker/utterance id, not per order).  All or nothing: written under out_dir.tmp.PID and renamed
 * into place; out_dir must not exist ("OUT: already exists").  Level SPEAKER
 * needs utt2spk.  Errors name the data-directory line or the utterance.
 */
int vpa_anonymise_datadir(const char *in_dir, const char *out_dir, const struct vpa_anon_opts *o,
			  int threads, struct vpa_err *err);

/* ------------------------------------------------------------ WER */

/*
 * Word error rate as Kaldi compute-wer (and sclite): per utterance a
 * word-level Levenshtein alignment (unit costs) of hypothesis against
 * reference; ins + del + sub summed over utterances; wer = 100 * (ins + del +
 * sub) / ref_words.  Ties between alignments of equal cost are broken as
 * compute-wer's LevenshteinAlignment (counts are what matter; the total is
 * the edit distance in any case).
 */
struct vpa_wer {
	size_t ref_words, ins, del, sub, n_utt;
	size_t n_utt_err; /* utterances with at least one error (compute-wer's %SER) */
	size_t n_absent;  /* reference utterances without a hypothesis (scored as all deletions) */
	double wer;       /* percent; never NaN: ref_words = 0 is an error */
};
/* Alignment of two word sequences: adds to out's ins/del/sub/ref_words. */
void vpa_wer_align(const char *const *ref, size_t nr, const char *const *hyp, size_t nh,
		   struct vpa_wer *out);
/*
 * REF and HYP are Kaldi `text` files (`UTT word word ...`, an utterance may
 * have no words).  Every reference utterance must be in HYP ("HYP: utterance
 * 'u3' of REF:3 has no hypothesis") and HYP must name no unknown utterance;
 * duplicate ids are errors naming both lines.
 */
int vpa_wer_files(const char *ref_path, const char *hyp_path, struct vpa_wer *out,
		  struct vpa_err *err);
/* The same on memory (the fuzz target's entry point); names are for messages. */
int vpa_wer_text(const char *ref_name, const char *ref, size_t ref_len, const char *hyp_name,
		 const char *hyp, size_t hyp_len, struct vpa_wer *out, struct vpa_err *err);
/*
 * WER as the VoicePrivacy Challenge scores it.  Normalisation of both files'
 * words before the alignment (the utterance ids are kept as written): upper:
 * ASCII a-z to A-Z; punct: every ASCII punctuation character becomes a word
 * break, except an apostrophe between two letters or digits ("DON'T").  Not
 * strict: a reference utterance missing from HYP is scored against no words
 * (its words count as deletions; n_absent counts it), as compute-wer
 * --mode=all; the caller warns ("N not present in hyp").  strict: that is an
 * error, as above.  vpa_wer_files / vpa_wer_text are these with opts NULL:
 * no normalisation, strict (compute-wer's default mode).
 */
struct vpa_wer_opts {
	int upper, punct, strict;
};
/* upper and punct on, not strict. */
void vpa_wer_opts_init(struct vpa_wer_opts *o);
/* "vpc" (upper and punct), "upper", "punct" or "none" into o; -1 for another name. */
int vpa_wer_norm_parse(const char *name, struct vpa_wer_opts *o);
/* That normalisation of a string of words in place (same length; the
 * ONNX CTC recogniser's output, asr/ctc.c). */
void vpa_wer_normalise(char *s, const struct vpa_wer_opts *o);
int vpa_wer_files_opts(const char *ref_path, const char *hyp_path, const struct vpa_wer_opts *o,
		       struct vpa_wer *out, struct vpa_err *err);
int vpa_wer_text_opts(const char *ref_name, const char *ref, size_t ref_len,
		      const char *hyp_name, const char *hyp, size_t hyp_len,
		      const struct vpa_wer_opts *o, struct vpa_wer *out, struct vpa_err *err);
/*
 * A Kaldi `text` file read for its words (the transcripts a CTC aligner
 * spells, asr/ctc_align.h): parsed as WER's reader does (blank lines
 * skipped, CRLF accepted, duplicate ids an error naming both lines, "no
 * utterances" for an empty file), the words normalised by norm (NULL: as
 * written).  Utterances in file order.
 */
struct vpa_kaldi_text;
int vpa_kaldi_text_read(const char *path, const struct vpa_wer_opts *norm,
			struct vpa_kaldi_text **out, struct vpa_err *err);
size_t vpa_kaldi_text_find(const struct vpa_kaldi_text *t, const char *id); /* SIZE_MAX: none */
size_t vpa_kaldi_text_words(const struct vpa_kaldi_text *t, size_t i, char *const **w);
long vpa_kaldi_text_line(const struct vpa_kaldi_text *t, size_t i);
void vpa_kaldi_text_free(struct vpa_kaldi_text *t); /* NULL-safe */

/* -------------------------------------------------- synthetic corpus */

/*
 * A synthetic multi-speaker corpus (issue 17 item 6), made at run time from
 * espeak-ng (voices x variants, pitch and rate per speaker) and flite (its
 * voices), sentences from the Brown corpus.  Synthesisers run by fork/exec
 * (never a shell), in parallel over threads; output resampled to 16 kHz
 * 16-bit WAV.  Deterministic per seed for any thread count.  out_dir gets
 * SYNTHETIC (the note), and Kaldi data directories train/, enrol/, trials/
 * (wav.scp, utt2spk, spk2utt, spk2gender, text, utt2dur; enrol/enrolls;
 * trials/trials, trials_f, trials_m).  All or nothing (out_dir.tmp.PID
 * renamed into place; out_dir must not exist).
 */
struct vpa_synth_opts {
	int speakers;       /* >= 6 (both genders); 60 */
	int utts;           /* utterances per speaker, >= 3; 8 */
	uint64_t seed;      /* 1 */
	const char *brown;  /* Brown corpus folder; "data/brown" */
	double rate;        /* output rate: 16000 */
};
void vpa_synth_opts_init(struct vpa_synth_opts *o);
int vpa_synth_corpus(const struct vpa_synth_opts *o, const char *out_dir, int threads,
		     struct vpa_err *err);

#endif
