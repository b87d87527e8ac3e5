/*
 * targets/fl_speaker_train.c - federated training of the target kind
 * `fl_speaker_classifier` (split from targets/fl_speaker.c; contracts in
 * targets/fl_speaker_int.h and targets/fl_speaker.h): the regimes' names, the
 * parallel loop over items, the devices (release of an update under a regime, the local update),
 * the privacy set-up of a regime, and federated averaging over sampled cohorts
 * with the test accuracy every `eval_every` rounds.
 */
#include "targets/fl_speaker_int.h"
#include "base/dist.h"
#include "base/la.h"
#include "learn/nn.h"
#include "metrics/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the regimes' names ---------------------------------------------------------
 * Here, not in targets/fl_speaker.c: training names its random streams after
 * the regime, and fl_speaker.c calls this file, never the other way round. */

const char *const vpa_fls_regime_names[VPA_FLS_N_REGIMES] = {"none", "local", "central",
							     "central_local"};

int vpa_fls_regime_parse(const char *s)
{
	for (int i = 0; i < VPA_FLS_N_REGIMES; i++)
		if (!strcmp(s, vpa_fls_regime_names[i]))
			return i;
	return -1;
}

/* ---- a parallel loop over items with per-thread state ------------------------ */

struct par {
	size_t n, next;
	pthread_mutex_t mu;
	void (*fn)(void *arg, size_t i, size_t tid);
	void *arg;
};
struct par_th {
	struct par *p;
	size_t tid;
};

static void *par_worker(void *a)
{
	struct par_th *t = a;
	for (;;) {
		pthread_mutex_lock(&t->p->mu);
		size_t i = t->p->next++;
		pthread_mutex_unlock(&t->p->mu);
		if (i >= t->p->n)
			break;
		t->p->fn(t->p->arg, i, t->tid);
	}
	return NULL;
}

void vpa_fls_par_for(size_t n, size_t nth, void (*fn)(void *, size_t, size_t), void *arg)
{
	struct par p = {n, 0, PTHREAD_MUTEX_INITIALIZER, fn, arg};
	if (nth > n)
		nth = n;
	if (nth <= 1) {
		for (size_t i = 0; i < n; i++)
			fn(arg, i, 0);
		pthread_mutex_destroy(&p.mu);
		return;
	}
	pthread_t *th = xmalloc(xmul(nth, sizeof(*th)));
	struct par_th *ts = xmalloc(xmul(nth, sizeof(*ts)));
	size_t started = 0;
	for (size_t k = 1; k < nth; k++) {
		ts[k] = (struct par_th){&p, k};
		if (pthread_create(&th[k], NULL, par_worker, &ts[k]))
			break;
		started = k;
	}
	ts[0] = (struct par_th){&p, 0};
	par_worker(&ts[0]);
	for (size_t k = 1; k <= started; k++)
		pthread_join(th[k], NULL);
	free(th);
	free(ts);
	pthread_mutex_destroy(&p.mu);
}

/* ---- devices ------------------------------------------------------------------ */

double vpa_fls_release(const struct vpa_fls_privacy *p, float *upd, size_t n, struct vpa_rng *rng)
{
	double norm = vpa_nn_clip_norm(upd, n, p->clip);
	if (p->skip_noise)
		return norm; /* the fault: the clipped update leaves the device as it is */
	if (p->regime == VPA_FLS_LOCAL) {
		for (size_t i = 0; i < n; i++)
			upd[i] += (float)(p->sigma_local * vpa_rng_normal(rng));
	} else if (p->regime == VPA_FLS_CENTRAL_LOCAL) {
		double *u = xmalloc(xmul(n, sizeof(double)));
		double *z = xmalloc(xmul(n, sizeof(double)));
		double r = vpa_nn_norm(upd, n);
		if (r > 0) {
			for (size_t i = 0; i < n; i++)
				u[i] = upd[i] / r;
		} else {
			/* no direction: a uniform one (the norm's mechanism still says 0) */
			double s = 0;
			for (size_t i = 0; i < n; i++) {
				u[i] = vpa_rng_normal(rng);
				s += u[i] * u[i];
			}
			s = sqrt(s);
			for (size_t i = 0; i < n; i++)
				u[i] /= s;
		}
		double rh = vpa_scalar_dp_apply(&p->sdp, r, rng);
		vpa_privunit_apply(&p->pu, u, z, rng);
		for (size_t i = 0; i < n; i++)
			upd[i] = (float)(rh * z[i]);
		free(u);
		free(z);
	}
	return norm;
}

int vpa_fls_local_update(struct vpa_nn *work, const float *global, const float *x,
			 const uint32_t *labels, size_t n_rows, size_t epochs, size_t batch,
			 double lr, float *out, struct vpa_err *err)
{
	size_t np, ng, d = vpa_nn_input_dim(work), K = vpa_nn_output_dim(work);
	float *w = vpa_nn_params(work, &np);
	const float *g = vpa_nn_grads(work, &ng);
	if (batch == 0 || batch > n_rows)
		batch = n_rows;
	size_t *off = xmalloc(xmul(batch + 1, sizeof(size_t)));
	float *dl = xmalloc(xmul(xmul(batch, K), sizeof(float)));
	int rc = 0;
	memcpy(w, global, np * sizeof(float));
	for (size_t i = 0; i <= batch; i++)
		off[i] = i;
	for (size_t e = 0; e < epochs && !rc; e++)
		for (size_t b0 = 0; b0 < n_rows && !rc; b0 += batch) {
			size_t nb = n_rows - b0 < batch ? n_rows - b0 : batch;
			struct vpa_nn_batch in = {nb, off, x + b0 * d, NULL};
			struct vpa_nn_targets t;
			double loss;
			vpa_nn_targets_init(&t);
			t.labels = labels + b0;
			vpa_nn_zero_grad(work);
			if ((rc = vpa_nn_forward(work, &in, VPA_NN_TRAIN, err)))
				break;
			if ((rc = vpa_nn_loss(work, &t, &loss, dl, err)))
				break;
			vpa_nn_backward(work, dl, NULL);
			for (size_t i = 0; i < np; i++)
				w[i] -= (float)(lr * g[i]);
		}
	for (size_t i = 0; i < np; i++)
		out[i] = w[i] - global[i];
	free(off);
	free(dl);
	return rc;
}

const struct vpa_fls_regime_res *vpa_fls_find(const struct vpa_fls_target *t,
					      enum vpa_fls_regime r)
{
	for (size_t i = 0; i < t->n_reg; i++)
		if (t->reg[i].regime == r)
			return &t->reg[i];
	return NULL;
}

/* ---- the privacy set-up of a regime ------------------------------------------- */

int vpa_fls_privacy_setup(const struct vpa_fls_target *T, enum vpa_fls_regime r,
			 struct vpa_fls_privacy *p, struct vpa_err *err)
{
	int rc = 0;
	memset(p, 0, sizeof(*p));
	p->regime = r;
	p->clip = T->clip;
	p->delta = T->delta;
	p->eps_local = NAN;
	p->eps_central = NAN;
	p->rdp_order = NAN;
	p->skip_noise = T->skip_noise;
	if (r == VPA_FLS_LOCAL) {
		/* one release per participation; any two updates of norm <= C differ by <= 2C */
		if ((rc = vpa_gauss_analytic_sigma(T->epsilon, T->delta, 2 * T->clip, &p->sigma_local,
						   err)))
			return rc;
		p->eps_local = T->epsilon;
	}
	p->q_run = NAN;
	p->q_deploy = NAN;
	p->eps_deploy = NAN;
	if (r == VPA_FLS_CENTRAL || r == VPA_FLS_CENTRAL_LOCAL) {
		/*
		 * The run samples cohorts of `cohort` from its n_train training users:
		 * its epsilon is the accountant's at q = cohort / n_train (Poisson
		 * sampling at that rate, as TF Privacy treats fixed-size batches).  A
		 * stated population describes a deployment: the noise is calibrated
		 * for it, and its epsilon is a second, labelled number.
		 */
		p->q_run = fmin(1, (double)T->cohort / (double)T->n_train);
		if (T->population == T->population)
			p->q_deploy = fmin(1, (double)T->cohort / T->population);
		double q_cal = p->q_deploy == p->q_deploy ? p->q_deploy : p->q_run;
		if ((rc = vpa_dp_sigma(q_cal, T->epsilon, (double)T->rounds, T->delta, &p->z, err)))
			return rc;
		if ((rc = vpa_dp_epsilon(p->q_run, p->z, (double)T->rounds, T->delta,
					 &p->eps_central, &p->rdp_order, err)))
			return rc;
		if (p->q_deploy == p->q_deploy &&
		    (rc = vpa_dp_epsilon(p->q_deploy, p->z, (double)T->rounds, T->delta,
					 &p->eps_deploy, NULL, err)))
			return rc;
	}
	if (r == VPA_FLS_CENTRAL_LOCAL) {
		if ((rc = vpa_privunit_init(&p->pu, T->n_params, T->local_epsilon - T->norm_epsilon,
					    err)))
			return rc;
		if ((rc = vpa_scalar_dp_init(&p->sdp, T->norm_epsilon, T->clip, 0, err)))
			return rc;
		p->eps_local = p->pu.eps + p->sdp.eps;
	}
	return 0;
}

/* ---- federated training -------------------------------------------------------- */

struct fl_ctx {
	const struct vpa_fls_target *T;
	const struct vpa_fls_privacy *priv;
	const float *global;
	const size_t *cohort;      /* user indices */
	size_t round;
	struct vpa_nn **work;      /* per thread */
	float *clipped, *released; /* (cohort, n_params) */
	uint32_t **lbuf;           /* per thread: the labels of a user's rows */
	int *rc;
	struct vpa_err *errs;
};

static void fl_user(void *arg, size_t i, size_t tid)
{
	struct fl_ctx *c = arg;
	const struct vpa_fls_target *T = c->T;
	const struct vpa_fls_pop *pop = &T->pop;
	size_t u = c->cohort[i], np = T->n_params;
	size_t r0 = pop->off[u], nr = pop->off[u + 1] - r0;
	float *cl = c->clipped + i * np, *rel = c->released + i * np;
	for (size_t k = 0; k < nr; k++)
		c->lbuf[tid][k] = pop->cls[u];
	vpa_err_init(&c->errs[i]);
	c->rc[i] = vpa_fls_local_update(c->work[tid], c->global, pop->x + r0 * pop->d, c->lbuf[tid],
					nr, T->local_epochs, T->local_batch, T->local_lr, cl,
					&c->errs[i]);
	if (c->rc[i])
		return;
	/* the same clipping on both copies: in NONE and CENTRAL they stay equal */
	memcpy(rel, cl, np * sizeof(float));
	vpa_nn_clip_norm(cl, np, T->clip);
	char name[128];
	struct vpa_rng rng;
	snprintf(name, sizeof(name), "fls/%s/round/%zu/user/%zu",
		 vpa_fls_regime_names[c->priv->regime], c->round, u);
	vpa_rng_split(&rng, T->seed, name);
	vpa_fls_release(c->priv, rel, np, &rng);
}

/* A cohort's user as a job of vpa_dist_jobs: under MPI its two updates
 * (clipped, released: 2 x n_params floats) travel to every rank. */
static int fl_user_job(void *arg, size_t i, struct vpa_err *e)
{
	struct fl_ctx *c = arg;
	fl_user(c, i, vpa_dist_thread());
	return c->rc[i] ? vpa_fail(e, c->rc[i], NULL, "%s", c->errs[i].msg) : 0;
}

static void fl_user_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct fl_ctx *c = arg;
	size_t np = c->T->n_params;
	vpa_pack_f32s(b, c->clipped + i * np, np);
	vpa_pack_f32s(b, c->released + i * np, np);
}

static int fl_user_unpack(void *arg, size_t i, const unsigned char *q, size_t len)
{
	struct fl_ctx *c = arg;
	size_t np = c->T->n_params;
	const unsigned char *end = q + len;
	return len != 2 * np * sizeof(float) || vpa_unpack_f32s(&q, end, c->clipped + i * np, np) ||
	       vpa_unpack_f32s(&q, end, c->released + i * np, np);
}

/* Gathered rows (users' rows one after the other) with their classes. */
void vpa_fls_gather(const struct vpa_fls_pop *pop, const size_t *users, size_t n, float **x,
		   uint32_t **y, size_t **off, size_t *n_rows)
{
	size_t tot = 0, d = pop->d;
	for (size_t i = 0; i < n; i++)
		tot += pop->off[users[i] + 1] - pop->off[users[i]];
	*x = xmalloc(xmul(xmul(tot ? tot : 1, d), sizeof(float)));
	*y = xmalloc(xmul(tot ? tot : 1, sizeof(uint32_t)));
	if (off)
		*off = xmalloc(xmul(n + 1, sizeof(size_t)));
	size_t r = 0;
	for (size_t i = 0; i < n; i++) {
		size_t u = users[i], a = pop->off[u], b = pop->off[u + 1];
		if (off)
			(*off)[i] = r;
		memcpy(*x + r * d, pop->x + a * d, (b - a) * d * sizeof(float));
		for (size_t k = a; k < b; k++)
			(*y)[r++] = pop->cls[u];
	}
	if (off)
		(*off)[n] = r;
	*n_rows = tot;
}

/* Accuracy of net on rows x (n, d) with labels y. */
static int accuracy(struct vpa_nn *net, const float *x, const uint32_t *y, size_t n, double *acc,
		    struct vpa_err *err)
{
	size_t off[2] = {0, n}, rows, K;
	struct vpa_nn_batch in = {1, off, x, NULL};
	int rc = vpa_nn_forward(net, &in, VPA_NN_EVAL, err);
	if (rc)
		return rc;
	const float *z = vpa_nn_output(net, &rows, &K);
	size_t ok = 0;
	for (size_t r = 0; r < rows; r++) {
		size_t best = 0;
		for (size_t k = 1; k < K; k++)
			if (z[r * K + k] > z[r * K + best])
				best = k;
		ok += best == y[r];
	}
	*acc = rows ? (double)ok / (double)rows : NAN;
	return 0;
}

/* ---- the canary users of the central one-run audit ------------------------------
 *
 * Steinke, Nasr, Jagielski 2023 audit one training run with m canaries, each
 * included independently with probability 1/2; in federated learning the
 * canaries are users (Andrew et al., "One-shot empirical privacy estimation
 * for federated learning", ICLR 2024): a canary client's update is the
 * clipping bound times a fixed random unit direction of its own, and the
 * membership score is the cosine of that direction with the released
 * model's total change.  Central DP at user level covers any user, so it
 * covers these users too; an included canary is sampled in each round with
 * probability q_run independently (Poisson sampling: the accountant's
 * assumption), its contribution added to the sum before the division by the
 * cohort size, exactly where a sampled user's clipped update goes.
 * Streams: inclusion "fls/canary/include" (the same in every regime),
 * participation "fls/canary/<regime>/round/<r>", direction "fls/canary/dir/<c>".
 */

static void canary_setup(const struct vpa_fls_target *T, struct vpa_fls_regime_res *R)
{
	size_t m = T->audit_canaries;
	struct vpa_rng rng;
	vpa_rng_split(&rng, T->seed, "fls/canary/include");
	R->n_canaries = m;
	R->canary_in = xmalloc(m);
	R->canary_score = xmalloc(xmul(m, sizeof(double)));
	R->canary_rounds = 0;
	for (size_t c = 0; c < m; c++) {
		R->canary_in[c] = vpa_rng_uniform(&rng) < 0.5;
		R->canary_score[c] = NAN;
	}
}

/*
 * The canaries' unit directions, rounded to float: kept for all canaries
 * when they fit in CANARY_CACHE bytes (drawn once), else drawn again at each
 * use into one row; the same floats either way, so the results do not
 * depend on the cache.
 */
#define CANARY_CACHE ((size_t)64 << 20)

struct canary_dirs {
	float *all;  /* (m, np) or NULL */
	float *row;  /* (np) when all is NULL */
	double *tmp; /* (np) */
};

static void canary_draw(const struct vpa_fls_target *T, size_t c, double *tmp, float *out)
{
	char name[64];
	struct vpa_rng rng;
	snprintf(name, sizeof(name), "fls/canary/dir/%zu", c);
	vpa_rng_split(&rng, T->seed, name);
	double s = 0;
	for (size_t k = 0; k < T->n_params; k++) {
		tmp[k] = vpa_rng_normal(&rng);
		s += tmp[k] * tmp[k];
	}
	s = sqrt(s);
	for (size_t k = 0; k < T->n_params; k++)
		out[k] = (float)(tmp[k] / s);
}

static void canary_dirs_init(const struct vpa_fls_target *T, size_t m, struct canary_dirs *d)
{
	size_t np = T->n_params;
	d->tmp = xmalloc(xmul(np, sizeof(double)));
	d->all = d->row = NULL;
	if (m <= CANARY_CACHE / sizeof(float) / np) {
		d->all = xmalloc(xmul(xmul(m, np), sizeof(float)));
		for (size_t c = 0; c < m; c++)
			canary_draw(T, c, d->tmp, d->all + c * np);
	} else {
		d->row = xmalloc(xmul(np, sizeof(float)));
	}
}

static const float *canary_dir(const struct vpa_fls_target *T, struct canary_dirs *d, size_t c)
{
	if (d->all)
		return d->all + c * T->n_params;
	canary_draw(T, c, d->tmp, d->row);
	return d->row;
}

static void canary_dirs_free(struct canary_dirs *d)
{
	free(d->all);
	free(d->row);
	free(d->tmp);
}

/* Round r: agg (already divided by the cohort) += clip * dir_c / cohort for
 * each included canary sampled this round. */
static void canary_round(const struct vpa_fls_target *T, struct vpa_fls_regime_res *R, size_t r,
			 struct canary_dirs *dirs, double *agg)
{
	char name[96];
	struct vpa_rng rng;
	snprintf(name, sizeof(name), "fls/canary/%s/round/%zu", vpa_fls_regime_names[R->regime], r);
	vpa_rng_split(&rng, T->seed, name);
	double w = T->clip / (double)T->cohort;
	for (size_t c = 0; c < R->n_canaries; c++) {
		/* one draw per canary, included or not, so that the draws do not
		 * depend on the inclusions */
		int takes_part = vpa_rng_uniform(&rng) < R->priv.q_run;
		if (!R->canary_in[c] || !takes_part)
			continue;
		R->canary_rounds++;
		const float *dir = canary_dir(T, dirs, c);
		for (size_t k = 0; k < T->n_params; k++)
			agg[k] += w * dir[k];
	}
}

/* The membership scores on the final model gw: cos(dir_c, gw - initial). */
static void canary_scores(const struct vpa_fls_target *T, struct vpa_fls_regime_res *R,
			  const float *gw, struct canary_dirs *dirs)
{
	size_t np;
	const float *w0 = vpa_nn_params(T->init_model, &np);
	double *delta = xmalloc(xmul(np, sizeof(double)));
	double dn = 0;
	for (size_t k = 0; k < np; k++) {
		delta[k] = (double)gw[k] - (double)w0[k];
		dn += delta[k] * delta[k];
	}
	dn = sqrt(dn);
	for (size_t c = 0; c < R->n_canaries; c++) {
		const float *dir = canary_dir(T, dirs, c);
		double s = 0;
		for (size_t k = 0; k < np; k++)
			s += dir[k] * delta[k];
		R->canary_score[c] = dn > 0 ? s / dn : 0;
	}
	free(delta);
}

int vpa_fls_train(struct vpa_run_ctx *ctx, struct vpa_fls_target *T, struct vpa_fls_regime_res *R,
		    const float *tx, const uint32_t *ty, size_t tn, struct vpa_err *err)
{
	size_t np = T->n_params, C = T->cohort;
	size_t nth = (size_t)(ctx && ctx->threads > 1 ? ctx->threads : 1);
	int rc = 0;
	double t0 = vpa_now();
	struct vpa_nn *global = vpa_nn_clone(T->init_model);
	size_t ngp;
	float *gw = vpa_nn_params(global, &ngp);
	struct fl_ctx c;
	memset(&c, 0, sizeof(c));
	c.T = T;
	c.priv = &R->priv;
	c.work = xcalloc(nth, sizeof(*c.work));
	c.lbuf = xcalloc(nth, sizeof(*c.lbuf));
	size_t max_rows = 1;
	for (size_t u = 0; u < T->pop.n_users; u++)
		if (T->pop.off[u + 1] - T->pop.off[u] > max_rows)
			max_rows = T->pop.off[u + 1] - T->pop.off[u];
	for (size_t k = 0; k < nth; k++) {
		c.work[k] = vpa_nn_clone(T->init_model);
		c.lbuf[k] = xmalloc(xmul(max_rows, sizeof(uint32_t)));
	}
	c.clipped = xmalloc(xmul(xmul(C, np), sizeof(float)));
	c.released = xmalloc(xmul(xmul(C, np), sizeof(float)));
	c.rc = xcalloc(C, sizeof(int));
	c.errs = xcalloc(C, sizeof(struct vpa_err));
	size_t *cohort = xmalloc(xmul(C, sizeof(size_t)));
	size_t *perm = xmalloc(xmul(T->n_train, sizeof(size_t)));
	size_t *times = xcalloc(T->pop.n_users ? T->pop.n_users : 1, sizeof(size_t));
	double *mean_cl = xmalloc(xmul(np, sizeof(double)));
	double *agg = xmalloc(xmul(np, sizeof(double)));
	c.cohort = cohort;
	c.global = gw;
	struct canary_dirs dirs = {NULL, NULL, NULL};
	if (T->audit_canaries && (R->regime == VPA_FLS_CENTRAL ||
				  R->regime == VPA_FLS_CENTRAL_LOCAL)) {
		canary_setup(T, R);
		canary_dirs_init(T, R->n_canaries, &dirs);
	}
	size_t n_eval = T->rounds / T->eval_every + 2;
	R->curve_round = xmalloc(xmul(n_eval, sizeof(double)));
	R->curve_acc = xmalloc(xmul(n_eval, sizeof(double)));
	R->n_curve = 0;
	double acc;
	if ((rc = accuracy(global, tx, ty, tn, &acc, err)))
		goto out;
	R->curve_round[R->n_curve] = 0;
	R->curve_acc[R->n_curve++] = acc;
	R->snr = NAN;
	for (size_t r = 0; r < T->rounds && !rc; r++) {
		/* the cohort: the same users in every regime (one stream per round) */
		struct vpa_rng crng;
		char name[96];
		snprintf(name, sizeof(name), "fls/cohort/%zu", r);
		vpa_rng_split(&crng, T->seed, name);
		for (size_t i = 0; i < T->n_train; i++)
			perm[i] = T->train[i];
		for (size_t i = 0; i < C; i++) {
			size_t j = i + (size_t)vpa_rng_below(&crng, T->n_train - i);
			size_t tmp = perm[i];
			perm[i] = perm[j];
			perm[j] = tmp;
			cohort[i] = perm[i];
			if (++times[perm[i]] > R->max_participations)
				R->max_participations = times[perm[i]];
		}
		c.round = r;
		if ((rc = vpa_dist_jobs(C, (int)nth, fl_user_job, fl_user_pack, fl_user_unpack, &c,
					NULL, NULL, err)))
			goto out;
		/* aggregate in cohort order (bit-identical for any thread count) */
		memset(mean_cl, 0, np * sizeof(double));
		memset(agg, 0, np * sizeof(double));
		for (size_t i = 0; i < C; i++) {
			const float *a = c.clipped + i * np, *b = c.released + i * np;
			for (size_t k = 0; k < np; k++) {
				mean_cl[k] += a[k];
				agg[k] += b[k];
			}
		}
		if ((R->regime == VPA_FLS_CENTRAL || R->regime == VPA_FLS_CENTRAL_LOCAL) &&
		    !R->priv.skip_noise) {
			struct vpa_rng nrng;
			snprintf(name, sizeof(name), "fls/%s/central/%zu",
				 vpa_fls_regime_names[R->regime], r);
			vpa_rng_split(&nrng, T->seed, name);
			double sd = R->priv.z * T->clip;
			for (size_t k = 0; k < np; k++)
				agg[k] += sd * vpa_rng_normal(&nrng);
		}
		for (size_t k = 0; k < np; k++) {
			mean_cl[k] /= (double)C;
			agg[k] /= (double)C;
		}
		if (r == 0) {
			double s2 = 0, n2 = 0;
			for (size_t k = 0; k < np; k++) {
				double e = agg[k] - mean_cl[k];
				s2 += mean_cl[k] * mean_cl[k];
				n2 += e * e;
			}
			R->first_norm = sqrt(s2);
			R->noise_norm = sqrt(n2);
			for (size_t k = 0; k < np; k++)
				agg[k] -= mean_cl[k]; /* agg = the noise */
			R->snr = vpa_snr(mean_cl, agg, np);
			for (size_t k = 0; k < np; k++)
				agg[k] += mean_cl[k];
		}
		/* after the SNR (which compares the users' data with the DP noise):
		 * the included canaries taking part this round, in canary order */
		if (R->n_canaries)
			canary_round(T, R, r, &dirs, agg);
		for (size_t k = 0; k < np; k++)
			gw[k] += (float)(T->server_lr * agg[k]);
		if ((r + 1) % T->eval_every == 0 || r + 1 == T->rounds) {
			if ((rc = accuracy(global, tx, ty, tn, &acc, err)))
				goto out;
			R->curve_round[R->n_curve] = (double)(r + 1);
			R->curve_acc[R->n_curve++] = acc;
		}
		vpa_progress(vpa_fls_regime_names[R->regime], r + 1, T->rounds, t0);
	}
	if (R->n_canaries)
		canary_scores(T, R, gw, &dirs);
	R->acc_final = R->curve_acc[R->n_curve - 1];
	R->model = global;
	global = NULL;
out:
	vpa_nn_free(global);
	for (size_t k = 0; k < nth; k++) {
		vpa_nn_free(c.work[k]);
		free(c.lbuf[k]);
	}
	free(c.work);
	free(c.lbuf);
	free(c.clipped);
	free(c.released);
	free(c.rc);
	free(c.errs);
	free(cohort);
	free(perm);
	free(times);
	free(mean_cl);
	free(agg);
	canary_dirs_free(&dirs);
	R->train_secs = vpa_now() - t0;
	return rc;
}

