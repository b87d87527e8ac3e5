/*
 * audio/anon_int.h - helpers shared by audio/anon_dir.c and audio/synth.c
 * (internal to audio/; not a public header).
 */
#ifndef VPA_ANON_INT_H
#define VPA_ANON_INT_H

#include "audio/anon.h"

/* n samples (int16 scale, rounded and clipped) as 16-bit PCM mono WAV. */
int vpa_wav16_write(const char *path, const float *x, size_t n, double rate, struct vpa_err *err);
/*
 * The MPI jobs that make audio files (anon_dir.c, synth.c; base/dist.h):
 * vpa_pcm16 rounds and clips n samples to the 16-bit values vpa_wav16_write
 * would write (new array, caller frees); vpa_pcm16_write writes such values
 * as that WAV file, byte for byte; vpa_pcm16_pack/unpack carry them (with
 * their count) in a job's output, unpack replacing *pcm, -1 on bad bytes.
 */
short *vpa_pcm16(const float *x, size_t n);
int vpa_pcm16_write(const char *path, const short *pcm, size_t n, double rate,
		    struct vpa_err *err);
struct vpa_buf;
void vpa_pcm16_pack(struct vpa_buf *b, const short *pcm, size_t n);
int vpa_pcm16_unpack(const unsigned char **p, const unsigned char *end, short **pcm, size_t *n);
/* rm -r: vpa_rm_tree (base/base.h), which never follows a link. */
/* "a/b", caller frees. */
char *vpa_anon_join(const char *a, const char *b);
/* dir (which need not exist yet) as an absolute path: its parent canonical
 * (realpath), its last name kept; what wav.scp files written here name. */
char *vpa_anon_abs(const char *dir);
int vpa_copy_file(const char *from, const char *to, struct vpa_err *err);
/* An id usable as a file name: not empty, '.', '..', no '/'. */
int vpa_check_id(const char *id, const char *what, struct vpa_err *err);
/* The coefficient of o's kind's options (alpha, or semitones for PITCH). */
double vpa_anon_fixed_coeff(const struct vpa_anon_opts *o);
/* The coefficient of an utterance under o (fixed, or drawn per speaker/utterance). */
double vpa_anon_coeff(const struct vpa_anon_opts *o, const char *utt, const char *spk);

/*
 * Windowed-sinc resampling of x (n) from rin to rout Hz (audio/synth.c):
 * floor(n rout / rin) samples into a new array (caller frees), *nout its length.
 */
float *vpa_resample(const float *x, size_t n, double rin, double rout, size_t *nout);

#endif
