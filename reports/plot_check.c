/*
 * reports/plot_check.c - validation of figure JSON (vpa_plot_check): the
 * figure types and their keys (see reports/README.md).  Split from
 * reports/plot.c.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "reports/table.h"

/* ---- figure checks ---- */

static int fig_fail(struct vpa_err *err, const char *name, const struct vpa_json *v,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fig_fail(struct vpa_err *err, const char *name, const struct vpa_json *v,
		    const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (name) {
		struct vpa_loc loc = {name, v ? v->line : 0, v ? v->col : 0};
		return vpa_fail(err, VPA_EINPUT, &loc, "%s", msg);
	}
	return vpa_fail(err, VPA_EINPUT, NULL, "%s", msg);
}

/* The figure's id or type for messages. */
static const char *fig_label(const struct vpa_json *fig)
{
	const char *id = vpa_json_get_str(fig, "id");
	if (id)
		return id;
	const char *t = vpa_json_get_str(fig, "type");
	return t ? t : "?";
}

/* An array of numbers or nulls at key; *n its length. */
static int check_nums(const struct vpa_json *fig, const struct vpa_json *obj, const char *key,
		      const char *name, size_t *n, struct vpa_err *err)
{
	const struct vpa_json *a = vpa_json_get(obj, key);
	if (!a)
		return fig_fail(err, name, obj, "figure '%s': missing '%s'", fig_label(fig), key);
	if (a->type != VPA_JSON_ARR)
		return fig_fail(err, name, a, "figure '%s': '%s' must be an array of numbers",
				fig_label(fig), key);
	for (size_t i = 0; i < a->n; i++)
		if (a->items[i]->type != VPA_JSON_NUM && a->items[i]->type != VPA_JSON_NULL)
			return fig_fail(err, name, a->items[i],
					"figure '%s': '%s' must be an array of numbers",
					fig_label(fig), key);
	*n = a->n;
	return 0;
}

static int check_opt_str(const struct vpa_json *fig, const struct vpa_json *obj, const char *key,
			 const char *name, struct vpa_err *err)
{
	const struct vpa_json *v = vpa_json_get(obj, key);
	if (v && v->type != VPA_JSON_STR && v->type != VPA_JSON_NULL)
		return fig_fail(err, name, v, "figure '%s': '%s' must be a string", fig_label(fig), key);
	return 0;
}

static int check_opt_num(const struct vpa_json *fig, const struct vpa_json *obj, const char *key,
			 const char *name, struct vpa_err *err)
{
	const struct vpa_json *v = vpa_json_get(obj, key);
	if (v && v->type != VPA_JSON_NUM && v->type != VPA_JSON_NULL)
		return fig_fail(err, name, v, "figure '%s': '%s' must be a number or null",
				fig_label(fig), key);
	return 0;
}

static int check_series(const struct vpa_json *fig, const char *xk, const char *yk,
			const char *name, struct vpa_err *err)
{
	const struct vpa_json *s = vpa_json_get(fig, "series");
	if (!s)
		return fig_fail(err, name, fig, "figure '%s': missing 'series'", fig_label(fig));
	if (s->type != VPA_JSON_ARR)
		return fig_fail(err, name, s, "figure '%s': 'series' must be an array", fig_label(fig));
	for (size_t i = 0; i < s->n; i++) {
		const struct vpa_json *one = s->items[i];
		size_t nx, ny;
		if (one->type != VPA_JSON_OBJ)
			return fig_fail(err, name, one, "figure '%s': series %zu must be an object",
					fig_label(fig), i + 1);
		int rc = check_opt_str(fig, one, "name", name, err);
		if (!rc)
			rc = check_nums(fig, one, xk, name, &nx, err);
		if (!rc)
			rc = check_nums(fig, one, yk, name, &ny, err);
		if (rc)
			return rc;
		if (nx != ny)
			return fig_fail(err, name, one,
					"figure '%s': series %zu: '%s' has %zu values but '%s' has %zu",
					fig_label(fig), i + 1, xk, nx, yk, ny);
	}
	return 0;
}

/* Optional "yrange": [lo, hi] with lo < hi (a fixed scale: 0-1, 0-0.5). */
static int check_yrange(const struct vpa_json *fig, const char *name, struct vpa_err *err)
{
	const struct vpa_json *y = vpa_json_get(fig, "yrange");
	if (!y || y->type == VPA_JSON_NULL)
		return 0;
	if (y->type != VPA_JSON_ARR || y->n != 2 || y->items[0]->type != VPA_JSON_NUM ||
	    y->items[1]->type != VPA_JSON_NUM || !(y->items[0]->num < y->items[1]->num) ||
	    !isfinite(y->items[0]->num) || !isfinite(y->items[1]->num))
		return fig_fail(err, name, y, "figure '%s': 'yrange' must be [low, high] with low < high",
				fig_label(fig));
	return 0;
}

int vpa_plot_check(const struct vpa_json *fig, const char *name, struct vpa_err *err)
{
	if (!fig || fig->type != VPA_JSON_OBJ)
		return fig_fail(err, name, fig, "a figure must be an object");
	const struct vpa_json *t = vpa_json_get(fig, "type");
	if (!t)
		return fig_fail(err, name, fig, "figure '%s': missing 'type'", fig_label(fig));
	int rc = check_opt_str(fig, fig, "title", name, err);
	if (!rc)
		rc = check_opt_str(fig, fig, "id", name, err);
	if (rc)
		return rc;
	const char *type = t->type == VPA_JSON_STR ? t->str : "";
	if (!strcmp(type, "det")) {
		rc = check_series(fig, "p_fa", "p_miss", name, err);
		const struct vpa_json *s = vpa_json_get(fig, "series");
		for (size_t i = 0; !rc && i < s->n; i++)
			rc = check_opt_num(fig, s->items[i], "eer", name, err);
		return rc;
	}
	if (!strcmp(type, "lines")) {
		rc = check_opt_str(fig, fig, "xlabel", name, err);
		if (!rc)
			rc = check_opt_str(fig, fig, "ylabel", name, err);
		const struct vpa_json *lx = vpa_json_get(fig, "logx");
		if (!rc && lx && lx->type != VPA_JSON_BOOL && lx->type != VPA_JSON_NULL)
			rc = fig_fail(err, name, lx, "figure '%s': 'logx' must be true or false",
				      fig_label(fig));
		const struct vpa_json *tl = vpa_json_get(fig, "xticlabels");
		if (!rc && tl && tl->type != VPA_JSON_NULL) {
			int ok = tl->type == VPA_JSON_ARR;
			for (size_t i = 0; ok && i < tl->n; i++)
				ok = tl->items[i]->type == VPA_JSON_STR;
			if (!ok)
				rc = fig_fail(err, name, tl,
					      "figure '%s': 'xticlabels' must be an array of strings",
					      fig_label(fig));
		}
		if (!rc)
			rc = check_yrange(fig, name, err);
		return rc ? rc : check_series(fig, "x", "y", name, err);
	}
	if (!strcmp(type, "linkability")) {
		static const char *keys[] = {"centers", "p_mated", "p_non", "d_local"};
		size_t n[4];
		for (int k = 0; k < 4; k++)
			if ((rc = check_nums(fig, fig, keys[k], name, &n[k], err)))
				return rc;
		for (int k = 1; k < 4; k++)
			if (n[k] != n[0])
				return fig_fail(err, name, fig,
						"figure '%s': '%s' has %zu values but 'centers' has %zu",
						fig_label(fig), keys[k], n[k], n[0]);
		rc = check_opt_num(fig, fig, "dsys", name, err);
		return rc ? rc : check_opt_num(fig, fig, "omega", name, err);
	}
	if (!strcmp(type, "bars")) {
		rc = check_opt_str(fig, fig, "ylabel", name, err);
		const struct vpa_json *c = vpa_json_get(fig, "categories");
		int ok = c && c->type == VPA_JSON_ARR && c->n > 0;
		for (size_t i = 0; ok && i < c->n; i++)
			ok = c->items[i]->type == VPA_JSON_STR;
		if (!rc && !ok)
			rc = fig_fail(err, name, c ? c : fig,
				      "figure '%s': 'categories' must be a non-empty array of strings",
				      fig_label(fig));
		const struct vpa_json *s = vpa_json_get(fig, "series");
		if (!rc && (!s || s->type != VPA_JSON_ARR || s->n == 0))
			rc = fig_fail(err, name, s ? s : fig, "figure '%s': 'series' must be a non-empty array",
				      fig_label(fig));
		for (size_t i = 0; !rc && i < s->n; i++) {
			size_t n = 0;
			if (!(rc = check_opt_str(fig, s->items[i], "name", name, err)) &&
			    !(rc = check_nums(fig, s->items[i], "y", name, &n, err)) && n != c->n)
				rc = fig_fail(err, name, s->items[i],
					      "figure '%s': series %zu: 'y' has %zu values but there are %zu "
					      "categories", fig_label(fig), i + 1, n, c->n);
		}
		return rc ? rc : check_yrange(fig, name, err);
	}
	return fig_fail(err, name, t, "figure '%s': unknown type '%s' (expected det, linkability, lines or bars)",
			fig_label(fig), t->type == VPA_JSON_STR ? t->str : "(not a string)");
}

