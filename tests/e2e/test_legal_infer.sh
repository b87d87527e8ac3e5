#!/bin/bash
# tests/e2e/test_legal_infer.sh - issue 29 items 4 and 5 in the linkage attack
# on the imported fixture (tests/e2e/data/anon/: 10 trial speakers, 5 f and
# 5 m, 40 training speakers): the inference criterion in every attacker's
# record and per gender, its gates (pass, breach, fail closed on an
# unreliable per-gender record), the `attribute` file (a labelling of its
# own, one class, two labels for a speaker, missing), `inference: false`,
# pi_link / pi_sing per gender, the figures, the report's first-page
# section and the same numbers with 1 and 2 threads.  The metric and the
# classifier: tests/unit/test_inference.c; the section's sentences:
# tests/unit/test_sec_legal.c.
. tests/e2e/lib.sh
D=$PWD/tests/e2e/data/anon
# the fixture's scenario with absolute paths, the linkage attack given $1 extra keys
scen() {
	sed -e "s#: \([a-z_0-9]*\.\(ark\|npy\|ids\|utt2spk\|spk2gender\|utt2dur\)\)#: $D/\1#g" \
		-e "s#enrolls: enrolls#enrolls: $D/enrolls#" -e "s#trials: trials#trials: $D/trials#" \
		"$D/import.yaml" | sed '/^gates:/,$d' | sed '/^  - id: slice$/,$d' | grep -v '^  - {id: ident' |
		sed "s#^  - {id: link, kind: linkage, target: imp}\$#  - {id: link, kind: linkage, target: imp$1}#"
}
scen ", per_gender: true" > "$T/g.yaml"
cat >> "$T/g.yaml" <<'EOF'
gates:
  - {attack: link.semi_informed, metric: inference_acc, max: 1}
  - {attack: link.ignorant, metric: inference_bacc, max: 1}
EOF
t_run "validate: inference_acc / inference_bacc are gateable" 0 -- validate "$T/g.yaml"
t_run "run with per_gender and inference gates" 0 -- run "$T/g.yaml" -o "$T/g" --quiet --threads 1
R=$T/g/results.json
# L: the linkage records, m: them by sub
py() { jqt "$1" "$R"; }
L='[.records[] | select(.attack == "link")]'
m="$L"' | map({(.sub): .}) | add'
t_ok "two gates, both pass" test "$(grep -c '"pass": true' "$R")" = 2
t_ok "15 records (5 attackers pooled, f, m), each with inference_acc, inference_bacc and inference" \
	py "$L"' | length == 15 and all((.metrics | has("inference_acc") and has("inference_bacc")) and has("inference"))'
t_ok "the attribute is gender (spk2gender of train, trial, enroll), classes f, m" \
	py "$m"' | .ignorant.inference | .attribute == "gender" and .classes == ["f", "m"]'
t_ok "ignorant / lazy-informed train on train, semi-informed / informed on train_anon" \
	py "$m"' | . as $m | [("baseline", "ignorant", "lazy_informed", "semi_informed", "informed") | {(.): $m[.].inference.trained_on}] | add == {"baseline": "train", "ignorant": "train", "lazy_informed": "train", "semi_informed": "train_anon", "informed": "train_anon"}'
t_ok "pooled: 10 test speakers, 80 utterances, majority-class chance 0.5 (5 f, 5 m), balanced chance 0.5" \
	py "$m"' | .semi_informed.inference | .test_speakers == 10 and .test_utterances == 80 and .accuracy.chance == 0.5 and .balanced_accuracy.chance == 0.5'
t_ok "train_anon has no spk2gender: its speakers' genders come from train's (400 utterances)" \
	py "$m"' | .semi_informed.inference.train_utterances != null and .semi_informed.inference.train_utterances == .ignorant.inference.train_utterances and .semi_informed.inference.train_unlabelled_speakers == 0'
t_ok "intervals contain their values, within [0, 1]" \
	py "$L"' | [.[] | .inference | (.accuracy, .balanced_accuracy) | select(. != null and .ci[0] != null) | select((0 <= .ci[0] and .ci[0] <= .value and .value <= .ci[1] and .ci[1] <= 1) | not)] | length == 0'
t_ok "semi-informed infers gender above chance (lower bound above 0.5)" \
	py "$m"' | .semi_informed.inference.accuracy | .ci[0] != null and .ci[0] > .chance'
t_ok "per gender: one class among the test speakers, unreliable with the reason" \
	py "$m"' | .["ignorant/anon_f"] | .unreliable.inference_acc == "the test speakers all have the label '"'f'"' (chance is 1)" and .inference.test_speakers == 5'
t_ok "per gender: pi_link and pi_sing over that gender's 5 enrolment candidates, unreliable below 10" \
	py "$m"' | .["semi_informed/anon_m"] | .legal.by_length[0].speakers == 5 and .legal.by_length[0].pi_link.all.chance == 0.2 and .unreliable.pi_link == "5 test speakers (fewer than 10)"'
t_ok "figures link-pi-link (with chance 1/N') and link-pi-sing (with e^-1)" \
	py '[.attacks[] | (.figures // [])[] | {(.id): .}] | add | .["link-pi-link"] as $p | .["link-pi-sing"] as $s | ($p.series | map(.name) | index(["chance 1/N'"'"'"])) != null and ($s.series | map(.name) | index(["e^-1 (large N)"])) != null and ($p.series[-1] | (.x | length) == (.y | length) and ([.x, .y] | transpose | all(((.[1] - 1 / .[0]) | fabs) < 1e-15)))'
t_ok "the report's first-page section and its table" \
	grep -q 'Singling out / Linkability / Inference' "$T/g/report.html"
t_ok "the section comes right after the executive summary" \
	bash -c 'at() { grep -bo -m 1 "$1" "$2" | head -n 1 | cut -d: -f1; }
		a=$(at "id=\"summary\"" "$1"); b=$(at "id=\"legal\"" "$1"); c=$(at "id=\"threat" "$1")
		[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] && [ "$a" -gt 0 ] && [ "$a" -lt "$b" ] && [ "$b" -lt "$c" ]' _ "$T/g/report.html"

# the VoicePrivacy summary: vpaudit's own table after the challenge's
t_run "vpaudit report writes the VPC files" 0 -- report "$R" -o "$T/rep" --no-plots
t_ok "result_for_rank.txt: the Article 29 table, 15 rows (5 attackers x all, f, m)" \
	awk 'BEGIN { ok = 0 }
		$0 == "---- Article 29 criteria (vpaudit) results ----" { n++; on = 1; next }
		on && NF { rows++; row[rows] = $0 }
		END {
			if (n != 1 || rows != 16) exit 1
			if (row[1] !~ /^[ \t]*dataset[ \t]+split[ \t]+gender[ \t]+attacker[ \t]+pi_link[ \t]+pi_sing[ \t]+inference_acc[ \t]*$/) exit 1
			split(row[11], f); exit !(f[1] == "9" && f[2] == "imp" && f[3] == "link" && f[4] == "all" && f[5] == "semi_informed")
		}' "$T/rep/result_for_rank.txt"
t_ok "... with the records' values to 3 decimals" \
	bash -c 'want=$(jq -r "[.records[] | select(.sub == \"semi_informed\")][0].metrics | [.pi_link, .pi_sing, .inference_acc] | map(tostring) | join(\" \")" "$1" |
			awk "NF == 3 { printf \"%.3f %.3f %.3f\", \$1, \$2, \$3 }")
		got=$(awk "\$1 == \"9\" && \$2 == \"imp\" && \$3 == \"link\" && \$4 == \"all\" && \$5 == \"semi_informed\" && NF == 8 { print \$6, \$7, \$8; exit }" "$2")
		[ -n "$want" ] && [ "$want" = "$got" ]' _ "$R" "$T/rep/result_for_rank.txt"

# the same numbers with 2 threads
t_run "run with 2 threads" 0 -- run "$T/g.yaml" -o "$T/g2" --quiet --threads 2
t_ok "inference, pi_link and pi_sing identical for 1 and 2 threads" \
	bash -c 'q="[.records[] | [.sub, .inference, .legal]]"; a=$(jq -cS "$q" "$1") && b=$(jq -cS "$q" "$2") && [ -n "$a" ] && [ "$a" = "$b" ]' _ "$R" "$T/g2/results.json"

# a breached gate, and one that fails closed on an unreliable per-gender record
scen ", per_gender: true" > "$T/b.yaml"
printf 'gates:\n  - {attack: link.semi_informed, metric: inference_acc, max: 0.6}\n' >> "$T/b.yaml"
t_run "a breached inference_acc gate: exit 3" 3 -- run "$T/b.yaml" -o "$T/b" --quiet --no-plots
t_ok "the breach is named" grep -q 'link.semi_informed inference_acc = ' "$ERR"
scen ", per_gender: true" > "$T/c.yaml"
printf 'gates:\n  - {attack: link.ignorant/anon_f, metric: inference_acc, max: 1}\n' >> "$T/c.yaml"
t_run "a gate on an unreliable per-gender inference fails closed" 3 -- run "$T/c.yaml" -o "$T/c" --quiet --no-plots
t_ok "... and says why" grep -q "fails closed, unreliable: the test speakers all have the label 'f'" "$ERR"

# the user's attribute: three classes by speaker number (no relation to the voice)
for f in "$D"/train.utt2spk "$D"/test.utt2spk; do cut -d' ' -f2 "$f"; done | sort -u |
	awk '{n = substr($0, length($0) - 1) + 0; print $0, (n % 3 == 0 ? "young" : n % 3 == 1 ? "mid" : "old")}' > "$T/spk2age"
scen ", attribute: $T/spk2age" > "$T/a.yaml"
t_run "an attribute file of three classes" 0 -- run "$T/a.yaml" -o "$T/a" --quiet --no-plots
t_ok "classes in order of first appearance, balanced chance 1/3" \
	jqt --arg f "$T/spk2age" '[.records[] | select(.sub == "ignorant")][0].inference | .attribute == $f and (.classes | sort) == ["mid", "old", "young"] and ((.balanced_accuracy.chance - 1 / 3) | fabs) < 1e-15' "$T/a/results.json"

printf 'train-s0001 a\ntrain-s0002 a\n' > "$T/one"
scen ", attribute: $T/one" > "$T/one.yaml"
t_run "an attribute file of one class: validate exit 1" 1 -- validate "$T/one.yaml"
t_ok "one line naming the file and the need" \
	test "$(cat "$ERR")" = "vpaudit validate: error: $T/one: every speaker has the same label: an attribute to infer needs 2 classes"
printf 'train-s0001 a\ntrain-s0002 b\ntrain-s0001 b\n' > "$T/two"
scen ", attribute: $T/two" > "$T/two.yaml"
t_run "a speaker with two labels: exit 1" 1 -- run "$T/two.yaml" -o "$T/two" --quiet
t_ok "the error names FILE:LINE (and shows the line)" \
	test "$(head -n 1 "$ERR")" = "vpaudit run: error: $T/two:3: speaker 'train-s0001' has two labels ('b' here, 'a' on line 1)"
t_ok "no partial output" test ! -e "$T/two/results.json"
scen ", attribute: nothere.txt" > "$T/miss.yaml"
t_run "a missing attribute file: exit 1" 1 -- validate "$T/miss.yaml"
t_ok "the error names the key's place and the file" grep -q "cannot open 'nothere.txt'" "$ERR"
# labels of only the test speakers: the training data has none
grep '^test' "$T/spk2age" > "$T/testonly"
scen ", attribute: $T/testonly" > "$T/t.yaml"
t_run "no training speaker labelled: exit 1" 1 -- run "$T/t.yaml" -o "$T/t" --quiet
t_ok "the error names the attack, the attribute and the set" \
	grep -q "attack 'link': attribute '$T/testonly': no speaker of the train set has a label" "$ERR"

# the default attribute (gender) with a training set of one gender: not the user's request,
# so a warning per attacker and the run goes on without the criterion
sed 's/ f$/ m/' "$D/train.spk2gender" > "$T/train_m.spk2gender"
scen "" | sed "s#$D/train.spk2gender#$T/train_m.spk2gender#" > "$T/m.yaml"
t_ok "the one-gender training scenario was made" grep -q "train_m.spk2gender" "$T/m.yaml"
t_run "default gender, one-gender training set: the run goes on" 0 -- run "$T/m.yaml" -o "$T/m" --quiet --no-plots
t_ok "a warning names the attacker and the reason" \
	grep -q "link.ignorant: no inference criterion: attribute 'gender': the train speakers all have the label 'm'" "$ERR"
t_ok "no inference_acc in its records" bash -c "! grep -q '\"inference_acc\"' '$T/m/results.json'"

scen ", inference: false" > "$T/off.yaml"
t_run "inference: false" 0 -- run "$T/off.yaml" -o "$T/off" --quiet --no-plots
t_ok "inference: false: no inference key or metric" \
	jqt '.records | all((has("inference") or (.metrics | has("inference_acc"))) | not)' "$T/off/results.json"
t_done
