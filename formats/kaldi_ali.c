/*
 * formats/kaldi_ali.c - frame alignments as Kaldi writes them in text:
 * `ali-to-phones --per-frame=true final.mdl ark:ali.1 ark,t:-` (or
 * `ali-to-pdf ... ark,t:-`, `copy-int-vector`): one line per utterance, its
 * id and one non-negative integer per feature frame ("u1 1 1 1 5 5 9 ...").
 * Kaldi's bracketed vector text ("u1 [ 1 1 5 ]") is read too.
 */
#include "formats/kaldi.h"

#include <stdlib.h>
#include <string.h>

void vpa_kaldi_ali_init(struct vpa_kaldi_ali *a)
{
	memset(a, 0, sizeof(*a));
}

void vpa_kaldi_ali_release(struct vpa_kaldi_ali *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->utt[i]);
	free(a->utt);
	free(a->off);
	free(a->lab);
	free(a->line);
	free(a->order);
	free(a->name);
	memset(a, 0, sizeof(*a));
}

/* Index of utterance id in a (sorted by id: a->order), or SIZE_MAX. */
size_t vpa_kaldi_ali_find(const struct vpa_kaldi_ali *a, const char *id)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(a->utt[a->order[mid]], id);
		if (c == 0)
			return a->order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

static const struct vpa_kaldi_ali *sort_ctx;
static int by_id(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	return strcmp(sort_ctx->utt[i], sort_ctx->utt[j]);
}

int vpa_kaldi_parse_ali(const char *name, const char *buf, size_t len, struct vpa_kaldi_ali *out,
			struct vpa_err *err)
{
	struct vpa_kaldi_ali a;
	size_t cap = 0, lcap = 0, nlab = 0;
	vpa_kaldi_ali_init(&a);
	int rc = vpa_kaldi_check_bom(name, buf, len, err);
	if (rc)
		return rc;
	a.off = xmalloc(sizeof(size_t));
	a.off[0] = 0;
	long line = 0;
	for (size_t pos = 0; pos < len && !rc;) {
		line++;
		const char *s = buf + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - s) : len - pos;
		pos += ll + (nl != NULL);
		struct vpa_loc loc = {name, line, 0};
		if (memchr(s, 0, ll)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "unexpected NUL byte");
			break;
		}
		size_t k = 0, nf = 0, first = nlab;
		int open = 0, closed = 0;
		while (k < ll && !rc) {
			while (k < ll && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
				k++;
			if (k >= ll)
				break;
			size_t b = k;
			while (k < ll && s[k] != ' ' && s[k] != '\t' && s[k] != '\r')
				k++;
			size_t fl = k - b;
			loc.col = (long)b + 1;
			if (nf == 0) {
				if (a.n == cap) {
					cap = cap ? 2 * cap : 256;
					a.utt = xrealloc(a.utt, xmul(cap, sizeof(char *)));
					a.line = xrealloc(a.line, xmul(cap, sizeof(long)));
					a.off = xrealloc(a.off, xmul(cap + 1, sizeof(size_t)));
				}
				a.utt[a.n] = xstrndup(s + b, fl);
				a.line[a.n] = line;
			} else if (fl == 1 && s[b] == '[' && nf == 1 && !open) {
				open = 1;
			} else if (fl == 1 && s[b] == ']' && open && !closed) {
				closed = 1;
			} else {
				uint64_t v = 0;
				int ok = !closed && fl > 0 && fl <= 10;
				for (size_t j = 0; ok && j < fl; j++) {
					if (s[b + j] < '0' || s[b + j] > '9')
						ok = 0;
					else
						v = v * 10 + (uint64_t)(s[b + j] - '0');
				}
				if (!ok || v > INT32_MAX) {
					rc = vpa_fail(err, VPA_EINPUT, &loc,
						      "'%.*s' is not a frame label (a non-negative "
						      "integer, one per feature frame)",
						      (int)(fl > 40 ? 40 : fl), s + b);
					break;
				}
				if (nlab == lcap) {
					lcap = lcap ? 2 * lcap : 4096;
					a.lab = xrealloc(a.lab, xmul(lcap, sizeof(uint32_t)));
				}
				a.lab[nlab++] = (uint32_t)v;
			}
			nf++;
		}
		if (nf == 0) /* blank line */
			continue;
		loc.col = 0;
		if (!rc && open && !closed)
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'[' without its ']'");
		if (!rc && nlab == first)
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "utterance '%s' has no frame labels (expected 'UTT ID ID ...', "
				      "one id per feature frame)", a.utt[a.n]);
		if (rc) {
			free(a.utt[a.n]); /* not counted in a.n yet */
			break;
		}
		a.n++;
		a.off[a.n] = nlab;
	}
	if (!rc && a.n == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no alignments", name);
	if (!rc) {
		a.order = xmalloc(xmul(a.n, sizeof(size_t)));
		for (size_t i = 0; i < a.n; i++)
			a.order[i] = i;
		sort_ctx = &a;
		qsort(a.order, a.n, sizeof(size_t), by_id);
		sort_ctx = NULL;
		for (size_t i = 1; i < a.n; i++)
			if (!strcmp(a.utt[a.order[i - 1]], a.utt[a.order[i]])) {
				size_t x = a.order[i - 1], y = a.order[i];
				if (x > y) {
					size_t t = x;
					x = y;
					y = t;
				}
				struct vpa_loc loc = {name, a.line[y], 0};
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "duplicate utterance '%s' (first on line %ld)", a.utt[y],
					      a.line[x]);
				break;
			}
	}
	if (rc) {
		vpa_kaldi_ali_release(&a);
		return rc;
	}
	a.name = xstrdup(name);
	vpa_kaldi_ali_release(out);
	*out = a;
	return 0;
}

int vpa_kaldi_read_ali(const char *path, struct vpa_kaldi_ali *out, struct vpa_err *err)
{
	char *buf;
	size_t len;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_kaldi_parse_ali(path, buf, len, out, err);
	free(buf);
	return rc;
}
