/*
 * bench/bench_report.c - rendering the report for 100 attack results
 * (issue 3: under 10 s).
 *
 * Builds a results DOM with 100 attacks, each with 2 records (metrics and
 * bootstrap CIs), a DET figure (2 series of 500 points) and a linkability
 * figure (100 bins), 100 gates and one scenario-level sweep figure (201
 * figures), then times vpa_report_write with every format (results.json,
 * report.html with 201 inline SVGs, a multi-page report.pdf, junit.xml).
 * Baselines measured in the same run: the same write without report.pdf
 * (results.json, report.html, junit.xml: the ratio is what typesetting the
 * PDF with cairo/Pango/librsvg costs on top), writing results.json alone,
 * and one DET figure rendered as SVG by its own gnuplot run (times 201 =
 * what one gnuplot process per figure would cost for the SVGs alone).
 * Exit status 1 when the budget is exceeded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/base.h"
#include "base/json.h"
#include "reports/report.h"

#define N_ATTACKS 100
#define N_DET 500
#define N_BINS 100
#define BUDGET_S 10.0

static double phi(double x)
{
	return 0.5 * erfc(-x / sqrt(2));
}

static struct vpa_json *det_series(const char *name, double eer)
{
	/* equal-variance Gaussian scores with the given EER */
	double d = 2 * 1.6448536269514722 * (0.5 - eer) / 0.45; /* a spread of curves */
	struct vpa_json *s = vpa_json_obj(), *pm = vpa_json_arr(), *pf = vpa_json_arr();
	for (int i = 0; i < N_DET; i++) {
		double t = -5 + 10.0 * i / (N_DET - 1);
		vpa_json_push(pm, vpa_json_num(phi(t - d / 2)));
		vpa_json_push(pf, vpa_json_num(1 - phi(t + d / 2)));
	}
	vpa_json_set_str(s, "name", name);
	vpa_json_set(s, "p_miss", pm);
	vpa_json_set(s, "p_fa", pf);
	vpa_json_set_num(s, "eer", eer);
	return s;
}

static struct vpa_json *det_figure(const char *id, double e1, double e2)
{
	struct vpa_json *f = vpa_json_obj(), *series = vpa_json_arr();
	char buf[64];
	snprintf(buf, sizeof(buf), "%s-det", id);
	vpa_json_set_str(f, "type", "det");
	vpa_json_set_str(f, "id", buf);
	snprintf(buf, sizeof(buf), "DET: %s", id);
	vpa_json_set_str(f, "title", buf);
	vpa_json_push(series, det_series("ignorant", e1));
	vpa_json_push(series, det_series("informed", e2));
	vpa_json_set(f, "series", series);
	return f;
}

static struct vpa_json *link_figure(const char *id, double shift)
{
	struct vpa_json *f = vpa_json_obj(), *c = vpa_json_arr(), *m = vpa_json_arr(),
			*n = vpa_json_arr(), *d = vpa_json_arr();
	char buf[64];
	snprintf(buf, sizeof(buf), "%s-link", id);
	vpa_json_set_str(f, "type", "linkability");
	vpa_json_set_str(f, "id", buf);
	vpa_json_set_str(f, "title", "Linkability: informed");
	for (int i = 0; i < N_BINS; i++) {
		double x = -4 + 8.0 * (i + 0.5) / N_BINS;
		double pm = exp(-0.5 * (x - shift) * (x - shift)) / sqrt(2 * M_PI);
		double pn = exp(-0.5 * x * x) / sqrt(2 * M_PI);
		vpa_json_push(c, vpa_json_num(x));
		vpa_json_push(m, vpa_json_num(pm));
		vpa_json_push(n, vpa_json_num(pn));
		vpa_json_push(d, vpa_json_num(pm > pn ? (pm - pn) / (pm + pn) : 0));
	}
	vpa_json_set(f, "centers", c);
	vpa_json_set(f, "p_mated", m);
	vpa_json_set(f, "p_non", n);
	vpa_json_set(f, "d_local", d);
	vpa_json_set_num(f, "dsys", shift / 4);
	vpa_json_set_num(f, "omega", 1);
	return f;
}

static struct vpa_json *record(const char *attack, const char *sub, double eer, double link)
{
	struct vpa_json *r = vpa_json_obj(), *m = vpa_json_obj(), *z = vpa_json_obj(), *ci = vpa_json_obj();
	vpa_json_set_str(r, "attack", attack);
	vpa_json_set_str(r, "sub", sub);
	vpa_json_set(r, "layer", vpa_json_null());
	vpa_json_set(r, "sweep", vpa_json_null());
	vpa_json_set_num(m, "n_target", 4696);
	vpa_json_set_num(m, "n_nontarget", 115563);
	vpa_json_set_num(m, "eer", eer);
	vpa_json_set_num(m, "eer_threshold", 0.1);
	vpa_json_set_num(m, "cllr", 0.9);
	vpa_json_set_num(m, "cllr_min", 0.8);
	vpa_json_set_num(m, "linkability", link);
	vpa_json_set_num(m, "min_dcf", 0.95);
	vpa_json_set_num(z, "dece", 0.1);
	vpa_json_set_num(z, "log10_lr_worst", 1.2);
	vpa_json_set_str(z, "category", "B");
	vpa_json_set(m, "zebra", z);
	vpa_json_set(r, "metrics", m);
	vpa_json_set_num(ci, "level", 0.95);
	vpa_json_set_str(ci, "method", "bootstrap-identities");
	vpa_json_set_num(ci, "reps", 1000);
	struct vpa_json *a = vpa_json_arr();
	vpa_json_push(a, vpa_json_num(eer - 0.01));
	vpa_json_push(a, vpa_json_num(eer + 0.01));
	vpa_json_set(ci, "eer", a);
	vpa_json_set(r, "ci", ci);
	return r;
}

static struct vpa_json *build(void)
{
	struct vpa_json *r = vpa_json_obj(), *sc = vpa_json_obj(), *targets = vpa_json_arr(),
			*attacks = vpa_json_arr(), *records = vpa_json_arr(), *gates = vpa_json_arr(),
			*t = vpa_json_obj();
	vpa_json_set_str(r, "schema", "vpaudit.results/1");
	vpa_json_set_str(r, "vpaudit_version", VPA_VERSION);
	vpa_json_set_str(sc, "name", "bench-report");
	vpa_json_set_str(sc, "description", "100 attack results with figures (bench/bench_report.c)");
	vpa_json_set(r, "scenario", sc);
	vpa_json_set_num(r, "seed", 1);
	vpa_json_set_str(r, "started", "2026-11-22T02:00:00Z");
	vpa_json_set_str(t, "id", "sim");
	vpa_json_set_str(t, "kind", "scores");
	vpa_json_set_str(t, "source", "simulate");
	vpa_json_set(t, "simulated", vpa_json_bool(1));
	vpa_json_push(targets, t);
	vpa_json_set(r, "targets", targets);
	struct vpa_json *sx = vpa_json_arr(), *sy = vpa_json_arr();
	for (int i = 0; i < N_ATTACKS; i++) {
		char id[32];
		snprintf(id, sizeof(id), "a%03d", i);
		double e1 = 0.05 + 0.4 * i / N_ATTACKS, e2 = e1 / 2, link = 0.9 - 0.8 * i / N_ATTACKS;
		struct vpa_json *a = vpa_json_obj(), *figs = vpa_json_arr();
		vpa_json_set_str(a, "id", id);
		vpa_json_set_str(a, "kind", "evaluate");
		vpa_json_set_str(a, "target", "sim");
		vpa_json_push(figs, det_figure(id, e1, e2));
		vpa_json_push(figs, link_figure(id, 4 * link));
		vpa_json_set(a, "figures", figs);
		vpa_json_push(attacks, a);
		vpa_json_push(records, record(id, "ignorant", e1, link / 2));
		vpa_json_push(records, record(id, "informed", e2, link));
		struct vpa_json *g = vpa_json_obj();
		char name[48];
		snprintf(name, sizeof(name), "%s.informed", id);
		vpa_json_set_str(g, "attack", name);
		vpa_json_set_str(g, "metric", "linkability");
		vpa_json_set(g, "min", vpa_json_null());
		vpa_json_set_num(g, "max", 0.5);
		vpa_json_set_num(g, "value", link);
		vpa_json_set(g, "pass", vpa_json_bool(link <= 0.5));
		vpa_json_set_str(g, "message", "generated");
		vpa_json_push(gates, g);
		vpa_json_push(sx, vpa_json_num(i));
		vpa_json_push(sy, vpa_json_num(e2));
	}
	vpa_json_set(r, "attacks", attacks);
	vpa_json_set(r, "records", records);
	struct vpa_json *figs = vpa_json_arr(), *f = vpa_json_obj(), *series = vpa_json_arr(),
			*s = vpa_json_obj();
	vpa_json_set_str(f, "type", "lines");
	vpa_json_set_str(f, "title", "EER by attack");
	vpa_json_set_str(f, "xlabel", "attack");
	vpa_json_set_str(f, "ylabel", "EER");
	vpa_json_set_str(s, "name", "informed");
	vpa_json_set(s, "x", sx);
	vpa_json_set(s, "y", sy);
	vpa_json_push(series, s);
	vpa_json_set(f, "series", series);
	vpa_json_push(figs, f);
	vpa_json_set(r, "figures", figs);
	vpa_json_set(r, "gates", gates);
	vpa_json_set_str(r, "status", "fail");
	return r;
}

/* CPU seconds (user + system) of this process and its waited-for children. */
static double cpu_seconds(void)
{
	struct rusage a, b;
	getrusage(RUSAGE_SELF, &a);
	getrusage(RUSAGE_CHILDREN, &b);
	return a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec + b.ru_stime.tv_sec +
	       1e-6 * (a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec + b.ru_stime.tv_usec);
}

static void cleanup(const char *dir)
{
	static const char *const names[] = {"results.json", "report.html", "report.pdf", "junit.xml"};
	char p[4096];
	for (int k = 0; k < 4; k++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[k]);
		remove(p);
	}
	rmdir(dir);
}

int main(void)
{
	char tmpl[] = "/tmp/vpa_bench_report.XXXXXX";
	char *dir = mkdtemp(tmpl);
	if (!dir) {
		perror("mkdtemp");
		return 1;
	}
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = build();
	size_t n_figs = N_ATTACKS * 2 + 1;

	double c0 = cpu_seconds(), t0 = vpa_now();
	int rc = vpa_report_write(r, dir, VPA_REPORT_ALL, 0, &err);
	double t_all = vpa_now() - t0, c_all = cpu_seconds() - c0;
	if (rc) {
		fprintf(stderr, "bench_report: %s\n", err.msg);
		cleanup(dir);
		return 1;
	}
	char p[4096];
	long sizes[4] = {0};
	static const char *const names[] = {"results.json", "report.html", "report.pdf", "junit.xml"};
	for (int k = 0; k < 4; k++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[k]);
		FILE *f = fopen(p, "rb");
		if (f) {
			fseek(f, 0, SEEK_END);
			sizes[k] = ftell(f);
			fclose(f);
		}
	}

	t0 = vpa_now();
	rc = vpa_report_write(r, dir, VPA_REPORT_JSON | VPA_REPORT_HTML | VPA_REPORT_JUNIT, 0, &err);
	double t_nopdf = vpa_now() - t0;
	t0 = vpa_now();
	if (!rc)
		rc = vpa_report_write(r, dir, VPA_REPORT_JSON, 0, &err);
	double t_json = vpa_now() - t0;

	struct vpa_buf svg;
	vpa_buf_init(&svg);
	const struct vpa_json *fig = vpa_json_get(vpa_json_get(r, "attacks")->items[0], "figures")->items[0];
	t0 = vpa_now();
	if (!rc)
		rc = vpa_plot_render(fig, "svg", &svg, &err);
	double t_one = vpa_now() - t0;
	vpa_buf_release(&svg);
	cleanup(dir);
	vpa_json_free(r);
	if (rc) {
		fprintf(stderr, "bench_report: %s\n", err.msg);
		return 1;
	}
	printf("%-52s %8.2f s  (json %.1f MB, html %.1f MB, pdf %.1f MB, junit %.0f kB)\n",
	       "report for 100 attacks, 201 figures, all formats", t_all, sizes[0] / 1e6,
	       sizes[1] / 1e6, sizes[2] / 1e6, sizes[3] / 1e3);
	printf("%-52s %8.2f s  (vpaudit + gnuplot user+sys; wall depends on machine load)\n",
	       "  of which CPU time", c_all);
	printf("%-52s %8.2f s\n", "baseline: the same without report.pdf", t_nopdf);
	printf("%-52s %8.3f s\n", "baseline: results.json only", t_json);
	printf("%-52s %8.3f s\n", "baseline: one DET figure, own gnuplot run (SVG)", t_one);
	printf("ratio: all formats / without report.pdf = %.2f  (report.pdf typeset in %.2f s)\n",
	       t_all / t_nopdf, t_all - t_nopdf);
	printf("ratio: all formats / results.json only = %.1f\n", t_all / t_json);
	printf("ratio: all formats / (201 x one-figure SVG run) = %.2f  (every figure "
	       "in 1 gnuplot run)\n", t_all / (n_figs * t_one));
	printf("budget %.0f s: %s\n", BUDGET_S, t_all < BUDGET_S ? "ok" : "EXCEEDED");
	return t_all < BUDGET_S ? 0 : 1;
}
