#!/usr/bin/python3
"""A small graph with every load-time fusion of onnx/fuse.c (fuse.onnx), and
dyn.onnx, whose shapes depend on float data (the memory plan's fall-back).
No golden values: tests/unit/test_onnx.c compares the fused model with the same model loaded
with fusions off, whose operators the conformance tests check).

Regenerate (repository root, Debian 12 python3-onnx 1.12.0, python3-numpy
1.24.2, seed 0):  /usr/bin/python3 tests/golden/onnx/gen_fuse.py

x (2, 3, 10) -> Conv(4, k3, bias) -> BatchNormalization -> LeakyRelu(0.2)
  -> Flatten -> Gemm(transB, C) -> BatchNormalization -> Sigmoid
  -> MatMul(W) -> Add(bias) -> Tanh -> Gemm(no C) -> BatchNormalization
  -> Clip(-1, 2.5) -> y (2, 5); a second reader of nothing in between, so
every pair fuses (3 BN folds, 5 epilogues: 8 nodes fused away).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(0)


def t(name, *shape, lo=-1.0, hi=1.0):
    return numpy_helper.from_array(rng.uniform(lo, hi, shape).astype(np.float32), name)


def bn(prefix, c):
    return [t(prefix + "_s", c, lo=0.5, hi=1.5), t(prefix + "_b", c),
            t(prefix + "_m", c), t(prefix + "_v", c, lo=0.2, hi=2.0)]


inits = [t("cw", 4, 3, 3), t("cb", 4)] + bn("bn1", 4) + [t("g1w", 6, 32), t("g1c", 6)] + bn("bn2", 6)
inits += [t("mw", 6, 7), t("mb", 7), t("g2w", 7, 5)] + bn("bn3", 5)
inits += [numpy_helper.from_array(np.array(-1.0, np.float32), "lo"),
          numpy_helper.from_array(np.array(2.5, np.float32), "hi")]
N = helper.make_node
nodes = [
    N("Conv", ["x", "cw", "cb"], ["c1"], name="conv", kernel_shape=[3]),
    N("BatchNormalization", ["c1", "bn1_s", "bn1_b", "bn1_m", "bn1_v"], ["n1"], name="bn1", epsilon=1e-3),
    N("LeakyRelu", ["n1"], ["a1"], name="leaky", alpha=0.2),
    N("Flatten", ["a1"], ["f"], name="flat"),
    N("Gemm", ["f", "g1w", "g1c"], ["g1"], name="gemm1", transB=1),
    N("BatchNormalization", ["g1", "bn2_s", "bn2_b", "bn2_m", "bn2_v"], ["n2"], name="bn2"),
    N("Sigmoid", ["n2"], ["a2"], name="sig"),
    N("MatMul", ["a2", "mw"], ["m"], name="mm"),
    N("Add", ["m", "mb"], ["mbias"], name="add"),
    N("Tanh", ["mbias"], ["a3"], name="tanh"),
    N("Gemm", ["a3", "g2w"], ["g2"], name="gemm2"),
    N("BatchNormalization", ["g2", "bn3_s", "bn3_b", "bn3_m", "bn3_v"], ["n3"], name="bn3"),
    N("Clip", ["n3", "lo", "hi"], ["y"], name="clip"),
]
g = helper.make_graph(nodes, "fuse", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 10])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])], initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="gen_fuse.py")
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "fuse.onnx"))
np.save(os.path.join(HERE, "fuse.x.npy"), rng.standard_normal((2, 3, 10)).astype(np.float32))

# dyn.onnx: a shape that depends on float data (the memory plan's fall-back):
# x float scalar -> Cast int64 -> Range(0, x, 1) -> Cast float -> Mul by itself -> y (x values)
zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
one = numpy_helper.from_array(np.array(1, np.int64), "one")
nodes = [N("Cast", ["x"], ["n"], name="to_int", to=TensorProto.INT64),
         N("Range", ["zero", "n", "one"], ["r"], name="range"),
         N("Cast", ["r"], ["rf"], name="to_float", to=TensorProto.FLOAT),
         N("Mul", ["rf", "rf"], ["y"], name="square")]
g = helper.make_graph(nodes, "dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])], initializer=[zero, one])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="gen_fuse.py")
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "dyn.onnx"))
