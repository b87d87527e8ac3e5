# bench/flam_torch.py DIR THREADS - the global acoustic TDNN of
# bench_flam_train (issue 32) trained by PyTorch CPU on the same frames: 4 Conv1d
# layers of 256 (kernel/dilation = contexts {-2..2}, {-1,0,1}, {-1,0,1}, {-3,0,3},
# edges replicated as vpaudit's TDNN does), ReLU, a 1x1 output over 40 classes,
# cross-entropy on every frame, Adam lr 2e-3, mini-batches of 8 utterances,
# 2 epochs.  Prints the training seconds (data loading excluded).  A benchmark
# script (make bench), not part of the product or of the tests.
import sys
import time

import numpy as np
import torch

d, threads = sys.argv[1], int(sys.argv[2])
torch.set_num_threads(threads)
torch.manual_seed(0)
x = np.load(f"{d}/x.npy").astype(np.float32)
y = np.load(f"{d}/y.npy").astype(np.int64)
off = np.load(f"{d}/off.npy").astype(np.int64)
n = len(off) - 1
T = int(off[1] - off[0])
assert all(off[i + 1] - off[i] == T for i in range(n))
X = torch.from_numpy(x.reshape(n, T, 40).transpose(0, 2, 1).copy())
Y = torch.from_numpy(y.reshape(n, T))


class TDNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        spec = [(5, 1), (3, 1), (3, 1), (3, 3)]
        layers, cin = [], 40
        for k, dil in spec:
            pad = (k - 1) * dil // 2
            layers += [torch.nn.ReplicationPad1d(pad), torch.nn.Conv1d(cin, 256, k, dilation=dil),
                       torch.nn.ReLU()]
            cin = 256
        layers.append(torch.nn.Conv1d(256, 40, 1))
        self.net = torch.nn.Sequential(*layers)

    def forward(self, z):
        return self.net(z)


m = TDNN()
opt = torch.optim.Adam(m.parameters(), lr=2e-3)
loss_f = torch.nn.CrossEntropyLoss()
g = torch.Generator().manual_seed(1)
t0 = time.perf_counter()
for ep in range(2):
    perm = torch.randperm(n, generator=g)
    for b in range(0, n, 8):
        idx = perm[b:b + 8]
        opt.zero_grad()
        loss = loss_f(m(X[idx]), Y[idx])
        loss.backward()
        opt.step()
print(f"{time.perf_counter() - t0:.3f}")
