#!/usr/bin/python3
"""tests/golden/onnx/gen.py - golden ONNX models and PyTorch outputs for test_onnx.

Regenerate (from the repository root, Debian 12 packages python3-torch 1.13.1,
python3-onnx 1.12.0, python3-numpy 1.24.2; CPU, seed 0):

    /usr/bin/python3 tests/golden/onnx/gen.py

Writes, for each model NAME (tiny widths so the files stay small):
  NAME.onnx       torch.onnx.export with a dynamic time axis
  NAME.x.npy      the input, with a time length different from the export's
                  (so the Shape -> Gather -> Concat -> Reshape chains are real)
  NAME.y.npy      PyTorch's output under torch.inference_mode()
  NAME.hK.npy     intermediate activations caught by forward hooks
  NAME.txt        the manifest: "in NAME FILE" / "out VALUE FILE" lines; an
                  intermediate's VALUE is the ONNX name of the node output
                  that the hooked module became (found in the exported graph)
and the bad-input models of tests/e2e/test_onnx.sh (bad_*.onnx).
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
np.random.seed(0)


class TDNN(nn.Module):
    """x-vector TDNN (Snyder et al. 2018) at tiny width: frame layers with
    dilated 1-D convolutions, statistics pooling (mean, std), segment layers."""

    def __init__(self, feat=20, c=32, emb=16):
        super().__init__()
        spec = [(feat, c, 5, 1), (c, c, 3, 2), (c, c, 3, 3), (c, c, 1, 1), (c, 3 * c, 1, 1)]
        self.frames = nn.ModuleList()
        for i, o, k, d in spec:
            self.frames.append(nn.Sequential(nn.Conv1d(i, o, k, dilation=d), nn.ReLU(), nn.BatchNorm1d(o)))
        self.seg1 = nn.Linear(6 * c, emb)
        self.seg2 = nn.Sequential(nn.ReLU(), nn.BatchNorm1d(emb), nn.Linear(emb, emb))

    def forward(self, x):  # x: (batch, time, feat)
        x = x.transpose(1, 2)
        for f in self.frames:
            x = f(x)
        stats = torch.cat([x.mean(dim=2), x.std(dim=2)], dim=1)
        return self.seg2(self.seg1(stats))


class SE(nn.Module):
    def __init__(self, c, b=8):
        super().__init__()
        self.c1 = nn.Conv1d(c, b, 1)
        self.c2 = nn.Conv1d(b, c, 1)

    def forward(self, x):
        s = x.mean(dim=2, keepdim=True)
        return x * torch.sigmoid(self.c2(F.relu(self.c1(s))))


class SERes2Block(nn.Module):
    """ECAPA-TDNN's SE-Res2Block (Desplanques et al. 2020)."""

    def __init__(self, c, k, d, scale=4):
        super().__init__()
        self.scale = scale
        w = c // scale
        self.pre = nn.Sequential(nn.Conv1d(c, c, 1), nn.ReLU(), nn.BatchNorm1d(c))
        self.convs = nn.ModuleList(
            [nn.Sequential(nn.Conv1d(w, w, k, dilation=d, padding=d * (k - 1) // 2), nn.ReLU(), nn.BatchNorm1d(w))
             for _ in range(scale - 1)])
        self.post = nn.Sequential(nn.Conv1d(c, c, 1), nn.ReLU(), nn.BatchNorm1d(c))
        self.se = SE(c)

    def forward(self, x):
        y = self.pre(x)
        parts = torch.chunk(y, self.scale, dim=1)
        outs, prev = [], None
        for i, p in enumerate(parts):
            if i == 0:
                outs.append(p)
                continue
            prev = self.convs[i - 1](p if prev is None else p + prev)
            outs.append(prev)
        y = self.post(torch.cat(outs, dim=1))
        return x + self.se(y)


class ECAPA(nn.Module):
    """ECAPA-TDNN at C=32: SE-Res2 blocks, multi-layer aggregation, attentive
    statistics pooling with global context."""

    def __init__(self, feat=20, c=32, emb=16, att=8):
        super().__init__()
        self.l0 = nn.Sequential(nn.Conv1d(feat, c, 5, padding=2), nn.ReLU(), nn.BatchNorm1d(c))
        self.blocks = nn.ModuleList([SERes2Block(c, 3, d) for d in (2, 3, 4)])
        self.mfa = nn.Sequential(nn.Conv1d(3 * c, 3 * c, 1), nn.ReLU())
        self.att = nn.Sequential(nn.Conv1d(9 * c, att, 1), nn.ReLU(), nn.BatchNorm1d(att), nn.Tanh(),
                                 nn.Conv1d(att, 3 * c, 1))
        self.bn = nn.BatchNorm1d(6 * c)
        self.fc = nn.Linear(6 * c, emb)

    def forward(self, x):  # (batch, time, feat)
        x = self.l0(x.transpose(1, 2))
        outs = []
        for b in self.blocks:
            x = b(x)
            outs.append(x)
        x = self.mfa(torch.cat(outs, dim=1))
        t = x.size(2)
        mu = x.mean(dim=2, keepdim=True).repeat(1, 1, t)
        sd = torch.sqrt(x.var(dim=2, keepdim=True).clamp(min=1e-4)).repeat(1, 1, t)
        w = torch.softmax(self.att(torch.cat([x, mu, sd], dim=1)), dim=2)
        m = torch.sum(x * w, dim=2)
        s = torch.sqrt((torch.sum(x * x * w, dim=2) - m * m).clamp(min=1e-4))
        return self.fc(self.bn(torch.cat([m, s], dim=1)))


class Basic(nn.Module):
    def __init__(self, i, o, stride):
        super().__init__()
        self.c1 = nn.Conv2d(i, o, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(o)
        self.c2 = nn.Conv2d(o, o, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(o)
        self.sc = nn.Sequential()
        if stride != 1 or i != o:
            self.sc = nn.Sequential(nn.Conv2d(i, o, 1, stride, bias=False), nn.BatchNorm2d(o))

    def forward(self, x):
        return F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))) + self.sc(x))


class ResNet(nn.Module):
    """A WeSpeaker-style ResNet (basic blocks, 2-D) at tiny width with
    temporal statistics pooling."""

    def __init__(self, feat=16, c=8, emb=16):
        super().__init__()
        self.c0 = nn.Conv2d(1, c, 3, 1, 1, bias=False)
        self.b0 = nn.BatchNorm2d(c)
        self.layers = nn.Sequential(Basic(c, c, 1), Basic(c, 2 * c, 2), Basic(2 * c, 4 * c, 2))
        self.fc = nn.Linear(2 * 4 * c * (feat // 4), emb)

    def forward(self, x):  # (batch, time, feat)
        x = x.permute(0, 2, 1).unsqueeze(1)  # (batch, 1, feat, time)
        x = self.layers(F.relu(self.b0(self.c0(x))))
        x = x.reshape(x.shape[0], -1, x.shape[-1])  # (batch, c*f, t)
        stats = torch.cat([x.mean(dim=-1), torch.sqrt(x.var(dim=-1) + 1e-5)], dim=1)
        return self.fc(stats)


class TDNNAM(nn.Module):
    """A Kaldi-style TDNN acoustic model (frame-level senone log-posteriors);
    hidden layers are read back by name as A1/A2 would."""

    def __init__(self, feat=20, h=24, out=10):
        super().__init__()
        self.l1 = nn.Conv1d(feat, h, 3, padding=1)
        self.l2 = nn.Conv1d(h, h, 3, dilation=2, padding=2)
        self.l3 = nn.Conv1d(h, h, 3, dilation=3, padding=3)
        self.bn = nn.BatchNorm1d(h)
        self.out = nn.Conv1d(h, out, 1)
        self.r1, self.r2, self.r3 = nn.ReLU(), nn.ReLU(), nn.ReLU()

    def forward(self, x):  # (batch, time, feat)
        x = x.transpose(1, 2)
        h1 = self.r1(self.l1(x))
        h2 = self.r2(self.l2(h1))
        h3 = self.bn(self.r3(self.l3(h2)))
        return F.log_softmax(self.out(h3), dim=1).transpose(1, 2)


class Conformer(nn.Module):
    """One Conformer block (Gulati et al. 2020): half-step FFN, multi-head
    self-attention, convolution module (GLU, depthwise conv, BN, Swish),
    half-step FFN, final LayerNorm."""

    def __init__(self, d=16, heads=2, k=7):
        super().__init__()
        self.ff1 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ln_att = nn.LayerNorm(d)
        self.att = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln_conv = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)
        self.ff2 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ln = nn.LayerNorm(d)

    def forward(self, x):  # (batch, time, d)
        x = x + 0.5 * self.ff1(x)
        a = self.ln_att(x)
        x = x + self.att(a, a, a, need_weights=False)[0]
        c = self.ln_conv(x).transpose(1, 2)
        c = F.glu(self.pw1(c), dim=1)
        c = self.pw2(F.silu(self.bn(self.dw(c))))
        x = x + c.transpose(1, 2)
        x = x + 0.5 * self.ff2(x)
        return self.ln(x)


class RNN(nn.Module):
    """A 2-layer bidirectional LSTM then a GRU, as speech front-ends use them."""

    def __init__(self, feat=12, h=8):
        super().__init__()
        self.lstm = nn.LSTM(feat, h, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(2 * h, h, batch_first=True)

    def forward(self, x):
        y, _ = self.lstm(x)
        y, _ = self.gru(y)
        return y


def randomise_bn(model):
    # Non-trivial running statistics so that BatchNormalization is tested.
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)


def producer_of(graph, op_type, index):
    """Name of the output of the index-th node of op_type in graph order."""
    nodes = [n for n in graph.node if n.op_type == op_type]
    return nodes[index].output[0]


def export(name, model, feat, t_export, t_test, opset, hooks=()):
    model.eval()
    randomise_bn(model)
    x_export = torch.randn(1, t_export, feat)
    path = os.path.join(HERE, name + ".onnx")
    torch.onnx.export(model, x_export, path, opset_version=opset, input_names=["feats"],
                      output_names=["out"], dynamic_axes={"feats": {1: "time"}, "out": {}},
                      do_constant_folding=True)
    m = onnx.load(path)
    # Outputs with a time axis are dynamic too: let the exporter's names stand.
    x = torch.randn(1, t_test, feat)
    caught = {}
    handles = []
    for label, module, _, _ in hooks:
        handles.append(module.register_forward_hook(lambda mod, i, o, label=label: caught.__setitem__(label, o)))
    with torch.inference_mode():
        y = model(x)
    for h in handles:
        h.remove()
    np.save(os.path.join(HERE, name + ".x.npy"), x.numpy().astype("<f4"))
    np.save(os.path.join(HERE, name + ".y.npy"), np.ascontiguousarray(y.numpy(), dtype="<f4"))
    lines = ["in feats %s.x.npy" % name, "out out %s.y.npy" % name]
    for label, _, op_type, index in hooks:
        value = producer_of(m.graph, op_type, index)
        np.save(os.path.join(HERE, "%s.%s.npy" % (name, label)), np.ascontiguousarray(caught[label].numpy(), dtype="<f4"))
        lines.append("out %s %s.%s.npy" % (value, name, label))
    with open(os.path.join(HERE, name + ".txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%s: opset %d, %d nodes, %d bytes" % (name, opset, len(m.graph.node), os.path.getsize(path)))


def bad_models():
    """Small hand-made models for the bad-input cases of tests/e2e/test_onnx.sh."""
    def save(name, nodes, inits, opset=13, inputs=None, outputs=None):
        g = helper.make_graph(nodes, name,
                              inputs or [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                              outputs or [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
                              initializer=inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="gen.py")
        onnx.save(m, os.path.join(HERE, name + ".onnx"))
        return m

    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 4], np.eye(4, dtype=np.float32).ravel() * 2)
    good = save("good", [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                         helper.make_node("Relu", ["h"], ["y"], name="relu")], [w])
    save("bad_op", [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                    helper.make_node("Celu", ["h"], ["y"], name="celu_1")], [w])
    save("bad_attr", [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                      helper.make_node("Relu", ["h"], ["y"], name="relu", fancy=1)], [w])
    save("bad_opset", [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                       helper.make_node("Relu", ["h"], ["y"], name="relu")], [w], opset=18)
    # A valid opset-10 model whose Pad (pads as an attribute) predates Pad-11.
    save("bad_old_op", [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                        helper.make_node("Pad", ["h"], ["y"], name="pad", pads=[0, 0, 0, 0])], [w],
         opset=10)
    short = TensorProto()  # 12 floats of raw data for a (4, 4) tensor
    short.name, short.data_type = "w", TensorProto.FLOAT
    short.dims.extend([4, 4])
    short.raw_data = np.ones(12, dtype="<f4").tobytes()
    save("bad_data", [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                      helper.make_node("Relu", ["h"], ["y"], name="relu")], [short])
    data = good.SerializeToString()
    with open(os.path.join(HERE, "bad_truncated.onnx"), "wb") as f:
        f.write(data[:len(data) - 7])
    # External data: the weights in ext.bin next to the model; ext_missing
    # names a file that does not exist.
    for name, loc in (("ext", "ext.bin"), ("bad_ext_missing", "missing.bin")):
        t = TensorProto()
        t.name, t.data_type = "w", TensorProto.FLOAT
        t.dims.extend([4, 4])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", loc), ("offset", "0"), ("length", "64")):
            e = t.external_data.add()
            e.key, e.value = k, v
        save(name, [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                    helper.make_node("Relu", ["h"], ["y"], name="relu")], [t])
    with open(os.path.join(HERE, "ext.bin"), "wb") as f:
        f.write((np.eye(4, dtype="<f4") * 3).tobytes())
    x = np.array([[1, -2, 3, -4], [0.5, 0.25, -1, 2]], dtype="<f4")
    np.save(os.path.join(HERE, "good.x.npy"), x)
    np.save(os.path.join(HERE, "good.x3.npy"), x.reshape(2, 2, 2))
    np.save(os.path.join(HERE, "good.xi.npy"), x.astype("<i8"))


def main():
    export("tdnn", TDNN(), 20, 60, 45, 13)
    export("ecapa", ECAPA(), 20, 50, 37, 13)
    export("resnet", ResNet(), 16, 40, 28, 13)
    am = TDNNAM()
    export("tdnn_am", am, 20, 30, 23, 13,
           hooks=[("h1", am.r1, "Relu", 0), ("h3", am.bn, "BatchNormalization", 0)])
    export("conformer13", Conformer(), 16, 20, 13, 13)
    export("conformer17", Conformer(), 16, 20, 13, 17)
    export("rnn", RNN(), 12, 15, 11, 14)
    bad_models()


if __name__ == "__main__":
    sys.exit(main())
