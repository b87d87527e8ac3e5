/*
 * attacks/exposure.c - attack kind `exposure` (Carlini et al. 2019, "The
 * Secret Sharer"; COMPRISE D2.3 4.3.5): rank each canary's log-perplexity
 * among the other candidates of its template's space.
 *
 *   exact         when the space has at most `max_exact` values: every
 *                 candidate is scored (the LM shares the computation of common
 *                 prefixes), exposure = log2 N - log2(1 + #{candidates <= X})
 *                 with N the other candidates (metrics/metrics.h);
 *   extrapolated  the skew-normal fitted by maximum likelihood to the
 *                 candidates (all of them when enumerated, else `samples`
 *                 drawn uniformly from the space), exposure = -log2 F(X).
 * Both are reported when both apply.  The candidate set leaves out the other
 * canaries of the same entry (inserted with other counts), but keeps the
 * `others` of multiple insertion: the attacker does not know them.
 *
 * Figures: exposure against insertions (one series per canary entry, exact
 * and extrapolated), and against training epochs/rounds (one series per
 * canary, from the target's checkpoints).
 */
#include "attacks/attacks.h"
#include "targets/lm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* typed options (config/schema.h), filled by validation */
struct exposure_opts {
	long long max_exact;
	long long samples;
	int sentence_end;
	int drop_canary;
	int over_time;
	double audit_alpha;
	struct vpa_mark max_exact_at, samples_at, sentence_end_at, drop_canary_at,
		over_time_at, audit_alpha_at;
};

static const struct vpa_key keys[] = {
	{"max_exact", VPA_K_INT, 0, "1000000", 0, 100000000, 0, NULL, NULL, "1000000",
	 "enumerate the whole candidate space when it has at most this many values",
	 VPA_AT(struct exposure_opts, max_exact), VPA_MARK(struct exposure_opts, max_exact_at)},
	{"samples", VPA_K_INT, 0, "5000", 10, 10000000, 0, NULL, NULL, "5000",
	 "candidates drawn for the skew-normal fit when the space is not enumerated",
	 VPA_AT(struct exposure_opts, samples), VPA_MARK(struct exposure_opts, samples_at)},
	{"sentence_end", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "add -log2 P(</s> | canary) to every log-perplexity (ARPA and LSTM models), as a "
	 "sentence-level LM scores a sentence (SRILM/KenLM); false, the default, scores the "
	 "secret's tokens only (the secret sharer's and TF Privacy's convention)",
	 VPA_AT(struct exposure_opts, sentence_end), VPA_MARK(struct exposure_opts, sentence_end_at)},
	{"drop_canary", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "imported `candidates`: remove one candidate equal to `canary_logppl` (a file that scores "
	 "the whole space, the canary included; an error when none is equal).  Without it such a "
	 "candidate counts as a rival (exact exposure at most log2 N - 1) and a warning says so",
	 VPA_AT(struct exposure_opts, drop_canary), VPA_MARK(struct exposure_opts, drop_canary_at)},
	{"over_time", VPA_K_BOOL, 0, "true", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "also compute the exact exposure at every checkpoint (figure against epochs/rounds)",
	 VPA_AT(struct exposure_opts, over_time), VPA_MARK(struct exposure_opts, over_time_at)},
	{"audit_alpha", VPA_K_NUM, 0, "0.05", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL,
	 "0.01",
	 "target with `audit_canaries`: the one-run audit's significance (the lower bound holds "
	 "with confidence 1 - audit_alpha)",
	 VPA_AT(struct exposure_opts, audit_alpha), VPA_MARK(struct exposure_opts, audit_alpha_at)},
	{NULL},
};
static const struct vpa_schema schema = {"attack exposure", keys, sizeof(struct exposure_opts)};

static const char *const target_kinds[] = {"language_model", NULL};
static const char *const metrics[] = {
	"exposure", "exposure_extrapolated", "max_exposure", "rank", "space", "insertions",
	"canary_logppl", "epsilon", "perplexity", "n_candidates", "noise_multiplier", "q",
	"epsilon_lower_bound", "epsilon_rdp", "epsilon_pld", NULL,
};

static size_t subs(const void *opts, const void *target_opts, const char ***names)
{
	const struct vpa_lm_opts *to = target_opts;
	(void)opts;
	/* names are made at build time ("pin-x16"); gates use the attack id or ID.SUB
	 * with the documented naming, so the list is rebuilt from the options */
	int imp = !strcmp(to->source, "import");
	size_t n = 0, cap = 8;
	*names = xcalloc(cap, sizeof(**names));
	if (imp && to->candidates) {
		(*names)[n++] = "canary";
		return n;
	}
	static char buf[1024][64]; /* names must outlive the call; the table is small */
	static size_t used;
	if (to->audit_canaries > 0)
		(*names)[n++] = "dp-audit"; /* the one-run audit's record */
	for (size_t i = 0; i < to->canaries.n; i++) {
		const struct vpa_lm_canary_opts *c =
			VPA_OPTLIST_AT(struct vpa_lm_canary_opts, to->canaries, i);
		char base[32];
		snprintf(base, sizeof(base), "%s", c->name ? c->name : "");
		if (!c->name)
			snprintf(base, sizeof(base), "c%zu", i + 1);
		/* insertions: the counts as written, else the table's default [16] */
		size_t k = imp ? 1 : c->insertions.n;
		for (size_t j = 0; j < k; j++) {
			if (n == cap)
				*names = xrealloc(*names, xmul(cap *= 2, sizeof(**names)));
			char *s = buf[used++ % 1024];
			if (imp)
				snprintf(s, 64, "%s", base);
			else
				snprintf(s, 64, "%s-x%s", base, c->insertions.v[j]);
			(*names)[n++] = s;
		}
	}
	return n;
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, const void *target_opts,
		    struct vpa_err *err)
{
	const struct exposure_opts *o = opts;
	const struct vpa_lm_opts *to = target_opts;
	if (o->drop_canary && !to->candidates) {
		struct vpa_loc l = vpa_mark_key_loc(ctx->file, o->drop_canary_at);
		return vpa_fail(err, VPA_EINPUT, &l, "drop_canary applies to imported `candidates`: "
				"a model's canary is never among its own candidates");
	}
	if (o->sentence_end && to->candidates) {
		struct vpa_loc l = vpa_mark_key_loc(ctx->file, o->sentence_end_at);
		return vpa_fail(err, VPA_EINPUT, &l, "sentence_end applies to models vpaudit scores "
				"(ARPA, LSTM): imported `candidates` carry their own log-perplexities");
	}
	if (o->audit_alpha_at.line && to->audit_canaries <= 0) {
		struct vpa_loc l = vpa_mark_key_loc(ctx->file, o->audit_alpha_at);
		return vpa_fail(err, VPA_EINPUT, &l, "audit_alpha needs a target with "
				"'audit_canaries'");
	}
	if (to->candidates || to->canaries.n > 0 || to->audit_canaries > 0)
		return 0;
	/* the attack's mapping */
	struct vpa_loc l = vpa_mark_loc(ctx->file, ctx->self);
	return vpa_fail(err, VPA_EINPUT, &l, "exposure needs canaries: the target has no "
			"'canaries' (or 'candidates')");
}

/* All sequences of the space (odometer order), (space, L). */
static uint32_t *enumerate(const struct vpa_lm_canary *c, size_t M)
{
	uint32_t *s = xmalloc(xmul(xmul(M, c->L), sizeof(uint32_t)));
	size_t *ix = xcalloc(c->L, sizeof(size_t));
	for (size_t m = 0; m < M; m++) {
		for (size_t t = 0; t < c->L; t++)
			s[m * c->L + t] = c->pos[t].alt[ix[t]];
		for (size_t t = c->L; t-- > 0;) {
			if (++ix[t] < c->pos[t].n_alt)
				break;
			ix[t] = 0;
		}
	}
	free(ix);
	return s;
}

static int same(const uint32_t *a, const uint32_t *b, size_t L)
{
	return !memcmp(a, b, L * sizeof(uint32_t));
}

static int excluded(const struct vpa_lm_canary *c, const uint32_t *s)
{
	if (same(s, c->secret, c->L))
		return 1;
	for (size_t k = 0; k < c->n_excl; k++)
		if (same(s, c->excl + k * c->L, c->L))
			return 1;
	return 0;
}

struct expo {
	double exact, extra, max, rank, logppl, n_cand;
	double secs;
	char why[1024]; /* why there is no extrapolated exposure ("" when there is one) */
};

/* Score the canary and its candidates at checkpoint ck. */
static int expose(const struct vpa_lm_target *t, const struct vpa_lm_canary *c, size_t ck,
		  size_t max_exact, size_t samples, int fit, int sentence_end, uint64_t seed,
		  struct expo *e, struct vpa_err *err)
{
	double t0 = vpa_now();
	int exact = c->space <= (double)max_exact;
	if (c->space - 1 - (double)c->n_excl < 1)
		return vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': no other candidate in the space "
				"of '%s' (its other secrets fill it)", c->name, c->tmpl);
	size_t M;
	uint32_t *seqs;
	if (exact) {
		M = (size_t)c->space;
		seqs = enumerate(c, M);
	} else {
		struct vpa_rng r;
		vpa_rng_split(&r, seed, c->name);
		M = samples + 1;
		seqs = xmalloc(xmul(xmul(M, c->L), sizeof(uint32_t)));
		memcpy(seqs, c->secret, c->L * sizeof(uint32_t));
		for (size_t m = 1; m < M; m++)
			do {
				for (size_t k = 0; k < c->L; k++)
					seqs[m * c->L + k] = c->pos[k].alt[vpa_rng_below(&r, c->pos[k].n_alt)];
			} while (excluded(c, seqs + m * c->L));
	}
	double *lp = xmalloc(xmul(M, sizeof(double)));
	int rc = vpa_lm_logppl(t, ck, seqs, M, c->L, sentence_end, lp, err);
	double *cand = xmalloc(xmul(M, sizeof(double)));
	size_t n = 0;
	double X = NAN;
	if (!rc) {
		for (size_t m = 0; m < M; m++) {
			if (same(seqs + m * c->L, c->secret, c->L) && (exact || m == 0)) {
				X = lp[m];
				continue;
			}
			if (exact && excluded(c, seqs + m * c->L))
				continue;
			cand[n++] = lp[m];
		}
		e->logppl = X;
		e->n_cand = (double)n;
		e->max = log2((double)(exact ? n : c->space - 1 - (double)c->n_excl));
		size_t below = 0;
		for (size_t i = 0; i < n; i++)
			below += cand[i] <= X;
		e->rank = exact ? (double)(below + 1) : NAN;
		e->exact = exact ? vpa_exposure_exact(X, cand, n) : NAN;
		e->extra = NAN;
		e->why[0] = 0;
		if (fit && n < 3) {
			snprintf(e->why, sizeof(e->why), "fewer than 3 candidates");
		} else if (fit) {
			struct vpa_skewnorm d;
			struct vpa_err fe;
			vpa_err_init(&fe);
			if (vpa_skewnorm_fit(cand, n, &d, &fe) == 0)
				e->extra = vpa_exposure_extrapolated(X, &d);
			else
				snprintf(e->why, sizeof(e->why), "%s", fe.msg);
		}
	}
	e->secs = vpa_now() - t0;
	free(seqs);
	free(lp);
	free(cand);
	return rc;
}

static void set_info_num(struct vpa_json *m, const char *key, const struct vpa_json *info)
{
	struct vpa_json *v = info ? vpa_json_get(info, key) : NULL;
	vpa_json_set(m, key, v ? vpa_json_clone(v) : vpa_json_null());
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The odometer index of a sequence in its template's space (alternatives sorted). */
static double space_index(const struct vpa_lm_canary *c, const uint32_t *s)
{
	double ix = 0;
	for (size_t t = 0; t < c->L; t++) {
		size_t lo = 0, hi = c->pos[t].n_alt;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (c->pos[t].alt[mid] < s[t])
				lo = mid + 1;
			else
				hi = mid;
		}
		ix = ix * (double)c->pos[t].n_alt + (double)lo;
	}
	return ix;
}

/*
 * The one-run audit (Steinke, Nasr, Jagielski 2023) of the target's claimed
 * epsilon: each audit canary's membership score is its exact exposure on the
 * final model, ranked among the template's candidates that are no audit
 * canary's secret (the set of all canaries is public, only the coins are the
 * secret, so leaving them all out is a function of the model alone); with a
 * space above max_exact the score is minus the log-perplexity.  The abstention
 * thresholds are chosen by vpa_dp_audit_one_run_scores with its correction.
 */
static int audit_record(struct vpa_run_ctx *ctx, const char *id, const struct exposure_opts *o,
			const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct vpa_lm_target *lt = t->data;
	const struct vpa_lm_canary *a = &lt->audit;
	size_t M = lt->n_audit, L = a->L, last = lt->n_ckpt ? lt->n_ckpt - 1 : 0;
	int exact = a->space <= (double)o->max_exact;
	double *score = xmalloc(xmul(M, sizeof(double)));
	int rc = 0;
	if (exact) {
		size_t S = (size_t)a->space;
		uint32_t *seqs = enumerate(a, S);
		double *lp = xmalloc(xmul(S, sizeof(double)));
		unsigned char *is_audit = xcalloc(S, 1);
		rc = vpa_lm_logppl(lt, last, seqs, S, L, o->sentence_end, lp, err);
		for (size_t j = 0; j < M; j++)
			is_audit[(size_t)space_index(a, a->secret + j * L)] = 1;
		double *riv = xmalloc(xmul(S, sizeof(double)));
		size_t nr = 0;
		for (size_t k = 0; k < S; k++)
			if (!is_audit[k])
				riv[nr++] = lp[k];
		qsort(riv, nr, sizeof(double), cmp_dbl);
		for (size_t j = 0; j < M && !rc; j++) {
			double X = lp[(size_t)space_index(a, a->secret + j * L)];
			/* rank 1 + #{rivals <= X}: the exposure's own convention */
			size_t lo = 0, hi = nr;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (riv[mid] <= X)
					lo = mid + 1;
				else
					hi = mid;
			}
			score[j] = log2((double)nr) - log2((double)(lo + 1));
		}
		free(seqs);
		free(lp);
		free(is_audit);
		free(riv);
	} else {
		rc = vpa_lm_logppl(lt, last, a->secret, M, L, o->sentence_end, score, err);
		for (size_t j = 0; j < M; j++)
			score[j] = -score[j];
	}
	double *in = xmalloc(xmul(M, sizeof(double))), *ou = xmalloc(xmul(M, sizeof(double)));
	size_t n_in = 0, n_out = 0;
	for (size_t j = 0; j < M && !rc; j++) {
		if (!isfinite(score[j]))
			rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: audit canary %zu has no finite score",
				      id, j + 1);
		else if (lt->audit_in[j])
			in[n_in++] = score[j];
		else
			ou[n_out++] = score[j];
	}
	const struct vpa_json *info = t->info;
	double claim = vpa_json_get_num(info, "epsilon", NAN);
	double delta = vpa_json_get_num(info, "delta", NAN);
	struct vpa_one_run res;
	memset(&res, 0, sizeof(res));
	if (!rc && !(claim == claim && delta == delta))
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: target '%s' has audit canaries but no DP "
			      "claim (epsilon, delta)", id, t->id);
	if (!rc && (n_in == 0 || n_out == 0))
		vpa_ctx_warn(ctx, "%s: all %zu audit canaries fell on one side of the coin: the audit "
			     "has nothing to compare (bound 0)", id, M);
	if (!rc && n_in && n_out) {
		qsort(in, n_in, sizeof(double), cmp_dbl);
		qsort(ou, n_out, sizeof(double), cmp_dbl);
		rc = vpa_dp_audit_one_run_scores(in, n_in, ou, n_out, o->audit_alpha, delta, &res);
	}
	if (!rc) {
		const char *acc = vpa_json_get_str(info, "epsilon_accountant");
		struct vpa_json *rec = vpa_json_obj(), *m = vpa_json_obj(), *d = vpa_json_obj(),
				*cn = vpa_json_obj();
		vpa_json_set_str(rec, "attack", id);
		vpa_json_set_str(rec, "sub", "dp-audit");
		vpa_json_set(rec, "layer", vpa_json_null());
		vpa_json_set(rec, "sweep", vpa_json_null());
		vpa_json_set_str(rec, "epsilon_accountant", acc ? acc : "rdp");
		vpa_json_set_num(m, "epsilon", claim);
		set_info_num(m, "epsilon_rdp", info);
		set_info_num(m, "epsilon_pld", info);

		vpa_json_set_num(m, "epsilon_lower_bound", res.epsilon);
		set_info_num(m, "noise_multiplier", info);
		set_info_num(m, "q", info);
		set_info_num(m, "perplexity", info);
		vpa_json_set_str(d, "method", "one-run");
		vpa_json_set_num(d, "alpha", o->audit_alpha);
		vpa_json_set_num(d, "delta", delta);
		vpa_json_set_num(d, "claimed_epsilon", claim);
		vpa_json_set_str(d, "claim_key", "epsilon");
		vpa_json_set_str(d, "accountant", acc ? acc : "rdp");
		const char *unit = lt->dp_unit ? lt->dp_unit : "example-level";
		vpa_json_set_str(d, "adjacency", unit);
		vpa_json_set_str(d, "scope", "covered");
		vpa_json_set_num(cn, "m", res.m);
		vpa_json_set_num(cn, "inserted", (double)n_in);
		vpa_json_set_num(cn, "guesses", res.guesses);
		vpa_json_set_num(cn, "correct", res.correct);
		vpa_json_set_num(cn, "k_plus", res.k_plus);
		vpa_json_set_num(cn, "k_minus", res.k_minus);
		vpa_json_set_num(cn, "pairs", res.pairs);
		vpa_json_set(d, "counts", cn);
		vpa_json_set_str(d, "score", exact ? "exact exposure among the non-canary candidates"
						   : "minus log-perplexity");
		vpa_json_set_str(d, "dp_fault", lt->dp_fault ? lt->dp_fault : "none");
		char note[512];
		snprintf(note, sizeof(note), "%zu canaries of '%s', each inserted once with "
			 "probability 1/2 (%s: one %s added or removed), guessed from their %s on "
			 "one trained model, abstention thresholds corrected over %.0f pairs",
			 M, a->tmpl, unit, strcmp(unit, "user-level") ? "training sentence"
			 : "client's sentences", exact ? "exposure" : "log-perplexity", res.pairs);
		vpa_json_set_str(d, "note", note);
		vpa_json_set(m, "dp_audit", d);
		vpa_json_set(rec, "metrics", m);
		vpa_json_push(out->records, rec);
	}
	free(score);
	free(in);
	free(ou);
	return rc;
}

static struct vpa_json *pt_series(const char *name, const double *x, const double *y, size_t n)
{
	struct vpa_json *s = vpa_json_obj(), *xs = vpa_json_arr(), *ys = vpa_json_arr();
	for (size_t i = 0; i < n; i++) {
		vpa_json_push(xs, vpa_json_num(x[i]));
		vpa_json_push(ys, vpa_json_num(y[i]));
	}
	vpa_json_set_str(s, "name", name);
	vpa_json_set(s, "x", xs);
	vpa_json_set(s, "y", ys);
	return s;
}

static struct vpa_json *lines(const char *id, const char *title, const char *xl, const char *yl,
			      int logx)
{
	struct vpa_json *f = vpa_json_obj();
	vpa_json_set_str(f, "type", "lines");
	vpa_json_set_str(f, "id", id);
	vpa_json_set_str(f, "title", title);
	vpa_json_set_str(f, "xlabel", xl);
	vpa_json_set_str(f, "ylabel", yl);
	vpa_json_set(f, "logx", vpa_json_bool(logx));
	vpa_json_set(f, "series", vpa_json_arr());
	return f;
}

static int run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
	       const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct exposure_opts *o = opts;
	const struct vpa_lm_target *lt = t->data;
	size_t max_exact = (size_t)o->max_exact;
	size_t samples = (size_t)o->samples;
	int over_time = o->over_time;
	int sentence_end = o->sentence_end;
	int rc = 0;
	if (lt->source == VPA_LM_CANDIDATES) {
		struct vpa_json *rec = vpa_json_obj(), *m = vpa_json_obj();
		struct vpa_skewnorm d;
		double extra = NAN, X = lt->cand_canary;
		struct vpa_err fe;
		vpa_err_init(&fe);
		size_t n = lt->n_cand, ties = vpa_exposure_ties(X, lt->cand, n);
		double *cand = xmalloc(xmul(n ? n : 1, sizeof(double)));
		memcpy(cand, lt->cand, n * sizeof(double));
		if (o->drop_canary) {
			if (ties == 0) {
				free(cand);
				vpa_json_free(rec);
				vpa_json_free(m);
				return vpa_fail(err, VPA_EINPUT, NULL, "%s: drop_canary: no candidate "
						"equals canary_logppl %.17g", id, X);
			}
			n = vpa_exposure_drop_canary(X, cand, n);
			ties--;
			if (n == 0) {
				free(cand);
				vpa_json_free(rec);
				vpa_json_free(m);
				return vpa_fail(err, VPA_EINPUT, NULL, "%s: no candidate left after "
						"drop_canary", id);
			}
		} else if (ties > 0) {
			vpa_ctx_warn(ctx, "%s: %zu candidate%s equal%s the canary's log-perplexity "
				     "%.10g: counted as rivals, so the exact exposure is at most "
				     "log2 N - 1; if the candidates hold the canary itself, set "
				     "`drop_canary: true`", id, ties, ties == 1 ? "" : "s",
				     ties == 1 ? "s" : "", X);
		}
		if (n >= 3 && vpa_skewnorm_fit(cand, n, &d, &fe) == 0)
			extra = vpa_exposure_extrapolated(X, &d);
		else if (n >= 3)
			vpa_ctx_warn(ctx, "%s: no extrapolated exposure: %s", id, fe.msg);
		size_t below = 0;
		for (size_t i = 0; i < n; i++)
			below += cand[i] <= X;
		vpa_json_set_str(rec, "attack", id);
		vpa_json_set_str(rec, "sub", lt->cand_name);
		vpa_json_set(rec, "layer", vpa_json_null());
		vpa_json_set(rec, "sweep", vpa_json_null());
		vpa_json_set_num(m, "exposure", vpa_exposure_exact(X, cand, n));
		vpa_json_set_num(m, "exposure_extrapolated", extra);
		vpa_json_set_num(m, "max_exposure", log2((double)n));
		vpa_json_set_num(m, "rank", (double)(below + 1));
		vpa_json_set_num(m, "n_candidates", (double)n);
		vpa_json_set_num(m, "canary_logppl", X);
		vpa_json_set(rec, "metrics", m);
		vpa_json_push(out->records, rec);
		if (n < 3)
			vpa_ctx_warn(ctx, "%s: fewer than 3 candidates: no extrapolated exposure", id);
		free(cand);
		return 0;
	}
	size_t nc = lt->n_canaries;
	if (lt->n_audit && (rc = audit_record(ctx, id, o, t, out, err)))
		return rc;
	if (nc == 0 && lt->n_audit)
		return 0;
	if (nc == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "target '%s' has no canaries: add `canaries:` "
				"to it", t->id);
	size_t last = lt->n_ckpt ? lt->n_ckpt - 1 : 0;
	struct expo *fin = xcalloc(nc, sizeof(*fin));
	for (size_t i = 0; i < nc && !rc; i++) {
		const struct vpa_lm_canary *c = &lt->canaries[i];
		rc = expose(lt, c, last, max_exact, samples, 1, sentence_end, ctx->seed, &fin[i],
			    err);
		if (rc)
			break;
		struct vpa_json *rec = vpa_json_obj(), *m = vpa_json_obj();
		vpa_json_set_str(rec, "attack", id);
		vpa_json_set_str(rec, "sub", c->name);
		vpa_json_set(rec, "layer", vpa_json_null());
		vpa_json_set(rec, "sweep", vpa_json_null());
		vpa_json_set_num(m, "exposure", fin[i].exact);
		vpa_json_set_num(m, "exposure_extrapolated", fin[i].extra);
		vpa_json_set_num(m, "max_exposure", fin[i].max);
		vpa_json_set_num(m, "rank", fin[i].rank);
		vpa_json_set_num(m, "space", c->space);
		vpa_json_set_num(m, "n_candidates", fin[i].n_cand);
		vpa_json_set_num(m, "insertions", (double)c->insertions);
		vpa_json_set_num(m, "others", (double)c->others);
		vpa_json_set_num(m, "canary_logppl", fin[i].logppl);
		set_info_num(m, "epsilon", t->info);
		if (t->info && vpa_json_get(t->info, "epsilon_rdp")) { /* both accountants (issue 28) */
			set_info_num(m, "epsilon_rdp", t->info);
			set_info_num(m, "epsilon_pld", t->info);
			vpa_json_set_str(rec, "epsilon_accountant",
					 vpa_json_get_str(t->info, "epsilon_accountant"));
		}
		set_info_num(m, "noise_multiplier", t->info);
		set_info_num(m, "q", t->info);
		set_info_num(m, t->info && vpa_json_get(t->info, "rounds") ? "rounds" : "steps", t->info);
		set_info_num(m, "perplexity", t->info);
		vpa_json_set(rec, "metrics", m);
		vpa_json_push(out->records, rec);
		if (fin[i].why[0])
			vpa_ctx_warn(ctx, "%s.%s: no extrapolated exposure: %s", id, c->name, fin[i].why);
		if (fin[i].exact == fin[i].exact && fin[i].extra == fin[i].extra && fin[i].rank > 1 &&
		    fabs(fin[i].exact - fin[i].extra) > 1)
			vpa_ctx_warn(ctx, "%s.%s: exact (%.2f bits) and extrapolated (%.2f bits) exposure "
				     "differ by more than 1 bit: the skew-normal fits the candidates "
				     "poorly", id, c->name, fin[i].exact, fin[i].extra);
	}
	if (!rc) {
		/* exposure against insertions: one series per entry (same template and base) */
		char fid[256], title[512];
		snprintf(fid, sizeof(fid), "%s-insertions", id);
		snprintf(title, sizeof(title), "Exposure against insertions: %s on %s", id, t->id);
		struct vpa_json *f = lines(fid, title, "insertions", "exposure (bits)", 1);
		struct vpa_json *ser = vpa_json_get(f, "series");
		double *x = xmalloc(xmul(nc, sizeof(double))), *y = xmalloc(xmul(nc, sizeof(double))),
		       *y2 = xmalloc(xmul(nc, sizeof(double)));
		int any = 0;
		for (size_t i = 0; i < nc;) {
			/* an entry's canaries are consecutive and named BASE-xCOUNT */
			const char *nm0 = lt->canaries[i].name, *dash = strrchr(nm0, '-');
			int bl = dash ? (int)(dash - nm0) : (int)strlen(nm0);
			size_t j = i, n = 0;
			while (j < nc) {
				const char *nj = lt->canaries[j].name, *dj = strrchr(nj, '-');
				if ((dj ? (int)(dj - nj) : (int)strlen(nj)) != bl ||
				    strncmp(nj, nm0, (size_t)bl))
					break; /* "pin-multi-x16" is not in the series of "pin" */
				x[n] = (double)lt->canaries[j].insertions;
				y[n] = fin[j].exact;
				y2[n] = fin[j].extra;
				n++;
				j++;
			}
			if (n == 0) {
				j = i + 1;
			} else if (lt->canaries[i].insertions > 0) {
				char nm[160];
				snprintf(nm, sizeof(nm), "%.*s exact", bl, nm0);
				vpa_json_push(ser, pt_series(nm, x, y, n));
				snprintf(nm, sizeof(nm), "%.*s extrapolated", bl, nm0);
				vpa_json_push(ser, pt_series(nm, x, y2, n));
				any = 1;
			}
			i = j;
		}
		free(x);
		free(y);
		free(y2);
		if (any)
			vpa_json_push(out->figures, f);
		else
			vpa_json_free(f);
	}
	if (!rc && over_time && lt->n_ckpt > 1) {
		char fid[256], title[512];
		snprintf(fid, sizeof(fid), "%s-time", id);
		snprintf(title, sizeof(title), "Exposure against training %ss: %s on %s", lt->time_unit,
			 id, t->id);
		struct vpa_json *f = lines(fid, title, lt->time_unit, "exposure (bits)", 0);
		struct vpa_json *ser = vpa_json_get(f, "series");
		double *x = xmalloc(xmul(lt->n_ckpt, sizeof(double))),
		       *y = xmalloc(xmul(lt->n_ckpt, sizeof(double)));
		for (size_t i = 0; i < nc && !rc; i++) {
			const struct vpa_lm_canary *c = &lt->canaries[i];
			for (size_t k = 0; k < lt->n_ckpt && !rc; k++) {
				struct expo e;
				x[k] = lt->ckpt[k].when;
				if (k == last) {
					y[k] = fin[i].exact == fin[i].exact ? fin[i].exact : fin[i].extra;
					continue;
				}
				int ex = c->space <= (double)max_exact;
				rc = expose(lt, c, k, max_exact, samples, !ex, sentence_end, ctx->seed, &e,
					    err);
				y[k] = ex ? e.exact : e.extra;
			}
			vpa_json_push(ser, pt_series(c->name, x, y, lt->n_ckpt));
		}
		free(x);
		free(y);
		vpa_json_push(out->figures, f);
	}
	free(fin);
	return rc;
}

static char *title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: canary exposure of '%s'", id, target_id);
	return b.data;
}

/* The audit record (epsilon_lower_bound) exists only for a target with audit canaries. */
static const char *never_records(const char *metric, const void *opts, const char *target_id,
				 const void *target_opts, char *buf, size_t cap)
{
	(void)opts;
	const struct vpa_lm_opts *to = target_opts;
	if (strcmp(metric, "epsilon_lower_bound") || to->audit_canaries > 0)
		return NULL;
	snprintf(buf, cap, "its target '%s' has no 'audit_canaries'", target_id);
	return buf;
}

const struct vpa_attack_kind vpa_attack_exposure = {
	.never_records = never_records,
	.name = "exposure",
	.schema = &schema,
	.target_kinds = target_kinds,
	.metrics = metrics,
	.has_layers = 0,
	.doc = "Exposure of the canaries inserted into a `language_model` (Carlini et al. 2019): "
	       "the rank of the secret's log-perplexity among all candidates of its template "
	       "(exact, by enumerating the space with shared prefixes) and the skew-normal "
	       "extrapolation; one record per canary (sub `NAME-xCOUNT`), figures against "
	       "insertions and against training epochs/rounds.",
	.validate = validate,
	.subs = subs,
	.run = run,
	.title = title,
};
