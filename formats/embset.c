/*
 * formats/embset.c - embedding sets and the importers that tie a vector file
 * (the string map they use is base/strmap.c) to utt2spk / spk2gender / utt2dur / enrolls / trials.
 * See embset.h.
 */
#include "formats/embset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/io.h"
#include "formats/kaldi.h"

/* ----------------------------------------------------------- embedding set */

void vpa_embset_init(struct vpa_embset *es)
{
	memset(es, 0, sizeof(*es));
	vpa_strmap_init(&es->utt_map);
	vpa_strmap_init(&es->spk_map);
}

void vpa_embset_release(struct vpa_embset *es)
{
	for (size_t i = 0; i < es->n; i++)
		free(es->utt[i]);
	for (size_t s = 0; s < es->n_spk; s++)
		free(es->spk_id[s]);
	free(es->x);
	free(es->utt);
	free(es->spk);
	free(es->spk_id);
	free(es->gender);
	free(es->dur);
	vpa_strmap_release(&es->utt_map);
	vpa_strmap_release(&es->spk_map);
	vpa_embset_init(es);
}

uint32_t vpa_embset_intern_spk(struct vpa_embset *es, const char *spk)
{
	uint32_t s;
	if (vpa_strmap_get(&es->spk_map, spk, &s))
		return s;
	if (es->n_spk == es->spk_cap) {
		es->spk_cap = es->spk_cap ? 2 * es->spk_cap : 64;
		es->spk_id = xrealloc(es->spk_id, xmul(es->spk_cap, sizeof(char *)));
		if (es->gender)
			es->gender = xrealloc(es->gender, es->spk_cap);
	}
	s = (uint32_t)es->n_spk;
	es->spk_id[s] = xstrdup(spk);
	if (es->gender)
		es->gender[s] = 0;
	es->n_spk++;
	vpa_strmap_put(&es->spk_map, es->spk_id[s], s, NULL);
	return s;
}

static void ensure_rows(struct vpa_embset *es, size_t need)
{
	if (need <= es->cap)
		return;
	size_t ncap = es->cap ? es->cap : 64;
	while (ncap < need)
		ncap *= 2;
	es->x = xrealloc(es->x, xmul(xmul(ncap, es->d ? es->d : 1), sizeof(double)));
	es->utt = xrealloc(es->utt, xmul(ncap, sizeof(char *)));
	es->spk = xrealloc(es->spk, xmul(ncap, sizeof(uint32_t)));
	if (es->dur)
		es->dur = xrealloc(es->dur, xmul(ncap, sizeof(double)));
	es->cap = ncap;
}

long vpa_embset_add(struct vpa_embset *es, const char *utt, const char *spk, const double *x,
		    size_t d, struct vpa_err *err)
{
	if (es->n == 0 && es->cap == 0)
		es->d = d;
	if (es->n == 0 && es->d != d) {
		/* Rows allocated for another dimension: reallocate. */
		free(es->x);
		es->x = NULL;
		es->cap = 0;
		free(es->utt);
		es->utt = NULL;
		free(es->spk);
		es->spk = NULL;
		free(es->dur);
		es->dur = NULL;
		es->d = d;
	}
	if (d != es->d)
		return vpa_fail(err, VPA_EINPUT, NULL, "utterance '%s' has dimension %zu, expected %zu as '%s'",
				utt, d, es->d, es->utt[0]);
	if (d == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "utterance '%s' has an empty vector", utt);
	if (vpa_strmap_get(&es->utt_map, utt, NULL))
		return vpa_fail(err, VPA_EINPUT, NULL, "duplicate utterance '%s'", utt);
	for (size_t j = 0; j < d; j++)
		if (!isfinite(x[j]))
			return vpa_fail(err, VPA_EINPUT, NULL, "utterance '%s' has a value that is not finite", utt);
	ensure_rows(es, es->n + 1);
	size_t i = es->n;
	memcpy(es->x + i * d, x, d * sizeof(double));
	es->utt[i] = xstrdup(utt);
	es->spk[i] = vpa_embset_intern_spk(es, spk);
	if (es->dur)
		es->dur[i] = 0.0;
	es->n++;
	vpa_strmap_put(&es->utt_map, es->utt[i], (uint32_t)i, NULL);
	return (long)i;
}

void vpa_embset_set_gender(struct vpa_embset *es, uint32_t s, char g)
{
	if (s >= es->n_spk)
		VPA_BUG("speaker index %u out of range", (unsigned)s);
	if (!es->gender)
		es->gender = xcalloc(es->spk_cap ? es->spk_cap : 1, 1);
	es->gender[s] = g;
}

void vpa_embset_set_dur(struct vpa_embset *es, size_t i, double seconds)
{
	if (i >= es->n)
		VPA_BUG("row %zu out of range", i);
	if (!es->dur)
		es->dur = xcalloc(es->cap ? es->cap : 1, sizeof(double));
	es->dur[i] = seconds;
}

long vpa_embset_find_utt(const struct vpa_embset *es, const char *utt)
{
	uint32_t v;
	return vpa_strmap_get(&es->utt_map, utt, &v) ? (long)v : -1;
}

long vpa_embset_find_spk(const struct vpa_embset *es, const char *spk)
{
	uint32_t v;
	return vpa_strmap_get(&es->spk_map, spk, &v) ? (long)v : -1;
}

char vpa_embset_utt_gender(const struct vpa_embset *es, size_t i)
{
	return es->gender ? es->gender[es->spk[i]] : 0;
}

void vpa_embset_spk_means(const struct vpa_embset *es, double *means, uint32_t *counts)
{
	size_t d = es->d;
	uint32_t *cnt = counts ? counts : xcalloc(es->n_spk ? es->n_spk : 1, sizeof(uint32_t));
	memset(cnt, 0, es->n_spk * sizeof(uint32_t));
	if (means)
		memset(means, 0, xmul(es->n_spk * d, sizeof(double)));
	for (size_t i = 0; i < es->n; i++) {
		cnt[es->spk[i]]++;
		if (means) {
			double *m = means + (size_t)es->spk[i] * d;
			const double *x = es->x + i * d;
			for (size_t j = 0; j < d; j++)
				m[j] += x[j];
		}
	}
	if (means)
		for (size_t s = 0; s < es->n_spk; s++)
			if (cnt[s])
				for (size_t j = 0; j < d; j++)
					means[s * d + j] /= cnt[s];
	if (!counts)
		free(cnt);
}

/* Copy row i of es into out (which has the same d), interning its speaker. */
static void copy_row(const struct vpa_embset *es, size_t i, struct vpa_embset *out)
{
	long r = vpa_embset_add(out, es->utt[i], es->spk_id[es->spk[i]], es->x + i * es->d, es->d, NULL);
	if (r < 0)
		VPA_BUG("copying a row of a valid set failed");
	if (es->dur)
		vpa_embset_set_dur(out, (size_t)r, es->dur[i]);
}

static void copy_genders(const struct vpa_embset *es, struct vpa_embset *out)
{
	if (!es->gender)
		return;
	for (size_t s = 0; s < out->n_spk; s++) {
		long k = vpa_embset_find_spk(es, out->spk_id[s]);
		vpa_embset_set_gender(out, (uint32_t)s, es->gender[k]);
	}
}

void vpa_embset_subset_spk(const struct vpa_embset *es, const uint32_t *spk, size_t k,
			   struct vpa_embset *out)
{
	vpa_embset_release(out);
	out->d = es->d;
	uint32_t *keep = xcalloc(es->n_spk ? es->n_spk : 1, sizeof(uint32_t));
	for (size_t t = 0; t < k; t++) {
		if (spk[t] >= es->n_spk)
			VPA_BUG("speaker index %u out of range", (unsigned)spk[t]);
		keep[spk[t]] = 1;
		vpa_embset_intern_spk(out, es->spk_id[spk[t]]);
	}
	for (size_t i = 0; i < es->n; i++)
		if (keep[es->spk[i]])
			copy_row(es, i, out);
	copy_genders(es, out);
	free(keep);
}

void vpa_embset_subset_rows(const struct vpa_embset *es, const size_t *idx, size_t k,
			    struct vpa_embset *out)
{
	vpa_embset_release(out);
	out->d = es->d;
	for (size_t t = 0; t < k; t++) {
		if (idx[t] >= es->n)
			VPA_BUG("row %zu out of range", idx[t]);
		copy_row(es, idx[t], out);
	}
	copy_genders(es, out);
}

void vpa_embset_copy(const struct vpa_embset *es, struct vpa_embset *out)
{
	vpa_embset_release(out);
	out->d = es->d;
	for (size_t s = 0; s < es->n_spk; s++)
		vpa_embset_intern_spk(out, es->spk_id[s]);
	for (size_t i = 0; i < es->n; i++)
		copy_row(es, i, out);
	copy_genders(es, out);
}

/* ---------------------------------------------------------------- import */

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* Vectors, their ids and where each came from (for messages). */
struct raw {
	size_t n, d;
	double *x;      /* borrowed from ark or npy */
	char **ids;     /* borrowed */
	char **spk2;    /* second column of the .npy id list, or NULL */
	struct vpa_kaldi_ark ark;
	struct vpa_npy npy;
	struct vpa_kaldi_list idl;
	int is_npy;
};

static void raw_where(const struct raw *r, size_t i, char *buf, size_t cap)
{
	if (r->is_npy)
		snprintf(buf, cap, "%s:%ld", r->idl.name, r->idl.line[i]);
	else
		vpa_kaldi_where(&r->ark, i, buf, cap);
}

static int read_raw(const struct vpa_embset_src *src, struct raw *r, struct vpa_err *err)
{
	int rc;
	int npy = has_suffix(src->vectors, ".npy");
	if (!npy) {
		FILE *f = fopen(src->vectors, "rb");
		unsigned char magic[6];
		if (f) {
			npy = fread(magic, 1, 6, f) == 6 && !memcmp(magic, "\x93NUMPY", 6);
			fclose(f);
		}
	}
	if (!npy) {
		rc = vpa_kaldi_read(src->vectors, VPA_KALDI_VECTORS, &r->ark, err);
		if (rc)
			return rc;
		r->n = r->ark.n;
		r->d = r->ark.e[0].cols;
		r->x = r->ark.data;
		r->ids = xmalloc(xmul(r->n, sizeof(char *)));
		for (size_t i = 0; i < r->n; i++)
			r->ids[i] = r->ark.e[i].key;
		return 0;
	}
	r->is_npy = 1;
	if (!src->ids)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: a .npy file needs an id list (ids:)", src->vectors);
	rc = vpa_npy_read(src->vectors, &r->npy, err);
	if (rc)
		return rc;
	if (r->npy.ndim != 2 || r->npy.shape[1] == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: expected a 2-D (n, d) array with d > 0",
				src->vectors);
	rc = vpa_kaldi_read_list(src->ids, 0, &r->idl, err);
	if (rc)
		return rc;
	r->n = r->npy.shape[0];
	r->d = r->npy.shape[1];
	if (r->idl.n != r->n)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: %zu ids for %zu rows of %s", src->ids, r->idl.n,
				r->n, src->vectors);
	r->x = r->npy.data;
	r->ids = xmalloc(xmul(r->n, sizeof(char *)));
	if (r->idl.ncols == 2)
		r->spk2 = xmalloc(xmul(r->n, sizeof(char *)));
	for (size_t i = 0; i < r->n; i++) {
		r->ids[i] = r->idl.f[i * r->idl.ncols];
		if (r->spk2)
			r->spk2[i] = r->idl.f[i * 2 + 1];
	}
	for (size_t i = 0; i < r->n * r->d; i++)
		if (!isfinite(r->x[i])) {
			char w[512];
			raw_where(r, i / r->d, w, sizeof(w));
			return vpa_fail(err, VPA_EINPUT, NULL, "%s: value is not finite (utterance '%s', row %zu of %s)",
					w, r->ids[i / r->d], i / r->d, src->vectors);
		}
	/* Duplicate ids. */
	struct vpa_strmap m;
	vpa_strmap_init(&m);
	rc = 0;
	for (size_t i = 0; i < r->n && !rc; i++) {
		uint32_t first;
		if (vpa_strmap_put(&m, r->ids[i], (uint32_t)i, &first)) {
			struct vpa_loc loc = { r->idl.name, r->idl.line[i], 0 };
			rc = vpa_fail(err, VPA_EINPUT, &loc, "duplicate utterance '%s' (first on line %ld)",
				      r->ids[i], r->idl.line[first]);
		}
	}
	vpa_strmap_release(&m);
	return rc;
}

static void raw_release(struct raw *r)
{
	vpa_kaldi_ark_release(&r->ark);
	vpa_npy_release(&r->npy);
	vpa_kaldi_list_release(&r->idl);
	free(r->ids);
	free(r->spk2);
}

/* Map a 2-column list into a strmap from column 0 to row, rejecting duplicates. */
static int index_list(const struct vpa_kaldi_list *l, struct vpa_strmap *m, const char *what,
		      struct vpa_err *err)
{
	for (size_t i = 0; i < l->n; i++) {
		uint32_t first;
		if (vpa_strmap_put(m, l->f[2 * i], (uint32_t)i, &first)) {
			struct vpa_loc loc = { l->name, l->line[i], 0 };
			return vpa_fail(err, VPA_EINPUT, &loc, "duplicate %s '%s' (first on line %ld)", what,
					l->f[2 * i], l->line[first]);
		}
	}
	return 0;
}

int vpa_embset_import(const struct vpa_embset_src *src, struct vpa_embset *out,
		      struct vpa_err *err)
{
	struct raw r;
	struct vpa_kaldi_list u2s, s2g, u2d;
	struct vpa_strmap mu2s, ms2g, mu2d;
	struct vpa_embset es;
	memset(&r, 0, sizeof(r));
	vpa_kaldi_ark_init(&r.ark);
	vpa_kaldi_list_init(&r.idl);
	vpa_kaldi_list_init(&u2s);
	vpa_kaldi_list_init(&s2g);
	vpa_kaldi_list_init(&u2d);
	vpa_strmap_init(&mu2s);
	vpa_strmap_init(&ms2g);
	vpa_strmap_init(&mu2d);
	vpa_embset_init(&es);
	char w[512];
	int rc = read_raw(src, &r, err);
	if (rc)
		goto out;
	if (!r.spk2 && !src->utt2spk) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no utt2spk given", src->vectors);
		goto out;
	}
	if (src->utt2spk) {
		if ((rc = vpa_kaldi_read_list(src->utt2spk, 2, &u2s, err)) ||
		    (rc = index_list(&u2s, &mu2s, "utterance", err)))
			goto out;
	}
	if (src->spk2gender) {
		if ((rc = vpa_kaldi_read_list(src->spk2gender, 2, &s2g, err)) ||
		    (rc = index_list(&s2g, &ms2g, "speaker", err)))
			goto out;
		for (size_t i = 0; i < s2g.n; i++) {
			const char *g = s2g.f[2 * i + 1];
			if (strcmp(g, "m") && strcmp(g, "f")) {
				struct vpa_loc loc = { s2g.name, s2g.line[i], 0 };
				rc = vpa_fail(err, VPA_EINPUT, &loc, "unknown gender '%.40s': expected m or f", g);
				goto out;
			}
		}
	}
	if (src->utt2dur) {
		if ((rc = vpa_kaldi_read_list(src->utt2dur, 2, &u2d, err)) ||
		    (rc = index_list(&u2d, &mu2d, "utterance", err)))
			goto out;
	}
	es.d = r.d;
	for (size_t i = 0; i < r.n; i++) {
		const char *spk;
		uint32_t k;
		if (src->utt2spk) {
			if (!vpa_strmap_get(&mu2s, r.ids[i], &k)) {
				raw_where(&r, i, w, sizeof(w));
				rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no speaker for utterance '%s' (%s)",
					      src->utt2spk, r.ids[i], w);
				goto out;
			}
			spk = u2s.f[2 * k + 1];
			if (r.spk2 && strcmp(spk, r.spk2[i])) {
				struct vpa_loc loc = { u2s.name, u2s.line[k], 0 };
				raw_where(&r, i, w, sizeof(w));
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "speaker '%s' of utterance '%s' differs from '%s' in %s",
					      spk, r.ids[i], r.spk2[i], w);
				goto out;
			}
		} else {
			spk = r.spk2[i];
		}
		if (vpa_embset_add(&es, r.ids[i], spk, r.x + i * r.d, r.d, err) < 0) {
			rc = err ? err->status : VPA_EINPUT;
			goto out;
		}
		if (src->utt2dur) {
			if (!vpa_strmap_get(&mu2d, r.ids[i], &k)) {
				raw_where(&r, i, w, sizeof(w));
				rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no duration for utterance '%s' (%s)",
					      src->utt2dur, r.ids[i], w);
				goto out;
			}
			double dur;
			const char *f = u2d.f[2 * k + 1];
			const char *e = vpa_parse_double(f, f + strlen(f), &dur);
			if (!e || *e || !(dur > 0)) {
				struct vpa_loc loc = { u2d.name, u2d.line[k], 0 };
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "expected a positive duration in seconds, got '%.40s'", f);
				goto out;
			}
			vpa_embset_set_dur(&es, i, dur);
		}
	}
	if (src->spk2gender || src->need_gender) {
		for (size_t s = 0; s < es.n_spk; s++) {
			uint32_t k;
			if (src->spk2gender && vpa_strmap_get(&ms2g, es.spk_id[s], &k)) {
				vpa_embset_set_gender(&es, (uint32_t)s, s2g.f[2 * k + 1][0]);
			} else if (src->need_gender) {
				rc = vpa_fail(err, VPA_EINPUT, NULL,
					      "%s: no gender for speaker '%s' (needed for gender selection)",
					      src->spk2gender ? src->spk2gender : "spk2gender", es.spk_id[s]);
				goto out;
			}
		}
	}
	vpa_embset_release(out);
	*out = es;
	/* The maps hold pointers into es's strings, which moved with the struct
	 * copy unchanged (the strings themselves did not move). */
	vpa_embset_init(&es);
out:
	vpa_embset_release(&es);
	vpa_strmap_release(&mu2s);
	vpa_strmap_release(&ms2g);
	vpa_strmap_release(&mu2d);
	vpa_kaldi_list_release(&u2s);
	vpa_kaldi_list_release(&s2g);
	vpa_kaldi_list_release(&u2d);
	raw_release(&r);
	return rc;
}

int vpa_embset_write_ark(const struct vpa_embset *es, const char *path, struct vpa_err *err)
{
	return vpa_kaldi_write_vectors(path, es->utt, es->x, es->n, es->d, err);
}

int vpa_embset_select_list(const struct vpa_embset *es, const char *list_path,
			   struct vpa_embset *out, struct vpa_err *err)
{
	struct vpa_kaldi_list l;
	struct vpa_strmap seen;
	vpa_kaldi_list_init(&l);
	vpa_strmap_init(&seen);
	size_t *idx = NULL;
	int rc = vpa_kaldi_read_list(list_path, 1, &l, err);
	if (rc)
		goto out;
	idx = xmalloc(xmul(l.n, sizeof(size_t)));
	for (size_t i = 0; i < l.n; i++) {
		struct vpa_loc loc = { l.name, l.line[i], 0 };
		uint32_t first;
		if (vpa_strmap_put(&seen, l.f[i], (uint32_t)i, &first)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "duplicate utterance '%s' (first on line %ld)", l.f[i],
				      l.line[first]);
			goto out;
		}
		long r = vpa_embset_find_utt(es, l.f[i]);
		if (r < 0) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "unknown utterance '%s'", l.f[i]);
			goto out;
		}
		idx[i] = (size_t)r;
	}
	vpa_embset_subset_rows(es, idx, l.n, out);
out:
	free(idx);
	vpa_strmap_release(&seen);
	vpa_kaldi_list_release(&l);
	return rc;
}

int vpa_embset_resolve_trials(const struct vpa_kaldi_trials *t, const struct vpa_embset *enroll,
			      const struct vpa_embset *test, uint32_t *e_spk, uint32_t *t_row,
			      struct vpa_err *err)
{
	for (size_t i = 0; i < t->n; i++) {
		struct vpa_loc loc = { t->name, t->line[i], 0 };
		long s = vpa_embset_find_spk(enroll, t->enroll[i]);
		if (s < 0)
			return vpa_fail(err, VPA_EINPUT, &loc, "unknown enrolment speaker '%s'", t->enroll[i]);
		long r = vpa_embset_find_utt(test, t->test[i]);
		if (r < 0)
			return vpa_fail(err, VPA_EINPUT, &loc, "unknown test utterance '%s'", t->test[i]);
		e_spk[i] = (uint32_t)s;
		t_row[i] = (uint32_t)r;
	}
	return 0;
}
