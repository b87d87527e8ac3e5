#!/bin/bash
# bench/asr.sh - issue 30's PocketSphinx figure: `vpaudit asr` against
# `pocketsphinx_batch -adcin yes` on the same samples, one thread each (the
# goal: the same speed, i.e. no overhead of ours).  Files: pocketsphinx-
# testdata's 5 LibriVox recordings (24.7 s) and 8 short ones (tests/golden/asr/,
# 46.7 s with the 5 synthetic utterances), repeated BENCH_ASR_REP times (default
# 4) so that model loading (once per process in both) is a small part.  CPU
# seconds (user + sys) are compared, the machine being shared; wall times printed.
set -eu
DATA=${BENCH_DATA:-bench/data}
REP=${BENCH_ASR_REP:-4}
G=tests/golden/asr
echo "== asr: vpaudit asr (PocketSphinx C API) against pocketsphinx_batch -adcin yes, 1 thread"
if ! command -v pocketsphinx_batch > /dev/null || [ ! -f /usr/share/pocketsphinx/test/data/librivox/fileids ]; then
	echo "skipped: pocketsphinx or pocketsphinx-testdata not installed"
	exit 0
fi
B=$DATA/asr
rm -rf "$B"; mkdir -p "$B/raw"
# the same samples for both: headerless int16 for pocketsphinx_batch (a WAV header would be
# decoded as audio), their WAV for vpaudit
: > "$B/ctl"; : > "$B/wav.scp"
for r in $(seq 1 "$REP"); do
	while read -r utt rest; do
		f=${rest%% *}
		case "$rest" in
		sox*) f=$(echo "$rest" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /\.raw$/) print $i }')
		      cp "$f" "$B/raw/$utt-$r.raw" ;;
		*) case "$f" in /*) ;; *) f=$G/$f ;; esac
		   sox "$f" -t raw -e signed -b 16 -L "$B/raw/$utt-$r.raw" ;;
		esac
		sox -t raw -r 16000 -e signed -b 16 -c 1 -L "$B/raw/$utt-$r.raw" "$B/raw/$utt-$r.wav"
		echo "$utt-$r" >> "$B/ctl"
		echo "$utt-$r $PWD/$B/raw/$utt-$r.wav" >> "$B/wav.scp"
	done < <(cat "$G/wav_libri.scp" "$G/wav.scp")
done
secs=$(awk -v n="$(cat "$B"/raw/*.raw | wc -c)" 'BEGIN { print n / 32000 }')
/usr/bin/time -f "%e %U %S" -o "$B/t1" pocketsphinx_batch -adcin yes -cepdir "$B/raw" -cepext .raw \
	-ctl "$B/ctl" -hyp "$B/batch.hyp" > /dev/null 2>&1
/usr/bin/time -f "%e %U %S" -o "$B/t2" ./vpaudit asr "$B/wav.scp" -o "$B/vpaudit.hyp" --threads 1
read -r w1 u1 s1 < "$B/t1"; read -r w2 u2 s2 < "$B/t2"
c1=$(awk -v u="$u1" -v s="$s1" 'BEGIN { print u + s }'); c2=$(awk -v u="$u2" -v s="$s2" 'BEGIN { print u + s }')
printf '%-48s %8.2f s CPU %8.2f s wall  (%.0f s of audio, %d utterances)\n' "baseline: pocketsphinx_batch -adcin yes" "$c1" "$w1" "$secs" "$(wc -l < "$B/ctl")"
printf '%-48s %8.2f s CPU %8.2f s wall\n' "vpaudit asr --threads 1" "$c2" "$w2"
printf 'machine: %s CPUs, load average %s (shared)\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
awk -v a="$c2" -v b="$c1" -v s="$secs" 'BEGIN {
	printf "real-time factor (CPU) vpaudit %.3f, pocketsphinx_batch %.3f\n", a / s, b / s
	printf "ratio: vpaudit / pocketsphinx_batch CPU = %.3f  (goal: 1, no overhead of ours)\n", a / b }'
rm -rf "$B"
