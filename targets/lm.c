/*
 * targets/lm.c - target kind `language_model` (contracts in targets/lm.h,
 * documentation in targets/README.md "language_model").
 *
 * Trained models: a word-level LSTM LM on the neural engine (embedding ->
 * LSTM x layers -> dense over the vocabulary, softmax cross-entropy of the
 * next word), on the Brown corpus or a plain-text corpus, with canaries
 * inserted before training and optional text anonymisation and simulated
 * ASR confidence weights.  Three ways to train:
 *   central      Adam on shuffled mini-batches;
 *   central DP   DP-SGD (Abadi et al. 2016): Poisson-sampled lots of expected
 *                size `batch`, per-sentence clipping to `clip`, Gaussian noise
 *                noise_multiplier * clip, epsilon from the RDP accountant;
 *   federated    Liu et al. (Facebook): clients from a Zipf assignment of
 *                sentences (or one per document), Poisson cohort sampling with
 *                rate q, client SGD for K local epochs, weighted averaging of
 *                the client deltas, FedAvg or FedAdam server (eq. 6-8); with DP
 *                each delta is clipped to `clip`, N(0, (sigma clip)^2) is added
 *                to their (unweighted) sum, divided by the expected cohort size.
 * Imports: an ARPA model (scored by core/io_arpa.c) or a candidates file.
 */
#include "targets/lm.h"

#include "core/la.h"
#include "metrics/metrics.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- canaries ---------------------------------------------------------------- */

void vpa_lm_canary_release(struct vpa_lm_canary *c)
{
	for (size_t i = 0; i < c->L; i++)
		free(c->pos[i].alt);
	free(c->pos);
	free(c->name);
	free(c->tmpl);
	free(c->secret);
	free(c->secret_text);
	free(c->excl);
	memset(c, 0, sizeof(*c));
}

static void pos_push(struct vpa_lm_canary *c, size_t *cap, uint32_t *alt, size_t n)
{
	if (c->L == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		c->pos = xrealloc(c->pos, xmul(*cap, sizeof(*c->pos)));
	}
	c->pos[c->L].alt = alt;
	c->pos[c->L].n_alt = n;
	c->L++;
}

static int add_word_pos(const char *cname, const char *w, uint32_t (*lookup)(void *, const char *),
			void *ctx, struct vpa_lm_canary *c, size_t *cap, struct vpa_err *err)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	size_t n = vpa_tokenize(w, strlen(w), 1, &b);
	int rc = 0;
	char *s = b.data ? b.data : (char *)"";
	for (size_t i = 0; i < n && !rc; i++) {
		char *sp = strchr(s, ' ');
		if (sp)
			*sp = 0;
		uint32_t id = lookup(ctx, s);
		if (id == UINT32_MAX) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "canary '%s': word '%s' is not in the model's vocabulary", cname, s);
			break;
		}
		uint32_t *a = xmalloc(sizeof(uint32_t));
		a[0] = id;
		pos_push(c, cap, a, 1);
		s = sp ? sp + 1 : s + strlen(s);
	}
	vpa_buf_release(&b);
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Sort and deduplicate alternatives. */
static size_t uniq_u32(uint32_t *a, size_t n)
{
	qsort(a, n, sizeof(uint32_t), cmp_u32);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!m || a[m - 1] != a[i])
			a[m++] = a[i];
	return m;
}

int vpa_lm_parse_template(const char *cname, const char *tmpl,
			  uint32_t (*lookup)(void *ctx, const char *w), void *ctx,
			  const char *const *names, size_t n_names, const uint32_t *vocab_ids,
			  size_t n_vocab_ids, struct vpa_lm_canary *c, struct vpa_err *err)
{
	memset(c, 0, sizeof(*c));
	size_t cap = 0;
	int rc = 0;
	const char *p = tmpl;
	char *text = NULL;
	while (*p && !rc) {
		const char *br = strchr(p, '{');
		size_t n = br ? (size_t)(br - p) : strlen(p);
		if (memchr(p, '}', n)) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': '}' without '{' in '%s'", cname,
				      tmpl);
			break;
		}
		text = xmalloc(n + 1);
		memcpy(text, p, n);
		text[n] = 0;
		rc = add_word_pos(cname, text, lookup, ctx, c, &cap, err);
		free(text);
		text = NULL;
		if (rc || !br)
			break;
		const char *end = strchr(br, '}');
		if (!end) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': '{' without '}' in '%s'", cname,
				      tmpl);
			break;
		}
		size_t sl = (size_t)(end - br - 1);
		char *slot = xmalloc(sl + 1);
		memcpy(slot, br + 1, sl);
		slot[sl] = 0;
		if (slot[0] == 'd' && sl == 2 && slot[1] >= '1' && slot[1] <= '9') {
			for (int k = 0; k < slot[1] - '0' && !rc; k++) {
				uint32_t *a = xmalloc(10 * sizeof(uint32_t));
				for (int d = 0; d < 10; d++) {
					char w[2] = {(char)('0' + d), 0};
					a[d] = lookup(ctx, w);
					if (a[d] == UINT32_MAX) {
						rc = vpa_fail(err, VPA_EINPUT, NULL,
							      "canary '%s': digit '%s' is not in the "
							      "model's vocabulary", cname, w);
						break;
					}
				}
				pos_push(c, &cap, a, 10);
				if (!rc)
					c->pos[c->L - 1].n_alt = uniq_u32(a, 10);
			}
		} else if (!strcmp(slot, "name")) {
			uint32_t *a = xmalloc(xmul(n_names ? n_names : 1, sizeof(uint32_t)));
			size_t m = 0;
			for (size_t i = 0; i < n_names; i++) {
				uint32_t id = lookup(ctx, names[i]);
				if (id != UINT32_MAX)
					a[m++] = id;
			}
			if (m < 2) {
				free(a);
				rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': fewer than 2 names of "
						"the name list are in the model's vocabulary", cname);
			} else {
				pos_push(c, &cap, a, uniq_u32(a, m));
			}
		} else if (!strcmp(slot, "word")) {
			if (n_vocab_ids < 2) {
				rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': {word} needs a vocabulary",
					      cname);
			} else {
				uint32_t *a = xmalloc(xmul(n_vocab_ids, sizeof(uint32_t)));
				memcpy(a, vocab_ids, n_vocab_ids * sizeof(uint32_t));
				pos_push(c, &cap, a, uniq_u32(a, n_vocab_ids));
			}
		} else if (!strncmp(slot, "choice:", 7)) {
			size_t m = 0, mc = 8;
			uint32_t *a = xmalloc(mc * sizeof(uint32_t));
			char *save = NULL;
			for (char *w = strtok_r(slot + 7, "|", &save); w && !rc;
			     w = strtok_r(NULL, "|", &save)) {
				while (*w == ' ')
					w++;
				char *e = w + strlen(w);
				while (e > w && e[-1] == ' ')
					*--e = 0;
				struct vpa_buf tb;
				vpa_buf_init(&tb);
				size_t nt = vpa_tokenize(w, strlen(w), 1, &tb);
				if (nt != 1) {
					rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': choice '%s' "
							"must be one word", cname, w);
				} else {
					uint32_t id = lookup(ctx, tb.data);
					if (id == UINT32_MAX)
						rc = vpa_fail(err, VPA_EINPUT, NULL,
							      "canary '%s': word '%s' is not in the model's "
							      "vocabulary", cname, tb.data);
					if (m == mc)
						a = xrealloc(a, (mc *= 2) * sizeof(uint32_t));
					a[m++] = id;
				}
				vpa_buf_release(&tb);
			}
			if (!rc && (m = uniq_u32(a, m)) < 2)
				rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': {choice:...} needs at "
						"least 2 different words", cname);
			if (rc)
				free(a);
			else
				pos_push(c, &cap, a, m);
		} else {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': unknown slot '{%s}': expected "
					"{dN} (N = 1..9), {name}, {word} or {choice:a|b}", cname, slot);
		}
		free(slot);
		p = end + 1;
	}
	if (!rc && c->L == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': empty template", cname);
	if (!rc) {
		int slots = 0;
		c->space = 1;
		for (size_t i = 0; i < c->L; i++) {
			c->space *= (double)c->pos[i].n_alt;
			slots += c->pos[i].n_alt > 1;
		}
		if (!slots)
			rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': template '%s' has no slot",
				      cname, tmpl);
		else if (!(c->space <= 1e300)) /* inf: log2 of it is no exposure */
			rc = vpa_fail(err, VPA_EINPUT, NULL, "canary '%s': the template allows more "
				      "than 1e300 secrets (the product of its slots' choices)", cname);
	}
	if (rc)
		vpa_lm_canary_release(c);
	else {
		c->name = xstrdup(cname);
		c->tmpl = xstrdup(tmpl);
	}
	return rc;
}

/* ---- LSTM inference with explicit state (prefix sharing) --------------------- */

struct infer {
	size_t V, E, nl, H;
	const float *emb;                 /* (V, E) */
	const float *wih[2], *whh[2], *b[2]; /* (4H, in), (4H, H), (4H) */
	const float *W, *bo;              /* (V, H), (V) */
};

static void infer_init(struct infer *f, struct vpa_nn *net)
{
	struct vpa_nn_tensor t;
	size_t nly = vpa_nn_n_layers(net);
	memset(f, 0, sizeof(*f));
	vpa_nn_tensor(net, 0, 0, &t);
	f->emb = t.data;
	f->V = t.shape[0];
	f->E = t.shape[1];
	f->nl = nly - 2;
	for (size_t l = 0; l < f->nl; l++) {
		vpa_nn_tensor(net, 1 + l, 0, &t);
		f->wih[l] = t.data;
		f->H = t.shape[0] / 4;
		vpa_nn_tensor(net, 1 + l, 1, &t);
		f->whh[l] = t.data;
		vpa_nn_tensor(net, 1 + l, 2, &t);
		f->b[l] = t.data;
	}
	vpa_nn_tensor(net, nly - 1, 0, &t);
	f->W = t.data;
	vpa_nn_tensor(net, nly - 1, 1, &t);
	f->bo = t.data;
}

static float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

/*
 * One step for m states: h, c (nl, m, H) updated in place with input tokens
 * tok (m).  gates: scratch (m, 4H); x: scratch (m, max(E, H)).
 */
static void infer_step(const struct infer *f, size_t m, const uint32_t *tok, float *h, float *c,
		       float *gates, float *x)
{
	size_t H = f->H, G = 4 * H;
	for (size_t i = 0; i < m; i++)
		memcpy(x + i * f->E, f->emb + (size_t)tok[i] * f->E, f->E * sizeof(float));
	size_t in = f->E;
	for (size_t l = 0; l < f->nl; l++) {
		float *hl = h + l * m * H, *cl = c + l * m * H;
		for (size_t i = 0; i < m; i++)
			memcpy(gates + i * G, f->b[l], G * sizeof(float));
		vpa_sgemm(0, 1, m, G, in, 1, x, in, f->wih[l], in, 1, gates, G);
		vpa_sgemm(0, 1, m, G, H, 1, hl, H, f->whh[l], H, 1, gates, G);
		for (size_t i = 0; i < m; i++) {
			float *g = gates + i * G, *hh = hl + i * H, *cc = cl + i * H;
			for (size_t j = 0; j < H; j++) {
				float ig = sigm(g[j]), fg = sigm(g[H + j]), gg = tanhf(g[2 * H + j]),
				      og = sigm(g[3 * H + j]);
				cc[j] = fg * cc[j] + ig * gg;
				hh[j] = og * tanhf(cc[j]);
			}
		}
		memcpy(x, hl, m * H * sizeof(float));
		in = H;
	}
}

/* log-softmax normaliser (natural log) of each of m rows of logits. */
static void infer_logits(const struct infer *f, size_t m, const float *htop, float *logits,
			 double *lse)
{
	for (size_t i = 0; i < m; i++)
		memcpy(logits + i * f->V, f->bo, f->V * sizeof(float));
	vpa_sgemm(0, 1, m, f->V, f->H, 1, htop, f->H, f->W, f->H, 1, logits, f->V);
	for (size_t i = 0; i < m; i++) {
		const float *z = logits + i * f->V;
		float mx = z[0];
		for (size_t k = 1; k < f->V; k++)
			mx = z[k] > mx ? z[k] : mx;
		double s = 0;
		for (size_t k = 0; k < f->V; k++)
			s += exp((double)(z[k] - mx));
		lse[i] = mx + log(s);
	}
}

struct sort_ctx {
	const uint32_t *seqs;
	size_t L;
};

static int cmp_seq(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *s = arg;
	const uint32_t *x = s->seqs + *(const size_t *)a * s->L, *y = s->seqs + *(const size_t *)b * s->L;
	for (size_t t = 0; t < s->L; t++)
		if (x[t] != y[t])
			return x[t] < y[t] ? -1 : 1;
	return 0;
}

#define CHUNK 512

/* eos: UINT32_MAX scores the L tokens only; else also -log2 p(eos | <s> x_1 .. x_L). */
static int lstm_logppl(struct vpa_nn *net, uint32_t bos, uint32_t eos, const uint32_t *seqs,
		       size_t M, size_t L, double *out, struct vpa_err *err)
{
	struct infer f;
	infer_init(&f, net);
	for (size_t i = 0; i < M * L; i++)
		if (seqs[i] >= f.V)
			return vpa_fail(err, VPA_EINPUT, NULL, "token id %u out of range", seqs[i]);
	size_t H = f.H, nl = f.nl, XW = f.E > H ? f.E : H;
	size_t *perm = xmalloc(xmul(M, sizeof(size_t)));
	for (size_t i = 0; i < M; i++)
		perm[i] = i;
	struct sort_ctx sc = {seqs, L};
	qsort_r(perm, M, sizeof(size_t), cmp_seq, &sc);
	/* g[i]: unique-prefix id of sorted sequence i at the current depth */
	size_t *g = xcalloc(M, sizeof(size_t)), *g2 = xmalloc(xmul(M, sizeof(size_t)));
	double *cum = xcalloc(1, sizeof(double)), *cum2 = NULL;
	size_t U = 1;
	float *h = xcalloc(nl * H, sizeof(float)), *c = xcalloc(nl * H, sizeof(float));
	size_t rows = M < CHUNK ? M : CHUNK; /* no level has more than M prefixes */
	float *gates = xmalloc(xmul(rows * 4 * H, sizeof(float)));
	float *xs = xmalloc(xmul(rows * XW, sizeof(float)));
	float *logits = xmalloc(xmul(xmul(rows, f.V), sizeof(float)));
	double *lse = xmalloc(rows * sizeof(double));
	infer_step(&f, 1, &bos, h, c, gates, xs);
	for (size_t t = 0; t < L; t++) {
		/* children: unique prefixes of length t+1 */
		size_t U2 = 0;
		size_t *par = xmalloc(xmul(M, sizeof(size_t)));
		uint32_t *ctok = xmalloc(xmul(M, sizeof(uint32_t)));
		for (size_t i = 0; i < M; i++) {
			uint32_t tk = seqs[perm[i] * L + t];
			if (i == 0 || g[i] != g[i - 1] || tk != ctok[U2 - 1]) {
				par[U2] = g[i];
				ctok[U2++] = tk;
			}
			g2[i] = U2 - 1;
		}
		cum2 = xmalloc(xmul(U2, sizeof(double)));
		/* logits of the parents, chunk by chunk; children are grouped by parent */
		size_t ch = 0;
		for (size_t p0 = 0; p0 < U; p0 += CHUNK) {
			size_t pm = U - p0 < CHUNK ? U - p0 : CHUNK;
			const float *htop = h + (nl - 1) * U * H + p0 * H;
			infer_logits(&f, pm, htop, logits, lse);
			for (; ch < U2 && par[ch] < p0 + pm; ch++) {
				size_t pl = par[ch] - p0;
				cum2[ch] = cum[par[ch]] + (double)logits[pl * f.V + ctok[ch]] - lse[pl];
			}
		}
		free(cum);
		cum = cum2;
		if (t + 1 < L || eos != UINT32_MAX) {
			/* branch: gather the parents' states, step with the child tokens */
			float *h2 = xmalloc(xmul(xmul(nl, U2), H * sizeof(float)));
			float *c2 = xmalloc(xmul(xmul(nl, U2), H * sizeof(float)));
			for (size_t l = 0; l < nl; l++)
				for (size_t u = 0; u < U2; u++) {
					memcpy(h2 + (l * U2 + u) * H, h + (l * U + par[u]) * H, H * sizeof(float));
					memcpy(c2 + (l * U2 + u) * H, c + (l * U + par[u]) * H, H * sizeof(float));
				}
			free(h);
			free(c);
			h = h2;
			c = c2;
			/* step in chunks: the state arrays are (nl, U2, H), a chunk is a
			 * strided view, so copy it out and back */
			float *hc = xmalloc(xmul(nl * rows, H * sizeof(float)));
			float *cc = xmalloc(xmul(nl * rows, H * sizeof(float)));
			for (size_t u0 = 0; u0 < U2; u0 += CHUNK) {
				size_t um = U2 - u0 < CHUNK ? U2 - u0 : CHUNK;
				for (size_t l = 0; l < nl; l++) {
					memcpy(hc + l * um * H, h + (l * U2 + u0) * H, um * H * sizeof(float));
					memcpy(cc + l * um * H, c + (l * U2 + u0) * H, um * H * sizeof(float));
				}
				infer_step(&f, um, ctok + u0, hc, cc, gates, xs);
				for (size_t l = 0; l < nl; l++) {
					memcpy(h + (l * U2 + u0) * H, hc + l * um * H, um * H * sizeof(float));
					memcpy(c + (l * U2 + u0) * H, cc + l * um * H, um * H * sizeof(float));
				}
			}
			free(hc);
			free(cc);
		}
		free(par);
		free(ctok);
		size_t *tmp = g;
		g = g2;
		g2 = tmp;
		U = U2;
	}
	if (eos != UINT32_MAX) {
		/* the sentence end after each full sequence (states stepped with x_L above) */
		for (size_t p0 = 0; p0 < U; p0 += CHUNK) {
			size_t pm = U - p0 < CHUNK ? U - p0 : CHUNK;
			infer_logits(&f, pm, h + (nl - 1) * U * H + p0 * H, logits, lse);
			for (size_t u = 0; u < pm; u++)
				cum[p0 + u] += (double)logits[u * f.V + eos] - lse[u];
		}
	}
	for (size_t i = 0; i < M; i++)
		out[perm[i]] = -cum[g[i]] / log(2.0);
	free(perm);
	free(g);
	free(g2);
	free(cum);
	free(h);
	free(c);
	free(gates);
	free(xs);
	free(logits);
	free(lse);
	return 0;
}

static int arpa_logppl(const struct vpa_arpa *m, const uint32_t *seqs, size_t M, size_t L,
		       int sentence_end, double *out, struct vpa_err *err)
{
	size_t V = vpa_arpa_vocab_size(m);
	if (sentence_end && vpa_arpa_eos(m) == VPA_ARPA_NONE)
		return vpa_fail(err, VPA_EINPUT, NULL, "sentence_end: the ARPA model has no </s>");
	int32_t *ctx = xmalloc(xmul(L + 1, sizeof(int32_t)));
	int rc = 0;
	for (size_t i = 0; i < M && !rc; i++) {
		double lp = 0;
		ctx[0] = vpa_arpa_bos(m);
		for (size_t t = 0; t < L; t++) {
			uint32_t w = seqs[i * L + t];
			if (w >= V) {
				rc = vpa_fail(err, VPA_EINPUT, NULL, "token id %u out of range", w);
				break;
			}
			lp += vpa_arpa_logprob(m, ctx, t + 1, (int32_t)w);
			ctx[t + 1] = (int32_t)w;
		}
		if (sentence_end && !rc)
			lp += vpa_arpa_logprob(m, ctx, L + 1, vpa_arpa_eos(m));
		out[i] = -lp * log2(10.0);
	}
	free(ctx);
	return rc;
}

int vpa_lm_logppl(const struct vpa_lm_target *t, size_t ckpt, const uint32_t *seqs, size_t M,
		  size_t L, int sentence_end, double *out, struct vpa_err *err)
{
	if (M == 0 || L == 0)
		return 0;
	if (t->source == VPA_LM_ARPA)
		return arpa_logppl(t->arpa, seqs, M, L, sentence_end, out, err);
	if (t->source != VPA_LM_LSTM)
		return vpa_fail(err, VPA_EINPUT, NULL, "this language model cannot score text");
	struct vpa_nn *net = t->net;
	struct vpa_nn *tmp = NULL;
	if (!net)
		return vpa_fail(err, VPA_EINPUT, NULL, "the language model has no network ('lstm: "
				"false'): nothing to score");
	if (t->n_ckpt && ckpt < t->n_ckpt) {
		size_t np;
		tmp = vpa_nn_clone(t->net);
		float *p = vpa_nn_params(tmp, &np);
		memcpy(p, t->ckpt[ckpt].params, np * sizeof(float));
		net = tmp;
	}
	int rc = lstm_logppl(net, t->bos, sentence_end ? t->eos : UINT32_MAX, seqs, M, L, out, err);
	vpa_nn_free(tmp);
	return rc;
}

/* ---- training data ------------------------------------------------------------ */

struct sents {
	uint32_t *tok;  /* (off[n]) */
	size_t *off;    /* (n + 1) */
	float *conf;    /* (off[n]) token confidences, or NULL */
	size_t n, cap_t, cap_s;
	size_t *client; /* (n) federated client of each sentence, or NULL */
};

static void sents_push(struct sents *s, const uint32_t *t, size_t len, const float *conf)
{
	if (!s->off) {
		s->cap_s = 1024;
		s->off = xmalloc(s->cap_s * sizeof(size_t));
		s->off[0] = 0;
	}
	if (s->n + 2 > s->cap_s) {
		s->cap_s *= 2;
		s->off = xrealloc(s->off, xmul(s->cap_s, sizeof(size_t)));
	}
	size_t o = s->off[s->n];
	if (o + len > s->cap_t) {
		while (o + len > s->cap_t)
			s->cap_t = s->cap_t ? 2 * s->cap_t : 65536;
		s->tok = xrealloc(s->tok, xmul(s->cap_t, sizeof(uint32_t)));
		if (s->conf || conf)
			s->conf = xrealloc(s->conf, xmul(s->cap_t, sizeof(float)));
	}
	memcpy(s->tok + o, t, len * sizeof(uint32_t));
	if (s->conf)
		for (size_t i = 0; i < len; i++)
			s->conf[o + i] = conf ? conf[i] : 1.0f;
	s->off[++s->n] = o + len;
}

static void sents_release(struct sents *s)
{
	free(s->tok);
	free(s->off);
	free(s->conf);
	free(s->client);
	memset(s, 0, sizeof(*s));
}

/* A training batch of sentences idx (n): inputs <s> w1..wn, labels w1..wn </s>. */
struct batch {
	uint32_t *ids, *lab;
	float *w;
	size_t *off;
	size_t cap, cap_s;
};

void vpa_lm_utt_mean_weights(const size_t *off, size_t n, float *w)
{
	size_t R = off[n], n_eff = 0;
	for (size_t j = 0; j < n; j++) {
		int any = 0;
		for (size_t r = off[j]; r < off[j + 1]; r++)
			any |= w[r] != 0;
		n_eff += any;
	}
	if (n_eff == 0)
		return;
	for (size_t j = 0; j < n; j++) {
		size_t T = off[j + 1] - off[j];
		double f = (double)R / ((double)n_eff * (double)T);
		for (size_t r = off[j]; r < off[j + 1]; r++)
			w[r] = (float)(w[r] * f);
	}
}

/* utt_mean: the loss of Liu et al. eq. 2-4, the mean over the batch's
 * sentences of each one's (weighted) mean over its tokens; else the mean
 * over all the batch's tokens. */
static void batch_make(struct batch *b, const struct sents *s, const size_t *idx, size_t n,
		       uint32_t bos, uint32_t eos, const float *sent_w, int tok_w, int utt_mean,
		       struct vpa_nn_batch *nb, struct vpa_nn_targets *tg)
{
	size_t rows = 0;
	for (size_t i = 0; i < n; i++)
		rows += s->off[idx[i] + 1] - s->off[idx[i]] + 1;
	if (rows > b->cap) {
		b->cap = 2 * rows;
		b->ids = xrealloc(b->ids, xmul(b->cap, sizeof(uint32_t)));
		b->lab = xrealloc(b->lab, xmul(b->cap, sizeof(uint32_t)));
		b->w = xrealloc(b->w, xmul(b->cap, sizeof(float)));
	}
	if (n + 1 > b->cap_s) {
		b->cap_s = 2 * (n + 1);
		b->off = xrealloc(b->off, xmul(b->cap_s, sizeof(size_t)));
	}
	size_t r = 0;
	b->off[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t a = s->off[idx[i]], e = s->off[idx[i] + 1];
		b->ids[r] = bos;
		for (size_t k = a; k < e; k++) {
			b->lab[r] = s->tok[k];
			b->w[r] = tok_w && s->conf ? s->conf[k] : (sent_w ? sent_w[idx[i]] : 1.0f);
			r++;
			b->ids[r] = s->tok[k];
		}
		b->lab[r] = eos;
		b->w[r] = tok_w ? 1.0f : (sent_w ? sent_w[idx[i]] : 1.0f);
		r++;
		b->off[i + 1] = r;
	}
	nb->n_seq = n;
	nb->off = b->off;
	nb->x = NULL;
	nb->ids = b->ids;
	vpa_nn_targets_init(tg);
	tg->labels = b->lab;
	tg->weights = (sent_w || tok_w || utt_mean) ? b->w : NULL;
	if (utt_mean)
		vpa_lm_utt_mean_weights(b->off, n, b->w);
}

static void batch_release(struct batch *b)
{
	free(b->ids);
	free(b->lab);
	free(b->w);
	free(b->off);
}

int vpa_lm_perplexity(struct vpa_nn *net, const uint32_t *tok, const size_t *off, size_t n,
		      uint32_t bos, uint32_t eos, double *ppl, struct vpa_err *err)
{
	struct sents s = {(uint32_t *)tok, (size_t *)off, NULL, n, 0, 0, NULL};
	struct batch b = {0};
	double nll = 0, rows = 0;
	int rc = 0;
	size_t *idx = xmalloc(64 * sizeof(size_t));
	for (size_t i0 = 0; i0 < n && !rc; i0 += 64) {
		size_t m = n - i0 < 64 ? n - i0 : 64;
		for (size_t i = 0; i < m; i++)
			idx[i] = i0 + i;
		struct vpa_nn_batch nb;
		struct vpa_nn_targets tg;
		batch_make(&b, &s, idx, m, bos, eos, NULL, 0, 0, &nb, &tg);
		double loss;
		if ((rc = vpa_nn_forward(net, &nb, VPA_NN_EVAL, err)) ||
		    (rc = vpa_nn_loss(net, &tg, &loss, NULL, err)))
			break;
		nll += loss * (double)b.off[m];
		rows += (double)b.off[m];
	}
	free(idx);
	batch_release(&b);
	*ppl = rows > 0 ? exp(nll / rows) : NAN;
	return rc;
}

/* ---- the kind's keys ------------------------------------------------------------ */

static const struct vpa_key canary_keys[] = {
	{"name", VPA_K_ID, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "pin",
	 "records' sub prefix (`pin-x16` for 16 insertions); default c1, c2, ..."},
	{"template", VPA_K_STR, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL,
	 "\"my pin number is {d4}\"",
	 "text with slots {dN} (N digits), {name}, {word}, {choice:a|b|c}"},
	{"insertions", VPA_K_LIST, 0, "[16]", -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[1, 4, 16, 64]",
	 "one canary per count, each with its own random secret inserted that many times "
	 "(trained models only: a validation error on an import); the others are left out of "
	 "each one's candidate set"},
	{"others", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "8",
	 "multiple insertion: this many other random secrets of the same format are inserted "
	 "as often as the canary (they stay candidates)"},
	{"secret", VPA_K_STR, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "\"my pin number is 1 2 3 4\"",
	 "the inserted text (required for an imported ARPA model; else drawn at random)"},
	{NULL},
};
static const struct vpa_schema canary_schema = {"canary", canary_keys};

/* The name of canary i (0-based) of the list: its `name`, else c1, c2, ... */
static void canary_base(const struct vpa_ynode *c, size_t i, char *buf, size_t cap)
{
	const char *nm = vpa_cfg_str(c, &canary_schema, "name");
	if (nm)
		snprintf(buf, cap, "%s", nm);
	else
		snprintf(buf, cap, "c%zu", i + 1);
}

static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "train", -INFINITY, INFINITY, 0, "train|import", NULL, "train",
	 "`train` an LSTM LM, or `import` an ARPA model (`model`) or log-perplexities "
	 "(`candidates`)"},
	{"corpus", VPA_K_ENUM, 0, "brown", -INFINITY, INFINITY, 0, "brown|text", NULL, "brown",
	 "training text: the Brown corpus folder (`corpus_path`, default ../data/brown) or a "
	 "plain-text file, one sentence per line"},
	{"corpus_path", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "../data/brown",
	 "the Brown folder or the text file (relative to the scenario)"},
	{"max_documents", VPA_K_INT, 0, "0", 0, 1e9, 0, NULL, NULL, "50",
	 "Brown: read at most this many documents (0 = all)"},
	{"max_sentences", VPA_K_INT, 0, "0", 0, 1e9, 0, NULL, NULL, "5000",
	 "use the first N sentences of at most max_len words (0 = all)"},
	{"max_len", VPA_K_INT, 0, "40", 2, 1000, 0, NULL, NULL, "40",
	 "sentences longer than this are left out"},
	{"heldout", VPA_K_NUM, 0, "0.05", 0, 0.5, VPA_KF_OPEN_LO, NULL, NULL, "0.05",
	 "fraction of the sentences kept for the held-out perplexity (every k-th)"},
	{"vocab_size", VPA_K_INT, 0, "10000", 10, 1000000, 0, NULL, NULL, "10000",
	 "the most frequent words kept, plus <unk>; words the canaries need are added"},
	{"embedding", VPA_K_INT, 0, "256", 1, 65536, 0, NULL, NULL, "128", "word embedding size"},
	{"hidden", VPA_K_INT, 0, "256", 1, 65536, 0, NULL, NULL, "256", "LSTM hidden size"},
	{"lstm", VPA_K_BOOL, 0, "true", -INFINITY, INFINITY, 0, NULL, NULL, "false",
	 "false: prepare the text only (for `text_linkage`), train no network"},
	{"layers", VPA_K_INT, 0, "1", 1, 2, 0, NULL, NULL, "1", "LSTM layers (1 or 2)"},
	{"training", VPA_K_ENUM, 0, "central", -INFINITY, INFINITY, 0, "central|federated", NULL,
	 "federated", "central (Adam or DP-SGD) or federated (FedAvg/FedAdam)"},
	{"epochs", VPA_K_INT, 0, "10", 1, 100000, 0, NULL, NULL, "20", "central: passes over the data"},
	{"batch", VPA_K_INT, 0, "32", 1, 1000000, 0, NULL, NULL, "32",
	 "central: sentences per batch (DP-SGD: the expected lot size)"},
	{"lr", VPA_K_NUM, 0, "0.002", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.002",
	 "central: Adam learning rate"},
	{"grad_clip", VPA_K_NUM, 0, "5", 0, INFINITY, 0, NULL, NULL, "5",
	 "central without DP: clip the global gradient norm (0 = off)"},
	{"noise_multiplier", VPA_K_NUM, 0, "0", 0, 1000, 0, NULL, NULL, "1.1",
	 "DP noise sigma (std = sigma * clip); 0 = no DP unless target_epsilon is set"},
	{"clip", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "0.5",
	 "DP clipping norm C: per sentence (DP-SGD) or per client delta (federated)"},
	{"target_epsilon", VPA_K_NUM, 0, "0", 0, 1e6, 0, NULL, NULL, "1",
	 "when > 0: choose the noise multiplier that meets this epsilon (vpa_dp_sigma)"},
	{"delta", VPA_K_NUM, 0, "1e-5", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "1e-5",
	 "DP delta"},
	{"clients", VPA_K_ENUM, 0, "zipf", -INFINITY, INFINITY, 0, "zipf|document", NULL, "zipf",
	 "federated: sentences assigned to devices by a Zipf law, or one client per document"},
	{"n_clients", VPA_K_INT, 0, "500", 2, 10000000, 0, NULL, NULL, "1000",
	 "federated, zipf: number of devices"},
	{"zipf_s", VPA_K_NUM, 0, "1", 0, 10, 0, NULL, NULL, "1",
	 "federated, zipf: P(client k) proportional to k^-s"},
	{"cohort", VPA_K_INT, 0, "50", 1, 10000000, 0, NULL, NULL, "100",
	 "federated: expected clients per round (Poisson sampling, q = cohort / clients)"},
	{"rounds", VPA_K_INT, 0, "100", 1, 10000000, 0, NULL, NULL, "200", "federated: rounds"},
	{"local_epochs", VPA_K_INT, 0, "1", 1, 1000, 0, NULL, NULL, "1",
	 "federated: client SGD epochs K"},
	{"local_lr", VPA_K_NUM, 0, "0.5", 0, 100, VPA_KF_OPEN_LO, NULL, NULL, "0.5",
	 "federated: client SGD learning rate"},
	{"local_batch", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "8",
	 "federated: client mini-batch (sentences)"},
	{"server", VPA_K_ENUM, 0, "fedadam", -INFINITY, INFINITY, 0,
	 "fedavg|fedadam|fedadam_reddi", NULL, "fedadam",
	 "federated: server update: `fedadam` as Liu et al. eq. 6-8 (bias correction, "
	 "`server_eps` inside the square root), `fedadam_reddi` as Reddi et al. 2021 (no bias "
	 "correction, `tau` outside), `fedavg`"},
	{"server_lr", VPA_K_NUM, 0, "0.01", 0, 100, VPA_KF_OPEN_LO, NULL, NULL, "0.01",
	 "federated: server learning rate eta (FedAvg: 1 is plain averaging)"},
	{"beta1", VPA_K_NUM, 0, "0.9", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.9", "FedAdam beta1"},
	{"beta2", VPA_K_NUM, 0, "0.99", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.99", "FedAdam beta2"},
	{"server_eps", VPA_K_NUM, 0, "1e-6", 0, 1, VPA_KF_OPEN_LO, NULL, NULL, "1e-6",
	 "fedadam: epsilon_g of Liu et al. eq. 8, inside the square root (1e-6 = tau 1e-3 "
	 "where the second moment is 0)"},
	{"tau", VPA_K_NUM, 0, "0.001", 0, 1, VPA_KF_OPEN_LO, NULL, NULL, "0.001",
	 "fedadam_reddi: adaptivity tau, outside the square root"},
	{"loss_average", VPA_K_ENUM, 0, "utterance", -INFINITY, INFINITY, 0, "utterance|token", NULL,
	 "utterance", "training loss of a batch: `utterance`, the mean over its sentences of each "
	 "one's mean over its tokens (Liu et al. eq. 2-4; DP-SGD's per-sentence gradients always "
	 "are), or `token`, the mean over all its tokens"},
	{"confidence", VPA_K_ENUM, 0, "none", -INFINITY, INFINITY, 0,
	 "none|hard|utterance|token", NULL, "token",
	 "per-token confidence weights (Liu et al. eq. 2-4) on a simulated noisy transcription"},
	{"wer", VPA_K_NUM, 0, "0.15", 0, 1, 0, NULL, NULL, "0.15",
	 "confidence: word error rate of the simulated transcription"},
	{"threshold", VPA_K_NUM, 0, "0.7", 0, 1, 0, NULL, NULL, "0.7",
	 "confidence hard: keep an utterance when its mean confidence >= threshold"},
	{"anonymise", VPA_K_ENUM, 0, "none", -INFINITY, INFINITY, 0,
	 "none|redact|typed_placeholder|named_placeholder|word_by_word|full_entity", NULL,
	 "typed_placeholder", "text anonymisation of the training text (canaries included) "
	 "before training (COMPRISE D2.3 4.3.1)"},
	{"names", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "data/names.txt",
	 "extra first names (one per line) for {name} and the gazetteer"},
	{"canaries", VPA_K_MAPLIST, 0, NULL, -INFINITY, INFINITY, 0, NULL, &canary_schema,
	 "[{name: pin, template: \"my pin number is {d4}\", insertions: [1, 4, 16, 64]}]",
	 "secrets inserted into the training text (the `exposure` attack ranks them)"},
	{"checkpoints", VPA_K_INT, 0, "5", 1, 1000, 0, NULL, NULL, "5",
	 "parameter snapshots at evenly spaced epochs/rounds (exposure against training time)"},
	{"model", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "lm.arpa",
	 "import: an ARPA model (SRILM/KenLM text format)"},
	{"candidates", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "cands.txt",
	 "import: log-perplexities of the other candidates (one per line, or .npy)"},
	{"canary_logppl", VPA_K_NUM, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "12.5",
	 "import with candidates: the canary's log-perplexity (same unit as the candidates)"},
	{NULL},
};
static const struct vpa_schema schema = {"target language_model", keys};

/* Validation: every word exists, each with its own id. */
static uint32_t any_word(void *ctx, const char *w)
{
	(void)w;
	return (*(uint32_t *)ctx)++;
}

static int validate(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *cfg,
		    struct vpa_err *err)
{
	const char *src = vpa_cfg_str(cfg, &schema, "source");
	const struct vpa_ynode *model = vpa_ymap_get(cfg, "model"),
			       *cands = vpa_ymap_get(cfg, "candidates");
	struct vpa_loc loc = vpa_node_loc(ctx->file, cfg);
	if (!strcmp(src, "import")) {
		if (!!model == !!cands)
			return vpa_fail(err, VPA_EINPUT, &loc, "language_model import needs exactly one "
					"of 'model' (ARPA) or 'candidates'");
		if (cands && !vpa_ymap_get(cfg, "canary_logppl"))
			return vpa_fail(err, VPA_EINPUT, &loc, "'candidates' needs 'canary_logppl'");
		const struct vpa_ynode *f = model ? model : cands;
		char *path = vpa_path_join(ctx->dir, f->str);
		struct stat st;
		int bad = stat(path, &st) != 0 || S_ISDIR(st.st_mode);
		free(path);
		if (bad) {
			struct vpa_loc fl = vpa_node_loc(ctx->file, f);
			return vpa_fail(err, VPA_EINPUT, &fl, "cannot open '%s'", f->str);
		}
	} else if (model || cands) {
		const struct vpa_ynode *k = vpa_ymap_key(cfg, model ? "model" : "candidates");
		struct vpa_loc kl = vpa_node_loc(ctx->file, k);
		return vpa_fail(err, VPA_EINPUT, &kl, "'%s' needs 'source: import'",
				model ? "model" : "candidates");
	}
	const struct vpa_ynode *cn = vpa_ymap_get(cfg, "canaries");
	for (size_t i = 0; cn && i < cn->n; i++) {
		const struct vpa_ynode *c = cn->items[i];
		const struct vpa_ynode *tn = vpa_ymap_get(c, "template");
		/* names (default c1, c2, ...) are the records' subs: unique, as ids are */
		char base[64];
		canary_base(c, i, base, sizeof(base));
		for (size_t j = 0; j < i; j++) {
			char other[64];
			canary_base(cn->items[j], j, other, sizeof(other));
			if (strcmp(base, other))
				continue;
			const struct vpa_ynode *at = vpa_ymap_get(c, "name");
			struct vpa_loc nl = vpa_node_loc(ctx->file, at ? at : c);
			const struct vpa_ynode *fn = vpa_ymap_get(cn->items[j], "name");
			struct vpa_loc fl = vpa_node_loc(ctx->file, fn ? fn : cn->items[j]);
			return vpa_fail(err, VPA_EINPUT, &nl,
					"duplicate canary name '%s' (first at line %ld%s)", base, fl.line,
					fn ? "" : ", by default");
		}
		struct vpa_loc tl = vpa_node_loc(ctx->file, tn);
		struct vpa_lm_canary cc;
		struct vpa_err e2;
		vpa_err_init(&e2);
		uint32_t ids[2] = {1, 2}, next = 10;
		const char *nm[2] = {"a", "b"};
		if (vpa_lm_parse_template("x", tn->str, any_word, &next, nm, 2, ids, 2, &cc, &e2))
			return vpa_fail(err, VPA_EINPUT, &tl, "%s", e2.msg + strlen("canary 'x': "));
		vpa_lm_canary_release(&cc);
		const struct vpa_ynode *ins = vpa_ymap_get(c, "insertions");
		if (ins && !strcmp(src, "import")) {
			struct vpa_loc il = vpa_node_loc(ctx->file, vpa_ymap_key(c, "insertions"));
			return vpa_fail(err, VPA_EINPUT, &il, "'insertions' does not apply to an "
					"imported model: it cannot be retrained (its canary is `secret`, "
					"inserted when the model was trained)");
		}
		for (size_t j = 0; ins && j < ins->n; j++) {
			char *end;
			const struct vpa_ynode *v = ins->items[j];
			long x = v->type == VPA_YSCALAR ? strtol(v->str, &end, 10) : -1;
			if (v->type != VPA_YSCALAR || *end || x < 1 || x > 1000000) {
				struct vpa_loc vl = vpa_node_loc(ctx->file, v);
				return vpa_fail(err, VPA_EINPUT, &vl, "insertions must be integers in "
						"[1, 1000000]");
			}
			for (size_t k = 0; k < j; k++)
				if (strtol(ins->items[k]->str, NULL, 10) == x) {
					/* one canary (record sub NAME-xN) per count */
					struct vpa_loc vl = vpa_node_loc(ctx->file, v);
					return vpa_fail(err, VPA_EINPUT, &vl,
							"duplicate insertion count %ld of canary '%s'",
							x, base);
				}
		}
		if (!strcmp(src, "import") && model && !vpa_ymap_get(c, "secret"))
			return vpa_fail(err, VPA_EINPUT, &tl, "a canary of an imported model needs "
					"'secret' (the text that was inserted)");
	}
	return 0;
}

/* ---- building -------------------------------------------------------------------- */

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

static void lm_free(struct vpa_target *t)
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
	size_t cap = 0;
	char *save = NULL;
	for (char *line = strtok_r(buf, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		char *e = line + strlen(line);
		while (e > line && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = 0;
		for (char *q = line; *q; q++)
			if (*q >= 'A' && *q <= 'Z')
				*q = (char)(*q - 'A' + 'a');
		if (*n == cap)
			*names = xrealloc(*names, xmul(cap = cap ? 2 * cap : 64, sizeof(char *)));
		(*names)[(*n)++] = xstrdup(line);
	}
	free(buf);
	return 0;
}

/* Canaries of a model: parse templates, choose secrets (tracked + others). */
struct canary_plan {
	uint32_t *seq;  /* (L) */
	size_t L, count;
};

static int make_canaries(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg,
			 struct vpa_lm_target *lt, uint32_t (*lookup)(void *, const char *),
			 void *lctx, const char *const *names, size_t n_names,
			 const uint32_t *vocab_ids, size_t n_vids, int trained,
			 struct canary_plan **plan, size_t *n_plan, struct vpa_err *err)
{
	const struct vpa_ynode *cn = vpa_ymap_get(cfg, "canaries");
	struct vpa_rng r;
	vpa_rng_split(&r, ctx->seed, "lm/canaries");
	int rc = 0;
	size_t cap_p = 0;
	for (size_t i = 0; cn && i < cn->n && !rc; i++) {
		const struct vpa_ynode *c = cn->items[i];
		char base[64];
		canary_base(c, i, base, sizeof(base));
		const char *tmpl = vpa_cfg_str(c, &canary_schema, "template");
		const char *sec = vpa_cfg_str(c, &canary_schema, "secret");
		size_t others = (size_t)vpa_cfg_int(c, &canary_schema, "others");
		const struct vpa_ynode *ins = vpa_ymap_get(c, "insertions");
		size_t n_ins = trained ? (ins ? ins->n : 1) : 1;
		size_t first = lt->n_canaries;
		lt->canaries = xrealloc(lt->canaries, xmul(first + n_ins, sizeof(*lt->canaries)));
		for (size_t j = 0; j < n_ins && !rc; j++) {
			struct vpa_lm_canary *cc = &lt->canaries[lt->n_canaries];
			size_t count = trained ? (ins ? (size_t)strtol(ins->items[j]->str, NULL, 10) : 16) : 0;
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

static int build_import(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg,
			struct vpa_lm_target *lt, struct vpa_json *info, struct vpa_err *err)
{
	const char *model = vpa_cfg_str(cfg, &schema, "model");
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
		rc = make_canaries(ctx, cfg, lt, arpa_lookup, lt->arpa, vpa_first_names,
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
	const char *cands = vpa_cfg_str(cfg, &schema, "candidates");
	char *p = vpa_path_join(ctx->dir, cands);
	lt->source = VPA_LM_CANDIDATES;
	rc = vpa_read_score_list(p, &lt->cand, &lt->n_cand, err);
	free(p);
	lt->cand_canary = vpa_cfg_num(cfg, &schema, "canary_logppl");
	lt->cand_name = xstrdup("canary");
	vpa_json_set_str(info, "candidates", cands);
	vpa_json_set_num(info, "n_candidates", (double)lt->n_cand);
	return rc;
}

/* ---- training ------------------------------------------------------------------------- */

struct train_cfg {
	size_t epochs, batch, rounds, cohort, local_epochs, local_batch, n_ckpt;
	double lr, grad_clip, sigma, clip, delta, local_lr, server_lr, beta1, beta2, tau, server_eps;
	int federated, fedadam, dp; /* fedadam: 0 FedAvg, 1 Liu et al., 2 Reddi et al. */
	int utt_mean;               /* loss_average: utterance (Liu et al. eq. 2-4) */
	const char *conf_mode;
	double threshold;
};

static void snapshot(struct vpa_lm_target *lt, double when)
{
	size_t np;
	float *p = vpa_nn_params(lt->net, &np);
	struct vpa_lm_checkpoint *c = &lt->ckpt[lt->n_ckpt++];
	c->when = when;
	c->params = xmalloc(xmul(np, sizeof(float)));
	memcpy(c->params, p, np * sizeof(float));
}

/* Is step k (1-based) of n a checkpoint, with m checkpoints evenly spaced? */
static int is_ckpt(size_t k, size_t n, size_t m)
{
	if (m >= n)
		return 1;
	for (size_t j = 1; j <= m; j++)
		if (k == (j * n + m - 1) / m)
			return 1;
	return 0;
}

static void shuffle(size_t *a, size_t n, struct vpa_rng *r)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = vpa_rng_below(r, i);
		size_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

static int train_central(struct vpa_run_ctx *ctx, struct vpa_lm_target *lt, const struct sents *tr,
			 const float *sent_w, int tok_w, const struct train_cfg *c,
			 struct vpa_json *info, struct vpa_err *err)
{
	size_t np, N = tr->n;
	float *w = vpa_nn_params(lt->net, &np);
	struct vpa_optim o;
	vpa_optim_init_adam(&o, np, c->lr, 0.9, 0.999, 1e-8, 0);
	struct vpa_rng r, nr;
	vpa_rng_split(&r, ctx->seed, "lm/batches");
	vpa_rng_split(&nr, ctx->seed, "lm/dp-noise");
	size_t *idx = xmalloc(xmul(N, sizeof(size_t)));
	for (size_t i = 0; i < N; i++)
		idx[i] = i;
	struct batch b = {0};
	int rc = 0;
	double t0 = vpa_now(), last_loss = NAN, tokens = 0;
	size_t clipped = 0, examples = 0;
	double q = c->dp ? (double)c->batch / (double)N : 0;
	size_t steps_per_epoch = (N + c->batch - 1) / c->batch;
	for (size_t ep = 1; ep <= c->epochs && !rc; ep++) {
		double sum = 0;
		size_t nb_done = 0;
		if (!c->dp)
			shuffle(idx, N, &r);
		for (size_t s = 0; s < steps_per_epoch && !rc; s++) {
			size_t m;
			const size_t *sel;
			if (c->dp) { /* Poisson sampling of a lot */
				m = 0;
				for (size_t i = 0; i < N; i++)
					if (vpa_rng_uniform(&r) < q)
						idx[m++] = i;
				sel = idx;
			} else {
				sel = idx + s * c->batch;
				m = N - s * c->batch < c->batch ? N - s * c->batch : c->batch;
			}
			double loss = 0;
			if (m == 0) { /* an empty lot still releases noise */
				float *g = vpa_nn_grads(lt->net, &np);
				for (size_t i = 0; i < np; i++)
					g[i] = (float)(c->sigma * c->clip * vpa_rng_normal(&nr) / (q * N));
				vpa_optim_step(&o, w, g);
				continue;
			}
			struct vpa_nn_batch nb;
			struct vpa_nn_targets tg;
			/* DP-SGD's per-example gradients are already each sentence's own
			 * mean over its tokens, summed and divided by the expected lot */
			batch_make(&b, tr, sel, m, lt->bos, lt->eos, sent_w, tok_w,
				   c->utt_mean && !c->dp, &nb, &tg);
			tokens += (double)b.off[m];
			if (c->dp) {
				size_t ncl = 0;
				rc = vpa_nn_dpsgd_step(lt->net, &o, &nb, &tg, c->clip, c->sigma, q * N, &nr,
						       &loss, &ncl, err);
				clipped += ncl;
				examples += m;
			} else {
				rc = vpa_nn_train_step(lt->net, &o, &nb, &tg, c->grad_clip, &loss, err);
			}
			sum += loss;
			nb_done++;
			vpa_progress("training", (ep - 1) * steps_per_epoch + s + 1,
				     c->epochs * steps_per_epoch, t0);
		}
		last_loss = nb_done ? sum / (double)nb_done : NAN;
		if (is_ckpt(ep, c->epochs, c->n_ckpt))
			snapshot(lt, (double)ep);
	}
	double secs = vpa_now() - t0;
	vpa_json_set_num(info, "train_loss", last_loss);
	vpa_json_set_num(info, "train_seconds", secs);
	vpa_json_set_num(info, "tokens_per_second", secs > 0 ? tokens / secs : NAN);
	if (c->dp) {
		double eps = NAN;
		double steps = (double)(c->epochs * steps_per_epoch);
		if (!rc)
			rc = vpa_dp_epsilon(q, c->sigma, steps, c->delta, &eps, NULL, err);
		vpa_json_set_num(info, "q", q);
		vpa_json_set_num(info, "steps", steps);
		vpa_json_set_num(info, "epsilon", eps);
		vpa_json_set_num(info, "frac_clipped", examples ? (double)clipped / (double)examples : 0);
	}
	(void)ctx;
	free(idx);
	batch_release(&b);
	vpa_optim_release(&o);
	return rc;
}

/* Clients: Zipf assignment of sentences (P(k) ~ k^-s) or one per document. */
static size_t assign_clients(struct sents *tr, const size_t *doc, size_t n_doc, int by_doc,
			     size_t n_clients, double s, size_t n_canary_sents,
			     const size_t *canary_group, struct vpa_rng *r)
{
	tr->client = xmalloc(xmul(tr->n, sizeof(size_t)));
	size_t K = by_doc ? n_doc : n_clients;
	double *cdf = xmalloc(xmul(K, sizeof(double)));
	double acc = 0;
	for (size_t k = 0; k < K; k++)
		cdf[k] = (acc += by_doc ? 1.0 : pow((double)(k + 1), -s));
	size_t n_text = tr->n - n_canary_sents;
	for (size_t i = 0; i < n_text; i++) {
		if (by_doc) {
			tr->client[i] = doc[i];
			continue;
		}
		double u = vpa_rng_uniform(r) * acc;
		size_t lo = 0, hi = K - 1;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (cdf[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
		tr->client[i] = lo;
	}
	/* every copy of one secret goes to one client, chosen uniformly */
	size_t last = SIZE_MAX, cl = 0;
	for (size_t i = n_text; i < tr->n; i++) {
		if (canary_group[i - n_text] != last) {
			last = canary_group[i - n_text];
			cl = vpa_rng_below(r, K);
		}
		tr->client[i] = cl;
	}
	free(cdf);
	return K;
}

static int train_federated(struct vpa_run_ctx *ctx, struct vpa_lm_target *lt,
			   const struct sents *tr, size_t K, const float *sent_w, int tok_w,
			   const struct train_cfg *c, struct vpa_json *info, struct vpa_err *err)
{
	size_t np;
	float *wg = vpa_nn_params(lt->net, &np);
	struct vpa_nn *local = vpa_nn_clone(lt->net);
	float *wl = vpa_nn_params(local, &np);
	/* client sentence lists */
	size_t *cnt = xcalloc(K + 1, sizeof(size_t)), *list = xmalloc(xmul(tr->n, sizeof(size_t)));
	for (size_t i = 0; i < tr->n; i++)
		cnt[tr->client[i] + 1]++;
	for (size_t k = 0; k < K; k++)
		cnt[k + 1] += cnt[k];
	size_t *fill = xmalloc(xmul(K, sizeof(size_t)));
	memcpy(fill, cnt, K * sizeof(size_t));
	for (size_t i = 0; i < tr->n; i++)
		list[fill[tr->client[i]]++] = i;
	size_t n_nonempty = 0;
	for (size_t k = 0; k < K; k++)
		n_nonempty += cnt[k + 1] > cnt[k];
	double q = (double)c->cohort / (double)K;
	if (q > 1)
		q = 1;
	float *agg = xmalloc(xmul(np, sizeof(float))), *delta = xmalloc(xmul(np, sizeof(float)));
	float *m1 = xcalloc(np, sizeof(float)), *v1 = xcalloc(np, sizeof(float));
	struct vpa_rng r, nr;
	vpa_rng_split(&r, ctx->seed, "lm/cohorts");
	vpa_rng_split(&nr, ctx->seed, "lm/dp-noise");
	struct batch b = {0};
	struct vpa_optim lo;
	vpa_optim_init_sgd(&lo, np, c->local_lr, 0, 0);
	int rc = 0;
	double t0 = vpa_now(), tokens = 0, cohort_sum = 0;
	size_t clipped = 0, participations = 0;
	size_t *cidx = xmalloc(xmul(tr->n, sizeof(size_t)));
	for (size_t rd = 1; rd <= c->rounds && !rc; rd++) {
		memset(agg, 0, np * sizeof(float));
		double wsum = 0;
		size_t n_sel = 0;
		for (size_t k = 0; k < K && !rc; k++) {
			if (vpa_rng_uniform(&r) >= q)
				continue;
			size_t n = cnt[k + 1] - cnt[k];
			n_sel++;
			if (n == 0)
				continue; /* sampled but holds no data: its delta is 0 */
			memcpy(wl, wg, np * sizeof(float));
			memcpy(cidx, list + cnt[k], n * sizeof(size_t));
			double ntok = 0;
			for (size_t e = 0; e < c->local_epochs && !rc; e++) {
				shuffle(cidx, n, &r);
				for (size_t s = 0; s < n && !rc; s += c->local_batch) {
					size_t m = n - s < c->local_batch ? n - s : c->local_batch;
					struct vpa_nn_batch nb;
					struct vpa_nn_targets tg;
					batch_make(&b, tr, cidx + s, m, lt->bos, lt->eos, sent_w, tok_w,
						   c->utt_mean, &nb, &tg);
					double loss;
					rc = vpa_nn_train_step(local, &lo, &nb, &tg, c->grad_clip, &loss, err);
					ntok += (double)b.off[m];
				}
			}
			tokens += ntok;
			for (size_t i = 0; i < np; i++)
				delta[i] = wl[i] - wg[i];
			double weight;
			if (c->dp) {
				if (vpa_nn_clip_norm(delta, np, c->clip) > c->clip)
					clipped++;
				weight = 1;
			} else {
				weight = ntok; /* weighted by the client's tokens */
			}
			for (size_t i = 0; i < np; i++)
				agg[i] += (float)weight * delta[i];
			wsum += weight;
			participations++;
		}
		cohort_sum += (double)n_sel;
		if (c->dp) {
			double denom = q * (double)K;
			for (size_t i = 0; i < np; i++)
				agg[i] = (float)((agg[i] + c->sigma * c->clip * vpa_rng_normal(&nr)) / denom);
		} else if (wsum > 0) {
			for (size_t i = 0; i < np; i++)
				agg[i] = (float)(agg[i] / wsum);
		}
		if (c->fedadam == 1) { /* Liu et al. eq. 6-8 */
			vpa_fedadam_step(VPA_FEDADAM_LIU, c->server_lr, c->beta1, c->beta2,
					 c->server_eps, (long)rd, m1, v1, wg, agg, np);
		} else if (c->fedadam == 2) { /* Reddi et al. 2021, Algorithm 2 */
			vpa_fedadam_step(VPA_FEDADAM_REDDI, c->server_lr, c->beta1, c->beta2, c->tau,
					 (long)rd, m1, v1, wg, agg, np);
		} else {
			for (size_t i = 0; i < np; i++)
				wg[i] += (float)(c->server_lr * agg[i]);
		}
		vpa_progress("federated rounds", rd, c->rounds, t0);
		if (is_ckpt(rd, c->rounds, c->n_ckpt))
			snapshot(lt, (double)rd);
	}
	double secs = vpa_now() - t0;
	vpa_json_set_num(info, "clients", (double)K);
	vpa_json_set_num(info, "clients_with_data", (double)n_nonempty);
	vpa_json_set_num(info, "q", q);
	vpa_json_set_num(info, "rounds", (double)c->rounds);
	vpa_json_set_num(info, "mean_cohort", cohort_sum / (double)c->rounds);
	vpa_json_set_num(info, "train_seconds", secs);
	vpa_json_set_num(info, "tokens_per_second", secs > 0 ? tokens / secs : NAN);
	if (c->dp) {
		double eps = NAN;
		if (!rc)
			rc = vpa_dp_epsilon(q, c->sigma, (double)c->rounds, c->delta, &eps, NULL, err);
		vpa_json_set_num(info, "epsilon", eps);
		vpa_json_set_num(info, "frac_clipped",
				 participations ? (double)clipped / (double)participations : 0);
	}
	free(cidx);
	free(cnt);
	free(list);
	free(fill);
	free(agg);
	free(delta);
	free(m1);
	free(v1);
	batch_release(&b);
	vpa_optim_release(&lo);
	vpa_nn_free(local);
	return rc;
}

/*
 * Simulated noisy transcription (for the confidence weights): each token is
 * replaced by a uniformly drawn vocabulary word with probability wer; its
 * confidence is drawn from N(0.85, 0.1) when correct and N(0.35, 0.15) when
 * wrong, clipped to [0.01, 1].  Returns the number of substituted tokens.
 */
static size_t noisy_transcription(struct sents *s, size_t n_text, size_t V, double wer,
				  struct vpa_rng *r)
{
	size_t n_sub = 0, end = s->off[n_text];
	s->conf = xrealloc(s->conf, xmul(s->cap_t ? s->cap_t : 1, sizeof(float)));
	for (size_t i = 0; i < s->off[s->n]; i++)
		s->conf[i] = 1.0f;
	for (size_t i = 0; i < end; i++) {
		double cf;
		if (vpa_rng_uniform(r) < wer) {
			s->tok[i] = (uint32_t)(1 + vpa_rng_below(r, V - 1));
			cf = 0.35 + 0.15 * vpa_rng_normal(r);
			n_sub++;
		} else {
			cf = 0.85 + 0.1 * vpa_rng_normal(r);
		}
		s->conf[i] = (float)fmin(1, fmax(0.01, cf));
	}
	return n_sub;
}

static int build_trained(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg,
			 struct vpa_lm_target *lt, struct vpa_json *info, struct vpa_err *err)
{
	struct vpa_corpus corp;
	struct vpa_corpus_opts co;
	vpa_corpus_init(&corp);
	vpa_corpus_opts_init(&co);
	co.lower = 1;
	int rc = 0;
	const char *kind = vpa_cfg_str(cfg, &schema, "corpus");
	const char *cp = vpa_cfg_str(cfg, &schema, "corpus_path");
	int brown = !strcmp(kind, "brown");
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
					   (size_t)vpa_cfg_int(cfg, &schema, "max_documents"), &co, err);
	else
		rc = vpa_corpus_load_text(&corp, path, &co, err);
	if (rc) {
		if (brown && err && strlen(err->msg) + 50 < sizeof(err->msg))
			strcat(err->msg, " (`make deps` fetches the Brown corpus)");
		goto out;
	}
	const char *np = vpa_cfg_str(cfg, &schema, "names");
	if (np) {
		char *p = vpa_path_join(ctx->dir, np);
		rc = read_names(p, &extra, &n_extra, err);
		free(p);
		if (rc)
			goto out;
	}
	/* sentence selection */
	size_t max_len = (size_t)vpa_cfg_int(cfg, &schema, "max_len");
	size_t max_s = (size_t)vpa_cfg_int(cfg, &schema, "max_sentences");
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
	double hfrac = vpa_cfg_num(cfg, &schema, "heldout");
	size_t every = (size_t)fmax(2, floor(1 / hfrac + 0.5));
	/* anonymisation works on strings: the training words after the strategy */
	const char *strategy = vpa_cfg_str(cfg, &schema, "anonymise");
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
	vpa_vocab_build(&lt->vocab, &corp, trs, n_trs, (size_t)vpa_cfg_int(cfg, &schema, "vocab_size"),
			1);
	free(trs);
	const struct vpa_ynode *cn = vpa_ymap_get(cfg, "canaries");
	for (size_t i = 0; cn && i < cn->n; i++) {
		const char *tmpl = vpa_cfg_str(cn->items[i], &canary_schema, "template");
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
	if ((rc = make_canaries(ctx, cfg, lt, vocab_lookup, &lt->vocab, names, n_names, vids, n_vids,
				1, &plan, &n_plan, err)))
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
				sents_push(&ho, buf, e - a, NULL);
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
				sents_push(&tr, buf, e - a, NULL);
				free(buf);
			}
		vpa_textanon_out_release(&ao);
		free(tok);
		free(tags);
		/* federated clients need the documents */
		if (!rc && !strcmp(vpa_cfg_str(cfg, &schema, "training"), "federated")) {
			struct vpa_rng cr;
			vpa_rng_split(&cr, ctx->seed, "lm/clients");
			int by_doc = !strcmp(vpa_cfg_str(cfg, &schema, "clients"), "document");
			size_t K = assign_clients(&tr, doc, corp.n_doc, by_doc,
						  (size_t)vpa_cfg_int(cfg, &schema, "n_clients"),
						  vpa_cfg_num(cfg, &schema, "zipf_s"), n_canary_sents,
						  canary_group, &cr);
			vpa_json_set_num(info, "n_clients", (double)K);
			Kc = K;
		}
		free(off);
		free(doc);
		if (rc)
			goto out;

		/* confidence weights */
		const char *cm = vpa_cfg_str(cfg, &schema, "confidence");
		int tok_w = 0;
		if (strcmp(cm, "none")) {
			struct vpa_rng wr;
			vpa_rng_split(&wr, ctx->seed, "lm/transcription");
			size_t n_sub = noisy_transcription(&tr, n_train_text, V_words,
							   vpa_cfg_num(cfg, &schema, "wer"), &wr);
			vpa_json_set_num(info, "substituted_tokens", (double)n_sub);
			if (!strcmp(cm, "token")) {
				tok_w = 1;
			} else {
				double th = vpa_cfg_num(cfg, &schema, "threshold");
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

		if (!vpa_cfg_bool(cfg, &schema, "lstm")) {
			vpa_json_set_str(info, "model", "none");
			vpa_json_set_num(info, "train_sentences", (double)n_train_text);
			vpa_json_set_num(info, "heldout_sentences", (double)ho.n);
			goto text_only;
		}
		/* the network */
		size_t V = lt->vocab.n, E = (size_t)vpa_cfg_int(cfg, &schema, "embedding"),
		       Hd = (size_t)vpa_cfg_int(cfg, &schema, "hidden");
		size_t nl = (size_t)vpa_cfg_int(cfg, &schema, "layers");
		lt->net = vpa_nn_new(0);
		vpa_nn_add_embedding(lt->net, V, E);
		for (size_t l = 0; l < nl; l++)
			vpa_nn_add_lstm(lt->net, Hd, 0);
		vpa_nn_add_dense(lt->net, V);
		vpa_nn_init_params(lt->net, ctx->seed ^ 0x6c6du);
		vpa_nn_params(lt->net, &lt->n_params);

		struct train_cfg c = {0};
		c.epochs = (size_t)vpa_cfg_int(cfg, &schema, "epochs");
		c.batch = (size_t)vpa_cfg_int(cfg, &schema, "batch");
		c.lr = vpa_cfg_num(cfg, &schema, "lr");
		c.grad_clip = vpa_cfg_num(cfg, &schema, "grad_clip");
		c.sigma = vpa_cfg_num(cfg, &schema, "noise_multiplier");
		c.clip = vpa_cfg_num(cfg, &schema, "clip");
		c.delta = vpa_cfg_num(cfg, &schema, "delta");
		c.federated = tr.client != NULL;
		c.rounds = (size_t)vpa_cfg_int(cfg, &schema, "rounds");
		c.cohort = (size_t)vpa_cfg_int(cfg, &schema, "cohort");
		c.local_epochs = (size_t)vpa_cfg_int(cfg, &schema, "local_epochs");
		c.local_batch = (size_t)vpa_cfg_int(cfg, &schema, "local_batch");
		c.local_lr = vpa_cfg_num(cfg, &schema, "local_lr");
		c.server_lr = vpa_cfg_num(cfg, &schema, "server_lr");
		c.beta1 = vpa_cfg_num(cfg, &schema, "beta1");
		c.beta2 = vpa_cfg_num(cfg, &schema, "beta2");
		c.tau = vpa_cfg_num(cfg, &schema, "tau");
		const char *sv = vpa_cfg_str(cfg, &schema, "server");
		c.fedadam = !strcmp(sv, "fedadam") ? 1 : !strcmp(sv, "fedadam_reddi") ? 2 : 0;
		c.server_eps = vpa_cfg_num(cfg, &schema, "server_eps");
		c.utt_mean = !strcmp(vpa_cfg_str(cfg, &schema, "loss_average"), "utterance");
		c.n_ckpt = (size_t)vpa_cfg_int(cfg, &schema, "checkpoints");
		double target_eps = vpa_cfg_num(cfg, &schema, "target_epsilon");
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
		if (c.federated)
			rc = train_federated(ctx, lt, &tr, Kc, sent_w, tok_w, &c, info, err);
		else
			rc = train_central(ctx, lt, &tr, sent_w, tok_w, &c, info, err);
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
	sents_release(&tr);
	sents_release(&ho);
	vpa_corpus_release(&corp);
	return rc;
}

static int build(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg, struct vpa_target *out,
		 struct vpa_err *err)
{
	struct vpa_lm_target *lt = xcalloc(1, sizeof(*lt));
	struct vpa_json *info = vpa_json_obj();
	out->data = lt;
	out->info = info;
	int imp = !strcmp(vpa_cfg_str(cfg, &schema, "source"), "import");
	out->simulated = 0;
	vpa_json_set_str(info, "source", imp ? "import" : "train");
	int rc = imp ? build_import(ctx, cfg, lt, info, err) : build_trained(ctx, cfg, lt, info, err);
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
	}
	return rc;
}

const struct vpa_target_kind vpa_target_language_model = {
	.name = "language_model",
	.schema = &schema,
	.doc = "A word-level LSTM language model trained by vpaudit on the Brown corpus or a "
	       "plain-text corpus (centrally with Adam or DP-SGD, or federated with FedAvg/"
	       "FedAdam and per-client clipping and noise), with canaries inserted into the "
	       "training text, optional text anonymisation and confidence weights; or an "
	       "imported ARPA model or candidate log-perplexities.  Attack it with `exposure`.",
	.validate = validate,
	.build = build,
	.free = lm_free,
};
