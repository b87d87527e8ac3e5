/*
 * targets/anon_build.h - between the kind `anonymised_speech`
 * (targets/anon_speech.c: keys, checks, the target's lifecycle) and its
 * builds, one way: the kind calls the builds, the builds call the set
 * helpers, nothing calls back up.
 *
 *   anon_speech.c    the kind: keys, validation, build (dispatch, pseudo_out,
 *                    info), free
 *   anon_simulate.c  source: simulate (sim_speech.c + anonymiser.c)
 *   anon_import.c    source: import (archives, .npy, audio embedded by ONNX),
 *                    and the alignment of the sets of source audio
 *   anon_audio.c     source: audio (extractors trained in C)
 *   anon_sets.c      the sets' helpers: alignment, enrolment selection, trials
 *                    lists, info, the target's seed, the anonymiser's options
 *   anon_onnx.c      the ONNX extractor (keys, loading)
 */
#ifndef VPA_ANON_BUILD_H
#define VPA_ANON_BUILD_H

#include "targets/anon.h"

/* source: simulate (anon_simulate.c) */
int vpa_anon_build_sim(struct vpa_run_ctx *ctx, const struct vpa_anon_opts *o,
		       struct vpa_target *t, struct vpa_anon_target *a, struct vpa_err *err);
/* source: import (anon_import.c) */
int vpa_anon_build_import(struct vpa_run_ctx *ctx, const struct vpa_anon_opts *o,
			  struct vpa_target *t, struct vpa_anon_target *a, struct vpa_err *err);
/*
 * source audio, after vpa_anon_build_audio (anon_import.c): the enrolment
 * selection (enrolls), every anonymised set in its original's order
 * (speakers for enrolment, rows for trials), the trials.
 */
int vpa_anon_audio_sets(struct vpa_run_ctx *ctx, const struct vpa_anon_audio_opts *au,
			struct vpa_anon_target *a, struct vpa_err *err);

/* ---- the sets' helpers (anon_sets.c) ---- */

/* Rows of `src` reordered to the utterances of `ref` (all must exist). */
int vpa_anon_align_rows(const struct vpa_embset *ref, const struct vpa_embset *src,
			const char *what, struct vpa_embset *out, struct vpa_err *err);
/* Speakers of `set` in the order of `ref`'s speakers (all must exist; empty: kept). */
int vpa_anon_align_spk(const struct vpa_embset *ref, struct vpa_embset *set, const char *what,
		       struct vpa_err *err);
/* The `enrolls` list (path relative to the scenario; NULL: keep all) applied
 * to each enrolment set of sets (the originals and their anonymised copies;
 * NULL-terminated, empty sets skipped). */
int vpa_anon_select_enrolls(struct vpa_run_ctx *ctx, const char *enrolls,
			    struct vpa_embset *const *sets, struct vpa_err *err);
/*
 * The VoicePrivacy trials lists (paths relative to the scenario; several are
 * used together, a trial named twice is an error naming both lines), or
 * every same-gender pair when there is none.
 */
int vpa_anon_read_trials(struct vpa_run_ctx *ctx, const char *const *trials, size_t n_files,
			 struct vpa_anon_target *a, struct vpa_err *err);
/* info.NAME = {utterances, speakers, female, male, dim} of a non-empty set. */
void vpa_anon_set_info(struct vpa_json *info, const char *name, const struct vpa_embset *es);
/* The anonymiser's settings from its options, and as info.anonymiser. */
void vpa_anon_cfg_read(const struct vpa_anon_anonymiser_opts *an, struct vpa_anon_cfg *c);
void vpa_anon_cfg_info(struct vpa_json *info, const struct vpa_anon_cfg *c);
/* The target's own seed: the run's seed split by "target/ID". */
uint64_t vpa_anon_target_seed(uint64_t seed, const char *id);

#endif
