/*
 * tests/unit/test_classify.c - utterance classifiers (issue 30 item 2):
 * UAR / accuracy / recall / confusion (metrics/classify.c) by hand and
 * against scikit-learn on committed predictions, and the ONNX classifier
 * (embed/classify.c) against PyTorch's logits (tests/golden/ser/gen.py),
 * per-speaker folds, thread-count independence, bad input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "embed/classify.h"
#include "metrics/metrics.h"

#define G "tests/golden/ser/"

/* By hand: truth 0 0 0 1 1 2, answers 0 1 0 1 0 0; class 3 never true.
 * recall 2/3, 1/2, 0/1 -> UAR (2/3 + 1/2 + 0) / 3 = 7/18; accuracy 3/6. */
static void test_by_hand(void)
{
	uint32_t t[] = {0, 0, 0, 1, 1, 2}, p[] = {0, 1, 0, 1, 0, 3};
	struct vpa_cls_metrics m;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_cls_metrics(t, p, 6, 4, &m, &err) == 0);
	CHECK_NEAR(m.uar, 7.0 / 18.0, 1e-15);
	CHECK_NEAR(m.accuracy, 0.5, 1e-15);
	CHECK_NEAR(m.recall[0], 2.0 / 3.0, 1e-15);
	CHECK_NEAR(m.recall[1], 0.5, 1e-15);
	CHECK_NEAR(m.recall[2], 0.0, 0);
	CHECK(isnan(m.recall[3]));
	/* recall_score macro: classes 0..3 seen, class 3 counts 0 -> 7/24 */
	CHECK_NEAR(m.uar_macro, 7.0 / 24.0, 1e-15);
	CHECK(m.n_present == 3);
	CHECK(m.confusion[0 * 4 + 1] == 1 && m.confusion[2 * 4 + 3] == 1 && m.confusion[1 * 4 + 0] == 1);
	CHECK(m.support[0] == 3 && m.support[3] == 0);
	vpa_cls_metrics_release(&m);
	/* a majority-class answerer: accuracy 3/6, UAR 1/3 (why the VPC ranks by UAR) */
	uint32_t q[] = {0, 0, 0, 0, 0, 0};
	CHECK(vpa_cls_metrics(t, q, 6, 3, &m, &err) == 0);
	CHECK_NEAR(m.uar, 1.0 / 3.0, 1e-15);
	CHECK_NEAR(m.accuracy, 0.5, 1e-15);
	vpa_cls_metrics_release(&m);
	CHECK(vpa_cls_metrics(t, p, 6, 3, &m, &err) == VPA_EINPUT); /* class 3 out of range */
	CHECK_STR(err.msg, "sample 6: class 3 is outside [0, 3)");
	vpa_err_init(&err);
	CHECK(vpa_cls_metrics(t, p, 0, 3, &m, &err) == VPA_EINPUT);
}

/* sklearn.metrics balanced_accuracy_score / accuracy_score / recall_score /
 * confusion_matrix on 300 committed pairs (class 4 only ever answered). */
static void test_sklearn_golden(void)
{
	FILE *f = fopen(G "preds.txt", "r");
	CHECK(f != NULL);
	if (!f)
		return;
	uint32_t t[400], p[400], g[400];
	size_t n = 0;
	double uar = NAN, acc = NAN, rec[4] = {NAN, NAN, NAN, NAN}, macro = NAN, uf = NAN;
	double af[4] = {NAN, NAN, NAN, NAN};
	size_t cm[25];
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b, c;
		if (line[0] == '#')
			continue;
		if (!strncmp(line, "uar ", 4))
			uar = strtod(line + 4, NULL);
		else if (!strncmp(line, "uar_macro ", 10))
			macro = strtod(line + 10, NULL);
		else if (!strncmp(line, "uar_folds ", 10))
			uf = strtod(line + 10, NULL);
		else if (!strncmp(line, "acc_folds ", 10)) {
			char *s = line + 10;
			for (int k = 0; k < 4; k++)
				af[k] = strtod(s, &s);
		}
		else if (!strncmp(line, "accuracy ", 9))
			acc = strtod(line + 9, NULL);
		else if (!strncmp(line, "recall ", 7)) {
			char *s = line + 7;
			for (int k = 0; k < 4; k++)
				rec[k] = strtod(s, &s);
		} else if (!strncmp(line, "confusion ", 10)) {
			char *s = line + 10;
			for (int k = 0; k < 25; k++)
				cm[k] = (size_t)strtoul(s, &s, 10);
		} else if (sscanf(line, "%u %u %u", &a, &b, &c) == 3 && n < 400) {
			t[n] = a;
			g[n] = c;
			p[n++] = b;
		}
	}
	fclose(f);
	CHECK(n == 300);
	struct vpa_cls_metrics m;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_cls_metrics(t, p, n, 5, &m, &err) == 0);
	CHECK_NEAR(m.uar, uar, 1e-12);
	CHECK_NEAR(m.accuracy, acc, 1e-12);
	for (int k = 0; k < 4; k++)
		CHECK_NEAR(m.recall[k], rec[k], 1e-12);
	for (int k = 0; k < 25; k++)
		CHECK(m.confusion[k] == cm[k]);
	/* recall_score(average="macro"): class 4 (only answered) counts 0 */
	CHECK_NEAR(m.uar_macro, macro, 1e-12);
	CHECK(m.uar_macro < m.uar);
	vpa_cls_metrics_release(&m);
	/* the VPC's per-fold protocol (VoicePAT evaluate_ser) */
	double fu, fc[5];
	size_t ng;
	CHECK(vpa_cls_fold_uar(t, p, g, n, 5, 6, &fu, fc, &ng, &err) == 0);
	CHECK(ng == 6);
	CHECK_NEAR(fu, uf, 1e-12);
	for (int k = 0; k < 4; k++)
		CHECK_NEAR(fc[k], af[k], 1e-12);
	CHECK(isnan(fc[4]));
	/* folds by hand: fold 0 = {truth 0 0, answers 0 1}, fold 1 = {truth 1, answer 1}:
	 * macro recalls (1/2 + 0) / 2 = 1/4 and 1 -> 5/8; class 0: 1/2 (fold 0 only) */
	uint32_t ht[] = {0, 0, 1}, hp[] = {0, 1, 1}, hg[] = {0, 0, 1};
	CHECK(vpa_cls_fold_uar(ht, hp, hg, 3, 2, 3, &fu, fc, &ng, &err) == 0);
	CHECK_NEAR(fu, 5.0 / 8.0, 1e-15);
	CHECK_NEAR(fc[0], 0.5, 1e-15);
	CHECK_NEAR(fc[1], 1.0, 1e-15);
	CHECK(ng == 2); /* fold 2 has no sample */
}

/* PyTorch's logits of CASE for utterance utt (logits.txt), 0 when found. */
static int golden_logits(const char *cas, const char *utt, float *out)
{
	FILE *f = fopen(G "logits.txt", "r");
	if (!f)
		return -1;
	char c[64], u[64];
	float v[4];
	int found = -1;
	while (fscanf(f, "%63s", c) == 1) {
		if (c[0] == '#') {
			int ch;
			while ((ch = fgetc(f)) != '\n' && ch != EOF)
				;
			continue;
		}
		if (fscanf(f, "%63s %f %f %f %f", u, &v[0], &v[1], &v[2], &v[3]) != 5)
			break;
		if (!strcmp(c, cas) && !strcmp(u, utt)) {
			memcpy(out, v, sizeof(v));
			found = 0;
		}
	}
	fclose(f);
	return found;
}

/* every utterance's logits within 1e-4 of PyTorch's; the answer its argmax */
static void check_run(const struct vpa_cls_run *r, const char *cas, const char *cas_s3)
{
	CHECK(r->n == 8 && r->C == 4);
	for (size_t i = 0; i < r->n; i++) {
		float g[4];
		const char *c = cas_s3 && !strncmp(r->utt[i], "s3", 2) ? cas_s3 : cas;
		CHECK(golden_logits(c, r->utt[i], g) == 0);
		size_t best = 0;
		for (size_t k = 0; k < 4; k++) {
			CHECK_NEAR(r->logits[i * 4 + k], g[k], 1e-4);
			if (g[k] > g[best])
				best = k;
		}
		CHECK(r->pred[i] == best);
	}
}

static void test_wave_model(void)
{
	struct vpa_cls_opts o;
	struct vpa_cls_run r;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_cls_opts_init(&o, VPA_CLS_WAVE);
	CHECK(vpa_classify_dir(G "data", G "wave.onnx", NULL, G "labels.txt", NULL, &o, &r, &err) ==
	      0);
	check_run(&r, "wave", NULL);
	CHECK_STR(r.labels[0], "ang");
	/* the truth from utt2emo: s1_a ang, s2_a hap */
	CHECK(r.truth[0] == 0 && r.truth[3] == 1);
	vpa_cls_run_release(&r);
	CHECK(vpa_classify_dir(G "data_anon", G "wave.onnx", NULL, G "labels.txt", NULL, &o, &r,
			       &err) == 0);
	check_run(&r, "wave_anon", NULL);
	/* threads: the same bits */
	struct vpa_cls_run r2;
	o.threads = 2;
	CHECK(vpa_classify_dir(G "data_anon", G "wave.onnx", NULL, G "labels.txt", NULL, &o, &r2,
			       &err) == 0);
	CHECK(r2.n == r.n && !memcmp(r.logits, r2.logits, r.n * r.C * sizeof(float)));
	vpa_cls_run_release(&r);
	vpa_cls_run_release(&r2);
}

static void test_folds(void)
{
	struct vpa_cls_opts o;
	struct vpa_cls_run r;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_cls_opts_init(&o, VPA_CLS_WAVE);
	CHECK(vpa_classify_dir(G "data", NULL, G "folds.txt", G "labels.txt", G "data/utt2emo", &o,
			       &r, &err) == 0);
	check_run(&r, "wave", "wave_b"); /* s3 by wave_b.onnx, the others by wave.onnx */
	CHECK(r.n_groups == 3 && r.group && r.group[7] == 2);
	CHECK_STR(r.group_name[2], "s3");
	vpa_cls_run_release(&r);
	/* the VPC's per-fold UAR on both sets, as VoicePAT computes it (folds_uar.txt) */
	FILE *f = fopen(G "folds_uar.txt", "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char name[64];
	double want;
	while (fscanf(f, "%63s %lf", name, &want) == 2) {
		char data[128];
		snprintf(data, sizeof(data), G "%s", name);
		CHECK(vpa_classify_dir(data, NULL, G "folds.txt", G "labels.txt", NULL, &o, &r, &err) ==
		      0);
		if (!strcmp(name, "data_anon"))
			check_run(&r, "wave_anon", "wave_b_anon");
		double u, cm[4];
		size_t ng;
		CHECK(vpa_cls_fold_uar(r.truth, r.pred, r.group, r.n, r.C, r.n_groups, &u, cm, &ng,
				       &err) == 0);
		CHECK_NEAR(u, want, 1e-12);
		vpa_cls_run_release(&r);
	}
	fclose(f);
}

static void test_fbank_model(void)
{
	struct vpa_cls_opts o;
	struct vpa_cls_run r;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_cls_opts_init(&o, VPA_CLS_FBANK);
	CHECK(vpa_feat_opts_set(&o.feat, "num-mel-bins", "20", &err) == 0);
	CHECK(vpa_feat_opts_set(&o.feat, "dither", "0", &err) == 0);
	CHECK(vpa_classify_dir(G "data", G "fbank.onnx", NULL, G "labels.txt", NULL, &o, &r, &err) ==
	      0);
	check_run(&r, "fbank", NULL);
	vpa_cls_run_release(&r);
}

/* a temporary file holding text; its path in path */
static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_errors(void)
{
	struct vpa_cls_opts o;
	struct vpa_cls_run r;
	struct vpa_err err;
	char dir[] = "/tmp/vpa-test-classify-XXXXXX", p[256];
	CHECK(mkdtemp(dir) != NULL);
	vpa_cls_opts_init(&o, VPA_CLS_WAVE);
	/* a label file missing an utterance */
	snprintf(p, sizeof(p), "%s/u2l", dir);
	put(p, "s1_a ang\ns1_b neu\ns1_c sad\ns2_a hap\ns2_b neu\ns2_c ang\ns3_a sad\n");
	vpa_err_init(&err);
	CHECK(vpa_classify_dir(G "data", G "wave.onnx", NULL, G "labels.txt", p, &o, &r, &err) ==
	      VPA_EINPUT);
	char want[512];
	snprintf(want, sizeof(want), "%s: no label for utterance 's3_b' (%s line 8)", p,
		 G "data/wav.scp");
	CHECK_STR(err.msg, want);
	CHECK(r.n == 0 && r.logits == NULL);
	/* a label not in the map */
	put(p, "s1_a ang\ns1_b bored\n");
	vpa_err_init(&err);
	CHECK(vpa_classify_dir(G "data", G "wave.onnx", NULL, G "labels.txt", p, &o, &r, &err) ==
	      VPA_EINPUT);
	CHECK(strstr(err.msg, "u2l:2: label 'bored' of 's1_b' is not in the label map") != NULL);
	/* three labels for a model of four outputs */
	char map[256];
	snprintf(map, sizeof(map), "%s/map", dir);
	put(map, "ang\nhap\nneu\n");
	put(p, "s1_a ang\ns1_b neu\ns1_c hap\ns2_a hap\ns2_b neu\ns2_c ang\ns3_a hap\ns3_b hap\n");
	vpa_err_init(&err);
	CHECK(vpa_classify_dir(G "data", G "wave.onnx", NULL, map, p, &o, &r, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "wave.onnx") && strstr(err.msg, "the label map has 3"));
	/* a duplicate label in the map */
	put(map, "ang\nhap\nang\nsad\n");
	vpa_err_init(&err);
	CHECK(vpa_classify_dir(G "data", G "wave.onnx", NULL, map, NULL, &o, &r, &err) ==
	      VPA_EINPUT);
	CHECK(strstr(err.msg, "map:3: label 'ang' is already on line 1") != NULL);
	/* a fold missing a speaker */
	char folds[256];
	snprintf(folds, sizeof(folds), "%s/folds", dir);
	snprintf(want, sizeof(want), "s1 %s/" G "wave.onnx\n", getenv("PWD") ? getenv("PWD") : ".");
	put(folds, want);
	vpa_err_init(&err);
	CHECK(vpa_classify_dir(G "data", NULL, folds, G "labels.txt", NULL, &o, &r, &err) ==
	      VPA_EINPUT);
	CHECK(strstr(err.msg, "no fold for speaker 's2'") != NULL);
	/* a features model given the waveform: rank 3 wanted, not 2 */
	vpa_err_init(&err);
	CHECK(vpa_classify_dir(G "data", G "fbank.onnx", NULL, G "labels.txt", NULL, &o, &r, &err) ==
	      VPA_EINPUT);
	CHECK(strstr(err.msg, "has rank 3: --input-kind wave wants (1, samples)") != NULL);
	unlink(p);
	unlink(map);
	unlink(folds);
	rmdir(dir);
}

int main(void)
{
	RUN(test_by_hand);
	RUN(test_sklearn_golden);
	RUN(test_wave_model);
	RUN(test_folds);
	RUN(test_fbank_model);
	RUN(test_errors);
	return DONE();
}
