/*
 * learn/nn_internal.h - the network's insides, shared by nn.c (the
 * container), nn_layers.c (forward and backward), nn_loss.c (vpa_nn_loss),
 * optim.c and nn_io.c only (everything else uses nn.h).
 */
#ifndef VPA_NN_INTERNAL_H
#define VPA_NN_INTERNAL_H

#include "learn/nn.h"

struct layer {
	struct vpa_nn_layer_spec s;
	size_t in, out;   /* input and output dims */
	size_t poff, np;  /* parameters at net->params + poff (gradients alike) */
	size_t soff, ns;  /* state at net->state + soff */
	float *y;         /* (rows, out) output of the last forward, owned */
	size_t y_cap, rows;
	size_t *off;      /* (n_seq + 1) output offsets, owned */
	size_t off_cap, n_seq;
	/* caches for backward, owned: tdnn splice (rows, k*in); batchnorm xhat
	 * (rows, D) and 1/std (D); dropout mask (rows, D); lstm activated gates
	 * (dirs, rows, 4H) and cells (dirs, rows, H) */
	float *c1, *c2;
	size_t c1_cap, c2_cap;
	struct vpa_rng rng; /* dropout */
};

struct vpa_nn {
	size_t in_dim;
	struct layer *L;  /* (n), owned */
	size_t n, cap;
	float *params, *grads, *state; /* (np), (np), (ns), owned */
	size_t np, ns;
	size_t alloc_np, alloc_ns; /* sizes allocated so far (see nn_ensure) */
	uint64_t seed;
	struct vpa_nn_batch in; /* borrowed, from the last forward */
	int train, fwd_ok;
	float *scratch, *scratch2, *d[2]; /* owned work space */
	size_t scratch_cap, scratch2_cap, d_cap[2];
	size_t *ibuf;
	size_t ibuf_cap;
};

float *nn_grow(float **p, size_t *cap, size_t n);
void nn_ensure(struct vpa_nn *net);

#endif
