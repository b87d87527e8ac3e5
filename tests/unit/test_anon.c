/* tests/unit/test_anon.c - the x-vector anonymiser and the simulator. */
#include "targets/anon.h"
#include "core/kaldi.h"
#include "harness.h"

#include <stdlib.h>
#include <unistd.h>

/* A pool of 2 x 8 speakers in 3-d, 2 utterances each (u = v +- 0.01 e1),
   females with x0 < 0, males with x0 > 0. */
static void make_pool(struct vpa_embset *pool)
{
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embset_init(pool);
	for (int k = 0; k < 16; k++) {
		char spk[32], utt[48];
		char g = k < 8 ? 'f' : 'm';
		double ang = (k % 8) * 0.35;
		double v[3] = {g == 'm' ? 1 : -1, cos(ang), sin(ang)};
		snprintf(spk, sizeof(spk), "p%02d", k);
		for (int u = 0; u < 2; u++) {
			double x[3] = {v[0] + (u ? 0.01 : -0.01), v[1], v[2]};
			snprintf(utt, sizeof(utt), "p%02d-%d", k, u);
			CHECK(vpa_embset_add(pool, utt, spk, x, 3, &err) >= 0);
		}
		vpa_embset_set_gender(pool, (uint32_t)vpa_embset_find_spk(pool, spk), g);
	}
}

static void make_src(struct vpa_embset *src, int with_gender)
{
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embset_init(src);
	double a[3] = {-1, 1, 0.1}, b[3] = {1, 0.2, 1};
	CHECK(vpa_embset_add(src, "a1", "A", a, 3, &err) >= 0);
	CHECK(vpa_embset_add(src, "a2", "A", a, 3, &err) >= 0);
	CHECK(vpa_embset_add(src, "b1", "B", b, 3, &err) >= 0);
	if (with_gender) {
		vpa_embset_set_gender(src, 0, 'f');
		vpa_embset_set_gender(src, 1, 'm');
	}
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Brute force: the mean of the k pool speakers of gender g nearest (far = 0)
   or farthest (far = 1) to v by 1 - cos. */
static void brute(const struct vpa_embset *pool, const double *v, char g, size_t k, int far,
		  double *out)
{
	double key[16][4];
	size_t n = 0;
	double means[16 * 3];
	uint32_t cnt[16];
	vpa_embset_spk_means(pool, means, cnt);
	for (size_t s = 0; s < pool->n_spk; s++) {
		if (pool->gender[s] != g)
			continue;
		double *m = means + 3 * s;
		double c = (m[0] * v[0] + m[1] * v[1] + m[2] * v[2]) /
			   (sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]) *
			    sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
		key[n][0] = far ? -(1 - c) : 1 - c;
		key[n][1] = m[0];
		key[n][2] = m[1];
		key[n][3] = m[2];
		n++;
	}
	qsort(key, n, sizeof(key[0]), cmp_d);
	out[0] = out[1] = out[2] = 0;
	for (size_t i = 0; i < k; i++)
		for (int j = 0; j < 3; j++)
			out[j] += key[i][j + 1] / (double)k;
}

static void test_near_far_deterministic(void)
{
	struct vpa_embset pool, src;
	struct vpa_anon_cfg c;
	struct vpa_err err;
	make_pool(&pool);
	make_src(&src, 1);
	for (int far = 0; far < 2; far++) {
		vpa_anon_cfg_init(&c);
		c.distance = VPA_ANON_COSINE;
		c.proximity = far ? VPA_ANON_FAR : VPA_ANON_NEAR;
		c.n = c.n_star = 3;
		vpa_err_init(&err);
		struct vpa_anonymiser *a = vpa_anonymiser_new(&pool, &c, &err);
		CHECK(a != NULL);
		struct vpa_anon_result r1, r2;
		CHECK(vpa_anonymise(a, &src, 1, "x", &r1, &err) == 0);
		CHECK(vpa_anonymise(a, &src, 999, "y", &r2, &err) == 0);
		CHECK(r1.n_pseudo == 2);
		CHECK(r1.of_utt[0] == 0 && r1.of_utt[1] == 0 && r1.of_utt[2] == 1);
		double want[3];
		double va[3] = {-1, 1, 0.1}, vb[3] = {1, 0.2, 1};
		brute(&pool, va, 'f', 3, far, want);
		for (int j = 0; j < 3; j++) {
			CHECK_NEAR(r1.pseudo[j], want[j], 1e-12);
			CHECK(r1.pseudo[j] == r2.pseudo[j]); /* N = N*: nothing random */
		}
		brute(&pool, vb, 'm', 3, far, want);
		for (int j = 0; j < 3; j++)
			CHECK_NEAR(r1.pseudo[3 + j], want[j], 1e-12);
		CHECK_STR(r1.id[0], "A");
		CHECK(r1.gender[0] == 'f' && r1.gender[1] == 'm');
		vpa_anon_result_release(&r1);
		vpa_anon_result_release(&r2);
		vpa_anonymiser_free(a);
	}
	vpa_embset_release(&pool);
	vpa_embset_release(&src);
}

static void test_seeds_gender_utterance(void)
{
	struct vpa_embset pool, src;
	struct vpa_anon_cfg c;
	struct vpa_err err;
	make_pool(&pool);
	make_src(&src, 1);
	vpa_anon_cfg_init(&c);
	c.distance = VPA_ANON_PLDA;
	c.proximity = VPA_ANON_RANDOM;
	c.gender = VPA_ANON_OPPOSITE;
	c.assignment = VPA_ANON_UTTERANCE;
	c.n = 8;
	c.n_star = 3;
	vpa_err_init(&err);
	struct vpa_anonymiser *a = vpa_anonymiser_new(&pool, &c, &err);
	CHECK(a != NULL);
	struct vpa_anon_result r1, r2, r3;
	CHECK(vpa_anonymise(a, &src, 7, "s", &r1, &err) == 0);
	CHECK(vpa_anonymise(a, &src, 7, "s", &r2, &err) == 0);
	CHECK(vpa_anonymise(a, &src, 8, "s", &r3, &err) == 0);
	CHECK(r1.n_pseudo == 3 && r1.of_utt[2] == 2);
	int same = 1, diff = 0;
	for (size_t i = 0; i < 9; i++) {
		same &= r1.pseudo[i] == r2.pseudo[i];
		diff |= r1.pseudo[i] != r3.pseudo[i];
	}
	CHECK(same);
	CHECK(diff);
	/* opposite gender: A (f) gets male voices (x0 near +1), B (m) female ones */
	CHECK(fabs(r1.pseudo[0] - 1) < 0.02 && fabs(r1.pseudo[3] - 1) < 0.02);
	CHECK(fabs(r1.pseudo[6] + 1) < 0.02);
	CHECK_STR(r1.id[1], "a2");
	vpa_anon_result_release(&r1);
	vpa_anon_result_release(&r2);
	vpa_anon_result_release(&r3);
	vpa_anonymiser_free(a);
	vpa_embset_release(&pool);
	vpa_embset_release(&src);
}

static void test_dense_sparse(void)
{
	/* female pool: one dense clump of 6 speakers near (-1, 1, 0) and 3 loose
	   ones; dense picks half (3) of the clump */
	struct vpa_embset pool, src;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_embset_init(&pool);
	for (int k = 0; k < 9; k++) {
		char spk[32], utt[48];
		double v[3] = {-1, 1, 0.01 * k};
		if (k >= 6) {
			v[1] = (k == 6) ? -1 : 0.1;
			v[2] = (k == 8) ? -1 : 1;
		}
		snprintf(spk, sizeof(spk), "f%d", k);
		for (int u = 0; u < 2; u++) {
			snprintf(utt, sizeof(utt), "f%d-%d", k, u);
			double x[3] = {v[0], v[1], v[2] + (u ? 1e-3 : -1e-3)};
			CHECK(vpa_embset_add(&pool, utt, spk, x, 3, &err) >= 0);
		}
		vpa_embset_set_gender(&pool, (uint32_t)k, 'f');
	}
	make_src(&src, 1);
	struct vpa_embset fsrc;
	vpa_embset_init(&fsrc);
	uint32_t only_a = 0;
	vpa_embset_subset_spk(&src, &only_a, 1, &fsrc);
	struct vpa_anon_cfg c;
	vpa_anon_cfg_init(&c);
	c.distance = VPA_ANON_COSINE;
	c.proximity = VPA_ANON_DENSE;
	struct vpa_anonymiser *a = vpa_anonymiser_new(&pool, &c, &err);
	CHECK(a != NULL);
	const uint32_t *lab;
	size_t np;
	size_t K = vpa_anonymiser_clusters(a, 'f', &lab, &np);
	CHECK(np == 9 && K >= 2);
	for (int k = 1; k < 6; k++)
		CHECK(lab[k] == lab[0]);
	struct vpa_anon_result r;
	CHECK(vpa_anonymise(a, &fsrc, 3, "d", &r, &err) == 0);
	CHECK_NEAR(r.pseudo[0], -1, 1e-12);
	CHECK_NEAR(r.pseudo[1], 1, 1e-12); /* the mean of 3 clump members */
	CHECK(r.pseudo[2] >= 0 && r.pseudo[2] <= 0.05);
	vpa_anon_result_release(&r);
	/* the source B is male: no male pool */
	CHECK(vpa_anonymise(a, &src, 3, "d", &r, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "the anonymisation pool has no male speaker (gender selection 'same')");
	vpa_anonymiser_free(a);
	vpa_embset_release(&pool);
	vpa_embset_release(&src);
	vpa_embset_release(&fsrc);
}

static void test_errors_and_ark(void)
{
	struct vpa_embset pool, src;
	struct vpa_anon_cfg c;
	struct vpa_err err;
	struct vpa_anon_result r;
	make_pool(&pool);
	make_src(&src, 0);
	vpa_anon_cfg_init(&c);
	c.distance = VPA_ANON_COSINE;
	c.proximity = VPA_ANON_NEAR;
	c.n = 4;
	c.n_star = 2;
	vpa_err_init(&err);
	struct vpa_anonymiser *a = vpa_anonymiser_new(&pool, &c, &err);
	CHECK(vpa_anonymise(a, &src, 1, "e", &r, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "speaker 'A' has no gender (spk2gender): needed for gender selection 'same'");
	vpa_anonymiser_free(a);
	c.n = 9;
	vpa_err_init(&err);
	a = vpa_anonymiser_new(&pool, &c, &err);
	vpa_embset_release(&src);
	make_src(&src, 1);
	CHECK(vpa_anonymise(a, &src, 1, "e", &r, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "the anonymisation pool has 8 female speakers, fewer than n = 9");
	vpa_anonymiser_free(a);
	/* dimension mismatch */
	c.n = 4;
	vpa_err_init(&err);
	a = vpa_anonymiser_new(&pool, &c, &err);
	struct vpa_embset two;
	vpa_embset_init(&two);
	double x2[2] = {1, 2};
	CHECK(vpa_embset_add(&two, "t", "T", x2, 2, &err) >= 0);
	CHECK(vpa_anonymise(a, &two, 1, "e", &r, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "the set to anonymise has dimension 2, the pool has 3");
	vpa_embset_release(&two);
	/* the Kaldi text archive of pseudo-speakers reads back exactly */
	vpa_err_init(&err);
	CHECK(vpa_anonymise(a, &src, 1, "e", &r, &err) == 0);
	char path[] = "/tmp/vpa_anon_ark_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	CHECK(vpa_anon_write_ark(&r, path, &err) == 0);
	struct vpa_kaldi_ark ark;
	vpa_kaldi_ark_init(&ark);
	CHECK(vpa_kaldi_read(path, VPA_KALDI_VECTORS, &ark, &err) == 0);
	CHECK(ark.n == 2);
	CHECK_STR(ark.e[1].key, "B");
	for (size_t i = 0; i < 6; i++)
		CHECK_NEAR(ark.data[i], r.pseudo[i], 1e-8 * fabs(r.pseudo[i]) + 1e-12);
	vpa_kaldi_ark_release(&ark);
	unlink(path);
	vpa_anon_result_release(&r);
	vpa_anonymiser_free(a);
	/* unlabelled pool speaker; N* > N */
	vpa_embset_set_gender(&pool, 3, 0);
	vpa_err_init(&err);
	CHECK(vpa_anonymiser_new(&pool, &c, &err) == NULL);
	CHECK_STR(err.msg, "pool speaker 'p03' has no gender (spk2gender): the anonymiser selects "
			   "pool speakers by gender");
	c.n_star = 5;
	vpa_err_init(&err);
	CHECK(vpa_anonymiser_new(&pool, &c, &err) == NULL);
	CHECK_STR(err.msg, "n_star must be in [1, n] (n = 4), got 5");
	vpa_embset_release(&pool);
	vpa_embset_release(&src);
}

static void test_simulator(void)
{
	struct vpa_sim_cfg c;
	vpa_sim_cfg_init(&c);
	c.dim = 16;
	c.spk_rank = 6;
	c.utt_rank = 4;
	c.synth_rank = 2;
	struct vpa_sim *s = vpa_sim_new(&c, 5), *s2 = vpa_sim_new(&c, 5);
	struct vpa_embset a, b;
	vpa_embset_init(&a);
	vpa_embset_init(&b);
	vpa_sim_make_set(s, "t", 4, 3, &a);
	vpa_sim_make_set(s2, "t", 4, 3, &b);
	CHECK(a.n == 12 && a.n_spk == 4 && a.d == 16);
	CHECK(a.gender[0] == 'f' && a.gender[1] == 'm');
	CHECK_STR(a.utt[4], "t-s0002-u002");
	int same = 1;
	for (size_t i = 0; i < a.n * a.d; i++)
		same &= a.x[i] == b.x[i];
	CHECK(same);
	for (size_t i = 0; i < a.n; i++)
		CHECK(a.dur[i] >= 1 && a.dur[i] <= 30);
	/* slicing keeps the draws: the session part scales by sqrt(1 + tau/dur) */
	double y[6], x1[16], x2[16], base[16];
	vpa_sim_speaker(s, "t-s0001", y);
	vpa_sim_utterance(s, y, 'f', 4.0, "u", x1);
	vpa_sim_utterance(s, y, 'f', 1.0, "u", x2);
	vpa_sim_utterance(s, y, 'f', 1e9, "u", base); /* s(dur) -> 1 */
	for (int i = 0; i < 16; i++) {
		/* session = x - speaker part; x(dur) = spk + s(dur) sess */
		double spk = (sqrt(5.0) * base[i] - x2[i]) / (sqrt(5.0) - 1); /* from dur 1e9 and 1 */
		CHECK_NEAR(x1[i] - spk, sqrt(2.0) * (base[i] - spk), 1e-6);
	}
	vpa_embset_release(&a);
	vpa_embset_release(&b);
	vpa_sim_free(s);
	vpa_sim_free(s2);
}

int main(void)
{
	RUN(test_near_far_deterministic);
	RUN(test_seeds_gender_utterance);
	RUN(test_dense_sparse);
	RUN(test_errors_and_ark);
	RUN(test_simulator);
	return DONE();
}
