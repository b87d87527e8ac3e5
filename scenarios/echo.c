/*
 * scenarios/echo.c - a scenario as JSON (results.json's `scenario.echo`,
 * scalars typed by their keys), the offending line of a located error, and
 * the Markdown reference of every schema (scenarios/README.md).
 */
#include "scenarios/scenario_int.h"
#include "targets/targets.h"
#include "attacks/attacks.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	const struct vpa_schema *top[1] = {&vpa_scn_top_schema};
	return echo_node(s->root, top, 1, NULL);
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
	vpa_schema_table(out, &vpa_scn_top_schema);
	ref_subs(out, &vpa_scn_top_schema);
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
