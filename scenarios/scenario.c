/*
 * scenarios/scenario.c - the scenario: top-level schema (data), complete
 * validation before any work (kinds, ids, links, gates, sweep), the JSON
 * echo, the gates list, the error context printer and the reference.
 */
#include "scenarios/scenario.h"
#include "targets/targets.h"
#include "attacks/attacks.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* ---- the top-level schemas (data) ---------------------------------------- */

static const struct vpa_key sweep_keys[] = {
	{"param", VPA_K_STR, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL,
	 "attacks.eval.omega",
	 "the swept key: `targets.ID.key` or `attacks.ID.key` (a dotted path into nested "
	 "mappings); a number, choice (enum), flag or name key of that kind: numbers are "
	 "plotted on a numeric axis, the others as categories"},
	{"values", VPA_K_LIST, 1, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[0.5, 1, 2]", "the values, each checked like the key itself; the scenario runs once per value"},
	{NULL},
};
static const struct vpa_schema sweep_schema = {"sweep", sweep_keys};

static const struct vpa_key gate_keys[] = {
	{"attack", VPA_K_STR, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "eval.ignorant",
	 "`ID` (all subs of the attack, worst case) or `ID.SUB` (one attacker/condition)"},
	{"metric", VPA_K_STR, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "eer",
	 "a metric of the attack's records (`eer`, `linkability`, `zebra.dece`, ...)"},
	{"min", VPA_K_NUM, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "0.3",
	 "the gate holds when the value is >= min"},
	{"max", VPA_K_NUM, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "0.1",
	 "the gate holds when the value is <= max"},
	{"layer", VPA_K_INT, 0, NULL, 0, INFINITY, 0, NULL, NULL, "3",
	 "per-layer attacks only: this layer (default: the worst layer)"},
	{"sweep", VPA_K_STR, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "0.5",
	 "with a `sweep:` only: the records of this sweep value (one of the sweep's `values`; "
	 "default: the worst value)"},
	{"subs", VPA_K_LIST, 0, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[ignorant, lazy_informed]",
	 "only these subs of the attack (with `attack: ID`); each must be one of its subs"},
	{"exclude", VPA_K_LIST, 0, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[baseline]",
	 "every sub of the attack but these (e.g. the unprotected baseline attacker, which must "
	 "not fail an anonymiser's gate); a selection that leaves no sub is an error"},
	{"on", VPA_K_ENUM, 0, "value", -INFINITY, INFINITY, 0, "value|ci_low|ci_high", NULL,
	 "ci_low",
	 "bound the point estimate (`value`) or a limit of its bootstrap interval (`ci_low`, "
	 "`ci_high`): only for `eer`, `cllr_min` and `linkability` of an attack with `ci:` set"},
	{"allow_unreliable", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "accept a value its record marks unreliable (e.g. too few trials); by default such a "
	 "gate fails closed with the reason. An undefined value fails in any case"},
	{"allow_anti_correlated", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "accept eer, eer_sweep, cllr, cllr_min, min_dcf or zebra of a record whose scores are "
	 "anti-correlated with identity (its threshold-sweep EER lies above 50% with its 95% "
	 "interval): such scores read as chance there while an attacker who reverses them "
	 "links identities (eer_flipped), so by default the gate fails closed with that finding"},
	{NULL},
};
static const struct vpa_schema gate_schema = {"gate", gate_keys};

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
static const struct vpa_schema tolerances_schema = {"tolerances", tolerances_keys};

const char *vpa_scenario_tolerance_key(size_t i)
{
	return i < sizeof(tolerances_keys) / sizeof(*tolerances_keys) - 1 ? tolerances_keys[i].name
									   : NULL;
}

static const struct vpa_key top_keys[] = {
	{"name", VPA_K_NAME, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "vpc-b1",
	 "the scenario's name; the default output folder is `out/NAME/` (so `.` and `..` are "
	 "refused)"},
	{"description", VPA_K_STR, 0, NULL, -INFINITY, VPA_DESCRIPTION_MAX, 0, NULL, NULL,
	 "\"B1 anonymiser, 3 attackers\"", "free text shown at the top of the report"},
	{"seed", VPA_K_INT, 0, "1", 0, 9007199254740991.0, 0, NULL, NULL, "42",
	 "the seed every random stream is split from (`--seed` overrides)"},
	{"output", VPA_K_STR, 0, NULL, -INFINITY, INFINITY, VPA_KF_WRITE, NULL, NULL, "out/b1",
	 "the output folder, relative to the CURRENT directory like `-o` (which overrides "
	 "it); default `out/NAME`; must be a folder below the current directory unless the run "
	 "has `--allow-writes-outside`"},
	{"report", VPA_K_ENUMLIST, 0, "[html, pdf, json, junit, vpc]", -INFINITY, INFINITY,
	 VPA_KF_NONEMPTY, "html|pdf|json|junit|vpc", NULL, "[html, json]",
	 "the report files to write; `vpc`: result_for_rank.txt and vpc2022_results.txt, the "
	 "VoicePrivacy text formats, when the run has a linkage attack on anonymised speech"},
	{"targets", VPA_K_KINDLIST, 1, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[{id: vpc, kind: scores, sets: [...]}]", "the target systems (see Target kinds)"},
	{"attacks", VPA_K_KINDLIST, 1, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[{id: eval, kind: evaluate, target: vpc}]", "the attacks (see Attack kinds)"},
	{"gates", VPA_K_MAPLIST, 0, NULL, -INFINITY, INFINITY, 0, NULL, &gate_schema,
	 "[{attack: eval.ignorant, metric: eer, min: 0.3}]",
	 "bounds checked after the run; a broken gate makes `run` and `gate` exit 3"},
	{"tolerance", VPA_K_NUM, 0, NULL, 0, INFINITY, 0, NULL, NULL, "0.02",
	 "for the baseline comparison (`run --baseline`, `gate --baseline`): the largest move "
	 "in the leaky direction that is not a regression, stated for fractions (EER, "
	 "linkability, minDCF, top-k); a metric of another unit gets it times the unit's factor "
	 "(bits x2, bits of exposure x10, log10 LR x10, ranks x100; reports/README.md, "
	 "\"Tolerances by unit\"); absent = 0.01"},
	{"tolerances", VPA_K_MAP, 0, NULL, -INFINITY, INFINITY, 0, NULL, &tolerances_schema,
	 "{eer: 0.02, linkability: 0.05}",
	 "for the baseline comparison: a tolerance per metric (absolute, in the metric's own "
	 "unit, >= 0), overriding `tolerance` for that metric"},
	{"portable", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "compute with one arithmetic on every x86-64 CPU with AVX2 and FMA, as `run --portable` "
	 "does: OpenBLAS's Haswell kernel, glibc's libm without its FMA variants, vpaudit's "
	 "generic paths; the same results.json on any such runner (see README, \"Reproducible "
	 "results\")"},
	{"sweep", VPA_K_MAP, 0, NULL, -INFINITY, INFINITY, 0, NULL, &sweep_schema,
	 "{param: attacks.eval.omega, values: [0.5, 1, 2]}",
	 "run once per value of one key and plot every metric against it"},
	{NULL},
};
static const struct vpa_schema top_schema = {"scenario", top_keys};

/* ---- load -------------------------------------------------------------------- */

void vpa_scenario_free(struct vpa_scenario *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_targets; i++)
		vpa_opts_free(s->targets[i].kind->schema, s->targets[i].opts);
	for (size_t i = 0; i < s->n_attacks; i++)
		vpa_opts_free(s->attacks[i].kind->schema, s->attacks[i].opts);
	vpa_ynode_free(s->root);
	free(s->targets);
	free(s->attacks);
	free(s->writes);
	free(s->file);
	free(s->dir);
	free(s);
}

static const char *id_of(const struct vpa_ynode *map)
{
	const struct vpa_ynode *v = vpa_ymap_get(map, "id");
	return v && v->type == VPA_YSCALAR ? v->str : NULL;
}

/* Check `kind` of a list item and return its kind's schema via *kind_out. */
static int check_kind(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *map,
		      int is_attack, const void **kind_out, struct vpa_err *err)
{
	const char *what = is_attack ? "attack" : "target";
	struct vpa_loc loc = vpa_node_loc(ctx->file, map);
	if (map->type != VPA_YMAP)
		return vpa_fail(err, VPA_EINPUT, &loc, "each %s must be a mapping, got %s", what,
				vpa_ynode_what(map));
	const struct vpa_ynode *k = vpa_ymap_get(map, "kind");
	if (!k)
		return vpa_fail(err, VPA_EINPUT, &loc, "%s is missing required key 'kind'", what);
	loc = vpa_node_loc(ctx->file, k);
	if (k->type != VPA_YSCALAR || vpa_ynode_is_null(k))
		return vpa_fail(err, VPA_EINPUT, &loc, "'kind' must be a string, got %s",
				vpa_ynode_what(k));
	const char *names[64];
	size_t n = 0;
	const void *found = NULL;
	if (is_attack) {
		const struct vpa_attack_kind *const *ks;
		size_t nk = vpa_attack_kinds(&ks);
		for (size_t i = 0; i < nk && n < 64; i++)
			names[n++] = ks[i]->name;
		found = vpa_attack_kind_find(k->str);
	} else {
		const struct vpa_target_kind *const *ks;
		size_t nk = vpa_target_kinds(&ks);
		for (size_t i = 0; i < nk && n < 64; i++)
			names[n++] = ks[i]->name;
		found = vpa_target_kind_find(k->str);
	}
	if (!found) {
		const char *near = vpa_did_you_mean(k->str, names, n);
		if (near)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"unknown %s kind '%s' (did you mean '%s'?)", what, k->str, near);
		struct vpa_buf b;
		vpa_buf_init(&b);
		for (size_t i = 0; i < n; i++)
			vpa_buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
		int rc = vpa_fail(err, VPA_EINPUT, &loc, "unknown %s kind '%s' (known kinds: %s)",
				  what, k->str, vpa_buf_str(&b));
		vpa_buf_release(&b);
		return rc;
	}
	*kind_out = found;
	return 0;
}

static int dup_id(const struct vpa_kind_ctx *ctx, const char *what,
		  const struct vpa_ynode *list, size_t upto, struct vpa_err *err)
{
	const char *id = id_of(list->items[upto]);
	for (size_t j = 0; j < upto; j++) {
		const char *o = id_of(list->items[j]);
		if (o && !strcmp(o, id)) {
			struct vpa_loc loc =
				vpa_node_loc(ctx->file, vpa_ymap_get(list->items[upto], "id"));
			return vpa_fail(err, VPA_EINPUT, &loc, "duplicate %s id '%s' (first at line %ld)",
					what, id, vpa_ymap_get(list->items[j], "id")->line);
		}
	}
	return 0;
}

/* A target kind's own checks on cfg (its options struct when it takes one). */
static int target_validate(const struct vpa_kind_ctx *ctx, const struct vpa_target_kind *k,
			   const struct vpa_ynode *cfg, struct vpa_err *err)
{
	if (k->validate_o) {
		struct vpa_kind_ctx c = *ctx; /* its errors about the whole entry blame cfg */
		void *o = vpa_opts_new(k->schema, cfg);
		c.at = vpa_node_mark(cfg);
		int rc = k->validate_o(&c, o, err);
		vpa_opts_free(k->schema, o);
		return rc;
	}
	return k->validate ? k->validate(ctx, cfg, err) : 0;
}

/* An attack kind's own checks on cfg and its target's tcfg (of kind tk). */
static int attack_validate(const struct vpa_kind_ctx *ctx, const struct vpa_attack_kind *k,
			   const struct vpa_ynode *cfg, const struct vpa_target_kind *tk,
			   const struct vpa_ynode *tcfg, struct vpa_err *err)
{
	if (k->validate_o) {
		struct vpa_kind_ctx c = *ctx; /* its errors about the whole entry blame cfg */
		void *o = vpa_opts_new(k->schema, cfg), *to = vpa_opts_new(tk->schema, tcfg);
		c.at = vpa_node_mark(cfg);
		int rc = k->validate_o(&c, o, to, err);
		vpa_opts_free(k->schema, o);
		vpa_opts_free(tk->schema, to);
		return rc;
	}
	return k->validate ? k->validate(ctx, cfg, tcfg, err) : 0;
}

/* The subs an attack will produce (its kind's hook), names borrowed. */
static size_t attack_subs(const struct vpa_scenario *s, const struct vpa_scn_attack *a,
			  const char ***names)
{
	if (a->kind->subs_o)
		return a->kind->subs_o(a->opts, s->targets[a->target].opts, names);
	return a->kind->subs ? a->kind->subs(a->cfg, s->targets[a->target].cfg, names) : 0;
}

static int check_targets(struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
			 struct vpa_err *err)
{
	const struct vpa_ynode *list = vpa_ymap_get(s->root, "targets");
	s->targets = xcalloc(list->n, sizeof(*s->targets));
	for (size_t i = 0; i < list->n; i++) {
		const struct vpa_ynode *m = list->items[i];
		const void *kp;
		int rc = check_kind(ctx, m, 0, &kp, err);
		if (rc)
			return rc;
		const struct vpa_target_kind *kind = kp;
		const struct vpa_schema *sch[2] = {&vpa_target_common_schema, kind->schema};
		char what[160];
		const char *id = id_of(m);
		snprintf(what, sizeof(what), id ? "target '%.100s'" : "target", id);
		if ((rc = vpa_schema_check(ctx, sch, 2, m, what, err)))
			return rc;
		if ((rc = dup_id(ctx, "target", list, i, err)))
			return rc;
		if ((rc = target_validate(ctx, kind, m, err)))
			return rc;
		s->targets[i].id = id_of(m);
		s->targets[i].kind = kind;
		s->targets[i].cfg = m;
		s->targets[i].opts = vpa_opts_new(kind->schema, m);
		s->n_targets++;
	}
	return 0;
}

static size_t find_target(const struct vpa_scenario *s, const char *id)
{
	for (size_t i = 0; i < s->n_targets; i++)
		if (!strcmp(s->targets[i].id, id))
			return i;
	return (size_t)-1;
}

static size_t find_attack(const struct vpa_scenario *s, const char *id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s->attacks[i].id, id))
			return i;
	return (size_t)-1;
}

/* "(did you mean 'x'?)" or "(known: a, b)" */
static void suggest(struct vpa_buf *b, const char *word, const char *const *names, size_t n,
		    const char *known)
{
	const char *near = vpa_did_you_mean(word, names, n);
	if (near) {
		vpa_buf_printf(b, " (did you mean '%s'?)", near);
		return;
	}
	if (!n)
		return;
	vpa_buf_printf(b, " (%s: ", known);
	for (size_t i = 0; i < n; i++)
		vpa_buf_printf(b, "%s%s", i ? ", " : "", names[i]);
	vpa_buf_puts(b, ")");
}

static int check_attack_target(const struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
			       const struct vpa_scn_attack *a, const struct vpa_ynode *target_cfg,
			       struct vpa_err *err)
{
	return attack_validate(ctx, a->kind, a->cfg, s->targets[a->target].kind, target_cfg, err);
}

static int check_attacks(struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
			 struct vpa_err *err)
{
	const struct vpa_ynode *list = vpa_ymap_get(s->root, "attacks");
	s->attacks = xcalloc(list->n, sizeof(*s->attacks));
	for (size_t i = 0; i < list->n; i++) {
		const struct vpa_ynode *m = list->items[i];
		const void *kp;
		int rc = check_kind(ctx, m, 1, &kp, err);
		if (rc)
			return rc;
		const struct vpa_attack_kind *kind = kp;
		const struct vpa_schema *sch[2] = {&vpa_attack_common_schema, kind->schema};
		char what[160];
		const char *id = id_of(m);
		snprintf(what, sizeof(what), id ? "attack '%.100s'" : "attack", id);
		if ((rc = vpa_schema_check(ctx, sch, 2, m, what, err)))
			return rc;
		if ((rc = dup_id(ctx, "attack", list, i, err)))
			return rc;
		const struct vpa_ynode *tn = vpa_ymap_get(m, "target");
		size_t ti = find_target(s, tn->str);
		struct vpa_loc loc = vpa_node_loc(ctx->file, tn);
		if (ti == (size_t)-1) {
			const char *names[256];
			size_t n = 0;
			for (size_t j = 0; j < s->n_targets && n < 256; j++)
				names[n++] = s->targets[j].id;
			struct vpa_buf b;
			vpa_buf_init(&b);
			suggest(&b, tn->str, names, n, "targets");
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "attack '%s' names target '%s', which does not exist%s", id,
				      tn->str, vpa_buf_str(&b));
			vpa_buf_release(&b);
			return rc;
		}
		if (!vpa_attack_can_target(kind, s->targets[ti].kind->name)) {
			struct vpa_buf b;
			vpa_buf_init(&b);
			for (const char *const *t = kind->target_kinds; *t; t++)
				vpa_buf_printf(&b, "%s%s", t == kind->target_kinds ? "" : ", ", *t);
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "attack kind '%s' cannot attack target '%s' of kind '%s' "
				      "(it attacks: %s)",
				      kind->name, tn->str, s->targets[ti].kind->name, vpa_buf_str(&b));
			vpa_buf_release(&b);
			return rc;
		}
		s->attacks[i].id = id;
		s->attacks[i].kind = kind;
		s->attacks[i].cfg = m;
		s->attacks[i].opts = vpa_opts_new(kind->schema, m);
		s->attacks[i].target = ti;
		s->n_attacks++;
		if ((rc = check_attack_target(s, ctx, &s->attacks[i], s->targets[ti].cfg, err)))
			return rc;
	}
	return 0;
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
	size_t n = (subs || ex) && (a->kind->subs || a->kind->subs_o)
			   ? attack_subs(s, a, &names)
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
					suggest(b, it->str, names, n, "its subs");
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
		if (!(vpa_cfg_num(a->cfg, a->kind->schema, "ci") > 0))
			return vpa_fail(err, VPA_EINPUT, &loc,
					"'on: %s' needs a confidence interval: set 'ci' (e.g. 'ci: 0.95') "
					"in attack '%s'",
					on->str, a->id);
	}
	return 0;
}

static int check_gates(struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
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
		size_t ai = find_attack(s, aid, s->n_attacks);
		if (ai == (size_t)-1) {
			const char *names[256];
			size_t n = 0;
			for (size_t j = 0; j < s->n_attacks && n < 256; j++)
				names[n++] = s->attacks[j].id;
			suggest(&b, aid, names, n, "attacks");
			rc = vpa_fail(err, VPA_EINPUT, &loc, "gate names attack '%s', which does not exist%s",
				      aid, vpa_buf_str(&b));
			goto next;
		}
		const struct vpa_scn_attack *a = &s->attacks[ai];
		if (sub) {
			const char **names = NULL;
			size_t n = a->kind->subs || a->kind->subs_o ? attack_subs(s, a, &names)
						 : 0;
			int found = 0;
			for (size_t j = 0; j < n; j++)
				found |= !strcmp(names[j], sub);
			if (!found) {
				if (n)
					suggest(&b, sub, names, n, "its subs");
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
				suggest(&b, mn->str, names, n, "its metrics");
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
		if (!lo && !hi) {
			loc = vpa_node_loc(ctx->file, g);
			rc = vpa_fail(err, VPA_EINPUT, &loc, "gate needs 'min' or 'max'");
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
static void set_path(struct vpa_ynode *map, const char *path, const struct vpa_ynode *value)
{
	const char *dot = strchr(path, '.');
	if (!dot) {
		vpa_ymap_set(map, path, vpa_ynode_clone(value));
		return;
	}
	char *head = xstrndup(path, (size_t)(dot - path));
	const struct vpa_ynode *child = vpa_ymap_get(map, head);
	if (!child) {
		struct vpa_ynode tmp = {.type = VPA_YMAP, .line = value->line, .col = value->col};
		vpa_ymap_set(map, head, vpa_ynode_clone(&tmp));
		child = vpa_ymap_get(map, head);
	}
	set_path((struct vpa_ynode *)child, dot + 1, value);
	free(head);
}

/* The item's config with the sweep value `v` substituted.  Caller frees. */
struct vpa_ynode *vpa_scenario_swept_cfg(const struct vpa_scenario *s,
					 const struct vpa_ynode *cfg, const struct vpa_ynode *v)
{
	struct vpa_ynode *c = vpa_ynode_clone(cfg);
	set_path(c, s->sweep_path, v);
	return c;
}

static int check_sweep(struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
		       struct vpa_err *err)
{
	const struct vpa_ynode *sw = vpa_ymap_get(s->root, "sweep");
	if (!sw)
		return 0;
	const struct vpa_ynode *pn = vpa_ymap_get(sw, "param");
	struct vpa_loc loc = vpa_node_loc(ctx->file, pn);
	const char *p = pn->str;
	int is_attack;
	if (!strncmp(p, "targets.", 8))
		is_attack = 0;
	else if (!strncmp(p, "attacks.", 8))
		is_attack = 1;
	else
		return vpa_fail(err, VPA_EINPUT, &loc,
				"'param' must look like 'targets.ID.key' or 'attacks.ID.key', got '%s'",
				p);
	const char *idp = p + 8, *dot = strchr(idp, '.');
	if (!dot || dot == idp || !dot[1])
		return vpa_fail(err, VPA_EINPUT, &loc,
				"'param' must look like 'targets.ID.key' or 'attacks.ID.key', got '%s'",
				p);
	char *id = xstrndup(idp, (size_t)(dot - idp));
	size_t idx = is_attack ? find_attack(s, id, s->n_attacks) : find_target(s, id);
	int rc = 0;
	struct vpa_buf b;
	vpa_buf_init(&b);
	if (idx == (size_t)-1) {
		const char *names[256];
		size_t n = 0;
		for (size_t j = 0; j < (is_attack ? s->n_attacks : s->n_targets) && n < 256; j++)
			names[n++] = is_attack ? s->attacks[j].id : s->targets[j].id;
		suggest(&b, id, names, n, is_attack ? "attacks" : "targets");
		rc = vpa_fail(err, VPA_EINPUT, &loc, "sweep param names %s '%s', which does not exist%s",
			      is_attack ? "attack" : "target", id, vpa_buf_str(&b));
		goto out;
	}
	const struct vpa_schema *sch[2];
	const struct vpa_ynode *cfg;
	if (is_attack) {
		sch[0] = &vpa_attack_common_schema;
		sch[1] = s->attacks[idx].kind->schema;
		cfg = s->attacks[idx].cfg;
	} else {
		sch[0] = &vpa_target_common_schema;
		sch[1] = s->targets[idx].kind->schema;
		cfg = s->targets[idx].cfg;
	}
	/* walk the key path through the schemas */
	const char *path = dot + 1, *q = path;
	const struct vpa_key *k = NULL;
	const struct vpa_schema *cur[2] = {sch[0], sch[1]};
	size_t ncur = 2;
	for (;;) {
		const char *e = strchr(q, '.');
		char *comp = e ? xstrndup(q, (size_t)(e - q)) : xstrdup(q);
		k = vpa_schema_find(cur, ncur, comp);
		if (!k) {
			const char *names[256];
			size_t n = 0;
			for (size_t si = 0; si < ncur; si++)
				for (const struct vpa_key *kk = cur[si]->keys; kk->name && n < 256; kk++)
					names[n++] = kk->name;
			suggest(&b, comp, names, n, "its keys");
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "sweep param names unknown key '%s' of %s '%s'%s", comp,
				      is_attack ? "attack" : "target", id, vpa_buf_str(&b));
			free(comp);
			goto out;
		}
		free(comp);
		if (!e)
			break;
		if (k->type != VPA_K_MAP || !k->sub) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "sweep param '%s': key '%s' is not a mapping", p, k->name);
			goto out;
		}
		cur[0] = k->sub;
		ncur = 1;
		q = e + 1;
	}
	if (k->type != VPA_K_INT && k->type != VPA_K_NUM && k->type != VPA_K_ENUM &&
	    k->type != VPA_K_BOOL && k->type != VPA_K_STR && k->type != VPA_K_NAME) {
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "sweep param '%s' must name a number, choice, flag or name key "
			      "('%s' is not one)", p, k->name);
		goto out;
	}
	s->has_sweep = 1;
	s->sweep_key = k;
	s->sweep_numeric = k->type == VPA_K_INT || k->type == VPA_K_NUM;
	s->sweep_is_attack = is_attack;
	s->sweep_index = idx;
	s->sweep_param = p;
	s->sweep_path = path;
	s->sweep_values = vpa_ymap_get(sw, "values");
	for (size_t i = 0; i < s->sweep_values->n && !rc; i++) {
		const struct vpa_ynode *v = s->sweep_values->items[i];
		if ((rc = vpa_key_check(ctx, k, v, err)))
			break;
		/* re-run the kinds' own checks with the value in place */
		struct vpa_ynode *c = vpa_scenario_swept_cfg(s, cfg, v);
		if (is_attack) {
			const struct vpa_scn_attack *a = &s->attacks[idx];
			rc = attack_validate(ctx, a->kind, c, s->targets[a->target].kind,
					     s->targets[a->target].cfg, err);
		} else {
			rc = target_validate(ctx, s->targets[idx].kind, c, err);
			for (size_t j = 0; j < s->n_attacks && !rc; j++)
				if (s->attacks[j].target == idx)
					rc = attack_validate(ctx, s->attacks[j].kind, s->attacks[j].cfg,
							     s->targets[idx].kind, c, err);
		}
		vpa_ynode_free(c);
	}
out:
	free(id);
	vpa_buf_release(&b);
	return rc;
}

static unsigned format_bit(const char *s)
{
	if (!strcmp(s, "json"))
		return VPA_SCN_JSON;
	if (!strcmp(s, "html"))
		return VPA_SCN_HTML;
	if (!strcmp(s, "pdf"))
		return VPA_SCN_PDF;
	if (!strcmp(s, "vpc"))
		return VPA_SCN_VPC;
	return VPA_SCN_JUNIT;
}

/* ---- paths the scenario writes ---------------------------------------------- */

static void add_write(struct vpa_scenario *s, const char *key, const struct vpa_ynode *v)
{
	if (!v || v->type != VPA_YSCALAR)
		return;
	s->writes = xrealloc(s->writes, xmul(s->n_writes + 1, sizeof(*s->writes)));
	s->writes[s->n_writes].key = key;
	s->writes[s->n_writes].node = v;
	s->n_writes++;
}

/* Every value of a VPA_KF_WRITE key in map and its sub-mappings. */
static void collect_writes(struct vpa_scenario *s, const struct vpa_ynode *map,
			   const struct vpa_schema *const *sch, size_t nsch)
{
	if (!map || map->type != VPA_YMAP)
		return;
	for (size_t i = 0; i < map->n; i++) {
		const struct vpa_key *k = vpa_schema_find(sch, nsch, map->keys[i]->str);
		const struct vpa_ynode *v = map->items[i];
		if (!k)
			continue;
		if (k->flags & VPA_KF_WRITE) {
			add_write(s, k->name, v);
		} else if (k->sub && k->type == VPA_K_MAP) {
			const struct vpa_schema *sub[1] = {k->sub};
			collect_writes(s, v, sub, 1);
		} else if (k->sub && k->type == VPA_K_MAPLIST && v->type == VPA_YSEQ) {
			const struct vpa_schema *sub[1] = {k->sub};
			for (size_t j = 0; j < v->n; j++)
				collect_writes(s, v->items[j], sub, 1);
		}
	}
}

static void collect_all_writes(struct vpa_scenario *s)
{
	const struct vpa_schema *top[1] = {&top_schema};
	collect_writes(s, s->root, top, 1);
	for (size_t i = 0; i < s->n_targets; i++) {
		const struct vpa_schema *sch[2] = {&vpa_target_common_schema, s->targets[i].kind->schema};
		collect_writes(s, s->targets[i].cfg, sch, 2);
	}
	for (size_t i = 0; i < s->n_attacks; i++) {
		const struct vpa_schema *sch[2] = {&vpa_attack_common_schema, s->attacks[i].kind->schema};
		collect_writes(s, s->attacks[i].cfg, sch, 2);
	}
	if (s->has_sweep && s->sweep_key && (s->sweep_key->flags & VPA_KF_WRITE))
		for (size_t i = 0; i < s->sweep_values->n; i++)
			add_write(s, s->sweep_key->name, s->sweep_values->items[i]);
}

/* path made absolute against the current folder, with "." and ".." removed
 * as text (symbolic links are not followed); caller frees. */
static char *lexical_abs(const char *path)
{
	struct vpa_buf in, out;
	vpa_buf_init(&in);
	vpa_buf_init(&out);
	if (path[0] != '/') {
		char *cwd = getcwd(NULL, 0);
		vpa_buf_puts(&in, cwd ? cwd : ".");
		free(cwd);
		vpa_buf_puts(&in, "/");
	}
	vpa_buf_puts(&in, path);
	const char *p = vpa_buf_str(&in);
	while (*p) {
		while (*p == '/')
			p++;
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (out.len && out.data[out.len - 1] != '/')
				out.len--;
			if (out.len)
				out.len--; /* the slash */
		} else {
			vpa_buf_puts(&out, "/");
			vpa_buf_add(&out, p, n);
		}
		p += n;
	}
	if (!out.len)
		vpa_buf_puts(&out, "/");
	vpa_buf_str(&out);
	vpa_buf_release(&in);
	return out.data;
}

/* 1 when path is dir or below it (strictly below when strict). */
static int path_inside(const char *path, const char *dir, int strict)
{
	char *p = lexical_abs(path), *d = lexical_abs(dir);
	size_t n = strlen(d);
	int in;
	if (!strcmp(d, "/"))
		in = !strict || strcmp(p, "/");
	else
		in = !strncmp(p, d, n) && (p[n] == '/' || (!strict && p[n] == '\0'));
	free(p);
	free(d);
	return in;
}

int vpa_scenario_check_writes(const struct vpa_scenario *s, const char *outdir,
			      struct vpa_err *err)
{
	struct vpa_buf def;
	vpa_buf_init(&def);
	vpa_buf_printf(&def, "out/%s", s->name);
	const char *od = outdir ? outdir : s->output ? s->output : vpa_buf_str(&def);
	int rc = 0;
	for (size_t i = 0; i < s->n_writes && !rc; i++) {
		const struct vpa_ynode *v = s->writes[i].node;
		struct vpa_loc loc = vpa_node_loc(s->file, v);
		if (!strcmp(s->writes[i].key, "output")) {
			/* the scenario's own output folder: below the current folder
			 * (-o, the user's choice, overrides it) */
			if (!outdir && !path_inside(v->str, ".", 1))
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "'output: %s' is not a folder below the current folder: a "
					      "scenario writes only there unless you run it with "
					      "--allow-writes-outside", v->str);
		} else if (!path_inside(v->str, od, 0)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "'%s: %s' is outside the output folder '%s': a scenario writes "
				      "only there unless you run it with --allow-writes-outside",
				      s->writes[i].key, v->str, od);
		}
	}
	vpa_buf_release(&def);
	return rc;
}

int vpa_scenario_parse(const char *name, const char *dir, const char *buf, size_t len,
		       struct vpa_scenario **out, struct vpa_err *err)
{
	struct vpa_scenario *s = xcalloc(1, sizeof(*s));
	int rc;
	*out = NULL;
	s->file = xstrdup(name);
	s->dir = xstrdup(dir && *dir ? dir : ".");
	struct vpa_kind_ctx ctx = {s->file, s->dir};
	if ((rc = vpa_yaml_parse(s->file, buf, len, &s->root, err)))
		goto out;
	if (s->root->type != VPA_YMAP) {
		struct vpa_loc loc = vpa_node_loc(s->file, s->root);
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "expected a mapping at the top level (name, targets, attacks, ...), got %s",
			      vpa_ynode_what(s->root));
		goto out;
	}
	const struct vpa_schema *top[1] = {&top_schema};
	if ((rc = vpa_schema_check(&ctx, top, 1, s->root, "the scenario", err)))
		goto out;
	s->name = vpa_cfg_str(s->root, &top_schema, "name");
	if (!strcmp(s->name, ".") || !strcmp(s->name, "..")) {
		/* out/NAME must stay inside out/ */
		struct vpa_loc loc = vpa_node_loc(s->file, vpa_ymap_get(s->root, "name"));
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "'name' must not be '%s' (the default output folder is out/NAME)",
			      s->name);
		goto out;
	}
	s->description = vpa_cfg_str(s->root, &top_schema, "description");
	s->seed = (uint64_t)vpa_cfg_int(s->root, &top_schema, "seed");
	s->output = vpa_cfg_str(s->root, &top_schema, "output");
	s->portable = vpa_cfg_bool(s->root, &top_schema, "portable");
	s->tolerance = vpa_ymap_get(s->root, "tolerance")
			       ? vpa_cfg_num(s->root, &top_schema, "tolerance")
			       : NAN;
	const struct vpa_ynode *rep = vpa_ymap_get(s->root, "report");
	if (rep) {
		for (size_t i = 0; i < rep->n; i++)
			s->formats |= format_bit(rep->items[i]->str);
	} else {
		s->formats = VPA_SCN_JSON | VPA_SCN_HTML | VPA_SCN_PDF | VPA_SCN_JUNIT | VPA_SCN_VPC;
	}
	s->gates = vpa_ymap_get(s->root, "gates");
	if ((rc = check_targets(s, &ctx, err)) || (rc = check_attacks(s, &ctx, err)) ||
	    (rc = check_sweep(s, &ctx, err)) || (rc = check_gates(s, &ctx, err)))
		goto out;
	collect_all_writes(s);
	*out = s;
	s = NULL;
out:
	vpa_scenario_free(s);
	return rc;
}

int vpa_scenario_load(const char *path, struct vpa_scenario **out, struct vpa_err *err)
{
	char *buf = NULL, *dir = NULL;
	size_t len;
	*out = NULL;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	const char *slash = strrchr(path, '/');
	dir = slash ? xstrndup(path, (size_t)(slash - path) + (slash == path)) : xstrdup(".");
	rc = vpa_scenario_parse(path, dir, buf, len, out, err);
	free(dir);
	free(buf);
	return rc;
}

/* ---- echo ------------------------------------------------------------------ */

static struct vpa_json *echo_node(const struct vpa_ynode *n, const struct vpa_schema *const *sch,
				  size_t nsch, const struct vpa_key *k);

static struct vpa_json *echo_map(const struct vpa_ynode *m, const struct vpa_schema *const *sch,
				 size_t nsch)
{
	struct vpa_json *o = vpa_json_obj();
	for (size_t i = 0; i < m->n; i++) {
		const struct vpa_key *k = nsch ? vpa_schema_find(sch, nsch, m->keys[i]->str) : NULL;
		vpa_json_set(o, m->keys[i]->str, echo_node(m->items[i], NULL, 0, k));
	}
	return o;
}

static struct vpa_json *echo_kind_item(const struct vpa_ynode *m, int is_attack)
{
	const struct vpa_ynode *kn = vpa_ymap_get(m, "kind");
	const struct vpa_schema *sch[2] = {is_attack ? &vpa_attack_common_schema
						     : &vpa_target_common_schema, NULL};
	size_t n = 1;
	if (kn && kn->type == VPA_YSCALAR) {
		if (is_attack && vpa_attack_kind_find(kn->str))
			sch[n++] = vpa_attack_kind_find(kn->str)->schema;
		if (!is_attack && vpa_target_kind_find(kn->str))
			sch[n++] = vpa_target_kind_find(kn->str)->schema;
	}
	return echo_map(m, sch, n);
}

static struct vpa_json *echo_node(const struct vpa_ynode *n, const struct vpa_schema *const *sch,
				  size_t nsch, const struct vpa_key *k)
{
	if (n->type == VPA_YSCALAR)
		return vpa_scalar_json(n, k);
	if (n->type == VPA_YMAP) {
		if (sch)
			return echo_map(n, sch, nsch);
		const struct vpa_schema *sub[1] = {k ? k->sub : NULL};
		return echo_map(n, sub, sub[0] ? 1 : 0);
	}
	struct vpa_json *a = vpa_json_arr();
	for (size_t i = 0; i < n->n; i++) {
		const struct vpa_ynode *it = n->items[i];
		if (k && k->type == VPA_K_KINDLIST && it->type == VPA_YMAP) {
			vpa_json_push(a, echo_kind_item(it, !strcmp(k->name, "attacks")));
		} else if (k && k->type == VPA_K_MAPLIST && it->type == VPA_YMAP) {
			const struct vpa_schema *sub[1] = {k->sub};
			vpa_json_push(a, echo_map(it, sub, sub[0] ? 1 : 0));
		} else if (k && k->type == VPA_K_ENUMLIST) {
			vpa_json_push(a, vpa_json_str(it->str ? it->str : ""));
		} else {
			vpa_json_push(a, echo_node(it, NULL, 0, NULL));
		}
	}
	return a;
}

struct vpa_json *vpa_scenario_echo(const struct vpa_scenario *s)
{
	const struct vpa_schema *top[1] = {&top_schema};
	return echo_node(s->root, top, 1, NULL);
}

struct vpa_json *vpa_scenario_gates(const struct vpa_scenario *s)
{
	struct vpa_json *a = vpa_json_arr();
	for (size_t i = 0; s->gates && i < s->gates->n; i++) {
		const struct vpa_ynode *g = s->gates->items[i];
		struct vpa_json *o = vpa_json_obj();
		vpa_json_set_str(o, "attack", vpa_ymap_get(g, "attack")->str);
		vpa_json_set_str(o, "metric", vpa_ymap_get(g, "metric")->str);
		vpa_json_set(o, "min", vpa_ymap_get(g, "min")
					       ? vpa_json_num(vpa_cfg_num(g, &gate_schema, "min"))
					       : vpa_json_null());
		vpa_json_set(o, "max", vpa_ymap_get(g, "max")
					       ? vpa_json_num(vpa_cfg_num(g, &gate_schema, "max"))
					       : vpa_json_null());
		vpa_json_set(o, "layer", vpa_ymap_get(g, "layer")
						 ? vpa_json_num((double)vpa_cfg_int(g, &gate_schema, "layer"))
						 : vpa_json_null());
		const struct vpa_ynode *sw = vpa_ymap_get(g, "sweep");
		if (sw)
			vpa_json_set(o, "sweep", s->sweep_numeric ? vpa_json_num(strtod(sw->str, NULL))
								  : vpa_json_str(sw->str));
		static const char *const lists[] = {"subs", "exclude"};
		for (size_t k = 0; k < 2; k++) {
			const struct vpa_ynode *l = vpa_ymap_get(g, lists[k]);
			if (!l)
				continue;
			struct vpa_json *arr = vpa_json_arr();
			for (size_t j = 0; j < l->n; j++)
				vpa_json_push(arr, vpa_json_str(l->items[j]->str));
			vpa_json_set(o, lists[k], arr);
		}
		const char *on = vpa_cfg_str(g, &gate_schema, "on");
		if (strcmp(on, "value"))
			vpa_json_set_str(o, "on", on);
		if (vpa_cfg_bool(g, &gate_schema, "allow_unreliable"))
			vpa_json_set(o, "allow_unreliable", vpa_json_bool(1));
		if (vpa_cfg_bool(g, &gate_schema, "allow_anti_correlated"))
			vpa_json_set(o, "allow_anti_correlated", vpa_json_bool(1));
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
	for (size_t i = 0; i < t->n; i++)
		vpa_json_set_num(o, t->keys[i]->str, vpa_cfg_num(t, &tolerances_schema, t->keys[i]->str));
	return o;
}

/* ---- error context ----------------------------------------------------------- */

void vpa_error_context(const char *msg, struct vpa_buf *out)
{
	/* FILE:LINE[:COL]: - the first ':' followed by digits and ':' */
	const char *p = msg;
	long line = 0, col = 0;
	const char *fend = NULL;
	for (; *p; p++) {
		if (*p != ':' || !isdigit((unsigned char)p[1]))
			continue;
		char *e;
		line = strtol(p + 1, &e, 10);
		if (*e != ':')
			continue;
		fend = p;
		if (isdigit((unsigned char)e[1])) {
			char *e2;
			col = strtol(e + 1, &e2, 10);
			if (*e2 != ':')
				col = 0;
		}
		break;
	}
	if (!fend || line <= 0)
		return;
	char *file = xstrndup(msg, (size_t)(fend - msg));
	char *buf = NULL;
	size_t len = 0;
	struct vpa_err e2;
	vpa_err_init(&e2);
	if (vpa_read_file(file, &buf, &len, &e2) == 0) {
		const char *l = buf, *end = buf + len;
		for (long i = 1; i < line && l < end; i++) {
			const char *nl = memchr(l, '\n', (size_t)(end - l));
			l = nl ? nl + 1 : end;
		}
		if (l < end || (line == 1 && len == 0)) {
			const char *nl = memchr(l, '\n', (size_t)(end - l));
			size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
			if (n && l[n - 1] == '\r')
				n--;
			if (n > 200)
				n = 200;
			/* escaped (a data file's "\e[2J" must not reach the terminal) */
			vpa_buf_printf(out, "%5ld | ", line);
			vpa_buf_add_shown(out, l, n);
			vpa_buf_puts(out, "\n");
			if (col > 0) {
				/* under column col of the line as shown */
				struct vpa_buf pre;
				vpa_buf_init(&pre);
				vpa_buf_add_shown(&pre, l, (size_t)(col - 1) < n ? (size_t)(col - 1) : n);
				vpa_buf_puts(out, "      | ");
				for (size_t c = 0; c < pre.len; c++)
					vpa_buf_puts(out, pre.data[c] == '\t' ? "\t" : " ");
				vpa_buf_puts(out, "^\n");
				vpa_buf_release(&pre);
			}
		}
	}
	free(buf);
	free(file);
}

/* ---- the reference ------------------------------------------------------------ */

static void ref_subs(struct vpa_buf *out, const struct vpa_schema *s)
{
	for (const struct vpa_key *k = s->keys; k->name; k++)
		if (k->sub) {
			vpa_buf_printf(out, "\n%s `%s`:\n\n",
				       k->type == VPA_K_MAPLIST ? "Each item of" : "The mapping", k->name);
			vpa_schema_table(out, k->sub);
			ref_subs(out, k->sub);
		}
}

void vpa_schema_reference(struct vpa_buf *out)
{
	vpa_buf_puts(out, "<!-- generated from the schema tables: "
			  "VPA_WRITE_REFERENCE=FILE build/tests/test_scenario -->\n");
	vpa_buf_puts(out, "### Top level\n\n");
	vpa_schema_table(out, &top_schema);
	ref_subs(out, &top_schema);
	vpa_buf_puts(out, "\n### Keys of every target\n\n");
	vpa_schema_table(out, &vpa_target_common_schema);
	const struct vpa_target_kind *const *tk;
	size_t nt = vpa_target_kinds(&tk);
	for (size_t i = 0; i < nt; i++) {
		vpa_buf_printf(out, "\n### Target kind `%s`\n\n%s\n\n", tk[i]->name, tk[i]->doc);
		vpa_schema_table(out, tk[i]->schema);
		ref_subs(out, tk[i]->schema);
	}
	vpa_buf_puts(out, "\n### Keys of every attack\n\n");
	vpa_schema_table(out, &vpa_attack_common_schema);
	const struct vpa_attack_kind *const *ak;
	size_t na = vpa_attack_kinds(&ak);
	for (size_t i = 0; i < na; i++) {
		vpa_buf_printf(out, "\n### Attack kind `%s`\n\n%s\n\nAttacks targets of kind:",
			       ak[i]->name, ak[i]->doc);
		for (const char *const *t = ak[i]->target_kinds; *t; t++)
			vpa_buf_printf(out, " `%s`", *t);
		vpa_buf_puts(out, ".  Gateable metrics:");
		for (const char *const *m = ak[i]->metrics; *m; m++)
			vpa_buf_printf(out, " `%s`", *m);
		vpa_buf_printf(out, ".  Per-layer records: %s.\n\n", ak[i]->has_layers ? "yes" : "no");
		vpa_schema_table(out, ak[i]->schema);
		ref_subs(out, ak[i]->schema);
	}
}
