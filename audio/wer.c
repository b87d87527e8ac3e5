/*
 * audio/wer.c - word error rate of Kaldi `text` files, as Kaldi compute-wer
 * (util/edit-distance-inl.h): per utterance the minimum-cost word alignment
 * with unit costs; among alignments of equal cost the one with the most
 * substitutions (Kaldi's error_stats ordering).  At a cell (i, j) every
 * alignment has ins - del = j - i, so (cost, sub) fixes ins and del: the
 * counts do not depend on any further tie-break.
 *
 * As the VoicePrivacy Challenge scores (struct vpa_wer_opts): the words of
 * both files normalised before the alignment (ASCII letters upper-cased,
 * punctuation turned into word breaks), and a reference utterance without a
 * hypothesis scored against an empty one (all its words deletions), as
 * compute-wer --mode=all, counted in n_absent ("N not present in hyp");
 * --mode=strict (an error) on request.
 */
#include <stdlib.h>
#include <string.h>

#include "audio/anon.h"
#include "formats/embset.h"
#include "formats/kaldi.h"

struct cell {
	size_t cost, ins, del, sub;
};

static int better(const struct cell *a, const struct cell *b)
{
	return a->cost < b->cost || (a->cost == b->cost && a->sub > b->sub);
}

void vpa_wer_align(const char *const *ref, size_t nr, const char *const *hyp, size_t nh,
		   struct vpa_wer *out)
{
	/* e[j]: the best alignment of hyp[0..i) with ref[0..j), row by row over i */
	struct cell *e = xmalloc(xmul(nr + 1, sizeof(*e)));
	struct cell *c = xmalloc(xmul(nr + 1, sizeof(*c)));
	for (size_t j = 0; j <= nr; j++)
		e[j] = (struct cell){j, 0, j, 0};
	for (size_t i = 1; i <= nh; i++) {
		c[0] = e[0];
		c[0].ins++;
		c[0].cost++;
		for (size_t j = 1; j <= nr; j++) {
			struct cell ins = e[j], del = c[j - 1], sub = e[j - 1];
			ins.ins++;
			ins.cost++;
			del.del++;
			del.cost++;
			if (strcmp(hyp[i - 1], ref[j - 1]) != 0) {
				sub.sub++;
				sub.cost++;
			}
			struct cell best = sub;
			if (better(&ins, &best))
				best = ins;
			if (better(&del, &best))
				best = del;
			c[j] = best;
		}
		struct cell *t = e;
		e = c;
		c = t;
	}
	out->ins += e[nr].ins;
	out->del += e[nr].del;
	out->sub += e[nr].sub;
	out->ref_words += nr;
	free(e);
	free(c);
}

/* One `text` file: lines `UTT word ...` (blank lines skipped, CRLF accepted). */
struct vpa_kaldi_text {
	char *buf;         /* owned copy, NUL-separated tokens */
	size_t n;
	char **id;         /* (n) into buf */
	char ***w;         /* (n) word arrays (owned), into buf */
	size_t *nw;        /* (n) */
	long *line;        /* (n) */
	struct vpa_strmap map;
};

static void text_release(struct vpa_kaldi_text *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->w[i]);
	free(t->w);
	free(t->id);
	free(t->nw);
	free(t->line);
	free(t->buf);
	vpa_strmap_release(&t->map);
}

static int is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

void vpa_wer_opts_init(struct vpa_wer_opts *o)
{
	o->upper = 1;
	o->punct = 1;
	o->strict = 0;
}

int vpa_wer_norm_parse(const char *name, struct vpa_wer_opts *o)
{
	int up = !strcmp(name, "vpc") || !strcmp(name, "upper");
	int pu = !strcmp(name, "vpc") || !strcmp(name, "punct");
	if (!up && !pu && strcmp(name, "none"))
		return -1;
	o->upper = up;
	o->punct = pu;
	return 0;
}

static int is_letter(unsigned char ch)
{
	/* ASCII letters and digits, and any byte of a UTF-8 sequence (letters of
	 * other scripts are never punctuation here) */
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch >= 0x80;
}

/*
 * The words of one line after the utterance id, normalised in place (same
 * length): upper: a-z to A-Z (ASCII only: other scripts are left as they are);
 * punct: every ASCII punctuation character (C's ispunct in the C locale)
 * becomes a space, so "well,done" is two words and "--" none, except an
 * apostrophe between two letters ("DON'T", LibriSpeech's vocabulary keeps it).
 */
static void normalise(char *p, const struct vpa_wer_opts *o)
{
	for (char *q = p; *q; q++) {
		unsigned char ch = (unsigned char)*q;
		if (o->punct && ch < 0x80 && ch > ' ' && ch != 0x7f && !is_letter(ch)) {
			int keep = ch == '\'' && q > p && is_letter((unsigned char)q[-1]) &&
				   is_letter((unsigned char)q[1]);
			if (!keep)
				*q = ' ';
		}
		if (o->upper && ch >= 'a' && ch <= 'z')
			*q = (char)(ch - 'a' + 'A');
	}
}

void vpa_wer_normalise(char *s, const struct vpa_wer_opts *o)
{
	normalise(s, o);
}

static int text_parse(struct vpa_kaldi_text *t, const char *name, const char *data, size_t len,
		      const struct vpa_wer_opts *o, struct vpa_err *err)
{
	memset(t, 0, sizeof(*t));
	vpa_strmap_init(&t->map);
	int rc0 = vpa_kaldi_check_bom(name, data, len, err);
	if (rc0)
		return rc0;
	t->buf = xmalloc(len + 1);
	memcpy(t->buf, data, len);
	t->buf[len] = 0;
	size_t cap = 0;
	long no = 0;
	size_t pos = 0;
	while (pos < len) {
		no++;
		size_t end = pos;
		while (end < len && t->buf[end] != '\n')
			end++;
		char *s = t->buf + pos;
		t->buf[end] = 0;
		if (memchr(s, 0, end - pos)) {
			struct vpa_loc loc = {name, no, 0};
			return vpa_fail(err, VPA_EINPUT, &loc, "NUL byte");
		}
		pos = end + 1;
		/* tokens */
		char **tok = NULL;
		size_t ntok = 0, tcap = 0;
		char *p = s;
		for (;;) {
			while (*p && is_ws(*p))
				*p++ = 0;
			if (!*p)
				break;
			if (ntok == tcap) {
				tcap = tcap ? 2 * tcap : 16;
				tok = xrealloc(tok, xmul(tcap, sizeof(char *)));
			}
			tok[ntok++] = p;
			while (*p && !is_ws(*p))
				p++;
			if (ntok == 1 && *p && o) /* the words after the id */
				normalise(p, o);
		}
		if (ntok == 0) {
			free(tok);
			continue;
		}
		if (t->n == cap) {
			cap = cap ? 2 * cap : 64;
			t->id = xrealloc(t->id, xmul(cap, sizeof(char *)));
			t->w = xrealloc(t->w, xmul(cap, sizeof(char **)));
			t->nw = xrealloc(t->nw, xmul(cap, sizeof(size_t)));
			t->line = xrealloc(t->line, xmul(cap, sizeof(long)));
		}
		size_t i = t->n++;
		t->id[i] = tok[0];
		t->nw[i] = ntok - 1;
		memmove(tok, tok + 1, (ntok - 1) * sizeof(char *));
		t->w[i] = tok;
		t->line[i] = no;
		uint32_t old;
		if (i > UINT32_MAX - 1 || vpa_strmap_put(&t->map, t->id[i], (uint32_t)i, &old)) {
			struct vpa_loc loc = {name, no, 0};
			return vpa_fail(err, VPA_EINPUT, &loc, "duplicate utterance '%s' (first on line %ld)",
					t->id[i], i > UINT32_MAX - 1 ? 0L : t->line[old]);
		}
	}
	if (t->n == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: no utterances", name);
	return 0;
}

int vpa_wer_text_opts(const char *ref_name, const char *ref, size_t ref_len,
		      const char *hyp_name, const char *hyp, size_t hyp_len,
		      const struct vpa_wer_opts *o, struct vpa_wer *out, struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	struct vpa_kaldi_text r, h;
	int rc = text_parse(&r, ref_name, ref, ref_len, o, err);
	if (!rc)
		rc = text_parse(&h, hyp_name, hyp, hyp_len, o, err);
	else
		memset(&h, 0, sizeof(h)), vpa_strmap_init(&h.map);
	for (size_t i = 0; !rc && i < h.n; i++)
		if (!vpa_strmap_get(&r.map, h.id[i], NULL)) {
			struct vpa_loc loc = {hyp_name, h.line[i], 0};
			rc = vpa_fail(err, VPA_EINPUT, &loc, "utterance '%s' is not in %s", h.id[i],
				      ref_name);
		}
	int strict = !o || o->strict;
	for (size_t i = 0; !rc && i < r.n; i++) {
		uint32_t k;
		int absent = !vpa_strmap_get(&h.map, r.id[i], &k);
		if (absent && strict) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: utterance '%s' of %s:%ld has no hypothesis",
				      hyp_name, r.id[i], ref_name, r.line[i]);
			break;
		}
		size_t before = out->ins + out->del + out->sub;
		/* absent: scored against no words (compute-wer --mode=all) */
		vpa_wer_align((const char *const *)r.w[i], r.nw[i],
			      absent ? NULL : (const char *const *)h.w[k], absent ? 0 : h.nw[k], out);
		out->n_absent += absent;
		out->n_utt++;
		out->n_utt_err += out->ins + out->del + out->sub != before;
	}
	if (!rc && out->ref_words == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no reference words (WER undefined)", ref_name);
	if (!rc)
		out->wer = 100.0 * (double)(out->ins + out->del + out->sub) / (double)out->ref_words;
	text_release(&r);
	text_release(&h);
	return rc;
}

int vpa_wer_text(const char *ref_name, const char *ref, size_t ref_len, const char *hyp_name,
		 const char *hyp, size_t hyp_len, struct vpa_wer *out, struct vpa_err *err)
{
	return vpa_wer_text_opts(ref_name, ref, ref_len, hyp_name, hyp, hyp_len, NULL, out, err);
}

int vpa_wer_files_opts(const char *ref_path, const char *hyp_path, const struct vpa_wer_opts *o,
		       struct vpa_wer *out, struct vpa_err *err)
{
	char *a = NULL, *b = NULL;
	size_t la = 0, lb = 0;
	memset(out, 0, sizeof(*out));
	int rc = vpa_read_file(ref_path, &a, &la, err);
	if (!rc)
		rc = vpa_read_file(hyp_path, &b, &lb, err);
	if (!rc)
		rc = vpa_wer_text_opts(ref_path, a, la, hyp_path, b, lb, o, out, err);
	free(a);
	free(b);
	return rc;
}

int vpa_wer_files(const char *ref_path, const char *hyp_path, struct vpa_wer *out,
		  struct vpa_err *err)
{
	char *a = NULL, *b = NULL;
	size_t la = 0, lb = 0;
	memset(out, 0, sizeof(*out));
	int rc = vpa_read_file(ref_path, &a, &la, err);
	if (!rc)
		rc = vpa_read_file(hyp_path, &b, &lb, err);
	if (!rc)
		rc = vpa_wer_text_opts(ref_path, a, la, hyp_path, b, lb, NULL, out, err);
	free(a);
	free(b);
	return rc;
}

/* ---- a `text` file for other readers (asr/ctc_align.c's transcripts) ---- */

int vpa_kaldi_text_read(const char *path, const struct vpa_wer_opts *norm,
			struct vpa_kaldi_text **out, struct vpa_err *err)
{
	*out = NULL;
	char *data;
	size_t len;
	int rc = vpa_read_file(path, &data, &len, err);
	if (rc)
		return rc;
	struct vpa_kaldi_text *t = xcalloc(1, sizeof(*t));
	rc = text_parse(t, path, data, len, norm, err);
	free(data);
	if (rc) {
		text_release(t);
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

size_t vpa_kaldi_text_find(const struct vpa_kaldi_text *t, const char *id)
{
	uint32_t v;
	return vpa_strmap_get(&t->map, id, &v) ? (size_t)v : SIZE_MAX;
}

size_t vpa_kaldi_text_words(const struct vpa_kaldi_text *t, size_t i, char *const **w)
{
	*w = t->w[i];
	return t->nw[i];
}

long vpa_kaldi_text_line(const struct vpa_kaldi_text *t, size_t i)
{
	return t->line[i];
}

void vpa_kaldi_text_free(struct vpa_kaldi_text *t)
{
	if (!t)
		return;
	text_release(t);
	free(t);
}
