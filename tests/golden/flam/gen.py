#!/usr/bin/python3
"""tests/golden/flam/gen.py - the FL acoustic models of tests/e2e/data/am/sim.yaml as ONNX
files, for the `fl_acoustic_models` ONNX import (tests/e2e/test_footprint.sh).

Regenerate (from the repository root, after `make`; Debian 12 python3-torch 1.13.1,
python3-onnx 1.12.0, python3-numpy 1.24.2):

    /usr/bin/python3 tests/golden/flam/gen.py

It runs `./vpaudit run tests/e2e/data/am/sim.yaml` in a temporary folder (the simulated
target dumps its model folders, learn/NN.md), rebuilds each model in PyTorch - a `tdnn`
layer with context c-p..c+p is a Conv1d of kernel 2p+1 on the input padded by
replicating the edge frames (learn/NN.md: "a frame outside the sequence is clamped"),
its weight (out, k*in) reshaped to (out, k, in) and permuted to (out, in, k); `dense` is
a Linear; `relu` a ReLU - checks that PyTorch gives the dumped activations of the
global model (max abs error printed), and exports every model with
torch.onnx.export (opset 13, dynamic time axis, input (1, T, 40)) as MODEL.onnx here,
with models.txt and layers.txt (the ONNX names of the three ReLU outputs, the hidden
layers). If the simulator changes, regenerate: test_footprint.sh compares this import
with the model folders the simulator dumps at test time.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def read_yaml_layers(path):
    layers, cur = [], None
    for line in open(path):
        s = line.strip()
        if s.startswith("- kind:"):
            cur = {"kind": s.split(":", 1)[1].strip()}
            layers.append(cur)
        elif cur is not None and ":" in s:
            k, v = s.split(":", 1)
            cur[k.strip()] = v.strip()
    return layers


class AM(nn.Module):
    def __init__(self, folder):
        super().__init__()
        self.spec = read_yaml_layers(os.path.join(folder, "model.yaml"))
        self.mods = nn.ModuleList()
        self.pads = []
        for l in self.spec:
            name = l["name"]
            if l["kind"] == "tdnn":
                ctx = [int(c) for c in l["context"].strip("[]").split(",")]
                assert ctx == list(range(ctx[0], ctx[-1] + 1)) and ctx[0] == -ctx[-1]
                w = np.load(os.path.join(folder, name + ".weight.npy"))
                b = np.load(os.path.join(folder, name + ".bias.npy"))
                k = len(ctx)
                out, kin = w.shape
                conv = nn.Conv1d(kin // k, out, k)
                conv.weight.data = torch.from_numpy(
                    w.reshape(out, k, kin // k).transpose(0, 2, 1).copy()).float()
                conv.bias.data = torch.from_numpy(b).float()
                self.mods.append(conv)
                self.pads.append(ctx[-1])
            elif l["kind"] == "dense":
                w = np.load(os.path.join(folder, name + ".weight.npy"))
                b = np.load(os.path.join(folder, name + ".bias.npy"))
                lin = nn.Linear(w.shape[1], w.shape[0])
                lin.weight.data = torch.from_numpy(w).float()
                lin.bias.data = torch.from_numpy(b).float()
                self.mods.append(lin)
                self.pads.append(None)
            elif l["kind"] == "relu":
                self.mods.append(nn.ReLU())
                self.pads.append(None)
            else:
                raise SystemExit("unsupported layer " + l["kind"])

    def forward(self, x):  # (1, T, F)
        h = x.transpose(1, 2)  # (1, F, T)
        for m, p in zip(self.mods, self.pads):
            if isinstance(m, nn.Conv1d):
                h = m(F.pad(h, (p, p), mode="replicate"))
            elif isinstance(m, nn.Linear):
                h = m(h.transpose(1, 2)).transpose(1, 2)
            else:
                h = m(h)
        return h.transpose(1, 2)


def main():
    tmp = tempfile.mkdtemp()
    try:
        subprocess.run([os.path.join(ROOT, "vpaudit"), "run",
                        os.path.join(ROOT, "tests/e2e/data/am/sim.yaml"), "-o", "sim",
                        "--no-plots", "--quiet"], cwd=tmp, check=True)
        md = os.path.join(tmp, "am-models")
        lines = [l.split() for l in open(os.path.join(md, "models.txt")) if l.strip()]
        x = torch.randn(1, 50, 40)
        names = None
        for mid, _, _ in lines:
            model = AM(os.path.join(md, mid))
            model.eval()
            path = os.path.join(HERE, mid + ".onnx")
            torch.onnx.export(model, x, path, opset_version=13, input_names=["feats"],
                              output_names=["out"], dynamic_axes={"feats": {1: "time"}},
                              do_constant_folding=True)
            g = onnx.load(path).graph
            relus = [n.output[0] for n in g.node if n.op_type == "Relu"]
            names = names or relus
            assert relus == names
            if mid == "global":
                ind = sorted(os.listdir(os.path.join(md, "indicator")))[0]
                feats = torch.from_numpy(np.load(os.path.join(md, "indicator", ind))).float()
                caught = []
                hs = [m.register_forward_hook(lambda mod, i, o: caught.append(o))
                      for m in model.mods if isinstance(m, nn.ReLU)]
                with torch.inference_mode():
                    model(feats.unsqueeze(0))
                for h in hs:
                    h.remove()
                err = 0.0
                for k, o in enumerate(caught):
                    ref = np.load(os.path.join(tmp, "am-acts", "global", "layer%d" % (k + 1), ind))
                    err = max(err, float(np.abs(o[0].transpose(0, 1).numpy() - ref).max()))
                print("global: PyTorch vs vpaudit's dumped activations, max abs error %.3g" % err)
                assert err < 1e-4
        shutil.copy(os.path.join(md, "models.txt"), os.path.join(HERE, "models.txt"))
        with open(os.path.join(HERE, "layers.txt"), "w") as f:
            f.write("\n".join(names) + "\n")
        print("%d models, hidden layers %s" % (len(lines), names))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
