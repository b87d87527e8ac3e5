#!/bin/bash
# tests/e2e/test_ci_recipe.sh - the "Use in CI" recipes of README.md, run
# without the CI service: the `run:` steps of the GitHub Actions job and the
# `script:` lines of the GitLab CI job are extracted from README.md (so the
# recipe cannot rot) and run in a scratch workspace, four times: no baseline
# yet, the kept baseline (stable), a baseline that makes the new results
# a regression (exit 3, the baseline is not replaced, junit.xml says why), and
# a baseline with a record the results lack (a renamed attacker: exit 3).
# The install-and-build step is the README's own first command (`sh .ci/deps
# && make -j2`), which .ci/run exercises on a clean clone; here the binary
# under test stands in for its result.
. tests/e2e/lib.sh
top=$PWD

# the yaml block after a "### TITLE" heading of README.md
block() { awk -v t="### $1" '$0 == t {h=1; next} h && /^```yaml/ {b=1; next} b && /^```/ {exit} b' README.md; }
block "GitHub Actions" > "$T/gh.yaml"
block "GitLab CI" > "$T/gl.yaml"
sed -n 's/^ *run: //p' "$T/gh.yaml" > "$T/gh.steps"
awk '/^  script:/ {s=1; next} s && /^    - / {sub(/^    - /, ""); print; next} s {exit}' "$T/gl.yaml" > "$T/gl.steps"
t_ok "GitHub job: three shell steps found" test "$(wc -l < "$T/gh.steps")" = 3
t_ok "GitLab job: three script lines found" test "$(wc -l < "$T/gl.steps")" = 3
t_ok "both jobs run the same shell steps" cmp -s "$T/gh.steps" "$T/gl.steps"
t_ok "first step installs and builds as the README says" test "$(head -n 1 "$T/gh.steps")" = "sh .ci/deps && make -j2"
t_ok "README's test command is the one .ci/run runs" grep -q "^sh .ci/deps && make -j2 test " README.md
t_ok ".ci/run runs it" grep -q '"sh .ci/deps && make -j2 test"' .ci/run
t_ok "the audit runs portable (issue 25: the same numbers on every runner)" test "$(sed -n 2p "$T/gh.steps" | grep -o 'vpaudit run --portable' | wc -l)" = 2
t_ok "GitHub job publishes junit.xml always" bash -c "grep -A 1 'name: publish junit.xml' '$T/gh.yaml' | grep -q 'if: always()'"
t_ok "GitHub job keeps the baseline only on main" test "$(grep -c "if: github.ref == 'refs/heads/main'" "$T/gh.yaml")" = 2
t_ok "GitLab job publishes junit.xml always" bash -c "grep -A 1 'artifacts:' '$T/gl.yaml' | grep -q 'when: always' && grep -q 'junit: out/audit/junit.xml' '$T/gl.yaml'"

# run steps 2.. of a job in workspace $1 with `set -e` (a CI job stops at the first failure)
steps() { # $1 workspace, $2 steps file; exit status of the job
	(cd "$1" && tail -n +2 "$2" | PATH="$1/bin:$PATH" bash -e > "$1/log" 2>&1)
}
for job in gh gl; do
	W=$T/ws-$job
	mkdir -p "$W/bin"
	ln -s "$top/scenarios" "$W/scenarios"
	ln -s "$VPAUDIT" "$W/vpaudit"
	steps "$W" "$T/$job.steps"; rc=$?
	t_ok "$job: first run (no baseline) passes" test "$rc" = 0
	t_ok "$job: junit.xml published" test -s "$W/out/audit/junit.xml"
	t_ok "$job: results.json kept as the baseline" cmp -s "$W/out/audit/results.json" "$W/baseline/results.json"
	t_ok "$job: the baseline says it was computed portably" grep -q '"portable": true' "$W/baseline/results.json"
	steps "$W" "$T/$job.steps"; rc=$?
	t_ok "$job: second run against the baseline passes" test "$rc" = 0
	t_ok "$job: every record matched" grep -qx 'BASELINE matched 3 of 3 records (3 in the baseline)' "$W/log"
	t_ok "$job: comparisons in junit.xml" grep -q 'classname="vpaudit.baseline"' "$W/out/audit/junit.xml"
	# a baseline in which the ignorant attacker did worse: the new results regress
	sed -E 's/("eer": )0\.4545[0-9]*/\10.6/' "$W/baseline/results.json" > "$W/tampered"
	cp "$W/tampered" "$W/baseline/results.json"
	t_ok "$job: the tampered baseline differs" bash -c "! cmp -s '$W/tampered' '$W/out/audit/results.json'"
	steps "$W" "$T/$job.steps"; rc=$?
	t_ok "$job: regression fails the job with exit 3" bash -c "test $rc = 3 && grep -q '^REGRESSION eval.ignorant eer moved from 0.6 to 0.454582' '$W/log'"
	t_ok "$job: junit.xml has the regression" grep -q '<failure type="regression" message="eval.ignorant eer moved from 0.6' "$W/out/audit/junit.xml"
	t_ok "$job: the failed run did not become the baseline" cmp -s "$W/tampered" "$W/baseline/results.json"
	# an attacker renamed since the baseline: its record is no longer compared, which fails the
	# job without --strict in the recipe (issue 25 item 3: it stayed green)
	sed 's/"sub": "ignorant"/"sub": "ignorant_v0"/; s/"name": "ignorant"/"name": "ignorant_v0"/' "$W/out/audit/results.json" > "$W/renamed"
	cp "$W/renamed" "$W/baseline/results.json"
	steps "$W" "$T/$job.steps"; rc=$?
	t_ok "$job: a record only in the baseline fails the job with exit 3" bash -c "test $rc = 3 && grep -qx 'UNMATCHED eval.ignorant_v0: only in the baseline (a failure: no longer compared)' '$W/log'"
	t_ok "$job: junit.xml has the unmatched record" grep -q '<failure type="unmatched" message="eval.ignorant_v0: only in the baseline' "$W/out/audit/junit.xml"
done
t_done
