/*
 * audio/ecapa.h - a small ECAPA-TDNN speaker-embedding network (Desplanques,
 * Thienpondt, Demuynck, "ECAPA-TDNN: Emphasized Channel Attention,
 * Propagation and Aggregation in TDNN Based Speaker Verification",
 * Interspeech 2020, figure 2), trained by audio/xvector.c beside the x-vector.
 *
 * Built from learn/nn.h networks (dense, TDNN, ReLU, batch norm, tanh,
 * sigmoid: their backward passes are core's, checked in tests/unit/test_nn.c)
 * wired here with the parts learn/nn has not got: the Res2 split and cascade,
 * squeeze-excitation, the residual, multi-layer feature aggregation and
 * attentive statistics pooling, each with a hand-written backward pass.  Every
 * matrix product is a vpa_sgemm inside learn/nn.  Batches are learn/nn's:
 * variable-length sequences concatenated, offsets off[0..n_seq].
 *
 *   stem     TDNN C {-2..2} (Conv1D k=5), ReLU, BN
 *   block d  (d = 2, 3, 4) SE-Res2Block on its predecessor's output X:
 *            h = BN(ReLU(X W1))                    1x1 conv, C -> C
 *            split h into s groups of C/s: y_1 = h_1, y_2 = K_2(h_2),
 *            y_i = K_i(h_i + y_{i-1}), K_i = BN(ReLU(TDNN {-d,0,d}))  (Res2Net)
 *            z = BN(ReLU([y_1 .. y_s] W2))         1x1 conv, C -> C
 *            g = sigmoid(W4 ReLU(W3 mean_t(z) + b3) + b4)  per sequence (SE, bottleneck B)
 *            out = z * g + X                       (residual)
 *   MFA      H = ReLU([out_2, out_3, out_4] W5 + b5)  3C -> C'
 *   ASP      context [h_t, mean_t h, std_t h] (3C'), e_t = W7 tanh(W6 ctx_t + b6) + b7
 *            (C'), alpha = softmax over the frames of the sequence per channel
 *            (eq. 6-7), mu = sum_t alpha_t h_t, sigma = sqrt(sum_t alpha_t h_t^2 -
 *            mu^2) (eq. 8), pooled [mu, sigma] (2C')
 *   head     BN, dense E                          -> the embedding
 *
 * Choices (and where this differs from the paper or SpeechBrain): edges of the
 * dilated convolutions replicate the first/last frame (learn/nn's TDNN) where
 * PyTorch pads with zeros; each block takes its predecessor's output (as
 * SpeechBrain's ECAPA_TDNN) rather than the paper's sum of all preceding
 * outputs; the MFA convolution has no BN (the paper's figure: Conv1D+ReLU);
 * the embedding is the dense layer's output without a final BN (SpeechBrain).
 * Standard deviations are floored at variance 1e-10 (learn/nn's statspool).
 */
#ifndef VPA_ECAPA_H
#define VPA_ECAPA_H

#include "base/base.h"
#include "learn/nn.h"

#define VPA_ECAPA_MAX_SCALE 16

struct vpa_ecapa_opts {
	size_t channels;  /* C: 64 */
	size_t scale;     /* s, Res2Net groups (C % s == 0): 4 */
	size_t se_dim;    /* B, SE bottleneck: 0 = max(4, C/4) */
	size_t att_dim;   /* attention hidden size: 0 = max(4, C/4) */
	size_t mfa_dim;   /* C': 0 = 3C (the paper) */
	size_t emb_dim;   /* E: 64 */
	int smooth;       /* tanh for every ReLU: only for gradient checks (no kinks) */
};
void vpa_ecapa_opts_init(struct vpa_ecapa_opts *o);

struct vpa_ecapa;

/* A network with zero parameters (call vpa_ecapa_init_params); bad sizes are
 * VPA_EINPUT ("ECAPA channels 30 not a multiple of scale 4"). */
int vpa_ecapa_new(size_t input_dim, const struct vpa_ecapa_opts *o, struct vpa_ecapa **out,
		  struct vpa_err *err);
void vpa_ecapa_free(struct vpa_ecapa *e);
/* Deep copy of topology, parameters, state (not activations). */
struct vpa_ecapa *vpa_ecapa_clone(const struct vpa_ecapa *e);
void vpa_ecapa_init_params(struct vpa_ecapa *e, uint64_t seed);
size_t vpa_ecapa_input_dim(const struct vpa_ecapa *e);
size_t vpa_ecapa_emb_dim(const struct vpa_ecapa *e);
const struct vpa_ecapa_opts *vpa_ecapa_opts(const struct vpa_ecapa *e); /* resolved sizes */
/* Number of trainable parameters. */
size_t vpa_ecapa_n_params(const struct vpa_ecapa *e);

/*
 * The learn/nn networks holding the parameters (for the optimiser and tests):
 * parameters and gradients are vpa_nn_params / vpa_nn_grads of each.
 */
size_t vpa_ecapa_n_nets(const struct vpa_ecapa *e);
struct vpa_nn *vpa_ecapa_net(struct vpa_ecapa *e, size_t i);

/*
 * Forward (n_seq, E) embeddings, borrowed until the next forward; the batch
 * stays borrowed until the backward.  Errors (VPA_EINPUT): an empty sequence,
 * a batch with no frame.
 */
int vpa_ecapa_forward(struct vpa_ecapa *e, const struct vpa_nn_batch *in, enum vpa_nn_mode mode,
		      struct vpa_err *err);
const float *vpa_ecapa_output(const struct vpa_ecapa *e, size_t *rows /* OUT */);
/* Back-propagate d(loss)/d(embeddings) (n_seq, E) of the last TRAIN forward:
 * gradients accumulate (vpa_ecapa_zero_grad), dx (rows, input_dim) unless NULL. */
void vpa_ecapa_backward(struct vpa_ecapa *e, const float *dout, float *dx);
void vpa_ecapa_zero_grad(struct vpa_ecapa *e);

/* ---------------------------------------- the parts, exposed for tests */

/* One SE-Res2Block of C channels, scale s, dilation d, bottleneck B. */
struct vpa_ecapa_block;
struct vpa_ecapa_block *vpa_ecapa_block_new(size_t C, size_t s, int d, size_t B, int smooth);
void vpa_ecapa_block_free(struct vpa_ecapa_block *k);
/* out (rows, C) borrowed until the next forward; x stays borrowed until backward. */
int vpa_ecapa_block_forward(struct vpa_ecapa_block *k, const float *x, const size_t *off,
			    size_t n_seq, enum vpa_nn_mode mode, const float **out,
			    struct vpa_err *err);
void vpa_ecapa_block_backward(struct vpa_ecapa_block *k, const float *dout, float *dx);
size_t vpa_ecapa_block_n_nets(const struct vpa_ecapa_block *k);
struct vpa_nn *vpa_ecapa_block_net(struct vpa_ecapa_block *k, size_t i);

/* Attentive statistics pooling of D channels with an attention layer of A. */
struct vpa_ecapa_asp;
struct vpa_ecapa_asp *vpa_ecapa_asp_new(size_t D, size_t A);
void vpa_ecapa_asp_free(struct vpa_ecapa_asp *a);
/* h (rows, D) -> out (n_seq, 2D) = [mu, sigma], borrowed until the next forward. */
int vpa_ecapa_asp_forward(struct vpa_ecapa_asp *a, const float *h, const size_t *off,
			  size_t n_seq, enum vpa_nn_mode mode, const float **out,
			  struct vpa_err *err);
void vpa_ecapa_asp_backward(struct vpa_ecapa_asp *a, const float *dout, float *dh);
struct vpa_nn *vpa_ecapa_asp_net(struct vpa_ecapa_asp *a); /* the attention MLP */

#endif
