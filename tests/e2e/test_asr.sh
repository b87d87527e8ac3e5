#!/bin/bash
# tests/e2e/test_asr.sh - `vpaudit asr` end to end: pocketsphinx-testdata's
# five LibriVox recordings equal pocketsphinx_batch's hypotheses
# (tests/golden/asr/batch.hyp, one pocketsphinx_batch process per utterance),
# resampling on request, bad input (one line, exit 1, nothing written), the
# scenario key `audio.asr`'s validation (its run: tests/e2e/test_asr_run.sh).
. tests/e2e/lib.sh
G=tests/golden/asr
LIB=/usr/share/pocketsphinx/test/data/librivox
one_line() { [ "$(wc -l < "$ERR")" = 1 ]; }

if [ -f "$LIB/fileids" ] && [ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ]; then
	t_run "librivox, 2 threads" 0 -- asr "$G/wav_libri.scp" -o "$T/libri.txt" --threads 2
	grep '^libri-' "$G/batch.hyp" > "$T/want.txt"
	t_ok "equal to pocketsphinx_batch (5 utterances)" cmp -s "$T/libri.txt" "$T/want.txt"
	t_ok "nothing on stdout" test ! -s "$OUT"
	t_ok "vpaudit wer: 0 errors" bash -c "\"$VPAUDIT\" wer \"$T/want.txt\" \"$T/libri.txt\" | grep -q \"^%WER 0.00 \[ 0 / 71\""
else
	echo "# SKIP: pocketsphinx-en-us or pocketsphinx-testdata not installed"
fi

# 8 kHz audio: an error naming the option, or resampled with it (and said so)
sox -n -r 8000 -b 16 -c 1 "$T/tone8k.wav" synth 0.5 sine 440 vol 0.3 2> /dev/null
t_run "8 kHz without --allow-upsample" 1 -- asr "$T/tone8k.wav" -o "$T/h8.txt"
t_ok "one line naming --allow-upsample" bash -c "grep -q -- '--allow-upsample' '$ERR' && [ \$(wc -l < '$ERR') = 1 ]"
t_ok "nothing written" test ! -e "$T/h8.txt"
t_run "8 kHz with --allow-upsample" 0 -- asr "$T/tone8k.wav" -o "$T/h8.txt" --allow-upsample
t_ok "resampling reported" grep -q '1 of 1 utterances resampled to 16000 Hz (libsoxr' "$ERR"
t_ok "one line per utterance" test "$(wc -l < "$T/h8.txt")" = 1

# bad input
mkdir -p "$T/empty"; : > "$T/empty/wav.scp"
t_run "empty data directory" 1 -- asr "$T/empty" -o "$T/e.txt"
t_ok "one line" one_line
t_ok "nothing written" test ! -e "$T/e.txt"
t_run "missing data directory" 1 -- asr "$T/nowhere" -o "$T/m.txt"
t_ok "one line" one_line
t_ok "nothing written" test ! -e "$T/m.txt"
mkdir -p "$T/model"
t_run "unreadable model folder" 1 -- asr "$G/synth/synm001-01.wav" -o "$T/u.txt" --model "$T/model"
t_ok "names the folder and the file" grep -q "PocketSphinx model folder $T/model: cannot read 'en-us/mdef'" "$ERR"
t_ok "one line" one_line
t_ok "nothing written" test ! -e "$T/u.txt"
t_run "missing -o" 2 -- asr "$G/synth/synm001-01.wav"
t_run "--threads 0" 2 -- asr "$G/synth/synm001-01.wav" -o "$T/t.txt" --threads 0
t_ok "nothing written" test ! -e "$T/t.txt"
# the scenario key `audio.asr` (its run: tests/e2e/test_asr_run.sh, tests/unit/test_asr.c)
scn() { # $1 file, $2 the asr line, $3 an extra line of audio:
	cat > "$1" <<YAML
name: asr-audio
seed: 1
targets:
  - id: p
    kind: anonymised_speech
    source: audio
    audio:
      synthetic: {speakers: 8, utts: 3, brown: $PWD/data/brown}
      anonymise: {method: mcadams, low: 0.7, high: 0.9}
      $2
      $3
attacks:
  - {id: link, kind: linkage, target: p, attackers: [baseline]}
YAML
}
if [ -f data/brown/ca01 ]; then
	scn "$T/s1.yaml" "asr: {recogniser: pocketsphinx}" ""
	t_run "validate: asr pocketsphinx" 0 -- validate "$T/s1.yaml"
	scn "$T/s2.yaml" "asr: {recogniser: pocketsphinx}" "hyp: $T/s1.yaml"
	t_run "validate: asr with hyp" 1 -- validate "$T/s2.yaml"
	t_ok "located at hyp" grep -q "s2.yaml:11:7: \`hyp\` cannot be given with \`asr\`" "$ERR"
	scn "$T/s3.yaml" "asr: {recogniser: pocketsphinx, model: $T/model}" ""
	t_run "validate: asr model folder without the model" 1 -- validate "$T/s3.yaml"
	t_ok "located at model" grep -q "s3.yaml:10:46: PocketSphinx model folder $T/model: cannot read 'en-us/mdef'" "$ERR"
	scn "$T/s4.yaml" "asr: {recogniser: whisper}" ""
	t_run "validate: unknown recogniser" 1 -- validate "$T/s4.yaml"
	t_ok "names the choices" grep -q "'recogniser' must be 'pocketsphinx' or 'onnx', got 'whisper'" "$ERR"
else
	echo "# SKIP: data/brown missing (sh .ci/deps fetches it)"
fi

t_run "help" 0 -- asr --help
t_ok "help names PocketSphinx and the model folder" grep -q "pocketsphinx/model/en-us" "$OUT"
t_done
