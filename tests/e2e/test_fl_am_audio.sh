#!/bin/bash
# tests/e2e/test_fl_am_audio.sh - fl_acoustic_models `source: audio` (issue 32):
# its checks (one line naming the file, line and what was expected, exit 1,
# nothing written) and a small run on the golden recordings (6 recordings as
# 12 utterances of 6 speakers, frame labels by position: a plumbing check of
# the sets, identical records on 1 and 2 threads, dump_models re-imported
# with the same A1/A2 numbers).  The trained models on the synthetic corpus's
# own phone alignments are checked in test_fl_am_synth.sh.
. tests/e2e/lib.sh
G=$PWD/tests/golden/embed/data

# 6 speakers x 3 utterances (each recording three times under three ids)
mkdir -p "$T/d6"
for i in 1 2 3 4 5 6; do
	for c in a b c; do echo "s$i$c $G/wav/u$i.wav"; done
done | sort > "$T/d6/wav.scp"
awk '{ print $1, "spk" substr($1, 2, 1) }' "$T/d6/wav.scp" > "$T/d6/utt2spk"
# frame counts from the features themselves (float32 .npy headers: shape (T, 40))
"$VPAUDIT" features fbank --num-mel-bins=40 "$T/d6" -o "$T/f/" > /dev/null 2>&1
: > "$T/d6/ali.txt"
for f in "$T"/f/*.npy; do
	u=$(basename "$f" .npy)
	n=$(head -c 128 "$f" | tr -d '\0' | grep -ao "'shape': ([0-9]*" | grep -o "[0-9]*$")
	# three classes: the first, middle and last third of the utterance (labels 7, 8, 9)
	awk -v u="$u" -v n="$n" 'BEGIN { printf "%s", u; for (t = 0; t < n; t++) printf " %d", 7 + int(3 * t / n); printf "\n" }' >> "$T/d6/ali.txt"
done
t_ok "ali.txt has a line per utterance" test "$(wc -l < "$T/d6/ali.txt")" = 18

# same_json FILTER A B: FILTER gives the same JSON on both files (false when either is
# missing or not JSON, so that two failed runs never compare equal)
same_json() {
	local a b
	a=$(jq -S "$1" "$2") && b=$(jq -S "$1" "$3") && [ -n "$a" ] && [ "$a" = "$b" ]
}

scen() { # scen FILE TARGET-BODY...: a scenario with one target `am` and A1 + A2
	local f=$1; shift
	{
		echo "name: am-audio"
		echo "seed: 5"
		echo "report: [json]"
		echo "targets:"
		echo "  - id: am"
		echo "    kind: fl_acoustic_models"
		for l in "$@"; do echo "    $l"; done
		echo "attacks:"
		echo "  - {id: a1, kind: a1_footprint, target: am}"
		echo "  - {id: a2, kind: a2_footprint, target: am}"
	} > "$f"
}
SMALL="part1_speakers: 2, part2_speakers: 2, indicator_speakers: 1, heldout_utts: 1, two_models: 1, hidden_layers: 2, hidden_dim: 16, global_epochs: 2, adapt_epochs: 2"

# ---- checks at validation
scen "$T/s1.yaml" "source: audio" "audio: {ali: $T/d6/ali.txt}"
t_run "ali without data" 1 -- validate "$T/s1.yaml"
t_ok "ali without data: says why" grep -q "s1.yaml:8:.*\`ali\` labels the frames of your \`data\`; the built-in corpus" "$ERR"
mkdir -p "$T/nou2s" && cp "$T/d6/wav.scp" "$T/d6/ali.txt" "$T/nou2s/"
scen "$T/s2.yaml" "source: audio" "audio: {data: $T/nou2s}"
t_run "no utt2spk" 1 -- validate "$T/s2.yaml"
t_ok "no utt2spk: names the folder" grep -q "s2.yaml:8:.*nou2s has no utt2spk" "$ERR"
mkdir -p "$T/noali" && cp "$T/d6/wav.scp" "$T/d6/utt2spk" "$T/noali/"
scen "$T/s3.yaml" "source: audio" "audio: {data: $T/noali}"
t_run "no ali.txt" 1 -- validate "$T/s3.yaml"
t_ok "no ali.txt: asks for ali" grep -q "noali/ali.txt: give the frame alignments with \`ali:\`" "$ERR"
scen "$T/s4.yaml" "source: audio" "audio: {data: $T/d6, feature_options: [--vad=true]}"
t_run "--vad refused" 1 -- validate "$T/s4.yaml"
t_ok "--vad: why" grep -q "s4.yaml:8:.*--vad drops frames" "$ERR"
scen "$T/s5.yaml" "audio: {data: $T/d6}"
t_run "audio: with source simulate" 1 -- validate "$T/s5.yaml"
t_ok "audio: needs source audio" grep -q "s5.yaml:7:.*\`audio:\` needs \`source: audio\` (the source is 'simulate')" "$ERR"
scen "$T/s6.yaml" "source: audio" "audio: {data: $T/d6}" "simulate: {states: 4}"
t_run "simulate: with source audio" 1 -- validate "$T/s6.yaml"
t_ok "simulate: says where sizes go" grep -q "s6.yaml:9:.*\`simulate:\` applies to source 'simulate' only" "$ERR"
scen "$T/s7.yaml" "source: audio" "audio: {data: $T/d6, speakers: 50}"
t_run "speakers with data" 1 -- validate "$T/s7.yaml"
t_ok "speakers with data: why" grep -q "size the built-in corpus; with your \`data\` they do not apply" "$ERR"
scen "$T/s8.yaml" "source: audio" "audio: {data: $T/d6, $SMALL}"
t_run "a valid scenario validates" 0 -- validate "$T/s8.yaml"

# ---- checks at the build (nothing written)
mkdir -p "$T/miss" && cp "$T/d6/wav.scp" "$T/d6/utt2spk" "$T/miss/" && grep -v "^s3b " "$T/d6/ali.txt" > "$T/miss/ali.txt"
scen "$T/b1.yaml" "source: audio" "audio: {data: $T/miss, $SMALL}"
t_run "an utterance without alignment" 1 -- run "$T/b1.yaml" -o "$T/ob1"
t_ok "names the utterance" grep -q "miss/ali.txt: no alignment for utterance 's3b'" "$ERR"
t_ok "no results written" test ! -e "$T/ob1/results.json"
mkdir -p "$T/short" && cp "$T/d6/wav.scp" "$T/d6/utt2spk" "$T/short/" && sed '3s/ [0-9]*$//' "$T/d6/ali.txt" > "$T/short/ali.txt"
scen "$T/b2.yaml" "source: audio" "audio: {data: $T/short, $SMALL}"
t_run "one label short" 1 -- run "$T/b2.yaml" -o "$T/ob2"
t_ok "names line 3 and both counts" grep -qE "short/ali.txt:3: utterance 's1c' has [0-9]+ frame labels, its features have [0-9]+ frames \(25 ms window, 10 ms shift\)" "$ERR"
mkdir -p "$T/bad" && cp "$T/d6/wav.scp" "$T/d6/utt2spk" "$T/bad/" && sed '2s/ 7 / x7 /' "$T/d6/ali.txt" > "$T/bad/ali.txt"
scen "$T/b3.yaml" "source: audio" "audio: {data: $T/bad, $SMALL}"
t_run "a bad label" 1 -- run "$T/b3.yaml" -o "$T/ob3"
t_ok "FILE:LINE:COL of the label" grep -qE "bad/ali.txt:2:[0-9]+: 'x7' is not a frame label" "$ERR"
scen "$T/b4.yaml" "source: audio" "audio: {data: $T/d6, part1_speakers: 3, part2_speakers: 2, indicator_speakers: 1}"
t_run "too few speakers" 1 -- run "$T/b4.yaml" -o "$T/ob4"
t_ok "counts the sets" grep -q "d6: 6 speakers; the sets need 7 (indicator_speakers 1 + part1_speakers 3 + part2_speakers 2 + train_speakers 1)" "$ERR"
scen "$T/b5.yaml" "source: audio" "audio: {data: $T/d6, part1_speakers: 2, part2_speakers: 2, indicator_speakers: 1, heldout_utts: 2, two_models: 1}"
t_run "too few utterances for a Part speaker" 1 -- run "$T/b5.yaml" -o "$T/ob5"
t_ok "names the speaker and the need" grep -qE "speaker 'spk[1-6]' \(Part-1\) has 3 utterances; it needs 4: heldout_utts 2 and one for each of its two models" "$ERR"

# ---- a run: the sets, 1 and 2 threads, dump and re-import
scen "$T/r.yaml" "source: audio" "audio: {data: $T/d6, $SMALL}" "dump_models: $T/dump"
t_run "run on 1 thread" 0 -- run "$T/r.yaml" -o "$T/o1" --threads 1 --allow-writes-outside
t_ok "trained on audio, not simulated" jqt '.targets[0].info.trained_on == "audio" and .targets[0].simulated == false' "$T/o1/results.json"
t_ok "sets: 1 Train-G, 2 + 2 Part speakers with two models each, 3 Indicator utterances" \
	jqt '.targets[0].info.sizes | .train_speakers == 1 and .part1_models == 4 and .part2_models == 4 and .indicator_utterances == 3 and .classes == 3' "$T/o1/results.json"
t_ok "chance accuracy stated" jqt '.targets[0].info.utility.chance_accuracy > 0 and .targets[0].info.utility.chance_accuracy < 1' "$T/o1/results.json"
t_ok "A1 per hidden layer and A2 records" jqt '([.records[] | select(.attack == "a1")] | length) > 0 and ([.records[] | select(.attack == "a2")] | length) > 0' "$T/o1/results.json"
rm -rf "$T/dump"
t_run "run on 2 threads" 0 -- run "$T/r.yaml" -o "$T/o2" --threads 2 --allow-writes-outside
t_ok "the same records for 1 and 2 threads" same_json .records "$T/o1/results.json" "$T/o2/results.json"
scen "$T/imp.yaml" "source: import" "import: {models: $T/dump/models.txt, model_dir: $T/dump, indicator: $T/dump/indicator}"
t_run "the dump imports" 0 -- run "$T/imp.yaml" -o "$T/oi"
strip='[.records[] | .metrics | del(.utility_acc, .utility_acc_global)]'
t_ok "re-imported models: the same A1/A2 numbers" same_json "$strip" "$T/o2/results.json" "$T/oi/results.json"
# ---- local DP on the released updates, and its audit (dp_fault: skip_noise)
scen "$T/dp.yaml" "source: audio" "audio: {data: $T/d6, $SMALL}" "dp: {clip: 0.05, noise: 1.0}"
t_run "local DP run" 0 -- run "$T/dp.yaml" -o "$T/odp"
t_ok "the claim: epsilon per speaker and per release in the info" \
	jqt '.targets[0].info.local_dp | .epsilon > 0 and .epsilon_per_release > 0 and .fault == "none"' "$T/odp/results.json"
t_ok "A1 records carry the claim and an audit bound" \
	jqt '[.records[] | select(.attack == "a1" and .sub == "mu_sigma") | .metrics | has("epsilon") and has("epsilon_lower_bound")] | all' "$T/odp/results.json"
scen "$T/dpf.yaml" "source: audio" "audio: {data: $T/d6, $SMALL}" "dp: {clip: 0.05, noise: 1.0}" "dp_fault: skip_noise"
t_run "dp_fault: skip_noise accepted for source audio" 0 -- run "$T/dpf.yaml" -o "$T/odpf"
t_ok "the fault is said where the claim is" jqt '.targets[0].info.local_dp.fault == "skip_noise"' "$T/odpf/results.json"

# ---- the i-vector stand-in (spk_vec_dim): appended to every frame, said in the info and the report
scen "$T/sv.yaml" "source: audio" "audio: {data: $T/d6, spk_vec_dim: 4, $SMALL}"
sed -i 's/^report: \[json\]/report: [json, html]/' "$T/sv.yaml"
t_run "spk_vec_dim: 4" 0 -- run "$T/sv.yaml" -o "$T/osv" --no-plots
t_ok "input 40 fbank + 4" jqt '.targets[0].info.sizes.input_dim == 44' "$T/osv/results.json"
t_ok "the info names the stand-in" jqt '.targets[0].info.speaker_vector | test("i-vector stand-in")' "$T/osv/results.json"
t_ok "the report says it is not an i-vector" grep -q "It is a stand-in for the i-vectors of Tomashenko et al.&#39;s models, not an i-vector" "$T/osv/report.html"
scen "$T/nsv.yaml" "source: audio" "audio: {data: $T/d6, $SMALL}"
sed -i 's/^report: \[json\]/report: [json, html]/' "$T/nsv.yaml"
t_run "no speaker vector, html report" 0 -- run "$T/nsv.yaml" -o "$T/onsv" --no-plots
t_ok "without it, the report (written) says nothing of it" \
	bash -c "test -s '$T/onsv/report.html' && ! grep -q 'stand-in for the i-vectors' '$T/onsv/report.html'"

# ---- frame labels from a CTC model (`aligner:`): each utterance's transcript
# force-aligned with the golden PyTorch-exported model (random weights: the
# plumbing; the alignment itself is checked in tests/unit/test_ctc_align.c)
CT=$PWD/tests/golden/ctc
mkdir -p "$T/dal" && cp "$T/d6/wav.scp" "$T/d6/utt2spk" "$T/dal/"
awk 'BEGIN { split("THE CAT|A DOG|MY HAT|SO BIG|WE RAN|GO", w, "|") }
     { print $1, w[substr($1, 2, 1)] }' "$T/d6/wav.scp" > "$T/dal/text"
ALN="aligner: {model: $CT/small_ctc.onnx, tokens: $CT/tokens.txt}"
scen "$T/c1.yaml" "source: audio" "audio: {data: $T/dal, ali: $T/d6/ali.txt, $ALN, $SMALL}"
t_run "ali and aligner together" 1 -- validate "$T/c1.yaml"
t_ok "ali and aligner: give one" grep -q "c1.yaml:8:.*\`ali\` and \`aligner\` are two sources of the frame labels: give one" "$ERR"
scen "$T/c2.yaml" "source: audio" "audio: {$ALN}"
t_run "aligner without data" 1 -- validate "$T/c2.yaml"
t_ok "aligner without data: says why" grep -q "c2.yaml:8:.*\`aligner\` labels the frames of your \`data\`" "$ERR"
scen "$T/c3.yaml" "source: audio" "audio: {data: $T/d6, $ALN, $SMALL}"
t_run "aligner without a text file" 1 -- validate "$T/c3.yaml"
t_ok "no text: names the file" grep -q "c3.yaml:8:.*no $T/d6/text: the aligner needs every utterance's transcript" "$ERR"
head -5 "$CT/tokens.txt" > "$T/tok5.txt"
scen "$T/c4.yaml" "source: audio" "audio: {data: $T/dal, aligner: {model: $CT/small_ctc.onnx, tokens: $T/tok5.txt}, $SMALL}"
t_run "a tokens file of the wrong size" 1 -- validate "$T/c4.yaml"
t_ok "the wrong size: at the tokens key, both counts" grep -qE "c4.yaml:8:[0-9]+: .*30 classes.*tok5.txt has 5 tokens" "$ERR"
mkdir -p "$T/dal2" && cp "$T/dal/wav.scp" "$T/dal/utt2spk" "$T/dal2/" && grep -v "^s3b " "$T/dal/text" > "$T/dal2/text"
scen "$T/c5.yaml" "source: audio" "audio: {data: $T/dal2, $ALN, $SMALL}"
t_run "an utterance without a transcript" 1 -- run "$T/c5.yaml" -o "$T/oc5"
t_ok "names the utterance" grep -q "dal2/text: no transcript for utterance 's3b'" "$ERR"
t_ok "no results written" test ! -e "$T/oc5/results.json"
mkdir -p "$T/dal3" && cp "$T/dal/wav.scp" "$T/dal/utt2spk" "$T/dal3/" && sed 's/^s2a A DOG/s2a A DÖG/' "$T/dal/text" > "$T/dal3/text"
scen "$T/c7.yaml" "source: audio" "audio: {data: $T/dal3, $ALN, $SMALL}"
t_run "a character no token spells" 1 -- run "$T/c7.yaml" -o "$T/oc7"
t_ok "names the text's line, the word and the character" grep -q "dal3/text:4: utterance 's2a': the word 'DÖG' has 'Ö' (byte 1), which no token of $CT/tokens.txt spells" "$ERR"
scen "$T/c6.yaml" "source: audio" "audio: {data: $T/dal, $ALN, $SMALL}"
t_run "aligned run on 1 thread" 0 -- run "$T/c6.yaml" -o "$T/oc1" --threads 1
t_ok "classes: the 17 tokens of the transcripts (| and 16 letters)" \
	jqt '.targets[0].info.sizes.classes == 17' "$T/oc1/results.json"
t_ok "the aligner named in the info" \
	jqt '.targets[0].info.aligner.model | endswith("small_ctc.onnx")' "$T/oc1/results.json"
t_ok "A1 and A2 records" jqt '([.records[] | select(.attack == "a1")] | length) > 0 and ([.records[] | select(.attack == "a2")] | length) > 0' "$T/oc1/results.json"
t_run "aligned run on 2 threads" 0 -- run "$T/c6.yaml" -o "$T/oc2" --threads 2
t_ok "the same records for 1 and 2 threads" same_json .records "$T/oc1/results.json" "$T/oc2/results.json"
# `vpaudit asr --align`: the same labels as a file, taken back as `ali`: the same records
t_run "asr --align writes the frame labels" 0 -- asr "$T/dal" --onnx "$CT/small_ctc.onnx" --tokens "$CT/tokens.txt" --align "$T/dal/text" -o "$T/dal/ctc_ali.txt" --threads 2
t_ok "a line per utterance, the first '|' (token 1)" bash -c "test \$(wc -l < '$T/dal/ctc_ali.txt') = 18 && grep -q '^s1a 1 ' '$T/dal/ctc_ali.txt'"
scen "$T/c8.yaml" "source: audio" "audio: {data: $T/dal, ali: $T/dal/ctc_ali.txt, $SMALL}"
t_run "the written labels as ali" 0 -- run "$T/c8.yaml" -o "$T/oc8"
t_ok "ali from asr --align = aligner: the same records" same_json .records "$T/oc1/results.json" "$T/oc8/results.json"
t_run "asr --align, an utterance without a transcript" 1 -- asr "$T/dal" --onnx "$CT/small_ctc.onnx" --tokens "$CT/tokens.txt" --align "$T/dal2/text" -o "$T/xa.txt"
t_ok "names the text file and the utterance, nothing written" \
	bash -c "grep -q 'dal2/text: no transcript for utterance .s3b.' '$ERR' && test ! -e '$T/xa.txt'"
t_run "asr --align, a character no token spells" 1 -- asr "$T/dal" --onnx "$CT/small_ctc.onnx" --tokens "$CT/tokens.txt" --align "$T/dal3/text" -o "$T/xb.txt"
t_ok "FILE:LINE of the transcript, nothing written" \
	bash -c "grep -q 'dal3/text:4: utterance .s2a.' '$ERR' && test ! -e '$T/xb.txt'"
t_run "asr --align without --onnx" 2 -- asr "$T/dal" --align "$T/dal/text" -o "$T/x.txt"
t_ok "says a CTC model aligns" grep -q "\-\-align needs --onnx MODEL --tokens FILE" "$ERR"
t_ok "nothing written" test ! -e "$T/x.txt"
t_done
