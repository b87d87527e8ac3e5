/*
 * tests/unit/test_metrics_sort.c - vpa_sort_scores against qsort on many
 * kinds of doubles: random bit patterns (subnormals, huge values, +-inf),
 * normals, heavy duplicates, -0.0 mixed with +0.0, sorted and reversed
 * input, and perm tracking; float32 values (the 32-bit LSD path taken from
 * 65,536 scores up), and float32 arrays with one value that is not a float
 * (at the start, the middle, the end: the packing must undo itself).
 */
#include "metrics/metrics.h"
#include "tests/unit/harness.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t st = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	st ^= st << 13;
	st ^= st >> 7;
	st ^= st << 17;
	return st;
}
static double unif(void) { return ((double)(rnd() >> 11) + 0.5) / 9007199254740992.0; }

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

enum kind { BITS, NORMAL, DUPS, ZEROS, SUBNORMAL, HUGE, SORTED, REVERSED, EQUAL, F32BITS, F32NORM,
	     F32_BUT_FIRST, F32_BUT_MID, F32_BUT_LAST, KINDS };

static double draw(enum kind k, size_t i, size_t n)
{
	double v;
	uint64_t u;
	switch (k) {
	case BITS: /* any non-NaN bit pattern */
		do {
			u = rnd();
			memcpy(&v, &u, sizeof v);
		} while (isnan(v));
		return v;
	case NORMAL:
		return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
	case DUPS:
		return (double)(rnd() % 7) - 3;
	case ZEROS: {
		uint64_t r = rnd() % 4;
		return r == 0 ? -0.0 : r == 1 ? 0.0 : r == 2 ? -DBL_TRUE_MIN : DBL_TRUE_MIN;
	}
	case SUBNORMAL:
		u = rnd() & 0x000FFFFFFFFFFFFFull; /* exponent 0 */
		memcpy(&v, &u, sizeof v);
		return rnd() & 1 ? -v : v;
	case HUGE: {
		uint64_t r = rnd() % 6;
		return r == 0 ? INFINITY : r == 1 ? -INFINITY : r == 2 ? DBL_MAX
		     : r == 3 ? -DBL_MAX : (unif() - 0.5) * 1e308;
	}
	case SORTED:
		return (double)i * 0.5 - 100;
	case REVERSED:
		return (double)(n - i) * 0.25;
	case F32BITS: { /* any non-NaN float32: subnormals, +-0, +-inf, FLT_MAX */
		float f;
		uint32_t w;
		do {
			w = (uint32_t)rnd();
			memcpy(&f, &w, sizeof f);
		} while (isnan(f));
		return (double)f;
	}
	case F32NORM:
		return (double)(float)(sqrt(-2 * log(unif())) * cos(2 * M_PI * unif()) * 4 - 6);
	case F32_BUT_FIRST:
	case F32_BUT_MID:
	case F32_BUT_LAST: {
		size_t at = k == F32_BUT_FIRST ? 0 : k == F32_BUT_MID ? n / 2 : n - 1;
		if (i == at)
			return 0.1; /* not a float32 */
		return (double)(float)((double)(rnd() % 1000) - 500.25);
	}
	default:
		return 42.5;
	}
}

static void check_kind(enum kind k, size_t n, int with_perm)
{
	double *x = malloc((n + 1) * sizeof *x), *orig = malloc((n + 1) * sizeof *x);
	double *ref = malloc((n + 1) * sizeof *x);
	uint32_t *perm = with_perm ? malloc((n + 1) * sizeof *perm) : NULL;
	for (size_t i = 0; i < n; i++) {
		x[i] = orig[i] = draw(k, i, n);
		ref[i] = x[i] == 0 ? 0.0 : x[i]; /* -0.0 -> +0.0 as the sort does */
		if (perm)
			perm[i] = (uint32_t)i;
	}
	qsort(ref, n, sizeof *ref, cmp);
	vpa_sort_scores(x, perm, n);
	int same = memcmp(x, ref, n * sizeof *x) == 0; /* bitwise: no -0.0 left */
	if (!same)
		printf("#   kind %d n %zu perm %d: order differs\n", (int)k, n, with_perm);
	CHECK(same);
	if (perm) {
		int ok = 1;
		char *seen = calloc(n + 1, 1);
		for (size_t i = 0; i < n; i++) {
			double o = orig[perm[i]] == 0 ? 0.0 : orig[perm[i]];
			if (perm[i] >= n || seen[perm[i]] || memcmp(&o, &x[i], sizeof o) != 0)
				ok = 0;
			else
				seen[perm[i]] = 1;
		}
		CHECK(ok);
		free(seen);
	}
	free(perm);
	free(ref);
	free(orig);
	free(x);
}

static void test_sort_kinds(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 47, 48, 49, 50, 255, 256, 1000, 4097, 100000 };
	for (int k = 0; k < KINDS; k++)
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
			for (int p = 0; p < 2; p++)
				check_kind((enum kind)k, sizes[s], p);
}

static void test_sort_large(void)
{
	check_kind(NORMAL, 1u << 21, 0);
	check_kind(BITS, 1u << 20, 1);
	check_kind(DUPS, 1u << 20, 1);
	for (int k = F32BITS; k < KINDS; k++) {
		check_kind((enum kind)k, 1u << 20, 0);
		check_kind((enum kind)k, (1u << 16) + 1, 0); /* odd, at the LSD path's floor */
	}
}

static void test_negative_zero(void)
{
	double x[] = { 0.0, -0.0, -1, 1, -0.0, 0.0 };
	vpa_sort_scores(x, NULL, 6);
	CHECK(x[0] == -1 && x[5] == 1);
	for (int i = 1; i < 5; i++)
		CHECK(x[i] == 0 && !signbit(x[i]));
}

/* The float32 path's passes shared out over threads: the same bits for 1..4
 * threads, on an odd length (uneven parts) with ties and both signs. */
static void test_sort_threads(void)
{
	size_t n = (1u << 20) + 7;
	double *ref = malloc(n * sizeof *ref), *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		ref[i] = draw(F32NORM, i, n);
	memcpy(x, ref, n * sizeof *x);
	vpa_sort_scores_threads(ref, NULL, n, 1);
	int sorted = 1;
	for (size_t i = 1; i < n; i++)
		sorted &= ref[i - 1] <= ref[i];
	CHECK(sorted);
	double *y = malloc(n * sizeof *y);
	for (int t = 2; t <= 4; t++) {
		memcpy(y, x, n * sizeof *y);
		vpa_sort_scores_threads(y, NULL, n, t);
		CHECK(memcmp(y, ref, n * sizeof *y) == 0);
	}
	free(y);
	free(x);
	free(ref);
}

int main(void)
{
	RUN(test_sort_threads);
	RUN(test_sort_kinds);
	RUN(test_sort_large);
	RUN(test_negative_zero);
	return DONE();
}
