/*
 * reports/baseline.c - the baseline comparison of `vpaudit gate --baseline`
 * and `vpaudit run --baseline`: records matched on (attack, sub, layer,
 * sweep), each compared metric checked for a move in its leaky direction.
 * See report.h (vpa_gates_baseline) and reports/README.md ("Baseline").
 */
#include "reports/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The leaky direction of each metric: +1 higher = leakier, -1 lower =
 * leakier.  Metrics not listed (counts, thresholds, categories) are not
 * compared.  The scenario key `tolerances:` accepts exactly these names
 * (scenarios/scenario.c; test_report checks the two lists agree).
 */
static const struct {
	const char *name;
	int dir;
} directions[] = {
	{"eer", -1}, {"eer_sweep", -1}, {"cllr", -1}, {"cllr_min", -1}, {"min_dcf", -1},
	{"linkability", +1}, {"zebra.dece", +1}, {"zebra.log10_lr_worst", +1},
	{"top1", +1}, {"top5", +1}, {"top10", +1}, {"mean_rank", -1}, {"mean_norm_rank", -1},
	{"exposure", +1}, {"exposure_extrapolated", +1}, {"d_exposure", +1}, {"epsilon", +1},
	{"snr", +1}, {"accuracy", +1},
};
#define N_DIRECTIONS (sizeof(directions) / sizeof(directions[0]))

int vpa_metric_direction(const char *metric)
{
	for (size_t i = 0; i < N_DIRECTIONS; i++)
		if (!strcmp(directions[i].name, metric))
			return directions[i].dir;
	return 0;
}

const char *vpa_compared_metric(size_t i)
{
	return i < N_DIRECTIONS ? directions[i].name : NULL;
}

static void flatten(const struct vpa_json *m, const char *prefix, struct vpa_buf *names)
{
	for (size_t i = 0; m && m->type == VPA_JSON_OBJ && i < m->n; i++) {
		char name[256];
		snprintf(name, sizeof(name), "%s%s", prefix, m->keys[i]);
		if (m->items[i]->type == VPA_JSON_OBJ) {
			char p2[260];
			snprintf(p2, sizeof(p2), "%s.", name);
			flatten(m->items[i], p2, names);
		} else {
			vpa_buf_add(names, name, strlen(name) + 1);
		}
	}
}

static struct vpa_json *clone_or_null(const struct vpa_json *v)
{
	return v ? vpa_json_clone(v) : vpa_json_null();
}

static int same_record(const struct vpa_json *a, const struct vpa_json *b)
{
	static const char *const keys[] = {"attack", "sub", "layer", "sweep"};
	for (size_t k = 0; k < 4; k++)
		if (!vpa_json_same(vpa_json_get(a, keys[k]), vpa_json_get(b, keys[k])))
			return 0;
	return 1;
}

static const struct vpa_json *find_record(const struct vpa_json *arr, const struct vpa_json *r)
{
	for (size_t j = 0; j < arr->n; j++)
		if (same_record(r, arr->items[j]))
			return arr->items[j];
	return NULL;
}

/* "eval.lazy_informed" + " [layer 3]": how a record is named in the log. */
static void record_name(struct vpa_buf *b, const struct vpa_json *r)
{
	const char *a = vpa_json_get_str(r, "attack"), *sub = vpa_json_get_str(r, "sub");
	vpa_buf_printf(b, "%s%s%s", a ? a : "?", sub ? "." : "", sub ? sub : "");
	struct vpa_buf d;
	vpa_buf_init(&d);
	vpa_record_describe(&d, r, 0);
	if (d.len)
		vpa_buf_printf(b, " [%s]", d.data);
	vpa_buf_release(&d);
}

static struct vpa_json *record_key(const struct vpa_json *r, const char *name)
{
	struct vpa_json *f = vpa_json_obj();
	vpa_json_set(f, "attack", clone_or_null(vpa_json_get(r, "attack")));
	vpa_json_set(f, "sub", clone_or_null(vpa_json_get(r, "sub")));
	vpa_json_set(f, "layer", clone_or_null(vpa_json_get(r, "layer")));
	vpa_json_set(f, "sweep", clone_or_null(vpa_json_get(r, "sweep")));
	vpa_json_set_str(f, "name", name);
	return f;
}

static void add_line(struct vpa_json *lines, const char *kind, const char *text)
{
	struct vpa_json *l = vpa_json_obj();
	vpa_json_set_str(l, "kind", kind);
	vpa_json_set_str(l, "text", text);
	vpa_json_push(lines, l);
}

/* ci[name] as [lo, hi] with both finite, else 0. */
static int interval(const struct vpa_json *r, const char *name, double *lo, double *hi)
{
	const struct vpa_json *c = vpa_json_get(vpa_json_get(r, "ci"), name);
	if (!c || c->type != VPA_JSON_ARR || c->n != 2 || c->items[0]->type != VPA_JSON_NUM ||
	    c->items[1]->type != VPA_JSON_NUM || !isfinite(c->items[0]->num) ||
	    !isfinite(c->items[1]->num))
		return 0;
	*lo = c->items[0]->num;
	*hi = c->items[1]->num;
	return 1;
}

int vpa_baseline_significance(int dir, double old, double old_lo, double old_hi, double new_v,
			      double new_lo, double new_hi)
{
	double delta = new_v - old;
	/* the half-widths on the sides that face each other in the leaky direction */
	double h_old = dir > 0 ? old_hi - old : old - old_lo;
	double h_new = dir > 0 ? new_v - new_lo : new_hi - new_v;
	if (!(h_old > 0))
		h_old = 0;
	if (!(h_new > 0))
		h_new = 0;
	return dir * delta > sqrt(h_old * h_old + h_new * h_new);
}

static int wanted(const struct vpa_baseline_opts *o, const char *name)
{
	if (!o->n_metrics)
		return 1;
	for (size_t i = 0; i < o->n_metrics; i++)
		if (!strcmp(o->metrics[i], name))
			return 1;
	return 0;
}

/* Compare one matched pair; appends comparisons and lines; returns the regressions. */
static size_t compare(const struct vpa_json *r, const struct vpa_json *old,
		      const struct vpa_baseline_opts *o, struct vpa_json *comps,
		      struct vpa_json *lines)
{
	struct vpa_buf names, rn, m;
	vpa_buf_init(&names);
	vpa_buf_init(&rn);
	vpa_buf_init(&m);
	record_name(&rn, r);
	flatten(vpa_json_get(r, "metrics"), "", &names);
	size_t n_cmp = 0, n_reg = 0;
	for (size_t p = 0; p < names.len; p += strlen(names.data + p) + 1) {
		const char *name = names.data + p;
		int dir = vpa_metric_direction(name), pr;
		if (!dir || !wanted(o, name))
			continue;
		const struct vpa_json *nv = vpa_metric_at(vpa_json_get(r, "metrics"), name, &pr);
		const struct vpa_json *ov = vpa_metric_at(vpa_json_get(old, "metrics"), name, &pr);
		int n_ok = nv && nv->type == VPA_JSON_NUM && isfinite(nv->num);
		int o_ok = ov && ov->type == VPA_JSON_NUM && isfinite(ov->num);
		if (!o_ok)
			continue; /* nothing to compare with: an undefined old value cannot regress */
		double tol = o->tolerance;
		const struct vpa_json *tj = vpa_json_get(o->tolerances, name);
		if (tj && tj->type == VPA_JSON_NUM)
			tol = tj->num;
		if (!(tol >= 0))
			tol = 0;
		int regress, sig = -1; /* -1: not tested */
		double delta = n_ok ? nv->num - ov->num : NAN;
		m.len = 0;
		if (!n_ok) {
			regress = 1;
			vpa_buf_printf(&m, "%s %s was %.6g and is now undefined", rn.data, name, ov->num);
		} else {
			regress = dir * delta > tol;
			double olo, ohi, nlo, nhi;
			if (regress && o->significant && interval(old, name, &olo, &ohi) &&
			    interval(r, name, &nlo, &nhi)) {
				sig = vpa_baseline_significance(dir, ov->num, olo, ohi, nv->num, nlo, nhi);
				regress = sig;
			}
			vpa_buf_printf(&m, "%s %s moved from %.6g to %.6g (%+.3g, %s is leakier; tolerance %g",
				       rn.data, name, ov->num, nv->num, delta,
				       dir > 0 ? "higher" : "lower", tol);
			if (sig == 0)
				vpa_buf_puts(&m, "; within the two intervals: not significant");
			else if (sig == 1)
				vpa_buf_puts(&m, "; beyond the two intervals: significant");
			else if (o->significant && dir * delta > tol)
				vpa_buf_puts(&m, "; no interval in both files");
			vpa_buf_puts(&m, ")");
		}
		n_cmp++;
		struct vpa_json *c = record_key(r, rn.data);
		vpa_json_set_str(c, "metric", name);
		vpa_json_set_num(c, "old", ov->num);
		vpa_json_set(c, "new", n_ok ? vpa_json_num(nv->num) : vpa_json_null());
		vpa_json_set(c, "delta", vpa_json_num(delta));
		vpa_json_set_num(c, "tolerance", tol);
		if (sig >= 0)
			vpa_json_set(c, "significant", vpa_json_bool(sig));
		vpa_json_set_str(c, "status", regress ? "regression" : "stable");
		vpa_json_set_str(c, "message", vpa_buf_str(&m));
		vpa_json_push(comps, c);
		if (regress) {
			n_reg++;
			add_line(lines, "REGRESSION", vpa_buf_str(&m));
		}
	}
	if (!n_reg) {
		m.len = 0;
		vpa_buf_printf(&m, "%s: %zu metric%s within tolerance", rn.data, n_cmp,
			       n_cmp == 1 ? "" : "s");
		add_line(lines, "STABLE", m.data);
	}
	vpa_buf_release(&m);
	vpa_buf_release(&rn);
	vpa_buf_release(&names);
	return n_reg;
}

int vpa_gates_baseline(const struct vpa_json *results, const struct vpa_json *baseline,
		       const struct vpa_baseline_opts *o, struct vpa_json **out,
		       struct vpa_err *err)
{
	static const struct vpa_baseline_opts defaults = {NULL, 0, NULL, NULL, 0, 0, 0};
	if (!o)
		o = &defaults;
	const struct vpa_json *nr = vpa_json_get(results, "records");
	const struct vpa_json *orr = vpa_json_get(baseline, "records");
	struct vpa_loc bloc = {o->name, 0, 0};
	*out = NULL;
	if (!nr || nr->type != VPA_JSON_ARR || !orr || orr->type != VPA_JSON_ARR)
		return vpa_fail(err, VPA_EINPUT, o->name ? &bloc : NULL,
				"results without a \"records\" array");
	size_t matched = 0;
	for (size_t i = 0; i < nr->n; i++)
		matched += find_record(orr, nr->items[i]) != NULL;
	if (!matched)
		return vpa_fail(err, VPA_EINPUT, o->name ? &bloc : NULL,
				"matched 0 of %zu records: the baseline shares no record with the "
				"results; is it the same scenario?",
				nr->n);
	struct vpa_json *S = vpa_json_obj(), *comps = vpa_json_arr(), *unm = vpa_json_arr();
	struct vpa_json *lines = vpa_json_arr();
	struct vpa_buf b;
	vpa_buf_init(&b);
	size_t regressions = 0, failures = 0;
	vpa_buf_printf(&b, "matched %zu of %zu records (%zu in the baseline)", matched, nr->n, orr->n);
	add_line(lines, "BASELINE", b.data);
	b.len = 0;
	if (vpa_machine_mismatch(results, baseline, &b)) /* reports/machine.c */
		add_line(lines, "WARNING", b.data);
	for (int side = 0; side < 2; side++) {
		const struct vpa_json *from = side ? orr : nr, *other = side ? nr : orr;
		for (size_t i = 0; i < from->n; i++) {
			if (find_record(other, from->items[i]))
				continue;
			b.len = 0;
			record_name(&b, from->items[i]);
			struct vpa_json *u = record_key(from->items[i], b.data);
			vpa_buf_printf(&b, ": only in the %s%s", side ? "baseline" : "results",
				       o->strict ? " (a failure with --strict)" : "");
			vpa_json_set_str(u, "side", side ? "baseline" : "results");
			vpa_json_set(u, "fail", vpa_json_bool(o->strict));
			vpa_json_set_str(u, "message", b.data);
			vpa_json_push(unm, u);
			add_line(lines, "UNMATCHED", b.data);
			failures += o->strict != 0;
		}
	}
	for (size_t i = 0; i < nr->n; i++) {
		const struct vpa_json *old = find_record(orr, nr->items[i]);
		if (old)
			regressions += compare(nr->items[i], old, o, comps, lines);
	}
	failures += regressions;
	if (o->name)
		vpa_json_set_str(S, "file", o->name);
	else
		vpa_json_set(S, "file", vpa_json_null());
	vpa_json_set_num(S, "matched", (double)matched);
	vpa_json_set_num(S, "records", (double)nr->n);
	vpa_json_set_num(S, "baseline_records", (double)orr->n);
	vpa_json_set_num(S, "tolerance", o->tolerance >= 0 ? o->tolerance : 0);
	vpa_json_set(S, "tolerances", o->tolerances ? vpa_json_clone(o->tolerances) : vpa_json_null());
	struct vpa_json *ms = vpa_json_arr();
	for (size_t i = 0; i < o->n_metrics; i++)
		vpa_json_push(ms, vpa_json_str(o->metrics[i]));
	if (!o->n_metrics) {
		vpa_json_free(ms);
		ms = vpa_json_null();
	}
	vpa_json_set(S, "metrics", ms);
	vpa_json_set(S, "significant", vpa_json_bool(o->significant));
	vpa_json_set(S, "strict", vpa_json_bool(o->strict));
	vpa_json_set_num(S, "regressions", (double)regressions);
	vpa_json_set_num(S, "failures", (double)failures);
	vpa_json_set_str(S, "status", failures ? "fail" : "pass");
	vpa_json_set(S, "unmatched", unm);
	vpa_json_set(S, "comparisons", comps);
	vpa_json_set(S, "lines", lines);
	vpa_buf_release(&b);
	*out = S;
	return failures ? VPA_EGATE : 0;
}
