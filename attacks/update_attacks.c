/*
 * attacks/update_attacks.c - the attack kinds on the federated vocal
 * classifier (target kind `fl_speaker_classifier`, targets/fl_speaker.h):
 *
 *   fl_training          the privacy-utility numbers of each regime
 *                        (Granqvist et al. 2020): test accuracy against
 *                        rounds, SNR of the first central update, epsilons,
 *                        noise multiplier, speaker-verification EER of the
 *                        baseline and distilled embedding networks;
 *   update_linkage       the server holds two released updates (clipped and
 *                        privatised as each regime does on the device): are
 *                        they from the same user?  Cosine or A1-style
 *                        statistics -> score set -> vpa_record_from_scores;
 *   attribute_inference  predict a user's private side-information class
 *                        from one released update, and from the distilled
 *                        speaker embeddings: accuracy against chance.
 */
#include "attacks/attacks.h"
#include "targets/fl_speaker.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INF INFINITY

static const char *const target_kinds[] = {"fl_speaker_classifier", NULL};

/* Subs = the target's regimes, in its order (its default: all four, in the
 * order of vpa_fls_regime_names).  opts: the attack's own (NULL for
 * fl_training, which has no keys), unused. */
static size_t regime_subs(const void *opts, const void *target_opts, const char ***names)
{
	(void)opts;
	const struct vpa_flspk_opts *to = target_opts;
	size_t n = to->regimes.n;
	*names = xcalloc(n ? n : 1, sizeof(**names));
	for (size_t i = 0; i < n; i++)
		(*names)[i] = to->regimes.v[i];
	return n;
}

static struct vpa_json *num_array(const double *x, size_t n)
{
	struct vpa_json *a = vpa_json_arr();
	for (size_t i = 0; i < n; i++)
		vpa_json_push(a, vpa_json_num(x[i]));
	return a;
}

static struct vpa_json *record(const char *attack, const char *sub)
{
	struct vpa_json *rec = vpa_json_obj();
	vpa_json_set_str(rec, "attack", attack);
	vpa_json_set(rec, "sub", vpa_json_str(sub));
	vpa_json_set(rec, "layer", vpa_json_null());
	vpa_json_set(rec, "sweep", vpa_json_null());
	return rec;
}

/* ---- DP audits (issue 28; the record convention shared by the DP targets) ----------
 *
 * An audit adds to a record's metrics `epsilon_lower_bound` (>= 0) and
 * `dp_audit` {method, alpha, delta, claimed_epsilon, claim_key, accountant,
 * adjacency, scope: "covered", counts, note}; an attack the regime's
 * guarantee does not cover gets `dp_audit` {scope: "outside", why} and no
 * bound.  Which guarantee covers which attack (targets/README.md, "Audits"):
 *   local, central_local  each release is (eps_local, delta)-DP on the device
 *                         (central_local: pure, delta 0) whatever the input:
 *                         update_linkage and attribute_inference see only
 *                         releases, so they are covered;
 *   central               the server sees clipped updates without noise (the
 *                         noise is on the aggregate): linkage and attribute
 *                         inference on single updates are outside; the
 *                         released model is covered, audited in fl_training
 *                         with canary users (one-run);
 *   none                  no claim, no audit.
 */

#define AUDIT_ALPHA_KEY(S)                                                                   \
	{"audit_alpha", VPA_K_NUM, 0, "0.05", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, \
	 "0.01",                                                                               \
	 "the audit's error probability: epsilon_lower_bound holds with probability at least " \
	 "1 - audit_alpha (all corrections for thresholds, pairs and classes included)",       \
	 VPA_AT(S, audit_alpha), VPA_MARK(S, audit_alpha_at)}

static struct vpa_json *audit_outside(const char *why)
{
	struct vpa_json *a = vpa_json_obj();
	vpa_json_set_str(a, "scope", "outside");
	vpa_json_set_str(a, "why", why);
	return a;
}

static struct vpa_json *audit_covered(const char *method, double alpha, double delta,
				      double claimed, const char *claim_key,
				      const char *accountant, const char *adjacency,
				      struct vpa_json *counts, const char *note)
{
	struct vpa_json *a = vpa_json_obj();
	vpa_json_set_str(a, "method", method);
	vpa_json_set_num(a, "alpha", alpha);
	vpa_json_set_num(a, "delta", delta);
	vpa_json_set_num(a, "claimed_epsilon", claimed);
	vpa_json_set_str(a, "claim_key", claim_key);
	vpa_json_set_str(a, "accountant", accountant);
	vpa_json_set_str(a, "adjacency", adjacency);
	vpa_json_set_str(a, "scope", "covered");
	vpa_json_set(a, "counts", counts);
	vpa_json_set_str(a, "note", note);
	return a;
}

/* The accountant behind a regime's local epsilon. */
static const char *local_accountant(enum vpa_fls_regime r)
{
	return r == VPA_FLS_LOCAL ? "analytic-gaussian" : "privunit";
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* ---- fl_training ---------------------------------------------------------------- */

/* typed options (config/schema.h), filled by validation */
struct training_opts {
	double audit_alpha;
	struct vpa_mark audit_alpha_at;
};

static const struct vpa_key train_keys[] = {
	AUDIT_ALPHA_KEY(struct training_opts),
	{NULL},
};
static const struct vpa_schema train_schema = {"attack fl_training", train_keys,
					       sizeof(struct training_opts)};

/*
 * The central regimes' one-run audit (Steinke, Nasr, Jagielski 2023) of the
 * released model from the target's canary users: "in" = the scores of the
 * included canaries, "out" = the others; the abstention counts chosen by
 * vpa_dp_audit_one_run_scores with its Bonferroni correction.  Claimed:
 * epsilon_central, the accountant's for this run's q (the canaries are
 * sampled at that q).
 */
static void central_audit(const struct vpa_fls_regime_res *R, double alpha, struct vpa_json *m)
{
	const struct vpa_fls_privacy *p = &R->priv;
	size_t n = R->n_canaries, ni = 0, no = 0;
	if (!n) {
		vpa_json_set(m, "dp_audit", audit_outside("not audited: the target has "
							  "audit_canaries: 0"));
		return;
	}
	double *in = xmalloc(xmul(n, sizeof(double))), *out = xmalloc(xmul(n, sizeof(double)));
	for (size_t c = 0; c < n; c++) {
		if (R->canary_in[c])
			in[ni++] = R->canary_score[c];
		else
			out[no++] = R->canary_score[c];
	}
	qsort(in, ni, sizeof(double), cmp_double);
	qsort(out, no, sizeof(double), cmp_double);
	struct vpa_one_run o;
	memset(&o, 0, sizeof(o));
	if (ni && no)
		vpa_dp_audit_one_run_scores(in, ni, out, no, alpha, p->delta, &o);
	free(in);
	free(out);
	struct vpa_json *cnt = vpa_json_obj();
	vpa_json_set_num(cnt, "m", (double)n);
	vpa_json_set_num(cnt, "included", (double)ni);
	vpa_json_set_num(cnt, "participations", (double)R->canary_rounds);
	vpa_json_set_num(cnt, "guesses", o.guesses);
	vpa_json_set_num(cnt, "correct", o.correct);
	vpa_json_set_num(cnt, "k_plus", o.k_plus);
	vpa_json_set_num(cnt, "k_minus", o.k_minus);
	vpa_json_set_num(cnt, "pairs", o.pairs);
	vpa_json_set_num(m, "epsilon_lower_bound", o.epsilon);
	vpa_json_set(m, "dp_audit",
		     audit_covered("one-run", alpha, p->delta, p->eps_central, "epsilon_central",
				   "rdp",
				   "user-level: add or remove one user with all their data "
				   "(each canary user included with probability 1/2, seeded)",
				   cnt,
				   "one training run with canary users (Andrew et al. 2024): an "
				   "included canary sends the clipping bound times its own random "
				   "direction when sampled (q per round); score: cosine of that "
				   "direction with the final model's change"));
}

static void training_audit(const struct vpa_fls_regime_res *R, double alpha, struct vpa_json *m)
{
	if (R->regime == VPA_FLS_CENTRAL || R->regime == VPA_FLS_CENTRAL_LOCAL)
		central_audit(R, alpha, m);
	else if (R->regime == VPA_FLS_LOCAL)
		vpa_json_set(m, "dp_audit",
			     audit_outside("local DP is audited on the releases it protects "
					   "(update_linkage, attribute_inference); this run has no "
					   "canary users"));
}
static const char *const train_metrics[] = {
	"accuracy", "accuracy_initial", "snr", "epsilon", "epsilon_local", "epsilon_central",
	"epsilon_deployment", "q", "q_deployment", "epsilon_local_run", "max_participations",
	"noise_multiplier", "sigma_local", "first_update_norm", "first_noise_norm",
	"sv_eer_distilled", "sv_eer_baseline", "epsilon_lower_bound", NULL,
};

static int train_run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
		     const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	(void)ctx;
	(void)err;
	const struct training_opts *to = opts;
	const struct vpa_fls_target *T = t->data;
	struct vpa_json *series = vpa_json_arr();
	for (size_t i = 0; i < T->n_reg; i++) {
		const struct vpa_fls_regime_res *R = &T->reg[i];
		const struct vpa_fls_privacy *p = &R->priv;
		struct vpa_json *rec = record(id, vpa_fls_regime_names[R->regime]);
		struct vpa_json *m = vpa_json_obj();
		vpa_json_set_num(m, "accuracy", R->acc_final);
		vpa_json_set_num(m, "accuracy_initial", R->curve_acc[0]);
		vpa_json_set_num(m, "snr", R->snr);
		/* the headline epsilon is the run's: local DP composed over a user's
		 * participations, central DP for the run's sampling rate */
		double eps = R->regime == VPA_FLS_LOCAL ? p->eps_local_run : p->eps_central;
		vpa_json_set_num(m, "epsilon", eps);
		vpa_json_set_num(m, "epsilon_local", p->eps_local);
		vpa_json_set_num(m, "epsilon_local_run", p->eps_local_run);
		vpa_json_set_num(m, "max_participations",
				 R->regime == VPA_FLS_NONE ? NAN : (double)R->max_participations);
		vpa_json_set_num(m, "epsilon_central", p->eps_central);
		if (R->regime == VPA_FLS_CENTRAL || R->regime == VPA_FLS_CENTRAL_LOCAL)
			vpa_json_set_num(m, "q", p->q_run);
		if (p->q_deploy == p->q_deploy) {
			/* a stated deployment: a second, labelled guarantee beside the run's */
			vpa_json_set_num(m, "epsilon_deployment", p->eps_deploy);
			vpa_json_set_num(m, "q_deployment", p->q_deploy);
		}
		if (R->regime == VPA_FLS_LOCAL) {
			struct vpa_json *notes = vpa_json_arr();
			vpa_json_push(notes, vpa_json_str("epsilon (local): this run, per user over "
							  "max_participations releases; epsilon_local: "
							  "one release"));
			vpa_json_set(rec, "notes", notes);
		}
		if (p->q_run == p->q_run) {
			char note[320];
			int k = snprintf(note, sizeof(note), "epsilon, q: this run (cohorts of %zu drawn "
					 "from %zu training users)", T->cohort, T->n_train);
			if (p->q_deploy == p->q_deploy && k > 0 && (size_t)k < sizeof(note))
				snprintf(note + k, sizeof(note) - (size_t)k, "; epsilon_deployment, "
					 "q_deployment: the stated population of %g, for which the "
					 "noise is calibrated", T->population);
			struct vpa_json *notes = vpa_json_arr();
			vpa_json_push(notes, vpa_json_str(note));
			vpa_json_set(rec, "notes", notes);
		}
		vpa_json_set_num(m, "delta", R->regime == VPA_FLS_NONE ? NAN : p->delta);
		vpa_json_set_num(m, "noise_multiplier",
				 R->regime == VPA_FLS_CENTRAL || R->regime == VPA_FLS_CENTRAL_LOCAL
					 ? p->z : NAN);
		vpa_json_set_num(m, "sigma_local", R->regime == VPA_FLS_LOCAL ? p->sigma_local : NAN);
		vpa_json_set_num(m, "first_update_norm", R->first_norm);
		vpa_json_set_num(m, "first_noise_norm", R->noise_norm);
		vpa_json_set_num(m, "sv_eer_distilled", R->sv_eer);
		vpa_json_set_num(m, "sv_eer_baseline", T->sv_eer_baseline);
		if (R->regime == VPA_FLS_CENTRAL_LOCAL) {
			vpa_json_set_num(m, "privunit_epsilon", p->pu.eps);
			vpa_json_set_num(m, "privunit_epsilon_cap", p->pu.eps_cap);
			vpa_json_set_num(m, "privunit_gamma", p->pu.gamma);
			vpa_json_set_num(m, "privunit_scale", p->pu.scale);
			vpa_json_set_num(m, "norm_epsilon", p->sdp.eps);
		}
		training_audit(R, to->audit_alpha, m);
		vpa_json_set(rec, "metrics", m);
		vpa_json_push(out->records, rec);
		struct vpa_json *s = vpa_json_obj();
		vpa_json_set_str(s, "name", vpa_fls_regime_names[R->regime]);
		vpa_json_set(s, "x", num_array(R->curve_round, R->n_curve));
		vpa_json_set(s, "y", num_array(R->curve_acc, R->n_curve));
		vpa_json_push(series, s);
	}
	struct vpa_json *f = vpa_json_obj();
	char fid[256], title[512];
	snprintf(fid, sizeof(fid), "%s-accuracy", id);
	snprintf(title, sizeof(title), "Vocal classifier accuracy against rounds (%s%s)", t->id,
		 T->simulated ? ", simulated" : "");
	vpa_json_set_str(f, "type", "lines");
	vpa_json_set_str(f, "id", fid);
	vpa_json_set_str(f, "title", title);
	vpa_json_set_str(f, "xlabel", "round");
	vpa_json_set_str(f, "ylabel", "test accuracy");
	vpa_json_set(f, "logx", vpa_json_bool(0));
	vpa_json_set(f, "series", series);
	vpa_json_push(out->figures, f);
	return 0;
}

static char *train_title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: privacy and utility of the regimes of '%s'", id, target_id);
	return b.data;
}

const struct vpa_attack_kind vpa_attack_fl_training = {
	.name = "fl_training",
	.schema = &train_schema,
	.target_kinds = target_kinds,
	.metrics = train_metrics,
	.has_layers = 0,
	.doc = "Reports what each privacy regime of an `fl_speaker_classifier` gives and "
	       "costs: one record per regime (sub = regime) with the final test accuracy, the "
	       "SNR of the first central update (||mean clipped update|| / ||noise||; null "
	       "without noise), the epsilons (local, central and `epsilon`, the regime's "
	       "headline value, the run's; local: `epsilon_local` per update and "
	       "`epsilon_local_run` composed over a user's `max_participations`; central values "
	       "describe the run, q = cohort / training users, "
	       "and with a stated `population` `epsilon_deployment` and `q_deployment` describe "
	       "the deployment; the record's `notes` say which is which), the noise multiplier or "
	       "local sigma, and the speaker-"
	       "verification EER of the baseline and distilled embedding networks; one "
	       "\"lines\" figure of accuracy against rounds.",
	.subs = regime_subs,
	.run = train_run,
	.title = train_title,
};

/* ---- released updates (shared by the two attacks) ---------------------------------- */

struct upd_job {
	const struct vpa_fls_target *T;
	const struct vpa_fls_privacy *priv;
	const float *global;
	const size_t *users; /* (n) */
	int half;            /* 0: all rows, 1: first half, 2: second half */
	const char *stream;  /* rng stream prefix */
	struct vpa_nn **work;
	uint32_t **lbuf;
	float *out;          /* (n, n_params) */
	int *rc;
	struct vpa_err *errs;
};

static void upd_one(void *arg, size_t i, size_t tid)
{
	struct upd_job *j = arg;
	const struct vpa_fls_target *T = j->T;
	const struct vpa_fls_pop *pop = &T->pop;
	size_t u = j->users[i], a = pop->off[u], b = pop->off[u + 1], h = (b - a) / 2;
	if (j->half == 1)
		b = a + h;
	else if (j->half == 2)
		a = a + h;
	for (size_t k = 0; k < b - a; k++)
		j->lbuf[tid][k] = pop->cls[u];
	float *o = j->out + i * T->n_params;
	vpa_err_init(&j->errs[i]);
	j->rc[i] = vpa_fls_local_update(j->work[tid], j->global, pop->x + a * pop->d, j->lbuf[tid],
					b - a, T->local_epochs, T->local_batch, T->local_lr, o,
					&j->errs[i]);
	if (j->rc[i])
		return;
	char name[160];
	struct vpa_rng rng;
	snprintf(name, sizeof(name), "%s/%s/%zu/%d", j->stream,
		 vpa_fls_regime_names[j->priv->regime], u, j->half);
	vpa_rng_split(&rng, T->seed, name);
	vpa_fls_release(j->priv, o, T->n_params, &rng);
}

/* Released updates of users (n) against the global model `global`. */
static int released(struct vpa_run_ctx *ctx, const struct vpa_fls_target *T,
		    const struct vpa_fls_privacy *priv, const float *global, const size_t *users,
		    size_t n, int half, const char *stream, float **out, struct vpa_err *err)
{
	size_t nth = (size_t)(ctx->threads > 1 ? ctx->threads : 1);
	struct upd_job j = {T, priv, global, users, half, stream, NULL, NULL, NULL, NULL, NULL};
	j.work = xcalloc(nth, sizeof(*j.work));
	j.lbuf = xcalloc(nth, sizeof(*j.lbuf));
	size_t max_rows = 1;
	for (size_t i = 0; i < n; i++) {
		size_t r = T->pop.off[users[i] + 1] - T->pop.off[users[i]];
		if (r > max_rows)
			max_rows = r;
	}
	for (size_t k = 0; k < nth; k++) {
		j.work[k] = vpa_nn_clone(T->init_model);
		j.lbuf[k] = xmalloc(xmul(max_rows, sizeof(uint32_t)));
	}
	j.out = xmalloc(xmul(xmul(n ? n : 1, T->n_params), sizeof(float)));
	j.rc = xcalloc(n ? n : 1, sizeof(int));
	j.errs = xcalloc(n ? n : 1, sizeof(struct vpa_err));
	vpa_fls_par_for(n, nth, upd_one, &j);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		if (j.rc[i])
			rc = vpa_fail(err, j.rc[i], NULL, "%s", j.errs[i].msg);
	for (size_t k = 0; k < nth; k++) {
		vpa_nn_free(j.work[k]);
		free(j.lbuf[k]);
	}
	free(j.work);
	free(j.lbuf);
	free(j.rc);
	free(j.errs);
	if (rc) {
		free(j.out);
		return rc;
	}
	*out = j.out;
	return 0;
}

/* The global model the attacked updates start from. */
static const float *attacked_model(const struct vpa_fls_target *T,
				   const struct vpa_fls_regime_res *R, const char *which)
{
	size_t n;
	struct vpa_nn *net = !strcmp(which, "final") ? R->model : T->init_model;
	return vpa_nn_params(net, &n);
}

/* ---- update_linkage ------------------------------------------------------------------ */

/* typed options (config/schema.h), filled by validation */
struct update_linkage_opts {
	long long users;
	const char *statistic;
	const char *model;
	double omega;
	double audit_alpha;
	struct vpa_mark users_at, statistic_at, model_at, omega_at, audit_alpha_at;
};

static const struct vpa_key link_keys[] = {
	{"users", VPA_K_INT, 0, "200", 10, 1000000, 0, NULL, NULL, "200",
	 "attacked users (from the training users): each gives two updates, on the two halves "
	 "of their utterances",
	 VPA_AT(struct update_linkage_opts, users), VPA_MARK(struct update_linkage_opts, users_at)},
	{"statistic", VPA_K_ENUM, 0, "cosine", -INF, INF, 0, "cosine|a1", NULL, "a1",
	 "cosine: cos(update_1, update_2); a1: minus rho of the A1 attack on the per-input means "
	 "and standard deviations of the first layer's weight update",
	 VPA_AT(struct update_linkage_opts, statistic), VPA_MARK(struct update_linkage_opts, statistic_at)},
	{"model", VPA_K_ENUM, 0, "initial", -INF, INF, 0, "initial|final", NULL, "final",
	 "the global model the updates start from: before round 1, or the regime's final model",
	 VPA_AT(struct update_linkage_opts, model), VPA_MARK(struct update_linkage_opts, model_at)},
	{"omega", VPA_K_NUM, 0, "1", 0, INF, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "linkability prior ratio of mated to non-mated pairs",
	 VPA_AT(struct update_linkage_opts, omega), VPA_MARK(struct update_linkage_opts, omega_at)},
	AUDIT_ALPHA_KEY(struct update_linkage_opts),
	{NULL},
};
static const struct vpa_schema link_schema = {"attack update_linkage", link_keys, sizeof(struct update_linkage_opts)};
static const char *const link_metrics[] = {
	"eer", "eer_sweep", "cllr", "cllr_min", "linkability", "min_dcf", "zebra.dece",
	"zebra.log10_lr_worst", "n_target", "n_nontarget", "eer_threshold", "tied_fraction",
	"linkability_hist", "eer_flipped", "cllr_min_flipped", "min_dcf_flipped",
	"epsilon_lower_bound", "epsilon", "epsilon_local", NULL,
};

/*
 * The linkage audit of a local regime.  Neighbouring framing: the server's
 * test sees two releases (A, B), each the output of the device mechanism on
 * some user's data; "same user" and "different users" differ in the inputs
 * of both releases, and any two input pairs give output pairs that are
 * indistinguishable at the two releases' composed epsilon (local: one
 * Gaussian mechanism of L2 sensitivity 2C sqrt 2, at the run's delta;
 * central_local: pure, 2 eps_local), also for mixtures over users.  The
 * Clopper-Pearson bound needs independent trials, so the audit uses, of the
 * n x n pairs the record scores, the n matched pairs (A_i, B_i) and the n
 * shifted pairs (A_i, B_{i+1 mod n}): no release is in two trials of one
 * class.  Thresholds are swept over these scores with the Bonferroni
 * correction of vpa_dp_audit_scores.  tar (n) in user order, non the
 * record's n (n - 1) non-target scores, (i, k) at i (n - 1) + k - (k > i).
 */
static int link_audit(const struct vpa_fls_target *T, const struct vpa_fls_regime_res *R,
		      const double *tar, const double *non, size_t n, double alpha,
		      struct vpa_json *m, struct vpa_err *err)
{
	const struct vpa_fls_privacy *p = &R->priv;
	if (R->regime == VPA_FLS_NONE)
		return 0;
	if (R->regime == VPA_FLS_CENTRAL) {
		vpa_json_set(m, "dp_audit",
			     audit_outside("central DP noises only the aggregate: the server "
					   "receives each clipped update without noise, so no "
					   "guarantee covers linking two of them"));
		return 0;
	}
	double claim, delta;
	if (R->regime == VPA_FLS_LOCAL) {
		delta = p->delta;
		int rc = vpa_gauss_analytic_epsilon(p->sigma_local, delta, 2 * T->clip * sqrt(2.0),
						    &claim, err);
		if (rc)
			return rc;
	} else {
		delta = 0;
		claim = 2 * p->eps_local;
	}
	double *a = xmalloc(xmul(n, sizeof(double))), *b = xmalloc(xmul(n, sizeof(double)));
	for (size_t i = 0; i < n; i++) {
		size_t k = (i + 1) % n;
		a[i] = tar[i];
		b[i] = non[i * (n - 1) + k - (k > i)];
	}
	qsort(a, n, sizeof(double), cmp_double);
	qsort(b, n, sizeof(double), cmp_double);
	struct vpa_dp_audit au;
	vpa_dp_audit_scores(a, n, b, n, alpha, delta, VPA_AUDIT_CP, &au);
	free(a);
	free(b);
	struct vpa_json *cnt = vpa_json_obj();
	vpa_json_set_num(cnt, "fp", au.fp);
	vpa_json_set_num(cnt, "negatives", au.negatives);
	vpa_json_set_num(cnt, "fn", au.fn);
	vpa_json_set_num(cnt, "positives", au.positives);
	vpa_json_set_num(cnt, "thresholds", au.n_thresholds);
	vpa_json_set_num(cnt, "threshold", au.threshold);
	vpa_json_set_num(m, "epsilon", claim);
	vpa_json_set_num(m, "epsilon_local", p->eps_local);
	vpa_json_set_num(m, "epsilon_lower_bound", au.epsilon);
	vpa_json_set(m, "dp_audit",
		     audit_covered("cp", alpha, delta, claim, "epsilon", local_accountant(R->regime),
				   "record-level: the two releases compared, each from any input "
				   "of norm <= C (the device's local guarantee, per release)",
				   cnt,
				   R->regime == VPA_FLS_LOCAL
					   ? "claim: the two releases composed (one Gaussian mechanism "
					     "of sensitivity 2C sqrt 2); trials: the n matched and n "
					     "shifted pairs, thresholds Bonferroni-corrected"
					   : "claim: the two releases composed (2 x epsilon_local, "
					     "pure); trials: the n matched and n shifted pairs, "
					     "thresholds Bonferroni-corrected"));
	return 0;
}

/* Per-input mean and population std over the rows (hidden units) of the first weight. */
static void a1_stats(const float *w, size_t rows, size_t cols, double *mu, double *sd)
{
	for (size_t c = 0; c < cols; c++) {
		double s = 0, s2 = 0;
		for (size_t r = 0; r < rows; r++)
			s += w[r * cols + c];
		s /= (double)rows;
		for (size_t r = 0; r < rows; r++) {
			double e = w[r * cols + c] - s;
			s2 += e * e;
		}
		mu[c] = s;
		sd[c] = sqrt(s2 / (double)rows);
	}
}

static double l2(const double *x, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i] * x[i];
	return sqrt(s);
}

/* A1 (Tomashenko et al. 2022): rho = |mu_i - mu_k| / (|mu_i||mu_k|) + 10 |sd_i - sd_k| / (|sd_i||sd_k|). */
static double a1_rho(const double *mi, const double *si, const double *mk, const double *sk,
		     size_t n)
{
	double dm = 0, ds = 0;
	for (size_t i = 0; i < n; i++) {
		dm += (mi[i] - mk[i]) * (mi[i] - mk[i]);
		ds += (si[i] - sk[i]) * (si[i] - sk[i]);
	}
	double a = l2(mi, n) * l2(mk, n), b = l2(si, n) * l2(sk, n);
	return (a > 0 ? sqrt(dm) / a : 0) + 10 * (b > 0 ? sqrt(ds) / b : 0);
}

static int link_run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
		    const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct update_linkage_opts *lo = opts;
	const struct vpa_fls_target *T = t->data;
	size_t want = (size_t)lo->users;
	int a1 = !strcmp(lo->statistic, "a1");
	const char *which = lo->model;
	/* users with at least two utterances */
	size_t *users = xmalloc(xmul(T->n_train ? T->n_train : 1, sizeof(size_t)));
	size_t n = 0;
	for (size_t i = 0; i < T->n_train && n < want; i++)
		if (T->pop.off[T->train[i] + 1] - T->pop.off[T->train[i]] >= 2)
			users[n++] = T->train[i];
	if (n < want) {
		free(users);
		return vpa_fail(err, VPA_EINPUT, NULL,
				"attack '%s': %zu users asked, target '%s' has %zu training users with "
				"two utterances or more", id, want, t->id, n);
	}
	struct vpa_eval_opts o;
	vpa_eval_opts_init(&o);
	o.m.omega = lo->omega;
	o.seed = ctx->seed;
	struct vpa_json *series = vpa_json_arr();
	struct vpa_json *det = NULL;
	char title[512], fid[256];
	snprintf(title, sizeof(title), "DET: linking two updates of a user (%s on %s)", id, t->id);
	snprintf(fid, sizeof(fid), "%s-det", id);
	det = vpa_det_figure(fid, title, series);
	vpa_json_push(out->figures, det);
	series = vpa_json_get(det, "series");
	int rc = 0;
	size_t np = T->n_params;
	/* the first layer's weight: (hidden, d) at the start of the flat parameters */
	struct vpa_nn_tensor w0;
	vpa_nn_tensor(T->init_model, 0, 0, &w0);
	size_t rows = w0.shape[0], cols = w0.shape[1];
	for (size_t g = 0; g < T->n_reg && !rc; g++) {
		const struct vpa_fls_regime_res *R = &T->reg[g];
		const float *gm = attacked_model(T, R, which);
		float *A = NULL, *B = NULL;
		if ((rc = released(ctx, T, &R->priv, gm, users, n, 1, "ul", &A, err)))
			break;
		if ((rc = released(ctx, T, &R->priv, gm, users, n, 2, "ul", &B, err))) {
			free(A);
			break;
		}
		struct vpa_trials tr;
		vpa_trials_init(&tr);
		tr.n_tar = n;
		tr.n_non = n * (n - 1);
		tr.tar = xmalloc(xmul(n, sizeof(double)));
		tr.non = xmalloc(xmul(tr.n_non, sizeof(double)));
		size_t kt = 0, kn = 0;
		if (a1) {
			double *st = xmalloc(xmul(xmul(4 * n, cols), sizeof(double)));
			double *mA = st, *sA = st + n * cols, *mB = st + 2 * n * cols,
			       *sB = st + 3 * n * cols;
			for (size_t i = 0; i < n; i++) {
				a1_stats(A + i * np, rows, cols, mA + i * cols, sA + i * cols);
				a1_stats(B + i * np, rows, cols, mB + i * cols, sB + i * cols);
			}
			for (size_t i = 0; i < n; i++)
				for (size_t k = 0; k < n; k++) {
					double s = -a1_rho(mA + i * cols, sA + i * cols, mB + k * cols,
							   sB + k * cols, cols);
					if (i == k)
						tr.tar[kt++] = s;
					else
						tr.non[kn++] = s;
				}
			free(st);
		} else {
			double *na = xmalloc(xmul(n, sizeof(double))), *nb = xmalloc(xmul(n, sizeof(double)));
			for (size_t i = 0; i < n; i++) {
				na[i] = vpa_nn_norm(A + i * np, np);
				nb[i] = vpa_nn_norm(B + i * np, np);
			}
			for (size_t i = 0; i < n; i++)
				for (size_t k = 0; k < n; k++) {
					const float *x = A + i * np, *y = B + k * np;
					double s = 0;
					for (size_t q = 0; q < np; q++)
						s += (double)x[q] * y[q];
					double den = na[i] * nb[k];
					s = den > 0 ? s / den : 0;
					if (i == k)
						tr.tar[kt++] = s;
					else
						tr.non[kn++] = s;
				}
			free(na);
			free(nb);
		}
		free(A);
		free(B);
		size_t before = out->records->n;
		rc = vpa_record_from_scores(ctx, id, vpa_fls_regime_names[R->regime], -1, &tr, &o, out,
					    series, err);
		if (!rc && out->records->n > before) {
			struct vpa_json *m = vpa_json_get(out->records->items[out->records->n - 1],
							  "metrics");
			if (m)
				rc = link_audit(T, R, tr.tar, tr.non, n, lo->audit_alpha, m, err);
		}
		vpa_trials_release(&tr);
	}
	free(users);
	return rc;
}

static char *link_title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: linking released updates of '%s' to their users", id, target_id);
	return b.data;
}

const struct vpa_attack_kind vpa_attack_update_linkage = {
	.name = "update_linkage",
	.schema = &link_schema,
	.target_kinds = target_kinds,
	.metrics = link_metrics,
	.has_layers = 0,
	.doc = "The server holds two updates released by devices (each clipped and privatised "
	       "as the regime does on the device: none and central send the clipped update, "
	       "local adds its Gaussian noise, central_local sends the PrivUnit2/scalar output) "
	       "and asks whether they come from the same user.  Each attacked user trains two "
	       "updates on the two halves of their utterances; every pair is scored (cosine, or "
	       "minus the A1 rho of the first layer's weight-update statistics).  One record per "
	       "regime with every score-set metric, one DET figure, linkability figures.",
	.subs = regime_subs,
	.run = link_run,
	.title = link_title,
};

/* ---- attribute_inference -------------------------------------------------------------- */

/* typed options (config/schema.h), filled by validation */
struct attribute_opts {
	long long users;
	long long shadow_users;
	const char *model;
	double audit_alpha;
	struct vpa_mark users_at, shadow_users_at, model_at, audit_alpha_at;
};

static const struct vpa_key attr_keys[] = {
	{"users", VPA_K_INT, 0, "200", 10, 1000000, 0, NULL, NULL, "200",
	 "attacked users (training users) whose class is predicted from one released update",
	 VPA_AT(struct attribute_opts, users), VPA_MARK(struct attribute_opts, users_at)},
	{"shadow_users", VPA_K_INT, 0, "600", 10, 1000000, 0, NULL, NULL, "600",
	 "users with known classes whose released updates train the attacker (other training "
	 "users)",
	 VPA_AT(struct attribute_opts, shadow_users), VPA_MARK(struct attribute_opts, shadow_users_at)},
	{"model", VPA_K_ENUM, 0, "initial", -INF, INF, 0, "initial|final", NULL, "final",
	 "the global model the updates start from: before round 1, or the regime's final model",
	 VPA_AT(struct attribute_opts, model), VPA_MARK(struct attribute_opts, model_at)},
	AUDIT_ALPHA_KEY(struct attribute_opts),
	{NULL},
};
static const struct vpa_schema attr_schema = {"attack attribute_inference", attr_keys, sizeof(struct attribute_opts)};
static const char *const attr_metrics[] = {
	"accuracy", "chance", "advantage", "accuracy_embedding", "accuracy_embedding_baseline",
	"chance_embedding", "n_users", "n_shadow", "epsilon_lower_bound", "epsilon", "epsilon_local",
	NULL,
};

/*
 * Nearest class centroid by cosine: centroids from the rows of X (n, d) with
 * classes y; predict the rows of Z (m, d); returns the fraction of z equal to
 * truth.  Centroids are means of the L2-normalised rows.
 */
static double centroid_accuracy(const float *X, const uint32_t *y, size_t n, const float *Z,
				const uint32_t *truth, size_t m, size_t d, size_t K,
				uint32_t *pred /* (m) or NULL */)
{
	double *cen = xcalloc(xmul(K, d), sizeof(double));
	for (size_t i = 0; i < n; i++) {
		double nn = vpa_nn_norm(X + i * d, d);
		if (!(nn > 0))
			continue;
		for (size_t k = 0; k < d; k++)
			cen[y[i] * d + k] += X[i * d + k] / nn;
	}
	for (size_t c = 0; c < K; c++) {
		double s = l2(cen + c * d, d);
		if (s > 0)
			for (size_t k = 0; k < d; k++)
				cen[c * d + k] /= s;
	}
	size_t ok = 0;
	for (size_t i = 0; i < m; i++) {
		size_t best = 0;
		double bs = -INF;
		for (size_t c = 0; c < K; c++) {
			double s = 0;
			for (size_t k = 0; k < d; k++)
				s += cen[c * d + k] * Z[i * d + k];
			if (s > bs) {
				bs = s;
				best = c;
			}
		}
		ok += best == truth[i];
		if (pred)
			pred[i] = (uint32_t)best;
	}
	free(cen);
	return m ? (double)ok / (double)m : NAN;
}

/*
 * Chance: the accuracy of the best constant guess on truth (m), i.e. the
 * largest class frequency among the attacked users (an attacker without the
 * update cannot beat it on these users).
 */
static double best_constant(const uint32_t *truth, size_t m, size_t K)
{
	size_t *cnt = xcalloc(K, sizeof(size_t)), best = 0;
	for (size_t i = 0; i < m; i++)
		cnt[truth[i]]++;
	for (size_t c = 0; c < K; c++)
		if (cnt[c] > best)
			best = cnt[c];
	free(cnt);
	return m ? (double)best / (double)m : NAN;
}

/* Per-user mean of the L2-normalised embeddings of its rows: (n_users, dim). */
static float *user_means(const float *emb, const size_t *off, size_t n_users, size_t dim)
{
	float *o = xcalloc(xmul(n_users ? n_users : 1, dim), sizeof(float));
	for (size_t u = 0; u < n_users; u++) {
		size_t cnt = off[u + 1] - off[u];
		for (size_t r = off[u]; r < off[u + 1]; r++) {
			double nn = vpa_nn_norm(emb + r * dim, dim);
			if (!(nn > 0))
				continue;
			for (size_t k = 0; k < dim; k++)
				o[u * dim + k] += (float)(emb[r * dim + k] / nn / (double)cnt);
		}
	}
	return o;
}

static double emb_accuracy(const struct vpa_fls_target *T, const float *emb_train,
			   const float *emb_test)
{
	if (!emb_train || !emb_test)
		return NAN;
	const struct vpa_fls_pop *pop = &T->pop;
	float *a = user_means(emb_train, T->sv_train_off, T->n_sv_train, T->emb_dim);
	float *b = user_means(emb_test, T->sv_test_off, T->n_sv_test, T->emb_dim);
	uint32_t *ya = xmalloc(xmul(T->n_sv_train, sizeof(uint32_t)));
	uint32_t *yb = xmalloc(xmul(T->n_sv_test, sizeof(uint32_t)));
	for (size_t i = 0; i < T->n_sv_train; i++)
		ya[i] = pop->cls[T->sv_train[i]];
	for (size_t i = 0; i < T->n_sv_test; i++)
		yb[i] = pop->cls[T->sv_test[i]];
	double acc = centroid_accuracy(a, ya, T->n_sv_train, b, yb, T->n_sv_test, T->emb_dim,
				       pop->n_classes, NULL);
	free(a);
	free(b);
	free(ya);
	free(yb);
	return acc;
}

/*
 * The attribute audit of a local regime.  Under eps-LDP each user's release is
 * eps-indistinguishable between any two inputs, so between a user of class a
 * and one of class b (mixtures over users included): the attacker's "class
 * a?" on the attacked users of classes a and b is a hypothesis test with
 * FN = class-a users not predicted a, FP = class-b users predicted a.  Each
 * user gives one independent release and the classifier is fixed by the
 * shadow users, so the counts are independent trials: Clopper-Pearson bounds
 * on each ordered pair (a, b) present, at alpha / pairs (Bonferroni), and the
 * largest bound over the pairs.  Claim: epsilon_local of one release.
 */
static void attr_audit(const struct vpa_fls_regime_res *R, const uint32_t *truth,
		       const uint32_t *pred, size_t n, size_t K, double alpha, struct vpa_json *m)
{
	const struct vpa_fls_privacy *p = &R->priv;
	if (R->regime == VPA_FLS_NONE)
		return;
	if (R->regime == VPA_FLS_CENTRAL) {
		vpa_json_set(m, "dp_audit",
			     audit_outside("central DP noises only the aggregate: the server "
					   "receives each clipped update without noise, so no "
					   "guarantee covers inferring a user's class from it"));
		return;
	}
	double delta = R->regime == VPA_FLS_LOCAL ? p->delta : 0;
	double *cnt_cls = xcalloc(K, sizeof(double)), *hit = xcalloc(xmul(K, K), sizeof(double));
	for (size_t i = 0; i < n; i++) {
		cnt_cls[truth[i]]++;
		hit[(size_t)truth[i] * K + pred[i]]++; /* hit[t K + p]: truth t predicted p */
	}
	double pairs = 0;
	for (size_t a = 0; a < K; a++)
		for (size_t b = 0; b < K; b++)
			pairs += a != b && cnt_cls[a] > 0 && cnt_cls[b] > 0;
	struct vpa_dp_audit best;
	memset(&best, 0, sizeof(best));
	size_t ba = 0, bb = 0;
	int have = 0; /* best holds a pair (the first, while every bound is 0) */
	for (size_t a = 0; a < K && pairs > 0; a++)
		for (size_t b = 0; b < K; b++) {
			if (a == b || !(cnt_cls[a] > 0) || !(cnt_cls[b] > 0))
				continue;
			struct vpa_dp_audit au;
			double fn = cnt_cls[a] - hit[a * K + a], fp = hit[b * K + a];
			vpa_dp_audit_counts(fp, cnt_cls[b], fn, cnt_cls[a], alpha / pairs, delta,
					    VPA_AUDIT_CP, &au);
			if (!have || au.epsilon > best.epsilon) {
				have = 1;
				best = au;
				ba = a;
				bb = b;
			}
		}
	free(cnt_cls);
	free(hit);
	struct vpa_json *cnt = vpa_json_obj();
	vpa_json_set_num(cnt, "fp", best.fp);
	vpa_json_set_num(cnt, "negatives", best.negatives);
	vpa_json_set_num(cnt, "fn", best.fn);
	vpa_json_set_num(cnt, "positives", best.positives);
	vpa_json_set_num(cnt, "class_pairs", pairs);
	vpa_json_set_num(cnt, "class_a", (double)ba);
	vpa_json_set_num(cnt, "class_b", (double)bb);
	/* `epsilon` is the audited claim in every covered record (a gate's max_of) */
	vpa_json_set_num(m, "epsilon", p->eps_local);
	vpa_json_set_num(m, "epsilon_local", p->eps_local);
	vpa_json_set_num(m, "epsilon_lower_bound", best.epsilon);
	vpa_json_set(m, "dp_audit",
		     audit_covered("cp", alpha, delta, p->eps_local, "epsilon_local",
				   local_accountant(R->regime),
				   "record-level: one release, its input any update of norm <= C "
				   "(a user of class a against one of class b)",
				   cnt,
				   "the attacker's 'class a?' on users of classes a and b as a "
				   "hypothesis test; Clopper-Pearson on each ordered class pair, "
				   "Bonferroni over the pairs; counts of the pair with the largest "
				   "bound"));
}

static int attr_run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
		    const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct attribute_opts *ao = opts;
	const struct vpa_fls_target *T = t->data;
	const struct vpa_fls_pop *pop = &T->pop;
	size_t n = (size_t)ao->users;
	size_t ns = (size_t)ao->shadow_users;
	const char *which = ao->model;
	if (n + ns > T->n_train)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"attack '%s': users + shadow_users = %zu, target '%s' has %zu training "
				"users", id, n + ns, t->id, T->n_train);
	const size_t *users = T->train, *shadow = T->train + n;
	uint32_t *yu = xmalloc(xmul(n, sizeof(uint32_t))), *ys = xmalloc(xmul(ns, sizeof(uint32_t)));
	for (size_t i = 0; i < n; i++)
		yu[i] = pop->cls[users[i]];
	for (size_t i = 0; i < ns; i++)
		ys[i] = pop->cls[shadow[i]];
	double chance = best_constant(yu, n, pop->n_classes);
	/* the embedding attacker's chance on the verification speakers */
	uint32_t *eb = xmalloc(xmul(T->n_sv_test, sizeof(uint32_t)));
	for (size_t i = 0; i < T->n_sv_test; i++)
		eb[i] = pop->cls[T->sv_test[i]];
	double chance_emb = best_constant(eb, T->n_sv_test, pop->n_classes);
	free(eb);
	double acc_base = emb_accuracy(T, T->emb_train_baseline, T->emb_baseline);
	int rc = 0;
	for (size_t g = 0; g < T->n_reg && !rc; g++) {
		const struct vpa_fls_regime_res *R = &T->reg[g];
		const float *gm = attacked_model(T, R, which);
		float *U = NULL, *Sh = NULL;
		if ((rc = released(ctx, T, &R->priv, gm, shadow, ns, 0, "ai/shadow", &Sh, err)))
			break;
		if ((rc = released(ctx, T, &R->priv, gm, users, n, 0, "ai/target", &U, err))) {
			free(Sh);
			break;
		}
		uint32_t *pred = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
		double acc = centroid_accuracy(Sh, ys, ns, U, yu, n, T->n_params, pop->n_classes,
					       pred);
		free(U);
		free(Sh);
		struct vpa_json *rec = record(id, vpa_fls_regime_names[R->regime]);
		struct vpa_json *m = vpa_json_obj();
		vpa_json_set_num(m, "accuracy", acc);
		vpa_json_set_num(m, "chance", chance);
		vpa_json_set_num(m, "advantage", acc - chance);
		vpa_json_set_num(m, "accuracy_embedding", emb_accuracy(T, R->emb_train, R->emb));
		vpa_json_set_num(m, "accuracy_embedding_baseline", acc_base);
		vpa_json_set_num(m, "chance_embedding", chance_emb);
		vpa_json_set_num(m, "n_users", (double)n);
		vpa_json_set_num(m, "n_shadow", (double)ns);
		attr_audit(R, yu, pred, n, pop->n_classes, ao->audit_alpha, m);
		free(pred);
		vpa_json_set(rec, "metrics", m);
		vpa_json_push(out->records, rec);
	}
	free(yu);
	free(ys);
	return rc;
}

static char *attr_title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: inferring the private class of users of '%s'", id, target_id);
	return b.data;
}

const struct vpa_attack_kind vpa_attack_attribute_inference = {
	.name = "attribute_inference",
	.schema = &attr_schema,
	.target_kinds = target_kinds,
	.metrics = attr_metrics,
	.has_layers = 0,
	.doc = "Predicts a user's private side-information class from one released update "
	       "(as the device sends it in each regime), with a nearest-class-centroid "
	       "classifier (cosine) trained on the released updates of shadow users with known "
	       "classes; and from the speaker embeddings of the verification speakers (the "
	       "baseline network and the network distilled from the regime's classifier), "
	       "with centroids of the server-side training speakers.  One record per regime: "
	       "accuracy, chance (the best constant guess: the largest class frequency among "
	       "the attacked users), advantage = accuracy - chance, and the "
	       "embedding accuracies.",
	.subs = regime_subs,
	.run = attr_run,
	.title = attr_title,
};
