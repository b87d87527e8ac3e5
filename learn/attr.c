/*
 * learn/attr.c - the attribute attacker's classifier (learn/attr.h): Gaussian
 * linear discriminants with a shared, shrunk covariance, as scikit-learn's
 * LinearDiscriminantAnalysis(solver='lsqr', shrinkage=alpha).
 */
#include "learn/attr.h"
#include "base/la.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vpa_attr_clf_release(struct vpa_attr_clf *c)
{
	free(c->coef);
	free(c->icpt);
	free(c->prior);
	memset(c, 0, sizeof(*c));
}

int vpa_attr_clf_train(const double *x, size_t n, size_t d, const uint32_t *y, size_t k,
		       double alpha, struct vpa_attr_clf *out, struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!d || k < 2)
		return vpa_fail(err, VPA_EINPUT, NULL, "attribute classifier: needs a dimension and "
				"2 classes");
	size_t *nc = xcalloc(k, sizeof(size_t)), present = 0;
	for (size_t i = 0; i < n; i++) {
		if (y[i] >= k) {
			free(nc);
			return vpa_fail(err, VPA_EINPUT, NULL, "attribute classifier: label %u of row "
					"%zu is not below %zu", y[i], i + 1, k);
		}
		nc[y[i]]++;
	}
	for (size_t c = 0; c < k; c++)
		present += nc[c] > 0;
	if (present < 2) {
		free(nc);
		return vpa_fail(err, VPA_EINPUT, NULL, "attribute classifier: the training data "
				"has %zu class%s, 2 needed", present, present == 1 ? "" : "es");
	}
	double *mu = xcalloc(xmul(k, d), sizeof(double));
	for (size_t i = 0; i < n; i++)
		vpa_daxpy(d, 1.0, x + i * d, mu + (size_t)y[i] * d);
	for (size_t c = 0; c < k; c++)
		for (size_t j = 0; nc[c] && j < d; j++)
			mu[c * d + j] /= (double)nc[c];
	/* per class: the centred rows, their biased covariance (one GEMM), shrunk */
	double *S = xcalloc(xmul(d, d), sizeof(double));
	double *Sc = xmalloc(xmul(xmul(d, d), sizeof(double)));
	double *Z = xmalloc(xmul(xmul(n ? n : 1, d), sizeof(double)));
	for (size_t c = 0; c < k; c++) {
		if (!nc[c])
			continue;
		size_t r = 0;
		for (size_t i = 0; i < n; i++)
			if (y[i] == c) {
				for (size_t j = 0; j < d; j++)
					Z[r * d + j] = x[i * d + j] - mu[c * d + j];
				r++;
			}
		vpa_dgemm(1, 0, d, d, r, 1.0 / (double)r, Z, d, Z, d, 0.0, Sc, d);
		/* scikit-learn's _cov with a float shrinkage (its version 1.2,
		 * Debian 12): shrunk_covariance, towards trace(S_c)/d times I */
		double tr = 0;
		for (size_t j = 0; j < d; j++)
			tr += Sc[j * d + j];
		double pi = (double)nc[c] / (double)n, mu_t = tr / (double)d;
		for (size_t a = 0; a < d; a++)
			for (size_t b = 0; b < d; b++)
				S[a * d + b] += pi * ((1 - alpha) * Sc[a * d + b] +
						      (a == b ? alpha * mu_t : 0));
	}
	free(Z);
	free(Sc);
	int rc = vpa_dspd_inverse(d, S, "the attribute classifier's pooled covariance", err);
	if (rc) {
		free(S);
		free(mu);
		free(nc);
		return rc;
	}
	out->d = d;
	out->k = k;
	out->coef = xmalloc(xmul(xmul(k, d), sizeof(double)));
	out->icpt = xmalloc(xmul(k, sizeof(double)));
	out->prior = xmalloc(xmul(k, sizeof(double)));
	/* coef (k, d) = mu (k, d) S^-1 (S^-1 symmetric) */
	vpa_dgemm(0, 0, k, d, d, 1.0, mu, d, S, d, 0.0, out->coef, d);
	for (size_t c = 0; c < k; c++) {
		out->prior[c] = (double)nc[c] / (double)n;
		out->icpt[c] = nc[c] ? -0.5 * vpa_ddot(d, mu + c * d, out->coef + c * d) +
					       log(out->prior[c])
				     : -INFINITY;
	}
	free(S);
	free(mu);
	free(nc);
	return 0;
}

void vpa_attr_clf_predict(const struct vpa_attr_clf *c, const double *x, size_t n,
			  uint32_t *pred)
{
	size_t k = c->k, d = c->d;
	double *sc = xmalloc(xmul(k, sizeof(double)));
	for (size_t i = 0; i < n; i++) {
		/* one row at a time: the same sums whatever n, so a row's class does
		 * not depend on the batch it came in */
		for (size_t a = 0; a < k; a++)
			sc[a] = vpa_ddot(d, x + i * d, c->coef + a * d) + c->icpt[a];
		size_t best = 0;
		for (size_t a = 1; a < k; a++)
			if (sc[a] > sc[best])
				best = a;
		pred[i] = (uint32_t)best;
	}
	free(sc);
}
