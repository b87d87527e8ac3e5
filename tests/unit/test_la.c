/* tests/unit/test_la.c - BLAS/LAPACK wrappers against hand-computed values. */
#include "base/la.h"
#include "harness.h"

#include <pthread.h>

static void test_gemm(void)
{
	/* A (2,3) = [1 2 3; 4 5 6], B (3,2) = [7 8; 9 10; 11 12]: AB = [58 64; 139 154]. */
	double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, c[4] = {1, 1, 1, 1};
	vpa_dgemm(0, 0, 2, 2, 3, 1.0, a, 3, b, 2, 0.0, c, 2);
	CHECK_NEAR(c[0], 58, 0);
	CHECK_NEAR(c[1], 64, 0);
	CHECK_NEAR(c[2], 139, 0);
	CHECK_NEAR(c[3], 154, 0);
	/* A^T A (3,3): first row [17 22 27]. */
	double d[9];
	vpa_dgemm(1, 0, 3, 3, 2, 1.0, a, 3, a, 3, 0.0, d, 3);
	CHECK_NEAR(d[0], 17, 0);
	CHECK_NEAR(d[1], 22, 0);
	CHECK_NEAR(d[2], 27, 0);
	float fa[6] = {1, 2, 3, 4, 5, 6}, fb[6] = {7, 8, 9, 10, 11, 12}, fc[4];
	vpa_sgemm(0, 0, 2, 2, 3, 1.0f, fa, 3, fb, 2, 0.0f, fc, 2);
	CHECK_NEAR(fc[3], 154, 0);
	/* B^T via tb: A (2,3) x (B^T)^T ... A x A^T = [14 32; 32 77]. */
	vpa_sgemm(0, 1, 2, 2, 3, 1.0f, fa, 3, fa, 3, 0.0f, fc, 2);
	CHECK_NEAR(fc[1], 32, 0);
	CHECK_NEAR(fc[3], 77, 0);
}

static void test_eig(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	/* [2 1; 1 2]: eigenvalues 1, 3. */
	double a[4] = {2, 1, 1, 2}, w[2];
	CHECK(vpa_dsyev(2, a, w, &err) == 0);
	CHECK_NEAR(w[0], 1, 1e-12);
	CHECK_NEAR(w[1], 3, 1e-12);
	CHECK_NEAR(fabs(a[0 * 2 + 1]), sqrt(0.5), 1e-12); /* eigenvector (1,1)/sqrt2 in column 1 */
	/* A v = l B v with A = diag(2, 6), B = diag(1, 2): l = 2, 3. */
	double A[4] = {2, 0, 0, 6}, B[4] = {1, 0, 0, 2}, l[2];
	CHECK(vpa_dsygv(2, A, B, l, "B", &err) == 0);
	CHECK_NEAR(l[0], 2, 1e-12);
	CHECK_NEAR(l[1], 3, 1e-12);
	double C[4] = {1, 0, 0, -1}, D[4] = {1, 0, 0, -1};
	CHECK(vpa_dsygv(2, C, D, l, "within-class covariance", &err) == VPA_ENUMERIC);
	CHECK(strstr(err.msg, "within-class covariance is not positive definite") != NULL);
}

static void test_spd(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	double a[4] = {4, 2, 2, 3}, ld;
	CHECK(vpa_dspd_logdet(2, a, &ld, "A", &err) == 0);
	CHECK_NEAR(ld, log(8.0), 1e-12);
	CHECK(vpa_dspd_inverse(2, a, "A", &err) == 0);
	/* inverse of [4 2; 2 3] = [3 -2; -2 4] / 8 */
	CHECK_NEAR(a[0], 3.0 / 8, 1e-12);
	CHECK_NEAR(a[1], -2.0 / 8, 1e-12);
	CHECK_NEAR(a[2], -2.0 / 8, 1e-12);
	CHECK_NEAR(a[3], 4.0 / 8, 1e-12);
	double l[4] = {4, 2, 2, 3};
	CHECK(vpa_dcholesky(2, l, "A", &err) == 0);
	CHECK_NEAR(l[0], 2, 1e-12);
	CHECK_NEAR(l[2], 1, 1e-12);
	CHECK_NEAR(l[3], sqrt(2.0), 1e-12);
	CHECK_NEAR(l[1], 0, 0);
}

static void test_blas1(void)
{
	double x[3] = {3, 4, 12}, y[3] = {1, 1, 1};
	CHECK_NEAR(vpa_dnrm2(3, x), 13, 1e-12);
	CHECK_NEAR(vpa_ddot(3, x, y), 19, 0);
	vpa_daxpy(3, 2.0, x, y);
	CHECK_NEAR(y[2], 25, 0);
	double a[4] = {0, 0, 0, 0};
	vpa_dger(2, 2, 1.0, x, x + 1, a, 2);
	CHECK_NEAR(a[0], 12, 0);
	CHECK_NEAR(a[3], 48, 0);
}

/* vpa_la_run_workers: BLAS single-threaded inside the workers when n > 1,
 * its thread count restored afterwards; n <= 1 leaves it alone. */
struct seen {
	pthread_mutex_t mx;
	size_t workers, blas_one;
	int blas;
};

static void *seen_worker(void *arg)
{
	struct seen *s = arg;
	int b = vpa_la_get_threads();
	pthread_mutex_lock(&s->mx);
	s->workers++;
	s->blas_one += b == 1;
	s->blas = b;
	pthread_mutex_unlock(&s->mx);
	return NULL;
}

static void test_run_workers(void)
{
	vpa_la_set_threads(2);
	int before = vpa_la_get_threads();
	struct seen s = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};
	vpa_la_run_workers(3, seen_worker, &s);
	CHECK(s.workers == 3);
	CHECK(s.blas_one == 3);
	CHECK(vpa_la_get_threads() == before);
	struct seen one = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};
	vpa_la_run_workers(1, seen_worker, &one);
	CHECK(one.workers == 1);
	CHECK(one.blas == before);
	vpa_la_set_threads(1);
}

int main(void)
{
	RUN(test_gemm);
	RUN(test_eig);
	RUN(test_spd);
	RUN(test_blas1);
	RUN(test_run_workers);
	return DONE();
}
