/*
 * reports/gate.c - gate evaluation on the results DOM, and the baseline
 * comparison of `vpaudit gate --baseline`.  See report.h and
 * reports/README.md ("Record selection for gates").
 *
 * Worst case everywhere: a gate on "ID" covers every sub of the attack, every
 * layer (unless "layer" is given) and every sweep value; for a "min" gate the
 * smallest value decides, for a "max" gate the largest.  An undefined metric
 * (null) fails its gate: a leak that cannot be measured is not a pass.
 */
#include "reports/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct vpa_json *metric_at(const struct vpa_json *m, const char *path, int *present)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	const struct vpa_json *cur = m;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save))
		cur = vpa_json_get(cur, tok);
	*present = cur != NULL;
	return cur;
}

static int same(const struct vpa_json *a, const struct vpa_json *b)
{
	int an = !a || a->type == VPA_JSON_NULL, bn = !b || b->type == VPA_JSON_NULL;
	if (an || bn)
		return an && bn;
	if (a->type != b->type)
		return 0;
	if (a->type == VPA_JSON_NUM)
		return a->num == b->num;
	if (a->type == VPA_JSON_STR)
		return !strcmp(a->str, b->str);
	if (a->type == VPA_JSON_BOOL)
		return a->boolean == b->boolean;
	return 0;
}

/* " (sub x, layer 3, sweep 0.5)" naming a record; empty when nothing to name. */
static void describe(struct vpa_buf *b, const struct vpa_json *rec, int name_sub)
{
	const struct vpa_json *sub = vpa_json_get(rec, "sub");
	const struct vpa_json *lay = vpa_json_get(rec, "layer");
	const struct vpa_json *sw = vpa_json_get(rec, "sweep");
	int first = 1;
	if (name_sub && sub && sub->type == VPA_JSON_STR) {
		vpa_buf_printf(b, "%ssub %s", first ? "" : ", ", sub->str);
		first = 0;
	}
	if (lay && lay->type == VPA_JSON_NUM) {
		vpa_buf_printf(b, "%slayer %g", first ? "" : ", ", lay->num);
		first = 0;
	}
	if (sw && sw->type == VPA_JSON_NUM) {
		vpa_buf_printf(b, "%ssweep %g", first ? "" : ", ", sw->num);
		first = 0;
	}
	if (sw && sw->type == VPA_JSON_STR) {
		vpa_buf_printf(b, "%ssweep %s", first ? "" : ", ", sw->str);
		first = 0;
	}
	(void)first;
}

static struct vpa_loc gate_loc(const struct vpa_json *g)
{
	struct vpa_loc loc = {vpa_json_get_str(g, "file"), (long)vpa_json_get_num(g, "line", 0),
			      (long)vpa_json_get_num(g, "col", 0)};
	return loc;
}

static int eval_one(const struct vpa_json *records, const struct vpa_json *g,
		    struct vpa_json *out, struct vpa_err *err)
{
	struct vpa_loc loc = gate_loc(g);
	const char *attack = vpa_json_get_str(g, "attack");
	const char *metric = vpa_json_get_str(g, "metric");
	const struct vpa_json *lo = vpa_json_get(g, "min"), *hi = vpa_json_get(g, "max");
	const struct vpa_json *layer = vpa_json_get(g, "layer");
	int has_lo = lo && lo->type == VPA_JSON_NUM, has_hi = hi && hi->type == VPA_JSON_NUM;
	int has_layer = layer && layer->type == VPA_JSON_NUM;
	if (!attack || !metric)
		return vpa_fail(err, VPA_EINPUT, loc.file ? &loc : NULL,
				"a gate needs 'attack' and 'metric'");
	if (!has_lo && !has_hi)
		return vpa_fail(err, VPA_EINPUT, loc.file ? &loc : NULL,
				"gate on '%s' %s needs 'min' or 'max'", attack, metric);
	const char *dot = strchr(attack, '.');
	size_t idlen = dot ? (size_t)(dot - attack) : strlen(attack);
	const char *sub = dot ? dot + 1 : NULL;

	size_t n_attack = 0, n_sub = 0, n_match = 0, n_present = 0;
	const struct vpa_json *worst_lo = NULL, *worst_hi = NULL, *undef = NULL;
	double v_lo = INFINITY, v_hi = -INFINITY;
	for (size_t i = 0; records && i < records->n; i++) {
		const struct vpa_json *r = records->items[i];
		const char *ra = vpa_json_get_str(r, "attack");
		if (!ra || strlen(ra) != idlen || memcmp(ra, attack, idlen))
			continue;
		n_attack++;
		if (sub) {
			const char *rs = vpa_json_get_str(r, "sub");
			if (!rs || strcmp(rs, sub))
				continue;
		}
		n_sub++;
		if (has_layer) {
			const struct vpa_json *rl = vpa_json_get(r, "layer");
			if (!rl || rl->type != VPA_JSON_NUM || rl->num != layer->num)
				continue;
		}
		n_match++;
		int present;
		const struct vpa_json *v = metric_at(vpa_json_get(r, "metrics"), metric, &present);
		if (!present)
			continue;
		n_present++;
		if (!v || v->type != VPA_JSON_NUM || !isfinite(v->num)) {
			if (!undef)
				undef = r;
			continue;
		}
		if (v->num < v_lo) {
			v_lo = v->num;
			worst_lo = r;
		}
		if (v->num > v_hi) {
			v_hi = v->num;
			worst_hi = r;
		}
	}
	if (!n_attack)
		return vpa_fail(err, VPA_EINPUT, loc.file ? &loc : NULL,
				"gate names attack '%.*s', which has no records in the results",
				(int)idlen, attack);
	if (!n_sub)
		return vpa_fail(err, VPA_EINPUT, loc.file ? &loc : NULL,
				"gate names '%s', but attack '%.*s' has no sub '%s' in the results",
				attack, (int)idlen, attack, sub);
	if (!n_match)
		return vpa_fail(err, VPA_EINPUT, loc.file ? &loc : NULL,
				"gate names layer %g of '%s', which has no records in the results",
				layer->num, attack);
	if (!n_present)
		return vpa_fail(err, VPA_EINPUT, loc.file ? &loc : NULL,
				"unknown metric '%s' for '%s' (not in its records)", metric, attack);

	/* decide */
	int pass;
	double value = NAN;
	const struct vpa_json *worst = NULL;
	struct vpa_buf msg;
	vpa_buf_init(&msg);
	vpa_buf_printf(&msg, "%s %s", attack, metric);
	if (undef) {
		pass = 0;
		worst = undef;
		vpa_buf_puts(&msg, " is undefined");
	} else {
		int lo_ok = !has_lo || v_lo >= lo->num;
		int hi_ok = !has_hi || v_hi <= hi->num;
		pass = lo_ok && hi_ok;
		if (!lo_ok || (lo_ok && hi_ok && has_lo)) {
			value = v_lo;
			worst = worst_lo;
			vpa_buf_printf(&msg, " = %.6g %s %.6g", v_lo, lo_ok ? ">=" : "<", lo->num);
		} else {
			value = v_hi;
			worst = worst_hi;
			vpa_buf_printf(&msg, " = %.6g %s %.6g", v_hi, hi_ok ? "<=" : ">", hi->num);
		}
		if (pass && has_lo && has_hi)
			vpa_buf_printf(&msg, " and %.6g <= %.6g", v_hi, hi->num);
	}
	if (n_match > 1 || undef) {
		struct vpa_buf d;
		vpa_buf_init(&d);
		describe(&d, worst, !sub);
		if (d.len)
			vpa_buf_printf(&msg, " (%s of %zu records: %s)", undef ? "first" : "worst",
				       n_match, d.data);
		vpa_buf_release(&d);
	}

	struct vpa_json *o = vpa_json_obj();
	vpa_json_set_str(o, "attack", attack);
	vpa_json_set_str(o, "metric", metric);
	vpa_json_set(o, "min", has_lo ? vpa_json_num(lo->num) : vpa_json_null());
	vpa_json_set(o, "max", has_hi ? vpa_json_num(hi->num) : vpa_json_null());
	vpa_json_set(o, "layer", has_layer ? vpa_json_num(layer->num) : vpa_json_null());
	vpa_json_set(o, "value", vpa_json_num(value)); /* NAN -> null */
	vpa_json_set(o, "pass", vpa_json_bool(pass));
	vpa_json_set_str(o, "message", vpa_buf_str(&msg));
	if (loc.file) {
		vpa_json_set_str(o, "file", loc.file);
		vpa_json_set_num(o, "line", (double)loc.line);
		vpa_json_set_num(o, "col", (double)loc.col);
	} else {
		vpa_json_set(o, "file", vpa_json_null());
		vpa_json_set(o, "line", vpa_json_null());
		vpa_json_set(o, "col", vpa_json_null());
	}
	vpa_json_push(out, o);
	vpa_buf_release(&msg);
	return pass ? 0 : 1;
}

int vpa_gates_evaluate(struct vpa_json *results, const struct vpa_json *gates,
		       struct vpa_err *err)
{
	const struct vpa_json *records = vpa_json_get(results, "records");
	struct vpa_json *out = vpa_json_arr();
	int failed = 0;
	if (records && records->type != VPA_JSON_ARR)
		records = NULL;
	for (size_t i = 0; gates && gates->type == VPA_JSON_ARR && i < gates->n; i++) {
		int rc = eval_one(records, gates->items[i], out, err);
		if (rc < 0) {
			vpa_json_free(out);
			return rc;
		}
		failed += rc;
	}
	vpa_json_set(results, "gates", out);
	vpa_json_set_str(results, "status", failed ? "fail" : "pass");
	return failed ? VPA_EGATE : 0;
}

/* ---- baseline ---------------------------------------------------------------- */

/*
 * The leaky direction of each metric: +1 higher = leakier, -1 lower =
 * leakier.  Metrics not listed (counts, thresholds, categories) are not
 * compared.  Documented in scenarios/README.md.
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

int vpa_metric_direction(const char *metric)
{
	for (size_t i = 0; i < sizeof(directions) / sizeof(directions[0]); i++)
		if (!strcmp(directions[i].name, metric))
			return directions[i].dir;
	return 0;
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

int vpa_gates_baseline(const struct vpa_json *results, const struct vpa_json *baseline,
		       double tolerance, struct vpa_json **flags, struct vpa_err *err)
{
	const struct vpa_json *nr = vpa_json_get(results, "records");
	const struct vpa_json *orr = vpa_json_get(baseline, "records");
	*flags = NULL;
	if (!nr || nr->type != VPA_JSON_ARR || !orr || orr->type != VPA_JSON_ARR)
		return vpa_fail(err, VPA_EINPUT, NULL, "results without a \"records\" array");
	if (!(tolerance >= 0))
		tolerance = 0;
	struct vpa_json *out = vpa_json_arr();
	for (size_t i = 0; i < nr->n; i++) {
		const struct vpa_json *r = nr->items[i];
		const struct vpa_json *o = NULL;
		for (size_t j = 0; j < orr->n && !o; j++) {
			const struct vpa_json *c = orr->items[j];
			if (same(vpa_json_get(r, "attack"), vpa_json_get(c, "attack")) &&
			    same(vpa_json_get(r, "sub"), vpa_json_get(c, "sub")) &&
			    same(vpa_json_get(r, "layer"), vpa_json_get(c, "layer")) &&
			    same(vpa_json_get(r, "sweep"), vpa_json_get(c, "sweep")))
				o = c;
		}
		if (!o)
			continue;
		struct vpa_buf names;
		vpa_buf_init(&names);
		flatten(vpa_json_get(r, "metrics"), "", &names);
		for (size_t p = 0; p < names.len; p += strlen(names.data + p) + 1) {
			const char *name = names.data + p;
			int dir = vpa_metric_direction(name), pr;
			if (!dir)
				continue;
			const struct vpa_json *nv = metric_at(vpa_json_get(r, "metrics"), name, &pr);
			const struct vpa_json *ov = metric_at(vpa_json_get(o, "metrics"), name, &pr);
			if (!nv || !ov || nv->type != VPA_JSON_NUM || ov->type != VPA_JSON_NUM)
				continue;
			double delta = nv->num - ov->num;
			if (!(dir * delta > tolerance))
				continue;
			struct vpa_buf m;
			vpa_buf_init(&m);
			const char *sub = vpa_json_get_str(r, "sub");
			vpa_buf_printf(&m, "%s%s%s %s moved from %.6g to %.6g (%+.3g, %s is leakier; "
					   "tolerance %g)",
				       vpa_json_get_str(r, "attack"), sub ? "." : "", sub ? sub : "",
				       name, ov->num, nv->num, delta, dir > 0 ? "higher" : "lower",
				       tolerance);
			struct vpa_buf d;
			vpa_buf_init(&d);
			describe(&d, r, 0);
			if (d.len)
				vpa_buf_printf(&m, " [%s]", d.data);
			vpa_buf_release(&d);
			struct vpa_json *f = vpa_json_obj();
			vpa_json_set(f, "attack", clone_or_null(vpa_json_get(r, "attack")));
			vpa_json_set(f, "sub", clone_or_null(vpa_json_get(r, "sub")));
			vpa_json_set(f, "layer", clone_or_null(vpa_json_get(r, "layer")));
			vpa_json_set(f, "sweep", clone_or_null(vpa_json_get(r, "sweep")));
			vpa_json_set_str(f, "metric", name);
			vpa_json_set_num(f, "old", ov->num);
			vpa_json_set_num(f, "new", nv->num);
			vpa_json_set_num(f, "delta", delta);
			vpa_json_set_str(f, "message", vpa_buf_str(&m));
			vpa_json_push(out, f);
			vpa_buf_release(&m);
		}
		vpa_buf_release(&names);
	}
	*flags = out;
	return out->n ? VPA_EGATE : 0;
}
