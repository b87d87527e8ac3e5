/*
 * formats/io.h - readers for user files: score lists, trial keys, .npy.
 *
 * Every reader rejects bad input with one line `FILE:LINE: what was expected`
 * (see base.h) and returns VPA_EINPUT (contents) or VPA_EIO (open/read).
 * Accepted everywhere: CRLF line endings, a missing final newline, blank lines
 * and lines starting with '#' (skipped).  Rejected: NaN/inf, non-numeric
 * tokens, unknown labels, wrong column counts, empty files (no trials).
 */
#ifndef VPA_IO_H
#define VPA_IO_H

#include "base/base.h"

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
 * Columns are separated by spaces and/or tabs.  Labels are exactly one of
 * target, nontarget, tar, non, 1, 0 (case-sensitive).  A class with no trials
 * is not an error here (n_tar or n_non may be 0); a file with no trial at all
 * is ("FILE: no trials").  Other errors: "FILE:LINE:COL: expected a number,
 * got 'abc'", "...: score is not finite: 'nan'", "...: unknown label 'x':
 * expected target, nontarget, tar, non, 1 or 0", "FILE:LINE: expected 2
 * columns as on line 1, found 3", a NUL byte, a line over 1 MiB.
 * Ids (4 columns) are interned: ids_e / ids_t list each distinct id once, in
 * order of first appearance.  On error *out is left empty (released).
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
 * The same from memory (the fuzz target's entry point); the names are for
 * messages.  Both files have exactly 3 columns; key labels as above.  Trials
 * come out in score-file order.  Errors, e.g.
 *   "key.txt:7: pair 'spk1' 'utt9' is in the key but not in the scores (scores.txt)"
 *   "scores.txt:3: pair 'a' 'b' is in the scores but not in the key (key.txt)"
 *   "scores.txt:9: duplicate pair 'a' 'b' (first on line 2)"
 */
int vpa_parse_scores_key(const char *sname, const char *sbuf, size_t slen,
			 const char *kname, const char *kbuf, size_t klen,
			 struct vpa_trials *out, struct vpa_err *err);

/*
 * One-class list: a text file with one score per line, or a 1-D .npy
 * (float32/float64, little-endian, C order).  Chosen by the ".npy" suffix or
 * the \x93NUMPY magic.  Caller frees *x.
 */
int vpa_read_score_list(const char *path, double **x /* OUT */, size_t *n /* OUT */,
			struct vpa_err *err);
/* The same with a .npy's data read on `threads` threads (same result). */
int vpa_read_score_list_threads(const char *path, double **x, size_t *n, int threads,
				struct vpa_err *err);
/* The same from memory (.npy chosen by the magic only).  Caller frees *x. */
int vpa_parse_score_list(const char *name, const char *buf, size_t len,
			 double **x /* OUT */, size_t *n /* OUT */, struct vpa_err *err);

/* .npy arrays (versions 1.0, 2.0, 3.0; '<f4', '<f8'; 1-D or 2-D; C order). */
struct vpa_npy {
	size_t ndim;
	size_t shape[2];
	double *data; /* (shape[0] * shape[1] or shape[0]), owned, row-major */
};
int vpa_npy_read(const char *path, struct vpa_npy *out, struct vpa_err *err);
/* The same with the data read on `threads` threads (same result). */
int vpa_npy_read_threads(const char *path, struct vpa_npy *out, int threads,
			 struct vpa_err *err);
/* Parse from memory (the fuzz target's entry point); name is for messages. */
int vpa_npy_parse(const char *name, const unsigned char *buf, size_t len,
		  struct vpa_npy *out, struct vpa_err *err);
void vpa_npy_release(struct vpa_npy *a);
/*
 * N-D arrays (0 to VPA_NPY_MAX_DIMS axes) of '<f4', '<f8', '<i4', '<i8', '|b1',
 * '|u1', '|i1', kept as raw little-endian items (for ONNX tensors).
 */
#define VPA_NPY_MAX_DIMS 8
struct vpa_npy_nd {
	char kind;      /* 'f' float, 'i' signed, 'u' unsigned, 'b' bool (0/1) */
	int itemsize;   /* bytes: 1, 4 or 8 */
	size_t ndim;
	size_t shape[VPA_NPY_MAX_DIMS];
	void *data;     /* (prod shape) items, owned */
};
int vpa_npy_read_nd(const char *path, struct vpa_npy_nd *out, struct vpa_err *err);
int vpa_npy_parse_nd(const char *name, const unsigned char *buf, size_t len,
		     struct vpa_npy_nd *out, struct vpa_err *err);
void vpa_npy_nd_release(struct vpa_npy_nd *a);
/* Write items of kind/itemsize as above (atomically). */
int vpa_npy_write_nd(const char *path, char kind, int itemsize, const void *data, size_t ndim,
		     const size_t *shape, struct vpa_err *err);
/*
 * Every element finite (and, with as_float32, within +-FLT_MAX, for data
 * kept as float): else VPA_EINPUT "NAME: element (3, 7) (0-based) is not
 * finite (nan)" (1-D: "element 12 (0-based) ...").
 */
int vpa_npy_check_finite(const char *name, const struct vpa_npy *a, int as_float32,
			 struct vpa_err *err);
/*
 * The first NaN or inf among float32 (itemsize 4) or float64 (8) values laid
 * out row-major in shape (ndim axes, at most 8): VPA_EINPUT "NAME: WHAT: element
 * (1, 2) (0-based) is not finite (nan)" ("WHAT: " only when what is not NULL;
 * 1-D "element 12 (0-based) ...", 0-D "the value is not finite (inf)").
 * 0 when every value is finite.
 */
int vpa_check_finite_nd(const char *name, const char *what, const void *data, int itemsize,
			size_t ndim, const size_t *shape, struct vpa_err *err);
/* The same refusing only NaN (+-inf pass): ONNX constants, where -inf is an
 * attention mask's "never attend", and values computed from them. */
int vpa_check_nan_nd(const char *name, const char *what, const void *data, int itemsize,
		     size_t ndim, const size_t *shape, struct vpa_err *err);
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
 * Grammar: [+-]? (D+ ('.' D*)? | '.' D+) ([eE] [+-]? D+)?, so 1, -1.5, .5, 5.,
 * 1e-3, 1.5E+10, +2; no leading space, no nan/inf, no hex.  The number must
 * end at `end` or at a byte outside [0-9A-Za-z._+-] (a space, ',', ']' ...),
 * else NULL: "1.2.3", "1e", "1.5abc".  Out-of-range values ("1e999") give
 * NULL; underflow gives a subnormal or zero, as strtod.  The result equals
 * strtod's bit for bit.
 */
const char *vpa_parse_double(const char *p, const char *end, double *out);

/* A whole score set (scores, their model indices, ids) packed into bytes
   (formats/trials_pack.c, for base/dist.c's messages); unpack fills an
   initialised, empty t and leaves it released on error. */
void vpa_pack_trials(struct vpa_buf *b, const struct vpa_trials *t);
int vpa_unpack_trials(const unsigned char **p, const unsigned char *end, struct vpa_trials *t);

#endif
