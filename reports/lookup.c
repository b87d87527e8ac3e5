/*
 * reports/lookup.c - lookups in a checked results DOM that the sections,
 * the tables and the renderers share: an attack and its target, a record's
 * metric and its "unreliable" reason, the record that speaks for per-layer
 * records, the simulated and synthetic targets, the figures in page order.
 * They read the DOM only and call nothing in reports/ but each other, so
 * every layer above may use them (split from summary.c, table.c and html.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/table.h"

static const struct vpa_json *get_arr(const struct vpa_json *obj, const char *key)
{
	const struct vpa_json *a = vpa_json_get(obj, key);
	return a && a->type == VPA_JSON_ARR ? a : NULL;
}

/* ---- attacks and records ---- */

double vpa_rec_num(const struct vpa_json *rec, const char *path)
{
	const struct vpa_json *m = vpa_json_get(rec, "metrics");
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", path);
	char *p = buf;
	for (char *dot; m && (dot = strchr(p, '.'));) {
		*dot = 0;
		m = vpa_json_get(m, p);
		p = dot + 1;
	}
	const struct vpa_json *v = m && m->type == VPA_JSON_OBJ ? vpa_json_get(m, p) : NULL;
	return v && v->type == VPA_JSON_NUM && isfinite(v->num) ? v->num : NAN;
}

const char *vpa_rec_unreliable(const struct vpa_json *rec, const char *path)
{
	const struct vpa_json *u = vpa_json_get(rec, "unreliable");
	for (size_t i = 0; u && u->type == VPA_JSON_OBJ && i < u->n; i++) {
		size_t l = strlen(u->keys[i]);
		if (!strncmp(path, u->keys[i], l) && (path[l] == 0 || path[l] == '.') &&
		    u->items[i]->type == VPA_JSON_STR)
			return u->items[i]->str;
	}
	return NULL;
}

const struct vpa_json *vpa_attack_find(const struct vpa_json *r, const char *attack)
{
	const struct vpa_json *a = vpa_json_get(r, "attacks");
	for (size_t i = 0; a && a->type == VPA_JSON_ARR && i < a->n; i++) {
		const char *id = vpa_json_get_str(a->items[i], "id");
		if (id && attack && !strcmp(id, attack))
			return a->items[i];
	}
	return NULL;
}

const struct vpa_json *vpa_attack_target(const struct vpa_json *r, const char *attack)
{
	const char *tid = vpa_json_get_str(vpa_attack_find(r, attack), "target");
	const struct vpa_json *t = vpa_json_get(r, "targets");
	for (size_t i = 0; tid && t && t->type == VPA_JSON_ARR && i < t->n; i++) {
		const char *id = vpa_json_get_str(t->items[i], "id");
		if (id && !strcmp(id, tid))
			return t->items[i];
	}
	return NULL;
}

int vpa_attack_simulated(const struct vpa_json *r, const char *attack)
{
	const struct vpa_json *s = vpa_json_get(vpa_attack_target(r, attack), "simulated");
	return s && s->type == VPA_JSON_BOOL && s->boolean;
}

int vpa_link_estimated(const struct vpa_json *rec, double *n_mated)
{
	double n = vpa_rec_num(rec, "n_target");
	if (n_mated)
		*n_mated = n;
	return isfinite(vpa_rec_num(rec, "linkability")) && !(n < VPA_LINK_MIN_ESTIMATE);
}

/* For per-layer or per-population records, the one record that speaks for
 * the (attack, sub): the leakiest layer (lowest EER), the largest population. */
int vpa_rec_representative(const struct vpa_json *recs, size_t i, const char *kind)
{
	const struct vpa_json *rec = recs->items[i];
	const char *a = vpa_json_get_str(rec, "attack"), *s = vpa_json_get_str(rec, "sub");
	const struct vpa_json *layer = vpa_json_get(rec, "layer");
	if (!layer || layer->type != VPA_JSON_NUM)
		return 1;
	int ident = kind && !strcmp(kind, "identification");
	double mine = ident ? layer->num : vpa_rec_num(rec, "eer");
	for (size_t j = 0; j < recs->n; j++) {
		const struct vpa_json *o = recs->items[j];
		const char *oa = vpa_json_get_str(o, "attack"), *os = vpa_json_get_str(o, "sub");
		const struct vpa_json *ol = vpa_json_get(o, "layer");
		if (j == i || !oa || strcmp(oa, a) || (!os) != (!s) || (s && strcmp(os, s)) || !ol ||
		    ol->type != VPA_JSON_NUM)
			continue;
		double other = ident ? ol->num : vpa_rec_num(o, "eer");
		if (!isfinite(mine) && isfinite(other))
			return 0;
		if (isfinite(other) && (ident ? other > mine : other < mine))
			return 0;
		if (other == mine && j < i)
			return 0;
	}
	return 1;
}

/* ---- targets ---- */

void vpa_simulated_targets(const struct vpa_json *results, struct vpa_buf *out)
{
	const struct vpa_json *targets = get_arr(results, "targets");
	size_t k = 0;
	for (size_t i = 0; targets && i < targets->n; i++) {
		const struct vpa_json *t = targets->items[i];
		const struct vpa_json *sim = vpa_json_get(t, "simulated");
		const char *id = vpa_json_get_str(t, "id");
		if (sim && sim->type == VPA_JSON_BOOL && sim->boolean)
			vpa_buf_printf(out, "%s%s%s", k++ ? ", " : "", id ? id : "?",
				       vpa_target_synthetic(t) ? " (synthetic speech)" : "");
	}
}

const char *vpa_target_synthetic(const struct vpa_json *target)
{
	return vpa_json_get_str(vpa_json_get(target, "info"), "synthetic");
}

void vpa_synthetic_sets(const struct vpa_json *target, struct vpa_buf *out)
{
	const struct vpa_json *sets = get_arr(vpa_json_get(target, "info"), "sets");
	size_t k = 0;
	for (size_t i = 0; sets && i < sets->n; i++) {
		const struct vpa_json *syn = vpa_json_get(sets->items[i], "synthetic");
		const char *name = vpa_json_get_str(sets->items[i], "name");
		if (syn && syn->type == VPA_JSON_BOOL && syn->boolean)
			vpa_buf_printf(out, "%s%s", k++ ? ", " : "", name ? name : "?");
	}
}

/* ---- figures ---- */

size_t vpa_count_figures(const struct vpa_json *results)
{
	size_t n = 0;
	const struct vpa_json *attacks = get_arr(results, "attacks");
	for (size_t i = 0; attacks && i < attacks->n; i++) {
		const struct vpa_json *f = get_arr(attacks->items[i], "figures");
		n += f ? f->n : 0;
	}
	const struct vpa_json *f = get_arr(results, "figures");
	return n + (f ? f->n : 0);
}
void vpa_collect_figures(const struct vpa_json *r, const struct vpa_json **figs)
{
	const struct vpa_json *attacks = get_arr(r, "attacks"), *sfigs = get_arr(r, "figures");
	size_t k = 0;
	for (size_t i = 0; attacks && i < attacks->n; i++) {
		const struct vpa_json *f = get_arr(attacks->items[i], "figures");
		for (size_t j = 0; f && j < f->n; j++)
			figs[k++] = f->items[j];
	}
	for (size_t j = 0; sfigs && j < sfigs->n; j++)
		figs[k++] = sfigs->items[j];
}
