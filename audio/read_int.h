/*
 * audio/read_int.h - inside audio/: the hashing reader of audio/read_hash.c,
 * used by audio/read.c while a run records its inputs (base/inputs.h).
 */
#ifndef VPA_AUDIO_READ_INT_H
#define VPA_AUDIO_READ_INT_H

#include <stdio.h>

#include <sndfile.h>

struct vpa_hashio;

/*
 * path opened by libsndfile through a virtual I/O over f (open, at any
 * position; taken: closed here or by vpa_hashio_close) that hashes the file's
 * bytes in order as they are read; *out gets the state for vpa_hashio_close
 * (NULL when f is not seekable: then a plain sf_open, nothing hashed).  NULL
 * when libsndfile cannot open it (sf_strerror(NULL) says why).
 */
SNDFILE *vpa_hashio_open(const char *path, FILE *f, SF_INFO *info, struct vpa_hashio **out);
/* The rest of the file hashed, the hash noted as an input of the run
 * (vpa_input_note_hash; not when a read failed), f closed, h freed.
 * NULL: nothing.  Call after sf_close. */
void vpa_hashio_close(struct vpa_hashio *h);

#endif
