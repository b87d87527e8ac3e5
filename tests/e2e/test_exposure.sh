#!/bin/bash
# tests/e2e/test_exposure.sh - `vpaudit exposure` end to end: exact values by
# hand, the extrapolated exposure against the exact one on 10^4 candidates,
# JSON shape, bad input.
. tests/e2e/lib.sh

jnum() { sed -E "s/.*\"$1\":([^,}]*).*/\1/" "$OUT"; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; }

# Hand lists: 1..8 (log2 8 = 3 bits at most).
seq 1 8 > "$T/c8.txt"
for c in "0.5 3" "1 2" "2.5 1.4150374992788437" "7 0" "8 -0.16992500144231237" "9 -0.16992500144231237"; do
	set -- $c
	t_run "exact canary $1" 0 -- exposure --canary "$1" --candidates "$T/c8.txt" --json
	t_ok "canary $1: exposure $2 (log2 8 - log2(1 + #<=))" near "$(jnum exposure)" "$2" 1e-12
	eq=$(awk -v c="$1" 'BEGIN { print (c == int(c) && c >= 1 && c <= 8) ? 1 : 0 }')
	t_ok "canary $1: method exact, n 8, $eq equal to the canary" grep -q "\"method\":\"exact\",\"n_candidates\":8,\"candidates_equal_to_canary\":$eq,\"dropped_canary\":false}\$" "$OUT"
done
t_run "table" 0 -- exposure --canary 2.5 --candidates "$T/c8.txt"
t_ok "table shows exact exposure" grep -q "^exposure (exact)        1.4150 bits" "$OUT"

# Symmetric 1..8: the fitted skew-normal is the normal N(4.5, 5.25) (the
# likelihood along the shape is maximal at 0), so the extrapolated exposure
# at 0.5 is -log2 Phi(-4 / sqrt 5.25) = 4.6285085216899886 (mpmath).
t_run "extrapolated on 1..8" 0 -- exposure --canary 0.5 --candidates "$T/c8.txt" --extrapolate --json
t_ok "method extrapolated" grep -q '"method":"extrapolated"' "$OUT"
t_ok "exposure 4.6285085" near "$(jnum exposure)" 4.6285085216899886 1e-6
t_ok "exact alongside" near "$(jnum exposure_exact)" 3 0
t_ok "loc 4.5" near "$(jnum loc)" 4.5 1e-6
t_ok "scale sqrt(5.25)" near "$(jnum scale)" 2.29128784747792 1e-6
t_ok "shape 0" near "$(jnum shape)" 0 1e-4

# The acceptance criterion: 10^4 candidates drawn from a skew-normal
# (xi 5, omega 2, alpha 4; awk's seeded generator, Box-Muller), canaries drawn
# from the same distribution: extrapolated within 1 bit of exact.
awk 'BEGIN { srand(7); d = 4 / sqrt(17); pi = atan2(0, -1)
	for (i = 0; i < 10012; i++) {
		u1 = rand(); u2 = rand(); if (u1 < 1e-300) u1 = 1e-300
		r = sqrt(-2 * log(u1)); z0 = r * cos(2 * pi * u2); z1 = r * sin(2 * pi * u2)
		if (z0 < 0) z0 = -z0
		printf "%.17g\n", 5 + 2 * (d * z0 + sqrt(1 - d * d) * z1) } }' > "$T/all.txt"
head -n 10000 "$T/all.txt" > "$T/cand.txt"
t_ok "10^4 candidates" test "$(wc -l < "$T/cand.txt")" = 10000
# the 12 held-out canaries, plus the sample's own 20th, 100th and 1000th smallest values
sort -g "$T/cand.txt" > "$T/sorted.txt"
canaries="$(tail -n 12 "$T/all.txt") $(sed -n '20p;100p;1000p' "$T/sorted.txt")"
for x in $canaries; do
	t_run "extrapolate canary $x" 0 -- exposure --canary "$x" --candidates "$T/cand.txt" --extrapolate --json
	t_ok "canary $x: |extrapolated - exact| < 1 bit ($(jnum exposure) vs $(jnum exposure_exact))" \
		awk -v a="$(jnum exposure)" -v b="$(jnum exposure_exact)" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d < 1) }'
done
t_ok "fitted shape near 4" awk -v s="$(jnum shape)" 'BEGIN { exit !(s > 3 && s < 5) }'
t_ok "fitted loc near 5" awk -v s="$(jnum loc)" 'BEGIN { exit !(s > 4.9 && s < 5.1) }'
# Far beyond every candidate: exact saturates at log2 N, extrapolated keeps going, finite.
t_run "far canary" 0 -- exposure --canary -20 --candidates "$T/cand.txt" --extrapolate --json
t_ok "exact = log2 10^4" near "$(jnum exposure_exact)" 13.287712379549449 1e-12
t_ok "extrapolated finite and beyond" awk -v a="$(jnum exposure)" 'BEGIN { exit !(a > 100 && a < 1e6) }'
t_run "far canary table" 0 -- exposure --canary -20 --candidates "$T/cand.txt" --extrapolate
t_ok "table shows both" sh -c "grep -q '^exposure (exact)' '$OUT' && grep -q '^exposure (extrapolated)' '$OUT' && grep -q '^skew-normal fit' '$OUT'"

# .npy input (float32): 1..8
printf '\x93NUMPY\x01\x00\x76\x00' > "$T/c8.npy"
printf "%-117s\n" "{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }" >> "$T/c8.npy"
printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40\x00\x00\xc0\x40\x00\x00\xe0\x40\x00\x00\x00\x41' >> "$T/c8.npy"
t_run ".npy float32 candidates" 0 -- exposure --canary 2 --candidates "$T/c8.npy" --json
t_ok ".npy: exposure 3 - log2 3" near "$(jnum exposure)" 1.4150374992788437 1e-12

# Bad input: exit 1 with FILE:LINE, exit 2 for usage, nothing on stdout.
fail() { # name, status, stderr pattern, args...
	local name=$1 st=$2 pat=$3; shift 3
	t_run "$name exits $st" "$st" -- "$@"
	t_ok "$name: nothing on stdout" test ! -s "$OUT"
	t_ok "$name: one line on stderr" test "$(wc -l < "$ERR")" = 1
	t_ok "$name: says '$pat'" grep -q -- "$pat" "$ERR"
}
: > "$T/empty.txt"
printf '# only a comment\n\n' > "$T/comment.txt"
printf '1\n2\nNaN\n' > "$T/nan.txt"
printf '1\n2\ninf\n' > "$T/inf.txt"
printf '1\nabc\n' > "$T/abc.txt"
fail "empty file" 1 "empty.txt: no scores" exposure --canary 1 --candidates "$T/empty.txt"
fail "only a comment" 1 "comment.txt: no scores" exposure --canary 1 --candidates "$T/comment.txt"
fail "NaN candidate" 1 "nan.txt:3:" exposure --canary 1 --candidates "$T/nan.txt"
fail "inf candidate" 1 "inf.txt:3:" exposure --canary 1 --candidates "$T/inf.txt" --extrapolate
fail "non-numeric candidate" 1 "abc.txt:2:" exposure --canary 1 --candidates "$T/abc.txt"
fail "missing file" 1 "cannot open" exposure --canary 1 --candidates "$T/none.txt"
printf "1\n2\n" > "$T/two.txt"
fail "fit of 2 values" 1 "two.txt: a skew-normal fit needs at least 3 values" exposure --canary 1 --candidates "$T/two.txt" --extrapolate
fail "missing --canary" 2 "missing --canary" exposure --candidates "$T/c8.txt"
fail "missing --candidates" 2 "missing --candidates" exposure --canary 1
fail "canary NaN" 2 "finite number" exposure --canary nan --candidates "$T/c8.txt"
fail "canary empty" 2 "finite number" exposure --canary "" --candidates "$T/c8.txt"
fail "option without value" 2 "needs a value" exposure --candidates "$T/c8.txt" --canary
t_run "help" 0 -- exposure --help
t_ok "help on stdout" grep -q "^usage: vpaudit exposure" "$OUT"
t_done
