#!/usr/bin/python3
"""bench/train_torch.py - the PyTorch side of the extractor-training benchmark
(issue 33 item 2; bench/train_torch.sh runs both sides and prints the ratios).

    /usr/bin/python3 bench/train_torch.py DIR THREADS

Trains the ECAPA-TDNN of audio/ecapa.h, written again in PyTorch with the same
layers and sizes (stem Conv1d k=5 C + ReLU + BN; three SE-Res2Blocks with
dilations 2, 3, 4, scale 4, SE bottleneck C/4, residual; MFA 1x1 3C -> 3C + ReLU;
attentive statistics pooling on [h, mean, std] with an attention MLP C/4 wide,
tanh; BN; dense 64), edges replicated as vpaudit's TDNN does, AAM-softmax
(m = 0.2, s = 30), Adam (lr 2e-3), batches of 32 random 150-frame chunks, on the
features build/bench/bench_train wrote to DIR (feats.npy, lens.txt): C = 64 for one
epoch of all utterances and C = 512 (the VPC's width) for one epoch of the first
160, the same work as bench_train's C side.  torch.set_num_threads(THREADS);
the runner also sets OMP_NUM_THREADS and OPENBLAS_NUM_THREADS to it.  Prints
"NAME THREADS FRAMES_PER_S" lines.  Not part of the product or of `make test`.
"""
import math
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def tdnn(cin, cout, k, d):
    return nn.Conv1d(cin, cout, k, dilation=d)


class Conv(nn.Module):
    """Conv1d with replicated edges (vpaudit's TDNN), then ReLU and BN."""

    def __init__(self, cin, cout, k=1, d=1):
        super().__init__()
        self.pad = (k - 1) // 2 * d
        self.c = tdnn(cin, cout, k, d)
        self.bn = nn.BatchNorm1d(cout)

    def forward(self, x):
        if self.pad:
            x = F.pad(x, (self.pad, self.pad), mode="replicate")
        return self.bn(F.relu(self.c(x)))


class Block(nn.Module):
    def __init__(self, c, s, d, b):
        super().__init__()
        self.s, self.w = s, c // s
        self.c1 = Conv(c, c)
        self.k = nn.ModuleList([Conv(self.w, self.w, 3, d) for _ in range(s - 1)])
        self.c2 = Conv(c, c)
        self.se1 = nn.Linear(c, b)
        self.se2 = nn.Linear(b, c)

    def forward(self, x):
        h = self.c1(x)
        hs = torch.split(h, self.w, dim=1)
        ys = [hs[0]]
        y = None
        for i in range(1, self.s):
            u = hs[i] if i == 1 else hs[i] + y
            y = self.k[i - 1](u)
            ys.append(y)
        z = self.c2(torch.cat(ys, dim=1))
        g = torch.sigmoid(self.se2(F.relu(self.se1(z.mean(dim=2)))))
        return z * g.unsqueeze(2) + x


class ECAPA(nn.Module):
    def __init__(self, feat, c, emb=64, s=4):
        super().__init__()
        a = max(4, c // 4)
        self.stem = Conv(feat, c, 5, 1)
        self.blocks = nn.ModuleList([Block(c, s, d, a) for d in (2, 3, 4)])
        self.mfa = nn.Conv1d(3 * c, 3 * c, 1)
        self.att1 = nn.Linear(9 * c, a)
        self.att2 = nn.Linear(a, 3 * c)
        self.bn = nn.BatchNorm1d(6 * c)
        self.fc = nn.Linear(6 * c, emb)

    def forward(self, x):  # (batch, time, feat)
        x = self.stem(x.transpose(1, 2))
        outs = []
        for b in self.blocks:
            x = b(x)
            outs.append(x)
        h = F.relu(self.mfa(torch.cat(outs, dim=1)))  # (B, D, T)
        t = h.size(2)
        mu = h.mean(dim=2, keepdim=True)
        sd = torch.sqrt(h.var(dim=2, unbiased=False, keepdim=True).clamp(min=1e-10))
        ctx = torch.cat([h, mu.expand(-1, -1, t), sd.expand(-1, -1, t)], dim=1)
        e = self.att2(torch.tanh(self.att1(ctx.transpose(1, 2)))).transpose(1, 2)
        w = torch.softmax(e, dim=2)
        m = torch.sum(h * w, dim=2)
        s = torch.sqrt((torch.sum(h * h * w, dim=2) - m * m).clamp(min=1e-10))
        return self.fc(self.bn(torch.cat([m, s], dim=1)))


def aam_loss(e, W, y, m=0.2, s=30.0):
    c = F.linear(F.normalize(e), F.normalize(W)).clamp(-1, 1)
    sin = torch.sqrt((1 - c * c).clamp(min=0))
    phi = c * math.cos(m) - sin * math.sin(m)
    phi = torch.where(c > math.cos(math.pi - m), phi, c - m * math.sin(math.pi - m))
    onehot = F.one_hot(y, W.size(0)).to(c.dtype)
    return F.cross_entropy(s * (onehot * phi + (1 - onehot) * c), y)


def main():
    d, threads = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    feats = np.load(f"{d}/feats.npy")
    lens, labs = [], []
    for line in open(f"{d}/lens.txt"):
        n, l = line.split()
        lens.append(int(n))
        labs.append(int(l))
    offs = np.concatenate([[0], np.cumsum(lens)])
    K = max(labs) + 1
    rng = np.random.default_rng(1)
    for c, n_utt in ((64, len(lens)), (512, 160)):
        net = ECAPA(feats.shape[1], c)
        W = nn.Parameter(torch.randn(K, 64))
        opt = torch.optim.Adam(list(net.parameters()) + [W], lr=2e-3)
        net.train()
        order = rng.permutation(n_utt)
        t0 = time.perf_counter()
        for b0 in range(0, n_utt - n_utt % 32, 32):
            idx = order[b0:b0 + 32]
            x = np.stack([feats[offs[i] + (st := rng.integers(0, lens[i] - 150 + 1)):offs[i] + st + 150]
                          for i in idx])
            y = torch.tensor([labs[i] for i in idx])
            loss = aam_loss(net(torch.from_numpy(x)), W, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        t = time.perf_counter() - t0
        print(f"ecapa{c} {threads} {(n_utt - n_utt % 32) * 150 / t:.0f}", flush=True)


main()
