/*
 * reports/risk.c - the risk rating per target that the executive summary
 * gives when the scenario sets no gates (issue 25 item 4g), in place of a
 * PASS/FAIL verdict.  Rules: below, and reports/README.md "Summary".
 */
#include <math.h>
#include <string.h>

#include "reports/doc.h"

/*
 * Risk rating of a target when the scenario sets no gates (issue 25 item 4g):
 * vpaudit's reading of the strongest trustworthy attack on it, never a
 * requirement.  Levels: 3 high, 2 medium, 1 low; the rules (reports/README.md
 * "Risk rating"):
 *   EER (verification, linkage, footprints, update linkage): < 10% high,
 *     < 25% medium;
 *   identification: top-1 >= 50% high, >= 10 x chance (10/N) medium;
 *   exposure: >= 90% of its maximum high, >= 50% medium;
 *   d-exposure of the canary label: memorised (above the controls' 90th
 *     percentile and their mean + 1 bit) high, above the 90th percentile medium.
 * The references are not rated: the `baseline` attacker (no anonymisation)
 * and the `none` DP regime; nor values that cannot be trusted (counted) nor
 * epsilons (bounds, not attacks).
 */
static int rec_risk(const struct vpa_json *r, const struct vpa_json *rec, const char *kind,
		    int *untrusted, struct vpa_buf *why)
{
	const char *a = vpa_json_get_str(rec, "attack"), *sub = vpa_json_get_str(rec, "sub");
	if (sub && (!strncmp(sub, "baseline", 8) || !strcmp(sub, "none")))
		return 0;
	char who[160];
	snprintf(who, sizeof who, "%s%s%s%s", a ? a : "?", sub ? " (" : "", sub ? sub : "",
		 sub ? ")" : "");
	(void)r;
	if (kind && !strcmp(kind, "identification")) {
		double t1 = vpa_rec_num(rec, "top1"), n = vpa_rec_num(rec, "population");
		if (!isfinite(t1) || !(n >= 1))
			return 0;
		if (vpa_rec_unreliable(rec, "top1")) {
			(*untrusted)++;
			return 0;
		}
		vpa_buf_printf(why, "%s picks the true speaker out of %.0f people first time ", who, n);
		vpa_put_pct(why, t1);
		vpa_buf_puts(why, " of the time (chance ");
		vpa_put_pct(why, 1 / n);
		vpa_buf_puts(why, ")");
		return t1 >= 0.5 ? 3 : t1 >= 10 / n ? 2 : 1;
	}
	if (kind && !strcmp(kind, "exposure")) {
		double e = vpa_rec_num(rec, "exposure"), mx = vpa_rec_num(rec, "max_exposure");
		if (!isfinite(e) || !(mx > 0))
			return 0;
		if (vpa_rec_unreliable(rec, "exposure")) {
			(*untrusted)++;
			return 0;
		}
		vpa_buf_printf(why, "the canary %s reaches an exposure of %.1f of at most %.1f bits",
			       sub ? sub : "", e, mx);
		return e >= 0.9 * mx ? 3 : e >= 0.5 * mx ? 2 : 1;
	}
	if (kind && !strcmp(kind, "d_exposure")) {
		double le = vpa_rec_num(rec, "d_exposure_label"),
		       lc = vpa_rec_num(rec, "d_exposure_label_chance"),
		       lp = vpa_rec_num(rec, "d_exposure_label_chance_p90");
		if (!isfinite(le) || !isfinite(lc))
			return 0;
		if (vpa_rec_unreliable(rec, "d_exposure_label")) {
			(*untrusted)++;
			return 0;
		}
		vpa_buf_printf(why, "%s: the canary label's d-exposure is %.2f bits against %.2f for "
			       "unseen control words", who, le, lc);
		int above = le > (isfinite(lp) ? lp : lc);
		return above && le - lc >= 1 ? 3 : above ? 2 : 1;
	}
	if (kind && !strcmp(kind, "fl_training"))
		return 0;
	double eer = vpa_rec_num(rec, "eer");
	if (!isfinite(eer))
		return 0;
	if (vpa_rec_unreliable(rec, "eer")) {
		(*untrusted)++;
		return 0;
	}
	vpa_buf_printf(why, "%s reaches an EER of ", who);
	vpa_put_pct(why, eer);
	return eer < 0.10 ? 3 : eer < 0.25 ? 2 : 1;
}

void vpa_doc_risk(const struct vpa_json *r, struct vpa_doc *d)
{
	const struct vpa_json *tg = vpa_json_get(r, "targets"), *recs = vpa_json_get(r, "records");
	vpa_doc_para(d, VPA_P_PLAIN,
		     "Risk rating per target: vpaudit's reading of the strongest attack whose value "
		     "can be trusted, not a requirement of the scenario. HIGH: an attacker links or "
		     "verifies with an EER below 10%%, picks a speaker out first time half the time "
		     "or more, or a canary or label is memorised; MEDIUM: an EER below 25%%, "
		     "identification at ten times chance or more, partial memorisation; LOW: "
		     "neither. The baseline attacker (no anonymisation) and the 'none' DP regime "
		     "are references and are not rated; epsilons are bounds, not attacks.");
	struct vpa_blk *l = vpa_doc_list(d);
	static const char *const names[] = {"not rated", "LOW", "MEDIUM", "HIGH"};
	for (size_t t = 0; tg && tg->type == VPA_JSON_ARR && t < tg->n; t++) {
		const char *tid = vpa_json_get_str(tg->items[t], "id");
		int best = 0, untrusted = 0;
		struct vpa_buf why, w;
		vpa_buf_init(&why);
		vpa_buf_init(&w);
		for (size_t i = 0; tid && recs && recs->type == VPA_JSON_ARR && i < recs->n; i++) {
			const struct vpa_json *rec = recs->items[i];
			const char *a = vpa_json_get_str(rec, "attack");
			const struct vpa_json *at = vpa_attack_find(r, a);
			const char *atg = vpa_json_get_str(at, "target");
			if (!atg || strcmp(atg, tid))
				continue;
			w.len = 0;
			if (w.data)
				w.data[0] = 0;
			int lv = rec_risk(r, rec, vpa_json_get_str(at, "kind"), &untrusted, &w);
			if (lv > best) {
				best = lv;
				why.len = 0;
				vpa_buf_puts(&why, vpa_buf_str(&w));
			}
		}
		struct vpa_buf item;
		vpa_buf_init(&item);
		vpa_buf_printf(&item, "%s: %s", tid ? tid : "?", names[best]);
		if (best)
			vpa_buf_printf(&item, " (the strongest attack: %s).", vpa_buf_str(&why));
		else
			vpa_buf_puts(&item, ": no attack on it gave a value that can be trusted.");
		if (untrusted)
			vpa_buf_printf(&item, " %d value%s that cannot be trusted (too few trials) %s "
				       "not rated.", untrusted, untrusted == 1 ? "" : "s",
				       untrusted == 1 ? "is" : "are");
		if (vpa_json_get_str(tg->items[t], "id") && vpa_json_get(tg->items[t], "simulated") &&
		    vpa_json_get(tg->items[t], "simulated")->type == VPA_JSON_BOOL &&
		    vpa_json_get(tg->items[t], "simulated")->boolean)
			vpa_buf_puts(&item, " The target is simulated: the rating shows the method.");
		vpa_doc_item(l, "%s", item.data);
		vpa_buf_release(&item);
		vpa_buf_release(&why);
		vpa_buf_release(&w);
	}
}
