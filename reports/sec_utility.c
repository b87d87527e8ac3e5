/*
 * reports/sec_utility.c - what the anonymisation costs (issue 30 item 4):
 * the utility section of the report (WER on the original and anonymised
 * trials with the recogniser named, the emotion recogniser's UAR with its
 * per-class recall and confusion matrices, rho_F0, G_VD, the privacy-utility
 * figure) and the trade-off sentences of the executive summary
 * ("EER 15.0% for the semi-informed attacker at a WER cost of +2.7 points").
 *
 * Everything is read from the results DOM: the targets' info.audio (wer_orig,
 * wer_anon, rho_f0, ser) and the linkage records, which carry the same WER
 * cost (wer_increase, attacks/linkage.c) beside their EER.  "Strongest
 * attacker": the lowest EER among the pooled records of the attack (no
 * per-list or per-gender split), the unprotected baseline left out (it
 * attacks no anonymisation) - the attacks/privacy_utility.c figure's point.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/doc.h"

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

static const struct vpa_json *audio_of(const struct vpa_json *t)
{
	return vpa_json_get(vpa_json_get(t, "info"), "audio");
}

/* The recogniser named by the WER object or info.audio ("recogniser" or
 * "asr": a string, or an object's name [version] [(model)]), else NULL. */
static const char *recogniser(const struct vpa_json *au, const char *which, char *buf,
			      size_t cap)
{
	const struct vpa_json *where[2] = {vpa_json_get(au, which), au};
	static const char *const keys[2] = {"recogniser", "asr"};
	for (int w = 0; w < 2; w++)
		for (int k = 0; k < 2; k++) {
			const struct vpa_json *v = vpa_json_get(where[w], keys[k]);
			if (v && v->type == VPA_JSON_STR)
				return v->str;
			const char *name = vpa_json_get_str(v, "name");
			if (!name)
				continue;
			const char *ver = vpa_json_get_str(v, "version");
			const char *model = vpa_json_get_str(v, "model");
			snprintf(buf, cap, "%s%s%s%s%s%s", name, ver ? " " : "", ver ? ver : "",
				 model ? " (" : "", model ? model : "", model ? ")" : "");
			return buf;
		}
	return NULL;
}

/* attacker names in words: "semi_informed" -> "semi-informed" */
static void attacker_words(struct vpa_buf *b, const char *sub)
{
	for (const char *p = sub; *p; p++)
		vpa_buf_printf(b, "%c", *p == '_' ? '-' : *p);
}

/* a change in percentage points, signed, never rounded to a false 0 */
static void points(struct vpa_buf *b, double frac)
{
	double p = 100 * frac;
	if (fabs(p) >= 0.05)
		vpa_buf_printf(b, "%+.1f points", p);
	else
		vpa_buf_printf(b, "%+.2g points", p);
}

/* One trade-off sentence per linkage attack and sweep value whose records
 * carry a WER cost or whose target has a UAR. */
void vpa_utility_sentences(const struct vpa_json *r, struct vpa_buf *out)
{
	const struct vpa_json *recs = vpa_json_get(r, "records");
	const struct vpa_json *swp = vpa_json_get(r, "sweep");
	const char *param = swp && swp->type == VPA_JSON_OBJ ? vpa_json_get_str(swp, "param") : NULL;
	for (size_t i = 0; recs && recs->type == VPA_JSON_ARR && i < recs->n; i++) {
		const struct vpa_json *rec = recs->items[i];
		const char *aid = vpa_json_get_str(rec, "attack");
		const struct vpa_json *a = vpa_attack_find(r, aid);
		const char *kind = vpa_json_get_str(a, "kind");
		if (!aid || !kind || strcmp(kind, "linkage") || !pooled_attacker(rec))
			continue;
		const struct vpa_json *sw = vpa_json_get(rec, "sweep");
		int seen = 0;
		for (size_t q = 0; q < i && !seen; q++) {
			const char *oa = vpa_json_get_str(recs->items[q], "attack");
			seen = oa && !strcmp(oa, aid) && pooled_attacker(recs->items[q]) &&
			       same_sweep(vpa_json_get(recs->items[q], "sweep"), sw);
		}
		if (seen)
			continue;
		double best = INFINITY;
		const char *who = NULL;
		const struct vpa_json *m0 = vpa_json_get(rec, "metrics");
		for (size_t q = i; q < recs->n; q++) {
			const struct vpa_json *o = recs->items[q];
			const char *oa = vpa_json_get_str(o, "attack");
			if (!oa || strcmp(oa, aid) || !pooled_attacker(o) ||
			    !same_sweep(vpa_json_get(o, "sweep"), sw))
				continue;
			double e = vpa_json_get_num(vpa_json_get(o, "metrics"), "eer", NAN);
			if (isfinite(e) && e < best) {
				best = e;
				who = vpa_json_get_str(o, "sub");
			}
		}
		double wo = vpa_json_get_num(m0, "wer_orig", NAN), wa = vpa_json_get_num(m0, "wer_anon", NAN);
		double dw = vpa_json_get_num(m0, "wer_increase", NAN);
		double uo = vpa_json_get_num(m0, "uar_orig", NAN), ua = vpa_json_get_num(m0, "uar_anon", NAN);
		int has_wer = isfinite(dw) && isfinite(wo) && isfinite(wa);
		int has_uar = isfinite(uo) && isfinite(ua);
		if (!has_wer && !has_uar)
			continue;
		const struct vpa_json *t = vpa_attack_target(r, aid);
		const char *tid = vpa_json_get_str(t, "id");
		if (out->len)
			vpa_buf_puts(out, " ");
		vpa_buf_printf(out, "%s", tid ? tid : aid);
		if (sw && sw->type == VPA_JSON_NUM)
			vpa_buf_printf(out, " at %s = %g", param ? param : "the sweep value", sw->num);
		else if (sw && sw->type == VPA_JSON_STR)
			vpa_buf_printf(out, " at %s = %s", param ? param : "the sweep value", sw->str);
		vpa_buf_puts(out, ": ");
		if (who) {
			vpa_buf_puts(out, "EER ");
			vpa_put_pct(out, best);
			vpa_buf_puts(out, " for the ");
			attacker_words(out, who);
			vpa_buf_puts(out, " attacker (the strongest)");
		} else {
			vpa_buf_puts(out, "no attacker's EER is defined");
		}
		if (has_wer) {
			char buf[512];
			const char *rn = recogniser(audio_of(t), "wer_anon", buf, sizeof(buf));
			if (dw > 0) {
				vpa_buf_puts(out, " at a WER cost of ");
				points(out, dw);
			} else if (dw < 0) {
				vpa_buf_puts(out, " with the WER lower after anonymisation (");
				points(out, dw);
				vpa_buf_puts(out, ")");
			} else {
				vpa_buf_puts(out, " at no WER cost");
			}
			vpa_buf_puts(out, " (WER ");
			vpa_put_pct(out, wo);
			vpa_buf_puts(out, " on the original trials, ");
			vpa_put_pct(out, wa);
			vpa_buf_printf(out, " anonymised; %s)", rn ? rn : "from your hyp files");
		}
		vpa_buf_puts(out, ".");
		if (has_uar) {
			vpa_buf_puts(out, " The emotion recogniser's UAR goes from ");
			vpa_put_pct(out, uo);
			vpa_buf_puts(out, " to ");
			vpa_put_pct(out, ua);
			vpa_buf_puts(out, " (");
			points(out, ua - uo);
			vpa_buf_puts(out, ").");
		}
	}
}

/* the pooled G_VD the VPC reports (lazy-informed; ignorant when absent) */
static double gvd_of(const struct vpa_json *r, const char *tid)
{
	const struct vpa_json *recs = vpa_json_get(r, "records");
	double g[2] = {NAN, NAN};
	for (size_t i = 0; recs && recs->type == VPA_JSON_ARR && i < recs->n; i++) {
		const struct vpa_json *rec = recs->items[i];
		const char *sub = vpa_json_get_str(rec, "sub");
		const struct vpa_json *t = vpa_attack_target(r, vpa_json_get_str(rec, "attack"));
		const char *id = vpa_json_get_str(t, "id");
		if (!sub || !id || strcmp(id, tid) || !pooled_attacker(rec))
			continue;
		double v = vpa_json_get_num(vpa_json_get(rec, "metrics"), "gvd", NAN);
		int k = !strcmp(sub, "lazy_informed") ? 0 : !strcmp(sub, "ignorant") ? 1 : -1;
		if (k >= 0 && isnan(g[k]))
			g[k] = v;
	}
	return isfinite(g[0]) ? g[0] : g[1];
}

static void pct_cell(struct vpa_table *t, size_t row, size_t col, double x)
{
	if (isfinite(x))
		vpa_table_set(t, row, col, "%.1f%%", 100 * x);
	else
		vpa_table_set(t, row, col, "-");
}

/* the emotion recogniser: recall per class, then both confusion matrices */
static void ser_tables(struct vpa_doc *d, const char *tid, const struct vpa_json *ser)
{
	const struct vpa_json *labs = vpa_json_get(ser, "labels");
	if (!labs || labs->type != VPA_JSON_ARR || !labs->n)
		return;
	size_t C = labs->n;
	const struct vpa_json *set[2] = {vpa_json_get(ser, "original"), vpa_json_get(ser, "anonymised")};
	int folds = vpa_json_get(set[0], "recall_folds") != NULL;
	struct vpa_table t;
	vpa_table_new(&t, C, 4);
	vpa_table_set(&t, (size_t)-1, 0, "class");
	vpa_table_set(&t, (size_t)-1, 1, "recall, original");
	vpa_table_set(&t, (size_t)-1, 2, "recall, anonymised");
	vpa_table_set(&t, (size_t)-1, 3, "utterances");
	for (size_t c = 1; c < 4; c++)
		t.numeric[c] = 1;
	for (size_t c = 0; c < C; c++) {
		const char *l = labs->items[c]->type == VPA_JSON_STR ? labs->items[c]->str : "?";
		vpa_table_set(&t, c, 0, "%s", l);
		for (int k = 0; k < 2; k++)
			pct_cell(&t, c, 1 + k,
				 vpa_json_get_num(vpa_json_get(set[k], folds ? "recall_folds" : "recall"), l,
						  NAN));
		vpa_table_set(&t, c, 3, "%.0f", vpa_json_get_num(vpa_json_get(set[0], "support"), l, 0));
	}
	char cap[256];
	snprintf(cap, sizeof(cap), "%s: the emotion recogniser's recall per class%s.", tid,
		 folds ? " (the mean over the speaker folds, as the VPC's ACC_<class>)" : "");
	vpa_doc_table(d, &t, cap);
	for (int k = 0; k < 2; k++) {
		const struct vpa_json *cm = vpa_json_get(set[k], "confusion");
		if (!cm || cm->type != VPA_JSON_ARR || cm->n != C)
			continue;
		vpa_table_new(&t, C, C + 1);
		vpa_table_set(&t, (size_t)-1, 0, "true \\ answer");
		for (size_t c = 0; c < C; c++) {
			const char *l = labs->items[c]->type == VPA_JSON_STR ? labs->items[c]->str : "?";
			vpa_table_set(&t, (size_t)-1, 1 + c, "%s", l);
			t.numeric[1 + c] = 1;
			vpa_table_set(&t, c, 0, "%s", l);
			const struct vpa_json *row = cm->items[c];
			for (size_t j = 0; j < C; j++)
				vpa_table_set(&t, c, 1 + j, "%.0f",
					      row && row->type == VPA_JSON_ARR && j < row->n &&
							      row->items[j]->type == VPA_JSON_NUM
						      ? row->items[j]->num
						      : 0);
		}
		snprintf(cap, sizeof(cap), "%s: confusion matrix of the emotion recogniser on the %s "
					   "audio (rows: true class, columns: its answer).",
			 tid, k ? "anonymised" : "original");
		vpa_doc_table(d, &t, cap);
	}
}

void vpa_doc_utility(const struct vpa_json *r, struct vpa_doc *d)
{
	const struct vpa_json *ts = vpa_json_get(r, "targets");
	size_t n_fig = vpa_count_figures(r), fig = (size_t)-1;
	if (n_fig) {
		const struct vpa_json **figs = xcalloc(n_fig, sizeof(*figs));
		vpa_collect_figures(r, figs);
		for (size_t k = 0; k < n_fig; k++) {
			const char *id = vpa_json_get_str(figs[k], "id");
			if (id && !strcmp(id, "privacy-utility"))
				fig = k;
		}
		free(figs);
	}
	int any = 0;
	for (size_t i = 0; ts && ts->type == VPA_JSON_ARR && i < ts->n; i++) {
		const struct vpa_json *au = audio_of(ts->items[i]);
		any |= au && (vpa_json_get(au, "wer_orig") || vpa_json_get(au, "wer_anon") ||
			      vpa_json_get(au, "rho_f0") || vpa_json_get(au, "ser"));
	}
	if (!any && fig == (size_t)-1)
		return;
	vpa_doc_head(d, 1, "utility", "Utility: what the anonymisation costs", 1);
	vpa_doc_para(d, VPA_P_PLAIN,
		     "Anonymisation is judged on privacy and utility: the speech must still be "
		     "understood by a recogniser (word error rate, WER; lower is better), keep its "
		     "emotion for an emotion recogniser (unweighted average recall, UAR; higher is "
		     "better), keep its intonation (pitch correlation rho_F0 between the original and "
		     "the anonymised utterance, 1 = the same contour) and its voices distinct from "
		     "one another (G_VD in dB, 0 = as distinct as the originals).");
	struct vpa_buf s;
	vpa_buf_init(&s);
	vpa_utility_sentences(r, &s);
	if (s.len)
		vpa_doc_para(d, VPA_P_PLAIN, "%s", s.data);
	vpa_buf_release(&s);
	for (size_t i = 0; ts && ts->type == VPA_JSON_ARR && i < ts->n; i++) {
		const struct vpa_json *au = audio_of(ts->items[i]);
		const char *tid = vpa_json_get_str(ts->items[i], "id");
		if (!au || !tid)
			continue;
		const struct vpa_json *wo = vpa_json_get(au, "wer_orig"), *wa = vpa_json_get(au, "wer_anon");
		const struct vpa_json *ser = vpa_json_get(au, "ser");
		double rho = vpa_json_get_num(au, "rho_f0", NAN), gvd = gvd_of(r, tid);
		if (!wo && !wa && !ser && !isfinite(rho))
			continue;
		struct vpa_table t;
		vpa_table_new(&t, 6, 5);
		vpa_table_set(&t, (size_t)-1, 0, "measure");
		vpa_table_set(&t, (size_t)-1, 1, "original");
		vpa_table_set(&t, (size_t)-1, 2, "anonymised");
		vpa_table_set(&t, (size_t)-1, 3, "change");
		vpa_table_set(&t, (size_t)-1, 4, "by");
		for (size_t c = 1; c < 4; c++)
			t.numeric[c] = 1;
		size_t row = 0;
		char b1[512], b2[512];
		if (wo || wa) {
			double x = vpa_json_get_num(wo, "wer", NAN), y = vpa_json_get_num(wa, "wer", NAN);
			const char *r1 = recogniser(au, "wer_orig", b1, sizeof(b1));
			const char *r2 = recogniser(au, "wer_anon", b2, sizeof(b2));
			vpa_table_set(&t, row, 0, "WER");
			pct_cell(&t, row, 1, x);
			pct_cell(&t, row, 2, y);
			if (isfinite(x) && isfinite(y))
				vpa_table_set(&t, row, 3, "%+.1f points", 100 * (y - x));
			else
				vpa_table_set(&t, row, 3, "-");
			vpa_table_set(&t, row, 4, "%s%s%s", r1 ? r1 : r2 ? r2 : "your hyp files",
				      r1 && r2 && strcmp(r1, r2) ? " / " : "",
				      r1 && r2 && strcmp(r1, r2) ? r2 : "");
			row++;
		}
		if (ser) {
			double x = vpa_json_get_num(ser, "uar_orig", NAN), y = vpa_json_get_num(ser, "uar_anon", NAN);
			const char *mdl = vpa_json_get_str(ser, "model"), *pr = vpa_json_get_str(ser, "protocol");
			vpa_table_set(&t, row, 0, "UAR (emotion)");
			pct_cell(&t, row, 1, x);
			pct_cell(&t, row, 2, y);
			vpa_table_set(&t, row, 3, isfinite(x) && isfinite(y) ? "%+.1f points" : "-",
				      100 * (y - x));
			vpa_table_set(&t, row, 4, "%s%s%s%s", mdl ? mdl : "?", pr ? " (" : "", pr ? pr : "",
				      pr ? ")" : "");
			row++;
			x = vpa_json_get_num(vpa_json_get(ser, "original"), "accuracy", NAN);
			y = vpa_json_get_num(vpa_json_get(ser, "anonymised"), "accuracy", NAN);
			vpa_table_set(&t, row, 0, "accuracy (emotion)");
			pct_cell(&t, row, 1, x);
			pct_cell(&t, row, 2, y);
			vpa_table_set(&t, row, 3, isfinite(x) && isfinite(y) ? "%+.1f points" : "-",
				      100 * (y - x));
			vpa_table_set(&t, row, 4, "the same, all utterances pooled");
			row++;
		}
		if (isfinite(rho)) {
			vpa_table_set(&t, row, 0, "rho_F0");
			vpa_table_set(&t, row, 1, "-");
			vpa_table_set(&t, row, 2, "%.3f", rho);
			vpa_table_set(&t, row, 3, "-");
			vpa_table_set(&t, row, 4, "YIN pitch, mean over %.0f utterances",
				      vpa_json_get_num(au, "rho_f0_utterances", 0));
			row++;
		}
		if (isfinite(gvd)) {
			vpa_table_set(&t, row, 0, "G_VD");
			vpa_table_set(&t, row, 1, "-");
			vpa_table_set(&t, row, 2, "%.2f dB", gvd);
			vpa_table_set(&t, row, 3, "-");
			vpa_table_set(&t, row, 4, "ASV_eval on original vs anonymised trials");
			row++;
		}
		t.n_rows = row; /* the rows left unused hold no cell (NULL) */
		char cap[256];
		snprintf(cap, sizeof(cap), "%s: utility on the original and the anonymised speech.", tid);
		vpa_doc_table(d, &t, cap);
		if (ser)
			ser_tables(d, tid, ser);
	}
	if (fig != (size_t)-1) {
		struct vpa_blk *b = vpa_doc_add(d, VPA_B_FIG);
		b->fig = fig;
		b->id = xstrdup("privacy-utility");
		b->text = xstrdup("Privacy against utility. What to look at: each point is one "
				  "anonymiser (or sweep level): further right costs more WER, higher "
				  "up leaves the strongest attacker a higher EER (better privacy; 50% "
				  "is chance). The best trade-offs lie to the upper left.");
	}
}
