/*
 * reports/summary.c - the executive summary (the verdict and one sentence
 * per attack from templates per attack kind and metric, numbers filled in),
 * the limitations gathered from the run, and the comparison with a baseline
 * (results["baseline"], written by `run --baseline`).
 *
 * Templates:
 *   verification-like records (eer): "WHO decides correctly whether two
 *     recordings are of the same speaker X% of the time (EER Y%, 95% CI
 *     a-b%); chance is 50%." + linkability + gate + unreliable sentences
 *   exposure: "The canary NAME inserted K times reaches an exposure of E bits
 *     of at most M bits: MEANING."
 *   d_exposure: "A sentence repeated K times in training: the tagger gives its
 *     canary word the inserted label L with confidence P% (label d-exposure E
 *     bits; unseen control words: C bits, 90th percentile P90): VERDICT." and
 *     the class average beside it (older records: the class average only).
 *   fl_training: "With the REGIME regime the classifier reaches A% accuracy
 *     with epsilon E for this run / with no formal guarantee." + what the
 *     regime protects and against whom (threat.c); update_linkage records
 *     say whether the regime's epsilon covers the attack.
 * A failed gate, an unreliable value and a simulated target are said in words.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/doc.h"
#include "reports/sec_legal.h"

/* ---- helpers ---- */

static int is_num(const struct vpa_json *v)
{
	return v && v->type == VPA_JSON_NUM && isfinite(v->num);
}

/* The gates on this attack (and sub) that failed, as a sentence, or nothing. */
static void gate_words(const struct vpa_json *r, const char *attack, const char *sub,
		       struct vpa_buf *b)
{
	const struct vpa_json *g = vpa_json_get(r, "gates");
	for (size_t i = 0; g && g->type == VPA_JSON_ARR && i < g->n; i++) {
		const struct vpa_json *x = g->items[i];
		const char *ga = vpa_json_get_str(x, "attack"), *gm = vpa_json_get_str(x, "metric");
		const struct vpa_json *p = vpa_json_get(x, "pass");
		if (!ga || !gm || !p || p->type != VPA_JSON_BOOL || p->boolean)
			continue;
		size_t l = strlen(attack);
		int match = !strncmp(ga, attack, l) &&
			    (ga[l] == 0 || (ga[l] == '.' && sub && !strcmp(ga + l + 1, sub)));
		if (!match || (ga[l] == 0 && sub && 0))
			continue;
		struct vpa_buf bound;
		vpa_buf_init(&bound);
		vpa_gate_bound(&bound, x, 0);
		const struct vpa_json *v = vpa_json_get(x, "value");
		vpa_buf_printf(b, " This FAILS the gate %s %s %s", ga, gm, bound.data ? bound.data : "");
		const char *rec = vpa_json_get_str(x, "record");
		if (is_num(v)) {
			vpa_buf_puts(b, " (value ");
			vpa_report_fmt(b, gm, v);
			if (rec)
				vpa_buf_printf(b, " at %s", rec);
			vpa_buf_puts(b, ")");
		} else {
			vpa_buf_puts(b, " (the value is undefined)");
		}
		/* a value that breaks the bound is the reason; what fails closed besides follows */
		const char *why = vpa_json_get_str(x, "unreliable");
		const char *anti = vpa_json_get_str(x, "anti_correlated");
		if (vpa_gate_breached(x)) {
			const char *uw = vpa_json_get_str(x, "unreliable_record");
			const char *aw = vpa_json_get_str(x, "anti_correlated_record");
			if (why && uw)
				vpa_buf_printf(b, ", and the value at %s cannot be trusted (%s)", uw, why);
			else if (why)
				vpa_buf_printf(b, ", and the value cannot be trusted (%s)", why);
			if (anti)
				vpa_buf_printf(b, ", and at %s %s", aw ? aw : "the same record", anti);
		} else if (why) {
			vpa_buf_printf(b, ": the value cannot be trusted (%s)", why);
		}
		vpa_buf_puts(b, ".");
		vpa_buf_release(&bound);
	}
}

void vpa_unreliable_note(const struct vpa_json *r, const char *attack, const struct vpa_json *only,
			 const char *const *paths, size_t n_paths, struct vpa_buf *out)
{
	/* reasons (up to their first ';') with the metrics they concern */
	char reason[16][160], keys[16][240];
	size_t n = 0;
	const struct vpa_json *recs = vpa_json_get(r, "records");
	for (size_t i = 0; recs && recs->type == VPA_JSON_ARR && i < recs->n; i++) {
		const struct vpa_json *rec = recs->items[i];
		const char *a = vpa_json_get_str(rec, "attack");
		if (only ? rec != only : (!a || strcmp(a, attack)))
			continue;
		const struct vpa_json *u = vpa_json_get(rec, "unreliable");
		for (size_t k = 0; u && u->type == VPA_JSON_OBJ && k < u->n; k++) {
			if (u->items[k]->type != VPA_JSON_STR || !strcmp(u->items[k]->str, "undefined value"))
				continue;
			int wanted = !paths;
			for (size_t j = 0; paths && j < n_paths; j++)
				wanted |= !strcmp(paths[j], u->keys[k]);
			if (!wanted)
				continue;
			char why[160];
			snprintf(why, sizeof(why), "%.*s", (int)strcspn(u->items[k]->str, ";"),
				 u->items[k]->str);
			size_t j = 0;
			while (j < n && strcmp(reason[j], why))
				j++;
			if (j == n) {
				if (n == 16)
					continue;
				snprintf(reason[n], sizeof(reason[0]), "%s", why);
				keys[n++][0] = 0;
			}
			struct vpa_buf has, look;
			vpa_buf_init(&has);
			vpa_buf_init(&look);
			vpa_buf_printf(&has, ",%s", keys[j]);
			vpa_buf_printf(&look, ",%s,", u->keys[k]);
			if (!strstr(has.data, look.data) &&
			    strlen(keys[j]) + look.len < sizeof(keys[0]))
				strcat(keys[j], look.data + 1);
			vpa_buf_release(&has);
			vpa_buf_release(&look);
		}
	}
	for (size_t j = 0; j < n; j++) {
		size_t l = strlen(keys[j]);
		if (l)
			keys[j][l - 1] = 0;
		vpa_buf_puts(out, j ? "; " : "");
		for (const char *c = keys[j]; *c; c++)
			vpa_buf_puts(out, *c == ',' ? ", " : (char[2]){*c, 0});
		vpa_buf_printf(out, ": %s", reason[j]);
	}
}

/* The reliability reasons in words a reader can repeat (metrics/reliability.c
 * writes them for the tables); NULL to keep the reason as it is. */
static const char *plain_reason(const char *why)
{
	if (!strncmp(why, "the integral over bin centres misses", 36))
		return "the VoicePrivacy linkability leaves out part of what the score histogram "
		       "shows (linkability_hist is higher)";
	if (!strncmp(why, "mated scores occupy", 19))
		return "the same-speaker scores fill too few histogram bins for the linkability to "
		       "show a leak";
	if (!strncmp(why, "all scores are equal", 20))
		return "all scores are equal";
	return NULL;
}

static void unreliable_words(const struct vpa_json *r, const struct vpa_json *rec,
			     const char *const *paths, size_t n, struct vpa_buf *b)
{
	struct vpa_buf t;
	vpa_buf_init(&t);
	vpa_unreliable_note(r, NULL, rec, paths, n, &t);
	if (t.len) {
		/* one metric or several: "This value" / "These values" */
		size_t n_flag = 0;
		const struct vpa_json *u = vpa_json_get(rec, "unreliable");
		for (size_t k = 0; u && u->type == VPA_JSON_OBJ && k < u->n; k++)
			for (size_t j = 0; j < n; j++)
				if (!strcmp(u->keys[k], paths[j]) && u->items[k]->type == VPA_JSON_STR &&
				    strcmp(u->items[k]->str, "undefined value"))
					n_flag++;
		struct vpa_buf p;
		vpa_buf_init(&p);
		/* "key: reason; key: reason": reword the jargon reasons */
		for (const char *c = t.data; *c;) {
			const char *end = strstr(c, "; ");
			size_t len = end ? (size_t)(end - c) : strlen(c);
			const char *colon = memchr(c, ':', len);
			const char *plain = colon ? plain_reason(colon + 2) : NULL;
			if (plain)
				vpa_buf_printf(&p, "%.*s: %s", (int)(colon - c), c, plain);
			else
				vpa_buf_printf(&p, "%.*s", (int)len, c);
			c += len;
			if (end) {
				vpa_buf_puts(&p, "; ");
				c += 2;
			}
		}
		vpa_buf_printf(b, " %s (%s).",
			       n_flag == 1 ? "This value cannot be trusted" : "These values cannot be trusted",
			       p.data);
		vpa_buf_release(&p);
	}
	vpa_buf_release(&t);
}

/*
 * The finding of a record whose scores are anti-correlated with identity, as
 * a sentence ("The scores are anti-correlated with identity: an attacker who
 * reverses them reaches EER 12.2%."), or nothing (reports/reversal.c decides).
 */
static int anti_correlated_words(const struct vpa_json *rec, struct vpa_buf *b)
{
	struct vpa_buf t;
	vpa_buf_init(&t);
	int anti = vpa_rec_anti_correlated(rec, 0, &t);
	if (anti)
		vpa_buf_printf(b, " T%s (the EER above reads a higher score as the same speaker).",
			       t.data + 1);
	vpa_buf_release(&t);
	return anti;
}
static void regime_cover_words(const char *sub, struct vpa_buf *b);
static void ident_sentence(const struct vpa_json *r, const char *attack, const struct vpa_json *rec,
			   struct vpa_buf *b);

/* One sentence for a record with an EER (verification-like attacks). */
static void eer_sentence(const struct vpa_json *r, const char *kind, const char *attack,
			 const struct vpa_json *rec, int *explained, struct vpa_buf *b)
{
	const char *sub = vpa_json_get_str(rec, "sub");
	/* per-gender and per-list records: "ATTACKER/LIST" with "gender" */
	char base[96];
	const char *slash = sub ? strchr(sub, '/') : NULL;
	snprintf(base, sizeof base, "%.*s", slash ? (int)(slash - sub) : 0, slash ? sub : "");
	const struct vpa_threat *th = vpa_threat_find(kind, slash ? base : sub);
	double eer = vpa_rec_num(rec, "eer"), link = vpa_rec_num(rec, "linkability");
	const struct vpa_json *layer = vpa_json_get(rec, "layer");
	const char *gender = vpa_json_get_str(rec, "gender");
	if (slash && th && th->sub) {
		vpa_buf_puts(b, th->who);
		if (gender && (!strcmp(gender, "f") || !strcmp(gender, "m")))
			vpa_buf_printf(b, ", on %s speakers only (%s),",
				       !strcmp(gender, "f") ? "female" : "male", slash + 1);
		else
			vpa_buf_printf(b, ", on the trials %s,", slash + 1);
	} else if (th && (th->sub || !sub))
		vpa_buf_puts(b, th->who);
	else if (th)
		vpa_buf_printf(b, "%s (%s)", th->who, sub);
	else if (sub)
		vpa_buf_printf(b, "The attacker '%s'", sub);
	else
		vpa_buf_puts(b, "The attacker");
	if (is_num(layer))
		vpa_buf_printf(b, " at hidden layer %.0f", layer->num);
	if (!isfinite(eer)) {
		vpa_buf_puts(b, " has an undefined EER (too few trials to measure it).");
	} else {
		const char *what = kind && !strcmp(kind, "a1_footprint") ? "whether two models were adapted to the same speaker"
				   : kind && !strcmp(kind, "update_linkage") ? "whether two updates come from the same user"
				   : "whether two recordings are of the same speaker";
		vpa_buf_printf(b, " decides correctly %s ", what);
		vpa_put_pct(b, 1 - eer);
		vpa_buf_puts(b, " of the time (EER ");
		vpa_put_pct(b, eer);
		const struct vpa_json *ci = vpa_json_get(vpa_json_get(rec, "ci"), "eer");
		if (ci && ci->type == VPA_JSON_ARR && ci->n == 2 && is_num(ci->items[0]) &&
		    is_num(ci->items[1])) {
			double lv = vpa_json_get_num(vpa_json_get(rec, "ci"), "level", 0.95);
			vpa_buf_printf(b, ", %g%% CI %.1f-%.1f%%", 100 * lv, 100 * ci->items[0]->num,
				       100 * ci->items[1]->num);
		}
		vpa_buf_puts(b, "); chance is 50%");
		if (eer < 0.05)
			vpa_buf_puts(b, ", so the identity is effectively not protected");
		else if (eer >= 0.4 && !vpa_rec_anti_correlated(rec, 0, NULL))
			vpa_buf_puts(b, ", so this attacker learns little");
		vpa_buf_puts(b, ".");
	}
	anti_correlated_words(rec, b);
	double n_mated;
	if (isfinite(link) && !vpa_link_estimated(rec, &n_mated)) {
		/* one histogram bin: the VoicePrivacy value is 0 whatever the scores */
		vpa_buf_printf(b, " Its linkability D\u2194sys is not estimated: %.0f mated scores "
			       "(fewer than %d) make one histogram bin, where it reads 0 whatever the "
			       "scores.", n_mated, VPA_LINK_MIN_ESTIMATE);
	} else if (isfinite(link)) {
		vpa_buf_printf(b, " Its linkability D\u2194sys is %.2f", link);
		if (!*explained)
			vpa_buf_puts(b, " (0: recordings cannot be linked, 1: fully linkable)");
		vpa_buf_puts(b, ".");
		*explained = 1;
	}
	if (kind && !strcmp(kind, "update_linkage"))
		regime_cover_words(sub, b);
	static const char *const paths[] = {"eer", "linkability"};
	unreliable_words(r, rec, paths, 2, b);
	gate_words(r, attack, sub, b);
}

static void exposure_sentence(const struct vpa_json *r, const char *attack,
			      const struct vpa_json *rec, struct vpa_buf *b)
{
	const char *sub = vpa_json_get_str(rec, "sub");
	double e = vpa_rec_num(rec, "exposure"), mx = vpa_rec_num(rec, "max_exposure");
	double ins = vpa_rec_num(rec, "insertions"), eps = vpa_rec_num(rec, "epsilon");
	const struct vpa_json *au = vpa_json_get(vpa_json_get(rec, "metrics"), "dp_audit");
	if (au) { /* the DP audit record (issue 28): no canary of its own */
		vpa_buf_printf(b, "The %s audit of the claimed epsilon %.4g finds epsilon >= %.4g "
			       "(section \"Is the claimed guarantee credible?\").",
			       vpa_json_get_str(au, "method") ? vpa_json_get_str(au, "method") : "DP", eps,
			       vpa_rec_num(rec, "epsilon_lower_bound"));
		gate_words(r, attack, sub, b);
		return;
	}
	vpa_buf_printf(b, "The canary %s", sub ? sub : "");
	if (isfinite(ins))
		vpa_buf_printf(b, " inserted %.0f time%s", ins, ins == 1 ? "" : "s");
	if (!isfinite(e)) {
		vpa_buf_puts(b, " has an undefined exposure.");
	} else {
		vpa_buf_printf(b, " reaches an exposure of %.1f bits", e);
		if (isfinite(mx) && mx > 0) {
			vpa_buf_printf(b, " of at most %.1f bits", mx);
			double q = e / mx;
			/* a random candidate reaches e bits or more with probability
			 * 2^-e (exposure = -log2 of the rank fraction; its mean is
			 * 1/ln 2 = 1.4 bits): "chance" only where that is common */
			if (q >= 0.9)
				vpa_buf_puts(b, ": the model has memorised it and can give it away");
			else if (q >= 0.5)
				vpa_buf_puts(b, ": the model ranks it well above chance (partly memorised)");
			else if (e >= log2(20))
				vpa_buf_printf(b, ": above chance, a random canary ranks this high only "
					       "1 time in %.0f (it averages 1.4 bits)", pow(2, e));
			else
				vpa_buf_puts(b, ": within chance, a random canary averages 1.4 bits and "
						"ranks this high 1 time in 20 or more");
		}
		if (isfinite(eps))
			vpa_buf_printf(b, " (trained with DP, epsilon %.3g)", eps);
		vpa_buf_puts(b, ".");
	}
	static const char *const paths[] = {"exposure"};
	unreliable_words(r, rec, paths, 1, b);
	gate_words(r, attack, sub, b);
}

/* The class whose per-class value is the canary label's (d_exposure_CLASS ==
 * d_exposure_label), or NULL. */
static const char *dexp_label_name(const struct vpa_json *rec)
{
	const struct vpa_json *m = vpa_json_get(rec, "metrics");
	double lab = vpa_rec_num(rec, "d_exposure_label");
	static const char *const not_class[] = {"label", "label_max", "label_chance",
						"label_chance_p90", "label_excess", "label_no_dp",
						"max", "chance", "chance_p90", "exchangeable"};
	for (size_t i = 0; m && m->type == VPA_JSON_OBJ && isfinite(lab) && i < m->n; i++) {
		const char *k = m->keys[i];
		if (strncmp(k, "d_exposure_", 11) || m->items[i]->type != VPA_JSON_NUM ||
		    m->items[i]->num != lab)
			continue;
		int skip = 0;
		for (size_t j = 0; j < sizeof(not_class) / sizeof(not_class[0]); j++)
			skip |= !strcmp(k + 11, not_class[j]);
		if (!skip)
			return k + 11;
	}
	return NULL;
}

/*
 * d-exposure: the verdict reads the canary label's own value against the
 * never-inserted control words (d_exposure_label vs its chance and 90th
 * percentile), not the mean over classes, which falls as the other classes
 * lose confidence when the label is learnt (issue 25 item 4c).
 */
static void dexposure_sentence(const struct vpa_json *r, const char *attack,
			       const struct vpa_json *rec, struct vpa_buf *b)
{
	const char *sub = vpa_json_get_str(rec, "sub");
	double e = vpa_rec_num(rec, "d_exposure"), ch = vpa_rec_num(rec, "d_exposure_chance");
	double k = vpa_rec_num(rec, "repetitions");
	double le = vpa_rec_num(rec, "d_exposure_label"), lc = vpa_rec_num(rec, "d_exposure_label_chance");
	double lp = vpa_rec_num(rec, "d_exposure_label_chance_p90");
	double conf = vpa_rec_num(rec, "canary_conf_label");
	const char *label = dexp_label_name(rec);
	vpa_buf_puts(b, "A sentence");
	if (isfinite(k))
		vpa_buf_printf(b, " repeated %.0f time%s in training", k, k == 1 ? "" : "s");
	if (isfinite(le) && isfinite(lc)) {
		vpa_buf_puts(b, ": the tagger gives its canary word the inserted label");
		if (label)
			vpa_buf_printf(b, " %s", label);
		if (isfinite(conf))
			vpa_buf_printf(b, " with confidence %.0f%%", 100 * conf);
		vpa_buf_printf(b, " (label d-exposure %.2f bits; unseen control words: %.2f bits", le,
			       lc);
		if (isfinite(lp))
			vpa_buf_printf(b, ", 90th percentile %.2f", lp);
		vpa_buf_puts(b, ")");
		int above = le > (isfinite(lp) ? lp : lc);
		if (above && le - lc >= 1)
			vpa_buf_puts(b, ": the tagger has memorised the label of this sentence.");
		else if (above)
			vpa_buf_puts(b, ": above the unseen control words, partly memorised.");
		else
			vpa_buf_puts(b, ": no more than for unseen sentences, not singled out.");
		if (isfinite(e))
			vpa_buf_printf(b, " Averaged over all classes the d-exposure is %.2f bits "
				       "(controls %.2f); the average can fall as the label is learnt, "
				       "so the label's value is the one to read.", e, ch);
	} else if (!isfinite(e)) {
		vpa_buf_puts(b, " has an undefined d-exposure.");
	} else {
		vpa_buf_printf(b, " has a d-exposure of %.2f bits", e);
		if (isfinite(ch))
			vpa_buf_printf(b, " (unseen control sentences: %.2f bits)", ch);
		vpa_buf_puts(b, isfinite(ch) && e > ch + 1 ? ": the tagger remembers it." : ".");
	}
	static const char *const paths[] = {"d_exposure", "d_exposure_label"};
	unreliable_words(r, rec, paths, 2, b);
	gate_words(r, attack, sub, b);
}

/* Each epsilon is said with what it protects and against whom (the regime's
 * clause from threat.c): a central epsilon covers the trained model, not the
 * updates the server sees.  No "strong/moderate/weak" ladder: a local epsilon
 * per user and a central one per model are not on one scale. */
static void fl_sentence(const struct vpa_json *r, const char *attack, const struct vpa_json *rec,
			struct vpa_buf *b)
{
	const char *sub = vpa_json_get_str(rec, "sub");
	double acc = vpa_rec_num(rec, "accuracy"), eps = vpa_rec_num(rec, "epsilon");
	double delta = vpa_rec_num(rec, "delta"), eps_l = vpa_rec_num(rec, "epsilon_local");
	double eps_dep = vpa_rec_num(rec, "epsilon_deployment");
	int local = sub && !strcmp(sub, "local");
	vpa_buf_printf(b, "With the %s regime%s, the model reaches ", sub ? sub : "(default)",
		       sub && !strcmp(sub, "none") ? " (no differential privacy)" : "");
	if (isfinite(acc)) {
		vpa_put_pct(b, acc);
		vpa_buf_puts(b, " test accuracy");
	} else {
		vpa_buf_puts(b, "an undefined accuracy");
	}
	if (isfinite(eps)) {
		vpa_buf_printf(b, " with epsilon %.3g", eps);
		if (local && isfinite(eps_l))
			vpa_buf_printf(b, " per user over this run's releases (%.3g per update)", eps_l);
		else
			vpa_buf_puts(b, " for this run");
		if (isfinite(delta))
			vpa_buf_printf(b, ", delta %.2g", delta);
		if (isfinite(eps_dep))
			vpa_buf_printf(b, " (for the stated deployment: epsilon %.3g)", eps_dep);
	} else {
		vpa_buf_puts(b, " with no formal privacy guarantee");
	}
	vpa_buf_puts(b, ".");
	const char *prot = vpa_regime_protects(sub);
	if (prot && strcmp(sub, "none")) {
		vpa_buf_printf(b, " %c%s", prot[0] >= 'a' && prot[0] <= 'z' ? prot[0] - 32 : prot[0],
			       prot + 1);
		if (!strcmp(sub, "central_local") && isfinite(eps_l))
			vpa_buf_printf(b, " (here epsilon_local %.3g)", eps_l);
		vpa_buf_puts(b, ".");
	}
	gate_words(r, attack, sub, b);
}

/*
 * Identification (issue 25 item 4d): what the attacker does in the
 * population it was measured in, top-1 and top-10 in % against chance, not
 * the population read as a layer nor a verification EER.
 *   "WHO picks the true speaker out of N people first time X% of the time
 *    (chance Y%), and has them among its first 10 Z% of the time (chance W%)."
 */
static void ident_sentence(const struct vpa_json *r, const char *attack, const struct vpa_json *rec,
			   struct vpa_buf *b)
{
	const char *sub = vpa_json_get_str(rec, "sub");
	const struct vpa_threat *th = vpa_threat_find("identification", sub);
	double n = vpa_rec_num(rec, "population");
	if (!isfinite(n))
		n = vpa_json_get_num(rec, "layer", NAN);
	double t1 = vpa_rec_num(rec, "top1"), t10 = vpa_rec_num(rec, "top10");
	if (th && (th->sub || !sub))
		vpa_buf_puts(b, th->who);
	else if (sub)
		vpa_buf_printf(b, "The attacker '%s'", sub);
	else
		vpa_buf_puts(b, "The attacker");
	if (!isfinite(t1) || !(n >= 1)) {
		vpa_buf_puts(b, " has an undefined identification rate.");
	} else {
		vpa_buf_printf(b, " picks the true speaker out of %.0f people first time ", n);
		vpa_put_pct(b, t1);
		vpa_buf_puts(b, " of the time (chance ");
		vpa_put_pct(b, 1 / n);
		vpa_buf_puts(b, ")");
		if (isfinite(t10) && n > 10) {
			vpa_buf_puts(b, ", and has them among its first 10 ");
			vpa_put_pct(b, t10);
			vpa_buf_puts(b, " of the time (chance ");
			vpa_put_pct(b, 10 / n);
			vpa_buf_puts(b, ")");
		}
		if (t1 >= 0.5)
			vpa_buf_puts(b, ": the speaker is singled out");
		else if (t1 <= 2 / n && (!isfinite(t10) || n <= 10 || t10 <= 2 * 10 / n))
			vpa_buf_puts(b, ": no better than twice chance");
		vpa_buf_puts(b, ".");
	}
	static const char *const paths[] = {"top1", "top10"};
	unreliable_words(r, rec, paths, 2, b);
	gate_words(r, attack, sub, b);
}

/* Whether the regime's epsilon covers an attack on the updates a device sends
 * (update_linkage): said, so that no one compares the two where it does not. */
static void regime_cover_words(const char *sub, struct vpa_buf *b)
{
	int c = vpa_regime_covers_updates(sub);
	if (c < 0 || !strcmp(sub, "none"))
		return;
	if (!strcmp(sub, "central"))
		vpa_buf_puts(b, " Central DP does not cover this attack: the server sees each update "
				"before it adds the noise, so the regime's epsilon bounds only what the "
				"trained model reveals, not this linkage.");
	else if (!strcmp(sub, "central_local"))
		vpa_buf_puts(b, " The central epsilon does not cover this attack (the server sees each "
				"update before it adds the central noise); the device's local randomiser "
				"(epsilon_local per update) does.");
	else
		vpa_buf_puts(b, " Local DP covers this attack: each update carries the device's noise, "
				"and the regime's epsilon bounds what linking them can reveal.");
}

/* The privacy-utility trade-off in words (reports/sec_utility.c), when the
 * run measured a WER cost or an emotion recogniser's UAR. */
static void utility_tradeoff(const struct vpa_json *r, struct vpa_doc *d)
{
	struct vpa_buf s;
	vpa_buf_init(&s);
	vpa_utility_sentences(r, &s);
	if (s.len)
		vpa_doc_para(d, VPA_P_PLAIN, "Privacy against utility: %s", s.data);
	vpa_buf_release(&s);
}

/*
 * Issue 28: one sentence per DP claim an audit contradicts (a record whose
 * epsilon_lower_bound exceeds the claim its dp_audit names): which claim, of
 * which target, by how much.  A bound below its claim gets no sentence here:
 * it proves nothing (the section "Is the claimed guarantee credible?" says so).
 */
static void dp_contradictions(const struct vpa_json *r, struct vpa_doc *d)
{
	const struct vpa_json *recs = vpa_json_get(r, "records");
	for (size_t i = 0; recs && recs->type == VPA_JSON_ARR && i < recs->n; i++) {
		const struct vpa_json *m = vpa_json_get(recs->items[i], "metrics");
		const struct vpa_json *au = vpa_json_get(m, "dp_audit");
		const char *scope = vpa_json_get_str(au, "scope");
		const char *key = vpa_json_get_str(au, "claim_key");
		double lb = vpa_json_get_num(m, "epsilon_lower_bound", NAN);
		double claim = vpa_json_get_num(au, "claimed_epsilon",
						vpa_json_get_num(m, key ? key : "epsilon", NAN));
		if (!au || (scope && strcmp(scope, "covered")) || !(lb > claim))
			continue;
		const char *a = vpa_json_get_str(recs->items[i], "attack");
		const char *tid = vpa_json_get_str(vpa_attack_find(r, a ? a : ""), "target");
		const char *acc = vpa_json_get_str(au, "accountant");
		vpa_doc_para(d, VPA_P_FAIL, "The claimed epsilon %.4g of target %s (%s accountant) is "
			     "contradicted: the %s audit by %s proves epsilon >= %.4g, %.3g above the "
			     "claim, with %.4g%% confidence.", claim, tid ? tid : "?", acc ? acc : "its",
			     vpa_json_get_str(au, "method") ? vpa_json_get_str(au, "method") : "DP",
			     a ? a : "?", lb, lb - claim, 100 * (1 - vpa_json_get_num(au, "alpha", 0.05)));
	}
}

void vpa_doc_summary(const struct vpa_json *r, struct vpa_doc *d)
{
	vpa_doc_head(d, 1, "summary", "Executive summary", 1);
	const struct vpa_json *g = vpa_json_get(r, "gates"), *atts = vpa_json_get(r, "attacks");
	const struct vpa_json *tg = vpa_json_get(r, "targets");
	size_t n_g = g && g->type == VPA_JSON_ARR ? g->n : 0, n_fail = 0;
	for (size_t i = 0; i < n_g; i++) {
		const struct vpa_json *p = vpa_json_get(g->items[i], "pass");
		n_fail += !(p && p->type == VPA_JSON_BOOL && p->boolean);
	}
	const char *status = vpa_json_get_str(r, "status");
	int fail = n_fail || (status && !strcmp(status, "fail"));
	struct vpa_buf v;
	vpa_buf_init(&v);
	if (n_g == 0 && !fail) {
		vpa_buf_puts(&v, "No gates: the scenario requires nothing of the system, so there is "
				 "no PASS or FAIL. The risk rating per target below is vpaudit's "
				 "reading of the findings.");
		d->status = VPA_P_PLAIN;
	} else if (fail) {
		vpa_buf_printf(&v, "FAIL: %zu of %zu gate%s failed. The system does not meet the privacy "
			       "requirements written in the scenario.", n_fail, n_g, n_g == 1 ? "" : "s");
		if (n_fail == 0)
			vpa_buf_printf(&v, " (The comparison with the baseline failed.)");
		d->status = VPA_P_FAIL;
	} else {
		vpa_buf_printf(&v, "PASS: all %zu gate%s held. The system meets the privacy requirements "
			       "written in the scenario.", n_g, n_g == 1 ? "" : "s");
		d->status = VPA_P_PASS;
	}
	d->verdict = v.data;
	vpa_doc_para(d, d->status, "%s", d->verdict);
	if (n_g == 0 && !fail)
		vpa_doc_risk(r, d);
	dp_contradictions(r, d);
	if (n_g) {
		struct vpa_table t;
		char cap[96];
		vpa_table_gates(r, &t);
		snprintf(cap, sizeof(cap), "%zu gate%s, %zu failed.", n_g, n_g == 1 ? "" : "s", n_fail);
		vpa_doc_table(d, &t, cap);
	}
	vpa_doc_legal_table(r, d); /* the Article 29 criteria on the first page (issue 29) */

	/* what was audited */
	struct vpa_buf w;
	vpa_buf_init(&w);
	size_t nt = tg && tg->type == VPA_JSON_ARR ? tg->n : 0;
	size_t na = atts && atts->type == VPA_JSON_ARR ? atts->n : 0;
	vpa_buf_printf(&w, "This audit ran %zu attack%s on %zu target%s", na, na == 1 ? "" : "s", nt,
		       nt == 1 ? "" : "s");
	for (size_t i = 0; i < nt; i++) {
		const char *id = vpa_json_get_str(tg->items[i], "id");
		const char *kind = vpa_json_get_str(tg->items[i], "kind");
		vpa_buf_printf(&w, "%s%s%s%s%s", i ? (i + 1 == nt ? " and " : ", ") : ": ", id ? id : "?",
			       kind ? " (" : "", kind ? kind : "", kind ? ")" : "");
	}
	vpa_buf_puts(&w, ".");
	for (size_t i = 0; i < nt; i++) {
		struct vpa_buf syn;
		vpa_buf_init(&syn);
		vpa_synthetic_sets(tg->items[i], &syn);
		if (syn.len)
			vpa_buf_printf(&w, " The score files of %s (%s) are SYNTHETIC: drawn by a "
				       "generator, not scored by a real system.",
				       vpa_json_get_str(tg->items[i], "id") ? vpa_json_get_str(tg->items[i], "id")
									       : "?",
				       syn.data);
		vpa_buf_release(&syn);
	}
	if (d->simulated)
		vpa_buf_printf(&w, " The target%s %s %s SIMULATED: their numbers show how the method "
			       "works, not how a real system behaves.",
			       strchr(d->simulated, ',') ? "s" : "", d->simulated,
			       strchr(d->simulated, ',') ? "are" : "is");
	for (size_t i = 0; i < nt; i++) {
		const char *syn = vpa_target_synthetic(tg->items[i]);
		const char *id = vpa_json_get_str(tg->items[i], "id");
		if (syn)
			vpa_buf_printf(&w, " The speech of %s is %s.", id ? id : "?", syn);
	}
	vpa_doc_para(d, VPA_P_PLAIN, "%s", w.data);
	vpa_buf_release(&w);
	utility_tradeoff(r, d);

	/* one sentence per attack and attacker */
	const struct vpa_json *recs = vpa_json_get(r, "records");
	int explained = 0;
	for (size_t a = 0; a < na; a++) {
		const char *id = vpa_json_get_str(atts->items[a], "id");
		const char *kind = vpa_json_get_str(atts->items[a], "kind");
		struct vpa_blk *list = NULL;
		int sim = vpa_attack_simulated(r, id);
		for (size_t i = 0; recs && recs->type == VPA_JSON_ARR && i < recs->n; i++) {
			const struct vpa_json *rec = recs->items[i];
			const char *ra = vpa_json_get_str(rec, "attack");
			if (!ra || strcmp(ra, id) || !vpa_rec_representative(recs, i, kind))
				continue;
			struct vpa_buf s;
			vpa_buf_init(&s);
			if (kind && !strcmp(kind, "exposure"))
				exposure_sentence(r, id, rec, &s);
			else if (kind && !strcmp(kind, "d_exposure"))
				dexposure_sentence(r, id, rec, &s);
			else if (kind && !strcmp(kind, "fl_training"))
				fl_sentence(r, id, rec, &s);
			else if (kind && !strcmp(kind, "identification") &&
				 vpa_json_get(vpa_json_get(rec, "metrics"), "top1"))
				ident_sentence(r, id, rec, &s);
			else if (isfinite(vpa_rec_num(rec, "eer")) ||
				 vpa_json_get(vpa_json_get(rec, "metrics"), "eer"))
				eer_sentence(r, kind, id, rec, &explained, &s);
			if (s.len) {
				if (!list) {
					struct vpa_buf h;
					vpa_buf_init(&h);
					vpa_buf_printf(&h, "%s%s", id, sim ? " (simulated target)" : "");
					vpa_doc_para(d, VPA_P_PLAIN, "%s", h.data);
					d->b[d->n - 1].style = VPA_P_LEAD; /* a run-in head */
					vpa_buf_release(&h);
					list = vpa_doc_list(d);
				}
				vpa_doc_item(list, "%s", s.data);
			}
			vpa_buf_release(&s);
		}
	}
}

/* ---- limitations ---- */

/* One item per attack with records whose scores are anti-correlated with identity. */
static void anti_correlated_limits(const struct vpa_json *r, struct vpa_blk *l)
{
	const struct vpa_json *recs = vpa_json_get(r, "records"), *atts = vpa_json_get(r, "attacks");
	for (size_t a = 0; atts && atts->type == VPA_JSON_ARR && a < atts->n; a++) {
		const char *id = vpa_json_get_str(atts->items[a], "id");
		const struct vpa_json *first = NULL;
		size_t n_rec = 0, n_anti = 0;
		for (size_t i = 0; id && recs && recs->type == VPA_JSON_ARR && i < recs->n; i++) {
			const char *ra = vpa_json_get_str(recs->items[i], "attack");
			if (!ra || strcmp(ra, id))
				continue;
			n_rec++;
			if (vpa_rec_anti_correlated(recs->items[i], 0, NULL) && !n_anti++)
				first = recs->items[i];
		}
		if (!first)
			continue;
		struct vpa_buf t, where;
		vpa_buf_init(&t);
		vpa_buf_init(&where);
		vpa_rec_anti_correlated(first, 1, &t);
		vpa_record_describe(&where, first, 1);
		if (n_anti == 1)
			vpa_doc_item(l, "%s%s%s%s: %s. Its EER, Cllr_min and min DCF read a higher "
				     "score as the same speaker and so do not measure this attacker (gates "
				     "on them fail unless they say allow_anti_correlated).", id, where.len ? " (" : "",
				     vpa_buf_str(&where), where.len ? ")" : "", t.data);
		else
			vpa_doc_item(l, "%s: in %zu of %zu records %s (first, %s). Their EER, Cllr_min "
				     "and min DCF read a higher score as the same speaker and so do not "
				     "measure this attacker (gates on them fail unless they say "
				     "allow_anti_correlated).", id, n_anti, n_rec,
				     t.data, vpa_buf_str(&where));
		vpa_buf_release(&where);
		vpa_buf_release(&t);
	}
}

void vpa_doc_limitations(const struct vpa_json *r, struct vpa_doc *d)
{
	vpa_doc_head(d, 1, "limitations", "Limitations", 1);
	vpa_doc_para(d, VPA_P_PLAIN, "What the numbers of this run can and cannot show.");
	struct vpa_blk *l = vpa_doc_list(d);
	if (d->simulated)
		vpa_doc_item(l, "Simulated targets (%s): the data are generated to show the method; "
			     "conclusions about a real system need a run on its real data.", d->simulated);
	const struct vpa_json *tgs = vpa_json_get(r, "targets");
	for (size_t i = 0; tgs && tgs->type == VPA_JSON_ARR && i < tgs->n; i++) {
		struct vpa_buf syn;
		vpa_buf_init(&syn);
		vpa_synthetic_sets(tgs->items[i], &syn);
		if (syn.len)
			vpa_doc_item(l, "Synthetic score files (%s): they show the method, not a real "
				     "system's scores.", syn.data);
		vpa_buf_release(&syn);
		const char *speech = vpa_target_synthetic(tgs->items[i]);
		const char *tid = vpa_json_get_str(tgs->items[i], "id");
		if (speech)
			vpa_doc_item(l, "The speech of %s is %s. Text-to-speech voices differ from "
				     "one another less, and more regularly, than people do: what an "
				     "attacker links here shows the method, not what it would link on "
				     "recordings.", tid ? tid : "?", speech);
		/* fl_acoustic_models source: audio with spk_vec_dim > 0 */
		const char *sv = vpa_json_get_str(vpa_json_get(tgs->items[i], "info"), "speaker_vector");
		if (sv && strcmp(sv, "none"))
			vpa_doc_item(l, "The acoustic models of %s take %s. It is a stand-in for the "
				     "i-vectors of Tomashenko et al.'s models, not an i-vector (no "
				     "UBM, no total-variability model): what it adds to the leak is "
				     "not the paper's.", tid ? tid : "?", sv);
	}
	anti_correlated_limits(r, l);
	const struct vpa_json *recs = vpa_json_get(r, "records"), *atts = vpa_json_get(r, "attacks");
	for (size_t a = 0; atts && atts->type == VPA_JSON_ARR && a < atts->n; a++) {
		const char *id = vpa_json_get_str(atts->items[a], "id");
		size_t n_rec = 0, n_unrel = 0, n_small = 0, n_undef = 0;
		double min_t = INFINITY;
		const char *example = NULL, *example_key = NULL, *undef_key = NULL;
		for (size_t i = 0; recs && recs->type == VPA_JSON_ARR && i < recs->n; i++) {
			const struct vpa_json *rec = recs->items[i];
			const char *ra = vpa_json_get_str(rec, "attack");
			if (!ra || strcmp(ra, id))
				continue;
			n_rec++;
			double nt = vpa_rec_num(rec, "n_target");
			if (isfinite(nt) && nt < 100) {
				n_small++;
				min_t = fmin(min_t, nt);
			}
			const struct vpa_json *u = vpa_json_get(rec, "unreliable");
			int any = 0;
			for (size_t k = 0; u && u->type == VPA_JSON_OBJ && k < u->n; k++) {
				const char *why = u->items[k]->type == VPA_JSON_STR ? u->items[k]->str : "";
				if (!strcmp(why, "undefined value")) {
					if (!n_undef++)
						undef_key = u->keys[k];
					continue;
				}
				any = 1;
				if (!example) {
					example = why;
					example_key = u->keys[k];
				}
			}
			n_unrel += any;
		}
		if (n_small)
			vpa_doc_item(l, "%s: %zu of %zu records have fewer than 100 target trials "
				     "(as few as %.0f): their error rates are uncertain by several "
				     "percentage points.", id, n_small, n_rec, min_t);
		if (n_unrel)
			vpa_doc_item(l, "%s: %zu of %zu records have values that cannot be trusted "
				     "(shown grey), e.g. %s: %s.", id, n_unrel, n_rec, example_key,
				     plain_reason(example) ? plain_reason(example) : example);
		if (n_undef) {
			/* the example is one of this attack's own undefined values */
			const char *why = !undef_key ? "" :
					  !strncmp(undef_key, "epsilon", 7) ?
						  " (no differential privacy was applied)" :
					  !strncmp(undef_key, "linkability", 11) ?
						  " (fewer than 10 same-speaker scores)" : "";
			vpa_doc_item(l, "%s: %zu value%s undefined (shown as \"undefined\"), e.g. "
				     "%s%s.", id, n_undef, n_undef == 1 ? " is" : "s are",
				     undef_key ? undef_key : "?", why);
		}
	}
	/* what the attacks do not cover, once per kind present */
	for (size_t a = 0; atts && atts->type == VPA_JSON_ARR && a < atts->n; a++) {
		const char *kind = vpa_json_get_str(atts->items[a], "kind");
		int first = 1;
		for (size_t b = 0; b < a && first; b++) {
			const char *k2 = vpa_json_get_str(atts->items[b], "kind");
			first = !(kind && k2 && !strcmp(kind, k2));
		}
		const char *nc = vpa_threat_not_covered(kind);
		if (first && nc)
			vpa_doc_item(l, "Not covered (%s): %s.", kind, nc);
	}
	const struct vpa_json *warn = vpa_json_get(r, "warnings");
	if (warn && warn->type == VPA_JSON_ARR && warn->n) {
		vpa_doc_para(d, VPA_P_PLAIN, "Warnings printed by the run:");
		struct vpa_blk *wl = vpa_doc_list(d);
		for (size_t i = 0; i < warn->n; i++)
			if (warn->items[i]->type == VPA_JSON_STR)
				vpa_doc_item(wl, "%s", warn->items[i]->str);
	}
	if (l->n_items == 0)
		vpa_doc_item(l, "Nothing in this run limits its numbers beyond what the glossary says "
			     "about each metric.");
}

/* ---- comparison with a baseline ---- */

void vpa_doc_compare(const struct vpa_json *r, struct vpa_doc *d)
{
	const struct vpa_json *bl = vpa_json_get(r, "baseline");
	if (!bl || bl->type != VPA_JSON_OBJ)
		return;
	vpa_doc_head(d, 1, "comparison", "Comparison with the baseline", 1);
	const char *file = vpa_json_get_str(bl, "file");
	double matched = vpa_json_get_num(bl, "matched", NAN), recs = vpa_json_get_num(bl, "records", NAN);
	double regs = vpa_json_get_num(bl, "regressions", NAN);
	const struct vpa_json *cmp = vpa_json_get(bl, "comparisons");
	size_t n = cmp && cmp->type == VPA_JSON_ARR ? cmp->n : 0, n_up = 0, n_down = 0, n_reg = 0;
	for (size_t i = 0; i < n; i++) {
		const char *st = vpa_json_get_str(cmp->items[i], "status");
		double delta = vpa_json_get_num(cmp->items[i], "delta", NAN);
		n_reg += st && !strcmp(st, "regression");
		n_up += isfinite(delta) && delta > 0;
		n_down += isfinite(delta) && delta < 0;
	}
	struct vpa_buf s;
	vpa_buf_init(&s);
	vpa_buf_printf(&s, "Compared with the earlier run %s", file ? file : "(baseline)");
	if (isfinite(matched) && isfinite(recs))
		vpa_buf_printf(&s, " (%.0f of %.0f records matched)", matched, recs);
	vpa_buf_printf(&s, ": %zu value%s went up, %zu went down; ", n_up, n_up == 1 ? "" : "s", n_down);
	if (isfinite(regs) ? regs > 0 : n_reg > 0)
		vpa_buf_printf(&s, "%.0f moved in the leaky direction by more than the tolerance "
			       "(regressions).", isfinite(regs) ? regs : (double)n_reg);
	else
		vpa_buf_puts(&s, "none moved in the leaky direction by more than the tolerance.");
	vpa_doc_para(d, n_reg ? VPA_P_FAIL : VPA_P_PLAIN, "%s", s.data);
	vpa_buf_release(&s);
	const struct vpa_json *ls = vpa_json_get(bl, "lines"); /* other arithmetic: machine.c */
	for (size_t i = 0; ls && ls->type == VPA_JSON_ARR && i < ls->n; i++) {
		const char *kind = vpa_json_get_str(ls->items[i], "kind");
		const char *text = vpa_json_get_str(ls->items[i], "text");
		if (kind && text && !strcmp(kind, "WARNING"))
			vpa_doc_para(d, VPA_P_NOTE, "Warning: %s.", text);
	}
	const struct vpa_json *un = vpa_json_get(bl, "unmatched");
	if (un && un->type == VPA_JSON_ARR && un->n)
		vpa_doc_para(d, VPA_P_NOTE, "%zu record%s could not be matched (present in only one of "
			     "the two runs).", un->n, un->n == 1 ? "" : "s");
	if (!n)
		return;
	/* regressions first, then the other moves */
	struct vpa_table t;
	vpa_table_new(&t, n, 6);
	static const char *const h[] = {"record", "metric", "before", "now", "change", "status"};
	for (size_t c = 0; c < 6; c++)
		vpa_table_set(&t, (size_t)-1, c, "%s", h[c]);
	t.numeric[2] = t.numeric[3] = t.numeric[4] = 1;
	size_t row = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			const struct vpa_json *c = cmp->items[i];
			const char *st = vpa_json_get_str(c, "status");
			int reg = st && !strcmp(st, "regression");
			if (reg != (pass == 0))
				continue;
			const char *nm = vpa_json_get_str(c, "name"), *a = vpa_json_get_str(c, "attack");
			const char *sub = vpa_json_get_str(c, "sub"), *m = vpa_json_get_str(c, "metric");
			if (nm)
				vpa_table_set(&t, row, 0, "%s", nm);
			else
				vpa_table_set(&t, row, 0, "%s%s%s", a ? a : "?", sub ? "." : "", sub ? sub : "");
			vpa_table_set(&t, row, 1, "%s", m ? m : "?");
			struct vpa_buf x;
			vpa_buf_init(&x);
			static const char *const keys[] = {"old", "new", "delta"};
			for (int k = 0; k < 3; k++) {
				x.len = 0;
				const struct vpa_json *v = vpa_json_get(c, keys[k]);
				if (v && v->type == VPA_JSON_NUM && k == 2 && v->num > 0)
					vpa_buf_puts(&x, "+");
				if (v)
					vpa_report_fmt(&x, m ? m : "", v);
				else
					vpa_buf_puts(&x, "-");
				vpa_table_set(&t, row, (size_t)k + 2, "%s", vpa_buf_str(&x));
			}
			vpa_buf_release(&x);
			vpa_table_set(&t, row, 5, "%s", reg ? "leakier (regression)" : st ? st : "-");
			t.row_class[row] = reg ? VPA_ROW_FAIL : VPA_ROW_PLAIN;
			row++;
		}
	vpa_doc_table(d, &t, "What moved since the baseline (regressions first)");
}
