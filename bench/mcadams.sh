#!/bin/bash
# bench/mcadams.sh - issue 17's figure: the McAdams anonymiser (VPC B2) on one hour
# of 16 kHz audio (bench/features.sh's hour.wav: 360 segments of 10 s), vpaudit
# against the straightforward NumPy/SciPy transcription (bench/mcadams_numpy.py,
# the generator of the goldens) with the same number of threads/processes, in the
# same run.  NumPy runs BENCH_MCADAMS_K segments (default 12 = 2 min of audio; it
# needs about 7 min of CPU for the hour) and is extrapolated linearly to 360.
# Budget: the hour in < 60 s on 2 cores.
set -eu
BUILD=${BUILD:-build}
DATA=${BENCH_DATA:-bench/data}
TH=${BENCH_THREADS:-2}
K=${BENCH_MCADAMS_K:-12}
PY=/usr/bin/python3
mkdir -p "$DATA"
[ -f "$DATA/hour.wav" ] || { echo "generating $DATA/hour.wav (once) ..."; $PY bench/features_torchaudio.py gen "$DATA"; }
echo "== anonymise mcadams: alpha 0.8, 1 h of 16 kHz audio in 360 segments, $TH threads"
rm -rf "$DATA/hour_anon"
/usr/bin/time -f "%e %U %S" -o "$DATA/time.txt" \
	./vpaudit anonymise mcadams --alpha 0.8 --threads "$TH" "$DATA/hour" "$DATA/hour_anon"
read -r w u s < "$DATA/time.txt"
rm -rf "$DATA/hour_anon"
printf '%-52s %8.2f s  (reads, anonymises, writes 360 WAV files; %.2f s CPU)\n' "vpaudit anonymise mcadams --threads $TH" "$w" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')"
printf 'machine: %s CPUs, load average %s (wall times of a shared machine)\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
read -r tp n < <($PY bench/mcadams_numpy.py "$DATA" "$K" "$TH")
tph=$(awk -v t="$tp" -v k="$K" 'BEGIN { print t * 360 / k }')
printf '%-52s %8.2f s  (%d segments in %.2f s, extrapolated to 360)\n' "baseline: NumPy/SciPy anonym_v2, $TH processes" "$tph" "$K" "$tp"
awk -v a="$w" -v b="$tph" 'BEGIN {
	printf "real-time factor %.4f (%.0fx faster than real time)\n", a / 3600, 3600 / a
	printf "ratio: NumPy / vpaudit = %.1fx  (budget: the hour in < 60 s: %s)\n", b / a, a < 60 ? "met" : "NOT met" }'
