/*
 * targets/textanon.c - text anonymisation before LM training (COMPRISE D2.3
 * 4.3.1): a gazetteer entity detector and five replacement strategies
 * (contracts in targets/lm.h).
 *
 * The detector is deliberately simple and transparent (an auditor must be
 * able to say what was and was not replaced): names from a list, numbers by
 * their spelling or the `cd` tag, proper nouns from the corpus' own `np*`
 * tags.  What a strategy does to the canaries' exposure is then measured by
 * the `exposure` attack.
 */
#include "targets/lm.h"

#include <stdlib.h>
#include <string.h>

/* Common English first names that are not also common words (no "will",
 * "may", "mark", "bill", "rose", "frank", "jack" ...), lowercase. */
const char *const vpa_first_names[] = {
	"james", "john", "robert", "michael", "william", "david", "richard", "joseph", "thomas",
	"charles", "christopher", "daniel", "matthew", "anthony", "donald", "steven", "paul",
	"andrew", "joshua", "kenneth", "kevin", "brian", "george", "edward", "ronald", "timothy",
	"jason", "jeffrey", "ryan", "jacob", "gary", "nicholas", "eric", "jonathan", "stephen",
	"larry", "justin", "scott", "brandon", "benjamin", "samuel", "gregory",
	"alexander", "raymond", "patrick", "dennis", "jerry", "tyler", "aaron", "jose",
	"henry", "adam", "douglas", "nathan", "peter", "zachary", "kyle", "walter", "harold",
	"jeremy", "ethan", "carl", "keith", "roger", "gerald", "terry", "sean",
	"arthur", "austin", "noah", "lawrence", "jesse", "joe", "bryan", "albert", "willie",
	"mary", "patricia", "jennifer", "linda", "elizabeth", "barbara", "susan", "jessica",
	"sarah", "karen", "nancy", "lisa", "margaret", "betty", "sandra", "ashley", "dorothy",
	"kimberly", "emily", "donna", "michelle", "amanda", "melissa", "deborah",
	"stephanie", "rebecca", "laura", "sharon", "cynthia", "kathleen", "amy", "shirley",
	"angela", "helen", "anna", "brenda", "pamela", "nicole", "samantha", "katherine",
	"emma", "ruth", "christine", "catherine", "debra", "rachel", "carolyn", "janet",
	"maria", "heather", "diane", "julie", "joyce", "victoria", "kelly",
	"christina", "lauren", "joan", "evelyn", "olivia", "judith", "megan", "cheryl",
	"martha", "andrea", "frances", "hannah", "jacqueline", "ann", "gloria", "jean",
	"kathryn", "alice", "teresa", "sara", "janice", "doris", "julia", "judy",
	"abigail", "marie", "denise", "beverly", "theresa", "marilyn", "danielle",
	"diana", "brittany", "natalie", "sophia", "isabella", "alexis", "kayla",
	"charlotte",
};
const size_t vpa_n_first_names = sizeof(vpa_first_names) / sizeof(vpa_first_names[0]);

int vpa_anon_strategy_parse(const char *s)
{
	static const char *const n[] = {"none", "redact", "typed_placeholder", "named_placeholder",
					"word_by_word", "full_entity"};
	for (int i = 0; i < 6; i++)
		if (!strcmp(s, n[i]))
			return i;
	return -1;
}

/* ---- gazetteer: word (lowercased) -> type ------------------------------------- */

struct vpa_gazetteer {
	char **key;            /* (cap) or NULL, owned */
	unsigned char *type;   /* (cap) */
	size_t cap, n;
	char **pool[VPA_ENT_N_TYPES]; /* surrogates per type (borrowed from key) */
	size_t n_pool[VPA_ENT_N_TYPES], cap_pool[VPA_ENT_N_TYPES];
};

static uint64_t hs(const char *s)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		h = (h ^ c) * 1099511628211ull;
	}
	return h;
}

static size_t gz_slot(const struct vpa_gazetteer *g, const char *w)
{
	size_t m = g->cap - 1;
	size_t i = hs(w) & m;
	while (g->key[i] && strcasecmp(g->key[i], w))
		i = (i + 1) & m;
	return i;
}

static void gz_put(struct vpa_gazetteer *g, const char *w, enum vpa_ent_type t)
{
	if ((g->n + 1) * 2 > g->cap) {
		struct vpa_gazetteer o = *g;
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->key = xcalloc(g->cap, sizeof(char *));
		g->type = xcalloc(g->cap, 1);
		for (size_t i = 0; i < o.cap; i++)
			if (o.key[i]) {
				size_t j = gz_slot(g, o.key[i]);
				g->key[j] = o.key[i];
				g->type[j] = o.type[i];
			}
		free(o.key);
		free(o.type);
	}
	size_t i = gz_slot(g, w);
	if (g->key[i]) {
		if (t == VPA_ENT_PERSON) /* a listed name wins over "proper" */
			g->type[i] = (unsigned char)t;
		return;
	}
	g->key[i] = xstrdup(w);
	for (char *q = g->key[i]; *q; q++)
		if (*q >= 'A' && *q <= 'Z')
			*q = (char)(*q - 'A' + 'a');
	g->type[i] = (unsigned char)t;
	g->n++;
}

static int is_number(const char *w)
{
	size_t n = strlen(w), digits = 0;
	for (size_t i = 0; i < n; i++) {
		if (w[i] >= '0' && w[i] <= '9')
			digits++;
		else if (!((w[i] == '.' || w[i] == ',') && i > 0 && i + 1 < n))
			return 0;
	}
	return digits > 0;
}

static int tag_is(const char *tag, const char *base)
{
	char b[32];
	if (!tag)
		return 0;
	vpa_brown_tag_base(tag, b, sizeof(b));
	return !strncmp(b, base, strlen(base));
}

struct vpa_gazetteer *vpa_gazetteer_new(const struct vpa_corpus *c, const char *const *extra,
					size_t n_extra)
{
	struct vpa_gazetteer *g = xcalloc(1, sizeof(*g));
	g->cap = 1024;
	g->key = xcalloc(g->cap, sizeof(char *));
	g->type = xcalloc(g->cap, 1);
	for (size_t i = 0; i < vpa_n_first_names; i++)
		gz_put(g, vpa_first_names[i], VPA_ENT_PERSON);
	for (size_t i = 0; i < n_extra; i++)
		gz_put(g, extra[i], VPA_ENT_PERSON);
	if (c && c->tag)
		for (size_t t = 0; t < c->n_tok; t++)
			if (tag_is(c->tag[t], "np") && !is_number(c->word[t]))
				gz_put(g, c->word[t], VPA_ENT_PROPER);
	/* surrogate pools */
	for (size_t i = 0; i < g->cap; i++) {
		if (!g->key[i])
			continue;
		unsigned t = g->type[i];
		if (g->n_pool[t] == g->cap_pool[t]) {
			g->cap_pool[t] = g->cap_pool[t] ? 2 * g->cap_pool[t] : 64;
			g->pool[t] = xrealloc(g->pool[t], xmul(g->cap_pool[t], sizeof(char *)));
		}
		g->pool[t][g->n_pool[t]++] = g->key[i];
	}
	return g;
}

void vpa_gazetteer_free(struct vpa_gazetteer *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->cap; i++)
		free(g->key[i]);
	free(g->key);
	free(g->type);
	for (int t = 0; t < VPA_ENT_N_TYPES; t++)
		free(g->pool[t]);
	free(g);
}

enum vpa_ent_type vpa_gazetteer_type(const struct vpa_gazetteer *g, const char *w, const char *tag)
{
	if (is_number(w) || tag_is(tag, "cd"))
		return VPA_ENT_NUMBER;
	size_t i = gz_slot(g, w);
	if (g->key[i])
		return (enum vpa_ent_type)g->type[i];
	if (tag_is(tag, "np"))
		return VPA_ENT_PROPER;
	return VPA_ENT_NONE;
}

/* ---- strategies ---------------------------------------------------------------- */

void vpa_textanon_out_release(struct vpa_textanon_out *o)
{
	for (size_t i = 0; i < o->n_tok; i++)
		free(o->tok[i]);
	free(o->tok);
	free(o->off);
	memset(o, 0, sizeof(*o));
}

static const char *const type_name[] = {"", "person", "number", "proper"};

static void emit(struct vpa_textanon_out *o, size_t *cap, char *s)
{
	if (o->n_tok == *cap) {
		*cap = *cap ? 2 * *cap : 1024;
		o->tok = xrealloc(o->tok, xmul(*cap, sizeof(char *)));
	}
	o->tok[o->n_tok++] = s;
}

static char *random_number_like(const char *w, struct vpa_rng *r)
{
	char *s = xstrdup(w);
	for (char *q = s; *q; q++)
		if (*q >= '0' && *q <= '9')
			*q = (char)('0' + vpa_rng_below(r, 10));
	return s;
}

/* A surrogate word of type t (numbers keep their shape). */
static char *surrogate(const struct vpa_gazetteer *g, enum vpa_ent_type t, const char *w,
		       struct vpa_rng *r)
{
	if (t == VPA_ENT_NUMBER && is_number(w))
		return random_number_like(w, r);
	if (t == VPA_ENT_NUMBER)
		return xstrdup("<number>"); /* spelled numbers: no shape to keep */
	if (!g->n_pool[t])
		return xstrdup(t == VPA_ENT_PERSON ? "<person>" : "<proper>");
	return xstrdup(g->pool[t][vpa_rng_below(r, g->n_pool[t])]);
}

/* Per-document memory of entity -> index or surrogate. */
struct memo {
	char **key;   /* "type|w1 w2", owned */
	char **val;   /* owned */
	size_t n, cap;
	size_t count[VPA_ENT_N_TYPES];
};

static void memo_clear(struct memo *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->key[i]);
		free(m->val[i]);
	}
	m->n = 0;
	memset(m->count, 0, sizeof(m->count));
}

static const char *memo_get(const struct memo *m, const char *k)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->key[i], k))
			return m->val[i];
	return NULL;
}

static void memo_put(struct memo *m, const char *k, char *v)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->key = xrealloc(m->key, xmul(m->cap, sizeof(char *)));
		m->val = xrealloc(m->val, xmul(m->cap, sizeof(char *)));
	}
	m->key[m->n] = xstrdup(k);
	m->val[m->n++] = v;
}

int vpa_textanon(const struct vpa_gazetteer *g, enum vpa_anon_strategy st, const char *const *tok,
		 const char *const *tags, const size_t *off, const size_t *doc, size_t n_sent,
		 struct vpa_rng *rng, struct vpa_textanon_out *out, struct vpa_err *err)
{
	(void)err;
	memset(out, 0, sizeof(*out));
	out->off = xmalloc(xmul(n_sent + 1, sizeof(size_t)));
	out->off[0] = 0;
	size_t cap = 0;
	struct memo memo = {0};
	size_t cur_doc = SIZE_MAX;
	struct vpa_buf key;
	vpa_buf_init(&key);
	for (size_t s = 0; s < n_sent; s++) {
		if (doc && doc[s] != cur_doc) {
			memo_clear(&memo);
			cur_doc = doc[s];
		}
		size_t a = off[s], e = off[s + 1];
		for (size_t i = a; i < e;) {
			enum vpa_ent_type t = st == VPA_ANON_NONE ? VPA_ENT_NONE
				: vpa_gazetteer_type(g, tok[i], tags ? tags[i] : NULL);
			if (t == VPA_ENT_NONE) {
				emit(out, &cap, xstrdup(tok[i]));
				i++;
				continue;
			}
			size_t j = i + 1;
			while (j < e && vpa_gazetteer_type(g, tok[j], tags ? tags[j] : NULL) == t)
				j++;
			out->n_spans++;
			char buf[64];
			key.len = 0;
			vpa_buf_printf(&key, "%d|", (int)t);
			for (size_t k = i; k < j; k++)
				vpa_buf_printf(&key, "%s%s", k > i ? " " : "", tok[k]);
			const char *ks = vpa_buf_str(&key);
			switch (st) {
			case VPA_ANON_REDACT:
				emit(out, &cap, xstrdup("<redacted>"));
				break;
			case VPA_ANON_TYPED_PLACEHOLDER:
				snprintf(buf, sizeof(buf), "<%s>", type_name[t]);
				emit(out, &cap, xstrdup(buf));
				break;
			case VPA_ANON_NAMED_PLACEHOLDER: {
				const char *v = memo_get(&memo, ks);
				if (!v) {
					snprintf(buf, sizeof(buf), "<%s_%zu>", type_name[t], ++memo.count[t]);
					memo_put(&memo, ks, xstrdup(buf));
					v = memo.val[memo.n - 1];
				}
				emit(out, &cap, xstrdup(v));
				break;
			}
			case VPA_ANON_WORD_BY_WORD:
				for (size_t k = i; k < j; k++)
					emit(out, &cap, surrogate(g, t, tok[k], rng));
				break;
			case VPA_ANON_FULL_ENTITY: {
				const char *v = memo_get(&memo, ks);
				if (!v) {
					/* one surrogate entity: numbers keep every token's shape,
					 * names and proper nouns are one word */
					struct vpa_buf sb;
					vpa_buf_init(&sb);
					if (t == VPA_ENT_NUMBER)
						for (size_t k = i; k < j; k++) {
							char *x = surrogate(g, t, tok[k], rng);
							vpa_buf_printf(&sb, "%s%s", k > i ? " " : "", x);
							free(x);
						}
					else {
						char *x = surrogate(g, t, tok[i], rng);
						vpa_buf_puts(&sb, x);
						free(x);
					}
					memo_put(&memo, ks, xstrdup(vpa_buf_str(&sb)));
					vpa_buf_release(&sb);
					v = memo.val[memo.n - 1];
				}
				char *cp = xstrdup(v);
				char *save = NULL;
				for (char *w = strtok_r(cp, " ", &save); w;
				     w = strtok_r(NULL, " ", &save))
					emit(out, &cap, xstrdup(w));
				free(cp);
				break;
			}
			case VPA_ANON_NONE:
				break;
			}
			i = j;
		}
		out->off[s + 1] = out->n_tok;
	}
	memo_clear(&memo);
	free(memo.key);
	free(memo.val);
	vpa_buf_release(&key);
	return 0;
}
