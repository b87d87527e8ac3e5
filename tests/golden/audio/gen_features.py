#!/usr/bin/python3
"""tests/golden/audio/gen_features.py - golden features for tests/unit/test_audio.c.

Provenance
  command   /usr/bin/python3 tests/golden/audio/gen_features.py   (from the repo root)
  packages  Debian 12: python3-torchaudio 0.13.1-1, python3-torch 1.13.1+dfsg-4,
            python3-numpy 1:1.24.2
  audio     g16.wav, g8.wav made by make_audio.sh (synthetic speech: espeak-ng, flite)

fbank / MFCC: torchaudio.compliance.kaldi.fbank / .mfcc, an independent
re-implementation of Kaldi's compute-fbank-feats / compute-mfcc-feats, called with
every option given explicitly with Kaldi's defaults (torchaudio's own defaults differ:
energy_floor 1.0, use_energy False for MFCC).  The waveform is the int16 samples as
float32, as Kaldi reads them.

VAD and CMVN: torchaudio has neither compute-vad nor apply-cmvn-sliding, so the
functions vad(), cmvn_utt() and cmvn_sliding() below are FAITHFUL NUMPY TRANSCRIPTIONS
of Kaldi's ComputeVadEnergy (ivector/voice-activity-detection.cc), ApplyCmvn
(transform/cmvn.cc, per-utterance stats) and SlidingWindowCmnInternal
(feat/feature-functions.cc), written from Kaldi's source; their input is the
torchaudio MFCC golden of the case they name.  They are independent of the C code
only in so far as a second transcription is; say so when citing them.

Outputs (committed):
  cases.txt     one case per line:  NAME WAV KIND [--option=value ...]
                KIND fbank|mfcc (WAV the recording) or vad|cmvn (WAV = the NAME of
                the input case)
  expected.ark  Kaldi binary archive (float matrices "FM"), key = NAME; a VAD case
                is a 1 x T matrix of 0/1
"""
import os
import struct
import sys
import wave

import numpy as np
import torch
import torchaudio
import torchaudio.compliance.kaldi as K

HERE = os.path.dirname(os.path.abspath(__file__))

KALDI = {  # Kaldi's defaults (compute-fbank-feats / compute-mfcc-feats), dither 0
    "sample-frequency": 16000.0, "frame-length": 25.0, "frame-shift": 10.0, "dither": 0.0,
    "preemphasis-coefficient": 0.97, "remove-dc-offset": True, "window-type": "povey",
    "round-to-power-of-two": True, "blackman-coeff": 0.42, "snip-edges": True,
    "low-freq": 20.0, "high-freq": 0.0, "num-mel-bins": 23, "raw-energy": True,
    "energy-floor": 0.0, "htk-compat": False,
}
FBANK = {"use-energy": False, "use-log-fbank": True, "use-power": True}
MFCC = {"use-energy": True, "num-ceps": 13, "cepstral-lifter": 22.0}

CASES = [
    # name, wav, kind, options (Kaldi names; the others are the defaults)
    ("fb16_default", "g16.wav", "fbank", {}),
    ("fb16_80", "g16.wav", "fbank", {"num-mel-bins": 80}),
    ("fb16_energy", "g16.wav", "fbank", {"use-energy": True}),
    ("fb16_energy_htk", "g16.wav", "fbank", {"use-energy": True, "htk-compat": True}),
    ("fb16_energy_notraw", "g16.wav", "fbank", {"use-energy": True, "raw-energy": False}),
    ("fb16_energy_floor", "g16.wav", "fbank", {"use-energy": True, "energy-floor": 1e9}),
    ("fb16_nolog", "g16.wav", "fbank", {"use-log-fbank": False}),
    ("fb16_magnitude", "g16.wav", "fbank", {"use-power": False}),
    ("fb16_hamming", "g16.wav", "fbank", {"window-type": "hamming"}),
    ("fb16_hanning", "g16.wav", "fbank", {"window-type": "hanning"}),
    ("fb16_rectangular", "g16.wav", "fbank", {"window-type": "rectangular"}),
    ("fb16_blackman", "g16.wav", "fbank", {"window-type": "blackman"}),
    ("fb16_blackman_05", "g16.wav", "fbank", {"window-type": "blackman", "blackman-coeff": 0.5}),
    ("fb16_no_dc", "g16.wav", "fbank", {"remove-dc-offset": False}),
    ("fb16_no_preemph", "g16.wav", "fbank", {"preemphasis-coefficient": 0.0}),
    ("fb16_preemph_05", "g16.wav", "fbank", {"preemphasis-coefficient": 0.5}),
    ("fb16_no_pow2", "g16.wav", "fbank", {"round-to-power-of-two": False}),
    ("fb16_no_snip", "g16.wav", "fbank", {"snip-edges": False}),
    ("fb16_neg_high", "g16.wav", "fbank", {"low-freq": 100.0, "high-freq": -400.0}),
    ("fb16_high_7000", "g16.wav", "fbank", {"low-freq": 0.0, "high-freq": 7000.0}),
    ("fb16_short_frames", "g16.wav", "fbank", {"frame-length": 20.0, "frame-shift": 5.0}),
    ("fb8_default", "g8.wav", "fbank", {"sample-frequency": 8000.0}),
    ("fb8_40_nosnip", "g8.wav", "fbank", {"sample-frequency": 8000.0, "num-mel-bins": 40,
                                          "snip-edges": False, "high-freq": 3800.0}),
    ("mf16_default", "g16.wav", "mfcc", {}),
    ("mf16_20_30", "g16.wav", "mfcc", {"num-ceps": 20, "num-mel-bins": 30}),
    ("mf16_no_lifter", "g16.wav", "mfcc", {"cepstral-lifter": 0.0}),
    ("mf16_no_energy", "g16.wav", "mfcc", {"use-energy": False}),
    ("mf16_htk", "g16.wav", "mfcc", {"htk-compat": True}),
    ("mf16_htk_no_energy", "g16.wav", "mfcc", {"htk-compat": True, "use-energy": False}),
    ("mf16_40_40", "g16.wav", "mfcc", {"num-mel-bins": 40, "num-ceps": 40, "low-freq": 40.0,
                                       "high-freq": -200.0, "snip-edges": False}),
    ("mf16_energy_floor", "g16.wav", "mfcc", {"energy-floor": 1e9, "raw-energy": False}),
    ("mf16_hamming_nodc", "g16.wav", "mfcc", {"window-type": "hamming", "remove-dc-offset": False}),
    ("mf8_default", "g8.wav", "mfcc", {"sample-frequency": 8000.0}),
]

POST = [
    # name, input case, kind, options
    ("vad_default", "mf16_default", "vad", {}),
    ("vad_context", "mf16_default", "vad", {"vad-energy-threshold": 9.0, "vad-energy-mean-scale": 0.3,
                                            "vad-frames-context": 2, "vad-proportion-threshold": 0.5}),
    ("vad_8k", "mf8_default", "vad", {"vad-energy-mean-scale": 0.0, "vad-energy-threshold": 15.0}),
    ("cmvn_utt", "mf16_default", "cmvn", {"cmvn": "utt"}),
    ("cmvn_utt_var", "mf16_default", "cmvn", {"cmvn": "utt", "norm-vars": True}),
    ("cmvn_sliding_default", "mf16_default", "cmvn", {"cmvn": "sliding"}),
    ("cmvn_sliding_center", "mf16_default", "cmvn", {"cmvn": "sliding", "cmn-window": 10,
                                                     "center": True, "norm-vars": True}),
    ("cmvn_sliding_left", "mf16_default", "cmvn", {"cmvn": "sliding", "cmn-window": 10,
                                                   "min-cmn-window": 5}),
    ("cmvn_sliding_left_var", "fb8_default", "cmvn", {"cmvn": "sliding", "cmn-window": 7,
                                                      "min-cmn-window": 3, "norm-vars": True}),
]


def read_wav(name):
    with wave.open(os.path.join(HERE, name), "rb") as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32)
    return torch.from_numpy(x.copy()).unsqueeze(0)


def ta_kwargs(kind, opts):
    o = dict(KALDI)
    o.update(FBANK if kind == "fbank" else MFCC)
    o.update(opts)
    return {k.replace("-", "_"): v for k, v in o.items()}


# ---- faithful NumPy transcriptions of Kaldi (see the module docstring) ----

def vad(feats, thr=5.0, mean_scale=0.5, context=0, proportion=0.6):
    e = feats[:, 0].astype(np.float32)
    T = len(e)
    threshold = np.float32(thr)
    if mean_scale != 0.0:
        threshold = np.float32(threshold + np.float32(mean_scale * float(np.sum(e, dtype=np.float64)) / T))
    out = np.zeros(T, dtype=np.float32)
    for t in range(T):
        num = den = 0
        for t2 in range(t - context, t + context + 1):
            if 0 <= t2 < T:
                den += 1
                if e[t2] > threshold:
                    num += 1
        out[t] = 1.0 if num >= den * proportion else 0.0
    return out.reshape(1, T)


def cmvn_utt(x, norm_vars):
    x = x.astype(np.float64)
    T = x.shape[0]
    mean = x.sum(0) / T
    if not norm_vars:
        return (x - mean).astype(np.float32)
    var = (x * x).sum(0) / T - mean * mean
    var = np.maximum(var, 1e-20)
    scale = 1.0 / np.sqrt(var)
    return (x * scale - mean * scale).astype(np.float32)


def cmvn_sliding(x, cmn_window=600, min_window=100, center=False, norm_vars=False):
    x64 = x.astype(np.float64)
    N, D = x.shape
    out = np.zeros_like(x64)
    cur_sum = np.zeros(D)
    cur_sumsq = np.zeros(D)
    last_s = last_e = -1
    for t in range(N):
        if center:
            s = t - cmn_window // 2
            e = s + cmn_window
        else:
            s = t - cmn_window
            e = t + 1
        if s < 0:
            e -= s
            s = 0
        if not center and e < min_window:
            e = min_window
        if e > N:
            s -= e - N
            e = N
            if s < 0:
                s = 0
        if last_s == -1:
            cur_sum = x64[s:e].sum(0)
            cur_sumsq = (x64[s:e] ** 2).sum(0)
        else:
            if s > last_s:
                assert s == last_s + 1
                cur_sum -= x64[last_s]
                cur_sumsq -= x64[last_s] ** 2
            if e > last_e:
                assert e == last_e + 1
                cur_sum += x64[last_e]
                cur_sumsq += x64[last_e] ** 2
        n = e - s
        last_s, last_e = s, e
        y = x64[t] - cur_sum / n
        if norm_vars:
            if n == 1:
                y = np.zeros(D)
            else:
                var = cur_sumsq / n - cur_sum * cur_sum / (n * n)
                var = np.maximum(var, 1e-10)
                y = y * var ** -0.5
        out[t] = y
    return out.astype(np.float32)


def write_fm(f, key, m):
    m = np.ascontiguousarray(m, dtype="<f4")
    f.write(key.encode() + b" \0BFM \x04" + struct.pack("<i", m.shape[0]) + b"\x04" +
            struct.pack("<i", m.shape[1]) + m.tobytes())


def opt_str(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


def main():
    torch.set_num_threads(1)
    results = {}
    lines = []
    with open(os.path.join(HERE, "expected.ark"), "wb") as ark:
        for name, wav, kind, opts in CASES:
            w = read_wav(wav)
            fn = K.fbank if kind == "fbank" else K.mfcc
            m = fn(w, **ta_kwargs(kind, opts)).numpy()
            results[name] = m
            write_fm(ark, name, m)
            lines.append(" ".join([name, wav, kind] + ["--%s=%s" % (k, opt_str(v)) for k, v in opts.items()]))
        for name, src, kind, opts in POST:
            x = results[src]
            if kind == "vad":
                m = vad(x, opts.get("vad-energy-threshold", 5.0), opts.get("vad-energy-mean-scale", 0.5),
                        opts.get("vad-frames-context", 0), opts.get("vad-proportion-threshold", 0.6))
            elif opts["cmvn"] == "utt":
                m = cmvn_utt(x, opts.get("norm-vars", False))
            else:
                m = cmvn_sliding(x, opts.get("cmn-window", 600), opts.get("min-cmn-window", 100),
                                 opts.get("center", False), opts.get("norm-vars", False))
            write_fm(ark, name, m)
            lines.append(" ".join([name, src, kind] + ["--%s=%s" % (k, opt_str(v)) for k, v in opts.items()]))
    with open(os.path.join(HERE, "cases.txt"), "w") as f:
        f.write("# generated by gen_features.py (torchaudio %s, torch %s, numpy %s)\n"
                % (torchaudio.__version__, torch.__version__, np.__version__))
        f.write("\n".join(lines) + "\n")
    print("wrote %d cases" % len(lines), file=sys.stderr)


if __name__ == "__main__":
    main()
