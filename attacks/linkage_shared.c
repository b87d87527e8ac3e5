/*
 * attacks/linkage_shared.c - what the attacks on anonymised speech
 * (`linkage`, its per-gender records, `identification`, `slicing`) share:
 * the attackers of the VoicePrivacy 2020 evaluation plan and COMPRISE D2.3
 * 4.2.1, the sets each works on and what it needs from the target, their
 * back-ends, the score set of a trial list from a score matrix, and D_diag of
 * the voice-distinctiveness gain.  It calls none of those attack files (they
 * call it), so the attack files form no circle.
 */
#include "attacks/linkage_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	A_BASELINE = VPA_ATK_BASELINE, A_IGNORANT = VPA_ATK_IGNORANT, A_LAZY = VPA_ATK_LAZY,
	A_SEMI = VPA_ATK_SEMI, A_INFORMED = VPA_ATK_INFORMED, A_N = VPA_ATK_N
};
const char *const vpa_attacker_names[VPA_ATK_N] = {"baseline", "ignorant", "lazy_informed",
						   "semi_informed", "informed"};
#define attacker_names vpa_attacker_names

/* Attackers named in the list (its table default: all), as a bit set in order. */
unsigned vpa_linkage_attackers(const struct vpa_strs *attackers)
{
	unsigned m = 0;
	for (size_t i = 0; i < attackers->n; i++)
		for (int k = 0; k < A_N; k++)
			if (!strcmp(attackers->v[i], attacker_names[k]))
				m |= 1u << k;
	return m;
}

/* Which imported sets each attacker needs. */
static const char *const needs[A_N][3] = {
	{NULL},
	{"trial_anon", NULL},
	{"trial_anon", "enroll_anon", NULL},
	{"trial_anon", "enroll_anon", "train_anon"},
	{"trial_anon", "enroll_informed", "train_anon"},
};

/* Whether the set `name` of needs[] was written under the target's
 * `audio:` (audio = 1) or `import:`. */
static int has_set(const struct vpa_anon_opts *to, int audio, const char *name)
{
	const struct vpa_anon_audio_opts *au = &to->audio;
	const struct vpa_anon_import_opts *im = &to->import;
	struct vpa_mark m = {0, 0};
	if (!strcmp(name, "trial_anon"))
		m = audio ? au->trial_anon_at : im->trial_anon_at;
	else if (!strcmp(name, "enroll_anon"))
		m = audio ? au->enroll_anon_at : im->enroll_anon_at;
	else if (!strcmp(name, "train_anon"))
		m = audio ? au->train_anon_at : im->train_anon_at;
	else if (!strcmp(name, "enroll_informed"))
		m = audio ? au->enroll_informed_at : im->enroll_informed_at;
	else
		VPA_BUG("attacker set '%s' unknown", name);
	return m.line != 0;
}

/* source audio: the anonymised directories each attacker needs, given or
 * made by the built-in `anonymise` (which makes them all). */
static int audio_check_sets(const struct vpa_kind_ctx *ctx, const struct vpa_strs *attackers,
			    struct vpa_mark attackers_at, const struct vpa_anon_opts *to,
			    struct vpa_err *err)
{
	unsigned m = vpa_linkage_attackers(attackers);
	if (!to->audio_at.line || to->audio.anonymise_at.line)
		return 0;
	for (int k = 0; k < A_N; k++) {
		if (!(m & (1u << k)))
			continue;
		for (int j = 0; j < 3 && needs[k][j]; j++)
			if (!has_set(to, 1, needs[k][j])) {
				int at = attackers_at.line != 0;
				struct vpa_loc loc = vpa_mark_loc(ctx->file, at ? attackers_at : ctx->self);
				return vpa_fail(err, VPA_EINPUT, &loc,
						"attacker '%s' needs the target's audio.%s (a data directory%s), "
						"or a built-in `anonymise:`%s",
						attacker_names[k], needs[k][j],
						k == A_INFORMED ? ": the enrolment anonymised with the trial "
								  "speakers' own pseudo-speakers, which vpaudit "
								  "cannot make with your anonymiser"
								: "",
						at ? "; or leave it out of `attackers`"
						   : "; or list the attackers to run in `attackers:`");
			}
	}
	return 0;
}

int vpa_linkage_check_sets(const struct vpa_kind_ctx *ctx, const struct vpa_strs *attackers,
			   struct vpa_mark attackers_at, const struct vpa_anon_opts *to,
			   struct vpa_err *err)
{
	const char *src = to->source;
	if (src && !strcmp(src, "audio"))
		return audio_check_sets(ctx, attackers, attackers_at, to, err);
	if (!src || strcmp(src, "import"))
		return 0;
	unsigned m = vpa_linkage_attackers(attackers);
	for (int k = 0; k < A_N; k++) {
		if (!(m & (1u << k)))
			continue;
		for (int j = 0; j < 3 && needs[k][j]; j++)
			if (!has_set(to, 0, needs[k][j])) {
				struct vpa_loc loc = vpa_mark_loc(ctx->file, attackers_at.line
									     ? attackers_at : ctx->self);
				return vpa_fail(err, VPA_EINPUT, &loc,
						"attacker '%s' needs the imported set '%s' (target import: "
						"%s: {vectors: ...})", attacker_names[k], needs[k][j],
						needs[k][j]);
			}
	}
	return 0;
}

/*
 * Voice similarity matrix of the VoicePrivacy evaluation (Noe et al. 2020;
 * VPC 2024 deid_gvd.py): with LLR(k, l) of utterance k (enrolment, count 1)
 * against utterance l, S_ij = sigmoid(mean over k of i, l of j, k != l of
 * LLR(k, l)), filled for i <= j and mirrored.  D_diag = |mean diagonal -
 * mean off-diagonal|.  Returns D_diag, or NAN when a speaker has a single
 * utterance (no pair on the diagonal) or there is one speaker.
 */
double vpa_linkage_ddiag(const struct vpa_backend *b, const struct vpa_embset *es)
{
	size_t n = es->n, ns = es->n_spk;
	if (ns < 2)
		return NAN;
	double *llr = xmalloc(xmul(xmul(n, n), sizeof(double)));
	vpa_backend_score(b, es->x, NULL, n, es->x, n, llr);
	double *sum = xcalloc(ns * ns, sizeof(double));
	double *cnt = xcalloc(ns * ns, sizeof(double));
	for (size_t k = 0; k < n; k++)
		for (size_t l = 0; l < n; l++) {
			if (k == l)
				continue;
			size_t i = es->spk[k], j = es->spk[l];
			sum[i * ns + j] += llr[k * n + l];
			cnt[i * ns + j] += 1;
		}
	double dsum = 0, osum = 0, out = NAN;
	for (size_t i = 0; i < ns; i++)
		for (size_t j = i; j < ns; j++) {
			if (cnt[i * ns + j] == 0)
				goto done;
			double s = 1 / (1 + exp(-sum[i * ns + j] / cnt[i * ns + j]));
			if (i == j)
				dsum += s;
			else
				osum += 2 * s;
		}
	out = fabs(dsum / (double)ns - osum / ((double)ns * (double)(ns - 1)));
done:
	free(llr);
	free(sum);
	free(cnt);
	return out;
}

/* The score set of one attacker (ids: enrolment speakers, test utterances). */
void vpa_linkage_make_trials(const struct vpa_anon_trials *tr, const double *S, size_t nt,
			const struct vpa_embset *enroll, const struct vpa_embset *test,
			struct vpa_trials *out)
{
	vpa_trials_init(out);
	size_t ntar = 0;
	for (size_t i = 0; i < tr->n; i++)
		ntar += tr->tar[i];
	out->tar = xmalloc(xmul(ntar ? ntar : 1, sizeof(double)));
	out->non = xmalloc(xmul(tr->n - ntar ? tr->n - ntar : 1, sizeof(double)));
	out->tar_e = xmalloc(xmul(ntar ? ntar : 1, sizeof(uint32_t)));
	out->tar_t = xmalloc(xmul(ntar ? ntar : 1, sizeof(uint32_t)));
	out->non_e = xmalloc(xmul(tr->n - ntar ? tr->n - ntar : 1, sizeof(uint32_t)));
	out->non_t = xmalloc(xmul(tr->n - ntar ? tr->n - ntar : 1, sizeof(uint32_t)));
	for (size_t i = 0; i < tr->n; i++) {
		double s = S[(size_t)tr->e[i] * nt + tr->t[i]];
		if (tr->tar[i]) {
			out->tar_e[out->n_tar] = tr->e[i];
			out->tar_t[out->n_tar] = tr->t[i];
			out->tar[out->n_tar++] = s;
		} else {
			out->non_e[out->n_non] = tr->e[i];
			out->non_t[out->n_non] = tr->t[i];
			out->non[out->n_non++] = s;
		}
	}
	out->n_ids_e = enroll->n_spk;
	out->ids_e = xmalloc(xmul(enroll->n_spk ? enroll->n_spk : 1, sizeof(char *)));
	for (size_t i = 0; i < enroll->n_spk; i++)
		out->ids_e[i] = xstrdup(enroll->spk_id[i]);
	out->n_ids_t = test->n;
	out->ids_t = xmalloc(xmul(test->n ? test->n : 1, sizeof(char *)));
	for (size_t i = 0; i < test->n; i++)
		out->ids_t[i] = xstrdup(test->utt[i]);
}

void vpa_linkage_attacker_sets(const struct vpa_anon_target *a, int k,
			       struct vpa_attacker_sets *out)
{
	static const char *const en[A_N] = {"enroll", "enroll", "enroll_anon", "enroll_anon",
					    "enroll_informed"};
	static const char *const pn[A_N] = {"population", "population", "population_anon",
					    "population_anon", "population_informed"};
	const struct vpa_embset *E[A_N] = {&a->enroll, &a->enroll, &a->enroll_anon, &a->enroll_anon,
					   &a->enroll_informed};
	const struct vpa_embset *P[A_N] = {&a->pop, &a->pop, &a->pop_anon, &a->pop_anon,
					   &a->pop_informed};
	out->enroll = E[k];
	out->pop = P[k];
	out->test = k == A_BASELINE ? &a->trial : &a->trial_anon;
	out->enroll_name = en[k];
	out->pop_name = pn[k];
	out->test_name = k == A_BASELINE ? "trial" : "trial_anon";
	out->anon_backend = k == A_SEMI || k == A_INFORMED;
	/* source audio: the semi-informed and informed attackers' own extractor
	 * (ASV_eval^anon; enroll_informed is embedded by it too) */
	if (k == A_SEMI && a->trial_semi.n)
		out->enroll = &a->enroll_semi;
	if ((k == A_SEMI || k == A_INFORMED) && a->trial_semi.n)
		out->test = &a->trial_semi;
}

/* Train a back-end, naming the set in errors. */
struct vpa_backend *vpa_linkage_backend(const struct vpa_embset *train,
					const struct vpa_backend_cfg *cfg, const char *what,
					struct vpa_err *err)
{
	struct vpa_backend *b = vpa_backend_train(train, cfg, err);
	if (!b) {
		char m[sizeof(err->msg)];
		memcpy(m, err->msg, sizeof(m));
		int st = err->status;
		vpa_err_init(err);
		vpa_fail(err, st, NULL, "back-end on %s: %s", what, m);
	}
	return b;
}

/* ---- the Article 29 criteria per attacker (issue 29; metrics/legal.c) ---- */

/*
 * Conversations of length L of the test speakers that have exactly one
 * target enrolment in the trials (the one every target trial of their
 * utterances names; a speaker whose utterances name two, or none, has no
 * closed-set truth and is left out):
 * each speaker's utterances in set order cut into floor(u/L) consecutive,
 * disjoint runs, each the L2-normalised mean of its L embeddings (Vauquier
 * et al. 2025) scaled to the mean norm of those embeddings (see below).  X (nc, d), spk[c]: the enrolment index, idx[c]: the
 * conversation's number within its speaker (even: calibration, odd: test
 * of pi_sing).  Returns nc; *n_spk / *n_excl: speakers with at least one
 * conversation / with fewer than L utterances.
 */
static size_t conversations(const struct vpa_anon_trials *tr, const struct vpa_embset *te,
			    size_t L,
			    double **X_out, uint32_t **spk_out, uint32_t **idx_out, size_t *n_spk,
			    size_t *n_excl)
{
	size_t ns = te->n_spk, d = te->d;
	size_t *cnt = xcalloc(ns ? ns : 1, sizeof(size_t));
	for (size_t u = 0; u < te->n; u++)
		cnt[te->spk[u]]++;
	uint32_t *en = xmalloc(xmul(ns ? ns : 1, sizeof(uint32_t)));
	unsigned char *bad = xcalloc(ns ? ns : 1, 1);
	for (size_t s = 0; s < ns; s++)
		en[s] = UINT32_MAX;
	for (size_t i = 0; i < tr->n; i++) {
		if (!tr->tar[i])
			continue;
		size_t s = te->spk[tr->t[i]];
		if (en[s] != UINT32_MAX && en[s] != tr->e[i])
			bad[s] = 1;
		en[s] = tr->e[i];
	}
	size_t nc = 0;
	*n_spk = *n_excl = 0;
	for (size_t s = 0; s < ns; s++) {
		if (bad[s] || !cnt[s])
			en[s] = UINT32_MAX; /* no single true candidate: no closed set */
		if (en[s] == UINT32_MAX)
			continue;
		if (cnt[s] < L) {
			(*n_excl)++;
			continue;
		}
		(*n_spk)++;
		nc += cnt[s] / L;
	}
	double *X = xcalloc(xmul(xmul(nc ? nc : 1, d ? d : 1), 1), sizeof(double));
	uint32_t *spk = xmalloc(xmul(nc ? nc : 1, sizeof(uint32_t)));
	uint32_t *idx = xmalloc(xmul(nc ? nc : 1, sizeof(uint32_t)));
	double *unorm = xcalloc(nc ? nc : 1, sizeof(double));
	size_t *seen = xcalloc(ns ? ns : 1, sizeof(size_t)), *base = xcalloc(ns ? ns : 1, sizeof(size_t));
	size_t c = 0;
	for (size_t s = 0; s < ns; s++) {
		base[s] = c;
		if (en[s] != UINT32_MAX && cnt[s] >= L)
			c += cnt[s] / L;
	}
	for (size_t u = 0; u < te->n; u++) {
		size_t s = te->spk[u];
		if (en[s] == UINT32_MAX || cnt[s] < L || seen[s] / L >= cnt[s] / L) {
			seen[s]++;
			continue;
		}
		size_t k = base[s] + seen[s] / L;
		double un = 0;
		for (size_t j = 0; j < d; j++) {
			X[k * d + j] += te->x[u * d + j];
			un += te->x[u * d + j] * te->x[u * d + j];
		}
		unorm[k] += sqrt(un) / (double)L;
		spk[k] = en[s];
		idx[k] = (uint32_t)(seen[s] / L);
		seen[s]++;
	}
	/* the normalised mean, at the mean norm of its utterances: the back-end
	 * centres raw vectors with its training mean before LDA and its own
	 * length norm, so unit vectors would sit far from everything it was
	 * trained on (on comprise-linkage-gender the baseline attacker, EER
	 * 0.4%, fell to pi_link(N'=all) = 1/40, chance); a cosine back-end is
	 * blind to the scale, and L = 1 gives the utterance itself */
	for (size_t k = 0; k < nc; k++) {
		double nrm = 0;
		for (size_t j = 0; j < d; j++)
			nrm += X[k * d + j] * X[k * d + j];
		nrm = sqrt(nrm);
		for (size_t j = 0; nrm > 0 && j < d; j++)
			X[k * d + j] *= unorm[k] / nrm;
	}
	free(unorm);
	free(cnt);
	free(en);
	free(bad);
	free(seen);
	free(base);
	*X_out = X;
	*spk_out = spk;
	*idx_out = idx;
	return nc;
}

static struct vpa_json *est_json(const struct vpa_legal_est *e, const char *chance_name)
{
	struct vpa_json *o = vpa_json_obj(), *ci = vpa_json_arr();
	vpa_json_set_num(o, "value", e->value);
	vpa_json_push(ci, vpa_json_num(e->lo)); /* NAN -> null */
	vpa_json_push(ci, vpa_json_num(e->hi));
	vpa_json_set(o, "ci", ci);
	vpa_json_set_num(o, chance_name, e->chance);
	return o;
}

static void grid_key(char *b, size_t n, size_t v)
{
	if (v)
		snprintf(b, n, "%zu", v);
	else
		snprintf(b, n, "all");
}

struct vpa_json *vpa_linkage_legal(const struct vpa_backend *B, const struct vpa_anon_trials *tr,
				   const struct vpa_embset *e, const struct vpa_embset *te,
				   const struct vpa_legal_grid *g,
				   double *pi_link0, double *pi_sing0, size_t *spk0,
				   struct vpa_err *err)
{
	struct vpa_json *root = vpa_json_obj(), *arr = vpa_json_arr();
	size_t ne = e->n_spk, d = te->d;
	*pi_link0 = *pi_sing0 = NAN;
	*spk0 = 0;
	if (e->n && e->d != te->d) {
		vpa_fail(err, VPA_EINPUT, NULL, "enrolment set has dimension %zu, the test set %zu",
			 e->d, te->d);
		vpa_json_free(root);
		vpa_json_free(arr);
		return NULL;
	}
	double *means = xmalloc(xmul(xmul(ne ? ne : 1, d ? d : 1), sizeof(double)));
	uint32_t *ecnt = xmalloc(xmul(ne ? ne : 1, sizeof(uint32_t)));
	vpa_embset_spk_means(e, means, ecnt);
	for (size_t li = 0; li < g->n_len; li++) {
		size_t L = g->len[li], n_spk, n_excl;
		double *X;
		uint32_t *spk, *idx;
		size_t nc = conversations(tr, te, L, &X, &spk, &idx, &n_spk, &n_excl);
		struct vpa_json *one = vpa_json_obj(), *pl = vpa_json_obj(), *ps = vpa_json_obj();
		vpa_json_set_num(one, "L", (double)L);
		vpa_json_set_num(one, "speakers", (double)n_spk);
		vpa_json_set_num(one, "excluded_speakers", (double)n_excl);
		vpa_json_set_num(one, "conversations", (double)nc);
		double *S = NULL;
		if (nc) {
			/* (ne, nc): every enrolment against every conversation */
			S = xmalloc(xmul(xmul(ne, nc), sizeof(double)));
			vpa_backend_score(B, means, ecnt, ne, X, nc, S);
		}
		/* pi_link: every conversation of an enrolled speaker, N' grid */
		size_t *m = xmalloc(xmul(nc ? nc : 1, sizeof(size_t)));
		double *col = xmalloc(xmul(ne ? ne : 1, sizeof(double)));
		for (size_t c = 0; c < nc; c++) {
			for (size_t j = 0; j < ne; j++)
				col[j] = S[j * nc + c];
			m[c] = vpa_pilink_beaten(col, ne, spk[c]);
		}
		for (size_t k = 0; k < g->n_link; k++) {
			char key[32];
			grid_key(key, sizeof(key), g->link[k]);
			size_t np = g->link[k] ? g->link[k] : ne;
			struct vpa_legal_est est;
			struct vpa_err e2;
			vpa_err_init(&e2);
			if (!nc || np > ne || vpa_pilink(m, spk, nc, ne, ne, np, g->level, &est, &e2)) {
				vpa_json_set(pl, key, vpa_json_null());
				continue;
			}
			vpa_json_set(pl, key, est_json(&est, "chance"));
			if (li == 0 && k == 0)
				*pi_link0 = est.value;
		}
		if (li == 0)
			*spk0 = n_spk;
		/* pi_sing: even conversations calibrate, odd ones test; only the
		 * speakers with both (at least 2L utterances) */
		size_t ncal = 0, nts = 0, sing_spk = 0;
		uint32_t *has = xcalloc(ne ? ne : 1, sizeof(uint32_t));
		for (size_t c = 0; c < nc; c++)
			if (idx[c] == 1)
				has[spk[c]] = 1;
		for (size_t c = 0; c < nc; c++) {
			if (!has[spk[c]])
				continue;
			if (idx[c] % 2)
				nts++;
			else
				ncal++;
			sing_spk += idx[c] == 1;
		}
		vpa_json_set_num(one, "sing_speakers", (double)sing_spk);
		vpa_json_set_num(one, "sing_excluded_speakers", (double)(n_spk - sing_spk + n_excl));
		double *C = xmalloc(xmul(xmul(ne ? ne : 1, ncal ? ncal : 1), sizeof(double)));
		double *T = xmalloc(xmul(xmul(ne ? ne : 1, nts ? nts : 1), sizeof(double)));
		uint32_t *cs = xmalloc(xmul(ncal ? ncal : 1, sizeof(uint32_t)));
		uint32_t *ts = xmalloc(xmul(nts ? nts : 1, sizeof(uint32_t)));
		for (size_t j = 0; j < ne; j++) {
			size_t a = 0, b = 0;
			for (size_t c = 0; c < nc; c++) {
				if (!has[spk[c]])
					continue;
				if (idx[c] % 2) {
					T[j * nts + b] = S[j * nc + c];
					ts[b++] = spk[c];
				} else {
					C[j * ncal + a] = S[j * nc + c];
					cs[a++] = spk[c];
				}
			}
		}
		for (size_t k = 0; k < g->n_sing; k++) {
			char key[32];
			grid_key(key, sizeof(key), g->sing[k]);
			size_t N = g->sing[k] ? g->sing[k] : sing_spk;
			struct vpa_legal_est est;
			struct vpa_err e2;
			vpa_err_init(&e2);
			if (!nts || !N || N > sing_spk ||
			    vpa_pising(C, cs, ncal, T, ts, nts, ne, ne, &N, 1, g->level, &est, &e2)) {
				vpa_json_set(ps, key, vpa_json_null());
				continue;
			}
			vpa_json_set(ps, key, est_json(&est, "baseline"));
			if (li == 0 && k == 0)
				*pi_sing0 = est.value;
		}
		vpa_json_set(one, "pi_link", pl);
		vpa_json_set(one, "pi_sing", ps);
		vpa_json_push(arr, one);
		free(C);
		free(T);
		free(cs);
		free(ts);
		free(has);
		free(m);
		free(col);
		free(S);
		free(X);
		free(spk);
		free(idx);
	}
	free(means);
	free(ecnt);
	vpa_json_set_num(root, "level", g->level);
	vpa_json_set_str(root, "pi_link_interval", "cluster-robust (CR1) t over test speakers");
	vpa_json_set_str(root, "pi_sing_interval", "t over enrolment speakers");
	vpa_json_set_num(root, "min_speakers", (double)VPA_LEGAL_MIN_SPEAKERS);
	vpa_json_set(root, "by_length", arr);
	return root;
}
