/*
 * core/io_scores.c - score files, trial keys, one-class score lists and the
 * fast decimal parser they share.  See io.h for the formats.
 *
 * Speed: a file is mapped (mmap) and parsed in place, one memchr per line to
 * find its end, a hand-written tokenizer and vpa_parse_double (Clinger's exact
 * fast path, strtod otherwise).  Ids are interned in open-addressing hash
 * tables, so a 10M-line file is read in about a second.
 */
#include "io.h"
#include "inputs.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINE ((size_t)1 << 20) /* 1 MiB */
#define MAX_TOK 5                  /* tokens remembered per line */

/* ---------------------------------------------------------------- numbers */

/* 10^0 .. 10^22 are exact in binary64. */
static const double pow10_exact[23] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* Bytes that may not touch the end of a number (they would make it a
 * malformed token such as "1.2.3", "1e", "1.5abc" or "2+3"). */
static int is_token_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '.' || c == '_' || c == '+' || c == '-';
}

/*
 * The grammar is [+-]? (D+ ('.' D*)? | '.' D+) ([eE] [+-]? D+)?.
 * Returns the end of the number or NULL; *overflow is set when the text is a
 * well-formed decimal whose value is out of the double range ("1e999").
 */
static const char *parse_num(const char *p, const char *end, double *out, int *overflow)
{
	const char *s = p;
	int neg = 0;
	*overflow = 0;
	if (s < end && (*s == '+' || *s == '-')) {
		neg = *s == '-';
		s++;
	}
	uint64_t w = 0;       /* the first 19 significant digits */
	int nd = 0;           /* significant digits in w */
	int truncated = 0;    /* a nonzero digit did not fit in w */
	long e10 = 0;         /* value = w * 10^e10 (when not truncated) */
	int ndigits = 0;      /* all mantissa digits, significant or not */
	while (s < end && (unsigned)(*s - '0') < 10) {
		unsigned d = (unsigned)(*s - '0');
		if (nd < 19) {
			if (w || d) {
				w = w * 10 + d;
				nd++;
			}
		} else {
			if (e10 < 100000)
				e10++;
			truncated |= d != 0;
		}
		ndigits++;
		s++;
	}
	if (s < end && *s == '.') {
		s++;
		while (s < end && (unsigned)(*s - '0') < 10) {
			unsigned d = (unsigned)(*s - '0');
			if (nd < 19) {
				if (w || d) {
					w = w * 10 + d;
					nd++;
				}
				if (e10 > -100000)
					e10--;
			} else {
				truncated |= d != 0;
			}
			ndigits++;
			s++;
		}
	}
	if (ndigits == 0)
		return NULL;
	if (s < end && (*s == 'e' || *s == 'E')) {
		s++;
		int eneg = 0;
		if (s < end && (*s == '+' || *s == '-')) {
			eneg = *s == '-';
			s++;
		}
		if (s >= end || (unsigned)(*s - '0') >= 10)
			return NULL; /* "1e", "1e+" */
		long x = 0;
		while (s < end && (unsigned)(*s - '0') < 10) {
			if (x < 1000000)
				x = x * 10 + (*s - '0');
			s++;
		}
		e10 += eneg ? -x : x;
	}
	if (s < end && is_token_char((unsigned char)*s))
		return NULL;

	double v;
	if (!truncated && w == 0) {
		v = 0.0;
	} else if (!truncated && w <= ((uint64_t)1 << 53) && e10 >= -22 && e10 <= 22) {
		/* Clinger: w and 10^|e10| are exact, so one operation rounds correctly. */
		v = (double)w;
		v = e10 < 0 ? v / pow10_exact[-e10] : v * pow10_exact[e10];
	} else {
		size_t n = (size_t)(s - p);
		char small[128];
		char *tmp = n < sizeof(small) ? small : xmalloc(n + 1);
		memcpy(tmp, p, n);
		tmp[n] = '\0';
		v = strtod(tmp, NULL);
		if (tmp != small)
			free(tmp);
		if (!isfinite(v)) {
			*overflow = 1;
			return NULL;
		}
		*out = v;
		return s;
	}
	*out = neg ? -v : v;
	return s;
}

const char *vpa_parse_double(const char *p, const char *end, double *out)
{
	int overflow;
	return parse_num(p, end, out, &overflow);
}

/* ------------------------------------------------------------ file access */

/* A file's bytes: mapped when possible, else read into memory. */
struct mapped {
	const char *data;
	size_t len;
	void *map;   /* munmap(map, len) when not NULL */
	char *heap;  /* free() when not NULL */
};

static int map_file(const char *path, struct mapped *m, struct vpa_err *err)
{
	struct vpa_loc loc = {path, 0, 0};
	memset(m, 0, sizeof(*m));
	m->data = "";
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return vpa_fail(err, VPA_EIO, &loc, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return vpa_fail(err, VPA_EIO, &loc, "cannot stat: %s", strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return vpa_fail(err, VPA_EIO, &loc, "is a folder, expected a file");
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
			m->map = p;
			m->data = p;
			m->len = (size_t)st.st_size;
			vpa_input_note(path, p, m->len);
			return 0;
		}
	}
	close(fd);
	if (S_ISREG(st.st_mode) && st.st_size == 0) {
		vpa_input_note(path, "", 0);
		return 0;
	}
	/* Pipes, character devices, or mmap refused: read it all. */
	char *d;
	size_t n;
	int rc = vpa_read_file(path, &d, &n, err);
	if (rc)
		return rc;
	m->heap = d;
	m->data = d;
	m->len = n;
	return 0;
}

static void unmap_file(struct mapped *m)
{
	if (m->map)
		munmap(m->map, m->len);
	free(m->heap);
	memset(m, 0, sizeof(*m));
}

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

static void lines_init(struct lines *L, const char *name, const char *buf, size_t len)
{
	if (!buf) /* (NULL, 0) is an empty file */
		buf = "";
	L->p = buf;
	L->end = buf + len;
	L->name = name;
	L->line = 0;
	L->nt = 0;
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Quote at most 40 bytes of a token for a message, e.g. 'abc' or 'abcd...'.
 * Returns buf.
 */
static const char *quote(char *buf, size_t cap, const char *s, size_t n)
{
	size_t k = n > 40 ? 40 : n;
	snprintf(buf, cap, "'%.*s%s'", (int)k, s, n > k ? "..." : "");
	return buf;
}

static long col_of(const struct lines *L, const char *at)
{
	return (long)(at - L->ls) + 1;
}

/*
 * Advance to the next data line and split it into tokens.  Returns 1 with a
 * line, 0 at the end, or a negative status.
 */
static int lines_next(struct lines *L, struct vpa_err *err)
{
	while (L->p < L->end) {
		const char *p = L->p;
		const char *nl = memchr(p, '\n', (size_t)(L->end - p));
		const char *le = nl ? nl : L->end;
		L->p = nl ? nl + 1 : L->end;
		L->line++;
		L->ls = p;
		if ((size_t)(le - p) > MAX_LINE) {
			struct vpa_loc loc = {L->name, L->line, 0};
			return vpa_fail(err, VPA_EINPUT, &loc,
					"line too long (over 1 MiB): is this a text file?");
		}
		if (le > p && le[-1] == '\r')
			le--;
		const char *q = p;
		int nt = 0;
		for (;;) {
			while (q < le && is_ws(*q))
				q++;
			if (q == le)
				break;
			if (nt == 0 && *q == '#')
				break;
			const char *s = q;
			while (q < le && !is_ws(*q))
				q++;
			if (nt < MAX_TOK) {
				L->t[nt].s = s;
				L->t[nt].n = (size_t)(q - s);
			}
			nt++;
		}
		if (nt == 0)
			continue;
		L->nt = nt;
		return 1;
	}
	return 0;
}

/* A NUL byte anywhere is an error (binary file); report its line and column. */
static int check_nul(const char *name, const char *buf, size_t len, struct vpa_err *err)
{
	const char *z = len ? memchr(buf, '\0', len) : NULL;
	if (!z)
		return 0;
	long line = 1;
	const char *ls = buf;
	for (const char *q = buf; q < z; q++)
		if (*q == '\n') {
			line++;
			ls = q + 1;
		}
	struct vpa_loc loc = {name, line, (long)(z - ls) + 1};
	return vpa_fail(err, VPA_EINPUT, &loc, "NUL byte in a text file (binary file?)");
}

/* Parse token k of the current line as a finite number. */
static int tok_number(const struct lines *L, int k, const char *what, double *out,
		      struct vpa_err *err)
{
	const struct tok *t = &L->t[k];
	int overflow;
	if (parse_num(t->s, t->s + t->n, out, &overflow) == t->s + t->n)
		return 0;
	struct vpa_loc loc = {L->name, L->line, col_of(L, t->s)};
	char q[64];
	quote(q, sizeof(q), t->s, t->n);
	if (overflow)
		return vpa_fail(err, VPA_EINPUT, &loc, "%s is not finite: %s", what, q);
	/* nan, inf, infinity with an optional sign and any case */
	const char *s = t->s;
	size_t n = t->n;
	if (n && (*s == '+' || *s == '-')) {
		s++;
		n--;
	}
	if ((n == 3 && (!strncasecmp(s, "nan", 3) || !strncasecmp(s, "inf", 3))) ||
	    (n == 8 && !strncasecmp(s, "infinity", 8)))
		return vpa_fail(err, VPA_EINPUT, &loc, "%s is not finite: %s", what, q);
	return vpa_fail(err, VPA_EINPUT, &loc, "expected a number, got %s", q);
}

/* Labels: target|tar|1 -> 1, nontarget|non|0 -> 0. */
static int tok_label(const struct lines *L, int k, int *is_tar, struct vpa_err *err)
{
	const struct tok *t = &L->t[k];
	const char *s = t->s;
	switch (t->n) {
	case 1:
		if (*s == '1' || *s == '0') {
			*is_tar = *s == '1';
			return 0;
		}
		break;
	case 3:
		if (!memcmp(s, "tar", 3) || !memcmp(s, "non", 3)) {
			*is_tar = s[0] == 't';
			return 0;
		}
		break;
	case 6:
		if (!memcmp(s, "target", 6)) {
			*is_tar = 1;
			return 0;
		}
		break;
	case 9:
		if (!memcmp(s, "nontarget", 9)) {
			*is_tar = 0;
			return 0;
		}
		break;
	}
	struct vpa_loc loc = {L->name, L->line, col_of(L, s)};
	char q[64];
	return vpa_fail(err, VPA_EINPUT, &loc,
			"unknown label %s: expected target, nontarget, tar, non, 1 or 0",
			quote(q, sizeof(q), s, t->n));
}

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

static void dpush(struct dvec *a, double x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->v = xrealloc(a->v, xmul(a->cap, sizeof(*a->v)));
	}
	a->v[a->n++] = x;
}

static void upush(struct uvec *a, uint32_t x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->v = xrealloc(a->v, xmul(a->cap, sizeof(*a->v)));
	}
	a->v[a->n++] = x;
}

static void lpush(struct lvec *a, long x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->v = xrealloc(a->v, xmul(a->cap, sizeof(*a->v)));
	}
	a->v[a->n++] = x;
}

/* Shrink to fit and hand over the array (NULL when empty). */
static double *dtake(struct dvec *a)
{
	double *v = a->n ? xrealloc(a->v, a->n * sizeof(*v)) : (free(a->v), NULL);
	a->v = NULL;
	a->cap = 0;
	return v;
}

static uint32_t *utake(struct uvec *a)
{
	uint32_t *v = a->n ? xrealloc(a->v, a->n * sizeof(*v)) : (free(a->v), NULL);
	a->v = NULL;
	a->cap = 0;
	return v;
}

/* ------------------------------------------------------------ id interning */

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (n * 0xff51afd7ed558ccdULL);
	while (n >= 8) {
		uint64_t x;
		memcpy(&x, s, 8);
		h = (h ^ x) * 0xc4ceb9fe1a85ec53ULL;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	uint64_t x = 0;
	memcpy(&x, s, n);
	h = (h ^ x) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 32;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 29;
	return h;
}

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

static void intern_release(struct intern *h)
{
	free(h->arena);
	free(h->offs);
	free(h->slots);
	memset(h, 0, sizeof(*h));
}

/* The id of index k (NUL-terminated, borrowed until intern_release). */
static const char *intern_str(const struct intern *h, size_t k, size_t *n)
{
	const char *r = h->arena + h->offs[k];
	uint32_t len;
	memcpy(&len, r + 4, 4);
	*n = len;
	return r + 8;
}

/*
 * A zeroed hash table.  Big tables are probed at random, so TLB misses cost as
 * much as cache misses: ask for transparent huge pages (2 MiB aligned).
 */
static void *alloc_table(size_t bytes)
{
	const size_t huge = (size_t)2 << 20;
	void *p;
	if (bytes < huge)
		return xcalloc(1, bytes);
	bytes = (bytes + huge - 1) / huge * huge;
	p = aligned_alloc(huge, bytes);
	if (!p)
		return xcalloc(1, bytes);
	madvise(p, bytes, MADV_HUGEPAGE);
	memset(p, 0, bytes);
	return p;
}

static void intern_rehash(struct intern *h, size_t nslots)
{
	struct islot *old = h->slots;
	size_t nold = old ? h->mask + 1 : 0;
	h->slots = alloc_table(xmul(nslots, sizeof(*h->slots)));
	h->mask = nslots - 1;
	for (size_t i = 0; i < nold; i++) {
		if (!old[i].off)
			continue;
		size_t j = old[i].hash & h->mask;
		while (h->slots[j].off)
			j = (j + 1) & h->mask;
		h->slots[j] = old[i];
	}
	free(old);
}

/* Index of s, or -1 when absent. */
static long intern_find(const struct intern *h, const char *s, size_t n, uint64_t hv)
{
	if (!h->slots)
		return -1;
	for (size_t j = hv & h->mask;; j = (j + 1) & h->mask) {
		const struct islot *sl = &h->slots[j];
		if (!sl->off)
			return -1;
		if (sl->hash != hv)
			continue;
		const char *r = h->arena + sl->off - 1;
		uint32_t idx, len;
		memcpy(&len, r + 4, 4);
		if (len == n && !memcmp(r + 8, s, n)) {
			memcpy(&idx, r, 4);
			return idx;
		}
	}
}

/* Prefetch the home slot of a hash (stage 1 of a batched lookup). */
static void intern_prefetch_slot(const struct intern *h, uint64_t hv)
{
	if (h->slots)
		__builtin_prefetch(&h->slots[hv & h->mask]);
}

/* Prefetch the record the home slot points to (stage 2). */
static void intern_prefetch_rec(const struct intern *h, uint64_t hv)
{
	if (h->slots) {
		const struct islot *sl = &h->slots[hv & h->mask];
		if (sl->off)
			__builtin_prefetch(h->arena + sl->off - 1);
	}
}

/*
 * Index of s (whose hash_bytes is hv), adding it when new; -1 when the table
 * is full (2^32 - 2 ids).
 */
static long intern_add_h(struct intern *h, const char *s, size_t n, uint64_t hv)
{
	if (h->last_s && n == h->last_n && !memcmp(s, h->last_s, n))
		return h->last_idx;
	long k = intern_find(h, s, n, hv);
	if (k < 0) {
		if (h->n >= UINT32_MAX - 1 || n > UINT32_MAX)
			return -1;
		if (h->n == h->cap) {
			h->cap = h->cap ? 2 * h->cap : 256;
			h->offs = xrealloc(h->offs, xmul(h->cap, sizeof(*h->offs)));
		}
		size_t need = 8 + n + 1;
		if (h->alen + need > h->acap) {
			size_t cap = h->acap ? h->acap : 4096;
			while (cap < h->alen + need)
				cap *= 2;
			h->arena = xrealloc(h->arena, cap);
			h->acap = cap;
		}
		uint32_t idx = (uint32_t)h->n, len = (uint32_t)n;
		char *r = h->arena + h->alen;
		memcpy(r, &idx, 4);
		memcpy(r + 4, &len, 4);
		memcpy(r + 8, s, n);
		r[8 + n] = '\0';
		h->offs[h->n++] = h->alen;
		if (!h->slots || 2 * h->n > h->mask + 1)
			intern_rehash(h, h->slots ? 2 * (h->mask + 1) : 1024);
		size_t j = hv & h->mask;
		while (h->slots[j].off)
			j = (j + 1) & h->mask;
		h->slots[j].hash = hv;
		h->slots[j].off = h->alen + 1;
		h->alen += need;
		k = idx;
	}
	h->last_s = s;
	h->last_n = n;
	h->last_idx = (uint32_t)k;
	return k;
}

static int intern_tok(struct intern *h, const struct lines *L, int k, uint32_t *out,
		      struct vpa_err *err)
{
	long id = intern_add_h(h, L->t[k].s, L->t[k].n, hash_bytes(L->t[k].s, L->t[k].n));
	if (id < 0) {
		struct vpa_loc loc = {L->name, L->line, 0};
		return vpa_fail(err, VPA_EINPUT, &loc, "too many distinct ids (over 2^32)");
	}
	*out = (uint32_t)id;
	return 0;
}

/* Hand the ids over as an owned char ** array (NULL when none); resets h. */
static char **intern_take(struct intern *h, size_t *n)
{
	char **ids = h->n ? xmalloc(xmul(h->n, sizeof(*ids))) : NULL;
	for (size_t i = 0; i < h->n; i++) {
		size_t len;
		const char *s = intern_str(h, i, &len);
		ids[i] = xmalloc(len + 1);
		memcpy(ids[i], s, len + 1);
	}
	*n = h->n;
	intern_release(h);
	return ids;
}

/* -------------------------------------------------------------- trials */

void vpa_trials_init(struct vpa_trials *t)
{
	memset(t, 0, sizeof(*t));
}

void vpa_trials_release(struct vpa_trials *t)
{
	free(t->tar);
	free(t->non);
	free(t->tar_e);
	free(t->tar_t);
	free(t->non_e);
	free(t->non_t);
	for (size_t i = 0; i < t->n_ids_e; i++)
		free(t->ids_e[i]);
	for (size_t i = 0; i < t->n_ids_t; i++)
		free(t->ids_t[i]);
	free(t->ids_e);
	free(t->ids_t);
	vpa_trials_init(t);
}

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

static int flush_pending(struct collect *c, const char *name, struct vpa_err *err)
{
	int n = c->npend;
	c->npend = 0;
	for (int i = 0; i < n; i++) {
		struct pending *q = &c->pend[i];
		q->he = hash_bytes(q->e.s, q->e.n);
		q->ht = hash_bytes(q->t.s, q->t.n);
		intern_prefetch_slot(&c->ie, q->he);
		intern_prefetch_slot(&c->it, q->ht);
	}
	for (int i = 0; i < n; i++) {
		intern_prefetch_rec(&c->ie, c->pend[i].he);
		intern_prefetch_rec(&c->it, c->pend[i].ht);
	}
	for (int i = 0; i < n; i++) {
		struct pending *q = &c->pend[i];
		long e = intern_add_h(&c->ie, q->e.s, q->e.n, q->he);
		long t = intern_add_h(&c->it, q->t.s, q->t.n, q->ht);
		if (e < 0 || t < 0) {
			struct vpa_loc loc = {name, q->line, 0};
			return vpa_fail(err, VPA_EINPUT, &loc, "too many distinct ids (over 2^32)");
		}
		upush(q->is_tar ? &c->tar_e : &c->non_e, (uint32_t)e);
		upush(q->is_tar ? &c->tar_t : &c->non_t, (uint32_t)t);
	}
	return 0;
}

static void collect_release(struct collect *c)
{
	free(c->tar.v);
	free(c->non.v);
	free(c->tar_e.v);
	free(c->tar_t.v);
	free(c->non_e.v);
	free(c->non_t.v);
	intern_release(&c->ie);
	intern_release(&c->it);
	memset(c, 0, sizeof(*c));
}

static void collect_take(struct collect *c, struct vpa_trials *out, int with_ids)
{
	out->n_tar = c->tar.n;
	out->n_non = c->non.n;
	out->tar = dtake(&c->tar);
	out->non = dtake(&c->non);
	if (with_ids) {
		out->tar_e = utake(&c->tar_e);
		out->tar_t = utake(&c->tar_t);
		out->non_e = utake(&c->non_e);
		out->non_t = utake(&c->non_t);
		out->ids_e = intern_take(&c->ie, &out->n_ids_e);
		out->ids_t = intern_take(&c->it, &out->n_ids_t);
	}
	collect_release(c);
}

int vpa_parse_scores(const char *name, const char *buf, size_t len,
		     struct vpa_trials *out, struct vpa_err *err)
{
	struct collect c;
	struct lines L;
	int rc, ncol = 0;
	long first_line = 0;
	memset(&c, 0, sizeof(c));
	vpa_trials_init(out);
	if ((rc = check_nul(name, buf, len, err)))
		goto out;
	lines_init(&L, name, buf, len);
	while ((rc = lines_next(&L, err)) == 1) {
		if (!ncol) {
			if (L.nt != 2 && L.nt != 4) {
				struct vpa_loc loc = {name, L.line, 0};
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "expected 2 columns (score label) or 4 (enroll test "
					      "score label), found %d", L.nt);
				goto out;
			}
			ncol = L.nt;
			first_line = L.line;
		} else if (L.nt != ncol) {
			struct vpa_loc loc = {name, L.line, 0};
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "expected %d columns as on line %ld, found %d", ncol,
				      first_line, L.nt);
			goto out;
		}
		double s = 0;
		int is_tar = 0;
		if ((rc = tok_number(&L, ncol - 2, "score", &s, err)) ||
		    (rc = tok_label(&L, ncol - 1, &is_tar, err)))
			goto out;
		dpush(is_tar ? &c.tar : &c.non, s);
		if (ncol == 4) {
			struct pending *q = &c.pend[c.npend++];
			q->e = L.t[0];
			q->t = L.t[1];
			q->line = L.line;
			q->is_tar = is_tar;
			if (c.npend == BATCH && (rc = flush_pending(&c, name, err)))
				goto out;
		}
	}
	if (rc < 0)
		goto out;
	if ((rc = flush_pending(&c, name, err)))
		goto out;
	if (!ncol) {
		struct vpa_loc loc = {name, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &loc, "no trials");
		goto out;
	}
	collect_take(&c, out, ncol == 4);
	rc = 0;
out:
	collect_release(&c);
	return rc;
}

int vpa_read_scores(const char *path, struct vpa_trials *out, struct vpa_err *err)
{
	struct mapped m;
	vpa_trials_init(out);
	int rc = map_file(path, &m, err);
	if (rc)
		return rc;
	rc = vpa_parse_scores(path, m.data, m.len, out, err);
	unmap_file(&m);
	return rc;
}

/* ------------------------------------------------------- scores + key */

/* (enroll index, test index) -> entry index, open addressing. */
struct pairmap {
	uint64_t *keys;  /* e << 32 | t */
	uint32_t *vals;  /* entry index + 1, 0 = empty */
	size_t n, mask;
};

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void pairmap_release(struct pairmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static void pairmap_grow(struct pairmap *m)
{
	size_t old = m->vals ? m->mask + 1 : 0, nslots = old ? 2 * old : 1024;
	uint64_t *keys = m->keys;
	uint32_t *vals = m->vals;
	m->keys = xmalloc(xmul(nslots, sizeof(*m->keys)));
	m->vals = xcalloc(nslots, sizeof(*m->vals));
	m->mask = nslots - 1;
	for (size_t i = 0; i < old; i++) {
		if (!vals[i])
			continue;
		size_t j = mix64(keys[i]) & m->mask;
		while (m->vals[j])
			j = (j + 1) & m->mask;
		m->keys[j] = keys[i];
		m->vals[j] = vals[i];
	}
	free(keys);
	free(vals);
}

/* Entry index of the pair, or -1. */
static long pairmap_find(const struct pairmap *m, uint64_t key)
{
	if (!m->vals)
		return -1;
	for (size_t j = mix64(key) & m->mask; m->vals[j]; j = (j + 1) & m->mask)
		if (m->keys[j] == key)
			return (long)m->vals[j] - 1;
	return -1;
}

static void pairmap_put(struct pairmap *m, uint64_t key, uint32_t val)
{
	if (!m->vals || 2 * (m->n + 1) > m->mask + 1)
		pairmap_grow(m);
	size_t j = mix64(key) & m->mask;
	while (m->vals[j])
		j = (j + 1) & m->mask;
	m->keys[j] = key;
	m->vals[j] = val + 1;
	m->n++;
}

int vpa_parse_scores_key(const char *sname, const char *sbuf, size_t slen,
			 const char *kname, const char *kbuf, size_t klen,
			 struct vpa_trials *out, struct vpa_err *err)
{
	struct collect c;
	struct intern ie = {0}, it = {0};
	struct pairmap pm = {0};
	struct dvec score = {0};
	struct uvec pe = {0}, pt = {0};
	struct lvec sline = {0}, kline = {0}; /* kline: key line, 0 = not matched */
	char *label = NULL;
	struct lines L;
	int rc;
	char q1[64], q2[64];
	memset(&c, 0, sizeof(c));
	vpa_trials_init(out);

	/* 1. the scores, each pair once */
	if ((rc = check_nul(sname, sbuf, slen, err)))
		goto out;
	lines_init(&L, sname, sbuf, slen);
	while ((rc = lines_next(&L, err)) == 1) {
		struct vpa_loc loc = {sname, L.line, 0};
		if (L.nt != 3) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "expected 3 columns (enroll test score), found %d", L.nt);
			goto out;
		}
		double s = 0;
		uint32_t e = 0, t = 0;
		if ((rc = tok_number(&L, 2, "score", &s, err)) ||
		    (rc = intern_tok(&ie, &L, 0, &e, err)) ||
		    (rc = intern_tok(&it, &L, 1, &t, err)))
			goto out;
		uint64_t key = (uint64_t)e << 32 | t;
		long prev = pairmap_find(&pm, key);
		if (prev >= 0) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "duplicate pair %s %s (first on line %ld)",
				      quote(q1, sizeof(q1), L.t[0].s, L.t[0].n),
				      quote(q2, sizeof(q2), L.t[1].s, L.t[1].n),
				      sline.v[prev]);
			goto out;
		}
		if (score.n >= UINT32_MAX - 1) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "too many trials (over 2^32)");
			goto out;
		}
		pairmap_put(&pm, key, (uint32_t)score.n);
		dpush(&score, s);
		upush(&pe, e);
		upush(&pt, t);
		lpush(&sline, L.line);
		lpush(&kline, 0);
	}
	if (rc < 0)
		goto out;
	if (score.n == 0) {
		struct vpa_loc loc = {sname, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &loc, "no trials");
		goto out;
	}

	/* 2. the key: every pair must be scored, once */
	label = xcalloc(score.n, 1);
	if ((rc = check_nul(kname, kbuf, klen, err)))
		goto out;
	lines_init(&L, kname, kbuf, klen);
	while ((rc = lines_next(&L, err)) == 1) {
		struct vpa_loc loc = {kname, L.line, 0};
		if (L.nt != 3) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "expected 3 columns (enroll test target|nontarget), found %d",
				      L.nt);
			goto out;
		}
		int is_tar = 0;
		if ((rc = tok_label(&L, 2, &is_tar, err)))
			goto out;
		long e = intern_find(&ie, L.t[0].s, L.t[0].n, hash_bytes(L.t[0].s, L.t[0].n));
		long t = intern_find(&it, L.t[1].s, L.t[1].n, hash_bytes(L.t[1].s, L.t[1].n));
		long k = e < 0 || t < 0 ? -1 : pairmap_find(&pm, (uint64_t)e << 32 | (uint64_t)t);
		quote(q1, sizeof(q1), L.t[0].s, L.t[0].n);
		quote(q2, sizeof(q2), L.t[1].s, L.t[1].n);
		if (k < 0) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "pair %s %s is in the key but not in the scores (%s)", q1,
				      q2, sname);
			goto out;
		}
		if (kline.v[k]) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "duplicate pair %s %s (first on line %ld)", q1, q2,
				      kline.v[k]);
			goto out;
		}
		kline.v[k] = L.line;
		label[k] = (char)is_tar;
	}
	if (rc < 0)
		goto out;

	/* 3. every scored pair must be in the key; collect in score-file order */
	for (size_t i = 0; i < score.n; i++) {
		if (!kline.v[i]) {
			struct vpa_loc loc = {sname, sline.v[i], 0};
			size_t ne, nt;
			const char *se = intern_str(&ie, pe.v[i], &ne);
			const char *st = intern_str(&it, pt.v[i], &nt);
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "pair %s %s is in the scores but not in the key (%s)",
				      quote(q1, sizeof(q1), se, ne), quote(q2, sizeof(q2), st, nt),
				      kname);
			goto out;
		}
		int t = label[i];
		dpush(t ? &c.tar : &c.non, score.v[i]);
		upush(t ? &c.tar_e : &c.non_e, pe.v[i]);
		upush(t ? &c.tar_t : &c.non_t, pt.v[i]);
	}
	c.ie = ie;
	c.it = it;
	memset(&ie, 0, sizeof(ie));
	memset(&it, 0, sizeof(it));
	collect_take(&c, out, 1);
	rc = 0;
out:
	collect_release(&c);
	intern_release(&ie);
	intern_release(&it);
	pairmap_release(&pm);
	free(score.v);
	free(pe.v);
	free(pt.v);
	free(sline.v);
	free(kline.v);
	free(label);
	return rc;
}

int vpa_read_scores_key(const char *scores, const char *key, struct vpa_trials *out,
			struct vpa_err *err)
{
	struct mapped ms, mk;
	vpa_trials_init(out);
	int rc = map_file(scores, &ms, err);
	if (rc)
		return rc;
	rc = map_file(key, &mk, err);
	if (rc) {
		unmap_file(&ms);
		return rc;
	}
	rc = vpa_parse_scores_key(scores, ms.data, ms.len, key, mk.data, mk.len, out, err);
	unmap_file(&mk);
	unmap_file(&ms);
	return rc;
}

/* ------------------------------------------------------------ score lists */

static int has_npy_magic(const char *buf, size_t len)
{
	return len >= 6 && !memcmp(buf, "\x93NUMPY", 6);
}

static int ends_with_npy(const char *path)
{
	size_t n = strlen(path);
	return n >= 4 && !strcmp(path + n - 4, ".npy");
}

/* Takes the array of a 1-D .npy and checks it holds finite numbers. */
static int npy_to_list(const char *name, struct vpa_npy *a, double **x, size_t *n,
		       struct vpa_err *err)
{
	struct vpa_loc loc = {name, 0, 0};
	int rc = 0;
	if (a->ndim != 1) {
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "expected a 1-D array of scores, got shape (%zu, %zu)",
			      a->shape[0], a->shape[1]);
		goto out;
	}
	if (a->shape[0] == 0) {
		rc = vpa_fail(err, VPA_EINPUT, &loc, "no scores (the array is empty)");
		goto out;
	}
	for (size_t i = 0; i < a->shape[0]; i++)
		if (!isfinite(a->data[i])) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "element %zu (0-based) is not finite (%s)", i,
				      isnan(a->data[i]) ? "nan" : "inf");
			goto out;
		}
	*x = a->data;
	*n = a->shape[0];
	a->data = NULL;
out:
	vpa_npy_release(a);
	return rc;
}

int vpa_parse_score_list(const char *name, const char *buf, size_t len, double **x,
			 size_t *n, struct vpa_err *err)
{
	*x = NULL;
	*n = 0;
	if (!buf)
		buf = "";
	if (has_npy_magic(buf, len)) {
		struct vpa_npy a;
		int rc = vpa_npy_parse(name, (const unsigned char *)buf, len, &a, err);
		if (rc)
			return rc;
		return npy_to_list(name, &a, x, n, err);
	}
	struct dvec v = {0};
	struct lines L;
	int rc;
	if ((rc = check_nul(name, buf, len, err)))
		goto out;
	lines_init(&L, name, buf, len);
	while ((rc = lines_next(&L, err)) == 1) {
		if (L.nt != 1) {
			struct vpa_loc loc = {name, L.line, 0};
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "expected one score per line, found %d columns", L.nt);
			goto out;
		}
		double s = 0;
		if ((rc = tok_number(&L, 0, "score", &s, err)))
			goto out;
		dpush(&v, s);
	}
	if (rc < 0)
		goto out;
	if (v.n == 0) {
		struct vpa_loc loc = {name, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &loc, "no scores");
		goto out;
	}
	*n = v.n;
	*x = dtake(&v);
	rc = 0;
out:
	free(v.v);
	return rc;
}

int vpa_read_score_list(const char *path, double **x, size_t *n, struct vpa_err *err)
{
	*x = NULL;
	*n = 0;
	/* A .npy is read straight into its array (no copy of a big file). */
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		char magic[6];
		ssize_t got = read(fd, magic, sizeof(magic));
		close(fd);
		fd = -1;
		if ((got == 6 && has_npy_magic(magic, 6)) || ends_with_npy(path)) {
			struct vpa_npy a;
			int rc = vpa_npy_read(path, &a, err);
			if (rc)
				return rc;
			return npy_to_list(path, &a, x, n, err);
		}
	}
	if (fd >= 0)
		close(fd);
	struct mapped m;
	int rc = map_file(path, &m, err);
	if (rc)
		return rc;
	rc = vpa_parse_score_list(path, m.data, m.len, x, n, err);
	unmap_file(&m);
	return rc;
}
