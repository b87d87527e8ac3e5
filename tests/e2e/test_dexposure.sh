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
t_ok "bad tsv: error line" grep -q "^vpaudit: error: $D/bad-range.tsv:3:8: confidence must be a number in \[0, 1\], got '1.5'" "$ERR"

t_run "train: run" 0 -- run "$D/train.yaml" -o "$T/tr"
t_ok "train: records k0 k32 dp-k0 dp-k32 overfit-k8" \
	bash -c "for s in k0 k32 dp-k0 dp-k32 k32-e3 overfit-k8; do grep -q \"\\\"sub\\\": \\\"\$s\\\"\" '$T/tr/results.json' || exit 1; done"
t_ok "train: accuracy reported" grep -q '"accuracy": ' "$T/tr/results.json"
t_ok "train: DP epsilon <= 1" bash -c "grep -o '\"epsilon\": [0-9.e-]*' '$T/tr/results.json' | awk '{ if (\$2 > 1.0000001) bad=1 } END { exit bad }'"
t_ok "train: four lines figures" bash -c "[ \$(grep -c '\"type\": \"lines\"' '$T/tr/results.json') = 4 ]"
t_ok "train: html has the figures" bash -c "[ \$(grep -c '<svg' '$T/tr/report.html') -ge 4 ]"

if [ -f data/brown/ca01 ]; then
	cat > "$T/brown.yaml" <<EOF2
name: dexposure-brown
report: [json]
targets:
  - {id: tg, kind: tagger, corpus: $PWD/data/brown, max_docs: 12, epochs: 1, vocab_size: 2000}
attacks:
  - {id: dx, kind: d_exposure, target: tg, repetitions: [0], dp: false, epoch_table: false, canary_min_count: 3}
EOF2
	t_run "brown: run" 0 -- run "$T/brown.yaml" -o "$T/br"
	t_ok "brown: accuracy above 0.5" bash -c "grep -o '\"accuracy\": [0-9.]*' '$T/br/results.json' | head -1 | awk '{ exit !(\$2 > 0.5) }'"
else
	echo "# skip - brown: data/brown is missing (run \`sh .ci/deps\`); not counted as passed"
fi
t_done
