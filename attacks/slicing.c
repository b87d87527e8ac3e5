/*
 * attacks/slicing.c - attack kind `slicing` (COMPRISE D2.3 4.2.6, Fig. 15):
 * linkability and EER against the duration of the trial utterances, for
 * original and anonymised speech.  The trial utterances are cut to each
 * duration (enrolment stays whole) and scored by the attackers of the
 * `linkage` attack (same sets and back-ends, vpa_linkage_attacker_sets):
 *  - simulated targets: the duration model of targets/sim_speech.c re-draws
 *    each trial utterance at min(duration, its own) seconds, keeping its
 *    draws (vpa_sim_remake for the original, vpa_sim_anon_set with the
 *    user's pseudo-speakers for the anonymised trials), so only the session
 *    noise scale sqrt(1 + tau / T) changes;
 *  - imported targets: one set of embeddings per duration (`slices`),
 *    extracted from the cut audio, holding the target's trial utterances.
 * One record per (attacker, duration) made by vpa_record_from_scores, with
 * the duration in seconds as the record's `layer`.
 */
#include "attacks/attacks.h"
#include "attacks/linkage_int.h"

#include "embed/embed.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define INF INFINITY
/* typed options (config/schema.h), filled by validation */
struct slicing_set_opts {
	const char *vectors;
	const char *audio;
	const char *ids;
	const char *utt2spk;
	struct vpa_mark vectors_at, audio_at, ids_at, utt2spk_at;
};

static const struct vpa_key set_keys[] = {
	{"vectors", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "trial_2s/xvector.ark",
	 "Kaldi archive (text or binary) or .npy (n, d) float32/float64 (this or `audio`)",
	 VPA_AT(struct slicing_set_opts, vectors), VPA_MARK(struct slicing_set_opts, vectors_at)},
	{"audio", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/trial_2s",
	 "a Kaldi data directory of the cut audio, embedded with the target's "
	 "`import.extractor` (utt2spk from the folder; no other key)",
	 VPA_AT(struct slicing_set_opts, audio), VPA_MARK(struct slicing_set_opts, audio_at)},
	{"ids", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "trial_2s/ids.txt",
	 ".npy only: one utterance id per row, or `utt spk` lines",
	 VPA_AT(struct slicing_set_opts, ids), VPA_MARK(struct slicing_set_opts, ids_at)},
	{"utt2spk", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "trial_2s/utt2spk",
	 "`utt spk` lines (required unless `ids` has two columns)",
	 VPA_AT(struct slicing_set_opts, utt2spk), VPA_MARK(struct slicing_set_opts, utt2spk_at)},
	{NULL},
};
static const struct vpa_schema set_schema = {"sliced set", set_keys, sizeof(struct slicing_set_opts)};

/* typed options (config/schema.h), filled by validation */
struct slicing_slice_opts {
	long long duration;
	struct slicing_set_opts trial;
	struct slicing_set_opts trial_anon;
	struct vpa_mark duration_at, trial_at, trial_anon_at;
};

static const struct vpa_key slice_keys[] = {
	{"duration", VPA_K_INT, 1, NULL, 1, 3600, 0, NULL, NULL, "2",
	 "the duration (whole seconds) the trial utterances were cut to",
	 VPA_AT(struct slicing_slice_opts, duration), VPA_MARK(struct slicing_slice_opts, duration_at)},
	{"trial", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &set_schema,
	 "{vectors: trial_2s/xvector.ark, utt2spk: trial_2s/utt2spk}",
	 "original trial utterances cut to `duration` (the baseline attacker needs it)",
	 VPA_AT(struct slicing_slice_opts, trial), VPA_MARK(struct slicing_slice_opts, trial_at)},
	{"trial_anon", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &set_schema,
	 "{vectors: trial_anon_2s/xvector.ark, utt2spk: trial_anon_2s/utt2spk}",
	 "anonymised trial utterances cut to `duration` (every other attacker needs it)",
	 VPA_AT(struct slicing_slice_opts, trial_anon), VPA_MARK(struct slicing_slice_opts, trial_anon_at)},
	{NULL},
};
static const struct vpa_schema slice_schema = {"slice", slice_keys, sizeof(struct slicing_slice_opts)};

/* typed options (config/schema.h), filled by validation */
struct slicing_opts {
	struct vpa_strs attackers;
	struct vpa_strs durations;
	struct vpa_optlist slices;
	double omega;
	long long bins;
	double p_target;
	struct vpa_mark attackers_at, durations_at, slices_at, omega_at, bins_at,
		p_target_at;
};

static const struct vpa_key keys[] = {
	{"attackers", VPA_K_ENUMLIST, 0, "[baseline, ignorant, lazy_informed, semi_informed, informed]",
	 -INF, INF, VPA_KF_NONEMPTY, "baseline|ignorant|lazy_informed|semi_informed|informed", NULL,
	 "[baseline, ignorant]",
	 "the attackers of the `linkage` attack (baseline = original speech)",
	 VPA_AT(struct slicing_opts, attackers), VPA_MARK(struct slicing_opts, attackers_at)},
	{"durations", VPA_K_LIST, 0, NULL, -INF, INF, VPA_KF_NONEMPTY, NULL, NULL, "[1, 2, 4, 8]",
	 "simulated targets: durations in whole seconds (distinct integers >= 1) the trial "
	 "utterances are cut to (an utterance shorter than the duration stays whole)",
	 VPA_AT(struct slicing_opts, durations), VPA_MARK(struct slicing_opts, durations_at)},
	{"slices", VPA_K_MAPLIST, 0, NULL, -INF, INF, VPA_KF_NONEMPTY, NULL, &slice_schema,
	 "[{duration: 2, trial: {...}, trial_anon: {...}}]",
	 "imported targets: the trial embeddings extracted from audio cut to each duration; each "
	 "set holds every trial utterance of the target (same ids)",
	 VPA_AT(struct slicing_opts, slices), VPA_MARK(struct slicing_opts, slices_at)},
	{"omega", VPA_K_NUM, 0, "1", 0, INF, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "linkability prior ratio of mated to non-mated pairs",
	 VPA_AT(struct slicing_opts, omega), VPA_MARK(struct slicing_opts, omega_at)},
	{"bins", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "50",
	 "linkability histogram bins; 0 = min(floor(n_target/10), 100)",
	 VPA_AT(struct slicing_opts, bins), VPA_MARK(struct slicing_opts, bins_at)},
	{"p_target", VPA_K_NUM, 0, "0.01", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "0.05",
	 "target prior of the minimum detection cost",
	 VPA_AT(struct slicing_opts, p_target), VPA_MARK(struct slicing_opts, p_target_at)},
	{NULL},
};
static const struct vpa_schema schema = {"attack slicing", keys, sizeof(struct slicing_opts)};

static const char *const target_kinds[] = {"anonymised_speech", NULL};
static const char *const metrics[] = {
	"eer", "eer_sweep", "cllr", "cllr_min", "linkability", "min_dcf", "zebra.dece",
	"zebra.log10_lr_worst", "n_target", "n_nontarget", "eer_threshold", "tied_fraction",
	"linkability_hist", "eer_flipped", "cllr_min_flipped", "min_dcf_flipped", NULL,
};

static size_t subs(const void *opts, const void *target_opts, const char ***names)
{
	(void)target_opts;
	unsigned m = vpa_linkage_attackers(&((const struct slicing_opts *)opts)->attackers);
	size_t n = 0;
	*names = xcalloc(VPA_ATK_N, sizeof(**names));
	for (int k = 0; k < VPA_ATK_N; k++)
		if (m & (1u << k))
			(*names)[n++] = vpa_attacker_names[k];
	return n;
}

/* One written key of a sliced set, for the checks in the order written. */
struct set_key {
	const char *name, *value;
	struct vpa_mark at;
};

static int cmp_mark(const void *a, const void *b)
{
	const struct vpa_mark *x = &((const struct set_key *)a)->at;
	const struct vpa_mark *y = &((const struct set_key *)b)->at;
	if (x->line != y->line)
		return (x->line > y->line) - (x->line < y->line);
	return (x->col > y->col) - (x->col < y->col);
}

/* The checks of one sliced set `name` (written at set_at) of the slice of d s. */
static int check_set(const struct vpa_kind_ctx *ctx, const char *name,
		     const struct slicing_set_opts *set, struct vpa_mark set_at, long long d,
		     const struct vpa_anon_opts *to, struct vpa_err *err)
{
	struct set_key ks[4];
	size_t n = 0;
	const struct set_key all[4] = {{"vectors", set->vectors, set->vectors_at},
				       {"audio", set->audio, set->audio_at},
				       {"ids", set->ids, set->ids_at},
				       {"utt2spk", set->utt2spk, set->utt2spk_at}};
	for (int i = 0; i < 4; i++)
		if (all[i].at.line)
			ks[n++] = all[i];
	qsort(ks, n, sizeof(ks[0]), cmp_mark);
	const char *au = set->audio;
	struct vpa_loc l3 = vpa_mark_loc(ctx->file, set_at);
	if (!au && !set->vectors)
		return vpa_fail(err, VPA_EINPUT, &l3, "slice of %lld s: set '%s' needs `vectors` or `audio`",
				d, name);
	if (au && n > 1) {
		/* the first key written other than `audio`, blamed at the key */
		size_t q = strcmp(ks[0].name, "audio") ? 0 : 1;
		struct vpa_loc l4 = vpa_mark_key_loc(ctx->file, ks[q].at);
		return vpa_fail(err, VPA_EINPUT, &l4,
				"`%s` cannot go with `audio` (speakers come from the data "
				"directory)", ks[q].name);
	}
	if (au && !to->import.extractor_at.line)
		return vpa_fail(err, VPA_EINPUT, &l3,
				"slice of %lld s: set '%s' is audio: the target needs an "
				"`import.extractor`", d, name);
	for (size_t q = 0; q < n; q++) {
		int rc = vpa_check_path_at(ctx, ks[q].value, ks[q].at,
					   ks[q].value == au ? VPA_PATH_DIR : VPA_PATH_FILE, err);
		if (rc)
			return rc;
	}
	if (au) { /* the recordings at their headers, at the extractor's rate */
		double rate;
		if (vpa_anon_onnx_rate(ctx->file, &to->import.extractor, &rate, err))
			return err->status;
		char *p = vpa_path_join(ctx->dir, au);
		int rc = vpa_datadir_check_audio(p, rate, err);
		free(p);
		if (rc)
			return rc;
	}
	return 0;
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, const void *target_opts,
		    struct vpa_err *err)
{
	const struct slicing_opts *o = opts;
	const struct vpa_anon_opts *to = target_opts;
	unsigned m = vpa_linkage_attackers(&o->attackers);
	int rc = vpa_linkage_check_sets(ctx, &o->attackers, o->attackers_at, to, err);
	if (rc)
		return rc;
	int import = to->source && !strcmp(to->source, "import");
	/* written or not; errors about the key blame the key */
	int du = o->durations_at.line != 0, sl = o->slices_at.line != 0;
	struct vpa_loc loc = vpa_mark_loc(ctx->file, ctx->self);
	if (!import) {
		if (sl) {
			loc = vpa_mark_key_loc(ctx->file, o->slices_at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`slices` is for imported targets; a simulated target is cut with "
					"`durations: [1, 2, 4, 8]`");
		}
		if (!du)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"slicing a simulated target needs `durations` (e.g. [1, 2, 4, 8])");
		/* validation has checked that each item is a value; only a plain
		   (unquoted) one is a number */
		for (size_t i = 0; i < o->durations.n; i++) {
			const char *v = o->durations.v[i];
			char *end = NULL;
			errno = 0;
			long long x = o->durations.plain[i] ? strtoll(v, &end, 10) : 0;
			struct vpa_loc l2 = vpa_mark_loc(ctx->file, o->durations.marks[i]);
			if (!o->durations.plain[i] || !end || *end || end == v || errno || x < 1 ||
			    x > 3600)
				return vpa_fail(err, VPA_EINPUT, &l2,
						"a duration must be a whole number of seconds in [1, 3600], "
						"got '%s'", v);
			for (size_t j = 0; j < i; j++)
				if (strtoll(o->durations.v[j], NULL, 10) == x)
					return vpa_fail(err, VPA_EINPUT, &l2, "duration %lld is listed twice",
							x);
		}
		return 0;
	}
	if (du) {
		loc = vpa_mark_key_loc(ctx->file, o->durations_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"an imported target cannot be cut by vpaudit: give the embeddings of the "
				"cut audio with `slices: [{duration: 2, trial: {...}, trial_anon: {...}}]`");
	}
	if (!sl)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"slicing an imported target needs `slices` (the trial embeddings of the "
				"audio cut to each duration)");
	for (size_t i = 0; i < o->slices.n; i++) {
		const struct slicing_slice_opts *s =
			VPA_OPTLIST_AT(struct slicing_slice_opts, o->slices, i);
		struct vpa_loc l2 = vpa_mark_loc(ctx->file, o->slices.marks[i]);
		long long d = s->duration;
		for (size_t j = 0; j < i; j++)
			if (VPA_OPTLIST_AT(struct slicing_slice_opts, o->slices, j)->duration == d)
				return vpa_fail(err, VPA_EINPUT, &l2, "duration %lld is listed twice", d);
		if ((m & 1u) && !s->trial_at.line)
			return vpa_fail(err, VPA_EINPUT, &l2,
					"slice of %lld s: the baseline attacker needs `trial`", d);
		if ((m & ~1u) && !s->trial_anon_at.line)
			return vpa_fail(err, VPA_EINPUT, &l2,
					"slice of %lld s: attackers other than the baseline need "
					"`trial_anon`", d);
		/* the two sets in the order written */
		int anon_first = s->trial_at.line && s->trial_anon_at.line &&
				 (s->trial_anon_at.line < s->trial_at.line ||
				  (s->trial_anon_at.line == s->trial_at.line &&
				   s->trial_anon_at.col < s->trial_at.col));
		for (int h = 0; h < 2; h++) {
			int anon = h ^ anon_first;
			struct vpa_mark at = anon ? s->trial_anon_at : s->trial_at;
			if (!at.line)
				continue;
			if ((rc = check_set(ctx, anon ? "trial_anon" : "trial",
					    anon ? &s->trial_anon : &s->trial, at, d, to, err)))
				return rc;
		}
	}
	return 0;
}

/* An imported sliced set, rows in the order of the target's trial set. */
static int import_slice(struct vpa_run_ctx *ctx, const struct vpa_anon_target *a,
			const struct slicing_set_opts *m, const char *role, long long dur,
			const struct vpa_embset *trial, struct vpa_embset *out, struct vpa_err *err)
{
	char *p[3] = {NULL};
	const char *k[3] = {m->vectors, m->ids, m->utt2spk};
	struct vpa_embset raw;
	int rc;
	vpa_embset_init(&raw);
	const char *au = m->audio;
	if (au) { /* embedded with the target's extractor */
		if (!a->extractor)
			return vpa_fail(err, VPA_EINPUT, NULL, "slice of %lld s: set '%s' is audio and "
					"the target has no extractor", dur, role);
		char *dir = vpa_path_join(ctx->dir, au);
		struct vpa_embed_opts o = a->extractor_opts;
		o.threads = ctx->threads;
		rc = vpa_embset_from_audio_with(dir, a->extractor, &o, &raw, err);
		free(dir);
	} else {
		for (int i = 0; i < 3; i++) {
			p[i] = k[i] ? vpa_path_join(ctx->dir, k[i]) : NULL;
		}
		struct vpa_embset_src src = {p[0], p[1], p[2], NULL, NULL, 0};
		rc = vpa_embset_import(&src, &raw, err);
		for (int i = 0; i < 3; i++)
			free(p[i]);
	}
	if (rc)
		goto out;
	if (raw.d != trial->d) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "dimension mismatch: slice of %lld s, set '%s' has dimension %zu, "
			      "'trial' has %zu", dur, role, raw.d, trial->d);
		goto out;
	}
	size_t *idx = xmalloc(xmul(trial->n ? trial->n : 1, sizeof(size_t)));
	for (size_t i = 0; i < trial->n; i++) {
		long r = vpa_embset_find_utt(&raw, trial->utt[i]);
		if (r < 0) {
			free(idx);
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "slice of %lld s: set '%s' has no embedding for trial utterance '%s'",
				      dur, role, trial->utt[i]);
			goto out;
		}
		if (strcmp(raw.spk_id[raw.spk[r]], trial->spk_id[trial->spk[i]])) {
			free(idx);
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "slice of %lld s: set '%s' gives utterance '%s' to speaker '%s', "
				      "'trial' to '%s'", dur, role, trial->utt[i], raw.spk_id[raw.spk[r]],
				      trial->spk_id[trial->spk[i]]);
			goto out;
		}
		idx[i] = (size_t)r;
	}
	vpa_embset_subset_rows(&raw, idx, trial->n, out);
	free(idx);
out:
	vpa_embset_release(&raw);
	return rc;
}

static struct vpa_json *lines_fig(const char *id, const char *suffix, const char *title,
				  const char *ylabel)
{
	struct vpa_json *f = vpa_json_obj();
	char fid[300];
	snprintf(fid, sizeof(fid), "%s-%s", id, suffix);
	vpa_json_set_str(f, "type", "lines");
	vpa_json_set_str(f, "id", fid);
	vpa_json_set_str(f, "title", title);
	vpa_json_set_str(f, "xlabel", "trial utterance duration (s)");
	vpa_json_set_str(f, "ylabel", ylabel);
	vpa_json_set(f, "logx", vpa_json_bool(0));
	vpa_json_set(f, "series", vpa_json_arr());
	return f;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

static int run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
	       const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct slicing_opts *so = opts;
	const struct vpa_anon_target *a = t->data;
	unsigned m = vpa_linkage_attackers(&so->attackers);
	const struct vpa_strs *du = &so->durations;
	const struct vpa_optlist *sl = &so->slices;
	struct vpa_backend *b_orig = NULL, *b_anon = NULL;
	struct vpa_eval_opts o;
	int rc = 0;
	vpa_eval_opts_init(&o);
	o.m.omega = so->omega;
	o.m.bins = (size_t)so->bins;
	o.m.p_target = so->p_target;
	o.seed = ctx->seed;

	/* the durations, ascending (import: each a slice's) */
	size_t nd = a->sim ? du->n : sl->n;
	if (!nd)
		return vpa_fail(err, VPA_EINPUT, NULL, a->sim ? "slicing needs `durations`"
							     : "slicing needs `slices`");
	long long *dur = xmalloc(xmul(nd, sizeof(long long)));
	for (size_t i = 0; i < nd; i++)
		dur[i] = a->sim ? strtoll(du->v[i], NULL, 10)
				: VPA_OPTLIST_AT(struct slicing_slice_opts, *sl, i)->duration;
	qsort(dur, nd, sizeof(long long), cmp_ll);

	for (int k = 0; k < VPA_ATK_N; k++) {
		if (!(m & (1u << k)))
			continue;
		struct vpa_attacker_sets as;
		vpa_linkage_attacker_sets(a, k, &as);
		if (!as.enroll->n || !as.test->n) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "attacker '%s' needs the set '%s'",
				      vpa_attacker_names[k], !as.enroll->n ? as.enroll_name : as.test_name);
			goto out;
		}
	}
	if (a->sim && !a->trial_pseudo.n_pseudo) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "slicing: the simulated target has no pseudo-speakers");
		goto out;
	}
	if (!(b_orig = vpa_linkage_backend(&a->train, &a->backend, "original training data", err))) {
		rc = err->status;
		goto out;
	}
	if (m & ((1u << VPA_ATK_SEMI) | (1u << VPA_ATK_INFORMED))) {
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

	char title[512];
	snprintf(title, sizeof(title), "Linkability against trial duration (%s on %s)", id, t->id);
	struct vpa_json *fl = lines_fig(id, "linkability", title, "linkability D<->sys");
	snprintf(title, sizeof(title), "EER against trial duration (%s on %s)", id, t->id);
	struct vpa_json *fe = lines_fig(id, "eer", title, "EER");
	struct vpa_json *ser_l[VPA_ATK_N] = {NULL}, *ser_e[VPA_ATK_N] = {NULL};
	for (int k = 0; k < VPA_ATK_N; k++) {
		if (!(m & (1u << k)))
			continue;
		ser_l[k] = vpa_json_obj();
		ser_e[k] = vpa_json_obj();
		vpa_json_set_str(ser_l[k], "name", vpa_attacker_names[k]);
		vpa_json_set_str(ser_e[k], "name", vpa_attacker_names[k]);
		vpa_json_set(ser_l[k], "x", vpa_json_arr());
		vpa_json_set(ser_l[k], "y", vpa_json_arr());
		vpa_json_set(ser_e[k], "x", vpa_json_arr());
		vpa_json_set(ser_e[k], "y", vpa_json_arr());
		vpa_json_push(vpa_json_get(fl, "series"), ser_l[k]);
		vpa_json_push(vpa_json_get(fe, "series"), ser_e[k]);
	}
	/* records only (no per-record figures: attackers x durations would be many) */
	struct vpa_attack_out rec_out = {out->records, NULL};
	for (size_t di = 0; di < nd && !rc; di++) {
		struct vpa_embset tr, tra;
		vpa_embset_init(&tr);
		vpa_embset_init(&tra);
		if (a->sim) {
			vpa_sim_remake(a->sim, &a->trial, (double)dur[di], &tr);
			vpa_sim_anon_set(a->sim, &a->trial, &a->trial_pseudo, (double)dur[di], "user",
					 &tra);
		} else {
			const struct slicing_slice_opts *s = NULL;
			for (size_t i = 0; i < sl->n; i++)
				if (VPA_OPTLIST_AT(struct slicing_slice_opts, *sl, i)->duration == dur[di])
					s = VPA_OPTLIST_AT(struct slicing_slice_opts, *sl, i);
			const struct slicing_set_opts *mt = s->trial_at.line ? &s->trial : NULL;
			const struct slicing_set_opts *ma = s->trial_anon_at.line ? &s->trial_anon : NULL;
			if (mt)
				rc = import_slice(ctx, a, mt, "trial", dur[di], &a->trial, &tr, err);
			if (!rc && ma)
				rc = import_slice(ctx, a, ma, "trial_anon", dur[di], &a->trial, &tra, err);
		}
		for (int k = 0; k < VPA_ATK_N && !rc; k++) {
			if (!(m & (1u << k)))
				continue;
			struct vpa_attacker_sets as;
			vpa_linkage_attacker_sets(a, k, &as);
			const struct vpa_backend *B = as.anon_backend ? b_anon : b_orig;
			const struct vpa_embset *e = as.enroll, *te = k == VPA_ATK_BASELINE ? &tr : &tra;
			double *S = xmalloc(xmul(xmul(e->n_spk ? e->n_spk : 1, te->n ? te->n : 1),
						 sizeof(double)));
			if ((rc = vpa_backend_score_sets(B, e, te, S, err))) {
				free(S);
				break;
			}
			struct vpa_trials trs;
			vpa_linkage_make_trials(&a->trials, S, te->n, e, te, &trs);
			free(S);
			if (!trs.n_tar || !trs.n_non) {
				rc = vpa_fail(err, VPA_EINPUT, NULL, "the trials have no %s trial",
					      trs.n_tar ? "non-target" : "target");
				vpa_trials_release(&trs);
				break;
			}
			size_t before = out->records->n;
			o.chance_expected = k == VPA_ATK_IGNORANT;
			rc = vpa_record_from_scores(ctx, id, vpa_attacker_names[k], (long)dur[di], &trs, &o,
						    &rec_out, NULL, err);
			vpa_trials_release(&trs);
			if (rc)
				break;
			const struct vpa_json *mj = vpa_json_get(out->records->items[before], "metrics");
			vpa_json_push(vpa_json_get(ser_l[k], "x"), vpa_json_num((double)dur[di]));
			vpa_json_push(vpa_json_get(ser_l[k], "y"),
				      vpa_json_num(vpa_json_get_num(mj, "linkability", NAN)));
			vpa_json_push(vpa_json_get(ser_e[k], "x"), vpa_json_num((double)dur[di]));
			vpa_json_push(vpa_json_get(ser_e[k], "y"),
				      vpa_json_num(vpa_json_get_num(mj, "eer", NAN)));
		}
		vpa_embset_release(&tr);
		vpa_embset_release(&tra);
	}
	if (!rc) {
		vpa_json_push(out->figures, fl);
		vpa_json_push(out->figures, fe);
	} else {
		vpa_json_free(fl);
		vpa_json_free(fe);
	}
out:
	free(dur);
	vpa_backend_free(b_orig);
	vpa_backend_free(b_anon);
	return rc;
}

static char *title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: linkage against trial utterance duration ('%s')", id, target_id);
	return b.data;
}

const struct vpa_attack_kind vpa_attack_slicing = {
	.name = "slicing",
	.schema = &schema,
	.target_kinds = target_kinds,
	.metrics = metrics,
	.has_layers = 1,
	.doc = "Linkage against the duration of the trial utterances, original and anonymised "
	       "(COMPRISE D2.3 4.2.6, Fig. 15): the trial utterances are cut to each duration "
	       "(enrolment stays whole) and every attacker of `linkage` scores them with its "
	       "enrolment and back-end.  Simulated targets are cut through the duration model "
	       "(`durations`: each utterance re-drawn at min(duration, its own) seconds with the "
	       "same draws, so only the session noise grows); imported targets give the "
	       "embeddings of the cut audio (`slices`).  One record per attacker (sub) and "
	       "duration with every metric of `evaluate`: the record's `layer` is the DURATION "
	       "in seconds (a gate with `layer: 2` checks 2 s, without it the worst duration).  "
	       "Two line figures: linkability and EER against duration, one series per attacker.",
	.validate = validate,
	.subs = subs,
	.run = run,
	.title = title,
};
