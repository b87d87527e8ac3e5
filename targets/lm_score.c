/*
 * targets/lm_score.c - scoring sequences with a `language_model` target
 * (vpa_lm_logppl, contracts in targets/lm.h): LSTM inference with explicit
 * state shared over common prefixes, and ARPA models through formats/io_arpa.c
 * (split from targets/lm.c).
 */
#include "targets/lm.h"

#include "base/la.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
