/*
 * core/io.h - readers for user files: score lists, trial keys, .npy.
 *
 * Every reader rejects bad input with one line `FILE:LINE: what was expected`
 * (see base.h) and returns VPA_EINPUT (contents) or VPA_EIO (open/read).
 * Accepted everywhere: CRLF line endings, a missing final newline, blank lines
 * and lines starting with '#' (skipped).  Rejected: NaN/inf, non-numeric
 * tokens, unknown labels, wrong column counts, empty files (no trials).
 */
#ifndef VPA_IO_H
#define VPA_IO_H

#include "base.h"

/*
 * A labelled score set as read from disk.  tar/non are in file order (not
 * sorted).  When the file had ids (4 columns, or --key), tar_e/tar_t/non_e/
 * non_t hold the index of each trial's enrolment and test id in ids_e/ids_t;
 * otherwise they are NULL and n_ids_* are 0.
 */
struct vpa_trials {
	double *tar, *non;         /* (n_tar), (n_non), owned */
	size_t n_tar, n_non;
	uint32_t *tar_e, *tar_t;   /* (n_tar) or NULL, owned */
	uint32_t *non_e, *non_t;   /* (n_non) or NULL, owned */
	char **ids_e, **ids_t;     /* (n_ids_e), (n_ids_t) or NULL, owned */
	size_t n_ids_e, n_ids_t;
};
void vpa_trials_init(struct vpa_trials *t);
void vpa_trials_release(struct vpa_trials *t);

/*
 * Score file with lines `score label` or `enroll test score label`
 * (label target/nontarget, also 1/0, also tar/non).  The column count is fixed
 * by the first data line.  Large files are parsed at hundreds of MB/s.
 */
int vpa_read_scores(const char *path, struct vpa_trials *out, struct vpa_err *err);

/*
 * Kaldi-style `enroll test score` joined with a key `enroll test target|nontarget`
 * on (enroll, test).  A pair in one file and not the other, or a duplicate
 * pair in either, is an error naming the pair and its line.
 */
int vpa_read_scores_key(const char *scores, const char *key, struct vpa_trials *out,
			struct vpa_err *err);

/*
 * One-class list: a text file with one score per line, or a 1-D .npy
 * (float32/float64, little-endian, C order).  Chosen by the ".npy" suffix or
 * the \x93NUMPY magic.  Caller frees *x.
 */
int vpa_read_score_list(const char *path, double **x /* OUT */, size_t *n /* OUT */,
			struct vpa_err *err);

/* .npy arrays (versions 1.0, 2.0, 3.0; '<f4', '<f8'; 1-D or 2-D; C order). */
struct vpa_npy {
	size_t ndim;
	size_t shape[2];
	double *data; /* (shape[0] * shape[1] or shape[0]), owned, row-major */
};
int vpa_npy_read(const char *path, struct vpa_npy *out, struct vpa_err *err);
/* Parse from memory (the fuzz target's entry point); name is for messages. */
int vpa_npy_parse(const char *name, const unsigned char *buf, size_t len,
		  struct vpa_npy *out, struct vpa_err *err);
void vpa_npy_release(struct vpa_npy *a);
/* Write a float64 array (ndim 1 or 2). */
int vpa_npy_write(const char *path, const double *data, size_t ndim, const size_t *shape,
		  struct vpa_err *err);

/*
 * Parse a score file already in memory (the fuzz target's entry point).
 * buf need not be NUL-terminated.  Same rules as vpa_read_scores.
 */
int vpa_parse_scores(const char *name, const char *buf, size_t len,
		     struct vpa_trials *out, struct vpa_err *err);

/*
 * Fast number parsing shared by the text readers: parses a decimal float at
 * [p, end) and returns the end pointer, or NULL if the token is not a finite
 * number.  Correctly rounded (fast path for short mantissas, strtod otherwise).
 */
const char *vpa_parse_double(const char *p, const char *end, double *out);

#endif
