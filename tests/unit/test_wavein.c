/*
 * tests/unit/test_wavein.c - waveform-input extractors (issue 31 item 8) on
 * tests/golden/wavein (gen.py: PyTorch 1.13 exports at opset 17 with the
 * front-end inside the graph, and PyTorch's own numbers):
 *   - the STFT operator against torch.stft, the Hann and Blackman window
 *     generators against torch.hann_window / torch.blackman_window, the DFT
 *     of 1000 complex points against the sum in long double and back;
 *   - embeddings of an STFT + mel + TDNN extractor fed the waveform
 *     (`input: waveform`) equal to PyTorch's: whole utterances, a model
 *     without a dynamic time axis run in chunks, and an older export whose
 *     framing is a Conv1d; identical for 1 and 2 threads;
 *   - the input layout inferred from the declared shape (btf/bft, and
 *     (B, T) / (B, 1, T) for waveforms);
 *   - the errors: a fixed time axis names the --chunk that fits, a waveform
 *     model fed features and --cmn with a waveform are refused.
 */
#include <stdlib.h>

#include "embed/embed.h"
#include "formats/io.h"
#include "formats/kaldi.h"
#include "onnx/onnx.h"
#include "base/la.h"
#include "harness.h"

#define G "tests/golden/wavein/"

static int read_npy(const char *path, struct vpa_npy_nd *a)
{
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_npy_read_nd(path, a, &err)) {
		printf("#   %s\n", err.msg);
		return -1;
	}
	return a->kind == 'f' && a->itemsize == 4 ? 0 : -1;
}

static struct vpa_onnx_tensor view(const struct vpa_npy_nd *a)
{
	int64_t d[VPA_ONNX_MAX_DIMS];
	for (size_t k = 0; k < a->ndim; k++)
		d[k] = (int64_t)a->shape[k];
	return vpa_onnx_tensor_f32(a->ndim, d, a->data);
}

/* STFT of opset 17 against torch.stft (onesided, the 400-point Hann window
 * centred in 512 points, hop 160, no centre padding). */
static void test_stft_against_torch(void)
{
	struct vpa_npy_nd x, w, ref;
	CHECK(read_npy(G "stft_x.npy", &x) == 0);
	CHECK(read_npy(G "stft_win.npy", &w) == 0);
	CHECK(read_npy(G "stft_ref.npy", &ref) == 0);
	struct vpa_onnx_model *m = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = vpa_onnx_load(G "signal.onnx", NULL, &m, &err);
	if (rc)
		printf("#   %s\n", err.msg);
	CHECK(rc == 0);
	if (rc)
		return;
	double z1[2] = {1, 0}; /* the DFT's input, checked in test_dft_round_trip */
	struct vpa_onnx_tensor in[3] = {view(&x), view(&w), {VPA_ONNX_DOUBLE, 3, {1, 1, 2}, z1}}, y;
	const char *names[] = {"x", "win", "z"}, *want[] = {"spec"};
	rc = vpa_onnx_run(m, 3, names, in, 1, want, &y, &err);
	if (rc)
		printf("#   %s\n", err.msg);
	CHECK(rc == 0);
	/* ours (1, frames, 257, 2); torch's (257, frames, 2) */
	size_t F = ref.shape[1], B = ref.shape[0];
	CHECK(F == 22 && B == 257); /* 1 + (4000 - 512) / 160 frames */
	CHECK(!rc && y.ndim == 4 && y.dims[0] == 1 && (size_t)y.dims[1] == F &&
	      (size_t)y.dims[2] == B && y.dims[3] == 2);
	if (!rc && y.ndim == 4 && (size_t)y.dims[1] == F && (size_t)y.dims[2] == B) {
		const float *a = y.data, *b = ref.data;
		double worst = 0, scale = 0;
		for (size_t i = 0; i < B * F * 2; i++)
			scale = fabs(b[i]) > scale ? fabs(b[i]) : scale;
		for (size_t k = 0; k < B; k++)
			for (size_t f = 0; f < F; f++)
				for (size_t c = 0; c < 2; c++) {
					double d = fabs(a[(f * B + k) * 2 + c] - b[(k * F + f) * 2 + c]);
					worst = d > worst ? d : worst;
				}
		/* float32 FFTs of 512 points differ from the exact transform by a few
		 * float32 ulps of the largest bin: 1e-6 of it is about 8 ulps */
		printf("#   STFT: max |vpaudit - torch.stft| = %.3g, largest |bin| %.3g\n", worst,
		       scale);
		CHECK(worst <= 1e-6 * scale);
		CHECK(scale > 1);
	}
	vpa_onnx_tensor_release(&y);
	/* windows: HannWindow and BlackmanWindow against PyTorch's (same definitions) */
	struct vpa_npy_nd wins;
	CHECK(read_npy(G "windows.npy", &wins) == 0);
	const char *wn[] = {"hann_p", "blackman_p", "hann_s", "blackman_s"};
	for (size_t j = 0; j < 4; j++) {
		const char *one[] = {wn[j]};
		rc = vpa_onnx_run(m, 3, names, in, 1, one, &y, &err);
		CHECK(rc == 0 && y.ndim == 1 && y.dims[0] == 400);
		double worst = 0;
		for (size_t i = 0; !rc && i < 400; i++) {
			double d = fabs(((const float *)y.data)[i] - ((const float *)wins.data)[j * 400 + i]);
			worst = d > worst ? d : worst;
		}
		/* PyTorch computes its windows in float32: a few ulps of 1 */
		if (worst > 5e-7)
			printf("#   %s: max difference %g\n", wn[j], worst);
		CHECK(worst <= 5e-7);
		vpa_onnx_tensor_release(&y);
	}
	vpa_npy_nd_release(&wins);
	vpa_onnx_free(m);
	vpa_npy_nd_release(&x);
	vpa_npy_nd_release(&w);
	vpa_npy_nd_release(&ref);
}

/*
 * DFT of a complex float64 signal of N = 1000 points (4 blocks of bins, not a
 * power of two) against the definition summed directly in long double, and
 * the inverse DFT giving the signal back.
 */
static void test_dft_round_trip(void)
{
	enum { N = 1000 };
	static double z[2 * N];
	uint64_t st = 12345;
	double l1 = 0;
	for (size_t i = 0; i < 2 * N; i++) { /* a 64-bit LCG (Knuth's MMIX constants) */
		st = st * 6364136223846793005ULL + 1442695040888963407ULL;
		z[i] = (double)(st >> 11) / 9007199254740992.0 - 0.5;
		l1 += fabs(z[i]);
	}
	struct vpa_onnx_model *m = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_onnx_load(G "signal.onnx", NULL, &m, &err) == 0);
	if (!m)
		return;
	float x1[512] = {0}, w1[512] = {0};
	struct vpa_onnx_tensor in[3] = {{VPA_ONNX_FLOAT, 3, {1, 512, 1}, x1},
					{VPA_ONNX_FLOAT, 1, {512}, w1},
					{VPA_ONNX_DOUBLE, 3, {1, N, 2}, z}}, y[2];
	const char *names[] = {"x", "win", "z"}, *want[] = {"Z", "zz"};
	int rc = vpa_onnx_run(m, 3, names, in, 2, want, y, &err);
	if (rc)
		printf("#   %s\n", err.msg);
	CHECK(rc == 0);
	if (!rc) {
		CHECK(y[0].dtype == VPA_ONNX_DOUBLE && y[0].ndim == 3 && y[0].dims[1] == N);
		const double *Z = y[0].data, *zz = y[1].data;
		double e_f = 0, e_i = 0;
		for (size_t k = 0; k < N; k += 37) { /* 28 bins summed directly */
			long double re = 0, im = 0;
			for (size_t n = 0; n < N; n++) {
				long double a = -2.0L * 3.14159265358979323846264338327950288L *
						(long double)((k * n) % N) / N;
				re += z[2 * n] * cosl(a) - z[2 * n + 1] * sinl(a);
				im += z[2 * n] * sinl(a) + z[2 * n + 1] * cosl(a);
			}
			e_f = fmax(e_f, fmax(fabs(Z[2 * k] - (double)re), fabs(Z[2 * k + 1] - (double)im)));
		}
		for (size_t i = 0; i < 2 * N; i++)
			e_i = fmax(e_i, fabs(zz[i] - z[i]));
		printf("#   DFT N=1000: max error %.3g (sum |z| %.3g), inverse round trip %.3g\n",
		       e_f, l1, e_i);
		/* double rounding of an N-term sum: well below 1e-13 of sum |z| */
		CHECK(e_f <= 1e-13 * l1);
		CHECK(e_i <= 1e-13);
	}
	vpa_onnx_tensor_release(&y[0]);
	vpa_onnx_tensor_release(&y[1]);
	vpa_onnx_free(m);
}

static int set_from(const char *model, const char *opts[][2], size_t n_opts, int threads,
		    struct vpa_embset *es, struct vpa_err *err)
{
	struct vpa_embed_opts o;
	vpa_embed_opts_init(&o, VPA_FEAT_FBANK);
	o.threads = threads;
	int rc = 0;
	for (size_t i = 0; i < n_opts && !rc; i++)
		rc = vpa_embed_opts_set(&o, opts[i][0], opts[i][1], err);
	if (rc)
		return rc;
	return vpa_embset_from_audio(G "data", model, &o, es, err);
}

/* The set against PyTorch's text archive: |a - b| <= 1e-6 + 1e-5 |b| (the
 * tolerance of the ONNX golden models, tests/golden/onnx). */
static void check_against(const struct vpa_embset *es, const char *golden)
{
	struct vpa_kaldi_ark ark;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_kaldi_ark_init(&ark);
	int rc = vpa_kaldi_read(golden, VPA_KALDI_VECTORS, &ark, &err);
	CHECK(rc == 0);
	CHECK(ark.n == 3 && es->n == 3 && es->d == 16 && ark.e[0].cols == 16);
	double worst = 0;
	int ok = 1;
	for (size_t i = 0; !rc && i < ark.n && i < es->n && es->d == 16; i++) {
		CHECK_STR(es->utt[i], ark.e[i].key);
		for (size_t k = 0; k < 16; k++) {
			double b = ark.data[ark.e[i].off + k], a = es->x[i * 16 + k];
			double r = fabs(a - b) / (1e-6 + 1e-5 * fabs(b));
			worst = r > worst ? r : worst;
			ok &= r <= 1;
		}
	}
	printf("#   %s: max |a - b| / (1e-6 + 1e-5 |b|) = %.3g\n", golden, worst);
	CHECK(ok);
	vpa_kaldi_ark_release(&ark);
}

static void check_case(const char *model, const char *opts[][2], size_t n, const char *golden)
{
	struct vpa_embset es;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embset_init(&es);
	int rc = set_from(model, opts, n, 1, &es, &err);
	if (rc)
		printf("#   %s\n", err.msg);
	CHECK(rc == 0);
	if (!rc)
		check_against(&es, golden);
	vpa_embset_release(&es);
}

static void test_stft_extractor_whole(void)
{
	const char *o[][2] = {{"input", "waveform"}};
	check_case(G "wavein.onnx", o, 1, G "emb.txt");
}

static void test_fixed_length_in_chunks(void)
{
	const char *o[][2] = {{"input", "waveform"}, {"chunk", "16000"}};
	check_case(G "wavein_fixed.onnx", o, 2, G "emb_fixed.txt");
}

static void test_conv_framing(void)
{
	/* input (batch, 1, time): the layout from the declared shape */
	const char *o[][2] = {{"input", "waveform"}};
	check_case(G "wavein_conv.onnx", o, 1, G "emb_conv.txt");
}

/* The goldens must differ, else the cases above could not tell them apart. */
static void test_goldens_differ_and_threads(void)
{
	struct vpa_embset a, b;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embset_init(&a);
	vpa_embset_init(&b);
	const char *o[][2] = {{"input", "waveform"}};
	CHECK(set_from(G "wavein.onnx", o, 1, 1, &a, &err) == 0);
	CHECK(set_from(G "wavein.onnx", o, 1, 2, &b, &err) == 0);
	CHECK(a.n == 3 && b.n == 3 && a.d == b.d &&
	      !memcmp(a.x, b.x, a.n * a.d * sizeof(double)));
	struct vpa_kaldi_ark f;
	vpa_kaldi_ark_init(&f);
	CHECK(vpa_kaldi_read(G "emb_fixed.txt", VPA_KALDI_VECTORS, &f, &err) == 0);
	double d = 0;
	for (size_t i = 0; a.n == 3 && f.n == 3 && i < 48; i++)
		d = fmax(d, fabs(a.x[i] - f.data[i]));
	CHECK(d > 1e-3); /* u1, u3 are longer than one chunk: chunking changes them */
	CHECK_NEAR(a.dur[2], 2.11, 1e-9);
	vpa_kaldi_ark_release(&f);
	vpa_embset_release(&a);
	vpa_embset_release(&b);
}

/* btf/bft from the declared shape: tests/golden/embed's tdnn_bft.onnx
 * (input (1, 20, time)) needs no --layout. */
static void test_layout_inferred(void)
{
	struct vpa_embed_opts o;
	struct vpa_embset es;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embset_init(&es);
	vpa_embed_opts_init(&o, VPA_FEAT_FBANK);
	CHECK(o.layout == VPA_EMBED_AUTO);
	CHECK(vpa_embed_opts_set(&o, "num-mel-bins", "20", &err) == 0);
	int rc = vpa_embset_from_audio("tests/golden/embed/data", "tests/golden/embed/tdnn_bft.onnx",
				       &o, &es, &err);
	if (rc)
		printf("#   %s\n", err.msg);
	CHECK(rc == 0);
	struct vpa_npy_nd g;
	CHECK(read_npy("tests/golden/embed/tdnn_bft.whole.npy", &g) == 0);
	double worst = 0;
	for (size_t i = 0; !rc && g.ndim == 2 && g.shape[0] == es.n && g.shape[1] == es.d &&
			   i < es.n * es.d; i++) {
		double b = ((const float *)g.data)[i];
		worst = fmax(worst, fabs(es.x[i] - b) / (1e-5 + fabs(b)));
	}
	CHECK(!rc && es.n == 6 && worst <= 1e-4); /* test_embed's tolerance for this golden */
	vpa_npy_nd_release(&g);
	vpa_embset_release(&es);
}

static void expect_error(const char *model, const char *opts[][2], size_t n, const char *msg)
{
	struct vpa_embed_opts o;
	struct vpa_embedder *e = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embed_opts_init(&o, VPA_FEAT_FBANK);
	for (size_t i = 0; i < n; i++)
		CHECK(vpa_embed_opts_set(&o, opts[i][0], opts[i][1], &err) == 0);
	CHECK(vpa_embedder_new(model, &o, &e, &err) == VPA_EINPUT);
	CHECK(e == NULL);
	CHECK_STR(err.msg, msg);
}

static void test_errors(void)
{
	const char *w[][2] = {{"input", "waveform"}};
	expect_error(G "wavein_fixed.onnx", w, 1,
		     G "wavein_fixed.onnx: input 'wav' (1, 16000) has a fixed time axis of 16000 "
		       "samples: use --chunk=16000 (scenario key chunk: 16000; chunk embeddings "
		       "averaged)");
	const char *wc[][2] = {{"input", "waveform"}, {"chunk", "8000"}};
	expect_error(G "wavein_fixed.onnx", wc, 2,
		     G "wavein_fixed.onnx: input 'wav' (1, 16000) has a fixed time axis of 16000 "
		       "samples: --chunk=8000 does not fit it, use --chunk=16000");
	expect_error(G "wavein.onnx", NULL, 0,
		     G "wavein.onnx: input 'wav' (batch, time) has rank 2: expected (batch, time, "
		       "features) (--layout btf) or (batch, features, time) (--layout bft); a "
		       "waveform input (batch, time) takes --input=waveform");
	const char *wm[][2] = {{"input", "waveform"}, {"cmn", "true"}};
	expect_error(G "wavein.onnx", wm, 2,
		     G "wavein.onnx: --cmn applies to features: a waveform input is fed as it is "
		       "(--input=waveform)");
	expect_error("tests/golden/embed/ecapa.onnx", w, 1,
		     "tests/golden/embed/ecapa.onnx: input 'feats' (1, time, 20) is not a waveform "
		     "input: expected (batch, time), (batch, 1, time) or (batch, time, 1)");
	/* --input=NAME still names the graph input of features */
	struct vpa_embed_opts o;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embed_opts_init(&o, VPA_FEAT_FBANK);
	CHECK(vpa_embed_opts_set(&o, "input", "feats", &err) == 0);
	CHECK(!o.waveform && o.input && !strcmp(o.input, "feats"));
	CHECK(vpa_embed_opts_set(&o, "input", "waveform", &err) == 0);
	CHECK(o.waveform);
	CHECK(vpa_embed_opts_set(&o, "input-name", "waveform", &err) == 0);
	CHECK(o.waveform && !strcmp(o.input, "waveform"));
}

int main(void)
{
	/* OpenBLAS single-threaded, as vpaudit's main() sets it: the thread-count
	 * checks below compare our loops, not OpenBLAS's kernels */
	vpa_la_set_threads(1);
	RUN(test_stft_against_torch);
	RUN(test_dft_round_trip);
	RUN(test_stft_extractor_whole);
	RUN(test_fixed_length_in_chunks);
	RUN(test_conv_framing);
	RUN(test_goldens_differ_and_threads);
	RUN(test_layout_inferred);
	RUN(test_errors);
	return DONE();
}
