#!/bin/bash
# tests/e2e/test_sweep.sh - a categorical sweep (a choice key swept over names):
# records carry the name, figures label the x axis with the names, gates take
# the worst value and name it.
. tests/e2e/lib.sh
S=tests/e2e/data/sweep/proximity.yaml
t_run "validate categorical sweep" 0 -- validate "$S"
t_ok "validate is silent" test ! -s "$OUT" -a ! -s "$ERR"
t_run "run categorical sweep (its gate fails: exit 3)" 3 -- run "$S" -o "$T/out" --quiet
R=$T/out/results.json
t_ok "results.json written" test -s "$R"
for v in far near random; do
	t_ok "a record carries sweep \"$v\"" grep -q "\"sweep\": \"$v\"" "$R"
done
t_ok "sweep values are names" sh -c "grep -A5 '\"param\": \"targets.t.anonymiser.proximity\"' '$R' | grep -q '\"near\"'"
t_ok "sweep figures label the axis" grep -q '"xticlabels"' "$R"
t_ok "the EER sweep figure exists" grep -q '"id": "sweep-link-eer"' "$R"
t_ok "gate names the worst value" grep -q "worst of 3 records: sweep" "$ERR"
t_ok "junit has the failure" grep -q "<failure" "$T/out/junit.xml"
t_ok "html has the sweep figure" grep -q "link: eer against targets.t.anonymiser.proximity" "$T/out/report.html"
t_run "report re-renders a categorical sweep" 3 -- report "$R" -o "$T/re"
t_ok "re-rendered html" test -s "$T/re/report.html"
t_done
