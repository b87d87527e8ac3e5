/*
 * reports/baseline_match.c - is the baseline of the same audit as the
 * results?  A baseline of another scenario, seed, set of targets or input
 * files can still share record keys ("eval.ignorant") and compare as STABLE
 * while it measured something else (issue 25 item 3).  vpa_baseline_provenance
 * lists each difference as one sentence; vpa_gates_baseline stores them,
 * `gate` and `run` print them as warnings, and --strict makes them an error.
 */
#include "reports/report.h"

#include <stdlib.h>
#include <string.h>

/* The string ids of arr[i][key] (arr an array of objects), sorted; *n their count. */
static const char **ids_of(const struct vpa_json *arr, const char *key, size_t *n)
{
	*n = 0;
	if (!arr || arr->type != VPA_JSON_ARR)
		return NULL;
	const char **v = xmalloc((arr->n ? arr->n : 1) * sizeof(*v));
	for (size_t i = 0; i < arr->n; i++) {
		const char *s = vpa_json_get_str(arr->items[i], key);
		if (s)
			v[(*n)++] = s;
	}
	for (size_t i = 1; i < *n; i++) /* insertion sort: a handful of targets */
		for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			const char *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v;
}

static void list(struct vpa_buf *b, const char **v, size_t n)
{
	vpa_buf_puts(b, "[");
	for (size_t i = 0; i < n; i++)
		vpa_buf_printf(b, "%s%s", i ? ", " : "", v[i]);
	vpa_buf_puts(b, "]");
}

static void add(struct vpa_json *out, struct vpa_buf *b)
{
	vpa_json_push(out, vpa_json_str(vpa_buf_str(b)));
	b->len = 0;
}

/* The first inputs[] entry of `in` with this path (when path) and this sha256 (when sha). */
static const struct vpa_json *find_input(const struct vpa_json *in, const char *path,
					 const char *sha)
{
	for (size_t i = 0; in && in->type == VPA_JSON_ARR && i < in->n; i++) {
		const char *p = vpa_json_get_str(in->items[i], "path");
		const char *h = vpa_json_get_str(in->items[i], "sha256");
		if ((!path || (p && !strcmp(p, path))) && (!sha || (h && !strcmp(h, sha))))
			return in->items[i];
	}
	return NULL;
}

/* The files an input list holds that are not inputs of the audit: the scenario file (compared
 * by the scenario name instead: an edited gate or tolerance is not another audit) and the
 * results files `run --baseline` read (in the CI recipe, the previous run's results.json). */
struct skip {
	const char *names[5];
};

static int skipped(const struct skip *sk, const struct vpa_json *x)
{
	const char *p = vpa_json_get_str(x, "path");
	for (int i = 0; p && i < 5; i++)
		if (sk->names[i] && !strcmp(sk->names[i], p))
			return 1;
	return 0;
}

/* One side's inputs that the other lacks or has with other content; appended to b. */
static size_t input_diffs(const struct vpa_json *r, const struct vpa_json *other_r,
			  const struct skip *sk, const char *side, struct vpa_buf *b, size_t shown)
{
	const struct vpa_json *in = vpa_json_get(r, "inputs"), *oin = vpa_json_get(other_r, "inputs");
	size_t n = 0;
	for (size_t i = 0; in && in->type == VPA_JSON_ARR && i < in->n; i++) {
		const struct vpa_json *x = in->items[i];
		const char *path = vpa_json_get_str(x, "path"), *sha = vpa_json_get_str(x, "sha256");
		if (!path || !sha || skipped(sk, x))
			continue;
		if (find_input(oin, path, sha) || find_input(oin, NULL, sha))
			continue; /* the same file, maybe at another path (another checkout folder) */
		const struct vpa_json *o = find_input(oin, path, NULL);
		const char *osha = o ? vpa_json_get_str(o, "sha256") : NULL;
		if (o && !strcmp(side, "baseline"))
			continue; /* a changed file is named once, from the results' side */
		if (shown + n < 3) {
			vpa_buf_printf(b, "%s%s", shown + n ? ", " : "", path);
			if (o)
				vpa_buf_printf(b, " (sha256 %.12s in the baseline, %.12s in the results)",
					       osha ? osha : "?", sha);
			else
				vpa_buf_printf(b, " (only in the %s)", side);
		}
		n++;
	}
	return n;
}

void vpa_baseline_provenance(const struct vpa_json *results, const struct vpa_json *baseline,
			     const char *baseline_name, struct vpa_json *out)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	const char *rn = vpa_json_get_str(vpa_json_get(results, "scenario"), "name");
	const char *bn = vpa_json_get_str(vpa_json_get(baseline, "scenario"), "name");
	if (rn && bn && strcmp(rn, bn)) {
		vpa_buf_printf(&b, "the baseline is of scenario '%s', the results of '%s'", bn, rn);
		add(out, &b);
	}
	size_t nr, nb;
	const char **tr = ids_of(vpa_json_get(results, "targets"), "id", &nr);
	const char **tb = ids_of(vpa_json_get(baseline, "targets"), "id", &nb);
	int same = tr && tb && nr == nb;
	for (size_t i = 0; same && i < nr; i++)
		same = !strcmp(tr[i], tb[i]);
	if (tr && tb && !same) {
		vpa_buf_puts(&b, "the baseline has targets ");
		list(&b, tb, nb);
		vpa_buf_puts(&b, ", the results ");
		list(&b, tr, nr);
		add(out, &b);
	}
	free(tr);
	free(tb);
	const struct vpa_json *rs = vpa_json_get(results, "seed"), *bs = vpa_json_get(baseline, "seed");
	if (rs && bs && rs->type == VPA_JSON_NUM && bs->type == VPA_JSON_NUM && rs->num != bs->num) {
		vpa_buf_printf(&b, "the baseline's seed is %.17g, the results' %.17g", bs->num, rs->num);
		add(out, &b);
	}
	const struct vpa_json *ri = vpa_json_get(results, "inputs"), *bi = vpa_json_get(baseline, "inputs");
	if (ri && bi && ri->type == VPA_JSON_ARR && bi->type == VPA_JSON_ARR) {
		struct vpa_buf d;
		vpa_buf_init(&d);
		struct skip sk = {{vpa_json_get_str(vpa_json_get(results, "scenario"), "file"),
				   vpa_json_get_str(vpa_json_get(baseline, "scenario"), "file"),
				   baseline_name,
				   vpa_json_get_str(vpa_json_get(results, "baseline"), "file"),
				   vpa_json_get_str(vpa_json_get(baseline, "baseline"), "file")}};
		size_t n = input_diffs(results, baseline, &sk, "results", &d, 0);
		n += input_diffs(baseline, results, &sk, "baseline", &d, n);
		if (n) {
			vpa_buf_printf(&b, "%zu input file%s differ%s from the baseline's: %s%s", n,
				       n == 1 ? "" : "s", n == 1 ? "s" : "", vpa_buf_str(&d),
				       n > 3 ? ", ..." : "");
			add(out, &b);
		}
		vpa_buf_release(&d);
	}
	vpa_buf_release(&b);
}
