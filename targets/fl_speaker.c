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
 *
 * Split (the file had grown past 1,200 lines): this file holds the keys,
 * validation and building (on the options struct, struct vpa_flspk_opts);
 * targets/fl_speaker_train.c the regimes' names, the devices, the privacy
 * set-up and federated training; targets/fl_speaker_sv.c the speaker-embedding
 * network; targets/fl_speaker_int.h what they share.  This file calls the two
 * others; they never call it.
 */
#include "targets/fl_speaker_int.h"
#include "base/dist.h"
#include "base/la.h"
#include "learn/nn.h"
#include "metrics/metrics.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define INF INFINITY
static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "simulate", -INF, INF, 0, "simulate|import", NULL, "simulate",
	 "simulate: users drawn from the supervector model (targets/README.md); import: "
	 "`vectors`, `utt2user` and `labels`",
	 VPA_AT(struct vpa_flspk_opts, source), VPA_MARK(struct vpa_flspk_opts, source_at)},
	{"users", VPA_K_INT, 0, "4000", 100, 1000000, 0, NULL, NULL, "4000",
	 "simulate: users in the simulated population (cohorts are drawn from its training users)",
	 VPA_AT(struct vpa_flspk_opts, users), VPA_MARK(struct vpa_flspk_opts, users_at)},
	{"utterances", VPA_K_INT, 0, "8", 2, 1000, 0, NULL, NULL, "8",
	 "simulate: trigger-phrase supervectors per user",
	 VPA_AT(struct vpa_flspk_opts, utterances), VPA_MARK(struct vpa_flspk_opts, utterances_at)},
	{"classes", VPA_K_INT, 0, "6", 2, 1000, 0, NULL, NULL, "6",
	 "simulate: side-information classes",
	 VPA_AT(struct vpa_flspk_opts, classes), VPA_MARK(struct vpa_flspk_opts, classes_at)},
	{"speaker_rank", VPA_K_INT, 0, "40", 1, 520, 0, NULL, NULL, "40",
	 "simulate: rank of the speaker subspace",
	 VPA_AT(struct vpa_flspk_opts, speaker_rank), VPA_MARK(struct vpa_flspk_opts, speaker_rank_at)},
	{"speaker_scale", VPA_K_NUM, 0, "0.3", 0, 100, 0, NULL, NULL, "0.3",
	 "simulate: per-dimension std of the speaker offsets",
	 VPA_AT(struct vpa_flspk_opts, speaker_scale), VPA_MARK(struct vpa_flspk_opts, speaker_scale_at)},
	{"class_shift", VPA_K_NUM, 0, "0.12", 0, 100, 0, NULL, NULL, "0.12",
	 "simulate: per-dimension std of the side-information class offsets",
	 VPA_AT(struct vpa_flspk_opts, class_shift), VPA_MARK(struct vpa_flspk_opts, class_shift_at)},
	{"noise", VPA_K_NUM, 0, "1", 0, 100, 0, NULL, NULL, "1",
	 "simulate: per-dimension std between a user's utterances",
	 VPA_AT(struct vpa_flspk_opts, noise), VPA_MARK(struct vpa_flspk_opts, noise_at)},
	{"vectors", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/sv.ark",
	 "import: supervectors, a Kaldi archive or an (n, d) .npy",
	 VPA_AT(struct vpa_flspk_opts, vectors), VPA_MARK(struct vpa_flspk_opts, vectors_at)},
	{"utt2user", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/utt2user",
	 "import: `utterance user` lines (for .npy, one per row in row order)",
	 VPA_AT(struct vpa_flspk_opts, utt2user), VPA_MARK(struct vpa_flspk_opts, utt2user_at)},
	{"labels", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/user2class",
	 "import: `user class` lines, the private side information",
	 VPA_AT(struct vpa_flspk_opts, labels), VPA_MARK(struct vpa_flspk_opts, labels_at)},
	{"test_users", VPA_K_INT, 0, "500", 10, 1000000, 0, NULL, NULL, "500",
	 "users held out to measure the classifier's accuracy",
	 VPA_AT(struct vpa_flspk_opts, test_users), VPA_MARK(struct vpa_flspk_opts, test_users_at)},
	{"sv_train_users", VPA_K_INT, 0, "400", 10, 1000000, 0, NULL, NULL, "400",
	 "server-side speakers that train the speaker-embedding network",
	 VPA_AT(struct vpa_flspk_opts, sv_train_users), VPA_MARK(struct vpa_flspk_opts, sv_train_users_at)},
	{"sv_test_users", VPA_K_INT, 0, "200", 10, 1000000, 0, NULL, NULL, "200",
	 "speakers of the verification trials",
	 VPA_AT(struct vpa_flspk_opts, sv_test_users), VPA_MARK(struct vpa_flspk_opts, sv_test_users_at)},
	{"population", VPA_K_NUM, 0, NULL, 1, 1e12, 0, NULL, NULL, "1e8",
	 "a stated deployment population (the paper's 100M): the central noise is calibrated "
	 "for q = cohort / population and `epsilon_deployment` is reported beside the run's "
	 "`epsilon` (q = cohort / training users); absent: the noise is calibrated for the run",
	 VPA_AT(struct vpa_flspk_opts, population), VPA_MARK(struct vpa_flspk_opts, population_at)},
	{"cohort", VPA_K_INT, 0, "300", 1, 100000, 0, NULL, NULL, "300",
	 "users per round (sampled from the simulated training users)",
	 VPA_AT(struct vpa_flspk_opts, cohort), VPA_MARK(struct vpa_flspk_opts, cohort_at)},
	{"rounds", VPA_K_INT, 0, "60", 1, 100000, 0, NULL, NULL, "60", "federated rounds",
	 VPA_AT(struct vpa_flspk_opts, rounds), VPA_MARK(struct vpa_flspk_opts, rounds_at)},
	{"epsilon", VPA_K_NUM, 0, "2", 0, 1e6, VPA_KF_OPEN_LO, NULL, NULL, "2",
	 "target epsilon: of one update for `local`; for the central regimes, of the stated "
	 "deployment (`population`) when there is one, else of the run",
	 VPA_AT(struct vpa_flspk_opts, epsilon), VPA_MARK(struct vpa_flspk_opts, epsilon_at)},
	{"delta", VPA_K_NUM, 0, "1e-5", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "1e-5",
	 "target delta",
	 VPA_AT(struct vpa_flspk_opts, delta), VPA_MARK(struct vpa_flspk_opts, delta_at)},
	{"local_epsilon", VPA_K_NUM, 0, "25.7", 0, 1e6, VPA_KF_OPEN_LO, NULL, NULL, "25.7",
	 "central_local: the weak local budget (PrivUnit2 direction + scalar norm); paper 25.7",
	 VPA_AT(struct vpa_flspk_opts, local_epsilon), VPA_MARK(struct vpa_flspk_opts, local_epsilon_at)},
	{"norm_epsilon", VPA_K_NUM, 0, "2", 0, 1e6, VPA_KF_OPEN_LO, NULL, NULL, "2",
	 "central_local: the part of local_epsilon spent on the norm (the rest on the direction)",
	 VPA_AT(struct vpa_flspk_opts, norm_epsilon), VPA_MARK(struct vpa_flspk_opts, norm_epsilon_at)},
	{"clip", VPA_K_NUM, 0, "1", 0, 1e6, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "L2 clipping bound C of each user's update",
	 VPA_AT(struct vpa_flspk_opts, clip), VPA_MARK(struct vpa_flspk_opts, clip_at)},
	{"hidden", VPA_K_INT, 0, "16", 1, 100000, 0, NULL, NULL, "16",
	 "hidden units of the vocal classifier (520 -> hidden -> relu -> classes)",
	 VPA_AT(struct vpa_flspk_opts, hidden), VPA_MARK(struct vpa_flspk_opts, hidden_at)},
	{"local_epochs", VPA_K_INT, 0, "5", 1, 1000, 0, NULL, NULL, "5",
	 "passes over a user's utterances per round",
	 VPA_AT(struct vpa_flspk_opts, local_epochs), VPA_MARK(struct vpa_flspk_opts, local_epochs_at)},
	{"local_batch", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "4",
	 "local mini-batch (0: all of a user's utterances)",
	 VPA_AT(struct vpa_flspk_opts, local_batch), VPA_MARK(struct vpa_flspk_opts, local_batch_at)},
	{"local_lr", VPA_K_NUM, 0, "1", 0, 1e3, VPA_KF_OPEN_LO, NULL, NULL, "0.5",
	 "local SGD learning rate",
	 VPA_AT(struct vpa_flspk_opts, local_lr), VPA_MARK(struct vpa_flspk_opts, local_lr_at)},
	{"server_lr", VPA_K_NUM, 0, "1", 0, 1e3, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "server learning rate on the averaged update (1 = FedAvg)",
	 VPA_AT(struct vpa_flspk_opts, server_lr), VPA_MARK(struct vpa_flspk_opts, server_lr_at)},
	{"eval_every", VPA_K_INT, 0, "1", 1, 100000, 0, NULL, NULL, "5",
	 "rounds between accuracy evaluations",
	 VPA_AT(struct vpa_flspk_opts, eval_every), VPA_MARK(struct vpa_flspk_opts, eval_every_at)},
	{"regimes", VPA_K_ENUMLIST, 0, "[none, local, central, central_local]", -INF, INF,
	 VPA_KF_NONEMPTY, "none|local|central|central_local", NULL, "[none, central]",
	 "the privacy regimes to train (each one a sub of the attacks)",
	 VPA_AT(struct vpa_flspk_opts, regimes), VPA_MARK(struct vpa_flspk_opts, regimes_at)},
	{"distill", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "false",
	 "train the speaker-embedding networks (baseline and one distilled per regime)",
	 VPA_AT(struct vpa_flspk_opts, distill), VPA_MARK(struct vpa_flspk_opts, distill_at)},
	{"emb_dim", VPA_K_INT, 0, "100", 2, 10000, 0, NULL, NULL, "100",
	 "speaker-embedding dimension (the fifth, linear layer)",
	 VPA_AT(struct vpa_flspk_opts, emb_dim), VPA_MARK(struct vpa_flspk_opts, emb_dim_at)},
	{"emb_hidden", VPA_K_INT, 0, "256", 2, 10000, 0, NULL, NULL, "256",
	 "units of the four hidden layers (batch norm, sigmoid)",
	 VPA_AT(struct vpa_flspk_opts, emb_hidden), VPA_MARK(struct vpa_flspk_opts, emb_hidden_at)},
	{"emb_epochs", VPA_K_INT, 0, "20", 1, 10000, 0, NULL, NULL, "20",
	 "training epochs of the speaker-embedding network",
	 VPA_AT(struct vpa_flspk_opts, emb_epochs), VPA_MARK(struct vpa_flspk_opts, emb_epochs_at)},
	{"emb_lr", VPA_K_NUM, 0, "0.001", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.001",
	 "Adam learning rate of the speaker-embedding network",
	 VPA_AT(struct vpa_flspk_opts, emb_lr), VPA_MARK(struct vpa_flspk_opts, emb_lr_at)},
	{"temperature", VPA_K_NUM, 0, "10", 0, 1e4, VPA_KF_OPEN_LO, NULL, NULL, "10",
	 "distillation temperature T (eq. 3)",
	 VPA_AT(struct vpa_flspk_opts, temperature), VPA_MARK(struct vpa_flspk_opts, temperature_at)},
	{"distill_loss", VPA_K_ENUM, 0, "squared", -INF, INF, 0, "squared|cross_entropy", NULL,
	 "squared", "the distillation term: `squared`, the paper's eq. 3 (T^2/N times the squared "
	 "error between the softened outputs), or `cross_entropy`, Hinton et al.'s T^2 times the "
	 "cross-entropy of the softened outputs",
	 VPA_AT(struct vpa_flspk_opts, distill_loss), VPA_MARK(struct vpa_flspk_opts, distill_loss_at)},
	{"distill_weight", VPA_K_NUM, 0, "3", 0, 1e6, VPA_KF_OPEN_LO, NULL, NULL, "3",
	 "gamma of eq. 2: L = L_speaker + gamma L_distill (3: the best of 1, 3, 10, 30, 100 "
	 "for `squared` on apple-fl-dp.yaml, targets/README.md)",
	 VPA_AT(struct vpa_flspk_opts, distill_weight), VPA_MARK(struct vpa_flspk_opts, distill_weight_at)},
	{"enrol", VPA_K_INT, 0, "4", 1, 1000, 0, NULL, NULL, "4",
	 "enrolment utterances per verification speaker (the rest are test utterances)",
	 VPA_AT(struct vpa_flspk_opts, enrol), VPA_MARK(struct vpa_flspk_opts, enrol_at)},
	{"audit_canaries", VPA_K_INT, 0, "500", 0, 1000000, 0, NULL, NULL, "1000",
	 "canary users of the one-run audit of the central regimes (each included with "
	 "probability 1/2, seeded; an included one takes part in each round with probability "
	 "q = cohort / training users and sends the clipping bound times its own random "
	 "direction; scored by cosine with the final model's change); 0: no central audit",
	 VPA_AT(struct vpa_flspk_opts, audit_canaries),
	 VPA_MARK(struct vpa_flspk_opts, audit_canaries_at)},
	{"dp_fault", VPA_K_ENUM, 0, "none", -INF, INF, 0, "none|skip_noise", NULL, "skip_noise",
	 "a documented fault for testing the audits: skip_noise adds no noise anywhere (local "
	 "Gaussian, central Gaussian, PrivUnit2 and the scalar norm mechanism: the clipped "
	 "update is sent) while every epsilon is still claimed; never use it for a real audit",
	 VPA_AT(struct vpa_flspk_opts, dp_fault), VPA_MARK(struct vpa_flspk_opts, dp_fault_at)},
	{NULL},
};
static const struct vpa_schema schema = {"target fl_speaker_classifier", keys, sizeof(struct vpa_flspk_opts)};

/*
 * The keys of the other source, and the mark of each: written (line != 0)
 * when the scenario gave them.
 */
struct key_mark {
	const char *name;
	struct vpa_mark at;
};

/* Where a check about a key itself ("'x' is only used with ...", "enrol must
 * be less than ...") blames it: the key's own position. */
static struct vpa_loc key_loc(const struct vpa_kind_ctx *ctx, struct vpa_mark m)
{
	return vpa_mark_key_loc(ctx->file, m);
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, struct vpa_err *err)
{
	const struct vpa_flspk_opts *o = opts;
	int import = !strcmp(o->source, "import");
	const char *const import_val[] = {o->vectors, o->utt2user, o->labels};
	const struct key_mark import_keys[] = {
		{"vectors", o->vectors_at}, {"utt2user", o->utt2user_at}, {"labels", o->labels_at},
	};
	const struct key_mark sim_keys[] = {
		{"users", o->users_at}, {"utterances", o->utterances_at}, {"classes", o->classes_at},
		{"speaker_rank", o->speaker_rank_at}, {"speaker_scale", o->speaker_scale_at},
		{"class_shift", o->class_shift_at}, {"noise", o->noise_at},
	};
	for (size_t i = 0; i < 3; i++) {
		if (import && !import_val[i]) {
			/* source was written: its default is simulate */
			struct vpa_loc loc = vpa_mark_loc(ctx->file, o->source_at);
			return vpa_fail(err, VPA_EINPUT, &loc, "source: import needs '%s'",
					import_keys[i].name);
		}
		if (!import && import_val[i]) {
			struct vpa_loc loc = key_loc(ctx, import_keys[i].at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"'%s' is only used with source: import", import_keys[i].name);
		}
		int rc = vpa_check_path_at(ctx, import_val[i], import_keys[i].at, VPA_PATH_FILE, err);
		if (rc)
			return rc;
	}
	if (import)
		for (size_t i = 0; i < sizeof(sim_keys) / sizeof(sim_keys[0]); i++)
			if (sim_keys[i].at.line) {
				struct vpa_loc loc = key_loc(ctx, sim_keys[i].at);
				return vpa_fail(err, VPA_EINPUT, &loc,
						"'%s' is only used with source: simulate", sim_keys[i].name);
			}
	if (!import) {
		size_t users = (size_t)o->users, utts = (size_t)o->utterances,
		       enrol = (size_t)o->enrol;
		size_t need = (size_t)o->test_users + (size_t)o->sv_train_users +
			      (size_t)o->sv_test_users + (size_t)o->cohort;
		if (users < need) {
			/*
			 * Blamed: the value of users, else of source, else the
			 * target's entry (ctx->self).
			 */
			struct vpa_mark m = o->users_at.line    ? o->users_at
					    : o->source_at.line ? o->source_at
								: ctx->self;
			struct vpa_loc loc = vpa_mark_loc(ctx->file, m);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"users must be at least test_users + sv_train_users + "
					"sv_test_users + cohort = %zu, got %zu", need, users);
		}
		if (enrol >= utts) {
			/* the key enrol, else the target's entry */
			struct vpa_loc loc = o->enrol_at.line ? key_loc(ctx, o->enrol_at)
							      : vpa_mark_loc(ctx->file, ctx->self);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"enrol must be less than utterances (%zu), got %zu", utts, enrol);
		}
	}
	/* the default regimes include central_local and have no duplicate */
	const struct vpa_strs *regs = &o->regimes;
	int has_cl = 0;
	for (size_t i = 0; i < regs->n; i++) {
		for (size_t j = 0; j < i; j++)
			if (!strcmp(regs->v[i], regs->v[j])) {
				struct vpa_loc loc = vpa_mark_loc(ctx->file, regs->marks[i]);
				return vpa_fail(err, VPA_EINPUT, &loc, "duplicate regime '%s'",
						regs->v[i]);
			}
		if (!strcmp(regs->v[i], "central_local"))
			has_cl = 1;
	}
	if (has_cl && !(o->norm_epsilon < o->local_epsilon)) {
		/* norm_epsilon, else local_epsilon: one of them was written (the
		   defaults hold) */
		struct vpa_mark m = o->norm_epsilon_at.line ? o->norm_epsilon_at : o->local_epsilon_at;
		struct vpa_loc loc = m.line ? key_loc(ctx, m) : vpa_mark_loc(ctx->file, ctx->self);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"norm_epsilon (%g) must be less than local_epsilon (%g): the rest goes "
				"to the direction", o->norm_epsilon, o->local_epsilon);
	}
	return 0;
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
		free(T->reg[i].canary_in);
		free(T->reg[i].canary_score);
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
	if (T->skip_noise)
		vpa_json_set_str(o, "dp_fault", "skip_noise: no noise was added, the epsilons are "
				 "claimed but do not hold");
	if (R->n_canaries) {
		size_t inc = 0;
		for (size_t c = 0; c < R->n_canaries; c++)
			inc += R->canary_in[c];
		vpa_json_set_num(o, "audit_canaries", (double)R->n_canaries);
		vpa_json_set_num(o, "audit_canaries_included", (double)inc);
		vpa_json_set_num(o, "audit_canary_participations", (double)R->canary_rounds);
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

static int build(struct vpa_run_ctx *ctx, const void *opts, struct vpa_target *out,
		 struct vpa_err *err)
{
	const struct vpa_flspk_opts *o = opts;
	struct vpa_fls_target *T = xcalloc(1, sizeof(*T));
	int rc = 0;
	out->data = T;
	T->seed = ctx->seed;
	{
		struct vpa_rng r;
		vpa_rng_split(&r, ctx->seed, "fls/target");
		T->seed = vpa_rng_u64(&r);
	}
	int import = !strcmp(o->source, "import");
	T->simulated = !import;
	out->simulated = !import;
	if (import) {
		char *v = vpa_path_join(ctx->dir, o->vectors);
		char *u = vpa_path_join(ctx->dir, o->utt2user);
		char *l = vpa_path_join(ctx->dir, o->labels);
		rc = vpa_fls_import(v, u, l, &T->pop, err);
		free(v);
		free(u);
		free(l);
		if (rc)
			return rc;
	} else {
		struct vpa_fls_sim_opts so;
		vpa_fls_sim_opts_init(&so);
		so.n_users = (size_t)o->users;
		so.n_utts = (size_t)o->utterances;
		so.n_classes = (size_t)o->classes;
		so.spk_rank = (size_t)o->speaker_rank;
		so.spk_scale = o->speaker_scale;
		so.class_shift = o->class_shift;
		so.noise = o->noise;
		so.seed = T->seed;
		if ((rc = vpa_fls_simulate(&so, &T->pop, err)))
			return rc;
	}
	struct vpa_fls_pop *pop = &T->pop;
	/* population has no default: NAN when not written */
	T->population = o->population_at.line ? o->population : NAN;
	T->cohort = (size_t)o->cohort;
	T->rounds = (size_t)o->rounds;
	T->epsilon = o->epsilon;
	T->delta = o->delta;
	T->local_epsilon = o->local_epsilon;
	T->norm_epsilon = o->norm_epsilon;
	T->clip = o->clip;
	T->hidden = (size_t)o->hidden;
	T->local_epochs = (size_t)o->local_epochs;
	T->local_batch = (size_t)o->local_batch;
	T->local_lr = o->local_lr;
	T->server_lr = o->server_lr;
	T->eval_every = (size_t)o->eval_every;
	T->audit_canaries = (size_t)o->audit_canaries;
	T->skip_noise = !strcmp(o->dp_fault, "skip_noise");
	T->emb_dim = (size_t)o->emb_dim;
	T->n_enrol = (size_t)o->enrol;
	size_t n_test = (size_t)o->test_users, n_svtr = (size_t)o->sv_train_users,
	       n_svte = (size_t)o->sv_test_users;
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
	vpa_fls_gather(pop, T->test, T->n_test, &tx, &ty, NULL, &tn);
	vpa_fls_gather(pop, T->sv_train, T->n_sv_train, &svx, &svy, &T->sv_train_off, &svn);
	vpa_fls_gather(pop, T->sv_test, T->n_sv_test, &svtx, &svty, &T->sv_test_off, &svtn);
	spk = xmalloc(xmul(svn ? svn : 1, sizeof(uint32_t)));
	for (size_t i = 0; i < T->n_sv_train; i++)
		for (size_t r = T->sv_train_off[i]; r < T->sv_train_off[i + 1]; r++)
			spk[r] = (uint32_t)i;

	/* the regimes (the default: all four, in their order) */
	const struct vpa_strs *regs = &o->regimes;
	size_t nreg = regs->n;
	T->reg = xcalloc(nreg, sizeof(*T->reg));
	struct vpa_json *info = vpa_json_obj(), *rj = vpa_json_arr();
	out->info = info;
	int distill = o->distill;
	size_t emb_hidden = (size_t)o->emb_hidden, emb_epochs = (size_t)o->emb_epochs;
	double emb_lr = o->emb_lr, temp = o->temperature, gamma = o->distill_weight;
	int squared = !strcmp(o->distill_loss, "squared");
	T->sv_eer_baseline = NAN;
	for (size_t i = 0; i < nreg && !rc; i++) {
		struct vpa_fls_regime_res *R = &T->reg[T->n_reg++];
		R->regime = (enum vpa_fls_regime)vpa_fls_regime_parse(regs->v[i]);
		R->sv_eer = NAN;
		if ((rc = vpa_fls_privacy_setup(T, R->regime, &R->priv, err)))
			break;
		if ((rc = vpa_fls_train(ctx, T, R, tx, ty, tn, err)))
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
		if (!(rc = vpa_fls_sv_train(&D, emb_hidden, T->emb_dim, emb_epochs, emb_lr, temp, 0, squared,
				    T->seed ^ 0xe3b, &trunk, err)) &&
		    !(rc = vpa_fls_embed(trunk, svtx, svtn, &T->emb_baseline, err)) &&
		    !(rc = vpa_fls_embed(trunk, svx, svn, &T->emb_train_baseline, err)))
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
			if (!(rc = vpa_fls_sv_train(&D, emb_hidden, T->emb_dim, emb_epochs, emb_lr, temp, gamma,
					    squared, T->seed ^ 0xe3b, &trunk, err)) &&
			    !(rc = vpa_fls_embed(trunk, svtx, svtn, &R->emb, err)) &&
			    !(rc = vpa_fls_embed(trunk, svx, svn, &R->emb_train, err))) {
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
