/*
 * reports/gate.c - gate evaluation on the results DOM (the baseline
 * comparison is in baseline.c).  See report.h and reports/README.md ("Gates").
 *
 * Worst case everywhere: a gate on "ID" covers every selected sub of the
 * attack (subs:, exclude:), every layer (unless "layer" is given) and every
 * sweep value (unless "sweep" is given); for a "min" gate the smallest value
 * decides, for a "max" gate the largest.  Fail closed: an undefined metric
 * (null) or one the record marks unreliable fails its gate (the latter
 * unless "allow_unreliable"): a leak that cannot be measured is not a pass.
 * So does a metric that reads the score direction (eer, cllr_min, min_dcf,
 * ...) of a record whose scores are anti-correlated with identity, unless
 * "allow_anti_correlated": reversed scores read as chance there, while an
 * attacker who reverses them links identities.  When another record's value
 * breaks the bound, that is the first reason named (the worst value and its
 * record), then each record that fails closed (issue 25 item 4f): blaming
 * only the trial count of a record that passes would hide the leak.
 */
#include "reports/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const struct vpa_json *vpa_metric_at(const struct vpa_json *m, const char *path, int *present)
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

int vpa_json_same(const struct vpa_json *a, const struct vpa_json *b)
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

void vpa_record_describe(struct vpa_buf *b, const struct vpa_json *rec, int name_sub)
{
	const struct vpa_json *sub = vpa_json_get(rec, "sub");
	const struct vpa_json *lay = vpa_json_get(rec, "layer");
	const struct vpa_json *sw = vpa_json_get(rec, "sweep");
	const char *sep = "";
	if (name_sub && sub && sub->type == VPA_JSON_STR) {
		vpa_buf_printf(b, "%ssub %s", sep, sub->str);
		sep = ", ";
	}
	if (lay && lay->type == VPA_JSON_NUM) {
		vpa_buf_printf(b, "%slayer %g", sep, lay->num);
		sep = ", ";
	}
	if (sw && sw->type == VPA_JSON_NUM)
		vpa_buf_printf(b, "%ssweep %g", sep, sw->num);
	else if (sw && sw->type == VPA_JSON_STR)
		vpa_buf_printf(b, "%ssweep %s", sep, sw->str);
}

int vpa_results_simulated(const struct vpa_json *results, const char *attack)
{
	const struct vpa_json *as = vpa_json_get(results, "attacks");
	const struct vpa_json *ts = vpa_json_get(results, "targets");
	size_t idlen = strcspn(attack ? attack : "", ".");
	for (size_t i = 0; as && as->type == VPA_JSON_ARR && i < as->n; i++) {
		const char *id = vpa_json_get_str(as->items[i], "id");
		const char *tid = vpa_json_get_str(as->items[i], "target");
		if (!id || !tid || strlen(id) != idlen || memcmp(id, attack, idlen))
			continue;
		for (size_t j = 0; ts && ts->type == VPA_JSON_ARR && j < ts->n; j++) {
			const char *t = vpa_json_get_str(ts->items[j], "id");
			const struct vpa_json *sim = vpa_json_get(ts->items[j], "simulated");
			if (t && !strcmp(t, tid))
				return sim && sim->type == VPA_JSON_BOOL && sim->boolean;
		}
	}
	return 0;
}

void vpa_gate_line(struct vpa_buf *out, const struct vpa_json *gate)
{
	const struct vpa_json *pj = vpa_json_get(gate, "pass");
	const struct vpa_json *sim = vpa_json_get(gate, "simulated");
	const char *msg = vpa_json_get_str(gate, "message");
	vpa_buf_printf(out, "%s %s%s", pj && pj->type == VPA_JSON_BOOL && pj->boolean ? "PASS" : "FAIL",
		       sim && sim->type == VPA_JSON_BOOL && sim->boolean ? "[simulated] " : "",
		       msg ? msg : "");
}

int vpa_gate_breached(const struct vpa_json *gate)
{
	const struct vpa_json *v = vpa_json_get(gate, "value");
	const struct vpa_json *lo = vpa_json_get(gate, "min"), *hi = vpa_json_get(gate, "max");
	if (vpa_json_get(gate, "max_of")) /* the record's own other metric, as "bound" */
		hi = vpa_json_get(gate, "bound");
	if (!v || v->type != VPA_JSON_NUM || !isfinite(v->num))
		return 0;
	return (lo && lo->type == VPA_JSON_NUM && v->num < lo->num) ||
	       (hi && hi->type == VPA_JSON_NUM && v->num > hi->num);
}

/*
 * The reason why metric `metric` of record r cannot be trusted (the shared
 * contract of reports/README.md): r["unreliable"] has the metric's path or a
 * dotted prefix of it ("zebra" covers "zebra.dece").  NULL when reliable.
 */
static const char *unreliable_reason(const struct vpa_json *r, const char *metric)
{
	const struct vpa_json *u = vpa_json_get(r, "unreliable");
	for (size_t i = 0; u && u->type == VPA_JSON_OBJ && i < u->n; i++) {
		const char *k = u->keys[i];
		size_t n = strlen(k);
		if (strncmp(metric, k, n) || (metric[n] && metric[n] != '.'))
			continue;
		return u->items[i]->type == VPA_JSON_STR ? u->items[i]->str : "(no reason given)";
	}
	return NULL;
}

static struct vpa_loc gate_loc(const struct vpa_json *g)
{
	struct vpa_loc loc = {vpa_json_get_str(g, "file"), (long)vpa_json_get_num(g, "line", 0),
			      (long)vpa_json_get_num(g, "col", 0)};
	return loc;
}

static int in_list(const struct vpa_json *list, const char *s)
{
	for (size_t i = 0; list && list->type == VPA_JSON_ARR && i < list->n; i++)
		if (list->items[i]->type == VPA_JSON_STR && s && !strcmp(list->items[i]->str, s))
			return 1;
	return 0;
}

static void list_text(struct vpa_buf *b, const struct vpa_json *list)
{
	for (size_t i = 0; list && list->type == VPA_JSON_ARR && i < list->n; i++)
		vpa_buf_printf(b, "%s%s", i ? ", " : "",
			       list->items[i]->type == VPA_JSON_STR ? list->items[i]->str : "?");
}

/* The interval metrics: attacks with `ci:` store ci[METRIC] = [lo, hi] for these. */
static const char *const ci_metrics[] = {"eer", "cllr_min", "linkability", NULL};

int vpa_metric_has_interval(const char *metric)
{
	for (const char *const *m = ci_metrics; *m; m++)
		if (!strcmp(*m, metric))
			return 1;
	return 0;
}

/* A gate's record selection, from its JSON form. */
struct selection {
	const char *attack, *sub; /* sub: from "ID.SUB", or NULL */
	size_t idlen;
	const struct vpa_json *subs, *exclude, *layer, *sweep;
};

static int selected(const struct selection *s, const struct vpa_json *r, int level)
{
	const char *ra = vpa_json_get_str(r, "attack");
	if (!ra || strlen(ra) != s->idlen || memcmp(ra, s->attack, s->idlen))
		return 0;
	if (level < 1)
		return 1;
	const char *rs = vpa_json_get_str(r, "sub");
	if (s->sub && (!rs || strcmp(rs, s->sub)))
		return 0;
	if (s->subs && !in_list(s->subs, rs))
		return 0;
	if (s->exclude && in_list(s->exclude, rs))
		return 0;
	if (level < 2)
		return 1;
	if (s->layer && !vpa_json_same(vpa_json_get(r, "layer"), s->layer))
		return 0;
	if (s->sweep && !vpa_json_same(vpa_json_get(r, "sweep"), s->sweep))
		return 0;
	return 1;
}

/*
 * After a value that breaks the bound, one record that fails closed: "; and layer 1
 * fails closed, unreliable: 60 target trials (fewer than 100)", "; and layer 1 (first
 * of 2 unreliable records) fails closed, ..." when several do, or "; and it fails
 * closed too, ..." when it is the record of the breach itself.  verb: " fails closed"
 * or " is undefined and fails closed"; why: ", unreliable: REASON" and the like.
 */
static void fail_closed_clause(struct vpa_buf *msg, const struct vpa_json *r,
			       const struct vpa_json *worst, const struct vpa_buf *where, size_t n,
			       const char *kind, const char *verb, const char *why)
{
	if (r == worst || !where->len) {
		vpa_buf_printf(msg, "; and it%s too%s", verb, why);
		return;
	}
	vpa_buf_printf(msg, "; and %s", where->data);
	if (n > 1)
		vpa_buf_printf(msg, " (first of %zu %s records)", n, kind);
	vpa_buf_printf(msg, "%s%s", verb, why);
}

/*
 * A `max_of` gate (issue 28): metric <= the record's own other metric, e.g.
 * epsilon_lower_bound <= epsilon.  An audited lower bound above the claim
 * proves the claim wrong (a defect in the implementation or the accounting),
 * so that fails, naming both numbers; a bound below the claim, however far,
 * passes: a weak bound is no evidence either way.  A record whose dp_audit
 * says scope "outside" (the guarantee does not cover that attack) is skipped
 * and counted in the message; an undefined value or claim fails closed.
 */
static int eval_max_of(const struct vpa_json *results, const struct vpa_json *records,
		       const struct vpa_json *g, const char *of, struct vpa_json *out,
		       struct vpa_err *err)
{
	struct vpa_loc loc = gate_loc(g);
	const struct vpa_loc *lp = loc.file ? &loc : NULL;
	const char *attack = vpa_json_get_str(g, "attack");
	const char *metric = vpa_json_get_str(g, "metric");
	struct selection sel = {attack, NULL, strcspn(attack, "."), vpa_json_get(g, "subs"),
				vpa_json_get(g, "exclude"), vpa_json_get(g, "layer"),
				vpa_json_get(g, "sweep")};
	if (attack[sel.idlen])
		sel.sub = attack + sel.idlen + 1;
	if (sel.subs && sel.subs->type != VPA_JSON_ARR)
		sel.subs = NULL;
	if (sel.exclude && sel.exclude->type != VPA_JSON_ARR)
		sel.exclude = NULL;
	if (sel.layer && sel.layer->type == VPA_JSON_NULL)
		sel.layer = NULL;
	if (sel.sweep && sel.sweep->type == VPA_JSON_NULL)
		sel.sweep = NULL;
	size_t n_match = 0, n_cmp = 0, n_outside = 0, n_undef = 0;
	const struct vpa_json *worst = NULL, *undef = NULL;
	double wv = NAN, wc = NAN, margin = -INFINITY;
	for (size_t i = 0; records && i < records->n; i++) {
		const struct vpa_json *r = records->items[i];
		if (!selected(&sel, r, 2))
			continue;
		n_match++;
		const struct vpa_json *m = vpa_json_get(r, "metrics");
		const char *scope = vpa_json_get_str(vpa_json_get(m, "dp_audit"), "scope");
		if (scope && !strcmp(scope, "outside")) {
			n_outside++;
			continue;
		}
		int pv, pc;
		const struct vpa_json *v = vpa_metric_at(m, metric, &pv);
		const struct vpa_json *c = vpa_metric_at(m, of, &pc);
		if (!pv)
			continue;
		n_cmp++;
		if (!v || v->type != VPA_JSON_NUM || !isfinite(v->num) || !c ||
		    c->type != VPA_JSON_NUM || !isfinite(c->num)) {
			if (!n_undef++)
				undef = r;
			continue;
		}
		if (v->num - c->num > margin) {
			margin = v->num - c->num;
			worst = r;
			wv = v->num;
			wc = c->num;
		}
	}
	if (!n_match)
		return vpa_fail(err, VPA_EINPUT, lp, "gate names '%s', which has no records in the "
				"results", attack);
	if (!n_cmp && !n_outside)
		return vpa_fail(err, VPA_EINPUT, lp, "unknown metric '%s' for '%s' (not in its records)",
				metric, attack);
	int breach = worst && margin > 0, pass = !breach && !undef;
	struct vpa_buf msg, rd;
	vpa_buf_init(&msg);
	vpa_buf_init(&rd);
	vpa_buf_printf(&msg, "%s %s", attack, metric);
	if (worst) {
		vpa_buf_printf(&msg, " = %.6g %s %s = %.6g", wv, breach ? ">" : "<=", of, wc);
		if (breach)
			vpa_buf_printf(&msg, ": the audit contradicts the claim (the lower bound exceeds "
				       "it by %.3g, which proves a defect in the implementation or "
				       "the accounting)", margin);
		else
			vpa_buf_puts(&msg, ": the audit does not contradict the claim (a lower bound "
				     "below it does not prove it)");
		vpa_record_describe(&rd, worst, !sel.sub);
		if (rd.len && n_cmp > 1)
			vpa_buf_printf(&msg, " (worst of %zu records: %s)", n_cmp, rd.data);
	} else if (!undef) {
		vpa_buf_printf(&msg, ": all %zu selected record%s outside the guarantee's scope: "
			       "nothing to compare with %s", n_outside, n_outside == 1 ? " is" : "s are",
			       of);
	}
	if (undef) {
		rd.len = 0;
		vpa_record_describe(&rd, undef, !sel.sub);
		vpa_buf_printf(&msg, "%s%s or %s is undefined and fails closed%s%s%s",
			       worst ? "; and " : "", worst ? metric : "", of, rd.len ? " (" : "",
			       rd.len ? rd.data : "", rd.len ? ")" : "");
	}
	if (n_outside && (worst || undef))
		vpa_buf_printf(&msg, "; %zu record%s outside the guarantee's scope not compared",
			       n_outside, n_outside == 1 ? "" : "s");
	struct vpa_json *o = vpa_json_obj();
	vpa_json_set_str(o, "attack", attack);
	vpa_json_set_str(o, "metric", metric);
	vpa_json_set_str(o, "max_of", of);
	vpa_json_set(o, "min", vpa_json_null());
	vpa_json_set(o, "max", vpa_json_null()); /* evaluated again from results.json */
	vpa_json_set(o, "bound", vpa_json_num(wc)); /* the compared claim (NAN -> null) */
	vpa_json_set(o, "layer", sel.layer ? vpa_json_clone(sel.layer) : vpa_json_null());
	if (sel.sweep)
		vpa_json_set(o, "sweep", vpa_json_clone(sel.sweep));
	if (sel.subs)
		vpa_json_set(o, "subs", vpa_json_clone(sel.subs));
	if (sel.exclude)
		vpa_json_set(o, "exclude", vpa_json_clone(sel.exclude));
	vpa_json_set(o, "value", vpa_json_num(wv));
	vpa_json_set(o, "pass", vpa_json_bool(pass));
	if (n_outside)
		vpa_json_set_num(o, "outside_scope", (double)n_outside);
	if (!pass && undef)
		vpa_json_set_str(o, "unreliable", "undefined value");
	vpa_json_set(o, "simulated", vpa_json_bool(vpa_results_simulated(results, attack)));
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
	vpa_buf_release(&rd);
	return pass ? 0 : 1;
}

static int eval_one(const struct vpa_json *results, const struct vpa_json *records,
		    const struct vpa_json *g, struct vpa_json *out, struct vpa_err *err)
{
	struct vpa_loc loc = gate_loc(g);
	const struct vpa_loc *lp = loc.file ? &loc : NULL;
	const char *attack = vpa_json_get_str(g, "attack");
	const char *metric = vpa_json_get_str(g, "metric");
	const char *on = vpa_json_get_str(g, "on");
	const struct vpa_json *lo = vpa_json_get(g, "min"), *hi = vpa_json_get(g, "max");
	const struct vpa_json *au = vpa_json_get(g, "allow_unreliable");
	int allow = au && au->type == VPA_JSON_BOOL && au->boolean;
	const struct vpa_json *aa = vpa_json_get(g, "allow_anti_correlated");
	int allow_anti = aa && aa->type == VPA_JSON_BOOL && aa->boolean;
	int has_lo = lo && lo->type == VPA_JSON_NUM, has_hi = hi && hi->type == VPA_JSON_NUM;
	if (!attack || !metric)
		return vpa_fail(err, VPA_EINPUT, lp, "a gate needs 'attack' and 'metric'");
	const char *of = vpa_json_get_str(g, "max_of");
	if (of && (has_lo || has_hi))
		return vpa_fail(err, VPA_EINPUT, lp, "gate on '%s' %s: 'max_of' with 'min' or 'max' "
				"(expected one of them)", attack, metric);
	if (of)
		return eval_max_of(results, records, g, of, out, err);
	if (!has_lo && !has_hi)
		return vpa_fail(err, VPA_EINPUT, lp, "gate on '%s' %s needs 'min', 'max' or 'max_of'",
				attack, metric);
	int side = -1; /* -1: the value, 0: the interval's lower end, 1: its upper end */
	if (on && !strcmp(on, "ci_low"))
		side = 0;
	else if (on && !strcmp(on, "ci_high"))
		side = 1;
	else if (on && strcmp(on, "value"))
		return vpa_fail(err, VPA_EINPUT, lp, "'on' must be value, ci_low or ci_high, got '%s'",
				on);
	struct selection sel = {attack, NULL, strcspn(attack, "."), vpa_json_get(g, "subs"),
				vpa_json_get(g, "exclude"), vpa_json_get(g, "layer"),
				vpa_json_get(g, "sweep")};
	if (attack[sel.idlen])
		sel.sub = attack + sel.idlen + 1;
	if (sel.subs && sel.subs->type != VPA_JSON_ARR)
		sel.subs = NULL;
	if (sel.exclude && sel.exclude->type != VPA_JSON_ARR)
		sel.exclude = NULL;
	if (sel.layer && sel.layer->type == VPA_JSON_NULL)
		sel.layer = NULL;
	if (sel.sweep && sel.sweep->type == VPA_JSON_NULL)
		sel.sweep = NULL;

	size_t n_attack = 0, n_sub = 0, n_match = 0, n_present = 0, n_unrel = 0, n_undef = 0;
	size_t n_anti = 0;
	const struct vpa_json *worst_lo = NULL, *worst_hi = NULL, *undef = NULL, *unrel = NULL;
	const struct vpa_json *anti = NULL;
	const char *unrel_why = NULL;
	double v_lo = INFINITY, v_hi = -INFINITY, unrel_v = NAN, anti_v = NAN;
	int reads_dir = !allow_anti && vpa_metric_reads_direction(metric);
	for (size_t i = 0; records && i < records->n; i++) {
		const struct vpa_json *r = records->items[i];
		if (!selected(&sel, r, 0))
			continue;
		n_attack++;
		if (!selected(&sel, r, 1))
			continue;
		n_sub++;
		if (!selected(&sel, r, 2))
			continue;
		n_match++;
		int present;
		const struct vpa_json *v;
		if (side < 0) {
			v = vpa_metric_at(vpa_json_get(r, "metrics"), metric, &present);
		} else {
			const struct vpa_json *ci = vpa_json_get(vpa_json_get(r, "ci"), metric);
			present = ci != NULL;
			v = ci && ci->type == VPA_JSON_ARR && ci->n == 2 ? ci->items[side] : NULL;
		}
		if (!present)
			continue;
		n_present++;
		const char *why = allow ? NULL : unreliable_reason(r, metric);
		if (!v || v->type != VPA_JSON_NUM || !isfinite(v->num)) {
			if (!n_undef++)
				undef = r;
			continue;
		}
		if (reads_dir && vpa_rec_anti_correlated(r, 0, NULL) && !n_anti++) {
			anti = r;
			anti_v = v->num;
		}
		if (why) {
			if (!n_unrel++) {
				unrel = r;
				unrel_why = why;
				unrel_v = v->num;
			}
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
	struct vpa_buf d;
	vpa_buf_init(&d);
	int rc = 0;
	if (!n_attack)
		rc = vpa_fail(err, VPA_EINPUT, lp,
			      "gate names attack '%.*s', which has no records in the results",
			      (int)sel.idlen, attack);
	else if (!n_sub && sel.sub)
		rc = vpa_fail(err, VPA_EINPUT, lp,
			      "gate names '%s', but attack '%.*s' has no sub '%s' in the results", attack,
			      (int)sel.idlen, attack, sel.sub);
	else if (!n_sub) {
		if (sel.subs) {
			vpa_buf_puts(&d, "subs [");
			list_text(&d, sel.subs);
			vpa_buf_puts(&d, "]");
		}
		if (sel.exclude) {
			vpa_buf_printf(&d, "%sexclude [", sel.subs ? " and " : "");
			list_text(&d, sel.exclude);
			vpa_buf_puts(&d, "]");
		}
		rc = vpa_fail(err, VPA_EINPUT, lp,
			      "gate on '%s' selects no record: %s leaves none of its subs in the results",
			      attack, vpa_buf_str(&d));
	} else if (!n_match) {
		if (sel.layer && sel.layer->type == VPA_JSON_NUM)
			vpa_buf_printf(&d, "layer %g", sel.layer->num);
		else if (sel.layer)
			vpa_buf_puts(&d, "a layer");
		if (sel.sweep && sel.sweep->type == VPA_JSON_NUM)
			vpa_buf_printf(&d, "%ssweep value %g", sel.layer ? " and " : "", sel.sweep->num);
		else if (sel.sweep && sel.sweep->type == VPA_JSON_STR)
			vpa_buf_printf(&d, "%ssweep value %s", sel.layer ? " and " : "", sel.sweep->str);
		rc = vpa_fail(err, VPA_EINPUT, lp,
			      "gate names %s of '%s', which has no records in the results",
			      vpa_buf_str(&d), attack);
	} else if (!n_present && side >= 0)
		rc = vpa_fail(err, VPA_EINPUT, lp,
			      "gate on %s of '%s' %s, but its records have no interval for '%s' "
			      "(the attack's `ci:` key computes them)",
			      on, attack, metric, metric);
	else if (!n_present)
		rc = vpa_fail(err, VPA_EINPUT, lp, "unknown metric '%s' for '%s' (not in its records)",
			      metric, attack);
	vpa_buf_release(&d);
	if (rc)
		return rc;

	/*
	 * decide: a value that breaks the bound is named first (the worst one, with its
	 * record), then every reason to fail closed: undefined, anti-correlated, unreliable.
	 * Without a breach the first such reason is the message, as it was.
	 */
	int lo_ok = !has_lo || !(v_lo < lo->num); /* no finite value: nothing breaks */
	int hi_ok = !has_hi || !(v_hi > hi->num);
	int breach = !lo_ok || !hi_ok, closed = undef || anti || unrel;
	int pass = !breach && !closed;
	double value = NAN;
	const struct vpa_json *worst = NULL;
	struct vpa_buf msg, anti_why, rec_d, undef_d, anti_d, unrel_d;
	vpa_buf_init(&msg);
	vpa_buf_init(&anti_why);
	vpa_buf_init(&rec_d);
	vpa_buf_init(&undef_d);
	vpa_buf_init(&anti_d);
	vpa_buf_init(&unrel_d);
	if (anti)
		vpa_rec_anti_correlated(anti, 1, &anti_why);
	if (undef)
		vpa_record_describe(&undef_d, undef, !sel.sub);
	if (anti)
		vpa_record_describe(&anti_d, anti, !sel.sub);
	if (unrel)
		vpa_record_describe(&unrel_d, unrel, !sel.sub);
	vpa_buf_printf(&msg, "%s %s%s%s", attack, metric, side < 0 ? "" : " ", side < 0 ? "" : on);
	if (breach || !closed) {
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
	} else if (undef) {
		worst = undef;
		vpa_buf_puts(&msg, " is undefined and fails closed, unreliable: undefined value");
	} else if (anti) {
		worst = anti;
		value = anti_v;
		vpa_buf_printf(&msg, " = %.6g fails closed, anti-correlated: %s", anti_v,
			       vpa_buf_str(&anti_why));
	} else {
		worst = unrel;
		value = unrel_v;
		vpa_buf_printf(&msg, " = %.6g fails closed, unreliable: %s", unrel_v, unrel_why);
	}
	if (worst)
		vpa_record_describe(&rec_d, worst, !sel.sub);
	if (rec_d.len && n_match > 1)
		vpa_buf_printf(&msg, " (%s of %zu records: %s)", !breach && closed ? "first" : "worst",
			       n_match, rec_d.data);
	else if (rec_d.len && closed)
		vpa_buf_printf(&msg, " (%s)", rec_d.data);
	if (breach) {
		/* each reason to fail closed after the breach: "; and layer 1 fails closed, ..." */
		if (undef)
			fail_closed_clause(&msg, undef, worst, &undef_d, n_undef, "undefined",
					   " is undefined and fails closed", ", unreliable: undefined value");
		if (anti) {
			vpa_buf_init(&d);
			vpa_buf_printf(&d, ", anti-correlated: %s", vpa_buf_str(&anti_why));
			fail_closed_clause(&msg, anti, worst, &anti_d, n_anti, "anti-correlated",
					   " fails closed", d.data);
			vpa_buf_release(&d);
		}
		if (unrel) {
			vpa_buf_init(&d);
			vpa_buf_printf(&d, ", unreliable: %s", unrel_why);
			fail_closed_clause(&msg, unrel, worst, &unrel_d, n_unrel, "unreliable",
					   " fails closed", d.data);
			vpa_buf_release(&d);
		}
	}

	struct vpa_json *o = vpa_json_obj();
	vpa_json_set_str(o, "attack", attack);
	vpa_json_set_str(o, "metric", metric);
	vpa_json_set(o, "min", has_lo ? vpa_json_num(lo->num) : vpa_json_null());
	vpa_json_set(o, "max", has_hi ? vpa_json_num(hi->num) : vpa_json_null());
	vpa_json_set(o, "layer", sel.layer ? vpa_json_clone(sel.layer) : vpa_json_null());
	if (sel.sweep)
		vpa_json_set(o, "sweep", vpa_json_clone(sel.sweep));
	if (sel.subs)
		vpa_json_set(o, "subs", vpa_json_clone(sel.subs));
	if (sel.exclude)
		vpa_json_set(o, "exclude", vpa_json_clone(sel.exclude));
	if (side >= 0)
		vpa_json_set_str(o, "on", on);
	if (allow)
		vpa_json_set(o, "allow_unreliable", vpa_json_bool(1));
	if (allow_anti)
		vpa_json_set(o, "allow_anti_correlated", vpa_json_bool(1));
	vpa_json_set(o, "value", vpa_json_num(value)); /* NAN -> null */
	vpa_json_set(o, "pass", vpa_json_bool(pass));
	/* what failed closed, and where (the record names when the gate selects several) */
	int say_unrel = breach ? undef || unrel : undef || (unrel && !anti);
	int say_anti = breach ? anti != NULL : !undef && anti;
	const struct vpa_buf *unrel_where = undef ? &undef_d : &unrel_d;
	if (!pass && rec_d.len && n_match > 1 && worst)
		vpa_json_set_str(o, "record", rec_d.data);
	if (!pass && say_unrel)
		vpa_json_set_str(o, "unreliable", undef ? "undefined value" : unrel_why);
	if (!pass && say_unrel && unrel_where->len && n_match > 1)
		vpa_json_set_str(o, "unreliable_record", unrel_where->data);
	if (!pass && say_anti)
		vpa_json_set_str(o, "anti_correlated", vpa_buf_str(&anti_why));
	if (!pass && say_anti && anti_d.len && n_match > 1)
		vpa_json_set_str(o, "anti_correlated_record", anti_d.data);
	vpa_json_set(o, "simulated", vpa_json_bool(vpa_results_simulated(results, attack)));
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
	vpa_buf_release(&unrel_d);
	vpa_buf_release(&anti_d);
	vpa_buf_release(&undef_d);
	vpa_buf_release(&rec_d);
	vpa_buf_release(&anti_why);
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
		int rc = eval_one(results, records, gates->items[i], out, err);
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
