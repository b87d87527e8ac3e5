/*
 * targets/lm_int.h - the parts of the `language_model` kind shared by
 * targets/lm.c (keys, canaries' insertion, building) and targets/lm_train.c
 * (training data, central and federated training): internal to the kind.
 */
#ifndef VPA_LM_INT_H
#define VPA_LM_INT_H

#include "targets/lm.h"

/* Sentences as token ids, concatenated (training and held-out text). */
struct sents {
	uint32_t *tok;  /* (off[n]) */
	size_t *off;    /* (n + 1) */
	float *conf;    /* (off[n]) token confidences, or NULL */
	size_t n, cap_t, cap_s;
	size_t *client; /* (n) federated client of each sentence, or NULL */
};

/* The training settings of the scenario (targets/lm.c reads them). */
struct train_cfg {
	size_t epochs, batch, rounds, cohort, local_epochs, local_batch, n_ckpt;
	double lr, grad_clip, sigma, clip, delta, local_lr, server_lr, beta1, beta2, tau, server_eps;
	int federated, fedadam, dp; /* fedadam: 0 FedAvg, 1 Liu et al., 2 Reddi et al. */
	int utt_mean;               /* loss_average: utterance (Liu et al. eq. 2-4) */
	const char *conf_mode;
	double threshold;
};

void vpa_lm_sents_push(struct sents *s, const uint32_t *t, size_t len, const float *conf);
void vpa_lm_sents_release(struct sents *s);

/* Clients: Zipf assignment of sentences (P(k) ~ k^-s) or one per document;
 * every copy of one secret to one client.  Returns the number of clients. */
size_t vpa_lm_assign_clients(struct sents *tr, const size_t *doc, size_t n_doc, int by_doc,
			     size_t n_clients, double s, size_t n_canary_sents,
			     const size_t *canary_group, struct vpa_rng *r);
/* Simulated noisy transcription of the first n_text sentences (confidence
 * weights); returns the number of substituted tokens. */
size_t vpa_lm_noisy_transcription(struct sents *s, size_t n_text, size_t V, double wer,
				  struct vpa_rng *r);

/* Central (Adam or DP-SGD) and federated (FedAvg / FedAdam, DP) training of
 * lt->net with checkpoints into lt->ckpt; figures and numbers into info. */
int vpa_lm_train_central(struct vpa_run_ctx *ctx, struct vpa_lm_target *lt,
			 const struct sents *tr, const float *sent_w, int tok_w,
			 const struct train_cfg *c, struct vpa_json *info, struct vpa_err *err);
int vpa_lm_train_federated(struct vpa_run_ctx *ctx, struct vpa_lm_target *lt,
			   const struct sents *tr, size_t K, const float *sent_w, int tok_w,
			   const struct train_cfg *c, struct vpa_json *info, struct vpa_err *err);

#endif
