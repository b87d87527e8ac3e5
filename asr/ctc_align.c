/*
 * asr/ctc_align.c - forced alignment with a CTC model (asr/ctc_align.h).
 */
#include "asr/ctc_align.h"

#include "base/dist.h"
#include "base/la.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int fold(unsigned char ch)
{
	return ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch;
}

/* Length of the longest token spelling s at its start (0: none); *id its
 * index.  Among equal lengths a token of the same case wins, then the lower
 * index. */
static size_t longest(const char *s, char *const *tok, size_t V, size_t blank, uint32_t *id)
{
	size_t best = 0;
	int best_exact = 0;
	for (size_t v = 0; v < V; v++) {
		if (v == blank)
			continue;
		const char *t = tok[v];
		size_t n = 0;
		int exact = 1;
		while (t[n] && s[n]) {
			if (t[n] != s[n]) {
				if (fold((unsigned char)t[n]) != fold((unsigned char)s[n]))
					break;
				exact = 0;
			}
			n++;
		}
		if (t[n])
			continue; /* the token is not a prefix of s */
		if (n > best || (n == best && n && exact && !best_exact)) {
			best = n;
			best_exact = exact;
			*id = (uint32_t)v;
		}
	}
	return best;
}

static size_t find_token(char *const *tok, size_t V, size_t blank, const char *text)
{
	for (size_t v = 0; v < V; v++)
		if (v != blank && !strcmp(tok[v], text))
			return v;
	return SIZE_MAX;
}

int vpa_ctc_tokenize(char *const *w, size_t nw, char *const *tok, size_t V, size_t blank,
		     const char *delimiter, uint32_t **ids, size_t *L, size_t *bad_word,
		     size_t *bad_at)
{
	static const char sp[] = "\xe2\x96\x81";
	int piece = delimiter && !strcmp(delimiter, sp);
	size_t d = delimiter && *delimiter && !piece ? find_token(tok, V, blank, delimiter) : SIZE_MAX;
	size_t cap = 16, n = 0;
	uint32_t *out = xmalloc(cap * sizeof(uint32_t));
	struct vpa_buf b;
	vpa_buf_init(&b);
#define PUT(x)                                                             \
	do {                                                               \
		if (n == cap)                                              \
			out = xrealloc(out, xmul(cap *= 2, sizeof(uint32_t))); \
		out[n++] = (uint32_t)(x);                                  \
	} while (0)
	if (d != SIZE_MAX)
		PUT(d);
	for (size_t k = 0; k < nw; k++) {
		b.len = 0;
		if (piece)
			vpa_buf_puts(&b, sp);
		vpa_buf_puts(&b, w[k]);
		const char *s = vpa_buf_str(&b);
		size_t pre = piece ? strlen(sp) : 0;
		for (size_t at = 0; s[at];) {
			uint32_t id = 0;
			size_t m = longest(s + at, tok, V, blank, &id);
			if (!m) {
				*bad_word = k;
				*bad_at = at >= pre ? at - pre : 0;
				free(out);
				vpa_buf_release(&b);
				*ids = NULL;
				*L = 0;
				return -1;
			}
			PUT(id);
			at += m;
		}
		if (d != SIZE_MAX)
			PUT(d);
	}
#undef PUT
	vpa_buf_release(&b);
	*ids = out;
	*L = n;
	return 0;
}

int vpa_ctc_viterbi(const float *x, size_t T, size_t V, size_t blank, const uint32_t *lab,
		    size_t L, uint32_t *path, double *score, size_t *need)
{
	size_t rep = 0;
	for (size_t i = 1; i < L; i++)
		rep += lab[i] == lab[i - 1];
	*need = L + rep;
	*score = -INFINITY;
	if (T == 0 || T < L + rep)
		return -1;
	size_t S = 2 * L + 1;
	uint32_t *ext = xmalloc(S * sizeof(uint32_t));
	for (size_t s = 0; s < S; s++)
		ext[s] = s & 1 ? lab[s / 2] : (uint32_t)blank;
	double *lp = xmalloc(V * sizeof(double));
	double *prev = xmalloc(S * sizeof(double)), *cur = xmalloc(S * sizeof(double));
	unsigned char *bp = xmalloc(xmul(T, S));
	for (size_t t = 0; t < T; t++) {
		/* log-softmax of the frame, in double */
		const float *r = x + t * V;
		double mx = r[0], z = 0;
		for (size_t v = 1; v < V; v++)
			if (r[v] > mx)
				mx = r[v];
		for (size_t v = 0; v < V; v++)
			z += exp((double)r[v] - mx);
		double lz = mx + log(z);
		for (size_t v = 0; v < V; v++)
			lp[v] = (double)r[v] - lz;
		unsigned char *b = bp + t * S;
		if (t == 0) {
			for (size_t s = 0; s < S; s++) {
				cur[s] = s < 2 ? lp[ext[s]] : -INFINITY;
				b[s] = 0;
			}
		} else {
			for (size_t s = 0; s < S; s++) {
				double best = prev[s];
				unsigned char m = 0;
				if (s >= 1 && prev[s - 1] > best) {
					best = prev[s - 1];
					m = 1;
				}
				if (s >= 2 && ext[s] != blank && ext[s] != ext[s - 2] && prev[s - 2] > best) {
					best = prev[s - 2];
					m = 2;
				}
				cur[s] = best + lp[ext[s]];
				b[s] = m;
			}
		}
		double *tmp = prev;
		prev = cur;
		cur = tmp;
	}
	size_t s = S - 1;
	if (S >= 2 && prev[S - 2] > prev[S - 1])
		s = S - 2;
	*score = prev[s];
	int rc = isfinite(*score) ? 0 : -1;
	if (!rc)
		for (size_t t = T; t-- > 0;) {
			path[t] = ext[s];
			s -= bp[t * S + s];
		}
	free(ext);
	free(lp);
	free(prev);
	free(cur);
	free(bp);
	return rc;
}

void vpa_ctc_frame_labels(const uint32_t *path, size_t T, size_t blank, uint32_t *out, size_t n)
{
	uint32_t cur = (uint32_t)blank;
	for (size_t t = 0; t < T; t++)
		if (path[t] != blank) {
			cur = path[t];
			break;
		}
	uint32_t *m = xmalloc((T ? T : 1) * sizeof(uint32_t));
	for (size_t t = 0; t < T; t++) {
		if (path[t] != blank)
			cur = path[t];
		m[t] = cur;
	}
	for (size_t j = 0; j < n; j++) {
		size_t t = (2 * j + 1) * T / (2 * n);
		out[j] = m[t < T ? t : T - 1];
	}
	free(m);
}

int vpa_ctc_align_wave(const struct vpa_ctc *c, const char *id, const struct vpa_wave *w,
		       char *const *words, size_t nw, const struct vpa_loc *where, size_t n,
		       uint32_t *out, struct vpa_err *err)
{
	if (nw == 0)
		return vpa_fail(err, VPA_EINPUT, where,
				"utterance '%s' has no word in its transcript: nothing to align", id);
	size_t V = vpa_ctc_n_tokens(c), blank = vpa_ctc_blank(c), L = 0, bw = 0, ba = 0;
	char *const *tok = vpa_ctc_tokens(c);
	uint32_t *lab = NULL;
	if (vpa_ctc_tokenize(words, nw, tok, V, blank, vpa_ctc_delimiter(c), &lab, &L, &bw, &ba)) {
		const char *wd = words[bw];
		size_t cl = 1;
		while (wd[ba + cl] && ((unsigned char)wd[ba + cl] & 0xc0) == 0x80)
			cl++; /* the whole UTF-8 character */
		return vpa_fail(err, VPA_EINPUT, where,
				"utterance '%s': the word '%s' has '%.*s' (byte %zu), which no token "
				"of %s spells",
				id, wd, (int)cl, wd + ba, ba, vpa_ctc_tokens_path(c));
	}
	float *x = NULL;
	size_t T = 0;
	int rc = vpa_ctc_wave(c, id, w, &x, &T, NULL, err);
	if (rc) {
		free(lab);
		return rc;
	}
	uint32_t *path = xmalloc((T ? T : 1) * sizeof(uint32_t));
	double score;
	size_t need;
	if (vpa_ctc_viterbi(x, T, V, blank, lab, L, path, &score, &need))
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "utterance '%s': the model gives %zu frames but its transcript's %zu "
			      "tokens need at least %zu (a blank between equal neighbours): the audio "
			      "is too short for its text",
			      id, T, L, need);
	else
		vpa_ctc_frame_labels(path, T, blank, out, n);
	free(path);
	free(x);
	free(lab);
	return rc;
}

/* ---- a data directory ----------------------------------------------------------- */

struct align_job {
	const struct vpa_ctc *c;
	const struct vpa_datadir *d;
	const struct vpa_kaldi_text *text;
	const char *path;    /* of text */
	const size_t *tx;    /* (n_utt) the utterance's index in text */
	size_t *n;           /* (n_utt) target frames (set by the job with grid) */
	const struct vpa_feat *grid; /* NULL, or the front-end whose frames are labelled */
	uint32_t **lab;      /* (n_utt) OUT */
};

static int align_job(void *arg, size_t i, struct vpa_err *err)
{
	struct align_job *j = arg;
	struct vpa_wave w;
	vpa_wave_init(&w);
	char *const *words;
	size_t nw = vpa_kaldi_text_words(j->text, j->tx[i], &words);
	struct vpa_loc where = {j->path, vpa_kaldi_text_line(j->text, j->tx[i]), 0};
	int rc = vpa_datadir_load(j->d, i, &w, NULL, err);
	if (!rc && j->grid)
		j->n[i] = vpa_feat_num_frames(j->grid, w.n);
	j->lab[i] = xmalloc((j->n[i] ? j->n[i] : 1) * sizeof(uint32_t));
	if (!rc && j->grid && j->n[i] == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "utterance '%s' is shorter than one frame: nothing to label",
			      j->d->utt[i]);
	if (!rc)
		rc = vpa_ctc_align_wave(j->c, j->d->utt[i], &w, words, nw, &where, j->n[i], j->lab[i],
					err);
	vpa_wave_release(&w);
	return rc;
}

static void align_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct align_job *j = arg;
	vpa_pack_u64(b, j->n[i]);
	vpa_buf_add(b, j->lab[i], j->n[i] * sizeof(uint32_t));
}

static int align_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct align_job *j = arg;
	const unsigned char *end = p + len;
	uint64_t n;
	if (vpa_unpack_u64(&p, end, &n) || (j->grid ? 0 : n != j->n[i]) ||
	    (uint64_t)(end - p) != n * sizeof(uint32_t))
		return -1;
	j->n[i] = (size_t)n;
	len = (size_t)(end - p);
	free(j->lab[i]);
	j->lab[i] = xmalloc((j->n[i] ? j->n[i] : 1) * sizeof(uint32_t));
	memcpy(j->lab[i], p, len);
	return 0;
}

int vpa_ctc_align_dd(const struct vpa_ctc *c, int threads, const struct vpa_datadir *d,
		     const char *text_path, size_t *n, const struct vpa_feat *grid, uint32_t ***lab,
		     struct vpa_err *err)
{
	*lab = NULL;
	struct vpa_kaldi_text *t = NULL;
	int rc = vpa_kaldi_text_read(text_path, vpa_ctc_norm(c), &t, err);
	if (rc)
		return rc;
	size_t nu = d->n_utt, *tx = xmalloc((nu ? nu : 1) * sizeof(size_t));
	for (size_t i = 0; i < nu && !rc; i++)
		if ((tx[i] = vpa_kaldi_text_find(t, d->utt[i])) == SIZE_MAX) {
			struct vpa_loc l = {text_path, 0, 0};
			rc = vpa_fail(err, VPA_EINPUT, &l,
				      "no transcript for utterance '%s'%s%s: the aligner spells every "
				      "utterance's words", d->utt[i], d->scp ? " of " : "",
				      d->scp ? d->scp : "");
		}
	struct align_job j = {c, d, t, text_path, tx, n, grid,
			      xcalloc(nu ? nu : 1, sizeof(uint32_t *))};
	if (!rc)
		rc = vpa_dist_jobs(nu, threads > 0 ? threads : 1, align_job, align_pack, align_unpack,
				   &j, "CTC alignment", vpa_la_run_workers, err);
	if (rc) {
		for (size_t i = 0; i < nu; i++)
			free(j.lab[i]);
		free(j.lab);
	} else {
		*lab = j.lab;
	}
	free(tx);
	vpa_kaldi_text_free(t);
	return rc;
}
