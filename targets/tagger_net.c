/*
 * targets/tagger_net.c - the BiLSTM tagger itself (contracts in
 * targets/tagger.h): the network, its training with Adam/SGD or DP-SGD
 * (per sentence or per user) on learn/nn.h, its evaluation and the class
 * probabilities at a slot.  Shared by the target kind (targets/tagger.c)
 * and the d-exposure attack (attacks/dexposure_train.c), which retrains it
 * with canary sentences; it reads no options, only struct vpa_tagger_cfg.
 */
#include "targets/tagger.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

/* ---- the network ------------------------------------------------------------ */

static struct vpa_nn *make_net(const struct vpa_tagger_cfg *cfg, size_t vocab)
{
	struct vpa_nn *net = vpa_nn_new(0);
	vpa_nn_add_embedding(net, vocab, cfg->embedding);
	if (cfg->dropout > 0)
		vpa_nn_add_dropout(net, (float)cfg->dropout);
	vpa_nn_add_bilstm(net, cfg->hidden);
	if (cfg->dropout > 0)
		vpa_nn_add_dropout(net, (float)cfg->dropout);
	vpa_nn_add_dense(net, VPA_TAG_N);
	vpa_nn_init_params(net, cfg->seed);
	return net;
}

/* A batch under construction: ids and labels of the chosen examples. */
struct tbatch {
	size_t n_seq, cap_seq, n_row, cap_row;
	size_t *off;
	uint32_t *ids, *lab;
};

static void tb_clear(struct tbatch *b)
{
	b->n_seq = b->n_row = 0;
	if (!b->off) {
		b->cap_seq = 64;
		b->off = xmalloc(xmul(b->cap_seq + 1, sizeof(size_t)));
	}
	b->off[0] = 0;
}

static void tb_add(struct tbatch *b, const uint32_t *ids, const uint32_t *lab, size_t len)
{
	if (b->n_seq == b->cap_seq) {
		b->cap_seq *= 2;
		b->off = xrealloc(b->off, xmul(b->cap_seq + 1, sizeof(size_t)));
	}
	if (b->n_row + len > b->cap_row) {
		b->cap_row = 2 * (b->n_row + len) + 1024;
		b->ids = xrealloc(b->ids, xmul(b->cap_row, sizeof(uint32_t)));
		b->lab = xrealloc(b->lab, xmul(b->cap_row, sizeof(uint32_t)));
	}
	memcpy(b->ids + b->n_row, ids, len * sizeof(uint32_t));
	if (lab)
		memcpy(b->lab + b->n_row, lab, len * sizeof(uint32_t));
	b->n_row += len;
	b->off[++b->n_seq] = b->n_row;
}

static void tb_free(struct tbatch *b)
{
	free(b->off);
	free(b->ids);
	free(b->lab);
}

/* Token ids and labels of the whole corpus under d's vocabulary. */
static void corpus_ids(const struct vpa_tagger_data *d, uint32_t **ids, uint32_t **lab)
{
	size_t n = d->corpus.n_tok;
	*ids = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
	*lab = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
	for (size_t i = 0; i < n; i++) {
		(*ids)[i] = vpa_vocab_id(&d->vocab, d->corpus.word[i]);
		(*lab)[i] = d->cls[i];
	}
}

int vpa_tagger_train(const struct vpa_tagger_data *d, const struct vpa_tagger_cfg *cfg,
		     const size_t *sents, size_t n_sents, const struct vpa_tagger_extra *extra,
		     vpa_tagger_epoch_fn cb, void *arg, struct vpa_nn **out,
		     struct vpa_tagger_stats *st, struct vpa_err *err)
{
	int distinct = extra && extra->n_distinct > 1;
	size_t n_extra = !extra ? 0 : distinct ? extra->n_distinct : extra->reps, N = n_sents + n_extra;
	/* Privacy units: unit u holds examples uoff[u] .. uoff[u+1]-1 (indices
	 * into sents, then the extra copies); without dp_user one per example. */
	int by_user = cfg->dp && cfg->dp_user;
	size_t n_units = N, *uoff = NULL, *lot_off = NULL;
	if (by_user) {
		size_t m = cfg->user_sentences ? cfg->user_sentences : 1;
		uoff = xmalloc(xmul(N + 2, sizeof(size_t)));
		n_units = 0;
		for (size_t i = 0; i < n_sents; i++)
			if (i == 0 || i - uoff[n_units - 1] >= m ||
			    d->corpus.sent_doc[sents[i]] != d->corpus.sent_doc[sents[i - 1]])
				uoff[n_units++] = i;
		if (distinct)
			for (size_t e = 0; e < n_extra; e++)
				uoff[n_units++] = n_sents + e; /* each audit sentence a user */
		else if (n_extra)
			uoff[n_units++] = n_sents;
		uoff[n_units] = N;
	}
	struct vpa_nn *net = make_net(cfg, d->vocab.n);
	struct vpa_optim o;
	size_t np;
	float *params = vpa_nn_params(net, &np);
	(void)params;
	if (cfg->adam)
		vpa_optim_init_adam(&o, np, cfg->lr, 0.9, 0.999, 1e-8, cfg->weight_decay);
	else
		vpa_optim_init_sgd(&o, np, cfg->lr, 0.9, cfg->weight_decay);
	uint32_t *ids, *lab;
	corpus_ids(d, &ids, &lab);
	struct tbatch b = {0};
	tb_clear(&b);
	size_t *order = xmalloc(xmul(N ? N : 1, sizeof(size_t)));
	struct vpa_rng rs, rdp;
	vpa_rng_split(&rs, cfg->seed, "tagger/order");
	vpa_rng_split(&rdp, cfg->seed, "tagger/dp-noise");
	vpa_nn_set_seed(net, cfg->seed ^ 0x5eedu);
	int rc = 0;
	memset(st, 0, sizeof(*st));
	st->epsilon = NAN;
	st->n_params = np;
	double q = n_units ? (double)cfg->batch / (double)n_units : 1;
	if (q > 1)
		q = 1;
	size_t steps_per_epoch = cfg->dp ? (size_t)llround(1.0 / q) : 0;
	if (cfg->dp && steps_per_epoch == 0)
		steps_per_epoch = 1;
	double sigma = cfg->noise_multiplier;
	if (cfg->dp) {
		double steps = (double)steps_per_epoch * (double)cfg->epochs;
		if (cfg->target_epsilon > 0 &&
		    (rc = vpa_dp_sigma(q, cfg->target_epsilon, steps, cfg->delta, &sigma, err)))
			goto out;
		if ((rc = vpa_dp_epsilon(q, sigma, steps, cfg->delta, &st->epsilon, NULL, err)))
			goto out;
		st->sigma = sigma;
		st->q = q;
		st->steps = steps;
		st->units = n_units;
	}
	if (by_user)
		lot_off = xmalloc(xmul(n_units + 1, sizeof(size_t)));
	double t0 = vpa_now(), tokens = 0;
	for (size_t ep = 1; ep <= cfg->epochs && !rc; ep++) {
		double lsum = 0, lw = 0;
		if (!cfg->dp) {
			for (size_t i = 0; i < N; i++)
				order[i] = i;
			for (size_t i = N; i > 1; i--) {
				size_t j = (size_t)vpa_rng_below(&rs, i);
				size_t t = order[i - 1];
				order[i - 1] = order[j];
				order[j] = t;
			}
		}
		size_t n_steps = cfg->dp ? steps_per_epoch : (N + cfg->batch - 1) / cfg->batch;
		for (size_t s = 0; s < n_steps && !rc; s++) {
			size_t n_lot_units = 0;
			tb_clear(&b);
			if (cfg->dp) {
				/* Poisson sampling: each unit independently with prob. q */
				size_t cnt = 0, n_lot = 0;
				for (size_t u = 0; u < n_units; u++) {
					if (!(vpa_rng_uniform(&rs) < q))
						continue;
					if (!by_user) {
						order[cnt++] = u;
						continue;
					}
					lot_off[n_lot++] = cnt;
					for (size_t i = uoff[u]; i < uoff[u + 1]; i++)
						order[cnt++] = i;
				}
				if (by_user)
					lot_off[n_lot] = cnt;
				n_lot_units = by_user ? n_lot : cnt;
				for (size_t k = 0; k < cnt; k++) {
					size_t e = order[k];
					if (e < n_sents) {
						size_t sn = sents[e], o0 = d->corpus.sent_off[sn];
						tb_add(&b, ids + o0, lab + o0,
						       d->corpus.sent_off[sn + 1] - o0);
					} else {
						size_t x = distinct ? (e - n_sents) * extra->len : 0;
						tb_add(&b, extra->ids + x, extra->labels + x, extra->len);
					}
				}
			} else {
				size_t lo = s * cfg->batch, hi = lo + cfg->batch < N ? lo + cfg->batch : N;
				for (size_t k = lo; k < hi; k++) {
					size_t e = order[k];
					if (e < n_sents) {
						size_t sn = sents[e], o0 = d->corpus.sent_off[sn];
						tb_add(&b, ids + o0, lab + o0,
						       d->corpus.sent_off[sn + 1] - o0);
					} else {
						size_t x = distinct ? (e - n_sents) * extra->len : 0;
						tb_add(&b, extra->ids + x, extra->labels + x, extra->len);
					}
				}
			}
			struct vpa_nn_batch in = {b.n_seq, b.off, NULL, b.ids};
			struct vpa_nn_targets t;
			vpa_nn_targets_init(&t);
			t.labels = b.lab;
			double loss = 0;
			if (cfg->dp) {
				/* a deliberate defect (cfg->fault, for testing an audit):
				 * skip_noise: sigma 0; skip_clipping: a clip no gradient
				 * reaches, with sigma scaled so the noise stays sigma * clip */
				double clip = cfg->clip, sg = sigma;
				if (cfg->fault == 1)
					sg = 0;
				else if (cfg->fault == 2) {
					clip = 1e30;
					sg = sigma * cfg->clip / clip;
				}
				rc = vpa_nn_dpsgd_step_units(net, &o, &in, &t, lot_off, n_lot_units,
							     clip, sg, q * (double)n_units,
							     &rdp, &loss, NULL, err);
				lsum += loss * (double)b.n_seq;
				lw += (double)b.n_seq;
			} else if (b.n_seq) {
				rc = vpa_nn_train_step(net, &o, &in, &t, 0, &loss, err);
				lsum += loss * (double)b.n_row;
				lw += (double)b.n_row;
			}
			tokens += (double)b.n_row;
		}
		if (rc)
			break;
		st->train_loss = lw > 0 ? lsum / lw : NAN;
		if (cb)
			rc = cb(arg, ep, net, st->train_loss, err);
	}
	st->seconds = vpa_now() - t0;
	st->tokens_per_s = st->seconds > 0 ? tokens / st->seconds : 0;
out:
	tb_free(&b);
	free(uoff);
	free(lot_off);
	free(order);
	free(ids);
	free(lab);
	vpa_optim_release(&o);
	if (rc) {
		vpa_nn_free(net);
		net = NULL;
	}
	*out = net;
	return rc;
}

int vpa_tagger_eval(struct vpa_nn *net, const struct vpa_tagger_data *d, const size_t *sents,
		    size_t n, double *accuracy, double *loss, struct vpa_err *err)
{
	uint32_t *ids, *lab;
	corpus_ids(d, &ids, &lab);
	struct tbatch b = {0};
	size_t right = 0, total = 0;
	double lsum = 0;
	int rc = 0;
	for (size_t lo = 0; lo < n && !rc; lo += 256) {
		size_t hi = lo + 256 < n ? lo + 256 : n;
		tb_clear(&b);
		for (size_t k = lo; k < hi; k++) {
			size_t sn = sents[k], o0 = d->corpus.sent_off[sn];
			tb_add(&b, ids + o0, lab + o0, d->corpus.sent_off[sn + 1] - o0);
		}
		struct vpa_nn_batch in = {b.n_seq, b.off, NULL, b.ids};
		if ((rc = vpa_nn_forward(net, &in, VPA_NN_EVAL, err)))
			break;
		size_t R, K;
		const float *z = vpa_nn_output(net, &R, &K);
		for (size_t r = 0; r < R; r++) {
			const float *zr = z + r * K;
			size_t best = 0;
			double mx = zr[0];
			for (size_t k = 1; k < K; k++)
				if (zr[k] > zr[best])
					best = k;
			mx = zr[best];
			double se = 0;
			for (size_t k = 0; k < K; k++)
				se += exp((double)zr[k] - mx);
			lsum += mx + log(se) - (double)zr[b.lab[r]];
			right += best == b.lab[r];
			total++;
		}
	}
	tb_free(&b);
	free(ids);
	free(lab);
	if (!rc && total == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "no token to evaluate the tagger on");
	if (!rc) {
		*accuracy = (double)right / (double)total;
		if (loss)
			*loss = lsum / (double)total;
	}
	return rc;
}

int vpa_tagger_slot_probs(struct vpa_nn *net, const uint32_t *ctx, size_t len, size_t slot,
			  const uint32_t *words, size_t n, double *probs, struct vpa_err *err)
{
	if (slot >= len)
		VPA_BUG("slot %zu of %zu", slot, len);
	int rc = 0;
	uint32_t *seq = xmalloc(xmul(len, sizeof(uint32_t)));
	memcpy(seq, ctx, len * sizeof(uint32_t));
	struct tbatch b = {0};
	for (size_t lo = 0; lo < n && !rc; lo += 2048) {
		size_t hi = lo + 2048 < n ? lo + 2048 : n;
		tb_clear(&b);
		for (size_t i = lo; i < hi; i++) {
			seq[slot] = words[i];
			tb_add(&b, seq, NULL, len);
		}
		struct vpa_nn_batch in = {b.n_seq, b.off, NULL, b.ids};
		if ((rc = vpa_nn_forward(net, &in, VPA_NN_EVAL, err)))
			break;
		size_t R, K;
		const float *z = vpa_nn_output(net, &R, &K);
		for (size_t i = lo; i < hi; i++) {
			const float *zr = z + ((i - lo) * len + slot) * K;
			double mx = zr[0], se = 0;
			for (size_t k = 1; k < K; k++)
				if (zr[k] > mx)
					mx = zr[k];
			for (size_t k = 0; k < K; k++)
				se += exp((double)zr[k] - mx);
			for (size_t k = 0; k < K; k++)
				probs[i * K + k] = exp((double)zr[k] - mx) / se;
		}
	}
	tb_free(&b);
	free(seq);
	return rc;
}
