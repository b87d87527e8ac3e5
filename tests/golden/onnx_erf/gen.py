#!/usr/bin/python3
"""tests/golden/onnx_erf/gen.py - the coefficients of onnx/vmath.c's vectorised
float erf (ox_erf_f32), fitted here (Debian python3-numpy 1.24, python3-mpmath 1.2;
erf and erfc in 40-digit arithmetic):

    /usr/bin/python3 tests/golden/onnx_erf/gen.py > tests/golden/onnx_erf/coef.txt

  |x| < 0.9:    erf(x) = x P(x^2),  P of degree 6 fitted to erf(x)/x
  0.9 <= |x| < 4:  erf(x) = 1 - exp(-x^2) Q(t),  t = (|x| - 2.45) / 1.55 in [-1, 1],
                Q of degree 12 fitted to erfcx(x) = exp(x^2) erfc(x)
  |x| >= 4:     erf(x) = sign(x) (1 - erfc(4) = 1 - 1.5e-8 rounds to 1 in float)
Fit: relative least squares on 400 Chebyshev nodes, reweighted 30 times towards
the largest errors (near-minimax).  Prints both coefficient lists (constant term
first, as C float literals with 9 significant digits: float's round trip) and the
relative error of each fit in double.  onnx/vmath.c holds the printed values;
tests/unit/test_vmath_erf.c checks the float result against libm's double erf.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def fit(f, a, b, deg, var):
    n = 400
    k = np.arange(n)
    xs = np.cos(np.pi * (k + 0.5) / n) * (b - a) / 2 + (a + b) / 2
    ys = np.array([float(f(mp.mpf(x))) for x in xs])
    V = np.vander(var(xs), deg + 1, increasing=True)
    w = 1 / np.abs(ys)
    for _ in range(30):
        c, *_ = np.linalg.lstsq(V * w[:, None], ys * w, rcond=None)
        e = (V @ c - ys) / ys
        w = w * (1 + 50 * np.abs(e) / np.abs(e).max())
    return c, np.abs(e).max()


def main():
    pa, ea = fit(lambda x: mp.erf(x) / x, 1e-6, 0.9, 6, lambda x: x * x)
    qb, eb = fit(lambda x: mp.exp(x * x) * mp.erfc(x), 0.9, 4.0, 12, lambda x: (x - 2.45) / 1.55)
    print("P (|x| < 0.9, in x^2), relative error %.2e:" % ea)
    print(", ".join("%.9ef" % v for v in pa))
    print("Q (0.9 <= |x| < 4, in t = (|x| - 2.45) / 1.55), relative error %.2e:" % eb)
    print(", ".join("%.9ef" % v for v in qb))


if __name__ == "__main__":
    main()
