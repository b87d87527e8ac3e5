/*
 * reports/sec_dp.c - the section "Is the claimed guarantee credible?" (issue
 * 28 item 5): for every record that audits a DP claim (metrics.dp_audit, the
 * convention of the DP audit records), the claimed epsilon with its
 * accountant, the audited lower bound with its method and confidence, the
 * distance between them, and what that means in words that are true in every
 * case printed.  An empirical lower bound can only ever refute a claim: one
 * above the claim proves a defect, one below it (however far) proves nothing
 * about the claim, since a stronger attack might show more.  Records outside
 * the guarantee's scope are listed as such, never compared.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/doc.h"

/* The dp_audit object of a record: in its metrics (the convention), else beside them. */
static const struct vpa_json *audit_of(const struct vpa_json *rec)
{
	const struct vpa_json *a = vpa_json_get(vpa_json_get(rec, "metrics"), "dp_audit");
	if (!a)
		a = vpa_json_get(rec, "dp_audit");
	return a && a->type == VPA_JSON_OBJ ? a : NULL;
}

static const char *method_words(const char *m)
{
	if (!m)
		return "an unnamed method";
	if (!strcmp(m, "one-run"))
		return "the one-run audit of Steinke, Nasr, Jagielski 2023";
	if (!strcmp(m, "cp"))
		return "Clopper-Pearson bounds on the attack's error rates (Jagielski, Ullman, Oprea "
		       "2020)";
	if (!strcmp(m, "gdp"))
		return "the GDP audit of Nasr et al. 2023, which assumes a Gaussian trade-off curve";
	return m;
}

void vpa_dp_meaning(double lb, double claim, double alpha, struct vpa_buf *out)
{
	double conf = 100 * (1 - alpha);
	if (!isfinite(lb) || !isfinite(claim)) {
		vpa_buf_puts(out, "The audit cannot be read: its lower bound or the claim is undefined, "
				  "so it neither supports nor refutes the guarantee.");
	} else if (lb > claim) {
		vpa_buf_printf(out, "The audited lower bound exceeds the claim by %.3g: at %.4g%% "
			       "confidence the claimed guarantee is false. This proves a defect in the "
			       "implementation or in the accounting (noise not applied, clipping "
			       "missing, a misstated sampling rate or neighbouring relation, a wrong "
			       "accountant), not a weakness of the claim's size.", lb - claim, conf);
	} else if (lb <= 0) {
		vpa_buf_printf(out, "The audit demonstrated no leakage beyond chance (lower bound 0), "
			       "so it does not contradict the claim. It does not prove the claim "
			       "either: a lower bound says only what this attack showed, and a stronger "
			       "attack or more canaries might show more; if the claim is correct, the "
			       "true epsilon lies between 0 and %.4g.", claim);
	} else {
		vpa_buf_printf(out, "The audit does not contradict the claim: it demonstrates an epsilon "
			       "of at least %.4g, %.3g%% of the claimed %.4g. A lower bound below the "
			       "claim does not prove the claim (a stronger attack might show more); if "
			       "the claim is correct, the true epsilon lies between %.4g and %.4g.",
			       lb, 100 * lb / claim, claim, lb, claim);
	}
}

static void one_audit(struct vpa_doc *d, const struct vpa_json *r, const struct vpa_json *rec,
		      const struct vpa_json *au)
{
	const char *attack = vpa_json_get_str(rec, "attack"), *sub = vpa_json_get_str(rec, "sub");
	const char *tid = attack ? vpa_json_get_str(vpa_attack_find(r, attack), "target") : NULL;
	const struct vpa_json *m = vpa_json_get(rec, "metrics");
	const char *key = vpa_json_get_str(au, "claim_key");
	double claim = vpa_json_get_num(au, "claimed_epsilon",
					vpa_json_get_num(m, key ? key : "epsilon", NAN));
	double lb = vpa_json_get_num(m, "epsilon_lower_bound", NAN);
	double alpha = vpa_json_get_num(au, "alpha", 0.05), delta = vpa_json_get_num(au, "delta", NAN);
	const char *acc = vpa_json_get_str(au, "accountant");
	const char *adj = vpa_json_get_str(au, "adjacency");
	struct vpa_buf h;
	vpa_buf_init(&h);
	vpa_buf_printf(&h, "%s: %s%s%s", tid ? tid : "target", attack ? attack : "?", sub ? "." : "",
		       sub ? sub : "");
	vpa_doc_para(d, VPA_P_LEAD, "%s", h.data);
	vpa_buf_release(&h);
	struct vpa_blk *l = vpa_doc_list(d);
	double rdp = vpa_json_get_num(m, "epsilon_rdp", NAN), pld = vpa_json_get_num(m, "epsilon_pld",
										  NAN);
	struct vpa_buf s;
	vpa_buf_init(&s);
	vpa_buf_printf(&s, "Claimed: epsilon %.4g", claim);
	if (isfinite(delta))
		vpa_buf_printf(&s, " at delta %.3g", delta);
	vpa_buf_printf(&s, " (%s accountant", acc ? acc : "unnamed");
	if (isfinite(rdp) && isfinite(pld))
		vpa_buf_printf(&s, "; RDP gives %.4g, PLD %.4g, the claim is the smaller, both being "
			       "valid upper bounds", rdp, pld);
	vpa_buf_printf(&s, ")%s%s.", adj ? ", neighbouring datasets: " : "", adj ? adj : "");
	vpa_doc_item(l, "%s", s.data);
	s.len = 0;
	const struct vpa_json *c = vpa_json_get(au, "counts");
	vpa_buf_printf(&s, "Audited lower bound: epsilon >= %.4g with %.4g%% confidence, by %s", lb,
		       100 * (1 - alpha), method_words(vpa_json_get_str(au, "method")));
	double cm = vpa_json_get_num(c, "m", NAN), cg = vpa_json_get_num(c, "guesses", NAN),
	       cv = vpa_json_get_num(c, "correct", NAN);
	if (isfinite(cm) && isfinite(cg) && isfinite(cv))
		vpa_buf_printf(&s, " (%.0f canaries, %.0f guesses, %.0f correct)", cm, cg, cv);
	vpa_buf_puts(&s, ".");
	vpa_doc_item(l, "%s", s.data);
	s.len = 0;
	if (isfinite(lb) && isfinite(claim))
		vpa_doc_item(l, "Distance: claim - lower bound = %.4g%s.", claim - lb,
			     lb > claim ? " (negative: the bound is above the claim)" : "");
	vpa_dp_meaning(lb, claim, alpha, &s);
	vpa_doc_para(d, lb > claim ? VPA_P_FAIL : VPA_P_PLAIN, "%s", s.data);
	const char *note = vpa_json_get_str(au, "note");
	if (note)
		vpa_doc_para(d, VPA_P_NOTE, "How: %s.", note);
	vpa_buf_release(&s);
}

void vpa_doc_dp(const struct vpa_json *r, struct vpa_doc *d)
{
	const struct vpa_json *recs = vpa_json_get(r, "records");
	size_t n = 0;
	for (size_t i = 0; recs && recs->type == VPA_JSON_ARR && i < recs->n; i++)
		n += audit_of(recs->items[i]) != NULL;
	if (!n)
		return;
	vpa_doc_head(d, 1, "dp-credible", "Is the claimed guarantee credible?", 1);
	vpa_doc_para(d, VPA_P_PLAIN,
		     "A differential-privacy epsilon is an upper bound on what any attacker can "
		     "achieve. An audit runs an attack and turns its success into a lower bound that "
		     "holds with a stated confidence. A lower bound above the claim proves the claim "
		     "wrong; a lower bound below it, however far, does not prove the claim.");
	for (size_t i = 0; i < recs->n; i++) {
		const struct vpa_json *rec = recs->items[i], *au = audit_of(rec);
		if (!au)
			continue;
		const char *scope = vpa_json_get_str(au, "scope");
		if (scope && !strcmp(scope, "outside")) {
			const char *why = vpa_json_get_str(au, "why");
			const char *a = vpa_json_get_str(rec, "attack"), *sub = vpa_json_get_str(rec, "sub");
			vpa_doc_para(d, VPA_P_NOTE, "%s%s%s: outside the guarantee's scope, not compared "
				     "with it%s%s.", a ? a : "?", sub ? "." : "", sub ? sub : "",
				     why ? ": " : "", why ? why : "");
			continue;
		}
		one_audit(d, r, rec, au);
	}
}
