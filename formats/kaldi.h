/*
 * formats/kaldi.h - Kaldi archives (text and binary) and Kaldi-style lists.
 *
 * Archive = entries `KEY ' ' OBJECT`.  OBJECT is
 *   text:    `[ v1 v2 ... ]` (a vector; may span lines) or
 *            `[\n r11 r12\n r21 r22 ]` (a matrix: '[' ends its line, one row per
 *            line, the last row ends with ']'); `[ ]` is an empty vector;
 *   binary:  "\0B" then a token `FV ` / `DV ` (float / double vector) followed by
 *            the size marker byte 4 and an int32 length, then the values; or
 *            `FM ` / `DM ` (matrix) with marked int32 rows and cols, then the
 *            values row-major.  Little-endian.  Compressed matrices (`CM`,
 *            `CM2`, `CM3`) are rejected with "compressed matrices are not
 *            supported: write with --compress=false".
 * Text and binary entries may be mixed.  Values are stored as double.
 *
 * Errors (VPA_EINPUT), one line each: text positions are `FILE:LINE:`, binary
 * positions `FILE: byte N:` (0-based offset), e.g.
 *   "xv.ark:3:7: expected a number, got 'abc'"
 *   "xv.ark:3: value is not finite: 'nan' (utterance 'u3')"
 *   "xv.ark:5: duplicate utterance 'u1' (first on line 1)"
 *   "xv.ark:4: utterance 'u4' has dimension 2, expected 3 as 'u1'"
 *   "xv.ark: byte 57: truncated binary archive: vector 'u2' needs 12 bytes, 5 left"
 *   "xv.ark: byte 10: 'u1': compressed matrices are not supported: write with --compress=false"
 */
#ifndef VPA_KALDI_H
#define VPA_KALDI_H

#include "base/base.h"

struct vpa_kaldi_entry {
	char *key;         /* owned */
	size_t rows, cols; /* a vector: rows 1, cols = length */
	size_t off;        /* index of its first value in ark->data */
	int is_matrix;
	int binary;
	long line;         /* 1-based line of the key for text entries, else 0 */
	size_t byte;       /* byte offset of the key */
};

struct vpa_kaldi_ark {
	char *name;                 /* owned copy of the file name (for messages) */
	struct vpa_kaldi_entry *e;  /* (n), owned */
	size_t n;
	double *data;               /* (n_data), owned; entries in order, contiguous */
	size_t n_data;
};

void vpa_kaldi_ark_init(struct vpa_kaldi_ark *a);
void vpa_kaldi_ark_release(struct vpa_kaldi_ark *a);

/* Parsing modes. */
enum {
	VPA_KALDI_ANY = 0,     /* vectors and matrices, any sizes */
	VPA_KALDI_VECTORS = 1, /* vectors only, all of the first one's length; then data is (n, d) */
	VPA_KALDI_MATRICES = 2 /* matrices only (any rows), all with the first one's cols */
};

/*
 * Parse an archive in memory (buf need not be NUL-terminated); name is for
 * messages.  Duplicate keys, NaN/inf, truncation are errors in every mode.
 * An archive with no entry is an error ("FILE: no entries").  *out must be
 * initialised; on error it is left empty.
 */
int vpa_kaldi_parse(const char *name, const unsigned char *buf, size_t len, int mode,
		    struct vpa_kaldi_ark *out, struct vpa_err *err);
int vpa_kaldi_read(const char *path, int mode, struct vpa_kaldi_ark *out, struct vpa_err *err);

/* "FILE:LINE" or "FILE: byte N" of an entry, into buf (for messages). */
void vpa_kaldi_where(const struct vpa_kaldi_ark *a, size_t i, char *buf, size_t cap);

/*
 * Write vectors as a text archive: `id  [ v1 v2 ... ]\n` per row, values
 * with %.9g (exact for float32 values).  x is (n, d) row-major.
 */
int vpa_kaldi_write_vectors(const char *path, char *const *ids, const double *x, size_t n,
			    size_t d, struct vpa_err *err);
/*
 * One text object into a FILE (for the PLDA writer and tests): ` [ v1 v2 ]\n`
 * and ` [\n  r1\n  r2 ]\n`, values printed with `digits` significant digits
 * (9: exact for float32, 17: exact for double).
 */
void vpa_kaldi_fprint_vector(FILE *f, const double *v, size_t d, int digits);
void vpa_kaldi_fprint_matrix(FILE *f, const double *m, size_t rows, size_t cols, int digits);

/*
 * One Kaldi object (no key) at buf[*pos] in text or binary form ("\0B"
 * prefix): the reader of model files such as the PLDA.  Skips leading white
 * space.  *vals (caller frees) gets rows*cols values.  Errors name `what`.
 */
int vpa_kaldi_parse_object(const char *name, const unsigned char *buf, size_t len,
			   size_t *pos, int binary, const char *what, double **vals /* OUT */,
			   size_t *rows /* OUT */, size_t *cols /* OUT */, int *is_matrix /* OUT */,
			   struct vpa_err *err);

/*
 * A Kaldi text file (lists, wav.scp, segments, text, trials, text archives,
 * score files) must not start with a UTF-8 byte order mark: Kaldi reads it as
 * part of the first id, so that id matches nothing and the error would blame
 * another file.  Returns 0, or fails with
 *   "wav.scp:1: the file starts with a UTF-8 byte order mark (bytes EF BB BF),
 *    which would become part of the first id: save it without the mark"
 * (one line).  buf need not be NUL-terminated.
 */
int vpa_kaldi_check_bom(const char *name, const char *buf, size_t len, struct vpa_err *err);

/* --------------------------------------------------------------- lists */

/*
 * A whitespace-separated table: every non-blank line (lines starting with
 * '#' are skipped, CRLF accepted) has exactly ncols fields; ncols == 0 means
 * "as many as the first line, 1 or 2".  Fields are stored row-major.
 * Errors: "utt2spk:4: expected 2 columns, found 3", "utt2spk: no entries".
 */
struct vpa_kaldi_list {
	char *name;   /* owned copy of the path */
	size_t n, ncols;
	char **f;     /* (n, ncols) fields, owned */
	long *line;   /* (n) 1-based line numbers */
};
void vpa_kaldi_list_init(struct vpa_kaldi_list *l);
void vpa_kaldi_list_release(struct vpa_kaldi_list *l);
int vpa_kaldi_read_list(const char *path, size_t ncols, struct vpa_kaldi_list *out,
			struct vpa_err *err);
int vpa_kaldi_parse_list(const char *name, const char *buf, size_t len, size_t ncols,
			 struct vpa_kaldi_list *out, struct vpa_err *err);

/*
 * VoicePrivacy trials `enroll_spk test_utt target|nontarget` (3 columns).
 * Errors: "trials:3: unknown label 'maybe': expected target or nontarget",
 * "trials:9: duplicate trial 'spk1' 'u3' (first on line 2)".
 */
struct vpa_kaldi_trials {
	char *name;             /* owned */
	size_t n;
	char **enroll, **test;  /* (n) each, owned */
	unsigned char *target;  /* (n) 1 target, 0 nontarget */
	long *line;             /* (n) */
};
void vpa_kaldi_trials_init(struct vpa_kaldi_trials *t);
void vpa_kaldi_trials_release(struct vpa_kaldi_trials *t);
int vpa_kaldi_read_trials(const char *path, struct vpa_kaldi_trials *out, struct vpa_err *err);
int vpa_kaldi_parse_trials(const char *name, const char *buf, size_t len,
			   struct vpa_kaldi_trials *out, struct vpa_err *err);

/* ---------------------------------------------------------- alignments */

/*
 * Frame labels per utterance in Kaldi's integer-vector text, as
 * `ali-to-phones --per-frame=true MDL ark:ALI ark,t:-` writes them: lines
 * "UTT ID ID ..." (or "UTT [ ID ... ]"), one non-negative integer (< 2^31)
 * per feature frame; blank lines skipped (formats/kaldi_ali.c).  Errors:
 * "ali.txt:3:9: 'x1' is not a frame label (...)", "ali.txt:5: duplicate
 * utterance 'u1' (first on line 2)", "ali.txt:4: utterance 'u2' has no frame
 * labels (...)", "ali.txt: no alignments".
 */
struct vpa_kaldi_ali {
	char *name;      /* owned copy of the path */
	size_t n;        /* utterances, in file order */
	char **utt;      /* (n) owned */
	size_t *off;     /* (n + 1) label offsets */
	uint32_t *lab;   /* (off[n]) */
	long *line;      /* (n) 1-based line of each utterance */
	size_t *order;   /* (n) indices sorted by id (vpa_kaldi_ali_find) */
};
void vpa_kaldi_ali_init(struct vpa_kaldi_ali *a);
void vpa_kaldi_ali_release(struct vpa_kaldi_ali *a);
int vpa_kaldi_read_ali(const char *path, struct vpa_kaldi_ali *out, struct vpa_err *err);
int vpa_kaldi_parse_ali(const char *name, const char *buf, size_t len, struct vpa_kaldi_ali *out,
			struct vpa_err *err);
/* The index of utterance id, or SIZE_MAX. */
size_t vpa_kaldi_ali_find(const struct vpa_kaldi_ali *a, const char *id);

#endif
