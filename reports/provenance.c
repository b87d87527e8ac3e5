/*
 * reports/provenance.c - data and provenance: every input file of the run
 * with its size and SHA-256 (results["inputs"], recorded where inputs are
 * read: base/inputs.c), the numbers of speakers / utterances / trials /
 * models per set (from each target's "info", by gender where a set has
 * "female"/"male" counts), seed, version, machine (CPU model, and the
 * arithmetic: BLAS kernel, libm, portable mode), wall time per stage and
 * the scenario as run (echoed).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/inputs.h"
#include "reports/doc.h"
#include "reports/report.h"

static int has_counts(const struct vpa_json *o)
{
	static const char *const k[] = {"speakers", "utterances", "n_target", "n_nontarget",
					"models", "users", "documents", "sentences"};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		const struct vpa_json *v = vpa_json_get(o, k[i]);
		if (v && v->type == VPA_JSON_NUM)
			return 1;
	}
	return 0;
}

struct rows {
	const char *target[256];
	char path[256][96];
	const struct vpa_json *obj[256];
	size_t n;
};

static void collect(struct rows *rs, const char *target, const char *path, const struct vpa_json *o)
{
	if (!o || rs->n == 256)
		return;
	if (o->type == VPA_JSON_OBJ) {
		if (has_counts(o)) {
			const char *nm = vpa_json_get_str(o, "name");
			rs->target[rs->n] = target;
			snprintf(rs->path[rs->n], sizeof(rs->path[0]), "%s", nm ? nm : path[0] ? path : "all");
			rs->obj[rs->n++] = o;
		}
		for (size_t i = 0; i < o->n; i++)
			if (o->items[i]->type == VPA_JSON_OBJ || o->items[i]->type == VPA_JSON_ARR) {
				char p[96];
				snprintf(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", o->keys[i]);
				collect(rs, target, p, o->items[i]);
			}
	} else if (o->type == VPA_JSON_ARR) {
		for (size_t i = 0; i < o->n; i++)
			collect(rs, target, path, o->items[i]);
	}
}

/* The scenario as indented "key: value" lines (short maps and lists on one line). */
static void put_scalar(struct vpa_buf *b, const struct vpa_json *v)
{
	if (v->type == VPA_JSON_STR)
		vpa_buf_puts(b, v->str);
	else
		vpa_json_write(b, v, 0);
}

static int flat(const struct vpa_json *v)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->items[i]->type == VPA_JSON_OBJ || v->items[i]->type == VPA_JSON_ARR)
			return 0;
	return 1;
}

static void put_inline(struct vpa_buf *b, const struct vpa_json *v)
{
	if (v->type == VPA_JSON_OBJ || v->type == VPA_JSON_ARR) {
		vpa_buf_puts(b, v->type == VPA_JSON_OBJ ? "{" : "[");
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				vpa_buf_puts(b, ", ");
			if (v->type == VPA_JSON_OBJ)
				vpa_buf_printf(b, "%s: ", v->keys[i]);
			put_inline(b, v->items[i]);
		}
		vpa_buf_puts(b, v->type == VPA_JSON_OBJ ? "}" : "]");
	} else {
		put_scalar(b, v);
	}
}

static void dump(struct vpa_buf *b, const struct vpa_json *v, int ind)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct vpa_json *x = v->items[i];
		vpa_buf_printf(b, "%*s%s", ind, "", v->type == VPA_JSON_ARR ? "- " : "");
		if (v->type == VPA_JSON_OBJ)
			vpa_buf_printf(b, "%s: ", v->keys[i]);
		size_t at = b->len;
		if ((x->type == VPA_JSON_OBJ || x->type == VPA_JSON_ARR) && flat(x)) {
			put_inline(b, x);
			if (b->len - at + (size_t)ind < 100) {
				vpa_buf_puts(b, "\n");
				continue;
			}
			b->len = at;
		}
		if (x->type == VPA_JSON_OBJ || x->type == VPA_JSON_ARR) {
			vpa_buf_puts(b, "\n");
			dump(b, x, ind + 2);
		} else {
			put_scalar(b, x);
			vpa_buf_puts(b, "\n");
		}
	}
}

static void num_cell(struct vpa_table *t, size_t r, size_t c, const struct vpa_json *o,
		     const char *k1, const char *k2)
{
	double a = vpa_json_get_num(o, k1, NAN), b = k2 ? vpa_json_get_num(o, k2, NAN) : NAN;
	if (isfinite(a) && isfinite(b))
		vpa_table_set(t, r, c, "%.0f / %.0f", a, b);
	else if (isfinite(a))
		vpa_table_set(t, r, c, "%.0f", a);
	else
		vpa_table_set(t, r, c, "-");
}

void vpa_doc_data(const struct vpa_json *r, struct vpa_doc *d)
{
	vpa_doc_head(d, 1, "data", "Data and provenance", 1);
	const struct vpa_json *seed = vpa_json_get(r, "seed"), *m = vpa_json_get(r, "machine");
	struct vpa_blk *l = vpa_doc_list(d);
	const struct vpa_json *sc = vpa_json_get(r, "scenario");
	const char *file = vpa_json_get_str(sc, "file");
	vpa_doc_item(l, "Scenario: %s%s%s%s", d->title, file ? " (file " : "", file ? file : "",
		     file ? ")" : "");
	vpa_doc_item(l, "Software: %s", d->version);
	if (seed && seed->type == VPA_JSON_NUM)
		vpa_doc_item(l, "Seed: %.0f (the same seed and inputs give the same numbers with the "
			     "same arithmetic, below, for any thread count)", seed->num);
	if (d->started)
		vpa_doc_item(l, "Started: %s", d->started);
	if (m && m->type == VPA_JSON_OBJ) {
		const char *os = vpa_json_get_str(m, "os"), *arch = vpa_json_get_str(m, "arch");
		double cpus = vpa_json_get_num(m, "cpus", NAN), thr = vpa_json_get_num(m, "threads", NAN);
		struct vpa_buf b;
		vpa_buf_init(&b);
		const char *cpu = vpa_json_get_str(m, "cpu");
		vpa_buf_printf(&b, "Machine: %s %s", os ? os : "?", arch ? arch : "");
		if (cpu)
			vpa_buf_printf(&b, ", CPU %s", cpu);
		if (isfinite(cpus))
			vpa_buf_printf(&b, ", %.0f CPU%s", cpus, cpus == 1 ? "" : "s");
		if (isfinite(thr))
			vpa_buf_printf(&b, ", %.0f thread%s", thr, thr == 1 ? "" : "s");
		vpa_doc_item(l, "%s", b.data);
		b.len = 0;
		vpa_machine_describe(&b, m); /* reports/machine.c */
		vpa_doc_item(l, "Arithmetic: %s", b.data);
		vpa_buf_release(&b);
	}
	const struct vpa_json *wt = vpa_json_get(r, "wall_time");
	if (wt && wt->type == VPA_JSON_OBJ) {
		const struct vpa_json *st = vpa_json_get(wt, "stages");
		struct vpa_buf b;
		vpa_buf_init(&b);
		double tot = vpa_json_get_num(wt, "total", NAN);
		vpa_buf_puts(&b, "Wall time: ");
		if (isfinite(tot))
			vpa_buf_printf(&b, "%.2f s in all", tot);
		for (size_t i = 0; st && st->type == VPA_JSON_OBJ && i < st->n; i++) {
			const struct vpa_json *v = st->items[i];
			if (v->type == VPA_JSON_NUM && isfinite(v->num))
				vpa_buf_printf(&b, "; %s %.2f s", st->keys[i], v->num);
			else
				vpa_buf_printf(&b, "; %s not measured", st->keys[i]);
		}
		vpa_doc_item(l, "%s", b.data);
		vpa_buf_release(&b);
	}

	/* targets */
	const struct vpa_json *ts = vpa_json_get(r, "targets");
	if (ts && ts->type == VPA_JSON_ARR && ts->n) {
		struct vpa_table t;
		vpa_table_new(&t, ts->n, 4);
		static const char *const h[] = {"target", "kind", "source", "simulated"};
		for (size_t c = 0; c < 4; c++)
			vpa_table_set(&t, (size_t)-1, c, "%s", h[c]);
		for (size_t i = 0; i < ts->n; i++) {
			const struct vpa_json *x = ts->items[i], *sim = vpa_json_get(x, "simulated");
			const char *id = vpa_json_get_str(x, "id"), *k = vpa_json_get_str(x, "kind");
			const char *src = vpa_json_get_str(x, "source");
			vpa_table_set(&t, i, 0, "%s", id ? id : "?");
			vpa_table_set(&t, i, 1, "%s", k ? k : "-");
			vpa_table_set(&t, i, 2, "%s", src ? src : "-");
			struct vpa_buf syn;
			vpa_buf_init(&syn);
			vpa_synthetic_sets(x, &syn);
			if (sim && sim->type == VPA_JSON_BOOL && sim->boolean)
				vpa_table_set(&t, i, 3, "SIMULATED%s",
					      vpa_target_synthetic(x) ? " (SYNTHETIC speech)" : "");
			else if (syn.len)
				vpa_table_set(&t, i, 3, "SYNTHETIC score files: %s", syn.data);
			else
				vpa_table_set(&t, i, 3, "no");
			vpa_buf_release(&syn);
		}
		vpa_doc_table(d, &t, "Targets");
	}

	/* input files */
	const struct vpa_json *in = vpa_json_get(r, "inputs");
	if (in && in->type == VPA_JSON_ARR) {
		/* more than 10 files of one folder (a corpus) make one row: the folder,
		 * its file count and bytes, and the SHA-256 of its files' "HASH  PATH\n"
		 * lines in path order (what `sha256sum FILES | sha256sum` gives) */
		struct vpa_table t;
		vpa_table_new(&t, in->n, 3);
		vpa_table_set(&t, (size_t)-1, 0, "input file");
		vpa_table_set(&t, (size_t)-1, 1, "bytes");
		vpa_table_set(&t, (size_t)-1, 2, "SHA-256");
		t.numeric[1] = 1;
		size_t row = 0;
		for (size_t i = 0; i < in->n;) {
			const char *p = vpa_json_get_str(in->items[i], "path");
			const char *h = vpa_json_get_str(in->items[i], "sha256");
			p = p ? p : "?";
			const char *slash = strrchr(p, '/');
			size_t dl = slash ? (size_t)(slash - p + 1) : 0, j = i + 1;
			while (dl && j < in->n) {
				const char *q = vpa_json_get_str(in->items[j], "path");
				if (!q || strncmp(q, p, dl) || strchr(q + dl, '/'))
					break;
				j++;
			}
			if (j - i > 10) {
				struct vpa_buf lines;
				vpa_buf_init(&lines);
				double bytes = 0;
				for (size_t k = i; k < j; k++) {
					const char *kh = vpa_json_get_str(in->items[k], "sha256");
					vpa_buf_printf(&lines, "%s  %s\n", kh ? kh : "",
						       vpa_json_get_str(in->items[k], "path"));
					bytes += vpa_json_get_num(in->items[k], "bytes", 0);
				}
				char hex[65];
				vpa_sha256_hex(lines.data, lines.len, hex);
				vpa_table_set(&t, row, 0, "%.*s (%zu files; hash of their hashes)", (int)dl, p,
					      j - i);
				vpa_table_set(&t, row, 1, "%.0f", bytes);
				vpa_table_set(&t, row, 2, "%s", hex);
				vpa_buf_release(&lines);
				row++;
				i = j;
				continue;
			}
			vpa_table_set(&t, row, 0, "%s", p);
			num_cell(&t, row, 1, in->items[i], "bytes", NULL);
			vpa_table_set(&t, row, 2, "%s", h ? h : "-");
			row++;
			i++;
		}
		for (size_t k = row * t.n_cols; k < t.n_rows * t.n_cols; k++) {
			free(t.cells[k]);
			t.cells[k] = NULL;
		}
		t.n_rows = row;
		if (row)
			vpa_doc_table(d, &t, "Every file the run read, with its size and SHA-256");
		else
			vpa_table_release(&t);
		if (!row)
			vpa_doc_para(d, VPA_P_NOTE, "The run read no input file (every target was "
				     "simulated or trained from built-in settings).");
	} else {
		vpa_doc_para(d, VPA_P_NOTE, "This results file does not list its input files (it was "
			     "written by a vpaudit that did not record them).");
	}

	/* sizes of the sets */
	struct rows *rsp = xcalloc(1, sizeof(*rsp));
#define rs (*rsp)
	const struct vpa_json *tg = vpa_json_get(r, "targets");
	for (size_t i = 0; tg && tg->type == VPA_JSON_ARR && i < tg->n; i++) {
		const char *id = vpa_json_get_str(tg->items[i], "id");
		collect(&rs, id ? id : "?", "", vpa_json_get(tg->items[i], "info"));
	}
	if (rs.n) {
		int gender = 0;
		for (size_t i = 0; i < rs.n; i++)
			gender |= vpa_json_get(rs.obj[i], "female") || vpa_json_get(rs.obj[i], "male");
		size_t nc = gender ? 7 : 6;
		struct vpa_table t;
		vpa_table_new(&t, rs.n, nc);
		t.n_key = 2;
		static const char *const h[] = {"target", "set", "speakers", "utterances",
						"trials (target / non-target)", "models / users",
						"female / male"};
		for (size_t c = 0; c < nc; c++) {
			vpa_table_set(&t, (size_t)-1, c, "%s", h[c]);
			t.numeric[c] = c >= 2;
		}
		for (size_t i = 0; i < rs.n; i++) {
			vpa_table_set(&t, i, 0, "%s", rs.target[i]);
			vpa_table_set(&t, i, 1, "%s", rs.path[i]);
			num_cell(&t, i, 2, rs.obj[i], "speakers", NULL);
			num_cell(&t, i, 3, rs.obj[i], "utterances", NULL);
			num_cell(&t, i, 4, rs.obj[i], "n_target", "n_nontarget");
			if (vpa_json_get(rs.obj[i], "models"))
				num_cell(&t, i, 5, rs.obj[i], "models", NULL);
			else
				num_cell(&t, i, 5, rs.obj[i], "users", NULL);
			if (gender)
				num_cell(&t, i, 6, rs.obj[i], "female", "male");
		}
		vpa_doc_table(d, &t, gender ? "Size of every set" :
			      "Size of every set (the targets do not record gender)");
	}
#undef rs
	free(rsp);

	const struct vpa_json *echo = vpa_json_get(sc, "echo");
	if (echo) {
		struct vpa_buf b;
		vpa_buf_init(&b);
		if (echo->type == VPA_JSON_OBJ || echo->type == VPA_JSON_ARR)
			dump(&b, echo, 0);
		else
			put_scalar(&b, echo);
		vpa_doc_para(d, VPA_P_PLAIN, "The scenario as run (every key, defaults included):");
		struct vpa_blk *p = vpa_doc_add(d, VPA_B_PRE);
		p->text = b.data ? b.data : xstrdup("");
	}
}
