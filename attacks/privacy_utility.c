/*
 * attacks/privacy_utility.c - the privacy-utility figure of a run (issue 30
 * item 4): for each linkage attack on anonymised speech whose records carry
 * the target's WER cost (wer_increase, attacks/linkage.c set_utility), and
 * for each sweep value, one point: x = the WER increase in percentage points,
 * y = the EER of the strongest attacker (the lowest EER of the pooled
 * records, the unprotected baseline left out: it attacks no anonymisation).
 * One series per point, so that each anonymiser or level is named in the key
 * and no line suggests an order between them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attacks/attacks.h"

/* a pooled record of an attacker of anonymised speech: sub "ATTACKER", not
 * the baseline, no per-list or per-gender split */
static int pooled_attacker(const struct vpa_json *rec)
{
	const char *sub = vpa_json_get_str(rec, "sub");
	return sub && !strchr(sub, '/') && strcmp(sub, "baseline") && !vpa_json_get(rec, "gender");
}

static int same_sweep(const struct vpa_json *a, const struct vpa_json *b)
{
	int na = !a || a->type == VPA_JSON_NULL, nb = !b || b->type == VPA_JSON_NULL;
	if (na || nb)
		return na && nb;
	if (a->type != b->type)
		return 0;
	return a->type == VPA_JSON_NUM ? a->num == b->num
	       : a->type == VPA_JSON_STR ? !strcmp(a->str, b->str)
					 : 0;
}

int vpa_privacy_utility_figure(const struct vpa_json *records, const char *sweep_param,
			       struct vpa_json *figures)
{
	struct vpa_json *series = vpa_json_arr();
	for (size_t r = 0; records && r < records->n; r++) {
		const struct vpa_json *rec = records->items[r];
		const char *aid = vpa_json_get_str(rec, "attack");
		const struct vpa_json *sw = vpa_json_get(rec, "sweep");
		if (!aid || !pooled_attacker(rec) ||
		    !isfinite(vpa_json_get_num(vpa_json_get(rec, "metrics"), "wer_increase", NAN)))
			continue;
		/* the first record of its (attack, sweep value) makes the point */
		int seen = 0;
		for (size_t q = 0; q < r && !seen; q++) {
			const struct vpa_json *o = records->items[q];
			const char *oa = vpa_json_get_str(o, "attack");
			seen = oa && !strcmp(oa, aid) && pooled_attacker(o) &&
			       same_sweep(vpa_json_get(o, "sweep"), sw);
		}
		if (seen)
			continue;
		double best = INFINITY, wer = NAN;
		const char *who = NULL;
		for (size_t q = r; q < records->n; q++) {
			const struct vpa_json *o = records->items[q];
			const char *oa = vpa_json_get_str(o, "attack");
			if (!oa || strcmp(oa, aid) || !pooled_attacker(o) ||
			    !same_sweep(vpa_json_get(o, "sweep"), sw))
				continue;
			const struct vpa_json *m = vpa_json_get(o, "metrics");
			double e = vpa_json_get_num(m, "eer", NAN);
			if (isfinite(e) && e < best) {
				best = e;
				wer = vpa_json_get_num(m, "wer_increase", NAN);
				who = vpa_json_get_str(o, "sub");
			}
		}
		if (!who || !isfinite(wer))
			continue;
		char who_w[64];
		snprintf(who_w, sizeof(who_w), "%s", who);
		for (char *p = who_w; *p; p++)
			*p = *p == '_' ? '-' : *p; /* attackers in words, as the summary names them */
		who = who_w;
		char name[512];
		if (sw && sw->type == VPA_JSON_NUM)
			snprintf(name, sizeof(name), "%s, %s = %g (%s)", aid,
				 sweep_param ? sweep_param : "sweep", sw->num, who);
		else if (sw && sw->type == VPA_JSON_STR)
			snprintf(name, sizeof(name), "%s, %s = %s (%s)", aid,
				 sweep_param ? sweep_param : "sweep", sw->str, who);
		else
			snprintf(name, sizeof(name), "%s (%s)", aid, who);
		struct vpa_json *one = vpa_json_obj(), *xs = vpa_json_arr(), *ys = vpa_json_arr();
		vpa_json_push(xs, vpa_json_num(100 * wer));
		vpa_json_push(ys, vpa_json_num(100 * best));
		vpa_json_set_str(one, "name", name);
		vpa_json_set(one, "x", xs);
		vpa_json_set(one, "y", ys);
		vpa_json_push(series, one);
	}
	if (!series->n) {
		vpa_json_free(series);
		return 0;
	}
	struct vpa_json *f = vpa_json_obj();
	vpa_json_set_str(f, "type", "lines");
	vpa_json_set_str(f, "id", VPA_PRIVACY_UTILITY_FIG);
	vpa_json_set_str(f, "title", "Privacy against utility: the strongest attacker's EER and "
				     "the WER cost of the anonymisation");
	vpa_json_set_str(f, "xlabel", "WER increase (percentage points, anonymised - original)");
	vpa_json_set_str(f, "ylabel", "EER of the strongest attacker (%)");
	/* the EER's whole scale, 0 to 50% (chance), so that a point's height reads
	 * as how far from chance the strongest attacker stays */
	struct vpa_json *yr = vpa_json_arr();
	vpa_json_push(yr, vpa_json_num(0));
	vpa_json_push(yr, vpa_json_num(50));
	vpa_json_set(f, "yrange", yr);
	vpa_json_set(f, "series", series);
	vpa_json_push(figures, f);
	return 1;
}
