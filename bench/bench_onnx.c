/*
 * bench/bench_onnx.c - vpaudit's ONNX engine on the models of
 * bench/onnx_torch.py: N forward passes of MODEL on X.npy (the same input as
 * PyTorch's), shared out over THREADS threads the way `vpaudit embed
 * --threads` shares utterances (vpa_par_jobs, one single-threaded BLAS per
 * thread).  Prints one line
 *   UTT_PER_S CPU_S_PER_UTT SGEMM_PEAK CONV_GFLOPS CONV_SHARE PLANNED
 * utterances per wall second; CPU seconds per utterance (process CPU time,
 * all threads: less sensitive than wall time to other jobs on a shared
 * machine); a one-thread 1024 x 1024 x 1024 SGEMM in GFLOP/s measured in the
 * same process (the reachable peak of one core); the Conv nodes' flops
 * (direct-convolution count: 2 x outputs x inputs per output, whatever the
 * algorithm) over their wall time summed over threads (VPA_ONNX_PROFILE); and
 * the Conv time's share of the threads' time; the fraction of runs (warm-up
 * included) that replayed a memory plan.
 *   bench_onnx MODEL.onnx X.npy N [THREADS [LENGTHS.txt]]
 * With LENGTHS.txt (one frame count a line, from bench/onnx_torch.py
 * --varlen) utterance i is the first LENGTHS[i mod count] frames of X
 * (1, T, F): variable-length input, the case where a memory plan made for
 * one exact shape does not apply (issue 33).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "formats/io.h"
#include "base/la.h"
#include "onnx/onnx.h"

struct job {
	const struct vpa_onnx_model *m;
	const struct vpa_onnx_tensor *x;
	const char *in[1], *out[1];
	const int64_t *len; /* frames per utterance, NULL: all of x */
	size_t n_len;
	int failed;
};

static int run_one(void *arg, size_t i)
{
	struct job *j = arg;
	struct vpa_err err;
	struct vpa_onnx_tensor y, xi = *j->x;
	vpa_err_init(&err);
	if (j->len)
		xi.dims[1] = j->len[i % j->n_len]; /* a prefix of (1, T, F) is contiguous */
	if (vpa_onnx_run(j->m, 1, j->in, &xi, 1, j->out, &y, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		j->failed = 1;
		return 1;
	}
	vpa_onnx_tensor_release(&y);
	return 0;
}

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: bench_onnx MODEL.onnx X.npy N [THREADS [LENGTHS.txt]]\n");
		return 2;
	}
	struct vpa_err err;
	struct vpa_onnx_model *m;
	struct vpa_npy_nd a;
	vpa_err_init(&err);
	if (!getenv("VPA_ONNX_PROFILE"))
		setenv("VPA_ONNX_PROFILE", "quiet", 1);
	if (vpa_onnx_load(argv[1], NULL, &m, &err) || vpa_npy_read_nd(argv[2], &a, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	int n = atoi(argv[3]), threads = argc >= 5 ? atoi(argv[4]) : 1;
	if (n < 1 || threads < 1) {
		fprintf(stderr, "bench_onnx: N and THREADS must be positive\n");
		return 2;
	}
	int64_t dims[8];
	for (size_t i = 0; i < a.ndim; i++)
		dims[i] = (int64_t)a.shape[i];
	struct vpa_onnx_tensor x = vpa_onnx_tensor_f32(a.ndim, dims, a.data);
	struct job j = {m, &x, {vpa_onnx_input(m, 0)->name}, {vpa_onnx_output(m, 0)->name}, NULL, 0, 0};
	int64_t *len = NULL;
	if (argc == 6) {
		FILE *f = fopen(argv[5], "r");
		long long v;
		size_t cap = 0;
		while (f && fscanf(f, "%lld", &v) == 1) {
			if (v < 1 || a.ndim != 3 || v > dims[1]) {
				fprintf(stderr, "%s: length %lld not in 1..%lld frames of X\n", argv[5], v,
					a.ndim == 3 ? (long long)dims[1] : 0LL);
				return 1;
			}
			if (j.n_len == cap) {
				cap = cap ? 2 * cap : 256;
				int64_t *nl = realloc(len, cap * sizeof(int64_t));
				if (!nl)
					return 1;
				len = nl;
			}
			len[j.n_len++] = v;
		}
		if (!f || !j.n_len) {
			fprintf(stderr, "%s: no lengths read\n", argv[5]);
			return 1;
		}
		fclose(f);
		j.len = len;
	}
	/* one single-threaded BLAS per worker, also with one worker (vpa_par_jobs
	 * leaves OpenBLAS's own threads on when it runs a single worker: THREADS=1
	 * would then use every core) */
	int blas0 = vpa_la_get_threads();
	vpa_la_set_threads(1);
	/* warm-up: one run per thread (each leaves its buffer pool on the model) */
	vpa_par_jobs((size_t)threads, threads, run_one, &j, NULL, vpa_la_run_workers);
	if (j.failed)
		return 1;
	double cs0, cf0;
	vpa_onnx_profile("Conv", &cs0, &cf0);
	double t0 = vpa_now(), c0 = cpu_now();
	vpa_par_jobs((size_t)n, threads, run_one, &j, NULL, vpa_la_run_workers);
	double dt = vpa_now() - t0, dc = cpu_now() - c0, cs, cf;
	vpa_la_set_threads(blas0);
	if (j.failed)
		return 1;
	vpa_onnx_profile("Conv", &cs, &cf);
	cs -= cs0, cf -= cf0;
	size_t k = 1024;
	float *A = calloc(k * k, 4), *B = calloc(k * k, 4), *C = calloc(k * k, 4);
	int blas = vpa_la_get_threads();
	vpa_la_set_threads(1);
	vpa_sgemm(0, 0, k, k, k, 1.0f, A, k, B, k, 0.0f, C, k);
	double g0 = vpa_now();
	for (int r = 0; r < 5; r++)
		vpa_sgemm(0, 0, k, k, k, 1.0f, A, k, B, k, 0.0f, C, k);
	double gflops = 5 * 2.0 * (double)k * k * k / (vpa_now() - g0) / 1e9;
	vpa_la_set_threads(blas);
	/* the share of all runs (warm-up included) that replayed a memory plan */
	struct vpa_onnx_plan_stats st;
	vpa_onnx_plan_stats(m, 0, &st);
	uint64_t runs = st.planned_runs + st.recorded_runs + st.first_runs + st.dynamic_runs;
	printf("%.4f %.4f %.1f %.1f %.3f %.3f\n", n / dt, dc / n, gflops, cs > 0 ? cf / cs / 1e9 : 0,
	       cs / (dt * threads), runs ? (double)st.planned_runs / (double)runs : 0.0);
	free(A), free(B), free(C), free(len);
	vpa_npy_nd_release(&a);
	vpa_onnx_free(m);
	return 0;
}
