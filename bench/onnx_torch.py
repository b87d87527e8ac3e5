#!/usr/bin/python3
"""bench/onnx_torch.py - the PyTorch side of `make bench`'s ONNX benchmark.

    /usr/bin/python3 bench/onnx_torch.py DIR N SECONDS THREADS[,THREADS...] [--no-export] [--varlen]

Builds ECAPA-TDNN (C = 512, 192-d embeddings, 80 fbank) and a ResNet34
(WeSpeaker layout: basic blocks [3, 4, 6, 3], 32 base channels, 80 fbank),
random weights (seed 0), exports both to DIR/{ecapa512,resnet34}.onnx (opset 14,
dynamic time axis) with one (1, SECONDS*100, 80) input DIR/x.npy (--no-export:
reuse them), then times N forward passes of each under torch.inference_mode()
with each thread count (torch.set_num_threads: PyTorch's intra-op threads; run one
process per thread count with OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set to it, as
bench/run.sh does, or the BLAS that PyTorch calls for some convolutions and matrix
products uses every core whatever set_num_threads says) and
prints "NAME THREADS UTT_PER_S CPU_S_PER_UTT" lines (CPU: the process's CPU
time, all threads).  vpaudit's engine is timed on the same files by
build/bench/bench_onnx (bench/run.sh prints the ratios).
--varlen: variable-length utterances (issue 33): max(N, 1000) lengths of 2-20 s (200-2000
frames, uniform, seed 1) written to DIR/lengths.txt at export, one a line;
utterance i is the first lengths[i] frames of x (SECONDS must then be >= 20),
the prefixes build/bench/bench_onnx takes with DIR/lengths.txt.
"""
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "onnx"))
from gen import ECAPA, Basic  # noqa: E402  (the golden models' definitions)


class ResNet34(nn.Module):
    def __init__(self, feat=80, c=32, emb=256):
        super().__init__()
        self.c0 = nn.Conv2d(1, c, 3, 1, 1, bias=False)
        self.b0 = nn.BatchNorm2d(c)
        layers, i = [], c
        for o, n, s in ((c, 3, 1), (2 * c, 4, 2), (4 * c, 6, 2), (8 * c, 3, 2)):
            for k in range(n):
                layers.append(Basic(i, o, s if k == 0 else 1))
                i = o
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(2 * 8 * c * (feat // 8), emb)

    def forward(self, x):
        x = x.permute(0, 2, 1).unsqueeze(1)
        x = self.layers(F.relu(self.b0(self.c0(x))))
        x = x.reshape(x.shape[0], -1, x.shape[-1])
        return self.fc(torch.cat([x.mean(dim=-1), torch.sqrt(x.var(dim=-1) + 1e-5)], dim=1))


def main():
    out, n, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    threads = [int(t) for t in sys.argv[4].split(",")]
    export = "--no-export" not in sys.argv[5:]
    varlen = "--varlen" in sys.argv[5:]
    torch.manual_seed(0)
    os.makedirs(out, exist_ok=True)
    x = torch.randn(1, int(secs * 100), 80)
    if export:
        np.save(os.path.join(out, "x.npy"), x.numpy().astype("<f4"))
    else:
        x = torch.from_numpy(np.load(os.path.join(out, "x.npy")))
    lengths = [x.shape[1]] * n
    if varlen:
        lp = os.path.join(out, "lengths.txt")
        if export:
            lengths = [int(v) for v in np.random.default_rng(1).integers(200, 2001, size=max(n, 1000))]
            assert max(lengths) <= x.shape[1], "--varlen needs SECONDS >= 20"
            with open(lp, "w") as f:
                f.write("".join("%d\n" % v for v in lengths))
        else:
            with open(lp) as f:
                lengths = [int(v) for v in f.read().split()][:n]
    for name, model in (("ecapa512", ECAPA(feat=80, c=512, emb=192, att=128)), ("resnet34", ResNet34())):
        model.eval()
        path = os.path.join(out, name + ".onnx")
        if export:
            torch.onnx.export(model, x, path, opset_version=14, input_names=["feats"], output_names=["out"],
                              dynamic_axes={"feats": {1: "time"}})
        for t in threads:
            torch.set_num_threads(t)
            with torch.inference_mode():
                model(x)  # warm-up
                t0, c0 = time.perf_counter(), time.process_time()
                for k in range(n):
                    model(x[:, :lengths[k % len(lengths)]])
                dt, dc = time.perf_counter() - t0, time.process_time() - c0
            print("%s %d %.4f %.4f" % (name, t, n / dt, dc / n), flush=True)


if __name__ == "__main__":
    main()
