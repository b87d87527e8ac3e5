#!/bin/bash
# bench/train_torch.sh - extractor training against PyTorch (issue 33 item 2):
# the ECAPA-TDNN at C = 64 and C = 512 trained by vpaudit (build/bench/bench_train
# torch: data-parallel shards) and by PyTorch CPU (bench/train_torch.py, the same
# network, loss, optimiser, batches and features) at 1 and 2 threads; OMP and
# OpenBLAS threads pinned to the count on both sides (as bench_onnx).  Prints
# frames/s and the ratio vpaudit / PyTorch (goal >= 1.0), ROUNDS (default 3)
# alternating rounds and their median.
#
# OpenBLAS's kernel decides most of vpaudit's time (SGEMM is 50-70 % of a
# C = 512 run) but little of PyTorch's, whose convolutions run in oneDNN with
# kernels chosen from the CPU (AVX-512 where there is one).  So both settings
# run: the environment's OPENBLAS_CORETYPE if it sets one (this development VM
# pins Haswell, AVX2) and OpenBLAS's own choice for the CPU (the variable unset,
# what a user gets by default); both sides of a comparison get the same.  Under
# a pinned kernel PyTorch also runs with oneDNN capped at AVX2
# (DNNL_MAX_CPU_ISA, ONEDNN_MAX_CPU_ISA): the same instruction set on both sides.
set -eu
BUILD=${BUILD:-build}
DATA=${BENCH_DATA:-bench/data}/train_torch
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-1 2}
mkdir -p "$DATA"
echo "== extractor training against PyTorch CPU (ECAPA-TDNN, AAM, batch 32 x 150 frames)"
if ! /usr/bin/python3 -c 'import torch' 2> /dev/null; then
	echo "skipped: python3-torch not installed"; exit 0
fi
. bench/kernels.sh
for k in $KERNELS; do
	kernel_use "$k"
	echo "-- OpenBLAS kernel $(krun "$BUILD/bench/bench_train" kernel) ($KNAME)"
	sides=torch
	[ "$k" = default ] || sides="torch torch-avx2"
	for t in $THREADS; do
		for sd in $sides; do : > "$DATA/r$t.$sd.txt"; done
		for r in $(seq "$ROUNDS"); do
			OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t krun "$BUILD/bench/bench_train" torch "$DATA" $t > "$DATA/c$t.txt" 2> /dev/null
			for sd in $sides; do
				cap=; [ "$sd" = torch-avx2 ] && cap=kcap
				OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t $cap krun /usr/bin/python3 bench/train_torch.py "$DATA" $t > "$DATA/py$t.txt"
				join "$DATA/c$t.txt" "$DATA/py$t.txt" | tee -a "$DATA/r$t.$sd.txt" | awk -v r="$r" -v sd="$sd" '{ printf "%-9s %d thread(s), round %d: vpaudit %8.0f frames/s, PyTorch%s %8.0f frames/s, ratio %.2fx\n", $1, $2, r, $3, (sd == "torch" ? "" : " (oneDNN capped at AVX2)"), $5, $3 / $5 }'
			done
		done
		for sd in $sides; do
			for net in ecapa64 ecapa512; do
				awk -v n=$net '$1 == n { print $3 / $5 }' "$DATA/r$t.$sd.txt" | sort -g |
					awk -v n=$net -v t=$t -v sd="$sd" '{ v[NR] = $1 } END { printf "%-9s %d thread(s): median ratio %.2fx of %d rounds against PyTorch%s (goal >= 1.0)\n", n, t, (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, NR, (sd == "torch" ? "" : " with oneDNN capped at AVX2") }'
			done
		done
	done
done
