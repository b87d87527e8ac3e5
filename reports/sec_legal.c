/*
 * reports/sec_legal.c - "Singling out / Linkability / Inference: measured vs
 * chance, for the strongest attacker" (issue 29 item 5), the report's first
 * page after the executive summary.  A data-protection officer judges
 * anonymisation by the three questions of the Article 29 Working Party's
 * Opinion 05/2014, not by an EER; Vauquier et al. (Interspeech 2025) made the
 * first two metrics for speech.  For every `linkage` attack: a table in the
 * executive summary (the first page) with one row per criterion: the
 * attacker (of the anonymised speech: the baseline is the original speech)
 * that scores highest, its value and interval, the chance level and the
 * verdict; and a section after the summary with one sentence per criterion.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/sec_legal.h"

static const char *const crit_name[3] = {"Singling out", "Linkability", "Inference"};
static const char *const crit_metric[3] = {"pi_sing", "pi_link", "inference_acc"};

const char *vpa_legal_verdict(const struct vpa_legal_cell *c)
{
	if (!isfinite(c->value))
		return "not measured";
	if (c->why)
		return "unreliable";
	if (isfinite(c->lo) && c->lo > c->chance)
		return "above chance";
	if (isfinite(c->hi) && c->hi < c->chance)
		return "below chance";
	if (!isfinite(c->lo))
		return c->value > c->chance ? "above chance (no interval)" : "at or below chance "
									      "(no interval)";
	return "not distinguishable from chance";
}

/* the first key and value of an object, or NULL */
static const struct vpa_json *first_of(const struct vpa_json *o, const char **key)
{
	if (!o || o->type != VPA_JSON_OBJ || !o->n)
		return NULL;
	*key = o->keys[0];
	return o->items[0];
}

void vpa_legal_cell_of(const struct vpa_json *rec, enum vpa_legal_crit k,
		       struct vpa_legal_cell *c)
{
	memset(c, 0, sizeof(*c));
	c->value = vpa_rec_num(rec, crit_metric[k]);
	c->lo = c->hi = c->chance = c->bacc = NAN;
	c->level = 0.95;
	c->why = vpa_rec_unreliable(rec, crit_metric[k]);
	if (k == VPA_LEGAL_INFER) {
		const struct vpa_json *in = vpa_json_get(rec, "inference");
		const struct vpa_json *a = vpa_json_get(in, "accuracy");
		c->attribute = vpa_json_get_str(in, "attribute");
		c->majority = vpa_json_get_str(in, "majority_class");
		c->level = vpa_json_get_num(in, "level", 0.95);
		c->chance = vpa_json_get_num(a, "chance", NAN);
		const struct vpa_json *ci = vpa_json_get(a, "ci");
		if (ci && ci->n == 2) {
			c->lo = ci->items[0]->type == VPA_JSON_NUM ? ci->items[0]->num : NAN;
			c->hi = ci->items[1]->type == VPA_JSON_NUM ? ci->items[1]->num : NAN;
		}
		c->bacc = vpa_json_get_num(vpa_json_get(in, "balanced_accuracy"), "value", NAN);
		return;
	}
	const struct vpa_json *lg = vpa_json_get(rec, "legal");
	const struct vpa_json *bl = vpa_json_get(lg, "by_length");
	const struct vpa_json *l0 = bl && bl->n ? bl->items[0] : NULL;
	c->level = vpa_json_get_num(lg, "level", 0.95);
	c->L = vpa_json_get_num(l0, "L", NAN);
	const struct vpa_json *v = first_of(vpa_json_get(l0, crit_metric[k]), &c->set);
	if (!v || v->type != VPA_JSON_OBJ)
		return;
	c->chance = vpa_json_get_num(v, k == VPA_LEGAL_SING ? "baseline" : "chance", NAN);
	const struct vpa_json *ci = vpa_json_get(v, "ci");
	if (ci && ci->n == 2) {
		c->lo = ci->items[0]->type == VPA_JSON_NUM ? ci->items[0]->num : NAN;
		c->hi = ci->items[1]->type == VPA_JSON_NUM ? ci->items[1]->num : NAN;
	}
}

static void put_interval(struct vpa_buf *b, const struct vpa_legal_cell *c)
{
	if (isfinite(c->lo) && isfinite(c->hi))
		vpa_buf_printf(b, " (%.0f%% interval %.3f to %.3f)", 100 * c->level, c->lo, c->hi);
	else
		vpa_buf_puts(b, " (no interval: fewer than 3 test speakers)");
}

void vpa_legal_sentence(struct vpa_buf *b, enum vpa_legal_crit k, const char *who,
			const struct vpa_legal_cell *c)
{
	const char *v = vpa_legal_verdict(c);
	vpa_buf_printf(b, "%s: ", crit_name[k]);
	if (!isfinite(c->value)) {
		vpa_buf_printf(b, "not measured%s%s%s.", c->why ? " (" : "", c->why ? c->why : "",
			       c->why ? ")" : "");
		return;
	}
	size_t L = isfinite(c->L) ? (size_t)c->L : 1;
	const char *set = c->set ? c->set : "?";
	switch (k) {
	case VPA_LEGAL_SING:
		vpa_buf_printf(b, "the %s attacker's predicate (one enrolment and a threshold that "
			       "fires on 1/N of held-out conversations) isolates exactly one of N = "
			       "%s test speakers' conversations of %zu utterance%s with probability "
			       "%.3f", who, set, L, L == 1 ? "" : "s", c->value);
		put_interval(b, c);
		vpa_buf_printf(b, ", against %.3f for a predicate that ignores the voice "
			       "((1-1/N)^(N-1), e^-1 = 0.368 for large N)", c->chance);
		break;
	case VPA_LEGAL_LINK:
		vpa_buf_printf(b, "the %s attacker links an anonymised conversation of %zu "
			       "utterance%s to its speaker's enrolment among N' = %s candidates with "
			       "probability %.3f", who, L, L == 1 ? "" : "s", set, c->value);
		put_interval(b, c);
		vpa_buf_printf(b, ", against the chance 1/N' = %.3f", c->chance);
		break;
	case VPA_LEGAL_INFER:
		vpa_buf_printf(b, "the %s attacker guesses the %s of the anonymised test "
			       "utterances with accuracy %.3f", who,
			       c->attribute ? c->attribute : "attribute", c->value);
		put_interval(b, c);
		if (isfinite(c->bacc))
			vpa_buf_printf(b, " and balanced accuracy %.3f", c->bacc);
		vpa_buf_printf(b, ", against %.3f for always guessing the majority class '%s'",
			       c->chance, c->majority ? c->majority : "?");
		break;
	}
	static const char *const yes[3] = {"a person can be singled out",
					   "records of one person can be linked",
					   "the attribute can be inferred"};
	static const char *const no[3] = {"no singling out beyond the trivial predicate was "
					  "measured",
					  "no linking beyond guessing was measured",
					  "no inference beyond the majority guess was measured"};
	if (!strncmp(v, "above chance", 12))
		vpa_buf_printf(b, ": %s, %s.", v, yes[k]);
	else if (!strcmp(v, "unreliable"))
		vpa_buf_printf(b, ": unreliable (%s), evidence neither way.", c->why);
	else
		vpa_buf_printf(b, ": %s, %s.", v, no[k]);
}

/* Is sub a pooled attacker of the anonymised speech (not baseline, not a gender)? */
static int anon_attacker(const char *sub)
{
	return sub && !strchr(sub, '/') && strcmp(sub, "baseline");
}

/* the record of the strongest attacker of criterion k in attack `id` (the
 * highest defined value; an unreliable one only when none is reliable), or
 * the first record when none has a value */
static const struct vpa_json *strongest(const struct vpa_json *recs, const char *id,
					enum vpa_legal_crit k)
{
	const struct vpa_json *best = NULL, *first = NULL;
	int best_rel = 0;
	double bv = -INFINITY;
	for (size_t i = 0; recs && i < recs->n; i++) {
		const struct vpa_json *r = recs->items[i];
		const char *a = vpa_json_get_str(r, "attack");
		if (!a || strcmp(a, id) || !anon_attacker(vpa_json_get_str(r, "sub")))
			continue;
		if (!first)
			first = r;
		double v = vpa_rec_num(r, crit_metric[k]);
		int rel = !vpa_rec_unreliable(r, crit_metric[k]);
		if (!isfinite(v))
			continue;
		if (!best || (rel && !best_rel) || (rel == best_rel && v > bv)) {
			best = r;
			bv = v;
			best_rel = rel;
		}
	}
	return best ? best : first;
}

/* tables (the summary's first page) or the section's sentences */
static void build(const struct vpa_json *r, struct vpa_doc *d, int tables)
{
	const struct vpa_json *atts = vpa_json_get(r, "attacks");
	const struct vpa_json *recs = vpa_json_get(r, "records");
	int head = 0;
	for (size_t a = 0; atts && a < atts->n; a++) {
		const char *kind = vpa_json_get_str(atts->items[a], "kind");
		const char *id = vpa_json_get_str(atts->items[a], "id");
		if (!kind || strcmp(kind, "linkage") || !id)
			continue;
		const struct vpa_json *rk[3];
		int any = 0;
		for (int k = 0; k < 3; k++) {
			rk[k] = strongest(recs, id, (enum vpa_legal_crit)k);
			any |= rk[k] && (vpa_json_get(rk[k], k == VPA_LEGAL_INFER ? "inference" : "legal")
					 != NULL);
		}
		if (!any)
			continue;
		const struct vpa_json *tg = vpa_attack_target(r, id);
		const char *tid = tg ? vpa_json_get_str(tg, "id") : NULL;
		if (!head && !tables) {
			vpa_doc_head(d, 1, "legal", "Singling out / Linkability / Inference", 1);
			vpa_doc_para(d, VPA_P_PLAIN,
				     "The three questions of the Article 29 Working Party (Opinion "
				     "05/2014 on anonymisation techniques) that European law asks of "
				     "anonymised data, measured on the anonymised speech against the "
				     "level an attacker reaches without information, for the strongest "
				     "attacker (the one scoring highest among ignorant, lazy-informed, "
				     "semi-informed and informed; its table is in the executive "
				     "summary): pi_sing and pi_link of Vauquier et al. (Interspeech "
				     "2025) and the accuracy of an attribute classifier.  A value whose "
				     "interval lies above chance answers yes.  The figures of pi_link "
				     "against N' and pi_sing against N are with each attack's results.");
			head = 1;
		}
		struct vpa_table t;
		vpa_table_new(&t, 3, 6);
		static const char *const h[6] = {"criterion", "metric", "strongest attacker",
						 "measured (interval)", "chance", "verdict"};
		for (size_t c = 0; c < 6; c++)
			vpa_table_set(&t, (size_t)-1, c, "%s", h[c]);
		t.numeric[4] = 1;
		struct vpa_buf s[3];
		for (int k = 0; k < 3; k++) {
			vpa_buf_init(&s[k]);
			struct vpa_legal_cell c;
			const char *who = rk[k] ? vpa_json_get_str(rk[k], "sub") : NULL;
			if (rk[k])
				vpa_legal_cell_of(rk[k], (enum vpa_legal_crit)k, &c);
			else
				memset(&c, 0, sizeof(c)), c.value = c.lo = c.hi = c.chance = NAN;
			vpa_table_set(&t, (size_t)k, 0, "%s", crit_name[k]);
			if (k == VPA_LEGAL_INFER)
				vpa_table_set(&t, (size_t)k, 1, "accuracy (%s)",
					      c.attribute ? c.attribute : "attribute");
			else
				vpa_table_set(&t, (size_t)k, 1, "%s (%s = %s, L = %.0f)", crit_metric[k],
					      k == VPA_LEGAL_SING ? "N" : "N'", c.set ? c.set : "?",
					      isfinite(c.L) ? c.L : 1);
			vpa_table_set(&t, (size_t)k, 2, "%s", who ? who : "-");
			if (!isfinite(c.value))
				vpa_table_set(&t, (size_t)k, 3, "undefined");
			else if (isfinite(c.lo) && isfinite(c.hi))
				vpa_table_set(&t, (size_t)k, 3, "%.3f (%.3f-%.3f)", c.value, c.lo, c.hi);
			else
				vpa_table_set(&t, (size_t)k, 3, "%.3f", c.value);
			if (isfinite(c.chance))
				vpa_table_set(&t, (size_t)k, 4, "%.3f", c.chance);
			else
				vpa_table_set(&t, (size_t)k, 4, "-");
			vpa_table_set(&t, (size_t)k, 5, "%s", vpa_legal_verdict(&c));
			vpa_legal_sentence(&s[k], (enum vpa_legal_crit)k, who ? who : "-", &c);
		}
		if (tables) {
			char cap[512];
			snprintf(cap, sizeof(cap), "Singling out / Linkability / Inference: measured vs "
				 "chance, for the strongest attacker (attack %s on %s; Article 29 WP "
				 "Opinion 05/2014, Vauquier et al. 2025).", id, tid ? tid : "?");
			vpa_doc_table(d, &t, cap);
		} else {
			vpa_table_release(&t);
			vpa_doc_para(d, VPA_P_LEAD, "Attack %s on %s", id, tid ? tid : "?");
			struct vpa_blk *list = vpa_doc_list(d);
			for (int k = 0; k < 3; k++)
				vpa_doc_item(list, "%s", vpa_buf_str(&s[k]));
		}
		for (int k = 0; k < 3; k++)
			vpa_buf_release(&s[k]);
	}
}

void vpa_doc_legal_table(const struct vpa_json *r, struct vpa_doc *d)
{
	build(r, d, 1);
}

void vpa_doc_legal(const struct vpa_json *r, struct vpa_doc *d)
{
	build(r, d, 0);
}
