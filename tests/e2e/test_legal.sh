#!/bin/bash
# tests/e2e/test_legal.sh - issue 29 in the linkage attack on the imported
# fixture (tests/e2e/data/anon/, 10 trial speakers of 8 utterances): every
# attacker's record has metrics.pi_link / pi_sing and the `legal` object
# (conversation lengths 1, 3, 10: L = 10 excludes and counts every speaker),
# the gates on pi_link / pi_sing hold or fail, `legal: false` leaves the
# records as before, and the grid keys' bad values are one line naming the
# item.  The metric itself: tests/unit/test_legal.c; the CLI: e2e 2901-2909.
. tests/e2e/lib.sh
D=$PWD/tests/e2e/data/anon
abs() {
	sed -e "s#: \([a-z_0-9]*\.\(ark\|npy\|ids\|utt2spk\|spk2gender\|utt2dur\)\)#: $D/\1#g" \
		-e "s#enrolls: enrolls#enrolls: $D/enrolls#" -e "s#trials: trials#trials: $D/trials#" \
		"$D/import.yaml" | sed '/^gates:/,$d'
}
abs > "$T/g.yaml"
cat >> "$T/g.yaml" <<'EOF'
gates:
  - {attack: link.baseline, metric: pi_link, min: 0.99}
  - {attack: link.ignorant, metric: pi_link, max: 0.8}
  - {attack: link.ignorant, metric: pi_sing, max: 0.6}
EOF
t_run "validate: pi_link and pi_sing are gateable" 0 -- validate "$T/g.yaml"
t_run "run the fixture with pi_link / pi_sing gates" 0 -- run "$T/g.yaml" -o "$T/g" --quiet --no-plots
R=$T/g/results.json
py() { jqt "$1" "$R"; }
t_ok "three gates, all pass" test "$(grep -c '"pass": true' "$R")" = 3
t_ok "every linkage record has pi_link, pi_sing and legal" \
	py '[.records[] | select(.attack == "link")] | length == 5 and all(.metrics | has("pi_link") and has("pi_sing")) and all(has("legal"))'
t_ok "baseline attacker: pi_link 1 at every N' (a perfect closed-set linker)" \
	py '[.records[] | select(.sub == "baseline" and .attack == "link")][0].legal.by_length[0].pi_link as $v | ["2", "5", "10", "all"] | all($v[.].value == 1)'
t_ok "chance levels 1/N' and the e^-1 baseline" \
	py '.records[0].legal.by_length[0] | .pi_link["5"].chance == 0.2 and ((.pi_sing["10"].baseline - pow(0.9; 9)) | fabs) < 1e-15'
t_ok "N' = 50 above the 10 enrolment speakers: null" \
	py '.records[0].legal.by_length[0] | (.pi_link | has("50")) and .pi_link["50"] == null and (.pi_sing | has("50")) and .pi_sing["50"] == null'
t_ok "conversations: 8 utterances a speaker make 80 of L = 1, 20 of L = 3 (floor(8/3) each)" \
	py '.records[0].legal.by_length | map(.conversations) == [80, 20, 0] and .[1].sing_speakers == 10'
t_ok "L = 10: all 10 speakers excluded and counted" \
	py '.records[0].legal.by_length[2] | .L == 10 and .speakers == 0 and .excluded_speakers == 10'
t_ok "semi-informed links more than lazy-informed (as their EERs say)" \
	py '[.records[] | select(.attack == "link") | {(.sub): .metrics}] | add | .semi_informed.pi_link > .lazy_informed.pi_link and .semi_informed.eer < .lazy_informed.eer'
t_ok "intervals contain their values" \
	py '[.records[] | select(has("legal")) | .legal.by_length[] | (.pi_link, .pi_sing) | .[] | select(. != null and .ci[0] != null) | select((.ci[0] <= .value and .value <= .ci[1]) | not)] | length == 0'

# a gate the numbers breach: exit 3, the reason
abs > "$T/b.yaml"
printf 'gates:\n  - {attack: link.baseline, metric: pi_link, max: 0.6}\n' >> "$T/b.yaml"
t_run "a breached pi_link gate" 3 -- run "$T/b.yaml" -o "$T/b" --quiet --no-plots
t_ok "the breach is named" grep -q 'link.baseline pi_link = 1' "$ERR"

# legal: false leaves the records without the new keys
abs | sed 's/^  - {id: link, kind: linkage, target: imp}$/  - {id: link, kind: linkage, target: imp, legal: false}/' > "$T/off.yaml"
t_run "legal: false runs" 0 -- run "$T/off.yaml" -o "$T/off" --quiet --no-plots
t_ok "legal: false: no pi_link, no legal object in the records" \
	jqt '.records | length > 0 and all((has("legal") or (.metrics | has("pi_link"))) | not)' "$T/off/results.json"
t_ok "legal: false: every other metric the same" \
	jqt -n --slurpfile a "$R" --slurpfile o "$T/off/results.json" '[$a[0].records, $o[0].records] | transpose | all(.[0] != null and .[1] != null and (.[0].metrics | del(.pi_link, .pi_sing)) == (.[1].metrics | del(.pi_link, .pi_sing)))'

# undefined first values: null, the reason, and a gate on them fails closed
abs | sed 's/^  - {id: link, kind: linkage, target: imp}$/  - {id: link, kind: linkage, target: imp, conversation_lengths: [10, 1], pi_sing_n: [20, 2]}/' > "$T/u.yaml"
printf 'gates:\n  - {attack: link.baseline, metric: pi_link, min: 0.5}\n' >> "$T/u.yaml"
t_run "L = 10 first: the pi_link gate fails closed" 3 -- run "$T/u.yaml" -o "$T/u" --quiet --no-plots
t_ok "the gate says why" grep -q 'link.baseline pi_link is undefined and fails closed' "$ERR"
R=$T/u/results.json
t_ok "pi_link undefined: no speaker has 10 utterances" \
	py '.records[0] | (.metrics | has("pi_link")) and .metrics.pi_link == null and .unreliable.pi_link == "undefined: no test speaker with 10 utterances and a single target enrolment"'
t_ok "pi_sing undefined: no speaker has 20 utterances" \
	py '.records[0] | (.metrics | has("pi_sing")) and .metrics.pi_sing == null and (.unreliable.pi_sing | startswith("undefined: no test speaker with 2L = 20 utterances"))'
t_ok "the second length is still computed" \
	py '.records[0].legal.by_length[1] | .L == 1 and .pi_link["2"].value == 1 and (.pi_sing | has("20")) and .pi_sing["20"] == null and .pi_sing["2"] != null'

# bad grid values: one line naming the item (then the source line and a caret)
bad() { # bad NAME LINE-TEXT EXPECTED-STDERR
	abs | sed "s/^  - {id: link, kind: linkage, target: imp}\$/  - {id: link, kind: linkage, target: imp, $2}/" > "$T/$1.yaml"
	t_run "validate: $1" 1 -- validate "$T/$1.yaml"
	t_ok "$1: the message" grep -qF "$3" "$ERR"
	t_ok "$1: on the first line" sh -c "head -n 1 '$ERR' | grep -qF \"\$1\"" _ "$3"
}
bad link-one "pi_link_n: [1, 5]" "pi_link_n: expected an integer in [2, 100000000] or all, got '1'"
bad link-word "pi_link_n: [2, many]" "pi_link_n: expected an integer in [2, 100000000] or all, got 'many'"
bad link-quoted "pi_link_n: [\"5\"]" "got '5'"
bad sing-twice "pi_sing_n: [5, 5]" "pi_sing_n: '5' is listed twice"
bad len-zero "conversation_lengths: [0]" "conversation_lengths: expected an integer in [1, 100000], got '0'"
bad len-all "conversation_lengths: [all]" "conversation_lengths: expected an integer in [1, 100000], got 'all'"
t_ok "the item's line and column" grep -q "$T/len-all.yaml:28:[0-9]*: " "$ERR"
t_done
