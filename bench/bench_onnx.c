/*
 * bench/bench_onnx.c - vpaudit's ONNX engine on the models of
 * bench/onnx_torch.py: N forward passes of MODEL on X.npy (the same input as
 * PyTorch's), printing "utt_per_s GFLOPS_SGEMM_PEAK CONV_GFLOPS CONV_SHARE"
 * where the second figure is a 1024 x 1024 x 1024 SGEMM measured in the same
 * process (the machine's reachable peak), the third the Conv nodes' flops over
 * their wall time (vpa_onnx_profile, VPA_ONNX_PROFILE=1 set here) and the
 * fourth the Conv time's share of the total.
 *   bench_onnx MODEL.onnx X.npy N
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/io.h"
#include "core/la.h"
#include "onnx/onnx.h"

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: bench_onnx MODEL.onnx X.npy N\n");
		return 2;
	}
	struct vpa_err err;
	struct vpa_onnx_model *m;
	struct vpa_npy_nd a;
	vpa_err_init(&err);
	setenv("VPA_ONNX_PROFILE", "1", 1);
	if (vpa_onnx_load(argv[1], NULL, &m, &err) || vpa_npy_read_nd(argv[2], &a, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	int n = atoi(argv[3]);
	int64_t dims[8];
	for (size_t i = 0; i < a.ndim; i++)
		dims[i] = (int64_t)a.shape[i];
	struct vpa_onnx_tensor x = vpa_onnx_tensor_f32(a.ndim, dims, a.data), y;
	const char *in[1] = {vpa_onnx_input(m, 0)->name}, *out[1] = {vpa_onnx_output(m, 0)->name};
	if (vpa_onnx_run(m, 1, in, &x, 1, out, &y, &err)) { /* warm-up */
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	vpa_onnx_tensor_release(&y);
	double cs0, cf0;
	vpa_onnx_profile("Conv", &cs0, &cf0);
	double t0 = vpa_now();
	for (int i = 0; i < n; i++) {
		if (vpa_onnx_run(m, 1, in, &x, 1, out, &y, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		vpa_onnx_tensor_release(&y);
	}
	double dt = vpa_now() - t0, cs, cf;
	size_t k = 1024;
	float *A = calloc(k * k, 4), *B = calloc(k * k, 4), *C = calloc(k * k, 4);
	vpa_sgemm(0, 0, k, k, k, 1.0f, A, k, B, k, 0.0f, C, k);
	double g0 = vpa_now();
	for (int r = 0; r < 5; r++)
		vpa_sgemm(0, 0, k, k, k, 1.0f, A, k, B, k, 0.0f, C, k);
	double gflops = 5 * 2.0 * (double)k * k * k / (vpa_now() - g0) / 1e9;
	vpa_onnx_profile("Conv", &cs, &cf);
	cs -= cs0, cf -= cf0;
	printf("%.4f %.1f %.1f %.3f\n", n / dt, gflops, cs > 0 ? cf / cs / 1e9 : 0, cs / dt);
	free(A), free(B), free(C);
	vpa_npy_nd_release(&a);
	vpa_onnx_free(m);
	return 0;
}
