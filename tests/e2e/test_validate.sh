#!/bin/bash
# tests/e2e/test_validate.sh - `vpaudit validate`: the shipped scenarios are
# valid (silent, exit 0); every broken scenario in scenarios-bad/ fails with
# exit 1 and exactly its line of scenarios-bad/expected as the first stderr
# line, followed by the offending line; usage errors exit 2.
. tests/e2e/lib.sh
top=$PWD

for f in scenarios/*.yaml; do
	t_run "valid $f" 0 -- validate "$f"
	t_ok "valid $f prints nothing" test ! -s "$OUT" -a ! -s "$ERR"
done

n=0
while IFS= read -r want; do
	f=${want%%:*}
	n=$((n + 1))
	(cd tests/e2e/scenarios-bad && ${VPA_WRAP:-} "$VPAUDIT" validate "$f" > "$OUT" 2> "$ERR"); rc=$?
	got=$(head -n 1 "$ERR")
	if [ "$rc" = 1 ] && [ "$got" = "vpaudit validate: error: $want" ] && [ ! -s "$OUT" ]; then
		echo "ok - bad $f"; t_pass=$((t_pass + 1))
	else
		echo "not ok - bad $f (exit $rc)"; echo "#   got:  $got"; echo "#   want: vpaudit validate: error: $want"
		t_fail=$((t_fail + 1))
	fi
	# the offending line follows (numbered like a compiler), unless the file has none
	line=$(echo "$want" | cut -d: -f2)
	second=$(sed -n 2p "$ERR")
	if [ "$line" -le "$(wc -l < "tests/e2e/scenarios-bad/$f")" ]; then
		t_ok "bad $f: offending line $line shown" \
			test "$second" = "$(printf '%5d | %s' "$line" "$(sed -n "${line}p" "tests/e2e/scenarios-bad/$f")")"
	else
		t_ok "bad $f: no source line past the end of the file" test -z "$second"
	fi
done < tests/e2e/scenarios-bad/expected
t_ok "at least 25 broken scenarios ($n)" test "$n" -ge 25
t_ok "every broken scenario has an expected line" \
	test "$(ls tests/e2e/scenarios-bad/*.yaml | wc -l)" = "$n"

# paths resolve against the scenario's folder, whatever the current directory
mkdir -p "$T/elsewhere"
(cd "$T/elsewhere" && "$VPAUDIT" validate "$top/scenarios/scores-example.yaml" > "$OUT" 2> "$ERR"); rc=$?
t_ok "validate from another directory" test "$rc" = 0 -a ! -s "$ERR"

t_run "missing scenario file" 1 -- validate "$T/nope.yaml"
t_ok "missing scenario file message" grep -q "^vpaudit validate: error: $T/nope.yaml: cannot open: No such file or directory$" "$ERR"
t_run "no argument" 2 -- validate
t_run "two arguments" 2 -- validate scenarios/quickstart.yaml scenarios/quickstart.yaml
t_run "unknown option" 2 -- validate --frobnicate scenarios/quickstart.yaml
t_run "--help" 0 -- validate --help
t_ok "--help prints usage" grep -q "^usage: vpaudit validate SCENARIO.yaml" "$OUT"
# writes outside the output folder (issue 20: a scenario is code): refused
# above, allowed with --allow-writes-outside; -o moves the output folder
B=tests/e2e/scenarios-bad
t_run "--allow-writes-outside accepts output: /tmp/elsewhere" 0 -- validate --allow-writes-outside $B/51-output-outside.yaml
t_run "--allow-writes-outside accepts dump_* outside" 0 -- validate $B/53-dump-outside.yaml --allow-writes-outside
sed 's|dump_activations: out/bad/../acts|dump_activations: out/bad/acts|' $B/53-dump-outside.yaml > "$T/dump-in.yaml"
sed -i 's|\.\./\.\./\.\./scenarios|'"$top"'/scenarios|' "$T/dump-in.yaml"
t_run "dump_* inside out/NAME is fine" 0 -- validate "$T/dump-in.yaml"
mkdir -p "$T/w" && cp "$top/tests/e2e/data/am/sim.yaml" "$T/w/"
(cd "$T/w" && "$VPAUDIT" run sim.yaml -o here --no-plots --quiet > "$OUT" 2> "$ERR"); rc=$?
t_ok "run: dump_models outside -o refused before any work" test "$rc" = 1 -a ! -e "$T/w/here" -a ! -e "$T/w/am-models"
t_ok "run: the message names the key and the folder" grep -q "^vpaudit run: error: sim.yaml:12:18: 'dump_models: am-models' is outside the output folder 'here': a scenario writes only there unless you run it with --allow-writes-outside$" "$ERR"
(cd "$T/w" && "$VPAUDIT" run sim.yaml -o . --no-plots --quiet > "$OUT" 2> "$ERR"); rc=$?
t_ok "run: -o . holds the dumps" test "$rc" = 0 -a -d "$T/w/am-models" -a -s "$T/w/results.json"
t_run "run --help names --allow-writes-outside" 0 -- run --help
t_ok "run --help text" grep -q -- "--allow-writes-outside  let the scenario" "$OUT"
# a UTF-8 byte order mark before the first key is accepted (issue 20: it was
# "did not find expected <document start>" on the wrong line); UTF-16 is not
mkdir -p "$T/bom" && cp -r scenarios/data "$T/bom/data"
{ printf '\357\273\277'; cat scenarios/scores-example.yaml; } > "$T/bom/s.yaml"
t_run "UTF-8 BOM before the first key" 0 -- validate "$T/bom/s.yaml"
t_ok "BOM: silent" test ! -s "$OUT" -a ! -s "$ERR"
{ printf '\357\273\277'; printf 'nme: x\n'; } > "$T/bom/typo.yaml"
t_run "BOM then a typo" 1 -- validate "$T/bom/typo.yaml"
t_ok "BOM: errors keep line 1, column 1" grep -q "^vpaudit validate: error: $T/bom/typo.yaml:1:1: unknown key 'nme' in the scenario (did you mean 'name'?)$" "$ERR"
printf '\377\376n\000a\000m\000e\000:\000 \000x\000\n\000' > "$T/bom/u16.yaml"
t_run "UTF-16 refused" 1 -- validate "$T/bom/u16.yaml"
t_ok "UTF-16: says UTF-8" grep -q "^vpaudit validate: error: $T/bom/u16.yaml:1:1: invalid leading UTF-8 octet (the file must be UTF-8 text)$" "$ERR"
# the VoicePrivacy example of scenarios/README.md ("Your own VoicePrivacy data") is a
# valid scenario on the challenge's directory layout (stand-ins: the golden embed
# data's six recordings in each folder, since validate opens every audio header)
V=$T/vpc; mkdir -p "$V/data" "$V/asr"
for d in train-clean-360 train-clean-360_anon libri_dev_enrolls libri_dev_enrolls_anon \
	libri_dev_trials_f libri_dev_trials_m libri_dev_trials_f_anon libri_dev_trials_m_anon; do
	mkdir "$V/data/$d" && cp -r tests/golden/embed/data/. "$V/data/$d/"
done
touch "$V/data/libri_dev_enrolls/enrolls" "$V/asr/libri_dev_trials_f_anon.txt" "$V/asr/libri_dev_trials_m_anon.txt"
{ echo "name: vpc-example"; awk '/^### Your own VoicePrivacy data/ { on = 1 } on && /^```yaml/ { y = 1; next } y && /^```/ { exit } y' scenarios/README.md; } > "$V/s.yaml"
t_ok "the VoicePrivacy example was found" grep -q 'trial: \[data/libri_dev_trials_f, data/libri_dev_trials_m\]' "$V/s.yaml"
t_run "the VoicePrivacy example of scenarios/README.md validates" 0 -- validate "$V/s.yaml"
t_done
