/*
 * targets/lm_build.c - building a `language_model` target from its options
 * (struct vpa_lm_opts, checked by targets/lm.c): the canaries (templates
 * parsed against the model's vocabulary, secrets chosen or read, the other
 * secrets of multiple insertion), an imported ARPA model or candidates file,
 * or a trained model: the corpus read and its sentences selected, the
 * vocabulary, canary copies inserted, text anonymisation (targets/textanon.c),
 * federated clients and simulated confidence weights, then the network
 * trained by targets/lm_train.c.  Split from targets/lm.c.
 */
#include "targets/lm_int.h"

#include "metrics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t vocab_lookup(void *ctx, const char *w)
{
	const struct vpa_vocab *v = ctx;
	uint32_t id = vpa_vocab_id(v, w);
	return id == VPA_VOCAB_UNK && strcmp(w, "<unk>") ? UINT32_MAX : id;
}

static uint32_t arpa_lookup(void *ctx, const char *w)
{
	int32_t id = vpa_arpa_word(ctx, w);
	return id == VPA_ARPA_NONE ? UINT32_MAX : (uint32_t)id;
}

/* Secret from text: tokens matched position by position against the template. */
static int secret_from_text(struct vpa_lm_canary *c, const char *text,
			    uint32_t (*lookup)(void *, const char *), void *ctx, struct vpa_err *err)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	size_t n = vpa_tokenize(text, strlen(text), 1, &b);
	int rc = 0;
	if (n != c->L) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': secret '%s' has %zu words, the "
				"template %zu", c->name, text, n, c->L);
	} else {
		char *s = b.data;
		c->secret = xmalloc(xmul(c->L, sizeof(uint32_t)));
		for (size_t i = 0; i < n && !rc; i++) {
			char *sp = strchr(s, ' ');
			if (sp)
				*sp = 0;
			uint32_t id = lookup(ctx, s);
			int ok = 0;
			for (size_t k = 0; k < c->pos[i].n_alt; k++)
				ok |= c->pos[i].alt[k] == id;
			if (!ok)
				rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': secret word %zu '%s' "
						"does not fit the template '%s'", c->name, i + 1, s, c->tmpl);
			c->secret[i] = id;
			s = sp ? sp + 1 : s;
		}
	}
	if (!rc)
		c->secret_text = xstrdup(text);
	vpa_buf_release(&b);
	return rc;
}

static void random_secret(const struct vpa_lm_canary *c, struct vpa_rng *r, uint32_t *out)
{
	for (size_t i = 0; i < c->L; i++)
		out[i] = c->pos[i].alt[vpa_rng_below(r, c->pos[i].n_alt)];
}

static char *secret_text(const struct vpa_vocab *v, const uint32_t *s, size_t L)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (size_t i = 0; i < L; i++)
		vpa_buf_printf(&b, "%s%s", i ? " " : "", v->words[s[i]]);
	return b.data;
}

void vpa_lm_free(struct vpa_target *t)
{
	struct vpa_lm_target *lt = t->data;
	if (!lt)
		return;
	vpa_nn_free(lt->net);
	vpa_vocab_release(&lt->vocab);
	free(lt->train_tok);
	free(lt->train_off);
	free(lt->test_tok);
	free(lt->test_off);
	for (size_t i = 0; i < lt->n_ckpt; i++)
		free(lt->ckpt[i].params);
	free(lt->ckpt);
	vpa_arpa_free(lt->arpa);
	for (size_t i = 0; i < lt->n_canaries; i++)
		vpa_lm_canary_release(&lt->canaries[i]);
	free(lt->canaries);
	free(lt->cand);
	free(lt->cand_name);
	vpa_lm_canary_release(&lt->audit);
	free(lt->audit_in);
	free(lt);
	t->data = NULL;
}

static int read_names(const char *path, char ***names, size_t *n, struct vpa_err *err)
{
	char *buf;
	size_t len;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_lm_parse_names(path, buf, len, names, n, err);
	free(buf);
	return rc;
}

/* Canaries of a model: parse templates, choose secrets (tracked + others). */
struct canary_plan {
	uint32_t *seq;  /* (L) */
	size_t L, count;
};

static int make_canaries(struct vpa_run_ctx *ctx, const struct vpa_lm_opts *o,
			 struct vpa_lm_target *lt, uint32_t (*lookup)(void *, const char *),
			 void *lctx, const char *const *names, size_t n_names,
			 const uint32_t *vocab_ids, size_t n_vids, int trained,
			 struct canary_plan **plan, size_t *n_plan, struct vpa_err *err)
{
	struct vpa_rng r;
	vpa_rng_split(&r, ctx->seed, "lm/canaries");
	int rc = 0;
	size_t cap_p = 0;
	for (size_t i = 0; i < o->canaries.n && !rc; i++) {
		const struct vpa_lm_canary_opts *c =
			VPA_OPTLIST_AT(struct vpa_lm_canary_opts, o->canaries, i);
		char base[64];
		vpa_lm_canary_base(c->name, i, base, sizeof(base));
		const char *tmpl = c->template;
		const char *sec = c->secret;
		size_t others = (size_t)c->others;
		/* insertions: the counts written, else the table's default [16] */
		const struct vpa_strs *ins = &c->insertions;
		size_t n_ins = trained ? ins->n : 1;
		size_t first = lt->n_canaries;
		lt->canaries = xrealloc(lt->canaries, xmul(first + n_ins, sizeof(*lt->canaries)));
		for (size_t j = 0; j < n_ins && !rc; j++) {
			struct vpa_lm_canary *cc = &lt->canaries[lt->n_canaries];
			size_t count = trained ? (size_t)strtol(ins->v[j], NULL, 10) : 0;
			char name[96];
			if (trained)
				snprintf(name, sizeof(name), "%s-x%zu", base, count);
			else
				snprintf(name, sizeof(name), "%s", base);
			if ((rc = vpa_lm_parse_template(name, tmpl, lookup, lctx, names, n_names,
							vocab_ids, n_vids, cc, err)))
				break;
			lt->n_canaries++;
			cc->insertions = count;
			cc->others = others;
			if (sec) {
				if ((rc = secret_from_text(cc, sec, lookup, lctx, err)))
					break;
			} else {
				cc->secret = xmalloc(xmul(cc->L, sizeof(uint32_t)));
				/* distinct from the earlier tracked secrets of this template */
				for (int tries = 0;; tries++) {
					random_secret(cc, &r, cc->secret);
					int dup = 0;
					for (size_t k = first; k < lt->n_canaries - 1; k++)
						dup |= !memcmp(lt->canaries[k].secret, cc->secret,
							       cc->L * sizeof(uint32_t));
					if (!dup || tries > 100)
						break;
				}
				cc->secret_text = secret_text(&lt->vocab, cc->secret, cc->L);
			}
			if (!trained)
				continue;
			/* plan: the canary, then its `others` */
			for (size_t o = 0; o <= others; o++) {
				if (*n_plan == cap_p)
					*plan = xrealloc(*plan, xmul(cap_p = cap_p ? 2 * cap_p : 16,
								      sizeof(**plan)));
				struct canary_plan *p = &(*plan)[(*n_plan)++];
				p->L = cc->L;
				p->count = count;
				p->seq = xmalloc(xmul(cc->L, sizeof(uint32_t)));
				if (o == 0)
					memcpy(p->seq, cc->secret, cc->L * sizeof(uint32_t));
				else
					random_secret(cc, &r, p->seq);
			}
		}
		/* exclusions: the other tracked secrets of this entry */
		for (size_t j = first; j < lt->n_canaries && !rc; j++) {
			struct vpa_lm_canary *cc = &lt->canaries[j];
			size_t ne = lt->n_canaries - first - 1;
			cc->excl = xmalloc(xmul(ne ? ne : 1, cc->L * sizeof(uint32_t)));
			for (size_t k = first; k < lt->n_canaries; k++)
				if (k != j)
					memcpy(cc->excl + (cc->n_excl++) * cc->L, lt->canaries[k].secret,
					       cc->L * sizeof(uint32_t));
		}
	}
	return rc;
}

/*
 * The audit canaries (issue 28): audit_canaries distinct secrets of
 * audit_template, each inserted once with probability 1/2 from their own seeded
 * stream (so adding them changes no other draw), appended to the plan.  The
 * one-run audit of Steinke, Nasr, Jagielski 2023 needs exactly this: m
 * canaries whose inclusions are independent fair coins.
 */
static int make_audit(struct vpa_run_ctx *ctx, const struct vpa_lm_opts *o,
		      struct vpa_lm_target *lt, const char *const *names, size_t n_names,
		      const uint32_t *vids, size_t n_vids, struct canary_plan **plan, size_t *n_plan,
		      struct vpa_err *err)
{
	struct vpa_lm_canary *a = &lt->audit;
	int rc = vpa_lm_parse_template("audit", o->audit_template, vocab_lookup, &lt->vocab, names,
				       n_names, vids, n_vids, a, err);
	if (rc)
		return rc;
	size_t M = (size_t)o->audit_canaries, L = a->L;
	if (a->space < 2.0 * (double)M)
		return vpa_fail(err, VPA_EINPUT, NULL, "audit_canaries %zu: the template '%s' has only "
				"%.0f secrets in this vocabulary (at least twice as many needed)", M,
				a->tmpl, a->space);
	struct vpa_rng r, coin;
	vpa_rng_split(&r, ctx->seed, "lm/audit-secrets");
	vpa_rng_split(&coin, ctx->seed, "lm/audit-coins");
	a->secret = xmalloc(xmul(xmul(M, L), sizeof(uint32_t)));
	lt->audit_in = xmalloc(M);
	lt->n_audit = M;
	/* distinct secrets: a hash set over the drawn sequences */
	size_t cap = 1;
	while (cap < 4 * M)
		cap *= 2;
	size_t *slot = xmalloc(xmul(cap, sizeof(size_t)));
	for (size_t k = 0; k < cap; k++)
		slot[k] = SIZE_MAX;
	for (size_t j = 0; j < M; j++) {
		uint32_t *s = a->secret + j * L;
		for (;;) {
			random_secret(a, &r, s);
			uint64_t h = 1469598103934665603u;
			for (size_t t = 0; t < L; t++)
				h = (h ^ s[t]) * 1099511628211u;
			size_t k = (size_t)(h & (cap - 1));
			int dup = 0;
			while (slot[k] != SIZE_MAX && !dup) {
				dup = !memcmp(a->secret + slot[k] * L, s, L * sizeof(uint32_t));
				k = (k + 1) & (cap - 1);
			}
			if (dup)
				continue;
			slot[k] = j;
			break;
		}
		lt->audit_in[j] = vpa_rng_uniform(&coin) < 0.5;
		if (!lt->audit_in[j])
			continue;
		size_t cap_p = *n_plan;
		*plan = xrealloc(*plan, xmul(cap_p + 1, sizeof(**plan)));
		struct canary_plan *p = &(*plan)[(*n_plan)++];
		p->L = L;
		p->count = 1;
		p->seq = xmalloc(xmul(L, sizeof(uint32_t)));
		memcpy(p->seq, s, L * sizeof(uint32_t));
	}
	free(slot);
	return 0;
}

static int build_import(struct vpa_run_ctx *ctx, const struct vpa_lm_opts *o,
			struct vpa_lm_target *lt, struct vpa_json *info, struct vpa_err *err)
{
	const char *model = o->model;
	int rc = 0;
	if (model) {
		char *p = vpa_path_join(ctx->dir, model);
		lt->source = VPA_LM_ARPA;
		rc = vpa_arpa_load(p, &lt->arpa, err);
		free(p);
		if (rc)
			return rc;
		size_t V = vpa_arpa_vocab_size(lt->arpa);
		uint32_t *vids = xmalloc(xmul(V, sizeof(uint32_t)));
		size_t nv = 0;
		for (size_t i = 0; i < V; i++)
			if ((int32_t)i != vpa_arpa_bos(lt->arpa) && (int32_t)i != vpa_arpa_eos(lt->arpa) &&
			    (int32_t)i != vpa_arpa_unk(lt->arpa))
				vids[nv++] = (uint32_t)i;
		/* the vocabulary for secret texts and {word}: the ARPA words */
		vpa_vocab_init(&lt->vocab);
		for (size_t i = 0; i < V; i++)
			vpa_vocab_add(&lt->vocab, vpa_arpa_word_str(lt->arpa, (int32_t)i));
		struct canary_plan *plan = NULL;
		size_t n_plan = 0;
		rc = make_canaries(ctx, o, lt, arpa_lookup, lt->arpa, vpa_first_names,
				   vpa_n_first_names, vids, nv, 0, &plan, &n_plan, err);
		free(vids);
		vpa_json_set_str(info, "model", model);
		vpa_json_set_num(info, "order", (double)vpa_arpa_order(lt->arpa));
		vpa_json_set_num(info, "vocabulary", (double)V);
		struct vpa_json *cnt = vpa_json_arr();
		for (size_t k = 1; k <= vpa_arpa_order(lt->arpa); k++)
			vpa_json_push(cnt, vpa_json_num((double)vpa_arpa_count(lt->arpa, k)));
		vpa_json_set(info, "ngrams", cnt);
		return rc;
	}
	const char *cands = o->candidates;
	char *p = vpa_path_join(ctx->dir, cands);
	lt->source = VPA_LM_CANDIDATES;
	rc = vpa_read_score_list(p, &lt->cand, &lt->n_cand, err);
	free(p);
	lt->cand_canary = o->canary_logppl;
	lt->cand_name = xstrdup("canary");
	vpa_json_set_str(info, "candidates", cands);
	vpa_json_set_num(info, "n_candidates", (double)lt->n_cand);
	return rc;
}

static int build_trained(struct vpa_run_ctx *ctx, const struct vpa_lm_opts *o,
			 struct vpa_lm_target *lt, struct vpa_json *info, struct vpa_err *err)
{
	struct vpa_corpus corp;
	struct vpa_corpus_opts co;
	vpa_corpus_init(&corp);
	vpa_corpus_opts_init(&co);
	co.lower = 1;
	int rc = 0;
	const char *kind = o->corpus;
	const char *cp = o->corpus_path;
	int brown = !strcmp(kind, "brown");
	/* corpus_path has no default in the table: it depends on `corpus` */
	char *path = vpa_path_join(ctx->dir, cp ? cp : (brown ? "../data/brown" : "corpus.txt"));
	char **extra = NULL;
	size_t n_extra = 0;
	struct sents tr = {0}, ho = {0};
	struct vpa_gazetteer *gz = NULL;
	struct canary_plan *plan = NULL;
	size_t n_plan = 0;
	char **anon_tok = NULL;
	size_t *keep = NULL, n_keep = 0;
	const char **names = NULL;
	size_t n_names = 0;
	uint32_t *vids = NULL;
	size_t *canary_group = NULL;
	float *sent_w = NULL;
	size_t n_canary_total = 0;
	if (brown)
		rc = vpa_corpus_load_brown(&corp, path,
					   (size_t)o->max_documents, &co, err);
	else
		rc = vpa_corpus_load_text(&corp, path, &co, err);
	if (rc) {
		if (brown && err && strlen(err->msg) + 50 < sizeof(err->msg))
			strcat(err->msg, " (`make deps` fetches the Brown corpus)");
		goto out;
	}
	const char *np = o->names;
	if (np) {
		char *p = vpa_path_join(ctx->dir, np);
		rc = read_names(p, &extra, &n_extra, err);
		free(p);
		if (rc)
			goto out;
	}
	/* sentence selection */
	size_t max_len = (size_t)o->max_len;
	size_t max_s = (size_t)o->max_sentences;
	keep = xmalloc(xmul(corp.n_sent ? corp.n_sent : 1, sizeof(size_t)));
	for (size_t s = 0; s < corp.n_sent && (!max_s || n_keep < max_s); s++) {
		size_t len = corp.sent_off[s + 1] - corp.sent_off[s];
		if (len >= 1 && len <= max_len)
			keep[n_keep++] = s;
	}
	if (n_keep < 20) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "corpus '%s': only %zu usable sentences (at least "
				"20 needed)", path, n_keep);
		goto out;
	}
	double hfrac = o->heldout;
	size_t every = (size_t)fmax(2, floor(1 / hfrac + 0.5));
	/* anonymisation works on strings: the training words after the strategy */
	const char *strategy = o->anonymise;
	int strat = vpa_anon_strategy_parse(strategy);
	names = xmalloc(xmul(vpa_n_first_names + n_extra, sizeof(char *)));
	for (size_t i = 0; i < vpa_n_first_names; i++)
		names[n_names++] = vpa_first_names[i];
	for (size_t i = 0; i < n_extra; i++)
		names[n_names++] = extra[i];
	/* vocabulary from the training sentences; canary words added */
	size_t *trs = xmalloc(xmul(n_keep, sizeof(size_t)));
	size_t n_trs = 0;
	for (size_t i = 0; i < n_keep; i++)
		if (i % every != every - 1)
			trs[n_trs++] = keep[i];
	vpa_vocab_init(&lt->vocab);
	vpa_vocab_build(&lt->vocab, &corp, trs, n_trs, (size_t)o->vocab_size, 1);
	free(trs);
	for (size_t i = 0; i <= o->canaries.n; i++) {
		/* the canaries' templates, then the audit canaries' */
		const char *tmpl = i < o->canaries.n
			? VPA_OPTLIST_AT(struct vpa_lm_canary_opts, o->canaries, i)->template
			: o->audit_canaries > 0 ? o->audit_template : NULL;
		if (!tmpl)
			break;
		if (strstr(tmpl, "{d"))
			for (int d = 0; d < 10; d++) {
				char w[2] = {(char)('0' + d), 0};
				vpa_vocab_add(&lt->vocab, w);
			}
		if (strstr(tmpl, "{name}"))
			for (size_t k = 0; k < n_names; k++)
				vpa_vocab_add(&lt->vocab, names[k]);
		/* literal words and choices */
		struct vpa_buf b;
		vpa_buf_init(&b);
		char *t = xstrdup(tmpl);
		for (char *q = t; *q; q++)
			if (*q == '{' || *q == '}' || *q == '|' || *q == ':')
				*q = ' ';
		vpa_tokenize(t, strlen(t), 1, &b);
		char *save = NULL;
		for (char *w = b.data ? strtok_r(b.data, " ", &save) : NULL; w;
		     w = strtok_r(NULL, " ", &save))
			if (strcmp(w, "choice") && strcmp(w, "name") && strcmp(w, "word") &&
			    !(w[0] == 'd' && w[1] >= '1' && w[1] <= '9' && !w[2]))
				vpa_vocab_add(&lt->vocab, w);
		free(t);
		vpa_buf_release(&b);
	}
	/* anonymisation placeholders must be words of the model too */
	static const char *const ph[] = {"<redacted>", "<person>", "<number>", "<proper>"};
	if (strat != VPA_ANON_NONE)
		for (size_t i = 0; i < 4; i++)
			vpa_vocab_add(&lt->vocab, ph[i]);
	if (strat == VPA_ANON_NAMED_PLACEHOLDER) /* indices beyond 50 map to <unk> */
		for (int k = 1; k <= 50; k++)
			for (size_t i = 1; i < 4; i++) {
				char w[32];
				snprintf(w, sizeof(w), "%.*s_%d>", (int)strlen(ph[i]) - 1, ph[i], k);
				vpa_vocab_add(&lt->vocab, w);
			}
	size_t V_words = lt->vocab.n; /* {word}: every word so far but <unk> */
	vids = xmalloc(xmul(V_words, sizeof(uint32_t)));
	size_t n_vids = 0;
	for (size_t i = 1; i < V_words; i++)
		if (lt->vocab.words[i][0] != '<')
			vids[n_vids++] = (uint32_t)i;
	lt->bos = vpa_vocab_add(&lt->vocab, "<s>");
	lt->eos = vpa_vocab_add(&lt->vocab, "</s>");
	if ((rc = make_canaries(ctx, o, lt, vocab_lookup, &lt->vocab, names, n_names, vids, n_vids,
				1, &plan, &n_plan, err)))
		goto out;
	if (o->audit_canaries > 0 &&
	    (rc = make_audit(ctx, o, lt, names, n_names, vids, n_vids, &plan, &n_plan, err)))
		goto out;

	/* token lists: training text, then the canary copies; anonymised as strings */
	{
		size_t n_canary_sents = 0, Kc = 0;
		for (size_t i = 0; i < n_plan; i++)
			n_canary_sents += plan[i].count;
		n_canary_total = n_canary_sents;
		size_t n_train_text = n_keep - n_keep / every;
		size_t n_all = n_train_text + n_canary_sents;
		const char **tok = NULL;
		const char **tags = NULL;
		size_t *off = xmalloc(xmul(n_all + 1, sizeof(size_t))), *doc = xmalloc(xmul(n_all, sizeof(size_t)));
		size_t nt = 0, cap = 0, si = 0;
		off[0] = 0;
		canary_group = xmalloc(xmul(n_canary_sents ? n_canary_sents : 1, sizeof(size_t)));
		for (size_t i = 0; i < n_keep; i++) {
			size_t s = keep[i];
			size_t a = corp.sent_off[s], e = corp.sent_off[s + 1];
			if (i % every == every - 1) { /* held out (never anonymised: utility on real text) */
				uint32_t buf[1024];
				for (size_t k = a; k < e; k++)
					buf[k - a] = vpa_vocab_id(&lt->vocab, corp.word[k]);
				vpa_lm_sents_push(&ho, buf, e - a, NULL);
				continue;
			}
			if (nt + (e - a) > cap) {
				cap = 2 * (nt + (e - a)) + 1024;
				tok = xrealloc(tok, xmul(cap, sizeof(char *)));
				tags = xrealloc(tags, xmul(cap, sizeof(char *)));
			}
			for (size_t k = a; k < e; k++) {
				tok[nt] = corp.word[k];
				tags[nt++] = corp.tag ? corp.tag[k] : NULL;
			}
			doc[si] = corp.sent_doc[s];
			off[++si] = nt;
		}
		/* canaries: each copy is a sentence of its own document (a speaker's) */
		size_t gi = 0;
		for (size_t p = 0; p < n_plan; p++) {
			for (size_t k = 0; k < plan[p].count; k++) {
				if (nt + plan[p].L > cap) {
					cap = 2 * (nt + plan[p].L) + 1024;
					tok = xrealloc(tok, xmul(cap, sizeof(char *)));
					tags = xrealloc(tags, xmul(cap, sizeof(char *)));
				}
				for (size_t t = 0; t < plan[p].L; t++) {
					tok[nt] = lt->vocab.words[plan[p].seq[t]];
					tags[nt++] = NULL;
				}
				doc[si] = corp.n_doc + p;
				canary_group[gi++] = p;
				off[++si] = nt;
			}
		}
		struct vpa_textanon_out ao = {0};
		const char *const *final_tok = tok;
		const size_t *final_off = off;
		if (strat != VPA_ANON_NONE) {
			struct vpa_rng ar;
			vpa_rng_split(&ar, ctx->seed, "lm/anonymise");
			gz = vpa_gazetteer_new(&corp, (const char *const *)extra, n_extra);
			rc = vpa_textanon(gz, (enum vpa_anon_strategy)strat, tok,
					  corp.tag ? tags : NULL, off, doc, n_all, &ar, &ao, err);
			final_tok = (const char *const *)ao.tok;
			final_off = ao.off;
			vpa_json_set_num(info, "anonymised_spans", (double)ao.n_spans);
		}
		if (!rc)
			for (size_t s = 0; s < n_all; s++) {
				size_t a = final_off[s], e = final_off[s + 1];
				uint32_t *buf = xmalloc(xmul(e - a + 1, sizeof(uint32_t)));
				for (size_t k = a; k < e; k++)
					buf[k - a] = vpa_vocab_id(&lt->vocab, final_tok[k]);
				vpa_lm_sents_push(&tr, buf, e - a, NULL);
				free(buf);
			}
		vpa_textanon_out_release(&ao);
		free(tok);
		free(tags);
		/* federated clients need the documents */
		if (!rc && !strcmp(o->training, "federated")) {
			struct vpa_rng cr;
			vpa_rng_split(&cr, ctx->seed, "lm/clients");
			int by_doc = !strcmp(o->clients, "document");
			size_t K = vpa_lm_assign_clients(&tr, doc, corp.n_doc, by_doc,
						  (size_t)o->n_clients, o->zipf_s, n_canary_sents,
						  canary_group, &cr);
			vpa_json_set_num(info, "n_clients", (double)K);
			Kc = K;
		}
		free(off);
		free(doc);
		if (rc)
			goto out;

		/* confidence weights */
		const char *cm = o->confidence;
		int tok_w = 0;
		if (strcmp(cm, "none")) {
			struct vpa_rng wr;
			vpa_rng_split(&wr, ctx->seed, "lm/transcription");
			size_t n_sub = vpa_lm_noisy_transcription(&tr, n_train_text, V_words, o->wer,
								  &wr);
			vpa_json_set_num(info, "substituted_tokens", (double)n_sub);
			if (!strcmp(cm, "token")) {
				tok_w = 1;
			} else {
				double th = o->threshold;
				size_t dropped = 0;
				sent_w = xmalloc(xmul(tr.n, sizeof(float)));
				for (size_t s = 0; s < tr.n; s++) {
					double m = 0;
					size_t a = tr.off[s], e = tr.off[s + 1];
					for (size_t k = a; k < e; k++)
						m += tr.conf[k];
					m = e > a ? m / (double)(e - a) : 1;
					if (!strcmp(cm, "hard")) {
						sent_w[s] = m >= th ? 1.0f : 0.0f;
						dropped += m < th;
					} else {
						sent_w[s] = (float)m;
					}
				}
				if (!strcmp(cm, "hard"))
					vpa_json_set_num(info, "dropped_utterances", (double)dropped);
			}
		}

		if (!o->lstm) {
			vpa_json_set_str(info, "model", "none");
			vpa_json_set_num(info, "train_sentences", (double)n_train_text);
			vpa_json_set_num(info, "heldout_sentences", (double)ho.n);
			goto text_only;
		}
		/* the network */
		size_t V = lt->vocab.n, E = (size_t)o->embedding, Hd = (size_t)o->hidden;
		size_t nl = (size_t)o->layers;
		lt->net = vpa_nn_new(0);
		vpa_nn_add_embedding(lt->net, V, E);
		for (size_t l = 0; l < nl; l++)
			vpa_nn_add_lstm(lt->net, Hd, 0);
		vpa_nn_add_dense(lt->net, V);
		vpa_nn_init_params(lt->net, ctx->seed ^ 0x6c6du);
		vpa_nn_params(lt->net, &lt->n_params);

		struct train_cfg c = {0};
		c.epochs = (size_t)o->epochs;
		c.batch = (size_t)o->batch;
		c.lr = o->lr;
		c.grad_clip = o->grad_clip;
		c.sigma = o->noise_multiplier;
		c.clip = o->clip;
		c.delta = o->delta;
		c.federated = tr.client != NULL;
		c.rounds = (size_t)o->rounds;
		c.cohort = (size_t)o->cohort;
		c.local_epochs = (size_t)o->local_epochs;
		c.local_batch = (size_t)o->local_batch;
		c.local_lr = o->local_lr;
		c.server_lr = o->server_lr;
		c.beta1 = o->beta1;
		c.beta2 = o->beta2;
		c.tau = o->tau;
		c.fedadam = !strcmp(o->server, "fedadam") ? 1
			    : !strcmp(o->server, "fedadam_reddi") ? 2 : 0;
		c.server_eps = o->server_eps;
		c.utt_mean = !strcmp(o->loss_average, "utterance");
		c.n_ckpt = (size_t)o->checkpoints;
		c.fault = !strcmp(o->dp_fault, "skip_noise")	  ? 1
			  : !strcmp(o->dp_fault, "skip_clipping") ? 2 : 0;
		double target_eps = o->target_epsilon;
		double q = c.federated ? fmin(1, (double)c.cohort / (double)Kc)
				       : (double)c.batch / (double)tr.n;
		double steps = c.federated ? (double)c.rounds
					   : (double)(c.epochs * ((tr.n + c.batch - 1) / c.batch));
		if (!c.federated && q > 1)
			q = 1;
		if (target_eps > 0) {
			if ((rc = vpa_dp_sigma(q, target_eps, steps, c.delta, &c.sigma, err)))
				goto out;
		}
		c.dp = c.sigma > 0;
		size_t total = c.federated ? c.rounds : c.epochs;
		lt->ckpt = xcalloc(c.n_ckpt + 1, sizeof(*lt->ckpt));
		lt->time_unit = c.federated ? "round" : "epoch";
		vpa_json_set_str(info, "model", "lstm");
		vpa_json_set_num(info, "vocabulary", (double)V);
		vpa_json_set_num(info, "embedding", (double)E);
		vpa_json_set_num(info, "hidden", (double)Hd);
		vpa_json_set_num(info, "layers", (double)nl);
		vpa_json_set_num(info, "parameters", (double)lt->n_params);
		vpa_json_set_num(info, "train_sentences", (double)n_train_text);
		vpa_json_set_num(info, "train_tokens", (double)tr.off[n_train_text]);
		vpa_json_set_num(info, "canary_sentences", (double)n_canary_sents);
		vpa_json_set_num(info, "heldout_sentences", (double)ho.n);
		vpa_json_set_str(info, "training", c.federated ? "federated" : (c.dp ? "dp-sgd" : "adam"));
		vpa_json_set_num(info, "noise_multiplier", c.sigma);
		vpa_json_set_num(info, "clip", c.dp ? c.clip : NAN);
		vpa_json_set_num(info, "delta", c.dp ? c.delta : NAN);
		vpa_json_set_str(info, "anonymise", strategy);
		vpa_json_set_str(info, "confidence", cm);
		lt->dp_fault = o->dp_fault;
		if (c.dp) {
			/* the neighbouring datasets the accountant's epsilon is about: DP-SGD
			 * clips and samples sentences, federated DP clients */
			lt->dp_unit = c.federated ? "user-level" : "example-level";
			vpa_json_set_str(info, "dp_adjacency", lt->dp_unit);
			vpa_json_set_str(info, "dp_fault", o->dp_fault);
		}
		if (c.federated)
			rc = vpa_lm_train_federated(ctx, lt, &tr, Kc, sent_w, tok_w, &c, info, err);
		else
			rc = vpa_lm_train_central(ctx, lt, &tr, sent_w, tok_w, &c, info, err);
		(void)total;
		if (rc)
			goto out;
		if (!c.dp)
			vpa_json_set(info, "epsilon", vpa_json_null());
		double ppl;
		if ((rc = vpa_lm_perplexity(lt->net, ho.tok, ho.off, ho.n, lt->bos, lt->eos, &ppl, err)))
			goto out;
		vpa_json_set_num(info, "perplexity", ppl);
		struct vpa_json *ck = vpa_json_arr();
		for (size_t i = 0; i < lt->n_ckpt; i++)
			vpa_json_push(ck, vpa_json_num(lt->ckpt[i].when));
		vpa_json_set(info, "checkpoints", ck);
	text_only:;
	}
	lt->source = VPA_LM_LSTM;
	/* keep the text (the canary copies are the last sentences of tr) */
	lt->n_train = tr.n - n_canary_total;
	lt->train_tok = tr.tok;
	lt->train_off = tr.off;
	lt->n_test = ho.n;
	lt->test_tok = ho.tok;
	lt->test_off = ho.off;
	tr.tok = ho.tok = NULL;
	tr.off = ho.off = NULL;
out:
	free(path);
	for (size_t i = 0; i < n_extra; i++)
		free(extra[i]);
	free(extra);
	free(names);
	free(vids);
	free(keep);
	free(canary_group);
	free(sent_w);
	for (size_t i = 0; i < n_plan; i++)
		free(plan[i].seq);
	free(plan);
	free(anon_tok);
	vpa_gazetteer_free(gz);
	vpa_lm_sents_release(&tr);
	vpa_lm_sents_release(&ho);
	vpa_corpus_release(&corp);
	return rc;
}

int vpa_lm_build(struct vpa_run_ctx *ctx, const void *opts, struct vpa_target *out,
		 struct vpa_err *err)
{
	const struct vpa_lm_opts *o = opts;
	struct vpa_lm_target *lt = xcalloc(1, sizeof(*lt));
	struct vpa_json *info = vpa_json_obj();
	out->data = lt;
	out->info = info;
	int imp = !strcmp(o->source, "import");
	out->simulated = 0;
	vpa_json_set_str(info, "source", imp ? "import" : "train");
	int rc = imp ? build_import(ctx, o, lt, info, err) : build_trained(ctx, o, lt, info, err);
	if (!rc) {
		struct vpa_json *ca = vpa_json_arr();
		for (size_t i = 0; i < lt->n_canaries; i++) {
			struct vpa_json *o = vpa_json_obj();
			vpa_json_set_str(o, "name", lt->canaries[i].name);
			vpa_json_set_str(o, "template", lt->canaries[i].tmpl);
			vpa_json_set_str(o, "secret", lt->canaries[i].secret_text);
			vpa_json_set_num(o, "insertions", (double)lt->canaries[i].insertions);
			vpa_json_set_num(o, "others", (double)lt->canaries[i].others);
			vpa_json_set_num(o, "space", lt->canaries[i].space);
			vpa_json_push(ca, o);
		}
		vpa_json_set(info, "canaries", ca);
		if (lt->n_audit) {
			/* which audit canaries were inserted: the audit's ground truth */
			struct vpa_json *au = vpa_json_obj(), *in = vpa_json_arr();
			size_t n_in = 0;
			for (size_t i = 0; i < lt->n_audit; i++) {
				vpa_json_push(in, vpa_json_num(lt->audit_in[i]));
				n_in += lt->audit_in[i];
			}
			vpa_json_set_str(au, "template", lt->audit.tmpl);
			vpa_json_set_num(au, "canaries", (double)lt->n_audit);
			vpa_json_set_num(au, "inserted", (double)n_in);
			vpa_json_set_num(au, "space", lt->audit.space);
			vpa_json_set(au, "included", in);
			vpa_json_set(info, "audit_canaries", au);
		}
	}
	return rc;
}
