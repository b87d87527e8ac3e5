/*
 * audio/anon_int.h - helpers shared by audio/anon_dir.c and audio/synth.c
 * (internal to audio/; not a public header).
 */
#ifndef VPA_ANON_INT_H
#define VPA_ANON_INT_H

#include "audio/anon.h"

/* n samples (int16 scale, rounded and clipped) as 16-bit PCM mono WAV. */
int vpa_wav16_write(const char *path, const float *x, size_t n, double rate, struct vpa_err *err);
/* rm -r of a tree we wrote (errors ignored: cleanup after a failure). */
void vpa_rm_tree(const char *path);
/* "a/b", caller frees. */
char *vpa_anon_join(const char *a, const char *b);
int vpa_copy_file(const char *from, const char *to, struct vpa_err *err);
/* An id usable as a file name: not empty, '.', '..', no '/'. */
int vpa_check_id(const char *id, const char *what, struct vpa_err *err);
/* The coefficient of an utterance under o (fixed, or drawn per speaker/utterance). */
double vpa_anon_coeff(const struct vpa_anon_opts *o, const char *utt, const char *spk);

/*
 * Windowed-sinc resampling of x (n) from rin to rout Hz (audio/synth.c):
 * floor(n rout / rin) samples into a new array (caller frees), *nout its length.
 */
float *vpa_resample(const float *x, size_t n, double rin, double rout, size_t *nout);

#endif
