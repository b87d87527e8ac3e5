#!/usr/bin/python3
"""tests/golden/onnx/gen_mask.py - attention-mask models with -inf constants
(issue 30: NeMo's Conformer-CTC and torch masked_fill(-inf) exports hold them).

  mask_softmax.onnx  y = Softmax(x + mask, axis=-1), x float32 (2, 3), mask a
                     Constant node [[0, -inf, 0], [0, 0, -inf]]
  mask_init.onnx     the same with the mask as an initializer
  mask_allinf.onnx   mask [[0, 0, 0], [-inf, -inf, -inf]]: the second row's
                     softmax is NaN (PyTorch and onnxruntime give NaN: -inf - -inf)
  mask.x.npy         x = [[1, 2, 3], [0.5, -1, 2]]
  mask.y.npy         Softmax of mask_softmax.onnx by NumPy: the masked weights
                     are exactly 0, the others exp(x_i) / sum over the unmasked

Run from the repository root with Debian's python3-onnx 1.12 and python3-numpy:
  /usr/bin/python3 tests/golden/onnx/gen_mask.py
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D = "tests/golden/onnx/"
x = np.array([[1, 2, 3], [0.5, -1, 2]], dtype=np.float32)
ninf = -np.inf


def model(mask, as_init, name):
    m = numpy_helper.from_array(np.array(mask, dtype=np.float32), "mask")
    nodes, inits = [], []
    if as_init:
        inits.append(m)
    else:
        nodes.append(helper.make_node("Constant", [], ["mask"], name="mask_c", value=m))
    nodes.append(helper.make_node("Add", ["x", "mask"], ["s"], name="add"))
    nodes.append(helper.make_node("Softmax", ["s"], ["y"], name="softmax", axis=-1))
    g = helper.make_graph(nodes, "mask",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                          initializer=inits)
    mo = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                           producer_name="gen_mask.py")
    onnx.checker.check_model(mo)
    onnx.save(mo, D + name)


mask = [[0, ninf, 0], [0, 0, ninf]]
model(mask, False, "mask_softmax.onnx")
model(mask, True, "mask_init.onnx")
model([[0, 0, 0], [ninf, ninf, ninf]], False, "mask_allinf.onnx")
np.save(D + "mask.x.npy", x)
s = x.astype(np.float64) + np.array(mask)
e = np.exp(s - s.max(axis=1, keepdims=True))
np.save(D + "mask.y.npy", (e / e.sum(axis=1, keepdims=True)).astype(np.float32))
