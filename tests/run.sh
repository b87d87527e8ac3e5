#!/bin/bash
# tests/run.sh - run every test and print one closing line "N passed, N failed".
#
#  - unit binaries $BUILD/tests/test_*          (each ends "suite: N passed, N failed")
#  - fuzz corpus replays $BUILD/replay/fuzz_X   over tests/fuzz/corpus/X/*
#  - e2e case folders tests/e2e/NNNN-slug/      (args, status, [stdout], [stderr])
#  - e2e scripts tests/e2e/test_*.sh                (each ends "suite: N passed, N failed")
# VPAUDIT is the binary under test; VPA_WRAP an optional wrapper (valgrind).
set -u
BUILD=${BUILD:-build}
VPAUDIT=${VPAUDIT:-$PWD/vpaudit}
export VPAUDIT OPENBLAS_NUM_THREADS=1
pass=0; fail=0
top=$PWD

add_suite() { # $1 = output file of a suite
	local line p f
	line=$(grep -E '^suite: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$line" ]; then
		echo "not ok - $2 (no closing suite line: crashed?)"; fail=$((fail + 1)); return
	fi
	p=$(echo "$line" | sed -E 's/^suite: ([0-9]+) passed, ([0-9]+) failed.*/\1/')
	f=$(echo "$line" | sed -E 's/^suite: ([0-9]+) passed, ([0-9]+) failed.*/\2/')
	pass=$((pass + p)); fail=$((fail + f))
}

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# A hang must fail the run, not stall CI: every suite runs under a time limit.
TO="timeout -k 10 ${VPA_TEST_TIMEOUT:-900}"

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	echo "# $name"
	$TO ${VPA_WRAP:-} "$t" > "$tmp/out" 2>&1; rc=$?
	grep -E '^(not ok|#)' "$tmp/out"
	if [ $rc -ne 0 ] && ! grep -q '^not ok' "$tmp/out"; then
		echo "not ok - $name exited $rc"; cat "$tmp/out" | tail -n 20; fail=$((fail + 1))
	fi
	add_suite "$tmp/out" "$name"
done

for r in "$BUILD"/replay/fuzz_*; do
	[ -x "$r" ] || continue
	name=$(basename "$r"); corpus=tests/fuzz/corpus/${name#fuzz_}
	if $TO ${VPA_WRAP:-} "$r" "$corpus" > "$tmp/out" 2>&1; then
		echo "ok - replay $name ($(grep -c . "$tmp/out") inputs)"; pass=$((pass + 1))
	else
		echo "not ok - replay $name"; tail -n 20 "$tmp/out"; fail=$((fail + 1))
	fi
done

for d in tests/e2e/[0-9]*/; do
	[ -f "$d/args" ] || continue
	name=$(basename "$d")
	mapfile -t args < "$d/args"
	want=$(cat "$d/status" 2>/dev/null || echo 0)
	(cd "$d" && $TO ${VPA_WRAP:-} "$VPAUDIT" "${args[@]}" > "$tmp/stdout" 2> "$tmp/stderr"); rc=$?
	ok=1; why=""
	[ "$rc" = "$want" ] || { ok=0; why="exit $rc, expected $want"; }
	if [ -f "$d/stdout" ] && ! cmp -s "$d/stdout" "$tmp/stdout"; then ok=0; why="$why; stdout differs"; fi
	if [ -f "$d/stderr" ] && ! cmp -s "$d/stderr" "$tmp/stderr"; then ok=0; why="$why; stderr differs"; fi
	if [ $ok = 1 ]; then
		pass=$((pass + 1)); echo "ok - e2e $name"
	else
		fail=$((fail + 1)); echo "not ok - e2e $name: $why"
		diff "$d/stderr" "$tmp/stderr" 2>/dev/null | head -n 5
		diff "$d/stdout" "$tmp/stdout" 2>/dev/null | head -n 5
	fi
done

for s in tests/e2e/test_*.sh; do
	[ -f "$s" ] || continue
	name=$(basename "$s")
	echo "# $name"
	(cd "$top" && $TO bash "$s") > "$tmp/out" 2>&1; rc=$?
	[ $rc = 124 ] && echo "not ok - $name timed out" && fail=$((fail + 1))
	grep -E '^(not ok|#)' "$tmp/out"
	add_suite "$tmp/out" "$name"
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
