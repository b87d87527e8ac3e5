/*
 * targets/fl_speaker.h - the federated vocal-classification system of
 * Granqvist et al. (Apple), "Improving on-device speaker verification using
 * federated learning with privacy", Interspeech 2020:
 *
 *   - PrivUnit2 and the scalar norm mechanism of Bhowmick et al. 2018,
 *     "Protection against reconstruction and its applications in private
 *     federated learning" (privunit.c);
 *   - the population of users with 520-dimensional trigger-phrase
 *     supervectors (26 MFCCs x 20 HMM-state means), a speaker identity and a
 *     private side-information class: simulated or imported (sim_supervec.c);
 *   - the target kind `fl_speaker_classifier` (fl_speaker.c): FedAvg training
 *     of the vocal classifier under four privacy regimes, and the speaker-
 *     embedding network with knowledge distillation; the attacks
 *     `fl_training`, `update_linkage` and `attribute_inference`
 *     (attacks/update_attacks.c) read the built target through this header.
 *
 * targets/README.md ("fl_speaker_classifier") documents the models, the
 * regimes and their accounting.  Matrices are row-major, shapes (rows, cols).
 */
#ifndef VPA_FL_SPEAKER_H
#define VPA_FL_SPEAKER_H

#include "base/base.h"
#include "learn/nn.h"
#include "targets/targets.h"

/* ---- PrivUnit2 (Bhowmick et al. 2018, Algorithm 1) ------------------------ */

/*
 * PrivUnit2 on the unit sphere of R^d (d >= 3).  With probability p the
 * output direction V is drawn uniformly from the cap {v : <v,u> >= gamma}
 * around the input u, else uniformly from its complement; the output is
 * V / m, where m = E[<V,u>] makes it unbiased (E[out] = u):
 *     m = K (p / q - (1 - p) / (1 - q)),
 *     K = (1 - gamma^2)^alpha / ((d - 1) 2^(d-2) B(alpha, alpha)),
 *     alpha = (d - 1) / 2,  q = P_uniform(<V,u> >= gamma) = I_{(1-gamma)/2}(alpha, alpha)
 * (the paper's eq. 15 written with q).  Epsilon, as the paper's Theorem 1:
 * eps = eps0 + eps_cap with p = e^eps0 / (1 + e^eps0) and eps_cap the bound of
 * eq. (16a) gamma <= (e^eps_cap - 1)/(e^eps_cap + 1) sqrt(pi / (2(d-1))), or
 * of eq. (16b) eps_cap = log(d)/2 + log 6 - (d-1)/2 log(1-gamma^2) + log gamma
 * when gamma >= sqrt(2/d).  The exact privacy loss of the cap choice,
 * log((1-q)/q), is reported beside it (never above the bound).
 */
struct vpa_privunit {
	size_t d;
	double eps;           /* eps0 + eps_cap */
	double eps0;          /* of the cap/complement coin */
	double eps_cap;       /* the paper's bound (16a)/(16b) for gamma */
	double eps_cap_exact; /* log((1 - q) / q) */
	double gamma;         /* cap offset in [0, 1) */
	double p;             /* probability of the cap */
	double log_q;         /* log P_uniform(<V,u> >= gamma) */
	double log_q1;        /* log (1 - q) */
	double m;             /* E[<V,u>] (> 0) */
	double scale;         /* 1 / m: the output norm */
};

/* Bound of eq. (16a)/(16b) for cap offset gamma; +inf when none applies. */
double vpa_privunit_cap_epsilon(double gamma, size_t d);
/* log P(<V,u> >= gamma) for V uniform on the sphere of R^d, gamma in [0, 1). */
double vpa_privunit_log_cap_mass(double gamma, size_t d);
/*
 * Parameters for a given gamma: eps0 = eps - eps_cap(gamma) must be > 0.
 * Errors (VPA_EINPUT): d < 3, eps <= 0, gamma outside [0,1), eps_cap >= eps.
 */
int vpa_privunit_init_gamma(struct vpa_privunit *pu, size_t d, double eps, double gamma,
			    struct vpa_err *err);
/* Parameters with the gamma that maximises m (smallest variance) for eps. */
int vpa_privunit_init(struct vpa_privunit *pu, size_t d, double eps, struct vpa_err *err);
/*
 * One release: u (d) must be a unit vector; out (d) gets V / m.  Draws from
 * rng (the t = <V,u> marginal by inverting the regularised incomplete beta,
 * then a uniform direction orthogonal to u).
 */
void vpa_privunit_apply(const struct vpa_privunit *pu, const double *u, double *out,
			struct vpa_rng *rng);

/*
 * The scalar mechanism for the norm (Bhowmick et al. 2018, ScalarDP): r in
 * [0, rmax] is rounded at random to J in {0..k} (unbiased: E[J] = k r /
 * rmax), J goes through k-ary randomised response (kept with probability
 * e^eps / (e^eps + k), else one of the other k values uniformly), and the
 * output is debiased: r_hat = (rmax / k) a (J_hat - b), a = (e^eps + k) /
 * (e^eps - 1), b = k (k + 1) / (2 (e^eps + k)), so E[r_hat] = r.  eps-DP.
 */
struct vpa_scalar_dp {
	double eps, rmax;
	unsigned k;
	double a, b;
	double var_max; /* the largest variance of r_hat over r in [0, rmax] */
};
/* k = 0 picks the k in 1..4096 with the smallest var_max.  Errors: eps or rmax <= 0. */
int vpa_scalar_dp_init(struct vpa_scalar_dp *s, double eps, double rmax, unsigned k,
		       struct vpa_err *err);
double vpa_scalar_dp_apply(const struct vpa_scalar_dp *s, double r, struct vpa_rng *rng);
/* Exact variance of r_hat for an input r (rounding + response). */
double vpa_scalar_dp_variance(const struct vpa_scalar_dp *s, double r);

/* ---- the population --------------------------------------------------------- */

#define VPA_FLS_MFCC 26
#define VPA_FLS_STATES 20
#define VPA_FLS_DIM (VPA_FLS_MFCC * VPA_FLS_STATES) /* supervector index = state*26 + mfcc */

struct vpa_fls_pop {
	size_t n_users, d, n_classes;
	size_t n_rows;     /* utterances */
	float *x;          /* (n_rows, d), owned; the rows of user u are off[u] .. off[u+1]-1 */
	size_t *off;       /* (n_users + 1), owned */
	uint32_t *cls;     /* (n_users) side-information class, owned */
	char **class_name; /* (n_classes), owned */
	char **user;       /* (n_users) ids, owned */
};
void vpa_fls_pop_release(struct vpa_fls_pop *p);

struct vpa_fls_sim_opts {
	size_t n_users;     /* 4000 */
	size_t n_utts;      /* utterances per user: 8 */
	size_t n_classes;   /* 6 */
	size_t spk_rank;    /* rank of the speaker subspace: 40 */
	double spk_scale;   /* per-dimension std of the speaker offset: 0.3 */
	double class_shift; /* per-dimension std of the class offsets: 0.12 */
	double noise;       /* per-dimension std within a speaker: 1 */
	uint64_t seed;
};
void vpa_fls_sim_opts_init(struct vpa_fls_sim_opts *o);
/*
 * x_{u,j} = mean + V y_u + class_shift * B[c_u] + noise * e_{u,j}, with the
 * global mean smooth across HMM states, V (520, R) of N(0, spk_scale^2 / R)
 * entries, y_u, e_{u,j} standard normal, B[c] standard normal, c_u uniform.
 */
int vpa_fls_simulate(const struct vpa_fls_sim_opts *o, struct vpa_fls_pop *out,
		     struct vpa_err *err);
/*
 * Import: vectors (Kaldi archive or .npy, see formats/embset.h), utt2user (two
 * columns `utt user`; for .npy in row order), labels (two columns `user
 * class`, any class tokens, numbered in sorted order).  Every user needs a
 * label.  Errors name the file and line.
 */
int vpa_fls_import(const char *vectors, const char *utt2user, const char *labels,
		   struct vpa_fls_pop *out, struct vpa_err *err);

/* ---- the privacy regimes ---------------------------------------------------- */

enum vpa_fls_regime {
	VPA_FLS_NONE = 0,
	VPA_FLS_LOCAL,         /* Gaussian on each update (analytic, sensitivity 2C) */
	VPA_FLS_CENTRAL,       /* Gaussian on the sum: std z C, z from the RDP accountant */
	VPA_FLS_CENTRAL_LOCAL, /* central + PrivUnit2 (direction) and scalar DP (norm) */
	VPA_FLS_N_REGIMES
};
extern const char *const vpa_fls_regime_names[VPA_FLS_N_REGIMES];

struct vpa_fls_privacy {
	enum vpa_fls_regime regime;
	double clip;          /* C */
	double delta;
	double sigma_local;   /* LOCAL: absolute std per coordinate */
	double z;             /* CENTRAL*: noise multiplier (std of the sum's noise / C) */
	double eps_local;     /* LOCAL, CENTRAL_LOCAL per release (pure eps for the latter); NAN
				 otherwise */
	double eps_local_run; /* LOCAL, CENTRAL_LOCAL: the run's, per user, composed over the
				 user's participations (max_participations); NAN otherwise */
	double eps_central;   /* CENTRAL*: accountant's epsilon for the run as executed
				 (q = q_run); NAN otherwise */
	double rdp_order;     /* optimal order of the accountant (the run's) */
	double q_run;         /* CENTRAL*: cohort / training users the cohorts are drawn from */
	double eps_deploy;    /* CENTRAL* with a stated population: epsilon for
				 q_deploy = cohort / population; NAN otherwise */
	double q_deploy;      /* NAN without a stated population */
	struct vpa_privunit pu;  /* CENTRAL_LOCAL */
	struct vpa_scalar_dp sdp; /* CENTRAL_LOCAL */
	int skip_noise;       /* the documented fault `dp_fault: skip_noise`: no noise added
				 anywhere (local, central, PrivUnit2/scalar), every claim kept,
				 so that the audits can show they catch it */
};

/*
 * What leaves a device: upd (n) is clipped to C in place, then privatised as
 * the regime says (LOCAL: + N(0, sigma_local^2); CENTRAL_LOCAL: scalar DP of
 * the norm times PrivUnit2 of the direction; NONE, CENTRAL: clipped only).
 * Returns the norm before clipping.
 */
double vpa_fls_release(const struct vpa_fls_privacy *p, float *upd, size_t n,
		       struct vpa_rng *rng);

/* ---- the built target ------------------------------------------------------- */

struct vpa_fls_regime_res {
	enum vpa_fls_regime regime;
	struct vpa_fls_privacy priv;
	size_t n_curve;
	double *curve_round;  /* (n_curve) rounds completed (0 = initial model) */
	double *curve_acc;    /* (n_curve) test accuracy (utterance level) */
	double acc_final;
	double snr;           /* first central update; +inf for NONE */
	double first_norm;    /* ||mean clipped update|| of round 1 */
	double noise_norm;    /* ||noise|| of round 1 */
	struct vpa_nn *model; /* final global vocal classifier, owned */
	double sv_eer;        /* EER of the speaker network distilled from this model */
	float *emb;           /* (sv_test rows, emb_dim) distilled embeddings, owned */
	float *emb_train;     /* (sv_train rows, emb_dim), owned */
	double distill_secs, train_secs;
	size_t max_participations; /* most rounds any one training user took part in */
	/*
	 * The central audit's canary users (CENTRAL*, audit_canaries > 0; else
	 * n_canaries = 0 and the arrays NULL): canary c is included in the
	 * training population with probability 1/2 (canary_in[c]); an included
	 * canary takes part in each round with probability q_run (Poisson, as
	 * the accountant assumes) and sends clip * its own random unit direction;
	 * canary_score[c] = cos(direction c, final model - initial model), the
	 * membership score on the released model (Andrew et al. 2024).
	 */
	size_t n_canaries;
	unsigned char *canary_in;  /* (n_canaries), owned */
	double *canary_score;      /* (n_canaries), owned */
	size_t canary_rounds;      /* participations of the included canaries, summed */
};

struct vpa_fls_target {
	struct vpa_fls_pop pop;  /* standardised with the training users' statistics */
	int simulated;
	/* user splits (indices into pop) */
	size_t *train, n_train;  /* the FL population cohorts are drawn from */
	size_t *test, n_test;    /* vocal-classifier accuracy */
	size_t *sv_train, n_sv_train; /* server-side speakers for the embedding network */
	size_t *sv_test, n_sv_test;   /* speaker verification trials */
	/* the rows of the sv_train / sv_test users, gathered user after user:
	   user i of sv_train has rows sv_train_off[i] .. sv_train_off[i+1]-1 of
	   the embedding matrices below (same for sv_test) */
	size_t *sv_train_off, *sv_test_off;
	/* FL set-up */
	double population;       /* stated deployment population; NAN when not stated
				    (the noise is then calibrated for the run) */
	size_t cohort, rounds;
	double epsilon, delta, local_epsilon, norm_epsilon, clip;
	size_t hidden, local_epochs, local_batch;
	double local_lr, server_lr;
	size_t eval_every;
	size_t audit_canaries;   /* canary users of the central one-run audit */
	int skip_noise;          /* dp_fault: skip_noise */
	struct vpa_nn *init_model; /* the global model before round 1, owned */
	size_t n_params;
	uint64_t seed;
	/* the regimes built, in the scenario's order */
	struct vpa_fls_regime_res *reg;
	size_t n_reg;
	/* speaker verification */
	size_t emb_dim, n_enrol;
	double sv_eer_baseline;
	float *emb_baseline;       /* (sv_test rows, emb_dim), owned */
	float *emb_train_baseline; /* (sv_train rows, emb_dim), owned */
	size_t n_sv_trials_tar, n_sv_trials_non;
};

/*
 * One device's update: from the global parameters `global`, plain SGD with
 * learning rate lr on the rows x (n_rows, d) with class labels (n_rows),
 * `epochs` passes in order in batches of `batch` rows (0 = all rows);
 * out (n_params) = w_local - global.  work is a network of the vocal
 * classifier's topology (its parameters are overwritten).
 */
int vpa_fls_local_update(struct vpa_nn *work, const float *global, const float *x,
			 const uint32_t *labels, size_t n_rows, size_t epochs, size_t batch,
			 double lr, float *out, struct vpa_err *err);

/*
 * fn(arg, i, tid) for i in 0..n-1 on nth threads (tid in 0..nth-1; the
 * calling thread is tid 0).  Items are handed out in order; results must be
 * written per item so that they do not depend on the thread count.
 */
void vpa_fls_par_for(size_t n, size_t nth, void (*fn)(void *arg, size_t i, size_t tid), void *arg);

/*
 * Speaker verification (Granqvist et al. eq. 1): embeddings emb (rows, dim)
 * of n_spk speakers, speaker s owning rows off[s] .. off[s+1]-1; the first
 * n_enrol rows of each speaker enrol, the others are tests; every test is
 * scored against every speaker with the mean over the enrolment vectors of
 * the cosine similarity.  *eer: ROCCH-EER (metrics/metrics.h).  Errors
 * (VPA_EINPUT) when no speaker has a test row.
 */
int vpa_fls_sv_eer(const float *emb, size_t dim, const size_t *off, size_t n_spk, size_t n_enrol,
		   double *eer, size_t *n_tar, size_t *n_non, struct vpa_err *err);

/* The regime result of a target by regime, or NULL when not built. */
const struct vpa_fls_regime_res *vpa_fls_find(const struct vpa_fls_target *t,
					      enum vpa_fls_regime r);

/* Parse a regime name; -1 when unknown. */
int vpa_fls_regime_parse(const char *s);

extern const struct vpa_target_kind vpa_target_fl_speaker;

/* ---- the options of the kind (config/schema.h "Typed options"; filled by validation) ---- */

struct vpa_flspk_opts {
	const char *source;
	long long users;
	long long utterances;
	long long classes;
	long long speaker_rank;
	double speaker_scale;
	double class_shift;
	double noise;
	const char *vectors;
	const char *utt2user;
	const char *labels;
	long long test_users;
	long long sv_train_users;
	long long sv_test_users;
	double population;
	long long cohort;
	long long rounds;
	double epsilon;
	double delta;
	double local_epsilon;
	double norm_epsilon;
	double clip;
	long long hidden;
	long long local_epochs;
	long long local_batch;
	double local_lr;
	double server_lr;
	long long eval_every;
	struct vpa_strs regimes;
	int distill;
	long long emb_dim;
	long long emb_hidden;
	long long emb_epochs;
	double emb_lr;
	double temperature;
	const char *distill_loss;
	double distill_weight;
	long long enrol;
	long long audit_canaries;
	const char *dp_fault;
	struct vpa_mark audit_canaries_at, dp_fault_at;
	struct vpa_mark source_at, users_at, utterances_at, classes_at, speaker_rank_at,
		speaker_scale_at, class_shift_at, noise_at, vectors_at, utt2user_at,
		labels_at, test_users_at, sv_train_users_at, sv_test_users_at,
		population_at, cohort_at, rounds_at, epsilon_at, delta_at,
		local_epsilon_at, norm_epsilon_at, clip_at, hidden_at, local_epochs_at,
		local_batch_at, local_lr_at, server_lr_at, eval_every_at, regimes_at,
		distill_at, emb_dim_at, emb_hidden_at, emb_epochs_at, emb_lr_at,
		temperature_at, distill_loss_at, distill_weight_at, enrol_at;
};


#endif
