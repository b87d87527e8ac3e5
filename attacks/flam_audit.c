/*
 * attacks/flam_audit.c - the local-DP audit of A1 and A2 (attacks/flam_audit.h).
 */
#include "attacks/flam_audit.h"
#include "metrics/metrics.h"

#include <stdlib.h>

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

void vpa_flam_audit_cp(const struct vpa_flam *t, double *in, size_t n_in, double *out,
		       size_t n_out, double level_alpha, double alpha, const char *note,
		       struct vpa_json *mj)
{
	qsort(in, n_in, sizeof(double), cmp_dbl);
	qsort(out, n_out, sizeof(double), cmp_dbl);
	struct vpa_dp_audit r;
	vpa_dp_audit_scores(in, n_in, out, n_out, level_alpha, t->dp_delta, VPA_AUDIT_CP, &r);
	struct vpa_json *au = vpa_json_obj();
	vpa_json_set_num(mj, "epsilon_lower_bound", r.epsilon);
	vpa_json_set_str(au, "method", "cp");
	vpa_json_set_num(au, "alpha", alpha);
	vpa_json_set_num(au, "alpha_per_layer", level_alpha);
	vpa_json_set_num(au, "delta", t->dp_delta);
	vpa_json_set_num(au, "claimed_epsilon", t->dp_epsilon_replace);
	vpa_json_set_str(au, "claim_key", "epsilon_per_release_replace");
	vpa_json_set_num(au, "claimed_epsilon_speaker", t->dp_epsilon_replace_speaker);
	vpa_json_set_str(au, "accountant", t->dp_accountant);
	vpa_json_set_str(au, "adjacency",
			 "user-level: one released model's update, the speaker's adaptation data "
			 "replaced by another speaker's (sensitivity 2C)");
	vpa_json_set_str(au, "scope", "covered");
	struct vpa_json *cn = vpa_json_obj();
	vpa_json_set_num(cn, "fp", r.fp);
	vpa_json_set_num(cn, "negatives", r.negatives);
	vpa_json_set_num(cn, "fn", r.fn);
	vpa_json_set_num(cn, "positives", r.positives);
	vpa_json_set(au, "counts", cn);
	vpa_json_set_num(au, "threshold", r.threshold);
	vpa_json_set_num(au, "thresholds_swept", r.n_thresholds);
	vpa_json_set_num(au, "auroc", r.auroc);
	vpa_json_set_str(au, "note", note);
	vpa_json_set(mj, "dp_audit", au);
}
