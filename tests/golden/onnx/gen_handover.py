#!/usr/bin/python3
"""tests/golden/onnx/gen_handover.py - the golden of test_onnx's buffer hand-over case.

Regenerate (from the repository root; Debian 12 python3-torch 1.13.1, python3-onnx
1.12.0, python3-numpy 1.24.2; CPU, seed 3):

    /usr/bin/python3 tests/golden/onnx/gen_handover.py

A shape operator (Reshape, Flatten, Squeeze, Unsqueeze) takes its input's buffer
instead of copying it when it is that value's last data reader (onnx/run.c).  This
model has both cases PyTorch exports produce: GroupNorm (wav2vec2's first layer)
exports Reshape -> InstanceNormalization -> Reshape(Shape(x)), so x's buffer is
handed over while a later Shape still reads its dims; and a Reshape whose input is
multiplied afterwards, which must copy.  Writes handover.onnx, .x.npy, .y.npy, .txt
through gen.py's export().
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402


class Handover(nn.Module):
    def __init__(self, feat=8, c=6):
        super().__init__()
        self.conv = nn.Conv1d(feat, c, 3)
        self.gn = nn.GroupNorm(c, c, affine=True)
        self.lin = nn.Linear(c, c)

    def forward(self, x):  # (batch, time, feat)
        g = F.gelu(self.gn(self.conv(x.transpose(1, 2))))
        y = g.reshape(g.size(0), -1)
        z = y.reshape(g.shape) * g  # g is read after its Reshape
        return self.lin(z.transpose(1, 2))


def main():
    torch.manual_seed(3)
    m = Handover()
    with torch.no_grad():  # GroupNorm's affine away from 1 and 0
        m.gn.weight.uniform_(0.5, 1.5)
        m.gn.bias.uniform_(-0.5, 0.5)
    gen.export("handover", m, 8, 30, 23, 13)


if __name__ == "__main__":
    sys.exit(main())
