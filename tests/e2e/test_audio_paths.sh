#!/bin/bash
# tests/e2e/test_audio_paths.sh - issue 31 items 4-7 through the CLI:
#  4. synth-corpus and anonymise, run in one folder, write absolute wav.scp
#     paths, so a scenario run from its own (other) folder reads them;
#  5. validate opens every recording's header: an 8 kHz file (passes: resampled), a missing file,
#     a stereo file are errors naming wav.scp:LINE, before any run;
#  6. every audio file the run reads is in results.json's inputs with the
#     SHA-256 of its bytes (checked against sha256sum), and re-written audio at
#     the same path (same size) changes it;
#  7. the scenario's WER: a missing hypothesis counted as deletions with a
#     warning, an error with `wer_strict: true`.
# Skipped, not passed, without data/brown, espeak-ng or flite.
. tests/e2e/lib.sh
B=$PWD/data/brown
if [ -n "${VPA_SKIP_BROWN:-}" ] || [ ! -f "$B/ca01" ] || ! command -v espeak-ng > /dev/null ||
	! command -v flite > /dev/null || ! command -v sox > /dev/null; then
	echo "# skip - data/brown, espeak-ng, flite or sox is missing (run \`sh .ci/deps\`); not counted as passed"
	t_done
	exit 0
fi
G=$T/gen; S=$T/scn; mkdir -p "$G" "$S"
cd "$G" || exit 1
t_run "synth-corpus from its folder, relative OUT" 0 -- synth-corpus corpus --speakers 8 --utts 3 --seed 5 --brown "$B" --threads 2
for s in train enrol trials; do
	t_run "anonymise $s, relative DATA and OUT" 0 -- anonymise mcadams --alpha-range 0.7,0.9 --threads 2 "corpus/$s" "${s}_anon"
done
abs_only() { awk '$2 !~ /^\// { bad = 1 } END { exit bad }' "$@"; }
t_ok "synth-corpus wav.scp: absolute paths" abs_only corpus/train/wav.scp corpus/enrol/wav.scp corpus/trials/wav.scp
t_ok "anonymise wav.scp: absolute paths" abs_only train_anon/wav.scp enrol_anon/wav.scp trials_anon/wav.scp
t_ok "the paths exist" bash -c "cd / && awk '{ print \$2 }' $G/trials_anon/wav.scp $G/corpus/train/wav.scp | xargs ls > /dev/null"
cd "$S" || exit 1
cp "$G/corpus/trials/text" hyp
sed 1d "$G/corpus/trials/text" > hyp_anon
first=$(awk 'NR == 1 { print $1 }' "$G/corpus/trials/text")
nw=$(awk 'NR == 1 { print NF - 1 }' "$G/corpus/trials/text")
scn() { # $1 file, $2 extra audio lines
	cat > "$1" <<YAML
name: paths
seed: 1
report: [json]
targets:
  - id: a
    kind: anonymised_speech
    source: audio
    audio:
      train: ../gen/corpus/train
      train_anon: ../gen/train_anon
      enroll: ../gen/corpus/enrol
      enroll_anon: ../gen/enrol_anon
      trial: ../gen/corpus/trials
      trial_anon: ../gen/trials_anon
      hyp: hyp
      hyp_anon: hyp_anon
      rho_f0: false
      extractor: {epochs: 2, hidden: 32, emb_dim: 8, chunk: 100, batch: 8}
$2
    backend: {lda_dim: 4, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: a, attackers: [ignorant, lazy_informed]}
YAML
}
scn s.yaml ""
t_run "validate from the scenario's folder" 0 -- validate s.yaml
t_run "run from the scenario's folder" 0 -- run s.yaml -o out --quiet
O=out/results.json
t_ok "results.json written" test -s "$O"
# ---- 7: the missing hypothesis ------------------------------------------------
t_ok "the missing hypothesis warned (compute-wer's 'not present in hyp')" \
	grep -q "warning: hyp_anon: 1 utterance of .*trials/text not present in hyp: scored as deletions" "$ERR"
t_ok "its $nw words counted as deletions, 1 not present" \
	grep -qz "\"wer_anon\": {[^}]*\"ins\": 0,[^}]*\"del\": $nw,[^}]*\"sub\": 0,[^}]*\"not_present_in_hyp\": 1" "$O"
t_ok "the originals: WER 0, none missing" grep -qz '"wer_orig": {[^}]*"wer": 0,[^}]*"not_present_in_hyp": 0' "$O"
scn strict.yaml "      wer_strict: true"
t_run "wer_strict: true: a missing hypothesis is an error" 1 -- run strict.yaml -o so --quiet
t_ok "the utterance named" grep -q "hyp_anon: utterance '$first' of .*text:1 has no hypothesis" "$ERR"
t_ok "no result written (strict)" test ! -e so/results.json
# ---- 6: provenance of audio ---------------------------------------------------
hash_of() { awk -v p="\"path\": \"$1\"," '$0 ~ p { on = 1 } on && $1 == "\"sha256\":" { gsub(/[",]/, "", $2); print $2; exit }' "$2"; }
n_wav=$(grep -c '"path": ".*\.wav",' "$O")
n_scp=$(cat "$G"/corpus/*/wav.scp "$G"/*_anon/wav.scp | wc -l)
t_ok "every audio file read is an input ($n_wav of $n_scp)" test "$n_wav" = "$n_scp"
ok=1
for f in $(awk '{ print $2 }' "$G/corpus/trials/wav.scp" "$G/train_anon/wav.scp"); do
	[ "$(hash_of "$f" "$O")" = "$(sha256sum "$f" | cut -d' ' -f1)" ] || { ok=0; echo "# $f"; }
done
t_ok "their SHA-256 = sha256sum's" test "$ok" = 1
inputs_of() { awk '/"inputs": \[/ { p = 1 } p && /^  \]/ { exit } p' "$1"; }
t_run "run on 1 thread" 0 -- run s.yaml -o out1 --quiet --threads 1
inputs_of out/results.json > "$T/in2"; inputs_of out1/results.json > "$T/in1"
t_ok "the same inputs, sizes and hashes for 1 and 2 threads ($(grep -c sha256 "$T/in1") files)" \
	bash -c "test -s '$T/in1' && cmp -s '$T/in1' '$T/in2'"
w=$(awk 'NR == 2 { print $2 }' "$G/trials_anon/wav.scp")
other=$(awk 'NR == 2 { print $2 }' "$G/enrol_anon/wav.scp")
h0=$(hash_of "$w" "$O"); hx=$(hash_of "$other" "$O")
sox -V1 "$w" "$T/louder.wav" vol 0.5 && cp "$T/louder.wav" "$w"
t_run "run again on re-written audio" 0 -- run s.yaml -o out2 --quiet
h1=$(hash_of "$w" out2/results.json)
t_ok "the re-written file's hash changed ($h0 -> $h1)" test -n "$h0" -a -n "$h1" -a "$h0" != "$h1"
t_ok "its new hash is the file's" test "$h1" = "$(sha256sum "$w" | cut -d' ' -f1)"
t_ok "an untouched file's hash stays" test -n "$hx" -a "$(hash_of "$other" out2/results.json)" = "$hx"
# ---- 5: validate opens the headers ---------------------------------------------
line=3
w3=$(awk -v n=$line 'NR == n { print $2 }' "$G/enrol_anon/wav.scp")
cp "$w3" "$T/keep.wav"
sox -V1 "$T/keep.wav" -r 8000 "$w3"
t_run "validate: an 8 kHz file passes (a scenario resamples it)" 0 -- validate s.yaml
rm "$w3"
t_run "validate: a missing file" 1 -- validate s.yaml
t_ok "named at wav.scp:$line" grep -q "enrol_anon/wav.scp:$line: cannot open '$w3': No such file or directory" "$ERR"
sox -V1 -M "$T/keep.wav" "$T/keep.wav" "$w3"
t_run "validate: a stereo file" 1 -- validate s.yaml
t_ok "named at wav.scp:$line: pick a channel" grep -q "enrol_anon/wav.scp:$line: $w3: 2 channels: pick one" "$ERR"
head -c 2000 "$T/keep.wav" > "$w3"
t_run "validate: a cut file" 1 -- validate s.yaml
t_ok "named at wav.scp:$line: truncated" grep -q "enrol_anon/wav.scp:$line: $w3: truncated" "$ERR"
cp "$T/keep.wav" "$w3"
t_run "validate: the file restored" 0 -- validate s.yaml
t_done
