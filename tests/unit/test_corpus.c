/*
 * tests/unit/test_corpus.c - formats/corpus.h: the Brown reader on hand-made
 * documents (tokens, tags, sentences, documents, errors with their place),
 * Brown tag bases, plain-text tokenisation rules, vocabularies (order, ties,
 * <unk>, limits), and the real corpus when data/brown is present (skipped,
 * and said so, when it is not: never counted as passed).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/corpus.h"
#include "harness.h"

static const char BROWN_DOC[] =
	"\n\n\tThe/at Fulton/np-tl County/nn-tl said/vbd ./.\n\n\n"
	"\tIt's/pps+bez 1-1/2/cd miles/nns ''/'' ./.\r\n"
	"   \t  \n"
	"\tHe/pps ran/vbd\n";

static void test_brown_basic(void)
{
	struct vpa_corpus c;
	struct vpa_err err;
	vpa_corpus_init(&c);
	vpa_err_init(&err);
	CHECK(vpa_corpus_add_brown(&c, "data/x/ca01", BROWN_DOC, strlen(BROWN_DOC), NULL, &err) == 0);
	CHECK(c.tagged == 1);
	CHECK(c.n_doc == 1);
	CHECK_STR(c.doc_name[0], "ca01");
	CHECK(c.n_sent == 3);
	CHECK(c.n_tok == 12);
	CHECK(c.sent_off[0] == 0 && c.sent_off[1] == 5 && c.sent_off[2] == 10 && c.sent_off[3] == 12);
	CHECK(c.doc_sent[0] == 0 && c.doc_sent[1] == 3);
	CHECK(c.sent_doc[2] == 0);
	CHECK_STR(c.word[1], "Fulton");
	CHECK_STR(c.tag[1], "np-tl");
	CHECK_STR(c.word[5], "It's");
	CHECK_STR(c.tag[5], "pps+bez");
	CHECK_STR(c.word[6], "1-1/2"); /* split at the last '/' */
	CHECK_STR(c.tag[6], "cd");
	CHECK_STR(c.word[8], "''");
	CHECK_STR(c.tag[9], "."); /* CR stripped */
	CHECK_STR(c.word[11], "ran");

	/* a second document, lowercased */
	struct vpa_corpus_opts o;
	vpa_corpus_opts_init(&o);
	o.lower = 1;
	CHECK(vpa_corpus_add_brown(&c, "cb02", "\tA/at Big/jj-tl DOG/nn\n", 22, &o, &err) == 0);
	CHECK(c.n_doc == 2 && c.n_sent == 4 && c.n_tok == 15);
	CHECK_STR(c.word[13], "big");
	CHECK_STR(c.tag[13], "jj-tl"); /* tags are not lowercased or changed */
	CHECK(c.sent_doc[3] == 1);
	CHECK(c.doc_sent[2] == 4);
	/* an empty document is kept, with no sentence */
	CHECK(vpa_corpus_add_brown(&c, "cc03", "\n\n", 2, NULL, &err) == 0);
	CHECK(c.n_doc == 3 && c.doc_sent[2] == 4 && c.doc_sent[3] == 4);
	vpa_corpus_release(&c);
}

static void test_brown_errors(void)
{
	struct {
		const char *text, *msg;
	} cases[] = {
		{"\tThe/at dog\n", "f:1:9: expected word/tag, got 'dog'"},
		{"\tok/jj\n\tThe/at /nn\n", "f:2:9: expected word/tag, got '/nn'"},
		{"a/at b/\n", "f:1:6: expected word/tag, got 'b/'"},
		{"a/at\n\nb/x c\0d/e\n", "f:3:6: NUL byte"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vpa_corpus c;
		struct vpa_err err;
		vpa_corpus_init(&c);
		vpa_err_init(&err);
		size_t len = strlen(cases[i].text);
		if (i == 3)
			len = 17;
		CHECK(vpa_corpus_add_brown(&c, "ok", "\tx/nn y/vb\n", 11, NULL, &err) == 0);
		CHECK(vpa_corpus_add_brown(&c, "f", cases[i].text, len, NULL, &err) == VPA_EINPUT);
		CHECK_STR(err.msg, cases[i].msg);
		/* rolled back: the first document only */
		CHECK(c.n_doc == 1 && c.n_sent == 1 && c.n_tok == 2);
		CHECK(c.sent_off[1] == 2 && c.doc_sent[1] == 1);
		vpa_corpus_release(&c);
	}
	/* mixing plain text and Brown */
	struct vpa_corpus c;
	struct vpa_err err;
	vpa_corpus_init(&c);
	vpa_err_init(&err);
	CHECK(vpa_corpus_add_text(&c, "t.txt", "hello world\n", 12, NULL, &err) == 0);
	CHECK(vpa_corpus_add_brown(&c, "ca01", "a/at\n", 5, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "ca01: cannot mix Brown (tagged) text with a corpus of plain text");
	CHECK(c.tagged == 0 && c.n_tok == 2);
	vpa_corpus_release(&c);
}

static void test_tag_base(void)
{
	const char *cases[][2] = {
		{"np-tl", "np"},    {"fw-nn-tl", "nn"}, {"pps+bez", "pps"}, {"nn$-hl", "nn$"},
		{"md*", "md"},      {".-hl", "."},      {"*", "*"},         {"nn-tl-hl", "nn"},
		{"NN-TL", "nn"},    {"vb+ppo", "vb"},   {"fw-in+at-tl", "in"}, {"bez*-nc", "bez"},
		{"--", "--"},       {"---hl", "--"},    {"fw-", "fw-"},     {"jj", "jj"},
		{"(-hl", "("},      {"vbn-tl-nc", "vbn"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[32];
		vpa_brown_tag_base(cases[i][0], out, sizeof(out));
		CHECK_STR(out, cases[i][1]);
	}
	char small[3];
	vpa_brown_tag_base("nns-tl", small, sizeof(small));
	CHECK_STR(small, "nn"); /* truncated to cap */
}

static void test_tokenize(void)
{
	const char *cases[][2] = {
		{"Hello, world!", "Hello , world !"},
		{"It costs 3.50 or 1,000 dollars.", "It costs 3.50 or 1,000 dollars ."},
		{"don't stop well-known a/b", "don't stop well-known a/b"},
		{"(yes) [no] {x} \"q\"", "( yes ) [ no ] { x } \" q \""},
		{"end. 3. .5 5,", "end . 3 . . 5 5 ,"},
		{"  \t  ", ""},
		{"a;b:c?d", "a ; b : c ? d"},
		{"caf\xc3\xa9 ok", "caf\xc3\xa9 ok"},
		{"...", ". . ."},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vpa_buf b;
		vpa_buf_init(&b);
		vpa_tokenize(cases[i][0], strlen(cases[i][0]), 0, &b);
		CHECK_STR(b.len ? b.data : "", cases[i][1]);
		vpa_buf_release(&b);
	}
	struct vpa_buf b;
	vpa_buf_init(&b);
	CHECK(vpa_tokenize("There ARE many", 14, 1, &b) == 3);
	CHECK_STR(b.data, "there are many");
	vpa_buf_release(&b);
}

static void test_text_corpus(void)
{
	const char *text = "First doc, first line.\nSecond line\n\n\n  \nNew doc here\r\n"
			   "last line without newline";
	struct vpa_corpus c;
	struct vpa_err err;
	vpa_corpus_init(&c);
	vpa_err_init(&err);
	CHECK(vpa_corpus_add_text(&c, "t.txt", text, strlen(text), NULL, &err) == 0);
	CHECK(c.tagged == 0 && c.tag == NULL);
	CHECK(c.n_doc == 2);
	CHECK_STR(c.doc_name[0], "t.txt#1");
	CHECK_STR(c.doc_name[1], "t.txt#2");
	CHECK(c.n_sent == 4);
	CHECK(c.doc_sent[1] == 2 && c.doc_sent[2] == 4);
	CHECK(c.sent_off[1] == 6); /* First doc , first line . */
	CHECK(c.n_tok == 6 + 2 + 3 + 4);
	CHECK_STR(c.word[1], "doc");
	CHECK_STR(c.word[2], ",");
	CHECK_STR(c.word[10], "here");
	CHECK(c.sent_doc[3] == 1);
	CHECK(vpa_corpus_add_text(&c, "u.txt", "ok\nbad\0x\n", 9, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "u.txt:2:4: NUL byte");
	CHECK(c.n_doc == 2 && c.n_sent == 4 && c.n_tok == 15);
	vpa_corpus_release(&c);
}

static void test_vocab(void)
{
	const char *text = "b a c a\nb a d\ne e\n";
	struct vpa_corpus c;
	struct vpa_err err;
	struct vpa_vocab v;
	vpa_corpus_init(&c);
	vpa_err_init(&err);
	CHECK(vpa_corpus_add_text(&c, "t", text, strlen(text), NULL, &err) == 0);
	vpa_vocab_init(&v);
	vpa_vocab_build(&v, &c, NULL, 0, 0, 1);
	/* counts a:3 b:2 e:2 c:1 d:1; ties by byte order */
	CHECK(v.n == 6);
	CHECK_STR(v.words[0], "<unk>");
	CHECK_STR(v.words[1], "a");
	CHECK_STR(v.words[2], "b");
	CHECK_STR(v.words[3], "e");
	CHECK_STR(v.words[4], "c");
	CHECK_STR(v.words[5], "d");
	CHECK(v.count[1] == 3 && v.count[3] == 2 && v.count[5] == 1 && v.count[0] == 0);
	CHECK(vpa_vocab_id(&v, "e") == 3);
	CHECK(vpa_vocab_id(&v, "zz") == VPA_VOCAB_UNK);
	/* the K most frequent */
	vpa_vocab_build(&v, &c, NULL, 0, 2, 1);
	CHECK(v.n == 3 && vpa_vocab_id(&v, "b") == 2 && vpa_vocab_id(&v, "e") == 0);
	/* min_count */
	vpa_vocab_build(&v, &c, NULL, 0, 0, 2);
	CHECK(v.n == 4);
	/* a subset of sentences: sentence 2 only */
	size_t s2[] = {2};
	vpa_vocab_build(&v, &c, s2, 1, 0, 1);
	CHECK(v.n == 2 && vpa_vocab_id(&v, "e") == 1 && v.count[1] == 2);
	/* adding words, growth of the hash past many words */
	CHECK(vpa_vocab_add(&v, "<unk>") == VPA_VOCAB_UNK);
	CHECK(vpa_vocab_add(&v, "e") == 1);
	char w[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(w, sizeof(w), "w%d", i);
		CHECK(vpa_vocab_add(&v, w) == (uint32_t)(i + 2));
	}
	int bad = 0;
	for (int i = 0; i < 5000; i++) {
		snprintf(w, sizeof(w), "w%d", i);
		bad += vpa_vocab_id(&v, w) != (uint32_t)(i + 2);
	}
	CHECK(bad == 0 && v.n == 5002);
	vpa_vocab_release(&v);
	vpa_corpus_release(&c);
}

static void test_load_errors(void)
{
	struct vpa_corpus c;
	struct vpa_err err;
	vpa_corpus_init(&c);
	vpa_err_init(&err);
	CHECK(vpa_corpus_load_brown(&c, "/nonexistent/brown", 0, NULL, &err) == VPA_EIO);
	CHECK(strstr(err.msg, "cannot read the Brown corpus folder '/nonexistent/brown'") != NULL);
	vpa_err_init(&err);
	CHECK(vpa_corpus_load_brown(&c, "tests/unit", 0, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "'tests/unit' holds no Brown corpus file (ca01 .. cr09): run `sh .ci/deps`?");
	vpa_err_init(&err);
	CHECK(vpa_corpus_load_text(&c, "/nonexistent.txt", NULL, &err) == VPA_EIO);
	vpa_corpus_release(&c);
}

/* The real corpus (data/brown from `sh .ci/deps`): 500 documents, about 1.16
 * million tokens (NLTK's count for the same files is 1,161,192). */
static void test_brown_real(void)
{
	struct vpa_corpus c;
	struct vpa_err err;
	vpa_corpus_init(&c);
	vpa_err_init(&err);
	double t0 = vpa_now();
	int rc = vpa_corpus_load_brown(&c, "data/brown", 0, NULL, &err);
	double dt = vpa_now() - t0;
	CHECK(rc == 0);
	if (rc) {
		printf("#   %s\n", err.msg);
		vpa_corpus_release(&c);
		return;
	}
	CHECK(c.n_doc == 500);
	CHECK_STR(c.doc_name[0], "ca01");
	CHECK_STR(c.doc_name[499], "cr09");
	CHECK(c.n_tok == 1161192);
	CHECK(c.n_sent == 57340);
	CHECK_STR(c.word[0], "The");
	CHECK_STR(c.tag[0], "at");
	printf("#   brown: %zu documents, %zu sentences, %zu tokens, loaded in %.2f s\n", c.n_doc,
	       c.n_sent, c.n_tok, dt);
	struct vpa_vocab v;
	vpa_vocab_init(&v);
	vpa_vocab_build(&v, &c, NULL, 0, 10000, 1);
	CHECK(v.n == 10001);
	CHECK_STR(v.words[1], "the");
	vpa_vocab_release(&v);
	/* max_docs */
	vpa_corpus_release(&c);
	vpa_corpus_init(&c);
	CHECK(vpa_corpus_load_brown(&c, "data/brown", 3, NULL, &err) == 0);
	CHECK(c.n_doc == 3);
	CHECK_STR(c.doc_name[2], "ca03");
	vpa_corpus_release(&c);
}

int main(void)
{
	RUN(test_brown_basic);
	RUN(test_brown_errors);
	RUN(test_tag_base);
	RUN(test_tokenize);
	RUN(test_text_corpus);
	RUN(test_vocab);
	RUN(test_load_errors);
	struct stat st;
	if (stat("data/brown/ca01", &st) == 0)
		RUN(test_brown_real);
	else
		printf("# skip - test_brown_real: data/brown is missing (run `sh .ci/deps`); "
		       "not counted as passed\n");
	return DONE();
}
