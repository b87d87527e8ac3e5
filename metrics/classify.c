/*
 * metrics/classify.c - the metrics of an utterance classifier (emotion
 * recognition in the VoicePrivacy Challenge 2024): confusion matrix,
 * per-class recall, unweighted average recall (UAR) and accuracy.
 *
 * UAR rather than accuracy is what the VPC ranks by, because IEMOCAP's
 * classes are unbalanced: a classifier answering "neutral" always scores a
 * high accuracy and a UAR of 1/C.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

void vpa_cls_metrics_release(struct vpa_cls_metrics *m)
{
	if (!m)
		return;
	free(m->confusion);
	free(m->support);
	free(m->recall);
	memset(m, 0, sizeof(*m));
}

int vpa_cls_metrics(const uint32_t *truth, const uint32_t *pred, size_t n, size_t C,
		    struct vpa_cls_metrics *out, struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!n)
		return vpa_fail(err, VPA_EINPUT, NULL, "no sample to score the classifier on");
	if (!C)
		return vpa_fail(err, VPA_EINPUT, NULL, "the classifier has no class");
	for (size_t i = 0; i < n; i++)
		if (truth[i] >= C || pred[i] >= C)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"sample %zu: class %u is outside [0, %zu)", i + 1,
					truth[i] >= C ? truth[i] : pred[i], C);
	out->n_classes = C;
	out->n = n;
	out->confusion = xcalloc(xmul(C, C), sizeof(size_t));
	out->support = xcalloc(C, sizeof(size_t));
	out->recall = xcalloc(C, sizeof(double));
	size_t correct = 0;
	for (size_t i = 0; i < n; i++) {
		out->confusion[(size_t)truth[i] * C + pred[i]]++;
		out->support[truth[i]]++;
		correct += truth[i] == pred[i];
	}
	/* summed in class order, so the result does not depend on sample order */
	double sum = 0;
	for (size_t c = 0; c < C; c++) {
		if (!out->support[c]) {
			out->recall[c] = NAN;
			continue;
		}
		out->recall[c] = (double)out->confusion[c * C + c] / (double)out->support[c];
		sum += out->recall[c];
		out->n_present++;
	}
	out->uar = sum / (double)out->n_present;
	/* recall_score's macro average: the classes seen in truth or answers, a
	 * class never true scoring 0 (sklearn's zero_division default) */
	size_t n_seen = 0;
	for (size_t c = 0; c < C; c++) {
		size_t answered = 0;
		for (size_t k = 0; k < C; k++)
			answered += out->confusion[k * C + c];
		n_seen += out->support[c] || answered;
	}
	out->uar_macro = sum / (double)n_seen;
	out->accuracy = (double)correct / (double)n;
	return 0;
}

int vpa_cls_fold_uar(const uint32_t *truth, const uint32_t *pred, const uint32_t *group,
		     size_t n, size_t C, size_t G, double *uar, double *class_mean,
		     size_t *n_groups, struct vpa_err *err)
{
	*uar = NAN;
	*n_groups = 0;
	for (size_t c = 0; c < C; c++)
		class_mean[c] = NAN;
	for (size_t i = 0; i < n; i++)
		if (group[i] >= G)
			return vpa_fail(err, VPA_EINPUT, NULL, "sample %zu: fold %u is outside [0, %zu)",
					i + 1, group[i], G);
	uint32_t *t = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
	uint32_t *p = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
	double *csum = xcalloc(C ? C : 1, sizeof(double)), usum = 0;
	size_t *cn = xcalloc(C ? C : 1, sizeof(size_t));
	int rc = 0;
	/* groups in index order, so the sums do not depend on the sample order */
	for (size_t g = 0; g < G && !rc; g++) {
		size_t m = 0;
		for (size_t i = 0; i < n; i++)
			if (group[i] == g) {
				t[m] = truth[i];
				p[m++] = pred[i];
			}
		if (!m)
			continue;
		struct vpa_cls_metrics gm;
		if ((rc = vpa_cls_metrics(t, p, m, C, &gm, err)))
			break;
		usum += gm.uar_macro;
		(*n_groups)++;
		for (size_t c = 0; c < C; c++)
			if (gm.support[c]) {
				csum[c] += gm.recall[c];
				cn[c]++;
			}
		vpa_cls_metrics_release(&gm);
	}
	if (!rc && !*n_groups)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "no sample to score the classifier on");
	if (!rc) {
		*uar = usum / (double)*n_groups;
		for (size_t c = 0; c < C; c++)
			class_mean[c] = cn[c] ? csum[c] / (double)cn[c] : NAN;
	}
	free(t);
	free(p);
	free(csum);
	free(cn);
	return rc;
}
