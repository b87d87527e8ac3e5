/*
 * audio/ecapa.c - the small ECAPA-TDNN.  See ecapa.h for the network and
 * the choices; the parts learn/nn has not got (Res2 cascade, SE, residual,
 * MFA, attentive statistics pooling) have their backward passes here, checked
 * against finite differences in tests/unit/test_ecapa.c.  Reductions over
 * frames accumulate in double.
 */
#include "audio/ecapa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VAR_FLOOR 1e-10

/* A scratch buffer kept between calls, grown when a batch needs more. */
struct buf {
	void *p;
	size_t bytes;
};

static void *grow(struct buf *b, size_t bytes)
{
	if (bytes > b->bytes) {
		free(b->p);
		b->p = xmalloc(bytes ? bytes : 1);
		b->bytes = bytes;
	}
	return b->p;
}

static float *fb(struct buf *b, size_t n)
{
	return grow(b, xmul(n, sizeof(float)));
}

/* per-channel double accumulators */
static double *dacc(struct buf *b, size_t n)
{
	return grow(b, xmul(n, sizeof(double)));
}

static size_t *seq_offsets(size_t **p, size_t *cap, size_t n_seq)
{
	if (n_seq + 1 > *cap) {
		free(*p);
		*p = xmalloc(xmul(n_seq + 1, sizeof(size_t)));
		*cap = n_seq + 1;
	}
	for (size_t b = 0; b <= n_seq; b++)
		(*p)[b] = b;
	return *p;
}

static int run(struct vpa_nn *net, const float *x, const size_t *off, size_t n_seq,
	       enum vpa_nn_mode mode, const float **y, struct vpa_err *err)
{
	struct vpa_nn_batch in = {.n_seq = n_seq, .off = off, .x = x, .ids = NULL};
	int rc = vpa_nn_forward(net, &in, mode, err);
	if (rc)
		return rc;
	size_t r, d;
	*y = vpa_nn_output(net, &r, &d);
	return 0;
}

/* dst (rows, w) = columns c0 .. c0+w-1 of src (rows, ld); add: dst += */
static void get_cols(float *dst, const float *src, size_t rows, size_t ld, size_t c0, size_t w,
		     int add)
{
	for (size_t r = 0; r < rows; r++) {
		const float *s = src + r * ld + c0;
		float *d = dst + r * w;
		if (add)
			for (size_t j = 0; j < w; j++)
				d[j] += s[j];
		else
			memcpy(d, s, w * sizeof(float));
	}
}

static void put_cols(float *dst, size_t ld, size_t c0, const float *src, size_t rows, size_t w)
{
	for (size_t r = 0; r < rows; r++)
		memcpy(dst + r * ld + c0, src + r * w, w * sizeof(float));
}

/* ------------------------------------------------------- SE-Res2Block */

struct vpa_ecapa_block {
	size_t C, s, w, B;
	int d;
	/* nets[0] 1x1 in, nets[1..s-1] K_i, nets[s] 1x1 out, nets[s+1] SE MLP */
	struct vpa_nn *nets[VPA_ECAPA_MAX_SCALE + 2];
	size_t n_nets;
	const float *x, *z, *g, *ky[VPA_ECAPA_MAX_SCALE];
	const size_t *off;
	size_t n_seq, rows;
	size_t *soff, soff_cap;
	struct buf u[VPA_ECAPA_MAX_SCALE], Y, m, dm, out, dz, dg, dY, dy, du, dh, acc;
};

struct vpa_ecapa_block *vpa_ecapa_block_new(size_t C, size_t s, int d, size_t B, int smooth)
{
	const enum vpa_nn_kind act = smooth ? VPA_NN_TANH : VPA_NN_RELU;
	if (s < 1 || s > VPA_ECAPA_MAX_SCALE || C % s || !B || d < 1)
		VPA_BUG("bad SE-Res2Block sizes C %zu s %zu d %d B %zu", C, s, d, B);
	struct vpa_ecapa_block *k = xcalloc(1, sizeof(*k));
	k->C = C;
	k->s = s;
	k->w = C / s;
	k->B = B;
	k->d = d;
	const int ctx[3] = {-d, 0, d};
	k->nets[0] = vpa_nn_new(C);
	vpa_nn_add_dense(k->nets[0], C);
	vpa_nn_add_simple(k->nets[0], act);
	vpa_nn_add_simple(k->nets[0], VPA_NN_BATCHNORM);
	for (size_t i = 1; i < s; i++) {
		k->nets[i] = vpa_nn_new(k->w);
		vpa_nn_add_tdnn(k->nets[i], k->w, ctx, 3);
		vpa_nn_add_simple(k->nets[i], act);
		vpa_nn_add_simple(k->nets[i], VPA_NN_BATCHNORM);
	}
	k->nets[s] = vpa_nn_new(C);
	vpa_nn_add_dense(k->nets[s], C);
	vpa_nn_add_simple(k->nets[s], act);
	vpa_nn_add_simple(k->nets[s], VPA_NN_BATCHNORM);
	k->nets[s + 1] = vpa_nn_new(C);
	vpa_nn_add_dense(k->nets[s + 1], B);
	vpa_nn_add_simple(k->nets[s + 1], act);
	vpa_nn_add_dense(k->nets[s + 1], C);
	vpa_nn_add_simple(k->nets[s + 1], VPA_NN_SIGMOID);
	k->n_nets = s + 2;
	return k;
}

static void buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->bytes = 0;
}

void vpa_ecapa_block_free(struct vpa_ecapa_block *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n_nets; i++)
		vpa_nn_free(k->nets[i]);
	for (size_t i = 0; i < VPA_ECAPA_MAX_SCALE; i++)
		buf_free(&k->u[i]);
	struct buf *bs[] = {&k->Y,  &k->m,  &k->dm, &k->out, &k->dz, &k->dg,
			    &k->dY, &k->dy, &k->du, &k->dh,  &k->acc};
	for (size_t i = 0; i < sizeof(bs) / sizeof(bs[0]); i++)
		buf_free(bs[i]);
	free(k->soff);
	free(k);
}

size_t vpa_ecapa_block_n_nets(const struct vpa_ecapa_block *k)
{
	return k->n_nets;
}

struct vpa_nn *vpa_ecapa_block_net(struct vpa_ecapa_block *k, size_t i)
{
	if (i >= k->n_nets)
		VPA_BUG("block net %zu of %zu", i, k->n_nets);
	return k->nets[i];
}

int vpa_ecapa_block_forward(struct vpa_ecapa_block *k, const float *x, const size_t *off,
			    size_t n_seq, enum vpa_nn_mode mode, const float **out,
			    struct vpa_err *err)
{
	const size_t C = k->C, s = k->s, w = k->w, rows = off[n_seq];
	k->x = x;
	k->off = off;
	k->n_seq = n_seq;
	k->rows = rows;
	const float *h;
	int rc = run(k->nets[0], x, off, n_seq, mode, &h, err);
	if (rc)
		return rc;
	float *Y = fb(&k->Y, rows * C);
	for (size_t r = 0; r < rows; r++) /* y_1 = h_1 */
		memcpy(Y + r * C, h + r * C, w * sizeof(float));
	for (size_t i = 1; i < s; i++) {
		float *u = fb(&k->u[i], rows * w);
		get_cols(u, h, rows, C, i * w, w, 0);
		if (i >= 2) /* u_i = h_i + y_{i-1} */
			for (size_t j = 0; j < rows * w; j++)
				u[j] += k->ky[i - 1][j];
		rc = run(k->nets[i], u, off, n_seq, mode, &k->ky[i], err);
		if (rc)
			return rc;
		put_cols(Y, C, i * w, k->ky[i], rows, w);
	}
	rc = run(k->nets[s], Y, off, n_seq, mode, &k->z, err);
	if (rc)
		return rc;
	/* squeeze: per-sequence means of z */
	float *m = fb(&k->m, n_seq * C);
	for (size_t b = 0; b < n_seq; b++) {
		size_t T = off[b + 1] - off[b];
		if (T == 0)
			return vpa_fail(err, VPA_EINPUT, NULL, "sequence %zu of the batch is empty", b);
		double *acc = dacc(&k->acc, C); /* per channel, frames in order (as in the pooling) */
		for (size_t c = 0; c < C; c++)
			acc[c] = 0;
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < C; c++)
				acc[c] += k->z[t * C + c];
		for (size_t c = 0; c < C; c++)
			m[b * C + c] = (float)(acc[c] / (double)T);
	}
	rc = run(k->nets[s + 1], m, seq_offsets(&k->soff, &k->soff_cap, n_seq), n_seq, mode, &k->g,
		 err);
	if (rc)
		return rc;
	/* excite and add the residual */
	float *o = fb(&k->out, rows * C);
	for (size_t b = 0; b < n_seq; b++)
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < C; c++)
				o[t * C + c] = k->z[t * C + c] * k->g[b * C + c] + x[t * C + c];
	*out = o;
	return 0;
}

void vpa_ecapa_block_backward(struct vpa_ecapa_block *k, const float *dout, float *dx)
{
	const size_t C = k->C, s = k->s, w = k->w, rows = k->rows, n_seq = k->n_seq;
	const size_t *off = k->off;
	float *dz = fb(&k->dz, rows * C), *dg = fb(&k->dg, n_seq * C);
	double *acc = dacc(&k->acc, C);
	for (size_t b = 0; b < n_seq; b++) {
		for (size_t c = 0; c < C; c++)
			acc[c] = 0;
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < C; c++) {
				acc[c] += (double)dout[t * C + c] * k->z[t * C + c];
				dz[t * C + c] = dout[t * C + c] * k->g[b * C + c];
			}
		for (size_t c = 0; c < C; c++)
			dg[b * C + c] = (float)acc[c];
	}
	float *dm = fb(&k->dm, n_seq * C);
	vpa_nn_backward(k->nets[s + 1], dg, dm);
	for (size_t b = 0; b < n_seq; b++) {
		float inv = 1.0f / (float)(off[b + 1] - off[b]);
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < C; c++)
				dz[t * C + c] += dm[b * C + c] * inv;
	}
	float *dY = fb(&k->dY, rows * C);
	vpa_nn_backward(k->nets[s], dz, dY);
	float *dh = fb(&k->dh, rows * C), *dy = fb(&k->dy, rows * w), *du = fb(&k->du, rows * w);
	for (size_t i = s - 1; i >= 1; i--) {
		/* dy_i = dY_i, plus du_{i+1} (still in du) when y_i fed u_{i+1} */
		get_cols(dy, dY, rows, C, i * w, w, 0);
		if (i + 1 < s)
			for (size_t j = 0; j < rows * w; j++)
				dy[j] += du[j];
		vpa_nn_backward(k->nets[i], dy, du);
		put_cols(dh, C, i * w, du, rows, w);
	}
	for (size_t r = 0; r < rows; r++)
		memcpy(dh + r * C, dY + r * C, w * sizeof(float));
	float *dxin = fb(&k->dz, rows * C); /* dz is consumed */
	vpa_nn_backward(k->nets[0], dh, dxin);
	if (dx)
		for (size_t j = 0; j < rows * C; j++)
			dx[j] = dout[j] + dxin[j];
}

/* ------------------------------------------ attentive statistics pooling */

struct vpa_ecapa_asp {
	size_t D, A;
	struct vpa_nn *att;
	const float *h;
	const size_t *off;
	size_t n_seq, rows;
	struct buf mean, var, ctx, alpha, out, s2, de, dctx, acc;
};

struct vpa_ecapa_asp *vpa_ecapa_asp_new(size_t D, size_t A)
{
	struct vpa_ecapa_asp *a = xcalloc(1, sizeof(*a));
	a->D = D;
	a->A = A;
	a->att = vpa_nn_new(3 * D);
	vpa_nn_add_dense(a->att, A);
	vpa_nn_add_simple(a->att, VPA_NN_TANH);
	vpa_nn_add_dense(a->att, D);
	return a;
}

void vpa_ecapa_asp_free(struct vpa_ecapa_asp *a)
{
	if (!a)
		return;
	vpa_nn_free(a->att);
	struct buf *bs[] = {&a->mean, &a->var, &a->ctx, &a->alpha, &a->out,
			    &a->s2,   &a->de,  &a->dctx, &a->acc};
	for (size_t i = 0; i < sizeof(bs) / sizeof(bs[0]); i++)
		buf_free(bs[i]);
	free(a);
}

struct vpa_nn *vpa_ecapa_asp_net(struct vpa_ecapa_asp *a)
{
	return a->att;
}

/*
 * The loops below run over frames outside and channels inside (rows are
 * contiguous), with one double accumulator per channel: each channel's sums
 * still add the frames in order, so the values are those of a loop per
 * channel, and the rows are read once in order instead of a column at a time.
 */
int vpa_ecapa_asp_forward(struct vpa_ecapa_asp *a, const float *h, const size_t *off,
			  size_t n_seq, enum vpa_nn_mode mode, const float **out,
			  struct vpa_err *err)
{
	const size_t D = a->D, rows = off[n_seq];
	a->h = h;
	a->off = off;
	a->n_seq = n_seq;
	a->rows = rows;
	float *mean = fb(&a->mean, n_seq * D), *var = fb(&a->var, n_seq * D);
	float *ctx = fb(&a->ctx, rows * 3 * D);
	double *s1 = dacc(&a->acc, 4 * D), *q = s1 + D, *z = q + D, *mx = z + D;
	for (size_t b = 0; b < n_seq; b++) {
		size_t T = off[b + 1] - off[b];
		if (T == 0)
			return vpa_fail(err, VPA_EINPUT, NULL, "sequence %zu of the batch is empty", b);
		for (size_t c = 0; c < D; c++)
			s1[c] = q[c] = 0;
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < D; c++)
				s1[c] += h[t * D + c];
		for (size_t c = 0; c < D; c++)
			s1[c] /= (double)T;
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < D; c++) {
				double e = h[t * D + c] - s1[c];
				q[c] += e * e;
			}
		for (size_t c = 0; c < D; c++) {
			mean[b * D + c] = (float)s1[c];
			var[b * D + c] = (float)(q[c] / (double)T);
		}
		for (size_t t = off[b]; t < off[b + 1]; t++) {
			float *r = ctx + t * 3 * D;
			memcpy(r, h + t * D, D * sizeof(float));
			memcpy(r + D, mean + b * D, D * sizeof(float));
			if (t == off[b])
				for (size_t c = 0; c < D; c++)
					r[2 * D + c] = (float)sqrt(fmax(var[b * D + c], VAR_FLOOR));
			else
				memcpy(r + 2 * D, ctx + off[b] * 3 * D + 2 * D, D * sizeof(float));
		}
	}
	const float *e;
	int rc = run(a->att, ctx, off, n_seq, mode, &e, err);
	if (rc)
		return rc;
	float *al = fb(&a->alpha, rows * D), *o = fb(&a->out, n_seq * 2 * D);
	float *s2 = fb(&a->s2, n_seq * D);
	double *mu = s1;
	for (size_t b = 0; b < n_seq; b++) {
		for (size_t c = 0; c < D; c++) {
			mx[c] = -INFINITY;
			z[c] = mu[c] = q[c] = 0;
		}
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < D; c++)
				mx[c] = fmax(mx[c], e[t * D + c]);
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < D; c++)
				z[c] += exp(e[t * D + c] - mx[c]);
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < D; c++) {
				double p = exp(e[t * D + c] - mx[c]) / z[c], v = h[t * D + c];
				al[t * D + c] = (float)p;
				mu[c] += p * v;
				q[c] += p * v * v;
			}
		for (size_t c = 0; c < D; c++) {
			double v2 = q[c] - mu[c] * mu[c];
			s2[b * D + c] = (float)v2;
			o[b * 2 * D + c] = (float)mu[c];
			o[b * 2 * D + D + c] = (float)sqrt(fmax(v2, VAR_FLOOR));
		}
	}
	*out = o;
	return 0;
}

void vpa_ecapa_asp_backward(struct vpa_ecapa_asp *a, const float *dout, float *dh)
{
	const size_t D = a->D, rows = a->rows, n_seq = a->n_seq;
	const size_t *off = a->off;
	const float *h = a->h, *al = a->alpha.p, *o = a->out.p, *s2 = a->s2.p;
	float *de = fb(&a->de, rows * D);
	double *ds2 = dacc(&a->acc, 4 * D), *dmu = ds2 + D, *sa = dmu + D, *ds = sa + D;
	for (size_t b = 0; b < n_seq; b++) {
		for (size_t c = 0; c < D; c++) {
			double m = o[b * 2 * D + c], sg = o[b * 2 * D + D + c];
			ds2[c] = s2[b * D + c] > VAR_FLOOR ? dout[b * 2 * D + D + c] / (2 * sg) : 0;
			dmu[c] = dout[b * 2 * D + c] - 2 * m * ds2[c];
			sa[c] = 0;
		}
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < D; c++) {
				double v = h[t * D + c], p = al[t * D + c];
				double dal = dmu[c] * v + ds2[c] * v * v;
				de[t * D + c] = (float)dal; /* d alpha for now */
				dh[t * D + c] = (float)(p * (dmu[c] + 2 * ds2[c] * v));
				sa[c] += p * dal;
			}
		for (size_t t = off[b]; t < off[b + 1]; t++) /* softmax over t */
			for (size_t c = 0; c < D; c++)
				de[t * D + c] = (float)(al[t * D + c] * (de[t * D + c] - sa[c]));
	}
	float *dctx = fb(&a->dctx, rows * 3 * D);
	vpa_nn_backward(a->att, de, dctx);
	const float *mean = a->mean.p, *var = a->var.p;
	double *dm = dmu, *kstd = sa;
	for (size_t b = 0; b < n_seq; b++) {
		double T = (double)(off[b + 1] - off[b]);
		for (size_t c = 0; c < D; c++)
			dm[c] = ds[c] = 0;
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < D; c++) {
				dm[c] += dctx[t * 3 * D + D + c];
				ds[c] += dctx[t * 3 * D + 2 * D + c];
			}
		for (size_t c = 0; c < D; c++) {
			double v = var[b * D + c], sd = sqrt(fmax(v, VAR_FLOOR));
			kstd[c] = v > VAR_FLOOR ? ds[c] / (T * sd) : 0;
		}
		for (size_t t = off[b]; t < off[b + 1]; t++)
			for (size_t c = 0; c < D; c++)
				dh[t * D + c] += (float)(dctx[t * 3 * D + c] + dm[c] / T +
							 kstd[c] * (h[t * D + c] - mean[b * D + c]));
	}
}

/* --------------------------------------------------------- the network */

struct vpa_ecapa {
	struct vpa_ecapa_opts o;
	size_t in_dim;
	struct vpa_nn *stem, *mfa, *head;
	struct vpa_ecapa_block *blk[3];
	struct vpa_ecapa_asp *asp;
	struct vpa_nn **nets; /* every parameter holder (borrowed pointers) */
	size_t n_nets;
	const float *bo[3], *emb;
	const size_t *off;
	size_t n_seq, rows;
	size_t *soff, soff_cap;
	struct buf cat, dP, dH, dcat, db, dprev;
};

void vpa_ecapa_opts_init(struct vpa_ecapa_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->channels = 64;
	o->scale = 4;
	o->emb_dim = 64;
}

int vpa_ecapa_new(size_t input_dim, const struct vpa_ecapa_opts *oin, struct vpa_ecapa **out,
		  struct vpa_err *err)
{
	*out = NULL;
	struct vpa_ecapa_opts o = *oin;
	if (o.channels < 2 || o.channels > 65536 || o.scale < 1 || o.scale > VPA_ECAPA_MAX_SCALE)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"ECAPA needs 2..65536 channels and scale 1..%d, found %zu and %zu",
				VPA_ECAPA_MAX_SCALE, o.channels, o.scale);
	if (o.channels % o.scale)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"ECAPA channels %zu not a multiple of scale %zu", o.channels, o.scale);
	if (!input_dim || !o.emb_dim)
		return vpa_fail(err, VPA_EINPUT, NULL, "ECAPA needs input and embedding sizes > 0");
	if (!o.se_dim)
		o.se_dim = o.channels / 4 > 4 ? o.channels / 4 : 4;
	if (!o.att_dim)
		o.att_dim = o.channels / 4 > 4 ? o.channels / 4 : 4;
	if (!o.mfa_dim)
		o.mfa_dim = 3 * o.channels;
	struct vpa_ecapa *e = xcalloc(1, sizeof(*e));
	e->o = o;
	e->in_dim = input_dim;
	const size_t C = o.channels;
	const enum vpa_nn_kind act = o.smooth ? VPA_NN_TANH : VPA_NN_RELU;
	static const int c5[] = {-2, -1, 0, 1, 2};
	e->stem = vpa_nn_new(input_dim);
	vpa_nn_add_tdnn(e->stem, C, c5, 5);
	vpa_nn_add_simple(e->stem, act);
	vpa_nn_add_simple(e->stem, VPA_NN_BATCHNORM);
	for (int i = 0; i < 3; i++)
		e->blk[i] = vpa_ecapa_block_new(C, o.scale, i + 2, o.se_dim, o.smooth);
	e->mfa = vpa_nn_new(3 * C);
	vpa_nn_add_dense(e->mfa, o.mfa_dim);
	vpa_nn_add_simple(e->mfa, act);
	e->asp = vpa_ecapa_asp_new(o.mfa_dim, o.att_dim);
	e->head = vpa_nn_new(2 * o.mfa_dim);
	vpa_nn_add_simple(e->head, VPA_NN_BATCHNORM);
	vpa_nn_add_dense(e->head, o.emb_dim);
	e->n_nets = 4 + 3 * e->blk[0]->n_nets;
	e->nets = xmalloc(xmul(e->n_nets, sizeof(*e->nets)));
	size_t k = 0;
	e->nets[k++] = e->stem;
	for (int i = 0; i < 3; i++)
		for (size_t j = 0; j < e->blk[i]->n_nets; j++)
			e->nets[k++] = e->blk[i]->nets[j];
	e->nets[k++] = e->mfa;
	e->nets[k++] = e->asp->att;
	e->nets[k++] = e->head;
	*out = e;
	return 0;
}

void vpa_ecapa_free(struct vpa_ecapa *e)
{
	if (!e)
		return;
	vpa_nn_free(e->stem);
	vpa_nn_free(e->mfa);
	vpa_nn_free(e->head);
	for (int i = 0; i < 3; i++)
		vpa_ecapa_block_free(e->blk[i]);
	vpa_ecapa_asp_free(e->asp);
	free(e->nets);
	free(e->soff);
	struct buf *bs[] = {&e->cat, &e->dP, &e->dH, &e->dcat, &e->db, &e->dprev};
	for (size_t i = 0; i < sizeof(bs) / sizeof(bs[0]); i++)
		buf_free(bs[i]);
	free(e);
}

struct vpa_ecapa *vpa_ecapa_clone(const struct vpa_ecapa *e)
{
	struct vpa_ecapa *c;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_ecapa_new(e->in_dim, &e->o, &c, &err))
		VPA_BUG("cloning an ECAPA: %s", err.msg);
	for (size_t i = 0; i < e->n_nets; i++)
		vpa_nn_copy_params(c->nets[i], e->nets[i]);
	return c;
}

void vpa_ecapa_init_params(struct vpa_ecapa *e, uint64_t seed)
{
	for (size_t i = 0; i < e->n_nets; i++) {
		char name[32];
		struct vpa_rng r;
		snprintf(name, sizeof(name), "ecapa-%zu", i);
		vpa_rng_split(&r, seed, name);
		vpa_nn_init_params(e->nets[i], vpa_rng_u64(&r));
	}
}

size_t vpa_ecapa_input_dim(const struct vpa_ecapa *e)
{
	return e->in_dim;
}

size_t vpa_ecapa_emb_dim(const struct vpa_ecapa *e)
{
	return e->o.emb_dim;
}

const struct vpa_ecapa_opts *vpa_ecapa_opts(const struct vpa_ecapa *e)
{
	return &e->o;
}

size_t vpa_ecapa_n_params(const struct vpa_ecapa *e)
{
	size_t t = 0;
	for (size_t i = 0; i < e->n_nets; i++) {
		size_t n;
		vpa_nn_params(e->nets[i], &n);
		t += n;
	}
	return t;
}

size_t vpa_ecapa_n_nets(const struct vpa_ecapa *e)
{
	return e->n_nets;
}

struct vpa_nn *vpa_ecapa_net(struct vpa_ecapa *e, size_t i)
{
	if (i >= e->n_nets)
		VPA_BUG("ECAPA net %zu of %zu", i, e->n_nets);
	return e->nets[i];
}

void vpa_ecapa_zero_grad(struct vpa_ecapa *e)
{
	for (size_t i = 0; i < e->n_nets; i++)
		vpa_nn_zero_grad(e->nets[i]);
}

int vpa_ecapa_forward(struct vpa_ecapa *e, const struct vpa_nn_batch *in, enum vpa_nn_mode mode,
		      struct vpa_err *err)
{
	const size_t C = e->o.channels, n_seq = in->n_seq;
	if (!n_seq || in->off[n_seq] == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "a batch with no frame");
	for (size_t b = 0; b < n_seq; b++)
		if (in->off[b + 1] <= in->off[b])
			return vpa_fail(err, VPA_EINPUT, NULL, "sequence %zu of the batch is empty", b);
	const size_t rows = in->off[n_seq];
	e->off = in->off;
	e->n_seq = n_seq;
	e->rows = rows;
	const float *x;
	int rc = run(e->stem, in->x, in->off, n_seq, mode, &x, err);
	for (int i = 0; i < 3 && rc == 0; i++) {
		rc = vpa_ecapa_block_forward(e->blk[i], x, in->off, n_seq, mode, &e->bo[i], err);
		x = e->bo[i];
	}
	if (rc)
		return rc;
	float *cat = fb(&e->cat, rows * 3 * C);
	for (int i = 0; i < 3; i++)
		put_cols(cat, 3 * C, (size_t)i * C, e->bo[i], rows, C);
	const float *H, *P;
	rc = run(e->mfa, cat, in->off, n_seq, mode, &H, err);
	if (rc == 0)
		rc = vpa_ecapa_asp_forward(e->asp, H, in->off, n_seq, mode, &P, err);
	if (rc == 0)
		rc = run(e->head, P, seq_offsets(&e->soff, &e->soff_cap, n_seq), n_seq, mode, &e->emb,
			 err);
	return rc;
}

const float *vpa_ecapa_output(const struct vpa_ecapa *e, size_t *rows)
{
	*rows = e->n_seq;
	return e->emb;
}

void vpa_ecapa_backward(struct vpa_ecapa *e, const float *dout, float *dx)
{
	const size_t C = e->o.channels, rows = e->rows, D = e->o.mfa_dim;
	float *dP = fb(&e->dP, e->n_seq * 2 * D);
	vpa_nn_backward(e->head, dout, dP);
	float *dH = fb(&e->dH, rows * D);
	vpa_ecapa_asp_backward(e->asp, dP, dH);
	float *dcat = fb(&e->dcat, rows * 3 * C);
	vpa_nn_backward(e->mfa, dH, dcat);
	float *db = fb(&e->db, rows * C), *dprev = fb(&e->dprev, rows * C);
	for (int i = 2; i >= 0; i--) {
		/* d out_i = its MFA part + what block i+1 sent back to its input */
		get_cols(db, dcat, rows, 3 * C, (size_t)i * C, C, 0);
		if (i < 2)
			for (size_t j = 0; j < rows * C; j++)
				db[j] += dprev[j];
		vpa_ecapa_block_backward(e->blk[i], db, dprev);
	}
	vpa_nn_backward(e->stem, dprev, dx);
}
