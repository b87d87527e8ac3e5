/*
 * targets/anon_informed.h - the informed attacker's enrolment from audio
 * (`source: audio` with a built-in `anonymise:`), kept apart from
 * targets/anon.h because audio/anon.h's names clash with it.
 */
#ifndef VPA_ANON_INFORMED_H
#define VPA_ANON_INFORMED_H

#include "base/base.h"

/*
 * The enrolment directory enroll_dir anonymised into out_dir (which must not
 * exist) with the draws the user's anonymiser gave the trial speakers
 * (user_seed, the seed trial_dir was anonymised with):
 *   speaker level: every enrolment utterance of speaker s with s's
 *     coefficient (the stream of s, as the trials);
 *   utterance level: the j-th enrolment utterance of s (in data-directory
 *     order) with the coefficient of the (j mod n_s)-th trial utterance of s
 *     (n_s: its trial utterances), the rule targets/anon_speech.c's
 *     informed_map applies to pseudo-speakers.
 * The anonymiser `kind` (enum vpa_anon_kind of audio/anon.h: McAdams,
 * bilinear warping, pitch shifting), coefficients in [lo, hi).
 * Errors: a data directory without utt2spk, an enrolment speaker without a
 * trial utterance (nothing to inform the attacker of), the anonymiser's.
 */
/* The enum vpa_anon_kind of an `anonymise.method` name (mcadams, warp, pitch). */
int vpa_anon_audio_kind(const char *method);

int vpa_anon_audio_informed(const char *enroll_dir, const char *trial_dir, const char *out_dir,
			    int kind, int utt_level, double lo, double hi, uint64_t user_seed,
			    int threads, struct vpa_err *err);

#endif
