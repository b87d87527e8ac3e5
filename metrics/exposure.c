/*
 * metrics/exposure.c - canary exposure (Carlini et al. 2019, "The secret
 * sharer"), with TF Privacy's conventions (DESIGN.md):
 *
 *   exact         log2 N - log2(1 + #{candidates <= canary})
 *   extrapolated  -log2 F(canary), F the CDF of a skew-normal fitted by
 *                 maximum likelihood to the candidates' log-perplexities.
 *
 * The skew-normal SN(xi, omega, alpha) has density
 *   f(x) = 2/omega phi(z) Phi(alpha z),  z = (x - xi) / omega,
 * and CDF F(x) = Phi(z) - 2 T(z, alpha) with Owen's T function.  The CDF
 * holds on the whole range the fit can produce (|alpha| <= 1e4, any z; tested
 * against an mpmath quadrature of the density, tests/golden/skewnorm/):
 * right of 0 an identity of Owen's keeps every term positive (cdf_right); a
 * canary with a high exposure sits far in the left tail, where Phi(z) and
 * 2T(z,alpha) agree in every printed digit (alpha > 0) or both underflow:
 * there the CDF is integrated in log space instead, so -log2 F stays finite
 * and accurate when F itself is below 1e-308.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

#define LN2 0.69314718055994530942
#define LN_SQRT_2PI 0.91893853320467274178
#define SQRT2 1.41421356237309504880
#define TWO_PI 6.28318530717958647693

/* ---- exact exposure ------------------------------------------------------ */

double vpa_exposure_exact(double canary, const double *cand, size_t n)
{
	if (n == 0 || isnan(canary))
		return NAN;
	size_t le = 0;
	for (size_t i = 0; i < n; i++)
		le += cand[i] <= canary;
	/* two separate logs: powers of two give exact results */
	return log2((double)n) - log2(1.0 + (double)le);
}

size_t vpa_exposure_ties(double canary, const double *cand, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += cand[i] == canary;
	return k;
}

size_t vpa_exposure_drop_canary(double canary, double *cand, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cand[i] == canary) {
			memmove(cand + i, cand + i + 1, (n - i - 1) * sizeof *cand);
			return n - 1;
		}
	return n;
}

/* ---- Gauss-Legendre quadrature ----------------------------------------- */

/*
 * 20-point Gauss-Legendre nodes (positive half) and weights on [-1, 1],
 * computed with mpmath at 40 digits (roots of P_20 by Newton from the
 * Tricomi guesses, w = 2 / ((1 - x^2) P_20'(x)^2)); they sum to 2.
 */
static const double gl_x[10] = {
	0.993128599185094924786, 0.963971927277913791268, 0.912234428251325905868,
	0.839116971822218823395, 0.746331906460150792614, 0.636053680726515025453,
	0.510867001950827098004, 0.373706088715419560673, 0.22778585114164507808,
	0.0765265211334973337546,
};
static const double gl_w[10] = {
	0.0176140071391521183119, 0.040601429800386941331, 0.0626720483341090635695,
	0.0832767415767047487248, 0.101930119817240435037, 0.118194531961518417312,
	0.131688638449176626898, 0.142096109318382051329, 0.149172986472603746788,
	0.152753387130725850698,
};

/* int_lo^hi f over `panels` equal panels. */
static double gl_integrate(double (*f)(double x, const void *ctx), const void *ctx, double lo,
			   double hi, int panels)
{
	double w = (hi - lo) / panels, sum = 0;
	for (int p = 0; p < panels; p++) {
		double c = lo + (p + 0.5) * w, r = w / 2, s = 0;
		for (int k = 0; k < 10; k++)
			s += gl_w[k] * (f(c - r * gl_x[k], ctx) + f(c + r * gl_x[k], ctx));
		sum += s * r;
	}
	return sum;
}

/* ---- Owen's T ---------------------------------------------------------- */

struct owen_ctx {
	double h2;
};

/* exp(-h^2 x^2 / 2) / (1 + x^2): the integrand with exp(-h^2/2) factored out */
static double owen_f(double x, const void *ctx)
{
	const struct owen_ctx *c = ctx;
	return exp(-0.5 * c->h2 * x * x) / (1 + x * x);
}

/* upper tail Q(h) = 1 - Phi(h) with full relative accuracy */
static double q_tail(double h)
{
	return 0.5 * erfc(h / SQRT2);
}

/* T(h, a) for h >= 0, 0 <= a <= 1 by quadrature. */
static double owens_t_small(double h, double a)
{
	if (a == 0)
		return 0;
	if (h == 0)
		return atan(a) / TWO_PI;
	struct owen_ctx c = {h * h};
	/* beyond x = 12/h the integrand is below e^-72 of its value at 0 */
	double b = 12 / h < a ? 12 / h : a;
	return exp(-0.5 * h * h) / TWO_PI * gl_integrate(owen_f, &c, 0, b, 8);
}

double vpa_owens_t(double h, double a)
{
	if (isnan(h) || isnan(a))
		return NAN;
	if (a < 0)
		return -vpa_owens_t(h, -a); /* odd in a */
	h = fabs(h);                        /* even in h */
	if (isinf(h))
		return 0;
	if (isinf(a))
		return 0.5 * q_tail(h);
	if (a <= 1)
		return owens_t_small(h, a);
	/* Owen (1956): T(h,a) + T(ah,1/a) = (Phi(h)+Phi(ah))/2 - Phi(h)Phi(ah)
	 * for h >= 0, written with upper tails so nothing cancels. */
	double ah = a * h, qh = q_tail(h), qa = q_tail(ah);
	return 0.5 * qh + 0.5 * qa - qh * qa - owens_t_small(ah, 1 / a);
}

/* ---- skew-normal --------------------------------------------------------- */

static double log_phi(double z)
{
	return -0.5 * z * z - LN_SQRT_2PI;
}

double vpa_skewnorm_logpdf(const struct vpa_skewnorm *d, double x)
{
	double z = (x - d->loc) / d->scale;
	return LN2 - log(d->scale) + log_phi(z) + vpa_log_ndtr(d->shape * z);
}

struct tail_ctx {
	double z, alpha, lg0; /* upper limit, shape, log g(z) */
};

/* g(z - s) / g(z) with g(t) = 2 phi(t) Phi(alpha t) */
static double tail_f(double s, const void *ctx)
{
	const struct tail_ctx *c = ctx;
	double t = c->z - s;
	return exp(LN2 + log_phi(t) + vpa_log_ndtr(c->alpha * t) - c->lg0);
}

/*
 * log F(z) = log int_{-inf}^z g(t) dt for z left of the mode, in log space:
 * g is log-concave, so g(z - s) <= g(z) exp(-k s) with k = -(log g)'(z) > 0,
 * and [z - 45/k, z] holds all but e^-45 of the mass.  45 panels of width 1/k
 * each see at most a factor e of decay: Gauss-Legendre is exact to rounding.
 */
static double logcdf_tail(double z, double alpha)
{
	struct tail_ctx c = {z, alpha, 0};
	c.lg0 = LN2 + log_phi(z) + vpa_log_ndtr(alpha * z);
	/* (log Phi)'(y) = phi(y)/Phi(y) */
	double mills = exp(log_phi(alpha * z) - vpa_log_ndtr(alpha * z));
	double k = -z + alpha * mills;
	if (!(k > 1e-3))
		k = 1e-3;
	double len = 45 / k;
	return c.lg0 + log(gl_integrate(tail_f, &c, 0, len, 45));
}

/*
 * F(z) for z >= 0 from Owen's T without cancellation:
 *   a <= 1      F = Phi(z) - 2 T(z, a) >= 1/4 (T(z, a) <= 1/8 for 0 < a <= 1,
 *               and a sum of positive terms for a < 0: T is odd in a);
 *   a > 1       Owen's (1956) identity T(z,a) + T(az,1/a) = (Phi(z)+Phi(az))/2 -
 *               Phi(z) Phi(az) turns Phi(z) - 2 T(z,a) into
 *               F = (1 - 2 Q(z)) (1 - Q(az)) + 2 T(az, 1/a),
 *               a sum of non-negative terms with 1 - 2 Q(z) = erf(z / sqrt 2).
 * The second form matters: with a large shape nearly all the mass is just
 * right of 0, so F(z) for small z > 0 is tiny while Phi(z) and 2 T(z, a) are
 * both near 1/2 (shape 100, z = 1e-4: F = 0.00322; the direct difference
 * kept no digit of it).
 */
static double cdf_right(double z, double a)
{
	if (a <= 1)
		return 0.5 * erfc(-z / SQRT2) - 2 * vpa_owens_t(z, a);
	double az = a * z;
	return erf(z / SQRT2) * (1 - q_tail(az)) + 2 * vpa_owens_t(az, 1 / a);
}

double vpa_skewnorm_logcdf(const struct vpa_skewnorm *d, double x)
{
	double z = (x - d->loc) / d->scale, a = d->shape;
	if (isnan(z) || isnan(a))
		return NAN;
	if (z == INFINITY)
		return 0;
	if (z == -INFINITY)
		return -INFINITY;
	if (z >= 0) {
		double f = cdf_right(z, a); /* >= F(0) = 1/2 - atan(a)/pi > 0 */
		return f >= 1 ? 0 : log(f);
	}
	/* z < 0: F = Phi(z) - 2 T(z, a), a difference when a > 0 */
	double phi_z = 0.5 * erfc(-z / SQRT2);
	double t2 = 2 * vpa_owens_t(z, a);
	double f = phi_z - t2;
	/*
	 * Direct formula while it keeps at least 12 good digits: the rounding
	 * error of Phi - 2T is about 1e-16 max(Phi, |2T|), so require
	 * F >= 1e-2 max(Phi, |2T|) (relative error <= 1e-14), and F well inside
	 * the normal range.  Otherwise integrate the tail in log space: z < 0
	 * is left of the mode when a > 0 (the mode is positive), and when
	 * a <= 0 only an underflowing F (z below about -37) gets here, far left
	 * of the mode too.
	 */
	if (f >= 1e-2 * fmax(phi_z, fabs(t2)) && f > 1e-290)
		return f >= 1 ? 0 : log(f);
	return logcdf_tail(z, a);
}

double vpa_exposure_extrapolated(double canary, const struct vpa_skewnorm *d)
{
	double l = vpa_skewnorm_logcdf(d, canary);
	if (isnan(l))
		return NAN;
	double e = -l / LN2;
	return e > 0 ? e : 0;
}

/* ---- maximum-likelihood fit -------------------------------------------- */

struct fit_data {
	const double *y; /* standardised sample */
	size_t n;
};

#define ALPHA_MAX 1e4

/* where nll is finite (the parameters it accepts) */
static int in_domain(const double *p)
{
	return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]) && fabs(p[2]) <= ALPHA_MAX &&
	       p[1] >= -40 && p[1] <= 40;
}

/* negative log-likelihood (without the n log 2 constant) at p = (xi, log omega, alpha) */
static double nll(const struct fit_data *fd, const double *p)
{
	double xi = p[0], lw = p[1], a = p[2];
	if (!isfinite(xi) || !isfinite(lw) || !isfinite(a) || fabs(a) > ALPHA_MAX || lw < -40 ||
	    lw > 40)
		return INFINITY;
	double iw = exp(-lw), s = 0;
	for (size_t i = 0; i < fd->n; i++) {
		double z = (fd->y[i] - xi) * iw;
		s += 0.5 * z * z - vpa_log_ndtr(a * z);
	}
	return s + (double)fd->n * lw;
}

/*
 * Nelder-Mead (standard coefficients 1, 2, 1/2, 1/2) in 3 dimensions.
 * Stops when the spread of f over the simplex is below ftol (relative) and
 * the simplex is smaller than xtol in every coordinate, or after max_iter
 * iterations.  p is the start and
 * receives the best vertex.  Returns the best value.
 */
static double nelder_mead(const struct fit_data *fd, double *p, const double *step,
			  double ftol, double xtol, int max_iter)
{
	enum { D = 3 };
	double x[D + 1][D], f[D + 1];
	for (int i = 0; i <= D; i++) {
		for (int j = 0; j < D; j++)
			x[i][j] = p[j] + (i == j + 1 ? step[j] : 0);
		f[i] = nll(fd, x[i]);
	}
	for (int it = 0; it < max_iter; it++) {
		/* order: best first */
		for (int i = 1; i <= D; i++)
			for (int k = i; k > 0 && f[k] < f[k - 1]; k--) {
				double tf = f[k];
				f[k] = f[k - 1];
				f[k - 1] = tf;
				for (int j = 0; j < D; j++) {
					double t = x[k][j];
					x[k][j] = x[k - 1][j];
					x[k - 1][j] = t;
				}
			}
		double size = 0;
		for (int i = 1; i <= D; i++)
			for (int j = 0; j < D; j++)
				size = fmax(size, fabs(x[i][j] - x[0][j]));
		if (fabs(f[D] - f[0]) <= ftol * (fabs(f[0]) + 1e-300) && size < xtol)
			break;
		double c[D] = {0}, xr[D], xe[D], xc[D];
		for (int i = 0; i < D; i++)
			for (int j = 0; j < D; j++)
				c[j] += x[i][j] / D;
		for (int j = 0; j < D; j++)
			xr[j] = c[j] + (c[j] - x[D][j]);
		double fr = nll(fd, xr);
		if (fr < f[0]) {
			for (int j = 0; j < D; j++)
				xe[j] = c[j] + 2 * (c[j] - x[D][j]);
			double fe = nll(fd, xe);
			if (fe < fr) {
				for (int j = 0; j < D; j++)
					x[D][j] = xe[j];
				f[D] = fe;
			} else {
				for (int j = 0; j < D; j++)
					x[D][j] = xr[j];
				f[D] = fr;
			}
			continue;
		}
		if (fr < f[D - 1]) {
			for (int j = 0; j < D; j++)
				x[D][j] = xr[j];
			f[D] = fr;
			continue;
		}
		/* contraction: outside if the reflection helped, else inside */
		int outside = fr < f[D];
		for (int j = 0; j < D; j++)
			xc[j] = outside ? c[j] + 0.5 * (xr[j] - c[j]) : c[j] + 0.5 * (x[D][j] - c[j]);
		double fc = nll(fd, xc);
		if (fc < (outside ? fr : f[D])) {
			for (int j = 0; j < D; j++)
				x[D][j] = xc[j];
			f[D] = fc;
			continue;
		}
		/* shrink towards the best vertex */
		for (int i = 1; i <= D; i++) {
			for (int j = 0; j < D; j++)
				x[i][j] = x[0][j] + 0.5 * (x[i][j] - x[0][j]);
			f[i] = nll(fd, x[i]);
		}
	}
	int b = 0;
	for (int i = 1; i <= D; i++)
		if (f[i] < f[b])
			b = i;
	for (int j = 0; j < D; j++)
		p[j] = x[b][j];
	return f[b];
}

/* Is -H + lambda I positive definite?  (Cholesky, 3 x 3) */
static int pd3(const double H[3][3], double lambda)
{
	double L[3][3] = {{0}};
	for (int i = 0; i < 3; i++)
		for (int j = 0; j <= i; j++) {
			double s = -H[i][j] + (i == j ? lambda : 0);
			for (int k = 0; k < j; k++)
				s -= L[i][k] * L[j][k];
			if (i == j) {
				if (!(s > 0))
					return 0;
				L[i][i] = sqrt(s);
			} else
				L[i][j] = s / L[j][j];
		}
	return 1;
}

/* Solve (-H + lambda I) d = g, 3 x 3, Gaussian elimination with partial
 * pivoting.  Returns 0 when singular or not finite. */
static int solve3(const double H[3][3], double lambda, const double *g, double *d)
{
	double A[3][4];
	for (int r = 0; r < 3; r++) {
		for (int c = 0; c < 3; c++)
			A[r][c] = -H[r][c] + (r == c ? lambda : 0);
		A[r][3] = g[r];
	}
	for (int c = 0; c < 3; c++) {
		int piv = c;
		for (int r = c + 1; r < 3; r++)
			if (fabs(A[r][c]) > fabs(A[piv][c]))
				piv = r;
		if (!(fabs(A[piv][c]) > 0))
			return 0;
		for (int k = 0; k < 4; k++) {
			double t = A[c][k];
			A[c][k] = A[piv][k];
			A[piv][k] = t;
		}
		for (int r = 0; r < 3; r++)
			if (r != c) {
				double f = A[r][c] / A[c][c];
				for (int k = c; k < 4; k++)
					A[r][k] -= f * A[c][k];
			}
	}
	for (int j = 0; j < 3; j++) {
		d[j] = A[j][3] / A[j][j];
		if (!isfinite(d[j]))
			return 0;
	}
	return 1;
}

/*
 * Newton polish of the Nelder-Mead optimum on (xi, log omega, alpha) with the
 * analytic gradient and Hessian; a step is kept only when it lowers the
 * negative log-likelihood, so it can only improve; Levenberg-Marquardt
 * damping takes over where the Hessian is not negative definite.
 */
static void newton_polish(const struct fit_data *fd, double *p)
{
	int blind = 0; /* Newton steps taken without checking f (see below) */
	double f0 = nll(fd, p);
	for (int it = 0; it < 200; it++) {
		double xi = p[0], w = exp(p[1]), a = p[2];
		/* derivatives of l = sum [-z^2/2 + log Phi(a z)] - n log w, z = (y - xi)/w */
		double g[3] = {0}, H[3][3] = {{0}};
		for (size_t i = 0; i < fd->n; i++) {
			double z = (fd->y[i] - xi) / w, az = a * z;
			double m = exp(log_phi(az) - vpa_log_ndtr(az)); /* phi/Phi */
			double dm = -m * (az + m);                      /* d m / d(az) */
			/* dz/dxi = -1/w, dz/dlw = -z */
			double lz = -z + a * m;         /* dl/dz */
			double lzz = -1 + a * a * dm;   /* d2l/dz2 */
			double la = z * m;              /* dl/da */
			double laa = z * z * dm;        /* d2l/da2 */
			double lza = m + az * dm;       /* d2l/dz da */
			g[0] += lz * (-1 / w);
			g[1] += lz * (-z);
			g[2] += la;
			H[0][0] += lzz / (w * w);
			H[0][1] += lzz * z / w + lz / w; /* d/dlw of (-lz/w) */
			H[1][1] += lzz * z * z + lz * z;
			H[0][2] += -lza / w;
			H[1][2] += -lza * z;
			H[2][2] += laa;
		}
		g[1] -= (double)fd->n;
		H[1][0] = H[0][1];
		H[2][0] = H[0][2];
		H[2][1] = H[1][2];
		/*
		 * Levenberg-Marquardt: solve (-H + lambda I) d = g.  lambda = 0 is
		 * Newton; where -H is not positive definite (the likelihood is
		 * flat in the shape near 0, and not concave far from the optimum)
		 * or the step does not lower the objective, lambda grows and d
		 * turns towards the gradient, which always descends for a small
		 * enough step.
		 */
		double scale_h = (fabs(H[0][0]) + fabs(H[1][1]) + fabs(H[2][2])) / 3 + 1e-300;
		double lambda = 0, q[3], fq = INFINITY, d[3] = {0, 0, 0};
		int improved = 0;
		/*
		 * Issue 33: near the optimum, values of f (a sum of n terms) differ
		 * only by rounding, so comparing them there stops nothing and
		 * proves nothing: the old loop's last iteration failed all of its
		 * 320 trials (40 dampings x 8 halvings, each a pass over all the
		 * data) and, before it, accepted halved steps whose "decrease" was
		 * rounding: 10M values took 5-36 s, and could stop with a gradient
		 * of 4e-3 (a far canary's exposure 4e-6 off).  The gradient and
		 * Hessian stay accurate there, so Newton decides:
		 *  - where -H is positive definite and the Newton step is below
		 *    1e-4 in every coordinate (the shape relative to 1 + |alpha|),
		 *    Newton is in its quadratic region: take the full step without
		 *    evaluating f (at most 8 such steps in a row: a guard, never
		 *    reached in the tests);
		 *  - when that step is below 1e-9 the remaining error is its square:
		 *    take it and stop (the exposure moves by about |z| 1e-9 / ln 2).
		 * A stop on the Newton decrement was tried first and rejected: the
		 * skew-normal's information is singular at alpha = 0, so on
		 * near-symmetric data a tiny decrement still left the shape far
		 * enough off to move a 46-bit exposure by 4e-6.  Far from the
		 * optimum the damped, f-checked steps below work as before.
		 */
		int newton_pd = pd3(H, 0) && solve3(H, 0, g, d);
		double dmax = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2]) / (1 + fabs(p[2]))));
		if (newton_pd && dmax < 1e-4 && blind < 8) {
			for (int j = 0; j < 3; j++)
				q[j] = p[j] + d[j];
			if (in_domain(q)) {
				for (int j = 0; j < 3; j++)
					p[j] = q[j];
				if (dmax < 1e-9)
					return;
				blind++;
				f0 = NAN; /* not known; evaluated only if a checked step follows */
				continue;
			}
		}
		if (isnan(f0))
			f0 = nll(fd, p);
		for (int tries = 0; tries < 40 && !improved; tries++) {
			/* a step from a damping that leaves -H + lambda I indefinite
			 * is not a descent direction in general: raise lambda
			 * without spending passes over the data on it */
			if (pd3(H, lambda) && solve3(H, lambda, g, d)) {
				double step = 1;
				for (int k = 0; k < 8; k++, step /= 2) {
					for (int j = 0; j < 3; j++)
						q[j] = p[j] + step * d[j];
					fq = nll(fd, q);
					if (fq < f0) {
						improved = 1;
						break;
					}
				}
			}
			lambda = lambda == 0 ? 1e-6 * scale_h : lambda * 10;
		}
		if (!improved)
			return; /* at the optimum to rounding */
		double moved = fabs(q[0] - p[0]) + fabs(q[1] - p[1]) + fabs(q[2] - p[2]);
		for (int j = 0; j < 3; j++)
			p[j] = q[j];
		f0 = fq;
		if (moved < 1e-10 * (1 + fabs(p[2])))
			return;
	}
}

int vpa_skewnorm_fit(const double *x, size_t n, struct vpa_skewnorm *out, struct vpa_err *err)
{
	int rc = 0;
	double *y = NULL, *sub = NULL;
	if (n < 3)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"a skew-normal fit needs at least 3 values, got %zu", n);
	/* mean and standard deviation, two passes */
	double mean = 0, m2 = 0, m3 = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			return vpa_fail(err, VPA_EINPUT, NULL, "value %zu is not a finite number", i + 1);
		mean += x[i];
	}
	mean /= (double)n;
	for (size_t i = 0; i < n; i++) {
		double e = x[i] - mean;
		m2 += e * e;
		m3 += e * e * e;
	}
	m2 /= (double)n;
	m3 /= (double)n;
	double sd = sqrt(m2);
	if (!(sd > 0) || sd < 1e-14 * fabs(mean))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"cannot fit a skew-normal: all %zu values are equal", n);
	y = xmalloc(xmul(n, sizeof *y));
	for (size_t i = 0; i < n; i++)
		y[i] = (x[i] - mean) / sd;

	/*
	 * Method-of-moments start (Azzalini): the sample skewness g1 gives
	 * |delta| = sqrt(pi/2 g^(2/3) / (g^(2/3) + ((4-pi)/2)^(2/3))), clipped
	 * to the family's maximum skewness 0.9952...; then omega from the
	 * variance and xi from the mean (here of the standardised sample).
	 */
	double g1 = m3 / (m2 * sd), ag = fabs(g1);
	if (ag > 0.99)
		ag = 0.99;
	double g23 = pow(ag, 2.0 / 3), c23 = pow((4 - M_PI) / 2, 2.0 / 3);
	double delta = sqrt(M_PI / 2 * g23 / (g23 + c23));
	if (g1 < 0)
		delta = -delta;
	double alpha = delta / sqrt(1 - delta * delta);
	double omega = 1 / sqrt(1 - 2 * delta * delta / M_PI);
	double xi = -omega * delta * sqrt(2 / M_PI);

	/*
	 * Large samples: the derivative-free search runs on a systematic
	 * subsample of SUB_MAX values (every k-th), which lands within sampling
	 * error of the full optimum; Newton then finishes on all the data in a
	 * few passes.  Small samples use every value throughout.
	 */
	enum { SUB_MAX = 20000 };
	struct fit_data fd = {y, n}, fs = fd;
	if (n > SUB_MAX) {
		size_t m = SUB_MAX, stride = n / m;
		sub = xmalloc(xmul(m, sizeof *sub));
		for (size_t i = 0; i < m; i++)
			sub[i] = y[i * stride];
		fs.y = sub;
		fs.n = m;
	}
	/* two starts: method of moments, and the symmetric normal, which guards
	 * against a poor moment estimate */
	const double starts[2][3] = {{xi, log(omega), alpha}, {0, 0, 0}};
	double best[3] = {starts[0][0], starts[0][1], starts[0][2]};
	double fbest = nll(&fs, best);
	/*
	 * Nelder-Mead to a coarse optimum (robust: no derivatives, any start),
	 * then Newton to full precision (quadratic convergence, one pass over
	 * the data per step).  The better optimum wins.
	 */
	for (int s = 0; s < 2; s++) {
		double q[3] = {starts[s][0], starts[s][1], starts[s][2]};
		double step[3] = {0.3, 0.2, fmax(0.5, 0.3 * fabs(q[2]))};
		nelder_mead(&fs, q, step, 1e-7, 1e-3, 1000);
		newton_polish(&fs, q);
		double fq = nll(&fs, q);
		if (fq < fbest) {
			fbest = fq;
			best[0] = q[0];
			best[1] = q[1];
			best[2] = q[2];
		}
	}
	if (fs.y != fd.y) {
		/*
		 * The likelihood always has a stationary point at alpha = 0 (the
		 * normal fit; Azzalini 1985), where the information is singular.
		 * On nearly symmetric data the subsample cannot tell the sign of
		 * the shape (skewness grows as alpha^3), and Newton on all the
		 * data, started on the wrong side, crept towards that point (24
		 * passes, linear convergence) and stopped there: on 10M values
		 * drawn from SN(50, 6, 0.3) the fit was (51.38, 5.84, -0.0001),
		 * 26 log-likelihood units below the true parameters (issue 33).
		 * The sample skewness of all the data is the better guide to the
		 * sign: when the subsample's shape disagrees with it, Newton
		 * starts from the moment estimate instead.
		 */
		if ((best[2] < 0) != (g1 < 0) && fabs(starts[0][2]) > 0) {
			best[0] = starts[0][0];
			best[1] = starts[0][1];
			best[2] = starts[0][2];
		}
		newton_polish(&fd, best);
		fbest = nll(&fd, best);
	}
	if (!isfinite(fbest)) {
		rc = vpa_fail(err, VPA_ENUMERIC, NULL, "skew-normal fit did not converge");
		goto out;
	}
	out->loc = mean + sd * best[0];
	out->scale = sd * exp(best[1]);
	out->shape = best[2];
out:
	free(sub);
	free(y);
	return rc;
}
