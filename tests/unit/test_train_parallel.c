/*
 * tests/unit/test_train_parallel.c - data-parallel extractor training
 * (audio/xvector_train.c, issue 33 item 1).  The properties that must hold:
 * an x-vector TDNN and an ECAPA-TDNN trained for a few steps on 1, 2 and 3
 * threads are saved as the same bytes (every file of the folder: weights,
 * batch-norm statistics, the final loss in extractor.yaml), with either
 * head (AAM or softmax) and when fine-tuned; the shard count IS part of the
 * result (1 shard and 4 shards train different weights, so the shards really
 * cut the batch) while the thread count is not; and the loss still falls.
 */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "audio/xvector_io.h"
#include "harness.h"

enum { DIM = 12, SPK = 8, UTTS = 8, N = SPK * UTTS };

static char tmpdir[] = "/tmp/vpa-trpar-XXXXXX";
static int quiet; /* 1 where folders are expected to differ */
static struct vpa_fmat feats[N];
static uint32_t labels[N];

static char *path(const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

/* utterances of 40..79 frames (so chunks, and shards, differ in length),
 * a per-speaker offset on every third dimension so there is something to learn */
static void make_feats(void)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, 21);
	for (int i = 0; i < N; i++) {
		size_t T = 40 + (size_t)vpa_rng_below(&r, 40);
		vpa_fmat_init(&feats[i]);
		feats[i].rows = T;
		feats[i].cols = DIM;
		feats[i].x = malloc(T * DIM * sizeof(float));
		labels[i] = (uint32_t)(i % SPK);
		for (size_t t = 0; t < T * DIM; t++)
			feats[i].x[t] = (float)(0.7 * labels[i] * ((t % DIM) % 3 == 0) +
						vpa_rng_normal(&r));
	}
}

static void small_opts(struct vpa_xvec_opts *o, int arch, int loss)
{
	vpa_xvec_opts_init(o);
	o->arch = arch;
	o->loss = loss;
	o->hidden = 16;
	o->channels = 16;
	o->res2_scale = 4;
	o->emb_dim = 8;
	o->epochs = 3;
	o->batch = 32; /* 64 utterances: 2 steps per epoch, 4 shards of 8 */
	o->chunk = 50;
	o->lr = 5e-3;
	o->seed = 7;
}

static char *read_all(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc(n > 0 ? (size_t)n : 1);
	*len = fread(b, 1, (size_t)(n > 0 ? n : 0), f);
	fclose(f);
	return b;
}

/* every file of folder a (and of its sub-folders) is in folder b with the
 * same bytes, and b has no other entry; *n_files counts the files compared */
static int same_folders(const char *a, const char *b, int *n_files)
{
	DIR *d = opendir(a);
	if (!d)
		return 0;
	int ok = 1, na = 0, nb = 0, nfiles = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char pa[1024], pb[1024];
		snprintf(pa, sizeof(pa), "%s/%s", a, e->d_name);
		snprintf(pb, sizeof(pb), "%s/%s", b, e->d_name);
		struct stat sa;
		if (stat(pa, &sa) == 0 && S_ISDIR(sa.st_mode)) { /* a network's folder */
			int sub = 0;
			ok &= same_folders(pa, pb, &sub);
			na++;
			nfiles += sub;
			continue;
		}
		size_t la = 0, lb = 0;
		char *ba = read_all(pa, &la), *bb = read_all(pb, &lb);
		if (!ba || !bb || la != lb || memcmp(ba, bb, la)) {
			if (!quiet)
				printf("# %s differs from %s\n", pa, pb);
			ok = 0;
		}
		free(ba);
		free(bb);
		na++;
		nfiles++;
	}
	closedir(d);
	d = opendir(b);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			nb++;
	closedir(d);
	*n_files = nfiles;
	return ok && na == nb && nfiles > 0;
}

static int train_save(const struct vpa_xvec_opts *o, const struct vpa_xvec *init,
		      const char *name, double *final_loss)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_xvec x;
	if (vpa_xvec_train(feats, labels, N, SPK, o, init, &x, &err)) {
		printf("# %s\n", err.msg);
		return 1;
	}
	struct vpa_xvec_meta m;
	vpa_xvec_meta_init(&m);
	snprintf(m.role, sizeof(m.role), "asv_eval");
	m.hidden = o->hidden;
	snprintf(m.features, sizeof(m.features), "fbank");
	m.num_mel_bins = DIM;
	snprintf(m.cmvn, sizeof(m.cmvn), "utt");
	m.sample_frequency = 16000;
	m.frame_length = 25;
	m.frame_shift = 10;
	snprintf(m.loss, sizeof(m.loss), "%s", o->loss == VPA_XVEC_AAM ? "aam" : "softmax");
	m.epochs = o->epochs;
	m.final_loss = x.final_loss; /* written in full precision: compared too */
	int rc = vpa_xvec_save(&x, &m, path(name), &err);
	if (rc)
		printf("# %s\n", err.msg);
	if (final_loss)
		*final_loss = x.final_loss;
	vpa_xvec_release(&x);
	return rc;
}

/* trained on 1, 2 and 3 threads: the same bytes; on 1 and 4 shards: not */
static void same_for_threads(int arch, int loss, const char *tag)
{
	struct vpa_xvec_opts o;
	small_opts(&o, arch, loss);
	char n1[64], n2[64], n3[64], n4[64];
	snprintf(n1, sizeof(n1), "%s-t1", tag);
	snprintf(n2, sizeof(n2), "%s-t2", tag);
	snprintf(n3, sizeof(n3), "%s-t3", tag);
	snprintf(n4, sizeof(n4), "%s-s1", tag);
	double l1, l2, l3;
	o.threads = 1;
	CHECK(train_save(&o, NULL, n1, &l1) == 0);
	o.threads = 2;
	CHECK(train_save(&o, NULL, n2, &l2) == 0);
	o.threads = 3; /* 4 shards over 3 threads: one thread takes two */
	CHECK(train_save(&o, NULL, n3, &l3) == 0);
	int nf = 0;
	CHECK(same_folders(path(n1), path(n2), &nf));
	printf("# %s: %d files byte-identical for 1 and 2 threads\n", tag, nf);
	CHECK(same_folders(path(n1), path(n3), &nf));
	CHECK(memcmp(&l1, &l2, sizeof(double)) == 0 && memcmp(&l1, &l3, sizeof(double)) == 0);
	/* one shard is the whole-batch computation: other weights than 4 shards */
	o.threads = 2;
	o.shards = 1;
	CHECK(train_save(&o, NULL, n4, NULL) == 0);
	quiet = 1;
	CHECK(!same_folders(path(n1), path(n4), &nf));
	quiet = 0;
}

static void test_xvector_aam(void)
{
	same_for_threads(VPA_XVEC_TDNN, VPA_XVEC_AAM, "xvec-aam");
}

static void test_xvector_softmax(void)
{
	same_for_threads(VPA_XVEC_TDNN, VPA_XVEC_SOFTMAX, "xvec-softmax");
}

static void test_ecapa_aam(void)
{
	same_for_threads(VPA_XVEC_ECAPA, VPA_XVEC_AAM, "ecapa-aam");
}

/* fine-tuning from a trained trunk (the semi-informed attacker's path): the
 * same bytes on 1 and 2 threads too */
static void test_finetune(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	for (int arch = VPA_XVEC_TDNN; arch <= VPA_XVEC_ECAPA; arch++) {
		struct vpa_xvec_opts o;
		small_opts(&o, arch, VPA_XVEC_AAM);
		o.epochs = 1;
		struct vpa_xvec x;
		CHECK(vpa_xvec_train(feats, labels, N, SPK, &o, NULL, &x, &err) == 0);
		o.loss = VPA_XVEC_SOFTMAX;
		o.threads = 1;
		CHECK(train_save(&o, &x, arch ? "ft-ecapa-1" : "ft-xvec-1", NULL) == 0);
		o.threads = 2;
		CHECK(train_save(&o, &x, arch ? "ft-ecapa-2" : "ft-xvec-2", NULL) == 0);
		int nf = 0;
		CHECK(same_folders(path(arch ? "ft-ecapa-1" : "ft-xvec-1"),
				   path(arch ? "ft-ecapa-2" : "ft-xvec-2"), &nf));
		vpa_xvec_release(&x);
	}
}

/*
 * The loss falls: the mean loss of the first epoch against that of the
 * tenth, both on 2 threads (4 shards).  The AAM loss at chance is about
 * s m + log K (here 30 * 0.2 + log 8 = 8.1); per-shard batch norm must not
 * stop the trunk from learning the per-speaker offsets.
 */
static void test_loss_falls(void)
{
	for (int arch = VPA_XVEC_TDNN; arch <= VPA_XVEC_ECAPA; arch++) {
		struct vpa_xvec_opts o;
		small_opts(&o, arch, VPA_XVEC_AAM);
		o.threads = 2;
		double first, last;
		o.epochs = 1;
		CHECK(train_save(&o, NULL, arch ? "lf-ecapa-1" : "lf-xvec-1", &first) == 0);
		o.epochs = 10;
		CHECK(train_save(&o, NULL, arch ? "lf-ecapa-10" : "lf-xvec-10", &last) == 0);
		printf("# %s: mean loss of epoch 1 %.3f, of epoch 10 %.3f\n",
		       arch ? "ECAPA" : "x-vector", first, last);
		CHECK(last < 0.5 * first);
	}
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	make_feats();
	RUN(test_xvector_aam);
	RUN(test_xvector_softmax);
	RUN(test_ecapa_aam);
	RUN(test_finetune);
	RUN(test_loss_falls);
	for (int i = 0; i < N; i++)
		vpa_fmat_release(&feats[i]);
	vpa_rm_tree(tmpdir); /* only files these tests wrote */
	return DONE();
}
