/*
 * formats/io_scores_int.h - what the parts of the score-file readers share
 * (split from formats/io_scores.c): the mapped file, the line tokenizer
 * (formats/io_scores_lex.c), the growable arrays, the id interning tables and
 * the trial collection (formats/io_scores.c), used by the scores + key reader
 * (formats/io_scores_key.c).  Internal to these files.
 */
#ifndef VPA_IO_SCORES_INT_H
#define VPA_IO_SCORES_INT_H

#include "formats/io.h"
#include "base/inputs.h"

#define MAX_TOK 5                  /* tokens remembered per line */

/* ------------------------------------------------------------ file access */

/* A file's bytes: mapped when possible, else read into memory. */
struct mapped {
	const char *data;
	size_t len;
	void *map;   /* munmap(map, len) when not NULL */
	char *heap;  /* free() when not NULL */
};

int vpa_scores_map_file(const char *path, struct mapped *m, struct vpa_err *err);
void vpa_scores_unmap_file(struct mapped *m);

/* ------------------------------------------------------------------ lines */

struct tok {
	const char *s;
	size_t n;
};

/* Line iterator over a buffer: blank and '#' lines are skipped. */
struct lines {
	const char *p, *end;
	const char *name;
	long line;      /* number of the current line */
	const char *ls; /* current line start */
	struct tok t[MAX_TOK];
	int nt;         /* tokens on the line (may exceed MAX_TOK) */
};

void vpa_scores_lines_init(struct lines *L, const char *name, const char *buf, size_t len);
/*
 * Quote at most 40 bytes of a token for a message, e.g. 'abc' or 'abcd...'.
 * Returns buf.
 */
const char *vpa_scores_quote(char *buf, size_t cap, const char *s, size_t n);
/*
 * Advance to the next data line and split it into tokens.  Returns 1 with a
 * line, 0 at the end, or a negative status.
 */
int vpa_scores_lines_next(struct lines *L, struct vpa_err *err);
/* A NUL byte anywhere is an error (binary file); report its line and column. */
int vpa_scores_check_nul(const char *name, const char *buf, size_t len, struct vpa_err *err);
/* Parse token k of the current line as a finite number. */
int vpa_scores_tok_number(const struct lines *L, int k, const char *what, double *out,
			  struct vpa_err *err);
/* Labels: target|tar|1 -> 1, nontarget|non|0 -> 0. */
int vpa_scores_tok_label(const struct lines *L, int k, int *is_tar, struct vpa_err *err);

/* ------------------------------------------------------- growable arrays */

struct dvec {
	double *v;
	size_t n, cap;
};
struct uvec {
	uint32_t *v;
	size_t n, cap;
};
struct lvec {
	long *v;
	size_t n, cap;
};

void vpa_scores_dpush(struct dvec *a, double x);
void vpa_scores_upush(struct uvec *a, uint32_t x);
void vpa_scores_lpush(struct lvec *a, long x);

/* ------------------------------------------------------------ id interning */

/*
 * String -> dense index, open addressing with linear probing.  Memory latency
 * dominates with many distinct ids, so a probe touches one 16-byte slot (the
 * full hash) and, on a hash match, one arena record [idx u32][len u32][bytes]:
 * two cache misses per lookup.  Sorted trial lists repeat the previous id, so
 * the last id is checked first.
 */
struct islot {
	uint64_t hash;
	uint64_t off; /* arena offset + 1 of the record, 0 = empty */
};

struct intern {
	char *arena;        /* records, owned */
	size_t alen, acap;
	uint64_t *offs;     /* (n): arena offset of each id's record */
	size_t n, cap;
	struct islot *slots; /* (mask + 1) */
	size_t mask;
	const char *last_s; /* the previous token (borrowed from the input) */
	size_t last_n;
	uint32_t last_idx;
};

uint64_t vpa_scores_hash_bytes(const char *s, size_t n);
void vpa_scores_intern_release(struct intern *h);
/* The id of index k (NUL-terminated, borrowed until intern_release). */
const char *vpa_scores_intern_str(const struct intern *h, size_t k, size_t *n);
/* Index of s, or -1 when absent. */
long vpa_scores_intern_find(const struct intern *h, const char *s, size_t n, uint64_t hv);
int vpa_scores_intern_tok(struct intern *h, const struct lines *L, int k, uint32_t *out,
			  struct vpa_err *err);

/* -------------------------------------------------------------- trials */

/*
 * Ids of 4-column lines are interned in batches: hash all, prefetch their
 * slots, then their records, then look up.  With 10^5 distinct ids in random
 * order the lookups overlap their cache misses instead of waiting for each.
 */
#define BATCH 32
struct pending {
	struct tok e, t;
	uint64_t he, ht;
	long line;
	int is_tar;
};

/* Everything collected while parsing, released in one place. */
struct collect {
	struct dvec tar, non;
	struct uvec tar_e, tar_t, non_e, non_t;
	struct intern ie, it;
	struct pending pend[BATCH];
	int npend;
};

void vpa_scores_collect_release(struct collect *c);
void vpa_scores_collect_take(struct collect *c, struct vpa_trials *out, int with_ids);

#endif
