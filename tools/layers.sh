#!/bin/bash
# tools/layers.sh - the house's stairs, read from the object files: which file
# uses a symbol another file defines (nm), then the circles of files that use
# each other (strongly connected components of that graph, Tarjan) and the
# cycles of folders (the same on the folder graph).  Run by `make test`
# (tests/e2e/test_layers.sh) and by hand:
#
#   tools/layers.sh [BUILD]          # BUILD: the object folder (default build)
#
# Prints one line per circle, "circle N files: a.c b.c ...", one per folder
# cycle, "folder cycle: a b ...", and a summary line
# "layers: F file circles (N files), C folder cycles".  A circle that is kept
# on purpose is named in the code next to it by a comment
# "layers: circle kept: <reason>" in one of its files; the check
# (tests/e2e/test_layers.sh) wants no folder cycle and at most 2 circles, each
# so named.  Files of cli/ and the generated protobuf code are not counted
# (cli/ is the top; onnx.pb-c.c is generated).
set -eu
BUILD=${1:-build}
cd "${LAYERS_ROOT:-$(dirname "$0")/..}" # LAYERS_ROOT: the sources' root (tests plant a tree)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
objs=$(find "$BUILD" -name '*.o' -not -path "$BUILD/tests/*" -not -path "$BUILD/replay/*" \
	-not -path "$BUILD/bench/*" -not -path "$BUILD/cli/*" -not -name 'onnx.pb-c.o' | sort)
[ -n "$objs" ] || { echo "layers: no object files under $BUILD (run make first)" >&2; exit 1; }
for o in $objs; do
	src=${o#"$BUILD"/}; [ -f "${src%.o}.c" ] || continue # a stale object
	src=${o#"$BUILD"/}; src=${src%.o}.c
	nm --defined-only -g "$o" | awk -v f="$src" 'NF >= 3 && $2 ~ /[TDBRCVW]/ { print "D", f, $3 }'
	nm -u "$o" | awk -v f="$src" '{ print "U", f, $NF }'
done > "$tmp/syms"
awk '
$1 == "D" { def[$3] = $2; next }
$1 == "U" { use[++nu] = $2 SUBSEP $3 }
END {
	for (i = 1; i <= nu; i++) {
		split(use[i], p, SUBSEP)
		if ((p[2] in def) && def[p[2]] != p[1]) print p[1], def[p[2]]
	}
}' "$tmp/syms" | sort -u > "$tmp/edges"
# Strongly connected components (Tarjan), printed as "N name name ..." for N > 1.
scc='
{ n = ++deg[$1]; adj[$1, n] = $2; node[$1] = 1; node[$2] = 1 }
function visit(v,    i, w, c, line) {
	index_[v] = low[v] = ++counter; stack[++sp] = v; on[v] = 1
	for (i = 1; i <= deg[v]; i++) {
		w = adj[v, i]
		if (!(w in index_)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
		else if (on[w] && index_[w] < low[v]) low[v] = index_[w]
	}
	if (low[v] == index_[v]) {
		c = 0; line = ""
		do { w = stack[sp--]; on[w] = 0; c++; line = line " " w } while (w != v)
		if (c > 1) print c line
	}
}
END { for (v in node) if (!(v in index_)) visit(v) }'
awk "$scc" "$tmp/edges" | while read -r n rest; do
	echo "$n $(echo $rest | tr ' ' '\n' | sort | tr '\n' ' ')"
done | sort -k2 > "$tmp/circles"
awk '{ split($1, a, "/"); split($2, b, "/"); if (a[1] != b[1]) print a[1], b[1] }' "$tmp/edges" | sort -u > "$tmp/fedges"
awk "$scc" "$tmp/fedges" > "$tmp/fcycles"
nf=0; nfiles=0
while read -r n rest; do
	echo "circle $n files: $rest"; nf=$((nf + 1)); nfiles=$((nfiles + n))
done < "$tmp/circles"
nc=0
while read -r n rest; do
	echo "folder cycle: $(echo $rest | tr ' ' '\n' | sort | tr '\n' ' ')"; nc=$((nc + 1))
done < "$tmp/fcycles"
if [ "${VPA_LAYERS_EDGES:-}" ]; then cp "$tmp/edges" "$VPA_LAYERS_EDGES"; fi
echo "layers: $nf file circles ($nfiles files), $nc folder cycles"
