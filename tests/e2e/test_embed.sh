#!/bin/bash
# tests/e2e/test_embed.sh - `vpaudit embed` end to end on tests/golden/embed
# (the numbers themselves are checked against PyTorch in tests/unit/test_embed.c):
# text and binary archives, the same archive for any thread count, the text
# archive's values equal to the binary's, and one exact error line (exit 1 or
# 2, no archive left) per bad input.
. tests/e2e/lib.sh
G=tests/golden/embed

t_run "help" 0 -- embed --help
t_ok "help names --chunk and the front-end options" grep -q -- "--num-mel-bins" "$OUT"
t_run "text archive" 0 -- embed $G/ecapa.onnx $G/data -o "$T/e.txt" --num-mel-bins=20 --text
t_ok "six entries" test "$(grep -c '^u[1-6]  \[ ' "$T/e.txt")" = 6
t_ok "16 values each" test "$(awk '{print NF}' "$T/e.txt" | sort -u)" = 19
t_run "binary archive, 1 thread" 0 -- embed $G/ecapa.onnx $G/data -o "$T/e1.ark" --num-mel-bins=20 --threads 1
t_run "binary archive, 3 threads" 0 -- embed $G/ecapa.onnx $G/data -o "$T/e3.ark" --num-mel-bins=20 --threads=3
t_ok "same archive for any thread count" cmp -s "$T/e1.ark" "$T/e3.ark"
t_ok "binary FV entries" test "$(grep -a -o 'BFV ' "$T/e1.ark" | wc -l)" = 6
# binary -> values (float32 after 'FV \4 <int32>') equal to the text archive's %.9g
first_bin() { tail -c +$(( $(grep -a -b -o 'BFV ' "$1" | head -n1 | cut -d: -f1) + 10 )) "$1" | head -c 64 | od -An -tf4 -v | tr -s ' ' '\n' | grep -v '^$' | head -n 3 | paste -sd' '; }
first_txt() { head -n1 "$1" | awk '{print $3, $4, $5}'; }
close3() { echo "$1 $2" | awk '{ok = 1; for (i = 1; i <= 3; i++) { d = $i - $(i + 3); if (d < 0) d = -d; if (d > 1e-7 * (1 + ($i < 0 ? -$i : $i))) ok = 0 } exit !ok}'; }
t_ok "binary values are the text values" close3 "$(first_bin "$T/e1.ark")" "$(first_txt "$T/e.txt")"
t_run "chunks, bft, audio files" 0 -- embed $G/tdnn_bft.onnx $G/data/wav/u1.wav $G/data/wav/u6.wav -o "$T/b.txt" --num-mel-bins=20 --layout=bft --chunk=30 --text
t_ok "ids from the file names" test "$(cut -d' ' -f1 "$T/b.txt" | paste -sd,)" = "u1,u6"
t_run "an intermediate value" 0 -- embed $G/ecapa.onnx $G/data -o "$T/i.txt" --num-mel-bins=20 --text --output emb

t_run "wrong feature dimension" 1 -- embed $G/ecapa.onnx $G/data -o "$T/bad.ark"
t_ok "its line" grep -qx "vpaudit embed: error: $G/ecapa.onnx: input 'feats' (1, time, 20) wants 20 features per frame (--layout btf), the front-end gives 23 (fbank --num-mel-bins=23)" "$ERR"
t_ok "no archive left" test ! -e "$T/bad.ark"
t_run "unknown output" 1 -- embed $G/ecapa.onnx $G/data -o "$T/bad.ark" --num-mel-bins=20 --output nope
t_ok "its line" grep -qx "vpaudit embed: error: $G/ecapa.onnx: no value named 'nope' in the graph (graph outputs: emb) (nearest: 'emb', 'feats', '/Sub_output_0')" "$ERR"
t_run "missing model" 1 -- embed "$T/none.onnx" $G/data -o "$T/bad.ark"
t_ok "one line" test "$(wc -l < "$ERR")" = 1
t_run "bad layout" 2 -- embed $G/ecapa.onnx $G/data -o "$T/bad.ark" --layout tbf
t_ok "its line" grep -qx "vpaudit embed: error: --layout must be auto, btf or bft, got 'tbf' (see 'vpaudit embed --help')" "$ERR"
t_run "bad chunk" 2 -- embed $G/ecapa.onnx $G/data -o "$T/bad.ark" --chunk=x
t_run "bad features" 2 -- embed $G/ecapa.onnx $G/data -o "$T/bad.ark" --features=plp
t_run "missing -o" 2 -- embed $G/ecapa.onnx $G/data
t_run "missing DATA" 2 -- embed $G/ecapa.onnx -o "$T/bad.ark"
t_run "unsupported operator" 1 -- embed tests/golden/onnx/bad_op.onnx $G/data -o "$T/bad.ark"
t_ok "names operator, node, opset" grep -q "node '.*' (Celu, opset [0-9]*): unsupported operator" "$ERR"
t_ok "no archive after errors" test ! -e "$T/bad.ark"

# ---- scenarios: anonymised_speech from audio (import.extractor + SET: {audio: DIR}) ----
S=tests/e2e/data/embed
t_run "validate the audio scenario" 0 -- validate $S/audio.yaml
t_ok "validate is silent" test ! -s "$OUT" -a ! -s "$ERR"
t_run "run the audio scenario" 0 -- run $S/audio.yaml -o "$T/sa" --quiet
t_run "embed train" 0 -- embed $G/ecapa.onnx $S/train -o "$T/train.ark" --num-mel-bins=20
t_run "embed data" 0 -- embed $G/ecapa.onnx $G/data -o "$T/data.ark" --num-mel-bins=20
sed -e '/extractor:/d' \
    -e "s#train: {audio: train}#train: {vectors: $T/train.ark, utt2spk: $PWD/$S/train/utt2spk}#" \
    -e "s#trial: {audio: ../../../golden/embed/data}, trial_anon: {audio: ../../../golden/embed/data}#trial: {vectors: $T/data.ark, utt2spk: $PWD/$G/data/utt2spk}, trial_anon: {vectors: $T/data.ark, utt2spk: $PWD/$G/data/utt2spk}#" \
    -e "s#{audio: ../../../golden/embed/data}#{vectors: $T/data.ark, utt2spk: $PWD/$G/data/utt2spk, spk2gender: $PWD/$G/data/spk2gender}#" \
    $S/audio.yaml > "$T/vectors.yaml"
t_run "the same scenario on vpaudit embed's archives" 0 -- run "$T/vectors.yaml" -o "$T/sv" --quiet
metrics() { grep -E '"(eer|eer_threshold|cllr|cllr_min)": [-0-9.e]+' "$1/results.json"; }
t_ok "records from audio equal the records from the archives" test "$(metrics "$T/sa" | md5sum)" = "$(metrics "$T/sv" | md5sum)"
t_ok "and there are records to compare" test "$(metrics "$T/sa" | wc -l)" -ge 8
t_ok "slicing records from audio" grep -q '"attack": "slice' "$T/sa/results.json"

bad() { # NAME, sed expression on audio.yaml, expected error line (after 'vpaudit validate: error: ')
	sed -e "$2" $S/audio.yaml > $S/bad.yaml
	t_run "scenario: $1" 1 -- validate $S/bad.yaml
	t_ok "scenario: $1: its line" grep -qxF "vpaudit validate: error: $3" "$ERR"
	rm -f $S/bad.yaml
}
bad "front-end against the model" 's/--num-mel-bins=20/--num-mel-bins=24/' \
	"$S/bad.yaml:16:26: $S/../../../golden/embed/ecapa.onnx: input 'feats' (1, time, 20) wants 20 features per frame (--layout btf), the front-end gives 24 (fbank --num-mel-bins=24)"
sed -e 's#model: ../../../golden/embed/ecapa.onnx#model: ../../../golden/onnx/bad_op.onnx#' $S/audio.yaml > $S/bad.yaml
t_run "scenario: unsupported operator" 1 -- validate $S/bad.yaml
t_ok "scenario: unsupported operator: names operator, node, opset at the model key" grep -qF "vpaudit validate: error: $S/bad.yaml:16:26: $S/../../../golden/onnx/bad_op.onnx: node 'celu_1' (Celu, opset 13): unsupported operator (supported: Abs," "$ERR"
rm -f $S/bad.yaml
bad "unknown front-end option" 's/--num-mel-bins=20/--num-bins=20/' \
	"$S/bad.yaml:16:70: unknown option '--num-bins'"
bad "extractor key as an option" 's/--num-mel-bins=20/--chunk=20/' \
	"$S/bad.yaml:16:70: '--chunk' is a key of the extractor: write \`chunk: ...\` next to \`model\`"
bad "audio without extractor" '/extractor:/d' \
	"$S/bad.yaml:16:14: set 'train' is audio: \`import:\` needs an \`extractor:\` (an ONNX model and its front-end)"
bad "audio with vectors" 's#train: {audio: train}#train: {audio: train, vectors: x.ark}#' \
	"$S/bad.yaml:17:29: \`vectors\` cannot go with \`audio\` (speakers, genders and durations come from the data directory)"
bad "audio is a folder" 's#train: {audio: train}#train: {audio: audio.yaml}#' \
	"$S/bad.yaml:17:22: 'audio.yaml' is not a folder"
bad "neither vectors nor audio" 's#train: {audio: train}#train: {utt2spk: train/utt2spk}#' \
	"$S/bad.yaml:17:14: set 'train' needs \`vectors\` (embeddings) or \`audio\` (a data directory)"
# validate opens every recording's header (issue 31): an 8 kHz file in an import
# set or in a slicing set passes (a scenario resamples it to the front-end's
# rate), a missing one is an error at its wav.scp line, before any run
D8=$T/d8; mkdir -p "$D8/wav"; cp $G/data/utt2spk $G/data/spk2gender "$D8/"
for u in u1 u2 u3 u4 u5 u6; do echo "$u $D8/wav/$u.wav"; done > "$D8/wav.scp"
cp $G/data/wav/*.wav "$D8/wav/"
sox -V1 $G/data/wav/u3.wav -r 8000 "$D8/wav/u3.wav"
good() { # NAME, sed expression on audio.yaml: validate passes
	sed -e "$2" $S/audio.yaml > $S/good.yaml
	t_run "scenario: $1" 0 -- validate $S/good.yaml
	rm -f $S/good.yaml
}
good "an 8 kHz recording in an import set passes (resampled)" "s#enroll: {audio: ../../../golden/embed/data}#enroll: {audio: $D8}#"
good "an 8 kHz recording in a slicing set passes (resampled)" "s#{duration: 1, trial: {audio: ../../../golden/embed/data}#{duration: 1, trial: {audio: $D8}#"
rm "$D8/wav/u5.wav"
cp $G/data/wav/u3.wav "$D8/wav/u3.wav"
bad "a missing recording in an import set" "s#enroll: {audio: ../../../golden/embed/data}#enroll: {audio: $D8}#" \
	"$D8/wav.scp:5: cannot open '$D8/wav/u5.wav': No such file or directory"
t_done
