#!/bin/bash
# tests/e2e/test_ci.sh - the CI path (issue 14, issue 20 sections 1, 6, 7):
# baseline matching counts and unmatched records, --strict, per-metric
# tolerances, --tolerance, --metrics, --significant, `run --baseline` with
# one exit status and junit.xml cases, gate selection (subs, exclude, sweep),
# `on: ci_low`, fail-closed gates on unreliable values, [simulated] labels,
# the output folder (no stale report after a failure, junit.xml <error>,
# files of an earlier run removed, stale temporaries removed, checks before
# the computation), timing fields as the only difference between two runs.
. tests/e2e/lib.sh
D=$PWD/scenarios/data
not_grep() { ! grep -q "$@"; }
count() { grep -c -- "$1" "$2"; }

# A scenario on the shipped score files; $1 file, $2 extra YAML, $3 lazy set
scn() {
	cat > "$1" <<YAML
name: ci
seed: 1
report: [json, junit]
targets:
  - id: vpc
    kind: scores
    sets:
      - {name: ignorant, scores: $D/ignorant.txt}
      - {name: lazy_informed, scores: ${3:-$D/lazy_informed.txt}}
      - {name: baseline, scores: $D/semi_informed.scores, key: $D/semi_informed.trials}
attacks:
  - {id: eval, kind: evaluate, target: vpc, ci: 0.95}
$2
YAML
}
mkdir -p "$T/s"

# ---- baselines ---------------------------------------------------------------
scn "$T/s/a.yaml" "tolerance: 0.02"
t_run "run A" 0 -- run "$T/s/a.yaml" -o "$T/a" --quiet
A=$T/a/results.json
# B: lazy_informed now scores like the unprotected system (leakier)
scn "$T/s/b.yaml" "tolerance: 0.02" "$D/semi_informed.scores, key: $D/semi_informed.trials"
t_run "run B" 0 -- run "$T/s/b.yaml" -o "$T/b" --quiet
B=$T/b/results.json

# a baseline of another scenario: no record in common
printf '{"schema": "vpaudit.results/1", "records": [{"attack": "other", "sub": null, "layer": null, "sweep": null, "metrics": {"eer": 0.1}}]}\n' > "$T/other.json"
t_run "mismatched baseline: exit 1" 1 -- gate "$A" --baseline "$T/other.json"
t_ok "mismatched baseline: the counts" grep -qx "vpaudit gate: error: $T/other.json: matched 0 of 3 records: the baseline shares no record with the results; is it the same scenario?" "$ERR"
t_ok "mismatched baseline: nothing on stdout" test ! -s "$OUT"
t_run "mismatched baseline in run: exit 1" 1 -- run "$T/s/a.yaml" -o "$T/mis" --baseline "$T/other.json" --quiet
t_ok "run: same error" grep -q "^vpaudit run: error: $T/other.json: matched 0 of 3 records: the baseline shares no record" "$ERR"
t_ok "run: no results.json" test ! -e "$T/mis/results.json"

# a renamed sub: listed on both sides; the record only in the baseline fails (issue 25
# item 3: a renamed attacker dropped out of the comparison and CI stayed green), the new
# one only with --strict
sed 's/"sub": "lazy_informed"/"sub": "lazy"/' "$A" > "$T/renamed.json"
t_run "renamed sub: exit 3 without --strict" 3 -- gate "$A" --baseline "$T/renamed.json"
t_ok "renamed sub: counts" grep -qx 'BASELINE matched 2 of 3 records (3 in the baseline)' "$OUT"
t_ok "renamed sub: the new name listed" grep -qx 'UNMATCHED eval.lazy_informed: only in the results (new: not compared)' "$OUT"
t_ok "renamed sub: the old name fails" grep -qx 'UNMATCHED eval.lazy: only in the baseline (a failure: no longer compared)' "$OUT"
t_run "renamed sub: --strict exits 3" 3 -- gate "$A" --baseline "$T/renamed.json" --strict
t_ok "renamed sub: --strict says so" grep -qx 'UNMATCHED eval.lazy_informed: only in the results (a failure with --strict)' "$OUT"
# a sub added since the baseline: new, not a failure without --strict
jq '.records |= map(select(.sub != "baseline"))' "$A" > "$T/fewer.json"
t_run "added sub: exit 0 without --strict" 0 -- gate "$A" --baseline "$T/fewer.json"
t_ok "added sub: listed as new" grep -qx 'UNMATCHED eval.baseline: only in the results (new: not compared)' "$OUT"
t_run "added sub: --strict exits 3" 3 -- gate "$A" --baseline "$T/fewer.json" --strict

# leaky direction, per-metric tolerances, --tolerance, --metrics
t_run "B against A: regression" 3 -- gate "$B" --baseline "$A"
t_ok "REGRESSION line for eer" grep -q '^REGRESSION eval.lazy_informed eer moved from 0.271858 to 0.1225 (-0.149, lower is leakier; tolerance 0.02)$' "$OUT"
t_ok "STABLE line for the unchanged sub" grep -qx 'STABLE eval.ignorant: 8 metrics within tolerance' "$OUT"
t_ok "no FAIL baseline wording" not_grep '^FAIL baseline' "$OUT"
t_run "--tolerance 1: nothing moves that far" 0 -- gate "$B" --baseline "$A" --tolerance 1
t_run "--metrics top1: nothing compared moved" 0 -- gate "$B" --baseline "$A" --metrics eer_sweep --tolerance 0.2
t_ok "--metrics: one metric per record" grep -qx 'STABLE eval.lazy_informed: 1 metric within tolerance' "$OUT"
t_run "--metrics eer: only eer" 3 -- gate "$B" --baseline "$A" --metrics eer
t_ok "--metrics eer: no linkability line" not_grep 'linkability moved' "$OUT"
t_run "--metrics with an unknown name: usage" 2 -- gate "$B" --baseline "$A" --metrics eer,n_target
t_ok "--metrics error lists the names" grep -q "^vpaudit gate: error: --metrics: 'n_target' is not a compared metric (one of eer, eer_sweep, " "$ERR"
# per-metric tolerances in the scenario: large for every metric that moved but cllr
scn "$T/s/tols.yaml" "tolerance: 0.02
tolerances: {eer: 0.2, eer_sweep: 0.2, linkability: 0.4, cllr_min: 0.6, min_dcf: 1, zebra.dece: 1, zebra.log10_lr_worst: 5}"
t_run "tolerances: only cllr regresses" 3 -- gate "$B" --baseline "$A" --scenario "$T/s/tols.yaml"
# cllr is in bits: `tolerance: 0.02` (stated for fractions) gives it 0.04 bits (issue 25 item 3)
t_ok "tolerances: cllr flagged with the default of its unit" grep -q '^REGRESSION eval.lazy_informed cllr moved from .*tolerance 0.04 bits)$' "$OUT"
t_ok "tolerances: one regression only" test "$(count '^REGRESSION' "$OUT")" = 1
t_ok "tolerances: eer within its own tolerance" not_grep 'eer moved' "$OUT"
scn "$T/s/badtol.yaml" "tolerances: {eer: 0.2, n_target: 3}"
t_run "tolerances: unknown metric is a validation error" 1 -- validate "$T/s/badtol.yaml"
t_ok "tolerances: error names the key" grep -q "^vpaudit validate: error: $T/s/badtol.yaml:13:24: unknown key 'n_target' in 'tolerances'" "$ERR"

# --significant: 0.30 [0.25, 0.35] -> 0.27 [0.22, 0.32] moves 0.03 < sqrt(0.05^2 + 0.05^2)
# = 0.0707 (not significant); -> 0.22 [0.17, 0.27] moves 0.08 > 0.0707 (significant,
# although the two intervals overlap)
rec() { printf '{"schema": "vpaudit.results/1", "records": [{"attack": "e", "sub": "a", "layer": null, "sweep": null, "metrics": {"eer": %s}, "ci": {"eer": [%s, %s]}}]}\n' "$@"; }
rec 0.30 0.25 0.35 > "$T/old.json"; rec 0.27 0.22 0.32 > "$T/near.json"; rec 0.22 0.17 0.27 > "$T/far.json"
t_run "small move: a regression without --significant" 3 -- gate "$T/near.json" --baseline "$T/old.json" --tolerance 0.01
t_run "small move: not significant" 0 -- gate "$T/near.json" --baseline "$T/old.json" --tolerance 0.01 --significant
t_run "larger move: significant" 3 -- gate "$T/far.json" --baseline "$T/old.json" --tolerance 0.01 --significant
t_ok "significant: the line says so" grep -q '^REGRESSION e.a eer moved from 0.3 to 0.22 (-0.08, lower is leakier; tolerance 0.01; beyond the two intervals: significant)$' "$OUT"
t_run "significant: real intervals of B against A" 3 -- gate "$B" --baseline "$A" --significant --metrics eer
t_ok "significant: eer 0.27 -> 0.12 is" grep -q 'eer moved from 0.271858 to 0.1225 .*significant)$' "$OUT"
# issue 25 item 3: --significant says which comparisons the intervals decided and which were
# made on the tolerance alone (only eer, eer_sweep, cllr_min and linkability have intervals)
t_run "significant: every metric" 3 -- gate "$B" --baseline "$A" --significant
t_ok "significant: the intervals' metrics and the others named" grep -qx 'BASELINE --significant: 12 comparisons against the intervals of both files (eer, eer_sweep, cllr_min, linkability); 12 on the tolerance alone, without an interval in both files (cllr, min_dcf, zebra.dece, zebra.log10_lr_worst)' "$OUT"
t_ok "significant: a regression without intervals says so" grep -q '^REGRESSION eval.lazy_informed min_dcf moved .*; no interval in either file: on the tolerance alone)$' "$OUT"
printf '{"schema": "vpaudit.results/1", "records": [{"attack": "e", "sub": "a", "layer": null, "sweep": null, "metrics": {"eer": 0.30}}]}\n' > "$T/old-noci.json"
t_run "significant: an interval in one file only" 3 -- gate "$T/far.json" --baseline "$T/old-noci.json" --tolerance 0.01 --significant
t_ok "significant: names the file without it" grep -q '^REGRESSION e.a eer moved from 0.3 to 0.22 (-0.08, lower is leakier; tolerance 0.01; no interval in the baseline: on the tolerance alone)$' "$OUT"
t_ok "significant: counted as tolerance alone" grep -qx 'BASELINE --significant: 0 comparisons against the intervals of both files; 1 on the tolerance alone, without an interval in both files (eer)' "$OUT"

# gate --junit
t_run "gate --junit" 3 -- gate "$B" --baseline "$A" --junit "$T/g.xml"
t_ok "junit: one testcase per comparison" test "$(count 'classname="vpaudit.baseline"' "$T/g.xml")" = 24
t_ok "junit: regressions are failures" test "$(count '<failure type="regression"' "$T/g.xml")" = "$(count '^REGRESSION' "$OUT")"
t_ok "junit: cases counted (24 comparisons, 1 attack without a gate)" grep -q '<testsuite name="ci" tests="25" failures="' "$T/g.xml"
t_ok "junit: the attack without a gate is a skipped case with its values" grep -q '<testcase classname="vpaudit.attacks" name="eval: no gate" time="0">' "$T/g.xml"
t_run "gate --junit to a folder that does not exist" 1 -- gate "$B" --junit "$T/none/g.xml"
t_ok "gate --junit: one error line" test "$(wc -l < "$ERR")" = 1
# one error style for every subcommand: "vpaudit CMD: error: ...", one line
for c in "run --bogus" "gate --bogus" "validate --bogus" "report --bogus" "metrics --bogus" "exposure --bogus" "dp epsilon --bogus"; do
	t_run "$c: usage" 2 -- $c
	t_ok "$c: one line in the command's style" test "$(wc -l < "$ERR")" = 1 -a "$(cut -d: -f1 "$ERR")" = "vpaudit ${c% --bogus}"
done
t_run "gate option without its value" 2 -- gate "$B" --junit
t_ok "gate: needs a value, one line" test "$(cat "$ERR")" = "vpaudit gate: error: option '--junit' needs a value (see 'vpaudit gate --help')"
t_run "run --threads out of range" 2 -- run "$T/s/a.yaml" --threads 0
t_ok "run: range error in the command's style" test "$(cat "$ERR")" = "vpaudit run: error: --threads must be an integer in [1, 256], got '0'"

# run --baseline: one exit status, comparisons in junit.xml and results.json
t_run "run --baseline: regression exits 3" 3 -- run "$T/s/b.yaml" -o "$T/rb" --baseline "$A"
t_ok "run --baseline: REGRESSION on stdout" grep -q '^REGRESSION eval.lazy_informed eer moved' "$OUT"
t_ok "run --baseline: said on stderr" grep -q '^vpaudit: baseline check failed: ' "$ERR"
t_ok "run --baseline: junit cases" test "$(count 'classname="vpaudit.baseline"' "$T/rb/junit.xml")" = 24
t_ok "run --baseline: junit failures" grep -q '<failure type="regression" message="eval.lazy_informed eer moved' "$T/rb/junit.xml"
t_ok "run --baseline: results.json status fail" grep -q '"status": "fail"' "$T/rb/results.json"
t_ok "run --baseline: results.json keeps the comparison" grep -q '"matched": 3' "$T/rb/results.json"
t_run "run --baseline: stable exits 0" 0 -- run "$T/s/a.yaml" -o "$T/ra" --baseline "$A" --quiet
t_ok "run --baseline: passing cases" test "$(count 'classname="vpaudit.baseline" name="eval.[a-z_]* [a-z_.0-9]* against the baseline" time="0">$' "$T/ra/junit.xml")" = 24
t_ok "run --baseline: passing cases carry the measured values" test "$(count '<system-out>eval.[a-z_]* [a-z_.0-9]* moved from ' "$T/ra/junit.xml")" = 24
t_run "vpaudit report re-renders the comparison" 3 -- report "$T/rb/results.json" -o "$T/rr" --no-plots
t_ok "report: junit has the comparisons" test "$(count 'classname="vpaudit.baseline"' "$T/rr/junit.xml")" = 24
t_run "run --baseline --strict: a renamed sub fails" 3 -- run "$T/s/a.yaml" -o "$T/rs" --baseline "$T/renamed.json" --strict --quiet
t_ok "run --baseline --strict: junit failure for the unmatched record" grep -q '<failure type="unmatched" message="eval.lazy_informed: only in the results (a failure with --strict)"' "$T/rs/junit.xml"
t_run "run --baseline without --strict: the record only in the baseline fails" 3 -- run "$T/s/a.yaml" -o "$T/rs" --baseline "$T/renamed.json" --quiet
t_ok "run --baseline: junit failure for the record only in the baseline" grep -q '<failure type="unmatched" message="eval.lazy: only in the baseline (a failure: no longer compared)"' "$T/rs/junit.xml"
t_run "run --baseline without --strict: a new record is a skipped case" 0 -- run "$T/s/a.yaml" -o "$T/rs" --baseline "$T/fewer.json" --quiet
t_ok "run --baseline: skipped cases counted (the new record, the attack without a gate)" grep -q 'skipped="2"' "$T/rs/junit.xml"
t_run "run --baseline --significant" 3 -- run "$T/s/b.yaml" -o "$T/rsig" --baseline "$A" --significant --quiet
t_ok "run --significant: stored" grep -q '"significant": true' "$T/rsig/results.json"
# --strict with a baseline of another audit: an error before the computation (here the
# scores cannot even be read, and the error is the baseline's), and --seed counts
sed 's/"seed": 1,/"seed": 7,/' "$A" > "$T/seed7.json"
printf '0.5 target\nnan nontarget\n' > "$T/unreadable.txt"
scn "$T/s/unreadable.yaml" "" "$T/unreadable.txt"
t_run "run --baseline --strict: another seed is an error before the run" 1 -- run "$T/s/unreadable.yaml" -o "$T/rse" --baseline "$T/seed7.json" --strict --quiet
t_ok "run --strict: the baseline named, not the scores" grep -qx "vpaudit run: error: $T/seed7.json: the baseline is not of the same audit (an error with --strict): the baseline's seed is 7, the results' 1" "$ERR"
t_ok "run --strict: no results.json" test ! -e "$T/rse/results.json"
t_run "run --baseline --strict --seed 7: the same audit" 0 -- run "$T/s/a.yaml" -o "$T/rse7" --baseline "$T/seed7.json" --strict --seed 7 --quiet
t_run "run --strict without --baseline" 2 -- run "$T/s/a.yaml" --strict
t_run "run --baseline: missing baseline is an error before the run" 1 -- run "$T/s/a.yaml" -o "$T/rm" --baseline "$T/none.json" --quiet
t_ok "run --baseline: missing file named" grep -q "^vpaudit run: error: $T/none.json: " "$ERR"

# ---- timing fields: the only difference between two runs with the same seed
t_run "run A again" 0 -- run "$T/s/a.yaml" -o "$T/a2" --quiet
t_ok "same seed: only timing fields differ" bash -c "diff '$A' '$T/a2/results.json' | grep '^[<>]' | grep -Ev '^[<>] +\"(started|total|load|targets|attacks|report)\": ' | grep -q . && exit 1 || exit 0"
t_ok "same seed: the files do differ in timings" bash -c "! cmp -s '$A' '$T/a2/results.json' || grep -q '\"started\"' '$A'"
t_run "same seed: gate --baseline --strict --tolerance 0 passes" 0 -- gate "$T/a2/results.json" --baseline "$A" --strict --tolerance 0
t_ok "same seed: all matched" grep -qx 'BASELINE matched 3 of 3 records (3 in the baseline)' "$OUT"
t_ok "same seed: every record stable" test "$(count '^STABLE' "$OUT")" = 3

# ---- gate selection -------------------------------------------------------------
scn "$T/s/all.yaml" "gates:
  - {attack: eval, metric: eer, min: 0.2}"
t_run "the baseline attacker fails the gate" 3 -- run "$T/s/all.yaml" -o "$T/g1" --quiet
scn "$T/s/ex.yaml" "gates:
  - {attack: eval, metric: eer, min: 0.2, exclude: [baseline]}
  - {attack: eval, metric: linkability, max: 0.5, subs: [ignorant, lazy_informed]}"
t_run "exclude: [baseline] passes" 0 -- run "$T/s/ex.yaml" -o "$T/g2"
t_ok "exclude: worst of the two others" grep -qx 'PASS eval eer = 0.271858 >= 0.2 (worst of 2 records: sub lazy_informed)' "$OUT"
t_ok "subs: worst of the two named" grep -qx 'PASS eval linkability = 0.35854 <= 0.5 (worst of 2 records: sub lazy_informed)' "$OUT"
t_ok "gate selection stored" grep -q '"exclude": \[' "$T/g2/results.json"
t_run "gate on the stored selection" 0 -- gate "$T/g2/results.json"
scn "$T/s/empty.yaml" "gates:
  - {attack: eval, metric: eer, min: 0.2, subs: [baseline], exclude: [baseline]}"
t_run "empty selection: validation error" 1 -- validate "$T/s/empty.yaml"
t_ok "empty selection: message" grep -qx "vpaudit validate: error: $T/s/empty.yaml:14:70: gate on 'eval' selects no record: its subs and exclude leave no sub" "$ERR"
scn "$T/s/empty2.yaml" "gates:
  - {attack: eval, metric: eer, min: 0.2, subs: []}"
t_run "empty subs: validation error" 1 -- validate "$T/s/empty2.yaml"
t_ok "empty subs: message" grep -q "'subs' must not be empty" "$ERR"
scn "$T/s/nosub.yaml" "gates:
  - {attack: eval, metric: eer, min: 0.2, exclude: [basline]}"
t_run "exclude of an unknown sub" 1 -- validate "$T/s/nosub.yaml"
t_ok "unknown sub: suggestion" grep -q "attack 'eval' has no sub 'basline' (did you mean 'baseline'" "$ERR"
scn "$T/s/both.yaml" "gates:
  - {attack: eval.ignorant, metric: eer, min: 0.2, exclude: [baseline]}"
t_run "ID.SUB with exclude" 1 -- validate "$T/s/both.yaml"
# the same selection on a results file: an empty one is an error there too
printf '[{"attack": "eval", "metric": "eer", "min": 0.1, "exclude": ["ignorant", "lazy_informed", "baseline"]}]' > /dev/null
sed 's/"gates": \[\]/"gates": [{"attack": "eval", "metric": "eer", "min": 0.1, "exclude": ["ignorant", "lazy_informed", "baseline"]}]/' "$A" > "$T/exall.json"
t_run "empty selection in a results file" 1 -- gate "$T/exall.json"
t_ok "empty selection in a results file: message" grep -q "gate on 'eval' selects no record: exclude \[ignorant, lazy_informed, baseline\] leaves none of its subs" "$ERR"

# on: ci_low / ci_high
scn "$T/s/ci.yaml" "gates:
  - {attack: eval.lazy_informed, metric: eer, min: 0.24, on: ci_low}
  - {attack: eval.lazy_informed, metric: linkability, max: 0.4, on: ci_high}"
t_run "on: ci_low / ci_high" 3 -- run "$T/s/ci.yaml" -o "$T/ci" --quiet
t_run "on: gate lines" 3 -- gate "$T/ci/results.json"
t_ok "on: ci_low uses the interval's lower end" grep -qx 'FAIL eval.lazy_informed eer ci_low = 0.231173 < 0.24' "$OUT"
t_ok "on: ci_high uses the upper end" grep -qx 'FAIL eval.lazy_informed linkability ci_high = 0.443178 > 0.4' "$OUT"
t_ok "on: junit names the limit" grep -q 'name="eval.lazy_informed eer ci_low &gt;= 0.24"' "$T/ci/junit.xml"
sed 's/, ci: 0.95//' "$T/s/ci.yaml" > "$T/s/noci.yaml"
t_run "on: ci_low without ci" 1 -- validate "$T/s/noci.yaml"
t_ok "on: message says to set ci" grep -q "'on: ci_low' needs a confidence interval: set 'ci' (e.g. 'ci: 0.95') in attack 'eval'" "$ERR"
scn "$T/s/ci2.yaml" "gates:
  - {attack: eval, metric: cllr, max: 1, on: ci_high}"
t_run "on: a metric without interval" 1 -- validate "$T/s/ci2.yaml"
t_ok "on: names the interval metrics" grep -q "'on: ci_high' needs a confidence interval, but 'cllr' has none (intervals: eer, cllr_min, linkability)" "$ERR"

# sweep selection
cat > "$T/s/sw.yaml" <<YAML
name: sw
report: [json]
targets:
  - id: vpc
    kind: scores
    sets: [{name: a, scores: $D/lazy_informed.txt}]
attacks:
  - {id: eval, kind: evaluate, target: vpc}
sweep: {param: attacks.eval.omega, values: [0.5, 2]}
gates:
  - {attack: eval, metric: linkability, max: 0.5, sweep: 0.5}
YAML
t_run "sweep: one value selected" 0 -- run "$T/s/sw.yaml" -o "$T/sw"
t_ok "sweep: message names the value" grep -q '^PASS eval linkability = ' "$OUT"
sed 's/sweep: 0.5}/sweep: 3}/' "$T/s/sw.yaml" > "$T/s/sw2.yaml"
t_run "sweep: a value not swept" 1 -- validate "$T/s/sw2.yaml"
t_ok "sweep: message" grep -q "'sweep' is '3', which is not one of the sweep's values" "$ERR"

# ---- fail closed on unreliable values (shared contract; fixture records) --------
cat > "$T/u.json" <<'JSON'
{"schema": "vpaudit.results/1",
 "scenario": {"name": "u"},
 "targets": [{"id": "t", "simulated": true}],
 "attacks": [{"id": "eval", "target": "t"}],
 "records": [
  {"attack": "eval", "sub": "twelve", "layer": null, "sweep": null,
   "metrics": {"eer": 0, "linkability": 0.5, "linkability_hist": 1, "linkability_reliable": false,
               "zebra": {"dece": 0.9}},
   "unreliable": {"linkability": "12 mated scores (fewer than 100)", "zebra": "12 mated scores (fewer than 100)"}},
  {"attack": "eval", "sub": "thousand", "layer": null, "sweep": null,
   "metrics": {"eer": 0, "linkability": 0.99, "linkability_hist": 1, "linkability_reliable": true,
               "zebra": {"dece": 0.9}},
   "unreliable": {}}],
 "gates": [
  {"attack": "eval.twelve", "metric": "linkability", "max": 0.5},
  {"attack": "eval.twelve", "metric": "zebra.dece", "max": 1},
  {"attack": "eval.twelve", "metric": "eer", "min": 0},
  {"attack": "eval.twelve", "metric": "linkability", "max": 0.5, "allow_unreliable": true}]}
JSON
t_run "unreliable: 12 perfectly separated targets, gate max 0.5 exits 3" 3 -- gate "$T/u.json" --junit "$T/u.xml"
t_ok "unreliable: the reason" grep -qx 'FAIL \[simulated\] eval.twelve linkability = 0.5 fails closed, unreliable: 12 mated scores (fewer than 100)' "$OUT"
t_ok "unreliable: a prefix covers zebra.dece" grep -qx 'FAIL \[simulated\] eval.twelve zebra.dece = 0.9 fails closed, unreliable: 12 mated scores (fewer than 100)' "$OUT"
t_ok "unreliable: another metric of the record holds" grep -qx 'PASS \[simulated\] eval.twelve eer = 0 >= 0' "$OUT"
t_ok "allow_unreliable: the bound decides" grep -qx 'PASS \[simulated\] eval.twelve linkability = 0.5 <= 0.5' "$OUT"
t_ok "unreliable: junit failure message" grep -q 'message="linkability = 0.5, bound &lt;= 0.5, unreliable: 12 mated scores (fewer than 100)"' "$T/u.xml"
t_ok "simulated: junit property" grep -q '<property name="simulated" value="true"/>' "$T/u.xml"
t_ok "simulated: junit case names" test "$(count 'name="\[simulated\] eval.twelve' "$T/u.xml")" = 4
sed 's/"eval.twelve", "metric": "linkability", "max": 0.5}/"eval", "metric": "linkability", "max": 1}/' "$T/u.json" > "$T/u2.json"
t_run "unreliable: worst case over subs fails closed" 3 -- gate "$T/u2.json"
t_ok "unreliable: names the record" grep -qx 'FAIL \[simulated\] eval linkability = 0.5 fails closed, unreliable: 12 mated scores (fewer than 100) (first of 2 records: sub twelve)' "$OUT"
sed 's/"eer": 0, "linkability": 0.5,/"eer": 0, "linkability": null,/' "$T/u.json" > "$T/u3.json"
t_run "undefined value fails even with allow_unreliable" 3 -- gate "$T/u3.json"
t_ok "undefined: reason" test "$(count 'linkability is undefined and fails closed, unreliable: undefined value' "$OUT")" = 2
t_ok "not simulated: no label" bash -c "'$VPAUDIT' gate '$A' --baseline '$A' | grep -q '\[simulated\]' && exit 1 || exit 0"
t_ok "not simulated: junit property false" grep -q '<property name="simulated" value="false"/>' "$T/a/junit.xml"

# The same case end to end: `vpaudit run` on 12 and 1,000 perfectly separated
# targets (records filled by the metrics, not a fixture).
awk 'BEGIN { for (i = 0; i < 12; i++) print 2 + i / 100, "target"; for (i = 0; i < 200; i++) print -2 - i / 100, "nontarget" }' > "$T/p12.txt"
awk 'BEGIN { for (i = 0; i < 1000; i++) print 2 + i / 1000, "target"; for (i = 0; i < 2000; i++) print -2 - i / 1000, "nontarget" }' > "$T/p1000.txt"
cat > "$T/s/perfect.yaml" <<YAML
name: perfect
seed: 1
report: [json, junit]
targets:
  - id: t
    kind: scores
    sets:
      - {name: twelve, scores: $T/p12.txt}
      - {name: thousand, scores: $T/p1000.txt}
attacks:
  - {id: eval, kind: evaluate, target: t}
gates:
  - {attack: eval.twelve, metric: linkability, max: 0.5}
  - {attack: eval.thousand, metric: linkability_hist, max: 1}
YAML
t_run "run: 12 perfectly separated targets, gate max 0.5 exits 3" 3 -- run "$T/s/perfect.yaml" -o "$T/perfect" --no-plots
t_ok "run: the gate fails closed naming the reason" grep -q '^FAIL eval.twelve linkability = 0 fails closed, unreliable: 12 mated scores' "$OUT"
t_ok "run: the 1,000-target gate holds" grep -qx 'PASS eval.thousand linkability_hist = 1 <= 1' "$OUT"
t_ok "run: linkability_hist = 1 on 12 targets" grep -q '"linkability_hist": 1,' "$T/perfect/results.json"
t_ok "run: 12 targets not reliable, 1,000 reliable" test "$(grep -c '"linkability_reliable": false' "$T/perfect/results.json"),$(grep -c '"linkability_reliable": true' "$T/perfect/results.json")" = "1,1"

# ---- the output folder ----------------------------------------------------------
scn "$T/s/full.yaml" ""
t_run "a complete run" 0 -- run "$T/s/full.yaml" -o "$T/o" --quiet --no-plots
touch "$T/o/report.pdf" "$T/o/report.html"
t_ok "old files present" test -e "$T/o/report.pdf"
t_run "report: [json, junit] run" 0 -- run "$T/s/full.yaml" -o "$T/o" --quiet
t_ok "an old report.pdf it did not write is removed" test ! -e "$T/o/report.pdf"
t_ok "an old report.html it did not write is removed" test ! -e "$T/o/report.html"
sed 's/report: \[json, junit\]/report: [json]/' "$T/s/full.yaml" > "$T/s/json.yaml"
t_run "report: [json]" 0 -- run "$T/s/json.yaml" -o "$T/o" --quiet
t_ok "an old junit.xml it did not write is removed" test ! -e "$T/o/junit.xml"
# a failed run after a good one: no stale report, junit.xml with the error
t_run "good run" 0 -- run "$T/s/full.yaml" -o "$T/f" --quiet
printf '0.5 target\nnan nontarget\n' > "$T/broken.txt"
scn "$T/s/broken.yaml" "" "$T/broken.txt"
t_run "failed run into the same folder" 1 -- run "$T/s/broken.yaml" -o "$T/f" --quiet
t_ok "failed run: no results.json" test ! -e "$T/f/results.json"
t_ok "failed run: junit.xml with one error" test "$(count '<error ' "$T/f/junit.xml")" = 1
t_ok "failed run: the error message" grep -q "<error type=\"error\" message=\"$T/broken.txt:2:1: " "$T/f/junit.xml"
t_ok "failed run: error counted" grep -q '<testsuite name="ci" tests="1" failures="0" errors="1"' "$T/f/junit.xml"
sed 's/report: \[json, junit\]/report: [json]/' "$T/s/broken.yaml" > "$T/s/broken-json.yaml"
t_run "good run again" 0 -- run "$T/s/full.yaml" -o "$T/f2" --quiet
t_run "failed run without junit" 1 -- run "$T/s/broken-json.yaml" -o "$T/f2" --quiet
t_ok "failed run without junit: folder has no report file" test -z "$(ls "$T/f2")"
# stale temporaries of vpaudit's own naming are removed, others are kept
mkdir -p "$T/st"
touch "$T/st/results.json.tmp.999999999" "$T/st/junit.xml.tmp.999999998" \
	"$T/st/notes.tmp.999999999" "$T/st/results.json.tmp.12ab" "$T/st/results.json.tmp.$$"
t_run "stale temporaries" 0 -- run "$T/s/full.yaml" -o "$T/st"
t_ok "stale: warned" grep -qx "vpaudit: warning: $T/st: removed 2 temporary files left by a killed run" "$ERR"
t_ok "stale: ours removed" test ! -e "$T/st/results.json.tmp.999999999" -a ! -e "$T/st/junit.xml.tmp.999999998"
t_ok "stale: other names kept" test -e "$T/st/notes.tmp.999999999" -a -e "$T/st/results.json.tmp.12ab"
t_ok "stale: a live process's kept" test -e "$T/st/results.json.tmp.$$"
# checked before the computation: the folder, gnuplot
touch "$T/plainfile"
t_run "output folder under a file" 1 -- run "$T/s/full.yaml" -o "$T/plainfile/out" --quiet
t_ok "output folder: one error line" test "$(wc -l < "$ERR")" = 1
mkdir -p "$T/bin"; ln -sf "$(command -v env)" "$T/bin/env"
sed 's/report: \[json, junit\]/report: [json, html]/' "$T/s/full.yaml" > "$T/s/html.yaml"
t_ok "no gnuplot: error before the run" bash -c "PATH='$T/bin' '$VPAUDIT' run '$T/s/html.yaml' -o '$T/ng' --quiet 2> '$T/ng.err'; test \$? = 1"
t_ok "no gnuplot: message" grep -qx 'vpaudit run: error: gnuplot not found: install gnuplot-nox or run with --no-plots' "$T/ng.err"
t_ok "no gnuplot: no results" test ! -e "$T/ng/results.json"
t_ok "no gnuplot with --no-plots: fine" bash -c "PATH='$T/bin' '$VPAUDIT' run '$T/s/html.yaml' -o '$T/ng2' --quiet --no-plots"
# names . and .. cannot make out/NAME leave out/
sed 's/^name: ci$/name: ../' "$T/s/full.yaml" > "$T/s/dotdot.yaml"
t_run "name: .." 1 -- validate "$T/s/dotdot.yaml"
t_ok "name: .. message" grep -qx "vpaudit validate: error: $T/s/dotdot.yaml:1:7: 'name' must not be '..' (the default output folder is out/NAME)" "$ERR"
sed 's/^name: ci$/name: ./' "$T/s/full.yaml" > "$T/s/dot.yaml"
t_run "name: ." 1 -- validate "$T/s/dot.yaml"
t_done
