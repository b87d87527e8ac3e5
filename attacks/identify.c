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
 * Cost: one GEMM block (vpa_backend_score_f, single precision) per attacker
 * for the whole population; each subset is then a selection of rows.  The
 * EER of a subset does not need its ~10^8 non-target scores sorted: PAV
 * (and so ROCCH-EER and Cllr_min) depend only on the order of the scores, so
 * the non-targets are counted per gap between consecutive distinct target
 * scores (each cell's gap is found once per attacker by binary search) and
 * the fit runs on n_t targets against at most 2 n_t + 1 weighted groups;
 * linkability (which depends on the values) and the ranks take one pass over
 * the subset's cells.
 */
#include "attacks/attacks.h"
#include "base/dist.h"
#include "attacks/linkage_int.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the score matrix ------------------------------------------------------ */

void vpa_ident_matrix_release(struct vpa_ident_matrix *m)
{
	free(m->tar);
	free(m->rep);
	free(m->bin);
	free(m->ttrue);
	free(m->rmin);
	free(m->rmax);
	free(m->has_tar);
	memset(m, 0, sizeof(*m));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* first index j with u[j] >= x */
static size_t lower_bound(const double *u, size_t n, double x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The gap bin of every cell of rows [r0, r1) (threads split the rows). */
struct prep_job {
	struct vpa_ident_matrix *m;
	const double *u;
	size_t nu, r0, r1;
};

static void *prep_rows(void *arg)
{
	struct prep_job *j = arg;
	struct vpa_ident_matrix *m = j->m;
	size_t nt = m->n_t;
	for (size_t r = j->r0; r < j->r1; r++) {
		float lo = INFINITY, hi = -INFINITY;
		for (size_t t = 0; t < nt; t++) {
			float xf = m->S[r * nt + t];
			double x = (double)xf;
			size_t q = lower_bound(j->u, j->nu, x);
			m->bin[r * nt + t] = (uint32_t)(q < j->nu && j->u[q] == x ? 2 * q + 1 : 2 * q);
			if (m->truth[t] != r) {
				lo = xf < lo ? xf : lo;
				hi = xf > hi ? xf : hi;
			}
		}
		m->rmin[r] = lo;
		m->rmax[r] = hi;
	}
	return NULL;
}

int vpa_ident_prepare(const float *S, size_t n_rows, size_t n_t, const uint32_t *truth,
		      struct vpa_ident_matrix *out, struct vpa_err *err)
{
	return vpa_ident_prepare_mt(S, n_rows, n_t, truth, 1, out, err);
}

int vpa_ident_prepare_mt(const float *S, size_t n_rows, size_t n_t, const uint32_t *truth,
			 int threads, struct vpa_ident_matrix *out, struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!n_t || !n_rows)
		return vpa_fail(err, VPA_EINPUT, NULL, "identification needs probes and a population");
	for (size_t t = 0; t < n_t; t++)
		if (truth[t] >= n_rows)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"probe %zu: true speaker %u is outside the population of %zu",
					t + 1, (unsigned)truth[t], n_rows);
	size_t nc = xmul(n_rows, n_t);
	for (size_t i = 0; i < nc; i++)
		if (!isfinite(S[i]))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"score of population speaker %zu and probe %zu is not finite",
					i / n_t + 1, i % n_t + 1);
	out->S = S;
	out->n_rows = n_rows;
	out->n_t = n_t;
	out->truth = truth;
	out->tar = xmalloc(xmul(n_t, sizeof(double)));
	out->ttrue = xmalloc(xmul(n_t, sizeof(float)));
	for (size_t t = 0; t < n_t; t++) {
		out->ttrue[t] = S[(size_t)truth[t] * n_t + t];
		out->tar[t] = (double)out->ttrue[t];
	}
	qsort(out->tar, n_t, sizeof(double), cmp_double);
	/* distinct target scores u[0..nu) */
	double *u = xmalloc(xmul(n_t, sizeof(double)));
	size_t nu = 0;
	for (size_t t = 0; t < n_t; t++)
		if (!nu || out->tar[t] != u[nu - 1])
			u[nu++] = out->tar[t];
	out->n_bins = 2 * nu + 1;
	out->rep = xmalloc(xmul(out->n_bins, sizeof(double)));
	for (size_t j = 0; j <= nu; j++) {
		double r;
		if (j == 0)
			r = u[0] - fabs(u[0]) - 1;
		else if (j == nu)
			r = u[nu - 1] + fabs(u[nu - 1]) + 1;
		else
			r = u[j - 1] / 2 + u[j] / 2;
		/* inputs are floats, so a double lies strictly between two of them */
		if ((j > 0 && !(r > u[j - 1])) || (j < nu && !(r < u[j])))
			VPA_BUG("identification: no score between %g and %g", j ? u[j - 1] : r,
				j < nu ? u[j] : r);
		out->rep[2 * j] = r;
		if (j < nu)
			out->rep[2 * j + 1] = u[j];
	}
	out->bin = xmalloc(xmul(nc, sizeof(uint32_t)));
	out->has_tar = xcalloc(n_rows, 1);
	for (size_t t = 0; t < n_t; t++)
		out->has_tar[truth[t]] = 1;
	out->rmin = xmalloc(xmul(n_rows, sizeof(float)));
	out->rmax = xmalloc(xmul(n_rows, sizeof(float)));
	size_t nth = threads > 1 ? (size_t)threads : 1;
	if (nth > n_rows)
		nth = n_rows;
	struct prep_job *jobs = xmalloc(xmul(nth, sizeof(*jobs)));
	pthread_t *th = xmalloc(xmul(nth, sizeof(*th)));
	unsigned char *started = xcalloc(nth, 1);
	for (size_t i = 0; i < nth; i++) {
		jobs[i] = (struct prep_job){out, u, nu, n_rows * i / nth, n_rows * (i + 1) / nth};
		/* the first share runs here, after the others started; also a share
		   whose thread could not start */
		if (i > 0)
			started[i] = pthread_create(&th[i], NULL, prep_rows, &jobs[i]) == 0;
	}
	prep_rows(&jobs[0]);
	for (size_t i = 1; i < nth; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			prep_rows(&jobs[i]);
	}
	free(started);
	free(th);
	free(jobs);
	free(u);
	return 0;
}

/* Scratch of one evaluation (reused across evaluations by a worker). */
struct ident_ws {
	long *pos;          /* (n_rows) */
	double *cnt, *rep;  /* (n_bins) */
	uint32_t *higher, *tied; /* (n_t) */
	double *e;          /* (lnb + 1) linkability edges */
	double *lcnt;       /* (lnb) */
	float *lmin, *lmax; /* (lnb) */
	double *lval, *lw;  /* (2 lnb) */
	size_t lcap;
};

static void ws_init(struct ident_ws *w, const struct vpa_ident_matrix *m)
{
	memset(w, 0, sizeof(*w));
	w->pos = xmalloc(xmul(m->n_rows, sizeof(long)));
	for (size_t r = 0; r < m->n_rows; r++)
		w->pos[r] = -1;
	w->cnt = xmalloc(xmul(m->n_bins, sizeof(double)));
	w->rep = xmalloc(xmul(m->n_bins, sizeof(double)));
	w->higher = xmalloc(xmul(m->n_t, sizeof(uint32_t)));
	w->tied = xmalloc(xmul(m->n_t, sizeof(uint32_t)));
}

static void ws_release(struct ident_ws *w)
{
	free(w->pos);
	free(w->cnt);
	free(w->rep);
	free(w->higher);
	free(w->tied);
	free(w->e);
	free(w->lcnt);
	free(w->lmin);
	free(w->lmax);
	free(w->lval);
	free(w->lw);
	memset(w, 0, sizeof(*w));
}

static void ws_link(struct ident_ws *w, size_t lnb)
{
	if (lnb <= w->lcap)
		return;
	w->lcap = lnb;
	w->e = xrealloc(w->e, xmul(lnb + 1, sizeof(double)));
	w->lcnt = xrealloc(w->lcnt, xmul(lnb, sizeof(double)));
	w->lmin = xrealloc(w->lmin, xmul(lnb, sizeof(float)));
	w->lmax = xrealloc(w->lmax, xmul(lnb, sizeof(float)));
	w->lval = xrealloc(w->lval, xmul(2 * lnb, sizeof(double)));
	w->lw = xrealloc(w->lw, xmul(2 * lnb, sizeof(double)));
}

static int subset_core(const struct vpa_ident_matrix *m, struct ident_ws *w, const uint32_t *rows,
		       size_t n, size_t k, double omega, size_t bins, struct vpa_ident_eval *out,
		       struct vpa_err *err)
{
	size_t nt = m->n_t;
	int rc = 0;
	struct vpa_pav pav = {0};
	struct vpa_linkability lk = {0};
	memset(out, 0, sizeof(*out));
	for (size_t j = 0; j < n; j++) {
		if (rows[j] >= m->n_rows || w->pos[rows[j]] >= 0) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "population row %u is out of range or repeated", (unsigned)rows[j]);
			goto out;
		}
		w->pos[rows[j]] = (long)j;
	}
	for (size_t t = 0; t < nt; t++)
		if (w->pos[m->truth[t]] < 0) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "probe %zu: its speaker is not in the population", t + 1);
			goto out;
		}
	if (n < 2) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "a population of one speaker gives no non-target trial");
		goto out;
	}
	/* linkability bins over the subset's extremes (as vpa_linkability finds them) */
	double lo = m->tar[0], hi = m->tar[nt - 1];
	for (size_t j = 0; j < n; j++) {
		lo = fmin(lo, (double)m->rmin[rows[j]]);
		hi = fmax(hi, (double)m->rmax[rows[j]]);
	}
	size_t lnb = bins;
	if (!lnb) {
		double f = floor((double)nt / 10);
		lnb = f < 100 ? (size_t)f : 100;
	}
	int do_link = nt >= 10 && lnb > 0 && lo < hi;
	double step = 0;
	if (do_link) {
		ws_link(w, lnb);
		vpa_linkability_edges(lo, hi, lnb, w->e);
		step = (w->e[lnb] - w->e[0]) / (double)lnb;
		if (!(step > 0) || !isfinite(step))
			step = INFINITY;
		memset(w->lcnt, 0, lnb * sizeof(double));
		for (size_t b = 0; b < lnb; b++) {
			w->lmin[b] = INFINITY;
			w->lmax[b] = -INFINITY;
		}
	}
	memset(w->cnt, 0, m->n_bins * sizeof(double));
	memset(w->higher, 0, nt * sizeof(uint32_t));
	memset(w->tied, 0, nt * sizeof(uint32_t));

	/* one pass over the non-target cells (rows of no probe's speaker have no
	   target cell to skip) */
	double inv = 1 / step;
	for (size_t j = 0; j < n; j++) {
		size_t r = rows[j];
		const float *Sr = m->S + r * nt;
		const uint32_t *Br = m->bin + r * nt;
		int has_tar = m->has_tar[r];
		if (!has_tar && do_link) {
			/* the common case, without the two tests below */
			for (size_t t = 0; t < nt; t++) {
				float x = Sr[t];
				w->cnt[Br[t]] += 1;
				w->higher[t] += x > m->ttrue[t];
				w->tied[t] += x == m->ttrue[t];
				size_t b = vpa_linkability_bin((double)x, w->e, lnb, lo, inv);
				w->lcnt[b] += 1;
				w->lmin[b] = x < w->lmin[b] ? x : w->lmin[b];
				w->lmax[b] = x > w->lmax[b] ? x : w->lmax[b];
			}
			continue;
		}
		for (size_t t = 0; t < nt; t++) {
			if (has_tar && m->truth[t] == r)
				continue;
			float x = Sr[t];
			w->cnt[Br[t]] += 1;
			w->higher[t] += x > m->ttrue[t];
			w->tied[t] += x == m->ttrue[t];
			if (do_link) {
				size_t b = vpa_linkability_bin((double)x, w->e, lnb, lo, inv);
				w->lcnt[b] += 1;
				w->lmin[b] = x < w->lmin[b] ? x : w->lmin[b];
				w->lmax[b] = x > w->lmax[b] ? x : w->lmax[b];
			}
		}
	}
	size_t n_non = xmul(nt, n - 1);

	/* ROCCH-EER and Cllr_min: PAV on the targets against the gap counts */
	size_t nb = 0;
	for (size_t b = 0; b < m->n_bins; b++)
		if (w->cnt[b] > 0) {
			w->rep[nb] = m->rep[b];
			w->cnt[nb++] = w->cnt[b];
		}
	struct vpa_scores sc = {m->tar, nt, w->rep, nb, NULL, w->cnt};
	if ((rc = vpa_pav_fit(&sc, 0, &pav, err)))
		goto out;
	out->eer = vpa_eer_rocch(&pav, NULL);
	out->cllr_min = vpa_cllr_min(&pav);

	/* linkability: the extremes of each bin carry its count */
	size_t nl = 0;
	if (do_link) {
		for (size_t b = 0; b < lnb; b++) {
			if (w->lcnt[b] == 0)
				continue;
			w->lval[nl] = (double)w->lmin[b];
			w->lw[nl++] = w->lcnt[b] > 1 ? w->lcnt[b] - 1 : 1;
			if (w->lcnt[b] > 1) {
				w->lval[nl] = (double)w->lmax[b];
				w->lw[nl++] = 1;
			}
		}
	} else {
		/* fewer than 10 probes or one value: vpa_linkability decides (undefined / 0) */
		ws_link(w, 1);
		w->lval[0] = lo < m->tar[0] ? lo : hi;
		w->lw[0] = 1;
		nl = 1;
	}
	struct vpa_scores sl = {m->tar, nt, w->lval, nl, NULL, w->lw};
	if ((rc = vpa_linkability(&sl, omega, bins, &lk, err)))
		goto out;
	out->linkability = lk.defined ? lk.dsys : NAN;
	/* the integral over finer bins than lnb would need the scores themselves */
	out->linkability_hist = lk.defined && (bins || lnb >= VPA_LINK_MIN_BINS) ? lk.dsys_hist : NAN;
	out->link_bins = lk.n_bins;
	out->link_bins_mated = lk.n_bins_mated;

	/* closed-set ranks (vpa_rank: 1 + #higher + #tied / 2) */
	double sum_rank = 0;
	size_t top1 = 0, top5 = 0, top10 = 0, topk = 0;
	for (size_t t = 0; t < nt; t++) {
		double rk = 1.0 + (double)w->higher[t] + (double)w->tied[t] / 2.0;
		sum_rank += rk;
		top1 += rk <= 1;
		top5 += rk <= 5;
		top10 += rk <= 10;
		topk += rk <= (double)k;
	}
	out->population = n;
	out->n_target = nt;
	out->n_nontarget = n_non;
	out->mean_rank = sum_rank / (double)nt;
	out->mean_norm_rank = out->mean_rank / (double)n;
	out->chance_rank = ((double)n + 1) / 2;
	out->top1 = (double)top1 / (double)nt;
	out->top5 = (double)top5 / (double)nt;
	out->top10 = (double)top10 / (double)nt;
	out->topk = (double)topk / (double)nt;
out:
	for (size_t j = 0; j < n; j++)
		if (rows[j] < m->n_rows)
			w->pos[rows[j]] = -1;
	vpa_linkability_release(&lk);
	vpa_pav_release(&pav);
	return rc;
}

int vpa_ident_subset(const struct vpa_ident_matrix *m, const uint32_t *rows, size_t n, size_t k,
		     double omega, size_t bins, struct vpa_ident_eval *out, struct vpa_err *err)
{
	struct ident_ws w;
	ws_init(&w, m);
	int rc = subset_core(m, &w, rows, n, k, omega, bins, out, err);
	ws_release(&w);
	return rc;
}

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
	struct ident_ws ws; /* per job: O(rows + probes), small against the block's cells */
	struct vpa_err e2;
	vpa_err_init(&e2);
	ws_init(&ws, j->m);
	draw_rows(j->seed, j->id, j->n_e, j->n_all, j->js[i], j->jr[i], rows);
	int rc = subset_core(j->m, &ws, rows, j->js[i], j->k, j->omega, j->bins, &j->res[i], &e2);
	ws_release(&ws);
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
