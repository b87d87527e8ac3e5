/*
 * attacks/linkage_legal_fig.c - the two figures of the Article 29 criteria
 * of a `linkage` attack (issue 29 item 5), drawn from its pooled records'
 * `legal` objects (the first conversation length): pi_link against the
 * candidate set size N' with the chance curve 1/N', and pi_sing against the
 * set size N with the trivial predicate's (1 - 1/N)^(N-1) and its limit
 * e^-1.  Both are `lines` figures (reports/README.md), log x.
 */
#include "attacks/linkage_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* points of the chance curve: dense enough to read as a curve on a log axis */
enum { CURVE_PTS = 40 };

static struct vpa_json *series(const char *name, struct vpa_json *x, struct vpa_json *y)
{
	struct vpa_json *s = vpa_json_obj();
	vpa_json_set_str(s, "name", name);
	vpa_json_set(s, "x", x);
	vpa_json_set(s, "y", y);
	return s;
}

/* one attacker's points of grid `key` ("pi_link" / "pi_sing"): the numbered
 * set sizes (`all` has no number in the object, and sits at the largest
 * one's end of the axis anyway) */
static size_t points(const struct vpa_json *len0, const char *key, struct vpa_json *x,
		     struct vpa_json *y, double *xmax)
{
	const struct vpa_json *g = vpa_json_get(len0, key);
	size_t n = 0;
	for (size_t i = 0; g && g->type == VPA_JSON_OBJ && i < g->n; i++) {
		const char *k = g->keys[i];
		const struct vpa_json *v = g->items[i];
		char *end;
		double nx = strtod(k, &end);
		if (*end || !v || v->type != VPA_JSON_OBJ)
			continue; /* `all`, or null (N above the speakers) */
		double val = vpa_json_get_num(v, "value", NAN);
		if (!isfinite(val))
			continue;
		vpa_json_push(x, vpa_json_num(nx));
		vpa_json_push(y, vpa_json_num(val));
		*xmax = fmax(*xmax, nx);
		n++;
	}
	return n;
}

void vpa_linkage_legal_figures(const char *id, const char *target_id,
			       const struct vpa_json *records, size_t from,
			       struct vpa_json *figures)
{
	static const char *const key[2] = {"pi_link", "pi_sing"};
	for (int f = 0; f < 2; f++) {
		struct vpa_json *ser = vpa_json_arr();
		double xmax = 0;
		size_t L = 0, any = 0;
		for (size_t i = from; i < records->n; i++) {
			const struct vpa_json *r = records->items[i];
			const char *sub = vpa_json_get_str(r, "sub");
			const struct vpa_json *bl = vpa_json_get(vpa_json_get(r, "legal"), "by_length");
			if (!sub || strchr(sub, '/') || !bl || !bl->n)
				continue;
			L = (size_t)vpa_json_get_num(bl->items[0], "L", 1);
			struct vpa_json *x = vpa_json_arr(), *y = vpa_json_arr();
			any += points(bl->items[0], key[f], x, y, &xmax) > 0;
			vpa_json_push(ser, series(sub, x, y));
		}
		if (!any || xmax < 2) {
			vpa_json_free(ser);
			continue;
		}
		/* the chance curve over [2, xmax], log-spaced, integers (set sizes) */
		struct vpa_json *cx = vpa_json_arr(), *cy = vpa_json_arr();
		double last = 0;
		for (int k = 0; k < CURVE_PTS; k++) {
			double n = round(2 * pow(xmax / 2, (double)k / (CURVE_PTS - 1)));
			if (n == last)
				continue;
			last = n;
			vpa_json_push(cx, vpa_json_num(n));
			vpa_json_push(cy, vpa_json_num(f ? vpa_pising_baseline((size_t)n) : 1 / n));
		}
		vpa_json_push(ser, series(f ? "trivial predicate (1-1/N)^(N-1)" : "chance 1/N'", cx,
					  cy));
		if (f) {
			struct vpa_json *ex = vpa_json_arr(), *ey = vpa_json_arr();
			vpa_json_push(ex, vpa_json_num(2));
			vpa_json_push(ex, vpa_json_num(xmax));
			vpa_json_push(ey, vpa_json_num(exp(-1)));
			vpa_json_push(ey, vpa_json_num(exp(-1)));
			vpa_json_push(ser, series("e^-1 (large N)", ex, ey));
		}
		struct vpa_json *fig = vpa_json_obj(), *yr = vpa_json_arr();
		char fid[256], title[512], xl[128];
		snprintf(fid, sizeof(fid), "%s-%s", id, f ? "pi-sing" : "pi-link");
		snprintf(title, sizeof(title), "%s per attacker against %s, conversations of %zu "
			 "utterance%s (%s on %s)", f ? "Singling out pi_sing" : "Linkability pi_link",
			 f ? "N" : "N'", L, L == 1 ? "" : "s", id, target_id);
		snprintf(xl, sizeof(xl), "%s", f ? "N (test speakers in the set)"
						 : "N' (candidate enrolment speakers)");
		vpa_json_set_str(fig, "type", "lines");
		vpa_json_set_str(fig, "id", fid);
		vpa_json_set_str(fig, "title", title);
		vpa_json_set_str(fig, "xlabel", xl);
		vpa_json_set_str(fig, "ylabel", f ? "pi_sing (isolation probability)"
						  : "pi_link (closed-set linkage probability)");
		vpa_json_set(fig, "logx", vpa_json_bool(1));
		vpa_json_push(yr, vpa_json_num(0));
		vpa_json_push(yr, vpa_json_num(1));
		vpa_json_set(fig, "yrange", yr);
		vpa_json_set(fig, "series", ser);
		vpa_json_push(figures, fig);
	}
}
