#!/bin/bash
# tests/e2e/test_asr_run.sh - a small run of the anonymised_speech target with
# `audio.asr: {recogniser: pocketsphinx}`: its wer_orig / wer_anon counts equal
# what `vpaudit asr` + `vpaudit wer` give on the same trial directories, and the
# records name the recogniser and its model.
. tests/e2e/lib.sh
# a run: `audio.asr` gives the WER that `vpaudit asr` + `vpaudit wer` give on the same
# trial directories (tests/e2e/audio/espeak_corpus.sh, 4 test speakers, one trial utterance
# each, the anonymised trials a sox pitch shift)
counts() { # the "ref_words ins del sub" of KEY in results.json $1
	awk -v k="\"$2\": {" 'index($0, k) { on = 1; next }
		on && /"(ref_words|ins|del|sub)":/ { gsub(/[",]/, ""); v[$1] = $2 }
		on && $1 == "sub:" { print v["ref_words:"], v["ins:"], v["del:"], v["sub:"]; exit }' "$1"
}
cli_counts() { # "ref_words ins del sub" of `vpaudit wer` REF HYP
	"$VPAUDIT" wer "$1" "$2" | sed -nE 's/^%WER [0-9.]+ \[ [0-9]+ \/ ([0-9]+), ([0-9]+) ins, ([0-9]+) del, ([0-9]+) sub \]$/\1 \2 \3 \4/p'
}
if [ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ] && command -v espeak-ng > /dev/null; then
	C=$T/ec
	bash tests/e2e/audio/espeak_corpus.sh "$C" 2 4 > /dev/null 2>&1
	for d in trial trial_anon; do for f in wav.scp utt2spk text; do
		grep -- '-u2 ' "$C/$d/$f" > "$T/x"; mv "$T/x" "$C/$d/$f"; done; done
	cat > "$T/run.yaml" <<YAML
name: asr-run
seed: 1
report: [json]
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
      asr: {recogniser: pocketsphinx}
      rho_f0: false
      extractor: {epochs: 1, hidden: 16, emb_dim: 8, chunk: 100, batch: 8}
    backend: {lda_dim: 0, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: a, attackers: [baseline]}
YAML
	t_run "run with audio.asr" 0 -- run "$T/run.yaml" -o "$T/ro" --threads 1 --no-plots --quiet
	# both sets in one `vpaudit asr` (one model load): ids prefixed o- / a-, split after
	{ sed 's/^/o-/' "$C/trial/wav.scp"; sed 's/^/a-/' "$C/trial_anon/wav.scp"; } > "$T/both.scp"
	t_run "asr on the original and anonymised trials" 0 -- asr "$T/both.scp" -o "$T/h_both.txt" --threads 1
	sed -n 's/^o-//p' "$T/h_both.txt" > "$T/h_orig.txt"
	sed -n 's/^a-//p' "$T/h_both.txt" > "$T/h_anon.txt"
	o=$(counts "$T/ro/results.json" wer_orig); a=$(counts "$T/ro/results.json" wer_anon)
	t_ok "wer_orig counts ($o) = vpaudit asr + wer" test -n "$o" -a "$o" = "$(cli_counts "$C/trial/text" "$T/h_orig.txt")"
	t_ok "wer_anon counts ($a) = vpaudit asr + wer" test -n "$a" -a "$a" = "$(cli_counts "$C/trial/text" "$T/h_anon.txt")"
	t_ok "records name the recogniser and its model" grep -q '"name": "CMU PocketSphinx"' "$T/ro/results.json"
	t_ok "... and its model" grep -q '"model": "/usr/share/pocketsphinx/model/en-us/en-us (acoustic model)' "$T/ro/results.json"
else
	echo "# SKIP: pocketsphinx-en-us or espeak-ng not installed"
fi
t_done
