/*
 * bench/bench_metrics.c - data and baselines for the metrics benchmark
 * (bench/run.sh drives it and times `vpaudit metrics` with /usr/bin/time -v).
 *
 *   bench_metrics gen DIR        write DIR/tar.npy (4,696 float32), DIR/non.npy
 *                                (115,563,864 float32) - COMPRISE's large-population
 *                                trial counts - and DIR/scores10m.txt (10M 'score label')
 *   bench_metrics qsort DIR      baseline: load non.npy and sort it with libc qsort
 *   bench_metrics lsd DIR        baseline (issue 33 item 3): a plain LSD radix sort of
 *                                non.npy's float32 array (32-bit keys, four 8-bit
 *                                passes into a second buffer); only the sort is timed
 *   bench_metrics strtod FILE    baseline: parse the text file with fgets + strtod
 *   bench_metrics parse FILE     vpaudit's reader (vpa_read_scores) alone
 * Each baseline prints "seconds MBps" on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "formats/io.h"

#define N_TAR 4696
#define N_NON 115563864UL
#define N_TEXT 10000000UL

static int write_npy_f32(const char *path, size_t n, double mu, double sd, uint64_t seed)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return 1;
	char hdr[128];
	int len = snprintf(hdr, sizeof(hdr), "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu,), }", n);
	int total = 10 + len + 1;
	int pad = (64 - total % 64) % 64;
	unsigned short hl = (unsigned short)(len + pad + 1);
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fwrite(&hl, 2, 1, f);
	fwrite(hdr, 1, len, f);
	for (int i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	struct vpa_rng r;
	vpa_rng_seed(&r, seed);
	enum { CH = 1 << 16 };
	static float buf[CH];
	for (size_t i = 0; i < n;) {
		size_t k = n - i < CH ? n - i : CH;
		for (size_t j = 0; j < k; j++)
			buf[j] = (float)(mu + sd * vpa_rng_normal(&r));
		fwrite(buf, sizeof(float), k, f);
		i += k;
	}
	return fclose(f) != 0;
}

static int gen(const char *dir)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/tar.npy", dir);
	if (write_npy_f32(p, N_TAR, 4.0, 3.0, 1))
		return 1;
	snprintf(p, sizeof(p), "%s/non.npy", dir);
	if (write_npy_f32(p, N_NON, -6.0, 4.0, 2))
		return 1;
	snprintf(p, sizeof(p), "%s/scores10m.txt", dir);
	FILE *f = fopen(p, "w");
	if (!f)
		return 1;
	struct vpa_rng r;
	vpa_rng_seed(&r, 3);
	for (size_t i = 0; i < N_TEXT; i++) {
		int t = vpa_rng_below(&r, 100) < 5;
		double s = t ? 4.0 + 3.0 * vpa_rng_normal(&r) : -6.0 + 4.0 * vpa_rng_normal(&r);
		fprintf(f, "%.6f %s\n", s, t ? "target" : "nontarget");
	}
	return fclose(f) != 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int base_qsort(const char *dir)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/non.npy", dir);
	struct vpa_npy a;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_npy_read(p, &a, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double t0 = vpa_now();
	qsort(a.data, a.shape[0], sizeof(double), cmp_double);
	double t = vpa_now() - t0;
	printf("%.3f %.1f\n", t, a.shape[0] * 8.0 / 1e6 / t);
	vpa_npy_release(&a);
	return 0;
}

/* The textbook LSD radix sort the issue measures against: 32-bit keys (the
 * float bits, order-preserving transform), four stable 8-bit counting passes
 * ping-ponging with a second buffer, one thread. */
static int base_lsd(const char *dir)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/non.npy", dir);
	struct vpa_npy a;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_npy_read(p, &a, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	size_t n = a.shape[0];
	const double *x = a.data;
	uint32_t *k = xmalloc(xmul(n, sizeof *k)), *t = xmalloc(xmul(n, sizeof *t));
	for (size_t i = 0; i < n; i++) {
		float f = (float)x[i];
		memcpy(&k[i], &f, sizeof f);
	}
	double t0 = vpa_now();
	for (size_t i = 0; i < n; i++)
		k[i] = (k[i] & 0x80000000u) ? ~k[i] : (k[i] | 0x80000000u);
	for (int pass = 0; pass < 4; pass++) {
		size_t cnt[256] = {0}, s = 0;
		int sh = 8 * pass;
		for (size_t i = 0; i < n; i++)
			cnt[(k[i] >> sh) & 255]++;
		for (int b = 0; b < 256; b++) {
			size_t c = cnt[b];
			cnt[b] = s;
			s += c;
		}
		for (size_t i = 0; i < n; i++)
			t[cnt[(k[i] >> sh) & 255]++] = k[i];
		uint32_t *sw = k;
		k = t;
		t = sw;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = (k[i] & 0x80000000u) ? (k[i] & ~0x80000000u) : ~k[i];
	double el = vpa_now() - t0;
	for (size_t i = 1; i < n; i++) { /* the baseline must sort */
		float u, v;
		memcpy(&u, &k[i - 1], sizeof u);
		memcpy(&v, &k[i], sizeof v);
		if (u > v) {
			fprintf(stderr, "bench_metrics lsd: not sorted at %zu\n", i);
			return 1;
		}
	}
	printf("%.3f %.1f\n", el, n * 4.0 / 1e6 / el);
	free(k);
	free(t);
	vpa_npy_release(&a);
	return 0;
}

static int base_strtod(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	char line[256];
	double t0 = vpa_now(), sum = 0;
	size_t bytes = 0;
	while (fgets(line, sizeof(line), f)) {
		bytes += strlen(line);
		char *end;
		sum += strtod(line, &end);
		if (strstr(end, "nontarget"))
			sum += 1;
	}
	fclose(f);
	double t = vpa_now() - t0;
	printf("%.3f %.1f\n", t, bytes / 1e6 / t + 0 * sum);
	return 0;
}

static int parse_only(const char *path)
{
	struct vpa_trials tr;
	struct vpa_err err;
	vpa_trials_init(&tr);
	vpa_err_init(&err);
	FILE *f = fopen(path, "rb");
	if (!f)
		return 1;
	fseek(f, 0, SEEK_END);
	double bytes = (double)ftell(f);
	fclose(f);
	double t0 = vpa_now();
	if (vpa_read_scores(path, &tr, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double t = vpa_now() - t0;
	printf("%.3f %.1f\n", t, bytes / 1e6 / t);
	vpa_trials_release(&tr);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "parse"))
		return parse_only(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "gen"))
		return gen(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "qsort"))
		return base_qsort(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "lsd"))
		return base_lsd(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "strtod"))
		return base_strtod(argv[2]);
	fprintf(stderr, "usage: bench_metrics gen|qsort|lsd DIR | strtod FILE\n");
	return 2;
}
