/*
 * reports/reversal.c - the finding of a record whose scores are
 * anti-correlated with identity (the record's "anti_correlated", decided by
 * metrics/reversal.c), in the words the gates, the summary and the
 * limitations share.
 */
#include "reports/report.h"

#include <math.h>
#include <string.h>

static double num_at(const struct vpa_json *o, const char *key)
{
	const struct vpa_json *v = vpa_json_get(o, key);
	return v && v->type == VPA_JSON_NUM && isfinite(v->num) ? v->num : NAN;
}

int vpa_rec_anti_correlated(const struct vpa_json *rec, int evidence, struct vpa_buf *b)
{
	const struct vpa_json *ac = vpa_json_get(rec, "anti_correlated");
	if (!ac || ac->type != VPA_JSON_BOOL || !ac->boolean)
		return 0;
	const struct vpa_json *m = vpa_json_get(rec, "metrics");
	double flipped = num_at(m, "eer_flipped"), sweep = num_at(m, "eer_sweep");
	const struct vpa_json *why = vpa_json_get(rec, "anti_correlation");
	const struct vpa_json *ci = vpa_json_get(why, "eer_sweep_ci");
	double level = num_at(why, "level");
	if (!b)
		return 1;
	vpa_buf_puts(b, "the scores are anti-correlated with identity");
	if (evidence && isfinite(sweep)) {
		vpa_buf_printf(b, " (threshold-sweep EER %.1f%%", 100 * sweep);
		if (ci && ci->type == VPA_JSON_ARR && ci->n == 2 &&
		    ci->items[0]->type == VPA_JSON_NUM && ci->items[1]->type == VPA_JSON_NUM &&
		    isfinite(level))
			vpa_buf_printf(b, ", %g%% interval %.1f-%.1f%%, above 50%%", 100 * level,
				       100 * ci->items[0]->num, 100 * ci->items[1]->num);
		vpa_buf_puts(b, ")");
	}
	if (isfinite(flipped))
		vpa_buf_printf(b, ": an attacker who reverses them reaches EER %.1f%%", 100 * flipped);
	return 1;
}

int vpa_metric_reads_direction(const char *metric)
{
	static const char *const m[] = {"eer", "eer_sweep", "cllr", "cllr_min", "min_dcf", "zebra",
					NULL};
	for (size_t i = 0; m[i]; i++) {
		size_t l = strlen(m[i]);
		if (!strncmp(metric, m[i], l) && (metric[l] == 0 || metric[l] == '.'))
			return 1;
	}
	return 0;
}
