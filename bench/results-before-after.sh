#!/bin/bash
# bench/results-before-after.sh OLD NEW [SCENARIO.yaml ...] - run each shipped
# scenario (default: scenarios/*.yaml) with two vpaudit binaries and check
# that their results.json are byte-identical apart from the timing fields
# (tools/results-same.sh).  For a change that must not change behaviour (issue
# 27 moved every file of the house and changed how options are read).  Not
# part of `make test`: the shipped scenarios take about 25 minutes on 2 cores.
#   bench/results-before-after.sh /tmp/vpaudit-before ./vpaudit
# OUT (default /tmp/results-before-after) keeps both runs: OUT/old/NAME, OUT/new/NAME.
set -u
[ $# -ge 2 ] || { echo "usage: bench/results-before-after.sh OLD NEW [SCENARIO.yaml ...]" >&2; exit 2; }
old=$1 new=$2; shift 2
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/results-before-after}
mkdir -p "$out/old" "$out/new"
[ $# -gt 0 ] || set -- scenarios/*.yaml
same=0 differ=0
for s in "$@"; do
	n=$(basename "$s" .yaml)
	for side in old new; do
		bin=$old; [ $side = new ] && bin=$new
		if [ ! -f "$out/$side/$n/results.json" ]; then
			t0=$(date +%s)
			"$bin" run "$s" -o "$out/$side/$n" --threads 2 > "$out/$side/$n.log" 2>&1
			echo "# $side $n: exit $?, $(( $(date +%s) - t0 )) s"
		fi
	done
	if tools/results-same.sh "$out/old/$n" "$out/new/$n" > "$out/$n.diff" 2>&1; then
		same=$((same + 1)); echo "same: $n"
	else
		differ=$((differ + 1)); echo "DIFFERENT: $n (see $out/$n.diff)"
	fi
done
echo "$same same, $differ different"
[ $differ = 0 ]
