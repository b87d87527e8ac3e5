#!/bin/bash
# tests/e2e/test_anon_audio_ecapa.sh - the anonymised_speech target from audio with
# the ECAPA-TDNN extractor trained in C (`extractor: {architecture: ecapa}`,
# audio/ecapa.h) on the small espeak-ng corpus of test_anon_audio.sh (its
# speaker-level pitch-shift stand-in anonymiser): ASV_eval trained on original
# audio, ASV_eval^anon fine-tuned from it on anonymised audio (`semi_informed:
# finetune`), the attackers' EERs pinned by gates, the extractor named in the
# target's info, the same records on 1 and 2 threads, and a `channels` that is not
# a multiple of `res2_scale`: one located line, exit 1, nothing written.
. tests/e2e/lib.sh
C=$T/corpus
no_nan() { ! grep -Eqi ': -?(nan|inf|infinity),?$' "$1"; }
bash tests/e2e/audio/espeak_corpus.sh "$C" 24 8 > /dev/null 2>&1
t_ok "espeak-ng corpus made" test -s "$C/trial_anon/wav.scp" -a -s "$C/train/spk2gender"
scn() { # $1 file, $2 extractor keys, $3 extra YAML
	cat > "$1" <<YAML
name: anon-audio-ecapa
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
      extractor: {architecture: ecapa, $2epochs: 15, emb_dim: 32, chunk: 150, batch: 16,
                  semi_informed: finetune}
    backend: {lda_dim: 16, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: a, attackers: [baseline, ignorant, lazy_informed, semi_informed]}
$3
YAML
}
# Measured (2026-11-29, seed 1, data-parallel training: batch 16 in 2 shards of 8,
# issue 33): baseline 0, ignorant 0.393, lazy-informed 0.100, semi-informed
# (fine-tuned) 0; the x-vector (hidden 64) with the same settings: 0, 0.362, 0.151, 0
# (test_anon_audio.sh gates lazy-informed at 0.1 for it; the ECAPA links more of the
# pitch-shifted speech, hence 0.05 here).  Before the shards (one whole-batch step,
# at ff48d28): ECAPA 0, 0.359, 0.079, 0.009; x-vector 0, 0.419, 0.135,
# 0 (2026-11-25: ECAPA 0, 0.374, 0.088, 0.016).  Training ASV_eval: 3.5 s CPU
# (x-vector 3.0 s), 2026-11-25.
scn "$T/a.yaml" "channels: 32, res2_scale: 4, " "gates:
  - {attack: link.baseline, metric: eer, max: 0.1, allow_unreliable: true}
  - {attack: link.ignorant, metric: eer, min: 0.25, allow_unreliable: true}
  - {attack: link.lazy_informed, metric: eer, min: 0.05, allow_unreliable: true}
  - {attack: link.semi_informed, metric: eer, max: 0.05, allow_unreliable: true}"
t_run "run the audio target with the ECAPA-TDNN" 0 -- run "$T/a.yaml" -o "$T/out" --quiet
O=$T/out/results.json
t_ok "results.json written" test -s "$O"
t_ok "four gates, all pass" test "$(grep -c '"pass": true' "$O")" = 4
t_ok "the info names the ECAPA-TDNN and its sizes" \
	bash -c "grep -q '\"asv_eval\": \"ECAPA-TDNN trained in C\"' '$O' &&
		grep -q '\"architecture\": \"ecapa\"' '$O' && grep -q '\"channels\": 32' '$O' &&
		grep -q '\"res2_scale\": 4' '$O' && grep -q '\"semi_informed\": \"finetune\"' '$O'"
t_ok "the extractors' training is reported" grep -q '"asv_eval_anon_final_loss"' "$O"
t_ok "no NaN in results" no_nan "$O"
t_run "run on 1 thread" 0 -- run "$T/a.yaml" -o "$T/out1" --quiet --threads 1
t_ok "same EERs for 1 thread" test "$(grep '"eer"' "$O")" = "$(grep '"eer"' "$T/out1/results.json")"

# ---- bad input ----------------------------------------------------------------
scn "$T/b.yaml" "channels: 30, "
t_run "channels not a multiple of res2_scale" 1 -- run "$T/b.yaml" -o "$T/bo" --quiet
t_ok "one located line naming both keys" \
	grep -q "b.yaml:[0-9]*:[0-9]*: .*\`channels\` (30) must be a multiple of \`res2_scale\` (4)" "$ERR"
t_ok "no result written" test ! -e "$T/bo/results.json" -a ! -e "$T/bo/report.html"
t_run "channels not a multiple of res2_scale: vpaudit validate" 1 -- validate "$T/b.yaml"
t_ok "validate names the channels node" \
	grep -q "b.yaml:[0-9]*:[0-9]*: ECAPA-TDNN \`channels\` (30) must be a multiple of \`res2_scale\` (4)" "$ERR"
scn "$T/c.yaml" "channels: 32, " && sed -i 's/architecture: ecapa/architecture: resnet/' "$T/c.yaml"
t_run "an unknown architecture" 1 -- validate "$T/c.yaml"
t_ok "the architecture's choices are named" grep -q "c.yaml:[0-9]*:[0-9]*: .*xvector.*ecapa" "$ERR"
t_done
