/*
 * scenarios/run.c - the run pipeline: targets -> attacks -> records, once
 * or once per sweep value, into the results DOM of reports/README.md.
 *
 * Sweeps rebuild only what the swept key touches: with `targets.X.key` the
 * target X is rebuilt per value and the attacks on X rerun; with
 * `attacks.A.key` only A reruns.  Everything else is built and run once and
 * its records carry "sweep": null.
 */
#include "scenarios/scenario.h"
#include "targets/targets.h"
#include "attacks/attacks.h"
#include "base/cpu.h"
#include "base/dist.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/inputs.h"


/* When a kind's error has no location, blame the YAML item it came from. */
static int blame(struct vpa_err *err, int rc, const char *file, const struct vpa_ynode *n,
		 const char *what, const char *id)
{
	const char *m = err->msg;
	const char *sp = strchr(m, ' ');
	size_t lim = sp ? (size_t)(sp - m) : strlen(m);
	for (size_t i = 0; i + 1 < lim; i++)
		if (m[i] == ':' && isdigit((unsigned char)m[i + 1]))
			return rc; /* already located */
	char old[sizeof(err->msg)];
	memcpy(old, err->msg, sizeof(old));
	int st = err->status;
	vpa_err_init(err);
	struct vpa_loc loc = vpa_node_loc(file, n);
	vpa_fail(err, st, &loc, "%s '%s': %s", what, id, old);
	return rc;
}

static void iso_now(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int build_target(struct vpa_run_ctx *ctx, const struct vpa_scenario *s, size_t i,
			const struct vpa_ynode *cfg, struct vpa_target *t, struct vpa_err *err)
{
	memset(t, 0, sizeof(*t));
	t->kind = s->targets[i].kind;
	t->id = s->targets[i].id;
	t->opts = vpa_opts_new(t->kind->schema, cfg);
	int rc = t->kind->build(ctx, t->opts, t, err);
	if (rc)
		blame(err, rc, s->file, cfg, "target", t->id);
	if (!t->info)
		t->info = vpa_json_obj();
	return rc;
}

static struct vpa_json *target_entry(const struct vpa_scenario *s, size_t i,
				     const struct vpa_target *t)
{
	const struct vpa_scn_target *st = &s->targets[i];
	struct vpa_json *o = vpa_json_obj();
	vpa_json_set_str(o, "id", st->id);
	vpa_json_set_str(o, "kind", st->kind->name);
	const char *const *src = vpa_opts_field(st->kind->schema, st->opts, "source");
	const char *source = src ? *src : NULL;
	vpa_json_set_str(o, "source", source ? source : (t->simulated ? "simulate" : "import"));
	vpa_json_set(o, "simulated", vpa_json_bool(t->simulated));
	vpa_json_set(o, "info", vpa_json_clone(t->info));
	return o;
}

/* A sweep value as results carry it: a number, or the name of a choice. */
static struct vpa_json *sweep_json(const struct vpa_scenario *s, const struct vpa_ynode *v)
{
	return s->sweep_numeric ? vpa_json_num(strtod(v->str, NULL)) : vpa_json_str(v->str);
}

/* x position of a record's sweep value: the number, or the value's index. */
static double sweep_x(const struct vpa_scenario *s, const struct vpa_json *sw)
{
	if (sw->type == VPA_JSON_NUM)
		return sw->num;
	for (size_t i = 0; sw->type == VPA_JSON_STR && i < s->sweep_values->n; i++)
		if (!strcmp(s->sweep_values->items[i]->str, sw->str))
			return (double)i;
	return NAN;
}

/* Suffix figure ids and titles with the sweep value. */
static void tag_figures(struct vpa_json *figs, size_t from, const char *param, const char *value,
			size_t k)
{
	for (size_t i = from; i < figs->n; i++) {
		struct vpa_json *f = figs->items[i];
		struct vpa_buf b;
		const char *id = vpa_json_get_str(f, "id");
		if (id) {
			vpa_buf_init(&b);
			vpa_buf_printf(&b, "%s-s%zu", id, k + 1);
			vpa_json_set_str(f, "id", vpa_buf_str(&b));
			vpa_buf_release(&b);
		}
		const char *title = vpa_json_get_str(f, "title");
		vpa_buf_init(&b);
		vpa_buf_printf(&b, "%s (%s = %s)", title ? title : "", param, value);
		vpa_json_set_str(f, "title", vpa_buf_str(&b));
		vpa_buf_release(&b);
	}
}

static int run_attack(struct vpa_run_ctx *ctx, const struct vpa_scenario *s, size_t ai,
		      const struct vpa_ynode *cfg, const struct vpa_target *t,
		      struct vpa_json *records, struct vpa_json *figures,
		      const struct vpa_ynode *sweep_value, size_t k, struct vpa_err *err)
{
	const struct vpa_scn_attack *a = &s->attacks[ai];
	struct vpa_attack_out out = {vpa_json_arr(), vpa_json_arr()};
	void *o = vpa_opts_new(a->kind->schema, cfg);
	int rc = a->kind->run(ctx, a->id, o, t, &out, err);
	vpa_opts_free(a->kind->schema, o);
	if (rc) {
		blame(err, rc, s->file, cfg, "attack", a->id);
		goto out;
	}
	for (size_t i = 0; i < out.records->n; i++) {
		struct vpa_json *r = out.records->items[i];
		vpa_json_set(r, "sweep", sweep_value ? sweep_json(s, sweep_value) : vpa_json_null());
	}
	if (sweep_value)
		tag_figures(out.figures, 0, s->sweep_param, sweep_value->str, k);
	for (size_t i = 0; i < out.records->n; i++)
		vpa_json_push(records, vpa_json_clone(out.records->items[i]));
	for (size_t i = 0; i < out.figures->n; i++)
		vpa_json_push(figures, vpa_json_clone(out.figures->items[i]));
out:
	vpa_json_free(out.records);
	vpa_json_free(out.figures);
	return rc;
}

/* ---- the points of a sweep shared out over MPI ranks ---------------------
 * With at least as many sweep values as ranks (base/dist.c), point v is a
 * job: its rank builds the swept target, runs the dependent attacks with a
 * muted context of its own (warnings recorded, not printed) and keeps their
 * records, figures, warnings and grouped warnings in slot v; those travel as
 * JSON text and packed groups; then, in the order of the values, every rank
 * appends them where the one-process loop would have (the warnings printed
 * and recorded by vpa_ctx_warn as they would have been). */
struct sw_slot {
	struct vpa_json **recs, **figs; /* (n_attacks) arrays */
	struct vpa_json *tjs;           /* value 0 of a swept target: the targets list */
	struct vpa_json *warns;
	struct vpa_warn_groups *wg;
	double tt, ta;                  /* seconds building, attacking */
};

struct sw {
	struct vpa_run_ctx *ctx;
	const struct vpa_scenario *s;
	struct vpa_target *built;
	struct sw_slot *slot;
};

static void slot_init(struct sw_slot *sl, size_t na)
{
	memset(sl, 0, sizeof(*sl));
	sl->recs = xcalloc(na ? na : 1, sizeof(*sl->recs));
	sl->figs = xcalloc(na ? na : 1, sizeof(*sl->figs));
	for (size_t a = 0; a < na; a++) {
		sl->recs[a] = vpa_json_arr();
		sl->figs[a] = vpa_json_arr();
	}
	sl->warns = vpa_json_arr();
	sl->wg = vpa_warn_groups_new();
}

static void slot_release(struct sw_slot *sl, size_t na)
{
	for (size_t a = 0; sl->recs && a < na; a++) {
		vpa_json_free(sl->recs[a]);
		vpa_json_free(sl->figs[a]);
	}
	free(sl->recs);
	free(sl->figs);
	vpa_json_free(sl->tjs);
	vpa_json_free(sl->warns);
	vpa_warn_groups_free(sl->wg);
	memset(sl, 0, sizeof(*sl));
}

static int sweep_job(void *arg, size_t v, struct vpa_err *e)
{
	struct sw *w = arg;
	const struct vpa_scenario *s = w->s;
	struct sw_slot *sl = &w->slot[v];
	struct vpa_run_ctx c = *w->ctx;
	c.warnings = sl->warns;
	c.warn_groups = sl->wg;
	vpa_ctx_warn_mute(1);
	const struct vpa_ynode *val = s->sweep_values->items[v];
	int sw_t = !s->sweep_is_attack, rc = 0, have = 0;
	size_t ti = s->sweep_index;
	struct vpa_target local;
	double t0 = vpa_now();
	if (sw_t) {
		struct vpa_ynode *cfg = vpa_scenario_swept_cfg(s, s->targets[ti].cfg, val);
		rc = build_target(&c, s, ti, cfg, &local, e);
		have = 1; /* released on failure too: a kind may fail half-built */
		vpa_ynode_free(cfg);
	}
	sl->tt = vpa_now() - t0;
	t0 = vpa_now();
	for (size_t a = 0; a < s->n_attacks && !rc; a++) {
		int dep = (sw_t && s->attacks[a].target == ti) || (!sw_t && a == ti);
		if (!dep)
			continue;
		struct vpa_ynode *cfg = !sw_t ? vpa_scenario_swept_cfg(s, s->attacks[a].cfg, val) : NULL;
		size_t at = s->attacks[a].target;
		rc = run_attack(&c, s, a, cfg ? cfg : s->attacks[a].cfg,
				sw_t && at == ti ? &local : &w->built[at], sl->recs[a], sl->figs[a], val,
				v, e);
		vpa_ynode_free(cfg);
	}
	sl->ta = vpa_now() - t0;
	if (!rc && sw_t && v == 0) {
		sl->tjs = vpa_json_arr();
		for (size_t i = 0; i < s->n_targets; i++)
			vpa_json_push(sl->tjs, target_entry(s, i, i == ti ? &local : &w->built[i]));
	}
	if (have)
		vpa_target_release(&local);
	vpa_ctx_warn_mute(0);
	return rc;
}

static void pack_json(struct vpa_buf *b, const struct vpa_json *j)
{
	struct vpa_buf t;
	vpa_buf_init(&t);
	if (j)
		vpa_json_write(&t, j, 0);
	vpa_pack_u64(b, t.len);
	if (t.len)
		vpa_buf_add(b, t.data, t.len);
	vpa_buf_release(&t);
}

static int unpack_json(const unsigned char **p, const unsigned char *end, struct vpa_json **j)
{
	uint64_t l;
	struct vpa_err e;
	vpa_err_init(&e);
	*j = NULL;
	if (vpa_unpack_u64(p, end, &l) || (uint64_t)(end - *p) < l)
		return -1;
	if (l && !(*j = vpa_json_parse("sweep point", (const char *)*p, (size_t)l, &e)))
		return -1;
	*p += l;
	return 0;
}

static void sweep_pack(void *arg, size_t v, struct vpa_buf *b)
{
	struct sw *w = arg;
	struct sw_slot *sl = &w->slot[v];
	for (size_t a = 0; a < w->s->n_attacks; a++) {
		pack_json(b, sl->recs[a]);
		pack_json(b, sl->figs[a]);
	}
	pack_json(b, sl->tjs);
	pack_json(b, sl->warns);
	vpa_warn_groups_pack(sl->wg, b);
	double t[2] = {sl->tt, sl->ta};
	vpa_pack_f64s(b, t, 2);
}

static int sweep_unpack(void *arg, size_t v, const unsigned char *q, size_t len)
{
	struct sw *w = arg;
	struct sw_slot *sl = &w->slot[v];
	const unsigned char *end = q + len;
	for (size_t a = 0; a < w->s->n_attacks; a++) {
		vpa_json_free(sl->recs[a]);
		vpa_json_free(sl->figs[a]);
		sl->recs[a] = sl->figs[a] = NULL;
		if (unpack_json(&q, end, &sl->recs[a]) || unpack_json(&q, end, &sl->figs[a]) ||
		    !sl->recs[a] || !sl->figs[a])
			return -1;
	}
	vpa_json_free(sl->warns);
	sl->warns = NULL;
	double t[2];
	if (unpack_json(&q, end, &sl->tjs) || unpack_json(&q, end, &sl->warns) || !sl->warns ||
	    vpa_warn_groups_unpack(sl->wg, &q, end) || vpa_unpack_f64s(&q, end, t, 2) || q != end)
		return -1;
	sl->tt = t[0];
	sl->ta = t[1];
	return 0;
}

/* The sweep as jobs; then every point's outputs appended in value order. */
static int sweep_shared(struct vpa_run_ctx *ctx, const struct vpa_scenario *s,
			struct vpa_target *built, struct vpa_json **arecs, struct vpa_json **afigs,
			struct vpa_json *tjs, double *t_targets, double *t_attacks,
			struct vpa_err *err)
{
	size_t nv = s->sweep_values->n, na = s->n_attacks;
	struct sw_slot *slot = xcalloc(nv, sizeof(*slot));
	for (size_t v = 0; v < nv; v++)
		slot_init(&slot[v], na);
	struct sw w = {ctx, s, built, slot};
	int rc = vpa_dist_jobs(nv, 1, sweep_job, sweep_pack, sweep_unpack, &w, "sweep", NULL, err);
	for (size_t v = 0; v < nv && !rc; v++) {
		struct sw_slot *sl = &slot[v];
		for (size_t i = 0; i < sl->warns->n; i++)
			vpa_ctx_warn(ctx, "%s", sl->warns->items[i]->str);
		vpa_warn_groups_append(ctx->warn_groups, sl->wg);
		for (size_t a = 0; a < na; a++) {
			for (size_t i = 0; i < sl->recs[a]->n; i++)
				vpa_json_push(arecs[a], vpa_json_clone(sl->recs[a]->items[i]));
			for (size_t i = 0; i < sl->figs[a]->n; i++)
				vpa_json_push(afigs[a], vpa_json_clone(sl->figs[a]->items[i]));
		}
		for (size_t i = 0; v == 0 && sl->tjs && i < sl->tjs->n; i++)
			vpa_json_push(tjs, vpa_json_clone(sl->tjs->items[i]));
		*t_targets += sl->tt;
		*t_attacks += sl->ta;
	}
	for (size_t v = 0; v < nv; v++)
		slot_release(&slot[v], na);
	free(slot);
	return rc;
}

/* Flatten the numeric metrics of a record: "eer", "zebra.dece", ... */
static void metric_names(const struct vpa_json *m, const char *prefix, char ***names, size_t *n)
{
	for (size_t i = 0; m && m->type == VPA_JSON_OBJ && i < m->n; i++) {
		char name[256];
		snprintf(name, sizeof(name), "%s%s", prefix, m->keys[i]);
		if (m->items[i]->type == VPA_JSON_OBJ) {
			char p2[260];
			snprintf(p2, sizeof(p2), "%s.", name);
			metric_names(m->items[i], p2, names, n);
			continue;
		}
		if (m->items[i]->type != VPA_JSON_NUM && m->items[i]->type != VPA_JSON_NULL)
			continue;
		/* counts and thresholds are not privacy-utility curves */
		if (strstr(name, "threshold") || !strncmp(name, "n_", 2) || !strcmp(name, "tied_fraction"))
			continue;
		int dup = 0;
		for (size_t j = 0; j < *n; j++)
			dup |= !strcmp((*names)[j], name);
		if (dup)
			continue;
		*names = xrealloc(*names, (*n + 1) * sizeof(**names));
		(*names)[(*n)++] = xstrdup(name);
	}
}

static const struct vpa_json *metric_at(const struct vpa_json *m, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	const struct vpa_json *cur = m;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save))
		cur = vpa_json_get(cur, tok);
	return cur;
}

static int same_json(const struct vpa_json *a, const struct vpa_json *b)
{
	if (!a || !b)
		return a == b;
	if (a->type != b->type)
		return 0;
	if (a->type == VPA_JSON_NUM)
		return a->num == b->num;
	if (a->type == VPA_JSON_STR)
		return !strcmp(a->str, b->str);
	return a->type == VPA_JSON_NULL;
}

/* One "lines" figure per swept attack and metric: x = value, one series per sub/layer. */
static void sweep_figures(const struct vpa_scenario *s, const struct vpa_json *records,
			  struct vpa_json *figures)
{
	const struct vpa_ynode *vals = s->sweep_values;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; s->sweep_numeric && i < vals->n; i++) {
		double x = strtod(vals->items[i]->str, NULL);
		lo = fmin(lo, x);
		hi = fmax(hi, x);
	}
	int logx = s->sweep_numeric && lo > 0 && hi / lo >= 100;
	for (size_t ai = 0; ai < s->n_attacks; ai++) {
		const char *aid = s->attacks[ai].id;
		char **names = NULL;
		size_t nn = 0;
		for (size_t r = 0; r < records->n; r++) {
			const struct vpa_json *rec = records->items[r];
			const struct vpa_json *sw = vpa_json_get(rec, "sweep");
			if (strcmp(vpa_json_get_str(rec, "attack"), aid) || !sw ||
			    sw->type == VPA_JSON_NULL)
				continue;
			metric_names(vpa_json_get(rec, "metrics"), "", &names, &nn);
		}
		for (size_t mi = 0; mi < nn; mi++) {
			struct vpa_json *series = vpa_json_arr();
			/* group records by (sub, layer) in first-seen order */
			for (size_t r = 0; r < records->n; r++) {
				const struct vpa_json *rec = records->items[r];
				const struct vpa_json *sw = vpa_json_get(rec, "sweep");
				if (strcmp(vpa_json_get_str(rec, "attack"), aid) || !sw ||
				    sw->type == VPA_JSON_NULL)
					continue;
				const struct vpa_json *sub = vpa_json_get(rec, "sub");
				const struct vpa_json *lay = vpa_json_get(rec, "layer");
				int seen = 0;
				for (size_t q = 0; q < r && !seen; q++) {
					const struct vpa_json *o = records->items[q];
					const struct vpa_json *osw = vpa_json_get(o, "sweep");
					seen = !strcmp(vpa_json_get_str(o, "attack"), aid) && osw &&
					       osw->type != VPA_JSON_NULL &&
					       same_json(vpa_json_get(o, "sub"), sub) &&
					       same_json(vpa_json_get(o, "layer"), lay);
				}
				if (seen)
					continue;
				struct vpa_json *xs = vpa_json_arr(), *ys = vpa_json_arr();
				for (size_t q = r; q < records->n; q++) {
					const struct vpa_json *o = records->items[q];
					const struct vpa_json *osw = vpa_json_get(o, "sweep");
					if (strcmp(vpa_json_get_str(o, "attack"), aid) || !osw ||
					    osw->type == VPA_JSON_NULL ||
					    !same_json(vpa_json_get(o, "sub"), sub) ||
					    !same_json(vpa_json_get(o, "layer"), lay))
						continue;
					const struct vpa_json *y =
						metric_at(vpa_json_get(o, "metrics"), names[mi]);
					if (!y || y->type != VPA_JSON_NUM)
						continue; /* undefined: no point */
					vpa_json_push(xs, vpa_json_num(sweep_x(s, osw)));
					vpa_json_push(ys, vpa_json_num(y->num));
				}
				struct vpa_buf nb;
				vpa_buf_init(&nb);
				if (sub && sub->type == VPA_JSON_STR)
					vpa_buf_puts(&nb, sub->str);
				else
					vpa_buf_puts(&nb, aid);
				if (lay && lay->type == VPA_JSON_NUM)
					vpa_buf_printf(&nb, " layer %g", lay->num);
				struct vpa_json *se = vpa_json_obj();
				vpa_json_set_str(se, "name", vpa_buf_str(&nb));
				vpa_json_set(se, "x", xs);
				vpa_json_set(se, "y", ys);
				vpa_json_push(series, se);
				vpa_buf_release(&nb);
			}
			/* a metric the value does not move (e.g. EER against omega): no figure */
			int moves = 0;
			for (size_t q = 0; q < series->n && !moves; q++) {
				const struct vpa_json *ys = vpa_json_get(series->items[q], "y");
				for (size_t z = 1; z < ys->n && !moves; z++)
					moves = ys->items[z]->num != ys->items[0]->num;
			}
			if (!moves) {
				vpa_json_free(series);
				continue;
			}
			struct vpa_buf id, title;
			vpa_buf_init(&id);
			vpa_buf_init(&title);
			vpa_buf_printf(&id, "sweep-%s-%s", aid, names[mi]);
			for (char *p = id.data; *p; p++)
				if (*p == '.')
					*p = '-';
			vpa_buf_printf(&title, "%s: %s against %s", aid, names[mi], s->sweep_param);
			struct vpa_json *f = vpa_json_obj();
			vpa_json_set_str(f, "type", "lines");
			vpa_json_set_str(f, "id", vpa_buf_str(&id));
			vpa_json_set_str(f, "title", vpa_buf_str(&title));
			vpa_json_set_str(f, "xlabel", s->sweep_param);
			vpa_json_set_str(f, "ylabel", names[mi]);
			vpa_json_set(f, "logx", vpa_json_bool(logx));
			if (!s->sweep_numeric) {
				struct vpa_json *tl = vpa_json_arr();
				for (size_t i = 0; i < vals->n; i++)
					vpa_json_push(tl, vpa_json_str(vals->items[i]->str));
				vpa_json_set(f, "xticlabels", tl);
			}
			vpa_json_set(f, "series", series);
			vpa_json_push(figures, f);
			vpa_buf_release(&id);
			vpa_buf_release(&title);
		}
		for (size_t mi = 0; mi < nn; mi++)
			free(names[mi]);
		free(names);
	}
}

int vpa_scenario_run(const struct vpa_scenario *s, const struct vpa_run_opts *o,
		     struct vpa_json **results, struct vpa_err *err)
{
	double t0 = vpa_now();
	struct vpa_json *R = vpa_json_obj();
	struct vpa_json *warnings = vpa_json_arr();
	struct vpa_json *records = vpa_json_arr(), *figures = vpa_json_arr();
	struct vpa_json *tjs = vpa_json_arr(), *ajs = vpa_json_arr();
	struct vpa_json **afigs = xcalloc(s->n_attacks, sizeof(*afigs));
	struct vpa_json **arecs = xcalloc(s->n_attacks, sizeof(*arecs));
	struct vpa_target *built = xcalloc(s->n_targets, sizeof(*built));
	int *have = xcalloc(s->n_targets, sizeof(*have));
	int rc = 0;
	char started[32];
	*results = NULL;
	iso_now(started, sizeof(started));
	struct vpa_run_ctx ctx = {s->file, s->dir, o->seed_set ? o->seed : s->seed,
				  o->threads > 0 ? o->threads : 1, warnings, vpa_warn_groups_new(),
				  o->outdir};
	for (size_t i = 0; i < s->n_attacks; i++) {
		afigs[i] = vpa_json_arr();
		arecs[i] = vpa_json_arr(); /* records in attack order, whatever the run order */
	}

	int sw_t = s->has_sweep && !s->sweep_is_attack; /* a target is swept */
	int sw_a = s->has_sweep && s->sweep_is_attack;
	size_t nv = s->has_sweep ? s->sweep_values->n : 0;

	/* targets that do not depend on the sweep value: built once */
	if ((rc = vpa_dist_test_fault("targets", err)))
		goto out;
	double tt = vpa_now();
	size_t n_build = s->n_targets - (sw_t ? 1 : 0) + (sw_t ? nv : 0), k_build = 0;
	for (size_t i = 0; i < s->n_targets; i++) {
		if (sw_t && i == s->sweep_index)
			continue;
		rc = build_target(&ctx, s, i, s->targets[i].cfg, &built[i], err);
		have[i] = 1; /* released on failure too: a kind may fail half-built */
		if (rc)
			goto out;
		vpa_progress("targets", ++k_build, n_build, t0);
	}
	double t_targets = vpa_now() - tt, t_attacks = 0;

	/* attacks that do not depend on the sweep value: run once */
	if ((rc = vpa_dist_test_fault("attacks", err)))
		goto out;
	double ta = vpa_now();
	size_t n_runs = 0, k_run = 0;
	for (size_t a = 0; a < s->n_attacks; a++) {
		int dep = (sw_t && s->attacks[a].target == s->sweep_index) ||
			  (sw_a && a == s->sweep_index);
		n_runs += dep ? nv : 1;
	}
	for (size_t a = 0; a < s->n_attacks; a++) {
		int dep = (sw_t && s->attacks[a].target == s->sweep_index) ||
			  (sw_a && a == s->sweep_index);
		if (dep)
			continue;
		if ((rc = run_attack(&ctx, s, a, s->attacks[a].cfg, &built[s->attacks[a].target],
				     arecs[a], afigs[a], NULL, 0, err)))
			goto out;
		vpa_progress("attacks", ++k_run, n_runs, t0);
	}
	t_attacks += vpa_now() - ta;

	/* MPI, at least as many values as ranks: the points are the jobs */
	int shared = nv && vpa_dist_size() > 1 && nv >= (size_t)vpa_dist_size();
	if (shared && (rc = sweep_shared(&ctx, s, built, arecs, afigs, tjs, &t_targets,
					 &t_attacks, err)))
		goto out;
	for (size_t v = 0; v < (shared ? 0 : nv); v++) {
		const struct vpa_ynode *val = s->sweep_values->items[v];
		if (sw_t) {
			size_t ti = s->sweep_index;
			struct vpa_ynode *cfg = vpa_scenario_swept_cfg(s, s->targets[ti].cfg, val);
			tt = vpa_now();
			if (have[ti]) {
				vpa_target_release(&built[ti]);
				have[ti] = 0;
			}
			rc = build_target(&ctx, s, ti, cfg, &built[ti], err);
			have[ti] = 1;
			vpa_ynode_free(cfg);
			t_targets += vpa_now() - tt;
			if (rc)
				goto out;
			vpa_progress("targets", ++k_build, n_build, t0);
		}
		ta = vpa_now();
		for (size_t a = 0; a < s->n_attacks; a++) {
			int dep = (sw_t && s->attacks[a].target == s->sweep_index) ||
				  (sw_a && a == s->sweep_index);
			if (!dep)
				continue;
			struct vpa_ynode *cfg = sw_a ? vpa_scenario_swept_cfg(s, s->attacks[a].cfg, val)
						     : NULL;
			rc = run_attack(&ctx, s, a, cfg ? cfg : s->attacks[a].cfg,
					&built[s->attacks[a].target], arecs[a], afigs[a], val, v, err);
			vpa_ynode_free(cfg);
			if (rc)
				goto out;
			vpa_progress("attacks", ++k_run, n_runs, t0);
		}
		t_attacks += vpa_now() - ta;
		if (sw_t && v == 0) {
			/* the targets list shows the first value's info */
			for (size_t i = 0; i < s->n_targets; i++)
				vpa_json_push(tjs, target_entry(s, i, &built[i]));
		}
	}
	if (!sw_t)
		for (size_t i = 0; i < s->n_targets; i++)
			vpa_json_push(tjs, target_entry(s, i, &built[i]));

	/* one warning line per attack and condition, in run order */
	vpa_warn_groups_flush(&ctx);
	for (size_t a = 0; a < s->n_attacks; a++)
		for (size_t i = 0; i < arecs[a]->n; i++) {
			struct vpa_json *rec = vpa_json_clone(arecs[a]->items[i]);
			vpa_record_mark_undefined(rec); /* null metrics cannot be trusted */
			vpa_json_push(records, rec);
		}
	for (size_t a = 0; a < s->n_attacks; a++) {
		const struct vpa_scn_attack *at = &s->attacks[a];
		struct vpa_json *o2 = vpa_json_obj();
		vpa_json_set_str(o2, "id", at->id);
		vpa_json_set_str(o2, "kind", at->kind->name);
		vpa_json_set_str(o2, "target", s->targets[at->target].id);
		const char *tid = s->targets[at->target].id;
		char *title = at->kind->title ? at->kind->title(at->id, at->opts, tid) : NULL;
		vpa_json_set_str(o2, "title", title ? title : at->id);
		free(title);
		vpa_json_set(o2, "figures", afigs[a]);
		afigs[a] = NULL;
		vpa_json_push(ajs, o2);
	}
	if (s->has_sweep)
		sweep_figures(s, records, figures);
	vpa_privacy_utility_figure(records, s->has_sweep ? s->sweep_param : NULL, figures);

	vpa_json_set_str(R, "schema", "vpaudit.results/1");
	vpa_json_set_str(R, "vpaudit_version", VPA_VERSION);
	struct vpa_json *sc = vpa_json_obj();
	vpa_json_set_str(sc, "name", s->name);
	vpa_json_set(sc, "description", s->description ? vpa_json_str(s->description)
						       : vpa_json_null());
	vpa_json_set_str(sc, "file", s->file);
	vpa_json_set(sc, "echo", vpa_scenario_echo(s));
	vpa_json_set(R, "scenario", sc);
	vpa_json_set_num(R, "seed", (double)ctx.seed);
	vpa_json_set_str(R, "started", started);
	struct vpa_json *wt = vpa_json_obj(), *stages = vpa_json_obj();
	vpa_json_set_num(wt, "total", vpa_now() - t0);
	vpa_json_set_num(stages, "load", 0);
	vpa_json_set_num(stages, "targets", t_targets);
	vpa_json_set_num(stages, "attacks", t_attacks);
	vpa_json_set_num(stages, "report", 0);
	vpa_json_set(wt, "stages", stages);
	vpa_json_set(R, "wall_time", wt);
	vpa_json_set(R, "targets", tjs);
	tjs = NULL;
	vpa_json_set(R, "attacks", ajs);
	ajs = NULL;
	vpa_json_set(R, "records", records);
	records = NULL;
	if (s->has_sweep) {
		struct vpa_json *sw = vpa_json_obj(), *vals = vpa_json_arr();
		vpa_json_set_str(sw, "param", s->sweep_param);
		for (size_t v = 0; v < nv; v++)
			vpa_json_push(vals, sweep_json(s, s->sweep_values->items[v]));
		vpa_json_set(sw, "values", vals);
		vpa_json_set(R, "sweep", sw);
	} else {
		vpa_json_set(R, "sweep", vpa_json_null());
	}
	vpa_json_set(R, "figures", figures);
	figures = NULL;
	vpa_json_set(R, "gates", vpa_json_arr());
	vpa_json_set(R, "tolerance", vpa_json_num(s->tolerance)); /* NAN -> null */
	struct vpa_json *tols = vpa_scenario_tolerances(s);
	vpa_json_set(R, "tolerances", tols ? tols : vpa_json_null());
	vpa_json_set_str(R, "status", "pass");
	vpa_json_set(R, "warnings", warnings);
	warnings = NULL;
	/* provenance: the input files (base/inputs.c) and the machine */
	if ((rc = vpa_inputs_share(err))) /* MPI: the files every rank read */
		goto out;
	vpa_json_set(R, "inputs", vpa_inputs_json());
	struct vpa_json *mach = vpa_json_obj();
	struct utsname un;
	if (uname(&un) == 0) {
		char os[2 * sizeof(un.sysname) + 2];
		snprintf(os, sizeof(os), "%s %s", un.sysname, un.release);
		vpa_json_set_str(mach, "os", os);
		vpa_json_set_str(mach, "arch", un.machine);
	}
	vpa_json_set_num(mach, "cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
	vpa_machine_json(mach); /* CPU model, BLAS kernel, libm, portable (base/cpu.h) */
	vpa_json_set(R, "machine", mach);
	*results = R;
	R = NULL;
out:
	vpa_warn_groups_flush(&ctx); /* after an error too: what was found is said */
	for (size_t i = 0; i < s->n_targets; i++)
		if (have[i])
			vpa_target_release(&built[i]);
	for (size_t i = 0; i < s->n_attacks; i++) {
		vpa_json_free(afigs[i]);
		vpa_json_free(arecs[i]);
	}
	free(afigs);
	free(arecs);
	free(built);
	free(have);
	vpa_json_free(R);
	vpa_json_free(warnings);
	vpa_json_free(records);
	vpa_json_free(figures);
	vpa_json_free(tjs);
	vpa_json_free(ajs);
	return rc;
}
