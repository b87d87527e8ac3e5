/*
 * scenarios/sweep.c - the `sweep:` of a scenario: its schema, the key path
 * it names, the swept mapping of one value, and each value checked like the
 * key itself with the kinds' own checks re-run on it.
 */
#include "scenarios/scenario_int.h"
#include "targets/targets.h"
#include "attacks/attacks.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
const struct vpa_schema vpa_scn_sweep_schema = {"sweep", sweep_keys};

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

int vpa_scn_check_sweep(struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
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
	size_t idx = is_attack ? vpa_scn_find_attack(s, id, s->n_attacks) : vpa_scn_find_target(s, id);
	int rc = 0;
	struct vpa_buf b;
	vpa_buf_init(&b);
	if (idx == (size_t)-1) {
		const char *names[256];
		size_t n = 0;
		for (size_t j = 0; j < (is_attack ? s->n_attacks : s->n_targets) && n < 256; j++)
			names[n++] = is_attack ? s->attacks[j].id : s->targets[j].id;
		vpa_scn_suggest(&b, id, names, n, is_attack ? "attacks" : "targets");
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
			vpa_scn_suggest(&b, comp, names, n, "its keys");
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
			rc = vpa_scn_attack_validate(ctx, a->kind, c, s->targets[a->target].kind,
					     s->targets[a->target].cfg, err);
		} else {
			rc = vpa_scn_target_validate(ctx, s->targets[idx].kind, c, err);
			for (size_t j = 0; j < s->n_attacks && !rc; j++)
				if (s->attacks[j].target == idx)
					rc = vpa_scn_attack_validate(ctx, s->attacks[j].kind, s->attacks[j].cfg,
							     s->targets[idx].kind, c, err);
		}
		vpa_ynode_free(c);
	}
out:
	free(id);
	vpa_buf_release(&b);
	return rc;
}
