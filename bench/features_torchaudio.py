#!/usr/bin/python3
"""bench/features_torchaudio.py - the baseline of bench/features.sh, and its data.

  gen DIR        write DIR/hour.wav (3600 s, 16 kHz, 16-bit: the synthetic speech of
                 tests/golden/audio/g16.wav tiled, plus seeded noise) and
                 DIR/hour/{wav.scp,segments} cutting it into 360 utterances of 10 s
  run DIR N      torchaudio.compliance.kaldi.fbank (80 bins, Kaldi defaults, dither 0)
                 of the same 360 utterances with torch.set_num_threads(N); prints the
                 seconds of the fbank calls alone (reading excluded: favours torchaudio)
Debian python3-torchaudio 0.13.1, python3-torch 1.13.1.
"""
import os
import sys
import time
import wave

import numpy as np

RATE, SEG, N = 16000, 10, 360


def gen(d):
    with wave.open("tests/golden/audio/g16.wav", "rb") as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64)
    n = RATE * SEG * N
    y = np.tile(x, n // len(x) + 1)[:n]
    y += np.random.default_rng(1).normal(0, 30, n)
    y = np.clip(np.round(y), -32768, 32767).astype("<i2")
    with wave.open(os.path.join(d, "hour.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(y.tobytes())
    os.makedirs(os.path.join(d, "hour"), exist_ok=True)
    with open(os.path.join(d, "hour", "wav.scp"), "w") as f:
        f.write("hour %s\n" % os.path.abspath(os.path.join(d, "hour.wav")))
    with open(os.path.join(d, "hour", "segments"), "w") as f:
        for i in range(N):
            f.write("u%03d hour %d %d\n" % (i, i * SEG, (i + 1) * SEG))


def run(d, threads):
    import torch
    import torchaudio.compliance.kaldi as K
    torch.set_num_threads(threads)
    with wave.open(os.path.join(d, "hour.wav"), "rb") as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32)
    t = torch.from_numpy(x)
    t0 = time.perf_counter()
    rows = 0
    for i in range(N):
        seg = t[i * SEG * RATE:(i + 1) * SEG * RATE].unsqueeze(0)
        m = K.fbank(seg, num_mel_bins=80, dither=0.0, energy_floor=0.0, sample_frequency=RATE)
        rows += m.shape[0]
    print("%.3f %d" % (time.perf_counter() - t0, rows))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        run(sys.argv[2], int(sys.argv[3]))
