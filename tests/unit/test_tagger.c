/*
 * tests/unit/test_tagger.c - targets/tagger.c and attacks/dexposure.c:
 * the coarse tag mapping, the confidence TSV (values, errors with their
 * place), d-exposure through the attack on hand-made confidence lists with
 * ties (import path; expected values computed by hand), a tagger trained on
 * a small hand-made Brown fixture (it must learn it), slot probabilities that
 * are probability vectors, DP-SGD epsilon equal to the accountant's, and the
 * whole train path (canary, reference sets, records) on the fixture.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attacks/attacks.h"
#include "config/yaml.h"
#include "metrics/metrics.h"
#include "targets/tagger.h"
#include "harness.h"

extern const struct vpa_attack_kind vpa_attack_d_exposure;

/* The attack's hooks on its options, filled from a mapping as validation
 * fills them (the options borrow the nodes' strings). */
static int dx_run(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg, const struct vpa_target *t,
		  struct vpa_attack_out *out, struct vpa_err *err)
{
	void *o = vpa_opts_new(vpa_attack_d_exposure.schema, cfg);
	int rc = vpa_attack_d_exposure.run(ctx, "dx", o, t, out, err);
	vpa_opts_free(vpa_attack_d_exposure.schema, o);
	return rc;
}
static size_t dx_subs(const struct vpa_ynode *cfg, const struct vpa_ynode *tcfg,
		      const char ***names)
{
	void *o = vpa_opts_new(vpa_attack_d_exposure.schema, cfg);
	void *to = vpa_opts_new(vpa_target_tagger.schema, tcfg);
	size_t n = vpa_attack_d_exposure.subs(o, to, names);
	vpa_opts_free(vpa_attack_d_exposure.schema, o);
	vpa_opts_free(vpa_target_tagger.schema, to);
	return n;
}

static const struct vpa_json *json_at(const struct vpa_json *a, size_t i)
{
	return a && i < a->n ? a->items[i] : NULL;
}
static size_t json_len(const struct vpa_json *a)
{
	return a ? a->n : 0;
}
static const char *json_str(const struct vpa_json *v)
{
	return v && v->type == VPA_JSON_STR ? v->str : NULL;
}
static double json_num(const struct vpa_json *v)
{
	return v && v->type == VPA_JSON_NUM ? v->num : NAN;
}

static void test_coarse(void)
{
	const char *cases[][2] = {
		{"nn", "NOUN"},      {"nns-tl", "NOUN"},  {"nr", "NOUN"},     {"nn$-hl", "NOUN"},
		{"vb", "VERB"},      {"vbd", "VERB"},     {"bedz", "VERB"},   {"md*", "VERB"},
		{"hvz", "VERB"},     {"dod*", "VERB"},    {"vb+ppo", "VERB"}, {"jj", "ADJ"},
		{"jjt-tl", "ADJ"},   {"od", "ADJ"},       {"np-tl", "PROPN"}, {"nps$", "PROPN"},
		{"at", "OTHER"},     {"pps+bez", "OTHER"}, {".", "OTHER"},    {"*", "OTHER"},
		{"fw-nn", "NOUN"},   {"cd", "OTHER"},     {"rb", "OTHER"},    {"in-tl", "OTHER"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_STR(vpa_tag_names[vpa_tag_coarse(cases[i][0])], cases[i][1]);
	CHECK(vpa_tag_find("ADJ") == VPA_TAG_ADJ);
	CHECK(vpa_tag_find("adj") == -1);
}

static void test_tsv(void)
{
	const char *ok = "# word class conf\r\ncanary\tNOUN\t0.25\r\n\r\ncanary VERB 0.75\n"
			 "house\tNOUN\t1\nrun VERB 0\n";
	struct vpa_tagconf t;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_tagconf_parse("f.tsv", ok, strlen(ok), &t, &err) == 0);
	CHECK(t.n_class == 2 && t.n_rows == 4);
	CHECK_STR(t.class_name[0], "NOUN");
	CHECK_STR(t.class_name[1], "VERB");
	CHECK_STR(t.word[3], "run");
	CHECK(t.cls[1] == 1 && t.cls[2] == 0);
	CHECK(t.conf[0] == 0.25 && t.conf[2] == 1 && t.conf[3] == 0);
	CHECK(t.line[1] == 4 && t.line[3] == 6);
	vpa_tagconf_release(&t);
	struct {
		const char *text, *msg;
	} bad[] = {
		{"a NOUN 0.5\nb NOUN\n", "f.tsv:2: expected 3 columns 'word class confidence', found 2"},
		{"a NOUN 0.5 x\n", "f.tsv:1: expected 3 columns 'word class confidence', found 4"},
		{"a NOUN 0.5\nrun VERB 1.5\n", "f.tsv:2:10: confidence must be a number in [0, 1], got '1.5'"},
		{"a NOUN nan\n", "f.tsv:1:8: confidence must be a number in [0, 1], got 'nan'"},
		{"a NOUN -0.1\n", "f.tsv:1:8: confidence must be a number in [0, 1], got '-0.1'"},
		{"a NOUN 0.5x\n", "f.tsv:1:8: confidence must be a number in [0, 1], got '0.5x'"},
		{"x  a/b 0.5\n", "f.tsv:1:4: invalid class name 'a/b'"},
		{"run VERB 0.1\nx N 1\nrun VERB 0.2\n",
		 "f.tsv:3: duplicate word 'run' for class 'VERB' (first on line 1)"},
		{"# only a comment\n\n", "f.tsv: no confidence line"},
		{"", "f.tsv: no confidence line"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		vpa_err_init(&err);
		CHECK(vpa_tagconf_parse("f.tsv", bad[i].text, strlen(bad[i].text), &t, &err) ==
		      VPA_EINPUT);
		CHECK_STR(err.msg, bad[i].msg);
		CHECK(t.n_rows == 0 && t.word == NULL);
	}
	vpa_err_init(&err);
	CHECK(vpa_tagconf_read("/nonexistent.tsv", &t, &err) == VPA_EIO);
}

/* Run the attack on an imported target built from a TSV in memory. */
static int run_import(const char *tsv, const char *canary, struct vpa_json **records,
		      struct vpa_err *err)
{
	struct vpa_tagger_target *tt = xcalloc(1, sizeof(*tt));
	tt->imported = 1;
	tt->canary = xstrdup(canary);
	tt->conf_path = xstrdup("c.tsv");
	int rc = vpa_tagconf_parse("c.tsv", tsv, strlen(tsv), &tt->conf, err);
	struct vpa_target t = {&vpa_target_tagger, "tg", 0, vpa_json_obj(), tt};
	struct vpa_json *warn = vpa_json_arr();
	struct vpa_run_ctx ctx = {"x.yaml", ".", 1, 1, warn, NULL};
	struct vpa_attack_out out = {vpa_json_arr(), vpa_json_arr()};
	struct vpa_ynode *cfg = NULL;
	if (!rc)
		rc = vpa_yaml_parse("x.yaml", "{}", 2, &cfg, err);
	if (!rc)
		rc = dx_run(&ctx, cfg, &t, &out, err);
	vpa_ynode_free(cfg);
	vpa_target_release(&t);
	vpa_json_free(warn);
	vpa_json_free(out.figures);
	*records = out.records;
	return rc;
}

static double metric(const struct vpa_json *records, size_t i, const char *key)
{
	const struct vpa_json *r = json_at(records, i);
	const struct vpa_json *v = r ? vpa_json_get(vpa_json_get(r, "metrics"), key) : NULL;
	return v ? json_num(v) : NAN;
}

static void test_import_dexposure(void)
{
	/* NOUN: canary 0.5 against {0.9, 0.5, 0.5, 0.1}: 3 at or above (ties count
	 * against the canary): -log2(3/4) = 0.4150375; max log2 4 = 2.
	 * VERB: canary 0.99 against {0.2, 0.3, 0.1, 0.4, 0.5, 0.6, 0.7, 0.8}: none
	 * above, clamped to 1: log2 8 = 3 = the maximum.
	 * ADJ: canary 0.2 against {0.2, 0.2}: both tie: -log2(2/2) = 0; max 1.
	 * mean = (0.4150375 + 3 + 0) / 3 = 1.1383458. */
	const char *tsv = "s NOUN 0.5\ns VERB 0.99\ns ADJ 0.2\n"
			  "a NOUN 0.9\nb NOUN 0.5\nc NOUN 0.5\nd NOUN 0.1\n"
			  "e VERB 0.2\nf VERB 0.3\ng VERB 0.1\nh VERB 0.4\n"
			  "i VERB 0.5\nj VERB 0.6\nk VERB 0.7\nl VERB 0.8\n"
			  "m ADJ 0.2\nn ADJ 0.2\n";
	struct vpa_json *rec = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(run_import(tsv, "s", &rec, &err) == 0);
	CHECK(json_len(rec) == 1);
	CHECK_STR(json_str(vpa_json_get(json_at(rec, 0), "sub")), "import");
	CHECK_NEAR(metric(rec, 0, "d_exposure_NOUN"), 2 - log2(3.0), 1e-12);
	CHECK_NEAR(metric(rec, 0, "d_exposure_VERB"), 3, 1e-12);
	CHECK_NEAR(metric(rec, 0, "d_exposure_ADJ"), 0, 1e-12);
	CHECK_NEAR(metric(rec, 0, "max_NOUN"), 2, 1e-12);
	CHECK_NEAR(metric(rec, 0, "max_VERB"), 3, 1e-12);
	CHECK_NEAR(metric(rec, 0, "max_ADJ"), 1, 1e-12);
	CHECK_NEAR(metric(rec, 0, "d_exposure"), (2 - log2(3.0) + 3) / 3, 1e-12);
	CHECK_NEAR(metric(rec, 0, "d_exposure_max"), 2, 1e-12);
	CHECK(metric(rec, 0, "n_ref_VERB") == 8);
	/* exchangeable levels (what a reference word itself would get; not the
	 * chance level of an ambiguous canary, which needs control words, so an
	 * import has none): (1/(n+1)) sum_{j=0..n} log2(n/max(j,1)):
	 * n=4: (2+2+1+log2(4/3)+0)/5; n=8: (3+3+2+log2(8/3)+1+log2(8/5)+log2(8/6)+log2(8/7)+0)/9;
	 * n=2: (1+1+0)/3 */
	double c4 = (5 + log2(4.0 / 3)) / 5;
	double c8 = (9 + log2(8.0 / 3) + log2(8.0 / 5) + log2(8.0 / 6) + log2(8.0 / 7)) / 9;
	double c2 = 2.0 / 3;
	CHECK_NEAR(metric(rec, 0, "d_exposure_exchangeable"), (c4 + c8 + c2) / 3, 1e-12);
	CHECK(vpa_json_get(vpa_json_get(json_at(rec, 0), "metrics"), "d_exposure_chance") &&
	      isnan(metric(rec, 0, "d_exposure_chance")));
	vpa_json_free(rec);

	/* all tie: every class 0 */
	const char *ties = "s X 0.5\na X 0.5\nb X 0.5\nc X 0.5\n";
	vpa_err_init(&err);
	CHECK(run_import(ties, "s", &rec, &err) == 0);
	CHECK_NEAR(metric(rec, 0, "d_exposure"), 0, 0);
	CHECK_NEAR(metric(rec, 0, "d_exposure_max"), log2(3.0), 1e-12);
	vpa_json_free(rec);

	/* errors: the canary lacks a class; a class with only the canary */
	vpa_err_init(&err);
	CHECK(run_import("s NOUN 0.5\na NOUN 0.1\nb VERB 0.3\n", "s", &rec, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "c.tsv: no confidence of class 'VERB' for the canary 's'");
	vpa_json_free(rec);
	vpa_err_init(&err);
	CHECK(run_import("s NOUN 0.5\na NOUN 0.1\ns VERB 0.3\n", "s", &rec, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "c.tsv: class 'VERB' has no reference word (only the canary)");
	vpa_json_free(rec);
	vpa_err_init(&err);
	CHECK(run_import("a NOUN 0.5\n", "zz", &rec, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "c.tsv: no confidence of class 'NOUN' for the canary 'zz'");
	vpa_json_free(rec);
}

/* A small Brown fixture: nouns after "the", verbs after "they", adjectives
 * between "the" and a noun, names first; "fly" is both a noun and a verb. */
static char *fixture(void)
{
	static const char *nouns[] = {"dog", "cat", "house", "car", "tree", "book", "fly"};
	static const char *verbs[] = {"run", "see", "like", "eat", "fly", "walk"};
	static const char *adjs[] = {"big", "red", "old", "new"};
	static const char *names[] = {"John", "Mary", "Paris"};
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (int d = 0; d < 6; d++) {
		for (int s = 0; s < 40; s++) {
			int i = d * 40 + s;
			vpa_buf_printf(&b, "\t%s/np they/ppss %s/vb the/at %s/jj %s/nn ./.\n",
				       names[i % 3], verbs[(i / 3) % 6], adjs[i % 4], nouns[(i / 2) % 7]);
		}
		vpa_buf_add(&b, "\f", 1); /* document separator for the test below */
	}
	return b.data;
}

static void load_fixture(struct vpa_tagger_data *d)
{
	char *text = fixture();
	memset(d, 0, sizeof(*d));
	vpa_corpus_init(&d->corpus);
	vpa_vocab_init(&d->vocab);
	struct vpa_err err;
	vpa_err_init(&err);
	char *p = text;
	for (int k = 0; k < 6; k++) {
		char *e = strchr(p, '\f');
		char name[16];
		snprintf(name, sizeof(name), "ca%02d", k + 1);
		CHECK(vpa_corpus_add_brown(&d->corpus, name, p, (size_t)(e - p), NULL, &err) == 0);
		p = e + 1;
	}
	free(text);
	d->cls = xmalloc(d->corpus.n_tok);
	for (size_t i = 0; i < d->corpus.n_tok; i++)
		d->cls[i] = (uint8_t)vpa_tag_coarse(d->corpus.tag[i]);
	d->train = xmalloc(d->corpus.n_sent * sizeof(size_t));
	d->test = xmalloc(d->corpus.n_sent * sizeof(size_t));
	for (size_t s = 0; s < d->corpus.n_sent; s++) {
		if (d->corpus.sent_doc[s] == 5)
			d->test[d->n_test++] = s;
		else
			d->train[d->n_train++] = s;
	}
	vpa_vocab_build(&d->vocab, &d->corpus, d->train, d->n_train, 0, 1);
}

static void small_cfg(struct vpa_tagger_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->embedding = 16;
	c->hidden = 16;
	c->vocab_size = 100;
	c->dropout = 0;
	c->lr = 0.02;
	c->adam = 1;
	c->batch = 8;
	c->epochs = 5;
	c->clip = 1;
	c->noise_multiplier = 1.1;
	c->delta = 1e-5;
	c->seed = 7;
}

static void test_train_fixture(void)
{
	struct vpa_tagger_data d;
	load_fixture(&d);
	CHECK(d.corpus.n_doc == 6 && d.n_train == 200 && d.n_test == 40);
	struct vpa_tagger_cfg c;
	small_cfg(&c);
	struct vpa_nn *net = NULL;
	struct vpa_tagger_stats st;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_tagger_train(&d, &c, d.train, d.n_train, NULL, NULL, NULL, &net, &st, &err) == 0);
	double acc = 0, loss = 0;
	CHECK(vpa_tagger_eval(net, &d, d.test, d.n_test, &acc, &loss, &err) == 0);
	CHECK(acc >= 0.99); /* the pattern is deterministic given the position */
	CHECK(loss < 0.1);
	CHECK(isnan(st.epsilon));
	CHECK(st.tokens_per_s > 0);
	/* slot probabilities: probability vectors; "fly" after "they" is a verb */
	uint32_t ctx[4] = {vpa_vocab_id(&d.vocab, "John"), vpa_vocab_id(&d.vocab, "they"), 0,
			   vpa_vocab_id(&d.vocab, "the")};
	uint32_t words[3] = {vpa_vocab_id(&d.vocab, "fly"), vpa_vocab_id(&d.vocab, "run"),
			     vpa_vocab_id(&d.vocab, "dog")};
	double pr[3 * VPA_TAG_N];
	CHECK(vpa_tagger_slot_probs(net, ctx, 4, 2, words, 3, pr, &err) == 0);
	for (int i = 0; i < 3; i++) {
		double s = 0;
		for (int k = 0; k < VPA_TAG_N; k++) {
			CHECK(pr[i * VPA_TAG_N + k] >= 0 && pr[i * VPA_TAG_N + k] <= 1);
			s += pr[i * VPA_TAG_N + k];
		}
		CHECK_NEAR(s, 1, 1e-9);
	}
	CHECK(pr[1 * VPA_TAG_N + VPA_TAG_VERB] > 0.9);
	vpa_nn_free(net);

	/* DP-SGD: epsilon is the accountant's for q = batch / N and epochs * round(1/q) steps */
	c.dp = 1;
	c.epochs = 2;
	CHECK(vpa_tagger_train(&d, &c, d.train, d.n_train, NULL, NULL, NULL, &net, &st, &err) == 0);
	double eps;
	CHECK(vpa_dp_epsilon(8.0 / 200, 1.1, 2 * 25, 1e-5, &eps, NULL, &err) == 0);
	CHECK_NEAR(st.epsilon, eps, 1e-12);
	CHECK_NEAR(st.q, 0.04, 1e-15);
	CHECK(st.steps == 50);
	vpa_nn_free(net);
	/* target epsilon: sigma from the accountant, epsilon then at most the target */
	c.target_epsilon = 2;
	CHECK(vpa_tagger_train(&d, &c, d.train, d.n_train, NULL, NULL, NULL, &net, &st, &err) == 0);
	CHECK(st.epsilon <= 2 + 1e-9 && st.epsilon > 1.9);
	vpa_nn_free(net);
	/* user-level DP-SGD: 5 training documents of 40 sentences; users are
	 * runs of user_sentences within a document, the 10 canary copies one
	 * more user; q = batch / users and epsilon is the accountant's for it */
	uint32_t cid[3] = {vpa_vocab_id(&d.vocab, "they"), vpa_vocab_id(&d.vocab, "fly"),
			   vpa_vocab_id(&d.vocab, "the")};
	uint32_t clab[3] = {VPA_TAG_OTHER, VPA_TAG_VERB, VPA_TAG_OTHER};
	struct vpa_tagger_extra ex = {cid, clab, 3, 10};
	c.target_epsilon = 0;
	c.dp_user = 1;
	c.epochs = 1;
	const size_t per[4] = {1, 7, 8, 100000}, want_users[4] = {200, 30, 25, 5};
	for (int k = 0; k < 4; k++) {
		c.user_sentences = per[k];
		CHECK(vpa_tagger_train(&d, &c, d.train, d.n_train, &ex, NULL, NULL, &net, &st,
				       &err) == 0);
		CHECK(st.units == want_users[k] + 1);
		double qq = 8.0 / (double)(want_users[k] + 1);
		CHECK_NEAR(st.q, qq > 1 ? 1 : qq, 1e-15);
		double steps = (double)llround(1.0 / (qq > 1 ? 1 : qq));
		CHECK(st.steps == steps);
		CHECK(vpa_dp_epsilon(qq > 1 ? 1 : qq, 1.1, steps, 1e-5, &eps, NULL, &err) == 0);
		CHECK_NEAR(st.epsilon, eps, 1e-12);
		vpa_nn_free(net);
	}
	/* without extra copies there is no canary user */
	c.user_sentences = 8;
	CHECK(vpa_tagger_train(&d, &c, d.train, d.n_train, NULL, NULL, NULL, &net, &st, &err) == 0);
	CHECK(st.units == 25);
	vpa_nn_free(net);
	vpa_tagger_data_release(&d);
}

/* The train path of the attack on the fixture: canary "fly" labelled ADJ. */
static void test_attack_train(void)
{
	struct vpa_tagger_target *tt = xcalloc(1, sizeof(*tt));
	load_fixture(&tt->data);
	small_cfg(&tt->cfg);
	tt->cfg.epochs = 4;
	struct vpa_target t = {&vpa_target_tagger, "tg", 0, vpa_json_obj(), tt};
	struct vpa_json *warn = vpa_json_arr();
	struct vpa_run_ctx ctx = {"x.yaml", ".", 1, 1, warn, NULL};
	struct vpa_attack_out out = {vpa_json_arr(), vpa_json_arr()};
	const char *y = "{canary: fly, label: ADJ, context: \"Mary they like the ___ dog .\", "
			"repetitions: [0, 64], dp: true, dp_noise_multiplier: 4, overfit: true, "
			"overfit_epochs: 3, overfit_repetitions: [8]}";
	struct vpa_ynode *cfg = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_yaml_parse("x.yaml", y, strlen(y), &cfg, &err) == 0);
	int rc = dx_run(&ctx, cfg, &t, &out, &err);
	CHECK(rc == 0);
	if (rc)
		printf("#   %s\n", err.msg);
	/* records: k0 k64 dp-k0 dp-k64, 2 x 4 epoch records without and with DP,
	 * overfit-k8 and dp-overfit-k8 */
	CHECK(json_len(out.records) == 4 + 8 + 8 + 2);
	const char **names = NULL;
	const struct vpa_ynode *tcfg = NULL;
	struct vpa_ynode *tc = NULL;
	CHECK(vpa_yaml_parse("t.yaml", "{epochs: 4}", 11, &tc, &err) == 0);
	tcfg = tc;
	size_t ns = dx_subs(cfg, tcfg, &names);
	CHECK(ns == 22);
	for (size_t i = 0; i < ns && i < json_len(out.records); i++)
		CHECK_STR(json_str(vpa_json_get(json_at(out.records, i), "sub")),
			  names[i]);
	free(names);
	vpa_ynode_free(tc);
	for (size_t i = 0; i < json_len(out.records); i++) {
		double m = metric(out.records, i, "d_exposure");
		CHECK(m >= 0 && m <= metric(out.records, i, "d_exposure_max"));
		const char *cls[] = {"NOUN", "VERB", "ADJ", "PROPN", "OTHER"};
		for (int k = 0; k < 5; k++) {
			char a[64], b[64];
			snprintf(a, sizeof(a), "d_exposure_%s", cls[k]);
			snprintf(b, sizeof(b), "max_%s", cls[k]);
			CHECK(metric(out.records, i, a) <= metric(out.records, i, b));
		}
	}
	/* the new fields: the label's maximum, the exchangeable level by hand from the
	 * reference set sizes, the chance level of the control words (null without) */
	{
		const struct vpa_json *cj0 = vpa_json_get(json_at(out.records, 0), "canary");
		const struct vpa_json *nr = vpa_json_get(cj0, "n_ref");
		const char *cls[] = {"NOUN", "VERB", "ADJ", "PROPN", "OTHER"};
		double ex = 0;
		for (int k = 0; k < 5; k++) {
			double n = json_num(vpa_json_get(nr, cls[k])), e = 0;
			for (double j = 0; j <= n; j++)
				e += log2(n) - log2(j > 0 ? j : 1);
			ex += e / (n + 1) / 5;
		}
		size_t nctl = json_len(vpa_json_get(cj0, "controls"));
		for (size_t i = 0; i < json_len(out.records); i++) {
			CHECK_NEAR(metric(out.records, i, "d_exposure_label_max"),
				   metric(out.records, i, "max_ADJ"), 0);
			CHECK_NEAR(metric(out.records, i, "d_exposure_exchangeable"), ex, 1e-12);
			CHECK(metric(out.records, i, "controls") == (double)nctl);
			double ch = metric(out.records, i, "d_exposure_label_chance");
			CHECK(nctl ? ch >= 0 && ch <= metric(out.records, i, "max_ADJ") : isnan(ch));
			if (nctl)
				CHECK_NEAR(metric(out.records, i, "d_exposure_label_excess"),
					   metric(out.records, i, "d_exposure_label") - ch, 1e-12);
		}
		/* DP records carry the value without DP at the same k */
		CHECK_NEAR(metric(out.records, 3, "d_exposure_label_no_dp"),
			   metric(out.records, 1, "d_exposure_label"), 0);
	}
	/* memorisation: the ADJ label of the canary grows with insertions (no DP) */
	double k0 = metric(out.records, 0, "d_exposure_label");
	double k64 = metric(out.records, 1, "d_exposure_label");
	CHECK(k64 >= k0);
	/* the references (big, red, old, new) are learnt perfectly, so the canary
	 * cannot pass them here; its confidence in ADJ must still rise */
	double c0 = metric(out.records, 0, "canary_conf_label");
	double c64 = metric(out.records, 1, "canary_conf_label");
	CHECK(c0 < 0.5 && c64 > 0.9);
	/* DP records carry epsilon, the others null */
	CHECK(!isnan(metric(out.records, 2, "epsilon")) && metric(out.records, 2, "epsilon") > 0);
	CHECK(vpa_json_get(vpa_json_get(json_at(out.records, 0), "metrics"), "epsilon") &&
	      isnan(metric(out.records, 0, "epsilon")));
	/* the canary information */
	const struct vpa_json *cj = vpa_json_get(json_at(out.records, 0), "canary");
	CHECK_STR(json_str(vpa_json_get(cj, "canary")), "fly");
	CHECK_STR(json_str(vpa_json_get(cj, "canary_sentence")),
		  "Mary/PROPN they/OTHER like/VERB the/OTHER fly/ADJ dog/NOUN ./OTHER");
	/* figures: repetitions, epochs (no DP, DP), overfit d-exposure and loss */
	CHECK(json_len(out.figures) == 5);
	/* the DP epoch table: epsilon after e epochs grows with e, and after the
	 * last epoch it is the run's (dp-k64: record 3; dp-k64-e1..e4: 16..19) */
	CHECK_STR(json_str(vpa_json_get(json_at(out.records, 19), "sub")), "dp-k64-e4");
	CHECK_STR(json_str(vpa_json_get(json_at(out.records, 21), "sub")), "dp-overfit-k8");
	for (size_t i = 16; i < 19; i++)
		CHECK(metric(out.records, i, "epsilon") < metric(out.records, i + 1, "epsilon"));
	CHECK_NEAR(metric(out.records, 19, "epsilon"), metric(out.records, 3, "epsilon"), 0);
	CHECK_NEAR(metric(out.records, 19, "d_exposure"), metric(out.records, 3, "d_exposure"), 0);
	CHECK_NEAR(metric(out.records, 16, "group_epsilon_bound"),
		   64 * metric(out.records, 16, "epsilon"), 1e-9);
	CHECK(isnan(metric(out.records, 20, "epsilon")));
	CHECK(metric(out.records, 21, "epsilon") > 0);
	printf("#   fixture: conf(ADJ | fly) k0 %.3f, k64 %.3f, dp-k64 %.3f (epsilon %.3g)\n", c0,
	       c64, metric(out.records, 3, "canary_conf_label"), metric(out.records, 3, "epsilon"));

	/* user-level DP-SGD: the 64 copies are one user's; dp_units = 25 users +
	 * the canary's owner; the group bound is epsilon itself, and the canary
	 * gains less than under per-sentence DP-SGD at the same noise */
	{
		const char *yu = "{canary: fly, label: ADJ, context: \"Mary they like the ___ dog "
				 ".\", repetitions: [64], epoch_table: false, dp: true, "
				 "dp_noise_multiplier: 1, dp_user: true, dp_user_sentences: 8, "
				 "dp_user_batch: 8}";
		struct vpa_ynode *cu = NULL;
		CHECK(vpa_yaml_parse("x.yaml", yu, strlen(yu), &cu, &err) == 0);
		struct vpa_attack_out ou = {vpa_json_arr(), vpa_json_arr()};
		CHECK(dx_run(&ctx, cu, &t, &ou, &err) == 0);
		CHECK(json_len(ou.records) == 3);
		const char **nm = NULL;
		CHECK(dx_subs(cu, NULL, &nm) == 3);
		CHECK_STR(nm[2], "dpuser-k64");
		for (size_t i = 0; i < 3 && i < json_len(ou.records); i++)
			CHECK_STR(json_str(vpa_json_get(json_at(ou.records, i), "sub")), nm[i]);
		free(nm);
		double e1 = metric(ou.records, 1, "epsilon"), e2 = metric(ou.records, 2, "epsilon");
		CHECK(e1 > 0 && e2 > 0);
		CHECK_NEAR(metric(ou.records, 1, "group_epsilon_bound"), 64 * e1, 1e-9);
		CHECK_NEAR(metric(ou.records, 2, "group_epsilon_bound"), e2, 1e-12);
		CHECK(metric(ou.records, 1, "dp_units") == 200 + 64);
		CHECK(metric(ou.records, 2, "dp_units") == 25 + 1);
		CHECK(metric(ou.records, 2, "user_sentences") == 8);
		double cs = metric(ou.records, 1, "canary_conf_label");
		double cu2 = metric(ou.records, 2, "canary_conf_label");
		printf("#   fixture: conf(ADJ | fly) k64 dp %.3f (eps %.3g), dpuser %.3f (eps %.3g)\n",
		       cs, e1, cu2, e2);
		CHECK(cu2 < cs);
		vpa_ynode_free(cu);
		vpa_json_free(ou.records);
		vpa_json_free(ou.figures);
	}

	/* a canary that is not ambiguous, one out of the vocabulary */
	struct vpa_ynode *c2 = NULL;
	CHECK(vpa_yaml_parse("x.yaml", "{canary: dog, repetitions: [0]}", 31, &c2, &err) == 0);
	vpa_err_init(&err);
	struct vpa_attack_out o2 = {vpa_json_arr(), vpa_json_arr()};
	CHECK(dx_run(&ctx, c2, &t, &o2, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "canary 'dog' is not ambiguous: the training data labels it only with "
			   "one class");
	vpa_ynode_free(c2);
	CHECK(vpa_yaml_parse("x.yaml", "{canary: zebra, repetitions: [0]}", 33, &c2, &err) == 0);
	vpa_err_init(&err);
	CHECK(dx_run(&ctx, c2, &t, &o2, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "canary 'zebra' is not in the tagger's vocabulary") != NULL);
	vpa_ynode_free(c2);
	vpa_json_free(o2.records);
	vpa_json_free(o2.figures);

	vpa_ynode_free(cfg);
	vpa_json_free(out.records);
	vpa_json_free(out.figures);
	vpa_json_free(warn);
	vpa_target_release(&t);
}

int main(void)
{
	RUN(test_coarse);
	RUN(test_tsv);
	RUN(test_import_dexposure);
	RUN(test_train_fixture);
	RUN(test_attack_train);
	return DONE();
}
