#!/bin/bash
# tools/results-same.sh A.json B.json - 1 (and the differing lines) unless two
# results.json files are the same apart from their timing fields
# (reports/README.md "Timing fields": started, wall_time, a record's or an
# audio target's `timing`, `*_secs`, `train_seconds`, `tokens_per_s[econd]`,
# the FL acoustic models' `seconds`), and the `machine` object (one run may be
# portable, the other not).  Used to check that a change of the code's house
# (issue 27) left the shipped scenarios' results byte-identical:
#   tools/results-same.sh out-before/x/results.json out-after/x/results.json
# A folder is taken as its results.json.
set -eu
[ $# = 2 ] || { echo "usage: tools/results-same.sh A.json B.json" >&2; exit 2; }
strip() { # the file without timing fields (results.json is written one key per line)
	local f=$1
	[ -d "$f" ] && f=$f/results.json
	awk '
	skip > 0 {
		if ($0 ~ /^ *[}\]],?$/ && length($0) - length(ltrimmed($0)) == indent) skip = 0
		next
	}
	function ltrimmed(s) { sub(/^ +/, "", s); return s }
	/^ *"(wall_time|timing|seconds|machine)": [{[] *$/ {
		indent = length($0) - length(ltrimmed($0)); skip = 1; next
	}
	/^ *"(wall_time|timing|seconds|machine)": (\{\}|\[\]),?$/ { next }
	/^ *"(started|train_seconds|tokens_per_s|tokens_per_second|[a-z_]*_secs)": / { next }
	{ sub(/,$/, ""); print }' "$f"
}
if diff <(strip "$1") <(strip "$2"); then
	echo "same apart from timing fields: $1 $2"
else
	echo "results differ beyond timing fields: $1 $2" >&2
	exit 1
fi
