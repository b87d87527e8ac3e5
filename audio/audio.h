/*
 * audio/audio.h - the signal front-end: audio files, Kaldi data directories,
 * Kaldi-compatible features (fbank, MFCC), energy VAD and CMVN.  The one
 * public header of audio/; depends on core/ only.
 *
 * Units and scales.  Samples are float at the int16 scale as Kaldi reads a
 * 16-bit file (full scale = 32768): 16-bit PCM values are exact integers;
 * 8/24/32-bit PCM and float files are scaled to the same range.  Times are
 * seconds, frequencies Hz, frame lengths and shifts milliseconds (Kaldi's
 * option units).  Feature matrices are row-major float (n_frames, dim).
 *
 * Errors.  Every fallible call returns 0 or a negative enum vpa_status and
 * fills `err` with one line: "FILE: ..." for audio files, "FILE:LINE: ..."
 * for list files (wav.scp, segments, utt2spk, ...).  List errors also keep
 * the offending line in the data directory (vpa_datadir.bad_line) so that a
 * caller can echo it under the message.
 *
 * Threads.  A vpa_feat (the pipeline) is immutable after vpa_feat_new: any
 * number of threads may call vpa_feat_compute / vpa_feat_apply on one object
 * at once (each call uses its own scratch).  A vpa_datadir is read-only after
 * vpa_datadir_open: vpa_datadir_load may run in parallel over utterances.
 *
 * Typical use (what `vpaudit features` does; see cli/cmd_features.c):
 *
 *   struct vpa_feat_opts o;  vpa_feat_opts_init(&o, VPA_FEAT_FBANK);
 *   vpa_feat_opts_set(&o, "num-mel-bins", "80", &err);
 *   struct vpa_feat *fe = vpa_feat_new(&o, &err);        // once
 *   struct vpa_datadir d;  vpa_datadir_init(&d);
 *   vpa_datadir_open(&d, "data/test", &err);
 *   for each utterance i (in any thread):
 *       struct vpa_wave w;  vpa_datadir_load(&d, i, &w, NULL, &err);
 *       struct vpa_fmat m;  vpa_feat_apply(fe, &w, d.utt[i], &m, &err);
 *       ... use m.x (m.rows, m.cols) ...; vpa_fmat_release(&m); vpa_wave_release(&w);
 *   vpa_feat_free(fe); vpa_datadir_release(&d);
 */
#ifndef VPA_AUDIO_H
#define VPA_AUDIO_H

#include <stdint.h>

#include "base/base.h"

/* ------------------------------------------------------------ audio files */

struct vpa_wave {
	float *x;    /* (n) samples at the int16 scale, owned */
	size_t n;
	double rate; /* samples per second */
};
void vpa_wave_init(struct vpa_wave *w);
void vpa_wave_release(struct vpa_wave *w);

/*
 * Read an audio file with libsndfile (WAV PCM 8/16/24/32-bit and float,
 * FLAC, NIST SPHERE, ...).  channel < 0: the file must be mono ("FILE: 2
 * channels: pick one with --channel N"); channel >= 0 (0-based, Kaldi's
 * --channel) picks one.  Errors: unreadable or corrupt file, no samples
 * ("FILE: no audio samples"), a non-finite sample ("FILE: sample 17 is not
 * finite").  A truncated file whose header promises more than it holds is an
 * error ("FILE: truncated: 8000 frames announced, 1234 read"; for SPHERE
 * "FILE: truncated: the SPHERE header announces 8000 samples, the file holds
 * 1234").  A FLAC of unknown length (STREAMINFO's 0 samples) is read to its end.
 */
int vpa_audio_read(const char *path, int channel, struct vpa_wave *out, struct vpa_err *err);
/* The sample rate of an audio file from its header only (errors as vpa_audio_read's open). */
int vpa_audio_rate(const char *path, double *rate /* OUT */, struct vpa_err *err);
/*
 * The header of path only (libsndfile's header parse and, for SPHERE, its
 * sample_count; no sample decoded): what `vpaudit validate` checks of every
 * recording a run will read.  Errors as vpa_audio_read's for a missing,
 * unreadable, cut (WAV data chunk longer than the file) or empty file.
 * frames -1: a FLAC of unknown length (read to its end).
 */
struct vpa_audio_info {
	double rate;
	int channels;
	long long frames;
	int format; /* libsndfile's SF_FORMAT_* */
};
int vpa_audio_probe(const char *path, struct vpa_audio_info *info /* OUT */,
		    struct vpa_err *err);
/*
 * Whether audio at rate Hz can feed a front-end at want Hz (want <= 0: any).
 * Today only equal rates (no resampler); the one function every rate check
 * calls, so that accepting resamplable rates is a change here only.
 */
int vpa_audio_rate_ok(double rate, double want);
/*
 * Samples round(start*rate) .. round(end*rate) (end < 0: to the end; an end
 * past the file is cut to it) without reading the rest of the file; *dur
 * gets the whole recording's duration in seconds.  Errors as vpa_audio_read,
 * and "FILE: no samples between 2 and 3 s (1.5 s long)".
 */
int vpa_audio_read_part(const char *path, int channel, double start, double end,
			struct vpa_wave *out, double *dur /* OUT */, struct vpa_err *err);
/* The same from memory (the fuzz target's entry point); name is for messages. */
int vpa_audio_parse(const char *name, const unsigned char *buf, size_t len, int channel,
		    struct vpa_wave *out, struct vpa_err *err);

/*
 * Headerless PCM ("raw"): the sample format, rate and channel count a header
 * would give.  sf_format 0 means "not raw" (the file has a header).
 */
struct vpa_rawfmt {
	int sf_format;  /* libsndfile SF_FORMAT_RAW | subtype | endianness, or 0 */
	double rate;
	int channels;
	char name[16];  /* the encoding as written, "s16le" (for messages) */
};
/*
 * "ENC:RATE[:CHANNELS]" with ENC one of s8 u8 s16le s16be s24le s24be s32le
 * s32be f32le f32be f64le f64be (channels default 1), as --raw-format takes
 * it.  Error: "--raw-format: unknown encoding 's17le': expected one of ...".
 */
int vpa_rawfmt_parse(const char *spec, struct vpa_rawfmt *f, struct vpa_err *err);
/*
 * sox's raw-input options -e ENCODING -b BITS [-L|-B] as a vpa_rawfmt
 * (enc "signed-integer"/"signed", "unsigned-integer"/"unsigned",
 * "floating-point"/"float"; big: 1 for -B, 0 little (sox's default on x86)).
 * -1 when sox has no such encoding or vpaudit reads none (then *why says which).
 */
int vpa_rawfmt_sox(const char *enc, int bits, int big, double rate, int channels,
		   struct vpa_rawfmt *f, const char **why);
/* vpa_audio_read / _read_part for a file that may be raw (raw NULL or
   sf_format 0: as those).  A raw file whose size is not a whole number of
   frames is an error ("FILE: 1001 bytes is not a whole number of s16le frames"). */
int vpa_audio_read_fmt(const char *path, const struct vpa_rawfmt *raw, int channel,
		       struct vpa_wave *out, struct vpa_err *err);
int vpa_audio_read_part_fmt(const char *path, const struct vpa_rawfmt *raw, int channel,
			    double start, double end, struct vpa_wave *out, double *dur,
			    struct vpa_err *err);

/*
 * Resample w in place to rate with libsoxr (audio/resample.c: quality HQ,
 * linear phase, single precision on one thread: the same bits on every x86-64
 * CPU and thread count).  The output has vpa_resample_len(n, w->rate, rate)
 * samples.  Errors: a SOXR_* environment variable that changes libsoxr's
 * arithmetic is set; too short to give a sample.  name is for messages.
 */
int vpa_wave_resample(struct vpa_wave *w, double rate, const char *name, struct vpa_err *err);
size_t vpa_resample_len(size_t n, double rin, double rout);
/* How many waves vpa_wave_resample has converted in this process (atomic; a
   caller records the difference around its work in its provenance). */
unsigned long vpa_resample_count(void);
/* "libsoxr 0.1.3, HQ (20-bit), linear phase, single precision" (static). */
const char *vpa_resample_about(void);

/* ------------------------------------------------------- data directories */

/*
 * A Kaldi data directory (or a bare wav.scp, or a list of audio files).
 *
 * wav.scp lines are `REC PATH` or `REC COMMAND |` where COMMAND is one of
 * the recognised forms, read directly and never executed:
 *   flac -c -d -s PATH |             (the flags -c -d -s in any order, also
 *                                     --stdout --decode --silent)
 *   sox PATH -t wav [-r N] [-b 16] [-e signed-integer] [-c 1] - |
 *                                    (-r N: resampled to N by vpa_datadir_load;
 *                                     -c 1 a mono file: no downmix)
 *   sox -t raw -r R -e ENC -b BITS [-c N] [-L|-B] PATH -t wav ... - |
 *                                    (headerless PCM: rec_raw)
 *   sph2pipe -f wav [-p] [-c N] PATH |   (-c N picks channel N, 1-based)
 * Any other command is an error: "wav.scp:3: command 'ffmpeg' is not
 * executed: only 'flac -c -d -s F |', 'sox F -t wav - |' and
 * 'sph2pipe -f wav F |' are read".  Relative paths are relative to the
 * current directory (as in Kaldi); a missing file is an error naming the
 * wav.scp line.
 *
 * segments `UTT REC START END [CHANNEL]`: utterances cut from recordings
 * (CHANNEL, 0-based, picks the channel of a multi-channel recording),
 * samples round(START*rate) .. round(END*rate) (Kaldi extract-segments); END
 * -1 is the end of the recording; an END past the end by at most 0.5 s is
 * cut to the end (extract-segments' --max-overshoot), by more it is an error
 * naming the segments line.
 *
 * Also read when present and cross-checked (Kaldi's validate_data_dir.sh):
 * utt2spk (every utterance has one speaker and names an utterance that
 * exists), spk2utt (the inverse of utt2spk), spk2gender (m|f per speaker),
 * text (known utterances), utt2dur (non-negative numbers), enrolls (known
 * utterances), trials* (3 columns, known test utterances).  Duplicate ids are
 * errors naming both lines.
 */
struct vpa_datadir {
	char *scp;          /* path of wav.scp (owned), NULL for a list of files */
	size_t n_rec;
	char **rec;         /* (n_rec) recording ids, owned */
	char **rec_path;    /* (n_rec) audio file to read, owned */
	int *rec_channel;   /* (n_rec) channel from the command (sph2pipe -c), or -1 */
	double *rec_rate;   /* (n_rec) the rate a sox -r asked for, or 0 */
	long *rec_line;     /* (n_rec) wav.scp line, 0 for files given directly */
	char **rec_text;    /* (n_rec) that line's text (owned; NULL for files given directly) */
	size_t n_utt;       /* utterances in output order: segments order, else wav.scp order */
	char **utt;         /* (n_utt) owned */
	size_t *utt_rec;    /* (n_utt) index into rec */
	double *seg_start;  /* (n_utt) seconds, or NULL without segments */
	double *seg_end;    /* (n_utt) seconds, -1 = to the end; NULL without segments */
	int *seg_channel;   /* (n_utt) the segments line's 5th column (0-based channel), or -1; NULL without segments */
	long *utt_line;     /* (n_utt) line in segments (or wav.scp) */
	char **seg_text;    /* (n_utt) the segments line's text (owned), or NULL without segments */
	char *seg_file;     /* path of segments (owned) or NULL */
	char **utt_spk;     /* (n_utt) speaker of each utterance (owned), or NULL without utt2spk */
	int channel;        /* --channel for every file (-1: mono required) */
	struct vpa_rawfmt *rec_raw; /* (n_rec) raw PCM format from a sox -t raw line, sf_format 0 otherwise */
	struct vpa_rawfmt raw;      /* --raw-format for files given directly (sf_format 0: none) */
	double to_rate;     /* resample every utterance to this rate (0: keep the file's) */
	int allow;          /* with to_rate: VPA_ALLOW_DOWN | VPA_ALLOW_UP, else a rate mismatch is an error */
	int hints;          /* rate-mismatch messages name --allow-downsample / --allow-upsample */
	char *bad_line;     /* after an error in a list file: that line (owned), else NULL */
	size_t rec_cap, utt_cap; /* allocated length of the rec_* and utt_* / seg_* arrays */
};
void vpa_datadir_init(struct vpa_datadir *d);
void vpa_datadir_release(struct vpa_datadir *d);
enum { VPA_ALLOW_DOWN = 1, VPA_ALLOW_UP = 2 };
/*
 * Every utterance vpa_datadir_load gives is at rate: a recording at another
 * rate is resampled (vpa_wave_resample) when allow has that direction, else
 * it is an error naming its wav.scp line, both rates and, when hints is
 * true, the option --allow-downsample / --allow-upsample (Kaldi's names).
 */
void vpa_datadir_set_rate(struct vpa_datadir *d, double rate, int allow, int hints);

/*
 * path is a directory holding wav.scp, or a wav.scp file.  channel as for
 * vpa_audio_read (applies where the wav.scp command does not pick one).
 * Reads the lists only (no audio).  d must be initialised; on error it holds
 * bad_line (if any) and must still be released.
 */
int vpa_datadir_open(struct vpa_datadir *d, const char *path, int channel, struct vpa_err *err);
/* Audio files given directly: the utterance id is the file name without folder and suffix. */
int vpa_datadir_from_files(struct vpa_datadir *d, char *const *paths, size_t n, int channel,
			   struct vpa_err *err);
/* Parse wav.scp / segments text in memory (the fuzz target's entry point). */
int vpa_datadir_parse(struct vpa_datadir *d, const char *scp_name, const char *scp, size_t scp_len,
		      const char *seg_name, const char *seg, size_t seg_len, struct vpa_err *err);

/*
 * Every recording of d opened at its header (vpa_audio_probe, no decoding):
 * it exists and is readable, has samples, its rate passes vpa_audio_rate_ok
 * against want (want <= 0: any) and against a pipe form's `-r N`, the channel
 * the run reads exists, and every segment starts inside its recording and
 * ends at most 0.5 s past it.  So a run does not fail at once on what this
 * passed.  Errors name the wav.scp (or segments) line: "data/wav.scp:3: ...".
 * audio/datadir_probe.c.
 */
int vpa_datadir_probe(const struct vpa_datadir *d, double want, struct vpa_err *err);
/* vpa_datadir_open(path) then vpa_datadir_probe. */
int vpa_datadir_check_audio(const char *path, double want, struct vpa_err *err);

/*
 * The samples of utterance i (its recording, cut by its segment).  Thread-safe
 * for distinct output waves.  Errors name the wav.scp or segments line:
 * "data/wav.scp:3: cannot open 'a.wav': No such file or directory";
 * *line (may be NULL) then points at that line's text (borrowed from d) or
 * NULL.
 */
int vpa_datadir_load(const struct vpa_datadir *d, size_t i, struct vpa_wave *out,
		     const char **line /* OUT */, struct vpa_err *err);

/*
 * Several data directories as one (VoicePrivacy's libri_dev_trials_f and
 * libri_dev_trials_m as one trial set): every directory is opened and checked
 * as by vpa_datadir_open (errors name its own files), then out (a new folder;
 * its parent must exist) gets wav.scp (the lines verbatim, so relative audio
 * paths keep meaning what they meant: Kaldi resolves them against the
 * current directory, not the data directory), segments (when every directory
 * has one), utt2spk, text, utt2dur (each when every directory has it), and
 * spk2gender (the union).  Not merged: spk2utt (implied by utt2spk), enrolls
 * and trials* (the caller reads each directory's own).  Errors (VPA_EINPUT):
 *   "B/wav.scp:3: utterance 'u1' is also in A/wav.scp:7"  (recordings too)
 *   "B has no segments file and A has one"  (the same for utt2spk, text)
 *   "B/spk2gender:2: speaker 's1' is 'm' here and 'f' in A/spk2gender:5"
 *   "B/wav.scp:4: 'x.wav' is at 8000 Hz, expected 16000 Hz"
 * The last when *rate > 0 on entry, or when it differs from the first
 * recording's rate (*rate < 0 on entry: rates are not compared, for a reader
 * that resamples: vpa_datadir_set_rate) (*rate gets that rate; every recording's header is read:
 * an unreadable file is an error naming its wav.scp line, before any work).
 * After an error out does not exist (a conflict found while writing it, in
 * spk2gender, removes what was written).
 */
int vpa_datadir_merge(const char *const *dirs, size_t n, const char *out, double *rate,
		      struct vpa_err *err);

/* ---------------------------------------------------------------- features */

enum vpa_feat_kind { VPA_FEAT_FBANK = 0, VPA_FEAT_MFCC = 1 };
enum vpa_window { VPA_WIN_POVEY, VPA_WIN_HAMMING, VPA_WIN_HANNING, VPA_WIN_RECTANGULAR,
		  VPA_WIN_BLACKMAN };
enum vpa_cmvn { VPA_CMVN_NONE = 0, VPA_CMVN_UTT, VPA_CMVN_SLIDING };

/*
 * The options of compute-fbank-feats / compute-mfcc-feats (Kaldi's names,
 * with '-' for '_') and of compute-vad and apply-cmvn-sliding.  Defaults
 * (vpa_feat_opts_init) are Kaldi's except dither: 0 here, so that an audit is
 * reproducible (Kaldi's default is 1.0).
 */
struct vpa_feat_opts {
	int kind;                       /* enum vpa_feat_kind */
	/* frame extraction */
	double sample_frequency;        /* 16000 */
	double frame_length, frame_shift; /* ms: 25, 10 */
	double dither;                  /* 0 (Kaldi: 1) */
	double preemphasis_coefficient; /* 0.97 */
	int remove_dc_offset;           /* 1 */
	int window_type;                /* povey */
	int round_to_power_of_two;      /* 1 */
	double blackman_coeff;          /* 0.42 */
	int snip_edges;                 /* 1 */
	/* mel banks */
	double low_freq, high_freq;     /* 20, 0 (high <= 0: offset from Nyquist) */
	int num_mel_bins;               /* fbank 23, mfcc 23 */
	/* energy and output */
	int use_energy;                 /* fbank 0, mfcc 1 */
	int raw_energy;                 /* 1 */
	double energy_floor;            /* 0 */
	int use_log_fbank, use_power;   /* fbank: 1, 1 */
	int htk_compat;                 /* 0 */
	int num_ceps;                   /* mfcc: 13 */
	double cepstral_lifter;         /* mfcc: 22 */
	/* post-processing, in this order: CMVN, then VAD frame selection */
	int cmvn;                       /* enum vpa_cmvn, none */
	int norm_vars;                  /* 0 */
	int cmn_window, min_cmn_window; /* 600, 100 */
	int center;                     /* 0 */
	int vad;                        /* 0: keep every frame; 1: keep voiced frames */
	double vad_energy_threshold;    /* 5.0 */
	double vad_energy_mean_scale;   /* 0.5 */
	int vad_frames_context;         /* 0 */
	double vad_proportion_threshold; /* 0.6 */
};
void vpa_feat_opts_init(struct vpa_feat_opts *o, int kind);

/*
 * Set one option by its Kaldi name (without "--"), value as on the command
 * line (booleans true|false).  Errors: "unknown option '--num-bins'",
 * "--num-mel-bins must be an integer in [3, 1024], got 'x'".  Options that
 * do not apply to o->kind are unknown (--num-ceps for fbank).
 */
int vpa_feat_opts_set(struct vpa_feat_opts *o, const char *name, const char *value,
		      struct vpa_err *err);
/* Print the option table (name, default, meaning) for --help. */
void vpa_feat_opts_help(FILE *f, int kind);

/* A feature matrix. */
struct vpa_fmat {
	float *x;          /* (rows, cols) row-major, owned */
	size_t rows, cols;
};
void vpa_fmat_init(struct vpa_fmat *m);
void vpa_fmat_release(struct vpa_fmat *m);
/* A matrix into a job's output buffer and back (base/dist.h: MPI loops);
   unpack replaces m's contents, -1 when the bytes do not hold one. */
struct vpa_buf;
void vpa_fmat_pack(struct vpa_buf *b, const struct vpa_fmat *m);
int vpa_fmat_unpack(const unsigned char **p, const unsigned char *end, struct vpa_fmat *m);

struct vpa_feat; /* the pipeline: opaque, immutable, shareable between threads */

/*
 * Check the options together (mel band edges against Nyquist, as Kaldi) and
 * precompute the window, mel banks, DCT, lifter and FFT plan.  Caller frees
 * with vpa_feat_free.  Errors: "bad mel band edges: --low-freq 20 and
 * --high-freq 9000 vs Nyquist 8000", "--num-ceps 30 exceeds --num-mel-bins 23".
 */
struct vpa_feat *vpa_feat_new(const struct vpa_feat_opts *o, struct vpa_err *err);
void vpa_feat_free(struct vpa_feat *f); /* NULL-safe */
const struct vpa_feat_opts *vpa_feat_get_opts(const struct vpa_feat *f); /* borrowed, valid until vpa_feat_free */
size_t vpa_feat_dim(const struct vpa_feat *f);
/* Frames for n samples (Kaldi's NumFrames: snip-edges true gives 0 below one frame). */
size_t vpa_feat_num_frames(const struct vpa_feat *f, size_t n);

/*
 * Raw fbank/MFCC of n samples (no CMVN, no VAD) into out (num_frames, dim),
 * caller-provided.  log_energy, when not NULL, gets (num_frames) raw frame
 * log energies as MFCC's C0 with --use-energy (what compute-vad reads).
 * dither_seed seeds the dither noise (only used when dither > 0).
 */
void vpa_feat_compute(const struct vpa_feat *f, const float *wave, size_t n, float *out,
		      float *log_energy, uint64_t dither_seed);

/*
 * The whole pipeline on one utterance: check the rate (error "ID: sample
 * rate 8000 Hz differs from --sample-frequency=16000"), features, CMVN, VAD.
 * A non-finite feature (float samples far beyond full scale) is an error.
 * id names the utterance in messages and seeds the dither.  out is owned by
 * the caller (release with vpa_fmat_release); rows may be 0 (shorter than a
 * frame, or no voiced frame): the caller decides (the CLI warns and skips).
 */
int vpa_feat_apply(const struct vpa_feat *f, const struct vpa_wave *w, const char *id,
		   struct vpa_fmat *out, struct vpa_err *err);

/* ------------------------------------------------------ VAD and CMVN calls */

/*
 * Kaldi compute-vad on per-frame log energies e (T): threshold = thr +
 * mean_scale * mean(e); frame t is voiced when at least `proportion` of the
 * frames in [t-context, t+context] have e > threshold.  voiced (T) gets 0/1.
 */
void vpa_vad_compute(const float *e, size_t T, double thr, double mean_scale, int context,
		     double proportion, unsigned char *voiced);
/* Per-utterance CMVN in place on x (T, dim): mean, and variance when norm_vars (floor 1e-20). */
void vpa_cmvn_utt(float *x, size_t T, size_t dim, int norm_vars);
/*
 * apply-cmvn-sliding in place on x (T, dim): window cmn_window frames
 * (centred when center, else the preceding ones, at least min_window),
 * variance floor 1e-10.
 */
void vpa_cmvn_sliding(float *x, size_t T, size_t dim, int cmn_window, int min_window, int center,
		      int norm_vars);

/* ------------------------------------------------------------ writing */

/*
 * One Kaldi archive entry: `ID \0B FM <rows> <cols> data` (binary) or
 * `ID  [\n  r1 \n  r2 ]\n` (text, %.9g: exact for float).
 */
void vpa_ark_write_fmat(FILE *f, const char *id, const struct vpa_fmat *m, int text);
/* One vector entry: `ID \0B FV <d> data` (binary) or `ID  [ v1 v2 ... ]\n` (text, %.9g). */
void vpa_ark_write_fvec(FILE *f, const char *id, const float *v, size_t d, int text);

#endif
