#!/bin/bash
# tests/e2e/test_extractor_reuse.sh - ASV_eval and ASV_eval^anon trained in C saved
# (`extractor: {save}`) and reused (`from`, `from_anon`; issue 31 item 9): a run that
# reuses both extractors of an earlier run gives the same records and target info as
# the run that trained them (tools/results-same.sh, after removing the scenario
# echo, the input list and the three fields that name the folders); an ECAPA-TDNN
# ASV_eval reused with ASV_eval^anon fine-tuned from it gives the same records too;
# the saved ONNX models (x-vector, ECAPA-TDNN) as `onnx:` ASV_eval give every record's
# EER of the C extractor, and `vpaudit embed` runs the x-vector's;
# the reused files are in the provenance with their SHA-256; a missing folder, a
# written key that differs from the saved extractor's, and swapped folders are one
# located line, exit 1, nothing written.
. tests/e2e/lib.sh
C=$T/corpus
bash tests/e2e/audio/espeak_corpus.sh "$C" 16 8 > /dev/null 2>&1
t_ok "espeak-ng corpus made" test -s "$C/trial_anon/wav.scp"
scn() { # $1 file, $2 extractor keys
	cat > "$1" <<YAML
name: extractor-reuse
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
      rho_f0: false
      extractor: {$2}
    backend: {lda_dim: 8, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: a, attackers: [baseline, ignorant, lazy_informed, semi_informed]}
YAML
}
# results.json without what names the scenario, its inputs and the saved folders, and
# the one training field outside `timing` (chunk_frames: what an epoch of training
# draws, from the `chunk` key, which a reuse does not write)
strip() {
	jq 'walk(if type == "object" then del(.extractors_saved_files) else . end)' "$1/results.json" |
	awk '/^  "(scenario|inputs)": [{[]/ {skip = 1; next}
	     skip && /^  [}\]],?$/ {skip = 0; next}
	     skip {next}
	     /"(asv_eval_from|asv_eval_anon_from|extractors_saved|chunk_frames)": / {next}
	     {print}' > "$2"
}
X="hidden: 32, emb_dim: 16, epochs: 4, chunk: 150, batch: 16, semi_informed: finetune"
scn "$T/a.yaml" "$X, save: $T/out/extractors"
t_run "x-vector: train and save" 0 -- run "$T/a.yaml" -o "$T/out" --quiet
t_ok "both extractors saved" test -s "$T/out/extractors/asv_eval/extractor.yaml" -a \
	-s "$T/out/extractors/asv_eval_anon/net0/model.yaml"
t_ok "the folder is named in the info" grep -q "\"extractors_saved\": \"$T/out/extractors\"" "$T/out/results.json"
scn "$T/b.yaml" "from: out/extractors/asv_eval, from_anon: out/extractors/asv_eval_anon"
t_run "x-vector: reuse both (no size or front-end key written)" 0 -- run "$T/b.yaml" -o "$T/out2" --quiet
strip "$T/out" "$T/s1.json"; strip "$T/out2" "$T/s2.json"
t_ok "the same records and info apart from timing" tools/results-same.sh "$T/s1.json" "$T/s2.json"
t_ok "the records are there to compare" test "$(grep -c '"eer":' "$T/s2.json")" -ge 4
t_ok "nothing was trained" bash -c "! grep -q '\"train_asv_eval' '$T/out2/results.json' &&
	grep -q '\"load_asv_eval_anon\"' '$T/out2/results.json'"
t_ok "the reused files are inputs with their SHA-256" \
	bash -c "grep -A2 '\"path\": \".*out/extractors/asv_eval/net0/layer1.weight.npy\"' '$T/out2/results.json' | grep -q sha256 &&
		grep -q '\"path\": \".*out/extractors/asv_eval_anon/extractor.yaml\"' '$T/out2/results.json'"

# the saved x-vector as ONNX: ASV_eval given as `onnx:` (vpaudit's ONNX engine, the
# front-end of its vpaudit.embed_options) gives the EERs of the C extractor
t_ok "the x-vector also saved as ONNX" test -s "$T/out/extractors/asv_eval/model.onnx"
scn "$T/o.yaml" "from_anon: out/extractors/asv_eval_anon"
sed -i 's|      rho_f0: false|      rho_f0: false\n      onnx: {model: out/extractors/asv_eval/model.onnx, cmn: false, options: [--num-mel-bins=30, --cmvn=utt, --vad=true]}|' "$T/o.yaml"
t_run "ASV_eval as the saved ONNX model" 0 -- run "$T/o.yaml" -o "$T/oo" --quiet
t_ok "every record's EER equals the C extractor's" \
	test "$(grep -E '"eer(_sweep)?":' "$T/out/results.json")" = "$(grep -E '"eer(_sweep)?":' "$T/oo/results.json")"
t_run "vpaudit embed runs the saved model" 0 -- embed "$T/out/extractors/asv_eval/model.onnx" "$C/trial" \
	-o "$T/t.ark" --text --features=fbank --num-mel-bins=30 --cmvn=utt --vad=true --cmn=false \
	--sample-frequency=16000 --frame-length=25 --frame-shift=10 --layout=btf
t_ok "one 16-dimensional vector per trial utterance" \
	test "$(grep -c '^[^ ]*  \[\( [-0-9.e]*\)\{16\} \]$' "$T/t.ark")" = "$(grep -c . "$C/trial/wav.scp")"

# ECAPA-TDNN: ASV_eval reused, ASV_eval^anon fine-tuned from it again
E="architecture: ecapa, channels: 16, res2_scale: 4, emb_dim: 16, epochs: 3, chunk: 150, batch: 16, semi_informed: finetune"
scn "$T/c.yaml" "$E, save: $T/oc/extractors"
t_run "ECAPA-TDNN: train and save" 0 -- run "$T/c.yaml" -o "$T/oc" --quiet
t_ok "its nets saved" test -s "$T/oc/extractors/asv_eval/net5/model.yaml"
scn "$T/d.yaml" "epochs: 3, chunk: 150, batch: 16, semi_informed: finetune, from: oc/extractors/asv_eval"
t_run "ECAPA-TDNN: reuse ASV_eval, fine-tune ASV_eval^anon from it" 0 -- run "$T/d.yaml" -o "$T/od" --quiet --threads 2
strip "$T/oc" "$T/s3.json"; strip "$T/od" "$T/s4.json"
t_ok "the same records and info (2 threads against 1)" tools/results-same.sh "$T/s3.json" "$T/s4.json"
t_ok "the ECAPA-TDNN also saved as ONNX" test -s "$T/oc/extractors/asv_eval/model.onnx"
scn "$T/p.yaml" "from_anon: oc/extractors/asv_eval_anon"
sed -i 's|      rho_f0: false|      rho_f0: false\n      onnx: {model: oc/extractors/asv_eval/model.onnx, cmn: false, options: [--num-mel-bins=30, --cmvn=utt, --vad=true]}|' "$T/p.yaml"
t_run "ECAPA-TDNN ASV_eval as the saved ONNX model" 0 -- run "$T/p.yaml" -o "$T/op" --quiet
t_ok "every record's EER equals the C ECAPA-TDNN's" \
	test "$(grep -E '"eer(_sweep)?":' "$T/oc/results.json")" = "$(grep -E '"eer(_sweep)?":' "$T/op/results.json")"

# ---- bad input ----------------------------------------------------------------
scn "$T/e.yaml" "from: nowhere/asv_eval"
t_run "a missing folder" 1 -- run "$T/e.yaml" -o "$T/oe" --quiet
t_ok "one located line" grep -q "e.yaml:[0-9]*:[0-9]*: \`from\`: .*nowhere/asv_eval: expected a folder of an extractor saved by vpaudit" "$ERR"
t_ok "one error line (then the offending line)" test "$(grep -c 'error:' "$ERR")" = 1
t_ok "nothing written" test ! -e "$T/oe/results.json"
t_run "a missing folder: vpaudit validate" 1 -- validate "$T/e.yaml"
t_ok "validate names it" grep -q "e.yaml:[0-9]*:[0-9]*: \`from\`:" "$ERR"
scn "$T/f.yaml" "hidden: 64, from: out/extractors/asv_eval"
t_run "a size that differs from the saved one" 1 -- validate "$T/f.yaml"
t_ok "both sizes named at the key" grep -q "f.yaml:[0-9]*:[0-9]*: \`hidden: 64\` differs from the saved ASV_eval's 32" "$ERR"
scn "$T/g.yaml" "features: mfcc, from_anon: out/extractors/asv_eval_anon"
t_run "a front-end that differs from the saved one" 1 -- run "$T/g.yaml" -o "$T/og" --quiet
t_ok "both front-ends named" grep -q "g.yaml:[0-9]*:[0-9]*: \`features: mfcc\` differs from the saved ASV_eval^anon's fbank" "$ERR"
t_ok "nothing written" test ! -e "$T/og/results.json"
scn "$T/h.yaml" "architecture: ecapa, from: out/extractors/asv_eval"
t_run "another architecture than the saved one" 1 -- validate "$T/h.yaml"
t_ok "both architectures named" grep -q "h.yaml:[0-9]*:[0-9]*: \`architecture: ecapa\` differs from the saved ASV_eval's xvector" "$ERR"
scn "$T/i.yaml" "from: out/extractors/asv_eval_anon"
t_run "ASV_eval^anon given as ASV_eval" 1 -- validate "$T/i.yaml"
t_ok "the swap is named" grep -q "i.yaml:[0-9]*:[0-9]*: \`from\` expects a saved ASV_eval, 'out/extractors/asv_eval_anon' holds ASV_eval^anon" "$ERR"
scn "$T/j.yaml" "from: oc/extractors/asv_eval, from_anon: out/extractors/asv_eval_anon"
t_run "two saved extractors of different sizes" 1 -- validate "$T/j.yaml"
t_ok "both named" grep -q "j.yaml:[0-9]*:[0-9]*: the saved ASV_eval^anon has \`architecture: xvector\` and the saved ASV_eval (\`from\`) \`architecture: ecapa\`" "$ERR"
scn "$T/k.yaml" "$X, save: /tmp/elsewhere-$$"
t_run "save outside the output folder" 1 -- run "$T/k.yaml" -o "$T/ok" --quiet
t_ok "refused at the key" grep -q "k.yaml:[0-9]*:[0-9]*: .*is outside the output folder" "$ERR"
# without `save`: what the run trained goes to OUT/extractors by itself (autosave), listed
# with the SHA-256 of each ONNX copy, and a re-run reuses it from there
scn "$T/auto.yaml" "$X"
t_run "autosave: train without save" 0 -- run "$T/auto.yaml" -o "$T/auto" --quiet
t_ok "autosave: both extractors in OUT/extractors" test -s "$T/auto/extractors/asv_eval/extractor.yaml" -a \
	-s "$T/auto/extractors/asv_eval_anon/model.onnx"
for r in asv_eval asv_eval_anon; do
	h=$(sha256sum "$T/auto/extractors/$r/model.onnx" | cut -d' ' -f1)
	t_ok "autosave: results.json lists $r's ONNX copy (relative to the output folder) with its SHA-256" \
		jqt --arg r "$r" --arg h "$h" --arg f "extractors/$r/model.onnx" \
		'[.targets[0].info.audio.extractors_saved_files[] | select(.role == $r)] | length == 1 and .[0].onnx == $f and .[0].onnx_sha256 == $h' "$T/auto/results.json"
done
scn "$T/auto2.yaml" "from: $T/auto/extractors/asv_eval, from_anon: $T/auto/extractors/asv_eval_anon"
t_run "autosave: a re-run reuses them" 0 -- run "$T/auto2.yaml" -o "$T/auto2" --quiet
strip "$T/auto" "$T/a1.json"; strip "$T/auto2" "$T/a2.json"
t_ok "autosave: the same records and info" tools/results-same.sh "$T/a1.json" "$T/a2.json"
t_ok "autosave: a run that trains nothing writes no extractors folder" test ! -e "$T/auto2/extractors"
scn "$T/auto3.yaml" "$X, autosave: false"
t_run "autosave: false" 0 -- run "$T/auto3.yaml" -o "$T/auto3" --quiet
t_ok "autosave: false writes none" test ! -e "$T/auto3/extractors"
t_run "validate writes nothing" 0 -- validate "$T/auto.yaml"
t_done
