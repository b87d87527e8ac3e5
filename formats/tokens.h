/*
 * formats/tokens.h - the tokens file of a CTC acoustic model (asr/ctc.c):
 * one token per line, line k (from 0) is the model's output index k, as
 * wav2vec2 / SpeechBrain / NeMo vocabularies are listed.  Depends on base/.
 */
#ifndef VPA_FORMATS_TOKENS_H
#define VPA_FORMATS_TOKENS_H

#include "base/base.h"

/*
 * Parse tokens text: each line's whole text but a final "\r" is the token
 * (spaces are kept: a token may be one).  Errors (VPA_EINPUT, "NAME:LINE:
 * ..."): an empty line (an empty token could not be told from none in a
 * transcript), a NUL byte, no token at all.  *tok (caller frees with
 * vpa_tokens_free) gets *n >= 1 tokens; on error *tok is NULL.
 */
int vpa_tokens_parse(const char *name, const char *data, size_t len, char ***tok /* OUT */,
		     size_t *n /* OUT */, struct vpa_err *err);
/* The same from a file (vpa_read_file: recorded as a run's input). */
int vpa_tokens_read(const char *path, char ***tok /* OUT */, size_t *n /* OUT */,
		    struct vpa_err *err);
void vpa_tokens_free(char **tok, size_t n); /* NULL-safe */

#endif
