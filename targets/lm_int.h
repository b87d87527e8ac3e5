/*
 * targets/lm_int.h - the parts of the `language_model` kind shared by its
 * files, internal to the kind: targets/lm.c (keys, validation),
 * targets/lm_build.c (canaries' insertion, building), targets/lm_canary.c
 * (canary names and templates) and targets/lm_train.c (training data,
 * central and federated training).
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

/* The training settings of the scenario (targets/lm_build.c fills them from
 * struct vpa_lm_opts). */
struct train_cfg {
	size_t epochs, batch, rounds, cohort, local_epochs, local_batch, n_ckpt;
	double lr, grad_clip, sigma, clip, delta, local_lr, server_lr, beta1, beta2, tau, server_eps;
	int federated, fedadam, dp; /* fedadam: 0 FedAvg, 1 Liu et al., 2 Reddi et al. */
	int utt_mean;               /* loss_average: utterance (Liu et al. eq. 2-4) */
	const char *conf_mode;
	double threshold;
	int fault; /* dp_fault: 0 none, 1 skip_noise, 2 skip_clipping (for testing an audit) */
};

/* The kind's build and free hooks (targets/lm_build.c); opts: struct vpa_lm_opts. */
int vpa_lm_build(struct vpa_run_ctx *ctx, const void *opts, struct vpa_target *out,
		 struct vpa_err *err);
void vpa_lm_free(struct vpa_target *t);

/* The name of canary i (0-based) of the list, before its "-xCOUNT": its
 * `name` (NULL when not written), else c1, c2, ... (targets/lm_canary.c). */
void vpa_lm_canary_base(const char *name, size_t i, char *buf, size_t cap);

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
