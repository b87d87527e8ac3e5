/*
 * tests/unit/test_flam_dp.c - DP of fl_acoustic_models (issue 31 item 11,
 * issue 28 item 3): the accountants of vpa_flam_dp_account against
 * published values and the analytic Gaussian mechanism's own definition; the
 * checks of `dp_info:` and `dp_fault:` with their marks; the local-DP audit
 * of a1_footprint: below the claim on a correct run, above it with
 * `dp_fault: skip_noise`, recomputed from its disjoint pairs, the same for 1
 * and 2 threads.
 */
#include "config/yaml.h"
#include "harness.h"
#include "attacks/attacks.h"
#include "metrics/metrics.h"
#include "metrics/pld.h"
#include "targets/fl_am.h"

#include <math.h>
#include <stdlib.h>

/*
 * delta(eps) of a Gaussian mechanism, sensitivity D, noise std s (Balle &
 * Wang 2018, Thm 8): Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D),
 * written out here, not through metrics/dp.c's inverse.
 */
static double gauss_delta(double eps, double s, double D)
{
	double a = D / (2 * s), b = eps * s / D;
	return 0.5 * erfc(-(a - b) / sqrt(2)) - exp(eps) * 0.5 * erfc((a + b) / sqrt(2));
}

static void test_account_local(void)
{
	struct vpa_flam t;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_flam_init(&t);
	t.dp_mech = VPA_FLAM_DP_LOCAL;
	t.dp_clip = 0.15;
	t.dp_noise = 2;
	t.dp_delta = 1e-5;
	t.dp_releases_max = 2;
	struct vpa_json *info = vpa_json_obj();
	CHECK(vpa_flam_dp_account(&t, info, &err) == 0);
	double s = 2 * 0.15;
	/* each epsilon is where the mechanism's exact delta curve meets delta */
	CHECK_REL(gauss_delta(t.dp_epsilon, s, 0.15), 1e-5, 1e-6);
	CHECK_REL(gauss_delta(t.dp_epsilon_speaker, s, 0.15 * sqrt(2)), 1e-5, 1e-6);
	CHECK_REL(gauss_delta(t.dp_epsilon_replace, s, 0.3), 1e-5, 1e-6);
	CHECK_REL(gauss_delta(t.dp_epsilon_replace_speaker, s, 0.3 * sqrt(2)), 1e-5, 1e-6);
	/* replacement is the stronger relation; composition costs */
	CHECK(t.dp_epsilon < t.dp_epsilon_speaker && t.dp_epsilon < t.dp_epsilon_replace);
	/* RDP beside it: `vpaudit dp epsilon --q 1 --sigma 2 --steps 2 --delta 1e-5`, looser */
	double r;
	CHECK(vpa_dp_epsilon(1, 2, 2, 1e-5, &r, NULL, &err) == 0);
	CHECK(t.dp_epsilon_rdp == r);
	CHECK(t.dp_epsilon_rdp > t.dp_epsilon_speaker);
	CHECK_STR(t.dp_accountant, "analytic_gaussian");
	const struct vpa_json *d = vpa_json_get(info, "dp");
	CHECK(d && vpa_json_get_num(d, "epsilon", 0) == t.dp_epsilon_speaker);
	CHECK(d && vpa_json_get_num(d, "epsilon_per_release_replace", 0) == t.dp_epsilon_replace);
	vpa_json_free(info);
	/* no noise: no claim */
	t.dp_noise = 0;
	CHECK(vpa_flam_dp_account(&t, NULL, &err) == 0);
	CHECK(isinf(t.dp_epsilon) && isinf(t.dp_epsilon_speaker) && isinf(t.dp_epsilon_rdp));
	vpa_flam_release(&t);
}

/* DP-SGD on MNIST (issue 28: sigma 1.1, q 256/60000, 14,063 steps, delta 1e-5):
 * RDP 2.597 with the improved conversion, PLD about 2.38 (add/remove). */
static void test_account_dpsgd(void)
{
	struct vpa_flam t;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_flam_init(&t);
	t.dp_mech = VPA_FLAM_DP_DPSGD;
	t.dp_clip = 1;
	t.dp_noise = 1.1;
	t.dp_delta = 1e-5;
	t.dp_q = 256.0 / 60000;
	t.dp_steps = 14063;
	CHECK(vpa_flam_dp_account(&t, NULL, &err) == 0);
	CHECK_NEAR(t.dp_epsilon_rdp, 2.597, 0.0005);
	CHECK_NEAR(t.dp_epsilon_speaker, 2.38, 0.005);
	CHECK_STR(t.dp_accountant, "pld");
	printf("# MNIST DP-SGD: RDP %.4f, PLD %.4f\n", t.dp_epsilon_rdp, t.dp_epsilon_speaker);
	vpa_flam_release(&t);
}

static struct vpa_ynode *yaml(const char *s)
{
	struct vpa_ynode *n = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_yaml_parse("cfg", s, strlen(s), &n, &err))
		printf("# %s\n", err.msg);
	return n;
}

static int check_target(const char *text, struct vpa_err *err)
{
	const struct vpa_target_kind *k = &vpa_target_fl_acoustic_models;
	const struct vpa_kind_ctx ctx = {"x.yaml", "."};
	struct vpa_ynode *n = yaml(text);
	void *o = vpa_opts_new(k->schema, n);
	vpa_err_init(err);
	int rc = k->validate(&ctx, o, err);
	vpa_opts_free(k->schema, o);
	vpa_ynode_free(n);
	return rc;
}

#define IMP "{id: fl, kind: fl_acoustic_models, source: import,\n" \
	    "  import: {models: tests/golden/flam/models.txt, activations: tests/golden/flam},\n"

static void test_checks(void)
{
	struct vpa_err err;
	CHECK(check_target(IMP "  dp_info: {mechanism: local, clip: 0.15, noise: 1}}", &err) == 0);
	CHECK(check_target(IMP "  dp_info: {mechanism: dp_sgd, clip: 1, noise: 1.1, steps: 10, "
			       "q: 0.01}}", &err) == 0);
	CHECK(check_target(IMP "  dp: {clip: 1, noise: 1}}", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:3:3: `dp:` applies to source 'simulate' only (it adds noise); "
			   "describe the DP your imported models were trained with in `dp_info:` "
			   "({mechanism: local|dp_sgd, clip, noise, delta[, steps, q]})");
	CHECK(check_target(IMP "  dp_info: {mechanism: local, clip: 1, noise: 1, steps: 5}}",
			   &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:3:50: `steps` applies to `mechanism: dp_sgd` only (local DP is "
			   "one release per model)");
	CHECK(check_target(IMP "  dp_info: {mechanism: dp_sgd, clip: 1, noise: 1, q: 0.1}}",
			   &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:3:12: dp_info: `mechanism: dp_sgd` needs `steps` (the "
			   "accountant composes `steps` steps of sampling rate `q`)");
	CHECK(check_target(IMP "  dp_fault: skip_noise}", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:3:3: `dp_fault:` applies to the models trained here (source "
			   "'simulate' or 'audio')");
	CHECK(check_target("{id: fl, kind: fl_acoustic_models, dp_info: {mechanism: local, clip: 1, "
			   "noise: 1}}", &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:1:36: `dp_info:` describes imported models (source: import); "
			   "models trained here take `dp:`");
	CHECK(check_target("{id: fl, kind: fl_acoustic_models, dp_fault: skip_noise}", &err) ==
	      VPA_EINPUT);
	CHECK_STR(err.msg, "x.yaml:1:46: dp_fault 'skip_noise' needs local DP on (`dp: {clip: C > "
			   "0, noise: ...}`)");
}

/* ---- the audit ------------------------------------------------------------------ */

#define SIM "simulate: {train_speakers: 20, train_utts: 5, part1_speakers: 2, " \
	    "part2_speakers: 60, two_models: 1, adapt_utts: 30, indicator_speakers: 4, " \
	    "indicator_utts: 3, hidden_layers: 2, hidden_dim: 24, states: 12, utt_frames: 60, " \
	    "global_epochs: 4, adapt_epochs: 3}, dp: {clip: 0.15, noise: 20, delta: 1e-5}"

/* Build the target from `text`, run a1_footprint on it: its records (caller frees). */
static struct vpa_json *a1_records(const char *text, int threads, struct vpa_flam **keep)
{
	const struct vpa_target_kind *k = &vpa_target_fl_acoustic_models;
	struct vpa_ynode *n = yaml(text);
	void *o = vpa_opts_new(k->schema, n);
	struct vpa_run_ctx ctx = {"x.yaml", ".", 7, threads, NULL, NULL};
	struct vpa_target t = {0};
	struct vpa_err err;
	vpa_err_init(&err);
	t.kind = k;
	t.id = "fl";
	CHECK(k->build(&ctx, o, &t, &err) == 0);
	const struct vpa_attack_kind *ak = vpa_attack_kind_find("a1_footprint");
	struct vpa_ynode *an = yaml("{id: a1, kind: a1_footprint, target: fl}");
	void *ao = vpa_opts_new(ak->schema, an);
	struct vpa_json *warn = vpa_json_arr();
	ctx.warnings = warn;
	struct vpa_attack_out out = {vpa_json_arr(), vpa_json_arr()};
	CHECK(ak->run(&ctx, "a1", ao, &t, &out, &err) == 0);
	if (keep) {
		*keep = t.data;
		t.data = NULL;
	}
	vpa_json_free(out.figures);
	vpa_json_free(warn);
	vpa_opts_free(ak->schema, ao);
	vpa_ynode_free(an);
	vpa_target_release(&t);
	vpa_opts_free(k->schema, o);
	vpa_ynode_free(n);
	return out.records;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The audit of layer h (0-based) recomputed: the attack's pairs thinned to
 * disjoint ones, the scores -rho, the sweep of vpa_dp_audit_scores. */
static double recompute(struct vpa_flam *t, size_t h, double alpha)
{
	size_t lay = h, nt, nn;
	uint32_t *tp, *np;
	double **mu, **sd;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_flam_pairs(t, VPA_FLAM_PART2, 10000, 7, &tp, &nt, &np, &nn);
	CHECK(vpa_a1_footprints(t, &lay, 1, NULL, 1, NULL, &mu, &sd, &err) == 0);
	double s[2][4096];
	size_t n[2] = {0, 0};
	for (int c = 0; c < 2; c++) {
		const uint32_t *p = c ? np : tp;
		size_t cnt = c ? nn : nt;
		unsigned char *used = xcalloc(t->n_models, 1);
		for (size_t i = 0; i < cnt; i++) {
			uint32_t a = p[2 * i], b = p[2 * i + 1];
			if (used[a] || used[b])
				continue;
			used[a] = used[b] = 1;
			s[c][n[c]++] = -vpa_footprint_rho(mu[a], sd[a], mu[b], sd[b], t->dim[h], 1, 10);
		}
		free(used);
		qsort(s[c], n[c], sizeof(double), cmp_d);
	}
	/* each model at most once per set: at most n_models / 2 pairs */
	CHECK(n[0] <= t->n_models / 2 && n[1] <= t->n_models / 2);
	struct vpa_dp_audit r;
	vpa_dp_audit_scores(s[0], n[0], s[1], n[1], alpha, t->dp_delta, VPA_AUDIT_CP, &r);
	for (size_t m = 0; m < t->n_models; m++) {
		free(mu[m]);
		free(sd[m]);
	}
	free(mu);
	free(sd);
	free(tp);
	free(np);
	return r.epsilon;
}

static void test_audit(void)
{
	struct vpa_flam *tok = NULL, *tbad = NULL;
	struct vpa_json *ok = a1_records("{id: fl, kind: fl_acoustic_models, " SIM "}", 1, &tok);
	struct vpa_json *bad = a1_records("{id: fl, kind: fl_acoustic_models, " SIM
					  ", dp_fault: skip_noise}", 1, &tbad);
	struct vpa_json *bad2 = a1_records("{id: fl, kind: fl_acoustic_models, " SIM
					   ", dp_fault: skip_noise}", 2, NULL);
	size_t audited = 0;
	for (size_t i = 0; i < ok->n && i < bad->n; i++) {
		const struct vpa_json *mo = vpa_json_get(ok->items[i], "metrics");
		const struct vpa_json *mb = vpa_json_get(bad->items[i], "metrics");
		const struct vpa_json *ao = vpa_json_get(mo, "dp_audit");
		const struct vpa_json *ab = vpa_json_get(mb, "dp_audit");
		const char *sub = vpa_json_get_str(ok->items[i], "sub");
		if (strcmp(sub, "mu_sigma")) { /* only the mu+sigma records are audited */
			CHECK(!ao && !ab && !vpa_json_get(mo, "epsilon_lower_bound"));
			continue;
		}
		audited++;
		CHECK(ao && ab);
		if (!ao || !ab)
			continue;
		double claim = vpa_json_get_num(ao, "claimed_epsilon", NAN);
		double lo_ok = vpa_json_get_num(mo, "epsilon_lower_bound", NAN);
		double lo_bad = vpa_json_get_num(mb, "epsilon_lower_bound", NAN);
		printf("# layer %g: claim %.4f, bound %.4f correct, %.4f skip_noise\n",
		       vpa_json_get_num(ok->items[i], "layer", 0), claim, lo_ok, lo_bad);
		/* the claim is the same (the fault keeps it); correct below, broken above */
		CHECK(claim == vpa_json_get_num(ab, "claimed_epsilon", NAN));
		CHECK(claim == tok->dp_epsilon_replace);
		CHECK(claim == vpa_json_get_num(mo, "epsilon_per_release_replace", NAN));
		CHECK(lo_ok >= 0 && lo_ok < claim);
		CHECK(lo_bad > claim);
		/* the shared convention's fields */
		CHECK_STR(vpa_json_get_str(ao, "method"), "cp");
		CHECK_STR(vpa_json_get_str(ao, "scope"), "covered");
		CHECK_STR(vpa_json_get_str(ao, "claim_key"), "epsilon_per_release_replace");
		CHECK_STR(vpa_json_get_str(ao, "accountant"), "analytic_gaussian");
		CHECK(vpa_json_get_num(ao, "alpha", 0) == 0.05);
		CHECK(vpa_json_get_num(ao, "delta", 0) == 1e-5);
		const struct vpa_json *cn = vpa_json_get(ab, "counts");
		CHECK(cn && vpa_json_get_num(cn, "positives", 0) == 60 &&
		      vpa_json_get_num(cn, "negatives", 0) == 60);
		CHECK(vpa_json_get_str(ao, "note") && vpa_json_get_str(ao, "adjacency"));
		/* recomputed from the pairs: alpha split over the 2 layers */
		size_t h = (size_t)vpa_json_get_num(bad->items[i], "layer", 1) - 1;
		CHECK(recompute(tbad, h, 0.025) == lo_bad);
		CHECK(recompute(tok, h, 0.025) == lo_ok);
	}
	CHECK(audited == 2);
	/* the thread count changes nothing */
	CHECK(bad->n == bad2->n);
	for (size_t i = 0; i < bad->n && i < bad2->n; i++) {
		const struct vpa_json *a = vpa_json_get(bad->items[i], "metrics");
		const struct vpa_json *b = vpa_json_get(bad2->items[i], "metrics");
		CHECK(vpa_json_get_num(a, "epsilon_lower_bound", -1) ==
		      vpa_json_get_num(b, "epsilon_lower_bound", -1));
		CHECK(vpa_json_get_num(a, "eer", -1) == vpa_json_get_num(b, "eer", -1));
	}
	vpa_json_free(ok);
	vpa_json_free(bad);
	vpa_json_free(bad2);
	vpa_flam_release(tok);
	vpa_flam_release(tbad);
	free(tok);
	free(tbad);
}

int main(void)
{
	RUN(test_account_local);
	RUN(test_account_dpsgd);
	RUN(test_checks);
	RUN(test_audit);
	return DONE();
}
