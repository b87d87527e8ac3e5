/*
 * attacks/linkage_int.h - shared by the attacks on anonymised speech:
 * attacks/linkage_shared.c (the attackers, their sets, trials, D_diag), used
 * by linkage.c, linkage_gender.c (the per-gender records, used by
 * linkage.c), identify.c and slicing.c.  targets/anon.h declares the rest of
 * the attackers' helpers.
 */
#ifndef VPA_LINKAGE_INT_H
#define VPA_LINKAGE_INT_H

#include "attacks/attacks.h"
#include "targets/anon.h"

/* The `attackers` list of an attack's options as a bit set (bit k: attacker
 * k, vpa_attacker_names); the table's default lists them all. */
unsigned vpa_linkage_attackers(const struct vpa_strs *attackers);
/*
 * Attack validation: an imported target must hold the sets each attacker of
 * `attackers` (written at attackers_at, line 0 when not) needs, a target of
 * audio its anonymised directories (or a built-in `anonymise:`).  Errors
 * blame the `attackers` list, else the attack (ctx->self).
 */
int vpa_linkage_check_sets(const struct vpa_kind_ctx *ctx, const struct vpa_strs *attackers,
			   struct vpa_mark attackers_at, const struct vpa_anon_opts *to,
			   struct vpa_err *err);

/* What G_VD per gender needs: the attacker's back-end, ASV_eval's back-end
 * and the original trials (for D_diag(M_oo)); baseline: G_VD = 0 by definition. */
struct vpa_linkage_gvd {
	const struct vpa_backend *b, *b_orig;
	const struct vpa_embset *trial;
	int baseline;
};

/*
 * The records ATTACKER/LIST_f and ATTACKER/LIST_m of one attacker: the trials
 * tr whose enrolment speaker (in e) is female / male, scored from S
 * (e->n_spk, te->n) against test set te, through vpa_record_from_scores
 * (no figures; the pooled record has them), with "trials": "LIST_f" and
 * "gender": "f" beside "metrics", and metrics.gvd when gv is not NULL.  A
 * gender without trials gives no record; one with no target or no
 * non-target trial gives a warning and no record.  No gender in e: a
 * warning, no record.
 */
int vpa_linkage_gender_records(struct vpa_run_ctx *ctx, const char *id, const char *attacker,
			       const char *list, const struct vpa_anon_trials *tr, const double *S,
			       const struct vpa_embset *e, const struct vpa_embset *te,
			       const struct vpa_linkage_gvd *gv, const struct vpa_eval_opts *o,
			       struct vpa_attack_out *out, struct vpa_err *err);

/*
 * pi_link and pi_sing (metrics/legal.c) of one attacker for conversations of
 * each length of g->len (0 in a grid: all the enrolment / test speakers),
 * the true enrolment of a test speaker from the target trials of tr:
 * {"level", "pi_link_interval", "pi_sing_interval", "min_speakers",
 *  "by_length": [{"L", "speakers", "excluded_speakers", "conversations",
 *  "sing_speakers", "sing_excluded_speakers", "pi_link": {"N'": {"value",
 *  "ci": [lo, hi], "chance"} | null}, "pi_sing": {"N": {"value", "ci",
 *  "baseline"} | null}}]} (null: the N is above the speakers, or no
 * conversation).  *pi_link0 / *pi_sing0: the first L's first grid value (the
 * gated metrics; NAN when null), *spk0: the first L's speakers.  Scored
 * with B: the enrolment speakers' means against the conversations.
 */
#define VPA_LEGAL_MIN_SPEAKERS 10 /* fewer test speakers: pi_link / pi_sing unreliable */
struct vpa_legal_grid {
	size_t link[32], sing[32], len[16];
	size_t n_link, n_sing, n_len;
	double level;
};
struct vpa_json *vpa_linkage_legal(const struct vpa_backend *B, const struct vpa_anon_trials *tr,
				   const struct vpa_embset *e, const struct vpa_embset *te,
				   const struct vpa_legal_grid *g,
				   double *pi_link0, double *pi_sing0, size_t *spk0,
				   struct vpa_err *err);

/* ---- the attribute attacker (linkage_infer.c, issue 29 item 4) ---- */

#include "learn/attr.h"
#include "formats/kaldi.h"

#define VPA_ATTR_SHRINKAGE 0.01 /* the classifier's covariance shrinkage */
/* Per-speaker labels: speaker id -> class (cls[], borrowed from the file's
 * list or static "f" / "m"). */
struct vpa_attr_labels {
	struct vpa_strmap map;
	const char **cls;
	size_t n_cls, labelled;
	struct vpa_kaldi_list list;
	const char *name; /* "gender" or the file as written */
};
/* The user's `spk label` file (shown: the path as written): a speaker with
 * two labels, or fewer than 2 classes, is an error naming FILE[:LINE]. */
int vpa_attr_labels_file(const char *path, const char *shown, struct vpa_attr_labels *out,
			 struct vpa_err *err);
/* Gender ('f', 'm') of every speaker of the sets that has one; classes f, m. */
void vpa_attr_labels_gender(const struct vpa_embset *const *sets, size_t n_sets,
			    struct vpa_attr_labels *out);
void vpa_attr_labels_release(struct vpa_attr_labels *l);

/* One attacker's classifier and its guesses for every test row. */
struct vpa_linkage_attr {
	struct vpa_attr_clf clf;
	uint32_t *truth, *pred; /* (te->n); truth UINT32_MAX: no label */
	char *gender;           /* (te->n) 'f', 'm' or 0 (unknown) */
	size_t train_utts, train_unlabelled_spk, test_unlabelled_spk;
};
/* Train on the labelled rows of `train` (through B's centering, LDA, length
 * norm) and guess every row of te; each row's gender from `genders`
 * (vpa_attr_labels_gender).  Errors: fewer than 2 classes among the
 * training speakers (one line naming the attribute and the set). */
int vpa_linkage_attr_fit(const struct vpa_backend *B, const struct vpa_embset *train,
			 const char *train_name, const struct vpa_embset *te,
			 const struct vpa_attr_labels *lab, const struct vpa_attr_labels *genders,
			 struct vpa_linkage_attr *out, struct vpa_err *err);
void vpa_linkage_attr_release(struct vpa_linkage_attr *a);
/*
 * The record's "inference" object for the test rows (of speakers of
 * `gender`, 0: all): {"attribute", "classes", "classifier", "trained_on",
 * "train_utterances", "train_unlabelled_speakers", "test_utterances",
 * "test_unlabelled_speakers", "level", "min_speakers", "test_speakers",
 * "majority_class", "accuracy": {"value", "ci", "chance"} | null,
 * "balanced_accuracy": {...} | null}; *acc / *bacc the values (NAN when
 * null); why: the reason they are unreliable ("" when they are not).
 */
struct vpa_json *vpa_linkage_attr_json(const struct vpa_linkage_attr *a,
				       const struct vpa_attr_labels *lab, const char *train_name,
				       const struct vpa_embset *te, char gender, double level,
				       double *acc, double *bacc, char *why, size_t whyn);

/* The figures "ID-pi-link" (pi_link against N', chance 1/N') and "ID-pi-sing"
 * (pi_sing against N, (1 - 1/N)^(N-1) and e^-1) from the pooled records
 * records[from..] (first conversation length), pushed to figures; none
 * without a numbered grid value (linkage_legal_fig.c). */
void vpa_linkage_legal_figures(const char *id, const char *target_id,
			       const struct vpa_json *records, size_t from,
			       struct vpa_json *figures);

#endif
