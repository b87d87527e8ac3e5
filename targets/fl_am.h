/*
 * targets/fl_am.h - federated-learning speaker-adapted acoustic models
 * (Tomashenko, Mdhaffar, Tommasi, Esteve, Bonastre, "Privacy attacks for
 * automatic speech recognition acoustic models in a federated learning
 * framework", ICASSP 2022): the target kind `fl_acoustic_models`
 * (targets/fl_am.c: keys, checks, build), the built target and its
 * activations (targets/fl_am_acts.c), its files: import and dumps
 * (targets/fl_am_files.c), ONNX models (targets/fl_am_onnx.c), its
 * simulator (targets/sim_am.c), and the footprint kernels shared by the
 * attacks `a1_footprint` (attacks/a1.c) and `a2_footprint` (attacks/a2.c).
 * The calls go one way: fl_am.c calls sim_am.c, fl_am_audio.c and
 * fl_am_files.c; sim_am.c and fl_am_audio.c call fl_am_train.c (the training
 * and personalisation they share); all call fl_am_acts.c (the helpers they
 * share live there, so the simulator does not call the kind back);
 * fl_am_files.c and fl_am_acts.c call fl_am_onnx.c, which calls none of them.
 *
 * A target is a global model W_g, personalised models W_s (each tagged with
 * its speaker and its partition Part-1 or Part-2) and an Indicator data set:
 * either the networks (struct vpa_nn, learn/nn.h) and the Indicator features,
 * or precomputed activations per model, hidden layer and Indicator utterance.
 * targets/README.md ("fl_acoustic_models") documents the simulation model and
 * the import layouts.
 */
#ifndef VPA_FL_AM_H
#define VPA_FL_AM_H

#include "base/base.h"
#include "audio/audio.h"
#include "learn/nn.h"
#include "onnx/onnx.h"
#include "targets/targets.h"

enum { VPA_FLAM_GLOBAL = 0, VPA_FLAM_PART1 = 1, VPA_FLAM_PART2 = 2 };

struct vpa_flam_model {
	char *id;            /* owned */
	uint32_t spk;        /* index into spk_id (global model: 0, unused) */
	int part;            /* VPA_FLAM_GLOBAL | PART1 | PART2 */
	struct vpa_nn *net;  /* owned; NULL when activations or ONNX models are imported */
	struct vpa_onnx_model *onnx; /* ONNX import (MODEL_DIR/ID.onnx): owned, else NULL */
	char *onnx_path;     /* ONNX import under MPI: onnx is NULL and the model is loaded
				from here by the rank whose job uses it (fl_am_onnx.c), owned */
	char *act_dir;       /* activations import: the model's folder, owned, else NULL */
	char *net_dir;       /* networks import under MPI: net is NULL and the model is loaded
				from here by the rank whose job uses it (base/dist.c), owned */
	double acc;          /* utility: frame accuracy on held-out data of its speaker (NAN: unknown) */
	double acc_global;   /* W_g's frame accuracy on the same data (NAN: unknown) */
	double update_norm;  /* ||W_s - W_g||_2 before clipping (NAN: unknown) */
	/* trained here: mean cross-entropy on its speaker's held-out utterances, and the
	   mean over the other Part-1/Part-2 speakers of it on theirs (NAN: unknown) */
	double loss_own, loss_other;
};

struct vpa_flam {
	struct vpa_flam_model global;     /* W_g */
	struct vpa_flam_model *models;    /* (n_models) personalised models, owned */
	size_t n_models;
	char **spk_id;                    /* (n_spk), owned */
	size_t n_spk;
	/* the Indicator set */
	size_t n_utt;
	char **utt_id;                    /* (n_utt), owned */
	size_t *off;                      /* (n_utt + 1) frame offsets, owned */
	float *x;                         /* (off[n_utt], in_dim) features, owned; NULL for
					     imported activations */
	size_t in_dim;
	/* hidden layers 1..n_layers: layer_at[h-1] = index of the network layer whose
	   output is hidden layer h (the last layer before the (h+1)-th affine layer) */
	size_t n_layers;
	size_t *layer_at;                 /* (n_layers), owned; NULL for imported activations */
	size_t *dim;                      /* (n_layers) width of each hidden layer, owned */
	char **layer_name;                /* ONNX import: (n_layers) value names, owned; else NULL */
	int onnx_bft;                     /* ONNX import: the input is (1, F, T) (else (1, T, F)) */
	/* local DP on the released updates (simulate) */
	double dp_clip, dp_noise, dp_delta, dp_epsilon; /* epsilon per release; 0/INF when off */
	/* the run's epsilon per speaker: a speaker with k released models (k = 2 for the
	   `two_models` fraction) composes k Gaussian releases, which is one Gaussian
	   mechanism of sensitivity C sqrt(k); the largest k of the run; INF when off */
	double dp_epsilon_speaker;
	size_t dp_releases_max; /* largest number of models released by one speaker */
	/* the DP the models claim (vpa_flam_dp_account): VPA_FLAM_DP_NONE, LOCAL (each
	   released update clipped to C and noised, simulated or an import's dp_info) or
	   DPSGD (an import's dp_info: central DP-SGD, example-level) */
	int dp_mech;
	double dp_steps, dp_q;      /* DPSGD only */
	double dp_epsilon_rdp;      /* `epsilon` again by the RDP accountant */
	const char *dp_accountant;  /* the accountant of `epsilon` (static string) */
	/* LOCAL: per release and per speaker under replacement (one speaker's data
	   replaced by another's: the clipped updates differ by up to 2C), the
	   neighbouring relation of the A1 audit (attacks/a1.c) */
	double dp_epsilon_replace, dp_epsilon_replace_speaker;
	int dp_skip_noise;          /* the fault switch `dp: {fault: skip_noise}` was on */
};

enum { VPA_FLAM_DP_NONE = 0, VPA_FLAM_DP_LOCAL = 1, VPA_FLAM_DP_DPSGD = 2 };

/*
 * Fill t's DP accounting from t->dp_mech, dp_clip, dp_noise, dp_delta (and
 * dp_steps, dp_q for DPSGD; dp_releases_max for LOCAL): LOCAL by the analytic
 * Gaussian mechanism (exact for one Gaussian release; k releases of one speaker
 * are one Gaussian mechanism of sensitivity C sqrt(k)) with RDP beside it
 * (q = 1, k steps); DPSGD by the PLD accountant (pessimistic, the tightest
 * valid) with RDP beside it.  info (may be NULL) gets a `dp` object.
 */
int vpa_flam_dp_account(struct vpa_flam *t, struct vpa_json *info, struct vpa_err *err);
/* The DP metrics of an A1/A2 record rec: epsilon, epsilon_rdp, epsilon_per_release
   (+ _replace) into its metrics object as the target has them, and the accountant of
   `epsilon` as the record's `epsilon_accountant`. */
void vpa_flam_dp_metrics(const struct vpa_flam *t, struct vpa_json *rec, struct vpa_json *metrics);

void vpa_flam_init(struct vpa_flam *t);
void vpa_flam_release(struct vpa_flam *t);

/*
 * Hidden-layer activations of one model on the whole Indicator set: model m
 * (m == t->n_models: W_g).  acts[h] (t->off[t->n_utt], t->dim[h]) for
 * h = 0 .. n_layers-1 (hidden layer h+1), float32, caller frees each and the
 * array (vpa_flam_acts_free).  Networks run in EVAL mode; imported
 * activations are read from MODEL/layerH/UTT.npy and must have the frame
 * counts of the global model's files ("acts/m3/layer2/u1.npy: expected 120 x
 * 64 as the global model, found 119 x 64").  A model's network holds
 * its forward buffers: calls for different m may run in parallel, calls for
 * the same m may not (attacks/a2.c locks each model).
 */
int vpa_flam_activations(struct vpa_flam *t, size_t m, float ***acts /* OUT */,
			 struct vpa_err *err);
void vpa_flam_acts_free(float **acts, size_t n_layers);

/*
 * The hidden layers of a network: the outputs just before each affine
 * (dense/tdnn) layer but the first, i.e. the output of every hidden block.
 * layer_at (n_affine - 1) is allocated; returns the count.  Error when the
 * network has a layer kind an acoustic model cannot have here (statspool,
 * embedding, lstm) or fewer than two affine layers.
 */
int vpa_flam_hidden_layers(const struct vpa_nn *net, size_t **layer_at /* OUT */,
			   size_t *n /* OUT */, struct vpa_err *err);

/*
 * Read one activation or feature file (.npy, frames x dim, finite within
 * float32), checking its shape (rows x cols, "expected 120 x 64 as the global
 * model") when rows != SIZE_MAX.  *out (r_out x c_out, double) is the
 * caller's.  For the files of this target (fl_am_acts.c, fl_am_files.c).
 */
int vpa_flam_read_act(const char *path, size_t rows, size_t cols, double **out, size_t *r_out,
		      size_t *c_out, struct vpa_err *err);

/* ---- the files (targets/fl_am_files.c; layouts in targets/README.md) ----------- */

struct vpa_flam_import_opts;
struct vpa_feat_opts;
/*
 * The front-end of an Indicator set given as audio (imp's `features` and
 * `feature_options`) into fo, checked together; errors blame the offending
 * option, or the list, or the import mapping (imp_at).
 */
int vpa_flam_frontend(const char *file, const struct vpa_flam_import_opts *imp,
		      struct vpa_mark imp_at, struct vpa_feat_opts *fo, struct vpa_err *err);
/*
 * Import into t (initialised, empty): models.txt, then the activations
 * folders, or the models (model folders or ONNX, `onnx_layers`) and the
 * Indicator features (a folder of .npy, a Kaldi archive or a data directory
 * of audio).  Paths relative to ctx->dir; imp_at marks the import mapping.
 */
int vpa_flam_import(struct vpa_run_ctx *ctx, const struct vpa_flam_import_opts *imp,
		    struct vpa_mark imp_at, struct vpa_flam *t, struct vpa_err *err);
/*
 * Features (frames x dim) into t's Indicator fields (utt_id, off, x, in_dim;
 * t initialised): a folder of UTT.npy or a Kaldi matrix archive.
 */
int vpa_flam_read_features(const char *path, struct vpa_flam *t, struct vpa_err *err);
/* Write models.txt, every model folder and indicator/UTT.npy under dir. */
int vpa_flam_dump_models(const char *dir, struct vpa_flam *t, struct vpa_err *err);
/* Write models.txt and MODEL/layerH/UTT.npy of every model under dir. */
int vpa_flam_dump_acts(const char *dir, struct vpa_flam *t, struct vpa_err *err);

/* ---- ONNX models (targets/fl_am_onnx.c) ----------------------------------- */

/*
 * Load MODEL_DIR/ID.onnx for the global and every personalised model (t's
 * model list and Indicator features already read), with hidden layers named by
 * graph values (t->layer_name gets copies of names[0..n)).  Each model must
 * have the global model's graph (same operators in the same order, same
 * parameter count: "a personalised model must be the global model
 * fine-tuned"), and every name must be a value of the graph.  The layer widths
 * come from one run of the global model on the first Indicator utterance: a
 * layer's output must be (1, T, D), (1, D, T) or (T, D) with T the utterance's
 * frame count ("layer 'x' gives (1, 43, 8) for 45 frames: per-frame
 * activations of the input's length are needed").  update_norm is NAN.
 * The personalised models are checked in jobs of vpa_dist_jobs; under MPI
 * (more than one rank) none is kept (onnx NULL, onnx_path set) and
 * vpa_flam_onnx_acts loads it for the call.
 */
int vpa_flam_onnx_load(const char *model_dir, const char *const *names, size_t n, int bft,
		       struct vpa_flam *t, struct vpa_err *err);
/* The graph's first output of ONNX model md on one utterance x (T, t->in_dim), per
   frame ((1, T, K), (1, K, T) or (T, K)) into *out (T, K), the caller's. */
int vpa_flam_onnx_frame_out(const struct vpa_flam *t, const struct vpa_flam_model *md,
			    const float *x, size_t T, float **out, size_t *K, struct vpa_err *err);
/* Hidden layers of ONNX model md on the Indicator set into a[h] ((N, dim[h]) each). */
int vpa_flam_onnx_acts(const struct vpa_flam *t, const struct vpa_flam_model *md, float **a,
		       struct vpa_err *err);
/*
 * The Indicator set from a Kaldi data directory of audio: features of every
 * utterance with the front-end options fo (audio/audio.h), in data-directory
 * order, computed on `threads` threads.  An utterance without frames is an
 * error.
 */
int vpa_flam_indicator_audio(const char *dir, const struct vpa_feat_opts *fo, int threads,
			     struct vpa_flam *t, struct vpa_err *err);

/* ---- held-out utility of imported models (targets/fl_am_utility.c) -------------- */

struct vpa_flam_heldout_opts;
/*
 * Frame accuracy of every imported model (networks or ONNX) on the held-out
 * utterances of its speaker (acc) and of the global model on the same ones
 * (acc_global): argmax of the model's output against the frame labels.
 * Files (paths relative to ctx->dir): features as the Indicator's (a folder of
 * UTT.npy or a Kaldi matrix archive), labels a Kaldi vector archive of class
 * ids (one per frame, integers in [0, K)), utt2spk naming the speakers of
 * models.txt.  Models run one after another (identical for any thread
 * count).  info (may be NULL) gets `heldout` {utterances, frames, models,
 * personalised_accuracy, global_accuracy}.
 */
int vpa_flam_heldout(struct vpa_run_ctx *ctx, const struct vpa_flam_heldout_opts *h,
		     struct vpa_flam *t, struct vpa_json *info, struct vpa_err *err);

/* ---- the simulator (targets/sim_am.c) ------------------------------------- */

struct vpa_flam_sim_cfg {
	size_t feat_dim;       /* 40 */
	size_t states;         /* phone states (output classes) */
	size_t spk_vec_dim;    /* speaker vector appended to the input (0 = none) */
	double spk_affine;     /* std of A_s - I entries times sqrt(feat_dim) */
	double spk_bias;       /* std of the speaker bias b_s */
	double noise;          /* frame noise std */
	double spk_vec_noise;  /* per-utterance noise of the speaker vector */
	size_t utt_frames;     /* mean frames per utterance */
	size_t train_speakers, train_utts;       /* Train-G */
	size_t part1_speakers, part2_speakers;
	double two_models;     /* fraction of Part-1/Part-2 speakers with two models */
	size_t adapt_utts;     /* adaptation utterances per personalised model */
	size_t heldout_utts;   /* held-out utterances per speaker (utility) */
	size_t indicator_speakers, indicator_utts;
	size_t hidden_layers, hidden_dim;
	size_t global_epochs;  double global_lr;  size_t batch;
	size_t adapt_epochs;   double adapt_lr;
	double dp_clip, dp_noise, dp_delta;      /* clip 0: no DP */
	int dp_skip_noise;     /* fault switch: clip but add no noise (the claim is kept) */
	uint64_t seed;
	int threads;
};
void vpa_flam_sim_cfg_init(struct vpa_flam_sim_cfg *c);

/*
 * Build a simulated target into t (initialised, empty): Train-G, the global
 * TDNN, the personalised models (fine-tuning every parameter on each model's
 * adaptation data, then local DP on the update when dp_clip > 0), held-out
 * utility and the Indicator set.  info (an object) gets the sizes and the
 * utility numbers.  Deterministic for a seed whatever the thread count.
 */
int vpa_flam_simulate(const struct vpa_flam_sim_cfg *c, struct vpa_flam *t,
		      struct vpa_json *info, struct vpa_err *err);

/* ---- federating from frames (targets/fl_am_train.c) --------------------------------
 *
 * What the simulator and the audio source share once they hold frames and
 * frame labels: the global TDNN trained with Adam on Train-G, every
 * personalised model fine-tuned with SGD from it (local DP on the released
 * update when dp_clip > 0), each model's frame accuracy on its speaker's
 * held-out utterances, and the Indicator set moved into the target.
 */
struct vpa_flam_uset {
	size_t n;       /* utterances */
	size_t *off;    /* (n + 1) frame offsets */
	float *x;       /* (off[n], in_dim) features */
	uint32_t *lab;  /* (off[n]) class ids (NULL: unlabelled) */
};
void vpa_flam_uset_release(struct vpa_flam_uset *u);
/* Append b's utterances (input dimension D) to a. */
void vpa_flam_uset_cat(struct vpa_flam_uset *a, const struct vpa_flam_uset *b, size_t D);

struct vpa_flam_fed {
	size_t in_dim, states, hidden_layers, hidden_dim;
	size_t global_epochs, batch, adapt_epochs;
	double global_lr, adapt_lr;
	double dp_clip, dp_noise, dp_delta;   /* clip 0: no DP */
	int dp_skip_noise;
	uint64_t seed;
	int threads;
	const char *stream;            /* RNG stream prefix ("sim_am", "am_audio") */
	struct vpa_flam_uset train;    /* Train-G: consumed */
	size_t n_part1, n_part2;       /* Part-1 speakers first */
	char **spk_id;                 /* (n_part1 + n_part2): moved into the target */
	const unsigned char *two;      /* (n_part1 + n_part2): 1 = two models */
	struct vpa_flam_uset *heldout; /* (n_part1 + n_part2): consumed */
	/* speaker spk's adaptation data for its model `which` (0, 1) into u; r is the
	   model's stream (the personalisation's batch order continues it) */
	void (*adapt)(void *arg, size_t spk, size_t which, struct vpa_rng *r,
		      struct vpa_flam_uset *u);
	void *adapt_arg;
	struct vpa_flam_uset indicator; /* consumed */
	char **ind_utt_id;             /* (indicator.n): moved */
	/* out */
	double global_loss, t_global, t_pers;
	size_t n_params;
};

/* The TDNN acoustic model of both sources (hidden_layers blocks of tdnn + relu
 * with the contexts of the `hidden_layers` key, a dense output over `states`). */
struct vpa_nn *vpa_flam_make_tdnn(size_t hidden_layers, size_t hidden_dim, size_t states,
				  size_t in_dim);
/* Which of n1 Part-1 then n2 Part-2 speakers have two models: round(frac n) of
 * each part, drawn from stream "<stream>/two-models" of seed. */
void vpa_flam_pick_two(uint64_t seed, const char *stream, size_t n1, size_t n2, double frac,
		       unsigned char *two);
/* Build t (initialised, empty) from f's data (deterministic for any f->threads
 * and MPI rank count); f's sets are consumed, its ids moved. */
int vpa_flam_federate(struct vpa_flam_fed *f, struct vpa_flam *t, struct vpa_err *err);
/* info's `utility`, `local_dp` and `seconds` objects of a federated target. */
void vpa_flam_fed_info(const struct vpa_flam_fed *f, const struct vpa_flam *t,
		       struct vpa_json *info);
/* info's `sizes` object (the sets, the models, the TDNN; returned, for a
 * source's own fields), then vpa_flam_fed_info. */
struct vpa_json *vpa_flam_fed_sizes(const struct vpa_flam_fed *f, const struct vpa_flam *t,
				    size_t train_speakers, struct vpa_json *info);
/* The training fields both sources' configurations (struct vpa_flam_sim_cfg,
 * struct vpa_flam_audio_cfg) name alike, copied into the struct vpa_flam_fed
 * *f from the configuration *c. */
#define VPA_FLAM_FED_TRAINING(f, c)                                    \
	do {                                                           \
		(f)->hidden_layers = (c)->hidden_layers;               \
		(f)->hidden_dim = (c)->hidden_dim;                     \
		(f)->global_epochs = (c)->global_epochs;               \
		(f)->batch = (c)->batch;                               \
		(f)->adapt_epochs = (c)->adapt_epochs;                 \
		(f)->global_lr = (c)->global_lr;                       \
		(f)->adapt_lr = (c)->adapt_lr;                         \
		(f)->dp_clip = (c)->dp_clip;                           \
		(f)->dp_noise = (c)->dp_noise;                         \
		(f)->dp_delta = (c)->dp_delta;                         \
		(f)->dp_skip_noise = (c)->dp_skip_noise;               \
		(f)->seed = (c)->seed;                                 \
		(f)->threads = (c)->threads;                           \
		(f)->n_part1 = (c)->part1_speakers;                    \
		(f)->n_part2 = (c)->part2_speakers;                    \
	} while (0)

/* ---- source: audio (targets/fl_am_audio.c) ---------------------------------------- */

struct vpa_ctc_opts; /* asr/ctc.h */

struct vpa_flam_audio_cfg {
	const char *data;              /* a Kaldi data directory (wav.scp, utt2spk) */
	const char *ali;               /* its frame alignments (Kaldi per-frame text), or NULL with */
	const struct vpa_ctc_opts *ctc; /* a CTC model: frame labels by forced alignment of */
	const char *text;              /* these transcripts (asr/ctc_align.h) */
	struct vpa_feat_opts fo;       /* the front end */
	size_t spk_vec_dim;            /* an i-vector stand-in appended to every frame (0: none) */
	size_t train_speakers;         /* 0: every speaker not in another set */
	size_t part1_speakers, part2_speakers, indicator_speakers;
	double two_models;
	size_t heldout_utts, indicator_utts;
	size_t hidden_layers, hidden_dim, global_epochs, batch, adapt_epochs;
	double global_lr, adapt_lr;
	double dp_clip, dp_noise, dp_delta;
	int dp_skip_noise;
	uint64_t seed;
	int threads;
};
void vpa_flam_audio_cfg_init(struct vpa_flam_audio_cfg *c);
/* Build t (initialised, empty) from the audio and alignments of c: features,
 * the speaker sets, W_g and the personalised models (vpa_flam_federate).
 * info gets the sizes, utility (with chance) and DP objects. */
int vpa_flam_from_audio(const struct vpa_flam_audio_cfg *c, struct vpa_flam *t,
			struct vpa_json *info, struct vpa_err *err);
/* The built-in corpus in a new temporary folder *tmp (registered for removal
 * on a signal): vpa_xvec_synth's train/, enrol/ and trials/ merged into
 * *data (TMP/all, with ali.txt).  vpa_flam_synth_remove(tmp) removes it and
 * frees tmp. */
int vpa_flam_synth_corpus(int speakers, int utts, const char *brown, uint64_t seed,
			  int threads, char **tmp, char **data, struct vpa_err *err);
void vpa_flam_synth_remove(char *tmp);

/* ---- footprint kernels (A1, metrics/README.md) ----------------------------------- */

/*
 * Mean and population standard deviation (divide by N) over the N rows of
 * Delta = a - g ((N, d) each), into mu (d) and sd (d), accumulated in double.
 */
void vpa_footprint_stats(const float *a, const float *g, size_t N, size_t d,
			 double *mu /* OUT */, double *sd /* OUT */);
/*
 * A1 footprints of the models m with use[m] (every model when use is NULL):
 * the activations of model m and of the global model on the Indicator set,
 * then vpa_footprint_stats on each chosen hidden layer lay[0..nl) (0-based),
 * concatenated into mu[m], sd[m] (sum of the chosen layers' dims; NULL for
 * unused models; caller frees each and the arrays).  Models are shared out
 * to `threads` threads with one BLAS thread each (the element-wise layers
 * and copies of a forward pass then also run in parallel); every model's
 * numbers are computed by one thread alone, so the result does not depend on
 * the thread count.  An error is that of the lowest failing model index.
 * Progress lines under `label` when not NULL.
 */
int vpa_a1_footprints(struct vpa_flam *t, const size_t *lay, size_t nl, const unsigned char *use,
		      int threads, const char *label, double ***mu /* OUT */,
		      double ***sd /* OUT */, struct vpa_err *err);

/*
 * rho = a_mu |mu_i - mu_k| / (|mu_i| |mu_k|) + a_sigma |sd_i - sd_k| / (|sd_i| |sd_k|)
 * (Euclidean norms; a term whose denominator is 0 counts as 0 when its
 * numerator is 0, else +inf is avoided by using the smallest positive double).
 */
double vpa_footprint_rho(const double *mu_i, const double *sd_i, const double *mu_k,
			 const double *sd_k, size_t d, double a_mu, double a_sigma);

/*
 * The trials of A1/A2 among the models of partition `part`: targets = every
 * pair (i < k) of different models of the same speaker; non-targets = a
 * seeded sample without replacement of n_non pairs of models of different
 * speakers (all such pairs when there are fewer).  Pairs are model indices
 * (into t->models), e before t in model order.  Arrays owned by the caller.
 */
void vpa_flam_pairs(const struct vpa_flam *t, int part, size_t n_non, uint64_t seed,
		    uint32_t **tar /* OUT (2 n_tar) */, size_t *n_tar /* OUT */,
		    uint32_t **non /* OUT (2 n_non) */, size_t *n_non_out /* OUT */);

/* The target kind. */
extern const struct vpa_target_kind vpa_target_fl_acoustic_models;

/* ---- the options of the kind (config/schema.h "Typed options"; filled by validation) ---- */

struct vpa_flam_sim_opts {
	long long feat_dim;
	long long states;
	long long spk_vec_dim;
	double spk_affine;
	double spk_bias;
	double noise;
	double spk_vec_noise;
	long long utt_frames;
	long long train_speakers;
	long long train_utts;
	long long part1_speakers;
	long long part2_speakers;
	double two_models;
	long long adapt_utts;
	long long heldout_utts;
	long long indicator_speakers;
	long long indicator_utts;
	long long hidden_layers;
	long long hidden_dim;
	long long global_epochs;
	double global_lr;
	long long batch;
	long long adapt_epochs;
	double adapt_lr;
	struct vpa_mark feat_dim_at, states_at, spk_vec_dim_at, spk_affine_at, spk_bias_at,
		noise_at, spk_vec_noise_at, utt_frames_at, train_speakers_at,
		train_utts_at, part1_speakers_at, part2_speakers_at, two_models_at,
		adapt_utts_at, heldout_utts_at, indicator_speakers_at, indicator_utts_at,
		hidden_layers_at, hidden_dim_at, global_epochs_at, global_lr_at, batch_at,
		adapt_epochs_at, adapt_lr_at;
};

struct vpa_flam_dp_opts {
	double clip;
	double noise;
	double delta;
	struct vpa_mark clip_at, noise_at, delta_at;
};

/* dp_info of an import: the DP the models were trained with (a description) */
struct vpa_flam_dpinfo_opts {
	const char *mechanism; /* local | dp_sgd */
	double clip;
	double noise;
	double delta;
	long long steps;
	double q;
	struct vpa_mark mechanism_at, clip_at, noise_at, delta_at, steps_at, q_at;
};


struct vpa_flam_heldout_opts {
	const char *features;
	const char *labels;
	const char *utt2spk;
	struct vpa_mark features_at, labels_at, utt2spk_at;
};

struct vpa_flam_import_opts {
	const char *models;
	const char *model_dir;
	const char *indicator;
	struct vpa_strs onnx_layers;
	const char *onnx_layout;
	const char *features;
	struct vpa_strs feature_options;
	const char *activations;
	struct vpa_flam_heldout_opts heldout;
	struct vpa_mark models_at, model_dir_at, indicator_at, onnx_layers_at,
		onnx_layout_at, features_at, feature_options_at, activations_at, heldout_at;
};

/* `aligner:` of source: audio: a CTC model labels the frames of your data */
struct vpa_flam_aligner_opts {
	const char *model, *tokens, *text;
	long long blank;
	const char *delimiter, *input, *layout;
	int wave_norm;
	struct vpa_mark model_at, tokens_at, text_at, blank_at, delimiter_at, input_at, layout_at,
		wave_norm_at;
};

struct vpa_flam_audio_opts {
	const char *data;
	const char *ali;
	struct vpa_flam_aligner_opts aligner;
	long long speakers, utts;  /* the built-in corpus (no `data`) */
	long long spk_vec_dim;
	const char *brown;
	const char *features;
	struct vpa_strs feature_options;
	long long train_speakers, part1_speakers, part2_speakers, indicator_speakers;
	double two_models;
	long long heldout_utts, indicator_utts;
	long long hidden_layers, hidden_dim, global_epochs, batch, adapt_epochs;
	double global_lr, adapt_lr;
	struct vpa_mark aligner_at, spk_vec_dim_at, data_at, ali_at, speakers_at, utts_at, brown_at, features_at, feature_options_at, train_speakers_at,
		part1_speakers_at, part2_speakers_at, indicator_speakers_at, two_models_at,
		heldout_utts_at, indicator_utts_at, hidden_layers_at, hidden_dim_at,
		global_epochs_at, batch_at, adapt_epochs_at, global_lr_at, adapt_lr_at;
};

struct vpa_flam_opts {
	const char *source;
	struct vpa_flam_sim_opts simulate;
	struct vpa_flam_audio_opts audio;
	struct vpa_flam_dp_opts dp;
	struct vpa_flam_import_opts import;
	struct vpa_flam_dpinfo_opts dp_info;
	const char *dp_fault;
	const char *dump_models;
	const char *dump_activations;
	struct vpa_mark source_at, simulate_at, audio_at, dp_at, import_at, dp_info_at, dp_fault_at,
		dump_models_at, dump_activations_at;
};


#endif
