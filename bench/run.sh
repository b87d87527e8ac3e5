#!/bin/bash
# bench/run.sh - `make bench`: every benchmark prints its figures and the ratio
# against a baseline measured in the same run.  Not part of `make test`.
set -eu
BUILD=${BUILD:-build}
DATA=${BENCH_DATA:-bench/data}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2}
mkdir -p "$DATA"

timed() { # timed LABEL cmd... -> prints wall seconds and peak RSS (MiB)
	local label=$1; shift
	/usr/bin/time -v "$@" > "$DATA/out.txt" 2> "$DATA/time.txt" || { cat "$DATA/time.txt"; exit 1; }
	wall=$(grep 'Elapsed (wall clock)' "$DATA/time.txt" | awk '{print $NF}' | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
	rss=$(grep 'Maximum resident set size' "$DATA/time.txt" | awk '{print int($NF/1024)}')
	printf '%-44s %8.2f s %7d MiB\n' "$label" "$wall" "$rss"
}

echo "== metrics: COMPRISE large population (4,696 target + 115,563,864 non-target, .npy float32)"
if [ ! -f "$DATA/non.npy" ] || [ ! -f "$DATA/scores10m.txt" ]; then
	echo "generating data in $DATA (once) ..."
	"$BUILD/bench/bench_metrics" gen "$DATA"
fi
timed "vpaudit metrics --tar --non (all metrics)" ./vpaudit metrics --tar "$DATA/tar.npy" --non "$DATA/non.npy" --json
w_big=$wall; r_big=$rss
read -r q_t q_mb < <("$BUILD/bench/bench_metrics" qsort "$DATA")
printf '%-44s %8.2f s\n' "baseline: libc qsort of the non-target array" "$q_t"
awk -v a="$w_big" -v b="$q_t" -v r="$r_big" 'BEGIN { printf "ratio: whole run / qsort alone = %.3f   (budget: 15 s, 2048 MiB; used %.2f s, %d MiB)\n", a/b, a, r }'

echo "== metrics: 10M trials from a text score file"
size=$(stat -c %s "$DATA/scores10m.txt")
timed "vpaudit metrics scores10m.txt (all metrics)" ./vpaudit metrics "$DATA/scores10m.txt" --json
w_txt=$wall
read -r s_t s_mb < <("$BUILD/bench/bench_metrics" strtod "$DATA/scores10m.txt")
printf '%-44s %8.2f s  %.0f MB/s\n' "baseline: fgets+strtod parse only" "$s_t" "$s_mb"
read -r p_t p_mb < <("$BUILD/bench/bench_metrics" parse "$DATA/scores10m.txt")
printf '%-44s %8.2f s  %.0f MB/s\n' "vpa_read_scores parse only" "$p_t" "$p_mb"
awk -v a="$p_mb" -v b="$s_mb" 'BEGIN { printf "ratio: vpaudit parser / fgets+strtod = %.2fx  (budget: 200 MB/s)\n", a/b }'
awk -v a="$w_txt" -v b="$s_t" -v sz="$size" 'BEGIN { printf "ratio: whole run / strtod parse alone = %.3f; whole run incl. parsing = %.0f MB/s (budget: 3 s)\n", a/b, sz/1e6/a }'

bash bench/features.sh   # issue 15: fbank against torchaudio.compliance.kaldi

for b in "$BUILD"/bench/bench_*; do
	case "$(basename "$b")" in bench_metrics|bench_onnx|*.d|*.o) continue ;; esac
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b"
done

# ONNX engine vs PyTorch CPU (issue 16): ECAPA-TDNN C=512 and ResNet34 on 8 s
# utterances, same thread count, PyTorch under inference_mode; N utterances
# (BENCH_ONNX_N, default 200).  Needs python3-torch (the baseline).
if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
	n=${BENCH_ONNX_N:-200}; mkdir -p "$DATA/onnx" # torch.txt is written there before the script runs
	echo "== onnx: ECAPA-TDNN (C=512) and ResNet34, $n utterances of 8 s, $OPENBLAS_NUM_THREADS threads"
	/usr/bin/python3 bench/onnx_torch.py "$DATA/onnx" "$n" 8 "$OPENBLAS_NUM_THREADS" 2> /dev/null > "$DATA/onnx/torch.txt" ||
		{ echo "onnx: the PyTorch baseline failed"; exit 1; }
	for mdl in ecapa512 resnet34; do
		t=$(awk -v m=$mdl '$1 == m { print $2 }' "$DATA/onnx/torch.txt")
		read -r v g cg cs < <("$BUILD/bench/bench_onnx" "$DATA/onnx/$mdl.onnx" "$DATA/onnx/x.npy" "$n")
		awk -v m=$mdl -v v="$v" -v t="$t" -v g="$g" -v cg="$cg" -v cs="$cs" 'BEGIN { printf "%-10s vpaudit %.3f utt/s  PyTorch %.3f utt/s  ratio %.2fx (goal >= 1); Conv %.1f GFLOP/s = %.0f%% of the SGEMM peak here (%.1f GFLOP/s; goal >= 50%%), %.0f%% of the time\n", m, v, t, v / t, cg, 100 * cg / g, g, 100 * cs }'
	done
else
	echo "== onnx: skipped (python3-torch not installed: no PyTorch baseline)"
fi
