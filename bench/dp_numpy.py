#!/usr/bin/python3
"""bench/dp_numpy.py - Python references for bench/dp_python.sh (issue 28's
"ratios against a Python reference run in the same bench"); not used by the tests.

  pld Q SIGMA STEPS DELTA INTERVAL  -> "seconds epsilon"
      A privacy-loss-distribution accountant for the Poisson-subsampled Gaussian
      mechanism under add/remove adjacency written with NumPy/SciPy the way Google
      dp_accounting's PLD does it: losses rounded UP to a grid of the interval
      (pessimistic), tails below 1e-15 moved pessimistically (right tail to an
      infinite loss, left tail up to the window's left edge), composition by
      FFT convolution with repeated squaring, delta(eps) by the hockey-stick
      divergence, eps(delta) by bisection; the larger of the two directions.
  audit IN.npy OUT.npy ALPHA -> "seconds epsilon"
      The Clopper-Pearson audit of `vpaudit dp audit --in --out` (Jagielski et
      al. 2020) over every threshold, Bonferroni over the thresholds tried:
      numpy sort, counts by searchsorted, scipy.stats.beta.ppf for the bounds.
"""
import math
import sys
import time

import numpy as np
from scipy import signal
from scipy.stats import beta, norm

TAIL = 1e-15


def one_step(q, s, h, remove):
    """PMF of the rounded-up loss on grid k*h (offset, pmf) and the infinite mass."""
    if remove:  # X ~ P = (1-q) N(0,s^2) + q N(1,s^2), L increasing in x
        xlo, xhi = norm.ppf(TAIL, 0, s), norm.isf(TAIL, 1, s)
        loss = lambda x: np.log1p(q * np.expm1((2 * x - 1) / (2 * s * s)))
        cdf = lambda x: (1 - q) * norm.cdf(x, 0, s) + q * norm.cdf(x, 1, s)
    else:  # X ~ N(0,s^2), L = -log(1 - q + q e^{(2x-1)/(2s^2)}) decreasing in x
        xlo, xhi = norm.ppf(TAIL, 0, s), norm.isf(TAIL, 0, s)
        loss = lambda x: -np.log1p(q * np.expm1((2 * x - 1) / (2 * s * s)))
        cdf = lambda x: norm.sf(x, 0, s)  # P(L <= l) = P(X >= x(l))
    l1, l2 = sorted((float(loss(xlo)), float(loss(xhi))))
    klo, khi = math.floor(l1 / h), math.ceil(l2 / h)
    k = np.arange(klo - 1, khi + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if remove:
            xt = s * s * np.log((np.exp(k * h) - (1 - q)) / q) + 0.5
        else:
            xt = s * s * np.log((np.exp(-k * h) - (1 - q)) / q) + 0.5
    # no x reaches a loss beyond the range: P(L <= kh) is 0 below it (remove) and 1 above
    # it (add), which x = -inf gives in both cases
    xt = np.where(np.isnan(xt), -np.inf, xt)
    c = cdf(xt)  # P(L <= k h)
    pmf = np.diff(c)  # mass of ((k-1)h, kh] at k
    pmf[0] += c[0]  # everything below moves up to the first point
    return klo, np.maximum(pmf, 0), max(0.0, 1 - c[-1])


def truncate(off, p):
    cs = np.cumsum(p)
    lo = int(np.searchsorted(cs, TAIL))  # left tail moves up to lo
    rcs = np.cumsum(p[::-1])
    cut = int(np.searchsorted(rcs, TAIL))  # right tail becomes infinite
    inf = float(rcs[cut - 1]) if cut > 0 else 0.0
    hi = len(p) - cut
    q = p[lo:hi].copy()
    q[0] += cs[lo - 1] if lo > 0 else 0.0
    return off + lo, q, inf


def compose(a, b):
    (oa, pa, ia), (ob, pb, ib) = a, b
    p = np.maximum(signal.fftconvolve(pa, pb), 0)
    off, p, inf = truncate(oa + ob, p)
    return off, p, 1 - (1 - ia) * (1 - ib) * (1 - inf)


def self_compose(x, t):
    r = None
    while t:
        if t & 1:
            r = x if r is None else compose(r, x)
        t >>= 1
        if t:
            x = compose(x, x)
    return r


def delta_of(pld, eps, h):
    off, p, inf = pld
    l = (off + np.arange(len(p))) * h
    m = l > eps
    return inf + float(np.sum(p[m] * -np.expm1(eps - l[m])))


def pld_epsilon(q, s, steps, delta, h):
    plds = [self_compose(one_step(q, s, h, r), steps) for r in (True, False)]
    d = lambda e: max(delta_of(x, e, h) for x in plds)
    lo, hi = 0.0, 1.0
    while d(hi) > delta:
        hi *= 2
        if hi > 1e4:
            sys.exit("dp_numpy.py: delta unreachable (infinite-loss mass above delta)")
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


def audit(fin, fout, alpha):
    a, b = np.sort(np.load(fin)), np.sort(np.load(fout))
    th = np.unique(np.concatenate([a, b]))
    th = np.append(th, np.inf)  # also "never in"
    level = alpha / 2 / len(th)  # two one-sided bounds, Bonferroni over the thresholds
    fn = np.searchsorted(a, th, side="left").astype(float)  # in scored below th
    fp = len(b) - np.searchsorted(b, th, side="left").astype(float)  # out scored >= th
    def upper(k, n):
        with np.errstate(invalid="ignore"):
            u = beta.ppf(1 - level, k + 1, n - k)
        return np.where(k >= n, 1.0, u)
    fpr, fnr = upper(fp, len(b)), upper(fn, len(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.maximum(np.log((1 - fnr) / fpr), np.log((1 - fpr) / fnr))
    e = np.where(np.isfinite(e), e, 0)
    return max(0.0, float(np.max(e)))


def main():
    t0 = time.perf_counter()
    if sys.argv[1] == "pld":
        q, s, steps, delta, h = (float(x) for x in sys.argv[2:7])
        e = pld_epsilon(q, s, int(steps), delta, h)
    elif sys.argv[1] == "audit":
        e = audit(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        sys.exit("usage: dp_numpy.py pld Q SIGMA STEPS DELTA H | audit IN OUT ALPHA")
    print("%.3f %.10g" % (time.perf_counter() - t0, e))


if __name__ == "__main__":
    main()
