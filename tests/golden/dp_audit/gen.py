#!/usr/bin/python3
"""
Golden values for tests/unit/test_dp_audit.c (issue 28, `vpaudit dp audit`).

Independent of vpaudit's code: Clopper-Pearson bounds are scipy.stats.beta.isf
(upper; ppf(1 - level) would round 1 - 1e-9) and .ppf (lower), Boost's
ibeta_inv; the regularized incomplete beta is mpmath (see ibeta_ref);
the normal quantile scipy.special.ndtri; the mu-GDP -> (eps, delta) conversion
(Dong, Roth, Su 2019, Cor. 2.13) and the one-run p-values (Steinke, Nasr,
Jagielski 2023, Theorem 3.1 with its delta term, as in jax_privacy's
_one_run_p_value) are evaluated in mpmath at 50 digits and their roots found by
mpmath bisection, so no double-precision cancellation enters the goldens.

Cross-check (stderr, not written): every scipy CP bound with n <= 1000 is substituted back
into the binomial tail in mpmath (an exact sum at 50 digits); the largest relative
residual |tail - level| / level is printed (bounds within 1e-6 of 1 are
skipped: a double that close to 1 carries too few digits of 1 - p for the
tail to be checked that way).  Measured: 1.5e-11.

Line formats (all numbers repr'd at 17 significant digits):
  ibeta    a b x            I_x(a, b)
  cpu      k n level        upper p with P[Bin(n,p) <= k] = level
  cpl      k n level        lower p with P[Bin(n,p) >= k] = level
  ndtri    p                Phi^-1(p)
  gdpeps   mu delta         eps with delta_mu(eps) = delta
  orp      m r v eps delta  one-run p-value
  oreps    m r v alpha delta  largest eps with p-value <= alpha
  audit    fp neg fn pos alpha delta method eps   (counts, two-sided CP at alpha)

Command (Debian 12, python3-scipy 1.10.1, python3-mpmath 1.2.1):
  /usr/bin/python3 tests/golden/dp_audit/gen.py > tests/golden/dp_audit/golden.txt
"""
import sys
import mpmath as mp
import scipy.special as sp
import scipy.stats as st

mp.mp.dps = 50


def g(x):
    return "%.17g" % float(x)


out = []
worst = 0.0

# regularized incomplete beta on a grid including large parameters


def ibeta_ref(a, b, x):
    """I_x(a, b) at 50 digits: mpmath's betainc for small parameters; for
    integer a, b a binomial tail, I_x(a, b) = P[Bin(a+b-1, x) >= a], summed
    outwards from j = a with the pmf recurrence until the terms are below
    1e-45 of the sum (mpmath's hypergeometric series does not converge for
    parameters in the millions, and scipy 1.10's betainc, Cephes' incbet,
    is off by up to 1e-2 relative there: I_0.5(5e6, 5e6) = 0.4986)."""
    if a + b < 100:
        return mp.betainc(a, b, 0, mp.mpf(x), regularized=True)
    assert a == int(a) and b == int(b)
    n, a = int(a + b - 1), int(a)
    x = mp.mpf(x)
    r = x / (1 - x)
    mode = (n + 1) * x
    first = mp.binomial(n, a) * x ** a * (1 - x) ** (n - a)
    up, t, j = mp.mpf(0), first, a
    while j <= n:
        up += t
        if j > mode and t < up * mp.mpf(10) ** -45:
            break
        t = t * (n - j) / (j + 1) * r
        j += 1
    down, j = mp.mpf(0), a
    t = first
    while j > 0:
        t = t * j / (n - j + 1) / r
        j -= 1
        down += t
        if j < mode and t < down * mp.mpf(10) ** -45:
            break
    return up / (up + down)


for a, b in [(0.5, 0.5), (1, 1), (1, 5e6), (2, 3), (3, 500), (10, 10), (11, 4e5),
             (50, 50), (500, 1e4), (1e4, 1e4), (5e6, 5e6), (30, 2)]:
    m = a / (a + b)
    sd = (a * b / ((a + b) ** 2 * (a + b + 1))) ** 0.5
    for z in (-8, -3, -1, 0, 1, 3, 8):
        x = m + z * sd
        if not 0 < x < 1:
            continue
        v = ibeta_ref(a, b, x)
        out.append("ibeta %s %s %s %s" % (g(a), g(b), g(x), g(v)))

# Clopper-Pearson on a grid of counts and levels


def binom_cdf(k, n, p):
    """P[Bin(n, p) <= k] as an exact sum at 50 digits."""
    p = mp.mpf(p)
    return mp.fsum(mp.binomial(n, j) * p ** j * (1 - p) ** (n - j) for j in range(0, k + 1))


levels = (0.5e-2, 0.025, 0.05 / 2000, 1e-9)
for n in (1, 2, 10, 50, 500, 1000, 12345, 10 ** 6):
    for k in sorted({0, 1, 2, 3, n // 100, n // 10, n // 3, n // 2, n - 1, n}):
        if k < 0 or k > n:
            continue
        for lv in levels:
            u = 1.0 if k == n else st.beta.isf(lv, k + 1, n - k)
            l = 0.0 if k == 0 else st.beta.ppf(lv, k, n - k + 1)
            out.append("cpu %d %d %s %s" % (k, n, g(lv), g(u)))
            out.append("cpl %d %d %s %s" % (k, n, g(lv), g(l)))
            if n > 1000:
                continue  # the exact sums below are slow beyond
            if k < n and u < 1 - 1e-6:
                tail = binom_cdf(k, n, u)
                worst = max(worst, abs(float(tail) - lv) / lv)
            if k > 0:
                tail = 1 - binom_cdf(k - 1, n, l)
                worst = max(worst, abs(float(tail) - lv) / lv)
print("max CP residual (relative):", worst, file=sys.stderr)

for p in (1e-300, 1e-30, 1e-10, 1e-5, 0.001, 0.02425, 0.1, 0.3, 0.5, 0.7, 0.975, 0.999999):
    out.append("ndtri %s %s" % (g(p), g(sp.ndtri(p))))


def gdp_delta(mu, eps):
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def bisect(f, lo, hi, n=200):
    # f(lo) true, f(hi) false
    for _ in range(n):
        mid = (lo + hi) / 2
        if f(mid):
            lo = mid
        else:
            hi = mid
    return lo


for mu in (0.1, 0.5, 1, 2, 3.5, 6, 10):
    for delta in (1e-10, 1e-5, 1e-3, 0.05):
        if gdp_delta(mu, 0) <= delta:
            e = 0
        else:
            hi = mp.mpf(1)
            while gdp_delta(mu, hi) > delta:
                hi *= 2
            e = bisect(lambda x: gdp_delta(mu, x) > delta, mp.mpf(0), hi)
        out.append("gdpeps %s %s %s" % (g(mu), g(delta), g(e)))


def orp(m, r, v, eps, delta):
    q = 1 / (1 + mp.exp(-mp.mpf(eps)))

    def pmf(j):
        return mp.binomial(r, j) * q ** j * (1 - q) ** (r - j)
    beta = mp.fsum(pmf(j) for j in range(v, r + 1))
    if delta == 0:
        return beta
    best, s = mp.mpf(0), mp.mpf(0)
    for i in range(1, v + 1):
        s += pmf(v - i)
        best = max(best, s / i)
    return min(beta + 2 * m * delta * best, mp.mpf(1))


cases = [(100, 10, 10), (1000, 100, 90), (1000, 200, 150), (1000, 1000, 600), (5000, 500, 400),
         (50, 50, 50), (10000, 300, 300)]
for m, r, v in cases:
    for delta in (0, 1e-5):
        for eps in (0.0, 0.5, 1.0, 2.0, 4.0):
            out.append("orp %d %d %d %s %s %s" % (m, r, v, g(eps), g(delta), g(orp(m, r, v, eps, delta))))
        for alpha in (0.05, 0.01):
            if orp(m, r, v, 0, delta) > alpha:
                e = 0
            else:
                hi = mp.mpf(1)
                while orp(m, r, v, hi, delta) <= alpha:
                    hi *= 2
                e = bisect(lambda x: orp(m, r, v, x, delta) <= alpha, mp.mpf(0), hi, 70)
            out.append("oreps %d %d %d %s %s %s" % (m, r, v, g(alpha), g(delta), g(e)))

# whole audits from counts (two-sided CP: each upper bound at alpha/2)
for fp, neg, fn, pos in [(0, 500, 0, 500), (3, 1000, 10, 1000), (50, 1000, 400, 1000),
                         (0, 100, 90, 100), (480, 500, 20, 500), (5, 20000, 2000, 20000)]:
    for alpha in (0.01, 0.05):
        for delta in (0, 1e-5, 0.01):
            fu = 1.0 if fp == neg else st.beta.ppf(1 - alpha / 2, fp + 1, neg - fp)
            nu = 1.0 if fn == pos else st.beta.ppf(1 - alpha / 2, fn + 1, pos - fn)
            cands = [0.0]
            if 1 - delta - nu > 0:
                cands.append(float(mp.log((1 - delta - mp.mpf(nu)) / fu)))
            if 1 - delta - fu > 0:
                cands.append(float(mp.log((1 - delta - mp.mpf(fu)) / nu)))
            out.append("audit %d %d %d %d %s %s cp %s" % (fp, neg, fn, pos, g(alpha), g(delta), g(max(cands))))
            if delta > 0:
                mu = -sp.ndtri(fu) - sp.ndtri(nu)
                if mu <= 0 or gdp_delta(mu, 0) <= delta:
                    e = 0
                else:
                    hi = mp.mpf(1)
                    while gdp_delta(mu, hi) > delta:
                        hi *= 2
                    e = bisect(lambda x: gdp_delta(mu, x) > delta, mp.mpf(0), hi)
                out.append("audit %d %d %d %d %s %s gdp %s" % (fp, neg, fn, pos, g(alpha), g(delta), g(e)))

print("\n".join(out))
