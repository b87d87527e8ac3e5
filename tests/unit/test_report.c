/*
 * tests/unit/test_report.c - the report writers (reports/write.c, text.c,
 * render.c, html.c, junit.c, pdf_doc.c, table.c): escaping, number
 * formatting, the results check with its messages, one <svg> per figure, the
 * SIMULATED banner, JUnit failure counts and escaping, the PDF, and
 * vpa_report_write's all-or-nothing file writing.  Uses tests/golden/reports/results.json (see its README).
 */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "reports/report.h"
#include "reports/doc.h"

#define GOLDEN "tests/golden/reports/results.json"

static struct vpa_json *load_text(const char *name, const char *text, struct vpa_err *err)
{
	return vpa_json_parse(name, text, strlen(text), err);
}

static struct vpa_json *golden(void)
{
	struct vpa_err err;
	char *text = NULL;
	size_t len = 0;
	vpa_err_init(&err);
	if (vpa_read_file(GOLDEN, &text, &len, &err)) {
		printf("#   %s\n", err.msg);
		return NULL;
	}
	struct vpa_json *r = vpa_json_parse(GOLDEN, text, len, &err);
	if (!r)
		printf("#   %s\n", err.msg);
	free(text);
	return r;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Occurrences in binary data (PDF streams contain NUL bytes). */
static size_t count_mem(const char *hay, size_t len, const char *needle)
{
	size_t n = 0, m = strlen(needle);
	for (const char *p = hay, *end = hay + len; (p = memmem(p, (size_t)(end - p), needle, m)); p++)
		n++;
	return n;
}

static void test_escape(void)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_xml_escape(&b, "<a href=\"x\">&'\x01ok</a>");
	CHECK_STR(vpa_buf_str(&b), "&lt;a href=&quot;x&quot;&gt;&amp;&#39; ok&lt;/a&gt;");
	b.len = 0;
	vpa_xml_escape(&b, "plain \xc3\xa9t\xc3\xa9");
	CHECK_STR(vpa_buf_str(&b), "plain \xc3\xa9t\xc3\xa9");
	vpa_buf_release(&b);
}

static void fmt_case(const char *key, struct vpa_json *v, const char *want)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_report_fmt(&b, key, v);
	CHECK_STR(vpa_buf_str(&b), want);
	vpa_buf_release(&b);
	vpa_json_free(v);
}

static struct vpa_json *pair(double a, double b)
{
	struct vpa_json *x = vpa_json_arr();
	vpa_json_push(x, vpa_json_num(a));
	vpa_json_push(x, vpa_json_num(b));
	return x;
}

static void test_format(void)
{
	fmt_case("eer", vpa_json_num(0.1), "10.00%");
	fmt_case("eer", vpa_json_num(0.123456), "12.35%");
	fmt_case("eer", vpa_json_num(0), "0.00%");
	fmt_case("eer", vpa_json_num(0.00001), "0.001%");
	fmt_case("eer", vpa_json_null(), "undefined");
	fmt_case("eer", NULL, "undefined");
	fmt_case("eer_sweep", vpa_json_num(0.5), "50.00%");
	fmt_case("eer_threshold", vpa_json_num(-0.4), "-0.4");
	fmt_case("eer_sweep_threshold", vpa_json_num(1.25), "1.25");
	fmt_case("top1", vpa_json_num(1), "100.00%");
	fmt_case("false_accept_rate", vpa_json_num(0.02), "2.00%");
	fmt_case("n_target", vpa_json_num(900), "900");
	fmt_case("n_target", vpa_json_num(2.5), "2.5");
	fmt_case("reps", vpa_json_num(1000), "1000");
	fmt_case("cllr", vpa_json_num(0.123456), "0.1235");
	fmt_case("cllr", vpa_json_num(2.1), "2.1");
	fmt_case("cllr", vpa_json_num(1), "1");
	fmt_case("cllr", vpa_json_num(-0.0), "0");
	fmt_case("cllr", vpa_json_num(-0.00001), "-1e-05");
	fmt_case("cllr", vpa_json_num(0.00004), "4e-05");
	fmt_case("cllr", vpa_json_num(123456.789), "123456.789");
	fmt_case("cllr", vpa_json_num(1234567.5), "1.235e+06");
	fmt_case("linkability", vpa_json_num(0.42), "0.42");
	fmt_case("zebra.dece", vpa_json_num(0.02), "0.02");
	fmt_case("zebra.category", vpa_json_str("C"), "C");
	fmt_case("x.eer", vpa_json_num(0.25), "25.00%");
	fmt_case("flag", vpa_json_bool(1), "true");
	fmt_case("eer", pair(0.06, 0.1), "[6.00%, 10.00%]");
	fmt_case("linkability", pair(0.37, 0.46), "[0.37, 0.46]");
}

static void check_msg(const char *text, const char *want)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = load_text("r.json", text, &err);
	CHECK(r != NULL);
	if (!r) {
		printf("#   %s\n", err.msg);
		return;
	}
	CHECK(vpa_report_check(r, "r.json", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, want);
	vpa_json_free(r);
}

#define HEAD "{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"}, "

static void test_check(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *g = golden();
	CHECK(g && vpa_report_check(g, GOLDEN, &err) == 0);
	vpa_json_free(g);

	check_msg("[1]", "r.json:1:1: expected a JSON object at the top level");
	check_msg("{}", "r.json: missing 'schema'");
	check_msg("{\n  \"schema\": \"vpaudit.results/2\"}",
		  "r.json:2:13: unsupported schema 'vpaudit.results/2' (expected 'vpaudit.results/1')");
	check_msg("{\"schema\": 1}", "r.json:1:12: 'schema' must be a string");
	check_msg("{\"schema\": \"vpaudit.results/1\"}", "r.json: missing 'scenario'");
	check_msg("{\"schema\": \"vpaudit.results/1\", \"scenario\": {}}",
		  "r.json:1:45: scenario: missing 'name'");
	check_msg(HEAD "\"attacks\": []}", "r.json: missing 'records'");
	check_msg(HEAD "\"records\": []}", "r.json: missing 'attacks'");
	check_msg(HEAD "\"attacks\": [], \"records\": {}}", "r.json:1:86: 'records' must be an array");
	check_msg(HEAD "\"attacks\": [{\"id\": \"a\"}], \"records\": [{\"attack\": \"a\"}]}",
		  "r.json:1:98: record 1: missing 'metrics'");
	check_msg(HEAD "\"attacks\": [{\"id\": \"a\"}], \"records\": [{\"attack\": \"b\", \"metrics\": {}}]}",
		  "r.json:1:109: record 1: attack 'b' is not in 'attacks'");
	check_msg(HEAD "\"attacks\": [{\"id\": \"a\", \"figures\": [{\"type\": \"bar\"}]}], \"records\": []}",
		  "r.json:1:105: figure 'bar': unknown type 'bar' (expected det, linkability, lines or bars)");
	check_msg(HEAD "\"attacks\": [], \"records\": [], \"gates\": [{\"attack\": \"a\", \"metric\": \"eer\"}]}",
		  "r.json:1:100: gate 1: missing 'pass'");
	check_msg(HEAD "\"attacks\": [], \"records\": [], \"warnings\": [3]}",
		  "r.json:1:103: warning 1 must be a string");
	check_msg(HEAD "\"attacks\": [], \"records\": [], \"targets\": [{\"id\": \"t\", \"simulated\": 1}]}",
		  "r.json:1:127: target 1: 'simulated' must be true or false");
	/* issue 26 item 7: what `vpaudit gate` refuses too (vpa_results_check) */
	check_msg(HEAD "\"attacks\": [{\"id\": \"a\"}], \"records\": [{\"attack\": \"a\", \"layer\": 1, \"metrics\": {}},"
		  "\n{\"attack\": \"a\", \"layer\": 2, \"metrics\": {}}, {\"attack\": \"a\", \"layer\": 1, \"metrics\": {}}]}",
		  "r.json:2:45: record 3 has the same (attack, sub, layer, sweep) as record 1: a [layer 1]");
	check_msg(HEAD "\"attacks\": [{\"id\": \"a\"}], \"records\": [{\"attack\": \"a\", \"metrics\": {\"eer\": \"0.1\"}}]}",
		  "r.json:1:133: record 1: metric 'eer' must be a number or null, got a string");
	check_msg(HEAD "\"attacks\": [{\"id\": \"a\"}], \"records\": [{\"attack\": \"a\", \"layer\": \"3\", \"metrics\": {}}]}",
		  "r.json:1:123: record 1: 'layer' must be a number or null");
	struct vpa_json *ok = load_text("r.json", HEAD "\"attacks\": [{\"id\": \"a\"}], \"records\": [{\"attack\": \"a\","
					" \"metrics\": {\"zebra\": {\"category\": \"C\"}, \"reliable\": true, \"x\": null}}]}", &err);
	CHECK(ok && vpa_results_check(ok, "r.json", &err) == 0);
	vpa_json_free(ok);
}

static void test_tables(void)
{
	struct vpa_json *g = golden();
	CHECK(g != NULL);
	if (!g)
		return;
	struct vpa_table t;
	vpa_table_gates(g, &t);
	CHECK(t.n_rows == 3 && t.n_cols == 6);
	CHECK_STR(t.cells[0 * 6 + 3], "30.00%");
	CHECK_STR(t.cells[0 * 6 + 4], ">= 30.00%");
	CHECK_STR(t.cells[0 * 6 + 5], "PASS");
	CHECK_STR(t.cells[1 * 6 + 4], "<= 0.1");
	CHECK_STR(t.cells[1 * 6 + 5], "FAIL");
	CHECK_STR(t.cells[2 * 6 + 2], "3");
	CHECK_STR(t.cells[2 * 6 + 3], "undefined");
	CHECK(t.row_class[0] == VPA_ROW_PASS && t.row_class[1] == VPA_ROW_FAIL &&
	      t.row_class[2] == VPA_ROW_FAIL);
	vpa_table_release(&t);

	vpa_table_attack(g, "eval", &t);
	CHECK(t.n_rows == 4);
	CHECK(t.n_key == 2);
	/* labels, then each metric with its CI right after it, nested keys flattened */
	static const char *const heads[] = {"attacker / condition", "targets.sim<1>.leakage", "n_target",
					    "n_nontarget", "eer", "eer 95% CI", "eer_threshold", "cllr",
					    "cllr_min", "linkability", "linkability 95% CI", "min_dcf",
					    "zebra.dece", "zebra.log10_lr_worst", "zebra.category"};
	CHECK(t.n_cols == sizeof(heads) / sizeof(*heads));
	for (size_t c = 0; c < t.n_cols && c < sizeof(heads) / sizeof(*heads); c++)
		CHECK_STR(t.head[c], heads[c]);
	CHECK_STR(t.cells[0 * t.n_cols + 0], "ignorant");
	CHECK_STR(t.cells[0 * t.n_cols + 4], "35.00%");
	CHECK_STR(t.cells[0 * t.n_cols + 5], "-"); /* no CI for that record */
	CHECK_STR(t.cells[1 * t.n_cols + 5], "[6.00%, 10.00%]");
	CHECK_STR(t.cells[1 * t.n_cols + 14], "C");
	CHECK(t.numeric[4] && !t.numeric[0] && !t.numeric[14]);
	CHECK_STR(t.note, "95% confidence intervals by bootstrap-trials (1000 replicates).");
	vpa_table_release(&t);

	vpa_table_attack(g, "layers", &t);
	CHECK(t.n_rows == 6 && t.n_key == 2);
	CHECK_STR(t.head[0], "layer");
	CHECK_STR(t.cells[2 * t.n_cols + 3], "undefined"); /* accuracy null at layer 3 */
	vpa_table_release(&t);

	vpa_table_attack(g, "nosuch", &t);
	CHECK(t.n_rows == 0);
	vpa_table_release(&t);
	vpa_json_free(g);
}

/* A record's short labels ("notes") appear once under its attack's table. */
static void test_table_record_notes(void)
{
	const char *txt =
		"{\"records\": ["
		"{\"attack\": \"t\", \"sub\": \"central\", \"metrics\": {\"epsilon\": 39.1, "
		"\"epsilon_deployment\": 2}, \"notes\": [\"epsilon: this run; "
		"epsilon_deployment: the stated population\"]},"
		"{\"attack\": \"t\", \"sub\": \"central_local\", \"metrics\": {\"epsilon\": 39.1}, "
		"\"notes\": [\"epsilon: this run; epsilon_deployment: the stated population\"]}]}";
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = vpa_json_parse("n.json", txt, strlen(txt), &err);
	CHECK(r != NULL);
	if (!r)
		return;
	struct vpa_table t;
	vpa_table_attack(r, "t", &t);
	CHECK(t.n_rows == 2);
	CHECK_STR(t.note, "Epsilon: this run; epsilon_deployment: the stated population.");
	vpa_table_release(&t);
	vpa_json_free(r);
}

static void test_html(void)
{
	struct vpa_json *g = golden();
	CHECK(g != NULL);
	if (!g)
		return;
	struct vpa_err err;
	struct vpa_buf h;
	vpa_err_init(&err);
	vpa_buf_init(&h);
	CHECK(vpa_report_html(g, 0, &h, &err) == 0);
	const char *s = vpa_buf_str(&h);
	CHECK(vpa_count_figures(g) == 4);
	CHECK(count(s, "<svg") == 4);
	CHECK(count(s, "</svg>") == 4);
	CHECK(count(s, "<figure") == 4);
	/* self-contained: no script, no external resource */
	CHECK(strstr(s, "<script") == NULL);
	CHECK(strstr(s, "src=") == NULL);
	CHECK(strstr(s, "<link") == NULL);
	CHECK(strstr(s, "@import") == NULL);
	CHECK(strstr(s, "url(http") == NULL);
	CHECK(strstr(s, "href=\"http") == NULL && strstr(s, "href='http") == NULL);
	CHECK(strstr(s, "@media print") != NULL);
	/* escaping of strings from the results */
	CHECK(strstr(s, "&lt;b&gt;escaped&lt;/b&gt; &amp; &quot;quoted&quot;") != NULL);
	CHECK(strstr(s, "<b>escaped") == NULL);
	CHECK(strstr(s, "sim&lt;1&gt;") != NULL);
	CHECK(strstr(s, "sim<1>") == NULL);
	CHECK(strstr(s, "3 duplicate trials &lt;ignored&gt;") != NULL);
	/* banner, summary first, verdicts */
	CHECK(strstr(s, "class=\"banner\"") != NULL);
	CHECK(strstr(s, "<strong>SIMULATED</strong>") != NULL);
	const char *summary = strstr(s, "id=\"summary\""), *attack = strstr(s, "id=\"attack-1\"");
	CHECK(summary && attack && summary < attack);
	CHECK(count(s, "<tr class=\"fail\">") == 2);
	CHECK(count(s, "<tr class=\"pass\">") == 1);
	CHECK(strstr(s, "3 gates, 2 failed.") != NULL);
	/* figures sit inside their attack's section, the sweep figure after the attacks */
	const char *det = strstr(s, "id=\"fig-eval-det\""), *a2 = strstr(s, "id=\"attack-2\"");
	const char *sweep = strstr(s, "id=\"fig-sweep-eer\"");
	CHECK(det && a2 && sweep && attack < det && det < a2 && a2 < sweep);

	/* --no-plots: no SVG, a note instead */
	h.len = 0;
	CHECK(vpa_report_html(g, 1, &h, &err) == 0);
	s = vpa_buf_str(&h);
	CHECK(count(s, "<svg") == 0);
	CHECK(strstr(s, "2 figures omitted (--no-plots).") != NULL);
	CHECK(count(s, "1 figure omitted (--no-plots).") == 2);

	/* no simulated target: no banner */
	struct vpa_json *t = vpa_json_get(g, "targets");
	vpa_json_set(t->items[1], "simulated", vpa_json_bool(0));
	h.len = 0;
	CHECK(vpa_report_html(g, 1, &h, &err) == 0);
	CHECK(strstr(vpa_buf_str(&h), "class=\"banner\"") == NULL);
	vpa_buf_release(&h);
	vpa_json_free(g);
}

static void test_junit(void)
{
	struct vpa_json *g = golden();
	CHECK(g != NULL);
	if (!g)
		return;
	struct vpa_buf j;
	vpa_buf_init(&j);
	vpa_report_junit(g, &j);
	const char *s = vpa_buf_str(&j);
	static const char prolog[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ";
	CHECK(!strncmp(s, prolog, strlen(prolog)));
	CHECK(strstr(s, "<testsuite name=\"golden-report\" tests=\"3\" failures=\"2\"") != NULL);
	CHECK(count(s, "<testsuite ") == 1);
	CHECK(count(s, "<testcase ") == 3);
	CHECK(count(s, "<failure ") == 2);
	/* a passing case carries the measured value (issue 25 item 3); its name stays stable */
	CHECK(strstr(s, "<testcase classname=\"vpaudit.gates\" name=\"eval.ignorant eer &gt;= 0.3\" time=\"0\">\n"
			"      <system-out>eval.ignorant eer = 0.3 &gt;= 0.3 (worst sweep value 0.5)</system-out>\n"
			"    </testcase>\n") != NULL);
	CHECK(strstr(s, "<failure type=\"gate\" message=\"linkability = 0.42, bound &lt;= 0.1\">") != NULL);
	CHECK(strstr(s, "message=\"accuracy = undefined, bound &lt;= 0.6\"") != NULL);
	CHECK(strstr(s, "name=\"layers accuracy &lt;= 0.6 (layer 3)\"") != NULL);
	CHECK(strstr(s, "scenarios/golden.yaml:21:5: eval.lazy_informed linkability = 0.42 &gt; 0.1 &lt;leaky&gt; &amp; &quot;bad&quot;") != NULL);
	CHECK(strstr(s, "<leaky>") == NULL);

	/* no gates: one skipped case per attack with its values (a tests="0" file fails
	 * Jenkins' junit step; issue 25 item 3) */
	vpa_json_set(g, "gates", vpa_json_arr());
	j.len = 0;
	vpa_report_junit(g, &j);
	s = vpa_buf_str(&j);
	CHECK(strstr(s, "<testsuites name=\"vpaudit\" tests=\"2\" failures=\"0\"") != NULL);
	CHECK(strstr(s, "tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"2\"") != NULL);
	CHECK(count(s, "<testsuite ") == 1 && count(s, "<testcase") == 2 && count(s, "<skipped ") == 2);
	CHECK(strstr(s, "<testcase classname=\"vpaudit.attacks\" name=\"eval: no gate\" time=\"0\">\n"
			"      <skipped message=\"no gate checks attack &#39;eval&#39;: its values are measured, "
			"not checked\"/>\n      <system-out>eval.ignorant [sweep 0.1]: eer ") != NULL);
	CHECK(strstr(s, "name=\"[simulated] layers: no gate\"") != NULL || strstr(s, "name=\"layers: no gate\"") != NULL);
	CHECK(strstr(s, "tests=\"0\"") == NULL);
	/* an attack a gate checks has no such case */
	vpa_json_free(g);
	g = golden();
	{ /* only the two gates on eval */
		const struct vpa_json *all = vpa_json_get(g, "gates");
		struct vpa_json *two = vpa_json_arr();
		for (size_t i = 0; all && i < all->n && i < 2; i++)
			vpa_json_push(two, vpa_json_clone(all->items[i]));
		vpa_json_set(g, "gates", two);
	}
	j.len = 0;
	vpa_report_junit(g, &j);
	s = vpa_buf_str(&j);
	CHECK(count(s, "classname=\"vpaudit.attacks\"") == 1 && strstr(s, "layers: no gate\"") != NULL);
	vpa_buf_release(&j);
	vpa_json_free(g);
}

static void test_pdf(void)
{
	struct vpa_json *g = golden();
	CHECK(g != NULL);
	if (!g)
		return;
	struct vpa_err err;
	struct vpa_buf p;
	vpa_err_init(&err);
	vpa_buf_init(&p);
	CHECK(vpa_report_pdf(g, &p, &err) == 0);
	if (err.status)
		printf("#   %s\n", err.msg);
	CHECK(p.len > 4 && !memcmp(p.data, "%PDF", 4));
	/* title page, contents, at least one page per section */
	size_t pages = count_mem(p.data, p.len, "/Type /Page\n") + count_mem(p.data, p.len, "/Type /Page ") +
		       count_mem(p.data, p.len, "/Type /Page>");
	CHECK(pages >= 9);
	/* one /Pages tree, an outline, the metadata, and real text: the font is embedded */
	CHECK(count_mem(p.data, p.len, "/Type /Pages") >= 1);
	CHECK(count_mem(p.data, p.len, "/Outlines") >= 1);
	CHECK(count_mem(p.data, p.len, "/Title (golden-report)") == 1);
	CHECK(count_mem(p.data, p.len, "/Author (vpaudit)") == 1);
	CHECK(count_mem(p.data, p.len, "/FontFile") >= 1);
	vpa_buf_release(&p);
	vpa_json_free(g);
}

/* The document model: sections with stable ids, in reading order, filled from the results. */
static void test_doc(void)
{
	struct vpa_json *g = golden();
	CHECK(g != NULL);
	if (!g)
		return;
	struct vpa_doc d;
	vpa_doc_build(g, &d);
	static const char *const ids[] = {"summary", "threat-model", "results", "limitations",
					  "recommendations", "glossary", "data"};
	size_t at[7];
	for (int k = 0; k < 7; k++) {
		at[k] = (size_t)-1;
		for (size_t i = 0; i < d.n; i++)
			if (d.b[i].kind == VPA_B_HEAD && d.b[i].id && !strcmp(d.b[i].id, ids[k]))
				at[k] = i;
		CHECK(at[k] != (size_t)-1);
		/* every section has content of its own */
		CHECK(at[k] + 1 < d.n && d.b[at[k] + 1].kind != VPA_B_HEAD);
	}
	for (int k = 1; k < 7; k++)
		CHECK(at[k - 1] < at[k]);
	CHECK(d.status == VPA_P_FAIL);
	CHECK(strstr(d.verdict, "FAIL: 2 of 3 gates failed") != NULL);
	CHECK_STR(d.title, "golden-report");
	CHECK(d.simulated && strstr(d.simulated, "sim<1>"));
	vpa_doc_release(&d);
	vpa_json_free(g);
}

/* With results["baseline"] (run --baseline, schema of reports/README.md
 * "Baseline comparison"), a comparison section, regressions first. */
static void test_compare(void)
{
	struct vpa_json *g = golden();
	CHECK(g != NULL);
	if (!g)
		return;
	static const char bl[] =
		"{\"file\": \"old/results.json\", \"matched\": 2, \"records\": 3, \"regressions\": 1,"
		" \"unmatched\": [{\"attack\": \"eval\"}], \"comparisons\": ["
		"  {\"attack\": \"eval\", \"sub\": \"ignorant\", \"metric\": \"eer\", \"old\": 0.3,"
		"   \"new\": 0.31, \"delta\": 0.01, \"status\": \"stable\"},"
		"  {\"attack\": \"eval\", \"sub\": \"lazy_informed\", \"metric\": \"eer\", \"old\": 0.12,"
		"   \"new\": 0.08, \"delta\": -0.04, \"status\": \"regression\"}]}";
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_json_set(g, "baseline", vpa_json_parse("bl.json", bl, strlen(bl), &err));
	struct vpa_buf h;
	vpa_buf_init(&h);
	vpa_html_assemble(g, 1, NULL, &h);
	const char *s = vpa_buf_str(&h);
	const char *sec = strstr(s, "id=\"comparison\"");
	CHECK(sec != NULL);
	CHECK(strstr(s, "Compared with the earlier run old/results.json (2 of 3 records matched): 1 value "
			"went up, 1 went down; 1 moved in the leaky direction") != NULL);
	CHECK(strstr(s, "1 record could not be matched") != NULL);
	/* regressions first */
	const char *reg = strstr(s, "<td>eval.lazy_informed</td><td>eer</td><td class=\"num\">12.00%</td>");
	const char *st = reg ? strstr(reg, "<tr><td>eval.ignorant</td><td>eer</td><td class=\"num\">30.00%</td>") : NULL;
	CHECK(sec && reg && st && sec < reg);
	CHECK(strstr(s, "-4.00%") != NULL && strstr(s, "+1.00%") != NULL);
	vpa_buf_release(&h);
	/* without it, no such section */
	vpa_json_set(g, "baseline", vpa_json_null());
	h.len = 0;
	vpa_html_assemble(g, 1, NULL, &h);
	CHECK(strstr(vpa_buf_str(&h), "id=\"comparison\"") == NULL);
	vpa_buf_release(&h);
	vpa_json_free(g);
}

/* The threat-model section of reports/README.md is the one the code generates. */
static void test_threat_docs(void)
{
	struct vpa_buf md;
	vpa_buf_init(&md);
	vpa_threat_markdown(&md);
	char *text = NULL;
	size_t len = 0;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_read_file("reports/README.md", &text, &len, &err) == 0);
	const char *b = text ? strstr(text, "<!-- threat-model: begin") : NULL;
	const char *e = text ? strstr(text, "<!-- threat-model: end -->") : NULL;
	CHECK(b && e && b < e);
	if (b && e) {
		b = strchr(b, '\n') + 1;
		int same = (size_t)(e - b) == md.len && !memcmp(b, md.data, md.len);
		CHECK(same);
		if (!same)
			printf("#   reports/README.md threat model differs from vpa_threat_markdown():\n%s",
			       md.data);
	}
	free(text);
	vpa_buf_release(&md);
	/* lookups: the exact attacker, the kind's row, nothing */
	const struct vpa_threat *t = vpa_threat_find("linkage", "semi_informed");
	CHECK(t && t->retrained == 'y' && t->anon_enrol == 'y' && t->orig_enrol == 'n');
	t = vpa_threat_find("a1_footprint", "mu_sigma");
	CHECK(t && t->updates == 'y' && t->indicator == 'y');
	CHECK(vpa_threat_find("nosuch", "x") == NULL);
}


/* Every sentence of the report built from `json` (paragraphs, list items,
 * captions), one per line; caller frees.  For the sentence tests below. */
static char *doc_text(const char *json)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = load_text("sent.json", json, &err);
	if (!r) {
		printf("#   %s\n", err.msg);
		return xstrdup("");
	}
	struct vpa_doc d;
	vpa_doc_build(r, &d);
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (size_t i = 0; i < d.n; i++) {
		if (d.b[i].text)
			vpa_buf_printf(&b, "%s\n", d.b[i].text);
		for (size_t k = 0; k < d.b[i].n_items; k++)
			vpa_buf_printf(&b, "%s\n", d.b[i].items[k]);
		const struct vpa_table *tb = d.b[i].kind == VPA_B_TABLE ? d.b[i].table : NULL;
		for (size_t k = 0; tb && k < tb->n_rows * tb->n_cols; k++)
			vpa_buf_printf(&b, "CELL %s\n", tb->cells[k] ? tb->cells[k] : "");
		for (size_t k = 0; tb && k < tb->n_cols; k++)
			vpa_buf_printf(&b, "HEAD %s\n", tb->head[k] ? tb->head[k] : "");
		if (tb && tb->note)
			vpa_buf_printf(&b, "%s\n", tb->note);
	}
	vpa_buf_printf(&b, "VERDICT %s\n", d.verdict ? d.verdict : "");
	vpa_doc_release(&d);
	vpa_json_free(r);
	char *t = xstrdup(vpa_buf_str(&b));
	vpa_buf_release(&b);
	return t;
}

#define FL_RESULTS(RECS)                                                                       \
	"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"                 \
	" \"targets\": [{\"id\": \"flv\", \"kind\": \"fl_speaker_classifier\", \"simulated\": true}],"\
	" \"attacks\": [{\"id\": \"tr\", \"kind\": \"fl_training\", \"target\": \"flv\"},"         \
	"  {\"id\": \"ln\", \"kind\": \"update_linkage\", \"target\": \"flv\"}],"                   \
	" \"gates\": [], \"records\": [" RECS "]}"

/* Issue 25 item 4a: every epsilon says what it protects and against whom;
 * central DP's epsilon is never offered as a bound on what the server learns
 * from the updates (update_linkage links them 99% of the time). */
static void test_dp_regime_sentences(void)
{
	char *t = doc_text(FL_RESULTS(
		"{\"attack\": \"tr\", \"sub\": \"central\", \"metrics\": {\"accuracy\": 0.34,"
		" \"epsilon\": 2, \"delta\": 1e-5, \"epsilon_central\": 2}},"
		"{\"attack\": \"tr\", \"sub\": \"local\", \"metrics\": {\"accuracy\": 0.14,"
		" \"epsilon\": 7.99, \"epsilon_local\": 2, \"delta\": 1e-5}},"
		"{\"attack\": \"ln\", \"sub\": \"central\", \"metrics\": {\"eer\": 0.01,"
		" \"linkability\": 0.94}},"
		"{\"attack\": \"ln\", \"sub\": \"local\", \"metrics\": {\"eer\": 0.44,"
		" \"linkability\": 0.05}}"));
	/* the old sentence: the regime bounds what a curious server learns */
	CHECK(strstr(t, "the DP regime bounds what it learns") == NULL);
	CHECK(strstr(t, "(moderate)") == NULL && strstr(t, "(strong)") == NULL);
	const char *c = strstr(t, "With the central regime, the model reaches 34.0% test accuracy with "
				  "epsilon 2 for this run, delta 1e-05. Central DP: the server adds "
				  "noise to the sum of a cohort's updates, so epsilon bounds what the "
				  "trained model reveals about a user to anyone who gets it; it does not "
				  "protect the updates the server sees before adding the noise.");
	CHECK(c != NULL);
	const char *l = strstr(t, "With the local regime, the model reaches 14.0% test accuracy with "
				  "epsilon 7.99 per user over this run's releases (2 per update), delta "
				  "1e-05. Local DP: each device adds noise before sending its update");
	CHECK(l != NULL);
	/* the central one only for central, the local one only for local */
	CHECK(count(t, "Central DP: the server adds noise") == 1);
	CHECK(count(t, "Local DP: each device adds noise") == 1);
	/* update linkage: central DP does not cover it, local DP does, once each */
	const char *ul = strstr(t, "A server that sees two model updates of the federated training "
				   "(central) decides correctly");
	CHECK(ul && strstr(ul, "Central DP does not cover this attack"));
	CHECK(count(t, "Central DP does not cover this attack") == 1);
	const char *ll = strstr(t, "(local) decides correctly whether two updates");
	CHECK(ll && strstr(ll, "Local DP covers this attack"));
	CHECK(count(t, "Local DP covers this attack") == 1);
	/* the glossary neither: no strong/moderate/weak ladder for every epsilon,
	 * and what central and local DP cover */
	CHECK(strstr(t, "up to 10 moderate") == NULL);
	CHECK(strstr(t, "a local epsilon per user or per update is on another scale") != NULL);
	CHECK(strstr(t, "central DP the trained model (not the updates a server sees before it adds "
			"the noise)") != NULL);
	/* the threat model's row for the training says the same */
	CHECK(strstr(t, "central DP only what the trained model reveals (not the updates the server "
			"sees)") != NULL);
	free(t);
	/* no regime named (another kind's record): no regime clause, no coverage sentence */
	t = doc_text(FL_RESULTS("{\"attack\": \"ln\", \"sub\": \"none\", \"metrics\": {\"eer\": 0.01}},"
				"{\"attack\": \"tr\", \"sub\": \"none\", \"metrics\": {\"accuracy\": 0.5}}"));
	CHECK(strstr(t, "cover this attack") == NULL && strstr(t, "covers this attack") == NULL);
	CHECK(strstr(t, "With the none regime (no differential privacy), the model reaches 50.0% test "
			"accuracy with no formal privacy guarantee.") != NULL);
	CHECK(strstr(t, "Central DP:") == NULL && strstr(t, "Local DP:") == NULL);
	free(t);
}


#define SC_RESULTS(RECS)                                                                       \
	"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"                 \
	" \"targets\": [{\"id\": \"sc\", \"kind\": \"scores\"}],"                                 \
	" \"attacks\": [{\"id\": \"ev\", \"kind\": \"evaluate\", \"target\": \"sc\"}],"            \
	" \"records\": [" RECS "]}"

/* Issue 25 item 4b: a linkability from fewer than 20 mated scores (one
 * histogram bin: the VoicePrivacy value is 0 whatever the scores) is "not
 * estimated" in the summary, never "0.00 (0: recordings cannot be linked)";
 * from 20 on (and null below 10: no sentence) as before. */
static void test_link_not_estimated(void)
{
	char *t = doc_text(SC_RESULTS(
		"{\"attack\": \"ev\", \"sub\": \"ignorant\", \"metrics\": {\"eer\": 0.08,"
		" \"n_target\": 14, \"linkability\": 0}},"
		"{\"attack\": \"ev\", \"sub\": \"lazy_informed\", \"metrics\": {\"eer\": 0.3,"
		" \"n_target\": 20, \"linkability\": 0}},"
		"{\"attack\": \"ev\", \"sub\": \"semi_informed\", \"metrics\": {\"eer\": 0.3,"
		" \"n_target\": 9, \"linkability\": null}}"));
	const char *a = strstr(t, "(ignorant) decides correctly");
	CHECK(a && strstr(a, "Its linkability D\u2194sys is not estimated: 14 mated scores (fewer "
			       "than 20) make one histogram bin, where it reads 0 whatever the scores."));
	CHECK(count(t, "is not estimated") == 1);
	/* 20 mated scores: two bins, an estimate (0 here), explained once */
	const char *b = strstr(t, "(lazy-informed) decides correctly");
	CHECK(b && strstr(b, "Its linkability D\u2194sys is 0.00 (0: recordings cannot be linked, 1: "
			       "fully linkable)."));
	CHECK(count(t, "Its linkability") == 2);
	free(t);
}


#define DX_RESULTS(RECS)                                                                       \
	"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"                 \
	" \"targets\": [{\"id\": \"tg\", \"kind\": \"tagger\"}],"                                 \
	" \"attacks\": [{\"id\": \"dx\", \"kind\": \"d_exposure\", \"target\": \"tg\"}],"          \
	" \"records\": [" RECS "]}"

/* Issue 25 item 4c: the d-exposure summary reads the canary label's value
 * against unseen control words (the quickstart: 2.57 vs 0.15 bits at 64
 * repetitions, confidence 0.08 -> 0.96), not the class average that falls
 * from 0.81 to 0.52; the verdict only where it holds. */
static void test_dexposure_sentences(void)
{
	char *t = doc_text(DX_RESULTS(
		"{\"attack\": \"dx\", \"sub\": \"k0\", \"metrics\": {\"d_exposure\": 0.8146,"
		" \"d_exposure_chance\": 0.555, \"d_exposure_label\": 0.0196, \"d_exposure_label_chance\":"
		" 0.1695, \"d_exposure_label_chance_p90\": 0.4086, \"d_exposure_NOUN\": 0.94,"
		" \"d_exposure_VERB\": 0.0196, \"repetitions\": 0, \"canary_conf_label\": 0.077}},"
		"{\"attack\": \"dx\", \"sub\": \"k64\", \"metrics\": {\"d_exposure\": 0.517,"
		" \"d_exposure_chance\": 0.7886, \"d_exposure_label\": 2.5656, \"d_exposure_label_chance\":"
		" 0.1492, \"d_exposure_label_chance_p90\": 0.3329, \"d_exposure_NOUN\": 0.0085,"
		" \"d_exposure_VERB\": 2.5656, \"repetitions\": 64, \"canary_conf_label\": 0.957}},"
		"{\"attack\": \"dx\", \"sub\": \"k8\", \"metrics\": {\"d_exposure\": 0.6,"
		" \"d_exposure_chance\": 0.5, \"d_exposure_label\": 0.6, \"d_exposure_label_chance\":"
		" 0.15, \"d_exposure_label_chance_p90\": 0.4, \"repetitions\": 8}}"));
	CHECK(strstr(t, "A sentence repeated 64 times in training: the tagger gives its canary word the "
			"inserted label VERB with confidence 96% (label d-exposure 2.57 bits; unseen "
			"control words: 0.15 bits, 90th percentile 0.33): the tagger has memorised the "
			"label of this sentence. Averaged over all classes the d-exposure is 0.52 bits "
			"(controls 0.79)") != NULL);
	CHECK(strstr(t, "A sentence repeated 0 times in training: the tagger gives its canary word the "
			"inserted label VERB with confidence 8% (label d-exposure 0.02 bits; unseen "
			"control words: 0.17 bits, 90th percentile 0.41): no more than for unseen "
			"sentences, not singled out.") != NULL);
	/* above the 90th percentile by less than a bit: partly, no label name found */
	CHECK(strstr(t, "A sentence repeated 8 times in training: the tagger gives its canary word the "
			"inserted label (label d-exposure 0.60 bits; unseen control words: 0.15 bits, "
			"90th percentile 0.40): above the unseen control words, partly memorised.") != NULL);
	CHECK(count(t, "has memorised the label") == 1);
	/* R4 fires on the label's value, for the memorised record only */
	CHECK(strstr(t, "dx: a sentence repeated 64 times reaches a d-exposure of 2.57 bits against "
			"0.15 for unseen ones") != NULL);
	CHECK(count(t, "[R4;") == 1);
	free(t);
	/* a record without the label's values: the class average, as before */
	t = doc_text(DX_RESULTS("{\"attack\": \"dx\", \"sub\": \"import\", \"metrics\": {"
				"\"d_exposure\": 2.5, \"d_exposure_chance\": 0.5, \"repetitions\": 4}}"));
	CHECK(strstr(t, "A sentence repeated 4 times in training has a d-exposure of 2.50 bits (unseen "
			"control sentences: 0.50 bits): the tagger remembers it.") != NULL);
	CHECK(strstr(t, "inserted label") == NULL);
	free(t);
}


#define ID_RESULTS(RECS)                                                                       \
	"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"                 \
	" \"targets\": [{\"id\": \"an\", \"kind\": \"anonymised_speech\"}],"                      \
	" \"attacks\": [{\"id\": \"id\", \"kind\": \"identification\", \"target\": \"an\"}],"    \
	" \"records\": [" RECS "]}"

/* Issue 25 item 4d: identification is said as picking a speaker out of the
 * population (not "at hidden layer 320", not a verification EER), top-1 and
 * top-10 both in % against chance; the recommendation quotes the same
 * (largest) population as the summary. */
static void test_ident_sentences(void)
{
	char *t = doc_text(ID_RESULTS(
		"{\"attack\": \"id\", \"sub\": \"baseline\", \"layer\": 20, \"metrics\": {"
		"\"population\": 20, \"eer\": 0.01, \"top1\": 0.98, \"top10\": 1}},"
		"{\"attack\": \"id\", \"sub\": \"baseline\", \"layer\": 320, \"metrics\": {"
		"\"population\": 320, \"eer\": 0.019, \"top1\": 0.8875, \"top10\": 0.995}},"
		"{\"attack\": \"id\", \"sub\": \"ignorant\", \"layer\": 320, \"metrics\": {"
		"\"population\": 320, \"eer\": 0.39, \"top1\": 0, \"top10\": 0.0025}},"
		"{\"attack\": \"id\", \"sub\": \"semi_informed\", \"layer\": 20, \"metrics\": {"
		"\"population\": 20, \"eer\": 0.12, \"top1\": 0.35, \"top10\": 1}},"
		"{\"attack\": \"id\", \"sub\": \"semi_informed\", \"layer\": 320, \"metrics\": {"
		"\"population\": 320, \"eer\": 0.188, \"top1\": 0.135, \"top10\": 0.3725}}"));
	CHECK(strstr(t, "hidden layer") == NULL);
	CHECK(strstr(t, "Without anonymisation, a speaker-verification attacker (baseline) picks the true "
			"speaker out of 320 people first time 88.8% of the time (chance 0.3%), and has "
			"them among its first 10 99.5% of the time (chance 3.1%): the speaker is singled "
			"out.") != NULL);
	CHECK(strstr(t, "(ignorant) picks the true speaker out of 320 people first time 0.0% of the "
			"time (chance 0.3%), and has them among its first 10 0.2% of the time (chance "
			"3.1%): no better than twice chance.") != NULL);
	const char *si = strstr(t, "(semi-informed) picks the true speaker out of 320 people first "
				   "time 13.5% of the time (chance 0.3%), and has them among its first 10 "
				   "37.2% of the time (chance 3.1%).");
	CHECK(si != NULL);
	/* only the largest population in the summary */
	CHECK(strstr(t, "out of 20 people") == NULL);
	/* R2 from the same population (EER 18.8% at 320, not 12.0% at 20) */
	CHECK(strstr(t, "reaches an EER of 18.8% in a population of 320") != NULL);
	CHECK(strstr(t, "12.0%") == NULL);
	free(t);
	/* top-k values in the tables in %, as top1 */
	struct vpa_buf b;
	vpa_buf_init(&b);
	struct vpa_json *v = vpa_json_num(0.3725);
	vpa_report_fmt(&b, "top10", v);
	CHECK_STR(vpa_buf_str(&b), "37.25%");
	b.len = 0;
	vpa_report_fmt(&b, "topk", v);
	CHECK_STR(vpa_buf_str(&b), "37.25%");
	vpa_json_free(v);
	vpa_buf_release(&b);
}


/* Issue 25 item 4g: with no gates, a risk rating per target instead of "No
 * verdict"; the references (baseline, none) and untrusted values not rated;
 * with gates, no rating. */
static void test_risk_rating(void)
{
#define RISK_RESULTS(GATES)                                                                    \
	"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"                 \
	" \"targets\": [{\"id\": \"an\", \"kind\": \"scores\"}, {\"id\": \"lm\","              \
	"  \"kind\": \"language_model\"}, {\"id\": \"am\", \"kind\": \"fl_acoustic_models\","    \
	"  \"simulated\": true}],"                                                                 \
	" \"attacks\": [{\"id\": \"ev\", \"kind\": \"evaluate\", \"target\": \"an\"},"          \
	"  {\"id\": \"ex\", \"kind\": \"exposure\", \"target\": \"lm\"},"                        \
	"  {\"id\": \"fp\", \"kind\": \"a1_footprint\", \"target\": \"am\"}],"                   \
	" \"gates\": " GATES ", \"records\": ["                                                   \
	"{\"attack\": \"ev\", \"sub\": \"baseline\", \"metrics\": {\"eer\": 0.01}},"            \
	"{\"attack\": \"ev\", \"sub\": \"ignorant\", \"metrics\": {\"eer\": 0.45}},"            \
	"{\"attack\": \"ev\", \"sub\": \"semi_informed\", \"metrics\": {\"eer\": 0.122}},"      \
	"{\"attack\": \"ex\", \"sub\": \"pin-x1\", \"metrics\": {\"exposure\": 4.7,"           \
	"  \"max_exposure\": 13.3}},"                                                              \
	"{\"attack\": \"fp\", \"sub\": \"mu\", \"layer\": 1, \"metrics\": {\"eer\": 0.07},"    \
	"  \"unreliable\": {\"eer\": \"19 target trials (fewer than 100)\"}}]}"
	char *t = doc_text(RISK_RESULTS("[]"));
	CHECK(strstr(t, "No verdict") == NULL);
	CHECK(strstr(t, "VERDICT No gates: the scenario requires nothing of the system") != NULL);
	CHECK(strstr(t, "an: MEDIUM (the strongest attack: ev (semi_informed) reaches an EER of "
			"12.2%).") != NULL);
	CHECK(strstr(t, "lm: LOW (the strongest attack: the canary pin-x1 reaches an exposure of 4.7 "
			"of at most 13.3 bits).") != NULL);
	CHECK(strstr(t, "am: not rated: no attack on it gave a value that can be trusted. 1 value "
			"that cannot be trusted (too few trials) is not rated. The target is "
			"simulated") != NULL);
	CHECK(strstr(t, "(baseline) reaches") == NULL); /* the reference is not rated */
	free(t);
	/* a gate: the verdict is PASS/FAIL and there is no rating */
	t = doc_text(RISK_RESULTS("[{\"attack\": \"ev\", \"metric\": \"eer\", \"min\": 0.1,"
				  " \"value\": 0.122, \"pass\": true}]"));
	CHECK(strstr(t, "VERDICT PASS: all 1 gate held") != NULL);
	CHECK(strstr(t, "Risk rating") == NULL && strstr(t, "MEDIUM") == NULL);
	free(t);
#undef RISK_RESULTS
}


/* Issue 25 item 4e: smaller sentences a DPO would repeat wrongly. */
static void test_smaller_sentences(void)
{
	/* linkability is not "links 36% of pairs"; pseudo-speaker advice only for
	 * the x-vector anonymiser (its info has "anonymiser"), not for McAdams */
	char *t = doc_text(
		"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"
		" \"targets\": [{\"id\": \"xv\", \"kind\": \"anonymised_speech\", \"info\":"
		"  {\"anonymiser\": {\"assignment\": \"speaker\"}}},"
		"  {\"id\": \"mc\", \"kind\": \"anonymised_speech\", \"info\": {\"audio\": {}}}],"
		" \"attacks\": [{\"id\": \"lx\", \"kind\": \"linkage\", \"target\": \"xv\"},"
		"  {\"id\": \"lm\", \"kind\": \"linkage\", \"target\": \"mc\"}],"
		" \"gates\": [], \"records\": ["
		"{\"attack\": \"lx\", \"sub\": \"lazy_informed\", \"metrics\": {\"eer\": 0.27,"
		" \"linkability\": 0.36}},"
		"{\"attack\": \"lx\", \"sub\": \"semi_informed\", \"metrics\": {\"eer\": 0.12}},"
		"{\"attack\": \"lm\", \"sub\": \"lazy_informed\", \"metrics\": {\"eer\": 0.27,"
		" \"linkability\": 0.4}},"
		"{\"attack\": \"lm\", \"sub\": \"semi_informed\", \"metrics\": {\"eer\": 0.15},"
		" \"unreliable\": {\"eer\": \"40 target trials (fewer than 100)\"}},"
		"{\"attack\": \"lm\", \"sub\": \"informed\", \"metrics\": {\"eer\": 0.1,"
		" \"linkability\": 0.2}, \"unreliable\": {\"linkability\": \"the integral over bin "
		"centres misses 0.21 of the histogram's 0.41 (see linkability_hist)\", \"eer\": \"40 target "
		"trials (fewer than 100)\"}},"
		"{\"attack\": \"lm\", \"sub\": \"baseline/trials_f\", \"trials\": \"trials_f\","
		" \"gender\": \"f\", \"metrics\": {\"eer\": 0.05, \"epsilon\": null},"
		" \"unreliable\": {\"epsilon\": \"undefined value\"}}]}");
	CHECK(strstr(t, "% of pairs") == NULL);
	CHECK(strstr(t, "lx: the lazy-informed attacker reaches a linkability of 0.36 (D\u2194sys, 0: "
			"recordings cannot be linked, 1: fully linkable): assign pseudo-speakers per "
			"utterance") != NULL);
	CHECK(strstr(t, "lm: the lazy-informed attacker reaches a linkability of 0.40 (D\u2194sys, 0: "
			"recordings cannot be linked, 1: fully linkable): anonymise each utterance with "
			"its own parameters") != NULL);
	CHECK(count(t, "pseudo-speakers") == 2); /* R1 and R2 of lx only */
	CHECK(strstr(t, "lx: the semi_informed attacker, who retrains on anonymised speech, reaches "
			"an EER of 12.0%: the anonymisation does not resist an attacker who knows the "
			"method. Use a stronger anonymisation (e.g. more distant pseudo-speakers") != NULL);
	/* one flagged metric: "This value"; two: "These values"; no jargon */
	CHECK(strstr(t, "This value cannot be trusted (eer: 40 target trials (fewer than 100)).") != NULL);
	CHECK(strstr(t, "These values cannot be trusted (linkability: the VoicePrivacy linkability "
			"leaves out part of what the score histogram shows (linkability_hist is "
			"higher); eer: 40 target trials (fewer than 100)).") != NULL);
	/* no sentence of the summary or the limitations keeps the jargon (the
	 * tables' notes and cells, for experts, may) */
	for (const char *ln = t; ln && *ln;) {
		const char *nl = strchr(ln, '\n');
		size_t len = nl ? (size_t)(nl - ln) : strlen(ln);
		int table = !strncmp(ln, "CELL ", 5) || !strncmp(ln, "* Values in grey", 16);
		CHECK(table || !memmem(ln, len, "integral over bin centres", 25));
		ln = nl ? nl + 1 : NULL;
	}
	/* per-gender records in words */
	CHECK(strstr(t, "Without anonymisation, a speaker-verification attacker (baseline), on female "
			"speakers only (trials_f), decides correctly") != NULL);
	CHECK(strstr(t, "baseline/trials_f'") == NULL);
	/* the undefined-value limitation names this attack's own value */
	CHECK(strstr(t, "lm: 1 value is undefined (shown as \"undefined\"), e.g. epsilon (no "
			"differential privacy was applied).") != NULL);
	free(t);
	/* exposure: 4.7 bits is above chance (a random canary averages 1.4 bits,
	 * reaches 4.7 one time in 26); 3.0 bits is within chance */
	t = doc_text(
		"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"s\"},"
		" \"targets\": [{\"id\": \"lm\", \"kind\": \"language_model\"}],"
		" \"attacks\": [{\"id\": \"ex\", \"kind\": \"exposure\", \"target\": \"lm\"}],"
		" \"records\": ["
		"{\"attack\": \"ex\", \"sub\": \"pin-x1\", \"metrics\": {\"exposure\": 4.7,"
		" \"max_exposure\": 13.3, \"insertions\": 1}},"
		"{\"attack\": \"ex\", \"sub\": \"pin-x0\", \"metrics\": {\"exposure\": 3.0,"
		" \"max_exposure\": 13.3, \"insertions\": 0}}]}");
	CHECK(strstr(t, "close to chance") == NULL);
	CHECK(strstr(t, "The canary pin-x1 inserted 1 time reaches an exposure of 4.7 bits of at most "
			"13.3 bits: above chance, a random canary ranks this high only 1 time in 26 (it "
			"averages 1.4 bits).") != NULL);
	CHECK(strstr(t, "The canary pin-x0 inserted 0 times reaches an exposure of 3.0 bits of at most "
			"13.3 bits: within chance, a random canary averages 1.4 bits and ranks this "
			"high 1 time in 20 or more.") != NULL);
	free(t);
}


/* Issue 25 item 4h: the PDF's column headers break between the parts of an
 * id, never inside a word with an inserted hyphen ("linkabilit-y",
 * "n_nontar-get"), and a noted cell keeps its '*' on the value's line.
 * Needs pdftotext (poppler-utils); skipped without it. */
static void test_pdf_headers(void)
{
	static const char text[] =
		"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"pdf-heads\"}, \"targets\": [{"
		"\"id\": \"anon\", \"kind\": \"scores\", \"simulated\": false}], \"attacks\": [{\"id\": \"asv\", "
		"\"kind\": \"evaluate\", \"target\": \"anon\"}], \"gates\": [], \"records\": [{\"attack\": \"asv"
		"\", \"sub\": \"ignorant\", \"layer\": null, \"metrics\": {\"n_target\": 200, \"n_nontarget\":"
		" 2000, \"eer\": 0.4546, \"eer_threshold\": -0.3701, \"eer_sweep\": 0.4646, \"cllr\": 1.0"
		"727, \"cllr_min\": 0.9686, \"linkability\": 0.08, \"min_dcf\": 0.975, \"zebra\": {\"dece\""
		": 0.0213, \"log10_lr_worst\": 0.8239, \"category\": \"A\"}, \"tied_fraction\": 0.065, \"l"
		"inkability_hist\": 0.08, \"linkability_reliable\": true}, \"ci\": {\"level\": 0.95, \"me"
		"thod\": \"bca\", \"eer\": [0.4446, 0.4746], \"linkability\": [0.06, 0.09], \"cllr_min\": "
		"[0.9586, 0.9886]}}, {\"attack\": \"asv\", \"sub\": \"lazy_informed\", \"layer\": null, \"me"
		"trics\": {\"n_target\": 200, \"n_nontarget\": 2000, \"eer\": 0.2719, \"eer_threshold\": -"
		"0.3701, \"eer_sweep\": 0.2819, \"cllr\": 0.8418, \"cllr_min\": 0.7675, \"linkability\": "
		"0.3585, \"min_dcf\": 0.975, \"zebra\": {\"dece\": 0.0213, \"log10_lr_worst\": 0.8239, \"c"
		"ategory\": \"A\"}, \"tied_fraction\": 0.065, \"linkability_hist\": 0.3585, \"linkability"
		"_reliable\": true}, \"ci\": {\"level\": 0.95, \"method\": \"bca\", \"eer\": [0.261899999999"
		"99997, 0.2919], \"linkability\": [0.33849999999999997, 0.3685], \"cllr_min\": [0.757"
		"5, 0.7875]}}, {\"attack\": \"asv\", \"sub\": \"semi_informed\", \"layer\": null, \"metrics\""
		": {\"n_target\": 200, \"n_nontarget\": 2000, \"eer\": 0.1225, \"eer_threshold\": -0.3701"
		", \"eer_sweep\": 0.1325, \"cllr\": 0.6921, \"cllr_min\": 0.4054, \"linkability\": 0.6813"
		", \"min_dcf\": 0.975, \"zebra\": {\"dece\": 0.0213, \"log10_lr_worst\": 0.8239, \"categor"
		"y\": \"A\"}, \"tied_fraction\": 0.065, \"linkability_hist\": 0.6813, \"linkability_relia"
		"ble\": true}, \"ci\": {\"level\": 0.95, \"method\": \"bca\", \"eer\": [0.1125, 0.1425], \"li"
		"nkability\": [0.6613, 0.6913], \"cllr_min\": [0.3954, 0.4254]}}]}";
	if (system("command -v pdftotext > /dev/null 2>&1") != 0) {
		printf("# skip - test_pdf_headers: pdftotext is not installed\n");
		return;
	}
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = load_text("heads.json", text, &err);
	CHECK(r != NULL);
	if (!r)
		return;
	struct vpa_buf pdf;
	vpa_buf_init(&pdf);
	CHECK(vpa_report_pdf(r, &pdf, &err) == 0);
	char path[] = "/tmp/vpa-test-heads-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, pdf.data, pdf.len) == (ssize_t)pdf.len);
		close(fd);
		char cmd[256];
		snprintf(cmd, sizeof cmd, "pdftotext '%s' -", path);
		FILE *f = popen(cmd, "r");
		struct vpa_buf out;
		vpa_buf_init(&out);
		char line[512];
		while (f && fgets(line, sizeof line, f))
			vpa_buf_puts(&out, line);
		if (f)
			pclose(f);
		const char *o = vpa_buf_str(&out);
		CHECK(strstr(o, "linkability") != NULL);
		CHECK(strstr(o, "linkabilit-") == NULL && strstr(o, "nontar-") == NULL &&
		      strstr(o, "thres-") == NULL && strstr(o, "swee-") == NULL &&
		      strstr(o, "frac-") == NULL && strstr(o, "de-\nce") == NULL);
		CHECK(strstr(o, "1.0727*") != NULL);
		vpa_buf_release(&out);
		unlink(path);
	}
	vpa_buf_release(&pdf);
	vpa_json_free(r);
}

/* Number of entries in a folder other than . and .. */
static int n_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void rm_dir(const char *dir)
{
	static const char *const names[] = {"results.json", "report.html", "report.pdf", "junit.xml"};
	struct vpa_buf p;
	vpa_buf_init(&p);
	for (int k = 0; k < 4; k++) {
		p.len = 0;
		vpa_buf_printf(&p, "%s/%s", dir, names[k]);
		remove(p.data);
	}
	rmdir(dir);
	vpa_buf_release(&p);
}

static void test_write(void)
{
	struct vpa_json *g = golden();
	CHECK(g != NULL);
	if (!g)
		return;
	char tmpl[] = "/tmp/vpa_test_report.XXXXXX";
	char *base = mkdtemp(tmpl);
	CHECK(base != NULL);
	if (!base) {
		vpa_json_free(g);
		return;
	}
	struct vpa_buf dir;
	vpa_buf_init(&dir);
	vpa_buf_printf(&dir, "%s/a/b", base);
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_report_write(g, dir.data, VPA_REPORT_ALL, 0, &err) == 0);
	CHECK(n_entries(dir.data) == 4);
	/* results.json reads back to the same text */
	struct vpa_buf p, again;
	vpa_buf_init(&p);
	vpa_buf_init(&again);
	vpa_buf_printf(&p, "%s/results.json", dir.data);
	char *text = NULL;
	size_t len = 0;
	CHECK(vpa_read_file(p.data, &text, &len, &err) == 0);
	vpa_json_write(&again, g, 2);
	vpa_buf_puts(&again, "\n");
	CHECK(text && len == again.len && !memcmp(text, again.data, len));
	free(text);
	rm_dir(dir.data);

	/* --no-plots: no PDF (warned), the rest written */
	vpa_err_init(&err);
	CHECK(vpa_report_write(g, dir.data, VPA_REPORT_ALL, 1, &err) == 0);
	CHECK(n_entries(dir.data) == 3);
	rm_dir(dir.data);

	/* a bad figure: an error and no file at all (not even results.json) */
	struct vpa_json *figs = vpa_json_get(g, "figures");
	vpa_json_set_str(figs->items[0], "type", "pie");
	vpa_err_init(&err);
	CHECK(vpa_report_write(g, dir.data, VPA_REPORT_ALL, 0, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "results: figure 'sweep-eer': unknown type 'pie' (expected det, linkability, lines or bars)");
	CHECK(n_entries(dir.data) == -1); /* not even created */
	vpa_json_set_str(figs->items[0], "type", "lines");

	/* gnuplot missing: nothing written either */
	char *saved = xstrdup(getenv("PATH") ? getenv("PATH") : "");
	setenv("PATH", base, 1);
	vpa_err_init(&err);
	CHECK(vpa_report_write(g, dir.data, VPA_REPORT_ALL, 0, &err) == VPA_EIO);
	CHECK_STR(err.msg, "gnuplot not found: install gnuplot-nox or run with --no-plots");
	CHECK(n_entries(dir.data) == -1);
	/* ... unless --no-plots */
	vpa_err_init(&err);
	CHECK(vpa_report_write(g, dir.data, VPA_REPORT_HTML | VPA_REPORT_JUNIT, 1, &err) == 0);
	CHECK(n_entries(dir.data) == 2);
	setenv("PATH", saved, 1);
	free(saved);
	rm_dir(dir.data);

	/* an outdir that is a file */
	p.len = 0;
	vpa_buf_printf(&p, "%s/file", base);
	FILE *f = fopen(p.data, "w");
	if (f)
		fclose(f);
	vpa_err_init(&err);
	CHECK(vpa_report_write(g, p.data, VPA_REPORT_JUNIT, 0, &err) == VPA_EIO);
	CHECK(strstr(err.msg, "/file: ") != NULL);
	remove(p.data);

	dir.len = 0;
	vpa_buf_printf(&dir, "%s/a", base);
	rmdir(dir.data);
	CHECK(rmdir(base) == 0 || (printf("#   %s not empty\n", base), 0));
	vpa_buf_release(&p);
	vpa_buf_release(&again);
	vpa_buf_release(&dir);
	vpa_json_free(g);
}

/*
 * Unreliable values are grey with their reason beside them, and a Cllr above
 * 1 bit says the scores are not calibrated (HTML: in the cell; PDF: a grey
 * label over the same baseline and a note under the table).
 */
static void test_unreliable_cells(void)
{
	static const char text[] =
		"{\"schema\": \"vpaudit.results/1\", \"scenario\": {\"name\": \"u\"},"
		" \"attacks\": [{\"id\": \"a\", \"kind\": \"evaluate\", \"figures\": []}],"
		" \"records\": ["
		"  {\"attack\": \"a\", \"sub\": \"p12\", \"metrics\": {\"eer\": 0, \"cllr\": 0.7,"
		"   \"linkability\": 0, \"zebra\": {\"dece\": 0.72}},"
		"   \"unreliable\": {\"linkability\": \"12 mated scores (fewer than 100)\","
		"                    \"zebra\": \"12 target trials (fewer than 100)\"}},"
		"  {\"attack\": \"a\", \"sub\": \"big\", \"metrics\": {\"eer\": 0.2, \"cllr\": 1.5,"
		"   \"linkability\": 0.3, \"zebra\": {\"dece\": 0.1}}, \"unreliable\": {}}],"
		" \"gates\": [], \"warnings\": []}";
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = load_text("u.json", text, &err);
	CHECK(r != NULL);
	if (!r)
		return;
	struct vpa_table t;
	vpa_table_attack(r, "a", &t);
	CHECK(t.n_rows == 2 && t.n_cols == 5); /* sub, eer, cllr, linkability, zebra.dece */
	int link = -1, dece = -1, cllr = -1, eer = -1;
	for (size_t c = 0; c < t.n_cols; c++) {
		if (!strcmp(t.head[c], "linkability"))
			link = (int)c;
		if (!strcmp(t.head[c], "zebra.dece"))
			dece = (int)c;
		if (!strcmp(t.head[c], "cllr"))
			cllr = (int)c;
		if (!strcmp(t.head[c], "eer"))
			eer = (int)c;
	}
	CHECK(link > 0 && dece > 0 && cllr > 0 && eer > 0);
	if (link > 0 && dece > 0 && cllr > 0 && eer > 0) {
		CHECK(t.cell_class[link] == VPA_CELL_UNRELIABLE);
		CHECK_STR(t.cell_note[link], "unreliable: 12 mated scores (fewer than 100)");
		CHECK(t.cell_class[dece] == VPA_CELL_UNRELIABLE); /* by its prefix "zebra" */
		CHECK(t.cell_class[eer] == VPA_CELL_PLAIN && t.cell_note[eer] == NULL);
		CHECK(t.cell_note[cllr] == NULL); /* 0.7 bits */
		CHECK(t.cell_class[t.n_cols + link] == VPA_CELL_PLAIN);
		CHECK(t.cell_note[t.n_cols + cllr] && strstr(t.cell_note[t.n_cols + cllr],
							     "not calibrated LLRs; read cllr_min"));
	}
	CHECK(t.cell_summary && strstr(t.cell_summary, "linkability - unreliable: 12 mated scores"));
	vpa_table_release(&t);

	struct vpa_buf h;
	vpa_buf_init(&h);
	vpa_html_assemble(r, 1, NULL, &h);
	const char *hs = vpa_buf_str(&h);
	CHECK(count(hs, "<td class=\"num unrel\"") == 2);
	/* the reason is the cell's tooltip, marked *, and gathered under the tables */
	CHECK(count(hs, "title=\"unreliable: 12 mated scores (fewer than 100)\"") == 1);
	CHECK(count(hs, "<sup class=\"why\">*</sup>") == 3); /* linkability, zebra.dece, cllr 1.5 */
	CHECK(count(hs, "* Values in grey cannot be trusted: linkability: 12 mated scores (fewer than "
			"100); zebra: 12 target trials (fewer than 100).") == 1);
	CHECK(count(hs, "* A cllr above 1 bit: the scores are not calibrated log-likelihood ratios; "
			"read cllr_min.") == 1);
	/* and the summary sentence of that attacker says it in words */
	CHECK(count(hs, "This value cannot be trusted (linkability: 12 mated scores (fewer than 100))") == 1);
	vpa_buf_release(&h);

	/* the PDF renders the same document (figures omitted without SVGs) */
	struct vpa_doc d;
	vpa_doc_build(r, &d);
	struct vpa_buf ps;
	vpa_buf_init(&ps);
	CHECK(vpa_pdf_doc(&d, NULL, 0, &ps, &err) == 0);
	CHECK(ps.len > 4 && !memcmp(ps.data, "%PDF", 4));
	vpa_buf_release(&ps);
	vpa_doc_release(&d);
	vpa_json_free(r);
}

int main(void)
{
	RUN(test_unreliable_cells);
	RUN(test_escape);
	RUN(test_format);
	RUN(test_check);
	RUN(test_tables);
	RUN(test_table_record_notes);
	RUN(test_html);
	RUN(test_junit);
	RUN(test_pdf);
	RUN(test_doc);
	RUN(test_compare);
	RUN(test_threat_docs);
	RUN(test_dp_regime_sentences);
	RUN(test_link_not_estimated);
	RUN(test_dexposure_sentences);
	RUN(test_ident_sentences);
	RUN(test_risk_rating);
	RUN(test_smaller_sentences);
	RUN(test_pdf_headers);
	RUN(test_write);
	return DONE();
}
