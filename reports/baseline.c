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
 * The units of the compared metrics.  One number cannot be the tolerance of
 * all of them (0.02 is two points of EER but a fiftieth of a rank), so a
 * tolerance X (`tolerance:`, `gate --tolerance`, default
 * VPA_DEFAULT_TOLERANCE) is stated for fractions and each unit takes X times
 * its factor (reports/README.md "Tolerances by unit"; the factors put one
 * default step at a comparable, small size in each unit).
 */
enum unit { U_FRACTION, U_BITS, U_EXPOSURE, U_LOG10_LR, U_RANK, U_EPSILON, U_RATIO };
static const struct {
	const char *name;   /* "unit" of a comparison in results.json */
	const char *suffix; /* after the tolerance in a REGRESSION line */
	double factor;      /* tolerance = X * factor */
} units[] = {
	[U_FRACTION] = {"fraction", "", 1},          /* EER, linkability: 0.01 = one point */
	[U_BITS] = {"bits", " bits", 2},             /* Cllr, D_ECE: 0..1 bit, twice EER's 0..0.5 */
	[U_EXPOSURE] = {"bits of exposure", " bits", 10}, /* 0..log2 N (13.3 for a PIN) */
	[U_LOG10_LR] = {"log10 LR", " in log10 LR", 10},  /* 0.1: a factor 1.26 in the LR */
	[U_RANK] = {"rank", " ranks", 100},          /* mean rank: one place in the ranking */
	[U_EPSILON] = {"epsilon", "", 1},            /* computed, not measured: any rise shows */
	[U_RATIO] = {"ratio", "", 1},                /* SNR ||update|| / ||noise|| */
};

/*
 * The leaky direction of each metric: +1 higher = leakier, -1 lower =
 * leakier, and its unit.  Metrics not listed (counts, thresholds, categories)
 * are not compared.  The scenario key `tolerances:` accepts exactly these
 * names (scenarios/scenario.c; test_gate checks the two lists agree).
 */
static const struct {
	const char *name;
	int dir;
	enum unit unit;
} directions[] = {
	{"eer", -1, U_FRACTION}, {"eer_sweep", -1, U_FRACTION}, {"cllr", -1, U_BITS},
	{"cllr_min", -1, U_BITS}, {"min_dcf", -1, U_FRACTION}, {"linkability", +1, U_FRACTION},
	{"zebra.dece", +1, U_BITS}, {"zebra.log10_lr_worst", +1, U_LOG10_LR},
	{"top1", +1, U_FRACTION}, {"top5", +1, U_FRACTION}, {"top10", +1, U_FRACTION},
	{"mean_rank", -1, U_RANK}, {"mean_norm_rank", -1, U_FRACTION},
	{"exposure", +1, U_EXPOSURE}, {"exposure_extrapolated", +1, U_EXPOSURE},
	{"d_exposure", +1, U_EXPOSURE}, {"epsilon", +1, U_EPSILON}, {"snr", +1, U_RATIO},
	{"accuracy", +1, U_FRACTION},
};
#define N_DIRECTIONS (sizeof(directions) / sizeof(directions[0]))

static int metric_index(const char *metric)
{
	for (size_t i = 0; i < N_DIRECTIONS; i++)
		if (!strcmp(directions[i].name, metric))
			return (int)i;
	return -1;
}

int vpa_metric_direction(const char *metric)
{
	int i = metric_index(metric);
	return i < 0 ? 0 : directions[i].dir;
}

const char *vpa_metric_unit(const char *metric, double *factor)
{
	int i = metric_index(metric);
	if (i < 0)
		return NULL;
	if (factor)
		*factor = units[directions[i].unit].factor;
	return units[directions[i].unit].name;
}

double vpa_baseline_tolerance(const char *metric, double tolerance,
			      const struct vpa_json *tolerances)
{
	const struct vpa_json *tj = vpa_json_get(tolerances, metric);
	if (tj && tj->type == VPA_JSON_NUM)
		return tj->num >= 0 ? tj->num : 0;
	if (isnan(tolerance))
		tolerance = VPA_DEFAULT_TOLERANCE;
	if (!(tolerance >= 0))
		tolerance = 0;
	double f = 1;
	vpa_metric_unit(metric, &f);
	return tolerance * f;
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

/* Add name to the NUL-separated list b unless it is there. */
static void add_name(struct vpa_buf *b, const char *name)
{
	for (size_t p = 0; p < b->len; p += strlen(b->data + p) + 1)
		if (!strcmp(b->data + p, name))
			return;
	vpa_buf_add(b, name, strlen(name) + 1);
}

static void names_text(struct vpa_buf *out, const struct vpa_buf *names)
{
	for (size_t p = 0; p < names->len; p += strlen(names->data + p) + 1)
		vpa_buf_printf(out, "%s%s", p ? ", " : "", names->data + p);
}

/*
 * With --significant, the line after "BASELINE matched ..." that says which
 * comparisons the intervals could decide and which were made on the
 * tolerance alone (only eer, eer_sweep, cllr_min and linkability have
 * intervals, and only when the attack has `ci:` in both runs):
 *   "BASELINE --significant: 12 comparisons against the intervals of both files (eer,
 *    eer_sweep, cllr_min, linkability); 12 on the tolerance alone, without an interval
 *    in both files (cllr, ...)"
 */
static void significance_line(const struct vpa_json *comps, struct vpa_json *lines)
{
	struct vpa_buf with, without, t;
	vpa_buf_init(&with);
	vpa_buf_init(&without);
	vpa_buf_init(&t);
	size_t n_with = 0, n_without = 0;
	for (size_t i = 0; i < comps->n; i++) {
		const char *basis = vpa_json_get_str(comps->items[i], "basis");
		const char *metric = vpa_json_get_str(comps->items[i], "metric");
		if (!basis || !metric)
			continue;
		int w = !strcmp(basis, "intervals");
		n_with += w;
		n_without += !w;
		add_name(w ? &with : &without, metric);
	}
	vpa_buf_printf(&t, "--significant: %zu comparison%s against the intervals of both files", n_with,
		       n_with == 1 ? "" : "s");
	if (n_with) {
		vpa_buf_puts(&t, " (");
		names_text(&t, &with);
		vpa_buf_puts(&t, ")");
	}
	vpa_buf_printf(&t, "; %zu on the tolerance alone, without an interval in both files",
		       n_without);
	if (n_without) {
		vpa_buf_puts(&t, " (");
		names_text(&t, &without);
		vpa_buf_puts(&t, ")");
	}
	/* right after the first line ("BASELINE matched ...") */
	add_line(lines, "BASELINE", vpa_buf_str(&t));
	struct vpa_json *last = lines->items[lines->n - 1];
	memmove(lines->items + 2, lines->items + 1, (lines->n - 2) * sizeof(*lines->items));
	lines->items[1] = last;
	vpa_buf_release(&with);
	vpa_buf_release(&without);
	vpa_buf_release(&t);
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
		double tol = vpa_baseline_tolerance(name, o->tolerance, o->tolerances);
		const char *unit_suffix = units[directions[metric_index(name)].unit].suffix;
		int regress, sig = -1; /* -1: not tested */
		int has_o = 0, has_n = 0; /* intervals, looked up with --significant only */
		double delta = n_ok ? nv->num - ov->num : NAN;
		m.len = 0;
		if (!n_ok) {
			regress = 1;
			vpa_buf_printf(&m, "%s %s was %.6g and is now undefined", rn.data, name, ov->num);
		} else {
			regress = dir * delta > tol;
			double olo, ohi, nlo, nhi;
			if (o->significant) {
				has_o = interval(old, name, &olo, &ohi);
				has_n = interval(r, name, &nlo, &nhi);
			}
			if (regress && has_o && has_n) {
				sig = vpa_baseline_significance(dir, ov->num, olo, ohi, nv->num, nlo, nhi);
				regress = sig;
			}
			vpa_buf_printf(&m, "%s %s moved from %.6g to %.6g (%+.3g, %s is leakier; tolerance %g%s",
				       rn.data, name, ov->num, nv->num, delta,
				       dir > 0 ? "higher" : "lower", tol, unit_suffix);
			if (sig == 0)
				vpa_buf_puts(&m, "; within the two intervals: not significant");
			else if (sig == 1)
				vpa_buf_puts(&m, "; beyond the two intervals: significant");
			else if (o->significant && !(has_o && has_n))
				/* --significant cannot apply: say so on every such comparison */
				vpa_buf_printf(&m, "; no interval %s: on the tolerance alone",
					       has_o ? "in the results" : has_n ? "in the baseline"
					       : "in either file");
			vpa_buf_puts(&m, ")");
		}
		n_cmp++;
		struct vpa_json *c = record_key(r, rn.data);
		vpa_json_set_str(c, "metric", name);
		vpa_json_set_num(c, "old", ov->num);
		vpa_json_set(c, "new", n_ok ? vpa_json_num(nv->num) : vpa_json_null());
		vpa_json_set(c, "delta", vpa_json_num(delta));
		vpa_json_set_num(c, "tolerance", tol);
		vpa_json_set_str(c, "unit", vpa_metric_unit(name, NULL));
		if (sig >= 0)
			vpa_json_set(c, "significant", vpa_json_bool(sig));
		if (o->significant) /* what --significant could test this comparison against */
			vpa_json_set_str(c, "basis", has_o && has_n ? "intervals" : "tolerance");
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
	static const struct vpa_baseline_opts defaults = {NULL, NAN, NULL, NULL, 0, 0, 0};
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
	/* the same audit?  (reports/baseline_match.c) */
	struct vpa_json *mism = vpa_json_arr();
	vpa_baseline_provenance(results, baseline, o->name, mism);
	if (mism->n && o->strict) {
		struct vpa_buf e;
		vpa_buf_init(&e);
		for (size_t i = 0; i < mism->n; i++)
			vpa_buf_printf(&e, "%s%s", i ? "; " : "", mism->items[i]->str);
		int rc = vpa_fail(err, VPA_EINPUT, o->name ? &bloc : NULL,
				  "the baseline is not of the same audit (an error with --strict): %s",
				  vpa_buf_str(&e));
		vpa_buf_release(&e);
		vpa_json_free(mism);
		return rc;
	}
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
			/* A record only in the baseline fails: what the baseline checked must not
			 * drop out of the comparison unnoticed (a renamed attacker).  A record only in
			 * the results is new and has nothing to be compared with: a failure only
			 * with --strict. */
			int fail = side || o->strict;
			b.len = 0;
			record_name(&b, from->items[i]);
			struct vpa_json *u = record_key(from->items[i], b.data);
			vpa_buf_printf(&b, ": only in the %s%s", side ? "baseline" : "results",
				       side ? " (a failure: no longer compared)"
				       : o->strict ? " (a failure with --strict)" : " (new: not compared)");
			vpa_json_set_str(u, "side", side ? "baseline" : "results");
			vpa_json_set(u, "fail", vpa_json_bool(fail));
			vpa_json_set_str(u, "message", b.data);
			vpa_json_push(unm, u);
			add_line(lines, "UNMATCHED", b.data);
			failures += fail;
		}
	}
	for (size_t i = 0; i < nr->n; i++) {
		const struct vpa_json *old = find_record(orr, nr->items[i]);
		if (old)
			regressions += compare(nr->items[i], old, o, comps, lines);
	}
	failures += regressions;
	if (o->significant)
		significance_line(comps, lines);
	if (o->name)
		vpa_json_set_str(S, "file", o->name);
	else
		vpa_json_set(S, "file", vpa_json_null());
	vpa_json_set_num(S, "matched", (double)matched);
	vpa_json_set_num(S, "records", (double)nr->n);
	vpa_json_set_num(S, "baseline_records", (double)orr->n);
	vpa_json_set_num(S, "tolerance", isnan(o->tolerance) ? VPA_DEFAULT_TOLERANCE
				       : o->tolerance >= 0 ? o->tolerance : 0);
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
	vpa_json_set(S, "mismatches", mism);
	vpa_json_set(S, "unmatched", unm);
	vpa_json_set(S, "comparisons", comps);
	vpa_json_set(S, "lines", lines);
	vpa_buf_release(&b);
	*out = S;
	return failures ? VPA_EGATE : 0;
}
