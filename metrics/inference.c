/*
 * metrics/inference.c - the third criterion of the Article 29 Working
 * Party's Opinion 05/2014 (issue 29 item 4): how well an attacker infers a
 * per-speaker attribute from anonymised speech, as accuracy and balanced
 * accuracy of its guesses against the chance level of a guess that ignores
 * the voice, with intervals over test speakers (a speaker's utterances share
 * its label and its voice, so they are not independent trials).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

/* t interval mean +- t se, clipped to [0, 1]; none for df <= 0 */
static void t_interval(double mean, double se, double df, double level, double *lo, double *hi)
{
	*lo = *hi = NAN;
	if (!(df > 0) || !(level > 0 && level < 1) || !isfinite(se))
		return;
	double t = se > 0 ? vpa_t_quantile((1 + level) / 2, df) : 0;
	*lo = fmax(0, mean - t * se);
	*hi = fmin(1, mean + t * se);
}

int vpa_inference_acc(const uint32_t *truth, const uint32_t *pred, const uint32_t *spk,
		      size_t n, size_t n_spk, size_t k, double level, struct vpa_infer_est *out,
		      struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	out->acc_lo = out->acc_hi = out->bacc_lo = out->bacc_hi = NAN;
	if (!n)
		return vpa_fail(err, VPA_EINPUT, NULL, "inference needs at least one test item");
	uint32_t *lab = xmalloc(xmul(n_spk ? n_spk : 1, sizeof(uint32_t)));
	for (size_t s = 0; s < n_spk; s++)
		lab[s] = UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		if (truth[i] >= k || pred[i] >= k || spk[i] >= n_spk) {
			free(lab);
			return vpa_fail(err, VPA_EINPUT, NULL, "inference: item %zu is out of range",
					i + 1);
		}
		if (lab[spk[i]] != UINT32_MAX && lab[spk[i]] != truth[i]) {
			free(lab);
			return vpa_fail(err, VPA_EINPUT, NULL, "inference: speaker %u has two labels "
					"(items of one speaker must share its attribute)", spk[i]);
		}
		lab[spk[i]] = truth[i];
	}
	/* per speaker: items and correct guesses; per class: the same summed */
	double *ts = xcalloc(n_spk ? n_spk : 1, sizeof(double));
	double *ns = xcalloc(n_spk ? n_spk : 1, sizeof(double));
	double *tc = xcalloc(k, sizeof(double)), *nc = xcalloc(k, sizeof(double));
	double *ss = xcalloc(k, sizeof(double));
	size_t *gc = xcalloc(k, sizeof(size_t));
	double correct = 0;
	for (size_t i = 0; i < n; i++) {
		double c = truth[i] == pred[i];
		ts[spk[i]] += c;
		ns[spk[i]] += 1;
		tc[truth[i]] += c;
		nc[truth[i]] += 1;
		correct += c;
	}
	double acc = correct / (double)n, ssa = 0;
	size_t g = 0;
	for (size_t s = 0; s < n_spk; s++) {
		if (!ns[s])
			continue;
		double dv = ts[s] - ns[s] * acc;
		ssa += dv * dv;
		g++;
		uint32_t c = lab[s];
		double dc = ts[s] - ns[s] * (tc[c] / nc[c]);
		ss[c] += dc * dc;
		gc[c]++;
	}
	out->acc = acc;
	out->n_items = n;
	out->n_spk = g;
	/* accuracy: the CR1 cluster-robust t interval over speakers, as pi_link */
	if (g >= 3)
		t_interval(acc, sqrt((double)g / (double)(g - 1) * ssa) / (double)n, (double)(g - 1),
			   level, &out->acc_lo, &out->acc_hi);
	/* balanced accuracy: the mean recall of the classes present; classes
	 * hold disjoint speakers, so the recalls are independent and the
	 * variance is the sum of their CR1 variances over K^2, with
	 * Welch-Satterthwaite degrees of freedom */
	size_t K = 0, big = 0;
	double bacc = 0, var = 0, vdf = 0;
	int ok = 1;
	for (size_t c = 0; c < k; c++) {
		if (!nc[c])
			continue;
		K++;
		bacc += tc[c] / nc[c];
		if (nc[c] > nc[big] || !nc[big])
			big = c;
		if (gc[c] < 2) {
			ok = 0;
			continue;
		}
		double v = (double)gc[c] / (double)(gc[c] - 1) * ss[c] / (nc[c] * nc[c]);
		var += v;
		vdf += v * v / (double)(gc[c] - 1);
	}
	bacc /= (double)K;
	out->bacc = bacc;
	out->n_classes = K;
	out->majority = big;
	out->acc_chance = nc[big] / (double)n;
	out->bacc_chance = 1.0 / (double)K;
	if (ok && K >= 2) {
		double se = sqrt(var) / (double)K;
		/* all recalls without spread: a zero-width interval, any df */
		double df = vdf > 0 ? var * var / vdf : 1;
		t_interval(bacc, se, df, level, &out->bacc_lo, &out->bacc_hi);
	}
	free(lab);
	free(ts);
	free(ns);
	free(tc);
	free(nc);
	free(ss);
	free(gc);
	return 0;
}
