/*
 * targets/privunit.c - PrivUnit2 and the scalar norm mechanism of Bhowmick
 * et al. 2018, "Protection against reconstruction and its applications in
 * private federated learning" (Algorithm 1 and ScalarDP), with the paper's
 * epsilon accounting (Theorem 1, eq. 16a/16b).  See targets/fl_speaker.h for
 * the formulas and targets/README.md for how the FL target uses them.
 */
#include "targets/fl_speaker.h"
#include "metrics/metrics.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ln B(a, b) (the incomplete beta itself is metrics/dp_audit.c's vpa_log_ibeta) */
static double lbeta(double a, double b)
{
	return vpa_lgamma(a) + vpa_lgamma(b) - vpa_lgamma(a + b);
}

/* ---- PrivUnit2 ----------------------------------------------------------------- */

double vpa_privunit_cap_epsilon(double gamma, size_t d)
{
	if (!(gamma >= 0) || gamma >= 1 || d < 3)
		return INFINITY;
	double best = INFINITY;
	double g = gamma * sqrt(2.0 * (double)(d - 1) / M_PI); /* eq. (16a) */
	if (g < 1)
		best = log1p(g) - log1p(-g);
	if (gamma >= sqrt(2.0 / (double)d)) { /* eq. (16b) */
		double e = 0.5 * log((double)d) + log(6.0) -
			   0.5 * (double)(d - 1) * log1p(-gamma * gamma) + log(gamma);
		if (e < best)
			best = e;
	}
	return best;
}

double vpa_privunit_log_cap_mass(double gamma, size_t d)
{
	double al = 0.5 * (double)(d - 1);
	return vpa_log_ibeta(al, al, 0.5 * (1 - gamma));
}

int vpa_privunit_init_gamma(struct vpa_privunit *pu, size_t d, double eps, double gamma,
			    struct vpa_err *err)
{
	memset(pu, 0, sizeof(*pu));
	if (d < 3)
		return vpa_fail(err, VPA_EINPUT, NULL, "PrivUnit needs a dimension >= 3, got %zu", d);
	if (!(eps > 0) || !isfinite(eps))
		return vpa_fail(err, VPA_EINPUT, NULL, "PrivUnit needs epsilon > 0, got %g", eps);
	if (!(gamma >= 0) || gamma >= 1)
		return vpa_fail(err, VPA_EINPUT, NULL, "PrivUnit cap offset must be in [0, 1), got %g",
				gamma);
	double ec = vpa_privunit_cap_epsilon(gamma, d);
	if (!(ec < eps))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"PrivUnit cap offset %g needs epsilon > %g for the cap alone (d = %zu), "
				"got %g", gamma, ec, d, eps);
	double al = 0.5 * (double)(d - 1);
	pu->d = d;
	pu->eps = eps;
	pu->gamma = gamma;
	pu->eps_cap = ec;
	pu->eps0 = eps - ec;
	pu->p = 1 / (1 + exp(-pu->eps0));
	pu->log_q = vpa_privunit_log_cap_mass(gamma, d);
	pu->log_q1 = log1p(-exp(pu->log_q));
	pu->eps_cap_exact = pu->log_q1 - pu->log_q;
	double log_k = al * log1p(-gamma * gamma) - log((double)(d - 1)) -
		       (double)(d - 2) * M_LN2 - lbeta(al, al);
	/* m = K/q (p - (1-p) q/(1-q)) */
	double inner = pu->p - (1 - pu->p) * exp(pu->log_q - pu->log_q1);
	pu->m = exp(log_k - pu->log_q + log(inner));
	pu->scale = 1 / pu->m;
	return 0;
}

static double objective(size_t d, double eps, double gamma)
{
	struct vpa_privunit pu;
	if (vpa_privunit_init_gamma(&pu, d, eps, gamma, NULL))
		return -INFINITY;
	return log(pu.m);
}

/* Best gamma in [lo, hi): a grid, then golden-section search around its best. */
static double search(size_t d, double eps, double lo, double hi, double *best_f)
{
	const int n = 256;
	int bi = -1;
	double bf = -INFINITY;
	for (int i = 0; i < n; i++) {
		double g = lo + (hi - lo) * i / n;
		double f = objective(d, eps, g);
		if (f > bf) {
			bf = f;
			bi = i;
		}
	}
	if (bi < 0) {
		*best_f = -INFINITY;
		return lo;
	}
	double a = lo + (hi - lo) * (bi > 0 ? bi - 1 : 0) / n;
	double b = lo + (hi - lo) * (bi + 1) / n;
	const double r = 0.5 * (sqrt(5.0) - 1);
	double c = b - r * (b - a), e = a + r * (b - a);
	double fc = objective(d, eps, c), fe = objective(d, eps, e);
	for (int it = 0; it < 80; it++) {
		if (fc >= fe) {
			b = e;
			e = c;
			fe = fc;
			c = b - r * (b - a);
			fc = objective(d, eps, c);
		} else {
			a = c;
			c = e;
			fc = fe;
			e = a + r * (b - a);
			fe = objective(d, eps, e);
		}
	}
	double g = fc >= fe ? c : e, f = fc >= fe ? fc : fe;
	double g0 = lo + (hi - lo) * bi / n;
	if (bf > f) {
		g = g0;
		f = bf;
	}
	*best_f = f;
	return g;
}

int vpa_privunit_init(struct vpa_privunit *pu, size_t d, double eps, struct vpa_err *err)
{
	if (d < 3)
		return vpa_fail(err, VPA_EINPUT, NULL, "PrivUnit needs a dimension >= 3, got %zu", d);
	if (!(eps > 0) || !isfinite(eps))
		return vpa_fail(err, VPA_EINPUT, NULL, "PrivUnit needs epsilon > 0, got %g", eps);
	/* the two regimes of Theorem 1: below and above sqrt(2/d) */
	double mid = sqrt(2.0 / (double)d);
	double f1, f2;
	double g1 = search(d, eps, 0, mid, &f1);
	double g2 = search(d, eps, mid, 1, &f2);
	double g = f2 > f1 ? g2 : g1;
	return vpa_privunit_init_gamma(pu, d, eps, g, err);
}

/* y in (0, 1/2] with log I_y(al, al) = lt (lt <= log 1/2), by bisection. */
static double inv_lower(double al, double lt, double hi)
{
	double lo = 0;
	for (int it = 0; it < 200; it++) {
		double mid = 0.5 * (lo + hi);
		if (mid <= lo || mid >= hi)
			break;
		if (vpa_log_ibeta(al, al, mid) < lt)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

void vpa_privunit_apply(const struct vpa_privunit *pu, const double *u, double *out,
			struct vpa_rng *rng)
{
	size_t d = pu->d;
	double al = 0.5 * (double)(d - 1);
	double t;
	double uu;
	do
		uu = vpa_rng_uniform(rng);
	while (uu <= 0);
	if (vpa_rng_uniform(rng) < pu->p) {
		/* the cap: Y = (1 - t)/2 given Y <= (1 - gamma)/2 */
		double y = inv_lower(al, log(uu) + pu->log_q, 0.5 * (1 - pu->gamma));
		t = 1 - 2 * y;
	} else {
		/* the complement: X = (1 + t)/2 given X < (1 + gamma)/2; CDF value v */
		double v = uu * exp(pu->log_q1);
		if (v <= 0.5) {
			t = 2 * inv_lower(al, log(v), 0.5) - 1;
		} else {
			double y = inv_lower(al, log1p(-v), 0.5);
			t = 1 - 2 * y;
		}
		if (t > pu->gamma)
			t = pu->gamma;
	}
	/* a uniform unit direction orthogonal to u */
	double dot = 0, nn = 0;
	for (size_t i = 0; i < d; i++) {
		out[i] = vpa_rng_normal(rng);
		dot += out[i] * u[i];
	}
	for (size_t i = 0; i < d; i++) {
		out[i] -= dot * u[i];
		nn += out[i] * out[i];
	}
	double s = sqrt(1 - t * t) / sqrt(nn);
	for (size_t i = 0; i < d; i++)
		out[i] = pu->scale * (t * u[i] + s * out[i]);
}

/* ---- the scalar mechanism ---------------------------------------------------------- */

/* Var(J_hat | J = j) for k-ary randomised response over {0..k}. */
static double rr_var(double ee, unsigned k, double j)
{
	double e = ee + k, s1 = 0.5 * k * (k + 1.0), s2 = k * (k + 1.0) * (2.0 * k + 1) / 6;
	double m1 = ((ee - 1) * j + s1) / e, m2 = ((ee - 1) * j * j + s2) / e;
	return m2 - m1 * m1;
}

/* Variance of J_hat for x = k r / rmax = j + f (rounding then response). */
static double jhat_var(double ee, unsigned k, double j, double f)
{
	double c = (ee - 1) / (ee + k);
	double v = (1 - f) * rr_var(ee, k, j) + (f > 0 ? f * rr_var(ee, k, j + 1) : 0);
	return v + c * c * f * (1 - f);
}

static double var_max_of(double ee, unsigned k, double rmax)
{
	double c = (ee - 1) / (ee + k), best = 0;
	for (unsigned j = 0; j < k; j++) {
		double v0 = rr_var(ee, k, j), v1 = rr_var(ee, k, j + 1.0);
		double f = 0.5 + (v1 - v0) / (2 * c * c);
		if (f < 0)
			f = 0;
		if (f > 1)
			f = 1;
		double cand[3] = {jhat_var(ee, k, j, 0), jhat_var(ee, k, j, f), rr_var(ee, k, j + 1.0)};
		for (int i = 0; i < 3; i++)
			if (cand[i] > best)
				best = cand[i];
	}
	double a = (ee + k) / (ee - 1), w = rmax / k;
	return w * w * a * a * best;
}

int vpa_scalar_dp_init(struct vpa_scalar_dp *s, double eps, double rmax, unsigned k,
		       struct vpa_err *err)
{
	memset(s, 0, sizeof(*s));
	if (!(eps > 0) || !isfinite(eps))
		return vpa_fail(err, VPA_EINPUT, NULL, "scalar mechanism needs epsilon > 0, got %g",
				eps);
	if (!(rmax > 0) || !isfinite(rmax))
		return vpa_fail(err, VPA_EINPUT, NULL, "scalar mechanism needs a norm bound > 0, got %g",
				rmax);
	double ee = exp(eps);
	if (!isfinite(ee) || ee > 1e15)
		ee = 1e15; /* beyond this the response is exact to double precision */
	if (k == 0) {
		double best = INFINITY;
		for (unsigned kk = 1; kk <= 4096; kk++) {
			double v = var_max_of(ee, kk, rmax);
			if (v < best) {
				best = v;
				k = kk;
			}
		}
	}
	s->eps = eps;
	s->rmax = rmax;
	s->k = k;
	s->a = (ee + k) / (ee - 1);
	s->b = 0.5 * k * (k + 1.0) / (ee + k);
	s->var_max = var_max_of(ee, k, rmax);
	return 0;
}

double vpa_scalar_dp_apply(const struct vpa_scalar_dp *s, double r, struct vpa_rng *rng)
{
	if (!(r > 0))
		r = 0;
	if (r > s->rmax)
		r = s->rmax;
	double x = s->k * r / s->rmax;
	double jf = floor(x);
	unsigned j = (unsigned)jf;
	if (j < s->k && vpa_rng_uniform(rng) < x - jf)
		j++;
	/* a = (e^eps + k)/(e^eps - 1), so e^eps = (a + k)/(a - 1) */
	double ee = (s->a + s->k) / (s->a - 1);
	double keep = ee / (ee + s->k);
	unsigned out = j;
	if (vpa_rng_uniform(rng) >= keep) {
		unsigned o = (unsigned)vpa_rng_below(rng, s->k);
		out = o >= j ? o + 1 : o;
	}
	return (s->rmax / s->k) * s->a * ((double)out - s->b);
}

double vpa_scalar_dp_variance(const struct vpa_scalar_dp *s, double r)
{
	if (!(r > 0))
		r = 0;
	if (r > s->rmax)
		r = s->rmax;
	double ee = (s->a + s->k) / (s->a - 1);
	double x = s->k * r / s->rmax, j = floor(x);
	if (j >= s->k)
		j = s->k, x = j;
	double w = s->rmax / s->k;
	return w * w * s->a * s->a * jhat_var(ee, s->k, j, x - j);
}
