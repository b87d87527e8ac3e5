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
t_done
