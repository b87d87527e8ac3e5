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

# sentence_end: </s> scored after each candidate (hand values in the scenario)
t_run "ARPA with sentence_end" 0 -- run "$D/arpa-sentence-end.yaml" -o "$T/ase" --no-plots
t_ok "sentence_end: canary log-perplexity 0.85 log2 10 (0.6 without </s>)" \
	near "$(rec ab canary_logppl "$T/ase/results.json")" 2.823638880654258 1e-9
t_ok "sentence_end: still rank 1, exposure log2 3" \
	near "$(rec ab exposure "$T/ase/results.json")" 1.584962500721156 1e-12

# insertions on an imported model: a validation error at its line
t_run "insertions on an ARPA import" 1 -- validate "$D/bad-insertions.yaml"
t_ok "its error line" grep -q "^vpaudit validate: error: $D/bad-insertions.yaml:8:74: 'insertions' does not apply to an imported model: it cannot be retrained" "$ERR"

# the canary's own value among the candidates: warned, and drop_canary removes it
t_run "candidates holding the canary" 0 -- run "$D/cands-with-canary.yaml" -o "$T/cwc" --no-plots
t_ok "warned" grep -q "^vpaudit: warning: kept: 1 candidate equals the canary's log-perplexity 21.5: counted as rivals" "$ERR"
t_ok "no warning for the dropped one" sh -c "! grep -q 'warning: dropped' '$ERR'"
t_ok "kept: log2 101 - log2 6" sh -c "tr -d '\n ' < '$T/cwc/results.json' | grep -q '\"attack\":\"kept\",\"sub\":\"canary\",\"layer\":null,\"sweep\":null,\"metrics\":{\"exposure\":4.07324898203063'"
t_ok "dropped: log2 100 - log2 5 over 100 candidates" sh -c "tr -d '\n ' < '$T/cwc/results.json' | grep -q '\"attack\":\"dropped\",\"sub\":\"canary\",\"layer\":null,\"sweep\":null,\"metrics\":{\"exposure\":4.32192809488736[0-9]*,\"exposure_extrapolated\":[-0-9.e+]*,\"max_exposure\":6.64385618977472[0-9]*,\"rank\":5,\"n_candidates\":100'"
t_run "drop_canary on a model" 1 -- validate "$D/bad-drop-canary.yaml"
t_ok "its error line" grep -q "^vpaudit validate: error: $D/bad-drop-canary.yaml:10:45: drop_canary applies to imported \`candidates\`: a model's canary is never among its own candidates$" "$ERR"

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
