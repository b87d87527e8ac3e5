/*
 * base/la.h - linear algebra on OpenBLAS / LAPACKE.  base/la.c is the only
 * file that includes cblas.h and lapacke.h.
 *
 * All matrices are row-major and dense.  Shapes are written as (rows, cols).
 * Output buffers are provided by the caller.  Float versions (s*) serve the
 * neural networks (SGEMM throughput), double versions (d*) the PLDA/LDA
 * back-ends.
 */
#ifndef VPA_LA_H
#define VPA_LA_H

#include "base/base.h"

/* Thread count for OpenBLAS (0 or negative: leave as is). */
void vpa_la_set_threads(int n);
int vpa_la_get_threads(void);
/*
 * What OpenBLAS says of itself, borrowed static strings: its build
 * (openblas_get_config(), e.g. "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH
 * NO_AFFINITY Haswell MAX_THREADS=64") and the kernel it chose for this CPU
 * at load (openblas_get_corename(), e.g. "Haswell"; OPENBLAS_CORETYPE forces
 * it in a DYNAMIC_ARCH build).  base/cpu.c records both in results.json.
 */
const char *vpa_la_blas_config(void);
const char *vpa_la_blas_kernel(void);
/*
 * vpa_run_workers(n, fn, arg) for workers that call BLAS: with n > 1 BLAS
 * runs single-threaded meanwhile (one BLAS thread per worker; the numbers do
 * not depend on n), and its thread count is restored afterwards.
 */
void vpa_la_run_workers(size_t n, void *(*fn)(void *), void *arg);

/*
 * C = alpha op(A) op(B) + beta C, op = transpose when ta/tb is non-zero.
 * op(A): (m, k), op(B): (k, n), C: (m, n).  lda/ldb/ldc are row strides of
 * the stored (untransposed) matrices.
 */
void vpa_sgemm(int ta, int tb, size_t m, size_t n, size_t k, float alpha, const float *a,
	       size_t lda, const float *b, size_t ldb, float beta, float *c, size_t ldc);
void vpa_dgemm(int ta, int tb, size_t m, size_t n, size_t k, double alpha, const double *a,
	       size_t lda, const double *b, size_t ldb, double beta, double *c, size_t ldc);

/* y = alpha op(A) x + beta y; A: (m, n). */
void vpa_sgemv(int ta, size_t m, size_t n, float alpha, const float *a, size_t lda,
	       const float *x, float beta, float *y);
void vpa_dgemv(int ta, size_t m, size_t n, double alpha, const double *a, size_t lda,
	       const double *x, double beta, double *y);

/* A += alpha x y^T; A: (m, n). */
void vpa_dger(size_t m, size_t n, double alpha, const double *x, const double *y, double *a,
	      size_t lda);

float vpa_sdot(size_t n, const float *x, const float *y);
double vpa_ddot(size_t n, const double *x, const double *y);
float vpa_snrm2(size_t n, const float *x);
double vpa_dnrm2(size_t n, const double *x);
void vpa_saxpy(size_t n, float alpha, const float *x, float *y);
void vpa_daxpy(size_t n, double alpha, const double *x, double *y);

/*
 * Symmetric eigendecomposition A = V diag(w) V^T (LAPACKE_dsyevd).  a: (n, n),
 * overwritten by the eigenvectors as COLUMNS; w: (n) ascending.
 * Errors: VPA_ENUMERIC "eigendecomposition did not converge".
 */
int vpa_dsyev(size_t n, double *a, double *w, struct vpa_err *err);

/*
 * Generalised symmetric-definite eigenproblem A v = lambda B v (LAPACKE_dsygvd,
 * itype 1).  a: (n, n) overwritten by eigenvectors (columns, B-orthonormal),
 * b: (n, n) overwritten by its Cholesky factor; w ascending.
 * Errors: VPA_ENUMERIC when B is not positive definite (`what` names B in the
 * message, e.g. "within-class covariance").
 */
int vpa_dsygv(size_t n, double *a, double *b, double *w, const char *what,
	      struct vpa_err *err);

/*
 * Cholesky factorisation in place (lower, LAPACKE_dpotrf) and inverse of an SPD
 * matrix (dpotri, full symmetric result).  Errors: VPA_ENUMERIC naming `what`.
 */
int vpa_dcholesky(size_t n, double *a, const char *what, struct vpa_err *err);
int vpa_dspd_inverse(size_t n, double *a, const char *what, struct vpa_err *err);

/* log |det A| of an SPD matrix (via Cholesky; a is not modified). */
int vpa_dspd_logdet(size_t n, const double *a, double *logdet, const char *what,
		    struct vpa_err *err);

/*
 * Roots of the polynomial p[0] z^n + p[1] z^(n-1) + ... + p[n] (p[0] != 0) as
 * the eigenvalues of its companion matrix, the method of NumPy's np.roots
 * (which calls dgeev); the matrix is already Hessenberg, so we balance it
 * (dgebal, scaling) and call the QR algorithm (dhseqr) directly.  re, im (n)
 * in LAPACK's order, a complex pair adjacent with the positive imaginary part
 * first; real roots have im exactly 0.  Errors: VPA_ENUMERIC "polynomial roots did not converge".
 */
int vpa_poly_roots(size_t n, const double *p, double *re, double *im, struct vpa_err *err);

#endif
