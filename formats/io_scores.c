/*
 * formats/io_scores.c - score files (2 or 4 columns) and one-class score lists,
 * with the growable arrays, the id interning tables and the trial collection
 * they share with the scores + key reader.  See io.h for the formats.
 * Split into formats/io_scores.c (this file), formats/io_scores_lex.c (the fast
 * decimal parser, file access, the line tokenizer), formats/io_scores_key.c
 * (scores + trial key) and formats/io_scores_int.h (what they share).
 *
 * Speed: a file is mapped (mmap) and parsed in place, one memchr per line to
 * find its end, a hand-written tokenizer and vpa_parse_double (Clinger's exact
 * fast path, strtod otherwise).  Ids are interned in open-addressing hash
 * tables, so a 10M-line file is read in about a second.
 */
#include "formats/io_scores_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------- growable arrays */

void vpa_scores_dpush(struct dvec *a, double x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->v = xrealloc(a->v, xmul(a->cap, sizeof(*a->v)));
	}
	a->v[a->n++] = x;
}

void vpa_scores_upush(struct uvec *a, uint32_t x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->v = xrealloc(a->v, xmul(a->cap, sizeof(*a->v)));
	}
	a->v[a->n++] = x;
}

void vpa_scores_lpush(struct lvec *a, long x)
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

uint64_t vpa_scores_hash_bytes(const char *s, size_t n)
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

void vpa_scores_intern_release(struct intern *h)
{
	free(h->arena);
	free(h->offs);
	free(h->slots);
	memset(h, 0, sizeof(*h));
}

/* The id of index k (NUL-terminated, borrowed until intern_release). */
const char *vpa_scores_intern_str(const struct intern *h, size_t k, size_t *n)
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
long vpa_scores_intern_find(const struct intern *h, const char *s, size_t n, uint64_t hv)
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
	long k = vpa_scores_intern_find(h, s, n, hv);
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

int vpa_scores_intern_tok(struct intern *h, const struct lines *L, int k, uint32_t *out,
			  struct vpa_err *err)
{
	long id = intern_add_h(h, L->t[k].s, L->t[k].n,
			       vpa_scores_hash_bytes(L->t[k].s, L->t[k].n));
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
		const char *s = vpa_scores_intern_str(h, i, &len);
		ids[i] = xmalloc(len + 1);
		memcpy(ids[i], s, len + 1);
	}
	*n = h->n;
	vpa_scores_intern_release(h);
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

static int flush_pending(struct collect *c, const char *name, struct vpa_err *err)
{
	int n = c->npend;
	c->npend = 0;
	for (int i = 0; i < n; i++) {
		struct pending *q = &c->pend[i];
		q->he = vpa_scores_hash_bytes(q->e.s, q->e.n);
		q->ht = vpa_scores_hash_bytes(q->t.s, q->t.n);
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
		vpa_scores_upush(q->is_tar ? &c->tar_e : &c->non_e, (uint32_t)e);
		vpa_scores_upush(q->is_tar ? &c->tar_t : &c->non_t, (uint32_t)t);
	}
	return 0;
}

void vpa_scores_collect_release(struct collect *c)
{
	free(c->tar.v);
	free(c->non.v);
	free(c->tar_e.v);
	free(c->tar_t.v);
	free(c->non_e.v);
	free(c->non_t.v);
	vpa_scores_intern_release(&c->ie);
	vpa_scores_intern_release(&c->it);
	memset(c, 0, sizeof(*c));
}

void vpa_scores_collect_take(struct collect *c, struct vpa_trials *out, int with_ids)
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
	vpa_scores_collect_release(c);
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
	if ((rc = vpa_scores_check_nul(name, buf, len, err)))
		goto out;
	vpa_scores_lines_init(&L, name, buf, len);
	while ((rc = vpa_scores_lines_next(&L, err)) == 1) {
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
		if ((rc = vpa_scores_tok_number(&L, ncol - 2, "score", &s, err)) ||
		    (rc = vpa_scores_tok_label(&L, ncol - 1, &is_tar, err)))
			goto out;
		vpa_scores_dpush(is_tar ? &c.tar : &c.non, s);
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
	vpa_scores_collect_take(&c, out, ncol == 4);
	rc = 0;
out:
	vpa_scores_collect_release(&c);
	return rc;
}

int vpa_read_scores(const char *path, struct vpa_trials *out, struct vpa_err *err)
{
	struct mapped m;
	vpa_trials_init(out);
	int rc = vpa_scores_map_file(path, &m, err);
	if (rc)
		return rc;
	rc = vpa_parse_scores(path, m.data, m.len, out, err);
	vpa_scores_unmap_file(&m);
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
	if ((rc = vpa_scores_check_nul(name, buf, len, err)))
		goto out;
	vpa_scores_lines_init(&L, name, buf, len);
	while ((rc = vpa_scores_lines_next(&L, err)) == 1) {
		if (L.nt != 1) {
			struct vpa_loc loc = {name, L.line, 0};
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "expected one score per line, found %d columns", L.nt);
			goto out;
		}
		double s = 0;
		if ((rc = vpa_scores_tok_number(&L, 0, "score", &s, err)))
			goto out;
		vpa_scores_dpush(&v, s);
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
	return vpa_read_score_list_threads(path, x, n, 1, err);
}

int vpa_read_score_list_threads(const char *path, double **x, size_t *n, int threads,
				struct vpa_err *err)
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
			int rc = vpa_npy_read_threads(path, &a, threads, err);
			if (rc)
				return rc;
			return npy_to_list(path, &a, x, n, err);
		}
	}
	if (fd >= 0)
		close(fd);
	struct mapped m;
	int rc = vpa_scores_map_file(path, &m, err);
	if (rc)
		return rc;
	rc = vpa_parse_score_list(path, m.data, m.len, x, n, err);
	vpa_scores_unmap_file(&m);
	return rc;
}
