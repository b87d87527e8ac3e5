#!/bin/bash
# tests/e2e/test_anon_audio.sh - the anonymised_speech target from audio
# (issue 17): a synthetic espeak-ng corpus with a speaker-level pitch-shift
# stand-in anonymiser (tests/e2e/audio/espeak_corpus.sh), extractors trained in
# C (ASV_eval on original, ASV_eval^anon on anonymised training audio), the
# attackers' EERs pinned by gates (the VoicePrivacy finding: the semi-informed
# attacker with the retrained extractor beats the lazy-informed one), and bad
# input (an utterance missing on one side, audio at another rate): the error,
# exit 1, no result written.
. tests/e2e/lib.sh
C=$T/corpus
no_nan() { ! grep -Eqi ': -?(nan|inf|infinity),?$' "$1"; }
bash tests/e2e/audio/espeak_corpus.sh "$C" 24 8 > /dev/null 2>&1
t_ok "espeak-ng corpus made" test -s "$C/trial_anon/wav.scp" -a -s "$C/train/spk2gender"
# the anonymised trials listed in another order than the originals: rows are matched by id
tac "$C/trial_anon/wav.scp" > "$T/scp" && cp "$T/scp" "$C/trial_anon/wav.scp"

# ASR hypotheses: exact on the originals; one word deleted on the anonymised trials
cp "$C/trial/text" "$T/hyp"
sed '1s/^\([^ ]*\) [^ ]*/\1/' "$C/trial/text" > "$T/hyp_anon"
scn() { # $1 file, $2 corpus, $3 extra YAML
	cat > "$1" <<YAML
name: anon-audio
seed: 1
report: [json, vpc]
targets:
  - id: a
    kind: anonymised_speech
    source: audio
    audio:
      train: $2/train
      train_anon: $2/train_anon
      enroll: $2/enroll
      enroll_anon: $2/enroll_anon
      trial: $2/trial
      trial_anon: $2/trial_anon
      enroll_informed: $2/enroll_anon
      hyp: $T/hyp
      hyp_anon: $T/hyp_anon
      rho_f0: true
      extractor: {epochs: 15, hidden: 64, emb_dim: 32, chunk: 150, batch: 16}
    backend: {lda_dim: 16, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: a, attackers: [baseline, ignorant, lazy_informed, semi_informed, informed]}
$3
YAML
}
scn "$T/a.yaml" "$C" "gates:
  - {attack: link.baseline, metric: eer, max: 0.1, allow_unreliable: true}
  - {attack: link.ignorant, metric: eer, min: 0.25, allow_unreliable: true}
  - {attack: link.lazy_informed, metric: eer, min: 0.1, allow_unreliable: true}
  - {attack: link.semi_informed, metric: eer, max: 0.05, allow_unreliable: true}"
t_run "run the audio target" 0 -- run "$T/a.yaml" -o "$T/out" --quiet
O=$T/out/results.json
t_ok "results.json written" test -s "$O"
# the stand-in anonymiser shifts a speaker's enrolment as its trials, so the
# enrolment anonymised with the trial speakers' own pseudo-voices is
# enroll_anon: the informed attacker (ASV_eval^anon, back-end on train_anon)
# then scores exactly the semi-informed attacker's trials
eer_of() { awk -v s="\"sub\": \"$1\"," '$0 ~ s { on = 1 } on && $1 == "\"eer\":" { print $2; exit }' "$O"; }
t_ok "informed from audio = semi-informed with enroll_informed = enroll_anon" \
	test "$(eer_of informed)" = "$(eer_of semi_informed)" -a -n "$(eer_of informed)"
t_ok "four gates, all pass" test "$(grep -c '"pass": true' "$O")" = 4
t_ok "train: 144 utterances of 24 speakers, d = 32" \
	grep -qz '"train": {[^}]*"utterances": 144,[^}]*"speakers": 24,[^}]*"dim": 32' "$O"
t_ok "the extractor's training is reported" grep -q '"asv_eval_anon_final_loss"' "$O"
t_ok "no NaN in results" no_nan "$O"
t_ok "WER on the originals: 0" grep -qz '"wer_orig": {[^}]*"wer": 0,' "$O"
t_ok "WER on the anonymised trials: one deletion" \
	grep -qz '"wer_anon": {[^}]*"ins": 0,[^}]*"del": 1,[^}]*"sub": 0' "$O"
# the WER is a fraction in results.json: one deletion over the reference words
wa=$(grep -A6 '"wer_anon": {' "$O" | awk '$1 == "\"wer\":" { sub(/,$/, "", $2); print $2 }')
rw=$(grep -A6 '"wer_anon": {' "$O" | awk '$1 == "\"ref_words\":" { sub(/,$/, "", $2); print $2 }')
t_ok "WER on the anonymised trials: 1 / ref_words, a fraction ($wa, $rw words)" \
	awk -v w="$wa" -v n="$rw" 'BEGIN { exit !(n > 0 && w * n > 0.999999 && w * n < 1.000001) }'
t_ok "result_for_rank.txt: the same WER in percent" \
	grep -Eq "^[0-9]+ +a +trial +anon +$(awk -v w="$wa" 'BEGIN { printf "%.3f", 100 * w }')\$" "$T/out/result_for_rank.txt"
t_ok "rho_F0 of a pitch shift is high (the contour is kept)" grep -q '"rho_f0": 0\.[6-9]' "$O"
# the same run on 1 thread gives the same records (thread-count independence)
t_run "run on 1 thread" 0 -- run "$T/a.yaml" -o "$T/out1" --quiet --threads 1
t_ok "same EERs for 1 thread" test "$(grep '"eer"' "$O")" = "$(grep '"eer"' "$T/out1/results.json")"

# ---- bad input ----------------------------------------------------------------
B=$T/bad; cp -r "$C" "$B"
sed -i '/spk025-u3 /d' "$B/trial_anon/wav.scp" "$B/trial_anon/utt2spk" "$B/trial_anon/text"
scn "$T/b.yaml" "$B"
t_run "an utterance missing on the anonymised side" 1 -- run "$T/b.yaml" -o "$T/bo" --quiet
t_ok "one line naming the utterance" grep -q "trial_anon: utterance 'spk025-u3' of .*trial is missing" "$ERR"
t_ok "the error on the first line, located at the target" head -n 1 "$ERR" | grep -q "b.yaml:[0-9]*:[0-9]*: target 'a': .*trial_anon: utterance"
t_ok "no result written (junit.xml carries the error)" test ! -e "$T/bo/results.json" -a ! -e "$T/bo/report.html"
R=$T/rate; cp -r "$C" "$R"
sed -i "s#$C#$R#" "$R"/*/wav.scp
sox -V1 "$C/enroll_anon/wav/spk026-u1.wav" -r 8000 "$R/enroll_anon/wav/spk026-u1.wav"
scn "$T/r.yaml" "$R"
# issue 31: an anonymised file at 8 kHz is resampled to the front-end's 16 kHz, and recorded
t_run "anonymised audio at another rate: resampled" 0 -- run "$T/r.yaml" -o "$T/ro" --quiet
# two reads: scn lists enroll_anon as enroll_anon and as enroll_informed (two sets)
t_ok "the target's info records two resampled reads at 16000 Hz" bash -c \
	"grep -q '\"resampled_reads\": 2,' '$T/ro/results.json' && grep -q '\"resampled_to_hz\": 16000' '$T/ro/results.json'"
# a hypothesis file missing an utterance
sed 1d "$C/trial/text" > "$T/hyp_short"
scn "$T/h.yaml" "$C"
sed -i "s#hyp: $T/hyp\$#hyp: $T/hyp_short#" "$T/h.yaml"
# by default scored as deletions with a warning (compute-wer --mode=all, issue 31);
# an error with wer_strict (tests/e2e/test_audio_paths.sh checks the counts)
sed -i "s#^      rho_f0: true#      rho_f0: true\n      wer_strict: true#" "$T/h.yaml"
t_run "a hypothesis file missing an utterance (wer_strict)" 1 -- run "$T/h.yaml" -o "$T/ho" --quiet
t_ok "the missing hypothesis is named" grep -q "hyp_short: utterance '[^']*' of .*text:1 has no hypothesis" "$ERR"
t_ok "no result written (hyp)" test ! -e "$T/ho/results.json"
# a trials list naming an unknown utterance
printf 'spk024 spk024-u2 target\nspk024 nosuch-u9 nontarget\n' > "$T/trials_bad"
scn "$T/t.yaml" "$C"
sed -i "s#^      extractor:#      trials: $T/trials_bad\n      extractor:#" "$T/t.yaml"
t_run "a trials list naming an unknown utterance" 1 -- run "$T/t.yaml" -o "$T/to" --quiet
t_ok "the trials line is named" grep -q "trials_bad:2: .*nosuch-u9" "$ERR"
t_ok "no result written (trials)" test ! -e "$T/to/results.json"
# ---- VoicePrivacy's trials_f / trials_m directories as one target: the trial and
# anonymised trial sets split by gender into directories of their own, each with
# its `trials` file (same-gender pairs of its enrolment speakers) and its own ASR
# hypotheses; the run on the lists must give the numbers of the run on the union
# directory with the two trials files concatenated (every score is per trial)
L=$T/lists; mkdir "$L"
split_dir() { # $1 source dir, $2 gender, $3 out dir
	mkdir "$3"
	awk -v g="$2" '$2 == g { print $1 }' "$C/trial/spk2gender" > "$3/.spk"
	awk 'NR == FNR { s[$1] = 1; next } s[$2] { print $1 }' "$3/.spk" "$1/utt2spk" > "$3/.utt"
	for f in wav.scp utt2spk text; do
		awk 'NR == FNR { u[$1] = 1; next } u[$1]' "$3/.utt" "$1/$f" > "$3/$f"
	done
	awk 'NR == FNR { s[$1] = 1; next } s[$1]' "$3/.spk" "$1/spk2gender" > "$3/spk2gender"
	awk 'NR == FNR { s[$1] = 1; next } s[$2] { for (k in s) print k, $1, (k == $2 ? "target" : "nontarget") }' \
		"$3/.spk" "$3/utt2spk" | sort > "$3/trials"
	rm "$3/.spk" "$3/.utt"
}
for g in f m; do
	split_dir "$C/trial" $g "$L/libri_trials_$g"
	split_dir "$C/trial_anon" $g "$L/libri_trials_${g}_anon"
	awk 'NR == FNR { u[$1] = 1; next } u[$1]' "$L/libri_trials_$g/utt2spk" "$T/hyp" > "$L/hyp_$g"
	awk 'NR == FNR { u[$1] = 1; next } u[$1]' "$L/libri_trials_$g/utt2spk" "$T/hyp_anon" > "$L/hyp_anon_$g"
done
cat "$L/libri_trials_f/trials" "$L/libri_trials_m/trials" > "$L/trials_union"
t_ok "split: 4 + 4 speakers, every trial utterance on one side" bash -c \
	"test \$(cat $L/libri_trials_f/utt2spk $L/libri_trials_m/utt2spk | wc -l) = \$(wc -l < $C/trial/utt2spk) -a \$(wc -l < $L/libri_trials_f/spk2gender) = 4"
lscn() { # $1 file, $2 trial lines, $3 extra audio lines
	cat > "$1" <<YAML
name: anon-audio-lists
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
$2
$3
      extractor: {epochs: 4, hidden: 32, emb_dim: 16, chunk: 150, batch: 16}
    backend: {lda_dim: 8, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: a, attackers: [baseline, ignorant, lazy_informed, semi_informed], per_gender: true}
YAML
}
lscn "$T/l.yaml" "      trial: [$L/libri_trials_f, $L/libri_trials_m]
      trial_anon: [$L/libri_trials_f_anon, $L/libri_trials_m_anon]
      hyp: [$L/hyp_f, $L/hyp_m]
      hyp_anon: [$L/hyp_anon_f, $L/hyp_anon_m]"
lscn "$T/u.yaml" "      trial: $C/trial
      trial_anon: $C/trial_anon
      trials: $L/trials_union
      hyp: $T/hyp
      hyp_anon: $T/hyp_anon"
t_run "trial lists of two directories (trials_f, trials_m)" 0 -- run "$T/l.yaml" -o "$T/lo" --quiet
t_run "the union directory with the concatenated trials" 0 -- run "$T/u.yaml" -o "$T/uo" --quiet
LO=$T/lo/results.json; UO=$T/uo/results.json
# metric $3 of record $2 in $1
rv() { awk -v s="\"sub\": \"$2\"," -v m="\"$3\":" '$0 ~ s { on = 1 } on && $1 == m { sub(/,$/, "", $2); print $2; exit }' "$1"; }
for a in baseline ignorant lazy_informed semi_informed; do
	t_ok "lists = union: $a pooled EER and Cllr_min" bash -c \
		"test -n '$(rv "$LO" $a eer)' -a '$(rv "$LO" $a eer)' = '$(rv "$UO" $a eer)' -a '$(rv "$LO" $a cllr_min)' = '$(rv "$UO" $a cllr_min)'"
	for g in f m; do
		t_ok "lists = union: $a/${g} EER (records named after the directories)" bash -c \
			"test -n '$(rv "$LO" $a/libri_trials_$g eer)' -a '$(rv "$LO" $a/libri_trials_$g eer)' = '$(rv "$UO" $a/trials_union_$g eer)'"
	done
done
t_ok "lists: the trials of both files (n_target + n_nontarget = 2 x 4 x 16)" \
	test "$(( $(rv "$LO" baseline n_target) + $(rv "$LO" baseline n_nontarget) ))" = 128
t_ok "lists: WER counts add up over the hypothesis files (one deletion)" \
	grep -qz '"wer_anon": {[^}]*"ins": 0,[^}]*"del": 1,[^}]*"sub": 0' "$LO"
t_ok "lists: WER as the union run" test "$(grep -A4 '"wer_orig": {' "$LO")" = "$(grep -A4 '"wer_orig": {' "$UO")"
# built-in McAdams on a trial list: the merged set is anonymised
lscn "$T/lm.yaml" "      trial: [$L/libri_trials_f, $L/libri_trials_m]" "      anonymise: {method: mcadams}"
sed -i -e '/train_anon:/d' -e '/enroll_anon:/d' "$T/lm.yaml"
t_run "built-in McAdams on a trial list" 0 -- run "$T/lm.yaml" -o "$T/lmo" --quiet
t_ok "built-in McAdams on a trial list: per-gender records named after the lists" \
	test -n "$(rv "$T/lmo/results.json" semi_informed/libri_trials_m eer)"
# progress lines ("a: anonymising trial") go to stderr only when it is a
# terminal (scenarios/README.md "Running"): here it is a file, and no --quiet
t_run "built-in McAdams without --quiet, stderr a file" 0 -- run "$T/lm.yaml" -o "$T/lmo2"
t_ok "no progress line on a stderr that is not a terminal" bash -c "! grep -q 'anonymising' '$ERR'"
# bad lists: one line naming the user's file, exit 1, nothing written
bad_list() { # $1 name, $2 yaml, $3 expected message (grep -E)
	t_run "$1" 1 -- run "$2" -o "$T/blo" --quiet
	t_ok "$1: named" grep -Eq "$3" "$ERR"
	t_ok "$1: no result written" test ! -e "$T/blo/results.json"
}
lscn "$T/b1.yaml" "      trial: [$L/libri_trials_f, $L/libri_trials_m]
      trial_anon: [$L/libri_trials_f_anon]"
bad_list "trial_anon shorter than trial" "$T/b1.yaml" \
	"b1.yaml:[0-9]+:[0-9]+: .*\`trial_anon\` has 1 data directory and \`trial\` 2"
lscn "$T/b2.yaml" "      trial: [$L/libri_trials_f, $L/libri_trials_m]
      hyp: $T/hyp"
bad_list "one hypothesis file for two trial directories" "$T/b2.yaml" \
	"b2.yaml:[0-9]+:[0-9]+: .*\`hyp\` has 1 file and \`trial\` 2 data directories"
cp -r "$L/libri_trials_f" "$L/dup"
lscn "$T/b3.yaml" "      trial: [$L/libri_trials_f, $L/dup]
      trial_anon: [$L/libri_trials_f_anon, $L/libri_trials_m_anon]
      trials: $L/trials_union"
bad_list "a recording in two trial directories" "$T/b3.yaml" \
	"dup/wav.scp:1: recording 'spk0[0-9]+-u[0-9]+' is also in .*libri_trials_f/wav.scp:1"
# a male speaker of the second directory renamed as the first female speaker
cp -r "$L/libri_trials_m" "$L/gconf"
ms=$(head -n1 "$L/gconf/spk2gender" | cut -d' ' -f1); fs=$(head -n1 "$L/libri_trials_f/spk2gender" | cut -d' ' -f1)
sed -i "s/ $ms\$/ $fs/" "$L/gconf/utt2spk"; sed -i "s/^$ms /$fs /" "$L/gconf/spk2gender"
lscn "$T/b4.yaml" "      trial: [$L/libri_trials_f, $L/gconf]
      trial_anon: [$L/libri_trials_f_anon, $L/libri_trials_m_anon]"
bad_list "a speaker's gender differs between trial directories" "$T/b4.yaml" \
	"gconf/spk2gender:1: speaker '$fs' is 'm' here and 'f' in .*libri_trials_f/spk2gender:1"
cp -r "$L/libri_trials_m" "$L/notrials"; rm "$L/notrials/trials"
lscn "$T/b5.yaml" "      trial: [$L/libri_trials_f, $L/notrials]"
bad_list "one trial directory without a trials file" "$T/b5.yaml" \
	"b5.yaml:[0-9]+:[0-9]+: .*notrials' has no \`trials\` file and '.*libri_trials_f' has one"
lscn "$T/b6.yaml" "      trial: [$L/libri_trials_f, $L/libri_trials_m]
      trial_anon: [$L/libri_trials_f_anon, $L/libri_trials_m_anon]
      trials: [$L/libri_trials_f/trials, $L/trials_union]"
bad_list "a trial named in two trials files" "$T/b6.yaml" \
	"trials_union:1: the trial 'spk0[0-9]+ spk0[0-9]+-u[0-9]+' is also at .*libri_trials_f/trials:1"
cp -r "$L/libri_trials_m_anon" "$L/rate_anon"
u1=$(head -n1 "$L/rate_anon/wav.scp" | cut -d' ' -f1); w1=$(head -n1 "$L/rate_anon/wav.scp" | cut -d' ' -f2)
sox -V1 "$w1" -r 8000 "$L/rate_anon/$u1.wav"; sed -i "1s#.*#$u1 $L/rate_anon/$u1.wav#" "$L/rate_anon/wav.scp"
lscn "$T/b7.yaml" "      trial: [$L/libri_trials_f, $L/libri_trials_m]
      trial_anon: [$L/libri_trials_f_anon, $L/rate_anon]"
# issue 31: audio at another rate is resampled to the front-end's (libsoxr), and said so
t_run "anonymised audio at 8 kHz in a listed directory: resampled" 0 -- run "$T/b7.yaml" -o "$T/b7o" --quiet
t_ok "the target's info records the resampling" bash -c \
	"grep -q '\"resampled_reads\": [1-9]' '$T/b7o/results.json' && grep -q '\"resampled_to_hz\": 16000' '$T/b7o/results.json' && grep -q '\"resampler\": \"libsoxr 0.1.3' '$T/b7o/results.json'"

# ---- ASV_eval from the user's ONNX extractor (tests/golden/embed/ecapa.onnx, 20 mel
# bins, random weights: the numbers mean nothing, the path is what is checked):
# the baseline and ignorant records equal those of an imported target made of
# `vpaudit embed` archives of the same directories; ASV_eval^anon is trained in C
E=$PWD/tests/golden/embed/ecapa.onnx
for s in train enroll trial trial_anon; do
	"$VPAUDIT" embed "$E" "$C/$s" -o "$T/$s.ark" --num-mel-bins=20 --text 2> /dev/null
done
t_ok "vpaudit embed archives of the corpus" test -s "$T/trial_anon.ark"
cat > "$T/x.yaml" <<YAML
name: onnx-audio
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
      onnx: {model: $E, options: [--num-mel-bins=20]}
      extractor: {epochs: 3, hidden: 32, emb_dim: 16, chunk: 150, batch: 16}
    backend: {lda_dim: 8, scoring: cosine}
  - id: i
    kind: anonymised_speech
    source: import
    backend: {lda_dim: 8, scoring: cosine}
    import:
      train: {vectors: $T/train.ark, utt2spk: $C/train/utt2spk}
      enroll: {vectors: $T/enroll.ark, utt2spk: $C/enroll/utt2spk, spk2gender: $C/enroll/spk2gender}
      trial: {vectors: $T/trial.ark, utt2spk: $C/trial/utt2spk, spk2gender: $C/trial/spk2gender}
      trial_anon: {vectors: $T/trial_anon.ark, utt2spk: $C/trial/utt2spk}
attacks:
  - {id: la, kind: linkage, target: a, attackers: [baseline, ignorant, lazy_informed, semi_informed]}
  - {id: li, kind: linkage, target: i, attackers: [baseline, ignorant]}
YAML
t_run "ASV_eval from an ONNX extractor" 0 -- run "$T/x.yaml" -o "$T/xo" --quiet
X=$T/xo/results.json
rec() { awk -v a="\"attack\": \"$1\"," -v s="\"sub\": \"$2\"," -v m="\"$3\":" \
	'$0 ~ a { at = 1 } at && $0 ~ s { on = 1 } on && $1 == m { print $2; exit }' "$X"; }
t_ok "baseline from ONNX = baseline of vpaudit embed's archives" \
	test -n "$(rec la baseline eer)" -a "$(rec la baseline eer)" = "$(rec li baseline eer)"
t_ok "ignorant from ONNX = ignorant of vpaudit embed's archives" \
	test "$(rec la ignorant cllr_min)" = "$(rec li ignorant cllr_min)"
t_ok "the target's info names both extractors" \
	grep -q "\"asv_eval\": \"$E\"" "$X" && grep -q '"asv_eval_anon": "x-vector trained in C"' "$X"
t_ok "ASV_eval^anon trained in C: semi-informed record" test -n "$(rec la semi_informed eer)"
# extractor.shards: part of the result (batch 16 allows 2 shards; 1 is another training)
sed -e 's/extractor: {epochs: 3,/extractor: {shards: 1, epochs: 3,/' "$T/x.yaml" > "$T/xs.yaml"
t_run "extractor shards: 1" 0 -- run "$T/xs.yaml" -o "$T/xso" --quiet --threads 2
t_ok "shards: 1 trains another ASV_eval^anon (semi-informed Cllr differs from 2 shards')" \
	test -n "$(X=$T/xso/results.json rec la semi_informed cllr)" -a "$(X=$T/xso/results.json rec la semi_informed cllr)" != "$(rec la semi_informed cllr)"
sed -e 's/extractor: {epochs: 3,/extractor: {semi_informed: finetune, epochs: 3,/' "$T/x.yaml" > "$T/xf.yaml"
t_run "finetune with an ONNX ASV_eval" 1 -- validate "$T/xf.yaml"
t_ok "finetune with an ONNX ASV_eval: the line at semi_informed" \
	grep -q "xf.yaml:[0-9]*:[0-9]*: \`semi_informed: finetune\` fine-tunes the ASV_eval vpaudit trains in C" "$ERR"
sed -e "s#^      onnx: {model: $E, options: \(.*\)}#&\n      onnx_anon: {model: $E, options: \1}#" \
	"$T/x.yaml" > "$T/xb.yaml"
t_ok "the two-ONNX scenario was made" grep -q "onnx_anon: {model: $E" "$T/xb.yaml"
t_run "extractor with both onnx and onnx_anon" 1 -- validate "$T/xb.yaml"
t_ok "extractor with both ONNX extractors: one line at the extractor key" \
	grep -qx "vpaudit validate: error: $T/xb.yaml:16:7: \`extractor\` configures the extractors vpaudit trains in C, but \`onnx\` and \`onnx_anon\` give both ASV_eval and ASV_eval^anon: remove \`extractor\` (or one of them)" "$ERR"
sed -e '/^      extractor: {epochs: 3,/d' "$T/xb.yaml" > "$T/xc.yaml"
t_run "both ONNX extractors without extractor" 0 -- validate "$T/xc.yaml"
sed -e "s#onnx: {model: $E#onnx: {model: $T/nosuch.onnx#" "$T/x.yaml" > "$T/xm.yaml"
t_run "a missing ONNX model" 1 -- run "$T/xm.yaml" -o "$T/xmo" --quiet
t_ok "a missing ONNX model: located, nothing written" \
	bash -c "grep -q 'xm.yaml:[0-9]*:[0-9]*: .*nosuch.onnx' '$ERR' && test ! -e '$T/xmo/results.json'"
# ---- McAdams (VPC B2) on the built-in synthetic corpus: the shipped scenario's
# speaker-level target (scenarios/vpc-audio.yaml, its extractor and back-end) on a
# smaller corpus (40 speakers x 6 instead of 60 x 8, for the suite's time), with the
# default attacker list (the informed attacker's enrolment made with the trial
# speakers' own coefficients, lazy/semi with the attacker's own draws), a low
# unprotected EER and the VPC findings as gates: the semi-informed attacker
# (ASV_eval^anon retrained on training audio anonymised per utterance, VPC 2022
# train_anon_level=utt) below the lazy-informed one, the informed attacker below
# both.  Measured (2026-11-25): baseline 0.075 (0.218 with the earlier settings:
# utterance CMN, LDA 16, 20 epochs, same-variant voices without a vocal-tract
# scale), ignorant 0.468, lazy-informed 0.320, semi-informed 0.222, informed 0.130
# (0.320/0.309 for lazy/semi when the attacker anonymised its training audio per
# speaker: no gain from retraining).
if [ -f data/brown/ca01 ]; then # the corpus text (sh .ci/deps fetches it)
sed -n '/^name:/,/^  - id: mcadams-utt/p' scenarios/vpc-audio.yaml | sed '$d' |
	sed 's/synthetic: {speakers: 60, utts: 8}/synthetic: {speakers: 40, utts: 6}/' > "$T/m.yaml"
t_ok "the shipped target's corpus line was found" grep -q 'speakers: 40, utts: 6' "$T/m.yaml"
cat >> "$T/m.yaml" <<'YAML'
report: [json, vpc]
attacks:
  - {id: link-spk, kind: linkage, target: mcadams-spk, per_gender: true}
gates:
  - {attack: link-spk.baseline, metric: eer, max: 0.12, allow_unreliable: true}
  - {attack: link-spk.lazy_informed, metric: eer, min: 0.27, allow_unreliable: true}
  - {attack: link-spk.semi_informed, metric: eer, max: 0.27, allow_unreliable: true}
  - {attack: link-spk.informed, metric: eer, max: 0.18, allow_unreliable: true}
  - {attack: link-spk.ignorant, metric: eer, min: 0.25, allow_unreliable: true}
YAML
# its temporary folder under TMPDIR (a folder of this test: other runs on the
# machine make their own in /tmp)
mkdir "$T/tmp"
TMPDIR=$T/tmp t_run "McAdams speaker level on the synthetic corpus, gates" 0 -- run "$T/m.yaml" -o "$T/mo" --quiet
t_ok "low baseline, semi-informed beats lazy-informed, informed below (all gates pass)" test "$(grep -c '"pass": true' "$T/mo/results.json")" = 5
# issue 29's check: pi_link (N' = 2, conversations of one utterance) of the semi-informed
# attacker above the lazy-informed one's, as their EERs say (measured 2026-11-28 on the
# full-size scenario: 0.954 against 0.514)
pil() { awk -v s="\"sub\": \"$1\"," '$0 ~ s { on = 1 } on && $1 == "\"pi_link\":" { sub(",", "", $2); print $2; exit }' "$T/mo/results.json"; }
t_ok "pi_link: semi-informed above lazy-informed" \
	awk -v a="$(pil semi_informed)" -v b="$(pil lazy_informed)" 'BEGIN { exit !(a != "" && b != "" && a + 0 > b + 0) }'
t_ok "the training audio anonymised per utterance (VPC 2022)" grep -q '"train_anon_level": "anon_level_utt"' "$T/mo/results.json"
t_ok "per-stage times recorded (timing fields)" bash -c "grep -q '\"train_asv_eval_anon\": {' '$T/mo/results.json' && grep -q '\"cpu_secs\":' '$T/mo/results.json'"
t_ok "per-gender records of the audio target (5 attackers x f, m)" \
	test "$(grep -c '"gender": "[fm]"' "$T/mo/results.json")" = 10
t_ok "the VPC files: an informed row per gender" \
	test "$(grep -Ec '^[0-9]+ +mcadams-spk +link-spk +[fm] +informed +anon ' "$T/mo/result_for_rank.txt")" = 2
t_ok "labelled synthetic (simulated) in results" grep -q '"simulated": true' "$T/mo/results.json"
t_ok "the synthetic note in the target's info" grep -q '"synthetic": "SYNTHETIC speech' "$T/mo/results.json"
t_ok "the temporary corpus is removed (TMPDIR empty)" test -z "$(ls -A "$T/tmp")"
t_run "the report of that run (no plots)" 0 -- report "$T/mo/results.json" -o "$T/mor" --no-plots
t_ok "report: the attack's banner says the speech is synthetic" \
	grep -q 'SIMULATED target on SYNTHETIC speech (espeak-ng / flite voices reading Brown sentences), not recordings of people' "$T/mor/report.html"
t_ok "report: the executive summary and the limitations say it" \
	test "$(grep -o 'The speech of mcadams-spk is SYNTHETIC speech' "$T/mor/report.html" | wc -l)" = 2
t_ok "report: the SIMULATED banner and the provenance table name it" \
	bash -c "grep -q 'mcadams-spk (synthetic speech)' '$T/mor/report.html' && grep -q 'SIMULATED (SYNTHETIC speech)' '$T/mor/report.html'"
else
	echo "# skip - McAdams on the built-in synthetic corpus: data/brown is missing (run \`sh .ci/deps\`); not counted as passed"
fi
t_done
