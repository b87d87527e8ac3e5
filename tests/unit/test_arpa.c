/*
 * tests/unit/test_arpa.c - the ARPA reader/scorer against log-probabilities
 * computed by hand on tests/e2e/data/lm/small.arpa, its error lines, the
 * writer round trip, and the Kneser-Ney trainer against a hand computation
 * (every number below is worked out in the comment beside it).
 */
#include "learn/ngram.h"
#include "harness.h"

#include <stdlib.h>

#define SMALL "tests/e2e/data/lm/small.arpa"

static struct vpa_arpa *load_small(void)
{
	struct vpa_err err;
	struct vpa_arpa *m = NULL;
	vpa_err_init(&err);
	if (vpa_arpa_load(SMALL, &m, &err))
		printf("#   %s\n", err.msg);
	return m;
}

static double sent(const struct vpa_arpa *m, const char *s, size_t *oov)
{
	char buf[256];
	const char *w[32];
	size_t n = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok(buf, " "); t; t = strtok(NULL, " "))
		w[n++] = t;
	return vpa_arpa_sentence(m, w, n, oov);
}

static void test_small_by_hand(void)
{
	struct vpa_arpa *m = load_small();
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(vpa_arpa_order(m) == 3);
	CHECK(vpa_arpa_count(m, 1) == 5 && vpa_arpa_count(m, 2) == 4 && vpa_arpa_count(m, 3) == 2);
	size_t oov = 9;
	/* a|<s> = -0.4 ("<s> a"); b|<s> a = -0.2 ("<s> a b"); </s>|a b = -0.25 */
	CHECK_NEAR(sent(m, "a b", &oov), -0.85, 1e-12);
	CHECK(oov == 0);
	/* b|<s>: bow(<s>) -0.5 + p(b) -0.8 = -1.3; a|<s> b: no "<s> b" so bow 0, "b a" -0.7;
	 * </s>|b a: "b a" has no bow, no "a </s>": bow(a) -0.3 + p(</s>) -1.2 = -1.5 */
	CHECK_NEAR(sent(m, "b a", NULL), -3.5, 1e-12);
	/* a b a: -0.4 -0.2, then a|a b: bow("a b") -0.15 + "b a" -0.7; then </s>|b a -1.5 */
	CHECK_NEAR(sent(m, "a b a", NULL), -2.95, 1e-12);
	/* x is unknown -> <unk>: a|<s> -0.4; <unk>|<s> a: bow("<s> a") -0.1 + bow(a) -0.3
	 * + p(<unk>) -1.6 = -2.0; </s>|a <unk>: no bows, p(</s>) -1.2 */
	CHECK_NEAR(sent(m, "a x", NULL), -3.6, 1e-12);
	/* the empty sentence: </s>|<s>: bow(<s>) -0.5 + -1.2 */
	CHECK_NEAR(sent(m, "", NULL), -1.7, 1e-12);
	/* the context is truncated to order-1 words */
	int32_t a = vpa_arpa_word(m, "a"), b = vpa_arpa_word(m, "b"), s = vpa_arpa_bos(m);
	int32_t ctx[4] = {b, b, s, a};
	CHECK_NEAR(vpa_arpa_logprob(m, ctx, 4, b), -0.2, 1e-12);
	CHECK(vpa_arpa_word(m, "zz") == VPA_ARPA_NONE);
	CHECK(vpa_arpa_word_or_unk(m, "zz") == vpa_arpa_unk(m));
	vpa_arpa_free(m);
}

static void test_oov_without_unk(void)
{
	const char *txt = "\\data\\\nngram 1=4\nngram 2=1\n\n\\1-grams:\n-99 <s> -0.5\n"
			  "-0.6 a -0.3\n-0.8 b\n-1.2 </s>\n\n\\2-grams:\n-0.5 b </s>\n\n\\end\\\n";
	struct vpa_err err;
	struct vpa_arpa *m;
	vpa_err_init(&err);
	CHECK(vpa_arpa_parse("x.arpa", txt, strlen(txt), &m, &err) == 0);
	if (!m)
		return;
	size_t oov = 0;
	/* a|<s>: -0.5 - 0.6; x skipped (OOV); b|a x: no n-gram has x: p(b) -0.8;
	 * </s>|x b: "b </s>" -0.5 */
	CHECK_NEAR(sent(m, "a x b", &oov), -2.4, 1e-12);
	CHECK(oov == 1);
	vpa_arpa_free(m);
}

static void test_blank_first_line_crlf(void)
{
	const char *txt = "\r\n\r\n\\data\\\r\nngram 1=3\r\n\r\n\\1-grams:\r\n-1\t<s>\r\n"
			  "-0.5\ta\r\n-0.2\t</s>\r\n\r\n\\end\\\r\n";
	struct vpa_err err;
	struct vpa_arpa *m;
	vpa_err_init(&err);
	CHECK(vpa_arpa_parse("x.arpa", txt, strlen(txt), &m, &err) == 0);
	if (m) {
		CHECK_NEAR(sent(m, "a a", NULL), -1.2, 1e-12);
		vpa_arpa_free(m);
	} else {
		printf("#   %s\n", err.msg);
	}
}

static void bad_len(const char *txt, size_t len, const char *want)
{
	struct vpa_err err;
	struct vpa_arpa *m = (struct vpa_arpa *)1;
	vpa_err_init(&err);
	int rc = vpa_arpa_parse("m.arpa", txt, len, &m, &err);
	CHECK(rc == VPA_EINPUT);
	CHECK(m == NULL);
	CHECK_STR(err.msg, want);
}

static void bad(const char *txt, const char *want) { bad_len(txt, strlen(txt), want); }

static void test_errors(void)
{
	bad("", "m.arpa: empty file: expected '\\data\\'");
	bad("hello\n", "m.arpa:1: expected '\\data\\', found 'hello'");
	bad("\\data\\\nngram 2=1\n", "m.arpa:2: expected 'ngram 1=COUNT' (orders in sequence from 1)");
	bad("\\data\\\nngram 1=1\n\\1-grams:\n-1 a\n", "m.arpa:4: unexpected end of file: "
						       "expected '\\end\\'");
	bad("\\data\\\nngram 1=2\n\\1-grams:\n-1 a\n\n\\end\\\n",
	    "m.arpa:5: the header declares 2 1-grams (line 2), found 1");
	bad("\\data\\\nngram 1=1\n\\1-grams:\nx a\n\\end\\\n",
	    "m.arpa:4: expected a log10 probability, got 'x'");
	bad("\\data\\\nngram 1=1\n\\1-grams:\n0.5 a\n\\end\\\n",
	    "m.arpa:4: log10 probability '0.5' is positive");
	bad("\\data\\\nngram 1=1\n\\1-grams:\n-1e308 a\n\\end\\\n",
	    "m.arpa:4: log10 probability '-1e308' is below -1000");
	bad("\\data\\\nngram 1=1\nngram 2=1\n\\1-grams:\n-1 a 1001\n\n\\2-grams:\n-1 a a\n\\end\\\n",
	    "m.arpa:5: log10 back-off weight '1001' is outside [-1000, 1000]");
	bad("\\data\\\nngram 1=1\n\\1-grams:\nnan a\n\\end\\\n",
	    "m.arpa:4: expected a log10 probability, got 'nan'");
	bad("\\data\\\nngram 1=1\n\\1-grams:\n-1 a -0.5\n\\end\\\n",
	    "m.arpa:4: expected 'logprob' then 1 words (no back-off at the highest order)");
	bad("\\data\\\nngram 1=1\nngram 2=1\n\\1-grams:\n-1 a x\n\n\\2-grams:\n-1 a b\n\\end\\\n",
	    "m.arpa:5: expected a log10 back-off weight, got 'x'");
	bad("\\data\\\nngram 1=1\nngram 2=1\n\\1-grams:\n-1 a\n\n\\2-grams:\n-1 a b\n\\end\\\n",
	    "m.arpa:8: word 'b' is not among the unigrams");
	bad("\\data\\\nngram 1=2\n\\1-grams:\n-1 a\n-1 a\n\\end\\\n",
	    "m.arpa:5: duplicate unigram 'a'");
	bad("\\data\\\nngram 1=1\nngram 2=2\n\\1-grams:\n-1 a\n\n\\2-grams:\n-1 a a\n-2 a a\n"
	    "\\end\\\n", "m.arpa:9: duplicate 2-gram");
	bad("\\data\\\nngram 1=1\nngram 2=1\n\\1-grams:\n-1 a\n\n\\3-grams:\n",
	    "m.arpa:7: expected '\\2-grams:', found '\\3-grams:'");
	bad("\\data\\\nngram 1=1\n\\1-grams:\n-1 a\n\\end\\\nmore\n",
	    "m.arpa:6: text after '\\end\\': 'more'");
	static const char nul[] = "\\data\\\nngram 1=1\n\\1-grams:\n-1 a\n\\end\\\0\n";
	bad_len(nul, sizeof(nul) - 1, "m.arpa:5: NUL byte in an ARPA file");
	bad("\\data\\\nngram 1=0\n\\1-grams:\n\\end\\\n",
	    "m.arpa:3: the header declares no unigrams ('ngram 1=0')");
	struct vpa_err err;
	struct vpa_arpa *m;
	vpa_err_init(&err);
	CHECK(vpa_arpa_load("/nonexistent/x.arpa", &m, &err) == VPA_EIO);
}

static void test_write_round_trip(void)
{
	struct vpa_arpa *m = load_small(), *m2 = NULL;
	if (!m)
		return;
	struct vpa_buf b;
	struct vpa_err err;
	vpa_buf_init(&b);
	vpa_err_init(&err);
	vpa_arpa_write(m, &b);
	CHECK(vpa_arpa_parse("w.arpa", b.data, b.len, &m2, &err) == 0);
	if (m2) {
		const char *ss[] = {"a b", "b a", "a b a", "a x", "", "b b b a"};
		for (size_t i = 0; i < 6; i++)
			CHECK_NEAR(sent(m2, ss[i], NULL), sent(m, ss[i], NULL), 1e-12);
	}
	vpa_buf_release(&b);
	vpa_arpa_free(m);
	vpa_arpa_free(m2);
}

/* Bigram KN on <s> a b </s>, <s> a c </s>, <s> b </s> (see formats/arpa.h):
 * continuation counts a 1, b 2, c 1, </s> 2 -> n1 = 2, n2 = 2, D1 = 1/3, A = 6,
 * gamma() = (1/3) 4/6 = 2/9; p(a) = (1 - 1/3)/6 + (2/9)/4 = 1/6, p(b) = 1/3.
 * Bigrams (raw): <s>a 2, ab 1, ac 1, b</s> 2, c</s> 1, <s>b 1 -> n1 4, n2 2, D2 = 1/2.
 * p(b|a) = (1-1/2)/2 + (1/2 * 2/2) p(b) = 1/4 + 1/6 = 5/12; p(a|a) = 1/2 * 1/6 = 1/12;
 * p(a|<s>) = (2-1/2)/3 + (1/2 * 2/3) 1/6 = 5/9. */
static void test_kn_by_hand(void)
{
	const char *vocab[] = {"a", "b", "c"};
	uint32_t s1[] = {0, 1}, s2[] = {0, 2}, s3[] = {1};
	const uint32_t *ss[] = {s1, s2, s3};
	size_t lens[] = {2, 2, 1};
	struct vpa_err err;
	struct vpa_arpa *m;
	vpa_err_init(&err);
	CHECK(vpa_ngram_train_kn(ss, lens, 3, vocab, 3, 2, &m, &err) == 0);
	if (!m)
		return;
	int32_t a = vpa_arpa_word(m, "a"), b = vpa_arpa_word(m, "b"), bos = vpa_arpa_bos(m);
	CHECK_NEAR(vpa_arpa_logprob(m, NULL, 0, a), log10(1.0 / 6), 1e-12);
	CHECK_NEAR(vpa_arpa_logprob(m, NULL, 0, b), log10(1.0 / 3), 1e-12);
	CHECK_NEAR(vpa_arpa_logprob(m, &a, 1, b), log10(5.0 / 12), 1e-12);
	CHECK_NEAR(vpa_arpa_logprob(m, &a, 1, a), log10(1.0 / 12), 1e-12);
	CHECK_NEAR(vpa_arpa_logprob(m, &bos, 1, a), log10(5.0 / 9), 1e-12);
	vpa_arpa_free(m);
}

/* Trigram KN on a pseudo-random corpus: every conditional distribution sums to 1. */
static void test_kn_sums_to_one(void)
{
	const char *vocab[] = {"<unk>", "w1", "w2", "w3", "w4", "w5", "w6"};
	struct vpa_rng r;
	vpa_rng_seed(&r, 7);
	uint32_t buf[40][12];
	const uint32_t *ss[40];
	size_t lens[40];
	for (size_t s = 0; s < 40; s++) {
		lens[s] = 1 + vpa_rng_below(&r, 11);
		for (size_t i = 0; i < lens[s]; i++)
			buf[s][i] = (uint32_t)(1 + (vpa_rng_below(&r, 3) + (i ? buf[s][i - 1] : 0)) % 6);
		ss[s] = buf[s];
	}
	struct vpa_err err;
	struct vpa_arpa *m;
	vpa_err_init(&err);
	CHECK(vpa_ngram_train_kn(ss, lens, 40, vocab, 7, 3, &m, &err) == 0);
	if (!m)
		return;
	size_t nw = vpa_arpa_vocab_size(m);
	int32_t bos = vpa_arpa_bos(m);
	double worst = 0;
	for (int32_t u = 0; u < (int32_t)nw; u++)
		for (int32_t v = 0; v < (int32_t)nw; v++) {
			if (v == bos)
				continue;
			int32_t ctx[2] = {u, v};
			double sum = 0;
			for (int32_t w = 0; w < (int32_t)nw; w++)
				if (w != bos)
					sum += pow(10, vpa_arpa_logprob(m, ctx, 2, w));
			if (fabs(sum - 1) > worst)
				worst = fabs(sum - 1);
		}
	CHECK(worst < 1e-9);
	/* <unk> is never seen but has a non-zero probability */
	CHECK(vpa_arpa_logprob(m, NULL, 0, vpa_arpa_word(m, "<unk>")) > -10);
	vpa_arpa_free(m);
	const char *badv[] = {"a", "<s>"};
	vpa_err_init(&err);
	CHECK(vpa_ngram_train_kn(ss, lens, 0, badv, 2, 3, &m, &err) == VPA_EINPUT);
}

int main(void)
{
	RUN(test_small_by_hand);
	RUN(test_oov_without_unk);
	RUN(test_blank_first_line_crlf);
	RUN(test_errors);
	RUN(test_write_round_trip);
	RUN(test_kn_by_hand);
	RUN(test_kn_sums_to_one);
	return DONE();
}
