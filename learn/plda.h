/*
 * learn/plda.h - speaker-verification back-ends: centering, LDA, length
 * normalisation, cosine scoring and the two-covariance PLDA of Kaldi
 * (ivector-compute-plda / ivector-plda-scoring), plus a trained pipeline
 * (struct vpa_backend) that chains them.  learn/BACKENDS.md documents every
 * formula and where it follows or departs from Kaldi.
 *
 * All matrices are row-major double, shapes written (rows, cols); output
 * buffers are provided by the caller.  Speaker labels are indices
 * spk[i] < n_spk (struct vpa_embset's spk array fits directly).
 */
#ifndef VPA_PLDA_H
#define VPA_PLDA_H

#include "base/base.h"
#include "formats/embset.h"

/* ----------------------------------------------------- pure kernels */

/* mean (d) of the rows of x (n, d); zeros when n == 0. */
void vpa_rows_mean(const double *x, size_t n, size_t d, double *mean /* OUT */);
/* x[i] -= mean for every row. */
void vpa_rows_center(double *x, size_t n, size_t d, const double *mean);
/*
 * Kaldi's ivector-normalize-length: scale each row to norm sqrt(d).  A zero
 * row stays zero.
 */
void vpa_rows_length_norm(double *x, size_t n, size_t d);

/* Cosine similarity a.b / (|a| |b|); 0 when either vector is zero. */
double vpa_cosine(const double *a, const double *b, size_t d);
/* out (na, nb) = cosine of every row of a (na, d) with every row of b (nb, d) (one GEMM). */
void vpa_cosine_scores(const double *a, size_t na, const double *b, size_t nb, size_t d,
		       double *out /* OUT */);

/*
 * LDA as Kaldi's ivector-compute-lda (total-covariance-factor 0): with the
 * global mean m of x, S_b = sum_s n_s (m_s - m)(m_s - m)^T / N and
 * S_w = sum_i (x_i - m_{s(i)})(x_i - m_{s(i)})^T / N, solve
 * S_b v = lambda S_w v (vpa_dsygv, so V^T S_w V = I) and keep the lda_dim
 * eigenvectors of largest lambda as the ROWS of w (lda_dim, d), in
 * decreasing lambda (eig, optional, gets them).  Projected data y = w x has
 * identity within-class covariance and diagonal between-class covariance
 * diag(eig).  Each row's sign makes its largest-magnitude entry positive.
 * The transform is linear: apply it to centred data (the mean has no effect
 * on the scatters).  Errors: lda_dim 0 or > d, fewer than 2 speakers, no
 * speaker with 2 utterances, N < d, singular S_w (VPA_ENUMERIC).
 */
int vpa_lda_train(const double *x, size_t n, size_t d, const uint32_t *spk, size_t n_spk,
		  size_t lda_dim, double *w /* OUT (lda_dim, d) */, double *eig /* OUT or NULL */,
		  struct vpa_err *err);

/* ------------------------------------------------------------- PLDA */

/*
 * Two-covariance model (Ioffe 2006; Kaldi plda.cc): x = mu + y_spk + e,
 * y ~ N(0, B), e ~ N(0, W).  Stored as Kaldi stores it: mean mu, a transform
 * T (d, d) with T W T^T = I and T B T^T = diag(psi), psi decreasing.
 */
struct vpa_plda;

/*
 * Train by EM exactly as Kaldi's PldaEstimator: W = B = I at the start,
 * em_iters iterations (Kaldi's default 10), mean = average of the class
 * means.  Speakers with no utterance are skipped; a speaker with a single
 * utterance contributes to B only.  objf (em_iters + 1, optional) gets the
 * log-likelihood per utterance before the first and after every iteration
 * (Kaldi's ComputeObjf; EM makes it non-decreasing).  Returns an owned
 * pointer (free with vpa_plda_free) or NULL with err set: "no speaker with two
 * or more utterances: cannot estimate the within-class covariance",
 * VPA_ENUMERIC for a singular covariance.
 */
struct vpa_plda *vpa_plda_train(const double *x, size_t n, size_t d, const uint32_t *spk,
				size_t n_spk, int em_iters, double *objf /* OUT or NULL */,
				struct vpa_err *err);

/* A model from known parameters (mean (d), B (d, d), W (d, d)), as Kaldi's GetOutput. */
struct vpa_plda *vpa_plda_from_cov(size_t d, const double *mean, const double *B,
				   const double *W, struct vpa_err *err);
void vpa_plda_free(struct vpa_plda *p);

size_t vpa_plda_dim(const struct vpa_plda *p);
const double *vpa_plda_mean(const struct vpa_plda *p);      /* (d), borrowed */
const double *vpa_plda_transform(const struct vpa_plda *p); /* (d, d), borrowed */
const double *vpa_plda_psi(const struct vpa_plda *p);       /* (d), borrowed */
/* The model's B and W in the input space (W = (T^T T)^-1, B = W T^T diag(psi) T W). */
int vpa_plda_covariances(const struct vpa_plda *p, double *B /* OUT (d, d) */,
			 double *W /* OUT (d, d) */, struct vpa_err *err);

/* Length normalisation inside PLDA scoring (Kaldi's PldaConfig). */
enum vpa_plda_norm {
	VPA_PLDA_NORM_NONE = 0,   /* --normalize-length=false */
	VPA_PLDA_NORM_KALDI = 1,  /* default: y^T (psi + I/n)^-1 y = d */
	VPA_PLDA_NORM_SIMPLE = 2, /* --simple-length-normalization: |y| = sqrt(d) */
};

/*
 * Kaldi's TransformIvector on every row: out = T (x - mu), then scaled as
 * `norm` says, with counts[i] the number of utterances averaged into row i
 * (NULL: all 1).  x and out are (n, d) and may not alias.
 */
void vpa_plda_transform_rows(const struct vpa_plda *p, const double *x, size_t n,
			     const uint32_t *counts, int norm, double *out /* OUT */);

/*
 * Kaldi's LogLikelihoodRatio: enrolment u (transformed, the mean of `count`
 * utterances) against test v (transformed):
 *   log N(v; a u, diag(c)) - log N(v; 0, diag(1 + psi)),
 *   a = count psi / (count psi + 1), c = 1 + psi / (count psi + 1).
 */
double vpa_plda_llr(const struct vpa_plda *p, const double *u, uint32_t count, const double *v);

/*
 * The LLR of every enrolment row of u (ne, d) (counts (ne), NULL = all 1)
 * against every test row of v (nt, d) into out (ne, nt): the LLR is a
 * quadratic form, computed as two GEMMs (cross term, and the count-dependent
 * test term per distinct count) plus a per-enrolment constant.  The float
 * version runs in single precision (SGEMM) for large blocks.
 */
void vpa_plda_score_matrix(const struct vpa_plda *p, const double *u, const uint32_t *counts,
			   size_t ne, const double *v, size_t nt, double *out /* OUT */);
void vpa_plda_score_matrix_f(const struct vpa_plda *p, const double *u, const uint32_t *counts,
			     size_t ne, const double *v, size_t nt, float *out /* OUT */);

/*
 * Save / load in Kaldi's text form of a Plda object (`<Plda> [ mean ] [ T ]
 * [ psi ] </Plda>`, 17 significant digits, so loading is exact); load also
 * accepts Kaldi's binary form ("\0B<Plda> " DV DM DV), so a model from
 * `ivector-compute-plda` or `ivector-copy-plda --binary=false` can be used.
 * Load returns an owned pointer or NULL with err set.
 */
int vpa_plda_save(const struct vpa_plda *p, const char *path, struct vpa_err *err);
struct vpa_plda *vpa_plda_load(const char *path, struct vpa_err *err);
struct vpa_plda *vpa_plda_parse(const char *name, const unsigned char *buf, size_t len,
				struct vpa_err *err);

/* ------------------------------------------------- trained pipeline */

enum vpa_backend_scoring { VPA_SCORE_PLDA = 0, VPA_SCORE_COSINE = 1 };

/*
 * The Kaldi x-vector recipe (and VoicePrivacy's ASV back-end):
 *   x -> x - mean (center) -> LDA (lda_dim, 0 = none) -> length norm ->
 *   PLDA (em_iters, plda_norm) or cosine.
 * The enrolment of a speaker is the mean of its raw utterance vectors, then
 * the same chain, then PLDA's transform with its utterance count.
 */
struct vpa_backend_cfg {
	int center;        /* 1: subtract the training mean (default 1) */
	size_t lda_dim;    /* 0: no LDA (default 0) */
	int length_norm;   /* 1: ivector-normalize-length after LDA (default 1) */
	int scoring;       /* enum vpa_backend_scoring (default PLDA) */
	int em_iters;      /* PLDA EM iterations (default 10) */
	int plda_norm;     /* enum vpa_plda_norm (default VPA_PLDA_NORM_KALDI) */
};
void vpa_backend_cfg_init(struct vpa_backend_cfg *cfg);

struct vpa_backend;

/* Train on every utterance of `train`.  Owned pointer or NULL with err set. */
struct vpa_backend *vpa_backend_train(const struct vpa_embset *train,
				      const struct vpa_backend_cfg *cfg, struct vpa_err *err);
void vpa_backend_free(struct vpa_backend *b);

size_t vpa_backend_in_dim(const struct vpa_backend *b);  /* input d */
size_t vpa_backend_out_dim(const struct vpa_backend *b); /* after LDA */
const struct vpa_plda *vpa_backend_plda(const struct vpa_backend *b); /* NULL for cosine */

/* Center, LDA and length norm: x (n, in_dim) -> out (n, out_dim). */
void vpa_backend_prepare(const struct vpa_backend *b, const double *x, size_t n,
			 double *out /* OUT */);

/*
 * Score raw enrolment vectors e (ne, in_dim) (each the mean of counts[i]
 * utterances; NULL = 1) against raw test vectors t (nt, in_dim):
 * out (ne, nt), higher = same speaker.
 */
void vpa_backend_score(const struct vpa_backend *b, const double *e, const uint32_t *counts,
		       size_t ne, const double *t, size_t nt, double *out /* OUT */);
void vpa_backend_score_f(const struct vpa_backend *b, const double *e, const uint32_t *counts,
			 size_t ne, const double *t, size_t nt, float *out /* OUT */);

/*
 * Speaker-level enrolment: every speaker of `enroll` (mean of its
 * utterances, with its count) against every utterance of `test`:
 * out (enroll->n_spk, test->n).  Error when the dimensions differ
 * ("enrolment set has dimension 3, the back-end expects 4").
 */
int vpa_backend_score_sets(const struct vpa_backend *b, const struct vpa_embset *enroll,
			   const struct vpa_embset *test, double *out /* OUT */,
			   struct vpa_err *err);

#endif
