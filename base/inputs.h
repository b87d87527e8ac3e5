/*
 * base/inputs.h - the input files of a run, for its provenance: every file
 * the readers open (vpa_read_file, the mapped score reader, the .npy reader)
 * is noted with its size and SHA-256 while recording is on (`vpaudit run`
 * turns it on before loading the scenario).  One mechanism: the readers call
 * vpa_input_note(); nothing else keeps a list.
 */
#ifndef VPA_INPUTS_H
#define VPA_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/json.h"

/* SHA-256 (FIPS 180-4) of len bytes; hex: 64 lowercase digits + NUL. */
void vpa_sha256(const void *data, size_t len, unsigned char out[32]);
void vpa_sha256_hex(const void *data, size_t len, char hex[65]);

/* The same streamed: init, update with the bytes in order (any split), final.
 * A reader hashes a file while it reads it (audio/read.c), no second pass. */
struct vpa_sha256_ctx {
	uint32_t h[8];
	unsigned char buf[64];
	size_t n;                /* bytes held in buf */
	uint64_t len;            /* bytes so far */
};
void vpa_sha256_init(struct vpa_sha256_ctx *c);
void vpa_sha256_update(struct vpa_sha256_ctx *c, const void *data, size_t len);
void vpa_sha256_final(struct vpa_sha256_ctx *c, unsigned char out[32]);
void vpa_sha256_hex_of(const unsigned char d[32], char hex[65]);

/* Start recording (forgets earlier notes) / stop and forget. */
void vpa_inputs_begin(void);
void vpa_inputs_end(void);

/*
 * Note that path was read: its bytes are data[0..len), or, with data NULL,
 * the file is read again to hash it.  A path already noted is kept once (the
 * first reading).  Does nothing while recording is off.  Thread-safe.
 */
void vpa_input_note(const char *path, const void *data, size_t len);

/*
 * For readers that hash as they read (audio files, read in blocks and parts):
 * vpa_input_wanted(path) says whether a note of path is wanted now (recording
 * on, not noted yet, not ignored); the reader then streams the file's bytes
 * through vpa_sha256_* and gives the result to vpa_input_note_hash.
 */
int vpa_input_wanted(const char *path);
void vpa_input_note_hash(const char *path, size_t bytes, const char hex[65]);

/* Files under dir (a temporary folder of the run's own making: a synthetic
 * corpus, anonymised audio) are not inputs: not noted until recording stops. */
void vpa_inputs_ignore(const char *dir);

/*
 * Under MPI (base/dist.h): every rank's notes merged into every rank's, so
 * that the list names each file some rank read (a rank reads only the models
 * and audio of its jobs), as a one-process run's does.  Called once, after
 * the run; 0 or the error of base/dist.c's agreement.  Nothing with one rank.
 */
struct vpa_err;
int vpa_inputs_share(struct vpa_err *err);

/* The notes as [{"path", "bytes", "sha256"}] sorted by path
 * (new array, caller frees); [] while recording is off. */
struct vpa_json *vpa_inputs_json(void);

#endif
