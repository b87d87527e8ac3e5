/*
 * targets/anonymiser.c - pseudo-speaker selection of the x-vector
 * anonymiser (VoicePrivacy 2020 baseline; Srivastava et al., "Design choices
 * for x-vector based speaker anonymization", Interspeech 2020; COMPRISE D2.3
 * 4.2.3-4.2.4): distance (cosine | plda), proximity (random | near | far |
 * dense | sparse), gender (same | opposite | random), assignment (speaker |
 * utterance), N and N*.
 *
 * Distances to the pool are one GEMM per gender (vpa_cosine_scores or the
 * PLDA score matrix), not pair by pair.
 */
#include "targets/anon.h"
#include "formats/kaldi.h"
#include "base/la.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vpa_anon_cfg_init(struct vpa_anon_cfg *c)
{
	c->distance = VPA_ANON_PLDA;
	c->proximity = VPA_ANON_FAR;
	c->gender = VPA_ANON_SAME;
	c->assignment = VPA_ANON_SPEAKER;
	c->n = 200;
	c->n_star = 100;
	vpa_ap_opts_init(&c->ap);
}

static const char *const distance_names[] = {"cosine", "plda", NULL};
static const char *const proximity_names[] = {"random", "near", "far", "dense", "sparse", NULL};
static const char *const gender_names[] = {"same", "opposite", "random", NULL};
static const char *const assign_names[] = {"speaker", "utterance", NULL};

static const char *const *names_of(const char *what)
{
	if (!strcmp(what, "distance"))
		return distance_names;
	if (!strcmp(what, "proximity"))
		return proximity_names;
	if (!strcmp(what, "gender"))
		return gender_names;
	if (!strcmp(what, "assignment"))
		return assign_names;
	VPA_BUG("unknown anonymiser choice '%s'", what);
	return NULL;
}

int vpa_anon_parse(const char *what, const char *name)
{
	const char *const *v = names_of(what);
	for (int i = 0; v[i]; i++)
		if (!strcmp(v[i], name))
			return i;
	return -1;
}

const char *vpa_anon_name(const char *what, int value)
{
	const char *const *v = names_of(what);
	for (int i = 0; v[i]; i++)
		if (i == value)
			return v[i];
	return "?";
}

/* One gender of the pool. */
struct pool_g {
	char g;
	size_t n;         /* speakers */
	double *x;        /* (n, d) speaker means */
	uint32_t *cnt;    /* (n) utterance counts */
	char **id;        /* (n) borrowed speaker ids */
	uint32_t *label;  /* (n) AP cluster of each speaker (dense/sparse), owned */
	size_t n_clusters;
	uint32_t *csize;  /* (n_clusters) */
};

struct vpa_anonymiser {
	struct vpa_anon_cfg cfg;
	size_t d;
	struct pool_g g[2]; /* [0] = 'f', [1] = 'm' */
	struct vpa_backend *plda; /* plda distance only */
};

static int gidx(char g)
{
	return g == 'm' ? 1 : 0;
}

void vpa_anonymiser_free(struct vpa_anonymiser *a)
{
	if (!a)
		return;
	for (int k = 0; k < 2; k++) {
		free(a->g[k].x);
		free(a->g[k].cnt);
		free(a->g[k].id);
		free(a->g[k].label);
		free(a->g[k].csize);
	}
	vpa_backend_free(a->plda);
	free(a);
}

/* Similarities (ns, np) of source rows to pool rows of one gender: cos or PLDA LLR. */
static void similarities(const struct vpa_anonymiser *a, const double *src, const uint32_t *cnt,
			 size_t ns, const struct pool_g *p, double *out)
{
	if (a->cfg.distance == VPA_ANON_COSINE)
		vpa_cosine_scores(src, ns, p->x, p->n, a->d, out);
	else
		vpa_backend_score(a->plda, src, cnt, ns, p->x, p->n, out);
}

static int cluster_pool(struct vpa_anonymiser *a, struct pool_g *p, struct vpa_err *err)
{
	if (p->n == 0)
		return 0;
	double *s = xmalloc(xmul(xmul(p->n, p->n), sizeof(double)));
	uint32_t *ex = xmalloc(xmul(p->n, sizeof(uint32_t)));
	similarities(a, p->x, p->cnt, p->n, p, s);
	/* similarity = minus the distance: cosine distance is 1 - cos */
	if (a->cfg.distance == VPA_ANON_COSINE)
		for (size_t i = 0; i < p->n * p->n; i++)
			s[i] -= 1;
	p->label = xmalloc(xmul(p->n, sizeof(uint32_t)));
	int rc = vpa_apcluster(s, p->n, &a->cfg.ap, p->label, ex, &p->n_clusters, NULL, NULL, err);
	if (!rc) {
		p->csize = xcalloc(p->n_clusters, sizeof(uint32_t));
		for (size_t i = 0; i < p->n; i++)
			p->csize[p->label[i]]++;
	}
	free(s);
	free(ex);
	return rc;
}

struct vpa_anonymiser *vpa_anonymiser_new(const struct vpa_embset *pool,
					  const struct vpa_anon_cfg *cfg, struct vpa_err *err)
{
	struct vpa_anonymiser *a = xcalloc(1, sizeof(*a));
	double *means = NULL;
	uint32_t *cnt = NULL;
	a->cfg = *cfg;
	a->d = pool->d;
	a->g[0].g = 'f';
	a->g[1].g = 'm';
	if (pool->n == 0) {
		vpa_fail(err, VPA_EINPUT, NULL, "the anonymisation pool is empty");
		goto fail;
	}
	if (cfg->n_star == 0 || cfg->n_star > cfg->n) {
		vpa_fail(err, VPA_EINPUT, NULL, "n_star must be in [1, n] (n = %zu), got %zu", cfg->n,
			 cfg->n_star);
		goto fail;
	}
	means = xmalloc(xmul(xmul(pool->n_spk, pool->d), sizeof(double)));
	cnt = xmalloc(xmul(pool->n_spk, sizeof(uint32_t)));
	vpa_embset_spk_means(pool, means, cnt);
	for (size_t s = 0; s < pool->n_spk; s++) {
		if (!cnt[s])
			continue;
		char g = pool->gender ? pool->gender[s] : 0;
		if (g != 'm' && g != 'f') {
			vpa_fail(err, VPA_EINPUT, NULL,
				 "pool speaker '%s' has no gender (spk2gender): the anonymiser selects "
				 "pool speakers by gender", pool->spk_id[s]);
			goto fail;
		}
		a->g[gidx(g)].n++;
	}
	for (int k = 0; k < 2; k++) {
		struct pool_g *p = &a->g[k];
		p->x = xmalloc(xmul(xmul(p->n ? p->n : 1, pool->d), sizeof(double)));
		p->cnt = xmalloc(xmul(p->n ? p->n : 1, sizeof(uint32_t)));
		p->id = xmalloc(xmul(p->n ? p->n : 1, sizeof(char *)));
		p->n = 0;
	}
	for (size_t s = 0; s < pool->n_spk; s++) {
		if (!cnt[s])
			continue;
		struct pool_g *p = &a->g[gidx(pool->gender[s])];
		memcpy(p->x + p->n * pool->d, means + s * pool->d, pool->d * sizeof(double));
		p->cnt[p->n] = cnt[s];
		p->id[p->n] = pool->spk_id[s];
		p->n++;
	}
	if (cfg->distance == VPA_ANON_PLDA) {
		struct vpa_backend_cfg bc;
		vpa_backend_cfg_init(&bc);
		a->plda = vpa_backend_train(pool, &bc, err);
		if (!a->plda) {
			char m[sizeof(err->msg)];
			memcpy(m, err->msg, sizeof(m));
			int st = err->status;
			vpa_err_init(err);
			vpa_fail(err, st, NULL, "PLDA of the anonymisation pool: %s", m);
			goto fail;
		}
	}
	if (cfg->proximity == VPA_ANON_DENSE || cfg->proximity == VPA_ANON_SPARSE)
		for (int k = 0; k < 2; k++)
			if (cluster_pool(a, &a->g[k], err))
				goto fail;
	free(means);
	free(cnt);
	return a;
fail:
	free(means);
	free(cnt);
	vpa_anonymiser_free(a);
	return NULL;
}

size_t vpa_anonymiser_clusters(const struct vpa_anonymiser *a, char gender,
			       const uint32_t **label, size_t *n_pool)
{
	const struct pool_g *p = &a->g[gidx(gender)];
	*label = p->label;
	*n_pool = p->n;
	return p->n_clusters;
}

void vpa_anon_result_release(struct vpa_anon_result *r)
{
	for (size_t i = 0; r->id && i < r->n_pseudo; i++)
		free(r->id[i]);
	free(r->id);
	free(r->pseudo);
	free(r->gender);
	free(r->of_utt);
	memset(r, 0, sizeof(*r));
}

/* Draw k of the n values v (in place, partial Fisher-Yates): v[0..k) is the draw. */
static void draw(struct vpa_rng *rng, uint32_t *v, size_t n, size_t k)
{
	for (size_t i = 0; i < k && i < n; i++) {
		size_t j = i + (size_t)vpa_rng_below(rng, n - i);
		uint32_t t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/* Stable argsort of dist ascending (desc = 1: descending). */
static const double *sort_key;
static int sort_desc;
static int cmp_idx(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	double x = sort_key[a], y = sort_key[b];
	if (x != y)
		return sort_desc ? (x < y ? 1 : -1) : (x < y ? -1 : 1);
	return (a > b) - (a < b);
}

/* Clusters in density order for dense (largest first) or sparse (smallest first). */
static const uint32_t *csz_key;
static int csz_desc;
static int cmp_cluster(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (csz_key[a] != csz_key[b])
		return csz_desc ? (csz_key[a] < csz_key[b] ? 1 : -1)
				: (csz_key[a] < csz_key[b] ? -1 : 1);
	return (a > b) - (a < b);
}

/* Choose the pool speakers of one source into sel (returns the count). */
static size_t choose(const struct vpa_anonymiser *a, const struct pool_g *p, const double *dist,
		     struct vpa_rng *rng, uint32_t *work, uint32_t *sel)
{
	const struct vpa_anon_cfg *c = &a->cfg;
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++)
		work[i] = (uint32_t)i;
	switch (c->proximity) {
	case VPA_ANON_RANDOM:
		draw(rng, work, p->n, c->n_star);
		k = c->n_star;
		break;
	case VPA_ANON_NEAR:
	case VPA_ANON_FAR:
		/* qsort with static keys: the anonymiser is called from one thread at a time */
		sort_key = dist;
		sort_desc = c->proximity == VPA_ANON_FAR;
		qsort(work, p->n, sizeof(uint32_t), cmp_idx);
		draw(rng, work, c->n, c->n_star);
		k = c->n_star;
		break;
	default: { /* dense | sparse */
		size_t K = p->n_clusters, elig = 0;
		uint32_t *order = xmalloc(xmul(K, sizeof(uint32_t)));
		for (size_t i = 0; i < K; i++)
			if (c->proximity == VPA_ANON_DENSE || p->csize[i] >= 2)
				order[elig++] = (uint32_t)i;
		if (elig == 0) /* sparse with only singletons */
			for (size_t i = 0; i < K; i++)
				order[elig++] = (uint32_t)i;
		csz_key = p->csize;
		csz_desc = c->proximity == VPA_ANON_DENSE;
		qsort(order, elig, sizeof(uint32_t), cmp_cluster);
		size_t top = (K + 3) / 4; /* the quarter of the clusters */
		if (top > elig)
			top = elig;
		if (top == 0)
			top = 1;
		uint32_t cl = order[vpa_rng_below(rng, top)];
		free(order);
		size_t m = 0;
		for (size_t i = 0; i < p->n; i++)
			if (p->label[i] == cl)
				work[m++] = (uint32_t)i;
		k = (m + 1) / 2;
		draw(rng, work, m, k);
		break;
	}
	}
	memcpy(sel, work, k * sizeof(uint32_t));
	return k;
}

int vpa_anonymise(const struct vpa_anonymiser *a, const struct vpa_embset *src, uint64_t seed,
		  const char *stream, struct vpa_anon_result *out, struct vpa_err *err)
{
	const struct vpa_anon_cfg *c = &a->cfg;
	int spk_level = c->assignment == VPA_ANON_SPEAKER;
	size_t d = a->d, ns = 0;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	if (src->n && src->d != d)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"the set to anonymise has dimension %zu, the pool has %zu", src->d, d);
	/* sources: speaker means or utterances */
	double *sx;
	uint32_t *scnt;
	char *sg;
	char **sid;
	uint32_t *spk_of_src = NULL;
	if (spk_level) {
		sx = xmalloc(xmul(xmul(src->n_spk ? src->n_spk : 1, d), sizeof(double)));
		scnt = xmalloc(xmul(src->n_spk ? src->n_spk : 1, sizeof(uint32_t)));
		vpa_embset_spk_means(src, sx, scnt);
		ns = src->n_spk;
	} else {
		ns = src->n;
		sx = xmalloc(xmul(xmul(ns ? ns : 1, d), sizeof(double)));
		memcpy(sx, src->x, ns * d * sizeof(double));
		scnt = xmalloc(xmul(ns ? ns : 1, sizeof(uint32_t)));
		for (size_t i = 0; i < ns; i++)
			scnt[i] = 1;
	}
	sg = xcalloc(ns ? ns : 1, 1);
	sid = xcalloc(ns ? ns : 1, sizeof(char *));
	spk_of_src = xmalloc(xmul(ns ? ns : 1, sizeof(uint32_t)));
	struct vpa_rng *rng = xmalloc(xmul(ns ? ns : 1, sizeof(struct vpa_rng)));
	for (size_t i = 0; i < ns; i++) {
		uint32_t s = spk_level ? (uint32_t)i : src->spk[i];
		spk_of_src[i] = s;
		sid[i] = spk_level ? src->spk_id[s] : src->utt[i];
		char name[512];
		snprintf(name, sizeof(name), "anon/%s/%s", stream, sid[i]);
		vpa_rng_split(&rng[i], seed, name);
		char g = src->gender ? src->gender[s] : 0;
		int need = c->gender != VPA_ANON_GRANDOM;
		if (need && g != 'm' && g != 'f') {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "speaker '%s' has no gender (spk2gender): needed for gender "
				      "selection '%s'", src->spk_id[s], vpa_anon_name("gender", c->gender));
			goto out;
		}
		if (c->gender == VPA_ANON_SAME)
			sg[i] = g;
		else if (c->gender == VPA_ANON_OPPOSITE)
			sg[i] = g == 'm' ? 'f' : 'm';
		else
			sg[i] = vpa_rng_below(&rng[i], 2) ? 'm' : 'f';
	}
	out->n_pseudo = ns;
	out->d = d;
	out->pseudo = xcalloc(xmul(ns ? ns : 1, d), sizeof(double));
	out->id = xcalloc(ns ? ns : 1, sizeof(char *));
	out->gender = xcalloc(ns ? ns : 1, 1);
	out->of_utt = xmalloc(xmul(src->n ? src->n : 1, sizeof(uint32_t)));
	for (size_t i = 0; i < ns; i++) {
		out->id[i] = xstrdup(sid[i]);
		out->gender[i] = sg[i];
	}
	for (size_t i = 0; i < src->n; i++)
		out->of_utt[i] = spk_level ? src->spk[i] : (uint32_t)i;

	for (int k = 0; k < 2; k++) {
		const struct pool_g *p = &a->g[k];
		size_t m = 0;
		for (size_t i = 0; i < ns; i++)
			m += sg[i] == p->g;
		if (!m)
			continue;
		const char *gname = p->g == 'm' ? "male" : "female";
		if (p->n == 0) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "the anonymisation pool has no %s speaker (gender selection '%s')",
				      gname, vpa_anon_name("gender", c->gender));
			goto out;
		}
		size_t need = (c->proximity == VPA_ANON_NEAR || c->proximity == VPA_ANON_FAR) ? c->n
			      : c->proximity == VPA_ANON_RANDOM ? c->n_star : 1;
		if (p->n < need) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "the anonymisation pool has %zu %s speakers, fewer than %s = %zu",
				      p->n, gname, c->proximity == VPA_ANON_RANDOM ? "n_star" : "n",
				      need);
			goto out;
		}
		/* the sources of this gender, one GEMM against the pool */
		uint32_t *who = xmalloc(xmul(m, sizeof(uint32_t)));
		double *gx = xmalloc(xmul(xmul(m, d), sizeof(double)));
		uint32_t *gc = xmalloc(xmul(m, sizeof(uint32_t)));
		m = 0;
		for (size_t i = 0; i < ns; i++)
			if (sg[i] == p->g) {
				memcpy(gx + m * d, sx + i * d, d * sizeof(double));
				gc[m] = scnt[i] ? scnt[i] : 1;
				who[m++] = (uint32_t)i;
			}
		double *dist = NULL;
		if (c->proximity == VPA_ANON_NEAR || c->proximity == VPA_ANON_FAR) {
			dist = xmalloc(xmul(xmul(m, p->n), sizeof(double)));
			similarities(a, gx, gc, m, p, dist);
			for (size_t i = 0; i < m * p->n; i++)
				dist[i] = c->distance == VPA_ANON_COSINE ? 1 - dist[i] : -dist[i];
		}
		uint32_t *work = xmalloc(xmul(p->n, sizeof(uint32_t)));
		uint32_t *sel = xmalloc(xmul(p->n, sizeof(uint32_t)));
		for (size_t j = 0; j < m; j++) {
			size_t i = who[j];
			size_t kk = choose(a, p, dist ? dist + j * p->n : NULL, &rng[i], work, sel);
			double *ps = out->pseudo + i * d;
			for (size_t t = 0; t < kk; t++)
				vpa_daxpy(d, 1.0, p->x + (size_t)sel[t] * d, ps);
			for (size_t t = 0; t < d; t++)
				ps[t] /= (double)kk;
		}
		free(work);
		free(sel);
		free(dist);
		free(who);
		free(gx);
		free(gc);
	}
out:
	if (rc)
		vpa_anon_result_release(out);
	free(sx);
	free(scnt);
	free(sg);
	free(sid);
	free(spk_of_src);
	free(rng);
	return rc;
}

int vpa_anon_write_ark(const struct vpa_anon_result *r, const char *path, struct vpa_err *err)
{
	return vpa_kaldi_write_vectors(path, r->id, r->pseudo, r->n_pseudo, r->d, err);
}
