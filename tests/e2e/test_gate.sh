#!/bin/bash
# tests/e2e/test_gate.sh - `vpaudit gate`: the gates stored in a results
# file, those of --scenario, --baseline with the leaky directions and the
# tolerance, exit codes 0 / 1 / 2 / 3.
. tests/e2e/lib.sh
D=$PWD/scenarios/data
not_grep() { ! grep -q "$@"; }

t_run "make results" 0 -- run scenarios/scores-example.yaml -o "$T/a" --quiet --no-plots
R=$T/a/results.json
t_run "gate on stored gates" 0 -- gate "$R"
t_ok "one PASS line per gate" test "$(grep -c '^PASS ' "$OUT")" = 3
t_ok "PASS line with value and bound" grep -qx 'PASS eval.lazy_informed linkability = 0.35854 <= 0.6' "$OUT"

mkdir -p "$T/s"
scn() { # $1 file, $2 lazy_informed scores, $3 extra YAML
	cat > "$1" <<YAML
name: g
targets:
  - id: vpc
    kind: scores
    sets:
      - {name: ignorant, scores: $D/ignorant.txt}
      - {name: lazy_informed, scores: $2}
      - {name: semi_informed, scores: $D/semi_informed.scores, key: $D/semi_informed.trials}
attacks:
  - {id: eval, kind: evaluate, target: vpc, ci: 0.95}
$3
YAML
}
scn "$T/s/strict.yaml" "$D/lazy_informed.txt" "gates:
  - {attack: eval, metric: eer, min: 0.2}
  - {attack: eval.ignorant, metric: zebra.dece, max: 0.5}"
t_run "gate --scenario with a failing gate" 3 -- gate "$R" --scenario "$T/s/strict.yaml"
t_ok "FAIL line names the worst sub" grep -qx 'FAIL eval eer = 0.1225 < 0.2 (worst of 3 records: sub semi_informed)' "$OUT"
t_ok "PASS line for the nested metric" grep -q '^PASS eval.ignorant zebra.dece = ' "$OUT"

# a scenario gate on a metric absent from the results is an error blaming its line
scn "$T/s/other.yaml" "$D/lazy_informed.txt" "gates:
  - {attack: eval.ignorant, metric: eer, min: 0.2}"
sed 's/"name": "ignorant"/"name": "renamed"/; s/"sub": "ignorant"/"sub": "renamed"/' "$R" > "$T/renamed.json"
t_run "gate naming a sub missing from the results" 1 -- gate "$T/renamed.json" --scenario "$T/s/other.yaml"
t_ok "error names the gate's line" grep -qx "vpaudit gate: error: $T/s/other.yaml:12:5: gate names 'eval.ignorant', but attack 'eval' has no sub 'ignorant' in the results" "$ERR"

# --baseline: lazy_informed now scores like semi_informed (a leakier system)
scn "$T/s/leaky.yaml" "$D/semi_informed.scores, key: $D/semi_informed.trials" "tolerance: 0.02"
t_run "leaky results" 0 -- run "$T/s/leaky.yaml" -o "$T/b" --quiet --no-plots
t_run "--baseline flags the leak" 3 -- gate "$T/b/results.json" --baseline "$R"
cp "$ERR" "$T/leak.err"
t_ok "eer flagged (lower is leakier)" grep -q '^REGRESSION eval.lazy_informed eer moved from 0.271858 to 0.1225 (-0.149, lower is leakier; tolerance 0.02)$' "$OUT"
t_ok "linkability flagged (higher is leakier)" grep -q '^REGRESSION eval.lazy_informed linkability moved from 0.35854 to ' "$OUT"
t_ok "unchanged sets not flagged" not_grep '^REGRESSION eval.ignorant' "$OUT"
# a baseline of another audit (issue 25 item 3): a warning per difference, an error with --strict
t_ok "another scenario: warned" grep -qx "vpaudit: warning: $R: the baseline is of scenario 'scores-example', the results of 'g' (--strict makes this an error)" "$T/leak.err"
# the same files at other paths (absolute here, relative there) match by their SHA-256
t_ok "another input file: warned" grep -qx "vpaudit: warning: $R: 1 input file differs from the baseline's: scenarios/data/lazy_informed.txt (only in the baseline) (--strict makes this an error)" "$T/leak.err"
sed 's/"seed": 1,/"seed": 7,/' "$R" > "$T/seed7.json"
t_run "another seed: passes with a warning" 0 -- gate "$R" --baseline "$T/seed7.json" --junit "$T/seed7.xml"
t_ok "another seed: a junit.xml property" grep -q "<property name=\"baseline_mismatch\" value=\"the baseline&#39;s seed is 7, the results&#39; 1\"/>" "$T/seed7.xml"
t_ok "another seed: the warning" test "$(cat "$ERR")" = "vpaudit: warning: $T/seed7.json: the baseline's seed is 7, the results' 1 (--strict makes this an error)"
t_run "another seed: --strict is an error" 1 -- gate "$R" --baseline "$T/seed7.json" --strict
t_ok "--strict: one error line" test "$(cat "$ERR")" = "vpaudit gate: error: $T/seed7.json: the baseline is not of the same audit (an error with --strict): the baseline's seed is 7, the results' 1"
t_ok "--strict: nothing on stdout" test ! -s "$OUT"
sed 's/"id": "vpc"/"id": "vpc2"/; s/"target": "vpc"/"target": "vpc2"/' "$R" > "$T/vpc2.json"
t_run "other target ids: a warning" 0 -- gate "$R" --baseline "$T/vpc2.json"
t_ok "other target ids: named" grep -qx "vpaudit: warning: $T/vpc2.json: the baseline has targets \[vpc2\], the results \[vpc\] (--strict makes this an error)" "$ERR"
t_run "no change against itself" 0 -- gate "$R" --baseline "$R"
t_ok "no change against itself: no warning" test ! -s "$ERR"
t_ok "matched line" grep -qx 'BASELINE matched 3 of 3 records (3 in the baseline)' "$OUT"
t_ok "STABLE line per record" test "$(grep -c '^STABLE eval\.[a-z_]*: 8 metrics within tolerance$' "$OUT")" = 3
t_run "the other direction is not a leak" 0 -- gate "$R" --baseline "$T/b/results.json"
scn "$T/s/tol.yaml" "$D/lazy_informed.txt" "tolerance: 1"
t_run "a large tolerance (from --scenario) flags nothing" 0 -- gate "$T/b/results.json" --baseline "$R" --scenario "$T/s/tol.yaml"

# errors and usage
printf '{"records": [1, 2,]}\n' > "$T/bad.json"
t_run "bad JSON" 1 -- gate "$T/bad.json"
t_ok "bad JSON names file:line:col" grep -q "^vpaudit gate: error: $T/bad.json:1:" "$ERR"
printf '{"schema": "x"}\n' > "$T/norec.json"
t_run "not a results file" 1 -- gate "$T/norec.json"
t_run "missing results file" 1 -- gate "$T/none.json"
t_run "no argument" 2 -- gate
t_run "unknown option" 2 -- gate "$R" --stricter
t_ok "unknown option: one line" test "$(wc -l < "$ERR")" = 1
t_ok "unknown option: the command's style" grep -qx "vpaudit gate: error: unknown option '--stricter' (see 'vpaudit gate --help')" "$ERR"
t_run "--strict without --baseline" 2 -- gate "$R" --strict
t_run "--help" 0 -- gate --help
t_done
