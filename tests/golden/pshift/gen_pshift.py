#!/usr/bin/python3
"""tests/golden/pshift/gen_pshift.py - golden outputs of the TD-PSOLA pitch
shifter (audio/pshift.c, vpa_pshift_track) for tests/unit/test_pshift.c.

Provenance
  command   /usr/bin/python3 tests/golden/pshift/gen_pshift.py   (from the repo root)
  packages  Debian 12: python3-numpy 1:1.24.2, python3-scipy 1.10.1

pshift() below is OUR NumPy transcription of the definition in audio/anon.h
("pitch shifting": COMPRISE D2.3 eq. 3 as the F0 mapping; Moulines and
Charpentier 1990 TD-PSOLA with the pitch-mark, grain and synthesis-mark rules
written there), from that text, not from the C code.  The F0 track is this
generator's own (the known F0 of its synthetic signal on the frames whose
centre lies inside the voiced stretch), so the golden tests the PSOLA stage
alone; the YIN tracker has its own tests (tests/unit/test_anon.c) and the
whole chain is tested by properties (F0 moved, formants kept) in
test_pshift.c.  Pitch marks are integer decisions (argmax of samples); the
two sides agree on them exactly unless a rounding of rate/F0 or of a synthesis
mark falls within an ulp of a half-integer, so the samples agree to float
rounding.

Outputs (committed): x.npy (float32 input, 16 kHz), f0.npy (float32 per frame,
0 = unvoiced; frame geometry of vpa_pitch_opts_init at 16 kHz: W = 640,
tau_max = 266, shift = 160, centre t*160 + 453.5; vpa_pshift_opts_init's
unvoiced_ms = 10 and dilate = 2), cases.txt (NAME SEMITONES
SIGMA_RATIO) and NAME.npy (float32 output).
"""
import math

import numpy as np
import scipy.signal

HERE = "tests/golden/pshift/"
RATE = 16000.0
W, TMAX, SHIFT = 640, 266, 160
MIN_F0, MAX_F0 = 60.0, 400.0
U_MS = 10.0
DILATE = 2


def vowel(n):
    """a pulse train gliding 100 -> 140 Hz over [0.1, 0.45) s, each period
    a main pulse and a second one of 0.8 at 0.4 of the period (two peaks of
    similar height per period: where largest-peak marks would jump), a
    glottal low-pass and three formants, peak 10000, plus uniform noise of
    amplitude 300"""
    s = np.zeros(n)
    ph = 0.0
    second = False
    for i in range(n):
        t = i / RATE
        if 0.1 <= t < 0.45:
            ph += (100 + 40 * (t - 0.1) / 0.35) / RATE
            if ph >= 1:
                ph -= 1
                s[i] = 1
                second = True
            elif second and ph >= 0.4:
                s[i] = 0.8
                second = False
    for _ in range(2):
        s = scipy.signal.lfilter([1.0], [1.0, -0.9], s)
    for f, bw in ((700, 90), (1200, 110), (2600, 160)):
        r = math.exp(-math.pi * bw / RATE)
        c, d = 2 * r * math.cos(2 * math.pi * f / RATE), -r * r
        s = scipy.signal.lfilter([1 - c - d], [1.0, -c, -d], s)
    s = s / np.abs(s).max() * 10000
    rng = np.random.default_rng(1)
    s = s + rng.uniform(-300, 300, n)
    return s.astype(np.float32)


def track(n):
    nfr = 1 + (n - (W + TMAX + 1)) // SHIFT
    f0 = np.zeros(nfr, dtype=np.float32)
    for t in range(nfr):
        c = (t * SHIFT + (W + TMAX + 1) / 2) / RATE
        if 0.13 <= c <= 0.42:
            f0[t] = 100 + 40 * (c - 0.1) / 0.35
    return f0


def pshift(x, f0, semitones, ratio):
    n = len(x)
    nfr = len(f0)
    c0 = (W + TMAX + 1) / 2
    last = n - 1
    voiced = f0 > 0

    def frame_of(i):
        t = math.floor((i - c0) / SHIFT + 0.5)
        return min(max(t, 0), nfr - 1)

    lf = np.log(f0[voiced].astype(np.float64))
    if len(lf) == 0:
        return x.copy()
    mu = sum(float(v) for v in lf) / len(lf)
    fmin, fmax = MIN_F0 / 4, min(4 * MAX_F0, RATE / 4)
    beta_fr = np.ones(nfr)
    for t in range(nfr):
        if voiced[t]:
            F = float(f0[t])
            g = F * math.exp((math.log(F) - mu) * (ratio - 1) + semitones * math.log(2) / 12)
            g = min(max(g, fmin), fmax)
            beta_fr[t] = g / F

    # voicing of the marks: the nearest voiced frame within DILATE frames
    # (t, t-1, t+1, t-2, t+2, ...) lends its F0 and beta
    vv = np.zeros(nfr, dtype=bool)
    vf = np.zeros(nfr)
    beta_m = np.ones(nfr)
    for t in range(nfr):
        for cand in [t] + [u for d in range(1, DILATE + 1) for u in (t - d, t + d)]:
            if 0 <= cand < nfr and voiced[cand]:
                vv[t], vf[t], beta_m[t] = True, float(f0[cand]), beta_fr[cand]
                break
    voiced, beta_fr = vv, beta_m

    def peak(a, b, lo):
        a, b = max(a, lo), min(b, n - 1)
        if a > b:
            return -1
        return a + int(np.argmax(np.abs(x[a:b + 1].astype(np.float64))))  # the first maximum

    xp = x.astype(np.float64)

    def seg(c, h):  # x[c-h .. c+h], zeros outside the signal
        out = np.zeros(2 * h + 1)
        lo, hi = max(c - h, 0), min(c + h, last)
        if lo <= hi:
            out[lo - (c - h):hi - (c - h) + 1] = xp[lo:hi + 1]
        return out

    def align(m, lo, hi, h):
        lo, hi = max(lo, 1), min(hi, last - m)
        ref = seg(m, h)
        best, bv = -1, -math.inf
        for lag in range(lo, hi + 1):
            v = seg(m + lag, h)
            e = float(np.sum(v * v))
            sc = float(np.sum(ref * v)) / math.sqrt(e) if e > 0 else 0.0
            if sc > bv:
                best, bv = m + lag, sc
        return best

    U = max(int(np.rint(U_MS * 0.001 * RATE)), 2)
    marks, beta = [], []
    m, synced = 0, False
    while True:
        fm = frame_of(m)
        marks.append(m)
        beta.append(beta_fr[fm])
        if m >= last:
            break
        if not voiced[fm]:
            synced = False
            c = m + U
            fc = frame_of(c)
            if c < last and voiced[fc]:
                P = int(np.rint(RATE / vf[fc]))
                nxt = peak(m + U // 2, m + U // 2 + P - 1, m + 1)
                synced = True
            else:
                nxt = c
        else:
            P = RATE / vf[fm]
            if not synced:
                nxt = peak(m + int(np.rint(P / 2)), m + int(np.rint(1.5 * P)) - 1, m + 1)
                synced = nxt >= 0
            else:
                nxt = align(m, math.ceil(0.8 * P), math.floor(1.2 * P), int(np.rint(P / 2)))
        if nxt < 0 or nxt > last:
            nxt = last
        m = nxt
    K = len(marks)
    a = marks

    def window(d, L):
        return 0.5 + 0.5 * math.cos(math.pi * d / L)

    acc = np.zeros(n)

    def add_grain(k, s):
        L = a[k] - a[k - 1] if k > 0 else 0
        R = a[k + 1] - a[k] if k + 1 < K else 0
        for d in range(-L + 1 if L > 0 else 0, R if R > 0 else 1):
            if d < 0:
                w = window(d, L)
            elif d == 0:
                w = 1.0
            else:
                w = window(d, R)
            i, src = s + d, a[k] + d
            if 0 <= i <= last and 0 <= src <= last:
                acc[i] += w * float(x[src])

    tj, placed = 0.0, -1
    while tj <= last:
        q = max(j for j in range(K - 1) if a[j] <= tj) if a[0] <= tj else 0
        q = min(q, K - 2)
        k = min(range(K), key=lambda j: (abs(a[j] - tj), j))  # nearest, ties to the earlier
        s = int(np.rint(tj))
        add_grain(k, s)
        placed = s
        tj += (a[q + 1] - a[q]) / beta[k]
    if placed < last and K > 1:
        L = a[K - 1] - a[K - 2]
        for d in range(-L + 1, 1):
            acc[last + d] += window(d, L) * float(x[last + d])
    return acc.astype(np.float32)


def main():
    n = 8000
    x = vowel(n)
    f0 = track(n)
    np.save(HERE + "x.npy", x)
    np.save(HERE + "f0.npy", f0)
    cases = [("p4", 4.0, 1.0), ("m5", -5.0, 1.0), ("p2_r05", 2.0, 0.5), ("r2", 0.0, 2.0)]
    with open(HERE + "cases.txt", "w") as f:
        for name, S, R in cases:
            y = pshift(x, f0, S, R)
            np.save(HERE + name + ".npy", y)
            f.write("%s %g %g\n" % (name, S, R))
            print(name, "max |y|", float(np.abs(y).max()))


if __name__ == "__main__":
    main()
