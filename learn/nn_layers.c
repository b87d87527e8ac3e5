/*
 * learn/nn_layers.c - running the network: each layer kind's forward and
 * backward (dense, TDNN, the element-wise activations, batch norm, dropout,
 * statistics pooling, embedding, LSTM/BiLSTM), and the passes through the
 * sequence (vpa_nn_forward, vpa_nn_backward) with the activations they keep.
 * The container they run is built in nn.c; see NN.md for the conventions.
 *
 * Every matrix product is a vpa_sgemm call on whole batches: a layer's
 * input is all frames of all sequences of the batch, (rows, dim) row-major.
 * Reductions (batch-norm statistics, pooling) accumulate in double.
 */
#include "learn/nn.h"
#include "learn/nn_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * ReLU and its gradient in blocks of 8 with unconditional loads and a select,
 * which GCC vectorises at -O2 (a plain loop with `x > 0 ? x : 0` stays scalar
 * and branchy: 6 % of an ECAPA-TDNN C = 512 training run); the same values.
 * The arrays do not overlap (a layer's input, output and gradients are
 * separate buffers).
 */
static void relu_fwd(const float *restrict x, float *restrict y, size_t n)
{
	size_t j = 0;
	for (; j + 8 <= n; j += 8)
		for (int k = 0; k < 8; k++) {
			float v = x[j + k];
			y[j + k] = v > 0 ? v : 0.0f;
		}
	for (; j < n; j++)
		y[j] = x[j] > 0 ? x[j] : 0.0f;
}

static void relu_bwd(const float *restrict y, const float *restrict d, float *restrict o,
		     size_t n)
{
	size_t j = 0;
	for (; j + 8 <= n; j += 8)
		for (int k = 0; k < 8; k++) {
			float dv = d[j + k], yv = y[j + k];
			o[j + k] = yv > 0 ? dv : 0.0f;
		}
	for (; j < n; j++)
		o[j] = y[j] > 0 ? d[j] : 0.0f;
}

#include "base/la.h"

/* Rows of the TDNN splice buffer per GEMM in EVAL mode: small enough that the
 * spliced block stays in cache between the copy and the product. */
#define TDNN_CHUNK 1024

static size_t *grow_sz(size_t **p, size_t *cap, size_t n)
{
	if (n > *cap) {
		free(*p);
		*p = xmalloc(xmul(n, sizeof(size_t)));
		*cap = n;
	}
	return *p;
}

/* -------------------------------------------------------------- helpers */

static void fill_bias(float *y, size_t rows, size_t n, const float *b)
{
	for (size_t r = 0; r < rows; r++)
		memcpy(y + r * n, b, n * sizeof(float));
}

static void add_colsum(float *db, const float *dy, size_t rows, size_t n)
{
	for (size_t r = 0; r < rows; r++) {
		const float *d = dy + r * n;
		for (size_t j = 0; j < n; j++)
			db[j] += d[j];
	}
}

static inline float sigm(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/*
 * Splice rows r0..r1-1 of the batch: block j of output row r is input frame
 * clamp(t + context[j]) of r's sequence, clamped to the sequence's first and
 * last frames (Kaldi's convention when evaluating a whole utterance).
 */
static void splice(const float *x, size_t in, const size_t *off, size_t n_seq, const int *ctx,
		   size_t k, size_t r0, size_t r1, float *S)
{
	size_t lo = 0, hi = n_seq; /* find b with off[b] <= r0 < off[b+1] */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (off[mid] <= r0)
			lo = mid;
		else
			hi = mid;
	}
	size_t b = lo;
	for (size_t r = r0; r < r1; r++) {
		while (r >= off[b + 1])
			b++;
		long s = (long)off[b], e = (long)off[b + 1] - 1;
		float *o = S + (r - r0) * k * in;
		for (size_t j = 0; j < k; j++) {
			long u = (long)r + ctx[j];
			u = u < s ? s : u > e ? e : u;
			memcpy(o + j * in, x + (size_t)u * in, in * sizeof(float));
		}
	}
}

/* dx[clamp(t + c_j)] += dS[t, block j] */
static void unsplice_add(float *dx, size_t in, const size_t *off, size_t n_seq, const int *ctx,
			 size_t k, const float *dS)
{
	for (size_t b = 0; b < n_seq; b++) {
		long s = (long)off[b], e = (long)off[b + 1] - 1;
		for (long r = s; r <= e; r++) {
			const float *d = dS + (size_t)r * k * in;
			for (size_t j = 0; j < k; j++) {
				long u = r + ctx[j];
				u = u < s ? s : u > e ? e : u;
				float *o = dx + (size_t)u * in;
				const float *dj = d + j * in;
				for (size_t q = 0; q < in; q++)
					o[q] += dj[q];
			}
		}
	}
}

static int tdnn_is_plain(const struct layer *l)
{
	return l->s.n_context == 1 && l->s.context[0] == 0;
}

/* -------------------------------------------------------------- forward */

static void dense_fwd(struct vpa_nn *net, struct layer *l, const float *x, size_t rows)
{
	const float *W = net->params + l->poff, *b = W + l->out * l->in;
	fill_bias(l->y, rows, l->out, b);
	vpa_sgemm(0, 1, rows, l->out, l->in, 1.0f, x, l->in, W, l->in, 1.0f, l->y, l->out);
}

static void tdnn_fwd(struct vpa_nn *net, struct layer *l, const float *x, const size_t *off,
		     size_t n_seq, size_t rows, int train)
{
	size_t k = l->s.n_context, in = l->in, kin = k * in, out = l->out;
	const float *W = net->params + l->poff, *b = W + out * kin;
	if (tdnn_is_plain(l)) {
		dense_fwd(net, l, x, rows);
		return;
	}
	fill_bias(l->y, rows, out, b);
	if (train) { /* keep the whole splice for the weight gradient */
		float *S = nn_grow(&l->c1, &l->c1_cap, xmul(rows, kin));
		splice(x, in, off, n_seq, l->s.context, k, 0, rows, S);
		vpa_sgemm(0, 1, rows, out, kin, 1.0f, S, kin, W, kin, 1.0f, l->y, out);
		return;
	}
	size_t ch = rows < TDNN_CHUNK ? rows : TDNN_CHUNK;
	float *S = nn_grow(&net->scratch, &net->scratch_cap, xmul(ch, kin));
	for (size_t r0 = 0; r0 < rows; r0 += ch) {
		size_t r1 = r0 + ch < rows ? r0 + ch : rows;
		splice(x, in, off, n_seq, l->s.context, k, r0, r1, S);
		vpa_sgemm(0, 1, r1 - r0, out, kin, 1.0f, S, kin, W, kin, 1.0f, l->y + r0 * out, out);
	}
}

static void bn_fwd(struct vpa_nn *net, struct layer *l, const float *x, size_t rows, int train)
{
	size_t D = l->in;
	const float *gamma = net->params + l->poff, *beta = gamma + D;
	float *rmean = net->state + l->soff, *rvar = rmean + D;
	float *xhat = nn_grow(&l->c1, &l->c1_cap, xmul(rows, D));
	float *istd = nn_grow(&l->c2, &l->c2_cap, D);
	float *mu = nn_grow(&net->scratch2, &net->scratch2_cap, D);
	if (train) {
		double *s1 = xcalloc(2 * D, sizeof(double)), *s2 = s1 + D;
		for (size_t r = 0; r < rows; r++)
			for (size_t j = 0; j < D; j++)
				s1[j] += x[r * D + j];
		for (size_t j = 0; j < D; j++)
			s1[j] /= (double)rows;
		for (size_t r = 0; r < rows; r++)
			for (size_t j = 0; j < D; j++) {
				double d = x[r * D + j] - s1[j];
				s2[j] += d * d;
			}
		double m = l->s.momentum;
		for (size_t j = 0; j < D; j++) {
			double var = s2[j] / (double)rows;
			mu[j] = (float)s1[j];
			istd[j] = (float)(1.0 / sqrt(var + l->s.eps));
			/* running variance with the unbiased estimate, as PyTorch */
			double uv = rows > 1 ? s2[j] / (double)(rows - 1) : var;
			rmean[j] = (float)((1 - m) * rmean[j] + m * s1[j]);
			rvar[j] = (float)((1 - m) * rvar[j] + m * uv);
		}
		free(s1);
	} else {
		for (size_t j = 0; j < D; j++) {
			mu[j] = rmean[j];
			istd[j] = (float)(1.0 / sqrt((double)rvar[j] + l->s.eps));
		}
	}
	for (size_t r = 0; r < rows; r++) {
		const float *xr = x + r * D;
		float *h = xhat + r * D, *y = l->y + r * D;
		for (size_t j = 0; j < D; j++) {
			h[j] = (xr[j] - mu[j]) * istd[j];
			y[j] = gamma[j] * h[j] + beta[j];
		}
	}
}

static void dropout_fwd(struct layer *l, const float *x, size_t rows, int train)
{
	size_t n = rows * l->in;
	if (!train || l->s.p == 0) {
		memcpy(l->y, x, n * sizeof(float));
		return;
	}
	float *m = nn_grow(&l->c1, &l->c1_cap, n);
	float keep = 1.0f / (1.0f - l->s.p);
	for (size_t i = 0; i < n; i++) {
		m[i] = vpa_rng_uniform(&l->rng) < l->s.p ? 0.0f : keep;
		l->y[i] = x[i] * m[i];
	}
}

static int statspool_fwd(struct layer *l, const float *x, const size_t *off, size_t n_seq,
			 struct vpa_err *err)
{
	size_t D = l->in;
	double *s = xmalloc(xmul(2 * D, sizeof(double))), *v = s + D;
	for (size_t b = 0; b < n_seq; b++) {
		size_t T = off[b + 1] - off[b];
		if (T == 0) {
			free(s);
			return vpa_fail(err, VPA_EINPUT, NULL,
					"sequence %zu of the batch is empty: statistics pooling "
					"needs at least one frame", b);
		}
		const float *xb = x + off[b] * D;
		memset(s, 0, 2 * D * sizeof(double));
		for (size_t t = 0; t < T; t++)
			for (size_t j = 0; j < D; j++)
				s[j] += xb[t * D + j];
		for (size_t j = 0; j < D; j++)
			s[j] /= (double)T;
		for (size_t t = 0; t < T; t++)
			for (size_t j = 0; j < D; j++) {
				double d = xb[t * D + j] - s[j];
				v[j] += d * d;
			}
		float *y = l->y + b * 2 * D;
		for (size_t j = 0; j < D; j++) {
			double var = v[j] / (double)T;
			y[j] = (float)s[j];
			y[D + j] = (float)sqrt(var > l->s.var_floor ? var : l->s.var_floor);
		}
	}
	free(s);
	return 0;
}

static int embedding_fwd(struct vpa_nn *net, struct layer *l, const uint32_t *ids, size_t rows,
			 struct vpa_err *err)
{
	const float *E = net->params + l->poff;
	size_t D = l->out;
	for (size_t r = 0; r < rows; r++) {
		if (ids[r] >= l->s.vocab)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"token id %u at position %zu is outside the vocabulary (%zu words)",
					ids[r], r, l->s.vocab);
		memcpy(l->y + r * D, E + (size_t)ids[r] * D, D * sizeof(float));
	}
	return 0;
}

/*
 * One LSTM direction (gates i f g o, PyTorch's order):
 *   [i f g o] = x_t W_ih^T + h_{t-1} W_hh^T + b
 *   c_t = sig(f) c_{t-1} + sig(i) tanh(g);   h_t = sig(o) tanh(c_t)
 * h is written to l->y at column dir*H (row stride l->out).  Caches: the
 * activated gates (rows, 4H) at c1 + dir*rows*4H and c_t (rows, H) at
 * c2 + dir*rows*H.  All sequences advance together: step t gathers the
 * h_{t-1} of the sequences still running into one (n_active, H) matrix.
 */
static void lstm_fwd_dir(struct vpa_nn *net, struct layer *l, size_t dir, int rev, const float *x,
			 const size_t *off, size_t n_seq, size_t rows)
{
	size_t H = l->s.out, in = l->in, G4 = 4 * H, ldy = l->out;
	size_t per = G4 * in + G4 * H + G4;
	const float *Wih = net->params + l->poff + dir * per, *Whh = Wih + G4 * in,
		    *bias = Whh + G4 * H;
	float *G = l->c1 + dir * rows * G4, *C = l->c2 + dir * rows * H, *Y = l->y + dir * H;
	fill_bias(G, rows, G4, bias);
	vpa_sgemm(0, 1, rows, G4, in, 1.0f, x, in, Wih, in, 1.0f, G, G4);
	size_t maxlen = 0;
	for (size_t b = 0; b < n_seq; b++)
		if (off[b + 1] - off[b] > maxlen)
			maxlen = off[b + 1] - off[b];
	float *hg = nn_grow(&net->scratch, &net->scratch_cap, xmul(n_seq, H + G4));
	float *gg = hg + n_seq * H;
	size_t *ridx = grow_sz(&net->ibuf, &net->ibuf_cap, n_seq);
	for (size_t t = 0; t < maxlen; t++) {
		size_t na = 0;
		for (size_t b = 0; b < n_seq; b++) {
			size_t len = off[b + 1] - off[b];
			if (t >= len)
				continue;
			size_t r = rev ? off[b] + len - 1 - t : off[b] + t;
			ridx[na] = r;
			if (t > 0)
				memcpy(hg + na * H, Y + (rev ? r + 1 : r - 1) * ldy, H * sizeof(float));
			na++;
		}
		if (t > 0) {
			vpa_sgemm(0, 1, na, G4, H, 1.0f, hg, H, Whh, H, 0.0f, gg, G4);
			for (size_t a = 0; a < na; a++) {
				float *g = G + ridx[a] * G4;
				const float *q = gg + a * G4;
				for (size_t j = 0; j < G4; j++)
					g[j] += q[j];
			}
		}
		for (size_t a = 0; a < na; a++) {
			size_t r = ridx[a];
			float *g = G + r * G4, *c = C + r * H, *y = Y + r * ldy;
			const float *cp = t > 0 ? C + (rev ? r + 1 : r - 1) * H : NULL;
			for (size_t j = 0; j < H; j++) {
				float i = sigm(g[j]), f = sigm(g[H + j]), gt = tanhf(g[2 * H + j]),
				      o = sigm(g[3 * H + j]);
				g[j] = i;
				g[H + j] = f;
				g[2 * H + j] = gt;
				g[3 * H + j] = o;
				c[j] = (cp ? f * cp[j] : 0.0f) + i * gt;
				y[j] = o * tanhf(c[j]);
			}
		}
	}
}

static void lstm_fwd(struct vpa_nn *net, struct layer *l, const float *x, const size_t *off,
		     size_t n_seq, size_t rows)
{
	size_t H = l->s.out, nd = l->s.kind == VPA_NN_BILSTM ? 2 : 1;
	nn_grow(&l->c1, &l->c1_cap, xmul(nd * rows, 4 * H));
	nn_grow(&l->c2, &l->c2_cap, xmul(nd * rows, H));
	if (nd == 1) {
		lstm_fwd_dir(net, l, 0, l->s.reverse, x, off, n_seq, rows);
	} else {
		lstm_fwd_dir(net, l, 0, 0, x, off, n_seq, rows);
		lstm_fwd_dir(net, l, 1, 1, x, off, n_seq, rows);
	}
}

int vpa_nn_forward(struct vpa_nn *net, const struct vpa_nn_batch *in, enum vpa_nn_mode mode,
		   struct vpa_err *err)
{
	if (net->n == 0)
		VPA_BUG("forward through an empty network");
	if (!in->off || in->off[0] != 0)
		VPA_BUG("batch offsets must start at 0");
	for (size_t b = 0; b < in->n_seq; b++)
		if (in->off[b + 1] < in->off[b])
			VPA_BUG("batch offsets must be non-decreasing");
	size_t rows = in->n_seq ? in->off[in->n_seq] : 0;
	if (rows == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "a batch with no frame");
	int emb = net->L[0].s.kind == VPA_NN_EMBEDDING;
	if (emb ? !in->ids : !in->x)
		VPA_BUG("batch lacks %s", emb ? "ids" : "x");
	nn_ensure(net);
	net->in = *in;
	net->train = mode == VPA_NN_TRAIN;
	const float *x = in->x;
	const size_t *off = in->off;
	size_t n_seq = in->n_seq;
	for (size_t i = 0; i < net->n; i++) {
		struct layer *l = &net->L[i];
		size_t orows = l->s.kind == VPA_NN_STATSPOOL ? n_seq : rows;
		size_t *lo = grow_sz(&l->off, &l->off_cap, n_seq + 1);
		for (size_t b = 0; b <= n_seq; b++)
			lo[b] = l->s.kind == VPA_NN_STATSPOOL ? b : off[b];
		l->n_seq = n_seq;
		l->rows = orows;
		nn_grow(&l->y, &l->y_cap, xmul(orows, l->out) + 1);
		size_t n = rows * l->in;
		int rc = 0;
		switch (l->s.kind) {
		case VPA_NN_DENSE:
			dense_fwd(net, l, x, rows);
			break;
		case VPA_NN_TDNN:
			tdnn_fwd(net, l, x, off, n_seq, rows, net->train);
			break;
		case VPA_NN_RELU:
			relu_fwd(x, l->y, n);
			break;
		case VPA_NN_SIGMOID:
			for (size_t j = 0; j < n; j++)
				l->y[j] = sigm(x[j]);
			break;
		case VPA_NN_TANH:
			for (size_t j = 0; j < n; j++)
				l->y[j] = tanhf(x[j]);
			break;
		case VPA_NN_BATCHNORM:
			bn_fwd(net, l, x, rows, net->train);
			break;
		case VPA_NN_DROPOUT:
			dropout_fwd(l, x, rows, net->train);
			break;
		case VPA_NN_STATSPOOL:
			rc = statspool_fwd(l, x, off, n_seq, err);
			break;
		case VPA_NN_EMBEDDING:
			rc = embedding_fwd(net, l, in->ids, rows, err);
			break;
		case VPA_NN_LSTM:
		case VPA_NN_BILSTM:
			lstm_fwd(net, l, x, off, n_seq, rows);
			break;
		default:
			VPA_BUG("layer kind %d", (int)l->s.kind);
		}
		if (rc)
			return rc;
		x = l->y;
		off = l->off;
		rows = orows;
	}
	net->fwd_ok = 1;
	return 0;
}

const float *vpa_nn_activation(const struct vpa_nn *net, size_t i, size_t *rows, size_t *dim)
{
	if (i >= net->n)
		VPA_BUG("layer %zu of %zu", i, net->n);
	if (rows)
		*rows = net->L[i].rows;
	if (dim)
		*dim = net->L[i].out;
	return net->L[i].y;
}

const float *vpa_nn_output(const struct vpa_nn *net, size_t *rows, size_t *dim)
{
	return vpa_nn_activation(net, net->n - 1, rows, dim);
}

const size_t *vpa_nn_offsets(const struct vpa_nn *net, size_t i, size_t *n_seq)
{
	if (i >= net->n)
		VPA_BUG("layer %zu of %zu", i, net->n);
	if (n_seq)
		*n_seq = net->L[i].n_seq;
	return net->L[i].off;
}

/* ------------------------------------------------------------- backward */

static void dense_bwd(struct vpa_nn *net, struct layer *l, const float *x, size_t fan_in,
		      size_t rows, const float *dy, float *dx)
{
	const float *W = net->params + l->poff;
	float *dW = net->grads + l->poff, *db = dW + l->out * fan_in;
	vpa_sgemm(1, 0, l->out, fan_in, rows, 1.0f, dy, l->out, x, fan_in, 1.0f, dW, fan_in);
	add_colsum(db, dy, rows, l->out);
	if (dx)
		vpa_sgemm(0, 0, rows, fan_in, l->out, 1.0f, dy, l->out, W, fan_in, 0.0f, dx, fan_in);
}

static void tdnn_bwd(struct vpa_nn *net, struct layer *l, const float *x, const size_t *off,
		     size_t n_seq, size_t rows, const float *dy, float *dx)
{
	if (tdnn_is_plain(l)) {
		dense_bwd(net, l, x, l->in, rows, dy, dx);
		return;
	}
	size_t k = l->s.n_context, kin = k * l->in;
	dense_bwd(net, l, l->c1, kin, rows, dy, NULL);
	if (!dx)
		return;
	const float *W = net->params + l->poff;
	float *dS = nn_grow(&net->scratch, &net->scratch_cap, xmul(rows, kin));
	vpa_sgemm(0, 0, rows, kin, l->out, 1.0f, dy, l->out, W, kin, 0.0f, dS, kin);
	memset(dx, 0, rows * l->in * sizeof(float));
	unsplice_add(dx, l->in, off, n_seq, l->s.context, k, dS);
}

static void bn_bwd(struct vpa_nn *net, struct layer *l, size_t rows, const float *dy, float *dx,
		   int train)
{
	size_t D = l->in;
	const float *gamma = net->params + l->poff, *xhat = l->c1, *istd = l->c2;
	float *dgamma = net->grads + l->poff, *dbeta = dgamma + D;
	double *sd = xcalloc(2 * D, sizeof(double)), *sdx = sd + D; /* sum dxhat, sum dxhat xhat */
	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < D; j++) {
			float d = dy[r * D + j], h = xhat[r * D + j];
			dgamma[j] += d * h;
			dbeta[j] += d;
			sd[j] += (double)d * gamma[j];
			sdx[j] += (double)d * gamma[j] * h;
		}
	if (dx && train) {
		double R = (double)rows;
		for (size_t j = 0; j < D; j++) /* once per channel */
			sd[j] /= R;
		for (size_t r = 0; r < rows; r++)
			for (size_t j = 0; j < D; j++) {
				double dh = (double)dy[r * D + j] * gamma[j];
				dx[r * D + j] =
					(float)(istd[j] * (dh - sd[j] - xhat[r * D + j] * sdx[j] / R));
			}
	} else if (dx) {
		for (size_t r = 0; r < rows; r++)
			for (size_t j = 0; j < D; j++)
				dx[r * D + j] = (float)(istd[j] * ((double)dy[r * D + j] * gamma[j]));
	}
	free(sd);
}

static void statspool_bwd(struct layer *l, const float *x, const size_t *off, size_t n_seq,
			  const float *dy, float *dx)
{
	size_t D = l->in;
	double *a = xmalloc(xmul(3 * D, sizeof(double))), *c = a + D, *mu = c + D;
	for (size_t b = 0; b < n_seq; b++) {
		size_t T = off[b + 1] - off[b];
		const float *y = l->y + b * 2 * D, *d = dy + b * 2 * D;
		const float *xb = x + off[b] * D;
		float *o = dx + off[b] * D;
		for (size_t j = 0; j < D; j++) {
			double sd = y[D + j];
			/* above the floor, d std / d x_t = (x_t - mu) / (T std) */
			int live = (double)sd * sd > l->s.var_floor && sd > 0;
			mu[j] = y[j];
			a[j] = d[j] / (double)T;
			c[j] = live ? d[D + j] / ((double)T * sd) : 0.0;
		}
		for (size_t t = 0; t < T; t++) /* rows in order, each value as before */
			for (size_t j = 0; j < D; j++)
				o[t * D + j] = (float)(a[j] + c[j] * (xb[t * D + j] - mu[j]));
	}
	free(a);
}

/*
 * Back-propagation through time for one direction.  Going backwards in
 * time, dh and dc flowing from step t+1 to step t are kept per sequence in
 * DH, DC (n_seq, H); the recurrent product dG_t W_hh runs on the gathered
 * rows of the sequences active at t.  The weight gradients are then whole-
 * batch GEMMs: dW_hh += dG^T Hprev, dW_ih += dG^T X.
 */
static void lstm_bwd_dir(struct vpa_nn *net, struct layer *l, size_t dir, int rev, const float *x,
			 const size_t *off, size_t n_seq, size_t rows, const float *dy, float *dx,
			 float beta)
{
	size_t H = l->s.out, in = l->in, G4 = 4 * H, ldy = l->out;
	size_t per = G4 * in + G4 * H + G4;
	const float *Wih = net->params + l->poff + dir * per, *Whh = Wih + G4 * in;
	float *dWih = net->grads + l->poff + dir * per, *dWhh = dWih + G4 * in, *db = dWhh + G4 * H;
	const float *G = l->c1 + dir * rows * G4, *C = l->c2 + dir * rows * H, *Y = l->y + dir * H;
	const float *DY = dy + dir * H;
	size_t maxlen = 0;
	for (size_t b = 0; b < n_seq; b++)
		if (off[b + 1] - off[b] > maxlen)
			maxlen = off[b + 1] - off[b];
	/* scratch: dG (rows, 4H) | Hprev (rows, H) | DH, DC (n_seq, H) | gathered dG (n_seq, 4H)
	 * | gathered dh (n_seq, H) */
	size_t need = rows * G4 + rows * H + 2 * n_seq * H + n_seq * G4 + n_seq * H;
	float *dG = nn_grow(&net->scratch, &net->scratch_cap, need);
	float *Hp = dG + rows * G4, *DH = Hp + rows * H, *DC = DH + n_seq * H;
	float *gdg = DC + n_seq * H, *gdh = gdg + n_seq * G4;
	size_t *bidx = grow_sz(&net->ibuf, &net->ibuf_cap, 2 * n_seq);
	size_t *ridx = bidx + n_seq;
	memset(DH, 0, 2 * n_seq * H * sizeof(float));
	for (size_t t = maxlen; t-- > 0;) {
		size_t na = 0;
		for (size_t b = 0; b < n_seq; b++) {
			size_t len = off[b + 1] - off[b];
			if (t >= len)
				continue;
			size_t r = rev ? off[b] + len - 1 - t : off[b] + t;
			size_t rp = rev ? r + 1 : r - 1;
			const float *g = G + r * G4, *c = C + r * H, *cp = t > 0 ? C + rp * H : NULL;
			const float *d = DY + r * ldy;
			float *dh = DH + b * H, *dc = DC + b * H, *o = dG + r * G4;
			for (size_t j = 0; j < H; j++) {
				float i = g[j], f = g[H + j], gt = g[2 * H + j], og = g[3 * H + j];
				float tc = tanhf(c[j]);
				float dhj = d[j] + dh[j];
				float dcj = dc[j] + dhj * og * (1.0f - tc * tc);
				float cpj = cp ? cp[j] : 0.0f;
				o[j] = dcj * gt * i * (1.0f - i);
				o[H + j] = dcj * cpj * f * (1.0f - f);
				o[2 * H + j] = dcj * i * (1.0f - gt * gt);
				o[3 * H + j] = dhj * tc * og * (1.0f - og);
				dc[j] = dcj * f;
			}
			if (t > 0) {
				memcpy(Hp + r * H, Y + rp * ldy, H * sizeof(float));
				memcpy(gdg + na * G4, o, G4 * sizeof(float));
			} else {
				memset(Hp + r * H, 0, H * sizeof(float));
				memset(dh, 0, H * sizeof(float));
				memset(dc, 0, H * sizeof(float));
			}
			bidx[na] = b;
			ridx[na] = r;
			na++;
		}
		if (t > 0) {
			vpa_sgemm(0, 0, na, H, G4, 1.0f, gdg, G4, Whh, H, 0.0f, gdh, H);
			for (size_t a = 0; a < na; a++)
				memcpy(DH + bidx[a] * H, gdh + a * H, H * sizeof(float));
		}
	}
	vpa_sgemm(1, 0, G4, H, rows, 1.0f, dG, G4, Hp, H, 1.0f, dWhh, H);
	vpa_sgemm(1, 0, G4, in, rows, 1.0f, dG, G4, x, in, 1.0f, dWih, in);
	add_colsum(db, dG, rows, G4);
	if (dx)
		vpa_sgemm(0, 0, rows, in, G4, 1.0f, dG, G4, Wih, in, beta, dx, in);
}

static void lstm_bwd(struct vpa_nn *net, struct layer *l, const float *x, const size_t *off,
		     size_t n_seq, size_t rows, const float *dy, float *dx)
{
	if (l->s.kind == VPA_NN_LSTM) {
		lstm_bwd_dir(net, l, 0, l->s.reverse, x, off, n_seq, rows, dy, dx, 0.0f);
	} else {
		lstm_bwd_dir(net, l, 0, 0, x, off, n_seq, rows, dy, dx, 0.0f);
		lstm_bwd_dir(net, l, 1, 1, x, off, n_seq, rows, dy, dx, 1.0f);
	}
}

void vpa_nn_backward(struct vpa_nn *net, const float *dout, float *dx)
{
	if (!net->fwd_ok || !net->train)
		VPA_BUG("vpa_nn_backward needs a TRAIN forward first");
	if (dx && net->L[0].s.kind == VPA_NN_EMBEDDING)
		VPA_BUG("no input gradient for an embedding network");
	const float *d = dout;
	for (size_t i = net->n; i-- > 0;) {
		struct layer *l = &net->L[i];
		const float *x = i ? net->L[i - 1].y : net->in.x;
		const size_t *off = i ? net->L[i - 1].off : net->in.off;
		size_t n_seq = net->in.n_seq;
		size_t rows = off[n_seq];
		float *o;
		if (i == 0)
			o = dx;
		else
			o = nn_grow(&net->d[i & 1], &net->d_cap[i & 1], xmul(rows, l->in) + 1);
		size_t n = rows * l->in;
		switch (l->s.kind) {
		case VPA_NN_DENSE:
			dense_bwd(net, l, x, l->in, rows, d, o);
			break;
		case VPA_NN_TDNN:
			tdnn_bwd(net, l, x, off, n_seq, rows, d, o);
			break;
		case VPA_NN_RELU:
			if (o)
				relu_bwd(l->y, d, o, n);
			break;
		case VPA_NN_SIGMOID:
			if (o)
				for (size_t j = 0; j < n; j++)
					o[j] = d[j] * l->y[j] * (1.0f - l->y[j]);
			break;
		case VPA_NN_TANH:
			if (o)
				for (size_t j = 0; j < n; j++)
					o[j] = d[j] * (1.0f - l->y[j] * l->y[j]);
			break;
		case VPA_NN_BATCHNORM:
			bn_bwd(net, l, rows, d, o, 1);
			break;
		case VPA_NN_DROPOUT:
			if (o) {
				if (l->s.p == 0)
					memcpy(o, d, n * sizeof(float));
				else
					for (size_t j = 0; j < n; j++)
						o[j] = d[j] * l->c1[j];
			}
			break;
		case VPA_NN_STATSPOOL:
			if (o)
				statspool_bwd(l, x, off, n_seq, d, o);
			break;
		case VPA_NN_EMBEDDING: {
			float *dE = net->grads + l->poff;
			size_t D = l->out;
			for (size_t r = 0; r < rows; r++) {
				float *e = dE + (size_t)net->in.ids[r] * D;
				for (size_t j = 0; j < D; j++)
					e[j] += d[r * D + j];
			}
			break;
		}
		case VPA_NN_LSTM:
		case VPA_NN_BILSTM:
			lstm_bwd(net, l, x, off, n_seq, rows, d, o);
			break;
		default:
			VPA_BUG("layer kind %d", (int)l->s.kind);
		}
		d = o;
	}
}
