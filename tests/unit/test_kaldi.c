/*
 * tests/unit/test_kaldi.c - Kaldi archives (text, binary FV/DV/FM/DM, mixed),
 * lists, trials, the embedding-set importer, and every error message.
 * Binary archives are assembled here byte by byte, so the expected byte
 * offsets in the messages are counted by hand in the comments.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "formats/embset.h"
#include "formats/io.h"
#include "formats/kaldi.h"
#include "harness.h"

static char dir[64];

/* DIR/name; one stable buffer per distinct name. */
static const char *path_of(const char *name)
{
	static char names[16][32], buf[16][256];
	static int n;
	for (int k = 0; k < n; k++)
		if (!strcmp(names[k], name))
			return buf[k];
	if (n == 16)
		abort();
	snprintf(names[n], sizeof(names[n]), "%s", name);
	snprintf(buf[n], sizeof(buf[n]), "%s/%s", dir, name);
	return buf[n++];
}

static void write_file(const char *name, const void *data, size_t len)
{
	FILE *f = fopen(path_of(name), "wb");
	fwrite(data, 1, len, f);
	fclose(f);
}

static void write_text(const char *name, const char *text)
{
	write_file(name, text, strlen(text));
}

static void put_marked(struct vpa_buf *b, int32_t v)
{
	vpa_buf_add(b, "\x04", 1);
	vpa_buf_add(b, &v, 4); /* little-endian host (x86 / arm64) */
}

static void bin_fv(struct vpa_buf *b, const char *key, const float *v, int32_t n)
{
	vpa_buf_puts(b, key);
	vpa_buf_add(b, " \0BFV ", 6);
	put_marked(b, n);
	vpa_buf_add(b, v, (size_t)n * 4);
}

static int parse(const char *name, const void *buf, size_t len, int mode, struct vpa_kaldi_ark *a,
		 struct vpa_err *err)
{
	vpa_err_init(err);
	return vpa_kaldi_parse(name, buf, len, mode, a, err);
}

#define PARSE_ERR(text, mode, want_)                                                       \
	do {                                                                             \
		struct vpa_kaldi_ark a_;                                                 \
		struct vpa_err e_;                                                       \
		vpa_kaldi_ark_init(&a_);                                                 \
		CHECK(parse("t.ark", text, sizeof(text) - 1, mode, &a_, &e_) == VPA_EINPUT); \
		CHECK_STR(e_.msg, want_);                                                \
		CHECK(a_.n == 0);                                                        \
		vpa_kaldi_ark_release(&a_);                                              \
	} while (0)

static void test_text_vectors(void)
{
	struct vpa_kaldi_ark a;
	struct vpa_err err;
	vpa_kaldi_ark_init(&a);
	const char t[] = "u1  [ 1 2.5 -3e-1 ]\r\n\nu2 [ 4\n 5 6 ]\nu3  [ .5 +7 8. ]";
	CHECK(parse("t.ark", t, sizeof(t) - 1, VPA_KALDI_VECTORS, &a, &err) == 0);
	CHECK(a.n == 3 && a.n_data == 9);
	CHECK_STR(a.e[1].key, "u2");
	CHECK(a.e[0].cols == 3 && a.e[0].rows == 1 && !a.e[0].is_matrix);
	CHECK(a.e[0].line == 1 && a.e[1].line == 3 && a.e[2].line == 5);
	double want[9] = { 1, 2.5, -0.3, 4, 5, 6, 0.5, 7, 8 };
	for (int i = 0; i < 9; i++)
		CHECK(a.data[i] == want[i]);
	char w[64];
	vpa_kaldi_where(&a, 2, w, sizeof(w));
	CHECK_STR(w, "t.ark:5");
	vpa_kaldi_ark_release(&a);
}

static void test_text_matrices(void)
{
	struct vpa_kaldi_ark a;
	struct vpa_err err;
	vpa_kaldi_ark_init(&a);
	const char t[] = "f1  [\n  1 2 3\n  4 5 6 ]\nf2  [\n  7 8 9 ]\n";
	CHECK(parse("f.ark", t, sizeof(t) - 1, VPA_KALDI_MATRICES, &a, &err) == 0);
	CHECK(a.n == 2);
	CHECK(a.e[0].is_matrix && a.e[0].rows == 2 && a.e[0].cols == 3 && a.e[0].off == 0);
	CHECK(a.e[1].rows == 1 && a.e[1].cols == 3 && a.e[1].off == 6);
	for (int i = 0; i < 9; i++)
		CHECK(a.data[i] == i + 1);
	/* Any mode takes both; an empty matrix and an empty vector. */
	const char u[] = "v [ 1 2 ]\nm [\n 3\n 4 ]\ne [ ]\nz [\n ]\n";
	CHECK(parse("f.ark", u, sizeof(u) - 1, VPA_KALDI_ANY, &a, &err) == 0);
	CHECK(a.n == 4 && !a.e[0].is_matrix && a.e[1].is_matrix && a.e[1].rows == 2 && a.e[1].cols == 1);
	CHECK(a.e[2].cols == 0 && a.e[3].rows == 0 && a.e[3].is_matrix);
	vpa_kaldi_ark_release(&a);
}

static void test_binary(void)
{
	struct vpa_kaldi_ark a;
	struct vpa_err err;
	struct vpa_buf b;
	vpa_kaldi_ark_init(&a);
	vpa_buf_init(&b);
	float f1[3] = { 1.5f, -2.0f, 0.25f };
	bin_fv(&b, "u1", f1, 3); /* bytes 0..24 */
	double d2[3] = { 0.1, 1e300, -7 };
	vpa_buf_puts(&b, "u2"); /* key at 25 */
	vpa_buf_add(&b, " \0BDV ", 6);
	put_marked(&b, 3);
	vpa_buf_add(&b, d2, sizeof(d2));
	vpa_buf_puts(&b, "u3  [ 9 8 7 ]\n"); /* a text entry after binary ones */
	CHECK(parse("b.ark", b.data, b.len, VPA_KALDI_VECTORS, &a, &err) == 0);
	CHECK(a.n == 3);
	CHECK(a.e[0].binary && a.e[1].binary && !a.e[2].binary);
	CHECK(a.e[1].byte == 25);
	CHECK(a.data[0] == 1.5 && a.data[1] == -2.0 && a.data[2] == 0.25);
	CHECK(a.data[3] == 0.1 && a.data[4] == 1e300 && a.data[5] == -7);
	CHECK(a.data[6] == 9 && a.data[8] == 7);
	char w[64];
	vpa_kaldi_where(&a, 1, w, sizeof(w));
	CHECK_STR(w, "b.ark: byte 25");
	/* Matrices FM and DM. */
	vpa_buf_release(&b);
	vpa_buf_init(&b);
	float fm[6] = { 1, 2, 3, 4, 5, 6 };
	double dm[3] = { 7, 8, 9 };
	vpa_buf_add(&b, "m1 \0BFM ", 8);
	put_marked(&b, 2);
	put_marked(&b, 3);
	vpa_buf_add(&b, fm, sizeof(fm));
	vpa_buf_add(&b, "m2 \0BDM ", 8);
	put_marked(&b, 1);
	put_marked(&b, 3);
	vpa_buf_add(&b, dm, sizeof(dm));
	CHECK(parse("m.ark", b.data, b.len, VPA_KALDI_MATRICES, &a, &err) == 0);
	CHECK(a.n == 2 && a.e[0].rows == 2 && a.e[0].cols == 3 && a.e[1].rows == 1 && a.e[1].off == 6);
	for (int i = 0; i < 9; i++)
		CHECK(a.data[i] == i + 1);
	vpa_kaldi_ark_release(&a);
	vpa_buf_release(&b);
}

static void test_binary_errors(void)
{
	struct vpa_kaldi_ark a;
	struct vpa_err err;
	struct vpa_buf b;
	vpa_kaldi_ark_init(&a);
	vpa_buf_init(&b);
	float f[3] = { 1, 2, 3 };
	/* Truncated: "u1" ' ' \0 B "FV " marker int at 8..12, data from 13, 5 of 12 bytes. */
	bin_fv(&b, "u1", f, 3);
	CHECK(parse("t.ark", b.data, 18, VPA_KALDI_VECTORS, &a, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "t.ark: byte 13: truncated binary archive: vector 'u1' needs 12 bytes, 5 left");
	CHECK(parse("t.ark", b.data, 10, VPA_KALDI_VECTORS, &a, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "t.ark: byte 8: truncated binary archive: length of 'u1' needs 5 bytes, 2 left");
	/* Compressed matrix: token at byte 5. */
	CHECK(parse("c.ark", "u1 \0BCM \x01\x02", 10, VPA_KALDI_ANY, &a, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "c.ark: byte 5: 'u1': compressed matrices are not supported: write with --compress=false");
	CHECK(parse("c.ark", "u1 \0BCM2 \x01\x02", 11, VPA_KALDI_ANY, &a, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "c.ark: byte 5: 'u1': compressed matrices are not supported: write with --compress=false");
	/* Unknown token, wrong size marker. */
	CHECK(parse("x.ark", "u1 \0BXV \x04\0\0\0\0", 13, VPA_KALDI_ANY, &a, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.ark: byte 5: 'u1': unknown binary object 'XV': expected FV, DV, FM or DM");
	CHECK(parse("x.ark", "u1 \0BFV \x08\0\0\0\0", 13, VPA_KALDI_ANY, &a, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.ark: byte 8: expected the int32 size marker 4 before the length of 'u1', got 8");
	/* NaN at index 1: value bytes 13..16, 17..20. */
	vpa_buf_release(&b);
	vpa_buf_init(&b);
	float fn[3] = { 1, NAN, 2 };
	bin_fv(&b, "u1", fn, 3);
	CHECK(parse("n.ark", b.data, b.len, VPA_KALDI_VECTORS, &a, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "n.ark: byte 17: value is not finite (utterance 'u1', index 1)");
	/* Dimension mismatch: second key at byte 25. */
	vpa_buf_release(&b);
	vpa_buf_init(&b);
	bin_fv(&b, "u1", f, 3);
	bin_fv(&b, "u2", f, 2);
	CHECK(parse("m.ark", b.data, b.len, VPA_KALDI_VECTORS, &a, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "m.ark: byte 25: utterance 'u2' has dimension 2, expected 3 as 'u1'");
	/* Duplicate binary key. */
	vpa_buf_release(&b);
	vpa_buf_init(&b);
	bin_fv(&b, "u1", f, 3);
	bin_fv(&b, "u1", f, 3);
	CHECK(parse("d.ark", b.data, b.len, VPA_KALDI_VECTORS, &a, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "d.ark: byte 25: duplicate utterance 'u1' (first at byte 0)");
	/* A negative length. */
	CHECK(parse("x.ark", "u1 \0BFV \x04\xff\xff\xff\xff", 13, VPA_KALDI_ANY, &a, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.ark: byte 8: negative length -1 for 'u1'");
	vpa_kaldi_ark_release(&a);
	vpa_buf_release(&b);
}

static void test_text_errors(void)
{
	PARSE_ERR("u1  [ 1 2 3 ]\nu2  [ 4 5 ]\n", VPA_KALDI_VECTORS,
		  "t.ark:2: utterance 'u2' has dimension 2, expected 3 as 'u1'");
	PARSE_ERR("u1  [ 1 2 3 ]\nu2  [ 4 nan 6 ]\n", VPA_KALDI_VECTORS,
		  "t.ark:2:9: value is not finite: 'nan' (utterance 'u2')");
	PARSE_ERR("u1  [ 1 -inf 3 ]\n", VPA_KALDI_VECTORS,
		  "t.ark:1:9: value is not finite: '-inf' (utterance 'u1')");
	PARSE_ERR("u1  [ 1 1e999 3 ]\n", VPA_KALDI_VECTORS,
		  "t.ark:1:9: value is not finite: '1e999' (utterance 'u1')");
	PARSE_ERR("u1  [ 1 abc 3 ]\n", VPA_KALDI_VECTORS,
		  "t.ark:1:9: expected a number, got 'abc' (utterance 'u1')");
	PARSE_ERR("u1  [ 1 ]\nu2  [ 2 ]\nu1  [ 3 ]\n", VPA_KALDI_VECTORS,
		  "t.ark:3: duplicate utterance 'u1' (first on line 1)");
	PARSE_ERR("u1  [ 1 2\n", VPA_KALDI_VECTORS,
		  "t.ark:2: vector 'u1' is not closed: expected ']' before the end of the file");
	PARSE_ERR("f1  [\n  1 2\n  3 4\n", VPA_KALDI_MATRICES,
		  "t.ark:4: matrix 'f1' is not closed: expected ']' before the end of the file");
	PARSE_ERR("f1  [\n  1 2\n  3 ]\n", VPA_KALDI_MATRICES,
		  "t.ark:3: matrix 'f1' has a row of 1 values, expected 2 as on line 2");
	PARSE_ERR("f1  [\n  1 2 ]\n", VPA_KALDI_VECTORS, "t.ark:1: 'f1' is a matrix, expected a vector");
	PARSE_ERR("v1  [ 1 2 ]\n", VPA_KALDI_MATRICES, "t.ark:1: 'v1' is a vector, expected a matrix");
	PARSE_ERR("f1  [\n  1 2 ]\nf2  [\n  1 2 3 ]\n", VPA_KALDI_MATRICES,
		  "t.ark:3: matrix 'f2' has 3 columns, expected 2 as 'f1'");
	PARSE_ERR(" \n\n", VPA_KALDI_VECTORS, "t.ark: no entries");
	PARSE_ERR("u1 1 2 3\n", VPA_KALDI_VECTORS, "t.ark:1:4: expected '[' or a binary object after 'u1', got '1'");
	PARSE_ERR("u1\nu2 [ 1 ]\n", VPA_KALDI_VECTORS, "t.ark:1: expected '[' or a binary object after 'u1'");
	PARSE_ERR("u1 [ 1 ] x\n", VPA_KALDI_VECTORS,
		  "t.ark:1:10: expected the end of the line after ']' of 'u1', got 'x'");
	PARSE_ERR("u1 [ ]\n", VPA_KALDI_VECTORS, "t.ark:1: vector 'u1' is empty");
}

static void test_write_roundtrip(void)
{
	char *ids[2] = { "spkA-1", "spkB-2" };
	double x[6] = { 0.5, -1.25, 3, (float)0.1, 1e-20, 123456.789f };
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_kaldi_write_vectors(path_of("w.ark"), ids, x, 2, 3, &err) == 0);
	char *buf;
	size_t len;
	CHECK(vpa_read_file(path_of("w.ark"), &buf, &len, &err) == 0);
	CHECK(!strncmp(buf, "spkA-1  [ 0.5 -1.25 3 ]\nspkB-2  [ 0.100000001 1e-20 123456.789 ]\n", len));
	free(buf);
	struct vpa_kaldi_ark a;
	vpa_kaldi_ark_init(&a);
	CHECK(vpa_kaldi_read(path_of("w.ark"), VPA_KALDI_VECTORS, &a, &err) == 0);
	CHECK(a.n == 2);
	for (int i = 0; i < 6; i++)
		CHECK((float)a.data[i] == (float)x[i]);
	vpa_kaldi_ark_release(&a);
}

static void test_lists_and_trials(void)
{
	struct vpa_kaldi_list l;
	struct vpa_err err;
	vpa_kaldi_list_init(&l);
	const char t[] = "# comment\nu1 s1\r\n\n  u2\ts2  \n";
	vpa_err_init(&err);
	CHECK(vpa_kaldi_parse_list("utt2spk", t, sizeof(t) - 1, 2, &l, &err) == 0);
	CHECK(l.n == 2 && l.ncols == 2 && l.line[1] == 4);
	CHECK_STR(l.f[3], "s2");
	const char bad[] = "u1 s1\nu2 s2 x\n";
	CHECK(vpa_kaldi_parse_list("utt2spk", bad, sizeof(bad) - 1, 2, &l, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "utt2spk:2: expected 2 columns, found 3");
	vpa_err_init(&err);
	const char ids[] = "u1\nu2 s2\n";
	CHECK(vpa_kaldi_parse_list("ids", ids, sizeof(ids) - 1, 0, &l, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "ids:2: expected 1 columns as on line 1, found 2");
	vpa_err_init(&err);
	CHECK(vpa_kaldi_parse_list("e", "\n#x\n", 4, 1, &l, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "e: no entries");
	vpa_kaldi_list_release(&l);

	struct vpa_kaldi_trials tr;
	vpa_kaldi_trials_init(&tr);
	const char tt[] = "s1 u1 target\ns2 u1 nontarget\ns1 u2 nontarget\n";
	vpa_err_init(&err);
	CHECK(vpa_kaldi_parse_trials("trials", tt, sizeof(tt) - 1, &tr, &err) == 0);
	CHECK(tr.n == 3 && tr.target[0] == 1 && tr.target[1] == 0);
	CHECK_STR(tr.enroll[1], "s2");
	CHECK_STR(tr.test[2], "u2");
	struct vpa_kaldi_trials t2;
	vpa_kaldi_trials_init(&t2);
	const char tb[] = "s1 u1 target\ns1 u2 maybe\n";
	CHECK(vpa_kaldi_parse_trials("trials", tb, sizeof(tb) - 1, &t2, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "trials:2: unknown label 'maybe': expected target or nontarget");
	vpa_err_init(&err);
	const char td[] = "s1 u1 target\ns2 u1 target\ns1 u1 nontarget\n";
	CHECK(vpa_kaldi_parse_trials("trials", td, sizeof(td) - 1, &t2, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "trials:3: duplicate trial 's1' 'u1' (first on line 1)");

	/* Resolution against sets. */
	struct vpa_embset en, te;
	vpa_embset_init(&en);
	vpa_embset_init(&te);
	double v[1] = { 1 };
	vpa_embset_add(&en, "e1", "s1", v, 1, NULL);
	vpa_embset_add(&en, "e2", "s2", v, 1, NULL);
	vpa_embset_add(&te, "u2", "s1", v, 1, NULL);
	vpa_embset_add(&te, "u1", "s2", v, 1, NULL);
	uint32_t es[3], tr_[3];
	vpa_err_init(&err);
	CHECK(vpa_embset_resolve_trials(&tr, &en, &te, es, tr_, &err) == 0);
	CHECK(es[0] == 0 && es[1] == 1 && es[2] == 0 && tr_[0] == 1 && tr_[2] == 0);
	const char tu[] = "s1 u1 target\ns1 u9 target\n";
	CHECK(vpa_kaldi_parse_trials("trials", tu, sizeof(tu) - 1, &t2, &err) == 0);
	CHECK(vpa_embset_resolve_trials(&t2, &en, &te, es, tr_, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "trials:2: unknown test utterance 'u9'");
	const char ts[] = "s7 u1 target\n";
	vpa_err_init(&err);
	CHECK(vpa_kaldi_parse_trials("trials", ts, sizeof(ts) - 1, &t2, &err) == 0);
	CHECK(vpa_embset_resolve_trials(&t2, &en, &te, es, tr_, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "trials:1: unknown enrolment speaker 's7'");
	vpa_embset_release(&en);
	vpa_embset_release(&te);
	vpa_kaldi_trials_release(&tr);
	vpa_kaldi_trials_release(&t2);
}

/* A UTF-8 byte order mark starts no Kaldi text file (issue 26 item 11): it
 * would be part of the first id, and another file would be blamed. */
static void test_bom(void)
{
	struct vpa_kaldi_list l;
	struct vpa_kaldi_trials tr;
	struct vpa_kaldi_ark a;
	struct vpa_err err;
	vpa_kaldi_list_init(&l);
	vpa_kaldi_trials_init(&tr);
	vpa_kaldi_ark_init(&a);
	const char u[] = "\xEF\xBB\xBFu1 s1\nu2 s2\n";
	vpa_err_init(&err);
	CHECK(vpa_kaldi_parse_list("utt2spk", u, sizeof(u) - 1, 2, &l, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "utt2spk:1: the file starts with a UTF-8 byte order mark (bytes EF BB BF), which would become part of the first id: save it without the mark");
	const char t[] = "\xEF\xBB\xBFs1 u1 target\n";
	vpa_err_init(&err);
	CHECK(vpa_kaldi_parse_trials("trials", t, sizeof(t) - 1, &tr, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "trials:1: the file starts with a UTF-8 byte order mark (bytes EF BB BF), which would become part of the first id: save it without the mark");
	const char x[] = "\xEF\xBB\xBFu1 [ 1 2 ]\n";
	vpa_err_init(&err);
	CHECK(vpa_kaldi_parse("xv.ark", (const unsigned char *)x, sizeof(x) - 1, VPA_KALDI_VECTORS, &a,
			      &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "xv.ark:1: the file starts with a UTF-8 byte order mark (bytes EF BB BF), which would become part of the first id: save it without the mark");
	/* the same bytes elsewhere are a (strange) id, as before */
	const char m[] = "u0 s0\n\xEF\xBB\xBFu1 s1\n";
	vpa_err_init(&err);
	CHECK(vpa_kaldi_parse_list("utt2spk", m, sizeof(m) - 1, 2, &l, &err) == 0);
	CHECK(vpa_kaldi_check_bom("x", "\xEF\xBB", 2, &err) == 0);
	vpa_kaldi_list_release(&l);
	vpa_kaldi_trials_release(&tr);
	vpa_kaldi_ark_release(&a);
}

static void test_import(void)
{
	struct vpa_embset es;
	struct vpa_err err;
	char want[512];
	vpa_embset_init(&es);
	const char ark[] = "u1  [ 1 2 3 ]\nu2  [ 4 5 6 ]\nu3  [ 7 8 9 ]\n";
	write_file("xv.ark", ark, sizeof(ark) - 1);
	write_text("utt2spk", "u1 s1\nu2 s2\nu3 s1\nu9 s9\n");
	write_text("spk2gender", "s1 f\ns2 m\n");
	write_text("utt2dur", "u1 2.5\nu2 3\nu3 0.75\n");
	struct vpa_embset_src src = { path_of("xv.ark"), NULL, path_of("utt2spk"), path_of("spk2gender"),
				      path_of("utt2dur"), 1 };
	vpa_err_init(&err);
	CHECK(vpa_embset_import(&src, &es, &err) == 0);
	if (err.status)
		printf("# %s\n", err.msg);
	CHECK(es.n == 3 && es.d == 3 && es.n_spk == 2);
	if (es.n != 3)
		return;
	CHECK_STR(es.spk_id[es.spk[2]], "s1");
	CHECK(es.gender && es.gender[0] == 'f' && es.gender[1] == 'm');
	CHECK(es.dur && es.dur[0] == 2.5 && es.dur[2] == 0.75);
	CHECK(es.x[4] == 5);
	/* Enrolment list. */
	struct vpa_embset sel;
	vpa_embset_init(&sel);
	write_text("enrolls", "u3\nu1\n");
	CHECK(vpa_embset_select_list(&es, path_of("enrolls"), &sel, &err) == 0);
	CHECK(sel.n == 2 && sel.n_spk == 1);
	CHECK_STR(sel.utt[0], "u3");
	write_text("enrolls", "u3\nu7\n");
	CHECK(vpa_embset_select_list(&es, path_of("enrolls"), &sel, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s:2: unknown utterance 'u7'", path_of("enrolls"));
	CHECK_STR(err.msg, want);
	write_text("enrolls", "u3\nu3\n");
	vpa_err_init(&err);
	CHECK(vpa_embset_select_list(&es, path_of("enrolls"), &sel, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s:2: duplicate utterance 'u3' (first on line 1)", path_of("enrolls"));
	CHECK_STR(err.msg, want);
	vpa_embset_release(&sel);
	/* Writer of the set: read back the same vectors and ids. */
	CHECK(vpa_embset_write_ark(&es, path_of("out.ark"), &err) == 0);
	struct vpa_kaldi_ark back;
	vpa_kaldi_ark_init(&back);
	CHECK(vpa_kaldi_read(path_of("out.ark"), VPA_KALDI_VECTORS, &back, &err) == 0);
	CHECK(back.n == 3 && back.n_data == 9 && !memcmp(back.data, es.x, 9 * sizeof(double)));
	CHECK(back.n == 3 && !strcmp(back.e[2].key, "u3"));
	vpa_kaldi_ark_release(&back);
	vpa_embset_release(&es);

	/* Utterance without speaker. */
	write_text("utt2spk", "u1 s1\nu2 s2\n");
	vpa_err_init(&err);
	CHECK(vpa_embset_import(&src, &es, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s: no speaker for utterance 'u3' (%s:3)", path_of("utt2spk"),
		 path_of("xv.ark"));
	CHECK_STR(err.msg, want);
	/* Speaker without gender. */
	write_text("utt2spk", "u1 s1\nu2 s2\nu3 s3\n");
	vpa_err_init(&err);
	CHECK(vpa_embset_import(&src, &es, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s: no gender for speaker 's3' (needed for gender selection)",
		 path_of("spk2gender"));
	CHECK_STR(err.msg, want);
	src.need_gender = 0; /* then a missing gender is fine */
	vpa_err_init(&err);
	CHECK(vpa_embset_import(&src, &es, &err) == 0);
	CHECK(es.gender && es.gender[2] == 0);
	vpa_embset_release(&es);
	/* Bad gender, bad duration, duplicate in utt2spk. */
	write_text("spk2gender", "s1 f\ns2 x\n");
	vpa_err_init(&err);
	CHECK(vpa_embset_import(&src, &es, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s:2: unknown gender 'x': expected m or f", path_of("spk2gender"));
	CHECK_STR(err.msg, want);
	write_text("spk2gender", "s1 f\ns2 m\n");
	write_text("utt2dur", "u1 2.5\nu2 -3\nu3 0.75\n");
	vpa_err_init(&err);
	CHECK(vpa_embset_import(&src, &es, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s:2: expected a positive duration in seconds, got '-3'", path_of("utt2dur"));
	CHECK_STR(err.msg, want);
	write_text("utt2dur", "u1 2.5\nu2 3\nu3 0.75\n");
	write_text("utt2spk", "u1 s1\nu2 s2\nu1 s3\n");
	vpa_err_init(&err);
	CHECK(vpa_embset_import(&src, &es, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s:3: duplicate utterance 'u1' (first on line 1)", path_of("utt2spk"));
	CHECK_STR(err.msg, want);

	/* .npy with a two-column id list (utt spk). */
	double x[6] = { 1, 2, 3, 4, 5, 6 };
	size_t shape[2] = { 3, 2 };
	vpa_err_init(&err);
	CHECK(vpa_npy_write(path_of("xv.npy"), x, 2, shape, &err) == 0);
	write_text("ids", "a1 A\nb1 B\na2 A\n");
	struct vpa_embset_src ns = { path_of("xv.npy"), path_of("ids"), NULL, NULL, NULL, 0 };
	CHECK(vpa_embset_import(&ns, &es, &err) == 0);
	if (err.status)
		printf("# %s\n", err.msg);
	CHECK(es.n == 3 && es.d == 2 && es.n_spk == 2 && es.spk[2] == 0 && es.x[5] == 6);
	vpa_embset_release(&es);
	write_text("ids", "a1 A\nb1 B\n");
	CHECK(vpa_embset_import(&ns, &es, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s: 2 ids for 3 rows of %s", path_of("ids"), path_of("xv.npy"));
	CHECK_STR(err.msg, want);
	write_text("ids", "a1 A\nb1 B\na1 A\n");
	vpa_err_init(&err);
	CHECK(vpa_embset_import(&ns, &es, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s:3: duplicate utterance 'a1' (first on line 1)", path_of("ids"));
	CHECK_STR(err.msg, want);
	/* A one-column id list needs utt2spk. */
	write_text("ids", "a1\nb1\na2\n");
	vpa_err_init(&err);
	CHECK(vpa_embset_import(&ns, &es, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s: no utt2spk given", path_of("xv.npy"));
	CHECK_STR(err.msg, want);
	CHECK(es.n == 0);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/vpa_kaldi_XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	RUN(test_text_vectors);
	RUN(test_text_matrices);
	RUN(test_binary);
	RUN(test_binary_errors);
	RUN(test_text_errors);
	RUN(test_write_roundtrip);
	RUN(test_lists_and_trials);
	RUN(test_bom);
	RUN(test_import);
	const char *names[] = { "xv.ark", "utt2spk", "spk2gender", "utt2dur", "enrolls", "out.ark",
				"w.ark", "xv.npy", "ids" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(path_of(names[i]));
	rmdir(dir);
	return DONE();
}
