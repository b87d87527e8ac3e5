#!/bin/bash
# tests/e2e/test_layers.sh - the house's one-way stairs (ARCHITECTURE.md),
# read from the object files by tools/layers.sh: no folder cycle; at most two
# circles of files that use each other, each named where it is kept by a
# comment "layers: circle kept: <reason>" in one of its files; targets/ and
# attacks/ never include the YAML node API (config/yaml.h) nor scenarios/.
set -u
BUILD=${BUILD:-build}
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
no() { fail=$((fail + 1)); echo "not ok - $1"; }
out=$(tools/layers.sh "$BUILD" 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
[ $rc = 0 ] && ok "tools/layers.sh ran on $BUILD" || no "tools/layers.sh failed ($rc)"
summary=$(echo "$out" | grep '^layers: ')
nf=$(echo "$summary" | sed -E 's/^layers: ([0-9]+) file circles.*/\1/')
nc=$(echo "$summary" | sed -E 's/.*, ([0-9]+) folder cycles$/\1/')
[ "$nc" = 0 ] && ok "no folder cycle" || no "folder cycles: $nc"
[ -n "$nf" ] && [ "$nf" -le 2 ] && ok "at most 2 file circles ($nf)" || no "file circles: $nf (at most 2)"
while read -r _ n _ files; do
	named=0
	for f in $files; do
		grep -q 'layers: circle kept:' "$f" ${f%.c}.h 2>/dev/null && named=1
	done
	[ $named = 1 ] && ok "circle named in its code: $files" || no "circle without 'layers: circle kept:' comment: $files"
done < <(echo "$out" | grep '^circle ')
bad=$(grep -ln '#include "config/yaml.h"\|#include "scenarios/' targets/*.[ch] attacks/*.[ch] 2>/dev/null)
[ -z "$bad" ] && ok "targets/ and attacks/ see options, not YAML nodes nor scenarios/" || no "include the YAML node API or scenarios/: $bad"
bad=$(grep -ln 'vpa_ynode\|vpa_ymap_\|vpa_cfg_' targets/*.[ch] attacks/*.[ch] 2>/dev/null)
[ -z "$bad" ] && ok "targets/ and attacks/ read no YAML node" || no "use YAML nodes: $bad"
# the checker itself: a planted circle and a planted folder cycle are found
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/a" "$tmp/src/b" "$tmp/b/a" "$tmp/b/b"
printf 'int b1(void);\nint a1(void) { return b1(); }\n' > "$tmp/src/a/x.c"
printf 'int a1(void);\nint b1(void) { return 0; }\nint b2(void) { return a1(); }\n' > "$tmp/src/b/y.c"
cc -c -o "$tmp/b/a/x.o" "$tmp/src/a/x.c" && cc -c -o "$tmp/b/b/y.o" "$tmp/src/b/y.c"
planted=$(cd "$tmp/src" && LAYERS_ROOT=. bash "$OLDPWD/tools/layers.sh" "$tmp/b" 2>&1 | tail -n 1)
[ "$planted" = "layers: 1 file circles (2 files), 1 folder cycles" ] && ok "a planted circle and folder cycle are found" || no "planted: $planted"
echo "suite: $pass passed, $fail failed"
