#!/bin/bash
# tests/e2e/test_onnx.sh - `vpaudit onnx info|run` end to end on the small
# models of tests/golden/onnx/gen.py: values by hand (good.onnx computes
# y = relu(x W) with W = 2 I; ext.onnx the same with W = 3 I from ext.bin),
# intermediate outputs, and one exact error line (exit 1, no output folder)
# for each kind of bad input.
. tests/e2e/lib.sh
G=tests/golden/onnx

# The float32 values at the end of an .npy, one per line.
vals() { tail -c "$2" "$1" | od -An -tf4 -v | tr -s ' ' '\n' | grep -v '^$' | paste -sd' '; }

t_run "help" 0 -- onnx --help
t_ok "help names both subcommands" grep -q "vpaudit onnx run MODEL.onnx -i NAME=FILE.npy" "$OUT"
t_run "no subcommand" 2 -- onnx
t_run "unknown subcommand" 2 -- onnx frobnicate
t_ok "unknown subcommand line" grep -qx "vpaudit onnx: error: unknown subcommand 'frobnicate' (info or run) (see 'vpaudit onnx --help')" "$ERR"

t_run "info" 0 -- onnx info $G/good.onnx
cat > "$T/info" <<'X'
model: tests/golden/onnx/good.onnx
producer: gen.py
opset: 13
inputs:
  x  float32  (batch, 4)
outputs:
  y  float32  (batch, 4)
parameters: 16
fused at load: 1 of 2 nodes (0 BatchNormalization folded into Conv/Gemm, 1 bias or activation into Conv/Gemm/MatMul)
operators: 2 in 2 nodes
  MatMul                     1  supported
  Relu                       1  supported
X
t_ok "info text" cmp -s "$OUT" "$T/info"
t_run "info of a model with an unsupported operator" 0 -- onnx info $G/bad_op.onnx
t_ok "info marks Celu" grep -qx "  Celu                       1  not supported: unsupported operator" "$OUT"
t_ok "info says it cannot run" grep -qx "vpaudit cannot run this model (1 operator not supported)" "$OUT"
t_run "info symbolic time axis" 0 -- onnx info $G/tdnn_am.onnx
t_ok "input with named time axis" grep -qx "  feats  float32  (1, time, 20)" "$OUT"

t_run "info of the fusion model" 0 -- onnx info $G/fuse.onnx
t_ok "fusions counted" grep -qx "fused at load: 8 of 13 nodes (3 BatchNormalization folded into Conv/Gemm, 5 bias or activation into Conv/Gemm/MatMul)" "$OUT"
t_run "a value fused away, requested by name" 0 -- onnx run $G/fuse.onnx -i x=$G/fuse.x.npy -o "$T/of" --outputs c1,y
t_ok "c1 (Conv before its BatchNormalization) written" grep -qa "'shape': (2, 4, 8)" "$T/of/c1.npy"
t_ok "y written" grep -qa "'shape': (2, 5)" "$T/of/y.npy"
t_run "run" 0 -- onnx run $G/good.onnx -i x=$G/good.x.npy -o "$T/o1"
t_ok "y = relu(2 x)" [ "$(vals "$T/o1/y.npy" 32)" = "2 0 6 0 1 0.5 0 4" ]
t_ok "only the graph output" [ "$(ls "$T/o1")" = "y.npy" ]
t_run "run with an intermediate" 0 -- onnx run $G/good.onnx -i x=$G/good.x.npy -o "$T/o2" --outputs h,y
t_ok "h = 2 x" [ "$(vals "$T/o2/h.npy" 32)" = "2 -4 6 -8 1 0.5 -2 4" ]
t_ok "h.npy header: float32 (2, 4)" grep -qa "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }" "$T/o2/h.npy"
t_run "external data" 0 -- onnx run $G/ext.onnx -i x=$G/good.x.npy -o "$T/o3"
t_ok "y = relu(3 x) with W from ext.bin" [ "$(vals "$T/o3/y.npy" 32)" = "3 0 9 0 1.5 0.75 0 6" ]
t_run "hidden layer of the TDNN AM by name" 0 -- onnx run $G/tdnn_am.onnx -i feats=$G/tdnn_am.x.npy -o "$T/o4" --outputs /r1/Relu_output_0
t_ok "written as _r1_Relu_output_0.npy" [ -s "$T/o4/_r1_Relu_output_0.npy" ]
t_ok "the same .npy header as PyTorch's" cmp -s <(head -c 128 "$T/o4/_r1_Relu_output_0.npy") <(head -c 128 $G/tdnn_am.h1.npy)
# Against PyTorch's values, within the float32 bound for a dot product summed in
# another order.  h1 = relu(conv(x, W) + b), each value a sum of n = 61 terms
# (20 channels x 3 taps, the bias); two float32 evaluations of it in any order
# (and with or without FMA) differ by at most 2 gamma_n S, gamma_n = n u/(1-n u),
# u = 2^-24, S = |b_o| + sum |W x| (Higham, Accuracy and Stability, 3.1); ReLU
# does not widen it.  W and b are read back from the model by name.  Byte
# equality held only for one kernel: OpenBLAS's summation order follows the
# CPU.  Measured worst |diff| / (2 gamma_n S), 1 and 2 threads alike: SkylakeX 0
# (bytes equal), Haswell 0.013 (137 of 552 values differ, max 3.5e-7),
# Sandybridge 0.014 (194 differ, max 3.0e-7); the largest value (1.757) changed
# by 2e-5 of itself fails (1.30).
f4() { tail -c "$2" "$1" | od -An -tf4 -v -w4; }
conv_within_bound() { # vpaudit's h1, PyTorch's h1, folder with l1.weight.npy and l1.bias.npy
	{ f4 "$3/l1.weight.npy" 5760 | sed 's/^/w /'; f4 "$3/l1.bias.npy" 96 | sed 's/^/b /'
	  f4 $G/tdnn_am.x.npy 1840 | sed 's/^/x /'; f4 "$2" 2208 | sed 's/^/p /'; f4 "$1" 2208 | sed 's/^/v /'
	} | awk '$1 == "w" { w[nw++] = $2 } $1 == "b" { b[nb++] = $2 } $1 == "x" { x[nx++] = $2 }
		$1 == "p" { p[np++] = $2 } $1 == "v" { v[nv++] = $2 }
		function abs(z) { return z < 0 ? -z : z }
		END { if (nw != 1440 || nb != 24 || nx != 460 || np != 552 || nv != 552) exit 1
		      n = 61; u = 2^-24; g = n * u / (1 - n * u); worst = 0
		      for (o = 0; o < 24; o++) for (t = 0; t < 23; t++) {
		          S = abs(b[o])
		          for (c = 0; c < 20; c++) for (k = 0; k < 3; k++)
		              if (t + k - 1 >= 0 && t + k - 1 < 23) S += abs(w[o * 60 + c * 3 + k]) * abs(x[(t + k - 1) * 20 + c])
		          r = abs(v[o * 23 + t] - p[o * 23 + t]) / (2 * g * S); if (r > worst) worst = r }
		      printf "# worst |vpaudit - PyTorch| / (2 gamma_61 S) = %.3g\n", worst > "/dev/stderr"
		      exit !(worst <= 1) }'
}
t_run "the first layer's weights by name" 0 -- onnx run $G/tdnn_am.onnx -i feats=$G/tdnn_am.x.npy -o "$T/o4w" --outputs l1.weight,l1.bias
t_ok "PyTorch's values within the float32 bound of a reordered sum (ReLU of a conv)" \
	conv_within_bound "$T/o4/_r1_Relu_output_0.npy" $G/tdnn_am.h1.npy "$T/o4w"
OPENBLAS_NUM_THREADS=2 t_run "the same with 2 OpenBLAS threads" 0 -- onnx run $G/tdnn_am.onnx -i feats=$G/tdnn_am.x.npy -o "$T/o4t" --outputs /r1/Relu_output_0
t_ok "the same bytes for 1 and 2 threads" cmp -s "$T/o4/_r1_Relu_output_0.npy" "$T/o4t/_r1_Relu_output_0.npy"

bad() { # name, expected stderr line, args...
	local name=$1 line=$2; shift 2
	t_run "$name" 1 -- "$@"
	t_ok "$name: one line" [ "$(wc -l < "$ERR")" = 1 ]
	t_ok "$name: the line" grep -qxF "$line" "$ERR"
	t_ok "$name: no output" [ ! -e "$T/bad" ]
}
t_run "unsupported operator" 1 -- onnx run $G/bad_op.onnx -i x=$G/good.x.npy -o "$T/bad"
t_ok "unsupported operator: one line naming node, operator, opset and the supported list" \
	grep -qx "vpaudit onnx: error: $G/bad_op.onnx: node 'celu_1' (Celu, opset 13): unsupported operator (supported: Abs,Add,And,.*,LSTM,.*,Xor)" "$ERR"
t_ok "unsupported operator: one line" [ "$(wc -l < "$ERR")" = 1 ]
t_ok "unsupported operator: no output" [ ! -e "$T/bad" ]
bad "unsupported attribute" "vpaudit onnx: error: $G/bad_attr.onnx: node 'relu' (Relu, opset 13): unsupported attribute 'fancy' (supported: none)" \
	onnx run $G/bad_attr.onnx -i x=$G/good.x.npy -o "$T/bad"
bad "unsupported opset" "vpaudit onnx: error: $G/bad_opset.onnx: opset 18 of the default domain is not supported (supported: 11-17; re-export with opset_version=17)" \
	onnx run $G/bad_opset.onnx -i x=$G/good.x.npy -o "$T/bad"
bad "operator older than its implemented definition" "vpaudit onnx: error: $G/bad_old_op.onnx: node 'pad' (Pad, opset 10): Pad of opset 10 is not supported (vpaudit implements its definition of opsets 11-17; re-export with opset_version=17)" \
	onnx run $G/bad_old_op.onnx -i x=$G/good.x.npy -o "$T/bad"
bad "tensor data not matching its shape" "vpaudit onnx: error: $G/bad_data.onnx: tensor 'w': raw_data holds 12 values but the shape (4, 4) needs 16" \
	onnx run $G/bad_data.onnx -i x=$G/good.x.npy -o "$T/bad"
bad "truncated protobuf" "vpaudit onnx: error: $G/bad_truncated.onnx: not a valid ONNX model (truncated or corrupt protobuf)" \
	onnx run $G/bad_truncated.onnx -i x=$G/good.x.npy -o "$T/bad"
bad "missing external data" "vpaudit onnx: error: $G/bad_ext_missing.onnx: tensor 'w': cannot open external data '$G/missing.bin': No such file or directory" \
	onnx run $G/bad_ext_missing.onnx -i x=$G/good.x.npy -o "$T/bad"
bad "wrong input rank" "vpaudit onnx: error: $G/good.onnx: input 'x' has rank 3 (2, 2, 2), the model expects rank 2 (batch, 4)" \
	onnx run $G/good.onnx -i x=$G/good.x3.npy -o "$T/bad"
bad "wrong input dtype" "vpaudit onnx: error: $G/good.onnx: input 'x' is int64, the model expects float32" \
	onnx run $G/good.onnx -i x=$G/good.xi.npy -o "$T/bad"
bad "unknown value" "vpaudit onnx: error: $G/good.onnx: the graph has no value 'nope' (nearest: 'x', 'h', 'y')" \
	onnx run $G/good.onnx -i x=$G/good.x.npy -o "$T/bad" --outputs y,nope
bad "missing input" "vpaudit onnx: error: $G/good.onnx: input 'x' is not given" \
	onnx run $G/good.onnx -o "$T/bad"
# Issue 26: hostile models (tests/golden/onnx/gen_hostile.c).  bad_deep.onnx nests
# 12,000 messages (126 KB): it overflowed the stack in the protobuf unpacker (exit 139).
bad "nesting too deep" "vpaudit onnx: error: $G/bad_deep.onnx: protobuf messages nested more than 64 levels deep (at byte 682; at most 64 are accepted)" \
	onnx run $G/bad_deep.onnx -o "$T/bad"
t_run "nesting too deep: info" 1 -- onnx info $G/bad_deep.onnx
# ext_w.onnx: initializer (and output) w = 16 floats in external data w.bin.
mkdir "$T/m"; cp $G/ext_w.onnx "$T/m/"
printf 'the secret bytes of a file outside the model folder: %011d' 7 > "$T/secret"
cp "$T/secret" "$T/m/w.bin"
t_run "external data in a regular file" 0 -- onnx run "$T/m/ext_w.onnx" -o "$T/ok5"
t_ok "w.npy holds its bytes" cmp -s <(tail -c 64 "$T/ok5/w.npy") "$T/secret"
rm "$T/m/w.bin"; ln -s "$T/secret" "$T/m/w.bin"
bad "external data through a symbolic link" "vpaudit onnx: error: $T/m/ext_w.onnx: tensor 'w': external data '$T/m/w.bin' goes through a symbolic link (not followed: expected a regular file inside the model's folder)" \
	onnx run "$T/m/ext_w.onnx" -o "$T/bad"
bad "NaN in an initializer" "vpaudit onnx: error: $G/bad_nan_init.onnx: initializer 'w': element 1 (0-based) is not finite (nan)" \
	onnx run $G/bad_nan_init.onnx -o "$T/bad"
# -inf in a constant is an attention mask's value (issue 30): it loads; a NaN it
# produces is refused in the output, nothing written
t_run "-inf in an initializer loads and is given back" 0 -- onnx run $G/bad_inf_init.onnx -o "$T/inf"
t_ok "... w.npy ends with float32 -inf" sh -c "tail -c 4 '$T/inf/w.npy' | od -An -tx1 | tr -d ' \n' | grep -qx '000080ff'"
for m in mask_softmax mask_init; do
	t_run "a -inf attention mask ($m): Add + Softmax" 0 -- onnx run $G/$m.onnx -i x=$G/mask.x.npy -o "$T/$m"
	t_ok "... the masked weights are exactly 0 (elements 1 and 5)" sh -c "tail -c 24 '$T/$m/y.npy' | od -An -tx4 -v | tr -s ' \n' ' ' | awk '{ exit !(\$2 == \"00000000\" && \$6 == \"00000000\") }'"
done
bad "a row masked whole: NaN (as PyTorch) is refused in the output" "vpaudit onnx: error: $G/mask_allinf.onnx: value 'y': element (1, 0) (0-based) is not finite (nan)" \
	onnx run $G/mask_allinf.onnx -i x=$G/mask.x.npy -o "$T/bad"
bad "NaN in an input" "vpaudit onnx: error: $G/good.xnan.npy: element (1, 1) (0-based) is not finite (nan)" \
	onnx run $G/good.onnx -i x=$G/good.xnan.npy -o "$T/bad"
bad "-inf in an input" "vpaudit onnx: error: $G/good.xinf.npy: element (1, 3) (0-based) is not finite (inf)" \
	onnx run $G/good.onnx -i x=$G/good.xinf.npy -o "$T/bad"
bad "no opset of the default domain" "vpaudit onnx: error: $G/bad_no_opset.onnx: the model imports no opset of the default domain (expected an opset_import of domain '' with a version 11-17)" \
	onnx run $G/bad_no_opset.onnx -o "$T/bad"
t_run "info without an opset" 0 -- onnx info $G/bad_no_opset.onnx
t_ok "info says there is none" grep -qx "opset: (none for the default domain)" "$OUT"
printf 'not a model' > "$T/junk.onnx"
bad "not a model" "vpaudit onnx: error: $T/junk.onnx: not a valid ONNX model (truncated or corrupt protobuf)" \
	onnx run "$T/junk.onnx" -o "$T/bad"
t_run "missing -o" 2 -- onnx run $G/good.onnx -i x=$G/good.x.npy
t_run "bad -i" 2 -- onnx run $G/good.onnx -i x -o "$T/bad"
t_ok "bad -i line" grep -qx "vpaudit onnx: error: -i wants NAME=FILE.npy, got 'x' (see 'vpaudit onnx --help')" "$ERR"
t_done
