#!/bin/sh
# onnx/gen-proto.sh - regenerate onnx.pb-c.c / onnx.pb-c.h from the official
# onnx.proto shipped by Debian's libonnx-dev (1.12.0), with protoc-c 1.4.1
# (Debian 12 protobuf-c-compiler).  The generated files are committed so the
# build needs only libprotobuf-c-dev (see onnx/README.md for why).
#   sh onnx/gen-proto.sh
set -eu
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cp /usr/include/onnx/onnx.proto "$d/onnx.proto"
(cd "$d" && protoc-c --c_out=. onnx.proto)
cp "$d/onnx.pb-c.c" "$d/onnx.pb-c.h" "$(dirname "$0")/"
