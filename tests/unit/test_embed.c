/*
 * tests/unit/test_embed.c - embed/: embeddings of the audio of
 * tests/golden/embed/data against PyTorch (tests/golden/embed/gen.py:
 * torchaudio.compliance.kaldi.fbank, mean removal, the same model, WeSpeaker's
 * chunking), the embedding set's speakers/genders/durations, thread
 * independence, the binary FV archive round trip, and the errors.
 */
#include <stdlib.h>
#include <unistd.h>

#include "formats/io.h"
#include "formats/kaldi.h"
#include "embed/embed.h"
#include "harness.h"

#define G "tests/golden/embed/"

/* Max |a - b| / (1e-5 + |b|) over the set against a (n, d) float32 golden. */
static double rel_err(const struct vpa_embset *es, const char *golden)
{
	struct vpa_npy_nd a;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_npy_read_nd(golden, &a, &err)) {
		printf("#   %s\n", err.msg);
		return 1e9;
	}
	double worst = 1e9;
	if (a.kind == 'f' && a.itemsize == 4 && a.ndim == 2 && a.shape[0] == es->n &&
	    a.shape[1] == es->d) {
		const float *g = a.data;
		worst = 0;
		for (size_t i = 0; i < es->n * es->d; i++) {
			double e = fabs(es->x[i] - g[i]) / (1e-5 + fabs(g[i]));
			if (e > worst)
				worst = e;
		}
	}
	vpa_npy_nd_release(&a);
	return worst;
}

static int set_from(const char *model, const char *opts[][2], size_t n_opts, int threads,
		    struct vpa_embset *es, struct vpa_err *err)
{
	struct vpa_embed_opts o;
	vpa_embed_opts_init(&o, VPA_FEAT_FBANK);
	o.threads = threads;
	int rc = vpa_embed_opts_set(&o, "num-mel-bins", "20", err);
	for (size_t i = 0; i < n_opts && !rc; i++)
		rc = vpa_embed_opts_set(&o, opts[i][0], opts[i][1], err);
	if (rc)
		return rc;
	return vpa_embset_from_audio(G "data", model, &o, es, err);
}

static void check_case(const char *model, const char *opts[][2], size_t n, const char *golden)
{
	struct vpa_embset es;
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = set_from(model, opts, n, 1, &es, &err);
	if (rc)
		printf("#   %s\n", err.msg);
	CHECK(rc == 0);
	CHECK(es.n == 6 && es.d == 16);
	double e = rel_err(&es, golden);
	if (e > 1e-4)
		printf("#   %s: max relative error %g\n", golden, e);
	CHECK(e <= 1e-4);
	vpa_embset_release(&es);
}

static void test_ecapa_whole(void)
{
	check_case(G "ecapa.onnx", NULL, 0, G "ecapa.whole.npy");
}

static void test_ecapa_chunk_wespeaker(void)
{
	const char *o[][2] = {{"chunk", "30"}};
	check_case(G "ecapa.onnx", o, 1, G "ecapa.chunk30.npy");
}

static void test_ecapa_no_cmn(void)
{
	const char *o[][2] = {{"cmn", "false"}};
	check_case(G "ecapa.onnx", o, 1, G "ecapa.nocmn.npy");
}

static void test_layout_bft(void)
{
	const char *o[][2] = {{"layout", "bft"}};
	check_case(G "tdnn_bft.onnx", o, 1, G "tdnn_bft.whole.npy");
}

/* The cases must differ from each other, else the tests above could not tell them apart. */
static void test_cases_differ(void)
{
	struct vpa_embset es;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(set_from(G "ecapa.onnx", NULL, 0, 1, &es, &err) == 0);
	CHECK(rel_err(&es, G "ecapa.chunk30.npy") > 1e-2);
	CHECK(rel_err(&es, G "ecapa.nocmn.npy") > 1e-2);
	vpa_embset_release(&es);
}

static void test_set_metadata_and_threads(void)
{
	struct vpa_embset a, b;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(set_from(G "ecapa.onnx", NULL, 0, 1, &a, &err) == 0);
	CHECK(set_from(G "ecapa.onnx", NULL, 0, 3, &b, &err) == 0);
	CHECK(a.n == b.n && a.d == b.d);
	CHECK(a.n == 6 && !memcmp(a.x, b.x, a.n * a.d * sizeof(double)));
	CHECK(a.n_spk == 3);
	CHECK_STR(a.utt[0], "u1");
	CHECK_STR(a.spk_id[a.spk[2]], "s2");
	CHECK(a.gender && a.gender[vpa_embset_find_spk(&a, "s2")] == 'f');
	CHECK(a.gender && a.gender[vpa_embset_find_spk(&a, "s1")] == 'm');
	CHECK(a.dur != NULL);
	if (a.dur) {
		CHECK_NEAR(a.dur[0], 1.30, 1e-9);
		CHECK_NEAR(a.dur[5], 0.25, 1e-9);
	}
	vpa_embset_release(&a);
	vpa_embset_release(&b);
}

static void test_fv_archive_roundtrip(void)
{
	float v[3] = {1.5f, -2.25f, 3e-8f};
	char path[] = "/tmp/vpa_embed_fvXXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	vpa_ark_write_fvec(f, "a", v, 3, 0);
	vpa_ark_write_fvec(f, "b", v, 3, 1);
	fclose(f);
	struct vpa_kaldi_ark ark;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_kaldi_ark_init(&ark);
	int rc = vpa_kaldi_read(path, VPA_KALDI_VECTORS, &ark, &err);
	if (rc)
		printf("#   %s\n", err.msg);
	CHECK(rc == 0);
	CHECK(ark.n == 2);
	if (ark.n == 2) {
		CHECK_STR(ark.e[0].key, "a");
		CHECK(ark.e[0].cols == 3 && ark.e[1].cols == 3);
		for (int k = 0; k < 3; k++) {
			CHECK(ark.data[ark.e[0].off + k] == (double)v[k]);
			CHECK((float)ark.data[ark.e[1].off + k] == v[k]); /* %.9g: exact for float */
		}
	}
	vpa_kaldi_ark_release(&ark);
	unlink(path);
}

static void check_new_error(const char *model, const char *name, const char *value,
			    const char *output, const char *want)
{
	struct vpa_embed_opts o;
	struct vpa_embedder *e = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embed_opts_init(&o, VPA_FEAT_FBANK);
	if (name)
		CHECK(vpa_embed_opts_set(&o, name, value, &err) == 0);
	o.output = output;
	CHECK(vpa_embedder_new(model, &o, &e, &err) == VPA_EINPUT);
	CHECK(e == NULL);
	CHECK_STR(err.msg, want);
}

static void test_errors(void)
{
	/* fbank default: 23 mel bins against the model's 20 */
	check_new_error(G "ecapa.onnx", NULL, NULL, NULL,
			G "ecapa.onnx: input 'feats' (1, time, 20) wants 20 features per frame "
			  "(--layout btf), the front-end gives 23 (fbank --num-mel-bins=23)");
	check_new_error(G "ecapa.onnx", "num-mel-bins", "20", "nope",
			G "ecapa.onnx: no value named 'nope' in the graph (graph outputs: emb) "
			  "(nearest: 'emb', 'feats', '/Sub_output_0')");
	/* MFCC: 13 cepstra (C0 replaced by the energy) */
	{
		struct vpa_embed_opts o;
		struct vpa_embedder *e = NULL;
		struct vpa_err err;
		vpa_err_init(&err);
		vpa_embed_opts_init(&o, VPA_FEAT_MFCC);
		CHECK(vpa_embedder_new(G "ecapa.onnx", &o, &e, &err) == VPA_EINPUT);
		CHECK_STR(err.msg, G "ecapa.onnx: input 'feats' (1, time, 20) wants 20 features per "
				     "frame (--layout btf), the front-end gives 13 (mfcc --num-ceps=13 "
				     "and --use-energy)");
	}
	struct vpa_embed_opts o;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embed_opts_init(&o, VPA_FEAT_FBANK);
	CHECK(vpa_embed_opts_set(&o, "chunk", "-3", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "--chunk must be a frame count in [0, 100000000] (0: the whole "
			   "utterance), got '-3'");
	vpa_err_init(&err);
	CHECK(vpa_embed_opts_set(&o, "layout", "tbf", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "--layout must be auto, btf or bft, got 'tbf'");
	vpa_err_init(&err);
	CHECK(vpa_embed_opts_set(&o, "num-ceps", "3", &err) != 0); /* fbank */
	CHECK_STR(err.msg, "unknown option '--num-ceps'");
	vpa_err_init(&err);
	/* no utt2spk */
	struct vpa_embset es;
	vpa_err_init(&err);
	CHECK(vpa_embed_opts_set(&o, "num-mel-bins", "20", &err) == 0);
	CHECK(vpa_embset_from_audio(G "data/wav.scp", G "ecapa.onnx", &o, &es, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, G "data/wav.scp: no utt2spk: the speakers of the utterances are needed");
	CHECK(es.n == 0);
}

int main(void)
{
	RUN(test_ecapa_whole);
	RUN(test_ecapa_chunk_wespeaker);
	RUN(test_ecapa_no_cmn);
	RUN(test_layout_bft);
	RUN(test_cases_differ);
	RUN(test_set_metadata_and_threads);
	RUN(test_fv_archive_roundtrip);
	RUN(test_errors);
	return DONE();
}
