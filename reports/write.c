/*
 * reports/write.c - vpa_report_write (render everything, then write every
 * file atomically) and the results check: the top of reports/ (the layers
 * are in reports/README.md); the escaping and number formatting it shared
 * with the writers are in reports/text.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/table.h"

#define SCHEMA "vpaudit.results/1"

/* ---- the results check ---- */

static int bad(struct vpa_err *err, const char *name, const struct vpa_json *at,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(struct vpa_err *err, const char *name, const struct vpa_json *at,
	       const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct vpa_loc loc = {name, at ? at->line : 0, at ? at->col : 0};
	return vpa_fail(err, VPA_EINPUT, &loc, "%s", msg);
}

/* obj[key] must exist (when required) and have type t; *out the value or NULL. */
static int want(const struct vpa_json *obj, const char *key, enum vpa_json_type t, int required,
		const char *what, const char *ctx, const char *name,
		const struct vpa_json **out, struct vpa_err *err)
{
	const struct vpa_json *v = vpa_json_get(obj, key);
	*out = NULL;
	if (!v || (!required && v->type == VPA_JSON_NULL)) {
		if (!required)
			return 0;
		if (ctx)
			return bad(err, name, obj, "%s: missing '%s'", ctx, key);
		return bad(err, name, NULL, "missing '%s'", key);
	}
	if (v->type != t) {
		if (ctx)
			return bad(err, name, v, "%s: '%s' must be %s", ctx, key, what);
		return bad(err, name, v, "'%s' must be %s", key, what);
	}
	*out = v;
	return 0;
}

static int check_figures(const struct vpa_json *figs, const char *name, struct vpa_err *err)
{
	for (size_t i = 0; figs && i < figs->n; i++) {
		int rc = vpa_plot_check(figs->items[i], name, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Order of records by their key (attack, sub, layer, sweep), for the duplicate check. */
static int key_part_cmp(const struct vpa_json *a, const struct vpa_json *b)
{
	int ta = a ? (int)a->type : (int)VPA_JSON_NULL, tb = b ? (int)b->type : (int)VPA_JSON_NULL;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (ta == VPA_JSON_NUM)
		return a->num < b->num ? -1 : a->num > b->num;
	if (ta == VPA_JSON_STR)
		return strcmp(a->str, b->str);
	return 0;
}

static int key_cmp(const struct vpa_json *a, const struct vpa_json *b)
{
	static const char *const keys[] = {"attack", "sub", "layer", "sweep"};
	for (size_t k = 0; k < 4; k++) {
		int c = key_part_cmp(vpa_json_get(a, keys[k]), vpa_json_get(b, keys[k]));
		if (c)
			return c;
	}
	return 0;
}

static int record_key_cmp(const void *pa, const void *pb)
{
	const struct vpa_json *a = *(const struct vpa_json *const *)pa;
	const struct vpa_json *b = *(const struct vpa_json *const *)pb;
	int c = key_cmp(a, b);
	if (c)
		return c;
	/* equal keys: file order, so the error names the later record */
	return a->line != b->line ? (a->line < b->line ? -1 : 1) : (a->col > b->col) - (a->col < b->col);
}

/* Every metric value is a number, null or a boolean; strings only for categorical tags (a key
 * named "category", e.g. zebra.category) and inside a top-level `dp_audit` object (issue 28:
 * the audit's method, accountant, adjacency and note are words, not metrics).  *bad_at the
 * offending value, path its dotted name. */
static const struct vpa_json *bad_metric(const struct vpa_json *m, char *path, size_t cap,
					 size_t len)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct vpa_json *v = m->items[i];
		if (!len && v->type == VPA_JSON_OBJ && !strcmp(m->keys[i], "dp_audit"))
			continue;
		int w = snprintf(path + len, cap - len, "%s%s", len ? "." : "", m->keys[i]);
		size_t l2 = w < 0 ? len : len + (size_t)w;
		if (l2 >= cap)
			l2 = cap - 1;
		if (v->type == VPA_JSON_OBJ) {
			const struct vpa_json *b = bad_metric(v, path, cap, l2);
			if (b)
				return b;
		} else if (v->type == VPA_JSON_ARR ||
			   (v->type == VPA_JSON_STR && strcmp(m->keys[i], "category"))) {
			return v;
		}
		path[len] = '\0';
	}
	return NULL;
}

/* The top level is an object of this schema (the first check of both validators). */
static int check_schema(const struct vpa_json *r, const char *name, struct vpa_err *err)
{
	const struct vpa_json *v;
	int rc;
	if (!r || r->type != VPA_JSON_OBJ)
		return bad(err, name, r, "expected a JSON object at the top level");
	if ((rc = want(r, "schema", VPA_JSON_STR, 1, "a string", NULL, name, &v, err)))
		return rc;
	if (strcmp(v->str, SCHEMA))
		return bad(err, name, v, "unsupported schema '%s' (expected '%s')", v->str, SCHEMA);
	return 0;
}

int vpa_results_check(const struct vpa_json *r, const char *name, struct vpa_err *err)
{
	const struct vpa_json *v, *arr;
	char ctx[96];
	int rc;
	if ((rc = check_schema(r, name, err)))
		return rc;
	if ((rc = want(r, "records", VPA_JSON_ARR, 1, "an array", NULL, name, &arr, err)))
		return rc;
	for (size_t i = 0; i < arr->n; i++) {
		const struct vpa_json *rec = arr->items[i], *m;
		snprintf(ctx, sizeof(ctx), "record %zu", i + 1);
		if (rec->type != VPA_JSON_OBJ)
			return bad(err, name, rec, "%s must be an object", ctx);
		if ((rc = want(rec, "attack", VPA_JSON_STR, 1, "a string", ctx, name, &v, err)) ||
		    (rc = want(rec, "sub", VPA_JSON_STR, 0, "a string or null", ctx, name, &v, err)) ||
		    (rc = want(rec, "layer", VPA_JSON_NUM, 0, "a number or null", ctx, name, &v, err)) ||
		    (rc = want(rec, "metrics", VPA_JSON_OBJ, 1, "an object", ctx, name, &m, err)) ||
		    (rc = want(rec, "ci", VPA_JSON_OBJ, 0, "an object", ctx, name, &v, err)))
			return rc;
		v = vpa_json_get(rec, "sweep");
		if (v && v->type != VPA_JSON_NULL && v->type != VPA_JSON_NUM && v->type != VPA_JSON_STR)
			return bad(err, name, v, "%s: 'sweep' must be a number, a string or null", ctx);
		char path[256] = "";
		const struct vpa_json *b = bad_metric(m, path, sizeof(path), 0);
		if (b)
			return bad(err, name, b, "%s: metric '%s' must be a number or null, got %s", ctx,
				   path, b->type == VPA_JSON_STR ? "a string" : "an array");
	}
	/* one record per key: gates take the worst of the records they select and the baseline
	 * comparison pairs records by key, so a second record with the same key is ambiguous */
	if (arr->n > 1) {
		const struct vpa_json **sorted = xmalloc(arr->n * sizeof(*sorted));
		for (size_t i = 0; i < arr->n; i++)
			sorted[i] = arr->items[i];
		qsort(sorted, arr->n, sizeof(*sorted), record_key_cmp);
		const struct vpa_json *dup = NULL, *first = NULL;
		for (size_t i = 1; i < arr->n && !dup; i++)
			if (!key_cmp(sorted[i - 1], sorted[i])) {
				first = sorted[i - 1];
				dup = sorted[i];
			}
		free(sorted);
		if (dup) {
			/* equal keys sort in file order: first comes before dup */
			size_t a = 0, b = 0;
			for (size_t i = 0; i < arr->n; i++) {
				if (arr->items[i] == first)
					a = i + 1;
				if (arr->items[i] == dup)
					b = i + 1;
			}
			struct vpa_buf d;
			vpa_buf_init(&d);
			vpa_record_describe(&d, dup, 0);
			const char *sub = vpa_json_get_str(dup, "sub");
			rc = bad(err, name, dup,
				 "record %zu has the same (attack, sub, layer, sweep) as record %zu: "
				 "%s%s%s%s%s%s", b, a, vpa_json_get_str(dup, "attack"), sub ? "." : "",
				 sub ? sub : "", d.len ? " [" : "", vpa_buf_str(&d), d.len ? "]" : "");
			vpa_buf_release(&d);
			return rc;
		}
	}
	return 0;
}

/*
 * What reaches the renderers is bounded: no string (value or key) of a
 * results file is longer than this.  Pango's memory and time grow with a
 * paragraph's length (a 1 MiB word: 5-7 s and 170 MB in Pango); vpaudit writes
 * strings of a few hundred bytes.
 */
#define RESULTS_STR_MAX (1 << 20)

/* The length of the longest string or key in v; *at its value (or object). */
static size_t longest_string(const struct vpa_json *v, const struct vpa_json **at)
{
	size_t best = 0;
	*at = v;
	if (v->type == VPA_JSON_STR)
		return strlen(v->str);
	if (v->type != VPA_JSON_ARR && v->type != VPA_JSON_OBJ)
		return 0;
	for (size_t i = 0; i < v->n; i++) {
		const struct vpa_json *a;
		size_t l = longest_string(v->items[i], &a);
		if (v->type == VPA_JSON_OBJ && strlen(v->keys[i]) > l)
			l = strlen(v->keys[i]), a = v;
		if (l > best)
			best = l, *at = a;
	}
	return best;
}

int vpa_report_check(const struct vpa_json *r, const char *name, struct vpa_err *err)
{
	const struct vpa_json *v, *arr;
	char ctx[96];
	int rc;
	if ((rc = check_schema(r, name, err)))
		return rc;
	const struct vpa_json *sc;
	if ((rc = want(r, "scenario", VPA_JSON_OBJ, 1, "an object", NULL, name, &sc, err)) ||
	    (rc = want(sc, "name", VPA_JSON_STR, 1, "a string", "scenario", name, &v, err)) ||
	    (rc = want(sc, "description", VPA_JSON_STR, 0, "a string", "scenario", name, &v, err)))
		return rc;
	if (v && vpa_utf8_width(v->str) > VPA_DESCRIPTION_MAX)
		return bad(err, name, v, "scenario: 'description' must be at most %d characters, got %zu",
			   VPA_DESCRIPTION_MAX, vpa_utf8_width(v->str));
	static const char *const opt_str[] = {"vpaudit_version", "started", "status"};
	for (size_t k = 0; k < sizeof(opt_str) / sizeof(*opt_str); k++)
		if ((rc = want(r, opt_str[k], VPA_JSON_STR, 0, "a string", NULL, name, &v, err)))
			return rc;
	if ((rc = want(r, "seed", VPA_JSON_NUM, 0, "a number", NULL, name, &v, err)) ||
	    (rc = want(r, "wall_time", VPA_JSON_OBJ, 0, "an object", NULL, name, &v, err)))
		return rc;

	if ((rc = want(r, "targets", VPA_JSON_ARR, 0, "an array", NULL, name, &arr, err)))
		return rc;
	for (size_t i = 0; arr && i < arr->n; i++) {
		const struct vpa_json *t = arr->items[i];
		snprintf(ctx, sizeof(ctx), "target %zu", i + 1);
		if (t->type != VPA_JSON_OBJ)
			return bad(err, name, t, "%s must be an object", ctx);
		if ((rc = want(t, "id", VPA_JSON_STR, 1, "a string", ctx, name, &v, err)) ||
		    (rc = want(t, "simulated", VPA_JSON_BOOL, 0, "true or false", ctx, name, &v, err)))
			return rc;
	}

	if ((rc = want(r, "attacks", VPA_JSON_ARR, 1, "an array", NULL, name, &arr, err)))
		return rc;
	for (size_t i = 0; i < arr->n; i++) {
		const struct vpa_json *a = arr->items[i], *figs;
		snprintf(ctx, sizeof(ctx), "attack %zu", i + 1);
		if (a->type != VPA_JSON_OBJ)
			return bad(err, name, a, "%s must be an object", ctx);
		if ((rc = want(a, "id", VPA_JSON_STR, 1, "a string", ctx, name, &v, err)) ||
		    (rc = want(a, "figures", VPA_JSON_ARR, 0, "an array", ctx, name, &figs, err)) ||
		    (rc = check_figures(figs, name, err)))
			return rc;
	}

	const struct vpa_json *attacks = arr;
	/* what `vpaudit gate` checks too: records, their keys and metric values */
	if ((rc = vpa_results_check(r, name, err)) ||
	    (rc = want(r, "records", VPA_JSON_ARR, 1, "an array", NULL, name, &arr, err)))
		return rc;
	for (size_t i = 0; i < arr->n; i++) {
		/* vpa_results_check made every record an object with a string "attack" */
		const struct vpa_json *id = vpa_json_get(arr->items[i], "attack");
		snprintf(ctx, sizeof(ctx), "record %zu", i + 1);
		/* A record of an attack not in "attacks" would be missing from the report. */
		size_t k = 0;
		while (k < attacks->n && strcmp(vpa_json_get_str(attacks->items[k], "id"), id->str))
			k++;
		if (k == attacks->n)
			return bad(err, name, id, "%s: attack '%s' is not in 'attacks'", ctx, id->str);
	}

	if ((rc = want(r, "figures", VPA_JSON_ARR, 0, "an array", NULL, name, &arr, err)) ||
	    (rc = check_figures(arr, name, err)))
		return rc;

	if ((rc = want(r, "gates", VPA_JSON_ARR, 0, "an array", NULL, name, &arr, err)))
		return rc;
	for (size_t i = 0; arr && i < arr->n; i++) {
		const struct vpa_json *g = arr->items[i];
		snprintf(ctx, sizeof(ctx), "gate %zu", i + 1);
		if (g->type != VPA_JSON_OBJ)
			return bad(err, name, g, "%s must be an object", ctx);
		if ((rc = want(g, "attack", VPA_JSON_STR, 1, "a string", ctx, name, &v, err)) ||
		    (rc = want(g, "metric", VPA_JSON_STR, 1, "a string", ctx, name, &v, err)) ||
		    (rc = want(g, "pass", VPA_JSON_BOOL, 1, "true or false", ctx, name, &v, err)) ||
		    (rc = want(g, "value", VPA_JSON_NUM, 0, "a number or null", ctx, name, &v, err)) ||
		    (rc = want(g, "min", VPA_JSON_NUM, 0, "a number or null", ctx, name, &v, err)) ||
		    (rc = want(g, "max", VPA_JSON_NUM, 0, "a number or null", ctx, name, &v, err)) ||
		    (rc = want(g, "message", VPA_JSON_STR, 0, "a string", ctx, name, &v, err)))
			return rc;
	}

	if ((rc = want(r, "warnings", VPA_JSON_ARR, 0, "an array", NULL, name, &arr, err)))
		return rc;
	for (size_t i = 0; arr && i < arr->n; i++)
		if (arr->items[i]->type != VPA_JSON_STR)
			return bad(err, name, arr->items[i], "warning %zu must be a string", i + 1);
	const struct vpa_json *at;
	size_t len = longest_string(r, &at);
	if (len > RESULTS_STR_MAX)
		return bad(err, name, at, "a string of %zu bytes (at most %d in a results file)", len,
			   RESULTS_STR_MAX);
	return 0;
}

/* ---- writing ---- */

/* report.html (with plots) and report.pdf from one gnuplot run (reports/render.c). */
static int render_html_pdf(const struct vpa_json *r, struct vpa_buf *html, struct vpa_buf *pdf,
			   struct vpa_err *err)
{
	return vpa_report_html_pdf(r, html, pdf, err);
}

int vpa_report_write(const struct vpa_json *results, const char *outdir, unsigned formats,
		     int no_plots, struct vpa_err *err)
{
	enum { NF = 6 };
	static const char *const names[NF] = {"results.json",	     "report.html",
					      "report.pdf",	     "junit.xml",
					      "result_for_rank.txt", "vpc2022_results.txt"};
	struct vpa_buf data[NF], path;
	struct vpa_atomic a[NF];
	int want_f[NF] = {!!(formats & VPA_REPORT_JSON), !!(formats & VPA_REPORT_HTML),
			  !!(formats & VPA_REPORT_PDF),	 !!(formats & VPA_REPORT_JUNIT),
			  !!(formats & VPA_REPORT_VPC),	 !!(formats & VPA_REPORT_VPC)};
	int vpc_stale = 0; /* VPC asked for, nothing to write: remove an earlier run's */
	memset(a, 0, sizeof(a));
	vpa_buf_init(&path);
	for (int k = 0; k < NF; k++)
		vpa_buf_init(&data[k]);

	int rc = vpa_report_check(results, "results", err);
	if (rc)
		goto out;
	/* 1. Render everything in memory. */
	if (want_f[0]) {
		vpa_json_write(&data[0], results, 2);
		vpa_buf_puts(&data[0], "\n");
	}
	if (want_f[2] && no_plots) {
		vpa_warn("report.pdf is not written with --no-plots (its figures are drawn by gnuplot)");
		want_f[2] = 0;
	}
	if (want_f[1] && want_f[2]) {
		/* The two gnuplot runs side by side. */
		if ((rc = render_html_pdf(results, &data[1], &data[2], err)))
			goto out;
	} else {
		if (want_f[1] && (rc = vpa_report_html(results, no_plots, &data[1], err)))
			goto out;
		if (want_f[2] && (rc = vpa_report_pdf(results, &data[2], err)))
			goto out;
	}
	if (want_f[3])
		vpa_report_junit(results, &data[3]);
	if (want_f[4] && !vpa_report_vpc(results, &data[4], &data[5])) {
		want_f[4] = want_f[5] = 0;
		vpc_stale = 1;
	}

	/* 2. Write every temporary; 3. rename them all. */
	if ((rc = vpa_mkdirs(outdir, err)))
		goto out;
	/* those of a killed run (`run` has removed them already, `report` not) */
	size_t n_stale = vpa_outdir_remove_stale(outdir);
	if (n_stale)
		vpa_warn("%s: removed %zu temporar%s left by a killed run", outdir, n_stale,
			 n_stale == 1 ? "y" : "ies");
	for (int k = 0; k < NF; k++) {
		if (!want_f[k])
			continue;
		path.len = 0;
		vpa_buf_printf(&path, "%s/%s", outdir, names[k]);
		FILE *f = vpa_atomic_open(path.data, &a[k], err);
		if (!f) {
			rc = VPA_EIO;
			goto out;
		}
		if ((data[k].len && fwrite(data[k].data, 1, data[k].len, f) != data[k].len) ||
		    fflush(f) != 0) {
			struct vpa_loc loc = {path.data, 0, 0};
			rc = vpa_fail(err, VPA_EIO, &loc, "cannot write: %s", strerror(errno));
			goto out;
		}
	}
	for (int k = 0; k < NF; k++)
		if (want_f[k] && !rc)
			rc = vpa_atomic_commit(&a[k], err);
	if (!rc && vpc_stale)
		vpa_outdir_remove_reports(outdir, ~(unsigned)VPA_REPORT_VPC);
out:
	for (int k = 0; k < NF; k++) {
		if (a[k].path)
			vpa_atomic_abort(&a[k]);
		vpa_buf_release(&data[k]);
	}
	vpa_buf_release(&path);
	return rc;
}
