/*
 * scenarios/scenario.c - a scenario file read and checked completely: the top-level
 * keys, the targets and attacks (their kinds' schemas and checks), then the
 * sweep (sweep.c), the gates (gates.c) and the paths it writes (writes.c).
 * See scenario.h.
 */
#include "scenarios/scenario_int.h"
#include "targets/targets.h"
#include "attacks/attacks.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int check_targets(struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
			 struct vpa_err *err)
{
	const struct vpa_ynode *list = vpa_ymap_get(s->root, "targets");
	s->targets = xcalloc(list->n, sizeof(*s->targets));
	for (size_t i = 0; i < list->n; i++) {
		const struct vpa_ynode *m = list->items[i];
		const void *kp;
		int rc = vpa_scn_check_kind(ctx, m, 0, &kp, err);
		if (rc)
			return rc;
		const struct vpa_target_kind *kind = kp;
		const struct vpa_schema *sch[2] = {&vpa_target_common_schema, kind->schema};
		char what[160];
		const char *id = vpa_scn_id_of(m);
		snprintf(what, sizeof(what), id ? "target '%.100s'" : "target", id);
		if ((rc = vpa_schema_check(ctx, sch, 2, m, what, err)))
			return rc;
		if ((rc = vpa_scn_dup_id(ctx, "target", list, i, err)))
			return rc;
		if ((rc = vpa_scn_target_validate(ctx, kind, m, err)))
			return rc;
		s->targets[i].id = vpa_scn_id_of(m);
		s->targets[i].kind = kind;
		s->targets[i].cfg = m;
		s->targets[i].opts = vpa_opts_new(kind->schema, m);
		s->n_targets++;
	}
	return 0;
}

static int check_attack_target(const struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
			       const struct vpa_scn_attack *a, const struct vpa_ynode *target_cfg,
			       struct vpa_err *err)
{
	return vpa_scn_attack_validate(ctx, a->kind, a->cfg, s->targets[a->target].kind, target_cfg, err);
}

static int check_attacks(struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
			 struct vpa_err *err)
{
	const struct vpa_ynode *list = vpa_ymap_get(s->root, "attacks");
	s->attacks = xcalloc(list->n, sizeof(*s->attacks));
	for (size_t i = 0; i < list->n; i++) {
		const struct vpa_ynode *m = list->items[i];
		const void *kp;
		int rc = vpa_scn_check_kind(ctx, m, 1, &kp, err);
		if (rc)
			return rc;
		const struct vpa_attack_kind *kind = kp;
		const struct vpa_schema *sch[2] = {&vpa_attack_common_schema, kind->schema};
		char what[160];
		const char *id = vpa_scn_id_of(m);
		snprintf(what, sizeof(what), id ? "attack '%.100s'" : "attack", id);
		if ((rc = vpa_schema_check(ctx, sch, 2, m, what, err)))
			return rc;
		if ((rc = vpa_scn_dup_id(ctx, "attack", list, i, err)))
			return rc;
		const struct vpa_ynode *tn = vpa_ymap_get(m, "target");
		size_t ti = vpa_scn_find_target(s, tn->str);
		struct vpa_loc loc = vpa_node_loc(ctx->file, tn);
		if (ti == (size_t)-1) {
			const char *names[256];
			size_t n = 0;
			for (size_t j = 0; j < s->n_targets && n < 256; j++)
				names[n++] = s->targets[j].id;
			struct vpa_buf b;
			vpa_buf_init(&b);
			vpa_scn_suggest(&b, tn->str, names, n, "targets");
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
	const struct vpa_schema *top[1] = {&vpa_scn_top_schema};
	if ((rc = vpa_schema_check(&ctx, top, 1, s->root, "the scenario", err)))
		goto out;
	struct vpa_scn_top_opts *top_o = vpa_opts_new(&vpa_scn_top_schema, s->root);
	s->name = top_o->name;
	if (!strcmp(s->name, ".") || !strcmp(s->name, "..")) {
		/* out/NAME must stay inside out/ */
		struct vpa_loc loc = vpa_mark_loc(s->file, top_o->name_at);
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "'name' must not be '%s' (the default output folder is out/NAME)",
			      s->name);
		vpa_opts_free(&vpa_scn_top_schema, top_o);
		goto out;
	}
	s->description = top_o->description;
	s->seed = (uint64_t)top_o->seed;
	s->output = top_o->output;
	s->portable = top_o->portable;
	s->tolerance = top_o->tolerance_at.line ? top_o->tolerance : NAN;
	/* `report:` written, else its default: every format */
	for (size_t i = 0; i < top_o->report.n; i++)
		s->formats |= format_bit(top_o->report.v[i]);
	vpa_opts_free(&vpa_scn_top_schema, top_o);
	s->gates = vpa_ymap_get(s->root, "gates");
	if ((rc = check_targets(s, &ctx, err)) || (rc = check_attacks(s, &ctx, err)) ||
	    (rc = vpa_scn_check_sweep(s, &ctx, err)) || (rc = vpa_scn_check_gates(s, &ctx, err)))
		goto out;
	vpa_scn_collect_writes(s);
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
