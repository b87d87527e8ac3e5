#!/bin/bash
# tests/e2e/test_metrics.sh - `vpaudit metrics` end to end: values on a
# hand-computed set, every input format, options, warnings, bad input.
. tests/e2e/lib.sh
D=tests/e2e/data

# jget KEY: the value of "KEY": in the pretty JSON on $OUT (first match)
jget() { grep -m1 "\"$1\":" "$OUT" | sed -E 's/.*": *//; s/,$//; s/"//g'; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

# Hand computation (tests/e2e/data/tiny.txt): tar {1,3,5}, non {0,2,4}.
# PAV blocks {0}:0, {1,2}:1/2, {3,4}:1/2, {5}:1 -> ROC hull (Pfa,Pmiss) (0,1) (0,2/3)
# (1/3,1/3) (2/3,0) (1,0): EER 1/3.  Sweep: threshold 3 gives Pmiss = Pfa = 1/3.
# Cllr = 1/2 [mean log2(1+e^-{1,3,5}) + mean log2(1+e^{0,2,4})] = 1.7328665804377332.
# Cllr_min: PAV LLRs -inf, 0, 0, 0, 0, +inf -> 1/2 (2/3 + 2/3) = 2/3.
# Linkability: 3 mated scores < 10 -> undefined (null).
for f in tiny.txt tiny4.txt; do
	t_run "metrics $f exits 0" 0 -- metrics "$D/$f" --json
	t_ok "$f eer = 1/3" near "$(jget eer)" 0.3333333333333333 1e-12
	t_ok "$f eer_sweep = 1/3" near "$(jget eer_sweep)" 0.3333333333333333 1e-12
	t_ok "$f eer_sweep_threshold = 3" near "$(jget eer_sweep_threshold)" 3 0
	t_ok "$f cllr" near "$(jget cllr)" 1.7328665804377332 1e-12
	t_ok "$f cllr_min = 2/3" near "$(jget cllr_min)" 0.6666666666666666 1e-12
	t_ok "$f linkability null" test "$(jget linkability)" = null
	t_ok "$f n_target 3" test "$(jget n_target)" = 3
	t_ok "$f zebra present" grep -q '"dece":' "$OUT"
	t_ok "$f warns about few trials" grep -q "only 3 target trials" "$ERR"
	t_ok "$f warns linkability undefined" grep -q "linkability is undefined" "$ERR"
done
t_run "Kaldi scores + key (CRLF, no final newline)" 0 -- metrics "$D/tiny.scores" --key "$D/tiny.key" --json
t_ok "key join eer = 1/3" near "$(jget eer)" 0.3333333333333333 1e-12
t_ok "key join cllr" near "$(jget cllr)" 1.7328665804377332 1e-12
t_run "--tar/--non text lists" 0 -- metrics --tar "$D/tar.txt" --non "$D/non.txt" --json
t_ok "lists cllr_min = 2/3" near "$(jget cllr_min)" 0.6666666666666666 1e-12

# Table output carries the same numbers.
t_run "table output" 0 -- metrics "$D/tiny.txt"
t_ok "table has EER" grep -q "EER (ROCCH) .* 33.3333 %" "$OUT"
t_ok "table has Cllr_min" grep -q "Cllr_min .* 0.6667 bits" "$OUT"

# A realistic set with ids: no warnings, CI by identities, det file, plots.
t_run "spk.txt with --ci, --det, --plot" 0 -- metrics "$D/spk.txt" --json --ci 0.9 --ci-reps 200 --det "$T/det.txt" --plot "$T/figs"
t_ok "no warnings on a healthy set" test ! -s "$ERR"
t_ok "ci method is by identities" grep -q '"method": "bootstrap-identities"' "$OUT"
t_ok "linkability defined" awk -v v="$(jget linkability)" 'BEGIN { exit !(v > 0 && v <= 1) }'
t_ok "det file has a line per distinct score + 1" test "$(wc -l < "$T/det.txt")" -ge 1000
t_ok "det file columns" awk 'NF != 3 { exit 1 }' "$T/det.txt"
for f in det.svg det.pdf linkability.svg linkability.pdf; do
	t_ok "plot $f written" test -s "$T/figs/$f"
done
t_ok "svg is svg" grep -q "<svg" "$T/figs/det.svg"
t_ok "pdf is pdf" sh -c "head -c 4 '$T/figs/linkability.pdf' | grep -q '%PDF'"
t_run "same CI twice with the same seed" 0 -- metrics "$D/spk.txt" --json --ci 0.9 --ci-reps 200
cp "$OUT" "$T/ci1"
t_run "again" 0 -- metrics "$D/spk.txt" --json --ci 0.9 --ci-reps 200
t_ok "bootstrap is seeded (identical output)" cmp -s "$OUT" "$T/ci1"
t_run "plain trials CI without ids" 0 -- metrics "$D/tiny.txt" --json --ci 0.95 --ci-reps 50
t_ok "ci method is trials" grep -q '"method": "bootstrap-trials"' "$OUT"

# Reversed scores warn.
awk '{ print -$1, $2 }' "$D/tiny.txt" > "$T/rev.txt"
t_run "reversed scores" 0 -- metrics "$T/rev.txt"
t_ok "reversed warning" grep -q "scores may be reversed" "$ERR"

# Usage errors: exit 2, nothing on stdout.
t_run "no arguments" 2 -- metrics
t_ok "usage error names help" grep -q "see 'vpaudit metrics --help'" "$ERR"
t_run "--tar without --non" 2 -- metrics --tar "$D/tar.txt"
t_run "bad --omega" 2 -- metrics "$D/tiny.txt" --omega -1
t_ok "omega message" grep -qx "vpaudit metrics: error: --omega must be a number > 0, got '-1'" "$ERR"
t_run "bad --ci" 2 -- metrics "$D/tiny.txt" --ci 1.5
t_run "unknown option" 2 -- metrics "$D/tiny.txt" --frobnicate
t_ok "no stdout on usage error" test ! -s "$OUT"
t_run "--help" 0 -- metrics --help
t_ok "help on stdout" grep -q "usage: vpaudit metrics" "$OUT"

# Bad input: exit 1, one line FILE:LINE: ..., nothing on stdout.
bad() { # name content expected-stderr-regex
	printf "$2" > "$T/bad.txt"
	t_run "bad input: $1" 1 -- metrics "$T/bad.txt" --json
	t_ok "bad input: $1: one line naming file:line" sh -c "test \$(wc -l < '$ERR') = 1 && grep -Eq '$3' '$ERR'"
	t_ok "bad input: $1: nothing on stdout" test ! -s "$OUT"
}
bad "empty file" "" "bad.txt(:[0-9]+)?: .*no trials"
bad "NaN" "1 target\nnan nontarget\n" "bad.txt:2(:[0-9]+)?: "
bad "inf" "1 target\n0 nontarget\ninf target\n" "bad.txt:3(:[0-9]+)?: "
bad "non-numeric" "1 target\nabc nontarget\n" "bad.txt:2(:[0-9]+)?: "
bad "unknown label" "1 target\n0 impostor\n" "bad.txt:2(:[0-9]+)?: .*impostor"
bad "wrong column count" "1 target\n0 x y nontarget z\n" "bad.txt:2(:[0-9]+)?: "
bad "single class" "1 target\n2 target\n" "bad.txt: no non-target trials"
bad "only non-targets" "1 nontarget\n2 nontarget\n" "bad.txt: no target trials"
t_run "missing file" 1 -- metrics "$T/nope.txt"
t_ok "missing file message" grep -q "nope.txt: cannot open" "$ERR"
printf 'a x 1\nb y 2\n' > "$T/s.scores"; printf 'a x target\nb z nontarget\n' > "$T/s.key"
t_run "pair missing from key" 1 -- metrics "$T/s.scores" --key "$T/s.key"
t_ok "names the pair" grep -qx "vpaudit metrics: error: $T/s.key:2: pair 'b' 'z' is in the key but not in the scores ($T/s.scores)" "$ERR"
printf 'a x target\nb y nontarget\na x nontarget\n' > "$T/d.key"
t_run "duplicate pair in key" 1 -- metrics "$T/s.scores" --key "$T/d.key"
t_ok "duplicate named" grep -q "d.key:3: .*'a' 'x'" "$ERR"
printf '\x93NUMPY\x01\x00\x10\x00{descr: broken' > "$T/t.npy"
t_run "truncated npy" 1 -- metrics --tar "$T/t.npy" --non "$D/non.txt"
t_ok "npy error names file" grep -q "t.npy" "$ERR"
# Perfect attacks (issue 20): n targets in [10, 11), 5n non-targets in [0, 1).
# 12 targets: VoicePrivacy's one bin reads D<->sys = 0; linkability_hist = 1,
# not reliable (12 mated scores, one bin).  1,000 targets: reliable, hist = 1.
for n in 12 1000; do
	awk -v n=$n 'BEGIN { for (i = 0; i < n; i++) printf "%.6f target\n", 10 + i / n;
			     for (i = 0; i < 5 * n; i++) printf "%.6f nontarget\n", i / (5 * n) }' > "$T/p$n.txt"
	t_run "metrics perfect $n exits 0" 0 -- metrics "$T/p$n.txt" --json
	t_ok "perfect $n linkability_hist = 1" test "$(jget linkability_hist)" = 1
	t_ok "perfect $n eer 0" test "$(jget eer)" = 0
	t_ok "perfect $n has tied_fraction" test "$(jget tied_fraction)" = 0
	t_ok "perfect $n has a warnings array" grep -q '"warnings": \[' "$OUT"
done
t_run "metrics perfect 12 again" 0 -- metrics "$T/p12.txt" --json
t_ok "perfect 12 linkability 0" test "$(jget linkability)" = 0
t_ok "perfect 12 not reliable" test "$(jget linkability_reliable)" = false
t_ok "perfect 12 reason" grep -q '"linkability_reason": "12 mated scores and 60 non-mated scores (fewer than 100 each); mated scores occupy 1 of 1 bins (fewer than 5)' "$OUT"
t_ok "perfect 12 unreliable map" grep -q '"linkability": "12 mated scores' "$OUT"
t_ok "perfect 12 warnings in the JSON" grep -q 'p12.txt: only 12 target trials (fewer than 100)' "$OUT"
t_run "metrics perfect 1000 again" 0 -- metrics "$T/p1000.txt" --json
t_ok "perfect 1000 reliable" test "$(jget linkability_reliable)" = true
t_ok "perfect 1000 reason null" test "$(jget linkability_reason)" = null
t_ok "perfect 1000 unreliable empty" grep -q '"unreliable": {}' "$OUT"
t_ok "perfect 1000 no warnings" grep -q '"warnings": \[\]' "$OUT"
t_run "metrics perfect 12 table" 0 -- metrics "$T/p12.txt"
t_ok "table shows linkability_hist" grep -q "^linkability_hist  1.0000" "$OUT"
t_ok "table shows why" grep -q "unreliable: *12 mated scores" "$OUT"
t_ok "table lists what cannot be trusted" grep -q "^  eer  *12 target trials and 60 non-target trials (fewer than 100 each)$" "$OUT"
t_ok "table: min DCF needs 990 non-targets at p 0.01" grep -q "^  min_dcf .*990 needed at p_target 0.01" "$OUT"
t_run "metrics perfect 1000 table" 0 -- metrics "$T/p1000.txt"
t_ok "perfect 1000: nothing listed" sh -c "! grep -q 'cannot be trusted' '$OUT'"
# --threads: the same JSON for 1, 2 and 3 threads on 150,000 float32-exact
# scores (the sort's 32-bit LSD path, the metrics' parts side by side).
awk 'BEGIN { for (i = 0; i < 120000; i++) printf "%.6f\n", ((i * 7919) % 4001) / 256.0 - 12 }' > "$T/big_non.txt"
awk 'BEGIN { for (i = 0; i < 30000; i++) printf "%.6f\n", ((i * 104729) % 3001) / 256.0 - 2 }' > "$T/big_tar.txt"
for th in 1 2 3; do
	t_run "metrics --threads $th (150k float32 scores)" 0 -- metrics --tar "$T/big_tar.txt" --non "$T/big_non.txt" --json --threads $th
	cp "$OUT" "$T/big_$th.json"
done
t_ok "--threads 2 = --threads 1" cmp "$T/big_1.json" "$T/big_2.json"
t_ok "--threads 3 = --threads 1" cmp "$T/big_1.json" "$T/big_3.json"
t_ok "big set: 120000 non-targets read" grep -q '"n_nontarget": 120000' "$T/big_1.json"
t_run "--threads 0 is a usage error" 2 -- metrics --tar "$T/big_tar.txt" --non "$T/big_non.txt" --threads 0
t_ok "--threads 0 message" grep -q "threads" "$ERR"
t_done
