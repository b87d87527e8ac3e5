/* tests/unit/test_linkage.c - the linkage attack: D_diag / G_VD against a
   direct computation, and the known ordering of the attackers on the default
   simulated target. */
#include "targets/anon.h"
#include "scenarios/scenario.h"
#include "harness.h"

#include <stdlib.h>

/* D_diag with a plain cosine back-end equals the VoicePrivacy formula
   computed here directly: S_ij = sigmoid(mean cos over k in i, l in j, k != l),
   mean off-diagonal = N/(N-1) (mean(S) - mean(diag)/N). */
static void test_ddiag(void)
{
	struct vpa_embset es;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embset_init(&es);
	const double x[6][2] = {{1, 0}, {0.9, 0.1}, {0, 1}, {0.2, 1}, {-1, 0.3}, {-0.8, -0.2}};
	const char *spk[6] = {"a", "a", "b", "b", "c", "c"};
	for (int i = 0; i < 6; i++) {
		char u[16];
		snprintf(u, sizeof(u), "u%d", i);
		CHECK(vpa_embset_add(&es, u, spk[i], x[i], 2, &err) >= 0);
	}
	struct vpa_backend_cfg bc;
	vpa_backend_cfg_init(&bc);
	bc.center = 0;
	bc.length_norm = 0;
	bc.scoring = VPA_SCORE_COSINE;
	struct vpa_backend *b = vpa_backend_train(&es, &bc, &err);
	CHECK(b != NULL);
	double S[3][3], sum = 0, diag = 0;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			double t = 0;
			int n = 0;
			for (int k = 2 * i; k < 2 * i + 2; k++)
				for (int l = 2 * j; l < 2 * j + 2; l++) {
					if (k == l)
						continue;
					t += vpa_cosine(x[k], x[l], 2);
					n++;
				}
			S[i][j] = 1 / (1 + exp(-t / n));
			sum += S[i][j];
			if (i == j)
				diag += S[i][j];
		}
	double m = sum / 9, md = diag / 3, mnd = 3.0 / 2 * (m - md / 3);
	CHECK_NEAR(vpa_linkage_ddiag(b, &es), fabs(md - mnd), 1e-12);
	/* a single-utterance speaker has no diagonal pair: undefined */
	double z[2] = {0.5, 0.5};
	CHECK(vpa_embset_add(&es, "u9", "d", z, 2, &err) >= 0);
	CHECK(isnan(vpa_linkage_ddiag(b, &es)));
	vpa_backend_free(b);
	vpa_embset_release(&es);
}

static double metric(const struct vpa_json *R, const char *sub, const char *key)
{
	const struct vpa_json *recs = vpa_json_get(R, "records");
	for (size_t i = 0; i < recs->n; i++) {
		const char *s = vpa_json_get_str(recs->items[i], "sub");
		if (s && !strcmp(s, sub))
			return vpa_json_get_num(vpa_json_get(recs->items[i], "metrics"), key, NAN);
	}
	return NAN;
}

static int run_yaml(const char *y, struct vpa_json **R, struct vpa_err *err)
{
	struct vpa_scenario *s = NULL;
	int rc = vpa_scenario_parse("t.yaml", ".", y, strlen(y), &s, err);
	if (!rc) {
		struct vpa_run_opts o = {0, 0, 1, 1};
		rc = vpa_scenario_run(s, &o, R, err);
	}
	vpa_scenario_free(s);
	return rc;
}

/* The acceptance ordering on the default simulation, for two seeds. */
static void test_default_ordering(void)
{
	for (int seed = 1; seed <= 2; seed++) {
		char y[512];
		snprintf(y, sizeof(y),
			 "name: t\nseed: %d\ntargets:\n  - {id: sim, kind: anonymised_speech}\n"
			 "attacks:\n  - {id: link, kind: linkage, target: sim}\n", seed);
		struct vpa_json *R = NULL;
		struct vpa_err err;
		vpa_err_init(&err);
		CHECK(run_yaml(y, &R, &err) == 0);
		if (!R) {
			printf("#   %s\n", err.msg);
			continue;
		}
		double base = metric(R, "baseline", "eer"), ign = metric(R, "ignorant", "eer");
		double lazy = metric(R, "lazy_informed", "eer"), semi = metric(R, "semi_informed", "eer");
		double inf = metric(R, "informed", "eer");
		printf("# seed %d EER baseline %.4f ignorant %.4f lazy %.4f semi %.4f informed %.4f\n",
		       seed, base, ign, lazy, semi, inf);
		CHECK(base < 0.05);
		CHECK(ign > 0.4);
		CHECK(ign - base > 0.3);
		CHECK(semi < lazy - 0.05);
		CHECK(metric(R, "semi_informed", "linkability") > metric(R, "lazy_informed", "linkability"));
		CHECK(inf < ign);
		CHECK_NEAR(metric(R, "baseline", "gvd"), 0, 1e-12);
		CHECK(metric(R, "ignorant", "gvd") < 0); /* anonymised voices are less distinct */
		/* 1 DET, 5 linkability figures, 1 per-attacker chart, then (issue 29)
		 * pi_link against N' and pi_sing against N */
		const struct vpa_json *figs = vpa_json_get(vpa_json_get(R, "attacks")->items[0], "figures");
		CHECK(figs->n == 9);
		if (figs->n == 9) {
			CHECK_STR(vpa_json_get_str(figs->items[7], "id"), "link-pi-link");
			CHECK_STR(vpa_json_get_str(figs->items[8], "id"), "link-pi-sing");
		}
		CHECK_STR(vpa_json_get_str(figs->items[0], "type"), "det");
		CHECK(vpa_json_get(figs->items[0], "series")->n == 5);
		/* the per-attacker chart: bars named by attacker on the 0-1 scale */
		CHECK_STR(vpa_json_get_str(figs->items[6], "type"), "bars");
		const struct vpa_json *cats = vpa_json_get(figs->items[6], "categories");
		CHECK(cats && cats->n == 5);
		if (cats && cats->n == 5) {
			CHECK_STR(cats->items[0]->str, "baseline");
			CHECK_STR(cats->items[4]->str, "informed");
		}
		const struct vpa_json *yr = vpa_json_get(figs->items[6], "yrange");
		CHECK(yr && yr->n == 2 && yr->items[0]->num == 0 && yr->items[1]->num == 1);
		CHECK(vpa_json_get(vpa_json_get(R, "targets")->items[0], "simulated")->boolean == 1);
		vpa_json_free(R);
	}
}

static void test_reproducible(void)
{
	const char *y = "name: t\nseed: 4\ntargets:\n  - {id: sim, kind: anonymised_speech, "
			"simulate: {test_speakers: 10, train_speakers: 100, pool_speakers: 300}, "
			"anonymiser: {proximity: near, n: 50, n_star: 20}}\n"
			"attacks:\n  - {id: link, kind: linkage, target: sim, attackers: [lazy_informed]}\n";
	struct vpa_json *R1 = NULL, *R2 = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(run_yaml(y, &R1, &err) == 0);
	CHECK(run_yaml(y, &R2, &err) == 0);
	if (R1 && R2) {
		CHECK(metric(R1, "lazy_informed", "eer") == metric(R2, "lazy_informed", "eer"));
		CHECK(metric(R1, "lazy_informed", "cllr") == metric(R2, "lazy_informed", "cllr"));
		CHECK(vpa_json_get(R1, "records")->n == 1);
	}
	vpa_json_free(R1);
	vpa_json_free(R2);
}

int main(void)
{
	RUN(test_ddiag);
	RUN(test_default_ordering);
	RUN(test_reproducible);
	return DONE();
}
