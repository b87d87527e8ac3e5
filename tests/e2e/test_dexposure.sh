#!/bin/bash
# tests/e2e/test_dexposure.sh - the tagger target and the d_exposure attack
# through `vpaudit run`: imported confidences (hand-made, values by hand:
# NOUN -log2(3/4), VERB 3 = its maximum, ADJ 0 for a full tie; mean 1.1383458),
# a bad TSV (exact error line), a tiny tagger trained on a hand-made Brown
# fixture (records, figures, epsilon), and the real Brown corpus when present.
source tests/e2e/lib.sh
D=tests/e2e/data/tagger

t_run "import: run" 0 -- run "$D/import.yaml" -o "$T/imp"
t_ok "import: d-exposure by hand" grep -q '"d_exposure": 1.138345833092948' "$T/imp/results.json"
t_ok "import: NOUN with ties" grep -q '"d_exposure_NOUN": 0.4150374992788439' "$T/imp/results.json"
t_ok "import: VERB at its maximum" grep -q '"d_exposure_VERB": 3,' "$T/imp/results.json"
t_ok "import: ADJ all tied" grep -q '"d_exposure_ADJ": 0,' "$T/imp/results.json"
t_ok "import: gate line" grep -q '^PASS dx d_exposure = 1.13835 <= 1.5' "$OUT"

t_run "bad tsv: exit 1" 1 -- run "$D/bad.yaml" -o "$T/bad"
t_ok "bad tsv: error line" grep -q "^vpaudit run: error: $D/bad-range.tsv:3:8: confidence must be a number in \[0, 1\], got '1.5'" "$ERR"

t_run "train: run" 0 -- run "$D/train.yaml" -o "$T/tr"
t_ok "train: records k0 k32 dp-k0 dp-k32, epoch tables, overfit-k8 dp-overfit-k8" \
	bash -c "for s in k0 k32 dp-k0 dp-k32 k32-e3 dp-k32-e3 overfit-k8 dp-overfit-k8; do grep -q \"\\\"sub\\\": \\\"\$s\\\"\" '$T/tr/results.json' || exit 1; done"
t_ok "train: accuracy reported" grep -q '"accuracy": ' "$T/tr/results.json"
t_ok "train: throughput is a timing field, not a metric" bash -c "tr -d ' \n' < '$T/tr/results.json' | grep -q '\"timing\":{\"tokens_per_s\":[0-9.e+]*}' && ! tr -d ' \n' < '$T/tr/results.json' | grep -o '\"metrics\":{[^}]*' | grep -q tokens_per_s"
t_ok "train: DP epsilon <= 1" bash -c "grep -o '\"epsilon\": [0-9.e-]*' '$T/tr/results.json' | awk '{ if (\$2 > 1.0000001) bad=1 } END { exit bad }'"
t_ok "train: five lines figures (epochs without and with DP)" bash -c "[ \$(grep -c '\"type\": \"lines\"' '$T/tr/results.json') = 5 ]"
t_ok "train: html has the figures" bash -c "[ \$(grep -c '<svg' '$T/tr/report.html') -ge 5 ]"

# the target itself trained with user-level DP-SGD (dp_unit: user): its info
# names the unit and the number of users (3 training documents of the fixture)
mkdir -p "$T/tu" && cp $D/ca0? "$T/tu/"
cat > "$T/tu/s.yaml" <<EOF2
name: tagger-dp-user
seed: 3
report: [json]
targets:
  - {id: tg, kind: tagger, corpus: ., test_fraction: 0.25, vocab_size: 100, embedding: 16,
     hidden: 16, dropout: 0, lr: 0.02, batch: 4, epochs: 2, dp: true, dp_unit: user,
     user_sentences: 5, target_epsilon: 2}
attacks:
  - {id: dx, kind: d_exposure, target: tg, canary: fly, label: ADJ,
     context: "Mary they like the ___ dog .", repetitions: [0], epoch_table: false}
EOF2
t_run "target with dp_unit user: run" 0 -- run "$T/tu/s.yaml" -o "$T/tu/o"
t_ok "target with dp_unit user: info names the unit; 3 documents x 30 sentences in users of 5 = 18 units" \
	bash -c "grep -A1 '\"dp_unit\": \"user\",' '$T/tu/o/results.json' | grep -q '\"dp_units\": 18$'"
t_ok "target with dp_unit user: epsilon 2" grep -q '"epsilon": 1.99999' "$T/tu/o/results.json"
sed -i 's/dp_unit: user/dp_unit: users/' "$T/tu/s.yaml"
t_run "target with dp_unit users: exit 1" 1 -- validate "$T/tu/s.yaml"
t_ok "target with dp_unit users: the error names the choices" grep -q "s.yaml:6:80: 'dp_unit' must be 'sentence' or 'user', got 'users' (did you mean 'user'?)" "$ERR"

# m FILE SUB KEY: the number KEY of the record SUB in results.json
m() { awk -v s="\"sub\": \"$2\"," -v k="\"$3\": " '$0 ~ s {f=1; next}
	f && /"sub": / {f=0} f && index($0, k) {sub(/.*": /, ""); sub(/,$/, ""); print; exit}' "$1"; }
# lt A B: A < B (numbers; fails on empty or null)
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a ~ /^-?[0-9.e+-]+$/ && b ~ /^-?[0-9.e+-]+$/ && a + 0 < b + 0) }'; }

if [ -f data/brown/ca01 ]; then
	# The acceptance properties on a small set-up (about 30-40 s of CPU): 20
	# Brown documents, the canary chosen by `auto` labelled VERB, 0 and 16
	# insertions, with and without DP-SGD at epsilon 1 (large lots).
	cat > "$T/brown.yaml" <<EOF2
name: dexposure-brown
seed: 1
report: [json]
targets:
  - {id: tg, kind: tagger, corpus: $PWD/data/brown, max_docs: 20, vocab_size: 2000, epochs: 2,
     lr: 0.004}
attacks:
  - {id: dx, kind: d_exposure, target: tg, repetitions: [0, 16], dp: true, dp_batch: 128,
     dp_epochs: 4, dp_target_epsilon: 1, dp_lr: 0.02, epoch_table: false, canary_min_count: 5}
EOF2
	t_run "brown: run" 0 -- run "$T/brown.yaml" -o "$T/br"
	R=$T/br/results.json
	t_ok "brown: accuracy above 0.8" lt 0.8 "$(m "$R" k0 accuracy)"
	t_ok "brown: 50 control words" [ "$(m "$R" k0 controls)" = 50 ]
	t_ok "brown: k0 within its chance level (<= controls' 90th percentile)" \
		bash -c "! awk -v a=$(m "$R" k0 d_exposure_label) -v b=$(m "$R" k0 d_exposure_label_chance_p90) 'BEGIN { exit !(a > b) }'"
	t_ok "brown: d-exposure grows with repetitions (label class)" \
		lt "$(m "$R" k0 d_exposure_label)" "$(m "$R" k16 d_exposure_label)"
	t_ok "brown: k16 above the controls' 90th percentile" \
		lt "$(m "$R" k16 d_exposure_label_chance_p90)" "$(m "$R" k16 d_exposure_label)"
	t_ok "brown: DP lowers the excess over chance at equal k" \
		lt "$(m "$R" dp-k16 d_exposure_label_excess)" "$(m "$R" k16 d_exposure_label_excess)"
	t_ok "brown: DP k16 within its chance level" \
		bash -c "! awk -v a=$(m "$R" dp-k16 d_exposure_label) -v b=$(m "$R" dp-k16 d_exposure_label_chance_p90) 'BEGIN { exit !(a > b) }'"
	t_ok "brown: DP epsilon 1" bash -c "awk -v e=$(m "$R" dp-k16 epsilon) 'BEGIN { exit !(e > 0.99 && e <= 1.0000001) }'"
	ok=1
	for s in k0 k16 dp-k0 dp-k16; do
		for c in NOUN VERB ADJ PROPN OTHER; do
			v=$(m "$R" $s d_exposure_$c); x=$(m "$R" $s max_$c)
			awk -v a="$v" -v b="$x" 'BEGIN { exit !(a != "" && a >= 0 && a <= b + 1e-12) }' || ok=0
		done
	done
	t_ok "brown: no value above its class maximum" [ $ok = 1 ]

	# 256 copies (about 15 s): DP-SGD per sentence at epsilon 1 does not cover
	# them (a group of 256: the canary ends above its controls' 90th
	# percentile), user-level DP-SGD at epsilon 1 (the copies are one user's
	# data, clipped as a whole) keeps it within its chance level.
	cat > "$T/brown-user.yaml" <<EOF2
name: dexposure-brown-user
seed: 1
report: [json]
targets:
  - {id: tg, kind: tagger, corpus: $PWD/data/brown, max_docs: 20, vocab_size: 2000, epochs: 2,
     lr: 0.004}
attacks:
  - {id: dx, kind: d_exposure, target: tg, repetitions: [256], dp: true, dp_batch: 128,
     dp_epochs: 4, dp_target_epsilon: 1, dp_lr: 0.02, epoch_table: false, canary_min_count: 5,
     dp_user: true, dp_user_sentences: 4, dp_user_batch: 32}
EOF2
	t_run "brown user-level: run" 0 -- run "$T/brown-user.yaml" -o "$T/bu"
	R=$T/bu/results.json
	t_ok "brown user-level: records k256 dp-k256 dpuser-k256" \
		bash -c "[ \"\$(grep -o '\"sub\": \"[a-z0-9-]*\"' '$R' | tr '\n' ' ')\" = '\"sub\": \"k256\" \"sub\": \"dp-k256\" \"sub\": \"dpuser-k256\" ' ]"
	t_ok "brown user-level: per-sentence DP at k256 above the controls' 90th percentile" \
		lt "$(m "$R" dp-k256 d_exposure_label_chance_p90)" "$(m "$R" dp-k256 d_exposure_label)"
	t_ok "brown user-level: per-user DP at k256 within its chance level" \
		bash -c "! awk -v a=$(m "$R" dpuser-k256 d_exposure_label) -v b=$(m "$R" dpuser-k256 d_exposure_label_chance_p90) 'BEGIN { exit !(a > b) }'"
	t_ok "brown user-level: excess below per-sentence DP's" \
		lt "$(m "$R" dpuser-k256 d_exposure_label_excess)" "$(m "$R" dp-k256 d_exposure_label_excess)"
	t_ok "brown user-level: epsilon 1, group bound epsilon (one user) vs 256 epsilon" \
		awk -v e="$(m "$R" dpuser-k256 epsilon)" -v g="$(m "$R" dpuser-k256 group_epsilon_bound)" \
		-v e2="$(m "$R" dp-k256 epsilon)" -v g2="$(m "$R" dp-k256 group_epsilon_bound)" \
		'BEGIN { exit !(e > 0.99 && e <= 1.0000001 && g == e && g2 > 255.9 * e2 && g2 < 256.1 * e2) }'
	t_ok "brown user-level: user_sentences 4" [ "$(m "$R" dpuser-k256 user_sentences)" = 4 ]
else
	echo "# skip - brown: data/brown is missing (run \`sh .ci/deps\`); not counted as passed"
fi
t_done
