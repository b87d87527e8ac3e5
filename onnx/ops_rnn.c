/*
 * onnx/ops_rnn.c - LSTM and GRU (ONNX opsets 7/14 definitions; what
 * torch.onnx.export writes for nn.LSTM / nn.GRU): forward, reverse and
 * bidirectional, optional initial states, sequence_lens, peepholes (LSTM),
 * clip, input_forget (LSTM), linear_before_reset (GRU), layout 0 and 1,
 * activations Sigmoid / Tanh / Relu (activation_alpha/beta are refused at
 * load time).  The input projection of all time steps is one SGEMM per
 * direction; each step does one SGEMM with the recurrent weights.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/la.h"
#include "onnx/internal.h"

enum act { A_SIGMOID, A_TANH, A_RELU };

static int act_of(const char *s)
{
	return !strcmp(s, "Sigmoid") ? A_SIGMOID : !strcmp(s, "Tanh") ? A_TANH
					     : !strcmp(s, "Relu") ? A_RELU : -1;
}

static float act(int a, float x)
{
	switch (a) {
	case A_SIGMOID: return x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
	case A_TANH: return tanhf(x);
	default: return x > 0 ? x : 0;
	}
}

static int check_rnn(const char *file, const struct ox_node *n, int64_t opset, struct vpa_err *err)
{
	int lstm = !strcmp(n->op_type, "LSTM");
	const char *dir = ox_attr_s(n, "direction", "forward");
	if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
		return ox_check_fail(file, n, opset, err, "direction '%s' (forward, reverse, "
				     "bidirectional)", dir);
	if (ox_attr_i(n, "hidden_size", 0) < 1)
		return ox_check_fail(file, n, opset, err, "attribute 'hidden_size' is required");
	int64_t layout = ox_attr_i(n, "layout", 0);
	if (layout != 0 && layout != 1)
		return ox_check_fail(file, n, opset, err, "layout %lld (0 or 1)", (long long)layout);
	if (layout && opset < 14)
		return ox_check_fail(file, n, opset, err, "attribute 'layout' needs opset 14");
	const struct ox_attr *a = ox_attr(n, "activations");
	if (a) {
		size_t want = (size_t)(lstm ? 3 : 2) * (strcmp(dir, "bidirectional") ? 1 : 2);
		if (a->type != OX_A_STRINGS || a->n != want)
			return ox_check_fail(file, n, opset, err, "'activations' needs %zu names", want);
		for (size_t i = 0; i < a->n; i++)
			if (act_of(a->strings[i]) < 0)
				return ox_check_fail(file, n, opset, err,
						     "activation '%s' is not supported (Sigmoid, Tanh, "
						     "Relu)", a->strings[i]);
	}
	if (ox_attr(n, "clip") && !(ox_attr_f(n, "clip", 0) > 0))
		return ox_check_fail(file, n, opset, err, "'clip' must be positive");
	return 0;
}

/* [batch, seq, ...] <-> [seq, batch, ...]: swap the first two axes of a (a, b, rest) array. */
static void swap01(float *dst, const float *src, size_t a, size_t b, size_t rest)
{
	for (size_t i = 0; i < a; i++)
		for (size_t j = 0; j < b; j++)
			memcpy(dst + (j * a + i) * rest, src + (i * b + j) * rest, rest * sizeof(float));
}

static float clipf(float x, float c)
{
	return c > 0 ? (x < -c ? -c : x > c ? c : x) : x;
}

static int run_rnn(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		   struct vpa_onnx_tensor *out)
{
	int lstm = !strcmp(n->op_type, "LSTM");
	size_t G = lstm ? 4 : 3;
	const struct vpa_onnx_tensor *X = in[0], *W = in[1], *R = in[2];
	const struct vpa_onnx_tensor *B = n->n_in > 3 ? in[3] : NULL;
	const struct vpa_onnx_tensor *SL = n->n_in > 4 ? in[4] : NULL;
	const struct vpa_onnx_tensor *H0 = n->n_in > 5 ? in[5] : NULL;
	const struct vpa_onnx_tensor *C0 = lstm && n->n_in > 6 ? in[6] : NULL;
	const struct vpa_onnx_tensor *P = lstm && n->n_in > 7 ? in[7] : NULL;
	for (int i = 0; i < 8 && i < (int)n->n_in; i++)
		if (i != 4 && in[i] && in[i]->dtype != VPA_ONNX_FLOAT)
			return ox_fail(c, "input type %s is not supported (float32 only)",
				       vpa_onnx_dtype_name(in[i]->dtype));
	const char *dir = ox_attr_s(n, "direction", "forward");
	size_t nd = strcmp(dir, "bidirectional") ? 1 : 2;
	int layout = (int)ox_attr_i(n, "layout", 0);
	size_t H = (size_t)ox_attr_i(n, "hidden_size", 0);
	float clip = ox_attr_f(n, "clip", 0);
	int coupled = lstm && ox_attr_i(n, "input_forget", 0) != 0;
	int lbr = !lstm && ox_attr_i(n, "linear_before_reset", 0) != 0;
	if (X->ndim != 3)
		return ox_fail(c, "X must be 3-D");
	size_t S = (size_t)X->dims[layout ? 1 : 0], NB = (size_t)X->dims[layout ? 0 : 1];
	size_t I = (size_t)X->dims[2];
	if (W->ndim != 3 || (size_t)W->dims[0] != nd || (size_t)W->dims[1] != G * H ||
	    (size_t)W->dims[2] != I)
		return ox_fail(c, "W must be (%zu, %zu, %zu)", nd, G * H, I);
	if (R->ndim != 3 || (size_t)R->dims[0] != nd || (size_t)R->dims[1] != G * H ||
	    (size_t)R->dims[2] != H)
		return ox_fail(c, "R must be (%zu, %zu, %zu)", nd, G * H, H);
	if (B && (B->ndim != 2 || (size_t)B->dims[0] != nd || (size_t)B->dims[1] != 2 * G * H))
		return ox_fail(c, "B must be (%zu, %zu)", nd, 2 * G * H);
	if (P && (P->ndim != 2 || (size_t)P->dims[0] != nd || (size_t)P->dims[1] != 3 * H))
		return ox_fail(c, "P must be (%zu, %zu)", nd, 3 * H);
	const struct vpa_onnx_tensor *st[2] = {H0, C0};
	for (int k = 0; k < 2; k++)
		if (st[k] && (st[k]->ndim != 3 || (size_t)st[k]->dims[layout ? 1 : 0] != nd ||
			      (size_t)st[k]->dims[layout ? 0 : 1] != NB || (size_t)st[k]->dims[2] != H))
			return ox_fail(c, "initial_%c has the wrong shape", k ? 'c' : 'h');
	if (SL && (SL->ndim != 1 || (size_t)SL->dims[0] != NB ||
		   (SL->dtype != VPA_ONNX_INT32 && SL->dtype != VPA_ONNX_INT64)))
		return ox_fail(c, "sequence_lens must be %zu int32 values", NB);
	int acts[6];
	const struct ox_attr *aa = ox_attr(n, "activations");
	for (size_t d = 0; d < nd; d++)
		for (size_t k = 0; k < (size_t)(lstm ? 3 : 2); k++)
			acts[d * (lstm ? 3 : 2) + k] = aa ? act_of(aa->strings[d * (lstm ? 3 : 2) + k])
						   : k == 0 ? A_SIGMOID : A_TANH;
	size_t *len = xmalloc((NB + 1) * sizeof(size_t));
	for (size_t b = 0; b < NB; b++) {
		int64_t l = SL ? ox_geti(SL, b) : (int64_t)S;
		if (l < 0 || (size_t)l > S) {
			free(len);
			return ox_fail(c, "sequence length %lld outside 0..%zu", (long long)l, S);
		}
		len[b] = (size_t)l;
	}
	/* Work in layout 0: x (S, NB, I); y (S, nd, NB, H); states (nd, NB, H). */
	const float *x = X->data;
	float *xbuf = NULL, *h0 = NULL, *c0 = NULL;
	if (layout) {
		xbuf = xmalloc(xmul(xmul(S, NB), I) * sizeof(float) + 1);
		swap01(xbuf, X->data, NB, S, I);
		x = xbuf;
		if (H0) {
			h0 = xmalloc(nd * NB * H * sizeof(float) + 1);
			swap01(h0, H0->data, NB, nd, H);
		}
		if (C0) {
			c0 = xmalloc(nd * NB * H * sizeof(float) + 1);
			swap01(c0, C0->data, NB, nd, H);
		}
	}
	const float *h0p = H0 ? (h0 ? h0 : H0->data) : NULL, *c0p = C0 ? (c0 ? c0 : C0->data) : NULL;
	float *y = xcalloc(xmul(xmul(S, nd), NB * H) + 1, sizeof(float));
	float *yh = xcalloc(nd * NB * H + 1, sizeof(float));
	float *yc = xcalloc(nd * NB * H + 1, sizeof(float));
	float *xw = xmalloc(xmul(xmul(S, NB), G * H) * sizeof(float) + 1);
	float *hr = xmalloc(NB * G * H * sizeof(float) + 1);
	float *rh = xmalloc(NB * H * sizeof(float) + 1), *rh2 = xmalloc(NB * H * sizeof(float) + 1);
	float *hcur = xmalloc(NB * H * sizeof(float) + 1), *ccur = xmalloc(NB * H * sizeof(float) + 1);
	for (size_t d = 0; d < nd; d++) {
		int rev = !strcmp(dir, "reverse") || d == 1;
		const float *Wd = (const float *)W->data + d * G * H * I;
		const float *Rd = (const float *)R->data + d * G * H * H;
		const float *Wb = B ? (const float *)B->data + d * 2 * G * H : NULL;
		const float *Rb = Wb ? Wb + G * H : NULL;
		const float *Pd = P ? (const float *)P->data + d * 3 * H : NULL;
		const int *fa = acts + d * (lstm ? 3 : 2);
		/* xw (S*NB, G*H) = x W^T + Wb (+ Rb except GRU's h gate with lbr) */
		vpa_sgemm(0, 1, S * NB, G * H, I, 1.0f, x, I, Wd, I, 0.0f, xw, G * H);
		if (Wb)
			for (size_t r = 0; r < S * NB; r++)
				for (size_t j = 0; j < G * H; j++)
					xw[r * G * H + j] += Wb[j] + (lstm || j < 2 * H ? Rb[j] : 0);
		for (size_t i = 0; i < NB * H; i++) {
			hcur[i] = h0p ? h0p[d * NB * H + i] : 0;
			ccur[i] = c0p ? c0p[d * NB * H + i] : 0;
		}
		for (size_t s = 0; s < S; s++) {
			/* hr (NB, G*H) = h R^T */
			vpa_sgemm(0, 1, NB, G * H, H, 1.0f, hcur, H, Rd, H, 0.0f, hr, G * H);
			if (!lstm && !lbr) {
				/* h gate: (r .* h) Rh^T needs r first */
				for (size_t b = 0; b < NB; b++) {
					if (s >= len[b])
						continue;
					size_t t = rev ? len[b] - 1 - s : s;
					const float *g = xw + (t * NB + b) * G * H;
					for (size_t j = 0; j < H; j++) {
						float r = act(fa[0], clipf(g[H + j] + hr[b * G * H + H + j], clip));
						rh[b * H + j] = r * hcur[b * H + j];
					}
				}
				for (size_t b = 0; b < NB; b++)
					if (s >= len[b])
						memset(rh + b * H, 0, H * sizeof(float));
				vpa_sgemm(0, 1, NB, H, H, 1.0f, rh, H, Rd + 2 * H * H, H, 0.0f, rh2, H);
			}
			for (size_t b = 0; b < NB; b++) {
				if (s >= len[b])
					continue;
				size_t t = rev ? len[b] - 1 - s : s;
				const float *g = xw + (t * NB + b) * G * H;
				const float *q = hr + b * G * H;
				float *hb = hcur + b * H, *cb = ccur + b * H;
				for (size_t j = 0; j < H; j++) {
					if (lstm) {
						float cp = cb[j];
						float ig = g[j] + q[j] + (Pd ? Pd[j] * cp : 0);
						float fg = g[2 * H + j] + q[2 * H + j] + (Pd ? Pd[2 * H + j] * cp : 0);
						float cg = g[3 * H + j] + q[3 * H + j];
						float iv = act(fa[0], clipf(ig, clip));
						float fv = coupled ? 1.0f - iv : act(fa[0], clipf(fg, clip));
						float cv = act(fa[1], clipf(cg, clip));
						float cn = fv * cp + iv * cv;
						float og = g[H + j] + q[H + j] + (Pd ? Pd[H + j] * cn : 0);
						float ov = act(fa[0], clipf(og, clip));
						cb[j] = cn;
						hb[j] = ov * act(fa[2], cn);
					} else {
						float z = act(fa[0], clipf(g[j] + q[j], clip));
						float hh;
						if (lbr) {
							float r = act(fa[0], clipf(g[H + j] + q[H + j], clip));
							hh = g[2 * H + j] + r * (q[2 * H + j] + (Rb ? Rb[2 * H + j] : 0));
						} else {
							hh = g[2 * H + j] + rh2[b * H + j] + (Rb ? Rb[2 * H + j] : 0);
						}
						hh = act(fa[1], clipf(hh, clip));
						hb[j] = (1.0f - z) * hh + z * hb[j];
					}
				}
				memcpy(y + ((t * nd + d) * NB + b) * H, hb, H * sizeof(float));
			}
		}
		memcpy(yh + d * NB * H, hcur, NB * H * sizeof(float));
		memcpy(yc + d * NB * H, ccur, NB * H * sizeof(float));
	}
	int64_t dy[4], ds[3];
	if (!layout) {
		dy[0] = (int64_t)S, dy[1] = (int64_t)nd, dy[2] = (int64_t)NB, dy[3] = (int64_t)H;
		ds[0] = (int64_t)nd, ds[1] = (int64_t)NB, ds[2] = (int64_t)H;
	} else {
		dy[0] = (int64_t)NB, dy[1] = (int64_t)S, dy[2] = (int64_t)nd, dy[3] = (int64_t)H;
		ds[0] = (int64_t)NB, ds[1] = (int64_t)nd, ds[2] = (int64_t)H;
	}
	if (n->n_out > 0 && n->out[0] >= 0) {
		ox_alloc(&out[0], VPA_ONNX_FLOAT, 4, dy);
		if (!layout)
			memcpy(out[0].data, y, S * nd * NB * H * sizeof(float));
		else /* (S, nd, NB, H) -> (NB, S, nd, H) */
			for (size_t t = 0; t < S; t++)
				for (size_t d = 0; d < nd; d++)
					for (size_t b = 0; b < NB; b++)
						memcpy((float *)out[0].data + ((b * S + t) * nd + d) * H,
						       y + ((t * nd + d) * NB + b) * H, H * sizeof(float));
	}
	float *fin[2] = {yh, yc};
	for (size_t o = 1; o < n->n_out && o < (size_t)(lstm ? 3 : 2); o++) {
		if (n->out[o] < 0)
			continue;
		ox_alloc(&out[o], VPA_ONNX_FLOAT, 3, ds);
		if (!layout)
			memcpy(out[o].data, fin[o - 1], nd * NB * H * sizeof(float));
		else
			swap01(out[o].data, fin[o - 1], nd, NB, H);
	}
	free(len);
	free(xbuf);
	free(h0);
	free(c0);
	free(y);
	free(yh);
	free(yc);
	free(xw);
	free(hr);
	free(rh);
	free(rh2);
	free(hcur);
	free(ccur);
	return 0;
}

static const char *const a_lstm[] = {"activations", "clip", "direction", "hidden_size",
				     "input_forget", "layout", NULL};
static const char *const a_gru[] = {"activations", "clip", "direction", "hidden_size",
				    "layout", "linear_before_reset", NULL};

const struct ox_op ox_ops_rnn[] = {
	{"LSTM", a_lstm, check_rnn, run_rnn, 3, 8, 0, 3},
	{"GRU", a_gru, check_rnn, run_rnn, 3, 6, 0, 2},
	{NULL, NULL, NULL, NULL, 0, 0, 0, 0},
};
