/* base/la.c - the only file that includes cblas.h and lapacke.h.  See la.h. */
#include "base/la.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void vpa_la_set_threads(int n)
{
	if (n > 0)
		openblas_set_num_threads(n);
}

int vpa_la_get_threads(void)
{
	return openblas_get_num_threads();
}

const char *vpa_la_blas_config(void)
{
	return openblas_get_config();
}

const char *vpa_la_blas_kernel(void)
{
	return openblas_get_corename();
}

void vpa_la_run_workers(size_t n, void *(*fn)(void *), void *arg)
{
	int blas = vpa_la_get_threads();
	if (n > 1)
		vpa_la_set_threads(1);
	vpa_run_workers(n, fn, arg);
	if (n > 1)
		vpa_la_set_threads(blas);
}

void vpa_sgemm(int ta, int tb, size_t m, size_t n, size_t k, float alpha, const float *a,
	       size_t lda, const float *b, size_t ldb, float beta, float *c, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
		    (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

void vpa_dgemm(int ta, int tb, size_t m, size_t n, size_t k, double alpha, const double *a,
	       size_t lda, const double *b, size_t ldb, double beta, double *c, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
		    (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

void vpa_sgemv(int ta, size_t m, size_t n, float alpha, const float *a, size_t lda,
	       const float *x, float beta, float *y)
{
	if (m == 0 || n == 0)
		return;
	cblas_sgemv(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, (int)m, (int)n, alpha, a,
		    (int)lda, x, 1, beta, y, 1);
}

void vpa_dgemv(int ta, size_t m, size_t n, double alpha, const double *a, size_t lda,
	       const double *x, double beta, double *y)
{
	if (m == 0 || n == 0)
		return;
	cblas_dgemv(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, (int)m, (int)n, alpha, a,
		    (int)lda, x, 1, beta, y, 1);
}

void vpa_dger(size_t m, size_t n, double alpha, const double *x, const double *y, double *a,
	      size_t lda)
{
	if (m == 0 || n == 0)
		return;
	cblas_dger(CblasRowMajor, (int)m, (int)n, alpha, x, 1, y, 1, a, (int)lda);
}

float vpa_sdot(size_t n, const float *x, const float *y)
{
	return n ? cblas_sdot((int)n, x, 1, y, 1) : 0.0f;
}

double vpa_ddot(size_t n, const double *x, const double *y)
{
	return n ? cblas_ddot((int)n, x, 1, y, 1) : 0.0;
}

float vpa_snrm2(size_t n, const float *x)
{
	return n ? cblas_snrm2((int)n, x, 1) : 0.0f;
}

double vpa_dnrm2(size_t n, const double *x)
{
	return n ? cblas_dnrm2((int)n, x, 1) : 0.0;
}

void vpa_saxpy(size_t n, float alpha, const float *x, float *y)
{
	if (n)
		cblas_saxpy((int)n, alpha, x, 1, y, 1);
}

void vpa_daxpy(size_t n, double alpha, const double *x, double *y)
{
	if (n)
		cblas_daxpy((int)n, alpha, x, 1, y, 1);
}

int vpa_dsyev(size_t n, double *a, double *w, struct vpa_err *err)
{
	if (n == 0)
		return 0;
	lapack_int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)n, a, (lapack_int)n, w);
	if (info < 0)
		VPA_BUG("LAPACKE_dsyevd: argument %d", (int)-info);
	if (info > 0)
		return vpa_fail(err, VPA_ENUMERIC, NULL, "eigendecomposition did not converge");
	return 0;
}

int vpa_dsygv(size_t n, double *a, double *b, double *w, const char *what, struct vpa_err *err)
{
	if (n == 0)
		return 0;
	lapack_int info = LAPACKE_dsygvd(LAPACK_ROW_MAJOR, 1, 'V', 'U', (lapack_int)n, a,
					 (lapack_int)n, b, (lapack_int)n, w);
	if (info < 0)
		VPA_BUG("LAPACKE_dsygvd: argument %d", (int)-info);
	if (info > (lapack_int)n)
		return vpa_fail(err, VPA_ENUMERIC, NULL,
				"%s is not positive definite: too few samples or a constant dimension?",
				what);
	if (info > 0)
		return vpa_fail(err, VPA_ENUMERIC, NULL, "generalised eigendecomposition did not converge");
	return 0;
}

int vpa_dcholesky(size_t n, double *a, const char *what, struct vpa_err *err)
{
	if (n == 0)
		return 0;
	lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, a, (lapack_int)n);
	if (info < 0)
		VPA_BUG("LAPACKE_dpotrf: argument %d", (int)-info);
	if (info > 0)
		return vpa_fail(err, VPA_ENUMERIC, NULL,
				"%s is not positive definite: too few samples or a constant dimension?",
				what);
	/* Zero the strict upper triangle so the result is the factor L. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			a[i * n + j] = 0.0;
	return 0;
}

int vpa_dspd_inverse(size_t n, double *a, const char *what, struct vpa_err *err)
{
	if (n == 0)
		return 0;
	lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, a, (lapack_int)n);
	if (info < 0)
		VPA_BUG("LAPACKE_dpotrf: argument %d", (int)-info);
	if (info > 0)
		return vpa_fail(err, VPA_ENUMERIC, NULL,
				"%s is not positive definite: too few samples or a constant dimension?",
				what);
	info = LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, a, (lapack_int)n);
	if (info < 0)
		VPA_BUG("LAPACKE_dpotri: argument %d", (int)-info);
	if (info > 0)
		return vpa_fail(err, VPA_ENUMERIC, NULL, "%s is singular", what);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			a[i * n + j] = a[j * n + i];
	return 0;
}

int vpa_dspd_logdet(size_t n, const double *a, double *logdet, const char *what,
		    struct vpa_err *err)
{
	double *l = xmalloc(xmul(xmul(n, n), sizeof(double)));
	memcpy(l, a, n * n * sizeof(double));
	int rc = vpa_dcholesky(n, l, what, err);
	if (!rc) {
		double s = 0;
		for (size_t i = 0; i < n; i++)
			s += log(l[i * n + i]);
		*logdet = 2 * s;
	}
	free(l);
	return rc;
}

int vpa_poly_roots(size_t n, const double *p, double *re, double *im, struct vpa_err *err)
{
	if (n == 0)
		return 0;
	if (p[0] == 0)
		VPA_BUG("vpa_poly_roots: leading coefficient 0");
	double stack[32 * 32 + 3 * 32];
	double *a = n <= 32 ? stack : xmalloc(xmul(n * n + 3 * n, sizeof(double)));
	double *scale = a + n * n, *work = scale + n;
	memset(a, 0, n * n * sizeof(double));
	/* column-major companion matrix (np.roots): A[0, j] = -p[j+1] / p[0], ones
	 * below the diagonal.  It is already upper Hessenberg: dgeev's reduction
	 * (dgehrd) is skipped; balancing by scaling only (dgebal 'S') keeps the
	 * Hessenberg form. */
	for (size_t j = 0; j < n; j++)
		a[j * n] = -p[j + 1] / p[0];
	for (size_t i = 1; i < n; i++)
		a[i + (i - 1) * n] = 1;
	lapack_int ilo, ihi, N = (lapack_int)n;
	lapack_int info = LAPACKE_dgebal_work(LAPACK_COL_MAJOR, 'S', N, a, N, &ilo, &ihi, scale);
	if (info == 0)
		info = LAPACKE_dhseqr_work(LAPACK_COL_MAJOR, 'E', 'N', N, ilo, ihi, a, N, re, im, NULL,
					   N, work, 2 * N);
	if (a != stack)
		free(a);
	if (info < 0)
		VPA_BUG("LAPACKE_dgebal/dhseqr: argument %d", (int)-info);
	if (info > 0)
		return vpa_fail(err, VPA_ENUMERIC, NULL, "polynomial roots did not converge");
	return 0;
}
