/*
 * tests/unit/test_plot.c - the gnuplot driver (reports/plot*.c): quoting, the
 * process plumbing (large input and output, errors, a missing or failing
 * gnuplot), each figure type as SVG and PDF, the figure checks, the DET
 * clamping and the id prefixes of inlined SVG.  Needs gnuplot on PATH.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "reports/report.h"

static struct vpa_json *nums(const double *x, size_t n)
{
	struct vpa_json *a = vpa_json_arr();
	for (size_t i = 0; i < n; i++)
		vpa_json_push(a, vpa_json_num(x[i]));
	return a;
}

static struct vpa_json *det_fig(double eer)
{
	static const double pm[] = {1, 0.6, 0.35, 0.1, 0};
	static const double pf[] = {0, 0.1, 0.35, 0.6, 1};
	struct vpa_json *f = vpa_json_obj(), *ser = vpa_json_arr(), *s = vpa_json_obj();
	vpa_json_set_str(f, "type", "det");
	vpa_json_set_str(f, "id", "d");
	vpa_json_set_str(f, "title", "DET 'quoted' \\ back @_x");
	vpa_json_set_str(s, "name", "it's");
	vpa_json_set(s, "p_miss", nums(pm, 5));
	vpa_json_set(s, "p_fa", nums(pf, 5));
	vpa_json_set_num(s, "eer", eer);
	vpa_json_push(ser, s);
	vpa_json_set(f, "series", ser);
	return f;
}

static struct vpa_json *link_fig(void)
{
	static const double c[] = {-1, 0, 1, 2}, m[] = {0.05, 0.2, 0.5, 0.25}, n[] = {0.4, 0.4, 0.15, 0.05},
			    d[] = {0, 0, 0.5, 0.66};
	struct vpa_json *f = vpa_json_obj();
	vpa_json_set_str(f, "type", "linkability");
	vpa_json_set_str(f, "title", "Linkability");
	vpa_json_set(f, "centers", nums(c, 4));
	vpa_json_set(f, "p_mated", nums(m, 4));
	vpa_json_set(f, "p_non", nums(n, 4));
	vpa_json_set(f, "d_local", nums(d, 4));
	vpa_json_set_num(f, "dsys", 0.3);
	vpa_json_set_num(f, "omega", 1);
	return f;
}

static struct vpa_json *lines_fig(size_t npts, int logx)
{
	struct vpa_json *f = vpa_json_obj(), *ser = vpa_json_arr(), *s = vpa_json_obj();
	struct vpa_json *x = vpa_json_arr(), *y = vpa_json_arr();
	vpa_json_set_str(f, "type", "lines");
	vpa_json_set_str(f, "title", "Lines");
	vpa_json_set_str(f, "xlabel", "x");
	vpa_json_set_str(f, "ylabel", "y");
	vpa_json_set(f, "logx", vpa_json_bool(logx));
	for (size_t i = 0; i < npts; i++) {
		vpa_json_push(x, vpa_json_num((double)i + (logx ? 1 : 0)));
		vpa_json_push(y, i == 2 ? vpa_json_null() : vpa_json_num(sin((double)i / 10)));
	}
	vpa_json_set_str(s, "name", "sin");
	vpa_json_set(s, "x", x);
	vpa_json_set(s, "y", y);
	vpa_json_push(ser, s);
	vpa_json_set(f, "series", ser);
	return f;
}

static void test_quote(void)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_gnuplot_quote(&b, "it's a \\ \"x\"\nnext@_^");
	CHECK_STR(vpa_buf_str(&b), "'it''s a \\ \"x\" next@_^'");
	vpa_buf_release(&b);
}

/* What vpa_gnuplot_quote promises gnuplot evaluates: s with control
 * characters (and DEL) as spaces. */
static void expected_text(struct vpa_buf *b, const char *s)
{
	for (; *s; s++)
		vpa_buf_add(b, (unsigned char)*s < 0x20 || *s == 0x7f ? " " : s, 1);
}

/*
 * The quoting fuzzed against gnuplot itself: adversarial texts (leading
 * quotes, runs of quotes, backquotes, double quotes, backslashes at the end,
 * gnuplot syntax, control characters, UTF-8 and bytes that are not UTF-8,
 * a long text) and 400 random ones over an alphabet heavy in quotes go
 * through `print` in one gnuplot run (fork/exec, no shell) and must come
 * back byte for byte; then every one is used as a title, axis label, label,
 * tic label (vpa_gnuplot_quote_tic: a tic label is a format) and key entry of an SVG and a PDF plot, which must succeed.
 * Fails with the old quoting ('''B1' anonymiser' is a gnuplot syntax error).
 */
static void test_quote_gnuplot_roundtrip(void)
{
	static const char *const fixed[] = {
		"'B1' anonymiser", "'", "''", "'''", "''''", "a''b", "a'''b", "x'", "x''", "''x''",
		"it's", "`echo pwned`", "\"double\" `x`", "back\\", "\\", "a\\'b", "$data << EOD",
		"# not a comment", "; quit", "@_^{}&~", "tab\there", "new\nline", "cr\rlf\n",
		"\x01\x02\x1f\x7f", "\xc3\xa9t\xc3\xa9 \xe2\x86\x94 \xf0\x9f\x94\x92",
		"\xff\xfe\x80 not utf-8 \xc3", "sprintf('%c',39)", "%s %d %%", "", " ",
	};
	enum { N_FIXED = sizeof(fixed) / sizeof(fixed[0]), N_RANDOM = 400, N = N_FIXED + N_RANDOM + 1 };
	static const char alpha[] = "''''''ab \\\"`$#;@{}\t\n%";
	char *texts[N];
	struct vpa_rng rng;
	vpa_rng_seed(&rng, 20);
	for (size_t i = 0; i < N; i++) {
		if (i < N_FIXED) {
			texts[i] = strdup(fixed[i]);
		} else if (i < N_FIXED + N_RANDOM) {
			size_t len = (size_t)vpa_rng_below(&rng, 24);
			texts[i] = malloc(len + 1);
			for (size_t k = 0; k < len; k++) {
				uint64_t r = vpa_rng_below(&rng, 4);
				/* mostly the alphabet, sometimes any non-NUL byte */
				texts[i][k] = r ? alpha[vpa_rng_below(&rng, sizeof(alpha) - 1)]
						: (char)(1 + vpa_rng_below(&rng, 255));
			}
			texts[i][len] = '\0';
		} else {
			texts[i] = malloc(5001); /* a long text of quotes and letters */
			for (size_t k = 0; k < 5000; k++)
				texts[i][k] = k % 3 ? '\'' : 'q';
			texts[i][5000] = '\0';
		}
	}
	struct vpa_buf script, want, out;
	struct vpa_err err;
	vpa_buf_init(&script);
	vpa_buf_init(&want);
	vpa_buf_init(&out);
	vpa_err_init(&err);
	vpa_buf_puts(&script, "set print '-'\n");
	for (size_t i = 0; i < N; i++) {
		vpa_buf_puts(&script, "print ");
		vpa_gnuplot_quote(&script, texts[i]);
		vpa_buf_puts(&script, "\n");
		expected_text(&want, texts[i]);
		vpa_buf_puts(&want, "\n");
	}
	int rc = vpa_gnuplot_run(script.data, script.len, &out, &err);
	CHECK(rc == 0);
	if (rc)
		printf("#   %s\n", err.msg);
	CHECK(out.len == want.len && !memcmp(vpa_buf_str(&out), vpa_buf_str(&want), want.len));
	if (!rc && (out.len != want.len || memcmp(out.data, want.data, want.len))) {
		/* name the first text that did not come back */
		const char *a = vpa_buf_str(&out), *b = vpa_buf_str(&want);
		for (size_t i = 0; i < N; i++) {
			const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
			if (!ea || ea - a != eb - b || memcmp(a, b, (size_t)(eb - b))) {
				printf("#   text %zu did not round-trip\n", i);
				break;
			}
			a = ea + 1;
			b = eb + 1;
		}
	}
	static const char *const terms[] = {"set terminal svg noenhanced\nset output '/dev/null'\n",
					    "set terminal pdfcairo noenhanced\nset output '/dev/null'\n"};
	for (size_t t = 0; t < 2; t++) {
		vpa_buf_release(&script);
		vpa_buf_init(&script);
		vpa_buf_puts(&script, terms[t]);
		for (size_t i = 0; i < N; i += 7) {
			static const char *const sets[] = {"set title ", "set xlabel ", "set ylabel ",
							   "set label 1 "};
			for (size_t k = 0; k < 4; k++) {
				vpa_buf_puts(&script, sets[k]);
				vpa_gnuplot_quote(&script, texts[(i + k) % N]);
				vpa_buf_puts(&script, k == 3 ? " at graph 0.5, graph 0.5\n" : "\n");
			}
			vpa_buf_puts(&script, "set xtics (");
			vpa_gnuplot_quote_tic(&script, texts[(i + 4) % N]);
			vpa_buf_puts(&script, " 0, ");
			vpa_gnuplot_quote_tic(&script, texts[(i + 5) % N]);
			vpa_buf_puts(&script, " 1)\nplot [0:1] x title ");
			vpa_gnuplot_quote(&script, texts[(i + 6) % N]);
			vpa_buf_puts(&script, ", 1 - x title ");
			vpa_gnuplot_quote(&script, texts[i]);
			vpa_buf_puts(&script, "\n");
		}
		vpa_buf_release(&out);
		vpa_buf_init(&out);
		vpa_err_init(&err);
		rc = vpa_gnuplot_run(script.data, script.len, &out, &err);
		CHECK(rc == 0);
		if (rc)
			printf("#   %s\n", err.msg);
	}
	/* A tic label keeps its % (gnuplot reads it as a format) and its quotes. */
	vpa_buf_release(&script);
	vpa_buf_init(&script);
	vpa_buf_puts(&script, "set terminal svg noenhanced\nset xtics (");
	vpa_gnuplot_quote_tic(&script, "''50% 'q'");
	vpa_buf_puts(&script, " 0.5)\nplot [0:1] x notitle\n");
	vpa_buf_release(&out);
	vpa_buf_init(&out);
	CHECK(vpa_gnuplot_run(script.data, script.len, &out, &err) == 0);
	CHECK(strstr(vpa_buf_str(&out), ">''50% 'q'<") != NULL);
	for (size_t i = 0; i < N; i++)
		free(texts[i]);
	vpa_buf_release(&script);
	vpa_buf_release(&want);
	vpa_buf_release(&out);
}

static void test_run_and_errors(void)
{
	struct vpa_err err;
	struct vpa_buf out;
	vpa_err_init(&err);
	vpa_buf_init(&out);
	static const char ok[] = "set terminal svg\nplot x\n";
	CHECK(vpa_gnuplot_run(ok, strlen(ok), &out, &err) == 0);
	CHECK(out.len > 0 && strstr(vpa_buf_str(&out), "<svg") != NULL);

	/* A script error surfaces with gnuplot's own error line. */
	vpa_buf_release(&out);
	vpa_buf_init(&out);
	static const char bad[] = "set terminal svg\nset xrange [0:1]\nplot foo_undefined\n";
	CHECK(vpa_gnuplot_run(bad, strlen(bad), &out, &err) == VPA_EIO);
	CHECK(!strncmp(err.msg, "gnuplot failed: line ", 21));
	CHECK(strstr(err.msg, "undefined variable: foo_undefined") != NULL);

	vpa_err_init(&err);
	static const char bad2[] = "set terminal svg\nset foo\n";
	CHECK(vpa_gnuplot_run(bad2, strlen(bad2), &out, &err) == VPA_EIO);
	CHECK(strstr(err.msg, "unrecognized option") != NULL);
	vpa_buf_release(&out);
}

/* Several runs at once: separate outputs; the first failing run (by index) reports. */
static void test_run_many(void)
{
	static const char *const scripts[3] = {"set terminal svg\nplot x\n",
					       "set terminal pdfcairo\nplot x**2\n",
					       "set terminal svg\nset xrange [0:1]\nplot nope_b\n"};
	size_t lens[3];
	struct vpa_buf outs[3];
	struct vpa_err err;
	for (int i = 0; i < 3; i++) {
		lens[i] = strlen(scripts[i]);
		vpa_buf_init(&outs[i]);
	}
	vpa_err_init(&err);
	CHECK(vpa_gnuplot_run_many(scripts, lens, 2, outs, &err) == 0);
	CHECK(outs[0].len && strstr(vpa_buf_str(&outs[0]), "<svg") && !strstr(outs[0].data, "%PDF"));
	CHECK(outs[1].len > 4 && !memcmp(outs[1].data, "%PDF", 4));
	CHECK(vpa_gnuplot_run_many(scripts, lens, 3, outs, &err) == VPA_EIO);
	CHECK(strstr(err.msg, "undefined variable: nope_b") != NULL);
	for (int i = 0; i < 3; i++)
		vpa_buf_release(&outs[i]);
}

/* Large input and large output at once: the poll loop must not deadlock. */
static void test_large_io(void)
{
	struct vpa_err err;
	struct vpa_buf out;
	vpa_err_init(&err);
	vpa_buf_init(&out);
	struct vpa_json *f = lines_fig(60000, 0);
	double t0 = vpa_now();
	CHECK(vpa_plot_render(f, "svg", &out, &err) == 0);
	CHECK(out.len > 1000000); /* 60k points as SVG path text */
	CHECK(vpa_now() - t0 < 60);
	vpa_json_free(f);
	vpa_buf_release(&out);
}

static char *make_tmpdir(void)
{
	char tmpl[] = "/tmp/vpa_test_plot.XXXXXX";
	char *d = mkdtemp(tmpl);
	return d ? xstrdup(d) : NULL;
}

static void test_missing_and_failing_gnuplot(void)
{
	char *dir = make_tmpdir();
	CHECK(dir != NULL);
	if (!dir)
		return;
	char *saved = xstrdup(getenv("PATH") ? getenv("PATH") : "");
	struct vpa_err err;
	struct vpa_buf out;
	vpa_buf_init(&out);

	setenv("PATH", dir, 1);
	vpa_err_init(&err);
	struct vpa_json *f = det_fig(0.2);
	CHECK(vpa_plot_render(f, "svg", &out, &err) == VPA_EIO);
	CHECK_STR(err.msg, "gnuplot not found: install gnuplot-nox or run with --no-plots");

	/* A "gnuplot" that fails without reading its (large) input. */
	struct vpa_buf p;
	vpa_buf_init(&p);
	vpa_buf_printf(&p, "%s/gnuplot", dir);
	FILE *g = fopen(p.data, "w");
	CHECK(g != NULL);
	if (g) {
		fputs("#!/bin/sh\necho 'fatal: broken on purpose' >&2\nexit 3\n", g);
		fclose(g);
		chmod(p.data, 0755);
		struct vpa_json *big = lines_fig(200000, 0);
		vpa_err_init(&err);
		CHECK(vpa_plot_render(big, "svg", &out, &err) == VPA_EIO);
		CHECK_STR(err.msg, "gnuplot failed: fatal: broken on purpose");
		vpa_json_free(big);
		remove(p.data);
	}
	/* An executable that is not a regular file is skipped: a folder. */
	mkdir(p.data, 0755);
	vpa_err_init(&err);
	CHECK(vpa_plot_render(f, "svg", &out, &err) == VPA_EIO);
	CHECK_STR(err.msg, "gnuplot not found: install gnuplot-nox or run with --no-plots");
	rmdir(p.data);
	setenv("PATH", saved, 1);
	rmdir(dir);
	vpa_json_free(f);
	vpa_buf_release(&p);
	vpa_buf_release(&out);
	free(saved);
	free(dir);
}

static void render_both(struct vpa_json *f)
{
	struct vpa_err err;
	struct vpa_buf svg, pdf;
	vpa_err_init(&err);
	vpa_buf_init(&svg);
	vpa_buf_init(&pdf);
	CHECK(vpa_plot_render(f, "svg", &svg, &err) == 0);
	CHECK(svg.len > 0 && strstr(vpa_buf_str(&svg), "<svg") != NULL);
	CHECK(svg.len > 0 && strstr(svg.data, "</svg>") != NULL);
	CHECK(vpa_plot_render(f, "pdf", &pdf, &err) == 0);
	CHECK(pdf.len > 4 && !memcmp(pdf.data, "%PDF", 4));
	if (err.status)
		printf("#   %s\n", err.msg);
	vpa_buf_release(&svg);
	vpa_buf_release(&pdf);
}

static void test_figure_types(void)
{
	struct vpa_json *f[] = {det_fig(0.2), det_fig(0.45), link_fig(), lines_fig(30, 0),
				lines_fig(30, 1)};
	for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++) {
		render_both(f[i]);
		vpa_json_free(f[i]);
	}
	/* The title with quotes and backslashes reaches the SVG verbatim (escaped for XML). */
	struct vpa_json *d = det_fig(0.2);
	struct vpa_buf svg;
	struct vpa_err err;
	vpa_buf_init(&svg);
	vpa_err_init(&err);
	CHECK(vpa_plot_render(d, "svg", &svg, &err) == 0);
	CHECK(svg.len && strstr(vpa_buf_str(&svg), "DET 'quoted' \\ back @_x") != NULL);
	CHECK(svg.len && strstr(svg.data, "it's (EER 20.00%)") != NULL);
	vpa_buf_release(&svg);
	vpa_json_free(d);
}

/* One distinct x (a single repetition count): the x range is set around it
 * (gnuplot warns "empty x range" otherwise); several x: autoscaled. */
static void test_single_x(void)
{
	const struct {
		size_t n;
		int logx;
		const char *want;
	} cases[] = {{1, 0, "set xrange [-1:1]\n"}, {1, 1, "set xrange [0.5:2]\n"},
		     {30, 0, NULL}, {30, 1, NULL}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct vpa_json *f = lines_fig(cases[i].n, cases[i].logx);
		struct vpa_buf s;
		struct vpa_err err;
		vpa_buf_init(&s);
		vpa_err_init(&err);
		CHECK(vpa_plot_script(f, "t", &s, &err) == 0);
		if (cases[i].want)
			CHECK(strstr(vpa_buf_str(&s), cases[i].want) != NULL);
		else
			CHECK(strstr(vpa_buf_str(&s), "set xrange") == NULL);
		/* one point: one y (sin 0 = 0) */
		CHECK((cases[i].n == 1) == (strstr(vpa_buf_str(&s), "set yrange") != NULL));
		if (cases[i].n == 1)
			CHECK(strstr(vpa_buf_str(&s), "set yrange [-1:1]\n") != NULL);
		if (cases[i].n == 1)
			render_both(f);
		vpa_buf_release(&s);
		vpa_json_free(f);
	}
}

/* An empty figure still renders (a "no data" frame), and so do undefined values. */
static void test_empty_figures(void)
{
	struct vpa_json *f = vpa_json_obj();
	vpa_json_set_str(f, "type", "lines");
	vpa_json_set(f, "series", vpa_json_arr());
	render_both(f);
	vpa_json_free(f);
	f = vpa_json_obj();
	vpa_json_set_str(f, "type", "det");
	vpa_json_set(f, "series", vpa_json_arr());
	render_both(f);
	vpa_json_free(f);
	f = link_fig();
	vpa_json_set(f, "dsys", vpa_json_null());
	render_both(f);
	vpa_json_free(f);
}

static void test_det_clamping(void)
{
	struct vpa_err err;
	struct vpa_buf s;
	vpa_err_init(&err);
	vpa_buf_init(&s);
	/* EER <= 30%: axes 0.1%..40%; p = 0 and p = 1 go to the limits. */
	struct vpa_json *f = det_fig(0.2);
	CHECK(vpa_plot_script(f, "t", &s, &err) == 0);
	CHECK(strstr(vpa_buf_str(&s), "$t_s0 << EOD\n0.001 0.4\n0.1 0.4\n0.35 0.35\n0.4 0.1\n0.4 0.001\nEOD\n") != NULL);
	CHECK(strstr(s.data, "set xrange [invnorm(0.001):invnorm(0.4)]") != NULL);
	CHECK(strstr(s.data, "'0.1' invnorm(0.001)") != NULL);
	CHECK(strstr(s.data, "'40' invnorm(0.4)") != NULL);
	CHECK(strstr(s.data, "$t_e0 << EOD\n0.2\nEOD\n") != NULL);
	vpa_json_free(f);
	/* EER > 30%: axes 0.1%..99.9%. */
	s.len = 0;
	f = det_fig(0.45);
	CHECK(vpa_plot_script(f, "t", &s, &err) == 0);
	CHECK(strstr(vpa_buf_str(&s), "$t_s0 << EOD\n0.001 0.999\n0.1 0.6\n") != NULL);
	CHECK(strstr(s.data, "set yrange [invnorm(0.001):invnorm(0.999)]") != NULL);
	/* issue 25 item 4h: no 2%/98% tics beside 1%/99% (their labels ran into
	 * each other), and the key outside the plot (inside it hid the curves'
	 * lower-left part; an opaque key is drawn twice, duplicating SVG ids) */
	CHECK(strstr(s.data, "'98' invnorm(0.98)") == NULL && strstr(s.data, "'2' invnorm(0.02)") == NULL);
	CHECK(strstr(s.data, "'99' invnorm(0.99)") != NULL && strstr(s.data, "'95' invnorm(0.95)") != NULL);
	CHECK(strstr(s.data, "set key outside right top") != NULL);
	CHECK(strstr(s.data, "opaque") == NULL);
	vpa_json_free(f);
	/* No "eer": the crossing of the curve, here max(0.35, 0.35), picks the wide axes. */
	s.len = 0;
	f = det_fig(0.2);
	vpa_json_set(vpa_json_get(f, "series")->items[0], "eer", vpa_json_null());
	CHECK(vpa_plot_script(f, "t", &s, &err) == 0);
	CHECK(strstr(vpa_buf_str(&s), "set xrange [invnorm(0.001):invnorm(0.999)]") != NULL);
	CHECK(strstr(s.data, "$t_e0") == NULL); /* no EER dot */
	vpa_json_free(f);
	vpa_buf_release(&s);
}

static void test_checks(void)
{
	struct vpa_err err;
	struct vpa_json *f = det_fig(0.1);
	vpa_err_init(&err);
	CHECK(vpa_plot_check(f, NULL, &err) == 0);
	/* unequal lengths */
	struct vpa_json *s = vpa_json_get(f, "series")->items[0];
	vpa_json_push(vpa_json_get(s, "p_fa"), vpa_json_num(0.5));
	CHECK(vpa_plot_check(f, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "figure 'd': series 1: 'p_fa' has 6 values but 'p_miss' has 5");
	vpa_json_free(f);

	f = link_fig();
	vpa_json_push(vpa_json_get(f, "p_non"), vpa_json_str("x"));
	vpa_err_init(&err);
	CHECK(vpa_plot_check(f, "r.json", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "r.json: figure 'linkability': 'p_non' must be an array of numbers");
	vpa_json_free(f);

	f = vpa_json_obj();
	vpa_json_set_str(f, "type", "pie");
	vpa_err_init(&err);
	CHECK(vpa_plot_check(f, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "figure 'pie': unknown type 'pie' (expected det, linkability, lines or bars)");
	vpa_json_set_str(f, "type", "lines");
	vpa_err_init(&err);
	CHECK(vpa_plot_check(f, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "figure 'lines': missing 'series'");
	vpa_json_free(f);

	/* A bad figure never reaches gnuplot. */
	f = link_fig();
	vpa_json_set(f, "centers", vpa_json_num(3));
	struct vpa_buf out;
	vpa_buf_init(&out);
	vpa_err_init(&err);
	CHECK(vpa_plot_render(f, "svg", &out, &err) == VPA_EINPUT);
	CHECK(out.len == 0);
	vpa_buf_release(&out);
	vpa_json_free(f);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_svgs_batch(void)
{
	struct vpa_json *f[3] = {det_fig(0.1), link_fig(), lines_fig(10, 0)};
	struct vpa_buf svgs[3];
	struct vpa_err err;
	vpa_err_init(&err);
	for (int i = 0; i < 3; i++)
		vpa_buf_init(&svgs[i]);
	CHECK(vpa_plot_svgs((const struct vpa_json *const *)f, 3, 5, svgs, &err) == 0);
	for (int i = 0; i < 3; i++) {
		const char *s = vpa_buf_str(&svgs[i]);
		CHECK(!strncmp(s, "<svg", 4)); /* prolog stripped */
		CHECK(count(s, "<svg") == 1);
		CHECK(count(s, "</svg>") == 1);
		CHECK(strstr(s, "<?xml") == NULL);
		char want[64];
		snprintf(want, sizeof(want), "id='vpa%d-gpDot'", 5 + i);
		CHECK(strstr(s, want) != NULL);
		/* every id and reference carries the prefix */
		CHECK(count(s, " id='") == count(s, " id='vpa"));
		CHECK(count(s, " id=\"") == count(s, " id=\"vpa"));
		CHECK(count(s, "href='#") == count(s, "href='#vpa"));
	}
	CHECK(strstr(svgs[1].data, "D\xe2\x86\x94sys = 0.300") != NULL);
	for (int i = 0; i < 3; i++) {
		vpa_buf_release(&svgs[i]);
		vpa_json_free(f[i]);
	}
}

static void test_plot_files(void)
{
	char *dir = make_tmpdir();
	CHECK(dir != NULL);
	if (!dir)
		return;
	struct vpa_buf base, p;
	vpa_buf_init(&base);
	vpa_buf_init(&p);
	vpa_buf_printf(&base, "%s/det", dir);
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *f = det_fig(0.2);
	CHECK(vpa_plot_files(f, base.data, &err) == 0);
	char *data = NULL;
	size_t len = 0;
	vpa_buf_printf(&p, "%s.svg", base.data);
	CHECK(vpa_read_file(p.data, &data, &len, &err) == 0 && strstr(data, "<svg"));
	free(data);
	remove(p.data);
	p.len = 0;
	vpa_buf_printf(&p, "%s.pdf", base.data);
	data = NULL;
	CHECK(vpa_read_file(p.data, &data, &len, &err) == 0 && len > 4 && !memcmp(data, "%PDF", 4));
	free(data);
	remove(p.data);
	CHECK(rmdir(dir) == 0); /* nothing else (no temporaries) was left */
	vpa_json_free(f);
	vpa_buf_release(&base);
	vpa_buf_release(&p);
	free(dir);
}

/* Categorical charts: bars named on the axis, on the figure's fixed scale. */
static void test_bars(void)
{
	static const char text[] =
		"{\"type\": \"bars\", \"id\": \"b\", \"title\": \"Linkability per attacker\","
		" \"ylabel\": \"linkability\", \"categories\": [\"baseline\", \"lazy_informed\"],"
		" \"yrange\": [0, 1], \"series\": [{\"name\": \"linkability\", \"y\": [0.9, null]}]}";
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *f = NULL;
	f = vpa_json_parse("b.json", text, strlen(text), &err);
	CHECK(f != NULL);
	if (!f)
		return;
	struct vpa_buf s;
	vpa_buf_init(&s);
	CHECK(vpa_plot_script(f, "t", &s, &err) == 0);
	const char *sc = vpa_buf_str(&s);
	CHECK(strstr(sc, "set xtics ('baseline' 0, 'lazy_informed' 1) scale 0") != NULL);
	CHECK(strstr(sc, "set yrange [0:1]") != NULL);
	CHECK(strstr(sc, "with boxes") != NULL);
	/* the undefined value has no bar: one data line */
	CHECK(strstr(sc, "$t_b0 << EOD\n0 0.9\nEOD\n") != NULL);
	struct vpa_buf svg;
	vpa_buf_init(&svg);
	CHECK(vpa_plot_render(f, "svg", &svg, &err) == 0);
	CHECK(strstr(vpa_buf_str(&svg), ">baseline<") != NULL);
	CHECK(strstr(vpa_buf_str(&svg), ">lazy_informed<") != NULL);
	vpa_buf_release(&svg);
	vpa_buf_release(&s);
	/* a category without a value, a reversed range */
	vpa_json_push(vpa_json_get(f, "categories"), vpa_json_str("x"));
	CHECK(vpa_plot_check(f, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "figure 'b': series 1: 'y' has 2 values but there are 3 categories");
	vpa_json_free(f);
	static const char bad[] = "{\"type\": \"bars\", \"id\": \"c\", \"categories\": [\"a\"],"
				  " \"yrange\": [1, 0], \"series\": [{\"y\": [1]}]}";
	vpa_err_init(&err);
	f = vpa_json_parse("c.json", bad, strlen(bad), &err);
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(vpa_plot_check(f, NULL, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "figure 'c': 'yrange' must be [low, high] with low < high");
	vpa_json_free(f);
}

int main(void)
{
	RUN(test_bars);
	RUN(test_quote);
	RUN(test_quote_gnuplot_roundtrip);
	RUN(test_run_and_errors);
	RUN(test_run_many);
	RUN(test_large_io);
	RUN(test_missing_and_failing_gnuplot);
	RUN(test_figure_types);
	RUN(test_empty_figures);
	RUN(test_single_x);
	RUN(test_det_clamping);
	RUN(test_checks);
	RUN(test_svgs_batch);
	RUN(test_plot_files);
	return DONE();
}
