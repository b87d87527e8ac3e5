#!/bin/bash
# bench/ctc.sh - issue 30's figure: the real-time factor (wall seconds per second of
# audio) of the ONNX CTC recogniser (asr/ctc.c, vpaudit's engine) on a
# wav2vec2-base-architecture export (random weights, 94.4M parameters; 3 utterances of
# 2.5 to 5.5 s, each in one pass) against PyTorch CPU with the same thread count
# (torch.set_num_threads; OMP_NUM_THREADS / OPENBLAS_NUM_THREADS set to it as in
# bench/run.sh's ONNX section), measured in the same run: rounds alternate between
# the two (BENCH_CTC_ROUNDS, default 3; each the best of 2 passes) and medians are
# printed, the machine being shared.  bench_ctc first checks the export against
# PyTorch's logits and greedy transcripts (exit 1 on a mismatch).  Goal: at least
# as fast as PyTorch (ratio >= 1).  Then the same for ctc_torch.py's
# Conformer-CTC on 80-bin fbank (bench_ctc ... features).  BENCH_CTC_MODELS
# (default wav2vec2,conformer) picks the models.  Needs python3-torch and
# python3-torchaudio.  Both OpenBLAS kernels run, as in bench/train_torch.sh: the
# environment's OPENBLAS_CORETYPE when it sets one (this development VM pins
# Haswell, AVX2) and OpenBLAS's own choice for the CPU (the variable unset);
# PyTorch gets the same setting (its MatMuls use the same OpenBLAS, its
# convolutions oneDNN's kernels for the CPU); under a pinned kernel PyTorch also
# runs with oneDNN capped at AVX2 (DNNL_MAX_CPU_ISA): the same instruction set.
set -eu
BUILD=${BUILD:-build}
DATA=${BENCH_DATA:-bench/data}
PY=/usr/bin/python3
R=${BENCH_CTC_ROUNDS:-3}
if ! $PY -c 'import torch, torchaudio' 2> /dev/null; then
	echo "== ctc: skipped (python3-torch / python3-torchaudio missing)"; exit 0
fi
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# bench DIR ARCH LABEL [features]: export once, then alternating rounds at 1 and 2 threads
bench() {
	local D=$1 arch=$2 label=$3 feat=${4:-}
	mkdir -p "$D"
	[ -f "$D/w2v_base.onnx" ] || { echo "exporting $D/w2v_base.onnx (once) ..."; $PY bench/ctc_torch.py "$D" 1 1 --arch "$arch" > /dev/null 2> "$D/torch.err"; }
	echo "== ctc: $label, 12 s of audio in 3 utterances, $R alternating rounds (medians); load average $(cut -d' ' -f1-3 /proc/loadavg)"
	for T in 1 2; do
		: > "$D/t.txt"; : > "$D/v.txt"; : > "$D/ta.txt"
		for r in $(seq "$R"); do
			OMP_NUM_THREADS=$T OPENBLAS_NUM_THREADS=$T krun $PY bench/ctc_torch.py "$D" 2 "$T" --no-export --arch "$arch" 2> /dev/null | awk '{ print $3 }' >> "$D/t.txt"
			# under a pinned AVX2 kernel, PyTorch again with oneDNN capped at AVX2 too
			[ "$KCORE" = default ] || OMP_NUM_THREADS=$T OPENBLAS_NUM_THREADS=$T kcap krun $PY bench/ctc_torch.py "$D" 2 "$T" --no-export --arch "$arch" 2> /dev/null | awk '{ print $3 }' >> "$D/ta.txt"
			# vpaudit shares the utterances over T threads (OpenBLAS single-threaded inside workers)
			OPENBLAS_NUM_THREADS=$T krun "$BUILD/bench/bench_ctc" "$D" "$T" 2 $feat > "$D/v.out"
			[ "$r" = 1 ] && [ "$T" = 1 ] && head -n 1 "$D/v.out"
			awk '/^vpaudit/ { print $3 }' "$D/v.out" >> "$D/v.txt"
		done
		t=$(median < "$D/t.txt"); v=$(median < "$D/v.txt")
		printf '%-52s RTF %.4f\n' "PyTorch CPU, $T thread(s)" "$t"
		printf '%-52s RTF %.4f\n' "vpaudit ONNX engine, $T thread(s)" "$v"
		awk -v a="$t" -v b="$v" -v T="$T" 'BEGIN { printf "ratio (%d thread%s): PyTorch RTF / vpaudit RTF = %.2fx  (goal: >= 1: %s)\n", T, (T > 1 ? "s" : ""), a / b, (a / b >= 1 ? "met" : "NOT met") }'
		if [ -s "$D/ta.txt" ]; then
			ta=$(median < "$D/ta.txt")
			printf '%-52s RTF %.4f\n' "PyTorch CPU, oneDNN capped at AVX2, $T thread(s)" "$ta"
			awk -v a="$ta" -v b="$v" -v T="$T" 'BEGIN { printf "ratio (%d thread%s, AVX2 on both sides): %.2fx\n", T, (T > 1 ? "s" : ""), a / b }'
		fi
	done
}
. bench/kernels.sh
for k in $KERNELS; do
	kernel_use "$k"
	echo "-- OpenBLAS kernel: $KNAME (bench_ctc's first line names it)"
	case ${BENCH_CTC_MODELS:-wav2vec2,conformer} in *wav2vec2*)
		bench "$DATA/ctc" wav2vec2 "wav2vec2-base-size CTC model (random weights)" ;; esac
	case ${BENCH_CTC_MODELS:-wav2vec2,conformer} in *conformer*)
		bench "$DATA/ctc_conformer" conformer "torchaudio Conformer-CTC (12 x 256, random weights) on 80-bin fbank" features ;; esac
done
