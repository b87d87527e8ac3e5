#!/bin/bash
# bench/train_torch.sh - extractor training against PyTorch (issue 33 item 2):
# the ECAPA-TDNN at C = 64 and C = 512 trained by vpaudit (build/bench/bench_train
# torch: data-parallel shards) and by PyTorch CPU (bench/train_torch.py, the same
# network, loss, optimiser, batches and features) at 1 and 2 threads; OMP and
# OpenBLAS threads pinned to the count on both sides (as bench_onnx).  Prints
# frames/s and the ratio vpaudit / PyTorch (goal >= 1.0).
set -eu
BUILD=${BUILD:-build}
DATA=${BENCH_DATA:-bench/data}/train_torch
mkdir -p "$DATA"
echo "== extractor training against PyTorch CPU (ECAPA-TDNN, AAM, batch 32 x 150 frames)"
if ! /usr/bin/python3 -c 'import torch' 2> /dev/null; then
	echo "skipped: python3-torch not installed"; exit 0
fi
for t in 1 2; do
	OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t "$BUILD/bench/bench_train" torch "$DATA" $t > "$DATA/c$t.txt"
	OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t /usr/bin/python3 bench/train_torch.py "$DATA" $t > "$DATA/py$t.txt"
	join "$DATA/c$t.txt" "$DATA/py$t.txt" | awk '{ printf "%-9s %d thread(s): vpaudit %8.0f frames/s, PyTorch %8.0f frames/s, ratio %.2fx (goal >= 1.0)\n", $1, $2, $3, $5, $3 / $5 }'
done
