#!/usr/bin/python3
"""
Golden values of the skew-normal log CDF for tests/unit/test_exposure.c.

  log F(z; a),  F(z; a) = int_{-inf}^z 2 phi(t) Phi(a t) dt

computed by mpmath (arbitrary precision, unbounded exponent range) as the
quadrature of the density itself, so the values do not depend on Owen's T
(which vpaudit uses): tanh-sinh quadrature at 40 digits over many panels whose
breakpoints are geometric in the distance to z and to 0 (widths 1e-9 .. 64),
so every scale of the density (1/|a| near 0, 1/k near z) is resolved.  Each
value is printed with 20 significant digits; mpmath's own error estimate is
checked to be below 1e-25 relative, and Gauss-Legendre quadrature over the same
panels must agree with tanh-sinh to 1e-25 relative.  The grid: shapes 0, +-0.1 .. +-1e4, z from
-40 to 40 including +-1e-5 .. +-1e-2 around 0, where large shapes put the
whole lower tail (shape 100, z = 1e-4: F = 0.00322, issue 20).

Cross-check (printed on stderr, not written): scipy.stats.skewnorm.cdf (Boost's
Owen's T) where 1e-300 < F; its largest relative difference is reported in
tests/golden/skewnorm/README.md.

Command (Debian 12, python3-mpmath 1.2.1, python3-scipy 1.10.1):
  /usr/bin/python3 tests/golden/skewnorm/gen_skewnorm_cdf.py > tests/golden/skewnorm/logcdf.txt
"""
import sys
import mpmath as mp

mp.mp.dps = 40

SHAPES = [0, 0.1, 0.5, 1, 2, 5, 10, 30, 100, 300, 1000, 3000, 10000]
SHAPES = sorted(set(SHAPES + [-a for a in SHAPES]))
ZS = [0, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1, 2, 3, 5, 8, 12, 20, 30, 40]
ZS = sorted(set(ZS + [-z for z in ZS]))
GEOM = [mp.mpf(2) ** k for k in range(-30, 7)]  # 1e-9 .. 64


def logdensity(t, a):
    return mp.log(2 * mp.npdf(t) * mp.ncdf(a * t))


def logcdf(z, a):
    z = mp.mpf(z)
    lo = (z if z < 0 else mp.mpf(0)) - 100
    pts = {lo, z}
    for s in GEOM:
        for p in (z - s, s, -s):
            if lo < p < z:
                pts.add(p)
    pts = sorted(pts)
    a = mp.mpf(a)
    # mpmath's quadrature stops on an absolute error near 10^-dps: scale the
    # integrand by the largest density value at the breakpoints
    m = max(logdensity(p, a) for p in pts)
    f = lambda t: mp.exp(logdensity(t, a) - m)
    v, e = mp.quad(f, pts, error=True)
    w = mp.quad(f, pts, method="gauss-legendre")
    if not (v > 0) or e > mp.mpf(10) ** -25 * v or abs(v - w) > mp.mpf(10) ** -25 * v:
        raise SystemExit("quadrature failed at z=%r a=%r: %r +- %r (gauss-legendre %r)"
                         % (z, a, v, e, w))
    return mp.log(v) + m


def main():
    rows = []
    for a in SHAPES:
        for z in ZS:
            rows.append((z, a, logcdf(z, a)))
    print("# skew-normal log CDF: z shape logF (natural log), mpmath %s quadrature of the"
          % mp.__version__)
    print("# density at 40 digits; generator: tests/golden/skewnorm/gen_skewnorm_cdf.py")
    for z, a, l in rows:
        print("%r %r %s" % (float(z), float(a), mp.nstr(l, 20, min_fixed=-1, max_fixed=-1)))
    try:
        from scipy.stats import skewnorm
        import math
        worst = (0, None)
        for z, a, l in rows:
            f = float(mp.exp(l))
            if f > 1e-300:
                s = skewnorm.cdf(z, a)
                d = abs(s - f) / f
                if d > worst[0]:
                    worst = (d, (z, a, f, s))
        print("scipy.stats.skewnorm.cdf: largest relative difference %.3g at %r"
              % worst, file=sys.stderr)
    except ImportError:
        print("scipy not available: no cross-check", file=sys.stderr)


main()
