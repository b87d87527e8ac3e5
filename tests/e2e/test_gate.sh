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

# issue 25 item 4f: layer 1 fails closed (60 target trials, EER 0.243, within the bound) while
# layer 3 (0.142) breaks it; the gate named only layer 1 and the trial count
cat > "$T/layers.json" <<'JSON'
{"schema": "vpaudit.results/1",
 "scenario": {"name": "fp"},
 "targets": [{"id": "m", "simulated": false}],
 "attacks": [{"id": "a1", "target": "m"}],
 "records": [
  {"attack": "a1", "sub": null, "layer": 1, "sweep": null, "metrics": {"eer": 0.243},
   "unreliable": {"eer": "60 target trials (fewer than 100)"}},
  {"attack": "a1", "sub": null, "layer": 2, "sweep": null, "metrics": {"eer": 0.31}, "unreliable": {}},
  {"attack": "a1", "sub": null, "layer": 3, "sweep": null, "metrics": {"eer": 0.142}, "unreliable": {}}],
 "gates": [{"attack": "a1", "metric": "eer", "min": 0.2}, {"attack": "a1", "metric": "eer", "min": 0.1}]}
JSON
t_run "layers: a breach and a fail-closed layer exit 3" 3 -- gate "$T/layers.json" --junit "$T/layers.xml"
t_ok "layers: the worst layer first, then the fail-closed one" grep -qx 'FAIL a1 eer = 0.142 < 0.2 (worst of 3 records: layer 3); and layer 1 fails closed, unreliable: 60 target trials (fewer than 100)' "$OUT"
t_ok "layers: without a breach, the fail-closed layer" grep -qx 'FAIL a1 eer = 0.243 fails closed, unreliable: 60 target trials (fewer than 100) (first of 3 records: layer 1)' "$OUT"
t_ok "layers: junit failure message names both" grep -q 'message="eer = 0.142 at layer 3, bound &gt;= 0.2; layer 1 fails closed, unreliable: 60 target trials (fewer than 100)"' "$T/layers.xml"
t_ok "layers: junit, without a breach" grep -q 'message="eer = 0.243 at layer 1, bound &gt;= 0.1, unreliable: 60 target trials (fewer than 100)"' "$T/layers.xml"

# the same end to end: sub few (30 target trials, EER 0.35) fails closed, sub many (EER 0.075)
# breaks the bound; the stdout line, results.json, junit.xml and the report's sentence
awk 'BEGIN { for (i = 0; i < 30; i++) print i / 30, "target"; for (i = 0; i < 300; i++) print i / 300 - 0.29963, "nontarget" }' > "$T/few.txt"
awk 'BEGIN { for (i = 0; i < 1000; i++) print i / 1000, "target"; for (i = 0; i < 2000; i++) print i / 2000 - 0.84963, "nontarget" }' > "$T/many.txt"
cat > "$T/s/mixed.yaml" <<YAML
name: mixed
report: [json, junit, html]
targets:
  - id: t
    kind: scores
    sets:
      - {name: few, scores: $T/few.txt}
      - {name: many, scores: $T/many.txt}
attacks:
  - {id: eval, kind: evaluate, target: t}
gates:
  - {attack: eval, metric: eer, min: 0.2}
YAML
t_run "mixed: run exits 3" 3 -- run "$T/s/mixed.yaml" -o "$T/mixed" --no-plots --quiet
M='eval eer = 0.075 < 0.2 (worst of 2 records: sub many); and sub few fails closed, unreliable: 30 target trials (fewer than 100)'
t_ok "mixed: the stderr line (--quiet)" grep -qxF "vpaudit: gate failed: $M" "$ERR"
t_ok "mixed: results.json message" grep -qF "\"message\": \"$M\"" "$T/mixed/results.json"
t_ok "mixed: results.json value is the worst" grep -q '"value": 0.075,' "$T/mixed/results.json"
t_ok "mixed: results.json records" test "$(grep -c '"record": "sub many",\|"unreliable_record": "sub few",' "$T/mixed/results.json")" = 2
t_ok "mixed: junit failure message" grep -q 'message="eer = 0.075 at sub many, bound &gt;= 0.2; sub few fails closed, unreliable: 30 target trials (fewer than 100)"' "$T/mixed/junit.xml"
t_ok "mixed: report sentence" grep -q 'This FAILS the gate eval eer &gt;= 20.00% (value 7.50% at sub many), and the value at sub few cannot be trusted (30 target trials (fewer than 100))\.' "$T/mixed/report.html"
t_ok "mixed: report table value" grep -q '<tr class="fail"><td>eval</td><td>eer</td><td class="num">7.50%</td>' "$T/mixed/report.html"

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
