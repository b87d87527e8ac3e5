#!/bin/bash
# bench/portable.sh - the cost of `vpaudit run --portable` (issue 25 item 2):
# the quickstart with the arithmetic this CPU chooses (the baseline) and with
# the portable one (OpenBLAS's Haswell kernel, glibc's libm without its FMA
# variants, vpaudit's generic paths, one re-execution), measured in the same
# run, alternating, ROUNDS rounds (BENCH_PORTABLE_ROUNDS, default 3); the
# fastest wall time and the smallest CPU time (user + system) of each mode,
# and their ratios.  The machine is named (CPU model, the kernel OpenBLAS
# chose) because the cost depends on it: where OpenBLAS would choose
# Haswell anyway (this AMD EPYC with 0.3.21) only libm and vpaudit's own
# paths change; where it chooses SkylakeX, the pinned kernel is another one.
# Also checks that the two portable runs of the last rounds give the same
# numbers.  Run from the top of the repository (`make bench` does).
set -eu
DATA=${BENCH_DATA:-bench/data}
O=$DATA/portable
SCN=${BENCH_PORTABLE_SCENARIO:-scenarios/quickstart.yaml}
ROUNDS=${BENCH_PORTABLE_ROUNDS:-3}
mkdir -p "$O"
model=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//' || echo unknown)

run1() { # MODE(default|portable) ROUND -> "wall cpu" of one run
	local flag=""
	[ "$1" = portable ] && flag=--portable
	/usr/bin/time -f '%e %U %S' -o "$O/time" ./vpaudit run "$SCN" -o "$O/$1-$2" --threads 2 \
		--no-plots --quiet $flag 2> "$O/err" || { cat "$O/err" "$O/time"; exit 1; }
	awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$O/time"
}

echo "== portable mode: $SCN with and without --portable, $ROUNDS rounds alternating (CPU: $model; load average $(cut -d' ' -f1-3 /proc/loadavg))"
bw_d="" bc_d="" bw_p="" bc_p=""
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
for r in $(seq "$ROUNDS"); do
	read -r w c < <(run1 default "$r")
	printf '  round %d: default  %7.2f s wall %7.2f s CPU\n' "$r" "$w" "$c"
	bw_d=$(min "$bw_d" "$w"); bc_d=$(min "$bc_d" "$c")
	read -r w c < <(run1 portable "$r")
	printf '  round %d: portable %7.2f s wall %7.2f s CPU\n' "$r" "$w" "$c"
	bw_p=$(min "$bw_p" "$w"); bc_p=$(min "$bc_p" "$c")
done
kern=$(sed -n 's/.*"blas_kernel": "\([^"]*\)".*/\1/p' "$O/default-1/results.json")
fma=$(sed -n 's/.*"libm_fma": \([a-z]*\).*/\1/p' "$O/default-1/results.json")
printf '%-44s %8.2f s wall %8.2f s CPU  (OpenBLAS kernel %s, libm FMA variants %s)\n' \
	"default (the CPU's own arithmetic)" "$bw_d" "$bc_d" "$kern" "$fma"
printf '%-44s %8.2f s wall %8.2f s CPU  (kernel Haswell, libm generic, vpaudit generic)\n' \
	"--portable" "$bw_p" "$bc_p"
awk -v a="$bw_p" -v b="$bw_d" -v c="$bc_p" -v d="$bc_d" -v m="$model" \
	'BEGIN { printf "ratio: --portable / default = %.2fx wall, %.2fx CPU (best of each; %s)\n", a / b, c / d, m }'
if [ "$ROUNDS" -ge 2 ]; then
	# the same numbers in two portable runs: every compared metric, both ways
	./vpaudit gate "$O/portable-1/results.json" --baseline "$O/portable-2/results.json" --tolerance 0 > "$O/gate1" &&
		./vpaudit gate "$O/portable-2/results.json" --baseline "$O/portable-1/results.json" --tolerance 0 > "$O/gate2" &&
		! grep -q '^REGRESSION\|^WARNING' "$O/gate1" "$O/gate2" &&
		echo "portable runs 1 and 2: every metric identical" || echo "PORTABLE RUNS DIFFER (see $O/gate1, $O/gate2)"
fi
