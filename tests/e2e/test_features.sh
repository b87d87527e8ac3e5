#!/bin/bash
# tests/e2e/test_features.sh - `vpaudit features` end to end: data directories,
# wav.scp pipe forms, archives (binary/text/.npy), thread-count independence,
# and every bad-input case with its exact error line, exit status and no output.
# Audio: tests/golden/audio/g16.wav, g8.wav (synthetic speech, espeak-ng/flite).
. tests/e2e/lib.sh
G=$PWD/tests/golden/audio
C=$PWD/tests/fuzz/corpus/audio
cd "$T"

mkdir d
printf 'rec1 %s\nrec2 flac -c -d -s %s |\nrec3 sox %s -t wav - |\n' "$G/g16.wav" "$C/tiny.flac" "$C/tiny16.wav" > d/wav.scp
printf 'rec1 spk1\nrec2 spk2\nrec3 spk2\n' > d/utt2spk
printf 'spk1 rec1\nspk2 rec2 rec3\n' > d/spk2utt
printf 'spk1 f\nspk2 m\n' > d/spk2gender
printf 'rec1 speech privacy audit\n' > d/text

t_run "fbank of a data dir" 0 -- features fbank d -o out.ark --threads=1
t_ok "nothing on stderr" test ! -s "$ERR"
t_ok "binary FM archive: key, \\0B, FM" bash -c "head -c 12 out.ark | od -c | head -1 | grep -q 'r   e   c   1      \\\\0   B   F   M'"
# rec1: 8000 samples -> 48 frames of 23: 6 + 4+1+4+1 + 48*23*4 bytes
t_ok "rec1 is 48 x 23 floats" bash -c "test \$(od -An -t d4 -j 11 -N 4 out.ark) = 48 && test \$(od -An -t d4 -j 16 -N 4 out.ark) = 23"
t_ok "three utterances" test "$(grep -a -o 'FM ' out.ark | wc -l)" = 3
t_run "same with 2 threads" 0 -- features fbank d --output out2.ark --threads 2
t_ok "identical archive for 1 and 2 threads" cmp -s out.ark out2.ark
t_run "flac pipe form = sox pipe form = plain wav" 0 -- features fbank d/wav.scp -o pipes.ark --text
t_ok "rec2 (flac) and rec3 (sox of the wav) give the same text" bash -c \
	"diff <(sed -n '/^rec2 /,/]/p' pipes.ark | tail -n +2) <(sed -n '/^rec3 /,/]/p' pipes.ark | tail -n +2)"
t_ok "text archive: 'rec1  [' then rows" bash -c "head -1 pipes.ark | grep -qx 'rec1  \\['"
t_run "mfcc 8k to .npy" 0 -- features mfcc --sample-frequency=8000 --num-ceps=20 "$G/g8.wav" -o npy/
t_ok "g8.npy exists, no temporary left" bash -c "test -f npy/g8.npy && test -z \"\$(ls -A npy | grep -v '^g8.npy$')\""
t_ok ".npy header has shape (48, 20)" bash -c "head -c 128 npy/g8.npy | grep -aq \"'shape': (48, 20)\""
t_run "vad and sliding cmvn" 0 -- features mfcc "$G/g16.wav" --cmvn=sliding --center --cmn-window=300 --vad=true -o v.ark --text
t_ok "vad keeps 45 of 48 frames" test "$(($(wc -l < v.ark) - 1))" = 45

# relative paths in wav.scp are relative to the current directory (Kaldi), not to DATA
cp "$G/g16.wav" rel.wav; mkdir r; printf 'r1 rel.wav\n' > r/wav.scp
t_run "relative wav.scp path from the current directory" 0 -- features fbank r -o r.ark --text
t_ok "same features as the absolute path" bash -c \
	"diff <(tail -n +2 r.ark) <(sed -n '/^rec1 /,/]/p' pipes.ark | tail -n +2)"
(mkdir -p sub && cd sub && "$VPAUDIT" features fbank ../r -o x.ark 2> err.txt); t_ok "from another directory rel.wav is missing" grep -q "r/wav.scp:1: cannot open 'rel.wav'" sub/err.txt

# short utterance: warned and left out (Kaldi: zero frames)
head -c 644 "$C/tiny16.wav" > short.wav  # header + 300 samples (the header promises 600)
printf 'RIFF\x44\x02\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00data\x20\x02\x00\x00' > s.hdr
{ cat s.hdr; tail -c +45 "$C/tiny16.wav" | head -c 544; } > short.wav
t_run "short utterance alone: error" 1 -- features fbank short.wav -o s.ark
t_ok "warning then error" bash -c "grep -qx \"vpaudit: warning: utterance 'short' gives no frame (shorter than one frame): left out\" $ERR && grep -q 'no utterance gave a feature frame' $ERR"
t_ok "no output" test ! -e s.ark
t_run "short utterance with snip-edges=false: 2 frames" 0 -- features fbank short.wav --snip-edges=false -o s.ark --text
t_ok "2 rows" test "$(($(wc -l < s.ark) - 1))" = 2
t_run "short utterance among others: warned, left out" 0 -- features fbank short.wav "$G/g16.wav" -o s2.ark --text
t_ok "only g16 written" test "$(grep -c '\[' s2.ark)" = 1

# ---- bad input: one line FILE:LINE: ..., exit 1, no partial output
bad() { # NAME EXPECTED_STDERR_FIRST_LINE -- args
	local name=$1 want=$2; shift 3
	rm -f bad.ark
	t_run "$name" 1 -- "$@" -o bad.ark
	t_ok "$name: message" bash -c "head -1 $ERR | grep -qxF -- \"\$0\"" "$want"
	t_ok "$name: no output, no temporary" bash -c "! ls bad.ark* > /dev/null 2>&1"
}
mkdir b1; printf 'r1 %s\nr2 ffmpeg -i x.mp3 -f wav - |\n' "$G/g16.wav" > b1/wav.scp
bad "unknown pipe command" "vpaudit features: error: b1/wav.scp:2: command 'ffmpeg' is not executed: only 'flac -c -d -s FILE |', 'sox FILE -t wav - |' and 'sph2pipe -f wav FILE |' are read" -- features fbank b1
t_ok "the line is echoed" bash -c "sed -n 2p $ERR | grep -qxF '  r2 ffmpeg -i x.mp3 -f wav - |'"
mkdir b2; printf 'r1 %s\nr2 nowhere.wav\n' "$G/g16.wav" > b2/wav.scp
bad "missing file" "vpaudit features: error: b2/wav.scp:2: cannot open 'nowhere.wav': No such file or directory" -- features fbank b2
t_ok "missing file: the wav.scp line is echoed" bash -c "sed -n 2p $ERR | grep -qxF '  r2 nowhere.wav'"
mkdir b3; printf 'r1 %s\nr2 %s\n' "$G/g16.wav" "$G/g8.wav" > b3/wav.scp
bad "wrong rate" "vpaudit features: error: b3/wav.scp:2: '$G/g8.wav' is at 8000 Hz, expected 16000 Hz: resample it with --allow-upsample" -- features fbank b3
mkdir b4; printf 'r1 %s\nr1 %s\n' "$G/g16.wav" "$G/g16.wav" > b4/wav.scp
bad "duplicate utterance" "vpaudit features: error: b4/wav.scp:2: duplicate recording 'r1' (first on line 1)" -- features fbank b4
mkdir b5; printf 'r1 %s\n' "$G/g16.wav" > b5/wav.scp; printf 'u1 r1 0 0.3\nu2 r1 0.3 1.5\n' > b5/segments
bad "segment past the end" "vpaudit features: error: b5/segments:2: segment 'u2' ends at 1.5 s, past the end of recording 'r1' (0.5 s)" -- features fbank b5
t_ok "segment past the end: the segments line is echoed" bash -c "sed -n 2p $ERR | grep -qxF '  u2 r1 0.3 1.5'"
mkdir b6; printf 'r1 %s\nr2 %s\n' "$G/g16.wav" "$G/g16.wav" > b6/wav.scp; printf 'r1 s1\nr3 s1\n' > b6/utt2spk
bad "utt2spk and wav.scp disagree" "vpaudit features: error: b6/utt2spk:2: utterance 'r3' is not in wav.scp" -- features fbank b6
head -c 3000 "$G/g16.wav" > trunc.wav
bad "truncated wav" "vpaudit features: error: trunc.wav: truncated: the data chunk is longer than the file" -- features fbank trunc.wav
bad "corrupt flac" "vpaudit features: error: $C/cut.flac: corrupt audio after 0 samples: flac decoder lost sync." -- features fbank "$C/cut.flac"
bad "empty audio" "vpaudit features: error: $C/empty.wav: no audio samples" -- features fbank "$C/empty.wav"
bad "NaN in a float wav" "vpaudit features: error: $C/nan_float.wav: sample 2 is not finite" -- features fbank "$C/nan_float.wav"
bad "stereo without --channel" "vpaudit features: error: $C/stereo8k.wav: 2 channels: pick one with --channel N (0-based)" -- features fbank --sample-frequency=8000 "$C/stereo8k.wav"
t_run "stereo with --channel=1" 0 -- features fbank --sample-frequency=8000 --channel=1 "$C/stereo8k.wav" -o st1.ark --text
t_run "stereo with --channel=0" 0 -- features fbank --sample-frequency=8000 --channel 0 "$C/stereo8k.wav" -o st0.ark --text
# stereo8k.wav's channel 1 is minus channel 0: the power spectra, so the features, are equal
t_ok "channel 1 (= -channel 0) gives channel 0's two frames" bash -c "test \$(wc -l < st1.ark) = 3 && cmp -s st0.ark st1.ark"
# a failure at the third utterance leaves nothing (the first two were computed)
mkdir b7; printf 'r1 %s\nr2 %s\nr3 %s\n' "$G/g16.wav" "$G/g16.wav" "$C/empty.wav" > b7/wav.scp
bad "failure after good utterances" "vpaudit features: error: b7/wav.scp:3: $C/empty.wav: no audio samples" -- features fbank b7 --threads=1

cp "$G/g16.wav" "sp ace.wav"
bad "file name with a space" "vpaudit features: error: 'sp ace.wav': the utterance id 'sp ace' (the file name) is empty or has white space: use a wav.scp" -- features fbank "sp ace.wav"

# usage errors: exit 2
t_run "unknown option" 2 -- features fbank --num-ceps=13 d -o x.ark
t_ok "unknown option message" grep -qxF "vpaudit features: error: unknown option '--num-ceps' (see 'vpaudit features --help')" "$ERR"
t_run "bad boolean" 2 -- features fbank --snip-edges=yes d -o x.ark
t_ok "bad boolean message" grep -qxF "vpaudit features: error: --snip-edges must be true or false, got 'yes' (see 'vpaudit features --help')" "$ERR"
t_run "no kind" 2 -- features d -o x.ark
t_run "no -o" 2 -- features fbank d
t_ok "no usage-error output" test ! -e x.ark
t_run "help" 0 -- features --help
t_ok "help lists Kaldi options with defaults" bash -c "grep -q -- '--num-mel-bins=23' $OUT && grep -q -- '--dither=0' $OUT && grep -q -- '--window-type=povey' $OUT"
t_run "mfcc help" 0 -- features mfcc --help
t_ok "mfcc help has --num-ceps=13 and --cepstral-lifter=22" bash -c "grep -q -- '--num-ceps=13' $OUT && grep -q -- '--cepstral-lifter=22' $OUT"
t_done
