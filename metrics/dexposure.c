/*
 * metrics/dexposure.c - d-exposure (Helali et al. 2020, "Exposure of
 * non-sensitive words in language models" as used in COMPRISE D2.3).
 *
 * For each class C_i the canary s is placed in its context and the model's
 * confidence in C_i is compared with that of every reference word w of C_i:
 *   d_i = -log2 Pr_{w in C_i}[conf(w) >= conf(s)].
 * Ties count against the canary (>=): a model that cannot tell the canary
 * from the others gets no credit for it.  The count is clamped at 1 (the set's
 * resolution), so d_i <= log2 |C_i| and never +inf.  The result is their mean.
 */
#include <math.h>

#include "metrics.h"

int vpa_dexposure(const struct vpa_dexp_class *c, size_t k, double *per_class,
		  double *max_class, double *mean, struct vpa_err *err)
{
	if (k == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "d-exposure needs at least one class");
	double sum = 0;
	for (size_t i = 0; i < k; i++) {
		if (c[i].n_ref == 0)
			return vpa_fail(err, VPA_EINPUT, NULL, "class %zu has no reference words", i + 1);
		if (!isfinite(c[i].canary_conf))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"class %zu: canary confidence is not a finite number", i + 1);
		size_t ge = 0;
		for (size_t j = 0; j < c[i].n_ref; j++) {
			double r = c[i].ref_conf[j];
			if (!isfinite(r))
				return vpa_fail(err, VPA_EINPUT, NULL,
						"class %zu: confidence of reference word %zu is not a finite number",
						i + 1, j + 1);
			ge += r >= c[i].canary_conf;
		}
		if (ge == 0)
			ge = 1;
		double n = (double)c[i].n_ref;
		/* -log2(ge / n), as two logs so that powers of two are exact */
		per_class[i] = log2(n) - log2((double)ge);
		max_class[i] = log2(n);
		sum += per_class[i];
	}
	*mean = sum / (double)k;
	return 0;
}
