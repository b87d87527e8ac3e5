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
