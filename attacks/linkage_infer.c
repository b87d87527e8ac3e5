/*
 * attacks/linkage_infer.c - the third criterion of the Article 29 Working
 * Party (Opinion 05/2014), inference, for the `linkage` attack (issue 29
 * item 4): each attacker trains a classifier of a per-speaker attribute
 * (gender from spk2gender, or the user's `attribute` file) on the training
 * data its back-end is trained on (the original training data for the
 * baseline, ignorant and lazy-informed attackers, the anonymised one for
 * the semi-informed and informed), on its back-end's features (centering,
 * LDA, length norm), and guesses the attribute of every test utterance it
 * attacks (the anonymised trials; the original ones for the baseline).
 * Accuracy and balanced accuracy against the chance of a guess that ignores
 * the voice come from metrics/inference.c.
 */
#include "attacks/linkage_int.h"
#include "formats/kaldi.h"
#include "learn/attr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vpa_attr_labels_release(struct vpa_attr_labels *l)
{
	vpa_strmap_release(&l->map);
	vpa_kaldi_list_release(&l->list);
	free(l->cls);
	memset(l, 0, sizeof(*l));
}

/* class index of name, added when new */
static uint32_t class_of(struct vpa_attr_labels *l, const char *name)
{
	for (size_t c = 0; c < l->n_cls; c++)
		if (!strcmp(l->cls[c], name))
			return (uint32_t)c;
	l->cls = xrealloc(l->cls, xmul(l->n_cls + 1, sizeof(char *)));
	l->cls[l->n_cls] = name;
	return (uint32_t)l->n_cls++;
}

int vpa_attr_labels_file(const char *path, const char *shown, struct vpa_attr_labels *out,
			 struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	vpa_strmap_init(&out->map);
	vpa_kaldi_list_init(&out->list);
	out->name = shown;
	int rc = vpa_kaldi_read_list(path, 2, &out->list, err);
	if (rc)
		return rc;
	const struct vpa_kaldi_list *L = &out->list;
	for (size_t i = 0; i < L->n; i++) {
		uint32_t c = class_of(out, L->f[2 * i + 1]), old;
		if (vpa_strmap_put(&out->map, L->f[2 * i], c, &old) && old != c) {
			long first = 0;
			for (size_t j = 0; j < i && !first; j++)
				if (!strcmp(L->f[2 * j], L->f[2 * i]))
					first = L->line[j];
			return vpa_fail(err, VPA_EINPUT, NULL, "%s:%ld: speaker '%s' has two labels "
					"('%s' here, '%s' on line %ld)", shown, L->line[i], L->f[2 * i],
					L->f[2 * i + 1], out->cls[old], first);
		}
	}
	if (out->n_cls < 2)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: %s: an attribute to infer needs "
				"2 classes", shown, out->n_cls ? "every speaker has the same label"
							   : "no speaker");
	return 0;
}

void vpa_attr_labels_gender(const struct vpa_embset *const *sets, size_t n_sets,
			    struct vpa_attr_labels *out)
{
	memset(out, 0, sizeof(*out));
	vpa_strmap_init(&out->map);
	vpa_kaldi_list_init(&out->list);
	out->name = "gender";
	/* f before m whatever the data, so results name the classes alike */
	class_of(out, "f");
	class_of(out, "m");
	for (size_t k = 0; k < n_sets; k++) {
		const struct vpa_embset *es = sets[k];
		for (size_t s = 0; es->gender && s < es->n_spk; s++)
			if (es->gender[s] == 'f' || es->gender[s] == 'm')
				vpa_strmap_put(&out->map, es->spk_id[s], es->gender[s] == 'm', NULL);
	}
	out->labelled = out->map.n;
}

/* labels of the rows of es (UINT32_MAX: none); returns the labelled rows */
static size_t row_labels(const struct vpa_attr_labels *l, const struct vpa_embset *es,
			 uint32_t *y, size_t *unl_spk)
{
	size_t k = 0;
	*unl_spk = 0;
	uint32_t *sl = xmalloc(xmul(es->n_spk ? es->n_spk : 1, sizeof(uint32_t)));
	for (size_t s = 0; s < es->n_spk; s++) {
		if (!vpa_strmap_get(&l->map, es->spk_id[s], &sl[s]))
			sl[s] = UINT32_MAX;
		*unl_spk += sl[s] == UINT32_MAX;
	}
	for (size_t i = 0; i < es->n; i++) {
		y[i] = sl[es->spk[i]];
		k += y[i] != UINT32_MAX;
	}
	free(sl);
	return k;
}

int vpa_linkage_attr_fit(const struct vpa_backend *B, const struct vpa_embset *train,
			 const char *train_name, const struct vpa_embset *te,
			 const struct vpa_attr_labels *lab, const struct vpa_attr_labels *genders,
			 struct vpa_linkage_attr *out, struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	size_t d = vpa_backend_out_dim(B), din = vpa_backend_in_dim(B);
	if (train->d != din || te->d != din)
		return vpa_fail(err, VPA_EINPUT, NULL, "attribute attacker: the %s set has "
				"dimension %zu, the back-end expects %zu",
				train->d != din ? train_name : "test", train->d != din ? train->d : te->d,
				din);
	uint32_t *y = xmalloc(xmul(train->n ? train->n : 1, sizeof(uint32_t)));
	size_t unl;
	size_t nl = row_labels(lab, train, y, &unl);
	/* the labelled rows, through the attacker's back-end */
	double *X = xmalloc(xmul(xmul(nl ? nl : 1, d), sizeof(double)));
	double *row = xmalloc(xmul(d, sizeof(double)));
	uint32_t *yl = xmalloc(xmul(nl ? nl : 1, sizeof(uint32_t)));
	size_t r = 0;
	for (size_t i = 0; i < train->n; i++)
		if (y[i] != UINT32_MAX) {
			vpa_backend_prepare(B, train->x + i * din, 1, row);
			memcpy(X + r * d, row, d * sizeof(double));
			yl[r++] = y[i];
		}
	free(y);
	size_t present = 0, c0 = 0;
	for (size_t c = 0; c < lab->n_cls; c++) {
		size_t cnt = 0;
		for (size_t i = 0; i < nl; i++)
			cnt += yl[i] == c;
		if (cnt && !present++)
			c0 = c;
	}
	int rc = 0;
	if (present < 2) {
		rc = present ? vpa_fail(err, VPA_EINPUT, NULL, "attribute '%s': the %s speakers "
					"all have the label '%s': an attacker needs 2 classes to learn",
					lab->name, train_name, lab->cls[c0])
			     : vpa_fail(err, VPA_EINPUT, NULL, "attribute '%s': no speaker of the %s "
					"set has a label", lab->name, train_name);
	} else {
		/* shrinkage 0.01: keeps the pooled covariance invertible when a class
		 * has fewer utterances than the back-end has dimensions, and moves
		 * a well-estimated one by 1% */
		rc = vpa_attr_clf_train(X, nl, d, yl, lab->n_cls, VPA_ATTR_SHRINKAGE, &out->clf,
					err);
	}
	free(X);
	free(yl);
	if (rc) {
		free(row);
		return rc;
	}
	out->train_utts = nl;
	out->train_unlabelled_spk = unl;
	out->truth = xmalloc(xmul(te->n ? te->n : 1, sizeof(uint32_t)));
	out->pred = xmalloc(xmul(te->n ? te->n : 1, sizeof(uint32_t)));
	row_labels(lab, te, out->truth, &out->test_unlabelled_spk);
	/* each test row's gender from any set that names its speaker's (an
	 * anonymised set usually has no spk2gender of its own) */
	out->gender = xcalloc(te->n ? te->n : 1, 1);
	uint32_t *g = xmalloc(xmul(te->n ? te->n : 1, sizeof(uint32_t)));
	size_t unused;
	row_labels(genders, te, g, &unused);
	for (size_t i = 0; i < te->n; i++)
		out->gender[i] = g[i] == UINT32_MAX ? 0 : "fm"[g[i]];
	free(g);
	for (size_t i = 0; i < te->n; i++) {
		vpa_backend_prepare(B, te->x + i * din, 1, row);
		vpa_attr_clf_predict(&out->clf, row, 1, &out->pred[i]);
	}
	free(row);
	return 0;
}

void vpa_linkage_attr_release(struct vpa_linkage_attr *a)
{
	vpa_attr_clf_release(&a->clf);
	free(a->truth);
	free(a->pred);
	free(a->gender);
	memset(a, 0, sizeof(*a));
}

static struct vpa_json *est(double v, double lo, double hi, double chance)
{
	struct vpa_json *o = vpa_json_obj(), *ci = vpa_json_arr();
	vpa_json_set_num(o, "value", v);
	vpa_json_push(ci, vpa_json_num(lo)); /* NAN -> null */
	vpa_json_push(ci, vpa_json_num(hi));
	vpa_json_set(o, "ci", ci);
	vpa_json_set_num(o, "chance", chance);
	return o;
}

struct vpa_json *vpa_linkage_attr_json(const struct vpa_linkage_attr *a,
				       const struct vpa_attr_labels *lab, const char *train_name,
				       const struct vpa_embset *te, char gender, double level,
				       double *acc, double *bacc, char *why, size_t whyn)
{
	*acc = *bacc = NAN;
	*why = 0;
	size_t n = 0;
	for (size_t i = 0; i < te->n; i++)
		n += a->truth[i] != UINT32_MAX &&
		     (!gender || a->gender[i] == gender);
	uint32_t *t = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
	uint32_t *p = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
	uint32_t *s = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
	size_t k = 0;
	for (size_t i = 0; i < te->n; i++)
		if (a->truth[i] != UINT32_MAX && (!gender || a->gender[i] == gender)) {
			t[k] = a->truth[i];
			p[k] = a->pred[i];
			s[k++] = te->spk[i];
		}
	struct vpa_json *o = vpa_json_obj(), *cls = vpa_json_arr();
	vpa_json_set_str(o, "attribute", lab->name);
	for (size_t c = 0; c < lab->n_cls; c++)
		vpa_json_push(cls, vpa_json_str(lab->cls[c]));
	vpa_json_set(o, "classes", cls);
	vpa_json_set_str(o, "classifier", "linear discriminants, shared covariance shrunk by "
			 "0.01 (scikit-learn's LDA, lsqr), on the attacker's back-end features");
	vpa_json_set_str(o, "trained_on", train_name);
	vpa_json_set_num(o, "train_utterances", (double)a->train_utts);
	vpa_json_set_num(o, "train_unlabelled_speakers", (double)a->train_unlabelled_spk);
	vpa_json_set_num(o, "test_utterances", (double)n);
	vpa_json_set_num(o, "test_unlabelled_speakers", (double)a->test_unlabelled_spk);
	vpa_json_set_num(o, "level", level);
	vpa_json_set_num(o, "min_speakers", (double)VPA_LEGAL_MIN_SPEAKERS);
	struct vpa_infer_est e;
	struct vpa_err e2;
	vpa_err_init(&e2);
	if (!n) {
		snprintf(why, whyn, "undefined: no test utterance of a speaker with a label");
		vpa_json_set_num(o, "test_speakers", 0);
		vpa_json_set(o, "accuracy", vpa_json_null());
		vpa_json_set(o, "balanced_accuracy", vpa_json_null());
	} else if (vpa_inference_acc(t, p, s, n, te->n_spk, lab->n_cls, level, &e, &e2)) {
		/* a speaker with two labels cannot come from a per-speaker map */
		VPA_BUG("inference: %s", e2.msg);
	} else {
		vpa_json_set_num(o, "test_speakers", (double)e.n_spk);
		vpa_json_set_str(o, "majority_class", lab->cls[e.majority]);
		vpa_json_set(o, "accuracy", est(e.acc, e.acc_lo, e.acc_hi, e.acc_chance));
		vpa_json_set(o, "balanced_accuracy",
			     est(e.bacc, e.bacc_lo, e.bacc_hi, e.bacc_chance));
		*acc = e.acc;
		*bacc = e.bacc;
		if (e.n_classes < 2)
			snprintf(why, whyn, "the test speakers all have the label '%s' (chance is 1)",
				 lab->cls[e.majority]);
		else if (e.n_spk < VPA_LEGAL_MIN_SPEAKERS)
			snprintf(why, whyn, "%zu test speakers (fewer than %d)", e.n_spk,
				 VPA_LEGAL_MIN_SPEAKERS);
	}
	free(t);
	free(p);
	free(s);
	return o;
}
