/*
 * tests/unit/test_xvector_io.c - extractors trained by audio/xvector.c saved
 * and loaded again (audio/xvector_io.c, issue 31 item 9): the property that
 * must hold is that a reloaded extractor IS the trained one (every parameter
 * and batch-norm statistic bit-equal, embeddings bit-equal on 1 and 2
 * threads), for the x-vector TDNN and the ECAPA-TDNN; the metadata round
 * trips; a folder that is missing, of another size than it says, or with a
 * bad line is refused with its file and line.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "audio/xvector_io.h"
#include "harness.h"

enum { DIM = 12, SPK = 6, UTTS = 4, N = SPK * UTTS };

static char tmpdir[] = "/tmp/vpa-xvio-XXXXXX";
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

/* random utterances of 30..69 frames, a per-speaker offset so training has
 * something to learn (the test is about saving, not about learning) */
static void make_feats(void)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, 11);
	for (int i = 0; i < N; i++) {
		size_t T = 30 + (size_t)vpa_rng_below(&r, 40);
		vpa_fmat_init(&feats[i]);
		feats[i].rows = T;
		feats[i].cols = DIM;
		feats[i].x = malloc(T * DIM * sizeof(float));
		labels[i] = (uint32_t)(i / UTTS);
		for (size_t t = 0; t < T * DIM; t++)
			feats[i].x[t] = (float)(0.5 * labels[i] * ((t % DIM) % 3 == 0) +
						vpa_rng_normal(&r));
	}
}

static void meta_of(struct vpa_xvec_meta *m, const char *role, size_t hidden)
{
	vpa_xvec_meta_init(m);
	snprintf(m->role, sizeof(m->role), "%s", role);
	m->hidden = hidden;
	snprintf(m->features, sizeof(m->features), "mfcc");
	m->num_mel_bins = 30;
	m->num_ceps = 12;
	snprintf(m->cmvn, sizeof(m->cmvn), "none");
	m->vad = 1;
	m->sample_frequency = 16000;
	m->frame_length = 25;
	m->frame_shift = 10;
	snprintf(m->loss, sizeof(m->loss), "aam");
	m->epochs = 2;
	m->final_loss = 1.0 / 3.0;
	if (!strcmp(role, "asv_eval_anon"))
		snprintf(m->semi_informed, sizeof(m->semi_informed), "finetune");
}

/* every parameter and state value of two extractors bit-equal */
static int same_params(struct vpa_xvec *a, struct vpa_xvec *b)
{
	size_t na = a->ecapa ? vpa_ecapa_n_nets(a->ecapa) : 1;
	size_t nb = b->ecapa ? vpa_ecapa_n_nets(b->ecapa) : 1;
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++) {
		struct vpa_nn *x = a->ecapa ? vpa_ecapa_net(a->ecapa, i) : a->net;
		struct vpa_nn *y = b->ecapa ? vpa_ecapa_net(b->ecapa, i) : b->net;
		size_t px, py, sx, sy;
		float *p1 = vpa_nn_params(x, &px), *p2 = vpa_nn_params(y, &py);
		if (px != py || memcmp(p1, p2, px * sizeof(float)))
			return 0;
		float *s1 = vpa_nn_state(x, &sx), *s2 = vpa_nn_state(y, &sy);
		if (sx != sy || (sx && memcmp(s1, s2, sx * sizeof(float))))
			return 0;
	}
	return 1;
}

static void round_trip(int arch, const char *name)
{
	struct vpa_xvec_opts o;
	vpa_xvec_opts_init(&o);
	o.arch = arch;
	o.hidden = 16;
	o.channels = 8;
	o.res2_scale = 2;
	o.emb_dim = 8;
	o.epochs = 2;
	o.batch = 8;
	o.chunk = 30;
	o.seed = 3;
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_xvec x, y;
	vpa_xvec_init(&y);
	CHECK(vpa_xvec_train(feats, labels, N, SPK, &o, NULL, &x, &err) == 0);
	struct vpa_xvec_meta m, m2;
	meta_of(&m, "asv_eval_anon", o.hidden);
	CHECK(vpa_xvec_save(&x, &m, path(name), &err) == 0);
	/* saved twice: the second replaces the first whole */
	CHECK(vpa_xvec_save(&x, &m, path(name), &err) == 0);
	if (err.status)
		printf("# %s\n", err.msg);
	CHECK(vpa_xvec_load(path(name), &y, &m2, &err) == 0);
	if (err.status)
		printf("# %s\n", err.msg);
	CHECK(vpa_xvec_trained(&y) && y.arch == arch && y.emb_dim == 8);
	CHECK(same_params(&x, &y));
	CHECK_STR(m2.role, "asv_eval_anon");
	CHECK_STR(m2.features, "mfcc");
	CHECK_STR(m2.cmvn, "none");
	CHECK_STR(m2.loss, "aam");
	CHECK_STR(m2.semi_informed, "finetune");
	CHECK(m2.num_mel_bins == 30 && m2.num_ceps == 12 && m2.vad == 1 && m2.epochs == 2);
	CHECK(m2.sample_frequency == 16000 && m2.frame_length == 25 && m2.frame_shift == 10);
	CHECK(m2.final_loss == 1.0 / 3.0);       /* %.17g round trips a double */
	CHECK(y.final_loss == m2.final_loss);
	CHECK(m2.input_dim == DIM && m2.emb_dim == 8);
	if (arch == VPA_XVEC_ECAPA)
		CHECK(m2.ecapa.channels == 8 && m2.ecapa.scale == 2);
	else
		CHECK(m2.hidden == 16);
	/* the embeddings of the trained and the reloaded extractor, 1 and 2 threads */
	float *e1 = calloc(N * 8, sizeof(float)), *e2 = calloc(N * 8, sizeof(float));
	float *e3 = calloc(N * 8, sizeof(float));
	CHECK(vpa_xvec_embed(&x, feats, NULL, N, 1, e1, &err) == 0);
	CHECK(vpa_xvec_embed(&y, feats, NULL, N, 1, e2, &err) == 0);
	CHECK(vpa_xvec_embed(&y, feats, NULL, N, 2, e3, &err) == 0);
	CHECK(memcmp(e1, e2, N * 8 * sizeof(float)) == 0);
	CHECK(memcmp(e1, e3, N * 8 * sizeof(float)) == 0);
	double norm = 0;
	for (int i = 0; i < N * 8; i++)
		norm += fabs(e1[i]);
	CHECK(norm > 0 && isfinite(norm)); /* not all zero: the comparison means something */
	free(e1);
	free(e2);
	free(e3);
	/* the reloaded extractor fine-tunes like the trained one (same result) */
	struct vpa_xvec f1, f2;
	CHECK(vpa_xvec_train(feats, labels, N, SPK, &o, &x, &f1, &err) == 0);
	CHECK(vpa_xvec_train(feats, labels, N, SPK, &o, &y, &f2, &err) == 0);
	CHECK(same_params(&f1, &f2));
	vpa_xvec_release(&f1);
	vpa_xvec_release(&f2);
	vpa_xvec_release(&x);
	vpa_xvec_release(&y);
}

static void test_xvector_round_trip(void)
{
	round_trip(VPA_XVEC_TDNN, "xv");
}

static void test_ecapa_round_trip(void)
{
	round_trip(VPA_XVEC_ECAPA, "ec");
}

/* replace the line starting with `key:` of NAME/extractor.yaml by `line` */
static void edit_meta(const char *name, const char *key, const char *line)
{
	char p[600], *text = NULL;
	size_t len;
	struct vpa_err err;
	vpa_err_init(&err);
	snprintf(p, sizeof(p), "%s/extractor.yaml", path(name));
	if (vpa_read_file(p, &text, &len, &err))
		return;
	FILE *f = fopen(p, "w");
	size_t kl = strlen(key);
	for (char *s = text; *s;) {
		char *nl = strchr(s, '\n');
		size_t ll = nl ? (size_t)(nl - s) : strlen(s);
		if (!strncmp(s, key, kl) && s[kl] == ':')
			fprintf(f, "%s\n", line);
		else
			fprintf(f, "%.*s\n", (int)ll, s);
		s += ll + (nl != NULL);
	}
	fclose(f);
	free(text);
}

static int load_fails(const char *name, const char *want)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_xvec y;
	int rc = vpa_xvec_load(path(name), &y, NULL, &err);
	int ok = rc == VPA_EINPUT && strstr(err.msg, want) != NULL;
	if (!ok)
		printf("#   rc %d, message: %s\n#   expected: %s\n", rc, err.msg, want);
	return ok;
}

static void test_bad_folders(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_xvec y;
	/* missing */
	CHECK(vpa_xvec_load(path("nothing"), &y, NULL, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "nothing: expected a folder of an extractor saved by vpaudit") != NULL);
	CHECK(!vpa_xvec_trained(&y));
	/* a folder of another size than its metadata says: the net's own file is named */
	struct vpa_xvec_opts o;
	vpa_xvec_opts_init(&o);
	o.hidden = 16;
	o.emb_dim = 8;
	o.epochs = 1;
	o.batch = 8;
	o.chunk = 30;
	struct vpa_xvec x;
	CHECK(vpa_xvec_train(feats, labels, N, SPK, &o, NULL, &x, &err) == 0);
	struct vpa_xvec_meta m;
	meta_of(&m, "asv_eval", 16);
	CHECK(vpa_xvec_save(&x, &m, path("bad"), &err) == 0);
	/* and the caller's hidden checked against the trunk at saving */
	meta_of(&m, "asv_eval", 32);
	vpa_err_init(&err);
	CHECK(vpa_xvec_save(&x, &m, path("bad2"), &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "not the TDNN of hidden size 32") != NULL);
	struct stat st;
	CHECK(stat(path("bad2"), &st) != 0); /* nothing left */
	vpa_xvec_release(&x);
	edit_meta("bad", "hidden", "hidden: 32");
	CHECK(load_fails("bad", "bad/net0/model.yaml: the layers differ from the xvector network"));
	edit_meta("bad", "hidden", "hidden: x");
	CHECK(load_fails("bad", "bad/extractor.yaml:7: 'hidden' must be an integer in [4, 4096], got 'x'"));
	edit_meta("bad", "hidden", "hidden: 16");
	edit_meta("bad", "architecture", "architecture: resnet");
	CHECK(load_fails("bad", "bad/extractor.yaml:4: 'architecture' must be xvector or ecapa"));
	edit_meta("bad", "architecture", "architecture: ecapa");
	CHECK(load_fails("bad", "bad/extractor.yaml: the key 'channels' is missing"));
	edit_meta("bad", "architecture", "architecture: xvector");
	edit_meta("bad", "vad", "colour: blue");
	CHECK(load_fails("bad", "bad/extractor.yaml:12: unknown key 'colour'"));
	edit_meta("bad", "colour", "vad: true");
	edit_meta("bad", "format", "format: vpaudit-extractor 2");
	CHECK(load_fails("bad", "bad/extractor.yaml:2: 'format' must be 'vpaudit-extractor 1'"));
	edit_meta("bad", "format", "format: vpaudit-extractor 1");
	CHECK(vpa_xvec_load(path("bad"), &y, NULL, &err) == 0); /* restored: loads */
	vpa_xvec_release(&y);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	make_feats();
	RUN(test_xvector_round_trip);
	RUN(test_ecapa_round_trip);
	RUN(test_bad_folders);
	for (int i = 0; i < N; i++)
		vpa_fmat_release(&feats[i]);
	vpa_rm_tree(tmpdir); /* only files these tests wrote */
	return DONE();
}
