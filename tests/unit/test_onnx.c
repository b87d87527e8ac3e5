/*
 * tests/unit/test_onnx.c - the ONNX engine on whole models: the PyTorch
 * models of tests/golden/onnx/ against their recorded outputs (manifest,
 * .npy), execution plans and fusions (bit for bit against the plain run),
 * Winograd convolutions on the ResNet, two threads sharing one model, bad
 * input through the API and hostile files (issue 26: nesting, external
 * data, non-finite tensors, no opset).  The backend tests of onnx
 * (conformance) are tests/unit/test_onnx_conformance.c.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/io.h"
#include "onnx/conv.h"
#include "onnx/onnx.h"
#include "tests/unit/harness.h"
#include "tests/unit/onnx_craft.h"

/* ------------------------------------------------------------ PyTorch models */

#define GOLD "tests/golden/onnx/"

static int load_npy(const char *file, struct vpa_onnx_tensor *t)
{
	struct vpa_npy_nd a;
	struct vpa_err err;
	vpa_err_init(&err);
	memset(t, 0, sizeof(*t));
	if (vpa_npy_read_nd(file, &a, &err)) {
		printf("#   %s\n", err.msg);
		return -1;
	}
	if (a.kind != 'f' || a.itemsize != 4) {
		vpa_npy_nd_release(&a);
		return -1;
	}
	t->dtype = VPA_ONNX_FLOAT;
	t->ndim = a.ndim;
	for (size_t i = 0; i < a.ndim; i++)
		t->dims[i] = (int64_t)a.shape[i];
	t->data = a.data; /* taken over */
	return 0;
}

struct manifest {
	char in_name[64], in_file[256];
	size_t n_out;
	char out_name[8][128], out_file[8][256];
};

static int read_manifest(const char *model, struct manifest *mf)
{
	char path[512], line[600], kind[8], a[128], b[200];
	snprintf(path, sizeof(path), GOLD "%s.txt", model);
	FILE *f = fopen(path, "r");
	memset(mf, 0, sizeof(*mf));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%7s %127s %199s", kind, a, b) == 3) {
			if (!strcmp(kind, "in")) {
				snprintf(mf->in_name, sizeof(mf->in_name), "%.63s", a);
				snprintf(mf->in_file, sizeof(mf->in_file), GOLD "%.200s", b);
			} else if (mf->n_out < 8) {
				snprintf(mf->out_name[mf->n_out], 128, "%.127s", a);
				snprintf(mf->out_file[mf->n_out++], 256, GOLD "%.200s", b);
			}
		}
	fclose(f);
	return 0;
}

/*
 * Each model of tests/golden/onnx/gen.py against PyTorch's outputs (and
 * hooked intermediate activations) on an input whose length differs from the
 * export's: max |ours - torch| <= 1e-6 + 1e-5 |torch|, on the second run.
 */
static void check_model(const char *model)
{
	struct manifest mf;
	char path[512];
	struct vpa_err err;
	struct vpa_onnx_model *m = NULL;
	struct vpa_onnx_tensor x, want[8], got[8];
	const char *names[8];
	CHECK(read_manifest(model, &mf) == 0);
	snprintf(path, sizeof(path), GOLD "%s.onnx", model);
	vpa_err_init(&err);
	CHECK(vpa_onnx_load(path, NULL, &m, &err) == 0);
	if (!m) {
		printf("#   %s\n", err.msg);
		return;
	}
	CHECK(load_npy(mf.in_file, &x) == 0);
	for (size_t j = 0; j < mf.n_out; j++) {
		CHECK(load_npy(mf.out_file[j], &want[j]) == 0);
		names[j] = mf.out_name[j];
	}
	const char *in_names[1] = {mf.in_name};
	/* Two runs, the second checked: it takes the first run's pooled buffers
	 * (kept on the model, not cleared), so an operator that reads memory it
	 * has not written fails here. */
	int rc = vpa_onnx_run(m, 1, in_names, &x, mf.n_out, names, got, &err);
	CHECK(rc == 0);
	for (size_t j = 0; j < mf.n_out && !rc; j++)
		vpa_onnx_tensor_release(&got[j]);
	if (!rc)
		rc = vpa_onnx_run(m, 1, in_names, &x, mf.n_out, names, got, &err);
	CHECK(rc == 0);
	if (rc)
		printf("#   %s\n", err.msg);
	double worst = 0;
	for (size_t j = 0; j < mf.n_out && !rc; j++) {
		CHECK(got[j].ndim == want[j].ndim &&
		      !memcmp(got[j].dims, want[j].dims, got[j].ndim * sizeof(int64_t)));
		size_t n = vpa_onnx_numel(&want[j]);
		if (vpa_onnx_numel(&got[j]) != n)
			continue;
		for (size_t i = 0; i < n; i++) {
			double a = ((float *)got[j].data)[i], b = ((float *)want[j].data)[i];
			double e = fabs(a - b) / (1e-6 + 1e-5 * fabs(b));
			worst = e > worst || isnan(e) ? e : worst;
		}
		vpa_onnx_tensor_release(&got[j]);
	}
	printf("#   %-12s %zu values vs PyTorch: worst error %.3g of the tolerance\n", model,
	       mf.n_out, worst);
	CHECK(worst <= 1.0);
	vpa_onnx_tensor_release(&x);
	for (size_t j = 0; j < mf.n_out; j++)
		vpa_onnx_tensor_release(&want[j]);
	vpa_onnx_free(m);
}

static void test_model_tdnn(void) { check_model("tdnn"); }
static void test_model_ecapa(void) { check_model("ecapa"); }
static void test_model_resnet(void) { check_model("resnet"); }
static void test_model_tdnn_am_hidden(void) { check_model("tdnn_am"); }
static void test_model_conformer_opset13(void) { check_model("conformer13"); }
static void test_model_conformer_opset17(void) { check_model("conformer17"); }
static void test_model_lstm_gru(void) { check_model("rnn"); }
/* shape operators taking their input's buffer (onnx/run.c), gen_handover.py */
static void test_model_handover(void) { check_model("handover"); }

/*
 * The static memory plan and the load-time fusions on each model of gen.py:
 * - planned runs (the first, the recording second run and two replays of its plan) give
 *   outputs byte-identical to a model loaded without plans (fusions off in
 *   both, so the arithmetic is the same);
 * - the plan: no two blocks alive at the same event overlap (checked over all
 *   pairs), the arena is at most the sum of the blocks and at least the peak
 *   of live bytes; the peak, arena and sum are printed;
 * - the fused model's outputs (the manifest's values, hidden layers requested
 *   by name included) equal the unfused ones within 1e-5 + 1e-4 |y|.
 */
static int run_model(const struct vpa_onnx_model *m, const struct manifest *mf,
		     const struct vpa_onnx_tensor *x, struct vpa_onnx_tensor *got)
{
	const char *names[8], *in_names[1] = {mf->in_name};
	struct vpa_err err;
	vpa_err_init(&err);
	for (size_t j = 0; j < mf->n_out; j++)
		names[j] = mf->out_name[j];
	int rc = vpa_onnx_run(m, 1, in_names, x, mf->n_out, names, got, &err);
	if (rc)
		printf("#   %s\n", err.msg);
	return rc;
}

static int same_bytes(const struct vpa_onnx_tensor *a, const struct vpa_onnx_tensor *b)
{
	return a->dtype == b->dtype && a->ndim == b->ndim &&
	       !memcmp(a->dims, b->dims, a->ndim * sizeof(int64_t)) &&
	       !memcmp(a->data, b->data, vpa_onnx_numel(a) * vpa_onnx_dtype_size(a->dtype));
}

static void check_plan(const char *model)
{
	struct manifest mf;
	char path[512];
	struct vpa_err err;
	struct vpa_onnx_model *m0 = NULL, *mp = NULL, *mfu = NULL;
	struct vpa_onnx_tensor x, ref[8], got[8];
	struct vpa_onnx_load_opts plain = {.no_plan = 1, .no_fuse = 1}, planned = {.no_fuse = 1};
	CHECK(read_manifest(model, &mf) == 0);
	snprintf(path, sizeof(path), GOLD "%s.onnx", model);
	vpa_err_init(&err);
	CHECK(vpa_onnx_load(path, &plain, &m0, &err) == 0);
	CHECK(vpa_onnx_load(path, &planned, &mp, &err) == 0);
	CHECK(vpa_onnx_load(path, NULL, &mfu, &err) == 0);
	CHECK(load_npy(mf.in_file, &x) == 0);
	if (!m0 || !mp || !mfu) {
		vpa_onnx_free(m0);
		vpa_onnx_free(mp);
		vpa_onnx_free(mfu);
		return;
	}
	CHECK(run_model(m0, &mf, &x, ref) == 0);
	CHECK(vpa_onnx_n_fused(m0) == 0 && vpa_onnx_n_fused(mp) == 0);
	for (int r = 0; r < 4; r++) {
		CHECK(run_model(mp, &mf, &x, got) == 0);
		for (size_t j = 0; j < mf.n_out; j++) {
			CHECK(same_bytes(&got[j], &ref[j]));
			vpa_onnx_tensor_release(&got[j]);
		}
	}
	struct vpa_onnx_plan_stats st;
	CHECK(vpa_onnx_plan_stats(mp, 0, &st) == 1);
	CHECK(st.n_plans == 1 && st.first_runs == 1 && st.recorded_runs == 1 &&
	      st.planned_runs == 2 && st.left_runs == 0 && st.dynamic_runs == 0);
	CHECK(st.n_blocks > 0 && st.overlaps == 0);
	CHECK(st.arena_bytes <= st.sum_bytes && st.arena_bytes >= st.peak_bytes);
	printf("#   %-12s plan: %zu blocks, arena %.1f KiB, peak live %.1f KiB, sum %.1f KiB "
	       "(arena/sum %.2f)\n", model, st.n_blocks, st.arena_bytes / 1024.0,
	       st.peak_bytes / 1024.0, st.sum_bytes / 1024.0,
	       (double)st.arena_bytes / (double)st.sum_bytes);
	CHECK(vpa_onnx_plan_stats(m0, 0, &st) == 0);
	/* Fused against unfused. */
	double worst = 0;
	for (int r = 0; r < 2; r++) {
		CHECK(run_model(mfu, &mf, &x, got) == 0);
		for (size_t j = 0; j < mf.n_out; j++) {
			CHECK(got[j].ndim == ref[j].ndim &&
			      !memcmp(got[j].dims, ref[j].dims, ref[j].ndim * sizeof(int64_t)));
			for (size_t i = 0, n = vpa_onnx_numel(&ref[j]); got[j].data && i < n; i++) {
				double a = ((float *)got[j].data)[i], b = ((float *)ref[j].data)[i];
				double e = fabs(a - b) / (1e-5 + 1e-4 * fabs(b));
				worst = e > worst || isnan(e) ? e : worst;
			}
			vpa_onnx_tensor_release(&got[j]);
		}
	}
	printf("#   %-12s %zu nodes fused: worst fused-unfused error %.3g of the tolerance\n", model,
	       vpa_onnx_n_fused(mfu), worst);
	CHECK(worst <= 1.0);
	for (size_t j = 0; j < mf.n_out; j++)
		vpa_onnx_tensor_release(&ref[j]);
	vpa_onnx_tensor_release(&x);
	vpa_onnx_free(m0);
	vpa_onnx_free(mp);
	vpa_onnx_free(mfu);
}

static void test_plan_fuse(void)
{
	static const char *models[] = {"tdnn", "ecapa", "resnet", "tdnn_am", "conformer13",
				       "conformer17", "rnn", "handover"};
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		check_plan(models[i]);
}

/*
 * tests/golden/onnx/fuse.onnx (gen_fuse.py): Conv+BN+LeakyRelu, Gemm+BN+Sigmoid,
 * MatMul+Add+Tanh, Gemm+BN+Clip. The fused model folds the three BNs and
 * fuses five epilogues; its output equals the unfused model's within
 * 1e-5 + 1e-4 |y|; values fused away (the Conv's, a Gemm's and the MatMul's
 * outputs, a BN's) requested by name are computed (by the original graph) and
 * equal the unfused model's bit for bit.
 */
static void test_fusions(void)
{
	struct vpa_onnx_model *mf = NULL, *mu = NULL;
	struct vpa_onnx_load_opts nofuse = {.no_fuse = 1};
	struct vpa_err err;
	struct vpa_onnx_tensor x, yf, yu[5], yg[5];
	vpa_err_init(&err);
	CHECK(vpa_onnx_load(GOLD "fuse.onnx", NULL, &mf, &err) == 0);
	CHECK(vpa_onnx_load(GOLD "fuse.onnx", &nofuse, &mu, &err) == 0);
	CHECK(load_npy(GOLD "fuse.x.npy", &x) == 0);
	if (!mf || !mu) {
		vpa_onnx_free(mf);
		vpa_onnx_free(mu);
		return;
	}
	CHECK(vpa_onnx_n_fused(mf) == 8 && vpa_onnx_n_bn_folded(mf) == 3);
	CHECK(vpa_onnx_n_fused(mu) == 0);
	const char *in[1] = {"x"}, *out[5] = {"y", "c1", "g1", "m", "n2"};
	CHECK(vpa_onnx_run(mf, 1, in, &x, 1, out, &yf, &err) == 0);
	CHECK(vpa_onnx_run(mu, 1, in, &x, 5, out, yu, &err) == 0);
	double worst = 0;
	CHECK(yf.ndim == 2 && yf.dims[0] == 2 && yf.dims[1] == 5);
	for (size_t i = 0; yf.data && i < 10; i++) {
		double a = ((float *)yf.data)[i], b = ((float *)yu[0].data)[i];
		double e = fabs(a - b) / (1e-5 + 1e-4 * fabs(b));
		worst = e > worst || isnan(e) ? e : worst;
	}
	printf("#   fuse.onnx: %zu nodes fused (%zu BN folded): worst error %.3g of the tolerance\n",
	       vpa_onnx_n_fused(mf), vpa_onnx_n_bn_folded(mf), worst);
	CHECK(worst <= 1.0);
	/* y moves: a fusion changed the arithmetic (else this test could not fail). */
	CHECK(yf.data && memcmp(yf.data, yu[0].data, 10 * sizeof(float)));
	CHECK(vpa_onnx_run(mf, 1, in, &x, 5, out, yg, &err) == 0);
	for (int j = 0; j < 5; j++) {
		CHECK(same_bytes(&yg[j], &yu[j]));
		vpa_onnx_tensor_release(&yg[j]);
		vpa_onnx_tensor_release(&yu[j]);
	}
	vpa_onnx_tensor_release(&yf);
	vpa_onnx_tensor_release(&x);
	vpa_onnx_free(mf);
	vpa_onnx_free(mu);
}

/*
 * tests/golden/onnx/dyn.onnx: y = (0, 1, ..., x-1)^2 for a float scalar x, so
 * the shapes depend on x's value, not its shape (the plan key): runs with
 * x = 30 note, record and replay a plan; x = 50 (same key) leaves the plan at
 * Range's output (400 bytes where the plan has 256) and finishes dynamically,
 * with the right values; x = 30 again replays it.
 */
static void test_plan_leave(void)
{
	struct vpa_onnx_model *m = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_onnx_load(GOLD "dyn.onnx", NULL, &m, &err) == 0);
	if (!m)
		return;
	const float xs[5] = {30, 30, 30, 50, 30};
	const char *in[1] = {"x"}, *out[1] = {"y"};
	for (int k = 0; k < 5; k++) {
		struct vpa_onnx_tensor x = vpa_onnx_tensor_f32(0, NULL, &xs[k]), y;
		CHECK(vpa_onnx_run(m, 1, in, &x, 1, out, &y, &err) == 0);
		CHECK(y.ndim == 1 && y.dims[0] == (int64_t)xs[k]);
		for (int64_t i = 0; y.data && i < y.dims[0]; i++)
			CHECK(((float *)y.data)[i] == (float)(i * i));
		vpa_onnx_tensor_release(&y);
	}
	struct vpa_onnx_plan_stats st;
	CHECK(vpa_onnx_plan_stats(m, 0, &st) == 1);
	CHECK(st.first_runs == 1 && st.recorded_runs == 1 && st.planned_runs == 3 &&
	      st.left_runs == 1 && st.overlaps == 0);
	vpa_onnx_free(m);
}

/*
 * Plans per length bucket (issue 33 item 5): a time axis of 64 frames or
 * more is keyed by its bucket edge (161-192 -> 192), so one plan serves every
 * length of the bucket.  On ECAPA (convolutions, attentive pooling), the
 * ResNet (2-D convolutions with strides) and the Conformer (a T x T
 * attention block: sizes quadratic in T), every planned output equals the
 * unplanned model's byte for byte:
 * - lengths 170 and 181 (note, then record: the sizes fitted to 192), then
 *   165, 192, 186, 161, 177 all replay the plan without leaving it;
 * - 200 is another bucket (224): a first sighting, not planned;
 * - a bucket planned from one length twice (exact sizes of 230) left by 256
 *   (larger blocks: the run finishes dynamically, right), which refits the
 *   plan; 250 and 256 then replay it;
 * - two threads running the bucket's lengths get the one-thread bytes.
 */
static uint32_t lcg_state;
static float lcg(void)
{
	lcg_state = lcg_state * 1664525u + 1013904223u;
	return (float)(lcg_state >> 8) / 16777216.0f - 0.5f;
}

static void var_input(struct vpa_onnx_tensor *x, float *buf, int64_t T, int64_t F)
{
	lcg_state = 12345u + (uint32_t)T;
	for (int64_t i = 0; i < T * F; i++)
		buf[i] = lcg();
	int64_t dims[3] = {1, T, F};
	*x = vpa_onnx_tensor_f32(3, dims, buf);
}

static int var_same(const struct vpa_onnx_model *mp, const struct vpa_onnx_model *m0,
		    int64_t T, int64_t F)
{
	const char *in[1] = {"feats"}, *out[1] = {"out"};
	float *buf = xmalloc((size_t)(T * F) * sizeof(float));
	struct vpa_onnx_tensor x, a, b;
	struct vpa_err err;
	vpa_err_init(&err);
	var_input(&x, buf, T, F);
	int ok = vpa_onnx_run(mp, 1, in, &x, 1, out, &a, &err) == 0 &&
		 vpa_onnx_run(m0, 1, in, &x, 1, out, &b, &err) == 0 && same_bytes(&a, &b);
	if (!ok)
		printf("#   T = %lld: %s\n", (long long)T, err.msg);
	vpa_onnx_tensor_release(&a);
	vpa_onnx_tensor_release(&b);
	free(buf);
	return ok;
}

struct var_thr {
	const struct vpa_onnx_model *mp, *m0;
	int64_t F;
	int ok;
};

static void *var_thr_run(void *p)
{
	struct var_thr *t = p;
	static const int64_t lens[6] = {192, 170, 165, 186, 161, 181};
	t->ok = 1;
	for (int k = 0; k < 6; k++)
		t->ok &= var_same(t->mp, t->m0, lens[k], t->F);
	return NULL;
}

static void test_plan_buckets(void)
{
	static const char *models[] = {"ecapa", "resnet", "conformer13"};
	static const int64_t feats[] = {20, 16, 16};
	for (size_t i = 0; i < 3; i++) {
		char path[512];
		struct vpa_err err;
		struct vpa_onnx_model *m0 = NULL, *mp = NULL;
		struct vpa_onnx_load_opts plain = {.no_plan = 1};
		struct vpa_onnx_plan_stats st;
		int64_t F = feats[i];
		snprintf(path, sizeof(path), GOLD "%s.onnx", models[i]);
		vpa_err_init(&err);
		CHECK(vpa_onnx_load(path, &plain, &m0, &err) == 0);
		CHECK(vpa_onnx_load(path, NULL, &mp, &err) == 0);
		if (!m0 || !mp) {
			vpa_onnx_free(m0);
			vpa_onnx_free(mp);
			continue;
		}
		static const int64_t fit[7] = {170, 181, 165, 192, 186, 161, 177};
		for (int k = 0; k < 7; k++)
			CHECK(var_same(mp, m0, fit[k], F));
		CHECK(vpa_onnx_plan_stats(mp, 0, &st) == 1);
		CHECK(st.n_plans == 1 && st.first_runs == 1 && st.recorded_runs == 1 &&
		      st.planned_runs == 5 && st.left_runs == 0 && st.overlaps == 0);
		CHECK(st.arena_bytes >= st.peak_bytes && st.arena_bytes <= st.sum_bytes);
		printf("#   %-12s bucket 161-192: arena %.1f KiB from lengths 170 and 181, "
		       "5 of 5 other runs planned\n", models[i], st.arena_bytes / 1024.0);
		CHECK(var_same(mp, m0, 200, F)); /* bucket 193-224: first sighting */
		CHECK(vpa_onnx_plan_stats(mp, 0, &st) == 1);
		CHECK(st.n_plans == 1 && st.first_runs == 2 && st.planned_runs == 5);
		/* One length twice: exact sizes; a longer run leaves, then refits. */
		static const int64_t leave[5] = {230, 230, 256, 250, 256};
		for (int k = 0; k < 5; k++)
			CHECK(var_same(mp, m0, leave[k], F));
		CHECK(vpa_onnx_plan_stats(mp, 0, &st) == 1 && st.n_plans == 2);
		CHECK(st.first_runs == 3 && st.recorded_runs == 2 && st.planned_runs == 8 &&
		      st.left_runs == 1 && st.refit_runs == 1);
		for (size_t p = 0; p < st.n_plans; p++) {
			struct vpa_onnx_plan_stats sp;
			CHECK(vpa_onnx_plan_stats(mp, p, &sp) == 1 && sp.overlaps == 0);
		}
		struct var_thr t[2] = {{mp, m0, F, 0}, {mp, m0, F, 0}};
		pthread_t th;
		pthread_create(&th, NULL, var_thr_run, &t[1]);
		var_thr_run(&t[0]);
		pthread_join(th, NULL);
		CHECK(t[0].ok && t[1].ok);
		CHECK(vpa_onnx_plan_stats(mp, 0, &st) == 1 && st.n_plans == 2);
		CHECK(st.planned_runs == 20 && st.left_runs == 1);
		vpa_onnx_free(m0);
		vpa_onnx_free(mp);
	}
}

/* The ResNet's 3x3 convolutions (8-32 channels: im2col by default) by
 * Winograd F(2x2,3x3) and F(4x4,3x3), against PyTorch's outputs. */
static void test_model_resnet_winograd(void)
{
	ox_conv_force(OX_CONV_WINO2);
	check_model("resnet");
	ox_conv_force(OX_CONV_WINO4);
	check_model("resnet");
	ox_conv_force(0);
}

/* Two threads share one model: each result equals the one-thread result bit for bit. */
struct thr {
	const struct vpa_onnx_model *m;
	const struct vpa_onnx_tensor *x;
	struct vpa_onnx_tensor y[20];
	int rc;
};

static void *thr_run(void *p)
{
	struct thr *t = p;
	const char *in[1] = {"feats"}, *out[1] = {"out"};
	struct vpa_err err;
	t->rc = 0;
	for (int k = 0; k < 20 && !t->rc; k++) {
		vpa_err_init(&err);
		t->rc = vpa_onnx_run(t->m, 1, in, t->x, 1, out, &t->y[k], &err);
	}
	return NULL;
}

static void test_threads(void)
{
	struct vpa_onnx_model *m;
	struct vpa_err err;
	struct vpa_onnx_tensor x, ref;
	vpa_err_init(&err);
	CHECK(vpa_onnx_load(GOLD "ecapa.onnx", NULL, &m, &err) == 0);
	CHECK(load_npy(GOLD "ecapa.x.npy", &x) == 0);
	const char *in[1] = {"feats"}, *out[1] = {"out"};
	CHECK(vpa_onnx_run(m, 1, in, &x, 1, out, &ref, &err) == 0);
	struct vpa_onnx_tensor y2;
	CHECK(vpa_onnx_run(m, 1, in, &x, 1, out, &y2, &err) == 0); /* records the plan */
	CHECK(y2.data && !memcmp(y2.data, ref.data, vpa_onnx_numel(&ref) * 4));
	vpa_onnx_tensor_release(&y2);
	struct thr t[2] = {{m, &x, {{0}}, 0}, {m, &x, {{0}}, 0}};
	pthread_t th;
	pthread_create(&th, NULL, thr_run, &t[1]);
	thr_run(&t[0]);
	pthread_join(th, NULL);
	/* The second run recorded the plan; the 40 parallel runs replayed it. */
	struct vpa_onnx_plan_stats st;
	CHECK(vpa_onnx_plan_stats(m, 0, &st) == 1);
	CHECK(st.recorded_runs == 1 && st.planned_runs == 40 && st.left_runs == 0);
	for (int i = 0; i < 2; i++) {
		CHECK(t[i].rc == 0);
		for (int k = 0; k < 20; k++) {
			CHECK(t[i].y[k].data && !memcmp(t[i].y[k].data, ref.data, vpa_onnx_numel(&ref) * 4));
			vpa_onnx_tensor_release(&t[i].y[k]);
		}
	}
	vpa_onnx_tensor_release(&ref);
	vpa_onnx_tensor_release(&x);
	vpa_onnx_free(m);
}

/* Bad input through the API: one line each, nothing allocated on error. */
static void test_bad_input(void)
{
	struct vpa_onnx_model *m = (void *)1;
	struct vpa_onnx_tensor t;
	struct vpa_err err;
	char *buf;
	size_t len;
	vpa_err_init(&err);
	CHECK(vpa_onnx_load_mem("x.onnx", "\x0a\xff\xff", 3, NULL, NULL, &m, &err) == VPA_EINPUT);
	CHECK(m == NULL);
	CHECK_STR(err.msg, "x.onnx: not a valid ONNX model (truncated or corrupt protobuf)");
	vpa_err_init(&err);
	CHECK(vpa_onnx_tensor_parse("t.pb", "\x08\x04\x08", 3, &t, NULL, &err) == VPA_EINPUT);
	CHECK(t.data == NULL);
	/* dims (2, 2) of float with one float_data value */
	static const unsigned char one[] = {0x08, 0x02, 0x08, 0x02, 0x10, 0x01, 0x22, 0x04, 0, 0, 0x80, 0x3f};
	vpa_err_init(&err);
	CHECK(vpa_onnx_tensor_parse("t.pb", one, sizeof(one), &t, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "t.pb: tensor '(unnamed)': float_data holds 1 values but the shape (2, 2) needs 4");
	/* the same with dims (1): fine */
	static const unsigned char ok[] = {0x08, 0x01, 0x10, 0x01, 0x22, 0x04, 0, 0, 0x80, 0x3f};
	vpa_err_init(&err);
	CHECK(vpa_onnx_tensor_parse("t.pb", ok, sizeof(ok), &t, NULL, &err) == 0);
	CHECK(t.ndim == 1 && t.dims[0] == 1 && ((float *)t.data)[0] == 1.0f);
	vpa_onnx_tensor_release(&t);
	/* Every prefix of a good model: an error or a model, never a crash. */
	vpa_err_init(&err);
	CHECK(vpa_read_file(GOLD "tdnn_am.onnx", &buf, &len, &err) == 0);
	size_t n_err = 0;
	for (size_t k = 0; k < len; k += 97) {
		vpa_err_init(&err);
		if (vpa_onnx_load_mem("cut.onnx", buf, k, NULL, NULL, &m, &err) == 0)
			vpa_onnx_free(m);
		else
			n_err += err.msg[0] != 0 && !strchr(err.msg, '\n');
	}
	CHECK(n_err > 0);
	free(buf);
	/* Inputs: wrong rank, wrong dtype, unknown name, missing input. */
	CHECK(vpa_onnx_load(GOLD "tdnn_am.onnx", NULL, &m, &err) == 0);
	float z[40] = {0};
	struct vpa_onnx_tensor x2 = vpa_onnx_tensor_f32(2, (int64_t[]){2, 20}, z), y;
	const char *in[1] = {"feats"}, *out[1] = {"out"}, *bad[1] = {"nope"};
	vpa_err_init(&err);
	CHECK(vpa_onnx_run(m, 1, in, &x2, 1, out, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, GOLD "tdnn_am.onnx: input 'feats' has rank 2 (2, 20), the model expects "
			   "rank 3 (1, time, 20)");
	struct vpa_onnx_tensor x3 = vpa_onnx_tensor_f32(3, (int64_t[]){1, 2, 20}, z);
	x3.dtype = VPA_ONNX_INT32;
	vpa_err_init(&err);
	CHECK(vpa_onnx_run(m, 1, in, &x3, 1, out, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, GOLD "tdnn_am.onnx: input 'feats' is int32, the model expects float32");
	x3.dtype = VPA_ONNX_FLOAT;
	vpa_err_init(&err);
	CHECK(vpa_onnx_run(m, 1, bad, &x3, 1, out, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, GOLD "tdnn_am.onnx: the model has no input 'nope'");
	vpa_err_init(&err);
	CHECK(vpa_onnx_run(m, 0, in, &x3, 1, out, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, GOLD "tdnn_am.onnx: input 'feats' is not given");
	vpa_err_init(&err);
	CHECK(vpa_onnx_run(m, 1, in, &x3, 1, bad, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, GOLD "tdnn_am.onnx: the graph has no value 'nope' "
		  "(nearest: 'out', 'feats', '/l1/Conv_output_0')");
	vpa_onnx_free(m);
}

/* Issue 26 item 1: nesting is bounded before libprotobuf-c's recursive unpack. */
static void test_hostile_nesting(void)
{
	struct vpa_onnx_load_opts lenient = {.lenient = 1};
	int depths[] = {64, 65, 12000};
	for (size_t i = 0; i < 3; i++) {
		struct pb b = {0};
		struct vpa_onnx_model *m = NULL;
		struct vpa_err err;
		craft_deep(&b, depths[i]);
		vpa_err_init(&err);
		int rc = vpa_onnx_load_mem("deep.onnx", pb_data(&b), b.len, NULL, &lenient, &m, &err);
		if (depths[i] == 64) {
			/* at the limit: loads (If is unsupported, which a lenient load notes) */
			CHECK(rc == 0 && m && vpa_onnx_n_nodes(m) == 1);
			vpa_onnx_free(m);
		} else {
			char want[200];
			snprintf(want, sizeof(want), "deep.onnx: protobuf messages nested more than 64 "
				 "levels deep (at byte %s; at most 64 are accepted)",
				 depths[i] == 65 ? "604" : "682");
			CHECK(rc == VPA_EINPUT && m == NULL);
			CHECK_STR(err.msg, want);
		}
		free(b.buf);
	}
}

static void put_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(p, 1, n, f) == n);
	if (f)
		fclose(f);
}

/* Load a model whose initializer 'w' (16 floats) is external data at location,
 * from folder dir; returns the status, err->msg says why. */
static int load_ext(const char *dir, const char *location, struct vpa_err *err)
{
	struct pb b = {0};
	struct vpa_onnx_model *m = NULL;
	craft_init_model(&b, 13, 16, NULL, location);
	vpa_err_init(err);
	alarm(30); /* a FIFO used to block for ever: fail instead of hanging */
	int rc = vpa_onnx_load_mem("m.onnx", pb_data(&b), b.len, dir, NULL, &m, err);
	alarm(0);
	CHECK(rc ? m == NULL : m != NULL);
	vpa_onnx_free(m);
	free(b.buf);
	return rc;
}

/* Issue 26 item 2: external data never leaves the model's folder through a link. */
static void test_hostile_external(void)
{
	char top[] = "/tmp/vpa-test-onnx-XXXXXX", dir[200], out[200], p[300], q[300], want[600];
	struct vpa_err err;
	float w[16] = {0};
	CHECK(mkdtemp(top) != NULL);
	snprintf(dir, sizeof(dir), "%s/model", top);
	snprintf(out, sizeof(out), "%s/outside", top);
	CHECK(mkdir(dir, 0700) == 0 && mkdir(out, 0700) == 0);
	snprintf(p, sizeof(p), "%s/w.bin", out);
	put_file(p, w, sizeof(w)); /* a 64-byte secret outside the folder */
	snprintf(p, sizeof(p), "%s/real.bin", dir);
	put_file(p, w, sizeof(w));
	CHECK(load_ext(dir, "real.bin", &err) == 0);
	CHECK(load_ext(dir, "./real.bin", &err) == 0);
	/* weights.bin -> a file outside */
	snprintf(p, sizeof(p), "%s/w.bin", out);
	snprintf(q, sizeof(q), "%s/w.bin", dir);
	CHECK(symlink(p, q) == 0);
	CHECK(load_ext(dir, "w.bin", &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "m.onnx: tensor 'w': external data '%s/w.bin' goes through a "
		 "symbolic link (not followed: expected a regular file inside the model's folder)",
		 dir);
	CHECK_STR(err.msg, want);
	/* a link inside the folder is refused too: no link is followed */
	CHECK(unlink(q) == 0 && symlink("real.bin", q) == 0);
	CHECK(load_ext(dir, "w.bin", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, want);
	/* sub -> the outside folder, location sub/w.bin */
	snprintf(q, sizeof(q), "%s/sub", dir);
	CHECK(symlink(out, q) == 0);
	CHECK(load_ext(dir, "sub/w.bin", &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "m.onnx: tensor 'w': external data '%s/sub/w.bin' goes through "
		 "a symbolic link (not followed: expected a regular file inside the model's folder)",
		 dir);
	CHECK_STR(err.msg, want);
	/* a FIFO (blocked for ever before), a folder */
	snprintf(q, sizeof(q), "%s/fifo.bin", dir);
	CHECK(mkfifo(q, 0600) == 0);
	CHECK(load_ext(dir, "fifo.bin", &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "m.onnx: tensor 'w': external data '%s/fifo.bin' is not a "
		 "regular file", dir);
	CHECK_STR(err.msg, want);
	snprintf(q, sizeof(q), "%s/folder.bin", dir);
	CHECK(mkdir(q, 0700) == 0);
	CHECK(load_ext(dir, "folder.bin", &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "m.onnx: tensor 'w': external data '%s/folder.bin' is not a "
		 "regular file", dir);
	CHECK_STR(err.msg, want);
	/* ".." as the last component */
	CHECK(load_ext(dir, "folder.bin/..", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "m.onnx: tensor 'w': external data location 'folder.bin/..' must be a "
			   "path inside the model's folder");
	const char *rm[] = {"model/real.bin", "model/w.bin", "model/sub", "model/fifo.bin",
			    "outside/w.bin"};
	for (size_t i = 0; i < sizeof(rm) / sizeof(rm[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", top, rm[i]);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/model/folder.bin", top);
	rmdir(p);
	rmdir(dir);
	rmdir(out);
	rmdir(top);
}

/* Issue 30: an attention mask of -inf (tests/golden/onnx/gen_mask.py): Softmax(x +
 * mask) gives the masked weights exactly 0 and the others NumPy's softmax over the
 * rest (to float32 rounding); a row masked whole gives NaN, as PyTorch. */
static void test_mask_inf(void)
{
	const char *names[2] = {"tests/golden/onnx/mask_softmax.onnx",
				"tests/golden/onnx/mask_init.onnx"};
	struct vpa_npy x, y;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_npy_read("tests/golden/onnx/mask.x.npy", &x, &err) == 0);
	CHECK(vpa_npy_read("tests/golden/onnx/mask.y.npy", &y, &err) == 0);
	float xf[6];
	for (int i = 0; i < 6; i++)
		xf[i] = (float)x.data[i];
	int64_t dims[2] = {2, 3};
	struct vpa_onnx_tensor in;
	memset(&in, 0, sizeof(in));
	in.dtype = VPA_ONNX_FLOAT;
	in.ndim = 2;
	in.dims[0] = dims[0];
	in.dims[1] = dims[1];
	in.data = xf;
	const char *in_name[1] = {"x"}, *want[1] = {"y"};
	for (int k = 0; k < 2; k++) {
		struct vpa_onnx_model *m = NULL;
		CHECK(vpa_onnx_load(names[k], NULL, &m, &err) == 0);
		if (!m)
			continue;
		struct vpa_onnx_tensor out;
		memset(&out, 0, sizeof(out));
		CHECK(vpa_onnx_run(m, 1, in_name, &in, 1, want, &out, &err) == 0);
		const float *o = out.data;
		CHECK(o && o[1] == 0 && o[5] == 0);
		for (int i = 0; o && i < 6; i++)
			CHECK_NEAR(o[i], y.data[i], 1e-7);
		vpa_onnx_tensor_release(&out);
		vpa_onnx_free(m);
	}
	struct vpa_onnx_model *m = NULL;
	CHECK(vpa_onnx_load("tests/golden/onnx/mask_allinf.onnx", NULL, &m, &err) == 0);
	if (m) {
		struct vpa_onnx_tensor out;
		memset(&out, 0, sizeof(out));
		CHECK(vpa_onnx_run(m, 1, in_name, &in, 1, want, &out, &err) == 0);
		const float *o = out.data;
		CHECK(o && isfinite(o[0]) && isnan(o[3]) && isnan(o[4]) && isnan(o[5]));
		vpa_onnx_tensor_release(&out);
		vpa_onnx_free(m);
	}
	vpa_npy_release(&x);
	vpa_npy_release(&y);
}

/* Issue 26 item 10: NaN in initializers and Constant tensors is refused; +-inf
 * loads since issue 30 (attention masks; tests/e2e/test_onnx.sh runs them). */
static void test_hostile_nonfinite(void)
{
	struct vpa_onnx_model *m = NULL;
	struct vpa_err err;
	struct pb b = {0};
	craft_init_model(&b, 13, 3, (const float[]){1, 2, 3}, NULL);
	vpa_err_init(&err);
	CHECK(vpa_onnx_load_mem("w.onnx", pb_data(&b), b.len, NULL, NULL, &m, &err) == 0);
	vpa_onnx_free(m);
	free(b.buf);
	memset(&b, 0, sizeof(b));
	craft_init_model(&b, 13, 3, (const float[]){1, NAN, 3}, NULL);
	vpa_err_init(&err);
	CHECK(vpa_onnx_load_mem("w.onnx", pb_data(&b), b.len, NULL, NULL, &m, &err) == VPA_EINPUT);
	CHECK(m == NULL);
	CHECK_STR(err.msg, "w.onnx: initializer 'w': element 1 (0-based) is not finite (nan)");
	free(b.buf);
	memset(&b, 0, sizeof(b));
	/* a Constant node whose value is (2, 2) float32 with -inf at (1, 0) */
	float v[4] = {0, 1, -INFINITY, 3};
	size_t g = pb_mark(&b), k = pb_mark(&b);
	pb_str(&b, 1, "c");
	pb_end(&b, 12, k); /* graph output c */
	k = pb_mark(&b);
	size_t a = pb_mark(&b), t = pb_mark(&b);
	pb_bytes(&b, 9, v, sizeof(v));
	pb_int(&b, 2, 1);
	pb_int(&b, 1, 2);
	pb_int(&b, 1, 2);
	pb_end(&b, 5, t); /* AttributeProto.t */
	pb_int(&b, 20, 4); /* TENSOR */
	pb_str(&b, 1, "value");
	pb_end(&b, 5, a); /* NodeProto.attribute */
	pb_str(&b, 4, "Constant");
	pb_str(&b, 3, "k");
	pb_str(&b, 2, "c");
	pb_end(&b, 1, k); /* GraphProto.node */
	pb_end(&b, 7, g);
	craft_model_head(&b, 13);
	vpa_err_init(&err);
	/* issue 30: -inf loads (an attention mask's value) and is given back as it is */
	CHECK(vpa_onnx_load_mem("k.onnx", pb_data(&b), b.len, NULL, NULL, &m, &err) == 0);
	if (m) {
		struct vpa_onnx_tensor out;
		memset(&out, 0, sizeof(out));
		const char *want[1] = {"c"};
		CHECK(vpa_onnx_run(m, 0, NULL, NULL, 1, want, &out, &err) == 0);
		CHECK(out.ndim == 2 && ((float *)out.data)[2] == -INFINITY &&
		      ((float *)out.data)[3] == 3);
		vpa_onnx_tensor_release(&out);
		vpa_onnx_free(m);
		m = NULL;
	}
	free(b.buf);
	/* the index of vpa_check_finite_nd, 0-D to 3-D, float64 */
	double d[24] = {0};
	d[23] = NAN;
	vpa_err_init(&err);
	CHECK(vpa_check_finite_nd("a.npy", NULL, d, 8, 3, (size_t[]){2, 3, 4}, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "a.npy: element (1, 2, 3) (0-based) is not finite (nan)");
	vpa_err_init(&err);
	CHECK(vpa_check_finite_nd("a.npy", NULL, d + 23, 8, 0, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "a.npy: the value is not finite (nan)");
	vpa_err_init(&err);
	CHECK(vpa_check_finite_nd("a.npy", "x", d, 8, 1, (size_t[]){24}, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "a.npy: x: element 23 (0-based) is not finite (nan)");
	CHECK(vpa_check_finite_nd("a.npy", NULL, d, 8, 1, (size_t[]){23}, &err) == 0);
}

/* Issue 26 item 11: no default-domain opset is said so, not "opset -1". */
static void test_hostile_no_opset(void)
{
	struct vpa_onnx_model *m = NULL;
	struct vpa_onnx_load_opts lenient = {.lenient = 1};
	struct vpa_err err;
	struct pb b = {0};
	craft_init_model(&b, -1, 3, (const float[]){1, 2, 3}, NULL);
	vpa_err_init(&err);
	CHECK(vpa_onnx_load_mem("o.onnx", pb_data(&b), b.len, NULL, NULL, &m, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "o.onnx: the model imports no opset of the default domain (expected an "
			   "opset_import of domain '' with a version 11-17)");
	vpa_err_init(&err);
	CHECK(vpa_onnx_load_mem("o.onnx", pb_data(&b), b.len, NULL, &lenient, &m, &err) == 0);
	CHECK(m && vpa_onnx_opset(m) == -1);
	vpa_onnx_free(m);
	free(b.buf);
}

int main(void)
{
	RUN(test_model_tdnn);
	RUN(test_model_ecapa);
	RUN(test_model_resnet);
	RUN(test_model_tdnn_am_hidden);
	RUN(test_model_conformer_opset13);
	RUN(test_model_conformer_opset17);
	RUN(test_model_lstm_gru);
	RUN(test_model_handover);
	RUN(test_plan_fuse);
	RUN(test_fusions);
	RUN(test_plan_leave);
	RUN(test_plan_buckets);
	RUN(test_threads);
	RUN(test_bad_input);
	RUN(test_hostile_nesting);
	RUN(test_hostile_external);
	RUN(test_hostile_nonfinite);
	RUN(test_mask_inf);
	RUN(test_hostile_no_opset);
	RUN(test_model_resnet_winograd);
	return DONE();
}
