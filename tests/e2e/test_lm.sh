#!/bin/bash
# tests/e2e/test_lm.sh - language_model, exposure and text_linkage end to end:
# ARPA import with a hand-computed exposure, candidates import, exact error
# lines, the shipped scenarios validate, and on the Brown corpus (skipped,
# not counted, when data/brown is missing) the acceptance behaviour: a PIN
# inserted 16 and 64 times approaches log2(10^4) = 13.3 bits, exposure grows
# with insertions, exact and extrapolated exposure agree within 1 bit below
# the top rank, text linkage produces a record per slice length.
. tests/e2e/lib.sh

D=tests/e2e/data/lm
rec() { # rec SUB KEY FILE: the metric KEY of the record whose sub is SUB (flat JSON values)
	tr -d '\n ' < "$3" | grep -o "\"sub\":\"$1\"[^}]*" | grep -o "\"$2\":[-0-9.e+]*" | head -n 1 | cut -d: -f2
}
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 >= b + 0) }'; }

t_run "arpa import runs" 0 -- run "$D/arpa-import.yaml" -o "$T/arpa" --no-plots
t_ok "ARPA canary exposure = log2 3 (hand-computed log-perplexities)" \
	near "$(rec ab exposure "$T/arpa/results.json")" 1.584962500721156 1e-12
t_ok "ARPA canary rank 1" near "$(rec ab rank "$T/arpa/results.json")" 1 0
t_ok "ARPA canary log-perplexity 0.6 log2 10" \
	near "$(rec ab canary_logppl "$T/arpa/results.json")" 1.9931568569324174 1e-9

t_run "candidates import runs, gate passes" 0 -- run "$D/cands-import.yaml" -o "$T/c" --no-plots
t_ok "candidates exposure = log2 100 - log2 5" \
	near "$(rec canary exposure "$T/c/results.json")" 4.321928094887362 1e-12
t_ok "gate line" grep -q "^PASS exp.canary exposure = 4.32193 <= 5" "$OUT"

t_run "canary without secret" 1 -- validate "$D/bad-no-secret.yaml"
t_ok "its error line" grep -q "^vpaudit validate: error: $D/bad-no-secret.yaml:8:30: a canary of an imported model needs 'secret' (the text that was inserted)$" "$ERR"
t_run "unknown slot" 1 -- validate "$D/bad-slot.yaml"
t_ok "its error line" grep -q "^vpaudit validate: error: $D/bad-slot.yaml:6:31: unknown slot '{pin}': expected {dN} (N = 1..9), {name}, {word} or {choice:a|b}$" "$ERR"
t_run "exposure without canaries" 1 -- validate "$D/bad-no-canaries.yaml"
t_ok "its error line" grep -q "^vpaudit validate: error: $D/bad-no-canaries.yaml:5:5: exposure needs canaries: the target has no 'canaries' (or 'candidates')$" "$ERR"
t_run "broken ARPA file" 1 -- run "$D/bad-arpa.yaml" -o "$T/b" --no-plots
t_ok "its error line" grep -q "^vpaudit run: error: $D/broken.arpa:6: expected a log10 probability, got '-x'$" "$ERR"

for s in comprise-exposure fl-lm-dp; do
	t_run "scenarios/$s.yaml validates" 0 -- validate "scenarios/$s.yaml"
done

if [ -z "${VPA_SKIP_BROWN:-}" ] && [ -f data/brown/ca01 ]; then
	cat > "$T/brown.yaml" <<EOS
name: lm-brown
seed: 1
report: [json]
targets:
  - {id: lm, kind: language_model, corpus_path: $PWD/data/brown, max_sentences: 3000,
     vocab_size: 2000, embedding: 64, hidden: 128, epochs: 8, batch: 32, lr: 0.003, checkpoints: 2,
     canaries: [{name: pin, template: "my pin number is {d4}", insertions: [1, 4, 16, 64]}]}
attacks:
  - {id: exp, kind: exposure, target: lm}
  - {id: tl, kind: text_linkage, target: lm, slices: [2, 4]}
EOS
	t_run "Brown LSTM LM with canaries" 0 -- run "$T/brown.yaml" -o "$T/brown" --no-plots
	R=$T/brown/results.json
	e1=$(rec pin-x1 exposure "$R"); e4=$(rec pin-x4 exposure "$R")
	e16=$(rec pin-x16 exposure "$R"); e64=$(rec pin-x64 exposure "$R")
	echo "# Brown: exposure x1 $e1, x4 $e4, x16 $e16, x64 $e64 (max 13.29)"
	t_ok "x16 approaches log2(10^4 - 4) (>= 12.3 bits)" ge "$e16" 12.3
	t_ok "x64 approaches log2(10^4 - 4) (>= 12.3 bits)" ge "$e64" 12.3
	t_ok "exposure grows: x16 > x1" ge "$e16" "$(awk -v a="$e1" 'BEGIN { print a + 1 }')"
	t_ok "exposure grows: x4 > x1" ge "$e4" "$e1"
	for s in pin-x1 pin-x4; do
		t_ok "$s: exact and extrapolated within 1 bit" \
			near "$(rec $s exposure "$R")" "$(rec $s exposure_extrapolated "$R")" 1
	done
	t_ok "text linkage: a record per slice" test "$(grep -c '"sub": "slice' "$R")" = 2
	t_ok "held-out perplexity finite" grep -q '"perplexity": [0-9]' "$R"
else
	echo "# skip - Brown corpus tests: data/brown is missing (run \`sh .ci/deps\`) or VPA_SKIP_BROWN is set; not counted as passed"
fi
t_done
