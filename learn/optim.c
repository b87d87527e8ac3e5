/*
 * learn/optim.c - optimisers on flat parameter vectors, gradient clipping,
 * the training step, per-example gradients and DP-SGD.  See nn.h.
 */
#include "learn/nn.h"
#include "learn/nn_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vpa_optim_init_sgd(struct vpa_optim *o, size_t n, double lr, double momentum,
			double weight_decay)
{
	memset(o, 0, sizeof(*o));
	o->kind = VPA_OPTIM_SGD;
	o->lr = lr;
	o->momentum = momentum;
	o->weight_decay = weight_decay;
	o->n = n;
	o->m = xcalloc(n + 1, sizeof(float));
}

void vpa_optim_init_adam(struct vpa_optim *o, size_t n, double lr, double beta1, double beta2,
			 double eps, double weight_decay)
{
	memset(o, 0, sizeof(*o));
	o->kind = VPA_OPTIM_ADAM;
	o->lr = lr;
	o->beta1 = beta1;
	o->beta2 = beta2;
	o->eps = eps;
	o->weight_decay = weight_decay;
	o->n = n;
	o->m = xcalloc(n + 1, sizeof(float));
	o->v = xcalloc(n + 1, sizeof(float));
}

void vpa_optim_release(struct vpa_optim *o)
{
	free(o->m);
	free(o->v);
	o->m = o->v = NULL;
}

void vpa_optim_reset(struct vpa_optim *o)
{
	o->t = 0;
	if (o->m)
		memset(o->m, 0, o->n * sizeof(float));
	if (o->v)
		memset(o->v, 0, o->n * sizeof(float));
}

void vpa_optim_step(struct vpa_optim *o, float *w, const float *g)
{
	o->t++;
	double wd = o->weight_decay;
	if (o->kind == VPA_OPTIM_SGD) {
		float mu = (float)o->momentum, lr = (float)o->lr;
		for (size_t i = 0; i < o->n; i++) {
			float gi = g[i] + (float)wd * w[i];
			o->m[i] = mu * o->m[i] + gi;
			w[i] -= lr * o->m[i];
		}
		return;
	}
	double b1 = o->beta1, b2 = o->beta2;
	double c1 = 1.0 - pow(b1, (double)o->t), c2 = 1.0 - pow(b2, (double)o->t);
	/* lr (m / c1) / (sqrt(v / c2) + eps) = lr_t m / (sqrt(v) + eps_t) with
	 * lr_t = lr sqrt(c2) / c1, eps_t = eps sqrt(c2): float, vectorisable */
	float lr_t = (float)(o->lr * sqrt(c2) / c1), eps_t = (float)(o->eps * sqrt(c2));
	/* 1 - b computed in double: 1.0f - 0.999f is off by 1.3e-5 relative */
	float fb1 = (float)b1, fb2 = (float)b2, ob1 = (float)(1.0 - b1), ob2 = (float)(1.0 - b2);
	float fwd = (float)wd;
	float *m = o->m, *v = o->v;
	for (size_t i = 0; i < o->n; i++) {
		float gi = g[i] + fwd * w[i];
		m[i] = fb1 * m[i] + ob1 * gi;
		v[i] = fb2 * v[i] + ob2 * gi * gi;
		w[i] -= lr_t * m[i] / (sqrtf(v[i]) + eps_t);
	}
}

void vpa_fedadam_step(enum vpa_fedadam_form form, double lr, double b1, double b2, double eps,
		      long t, float *m, float *v, float *w, const float *d, size_t n)
{
	double c1 = 1, c2 = 1;
	if (form == VPA_FEDADAM_LIU) {
		c1 = 1.0 - pow(b1, (double)t); /* eq. 6 */
		c2 = 1.0 - pow(b2, (double)t); /* eq. 7 */
	}
	for (size_t i = 0; i < n; i++) {
		double mi = b1 * m[i] + (1 - b1) * d[i], vi = b2 * v[i] + (1 - b2) * (double)d[i] * d[i];
		m[i] = (float)mi;
		v[i] = (float)vi;
		if (form == VPA_FEDADAM_LIU)
			w[i] += (float)(lr * (mi / c1) / sqrt(vi / c2 + eps)); /* eq. 8 */
		else
			w[i] += (float)(lr * mi / (sqrt(vi) + eps));
	}
}

double vpa_nn_norm(const float *g, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += (double)g[i] * g[i];
	return sqrt(s);
}

double vpa_nn_clip_norm(float *g, size_t n, double max_norm)
{
	double nr = vpa_nn_norm(g, n);
	if (nr > max_norm && nr > 0) {
		float c = (float)(max_norm / nr);
		for (size_t i = 0; i < n; i++)
			g[i] *= c;
	}
	return nr;
}

/* d(loss)/d(output) of the last forward into a buffer owned by the caller. */
static int loss_and_grad(struct vpa_nn *net, const struct vpa_nn_targets *t, double *loss,
			 float **dz, struct vpa_err *err)
{
	size_t R, K;
	vpa_nn_output(net, &R, &K);
	*dz = xmalloc(xmul(R, K) * sizeof(float) + sizeof(float));
	return vpa_nn_loss(net, t, loss, *dz, err);
}

int vpa_nn_train_step(struct vpa_nn *net, struct vpa_optim *o, const struct vpa_nn_batch *in,
		      const struct vpa_nn_targets *t, double clip, double *loss,
		      struct vpa_err *err)
{
	nn_ensure(net);
	if (o->n != net->np)
		VPA_BUG("optimiser for %zu parameters, network has %zu", o->n, net->np);
	float *dz = NULL;
	int rc = vpa_nn_forward(net, in, VPA_NN_TRAIN, err);
	if (rc)
		goto out;
	if ((rc = loss_and_grad(net, t, loss, &dz, err)))
		goto out;
	vpa_nn_zero_grad(net);
	vpa_nn_backward(net, dz, NULL);
	if (clip > 0)
		vpa_nn_clip_norm(net->grads, net->np, clip);
	vpa_optim_step(o, net->params, net->grads);
out:
	free(dz);
	return rc;
}

int vpa_nn_example_grad(struct vpa_nn *net, const struct vpa_nn_batch *in, size_t b,
			const struct vpa_nn_targets *t, double *loss, struct vpa_err *err)
{
	if (b >= in->n_seq)
		VPA_BUG("example %zu of %zu", b, in->n_seq);
	size_t off2[2] = {0, in->off[b + 1] - in->off[b]};
	struct vpa_nn_batch one = {1, off2, NULL, NULL};
	size_t D = net->in_dim, K = vpa_nn_output_dim(net);
	if (in->x)
		one.x = in->x + in->off[b] * D;
	if (in->ids)
		one.ids = in->ids + in->off[b];
	/* the example's rows of the batch's output: one row after pooling */
	int pooled = 0;
	for (size_t i = 0; i < net->n; i++)
		pooled |= net->L[i].s.kind == VPA_NN_STATSPOOL;
	size_t r0 = t->per_sequence || pooled ? b : in->off[b];
	struct vpa_nn_targets ts = *t;
	if (t->labels)
		ts.labels = t->labels + r0;
	if (t->soft)
		ts.soft = t->soft + r0 * K;
	if (t->weights)
		ts.weights = t->weights + r0;
	float *dz = NULL;
	int rc = vpa_nn_forward(net, &one, VPA_NN_TRAIN, err);
	if (rc)
		goto out;
	if ((rc = loss_and_grad(net, &ts, loss, &dz, err)))
		goto out;
	vpa_nn_zero_grad(net);
	vpa_nn_backward(net, dz, NULL);
out:
	free(dz);
	return rc;
}

int vpa_nn_dpsgd_step(struct vpa_nn *net, struct vpa_optim *o, const struct vpa_nn_batch *in,
		      const struct vpa_nn_targets *t, double clip, double sigma, double denom,
		      struct vpa_rng *rng, double *loss, size_t *n_clipped, struct vpa_err *err)
{
	return vpa_nn_dpsgd_step_units(net, o, in, t, NULL, in->n_seq, clip, sigma, denom, rng,
				       loss, n_clipped, err);
}

int vpa_nn_dpsgd_step_units(struct vpa_nn *net, struct vpa_optim *o,
			    const struct vpa_nn_batch *in, const struct vpa_nn_targets *t,
			    const size_t *unit_off, size_t n_units, double clip, double sigma,
			    double denom, struct vpa_rng *rng, double *loss, size_t *n_clipped,
			    struct vpa_err *err)
{
	nn_ensure(net);
	if (o->n != net->np)
		VPA_BUG("optimiser for %zu parameters, network has %zu", o->n, net->np);
	if (!(clip > 0) || !(sigma >= 0))
		VPA_BUG("dpsgd: clip must be > 0 and sigma >= 0");
	if (unit_off && (unit_off[0] != 0 || unit_off[n_units] != in->n_seq))
		VPA_BUG("dpsgd: units cover sequences %zu..%zu of %zu", unit_off[0],
			unit_off[n_units], in->n_seq);
	if (!unit_off && n_units != in->n_seq)
		VPA_BUG("dpsgd: %zu units without offsets for %zu sequences", n_units, in->n_seq);
	size_t n = net->np, nc = 0;
	double *acc = xcalloc(n + 1, sizeof(double)), tl = 0;
	double *ug = unit_off ? xcalloc(n + 1, sizeof(double)) : NULL;
	int rc = 0;
	for (size_t u = 0; u < n_units; u++) {
		size_t lo = unit_off ? unit_off[u] : u, hi = unit_off ? unit_off[u + 1] : u + 1;
		double nr;
		if (!unit_off) {
			double l;
			if ((rc = vpa_nn_example_grad(net, in, u, t, &l, err)))
				goto out;
			tl += l;
			nr = vpa_nn_norm(net->grads, n);
		} else {
			/* the unit's gradient: that of its mean example loss */
			memset(ug, 0, n * sizeof(double));
			for (size_t b = lo; b < hi; b++) {
				double l;
				if ((rc = vpa_nn_example_grad(net, in, b, t, &l, err)))
					goto out;
				tl += l;
				for (size_t i = 0; i < n; i++)
					ug[i] += net->grads[i];
			}
			double s2 = 0, w = hi > lo ? 1.0 / (double)(hi - lo) : 0;
			for (size_t i = 0; i < n; i++) {
				ug[i] *= w;
				s2 += ug[i] * ug[i];
			}
			nr = sqrt(s2);
		}
		double c = nr > clip ? clip / nr : 1.0;
		nc += nr > clip;
		if (unit_off)
			for (size_t i = 0; i < n; i++)
				acc[i] += c * ug[i];
		else
			for (size_t i = 0; i < n; i++)
				acc[i] += c * net->grads[i];
	}
	if (denom <= 0)
		denom = (double)n_units;
	for (size_t i = 0; i < n; i++)
		net->grads[i] = (float)((acc[i] + sigma * clip * vpa_rng_normal(rng)) / denom);
	vpa_optim_step(o, net->params, net->grads);
	*loss = in->n_seq ? tl / (double)in->n_seq : 0;
	if (n_clipped)
		*n_clipped = nc;
out:
	free(ug);
	free(acc);
	return rc;
}
