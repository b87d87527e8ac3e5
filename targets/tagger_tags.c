/*
 * targets/tagger_tags.c - what a tagger's output means (contracts in
 * targets/tagger.h): the coarse tag set on the Brown tags, and the
 * confidence TSV of an imported tagger (`source: import`).  Plain data
 * formats: no network, no options.
 */
#include "targets/tagger.h"

#include <stdlib.h>
#include <string.h>

const char *const vpa_tag_names[VPA_TAG_N] = {"NOUN", "VERB", "ADJ", "PROPN", "OTHER"};

static int in_list(const char *t, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(t, *list))
			return 1;
	return 0;
}

int vpa_tag_coarse(const char *brown_tag)
{
	static const char *const noun[] = {"nn", "nns", "nn$", "nns$", "nr", "nrs", "nr$", NULL};
	static const char *const verb[] = {"vb",  "vbd", "vbg", "vbn", "vbz", "be",  "bed",
					   "bedz", "beg", "bem", "ben", "ber", "bez", "hv",
					   "hvd", "hvg", "hvn", "hvz", "do",  "dod", "doz",
					   "md",  NULL};
	static const char *const adj[] = {"jj", "jjr", "jjs", "jjt", "od", NULL};
	static const char *const propn[] = {"np", "nps", "np$", "nps$", NULL};
	char b[64];
	vpa_brown_tag_base(brown_tag, b, sizeof(b));
	if (in_list(b, noun))
		return VPA_TAG_NOUN;
	if (in_list(b, verb))
		return VPA_TAG_VERB;
	if (in_list(b, adj))
		return VPA_TAG_ADJ;
	if (in_list(b, propn))
		return VPA_TAG_PROPN;
	return VPA_TAG_OTHER;
}

int vpa_tag_find(const char *name)
{
	for (int i = 0; i < VPA_TAG_N; i++)
		if (!strcmp(name, vpa_tag_names[i]))
			return i;
	return -1;
}

/* ---- confidence TSV --------------------------------------------------------- */

void vpa_tagconf_release(struct vpa_tagconf *t)
{
	for (size_t i = 0; i < t->n_class; i++)
		free(t->class_name[i]);
	for (size_t i = 0; i < t->n_rows; i++)
		free(t->word[i]);
	free(t->class_name);
	free(t->word);
	free(t->cls);
	free(t->conf);
	free(t->line);
	memset(t, 0, sizeof(*t));
}

static int class_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '$' || c == '-';
}

/* A small hash of (class, word) -> row for the duplicate check. */
static uint64_t pair_hash(uint32_t cls, const char *w)
{
	uint64_t h = 14695981039346656037ull ^ cls;
	for (; *w; w++)
		h = (h ^ (unsigned char)*w) * 1099511628211ull;
	return h;
}

int vpa_tagconf_parse(const char *name, const char *buf, size_t len, struct vpa_tagconf *out,
		      struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	size_t cap = 0, n_slot = 0;
	size_t *slot = NULL; /* row + 1 */
	const char *end = buf + len, *p = buf;
	long line = 0;
	int rc = 0;
	while (p < end) {
		line++;
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *le = eol;
		if (le > p && le[-1] == '\r')
			le--;
		const char *q = p;
		p = eol + 1;
		struct vpa_loc loc = {name, line, 0};
		if (le > q && memchr(q, 0, (size_t)(le - q))) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "NUL byte");
			goto fail;
		}
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if (q == le || *q == '#')
			continue;
		const char *f[4];
		size_t fl[4], nf = 0;
		while (q < le) {
			while (q < le && (*q == ' ' || *q == '\t'))
				q++;
			if (q == le)
				break;
			const char *s = q;
			while (q < le && *q != ' ' && *q != '\t')
				q++;
			if (nf < 4) {
				f[nf] = s;
				fl[nf] = (size_t)(q - s);
			}
			nf++;
		}
		if (nf != 3) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "expected 3 columns 'word class confidence', found %zu", nf);
			goto fail;
		}
		for (size_t i = 0; i < fl[1]; i++)
			if (!class_char(f[1][i])) {
				struct vpa_loc l2 = {name, line, 0};
				/* column of the class field */
				const char *ls = f[0];
				while (ls > buf && ls[-1] != '\n')
					ls--;
				l2.col = (long)(f[1] - ls) + 1;
				rc = vpa_fail(err, VPA_EINPUT, &l2, "invalid class name '%.*s'",
					      (int)(fl[1] > 60 ? 60 : fl[1]), f[1]);
				goto fail;
			}
		double v;
		const char *ne = vpa_parse_double(f[2], f[2] + fl[2], &v);
		if (!ne || ne != f[2] + fl[2] || !(v >= 0 && v <= 1)) {
			const char *ls = f[0];
			while (ls > buf && ls[-1] != '\n')
				ls--;
			struct vpa_loc l2 = {name, line, (long)(f[2] - ls) + 1};
			rc = vpa_fail(err, VPA_EINPUT, &l2,
				      "confidence must be a number in [0, 1], got '%.*s'",
				      (int)(fl[2] > 60 ? 60 : fl[2]), f[2]);
			goto fail;
		}
		/* class id */
		uint32_t c = 0;
		while (c < out->n_class &&
		       !(strlen(out->class_name[c]) == fl[1] &&
			 !memcmp(out->class_name[c], f[1], fl[1])))
			c++;
		if (c == out->n_class) {
			out->class_name = xrealloc(out->class_name,
						   xmul(out->n_class + 1, sizeof(char *)));
			out->class_name[out->n_class] = xmalloc(fl[1] + 1);
			memcpy(out->class_name[out->n_class], f[1], fl[1]);
			out->class_name[out->n_class][fl[1]] = 0;
			out->n_class++;
		}
		char *w = xmalloc(fl[0] + 1);
		memcpy(w, f[0], fl[0]);
		w[fl[0]] = 0;
		/* duplicate check */
		if (2 * (out->n_rows + 1) > n_slot) {
			size_t ns = n_slot ? 2 * n_slot : 1024;
			size_t *sl = xcalloc(ns, sizeof(*sl));
			for (size_t r = 0; r < out->n_rows; r++) {
				size_t j = pair_hash(out->cls[r], out->word[r]) & (ns - 1);
				while (sl[j])
					j = (j + 1) & (ns - 1);
				sl[j] = r + 1;
			}
			free(slot);
			slot = sl;
			n_slot = ns;
		}
		size_t j = pair_hash(c, w) & (n_slot - 1);
		while (slot[j]) {
			size_t r = slot[j] - 1;
			if (out->cls[r] == c && !strcmp(out->word[r], w)) {
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "duplicate word '%s' for class '%s' (first on line %ld)", w,
					      out->class_name[c], out->line[r]);
				free(w);
				goto fail;
			}
			j = (j + 1) & (n_slot - 1);
		}
		if (out->n_rows == cap) {
			cap = cap ? 2 * cap : 256;
			out->word = xrealloc(out->word, xmul(cap, sizeof(char *)));
			out->cls = xrealloc(out->cls, xmul(cap, sizeof(uint32_t)));
			out->conf = xrealloc(out->conf, xmul(cap, sizeof(double)));
			out->line = xrealloc(out->line, xmul(cap, sizeof(long)));
		}
		slot[j] = out->n_rows + 1;
		out->word[out->n_rows] = w;
		out->cls[out->n_rows] = c;
		out->conf[out->n_rows] = v;
		out->line[out->n_rows] = line;
		out->n_rows++;
	}
	if (out->n_rows == 0) {
		struct vpa_loc loc = {name, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &loc, "no confidence line");
		goto fail;
	}
	free(slot);
	return 0;
fail:
	free(slot);
	vpa_tagconf_release(out);
	return rc;
}

int vpa_tagconf_read(const char *path, struct vpa_tagconf *out, struct vpa_err *err)
{
	char *buf;
	size_t len;
	memset(out, 0, sizeof(*out));
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_tagconf_parse(path, buf, len, out, err);
	free(buf);
	return rc;
}
