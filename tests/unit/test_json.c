/* tests/unit/test_json.c - the JSON DOM: builders, writer, parser. */
#include "base/json.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

/* Compact rendering of v (static buffer, for CHECK_STR). */
static const char *compact(const struct vpa_json *v)
{
	static char out[4096];
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_json_write(&b, v, 0);
	snprintf(out, sizeof(out), "%s", vpa_buf_str(&b));
	vpa_buf_release(&b);
	return out;
}

static const char *num_str(double x)
{
	struct vpa_json *v = vpa_json_num(x);
	const char *s = compact(v);
	vpa_json_free(v);
	return s;
}

static const char *parse_err(const char *text)
{
	static struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *v = vpa_json_parse("r.json", text, strlen(text), &err);
	if (v) {
		vpa_json_free(v);
		return "";
	}
	return err.status == VPA_EINPUT ? err.msg : "(wrong status)";
}

/* parse -> compact write */
static const char *reparse(const char *text)
{
	static struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *v = vpa_json_parse("r.json", text, strlen(text), &err);
	if (!v)
		return err.msg;
	const char *s = compact(v);
	vpa_json_free(v);
	return s;
}

static void test_numbers(void)
{
	CHECK_STR(num_str(0.1), "0.1");
	CHECK_STR(num_str(1e300), "1e+300");
	CHECK_STR(num_str(-0.0), "-0");
	CHECK_STR(num_str(123), "123");
	CHECK_STR(num_str(-42), "-42");
	CHECK_STR(num_str(1.5e-7), "1.5e-07");
	CHECK_STR(num_str(1.0 / 3.0), "0.3333333333333333");   /* 16 digits */
	CHECK_STR(num_str(0.1 + 0.2), "0.30000000000000004");   /* 17 digits */
	CHECK_STR(num_str(999999999999999.0), "999999999999999");
	CHECK_STR(num_str(1e15), "1e+15");
	CHECK_STR(num_str(123456789012.5), "123456789012.5");
	CHECK_STR(num_str(5e-324), "4.94065645841247e-324"); /* %.15g reads back */
	CHECK_STR(num_str(NAN), "null");
	CHECK_STR(num_str(INFINITY), "null");
	CHECK_STR(num_str(-INFINITY), "null");
	/* every written number reads back exactly */
	struct vpa_rng r;
	vpa_rng_seed(&r, 7);
	int bad = 0;
	for (int i = 0; i < 100000; i++) {
		uint64_t u = vpa_rng_u64(&r);
		double x;
		memcpy(&x, &u, 8);
		if (i % 3 == 0)
			x = vpa_rng_normal(&r) * pow(10, (double)vpa_rng_below(&r, 30) - 15);
		if (!isfinite(x))
			continue;
		const char *s = num_str(x);
		struct vpa_err err;
		vpa_err_init(&err);
		struct vpa_json *v = vpa_json_parse("n", s, strlen(s), &err);
		if (!v || v->type != VPA_JSON_NUM || memcmp(&v->num, &x, 8) != 0) {
			if (bad++ < 3)
				printf("#   %.17g written as %s\n", x, s);
		}
		vpa_json_free(v);
	}
	CHECK(bad == 0);
}

static void test_build_and_write(void)
{
	struct vpa_json *o = vpa_json_obj();
	vpa_json_set_str(o, "schema", "vpaudit.results/1");
	vpa_json_set_num(o, "eer", 0.25);
	struct vpa_json *a = vpa_json_arr();
	vpa_json_push(a, vpa_json_num(1));
	vpa_json_push(a, vpa_json_bool(1));
	vpa_json_push(a, vpa_json_null());
	vpa_json_push(a, vpa_json_obj());
	vpa_json_push(a, vpa_json_arr());
	vpa_json_set(o, "list", a);
	vpa_json_set_num(o, "cllr", NAN);
	CHECK_STR(compact(o), "{\"schema\":\"vpaudit.results/1\",\"eer\":0.25,"
			      "\"list\":[1,true,null,{},[]],\"cllr\":null}");
	/* replace in place keeps the position */
	vpa_json_set_num(o, "eer", 0.5);
	CHECK(o->n == 4);
	CHECK_STR(o->keys[1], "eer");
	CHECK(vpa_json_get_num(o, "eer", -1) == 0.5);
	CHECK(vpa_json_get_num(o, "missing", -1) == -1);
	CHECK(vpa_json_get_num(o, "schema", -1) == -1);
	CHECK_STR(vpa_json_get_str(o, "schema"), "vpaudit.results/1");
	CHECK(vpa_json_get_str(o, "eer") == NULL);
	CHECK(vpa_json_get(o, "list") == a);
	CHECK(vpa_json_get(a, "x") == NULL);
	CHECK(vpa_json_get(NULL, "x") == NULL);
	/* pretty */
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_json_write(&b, o, 2);
	CHECK_STR(vpa_buf_str(&b), "{\n"
				   "  \"schema\": \"vpaudit.results/1\",\n"
				   "  \"eer\": 0.5,\n"
				   "  \"list\": [\n"
				   "    1,\n"
				   "    true,\n"
				   "    null,\n"
				   "    {},\n"
				   "    []\n"
				   "  ],\n"
				   "  \"cllr\": null\n"
				   "}");
	/* clone is deep and equal */
	struct vpa_json *c = vpa_json_clone(o);
	vpa_json_set_num(o, "eer", 0.75);
	vpa_json_push(a, vpa_json_num(2));
	struct vpa_buf b2;
	vpa_buf_init(&b2);
	vpa_json_write(&b2, c, 2);
	CHECK_STR(vpa_buf_str(&b2), vpa_buf_str(&b));
	vpa_buf_release(&b);
	vpa_buf_release(&b2);
	vpa_json_free(c);
	vpa_json_free(o);
	vpa_json_free(NULL);
	/* NULL string -> null */
	struct vpa_json *n = vpa_json_str(NULL);
	CHECK(n->type == VPA_JSON_NULL);
	vpa_json_free(n);
}

static void test_string_escapes(void)
{
	struct vpa_json *s = vpa_json_str("a\"b\\c/d\b\f\n\r\t\x01\x1f\x7f é 漢 😀");
	CHECK_STR(compact(s), "\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\\u0001\\u001f\x7f é 漢 😀\"");
	vpa_json_free(s);
	/* invalid UTF-8 is replaced, so the output stays valid JSON */
	s = vpa_json_str("x\xff" "y\xc3(\xe2\x82");
	CHECK_STR(compact(s), "\"x\xef\xbf\xbdy\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\"");
	vpa_json_free(s);
	/* parser: escapes and surrogate pairs to UTF-8 */
	CHECK_STR(reparse("\"\\u00e9\\u6f22\\ud83d\\ude00\\/\\b\\u001F\""),
		  "\"é漢😀/\\b\\u001f\"");
	CHECK_STR(reparse("[\"\\\"\\\\\\n\"]"), "[\"\\\"\\\\\\n\"]");
}

static void test_round_trip(void)
{
	const char *docs[] = {
		"{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"},\"f\":-0.5,\"g\":1e-300}",
		"[]",
		"{}",
		"[[[[]]],{}]",
		"\"just a string\"",
		"3.14",
		"null",
		"{\"z\":1,\"a\":2,\"m\":3}", /* insertion order kept */
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(*docs); i++)
		CHECK_STR(reparse(docs[i]), docs[i]);
	/* whitespace, exponent forms, big numbers normalise */
	CHECK_STR(reparse(" \t\r\n{ \"a\" : [ 1 , 2.50 , 1E2 , -0 , 1e-7 ] }\n"),
		  "{\"a\":[1,2.5,100,-0,1e-07]}");
	CHECK_STR(reparse("\xef\xbb\xbf[1]"), "[1]"); /* BOM ignored */
	/* pretty output parses back to the same compact form */
	const char *doc = "{\"k\":[1,{\"x\":[],\"y\":\"z\"}],\"e\":{}}";
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *v = vpa_json_parse("r.json", doc, strlen(doc), &err);
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_json_write(&b, v, 4);
	CHECK_STR(reparse(vpa_buf_str(&b)), doc);
	vpa_buf_release(&b);
	vpa_json_free(v);
}

static void test_positions(void)
{
	const char *doc = "{\n  \"a\": 1,\n  \"b\": [\n    true, \"x\"\n  ]\n}";
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *v = vpa_json_parse("r.json", doc, strlen(doc), &err);
	CHECK(v != NULL);
	if (!v)
		return;
	CHECK(v->line == 1 && v->col == 1);
	struct vpa_json *a = vpa_json_get(v, "a"), *b = vpa_json_get(v, "b");
	CHECK(a && a->line == 2 && a->col == 8);
	CHECK(b && b->line == 3 && b->col == 8);
	if (b && b->n == 2) {
		CHECK(b->items[0]->line == 4 && b->items[0]->col == 5);
		CHECK(b->items[1]->line == 4 && b->items[1]->col == 11);
	}
	vpa_json_free(v);
}

static void test_parse_errors(void)
{
	CHECK_STR(parse_err(""), "r.json:1:1: empty input: expected a JSON value");
	CHECK_STR(parse_err("  \n "), "r.json:2:2: empty input: expected a JSON value");
	CHECK_STR(parse_err("[1,]"), "r.json:1:4: trailing comma before ']'");
	CHECK_STR(parse_err("{\"a\":1,}"), "r.json:1:8: trailing comma before '}'");
	CHECK_STR(parse_err("{\n  \"a\": 1,\n  \"a\": 2\n}"),
		  "r.json:3:3: duplicate key \"a\" (first at line 2)");
	CHECK_STR(parse_err("// c\n{}"), "r.json:1:1: comments are not allowed in JSON");
	CHECK_STR(parse_err("[1 /* c */]"), "r.json:1:4: expected ',' or ']', got '/'");
	CHECK_STR(parse_err("{\"a\" 1}"), "r.json:1:6: expected ':' after a key, got '1'");
	CHECK_STR(parse_err("{a:1}"), "r.json:1:2: expected a string key, got 'a'");
	CHECK_STR(parse_err("[1 2]"), "r.json:1:4: expected ',' or ']', got '2'");
	CHECK_STR(parse_err("[1"), "r.json:1:3: expected ',' or ']', got end of input");
	CHECK_STR(parse_err("{\"a\":"), "r.json:1:6: expected a value, got end of input");
	CHECK_STR(parse_err("\"abc"), "r.json:1:1: unterminated string");
	CHECK_STR(parse_err("[\"a\nb\"]"), "r.json:1:4: control character U+000A in a string (escape it)");
	CHECK_STR(parse_err("[\"a\tb\"]"), "r.json:1:4: control character U+0009 in a string (escape it)");
	CHECK_STR(parse_err("\"\\x\""), "r.json:1:2: invalid escape '\\x'");
	CHECK_STR(parse_err("\"\\u12G4\""), "r.json:1:2: invalid \\u escape: expected 4 hex digits");
	CHECK_STR(parse_err("\"\\ud83d\""), "r.json:1:2: unpaired surrogate \\ud83d");
	CHECK_STR(parse_err("\"\\ud83d\\u0041\""), "r.json:1:2: unpaired surrogate \\ud83d");
	CHECK_STR(parse_err("\"\\ude00\""), "r.json:1:2: unpaired surrogate \\ude00");
	CHECK_STR(parse_err("\"\\u0000\""), "r.json:1:2: \\u0000 is not allowed in strings");
	CHECK_STR(parse_err("\"\xff\""), "r.json:1:2: invalid UTF-8 in a string");
	CHECK_STR(parse_err("\"\xc0\xaf\""), "r.json:1:2: invalid UTF-8 in a string"); /* overlong */
	CHECK_STR(parse_err("\"\xed\xa0\x80\""), "r.json:1:2: invalid UTF-8 in a string"); /* surrogate */
	CHECK_STR(parse_err("01"), "r.json:1:1: invalid number: leading zero");
	CHECK_STR(parse_err("[1.]"), "r.json:1:2: invalid number: expected a digit after '.'");
	CHECK_STR(parse_err(".5"), "r.json:1:1: expected a value, got '.'");
	CHECK_STR(parse_err("+1"), "r.json:1:1: expected a value, got '+'");
	CHECK_STR(parse_err("-"), "r.json:1:1: invalid number: expected a digit");
	CHECK_STR(parse_err("1e"), "r.json:1:1: invalid number: expected a digit in the exponent");
	CHECK_STR(parse_err("1e999"), "r.json:1:1: number out of range");
	CHECK_STR(parse_err("[NaN]"),
		  "r.json:1:2: expected a value, got 'N' (NaN and Infinity are not JSON: use null)");
	CHECK_STR(parse_err("[Infinity]"),
		  "r.json:1:2: expected a value, got 'I' (NaN and Infinity are not JSON: use null)");
	CHECK_STR(parse_err("tru"), "r.json:1:1: expected a value, got 't'");
	CHECK_STR(parse_err("truex"), "r.json:1:1: expected a value, got 't'");
	CHECK_STR(parse_err("{} {}"), "r.json:1:4: unexpected '{' after the JSON value");
	CHECK_STR(parse_err("[1]\n\n  x"), "r.json:3:3: unexpected 'x' after the JSON value");
	CHECK_STR(parse_err("[\x01]"), "r.json:1:2: expected a value, got byte 0x01");
	/* NUL bytes: in the middle of the text, not the end of it */
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_json_parse("r.json", "[1]\0", 4, &err) == NULL);
	CHECK_STR(err.msg, "r.json:1:4: unexpected byte 0x00 after the JSON value");
	/* errors without an err context do not crash */
	CHECK(vpa_json_parse("r.json", "[", 1, NULL) == NULL);
}

static void test_depth(void)
{
	char buf[600];
	/* 256 nested arrays are fine, 257 are not */
	memset(buf, '[', 256);
	memset(buf + 256, ']', 256);
	buf[512] = '\0';
	CHECK_STR(parse_err(buf), "");
	memset(buf, '[', 257);
	memset(buf + 257, ']', 257);
	buf[514] = '\0';
	CHECK_STR(parse_err(buf), "r.json:1:257: nesting deeper than 256 levels");
	/* a deep document whose end is missing fails cleanly */
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (int i = 0; i < 100000; i++)
		vpa_buf_add(&b, "{\"a\":[", 6);
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_json_parse("r.json", b.data, b.len, &err) == NULL);
	CHECK(strstr(err.msg, "nesting deeper than 256 levels") != NULL);
	vpa_buf_release(&b);
}

int main(void)
{
	RUN(test_numbers);
	RUN(test_build_and_write);
	RUN(test_string_escapes);
	RUN(test_round_trip);
	RUN(test_positions);
	RUN(test_parse_errors);
	RUN(test_depth);
	return DONE();
}
