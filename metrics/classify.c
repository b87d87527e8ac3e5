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
	out->accuracy = (double)correct / (double)n;
	return 0;
}
