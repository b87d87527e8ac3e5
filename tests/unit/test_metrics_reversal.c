/*
 * tests/unit/test_metrics_reversal.c - reversed scores (metrics/reversal.c):
 * the metrics of the negated scores, the sweep EER's bootstrap interval
 * (metrics/ci.c) and the rule "anti-correlated with identity" (the lower end
 * of the 95% interval of the sweep EER above 0.5) on a reversed, a normal and
 * a borderline score set.
 */
#include "metrics/metrics.h"
#include "metrics/sv_metrics.h"
#include "tests/unit/harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t lcg = 424242;
static double unif(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return ((double)(lcg >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void) { return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif()); }

enum { NT = 200, NN = 2000 };
static double tar[NT], non[NN];

/* targets at mean mu, non-targets at 0, rounded to `step` (ties) when step > 0; sorted */
static struct vpa_scores draw(double mu, double step)
{
	for (int i = 0; i < NT; i++)
		tar[i] = mu + gauss();
	for (int i = 0; i < NN; i++)
		non[i] = gauss();
	for (int i = 0; step > 0 && i < NT; i++)
		tar[i] = round(tar[i] / step) * step;
	for (int i = 0; step > 0 && i < NN; i++)
		non[i] = round(non[i] / step) * step;
	vpa_sort_scores(tar, NULL, NT);
	vpa_sort_scores(non, NULL, NN);
	struct vpa_scores s = { tar, NT, non, NN, NULL, NULL };
	return s;
}

static struct vpa_ci_opts opts(int sweep_only)
{
	struct vpa_ci_opts o;
	memset(&o, 0, sizeof o);
	o.level = VPA_REVERSAL_LEVEL;
	o.reps = 500;
	o.seed = 11;
	o.omega = 1;
	o.sweep_only = sweep_only;
	return o;
}

/* judge s as attacks/evaluate.c does: an interval only when eer_sweep > 0.5 */
static void judge(const struct vpa_scores *s, struct vpa_metrics *m)
{
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_metrics_all(s, NULL, m, &e) == 0);
	CHECK(vpa_metrics_flipped(tar, NT, non, NN, NULL, m, &e) == 0);
	vpa_metrics_judge_reversal(m, NAN, NAN);
	if (m->eer_sweep > 0.5) {
		struct vpa_ci_opts o = opts(1);
		struct vpa_ci ci;
		CHECK(vpa_bootstrap_ci(s, &o, &ci, &e) == 0);
		vpa_metrics_judge_reversal(m, ci.eer_sweep_lo, ci.eer_sweep_hi);
	}
}

/* The metrics of -s are the flipped metrics of s, exactly: flipping twice is the identity. */
static void test_flipped_is_negation(void)
{
	struct vpa_err e;
	vpa_err_init(&e);
	for (int ties = 0; ties < 2; ties++) {
		struct vpa_scores s = draw(2, ties ? 0.25 : 0);
		struct vpa_metrics m, f;
		CHECK(vpa_metrics_all(&s, NULL, &m, &e) == 0);
		CHECK(isnan(m.eer_flipped) && !m.anti_correlated); /* until computed */
		/* negate in place, sorted again by reversal */
		for (int i = 0; i < NT / 2; i++) {
			double t = -tar[i];
			tar[i] = -tar[NT - 1 - i];
			tar[NT - 1 - i] = t;
		}
		for (int i = 0; i < NN / 2; i++) {
			double t = -non[i];
			non[i] = -non[NN - 1 - i];
			non[NN - 1 - i] = t;
		}
		CHECK(vpa_metrics_all(&s, NULL, &f, &e) == 0);
		static double tar0[NT], non0[NN];
		memcpy(tar0, tar, sizeof tar);
		memcpy(non0, non, sizeof non);
		CHECK(vpa_metrics_flipped(tar, NT, non, NN, NULL, &f, &e) == 0);
		/* in place, and restored bit for bit */
		CHECK(!memcmp(tar0, tar, sizeof tar) && !memcmp(non0, non, sizeof non));
		CHECK_NEAR(f.eer_flipped, m.eer, 1e-15);
		CHECK_NEAR(f.cllr_min_flipped, m.cllr_min, 1e-12);
		CHECK_NEAR(f.min_dcf_flipped, m.min_dcf, 1e-15);
		/* the reversed scores themselves read as chance: the ROCCH cannot exceed 0.5 */
		CHECK(f.eer > 0.45 && f.eer <= 0.5);
		CHECK(f.eer_sweep > 0.8);
		CHECK(m.eer < 0.2);
	}
}

/* Reversed scores: the sweep EER's whole 95% interval lies above 0.5. */
static void test_reversed(void)
{
	struct vpa_scores s = draw(-2, 0);
	struct vpa_metrics m;
	judge(&s, &m);
	CHECK(m.eer > 0.45);                  /* what a gate on eer sees */
	CHECK(m.eer_flipped < 0.2);           /* what the reversing attacker reaches */
	CHECK(m.cllr_min_flipped < 0.7 && m.cllr_min > 0.95);
	CHECK(m.eer_sweep_lo > 0.5 && m.eer_sweep_lo <= m.eer_sweep && m.eer_sweep <= m.eer_sweep_hi);
	CHECK(m.eer_sweep_level == 0.95);
	CHECK(m.anti_correlated == 1);
}

/* Normal scores: no interval is needed, not anti-correlated. */
static void test_normal(void)
{
	struct vpa_scores s = draw(2, 0);
	struct vpa_metrics m;
	judge(&s, &m);
	CHECK(m.eer_sweep < 0.5 && isnan(m.eer_sweep_lo) && isnan(m.eer_sweep_level));
	CHECK(m.anti_correlated == 0);
	CHECK(m.eer_flipped > 0.45); /* reversing good scores gains nothing */
}

/*
 * Borderline: scores that do not depend on identity, drawn until the sweep
 * EER exceeds 0.5 (it does about half the time): its interval reaches 0.5,
 * so not anti-correlated, although the point estimate is above 0.5.
 */
static void test_borderline(void)
{
	struct vpa_metrics m;
	int found = 0;
	for (int k = 0; k < 20 && !found; k++) {
		struct vpa_scores s = draw(0, 0);
		judge(&s, &m);
		found = m.eer_sweep > 0.5;
	}
	CHECK(found);
	CHECK(isfinite(m.eer_sweep_lo) && m.eer_sweep_lo <= 0.5 && m.eer_sweep_hi > 0.5);
	CHECK(m.anti_correlated == 0);
	/* the rule is strict: an interval ending at 0.5 is not above it */
	m.eer_sweep = 0.6;
	vpa_metrics_judge_reversal(&m, 0.5, 0.7);
	CHECK(m.anti_correlated == 0);
	vpa_metrics_judge_reversal(&m, 0.5000001, 0.7);
	CHECK(m.anti_correlated == 1);
}

/* The sweep EER's interval: around its estimate, the same alone or with the others. */
static void test_sweep_interval(void)
{
	struct vpa_scores s = draw(1.5, 0.1);
	struct vpa_metrics m;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_metrics_all(&s, NULL, &m, &e) == 0);
	struct vpa_ci_opts o = opts(0), os = opts(1);
	struct vpa_ci a, b;
	CHECK(vpa_bootstrap_ci(&s, &o, &a, &e) == 0);
	CHECK(vpa_bootstrap_ci(&s, &os, &b, &e) == 0);
	CHECK(a.estimate[3] == m.eer_sweep);
	CHECK(a.eer_sweep_lo <= m.eer_sweep && m.eer_sweep <= a.eer_sweep_hi);
	CHECK(a.eer_sweep_hi - a.eer_sweep_lo > 0.01 && a.eer_sweep_hi - a.eer_sweep_lo < 0.2);
	CHECK(a.eer_sweep_lo == b.eer_sweep_lo && a.eer_sweep_hi == b.eer_sweep_hi);
	/* sweep_only leaves the others undefined */
	CHECK(isfinite(a.eer_lo) && isnan(b.eer_lo) && isnan(b.cllr_min_lo) && isnan(b.link_lo));
}

/* The judgement's bootstrap on large sets: at most max(50, 2e8 / n) replicates. */
static void test_reps_cap(void)
{
	CHECK(vpa_reversal_reps(1000, 2200) == 1000);
	CHECK(vpa_reversal_reps(1000, 200000) == 1000);
	CHECK(vpa_reversal_reps(1000, 2020000) == 99);
	CHECK(vpa_reversal_reps(1000, 115568560) == 50);
	CHECK(vpa_reversal_reps(30, 115568560) == 30);
	/* capped: the rule still holds on reversed scores, and the jackknife obeys jack_max */
	struct vpa_scores s = draw(-2, 0);
	struct vpa_ci_opts o = opts(1);
	o.reps = o.jack_max = 50;
	struct vpa_ci ci;
	struct vpa_err e;
	vpa_err_init(&e);
	CHECK(vpa_bootstrap_ci(&s, &o, &ci, &e) == 0);
	CHECK(ci.reps == 50 && ci.jack_groups[0] == 50 && ci.jack_grouped);
	CHECK(ci.eer_sweep_lo > 0.5);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The flipped sweep skips the tie count: the same EER and min DCF as the full
 * sweep; Cllr in its fixed parts is the same value for 1, 2 and 3 threads and
 * from vpa_cllr alone, and within rounding of the sequential sum. */
static void test_parts_and_ties(void)
{
	size_t nt = 3001, nn = 20011;
	double *t = malloc(nt * sizeof(double)), *n = malloc(nn * sizeof(double));
	for (size_t i = 0; i < nt; i++)
		t[i] = round(8 * (unif() * 4 - 1)) / 8; /* coarse: many ties */
	for (size_t i = 0; i < nn; i++)
		n[i] = round(8 * (unif() * 4 - 3)) / 8;
	qsort(t, nt, sizeof(double), cmp_d);
	qsort(n, nn, sizeof(double), cmp_d);
	struct vpa_scores s = {t, nt, n, nn, NULL, NULL};
	struct sv_sweep a, b;
	sv_sweep(&s, 0.01, 1, 1, &a);
	sv_sweep_ties(&s, 0.01, 1, 1, 0, &b);
	CHECK(a.eer == b.eer && a.eer_threshold == b.eer_threshold);
	CHECK(a.min_dcf == b.min_dcf && a.min_dcf_threshold == b.min_dcf_threshold);
	CHECK(a.tied_fraction > 0.9 && isnan(b.tied_fraction));
	double c = vpa_cllr(&s), seq = 0, seqt = 0;
	for (size_t i = 0; i < nn; i++)
		seq += (n[i] > 0 ? n[i] : 0) + log1p(exp(-fabs(n[i])));
	for (size_t i = 0; i < nt; i++)
		seqt += (-t[i] > 0 ? -t[i] : 0) + log1p(exp(-fabs(t[i])));
	CHECK_NEAR(c, (seqt / (double)nt + seq / (double)nn) / (2 * M_LN2), 1e-13);
	for (int th = 1; th <= 3; th++) {
		struct vpa_metrics_opts o;
		vpa_metrics_opts_init(&o);
		o.threads = th;
		struct vpa_metrics m;
		struct vpa_err err;
		vpa_err_init(&err);
		CHECK(vpa_metrics_all(&s, &o, &m, &err) == 0);
		CHECK(m.cllr == c);
		CHECK(m.tied_fraction == a.tied_fraction);
	}
	free(t);
	free(n);
}

int main(void)
{
	RUN(test_parts_and_ties);
	RUN(test_flipped_is_negation);
	RUN(test_reversed);
	RUN(test_normal);
	RUN(test_borderline);
	RUN(test_sweep_interval);
	RUN(test_reps_cap);
	return DONE();
}
