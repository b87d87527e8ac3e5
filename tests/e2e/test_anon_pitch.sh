#!/bin/bash
# tests/e2e/test_anon_pitch.sh - `vpaudit anonymise pitch` (TD-PSOLA, issue 17
# item 2) end to end: the output data directory (same sample counts, lists
# copied, anon_coeffs in semitones), S = 0 / R = 1 giving the input samples
# back, thread-count and seed determinism of the draws, and the bad-input
# lines (exit status, nothing written).  The pitch itself is measured by
# tests/unit/test_pshift.c.  Audio: tests/golden/audio/g16.wav (synthetic
# speech, 0.5 s).
. tests/e2e/lib.sh
G=$PWD/tests/golden/audio
C=$PWD/tests/fuzz/corpus/audio
cd "$T"

mkdir d
for u in u1 u2 u3 u4; do cp "$G/g16.wav" d/$u.wav; done
printf 'u1 d/u1.wav\nu2 d/u2.wav\nu3 d/u3.wav\nu4 d/u4.wav\n' > d/wav.scp
printf 'u1 s1\nu2 s1\nu3 s2\nu4 s2\n' > d/utt2spk
printf 's1 u1 u2\ns2 u3 u4\n' > d/spk2utt
printf 's1 m\ns2 f\n' > d/spk2gender
printf 'u1 a b\nu2 c\nu3 d\nu4 e f\n' > d/text
printf 's1 u3 nontarget\ns2 u4 target\n' > d/trials

t_run "pitch, +4 semitones" 0 -- anonymise pitch --semitones 4 --threads 2 d p1
t_ok "nothing on stderr" test ! -s "$ERR"
t_ok "wav.scp names OUT/wav/UTT.wav, absolute" bash -c "head -1 p1/wav.scp | grep -qx \"u1 \$(pwd -P)/p1/wav/u1.wav\""
t_ok "lists copied (utt2spk, spk2utt, spk2gender, text, trials)" bash -c \
	"cmp -s d/utt2spk p1/utt2spk && cmp -s d/spk2utt p1/spk2utt && cmp -s d/spk2gender p1/spk2gender && cmp -s d/text p1/text && cmp -s d/trials p1/trials"
t_ok "anon_coeffs: the shift in semitones" bash -c "diff - p1/anon_coeffs <<'X'
u1 4.000000
u2 4.000000
u3 4.000000
u4 4.000000
X"
t_ok "same sample count (file size), other samples" bash -c \
	"test \$(stat -c %s p1/wav/u1.wav) = \$(stat -c %s d/u1.wav) && ! cmp -s p1/wav/u1.wav d/u1.wav"
t_run "features read the pitch-shifted directory" 0 -- features fbank p1 -o p1.ark
t_run "S = 0, R = 1" 0 -- anonymise pitch --semitones 0 d p0
t_ok "S = 0, R = 1: the input samples back" bash -c \
	"cmp -s <(tail -c 16000 p0/wav/u1.wav) <(tail -c 16000 d/u1.wav)"
t_run "sigma ratio 0.5 changes the samples" 0 -- anonymise pitch --semitones 0 --sigma-ratio 0.5 d ps
t_ok "sigma ratio 0.5: other samples than S = 0, R = 1" bash -c "! cmp -s ps/wav/u1.wav p0/wav/u1.wav"
t_run "speaker-level draw, 1 thread" 0 -- anonymise pitch --semitones-range -6,6 --seed 7 --threads 1 d s1
t_run "speaker-level draw, 2 threads" 0 -- anonymise pitch --semitones-range -6,6 --level speaker --seed 7 --threads 2 d s2
t_ok "same files for 1 and 2 threads" diff -r s1 s2 -x wav.scp
t_ok "one shift per speaker, in [-6, 6)" bash -c \
	"test \$(cut -d' ' -f2 s1/anon_coeffs | sort -u | wc -l) = 2 && awk '{ if (\$2 < -6 || \$2 >= 6) exit 1 }' s1/anon_coeffs"
t_run "utterance-level draw" 0 -- anonymise pitch --semitones-range -6,6 --level utterance --seed 7 d u1
t_ok "one shift per utterance" test "$(cut -d' ' -f2 u1/anon_coeffs | sort -u | wc -l)" = 4

# bad input: one line, exit 1 (usage 2), nothing written
mkdir s; cp "$C/tiny16.wav" s/; printf 'x s/tiny16.wav\n' > s/wav.scp
t_run "shorter than a pitch frame" 1 -- anonymise pitch --semitones 3 s os
t_ok "shorter than a pitch frame: the line, nothing written" bash -c "test \"\$(cat $ERR)\" = \"vpaudit anonymise: error: utterance 'x': signal of 600 samples is shorter than the pitch tracker's frame of 907 samples\" && ! ls | grep -q '^os'"
t_run "OUT exists" 1 -- anonymise pitch --semitones 2 d p1
t_ok "OUT exists: the line" bash -c "test \"\$(cat $ERR)\" = 'vpaudit anonymise: error: p1: already exists'"
t_run "semitones out of range" 2 -- anonymise pitch --semitones 25 d ox
t_ok "semitones out of range: the line" bash -c "test \"\$(cat $ERR)\" = \"vpaudit anonymise: error: --semitones must be a number in [-24, 24], got '25'\""
t_run "semitones not a number" 2 -- anonymise pitch --semitones 3st d ox
t_run "no shift given" 2 -- anonymise pitch d ox
t_ok "no shift given: the line" bash -c "test \"\$(cat $ERR)\" = \"vpaudit anonymise: error: pitch needs --semitones S or --semitones-range LO,HI (see 'vpaudit anonymise --help')\""
t_run "sigma ratio out of range" 2 -- anonymise pitch --semitones 1 --sigma-ratio -1 d ox
t_ok "sigma ratio out of range: one line" bash -c "test \$(wc -l < $ERR) = 1 && grep -q -- '--sigma-ratio must be a number in \[0, 4\]' $ERR"
t_run "empty semitone range" 2 -- anonymise pitch --semitones-range 3,-3 d ox
t_run "semitones and range together" 2 -- anonymise pitch --semitones 1 --semitones-range -3,3 d ox
t_run "level without range" 2 -- anonymise pitch --level utterance d ox
t_ok "level without range: names --semitones-range" grep -q -- "--level needs --semitones-range" "$ERR"
t_run "--alpha is not a pitch option" 2 -- anonymise pitch --alpha 0.8 d ox
t_ok "--alpha is not a pitch option: the line" bash -c "test \"\$(cat $ERR)\" = \"vpaudit anonymise: error: --alpha applies to mcadams and warp, not pitch (see 'vpaudit anonymise --help')\""
t_run "--semitones is not a mcadams option" 2 -- anonymise mcadams --semitones 3 d ox
t_run "--sigma-ratio is not a warp option" 2 -- anonymise warp --sigma-ratio 2 d ox
t_ok "usage errors wrote nothing" bash -c "! ls | grep -q '^ox'"
t_run "anonymise --help" 0 -- anonymise --help
t_ok "help describes pitch and its options" bash -c "grep -q 'TD-PSOLA' $OUT && grep -q -- '--semitones-range' $OUT && grep -q -- '--sigma-ratio' $OUT"

# scenario level: `anonymise: {method: pitch}` (low/high in semitones) validated
# per method, and a small run on the built-in synthetic corpus
scn() { # $1 file, $2 anonymise map
	cat > "$1" <<YAML
name: pitch-audio
seed: 1
report: [json]
targets:
  - id: p
    kind: anonymised_speech
    source: audio
    audio:
      synthetic: {speakers: 8, utts: 3, brown: ${B:-data/brown}}
      anonymise: $2
      level: anon_level_spk
      extractor: {epochs: 2, hidden: 16, emb_dim: 8, chunk: 100, batch: 8}
    backend: {lda_dim: 0, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: p, attackers: [baseline, ignorant, lazy_informed]}
YAML
}
scn v1.yaml "{method: pitch, low: -6, high: 6}"
t_run "validate: method pitch, semitones -6..6" 0 -- validate v1.yaml
scn v2.yaml "{method: pitch, low: -30, high: 6}"
t_run "validate: semitones below -24" 1 -- validate v2.yaml
t_ok "validate: semitones below -24: located at low" grep -q "^vpaudit validate: error: v2.yaml:10:[0-9]*: 'low' must be a number in \[-24, 24\], got '-30'" "$ERR"
scn v3.yaml "{method: mcadams, low: -6, high: 6}"
t_run "validate: a semitone range for mcadams" 1 -- validate v3.yaml
t_ok "validate: a semitone range for mcadams: the line" bash -c \
	"test \"\$(head -1 $ERR)\" = \"vpaudit validate: error: v3.yaml:10:41: 'low' of method mcadams must be a McAdams alpha in (0, 2], got -6\""
scn v4.yaml "{method: warp, low: 0.1, high: 1.5}"
t_run "validate: warp alpha 1.5" 1 -- validate v4.yaml
t_ok "validate: warp alpha 1.5: the line" grep -q "^vpaudit validate: error: v4.yaml:10:[0-9]*: 'high' of method warp must be a warping alpha in (-1, 1), got 1.5" "$ERR"
scn v6.yaml "{method: pitch, high: 6}"
t_run "validate: pitch without low" 1 -- validate v6.yaml
t_ok "validate: pitch without low: the line" grep -q "^vpaudit validate: error: v6.yaml:10:[0-9]*: method pitch needs 'low' and 'high'" "$ERR"
scn v5.yaml "{method: pitch, low: 3, high: -3}"
t_run "validate: low above high" 1 -- validate v5.yaml
t_ok "validate: low above high: the line" grep -q "^vpaudit validate: error: v5.yaml:10:[0-9]*: 'low' 3 is above 'high' -3" "$ERR"
B=$OLDPWD/data/brown
if [ -z "${VPA_SKIP_BROWN:-}" ] && [ -f "$B/ca01" ] && command -v espeak-ng > /dev/null && command -v flite > /dev/null; then
	scn r.yaml "{method: pitch, low: -6, high: 6}"
	mkdir tmp
	TMPDIR=$T/tmp t_run "run: pitch-shifted synthetic corpus (8 speakers x 3)" 0 -- run r.yaml -o ro --quiet
	t_ok "run: the method recorded, three attacker records with an EER" bash -c \
		"grep -q '\"method\": \"pitch\"' ro/results.json && test \$(grep -c '^ *\"eer\": [0-9]' ro/results.json) -ge 3"
	t_ok "run: the temporary corpus is removed" test -z "$(ls -A tmp)"
else
	echo "# skip - pitch scenario run: data/brown, espeak-ng or flite is missing (run \`sh .ci/deps\`); not counted as passed"
fi
t_done
