/*
 * scenarios/kinds.c - what the scenario's checks share about its items: ids,
 * kinds, lookups by id, suggestions, and the kinds' own hooks (validate,
 * subs) called on a mapping through its typed options.  Below scenario.c,
 * sweep.c and gates.c.
 */
#include "scenarios/scenario_int.h"
#include "targets/targets.h"
#include "attacks/attacks.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *vpa_scn_id_of(const struct vpa_ynode *map)
{
	const struct vpa_ynode *v = vpa_ymap_get(map, "id");
	return v && v->type == VPA_YSCALAR ? v->str : NULL;
}

/* Check `kind` of a list item and return its kind's schema via *kind_out. */
int vpa_scn_check_kind(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *map,
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

int vpa_scn_dup_id(const struct vpa_kind_ctx *ctx, const char *what,
		  const struct vpa_ynode *list, size_t upto, struct vpa_err *err)
{
	const char *id = vpa_scn_id_of(list->items[upto]);
	for (size_t j = 0; j < upto; j++) {
		const char *o = vpa_scn_id_of(list->items[j]);
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
int vpa_scn_target_validate(const struct vpa_kind_ctx *ctx, const struct vpa_target_kind *k,
			   const struct vpa_ynode *cfg, struct vpa_err *err)
{
	if (!k->validate)
		return 0;
	void *o = vpa_opts_new(k->schema, cfg);
	struct vpa_kind_ctx c = *ctx;
	c.self = vpa_node_mark(cfg);
	int rc = k->validate(&c, o, err);
	vpa_opts_free(k->schema, o);
	return rc;
}

/* An attack kind's own checks on cfg and its target's tcfg (of kind tk). */
int vpa_scn_attack_validate(const struct vpa_kind_ctx *ctx, const struct vpa_attack_kind *k,
			   const struct vpa_ynode *cfg, const struct vpa_target_kind *tk,
			   const struct vpa_ynode *tcfg, struct vpa_err *err)
{
	if (!k->validate)
		return 0;
	void *o = vpa_opts_new(k->schema, cfg), *to = vpa_opts_new(tk->schema, tcfg);
	struct vpa_kind_ctx c = *ctx;
	c.self = vpa_node_mark(cfg);
	int rc = k->validate(&c, o, to, err);
	vpa_opts_free(k->schema, o);
	vpa_opts_free(tk->schema, to);
	return rc;
}

/* The subs an attack will produce (its kind's hook), names borrowed. */
size_t vpa_scn_attack_subs(const struct vpa_scenario *s, const struct vpa_scn_attack *a,
			  const char ***names)
{
	return a->kind->subs ? a->kind->subs(a->opts, s->targets[a->target].opts, names) : 0;
}

size_t vpa_scn_find_target(const struct vpa_scenario *s, const char *id)
{
	for (size_t i = 0; i < s->n_targets; i++)
		if (!strcmp(s->targets[i].id, id))
			return i;
	return (size_t)-1;
}

size_t vpa_scn_find_attack(const struct vpa_scenario *s, const char *id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s->attacks[i].id, id))
			return i;
	return (size_t)-1;
}

/* "(did you mean 'x'?)" or "(known: a, b)" */
void vpa_scn_suggest(struct vpa_buf *b, const char *word, const char *const *names, size_t n,
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
