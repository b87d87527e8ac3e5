/*
 * formats/io_arpa.c - ARPA back-off language models: reader, scorer, writer.
 * See formats/arpa.h for the format and the scoring rules.
 *
 * Storage: one open-addressing hash table over all n-grams of all orders,
 * keyed by (k, w_1 .. w_k); the ids live in one pool.  Scoring a word costs at
 * most 2 * order lookups.  Probabilities and back-offs are kept in double, so
 * scores equal the file's decimal values to 1e-15 before summation.
 */
#include "formats/arpa.h"
#include "formats/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ent {
	uint32_t off; /* into keys */
	uint32_t k;
	double lp, bow;
};

struct vpa_arpa {
	size_t order;
	char **words;       /* (n_words), owned */
	size_t n_words, cap_words;
	int32_t *wtab;      /* word hash: id or -1, (wcap) */
	size_t wcap;
	struct ent *ents;   /* (n_ents), owned */
	size_t n_ents, cap_ents;
	int32_t *keys;      /* id pool, owned */
	size_t n_keys, cap_keys;
	uint32_t *tab;      /* n-gram hash: ent index + 1, 0 empty, (tcap) */
	size_t tcap;
	size_t count[VPA_ARPA_MAX_ORDER + 1];
	int32_t bos, eos, unk;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = vpa_fnv1a(s);
	return h ^ (h >> 29);
}

static uint64_t hash_ids(const int32_t *ids, size_t k)
{
	uint64_t h = 0x9e3779b97f4a7c15ull * (k + 1);
	for (size_t i = 0; i < k; i++) {
		h ^= (uint32_t)ids[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

struct vpa_arpa *vpa_arpa_new(size_t order)
{
	if (order < 1 || order > VPA_ARPA_MAX_ORDER)
		VPA_BUG("arpa order %zu", order);
	struct vpa_arpa *m = xcalloc(1, sizeof(*m));
	m->order = order;
	m->wcap = 64;
	m->wtab = xmalloc(m->wcap * sizeof(int32_t));
	memset(m->wtab, 0xff, m->wcap * sizeof(int32_t));
	m->tcap = 64;
	m->tab = xcalloc(m->tcap, sizeof(uint32_t));
	m->bos = m->eos = m->unk = VPA_ARPA_NONE;
	return m;
}

void vpa_arpa_free(struct vpa_arpa *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_words; i++)
		free(m->words[i]);
	free(m->words);
	free(m->wtab);
	free(m->ents);
	free(m->keys);
	free(m->tab);
	free(m);
}

size_t vpa_arpa_order(const struct vpa_arpa *m) { return m->order; }
size_t vpa_arpa_vocab_size(const struct vpa_arpa *m) { return m->n_words; }
size_t vpa_arpa_count(const struct vpa_arpa *m, size_t k)
{
	return k >= 1 && k <= m->order ? m->count[k] : 0;
}
int32_t vpa_arpa_bos(const struct vpa_arpa *m) { return m->bos; }
int32_t vpa_arpa_eos(const struct vpa_arpa *m) { return m->eos; }
int32_t vpa_arpa_unk(const struct vpa_arpa *m) { return m->unk; }

const char *vpa_arpa_word_str(const struct vpa_arpa *m, int32_t id)
{
	return id >= 0 && (size_t)id < m->n_words ? m->words[id] : "<none>";
}

int32_t vpa_arpa_word(const struct vpa_arpa *m, const char *w)
{
	size_t mask = m->wcap - 1;
	for (size_t i = hash_str(w) & mask;; i = (i + 1) & mask) {
		int32_t id = m->wtab[i];
		if (id < 0)
			return VPA_ARPA_NONE;
		if (!strcmp(m->words[id], w))
			return id;
	}
}

int32_t vpa_arpa_word_or_unk(const struct vpa_arpa *m, const char *w)
{
	int32_t id = vpa_arpa_word(m, w);
	return id == VPA_ARPA_NONE ? m->unk : id;
}

static void wtab_grow(struct vpa_arpa *m)
{
	size_t cap = m->wcap * 2;
	int32_t *t = xmalloc(xmul(cap, sizeof(int32_t)));
	memset(t, 0xff, cap * sizeof(int32_t));
	for (size_t id = 0; id < m->n_words; id++) {
		size_t i = hash_str(m->words[id]) & (cap - 1);
		while (t[i] >= 0)
			i = (i + 1) & (cap - 1);
		t[i] = (int32_t)id;
	}
	free(m->wtab);
	m->wtab = t;
	m->wcap = cap;
}

int32_t vpa_arpa_add_word(struct vpa_arpa *m, const char *w)
{
	int32_t id = vpa_arpa_word(m, w);
	if (id != VPA_ARPA_NONE)
		return id;
	if (m->n_words >= INT32_MAX - 1)
		VPA_BUG("too many words");
	if ((m->n_words + 1) * 2 > m->wcap)
		wtab_grow(m);
	if (m->n_words == m->cap_words) {
		m->cap_words = m->cap_words ? 2 * m->cap_words : 64;
		m->words = xrealloc(m->words, xmul(m->cap_words, sizeof(char *)));
	}
	id = (int32_t)m->n_words;
	m->words[m->n_words++] = xstrdup(w);
	size_t i = hash_str(w) & (m->wcap - 1);
	while (m->wtab[i] >= 0)
		i = (i + 1) & (m->wcap - 1);
	m->wtab[i] = id;
	if (!strcmp(w, "<s>"))
		m->bos = id;
	else if (!strcmp(w, "</s>"))
		m->eos = id;
	else if (!strcmp(w, "<unk>"))
		m->unk = id;
	return id;
}

/* Index of the entry for ids (k), or -1. */
static long find(const struct vpa_arpa *m, const int32_t *ids, size_t k)
{
	for (size_t i = 0; i < k; i++)
		if (ids[i] < 0)
			return -1;
	size_t mask = m->tcap - 1;
	for (size_t i = hash_ids(ids, k) & mask;; i = (i + 1) & mask) {
		uint32_t e = m->tab[i];
		if (!e)
			return -1;
		const struct ent *x = &m->ents[e - 1];
		if (x->k == k && !memcmp(&m->keys[x->off], ids, k * sizeof(int32_t)))
			return (long)(e - 1);
	}
}

static void tab_grow(struct vpa_arpa *m)
{
	size_t cap = m->tcap * 2;
	uint32_t *t = xcalloc(cap, sizeof(uint32_t));
	for (size_t e = 0; e < m->n_ents; e++) {
		const struct ent *x = &m->ents[e];
		size_t i = hash_ids(&m->keys[x->off], x->k) & (cap - 1);
		while (t[i])
			i = (i + 1) & (cap - 1);
		t[i] = (uint32_t)(e + 1);
	}
	free(m->tab);
	m->tab = t;
	m->tcap = cap;
}

int vpa_arpa_get(const struct vpa_arpa *m, const int32_t *ids, size_t k, double *logprob,
		 double *bow)
{
	long e = find(m, ids, k);
	if (e < 0)
		return 0;
	if (logprob)
		*logprob = m->ents[e].lp;
	if (bow)
		*bow = m->ents[e].bow;
	return 1;
}

void vpa_arpa_set(struct vpa_arpa *m, const int32_t *ids, size_t k, double logprob, double bow)
{
	if (k < 1 || k > m->order)
		VPA_BUG("n-gram order %zu of a %zu-gram model", k, m->order);
	for (size_t i = 0; i < k; i++)
		if (ids[i] < 0 || (size_t)ids[i] >= m->n_words)
			VPA_BUG("word id %d", (int)ids[i]);
	long e = find(m, ids, k);
	if (e >= 0) {
		m->ents[e].lp = logprob;
		m->ents[e].bow = bow;
		return;
	}
	if (m->n_ents >= UINT32_MAX - 1)
		VPA_BUG("too many n-grams");
	if ((m->n_ents + 1) * 2 > m->tcap)
		tab_grow(m);
	if (m->n_ents == m->cap_ents) {
		m->cap_ents = m->cap_ents ? 2 * m->cap_ents : 256;
		m->ents = xrealloc(m->ents, xmul(m->cap_ents, sizeof(struct ent)));
	}
	if (m->n_keys + k > m->cap_keys) {
		while (m->n_keys + k > m->cap_keys)
			m->cap_keys = m->cap_keys ? 2 * m->cap_keys : 1024;
		m->keys = xrealloc(m->keys, xmul(m->cap_keys, sizeof(int32_t)));
	}
	struct ent *x = &m->ents[m->n_ents];
	x->off = (uint32_t)m->n_keys;
	x->k = (uint32_t)k;
	x->lp = logprob;
	x->bow = bow;
	memcpy(&m->keys[m->n_keys], ids, k * sizeof(int32_t));
	m->n_keys += k;
	m->n_ents++;
	m->count[k]++;
	size_t i = hash_ids(ids, k) & (m->tcap - 1);
	while (m->tab[i])
		i = (i + 1) & (m->tcap - 1);
	m->tab[i] = (uint32_t)m->n_ents;
}

size_t vpa_arpa_n_entries(const struct vpa_arpa *m) { return m->n_ents; }

const int32_t *vpa_arpa_entry(const struct vpa_arpa *m, size_t i, size_t *k, double *logprob,
			      double *bow)
{
	const struct ent *x = &m->ents[i];
	*k = x->k;
	*logprob = x->lp;
	*bow = x->bow;
	return &m->keys[x->off];
}

/* ---- scoring -------------------------------------------------------------- */

double vpa_arpa_logprob(const struct vpa_arpa *m, const int32_t *ctx, size_t n, int32_t w)
{
	if (w < 0)
		return 0;
	int32_t key[VPA_ARPA_MAX_ORDER];
	size_t start = n > m->order - 1 ? n - (m->order - 1) : 0;
	double acc = 0;
	for (size_t s = start; s <= n; s++) {
		size_t h = n - s;
		if (h)
			memcpy(key, ctx + s, h * sizeof(int32_t));
		key[h] = w;
		long e = find(m, key, h + 1);
		if (e >= 0)
			return acc + m->ents[e].lp;
		if (h > 0 && (e = find(m, ctx + s, h)) >= 0)
			acc += m->ents[e].bow;
	}
	/* w is a word but not a stored unigram: only possible for a model built
	 * in code without one; treat as impossible. */
	return -INFINITY;
}

double vpa_arpa_sentence(const struct vpa_arpa *m, const char *const *words, size_t n,
			 size_t *n_oov)
{
	size_t hmax = m->order > 1 ? m->order - 1 : 1;
	int32_t ctx[VPA_ARPA_MAX_ORDER + 1];
	size_t nc = 0, oov = 0;
	double lp = 0;
	ctx[nc++] = m->bos;
	for (size_t i = 0; i <= n; i++) {
		int32_t w = i < n ? vpa_arpa_word_or_unk(m, words[i]) : m->eos;
		if (w == VPA_ARPA_NONE && i < n)
			oov++;
		else
			lp += vpa_arpa_logprob(m, ctx, nc, w);
		if (nc == hmax) {
			memmove(ctx, ctx + 1, (hmax - 1) * sizeof(int32_t));
			nc--;
		}
		ctx[nc++] = w;
	}
	if (n_oov)
		*n_oov = oov;
	return lp;
}

/* ---- writing -------------------------------------------------------------- */

void vpa_arpa_write(const struct vpa_arpa *m, struct vpa_buf *out)
{
	vpa_buf_puts(out, "\n\\data\\\n");
	for (size_t k = 1; k <= m->order; k++)
		vpa_buf_printf(out, "ngram %zu=%zu\n", k, m->count[k]);
	for (size_t k = 1; k <= m->order; k++) {
		vpa_buf_printf(out, "\n\\%zu-grams:\n", k);
		for (size_t e = 0; e < m->n_ents; e++) {
			const struct ent *x = &m->ents[e];
			if (x->k != k)
				continue;
			vpa_buf_printf(out, "%.9g\t", x->lp);
			for (size_t i = 0; i < k; i++)
				vpa_buf_printf(out, "%s%s", i ? " " : "", m->words[m->keys[x->off + i]]);
			if (k < m->order && x->bow != 0)
				vpa_buf_printf(out, "\t%.9g", x->bow);
			vpa_buf_puts(out, "\n");
		}
	}
	vpa_buf_puts(out, "\n\\end\\\n");
}

/* ---- reading -------------------------------------------------------------- */

struct rd {
	const char *name;
	const char *p, *end;
	long line;         /* of the current line */
	const char *ls, *le; /* current line [ls, le), CR stripped */
	struct vpa_err *err;
};

/* Next line; 0 at the end of the buffer. */
static int next_line(struct rd *r)
{
	if (r->p >= r->end)
		return 0;
	r->ls = r->p;
	const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	r->le = nl ? nl : r->end;
	r->p = nl ? nl + 1 : r->end;
	if (r->le > r->ls && r->le[-1] == '\r')
		r->le--;
	r->line++;
	return 1;
}

static int is_ws(char c) { return c == ' ' || c == '\t'; }

static int blank(const struct rd *r)
{
	for (const char *q = r->ls; q < r->le; q++)
		if (!is_ws(*q))
			return 0;
	return 1;
}

/* The line without surrounding blanks equals s. */
static int line_is(const struct rd *r, const char *s)
{
	const char *a = r->ls, *b = r->le;
	while (a < b && is_ws(*a))
		a++;
	while (b > a && is_ws(b[-1]))
		b--;
	return (size_t)(b - a) == strlen(s) && !memcmp(a, s, (size_t)(b - a));
}

/* Skip blank lines; 0 at the end of the buffer. */
static int next_nonblank(struct rd *r)
{
	while (next_line(r))
		if (!blank(r))
			return 1;
	return 0;
}

static int rfail(struct rd *r, const char *fmt, const char *a)
{
	struct vpa_loc loc = {r->name, r->line, 0};
	return vpa_fail(r->err, VPA_EINPUT, &loc, fmt, a);
}

/* The line's text, shortened for a message. */
static const char *show(const struct rd *r, char *buf, size_t cap)
{
	size_t n = (size_t)(r->le - r->ls);
	if (n > cap - 4) {
		memcpy(buf, r->ls, cap - 4);
		strcpy(buf + cap - 4, "...");
	} else {
		memcpy(buf, r->ls, n);
		buf[n] = 0;
	}
	for (char *q = buf; *q; q++)
		if ((unsigned char)*q < 0x20)
			*q = ' ';
	return buf;
}

/* Split the current line into fields (pointers into the buffer). */
static size_t fields(const struct rd *r, const char **fs, size_t *fl, size_t cap)
{
	size_t n = 0;
	const char *q = r->ls;
	while (q < r->le) {
		while (q < r->le && is_ws(*q))
			q++;
		if (q >= r->le)
			break;
		const char *s = q;
		while (q < r->le && !is_ws(*q))
			q++;
		if (n < cap) {
			fs[n] = s;
			fl[n] = (size_t)(q - s);
		}
		n++;
	}
	return n;
}

/* Parse "ngram K=COUNT"; returns 1 when the line is one. */
static int ngram_line(const struct rd *r, size_t *k, size_t *count)
{
	const char *q = r->ls, *e = r->le;
	while (q < e && is_ws(*q))
		q++;
	if ((size_t)(e - q) < 6 || memcmp(q, "ngram", 5) || !is_ws(q[5]))
		return 0;
	q += 5;
	while (q < e && is_ws(*q))
		q++;
	size_t a = 0, b = 0;
	int da = 0, db = 0;
	while (q < e && *q >= '0' && *q <= '9' && da < 4)
		a = a * 10 + (size_t)(*q++ - '0'), da++;
	while (q < e && is_ws(*q))
		q++;
	if (!da || q >= e || *q != '=')
		return 0;
	q++;
	while (q < e && is_ws(*q))
		q++;
	while (q < e && *q >= '0' && *q <= '9' && db < 12)
		b = b * 10 + (size_t)(*q++ - '0'), db++;
	while (q < e && is_ws(*q))
		q++;
	if (!db || q != e)
		return 0;
	*k = a;
	*count = b;
	return 1;
}

int vpa_arpa_parse(const char *name, const char *buf, size_t len, struct vpa_arpa **out,
		   struct vpa_err *err)
{
	struct rd r = {name, buf, buf + len, 0, NULL, NULL, err};
	struct vpa_arpa *m = NULL;
	size_t declared[VPA_ARPA_MAX_ORDER + 1] = {0};
	long decl_line[VPA_ARPA_MAX_ORDER + 1] = {0};
	size_t order = 0;
	char sb[160];
	int rc = 0;
	*out = NULL;
	if (buf && memchr(buf, '\0', len)) {
		r.line = 0;
		const char *z = memchr(buf, '\0', len);
		for (const char *q = buf; q < z; q++)
			r.line += *q == '\n';
		r.line++;
		return rfail(&r, "%sNUL byte in an ARPA file", "");
	}
	if (!next_nonblank(&r))
		return rfail(&r, "%sempty file: expected '\\data\\'", "");
	if (!line_is(&r, "\\data\\"))
		return rfail(&r, "expected '\\data\\', found '%s'", show(&r, sb, sizeof(sb)));
	/* header */
	for (;;) {
		if (!next_line(&r))
			return rfail(&r, "%sunexpected end of file in the \\data\\ header", "");
		if (blank(&r))
			continue;
		size_t k, c;
		if (ngram_line(&r, &k, &c)) {
			if (k != order + 1)
				return rfail(&r, "expected 'ngram %s=COUNT' (orders in sequence from 1)",
					     (snprintf(sb, sizeof(sb), "%zu", order + 1), sb));
			if (k > VPA_ARPA_MAX_ORDER)
				return rfail(&r, "order above %s is not supported",
					     (snprintf(sb, sizeof(sb), "%d", VPA_ARPA_MAX_ORDER), sb));
			declared[k] = c;
			decl_line[k] = r.line;
			order = k;
			continue;
		}
		if (line_is(&r, "\\1-grams:") && order > 0)
			break;
		if (order == 0)
			return rfail(&r, "expected 'ngram 1=COUNT', found '%s'", show(&r, sb, sizeof(sb)));
		return rfail(&r, "expected 'ngram K=COUNT' or '\\1-grams:', found '%s'",
			     show(&r, sb, sizeof(sb)));
	}
	if (declared[1] == 0)
		return rfail(&r, "%sthe header declares no unigrams ('ngram 1=0')", "");
	m = vpa_arpa_new(order);
	for (size_t k = 1; k <= order; k++) {
		if (k > 1) {
			if (!next_nonblank(&r)) {
				rc = rfail(&r, "unexpected end of file: expected '\\%s-grams:'",
					   (snprintf(sb, sizeof(sb), "%zu", k), sb));
				goto out;
			}
			char want[32];
			snprintf(want, sizeof(want), "\\%zu-grams:", k);
			if (!line_is(&r, want)) {
				char sb2[64];
				show(&r, sb2, sizeof(sb2));
				snprintf(sb, sizeof(sb), "%s', found '%.60s", want, sb2);
				rc = rfail(&r, "expected '%s'", sb);
				goto out;
			}
		}
		size_t got = 0;
		for (;;) {
			const char *save = r.p;
			long save_line = r.line;
			if (!next_line(&r))
				break;
			if (blank(&r) || (r.le > r.ls && *r.ls == '\\')) {
				if (!blank(&r)) { /* push the section line back */
					r.p = save;
					r.line = save_line;
				}
				break;
			}
			const char *fs[VPA_ARPA_MAX_ORDER + 3];
			size_t fl[VPA_ARPA_MAX_ORDER + 3];
			size_t nf = fields(&r, fs, fl, VPA_ARPA_MAX_ORDER + 3);
			int has_bow = nf == k + 2 && k < order;
			if (nf != k + 1 && !has_bow) {
				snprintf(sb, sizeof(sb), "%zu", k);
				rc = rfail(&r, k < order ? "expected 'logprob' then %s words and an "
							   "optional back-off weight"
							 : "expected 'logprob' then %s words (no back-off "
							   "at the highest order)", sb);
				goto out;
			}
			double lp, bow = 0;
			if (vpa_parse_double(fs[0], fs[0] + fl[0], &lp) != fs[0] + fl[0]) {
				snprintf(sb, sizeof(sb), "%.*s", (int)(fl[0] > 40 ? 40 : fl[0]), fs[0]);
				rc = rfail(&r, "expected a log10 probability, got '%s'", sb);
				goto out;
			}
			if (lp < -1000) { /* 10^-1000: nothing a real model writes; keeps sums finite */
				snprintf(sb, sizeof(sb), "%.*s", (int)(fl[0] > 40 ? 40 : fl[0]), fs[0]);
				rc = rfail(&r, "log10 probability '%s' is below -1000", sb);
				goto out;
			}
			if (lp > 0) {
				snprintf(sb, sizeof(sb), "%.*s", (int)(fl[0] > 40 ? 40 : fl[0]), fs[0]);
				rc = rfail(&r, "log10 probability '%s' is positive", sb);
				goto out;
			}
			if (has_bow && vpa_parse_double(fs[k + 1], fs[k + 1] + fl[k + 1], &bow) !=
					       fs[k + 1] + fl[k + 1]) {
				snprintf(sb, sizeof(sb), "%.*s", (int)(fl[k + 1] > 40 ? 40 : fl[k + 1]),
					 fs[k + 1]);
				rc = rfail(&r, "expected a log10 back-off weight, got '%s'", sb);
				goto out;
			}
			if (fabs(bow) > 1000) {
				snprintf(sb, sizeof(sb), "%.*s", (int)(fl[k + 1] > 40 ? 40 : fl[k + 1]),
					 fs[k + 1]);
				rc = rfail(&r, "log10 back-off weight '%s' is outside [-1000, 1000]", sb);
				goto out;
			}
			int32_t ids[VPA_ARPA_MAX_ORDER];
			for (size_t i = 0; i < k; i++) {
				char *w = xmalloc(fl[i + 1] + 1);
				memcpy(w, fs[i + 1], fl[i + 1]);
				w[fl[i + 1]] = 0;
				if (k == 1) {
					ids[i] = vpa_arpa_word(m, w);
					if (ids[i] != VPA_ARPA_NONE) {
						rc = rfail(&r, "duplicate unigram '%s'", w);
						free(w);
						goto out;
					}
					ids[i] = vpa_arpa_add_word(m, w);
				} else if ((ids[i] = vpa_arpa_word(m, w)) == VPA_ARPA_NONE) {
					snprintf(sb, sizeof(sb), "%.60s", w);
					free(w);
					rc = rfail(&r, "word '%s' is not among the unigrams", sb);
					goto out;
				}
				free(w);
			}
			if (k > 1 && find(m, ids, k) >= 0) {
				rc = rfail(&r, "duplicate %s-gram", (snprintf(sb, sizeof(sb), "%zu", k), sb));
				goto out;
			}
			vpa_arpa_set(m, ids, k, lp, bow);
			got++;
		}
		if (got != declared[k]) {
			char msg[128];
			snprintf(msg, sizeof(msg), "%zu %zu-grams (line %ld), found %zu", declared[k], k,
				 decl_line[k], got);
			rc = rfail(&r, "the header declares %s", msg);
			goto out;
		}
	}
	if (!next_nonblank(&r)) {
		rc = rfail(&r, "%sunexpected end of file: expected '\\end\\'", "");
		goto out;
	}
	if (!line_is(&r, "\\end\\")) {
		rc = rfail(&r, "expected '\\end\\', found '%s'", show(&r, sb, sizeof(sb)));
		goto out;
	}
	if (next_nonblank(&r)) {
		rc = rfail(&r, "text after '\\end\\': '%s'", show(&r, sb, sizeof(sb)));
		goto out;
	}
out:
	if (rc)
		vpa_arpa_free(m);
	else
		*out = m;
	return rc;
}

int vpa_arpa_load(const char *path, struct vpa_arpa **out, struct vpa_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	*out = NULL;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (!rc)
		rc = vpa_arpa_parse(path, buf, len, out, err);
	free(buf);
	return rc;
}
