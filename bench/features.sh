#!/bin/bash
# bench/features.sh - issue 15's figure: fbank (80 bins, 16 kHz) of one hour of
# audio (360 segments of 10 s; synthetic speech tiled + noise), vpaudit against
# torchaudio.compliance.kaldi.fbank on the same data with the same thread count,
# measured in the same run.  Budget: >= 2x torchaudio, < 3 s on 2 cores.
set -eu
BUILD=${BUILD:-build}
DATA=${BENCH_DATA:-bench/data}
TH=${BENCH_THREADS:-2}
PY=/usr/bin/python3
mkdir -p "$DATA"
[ -f "$DATA/hour.wav" ] || { echo "generating $DATA/hour.wav (once) ..."; $PY bench/features_torchaudio.py gen "$DATA"; }
echo "== features: fbank 80 bins, 1 h of 16 kHz audio in 360 segments, $TH threads"
best=1e9; cpu=0
for rep in 1 2 3; do
	/usr/bin/time -f "%e %U %S" -o "$DATA/time.txt" \
		./vpaudit features fbank --num-mel-bins=80 --threads="$TH" "$DATA/hour" -o "$DATA/hour.ark"
	read -r w u s < "$DATA/time.txt"
	if awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$w; cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }'); fi
done
bytes=$(stat -c %s "$DATA/hour.wav")
printf '%-52s %8.2f s  (best of 3; reads the WAV, writes the archive; %.2f s CPU)\n' "vpaudit features fbank --threads=$TH" "$best" "$cpu"
printf 'machine: %s CPUs, load average %s (wall times of a shared machine)\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
read -r ta rows < <($PY bench/features_torchaudio.py run "$DATA" "$TH")
printf '%-52s %8.2f s  (fbank calls only, %d frames)\n' "baseline: torchaudio.compliance.kaldi.fbank, $TH threads" "$ta" "$rows"
awk -v a="$best" -v b="$ta" -v sz="$bytes" 'BEGIN {
	printf "real-time factor %.5f (%.0fx faster than real time), %.0f MB/s of 16-bit audio\n", a / 3600, 3600 / a, sz / 1e6 / a
	printf "ratio: torchaudio / vpaudit = %.2fx  (budget: >= 2x and < 3 s: %s)\n", b / a, (b / a >= 2 && a < 3) ? "met" : "NOT met" }'
rm -f "$DATA/hour.ark"
