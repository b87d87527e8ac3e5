#!/bin/bash
# tests/e2e/test_run.sh - `vpaudit run`: files and their contents, gates and
# exit codes, --no-plots, --seed, --threads, --quiet, relative paths, sweeps,
# errors that leave nothing behind.
. tests/e2e/lib.sh
not() { ! "$@"; }
quiet() { "$@" > /dev/null 2>&1; }
top=$PWD
D=$top/scenarios/data

# 1. the shipped example, from another directory (default OUTDIR out/NAME/)
mkdir -p "$T/cwd"
(cd "$T/cwd" && "$VPAUDIT" run "$top/scenarios/scores-example.yaml" > "$OUT" 2> "$ERR"); rc=$?
t_ok "scores-example exits 0" test "$rc" = 0
O=$T/cwd/out/scores-example
for f in results.json report.html report.pdf junit.xml; do
	t_ok "scores-example writes $f" test -s "$O/$f"
done
t_ok "no temporary files left" test -z "$(ls "$O" | grep -v -e '^results.json$' -e '^report.html$' -e '^report.pdf$' -e '^junit.xml$')"
for k in schema vpaudit_version scenario echo seed started wall_time stages targets attacks \
	records sweep figures gates tolerance status warnings; do
	t_ok "results.json has \"$k\"" grep -q "\"$k\":" "$O/results.json"
done
t_ok "results schema" grep -q '"schema": "vpaudit.results/1"' "$O/results.json"
t_ok "results status pass" grep -q '"status": "pass"' "$O/results.json"
t_ok "three records (one per set)" test "$(grep -c '"sub": "' "$O/results.json")" = 3
t_ok "records carry metrics" test "$(grep -c '"linkability": ' "$O/results.json")" -ge 3
t_ok "CI by identities where ids exist" grep -q '"method": "bootstrap-identities"' "$O/results.json"
t_ok "CI by trials without ids" grep -q '"method": "bootstrap-trials"' "$O/results.json"
t_ok "gate lines on stdout" test "$(grep -c '^PASS ' "$OUT")" = 3
t_ok "first gate line" grep -qx 'PASS eval.ignorant eer = 0.454582 >= 0.3' "$OUT"
# one <svg per figure: DET + 3 linkability figures
t_ok "4 figures in results" test "$(grep -c '"type": "\(det\|linkability\|lines\)"' "$O/results.json")" = 4
t_ok "one <svg per figure in report.html" test "$(grep -o '<svg' "$O/report.html" | wc -l)" = 4
t_ok "junit: 3 testcases, no failure" grep -q 'tests="3" failures="0"' "$O/junit.xml"
if command -v pdfinfo > /dev/null; then
	t_ok "report.pdf is a PDF" quiet pdfinfo "$O/report.pdf"
	pdftotext "$O/report.pdf" "$T/pdf.txt" 2> /dev/null
	t_ok "report.pdf has real text (scenario name)" grep -q "scores-example" "$T/pdf.txt"
	t_ok "report.pdf names the gates" grep -q "eval.ignorant" "$T/pdf.txt"
	t_ok "report.pdf labels the shipped score files synthetic" \
		sh -c "grep -q 'SYNTHETIC score files: ignorant, lazy_informed' '$T/pdf.txt' && grep -q 'are SYNTHETIC: drawn by a' '$T/pdf.txt'"
fi
# the shipped score files are synthetic (issue 20): their first line says so, and
# so do the target info and the report
t_ok "every shipped score file says SYNTHETIC in its first line" \
	sh -c "for f in '$top'/scenarios/data/*; do head -n 1 \"\$f\" | grep -q '^# SYNTHETIC ' || exit 1; done"
t_ok "results.json: three synthetic sets with their provenance" \
	test "$(grep -c '"provenance": "SYNTHETIC scores: drawn by a random generator' "$O/results.json")" = 3
t_ok "report.html labels them (data table and summary)" sh -c "grep -q 'SYNTHETIC score files: ignorant, lazy_informed, semi_informed' '$O/report.html' && grep -q 'of vpc (ignorant, lazy_informed, semi_informed) are SYNTHETIC: drawn by a generator' '$O/report.html'"
grep -v '^# SYNTHETIC' "$top/scenarios/data/ignorant.txt" > "$T/real.txt"
sed "s|scores: data/ignorant.txt|scores: $T/real.txt|" "$top/scenarios/scores-example.yaml" |
	sed "s|: data/|: $top/scenarios/data/|g" > "$T/real.yaml"
t_run "a score file without the note" 0 -- run "$T/real.yaml" -o "$T/real" --no-plots --quiet
t_ok "its set is not synthetic" sh -c "grep -A8 '\"name\": \"ignorant\"' '$T/real/results.json' | grep -q '\"synthetic\": false'"

# 2. -o, --seed, --quiet, --threads: same records whatever the thread count
t_run "run -o --seed --quiet" 0 -- run scenarios/scores-example.yaml -o "$T/o1" --seed 7 --quiet
t_ok "--quiet: nothing on stdout" test ! -s "$OUT"
t_ok "--seed recorded" grep -q '"seed": 7,' "$T/o1/results.json"
t_run "run --threads 2" 0 -- run scenarios/scores-example.yaml -o "$T/o2" --seed 7 --threads 2 --quiet
strip() { grep -v -E '"(started|total|load|targets|attacks|report)": ("[^"]*"|[-0-9.e+]+|null),?$' "$1"; }
strip "$T/o1/results.json" > "$T/r1"; strip "$T/o2/results.json" > "$T/r2"
t_ok "results identical with 1 and 2 threads" cmp -s "$T/r1" "$T/r2"
t_run "run --seed 8" 0 -- run scenarios/scores-example.yaml -o "$T/o3" --seed 8 --quiet
strip "$T/o3/results.json" | grep -v '"seed"' > "$T/r3"; grep -v '"seed"' "$T/r1" > "$T/r1s"
t_ok "another seed changes the bootstrap intervals" not cmp -s "$T/r1s" "$T/r3"

# 3. --no-plots: no SVG, gnuplot not needed
t_run "run --no-plots" 0 -- run scenarios/scores-example.yaml -o "$T/np" --no-plots --quiet
t_ok "--no-plots: report.html without <svg" test "$(grep -c '<svg' "$T/np/report.html")" = 0
t_ok "--no-plots: results.json still has the figures" grep -q '"type": "det"' "$T/np/results.json"

# 4. a failing gate: exit 3, FAIL line, JUnit <failure>, results status fail
mkdir -p "$T/s"
cat > "$T/s/fail.yaml" <<YAML
name: fail
report: [json, junit, html]
targets:
  - {id: t, kind: scores, sets: [{name: ign, scores: $D/ignorant.txt}, {name: semi, scores: $D/semi_informed.scores, key: $D/semi_informed.trials}]}
attacks:
  - {id: e, kind: evaluate, target: t}
gates:
  - {attack: e, metric: eer, min: 0.3}
  - {attack: e.ign, metric: eer, min: 0.3}
YAML
t_run "failing gate exits 3" 3 -- run "$T/s/fail.yaml" -o "$T/f" --no-plots
t_ok "FAIL line names the worst sub" grep -qx 'FAIL e eer = 0.1225 < 0.3 (worst of 2 records: sub semi)' "$OUT"
t_ok "PASS line for the other gate" grep -qx 'PASS e.ign eer = 0.454582 >= 0.3' "$OUT"
t_ok "failure on stderr" grep -q '^vpaudit: gate failed: e eer = 0.1225 < 0.3' "$ERR"
t_ok "junit has a <failure>" grep -q '<failure' "$T/f/junit.xml"
t_ok "junit counts 1 failure" grep -q 'tests="2" failures="1"' "$T/f/junit.xml"
t_ok "results status fail" grep -q '"status": "fail"' "$T/f/results.json"
t_ok "report formats honoured (no pdf)" test ! -e "$T/f/report.pdf"

# 5. relative paths resolve against the scenario folder; output: is relative to the cwd
mkdir -p "$T/proj/data" "$T/run"
cp "$D/ignorant.txt" "$T/proj/data/a.txt"
printf 'name: rel\noutput: myout\nreport: [json]\ntargets: [{id: t, kind: scores, sets: [{name: a, scores: data/a.txt}]}]\nattacks: [{id: e, kind: evaluate, target: t}]\n' > "$T/proj/rel.yaml"
(cd "$T/run" && "$VPAUDIT" run ../proj/rel.yaml --quiet > "$OUT" 2> "$ERR"); rc=$?
t_ok "relative import path from another cwd" test "$rc" = 0
t_ok "output: relative to the current directory" test -s "$T/run/myout/results.json"

# 6. errors: no report file written; junit.xml (asked for by default) carries the error
no_report() { test ! -e "$1/results.json" -a ! -e "$1/report.html" -a ! -e "$1/report.pdf"; }
printf '0.5 target\n0.1 nontarget\nabc target\n' > "$T/proj/data/broken.txt"
printf 'name: broken\ntargets: [{id: t, kind: scores, sets: [{name: a, scores: data/broken.txt}]}]\nattacks: [{id: e, kind: evaluate, target: t}]\n' > "$T/proj/broken.yaml"
t_run "unreadable score file: exit 1" 1 -- run "$T/proj/broken.yaml" -o "$T/nothing"
t_ok "score file error names file:line:col" grep -q "^vpaudit run: error: $T/proj/data/broken.txt:3:1: " "$ERR"
t_ok "no report file written on error" no_report "$T/nothing"
t_ok "junit.xml has the error" grep -q "<error type=\"error\" message=\"$T/proj/data/broken.txt:3:1: " "$T/nothing/junit.xml"
rm -rf "$T/nothing"
printf 'name: missing\ntargets: [{id: t, kind: scores, sets: [{name: a, scores: data/none.txt}]}]\nattacks: [{id: e, kind: evaluate, target: t}]\n' > "$T/proj/missing.yaml"
t_run "missing import file: exit 1" 1 -- run "$T/proj/missing.yaml" -o "$T/nothing"
t_ok "missing import file message" grep -qx "vpaudit run: error: $T/proj/missing.yaml:2:58: cannot open 'data/none.txt' (looked for '$T/proj/data/none.txt'): No such file or directory" "$ERR"
t_ok "no report file written on validation error" no_report "$T/nothing"
t_ok "junit.xml has the validation error" grep -q "<error type=\"error\" message=\"$T/proj/missing.yaml:2:58: cannot open" "$T/nothing/junit.xml"
rm -rf "$T/nothing"
t_run "invalid scenario: exit 1" 1 -- run tests/e2e/scenarios-bad/01-unknown-top-key.yaml -o "$T/nothing"
t_ok "no report file written" no_report "$T/nothing"
t_ok "one error test case" test "$(grep -c '<testcase' "$T/nothing/junit.xml")" = 1

# 7. a sweep over an attack key: one record per set and value, lines figures
cat > "$T/s/sweep.yaml" <<YAML
name: sweep
report: [json, html]
targets:
  - {id: t, kind: scores, sets: [{name: ign, scores: $D/ignorant.txt}, {name: lazy, scores: $D/lazy_informed.txt}]}
attacks:
  - {id: e, kind: evaluate, target: t}
  - {id: fixed, kind: evaluate, target: t}
gates:
  - {attack: e, metric: linkability, max: 0.95}
sweep: {param: attacks.e.omega, values: [0.1, 1, 10]}
YAML
t_run "sweep run" 0 -- run "$T/s/sweep.yaml" -o "$T/sw" --quiet
t_ok "sweep: 6 swept records" test "$(grep -c '"sweep": [0-9]' "$T/sw/results.json")" = 6
t_ok "sweep: fixed attack runs once (sweep null)" test "$(grep -c '"sweep": null' "$T/sw/results.json")" = 2
t_ok "sweep: a lines figure for linkability" grep -q '"id": "sweep-e-linkability"' "$T/sw/results.json"
t_ok "sweep: no figure for metrics omega does not move" not grep -q '"id": "sweep-e-eer"' "$T/sw/results.json"
nfig=$(grep -c '"type": "\(det\|linkability\|lines\)"' "$T/sw/results.json")
t_ok "sweep: one <svg per figure ($nfig)" test "$(grep -o '<svg' "$T/sw/report.html" | wc -l)" = "$nfig"
t_ok "sweep: the gate covers every value" grep -q '"message": "e linkability = 0.[0-9]* <= 0.95 (worst of 6 records: sub lazy, sweep 10)"' "$T/sw/results.json"

# 8. progress lines only when stderr is a terminal, never with --quiet
if command -v script > /dev/null; then
	script -qec "'$VPAUDIT' run scenarios/scores-example.yaml -o '$T/tty' --no-plots" /dev/null > "$T/tty.txt" 2>&1
	t_ok "progress on a terminal" grep -q 'attacks: 1/1' "$T/tty.txt"
	script -qec "'$VPAUDIT' run scenarios/scores-example.yaml -o '$T/tty' --no-plots --quiet" /dev/null > "$T/tty.txt" 2>&1
	t_ok "no progress with --quiet" not grep -q 'attacks: ' "$T/tty.txt"
fi
t_run "run with stderr to a file" 0 -- run scenarios/scores-example.yaml -o "$T/notty" --no-plots
t_ok "no progress when stderr is not a terminal" not grep -q 'attacks: ' "$ERR"

# 9. usage
t_run "no scenario" 2 -- run
t_run "--threads 0" 2 -- run scenarios/scores-example.yaml --threads 0
t_run "--seed x" 2 -- run scenarios/scores-example.yaml --seed x
t_run "unknown option" 2 -- run scenarios/scores-example.yaml --fast
t_run "--help" 0 -- run --help
t_done
