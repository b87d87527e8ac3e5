/*
 * attacks/evaluate.c - the shared "score set -> record + figures" step
 * (vpa_record_from_scores, called by every attack that ends in scores) and
 * the attack kind `evaluate`, which runs it on each set of a `scores` target.
 */
#include "attacks/attacks.h"
#include "base/dist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vpa_eval_opts_init(struct vpa_eval_opts *o)
{
	vpa_metrics_opts_init(&o->m);
	o->ci_level = 0;
	o->ci_reps = 1000;
	o->seed = 1;
	o->det_points = 300;
	o->chance_expected = 0;
}

/*
 * Sanity warnings.  A condition is one of the table below; a warning is
 * (attack, label, condition, value).  Inside a run they are grouped: one line
 * per attack and condition, with the count of records and the range of the
 * values (vpa_warn_groups_flush); alone, they are given at once.
 */
enum { W_ANTI, W_REVERSED, W_FEW_TAR, W_FEW_NON, W_TIES, W_LINK_UNDEF, W_LINK, W_CLLR, W_N };
static const struct {
	const char *what;    /* "LABEL: what (value): then" */
	const char *unit;    /* value format: "%" (x 100, %.1f%%) or "n" (count) or "b" (bits) */
	const char *then;
} cond[W_N] = {
	[W_ANTI] = {"the scores are anti-correlated with identity", "%",
		    "an attacker who reverses them reaches EER"},
	[W_REVERSED] = {"EER (threshold sweep) above 50%", "%",
			"scores may be reversed (higher must mean same source)"},
	[W_FEW_TAR] = {"fewer than 100 target trials", "n", "the metrics are unreliable"},
	[W_FEW_NON] = {"fewer than 100 non-target trials", "n", "the metrics are unreliable"},
	[W_TIES] = {"more than 10% of the trials share their score with another trial", "%",
		    "a threshold cannot split them"},
	[W_LINK_UNDEF] = {"fewer than 10 target (mated) trials", "n", "linkability is undefined"},
	[W_LINK] = {"linkability from too coarse a histogram", "",
		    "the VoicePrivacy value is unreliable (see linkability_hist and the record's "
		    "'unreliable')"},
	[W_CLLR] = {"Cllr above 1 bit", "b",
		    "the scores are not calibrated log-likelihood ratios (a system that says "
		    "nothing scores 1 bit); read Cllr_min for what they can discriminate"},
};

struct wg_item {
	char *attack, *label;
	int c;
	double v;
	char *detail; /* W_LINK: the reason */
};
struct vpa_warn_groups {
	struct wg_item *it;
	size_t n, cap;
};

static void fmt_value(char *buf, size_t n, int c, double v)
{
	const char *u = cond[c].unit;
	if (!strcmp(u, "%"))
		snprintf(buf, n, "%.1f%%", 100 * v);
	else if (!strcmp(u, "n"))
		snprintf(buf, n, "%.0f", v);
	else if (!strcmp(u, "b"))
		snprintf(buf, n, "%.3f bits", v);
	else
		buf[0] = 0;
}

/* The line of one warning alone. */
static void one_line(char *msg, size_t n, const char *label, int c, double v, const char *detail)
{
	char val[64];
	fmt_value(val, sizeof val, c, v);
	if (c == W_LINK)
		snprintf(msg, n, "%s: linkability is unreliable: %s", label, detail);
	else if (c == W_ANTI) /* detail: the sweep EER and its interval */
		snprintf(msg, n, "%s: %s (%s): %s %s", label, cond[c].what, detail, cond[c].then, val);
	else if (c == W_FEW_TAR || c == W_FEW_NON)
		snprintf(msg, n, "%s: only %s %s trials (fewer than 100): %s", label, val,
			 c == W_FEW_TAR ? "target" : "non-target", cond[c].then);
	else if (val[0])
		snprintf(msg, n, "%s: %s (%s): %s", label, cond[c].what, val, cond[c].then);
	else
		snprintf(msg, n, "%s: %s: %s", label, cond[c].what, cond[c].then);
}

struct vpa_warn_groups *vpa_warn_groups_new(void)
{
	return xcalloc(1, sizeof(struct vpa_warn_groups));
}

static void wg_add(struct vpa_warn_groups *g, const char *attack, const char *label, int c,
		   double v, const char *detail)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 16;
		g->it = xrealloc(g->it, xmul(g->cap, sizeof(*g->it)));
	}
	g->it[g->n++] = (struct wg_item){xstrdup(attack), xstrdup(label), c, v,
					 detail ? xstrdup(detail) : NULL};
}

void vpa_warn_groups_flush(struct vpa_run_ctx *ctx)
{
	struct vpa_warn_groups *g = ctx->warn_groups;
	if (!g)
		return;
	char *done = xcalloc(g->n ? g->n : 1, 1);
	for (size_t i = 0; i < g->n; i++) {
		if (done[i])
			continue;
		const struct wg_item *a = &g->it[i];
		size_t cnt = 0;
		double lo = INFINITY, hi = -INFINITY;
		for (size_t j = i; j < g->n; j++) {
			const struct wg_item *b = &g->it[j];
			if (done[j] || b->c != a->c || strcmp(b->attack, a->attack))
				continue;
			done[j] = 1;
			cnt++;
			lo = fmin(lo, b->v);
			hi = fmax(hi, b->v);
		}
		char msg[1024], vl[64], vh[64];
		if (cnt == 1) {
			one_line(msg, sizeof msg, a->label, a->c, a->v, a->detail);
		} else {
			fmt_value(vl, sizeof vl, a->c, lo);
			fmt_value(vh, sizeof vh, a->c, hi);
			if (a->c == W_LINK)
				snprintf(msg, sizeof msg, "%s: linkability is unreliable in %zu records "
					 "(first, %s: %s)", a->attack, cnt, a->label, a->detail);
			else if (a->c == W_ANTI && lo == hi)
				snprintf(msg, sizeof msg, "%s: %s in %zu records: %s %s", a->attack,
					 cond[a->c].what, cnt, cond[a->c].then, vl);
			else if (a->c == W_ANTI)
				snprintf(msg, sizeof msg, "%s: %s in %zu records: %s %s to %s", a->attack,
					 cond[a->c].what, cnt, cond[a->c].then, vl, vh);
			else if (!vl[0])
				snprintf(msg, sizeof msg, "%s: %s in %zu records: %s", a->attack,
					 cond[a->c].what, cnt, cond[a->c].then);
			else if (lo == hi)
				snprintf(msg, sizeof msg, "%s: %s in %zu records (%s): %s", a->attack,
					 cond[a->c].what, cnt, vl, cond[a->c].then);
			else
				snprintf(msg, sizeof msg, "%s: %s in %zu records (%s to %s): %s",
					 a->attack, cond[a->c].what, cnt, vl, vh, cond[a->c].then);
		}
		vpa_ctx_warn(ctx, "%s", msg);
	}
	free(done);
	for (size_t i = 0; i < g->n; i++) {
		free(g->it[i].attack);
		free(g->it[i].label);
		free(g->it[i].detail);
	}
	free(g->it);
	free(g);
	ctx->warn_groups = NULL;
}

void vpa_warn_groups_append(struct vpa_warn_groups *dst, const struct vpa_warn_groups *src)
{
	for (size_t i = 0; dst && src && i < src->n; i++)
		wg_add(dst, src->it[i].attack, src->it[i].label, src->it[i].c, src->it[i].v,
		       src->it[i].detail);
}

static void pack_str(struct vpa_buf *b, const char *s)
{
	vpa_pack_u64(b, s ? strlen(s) + 1 : 0);
	if (s)
		vpa_buf_add(b, s, strlen(s) + 1);
}

static int unpack_str(const unsigned char **p, const unsigned char *end, char **s)
{
	uint64_t l;
	*s = NULL;
	if (vpa_unpack_u64(p, end, &l) || (uint64_t)(end - *p) < l || (l && (*p)[l - 1]))
		return -1;
	if (l) {
		*s = xstrdup((const char *)*p);
		*p += l;
	}
	return 0;
}

void vpa_warn_groups_pack(const struct vpa_warn_groups *g, struct vpa_buf *b)
{
	vpa_pack_u64(b, g ? g->n : 0);
	for (size_t i = 0; g && i < g->n; i++) {
		pack_str(b, g->it[i].attack);
		pack_str(b, g->it[i].label);
		vpa_pack_u64(b, (uint64_t)g->it[i].c);
		vpa_pack_f64s(b, &g->it[i].v, 1);
		pack_str(b, g->it[i].detail);
	}
}

int vpa_warn_groups_unpack(struct vpa_warn_groups *g, const unsigned char **p,
			   const unsigned char *end)
{
	uint64_t n, c;
	if (vpa_unpack_u64(p, end, &n))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		char *a = NULL, *l = NULL, *d = NULL;
		double v;
		int rc = unpack_str(p, end, &a) || unpack_str(p, end, &l) ||
			 vpa_unpack_u64(p, end, &c) || vpa_unpack_f64s(p, end, &v, 1) ||
			 unpack_str(p, end, &d) || !a || !l || c >= (uint64_t)W_N;
		if (!rc)
			wg_add(g, a, l, (int)c, v, d);
		free(a);
		free(l);
		free(d);
		if (rc)
			return -1;
	}
	return 0;
}

void vpa_warn_groups_free(struct vpa_warn_groups *g)
{
	for (size_t i = 0; g && i < g->n; i++) {
		free(g->it[i].attack);
		free(g->it[i].label);
		free(g->it[i].detail);
	}
	if (g)
		free(g->it);
	free(g);
}

/* Every condition of m, to f(ctx, c, value, detail). */
static void conditions(const struct vpa_metrics *m, int chance_expected,
		       void (*f)(void *ctx, int c, double v, const char *detail), void *ctx)
{
	/* The ROCCH-EER never exceeds 50% (the hull includes the chance line), so
	 * reversed scores show in the sweep EER.  When its interval lies above 50%
	 * the scores are anti-correlated with identity (vpa_metrics_judge_reversal):
	 * a finding for every attacker, the ignorant one included.  A sweep EER
	 * above 50% whose interval reaches 50% is only a hint, not said for an
	 * attacker expected at chance (the ignorant attacker). */
	if (m->anti_correlated) {
		char d[128];
		snprintf(d, sizeof d, "threshold-sweep EER %.1f%%, %g%% interval %.1f-%.1f%%, above 50%%",
			 100 * m->eer_sweep, 100 * m->eer_sweep_level, 100 * m->eer_sweep_lo,
			 100 * m->eer_sweep_hi);
		f(ctx, W_ANTI, m->eer_flipped, d);
	} else if (m->eer_sweep > 0.5 && !chance_expected) {
		f(ctx, W_REVERSED, m->eer_sweep, NULL);
	}
	if (m->n_tar < VPA_MIN_TARGET)
		f(ctx, W_FEW_TAR, (double)m->n_tar, NULL);
	if (m->n_non < VPA_MIN_NONTARGET)
		f(ctx, W_FEW_NON, (double)m->n_non, NULL);
	if (m->tied_fraction > 0.1)
		f(ctx, W_TIES, m->tied_fraction, NULL);
	if (!m->linkability_defined)
		f(ctx, W_LINK_UNDEF, (double)m->n_tar, NULL);
	else if (!m->linkability_reliable && m->n_tar >= VPA_MIN_TARGET &&
		 m->n_non >= VPA_MIN_NONTARGET)
		f(ctx, W_LINK, 0, m->linkability_why); /* the counts have their own line */
	if (m->cllr > 1)
		f(ctx, W_CLLR, m->cllr, NULL);
}

struct emit_ctx {
	const char *label;
	void (*emit)(void *ctx, const char *msg);
	void *ctx;
};

static void emit_now(void *p, int c, double v, const char *detail)
{
	struct emit_ctx *e = p;
	char msg[1024];
	one_line(msg, sizeof msg, e->label, c, v, detail);
	e->emit(e->ctx, msg);
}

void vpa_sanity_warnings(const char *label, const struct vpa_metrics *m, int chance_expected,
			 void (*emit)(void *ctx, const char *msg), void *ctx)
{
	struct emit_ctx e = {label, emit, ctx};
	conditions(m, chance_expected, emit_now, &e);
}

struct group_ctx {
	struct vpa_warn_groups *g;
	const char *attack, *label;
};

static void emit_group(void *p, int c, double v, const char *detail)
{
	struct group_ctx *e = p;
	wg_add(e->g, e->attack, e->label, c, v, detail);
}

static void ctx_emit(void *ctx, const char *msg)
{
	vpa_ctx_warn(ctx, "%s", msg);
}

/* The record's "unreliable" map (vpa_metrics_reliability). */
static void unrel_emit(void *ctx, const char *path, const char *reason)
{
	vpa_json_set_str(ctx, path, reason);
}

/* Every null leaf of obj under prefix that u does not name yet. */
static void mark_nulls(struct vpa_json *u, const struct vpa_json *obj, const char *prefix)
{
	for (size_t i = 0; i < obj->n; i++) {
		char path[256];
		snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", obj->keys[i]);
		const struct vpa_json *v = obj->items[i];
		if (v->type == VPA_JSON_OBJ) {
			mark_nulls(u, v, path);
			continue;
		}
		if (v->type != VPA_JSON_NULL && !(v->type == VPA_JSON_NUM && !isfinite(v->num)))
			continue;
		/* a prefix already named covers it (zebra covers zebra.dece) */
		int covered = 0;
		for (size_t k = 0; k < u->n && !covered; k++) {
			size_t l = strlen(u->keys[k]);
			covered = !strncmp(path, u->keys[k], l) && (path[l] == 0 || path[l] == '.');
		}
		if (!covered)
			vpa_json_set_str(u, path, "undefined value");
	}
}

void vpa_record_mark_undefined(struct vpa_json *rec)
{
	const struct vpa_json *m = vpa_json_get(rec, "metrics");
	if (!m || m->type != VPA_JSON_OBJ)
		return;
	struct vpa_json *u = vpa_json_get(rec, "unreliable");
	if (!u || u->type != VPA_JSON_OBJ) {
		u = vpa_json_obj();
		vpa_json_set(rec, "unreliable", u);
	}
	mark_nulls(u, m, "");
}

/* Everything computed for one score set (thread-safe: no JSON, no warnings). */
struct eval_res {
	int rc;
	struct vpa_err err;
	struct vpa_metrics m;
	struct vpa_linkability l;
	int have_l;
	size_t n_det;
	double *pm, *pf; /* (n_det), owned */
	int have_ci;
	struct vpa_ci ci;
	int rev_by_identity;  /* the reversal interval: identities (1) or trials (0) resampled */
	size_t rev_reps;      /* its replicates; 0: no interval was needed */
};

static void res_release(struct eval_res *r)
{
	if (r->have_l)
		vpa_linkability_release(&r->l);
	free(r->pm);
	free(r->pf);
	memset(r, 0, sizeof(*r));
}

static uint64_t ci_seed(uint64_t seed, const char *attack, const char *sub, long layer)
{
	char name[512];
	struct vpa_rng r;
	snprintf(name, sizeof(name), "ci/%s/%s/%ld", attack, sub ? sub : "", layer);
	vpa_rng_split(&r, seed, name);
	return vpa_rng_u64(&r);
}

static void sorted_copy(const double *x, const uint32_t *e, const uint32_t *t, size_t n,
			double **xs, uint32_t **es, uint32_t **ts)
{
	*xs = xmalloc(xmul(n, sizeof(double)));
	memcpy(*xs, x, n * sizeof(double));
	uint32_t *perm = xmalloc(xmul(n, sizeof(uint32_t)));
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	vpa_sort_scores(*xs, perm, n);
	if (e && t) {
		*es = xmalloc(xmul(n, sizeof(uint32_t)));
		*ts = xmalloc(xmul(n, sizeof(uint32_t)));
		for (size_t i = 0; i < n; i++) {
			(*es)[i] = e[perm[i]];
			(*ts)[i] = t[perm[i]];
		}
	} else {
		*es = *ts = NULL;
	}
	free(perm);
}

static void eval_compute(const struct vpa_trials *t, const struct vpa_eval_opts *o,
			 uint64_t seed, struct eval_res *r)
{
	double *tar = NULL, *non = NULL;
	uint32_t *te = NULL, *tt = NULL, *ne = NULL, *nt = NULL;
	memset(r, 0, sizeof(*r));
	vpa_err_init(&r->err);
	int ids = t->tar_e && t->tar_t && t->non_e && t->non_t;
	sorted_copy(t->tar, ids ? t->tar_e : NULL, ids ? t->tar_t : NULL, t->n_tar, &tar, &te, &tt);
	sorted_copy(t->non, ids ? t->non_e : NULL, ids ? t->non_t : NULL, t->n_non, &non, &ne, &nt);
	struct vpa_scores s = {tar, t->n_tar, non, t->n_non, NULL, NULL};
	if ((r->rc = vpa_metrics_all(&s, &o->m, &r->m, &r->err)))
		goto out;
	if (r->m.linkability_defined) {
		if ((r->rc = vpa_linkability(&s, o->m.omega, o->m.bins, &r->l, &r->err)))
			goto out;
		r->have_l = 1;
	}
	size_t cap = o->det_points ? o->det_points : 300;
	r->pm = xmalloc(xmul(cap, sizeof(double)));
	r->pf = xmalloc(xmul(cap, sizeof(double)));
	r->n_det = vpa_det_sample(&s, cap, r->pm, r->pf);
	struct vpa_ci_opts co = {
		.level = o->ci_level, .reps = o->ci_reps, .seed = seed,
		.tar_e = te, .tar_t = tt, .non_e = ne, .non_t = nt,
		.n_e = ids ? t->n_ids_e : 0, .n_t = ids ? t->n_ids_t : 0,
		.omega = o->m.omega, .bins = o->m.bins,
	};
	if (o->ci_level > 0) {
		if ((r->rc = vpa_bootstrap_ci(&s, &co, &r->ci, &r->err)))
			goto out;
		r->have_ci = 1;
	}
	/* what an attacker who reverses the scores reaches, and whether they are
	 * anti-correlated: the sweep EER's 95% interval, drawn only when the sweep
	 * EER exceeds 0.5 (below, the interval cannot lie above 0.5) */
	struct vpa_ci used = {0};
	int own = r->have_ci && o->ci_level == VPA_REVERSAL_LEVEL;
	if ((r->rc = vpa_metrics_reversal(tar, t->n_tar, non, t->n_non, &o->m, &co,
					  own ? &r->ci : NULL, &r->m, &used, &r->err)))
		goto out;
	r->rev_by_identity = used.by_identity;
	r->rev_reps = used.reps;
out:
	free(tar);
	free(non);
	free(te);
	free(tt);
	free(ne);
	free(nt);
}

struct vpa_json *vpa_ci_extended_json(const struct vpa_ci *ci)
{
	static const char *const names[4] = {"eer", "cllr_min", "linkability", "eer_sweep"};
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (int k = 0; k < 4; k++)
		if (ci->extended & (1u << k))
			vpa_buf_printf(&b, "%s%s", b.len ? ", " : "", names[k]);
	struct vpa_json *j = b.len ? vpa_json_str(b.data) : vpa_json_null();
	vpa_buf_release(&b);
	return j;
}

static struct vpa_json *num_array(const double *x, size_t n)
{
	struct vpa_json *a = vpa_json_arr();
	for (size_t i = 0; i < n; i++)
		vpa_json_push(a, vpa_json_num(x[i]));
	return a;
}

static struct vpa_json *pair(double lo, double hi)
{
	struct vpa_json *a = vpa_json_arr();
	vpa_json_push(a, vpa_json_num(lo));
	vpa_json_push(a, vpa_json_num(hi));
	return a;
}

/* A file-name-safe slug of "a-b-c". */
static char *slug(const char *a, const char *b, const char *c)
{
	struct vpa_buf buf;
	vpa_buf_init(&buf);
	vpa_buf_printf(&buf, "%s%s%s%s%s", a, b ? "-" : "", b ? b : "", c ? "-" : "", c ? c : "");
	for (char *p = buf.data; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			*p = '-';
	return buf.data;
}

static void eval_emit(struct vpa_run_ctx *ctx, const char *attack, const char *sub, long layer,
		      struct eval_res *r, const struct vpa_eval_opts *o,
		      struct vpa_attack_out *out, struct vpa_json *det_series)
{
	const struct vpa_metrics *m = &r->m;
	char label[512], lay[32] = "";
	if (layer >= 0)
		snprintf(lay, sizeof(lay), " layer %ld", layer);
	snprintf(label, sizeof(label), "%s%s%s%s", attack, sub ? "." : "", sub ? sub : "", lay);

	struct vpa_json *rec = vpa_json_obj();
	vpa_json_set_str(rec, "attack", attack);
	vpa_json_set(rec, "sub", sub ? vpa_json_str(sub) : vpa_json_null());
	vpa_json_set(rec, "layer", layer >= 0 ? vpa_json_num((double)layer) : vpa_json_null());
	vpa_json_set(rec, "sweep", vpa_json_null());
	struct vpa_json *mj = vpa_json_obj();
	vpa_json_set_num(mj, "n_target", (double)m->n_tar);
	vpa_json_set_num(mj, "n_nontarget", (double)m->n_non);
	vpa_json_set_num(mj, "eer", m->eer);
	vpa_json_set_num(mj, "eer_threshold", m->eer_threshold);
	vpa_json_set_num(mj, "eer_sweep", m->eer_sweep);
	vpa_json_set_num(mj, "cllr", m->cllr);
	vpa_json_set_num(mj, "cllr_min", m->cllr_min);
	vpa_json_set(mj, "linkability",
		     m->linkability_defined ? vpa_json_num(m->linkability) : vpa_json_null());
	vpa_json_set_num(mj, "min_dcf", m->min_dcf);
	struct vpa_json *z = vpa_json_obj();
	vpa_json_set_num(z, "dece", m->zebra.dece);
	vpa_json_set_num(z, "log10_lr_worst", m->zebra.log10_lr_worst);
	char cat[2] = {m->zebra.category, 0};
	vpa_json_set_str(z, "category", cat);
	vpa_json_set(mj, "zebra", z);
	vpa_json_set_num(mj, "tied_fraction", m->tied_fraction);
	vpa_json_set(mj, "linkability_hist", vpa_json_num(m->linkability_hist)); /* NAN -> null */
	vpa_json_set(mj, "linkability_reliable", vpa_json_bool(m->linkability_reliable));
	vpa_json_set_num(mj, "eer_flipped", m->eer_flipped);
	vpa_json_set_num(mj, "cllr_min_flipped", m->cllr_min_flipped);
	vpa_json_set_num(mj, "min_dcf_flipped", m->min_dcf_flipped);
	vpa_json_set(rec, "metrics", mj);
	vpa_json_set(rec, "anti_correlated", vpa_json_bool(m->anti_correlated));
	struct vpa_json *ac = vpa_json_obj();
	int have_rev = r->rev_reps > 0;
	vpa_json_set(ac, "eer_sweep_ci", have_rev ? pair(m->eer_sweep_lo, m->eer_sweep_hi)
						  : vpa_json_null());
	vpa_json_set(ac, "level", vpa_json_num(m->eer_sweep_level)); /* NAN -> null */
	vpa_json_set(ac, "method", !have_rev ? vpa_json_null()
				   : vpa_json_str(r->rev_by_identity ? "bootstrap-identities"
								     : "bootstrap-trials"));
	vpa_json_set(ac, "reps", have_rev ? vpa_json_num((double)r->rev_reps) : vpa_json_null());
	vpa_json_set(rec, "anti_correlation", ac);
	struct vpa_json *un = vpa_json_obj();
	struct vpa_metrics mc = *m;
	vpa_metrics_reliability(&mc, &o->m, unrel_emit, un);
	vpa_json_set(rec, "unreliable", un);
	vpa_record_mark_undefined(rec);
	if (r->have_ci) {
		struct vpa_json *ci = vpa_json_obj();
		vpa_json_set_num(ci, "level", o->ci_level);
		vpa_json_set_str(ci, "method",
				 r->ci.by_identity ? "bootstrap-identities" : "bootstrap-trials");
		vpa_json_set_num(ci, "reps", (double)r->ci.reps);
		vpa_json_set_num(ci, "reps_used", (double)r->ci.reps_used);
		vpa_json_set_str(ci, "interval", "BCa");
		vpa_json_set(ci, "extended", vpa_ci_extended_json(&r->ci));
		vpa_json_set(ci, "eer", pair(r->ci.eer_lo, r->ci.eer_hi));
		vpa_json_set(ci, "cllr_min", pair(r->ci.cllr_min_lo, r->ci.cllr_min_hi));
		vpa_json_set(ci, "eer_sweep", pair(r->ci.eer_sweep_lo, r->ci.eer_sweep_hi));
		vpa_json_set(ci, "linkability", m->linkability_defined
							? pair(r->ci.link_lo, r->ci.link_hi)
							: vpa_json_null());
		vpa_json_set(rec, "ci", ci);
	}
	vpa_json_push(out->records, rec);

	if (det_series) {
		struct vpa_json *sr = vpa_json_obj();
		vpa_json_set_str(sr, "name", sub ? sub : attack);
		vpa_json_set(sr, "p_miss", num_array(r->pm, r->n_det));
		vpa_json_set(sr, "p_fa", num_array(r->pf, r->n_det));
		vpa_json_set_num(sr, "eer", m->eer);
		vpa_json_push(det_series, sr);
	}
	if (r->have_l && out->figures) {
		char lays[32];
		snprintf(lays, sizeof(lays), "layer%ld", layer);
		char *id = slug(attack, sub, layer >= 0 ? lays : NULL);
		struct vpa_buf b;
		vpa_buf_init(&b);
		vpa_buf_printf(&b, "%s-link", id);
		struct vpa_json *f = vpa_json_obj();
		vpa_json_set_str(f, "type", "linkability");
		vpa_json_set_str(f, "id", vpa_buf_str(&b));
		vpa_buf_release(&b);
		vpa_buf_init(&b);
		vpa_buf_printf(&b, "Linkability: %s", label);
		vpa_json_set_str(f, "title", vpa_buf_str(&b));
		vpa_buf_release(&b);
		vpa_json_set(f, "centers", num_array(r->l.centers, r->l.n_bins));
		vpa_json_set(f, "p_mated", num_array(r->l.p_mated, r->l.n_bins));
		vpa_json_set(f, "p_non", num_array(r->l.p_non, r->l.n_bins));
		vpa_json_set(f, "d_local", num_array(r->l.d_local, r->l.n_bins));
		vpa_json_set_num(f, "dsys", r->l.dsys);
		vpa_json_set_num(f, "omega", o->m.omega);
		vpa_json_push(out->figures, f);
		free(id);
	}

	if (ctx->warn_groups) {
		struct group_ctx gc = {ctx->warn_groups, attack, label};
		conditions(m, o->chance_expected, emit_group, &gc);
	} else {
		vpa_sanity_warnings(label, m, o->chance_expected, ctx_emit, ctx);
	}
}

int vpa_record_from_scores(struct vpa_run_ctx *ctx, const char *attack, const char *sub,
			   long layer, const struct vpa_trials *t,
			   const struct vpa_eval_opts *o, struct vpa_attack_out *out,
			   struct vpa_json *det_series, struct vpa_err *err)
{
	struct eval_res r;
	eval_compute(t, o, ci_seed(o->seed, attack, sub, layer), &r);
	int rc = r.rc;
	if (rc)
		vpa_fail(err, rc, NULL, "%s", r.err.msg);
	else
		eval_emit(ctx, attack, sub, layer, &r, o, out, det_series);
	res_release(&r);
	return rc;
}

struct vpa_json *vpa_det_figure(const char *id, const char *title, struct vpa_json *series)
{
	struct vpa_json *f = vpa_json_obj();
	vpa_json_set_str(f, "type", "det");
	char *sid = slug(id, NULL, NULL);
	vpa_json_set_str(f, "id", sid);
	free(sid);
	vpa_json_set_str(f, "title", title);
	vpa_json_set(f, "series", series);
	return f;
}

/* ---- the attack kind `evaluate` ---------------------------------------------- */

/* typed options (config/schema.h), filled by validation */
struct evaluate_opts {
	double omega;
	long long bins;
	double p_target;
	double c_miss;
	double c_fa;
	double ci;
	long long reps;
	struct vpa_mark omega_at, bins_at, p_target_at, c_miss_at, c_fa_at, ci_at, reps_at;
};

static const struct vpa_key keys[] = {
	{"omega", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "linkability prior ratio of mated to non-mated pairs",
	 VPA_AT(struct evaluate_opts, omega), VPA_MARK(struct evaluate_opts, omega_at)},
	{"bins", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "50",
	 "linkability histogram bins; 0 = min(floor(n_target/10), 100)",
	 VPA_AT(struct evaluate_opts, bins), VPA_MARK(struct evaluate_opts, bins_at)},
	{"p_target", VPA_K_NUM, 0, "0.01", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "0.05",
	 "target prior of the minimum detection cost",
	 VPA_AT(struct evaluate_opts, p_target), VPA_MARK(struct evaluate_opts, p_target_at)},
	{"c_miss", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "cost of a miss in the minimum detection cost",
	 VPA_AT(struct evaluate_opts, c_miss), VPA_MARK(struct evaluate_opts, c_miss_at)},
	{"c_fa", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "cost of a false alarm in the minimum detection cost",
	 VPA_AT(struct evaluate_opts, c_fa), VPA_MARK(struct evaluate_opts, c_fa_at)},
	{"ci", VPA_K_NUM, 0, "0", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.95",
	 "bootstrap confidence level for EER, Cllr_min and linkability (0 = no interval); "
	 "identities are resampled when the score files carry ids, else trials",
	 VPA_AT(struct evaluate_opts, ci), VPA_MARK(struct evaluate_opts, ci_at)},
	{"reps", VPA_K_INT, 0, "1000", 10, 1000000, 0, NULL, NULL, "2000",
	 "bootstrap replicates (seeded from the scenario seed)",
	 VPA_AT(struct evaluate_opts, reps), VPA_MARK(struct evaluate_opts, reps_at)},
	{NULL},
};
static const struct vpa_schema schema = {"attack evaluate", keys, sizeof(struct evaluate_opts)};

static const char *const target_kinds[] = {"scores", NULL};
static const char *const metrics[] = {
	"eer", "eer_sweep", "cllr", "cllr_min", "linkability", "min_dcf", "zebra.dece",
	"zebra.log10_lr_worst", "n_target", "n_nontarget", "eer_threshold", "tied_fraction",
	"linkability_hist", "eer_flipped", "cllr_min_flipped", "min_dcf_flipped", NULL,
};

/* Subs = the target's set names, in its order (target_opts: struct vpa_scores_opts). */
static size_t subs(const void *opts, const void *target_opts, const char ***names)
{
	(void)opts;
	const struct vpa_optlist *sets = &((const struct vpa_scores_opts *)target_opts)->sets;
	size_t n = sets->n;
	*names = xcalloc(n ? n : 1, sizeof(**names));
	for (size_t i = 0; i < n; i++)
		(*names)[i] = VPA_OPTLIST_AT(struct vpa_scores_set_opts, *sets, i)->name;
	return n;
}

struct job {
	const struct vpa_scores_target *st;
	const struct vpa_eval_opts *o;
	const char *attack;
	struct eval_res *res;
};

static int eval_job(void *arg, size_t i, struct vpa_err *e)
{
	struct job *j = arg;
	const struct vpa_score_set *set = &j->st->sets[i];
	struct eval_res *r = &j->res[i];
	eval_compute(&set->trials, j->o, ci_seed(j->o->seed, j->attack, set->name, -1), r);
	if (r->rc)
		return vpa_fail(e, r->rc, NULL, "score set '%s': %s", set->name, r->err.msg);
	return 0;
}

/* A set's result travels as the flat struct, then its arrays (base/dist.c). */
static void eval_pack(void *arg, size_t i, struct vpa_buf *b)
{
	const struct eval_res *r = &((struct job *)arg)->res[i];
	vpa_buf_add(b, r, sizeof(*r));
	if (r->have_l) {
		vpa_pack_f64s(b, r->l.centers, r->l.n_bins);
		vpa_pack_f64s(b, r->l.p_mated, r->l.n_bins);
		vpa_pack_f64s(b, r->l.p_non, r->l.n_bins);
		vpa_pack_f64s(b, r->l.d_local, r->l.n_bins);
	}
	vpa_pack_f64s(b, r->pm, r->pm ? r->n_det : 0);
	vpa_pack_f64s(b, r->pf, r->pf ? r->n_det : 0);
}

static double *unpack_arr(const unsigned char **q, const unsigned char *end, const void *had,
			  size_t n, int *bad)
{
	if (!had)
		return NULL;
	double *x = xmalloc(xmul(n ? n : 1, sizeof(double)));
	*bad |= vpa_unpack_f64s(q, end, x, n);
	return x;
}

static int eval_unpack(void *arg, size_t i, const unsigned char *q, size_t len)
{
	struct eval_res *r = &((struct job *)arg)->res[i];
	const unsigned char *end = q + len;
	int bad = 0;
	if (len < sizeof(*r))
		return -1;
	memcpy(r, q, sizeof(*r)); /* the pointers in it are the sender's: replaced below */
	q += sizeof(*r);
	if (r->have_l) {
		size_t n = r->l.n_bins;
		r->l.centers = unpack_arr(&q, end, r->l.centers, n, &bad);
		r->l.p_mated = unpack_arr(&q, end, r->l.p_mated, n, &bad);
		r->l.p_non = unpack_arr(&q, end, r->l.p_non, n, &bad);
		r->l.d_local = unpack_arr(&q, end, r->l.d_local, n, &bad);
	}
	r->pm = unpack_arr(&q, end, r->pm, r->n_det, &bad);
	r->pf = unpack_arr(&q, end, r->pf, r->n_det, &bad);
	return bad || q != end;
}

static int run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
	       const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct evaluate_opts *eo = opts;
	const struct vpa_scores_target *st = t->data;
	struct vpa_eval_opts o;
	int rc = 0;
	vpa_eval_opts_init(&o);
	o.m.omega = eo->omega;
	o.m.bins = (size_t)eo->bins;
	o.m.p_target = eo->p_target;
	o.m.c_miss = eo->c_miss;
	o.m.c_fa = eo->c_fa;
	o.ci_level = eo->ci;
	o.ci_reps = (size_t)eo->reps;
	o.seed = ctx->seed;

	for (size_t i = 0; i < st->n_sets; i++) {
		const struct vpa_trials *tr = &st->sets[i].trials;
		if (tr->n_tar == 0 || tr->n_non == 0)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"target '%s': score set '%s' has no %s trials", t->id,
					st->sets[i].name, tr->n_tar ? "non-target" : "target");
	}
	struct eval_res *res = xcalloc(st->n_sets, sizeof(*res));
	struct job j = {st, &o, id, res};
	rc = vpa_dist_jobs(st->n_sets, ctx->threads, eval_job, eval_pack, eval_unpack, &j,
			   NULL, NULL, err);
	struct vpa_json *series = vpa_json_arr();
	/* DET first, then one linkability figure per set, in set order */
	struct vpa_json *det = NULL;
	if (!rc) {
		char title[512], fid[256];
		snprintf(title, sizeof(title), "DET: %s on %s", id, t->id);
		snprintf(fid, sizeof(fid), "%s-det", id);
		det = vpa_det_figure(fid, title, series);
		series = NULL;
		vpa_json_push(out->figures, det);
		for (size_t i = 0; i < st->n_sets; i++)
			eval_emit(ctx, id, st->sets[i].name, -1, &res[i], &o, out,
				  vpa_json_get(det, "series"));
	}
	for (size_t i = 0; i < st->n_sets; i++)
		res_release(&res[i]);
	free(res);
	vpa_json_free(series);
	return rc;
}

static char *title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: metrics of the score sets of '%s'", id, target_id);
	return b.data;
}

const struct vpa_attack_kind vpa_attack_evaluate = {
	.name = "evaluate",
	.schema = &schema,
	.target_kinds = target_kinds,
	.metrics = metrics,
	.has_layers = 0,
	.doc = "Runs every metric (EER, Cllr, Cllr_min, linkability, minDCF, ZEBRA) on each "
	       "score set of a `scores` target: one record per set (sub = the set's name), one "
	       "DET figure with all sets, one linkability figure per set.",
	.subs = subs,
	.run = run,
	.title = title,
};
