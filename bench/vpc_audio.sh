#!/bin/bash
# bench/vpc_audio.sh - issue 17's second figure: the whole VoicePrivacy evaluation
# of the embedded default (scenarios/vpc-audio.yaml: a synthetic corpus of 60
# speakers, McAdams at speaker and utterance level, ASV_eval and ASV_eval^anon
# trained in C, the four attackers, every metric) on BENCH_THREADS (2) threads,
# its time per stage (recorded by the run in results.json: targets[].info.audio.
# timing) and each stage extrapolated linearly to the VoicePrivacy 2024 sizes by
# bench_vpc_audio (scaling variables and sources in bench/bench_vpc_audio.c).
# The baseline of the ratio: the duration of the audio evaluated (real time).
# The last lines: wall hours on 2, 16 and 8 x 16 cores from the measured CPU
# time and parallel efficiency (the model and its assumptions: bench_vpc_audio.c).
set -eu
BUILD=${BUILD:-build}
DATA=${BENCH_DATA:-bench/data}
TH=${BENCH_THREADS:-2}
mkdir -p "$DATA"
echo "== whole evaluation of scenarios/vpc-audio.yaml, $TH threads"
rm -rf "$DATA/vpc-audio"
/usr/bin/time -f "%e %U %S %M" -o "$DATA/time.txt" \
	./vpaudit run scenarios/vpc-audio.yaml -o "$DATA/vpc-audio" --threads "$TH" --no-plots --quiet
read -r w u s m < "$DATA/time.txt"
printf '%-44s %8.2f s wall (%.1f min), %.2f s CPU, %d MiB peak\n' "vpaudit run scenarios/vpc-audio.yaml" \
	"$w" "$(awk -v w="$w" 'BEGIN { print w / 60 }')" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" "$((m / 1024))"
printf 'machine: %s CPUs, load average %s (wall times of a shared machine)\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD/bench/bench_vpc_audio" "$DATA/vpc-audio/results.json"
