/*
 * targets/lm_canary.c - canaries of the `language_model` kind: the template
 * language (`PIN: <digit> <digit>`, word slots and alternatives) parsed into
 * positions and their candidate words, the canaries' default names (c1, c2,
 * ...), and the `names` file that fills the {name} slot (contracts in
 * targets/lm.h and targets/lm_int.h; split from targets/lm.c).
 */
#include "targets/lm_int.h"
#include "formats/kaldi.h"


#include <stdlib.h>
#include <string.h>

/* ---- canaries ---------------------------------------------------------------- */

void vpa_lm_canary_base(const char *name, size_t i, char *buf, size_t cap)
{
	if (name)
		snprintf(buf, cap, "%s", name);
	else
		snprintf(buf, cap, "c%zu", i + 1);
}

void vpa_lm_canary_release(struct vpa_lm_canary *c)
{
	for (size_t i = 0; i < c->L; i++)
		free(c->pos[i].alt);
	free(c->pos);
	free(c->name);
	free(c->tmpl);
	free(c->secret);
	free(c->secret_text);
	free(c->excl);
	memset(c, 0, sizeof(*c));
}

static void pos_push(struct vpa_lm_canary *c, size_t *cap, uint32_t *alt, size_t n)
{
	if (c->L == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		c->pos = xrealloc(c->pos, xmul(*cap, sizeof(*c->pos)));
	}
	c->pos[c->L].alt = alt;
	c->pos[c->L].n_alt = n;
	c->L++;
}

static int add_word_pos(const char *cname, const char *w, uint32_t (*lookup)(void *, const char *),
			void *ctx, struct vpa_lm_canary *c, size_t *cap, struct vpa_err *err)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	size_t n = vpa_tokenize(w, strlen(w), 1, &b);
	int rc = 0;
	char *s = b.data ? b.data : (char *)"";
	for (size_t i = 0; i < n && !rc; i++) {
		char *sp = strchr(s, ' ');
		if (sp)
			*sp = 0;
		uint32_t id = lookup(ctx, s);
		if (id == UINT32_MAX) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "canary '%s': word '%s' is not in the model's vocabulary", cname, s);
			break;
		}
		uint32_t *a = xmalloc(sizeof(uint32_t));
		a[0] = id;
		pos_push(c, cap, a, 1);
		s = sp ? sp + 1 : s + strlen(s);
	}
	vpa_buf_release(&b);
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Sort and deduplicate alternatives. */
static size_t uniq_u32(uint32_t *a, size_t n)
{
	qsort(a, n, sizeof(uint32_t), cmp_u32);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!m || a[m - 1] != a[i])
			a[m++] = a[i];
	return m;
}

int vpa_lm_parse_template(const char *cname, const char *tmpl,
			  uint32_t (*lookup)(void *ctx, const char *w), void *ctx,
			  const char *const *names, size_t n_names, const uint32_t *vocab_ids,
			  size_t n_vocab_ids, struct vpa_lm_canary *c, struct vpa_err *err)
{
	memset(c, 0, sizeof(*c));
	size_t cap = 0;
	int rc = 0;
	const char *p = tmpl;
	char *text = NULL;
	while (*p && !rc) {
		const char *br = strchr(p, '{');
		size_t n = br ? (size_t)(br - p) : strlen(p);
		if (memchr(p, '}', n)) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': '}' without '{' in '%s'", cname,
				      tmpl);
			break;
		}
		text = xmalloc(n + 1);
		memcpy(text, p, n);
		text[n] = 0;
		rc = add_word_pos(cname, text, lookup, ctx, c, &cap, err);
		free(text);
		text = NULL;
		if (rc || !br)
			break;
		const char *end = strchr(br, '}');
		if (!end) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': '{' without '}' in '%s'", cname,
				      tmpl);
			break;
		}
		size_t sl = (size_t)(end - br - 1);
		char *slot = xmalloc(sl + 1);
		memcpy(slot, br + 1, sl);
		slot[sl] = 0;
		if (slot[0] == 'd' && sl == 2 && slot[1] >= '1' && slot[1] <= '9') {
			for (int k = 0; k < slot[1] - '0' && !rc; k++) {
				uint32_t *a = xmalloc(10 * sizeof(uint32_t));
				for (int d = 0; d < 10; d++) {
					char w[2] = {(char)('0' + d), 0};
					a[d] = lookup(ctx, w);
					if (a[d] == UINT32_MAX) {
						rc = vpa_fail(err, VPA_EINPUT, NULL,
							      "canary '%s': digit '%s' is not in the "
							      "model's vocabulary", cname, w);
						break;
					}
				}
				pos_push(c, &cap, a, 10);
				if (!rc)
					c->pos[c->L - 1].n_alt = uniq_u32(a, 10);
			}
		} else if (!strcmp(slot, "name")) {
			uint32_t *a = xmalloc(xmul(n_names ? n_names : 1, sizeof(uint32_t)));
			size_t m = 0;
			for (size_t i = 0; i < n_names; i++) {
				uint32_t id = lookup(ctx, names[i]);
				if (id != UINT32_MAX)
					a[m++] = id;
			}
			if (m < 2) {
				free(a);
				rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': fewer than 2 names of "
						"the name list are in the model's vocabulary", cname);
			} else {
				pos_push(c, &cap, a, uniq_u32(a, m));
			}
		} else if (!strcmp(slot, "word")) {
			if (n_vocab_ids < 2) {
				rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': {word} needs a vocabulary",
					      cname);
			} else {
				uint32_t *a = xmalloc(xmul(n_vocab_ids, sizeof(uint32_t)));
				memcpy(a, vocab_ids, n_vocab_ids * sizeof(uint32_t));
				pos_push(c, &cap, a, uniq_u32(a, n_vocab_ids));
			}
		} else if (!strncmp(slot, "choice:", 7)) {
			size_t m = 0, mc = 8;
			uint32_t *a = xmalloc(mc * sizeof(uint32_t));
			char *save = NULL;
			for (char *w = strtok_r(slot + 7, "|", &save); w && !rc;
			     w = strtok_r(NULL, "|", &save)) {
				while (*w == ' ')
					w++;
				char *e = w + strlen(w);
				while (e > w && e[-1] == ' ')
					*--e = 0;
				struct vpa_buf tb;
				vpa_buf_init(&tb);
				size_t nt = vpa_tokenize(w, strlen(w), 1, &tb);
				if (nt != 1) {
					rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': choice '%s' "
							"must be one word", cname, w);
				} else {
					uint32_t id = lookup(ctx, tb.data);
					if (id == UINT32_MAX)
						rc = vpa_fail(err, VPA_EINPUT, NULL,
							      "canary '%s': word '%s' is not in the model's "
							      "vocabulary", cname, tb.data);
					if (m == mc)
						a = xrealloc(a, (mc *= 2) * sizeof(uint32_t));
					a[m++] = id;
				}
				vpa_buf_release(&tb);
			}
			if (!rc && (m = uniq_u32(a, m)) < 2)
				rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': {choice:...} needs at "
						"least 2 different words", cname);
			if (rc)
				free(a);
			else
				pos_push(c, &cap, a, m);
		} else {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': unknown slot '{%s}': expected "
					"{dN} (N = 1..9), {name}, {word} or {choice:a|b}", cname, slot);
		}
		free(slot);
		p = end + 1;
	}
	if (!rc && c->L == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': empty template", cname);
	if (!rc) {
		int slots = 0;
		c->space = 1;
		for (size_t i = 0; i < c->L; i++) {
			c->space *= (double)c->pos[i].n_alt;
			slots += c->pos[i].n_alt > 1;
		}
		if (!slots)
			rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': template '%s' has no slot",
				      cname, tmpl);
		else if (!(c->space <= 1e300)) /* inf: log2 of it is no exposure */
			rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': the template allows more "
				      "than 1e300 secrets (the product of its slots' choices)", cname);
	}
	if (rc)
		vpa_lm_canary_release(c);
	else {
		c->name = xstrdup(cname);
		c->tmpl = xstrdup(tmpl);
	}
	return rc;
}

/* ---- the `names` list -------------------------------------------------------- */

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int vpa_lm_parse_names(const char *name, const char *buf, size_t len, char ***names,
		       size_t *n, struct vpa_err *err)
{
	char **out = NULL;
	size_t m = 0, cap = 0;
	long no = 0;
	int rc = vpa_kaldi_check_bom(name, buf, len, err);
	for (size_t pos = 0; !rc && pos < len;) {
		size_t s = pos, e = pos;
		while (e < len && buf[e] != '\n')
			e++;
		pos = e + 1;
		no++;
		struct vpa_loc loc = {name, no, 0};
		if (memchr(buf + s, 0, e - s)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "NUL byte: expected one name per line");
			break;
		}
		while (s < e && is_blank(buf[s]))
			s++;
		while (e > s && is_blank(buf[e - 1]))
			e--;
		if (s == e || buf[s] == '#')
			continue;
		for (size_t k = s; k < e; k++)
			if (is_blank(buf[k])) {
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "expected one name per line, got '%.*s%s'",
					      (int)(e - s > 60 ? 60 : e - s), buf + s,
					      e - s > 60 ? "..." : "");
				break;
			}
		if (rc)
			break;
		char *w = xstrndup(buf + s, e - s);
		for (char *q = w; *q; q++)
			if (*q >= 'A' && *q <= 'Z')
				*q = (char)(*q - 'A' + 'a');
		if (!strcmp(w, "<s>") || !strcmp(w, "</s>") || !strcmp(w, "<unk>")) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "'%s' is a word the model reserves, not a name", w);
			free(w);
			break;
		}
		if (m == cap)
			out = xrealloc(out, xmul(cap = cap ? 2 * cap : 64, sizeof(char *)));
		out[m++] = w;
	}
	if (rc) {
		for (size_t i = 0; i < m; i++)
			free(out[i]);
		free(out);
		return rc;
	}
	*names = out;
	*n = m;
	return 0;
}
