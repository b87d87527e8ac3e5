/*
 * metrics/pld.c - the PLD accountant (metrics/pld.h says what and why).
 *
 * Numbers: the one-step hockey-stick curve is evaluated in long double (x86's
 * 64-bit mantissa) because the PMF is its second difference on the grid; the
 * FFT (fft_radix2 below) and the composed PMF are double.
 */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/pld.h"

/* Mass each side of the composed window may leave out (Chernoff bound). */
#define TAIL 1e-18
/* The one-step grid spans the losses of x in [-Z sigma, 1 + Z sigma]; what
 * lies beyond is of order Phi(-12) ~ 2e-33 and is kept pessimistically
 * (+inf mass) in the upper bound. */
#define ZSPAN 12.0
#define MAX_POINTS ((size_t)1 << 23)

struct dir {
	long long a; /* composed grid index of window entry 0 */
	size_t n;    /* window entries */
	double *sa;  /* sa[m] = sum of c[m'] over m' >= m (n + 1 entries) */
	double *sb;  /* sb[m] = sum of c[m'] e^{-k' dt} over m' >= m with k' > 0 */
	double inf;  /* mass counted at +inf: the grid's, composed, and both tails */
};

struct vpa_pld {
	double dt;
	int trivial; /* q = 0: nothing released */
	int has_lower;
	struct dir d[2][2]; /* [upper][0 remove, 1 add] */
};

static long double phi_bar(long double z)
{
	return 0.5L * erfcl(z / sqrtl(2.0L));
}

/*
 * One step's hockey-stick divergence delta(eps) = sup_S P(S) - e^eps Q(S),
 * its derivative in x = e^eps (which is -Q(L > eps)) and *rest = delta - (1 - x)
 * = x Q(L <= eps) - P(L <= eps), which keeps its digits where delta is near 1
 * (the PMF is a second difference, and 1 - x has none).  dir 0: remove
 * (P the mixture), 1: add (Q the mixture).  x is the threshold on the
 * Gaussian's value where the privacy loss crosses eps.
 */
static void hockey(int dir, long double q, long double s, long double eps, long double *delta,
		   long double *deriv, long double *rest)
{
	if (dir == 0) {
		long double u = expm1l(eps) + q; /* e^eps - (1 - q) */
		if (u <= 0) { /* eps below every loss: S = everything */
			*delta = -expm1l(eps);
			*deriv = -1;
			*rest = 0;
			return;
		}
		long double x = s * s * logl(u / q) + 0.5L;
		long double t0 = phi_bar(x / s), t1 = phi_bar((x - 1) / s);
		*delta = q * t1 - u * t0;
		*deriv = -t0;
		*rest = u * phi_bar(-x / s) - q * phi_bar((1 - x) / s);
	} else {
		long double u = expm1l(-eps) + q; /* e^-eps - (1 - q) */
		if (u <= 0) { /* eps above every loss */
			*delta = 0;
			*deriv = 0;
			*rest = expm1l(eps);
			return;
		}
		long double x = s * s * logl(u / q) + 0.5L;
		long double p0 = phi_bar(-x / s), p1 = phi_bar((1 - x) / s); /* Phi(x/s), Phi((x-1)/s) */
		long double b0 = phi_bar(x / s), b1 = phi_bar((x - 1) / s);
		*delta = expl(eps) * (u * p0 - q * p1);
		*deriv = -((1 - q) * p0 + q * p1);
		*rest = expl(eps) * ((1 - q) * b0 + q * b1) - b0;
	}
	if (*delta < 0) /* rounding where both terms are ~1e-4900 */
		*delta = 0;
}

static double log_add(double a, double b)
{
	if (a < b) {
		double t = a;
		a = b;
		b = t;
	}
	if (b == -INFINITY)
		return a;
	return a + log1p(exp(b - a));
}

/* The remove direction's privacy loss at the Gaussian's value x. */
static double loss_remove(double q, double s, double x)
{
	return log_add(log1p(-q), log(q) + (2 * x - 1) / (2 * s * s));
}

/*
 * The PMF on the grid x_j = e^{(i0 + j) dt} whose hockey-stick curve passes
 * through (0, y_at0) and (x_j, y[j]), is linear in x between them and flat at
 * y[n-1] beyond x_{n-1}: the kink at x_j has slope change p_j e^{-l_j}.
 * With rest (y - (1 - x), see hockey; NULL for the lower curve) and y_at0 = 1
 * the slopes where y > 1/2 are taken as -1 + those of rest, which keep
 * their digits there.  A negative p_j can only come from rounding (y is
 * convex) and is set to 0.
 */
static void pmf_from_curve(long double y_at0, const long double *y, const long double *rest,
			   size_t n, long long i0, double dt, double *p, double *pinf)
{
	long double em1 = expm1l((long double)dt);
	long double x0 = expl((long double)i0 * dt);
	long double prev = (y[0] - y_at0) / x0; /* slope on [0, x_0] */
	if (rest && y[0] > 0.5L)
		prev = -1 + rest[0] / x0;
	long double x = x0;
	for (size_t j = 0; j < n; j++) {
		long double next = 0;
		if (j + 1 < n && rest && y[j] > 0.5L && y[j + 1] > 0.5L)
			next = -1 + (rest[j + 1] - rest[j]) / (x * em1);
		else if (j + 1 < n)
			next = (y[j + 1] - y[j]) / (x * em1);
		long double v = x * (next - prev);
		p[j] = v > 0 ? (double)v : 0;
		prev = next;
		x = expl((long double)(i0 + (long long)j + 1) * dt);
	}
	*pinf = y[n - 1] > 0 ? (double)y[n - 1] : 0;
}

/*
 * The lower curve, from values at the grid (y, d: the curve and its slope at
 * x_j) and at the middle of each interval (ym, dm: at (x_{j-1} + x_j) / 2,
 * index j for the interval ending at x_j, index 0 for [0, x_0]).  On each
 * interval a tangent of the convex curve lies below it; a segment whose two
 * ends are below one tangent is below the curve.  The tangent is the one at
 * the middle (error delta'' h^2 / 8) where it is non-negative at both ends,
 * else the one at the right end (non-negative there and to its left).  Each
 * grid value is the smaller of its two intervals' ends, the last one 0 (no
 * +inf mass); the lower convex hull of these points makes the PMF
 * non-negative and stays below them.  *y_at0 gets the value at x = 0 (the
 * total mass, at most 1).  y is replaced.
 */
static void lower_curve(long double *y, const long double *d, const long double *ym,
			const long double *dm, size_t n, long long i0, double dt, long double *y_at0)
{
	size_t m = n + 1;
	long double *X = xmalloc(m * sizeof(*X)), *V = xmalloc(m * sizeof(*V));
	size_t *hull = xmalloc(m * sizeof(*hull));
	X[0] = 0;
	for (size_t j = 0; j < n; j++) {
		X[j + 1] = expl((long double)(i0 + (long long)j) * dt);
		V[j + 1] = y[j];
	}
	V[0] = 1;
	for (size_t k = 0; k < n; k++) { /* interval [X[k], X[k+1]] */
		long double xa = X[k], xb = X[k + 1], xm = (xa + xb) / 2;
		long double ta = ym[k] + dm[k] * (xa - xm), tb = ym[k] + dm[k] * (xb - xm);
		if (!(ta >= 0 && tb >= 0)) { /* the right end's tangent */
			ta = y[k] + d[k] * (xa - xb);
			tb = y[k];
		}
		if (ta < V[k])
			V[k] = ta;
		if (tb < V[k + 1])
			V[k + 1] = tb;
	}
	V[n] = 0;
	/* monotone chain, lower hull */
	size_t h = 0;
	for (size_t k = 0; k < m; k++) {
		while (h >= 2) {
			size_t o = hull[h - 2], a = hull[h - 1];
			long double cr = (X[a] - X[o]) * (V[k] - V[o]) - (V[a] - V[o]) * (X[k] - X[o]);
			if (cr > 0)
				break;
			h--;
		}
		hull[h++] = k;
	}
	*y_at0 = V[0];
	size_t seg = 0;
	for (size_t k = 1; k < m; k++) {
		while (hull[seg + 1] < k)
			seg++;
		size_t l = hull[seg], r = hull[seg + 1];
		y[k - 1] = k == r ? V[r] : V[l] + (V[r] - V[l]) * (X[k] - X[l]) / (X[r] - X[l]);
	}
	free(X);
	free(V);
	free(hull);
}

/* The smallest power of two >= want (and >= 2): fft_radix2's sizes. */
static size_t fft_size(size_t want)
{
	size_t n = 2;
	while (n < want)
		n <<= 1;
	return n;
}

/*
 * In-place iterative radix-2 FFT of n (a power of two) double complex
 * values; inv: the unnormalised inverse.  Written here rather than taken
 * from FFTW (GPL-2+: it would make every vpaudit binary GPL) or KissFFT
 * (Debian builds it for float only, too coarse for probabilities of 1e-18):
 * plain C without CPU dispatch, so the composed PLD is the same on every
 * x86-64 runner (--portable).  Twiddles come from sin/cos of each index
 * (no recurrence, whose error grows with n): relative error O(log n) ulps.
 */
static void fft_radix2(double complex *x, size_t n, int inv)
{
	for (size_t i = 1, j = 0; i < n; i++) { /* bit reversal */
		size_t bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			double complex t = x[i];
			x[i] = x[j];
			x[j] = t;
		}
	}
	double complex *w = xmalloc(xmul(n / 2 ? n / 2 : 1, sizeof(*w)));
	for (size_t k = 0; k < n / 2; k++) {
		double a = -2.0 * M_PI * (double)k / (double)n;
		w[k] = cos(a) + (inv ? -sin(a) : sin(a)) * I;
	}
	for (size_t len = 2; len <= n; len <<= 1) {
		size_t step = n / len, half = len / 2;
		for (size_t i = 0; i < n; i += len)
			for (size_t k = 0; k < half; k++) {
				double complex u = x[i + k], v = x[i + k + half] * w[k * step];
				x[i + k] = u + v;
				x[i + k + half] = u - v;
			}
	}
	free(w);
}

/* log sum_j p_j e^{lam l_j} over the PMF's positive entries. */
static double log_mgf(const double *lp, size_t n, long long i0, double dt, double lam)
{
	double mx = -INFINITY;
	for (size_t j = 0; j < n; j++) {
		double v = lp[j] + lam * (double)(i0 + (long long)j) * dt;
		if (v > mx)
			mx = v;
	}
	if (mx == -INFINITY)
		return -INFINITY;
	double s = 0;
	for (size_t j = 0; j < n; j++)
		if (lp[j] > -INFINITY)
			s += exp(lp[j] + lam * (double)(i0 + (long long)j) * dt - mx);
	return mx + log(s);
}

/*
 * T-fold composition of the one-step PMF p (n entries from grid index i0, and
 * pinf at +inf) on the window of composed losses outside which a Chernoff
 * bound leaves at most TAIL on each side.  The circular convolution folds the
 * mass outside the window into it (entries only grow); the mass itself is
 * counted at +inf, so every delta stays an upper bound, and a lower bound
 * after subtracting the two tails (vpa_pld_delta).
 */
static int compose(const double *p, size_t n, long long i0, double pinf, double T, double dt,
		   struct dir *d, struct vpa_err *err)
{
	double *lp = xmalloc(n * sizeof(*lp));
	for (size_t j = 0; j < n; j++)
		lp[j] = p[j] > 0 ? log(p[j]) : -INFINITY;
	/* window [a, b] in losses: P(S >= b) <= e^{-lam b} M(lam)^T <= TAIL */
	double a = -INFINITY, b = INFINITY;
	for (int k = -12; k <= 14; k += 2) { /* lambda 2^-12 .. 2^14, factor 4 */
		double lam = ldexp(1.0, k);
		double up = (T * log_mgf(lp, n, i0, dt, lam) - log(TAIL)) / lam;
		double lo = (log(TAIL) - T * log_mgf(lp, n, i0, dt, -lam)) / lam;
		if (up < b)
			b = up;
		if (lo > a)
			a = lo;
	}
	free(lp);
	double kmin = T * (double)i0, kmax = T * (double)(i0 + (long long)n - 1);
	double A = floor(a / dt), B = ceil(b / dt);
	if (!(A >= kmin))
		A = kmin;
	if (!(B <= kmax))
		B = kmax;
	if (B < A)
		B = A;
	if (B - A + 1 > (double)MAX_POINTS)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"the composed privacy loss spans %.0f grid points (at most %zu): "
				"choose a larger --discretisation than %g", B - A + 1, MAX_POINTS, dt);
	size_t N = (size_t)(B - A + 1), nf = fft_size(N);
	double complex *x = xcalloc(nf, sizeof(*x));
	for (size_t j = 0; j < n; j++) /* position j mod nf: folding is harmless */
		x[j % nf] += p[j];
	fft_radix2(x, nf, 0);
	for (size_t k = 0; k < nf; k++) {
		double complex z = x[k];
		x[k] = z == 0 ? 0 : cexp(T * clog(z));
	}
	fft_radix2(x, nf, 1);
	/* composed index K sits at position (K - T i0) mod nf */
	long long Ai = (long long)A, shift = (Ai - (long long)T * i0) % (long long)nf;
	if (shift < 0)
		shift += (long long)nf;
	d->a = Ai;
	d->n = N;
	d->sa = xmalloc((N + 1) * sizeof(double));
	d->sb = xmalloc((N + 1) * sizeof(double));
	long double sa = 0, sb = 0;
	d->sa[N] = d->sb[N] = 0;
	for (size_t m = N; m-- > 0;) {
		double c = creal(x[((size_t)shift + m) % nf]) / (double)nf;
		if (c < 0) /* FFT rounding (~1e-17): an entry is a probability */
			c = 0;
		long long K = Ai + (long long)m;
		sa += c;
		if (K > 0)
			sb += (long double)c * expl(-(long double)K * dt);
		d->sa[m] = (double)sa;
		d->sb[m] = (double)sb;
	}
	free(x);
	d->inf = -expm1(T * log1p(-pinf)) + 2 * TAIL;
	return 0;
}

/*
 * delta at eps counting the composed losses of grid index >= kabove (those
 * above eps: kabove = floor(eps / dt) + 1, computed by the caller so that
 * grid points are exact).
 */
static double delta_from(const struct dir *d, long long kabove, double eps, int upper)
{
	long long m = kabove - d->a;
	size_t mi = m <= 0 ? 0 : m >= (long long)d->n ? d->n : (size_t)m;
	double v = d->sa[mi] - exp(eps) * d->sb[mi];
	if (v < 0)
		v = 0;
	/* upper: the +inf mass and the tails; lower: the window's entries may
	 * hold folded tail mass, at most 2 TAIL */
	if (upper)
		return v + d->inf;
	v -= 2 * TAIL;
	return v > 0 ? v : 0;
}

static double dir_delta(const struct dir *d, double dt, double eps, int upper)
{
	return delta_from(d, (long long)floor(eps / dt) + 1, eps, upper);
}

/* delta at the grid point k dt */
static double delta_grid(const struct dir *d, double dt, long long k, int upper)
{
	return delta_from(d, k + 1, (double)k * dt, upper);
}

static double dir_epsilon(const struct dir *d, double dt, double delta, int upper)
{
	if (delta_grid(d, dt, 0, upper) <= delta)
		return 0;
	if (upper && delta <= d->inf)
		return INFINITY;
	/* delta(k dt) > delta at lo, <= at hi; above the window delta = inf */
	long long lo = 0, hi = d->a + (long long)d->n;
	if (hi < 1)
		hi = 1;
	while (delta_grid(d, dt, hi, upper) > delta) {
		if (hi > (1LL << 40))
			return INFINITY;
		hi *= 2;
	}
	while (hi - lo > 1) {
		long long mid = lo + (hi - lo) / 2;
		if (delta_grid(d, dt, mid, upper) <= delta)
			hi = mid;
		else
			lo = mid;
	}
	/* on (lo dt, hi dt) the losses above eps are those of index >= hi:
	 * solve sa - e^eps sb + c = delta there */
	long long m = hi - d->a;
	size_t mi = m <= 0 ? 0 : m >= (long long)d->n ? d->n : (size_t)m;
	double c = upper ? d->inf : -2 * TAIL;
	double eps = (double)hi * dt;
	if (d->sb[mi] > 0) {
		double e = log((d->sa[mi] + c - delta) / d->sb[mi]);
		if (e >= (double)lo * dt && e <= eps)
			eps = e;
	}
	return eps;
}

static void dir_free(struct dir *d)
{
	free(d->sa);
	free(d->sb);
	d->sa = d->sb = NULL;
}

static int pld_build(double q, double sigma, double steps, double dt, int with_lower,
		     struct vpa_pld **out, struct vpa_err *err)
{
	*out = NULL;
	if (!(q >= 0 && q <= 1))
		return vpa_fail(err, VPA_EINPUT, NULL, "sampling rate must be in [0, 1], got %g", q);
	if (!(sigma > 0 && isfinite(sigma)))
		return vpa_fail(err, VPA_EINPUT, NULL, "noise multiplier must be > 0, got %g", sigma);
	if (!(steps >= 1 && steps <= VPA_PLD_MAX_STEPS && steps == floor(steps)))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"the PLD accountant takes 1 to %.0f steps, got %.15g", VPA_PLD_MAX_STEPS,
				steps);
	if (!(dt >= 1e-6 && dt <= 0.1))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"discretisation interval must be in [1e-6, 0.1], got %g", dt);
	struct vpa_pld *P = xcalloc(1, sizeof(*P));
	P->dt = dt;
	P->has_lower = with_lower;
	if (q == 0) {
		P->trivial = 1;
		*out = P;
		return 0;
	}
	/* remove: losses of x in [-Z s, 1 + Z s]; add: their negatives */
	double rlo = loss_remove(q, sigma, -ZSPAN * sigma), rhi = loss_remove(q, sigma, 1 + ZSPAN * sigma);
	for (int dir = 0; dir < 2; dir++) {
		double lo = dir == 0 ? rlo : -rhi, hi = dir == 0 ? rhi : -rlo;
		double i0d = floor(lo / dt), i1d = ceil(hi / dt);
		if (i1d <= i0d)
			i1d = i0d + 1;
		if (i1d - i0d + 1 > (double)MAX_POINTS) {
			vpa_pld_free(P);
			return vpa_fail(err, VPA_EINPUT, NULL,
					"one step's privacy loss spans %.0f grid points (at most %zu): "
					"choose a larger --discretisation than %g",
					i1d - i0d + 1, MAX_POINTS, dt);
		}
		long long i0 = (long long)i0d;
		size_t n = (size_t)(i1d - i0d) + 1;
		long double *y = xmalloc(n * sizeof(*y)), *dv = xmalloc(n * sizeof(*dv));
		long double *rest = xmalloc(n * sizeof(*rest)), *ym = NULL, *dm = NULL, rm;
		double *p = xmalloc(n * sizeof(*p)), pinf;
		for (size_t j = 0; j < n; j++)
			hockey(dir, q, sigma, (long double)(i0 + (long long)j) * dt, &y[j], &dv[j], &rest[j]);
		if (with_lower) { /* the middles of [0, x_0], [x_0, x_1], ... */
			ym = xmalloc(n * sizeof(*ym));
			dm = xmalloc(n * sizeof(*dm));
			long double em = logl((1 + expl(-(long double)dt)) / 2); /* log of the middle - right end */
			for (size_t j = 0; j < n; j++) {
				long double e = (long double)(i0 + (long long)j) * dt;
				hockey(dir, q, sigma, j ? e + em : e - logl(2.0L), &ym[j], &dm[j], &rm);
			}
		}
		int rc = 0;
		for (int upper = 1; upper >= 0 && !rc; upper--) {
			if (!upper && !with_lower)
				break;
			long double at0 = 1;
			if (!upper)
				lower_curve(y, dv, ym, dm, n, i0, dt, &at0);
			pmf_from_curve(at0, y, upper ? rest : NULL, n, i0, dt, p, &pinf);
			rc = compose(p, n, i0, upper ? pinf : 0, steps, dt, &P->d[upper][dir], err);
		}
		free(ym);
		free(dm);
		free(rest);
		free(y);
		free(dv);
		free(p);
		if (rc) {
			vpa_pld_free(P);
			return rc;
		}
	}
	*out = P;
	return 0;
}

int vpa_pld_new(double q, double sigma, double steps, double interval, struct vpa_pld **out,
		struct vpa_err *err)
{
	return pld_build(q, sigma, steps, interval, 1, out, err);
}

void vpa_pld_free(struct vpa_pld *p)
{
	if (!p)
		return;
	for (int u = 0; u < 2; u++)
		for (int d = 0; d < 2; d++)
			dir_free(&p->d[u][d]);
	free(p);
}

double vpa_pld_delta(const struct vpa_pld *p, double eps, int upper)
{
	if (p->trivial)
		return 0;
	if (!upper && !p->has_lower)
		return NAN;
	double a = dir_delta(&p->d[upper][0], p->dt, eps, upper);
	double b = dir_delta(&p->d[upper][1], p->dt, eps, upper);
	return a > b ? a : b;
}

double vpa_pld_epsilon(const struct vpa_pld *p, double delta, int upper)
{
	if (p->trivial)
		return 0;
	if (!upper && !p->has_lower)
		return NAN;
	double a = dir_epsilon(&p->d[upper][0], p->dt, delta, upper);
	double b = dir_epsilon(&p->d[upper][1], p->dt, delta, upper);
	return a > b ? a : b;
}

double vpa_pld_inf_mass(const struct vpa_pld *p)
{
	if (p->trivial)
		return 0;
	double a = p->d[1][0].inf, b = p->d[1][1].inf;
	return a > b ? a : b;
}

/* The upper-bound epsilon at sigma; +inf where the grid is too large (so
 * little noise that the loss spans more points than we compose). */
static int eps_at(double q, double sigma, double steps, double delta, double dt, double *eps,
		  struct vpa_err *err)
{
	struct vpa_pld *P;
	struct vpa_err e2;
	vpa_err_init(&e2);
	int rc = pld_build(q, sigma, steps, dt, 0, &P, &e2);
	if (rc == VPA_EINPUT && strstr(e2.msg, "grid points")) {
		*eps = INFINITY;
		return 0;
	}
	if (rc)
		return vpa_fail(err, rc, NULL, "%s", e2.msg);
	*eps = vpa_pld_epsilon(P, delta, 1);
	vpa_pld_free(P);
	return 0;
}

int vpa_pld_sigma(double q, double eps, double steps, double delta, double interval,
		  double *sigma, struct vpa_err *err)
{
	*sigma = 0;
	if (!(eps > 0 && isfinite(eps)))
		return vpa_fail(err, VPA_EINPUT, NULL, "target epsilon must be > 0, got %g", eps);
	if (!(delta > 0 && delta < 1))
		return vpa_fail(err, VPA_EINPUT, NULL, "delta must be in (0, 1), got %g", delta);
	if (q == 0)
		return 0;
	double lo = 0.5, hi = 1, e;
	for (;;) { /* hi: enough noise */
		if (eps_at(q, hi, steps, delta, interval, &e, err))
			return err->status;
		if (e <= eps)
			break;
		lo = hi;
		hi *= 2;
		if (hi > 1e6)
			return vpa_fail(err, VPA_ENUMERIC, NULL,
					"no noise multiplier up to 1e6 reaches epsilon %g", eps);
	}
	if (lo == 0.5) { /* hi = 1 was enough: find a lo that is not */
		for (;;) {
			if (eps_at(q, lo, steps, delta, interval, &e, err))
				return err->status;
			if (e > eps)
				break;
			hi = lo;
			lo /= 2;
			if (lo < 1e-4) { /* the grid is too large before this */
				*sigma = hi;
				return 0;
			}
		}
	}
	while (hi / lo > 1 + 1e-6) {
		double mid = sqrt(lo * hi);
		if (eps_at(q, mid, steps, delta, interval, &e, err))
			return err->status;
		if (e <= eps)
			hi = mid;
		else
			lo = mid;
	}
	*sigma = hi;
	return 0;
}

double vpa_pld_claim(double q, double sigma, double steps, double delta)
{
	struct vpa_pld *p = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	if (!(q > 0) || !(steps >= 1) || steps > VPA_PLD_MAX_STEPS ||
	    vpa_pld_new(q, sigma, floor(steps), VPA_PLD_INTERVAL_DEFAULT, &p, &err))
		return NAN;
	double e = vpa_pld_epsilon(p, delta, 1);
	vpa_pld_free(p);
	return e;
}
