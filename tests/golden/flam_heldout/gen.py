#!/usr/bin/python3
"""tests/golden/flam_heldout/gen.py - a labelled held-out set for the ONNX models of
tests/golden/flam and the frame accuracies they must give (issue 31 item 11: the
utility of imported FL acoustic models; tests/e2e/test_flam_dp.sh).

Regenerate (from the repository root; Debian 12 python3-numpy 1.24.2, python3-onnx
1.12.0):

    /usr/bin/python3 tests/golden/flam_heldout/gen.py

The reference is independent of vpaudit: each model's forward pass is written here in
NumPy float64 from its ONNX initializers (the graph tests/golden/flam/gen.py exports:
three Conv1d blocks on replicate-padded input, each followed by ReLU, then MatMul + bias),
not run by vpaudit's ONNX engine.  Features are random (seeded) float32 values; labels
are the global model's arg-max on 70% of the frames and a random class elsewhere, so
that accuracies are neither 0 nor 1.  Every frame's top two outputs differ by more than
1e-3 for every model, so float32 evaluation cannot change an arg-max.

Writes feats.ark (Kaldi text matrices), labels.ark (Kaldi text vectors of class ids),
utt2spk, and expected.txt: per model `MODEL correct frames` (its speaker's utterances),
then `mean_personalised X` and `mean_global Y` (shortest round-trip digits, the means over models with
held-out data in models.txt order, as vpaudit sums them).
"""
import os

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
FLAM = os.path.join(HERE, "..", "flam")


def load(mid):
    m = onnx.load(os.path.join(FLAM, mid + ".onnx"))
    w = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in m.graph.initializer}
    convs = [(w["mods.%d.weight" % i], w["mods.%d.bias" % i]) for i in (0, 2, 4)]
    mm = [v for k, v in w.items() if k.startswith("onnx::MatMul")]
    assert len(mm) == 1
    return convs, mm[0], w["mods.6.bias"]


def forward(model, x):  # x (T, F) -> (T, K)
    convs, mm, b = model
    h = x.astype(np.float64)
    for wt, bias in convs:  # wt (out, in, k)
        k = wt.shape[2]
        p = k // 2
        hp = np.concatenate([np.repeat(h[:1], p, 0), h, np.repeat(h[-1:], p, 0)])
        T = h.shape[0]
        out = np.zeros((T, wt.shape[0]))
        for j in range(k):
            out += hp[j:j + T] @ wt[:, :, j].T
        h = np.maximum(out + bias, 0)
    return h @ mm + b


def main():
    lines = [l.split() for l in open(os.path.join(FLAM, "models.txt")) if l.strip()]
    models = {mid: load(mid) for mid, _, _ in lines}
    rng = np.random.default_rng(31)
    speakers = ["p2spk000", "p2spk001", "p2spk002", "p1spk003", "p2spk005"]
    utts = []
    for s in speakers:
        for k in range(2):
            while True:
                T = int(rng.integers(25, 45))
                x = rng.standard_normal((T, 40)).astype(np.float32)
                outs = [forward(models[mid], x) for mid, spk, _ in lines
                        if mid == "global" or spk == s]
                srt = [np.sort(o, axis=1) for o in outs]
                if min((s2[:, -1] - s2[:, -2]).min() for s2 in srt) > 1e-3:
                    break
            g = outs[0].argmax(1)
            rnd = rng.integers(0, outs[0].shape[1], T)
            lab = np.where(rng.random(T) < 0.7, g, rnd)
            utts.append(("%s-h%d" % (s, k + 1), s, x, lab))
    with open(os.path.join(HERE, "feats.ark"), "w") as f:
        for u, _, x, _ in utts:
            f.write(u + "  [\n")
            for i, row in enumerate(x):
                f.write("  " + " ".join("%.9g" % v for v in row) +
                        (" ]\n" if i == len(x) - 1 else "\n"))
    with open(os.path.join(HERE, "labels.ark"), "w") as f:
        for u, _, _, lab in utts:
            f.write(u + " [ " + " ".join(str(int(v)) for v in lab) + " ]\n")
    with open(os.path.join(HERE, "utt2spk"), "w") as f:
        for u, s, _, _ in utts:
            f.write(u + " " + s + "\n")
    gl = {u: (forward(models["global"], x).argmax(1) == lab).sum() for u, _, x, lab in utts}
    sa = sg = 0.0
    n = 0
    with open(os.path.join(HERE, "expected.txt"), "w") as f:
        for mid, spk, part in lines:
            if part == "global":
                continue
            mine = [(u, x, lab) for u, s, x, lab in utts if s == spk]
            if not mine:
                continue
            ok = sum(int((forward(models[mid], x).argmax(1) == lab).sum()) for _, x, lab in mine)
            okg = sum(int(gl[u]) for u, _, _ in mine)
            fr = sum(len(lab) for _, _, lab in mine)
            f.write("%s %d %d %d\n" % (mid, ok, okg, fr))
            sa += ok / fr
            sg += okg / fr
            n += 1
        f.write("mean_personalised %r\n" % (sa / n))
        f.write("mean_global %r\n" % (sg / n))


if __name__ == "__main__":
    main()
