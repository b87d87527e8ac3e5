#!/usr/bin/python3
"""tests/golden/extractor_onnx/gen.py - golden values for test_extractor_onnx: the
x-vector extractor vpaudit trains in C, written as ONNX (targets/anon_extractor_onnx.c),
checked by Python onnx and evaluated by numpy, independently of vpaudit's ONNX engine.

Inputs (written by the C test, from the repository root):

    VPA_WRITE_GOLDEN=tests/golden/extractor_onnx build/tests/test_extractor_onnx

  xvector.onnx       a small x-vector (12 features, H = 16, E = 8) trained on random
                     features (tests/unit/test_extractor_onnx.c)
  ecapa.onnx         a small ECAPA-TDNN (C = 16, scale 4, E = 8) trained on the same
  feats_I.npy        (T, 12) float64 features of 3 utterances (T = 13, then two of
                     20..90 frames): the first is shorter than the TDNN's context, so
                     the edge-frame replication matters
  NAME.c_embeddings.npy  (3, 8) the C extractor's own embeddings of them

Regenerate the outputs (Debian 12 packages python3-onnx 1.12.0, python3-numpy 1.24.2):

    /usr/bin/python3 tests/golden/extractor_onnx/gen.py

Outputs:
  checker.txt           per model "NAME: onnx.checker.check_model(full_check=True): ok",
                        the opset, the metadata_props (vpaudit.embed_options ...), and how
                        far the numpy embeddings lie from the C extractor's
  NAME.numpy_embeddings.npy  (3, 8) float64: the graph evaluated node by node in numpy
                        float64 with ONNX's operator semantics (opset 13), nothing taken
                        from vpaudit

The test reads only these committed files.
"""
import os

import numpy as np
import onnx
from onnx import numpy_helper

D = os.path.dirname(os.path.abspath(__file__))


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def conv1d(x, w, b, dil):
    # x (1, C, T), w (O, C, K), no padding, stride 1 (ONNX Conv, 1-D)
    _, c, t = x.shape
    o, _, k = w.shape
    span = (k - 1) * dil
    tout = t - span
    y = np.zeros((1, o, tout))
    for j in range(k):
        y[0] += w[:, :, j] @ x[0, :, j * dil: j * dil + tout]
    return y + b[None, :, None]


def run(model, feats):
    env = {i.name: numpy_helper.to_array(i).astype(np.float64)
           if i.data_type == onnx.TensorProto.FLOAT else numpy_helper.to_array(i)
           for i in model.graph.initializer}
    env["feats"] = feats[None].astype(np.float64)
    for n in model.graph.node:
        a = attrs(n)
        x = [env[i] for i in n.input]
        op = n.op_type
        if op == "Transpose":
            y = np.transpose(x[0], a["perm"])
        elif op == "Slice":
            data, starts, ends, axes = x
            sl = [slice(None)] * data.ndim
            sl[int(axes[0])] = slice(int(starts[0]), min(int(ends[0]), 2**62))
            y = data[tuple(sl)]
        elif op == "Concat":
            y = np.concatenate(x, axis=a["axis"])
        elif op == "Conv":
            assert a["kernel_shape"][0] == x[1].shape[2]
            y = conv1d(x[0], x[1], x[2], a.get("dilations", [1])[0])
        elif op == "Add":
            y = x[0] + x[1]
        elif op == "Unsqueeze":
            y = np.expand_dims(x[0], tuple(int(a_) for a_ in x[1]))
        elif op == "Shape":
            y = np.array(x[0].shape, dtype=np.int64)
        elif op == "Expand":
            y = x[0] * np.ones(tuple(int(v) for v in x[1]))
        elif op == "Softmax":
            e = np.exp(x[0] - x[0].max(axis=a["axis"], keepdims=True))
            y = e / e.sum(axis=a["axis"], keepdims=True)
        elif op == "ReduceSum":
            y = np.sum(x[0], axis=tuple(int(v) for v in x[1]),
                       keepdims=bool(a.get("keepdims", 1)))
        elif op == "Tanh":
            y = np.tanh(x[0])
        elif op == "Sigmoid":
            y = 1 / (1 + np.exp(-x[0]))
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op == "BatchNormalization":
            xx, g, bt, m, v = x
            eps = a.get("epsilon", 1e-5)
            sh = (1, -1) + (1,) * (xx.ndim - 2)  # the channel axis is 1, rank 2 or 3
            g, bt, m, v = (t.reshape(sh) for t in (g, bt, m, v))
            y = g * (xx - m) / np.sqrt(v + eps) + bt
        elif op == "ReduceMean":
            y = np.mean(x[0], axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))
        elif op == "Sub":
            y = x[0] - x[1]
        elif op == "Mul":
            y = x[0] * x[1]
        elif op == "Max":
            y = np.maximum(x[0], x[1])
        elif op == "Sqrt":
            y = np.sqrt(x[0])
        elif op == "Gemm":
            assert a.get("transB", 0) == 1 and a.get("transA", 0) == 0
            y = x[0] @ x[1].T + x[2]
        else:
            raise SystemExit("unexpected operator " + op)
        env[n.output[0]] = y
    return env["embedding"][0]


def main():
    feats = [np.load(os.path.join(D, "feats_%d.npy" % i)) for i in range(3)]
    with open(os.path.join(D, "checker.txt"), "w") as f:
        for name in ("xvector", "ecapa"):
            model = onnx.load(os.path.join(D, name + ".onnx"))
            onnx.checker.check_model(model, full_check=True)
            embs = np.array([run(model, x) for x in feats])
            np.save(os.path.join(D, name + ".numpy_embeddings.npy"), embs)
            c = np.load(os.path.join(D, name + ".c_embeddings.npy"))
            f.write("%s: onnx.checker.check_model(full_check=True): ok\n" % name)
            f.write("%s: onnx %s, ir_version %d, opset %d, producer %s %s, %d nodes\n" % (
                name, onnx.__version__, model.ir_version, model.opset_import[0].version,
                model.producer_name, model.producer_version, len(model.graph.node)))
            for p in model.metadata_props:
                f.write("%s: metadata %s: %s\n" % (name, p.key, p.value))
            f.write("%s: numpy float64 vs the C extractor: max |diff| %.3g, largest |element| "
                    "%.3g\n" % (name, np.abs(embs - c).max(), np.abs(c).max()))


main()
