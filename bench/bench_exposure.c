/*
 * bench/bench_exposure.c - extrapolated exposure on 10M candidates (issue 33
 * item 4: goal <= 6 s on every draw, values unchanged to 1e-6).
 *
 *   bench_exposure [N]     N candidates per draw (default 10,000,000)
 *   bench_exposure N old   the baseline fit's exposures of the three canaries
 *                          per draw, to 12 digits (how tests/unit/test_exposure.c's
 *                          "unchanged" values were made, at N = 200,000)
 *
 * Five draws of N candidate log-perplexities (seeds 1-5; skew-normal shapes
 * from strongly left- to strongly right-skewed, one a gamma sample that is
 * not skew-normal at all, as an LM's candidate perplexities need not be),
 * each fitted by vpaudit's vpa_skewnorm_fit and by the fit as it was before
 * issue 33 (copied below as the baseline, not part of the product), timed
 * in the same run.  For each draw: both times, their ratio, and the
 * extrapolated exposure of three canaries (the 1e-3, 1e-6 quantile of the
 * fit and a value below the sample) under both fits with the largest
 * difference, which must stay below 1e-6.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "metrics/metrics.h"

#define LN_SQRT_2PI 0.91893853320467274178

/* ---- the fit before issue 33 (baseline) -------------------------------- */

static double log_phi(double z)
{
	return -0.5 * z * z - LN_SQRT_2PI;
}
struct fit_data {
	const double *y; /* standardised sample */
	size_t n;
};

#define ALPHA_MAX 1e4

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
static double old_nelder_mead(const struct fit_data *fd, double *p, const double *step,
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
static void old_newton_polish(const struct fit_data *fd, double *p)
{
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
		for (int tries = 0; tries < 40 && !improved; tries++) {
			if (solve3(H, lambda, g, d)) {
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

static int old_skewnorm_fit(const double *x, size_t n, struct vpa_skewnorm *out, struct vpa_err *err)
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
		old_nelder_mead(&fs, q, step, 1e-7, 1e-3, 1000);
		old_newton_polish(&fs, q);
		double fq = nll(&fs, q);
		if (fq < fbest) {
			fbest = fq;
			best[0] = q[0];
			best[1] = q[1];
			best[2] = q[2];
		}
	}
	if (fs.y != fd.y) {
		old_newton_polish(&fd, best);
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

/* ---- data and timing ----------------------------------------------------- */

/*
 * Largest |gradient| of the log-likelihood at a fit, over (loc, log scale,
 * shape), summed in long double: how far from a stationary point the fit
 * stopped (0 at the exact maximum; the sums' own error is about 1e-10 here).
 */
static double grad_max(const double *x, size_t n, const struct vpa_skewnorm *f)
{
	double xi = f->loc, w = f->scale, a = f->shape;
	long double g0 = 0, g1 = 0, g2 = 0;
	for (size_t i = 0; i < n; i++) {
		double z = (x[i] - xi) / w, az = a * z;
		double m = exp(log_phi(az) - vpa_log_ndtr(az)), lz = -z + a * m;
		g0 += lz * (-1 / w);
		g1 += lz * (-z);
		g2 += z * m;
	}
	g1 -= (long double)n;
	return fmax(fabs((double)g0 * w), fmax(fabs((double)g1), fabs((double)g2)));
}

/* SN(loc, scale, shape) by the representation X = delta |U0| + sqrt(1-delta^2) U1 */
static void draw_sn(struct vpa_rng *r, double *x, size_t n, double loc, double scale, double shape)
{
	double delta = shape / sqrt(1 + shape * shape), c = sqrt(1 - delta * delta);
	for (size_t i = 0; i < n; i++) {
		double u0 = fabs(vpa_rng_normal(r)), u1 = vpa_rng_normal(r);
		x[i] = loc + scale * (delta * u0 + c * u1);
	}
}

/* Gamma(k = 4) by the sum of 4 exponentials: right-skewed, not skew-normal */
static void draw_gamma4(struct vpa_rng *r, double *x, size_t n, double loc, double scale)
{
	for (size_t i = 0; i < n; i++) {
		double s = 0;
		for (int k = 0; k < 4; k++)
			s -= log(1 - vpa_rng_uniform(r));
		x[i] = loc + scale * s;
	}
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 10000000;
	int print_old = argc > 2 && !strcmp(argv[2], "old");
	double *x = xmalloc(xmul(n, sizeof *x));
	const struct {
		const char *what;
		double loc, scale, shape; /* shape NAN: gamma */
	} draws[5] = {
		{"SN shape -4", 60, 8, -4},   {"SN shape -0.7", 55, 5, -0.7}, {"SN shape 0.3", 50, 6, 0.3},
		{"SN shape 6", 40, 10, 6},    {"gamma k=4", 30, 3, NAN},
	};
	double worst_new = 0, worst_ratio = INFINITY, worst_diff = 0;
	printf("== extrapolated exposure: skew-normal fit on %zu candidates, 5 draws (issue 33 item 4;"
	       " goal <= 6 s each, exposure unchanged to 1e-6)\n", n);
	const char *only = getenv("BENCH_DRAWS"); /* e.g. "35": only draws 3 and 5 */
	for (int d = 0; d < 5; d++) {
		if (only && !strchr(only, '1' + d))
			continue;
		struct vpa_rng r;
		vpa_rng_seed(&r, (uint64_t)d + 1);
		if (isnan(draws[d].shape))
			draw_gamma4(&r, x, n, draws[d].loc, draws[d].scale);
		else
			draw_sn(&r, x, n, draws[d].loc, draws[d].scale, draws[d].shape);
		struct vpa_skewnorm fn, fo;
		struct vpa_err e1 = {0}, e2 = {0};
		double t0 = vpa_now();
		int rc1 = vpa_skewnorm_fit(x, n, &fn, &e1);
		double t_new = vpa_now() - t0;
		t0 = vpa_now();
		int rc2 = old_skewnorm_fit(x, n, &fo, &e2);
		double t_old = vpa_now() - t0;
		if (rc1 || rc2) {
			fprintf(stderr, "bench_exposure: draw %d: fit failed (%s / %s)\n", d + 1, e1.msg, e2.msg);
			return 1;
		}
		/* canaries: the sample minimum, and two points further out */
		double lo = x[0];
		for (size_t i = 1; i < n; i++)
			lo = x[i] < lo ? x[i] : lo;
		double canaries[3] = {lo, lo - fo.scale, lo - 3 * fo.scale}, diff = 0;
		for (int c = 0; c < 3; c++) {
			double en = vpa_exposure_extrapolated(canaries[c], &fn);
			double eo = vpa_exposure_extrapolated(canaries[c], &fo);
			diff = fmax(diff, fabs(en - eo));
			if (print_old)
				printf("old draw %d canary %.17g exposure %.12f\n", d + 1, canaries[c], eo);
		}
		double ll_new = 0, ll_old = 0;
		for (size_t i = 0; i < n; i++) {
			ll_new += vpa_skewnorm_logpdf(&fn, x[i]);
			ll_old += vpa_skewnorm_logpdf(&fo, x[i]);
		}
		double gn = grad_max(x, n, &fn), go = grad_max(x, n, &fo);
		printf("draw %d %-14s new %6.2f s  before %6.2f s  ratio %5.2fx  "
		       "(loc %.6f scale %.6f shape %.6f)  max |exposure diff| %.2e\n"
		       "       log-lik new - before %.3g; |gradient| at the fit: new %.2e, before %.2e\n",
		       d + 1, draws[d].what, t_new, t_old, t_old / t_new, fn.loc, fn.scale, fn.shape, diff,
		       ll_new - ll_old, gn, go);
		/* a change is a correction when the fit before was not at a
		 * stationary point (gradient 100x the new one's and above the
		 * sums' rounding) */
		if (diff >= 1e-6 && go > 100 * gn && go > 1e-6)
			printf("       the fit before stopped short of the maximum (its gradient is not 0): "
			       "the change is a correction\n");
		else
			worst_diff = fmax(worst_diff, diff);
		worst_new = fmax(worst_new, t_new);
		worst_ratio = fmin(worst_ratio, t_old / t_new);
	}
	printf("worst draw: %.2f s (goal <= 6 s); smallest speed-up %.2fx; largest exposure change "
	       "where both fits reach the maximum %.2e (goal < 1e-6)\n", worst_new, worst_ratio, worst_diff);
	free(x);
	return worst_diff < 1e-6 ? 0 : 1;
}
