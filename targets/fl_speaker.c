/*
 * targets/fl_speaker.c - target kind `fl_speaker_classifier`: the federated
 * vocal classifier of Granqvist et al. (Apple), Interspeech 2020, trained
 * with federated averaging over sampled cohorts under four privacy regimes
 * (none; local DP with the analytic Gaussian mechanism; central DP with the
 * RDP accountant's noise multiplier; central DP plus PrivUnit2 and the scalar
 * norm mechanism of Bhowmick et al. 2018), and the speaker-embedding network
 * distilled from it (section 5: five fully connected layers, a speaker
 * softmax head, the multi-task loss with the classifier's temperature-
 * softened outputs), with its speaker-verification EER (cosine scoring
 * averaged over the enrolment vectors, eq. 1).
 *
 * Epsilons describe the run: cohorts are drawn from the training users, so
 * `epsilon` is the accountant's value for q = cohort / training users.  With a
 * stated deployment `population`, the noise is calibrated for it (the paper's
 * 100M: q = cohort / population) and `epsilon_deployment`, `q_deployment`
 * are reported beside the run's (targets/README.md).
 */
#include "targets/fl_speaker.h"
#include "core/dist.h"
#include "core/la.h"
#include "core/nn.h"
#include "metrics/metrics.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const vpa_fls_regime_names[VPA_FLS_N_REGIMES] = {"none", "local", "central",
							     "central_local"};

int vpa_fls_regime_parse(const char *s)
{
	for (int i = 0; i < VPA_FLS_N_REGIMES; i++)
		if (!strcmp(s, vpa_fls_regime_names[i]))
			return i;
	return -1;
}

#define INF INFINITY
static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "simulate", -INF, INF, 0, "simulate|import", NULL, "simulate",
	 "simulate: users drawn from the supervector model (targets/README.md); import: "
	 "`vectors`, `utt2user` and `labels`"},
	{"users", VPA_K_INT, 0, "4000", 100, 1000000, 0, NULL, NULL, "4000",
	 "simulate: users in the simulated population (cohorts are drawn from its training users)"},
	{"utterances", VPA_K_INT, 0, "8", 2, 1000, 0, NULL, NULL, "8",
	 "simulate: trigger-phrase supervectors per user"},
	{"classes", VPA_K_INT, 0, "6", 2, 1000, 0, NULL, NULL, "6",
	 "simulate: side-information classes"},
	{"speaker_rank", VPA_K_INT, 0, "40", 1, 520, 0, NULL, NULL, "40",
	 "simulate: rank of the speaker subspace"},
	{"speaker_scale", VPA_K_NUM, 0, "0.3", 0, 100, 0, NULL, NULL, "0.3",
	 "simulate: per-dimension std of the speaker offsets"},
	{"class_shift", VPA_K_NUM, 0, "0.12", 0, 100, 0, NULL, NULL, "0.12",
	 "simulate: per-dimension std of the side-information class offsets"},
	{"noise", VPA_K_NUM, 0, "1", 0, 100, 0, NULL, NULL, "1",
	 "simulate: per-dimension std between a user's utterances"},
	{"vectors", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/sv.ark",
	 "import: supervectors, a Kaldi archive or an (n, d) .npy"},
	{"utt2user", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/utt2user",
	 "import: `utterance user` lines (for .npy, one per row in row order)"},
	{"labels", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/user2class",
	 "import: `user class` lines, the private side information"},
	{"test_users", VPA_K_INT, 0, "500", 10, 1000000, 0, NULL, NULL, "500",
	 "users held out to measure the classifier's accuracy"},
	{"sv_train_users", VPA_K_INT, 0, "400", 10, 1000000, 0, NULL, NULL, "400",
	 "server-side speakers that train the speaker-embedding network"},
	{"sv_test_users", VPA_K_INT, 0, "200", 10, 1000000, 0, NULL, NULL, "200",
	 "speakers of the verification trials"},
	{"population", VPA_K_NUM, 0, NULL, 1, 1e12, 0, NULL, NULL, "1e8",
	 "a stated deployment population (the paper's 100M): the central noise is calibrated "
	 "for q = cohort / population and `epsilon_deployment` is reported beside the run's "
	 "`epsilon` (q = cohort / training users); absent: the noise is calibrated for the run"},
	{"cohort", VPA_K_INT, 0, "300", 1, 100000, 0, NULL, NULL, "300",
	 "users per round (sampled from the simulated training users)"},
	{"rounds", VPA_K_INT, 0, "60", 1, 100000, 0, NULL, NULL, "60", "federated rounds"},
	{"epsilon", VPA_K_NUM, 0, "2", 0, 1e6, VPA_KF_OPEN_LO, NULL, NULL, "2",
	 "target epsilon: of one update for `local`; for the central regimes, of the stated "
	 "deployment (`population`) when there is one, else of the run"},
	{"delta", VPA_K_NUM, 0, "1e-5", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "1e-5",
	 "target delta"},
	{"local_epsilon", VPA_K_NUM, 0, "25.7", 0, 1e6, VPA_KF_OPEN_LO, NULL, NULL, "25.7",
	 "central_local: the weak local budget (PrivUnit2 direction + scalar norm); paper 25.7"},
	{"norm_epsilon", VPA_K_NUM, 0, "2", 0, 1e6, VPA_KF_OPEN_LO, NULL, NULL, "2",
	 "central_local: the part of local_epsilon spent on the norm (the rest on the direction)"},
	{"clip", VPA_K_NUM, 0, "1", 0, 1e6, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "L2 clipping bound C of each user's update"},
	{"hidden", VPA_K_INT, 0, "16", 1, 100000, 0, NULL, NULL, "16",
	 "hidden units of the vocal classifier (520 -> hidden -> relu -> classes)"},
	{"local_epochs", VPA_K_INT, 0, "5", 1, 1000, 0, NULL, NULL, "5",
	 "passes over a user's utterances per round"},
	{"local_batch", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "4",
	 "local mini-batch (0: all of a user's utterances)"},
	{"local_lr", VPA_K_NUM, 0, "1", 0, 1e3, VPA_KF_OPEN_LO, NULL, NULL, "0.5",
	 "local SGD learning rate"},
	{"server_lr", VPA_K_NUM, 0, "1", 0, 1e3, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "server learning rate on the averaged update (1 = FedAvg)"},
	{"eval_every", VPA_K_INT, 0, "1", 1, 100000, 0, NULL, NULL, "5",
	 "rounds between accuracy evaluations"},
	{"regimes", VPA_K_ENUMLIST, 0, "[none, local, central, central_local]", -INF, INF,
	 VPA_KF_NONEMPTY, "none|local|central|central_local", NULL, "[none, central]",
	 "the privacy regimes to train (each one a sub of the attacks)"},
	{"distill", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "false",
	 "train the speaker-embedding networks (baseline and one distilled per regime)"},
	{"emb_dim", VPA_K_INT, 0, "100", 2, 10000, 0, NULL, NULL, "100",
	 "speaker-embedding dimension (the fifth, linear layer)"},
	{"emb_hidden", VPA_K_INT, 0, "256", 2, 10000, 0, NULL, NULL, "256",
	 "units of the four hidden layers (batch norm, sigmoid)"},
	{"emb_epochs", VPA_K_INT, 0, "20", 1, 10000, 0, NULL, NULL, "20",
	 "training epochs of the speaker-embedding network"},
	{"emb_lr", VPA_K_NUM, 0, "0.001", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.001",
	 "Adam learning rate of the speaker-embedding network"},
	{"temperature", VPA_K_NUM, 0, "10", 0, 1e4, VPA_KF_OPEN_LO, NULL, NULL, "10",
	 "distillation temperature T (eq. 3)"},
	{"distill_loss", VPA_K_ENUM, 0, "squared", -INF, INF, 0, "squared|cross_entropy", NULL,
	 "squared", "the distillation term: `squared`, the paper's eq. 3 (T^2/N times the squared "
	 "error between the softened outputs), or `cross_entropy`, Hinton et al.'s T^2 times the "
	 "cross-entropy of the softened outputs"},
	{"distill_weight", VPA_K_NUM, 0, "3", 0, 1e6, VPA_KF_OPEN_LO, NULL, NULL, "3",
	 "gamma of eq. 2: L = L_speaker + gamma L_distill (3: the best of 1, 3, 10, 30, 100 "
	 "for `squared` on apple-fl-dp.yaml, targets/README.md)"},
	{"enrol", VPA_K_INT, 0, "4", 1, 1000, 0, NULL, NULL, "4",
	 "enrolment utterances per verification speaker (the rest are test utterances)"},
	{NULL},
};
static const struct vpa_schema schema = {"target fl_speaker_classifier", keys};

static const char *S(const struct vpa_ynode *cfg, const char *k)
{
	return vpa_cfg_str(cfg, &schema, k);
}
static double N(const struct vpa_ynode *cfg, const char *k)
{
	return vpa_cfg_num(cfg, &schema, k);
}
static size_t I(const struct vpa_ynode *cfg, const char *k)
{
	return (size_t)vpa_cfg_int(cfg, &schema, k);
}

static const char *const import_keys[] = {"vectors", "utt2user", "labels"};
static const char *const sim_keys[] = {"users", "utterances", "classes", "speaker_rank",
				       "speaker_scale", "class_shift", "noise"};

static int validate(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *cfg,
		    struct vpa_err *err)
{
	int import = !strcmp(S(cfg, "source"), "import");
	const struct vpa_ynode *src = vpa_ymap_get(cfg, "source");
	for (size_t i = 0; i < 3; i++) {
		const struct vpa_ynode *v = vpa_ymap_get(cfg, import_keys[i]);
		if (import && !v) {
			struct vpa_loc loc = vpa_node_loc(ctx->file, src);
			return vpa_fail(err, VPA_EINPUT, &loc, "source: import needs '%s'",
					import_keys[i]);
		}
		if (!import && v) {
			struct vpa_loc loc = vpa_node_loc(ctx->file, vpa_ymap_key(cfg, import_keys[i]));
			return vpa_fail(err, VPA_EINPUT, &loc,
					"'%s' is only used with source: import", import_keys[i]);
		}
		if (v) {
			int rc = vpa_check_path(ctx, v, VPA_PATH_FILE, err);
			if (rc)
				return rc;
		}
	}
	if (import)
		for (size_t i = 0; i < sizeof(sim_keys) / sizeof(sim_keys[0]); i++)
			if (vpa_ymap_get(cfg, sim_keys[i])) {
				struct vpa_loc loc = vpa_node_loc(ctx->file, vpa_ymap_key(cfg, sim_keys[i]));
				return vpa_fail(err, VPA_EINPUT, &loc,
						"'%s' is only used with source: simulate", sim_keys[i]);
			}
	if (!import) {
		size_t need = I(cfg, "test_users") + I(cfg, "sv_train_users") +
			      I(cfg, "sv_test_users") + I(cfg, "cohort");
		if (I(cfg, "users") < need) {
			const struct vpa_ynode *u = vpa_ymap_get(cfg, "users");
			struct vpa_loc loc = vpa_node_loc(ctx->file, u ? u : src ? src : cfg);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"users must be at least test_users + sv_train_users + "
					"sv_test_users + cohort = %zu, got %zu", need, I(cfg, "users"));
		}
		if (I(cfg, "enrol") >= I(cfg, "utterances")) {
			const struct vpa_ynode *e = vpa_ymap_key(cfg, "enrol");
			struct vpa_loc loc = vpa_node_loc(ctx->file, e ? e : cfg);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"enrol must be less than utterances (%zu), got %zu",
					I(cfg, "utterances"), I(cfg, "enrol"));
		}
	}
	const struct vpa_ynode *regs = vpa_ymap_get(cfg, "regimes");
	int has_cl = !regs;
	for (size_t i = 0; regs && i < regs->n; i++) {
		for (size_t j = 0; j < i; j++)
			if (!strcmp(regs->items[i]->str, regs->items[j]->str)) {
				struct vpa_loc loc = vpa_node_loc(ctx->file, regs->items[i]);
				return vpa_fail(err, VPA_EINPUT, &loc, "duplicate regime '%s'",
						regs->items[i]->str);
			}
		if (!strcmp(regs->items[i]->str, "central_local"))
			has_cl = 1;
	}
	if (has_cl && !(N(cfg, "norm_epsilon") < N(cfg, "local_epsilon"))) {
		const struct vpa_ynode *k = vpa_ymap_key(cfg, "norm_epsilon");
		if (!k)
			k = vpa_ymap_key(cfg, "local_epsilon");
		struct vpa_loc loc = vpa_node_loc(ctx->file, k ? k : cfg);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"norm_epsilon (%g) must be less than local_epsilon (%g): the rest goes "
				"to the direction", N(cfg, "norm_epsilon"), N(cfg, "local_epsilon"));
	}
	return 0;
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

static int privacy_setup(const struct vpa_fls_target *T, enum vpa_fls_regime r,
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
static void gather(const struct vpa_fls_pop *pop, const size_t *users, size_t n, float **x,
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

static int fl_train(struct vpa_run_ctx *ctx, struct vpa_fls_target *T, struct vpa_fls_regime_res *R,
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
		if (R->regime == VPA_FLS_CENTRAL || R->regime == VPA_FLS_CENTRAL_LOCAL) {
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
	R->train_secs = vpa_now() - t0;
	return rc;
}

/* ---- the speaker-embedding network (section 5) ---------------------------------- */

struct sv_data {
	const float *x;     /* (n, d) */
	size_t n, d;
	const uint32_t *spk; /* (n) speaker index */
	size_t n_spk;
	const float *soft;  /* (n, K) teacher's softened outputs or NULL */
	size_t K;
};

static struct vpa_nn *trunk_new(size_t d, size_t hidden, size_t emb)
{
	struct vpa_nn *t = vpa_nn_new(d);
	for (int l = 0; l < 4; l++) {
		vpa_nn_add_dense(t, hidden);
		vpa_nn_add_simple(t, VPA_NN_BATCHNORM);
		vpa_nn_add_simple(t, VPA_NN_SIGMOID);
	}
	vpa_nn_add_dense(t, emb);
	return t;
}

/*
 * Train trunk + speaker head (+ distillation head when D->soft): the loss of
 * Granqvist et al. eq. 2, L = CE(speaker) + gamma L_distill over a batch (both
 * terms are batch means), with L_distill (squared = 1) eq. 3,
 * T^2/N sum_i (softmax(V/T)_i - teacher_T_i)^2 (vpa_nn_distill_sq), or
 * (squared = 0) Hinton et al.'s T^2 CE(softmax(V/T), teacher_T).
 */
static int sv_train(const struct sv_data *D, size_t hidden, size_t emb, size_t epochs,
		    double lr, double T, double gamma, int squared, uint64_t seed,
		    struct vpa_nn **trunk_out, struct vpa_err *err)
{
	struct vpa_nn *trunk = trunk_new(D->d, hidden, emb);
	struct vpa_nn *hs = vpa_nn_new(emb), *hk = NULL;
	vpa_nn_add_dense(hs, D->n_spk);
	vpa_nn_init_params(trunk, seed);
	vpa_nn_init_params(hs, seed ^ 0x5151);
	if (D->soft) {
		hk = vpa_nn_new(emb);
		vpa_nn_add_dense(hk, D->K);
		vpa_nn_init_params(hk, seed ^ 0x7373);
	} else {
		gamma = 0;
	}
	struct vpa_optim ot, os, ok;
	size_t n1, n2, n3 = 0;
	float *w1 = vpa_nn_params(trunk, &n1), *w2 = vpa_nn_params(hs, &n2), *w3 = NULL;
	vpa_optim_init_adam(&ot, n1, lr, 0.9, 0.999, 1e-8, 0);
	vpa_optim_init_adam(&os, n2, lr, 0.9, 0.999, 1e-8, 0);
	if (hk) {
		w3 = vpa_nn_params(hk, &n3);
		vpa_optim_init_adam(&ok, n3, lr, 0.9, 0.999, 1e-8, 0);
	}
	const size_t B = 64;
	size_t *perm = xmalloc(xmul(D->n, sizeof(size_t)));
	float *xb = xmalloc(xmul(xmul(B, D->d), sizeof(float)));
	uint32_t *yb = xmalloc(xmul(B, sizeof(uint32_t)));
	float *sb = xmalloc(xmul(xmul(B, D->K ? D->K : 1), sizeof(float)));
	float *d1 = xmalloc(xmul(xmul(B, D->n_spk), sizeof(float)));
	float *d2 = xmalloc(xmul(xmul(B, D->K ? D->K : 1), sizeof(float)));
	float *dx = xmalloc(xmul(xmul(B, emb), sizeof(float)));
	float *dx2 = xmalloc(xmul(xmul(B, emb), sizeof(float)));
	size_t off[65];
	for (size_t i = 0; i <= B; i++)
		off[i] = i;
	struct vpa_rng rng;
	vpa_rng_seed(&rng, seed ^ 0x1234567);
	for (size_t i = 0; i < D->n; i++)
		perm[i] = i;
	int rc = 0;
	for (size_t e = 0; e < epochs && !rc; e++) {
		for (size_t i = D->n; i > 1; i--) {
			size_t j = (size_t)vpa_rng_below(&rng, i), t = perm[i - 1];
			perm[i - 1] = perm[j];
			perm[j] = t;
		}
		for (size_t b0 = 0; b0 + 2 <= D->n && !rc; b0 += B) {
			size_t nb = D->n - b0 < B ? D->n - b0 : B;
			if (nb < 2)
				break; /* batch norm needs two rows */
			for (size_t i = 0; i < nb; i++) {
				size_t r = perm[b0 + i];
				memcpy(xb + i * D->d, D->x + r * D->d, D->d * sizeof(float));
				yb[i] = D->spk[r];
				if (D->soft)
					memcpy(sb + i * D->K, D->soft + r * D->K, D->K * sizeof(float));
			}
			struct vpa_nn_batch in = {nb, off, xb, NULL};
			vpa_nn_zero_grad(trunk);
			vpa_nn_zero_grad(hs);
			if ((rc = vpa_nn_forward(trunk, &in, VPA_NN_TRAIN, err)))
				break;
			size_t rows, dim;
			const float *h = vpa_nn_output(trunk, &rows, &dim);
			struct vpa_nn_batch hin = {nb, off, h, NULL};
			struct vpa_nn_targets t;
			double loss;
			vpa_nn_targets_init(&t);
			t.labels = yb;
			if ((rc = vpa_nn_forward(hs, &hin, VPA_NN_TRAIN, err)) ||
			    (rc = vpa_nn_loss(hs, &t, &loss, d1, err)))
				break;
			vpa_nn_backward(hs, d1, dx);
			if (hk) {
				vpa_nn_zero_grad(hk);
				struct vpa_nn_targets tk;
				vpa_nn_targets_init(&tk);
				tk.soft = sb;
				tk.temperature = (float)T;
				if ((rc = vpa_nn_forward(hk, &hin, VPA_NN_TRAIN, err)))
					break;
				if (squared) {
					size_t kr, kk;
					const float *zk = vpa_nn_output(hk, &kr, &kk);
					rc = vpa_nn_distill_sq(zk, kr, kk, sb, T, &loss, d2, err);
				} else {
					rc = vpa_nn_loss(hk, &tk, &loss, d2, err);
				}
				if (rc)
					break;
				for (size_t k = 0; k < nb * D->K; k++)
					d2[k] *= (float)gamma;
				vpa_nn_backward(hk, d2, dx2);
				for (size_t k = 0; k < nb * emb; k++)
					dx[k] += dx2[k];
			}
			vpa_nn_backward(trunk, dx, NULL);
			vpa_optim_step(&ot, w1, vpa_nn_grads(trunk, &n1));
			vpa_optim_step(&os, w2, vpa_nn_grads(hs, &n2));
			if (hk)
				vpa_optim_step(&ok, w3, vpa_nn_grads(hk, &n3));
		}
	}
	vpa_optim_release(&ot);
	vpa_optim_release(&os);
	if (hk)
		vpa_optim_release(&ok);
	vpa_nn_free(hs);
	vpa_nn_free(hk);
	free(perm);
	free(xb);
	free(yb);
	free(sb);
	free(d1);
	free(d2);
	free(dx);
	free(dx2);
	if (rc) {
		vpa_nn_free(trunk);
		return rc;
	}
	*trunk_out = trunk;
	return 0;
}

static int embed(struct vpa_nn *trunk, const float *x, size_t n, float **out, struct vpa_err *err)
{
	size_t off[2] = {0, n}, rows, dim;
	struct vpa_nn_batch in = {1, off, x, NULL};
	int rc = vpa_nn_forward(trunk, &in, VPA_NN_EVAL, err);
	if (rc)
		return rc;
	const float *e = vpa_nn_output(trunk, &rows, &dim);
	*out = xmalloc(xmul(xmul(rows, dim), sizeof(float)));
	memcpy(*out, e, rows * dim * sizeof(float));
	return 0;
}

/*
 * Speaker verification on the sv_test users: the first n_enrol rows of each
 * user enrol, the rest are tests; score = mean over enrolment vectors of the
 * cosine (eq. 1), every test against every enrolled speaker.  ROCCH-EER.
 */
int vpa_fls_sv_eer(const float *emb, size_t dim, const size_t *off, size_t n_spk, size_t n_enrol,
		   double *eer, size_t *n_tar_out, size_t *n_non_out, struct vpa_err *err)
{
	double *en = xcalloc(xmul(n_spk, dim), sizeof(double));
	size_t n_test = 0;
	for (size_t s = 0; s < n_spk; s++) {
		size_t a = off[s], b = off[s + 1], ne = b - a < n_enrol ? b - a : n_enrol;
		for (size_t r = a; r < a + ne; r++) {
			double nn = 0;
			for (size_t k = 0; k < dim; k++)
				nn += (double)emb[r * dim + k] * emb[r * dim + k];
			nn = nn > 0 ? 1 / sqrt(nn) : 0;
			for (size_t k = 0; k < dim; k++)
				en[s * dim + k] += emb[r * dim + k] * nn / (double)ne;
		}
		if (b - a > n_enrol)
			n_test += b - a - n_enrol;
	}
	double *tar = xmalloc(xmul(n_test ? n_test : 1, sizeof(double)));
	double *non = xmalloc(xmul(xmul(n_test ? n_test : 1, n_spk), sizeof(double)));
	size_t nt = 0, nn_ = 0;
	double *tv = xmalloc(xmul(dim, sizeof(double)));
	for (size_t s = 0; s < n_spk; s++)
		for (size_t r = off[s] + n_enrol; r < off[s + 1]; r++) {
			double nrm = 0;
			for (size_t k = 0; k < dim; k++) {
				tv[k] = emb[r * dim + k];
				nrm += tv[k] * tv[k];
			}
			nrm = nrm > 0 ? 1 / sqrt(nrm) : 0;
			for (size_t e = 0; e < n_spk; e++) {
				double sc = 0;
				for (size_t k = 0; k < dim; k++)
					sc += en[e * dim + k] * tv[k];
				sc *= nrm;
				if (e == s)
					tar[nt++] = sc;
				else
					non[nn_++] = sc;
			}
		}
	int rc = 0;
	if (nt == 0 || nn_ == 0) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "speaker verification needs users with more than %zu utterances "
			      "(enrol) among the sv_test users", n_enrol);
	} else {
		vpa_sort_scores(tar, NULL, nt);
		vpa_sort_scores(non, NULL, nn_);
		struct vpa_scores sc = {tar, nt, non, nn_, NULL, NULL};
		struct vpa_metrics_opts mo;
		struct vpa_metrics m;
		vpa_metrics_opts_init(&mo);
		rc = vpa_metrics_all(&sc, &mo, &m, err);
		if (!rc) {
			*eer = m.eer;
			*n_tar_out = nt;
			*n_non_out = nn_;
		}
	}
	free(en);
	free(tar);
	free(non);
	free(tv);
	return rc;
}

/* ---- build ------------------------------------------------------------------------ */

static void fls_free(struct vpa_target *t)
{
	struct vpa_fls_target *T = t->data;
	if (!T)
		return;
	vpa_fls_pop_release(&T->pop);
	free(T->train);
	free(T->test);
	free(T->sv_train);
	free(T->sv_test);
	free(T->sv_train_off);
	free(T->sv_test_off);
	vpa_nn_free(T->init_model);
	for (size_t i = 0; i < T->n_reg; i++) {
		free(T->reg[i].curve_round);
		free(T->reg[i].curve_acc);
		vpa_nn_free(T->reg[i].model);
		free(T->reg[i].emb);
		free(T->reg[i].emb_train);
	}
	free(T->reg);
	free(T->emb_baseline);
	free(T->emb_train_baseline);
	free(T);
	t->data = NULL;
}

static struct vpa_json *priv_json(const struct vpa_fls_target *T, const struct vpa_fls_regime_res *R)
{
	const struct vpa_fls_privacy *p = &R->priv;
	struct vpa_json *o = vpa_json_obj();
	vpa_json_set_str(o, "regime", vpa_fls_regime_names[R->regime]);
	vpa_json_set_num(o, "clip", p->clip);
	vpa_json_set_num(o, "delta", p->delta);
	vpa_json_set_num(o, "epsilon_local", p->eps_local);
	vpa_json_set_num(o, "epsilon_local_run", p->eps_local_run);
	vpa_json_set_num(o, "max_participations", (double)R->max_participations);
	vpa_json_set_num(o, "epsilon_central", p->eps_central);
	if (R->regime == VPA_FLS_LOCAL) {
		vpa_json_set_num(o, "sigma_local", p->sigma_local);
		vpa_json_set_str(o, "local_mechanism",
				 "analytic Gaussian (Balle & Wang 2018), L2 sensitivity 2C");
	}
	if (R->regime == VPA_FLS_CENTRAL || R->regime == VPA_FLS_CENTRAL_LOCAL) {
		vpa_json_set_num(o, "noise_multiplier", p->z);
		vpa_json_set_num(o, "rdp_order", p->rdp_order);
		vpa_json_set_num(o, "q", p->q_run);
		vpa_json_set_num(o, "training_users", (double)T->n_train);
		if (p->q_deploy == p->q_deploy) {
			vpa_json_set_num(o, "epsilon_deployment", p->eps_deploy);
			vpa_json_set_num(o, "q_deployment", p->q_deploy);
			vpa_json_set_num(o, "deployment_population", T->population);
		}
	}
	if (R->regime == VPA_FLS_CENTRAL_LOCAL) {
		struct vpa_json *pu = vpa_json_obj();
		vpa_json_set_num(pu, "epsilon", p->pu.eps);
		vpa_json_set_num(pu, "epsilon0", p->pu.eps0);
		vpa_json_set_num(pu, "epsilon_cap", p->pu.eps_cap);
		vpa_json_set_num(pu, "epsilon_cap_exact", p->pu.eps_cap_exact);
		vpa_json_set_num(pu, "gamma", p->pu.gamma);
		vpa_json_set_num(pu, "p", p->pu.p);
		vpa_json_set_num(pu, "scale", p->pu.scale);
		vpa_json_set(o, "privunit", pu);
		struct vpa_json *sd = vpa_json_obj();
		vpa_json_set_num(sd, "epsilon", p->sdp.eps);
		vpa_json_set_num(sd, "k", p->sdp.k);
		vpa_json_set_num(sd, "std_max", sqrt(p->sdp.var_max));
		vpa_json_set(o, "scalar", sd);
		vpa_json_set_str(o, "note",
				 "epsilon_central is the accountant's value for contributions of L2 "
				 "norm <= C; the PrivUnit output is larger (norm up to scale * max "
				 "|r_hat|), so for this regime the guarantee against the server rests "
				 "on epsilon_local");
	}
	return o;
}

static int build(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg, struct vpa_target *out,
		 struct vpa_err *err)
{
	struct vpa_fls_target *T = xcalloc(1, sizeof(*T));
	int rc = 0;
	out->data = T;
	T->seed = ctx->seed;
	{
		struct vpa_rng r;
		vpa_rng_split(&r, ctx->seed, "fls/target");
		T->seed = vpa_rng_u64(&r);
	}
	int import = !strcmp(S(cfg, "source"), "import");
	T->simulated = !import;
	out->simulated = !import;
	if (import) {
		char *v = vpa_path_join(ctx->dir, S(cfg, "vectors"));
		char *u = vpa_path_join(ctx->dir, S(cfg, "utt2user"));
		char *l = vpa_path_join(ctx->dir, S(cfg, "labels"));
		rc = vpa_fls_import(v, u, l, &T->pop, err);
		free(v);
		free(u);
		free(l);
		if (rc)
			return rc;
	} else {
		struct vpa_fls_sim_opts so;
		vpa_fls_sim_opts_init(&so);
		so.n_users = I(cfg, "users");
		so.n_utts = I(cfg, "utterances");
		so.n_classes = I(cfg, "classes");
		so.spk_rank = I(cfg, "speaker_rank");
		so.spk_scale = N(cfg, "speaker_scale");
		so.class_shift = N(cfg, "class_shift");
		so.noise = N(cfg, "noise");
		so.seed = T->seed;
		if ((rc = vpa_fls_simulate(&so, &T->pop, err)))
			return rc;
	}
	struct vpa_fls_pop *pop = &T->pop;
	T->population = vpa_ymap_get(cfg, "population") ? N(cfg, "population") : NAN;
	T->cohort = I(cfg, "cohort");
	T->rounds = I(cfg, "rounds");
	T->epsilon = N(cfg, "epsilon");
	T->delta = N(cfg, "delta");
	T->local_epsilon = N(cfg, "local_epsilon");
	T->norm_epsilon = N(cfg, "norm_epsilon");
	T->clip = N(cfg, "clip");
	T->hidden = I(cfg, "hidden");
	T->local_epochs = I(cfg, "local_epochs");
	T->local_batch = I(cfg, "local_batch");
	T->local_lr = N(cfg, "local_lr");
	T->server_lr = N(cfg, "server_lr");
	T->eval_every = I(cfg, "eval_every");
	T->emb_dim = I(cfg, "emb_dim");
	T->n_enrol = I(cfg, "enrol");
	size_t n_test = I(cfg, "test_users"), n_svtr = I(cfg, "sv_train_users"),
	       n_svte = I(cfg, "sv_test_users");
	if (pop->n_users < n_test + n_svtr + n_svte + T->cohort)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"target '%s': %zu users, but test_users + sv_train_users + "
				"sv_test_users + cohort = %zu", out->id, pop->n_users,
				n_test + n_svtr + n_svte + T->cohort);
	if (T->population == T->population && T->population < (double)T->cohort)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"target '%s': population (%g) must be at least the cohort (%zu)",
				out->id, T->population, T->cohort);
	/* user splits: one shuffle */
	size_t nu = pop->n_users;
	size_t *perm = xmalloc(xmul(nu, sizeof(size_t)));
	{
		struct vpa_rng r;
		vpa_rng_split(&r, T->seed, "fls/split");
		for (size_t i = 0; i < nu; i++)
			perm[i] = i;
		for (size_t i = nu; i > 1; i--) {
			size_t j = (size_t)vpa_rng_below(&r, i), t = perm[i - 1];
			perm[i - 1] = perm[j];
			perm[j] = t;
		}
	}
	T->n_test = n_test;
	T->n_sv_train = n_svtr;
	T->n_sv_test = n_svte;
	T->n_train = nu - n_test - n_svtr - n_svte;
	T->test = xmalloc(xmul(n_test, sizeof(size_t)));
	T->sv_train = xmalloc(xmul(n_svtr, sizeof(size_t)));
	T->sv_test = xmalloc(xmul(n_svte, sizeof(size_t)));
	T->train = xmalloc(xmul(T->n_train, sizeof(size_t)));
	memcpy(T->test, perm, n_test * sizeof(size_t));
	memcpy(T->sv_train, perm + n_test, n_svtr * sizeof(size_t));
	memcpy(T->sv_test, perm + n_test + n_svtr, n_svte * sizeof(size_t));
	memcpy(T->train, perm + n_test + n_svtr + n_svte, T->n_train * sizeof(size_t));
	free(perm);
	/* standardise every dimension with the training users' statistics */
	{
		size_t d = pop->d, cnt = 0;
		double *mu = xcalloc(d, sizeof(double)), *sd = xcalloc(d, sizeof(double));
		for (size_t i = 0; i < T->n_train; i++)
			for (size_t r = pop->off[T->train[i]]; r < pop->off[T->train[i] + 1]; r++, cnt++)
				for (size_t k = 0; k < d; k++)
					mu[k] += pop->x[r * d + k];
		for (size_t k = 0; k < d; k++)
			mu[k] /= (double)cnt;
		for (size_t i = 0; i < T->n_train; i++)
			for (size_t r = pop->off[T->train[i]]; r < pop->off[T->train[i] + 1]; r++)
				for (size_t k = 0; k < d; k++) {
					double e = pop->x[r * d + k] - mu[k];
					sd[k] += e * e;
				}
		for (size_t k = 0; k < d; k++) {
			sd[k] = sqrt(sd[k] / (double)cnt);
			if (!(sd[k] > 0))
				sd[k] = 1;
		}
		for (size_t r = 0; r < pop->n_rows; r++)
			for (size_t k = 0; k < d; k++)
				pop->x[r * d + k] = (float)((pop->x[r * d + k] - mu[k]) / sd[k]);
		free(mu);
		free(sd);
	}
	/* the vocal classifier before round 1 */
	T->init_model = vpa_nn_new(pop->d);
	vpa_nn_add_dense(T->init_model, T->hidden);
	vpa_nn_add_simple(T->init_model, VPA_NN_RELU);
	vpa_nn_add_dense(T->init_model, pop->n_classes);
	vpa_nn_init_params(T->init_model, T->seed ^ 0xf1f1);
	vpa_nn_params(T->init_model, &T->n_params);

	float *tx = NULL, *svx = NULL, *svtx = NULL;
	uint32_t *ty = NULL, *svy = NULL, *svty = NULL, *spk = NULL;
	size_t tn, svn, svtn;
	gather(pop, T->test, T->n_test, &tx, &ty, NULL, &tn);
	gather(pop, T->sv_train, T->n_sv_train, &svx, &svy, &T->sv_train_off, &svn);
	gather(pop, T->sv_test, T->n_sv_test, &svtx, &svty, &T->sv_test_off, &svtn);
	spk = xmalloc(xmul(svn ? svn : 1, sizeof(uint32_t)));
	for (size_t i = 0; i < T->n_sv_train; i++)
		for (size_t r = T->sv_train_off[i]; r < T->sv_train_off[i + 1]; r++)
			spk[r] = (uint32_t)i;

	/* the regimes */
	const struct vpa_ynode *regs = vpa_ymap_get(cfg, "regimes");
	size_t nreg = regs ? regs->n : VPA_FLS_N_REGIMES;
	T->reg = xcalloc(nreg, sizeof(*T->reg));
	struct vpa_json *info = vpa_json_obj(), *rj = vpa_json_arr();
	out->info = info;
	int distill = vpa_cfg_bool(cfg, &schema, "distill");
	size_t emb_hidden = I(cfg, "emb_hidden"), emb_epochs = I(cfg, "emb_epochs");
	double emb_lr = N(cfg, "emb_lr"), temp = N(cfg, "temperature"),
	       gamma = N(cfg, "distill_weight");
	int squared = !strcmp(S(cfg, "distill_loss"), "squared");
	T->sv_eer_baseline = NAN;
	for (size_t i = 0; i < nreg && !rc; i++) {
		struct vpa_fls_regime_res *R = &T->reg[T->n_reg++];
		R->regime = regs ? (enum vpa_fls_regime)vpa_fls_regime_parse(regs->items[i]->str)
				 : (enum vpa_fls_regime)i;
		R->sv_eer = NAN;
		if ((rc = privacy_setup(T, R->regime, &R->priv, err)))
			break;
		if ((rc = fl_train(ctx, T, R, tx, ty, tn, err)))
			break;
		/*
		 * The run's local guarantee per user composes their participations:
		 * k Gaussian releases of std s and L2 sensitivity 2C are one Gaussian
		 * mechanism of sensitivity 2C sqrt(k); PrivUnit2 + scalar DP are pure,
		 * so k releases give k eps (basic composition).
		 */
		struct vpa_fls_privacy *pv = &R->priv;
		double k = (double)R->max_participations;
		pv->eps_local_run = NAN;
		if (R->regime == VPA_FLS_LOCAL && k >= 1 &&
		    (rc = vpa_gauss_analytic_epsilon(pv->sigma_local, T->delta, 2 * T->clip * sqrt(k),
						     &pv->eps_local_run, err)))
			break;
		if (R->regime == VPA_FLS_CENTRAL_LOCAL)
			pv->eps_local_run = k * pv->eps_local;
	}
	/* speaker embeddings: baseline, then one distilled per regime */
	if (!rc && distill) {
		struct sv_data D = {svx, svn, pop->d, spk, T->n_sv_train, NULL, pop->n_classes};
		struct vpa_nn *trunk = NULL;
		double t0 = vpa_now();
		if (!(rc = sv_train(&D, emb_hidden, T->emb_dim, emb_epochs, emb_lr, temp, 0, squared,
				    T->seed ^ 0xe3b, &trunk, err)) &&
		    !(rc = embed(trunk, svtx, svtn, &T->emb_baseline, err)) &&
		    !(rc = embed(trunk, svx, svn, &T->emb_train_baseline, err)))
			rc = vpa_fls_sv_eer(T->emb_baseline, T->emb_dim, T->sv_test_off, T->n_sv_test,
				    T->n_enrol, &T->sv_eer_baseline, &T->n_sv_trials_tar,
				    &T->n_sv_trials_non, err);
		vpa_nn_free(trunk);
		double base_secs = vpa_now() - t0;
		vpa_json_set_num(info, "sv_baseline_secs", base_secs);
		float *soft = xmalloc(xmul(xmul(svn ? svn : 1, pop->n_classes), sizeof(float)));
		for (size_t i = 0; i < T->n_reg && !rc; i++) {
			struct vpa_fls_regime_res *R = &T->reg[i];
			t0 = vpa_now();
			size_t off[2] = {0, svn}, rows, K;
			struct vpa_nn_batch in = {1, off, svx, NULL};
			if ((rc = vpa_nn_forward(R->model, &in, VPA_NN_EVAL, err)))
				break;
			const float *z = vpa_nn_output(R->model, &rows, &K);
			/* the teacher's outputs softened at T (eq. 3) */
			for (size_t r = 0; r < rows * K; r++)
				soft[r] = (float)(z[r] / temp);
			vpa_nn_softmax(soft, rows, K, soft);
			D.soft = soft;
			trunk = NULL;
			if (!(rc = sv_train(&D, emb_hidden, T->emb_dim, emb_epochs, emb_lr, temp, gamma,
					    squared, T->seed ^ 0xe3b, &trunk, err)) &&
			    !(rc = embed(trunk, svtx, svtn, &R->emb, err)) &&
			    !(rc = embed(trunk, svx, svn, &R->emb_train, err))) {
				size_t a, b;
				rc = vpa_fls_sv_eer(R->emb, T->emb_dim, T->sv_test_off, T->n_sv_test, T->n_enrol,
					    &R->sv_eer, &a, &b, err);
			}
			vpa_nn_free(trunk);
			R->distill_secs = vpa_now() - t0;
		}
		free(soft);
	}
	free(tx);
	free(ty);
	free(svx);
	free(svy);
	free(svtx);
	free(svty);
	free(spk);
	if (rc)
		return rc;
	/* the description for results.json */
	vpa_json_set_str(info, "source", import ? "import" : "simulate");
	vpa_json_set_num(info, "users", (double)pop->n_users);
	vpa_json_set_num(info, "utterances", (double)pop->n_rows);
	vpa_json_set_num(info, "dim", (double)pop->d);
	vpa_json_set_num(info, "classes", (double)pop->n_classes);
	vpa_json_set_num(info, "train_users", (double)T->n_train);
	vpa_json_set_num(info, "test_users", (double)T->n_test);
	vpa_json_set_num(info, "sv_train_users", (double)T->n_sv_train);
	vpa_json_set_num(info, "sv_test_users", (double)T->n_sv_test);
	if (T->population == T->population) {
		vpa_json_set_num(info, "deployment_population", T->population);
		vpa_json_set_str(info, "accounting_note",
				 "epsilon and q describe this run (cohorts drawn from the training "
				 "users); epsilon_deployment and q_deployment the stated deployment "
				 "population, for which the central noise is calibrated");
	} else {
		vpa_json_set_str(info, "accounting_note",
				 "epsilon and q describe this run (cohorts drawn from the training "
				 "users); no deployment population is stated");
	}
	vpa_json_set_num(info, "cohort", (double)T->cohort);
	vpa_json_set_num(info, "rounds", (double)T->rounds);
	vpa_json_set_num(info, "model_params", (double)T->n_params);
	vpa_json_set_num(info, "sv_eer_baseline", T->sv_eer_baseline);
	vpa_json_set_num(info, "sv_target_trials", (double)T->n_sv_trials_tar);
	vpa_json_set_num(info, "sv_nontarget_trials", (double)T->n_sv_trials_non);
	for (size_t i = 0; i < T->n_reg; i++) {
		const struct vpa_fls_regime_res *R = &T->reg[i];
		struct vpa_json *o = priv_json(T, R);
		vpa_json_set_num(o, "accuracy", R->acc_final);
		vpa_json_set_num(o, "snr", R->snr);
		vpa_json_set_num(o, "first_update_norm", R->first_norm);
		vpa_json_set_num(o, "first_noise_norm", R->noise_norm);
		vpa_json_set_num(o, "sv_eer_distilled", R->sv_eer);
		vpa_json_set_num(o, "train_secs", R->train_secs);
		vpa_json_set_num(o, "distill_secs", R->distill_secs);
		vpa_json_push(rj, o);
	}
	vpa_json_set(info, "regimes", rj);
	return 0;
}

const struct vpa_target_kind vpa_target_fl_speaker = {
	.name = "fl_speaker_classifier",
	.schema = &schema,
	.doc = "The federated vocal classifier of Granqvist et al. (Apple, Interspeech 2020): "
	       "users with 520-dimensional trigger-phrase supervectors (26 MFCCs x 20 HMM-state "
	       "means) and a private side-information class, simulated or imported; a classifier "
	       "of the class trained with federated averaging over sampled cohorts under the "
	       "regimes none, local (analytic Gaussian per update), central (Gaussian on the sum, "
	       "noise multiplier from the RDP accountant for the run, or for a stated deployment "
	       "population, whose epsilon is then reported beside the run's) and "
	       "central_local (central plus PrivUnit2 and the scalar norm mechanism); and the "
	       "speaker-embedding network distilled from each classifier, with its verification "
	       "EER.  Attack it with `fl_training`, `update_linkage` and `attribute_inference`.",
	.validate = validate,
	.build = build,
	.free = fls_free,
};
