/*
 * bench/bench_mpi_a1.c - strong scaling of the A1 footprint loop over MPI
 * ranks (issue 19).  Built twice: with cc (one rank, as ./vpaudit) and by
 * `make bench` with mpicc into build-mpi/bench/ (run under mpirun by
 * bench/run.sh).
 *
 *   mpirun -n R bench_mpi_a1 MODELS THREADS [FRAMES] [WIDTH]
 *
 * Every rank builds the same synthetic target (bench_a1's: W_g a TDNN of six
 * hidden layers of WIDTH on 40-dim input and a 2,000-way output layer,
 * MODELS perturbed copies, an Indicator set of FRAMES frames), then the loop
 * vpa_a1_footprints runs between two barriers, as `vpaudit run` runs it (one
 * BLAS thread, THREADS threads per rank).  Rank 0 prints one line:
 *   ranks R threads T models M frames F width W: loop S s, global G s,
 *   comm C s, bytes/model B, flops/model X, sgemm1 P GFLOP/s
 * loop = the whole loop (the global model's pass, each rank's models, the
 * exchange); comm = rank 0's time in the exchange (waits included); bytes =
 * what one model's footprint costs on the wire (rank 0's packed bytes over its
 * models, record header included); sgemm1 = this core's one-thread SGEMM
 * rate, measured on rank 0 before the loop (the scaling model's unit).  A checksum of the gathered footprints is
 * printed too: it must not depend on R or T.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/dist.h"
#include "base/la.h"
#include "learn/nn.h"
#include "targets/fl_am.h"

/* This core's single-thread SGEMM rate (GFLOP/s, best of 3, 1024^3). */
static double sgemm1(void)
{
	const size_t n = 1024;
	float *a = xmalloc(n * n * sizeof(float)), *b = xmalloc(n * n * sizeof(float)),
	      *c = xmalloc(n * n * sizeof(float));
	for (size_t i = 0; i < n * n; i++) {
		a[i] = (float)(i % 7) * 0.1f;
		b[i] = (float)(i % 5) * 0.2f;
	}
	double best = 1e30;
	for (int k = 0; k < 4; k++) {
		double t0 = vpa_now();
		vpa_sgemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
		double t = vpa_now() - t0;
		if (k && t < best) /* the first is the warm-up */
			best = t;
	}
	free(a);
	free(b);
	free(c);
	return 2.0 * (double)n * (double)n * (double)n / best / 1e9;
}

static struct vpa_nn *tdnn6(uint64_t seed, size_t w, size_t T, double *flops)
{
	const int c5[] = {-2, -1, 0, 1, 2}, c3[] = {-1, 0, 1}, c3w[] = {-3, 0, 3}, c1[] = {0};
	const int *ctx[6] = {c5, c3, c3, c3w, c3w, c1};
	const size_t nctx[6] = {5, 3, 3, 3, 3, 1};
	struct vpa_nn *net = vpa_nn_new(40);
	size_t in = 40;
	*flops = 0;
	for (int l = 0; l < 6; l++) {
		vpa_nn_add_tdnn(net, w, ctx[l], nctx[l]);
		vpa_nn_add_simple(net, VPA_NN_RELU);
		vpa_nn_add_simple(net, VPA_NN_BATCHNORM);
		*flops += 2.0 * (double)T * (double)w * (double)nctx[l] * (double)in;
		in = w;
	}
	vpa_nn_add_dense(net, 2000);
	*flops += 2.0 * (double)T * 2000.0 * (double)w;
	vpa_nn_init_params(net, seed);
	return net;
}

int main(int argc, char **argv)
{
	vpa_dist_init(&argc, &argv);
	if (argc < 3) {
		if (vpa_dist_rank() == 0)
			fprintf(stderr, "usage: bench_mpi_a1 MODELS THREADS [FRAMES] [WIDTH]\n");
		vpa_dist_finalize();
		return 2;
	}
	size_t n_models = (size_t)atol(argv[1]);
	int threads = atoi(argv[2]);
	size_t T = argc > 3 ? (size_t)atol(argv[3]) : 4000;
	size_t W = argc > 4 ? (size_t)atol(argv[4]) : 256;
	if (n_models < 1 || threads < 1 || T < 200 || W < 8) {
		fprintf(stderr, "bench_mpi_a1: bad arguments\n");
		vpa_dist_finalize();
		return 2;
	}
	vpa_la_set_threads(1); /* as vpaudit run */
	double peak = vpa_dist_rank() == 0 ? sgemm1() : 0;
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_flam t;
	vpa_flam_init(&t);
	double flops;
	t.global.id = xstrdup("global");
	t.global.net = tdnn6(1, W, T, &flops);
	t.models = xcalloc(n_models, sizeof(*t.models));
	t.n_models = n_models;
	struct vpa_rng r;
	vpa_rng_seed(&r, 2);
	for (size_t m = 0; m < n_models; m++) {
		t.models[m].id = xstrdup("m");
		t.models[m].net = vpa_nn_clone(t.global.net);
		size_t np;
		float *w = vpa_nn_params(t.models[m].net, &np);
		for (size_t i = 0; i < np; i++)
			w[i] += (float)(1e-3 * vpa_rng_normal(&r));
	}
	size_t cap = T / 150 + 2;
	t.off = xmalloc((cap + 1) * sizeof(size_t));
	t.off[0] = 0;
	while (t.off[t.n_utt] < T) {
		size_t len = 150 + vpa_rng_below(&r, 301);
		t.off[t.n_utt + 1] = t.off[t.n_utt] + len < T ? t.off[t.n_utt] + len : T;
		t.n_utt++;
	}
	t.utt_id = xcalloc(t.n_utt, sizeof(char *));
	for (size_t u = 0; u < t.n_utt; u++)
		t.utt_id[u] = xstrdup("u");
	t.in_dim = 40;
	t.x = xmalloc(T * 40 * sizeof(float));
	for (size_t i = 0; i < T * 40; i++)
		t.x[i] = (float)vpa_rng_normal(&r);
	if (vpa_flam_hidden_layers(t.global.net, &t.layer_at, &t.n_layers, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	t.dim = xmalloc(t.n_layers * sizeof(size_t));
	for (size_t h = 0; h < t.n_layers; h++)
		t.dim[h] = vpa_nn_layer_dim(t.global.net, t.layer_at[h]);
	size_t lay[16], nl = t.n_layers < 16 ? t.n_layers : 16;
	for (size_t h = 0; h < nl; h++)
		lay[h] = h;

	/* the global model's pass alone (also the warm-up) */
	float **g;
	double t0 = vpa_now();
	if (vpa_flam_activations(&t, n_models, &g, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double tg = vpa_now() - t0;
	vpa_flam_acts_free(g, t.n_layers);

	double **pm, **ps;
	uint64_t b0 = vpa_dist_bytes_sent();
	double c0 = vpa_dist_comm_seconds();
	vpa_dist_barrier();
	t0 = vpa_now();
	int rc = vpa_a1_footprints(&t, lay, nl, NULL, threads, NULL, &pm, &ps, &err);
	vpa_dist_barrier();
	double tl = vpa_now() - t0;
	if (rc) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	size_t tot = 0, mine = 0;
	for (size_t h = 0; h < nl; h++)
		tot += t.dim[lay[h]];
	for (size_t m = (size_t)vpa_dist_rank(); m < n_models; m += (size_t)vpa_dist_size())
		mine++;
	double chk = 0;
	for (size_t m = 0; m < n_models; m++) {
		for (size_t k = 0; k < tot; k++)
			chk += pm[m][k] + 0.5 * ps[m][k];
		free(pm[m]);
		free(ps[m]);
	}
	free(pm);
	free(ps);
	uint64_t bytes = vpa_dist_bytes_sent() - b0;
	if (vpa_dist_rank() == 0)
		printf("ranks %d threads %d models %zu frames %zu width %zu: loop %.3f s, global %.3f s, "
		       "comm %.4f s, bytes/model %.0f, flops/model %.4g, sgemm1 %.1f GFLOP/s, checksum %.17g\n",
		       vpa_dist_size(), threads, n_models, T, W, tl, tg,
		       vpa_dist_comm_seconds() - c0,
		       mine && vpa_dist_size() > 1 ? (double)bytes / (double)mine
						   : (double)(2 * tot * sizeof(double) + 16),
		       flops, peak, chk);
	vpa_flam_release(&t);
	vpa_dist_finalize();
	return 0;
}
