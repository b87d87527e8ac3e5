/*
 * tests/unit/test_inference.c - the attribute attacker of issue 29 item 4:
 * its classifier (learn/attr.c) against scikit-learn's
 * LinearDiscriminantAnalysis(solver='lsqr', shrinkage) (tests/golden/attr/,
 * generator and provenance there), and accuracy / balanced accuracy with
 * their intervals (metrics/inference.c) against a hand computation and the
 * properties a guess that ignores the voice must have.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "learn/attr.h"
#include "metrics/metrics.h"

/* one case of golden.txt read from f (after its "case" line) and checked */
static void golden_case(FILE *f, const char *name, size_t n, size_t nt, size_t d, size_t k,
			double alpha)
{
	double *x = calloc(n * d, sizeof(double)), *t = calloc(nt * d, sizeof(double));
	uint32_t *y = calloc(n, sizeof(uint32_t)), *want = calloc(nt, sizeof(uint32_t));
	uint32_t *got = calloc(nt, sizeof(uint32_t));
	size_t kc = k == 2 ? 1 : k;
	double *coef = calloc(kc * d, sizeof(double)), *icpt = calloc(kc, sizeof(double));
	int ok = 1;
	char w[16];
	for (size_t i = 0; i < n && ok; i++) {
		unsigned v;
		ok = fscanf(f, "%15s %u", w, &v) == 2;
		y[i] = v;
		for (size_t j = 0; j < d && ok; j++)
			ok = fscanf(f, "%lf", &x[i * d + j]) == 1;
	}
	for (size_t i = 0; i < nt && ok; i++) {
		unsigned v;
		ok = fscanf(f, "%15s", w) == 1;
		for (size_t j = 0; j < d && ok; j++)
			ok = fscanf(f, "%lf", &t[i * d + j]) == 1;
		ok = ok && fscanf(f, "%u", &v) == 1;
		want[i] = v;
	}
	for (size_t c = 0; c < kc && ok; c++) {
		unsigned cc;
		ok = fscanf(f, "%15s %u", w, &cc) == 2;
		for (size_t j = 0; j < d && ok; j++)
			ok = fscanf(f, "%lf", &coef[c * d + j]) == 1;
	}
	for (size_t c = 0; c < kc && ok; c++) {
		unsigned cc;
		ok = fscanf(f, "%15s %u %lf", w, &cc, &icpt[c]) == 3;
	}
	CHECK(ok);
	struct vpa_attr_clf clf;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_attr_clf_train(x, n, d, y, k, alpha, &clf, &err) == 0);
	if (ok && clf.coef) {
		double worst = 0;
		for (size_t c = 0; c < kc; c++) {
			for (size_t j = 0; j < d; j++) {
				/* binary: scikit-learn keeps class 1 minus class 0 */
				double v = k == 2 ? clf.coef[d + j] - clf.coef[j] : clf.coef[c * d + j];
				worst = fmax(worst, fabs(v - coef[c * d + j]) / fmax(1, fabs(coef[c * d + j])));
			}
			double v = k == 2 ? clf.icpt[1] - clf.icpt[0] : clf.icpt[c];
			worst = fmax(worst, fabs(v - icpt[c]) / fmax(1, fabs(icpt[c])));
		}
		if (worst > 1e-9)
			printf("  %s: largest relative difference %.3g\n", name, worst);
		CHECK(worst <= 1e-9);
		vpa_attr_clf_predict(&clf, t, nt, got);
		size_t same = 0;
		for (size_t i = 0; i < nt; i++)
			same += got[i] == want[i];
		CHECK(same == nt);
	}
	vpa_attr_clf_release(&clf);
	free(x);
	free(t);
	free(y);
	free(want);
	free(got);
	free(coef);
	free(icpt);
}

static void test_golden_sklearn(void)
{
	FILE *f = fopen("tests/golden/attr/golden.txt", "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char line[256];
	int cases = 0;
	while (fscanf(f, "%255s", line) == 1) {
		if (line[0] == '#') {
			int c;
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		char name[64];
		size_t n, nt, d, k;
		double alpha;
		if (strcmp(line, "case") ||
		    fscanf(f, "%63s %zu %zu %zu %zu %lf", name, &n, &nt, &d, &k, &alpha) != 6) {
			CHECK(!"golden.txt: expected a case line");
			break;
		}
		golden_case(f, name, n, nt, d, k, alpha);
		cases++;
	}
	fclose(f);
	CHECK(cases == 3);
}

static void test_clf_errors(void)
{
	const double x[4] = {0, 1, 2, 3};
	const uint32_t one[4] = {1, 1, 1, 1}, bad[4] = {0, 1, 2, 0};
	struct vpa_attr_clf clf;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_attr_clf_train(x, 4, 1, one, 2, 0.01, &clf, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "has 1 class, 2 needed") != NULL);
	vpa_err_init(&err);
	CHECK(vpa_attr_clf_train(x, 4, 1, bad, 2, 0.01, &clf, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "label 2 of row 3") != NULL);
}

/* separable classes: every guess right; a class absent from training is never guessed */
static void test_clf_separable(void)
{
	double x[12];
	uint32_t y[6] = {0, 0, 0, 2, 2, 2}, p[6];
	for (size_t i = 0; i < 6; i++) {
		x[2 * i] = (y[i] ? 10.0 : -10.0) + 0.1 * (double)i;
		x[2 * i + 1] = (double)(i % 3) - 1;
	}
	struct vpa_attr_clf clf;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_attr_clf_train(x, 6, 2, y, 3, 0.01, &clf, &err) == 0);
	vpa_attr_clf_predict(&clf, x, 6, p);
	for (size_t i = 0; i < 6; i++)
		CHECK(p[i] == y[i]);
	CHECK(isinf(clf.icpt[1]) && clf.icpt[1] < 0);
	vpa_attr_clf_release(&clf);
}

/*
 * By hand: speakers s0, s1 (class 0; 2 items each, 2 and 1 right), s2, s3,
 * s4 (class 1; 1, 3, 2 items, 1, 0, 2 right).  acc = 6/10; CR1: sum of
 * (T_s - n_s acc)^2 = 0.64 + 0.04 + 0.16 + 3.24 + 0.64 = 4.72, se =
 * sqrt(5/4 4.72)/10, t with 4 df.  Recalls 3/4 and 3/6: bacc 0.625; their
 * CR1 variances 2 (0.25 + 0.25)/16 = 0.0625 and 3/2 (0.25 + 2.25 + 1)/36 =
 * 0.1458333, se = sqrt(sum)/2, Satterthwaite df = sum^2 / (0.0625^2 / 1 +
 * 0.1458333^2 / 2) = 2.98507.  Chance: 6 of 10 items are class 1; 1/2.
 */
static void test_hand(void)
{
	const uint32_t spk[10] = {0, 0, 1, 1, 2, 3, 3, 3, 4, 4};
	const uint32_t truth[10] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
	const uint32_t pred[10] = {0, 0, 0, 1, 1, 0, 0, 0, 1, 1};
	struct vpa_infer_est e;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_inference_acc(truth, pred, spk, 10, 5, 2, 0.95, &e, &err) == 0);
	CHECK_NEAR(e.acc, 0.6, 1e-15);
	CHECK_NEAR(e.acc_chance, 0.6, 1e-15);
	CHECK(e.majority == 1 && e.n_spk == 5 && e.n_items == 10 && e.n_classes == 2);
	double t4 = vpa_t_quantile(0.975, 4);
	CHECK_NEAR(t4, 2.7764451, 2e-3); /* the Student t table */
	double se = sqrt(5.0 / 4 * 4.72) / 10;
	CHECK_NEAR(e.acc_lo, fmax(0, 0.6 - t4 * se), 1e-12); /* -0.074 clipped */
	CHECK_NEAR(e.acc_hi, fmin(1, 0.6 + t4 * se), 1e-12);
	CHECK_NEAR(e.bacc, 0.625, 1e-15);
	CHECK_NEAR(e.bacc_chance, 0.5, 1e-15);
	double v0 = 0.0625, v1 = 1.5 * 3.5 / 36, df = (v0 + v1) * (v0 + v1) / (v0 * v0 + v1 * v1 / 2);
	CHECK_NEAR(df, 2.98507, 1e-5);
	double sb = sqrt(v0 + v1) / 2, tb = vpa_t_quantile(0.975, df);
	CHECK_NEAR(e.bacc_lo, fmax(0, 0.625 - tb * sb), 1e-12);
	CHECK_NEAR(e.bacc_hi, fmin(1, 0.625 + tb * sb), 1e-12);
}

/* a guess that ignores the voice (always the majority class) sits exactly at chance */
static void test_majority_guess(void)
{
	enum { N = 300, S = 30, K = 3 };
	uint32_t spk[N], truth[N], pred[N];
	for (size_t i = 0; i < N; i++) {
		spk[i] = (uint32_t)(i % S);
		truth[i] = spk[i] % 5 == 0 ? 0 : spk[i] % 5 < 3 ? 1 : 2;
		pred[i] = 1;
	}
	struct vpa_infer_est e;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_inference_acc(truth, pred, spk, N, S, K, 0.95, &e, &err) == 0);
	CHECK_NEAR(e.acc, e.acc_chance, 1e-15);
	CHECK_NEAR(e.acc, 0.4, 1e-15);
	CHECK_NEAR(e.bacc, 1.0 / 3, 1e-15);
	CHECK_NEAR(e.bacc_chance, 1.0 / 3, 1e-15);
	/* no spread within a class: a zero-width balanced interval */
	CHECK_NEAR(e.bacc_lo, 1.0 / 3, 1e-15);
	CHECK_NEAR(e.bacc_hi, 1.0 / 3, 1e-15);
	CHECK(e.acc_lo < 0.4 && e.acc_hi > 0.4);
}

static void test_errors_and_small(void)
{
	const uint32_t spk[4] = {0, 0, 1, 1}, truth[4] = {0, 1, 1, 1}, pred[4] = {0, 0, 1, 1};
	struct vpa_infer_est e;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_inference_acc(truth, pred, spk, 4, 2, 2, 0.95, &e, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "speaker 0 has two labels") != NULL);
	vpa_err_init(&err);
	CHECK(vpa_inference_acc(truth, pred, spk, 0, 2, 2, 0.95, &e, &err) == VPA_EINPUT);
	/* 2 speakers, one per class: values, no interval */
	const uint32_t t2[4] = {0, 0, 1, 1};
	vpa_err_init(&err);
	CHECK(vpa_inference_acc(t2, pred, spk, 4, 2, 2, 0.95, &e, &err) == 0);
	CHECK_NEAR(e.acc, 1, 1e-15);
	CHECK(isnan(e.acc_lo) && isnan(e.bacc_lo));
	/* one class among the test speakers: chance 1 (the caller marks it unreliable) */
	const uint32_t t1[4] = {1, 1, 1, 1};
	vpa_err_init(&err);
	CHECK(vpa_inference_acc(t1, pred, spk, 4, 2, 2, 0.95, &e, &err) == 0);
	CHECK(e.n_classes == 1 && e.bacc_chance == 1 && e.acc_chance == 1);
}

int main(void)
{
	RUN(test_golden_sklearn);
	RUN(test_clf_errors);
	RUN(test_clf_separable);
	RUN(test_hand);
	RUN(test_majority_guess);
	RUN(test_errors_and_small);
	return DONE();
}
