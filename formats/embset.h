/*
 * formats/embset.h - embedding sets (utterance x-vectors with their speakers) and
 * a small string -> index map.
 *
 * An embedding set is an (n, d) row-major double matrix, one row per
 * utterance, with the utterance id, the speaker of each utterance (interned:
 * each distinct speaker id once, in order of first appearance), an optional
 * gender per speaker ('m' / 'f') and an optional duration per utterance.
 *
 *   struct vpa_embset es;
 *   vpa_embset_init(&es);
 *   vpa_embset_add(&es, "u1", "spk1", x, 256, err);   // copies x
 *   ...
 *   vpa_embset_release(&es);
 *
 * Importers (Kaldi archives, .npy + id list, utt2spk, spk2gender, utt2dur,
 * enrolls and trials lists) are declared here and in formats/kaldi.h; the formats
 * and messages are documented in learn/BACKENDS.md.
 */
#ifndef VPA_EMBSET_H
#define VPA_EMBSET_H

#include "base/base.h"
#include "base/strmap.h"

/* ----------------------------------------------------------- embedding set */

struct vpa_embset {
	size_t n, d;       /* utterances, dimension (d fixed by the first add) */
	size_t cap;        /* rows allocated */
	double *x;         /* (n, d) row-major, owned */
	char **utt;        /* (n) utterance ids, owned */
	uint32_t *spk;     /* (n) speaker index of each utterance, into spk_id */
	size_t n_spk;
	char **spk_id;     /* (n_spk) speaker ids, owned, order of first appearance */
	char *gender;      /* (n_spk) 'm', 'f' or 0 (unknown); NULL when no gender at all */
	double *dur;       /* (n) duration in seconds, or NULL when unknown */
	struct vpa_strmap utt_map; /* utt id -> row */
	struct vpa_strmap spk_map; /* speaker id -> speaker index */
	size_t spk_cap;
};

void vpa_embset_init(struct vpa_embset *es);
void vpa_embset_release(struct vpa_embset *es);

/*
 * Speaker index of `spk`, interning it when new (no gender, no utterance).
 */
uint32_t vpa_embset_intern_spk(struct vpa_embset *es, const char *spk);

/*
 * Append utterance `utt` of speaker `spk` with vector x (d values, copied).
 * Errors (VPA_EINPUT, no location): "duplicate utterance 'u1'",
 * "utterance 'u3' has dimension 4, expected 3 as 'u1'", "utterance 'u2' has a
 * value that is not finite".  Returns the row index (>= 0) or the error.
 */
long vpa_embset_add(struct vpa_embset *es, const char *utt, const char *spk, const double *x,
		    size_t d, struct vpa_err *err);

/* Set the gender ('m' or 'f') of speaker index s (allocates es->gender). */
void vpa_embset_set_gender(struct vpa_embset *es, uint32_t s, char g);
/* Set the duration of row i (allocates es->dur, unknown durations are 0). */
void vpa_embset_set_dur(struct vpa_embset *es, size_t i, double seconds);

/* Row index of utterance id, or -1.  Speaker index of speaker id, or -1. */
long vpa_embset_find_utt(const struct vpa_embset *es, const char *utt);
long vpa_embset_find_spk(const struct vpa_embset *es, const char *spk);

/* Gender of row i's speaker: 'm', 'f' or 0. */
char vpa_embset_utt_gender(const struct vpa_embset *es, size_t i);

/*
 * Per-speaker means of the rows and utterance counts:
 * means (n_spk, d), counts (n_spk) (either may be NULL).  A speaker with no
 * utterance gets a zero mean and count 0.
 */
void vpa_embset_spk_means(const struct vpa_embset *es, double *means /* OUT */,
			  uint32_t *counts /* OUT */);

/*
 * Subsets (deep copies into *out, which must be initialised and empty):
 *  - by speakers: the utterances of the listed speaker indices, in row order;
 *    out's speakers are exactly spk[0..k-1] in that order (with their gender);
 *  - by rows: rows idx[0..k-1] in that order (indices must be distinct);
 *    speakers in order of first appearance.
 * Durations and genders are carried over.
 */
void vpa_embset_subset_spk(const struct vpa_embset *es, const uint32_t *spk, size_t k,
			   struct vpa_embset *out /* OUT */);
void vpa_embset_subset_rows(const struct vpa_embset *es, const size_t *idx, size_t k,
			    struct vpa_embset *out /* OUT */);
/* Deep copy. */
void vpa_embset_copy(const struct vpa_embset *es, struct vpa_embset *out /* OUT */);

/* ---------------------------------------------------------------- import */

/*
 * Where an embedding set comes from.  `vectors` is a Kaldi archive (text or
 * binary, vectors only) or a .npy (n, d) float32/float64 array (chosen by the
 * ".npy" suffix or the \x93NUMPY magic).  For .npy, `ids` names a list with
 * one utterance id per line in row order, or two columns `utt spk` (which
 * then serves as utt2spk).  utt2spk is required otherwise.  spk2gender and
 * utt2dur are optional (NULL); with need_gender every speaker must have one.
 * Entries of utt2spk / spk2gender / utt2dur that name utterances or speakers
 * absent from the vectors are ignored (as Kaldi does).
 */
struct vpa_embset_src {
	const char *vectors;
	const char *ids;
	const char *utt2spk;
	const char *spk2gender;
	const char *utt2dur;
	int need_gender;
};

/*
 * Read an embedding set.  *out must be initialised and empty; on error it is
 * left empty.  Errors, e.g.
 *   "xv.ark:3: duplicate utterance 'u1' (first on line 1)"
 *   "xv.ark:4: utterance 'u4' has dimension 2, expected 3 as 'u1'"
 *   "utt2spk: no speaker for utterance 'u7' (xv.ark:7)"
 *   "spk2gender: no gender for speaker 's2' (needed for gender selection)"
 *   "ids.txt: 3 ids for 4 rows of xv.npy"
 */
int vpa_embset_import(const struct vpa_embset_src *src, struct vpa_embset *out,
		      struct vpa_err *err);

/* Write the set as a Kaldi text archive `utt  [ v1 v2 ... ]` (%.9g). */
int vpa_embset_write_ark(const struct vpa_embset *es, const char *path, struct vpa_err *err);

/*
 * Keep the utterances listed in a VoicePrivacy `enrolls` file (one utterance
 * id per line): *out gets those rows in list order.  Errors:
 *   "enrolls:3: unknown utterance 'u9'", "enrolls:4: duplicate utterance 'u2'
 *   (first on line 1)", "enrolls: no utterances".
 */
int vpa_embset_select_list(const struct vpa_embset *es, const char *list_path,
			   struct vpa_embset *out /* OUT */, struct vpa_err *err);

struct vpa_kaldi_trials; /* formats/kaldi.h */

/*
 * Resolve a trials list against the enrolment set (its speakers) and the test
 * set (its utterances): e_spk[i] is the speaker index in `enroll`, t_row[i]
 * the row in `test` (both (n) arrays, caller-provided).  Errors:
 *   "trials:5: unknown enrolment speaker 'spk9'"
 *   "trials:6: unknown test utterance 'u77'"
 */
int vpa_embset_resolve_trials(const struct vpa_kaldi_trials *t, const struct vpa_embset *enroll,
			      const struct vpa_embset *test, uint32_t *e_spk /* OUT */,
			      uint32_t *t_row /* OUT */, struct vpa_err *err);

#endif
