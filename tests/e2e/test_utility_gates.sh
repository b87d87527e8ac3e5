#!/bin/bash
# tests/e2e/test_utility_gates.sh - issue 30 item 4: the utility of an
# anonymised_speech audio target (WER of its `hyp:` files, rho_F0) carried
# into the linkage records as wer_orig, wer_anon, wer_increase, rho_f0, so a
# gate bounds them like any metric; the emotion recogniser of `ser:` (the
# golden classifier of tests/golden/ser: UAR 1 on the originals, 1/8 on the
# stand-in anonymised copy, as test_classify computes) as uar_orig / uar_anon;
# an unknown utility metric and a bad `ser` are refused.
. tests/e2e/lib.sh
C=$T/corpus
S=$PWD/tests/golden/ser
bash tests/e2e/audio/espeak_corpus.sh "$C" 8 4 > /dev/null 2>&1
t_ok "espeak-ng corpus made" test -s "$C/trial_anon/wav.scp"
# hypotheses: exact on the originals; one word deleted on the anonymised trials
cp "$C/trial/text" "$T/hyp"
sed '1s/^\([^ ]*\) [^ ]*/\1/' "$C/trial/text" > "$T/hyp_anon"
scn() { # $1 file, $2 gates, $3 more keys of ser
	cat > "$1" <<YAML
name: utility-gates
seed: 1
report: [json, vpc]
targets:
  - id: a
    kind: anonymised_speech
    source: audio
    audio:
      train: $C/train
      train_anon: $C/train_anon
      enroll: $C/enroll
      enroll_anon: $C/enroll_anon
      trial: $C/trial
      trial_anon: $C/trial_anon
      hyp: $T/hyp
      hyp_anon: $T/hyp_anon
      rho_f0: true
      ser: {model: $S/wave.onnx, labels: $S/labels.txt, data: $S/data, data_anon: $S/data_anon$3}
      extractor: {epochs: 2, hidden: 16, emb_dim: 8, chunk: 100, batch: 16}
    backend: {lda_dim: 4, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: a, attackers: [ignorant, semi_informed]}
gates:
$2
YAML
}
scn "$T/a.yaml" "  - {attack: link, metric: wer_orig, max: 0}
  - {attack: link, metric: wer_anon, max: 0.5}
  - {attack: link, metric: wer_increase, min: 0.0001, max: 0.5}
  - {attack: link, metric: rho_f0, min: 0.5}
  - {attack: link, metric: uar_orig, min: 1}
  - {attack: link, metric: uar_anon, max: 0.125}"
t_run "six utility gates that hold" 0 -- run "$T/a.yaml" -o "$T/out" --quiet
O=$T/out/results.json
t_ok "six gates pass" test "$(grep -c '"pass": true' "$O")" = 6
t_ok "the recogniser's UARs in the target" grep -qz '"uar_orig": 1,[^}]*"uar_anon": 0.125,' "$O"
t_ok "its confusion matrix on the anonymised copy" \
	grep -qz '"anonymised": {[^]]*"confusion": \[[^0-9]*0,[^0-9]*1,[^0-9]*1,[^0-9]*0' "$O"
# wer_increase = wer_anon - wer_orig = one deletion / reference words, in every record
wa=$(grep -A6 '"wer_anon": {' "$O" | awk '$1 == "\"wer\":" { sub(/,$/, "", $2); print $2; exit }')
t_ok "wer_increase in the records equals the target's wer_anon ($wa)" \
	grep -q "\"wer_increase\": $wa," "$O"
t_ok "every record carries it" test "$(grep -c '"wer_increase":' "$O")" -ge 2
# as pandas 1.5.3 prints VoicePAT's frame of these values (its "mean" header row)
printf '%s\n' '---- SER results ----' \
	'  dataset split       ser    UAR ACC_ang ACC_hap ACC_neu ACC_sad' \
	'                            mean    mean    mean    mean    mean' \
	'0       a  data      anon   12.5     0.0    50.0     0.0     0.0' \
	'1       a  data  original  100.0   100.0   100.0   100.0   100.0' > "$T/ser_rows"
t_ok "result_for_rank.txt starts with the SER rows (UAR 12.5% anonymised, 100% original)" \
	cmp -s "$T/ser_rows" <(head -n 5 "$T/out/result_for_rank.txt")
rho=$(awk '$1 == "\"rho_f0\":" && $2 ~ /^[0-9]/ { sub(/,$/, "", $2); printf "%.4f", $2; exit }' "$O")
t_ok "vpc2022_results.txt: the pitch correlation line ($rho)" \
	grep -Eq "^Pitch correlation for a_trials: mean=$rho std=0\.[0-9]{4}\$" "$T/out/vpc2022_results.txt"
scn "$T/b.yaml" "  - {attack: link, metric: wer_increase, max: 0}"
t_run "a WER-cost gate that fails" 3 -- run "$T/b.yaml" -o "$T/outb" --quiet
scn "$T/c.yaml" "  - {attack: link, metric: wer_incraese, max: 0}"
t_run "a misspelt utility metric" 1 -- validate "$T/c.yaml"
t_ok "the error suggests wer_increase" grep -q "did you mean 'wer_increase'" "$ERR"
scn "$T/d.yaml" "  - {attack: link, metric: uar_anon, max: 1}" ", utt2label: $S/labels.txt"
t_run "ser with a label file that is not utt2label" 1 -- run "$T/d.yaml" -o "$T/outd" --quiet
t_ok "the error names the file and line" grep -q "labels.txt:1: expected 2 columns, found 1" "$ERR"
t_ok "no result written (ser)" test ! -e "$T/outd/results.json"
scn "$T/e.yaml" "  - {attack: link, metric: uar_anon, max: 1}" ", folds: $S/folds.txt"
t_run "ser with both model and folds" 1 -- validate "$T/e.yaml"
t_ok "the error says one of them" grep -q "needs one of .model. and .folds." "$ERR"
t_done
