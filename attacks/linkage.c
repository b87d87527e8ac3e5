/*
 * attacks/linkage.c - attack kind `linkage`: speaker verification of
 * anonymised speech by the attackers of the VoicePrivacy 2020 evaluation plan
 * and COMPRISE D2.3 4.2.1 (baseline, ignorant, lazy-informed, semi-informed,
 * informed), each scored with the attacker's back-end (centering, LDA,
 * length norm, PLDA or cosine; one GEMM block per attacker), turned into
 * records by vpa_record_from_scores, plus the voice-distinctiveness gain
 * G_VD of the VoicePrivacy evaluation.  The attackers' sets, back-ends,
 * trials and D_diag are in linkage_shared.c (identification and slicing use
 * them too); the per-gender records in linkage_gender.c.
 */
#include "attacks/linkage_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	A_BASELINE = VPA_ATK_BASELINE, A_IGNORANT = VPA_ATK_IGNORANT, A_LAZY = VPA_ATK_LAZY,
	A_SEMI = VPA_ATK_SEMI, A_INFORMED = VPA_ATK_INFORMED, A_N = VPA_ATK_N
};
#define attacker_names vpa_attacker_names

#define INF INFINITY
/* typed options (config/schema.h), filled by validation */
struct linkage_opts {
	struct vpa_strs attackers;
	int gvd;
	int per_gender;
	double omega;
	long long bins;
	double p_target;
	double ci;
	long long reps;
	int legal;
	struct vpa_strs pi_link_n, pi_sing_n, conversation_lengths;
	int inference;
	const char *attribute;
	struct vpa_mark attackers_at, gvd_at, per_gender_at, omega_at, bins_at,
		p_target_at, ci_at, reps_at, legal_at, pi_link_n_at, pi_sing_n_at,
		conversation_lengths_at, inference_at, attribute_at;
};

static const struct vpa_key keys[] = {
	{"attackers", VPA_K_ENUMLIST, 0, "[baseline, ignorant, lazy_informed, semi_informed, informed]",
	 -INF, INF, VPA_KF_NONEMPTY, "baseline|ignorant|lazy_informed|semi_informed|informed", NULL,
	 "[ignorant, semi_informed]",
	 "baseline: original enrolment and trials; ignorant: original enrolment, anonymised trials; "
	 "lazy_informed: enrolment anonymised by the attacker, back-end on original data; "
	 "semi_informed: the same with LDA/PLDA retrained on anonymised data; informed: enrolment "
	 "with the trial speakers' own pseudo-speakers (upper bound)",
	 VPA_AT(struct linkage_opts, attackers), VPA_MARK(struct linkage_opts, attackers_at)},
	{"gvd", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "false",
	 "compute the voice-distinctiveness gain G_VD (dB) of each attacker",
	 VPA_AT(struct linkage_opts, gvd), VPA_MARK(struct linkage_opts, gvd_at)},
	{"per_gender", VPA_K_BOOL, 0, "false", -INF, INF, 0, NULL, NULL, "true",
	 "also one record per gender of each attacker, ATTACKER/LIST_f and ATTACKER/LIST_m "
	 "(the trials of female / male enrolment speakers, as the VoicePrivacy trials_f / "
	 "trials_m; LIST: the trials list's name without _f/_m, for a list of trial "
	 "directories or trials files their common name, e.g. libri_dev_trials; else "
	 "`trials`), beside the pooled ATTACKER; needs the speakers' genders",
	 VPA_AT(struct linkage_opts, per_gender), VPA_MARK(struct linkage_opts, per_gender_at)},
	{"omega", VPA_K_NUM, 0, "1", 0, INF, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "linkability prior ratio of mated to non-mated pairs",
	 VPA_AT(struct linkage_opts, omega), VPA_MARK(struct linkage_opts, omega_at)},
	{"bins", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "50",
	 "linkability histogram bins; 0 = min(floor(n_target/10), 100)",
	 VPA_AT(struct linkage_opts, bins), VPA_MARK(struct linkage_opts, bins_at)},
	{"p_target", VPA_K_NUM, 0, "0.01", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "0.05",
	 "target prior of the minimum detection cost",
	 VPA_AT(struct linkage_opts, p_target), VPA_MARK(struct linkage_opts, p_target_at)},
	{"ci", VPA_K_NUM, 0, "0", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.95",
	 "bootstrap confidence level (0 = none); enrolment speakers and test utterances are "
	 "resampled",
	 VPA_AT(struct linkage_opts, ci), VPA_MARK(struct linkage_opts, ci_at)},
	{"reps", VPA_K_INT, 0, "1000", 10, 1000000, 0, NULL, NULL, "500", "bootstrap replicates",
	 VPA_AT(struct linkage_opts, reps), VPA_MARK(struct linkage_opts, reps_at)},
	{"legal", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "false",
	 "the Article 29 criteria of Vauquier et al. (Interspeech 2025) for every attacker: "
	 "pi_link, closed-set linkability (exact estimator, chance 1/N'), and pi_sing, "
	 "predicate singling out (threshold calibrated on held-out conversations to fire on "
	 "1/N, baseline (1-1/N)^(N-1) -> e^-1), each with a sampling-free t interval at level "
	 "`ci` (0.95 when 0), for conversations of each length; in the record's `legal` "
	 "object, the first length's first grid value as metrics.pi_link / metrics.pi_sing "
	 "(unreliable below 10 test speakers)",
	 VPA_AT(struct linkage_opts, legal), VPA_MARK(struct linkage_opts, legal_at)},
	{"pi_link_n", VPA_K_LIST, 0, "[2, 5, 10, 50, all]", -INF, INF, VPA_KF_NONEMPTY, NULL, NULL,
	 "[2, all]",
	 "the N' of pi_link (candidate set sizes, integers >= 2 or `all` = every enrolment "
	 "speaker); one above the enrolment speakers gives null",
	 VPA_AT(struct linkage_opts, pi_link_n), VPA_MARK(struct linkage_opts, pi_link_n_at)},
	{"pi_sing_n", VPA_K_LIST, 0, "[2, 5, 10, 50]", -INF, INF, VPA_KF_NONEMPTY, NULL, NULL,
	 "[2, 10]",
	 "the N of pi_sing (sets of N test speakers, integers >= 2 or `all`); one above the "
	 "test speakers gives null",
	 VPA_AT(struct linkage_opts, pi_sing_n), VPA_MARK(struct linkage_opts, pi_sing_n_at)},
	{"conversation_lengths", VPA_K_LIST, 0, "[1, 3, 10]", -INF, INF, VPA_KF_NONEMPTY, NULL,
	 NULL, "[1, 5]",
	 "utterances per conversation L (the conversation's embedding: the L2-normalised mean "
	 "of L consecutive utterances of a speaker); speakers with fewer than L utterances are "
	 "excluded and counted, pi_sing needs 2L (one calibration, one test conversation)",
	 VPA_AT(struct linkage_opts, conversation_lengths),
	 VPA_MARK(struct linkage_opts, conversation_lengths_at)},
	{"inference", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "false",
	 "the Article 29 inference criterion for every attacker: a classifier of a per-speaker "
	 "attribute (linear discriminants on the attacker's back-end features) trained on the "
	 "training data of the attacker's back-end (anonymised for semi_informed and informed), "
	 "guessing the attribute of the attacked test utterances: metrics.inference_acc and "
	 "inference_bacc (balanced) with their chance levels and t intervals over test speakers "
	 "in the record's `inference` object (unreliable below 10 test speakers or with one "
	 "class among them); skipped with a warning when no speaker has a gender and no "
	 "`attribute` is given",
	 VPA_AT(struct linkage_opts, inference), VPA_MARK(struct linkage_opts, inference_at)},
	{"attribute", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/spk2age_group",
	 "the attribute to infer, a per-speaker label file `SPEAKER LABEL` (at least 2 "
	 "labels; speakers left out are not counted); default: the genders of spk2gender",
	 VPA_AT(struct linkage_opts, attribute), VPA_MARK(struct linkage_opts, attribute_at)},
	{NULL},
};
static const struct vpa_schema schema = {"attack linkage", keys, sizeof(struct linkage_opts)};

static const char *const target_kinds[] = {"anonymised_speech", NULL};
static const char *const metrics[] = {
	"eer", "eer_sweep", "cllr", "cllr_min", "linkability", "min_dcf", "zebra.dece",
	"zebra.log10_lr_worst", "n_target", "n_nontarget", "eer_threshold", "tied_fraction",
	"linkability_hist", "eer_flipped", "cllr_min_flipped", "min_dcf_flipped", "gvd",
	"pi_link", "pi_sing", "inference_acc", "inference_bacc", "wer_orig", "wer_anon",
	"wer_increase", "rho_f0", "uar_orig", "uar_anon", NULL,
};

/*
 * The utility the target measured on the same trials (info.audio: WER of the
 * `hyp:` files or of a recogniser, rho_F0), copied into every record of the
 * attack so that a gate bounds it like any metric ("at most 5 points of WER
 * for this privacy"): a fraction like every rate; wer_increase = wer_anon -
 * wer_orig; uar_orig / uar_anon of the emotion recogniser (`ser:`).  Absent
 * when the target did not measure it.
 */
static void set_utility(const struct vpa_target *t, struct vpa_json *mj)
{
	const struct vpa_json *au = vpa_json_get(t->info, "audio");
	double wo = vpa_json_get_num(vpa_json_get(au, "wer_orig"), "wer", NAN);
	double wa = vpa_json_get_num(vpa_json_get(au, "wer_anon"), "wer", NAN);
	double rho = vpa_json_get_num(au, "rho_f0", NAN);
	if (isfinite(wo))
		vpa_json_set_num(mj, "wer_orig", wo);
	if (isfinite(wa))
		vpa_json_set_num(mj, "wer_anon", wa);
	if (isfinite(wo) && isfinite(wa))
		vpa_json_set_num(mj, "wer_increase", wa - wo);
	if (isfinite(rho))
		vpa_json_set_num(mj, "rho_f0", rho);
	const struct vpa_json *ser = vpa_json_get(au, "ser");
	double uo = vpa_json_get_num(ser, "uar_orig", NAN), ua = vpa_json_get_num(ser, "uar_anon", NAN);
	if (isfinite(uo))
		vpa_json_set_num(mj, "uar_orig", uo);
	if (isfinite(ua))
		vpa_json_set_num(mj, "uar_anon", ua);
}

static size_t subs(const void *opts, const void *target_opts, const char ***names)
{
	const struct linkage_opts *o = opts;
	unsigned m = vpa_linkage_attackers(&o->attackers);
	size_t n = 0;
	if (!o->per_gender) {
		*names = xcalloc(A_N, sizeof(**names));
		for (int k = 0; k < A_N; k++)
			if (m & (1u << k))
				(*names)[n++] = attacker_names[k];
		return n;
	}
	/* one block (the caller frees the array): pointers, then the per-gender names */
	char *list = vpa_anon_trials_name(target_opts);
	size_t each = strlen("semi_informed/") + strlen(list) + 3;
	char *blk = xcalloc(1, 3 * A_N * sizeof(char *) + 2 * A_N * each);
	const char **p = (const char **)(void *)blk;
	char *str = blk + 3 * A_N * sizeof(char *);
	for (int k = 0; k < A_N; k++)
		if (m & (1u << k))
			p[n++] = attacker_names[k];
	for (int k = 0; k < A_N; k++)
		for (int g = 0; g < 2 && (m & (1u << k)); g++) {
			snprintf(str, each, "%s/%s_%c", attacker_names[k], list, "fm"[g]);
			p[n++] = str;
			str += each;
		}
	free(list);
	*names = p;
	return n;
}

/* A grid list: integers in [lo, hi] or (allow_all) `all` (0), distinct;
 * errors blame the item. */
static int grid(const struct vpa_kind_ctx *ctx, const struct vpa_strs *l, const char *key,
		long lo, long hi, int allow_all, size_t *out, size_t max, size_t *n,
		struct vpa_err *err)
{
	*n = 0;
	for (size_t i = 0; i < l->n; i++) {
		const char *v = l->v[i];
		char *end = NULL;
		long x = 0;
		if (!(allow_all && !strcmp(v, "all"))) {
			x = strtol(v, &end, 10);
			if (!l->plain[i] || end == v || *end || x < lo || x > hi) {
				struct vpa_loc loc = vpa_mark_loc(ctx->file, l->marks[i]);
				return vpa_fail(err, VPA_EINPUT, &loc,
						"%s: expected an integer in [%ld, %ld]%s, got '%s'", key, lo,
						hi, allow_all ? " or all" : "", v);
			}
		}
		for (size_t j = 0; j < *n; j++)
			if (out[j] == (size_t)x) {
				struct vpa_loc loc = vpa_mark_loc(ctx->file, l->marks[i]);
				return vpa_fail(err, VPA_EINPUT, &loc, "%s: '%s' is listed twice", key, v);
			}
		if (*n == max) {
			struct vpa_loc loc = vpa_mark_loc(ctx->file, l->marks[i]);
			return vpa_fail(err, VPA_EINPUT, &loc, "%s: at most %zu values", key, max);
		}
		out[(*n)++] = (size_t)x;
	}
	return 0;
}

static int legal_grid(const struct vpa_kind_ctx *ctx, const struct linkage_opts *o,
		      struct vpa_legal_grid *g, struct vpa_err *err)
{
	memset(g, 0, sizeof(*g));
	g->level = o->ci > 0 ? o->ci : 0.95;
	int rc = grid(ctx, &o->pi_link_n, "pi_link_n", 2, 100000000, 1, g->link, 32, &g->n_link,
		      err);
	if (!rc)
		rc = grid(ctx, &o->pi_sing_n, "pi_sing_n", 2, 100000000, 1, g->sing, 32,
			  &g->n_sing, err);
	if (!rc)
		rc = grid(ctx, &o->conversation_lengths, "conversation_lengths", 1, 100000, 0, g->len,
			  16, &g->n_len, err);
	return rc;
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, const void *target_opts,
		    struct vpa_err *err)
{
	const struct linkage_opts *o = opts;
	struct vpa_legal_grid g;
	int rc = legal_grid(ctx, o, &g, err);
	if (rc)
		return rc;
	if (o->attribute && o->inference) {
		/* read now: a file of one class stops `vpaudit validate`, not a run */
		if ((rc = vpa_check_path_at(ctx, o->attribute, o->attribute_at, VPA_PATH_FILE, err)))
			return rc;
		char *p = vpa_path_join(ctx->dir, o->attribute);
		struct vpa_attr_labels lab;
		rc = vpa_attr_labels_file(p, o->attribute, &lab, err);
		vpa_attr_labels_release(&lab);
		free(p);
		if (rc)
			return rc;
	}
	return vpa_linkage_check_sets(ctx, &o->attackers, o->attackers_at, target_opts, err);
}

/*
 * metrics.pi_link / pi_sing and the record's "legal" object (B scores e
 * against te's conversations); unreliable below VPA_LEGAL_MIN_SPEAKERS test
 * speakers, with the reason.
 */
static int legal_record(struct vpa_json *rec, const struct vpa_backend *B,
			const struct vpa_anon_trials *tr, const struct vpa_embset *e, const struct vpa_embset *te,
			const struct vpa_legal_grid *g, struct vpa_err *err)
{
	double pl, ps;
	size_t k;
	struct vpa_json *lj = vpa_linkage_legal(B, tr, e, te, g, &pl, &ps, &k, err);
	if (!lj)
		return err->status;
	struct vpa_json *mj = vpa_json_get(rec, "metrics");
	vpa_json_set_num(mj, "pi_link", pl); /* NAN -> null: marked undefined */
	vpa_json_set_num(mj, "pi_sing", ps);
	vpa_json_set(rec, "legal", lj);
	struct vpa_json *u = vpa_json_get(rec, "unreliable");
	if (!u && (k < VPA_LEGAL_MIN_SPEAKERS || !isfinite(pl) || !isfinite(ps))) {
		u = vpa_json_obj();
		vpa_json_set(rec, "unreliable", u);
	}
	/* undefined: say why (vpa_record_mark_undefined would only say "undefined value") */
	const struct vpa_json *first = vpa_json_get(lj, "by_length");
	first = first && first->n ? first->items[0] : NULL;
	size_t L = g->len[0], sing = (size_t)vpa_json_get_num(first, "sing_speakers", 0);
	char why[160];
	if (!isfinite(pl)) {
		if (!k)
			snprintf(why, sizeof(why), "undefined: no test speaker with %zu utterance%s and "
				 "a single target enrolment", L, L > 1 ? "s" : "");
		else
			snprintf(why, sizeof(why), "undefined: N' = %zu is above the %zu enrolment "
				 "speakers", g->link[0], e->n_spk);
		vpa_json_set_str(u, "pi_link", why);
	}
	if (!isfinite(ps)) {
		if (!sing)
			snprintf(why, sizeof(why), "undefined: no test speaker with 2L = %zu utterances "
				 "(a calibration and a test conversation)", 2 * L);
		else
			snprintf(why, sizeof(why), "undefined: N = %zu is above the %zu test speakers",
				 g->sing[0], sing);
		vpa_json_set_str(u, "pi_sing", why);
	}
	if (k < VPA_LEGAL_MIN_SPEAKERS && (isfinite(pl) || isfinite(ps))) {
		snprintf(why, sizeof(why), "%zu test speakers (fewer than %d)", k,
			 VPA_LEGAL_MIN_SPEAKERS);
		if (isfinite(pl))
			vpa_json_set_str(u, "pi_link", why);
		if (isfinite(ps))
			vpa_json_set_str(u, "pi_sing", why);
	}
	return 0;
}

/*
 * metrics.inference_acc / inference_bacc and the record's "inference" object
 * (test rows of speakers of `gender`, 0: all); unreliable with the reason
 * (fewer than VPA_LEGAL_MIN_SPEAKERS test speakers, one class, none).
 */
static void infer_record(struct vpa_json *rec, const struct vpa_linkage_attr *fit,
			 const struct vpa_attr_labels *lab, const char *train_name,
			 const struct vpa_embset *te, char gender, double level)
{
	double acc, bacc;
	char why[200];
	struct vpa_json *o = vpa_linkage_attr_json(fit, lab, train_name, te, gender, level, &acc,
						   &bacc, why, sizeof(why));
	struct vpa_json *mj = vpa_json_get(rec, "metrics");
	vpa_json_set_num(mj, "inference_acc", acc); /* NAN -> null */
	vpa_json_set_num(mj, "inference_bacc", bacc);
	vpa_json_set(rec, "inference", o);
	if (*why) {
		struct vpa_json *u = vpa_json_get(rec, "unreliable");
		if (!u) {
			u = vpa_json_obj();
			vpa_json_set(rec, "unreliable", u);
		}
		vpa_json_set_str(u, "inference_acc", why);
		vpa_json_set_str(u, "inference_bacc", why);
	}
}

/*
 * pi_link / pi_sing of one gender's record: the enrolment speakers of that
 * gender are the candidates (as the VoicePrivacy trials_f / trials_m pair
 * same-gender speakers), the test speakers those whose target enrolment is
 * of that gender.
 */
static int gender_legal(struct vpa_json *rec, const struct vpa_backend *B,
			const struct vpa_anon_trials *tr, const struct vpa_embset *e,
			const struct vpa_embset *te, char g, const struct vpa_legal_grid *lg,
			struct vpa_err *err)
{
	uint32_t *idx = xmalloc(xmul(e->n_spk ? e->n_spk : 1, sizeof(uint32_t)));
	uint32_t *map = xmalloc(xmul(e->n_spk ? e->n_spk : 1, sizeof(uint32_t)));
	size_t k = 0;
	for (size_t s = 0; s < e->n_spk; s++) {
		map[s] = UINT32_MAX;
		if (e->gender && e->gender[s] == g) {
			map[s] = (uint32_t)k;
			idx[k++] = (uint32_t)s;
		}
	}
	struct vpa_embset eg;
	vpa_embset_init(&eg);
	vpa_embset_subset_spk(e, idx, k, &eg);
	struct vpa_anon_trials sub;
	sub.n = 0;
	sub.e = xmalloc(xmul(tr->n ? tr->n : 1, sizeof(uint32_t)));
	sub.t = xmalloc(xmul(tr->n ? tr->n : 1, sizeof(uint32_t)));
	sub.tar = xmalloc(tr->n ? tr->n : 1);
	for (size_t i = 0; i < tr->n; i++)
		if (map[tr->e[i]] != UINT32_MAX) {
			sub.e[sub.n] = map[tr->e[i]];
			sub.t[sub.n] = tr->t[i];
			sub.tar[sub.n++] = tr->tar[i];
		}
	int rc = legal_record(rec, B, &sub, &eg, te, lg, err);
	free(sub.e);
	free(sub.t);
	free(sub.tar);
	vpa_embset_release(&eg);
	free(idx);
	free(map);
	return rc;
}

static int run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
	       const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct linkage_opts *lo = opts;
	const struct vpa_anon_target *a = t->data;
	unsigned m = vpa_linkage_attackers(&lo->attackers);
	struct vpa_backend *b_orig = NULL, *b_anon = NULL;
	struct vpa_eval_opts o;
	int rc = 0, do_gvd = lo->gvd;
	int per_gender = lo->per_gender;
	double dd_oo = NAN;
	struct vpa_attr_labels lab, genders; /* released at out: even when never filled */
	int have_lab = 0;
	const struct vpa_embset *gsets[] = {&a->train, &a->train_anon, &a->enroll, &a->trial,
					    &a->trial_anon, &a->enroll_anon, &a->pop};
	memset(&lab, 0, sizeof(lab));
	vpa_strmap_init(&lab.map);
	vpa_kaldi_list_init(&lab.list);
	vpa_attr_labels_gender(gsets, sizeof(gsets) / sizeof(*gsets), &genders);
	vpa_eval_opts_init(&o);
	o.m.omega = lo->omega;
	o.m.bins = (size_t)lo->bins;
	o.m.p_target = lo->p_target;
	o.ci_level = lo->ci;
	o.ci_reps = (size_t)lo->reps;
	o.seed = ctx->seed;

	const struct vpa_embset *E[A_N], *T[A_N];
	for (int k = 0; k < A_N; k++) {
		struct vpa_attacker_sets as;
		vpa_linkage_attacker_sets(a, k, &as);
		E[k] = as.enroll;
		T[k] = as.test;
		if (!(m & (1u << k)))
			continue;
		if (!E[k]->n || !T[k]->n)
			return vpa_fail(err, VPA_EINPUT, NULL, "attacker '%s' needs the set '%s'",
					attacker_names[k], !E[k]->n ? as.enroll_name : as.test_name);
	}
	if (!(b_orig = vpa_linkage_backend(&a->train, &a->backend, "original training data", err)))
		return err->status;
	if (m & ((1u << A_SEMI) | (1u << A_INFORMED))) {
		if (!a->train_anon.n) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "semi-informed and informed attackers need anonymised training "
				      "data (train_anon)");
			goto out;
		}
		if (!(b_anon = vpa_linkage_backend(&a->train_anon, &a->backend,
						   "anonymised training data", err))) {
			rc = err->status;
			goto out;
		}
	}
	if (do_gvd)
		dd_oo = vpa_linkage_ddiag(b_orig, &a->trial);
	if (lo->inference && lo->attribute) {
		char *p = vpa_path_join(ctx->dir, lo->attribute);
		rc = vpa_attr_labels_file(p, lo->attribute, &lab, err);
		free(p);
		if (rc)
			goto out;
		have_lab = 1;
	} else if (lo->inference) {
		vpa_attr_labels_release(&lab);
		vpa_attr_labels_gender(gsets, sizeof(gsets) / sizeof(*gsets), &lab);
		have_lab = lab.labelled > 0;
		if (!have_lab)
			vpa_ctx_warn(ctx, "%s: no inference criterion: no speaker has a gender "
					  "(spk2gender) and no `attribute` file is given", id);
	}
	double level = lo->ci > 0 ? lo->ci : 0.95;
	struct vpa_legal_grid lg;
	if (lo->legal) {
		/* checked by validate: the context only names a file for errors */
		struct vpa_kind_ctx kc = {0};
		if ((rc = legal_grid(&kc, lo, &lg, err)))
			goto out;
	}

	char fid0[256], title0[512];
	snprintf(fid0, sizeof(fid0), "%s-det", id);
	snprintf(title0, sizeof(title0), "DET: attackers of %s on %s", id, t->id);
	struct vpa_json *det = vpa_det_figure(fid0, title0, vpa_json_arr());
	vpa_json_push(out->figures, det);
	struct vpa_json *bars = vpa_json_arr(), *cats = vpa_json_arr(), *ys = vpa_json_arr();
	size_t first_rec = out->records->n;
	for (int k = 0; k < A_N && !rc; k++) {
		if (!(m & (1u << k)))
			continue;
		struct vpa_attacker_sets as;
		vpa_linkage_attacker_sets(a, k, &as);
		const struct vpa_backend *B = as.anon_backend ? b_anon : b_orig;
		const struct vpa_embset *e = E[k], *te = T[k];
		double *S = xmalloc(xmul(xmul(e->n_spk ? e->n_spk : 1, te->n ? te->n : 1),
					 sizeof(double)));
		if ((rc = vpa_backend_score_sets(B, e, te, S, err))) {
			free(S);
			break;
		}
		struct vpa_trials tr;
		vpa_linkage_make_trials(&a->trials, S, te->n, e, te, &tr);
		if (!tr.n_tar || !tr.n_non) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "the trials have no %s trial",
				      tr.n_tar ? "non-target" : "target");
			vpa_trials_release(&tr);
			free(S);
			break;
		}
		size_t before = out->records->n;
		o.chance_expected = k == A_IGNORANT;
		rc = vpa_record_from_scores(ctx, id, attacker_names[k], -1, &tr, &o, out,
					    vpa_json_get(det, "series"), err);
		vpa_trials_release(&tr);
		if (rc) {
			free(S);
			break;
		}
		struct vpa_json *rec = out->records->items[before];
		struct vpa_json *mj = vpa_json_get(rec, "metrics");
		double gvd = NAN;
		if (do_gvd) {
			double dd = k == A_BASELINE ? dd_oo : vpa_linkage_ddiag(B, te);
			gvd = 10 * log10(dd / dd_oo);
			if (!isfinite(gvd))
				vpa_ctx_warn(ctx, "%s.%s: G_VD is undefined (a trial speaker with a single "
						  "utterance, or a zero diagonal dominance)", id,
					     attacker_names[k]);
		}
		vpa_json_set_num(mj, "gvd", gvd); /* NAN -> null */
		set_utility(t, mj);
		if (lo->legal && (rc = legal_record(rec, B, &a->trials, e, te, &lg, err))) {
			free(S);
			break;
		}
		struct vpa_linkage_attr fit;
		memset(&fit, 0, sizeof(fit));
		const char *tn = as.anon_backend ? "train_anon" : "train";
		int fit_ok = 0;
		if (have_lab) {
			rc = vpa_linkage_attr_fit(B, as.anon_backend ? &a->train_anon : &a->train, tn,
						  te, &lab, &genders, &fit, err);
			if (rc == VPA_EINPUT && !lo->attribute) {
				/* the default attribute (gender from spk2gender) is not the user's
				 * request: a training set of one gender leaves this attacker without
				 * the criterion, said once, and the run goes on (a gate on it then
				 * fails closed as undefined) */
				vpa_ctx_warn(ctx, "%s.%s: no inference criterion: %s", id,
					     attacker_names[k], err->msg);
				vpa_err_init(err);
				rc = 0;
			} else if (rc) {
				free(S);
				break;
			} else {
				fit_ok = 1;
				infer_record(rec, &fit, &lab, tn, te, 0, level);
			}
		}
		vpa_record_mark_undefined(rec);
		if (per_gender) {
			struct vpa_linkage_gvd gv = {B, b_orig, &a->trial, k == A_BASELINE};
			size_t from = out->records->n;
			rc = vpa_linkage_gender_records(ctx, id, attacker_names[k], a->trials_name,
							&a->trials, S, e, te, do_gvd ? &gv : NULL, &o,
							out, err);
			/* the three criteria per gender, in the records just made */
			for (size_t q = from; !rc && q < out->records->n; q++) {
				struct vpa_json *gr = out->records->items[q];
				const char *gs = vpa_json_get_str(gr, "gender");
				if (!gs || !*gs)
					continue;
				if (lo->legal)
					rc = gender_legal(gr, B, &a->trials, e, te, gs[0], &lg, err);
				if (!rc && fit_ok)
					infer_record(gr, &fit, &lab, tn, te, gs[0], level);
				vpa_record_mark_undefined(gr);
			}
		}
		vpa_linkage_attr_release(&fit);
		free(S);
		if (rc)
			break;
		double link = vpa_json_get_num(mj, "linkability", NAN);
		vpa_json_push(cats, vpa_json_str(attacker_names[k]));
		vpa_json_push(ys, vpa_json_num(link));
	}
	if (!rc) {
		struct vpa_json *f = vpa_json_obj();
		char fid[256], title[512];
		snprintf(fid, sizeof(fid), "%s-linkability", id);
		snprintf(title, sizeof(title), "Linkability D<->sys per attacker (%s on %s)", id, t->id);
		/* a bar per attacker, named on the axis, on the metric's own 0-1 scale */
		vpa_json_set_str(f, "type", "bars");
		vpa_json_set_str(f, "id", fid);
		vpa_json_set_str(f, "title", title);
		vpa_json_set_str(f, "ylabel", "linkability D<->sys (0 = unlinkable, 1 = fully)");
		vpa_json_set(f, "categories", cats);
		cats = NULL;
		struct vpa_json *yr = vpa_json_arr(), *sr = vpa_json_obj();
		vpa_json_push(yr, vpa_json_num(0));
		vpa_json_push(yr, vpa_json_num(1));
		vpa_json_set(f, "yrange", yr);
		vpa_json_set_str(sr, "name", "linkability");
		vpa_json_set(sr, "y", ys);
		ys = NULL;
		vpa_json_push(bars, sr);
		vpa_json_set(f, "series", bars);
		bars = NULL;
		vpa_json_push(out->figures, f);
		if (lo->legal)
			vpa_linkage_legal_figures(id, t->id, out->records, first_rec, out->figures);
	}
	vpa_json_free(bars);
	vpa_json_free(cats);
	vpa_json_free(ys);
out:
	vpa_attr_labels_release(&lab);
	vpa_attr_labels_release(&genders);
	vpa_backend_free(b_orig);
	vpa_backend_free(b_anon);
	return rc;
}

static char *title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: linkage attacks on the anonymised speech of '%s'", id, target_id);
	return b.data;
}

const struct vpa_attack_kind vpa_attack_linkage = {
	.name = "linkage",
	.schema = &schema,
	.target_kinds = target_kinds,
	.metrics = metrics,
	.has_layers = 0,
	.doc = "Speaker verification against anonymised speech (VoicePrivacy 2020 attack "
	       "scenarios, COMPRISE D2.3 4.2.1): for each attacker, enrolment speakers (the mean "
	       "of their utterances) are scored against same-gender trial utterances with the "
	       "attacker's back-end (centering, LDA, length norm, PLDA; retrained on anonymised "
	       "data for semi-informed and informed).  One record per attacker with every metric "
	       "of `evaluate` and `gvd`, the voice-distinctiveness gain 10 log10(D_diag(M_aa) / "
	       "D_diag(M_oo)) in dB of the VoicePrivacy evaluation (0 for the baseline); one DET "
	       "figure with all attackers, one linkability figure per attacker, and a chart of "
	       "linkability per attacker.  With `legal` (default), each record also has pi_link "
	       "(closed-set linkability) and pi_sing (predicate singling out) of Vauquier et al. "
	       "(Interspeech 2025) for conversations of each length, against their chance levels; "
	       "with `inference` (default), inference_acc / inference_bacc, an attribute "
	       "classifier's accuracy on the attacked test utterances against the majority-class "
	       "chance; both also in the per-gender records, and figures of pi_link against N' and "
	       "pi_sing against N.  Every record also carries the utility the target measured on "
	       "its trials, to be gated like any metric: wer_orig, wer_anon, wer_increase (wer_anon "
	       "- wer_orig; fractions), rho_f0, and uar_orig, uar_anon of the emotion recogniser "
	       "(`ser`).",
	.validate = validate,
	.subs = subs,
	.run = run,
	.title = title,
};
