/*
 * tests/unit/harness.h - a tiny TAP-like harness.
 *
 *   static void test_x(void) { CHECK(1 + 1 == 2); CHECK_NEAR(x, 0.25, 1e-12); }
 *   int main(void) { RUN(test_x); return DONE(); }
 *
 * Prints `ok - name` / `not ok - name` per test, a diagnostic per failed
 * check, and ends with `suite: N passed, N failed` which tests/run.sh sums.
 */
#ifndef VPA_HARNESS_H
#define VPA_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int h_failed_checks, h_pass, h_fail;

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (!(cond)) {                                                   \
			h_failed_checks++;                                       \
			printf("#   %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                \
	} while (0)

#define CHECK_NEAR(a, b, tol)                                                    \
	do {                                                                     \
		double h_a = (a), h_b = (b);                                     \
		if (!(fabs(h_a - h_b) <= (tol)) && !(h_a == h_b)) {              \
			h_failed_checks++;                                       \
			printf("#   %s:%d: %s = %.17g, expected %.17g (tol %g)\n", \
			       __FILE__, __LINE__, #a, h_a, h_b, (double)(tol)); \
		}                                                                \
	} while (0)

/* Relative tolerance. */
#define CHECK_REL(a, b, rtol)                                                    \
	do {                                                                     \
		double h_a = (a), h_b = (b);                                     \
		if (!(fabs(h_a - h_b) <= (rtol) * fabs(h_b))) {                  \
			h_failed_checks++;                                       \
			printf("#   %s:%d: %s = %.17g, expected %.17g (rel %g)\n", \
			       __FILE__, __LINE__, #a, h_a, h_b, (double)(rtol)); \
		}                                                                \
	} while (0)

#define CHECK_STR(a, b)                                                          \
	do {                                                                     \
		const char *h_a = (a), *h_b = (b);                               \
		if (!h_a || !h_b || strcmp(h_a, h_b) != 0) {                     \
			h_failed_checks++;                                       \
			printf("#   %s:%d: %s = \"%s\", expected \"%s\"\n", __FILE__, \
			       __LINE__, #a, h_a ? h_a : "(null)", h_b ? h_b : "(null)"); \
		}                                                                \
	} while (0)

#define RUN(fn)                                                                  \
	do {                                                                     \
		int h_before = h_failed_checks;                                  \
		fn();                                                            \
		if (h_failed_checks == h_before) {                               \
			h_pass++;                                                \
			printf("ok - %s\n", #fn);                                \
		} else {                                                         \
			h_fail++;                                                \
			printf("not ok - %s\n", #fn);                            \
		}                                                                \
		fflush(stdout);                                                  \
	} while (0)

#define DONE() (printf("suite: %d passed, %d failed\n", h_pass, h_fail), h_fail != 0)

#endif
