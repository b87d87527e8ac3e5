#!/bin/bash
# tests/e2e/test_asr_onnx.sh - `vpaudit asr --onnx MODEL --tokens T` (issue 30):
# the hypotheses of the committed small CTC models (tests/golden/ctc/, made by
# gen.py with PyTorch: their greedy transcripts are hyp.txt, feat_hyp.txt)
# for waveform and features input, at 1 and 2 threads; the mixing rules
# (exit 2); a tokens file of the wrong size (one line naming both files,
# exit 1, nothing written).
. tests/e2e/lib.sh
G=tests/golden/ctc
one_line() { [ "$(wc -l < "$ERR")" = 1 ]; }

t_run "waveform model, 1 thread" 0 -- asr "$G/data" -o "$T/w1.txt" --onnx "$G/small_ctc.onnx" --tokens "$G/tokens.txt" --threads 1
t_ok "equal to PyTorch's greedy transcripts (10 utterances)" cmp -s "$T/w1.txt" "$G/hyp.txt"
t_ok "nothing on stdout or stderr" sh -c "test ! -s '$OUT' && test ! -s '$ERR'"
t_run "waveform model, 2 threads, --name=value forms" 0 -- asr "$G/data/wav.scp" -o "$T/w2.txt" --onnx="$G/small_ctc.onnx" --tokens="$G/tokens.txt" --threads=2
t_ok "the same text at 2 threads" cmp -s "$T/w2.txt" "$G/hyp.txt"
t_run "--normalise none" 0 -- asr "$G/data" -o "$T/raw.txt" --onnx "$G/small_ctc.onnx" --tokens "$G/tokens.txt" --normalise none
t_ok "the raw greedy text (hyp_raw.txt)" cmp -s "$T/raw.txt" "$G/hyp_raw.txt"
t_run "features model ([1, T, F], vpaudit's fbank)" 0 -- asr "$G/data" -o "$T/f.txt" --onnx "$G/feat_ctc.onnx" --tokens "$G/tokens.txt" --input features
t_ok "equal to PyTorch's transcripts on torchaudio's fbank" cmp -s "$T/f.txt" "$G/feat_hyp.txt"
t_run "features model [1, F, T] (--layout bft)" 0 -- asr "$G/data" -o "$T/fb.txt" --onnx "$G/feat_ctc_bft.onnx" --tokens "$G/tokens.txt" --input features --layout bft
t_ok "the same transcripts" cmp -s "$T/fb.txt" "$G/feat_hyp.txt"
t_run "a front-end option as --NAME=VALUE reaches the front-end" 1 -- asr "$G/data" -o "$T/nm.txt" --onnx "$G/feat_ctc.onnx" --tokens "$G/tokens.txt" --input features --num-mel-bins=40
t_ok "... one line: the model expects 23 (fbank's default), got 40" \
	grep -qx "vpaudit asr: error: $G/feat_ctc.onnx: input 'feats' has shape (1, 28, 40), the model expects (1, frames, 23)" "$ERR"
t_ok "... nothing written" test ! -e "$T/nm.txt"

# the mixing rules: usage errors
t_run "--tokens without --onnx" 2 -- asr "$G/data" -o "$T/x.txt" --tokens "$G/tokens.txt"
t_ok "says --tokens needs --onnx" grep -qx "vpaudit asr: error: --tokens applies to --onnx MODEL only (see 'vpaudit asr --help')" "$ERR"
t_run "--blank without --onnx" 2 -- asr "$G/data" -o "$T/x.txt" --blank 3
t_ok "says --blank needs --onnx" grep -qx "vpaudit asr: error: '--blank' applies to --onnx MODEL only (see 'vpaudit asr --help')" "$ERR"
t_run "--onnx without --tokens" 2 -- asr "$G/data" -o "$T/x.txt" --onnx "$G/small_ctc.onnx"
t_ok "says --onnx needs --tokens" grep -q -- '--onnx needs --tokens FILE' "$ERR"
t_run "--model with --onnx" 2 -- asr "$G/data" -o "$T/x.txt" --onnx "$G/small_ctc.onnx" --tokens "$G/tokens.txt" --model /tmp
t_ok "says --model is PocketSphinx's" grep -q -- "--model is PocketSphinx's model folder" "$ERR"
t_run "a bad value: --input spectrogram" 2 -- asr "$G/data" -o "$T/x.txt" --onnx "$G/small_ctc.onnx" --tokens "$G/tokens.txt" --input spectrogram
t_ok "names the option and the choices" grep -q -- "--input must be waveform or features, got 'spectrogram'" "$ERR"
t_run "a typo stays an unknown option" 2 -- asr "$G/data" -o "$T/x.txt" --threds=2
t_ok "... named" grep -q "unknown option '--threds'" "$ERR"
t_ok "nothing written by any of them" test ! -e "$T/x.txt"

# a tokens file of the wrong size
head -n 29 "$G/tokens.txt" > "$T/tok29.txt"
t_run "29 tokens for a 30-class model: exit 1" 1 -- asr "$G/data" -o "$T/t29.txt" --onnx "$G/small_ctc.onnx" --tokens "$T/tok29.txt"
t_ok "one line naming the model, the output and the tokens file" \
	sh -c "test \$(wc -l < '$ERR') = 1 && grep -q 'small_ctc.onnx' '$ERR' && grep -q 'tok29.txt' '$ERR' && grep -q '30' '$ERR' && grep -q '29' '$ERR'"
t_ok "nothing written" test ! -e "$T/t29.txt"
t_run "a missing model: exit 1" 1 -- asr "$G/data" -o "$T/m.txt" --onnx "$T/nothere.onnx" --tokens "$G/tokens.txt"
t_ok "one line naming it" sh -c "test \$(wc -l < '$ERR') = 1 && grep -q 'nothere.onnx' '$ERR'"
# ---- the scenario form: asr: {recogniser: onnx, model, tokens} -------------------
counts() { # the "ref_words ins del sub" of KEY in results.json $1
	awk -v k="\"$2\": {" 'index($0, k) { on = 1; next }
		on && /"(ref_words|ins|del|sub)":/ { gsub(/[",]/, ""); v[$1] = $2 }
		on && $1 == "sub:" { print v["ref_words:"], v["ins:"], v["del:"], v["sub:"]; exit }' "$1"
}
cli_counts() { # "ref_words ins del sub" of `vpaudit wer` REF HYP
	"$VPAUDIT" wer "$1" "$2" | sed -nE 's/^%WER [0-9.]+ \[ [0-9]+ \/ ([0-9]+), ([0-9]+) ins, ([0-9]+) del, ([0-9]+) sub \]$/\1 \2 \3 \4/p'
}
scen() { # scen FILE ASR-MAPPING
	cat > "$1" <<YAML
name: asr-onnx-run
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
      asr: $2
      rho_f0: false
      extractor: {epochs: 1, hidden: 16, emb_dim: 8, chunk: 100, batch: 8}
    backend: {lda_dim: 0, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: a, attackers: [baseline]}
YAML
}
if command -v espeak-ng > /dev/null; then
	C=$T/ec
	bash tests/e2e/audio/espeak_corpus.sh "$C" 2 4 > /dev/null 2>&1
	M=$PWD/$G/small_ctc.onnx; K=$PWD/$G/tokens.txt
	scen "$T/run.yaml" "{recogniser: onnx, model: $M, tokens: $K}"
	t_run "run with asr: {recogniser: onnx}" 0 -- run "$T/run.yaml" -o "$T/ro" --threads 2 --no-plots --quiet
	t_run "vpaudit asr --onnx on the original trials" 0 -- asr "$C/trial" -o "$T/h_orig.txt" --onnx "$M" --tokens "$K"
	t_run "... and on the anonymised trials" 0 -- asr "$C/trial_anon" -o "$T/h_anon.txt" --onnx "$M" --tokens "$K"
	o=$(counts "$T/ro/results.json" wer_orig); a=$(counts "$T/ro/results.json" wer_anon)
	t_ok "wer_orig counts ($o) = vpaudit asr --onnx + wer" test -n "$o" -a "$o" = "$(cli_counts "$C/trial/text" "$T/h_orig.txt")"
	t_ok "wer_anon counts ($a) = vpaudit asr --onnx + wer" test -n "$a" -a "$a" = "$(cli_counts "$C/trial/text" "$T/h_anon.txt")"
	t_ok "the record names the recogniser" grep -q '"name": "ONNX CTC model (greedy decoding)"' "$T/ro/results.json"
	h=$(sha256sum "$M" | cut -c1-12)
	t_ok "... and the model by file and SHA-256 ($h)" grep -qF "\"model\": \"$M (sha256 $h), tokens $K\"" "$T/ro/results.json"
	t_ok "... at the model's rate" jqt '.targets[0].info.audio.wer_orig.recogniser.rate == 16000 // false' "$T/ro/results.json"
	# validation, at the key
	scen "$T/v1.yaml" "{recogniser: onnx, model: $PWD/$G/small_ctc.onnx}"
	t_run "recogniser: onnx without tokens: validate exit 1" 1 -- validate "$T/v1.yaml"
	t_ok "... located at the recogniser, naming what it needs" grep -q "v1.yaml:[0-9]*:[0-9]*: \`recogniser: onnx\` needs \`model\` (the ONNX CTC model) and \`tokens\`" "$ERR"
	scen "$T/v2.yaml" "{recogniser: pocketsphinx, tokens: $PWD/$G/tokens.txt}"
	t_run "tokens with pocketsphinx: exit 1" 1 -- validate "$T/v2.yaml"
	t_ok "... says it applies to onnx" grep -q "\`tokens\` applies to \`recogniser: onnx\`" "$ERR"
	scen "$T/v3.yaml" "{recogniser: onnx, model: $PWD/$G/small_ctc.onnx, tokens: $T/tok29.txt}"
	t_run "a tokens file of the wrong size: exit 1" 1 -- validate "$T/v3.yaml"
	t_ok "... one line at the tokens key naming both files" \
		sh -c "head -n 1 '$ERR' | grep -q '^vpaudit validate: error: .*v3.yaml:[0-9]*:[0-9]*: .*tok29.txt'"
else
	echo "# SKIP: espeak-ng not installed (the scenario run and its validation)"
fi
t_done
