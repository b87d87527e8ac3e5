/*
 * metrics/dp.c - differential-privacy accounting.
 *
 *  - RDP of the Poisson-sampled Gaussian mechanism (Mironov, Talwar, Zhang
 *    2019, "Renyi differential privacy of the sampled Gaussian mechanism",
 *    Sec. 3.3), computed the way Google's dp_accounting
 *    (rdp/rdp_privacy_accountant.py) computes it, so that our epsilons are the
 *    ones its users get: integer orders by the binomial sum, fractional orders
 *    by the two-series expansion with log-erfc, both summed in log space; the
 *    fractional series keeps the signs of the binomial coefficients (exact,
 *    as TF Privacy and Opacus) unless VPA_RDP_UNSIGNED asks for today's
 *    dp_accounting upper bound.
 *  - Conversion to (epsilon, delta) with the improved bound of Canonne, Kamath
 *    and Steinke 2020 (Prop. 12) / Asoodeh et al. 2020 (Eq. 20), with
 *    dp_accounting's edge cases (KL shortcut, alpha <= 1.01 skipped, negative
 *    epsilon clamped to 0).
 *  - The inverse search for the noise multiplier.
 *  - Gaussian mechanism for one release: the classical bound (Dwork & Roth,
 *    Thm 3.22) and the analytic Gaussian mechanism (Balle & Wang 2018,
 *    Algorithm 1 and Theorem 8).
 *  - SNR of a noised update (Granqvist et al. 2020).
 *
 * See metrics/DP.md for the derivations and how published numbers relate.
 */
#include <math.h>

#include "metrics.h"

#define LN2 0.69314718055994530942
#define LN_SQRT_2PI 0.91893853320467274178
#define SQRT2 1.41421356237309504880

/* ---- numerics in log space ---------------------------------------------- */

/* log(e^x + e^y), exact when either is -inf. */
static double log_add(double x, double y)
{
	double a = x < y ? x : y, b = x < y ? y : x;
	if (a == -INFINITY || b == INFINITY)
		return b;
	return log1p(exp(a - b)) + b;
}

/*
 * log Phi(z), Phi the standard normal CDF, accurate everywhere: log1p of the
 * upper tail for z > 0, erfc for moderate negative z (erfc keeps full relative
 * accuracy until it underflows near z = -38), and the asymptotic series
 *   Phi(z) = phi(z)/|z| * (1 - 1/z^2 + 3/z^4 - 15/z^6 + ...)
 * below z = -20, where its terms fall below 1e-17 long before they diverge
 * (the ratio of successive terms is (2k-1)/z^2 < 0.1 for k < 20).
 */
double vpa_log_ndtr(double z)
{
	if (isnan(z))
		return NAN;
	if (z > 0)
		return log1p(-0.5 * erfc(z / SQRT2));
	if (z > -20)
		return log(0.5 * erfc(-z / SQRT2));
	if (z == -INFINITY)
		return -INFINITY;
	double z2 = z * z, term = 1, sum = 1;
	for (int k = 1; k < 40; k++) {
		term *= -(2.0 * k - 1) / z2;
		sum += term;
		if (fabs(term) < 1e-17)
			break;
	}
	return -0.5 * z2 - log(-z) - LN_SQRT_2PI + log(sum);
}

/* log erfc(x) = log 2 + log Phi(-x sqrt 2), as dp_accounting's _log_erfc. */
static double log_erfc(double x)
{
	return LN2 + vpa_log_ndtr(-x * SQRT2);
}

/* log of the binomial coefficient via log|Gamma| (real n, as scipy's gammaln). */
static double log_comb(double n, double k)
{
	return vpa_lgamma(n + 1) - vpa_lgamma(k + 1) - vpa_lgamma(n - k + 1);
}

/* ---- the order grid ----------------------------------------------------- */

size_t vpa_rdp_orders(double *orders)
{
	size_t n = 0;
	/* 1 + i/10 rather than repeated += 0.1: no drift, and the values are the
	 * doubles Python's 1 + x / 10. gives. */
	for (int i = 1; i < 100; i++)
		orders[n++] = 1 + i / 10.0;
	for (int a = 11; a < 64; a++)
		orders[n++] = a;
	orders[n++] = 128;
	orders[n++] = 256;
	orders[n++] = 512;
	orders[n++] = 1024;
	return n; /* VPA_RDP_N_ORDERS */
}

/* ---- RDP of the sampled Gaussian mechanism ------------------------------ */

/* log A_alpha for integer alpha, 0 < q < 1: the binomial expansion of
 * E_{mu0}[(mu/mu0)^alpha] (Mironov et al. 2019, Sec. 3.2). */
static double log_a_int(double q, double sigma, long alpha)
{
	double log_a = -INFINITY, logq = log(q), log1mq = log1p(-q);
	double s2 = 2 * sigma * sigma;
	for (long i = 0; i <= alpha; i++) {
		double di = (double)i;
		double c = log_comb((double)alpha, di) + di * logq + (double)(alpha - i) * log1mq;
		log_a = log_add(log_a, c + (di * di - di) / s2);
	}
	return log_a;
}

/* log(e^x - e^y) for x >= y; -inf when they are equal (dp_accounting's
 * _log_sub); NAN when x < y (a negative result has no log). */
static double log_sub(double x, double y)
{
	if (y == -INFINITY)
		return x;
	if (x < y)
		return NAN;
	if (x == y)
		return -INFINITY;
	return log(expm1(x - y)) + y;
}

/*
 * log A_alpha for fractional alpha, 0 < q < 1 (Mironov et al. 2019, Sec. 3.3):
 * the integral is split at z0 where the two mixture components cross and
 * each half is a series in i with the binomial coefficients C(alpha, i).
 *
 * VPA_RDP_SIGNED (the default) keeps their signs: C(alpha, i) < 0 for
 * i > alpha + 1 with i - 1 - floor(alpha) odd, and those terms are subtracted
 * (TF Privacy, Opacus and dp_accounting before its _log_comb rewrite:
 * special.binom and _log_sub).  That is the exact value of the integral.
 * VPA_RDP_UNSIGNED adds |C(alpha, i)| for every term (today's dp_accounting:
 * _log_comb and _log_add), an upper bound on A_alpha.  Positive and negative
 * terms are gathered apart and subtracted once at the end, so no partial sum
 * can go negative.  Terminates when both terms decrease and are 30 nats below
 * the total; after 1000 terms the order is given up (+inf), which removes it
 * from the minimisation, exactly as dp_accounting does.
 */
#define MAX_STEPS_LOG_A_FRAC 1000
static double log_a_frac(double q, double sigma, double alpha, enum vpa_rdp_series series)
{
	double pos0 = -INFINITY, pos1 = -INFINITY, neg0 = -INFINITY, neg1 = -INFINITY;
	double z0 = sigma * sigma * log(1 / q - 1) + 0.5;
	double logq = log(q), log1mq = log1p(-q), s2 = 2 * sigma * sigma;
	double last_s0 = -INFINITY, last_s1 = -INFINITY, fl = floor(alpha);
	for (int i = 0; i < MAX_STEPS_LOG_A_FRAC; i++) {
		double di = i, j = alpha - di;
		double coef = log_comb(alpha, di);
		/* sign of C(alpha, i): one negative factor (alpha - k) per k in
		 * (alpha, i - 1] */
		int negative = series == VPA_RDP_SIGNED && di - 1 - fl > 0 &&
			       fmod(di - 1 - fl, 2) == 1;
		double t0 = coef + di * logq + j * log1mq;
		double t1 = coef + j * logq + di * log1mq;
		double e0 = log(0.5) + log_erfc((di - z0) / (SQRT2 * sigma));
		double e1 = log(0.5) + log_erfc((z0 - j) / (SQRT2 * sigma));
		double s0 = t0 + (di * di - di) / s2 + e0;
		double s1 = t1 + (j * j - j) / s2 + e1;
		if (negative) {
			neg0 = log_add(neg0, s0);
			neg1 = log_add(neg1, s1);
		} else {
			pos0 = log_add(pos0, s0);
			pos1 = log_add(pos1, s1);
		}
		double total = log_sub(log_add(pos0, pos1), log_add(neg0, neg1));
		if (s0 < last_s0 && s1 < last_s1 && fmax(s0, s1) < total - 30)
			return total;
		last_s0 = s0;
		last_s1 = s1;
	}
	return INFINITY;
}

double vpa_rdp_sampled_gaussian_series(double q, double sigma, double alpha,
				       enum vpa_rdp_series series)
{
	if (isnan(q) || isnan(sigma) || isnan(alpha) || q < 0 || q > 1 || sigma < 0 || alpha <= 1)
		return NAN;
	if (q == 0)
		return 0;
	/* sigma^2 underflows below 1e-154 (dp_accounting divides by zero
	 * there): such a mechanism adds no noise to speak of, +inf is the
	 * honest bound */
	if (isinf(alpha) || sigma < 1e-150)
		return INFINITY;
	if (q == 1)
		return alpha / (2 * sigma * sigma);
	double la;
	if (alpha == floor(alpha) && alpha < 1e15)
		la = log_a_int(q, sigma, (long)alpha);
	else
		la = log_a_frac(q, sigma, alpha, series);
	return la / (alpha - 1);
}

double vpa_rdp_sampled_gaussian(double q, double sigma, double alpha)
{
	return vpa_rdp_sampled_gaussian_series(q, sigma, alpha, VPA_RDP_SIGNED);
}

/* ---- RDP -> (epsilon, delta) -------------------------------------------- */

int vpa_rdp_to_epsilon(const double *orders, const double *rdp, size_t n, double delta,
		       double *eps, double *order, struct vpa_err *err)
{
	if (!(delta > 0 && delta < 1))
		return vpa_fail(err, VPA_EINPUT, NULL, "delta must be in (0, 1), got %g", delta);
	if (n == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "no RDP orders");
	double best = INFINITY, best_a = orders[0];
	for (size_t i = 0; i < n; i++) {
		double a = orders[i], r = rdp[i], e;
		if (!(a >= 1))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"Renyi divergence order must be at least 1, got %g", a);
		if (isnan(r))
			return vpa_fail(err, VPA_ENUMERIC, NULL, "RDP at order %g is not a number", a);
		if (r < 0)
			e = 0; /* numerical noise from extreme events (dp_accounting warns) */
		else if (delta * delta + expm1(-r) > 0)
			e = 0; /* KL bound: delta <= sqrt(1 - exp(-KL)) already holds */
		else if (a > 1.01)
			/* r + log1p(-1/a) - (log(delta) + log(a)) / (a - 1); inf stays inf */
			e = r + log1p(-1 / a) - log(delta * a) / (a - 1);
		else
			e = INFINITY; /* the bound is unstable as a -> 1 */
		/* strict <: the first minimum wins, as numpy's argmin */
		if (i == 0 || e < best) {
			best = e;
			best_a = a;
		}
	}
	*eps = best < 0 ? 0 : best;
	if (order)
		*order = best_a;
	return 0;
}

int vpa_rdp_to_delta(const double *orders, const double *rdp, size_t n, double eps,
		     double *delta, double *order, struct vpa_err *err)
{
	if (!(eps >= 0) || isinf(eps))
		return vpa_fail(err, VPA_EINPUT, NULL, "epsilon must be a finite number >= 0, got %g",
				eps);
	if (n == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "no RDP orders");
	double best = INFINITY, best_a = orders[0];
	for (size_t i = 0; i < n; i++) {
		double a = orders[i], r = rdp[i];
		if (!(a >= 1))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"Renyi divergence order must be at least 1, got %g", a);
		if (isnan(r))
			return vpa_fail(err, VPA_ENUMERIC, NULL, "RDP at order %g is not a number", a);
		if (r < 0)
			r = 0; /* numerical noise from extreme events, as in the epsilon conversion */
		/* KL bound: delta <= sqrt(1 - exp(-KL)) with KL <= D_a for every a >= 1 */
		double ld = r == 0 ? -INFINITY : 0.5 * log(-expm1(-r));
		if (a > 1.01) {
			/* the inverse of the epsilon conversion at this order (Canonne, Kamath,
			 * Steinke 2020, Prop. 12): log delta = (a-1)(r - eps + log1p(-1/a)) - log a */
			double lb = (a - 1) * (r - eps + log1p(-1 / a)) - log(a);
			if (lb < ld)
				ld = lb;
		}
		if (i == 0 || ld < best) { /* the first minimum wins, as numpy's argmin */
			best = ld;
			best_a = a;
		}
	}
	*delta = best >= 0 ? 1 : exp(best);
	if (order)
		*order = best_a;
	return 0;
}

int vpa_dp_delta_series(double q, double sigma, double steps, double eps,
			enum vpa_rdp_series series, double *delta, double *order, struct vpa_err *err)
{
	if (!(q >= 0 && q <= 1))
		return vpa_fail(err, VPA_EINPUT, NULL, "sampling rate q must be in [0, 1], got %g", q);
	if (!(sigma >= 0) || isinf(sigma))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"noise multiplier must be a finite number >= 0, got %g", sigma);
	if (!(steps >= 0) || isinf(steps))
		return vpa_fail(err, VPA_EINPUT, NULL, "steps must be a finite number >= 0, got %g",
				steps);
	double orders[VPA_RDP_N_ORDERS], rdp[VPA_RDP_N_ORDERS];
	size_t n = vpa_rdp_orders(orders);
	for (size_t i = 0; i < n; i++) {
		double r = vpa_rdp_sampled_gaussian_series(q, sigma, orders[i], series);
		rdp[i] = steps == 0 ? 0 : r * steps;
	}
	return vpa_rdp_to_delta(orders, rdp, n, eps, delta, order, err);
}

int vpa_dp_epsilon(double q, double sigma, double steps, double delta, double *eps,
		   double *order, struct vpa_err *err)
{
	return vpa_dp_epsilon_series(q, sigma, steps, delta, VPA_RDP_SIGNED, eps, order, err);
}

int vpa_dp_epsilon_series(double q, double sigma, double steps, double delta,
			  enum vpa_rdp_series series, double *eps, double *order,
			  struct vpa_err *err)
{
	if (!(q >= 0 && q <= 1))
		return vpa_fail(err, VPA_EINPUT, NULL, "sampling rate q must be in [0, 1], got %g", q);
	if (!(sigma >= 0) || isinf(sigma))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"noise multiplier must be a finite number >= 0, got %g", sigma);
	if (!(steps >= 0) || isinf(steps))
		return vpa_fail(err, VPA_EINPUT, NULL, "steps must be a finite number >= 0, got %g",
				steps);
	double orders[VPA_RDP_N_ORDERS], rdp[VPA_RDP_N_ORDERS];
	size_t n = vpa_rdp_orders(orders);
	for (size_t i = 0; i < n; i++) {
		double r = vpa_rdp_sampled_gaussian_series(q, sigma, orders[i], series);
		/* 0 * inf: zero steps of an infinitely leaky step leak nothing */
		rdp[i] = steps == 0 ? 0 : r * steps;
	}
	return vpa_rdp_to_epsilon(orders, rdp, n, delta, eps, order, err);
}

int vpa_dp_sigma(double q, double eps, double steps, double delta, double *sigma,
		 struct vpa_err *err)
{
	return vpa_dp_sigma_series(q, eps, steps, delta, VPA_RDP_SIGNED, sigma, err);
}

int vpa_dp_sigma_series(double q, double eps, double steps, double delta,
			enum vpa_rdp_series series, double *sigma, struct vpa_err *err)
{
	int rc;
	double e, lo, hi;
	if (!(eps > 0) || isinf(eps))
		return vpa_fail(err, VPA_EINPUT, NULL, "target epsilon must be a finite number > 0, got %g",
				eps);
	/* validates q, steps and delta too */
	if ((rc = vpa_dp_epsilon_series(q, 1.0, steps, delta, series, &e, NULL, err)))
		return rc;
	if (q == 0 || steps == 0) {
		*sigma = 0; /* nothing is released: no noise is needed */
		return 0;
	}
	/* eps(sigma) is non-increasing: bracket by doubling, then bisect. */
	lo = 0;
	hi = 1;
	while (e > eps) {
		lo = hi;
		hi *= 2;
		if (hi > 1e12)
			return vpa_fail(err, VPA_ENUMERIC, NULL,
					"no noise multiplier up to 1e12 reaches epsilon %g", eps);
		if ((rc = vpa_dp_epsilon_series(q, hi, steps, delta, series, &e, NULL, err)))
			return rc;
	}
	if (lo == 0) {
		/* target already met at sigma = 1: search down for the boundary */
		lo = 0.5;
		for (;;) {
			if ((rc = vpa_dp_epsilon_series(q, lo, steps, delta, series, &e, NULL, err)))
				return rc;
			if (e > eps)
				break;
			hi = lo;
			lo /= 2;
			if (lo < 1e-12) {
				*sigma = hi;
				return 0;
			}
		}
	}
	/* invariant: eps(lo) > target >= eps(hi) */
	while (hi - lo > 1e-12 * hi) {
		double mid = lo + (hi - lo) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if ((rc = vpa_dp_epsilon_series(q, mid, steps, delta, series, &e, NULL, err)))
			return rc;
		if (e > eps)
			lo = mid;
		else
			hi = mid;
	}
	*sigma = hi;
	return 0;
}

/* ---- Gaussian mechanism, one release ------------------------------------ */

double vpa_gauss_classic_sigma(double eps, double delta, double sens)
{
	if (!(eps > 0) || !(delta > 0 && delta < 1) || !(sens >= 0))
		return NAN;
	return sens * sqrt(2 * log(1.25 / delta)) / eps;
}

/* Phi(a) - e^eps Phi(b) for b < a, evaluated as
 * Phi(a) (1 - exp(eps + log Phi(b) - log Phi(a))): no overflow of e^eps and
 * full relative accuracy of the difference whatever the magnitudes. */
static double phi_diff(double a, double eps, double b)
{
	double la = vpa_log_ndtr(a), r = eps + vpa_log_ndtr(b) - la;
	return -expm1(r) * exp(la); /* negative when r > 0 */
}

/* Balle & Wang 2018, Theorem 8: the delta of a sigma-noised release at eps. */
static double agm_delta(double sigma, double eps, double sens)
{
	double u = sens / (2 * sigma), v = eps * sigma / sens;
	return phi_diff(u - v, eps, -u - v);
}

/* B+(s) and B-(s) of Algorithm 1 (s >= 0). */
static double agm_case_a(double eps, double s)
{
	return phi_diff(sqrt(eps * s), eps, -sqrt(eps * (s + 2)));
}
static double agm_case_b(double eps, double s)
{
	return phi_diff(-sqrt(eps * s), eps, -sqrt(eps * (s + 2)));
}

int vpa_gauss_analytic_sigma(double eps, double delta, double sens, double *sigma,
			     struct vpa_err *err)
{
	if (!(eps > 0) || isinf(eps))
		return vpa_fail(err, VPA_EINPUT, NULL, "epsilon must be a finite number > 0, got %g", eps);
	if (!(delta > 0 && delta < 1))
		return vpa_fail(err, VPA_EINPUT, NULL, "delta must be in (0, 1), got %g", delta);
	if (!(sens > 0) || isinf(sens))
		return vpa_fail(err, VPA_EINPUT, NULL, "sensitivity must be a finite number > 0, got %g",
				sens);
	/*
	 * Algorithm 1: delta_0 = B(0) = Phi(0) - e^eps Phi(-sqrt(2 eps)) is the
	 * delta of alpha = 1.  Above it (case A) alpha = sqrt(1 + s/2) - sqrt(s/2)
	 * with s the largest value where B+(s) <= delta (B+ increasing); below it
	 * (case B) alpha = sqrt(1 + s/2) + sqrt(s/2) with s the smallest where
	 * B-(s) <= delta (B- decreasing).  sigma = alpha sens / sqrt(2 eps).
	 * The published code stops on |B(s) - delta| <= 1e-12 (absolute), which is
	 * coarse for small delta; we bisect s down to the last representable
	 * bracket instead.
	 */
	double d0 = agm_case_a(eps, 0), alpha;
	if (delta == d0) {
		alpha = 1;
	} else {
		int case_a = delta > d0;
		double lo = 0, hi = 1;
		/* doubling: find hi with B+(hi) >= delta (A) or B-(hi) <= delta (B) */
		for (;;) {
			double b = case_a ? agm_case_a(eps, hi) : agm_case_b(eps, hi);
			if (case_a ? b >= delta : b <= delta)
				break;
			lo = hi;
			hi *= 2;
			if (hi > 1e300)
				return vpa_fail(err, VPA_ENUMERIC, NULL,
						"analytic Gaussian calibration did not bracket");
		}
		for (int it = 0; it < 2000; it++) {
			double mid = lo + (hi - lo) / 2;
			if (mid <= lo || mid >= hi)
				break;
			double b = case_a ? agm_case_a(eps, mid) : agm_case_b(eps, mid);
			/* case A: B+ increasing, keep B+(lo) < delta <= B+(hi)
			 * case B: B- decreasing, keep B-(lo) > delta >= B-(hi) */
			if (case_a ? b < delta : b > delta)
				lo = mid;
			else
				hi = mid;
		}
		/* case A: alpha decreasing in s, the largest s with B+ <= delta -> lo
		 * case B: the smallest s with B- <= delta -> hi */
		double s = case_a ? lo : hi;
		alpha = case_a ? sqrt(1 + s / 2) - sqrt(s / 2) : sqrt(1 + s / 2) + sqrt(s / 2);
	}
	*sigma = alpha * sens / sqrt(2 * eps);
	return 0;
}

int vpa_gauss_analytic_epsilon(double sigma, double delta, double sens, double *eps,
			       struct vpa_err *err)
{
	if (!(sigma > 0) || isinf(sigma))
		return vpa_fail(err, VPA_EINPUT, NULL, "sigma must be a finite number > 0, got %g", sigma);
	if (!(delta > 0 && delta < 1))
		return vpa_fail(err, VPA_EINPUT, NULL, "delta must be in (0, 1), got %g", delta);
	if (!(sens > 0) || isinf(sens))
		return vpa_fail(err, VPA_EINPUT, NULL, "sensitivity must be a finite number > 0, got %g",
				sens);
	/* delta(eps) of Theorem 8 is decreasing in eps: the smallest eps with
	 * delta(eps) <= delta. */
	if (agm_delta(sigma, 0, sens) <= delta) {
		*eps = 0;
		return 0;
	}
	double lo = 0, hi = 1;
	while (agm_delta(sigma, hi, sens) > delta) {
		lo = hi;
		hi *= 2;
		if (hi > 1e300)
			return vpa_fail(err, VPA_ENUMERIC, NULL, "analytic Gaussian epsilon did not bracket");
	}
	for (int it = 0; it < 2000; it++) {
		double mid = lo + (hi - lo) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if (agm_delta(sigma, mid, sens) > delta)
			lo = mid;
		else
			hi = mid;
	}
	*eps = hi;
	return 0;
}

/* ---- SNR ----------------------------------------------------------------- */

/* ||x||_2 without overflow or underflow (scaled sum of squares, as LAPACK's
 * dnrm2). */
static double norm2(const double *x, size_t n)
{
	double scale = 0, ssq = 1;
	for (size_t i = 0; i < n; i++) {
		double a = fabs(x[i]);
		if (a == 0)
			continue;
		if (scale < a) {
			ssq = 1 + ssq * (scale / a) * (scale / a);
			scale = a;
		} else {
			ssq += (a / scale) * (a / scale);
		}
	}
	return scale * sqrt(ssq);
}

double vpa_snr(const double *update, const double *noise, size_t n)
{
	double u = norm2(update, n), z = norm2(noise, n);
	if (z == 0)
		return INFINITY; /* the header's contract, even for a zero update */
	return u / z;
}
