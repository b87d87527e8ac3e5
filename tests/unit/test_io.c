/* tests/unit/test_io.c - score files, keys, score lists, .npy, vpa_parse_double. */
#include "formats/io.h"
#include "harness.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static char tmp_paths[64][64];
static int n_tmp;

/* Write bytes to a fresh file under /tmp; the path lives until cleanup(). */
static const char *tmpfile_with(const char *data, size_t len, const char *suffix)
{
	char *path = tmp_paths[n_tmp++];
	snprintf(path, 64, "/tmp/vpa_test_io_XXXXXX%s", suffix);
	int fd = mkstemps(path, (int)strlen(suffix));
	if (fd < 0) {
		perror("mkstemps");
		exit(1);
	}
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);
		if (w <= 0) {
			perror("write");
			exit(1);
		}
		off += (size_t)w;
	}
	close(fd);
	return path;
}

static const char *tmptext(const char *s)
{
	return tmpfile_with(s, strlen(s), "");
}

static void cleanup(void)
{
	for (int i = 0; i < n_tmp; i++)
		unlink(tmp_paths[i]);
	n_tmp = 0;
}

/* Parse a score file from memory as "s.txt"; return the error message or "". */
static const char *scores_err(const char *text)
{
	static struct vpa_err err;
	struct vpa_trials t;
	vpa_err_init(&err);
	int rc = vpa_parse_scores("s.txt", text, strlen(text), &t, &err);
	if (rc == 0) {
		vpa_trials_release(&t);
		return "";
	}
	if (rc != VPA_EINPUT)
		return "(wrong status)";
	/* on error the output is empty */
	if (t.tar || t.non || t.n_tar || t.n_non || t.ids_e)
		return "(output not empty after an error)";
	return err.msg;
}

static const char *key_err(const char *scores, const char *key)
{
	static struct vpa_err err;
	struct vpa_trials t;
	vpa_err_init(&err);
	int rc = vpa_parse_scores_key("s.txt", scores, strlen(scores), "k.txt", key,
				      strlen(key), &t, &err);
	if (rc == 0) {
		vpa_trials_release(&t);
		return "";
	}
	return rc == VPA_EINPUT ? err.msg : "(wrong status)";
}

static const char *list_err(const char *text)
{
	static struct vpa_err err;
	double *x;
	size_t n;
	vpa_err_init(&err);
	int rc = vpa_parse_score_list("l.txt", text, strlen(text), &x, &n, &err);
	if (rc == 0) {
		free(x);
		return "";
	}
	return rc == VPA_EINPUT ? err.msg : "(wrong status)";
}

static int same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* ------------------------------------------------------ vpa_parse_double */

static int pd(const char *s, double *out)
{
	const char *end = s + strlen(s);
	const char *r = vpa_parse_double(s, end, out);
	return r == end;
}

static void test_parse_double_forms(void)
{
	double x;
	CHECK(pd("1", &x) && x == 1.0);
	CHECK(pd("-1.5", &x) && x == -1.5);
	CHECK(pd(".5", &x) && x == 0.5);
	CHECK(pd("5.", &x) && x == 5.0);
	CHECK(pd("1e-3", &x) && same_bits(x, strtod("1e-3", NULL)));
	CHECK(pd("1.5E+10", &x) && x == 1.5e10);
	CHECK(pd("+2", &x) && x == 2.0);
	CHECK(pd("-0", &x) && x == 0.0 && signbit(x));
	CHECK(pd("0.000", &x) && x == 0.0 && !signbit(x));
	CHECK(pd("0e999999999999", &x) && x == 0.0);
	CHECK(pd("1e-400", &x) && x == 0.0);        /* underflow, as strtod */
	CHECK(pd("4.9e-324", &x) && x == 4.9e-324); /* smallest subnormal */
	CHECK(pd("1.7976931348623157e308", &x) && x == 1.7976931348623157e308);
	/* rejected */
	const char *bad[] = {"nan", "NaN", "inf", "-inf", "Infinity", "0x1p3", "", "1.2.3",
			     "1e", "1e+", "1e-", ".", "-", "+", "e5", " 1", "1e999",
			     "-1e309", "1.5abc", "2+3", "--1", "+-1", "1_000", "0x10"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		const char *s = bad[i];
		const char *r = vpa_parse_double(s, s + strlen(s), &x);
		if (r != NULL)
			printf("#   accepted '%s'\n", s);
		CHECK(r == NULL);
	}
	/* the number ends at a delimiter, and at `end` */
	const char *s = "12.5 rest";
	CHECK(vpa_parse_double(s, s + strlen(s), &x) == s + 4 && x == 12.5);
	s = "3,4";
	CHECK(vpa_parse_double(s, s + 3, &x) == s + 1 && x == 3.0);
	s = "7]";
	CHECK(vpa_parse_double(s, s + 2, &x) == s + 1 && x == 7.0);
	s = "123456";
	CHECK(vpa_parse_double(s, s + 3, &x) == s + 3 && x == 123.0);
	s = "1e5";
	CHECK(vpa_parse_double(s, s + 2, &x) == NULL); /* "1e" */
}

/* Hard cases near the fast-path limits and classic strtod traps. */
static void test_parse_double_hard(void)
{
	const char *cases[] = {
		"9007199254740992", "9007199254740993", "9007199254740993.0000000001",
		"18014398509481985", "1e22", "1e23", "123456789012345678e-5",
		"1234567890123456789", "12345678901234567890", "0.1", "0.3",
		"2.2250738585072011e-308", "2.2250738585072012e-308",
		"8.98846567431158e307", "1.00000000000000011102230246251565404236316680908203125",
		"1.00000000000000011102230246251565404236316680908203124",
		"1.00000000000000011102230246251565404236316680908203126",
		"7.038531e-26", "3.4028235677973366e38", "5e-324", "2.4703282292062327e-324",
		"2.4703282292062328e-324", "0.0000000000000000000000000000001234",
		"00000000000000000000000000000000001.5", "1.000000000000000000000000000000000001",
		"4503599627370496.5", "4503599627370497.5", "9007199254740991e22",
		"9007199254740993e-22", "1e-22", "1e-23", "-123.456e-7",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		double x = -1, y = strtod(cases[i], NULL);
		int ok = pd(cases[i], &x) && same_bits(x, y);
		if (!ok)
			printf("#   '%s': got %.17g, strtod %.17g\n", cases[i], x, y);
		CHECK(ok);
	}
}

/* Many random decimal strings: the result must equal strtod bit for bit. */
static void test_parse_double_random(void)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, 20240601);
	int bad = 0, fast_forms = 0;
	char s[128];
	for (int it = 0; it < 400000; it++) {
		size_t n = 0;
		int form = (int)vpa_rng_below(&r, 4);
		if (form == 0) {
			/* a random double printed at random precision */
			uint64_t u = vpa_rng_u64(&r);
			double d;
			memcpy(&d, &u, 8);
			if (!isfinite(d))
				continue;
			n = (size_t)snprintf(s, sizeof(s), "%.*g", 1 + (int)vpa_rng_below(&r, 20), d);
		} else {
			if (vpa_rng_below(&r, 3) == 0)
				s[n++] = vpa_rng_below(&r, 2) ? '-' : '+';
			int ni = (int)vpa_rng_below(&r, form == 1 ? 8 : 26);
			int nf = (int)vpa_rng_below(&r, form == 1 ? 8 : 26);
			if (ni + nf == 0)
				ni = 1;
			for (int k = 0; k < ni; k++)
				s[n++] = (char)('0' + vpa_rng_below(&r, 10));
			if (nf || vpa_rng_below(&r, 4) == 0) {
				s[n++] = '.';
				for (int k = 0; k < nf; k++)
					s[n++] = (char)('0' + vpa_rng_below(&r, 10));
			}
			if (vpa_rng_below(&r, 2)) {
				s[n++] = vpa_rng_below(&r, 2) ? 'e' : 'E';
				int range = form == 1 ? 25 : form == 2 ? 330 : 40;
				int e = (int)vpa_rng_below(&r, 2 * (uint64_t)range + 1) - range;
				n += (size_t)snprintf(s + n, sizeof(s) - n, "%+d", e);
			}
			s[n] = '\0';
			fast_forms++;
		}
		double y = strtod(s, NULL), x = 0;
		const char *ret = vpa_parse_double(s, s + n, &x);
		if (!isfinite(y)) {
			if (ret != NULL) {
				if (bad++ < 5)
					printf("#   '%s' out of range but accepted\n", s);
			}
			continue;
		}
		if (ret != s + n || !same_bits(x, y)) {
			if (bad++ < 5)
				printf("#   '%s': got %.17g, strtod %.17g\n", s, x, y);
		}
	}
	CHECK(bad == 0);
	CHECK(fast_forms > 200000);
}

/* ---------------------------------------------------------- score files */

static void test_scores_basic(void)
{
	const char *path = tmptext("# a comment\n"
				   "1.5 target\n"
				   "\n"
				   "  -2\tnontarget  \n"
				   "   \t \n"
				   "3e-1 tar\n"
				   "-.5 non\n"
				   "  # indented comment\n"
				   "7 1\n"
				   "8 0");
	struct vpa_trials t;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_read_scores(path, &t, &err) == 0);
	CHECK(t.n_tar == 3 && t.n_non == 3);
	if (t.n_tar == 3 && t.n_non == 3) {
		CHECK(t.tar[0] == 1.5 && t.tar[1] == 0.3 && t.tar[2] == 7);
		CHECK(t.non[0] == -2 && t.non[1] == -0.5 && t.non[2] == 8);
	}
	CHECK(t.tar_e == NULL && t.ids_e == NULL && t.n_ids_e == 0 && t.n_ids_t == 0);
	vpa_trials_release(&t);
	cleanup();
}

static void test_scores_crlf(void)
{
	const char *path = tmptext("1 target\r\n2 nontarget\r\n\r\n# c\r\n3 target\r\n");
	struct vpa_trials t;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_read_scores(path, &t, &err) == 0);
	CHECK(t.n_tar == 2 && t.n_non == 1);
	if (t.n_tar == 2)
		CHECK(t.tar[0] == 1 && t.tar[1] == 3);
	vpa_trials_release(&t);
	/* CRLF with ids, last line without newline */
	path = tmptext("a x 1 target\r\nb y 2 nontarget");
	CHECK(vpa_read_scores(path, &t, &err) == 0);
	CHECK(t.n_tar == 1 && t.n_non == 1 && t.n_ids_t == 2);
	if (t.n_ids_t == 2)
		CHECK_STR(t.ids_t[1], "y");
	vpa_trials_release(&t);
	cleanup();
}

static void test_scores_one_class(void)
{
	/* a missing class is for the metrics layer to report */
	struct vpa_trials t;
	struct vpa_err err;
	vpa_err_init(&err);
	const char *s = "1 target\n2 target\n";
	CHECK(vpa_parse_scores("s.txt", s, strlen(s), &t, &err) == 0);
	CHECK(t.n_tar == 2 && t.n_non == 0 && t.non == NULL);
	vpa_trials_release(&t);
}

static void test_scores_ids(void)
{
	const char *s = "spk1 utt1 0.5 target\n"
			"spk1 utt2 -1 nontarget\n"
			"spk2 utt1 -2 nontarget\n"
			"spk2 utt3 2 target\n"
			"spk1 utt3 -3 nontarget\n";
	struct vpa_trials t;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_parse_scores("s.txt", s, strlen(s), &t, &err) == 0);
	CHECK(t.n_tar == 2 && t.n_non == 3 && t.n_ids_e == 2 && t.n_ids_t == 3);
	if (t.n_tar == 2 && t.n_non == 3 && t.n_ids_e == 2 && t.n_ids_t == 3) {
		CHECK_STR(t.ids_e[0], "spk1");
		CHECK_STR(t.ids_e[1], "spk2");
		CHECK_STR(t.ids_t[0], "utt1");
		CHECK_STR(t.ids_t[2], "utt3");
		CHECK(t.tar_e[0] == 0 && t.tar_t[0] == 0 && t.tar[0] == 0.5);
		CHECK(t.tar_e[1] == 1 && t.tar_t[1] == 2 && t.tar[1] == 2);
		CHECK(t.non_e[0] == 0 && t.non_t[0] == 1);
		CHECK(t.non_e[1] == 1 && t.non_t[1] == 0);
		CHECK(t.non_e[2] == 0 && t.non_t[2] == 2 && t.non[2] == -3);
	}
	vpa_trials_release(&t);
}

/* Interning many ids (table growth, batches): indices must round-trip. */
static void test_scores_many_ids(void)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	const int n = 60000;
	for (int i = 0; i < n; i++)
		vpa_buf_printf(&b, "e%d t%d %d %s\n", (i * 7919) % 3001, (int)(((long)i * 104729) % 20011), i,
			       i % 3 ? "nontarget" : "target");
	struct vpa_trials t;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_parse_scores("s.txt", b.data, b.len, &t, &err) == 0);
	CHECK(t.n_ids_e == 3001 && t.n_ids_t == 20011);
	CHECK(t.n_tar + t.n_non == (size_t)n);
	int bad = 0;
	size_t it = 0, in = 0;
	for (int i = 0; i < n && t.n_tar + t.n_non == (size_t)n; i++) {
		char e[32], tt[32];
		snprintf(e, sizeof(e), "e%d", (i * 7919) % 3001);
		snprintf(tt, sizeof(tt), "t%d", (int)(((long)i * 104729) % 20011));
		int tar = i % 3 == 0;
		size_t k = tar ? it++ : in++;
		uint32_t ei = tar ? t.tar_e[k] : t.non_e[k], ti = tar ? t.tar_t[k] : t.non_t[k];
		double sc = tar ? t.tar[k] : t.non[k];
		if (strcmp(t.ids_e[ei], e) || strcmp(t.ids_t[ti], tt) || sc != i)
			bad++;
	}
	CHECK(bad == 0);
	vpa_trials_release(&t);
	vpa_buf_release(&b);
}

static void test_scores_errors(void)
{
	CHECK_STR(scores_err("1 target\nabc nontarget\n"),
		  "s.txt:2:1: expected a number, got 'abc'");
	CHECK_STR(scores_err("1 target\n  1.2.3 nontarget\n"),
		  "s.txt:2:3: expected a number, got '1.2.3'");
	CHECK_STR(scores_err("nan target\n"), "s.txt:1:1: score is not finite: 'nan'");
	CHECK_STR(scores_err("1 target\n-Inf nontarget\n"),
		  "s.txt:2:1: score is not finite: '-Inf'");
	CHECK_STR(scores_err("1e400 target\n"), "s.txt:1:1: score is not finite: '1e400'");
	CHECK_STR(scores_err("0x1p3 target\n"), "s.txt:1:1: expected a number, got '0x1p3'");
	CHECK_STR(scores_err("1 true\n"),
		  "s.txt:1:3: unknown label 'true': expected target, nontarget, tar, non, 1 or 0");
	CHECK_STR(scores_err("1 Target\n"),
		  "s.txt:1:3: unknown label 'Target': expected target, nontarget, tar, non, 1 or 0");
	CHECK_STR(scores_err("1 target\n2 nontarget extra\n"),
		  "s.txt:2: expected 2 columns as on line 1, found 3");
	CHECK_STR(scores_err("\n# x\na b 1 target\n2 nontarget\n"),
		  "s.txt:4: expected 4 columns as on line 3, found 2");
	CHECK_STR(scores_err("1\n"),
		  "s.txt:1: expected 2 columns (score label) or 4 (enroll test score label), found 1");
	CHECK_STR(scores_err("a b 1\n"),
		  "s.txt:1: expected 2 columns (score label) or 4 (enroll test score label), found 3");
	CHECK_STR(scores_err(""), "s.txt: no trials");
	CHECK_STR(scores_err("\xEF\xBB\xBF" "1 target\n0 nontarget\n"), "s.txt:1: the file starts with a UTF-8 byte order mark (bytes EF BB BF), which would become part of the first id: save it without the mark");
	CHECK_STR(scores_err("# only a comment\n\n  \n"), "s.txt: no trials");
	CHECK_STR(scores_err("a b c target\n"), "s.txt:1:5: expected a number, got 'c'");
	/* long tokens are cut in messages */
	CHECK_STR(scores_err("1 target\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx target\n"),
		  "s.txt:2:1: expected a number, got 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'");
	/* a NUL byte */
	static const char nul[] = "1 target\n2 non\0target\n";
	struct vpa_trials t;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_parse_scores("s.txt", nul, sizeof(nul) - 1, &t, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "s.txt:2:6: NUL byte in a text file (binary file?)");
	/* a line over 1 MiB */
	size_t big = ((size_t)1 << 20) + 10;
	char *huge = malloc(big + 20);
	memcpy(huge, "1 target\n", 9);
	memset(huge + 9, '1', big);
	memcpy(huge + 9 + big, " target\n", 9);
	vpa_err_init(&err);
	CHECK(vpa_parse_scores("s.txt", huge, strlen(huge), &t, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "s.txt:2: line too long (over 1 MiB): is this a text file?");
	free(huge);
	/* a line of exactly 1 MiB is fine (a long number) */
	big = (size_t)1 << 20;
	huge = malloc(big + 2);
	memset(huge, '0', big);
	memcpy(huge + big - 9, "1 target\n", 9);
	vpa_err_init(&err);
	CHECK(vpa_parse_scores("s.txt", huge, big, &t, &err) == 0);
	CHECK(t.n_tar == 1 && t.tar && t.tar[0] == 1);
	vpa_trials_release(&t);
	free(huge);
}

static void test_scores_file_errors(void)
{
	struct vpa_trials t;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_read_scores("/nonexistent/x.txt", &t, &err) == VPA_EIO);
	CHECK_STR(err.msg, "/nonexistent/x.txt: cannot open: No such file or directory");
	const char *path = tmptext("");
	char exp[256];
	vpa_err_init(&err);
	CHECK(vpa_read_scores(path, &t, &err) == VPA_EINPUT);
	snprintf(exp, sizeof(exp), "%s: no trials", path);
	CHECK_STR(err.msg, exp);
	path = tmptext("1 target\n2 maybe\n");
	vpa_err_init(&err);
	CHECK(vpa_read_scores(path, &t, &err) == VPA_EINPUT);
	snprintf(exp, sizeof(exp),
		 "%s:2:3: unknown label 'maybe': expected target, nontarget, tar, non, 1 or 0",
		 path);
	CHECK_STR(err.msg, exp);
	vpa_err_init(&err);
	CHECK(vpa_read_scores("/tmp", &t, &err) == VPA_EIO);
	cleanup();
}

/* ---------------------------------------------------------- scores + key */

static void test_key_join(void)
{
	const char *s = "a x 1.5\n"
			"a y -1\n"
			"# c\n"
			"b x 0.25\r\n"
			"b y 3";
	const char *k = "b y target\n"
			"a y nontarget\n"
			"a x target\n"
			"b x non\n";
	struct vpa_trials t;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_parse_scores_key("s.txt", s, strlen(s), "k.txt", k, strlen(k), &t, &err) == 0);
	CHECK(t.n_tar == 2 && t.n_non == 2 && t.n_ids_e == 2 && t.n_ids_t == 2);
	if (t.n_tar == 2 && t.n_non == 2) {
		/* score-file order */
		CHECK(t.tar[0] == 1.5 && t.tar[1] == 3);
		CHECK(t.non[0] == -1 && t.non[1] == 0.25);
		CHECK_STR(t.ids_e[t.tar_e[1]], "b");
		CHECK_STR(t.ids_t[t.tar_t[1]], "y");
		CHECK_STR(t.ids_e[t.non_e[1]], "b");
		CHECK_STR(t.ids_t[t.non_t[1]], "x");
	}
	vpa_trials_release(&t);

	/* through files */
	const char *sp = tmptext(s), *kp = tmptext(k);
	CHECK(vpa_read_scores_key(sp, kp, &t, &err) == 0);
	CHECK(t.n_tar == 2 && t.n_non == 2);
	vpa_trials_release(&t);
	vpa_err_init(&err);
	CHECK(vpa_read_scores_key(sp, "/nonexistent/k", &t, &err) == VPA_EIO);
	cleanup();
}

static void test_key_errors(void)
{
	CHECK_STR(key_err("a x 1\na y 2\n", "a x target\n"),
		  "s.txt:2: pair 'a' 'y' is in the scores but not in the key (k.txt)");
	CHECK_STR(key_err("a x 1\n", "a x target\n\nb x nontarget\n"),
		  "k.txt:3: pair 'b' 'x' is in the key but not in the scores (s.txt)");
	/* both ids known, the pair is not */
	CHECK_STR(key_err("a x 1\nb y 2\n", "a x target\nb y target\na y nontarget\n"),
		  "k.txt:3: pair 'a' 'y' is in the key but not in the scores (s.txt)");
	CHECK_STR(key_err("a x 1\nb x 2\na x 3\n", "a x target\n"),
		  "s.txt:3: duplicate pair 'a' 'x' (first on line 1)");
	CHECK_STR(key_err("a x 1\nb x 2\n", "a x target\nb x target\n\na x nontarget\n"),
		  "k.txt:4: duplicate pair 'a' 'x' (first on line 1)");
	CHECK_STR(key_err("a x 1 target\n", "a x target\n"),
		  "s.txt:1: expected 3 columns (enroll test score), found 4");
	CHECK_STR(key_err("a x 1\n", "a x\n"),
		  "k.txt:1: expected 3 columns (enroll test target|nontarget), found 2");
	CHECK_STR(key_err("a x 1\n", "a x yes\n"),
		  "k.txt:1:5: unknown label 'yes': expected target, nontarget, tar, non, 1 or 0");
	CHECK_STR(key_err("a x one\n", "a x target\n"), "s.txt:1:5: expected a number, got 'one'");
	CHECK_STR(key_err("", "a x target\n"), "s.txt: no trials");
	/* a byte order mark: the file that has it is named, not the other */
	CHECK_STR(key_err("\xEF\xBB\xBF" "a x 1\n", "a x target\n"), "s.txt:1: the file starts with a UTF-8 byte order mark (bytes EF BB BF), which would become part of the first id: save it without the mark");
	CHECK_STR(key_err("a x 1\n", "\xEF\xBB\xBF" "a x target\n"), "k.txt:1: the file starts with a UTF-8 byte order mark (bytes EF BB BF), which would become part of the first id: save it without the mark");
	/* pairs are ordered: (x, a) is not (a, x) */
	CHECK_STR(key_err("a x 1\n", "x a target\n"),
		  "k.txt:1: pair 'x' 'a' is in the key but not in the scores (s.txt)");
}

/* ------------------------------------------------------------ score lists */

static void test_list_text(void)
{
	const char *path = tmptext("# exposure scores\n1.5\n\n-2e-3\r\n  7  \n.25");
	double *x = NULL;
	size_t n = 0;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_read_score_list(path, &x, &n, &err) == 0);
	CHECK(n == 4);
	if (n == 4)
		CHECK(x[0] == 1.5 && x[1] == -2e-3 && x[2] == 7 && x[3] == 0.25);
	free(x);
	CHECK_STR(list_err("1\n2 3\n"), "l.txt:2: expected one score per line, found 2 columns");
	CHECK_STR(list_err("1\nNaN\n"), "l.txt:2:1: score is not finite: 'NaN'");
	CHECK_STR(list_err("1\n\n x\n"), "l.txt:3:2: expected a number, got 'x'");
	CHECK_STR(list_err("#\n"), "l.txt: no scores");
	cleanup();
}

/* ------------------------------------------------------------------ npy */

/* Build a .npy in memory: header dict text, version, raw data. */
static size_t make_npy(unsigned char *buf, int major, const char *dict, const void *data,
		       size_t nbytes)
{
	size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
	size_t hlen = dl + 1;
	size_t pad = (64 - (pre + hlen) % 64) % 64;
	hlen += pad;
	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)major;
	buf[7] = 0;
	buf[8] = (unsigned char)(hlen & 0xff);
	buf[9] = (unsigned char)(hlen >> 8);
	if (major != 1) {
		buf[10] = (unsigned char)(hlen >> 16);
		buf[11] = (unsigned char)(hlen >> 24);
	}
	memcpy(buf + pre, dict, dl);
	memset(buf + pre + dl, ' ', pad);
	buf[pre + hlen - 1] = '\n';
	memcpy(buf + pre + hlen, data, nbytes);
	return pre + hlen + nbytes;
}

static const char *npy_err(const unsigned char *buf, size_t len)
{
	static struct vpa_err err;
	struct vpa_npy a;
	vpa_err_init(&err);
	int rc = vpa_npy_parse("a.npy", buf, len, &a, &err);
	if (rc == 0) {
		vpa_npy_release(&a);
		return "";
	}
	if (a.data)
		return "(data left after an error)";
	return rc == VPA_EINPUT ? err.msg : "(wrong status)";
}

static void test_npy_roundtrip(void)
{
	double d[6] = {1.5, -2, 0.1, 1e300, -0.0, 3};
	size_t shape2[2] = {2, 3}, shape1[1] = {6};
	char path[64];
	snprintf(path, sizeof(path), "/tmp/vpa_test_io_rt_%ld.npy", (long)getpid());
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_npy_write(path, d, 2, shape2, &err) == 0);
	/* the exact bytes numpy writes: 128-byte header, '<f8' */
	char *raw;
	size_t len;
	CHECK(vpa_read_file(path, &raw, &len, &err) == 0);
	CHECK(len == 128 + 48);
	if (len == 128 + 48) {
		CHECK(!memcmp(raw, "\x93NUMPY\x01\x00\x76\x00", 10));
		const char *h = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
		CHECK(!memcmp(raw + 10, h, strlen(h)));
		CHECK(raw[127] == '\n' && raw[126] == ' ');
	}
	free(raw);
	struct vpa_npy a;
	CHECK(vpa_npy_read(path, &a, &err) == 0);
	CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3);
	if (a.data)
		for (int i = 0; i < 6; i++)
			CHECK(same_bits(a.data[i], d[i]));
	vpa_npy_release(&a);
	CHECK(vpa_npy_write(path, d, 1, shape1, &err) == 0);
	CHECK(vpa_npy_read(path, &a, &err) == 0);
	CHECK(a.ndim == 1 && a.shape[0] == 6 && a.shape[1] == 0);
	if (a.data)
		CHECK(same_bits(a.data[4], -0.0) && a.data[3] == 1e300);
	vpa_npy_release(&a);
	/* empty array */
	CHECK(vpa_npy_write(path, d, 1, (size_t[]){0}, &err) == 0);
	CHECK(vpa_npy_read(path, &a, &err) == 0);
	CHECK(a.ndim == 1 && a.shape[0] == 0);
	vpa_npy_release(&a);
	CHECK(err.status == 0);
	unlink(path);
}

/* vpa_npy_read_threads: a float32 and a float64 file of 2^20 + 3 elements read
 * on 1, 2, 3 and 5 threads give the same array (the parts' boundaries fall
 * mid-chunk); a file cut short is refused on any count. */
static void test_npy_read_threads(void)
{
	size_t n = ((size_t)1 << 20) + 3;
	float *f = malloc(n * sizeof *f);
	double *d = malloc(n * sizeof *d);
	for (size_t i = 0; i < n; i++) {
		f[i] = (float)((double)(i % 9973) * 0.37 - 1000.0);
		d[i] = (double)i * 1e-3 - 7.0;
	}
	unsigned char *buf = malloc(n * 8 + 4096);
	char path[64];
	snprintf(path, sizeof(path), "/tmp/vpa_test_io_thr_%ld.npy", (long)getpid());
	char shape[128];
	snprintf(shape, sizeof shape, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu,), }", n);
	for (int kind = 0; kind < 2; kind++) {
		if (kind == 1)
			snprintf(shape, sizeof shape,
				 "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu,), }", n);
		size_t len = make_npy(buf, 1, shape, kind ? (const void *)d : (const void *)f,
				      n * (kind ? 8 : 4));
		FILE *fp = fopen(path, "wb");
		CHECK(fp && fwrite(buf, 1, len, fp) == len);
		if (fp)
			fclose(fp);
		static const int th[] = {1, 2, 3, 5};
		for (int t = 0; t < 4; t++) {
			struct vpa_npy a;
			struct vpa_err err;
			vpa_err_init(&err);
			CHECK(vpa_npy_read_threads(path, &a, th[t], &err) == 0);
			int ok = a.ndim == 1 && a.shape[0] == n && a.data;
			for (size_t i = 0; ok && i < n; i++)
				ok = a.data[i] == (kind ? d[i] : (double)f[i]);
			CHECK(ok);
			vpa_npy_release(&a);
		}
		CHECK(truncate(path, (off_t)(len - 5)) == 0);
		for (int t = 0; t < 4; t++) {
			struct vpa_npy a;
			struct vpa_err err;
			vpa_err_init(&err);
			CHECK(vpa_npy_read_threads(path, &a, th[t], &err) == VPA_EINPUT);
			CHECK(strstr(err.msg, "truncated") != NULL);
		}
	}
	unlink(path);
	free(buf);
	free(d);
	free(f);
}

/* A numpy-written float32 file (header bytes as np.save writes them). */
static void test_npy_f32_and_versions(void)
{
	static unsigned char buf[4096];
	float f[4] = {0.1f, -2.5f, 3.0e38f, 1e-45f};
	size_t len = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
			      f, sizeof(f));
	struct vpa_npy a;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_npy_parse("a.npy", buf, len, &a, &err) == 0);
	CHECK(a.ndim == 1 && a.shape[0] == 4);
	if (a.data)
		for (int i = 0; i < 4; i++)
			CHECK(a.data[i] == (double)f[i]);
	vpa_npy_release(&a);
	/* versions 2.0 and 3.0, keys in another order, double quotes, spaces */
	double d[2] = {1, 2};
	for (int major = 2; major <= 3; major++) {
		len = make_npy(buf, major,
			       "{ \"shape\" : (1 , 2) , \"fortran_order\": False,'descr':'<f8'}",
			       d, sizeof(d));
		CHECK(vpa_npy_parse("a.npy", buf, len, &a, &err) == 0);
		CHECK(a.ndim == 2 && a.shape[0] == 1 && a.shape[1] == 2);
		if (a.data)
			CHECK(a.data[0] == 1 && a.data[1] == 2);
		vpa_npy_release(&a);
	}
	/* Python 2 longs */
	len = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }", d,
		       sizeof(d));
	CHECK(vpa_npy_parse("a.npy", buf, len, &a, &err) == 0);
	vpa_npy_release(&a);
	CHECK(err.status == 0);
}

/* Files large enough for the chunked float32 path (several 1 MiB chunks). */
static void test_npy_f32_file(void)
{
	size_t n = 700001;
	float *f = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		f[i] = (float)i * 0.5f - 1000.0f;
	unsigned char *buf = malloc(n * 4 + 256);
	char dict[128];
	snprintf(dict, sizeof(dict), "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu,), }", n);
	size_t len = make_npy(buf, 1, dict, f, n * 4);
	const char *path = tmpfile_with((const char *)buf, len, ".npy");
	struct vpa_npy a;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_npy_read(path, &a, &err) == 0);
	CHECK(a.ndim == 1 && a.shape[0] == n);
	int bad = 0;
	for (size_t i = 0; a.data && i < n; i++)
		bad += a.data[i] != (double)f[i];
	CHECK(bad == 0);
	vpa_npy_release(&a);
	/* and as a score list */
	double *x;
	size_t m;
	CHECK(vpa_read_score_list(path, &x, &m, &err) == 0);
	CHECK(m == n && x[n - 1] == (double)f[n - 1]);
	free(x);
	/* truncated by one element */
	path = tmpfile_with((const char *)buf, len - 4, ".npy");
	vpa_err_init(&err);
	CHECK(vpa_npy_read(path, &a, &err) == VPA_EINPUT && a.data == NULL);
	char exp[256];
	snprintf(exp, sizeof(exp), "%s: truncated: expected %zu bytes of data, found %zu", path,
		 n * 4, n * 4 - 4);
	CHECK_STR(err.msg, exp);
	free(buf);
	free(f);
	cleanup();
}

static void test_npy_errors(void)
{
	static unsigned char buf[4096];
	double d[3] = {1, 2, 3};
	size_t len;
#define NPY(major, dict, nbytes) make_npy(buf, major, dict, d, nbytes)
	len = NPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 16);
	CHECK_STR(npy_err(buf, len), "a.npy: truncated: expected 24 bytes of data, found 16");
	len = NPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: 8 unexpected bytes after the 16 bytes of data");
	len = NPY(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: big-endian dtype '>f8' is not supported: expected "
				     "'<f4' or '<f8' (use arr.astype('<f8'))");
	len = NPY(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 12);
	CHECK_STR(npy_err(buf, len), "a.npy: unsupported dtype '<i4': expected '<f4' or '<f8' "
				     "(float32 or float64, little-endian)");
	len = NPY(1, "{'descr': '=f8', 'fortran_order': False, 'shape': (3,), }", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: unsupported dtype '=f8': expected '<f4' or '<f8' "
				     "(float32 or float64, little-endian)");
	len = NPY(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3,), }", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: Fortran-order arrays are not supported: save a "
				     "C-order array (np.ascontiguousarray)");
	len = NPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 3), }", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: expected a 1-D or 2-D array, got shape (1, 1, 3)");
	len = NPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8);
	CHECK_STR(npy_err(buf, len), "a.npy: expected a 1-D or 2-D array, got shape ()");
	len = NPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3), }", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: bad .npy header: 'shape' must be a tuple: write (n,) not (n)");
	len = NPY(1, "{'descr': '<f8', 'shape': (3,), }", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: bad .npy header: missing key 'fortran_order'");
	len = NPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: bad .npy header: unexpected key 'x' (expected "
				     "'descr', 'fortran_order', 'shape')");
	len = NPY(1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3,)}", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: bad .npy header: duplicate key 'descr'");
	len = NPY(1, "{'descr': '<f8' 'fortran_order': False, 'shape': (3,)}", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: bad .npy header: expected ',' or '}' after a value");
	len = NPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-3,)}", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: bad .npy header: 'shape' must be a tuple of non-negative integers");
	len = NPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: bad .npy header: a dimension in 'shape' is too large");
	len = NPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: array too large: shape (4294967296, 4294967296)");
	len = NPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)} junk", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: bad .npy header: unexpected text after the dict");
	len = NPY(4, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}", 24);
	CHECK_STR(npy_err(buf, len), "a.npy: unsupported .npy version 4.0 (expected 1.0, 2.0 or 3.0)");
	CHECK_STR(npy_err((const unsigned char *)"\x93NUMPZ\x01\x00", 8),
		  "a.npy: not a .npy file (expected the \\x93NUMPY magic)");
	CHECK_STR(npy_err((const unsigned char *)"\x93NUMPY\x01\x00\x40", 9), "a.npy: truncated .npy header");
	CHECK_STR(npy_err((const unsigned char *)"\x93NUMPY\x01\x00\x40\x00{'descr'", 18),
		  "a.npy: truncated .npy header: expected 64 bytes, found 8");
	CHECK_STR(npy_err((const unsigned char *)"", 0),
		  "a.npy: not a .npy file (expected the \\x93NUMPY magic)");
#undef NPY
	/* a file with a header longer than the file */
	const char *path = tmpfile_with("\x93NUMPY\x01\x00\x40\x00{'de", 15, ".npy");
	struct vpa_npy a;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_npy_read(path, &a, &err) == VPA_EINPUT);
	char exp[256];
	snprintf(exp, sizeof(exp), "%s: truncated .npy header: expected 64 bytes, found 5", path);
	CHECK_STR(err.msg, exp);
	/* a text file named .npy */
	path = tmpfile_with("1.5\n", 4, ".npy");
	vpa_err_init(&err);
	CHECK(vpa_npy_read(path, &a, &err) == VPA_EINPUT);
	snprintf(exp, sizeof(exp), "%s: not a .npy file (expected the \\x93NUMPY magic)", path);
	CHECK_STR(err.msg, exp);
	cleanup();
}

static void test_list_npy(void)
{
	static unsigned char buf[4096];
	double d[4] = {0.5, -1, 2, 3};
	struct vpa_err err;
	double *x;
	size_t n, len;
	/* 1-D by magic, without the suffix */
	len = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", d, 32);
	const char *path = tmpfile_with((const char *)buf, len, ".scores");
	vpa_err_init(&err);
	CHECK(vpa_read_score_list(path, &x, &n, &err) == 0);
	CHECK(n == 4 && x && x[1] == -1 && x[3] == 3);
	free(x);
	/* 2-D with one column: rejected, naming the shape */
	len = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 1), }", d, 32);
	path = tmpfile_with((const char *)buf, len, ".npy");
	vpa_err_init(&err);
	CHECK(vpa_read_score_list(path, &x, &n, &err) == VPA_EINPUT && x == NULL);
	char exp[256];
	snprintf(exp, sizeof(exp), "%s: expected a 1-D array of scores, got shape (4, 1)", path);
	CHECK_STR(err.msg, exp);
	/* non-finite values, with their index */
	d[2] = NAN;
	len = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", d, 32);
	vpa_err_init(&err);
	CHECK(vpa_parse_score_list("l.npy", (const char *)buf, len, &x, &n, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "l.npy: element 2 (0-based) is not finite (nan)");
	d[2] = 2;
	d[3] = -INFINITY;
	len = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", d, 32);
	vpa_err_init(&err);
	CHECK(vpa_parse_score_list("l.npy", (const char *)buf, len, &x, &n, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "l.npy: element 3 (0-based) is not finite (inf)");
	/* ... but vpa_npy_parse itself accepts them (callers check embeddings) */
	struct vpa_npy a;
	vpa_err_init(&err);
	CHECK(vpa_npy_parse("l.npy", buf, len, &a, &err) == 0);
	CHECK(a.data && isinf(a.data[3]));
	vpa_npy_release(&a);
	/* empty */
	len = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }", d, 0);
	vpa_err_init(&err);
	CHECK(vpa_parse_score_list("l.npy", (const char *)buf, len, &x, &n, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "l.npy: no scores (the array is empty)");
	cleanup();
}

/* Files written by NumPy itself (tests/golden/io/README.md). */
static const char *golden_err(const char *file)
{
	static struct vpa_err err;
	char path[256];
	struct vpa_npy a;
	snprintf(path, sizeof(path), "tests/golden/io/%s", file);
	vpa_err_init(&err);
	if (vpa_npy_read(path, &a, &err) == 0) {
		vpa_npy_release(&a);
		return "";
	}
	/* drop the "tests/golden/io/" prefix */
	return strncmp(err.msg, "tests/golden/io/", 16) ? err.msg : err.msg + 16;
}

static void test_npy_numpy_files(void)
{
	struct vpa_npy a;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_npy_read("tests/golden/io/np_f4_1d.npy", &a, &err) == 0);
	CHECK(a.ndim == 1 && a.shape[0] == 4);
	if (a.data && a.shape[0] == 4) {
		CHECK(a.data[0] == (double)0.1f && a.data[1] == -2.5);
		CHECK(a.data[2] == (double)3e38f && a.data[3] == (double)1e-45f);
	}
	vpa_npy_release(&a);
	CHECK(vpa_npy_read("tests/golden/io/np_f8_2d.npy", &a, &err) == 0);
	CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3);
	for (int i = 0; a.data && i < 6; i++)
		CHECK(a.data[i] == i / 7.0);
	vpa_npy_release(&a);
	CHECK(vpa_npy_read("tests/golden/io/np_v2_f8.npy", &a, &err) == 0);
	CHECK(a.ndim == 1 && a.shape[0] == 2 && a.data && a.data[0] == 1.5 && a.data[1] == -0.25);
	vpa_npy_release(&a);
	CHECK(vpa_npy_read("tests/golden/io/np_v3_f4.npy", &a, &err) == 0);
	CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 2 && a.data && a.data[3] == 4);
	vpa_npy_release(&a);
	CHECK(err.status == 0);
	CHECK_STR(golden_err("np_be_f8.npy"), "np_be_f8.npy: big-endian dtype '>f8' is not "
					      "supported: expected '<f4' or '<f8' (use arr.astype('<f8'))");
	CHECK_STR(golden_err("np_fortran.npy"), "np_fortran.npy: Fortran-order arrays are not "
						"supported: save a C-order array (np.ascontiguousarray)");
	CHECK_STR(golden_err("np_i8.npy"), "np_i8.npy: unsupported dtype '<i8': expected '<f4' "
					   "or '<f8' (float32 or float64, little-endian)");
	double *x;
	size_t n;
	vpa_err_init(&err);
	CHECK(vpa_read_score_list("tests/golden/io/np_col.npy", &x, &n, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "tests/golden/io/np_col.npy: expected a 1-D array of scores, got shape (3, 1)");
}

int main(void)
{
	RUN(test_parse_double_forms);
	RUN(test_parse_double_hard);
	RUN(test_parse_double_random);
	RUN(test_scores_basic);
	RUN(test_scores_crlf);
	RUN(test_scores_one_class);
	RUN(test_scores_ids);
	RUN(test_scores_many_ids);
	RUN(test_scores_errors);
	RUN(test_scores_file_errors);
	RUN(test_key_join);
	RUN(test_key_errors);
	RUN(test_list_text);
	RUN(test_npy_roundtrip);
	RUN(test_npy_f32_and_versions);
	RUN(test_npy_f32_file);
	RUN(test_npy_errors);
	RUN(test_list_npy);
	RUN(test_npy_read_threads);
	RUN(test_npy_numpy_files);
	return DONE();
}
