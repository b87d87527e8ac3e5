/*
 * metrics/rank.c - closed-set identification (metrics/README.md): the rank of the
 * true candidate among a population's scores, its normalised rank, top-k
 * precision and the chance rank (N + 1) / 2.
 *
 * Ties count half: a true candidate tied with m others gets rank
 * 1 + #{higher} + m/2, the mean of the ranks a random tie-break would give,
 * so a system that scores everyone the same sits exactly at chance.
 */
#include <math.h>

#include "metrics.h"

double vpa_rank(const double *scores, size_t n, size_t true_idx)
{
	if (true_idx >= n)
		return NAN;
	double s = scores[true_idx];
	size_t higher = 0, tied = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == true_idx)
			continue;
		if (scores[i] > s)
			higher++;
		else if (scores[i] == s)
			tied++;
	}
	return 1.0 + (double)higher + (double)tied / 2.0;
}

int vpa_identification(const double *scores, size_t n_probes, size_t population,
		       const size_t *truth, struct vpa_ident *out, struct vpa_err *err)
{
	if (n_probes == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "identification needs at least one probe");
	if (population == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "identification needs a non-empty population");
	double sum_rank = 0;
	size_t top1 = 0, top5 = 0, top10 = 0;
	for (size_t p = 0; p < n_probes; p++) {
		const double *row = scores + p * population;
		if (truth[p] >= population)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"probe %zu: true candidate %zu is outside the population of %zu",
					p + 1, truth[p], population);
		for (size_t i = 0; i < population; i++)
			if (isnan(row[i]))
				return vpa_fail(err, VPA_EINPUT, NULL,
						"probe %zu: score %zu is not a number", p + 1, i + 1);
		double r = vpa_rank(row, population, truth[p]);
		sum_rank += r;
		/* a half rank (tie) counts as within k only when r <= k */
		top1 += r <= 1;
		top5 += r <= 5;
		top10 += r <= 10;
	}
	double np = (double)n_probes;
	out->n_probes = n_probes;
	out->population = population;
	out->mean_rank = sum_rank / np;
	out->mean_norm_rank = out->mean_rank / (double)population;
	out->chance_rank = ((double)population + 1) / 2;
	out->top1 = (double)top1 / np;
	out->top5 = (double)top5 / np;
	out->top10 = (double)top10 / np;
	return 0;
}
