/*
 * attacks/evaluate.c - the shared "score set -> record + figures" step
 * (vpa_record_from_scores, called by every attack that ends in scores) and
 * the attack kind `evaluate`, which runs it on each set of a `scores` target.
 */
#include "attacks/attacks.h"

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
}

void vpa_sanity_warnings(const char *label, const struct vpa_metrics *m,
			 void (*emit)(void *ctx, const char *msg), void *ctx)
{
	char msg[1024];
	/* The ROCCH-EER never exceeds 50% (the hull includes the chance line), so
	 * reversed scores show in the sweep EER. */
	if (m->eer_sweep > 0.5) {
		snprintf(msg, sizeof(msg), "%s: EER %.1f%% (threshold sweep) is above 50%%: scores may "
			 "be reversed (higher must mean same source)", label, 100 * m->eer_sweep);
		emit(ctx, msg);
	}
	if (m->n_tar < 100) {
		snprintf(msg, sizeof(msg), "%s: only %zu target trials (fewer than 100): the metrics "
			 "are unreliable", label, m->n_tar);
		emit(ctx, msg);
	}
	if (m->n_non < 100) {
		snprintf(msg, sizeof(msg), "%s: only %zu non-target trials (fewer than 100): the "
			 "metrics are unreliable", label, m->n_non);
		emit(ctx, msg);
	}
	if (m->frac_tied > 0.1) {
		snprintf(msg, sizeof(msg), "%s: %.0f%% of the trials share their score with another "
			 "trial: a threshold cannot split them", label, 100 * m->frac_tied);
		emit(ctx, msg);
	}
	if (!m->linkability_defined) {
		snprintf(msg, sizeof(msg), "%s: fewer than 10 target (mated) trials: linkability is "
			 "undefined", label);
		emit(ctx, msg);
	}
}

static void ctx_emit(void *ctx, const char *msg)
{
	vpa_ctx_warn(ctx, "%s", msg);
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
	if (o->ci_level > 0) {
		struct vpa_ci_opts co = {
			.level = o->ci_level, .reps = o->ci_reps, .seed = seed,
			.tar_e = te, .tar_t = tt, .non_e = ne, .non_t = nt,
			.n_e = ids ? t->n_ids_e : 0, .n_t = ids ? t->n_ids_t : 0,
			.omega = o->m.omega, .bins = o->m.bins,
		};
		if ((r->rc = vpa_bootstrap_ci(&s, &co, &r->ci, &r->err)))
			goto out;
		r->have_ci = 1;
	}
out:
	free(tar);
	free(non);
	free(te);
	free(tt);
	free(ne);
	free(nt);
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
	vpa_json_set_num(mj, "frac_tied", m->frac_tied);
	vpa_json_set(rec, "metrics", mj);
	if (r->have_ci) {
		struct vpa_json *ci = vpa_json_obj();
		vpa_json_set_num(ci, "level", o->ci_level);
		vpa_json_set_str(ci, "method",
				 r->ci.by_identity ? "bootstrap-identities" : "bootstrap-trials");
		vpa_json_set_num(ci, "reps", (double)r->ci.reps);
		vpa_json_set_num(ci, "reps_used", (double)r->ci.reps_used);
		vpa_json_set(ci, "eer", pair(r->ci.eer_lo, r->ci.eer_hi));
		vpa_json_set(ci, "cllr_min", pair(r->ci.cllr_min_lo, r->ci.cllr_min_hi));
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

	vpa_sanity_warnings(label, m, ctx_emit, ctx);
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

static const struct vpa_key keys[] = {
	{"omega", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "linkability prior ratio of mated to non-mated pairs"},
	{"bins", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "50",
	 "linkability histogram bins; 0 = min(floor(n_target/10), 100)"},
	{"p_target", VPA_K_NUM, 0, "0.01", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "0.05",
	 "target prior of the minimum detection cost"},
	{"c_miss", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "cost of a miss in the minimum detection cost"},
	{"c_fa", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "cost of a false alarm in the minimum detection cost"},
	{"ci", VPA_K_NUM, 0, "0", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.95",
	 "bootstrap confidence level for EER, Cllr_min and linkability (0 = no interval); "
	 "identities are resampled when the score files carry ids, else trials"},
	{"reps", VPA_K_INT, 0, "1000", 10, 1000000, 0, NULL, NULL, "2000",
	 "bootstrap replicates (seeded from the scenario seed)"},
	{NULL},
};
static const struct vpa_schema schema = {"attack evaluate", keys};

static const char *const target_kinds[] = {"scores", NULL};
static const char *const metrics[] = {
	"eer", "eer_sweep", "cllr", "cllr_min", "linkability", "min_dcf", "zebra.dece",
	"zebra.log10_lr_worst", "n_target", "n_nontarget", "eer_threshold", "frac_tied", NULL,
};

static size_t subs(const struct vpa_ynode *cfg, const struct vpa_ynode *target_cfg,
		   const char ***names)
{
	(void)cfg;
	const struct vpa_ynode *sets = vpa_ymap_get(target_cfg, "sets");
	size_t n = sets ? sets->n : 0;
	*names = xcalloc(n ? n : 1, sizeof(**names));
	for (size_t i = 0; i < n; i++)
		(*names)[i] = vpa_ymap_get(sets->items[i], "name")->str;
	return n;
}

struct job {
	const struct vpa_scores_target *st;
	const struct vpa_eval_opts *o;
	const char *attack;
	struct eval_res *res;
};

static int eval_job(void *arg, size_t i)
{
	struct job *j = arg;
	const struct vpa_score_set *set = &j->st->sets[i];
	eval_compute(&set->trials, j->o, ci_seed(j->o->seed, j->attack, set->name, -1), &j->res[i]);
	return 0; /* a set's error stays in its slot; the others still run */
}

static int run(struct vpa_run_ctx *ctx, const char *id, const struct vpa_ynode *cfg,
	       const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct vpa_scores_target *st = t->data;
	struct vpa_eval_opts o;
	int rc = 0;
	vpa_eval_opts_init(&o);
	o.m.omega = vpa_cfg_num(cfg, &schema, "omega");
	o.m.bins = (size_t)vpa_cfg_int(cfg, &schema, "bins");
	o.m.p_target = vpa_cfg_num(cfg, &schema, "p_target");
	o.m.c_miss = vpa_cfg_num(cfg, &schema, "c_miss");
	o.m.c_fa = vpa_cfg_num(cfg, &schema, "c_fa");
	o.ci_level = vpa_cfg_num(cfg, &schema, "ci");
	o.ci_reps = (size_t)vpa_cfg_int(cfg, &schema, "reps");
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
	vpa_par_jobs(st->n_sets, ctx->threads, eval_job, &j, NULL, NULL);
	struct vpa_json *series = vpa_json_arr();
	for (size_t i = 0; i < st->n_sets && !rc; i++)
		if (res[i].rc)
			rc = vpa_fail(err, res[i].rc, NULL, "score set '%s': %s", st->sets[i].name,
				      res[i].err.msg);
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

static char *title(const char *id, const struct vpa_ynode *cfg, const char *target_id)
{
	(void)cfg;
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
	.validate = NULL,
	.subs = subs,
	.run = run,
	.title = title,
};
