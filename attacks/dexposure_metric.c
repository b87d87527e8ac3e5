/*
 * attacks/dexposure_metric.c - the metric of the attack kind `d_exposure` on
 * one model (split from attacks/dexposure.c; contracts in
 * attacks/dexposure_int.h): d-exposure per class from the canary's and the
 * references' confidences with the exchangeable level, the nearest-rank
 * quantile, the JSON record and figure helpers, and the record of an
 * imported target's confidences.
 */
#include "attacks/dexposure_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the metric on one model ------------------------------------------------- */

/* Expected d-exposure of a class of n references when the canary is
 * exchangeable with them (the number of references at or above it uniform
 * on 0..n): what a reference word itself would get.  Not the chance level of
 * an ambiguous canary (README: an ambiguous word is less confident than the
 * unambiguous references), reported for comparison. */
static double exchangeable_level(size_t n)
{
	double s = 0, ln = log2((double)n);
	for (size_t j = 0; j <= n; j++)
		s += ln - log2((double)(j ? j : 1));
	return s / (double)(n + 1);
}

int vpa_dexp_compute(const double *canary, const double *const *ref, const size_t *n_ref,
			size_t k, struct dexp *out, struct vpa_err *err)
{
	struct vpa_dexp_class c[VPA_TAG_N * 4] = {{0}};
	memset(out, 0, sizeof(*out));
	out->k = k;
	for (size_t i = 0; i < k; i++) {
		c[i].canary_conf = canary[i];
		c[i].ref_conf = ref[i];
		c[i].n_ref = n_ref[i];
		out->n_ref[i] = n_ref[i];
		out->canary_conf[i] = canary[i];
	}
	int rc = vpa_dexposure(c, k, out->per, out->max, &out->mean, err);
	if (rc)
		return rc;
	double mm = 0, me = 0;
	for (size_t i = 0; i < k; i++) {
		out->exch[i] = exchangeable_level(n_ref[i]);
		me += out->exch[i];
		mm += out->max[i];
		out->chance[i] = NAN;
	}
	out->mean_exch = me / (double)k;
	out->mean_max = mm / (double)k;
	out->mean_chance = out->label_p90 = out->mean_p90 = NAN;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank quantile p of x (n > 0; sorts x). */
double vpa_dexp_quantile(double *x, size_t n, double p)
{
	qsort(x, n, sizeof(double), cmp_double);
	size_t r = (size_t)ceil(p * (double)n);
	return x[r ? r - 1 : 0];
}

struct vpa_json *vpa_dexp_record(const char *attack, const char *sub, const struct dexp *d,
			       const char *const *cls_names, int label)
{
	struct vpa_json *rec = vpa_json_obj();
	vpa_json_set_str(rec, "attack", attack);
	vpa_json_set_str(rec, "sub", sub);
	vpa_json_set(rec, "layer", vpa_json_null());
	vpa_json_set(rec, "sweep", vpa_json_null());
	struct vpa_json *m = vpa_json_obj();
	vpa_json_set_num(m, "d_exposure", d->mean);
	vpa_json_set_num(m, "d_exposure_max", d->mean_max);
	vpa_json_set_num(m, "d_exposure_chance", d->mean_chance);
	vpa_json_set_num(m, "d_exposure_chance_p90", d->mean_p90);
	vpa_json_set_num(m, "d_exposure_exchangeable", d->mean_exch);
	if (label >= 0) {
		vpa_json_set_num(m, "d_exposure_label", d->per[label]);
		vpa_json_set_num(m, "d_exposure_label_max", d->max[label]);
		vpa_json_set_num(m, "d_exposure_label_chance", d->chance[label]);
		vpa_json_set_num(m, "d_exposure_label_chance_p90", d->label_p90);
		vpa_json_set_num(m, "d_exposure_label_excess", d->per[label] - d->chance[label]);
		vpa_json_set_num(m, "controls", (double)d->n_ctrl);
	}
	for (size_t i = 0; i < d->k; i++) {
		char key[128];
		snprintf(key, sizeof(key), "d_exposure_%s", cls_names[i]);
		vpa_json_set_num(m, key, d->per[i]);
		snprintf(key, sizeof(key), "max_%s", cls_names[i]);
		vpa_json_set_num(m, key, d->max[i]);
		if (label >= 0) {
			snprintf(key, sizeof(key), "chance_%s", cls_names[i]);
			vpa_json_set_num(m, key, d->chance[i]);
		}
	}
	vpa_json_set(rec, "metrics", m);
	return rec;
}

static struct vpa_json *num_arr(const double *x, size_t n)
{
	struct vpa_json *a = vpa_json_arr();
	for (size_t i = 0; i < n; i++)
		vpa_json_push(a, vpa_json_num(x[i]));
	return a;
}

struct vpa_json *vpa_dexp_series(const char *name, const double *x, const double *y, size_t n)
{
	struct vpa_json *s = vpa_json_obj();
	vpa_json_set_str(s, "name", name);
	vpa_json_set(s, "x", num_arr(x, n));
	vpa_json_set(s, "y", num_arr(y, n));
	return s;
}

struct vpa_json *vpa_dexp_lines(const char *id, const char *title, const char *xl, const char *yl)
{
	struct vpa_json *f = vpa_json_obj();
	vpa_json_set_str(f, "type", "lines");
	vpa_json_set_str(f, "id", id);
	vpa_json_set_str(f, "title", title);
	vpa_json_set_str(f, "xlabel", xl);
	vpa_json_set_str(f, "ylabel", yl);
	vpa_json_set(f, "logx", vpa_json_bool(0));
	vpa_json_set(f, "series", vpa_json_arr());
	return f;
}

/* ---- imported confidences ------------------------------------------------------ */

int vpa_dexp_run_import(struct vpa_run_ctx *ctx, const char *id, const struct vpa_target *t,
		      struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct vpa_tagger_target *tt = t->data;
	const struct vpa_tagconf *c = &tt->conf;
	size_t K = c->n_class;
	if (K > VPA_TAG_N * 4)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: at most %d classes, found %zu",
				tt->conf_path, VPA_TAG_N * 4, K);
	double canary[VPA_TAG_N * 4] = {0};
	int have[VPA_TAG_N * 4] = {0};
	size_t n_ref[VPA_TAG_N * 4] = {0};
	double *ref[VPA_TAG_N * 4] = {0};
	for (size_t r = 0; r < c->n_rows; r++) {
		if (!strcmp(c->word[r], tt->canary)) {
			canary[c->cls[r]] = c->conf[r];
			have[c->cls[r]] = 1;
		} else {
			n_ref[c->cls[r]]++;
		}
	}
	for (size_t i = 0; i < K; i++) {
		if (!have[i])
			return vpa_fail(err, VPA_EINPUT, NULL,
					"%s: no confidence of class '%s' for the canary '%s'",
					tt->conf_path, c->class_name[i], tt->canary);
		if (!n_ref[i])
			return vpa_fail(err, VPA_EINPUT, NULL,
					"%s: class '%s' has no reference word (only the canary)",
					tt->conf_path, c->class_name[i]);
	}
	for (size_t i = 0; i < K; i++) {
		ref[i] = xmalloc(xmul(n_ref[i], sizeof(double)));
		n_ref[i] = 0;
	}
	for (size_t r = 0; r < c->n_rows; r++)
		if (strcmp(c->word[r], tt->canary))
			ref[c->cls[r]][n_ref[c->cls[r]]++] = c->conf[r];
	struct dexp d;
	int rc = vpa_dexp_compute(canary, (const double *const *)ref, n_ref, K, &d, err);
	if (!rc) {
		struct vpa_json *rec = vpa_dexp_record(id, "import", &d, (const char *const *)c->class_name, -1);
		struct vpa_json *m = vpa_json_get(rec, "metrics");
		for (size_t i = 0; i < K; i++) {
			char key[128];
			snprintf(key, sizeof(key), "n_ref_%s", c->class_name[i]);
			vpa_json_set_num(m, key, (double)n_ref[i]);
		}
		vpa_json_push(out->records, rec);
	}
	(void)ctx;
	for (size_t i = 0; i < K; i++)
		free(ref[i]);
	return rc;
}
