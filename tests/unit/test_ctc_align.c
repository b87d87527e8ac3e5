/*
 * tests/unit/test_ctc_align.c - CTC forced alignment (asr/ctc_align.c):
 * the Viterbi path against an exhaustive search over every frame labelling
 * (the best score of any labelling that collapses to the tokens, computed
 * here without dynamic programming), a hand-computed case, the spelling of
 * transcripts, the map to another frame rate, and a whole utterance through
 * the PyTorch-exported model of tests/golden/ctc (its labels collapse to the
 * transcript).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "asr/ctc_align.h"
#include "base/dist.h"
#include "harness.h"

/* ---- exhaustive search ------------------------------------------------------ */

/* labelling p (T frames) collapses (repeats merged, blanks dropped) to lab? */
static int collapses_to(const uint32_t *p, size_t T, uint32_t blank, const uint32_t *lab, size_t L)
{
	size_t k = 0;
	uint32_t prev = UINT32_MAX;
	for (size_t t = 0; t < T; t++) {
		if (p[t] != prev && p[t] != blank) {
			if (k == L || p[t] != lab[k])
				return 0;
			k++;
		}
		prev = p[t];
	}
	return k == L;
}

static double logp(const float *x, size_t V, size_t t, uint32_t v)
{
	const float *r = x + t * V;
	double mx = r[0], z = 0;
	for (size_t u = 1; u < V; u++)
		if (r[u] > mx)
			mx = r[u];
	for (size_t u = 0; u < V; u++)
		z += exp((double)r[u] - mx);
	return (double)r[v] - mx - log(z);
}

/* the best score over all V^T labellings that collapse to lab (-inf: none) */
static double brute(const float *x, size_t T, size_t V, uint32_t blank, const uint32_t *lab,
		    size_t L)
{
	uint32_t p[12] = {0};
	double best = -INFINITY;
	for (;;) {
		if (collapses_to(p, T, blank, lab, L)) {
			double s = 0;
			for (size_t t = 0; t < T; t++)
				s += logp(x, V, t, p[t]);
			if (s > best)
				best = s;
		}
		size_t t = 0;
		while (t < T && ++p[t] == V)
			p[t++] = 0;
		if (t == T)
			break;
	}
	return best;
}

static uint64_t rs = 88172645463325252ull;
static double urand(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (double)(rs >> 11) / 9007199254740992.0;
}

static void test_viterbi_vs_exhaustive(void)
{
	int agree = 0, trials = 0, feasible = 0;
	for (int trial = 0; trial < 300; trial++) {
		size_t T = 1 + (size_t)(urand() * 7), V = 3 + (size_t)(urand() * 2);
		size_t L = 1 + (size_t)(urand() * 4);
		uint32_t blank = (uint32_t)(urand() * (double)V), lab[8];
		for (size_t i = 0; i < L; i++) {
			do
				lab[i] = (uint32_t)(urand() * (double)V);
			while (lab[i] == blank);
			if (urand() < 0.3 && i) /* repeats need a blank between */
				lab[i] = lab[i - 1];
		}
		float x[12 * 5];
		for (size_t i = 0; i < T * V; i++)
			x[i] = (float)(4 * urand() - 2);
		uint32_t path[12];
		double score, want = brute(x, T, V, blank, lab, L);
		size_t need;
		int rc = vpa_ctc_viterbi(x, T, V, blank, lab, L, path, &score, &need);
		trials++;
		if (isinf(want)) {
			agree += rc == -1 && T < need;
			continue;
		}
		feasible++;
		double s = 0;
		for (size_t t = 0; t < T; t++)
			s += logp(x, V, t, path[t]);
		agree += rc == 0 && fabs(score - want) < 1e-9 && fabs(s - want) < 1e-9 &&
			 collapses_to(path, T, blank, lab, L);
	}
	CHECK(agree == trials);
	CHECK(feasible > 100); /* the draw exercises both outcomes */
	CHECK(trials - feasible > 20);
}

/* by hand: 3 frames, tokens {blank 0, a 1, b 2}, target "ab".  Valid
 * labellings: aab, abb, _ab, a_b, ab_.  Probabilities per frame (rows):
 * (0.1 0.6 0.3), (0.5 0.2 0.3), (0.2 0.1 0.7): aab 0.6*0.2*0.7 = 0.084,
 * abb .6*.3*.7 = .126, _ab .1*.2*.7 = .014, a_b .6*.5*.7 = .21, ab_ .6*.3*.2 = .036:
 * a_b wins with log 0.21. */
static void test_viterbi_by_hand(void)
{
	float x[9] = {0.1f, 0.6f, 0.3f, 0.5f, 0.2f, 0.3f, 0.2f, 0.1f, 0.7f};
	for (int i = 0; i < 9; i++)
		x[i] = logf(x[i]);
	uint32_t lab[2] = {1, 2}, path[3];
	double score;
	size_t need;
	CHECK(vpa_ctc_viterbi(x, 3, 3, 0, lab, 2, path, &score, &need) == 0);
	CHECK(path[0] == 1 && path[1] == 0 && path[2] == 2);
	CHECK_NEAR(score, log(0.21), 1e-6);
	/* "aa" needs 3 frames (a blank between); 2 are too few */
	uint32_t aa[2] = {1, 1};
	CHECK(vpa_ctc_viterbi(x, 2, 3, 0, aa, 2, path, &score, &need) == -1);
	CHECK(need == 3);
	CHECK(vpa_ctc_viterbi(x, 3, 3, 0, aa, 2, path, &score, &need) == 0);
	CHECK(path[0] == 1 && path[1] == 0 && path[2] == 1);
}

static void test_frame_labels(void)
{
	/* model frames: _ a _ _ b _ (blank 0); a blank takes the token before it,
	 * the leading one the first token */
	uint32_t path[6] = {0, 1, 0, 0, 2, 0}, out[12];
	vpa_ctc_frame_labels(path, 6, 0, out, 6);
	uint32_t want6[6] = {1, 1, 1, 1, 2, 2};
	CHECK(!memcmp(out, want6, sizeof(want6)));
	/* twice the rate: every model frame twice */
	vpa_ctc_frame_labels(path, 6, 0, out, 12);
	uint32_t want12[12] = {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2};
	CHECK(!memcmp(out, want12, sizeof(want12)));
	/* half the rate: frames 0.5*2=1, 3, 5 -> a, _(a), _(b) */
	vpa_ctc_frame_labels(path, 6, 0, out, 3);
	CHECK(out[0] == 1 && out[1] == 1 && out[2] == 2);
}

static void test_tokenize(void)
{
	char *tok[] = {"<pad>", "|", "A", "B", "C", "'", "AB"};
	char *w[] = {"ABC", "CA'B"};
	uint32_t *ids;
	size_t L, bw, ba;
	CHECK(vpa_ctc_tokenize(w, 2, tok, 7, 0, "|", &ids, &L, &bw, &ba) == 0);
	/* | AB C | C A ' B |  (longest match: "AB" before "A") */
	uint32_t want[] = {1, 6, 4, 1, 4, 2, 5, 3, 1};
	CHECK(L == 9 && !memcmp(ids, want, sizeof(want)));
	free(ids);
	/* lower-case vocabulary: letters matched without case */
	char *low[] = {"<blank>", "a", "b", "c", " "};
	CHECK(vpa_ctc_tokenize(w, 1, low, 5, 0, "", &ids, &L, &bw, &ba) == 0);
	CHECK(L == 3 && ids[0] == 1 && ids[1] == 2 && ids[2] == 3);
	free(ids);
	/* SentencePiece: the mark starts each word */
	char *sp[] = {"<blk>", "\xe2\x96\x81" "AB", "\xe2\x96\x81", "C", "A", "B"};
	CHECK(vpa_ctc_tokenize(w, 2, sp, 6, 0, "\xe2\x96\x81", &ids, &L, &bw, &ba) == -1);
	CHECK(ids == NULL && bw == 1 && ba == 2); /* "'" of CA'B: no token */
	char *w2[] = {"ABC", "CAB"};
	CHECK(vpa_ctc_tokenize(w2, 2, sp, 6, 0, "\xe2\x96\x81", &ids, &L, &bw, &ba) == 0);
	uint32_t want_sp[] = {1, 3, 2, 3, 4, 5};
	CHECK(L == 6 && !memcmp(ids, want_sp, sizeof(want_sp)));
	free(ids);
	/* the blank never spells: "<pad>" as a word has no token */
	char *w3[] = {"<pad>"};
	CHECK(vpa_ctc_tokenize(w3, 1, tok, 7, 0, "|", &ids, &L, &bw, &ba) == -1 && bw == 0 && ba == 0);
}

/* a whole utterance through the golden PyTorch model (random weights): the
 * labels collapse to the transcript's tokens, and a too-short utterance and an
 * unknown character are one-line errors */
static void test_model(void)
{
	struct vpa_ctc_opts o;
	vpa_ctc_opts_init(&o);
	o.model = "tests/golden/ctc/small_ctc.onnx";
	o.tokens = "tests/golden/ctc/tokens.txt";
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_ctc *c = NULL;
	CHECK(vpa_ctc_new(&o, &c, &err) == 0);
	if (!c)
		return;
	struct vpa_wave w;
	vpa_wave_init(&w);
	CHECK(vpa_audio_read("tests/golden/ctc/data/u05.wav", -1, &w, &err) == 0);
	char *words[] = {"HELLO", "WORLD"};
	size_t T;
	float *x = NULL;
	CHECK(vpa_ctc_wave(c, "u05", &w, &x, &T, NULL, &err) == 0);
	size_t n = 2 * T + 1; /* a 10 ms front end's frames for a 20 ms model */
	uint32_t *out = malloc(n * sizeof(uint32_t));
	CHECK(vpa_ctc_align_wave(c, "u05", &w, words, 2, NULL, n, out, &err) == 0);
	/* tokens: | H E L L O | W O R L D |  -> the frame labels, repeats merged,
	 * read | H E L O | W O R L D | (LL merges: a blank between them took L) */
	uint32_t want[] = {1, 9, 6, 13, 16, 1, 24, 16, 19, 13, 5, 1};
	uint32_t got[32];
	size_t k = 0;
	for (size_t j = 0; j < n && k < 32; j++)
		if (k == 0 || got[k - 1] != out[j])
			got[k++] = out[j];
	CHECK(k == 12 && !memcmp(got, want, sizeof(want)));
	/* too short: 200 samples give no frame or too few */
	struct vpa_wave s = w;
	s.n = 4000;
	char *many[] = {"ABCDEFGHIJKLMNOPQRSTUVWXYZ"};
	CHECK(vpa_ctc_align_wave(c, "short", &s, many, 1, NULL, 20, out, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "utterance 'short': the model gives 11 frames but its transcript's 28 "
			      "tokens need at least 28") != NULL);
	vpa_err_init(&err);
	char *bad[] = {"NA\xc3\x8fVE"};
	struct vpa_loc where = {"text", 7, 0};
	CHECK(vpa_ctc_align_wave(c, "u05", &w, bad, 1, &where, n, out, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "text:7: utterance 'u05': the word 'NA\xc3\x8fVE' has '\xc3\x8f' (byte 2), "
			      "which no token of tests/golden/ctc/tokens.txt spells") != NULL);
	vpa_err_init(&err);
	CHECK(vpa_ctc_align_wave(c, "u05", &w, bad, 0, NULL, n, out, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "utterance 'u05' has no word in its transcript") != NULL);
	free(out);
	free(x);
	vpa_wave_release(&w);
	vpa_ctc_free(c);
}

int main(void)
{
	RUN(test_viterbi_vs_exhaustive);
	RUN(test_viterbi_by_hand);
	RUN(test_frame_labels);
	RUN(test_tokenize);
	RUN(test_model);
	return DONE();
}
