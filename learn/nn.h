/*
 * learn/nn.h - a small neural-network engine: layers with hand-written backward
 * passes on OpenBLAS (every matrix product goes through base/la.h), a
 * sequential container, softmax cross-entropy (hard labels, soft targets with
 * a temperature for knowledge distillation), optimisers (SGD with momentum and
 * weight decay, Adam), gradient clipping, per-example gradients for DP-SGD, and
 * model folders (model.yaml + one .npy per tensor).  learn/NN.md documents the
 * layers, shapes, conventions and the folder format in full.
 *
 * Storage is float32, row-major.  A batch is a set of variable-length
 * sequences whose frames are concatenated:
 *
 *     x: (off[n_seq], input_dim)   sequence b is rows off[b] .. off[b+1]-1
 *
 * Every layer maps such a batch to another one with the same offsets, except
 * statistics pooling, which turns each sequence into one row (offsets become
 * 0, 1, ..., n_seq).  Frame-wise layers (dense, activations, batch norm,
 * dropout) run on all rows of the batch at once, so the products are whole-
 * batch GEMMs; TDNN splices within each sequence (edges replicate the first /
 * last frame, so a sequence keeps its length); LSTMs run the recurrences of
 * all sequences of the batch together, one GEMM per time step.
 *
 * Ownership: a network (struct vpa_nn, opaque) owns its parameters, gradients,
 * state (batch-norm running statistics) and activations.  The batch passed to
 * vpa_nn_forward is borrowed and must stay valid until vpa_nn_backward.
 * Pointers returned by accessors are borrowed, valid until the next forward
 * (activations) or until vpa_nn_free (parameters, gradients, state).
 */
#ifndef VPA_NN_H
#define VPA_NN_H

#include "base/base.h"

enum vpa_nn_kind {
	VPA_NN_DENSE,     /* y = x W^T + b; W (out, in), b (out) */
	VPA_NN_TDNN,      /* splice contexts, then dense; W (out, k*in) */
	VPA_NN_RELU,
	VPA_NN_SIGMOID,
	VPA_NN_TANH,
	VPA_NN_BATCHNORM, /* gamma, beta (D); running_mean, running_var (D) state */
	VPA_NN_DROPOUT,   /* inverted dropout, train mode only */
	VPA_NN_STATSPOOL, /* (T_b, D) per sequence -> (1, 2D) = [mean, std] */
	VPA_NN_EMBEDDING, /* ids -> rows of table (vocab, dim); first layer only */
	VPA_NN_LSTM,      /* one layer; w_ih (4H, in), w_hh (4H, H), bias (4H) */
	VPA_NN_BILSTM,    /* forward and reversed LSTM, outputs concatenated (2H) */
	VPA_NN_N_KINDS
};

/* "dense", "tdnn", ... (the model.yaml spelling). */
const char *vpa_nn_kind_name(enum vpa_nn_kind k);

#define VPA_NN_MAX_CONTEXT 32
#define VPA_NN_NAME_MAX 64
#define VPA_NN_MAX_DIM (1 << 24) /* any size (out, hidden, vocab, dim) */

/*
 * One layer's topology.  Fields not used by a kind are ignored.  Initialise
 * with vpa_nn_layer_spec_init (sets the defaults written below).
 */
struct vpa_nn_layer_spec {
	enum vpa_nn_kind kind;
	char name[VPA_NN_NAME_MAX]; /* "" = "layer<i>" (1-based); [A-Za-z0-9_-] */
	size_t out;        /* dense/tdnn: output dim; lstm/bilstm: hidden size H;
			      embedding: dim */
	size_t vocab;      /* embedding: number of rows of the table */
	int context[VPA_NN_MAX_CONTEXT]; /* tdnn: strictly increasing offsets */
	size_t n_context;
	float p;           /* dropout probability, [0, 1); default 0.5 */
	float eps;         /* batchnorm: default 1e-5 */
	float momentum;    /* batchnorm running-average momentum: default 0.1 */
	float var_floor;   /* statspool variance floor: default 1e-10 */
	int reverse;       /* lstm: run each sequence from its end */
	struct vpa_loc loc; /* where it was declared (model.yaml), for messages */
};
void vpa_nn_layer_spec_init(struct vpa_nn_layer_spec *s, enum vpa_nn_kind kind);

struct vpa_nn;

/*
 * An empty network taking input_dim-dimensional frames (0 when the first
 * layer will be an embedding, whose input is token ids).  Caller frees with
 * vpa_nn_free.
 */
struct vpa_nn *vpa_nn_new(size_t input_dim);
void vpa_nn_free(struct vpa_nn *net);
/* Free the work space of the last forward/backward (every layer's output and
 * caches, the scratch buffers): a trained model kept for later forwards then
 * holds its parameters only.  The next forward allocates again; the
 * activations of the last forward are gone. */
void vpa_nn_release_work(struct vpa_nn *net);

/*
 * Append a layer.  Its parameters are zero until vpa_nn_init_params.  Errors
 * (VPA_EINPUT, located at s->loc): zero sizes, bad contexts, dropout p out of
 * range, an embedding that is not the first layer, a first layer that is not
 * an embedding when input_dim is 0, duplicate or invalid names.
 */
int vpa_nn_add(struct vpa_nn *net, const struct vpa_nn_layer_spec *s, struct vpa_err *err);

/* Shorthands for code-built networks; a bad argument is a VPA_BUG. */
void vpa_nn_add_dense(struct vpa_nn *net, size_t out);
void vpa_nn_add_tdnn(struct vpa_nn *net, size_t out, const int *context, size_t n_context);
void vpa_nn_add_simple(struct vpa_nn *net, enum vpa_nn_kind kind); /* relu sigmoid tanh
								      batchnorm statspool */
void vpa_nn_add_dropout(struct vpa_nn *net, float p);
void vpa_nn_add_embedding(struct vpa_nn *net, size_t vocab, size_t dim);
void vpa_nn_add_lstm(struct vpa_nn *net, size_t hidden, int reverse);
void vpa_nn_add_bilstm(struct vpa_nn *net, size_t hidden);

/*
 * Seeded initialisation (each layer draws from vpa_rng_split(seed, name)):
 *   dense, tdnn    He-uniform U(-a, a), a = sqrt(6 / fan_in) when the next
 *                  layer is a ReLU, else Glorot-uniform a = sqrt(6/(fan_in+fan_out));
 *                  bias 0.  (fan_in of a TDNN is k*in.)
 *   embedding      N(0, 1), as PyTorch's nn.Embedding
 *   lstm, bilstm   U(-1/sqrt(H), 1/sqrt(H)) as PyTorch; bias 0 except the
 *                  forget-gate block, 1
 *   batchnorm      gamma 1, beta 0, running mean 0, running var 1
 * Also resets the dropout streams (vpa_nn_set_seed).
 */
void vpa_nn_init_params(struct vpa_nn *net, uint64_t seed);

/* Reset the dropout masks' random streams (per layer, from seed and name). */
void vpa_nn_set_seed(struct vpa_nn *net, uint64_t seed);

size_t vpa_nn_n_layers(const struct vpa_nn *net);
size_t vpa_nn_input_dim(const struct vpa_nn *net);
size_t vpa_nn_output_dim(const struct vpa_nn *net);
/* Output dimension of layer i (0-based). */
size_t vpa_nn_layer_dim(const struct vpa_nn *net, size_t i);
/* Layer i's topology (borrowed, valid until vpa_nn_free). */
const struct vpa_nn_layer_spec *vpa_nn_layer(const struct vpa_nn *net, size_t i);

/* A batch of sequences (see the top of this file).  All borrowed. */
struct vpa_nn_batch {
	size_t n_seq;
	const size_t *off;   /* (n_seq + 1), off[0] = 0, non-decreasing */
	const float *x;      /* (off[n_seq], input_dim); NULL for an embedding net */
	const uint32_t *ids; /* (off[n_seq]) token ids for an embedding net, else NULL */
};

enum vpa_nn_mode { VPA_NN_EVAL = 0, VPA_NN_TRAIN = 1 };

/*
 * Run every layer in order and keep each layer's output.  TRAIN: batch norm
 * uses (and updates the running averages with) the batch statistics, dropout
 * drops.  EVAL: running statistics, no dropout.  Errors (VPA_EINPUT): a token
 * id >= vocab, an empty sequence reaching statistics pooling, a batch with
 * no row.  A backward pass needs a TRAIN forward (an EVAL forward may reuse
 * scratch memory).
 */
int vpa_nn_forward(struct vpa_nn *net, const struct vpa_nn_batch *in, enum vpa_nn_mode mode,
		   struct vpa_err *err);

/*
 * Layer i's output after the last forward: (*rows, *dim), borrowed until the
 * next forward.  vpa_nn_output is the last layer's.  The A1 attack reads the
 * hidden layers' activations through this.
 */
const float *vpa_nn_activation(const struct vpa_nn *net, size_t i, size_t *rows /* OUT */,
			       size_t *dim /* OUT */);
const float *vpa_nn_output(const struct vpa_nn *net, size_t *rows /* OUT */,
			   size_t *dim /* OUT */);
/* Offsets of layer i's output (n_seq + 1 entries; *n_seq may be NULL). */
const size_t *vpa_nn_offsets(const struct vpa_nn *net, size_t i, size_t *n_seq /* OUT */);

/*
 * Back-propagate d(loss)/d(output) (rows, output_dim) of the last forward
 * (which must be TRAIN): parameter gradients are ACCUMULATED into the
 * gradient vector (call vpa_nn_zero_grad first), and d(loss)/d(input)
 * (off[n_seq], input_dim) is written to dx unless dx is NULL (it must be NULL
 * for an embedding net).  Accumulation lets two heads share a trunk: run each
 * head on the trunk's output, add their dx, and back-propagate the sum.
 */
void vpa_nn_backward(struct vpa_nn *net, const float *dout, float *dx);
void vpa_nn_zero_grad(struct vpa_nn *net);

/*
 * Flat views (borrowed, valid until vpa_nn_free): all trainable parameters in
 * layer order, their gradients (same layout), and the non-trainable state
 * (batch-norm running mean and variance).  Federated-learning and DP code
 * works on these: deltas W_s - W_g, norms, clipping, noise, averaging.
 */
float *vpa_nn_params(struct vpa_nn *net, size_t *n /* OUT */);
float *vpa_nn_grads(struct vpa_nn *net, size_t *n /* OUT */);
float *vpa_nn_state(struct vpa_nn *net, size_t *n /* OUT */);

/* A named tensor of a layer (a view into the flat vectors above). */
struct vpa_nn_tensor {
	const char *name; /* "weight", "bias", "gamma", ... (static) */
	size_t ndim;      /* 1 or 2 */
	size_t shape[2];
	float *data;      /* borrowed */
	float *grad;      /* borrowed; NULL for state */
	int trainable;
};
size_t vpa_nn_n_tensors(const struct vpa_nn *net, size_t layer);
void vpa_nn_tensor(struct vpa_nn *net, size_t layer, size_t k, struct vpa_nn_tensor *t /* OUT */);

/* A deep copy of topology, parameters and state (not activations).  Caller frees. */
struct vpa_nn *vpa_nn_clone(const struct vpa_nn *net);
/* Copy parameters and state between two networks of the same topology. */
void vpa_nn_copy_params(struct vpa_nn *dst, const struct vpa_nn *src);

/* ------------------------------------------------------------------ loss */

/*
 * Targets for softmax cross-entropy on a network's output (logits).
 * Hard labels: loss_r = -log softmax(z_r)[y_r].
 * Soft targets (knowledge distillation, Hinton et al. 2015): with q_r =
 * softmax(z_r / T), loss_r = T^2 * (-sum_k p_rk log q_rk); the T^2 keeps the
 * gradient T (q_r - p_r) on the scale of the hard loss's.  p_r must be a
 * probability vector (e.g. the teacher's softmax at the same T).
 * The loss is (1/R) sum_r w_r loss_r over the R output rows (w_r = 1 without
 * weights).  per_sequence: labels/soft/weights are given per sequence and
 * apply to every output row of that sequence (the same as per row after
 * statistics pooling).
 */
struct vpa_nn_targets {
	const uint32_t *labels; /* (R) or (n_seq) hard labels, or NULL */
	const float *soft;      /* (R, K) or (n_seq, K) soft targets, or NULL */
	const float *weights;   /* (R) or (n_seq) per-row weights, or NULL */
	float temperature;      /* soft targets only; 1 = plain CE */
	int per_sequence;
};
void vpa_nn_targets_init(struct vpa_nn_targets *t); /* all NULL, temperature 1 */

/*
 * Loss of the last forward's output against t; d(loss)/d(logits) (R, K) into
 * dlogits unless NULL.  Loss in double.  Errors (VPA_EINPUT): a label >= K,
 * neither or both of labels/soft, temperature <= 0.
 */
int vpa_nn_loss(const struct vpa_nn *net, const struct vpa_nn_targets *t, double *loss /* OUT */,
		float *dlogits, struct vpa_err *err);

/*
 * The same on raw logits z (R, K) with row offsets off (n_seq + 1) used for
 * per_sequence targets (off may be NULL otherwise).
 */
int vpa_nn_softmax_ce(const float *z, size_t R, size_t K, const size_t *off, size_t n_seq,
		      const struct vpa_nn_targets *t, double *loss /* OUT */, float *dlogits,
		      struct vpa_err *err);

/*
 * Granqvist et al. 2020 eq. 3, the squared-error distillation loss (learn/nn_loss.c):
 * with q_r = softmax(z_r / T), loss = (1/R) sum_r T^2/K sum_k (q_rk - p_rk)^2 over the
 * R rows of logits z (R, K) and targets p (R, K) (the teacher's softmax at the same T);
 * d(loss)/d(logits) (R, K) into dlogits unless NULL.  Errors: T <= 0 (VPA_EINPUT).
 */
int vpa_nn_distill_sq(const float *z, size_t R, size_t K, const float *p, double T,
		      double *loss /* OUT */, float *dlogits, struct vpa_err *err);

/*
 * Additive angular margin softmax (AAM-softmax / ArcFace, Deng et al. 2019;
 * learn/nn_aam.c) of embeddings e (R, D) against class weights W (K, D):
 * cosines c_rk between the L2-normalised rows, logits s c_rk, the target's
 * s cos(acos(c) + m) (c - m sin(pi - m) once acos(c) + m passes pi); loss the
 * mean cross-entropy.  d(loss)/d(e) into de (R, D) and d(loss)/d(W) into dW
 * (K, D) unless NULL (overwritten, not accumulated).  m = 0 is the cosine
 * softmax with scale s.  Errors (VPA_EINPUT): a label >= K, s <= 0, m
 * outside [0, pi/2).
 */
int vpa_nn_aam_softmax(const float *e, size_t R, size_t D, const float *W, size_t K,
		       const uint32_t *labels, double margin, double scale,
		       double *loss /* OUT */, float *de, float *dW, struct vpa_err *err);

/* Row-wise softmax / log-softmax of z (R, K) into out (may equal z). */
void vpa_nn_softmax(const float *z, size_t R, size_t K, float *out);
void vpa_nn_log_softmax(const float *z, size_t R, size_t K, float *out);

/* ------------------------------------------------------------ optimisers */

enum vpa_optim_kind { VPA_OPTIM_SGD, VPA_OPTIM_ADAM };

/*
 * An optimiser over a flat vector of n parameters (a network's vpa_nn_params,
 * or anything else, e.g. a FedAdam server's global model).
 *   SGD (PyTorch's convention):  g' = g + wd w;  v = mu v + g';  w -= lr v
 *   Adam (Kingma & Ba):          g' = g + wd w;  m = b1 m + (1-b1) g';
 *       v = b2 v + (1-b2) g'^2;  w -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
 */
struct vpa_optim {
	enum vpa_optim_kind kind;
	double lr, momentum, weight_decay;
	double beta1, beta2, eps;
	size_t n;
	long t;   /* steps taken */
	float *m; /* (n) momentum / first moment, owned */
	float *v; /* (n) second moment (Adam), owned */
};
void vpa_optim_init_sgd(struct vpa_optim *o, size_t n, double lr, double momentum,
			double weight_decay);
void vpa_optim_init_adam(struct vpa_optim *o, size_t n, double lr, double beta1, double beta2,
			 double eps, double weight_decay);
void vpa_optim_release(struct vpa_optim *o);
void vpa_optim_reset(struct vpa_optim *o); /* zero moments, t = 0 */
void vpa_optim_step(struct vpa_optim *o, float *w, const float *g);

/*
 * The FedAdam server step on the averaged client delta d (n) = w_local - w_global
 * (the negative of Liu et al.'s pseudo-gradient Delta_t, eq. 5, so w moves along
 * +d), t = 1, 2, ... the round; m, v (n) the moments (zero before round 1):
 *   m = b1 m + (1-b1) d,  v = b2 v + (1-b2) d^2
 *   VPA_FEDADAM_LIU   (Liu et al. 2021 eq. 6-8): bias-corrected m^ = m/(1-b1^t),
 *                     v^ = v/(1-b2^t), eps inside the square root:
 *                     w += lr m^ / sqrt(v^ + eps)
 *   VPA_FEDADAM_REDDI (Reddi et al. 2021, "Adaptive federated optimization",
 *                     Algorithm 2): no bias correction, the adaptivity tau outside:
 *                     w += lr m / (sqrt(v) + eps)
 * In double per coordinate, stored in float.
 */
enum vpa_fedadam_form { VPA_FEDADAM_LIU, VPA_FEDADAM_REDDI };
void vpa_fedadam_step(enum vpa_fedadam_form form, double lr, double b1, double b2, double eps,
		      long t, float *m, float *v, float *w, const float *d, size_t n);

/* Global L2 norm of g (computed in double). */
double vpa_nn_norm(const float *g, size_t n);
/* Scale g so that ||g|| <= max_norm; returns the norm before clipping. */
double vpa_nn_clip_norm(float *g, size_t n, double max_norm);

/*
 * One supervised step: zero_grad, TRAIN forward, loss, backward, optional
 * clipping of the global gradient norm (clip <= 0: none), optimiser step.
 * *loss gets the batch loss (before the step).
 */
int vpa_nn_train_step(struct vpa_nn *net, struct vpa_optim *o, const struct vpa_nn_batch *in,
		      const struct vpa_nn_targets *t, double clip, double *loss /* OUT */,
		      struct vpa_err *err);

/*
 * Per-example gradient (building block of DP-SGD): the gradient of the loss of
 * sequence b alone (a TRAIN forward of that one sequence; the targets are
 * those of the whole batch and are sliced) replaces the network's gradient.
 * *loss gets that example's loss.  Note that batch norm in TRAIN mode then
 * normalises over the example's own frames.
 */
int vpa_nn_example_grad(struct vpa_nn *net, const struct vpa_nn_batch *in, size_t b,
			const struct vpa_nn_targets *t, double *loss /* OUT */,
			struct vpa_err *err);

/*
 * DP-SGD (Abadi et al. 2016, algorithm 1): for every sequence of the batch,
 * its gradient is clipped to L2 norm `clip`; the sum of the clipped gradients
 * plus N(0, (sigma clip)^2) per coordinate (drawn from rng) is divided by
 * `denom` (the expected lot size L = q N under Poisson sampling; 0 means the
 * batch's n_seq) and passed to the optimiser.  *loss gets the mean example
 * loss, *n_clipped (may be NULL) how many examples had norm > clip.
 */
int vpa_nn_dpsgd_step(struct vpa_nn *net, struct vpa_optim *o, const struct vpa_nn_batch *in,
		      const struct vpa_nn_targets *t, double clip, double sigma, double denom,
		      struct vpa_rng *rng, double *loss /* OUT */, size_t *n_clipped /* OUT */,
		      struct vpa_err *err);

/*
 * DP-SGD with a privacy unit of several sequences (user-level DP-SGD, as
 * DP-FedSGD with one local step, McMahan et al. 2018): the sequences of unit
 * u are unit_off[u] .. unit_off[u+1]-1 (unit_off[0] = 0, unit_off[n_units] =
 * in->n_seq); a unit's gradient is that of its mean example loss, clipped to
 * `clip` as a whole, so one unit moves the sum by at most `clip` however many
 * sequences it holds.  unit_off NULL: every sequence is a unit (n_units =
 * n_seq; vpa_nn_dpsgd_step).  denom <= 0 means n_units.  *loss is the mean
 * example loss; *n_clipped counts clipped units.
 */
int vpa_nn_dpsgd_step_units(struct vpa_nn *net, struct vpa_optim *o,
			    const struct vpa_nn_batch *in, const struct vpa_nn_targets *t,
			    const size_t *unit_off, size_t n_units, double clip, double sigma,
			    double denom, struct vpa_rng *rng, double *loss /* OUT */,
			    size_t *n_clipped /* OUT */, struct vpa_err *err);

/* ---------------------------------------------------------- model folders */

/*
 * Parse a model.yaml held in memory (the fuzz target's entry point): the
 * topology only, parameters zero.  name is for messages.  Errors are
 * "NAME:LINE:COL: message" (1-based), e.g.
 *   model.yaml:4:11: unknown layer kind 'conv': expected one of dense, tdnn, ...
 * Caller frees *out with vpa_nn_free; *out is NULL on error.
 */
int vpa_nn_parse_yaml(const char *name, const char *buf, size_t len, struct vpa_nn **out,
		      struct vpa_err *err);

/*
 * Load DIR/model.yaml and DIR/<layer>.<tensor>.npy for every tensor (float32
 * or float64; NaN/inf rejected).  Errors name the file: a missing tensor file,
 * a wrong shape ("DIR/tdnn1.weight.npy: expected shape (512, 200) for tensor
 * 'weight' of layer 'tdnn1' (DIR/model.yaml:3:5), found (512, 100)").
 */
int vpa_nn_load(const char *dir, struct vpa_nn **out, struct vpa_err *err);

/* Write DIR/model.yaml and the .npy files (float64); creates DIR. */
int vpa_nn_save(struct vpa_nn *net, const char *dir, struct vpa_err *err);

/* The model.yaml text of a network (caller releases buf). */
void vpa_nn_yaml(const struct vpa_nn *net, struct vpa_buf *buf);

#endif
