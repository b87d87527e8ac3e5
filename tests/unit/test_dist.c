/*
 * tests/unit/test_dist.c - base/dist.c in the MPI-free build (one rank): the
 * job loop runs every job once on its threads, reports the lowest failed
 * job's own error (no rank suffix with one rank) after every lower job ran,
 * gives each thread its own index; the packing helpers (a score set, a
 * feature matrix) read back what they wrote and refuse every truncation; the
 * agreement of one rank returns its own outcome; the test fault hook fires
 * only for its rank and stage.  The N-rank paths are tested end to end
 * by tests/e2e/test_mpi.sh.
 */
#include <pthread.h>
#include <stdlib.h>

#include "audio/audio.h"
#include "base/dist.h"
#include "formats/io.h"
#include "harness.h"

#define NJ 40

struct jl {
	int runs[NJ];
	size_t tid[NJ];
	int fail_a, fail_b; /* failing jobs, -1: none */
	size_t threads;
	pthread_mutex_t mx;
};

static int job(void *arg, size_t i, struct vpa_err *e)
{
	struct jl *j = arg;
	pthread_mutex_lock(&j->mx);
	j->runs[i]++;
	j->tid[i] = vpa_dist_thread();
	pthread_mutex_unlock(&j->mx);
	if ((int)i == j->fail_a || (int)i == j->fail_b)
		return vpa_fail(e, (int)i == j->fail_a ? VPA_EINPUT : VPA_EIO, NULL, "job %zu broke", i);
	return 0;
}

static void test_one_rank(void)
{
	CHECK(vpa_dist_built() == 0);
	vpa_dist_init(NULL, NULL);
	CHECK(vpa_dist_rank() == 0);
	CHECK(vpa_dist_size() == 1);
	CHECK(vpa_dist_root_int(3) == 3);
}

static void test_jobs_all_run(void)
{
	for (int th = 1; th <= 4; th++) {
		struct jl j;
		memset(&j, 0, sizeof(j));
		j.fail_a = j.fail_b = -1;
		pthread_mutex_init(&j.mx, NULL);
		struct vpa_err err;
		vpa_err_init(&err);
		CHECK(vpa_dist_jobs(NJ, th, job, NULL, NULL, &j, NULL, NULL, &err) == 0);
		CHECK(err.status == 0);
		for (size_t i = 0; i < NJ; i++) {
			CHECK(j.runs[i] == 1);
			CHECK(j.tid[i] < (size_t)th);
		}
		pthread_mutex_destroy(&j.mx);
	}
	/* no job: nothing runs, no error */
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_dist_jobs(0, 3, job, NULL, NULL, NULL, "none", NULL, &err) == 0);
}

static void test_jobs_lowest_error(void)
{
	for (int th = 1; th <= 4; th++) {
		struct jl j;
		memset(&j, 0, sizeof(j));
		j.fail_a = 7;
		j.fail_b = 12;
		pthread_mutex_init(&j.mx, NULL);
		struct vpa_err err;
		vpa_err_init(&err);
		int rc = vpa_dist_jobs(NJ, th, job, NULL, NULL, &j, "test jobs", NULL, &err);
		CHECK(rc == VPA_EINPUT);
		CHECK(err.status == VPA_EINPUT);
		CHECK_STR(err.msg, "job 7 broke"); /* one rank: no "(rank R, ...)" */
		for (size_t i = 0; i < 7; i++)
			CHECK(j.runs[i] == 1);
		for (size_t i = 0; i < NJ; i++)
			CHECK(j.runs[i] <= 1);
		pthread_mutex_destroy(&j.mx);
	}
}

static void test_pack_scalars(void)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	double d[3] = {1.5, -0.0, 1e300};
	float f[2] = {3.25f, -7.0f};
	vpa_pack_u64(&b, 0x0123456789abcdefULL);
	vpa_pack_f64s(&b, d, 3);
	vpa_pack_f32s(&b, f, 2);
	CHECK(b.len == 8 + 24 + 8);
	const unsigned char *p = (const unsigned char *)b.data, *end = p + b.len;
	uint64_t v = 0;
	double d2[3];
	float f2[2];
	CHECK(vpa_unpack_u64(&p, end, &v) == 0 && v == 0x0123456789abcdefULL);
	CHECK(vpa_unpack_f64s(&p, end, d2, 3) == 0 && !memcmp(d, d2, sizeof(d)));
	CHECK(vpa_unpack_f32s(&p, end, f2, 2) == 0 && !memcmp(f, f2, sizeof(f)));
	CHECK(p == end);
	CHECK(vpa_unpack_u64(&p, end, &v) == -1); /* nothing left */
	vpa_buf_release(&b);
}

static void make_trials(struct vpa_trials *t, int with_ids)
{
	vpa_trials_init(t);
	t->n_tar = 2;
	t->n_non = 3;
	t->tar = malloc(2 * sizeof(double));
	t->non = malloc(3 * sizeof(double));
	t->tar[0] = 2.5;
	t->tar[1] = -1;
	t->non[0] = 0.125;
	t->non[1] = -3;
	t->non[2] = 7;
	if (with_ids) {
		t->tar_e = malloc(2 * sizeof(uint32_t));
		t->tar_t = malloc(2 * sizeof(uint32_t));
		t->non_e = malloc(3 * sizeof(uint32_t));
		t->non_t = malloc(3 * sizeof(uint32_t));
		for (uint32_t i = 0; i < 3; i++) {
			if (i < 2) {
				t->tar_e[i] = i;
				t->tar_t[i] = i + 1;
			}
			t->non_e[i] = 2 - i;
			t->non_t[i] = i;
		}
		t->n_ids_e = 2;
		t->n_ids_t = 3;
		t->ids_e = calloc(2, sizeof(char *));
		t->ids_t = calloc(3, sizeof(char *));
		t->ids_e[0] = xstrdup("spk-a");
		t->ids_e[1] = xstrdup("");
		for (int i = 0; i < 3; i++)
			t->ids_t[i] = xstrdup(i == 1 ? "utt-2" : "u");
	}
}

static void test_pack_trials(void)
{
	for (int ids = 0; ids < 2; ids++) {
		struct vpa_trials t, u;
		make_trials(&t, ids);
		struct vpa_buf b, b2;
		vpa_buf_init(&b);
		vpa_buf_init(&b2);
		vpa_pack_trials(&b, &t);
		const unsigned char *p = (const unsigned char *)b.data, *end = p + b.len;
		vpa_trials_init(&u);
		CHECK(vpa_unpack_trials(&p, end, &u) == 0);
		CHECK(p == end);
		CHECK(u.n_tar == 2 && u.n_non == 3 && u.n_ids_e == t.n_ids_e && u.n_ids_t == t.n_ids_t);
		CHECK(!memcmp(u.tar, t.tar, 2 * sizeof(double)) && !memcmp(u.non, t.non, 3 * sizeof(double)));
		CHECK((u.tar_e != NULL) == ids && (u.non_t != NULL) == ids && (u.ids_e != NULL) == ids);
		if (ids) {
			CHECK(u.tar_t[1] == 2 && u.non_e[0] == 2);
			CHECK_STR(u.ids_e[0], "spk-a");
			CHECK_STR(u.ids_e[1], "");
			CHECK_STR(u.ids_t[1], "utt-2");
		}
		vpa_pack_trials(&b2, &u); /* what is read packs to the same bytes */
		CHECK(b2.len == b.len && !memcmp(b.data, b2.data, b.len));
		vpa_trials_release(&u);
		/* every truncation is refused, with nothing left allocated */
		for (size_t n = 0; n < b.len; n++) {
			p = (const unsigned char *)b.data;
			vpa_trials_init(&u);
			int rc = vpa_unpack_trials(&p, p + n, &u);
			CHECK(rc == -1);
			CHECK(u.tar == NULL && u.n_tar == 0);
		}
		vpa_trials_release(&t);
		vpa_buf_release(&b);
		vpa_buf_release(&b2);
	}
}

static void test_agree_one_rank(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_dist_agree(0, &err) == 0 && err.status == 0);
	vpa_fail(&err, VPA_EINPUT, NULL, "bad thing");
	CHECK(vpa_dist_agree(VPA_EINPUT, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "bad thing"); /* one rank: no "(rank R)" */
	/* after a failure the next agreement still answers for itself */
	vpa_err_init(&err);
	CHECK(vpa_dist_agree(0, &err) == 0);
}

static void test_fault_hook(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	unsetenv("VPAUDIT_TEST_FAULT");
	CHECK(vpa_dist_test_fault("targets", &err) == 0);
	setenv("VPAUDIT_TEST_FAULT", "1:targets", 1); /* another rank */
	CHECK(vpa_dist_test_fault("targets", &err) == 0);
	setenv("VPAUDIT_TEST_FAULT", "0:attacks", 1); /* another stage */
	CHECK(vpa_dist_test_fault("targets", &err) == 0);
	setenv("VPAUDIT_TEST_FAULT", "0:target", 1); /* a prefix is not the stage */
	CHECK(vpa_dist_test_fault("targets", &err) == 0);
	setenv("VPAUDIT_TEST_FAULT", "x:targets", 1);
	CHECK(vpa_dist_test_fault("targets", &err) == 0);
	CHECK(err.status == 0);
	setenv("VPAUDIT_TEST_FAULT", "0:targets", 1);
	CHECK(vpa_dist_test_fault("targets", &err) == VPA_EIO);
	CHECK_STR(err.msg, "targets: fault injected (VPAUDIT_TEST_FAULT)");
	unsetenv("VPAUDIT_TEST_FAULT");
}

static void test_pack_fmat(void)
{
	struct vpa_fmat m, u;
	vpa_fmat_init(&m);
	m.rows = 3;
	m.cols = 2;
	m.x = malloc(6 * sizeof(float));
	for (int i = 0; i < 6; i++)
		m.x[i] = (float)i * 0.5f - 1;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_fmat_pack(&b, &m);
	CHECK(b.len == 16 + 6 * sizeof(float));
	const unsigned char *p = (const unsigned char *)b.data, *end = p + b.len;
	vpa_fmat_init(&u);
	CHECK(vpa_fmat_unpack(&p, end, &u) == 0 && p == end);
	CHECK(u.rows == 3 && u.cols == 2 && !memcmp(u.x, m.x, 6 * sizeof(float)));
	for (size_t n = 0; n < b.len; n++) {
		p = (const unsigned char *)b.data;
		CHECK(vpa_fmat_unpack(&p, p + n, &u) == -1);
	}
	vpa_fmat_release(&u);
	/* an empty matrix (no frame) travels as one */
	vpa_fmat_release(&m);
	m.cols = 40;
	b.len = 0;
	vpa_fmat_pack(&b, &m);
	p = (const unsigned char *)b.data;
	CHECK(vpa_fmat_unpack(&p, p + b.len, &u) == 0 && u.rows == 0 && u.cols == 40 && !u.x);
	/* a row count the bytes cannot hold is refused before allocating */
	b.len = 0;
	vpa_pack_u64(&b, (uint64_t)1 << 60);
	vpa_pack_u64(&b, 4);
	p = (const unsigned char *)b.data;
	CHECK(vpa_fmat_unpack(&p, p + b.len, &u) == -1);
	vpa_fmat_release(&u);
	vpa_buf_release(&b);
}

int main(void)
{
	RUN(test_one_rank);
	RUN(test_jobs_all_run);
	RUN(test_jobs_lowest_error);
	RUN(test_pack_scalars);
	RUN(test_pack_trials);
	RUN(test_agree_one_rank);
	RUN(test_fault_hook);
	RUN(test_pack_fmat);
	return DONE();
}
