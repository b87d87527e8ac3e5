#!/bin/bash
# bench/flam_train.sh - the global acoustic TDNN of fl_acoustic_models (issue
# 32) trained by vpaudit (build/bench/bench_flam_train global) and by PyTorch CPU
# (bench/flam_torch.py: the same network, loss, optimiser, batches and frames)
# at 1 and 2 threads, OMP and OpenBLAS threads pinned on both sides; then
# bench_flam_train's own 1-vs-2-thread figures and the personalisation of
# 100 speakers.  Prints the ratio PyTorch seconds / vpaudit seconds (> 1:
# vpaudit faster).
set -eu
BUILD=${BUILD:-build}
DATA=${BENCH_DATA:-bench/data}/flam_train
mkdir -p "$DATA"
echo "== FL acoustic models from frames (issue 32): the global TDNN against PyTorch CPU"
if ! /usr/bin/python3 -c 'import torch' 2> /dev/null; then
	echo "skipped: python3-torch not installed"
else
	"$BUILD/bench/bench_flam_train" dump "$DATA"
	for t in 1 2; do
		c=$(OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t "$BUILD/bench/bench_flam_train" global $t)
		p=$(OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t /usr/bin/python3 bench/flam_torch.py "$DATA" $t)
		awk -v c="$c" -v p="$p" -v t=$t 'BEGIN { printf "%d thread(s): vpaudit %.2f s, PyTorch %.2f s (2 epochs, 1/3 h of frames): ratio %.2fx\n", t, c, p, p / c }'
	done
fi
"$BUILD/bench/bench_flam_train"
