/*
 * attacks/dexposure.c - attack kind `d_exposure` (Helali, Kleinbauer, Klakow,
 * TSD 2020; COMPRISE D2.3 section 4.3.4): how much a tagger memorised the
 * label of a canary word it saw k times in one fixed context.
 *
 * The canary s is an ambiguous word (the training data labels it with more
 * than one class); the canary sentence is the context ("There are many
 * people who like ___") with s in the slot, the slot labelled with the
 * chosen class and the context words with their most frequent class; it is
 * added k times to the training sentences and the tagger retrained.  For each
 * class C_i the reference set is the vocabulary words the training data
 * labels only with C_i; conf(w) is the tagger's probability of C_i for w in
 * the slot; d-exposure_i = -log2 Pr_{w in C_i}[conf(w) >= conf(s)]
 * (vpa_dexposure: ties count against the canary), at most log2 |C_i|; the
 * model's d-exposure is their mean.  The inserted label's class is the
 * headline (`d_exposure_label`): the other classes can only lose confidence.
 *
 * Chance level.  An ambiguous word is by nature less confident than the
 * unambiguous references, so the value a canary "exchangeable" with the
 * references would get ((1/(n+1)) sum_{j=0..n} log2(n / max(j,1)), ~1.44
 * bits, reported as `d_exposure_exchangeable`) is not what a non-inserted
 * canary gets (~0.02-0.1 bits measured).  The chance level is therefore
 * measured: the same d-exposure of `controls` words of the canary's kind
 * (ambiguous, labelled `label` somewhere, the same most frequent class, close
 * in frequency) that are never inserted, in the same model and context; mean
 * (`d_exposure_chance`, `d_exposure_label_chance`) and 90th percentile.
 * `d_exposure_label_excess` is the canary's label value minus its chance.
 *
 * Conditions: repetitions (one model per k), the same with DP-SGD, the
 * d-exposure after every epoch (COMPRISE Table 8), and the overfitting run
 * (a fraction of the data, no dropout or weight decay, many epochs: COMPRISE
 * Fig. 17).  On an imported target the confidences come from the file.
 *
 * Split (the file had grown past 1,300 lines): this file holds the keys,
 * validation, subs, the DP settings and the run with its records and
 * figures; attacks/dexposure_metric.c the metric on one model and imported
 * confidences; attacks/dexposure_train.c the trained taggers;
 * attacks/dexposure_int.h what they share.
 */
#include "attacks/dexposure_int.h"
#include "base/dist.h"
#include "base/la.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct vpa_key keys[] = {
	{"canary", VPA_K_STR, 0, "auto", -INFINITY, INFINITY, 0, NULL, NULL, "auto",
	 "train: the canary word, or `auto`: the rarest vocabulary word seen at least "
	 "`canary_min_count` times whose training labels include `label` and another class and "
	 "whose most frequent class is not `label` (ignored on an imported target)",
	 VPA_AT(struct vpa_dexp_opts, canary), VPA_MARK(struct vpa_dexp_opts, canary_at)},
	{"canary_min_count", VPA_K_INT, 0, "10", 1, 1000000, 0, NULL, NULL, "10",
	 "train: with `canary: auto`, the fewest training occurrences of the canary",
	 VPA_AT(struct vpa_dexp_opts, canary_min_count), VPA_MARK(struct vpa_dexp_opts, canary_min_count_at)},
	{"controls", VPA_K_INT, 0, "50", 0, 100000, 0, NULL, NULL, "50",
	 "train: control words for the chance level: words of the canary's kind (ambiguous, "
	 "labelled `label` at least once, the same most frequent class, at least "
	 "`canary_min_count` uses) that are never inserted, the nearest to the canary in "
	 "frequency; their mean d-exposure in the same model and context is "
	 "`d_exposure_chance` (0 = none)",
	 VPA_AT(struct vpa_dexp_opts, controls), VPA_MARK(struct vpa_dexp_opts, controls_at)},
	{"label", VPA_K_ENUM, 0, "VERB", -INFINITY, INFINITY, 0, "NOUN|VERB|ADJ|PROPN|OTHER", NULL,
	 "VERB", "train: the class the canary is labelled with in the inserted sentences",
	 VPA_AT(struct vpa_dexp_opts, label), VPA_MARK(struct vpa_dexp_opts, label_at)},
	{"context", VPA_K_STR, 0, "There are many people who like ___", -INFINITY, INFINITY, 0,
	 NULL, NULL, "\"There are many people who like ___\"",
	 "train: the canary sentence; `___` (one token) is the slot",
	 VPA_AT(struct vpa_dexp_opts, context), VPA_MARK(struct vpa_dexp_opts, context_at)},
	{"repetitions", VPA_K_LIST, 0, "[0, 4, 16, 64, 128, 256]", -INFINITY, INFINITY,
	 VPA_KF_NONEMPTY, NULL, NULL, "[0, 16, 256]",
	 "train: insertion counts k; one tagger is trained per value (integers 0..1000000)",
	 VPA_AT(struct vpa_dexp_opts, repetitions), VPA_MARK(struct vpa_dexp_opts, repetitions_at)},
	{"epochs", VPA_K_INT, 0, "0", 0, 10000, 0, NULL, NULL, "5",
	 "train: epochs of each retrained tagger (0 = the target's)",
	 VPA_AT(struct vpa_dexp_opts, epochs), VPA_MARK(struct vpa_dexp_opts, epochs_at)},
	{"epoch_table", VPA_K_BOOL, 0, "true", -INFINITY, INFINITY, 0, NULL, NULL, "false",
	 "train: also a record per epoch (`kK-eE`, COMPRISE Table 8; `dp-kK-eE`, `dpuser-kK-eE` "
	 "with the DP modes, epsilon then after that many epochs) and a figure against epochs per "
	 "mode",
	 VPA_AT(struct vpa_dexp_opts, epoch_table), VPA_MARK(struct vpa_dexp_opts, epoch_table_at)},
	{"dp", VPA_K_BOOL, 0, "true", -INFINITY, INFINITY, 0, NULL, NULL, "false",
	 "train: repeat the repetitions with DP-SGD (subs `dp-kK`)",
	 VPA_AT(struct vpa_dexp_opts, dp), VPA_MARK(struct vpa_dexp_opts, dp_at)},
	{"dp_noise_multiplier", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1.1",
	 "DP-SGD noise multiplier (ignored when dp_target_epsilon > 0); clip and delta are the "
	 "target's",
	 VPA_AT(struct vpa_dexp_opts, dp_noise_multiplier), VPA_MARK(struct vpa_dexp_opts, dp_noise_multiplier_at)},
	{"dp_target_epsilon", VPA_K_NUM, 0, "0", 0, INFINITY, 0, NULL, NULL, "1",
	 "DP-SGD: choose the noise multiplier for this epsilon (0 = use dp_noise_multiplier)",
	 VPA_AT(struct vpa_dexp_opts, dp_target_epsilon), VPA_MARK(struct vpa_dexp_opts, dp_target_epsilon_at)},
	{"dp_lr", VPA_K_NUM, 0, "0", 0, 10, 0, NULL, NULL, "0.01",
	 "DP-SGD learning rate (0 = the target's)",
	 VPA_AT(struct vpa_dexp_opts, dp_lr), VPA_MARK(struct vpa_dexp_opts, dp_lr_at)},
	{"dp_batch", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "256",
	 "DP-SGD expected lot size (q = dp_batch / N; 0 = the target's `batch`): DP-SGD needs "
	 "large lots, the noise on the mean gradient is sigma C / lot",
	 VPA_AT(struct vpa_dexp_opts, dp_batch), VPA_MARK(struct vpa_dexp_opts, dp_batch_at)},
	{"dp_epochs", VPA_K_INT, 0, "0", 0, 10000, 0, NULL, NULL, "5",
	 "DP-SGD epochs (0 = as without DP)",
	 VPA_AT(struct vpa_dexp_opts, dp_epochs), VPA_MARK(struct vpa_dexp_opts, dp_epochs_at)},
	{"dp_user", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "train: repeat the repetitions with user-level DP-SGD (subs `dpuser-kK`): the privacy "
	 "unit is a user of `dp_user_sentences` consecutive sentences of one document, the k "
	 "canary copies are held by one user, each user's gradient is clipped as a whole, so "
	 "epsilon covers all k copies; other settings as `dp_*`",
	 VPA_AT(struct vpa_dexp_opts, dp_user), VPA_MARK(struct vpa_dexp_opts, dp_user_at)},
	{"dp_user_sentences", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "4",
	 "user-level DP-SGD: training sentences per user",
	 VPA_AT(struct vpa_dexp_opts, dp_user_sentences), VPA_MARK(struct vpa_dexp_opts, dp_user_sentences_at)},
	{"dp_user_batch", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "128",
	 "user-level DP-SGD: expected users per lot (q = dp_user_batch / users; 0 = dp_batch)",
	 VPA_AT(struct vpa_dexp_opts, dp_user_batch), VPA_MARK(struct vpa_dexp_opts, dp_user_batch_at)},
	{"overfit", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "train: the overfitting experiment (subs `overfit-kK`; with the DP modes also "
	 "`dp-overfit-kK`, `dpuser-overfit-kK`: the same DP settings for `overfit_epochs`)",
	 VPA_AT(struct vpa_dexp_opts, overfit), VPA_MARK(struct vpa_dexp_opts, overfit_at)},
	{"overfit_fraction", VPA_K_NUM, 0, "0.1", 0, 1, VPA_KF_OPEN_LO, NULL, NULL, "0.1",
	 "overfitting: fraction of the training sentences used (seeded draw)",
	 VPA_AT(struct vpa_dexp_opts, overfit_fraction), VPA_MARK(struct vpa_dexp_opts, overfit_fraction_at)},
	{"overfit_epochs", VPA_K_INT, 0, "30", 1, 100000, 0, NULL, NULL, "30",
	 "overfitting: epochs (no dropout, no weight decay)",
	 VPA_AT(struct vpa_dexp_opts, overfit_epochs), VPA_MARK(struct vpa_dexp_opts, overfit_epochs_at)},
	{"overfit_repetitions", VPA_K_LIST, 0, "[0, 64]", -INFINITY, INFINITY, VPA_KF_NONEMPTY,
	 NULL, NULL, "[64]", "overfitting: insertion counts",
	 VPA_AT(struct vpa_dexp_opts, overfit_repetitions), VPA_MARK(struct vpa_dexp_opts, overfit_repetitions_at)},
	{"audit_canaries", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "500",
	 "DP audit (issue 28): this many audit words, each put in `context` with a label drawn "
	 "among the classes other than its one training class and inserted once with probability 1/2 (seeded), "
	 "one more tagger per DP mode trained with them (each sentence its own privacy unit); "
	 "the one-run audit of Steinke, Nasr, Jagielski 2023 from each word's log-probability "
	 "of its label gives `epsilon_lower_bound` against the claimed `epsilon` (subs "
	 "`dp-audit`, `dpuser-audit`; needs `dp` or `dp_user`; 0 = off)",
	 VPA_AT(struct vpa_dexp_opts, audit_canaries), VPA_MARK(struct vpa_dexp_opts, audit_canaries_at)},
	{"audit_alpha", VPA_K_NUM, 0, "0.05", 0, 0.5, VPA_KF_OPEN_LO, NULL, NULL, "0.05",
	 "the audit's error probability: epsilon_lower_bound holds with probability at least "
	 "1 - audit_alpha",
	 VPA_AT(struct vpa_dexp_opts, audit_alpha), VPA_MARK(struct vpa_dexp_opts, audit_alpha_at)},
	{"dp_fault", VPA_K_ENUM, 0, "none", -INFINITY, INFINITY, 0, "none|skip_noise|skip_clipping",
	 NULL, "skip_noise",
	 "for testing an audit: train every DP tagger of this attack with a deliberate defect "
	 "(`skip_noise`: no Gaussian noise; `skip_clipping`: no clipping, the noise still sigma "
	 "* clip); the claimed epsilon stays the correct run's, so the audit should contradict it",
	 VPA_AT(struct vpa_dexp_opts, dp_fault), VPA_MARK(struct vpa_dexp_opts, dp_fault_at)},
	{NULL},
};
static const struct vpa_schema schema = {"attack d_exposure", keys, sizeof(struct vpa_dexp_opts)};

static const char *const target_kinds[] = {"tagger", NULL};
static const char *const metrics[] = {
	"d_exposure", "d_exposure_label", "d_exposure_max", "d_exposure_chance",
	"d_exposure_chance_p90", "d_exposure_exchangeable", "d_exposure_label_max",
	"d_exposure_label_chance", "d_exposure_label_chance_p90", "d_exposure_label_excess",
	"d_exposure_label_no_dp", "accuracy", "epsilon", "group_epsilon_bound",
	"epsilon_lower_bound", "epsilon_rdp", "epsilon_pld", NULL,
};

#define MAX_REPS 64

static const char *const mode_sub[N_MODES] = {"", "dp-", "dpuser-"};
static const char *const mode_name[N_MODES] = {"no DP", "DP-SGD", "user-level DP-SGD"};

/* 1 when mode m runs: without DP always, the DP modes by their keys. */
static int mode_on(const struct vpa_dexp_opts *o, int m)
{
	return m == MODE_PLAIN || (m == MODE_DP ? o->dp : o->dp_user);
}

/* Parse a list of insertion counts; 0 or an error at the item's mark.  The
 * items are values (the key check refuses the rest); only a plain (unquoted)
 * item is a number. */
static int reps_of(const char *file, const struct vpa_strs *l, long *out, size_t *n,
		   struct vpa_err *err)
{
	*n = 0;
	for (size_t i = 0; i < l->n; i++) {
		const char *v = l->v[i];
		struct vpa_loc loc = vpa_mark_loc(file, l->marks[i]);
		char *e = NULL;
		long x = l->plain[i] ? strtol(v, &e, 10) : -1;
		if (!e || *e || e == v || x < 0 || x > 1000000)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"repetitions must be integers in [0, 1000000], got '%s'", v);
		for (size_t j = 0; j < *n; j++)
			if (out[j] == x)
				return vpa_fail(err, VPA_EINPUT, &loc, "repetition count %ld listed twice",
						x);
		if (*n == MAX_REPS)
			return vpa_fail(err, VPA_EINPUT, &loc, "at most %d repetition counts",
					MAX_REPS);
		out[(*n)++] = x;
	}
	return 0;
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, const void *target_opts,
		    struct vpa_err *err)
{
	const struct vpa_dexp_opts *o = opts;
	long r[MAX_REPS];
	size_t n;
	int rc;
	(void)target_opts;
	/* the lists written (their defaults are valid) */
	if (o->repetitions.given && (rc = reps_of(ctx->file, &o->repetitions, r, &n, err)))
		return rc;
	if (o->overfit_repetitions.given &&
	    (rc = reps_of(ctx->file, &o->overfit_repetitions, r, &n, err)))
		return rc;
	/* the audit and the fault act on the DP taggers: one DP mode must be on */
	if ((o->audit_canaries > 0 || strcmp(o->dp_fault, "none")) && !o->dp && !o->dp_user) {
		int au = o->audit_canaries > 0;
		struct vpa_loc loc = vpa_mark_key_loc(ctx->file, au ? o->audit_canaries_at
								  : o->dp_fault_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"'%s' acts on the DP-SGD taggers: it needs `dp: true` or "
				"`dp_user: true`", au ? "audit_canaries" : "dp_fault");
	}
	const char *c = o->context;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_tokenize(c, strlen(c), 0, &b);
	size_t slots = 0;
	for (char *p = b.data; p && (p = strstr(p, "___")); p += 3)
		if ((p == b.data || p[-1] == ' ') && (p[3] == ' ' || p[3] == 0))
			slots++;
	vpa_buf_release(&b);
	if (slots != 1) {
		/* the default holds one slot: context was written */
		struct vpa_loc loc = vpa_mark_loc(ctx->file, o->context_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"context must hold the slot '___' exactly once as a token, found %zu",
				slots);
	}
	return 0;
}

/* The insertion counts of a list key (checked by validate; an absent key
 * has the table's default list). */
static void get_reps(const struct vpa_strs *l, long *r, size_t *n)
{
	struct vpa_err e;
	vpa_err_init(&e);
	if (reps_of("", l, r, n, &e))
		VPA_BUG("repetitions not checked: %s", e.msg);
}

/* All sub names in one block (pointers then strings): free(names) frees all. */
static size_t subs(const void *opts, const void *target_opts, const char ***names)
{
	const struct vpa_dexp_opts *cfg = opts;
	const struct vpa_tagger_opts *to = target_opts;
	struct vpa_buf s;
	vpa_buf_init(&s);
	size_t n = 0;
	if (!strcmp(to->source, "import")) {
		vpa_buf_add(&s, "import", 7);
		n = 1;
	} else {
		long r[MAX_REPS], o[MAX_REPS];
		size_t nr, no;
		get_reps(&cfg->repetitions, r, &nr);
		get_reps(&cfg->overfit_repetitions, o, &no);
		long epochs = (long)cfg->epochs;
		if (epochs == 0)
			epochs = (long)to->epochs;
		long dp_epochs = (long)cfg->dp_epochs;
		if (dp_epochs == 0)
			dp_epochs = epochs;
		int on[N_MODES];
		for (int m = 0; m < N_MODES; m++)
			on[m] = mode_on(cfg, m);
		/* the order of run(): per mode kK, then the epoch tables, then overfitting */
		char tmp[64];
		for (int m = 0; m < N_MODES; m++)
			for (size_t i = 0; i < nr && on[m]; i++) {
				int len = snprintf(tmp, sizeof(tmp), "%sk%ld", mode_sub[m], r[i]);
				vpa_buf_add(&s, tmp, (size_t)len + 1);
				n++;
			}
		if (cfg->epoch_table)
			for (int m = 0; m < N_MODES; m++)
				for (size_t i = 0; i < nr && on[m]; i++)
					for (long e = 1; e <= (m ? dp_epochs : epochs); e++) {
						int len = snprintf(tmp, sizeof(tmp), "%sk%ld-e%ld",
								   mode_sub[m], r[i], e);
						vpa_buf_add(&s, tmp, (size_t)len + 1);
						n++;
					}
		if (cfg->overfit)
			for (int m = 0; m < N_MODES; m++)
				for (size_t i = 0; i < no && on[m]; i++) {
					int len = snprintf(tmp, sizeof(tmp), "%soverfit-k%ld", mode_sub[m],
							   o[i]);
					vpa_buf_add(&s, tmp, (size_t)len + 1);
					n++;
				}
		if (cfg->audit_canaries > 0)
			for (int m = MODE_DP; m < N_MODES; m++)
				if (on[m]) {
					int len = snprintf(tmp, sizeof(tmp), "%saudit", mode_sub[m]);
					vpa_buf_add(&s, tmp, (size_t)len + 1);
					n++;
				}
	}
	char *blk = xmalloc(n * sizeof(char *) + s.len + 1);
	char *str = blk + n * sizeof(char *);
	memcpy(str, s.data, s.len);
	const char **v = (const char **)(void *)blk;
	for (size_t i = 0; i < n; i++) {
		v[i] = str;
		str += strlen(str) + 1;
	}
	vpa_buf_release(&s);
	*names = v;
	return n;
}

static void add_model_metrics(struct vpa_json *rec, const struct run_log *l, size_t e, long k,
			      const struct vpa_tagger_stats *st, int dp)
{
	struct vpa_json *m = vpa_json_get(rec, "metrics");
	vpa_json_set_num(m, "repetitions", (double)k);
	vpa_json_set_num(m, "epoch", (double)(e + 1));
	vpa_json_set_num(m, "accuracy", l->acc[e]);
	vpa_json_set_num(m, "test_loss", l->test_loss[e]);
	vpa_json_set_num(m, "train_loss", l->train_loss[e]);
	vpa_json_set_num(m, "canary_conf_label", l->d[e].canary_conf[l->s->label]);
	vpa_json_set(m, "epsilon", dp ? vpa_json_num(st->epsilon) : vpa_json_null());
	if (dp)
		vpa_json_set_num(m, "noise_multiplier", st->sigma);
	/* a wall-clock throughput differs between two runs of the same scenario and
	 * seed: it is a timing field of the record, not a metric */
	struct vpa_json *tm = vpa_json_obj();
	vpa_json_set_num(tm, "tokens_per_s", st->tokens_per_s);
	vpa_json_set(rec, "timing", tm);
}

/* The DP settings of a mode applied to c (epochs too, unless keep_epochs). */
static void mode_cfg(const struct vpa_dexp_opts *cfg, int mode, int keep_epochs,
		     struct vpa_tagger_cfg *c)
{
	if (mode == MODE_PLAIN)
		return;
	c->dp = 1;
	c->fault = !strcmp(cfg->dp_fault, "skip_noise") ? 1 : !strcmp(cfg->dp_fault, "skip_clipping") ? 2 : 0;
	c->noise_multiplier = cfg->dp_noise_multiplier;
	c->target_epsilon = cfg->dp_target_epsilon;
	double lr = cfg->dp_lr;
	if (lr > 0)
		c->lr = lr;
	long long b = cfg->dp_batch;
	if (b > 0)
		c->batch = (size_t)b;
	long long de = cfg->dp_epochs;
	if (de > 0 && !keep_epochs)
		c->epochs = (size_t)de;
	if (mode == MODE_DPUSER) {
		c->dp_user = 1;
		c->user_sentences = (size_t)cfg->dp_user_sentences;
		long long ub = cfg->dp_user_batch;
		if (ub > 0)
			c->batch = (size_t)ub;
	}
}

/* The DP fields of a record: epsilon after `epochs` of the run's epochs (the
 * accountant at that many steps), the group bound, the units. */
static int add_dp_metrics(struct vpa_json *rec, const struct vpa_dexp_opts *cfg, int mode, long k,
			  const struct vpa_tagger_stats *st, size_t epochs, size_t total_epochs,
			  double delta, struct vpa_err *err)
{
	struct vpa_json *m = vpa_json_get(rec, "metrics");
	double eps = st->epsilon;
	if (epochs < total_epochs) {
		double steps = st->steps / (double)total_epochs * (double)epochs;
		int rc = vpa_dp_epsilon(st->q, st->sigma, steps, delta, &eps, NULL, err);
		if (rc)
			return rc;
	}
	vpa_json_set_num(m, "epsilon", eps);
	/* per sentence, k copies are a group of k units (at best k epsilon); per
	 * user, they are one unit */
	double g = mode == MODE_DPUSER ? 1 : (double)(k > 1 ? k : 1);
	vpa_json_set_num(m, "group_epsilon_bound", g * eps);
	vpa_json_set_num(m, "dp_units", (double)st->units);
	vpa_json_set_num(m, "sampling_rate", st->q);
	vpa_json_set_num(m, "dp_steps", st->steps / (double)total_epochs * (double)epochs);
	if (mode == MODE_DPUSER)
		vpa_json_set_num(m, "user_sentences",
				 (double)cfg->dp_user_sentences);
	return 0;
}

static int run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
	       const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct vpa_dexp_opts *cfg = opts;
	const struct vpa_tagger_target *tt = t->data;
	if (tt->imported)
		return vpa_dexp_run_import(ctx, id, t, out, err);
	const struct vpa_tagger_data *d = &tt->data;
	struct setup s;
	struct vpa_json *info = vpa_json_obj();
	int rc = vpa_dexp_setup_make(tt, cfg, &s, info, err);
	long reps[MAX_REPS], oreps[MAX_REPS];
	size_t nr, no;
	get_reps(&cfg->repetitions, reps, &nr);
	get_reps(&cfg->overfit_repetitions, oreps, &no);
	/* the modes run, in order; logs and stats are indexed [slot * nr + i] */
	int modes[N_MODES], n_modes = 0;
	for (int m = 0; m < N_MODES; m++)
		if (mode_on(cfg, m))
			modes[n_modes++] = m;
	int table = cfg->epoch_table;
	int over = cfg->overfit;
	struct vpa_tagger_cfg base = tt->cfg;
	long long ep = cfg->epochs;
	if (ep > 0)
		base.epochs = (size_t)ep;
	base.dp = 0;
	const char *lab = vpa_tag_names[s.label];
	/* results per (mode, k): [slot * nr + i]; overfitting [slot * no + i] */
	size_t n_main = (size_t)n_modes * nr, n_over = over ? (size_t)n_modes * no : 0;
	struct run_log *logs = xcalloc(n_main, sizeof(*logs));
	struct vpa_tagger_stats *stats = xcalloc(n_main, sizeof(*stats));
	struct run_log *ologs = xcalloc(n_over + 1, sizeof(*ologs));
	struct vpa_tagger_stats *ostats = xcalloc(n_over + 1, sizeof(*ostats));
	struct tjob *jobs = xcalloc(n_main + n_over, sizeof(*jobs));
	struct vpa_json *f_reps = NULL, *f_ep[N_MODES] = {NULL}, *f_over = NULL, *f_oloss = NULL;
	char title[512];
	/* the overfitting experiment's data: a seeded fraction of the training set */
	double frac = cfg->overfit_fraction;
	size_t n_sub = (size_t)llround(frac * (double)d->n_train);
	if (n_sub < 1)
		n_sub = 1;
	size_t *sub = xmalloc(xmul(d->n_train + 1, sizeof(size_t)));
	memcpy(sub, d->train, d->n_train * sizeof(size_t));
	{
		struct vpa_rng r;
		vpa_rng_split(&r, ctx->seed, "d_exposure/overfit");
		for (size_t i = 0; i < n_sub && i < d->n_train; i++) {
			size_t j = i + (size_t)vpa_rng_below(&r, d->n_train - i), tmp = sub[i];
			sub[i] = sub[j];
			sub[j] = tmp;
		}
	}
	struct vpa_tagger_cfg c0 = base; /* overfitting: no dropout, no decay, long */
	c0.dropout = 0;
	c0.weight_decay = 0;
	c0.epochs = (size_t)cfg->overfit_epochs;
	size_t OE = c0.epochs;
	if (rc)
		goto out;
	/* every training run, then the records */
	for (int slot = 0; slot < n_modes; slot++)
		for (size_t i = 0; i < nr; i++) {
			struct tjob *j = &jobs[(size_t)slot * nr + i];
			j->c = base;
			mode_cfg(cfg, modes[slot], 0, &j->c);
			j->sents = d->train;
			j->n_sents = d->n_train;
			j->ex = (struct vpa_tagger_extra){s.ctx_ids, s.ctx_lab, s.len, (size_t)reps[i]};
			j->l = &logs[(size_t)slot * nr + i];
			j->st = &stats[(size_t)slot * nr + i];
			vpa_dexp_log_alloc(j->l, &s, j->c.epochs);
		}
	for (size_t k = 0; k < n_over; k++) {
		int slot = (int)(k / no);
		struct tjob *j = &jobs[n_main + k];
		j->c = c0;
		mode_cfg(cfg, modes[slot], 1, &j->c); /* the overfitting epochs */
		j->sents = sub;
		j->n_sents = n_sub;
		j->ex = (struct vpa_tagger_extra){s.ctx_ids, s.ctx_lab, s.len, (size_t)oreps[k % no]};
		j->l = &ologs[k];
		j->st = &ostats[k];
		vpa_dexp_log_alloc(j->l, &s, OE);
	}
	{
		struct tshared p = {d, jobs};
		/* the first failing run in job order (all runs before it were run) */
		rc = vpa_dist_jobs(n_main + n_over, ctx->threads, vpa_dexp_train_job, vpa_dexp_train_pack,
				   vpa_dexp_train_unpack, &p, "d_exposure", vpa_la_run_workers, err);
	}
	if (rc)
		goto out;
	/* records: per k, then DP, then user-level DP, then the epoch table */
	for (int slot = 0; slot < n_modes; slot++)
		for (size_t i = 0; i < nr; i++) {
			int mode = modes[slot], dp = mode != MODE_PLAIN;
			const struct run_log *l = &logs[(size_t)slot * nr + i];
			const struct vpa_tagger_stats *st = &stats[(size_t)slot * nr + i];
			char sub[64];
			snprintf(sub, sizeof(sub), "%sk%ld", mode_sub[mode], reps[i]);
			size_t le = l->n_ep - 1;
			struct vpa_json *rec = vpa_dexp_record(id, sub, &l->d[le], vpa_tag_names, s.label);
			add_model_metrics(rec, l, le, reps[i], st, dp);
			if (dp && (rc = add_dp_metrics(rec, cfg, mode, reps[i], st, l->n_ep, l->n_ep,
						       base.delta, err))) {
				vpa_json_free(rec);
				goto out;
			}
			if (dp) {
				/* the same k without DP, for the comparison at equal k */
				const struct run_log *l0 = &logs[i];
				struct vpa_json *m = vpa_json_get(rec, "metrics");
				vpa_json_set_num(m, "d_exposure_label_no_dp",
						 l0->d[l0->n_ep - 1].per[s.label]);
				vpa_json_set_num(m, "d_exposure_no_dp", l0->d[l0->n_ep - 1].mean);
				vpa_json_set_num(m, "accuracy_no_dp", l0->acc[l0->n_ep - 1]);
			}
			vpa_json_set(rec, "canary", vpa_json_clone(info));
			vpa_json_push(out->records, rec);
		}
	if (table)
		for (int slot = 0; slot < n_modes; slot++)
			for (size_t i = 0; i < nr; i++) {
				int mode = modes[slot], dp = mode != MODE_PLAIN;
				const struct run_log *l = &logs[(size_t)slot * nr + i];
				const struct vpa_tagger_stats *st = &stats[(size_t)slot * nr + i];
				for (size_t e = 0; e < l->n_ep; e++) {
					char sub[64];
					snprintf(sub, sizeof(sub), "%sk%ld-e%zu", mode_sub[mode], reps[i],
						 e + 1);
					struct vpa_json *rec =
						vpa_dexp_record(id, sub, &l->d[e], vpa_tag_names, s.label);
					add_model_metrics(rec, l, e, reps[i], st, dp);
					if (dp && (rc = add_dp_metrics(rec, cfg, mode, reps[i], st, e + 1,
								       l->n_ep, base.delta, err))) {
						vpa_json_free(rec);
						goto out;
					}
					vpa_json_set(rec, "canary", vpa_json_clone(info));
					vpa_json_push(out->records, rec);
				}
			}
	/* figure: d-exposure against repetitions */
	snprintf(title, sizeof(title), "d-exposure of '%s' (%s) against repetitions",
		 d->vocab.words[s.canary], lab);
	{
		char fid[256];
		snprintf(fid, sizeof(fid), "%s-repetitions", id);
		f_reps = vpa_dexp_lines(fid, title, "repetitions k", "d-exposure (bits)");
		struct vpa_json *ser = vpa_json_get(f_reps, "series");
		double x[MAX_REPS], y[MAX_REPS], yl[MAX_REPS], ych[MAX_REPS], ymx[MAX_REPS];
		double ylc[MAX_REPS];
		int have_ch = 1;
		for (int slot = 0; slot < n_modes; slot++) {
			int mode = modes[slot], dp = mode != MODE_PLAIN;
			for (size_t i = 0; i < nr; i++) {
				const struct run_log *l = &logs[(size_t)slot * nr + i];
				const struct dexp *dd = &l->d[l->n_ep - 1];
				x[i] = (double)reps[i];
				y[i] = dd->mean;
				yl[i] = dd->per[s.label];
				ych[i] = dd->mean_chance;
				ylc[i] = dd->chance[s.label];
				ymx[i] = dd->max[s.label];
				have_ch = have_ch && isfinite(ylc[i]);
			}
			char nm[128];
			if (dp)
				snprintf(nm, sizeof(nm), " (%s, epsilon %.3g)", mode_name[mode],
					 stats[(size_t)slot * nr].epsilon);
			else
				snprintf(nm, sizeof(nm), " (no DP)");
			char n1[192], n2[192];
			snprintf(n1, sizeof(n1), "mean%s", nm);
			snprintf(n2, sizeof(n2), "%s%s", lab, nm);
			vpa_json_push(ser, vpa_dexp_series(n2, x, yl, nr));
			if (have_ch) {
				char n4[192];
				snprintf(n4, sizeof(n4), "%s chance (controls)%s", lab, nm);
				vpa_json_push(ser, vpa_dexp_series(n4, x, ylc, nr));
			}
			vpa_json_push(ser, vpa_dexp_series(n1, x, y, nr));
			if (!dp && have_ch)
				vpa_json_push(ser, vpa_dexp_series("mean chance (controls) (no DP)", x, ych, nr));
			if (!dp) {
				char n3[192];
				snprintf(n3, sizeof(n3), "%s maximum log2|C|", lab);
				vpa_json_push(ser, vpa_dexp_series(n3, x, ymx, nr));
			}
		}
	}
	for (int slot = 0; table && slot < n_modes; slot++) {
		int mode = modes[slot];
		char fid[256];
		snprintf(fid, sizeof(fid), "%s-epochs%s%.*s", id, mode ? "-" : "",
			 mode ? (int)strlen(mode_sub[mode]) - 1 : 0, mode_sub[mode]);
		snprintf(title, sizeof(title), "d-exposure (mean) of '%s' against epochs (%s)",
			 d->vocab.words[s.canary], mode_name[mode]);
		f_ep[slot] = vpa_dexp_lines(fid, title, "epoch", "d-exposure (bits)");
		struct vpa_json *ser = vpa_json_get(f_ep[slot], "series");
		size_t ne = logs[(size_t)slot * nr].n_ep;
		double *x = xmalloc((ne + 1) * sizeof(double)), *y = xmalloc((ne + 1) * sizeof(double));
		for (size_t i = 0; i < nr; i++) {
			const struct run_log *l = &logs[(size_t)slot * nr + i];
			for (size_t e = 0; e < l->n_ep; e++) {
				x[e] = (double)(e + 1);
				y[e] = l->d[e].mean;
			}
			char nm[64];
			snprintf(nm, sizeof(nm), "k = %ld", reps[i]);
			vpa_json_push(ser, vpa_dexp_series(nm, x, y, l->n_ep));
		}
		free(x);
		free(y);
	}
	/* the overfitting experiment */
	if (over) {
		char fid[256];
		snprintf(fid, sizeof(fid), "%s-overfit", id);
		snprintf(title, sizeof(title),
			 "Overfitting (%.0f%% of the data, no dropout): d-exposure against epochs",
			 100 * frac);
		f_over = vpa_dexp_lines(fid, title, "epoch", "d-exposure (bits)");
		snprintf(fid, sizeof(fid), "%s-overfit-loss", id);
		snprintf(title, sizeof(title), "Overfitting (%.0f%% of the data): loss against epochs",
			 100 * frac);
		f_oloss = vpa_dexp_lines(fid, title, "epoch", "mean token cross-entropy (nats)");
		double *x = xmalloc((OE + 1) * sizeof(double)), *y = xmalloc((OE + 1) * sizeof(double));
		for (size_t k = 0; k < n_over && !rc; k++) {
			int mode = modes[k / no], dp = mode != MODE_PLAIN;
			long kr = oreps[k % no];
			const struct run_log *l = &ologs[k];
			const struct vpa_tagger_stats *st = &ostats[k];
			char sn[64];
			snprintf(sn, sizeof(sn), "%soverfit-k%ld", mode_sub[mode], kr);
			struct vpa_json *rec = vpa_dexp_record(id, sn, &l->d[OE - 1], vpa_tag_names, s.label);
			add_model_metrics(rec, l, OE - 1, kr, st, dp);
			if (dp && (rc = add_dp_metrics(rec, cfg, mode, kr, st, OE, OE, base.delta,
						       err))) {
				vpa_json_free(rec);
				break;
			}
			vpa_json_set(rec, "canary", vpa_json_clone(info));
			vpa_json_push(out->records, rec);
			char sfx[96] = "";
			if (dp)
				snprintf(sfx, sizeof(sfx), " (%s, epsilon %.3g)", mode_name[mode],
					 st->epsilon);
			for (size_t e = 0; e < OE; e++) {
				x[e] = (double)(e + 1);
				y[e] = l->d[e].mean;
			}
			char nm[192];
			snprintf(nm, sizeof(nm), "k = %ld%s", kr, sfx);
			vpa_json_push(vpa_json_get(f_over, "series"), vpa_dexp_series(nm, x, y, OE));
			for (size_t e = 0; e < OE; e++)
				y[e] = l->train_loss[e];
			snprintf(nm, sizeof(nm), "training loss, k = %ld%s", kr, sfx);
			vpa_json_push(vpa_json_get(f_oloss, "series"), vpa_dexp_series(nm, x, y, OE));
			for (size_t e = 0; e < OE; e++)
				y[e] = l->test_loss[e];
			snprintf(nm, sizeof(nm), "held-out loss, k = %ld%s", kr, sfx);
			vpa_json_push(vpa_json_get(f_oloss, "series"), vpa_dexp_series(nm, x, y, OE));
		}
		free(x);
		free(y);
	}
	/* the one-run audits, one per DP mode (after every other record) */
	for (int slot = 0; slot < n_modes && !rc && cfg->audit_canaries > 0; slot++) {
		if (modes[slot] == MODE_PLAIN)
			continue;
		struct vpa_tagger_cfg ac = base;
		mode_cfg(cfg, modes[slot], 0, &ac);
		rc = vpa_dexp_audit(ctx, id, cfg, &s, modes[slot], &ac, out, err);
	}
	if (rc)
		goto out;
	vpa_json_push(out->figures, f_reps);
	f_reps = NULL;
	for (int slot = 0; slot < n_modes; slot++)
		if (f_ep[slot]) {
			vpa_json_push(out->figures, f_ep[slot]);
			f_ep[slot] = NULL;
		}
	if (f_over) {
		vpa_json_push(out->figures, f_over);
		vpa_json_push(out->figures, f_oloss);
		f_over = f_oloss = NULL;
	}
	/* sanity: no value above its maximum (vpa_dexposure guarantees it) */
	for (size_t i = 0; i < (size_t)n_modes * nr; i++)
		for (int j = 0; j < VPA_TAG_N; j++)
			if (logs[i].d[logs[i].n_ep - 1].per[j] > logs[i].d[logs[i].n_ep - 1].max[j])
				VPA_BUG("d-exposure above its maximum");
	/* without insertion the canary should look like its controls */
	for (size_t i = 0; i < nr; i++) {
		const struct dexp *dd = &logs[i].d[logs[i].n_ep - 1];
		if (reps[i] == 0 && isfinite(dd->label_p90) && dd->per[s.label] > dd->label_p90)
			vpa_ctx_warn(ctx, "%s: with 0 insertions the canary's %s d-exposure (%.2f "
					  "bits) is above the 90th percentile of its %zu control words "
					  "(%.2f bits): it is not a typical word of its kind", id, lab,
				     dd->per[s.label], dd->n_ctrl, dd->label_p90);
	}
out:
	for (size_t i = 0; i < n_main; i++)
		vpa_dexp_log_free(&logs[i]);
	for (size_t i = 0; i < n_over; i++)
		vpa_dexp_log_free(&ologs[i]);
	free(logs);
	free(stats);
	free(ologs);
	free(ostats);
	free(jobs);
	free(sub);
	vpa_json_free(f_reps);
	for (int slot = 0; slot < N_MODES; slot++)
		vpa_json_free(f_ep[slot]);
	vpa_json_free(f_over);
	vpa_json_free(f_oloss);
	vpa_json_free(info);
	vpa_dexp_setup_release(&s);
	return rc;
}

static char *title(const char *id, const void *opts, const char *target_id)
{
	const struct vpa_dexp_opts *cfg = opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: d-exposure of a %s canary in the tagger '%s'", id,
		       cfg->label, target_id);
	return b.data;
}

/* The audit records (epsilon_lower_bound) exist only with audit_canaries, on a
 * tagger the attack trains. */
static const char *never_records(const char *metric, const void *opts, const char *target_id,
				 const void *target_opts, char *buf, size_t cap)
{
	const struct vpa_dexp_opts *o = opts;
	const struct vpa_tagger_opts *to = target_opts;
	if (strcmp(metric, "epsilon_lower_bound"))
		return NULL;
	if (!strcmp(to->source, "import")) {
		snprintf(buf, cap, "its target '%s' is imported (no tagger is trained)", target_id);
		return buf;
	}
	return o->audit_canaries > 0 ? NULL : "it has no 'audit_canaries'";
}

const struct vpa_attack_kind vpa_attack_d_exposure = {
	.never_records = never_records,
	.name = "d_exposure",
	.schema = &schema,
	.target_kinds = target_kinds,
	.metrics = metrics,
	.has_layers = 0,
	.doc = "d-exposure (Helali et al. 2020; COMPRISE D2.3 4.3.4): an ambiguous canary word "
	       "is inserted k times with a chosen label in a fixed context and the tagger "
	       "retrained; per class, -log2 of the fraction of reference words (labelled only "
	       "with that class) whose confidence is at least the canary's, with its maximum "
	       "log2|C_i|; the mean over classes is `d_exposure`, the inserted label's class "
	       "`d_exposure_label`; the chance level is the same value for never-inserted "
	       "control words of the canary's kind.  Subs `kK`, "
	       "`dp-kK` (DP-SGD per sentence), `dpuser-kK` (per user), `kK-eE` (per epoch, also "
	       "with the `dp-`/`dpuser-` prefixes), `overfit-kK` (also prefixed); on an imported "
	       "tagger, `import`.",
	.validate = validate,
	.subs = subs,
	.run = run,
	.title = title,
};
