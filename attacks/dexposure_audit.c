/*
 * attacks/dexposure_audit.c - the one-run DP audit of the `d_exposure`
 * attack's DP-SGD taggers (issue 28; Steinke, Nasr, Jagielski 2023, "Privacy
 * auditing with one (1) training run"), as the `exposure` attack audits a
 * language model's (attacks/exposure.c).
 *
 * `audit_canaries: M` draws M audit words (seeded) from the tagger's
 * vocabulary, leaving out <unk>, the canary and its control words; each is put
 * in the canary's context sentence, its slot labelled with a class drawn
 * (seeded, public) among those other than the word's one training class (any
 * class for a word the training data gives several), and
 * that sentence is inserted once with probability 1/2 (a seeded coin per
 * word).  One tagger per DP mode is trained on the training set plus the
 * inserted sentences, each sentence its own privacy unit (a training sentence
 * with DP-SGD per sentence, a user of its own with user-level DP-SGD), so the
 * guarantee claimed for one unit covers each audit canary.  The score of a
 * word is the log-probability of its drawn label at the slot: a function of
 * the model and public facts only, so the one-run test holds;
 * vpa_dp_audit_one_run_scores chooses its abstention thresholds and corrects
 * for the choice.  The claim is the tighter of the RDP and PLD accountants'
 * epsilons for the run's q, sigma and steps.  `dp_fault` trains every DP run
 * with a deliberate defect (skip_noise, skip_clipping), for checking that the
 * audit finds it; the claim stays the correct run's.
 */
#include "attacks/dexposure_int.h"
#include "metrics/pld.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* RDP and PLD epsilons of the run; the claim is the smaller */
static void claim_of(const struct vpa_tagger_stats *st, double delta, double *rdp, double *pld)
{
	*rdp = st->epsilon;
	*pld = vpa_pld_claim(st->q, st->sigma, st->steps, delta);
}

int vpa_dexp_audit(struct vpa_run_ctx *ctx, const char *id, const struct vpa_dexp_opts *o,
		   const struct setup *s, int mode, const struct vpa_tagger_cfg *c,
		   struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct vpa_tagger_data *d = &s->tt->data;
	size_t V = d->vocab.n, M = (size_t)o->audit_canaries;
	int rc = 0;
	/* the words no audit word may be: <unk>, the canary, its controls; a word's
	 * class when the training data gives it only one (a reference word) */
	unsigned char *taken = xcalloc(V ? V : 1, 1), *only = xmalloc(V ? V : 1);
	memset(only, 0xff, V ? V : 1);
	taken[0] = 1;
	taken[s->canary] = 1;
	for (size_t i = 1; i < s->n_words; i++)
		only[s->words[i]] = s->word_cls[i];
	for (size_t i = 0; i < s->n_ctrl; i++)
		taken[s->words[s->n_words + i]] = 1;
	uint32_t *cand = xmalloc(xmul(V ? V : 1, sizeof(uint32_t)));
	size_t nc = 0;
	for (uint32_t w = 0; w < V; w++)
		if (!taken[w])
			cand[nc++] = w;
	free(taken);
	if (nc < M) {
		free(cand);
		return vpa_fail(err, VPA_EINPUT, NULL,
				"audit_canaries %zu: the tagger's vocabulary has only %zu words "
				"that are not <unk>, the canary or one of its control words", M, nc);
	}
	/* M words by a seeded partial shuffle, then each one's coin */
	struct vpa_rng rw, rcoin;
	vpa_rng_split(&rw, ctx->seed, "d_exposure/audit-words");
	vpa_rng_split(&rcoin, ctx->seed, "d_exposure/audit-coins");
	for (size_t i = 0; i < M; i++) {
		size_t j = i + (size_t)vpa_rng_below(&rw, nc - i);
		uint32_t t = cand[i];
		cand[i] = cand[j];
		cand[j] = t;
	}
	/*
	 * Each audit word's label: drawn uniformly (seeded, public) among the
	 * classes other than the word's only training class (any class for an
	 * ambiguous word).  One label for all would teach the context itself (200
	 * sentences "... ___ ..." labelled VERB make every word VERB there, inserted
	 * or not: tried, the scores of inserted and left-out words then overlap);
	 * with labels spread over the classes only a word's own sentence can raise
	 * its own label.
	 */
	unsigned char *in_set = xmalloc(M ? M : 1), *tl = xmalloc(M ? M : 1);
	size_t n_ins = 0;
	for (size_t j = 0; j < M; j++) {
		int own = only[cand[j]] < VPA_TAG_N ? only[cand[j]] : -1;
		int k = (int)vpa_rng_below(&rw, (uint64_t)(own >= 0 ? VPA_TAG_N - 1 : VPA_TAG_N));
		tl[j] = (unsigned char)(own >= 0 && k >= own ? k + 1 : k);
		in_set[j] = vpa_rng_uniform(&rcoin) < 0.5;
		n_ins += in_set[j];
	}
	free(only);
	/* the inserted sentences: the context with the slot filled and labelled */
	size_t L = s->len;
	uint32_t *ids = xmalloc(xmul(n_ins * L + 1, sizeof(uint32_t)));
	uint32_t *lab = xmalloc(xmul(n_ins * L + 1, sizeof(uint32_t)));
	for (size_t j = 0, k = 0; j < M; j++) {
		if (!in_set[j])
			continue;
		memcpy(ids + k * L, s->ctx_ids, L * sizeof(uint32_t));
		memcpy(lab + k * L, s->ctx_lab, L * sizeof(uint32_t));
		ids[k * L + s->slot] = cand[j];
		lab[k * L + s->slot] = tl[j];
		k++;
	}
	/* n_distinct > 1 is the audit layout; one inserted sentence is the same
	 * as a canary of 1 copy (its own unit either way) */
	struct vpa_tagger_extra ex = {ids, lab, L, 1, n_ins};
	struct vpa_tagger_stats st;
	struct vpa_nn *net = NULL;
	vpa_progress_note("%s: %s one-run audit: %zu audit canaries, %zu inserted", id,
			  mode == MODE_DPUSER ? "user-level" : "DP-SGD", M, n_ins);
	rc = vpa_tagger_train(d, c, d->train, d->n_train, n_ins ? &ex : NULL, NULL, NULL, &net,
			      &st, err);
	/* the scores: the log-probability of each audit word's label, in the context */
	double *probs = NULL, *score = xmalloc(xmul(M ? M : 1, sizeof(double)));
	if (!rc) {
		probs = xmalloc(xmul((M ? M : 1) * VPA_TAG_N, sizeof(double)));
		rc = vpa_tagger_slot_probs(net, s->ctx_ids, L, s->slot, cand, M, probs, err);
	}
	for (size_t j = 0; j < M && !rc; j++)
		score[j] = log(probs[j * VPA_TAG_N + tl[j]]);
	double *sin = xmalloc(xmul(M + 1, sizeof(double))), *sout = xmalloc(xmul(M + 1, sizeof(double)));
	size_t ni = 0, no = 0;
	for (size_t j = 0; j < M && !rc; j++) {
		if (!isfinite(score[j]))
			rc = vpa_fail(err, VPA_EINPUT, NULL, "audit canary %zu has no finite score",
				      j + 1);
		else if (in_set[j])
			sin[ni++] = score[j];
		else
			sout[no++] = score[j];
	}
	struct vpa_one_run res;
	memset(&res, 0, sizeof(res));
	double delta = c->delta;
	if (!rc && (ni == 0 || no == 0))
		vpa_ctx_warn(ctx, "%s: all %zu audit canaries fell on one side of the coin: the audit "
			     "has nothing to compare (bound 0)", id, M);
	if (!rc && ni && no) {
		qsort(sin, ni, sizeof(double), cmp_dbl);
		qsort(sout, no, sizeof(double), cmp_dbl);
		rc = vpa_dp_audit_one_run_scores(sin, ni, sout, no, o->audit_alpha, delta, &res);
	}
	if (!rc) {
		double rdp, pld;
		claim_of(&st, delta, &rdp, &pld);
		int use_pld = pld == pld && pld < rdp;
		double claim = use_pld ? pld : rdp;
		const char *acc = use_pld ? "pld" : "rdp";
		int user = mode == MODE_DPUSER;
		struct vpa_json *rec = vpa_json_obj(), *m = vpa_json_obj(), *au = vpa_json_obj(),
				*cn = vpa_json_obj();
		vpa_json_set_str(rec, "attack", id);
		vpa_json_set_str(rec, "sub", user ? "dpuser-audit" : "dp-audit");
		vpa_json_set(rec, "layer", vpa_json_null());
		vpa_json_set(rec, "sweep", vpa_json_null());
		vpa_json_set_str(rec, "epsilon_accountant", acc);
		vpa_json_set_num(m, "epsilon", claim);
		vpa_json_set_num(m, "epsilon_rdp", rdp);
		vpa_json_set(m, "epsilon_pld", pld == pld ? vpa_json_num(pld) : vpa_json_null());
		vpa_json_set_num(m, "epsilon_lower_bound", res.epsilon);
		vpa_json_set_num(m, "noise_multiplier", st.sigma);
		vpa_json_set_num(m, "sampling_rate", st.q);
		vpa_json_set_num(m, "dp_steps", st.steps);
		vpa_json_set_num(m, "dp_units", (double)st.units);
		vpa_json_set_str(au, "method", "one-run");
		vpa_json_set_num(au, "alpha", o->audit_alpha);
		vpa_json_set_num(au, "delta", delta);
		vpa_json_set_num(au, "claimed_epsilon", claim);
		vpa_json_set_str(au, "claim_key", "epsilon");
		vpa_json_set_str(au, "accountant", acc);
		vpa_json_set_str(au, "adjacency", user ? "user-level" : "example-level");
		vpa_json_set_str(au, "scope", "covered");
		vpa_json_set_num(cn, "m", res.m ? res.m : (double)M);
		vpa_json_set_num(cn, "inserted", (double)ni);
		vpa_json_set_num(cn, "guesses", res.guesses);
		vpa_json_set_num(cn, "correct", res.correct);
		vpa_json_set_num(cn, "k_plus", res.k_plus);
		vpa_json_set_num(cn, "k_minus", res.k_minus);
		vpa_json_set_num(cn, "pairs", res.pairs);
		vpa_json_set(au, "counts", cn);
		vpa_json_set_str(au, "score", "log-probability of the word's drawn label at the "
					      "slot of the canary's context");
		vpa_json_set_str(au, "dp_fault", o->dp_fault);
		char note[512];
		snprintf(note, sizeof(note),
			 "%zu audit words, each in '%s' with a label drawn among the classes "
			 "other than its one training class, inserted once with probability 1/2 (%s), guessed from "
			 "that label's log-probability on one trained tagger, abstention "
			 "thresholds corrected over %.0f pairs",
			 M, o->context,
			 user ? "user-level: each sentence a user of its own"
			      : "example-level: one training sentence added or removed",
			 res.pairs);
		vpa_json_set_str(au, "note", note);
		vpa_json_set(m, "dp_audit", au);
		vpa_json_set(rec, "metrics", m);
		vpa_json_push(out->records, rec);
	}
	vpa_nn_free(net);
	free(probs);
	free(score);
	free(tl);
	free(sin);
	free(sout);
	free(ids);
	free(lab);
	free(in_set);
	free(cand);
	return rc;
}
