#!/usr/bin/python3
"""tests/golden/ser/gen.py - goldens of utterance classification (issue 30 item 2) for
tests/unit/test_classify.c and tests/e2e/test_classify.sh.

Regenerate (from the repository root; Debian 12 packages python3-torch 1.13.1,
python3-torchaudio 0.13.1, python3-onnx 1.12.0, python3-numpy 1.24.2, python3-scipy
1.10.1, python3-sklearn 1.2.1; CPU, seeds fixed):

    /usr/bin/python3 tests/golden/ser/gen.py

Writes into tests/golden/ser/:
  data/, data_anon/  Kaldi data directories of 8 synthetic utterances (harmonic tones with
                     vibrato + noise, 16 kHz 16-bit, 0.3 to 1.2 s) of 3 speakers, with
                     utt2emo (ang hap neu sad); data_anon has the same ids with every F0
                     raised by 30 % and other noise (a stand-in for an anonymiser)
  labels.txt         the label map: line k = output index k
  wave.onnx          a small classifier (random weights, then fit()) of the raw waveform: input 'wave'
                     (1, samples), float in [-1, 1) (int16 / 32768, as torchaudio.load),
                     x8, Conv1d(1,8,400,stride 160)-ReLU-Conv1d(8,16,3)-ReLU-mean over time,
                     its mean over channels removed, Linear(16,4, no bias) x4,
                     output 'logits' (1, 4)
  wave_b.onnx        the same architecture with other weights (the second fold's model)
  fbank.onnx         a classifier of fbank features: input (1, T, 20) (torchaudio's Kaldi fbank, 20 mel bins, dither 0, int16-scale samples, no mean removal),
                     (x - 12) / 4, Linear(20,16)-tanh-mean over time, centred, Linear(16,4, no bias) x8,
                     output (4) (a [C] output)
  folds.txt          the per-speaker folds: 'SPEAKER MODEL' (s1, s2 -> wave.onnx; s3 -> wave_b.onnx)
  folds_uar.txt      'DATA UAR': the VPC per-speaker-fold UAR of folds.txt on data/ and
                     data_anon/ (VoicePAT evaluate_ser: each speaker by its fold's
                     model, sklearn recall_score(average="macro"), mean over speakers)
  logits.txt         'CASE UTT l0 l1 l2 l3' for CASE in wave, wave_anon, wave_b,
                     wave_b_anon, fbank:
                     PyTorch's logits (%.9g) of each utterance
  preds.txt          300 (truth, prediction, fold) triples over 5 classes (class 4 only
                     ever predicted, never true) and 6 folds, then 'uar', 'accuracy' from
                     sklearn.metrics.balanced_accuracy_score / accuracy_score, 'recall' per
                     class (recall_score average=None, labels 0..3) and 'confusion'
                     (confusion_matrix, labels 0..4, row-major), 'uar_macro'
                     (recall_score average="macro": class 4 counts 0), and the VPC
                     2024 per-fold protocol as VoicePAT's evaluate_ser computes it:
                     'uar_folds' (mean over folds of each fold's macro recall) and
                     'acc_folds' (per class, the mean over folds of ACC_<class>)
The C side must give PyTorch's logits within 1e-4 (absolute) and sklearn's UAR to 1e-12.
"""
import os

import numpy as np
import scipy.io.wavfile
import sklearn
import sklearn.metrics as skm
import torch
import torch.nn as nn
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
RATE = 16000
EMOS = ["ang", "hap", "neu", "sad"]
UTTS = [  # utt, speaker, seconds, f0, emotion
    ("s1_a", "s1", 1.20, 110.0, "ang"),
    ("s1_b", "s1", 0.80, 120.0, "neu"),
    ("s1_c", "s1", 0.30, 100.0, "sad"),
    ("s2_a", "s2", 1.00, 210.0, "hap"),
    ("s2_b", "s2", 0.65, 230.0, "neu"),
    ("s2_c", "s2", 0.90, 190.0, "ang"),
    ("s3_a", "s3", 0.70, 150.0, "sad"),
    ("s3_b", "s3", 1.10, 160.0, "hap"),
]


def synth(rng, sec, f0):
    n = int(round(sec * RATE))
    t = np.arange(n) / RATE
    ph = 2 * np.pi * f0 * t + 0.3 * np.sin(2 * np.pi * 5 * t)
    x = sum((0.6 / k) * np.sin(k * ph + rng.uniform(0, 6.28)) for k in range(1, 12))
    x = x * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t) ** 2) + 0.02 * rng.randn(n)
    return np.round(np.clip(x, -1, 1) * 12000).astype(np.int16)


class WaveCls(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(1, 8, 400, stride=160)
        self.c2 = nn.Conv1d(8, 16, 3)
        self.fc = nn.Linear(16, 4, bias=False)

    def forward(self, wave):  # (1, samples)
        h = torch.relu(self.c1(wave.unsqueeze(1) * 8.0))
        h = torch.relu(self.c2(h))
        h = h.mean(dim=2)
        return self.fc(h - h.mean(dim=1, keepdim=True)) * 4.0  # (1, 4)


class FbankCls(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(20, 16)
        self.fc = nn.Linear(16, 4, bias=False)

    def forward(self, feats):  # (1, T, 20)
        h = torch.tanh(self.l1((feats - 12.0) / 4.0)).mean(dim=1)
        return self.fc(h - h.mean(dim=1, keepdim=True)).reshape(-1) * 8.0  # (4)


def write_dir(name, rng, f0_scale):
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "wav"), exist_ok=True)
    waves = []
    for utt, spk, sec, f0, emo in UTTS:
        x = synth(rng, sec, f0 * f0_scale)
        scipy.io.wavfile.write(os.path.join(d, "wav", utt + ".wav"), RATE, x)
        waves.append(x)
    with open(os.path.join(d, "wav.scp"), "w") as f:
        f.writelines("%s wav/%s.wav\n" % (u[0], u[0]) for u in UTTS)
    with open(os.path.join(d, "utt2spk"), "w") as f:
        f.writelines("%s %s\n" % (u[0], u[1]) for u in UTTS)
    with open(os.path.join(d, "spk2utt"), "w") as f:
        for s in ["s1", "s2", "s3"]:
            f.write("%s %s\n" % (s, " ".join(u[0] for u in UTTS if u[1] == s)))
    with open(os.path.join(d, "utt2emo"), "w") as f:
        f.writelines("%s %s\n" % (u[0], u[4]) for u in UTTS)
    return waves


def export(model, path, example, in_name, out_name, axis):
    torch.onnx.export(model, example, path, opset_version=13, input_names=[in_name],
                      output_names=[out_name], dynamic_axes={in_name: {1: axis}},
                      do_constant_folding=True)


def logits_rows(case, model, inputs):
    rows = []
    with torch.inference_mode():
        for (utt, *_), x in zip(UTTS, inputs):
            y = model(x).reshape(-1).numpy()
            rows.append("%s %s %s\n" % (case, utt, " ".join("%.9g" % v for v in y)))
    return rows


def fit(model, inputs, steps):
    """A few Adam steps on the 8 utterances of data/ so that the classifier's answers
    differ between utterances and between data/ and data_anon/ (random weights answer one
    class for all); the goldens are the exported model's logits, whatever the fit."""
    y = torch.tensor([EMOS.index(u[4]) for u in UTTS])
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model.train()
    for _ in range(steps):
        opt.zero_grad()
        out = torch.stack([model(x).reshape(-1) for x in inputs])
        nn.functional.cross_entropy(out, y).backward()
        opt.step()
    model.eval()


def unit(wave):
    return torch.from_numpy(wave.astype(np.float32) / 32768.0).unsqueeze(0)


def fbank(wave):
    w = torch.from_numpy(wave.astype(np.float32)).unsqueeze(0)
    return torchaudio.compliance.kaldi.fbank(w, num_mel_bins=20, dither=0.0,
                                             sample_frequency=RATE).unsqueeze(0)


def main():
    torch.manual_seed(30)
    rng = np.random.RandomState(30)
    orig = write_dir("data", rng, 1.0)
    anon = write_dir("data_anon", rng, 1.3)
    with open(os.path.join(HERE, "labels.txt"), "w") as f:
        f.writelines(e + "\n" for e in EMOS)
    wa, wb, fb = WaveCls(), WaveCls(), FbankCls()
    fit(wa, [unit(x) for x in orig], 60)
    fit(wb, [unit(x) for x in orig], 8)
    fit(fb, [fbank(x) for x in orig], 300)
    export(wa, os.path.join(HERE, "wave.onnx"), torch.randn(1, 8000), "wave", "logits",
           "samples")
    export(wb, os.path.join(HERE, "wave_b.onnx"), torch.randn(1, 8000), "wave", "logits",
           "samples")
    export(fb, os.path.join(HERE, "fbank.onnx"), torch.randn(1, 50, 20), "feats", "logits",
           "time")
    with open(os.path.join(HERE, "folds.txt"), "w") as f:
        f.write("s1 wave.onnx\ns2 wave.onnx\ns3 wave_b.onnx\n")
    rows = logits_rows("wave", wa, [unit(x) for x in orig])
    rows += logits_rows("wave_anon", wa, [unit(x) for x in anon])
    rows += logits_rows("wave_b", wb, [unit(x) for x in orig])
    rows += logits_rows("wave_b_anon", wb, [unit(x) for x in anon])
    rows += logits_rows("fbank", fb, [fbank(x) for x in orig])
    # folds.txt on data/ and data_anon/ scored as VoicePAT's evaluate_ser does: per
    # speaker, its fold's model, recall_score(average="macro"), then the mean
    with open(os.path.join(HERE, "folds_uar.txt"), "w") as f:
        for name, waves in (("data", orig), ("data_anon", anon)):
            uars = []
            for spk in ["s1", "s2", "s3"]:
                model = wb if spk == "s3" else wa
                ref, hyp = [], []
                with torch.inference_mode():
                    for (utt, s_, _, _, emo), x in zip(UTTS, waves):
                        if s_ == spk:
                            ref.append(EMOS.index(emo))
                            hyp.append(int(model(unit(x)).reshape(-1).argmax()))
                uars.append(skm.recall_score(ref, hyp, average="macro"))
            f.write("%s %.17g\n" % (name, np.mean(uars)))
    with open(os.path.join(HERE, "logits.txt"), "w") as f:
        f.write("# PyTorch %s, torchaudio %s\n" % (torch.__version__, torchaudio.__version__))
        f.writelines(rows)

    r = np.random.RandomState(7)
    truth = r.choice(4, 300, p=[0.5, 0.25, 0.15, 0.10])
    pred = np.where(r.rand(300) < 0.6, truth, r.choice(5, 300))
    uar = skm.balanced_accuracy_score(truth, pred)
    acc = skm.accuracy_score(truth, pred)
    rec = skm.recall_score(truth, pred, labels=[0, 1, 2, 3], average=None)
    cm = skm.confusion_matrix(truth, pred, labels=[0, 1, 2, 3, 4])
    # the VPC 2024's per-speaker folds (VoicePAT evaluation/utility/ser evaluate_ser):
    # per fold recall_score(average="macro") and ACC_<class> = accuracy_score on the
    # fold's samples of that class, then the mean over folds (pandas' mean skips NaN)
    fold = r.choice(6, 300)
    uar_folds, acc_folds = [], {k: [] for k in range(4)}
    for g in range(6):
        sel = fold == g
        uar_folds.append(skm.recall_score(truth[sel], pred[sel], average="macro"))
        for k in range(4):
            selk = sel & (truth == k)
            if selk.any():
                acc_folds[k].append(skm.accuracy_score(truth[selk], pred[selk]))
    macro = skm.recall_score(truth, pred, average="macro")
    with open(os.path.join(HERE, "preds.txt"), "w") as f:
        f.write("# scikit-learn %s\n" % sklearn.__version__)
        f.writelines("%d %d %d\n" % (a, b, g) for a, b, g in zip(truth, pred, fold))
        f.write("uar %.17g\naccuracy %.17g\n" % (uar, acc))
        f.write("uar_macro %.17g\n" % macro)
        f.write("uar_folds %.17g\n" % np.mean(uar_folds))
        f.write("acc_folds %s\n" % " ".join("%.17g" % np.mean(acc_folds[k]) for k in range(4)))
        f.write("recall %s\n" % " ".join("%.17g" % v for v in rec))
        f.write("confusion %s\n" % " ".join(str(v) for v in cm.reshape(-1)))


if __name__ == "__main__":
    main()
