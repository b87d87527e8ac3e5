#!/usr/bin/python3
"""bench/mcadams_numpy.py - the baseline of bench/mcadams.sh: the straightforward
NumPy/SciPy McAdams anonymiser (anonym_v2 of tests/golden/anon/gen_mcadams.py, the
same transcription that made the goldens) on the first K 10-s segments of
hour.wav, shared over THREADS processes (multiprocessing.Pool) as vpaudit shares
utterances over threads.  Prints the wall seconds for those K segments.

usage: /usr/bin/python3 bench/mcadams_numpy.py DATA_DIR K THREADS
"""
import multiprocessing
import os
import sys
import time
import wave

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "anon"))
from gen_mcadams import anonym_v2  # noqa: E402

RATE, SEG = 16000, 10


def one(seg):
    return len(anonym_v2(RATE, seg, 20, 10, 20, 0.8))


if __name__ == "__main__":
    d, k, th = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with wave.open(os.path.join(d, "hour.wav"), "rb") as w:
        x = np.frombuffer(w.readframes(RATE * SEG * k), dtype="<i2")
    segs = [x[i * RATE * SEG:(i + 1) * RATE * SEG].astype(np.float32) / np.float32(32768) for i in range(k)]
    t0 = time.perf_counter()
    with multiprocessing.Pool(th) as p:
        n = sum(p.map(one, segs))
    print("%.3f %d" % (time.perf_counter() - t0, n))
