#!/bin/bash
# tests/e2e/test_dp_audit.sh - issue 28 items 3 and 4 end to end: the shipped
# scenarios/dp-audit.yaml (a DP-SGD language model, correct and with
# `dp_fault: skip_noise`, audited in one run by its canaries) passes the gate
# `max_of: epsilon` on the correct model and fails it (exit 3) on the faulty
# one, with the two numbers in the message; `vpaudit gate` on its
# results.json says the same; the records carry the convention's keys; and
# every bad gate form or audit key is one line FILE:LINE:COL, exit 1.  The
# runs need the Brown corpus (skipped, not counted, without it).
. tests/e2e/lib.sh

num() { # num KEY FILE SUB: the first number KEY of the record whose sub is SUB
	tr -d '\n ' < "$2" | grep -o "\"attack\":\"$3\",\"sub\":\"dp-audit\".*" |
		grep -o "\"$1\":[-0-9.e+]*" | head -n 1 | cut -d: -f2
}
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a + 0 > b + 0) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a + 0 <= b + 0) }'; }

S=scenarios/dp-audit.yaml
t_run "the shipped scenario validates" 0 -- validate "$S"

# ---- bad forms: one line FILE:LINE:COL, exit 1 ------------------------------
base() { # base GATE [TARGET-EXTRA]: a scenario with one audited target and one gate
	cat <<EOF
name: t
targets:
  - {id: lm, kind: language_model, corpus_path: $PWD/data/brown, max_sentences: 100,
     target_epsilon: 1, audit_canaries: 10$2}
  - {id: plain, kind: language_model, corpus_path: $PWD/data/brown, max_sentences: 100,
     canaries: [{template: "my pin is {d4}", insertions: [1]}]}
attacks:
  - {id: a, kind: exposure, target: lm}
  - {id: p, kind: exposure, target: plain}
gates:
  - $1
EOF
}
bad() { # bad NAME FILE-CONTENT EXPECTED-LINE (VPA_SHOW=1 prints the line got)
	printf '%s\n' "$2" > "$T/bad.yaml"
	t_run "$1" 1 -- validate "$T/bad.yaml"; [ -n "${VPA_SHOW:-}" ] && head -n 1 "$ERR"
	t_ok "$1: its line" test "$(head -n 1 "$ERR")" = "vpaudit validate: error: $T/bad.yaml:$3"
}
bad "max_of with max" "$(base '{attack: a, metric: epsilon_lower_bound, max_of: epsilon, max: 1}')" \
	"11:68: 'max' given with 'max_of': a gate bounds by a number (min/max) or by another metric (max_of), not both"
bad "max_of of an unknown metric" "$(base '{attack: a, metric: epsilon_lower_bound, max_of: epsilom}')" \
	"11:54: unknown metric 'epsilom' for attack 'a' of kind 'exposure' (did you mean 'epsilon'?)"
bad "max_of of its own metric" "$(base '{attack: a, metric: epsilon, max_of: epsilon}')" \
	"11:42: 'max_of' names the gate's own metric 'epsilon': expected another metric of the same record (e.g. 'metric: epsilon_lower_bound, max_of: epsilon')"
bad "a lower bound the attack never records" "$(base '{attack: p, metric: epsilon_lower_bound, max_of: epsilon}')" \
	"11:25: attack 'p' never records epsilon_lower_bound: its target 'plain' has no 'audit_canaries'"
bad "audit canaries without a DP claim" "$(base '{attack: a, metric: epsilon_lower_bound, max_of: epsilon}' | sed 's/target_epsilon: 1, //')" \
	"4:6: 'audit_canaries' needs a DP claim to audit: set 'noise_multiplier' or 'target_epsilon'"
bad "more audit canaries than the template allows" "$(base '{attack: a, metric: epsilon_lower_bound, max_of: epsilon}' ", audit_template: 'code {d2}'" | sed 's/audit_canaries: 10/audit_canaries: 60/')" \
	"4:41: audit_canaries 60: the template's 100 secrets must be at least twice as many (distinct secrets, and rivals to rank them against)"
bad "dp_fault on an imported model" "name: t
targets:
  - {id: m, kind: language_model, source: import, candidates: x.txt, canary_logppl: 1, dp_fault: skip_noise}
attacks:
  - {id: a, kind: exposure, target: m}" \
	"3:88: 'dp_fault' needs a model vpaudit trains (not 'source: import')"
bad "audit_alpha without audit canaries" "$(base '{attack: p, metric: epsilon, max: 9}' | sed 's/{id: p, kind: exposure, target: plain}/{id: p, kind: exposure, target: plain, audit_alpha: 0.01}/')" \
	"9:44: audit_alpha needs a target with 'audit_canaries'"
bad "audit_alpha out of range" "$(base '{attack: a, metric: epsilon, max: 9}' | sed 's/{id: a, kind: exposure, target: lm}/{id: a, kind: exposure, target: lm, audit_alpha: 1}/')" \
	"8:54: 'audit_alpha' must be a number in (0, 1), got '1'"

# ---- the shipped scenario ---------------------------------------------------------
if [ -z "${VPA_SKIP_BROWN:-}" ] && [ -f data/brown/ca01 ]; then
	t_run "dp-audit: the faulty model fails its gate (exit 3)" 3 -- run "$S" -o "$T/o" --no-plots
	R=$T/o/results.json
	t_ok "the correct model's gate passes, saying a lower bound below the claim proves nothing" \
		grep -q "^PASS audit.dp-audit epsilon_lower_bound = [0-9.e+-]* <= epsilon = [0-9.e+-]*: the audit does not contradict the claim (a lower bound below it does not prove it)$" "$OUT"
	t_ok "the faulty model's gate fails, naming both numbers and the contradiction" \
		grep -q "^FAIL audit_faulty.dp-audit epsilon_lower_bound = [0-9.e+-]* > epsilon = [0-9.e+-]*: the audit contradicts the claim (the lower bound exceeds it by [0-9.e+-]*, which proves a defect in the implementation or the accounting)$" "$OUT"
	lb=$(num epsilon_lower_bound "$R" audit_faulty); ce=$(num epsilon "$R" audit_faulty)
	t_ok "faulty: lower bound $lb > claim $ce" gt "$lb" "$ce"
	lb0=$(num epsilon_lower_bound "$R" audit); ce0=$(num epsilon "$R" audit)
	t_ok "correct: lower bound $lb0 <= claim $ce0" le "$lb0" "$ce0"
	t_ok "the claim is printed unchanged by the fault" test "$ce" = "$ce0"
	rdp=$(num epsilon_rdp "$R" audit); pld=$(num epsilon_pld "$R" audit)
	t_ok "claim = the tighter of PLD $pld and RDP $rdp" le "$ce0" "$rdp"
	t_ok "claim equals PLD's" test "$ce0" = "$pld"
	t_ok "record names its accountant" grep -q '"epsilon_accountant": "pld"' "$R"
	t_ok "dp_audit: method, adjacency, scope, counts" \
		grep -q '"method": "one-run"' "$R"
	t_ok "dp_audit adjacency example-level" grep -q '"adjacency": "example-level"' "$R"
	t_ok "dp_audit m = 400" test "$(tr -d '\n ' < "$R" | grep -o '"counts":{"m":400' | wc -l)" = 2
	t_ok "target info records which audit canaries were inserted" grep -q '"included": \[' "$R"
	t_run "vpaudit gate on its results.json fails the same way" 3 -- gate "$R"
	t_ok "same FAIL line" grep -q "^FAIL audit_faulty.dp-audit epsilon_lower_bound = [0-9.e+-]* > epsilon = [0-9.e+-]*: the audit contradicts the claim" "$OUT"
	t_ok "same PASS line" grep -q "^PASS audit.dp-audit epsilon_lower_bound" "$OUT"
	# dp_fault: skip_clipping (the noise still sigma * clip) at the shipped sizes: the fault
	# is in effect (held-out perplexity 112.4 against the correct model's 123.5) but the
	# one-run audit does not find it (bound 0 <= claim 0.9125): the canaries' exposures do
	# not separate.  Checked as it is, so that a change in either shows.
	sed -e 's/dp_fault: skip_noise/dp_fault: skip_clipping/' -e "s|\.\./data/brown|$PWD/data/brown|" "$S" > "$T/clip.yaml"
	t_run "skip_clipping: the scenario runs, the gate passes (exit 0)" 0 -- run "$T/clip.yaml" -o "$T/clip" --no-plots --quiet
	t_ok "skip_clipping changes the model (perplexity differs from the correct one's)" \
		jqt '[.records[] | select(.sub == "dp-audit") | .metrics.perplexity] | length == 2 and .[0] != .[1]' "$T/clip/results.json"
	t_ok "... but its audit bound stays at or below the claim" \
		jqt '[.records[] | select(.sub == "dp-audit" and .attack == "audit_faulty") | .metrics] | length == 1 and .[0].epsilon_lower_bound <= .[0].epsilon and .[0].dp_audit.dp_fault == "skip_clipping"' "$T/clip/results.json"
else
	echo "# skip - dp-audit runs: data/brown is missing (run \`sh .ci/deps\`) or VPA_SKIP_BROWN is set; not counted as passed"
fi
t_done
