#!/bin/bash
# tests/e2e/test_wavein.sh - issue 31 items 8 and 10 through the command line:
# `vpaudit embed --input=waveform` on tests/golden/wavein (PyTorch's embeddings,
# |a - b| <= 1e-6 + 1e-5 |b|; the numbers are also checked in
# tests/unit/test_wavein.c), the same archive for 1 and 2 threads, the --chunk
# a fixed-length model needs named in its error, `onnx info --values` (every
# value with its shape for a given length), the nearest names of a mistyped
# value, and features' float32 .npy chaining into `onnx run` (float64 with a
# note).  Each bad input: one exact line, exit 1 or 2, no output left.
. tests/e2e/lib.sh
G=tests/golden/wavein

# text archive against a golden text archive: same keys, values within tolerance
close_ark() {
	awk 'NR == FNR { k[$1] = $0; next }
	     { if (!($1 in k)) exit 1; split(k[$1], a, " "); if (NF != length(a)) exit 1;
	       for (i = 3; i < NF; i++) { d = $i - a[i]; if (d < 0) d = -d; b = a[i] < 0 ? -a[i] : a[i];
	         if (d > 1e-6 + 1e-5 * b) exit 1 } n++ }
	     END { exit n != 3 }' "$2" "$1"
}

t_run "help names --input=waveform" 0 -- embed --help
t_ok "its line" grep -q -- "--input=waveform|features" "$OUT"
t_run "waveform extractor" 0 -- embed $G/wavein.onnx $G/data -o "$T/w.txt" --input=waveform --text --threads=1
t_ok "equal to PyTorch" close_ark "$T/w.txt" $G/emb.txt
t_run "2 threads, binary" 0 -- embed $G/wavein.onnx $G/data -o "$T/w2.ark" --input waveform --threads=2
t_run "1 thread, binary" 0 -- embed $G/wavein.onnx $G/data -o "$T/w1.ark" --input waveform --threads=1
t_ok "same archive for any thread count" cmp -s "$T/w1.ark" "$T/w2.ark"
t_run "fixed-length model in chunks" 0 -- embed $G/wavein_fixed.onnx $G/data -o "$T/f.txt" --input=waveform --chunk=16000 --text
t_ok "equal to PyTorch's chunk average" close_ark "$T/f.txt" $G/emb_fixed.txt
t_run "Conv1d framing, (batch, 1, time)" 0 -- embed $G/wavein_conv.onnx $G/data -o "$T/c.txt" --input=waveform --text
t_ok "equal to PyTorch" close_ark "$T/c.txt" $G/emb_conv.txt

bad() { # name, status, expected stderr line, args...
	local name=$1 st=$2 line=$3; shift 3
	t_run "$name" "$st" -- "$@"
	t_ok "$name: one line" [ "$(wc -l < "$ERR")" = 1 ]
	t_ok "$name: the line" grep -qxF "$line" "$ERR"
	t_ok "$name: no output" [ ! -e "$T/bad" ] && [ ! -s "$OUT" ]
}
bad "fixed time axis" 1 "vpaudit embed: error: $G/wavein_fixed.onnx: input 'wav' (1, 16000) has a fixed time axis of 16000 samples: use --chunk=16000 (scenario key chunk: 16000; chunk embeddings averaged)" \
	embed $G/wavein_fixed.onnx $G/data -o "$T/bad" --input=waveform
bad "waveform model fed features" 1 "vpaudit embed: error: $G/wavein.onnx: input 'wav' (batch, time) has rank 2: expected (batch, time, features) (--layout btf) or (batch, features, time) (--layout bft); a waveform input (batch, time) takes --input=waveform" \
	embed $G/wavein.onnx $G/data -o "$T/bad"
bad "cmn with a waveform" 1 "vpaudit embed: error: $G/wavein.onnx: --cmn applies to features: a waveform input is fed as it is (--input=waveform)" \
	embed $G/wavein.onnx $G/data -o "$T/bad" --input=waveform --cmn=true
bad "mistyped --output" 1 "vpaudit embed: error: $G/wavein.onnx: no value named '/back/c1/Conv_outptu_0' in the graph (graph outputs: emb) (nearest: '/back/c1/Conv_output_0', '/back/c2/Conv_output_0', '/back/Cast_output_0')" \
	embed $G/wavein.onnx $G/data -o "$T/bad" --input=waveform --output=/back/c1/Conv_outptu_0

# onnx info --values
t_run "info --values --length" 0 -- onnx info $G/wavein.onnx --values --length 16000
t_ok "the values line" grep -qx "values: 81 computed, shapes for wav (1, 16000)" "$OUT"
t_ok "the STFT's output: 101 frames of 257 bins" grep -qx "  /STFT_output_0  float32  (1, 101, 257, 2)  STFT" "$OUT"
t_ok "a hidden layer's shape: 32 channels, 97 frames" grep -qx "  /back/c1/Conv_output_0  float32  (1, 32, 97)  Conv" "$OUT"
t_ok "the embedding" grep -qx "  emb  float32  (1, 16)  Gemm" "$OUT"
t_run "info --values --dim" 0 -- onnx info $G/wavein.onnx --values --dim time=32000
t_ok "another length, other shapes" grep -qx "  /STFT_output_0  float32  (1, 201, 257, 2)  STFT" "$OUT"
t_run "info without --values lists no values" 0 -- onnx info $G/wavein.onnx
t_ok "no values line" sh -c "! grep -q '^values:' '$OUT'"
bad "info --values without a length" 2 "vpaudit onnx: error: input 'wav' has the unknown dimension 'time': give --length N or --dim time=N (see 'vpaudit onnx --help')" \
	onnx info $G/wavein.onnx --values
bad "info --values with a length too short" 1 "vpaudit onnx: error: $G/wavein.onnx: node '/Pad' (Pad): reflect pads must be smaller than the axis (100)" \
	onnx info $G/wavein.onnx --values --length 100
bad "info --length without --values" 2 "vpaudit onnx: error: --length and --dim go with --values (see 'vpaudit onnx --help')" \
	onnx info $G/wavein.onnx --length 100
bad "mistyped --outputs" 1 "vpaudit onnx: error: $G/wavein.onnx: the graph has no value '/STFT_outptu_0' (nearest: '/STFT_output_0', '/Shape_output_0', '/Slice_output_0')" \
	onnx run $G/wavein.onnx -i wav=$G/stft_x.npy -o "$T/bad" --outputs /STFT_outptu_0

# features -> .npy -> onnx run: float32 as it is, float64 converted with a note
t_run "features float32 .npy" 0 -- features fbank $G/data -o "$T/f32/" --num-mel-bins=20 --npy-dtype=float32
t_ok "'<f4' .npy" grep -q "'descr': '<f4'" "$T/f32/u1.npy"
t_run "features float64 .npy" 0 -- features fbank $G/data -o "$T/f64/" --num-mel-bins=20
t_ok "'<f8' .npy" grep -q "'descr': '<f8'" "$T/f64/u1.npy"
t_run "float32 features chain into onnx run" 0 -- onnx run $G/chain.onnx -i feats=$T/f32/u1.npy -o "$T/o32"
t_ok "no note" [ ! -s "$ERR" ]
t_run "float64 features chain into onnx run" 0 -- onnx run $G/chain.onnx -i feats=$T/f64/u1.npy -o "$T/o64"
t_ok "with a note" grep -qxF "vpaudit onnx: note: $T/f64/u1.npy is float64, input 'feats' float32: converted (rounded to float32)" "$ERR"
t_ok "the same result (features are float32 values)" cmp -s "$T/o32/mean.npy" "$T/o64/mean.npy"
bad "features --npy-dtype with an archive" 2 "vpaudit features: error: --npy-dtype applies to .npy output (OUT ending in '/') (see 'vpaudit features --help')" \
	features fbank $G/data -o "$T/bad" --npy-dtype=float32
# ---- a scenario: anonymised_speech with `extractor: {..., input: waveform}` ----
S=tests/e2e/data/wavein
t_run "validate the waveform scenario" 0 -- validate $S/audio.yaml
t_ok "validate is silent" test ! -s "$OUT" -a ! -s "$ERR"
t_run "run the waveform scenario" 0 -- run $S/audio.yaml -o "$T/sa" --quiet
t_run "embed train" 0 -- embed $G/wavein.onnx $S/train -o "$T/train.ark" --input=waveform
t_run "embed data" 0 -- embed $G/wavein.onnx $G/data -o "$T/data.ark" --input=waveform
sed -e '/extractor:/d' \
    -e "s#train: {audio: train}#train: {vectors: $T/train.ark, utt2spk: $PWD/$S/train/utt2spk}#" \
    -e "s#{audio: ../../../golden/wavein/data}#{vectors: $T/data.ark, utt2spk: $PWD/$G/data/utt2spk, spk2gender: $PWD/$G/data/spk2gender}#" \
    $S/audio.yaml > "$T/vectors.yaml"
t_run "the same scenario on vpaudit embed's archives" 0 -- run "$T/vectors.yaml" -o "$T/sv" --quiet
metrics() { grep -E '"(eer|eer_threshold|cllr|cllr_min)": [-0-9.e]+' "$1/results.json"; }
t_ok "records from audio equal the records from the archives" test "$(metrics "$T/sa" | md5sum)" = "$(metrics "$T/sv" | md5sum)"
t_ok "and there are records to compare" test "$(metrics "$T/sa" | wc -l)" -ge 8
sbad() { # NAME, sed expression on audio.yaml, expected error line (after 'vpaudit validate: error: ')
	sed -e "$2" $S/audio.yaml > $S/bad.yaml
	t_run "scenario: $1" 1 -- validate $S/bad.yaml
	t_ok "scenario: $1: its line" grep -qxF "vpaudit validate: error: $3" "$ERR"
	rm -f $S/bad.yaml
}
sbad "fixed time axis" 's#wavein/wavein.onnx#wavein/wavein_fixed.onnx#' \
	"$S/bad.yaml:15:26: $S/../../../golden/wavein/wavein_fixed.onnx: input 'wav' (1, 16000) has a fixed time axis of 16000 samples: use --chunk=16000 (scenario key chunk: 16000; chunk embeddings averaged)"
sbad "cmn with a waveform" 's#input: waveform#input: waveform, cmn: true#' \
	"$S/bad.yaml:15:26: $S/../../../golden/wavein/wavein.onnx: --cmn applies to features: a waveform input is fed as it is (--input=waveform)"
sbad "features into a waveform model" 's#, input: waveform##' \
	"$S/bad.yaml:15:26: $S/../../../golden/wavein/wavein.onnx: input 'wav' (batch, time) has rank 2: expected (batch, time, features) (--layout btf) or (batch, features, time) (--layout bft); a waveform input (batch, time) takes --input=waveform"
t_done
