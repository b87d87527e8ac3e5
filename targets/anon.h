/*
 * targets/anon.h - anonymised speech: Affinity Propagation (apcluster.c),
 * the x-vector anonymiser of the VoicePrivacy baseline with the COMPRISE
 * D2.3 design choices (anonymiser.c), the generative simulator of x-vectors
 * and of their anonymised counterparts (sim_speech.c), and the built target
 * of kind `anonymised_speech` (anon_speech.c and the files of
 * targets/anon_build.h) that the `linkage`, `identification` and `slicing`
 * attacks read.
 *
 * targets/README.md documents the simulation model and the anonymiser.
 * Matrices are row-major double, shapes written (rows, cols).
 */
#ifndef VPA_ANON_H
#define VPA_ANON_H

#include "base/base.h"
#include "formats/embset.h"
#include "embed/embed.h"
#include "learn/plda.h"
#include "targets/targets.h"

/* ---- Affinity Propagation (Frey & Dueck, Science 2007) ------------------- */

struct vpa_ap_opts {
	double damping;     /* lambda in [0.5, 1): new = lambda old + (1-lambda) update (0.5) */
	int max_iter;       /* 200 */
	int conv_iter;      /* stop when the exemplar set is unchanged this many iterations (15) */
	int pref_median;    /* 1: preference = median of the off-diagonal similarities (default);
			       0: use `preference` */
	double preference;
};
void vpa_ap_opts_init(struct vpa_ap_opts *o);

/*
 * Cluster n points given similarities s (n, n) (s[i*n+k]: how well k suits
 * i as its exemplar; the diagonal is ignored and replaced by the
 * preference).  Messages (responsibility r, availability a):
 *   r(i,k) = s(i,k) - max_{k' != k} [a(i,k') + s(i,k')]
 *   a(i,k) = min(0, r(k,k) + sum_{i' not in {i,k}} max(0, r(i',k)))   (i != k)
 *   a(k,k) = sum_{i' != k} max(0, r(i',k))
 * each damped.  Exemplars: k with r(k,k) + a(k,k) > 0; every other point
 * joins the exemplar of largest s(i,k).  When no exemplar emerges, the point
 * with the largest r(k,k) + a(k,k) is the single exemplar.
 * label (n) gets the cluster index of each point (clusters numbered in
 * increasing exemplar index), exemplar (n) the exemplar of each cluster
 * (first *n_clusters entries).  *iters: iterations run; *converged: 1 when
 * the exemplars were stable for conv_iter iterations.
 */
int vpa_apcluster(const double *s, size_t n, const struct vpa_ap_opts *o,
		  uint32_t *label /* OUT (n) */, uint32_t *exemplar /* OUT (n) */,
		  size_t *n_clusters /* OUT */, int *iters /* OUT, may be NULL */,
		  int *converged /* OUT, may be NULL */, struct vpa_err *err);

/* ---- the anonymiser ------------------------------------------------------- */

enum vpa_anon_distance { VPA_ANON_COSINE = 0, VPA_ANON_PLDA = 1 };
enum vpa_anon_proximity {
	VPA_ANON_RANDOM = 0, VPA_ANON_NEAR, VPA_ANON_FAR, VPA_ANON_DENSE, VPA_ANON_SPARSE
};
enum vpa_anon_gender { VPA_ANON_SAME = 0, VPA_ANON_OPPOSITE, VPA_ANON_GRANDOM };
enum vpa_anon_assign { VPA_ANON_SPEAKER = 0, VPA_ANON_UTTERANCE };

struct vpa_anon_cfg {
	int distance;   /* enum vpa_anon_distance (plda) */
	int proximity;  /* enum vpa_anon_proximity (far: the VPC baseline) */
	int gender;     /* enum vpa_anon_gender (same) */
	int assignment; /* enum vpa_anon_assign (speaker) */
	size_t n;       /* N candidates kept by near/far (200) */
	size_t n_star;  /* N* averaged into a pseudo-speaker (100) */
	struct vpa_ap_opts ap;
};
void vpa_anon_cfg_init(struct vpa_anon_cfg *c);
/* Names <-> values ("cosine", "plda", "random", "near", ...); -1 when unknown. */
int vpa_anon_parse(const char *what, const char *name);
const char *vpa_anon_name(const char *what, int value); /* what: distance|proximity|gender|assignment */

/*
 * A prepared anonymiser: the pool's speaker-level x-vectors (the mean of
 * each pool speaker's utterances, metrics/README.md), split by gender, the PLDA
 * back-end for the `plda` distance (trained on the pool's utterances, as the
 * VPC baseline trains its selection PLDA on the pool), and for dense/sparse
 * the Affinity Propagation clusters of each gender's pool (similarity =
 * minus the distance).  Errors: pool speakers with no gender, an empty pool
 * of a gender the choices need ("the pool has no female speaker"), N*
 * greater than N, a pool of one gender smaller than N for near/far.
 * Owned pointer; free with vpa_anonymiser_free.
 */
struct vpa_anonymiser;
struct vpa_anonymiser *vpa_anonymiser_new(const struct vpa_embset *pool,
					  const struct vpa_anon_cfg *cfg, struct vpa_err *err);
void vpa_anonymiser_free(struct vpa_anonymiser *a);
/* AP results of one pool gender ('m' or 'f') after vpa_anonymiser_new (dense/sparse only). */
size_t vpa_anonymiser_clusters(const struct vpa_anonymiser *a, char gender,
			       const uint32_t **label /* OUT */, size_t *n_pool /* OUT */);

/* Pseudo-speakers of a source set. */
struct vpa_anon_result {
	size_t n_pseudo, d;
	double *pseudo;      /* (n_pseudo, d), owned: the averaged pool vectors, not normalised */
	char **id;           /* (n_pseudo) owned: the source speaker (speaker level) or utterance id */
	char *gender;        /* (n_pseudo) pool gender used, owned */
	uint32_t *of_utt;    /* (src n) pseudo-speaker index of each source utterance, owned */
};
void vpa_anon_result_release(struct vpa_anon_result *r);

/*
 * Anonymise src: for every source speaker (speaker level: its mean vector)
 * or utterance (utterance level), pick the pool gender (same / opposite /
 * coin flip), rank the pool of that gender by distance (cosine: 1 - cos on
 * the raw vectors, one GEMM; plda: minus the LLR with the source as the
 * enrolment, one GEMM), choose N* candidates by the proximity rule and
 * average them.  Randomness: one stream per source, vpa_rng_split(seed,
 * "anon/STREAM/ID"), so results depend on neither order nor threads.
 * Errors: dimension mismatch with the pool, a source speaker with no gender
 * when the gender rule needs it.
 */
int vpa_anonymise(const struct vpa_anonymiser *a, const struct vpa_embset *src, uint64_t seed,
		  const char *stream, struct vpa_anon_result *out /* OUT */, struct vpa_err *err);

/* Write the pseudo-speakers as a Kaldi text archive `id  [ v1 ... ]` (%.9g). */
int vpa_anon_write_ark(const struct vpa_anon_result *r, const char *path, struct vpa_err *err);

/* ---- the simulator (sim_speech.c) ----------------------------------------- */

/*
 * x = m + g(gender) + V y_spk + s(dur) (U z_utt + sigma_e e_utt),
 * s(dur) = sqrt(1 + tau / dur); anonymised:
 * x~ = c + G (p - c) + leakage V y_spk + C w_utt + s(dur) (U z~_utt + sigma_e e~_utt),
 * c = m + g(gender of p), G = synth_gain.
 * targets/README.md gives every parameter and default.
 */
struct vpa_sim_cfg {
	size_t dim;          /* d (256) */
	size_t spk_rank;     /* columns of V (150) */
	size_t utt_rank;     /* columns of U (100) */
	size_t synth_rank;   /* columns of C (8) */
	double spk_scale;    /* speaker std along V's leading direction (0.35) */
	double spk_decay;    /* ratio of V's last to first column scale (0.3) */
	double utt_scale;    /* std of U's entries times sqrt(d) (0.6) */
	double noise;        /* sigma_e (0.25) */
	double gender_sep;   /* |g_m - g_f| (4.0) */
	double tau;          /* duration constant in seconds (4) */
	double dur_mean;     /* median utterance duration, log-normal (8 s) */
	double dur_sigma;    /* log-normal sigma (0.5); clipped to [1, 30] s */
	double leakage;      /* residual of the original speaker in anonymised speech (0.1) */
	double synth_noise;  /* std of the synthesiser channel C w (2) */
	double synth_gain;   /* G: the synthesised voice's deviation from its gender's mean
				voice is G times the pseudo-speaker's (12) */
};
void vpa_sim_cfg_init(struct vpa_sim_cfg *c);

struct vpa_sim; /* the drawn model (m, g, V, U, C) */
struct vpa_sim *vpa_sim_new(const struct vpa_sim_cfg *c, uint64_t seed);
void vpa_sim_free(struct vpa_sim *s);
size_t vpa_sim_dim(const struct vpa_sim *s);

/* Latent speaker factors of speaker id (deterministic in the id and seed). */
void vpa_sim_speaker(const struct vpa_sim *s, const char *spk, double *y /* OUT (spk_rank) */);
/* A duration for utterance id (log-normal, deterministic in the id). */
double vpa_sim_duration(const struct vpa_sim *s, const char *utt);
/*
 * One original utterance embedding (x, d values) of a speaker with latent
 * y and gender, of duration dur.  The utterance noise is drawn from the
 * stream named by utt, so the same utterance cut to another duration keeps
 * its draws and only their scale s(dur) changes (slicing).
 */
void vpa_sim_utterance(const struct vpa_sim *s, const double *y, char gender, double dur,
		       const char *utt, double *x /* OUT (d) */);
/* The anonymised version given the pseudo-speaker p (d values). */
void vpa_sim_anon_utterance(const struct vpa_sim *s, const double *y, const double *p,
			    char pseudo_gender, double dur, const char *utt, double *x /* OUT (d) */);
/* (utt names the synthesis: "TAG/UTT", so two syntheses of one utterance differ.) */

/*
 * A set of n_spk speakers ("PREFIX-s0001", ...) with utt_per_spk utterances
 * each ("PREFIX-s0001-u001"), genders alternating f, m, durations from
 * the duration model.  *out initialised and empty.
 */
void vpa_sim_make_set(const struct vpa_sim *s, const char *prefix, size_t n_spk,
		      size_t utt_per_spk, struct vpa_embset *out /* OUT */);
/*
 * The anonymised counterpart of src (same ids, speakers, genders,
 * durations): utterance i gets pseudo-speaker r->of_utt[i].  dur_cap > 0
 * cuts every utterance to at most dur_cap seconds (slicing); also for
 * vpa_sim_remake (the original set re-drawn at the capped durations).
 */
void vpa_sim_anon_set(const struct vpa_sim *s, const struct vpa_embset *src,
		      const struct vpa_anon_result *r, double dur_cap, const char *tag,
		      struct vpa_embset *out /* OUT */);
void vpa_sim_remake(const struct vpa_sim *s, const struct vpa_embset *src, double dur_cap,
		    struct vpa_embset *out /* OUT */);

/* ---- the built target (anon_speech.c, its builds: targets/anon_build.h) ---- */

/*
 * Trials: enrolment speaker e[i] (index into enroll's speakers, the same
 * speaker ids in every enrolment variant) against test row t[i] (into trial,
 * the same rows in trial_anon).
 */
struct vpa_anon_trials {
	size_t n;
	uint32_t *e, *t;      /* (n) each, owned */
	unsigned char *tar;   /* (n), owned */
};

struct vpa_anon_target {
	int simulated;
	struct vpa_embset train, train_anon;     /* train_anon empty when absent */
	struct vpa_embset enroll;                /* original enrolment */
	struct vpa_embset enroll_anon;           /* anonymised by the attacker (own draws), or empty */
	struct vpa_embset enroll_informed;       /* anonymised with the trials' pseudo-speakers, or empty */
	struct vpa_embset trial, trial_anon;     /* trial_anon rows align with trial rows */
	/* source audio: enrolment / trials embedded by ASV_eval^anon (semi-informed), or empty */
	struct vpa_embset enroll_semi, trial_semi;
	struct vpa_anon_trials trials;
	/* identification population: extra enrolment speakers (may be empty) */
	struct vpa_embset pop, pop_anon, pop_informed;
	/* simulate only (else NULL): for slicing */
	struct vpa_sim *sim;
	struct vpa_anon_result trial_pseudo;     /* the user's pseudo-speakers of the trial set */
	struct vpa_backend_cfg backend;          /* the attacker's back-end recipe */
	/* import with `extractor:` (else NULL): the ONNX extractor, for sets given as audio */
	struct vpa_embedder *extractor;
	struct vpa_embed_opts extractor_opts;    /* its options (strings borrowed from the scenario) */
	char *trials_name;                       /* vpa_anon_trials_name of the target, owned */
};

extern const struct vpa_target_kind vpa_target_anonymised_speech;

/* The options of the kind and its maps (below, "the options of the kind"). */
struct vpa_anon_opts;
struct vpa_anon_audio_opts;
struct vpa_anon_onnx_opts;

/* source: audio (targets/anon_audio.c): the `audio:` schema and the build */
extern const struct vpa_schema vpa_anon_audio_schema;
extern const struct vpa_schema vpa_anon_extractor_schema;
int vpa_anon_build_audio(struct vpa_run_ctx *ctx, const struct vpa_anon_audio_opts *au,
			 struct vpa_target *t, struct vpa_anon_target *a, struct vpa_err *err);
/* The cross-key checks of `audio:` (its ONNX extractors loaded, `semi_informed:
 * finetune` without a C-trained ASV_eval refused). */
int vpa_anon_audio_validate(const struct vpa_kind_ctx *ctx, const struct vpa_anon_audio_opts *au,
			    struct vpa_err *err);
/*
 * The counts of the list keys agree: `trial_anon` has one directory per
 * `trial` directory, `hyp`/`hyp_anon` one file per trial directory (one
 * without `trial`: the synthetic corpus), and when `trial` lists several
 * directories without `trials`, every one of them has a `trials` file or
 * none has.  Errors located at the key's node.
 */
int vpa_anon_audio_validate_lists(const struct vpa_kind_ctx *ctx,
				  const struct vpa_anon_audio_opts *au, struct vpa_err *err);
/*
 * The trials files of `audio:` (relative to the scenario's folder): `trials`,
 * else each listed `trial` directory's `trials` file when `trial` lists
 * several directories that have one, else none (*n = 0: every same-gender
 * pair).  dir: the scenario's folder.  Free with vpa_anon_audio_trials_files_free.
 */
char **vpa_anon_audio_trials_files(const char *dir, const struct vpa_anon_audio_opts *au,
				   size_t *n);
void vpa_anon_audio_trials_files_free(char **files, size_t n);

/* The ONNX extractor mapping (`import.extractor`, `audio.onnx`, `audio.onnx_anon`)
 * and its loading: model checks, operators, the input against the front-end;
 * errors located at the mapping's values (targets/anon_onnx.c). */
extern const struct vpa_schema vpa_anon_onnx_schema;
int vpa_anon_onnx_new(const char *file, const char *dir, const struct vpa_anon_onnx_opts *ex,
		      int threads, struct vpa_embed_opts *o, struct vpa_embedder **out,
		      struct vpa_err *err);
/* The sample rate ex's front-end reads (its options only, the model not
 * loaded): what validate checks audio sets against. */
int vpa_anon_onnx_rate(const char *file, const struct vpa_anon_onnx_opts *ex, double *rate,
		       struct vpa_err *err);

/*
 * The name of the target's trials list in per-gender record names
 * (targets/anon_gender.c), from `import.trials` / `audio.trials`, else from
 * the directories of a list `audio.trial`: each path's file name (for a file
 * named `trials`, its folder's name: libri_dev_trials_f/trials gives
 * libri_dev_trials_f) without a trailing _f or _m (VoicePrivacy trials_f);
 * several paths give their common name, else their longest common prefix
 * without trailing '_' (libri_dev_trials_f and libri_dev_trials_m give
 * libri_dev_trials); "trials" when nothing is left.  Caller frees.
 */
char *vpa_anon_trials_name(const struct vpa_anon_opts *o);

/* Same-gender trials of every enrolment speaker against every test row
 * (targets/anon_sets.c). */
void vpa_anon_make_trials(const struct vpa_embset *enroll, const struct vpa_embset *trial,
			  struct vpa_anon_trials *out /* OUT */);
void vpa_anon_trials_release(struct vpa_anon_trials *t);


/* ---- helpers of attacks/linkage_shared.c, shared by linkage, identify, slicing */

/* The attackers (COMPRISE D2.3 4.2.1, VoicePrivacy 2020), in this order. */
enum { VPA_ATK_BASELINE, VPA_ATK_IGNORANT, VPA_ATK_LAZY, VPA_ATK_SEMI, VPA_ATK_INFORMED,
       VPA_ATK_N };
extern const char *const vpa_attacker_names[VPA_ATK_N]; /* "baseline", ... "informed" */
/* The sets attacker k works on: its enrolment speakers, its extra population
 * speakers (identification) and its test utterances, with their role names;
 * anon_backend = 1 when its back-end is trained on train_anon. */
struct vpa_attacker_sets {
	const struct vpa_embset *enroll, *pop, *test;
	const char *enroll_name, *pop_name, *test_name;
	int anon_backend;
};
void vpa_linkage_attacker_sets(const struct vpa_anon_target *a, int k,
			       struct vpa_attacker_sets *out /* OUT */);
/* The score set of the trials tr from the score matrix S (enroll->n_spk, nt)
 * (ids: enrolment speakers, test utterances); out released with vpa_trials_release. */
void vpa_linkage_make_trials(const struct vpa_anon_trials *tr, const double *S, size_t nt,
			     const struct vpa_embset *enroll, const struct vpa_embset *test,
			     struct vpa_trials *out /* OUT */);

/* D_diag of the VoicePrivacy voice similarity matrix of es under back-end b
 * (attacks/linkage_shared.c documents it); NAN when undefined. */
double vpa_linkage_ddiag(const struct vpa_backend *b, const struct vpa_embset *es);
/* vpa_backend_train with `what` named in the error; NULL on error. */
struct vpa_backend *vpa_linkage_backend(const struct vpa_embset *train,
					const struct vpa_backend_cfg *cfg, const char *what,
					struct vpa_err *err);

/* ---- identification on a score matrix (attacks/ident_rank.c) -------------- */

/*
 * A score matrix S (n_rows population speakers, n_t probes), row-major
 * float, with truth[t] the row of probe t's speaker, prepared for many
 * population subsets: the probes' target scores sorted, and for every cell
 * its position among the distinct target scores (bin 2j+1: equal to the
 * j-th distinct target score, bin 2j: between the (j-1)-th and the j-th), so
 * a subset's ROCCH-EER and Cllr_min come from a PAV fit of n_t target scores
 * against at most 2 n_t + 1 weighted non-target groups, exactly as on the
 * full sorted score set (both depend on the order of the scores only).
 */
struct vpa_ident_matrix {
	const float *S;          /* (n_rows, n_t), borrowed */
	size_t n_rows, n_t;
	const uint32_t *truth;   /* (n_t), borrowed */
	double *tar;             /* (n_t) target scores sorted ascending, owned */
	double *rep;             /* (n_bins) a score inside each bin, ascending, owned */
	size_t n_bins;
	uint32_t *bin;           /* (n_rows, n_t) bin of each cell, owned */
	float *ttrue;            /* (n_t) each probe's target score, owned */
	float *rmin, *rmax;      /* (n_rows) extremes of each row's non-target cells, owned */
	unsigned char *has_tar;  /* (n_rows) 1 when the row is some probe's speaker, owned */
};
/* Errors: truth out of range, a non-finite score. */
int vpa_ident_prepare(const float *S, size_t n_rows, size_t n_t, const uint32_t *truth,
		      struct vpa_ident_matrix *out /* OUT */, struct vpa_err *err);
/* The same, the per-cell work split over `threads` threads. */
int vpa_ident_prepare_mt(const float *S, size_t n_rows, size_t n_t, const uint32_t *truth,
			 int threads, struct vpa_ident_matrix *out /* OUT */, struct vpa_err *err);
void vpa_ident_matrix_release(struct vpa_ident_matrix *m);

struct vpa_ident_eval {
	size_t population, n_target, n_nontarget;
	double eer, cllr_min;         /* open set: every probe against every population speaker */
	double linkability;           /* NAN when undefined (fewer than 10 probes) */
	double linkability_hist;      /* vpa_linkability dsys_hist; NAN when undefined or
					 when the default rule gives fewer than 5 bins (the
					 per-bin extremes cannot place finer bins) */
	size_t link_bins, link_bins_mated; /* linkability bins, those with targets */
	double mean_rank, mean_norm_rank, chance_rank; /* closed set, vpa_rank per probe */
	double top1, top5, top10, topk;                /* fraction of probes with rank <= k */
};
/*
 * Evaluate the population rows[0..n) (distinct row indices that include
 * every probe's true row): open-set ROCCH-EER, Cllr_min and linkability
 * (omega, bins as vpa_linkability) of all probe x population trials, and the
 * closed-set rank of each probe's speaker among the population (as
 * vpa_rank: 1 + #higher + #tied / 2), its mean, mean / population, the
 * chance rank (population + 1) / 2 and top-1/5/10/k precision.  One pass
 * over the subset's cells: PAV runs on the gap counts (above); linkability
 * runs vpa_linkability on the targets and, per linkability bin (the same
 * numpy linspace edges it computes from the subset's extremes), the
 * smallest and the largest non-target score of the bin weighted by the bin's
 * count, which gives it the same extremes, edges and bin counts; ranks are
 * counted row by row.  Errors: a true row missing from rows, no non-target
 * trial.
 */
int vpa_ident_subset(const struct vpa_ident_matrix *m, const uint32_t *rows, size_t n, size_t k,
		     double omega, size_t bins, struct vpa_ident_eval *out /* OUT */,
		     struct vpa_err *err);

/* ---- the options of the kind (config/schema.h "Typed options"; filled by validation) ---- */

struct vpa_anon_extractor_opts {
	const char *features;
	long long num_mel_bins;
	const char *cmvn;
	int vad;
	const char *architecture;
	long long hidden;
	long long channels;
	long long res2_scale;
	long long emb_dim;
	const char *loss;
	double margin;
	double scale;
	long long epochs;
	long long batch;
	long long shards;
	long long chunk;
	double lr;
	const char *semi_informed;
	struct vpa_mark features_at, num_mel_bins_at, cmvn_at, vad_at, architecture_at,
		hidden_at, channels_at, res2_scale_at, emb_dim_at, loss_at, margin_at,
		scale_at, epochs_at, batch_at, shards_at, chunk_at, lr_at, semi_informed_at;
	/* saved and reused extractors (issue 31.9, targets/anon_extractor_io.h) */
	const char *from, *from_anon, *save;
	int autosave; /* no `save`: write them to OUT/extractors (default) */
	struct vpa_mark from_at, from_anon_at, save_at, autosave_at;
};

struct vpa_anon_synth_opts {
	long long speakers;
	long long utts;
	const char *brown;
	struct vpa_mark speakers_at, utts_at, brown_at;
};

struct vpa_anon_anonymise_opts {
	const char *method;
	double low;
	double high;
	const char *train_level;
	struct vpa_mark method_at, low_at, high_at, train_level_at;
};

struct vpa_anon_onnx_opts {
	const char *model;
	const char *features;
	struct vpa_strs options;
	int cmn;
	long long chunk;
	const char *layout;
	const char *input;
	const char *input_name;
	const char *output;
	struct vpa_mark model_at, features_at, options_at, cmn_at, chunk_at, layout_at,
		input_at, output_at, input_name_at;
};

/* `audio: ser:` (targets/anon_ser.c, issue 30): an utterance classifier (the
 * VPC's speech emotion recogniser) on a labelled set and its anonymised copy */
struct vpa_anon_ser_opts {
	const char *model, *folds, *labels, *utt2label, *utt2label_anon, *data, *data_anon;
	const char *input_kind;
	struct vpa_strs options;
	int cmn;
	const char *input, *output;
	struct vpa_mark model_at, folds_at, labels_at, utt2label_at, utt2label_anon_at, data_at,
		data_anon_at, input_kind_at, options_at, cmn_at, input_at, output_at;
};
extern const struct vpa_schema vpa_anon_ser_schema;
int vpa_anon_ser_validate(const struct vpa_kind_ctx *ctx, const struct vpa_anon_ser_opts *s,
			  struct vpa_mark s_at, struct vpa_err *err);
/* Run it on data and data_anon; info gets "ser" (see anon_ser.c). */
int vpa_anon_ser_run(const char *file, const char *dir, int threads,
		     const struct vpa_anon_ser_opts *s, struct vpa_json *info, struct vpa_err *err);
/* One classified set as JSON: n, uar, accuracy, recall {LABEL}, support {LABEL},
 * confusion [[...]] (rows true class, columns answer), uar_macro; with folds also
 * folds, uar_folds, recall_folds {LABEL}; also `vpaudit classify --json`. */
struct vpa_cls_run;
struct vpa_cls_metrics;
struct vpa_json *vpa_anon_cls_json(const struct vpa_cls_run *r, const struct vpa_cls_metrics *m);
/* uar_folds of such a set (the VPC's per-speaker-fold UAR) when present, else uar */
double vpa_anon_cls_uar(const struct vpa_json *set);
/* `audio.asr`: the recogniser vpaudit runs on the trial sets (targets/anon_asr.c).  A mapping
 * with `recogniser` naming the kind, so that another recogniser adds its own keys. */
struct vpa_anon_asr_opts {
	const char *recogniser; /* "pocketsphinx" | "onnx" */
	const char *model;      /* pocketsphinx: its model folder, NULL: Debian's
				 * pocketsphinx-en-us; onnx: the ONNX CTC model (required) */
	const char *tokens;     /* onnx: line k = output index k (required) */
	long long blank;        /* onnx: index of the CTC blank */
	const char *delimiter;  /* onnx: word delimiter token ("sentencepiece", "none") */
	const char *input;      /* onnx: "waveform" | "features" */
	const char *layout;     /* onnx, features input: "btf" | "bft" */
	int wave_norm;          /* onnx, waveform input: zero mean, unit variance */
	struct vpa_mark recogniser_at, model_at, tokens_at, blank_at, delimiter_at, input_at,
		layout_at, wave_norm_at;
};
extern const struct vpa_schema vpa_anon_asr_schema;
struct vpa_run_ctx;
struct vpa_json;
/* validate: the model folder's files, `asr` not with `hyp`/`hyp_anon`. */
int vpa_anon_asr_validate(const struct vpa_kind_ctx *ctx, const struct vpa_anon_audio_opts *au,
			  struct vpa_err *err);
/*
 * Run the recogniser on trial (and trial_anon when not NULL), score each against trial's
 * `text` as the `hyp` files are scored (wer_normalise, wer_strict) and set o's "wer_orig" /
 * "wer_anon" with the recogniser named; speakers (speakers.txt of the built-in synthetic
 * corpus, or NULL) adds the WER per voice family (espeak-ng, flite).
 */
int vpa_anon_asr_wer(const struct vpa_run_ctx *ctx, const struct vpa_anon_audio_opts *au,
		     const char *trial, const char *trial_anon, const char *speakers,
		     struct vpa_json *o, struct vpa_err *err);

struct vpa_anon_audio_opts {
	struct vpa_anon_synth_opts synthetic;
	struct vpa_anon_anonymise_opts anonymise;
	const char *train;
	const char *train_anon;
	const char *enroll;
	const char *enroll_anon;
	struct vpa_strs trial;
	struct vpa_strs trial_anon;
	const char *enroll_informed;
	const char *enrolls;
	struct vpa_strs trials;
	struct vpa_strs hyp;
	struct vpa_strs hyp_anon;
	int rho_f0;
	const char *wer_normalise;
	int wer_strict;
	const char *level;
	struct vpa_anon_extractor_opts extractor;
	struct vpa_anon_onnx_opts onnx;
	struct vpa_anon_onnx_opts onnx_anon;
	struct vpa_anon_ser_opts ser;
	struct vpa_mark ser_at;
	struct vpa_anon_asr_opts asr;
	struct vpa_mark asr_at;
	struct vpa_mark synthetic_at, anonymise_at, train_at, train_anon_at, enroll_at,
		enroll_anon_at, trial_at, trial_anon_at, enroll_informed_at, enrolls_at,
		trials_at, hyp_at, hyp_anon_at, rho_f0_at, level_at, extractor_at, onnx_at,
		onnx_anon_at, wer_normalise_at, wer_strict_at;
};

struct vpa_anon_anonymiser_opts {
	const char *distance;
	const char *proximity;
	const char *gender;
	const char *assignment;
	long long n;
	long long n_star;
	double ap_damping;
	long long ap_max_iter;
	long long ap_conv_iter;
	const char *pseudo_out;
	struct vpa_mark distance_at, proximity_at, gender_at, assignment_at, n_at,
		n_star_at, ap_damping_at, ap_max_iter_at, ap_conv_iter_at, pseudo_out_at;
};

struct vpa_anon_backend_opts {
	long long lda_dim;
	const char *scoring;
	int length_norm;
	int plda_normalize_length;
	long long em_iters;
	struct vpa_mark lda_dim_at, scoring_at, length_norm_at, plda_normalize_length_at,
		em_iters_at;
};

struct vpa_anon_sim_opts {
	long long dim;
	long long spk_rank;
	long long utt_rank;
	long long synth_rank;
	double spk_scale;
	double spk_decay;
	double utt_scale;
	double noise;
	double gender_sep;
	double tau;
	double dur_mean;
	double dur_sigma;
	double leakage;
	double synth_noise;
	double synth_gain;
	long long train_speakers;
	long long train_utts;
	long long pool_speakers;
	long long pool_utts;
	long long test_speakers;
	long long enroll_utts;
	long long trial_utts;
	long long population;
	struct vpa_mark dim_at, spk_rank_at, utt_rank_at, synth_rank_at, spk_scale_at,
		spk_decay_at, utt_scale_at, noise_at, gender_sep_at, tau_at, dur_mean_at,
		dur_sigma_at, leakage_at, synth_noise_at, synth_gain_at, train_speakers_at,
		train_utts_at, pool_speakers_at, pool_utts_at, test_speakers_at,
		enroll_utts_at, trial_utts_at, population_at;
};

struct vpa_anon_set_opts {
	const char *vectors;
	const char *audio;
	const char *ids;
	const char *utt2spk;
	const char *spk2gender;
	const char *utt2dur;
	struct vpa_mark vectors_at, audio_at, ids_at, utt2spk_at, spk2gender_at, utt2dur_at;
};

struct vpa_anon_import_opts {
	struct vpa_anon_onnx_opts extractor;
	const char *enrolls;
	const char *trials;
	struct vpa_mark extractor_at, enrolls_at, trials_at;
	/* the embedding sets (each written or not: its mark's line) */
	struct vpa_anon_set_opts train, train_anon, pool, enroll, enroll_anon, enroll_informed,
		trial, trial_anon, population, population_anon, population_informed;
	struct vpa_mark train_at, train_anon_at, pool_at, enroll_at, enroll_anon_at,
		enroll_informed_at, trial_at, trial_anon_at, population_at, population_anon_at,
		population_informed_at;
};

struct vpa_anon_opts {
	const char *source;
	struct vpa_anon_anonymiser_opts anonymiser;
	struct vpa_anon_backend_opts backend;
	struct vpa_anon_sim_opts simulate;
	struct vpa_anon_import_opts import;
	struct vpa_anon_audio_opts audio;
	struct vpa_mark source_at, anonymiser_at, backend_at, simulate_at, import_at,
		audio_at;
};


#endif
