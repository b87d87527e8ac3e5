/*
 * formats/corpus.c - Brown and plain-text corpora, tokenisation, vocabularies
 * (contracts in formats/corpus.h).
 *
 * Strings live in an arena of 1 MiB blocks so that the token arrays can hold
 * plain pointers: one million Brown tokens cost two pointers each plus their
 * text, with no per-token malloc.  On a parse error the token, sentence and
 * document counts are rolled back (the arena keeps the dead strings until
 * vpa_corpus_release, which is harmless).
 */
#include "formats/corpus.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct vpa_corpus_chunk {
	struct vpa_corpus_chunk *next;
	size_t used, cap;
	char data[];
};

#define CHUNK (1u << 20)

static char *arena_dup(struct vpa_corpus *c, const char *s, size_t n, int lower)
{
	struct vpa_corpus_chunk *k = c->arena;
	if (!k || k->cap - k->used < n + 1) {
		size_t cap = n + 1 > CHUNK ? n + 1 : CHUNK;
		k = xmalloc(sizeof(*k) + cap);
		k->used = 0;
		k->cap = cap;
		k->next = c->arena;
		c->arena = k;
	}
	char *p = k->data + k->used;
	for (size_t i = 0; i < n; i++)
		p[i] = lower && s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
	p[n] = 0;
	k->used += n + 1;
	return p;
}

void vpa_corpus_opts_init(struct vpa_corpus_opts *o)
{
	o->lower = 0;
}

void vpa_corpus_init(struct vpa_corpus *c)
{
	memset(c, 0, sizeof(*c));
	c->tagged = -1;
	c->sent_off = xcalloc(1, sizeof(size_t));
	c->doc_sent = xcalloc(1, sizeof(size_t));
}

void vpa_corpus_release(struct vpa_corpus *c)
{
	struct vpa_corpus_chunk *k = c->arena;
	while (k) {
		struct vpa_corpus_chunk *n = k->next;
		free(k);
		k = n;
	}
	free(c->word);
	free(c->tag);
	free(c->sent_off);
	free(c->sent_doc);
	free(c->doc_name);
	free(c->doc_sent);
	memset(c, 0, sizeof(*c));
	c->tagged = -1;
}

static void push_tok(struct vpa_corpus *c, const char *w, const char *t)
{
	if (c->n_tok == c->cap_tok) {
		c->cap_tok = c->cap_tok ? 2 * c->cap_tok : 4096;
		c->word = xrealloc(c->word, xmul(c->cap_tok, sizeof(*c->word)));
		if (c->tagged == 1)
			c->tag = xrealloc(c->tag, xmul(c->cap_tok, sizeof(*c->tag)));
	}
	c->word[c->n_tok] = w;
	if (c->tagged == 1)
		c->tag[c->n_tok] = t;
	c->n_tok++;
}

/* Close a sentence made of the tokens since the last one (if any). */
static void end_sent(struct vpa_corpus *c)
{
	if (c->n_tok == c->sent_off[c->n_sent])
		return;
	if (c->n_sent + 1 >= c->cap_sent) {
		c->cap_sent = c->cap_sent ? 2 * c->cap_sent : 1024;
		c->sent_off = xrealloc(c->sent_off, xmul(c->cap_sent + 1, sizeof(size_t)));
		c->sent_doc = xrealloc(c->sent_doc, xmul(c->cap_sent, sizeof(size_t)));
	}
	c->sent_doc[c->n_sent] = c->n_doc - 1;
	c->n_sent++;
	c->sent_off[c->n_sent] = c->n_tok;
	c->doc_sent[c->n_doc] = c->n_sent;
}

static void begin_doc(struct vpa_corpus *c, const char *name)
{
	if (c->n_doc + 1 >= c->cap_doc) {
		c->cap_doc = c->cap_doc ? 2 * c->cap_doc : 64;
		c->doc_name = xrealloc(c->doc_name, xmul(c->cap_doc, sizeof(*c->doc_name)));
		c->doc_sent = xrealloc(c->doc_sent, xmul(c->cap_doc + 1, sizeof(size_t)));
	}
	c->doc_name[c->n_doc] = arena_dup(c, name, strlen(name), 0);
	c->n_doc++;
	c->doc_sent[c->n_doc] = c->n_sent;
}

struct mark {
	size_t n_tok, n_sent, n_doc;
	int tagged;
};

static void rollback(struct vpa_corpus *c, const struct mark *m)
{
	c->n_tok = m->n_tok;
	c->n_sent = m->n_sent;
	c->n_doc = m->n_doc;
	c->tagged = m->tagged;
	c->sent_off[c->n_sent] = c->n_tok;
	c->doc_sent[c->n_doc] = c->n_sent;
}

static int set_kind(struct vpa_corpus *c, int tagged, const char *name, struct vpa_err *err)
{
	if (c->tagged != -1 && c->tagged != tagged)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: cannot mix %s with a corpus of %s", name,
				tagged ? "Brown (tagged) text" : "plain text",
				c->tagged ? "Brown (tagged) text" : "plain text");
	if (c->tagged == -1 && tagged && c->cap_tok)
		c->tag = xrealloc(c->tag, xmul(c->cap_tok, sizeof(*c->tag)));
	c->tagged = tagged;
	return 0;
}

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

int vpa_corpus_add_brown(struct vpa_corpus *c, const char *name, const char *buf, size_t len,
			 const struct vpa_corpus_opts *o, struct vpa_err *err)
{
	struct mark m = {c->n_tok, c->n_sent, c->n_doc, c->tagged};
	int lower = o ? o->lower : 0;
	int rc = set_kind(c, 1, name, err);
	if (rc)
		return rc;
	const char *base = strrchr(name, '/');
	begin_doc(c, base && base[1] ? base + 1 : name);
	const char *end = buf + len, *p = buf;
	long line = 1;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *nul = memchr(p, 0, (size_t)(eol - p));
		if (nul) {
			struct vpa_loc loc = {name, line, (long)(nul - p) + 1};
			rc = vpa_fail(err, VPA_EINPUT, &loc, "NUL byte");
			goto fail;
		}
		const char *q = p;
		while (q < eol) {
			while (q < eol && is_space(*q))
				q++;
			if (q == eol)
				break;
			const char *t0 = q;
			while (q < eol && !is_space(*q))
				q++;
			const char *slash = NULL;
			for (const char *s = q; s > t0; s--)
				if (s[-1] == '/') {
					slash = s - 1;
					break;
				}
			if (!slash || slash == t0 || slash + 1 == q) {
				struct vpa_loc loc = {name, line, (long)(t0 - p) + 1};
				int n = (int)(q - t0 > 60 ? 60 : q - t0);
				rc = vpa_fail(err, VPA_EINPUT, &loc, "expected word/tag, got '%.*s%s'", n,
					      t0, q - t0 > 60 ? "..." : "");
				goto fail;
			}
			const char *w = arena_dup(c, t0, (size_t)(slash - t0), lower);
			const char *t = arena_dup(c, slash + 1, (size_t)(q - slash - 1), 0);
			push_tok(c, w, t);
		}
		end_sent(c);
		p = eol + 1;
		line++;
	}
	return 0;
fail:
	rollback(c, &m);
	return rc;
}

static int is_punct(char ch)
{
	return ch && strchr(".,;:!?\"()[]{}", ch) != NULL;
}

static int is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Calls fn(tok, n, arg) for each token of s[0, len). */
static size_t tokenize(const char *s, size_t len, void (*fn)(const char *, size_t, void *),
		       void *arg)
{
	size_t i = 0, n = 0;
	while (i < len) {
		if (is_space(s[i]) || s[i] == '\n') {
			i++;
			continue;
		}
		size_t j = i;
		if (is_punct(s[i])) {
			j = i + 1;
		} else {
			while (j < len && !is_space(s[j]) && s[j] != '\n') {
				if (is_punct(s[j]) &&
				    !((s[j] == '.' || s[j] == ',') && j > i && is_digit(s[j - 1]) &&
				      j + 1 < len && is_digit(s[j + 1])))
					break;
				j++;
			}
		}
		fn(s + i, j - i, arg);
		n++;
		i = j;
	}
	return n;
}

struct tok_buf {
	struct vpa_buf *b;
	int lower;
};

static void to_buf(const char *t, size_t n, void *arg)
{
	struct tok_buf *tb = arg;
	if (tb->b->len)
		vpa_buf_add(tb->b, " ", 1);
	for (size_t i = 0; i < n; i++) {
		char ch = t[i];
		if (tb->lower && ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		vpa_buf_add(tb->b, &ch, 1);
	}
}

size_t vpa_tokenize(const char *s, size_t len, int lower, struct vpa_buf *out)
{
	struct tok_buf tb = {out, lower};
	size_t n = tokenize(s, len, to_buf, &tb);
	vpa_buf_str(out);
	return n;
}

struct tok_corpus {
	struct vpa_corpus *c;
	int lower;
};

static void to_corpus(const char *t, size_t n, void *arg)
{
	struct tok_corpus *tc = arg;
	push_tok(tc->c, arena_dup(tc->c, t, n, tc->lower), NULL);
}

int vpa_corpus_add_text(struct vpa_corpus *c, const char *name, const char *buf, size_t len,
			const struct vpa_corpus_opts *o, struct vpa_err *err)
{
	struct mark m = {c->n_tok, c->n_sent, c->n_doc, c->tagged};
	struct tok_corpus tc = {c, o ? o->lower : 0};
	int rc = set_kind(c, 0, name, err);
	if (rc)
		return rc;
	const char *end = buf + len, *p = buf;
	long line = 1;
	int open = 0, k = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *nul = memchr(p, 0, (size_t)(eol - p));
		if (nul) {
			struct vpa_loc loc = {name, line, (long)(nul - p) + 1};
			rc = vpa_fail(err, VPA_EINPUT, &loc, "NUL byte");
			goto fail;
		}
		const char *q = p;
		while (q < eol && is_space(*q))
			q++;
		if (q == eol) {
			open = 0; /* a blank line ends the document */
		} else {
			if (!open) {
				char dn[512];
				snprintf(dn, sizeof(dn), "%s#%d", name, ++k);
				begin_doc(c, dn);
				open = 1;
			}
			tokenize(p, (size_t)(eol - p), to_corpus, &tc);
			end_sent(c);
		}
		p = eol + 1;
		line++;
	}
	return 0;
fail:
	rollback(c, &m);
	return rc;
}

int vpa_corpus_load_text(struct vpa_corpus *c, const char *path, const struct vpa_corpus_opts *o,
			 struct vpa_err *err)
{
	char *buf;
	size_t len;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_corpus_add_text(c, path, buf, len, o, err);
	free(buf);
	return rc;
}

static int brown_name(const char *s)
{
	return strlen(s) == 4 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z' &&
	       is_digit(s[2]) && is_digit(s[3]);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int vpa_corpus_load_brown(struct vpa_corpus *c, const char *dir, size_t max_docs,
			  const struct vpa_corpus_opts *o, struct vpa_err *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return vpa_fail(err, VPA_EIO, NULL, "cannot read the Brown corpus folder '%s': %s", dir,
				strerror(errno));
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		if (!brown_name(e->d_name))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 512;
			names = xrealloc(names, xmul(cap, sizeof(*names)));
		}
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (n == 0) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "'%s' holds no Brown corpus file (ca01 .. cr09): run `sh .ci/deps`?",
			      dir);
		goto out;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	size_t use = max_docs && max_docs < n ? max_docs : n;
	for (size_t i = 0; i < use && !rc; i++) {
		struct vpa_buf path;
		vpa_buf_init(&path);
		vpa_buf_printf(&path, "%s/%s", dir, names[i]);
		char *buf = NULL;
		size_t len = 0;
		rc = vpa_read_file(vpa_buf_str(&path), &buf, &len, err);
		if (!rc)
			rc = vpa_corpus_add_brown(c, vpa_buf_str(&path), buf, len, o, err);
		free(buf);
		vpa_buf_release(&path);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

void vpa_brown_tag_base(const char *tag, char *out, size_t cap)
{
	if (!cap)
		return;
	char t[128];
	size_t n = 0;
	for (const char *p = tag; *p && n + 1 < sizeof(t); p++)
		t[n++] = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
	t[n] = 0;
	char *s = t;
	if (!strncmp(s, "fw-", 3) && s[3])
		s += 3;
	char *plus = s[0] ? strchr(s + 1, '+') : NULL; /* a leading '+' is not a separator */
	if (plus)
		*plus = 0;
	/* drop -tl / -hl / -nc wherever they follow the base (nn-tl-hl) */
	for (;;) {
		size_t L = strlen(s);
		if (L > 3 && (!strcmp(s + L - 3, "-tl") || !strcmp(s + L - 3, "-hl") ||
			      !strcmp(s + L - 3, "-nc")))
			s[L - 3] = 0;
		else
			break;
	}
	size_t L = strlen(s);
	if (L > 1 && s[L - 1] == '*')
		s[L - 1] = 0;
	snprintf(out, cap, "%s", s);
}

/* ---- vocabulary ----------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	return vpa_fnv1a(s);
}

/* A string -> count map over borrowed keys (for building). */
struct cmap {
	const char **key;
	uint64_t *cnt;
	size_t n, cap; /* cap a power of two */
};

static void cmap_grow(struct cmap *m)
{
	size_t cap = m->cap ? 2 * m->cap : 1 << 14;
	const char **key = xcalloc(cap, sizeof(*key));
	uint64_t *cnt = xcalloc(cap, sizeof(*cnt));
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->key[i])
			continue;
		size_t j = hash_str(m->key[i]) & (cap - 1);
		while (key[j])
			j = (j + 1) & (cap - 1);
		key[j] = m->key[i];
		cnt[j] = m->cnt[i];
	}
	free(m->key);
	free(m->cnt);
	m->key = key;
	m->cnt = cnt;
	m->cap = cap;
}

static void cmap_inc(struct cmap *m, const char *w)
{
	if (2 * (m->n + 1) > m->cap)
		cmap_grow(m);
	size_t j = hash_str(w) & (m->cap - 1);
	while (m->key[j] && strcmp(m->key[j], w))
		j = (j + 1) & (m->cap - 1);
	if (!m->key[j]) {
		m->key[j] = w;
		m->n++;
	}
	m->cnt[j]++;
}

static void vocab_rehash(struct vpa_vocab *v, size_t n_slot)
{
	free(v->slot);
	v->n_slot = n_slot;
	v->slot = xcalloc(n_slot, sizeof(*v->slot));
	for (size_t i = 0; i < v->n; i++) {
		size_t j = hash_str(v->words[i]) & (n_slot - 1);
		while (v->slot[j])
			j = (j + 1) & (n_slot - 1);
		v->slot[j] = (uint32_t)(i + 1);
	}
}

void vpa_vocab_init(struct vpa_vocab *v)
{
	memset(v, 0, sizeof(*v));
	v->n = 1;
	v->words = xmalloc(sizeof(char *));
	v->words[0] = xstrdup("<unk>");
	v->count = xcalloc(1, sizeof(uint64_t));
	vocab_rehash(v, 16);
}

void vpa_vocab_release(struct vpa_vocab *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->words[i]);
	free(v->words);
	free(v->count);
	free(v->slot);
	memset(v, 0, sizeof(*v));
}

uint32_t vpa_vocab_id(const struct vpa_vocab *v, const char *w)
{
	if (!v->n_slot)
		return VPA_VOCAB_UNK;
	size_t j = hash_str(w) & (v->n_slot - 1);
	while (v->slot[j]) {
		if (!strcmp(v->words[v->slot[j] - 1], w))
			return v->slot[j] - 1;
		j = (j + 1) & (v->n_slot - 1);
	}
	return VPA_VOCAB_UNK;
}

uint32_t vpa_vocab_add(struct vpa_vocab *v, const char *w)
{
	if (!strcmp(w, "<unk>"))
		return VPA_VOCAB_UNK;
	uint32_t id = vpa_vocab_id(v, w);
	if (id != VPA_VOCAB_UNK)
		return id;
	if (v->n >= UINT32_MAX - 1)
		VPA_BUG("vocabulary too large");
	v->words = xrealloc(v->words, xmul(v->n + 1, sizeof(char *)));
	v->count = xrealloc(v->count, xmul(v->n + 1, sizeof(uint64_t)));
	v->words[v->n] = xstrdup(w);
	v->count[v->n] = 0;
	v->n++;
	if (2 * v->n > v->n_slot)
		vocab_rehash(v, 2 * v->n_slot);
	else {
		size_t j = hash_str(w) & (v->n_slot - 1);
		while (v->slot[j])
			j = (j + 1) & (v->n_slot - 1);
		v->slot[j] = (uint32_t)v->n;
	}
	return (uint32_t)(v->n - 1);
}

struct wc {
	const char *w;
	uint64_t c;
};

static int cmp_wc(const void *a, const void *b)
{
	const struct wc *x = a, *y = b;
	if (x->c != y->c)
		return x->c > y->c ? -1 : 1;
	return strcmp(x->w, y->w);
}

void vpa_vocab_build(struct vpa_vocab *v, const struct vpa_corpus *c, const size_t *sents,
		     size_t n_sents, size_t max_words, uint64_t min_count)
{
	vpa_vocab_release(v);
	vpa_vocab_init(v);
	struct cmap m = {0};
	size_t ns = sents ? n_sents : c->n_sent;
	for (size_t k = 0; k < ns; k++) {
		size_t s = sents ? sents[k] : k;
		if (s >= c->n_sent)
			VPA_BUG("sentence %zu out of range", s);
		for (size_t i = c->sent_off[s]; i < c->sent_off[s + 1]; i++)
			cmap_inc(&m, c->word[i]);
	}
	struct wc *a = xmalloc(xmul(m.n ? m.n : 1, sizeof(*a)));
	size_t n = 0;
	for (size_t i = 0; i < m.cap; i++)
		if (m.key[i] && m.cnt[i] >= min_count && strcmp(m.key[i], "<unk>"))
			a[n++] = (struct wc){m.key[i], m.cnt[i]};
	qsort(a, n, sizeof(*a), cmp_wc);
	if (max_words && n > max_words)
		n = max_words;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = vpa_vocab_add(v, a[i].w);
		v->count[id] = a[i].c;
	}
	free(a);
	free(m.key);
	free(m.cnt);
}
