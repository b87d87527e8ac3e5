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
timed "vpaudit metrics --tar --non --threads 1" ./vpaudit metrics --tar "$DATA/tar.npy" --non "$DATA/non.npy" --json --threads 1
w_one=$wall; cp "$DATA/out.txt" "$DATA/metrics1.json"
timed "vpaudit metrics --tar --non --threads 2" ./vpaudit metrics --tar "$DATA/tar.npy" --non "$DATA/non.npy" --json --threads 2
w_big=$wall; r_big=$rss
cmp -s "$DATA/out.txt" "$DATA/metrics1.json" || { echo "metrics differ between 1 and 2 threads"; exit 1; }
read -r q_t q_mb < <("$BUILD/bench/bench_metrics" qsort "$DATA")
printf '%-44s %8.2f s\n' "baseline: libc qsort of the non-target array" "$q_t"
read -r l_t l_mb < <("$BUILD/bench/bench_metrics" lsd "$DATA")
printf '%-44s %8.2f s\n' "baseline: plain LSD radix sort (float32, 1 thr)" "$l_t"
awk -v a="$w_big" -v b="$q_t" 'BEGIN { printf "ratio: whole run (2 threads) / qsort alone = %.3f\n", a/b }'
awk -v a="$w_big" -v o="$w_one" -v b="$l_t" -v r="$r_big" 'BEGIN { printf "ratio: whole run / plain LSD sort = %.2f at 2 threads, %.2f at 1 (issue 33 goal <= 1.5; used %.2f s, goal <= 2.5 s; %d MiB, was 900 MiB)\n", a/b, o/b, a, r }'

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

echo "== dp audit: 10M scores (issue 28; goal < 2 s)"
"$BUILD/bench/bench_dp_audit"

"$BUILD/bench/bench_exposure"   # issue 33 item 4: the skew-normal fit of 10M candidates, 5 draws

bash bench/features.sh   # issue 15: fbank against torchaudio.compliance.kaldi
bash bench/mcadams.sh    # issue 17: McAdams against its NumPy/SciPy transcription
bash bench/ctc.sh        # issue 30: ONNX CTC recogniser (wav2vec2-base size) against PyTorch
echo "== audio headers probed by validate, and audio hashed while a run reads it (issue 31)"
"$BUILD/bench/bench_probe" 1000
bash bench/asr.sh        # issue 30: vpaudit asr against pocketsphinx_batch on the same samples
bash bench/vpc_audio.sh  # issue 17: the whole VoicePrivacy evaluation from audio, extrapolated to VPC 2024
bash bench/portable.sh   # issue 25: the cost of `run --portable` on the quickstart

echo "== PLD accountant (issue 28): 100,000 steps against the RDP accountant"
"$BUILD/bench/bench_pld"
bash bench/dp_python.sh   # issue 28: PLD and the 10M-score audit against NumPy/SciPy references

bash bench/flam_train.sh   # issue 32: the FL acoustic TDNN trained from frames, against PyTorch; 100 personalisations

echo "== ECAPA-TDNN extractor training against the x-vector TDNN (same data, same epochs)"
"$BUILD/bench/bench_ecapa"

echo "== saved extractors (issue 31.9): save, load, embed against training ASV_eval"
"$BUILD/bench/bench_extractor_io"

echo "== resampling (libsoxr HQ, issue 31) against fbank of the same duration"
"$BUILD/bench/bench_resample"

echo "== MPI: strong scaling of the A1 footprint loop (bench_mpi_a1, vpaudit-mpi's loop)"
# 1 rank x 1 thread (baseline), 2 ranks x 1 thread, 1 rank x 2 threads; each
# the best of two runs (the machine is shared).  README.md "Scaling model"
# uses these figures.
MPIB=build-mpi/bench/bench_mpi_a1
MPIRUN="mpirun --oversubscribe --allow-run-as-root"
NM=${BENCH_MPI_MODELS:-16}
MPIRUN="$MPIRUN --bind-to none" # ranks may move off cores other jobs load (shared machine)
best_loop() { # RANKS THREADS -> "loop comm bytes flops sgemm1 checksum global" of the faster run
	local out best="" l
	for k in 1 2; do
		out=$(OPENBLAS_NUM_THREADS=1 $MPIRUN -n "$1" "$MPIB" "$NM" "$2" | tail -n 1)
		echo "  $out" >&2
		l=$(echo "$out" | sed -E 's/.*loop ([0-9.]+) s.*/\1/')
		if [ -z "$best" ] || awk -v a="$l" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
			best="$l $(echo "$out" | sed -E 's/.*comm ([0-9.]+) s, bytes\/model ([0-9]+), flops\/model ([0-9.e+]+), sgemm1 ([0-9.]+) GFLOP\/s, checksum (.*)/\1 \2 \3 \4 \5/') $(echo "$out" | sed -E 's/.*global ([0-9.]+) s.*/\1/')"
		fi
	done
	echo "$best"
}
read -r l11 c11 b11 f11 p11 k11 g11 < <(best_loop 1 1)
read -r l21 c21 b21 f21 p21 k21 g21 < <(best_loop 2 1)
read -r l12 c12 b12 f12 p12 k12 g12 < <(best_loop 1 2)
tm=$(awk -v a="$l11" -v g="$g11" -v n="$NM" 'BEGIN { print (a-g)/n }')
printf '%-44s %8.2f s  (%.3f s per model, global model pass %.3f s)\n' "1 rank x 1 thread, $NM models" "$l11" "$tm" "$g11"
printf '%-44s %8.2f s  (exchange, waits included, %.4f s on rank 0)\n' "2 ranks x 1 thread" "$l21" "$c21"
printf '%-44s %8.2f s\n' "1 rank x 2 threads" "$l12"
[ "$k11" = "$k21" ] && [ "$k11" = "$k12" ] && echo "footprints identical for every layout (checksum $k11)" || echo "FOOTPRINTS DIFFER: $k11 $k21 $k12"
echo "bytes communicated per model: $b21 (2 x 8 bytes per hidden unit of the chosen layers + 16 bytes of record header), sent once to every other rank"
awk -v a="$l11" -v b="$l21" -v c="$l12" 'BEGIN { printf "ratio: speed-up 2 ranks x 1 thread / 1 rank x 1 thread = %.2fx; 1 rank x 2 threads = %.2fx; MPI overhead (2 ranks / 2 threads time) = %.3f\n", a/b, a/c, b/c }'
# the scaling model of README.md ("Running on a cluster"), with this run's figures
awk -v tm="$tm" -v f="$f11" -v p="$p11" -v a="$l11" -v b="$l21" 'BEGIN {
	e = f / tm / (p * 1e9)                  # A1 pipeline efficiency against one-core SGEMM
	F = 2 * 64000 * 13.8e6                  # paper model: 13.8M params, 32 min at 33.3 frames/s
	t = F / (e * p * 1e9)                   # s per model on one core like this one
	M = 2379; P = 256; W = int((M + P - 1) / P)
	bm = 13 * 512 * 16 + 16                 # bytes per model: 13 hidden layers of 512
	x = M * bm / 10e9 + P * 2e-6 * 8        # exchange: 10 GB/s, 2 us latency, log2 256 = 8
	io = 2 * M * 13.8e6 * 4 / 20e9          # every model read twice, 20 GB/s file system
	par = a / b / 2                         # parallel efficiency of 2 ranks measured here
	printf "scaling model: one-core SGEMM %.1f GFLOP/s, A1 efficiency %.2f -> %.0f s per paper model per core\n", p, e, t
	printf "prediction, 2,379 models of 13.8M parameters on 16 nodes x 16 cores (1 thread per core): %d waves x %.0f s + global pass %.0f s + exchange %.2f s (%.0f MB) + reads %.0f s = %.1f min; with this run'"'"'s 2-rank efficiency %.2f: %.1f min; one 16-core node: %.1f h\n", W, t, t, x, M * bm / 1e6, io, (W * t + t + x + io) / 60, par, (W * t / par + t + x + io) / 60, ((M + 15) / 16 * t + t) / 3600
}'

for b in "$BUILD"/bench/bench_*; do
	case "$(basename "$b")" in bench_metrics|bench_onnx|bench_mpi_a1|bench_ctc|bench_train|*.d|*.o) continue ;; esac
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b"
done

# ONNX engine vs PyTorch CPU (issue 16): ECAPA-TDNN C=512 and ResNet34 on 8 s
# utterances, 1 and 2 threads, PyTorch under inference_mode with
# torch.set_num_threads(T) (its intra-op threads), vpaudit sharing the
# utterances over T threads as `vpaudit embed --threads T` does.  N utterances
# (BENCH_ONNX_N, default 200) per measurement, ROUNDS alternating rounds
# (BENCH_ONNX_ROUNDS, default 3), medians printed with the load average.
# Needs python3-torch (the baseline).
if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
	n=${BENCH_ONNX_N:-200}; rounds=${BENCH_ONNX_ROUNDS:-3}; O="$DATA/onnx"; mkdir -p "$O"
	echo "== onnx: ECAPA-TDNN (C=512) and ResNet34, $n utterances of 8 s, 1 and 2 threads, $rounds rounds (medians); load average $(cut -d' ' -f1-3 /proc/loadavg)"
	/usr/bin/python3 bench/onnx_torch.py "$O" 1 8 1 > /dev/null 2> "$O/torch.err" ||
		{ cat "$O/torch.err"; echo "onnx: the PyTorch export failed"; exit 1; }
	: > "$O/rounds.txt"
	for r in $(seq "$rounds"); do
		# one process per thread count, its BLAS and OpenMP pools limited to it
		: > "$O/torch.txt"
		for t in 1 2; do
			OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t /usr/bin/python3 bench/onnx_torch.py "$O" "$n" 8 "$t" --no-export 2> "$O/torch.err" >> "$O/torch.txt" ||
				{ cat "$O/torch.err"; echo "onnx: the PyTorch baseline failed"; exit 1; }
		done
		sed 's/^/torch /' "$O/torch.txt" >> "$O/rounds.txt"
		for mdl in ecapa512 resnet34; do
			for t in 1 2; do
				v=$("$BUILD/bench/bench_onnx" "$O/$mdl.onnx" "$O/x.npy" "$n" "$t" 2> "$O/bench.err") ||
					{ cat "$O/bench.err"; echo "onnx: bench_onnx failed"; exit 1; }
				echo "vpaudit $mdl $t $v" >> "$O/rounds.txt"
			done
		done
	done
	awk -v load="$(cut -d' ' -f1-3 /proc/loadavg)" '
	function med(k,   n, i, j, v, a) { n = split(vals[k], a, " "); for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > v + 0; j--) a[j + 1] = a[j]; a[j + 1] = v }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	function add(k, v) { vals[k] = (k in vals) ? vals[k] " " v : v }
	$1 == "torch" { add("tu " $2 " " $3, $4); add("tc " $2 " " $3, $5) }
	$1 == "vpaudit" { add("vu " $2 " " $3, $4); add("vc " $2 " " $3, $5); add("pk " $2 " " $3, $6); add("cg " $2 " " $3, $7); add("cs " $2 " " $3, $8) }
	END {
		split("ecapa512 resnet34", ms, " ")
		for (i = 1; i <= 2; i++) for (t = 1; t <= 2; t++) {
			k = ms[i] " " t; vu = med("vu " k); tu = med("tu " k); pk = med("pk " k); cg = med("cg " k)
			printf "%-9s %d thread%s: vpaudit %.3f utt/s, PyTorch %.3f utt/s, ratio %.2fx (goal >= 1); CPU s/utt %.4f vs %.4f (%.2fx); Conv %.1f GFLOP/s (flops of the direct convolution) = %.0f%% of the SGEMM peak (%.1f; goal >= 50%%), %.0f%% of the time\n",
				ms[i], t, (t > 1 ? "s" : " "), vu, tu, vu / tu, med("vc " k), med("tc " k), med("tc " k) / med("vc " k), cg, 100 * cg / pk, pk, 100 * med("cs " k)
		}
		printf "(medians of %d rounds; load average at the end %s; every round in rounds.txt)\n", split(vals["vu ecapa512 1"], x, " "), load
	}' "$O/rounds.txt"
	# Variable length (issue 33): BENCH_ONNX_VAR_N (default 1000) utterances of
	# 2-20 s (lengths seeded, DIR/lengths.txt), one round, 1 and 2 threads.
	nv=${BENCH_ONNX_VAR_N:-1000}; V="$DATA/onnx_var"; mkdir -p "$V"
	echo "== onnx variable length: $nv utterances of 2-20 s, 1 and 2 threads, one round; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	/usr/bin/python3 bench/onnx_torch.py "$V" 1 20 1 --varlen > /dev/null 2> "$V/torch.err" ||
		{ cat "$V/torch.err"; echo "onnx: the PyTorch export failed"; exit 1; }
	# both OpenBLAS kernels, as bench/train_torch.sh: the environment's
	# OPENBLAS_CORETYPE if set (this VM pins Haswell) and OpenBLAS's own choice
	. bench/kernels.sh
	for k in $KERNELS; do
		kernel_use "$k"
		echo "-- OpenBLAS kernel $(krun "$BUILD/bench/bench_train" kernel) ($KNAME)"
		for t in 1 2; do
			OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t krun /usr/bin/python3 bench/onnx_torch.py "$V" "$nv" 20 "$t" --no-export --varlen 2> "$V/torch.err" > "$V/torch.txt" ||
				{ cat "$V/torch.err"; echo "onnx: the PyTorch baseline failed"; exit 1; }
			# under a pinned AVX2 kernel, PyTorch again with oneDNN capped at AVX2 (the same ISA)
			: > "$V/torch_avx2.txt"
			[ "$KCORE" = default ] || OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t kcap krun /usr/bin/python3 bench/onnx_torch.py "$V" "$nv" 20 "$t" --no-export --varlen 2> "$V/torch.err" > "$V/torch_avx2.txt" ||
				{ cat "$V/torch.err"; echo "onnx: the PyTorch baseline failed"; exit 1; }
			for mdl in ecapa512 resnet34; do
				v=$(krun "$BUILD/bench/bench_onnx" "$V/$mdl.onnx" "$V/x.npy" "$nv" "$t" "$V/lengths.txt" 2> "$V/bench.err") ||
					{ cat "$V/bench.err"; echo "onnx: bench_onnx failed"; exit 1; }
				tu=$(awk -v m="$mdl" '$1 == m { print $3 }' "$V/torch.txt")
				echo "$mdl $t $v $tu" | awk '{ printf "%-9s %d thread%s: vpaudit %.3f utt/s, PyTorch %.3f utt/s, ratio %.2fx (goal >= 1.2); %.1f%% of the runs planned\n", $1, $2, ($2 > 1 ? "s" : " "), $3, $9, $3 / $9, 100 * $8 }'
				[ -s "$V/torch_avx2.txt" ] && awk -v m="$mdl" -v t="$t" -v v="$v" '$1 == m { split(v, a, " "); printf "%-9s %d thread%s: against PyTorch with oneDNN capped at AVX2 (%.3f utt/s): %.2fx\n", m, t, (t > 1 ? "s" : " "), $3, a[1] / $3 }' "$V/torch_avx2.txt"
			done
		done
	done
else
	echo "== onnx: skipped (python3-torch not installed: no PyTorch baseline)"
fi

echo "== legal metrics (issue 29): pi_link and pi_sing, 1,000 speakers x 1,000 enrolments"
"$BUILD/bench/bench_legal"

# issue 33 item 1: data-parallel extractor training, 1 against 2 threads (same bytes)
"$BUILD/bench/bench_train" 3
# issue 33 item 2: the gradient reduction across ranks (exchange against gather +
# broadcast) and training on 1 rank x 2 threads against 2 ranks x 1 thread
MPIT=build-mpi/bench/bench_train
MPIRUN_T="mpirun --oversubscribe --allow-run-as-root --bind-to none"
echo "== MPI: shard-gradient reduction, ms per step (16 shards; ranks > 2 oversubscribe this machine)"
for R in 2 4 8 16; do
	for P in 300000 6000000; do
		OPENBLAS_NUM_THREADS=1 $MPIRUN_T -n $R "$MPIT" reduce $P 16 10 | tail -n 1 |
			awk '{ printf "%2d ranks, %8d floats: exchange %9.2f ms, gather + bcast %8.2f ms, ratio %.2fx (%s)\n", $2, $3, $5, $6, $5 / $6, $7 }'
	done
done
echo "== MPI: extractor training, 1 rank x 2 threads against 2 ranks x 1 thread"
for a in tdnn ecapa; do
	read -r _ _ _ f11 c11 < <(OPENBLAS_NUM_THREADS=1 "$BUILD/bench/bench_train" mpi 1 $a 1 4)
	read -r _ _ _ f12 c12 < <(OPENBLAS_NUM_THREADS=1 "$BUILD/bench/bench_train" mpi 2 $a 1 4)
	read -r _ _ _ f21 c21 < <(OPENBLAS_NUM_THREADS=1 $MPIRUN_T -n 2 "$MPIT" mpi 1 $a 1 4 | tail -n 1)
	echo "$a: 1x1 $f11, 1x2 $f12, 2x1 $f21 frames/s; weights $([ "$c11" = "$c12" ] && [ "$c11" = "$c21" ] && echo identical || echo DIFFER)"
	awk -v a="$f11" -v b="$f12" -v c="$f21" 'BEGIN { printf "ratio: 1 rank x 2 threads / 1x1 = %.2fx; 2 ranks x 1 thread / 1 rank x 2 threads = %.3f\n", b / a, c / b }'
done
bash bench/train_torch.sh   # issue 33 item 2: the same ECAPA-TDNN trained by PyTorch CPU
