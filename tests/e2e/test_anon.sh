#!/bin/bash
# tests/e2e/test_anon.sh - `vpaudit anonymise` and `vpaudit wer` end to end:
# the output data directory, the McAdams output equal to the NumPy golden,
# thread-count and seed determinism, and the bad-input lines (exit status,
# nothing written).  Audio: tests/golden/audio/g16.wav (synthetic speech).
. tests/e2e/lib.sh
G=$PWD/tests/golden/audio
A=$PWD/tests/golden/anon
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
printf 's2 u4 target\n' > d/trials_f

t_run "mcadams, fixed alpha 0.8" 0 -- anonymise mcadams --alpha 0.8 --threads 2 d o1
t_ok "nothing on stderr" test ! -s "$ERR"
# absolute (issue 31): a relative path would be read against another run's folder
t_ok "wav.scp names OUT/wav/UTT.wav, absolute" bash -c "head -1 o1/wav.scp | grep -qx \"u1 \$(pwd -P)/o1/wav/u1.wav\""
t_ok "lists copied (utt2spk, spk2utt, spk2gender, text, trials, trials_f)" bash -c \
	"cmp -s d/utt2spk o1/utt2spk && cmp -s d/spk2utt o1/spk2utt && cmp -s d/spk2gender o1/spk2gender && cmp -s d/text o1/text && cmp -s d/trials o1/trials && cmp -s d/trials_f o1/trials_f"
t_ok "the audio equals the NumPy golden m16_a080 (samples)" bash -c \
	"cmp -s <(tail -c 16000 o1/wav/u3.wav) <(tail -c 16000 $A/m16_a080.wav)"
t_ok "no temporary left" bash -c "! ls | grep -q tmp"
t_run "features read the anonymised directory" 0 -- features fbank o1 -o o1.ark
t_run "speaker-level draw, 1 thread" 0 -- anonymise mcadams --alpha-range 0.5,0.9 --seed 7 --threads 1 d s1
t_run "speaker-level draw, 2 threads" 0 -- anonymise mcadams --alpha-range 0.5,0.9 --level speaker --seed 7 --threads 2 d s2
t_ok "same files for 1 and 2 threads" diff -r s1 s2 -x wav.scp
t_ok "one coefficient per speaker" bash -c \
	"test \$(cut -d' ' -f2 s1/anon_coeffs | sort -u | wc -l) = 2 && test \"\$(sed -n 1p s1/anon_coeffs | cut -d' ' -f2)\" = \"\$(sed -n 2p s1/anon_coeffs | cut -d' ' -f2)\""
t_ok "coefficients in [0.5, 0.9)" bash -c "awk '{ if (\$2 < 0.5 || \$2 >= 0.9) exit 1 }' s1/anon_coeffs"
t_run "utterance-level draw" 0 -- anonymise mcadams --alpha-range 0.5,0.9 --level utterance --seed 7 d u1
t_ok "one coefficient per utterance" test "$(cut -d' ' -f2 u1/anon_coeffs | sort -u | wc -l)" = 4
t_run "another seed" 0 -- anonymise mcadams --alpha-range 0.5,0.9 --level utterance --seed 8 d u2
t_ok "another draw" bash -c "! cmp -s u1/anon_coeffs u2/anon_coeffs"
mkdir sg; printf 'rec %s\n' "$G/g16.wav" > sg/wav.scp; printf 'a rec 0 0.25\nb rec 0.25 0.5\n' > sg/segments
t_run "segments: one file per segment" 0 -- anonymise warp --alpha 0.1 sg sgo
t_ok "segments: a.wav and b.wav of 4000 samples, no segments file" bash -c \
	"test \$(stat -c %s sgo/wav/a.wav) = 8044 && test \$(stat -c %s sgo/wav/b.wav) = 8044 && test ! -e sgo/segments && grep -qx \"b \$(pwd -P)/sgo/wav/b.wav\" sgo/wav.scp"
t_run "warp" 0 -- anonymise warp --alpha -0.1 d w1
t_ok "warp writes 4 files" test "$(ls w1/wav | wc -l)" = 4

# bad input: one line, exit 1 (usage 2), nothing written
t_run "OUT exists" 1 -- anonymise mcadams d o1
t_ok "OUT exists: the line" bash -c "test \"\$(cat $ERR)\" = 'vpaudit anonymise: error: o1: already exists'"
printf 'u1 d/u1.wav\nu2 d/missing.wav\n' > bad.scp; mkdir b; cp bad.scp b/wav.scp
t_run "missing audio" 1 -- anonymise mcadams b ob
t_ok "missing audio: names the wav.scp line" grep -q "b/wav.scp:2: " "$ERR"
t_ok "missing audio: one line, nothing written" bash -c "test \$(wc -l < $ERR) = 1 && ! ls | grep -q '^ob'"
mkdir s; cp "$C/tiny16.wav" s/; printf 'x s/tiny16.wav\n' > s/wav.scp
t_run "shorter than a frame" 1 -- anonymise mcadams --win-ms 50 s os
t_ok "shorter than a frame: the line" bash -c "test \"\$(cat $ERR)\" = \"vpaudit anonymise: error: utterance 'x': signal of 600 samples is shorter than one 800-sample frame\" && ! ls | grep -q '^os'"
mkdir n; cp d/wav.scp n/; 
t_run "speaker level without utt2spk" 1 -- anonymise mcadams --alpha-range 0.5,0.9 n on
t_ok "speaker level without utt2spk: the line" grep -qx "vpaudit anonymise: error: n: speaker-level anonymisation needs utt2spk" "$ERR"
t_run "alpha out of range" 2 -- anonymise mcadams --alpha 3 d ox
t_run "alpha and range together" 2 -- anonymise mcadams --alpha 0.5 --alpha-range 0.5,0.9 d ox
t_run "empty range" 2 -- anonymise mcadams --alpha-range 0.9,0.5 d ox
t_run "level without range" 2 -- anonymise mcadams --level speaker d ox
t_run "unknown anonymiser" 2 -- anonymise pitchy d ox
t_run "one argument" 2 -- anonymise mcadams d
t_ok "usage errors wrote nothing" bash -c "! ls | grep -q '^ox'"
t_run "anonymise --help" 0 -- anonymise --help
t_ok "help names the three anonymisers" bash -c "grep -q mcadams $OUT && grep -q warp $OUT && grep -q pitch $OUT"

# wer
printf 'u1 the cat sat on the mat\nu2 a b c d\nu3 hello world\n' > ref
printf 'u3 hello world\nu1 cat sat on a mat\nu2 a x c d e\n' > hyp
t_run "wer" 0 -- wer ref hyp
t_ok "wer: compute-wer's lines" bash -c "diff - $OUT <<'X'
%WER 33.33 [ 4 / 12, 1 ins, 1 del, 2 sub ]
%SER 66.67 [ 2 / 3 ]
Scored 3 sentences, 0 not present in hyp.
X"
printf 'u1 cat\nu3 hello world\n' > hyp2
# a missing hypothesis: its 4 words deleted (compute-wer --mode=all); by hand:
# u1 5 del, u2 4 del, u3 0: 9 / 12
t_run "wer: hypothesis missing an utterance" 0 -- wer ref hyp2
t_ok "wer: deletions, 1 not present" bash -c "diff - $OUT <<'X'
%WER 75.00 [ 9 / 12, 0 ins, 9 del, 0 sub ]
%SER 66.67 [ 2 / 3 ]
Scored 3 sentences, 1 not present in hyp.
X"
t_ok "wer: the warning" bash -c "test \"\$(cat $ERR)\" = \"vpaudit: warning: hyp2: 1 utterance of ref not present in hyp: its words scored as deletions\""
t_run "wer --strict: hypothesis missing an utterance" 1 -- wer --strict ref hyp2
t_ok "wer --strict: the line" bash -c "test \"\$(cat $ERR)\" = \"vpaudit wer: error: hyp2: utterance 'u2' of ref:2 has no hypothesis\" && test ! -s $OUT"
# normalisation, counted by hand: vpc: u1 HELLO WORLD IT IS ME / HELLO WORLD ITS ME
# (1 sub, 1 del), u2 THE CAT SAT both, u3 2 del; none: u1 4 sub 1 del, u2 The/the
# sub and '--' ins, u3 2 del; upper: u1 5 as none, u2 1 ins; punct: u1 5, u2 1 sub
printf 'u1 Hello, world! It is me.\nu2 the cat sat\nu3 one two\n' > nref
printf 'u1 HELLO WORLD ITS ME\nu2 The cat -- sat\n' > nhyp
for c in "vpc 40.00 [ 4 / 10, 0 ins, 3 del, 1 sub ]" "none 90.00 [ 9 / 10, 1 ins, 3 del, 5 sub ]" \
	"upper 80.00 [ 8 / 10, 1 ins, 3 del, 4 sub ]" "punct 80.00 [ 8 / 10, 0 ins, 3 del, 5 sub ]"; do
	t_run "wer --normalise ${c%% *}" 0 -- wer --normalise "${c%% *}" nref nhyp
	t_ok "wer --normalise ${c%% *}: %WER ${c#* }" grep -qxF "%WER ${c#* }" "$OUT"
done
t_run "wer: the default is vpc" 0 -- wer nref nhyp
t_ok "wer: default = vpc" grep -qxF "%WER 40.00 [ 4 / 10, 0 ins, 3 del, 1 sub ]" "$OUT"
t_run "wer --normalise bad" 2 -- wer --normalise lower nref nhyp
t_ok "wer --normalise bad: the line" grep -q "error: --normalise: expected vpc, upper, punct or none, got 'lower'" "$ERR"
t_run "wer: missing file" 1 -- wer ref nope
t_run "wer: one argument" 2 -- wer ref

# synth-corpus (espeak-ng, flite run by fork/exec)
if [ -z "${VPA_SKIP_BROWN:-}" ] && [ -f "$OLDPWD/data/brown/ca01" ] && command -v espeak-ng > /dev/null && command -v flite > /dev/null; then
	B=$OLDPWD/data/brown
	t_run "synth-corpus 8 speakers x 3, 2 threads" 0 -- synth-corpus c1 --speakers 8 --utts 3 --seed 5 --brown "$B" --threads 2
	t_ok "SYNTHETIC note and speakers.txt" bash -c "grep -q 'SYNTHETIC SPEECH' c1/SYNTHETIC && test \$(wc -l < c1/speakers.txt) = 8"
	t_ok "both genders, flite and espeak-ng voices" bash -c "grep -q ' f ' c1/speakers.txt && grep -q ' m ' c1/speakers.txt && grep -q flite c1/speakers.txt && grep -q espeak-ng c1/speakers.txt"
	t_ok "train 4 x 3, enrol 4, trials 8 utterances" bash -c "test \$(wc -l < c1/train/wav.scp) = 12 && test \$(wc -l < c1/enrol/enrolls) = 4 && test \$(wc -l < c1/trials/wav.scp) = 8"
	t_ok "same-gender trials: 2 enrolled x 4 per gender, 2 targets each" bash -c "test \$(wc -l < c1/trials/trials_f) = 8 && test \$(grep -c ' target' c1/trials/trials_m) = 4 && test \$(cat c1/trials/trials_f c1/trials/trials_m | wc -l) = \$(wc -l < c1/trials/trials)"
	t_ok "16 kHz 16-bit files" bash -c "test \$(head -c 28 c1/train/wav/synm001-01.wav | tail -c 4 | od -An -t u4) = 16000 && test \$(head -c 36 c1/train/wav/synm001-01.wav | tail -c 2 | od -An -t u2) = 16"
	t_run "synth-corpus, 1 thread" 0 -- synth-corpus c2 --speakers 8 --utts 3 --seed 5 --brown "$B" --threads 1
	# on a difference, the files that differ and the first bytes apart (as "# " lines, which tests/run.sh shows)
	t_ok "identical corpus for 1 and 2 threads (but wav.scp paths)" bash -c \
		"diff -rq -x wav.scp c1 c2 > dq 2>&1 && exit; sed 's/^/#   /' dq; grep '^Files' dq | head -n 3 | while read -r _ a _ b _; do cmp \"\$a\" \"\$b\" | sed 's/^/#   /'; ls -l \"\$a\" \"\$b\" | sed 's/^/#   /'; done; exit 1"
	t_run "the sets read as data directories" 0 -- features fbank c1/trials -o t.ark
	t_run "anonymise the trials" 0 -- anonymise mcadams --alpha-range 0.5,0.9 c1/trials c1a
	t_ok "anonymised trials keep the trial lists" cmp -s c1/trials/trials_f c1a/trials_f
	t_run "synth-corpus: OUT exists" 1 -- synth-corpus c1 --speakers 8 --utts 3 --brown "$B"
	t_run "synth-corpus: no Brown corpus" 1 -- synth-corpus c3 --speakers 8 --utts 3 --brown nowhere
	t_ok "synth-corpus: one line, nothing written" bash -c "test \$(wc -l < $ERR) = 1 && ! ls | grep -q '^c3'"
	t_run "synth-corpus: too few speakers" 2 -- synth-corpus c3 --speakers 3
else
	echo "# skip - synth-corpus: data/brown, espeak-ng or flite is missing (run \`sh .ci/deps\`); not counted as passed"
fi
t_done
