/*
 * attacks/text_linkage.c - attack kind `text_linkage`: COMPRISE D2.3 4.2.6,
 * the successive-text attacker.  Texts sent in pieces (slices of n words)
 * can be put back together when a language model says which piece follows
 * which.  The attacker trains a smoothed 3-gram LM (interpolated
 * Kneser-Ney, learn/ngram.c) on the target's training text and scores a pair
 * of pieces W = w_1 .. w_n, V = v_1 .. v_m by
 *
 *     SF(W, V) = log10 P(w_{n-1} w_n v_1 v_2)
 *              = log10 [p(w_{n-1}) p(w_n | w_{n-1}) p(v_1 | w_{n-1} w_n) p(v_2 | w_n v_1)]
 *
 * (the first word without sentence-start context: a piece starts anywhere).
 * Mated pairs: piece k and piece k+1 of one held-out sentence; non-mated
 * pairs: piece k and a piece of another sentence.  Each slice length gives
 * one score set -> EER, linkability, ... (attacks/evaluate.c), sub `sliceN`.
 */
#include "attacks/attacks.h"
#include "targets/lm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* typed options (config/schema.h), filled by validation */
struct text_linkage_opts {
	struct vpa_strs slices;
	long long nonmated;
	long long order;
	double omega;
	struct vpa_mark slices_at, nonmated_at, order_at, omega_at;
};

static const struct vpa_key keys[] = {
	{"slices", VPA_K_LIST, 0, "[2, 3, 4, 6]", -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[2, 3, 4, 6]", "piece lengths in words (each >= 2)",
	 VPA_AT(struct text_linkage_opts, slices), VPA_MARK(struct text_linkage_opts, slices_at)},
	{"nonmated", VPA_K_INT, 0, "10", 1, 1000, 0, NULL, NULL, "10",
	 "non-successive pairs drawn per successive pair",
	 VPA_AT(struct text_linkage_opts, nonmated), VPA_MARK(struct text_linkage_opts, nonmated_at)},
	{"order", VPA_K_INT, 0, "3", 2, 5, 0, NULL, NULL, "3", "order of the attacker's n-gram LM",
	 VPA_AT(struct text_linkage_opts, order), VPA_MARK(struct text_linkage_opts, order_at)},
	{"omega", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "linkability prior ratio",
	 VPA_AT(struct text_linkage_opts, omega), VPA_MARK(struct text_linkage_opts, omega_at)},
	{NULL},
};
static const struct vpa_schema schema = {"attack text_linkage", keys, sizeof(struct text_linkage_opts)};

static const char *const target_kinds[] = {"language_model", NULL};
static const char *const metrics[] = {
	"eer", "eer_sweep", "cllr", "cllr_min", "linkability", "min_dcf", "zebra.dece",
	"zebra.log10_lr_worst", "n_target", "n_nontarget", "eer_flipped",
	"cllr_min_flipped", "min_dcf_flipped", NULL,
};

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, const void *target_opts,
		    struct vpa_err *err)
{
	const struct text_linkage_opts *o = opts;
	const struct vpa_lm_opts *to = target_opts;
	/* the default [2, 3, 4, 6] needs no check */
	for (size_t i = 0; o->slices.given && i < o->slices.n; i++) {
		char *end;
		long x = strtol(o->slices.v[i], &end, 10);
		if (*end || x < 2 || x > 100) {
			struct vpa_loc l = vpa_mark_loc(ctx->file, o->slices.marks[i]);
			return vpa_fail(err, VPA_EINPUT, &l, "slice lengths must be integers in [2, 100]");
		}
	}
	if (!strcmp(to->source, "import")) {
		/* the attack's mapping */
		struct vpa_loc l = vpa_mark_loc(ctx->file, ctx->self);
		return vpa_fail(err, VPA_EINPUT, &l, "text_linkage needs a trained language_model "
				"(its text), not an import");
	}
	return 0;
}

/* The subs: slice2, slice3, ... as the lengths are written (default [2, 3, 4, 6]). */
static size_t subs(const void *opts, const void *target_opts, const char ***names)
{
	const struct text_linkage_opts *o = opts;
	(void)target_opts;
	static char buf[256][32];
	static size_t used;
	size_t n = o->slices.n;
	*names = xcalloc(n ? n : 1, sizeof(**names));
	for (size_t i = 0; i < n; i++) {
		char *s = buf[used++ % 256];
		snprintf(s, 32, "slice%s", o->slices.v[i]);
		(*names)[i] = s;
	}
	return n;
}

/* SF(W, V) for W ending at a[n-2], a[n-1] and V starting at b[0], b[1]. */
static double sf(const struct vpa_arpa *m, int32_t w1, int32_t w2, int32_t v1, int32_t v2)
{
	int32_t c[3] = {w1, w2, v1};
	return vpa_arpa_logprob(m, NULL, 0, w1) + vpa_arpa_logprob(m, c, 1, w2) +
	       vpa_arpa_logprob(m, c, 2, v1) + vpa_arpa_logprob(m, c + 1, 2, v2);
}

static void push(double **a, size_t *n, size_t *cap, double x)
{
	if (*n == *cap)
		*a = xrealloc(*a, xmul(*cap = *cap ? 2 * *cap : 1024, sizeof(double)));
	(*a)[(*n)++] = x;
}

static int run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
	       const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct text_linkage_opts *opt = opts;
	const struct vpa_lm_target *lt = t->data;
	if (!lt->train_tok || !lt->test_tok || lt->n_test == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "target '%s' has no text to slice", t->id);
	size_t order = (size_t)opt->order;
	size_t nonm = (size_t)opt->nonmated;
	/* the attacker's LM on the training text, over the target's vocabulary
	 * (ids shifted: the trainer adds <s> and </s> itself) */
	size_t V = lt->vocab.n;
	const char **vocab = xmalloc(xmul(V, sizeof(char *)));
	uint32_t *map = xmalloc(xmul(V, sizeof(uint32_t)));
	size_t nv = 0;
	for (size_t i = 0; i < V; i++) {
		if (i == lt->bos || i == lt->eos) {
			map[i] = 0; /* never in a sentence */
			continue;
		}
		map[i] = (uint32_t)nv;
		vocab[nv++] = lt->vocab.words[i];
	}
	const uint32_t **ss = xmalloc(xmul(lt->n_train ? lt->n_train : 1, sizeof(uint32_t *)));
	size_t *lens = xmalloc(xmul(lt->n_train ? lt->n_train : 1, sizeof(size_t)));
	uint32_t *mtok = xmalloc(xmul(lt->train_off[lt->n_train] + 1, sizeof(uint32_t)));
	for (size_t i = 0; i < lt->train_off[lt->n_train]; i++)
		mtok[i] = map[lt->train_tok[i]];
	for (size_t s = 0; s < lt->n_train; s++) {
		ss[s] = mtok + lt->train_off[s];
		lens[s] = lt->train_off[s + 1] - lt->train_off[s];
	}
	struct vpa_arpa *m = NULL;
	int rc = vpa_ngram_train_kn(ss, lens, lt->n_train, vocab, nv, order, &m, err);
	free(ss);
	free(lens);
	free(mtok);
	if (rc)
		goto out;
	/* test ids in the n-gram model */
	int32_t *tid = xmalloc(xmul(lt->test_off[lt->n_test] + 1, sizeof(int32_t)));
	for (size_t i = 0; i < lt->test_off[lt->n_test]; i++)
		tid[i] = vpa_arpa_word_or_unk(m, lt->vocab.words[lt->test_tok[i]]);

	struct vpa_eval_opts o;
	vpa_eval_opts_init(&o);
	o.m.omega = opt->omega;
	o.seed = ctx->seed;
	const struct vpa_strs *sl = &opt->slices; /* written, else the default [2, 3, 4, 6] */
	size_t n_sl = sl->n;
	char fid[256], title[512];
	snprintf(fid, sizeof(fid), "%s-det", id);
	snprintf(title, sizeof(title), "DET: %s on %s", id, t->id);
	struct vpa_json *det = vpa_det_figure(fid, title, vpa_json_arr());
	vpa_json_push(out->figures, det);
	double *xs = xmalloc(xmul(n_sl, sizeof(double))), *eer = xmalloc(xmul(n_sl, sizeof(double))),
	       *lk = xmalloc(xmul(n_sl, sizeof(double)));
	for (size_t k = 0; k < n_sl && !rc; k++) {
		size_t n = (size_t)strtol(sl->v[k], NULL, 10);
		/* pieces: (start in tid, sentence) of every full slice */
		size_t *pst = NULL, *psn = NULL, np = 0, cap = 0;
		for (size_t s = 0; s < lt->n_test; s++) {
			size_t a = lt->test_off[s], e = lt->test_off[s + 1];
			if (e - a < 2 * n)
				continue;
			for (size_t p = a; p + n <= e; p += n) {
				if (np == cap) {
					cap = cap ? 2 * cap : 1024;
					pst = xrealloc(pst, xmul(cap, sizeof(size_t)));
					psn = xrealloc(psn, xmul(cap, sizeof(size_t)));
				}
				pst[np] = p;
				psn[np++] = s;
			}
		}
		double *tar = NULL, *non = NULL;
		size_t nt = 0, nn = 0, ct = 0, cn = 0;
		struct vpa_rng r;
		char rn[64];
		snprintf(rn, sizeof(rn), "text_linkage/%zu", n);
		vpa_rng_split(&r, ctx->seed, rn);
		for (size_t i = 0; i + 1 < np; i++) {
			if (psn[i + 1] != psn[i])
				continue;
			const int32_t *w = tid + pst[i] + n - 2;
			push(&tar, &nt, &ct, sf(m, w[0], w[1], tid[pst[i + 1]], tid[pst[i + 1] + 1]));
			for (size_t j = 0; j < nonm; j++) {
				size_t q;
				int tries = 0;
				do
					q = vpa_rng_below(&r, np);
				while (psn[q] == psn[i] && ++tries < 100);
				if (psn[q] == psn[i])
					continue;
				push(&non, &nn, &cn, sf(m, w[0], w[1], tid[pst[q]], tid[pst[q] + 1]));
			}
		}
		free(pst);
		free(psn);
		char sub[32];
		snprintf(sub, sizeof(sub), "slice%zu", n);
		xs[k] = (double)n;
		eer[k] = lk[k] = NAN;
		if (nt < 2 || nn < 2) {
			vpa_ctx_warn(ctx, "%s.%s: too few held-out sentences of %zu words or more: no score "
				     "set", id, sub, 2 * n);
		} else {
			struct vpa_trials tr;
			vpa_trials_init(&tr);
			tr.tar = tar;
			tr.n_tar = nt;
			tr.non = non;
			tr.n_non = nn;
			size_t before = out->records->n;
			rc = vpa_record_from_scores(ctx, id, sub, -1, &tr, &o, out,
						    vpa_json_get(det, "series"), err);
			tar = non = NULL;
			vpa_trials_release(&tr);
			if (!rc && out->records->n > before) {
				struct vpa_json *rec = out->records->items[before];
				struct vpa_json *mj = vpa_json_get(rec, "metrics");
				eer[k] = vpa_json_get_num(mj, "eer", NAN);
				lk[k] = vpa_json_get_num(mj, "linkability", NAN);
				vpa_json_set_num(mj, "slice", (double)n);
			}
		}
		free(tar);
		free(non);
	}
	if (!rc) {
		snprintf(fid, sizeof(fid), "%s-slices", id);
		snprintf(title, sizeof(title), "Text linkage against slice length: %s on %s", id, t->id);
		struct vpa_json *f = vpa_json_obj(), *ser = vpa_json_arr();
		vpa_json_set_str(f, "type", "lines");
		vpa_json_set_str(f, "id", fid);
		vpa_json_set_str(f, "title", title);
		vpa_json_set_str(f, "xlabel", "slice length (words)");
		vpa_json_set_str(f, "ylabel", "EER / linkability");
		vpa_json_set(f, "logx", vpa_json_bool(0));
		const char *nm[2] = {"EER", "linkability"};
		double *ys[2] = {eer, lk};
		for (int j = 0; j < 2; j++) {
			struct vpa_json *s = vpa_json_obj(), *xa = vpa_json_arr(), *ya = vpa_json_arr();
			for (size_t k = 0; k < n_sl; k++) {
				vpa_json_push(xa, vpa_json_num(xs[k]));
				vpa_json_push(ya, vpa_json_num(ys[j][k]));
			}
			vpa_json_set_str(s, "name", nm[j]);
			vpa_json_set(s, "x", xa);
			vpa_json_set(s, "y", ya);
			vpa_json_push(ser, s);
		}
		vpa_json_set(f, "series", ser);
		vpa_json_push(out->figures, f);
	}
	free(xs);
	free(eer);
	free(lk);
	free(tid);
out:
	vpa_arpa_free(m);
	free(vocab);
	free(map);
	return rc;
}

static char *title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: successive-text linkage on the text of '%s'", id, target_id);
	return b.data;
}

const struct vpa_attack_kind vpa_attack_text_linkage = {
	.name = "text_linkage",
	.schema = &schema,
	.target_kinds = target_kinds,
	.metrics = metrics,
	.has_layers = 0,
	.doc = "COMPRISE's successive-text attacker: held-out sentences of a `language_model` "
	       "target cut into pieces of N words; a Kneser-Ney 3-gram LM trained on the target's "
	       "training text scores SF(W,V) = log10 P(w_{n-1} w_n v_1 v_2) for successive and "
	       "non-successive pairs; one score set per slice length (sub `sliceN`) with EER, "
	       "linkability, ...",
	.validate = validate,
	.subs = subs,
	.run = run,
	.title = title,
};
