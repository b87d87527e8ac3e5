/*
 * targets/fl_speaker_int.h - what the parts of the target kind
 * `fl_speaker_classifier` share (split from targets/fl_speaker.c):
 * targets/fl_speaker.c (keys, validation, building), targets/fl_speaker_train.c
 * (the regimes' names, the parallel loop, devices, the privacy set-up of a
 * regime, federated training) and targets/fl_speaker_sv.c (the speaker-
 * embedding network).  Internal to the kind.  The stairs go one way:
 * fl_speaker.c calls fl_speaker_train.c and fl_speaker_sv.c, which call
 * neither it nor each other.
 */
#ifndef VPA_FL_SPEAKER_INT_H
#define VPA_FL_SPEAKER_INT_H

#include "targets/fl_speaker.h"

/* ---- targets/fl_speaker_train.c ------------------------------------------------------ */

/* The privacy parameters of regime r of T into p. */
int vpa_fls_privacy_setup(const struct vpa_fls_target *T, enum vpa_fls_regime r,
			  struct vpa_fls_privacy *p, struct vpa_err *err);
/* Gathered rows (users' rows one after the other) with their classes. */
void vpa_fls_gather(const struct vpa_fls_pop *pop, const size_t *users, size_t n, float **x,
		    uint32_t **y, size_t **off, size_t *n_rows);
/* Federated training of regime R of T, tested on (tx, ty) of tn rows. */
int vpa_fls_train(struct vpa_run_ctx *ctx, struct vpa_fls_target *T,
		  struct vpa_fls_regime_res *R, const float *tx, const uint32_t *ty, size_t tn,
		  struct vpa_err *err);

/* ---- targets/fl_speaker_sv.c (the speaker-embedding network, section 5) -------------- */

struct sv_data {
	const float *x;     /* (n, d) */
	size_t n, d;
	const uint32_t *spk; /* (n) speaker index */
	size_t n_spk;
	const float *soft;  /* (n, K) teacher's softened outputs or NULL */
	size_t K;
};

int vpa_fls_sv_train(const struct sv_data *D, size_t hidden, size_t emb, size_t epochs,
		     double lr, double T, double gamma, int squared, uint64_t seed,
		     struct vpa_nn **trunk_out, struct vpa_err *err);
int vpa_fls_embed(struct vpa_nn *trunk, const float *x, size_t n, float **out,
		  struct vpa_err *err);

#endif
