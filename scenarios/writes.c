/*
 * scenarios/writes.c - the paths a scenario writes (every key flagged
 * VPA_KF_WRITE): collected after the checks and kept inside the output folder.
 */
#include "scenarios/scenario_int.h"
#include "targets/targets.h"
#include "attacks/attacks.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

void vpa_scn_collect_writes(struct vpa_scenario *s)
{
	const struct vpa_schema *top[1] = {&vpa_scn_top_schema};
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
