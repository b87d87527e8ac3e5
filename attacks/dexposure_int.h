/*
 * attacks/dexposure_int.h - what the parts of the attack kind `d_exposure`
 * share (split from attacks/dexposure.c): attacks/dexposure.c (keys,
 * validation, subs, the run and its records and figures),
 * attacks/dexposure_metric.c (the metric on one model, records, imported
 * confidences) and attacks/dexposure_train.c (trained taggers: the canary
 * setup, the measurement, the training jobs).  Internal to the kind.  The
 * stairs go one way: dexposure.c calls dexposure_train.c and
 * dexposure_metric.c, dexposure_train.c calls dexposure_metric.c; the keys
 * stay in dexposure.c, and the others get what they need of the options as
 * struct vpa_dexp_opts.
 */
#ifndef VPA_DEXPOSURE_INT_H
#define VPA_DEXPOSURE_INT_H

#include "attacks/attacks.h"
#include "targets/tagger.h"

/* Training modes: without DP, DP-SGD per sentence, DP-SGD per user. */
enum { MODE_PLAIN, MODE_DP, MODE_DPUSER, N_MODES };

/* ---- the metric on one model (attacks/dexposure_metric.c) ------------------------ */

struct dexp {
	size_t k;                    /* classes */
	double per[VPA_TAG_N * 4], max[VPA_TAG_N * 4], exch[VPA_TAG_N * 4];
	double canary_conf[VPA_TAG_N * 4];
	size_t n_ref[VPA_TAG_N * 4];
	double mean, mean_max, mean_exch;
	/* the chance level measured on control words (trained taggers only):
	 * per class the mean d-exposure of the controls in the same model and
	 * context, their mean over classes, and the 90th percentiles (nearest
	 * rank) of the controls' label-class and mean d-exposure; NAN without
	 * controls */
	size_t n_ctrl;
	double chance[VPA_TAG_N * 4], mean_chance, label_p90, mean_p90;
};

int vpa_dexp_compute(const double *canary, const double *const *ref, const size_t *n_ref,
		     size_t k, struct dexp *out, struct vpa_err *err);
/* Nearest-rank quantile p of x (n > 0; sorts x). */
double vpa_dexp_quantile(double *x, size_t n, double p);
struct vpa_json *vpa_dexp_record(const char *attack, const char *sub, const struct dexp *d,
				 const char *const *cls_names, int label);
struct vpa_json *vpa_dexp_series(const char *name, const double *x, const double *y, size_t n);
struct vpa_json *vpa_dexp_lines(const char *id, const char *title, const char *xl,
				const char *yl);
/* The record `import` of an imported target's confidences. */
int vpa_dexp_run_import(struct vpa_run_ctx *ctx, const char *id, const struct vpa_target *t,
			struct vpa_attack_out *out, struct vpa_err *err);

/* ---- trained taggers (attacks/dexposure_train.c) ---------------------------------- */

struct setup {
	const struct vpa_tagger_target *tt;
	uint32_t canary;           /* vocabulary id */
	int label;
	uint32_t *ctx_ids, *ctx_lab; /* (len) the canary sentence */
	size_t len, slot;
	uint32_t *words;           /* (n_words) canary first, then every reference word,
				    * then the n_ctrl control words */
	size_t n_words, n_ctrl;
	uint8_t *word_cls;         /* (n_words) class of each reference word */
	size_t n_ref[VPA_TAG_N];
};

/* The buffers of one measurement (one per training run: runs go in parallel). */
struct scratch {
	double *probs;             /* (n_words + n_ctrl, VPA_TAG_N) */
	double *ref[VPA_TAG_N];    /* (n_ref[c]) */
	double *ctrl_label, *ctrl_mean; /* (n_ctrl) */
};

/* Per-epoch bookkeeping of one training run. */
struct run_log {
	struct setup *s;
	struct scratch sc;
	size_t n_ep;
	struct dexp *d;        /* (epochs) */
	double *acc, *test_loss, *train_loss; /* (epochs) */
	const size_t *test;
	size_t n_test;
};

/* One training run (a job of vpa_dist_jobs): runs are independent
 * (their own seeds, logs and scratch), so they are shared out to the run's
 * threads; the numbers do not depend on the thread count. */
struct tjob {
	struct vpa_tagger_cfg c;
	const size_t *sents;
	size_t n_sents;
	struct vpa_tagger_extra ex;
	struct run_log *l;
	struct vpa_tagger_stats *st;
	int rc;
	struct vpa_err err;
};

struct tshared {
	const struct vpa_tagger_data *d;
	struct tjob *jobs;
};

struct vpa_dexp_opts;
/* The canary, its sentence, the reference and control words from the
 * attack's options (label, canary, canary_min_count, context, controls). */
int vpa_dexp_setup_make(const struct vpa_tagger_target *tt, const struct vpa_dexp_opts *o,
			struct setup *s, struct vpa_json *info, struct vpa_err *err);
void vpa_dexp_setup_release(struct setup *s);
void vpa_dexp_log_alloc(struct run_log *l, struct setup *s, size_t epochs);
void vpa_dexp_log_free(struct run_log *l);
/* The job, pack and unpack functions of vpa_dist_jobs (arg: struct tshared). */
int vpa_dexp_train_job(void *arg, size_t i, struct vpa_err *e);
void vpa_dexp_train_pack(void *arg, size_t i, struct vpa_buf *b);
int vpa_dexp_train_unpack(void *arg, size_t i, const unsigned char *q, size_t len);

/* The one-run DP audit of one DP mode (attacks/dexposure_audit.c): trains a
 * tagger with c (the mode's settings) plus the inserted audit sentences and
 * pushes the record `dp-audit` / `dpuser-audit`. */
struct vpa_dexp_opts;
int vpa_dexp_audit(struct vpa_run_ctx *ctx, const char *id, const struct vpa_dexp_opts *o,
		   const struct setup *s, int mode, const struct vpa_tagger_cfg *c,
		   struct vpa_attack_out *out, struct vpa_err *err);

/* ---- the options of the kind (config/schema.h "Typed options"; filled by validation) ---- */

struct vpa_dexp_opts {
	const char *canary;
	long long canary_min_count;
	long long controls;
	const char *label;
	const char *context;
	struct vpa_strs repetitions;
	long long epochs;
	int epoch_table;
	int dp;
	double dp_noise_multiplier;
	double dp_target_epsilon;
	double dp_lr;
	long long dp_batch;
	long long dp_epochs;
	int dp_user;
	long long dp_user_sentences;
	long long dp_user_batch;
	int overfit;
	double overfit_fraction;
	long long overfit_epochs;
	struct vpa_strs overfit_repetitions;
	long long audit_canaries;
	double audit_alpha;
	const char *dp_fault;
	struct vpa_mark audit_canaries_at, audit_alpha_at, dp_fault_at;
	struct vpa_mark canary_at, canary_min_count_at, controls_at, label_at, context_at,
		repetitions_at, epochs_at, epoch_table_at, dp_at, dp_noise_multiplier_at,
		dp_target_epsilon_at, dp_lr_at, dp_batch_at, dp_epochs_at, dp_user_at,
		dp_user_sentences_at, dp_user_batch_at, overfit_at, overfit_fraction_at,
		overfit_epochs_at, overfit_repetitions_at;
};


#endif
