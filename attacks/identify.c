/*
 * attacks/identify.c - attack kind `identification`: the large-population
 * study of COMPRISE D2.3 4.2.5.  Every trial utterance (probe) is scored
 * against every speaker of a population made of the enrolment speakers and
 * extra population speakers, by each attacker of the linkage attack (same
 * enrolment / test sets and back-ends: vpa_linkage_attacker_sets).  The
 * population grows by doubling from the number of enrolment speakers up to
 * all speakers; each size is drawn `repeats` times (the enrolment speakers
 * always, the extra speakers at random without replacement, the same draws
 * for every attacker).  Per (attacker, size): open-set ROCCH-EER, Cllr_min
 * and linkability of all probe x population trials, closed-set rank of the
 * true speaker (vpa_rank), normalised rank, chance rank (N+1)/2, top-1/5/10/k
 * precision; mean, min, max and standard deviation over the repeats.
 *
 * This file holds the kind (keys, validation, population sizes and draws,
 * jobs, records, figures, run, title); the engine it evaluates each drawn
 * population with (vpa_ident_prepare, vpa_ident_subset, declared in
 * targets/anon.h) is attacks/ident_rank.c.
 */
#include "attacks/attacks.h"
#include "base/dist.h"
#include "attacks/linkage_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the attack kind -------------------------------------------------------- */

#define INF INFINITY
/* typed options (config/schema.h), filled by validation */
struct identify_opts {
	struct vpa_strs attackers;
	long long repeats;
	long long top_k;
	double omega;
	long long bins;
	struct vpa_mark attackers_at, repeats_at, top_k_at, omega_at, bins_at;
};

static const struct vpa_key keys[] = {
	{"attackers", VPA_K_ENUMLIST, 0, "[baseline, ignorant, lazy_informed, semi_informed, informed]",
	 -INF, INF, VPA_KF_NONEMPTY, "baseline|ignorant|lazy_informed|semi_informed|informed", NULL,
	 "[baseline, ignorant]",
	 "the attackers of the `linkage` attack (same enrolment, test data and back-ends); the "
	 "population speakers are enrolled as each attacker enrols (original, anonymised by the "
	 "attacker, or with their own pseudo-speakers)",
	 VPA_AT(struct identify_opts, attackers), VPA_MARK(struct identify_opts, attackers_at)},
	{"repeats", VPA_K_INT, 0, "5", 1, 1000, 0, NULL, NULL, "10",
	 "random populations drawn per size (the smallest and the full population are drawn once: "
	 "they have no randomness)",
	 VPA_AT(struct identify_opts, repeats), VPA_MARK(struct identify_opts, repeats_at)},
	{"top_k", VPA_K_INT, 0, "20", 1, 1000000, 0, NULL, NULL, "20",
	 "k of the top-k precision `topk` (top1, top5 and top10 are always reported)",
	 VPA_AT(struct identify_opts, top_k), VPA_MARK(struct identify_opts, top_k_at)},
	{"omega", VPA_K_NUM, 0, "1", 0, INF, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "linkability prior ratio of mated to non-mated pairs",
	 VPA_AT(struct identify_opts, omega), VPA_MARK(struct identify_opts, omega_at)},
	{"bins", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "50",
	 "linkability histogram bins; 0 = min(floor(n_target/10), 100)",
	 VPA_AT(struct identify_opts, bins), VPA_MARK(struct identify_opts, bins_at)},
	{NULL},
};
static const struct vpa_schema schema = {"attack identification", keys, sizeof(struct identify_opts)};

static const char *const target_kinds[] = {"anonymised_speech", NULL};
static const char *const metrics[] = {
	"eer", "eer_min", "eer_max", "eer_std", "cllr_min", "linkability", "linkability_min",
	"linkability_max", "linkability_std", "linkability_hist", "mean_rank", "mean_rank_min",
	"mean_rank_max",
	"chance_rank", "mean_norm_rank", "mean_norm_rank_min", "mean_norm_rank_max",
	"chance_norm_rank", "top1", "top5", "top10", "topk", "topk_min", "topk_max", "population",
	"repeats", "n_target", "n_nontarget", NULL,
};

static size_t subs(const void *opts, const void *target_opts, const char ***names)
{
	(void)target_opts;
	unsigned m = vpa_linkage_attackers(&((const struct identify_opts *)opts)->attackers);
	size_t n = 0;
	*names = xcalloc(VPA_ATK_N, sizeof(**names));
	for (int k = 0; k < VPA_ATK_N; k++)
		if (m & (1u << k))
			(*names)[n++] = vpa_attacker_names[k];
	return n;
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, const void *target_opts,
		    struct vpa_err *err)
{
	const struct identify_opts *o = opts;
	const struct vpa_anon_opts *to = target_opts;
	unsigned m = vpa_linkage_attackers(&o->attackers);
	int rc = vpa_linkage_check_sets(ctx, &o->attackers, o->attackers_at, to, err);
	if (rc)
		return rc;
	struct vpa_loc loc = vpa_mark_loc(ctx->file, ctx->self);
	if (to->source && !strcmp(to->source, "import")) {
		const struct vpa_anon_import_opts *imp = &to->import;
		for (int k = 0; k < VPA_ATK_N; k++) {
			if (!(m & (1u << k)))
				continue;
			static const char *const pn[VPA_ATK_N] = {"population", "population",
								  "population_anon", "population_anon",
								  "population_informed"};
			/* the import set pn[k], written or not */
			const struct vpa_mark pm[VPA_ATK_N] = {
				imp->population_at, imp->population_at, imp->population_anon_at,
				imp->population_anon_at, imp->population_informed_at};
			if (!pm[k].line)
				return vpa_fail(err, VPA_EINPUT, &loc,
						"identification by attacker '%s' needs the imported set '%s' "
						"(extra enrolment speakers: target import: %s: {vectors: ...})",
						vpa_attacker_names[k], pn[k], pn[k]);
		}
		return 0;
	}
	/* absent: the table's default 0 */
	if (to->simulate.population <= 0)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"identification needs extra population speakers: set the target's "
				"`simulate: {population: N}` (e.g. 2000)");
	return 0;
}

/* Population sizes: n_e, 2 n_e, 4 n_e, ... below n_all, then n_all. */
static size_t pop_sizes(size_t n_e, size_t n_all, size_t **out)
{
	size_t n = 0, cap = 8;
	*out = xmalloc(cap * sizeof(size_t));
	for (size_t s = n_e; s < n_all; s *= 2) {
		if (n == cap)
			*out = xrealloc(*out, (cap *= 2) * sizeof(size_t));
		(*out)[n++] = s;
	}
	if (n == cap)
		*out = xrealloc(*out, (cap + 1) * sizeof(size_t));
	(*out)[n++] = n_all;
	return n;
}

/* Rows of population draw (size index z, repeat r): all enrolment rows, then
 * size - n_e extra rows drawn without replacement (partial Fisher-Yates on a
 * stream named after the attack, the size and the repeat). */
static void draw_rows(uint64_t seed, const char *id, size_t n_e, size_t n_all, size_t size,
		      size_t rep, uint32_t *rows /* OUT (size) */)
{
	for (size_t j = 0; j < n_e; j++)
		rows[j] = (uint32_t)j;
	size_t np = n_all - n_e, want = size - n_e;
	if (!want)
		return;
	uint32_t *perm = xmalloc(xmul(np, sizeof(uint32_t)));
	for (size_t j = 0; j < np; j++)
		perm[j] = (uint32_t)(n_e + j);
	struct vpa_rng r;
	char name[300];
	snprintf(name, sizeof(name), "ident/%s/%zu/%zu", id, size, rep);
	vpa_rng_split(&r, seed, name);
	for (size_t j = 0; j < want; j++) {
		size_t o = j + (size_t)vpa_rng_below(&r, np - j);
		uint32_t tmp = perm[j];
		perm[j] = perm[o];
		perm[o] = tmp;
		rows[n_e + j] = perm[j];
	}
	free(perm);
}

/* The identification blocks of one attacker: job i evaluates population
 * size js[i], repeat jr[i] (a job of vpa_dist_jobs; its vpa_ident_eval is
 * flat and travels as it is). */
struct job {
	const struct vpa_ident_matrix *m;
	uint64_t seed;
	const char *id, *name;
	size_t n_e, n_all, k, bins;
	double omega;
	const size_t *js, *jr; /* (n_jobs) size and repeat of each job */
	size_t n_jobs;
	struct vpa_ident_eval *res; /* (n_jobs) */
};

static int block_job(void *arg, size_t i, struct vpa_err *e)
{
	struct job *j = arg;
	uint32_t *rows = xmalloc(xmul(j->n_all, sizeof(uint32_t)));
	struct vpa_err e2;
	vpa_err_init(&e2);
	draw_rows(j->seed, j->id, j->n_e, j->n_all, j->js[i], j->jr[i], rows);
	/* its scratch per job: O(rows + probes), small against the block's cells */
	int rc = vpa_ident_subset(j->m, rows, j->js[i], j->k, j->omega, j->bins, &j->res[i], &e2);
	free(rows);
	if (rc)
		return vpa_fail(e, rc, NULL, "attacker '%s', population %zu: %s", j->name, j->js[i],
				e2.msg);
	return 0;
}

static void block_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct job *j = arg;
	vpa_buf_add(b, &j->res[i], sizeof(j->res[i]));
}

static int block_unpack(void *arg, size_t i, const unsigned char *q, size_t len)
{
	struct job *j = arg;
	if (len != sizeof(j->res[i]))
		return -1;
	memcpy(&j->res[i], q, len);
	return 0;
}

/* mean, min, max, population std of x[0..n) into o under NAME, NAME_min, ... */
/* The identification record's share of vpa_metrics_reliability: the paths it has. */
static void ident_unrel(void *ctx, const char *path, const char *reason)
{
	static const char *const have[] = {"eer", "cllr_min", "linkability", "linkability_hist",
					   NULL};
	for (int i = 0; have[i]; i++)
		if (!strcmp(path, have[i]))
			vpa_json_set_str(ctx, path, reason);
}

/*
 * linkability_hist (mean over the repeats), linkability_reliable (every
 * repeat reliable) and the record's "unreliable" map, from the repeats e[0..R)
 * judged as one score set each (the repeats share their counts).
 */
static void link_reliability(struct vpa_json *rec, struct vpa_json *mj,
			     const struct vpa_ident_eval *e, size_t R)
{
	struct vpa_json *un = vpa_json_obj();
	double hs = 0;
	int reliable = 1;
	for (size_t r = 0; r < R; r++) {
		struct vpa_metrics m;
		memset(&m, 0, sizeof m);
		m.n_tar = e[r].n_target;
		m.n_non = e[r].n_nontarget;
		m.eer = e[r].eer;
		m.cllr_min = e[r].cllr_min;
		m.eer_sweep = m.cllr = m.min_dcf = m.zebra.dece = m.zebra.log10_lr_worst = 0;
		m.linkability = e[r].linkability;
		m.linkability_defined = isfinite(e[r].linkability);
		m.linkability_hist = e[r].linkability_hist;
		m.linkability_bins = e[r].link_bins;
		m.linkability_bins_mated = e[r].link_bins_mated;
		vpa_metrics_reliability(&m, NULL, r == 0 ? ident_unrel : NULL, un);
		reliable &= m.linkability_reliable;
		if (!m.linkability_reliable && !vpa_json_get(un, "linkability"))
			vpa_json_set_str(un, "linkability", m.linkability_why);
		hs += e[r].linkability_hist;
	}
	vpa_json_set_num(mj, "linkability_hist", hs / (double)R); /* NAN -> null */
	vpa_json_set(mj, "linkability_reliable", vpa_json_bool(reliable));
	vpa_json_set(rec, "unreliable", un);
}

static void put_stats(struct vpa_json *o, const char *name, const double *x, size_t n, int std)
{
	double s = 0, lo = INFINITY, hi = -INFINITY, ss = 0;
	int undef = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			undef = 1;
		s += x[i];
		lo = fmin(lo, x[i]);
		hi = fmax(hi, x[i]);
	}
	double mean = s / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	char k[64];
	vpa_json_set_num(o, name, undef ? NAN : mean); /* NAN -> null */
	snprintf(k, sizeof(k), "%s_min", name);
	vpa_json_set_num(o, k, undef ? NAN : lo);
	snprintf(k, sizeof(k), "%s_max", name);
	vpa_json_set_num(o, k, undef ? NAN : hi);
	if (std) {
		snprintf(k, sizeof(k), "%s_std", name);
		vpa_json_set_num(o, k, undef ? NAN : sqrt(ss / (double)n));
	}
}

static struct vpa_json *series(const char *name, const double *x, const double *y, size_t n)
{
	struct vpa_json *s = vpa_json_obj(), *xs = vpa_json_arr(), *ys = vpa_json_arr();
	for (size_t i = 0; i < n; i++) {
		vpa_json_push(xs, vpa_json_num(x[i]));
		vpa_json_push(ys, vpa_json_num(y[i])); /* NAN -> null: a gap */
	}
	vpa_json_set_str(s, "name", name);
	vpa_json_set(s, "x", xs);
	vpa_json_set(s, "y", ys);
	return s;
}

static struct vpa_json *lines_fig(const char *id, const char *sub, const char *suffix,
				  const char *title, const char *ylabel)
{
	struct vpa_json *f = vpa_json_obj();
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s-%s-%s", id, sub, suffix);
	vpa_json_set_str(f, "type", "lines");
	vpa_json_set_str(f, "id", vpa_buf_str(&b));
	vpa_json_set_str(f, "title", title);
	vpa_json_set_str(f, "xlabel", "population size (speakers)");
	vpa_json_set_str(f, "ylabel", ylabel);
	vpa_json_set(f, "logx", vpa_json_bool(1));
	vpa_json_set(f, "series", vpa_json_arr());
	vpa_buf_release(&b);
	return f;
}

/* The population rows of attacker k: enrolment speakers' means then the extra speakers'. */
static int score_population(const struct vpa_backend *B, const struct vpa_attacker_sets *as,
			    float *S /* OUT (n_all, test n) */, struct vpa_err *err)
{
	const struct vpa_embset *sets[2] = {as->enroll, as->pop};
	const char *names[2] = {as->enroll_name, as->pop_name};
	size_t d = vpa_backend_in_dim(B), nt = as->test->n, row = 0;
	if (as->test->d != d)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"dimension mismatch: set '%s' has dimension %zu, the back-end expects %zu",
				as->test_name, as->test->d, d);
	for (int i = 0; i < 2; i++) {
		const struct vpa_embset *e = sets[i];
		if (!e->n_spk)
			continue;
		if (e->d != d)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"dimension mismatch: set '%s' has dimension %zu, the back-end "
					"expects %zu", names[i], e->d, d);
		double *means = xmalloc(xmul(xmul(e->n_spk, d), sizeof(double)));
		uint32_t *cnt = xmalloc(xmul(e->n_spk, sizeof(uint32_t)));
		vpa_embset_spk_means(e, means, cnt);
		int rc = 0;
		for (size_t s = 0; s < e->n_spk && !rc; s++)
			if (!cnt[s])
				rc = vpa_fail(err, VPA_EINPUT, NULL, "set '%s': speaker '%s' has no utterance",
					      names[i], e->spk_id[s]);
		if (!rc)
			vpa_backend_score_f(B, means, cnt, e->n_spk, as->test->x, nt, S + row * nt);
		free(means);
		free(cnt);
		if (rc)
			return rc;
		row += e->n_spk;
	}
	return 0;
}

static int run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
	       const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct identify_opts *io = opts;
	const struct vpa_anon_target *a = t->data;
	unsigned m = vpa_linkage_attackers(&io->attackers);
	size_t repeats = (size_t)io->repeats;
	size_t k = (size_t)io->top_k;
	double omega = io->omega;
	size_t bins = (size_t)io->bins;
	struct vpa_backend *b_orig = NULL, *b_anon = NULL;
	size_t *sizes = NULL, *js = NULL, *jr = NULL, n_jobs = 0;
	uint32_t *truth = NULL;
	float *S = NULL;
	struct vpa_ident_eval *res = NULL;
	int rc = 0;

	size_t n_e = a->enroll.n_spk, n_t = a->trial.n;
	for (int k2 = 0; k2 < VPA_ATK_N; k2++) {
		if (!(m & (1u << k2)))
			continue;
		struct vpa_attacker_sets as;
		vpa_linkage_attacker_sets(a, k2, &as);
		const char *miss = !as.enroll->n ? as.enroll_name : !as.test->n ? as.test_name
							       : !as.pop->n ? as.pop_name : NULL;
		if (miss)
			return vpa_fail(err, VPA_EINPUT, NULL, "attacker '%s' needs the set '%s'",
					vpa_attacker_names[k2], miss);
		if (as.enroll->n_spk != n_e || as.pop->n_spk != a->pop.n_spk)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"attacker '%s': sets '%s' and '%s' do not have the speakers of "
					"'enroll' and 'population'", vpa_attacker_names[k2],
					as.enroll_name, as.pop_name);
	}
	/* the true speaker of each probe; population speakers distinct from enrolment ones */
	truth = xmalloc(xmul(n_t ? n_t : 1, sizeof(uint32_t)));
	for (size_t i = 0; i < n_t; i++) {
		const char *spk = a->trial.spk_id[a->trial.spk[i]];
		long e = vpa_embset_find_spk(&a->enroll, spk);
		if (e < 0) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "trial utterance '%s': its speaker '%s' is not enrolled (closed-set "
				      "identification needs every trial speaker in the population)",
				      a->trial.utt[i], spk);
			goto out;
		}
		truth[i] = (uint32_t)e;
	}
	for (size_t s = 0; s < a->pop.n_spk; s++)
		if (vpa_embset_find_spk(&a->enroll, a->pop.spk_id[s]) >= 0) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "population speaker '%s' is also an enrolment speaker",
				      a->pop.spk_id[s]);
			goto out;
		}
	size_t n_all = n_e + a->pop.n_spk;
	size_t n_sizes = pop_sizes(n_e, n_all, &sizes);
	js = xmalloc(xmul(xmul(n_sizes, repeats), sizeof(size_t)));
	jr = xmalloc(xmul(xmul(n_sizes, repeats), sizeof(size_t)));
	for (size_t z = 0; z < n_sizes; z++) {
		size_t R = (sizes[z] == n_e || sizes[z] == n_all) ? 1 : repeats;
		for (size_t r = 0; r < R; r++) {
			js[n_jobs] = sizes[z];
			jr[n_jobs++] = r;
		}
	}
	res = xcalloc(n_jobs, sizeof(*res));

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
	S = xmalloc(xmul(xmul(n_all, n_t), sizeof(float)));
	double *xs = xmalloc(xmul(n_sizes, sizeof(double)));
	double *ys = xmalloc(xmul(n_sizes, sizeof(double)));
	for (int k2 = 0; k2 < VPA_ATK_N && !rc; k2++) {
		if (!(m & (1u << k2)))
			continue;
		const char *name = vpa_attacker_names[k2];
		struct vpa_attacker_sets as;
		vpa_linkage_attacker_sets(a, k2, &as);
		if ((rc = score_population(as.anon_backend ? b_anon : b_orig, &as, S, err)))
			break;
		struct vpa_ident_matrix im;
		if ((rc = vpa_ident_prepare_mt(S, n_all, n_t, truth, ctx->threads, &im, err)))
			break;
		struct job j = {&im, ctx->seed, id, name, n_e, n_all, k, bins, omega, js, jr, n_jobs,
				res};
		rc = vpa_dist_jobs(n_jobs, ctx->threads, block_job, block_pack, block_unpack, &j,
				   "identification", NULL, err);
		vpa_ident_matrix_release(&im);
		if (rc)
			break;
		/* one record per size; figures over sizes */
		char title[512];
		snprintf(title, sizeof(title), "EER and linkability against population size: %s (%s)",
			 name, id);
		struct vpa_json *f1 = lines_fig(id, name, "eer", title, "EER / linkability D<->sys");
		snprintf(title, sizeof(title),
			 "Normalised rank and top-%zu precision against population size: %s (%s)", k,
			 name, id);
		struct vpa_json *f2 = lines_fig(id, name, "rank", title,
						"normalised rank / top-k precision");
		double st[3][6][64]; /* [mean,min,max][metric][size] (n_sizes <= 64) */
		size_t nz = n_sizes < 64 ? n_sizes : 64;
		if (n_sizes > 64)
			VPA_BUG("identification: %zu population sizes", n_sizes);
		size_t n_undef = 0; /* sizes with linkability undefined: one warning line for all */
		for (size_t z = 0, i0 = 0; z < nz; z++) {
			size_t R = 0;
			while (i0 + R < n_jobs && js[i0 + R] == sizes[z])
				R++;
			double v[6][1000];
			for (size_t r = 0; r < R; r++) {
				const struct vpa_ident_eval *e = &res[i0 + r];
				v[0][r] = e->eer;
				v[1][r] = e->linkability;
				v[2][r] = e->mean_rank;
				v[3][r] = e->mean_norm_rank;
				v[4][r] = e->topk;
				v[5][r] = e->cllr_min;
			}
			const struct vpa_ident_eval *e0 = &res[i0];
			struct vpa_json *rec = vpa_json_obj(), *mj = vpa_json_obj();
			vpa_json_set_str(rec, "attack", id);
			vpa_json_set_str(rec, "sub", name);
			vpa_json_set_num(rec, "layer", (double)sizes[z]);
			vpa_json_set(rec, "sweep", vpa_json_null());
			vpa_json_set_num(mj, "population", (double)sizes[z]);
			vpa_json_set_num(mj, "repeats", (double)R);
			vpa_json_set_num(mj, "n_target", (double)e0->n_target);
			vpa_json_set_num(mj, "n_nontarget", (double)e0->n_nontarget);
			put_stats(mj, "eer", v[0], R, 1);
			double cm = 0;
			for (size_t r = 0; r < R; r++)
				cm += v[5][r];
			vpa_json_set_num(mj, "cllr_min", cm / (double)R);
			put_stats(mj, "linkability", v[1], R, 1);
			link_reliability(rec, mj, &res[i0], R);
			put_stats(mj, "mean_rank", v[2], R, 0);
			vpa_json_set_num(mj, "chance_rank", e0->chance_rank);
			put_stats(mj, "mean_norm_rank", v[3], R, 0);
			vpa_json_set_num(mj, "chance_norm_rank", e0->chance_rank / (double)sizes[z]);
			double t1 = 0, t5 = 0, t10 = 0;
			for (size_t r = 0; r < R; r++) {
				t1 += res[i0 + r].top1;
				t5 += res[i0 + r].top5;
				t10 += res[i0 + r].top10;
			}
			vpa_json_set_num(mj, "top1", t1 / (double)R);
			vpa_json_set_num(mj, "top5", t5 / (double)R);
			vpa_json_set_num(mj, "top10", t10 / (double)R);
			put_stats(mj, "topk", v[4], R, 0);
			vpa_json_set_num(mj, "k", (double)k);
			vpa_json_set(rec, "metrics", mj);
			vpa_json_push(out->records, rec);
			for (int q = 0; q < 6; q++) {
				double s = 0, lo = INFINITY, hi = -INFINITY;
				for (size_t r = 0; r < R; r++) {
					s += v[q][r];
					lo = fmin(lo, v[q][r]);
					hi = fmax(hi, v[q][r]);
				}
				int undef = 0;
				for (size_t r = 0; r < R; r++)
					undef |= !isfinite(v[q][r]);
				st[0][q][z] = undef ? NAN : s / (double)R;
				st[1][q][z] = undef ? NAN : lo;
				st[2][q][z] = undef ? NAN : hi;
			}
			n_undef += isnan(e0->linkability);
			xs[z] = (double)sizes[z];
			i0 += R;
		}
		if (n_undef)
			vpa_ctx_warn(ctx, "%s.%s: fewer than 10 probes: linkability is undefined at %zu "
					  "population size%s", id, name, n_undef, n_undef == 1 ? "" : "s");
		static const char *const sn[3] = {"mean", "min", "max"};
		struct vpa_json *s1 = vpa_json_get(f1, "series"), *s2 = vpa_json_get(f2, "series");
		char lab[128];
		for (int q = 0; q < 3; q++) {
			snprintf(lab, sizeof(lab), "EER (%s)", sn[q]);
			vpa_json_push(s1, series(lab, xs, st[q][0], nz));
		}
		for (int q = 0; q < 3; q++) {
			snprintf(lab, sizeof(lab), "linkability (%s)", sn[q]);
			vpa_json_push(s1, series(lab, xs, st[q][1], nz));
		}
		for (int q = 0; q < 3; q++) {
			snprintf(lab, sizeof(lab), "normalised rank (%s)", sn[q]);
			vpa_json_push(s2, series(lab, xs, st[q][3], nz));
		}
		for (size_t z = 0; z < nz; z++)
			ys[z] = (xs[z] + 1) / (2 * xs[z]);
		vpa_json_push(s2, series("chance normalised rank (N+1)/2N", xs, ys, nz));
		for (int q = 0; q < 3; q++) {
			snprintf(lab, sizeof(lab), "top-%zu precision (%s)", k, sn[q]);
			vpa_json_push(s2, series(lab, xs, st[q][4], nz));
		}
		vpa_json_push(out->figures, f1);
		vpa_json_push(out->figures, f2);
	}
	free(xs);
	free(ys);
out:
	vpa_backend_free(b_orig);
	vpa_backend_free(b_anon);
	free(S);
	free(res);
	free(js);
	free(jr);
	free(sizes);
	free(truth);
	return rc;
}

static char *title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: speaker identification in growing populations ('%s')", id,
		       target_id);
	return b.data;
}

const struct vpa_attack_kind vpa_attack_identification = {
	.name = "identification",
	.schema = &schema,
	.target_kinds = target_kinds,
	.metrics = metrics,
	.has_layers = 1,
	.doc = "The large-population study of COMPRISE D2.3 4.2.5: every trial utterance is "
	       "scored (one GEMM block per attacker, the attackers and back-ends of `linkage`) "
	       "against a population of the enrolment speakers plus extra population speakers "
	       "(target `simulate: {population: N}` or `import: {population: ...}`), of every "
	       "gender.  Population sizes double from the number of enrolment speakers up to all "
	       "speakers; each size is drawn `repeats` times (the enrolment speakers always, the "
	       "extra ones at random, the same draws for every attacker).  One record per "
	       "attacker (sub) and population size: the record's `layer` is the POPULATION SIZE, "
	       "so a gate with `layer: 640` checks one size and without `layer` the worst size.  "
	       "Metrics (mean over the repeats, with `_min`, `_max` and for EER and linkability "
	       "`_std`, the population standard deviation): open-set `eer` (ROCCH), `cllr_min` "
	       "and `linkability` of all probe x population trials; closed-set `mean_rank` of the "
	       "true speaker (ties count half), `mean_norm_rank` = rank / N, `chance_rank` = "
	       "(N+1)/2, `chance_norm_rank`, `top1`, `top5`, `top10` and `topk` (k = `top_k`) "
	       "precision.  Two line figures per attacker against population size: EER and "
	       "linkability, normalised rank (with chance) and top-k precision, each as mean, "
	       "min and max over the repeats (COMPRISE Figs. 12-14).",
	.validate = validate,
	.subs = subs,
	.run = run,
	.title = title,
};
