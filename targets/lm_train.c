/*
 * targets/lm_train.c - training of the `language_model` kind's LSTM
 * (contracts in targets/lm_int.h and targets/lm.h; split from targets/lm.c):
 * the training sentences and mini-batches, central training (Adam, or DP-SGD
 * of Abadi et al. 2016 with the RDP accountant) and federated training (Liu et
 * al.: Zipf clients, Poisson cohorts, FedAvg or FedAdam eq. 6-8, clipped and
 * noised client deltas), checkpoints, simulated noisy transcription.
 */
#include "targets/lm_int.h"

#include "base/la.h"
#include "metrics/metrics.h"
#include "metrics/pld.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- training data ------------------------------------------------------------ */

void vpa_lm_sents_push(struct sents *s, const uint32_t *t, size_t len, const float *conf)
{
	if (!s->off) {
		s->cap_s = 1024;
		s->off = xmalloc(s->cap_s * sizeof(size_t));
		s->off[0] = 0;
	}
	if (s->n + 2 > s->cap_s) {
		s->cap_s *= 2;
		s->off = xrealloc(s->off, xmul(s->cap_s, sizeof(size_t)));
	}
	size_t o = s->off[s->n];
	if (o + len > s->cap_t) {
		while (o + len > s->cap_t)
			s->cap_t = s->cap_t ? 2 * s->cap_t : 65536;
		s->tok = xrealloc(s->tok, xmul(s->cap_t, sizeof(uint32_t)));
		if (s->conf || conf)
			s->conf = xrealloc(s->conf, xmul(s->cap_t, sizeof(float)));
	}
	memcpy(s->tok + o, t, len * sizeof(uint32_t));
	if (s->conf)
		for (size_t i = 0; i < len; i++)
			s->conf[o + i] = conf ? conf[i] : 1.0f;
	s->off[++s->n] = o + len;
}

void vpa_lm_sents_release(struct sents *s)
{
	free(s->tok);
	free(s->off);
	free(s->conf);
	free(s->client);
	memset(s, 0, sizeof(*s));
}

/* A training batch of sentences idx (n): inputs <s> w1..wn, labels w1..wn </s>. */
struct batch {
	uint32_t *ids, *lab;
	float *w;
	size_t *off;
	size_t cap, cap_s;
};

void vpa_lm_utt_mean_weights(const size_t *off, size_t n, float *w)
{
	size_t R = off[n], n_eff = 0;
	for (size_t j = 0; j < n; j++) {
		int any = 0;
		for (size_t r = off[j]; r < off[j + 1]; r++)
			any |= w[r] != 0;
		n_eff += any;
	}
	if (n_eff == 0)
		return;
	for (size_t j = 0; j < n; j++) {
		size_t T = off[j + 1] - off[j];
		double f = (double)R / ((double)n_eff * (double)T);
		for (size_t r = off[j]; r < off[j + 1]; r++)
			w[r] = (float)(w[r] * f);
	}
}

/* utt_mean: the loss of Liu et al. eq. 2-4, the mean over the batch's
 * sentences of each one's (weighted) mean over its tokens; else the mean
 * over all the batch's tokens. */
static void batch_make(struct batch *b, const struct sents *s, const size_t *idx, size_t n,
		       uint32_t bos, uint32_t eos, const float *sent_w, int tok_w, int utt_mean,
		       struct vpa_nn_batch *nb, struct vpa_nn_targets *tg)
{
	size_t rows = 0;
	for (size_t i = 0; i < n; i++)
		rows += s->off[idx[i] + 1] - s->off[idx[i]] + 1;
	if (rows > b->cap) {
		b->cap = 2 * rows;
		b->ids = xrealloc(b->ids, xmul(b->cap, sizeof(uint32_t)));
		b->lab = xrealloc(b->lab, xmul(b->cap, sizeof(uint32_t)));
		b->w = xrealloc(b->w, xmul(b->cap, sizeof(float)));
	}
	if (n + 1 > b->cap_s) {
		b->cap_s = 2 * (n + 1);
		b->off = xrealloc(b->off, xmul(b->cap_s, sizeof(size_t)));
	}
	size_t r = 0;
	b->off[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t a = s->off[idx[i]], e = s->off[idx[i] + 1];
		b->ids[r] = bos;
		for (size_t k = a; k < e; k++) {
			b->lab[r] = s->tok[k];
			b->w[r] = tok_w && s->conf ? s->conf[k] : (sent_w ? sent_w[idx[i]] : 1.0f);
			r++;
			b->ids[r] = s->tok[k];
		}
		b->lab[r] = eos;
		b->w[r] = tok_w ? 1.0f : (sent_w ? sent_w[idx[i]] : 1.0f);
		r++;
		b->off[i + 1] = r;
	}
	nb->n_seq = n;
	nb->off = b->off;
	nb->x = NULL;
	nb->ids = b->ids;
	vpa_nn_targets_init(tg);
	tg->labels = b->lab;
	tg->weights = (sent_w || tok_w || utt_mean) ? b->w : NULL;
	if (utt_mean)
		vpa_lm_utt_mean_weights(b->off, n, b->w);
}

static void batch_release(struct batch *b)
{
	free(b->ids);
	free(b->lab);
	free(b->w);
	free(b->off);
}

int vpa_lm_perplexity(struct vpa_nn *net, const uint32_t *tok, const size_t *off, size_t n,
		      uint32_t bos, uint32_t eos, double *ppl, struct vpa_err *err)
{
	struct sents s = {(uint32_t *)tok, (size_t *)off, NULL, n, 0, 0, NULL};
	struct batch b = {0};
	double nll = 0, rows = 0;
	int rc = 0;
	size_t *idx = xmalloc(64 * sizeof(size_t));
	for (size_t i0 = 0; i0 < n && !rc; i0 += 64) {
		size_t m = n - i0 < 64 ? n - i0 : 64;
		for (size_t i = 0; i < m; i++)
			idx[i] = i0 + i;
		struct vpa_nn_batch nb;
		struct vpa_nn_targets tg;
		batch_make(&b, &s, idx, m, bos, eos, NULL, 0, 0, &nb, &tg);
		double loss;
		if ((rc = vpa_nn_forward(net, &nb, VPA_NN_EVAL, err)) ||
		    (rc = vpa_nn_loss(net, &tg, &loss, NULL, err)))
			break;
		nll += loss * (double)b.off[m];
		rows += (double)b.off[m];
	}
	free(idx);
	batch_release(&b);
	*ppl = rows > 0 ? exp(nll / rows) : NAN;
	return rc;
}

/* ---- training ------------------------------------------------------------------------- */

/*
 * The claimed epsilon of Poisson-subsampled Gaussian training (DP-SGD's lots,
 * federated cohorts): the RDP accountant's and the PLD accountant's (an upper
 * bound by its pessimistic discretisation, proved against its references in
 * metrics/DP.md), both recorded; the claim, `epsilon`, is the smaller (both
 * are valid upper bounds) and `epsilon_accountant` names it.  A PLD grid that
 * does not fit leaves the claim to RDP (epsilon_pld null).
 */
static int claim_epsilon(double q, double sigma, double steps, double delta,
			 struct vpa_json *info, struct vpa_err *err)
{
	double rdp = NAN, pld = NAN;
	int rc = vpa_dp_epsilon(q, sigma, steps, delta, &rdp, NULL, err);
	if (rc)
		return rc;
	pld = vpa_pld_claim(q, sigma, steps, delta);
	int use_pld = pld == pld && pld < rdp;
	vpa_json_set_num(info, "epsilon", use_pld ? pld : rdp);
	vpa_json_set_str(info, "epsilon_accountant", use_pld ? "pld" : "rdp");
	vpa_json_set_num(info, "epsilon_rdp", rdp);
	vpa_json_set_num(info, "epsilon_pld", pld);
	return 0;
}


static void snapshot(struct vpa_lm_target *lt, double when)
{
	size_t np;
	float *p = vpa_nn_params(lt->net, &np);
	struct vpa_lm_checkpoint *c = &lt->ckpt[lt->n_ckpt++];
	c->when = when;
	c->params = xmalloc(xmul(np, sizeof(float)));
	memcpy(c->params, p, np * sizeof(float));
}

/* Is step k (1-based) of n a checkpoint, with m checkpoints evenly spaced? */
static int is_ckpt(size_t k, size_t n, size_t m)
{
	if (m >= n)
		return 1;
	for (size_t j = 1; j <= m; j++)
		if (k == (j * n + m - 1) / m)
			return 1;
	return 0;
}

static void shuffle(size_t *a, size_t n, struct vpa_rng *r)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = vpa_rng_below(r, i);
		size_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

int vpa_lm_train_central(struct vpa_run_ctx *ctx, struct vpa_lm_target *lt, const struct sents *tr,
			 const float *sent_w, int tok_w, const struct train_cfg *c,
			 struct vpa_json *info, struct vpa_err *err)
{
	size_t np, N = tr->n;
	float *w = vpa_nn_params(lt->net, &np);
	struct vpa_optim o;
	vpa_optim_init_adam(&o, np, c->lr, 0.9, 0.999, 1e-8, 0);
	struct vpa_rng r, nr;
	vpa_rng_split(&r, ctx->seed, "lm/batches");
	vpa_rng_split(&nr, ctx->seed, "lm/dp-noise");
	size_t *idx = xmalloc(xmul(N, sizeof(size_t)));
	for (size_t i = 0; i < N; i++)
		idx[i] = i;
	struct batch b = {0};
	int rc = 0;
	double t0 = vpa_now(), last_loss = NAN, tokens = 0;
	size_t clipped = 0, examples = 0;
	double q = c->dp ? (double)c->batch / (double)N : 0;
	size_t steps_per_epoch = (N + c->batch - 1) / c->batch;
	for (size_t ep = 1; ep <= c->epochs && !rc; ep++) {
		double sum = 0;
		size_t nb_done = 0;
		if (!c->dp)
			shuffle(idx, N, &r);
		for (size_t s = 0; s < steps_per_epoch && !rc; s++) {
			size_t m;
			const size_t *sel;
			if (c->dp) { /* Poisson sampling of a lot */
				m = 0;
				for (size_t i = 0; i < N; i++)
					if (vpa_rng_uniform(&r) < q)
						idx[m++] = i;
				sel = idx;
			} else {
				sel = idx + s * c->batch;
				m = N - s * c->batch < c->batch ? N - s * c->batch : c->batch;
			}
			double loss = 0;
			if (m == 0) { /* an empty lot still releases noise */
				float *g = vpa_nn_grads(lt->net, &np);
				for (size_t i = 0; i < np; i++)
					g[i] = c->fault == 1 ? 0.0f
						: (float)(c->sigma * c->clip * vpa_rng_normal(&nr) / (q * N));
				vpa_optim_step(&o, w, g);
				continue;
			}
			struct vpa_nn_batch nb;
			struct vpa_nn_targets tg;
			/* DP-SGD's per-example gradients are already each sentence's own
			 * mean over its tokens, summed and divided by the expected lot */
			batch_make(&b, tr, sel, m, lt->bos, lt->eos, sent_w, tok_w,
				   c->utt_mean && !c->dp, &nb, &tg);
			tokens += (double)b.off[m];
			if (c->dp) {
				size_t ncl = 0;
				/* dp_fault (testing an audit): skip_noise draws no noise;
				 * skip_clipping clips at a norm no gradient reaches and keeps
				 * the noise's std sigma * clip */
				double clip = c->clip, sigma = c->sigma;
				if (c->fault == 1)
					sigma = 0;
				else if (c->fault == 2) {
					clip = 1e30;
					sigma = c->sigma * c->clip / clip;
				}
				rc = vpa_nn_dpsgd_step(lt->net, &o, &nb, &tg, clip, sigma, q * N, &nr,
						       &loss, &ncl, err);
				clipped += ncl;
				examples += m;
			} else {
				rc = vpa_nn_train_step(lt->net, &o, &nb, &tg, c->grad_clip, &loss, err);
			}
			sum += loss;
			nb_done++;
			vpa_progress("training", (ep - 1) * steps_per_epoch + s + 1,
				     c->epochs * steps_per_epoch, t0);
		}
		last_loss = nb_done ? sum / (double)nb_done : NAN;
		if (is_ckpt(ep, c->epochs, c->n_ckpt))
			snapshot(lt, (double)ep);
	}
	double secs = vpa_now() - t0;
	vpa_json_set_num(info, "train_loss", last_loss);
	vpa_json_set_num(info, "train_seconds", secs);
	vpa_json_set_num(info, "tokens_per_second", secs > 0 ? tokens / secs : NAN);
	if (c->dp) {
		double eps = NAN;
		double steps = (double)(c->epochs * steps_per_epoch);
		(void)eps;
		if (!rc)
			rc = claim_epsilon(q, c->sigma, steps, c->delta, info, err);
		vpa_json_set_num(info, "q", q);
		vpa_json_set_num(info, "steps", steps);
		vpa_json_set_num(info, "frac_clipped", examples ? (double)clipped / (double)examples : 0);
	}
	(void)ctx;
	free(idx);
	batch_release(&b);
	vpa_optim_release(&o);
	return rc;
}

/* Clients: Zipf assignment of sentences (P(k) ~ k^-s) or one per document. */
size_t vpa_lm_assign_clients(struct sents *tr, const size_t *doc, size_t n_doc, int by_doc,
			     size_t n_clients, double s, size_t n_canary_sents,
			     const size_t *canary_group, struct vpa_rng *r)
{
	tr->client = xmalloc(xmul(tr->n, sizeof(size_t)));
	size_t K = by_doc ? n_doc : n_clients;
	double *cdf = xmalloc(xmul(K, sizeof(double)));
	double acc = 0;
	for (size_t k = 0; k < K; k++)
		cdf[k] = (acc += by_doc ? 1.0 : pow((double)(k + 1), -s));
	size_t n_text = tr->n - n_canary_sents;
	for (size_t i = 0; i < n_text; i++) {
		if (by_doc) {
			tr->client[i] = doc[i];
			continue;
		}
		double u = vpa_rng_uniform(r) * acc;
		size_t lo = 0, hi = K - 1;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (cdf[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
		tr->client[i] = lo;
	}
	/* every copy of one secret goes to one client, chosen uniformly */
	size_t last = SIZE_MAX, cl = 0;
	for (size_t i = n_text; i < tr->n; i++) {
		if (canary_group[i - n_text] != last) {
			last = canary_group[i - n_text];
			cl = vpa_rng_below(r, K);
		}
		tr->client[i] = cl;
	}
	free(cdf);
	return K;
}

int vpa_lm_train_federated(struct vpa_run_ctx *ctx, struct vpa_lm_target *lt,
			   const struct sents *tr, size_t K, const float *sent_w, int tok_w,
			   const struct train_cfg *c, struct vpa_json *info, struct vpa_err *err)
{
	size_t np;
	float *wg = vpa_nn_params(lt->net, &np);
	struct vpa_nn *local = vpa_nn_clone(lt->net);
	float *wl = vpa_nn_params(local, &np);
	/* client sentence lists */
	size_t *cnt = xcalloc(K + 1, sizeof(size_t)), *list = xmalloc(xmul(tr->n, sizeof(size_t)));
	for (size_t i = 0; i < tr->n; i++)
		cnt[tr->client[i] + 1]++;
	for (size_t k = 0; k < K; k++)
		cnt[k + 1] += cnt[k];
	size_t *fill = xmalloc(xmul(K, sizeof(size_t)));
	memcpy(fill, cnt, K * sizeof(size_t));
	for (size_t i = 0; i < tr->n; i++)
		list[fill[tr->client[i]]++] = i;
	size_t n_nonempty = 0;
	for (size_t k = 0; k < K; k++)
		n_nonempty += cnt[k + 1] > cnt[k];
	double q = (double)c->cohort / (double)K;
	if (q > 1)
		q = 1;
	float *agg = xmalloc(xmul(np, sizeof(float))), *delta = xmalloc(xmul(np, sizeof(float)));
	float *m1 = xcalloc(np, sizeof(float)), *v1 = xcalloc(np, sizeof(float));
	struct vpa_rng r, nr;
	vpa_rng_split(&r, ctx->seed, "lm/cohorts");
	vpa_rng_split(&nr, ctx->seed, "lm/dp-noise");
	struct batch b = {0};
	struct vpa_optim lo;
	vpa_optim_init_sgd(&lo, np, c->local_lr, 0, 0);
	int rc = 0;
	double t0 = vpa_now(), tokens = 0, cohort_sum = 0;
	size_t clipped = 0, participations = 0;
	size_t *cidx = xmalloc(xmul(tr->n, sizeof(size_t)));
	for (size_t rd = 1; rd <= c->rounds && !rc; rd++) {
		memset(agg, 0, np * sizeof(float));
		double wsum = 0;
		size_t n_sel = 0;
		for (size_t k = 0; k < K && !rc; k++) {
			if (vpa_rng_uniform(&r) >= q)
				continue;
			size_t n = cnt[k + 1] - cnt[k];
			n_sel++;
			if (n == 0)
				continue; /* sampled but holds no data: its delta is 0 */
			memcpy(wl, wg, np * sizeof(float));
			memcpy(cidx, list + cnt[k], n * sizeof(size_t));
			double ntok = 0;
			for (size_t e = 0; e < c->local_epochs && !rc; e++) {
				shuffle(cidx, n, &r);
				for (size_t s = 0; s < n && !rc; s += c->local_batch) {
					size_t m = n - s < c->local_batch ? n - s : c->local_batch;
					struct vpa_nn_batch nb;
					struct vpa_nn_targets tg;
					batch_make(&b, tr, cidx + s, m, lt->bos, lt->eos, sent_w, tok_w,
						   c->utt_mean, &nb, &tg);
					double loss;
					rc = vpa_nn_train_step(local, &lo, &nb, &tg, c->grad_clip, &loss, err);
					ntok += (double)b.off[m];
				}
			}
			tokens += ntok;
			for (size_t i = 0; i < np; i++)
				delta[i] = wl[i] - wg[i];
			double weight;
			if (c->dp) {
				/* dp_fault skip_clipping (testing an audit): the delta as it is */
				if (c->fault != 2 && vpa_nn_clip_norm(delta, np, c->clip) > c->clip)
					clipped++;
				weight = 1;
			} else {
				weight = ntok; /* weighted by the client's tokens */
			}
			for (size_t i = 0; i < np; i++)
				agg[i] += (float)weight * delta[i];
			wsum += weight;
			participations++;
		}
		cohort_sum += (double)n_sel;
		if (c->dp) {
			double denom = q * (double)K;
			for (size_t i = 0; i < np; i++)
				agg[i] = (float)((agg[i] + (c->fault == 1 ? 0.0
							  : c->sigma * c->clip * vpa_rng_normal(&nr))) / denom);
		} else if (wsum > 0) {
			for (size_t i = 0; i < np; i++)
				agg[i] = (float)(agg[i] / wsum);
		}
		if (c->fedadam == 1) { /* Liu et al. eq. 6-8 */
			vpa_fedadam_step(VPA_FEDADAM_LIU, c->server_lr, c->beta1, c->beta2,
					 c->server_eps, (long)rd, m1, v1, wg, agg, np);
		} else if (c->fedadam == 2) { /* Reddi et al. 2021, Algorithm 2 */
			vpa_fedadam_step(VPA_FEDADAM_REDDI, c->server_lr, c->beta1, c->beta2, c->tau,
					 (long)rd, m1, v1, wg, agg, np);
		} else {
			for (size_t i = 0; i < np; i++)
				wg[i] += (float)(c->server_lr * agg[i]);
		}
		vpa_progress("federated rounds", rd, c->rounds, t0);
		if (is_ckpt(rd, c->rounds, c->n_ckpt))
			snapshot(lt, (double)rd);
	}
	double secs = vpa_now() - t0;
	vpa_json_set_num(info, "clients", (double)K);
	vpa_json_set_num(info, "clients_with_data", (double)n_nonempty);
	vpa_json_set_num(info, "q", q);
	vpa_json_set_num(info, "rounds", (double)c->rounds);
	vpa_json_set_num(info, "mean_cohort", cohort_sum / (double)c->rounds);
	vpa_json_set_num(info, "train_seconds", secs);
	vpa_json_set_num(info, "tokens_per_second", secs > 0 ? tokens / secs : NAN);
	if (c->dp) {
		double eps = NAN;
		(void)eps;
		if (!rc)
			rc = claim_epsilon(q, c->sigma, (double)c->rounds, c->delta, info, err);
		vpa_json_set_num(info, "frac_clipped",
				 participations ? (double)clipped / (double)participations : 0);
	}
	free(cidx);
	free(cnt);
	free(list);
	free(fill);
	free(agg);
	free(delta);
	free(m1);
	free(v1);
	batch_release(&b);
	vpa_optim_release(&lo);
	vpa_nn_free(local);
	return rc;
}

/*
 * Simulated noisy transcription (for the confidence weights): each token is
 * replaced by a uniformly drawn vocabulary word with probability wer; its
 * confidence is drawn from N(0.85, 0.1) when correct and N(0.35, 0.15) when
 * wrong, clipped to [0.01, 1].  Returns the number of substituted tokens.
 */
size_t vpa_lm_noisy_transcription(struct sents *s, size_t n_text, size_t V, double wer,
				  struct vpa_rng *r)
{
	size_t n_sub = 0, end = s->off[n_text];
	s->conf = xrealloc(s->conf, xmul(s->cap_t ? s->cap_t : 1, sizeof(float)));
	for (size_t i = 0; i < s->off[s->n]; i++)
		s->conf[i] = 1.0f;
	for (size_t i = 0; i < end; i++) {
		double cf;
		if (vpa_rng_uniform(r) < wer) {
			s->tok[i] = (uint32_t)(1 + vpa_rng_below(r, V - 1));
			cf = 0.35 + 0.15 * vpa_rng_normal(r);
			n_sub++;
		} else {
			cf = 0.85 + 0.1 * vpa_rng_normal(r);
		}
		s->conf[i] = (float)fmin(1, fmax(0.01, cf));
	}
	return n_sub;
}
