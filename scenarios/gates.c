/*
 * scenarios/gates.c - the `gates:` and `tolerances:` of a scenario: their
 * schemas, the checks of each gate against the attacks (ids, subs, metrics,
 * layers, sweep values, intervals), and both as the JSON the gate evaluator
 * and the baseline comparison take.
 */
#include "scenarios/scenario_int.h"
#include "targets/targets.h"
#include "attacks/attacks.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A gate's keys (typed options, filled from each item of `gates:`). */
struct gate_opts {
	const char *attack, *metric, *sweep, *on, *max_of;
	double min, max;
	long long layer;
	struct vpa_strs subs, exclude;
	int allow_unreliable, allow_anti_correlated;
	struct vpa_mark min_at, max_at, layer_at, sweep_at;
};

static const struct vpa_key gate_keys[] = {
	{"attack", VPA_K_STR, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "eval.ignorant",
	 "`ID` (all subs of the attack, worst case) or `ID.SUB` (one attacker/condition)",
	 VPA_AT(struct gate_opts, attack)},
	{"metric", VPA_K_STR, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "eer",
	 "a metric of the attack's records (`eer`, `linkability`, `zebra.dece`, ...)",
	 VPA_AT(struct gate_opts, metric)},
	{"min", VPA_K_NUM, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "0.3",
	 "the gate holds when the value is >= min",
	 VPA_AT(struct gate_opts, min), VPA_MARK(struct gate_opts, min_at)},
	{"max", VPA_K_NUM, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "0.1",
	 "the gate holds when the value is <= max",
	 VPA_AT(struct gate_opts, max), VPA_MARK(struct gate_opts, max_at)},
	{"max_of", VPA_K_STR, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "epsilon",
	 "instead of min/max: the gate holds when the value is <= this other metric of the same "
	 "record (`metric: epsilon_lower_bound, max_of: epsilon`: an audit that contradicts the "
	 "claimed epsilon fails it; a weak bound never does; records outside the guarantee's "
	 "scope are skipped and named)",
	 VPA_AT(struct gate_opts, max_of)},
	{"layer", VPA_K_INT, 0, NULL, 0, INFINITY, 0, NULL, NULL, "3",
	 "per-layer attacks only: this layer (default: the worst layer)",
	 VPA_AT(struct gate_opts, layer), VPA_MARK(struct gate_opts, layer_at)},
	{"sweep", VPA_K_STR, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "0.5",
	 "with a `sweep:` only: the records of this sweep value (one of the sweep's `values`; "
	 "default: the worst value)",
	 VPA_AT(struct gate_opts, sweep), VPA_MARK(struct gate_opts, sweep_at)},
	{"subs", VPA_K_LIST, 0, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[ignorant, lazy_informed]",
	 "only these subs of the attack (with `attack: ID`); each must be one of its subs",
	 VPA_AT(struct gate_opts, subs)},
	{"exclude", VPA_K_LIST, 0, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[baseline]",
	 "every sub of the attack but these (e.g. the unprotected baseline attacker, which must "
	 "not fail an anonymiser's gate); a selection that leaves no sub is an error",
	 VPA_AT(struct gate_opts, exclude)},
	{"on", VPA_K_ENUM, 0, "value", -INFINITY, INFINITY, 0, "value|ci_low|ci_high", NULL,
	 "ci_low",
	 "bound the point estimate (`value`) or a limit of its bootstrap interval (`ci_low`, "
	 "`ci_high`): only for `eer`, `cllr_min` and `linkability` of an attack with `ci:` set",
	 VPA_AT(struct gate_opts, on)},
	{"allow_unreliable", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "accept a value its record marks unreliable (e.g. too few trials); by default such a "
	 "gate fails closed with the reason. An undefined value fails in any case",
	 VPA_AT(struct gate_opts, allow_unreliable)},
	{"allow_anti_correlated", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "accept eer, eer_sweep, cllr, cllr_min, min_dcf or zebra of a record whose scores are "
	 "anti-correlated with identity (its threshold-sweep EER lies above 50% with its 95% "
	 "interval): such scores read as chance there while an attacker who reverses them "
	 "links identities (eer_flipped), so by default the gate fails closed with that finding",
	 VPA_AT(struct gate_opts, allow_anti_correlated)},
	{NULL},
};
const struct vpa_schema vpa_scn_gate_schema = {"gate", gate_keys, sizeof(struct gate_opts)};

/* The metrics the baseline comparison checks (reports/baseline.c, same order: test_gate), with
 * an example in the metric's unit and the default of its unit (reports/README.md, "Tolerances
 * by unit"). */
#define TOL(name, ex, unit) {name, VPA_K_NUM, 0, NULL, 0, INFINITY, 0, NULL, NULL, ex, \
			     "tolerance of `" name "`: " unit}
#define FRAC "a fraction (default: `tolerance`, else 0.01)"
#define BITS "bits (default: 2 x `tolerance`, else 0.02)"
#define EXPO "bits (default: 10 x `tolerance`, else 0.1)"
static const struct vpa_key tolerances_keys[] = {
	TOL("eer", "0.02", FRAC), TOL("eer_sweep", "0.02", FRAC), TOL("cllr", "0.05", BITS),
	TOL("cllr_min", "0.05", BITS), TOL("min_dcf", "0.02", FRAC), TOL("linkability", "0.02", FRAC),
	TOL("zebra.dece", "0.05", BITS),
	TOL("zebra.log10_lr_worst", "0.2", "log10 LR (default: 10 x `tolerance`, else 0.1)"),
	TOL("top1", "0.02", FRAC), TOL("top5", "0.02", FRAC), TOL("top10", "0.02", FRAC),
	TOL("mean_rank", "2", "places of the ranking (default: 100 x `tolerance`, else 1)"),
	TOL("mean_norm_rank", "0.01", FRAC), TOL("exposure", "0.5", EXPO),
	TOL("exposure_extrapolated", "0.5", EXPO), TOL("d_exposure", "0.5", EXPO),
	TOL("epsilon", "0.1", "epsilon (default: `tolerance`, else 0.01)"),
	TOL("snr", "0.05", "the ratio ||update|| / ||noise|| (default: `tolerance`, else 0.01)"),
	TOL("accuracy", "0.02", FRAC),
	{NULL},
};
#undef FRAC
#undef BITS
#undef EXPO
#undef TOL
const struct vpa_schema vpa_scn_tolerances_schema = {"tolerances", tolerances_keys};

const char *vpa_scenario_tolerance_key(size_t i)
{
	return i < sizeof(tolerances_keys) / sizeof(*tolerances_keys) - 1 ? tolerances_keys[i].name
									   : NULL;
}

/*
 * A gate's record selection beyond ID[.SUB]: subs/exclude (each a sub of the
 * attack, and something left), sweep (one of the sweep's values), on (an
 * interval the attack computes).  b is scratch for suggestions.
 */
static int check_gate_selection(const struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
				const struct vpa_ynode *g, const struct vpa_scn_attack *a,
				const char *sub, struct vpa_buf *b, struct vpa_err *err)
{
	const struct vpa_ynode *subs = vpa_ymap_get(g, "subs"), *ex = vpa_ymap_get(g, "exclude");
	const struct vpa_ynode *sw = vpa_ymap_get(g, "sweep"), *on = vpa_ymap_get(g, "on");
	const char *mn = vpa_ymap_get(g, "metric")->str;
	struct vpa_loc loc;
	int rc = 0;
	if ((subs || ex) && sub) {
		loc = vpa_node_loc(ctx->file, subs ? subs : ex);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"'%s' selects subs of the attack, but 'attack' already names one "
				"('%s.%s'): write 'attack: %s'",
				subs ? "subs" : "exclude", a->id, sub, a->id);
	}
	const char **names = NULL;
	size_t n = (subs || ex) && a->kind->subs
			   ? vpa_scn_attack_subs(s, a, &names)
			   : 0;
	size_t left = n;
	for (int w = 0; w < 2 && !rc; w++) {
		const struct vpa_ynode *list = w ? ex : subs;
		for (size_t i = 0; list && i < list->n && !rc; i++) {
			const struct vpa_ynode *it = list->items[i];
			size_t j = 0;
			while (j < n && strcmp(names[j], it->str))
				j++;
			loc = vpa_node_loc(ctx->file, it);
			if (j == n) {
				b->len = 0;
				if (n)
					vpa_scn_suggest(b, it->str, names, n, "its subs");
				rc = vpa_fail(err, VPA_EINPUT, &loc, "attack '%s' has no sub '%s'%s", a->id,
					      it->str, n ? vpa_buf_str(b) : " (its records have no subs)");
			}
		}
	}
	if (!rc && (subs || ex)) {
		/* how many subs the selection keeps */
		left = 0;
		for (size_t j = 0; j < n; j++) {
			int in = !subs, out = 0;
			for (size_t i = 0; subs && i < subs->n; i++)
				in |= !strcmp(subs->items[i]->str, names[j]);
			for (size_t i = 0; ex && i < ex->n; i++)
				out |= !strcmp(ex->items[i]->str, names[j]);
			left += in && !out;
		}
		if (!left) {
			loc = vpa_node_loc(ctx->file, ex ? ex : subs);
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "gate on '%s' selects no record: its subs and exclude leave no sub",
				      a->id);
		}
	}
	free(names);
	if (rc)
		return rc;
	if (sw) {
		loc = vpa_node_loc(ctx->file, sw);
		if (!s->has_sweep)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"'sweep' given but the scenario has no sweep");
		char *end;
		double x = strtod(sw->str, &end);
		int numeric = end != sw->str && !*end, found = 0;
		for (size_t i = 0; i < s->sweep_values->n && !found; i++) {
			const char *v = s->sweep_values->items[i]->str;
			found = s->sweep_numeric ? numeric && strtod(v, NULL) == x : !strcmp(v, sw->str);
		}
		if (!found)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"'sweep' is '%s', which is not one of the sweep's values", sw->str);
	}
	if (on && strcmp(on->str, "value")) {
		loc = vpa_node_loc(ctx->file, on);
		const struct vpa_schema *sch[1] = {a->kind->schema};
		const struct vpa_key *ck = vpa_schema_find(sch, 1, "ci");
		static const char *const with_ci[] = {"eer", "cllr_min", "linkability"};
		int metric_ok = 0;
		for (size_t i = 0; i < 3; i++)
			metric_ok |= !strcmp(mn, with_ci[i]);
		if (!ck)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"'on: %s' needs a confidence interval, but attack '%s' of kind "
					"'%s' computes none",
					on->str, a->id, a->kind->name);
		if (!metric_ok)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"'on: %s' needs a confidence interval, but '%s' has none (intervals: "
					"eer, cllr_min, linkability)",
					on->str, mn);
		const double *ci = vpa_opts_field(a->kind->schema, a->opts, "ci");
		if (!(ci && *ci > 0))
			return vpa_fail(err, VPA_EINPUT, &loc,
					"'on: %s' needs a confidence interval: set 'ci' (e.g. 'ci: 0.95') "
					"in attack '%s'",
					on->str, a->id);
	}
	return 0;
}

/*
 * A gate on a metric the attack can never record, as far as validation knows
 * (the kind's never_records hook, e.g. epsilon_lower_bound without audit
 * canaries, issue 28), is refused at its metric: it could only fail closed.
 */
static int check_recordable(const struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
			    const struct vpa_ynode *g, const char *metric,
			    const struct vpa_scn_attack *a, struct vpa_err *err)
{
	if (!a->kind->never_records)
		return 0;
	const struct vpa_scn_target *t = &s->targets[a->target];
	char buf[256];
	const char *why = a->kind->never_records(metric, a->opts, t->id, t->opts, buf, sizeof(buf));
	if (!why)
		return 0;
	struct vpa_loc loc = vpa_node_loc(ctx->file, vpa_ymap_get(g, "metric"));
	return vpa_fail(err, VPA_EINPUT, &loc, "attack '%s' never records %s: %s", a->id, metric,
			why);
}

/*
 * A `max_of` gate: the other metric is one of the attack's, differs from
 * `metric`, and the attack can record both (check_recordable).
 */
static int check_max_of(const struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
			const struct vpa_ynode *g, const struct vpa_ynode *mo,
			const struct vpa_scn_attack *a, struct vpa_buf *b, struct vpa_err *err)
{
	const char *mn = vpa_ymap_get(g, "metric")->str;
	struct vpa_loc loc = vpa_node_loc(ctx->file, mo);
	const char *names[128];
	size_t n = 0;
	int found = 0;
	for (const char *const *m = a->kind->metrics; *m && n < 128; m++) {
		names[n++] = *m;
		found |= !strcmp(*m, mo->str);
	}
	if (!found) {
		b->len = 0;
		vpa_scn_suggest(b, mo->str, names, n, "its metrics");
		return vpa_fail(err, VPA_EINPUT, &loc, "unknown metric '%s' for attack '%s' of kind "
				"'%s'%s", mo->str, a->id, a->kind->name, vpa_buf_str(b));
	}
	if (!strcmp(mo->str, mn))
		return vpa_fail(err, VPA_EINPUT, &loc, "'max_of' names the gate's own metric '%s': "
				"expected another metric of the same record (e.g. 'metric: "
				"epsilon_lower_bound, max_of: epsilon')", mn);
	int rc = check_recordable(s, ctx, g, mn, a, err);
	return rc ? rc : check_recordable(s, ctx, g, mo->str, a, err);
	return 0;
}

int vpa_scn_check_gates(struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
		       struct vpa_err *err)
{
	const struct vpa_ynode *list = s->gates;
	if (!list)
		return 0;
	for (size_t i = 0; i < list->n; i++) {
		const struct vpa_ynode *g = list->items[i];
		const struct vpa_ynode *an = vpa_ymap_get(g, "attack");
		const struct vpa_ynode *mn = vpa_ymap_get(g, "metric");
		const struct vpa_ynode *lo = vpa_ymap_get(g, "min");
		const struct vpa_ynode *hi = vpa_ymap_get(g, "max");
		const struct vpa_ynode *ln = vpa_ymap_get(g, "layer");
		struct vpa_loc loc = vpa_node_loc(ctx->file, an);
		struct vpa_buf b;
		int rc = 0;
		vpa_buf_init(&b);
		/* ID[.SUB]: attack ids have no dots, so the first dot splits */
		const char *dot = strchr(an->str, '.');
		char *aid = dot ? xstrndup(an->str, (size_t)(dot - an->str)) : xstrdup(an->str);
		const char *sub = dot ? dot + 1 : NULL;
		size_t ai = vpa_scn_find_attack(s, aid, s->n_attacks);
		if (ai == (size_t)-1) {
			const char *names[256];
			size_t n = 0;
			for (size_t j = 0; j < s->n_attacks && n < 256; j++)
				names[n++] = s->attacks[j].id;
			vpa_scn_suggest(&b, aid, names, n, "attacks");
			rc = vpa_fail(err, VPA_EINPUT, &loc, "gate names attack '%s', which does not exist%s",
				      aid, vpa_buf_str(&b));
			goto next;
		}
		const struct vpa_scn_attack *a = &s->attacks[ai];
		if (sub) {
			const char **names = NULL;
			size_t n = a->kind->subs ? vpa_scn_attack_subs(s, a, &names)
						 : 0;
			int found = 0;
			for (size_t j = 0; j < n; j++)
				found |= !strcmp(names[j], sub);
			if (!found) {
				if (n)
					vpa_scn_suggest(&b, sub, names, n, "its subs");
				rc = vpa_fail(err, VPA_EINPUT, &loc, "attack '%s' has no sub '%s'%s", aid,
					      sub, n ? vpa_buf_str(&b) : " (its records have no subs)");
			}
			free(names);
			if (rc)
				goto next;
		}
		{
			const char *names[128];
			size_t n = 0;
			int found = 0;
			for (const char *const *m = a->kind->metrics; *m && n < 128; m++) {
				names[n++] = *m;
				found |= !strcmp(*m, mn->str);
			}
			if (!found) {
				loc = vpa_node_loc(ctx->file, mn);
				vpa_scn_suggest(&b, mn->str, names, n, "its metrics");
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "unknown metric '%s' for attack '%s' of kind '%s'%s", mn->str,
					      aid, a->kind->name, vpa_buf_str(&b));
				goto next;
			}
		}
		if ((rc = check_gate_selection(s, ctx, g, a, sub, &b, err)))
			goto next;
		if (ln && !a->kind->has_layers) {
			loc = vpa_node_loc(ctx->file, ln);
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "'layer' given but attack '%s' of kind '%s' has no layers", aid,
				      a->kind->name);
			goto next;
		}
		const struct vpa_ynode *mo = vpa_ymap_get(g, "max_of");
		if (mo && (lo || hi)) {
			loc = vpa_node_loc(ctx->file, lo ? lo : hi);
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' given with 'max_of': a gate bounds "
				      "by a number (min/max) or by another metric (max_of), not both",
				      lo ? "min" : "max");
			goto next;
		}
		if (mo && (rc = check_max_of(s, ctx, g, mo, a, &b, err)))
			goto next;
		if (!mo && (rc = check_recordable(s, ctx, g, mn->str, a, err)))
			goto next;
		if (!lo && !hi && !mo) {
			loc = vpa_node_loc(ctx->file, g);
			rc = vpa_fail(err, VPA_EINPUT, &loc, "gate needs 'min', 'max' or 'max_of'");
			goto next;
		}
		if (lo && hi && strtod(lo->str, NULL) > strtod(hi->str, NULL)) {
			loc = vpa_node_loc(ctx->file, hi);
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'max' (%s) is below 'min' (%s)", hi->str,
				      lo->str);
			goto next;
		}
next:
		free(aid);
		vpa_buf_release(&b);
		if (rc)
			return rc;
	}
	return 0;
}

/* Set a dotted key path in a cloned item. */
struct vpa_json *vpa_scenario_gates(const struct vpa_scenario *s)
{
	struct vpa_json *a = vpa_json_arr();
	for (size_t i = 0; s->gates && i < s->gates->n; i++) {
		const struct vpa_ynode *g = s->gates->items[i];
		struct gate_opts *go = vpa_opts_new(&vpa_scn_gate_schema, g);
		struct vpa_json *o = vpa_json_obj();
		vpa_json_set_str(o, "attack", go->attack);
		vpa_json_set_str(o, "metric", go->metric);
		vpa_json_set(o, "min", go->min_at.line ? vpa_json_num(go->min) : vpa_json_null());
		vpa_json_set(o, "max", go->max_at.line ? vpa_json_num(go->max) : vpa_json_null());
		vpa_json_set(o, "layer",
			     go->layer_at.line ? vpa_json_num((double)go->layer) : vpa_json_null());
		if (go->max_of)
			vpa_json_set_str(o, "max_of", go->max_of);
		if (go->sweep)
			vpa_json_set(o, "sweep", s->sweep_numeric ? vpa_json_num(strtod(go->sweep, NULL))
								  : vpa_json_str(go->sweep));
		const struct vpa_strs *lists[] = {&go->subs, &go->exclude};
		static const char *const names[] = {"subs", "exclude"};
		for (size_t k = 0; k < 2; k++) {
			if (!lists[k]->given)
				continue;
			struct vpa_json *arr = vpa_json_arr();
			for (size_t j = 0; j < lists[k]->n; j++)
				vpa_json_push(arr, vpa_json_str(lists[k]->v[j]));
			vpa_json_set(o, names[k], arr);
		}
		if (strcmp(go->on, "value"))
			vpa_json_set_str(o, "on", go->on);
		if (go->allow_unreliable)
			vpa_json_set(o, "allow_unreliable", vpa_json_bool(1));
		if (go->allow_anti_correlated)
			vpa_json_set(o, "allow_anti_correlated", vpa_json_bool(1));
		vpa_opts_free(&vpa_scn_gate_schema, go);
		vpa_json_set_str(o, "file", s->file);
		vpa_json_set_num(o, "line", (double)g->line);
		vpa_json_set_num(o, "col", (double)g->col);
		vpa_json_push(a, o);
	}
	return a;
}

struct vpa_json *vpa_scenario_tolerances(const struct vpa_scenario *s)
{
	const struct vpa_ynode *t = vpa_ymap_get(s->root, "tolerances");
	if (!t)
		return NULL;
	struct vpa_json *o = vpa_json_obj();
	const struct vpa_schema *ts[1] = {&vpa_scn_tolerances_schema};
	/* its keys are metric names ("zebra.dece"), not fields: each value typed by its key */
	for (size_t i = 0; i < t->n; i++)
		vpa_json_set(o, t->keys[i]->str,
			     vpa_scalar_json(t->items[i], vpa_schema_find(ts, 1, t->keys[i]->str)));
	return o;
}
