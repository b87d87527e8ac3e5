/*
 * formats/io_scores_key.c - a score file of (enroll, test, score) lines with a
 * separate trial key of (enroll, test, label) lines (split from
 * formats/io_scores.c; what the parts share is in formats/io_scores_int.h).  See
 * io.h for the formats.
 */
#include "formats/io_scores_int.h"

#include <stdlib.h>
#include <string.h>

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
	if ((rc = vpa_scores_check_nul(sname, sbuf, slen, err)))
		goto out;
	vpa_scores_lines_init(&L, sname, sbuf, slen);
	while ((rc = vpa_scores_lines_next(&L, err)) == 1) {
		struct vpa_loc loc = {sname, L.line, 0};
		if (L.nt != 3) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "expected 3 columns (enroll test score), found %d", L.nt);
			goto out;
		}
		double s = 0;
		uint32_t e = 0, t = 0;
		if ((rc = vpa_scores_tok_number(&L, 2, "score", &s, err)) ||
		    (rc = vpa_scores_intern_tok(&ie, &L, 0, &e, err)) ||
		    (rc = vpa_scores_intern_tok(&it, &L, 1, &t, err)))
			goto out;
		uint64_t key = (uint64_t)e << 32 | t;
		long prev = pairmap_find(&pm, key);
		if (prev >= 0) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "duplicate pair %s %s (first on line %ld)",
				      vpa_scores_quote(q1, sizeof(q1), L.t[0].s, L.t[0].n),
				      vpa_scores_quote(q2, sizeof(q2), L.t[1].s, L.t[1].n),
				      sline.v[prev]);
			goto out;
		}
		if (score.n >= UINT32_MAX - 1) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "too many trials (over 2^32)");
			goto out;
		}
		pairmap_put(&pm, key, (uint32_t)score.n);
		vpa_scores_dpush(&score, s);
		vpa_scores_upush(&pe, e);
		vpa_scores_upush(&pt, t);
		vpa_scores_lpush(&sline, L.line);
		vpa_scores_lpush(&kline, 0);
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
	if ((rc = vpa_scores_check_nul(kname, kbuf, klen, err)))
		goto out;
	vpa_scores_lines_init(&L, kname, kbuf, klen);
	while ((rc = vpa_scores_lines_next(&L, err)) == 1) {
		struct vpa_loc loc = {kname, L.line, 0};
		if (L.nt != 3) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "expected 3 columns (enroll test target|nontarget), found %d",
				      L.nt);
			goto out;
		}
		int is_tar = 0;
		if ((rc = vpa_scores_tok_label(&L, 2, &is_tar, err)))
			goto out;
		long e = vpa_scores_intern_find(&ie, L.t[0].s, L.t[0].n,
						 vpa_scores_hash_bytes(L.t[0].s, L.t[0].n));
		long t = vpa_scores_intern_find(&it, L.t[1].s, L.t[1].n,
						 vpa_scores_hash_bytes(L.t[1].s, L.t[1].n));
		long k = e < 0 || t < 0 ? -1 : pairmap_find(&pm, (uint64_t)e << 32 | (uint64_t)t);
		vpa_scores_quote(q1, sizeof(q1), L.t[0].s, L.t[0].n);
		vpa_scores_quote(q2, sizeof(q2), L.t[1].s, L.t[1].n);
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
			const char *se = vpa_scores_intern_str(&ie, pe.v[i], &ne);
			const char *st = vpa_scores_intern_str(&it, pt.v[i], &nt);
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "pair %s %s is in the scores but not in the key (%s)",
				      vpa_scores_quote(q1, sizeof(q1), se, ne),
				      vpa_scores_quote(q2, sizeof(q2), st, nt),
				      kname);
			goto out;
		}
		int t = label[i];
		vpa_scores_dpush(t ? &c.tar : &c.non, score.v[i]);
		vpa_scores_upush(t ? &c.tar_e : &c.non_e, pe.v[i]);
		vpa_scores_upush(t ? &c.tar_t : &c.non_t, pt.v[i]);
	}
	c.ie = ie;
	c.it = it;
	memset(&ie, 0, sizeof(ie));
	memset(&it, 0, sizeof(it));
	vpa_scores_collect_take(&c, out, 1);
	rc = 0;
out:
	vpa_scores_collect_release(&c);
	vpa_scores_intern_release(&ie);
	vpa_scores_intern_release(&it);
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
	int rc = vpa_scores_map_file(scores, &ms, err);
	if (rc)
		return rc;
	rc = vpa_scores_map_file(key, &mk, err);
	if (rc) {
		vpa_scores_unmap_file(&ms);
		return rc;
	}
	rc = vpa_parse_scores_key(scores, ms.data, ms.len, key, mk.data, mk.len, out, err);
	vpa_scores_unmap_file(&mk);
	vpa_scores_unmap_file(&ms);
	return rc;
}

