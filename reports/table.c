/*
 * reports/table.c - the table model shared by report.html and report.pdf
 * (see reports/table.h): a table's cells (new, set, release) and the two
 * tables built from the results (gate summary, per-attack metrics).  It
 * calls only text.c and lookup.c; the document model (doc.c) and the
 * sections above it build on it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "reports/table.h"

void vpa_table_new(struct vpa_table *t, size_t n_rows, size_t n_cols)
{
	memset(t, 0, sizeof(*t));
	t->n_rows = n_rows;
	t->n_cols = n_cols;
	size_t nc = n_rows && n_cols ? xmul(n_rows, n_cols) : 1;
	t->head = xcalloc(n_cols ? n_cols : 1, sizeof(*t->head));
	t->numeric = xcalloc(n_cols ? n_cols : 1, sizeof(*t->numeric));
	t->cells = xcalloc(nc, sizeof(*t->cells));
	t->row_class = xcalloc(n_rows ? n_rows : 1, sizeof(*t->row_class));
	t->cell_class = xcalloc(nc, sizeof(*t->cell_class));
	t->cell_note = xcalloc(nc, sizeof(*t->cell_note));
	t->n_key = 1;
}

void vpa_table_set(struct vpa_table *t, size_t r, size_t c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vpa_vfmt(fmt, ap);
	va_end(ap);
	char **slot = r == (size_t)-1 ? &t->head[c] : &t->cells[r * t->n_cols + c];
	free(*slot);
	*slot = s;
}

void vpa_table_release(struct vpa_table *t)
{
	for (size_t i = 0; i < t->n_cols; i++)
		free(t->head[i]);
	for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
		free(t->cells[i]);
	free(t->head);
	free(t->numeric);
	free(t->cells);
	free(t->row_class);
	free(t->note);
	for (size_t i = 0; t->cell_note && i < t->n_rows * t->n_cols; i++)
		free(t->cell_note[i]);
	free(t->cell_note);
	free(t->cell_class);
	free(t->cell_summary);
	memset(t, 0, sizeof(*t));
}

static const char cllr_note[] = "above 1 bit: the scores are not calibrated LLRs; read cllr_min";

static char *fmt_cell(const char *key, const struct vpa_json *v)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_report_fmt(&b, key, v);
	vpa_buf_str(&b);
	return b.data;
}

void vpa_gate_bound(struct vpa_buf *out, const struct vpa_json *gate, int raw)
{
	const char *metric = vpa_json_get_str(gate, "metric");
	const struct vpa_json *lo = vpa_json_get(gate, "min"), *hi = vpa_json_get(gate, "max");
	int has_lo = lo && lo->type == VPA_JSON_NUM, has_hi = hi && hi->type == VPA_JSON_NUM;
	const char *of = vpa_json_get_str(gate, "max_of");
	if (of) { /* issue 28: bounded by the record's own other metric */
		vpa_buf_printf(out, "<= %s", of);
		return;
	}
	struct vpa_buf a, b;
	vpa_buf_init(&a);
	vpa_buf_init(&b);
	if (raw) {
		if (has_lo)
			vpa_buf_printf(&a, "%.6g", lo->num);
		if (has_hi)
			vpa_buf_printf(&b, "%.6g", hi->num);
	} else {
		if (has_lo)
			vpa_report_fmt(&a, metric ? metric : "", lo);
		if (has_hi)
			vpa_report_fmt(&b, metric ? metric : "", hi);
	}
	if (has_lo && has_hi)
		vpa_buf_printf(out, "in [%s, %s]", vpa_buf_str(&a), vpa_buf_str(&b));
	else if (has_lo)
		vpa_buf_printf(out, ">= %s", vpa_buf_str(&a));
	else if (has_hi)
		vpa_buf_printf(out, "<= %s", vpa_buf_str(&b));
	else
		vpa_buf_puts(out, "(no bound)");
	vpa_buf_release(&a);
	vpa_buf_release(&b);
}

static const struct vpa_json *get_arr(const struct vpa_json *obj, const char *key)
{
	const struct vpa_json *a = vpa_json_get(obj, key);
	return a && a->type == VPA_JSON_ARR ? a : NULL;
}

static int is_set(const struct vpa_json *v)
{
	return v && v->type != VPA_JSON_NULL;
}

void vpa_table_gates(const struct vpa_json *results, struct vpa_table *t)
{
	const struct vpa_json *gates = get_arr(results, "gates");
	size_t n = gates ? gates->n : 0;
	int any_layer = 0;
	for (size_t i = 0; i < n; i++)
		if (is_set(vpa_json_get(gates->items[i], "layer")))
			any_layer = 1;
	size_t nc = any_layer ? 6 : 5;
	vpa_table_new(t, n, nc);
	t->n_key = 2;
	static const char *heads[] = {"attack", "metric", "layer", "value", "bound", "result"};
	for (size_t c = 0, k = 0; k < 6; k++) {
		if (k == 2 && !any_layer)
			continue;
		t->head[c] = xstrdup(heads[k]);
		t->numeric[c] = k == 2 || k == 3;
		c++;
	}
	for (size_t i = 0; i < n; i++) {
		const struct vpa_json *g = gates->items[i];
		const char *attack = vpa_json_get_str(g, "attack"), *metric = vpa_json_get_str(g, "metric");
		const struct vpa_json *pass = vpa_json_get(g, "pass");
		int ok = pass && pass->type == VPA_JSON_BOOL && pass->boolean;
		char **row = t->cells + i * nc;
		size_t c = 0;
		row[c++] = xstrdup(attack ? attack : "");
		row[c++] = xstrdup(metric ? metric : "");
		if (any_layer) {
			const struct vpa_json *l = vpa_json_get(g, "layer");
			row[c++] = is_set(l) ? fmt_cell("layer", l) : xstrdup("worst");
		}
		const struct vpa_json *v = vpa_json_get(g, "value");
		row[c++] = v ? fmt_cell(metric ? metric : "", v) : xstrdup("undefined");
		struct vpa_buf b;
		vpa_buf_init(&b);
		vpa_gate_bound(&b, g, 0);
		row[c++] = b.data;
		row[c++] = xstrdup(ok ? "PASS" : "FAIL");
		t->row_class[i] = ok ? VPA_ROW_PASS : VPA_ROW_FAIL;
	}
}

/* Ordered set of strings. */
struct keys {
	char **k;
	size_t n, cap;
};

static size_t keys_find(const struct keys *ks, const char *s)
{
	for (size_t i = 0; i < ks->n; i++)
		if (!strcmp(ks->k[i], s))
			return i;
	return (size_t)-1;
}

static void keys_add(struct keys *ks, const char *s)
{
	if (keys_find(ks, s) != (size_t)-1)
		return;
	if (ks->n == ks->cap) {
		ks->cap = ks->cap ? 2 * ks->cap : 16;
		ks->k = xrealloc(ks->k, xmul(ks->cap, sizeof(*ks->k)));
	}
	ks->k[ks->n++] = xstrdup(s);
}

static void keys_release(struct keys *ks)
{
	for (size_t i = 0; i < ks->n; i++)
		free(ks->k[i]);
	free(ks->k);
}

/* Collect flattened metric keys ("zebra.dece") of obj under prefix. */
static void collect_keys(struct keys *ks, const struct vpa_json *obj, const char *prefix)
{
	for (size_t i = 0; i < obj->n; i++) {
		struct vpa_buf name;
		vpa_buf_init(&name);
		if (prefix)
			vpa_buf_printf(&name, "%s.", prefix);
		vpa_buf_puts(&name, obj->keys[i]);
		/* a DP audit's description: the section "Is the claimed guarantee credible?" */
		if (!prefix && !strcmp(obj->keys[i], "dp_audit")) {
			vpa_buf_release(&name);
			continue;
		}
		if (obj->items[i]->type == VPA_JSON_OBJ)
			collect_keys(ks, obj->items[i], name.data);
		else
			keys_add(ks, name.data);
		vpa_buf_release(&name);
	}
}

/* The value at a flattened key, or NULL. */
static const struct vpa_json *get_path(const struct vpa_json *obj, const char *path)
{
	const struct vpa_json *v = vpa_json_get(obj, path);
	if (v)
		return v;
	const char *dot = strchr(path, '.');
	while (dot) {
		char *head = xstrndup(path, (size_t)(dot - path));
		const struct vpa_json *sub = vpa_json_get(obj, head);
		free(head);
		if (sub && sub->type == VPA_JSON_OBJ) {
			v = get_path(sub, dot + 1);
			if (v)
				return v;
		}
		dot = strchr(dot + 1, '.');
	}
	return NULL;
}

static int ci_meta(const char *k)
{
	return !strcmp(k, "level") || !strcmp(k, "method") || !strcmp(k, "reps") ||
	       !strcmp(k, "reps_used") || !strcmp(k, "seed");
}

/* Cell notes gathered: one sentence per distinct note, with its metrics and count. */
struct summary {
	char **note, **metrics;
	size_t *count, n;
};

static void summary_add(struct summary *s, const char *metric, const char *note)
{
	size_t i = 0;
	while (i < s->n && strcmp(s->note[i], note))
		i++;
	if (i == s->n) {
		s->note = xrealloc(s->note, xmul(s->n + 1, sizeof(*s->note)));
		s->metrics = xrealloc(s->metrics, xmul(s->n + 1, sizeof(*s->metrics)));
		s->count = xrealloc(s->count, xmul(s->n + 1, sizeof(*s->count)));
		s->note[i] = xstrdup(note);
		s->metrics[i] = xstrdup("");
		s->count[i] = 0;
		s->n++;
	}
	s->count[i]++;
	size_t l = strlen(metric);
	const char *m = s->metrics[i];
	for (const char *p = strstr(m, metric); p; p = strstr(p + 1, metric))
		if ((p == m || p[-1] == ' ') && (p[l] == ',' || p[l] == 0))
			return;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s%s%s", m, *m ? ", " : "", metric);
	free(s->metrics[i]);
	s->metrics[i] = b.data;
}

static char *summary_text(const struct summary *s)
{
	if (!s->n)
		return NULL;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_puts(&b, "Notes on values (grey: cannot be trusted):");
	for (size_t i = 0; i < s->n; i++)
		vpa_buf_printf(&b, " %s - %s (%zu value%s).", s->metrics[i], s->note[i], s->count[i],
			       s->count[i] == 1 ? "" : "s");
	return b.data;
}

static void summary_release(struct summary *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->note[i]);
		free(s->metrics[i]);
	}
	free(s->note);
	free(s->metrics);
	free(s->count);
}

void vpa_table_attack(const struct vpa_json *results, const char *attack, struct vpa_table *t)
{
	struct summary sum = {0};
	const struct vpa_json *records = get_arr(results, "records");
	size_t n = 0;
	int has_sub = 0, has_layer = 0, has_sweep = 0;
	struct keys mk = {0}, ck = {0}, notes = {0};
	double level = NAN;
	for (size_t i = 0; records && i < records->n; i++) {
		const struct vpa_json *r = records->items[i];
		const char *a = vpa_json_get_str(r, "attack");
		if (!a || strcmp(a, attack))
			continue;
		n++;
		has_sub |= is_set(vpa_json_get(r, "sub"));
		has_layer |= is_set(vpa_json_get(r, "layer"));
		has_sweep |= is_set(vpa_json_get(r, "sweep"));
		const struct vpa_json *m = vpa_json_get(r, "metrics");
		if (m && m->type == VPA_JSON_OBJ)
			collect_keys(&mk, m, NULL);
		const struct vpa_json *ci = vpa_json_get(r, "ci");
		if (ci && ci->type == VPA_JSON_OBJ) {
			for (size_t k = 0; k < ci->n; k++)
				if (!ci_meta(ci->keys[k]) && ci->items[k]->type == VPA_JSON_ARR)
					keys_add(&ck, ci->keys[k]);
			double lv = vpa_json_get_num(ci, "level", NAN);
			if (isfinite(lv))
				level = lv;
			const char *method = vpa_json_get_str(ci, "method");
			double reps = vpa_json_get_num(ci, "reps", NAN);
			struct vpa_buf note;
			vpa_buf_init(&note);
			const char *iv = vpa_json_get_str(ci, "interval");
			if (isfinite(lv))
				vpa_buf_printf(&note, "%g%% ", 100 * lv);
			if (iv)
				vpa_buf_printf(&note, "%s ", iv);
			vpa_buf_puts(&note, "confidence intervals");
			if (method)
				vpa_buf_printf(&note, " by %s", method);
			if (isfinite(reps))
				vpa_buf_printf(&note, " (%.0f replicates)", reps);
			keys_add(&notes, note.data);
			vpa_buf_release(&note);
		}
		/* a record's own short labels (which epsilon is which, ...) */
		const struct vpa_json *rn = vpa_json_get(r, "notes");
		for (size_t k = 0; rn && rn->type == VPA_JSON_ARR && k < rn->n; k++)
			if (rn->items[k]->type == VPA_JSON_STR)
				keys_add(&notes, rn->items[k]->str);
	}
	/* Column plan: labels, then each metric followed by its CI, then CIs of
	 * metrics that have no column of their own. */
	int n_label = has_sub + has_layer + has_sweep;
	if (n_label == 0)
		n_label = 1;
	size_t nc = (size_t)n_label + mk.n + ck.n;
	vpa_table_new(t, n, nc);
	/* col_key[c]: metric key; col_ci[c]: 1 for a CI column. */
	const char **col_key = xcalloc(nc, sizeof(*col_key));
	int *col_ci = xcalloc(nc, sizeof(*col_ci));
	size_t c = 0;
	const struct vpa_json *sweep = vpa_json_get(results, "sweep");
	const char *sweep_param = sweep && sweep->type == VPA_JSON_OBJ ? vpa_json_get_str(sweep, "param") : NULL;
	if (has_sub)
		t->head[c++] = xstrdup("attacker / condition");
	if (has_layer) {
		t->numeric[c] = 1;
		t->head[c++] = xstrdup("layer");
	}
	if (has_sweep) {
		t->numeric[c] = 1;
		t->head[c++] = xstrdup(sweep_param ? sweep_param : "sweep");
	}
	if (!has_sub && !has_layer && !has_sweep)
		t->head[c++] = xstrdup("record");
	char *used = xcalloc(ck.n ? ck.n : 1, 1);
	for (size_t k = 0; k < mk.n; k++) {
		col_key[c] = mk.k[k];
		t->numeric[c] = 1;
		t->head[c++] = xstrdup(mk.k[k]);
		size_t j = keys_find(&ck, mk.k[k]);
		if (j != (size_t)-1) {
			used[j] = 1;
			col_key[c] = ck.k[j];
			col_ci[c] = 1;
			t->numeric[c] = 1;
			struct vpa_buf h;
			vpa_buf_init(&h);
			if (isfinite(level))
				vpa_buf_printf(&h, "%s %g%% CI", ck.k[j], 100 * level);
			else
				vpa_buf_printf(&h, "%s CI", ck.k[j]);
			t->head[c++] = h.data;
		}
	}
	for (size_t j = 0; j < ck.n; j++) {
		if (used[j])
			continue;
		col_key[c] = ck.k[j];
		col_ci[c] = 1;
		t->numeric[c] = 1;
		struct vpa_buf h;
		vpa_buf_init(&h);
		vpa_buf_printf(&h, "%s CI", ck.k[j]);
		t->head[c++] = h.data;
	}
	t->n_cols = c; /* nc was an upper bound */
	t->n_key = (size_t)n_label;
	free(used);

	size_t row = 0;
	for (size_t i = 0; records && i < records->n; i++) {
		const struct vpa_json *r = records->items[i];
		const char *a = vpa_json_get_str(r, "attack");
		if (!a || strcmp(a, attack))
			continue;
		char **cells = t->cells + row * t->n_cols;
		size_t cc = 0;
		static const char *labels[] = {"sub", "layer", "sweep"};
		int has[] = {has_sub, has_layer, has_sweep};
		for (int k = 0; k < 3; k++) {
			if (!has[k])
				continue;
			const struct vpa_json *v = vpa_json_get(r, labels[k]);
			cells[cc++] = is_set(v) ? fmt_cell(labels[k], v) : xstrdup("-");
		}
		if (!has_sub && !has_layer && !has_sweep)
			cells[cc++] = xstrdup("all");
		const struct vpa_json *m = vpa_json_get(r, "metrics"), *ci = vpa_json_get(r, "ci");
		for (; cc < t->n_cols; cc++) {
			const struct vpa_json *v = col_ci[cc] ? (ci ? vpa_json_get(ci, col_key[cc]) : NULL)
							      : (m ? get_path(m, col_key[cc]) : NULL);
			cells[cc] = v ? fmt_cell(col_key[cc], v) : xstrdup("-");
			if (v && v->type == VPA_JSON_STR)
				t->numeric[cc] = 0; /* text columns align left */
			size_t at = row * t->n_cols + cc;
			const char *why = v ? vpa_rec_unreliable(r, col_key[cc]) : NULL;
			if (why) {
				t->cell_class[at] = VPA_CELL_UNRELIABLE;
				if (!col_ci[cc]) {
					struct vpa_buf nb;
					vpa_buf_init(&nb);
					vpa_buf_printf(&nb, "unreliable: %s", why);
					t->cell_note[at] = nb.data;
					summary_add(&sum, col_key[cc], nb.data);
				}
			} else if (!col_ci[cc] && !strcmp(col_key[cc], "cllr") && v &&
				   v->type == VPA_JSON_NUM && v->num > 1) {
				t->cell_note[at] = xstrdup(cllr_note);
				summary_add(&sum, "cllr", cllr_note);
			}
		}
		row++;
	}
	t->cell_summary = summary_text(&sum);
	summary_release(&sum);
	if (notes.n) {
		struct vpa_buf b;
		vpa_buf_init(&b);
		for (size_t k = 0; k < notes.n; k++)
			vpa_buf_printf(&b, "%s%s", k ? "; " : "", notes.k[k]);
		vpa_buf_puts(&b, ".");
		if (b.data[0] >= 'a' && b.data[0] <= 'z')
			b.data[0] = (char)(b.data[0] - 'a' + 'A');
		t->note = b.data;
	}
	free(col_key);
	free(col_ci);
	keys_release(&mk);
	keys_release(&ck);
	keys_release(&notes);
}

