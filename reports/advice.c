/*
 * reports/advice.c - rule-based recommendations.  Each rule below reads the
 * records of the run and, when its condition holds, says what to do with the
 * numbers that triggered it; every rule names its source.  Rules (also listed
 * in reports/README.md "Recommendations"):
 *
 *  R1 lazy-informed linkability >= 0.3 -> per-utterance pseudo-speakers
 *     (Srivastava et al. 2020: utterance-level assignment resists the
 *     lazy-informed attacker better than speaker-level)
 *  R2 semi-informed or informed EER < 20% -> the anonymiser does not resist
 *     retraining; stronger anonymisation before release (VoicePrivacy 2020
 *     evaluation plan: semi-informed is the attacker to report)
 *  R3 exposure >= 90% of its maximum -> DP-SGD and deduplication; and, when a
 *     DP record stays below half the maximum, say so (Carlini et al. 2019)
 *  R4 d-exposure (of the canary's label, else the class mean) above its
 *     controls by 1 bit -> deduplicate / DP (COMPRISE D2.3)
 *  R5 A1 footprint EER < 10% at a layer -> do not share that layer's update
 *     unprotected (Tomashenko et al. 2022)
 *  R6 update linkage (any regime) linkability >= 0.5 -> local DP or secure
 *     aggregation (Granqvist et al. 2020)
 *  R7 a DP regime with epsilon > 10 -> weak guarantee (Dwork and Roth 2014)
 *  R8 values that cannot be trusted -> more trials (metrics/README.md
 *     "Reliability": at least 100 target trials)
 *  R9 Cllr above 1 bit -> calibrate before reading Cllr; read Cllr_min
 *     (Brümmer and du Preez 2006)
 *  R10 simulated targets -> repeat on the real system
 *  R11 a failed gate -> do not release until it holds
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/doc.h"

static const char *kind_of(const struct vpa_json *r, const char *attack)
{
	return vpa_json_get_str(vpa_attack_find(r, attack), "kind");
}

static int kind_is(const struct vpa_json *r, const struct vpa_json *rec, const char *kind)
{
	const char *k = kind_of(r, vpa_json_get_str(rec, "attack"));
	return k && !strcmp(k, kind);
}

static int sub_is(const struct vpa_json *rec, const char *sub)
{
	const char *s = vpa_json_get_str(rec, "sub");
	return s && !strcmp(s, sub);
}

/* Whether the attack's target is anonymised by the x-vector anonymiser
 * (pseudo-speakers: its info has "anonymiser"), whose advice (pseudo-speaker
 * choice and assignment) does not apply to signal-level methods (McAdams). */
static int xvec_anon(const struct vpa_json *r, const char *attack)
{
	const struct vpa_json *a = vpa_json_get(vpa_json_get(vpa_attack_target(r, attack), "info"),
						"anonymiser");
	return a && a->type == VPA_JSON_OBJ;
}

/* Whether rule `rule` already fired for (attack, sub); marks it fired. */
struct fired {
	char key[128][96];
	size_t n;
};

static int once(struct fired *f, const char *rule, const char *attack, const char *sub)
{
	char k[96];
	snprintf(k, sizeof(k), "%s/%s/%s", rule, attack ? attack : "", sub ? sub : "");
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->key[i], k))
			return 0;
	if (f->n < 128)
		snprintf(f->key[f->n++], sizeof(f->key[0]), "%s", k);
	return 1;
}

void vpa_doc_advice(const struct vpa_json *r, struct vpa_doc *d)
{
	vpa_doc_head(d, 1, "recommendations", "Recommendations", 1);
	vpa_doc_para(d, VPA_P_PLAIN, "Each recommendation follows from a rule applied to this run's "
		     "numbers; the rule's source is given in brackets.");
	struct vpa_blk *l = vpa_doc_list(d);
	const struct vpa_json *recs = vpa_json_get(r, "records");
	size_t n = recs && recs->type == VPA_JSON_ARR ? recs->n : 0;
	int r3_done = 0, r8 = 0, r9 = 0, r7_done = 0;
	struct fired *f = xcalloc(1, sizeof(*f));
	for (size_t i = 0; i < n; i++) {
		const struct vpa_json *rec = recs->items[i];
		const char *a = vpa_json_get_str(rec, "attack"), *s = vpa_json_get_str(rec, "sub");
		double eer = vpa_rec_num(rec, "eer"), link = vpa_rec_num(rec, "linkability");
		int trusted_link = !vpa_rec_unreliable(rec, "linkability");
		int trusted_eer = !vpa_rec_unreliable(rec, "eer");
		if (sub_is(rec, "lazy_informed") && isfinite(link) && link >= 0.3 && trusted_link &&
		    once(f, "R1", a, s))
			vpa_doc_item(l, "%s: the lazy-informed attacker reaches a linkability of %.2f "
				     "(D\u2194sys, 0: recordings cannot be linked, 1: fully linkable): %s "
				     "[R1; Srivastava et al. 2020, Design choices for x-vector based "
				     "speaker anonymization]", a, link,
				     xvec_anon(r, a) ? "assign pseudo-speakers per utterance rather than "
						       "per speaker, so that one speaker's recordings do "
						       "not share a voice."
						     : "anonymise each utterance with its own parameters "
						       "rather than one setting per speaker, so that one "
						       "speaker's recordings do not share a voice.");
		/* identification: the largest population, as the summary */
		int ident = kind_is(r, rec, "identification");
		char popw[48] = "";
		if (ident && isfinite(vpa_rec_num(rec, "population")))
			snprintf(popw, sizeof popw, " in a population of %.0f",
				 vpa_rec_num(rec, "population"));
		if ((sub_is(rec, "semi_informed") || sub_is(rec, "informed")) && isfinite(eer) &&
		    eer < 0.2 && trusted_eer &&
		    (!ident || vpa_rec_representative(recs, i, "identification")) &&
		    once(f, "R2", a, s))
		{
			/* what the current anonymisation already costs (issue 30), when measured */
			double dw = vpa_rec_num(rec, "wer_increase");
			char cost[160] = "";
			if (isfinite(dw))
				snprintf(cost, sizeof cost, " The current one already costs %+.1f WER points "
					 "(the utility section): weigh a stronger one against that.",
					 100 * dw);
			vpa_doc_item(l, "%s: the %s attacker, who retrains on anonymised speech, reaches "
				     "an EER of %.1f%%%s: the anonymisation does not resist an attacker who "
				     "knows the method. Use a stronger anonymisation (%s) and "
				     "gate on this attacker before release.%s [R2; Tomashenko et al. 2020, "
				     "VoicePrivacy evaluation plan]", a, s, 100 * eer, popw,
				     xvec_anon(r, a) ? "e.g. more distant pseudo-speakers, or one that "
						       "also alters the content features"
						     : "e.g. for a signal-level method such as McAdams, "
						       "a setting farther from the original voice, or "
						       "an x-vector-based anonymiser",
				     cost);
		}
		if (kind_is(r, rec, "exposure") && !r3_done) {
			double e = vpa_rec_num(rec, "exposure"), mx = vpa_rec_num(rec, "max_exposure");
			double ins = vpa_rec_num(rec, "insertions"), eps = vpa_rec_num(rec, "epsilon");
			if (isfinite(e) && isfinite(mx) && mx > 0 && e >= 0.9 * mx && !isfinite(eps)) {
				r3_done = 1;
				vpa_doc_item(l, "%s: exposure reaches %.1f of at most %.1f bits at %.0f "
					     "insertions: the model memorised the secret. Train with DP-SGD "
					     "and remove repeated sensitive sequences from the training "
					     "text. [R3; Carlini et al. 2019, The Secret Sharer]", a, e, mx, ins);
			}
		}
		if (kind_is(r, rec, "exposure")) {
			double e = vpa_rec_num(rec, "exposure"), mx = vpa_rec_num(rec, "max_exposure");
			double eps = vpa_rec_num(rec, "epsilon");
			if (isfinite(eps) && isfinite(e) && isfinite(mx) && e < 0.5 * mx)
				vpa_doc_item(l, "%s: at epsilon %.3g the exposure of %s stayed at %.1f of "
					     "%.1f bits: keep that DP setting. [R3; Carlini et al. 2019]",
					     a, eps, s ? s : "the canary", e, mx);
		}
		if (kind_is(r, rec, "d_exposure")) {
			/* the canary label's value when there is one (the class mean
			 * falls as the label is learnt), else the class mean */
			double e = vpa_rec_num(rec, "d_exposure_label"),
			       ch = vpa_rec_num(rec, "d_exposure_label_chance");
			if (!isfinite(e) || !isfinite(ch)) {
				e = vpa_rec_num(rec, "d_exposure");
				ch = vpa_rec_num(rec, "d_exposure_chance");
			}
			double k = vpa_rec_num(rec, "repetitions");
			if (isfinite(e) && isfinite(ch) && e > ch + 1)
				vpa_doc_item(l, "%s: a sentence repeated %.0f times reaches a d-exposure of "
					     "%.2f bits against %.2f for unseen ones: deduplicate the training "
					     "text or train with DP. [R4; COMPRISE D2.3 2021, d-exposure]",
					     a, k, e, ch);
		}
		if (kind_is(r, rec, "a1_footprint") && isfinite(eer) && eer < 0.1 && once(f, "R5", a, NULL)) {
			double layer = vpa_json_get_num(rec, "layer", NAN);
			vpa_doc_item(l, "%s: the personalised models give their speaker away at hidden "
				     "layer %.0f (%s, EER %.1f%%%s): do not share that layer's update "
				     "without protection (DP noise, or keep it on the device). [R5; "
				     "Tomashenko et al. 2022]", a, layer, s ? s : "", 100 * eer,
				     trusted_eer ? "" : ", from few trials");
		}
		if (kind_is(r, rec, "update_linkage") && isfinite(link) && link >= 0.5 &&
		    once(f, "R6", a, s))
			vpa_doc_item(l, "%s: with the %s regime two updates of one user can be linked "
				     "(linkability %.2f): add local DP or secure aggregation so the server "
				     "cannot follow a user across rounds. [R6; Granqvist et al. 2020]",
				     a, s ? s : "default", link);
		double eps = vpa_rec_num(rec, "epsilon");
		if (kind_is(r, rec, "fl_training") && isfinite(eps) && eps > 10 && r7_done < 3) {
			r7_done++;
			vpa_doc_item(l, "%s: the %s regime guarantees only epsilon %.3g (above 10): "
				     "treat it as a weak guarantee; lower the noise-free rounds or raise "
				     "the noise. [R7; Dwork and Roth 2014]", a, s ? s : "", eps);
		}
		const struct vpa_json *u = vpa_json_get(rec, "unreliable");
		for (size_t k = 0; u && u->type == VPA_JSON_OBJ && k < u->n; k++)
			if (u->items[k]->type == VPA_JSON_STR && strcmp(u->items[k]->str, "undefined value"))
				r8 = 1;
		double cllr = vpa_rec_num(rec, "cllr");
		r9 |= isfinite(cllr) && cllr > 1;
	}
	free(f);
	if (r8)
		vpa_doc_item(l, "Some values cannot be trusted (grey in the tables): run the attacks "
			     "with more speakers or trials (at least 100 target trials) before relying "
			     "on them. [R8; metrics/README.md, Reliability]");
	if (r9)
		vpa_doc_item(l, "Some scores have a Cllr above 1 bit: they are not calibrated, so read "
			     "Cllr_min; calibrate the system's scores if they are shown to anyone as "
			     "likelihood ratios. [R9; Brümmer and du Preez 2006]");
	if (d->simulated)
		vpa_doc_item(l, "Repeat the audit on the real system's data before drawing conclusions "
			     "from the simulated target%s (%s). [R10]", strchr(d->simulated, ',') ? "s" : "",
			     d->simulated);
	if (d->status == VPA_P_FAIL)
		vpa_doc_item(l, "Do not release the system until every gate holds; the failed gates "
			     "are listed in the summary. [R11; the scenario's gates]");
	if (l->n_items == 0)
		vpa_doc_item(l, "No rule applies to this run's numbers: keep the gates in CI so that a "
			     "regression is caught.");
}
