/*
 * bench/bench_a1.c - the A1 footprint pipeline against this machine's SGEMM,
 * measured in the same run (issue 5: computing the activations of 1,000
 * personalised models, 6 TDNN layers of 512 on 40-dim input, on an Indicator
 * set of 20,000 frames must run at >= 50% of SGEMM throughput).
 *
 *   bench_a1 [MODELS] [THREADS]     (default: 3 models, 2 OpenBLAS threads)
 *
 * Per model the run is exactly what attacks/a1.c does: the hidden-layer
 * activations on the whole Indicator set (vpa_flam_activations: EVAL forward
 * in chunks of utterances, every hidden layer copied out), then the mean and
 * standard deviation of Delta on every layer (vpa_footprint_stats).  FLOPs
 * counted: the TDNN GEMMs, 2 * frames * out * (context * in) per layer (the
 * element-wise layers, copies and statistics are overhead charged to the
 * pipeline).  A 1,000-model run would take well over the budget of a
 * benchmark, so a few models are measured and the total extrapolated.
 * Measured twice: one model at a time on THREADS BLAS threads, and as
 * `vpaudit run` does it (vpa_a1_footprints: models shared out to THREADS
 * threads, one BLAS thread each; the global model's pass, timed once, is
 * subtracted); the second is the figure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/la.h"
#include "learn/nn.h"
#include "targets/fl_am.h"

static double sgemm_gflops(size_t n)
{
	float *a = malloc(n * n * sizeof(float)), *b = malloc(n * n * sizeof(float)),
	      *c = malloc(n * n * sizeof(float));
	struct vpa_rng r;
	vpa_rng_seed(&r, 1);
	for (size_t i = 0; i < n * n; i++) {
		a[i] = (float)vpa_rng_uniform(&r);
		b[i] = (float)vpa_rng_uniform(&r);
	}
	vpa_sgemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
	double best = 1e30;
	for (int k = 0; k < 5; k++) {
		double t0 = vpa_now();
		vpa_sgemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
		double t = vpa_now() - t0;
		best = t < best ? t : best;
	}
	free(a);
	free(b);
	free(c);
	return 2.0 * n * n * n / best / 1e9;
}

static struct vpa_nn *tdnn6(uint64_t seed, double *flops, size_t T)
{
	const int c5[] = {-2, -1, 0, 1, 2}, c3[] = {-1, 0, 1}, c3w[] = {-3, 0, 3}, c1[] = {0};
	const int *ctx[6] = {c5, c3, c3, c3w, c3w, c1};
	const size_t nctx[6] = {5, 3, 3, 3, 3, 1};
	struct vpa_nn *net = vpa_nn_new(40);
	size_t in = 40;
	*flops = 0;
	for (int l = 0; l < 6; l++) {
		vpa_nn_add_tdnn(net, 512, ctx[l], nctx[l]);
		vpa_nn_add_simple(net, VPA_NN_RELU);
		vpa_nn_add_simple(net, VPA_NN_BATCHNORM);
		*flops += 2.0 * T * 512 * nctx[l] * in;
		in = 512;
	}
	vpa_nn_add_dense(net, 2000); /* output layer (senones); not a hidden layer */
	*flops += 2.0 * T * 2000 * 512;
	vpa_nn_init_params(net, seed);
	return net;
}

int main(int argc, char **argv)
{
	size_t n_models = argc > 1 ? (size_t)atoi(argv[1]) : 3;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	if (n_models < 1)
		n_models = 1;
	vpa_la_set_threads(threads);
	struct vpa_err err;
	vpa_err_init(&err);
	double peak = sgemm_gflops(2048);
	printf("SGEMM 2048^3, %d threads:                  %8.1f GFLOP/s\n", vpa_la_get_threads(),
	       peak);

	/* the target: W_g and n_models personalised copies (perturbed), 20,000 frames */
	const size_t T = 20000;
	struct vpa_flam t;
	vpa_flam_init(&t);
	double flops;
	t.global.id = xstrdup("global");
	t.global.net = tdnn6(1, &flops, T);
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
	t.off = malloc((cap + 1) * sizeof(size_t));
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
	t.x = malloc(T * 40 * sizeof(float));
	for (size_t i = 0; i < T * 40; i++)
		t.x[i] = (float)vpa_rng_normal(&r);
	if (vpa_flam_hidden_layers(t.global.net, &t.layer_at, &t.n_layers, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	t.dim = malloc(t.n_layers * sizeof(size_t));
	for (size_t h = 0; h < t.n_layers; h++)
		t.dim[h] = vpa_nn_layer_dim(t.global.net, t.layer_at[h]);

	float **g;
	double t0 = vpa_now();
	if (vpa_flam_activations(&t, n_models, &g, &err)) { /* W_g, once (also the warm-up) */
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double tg = vpa_now() - t0;
	double *mu = malloc(512 * sizeof(double)), *sd = malloc(512 * sizeof(double));
	double best = 1e30, total = 0, chk = 0, t_fwd = 0;
	for (size_t m = 0; m < n_models; m++) {
		float **a;
		double t1 = vpa_now();
		if (vpa_flam_activations(&t, m, &a, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		double t2 = vpa_now();
		t_fwd += t2 - t1;
		for (size_t h = 0; h < t.n_layers; h++) {
			vpa_footprint_stats(a[h], g[h], T, t.dim[h], mu, sd);
			chk += mu[0] + sd[0];
		}
		vpa_flam_acts_free(a, t.n_layers);
		double dt = vpa_now() - t1;
		total += dt;
		best = dt < best ? dt : best;
	}
	double peak2 = sgemm_gflops(2048); /* shared machine: keep the better baseline */
	if (peak2 > peak) {
		peak = peak2;
		printf("SGEMM 2048^3 again (best kept):            %8.1f GFLOP/s\n", peak);
	}
	double mean = total / (double)n_models;
	printf("A1 per model (forward %zu frames, %zu utts, 6 hidden layers + stats): best %.3f s, "
	       "mean %.3f s (global model %.3f s)\n", T, t.n_utt, best, mean, tg);
	printf("  of which activations (forward + copies) %.3f s, statistics %.3f s per model\n",
	       t_fwd / (double)n_models, (total - t_fwd) / (double)n_models);
	printf("A1 pipeline throughput:                    %8.1f GFLOP/s (best model)\n",
	       flops / best / 1e9);
	printf("extrapolated: 1,000 models in %.0f s (%.1f min) at the mean\n", 1000 * mean,
	       1000 * mean / 60);
	printf("ratio: one model at a time, %d BLAS threads / SGEMM = %.3f best, %.3f mean  "
	       "[check %.3g]\n", threads, flops / best / 1e9 / peak, flops / mean / 1e9 / peak, chk);

	/* what `vpaudit run` does (attacks/a1.c): models shared out to `threads`
	 * threads with one BLAS thread each, so the element-wise layers and copies
	 * of the forward passes run in parallel too */
	size_t n_pool = n_models < 2 * (size_t)threads ? 2 * (size_t)threads : n_models;
	if (n_pool > t.n_models) {
		t.models = xrealloc(t.models, n_pool * sizeof(*t.models));
		for (size_t m = t.n_models; m < n_pool; m++) {
			memset(&t.models[m], 0, sizeof(t.models[m]));
			t.models[m].id = xstrdup("m");
			t.models[m].net = vpa_nn_clone(t.models[m % t.n_models].net);
		}
		t.n_models = n_pool;
	}
	size_t lay[16];
	for (size_t h = 0; h < t.n_layers && h < 16; h++)
		lay[h] = h;
	double **pm, **ps;
	double t3 = vpa_now();
	if (vpa_a1_footprints(&t, lay, t.n_layers < 16 ? t.n_layers : 16, NULL, threads, NULL, &pm,
			      &ps, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double tp = vpa_now() - t3 - tg; /* the global model's pass is counted once, above */
	for (size_t m = 0; m < t.n_models; m++) {
		free(pm[m]);
		free(ps[m]);
	}
	free(pm);
	free(ps);
	double peak3 = sgemm_gflops(2048);
	if (peak3 > peak) {
		peak = peak3;
		printf("SGEMM 2048^3 again (best kept):            %8.1f GFLOP/s\n", peak);
	}
	printf("A1 footprints as run does it (%zu models, %d threads x 1 BLAS thread): %.3f s "
	       "(%.3f s per model), %.1f GFLOP/s\n", n_pool, threads, tp, tp / (double)n_pool,
	       flops * (double)n_pool / tp / 1e9);
	printf("extrapolated: 1,000 models in %.0f s (%.1f min)\n", 1000 * tp / (double)n_pool,
	       1000 * tp / (double)n_pool / 60);
	printf("ratio: A1 pipeline (as run) / SGEMM = %.3f   (target >= 0.5)\n",
	       flops * (double)n_pool / tp / 1e9 / peak);
	vpa_flam_acts_free(g, t.n_layers);
	free(mu);
	free(sd);
	vpa_flam_release(&t);
	return 0;
}
