/*
 * learn/attr.h - the attribute attacker of issue 29 item 4: a Gaussian
 * linear discriminant classifier (shared covariance) that guesses a
 * per-speaker attribute (gender, or any label the user gives) from an
 * embedding.  It is scikit-learn's LinearDiscriminantAnalysis(solver='lsqr',
 * shrinkage=alpha) exactly (tests/golden/attr/ holds its outputs), chosen
 * because it is closed-form: no iterations, no seed, the same answer for any
 * thread count, and a published reference to check it against.
 */
#ifndef VPA_ATTR_H
#define VPA_ATTR_H

#include "base/base.h"

struct vpa_attr_clf {
	size_t d, k;    /* input dimension, classes (labels 0..k-1) */
	double *coef;   /* (k, d) discriminant directions, owned */
	double *icpt;   /* (k) intercepts; -inf for a class absent from training */
	double *prior;  /* (k) training class fractions */
};

/*
 * Train on x (n, d) with labels y[i] < k.  Class c: prior pi_c = n_c / n,
 * mean mu_c, biased covariance S_c shrunk as scikit-learn's
 * shrunk_covariance: S_c' = (1 - alpha) S_c + alpha (trace(S_c) / d) I
 * (alpha > 0 keeps it invertible with fewer rows than features).  Pooled
 * S = sum_c pi_c S_c';
 * coef_c = S^-1 mu_c, icpt_c = -mu_c . coef_c / 2 + log pi_c.  Errors
 * (VPA_EINPUT): fewer than 2 classes with training rows, a label >= k;
 * (VPA_ENUMERIC) a singular pooled covariance (every class constant, or
 * alpha 0 with too few rows).
 */
int vpa_attr_clf_train(const double *x, size_t n, size_t d, const uint32_t *y, size_t k,
		       double alpha, struct vpa_attr_clf *out, struct vpa_err *err);
/* pred[i] = argmax_c x_i . coef_c + icpt_c (the first on a tie). */
void vpa_attr_clf_predict(const struct vpa_attr_clf *c, const double *x, size_t n,
			  uint32_t *pred /* OUT (n) */);
void vpa_attr_clf_release(struct vpa_attr_clf *c);

#endif
