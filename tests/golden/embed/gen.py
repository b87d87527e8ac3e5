#!/usr/bin/python3
"""tests/golden/embed/gen.py - golden embeddings of audio for test_embed (vpaudit embed,
vpa_embset_from_audio), computed the PyTorch way.

Regenerate (from the repository root; Debian 12 packages python3-torch 1.13.1,
python3-torchaudio 0.13.1, python3-onnx 1.12.0, python3-numpy 1.24.2, python3-scipy
1.10.1; CPU, seed 1):

    /usr/bin/python3 tests/golden/embed/gen.py

Writes into tests/golden/embed/:
  data/            a Kaldi data directory: 6 synthetic utterances (harmonic tones with
                   vibrato + noise, 16 kHz 16-bit, 0.25 to 1.3 s) of 3 speakers
                   (wav.scp, utt2spk, spk2utt, spk2gender); u6 is shorter than --chunk
  ecapa.onnx       the ECAPA-TDNN of tests/golden/onnx/gen.py (SE-Res2 blocks,
                   attentive statistics pooling; 20 inputs, 16 outputs), input (1, T, 20)
  tdnn_bft.onnx    the x-vector TDNN of the same file behind a transpose: input (1, 20, T)
  NAME.CASE.npy    (6, 16) float32, the embedding of each utterance in data/ order:
     whole         torchaudio.compliance.kaldi.fbank(num_mel_bins=20, dither=0) of the
                   int16-scale samples, the utterance's mean removed, the model on (1, T, 20)
     chunk30       --chunk 30 as WeSpeaker's runtime (SpeakerEngine::ExtractFeature /
                   ExtractEmbedding): chunks of 30 frames, the last partial one completed
                   with the first chunk's first frames, an utterance shorter than 30
                   frames repeated to 30; mean removed per chunk; chunk embeddings averaged
     nocmn         whole, without the mean removal
  tdnn_bft.whole.npy  tdnn_bft on (1, 20, T), mean removed
The C side (vpaudit's own fbank, CMN, chunking and ONNX engine) must match these within
1e-4 relative + 1e-5 absolute (fbank agrees with torchaudio to ~1e-4 on log energies).
"""
import os
import sys

import numpy as np
import scipy.io.wavfile
import torch
import torch.nn as nn
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "onnx"))
import gen as onnx_gen  # noqa: E402  the model classes (ECAPA, TDNN, randomise_bn)

torch.manual_seed(1)
rng = np.random.RandomState(1)

UTTS = [  # utt, speaker, gender, seconds, f0
    ("u1", "s1", "m", 1.30, 110.0),
    ("u2", "s1", "m", 0.90, 118.0),
    ("u3", "s2", "f", 1.10, 210.0),
    ("u4", "s2", "f", 0.75, 225.0),
    ("u5", "s3", "m", 1.00, 150.0),
    ("u6", "s3", "m", 0.25, 160.0),
]
RATE = 16000


def synth(sec, f0):
    n = int(round(sec * RATE))
    t = np.arange(n) / RATE
    ph = 2 * np.pi * f0 * t + 0.3 * np.sin(2 * np.pi * 5 * t)  # vibrato
    x = sum((0.6 / k) * np.sin(k * ph + rng.uniform(0, 6.28)) for k in range(1, 12))
    x = x * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t) ** 2) + 0.02 * rng.randn(n)
    return np.round(np.clip(x, -1, 1) * 12000).astype(np.int16)


class BFT(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):  # (batch, feat, time)
        return self.inner(x.transpose(1, 2))


def fbank(wave_int16):
    w = torch.from_numpy(wave_int16.astype(np.float32)).unsqueeze(0)  # int16 scale, as Kaldi
    return torchaudio.compliance.kaldi.fbank(w, num_mel_bins=20, dither=0.0,
                                             sample_frequency=RATE)


def chunks_wespeaker(f, c):
    t = f.shape[0]
    out = [f[k * c:(k + 1) * c] for k in range(t // c)]
    rest = t % c
    if rest:
        last = f[(t // c) * c:]
        if not out:
            # WeSpeaker: the frames num_pad = c // rest times, then their head up to c
            reps = torch.cat([last] * (c // rest), 0)
            last = torch.cat([reps, reps[: c - reps.shape[0]]], 0)
        else:
            last = torch.cat([last, out[0][: c - rest]], 0)
        out.append(last)
    return out


def embed(model, feats, cmn, chunk=0, bft=False):
    parts = chunks_wespeaker(feats, chunk) if chunk else [feats]
    acc = None
    for p in parts:
        if cmn:
            p = p - p.mean(0, keepdim=True)
        x = p.unsqueeze(0)
        if bft:
            x = x.transpose(1, 2)
        with torch.inference_mode():
            y = model(x).reshape(-1).double()
        acc = y if acc is None else acc + y
    return (acc / len(parts)).float().numpy()


def export(model, path, bft):
    x = torch.randn(1, 20, 40) if bft else torch.randn(1, 40, 20)
    torch.onnx.export(model, x, path, opset_version=13, input_names=["feats"],
                      output_names=["emb"], dynamic_axes={"feats": {2 if bft else 1: "time"}},
                      do_constant_folding=True)


def main():
    d = os.path.join(HERE, "data")
    os.makedirs(os.path.join(d, "wav"), exist_ok=True)
    feats = []
    for utt, spk, g, sec, f0 in UTTS:
        x = synth(sec, f0)
        scipy.io.wavfile.write(os.path.join(d, "wav", utt + ".wav"), RATE, x)
        feats.append(fbank(x))
    rel = "tests/golden/embed/data/wav/"
    with open(os.path.join(d, "wav.scp"), "w") as f:
        f.writelines("%s %s%s.wav\n" % (u[0], rel, u[0]) for u in UTTS)
    with open(os.path.join(d, "utt2spk"), "w") as f:
        f.writelines("%s %s\n" % (u[0], u[1]) for u in UTTS)
    spks = []
    for u in UTTS:
        if u[1] not in [s[0] for s in spks]:
            spks.append((u[1], u[2]))
    with open(os.path.join(d, "spk2utt"), "w") as f:
        f.writelines("%s %s\n" % (s, " ".join(u[0] for u in UTTS if u[1] == s)) for s, _ in spks)
    with open(os.path.join(d, "spk2gender"), "w") as f:
        f.writelines("%s %s\n" % s for s in spks)

    ecapa = onnx_gen.ECAPA()
    ecapa.eval()
    onnx_gen.randomise_bn(ecapa)
    export(ecapa, os.path.join(HERE, "ecapa.onnx"), False)
    tdnn = onnx_gen.TDNN()
    tdnn.eval()
    onnx_gen.randomise_bn(tdnn)
    bft = BFT(tdnn)
    bft.eval()
    export(bft, os.path.join(HERE, "tdnn_bft.onnx"), True)

    cases = {
        "ecapa.whole": [embed(ecapa, f, True) for f in feats],
        "ecapa.chunk30": [embed(ecapa, f, True, 30) for f in feats],
        "ecapa.nocmn": [embed(ecapa, f, False) for f in feats],
        "tdnn_bft.whole": [embed(bft, f, True, 0, True) for f in feats],
    }
    for name, rows in cases.items():
        np.save(os.path.join(HERE, name + ".npy"), np.stack(rows).astype("<f4"))
    print("frames:", [int(f.shape[0]) for f in feats])


if __name__ == "__main__":
    main()
