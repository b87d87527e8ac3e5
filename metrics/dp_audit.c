/*
 * metrics/dp_audit.c - empirical lower bounds on epsilon (issue 28, item 1).
 *
 * A distinguisher between neighbouring datasets with false-positive rate FPR
 * and false-negative rate FNR proves that a mechanism is not (eps, delta)-DP
 * for eps below max(ln((1-delta-FNR)/FPR), ln((1-delta-FPR)/FNR)).  The rates
 * are estimated from counts, so they are replaced by Clopper-Pearson upper
 * bounds (Jagielski, Ullman, Oprea 2020; TF Privacy epsilon_lower_bound.py;
 * jax_privacy auditing.py).  Also: the Gaussian-DP variant (Nasr et al. 2023,
 * valid only if the trade-off curve is Gaussian), the sweep over thresholds of
 * a score list (Bonferroni), and the one-run audit of Steinke, Nasr, Jagielski
 * 2023 (Theorem 3.1 / their Algorithm's p-value with the delta term).
 *
 * The special functions (regularized incomplete beta, its inverse, the normal
 * quantile) are our own: metrics/ depends on libm only.  Accuracy is pinned
 * against scipy/Boost in tests/golden/dp_audit/.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

/* ---- log-gamma pieces ----------------------------------------------------- */

/*
 * Stirling's correction delta(x) = lgamma(x) - [(x-1/2) ln x - x + ln(2 pi)/2]
 * for x >= 10: eight terms of the Bernoulli series; the ninth is below 1e-18.
 */
static double stirling_corr(double x)
{
	double r = 1 / x, r2 = r * r;
	return r * (1.0 / 12 + r2 * (-1.0 / 360 + r2 * (1.0 / 1260 + r2 * (-1.0 / 1680 +
		    r2 * (1.0 / 1188 + r2 * (-691.0 / 360360 + r2 * (1.0 / 156 +
		    r2 * (-3617.0 / 122400))))))));
}

/* log1p(t) - t without cancellation for small |t| (atanh series in t/(2+t)). */
static double log1pmx(double t)
{
	if (t <= -1)
		return t == -1 ? -INFINITY : NAN;
	if (fabs(t) > 0.1)
		return log1p(t) - t;
	double y = t / (2 + t), y2 = y * y, term = y * y2, s = 0;
	for (int k = 3; k < 60; k += 2) {
		double add = term / k;
		s += add;
		if (fabs(add) <= 1e-18 * fabs(s))
			break;
		term *= y2;
	}
	return -t * t / (2 + t) + 2 * s;
}

/*
 * ln[x^a y^b / B(a, b)] with y = 1 - x given by the caller (either may be the
 * accurate one).  The large-parameter branches follow the idea of TOMS 708's
 * brcomp: no difference of two huge lgamma values is ever formed, so the
 * result keeps ~1e-14 absolute accuracy for a, b up to 1e15.
 */
static double log_power_terms(double a, double b, double x, double y)
{
	if (x <= 0 || y <= 0)
		return -INFINITY;
	double lx = y < 0.5 ? log1p(-y) : log(x), ly = x < 0.5 ? log1p(-x) : log(y);
	double lo = a < b ? a : b, hi = a < b ? b : a;
	if (lo >= 10) {
		/* d = (a+b)x - a, computed from the smaller of x, y */
		double d = x <= 0.5 ? (a + b) * x - a : b - (a + b) * y;
		return 0.5 * log(a / (a + b) * b / (2 * M_PI)) + a * log1pmx(d / a) +
		       b * log1pmx(-d / b) + stirling_corr(a + b) - stirling_corr(a) -
		       stirling_corr(b);
	}
	double lbeta;
	if (hi >= 10) {
		/* lgamma(hi) - lgamma(lo + hi) by Stirling with its correction */
		double diff = -(hi - 0.5) * log1p(lo / hi) - lo * log(lo + hi) + lo +
			      stirling_corr(hi) - stirling_corr(lo + hi);
		lbeta = lgamma(lo) + diff;
	} else {
		lbeta = lgamma(a) + lgamma(b) - lgamma(a + b);
	}
	return a * lx + b * ly - lbeta;
}

/* Continued fraction of I_x(a, b) (modified Lentz; Numerical Recipes' betacf). */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	double h = d;
	/* converges in O(sqrt(max(a, b))) steps where it is used (x below the mean) */
	for (int m = 1; m <= 1000000; m++) {
		double m2 = 2.0 * m, aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-16)
			break;
	}
	return h;
}

/* I_x(a, b) and 1 - I_x(a, b), each accurate in relative terms when small. */
static void ibeta2(double a, double b, double x, double y, double *p, double *q)
{
	if (x <= 0) {
		*p = 0;
		*q = 1;
		return;
	}
	if (y <= 0) {
		*p = 1;
		*q = 0;
		return;
	}
	/*
	 * Integer parameters with a short side: I_x(a, b) = P[Bin(a+b-1, x) >= a]
	 * is a sum of b terms, 1 - I a sum of a terms.  The continued fraction
	 * loses ~1e-11 relative where one parameter is huge and the other small
	 * (its convergents nearly cancel), so the short sum is used when the
	 * side it gives is the small one (the other follows by subtraction).
	 */
	if (a == floor(a) && b == floor(b) && (a <= 64 || b <= 64)) {
		double n = a + b - 1, lxy = log(x) + log(y) + log(n + 1), s = 0;
		if (b <= 64) {
			for (double j = a; j <= n; j++)
				s += exp(log_power_terms(j + 1, n - j + 1, x, y) - lxy);
			if (s <= 0.5) {
				*p = s;
				*q = 1 - s;
				return;
			}
		}
		if (a <= 64) {
			s = 0;
			for (double j = 0; j < a; j++)
				s += exp(log_power_terms(j + 1, n - j + 1, x, y) - lxy);
			if (s <= 0.5) {
				*q = s;
				*p = 1 - s;
				return;
			}
		}
	}
	if (x < (a + 1) / (a + b + 2)) {
		*p = exp(log_power_terms(a, b, x, y)) * betacf(a, b, x) / a;
		*q = 1 - *p;
	} else {
		*q = exp(log_power_terms(b, a, y, x)) * betacf(b, a, y) / b;
		*p = 1 - *q;
	}
}

double vpa_log_ibeta(double a, double b, double x)
{
	if (!(x > 0))
		return -INFINITY;
	if (x >= 1)
		return 0;
	/* the continued fraction on the side where it converges fast (x below the
	 * mean), in logs so that I below 1e-308 (e.g. PrivUnit's caps in high
	 * dimension) keeps its exponent */
	if (x < (a + 1) / (a + b + 2))
		return log_power_terms(a, b, x, 1 - x) + log(betacf(a, b, x)) - log(a);
	return log1p(-exp(log_power_terms(b, a, 1 - x, x)) * betacf(b, a, 1 - x) / b);
}

double vpa_ibeta(double a, double b, double x, double *complement)
{
	double p, q;
	ibeta2(a, b, x, 1 - x, &p, &q);
	if (complement)
		*complement = q;
	return p;
}

/*
 * x with I_x(a, b) = p, where q = 1 - p is passed separately so that either
 * tail can be tiny.  Solves ln I = ln p (or ln(1-I) = ln q, whichever target is
 * smaller) by Newton's method in ln x, kept inside a bracket that shrinks with
 * every evaluation, bisecting (geometrically across decades) when a Newton
 * step would leave it.  When the mean a/(a+b) is above 1/2 the mirror problem
 * I_y(b, a) = q is solved instead, so the unknown is always the small side.
 */
static double ibeta_inv_pq(double a, double b, double p, double q)
{
	if (p <= 0)
		return 0;
	if (q <= 0)
		return 1;
	if (a / (a + b) > 0.5)
		return 1 - ibeta_inv_pq(b, a, q, p);
	int lower = p <= q; /* match the lower tail I (else the upper 1 - I) */
	double target = log(lower ? p : q);
	double lo = 0, hi = 1;
	/* start: normal approximation around the mean, kept inside (0, 1) */
	double mean = a / (a + b), sd = sqrt(a * b / ((a + b) * (a + b) * (a + b + 1)));
	double z = lower ? vpa_norm_quantile(p) : -vpa_norm_quantile(q);
	double x = mean + z * sd;
	if (!(x > 0) || !(x < 1))
		x = z < 0 ? mean * 0.5 : 0.5 * (1 + mean);
	for (int it = 0; it < 400; it++) {
		double I, Ic;
		ibeta2(a, b, x, 1 - x, &I, &Ic);
		/* f increasing in x, zero at the root */
		double f = lower ? log(I) - target : target - log(Ic);
		if (f == 0 || isnan(f))
			return x;
		if (f < 0)
			lo = x;
		else
			hi = x;
		/* d f / d ln x = x * density / (I or Ic) */
		double ldens = log_power_terms(a, b, x, 1 - x) - log1p(-x);
		double g = exp(ldens - log(lower ? I : Ic));
		double xn = NAN;
		if (isfinite(f) && g > 0 && isfinite(g))
			xn = x * exp(-f / g);
		if (!(xn > lo && xn < hi)) {
			if (lo == 0)
				xn = hi / 16;
			else if (hi > 4 * lo)
				xn = sqrt(lo * hi);
			else
				xn = 0.5 * (lo + hi);
		}
		if (fabs(xn - x) <= 2e-16 * x || xn == lo || xn == hi)
			return xn;
		if (hi - lo <= 4e-16 * hi)
			return 0.5 * (lo + hi);
		x = xn;
	}
	return x;
}

double vpa_ibeta_inv(double a, double b, double p)
{
	return ibeta_inv_pq(a, b, p, 1 - p);
}

double vpa_cp_upper(double k, double n, double level)
{
	if (k >= n)
		return 1;
	if (k <= 0) /* P[Bin(n, p) = 0] = (1-p)^n = level */
		return -expm1(log(level) / n);
	/* P[Bin(n, p) <= k] = 1 - I_p(k+1, n-k) = level */
	return ibeta_inv_pq(k + 1, n - k, 1 - level, level);
}

double vpa_cp_lower(double k, double n, double level)
{
	if (k <= 0)
		return 0;
	if (k >= n) /* p^n = level */
		return exp(log(level) / n);
	/* P[Bin(n, p) >= k] = I_p(k, n-k+1) = level */
	return ibeta_inv_pq(k, n - k + 1, level, 1 - level);
}

/* ---- the normal distribution --------------------------------------------- */

/* Acklam's rational approximation (relative error 1.2e-9), for pruning. */
static double probit_rough(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
				    -2.759285104469687e+02, 1.383577518672690e+02,
				    -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
				    -1.556989798598866e+02, 6.680131188771972e+01,
				    -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
				    -2.400758277161838e+00, -2.549732539343734e+00,
				    4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
				    2.445134137142996e+00, 3.754408661907416e+00 };
	if (p > 0.5)
		return -probit_rough(1 - p);
	if (p < 0.02425) {
		double q = sqrt(-2 * log(p));
		return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		       ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	double q = p - 0.5, r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
	       (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double vpa_norm_quantile(double p)
{
	if (!(p > 0))
		return -INFINITY;
	if (!(p < 1))
		return INFINITY;
	if (p > 0.5) /* 1 - p is exact here (Sterbenz), and the lower tail is accurate */
		return -vpa_norm_quantile(1 - p);
	double x = probit_rough(p);
	/* two Halley steps on Phi(x) = p (each triples the digits) */
	for (int i = 0; i < 2; i++) {
		double e = 0.5 * erfc(-x / M_SQRT2) - p;
		double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
		x = x - u / (1 + x * u / 2);
	}
	return x;
}

/* ---- Gaussian DP ---------------------------------------------------------- */

double vpa_gdp_log_delta(double mu, double eps)
{
	/* Dong, Roth, Su 2019, Cor. 2.13:
	 * delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) */
	double la = vpa_log_ndtr(-eps / mu + mu / 2), lb = vpa_log_ndtr(-eps / mu - mu / 2);
	double r = eps + lb - la; /* ln of the ratio of the two terms, < 0 */
	if (r >= 0)
		return -INFINITY;
	return la + log1p(-exp(r));
}

double vpa_gdp_epsilon(double mu, double delta)
{
	if (!(mu > 0))
		return 0;
	if (!(delta > 0))
		return INFINITY; /* mu-GDP with mu > 0 is (eps, 0)-DP for no finite eps */
	double ld = log(delta);
	if (vpa_gdp_log_delta(mu, 0) <= ld)
		return 0;
	double lo = 0, hi = 1;
	while (vpa_gdp_log_delta(mu, hi) > ld) {
		lo = hi;
		hi *= 2;
		if (hi > 1e9)
			return INFINITY;
	}
	/* delta(eps) is decreasing: bisect to the last bit */
	for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (vpa_gdp_log_delta(mu, mid) > ld)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

double vpa_gdp_mu(double fpr_hi, double fnr_hi)
{
	/* Phi^-1(1 - FPR) = -Phi^-1(FPR), evaluated on the accurate side */
	return -vpa_norm_quantile(fpr_hi) - vpa_norm_quantile(fnr_hi);
}

/* ---- one-run audit -------------------------------------------------------- */

double vpa_binom_sf(double v, double r, double q)
{
	if (v <= 0)
		return 1;
	if (v > r)
		return 0;
	double p, c;
	ibeta2(v, r - v + 1, q, 1 - q, &p, &c);
	return p;
}

/* P[X >= v], X ~ Bin(r, q) with q = logistic(eps) and 1 - q given exactly. */
static double sf_logistic(double v, double r, double q, double y)
{
	if (v <= 0)
		return 1;
	if (v > r)
		return 0;
	double p, c;
	ibeta2(v, r - v + 1, q, y, &p, &c);
	return p;
}

double vpa_one_run_pvalue(double m, double r, double v, double eps, double delta)
{
	double q = 1 / (1 + exp(-eps)), y = 1 / (1 + exp(eps));
	double beta = sf_logistic(v, r, q, y);
	if (delta <= 0 || v <= 0)
		return beta;
	/*
	 * max over i = 1..v of P[v-i <= X <= v-1] / i, the pmf summed downwards
	 * from v-1 in a scaled representation (pmf(v-1) may underflow while the
	 * sums near the mode do not).  pmf(j-1)/pmf(j) = j/(r-j+1) * y/q.  Below
	 * the mode the terms shrink, so once a term is below the running mean the
	 * mean can only fall: stop there.
	 */
	double k = v - 1;
	double L = log_power_terms(k + 1, r - k + 1, q, y) - log(q) - log(y) - log(r + 1);
	double cur = 1, sum = 0, best = 0;
	for (double j = k; j >= 0; j--) {
		double i = v - j;
		sum += cur;
		if (sum / i > best)
			best = sum / i;
		double ratio = j / (r - j + 1) * (y / q);
		double next = cur * ratio;
		if (ratio <= 1 && next <= sum / i)
			break;
		cur = next;
		if (sum > 1e250) {
			L += log(sum);
			cur /= sum;
			best /= sum;
			sum = 1;
		}
	}
	double term = 2 * m * delta * exp(L + log(best));
	double p = beta + term;
	return p < 1 ? p : 1;
}

double vpa_one_run_epsilon_from(double m, double r, double v, double alpha, double delta,
				double eps_lo)
{
	if (r <= 0 || v <= 0)
		return eps_lo;
	if (vpa_one_run_pvalue(m, r, v, eps_lo, delta) > alpha)
		return eps_lo;
	double lo = eps_lo, hi = eps_lo > 0.5 ? 2 * eps_lo : 1;
	while (vpa_one_run_pvalue(m, r, v, hi, delta) <= alpha) {
		lo = hi;
		hi *= 2;
		if (hi > 700) { /* e^eps overflows beyond; p -> P[all correct] -> 1 long before */
			hi = 700;
			if (vpa_one_run_pvalue(m, r, v, hi, delta) <= alpha)
				return hi;
			break;
		}
	}
	/* the largest eps whose p-value is at most alpha: keep lo on the rejected side */
	for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (vpa_one_run_pvalue(m, r, v, mid, delta) <= alpha)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

double vpa_one_run_epsilon(double m, double r, double v, double alpha, double delta)
{
	return vpa_one_run_epsilon_from(m, r, v, alpha, delta, 0);
}

/* ---- counts --------------------------------------------------------------- */

/* eps and direction from two upper bounds; 0 when neither direction applies. */
static double cp_eps(double fpr_hi, double fnr_hi, double delta, int *dir)
{
	double e1 = -INFINITY, e2 = -INFINITY;
	if (1 - delta - fnr_hi > 0)
		e1 = log(1 - delta - fnr_hi) - log(fpr_hi);
	if (1 - delta - fpr_hi > 0)
		e2 = log(1 - delta - fpr_hi) - log(fnr_hi);
	*dir = e1 >= e2 ? 1 : 2;
	double e = e1 >= e2 ? e1 : e2;
	if (!(e > 0)) {
		*dir = 0;
		return 0;
	}
	return e;
}

static void bound_one(struct vpa_dp_audit *out, double fp, double neg, double fn, double pos,
		      double level, double delta, enum vpa_audit_method method)
{
	out->fp = fp;
	out->negatives = neg;
	out->fn = fn;
	out->positives = pos;
	out->fpr_hi = vpa_cp_upper(fp, neg, level);
	out->fnr_hi = vpa_cp_upper(fn, pos, level);
	if (method == VPA_AUDIT_GDP) {
		out->mu = vpa_gdp_mu(out->fpr_hi, out->fnr_hi);
		out->epsilon = out->mu > 0 ? vpa_gdp_epsilon(out->mu, delta) : 0;
		out->direction = out->mu > 0 ? 1 : 0;
	} else {
		out->mu = NAN;
		out->epsilon = cp_eps(out->fpr_hi, out->fnr_hi, delta, &out->direction);
	}
}

void vpa_dp_audit_counts(double fp, double neg, double fn, double pos, double alpha,
			 double delta, enum vpa_audit_method method, struct vpa_dp_audit *out)
{
	memset(out, 0, sizeof(*out));
	out->n_thresholds = 1;
	out->level = alpha / 2; /* two one-sided bounds: both hold w.p. >= 1 - alpha */
	out->threshold = NAN;
	out->auroc = out->tpr_at_fpr_1e3 = out->tpr_at_fpr_1e2 = NAN;
	bound_one(out, fp, neg, fn, pos, out->level, delta, method);
}

/* ---- scores --------------------------------------------------------------- */

/*
 * The thresholds: every distinct score t of either list ("in" iff score >= t)
 * and +inf (nothing "in").  emit(fn, fp, t) once per threshold, ascending.
 */
struct walk {
	const double *in, *out;
	size_t n_in, n_out, i, j;
};

static int walk_next(struct walk *w, double *fn, double *fp, double *t, double *c_in,
		     double *c_out)
{
	if (w->i > w->n_in) /* past +inf */
		return 0;
	*fn = (double)w->i;
	*fp = (double)(w->n_out - w->j);
	if (w->i == w->n_in && w->j == w->n_out) {
		*t = INFINITY;
		*c_in = *c_out = 0;
		w->i++; /* mark done */
		return 1;
	}
	double a = w->i < w->n_in ? w->in[w->i] : INFINITY;
	double b = w->j < w->n_out ? w->out[w->j] : INFINITY;
	*t = a < b ? a : b;
	size_t i0 = w->i, j0 = w->j;
	while (w->i < w->n_in && w->in[w->i] == *t)
		w->i++;
	while (w->j < w->n_out && w->out[w->j] == *t)
		w->j++;
	*c_in = (double)(w->i - i0);
	*c_out = (double)(w->j - j0);
	return 1;
}

struct sweep {
	double P, N, level, delta;
	enum vpa_audit_method method;
	double fpr0, fnr0; /* the bounds for zero errors */
	double best_key;   /* eps (cp) or mu (gdp) of the best so far; 0 = none */
	int have;
	struct vpa_dp_audit best;
};

/* The value compared (eps or mu) for upper bounds fu (FPR) and nu (FNR). */
static double sweep_key(const struct sweep *s, double fu, double nu)
{
	if (s->method == VPA_AUDIT_GDP)
		return -vpa_norm_quantile(fu) - vpa_norm_quantile(nu);
	double e1 = 1 - s->delta - nu > 0 ? log(1 - s->delta - nu) - log(fu) : -INFINITY;
	double e2 = 1 - s->delta - fu > 0 ? log(1 - s->delta - fu) - log(nu) : -INFINITY;
	return e1 > e2 ? e1 : e2;
}

static void sweep_exact(struct sweep *s, double fn, double fp, double t)
{
	struct vpa_dp_audit c;
	bound_one(&c, fp, s->N, fn, s->P, s->level, s->delta, s->method);
	double key = s->method == VPA_AUDIT_GDP ? c.mu : c.epsilon;
	if (key > s->best_key) {
		s->best_key = key;
		s->best = c;
		s->best.threshold = t;
		s->have = 1;
	}
}

static void sweep_block(struct sweep *s, const double *fn, const double *fp, const double *t,
			size_t lo, size_t hi)
{
	if (hi - lo <= 4) {
		for (size_t i = lo; i < hi; i++) {
			/* optimistic: each bound replaced by a smaller number */
			double fl = fp[i] / s->N > s->fpr0 ? fp[i] / s->N : s->fpr0;
			double nl = fn[i] / s->P > s->fnr0 ? fn[i] / s->P : s->fnr0;
			double opt;
			if (s->method == VPA_AUDIT_GDP) {
				opt = -probit_rough(fl) - probit_rough(nl);
				opt += 1e-6 * (1 + fabs(opt)); /* Acklam's 1.2e-9, with room */
			} else {
				opt = sweep_key(s, fl, nl) + 1e-12;
			}
			if (opt > s->best_key)
				sweep_exact(s, fn[i], fp[i], t[i]);
		}
		return;
	}
	double fu = vpa_cp_upper(fp[hi - 1], s->N, s->level), nu = vpa_cp_upper(fn[lo], s->P, s->level);
	if (!(sweep_key(s, fu, nu) + 1e-12 > s->best_key))
		return;
	size_t mid = lo + (hi - lo) / 2;
	sweep_block(s, fn, fp, t, lo, mid);
	sweep_block(s, fn, fp, t, mid, hi);
}

void vpa_dp_audit_scores(const double *in, size_t n_in, const double *out_s, size_t n_out,
			 double alpha, double delta, enum vpa_audit_method method,
			 struct vpa_dp_audit *res)
{
	memset(res, 0, sizeof(*res));
	const double P = (double)n_in, N = (double)n_out;
	struct walk w = { in, out_s, n_in, n_out, 0, 0 };
	double fn, fp, t, ci, co;
	/* pass 1: count thresholds; AUROC (ties 1/2) and TPR at FPR <= 1/K */
	double T = 0, auc2 = 0, tpr3 = -1, tpr2 = -1;
	while (walk_next(&w, &fn, &fp, &t, &ci, &co)) {
		T++;
		/* in-scores equal to t against out-scores below t (N - fp) and equal */
		auc2 += ci * (2 * (N - fp) + co);
		/* the first (lowest) threshold meeting the FPR target has the most TPR */
		if (tpr3 < 0 && fp * 1000 <= N)
			tpr3 = (P - fn) / P;
		if (tpr2 < 0 && fp * 100 <= N)
			tpr2 = (P - fn) / P;
	}
	res->auroc = auc2 / (2 * P * N);
	res->tpr_at_fpr_1e3 = tpr3;
	res->tpr_at_fpr_1e2 = tpr2;
	res->n_thresholds = T;
	/* Bonferroni over the 2T one-sided bounds (one FPR, one FNR per threshold) */
	res->level = alpha / (2 * T);
	const double level = res->level;

	/*
	 * pass 2: the best threshold, by branch and bound over blocks of
	 * consecutive thresholds.  Along ascending thresholds fn grows and fp
	 * shrinks, and every bound is monotone in both counts, so the exact
	 * Clopper-Pearson bounds at a block's smallest fn (its first threshold)
	 * and smallest fp (its last) bound the whole block from above; a block
	 * that cannot beat the best so far is dropped, others are halved.
	 * Leaves use a cheaper test first: a CP upper bound is at least the
	 * rate itself and at least the zero-error bound.  Streamed in chunks,
	 * so memory stays O(1) in the number of scores.
	 */
	struct sweep sw = { P, N, level, delta, method, vpa_cp_upper(0, N, level),
			    vpa_cp_upper(0, P, level), 0, 0, { 0 } };
	/* a first incumbent from ~1024 thresholds spread evenly: blocks far
	 * below it are dropped at once (the mu of a Gaussian shift is nearly
	 * flat across thresholds, so a weak incumbent would open most blocks) */
	double stride = floor(T / 1024) + 1, idx = 0;
	w.i = w.j = 0;
	while (walk_next(&w, &fn, &fp, &t, &ci, &co)) {
		if (fmod(idx, stride) == floor(stride / 2))
			sweep_exact(&sw, fn, fp, t);
		idx++;
	}
	enum { CH = 4096 };
	double bfn[CH], bfp[CH], bt[CH];
	size_t nb = 0;
	w.i = w.j = 0;
	for (;;) {
		int more = walk_next(&w, &fn, &fp, &t, &ci, &co);
		if (more) {
			bfn[nb] = fn;
			bfp[nb] = fp;
			bt[nb] = t;
			nb++;
		}
		if (nb == CH || (!more && nb)) {
			sweep_block(&sw, bfn, bfp, bt, 0, nb);
			nb = 0;
		}
		if (!more)
			break;
	}
	int have = sw.have;
	struct vpa_dp_audit best = sw.best;
	if (have) {
		res->fp = best.fp;
		res->fn = best.fn;
		res->fpr_hi = best.fpr_hi;
		res->fnr_hi = best.fnr_hi;
		res->mu = best.mu;
		res->epsilon = best.epsilon;
		res->direction = best.direction;
		res->threshold = best.threshold;
	} else {
		/* no threshold gives a positive bound: report the zero-error floor */
		res->fp = res->fn = NAN;
		res->fpr_hi = res->fnr_hi = NAN;
		res->mu = method == VPA_AUDIT_GDP ? 0 : NAN;
		res->epsilon = 0;
		res->direction = 0;
		res->threshold = NAN;
	}
	res->negatives = N;
	res->positives = P;
}

/* ---- one run from scores --------------------------------------------------- */

/*
 * The grid of guess counts: {0} and powers of two below m and m itself, fixed
 * by m alone before the scores are looked at, so a Bonferroni correction over
 * the pairs (k+, k-) with k+ + k- <= m, not both 0, is valid.
 */
static size_t grid(double m, double *g)
{
	size_t n = 0;
	g[n++] = 0;
	for (double p = 1; p < m; p *= 2)
		g[n++] = p;
	g[n++] = m;
	return n;
}

/*
 * Tie-group boundaries met while walking the pooled scores from the top
 * (desc) or the bottom: for each grid count g, the largest count c <= g that
 * does not split a group of equal scores, and how many "in" scores (top) or
 * "out" scores (bottom) those c hold.  The cut depends on the scores only,
 * never on which list a score came from.
 */
static void cuts(const double *in, size_t n_in, const double *out_s, size_t n_out, int top,
		 const double *g, size_t ng, double *c, double *hit)
{
	size_t i = 0, j = 0; /* taken from each list so far */
	double taken = 0, good = 0;
	size_t k = 0;
	for (;;) {
		/* the next group of equal scores, from the top or the bottom */
		double a, b;
		if (top) {
			a = i < n_in ? in[n_in - 1 - i] : -INFINITY;
			b = j < n_out ? out_s[n_out - 1 - j] : -INFINITY;
		} else {
			a = i < n_in ? in[i] : INFINITY;
			b = j < n_out ? out_s[j] : INFINITY;
		}
		size_t gi = 0, gj = 0;
		int done = i == n_in && j == n_out;
		if (!done) {
			double t = top ? (a > b ? a : b) : (a < b ? a : b);
			while (i + gi < n_in && (top ? in[n_in - 1 - i - gi] : in[i + gi]) == t)
				gi++;
			while (j + gj < n_out && (top ? out_s[n_out - 1 - j - gj] : out_s[j + gj]) == t)
				gj++;
		}
		double next = taken + (double)(gi + gj);
		while (k < ng && (done || g[k] < next)) {
			c[k] = taken;
			hit[k] = good;
			k++;
		}
		if (done || k == ng)
			return;
		i += gi;
		j += gj;
		taken = next;
		good += top ? (double)gi : (double)gj;
	}
}

int vpa_dp_audit_one_run_scores(const double *in, size_t n_in, const double *out_s, size_t n_out,
				double alpha, double delta, struct vpa_one_run *res)
{
	memset(res, 0, sizeof(*res));
	double m = (double)n_in + (double)n_out;
	double g[80], ct[80], ht[80], cb[80], hb[80];
	size_t ng = grid(m, g);
	cuts(in, n_in, out_s, n_out, 1, g, ng, ct, ht);
	cuts(in, n_in, out_s, n_out, 0, g, ng, cb, hb);
	double K = 0;
	for (size_t a = 0; a < ng; a++)
		for (size_t b = 0; b < ng; b++)
			if ((a || b) && g[a] + g[b] <= m)
				K++;
	res->m = m;
	res->pairs = K;
	res->level = alpha / K;
	res->epsilon = 0;
	res->guesses = res->correct = res->k_plus = res->k_minus = 0;
	for (size_t a = 0; a < ng; a++) {
		for (size_t b = 0; b < ng; b++) {
			if (!(a || b) || g[a] + g[b] > m)
				continue;
			double r = ct[a] + cb[b], v = ht[a] + hb[b];
			if (r <= 0 || ct[a] + cb[b] > m)
				continue;
			/* the delta term only raises p: if even beta rejects nothing
			 * beyond the incumbent, skip the full search */
			double q = 1 / (1 + exp(-res->epsilon)), y = 1 / (1 + exp(res->epsilon));
			if (sf_logistic(v, r, q, y) > res->level)
				continue;
			double e = vpa_one_run_epsilon_from(m, r, v, res->level, delta, res->epsilon);
			if (e > res->epsilon) {
				res->epsilon = e;
				res->guesses = r;
				res->correct = v;
				res->k_plus = ct[a];
				res->k_minus = cb[b];
			}
		}
	}
	return 0;
}
