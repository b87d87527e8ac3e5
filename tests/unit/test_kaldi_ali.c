/* tests/unit/test_kaldi_ali.c - Kaldi per-frame alignments in text (formats/kaldi_ali.c). */
#include "formats/kaldi.h"
#include "tests/unit/harness.h"

#include <string.h>

static const char *parse_err(const char *text, struct vpa_kaldi_ali *a)
{
	static struct vpa_err err;
	vpa_err_init(&err);
	int rc = vpa_kaldi_parse_ali("ali.txt", text, strlen(text), a, &err);
	return rc ? err.msg : NULL;
}

static void test_ali_ok(void)
{
	struct vpa_kaldi_ali a;
	vpa_kaldi_ali_init(&a);
	/* as ali-to-phones --per-frame writes it; a bracketed line; CRLF; a blank line */
	CHECK(parse_err("utt2 1 1 1 5 5 9\n\nutt1 [ 0 0 3 ]\r\nutt3 7\n", &a) == NULL);
	CHECK(a.n == 3);
	CHECK(a.off[1] == 6 && a.off[2] == 9 && a.off[3] == 10);
	CHECK(a.lab[0] == 1 && a.lab[5] == 9 && a.lab[6] == 0 && a.lab[8] == 3 && a.lab[9] == 7);
	CHECK(a.line[0] == 1 && a.line[1] == 3 && a.line[2] == 4);
	CHECK(vpa_kaldi_ali_find(&a, "utt1") == 1 && vpa_kaldi_ali_find(&a, "utt3") == 2);
	CHECK(vpa_kaldi_ali_find(&a, "utt0") == SIZE_MAX);
	CHECK(!strcmp(a.name, "ali.txt"));
	vpa_kaldi_ali_release(&a);
}

static void test_ali_errors(void)
{
	struct vpa_kaldi_ali a;
	vpa_kaldi_ali_init(&a);
	const char *m = parse_err("u1 1 2\nu2 3 x4 5\n", &a);
	CHECK(m && strstr(m, "ali.txt:2:6: 'x4' is not a frame label"));
	m = parse_err("u1 1 2\nu2 3\nu1 4\n", &a);
	CHECK(m && strstr(m, "ali.txt:3: duplicate utterance 'u1' (first on line 1)"));
	m = parse_err("u1 1\nu2\n", &a);
	CHECK(m && strstr(m, "ali.txt:2: utterance 'u2' has no frame labels"));
	m = parse_err("u1 -1\n", &a);
	CHECK(m && strstr(m, "'-1' is not a frame label"));
	m = parse_err("u1 2147483648\n", &a);
	CHECK(m && strstr(m, "'2147483648' is not a frame label"));
	CHECK(parse_err("u1 2147483647\n", &a) == NULL && a.lab[0] == 2147483647u);
	m = parse_err("u1 [ 1 2\n", &a);
	CHECK(m && strstr(m, "ali.txt:1: '[' without its ']'"));
	m = parse_err("u1 [ 1 ] 2\n", &a);
	CHECK(m && strstr(m, "'2' is not a frame label"));
	m = parse_err("\n  \n", &a);
	CHECK(m && strstr(m, "ali.txt: no alignments"));
	vpa_kaldi_ali_release(&a);
}

int main(void)
{
	RUN(test_ali_ok);
	RUN(test_ali_errors);
	return DONE();
}
