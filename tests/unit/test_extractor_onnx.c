/*
 * tests/unit/test_extractor_onnx.c - the x-vector and the ECAPA-TDNN trained in C
 * written as ONNX (targets/anon_extractor_onnx.c, issue 31 item 9) compute the C extractor's
 * embeddings in vpaudit's own ONNX engine (the path of `vpaudit embed`): on
 * random features of 24 utterances (13..90 frames: the first is shorter than
 * the receptive field, so the TDNN edges that replicate the first/last frame
 * matter everywhere in it), the largest
 * difference is at most 1e-5 relative to the embedding's largest element
 * (float32 arithmetic in a different order: im2col GEMMs against learn/nn's
 * spliced GEMMs, float against double statistics and attention pooling).
 *
 * Golden (tests/golden/extractor_onnx/gen.py): the models written by this test
 * (VPA_WRITE_GOLDEN=DIR) pass Python onnx's checker (full_check), and a
 * numpy evaluation of its graph in float64 (an implementation independent of
 * vpaudit's engine) gives embeddings the engine matches within 1e-5 relative.
 */
#include <stdlib.h>

#include "formats/io.h"
#include "harness.h"
#include "onnx/onnx.h"
#include "targets/anon_extractor_io.h"

enum { DIM = 12, SPK = 6, UTTS = 4, N = SPK * UTTS, E = 8 };

static char tmpdir[] = "/tmp/vpa-xvonnx-XXXXXX";
static struct vpa_fmat feats[N];
static uint32_t labels[N];

static void make_feats(void)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, 7);
	for (int i = 0; i < N; i++) {
		size_t T = i == 0 ? 13 : 20 + (size_t)vpa_rng_below(&r, 71);
		vpa_fmat_init(&feats[i]);
		feats[i].rows = T;
		feats[i].cols = DIM;
		feats[i].x = malloc(T * DIM * sizeof(float));
		labels[i] = (uint32_t)(i / UTTS);
		for (size_t t = 0; t < T * DIM; t++)
			feats[i].x[t] = (float)(0.5 * labels[i] * ((t % DIM) % 3 == 0) +
						vpa_rng_normal(&r));
	}
}

static void meta_of(struct vpa_xvec_meta *m)
{
	vpa_xvec_meta_init(m);
	snprintf(m->role, sizeof(m->role), "asv_eval");
	snprintf(m->features, sizeof(m->features), "fbank");
	m->num_mel_bins = DIM;
	snprintf(m->cmvn, sizeof(m->cmvn), "utt");
	m->vad = 1;
	m->sample_frequency = 16000;
	m->frame_length = 25;
	m->frame_shift = 10;
	snprintf(m->loss, sizeof(m->loss), "aam");
	m->epochs = 3;
}

/* train a small extractor of arch, write it as ONNX, run it in the engine on
 * every utterance; *worst, *scale: the largest difference from the C
 * extractor's embeddings and its largest element */
static void onnx_vs_c(int arch, const char *golden, double *worst, double *scale)
{
	struct vpa_xvec_opts o;
	vpa_xvec_opts_init(&o);
	o.arch = arch;
	o.hidden = 16;
	o.channels = 16;
	o.res2_scale = 4;
	o.emb_dim = E;
	o.epochs = 3;
	o.batch = 8;
	o.chunk = 30;
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_xvec x;
	CHECK(vpa_xvec_train(feats, labels, N, SPK, &o, NULL, &x, &err) == 0);
	struct vpa_xvec_meta m;
	meta_of(&m);
	char path[256];
	snprintf(path, sizeof(path), "%s/x.onnx", tmpdir);
	CHECK(vpa_anon_extractor_onnx(&x, &m, path, &err) == 0);
	if (err.status)
		printf("# %s\n", err.msg);
	struct vpa_onnx_model *om = NULL;
	CHECK(vpa_onnx_load(path, NULL, &om, &err) == 0);
	if (err.status)
		printf("# %s\n", err.msg);
	float *ref = calloc(N * E, sizeof(float));
	CHECK(vpa_xvec_embed(&x, feats, NULL, N, 1, ref, &err) == 0);
	*worst = 0;
	*scale = 0;
	for (int i = 0; i < N && om; i++) {
		int64_t d[3] = {1, (int64_t)feats[i].rows, DIM};
		struct vpa_onnx_tensor in = vpa_onnx_tensor_f32(3, d, feats[i].x), out;
		const char *iname = "feats", *oname = "embedding";
		int rc = vpa_onnx_run(om, 1, &iname, &in, 1, &oname, &out, &err);
		CHECK(rc == 0);
		if (rc) {
			printf("# %s\n", err.msg);
			break;
		}
		CHECK(out.ndim == 2 && out.dims[0] == 1 && out.dims[1] == E);
		const float *y = out.data;
		for (int j = 0; j < E; j++) {
			double a = fabs((double)y[j] - ref[i * E + j]);
			*worst = a > *worst ? a : *worst;
			*scale = fabs(ref[i * E + j]) > *scale ? fabs(ref[i * E + j]) : *scale;
		}
		vpa_onnx_tensor_release(&out);
	}
	const char *gd = getenv("VPA_WRITE_GOLDEN");
	if (gd) {
		/* the model, 3 utterances' features (the 13-frame one first) and the C
		 * extractor's embeddings of them, for gen.py */
		char p[512];
		snprintf(p, sizeof(p), "%s/%s.onnx", gd, golden);
		CHECK(vpa_anon_extractor_onnx(&x, &m, p, &err) == 0);
		double *ce = malloc(3 * E * sizeof(double));
		for (int i = 0; i < 3; i++) {
			size_t sh[2] = {feats[i].rows, DIM};
			double *f = malloc(feats[i].rows * DIM * sizeof(double));
			for (size_t k = 0; k < feats[i].rows * DIM; k++)
				f[k] = feats[i].x[k];
			snprintf(p, sizeof(p), "%s/feats_%d.npy", gd, i);
			CHECK(vpa_npy_write(p, f, 2, sh, &err) == 0);
			free(f);
			for (int j = 0; j < E; j++)
				ce[i * E + j] = ref[i * E + j];
		}
		size_t sh[2] = {3, E};
		snprintf(p, sizeof(p), "%s/%s.c_embeddings.npy", gd, golden);
		CHECK(vpa_npy_write(p, ce, 2, sh, &err) == 0);
		free(ce);
	}
	vpa_onnx_free(om);
	free(ref);
	vpa_xvec_release(&x);
}

static void test_xvector_onnx_equals_c(void)
{
	double worst, scale;
	onnx_vs_c(VPA_XVEC_TDNN, "xvector", &worst, &scale);
	printf("# x-vector, ONNX engine vs C extractor: max |diff| %.3g, largest |element| %.3g\n",
	       worst, scale);
	CHECK(scale > 0.1);
	CHECK(worst <= 1e-5 * scale);
}

static void test_ecapa_onnx_equals_c(void)
{
	double worst, scale;
	onnx_vs_c(VPA_XVEC_ECAPA, "ecapa", &worst, &scale);
	printf("# ECAPA-TDNN, ONNX engine vs C extractor: max |diff| %.3g, largest |element| %.3g\n",
	       worst, scale);
	CHECK(scale > 0.1);
	CHECK(worst <= 1e-5 * scale);
}

#define G "tests/golden/extractor_onnx/"
static void golden_numpy(const char *name)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_onnx_model *om = NULL;
	char p[256];
	snprintf(p, sizeof(p), G "%s.onnx", name);
	CHECK(vpa_onnx_load(p, NULL, &om, &err) == 0);
	struct vpa_npy ref;
	memset(&ref, 0, sizeof(ref));
	snprintf(p, sizeof(p), G "%s.numpy_embeddings.npy", name);
	CHECK(vpa_npy_read(p, &ref, &err) == 0);
	CHECK(ref.ndim == 2 && ref.shape[0] == 3);
	char *chk = NULL;
	size_t len = 0;
	CHECK(vpa_read_file(G "checker.txt", &chk, &len, &err) == 0);
	snprintf(p, sizeof(p), "%s: onnx.checker.check_model(full_check=True): ok", name);
	CHECK(chk && strstr(chk, p) != NULL);
	free(chk);
	double worst = 0, scale = 0;
	for (int i = 0; i < 3 && om && ref.data; i++) {
		char p[128];
		snprintf(p, sizeof(p), G "feats_%d.npy", i);
		struct vpa_npy f;
		memset(&f, 0, sizeof(f));
		CHECK(vpa_npy_read(p, &f, &err) == 0);
		size_t n = f.shape[0] * f.shape[1];
		float *x = malloc(n * sizeof(float));
		for (size_t k = 0; k < n; k++)
			x[k] = (float)f.data[k];
		int64_t d[3] = {1, (int64_t)f.shape[0], (int64_t)f.shape[1]};
		struct vpa_onnx_tensor in = vpa_onnx_tensor_f32(3, d, x), out;
		const char *iname = "feats", *oname = "embedding";
		CHECK(vpa_onnx_run(om, 1, &iname, &in, 1, &oname, &out, &err) == 0);
		CHECK(out.ndim == 2 && (size_t)out.dims[1] == ref.shape[1]);
		for (size_t j = 0; j < ref.shape[1] && out.data; j++) {
			double r = ref.data[i * ref.shape[1] + j];
			double a = fabs(((float *)out.data)[j] - r);
			worst = a > worst ? a : worst;
			scale = fabs(r) > scale ? fabs(r) : scale;
		}
		vpa_onnx_tensor_release(&out);
		free(x);
		vpa_npy_release(&f);
	}
	printf("# %s: ONNX engine vs numpy (float64) on the golden model: max |diff| %.3g, "
	       "largest |element| %.3g\n", name, worst, scale);
	CHECK(scale > 0.1);
	CHECK(worst <= 1e-5 * scale);
	vpa_npy_release(&ref);
	vpa_onnx_free(om);
}

static void test_golden_numpy(void)
{
	golden_numpy("xvector");
	golden_numpy("ecapa");
}

static void test_embed_options(void)
{
	struct vpa_xvec_meta m;
	meta_of(&m);
	char b[512];
	vpa_anon_extractor_embed_options(&m, b, sizeof(b));
	CHECK_STR(b, "--features=fbank --num-mel-bins=12 --cmvn=utt --vad=true "
		     "--sample-frequency=16000 --frame-length=25 --frame-shift=10 --cmn=false "
		     "--layout=btf");
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	make_feats();
	RUN(test_xvector_onnx_equals_c);
	RUN(test_ecapa_onnx_equals_c);
	RUN(test_golden_numpy);
	RUN(test_embed_options);
	for (int i = 0; i < N; i++)
		vpa_fmat_release(&feats[i]);
	vpa_rm_tree(tmpdir); /* only files these tests wrote */
	return DONE();
}
