/*
 * attacks/flam_audit.h - the local-DP audit shared by the A1 and A2 attacks
 * on `fl_acoustic_models` (issue 28): Clopper-Pearson over the threshold sweep
 * of "in" scores (two released models of one speaker) and "out" scores
 * (models of two speakers), each set already thinned to disjoint model pairs
 * by the caller, against the per-release epsilon under replacement.
 */
#ifndef VPA_ATTACKS_FLAM_AUDIT_H
#define VPA_ATTACKS_FLAM_AUDIT_H

#include "base/json.h"
#include "targets/fl_am.h"

/* Sorts in and out (n_in, n_out >= 1), runs the CP sweep at level_alpha (alpha
 * split over the layers audited) and sets mj's epsilon_lower_bound and dp_audit
 * (note: the trials' sentence). */
void vpa_flam_audit_cp(const struct vpa_flam *t, double *in, size_t n_in, double *out,
		       size_t n_out, double level_alpha, double alpha, const char *note,
		       struct vpa_json *mj);

#endif
