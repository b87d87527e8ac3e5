/*
 * reports/doc_build.c - the report's document (reports/doc.h): the results
 * section (metrics tables split into readable groups, figures with captions)
 * and vpa_doc_build, the assembly of every section in reading order.  It
 * calls the section builders (summary.c, threat.c, advice.c, glossary.c,
 * provenance.c) and the model below them (doc.c, table.c); the renderers
 * (html.c, pdf_doc.c through render.c) call it.  Split from doc.c so that
 * the model is below the sections and the sections below the assembly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/doc.h"
#include "reports/sec_legal.h"

/* ---- the results section ---- */

/*
 * The privacy metrics, in the order a reader should see them; every other
 * column is a diagnostic (counts, thresholds, spreads, timings).
 */
static const char *const privacy_keys[] = {
	"eer", "linkability", "cllr_min", "min_dcf", "zebra.dece", "zebra.log10_lr_worst",
	"zebra.category", "gvd", "top1", "top5", "top10", "topk", "mean_norm_rank", "mean_rank",
	"exposure", "exposure_extrapolated", "max_exposure", "rank", "d_exposure",
	"d_exposure_max", "d_exposure_chance", "d_exposure_label", "d_exposure_label_excess",
	"accuracy", "utility_acc", "snr", "epsilon", "epsilon_lower_bound", "epsilon_local", "epsilon_central", "delta",
	"sv_eer_distilled", "sv_eer_baseline", "perplexity",
};
#define N_PRIVACY (sizeof(privacy_keys) / sizeof(privacy_keys[0]))

/* At most this many value columns per table: fits an A4 page in 8 pt type
 * and a laptop screen without scrolling. */
enum { MAX_VALUE_COLS = 6 };

/* The metric a column shows: its head without " 95% CI" / " CI". */
static void col_metric(const char *head, char *out, size_t cap)
{
	snprintf(out, cap, "%s", head);
	char *ci = strstr(out, " CI");
	if (ci && ci[3] == 0) {
		*ci = 0;
		char *sp = strrchr(out, ' ');
		if (sp && strchr(sp, '%'))
			*sp = 0;
	}
}

static int is_ci_col(const char *head)
{
	size_t l = strlen(head);
	return l > 3 && !strcmp(head + l - 3, " CI");
}

static int privacy_rank(const char *metric)
{
	for (size_t i = 0; i < N_PRIVACY; i++)
		if (!strcmp(metric, privacy_keys[i]))
			return (int)i;
	return -1;
}

/* A copy of src with its key columns and the value columns cols[0..n). */
static void table_select(const struct vpa_table *src, const size_t *cols, size_t n,
			 struct vpa_table *t)
{
	size_t nk = src->n_key, nc = nk + n;
	vpa_table_new(t, src->n_rows, nc);
	t->n_key = nk;
	for (size_t c = 0; c < nc; c++) {
		size_t from = c < nk ? c : cols[c - nk];
		t->head[c] = xstrdup(src->head[from]);
		t->numeric[c] = src->numeric[from];
		for (size_t r = 0; r < src->n_rows; r++) {
			size_t a = r * nc + c, b = r * src->n_cols + from;
			t->cells[a] = xstrdup(src->cells[b] ? src->cells[b] : "");
			t->cell_class[a] = src->cell_class ? src->cell_class[b] : 0;
			t->cell_note[a] = src->cell_note && src->cell_note[b] ? xstrdup(src->cell_note[b])
									    : NULL;
		}
	}
	for (size_t r = 0; r < src->n_rows; r++)
		t->row_class[r] = src->row_class[r];
}

/* Emit groups of columns (each metric with its CI column) of at most
 * MAX_VALUE_COLS value columns. */
static void emit_groups(struct vpa_doc *d, const struct vpa_table *t, const size_t *cols, size_t n,
			const char *what)
{
	size_t start = 0, part = 0, parts = 0;
	/* count the parts first, for "(1 of 3)" */
	for (size_t pass = 0; pass < 2; pass++) {
		start = 0;
		part = 0;
		while (start < n) {
			size_t end = start;
			while (end < n) {
				size_t step = end + 1 < n && is_ci_col(t->head[cols[end + 1]]) ? 2 : 1;
				if (end - start + step > MAX_VALUE_COLS && end > start)
					break;
				end += step;
			}
			part++;
			if (pass == 1) {
				struct vpa_table g;
				table_select(t, cols + start, end - start, &g);
				struct vpa_buf cap;
				vpa_buf_init(&cap);
				if (parts > 1)
					vpa_buf_printf(&cap, "%s (%zu of %zu)", what, part, parts);
				else
					vpa_buf_puts(&cap, what);
				vpa_doc_table(d, &g, cap.data);
				vpa_buf_release(&cap);
			}
			start = end;
		}
		parts = part;
	}
}

static const char *fig_caption(const struct vpa_json *f)
{
	const char *type = vpa_json_get_str(f, "type"), *y = vpa_json_get_str(f, "ylabel");
	if (type && !strcmp(type, "det"))
		return "What to look at: each curve trades missed detections against false alarms for "
		       "one attacker. A curve far from the lower-left corner, with its EER dot near "
		       "50%, means the attacker cannot tell speakers apart (good for privacy).";
	if (type && !strcmp(type, "linkability"))
		return "What to look at: the overlap of the same-speaker (mated) and different-speaker "
		       "(non-mated) score histograms. Where they separate, the line D<->(s) rises "
		       "towards 1 and recordings can be linked; D<->sys near 0 is good for privacy.";
	if (type && !strcmp(type, "bars"))
		return "What to look at: the height of each bar against the fixed scale; compare the "
		       "attackers or layers named under the bars.";
	/* issue 29's figures (attacks/linkage_legal_fig.c) */
	if (y && !strncmp(y, "pi_link", 7))
		return "What to look at: each attacker's curve against the chance curve 1/N'. A curve "
		       "on the chance curve means anonymised conversations cannot be linked to their "
		       "speaker better than by guessing; far above it, they can.";
	if (y && !strncmp(y, "pi_sing", 7))
		/* (its first 36 characters differ from pi_link's: add_fig shows a
		 * caption once per section by that prefix) */
		return "What to look at: how far each attacker's curve rises above the trivial "
		       "predicate (1-1/N)^(N-1), which falls to e^-1 = 0.368. A curve on it means no "
		       "one is singled out better than by a predicate that ignores the voice.";
	if (y && (strstr(y, "EER") || strstr(y, "eer")))
		return "What to look at: where the curves fall. A lower EER means the attacker tells "
		       "speakers apart more often (leakier); 50% is chance.";
	if (y && strstr(y, "exposure"))
		return "What to look at: how close the curves come to the maximum exposure; a canary "
		       "near the maximum has been memorised by the model.";
	if (y && strstr(y, "accuracy"))
		return "What to look at: the utility the privacy protection leaves; a regime that "
		       "protects privacy should not fall far below the others.";
	if (y && (strstr(y, "rank") || strstr(y, "precision")))
		return "What to look at: the normalised rank near 0.5 and a low top-k precision mean "
		       "the true speaker is not singled out in the population.";
	if (y && strstr(y, "linkability"))
		return "What to look at: linkability near 0 means recordings cannot be linked to one "
		       "another; near 1, fully linkable.";
	return "What to look at: how the values change along the horizontal axis.";
}

/* A figure block; the "what to look at" sentence only on the first figure of
 * its kind in the section (seen: the kinds already explained). */
static void add_fig(struct vpa_doc *d, const struct vpa_json *f, size_t *fig_k, struct vpa_buf *seen)
{
	struct vpa_blk *b = vpa_doc_add(d, VPA_B_FIG);
	b->fig = (*fig_k)++;
	const char *fid = vpa_json_get_str(f, "id"), *ft = vpa_json_get_str(f, "title");
	b->id = fid ? xstrdup(fid) : NULL;
	const char *cap = fig_caption(f);
	struct vpa_buf c;
	vpa_buf_init(&c);
	vpa_buf_printf(&c, "%s.", ft ? ft : "Figure");
	char key[40];
	snprintf(key, sizeof(key), "|%.36s", cap);
	if (!seen->len || !strstr(seen->data, key)) {
		vpa_buf_printf(&c, " %s", cap);
		vpa_buf_puts(seen, key);
	}
	b->text = c.data;
}

static int is_utility_fig(const struct vpa_json *f)
{
	const char *id = vpa_json_get_str(f, "id");
	return id && !strcmp(id, "privacy-utility");
}

static void results_section(const struct vpa_json *r, struct vpa_doc *d, size_t *fig_k)
{
	vpa_doc_head(d, 1, "results", "Results per attack", 1);
	vpa_doc_para(d, VPA_P_PLAIN,
		     "Each attack has its privacy metrics first, then its diagnostics (counts, "
		     "thresholds, spreads). The glossary explains every metric.");
	const struct vpa_json *atts = vpa_json_get(r, "attacks");
	for (size_t a = 0; atts && atts->type == VPA_JSON_ARR && a < atts->n; a++) {
		const struct vpa_json *at = atts->items[a];
		const char *id = vpa_json_get_str(at, "id"), *title = vpa_json_get_str(at, "title");
		const char *kind = vpa_json_get_str(at, "kind");
		char anchor[32];
		snprintf(anchor, sizeof(anchor), "attack-%zu", a + 1);
		struct vpa_buf h;
		vpa_buf_init(&h);
		vpa_buf_puts(&h, id);
		if (kind)
			vpa_buf_printf(&h, " (%s)", kind);
		vpa_doc_head(d, 2, anchor, h.data, 1);
		vpa_buf_release(&h);
		if (title && strcmp(title, id))
			vpa_doc_para(d, VPA_P_NOTE, "%s", title);
		if (vpa_attack_simulated(r, id)) {
			const char *syn = vpa_target_synthetic(vpa_attack_target(r, id));
			vpa_doc_para(d, VPA_P_BANNER, "SIMULATED target%s%s: these numbers show the "
				     "method, not a real system.", syn ? " on " : "", syn ? syn : "");
		}
		struct vpa_table t;
		vpa_table_attack(r, id, &t);
		if (t.n_rows == 0) {
			vpa_doc_para(d, VPA_P_NOTE, "No records.");
		} else {
			size_t nv = t.n_cols - t.n_key, np = 0, ng = 0;
			size_t *priv = xcalloc(nv ? nv : 1, sizeof(*priv));
			size_t *diag = xcalloc(nv ? nv : 1, sizeof(*diag));
			/* privacy columns in privacy_keys order, each with its CI */
			for (size_t k = 0; k < N_PRIVACY; k++)
				for (size_t c = t.n_key; c < t.n_cols; c++) {
					char m[128];
					col_metric(t.head[c], m, sizeof(m));
					if (!strcmp(m, privacy_keys[k]) && !is_ci_col(t.head[c])) {
						priv[np++] = c;
						if (c + 1 < t.n_cols && is_ci_col(t.head[c + 1]))
							priv[np++] = c + 1;
					}
				}
			for (size_t c = t.n_key; c < t.n_cols; c++) {
				char m[128];
				col_metric(t.head[c], m, sizeof(m));
				if (privacy_rank(m) < 0)
					diag[ng++] = c;
			}
			if (np)
				emit_groups(d, &t, priv, np, "Privacy metrics");
			if (ng)
				emit_groups(d, &t, diag, ng, "Diagnostics");
			if (t.note)
				vpa_doc_para(d, VPA_P_NOTE, "%s", t.note);
			struct vpa_buf un;
			vpa_buf_init(&un);
			vpa_unreliable_note(r, id, NULL, NULL, 0, &un);
			if (un.len)
				vpa_doc_para(d, VPA_P_NOTE, "* Values in grey cannot be trusted: %s.", un.data);
			vpa_buf_release(&un);
			if (t.cell_summary && strstr(t.cell_summary, "above 1 bit"))
				vpa_doc_para(d, VPA_P_NOTE, "* A cllr above 1 bit: the scores are not "
					     "calibrated log-likelihood ratios; read cllr_min.");
			free(priv);
			free(diag);
		}
		vpa_table_release(&t);
		const struct vpa_json *figs = vpa_json_get(at, "figures");
		struct vpa_buf seen;
		vpa_buf_init(&seen);
		for (size_t i = 0; figs && figs->type == VPA_JSON_ARR && i < figs->n; i++)
			add_fig(d, figs->items[i], fig_k, &seen);
		vpa_buf_release(&seen);
	}
	const struct vpa_json *sw = vpa_json_get(r, "sweep"), *figs = vpa_json_get(r, "figures");
	/* the privacy-utility figure (always the last) is shown by the utility section */
	size_t n_figs = figs && figs->type == VPA_JSON_ARR ? figs->n : 0;
	if (n_figs && is_utility_fig(figs->items[n_figs - 1]))
		n_figs--;
	if ((sw && sw->type == VPA_JSON_OBJ) || n_figs) {
		vpa_doc_head(d, 2, "sweep", "Sweep", 1);
		const char *param = sw && sw->type == VPA_JSON_OBJ ? vpa_json_get_str(sw, "param") : NULL;
		const struct vpa_json *vals = sw && sw->type == VPA_JSON_OBJ ? vpa_json_get(sw, "values")
									   : NULL;
		if (param) {
			struct vpa_buf v;
			vpa_buf_init(&v);
			for (size_t i = 0; vals && vals->type == VPA_JSON_ARR && i < vals->n; i++) {
				if (i)
					vpa_buf_puts(&v, ", ");
				vpa_report_fmt(&v, "sweep", vals->items[i]);
			}
			vpa_doc_para(d, VPA_P_PLAIN, "The scenario was run once for each value of %s: %s.",
				     param, v.data ? v.data : "");
			vpa_buf_release(&v);
		}
		struct vpa_buf seen;
		vpa_buf_init(&seen);
		for (size_t i = 0; i < n_figs; i++)
			add_fig(d, figs->items[i], fig_k, &seen);
		vpa_buf_release(&seen);
	}
}

void vpa_doc_build(const struct vpa_json *r, struct vpa_doc *d)
{
	memset(d, 0, sizeof(*d));
	const struct vpa_json *sc = vpa_json_get(r, "scenario");
	const char *name = vpa_json_get_str(sc, "name"), *desc = vpa_json_get_str(sc, "description");
	const char *ver = vpa_json_get_str(r, "vpaudit_version"), *st = vpa_json_get_str(r, "started");
	d->title = xstrdup(name ? name : "scenario");
	d->description = desc ? xstrdup(desc) : NULL;
	struct vpa_buf v;
	vpa_buf_init(&v);
	vpa_buf_printf(&v, "vpaudit %s", ver ? ver : "(unknown version)");
	d->version = v.data;
	d->started = st ? xstrdup(st) : NULL;
	struct vpa_buf sim;
	vpa_buf_init(&sim);
	vpa_simulated_targets(r, &sim);
	d->simulated = sim.len ? sim.data : NULL;
	if (!sim.len)
		vpa_buf_release(&sim);

	size_t fig_k = 0;
	vpa_doc_summary(r, d);
	vpa_doc_legal(r, d);
	vpa_doc_threat(r, d);
	vpa_doc_dp(r, d);
	results_section(r, d, &fig_k);
	vpa_doc_utility(r, d);
	vpa_doc_compare(r, d);
	vpa_doc_limitations(r, d);
	vpa_doc_advice(r, d);
	vpa_doc_glossary(r, d);
	vpa_doc_data(r, d);
}
