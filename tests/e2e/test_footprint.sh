#!/bin/bash
# tests/e2e/test_footprint.sh - the FL acoustic-model target and the A1
# footprint attack through the CLI: a simulated run dumps its models and its
# activations; importing either reproduces the simulated run's records
# exactly (same scores, so the same metrics to the last digit), and A2 on
# either import gives the same records; broken imports give one clear line.
. tests/e2e/lib.sh
top=$PWD
A=$top/tests/e2e/data/am
# the records without the simulator's utility numbers (an import has none,
# so its records also name them "undefined value" in "unreliable"); trailing
# commas dropped, as removing a line can leave one
records() { sed -n '/^  "records": \[/,/^  "sweep":/p' "$1" | grep -v '"utility_acc' | sed 's/,$//'; }
same() { test -n "$(records "$1")" && cmp -s <(records "$1") <(records "$2"); }

cd "$T"
# sim.yaml dumps into the current folder, outside `-o sim`: refused without the flag
t_run "dumps outside the output folder need --allow-writes-outside" 1 -- run "$A/sim.yaml" -o sim --no-plots --quiet
t_ok "nothing dumped without the flag" test ! -e am-models -a ! -e am-acts -a ! -e sim
t_run "simulated run with dumps" 0 -- run "$A/sim.yaml" -o sim --no-plots --quiet --allow-writes-outside
t_ok "models.txt dumped" grep -q '^global - global$' am-acts/models.txt
t_ok "24 personalised models" test "$(grep -c ' part[12]$' am-acts/models.txt)" = 24
t_ok "activation files per layer" test -f am-acts/global/layer3/ind000-u01.npy
t_ok "model folders" test -f am-models/p2spk000-m1/model.yaml
t_ok "indicator features" test "$(ls am-models/indicator | wc -l)" = 6
cp "$A/acts.yaml" "$A/models.yaml" .
t_run "import of activations" 0 -- run acts.yaml -o acts --no-plots --quiet
t_run "import of model folders" 0 -- run models.yaml -o models --no-plots --quiet
t_ok "9 A1 records" test "$(records sim/results.json | grep -c '"attack": "a1"')" = 9
t_ok "activations reproduce the simulated records exactly" \
	same sim/results.json acts/results.json
t_ok "model folders reproduce the simulated records exactly" \
	same sim/results.json models/results.json
t_ok "EERs are in the records" test "$(records acts/results.json | grep -c '"eer": [0-9]')" = 9
t_ok "the import is not labelled simulated" grep -q '"simulated": false' acts/results.json

# A2 on both imports, its layers on 2 threads: the same records either way
for f in acts models; do
	sed 's/^  - {id: a1, kind: a1_footprint, target: fl}$/  - {id: a2, kind: a2_footprint, target: fl, hidden: 16, embedding_dim: 8, epochs: 3}/' \
		$f.yaml > a2-$f.yaml
	t_run "A2 on imported $f, 2 threads" 0 -- run a2-$f.yaml -o a2-$f --threads 2 --no-plots --quiet
done
t_ok "3 A2 records" test "$(records a2-acts/results.json | grep -c '"attack": "a2"')" = 3
t_ok "A2: activations and model folders give the same records" \
	same a2-acts/results.json a2-models/results.json
# a personalised model's activation file cut short: found by the A2 layer jobs
cp am-acts/p1spk000-m2/layer3/ind000-u01.npy keep.npy
head -c 300 keep.npy > am-acts/p1spk000-m2/layer3/ind000-u01.npy
t_run "A2, truncated activation file, 2 threads" 1 -- run a2-acts.yaml -o a2-bad --threads 2 --no-plots --quiet
t_ok "names the attack and the file" grep -q "attack 'a2': am-acts/p1spk000-m2/layer3/ind000-u01.npy: truncated" "$ERR"
t_ok "one error line (and its source excerpt)" test "$(grep -c 'error:' "$ERR")" = 1
t_ok "no report file (the folder is checked before the run)" test ! -e a2-bad/results.json -a ! -e a2-bad/report.html -a ! -e a2-bad/report.pdf
cp keep.npy am-acts/p1spk000-m2/layer3/ind000-u01.npy

# non-finite values and wrong shapes in imported activations and Indicator
# features (issue 20: NaN gave Cllr 6.5e307; a 1-D file read "found 0 dimensions")
poke_nan() { # FILE ELEMENT: overwrite a float64 element of a .npy with NaN (or $3: inf)
	local hl; hl=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')
	printf "${3:-\\x00\\x00\\x00\\x00\\x00\\x00\\xf8\\x7f}" |
		dd of="$1" bs=1 seek=$((10 + hl + 8 * $2)) conv=notrunc 2> /dev/null
}
mknpy() { # FILE SHAPE BYTES: a float64 .npy (version 1.0)
	local d="{'descr': '<f8', 'fortran_order': False, 'shape': $2, }"
	local n=$(( (10 + ${#d} + 1 + 15) / 16 * 16 - 10 ))
	{ printf '\223NUMPY\001\000'; printf "\\$(printf %03o $((n % 256)))\\$(printf %03o $((n / 256)))"
	  printf '%s' "$d"; printf "%$((n - ${#d} - 1))s\n" ''; printf "$3"; } > "$1"
}
f=am-acts/p2spk001-m2/layer2/ind001-u02.npy
cp $f keep.npy
poke_nan $f 29
t_run "NaN in an activation file" 1 -- run acts.yaml -o x --no-plots --quiet
t_ok "NaN: names the file and the element" grep -q "$f: element (1, 5) (0-based) is not finite (nan)$" "$ERR"
t_ok "NaN: one error line, no output" sh -c "test \$(grep -c 'error:' '$ERR') = 1 && test ! -e x/results.json -a ! -e x/report.html -a ! -e x/report.pdf"
poke_nan $f 0 '\x00\x00\x00\x00\x00\x00\xf0\xff'
t_run "-inf in an activation file" 1 -- run acts.yaml -o x --no-plots --quiet
t_ok "-inf: names the file and the element" grep -q "$f: element (0, 0) (0-based) is not finite (inf)$" "$ERR"
mknpy $f '(3,)' '\0\0\0\0\0\0\360\077\0\0\0\0\0\0\360\077\0\0\0\0\0\0\360\077'
t_run "1-D activation file" 1 -- run acts.yaml -o x --no-plots --quiet
t_ok "1-D: 'found 1 dimension'" grep -q "$f: expected a 2-D array (frames x dim), found 1 dimension$" "$ERR"
cp keep.npy $f
g=am-models/indicator/ind002-u01.npy
cp $g keep.npy
poke_nan $g 3
t_run "NaN in an Indicator feature file" 1 -- run models.yaml -o x --no-plots --quiet
t_ok "Indicator NaN: names the file and the element" grep -q "$g: element (0, 3) (0-based) is not finite (nan)$" "$ERR"
poke_nan $g 3 '\x00\x00\x00\x00\x00\x00\xf0\x7f'
t_run "inf in an Indicator feature file" 1 -- run models.yaml -o x --no-plots --quiet
t_ok "Indicator inf: the element" grep -q "$g: element (0, 3) (0-based) is not finite (inf)$" "$ERR"
poke_nan $g 3 '\x00\x00\x00\x00\x00\x00\xf0\x47'
t_run "float64 beyond float32 in an Indicator feature file" 1 -- run models.yaml -o x --no-plots --quiet
t_ok "Indicator 2^128: outside the float32 range" grep -q "$g: element (0, 3) (0-based) is outside the float32 range$" "$ERR"
cp keep.npy $g

# ---- ONNX models (tests/golden/flam/gen.py: the simulator's models exported from PyTorch)
G=$top/tests/golden/flam
L=$(paste -sd, "$G/layers.txt" | sed 's/,/, /g')
onnx_yaml() { # $1 = extra import keys
	sed "s#import: {.*}#import: {models: $G/models.txt, model_dir: $G, onnx_layers: [$L]$1}#" models.yaml
}
onnx_yaml ", indicator: am-models/indicator" > onnx.yaml
t_run "validate the ONNX import" 0 -- validate onnx.yaml
t_run "import of ONNX models" 0 -- run onnx.yaml -o onnx --no-plots --quiet
# the engine's float32 sums differ from the model.yaml path's in the last bits:
# every number to 5 significant digits
r5() { records "$1" | awk '{ if (match($0, /": -?[0-9][0-9.e+-]*$/)) { k = substr($0, 1, RSTART + 1); v = substr($0, RSTART + 3); printf "%s %.5g\n", k, v } else print }'; }
t_ok "ONNX models give the model folders' records (5 digits; but the value names)" \
	cmp -s <(r5 onnx/results.json | grep -v '"layer_name"') <(r5 models/results.json)
t_ok "an ONNX record names the value its layer was read from" \
	test "$(grep -c "\"layer_name\": \"$(sed -n 2p "$G/layers.txt")\"" onnx/results.json)" = 3
t_ok "and the model folders' records have no value name" test "$(grep -c '"layer_name"' models/results.json)" = 0
t_ok "and the records have numbers" test "$(r5 onnx/results.json | grep -c '"cllr": [0-9]')" = 9
# the Indicator set as audio, features by the target's front-end options, against
# the same features given as a Kaldi archive by `vpaudit features`
E=$top/tests/golden/embed/data
onnx_yaml ", indicator: $E, feature_options: [--num-mel-bins=40]" > onnx-audio.yaml
cd "$top" # wav.scp paths are relative to the current folder (Kaldi's convention)
t_run "ONNX models, Indicator as audio" 0 -- run "$T/onnx-audio.yaml" -o "$T/onnx-audio" --no-plots --quiet
t_run "the Indicator features by vpaudit features" 0 -- features fbank --num-mel-bins=40 $E -o "$T/ind.ark"
cd "$T"
onnx_yaml ", indicator: ind.ark" > onnx-ark.yaml
t_run "ONNX models, Indicator as an archive" 0 -- run onnx-ark.yaml -o onnx-ark --no-plots --quiet
t_ok "audio and archive Indicator give the same records" same onnx-audio/results.json onnx-ark/results.json
t_ok "6 Indicator utterances from the audio" grep -q '"indicator_utterances": 6' onnx-audio/results.json
# validate opens the Indicator's audio headers (issue 31): an 8 kHz file passes
# (resampled to the front-end's rate when read); a missing one would be named
I8=$T/ind8; mkdir -p "$I8/wav"; cp "$E/utt2spk" "$E/spk2utt" "$I8/"
for u in u1 u2 u3 u4 u5 u6; do echo "$u $I8/wav/$u.wav"; done > "$I8/wav.scp"
cp "$E"/wav/*.wav "$I8/wav/"; sox -V1 "$E/wav/u4.wav" -r 8000 "$I8/wav/u4.wav"
onnx_yaml ", indicator: $I8, feature_options: [--num-mel-bins=40]" > ind8.yaml
t_run "an 8 kHz file in the Indicator audio passes validate (resampled)" 0 -- validate ind8.yaml
rm "$I8/wav/u4.wav"
t_run "a missing file in the Indicator audio" 1 -- validate ind8.yaml
t_ok "named at its wav.scp line" grep -q "error: $I8/wav.scp:4: cannot open '$I8/wav/u4.wav'" "$ERR"
# bad input
onnx_yaml ", indicator: am-models/indicator" | sed "s#/mods.3/Relu_output_0#hidden9#" > bad-onnx.yaml
t_run "unknown layer name" 1 -- validate bad-onnx.yaml
t_ok "its line names the value" grep -q "bad-onnx.yaml:9:.*global.onnx: no value named 'hidden9'" "$ERR"
t_ok "and suggests the nearest values" grep -q "no value named 'hidden9' (nearest: '[^']*', '[^']*', '[^']*')$" "$ERR"
mkdir -p badop && cp $top/tests/golden/onnx/bad_op.onnx badop/global.onnx
onnx_yaml ", indicator: am-models/indicator" | sed "s#model_dir: $G#model_dir: badop#" > badop.yaml
t_run "unsupported operator in the global model" 1 -- validate badop.yaml
t_ok "names operator, node and opset" grep -q "badop.yaml:9:.*badop/global.onnx: node 'celu_1' (Celu, opset 13): unsupported operator" "$ERR"
onnx_yaml ", indicator: $E, feature_options: [--num-mel-bins=24]" > bad-dim.yaml
cd "$top"
t_run "Indicator features of the wrong dimension" 1 -- run "$T/bad-dim.yaml" -o "$T/x" --no-plots --quiet
t_ok "one error line" test "$(grep -c 'error:' "$ERR")" = 1
cd "$T"
onnx_yaml ", indicator: $E, feature_options: [--num-bins=40]" > bad-opt.yaml
t_run "unknown front-end option" 1 -- validate bad-opt.yaml
t_ok "its line" grep -q "bad-opt.yaml:9:[0-9]*: unknown option '--num-bins'" "$ERR"

# broken imports
rm am-acts/p2spk001-m2/layer2/ind001-u02.npy
t_run "missing activation file" 1 -- run acts.yaml -o x --no-plots --quiet
t_ok "names the file" grep -q "am-acts/p2spk001-m2/layer2/ind001-u02.npy: cannot open" "$ERR"
printf 'g - global\nm1 s1 part3\n' > bad.txt
sed 's|models: am-acts/models.txt|models: bad.txt|' acts.yaml > bad.yaml
t_run "bad partition" 1 -- run bad.yaml -o x --no-plots --quiet
t_ok "bad partition line" grep -q "bad.txt:2: unknown partition 'part3': expected global, part1 or part2" "$ERR"
sed 's|activations: am-acts}|activations: am-acts, indicator: am-models/indicator}|' acts.yaml > both.yaml
t_run "activations and indicator" 1 -- validate both.yaml
t_ok "one of the two forms" grep -q "give either \`activations\` or \`model_dir\` and \`indicator\`, not both" "$ERR"
t_done
