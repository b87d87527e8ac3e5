#!/bin/bash
# tests/e2e/test_audio31.sh - issue 31, audio as it comes, through the CLI:
# resampling (--allow-downsample/--allow-upsample, the sox -r pipe form),
# raw PCM (the sox -t raw pipe form, --raw-format), --channel in every audio
# command, warping at 44.1 kHz, and the bad-input lines (exit status, no output).
# Audio: tests/golden/audio31/ (make_audio.sh there, with sox).
. tests/e2e/lib.sh
G=$PWD/tests/golden/audio31
cd "$T"

bad() { # NAME STATUS EXPECTED_STDERR_FIRST_LINE -- args (output bad.ark)
	local name=$1 st=$2 want=$3; shift 4
	rm -f bad.ark
	t_run "$name" "$st" -- "$@" -o bad.ark
	t_ok "$name: message" bash -c "head -1 $ERR | grep -qxF -- \"\$0\"" "$want"
	t_ok "$name: no output, no temporary" bash -c "! ls bad.ark* > /dev/null 2>&1"
}
body() { sed -n "/^$1 /,/]/p" "$2" | tail -n +2; }
export -f body

# --- resampling -----------------------------------------------------------------
bad "44.1 kHz without --allow-downsample" 1 \
	"vpaudit features: error: '$G/in44k.wav' is at 44100 Hz, expected 16000 Hz: resample it with --allow-downsample" \
	-- features fbank "$G/in44k.wav"
bad "8 kHz with --allow-downsample only" 1 \
	"vpaudit features: error: '$G/in8k.wav' is at 8000 Hz, expected 16000 Hz: resample it with --allow-upsample" \
	-- features fbank --allow-downsample "$G/in8k.wav"
t_run "44.1 kHz with --allow-downsample" 0 -- features fbank --allow-downsample "$G/in44k.wav" -o a1.ark --text --threads=1
t_run "the same on 2 threads" 0 -- features fbank --allow-downsample=true "$G/in44k.wav" -o a2.ark --text --threads=2
t_ok "identical for 1 and 2 threads" cmp -s a1.ark a2.ark
# 0.5 s at 16 kHz = 8000 samples: 1 + (8000 - 400) / 160 = 48 frames
t_ok "48 frames (0.5 s at 16 kHz)" test "$(($(wc -l < a1.ark) - 1))" = 48
t_run "8 kHz with --allow-upsample" 0 -- features fbank --allow-upsample "$G/in8k.wav" -o u.ark --text
t_ok "48 frames" test "$(($(wc -l < u.ark) - 1))" = 48
mkdir p
printf 'in44k sox %s -t wav -r 16000 -b 16 - |\nsox44k %s\n' "$G/in44k.wav" "$G/sox44k_16k.wav" > p/wav.scp
t_run "the sox -r 16000 pipe form resamples (no option needed)" 0 -- features fbank p -o p.ark --text
t_ok "pipe form = --allow-downsample on the file" bash -c "diff <(body in44k p.ark) <(tail -n +2 a1.ark)"
printf 'in8k sox %s -t wav -r 16k - |\n' "$G/in8k.wav" > p/wav.scp
t_run "sox -r 16k upsamples" 0 -- features fbank p -o p8.ark --text
t_ok "= --allow-upsample on the file" bash -c "diff <(body in8k p8.ark) <(tail -n +2 u.ark)"
# sox -r to another rate than the features': the pipe's rate, then the rule
printf 'in44k sox %s -t wav -r 22050 - |\n' "$G/in44k.wav" > p/wav.scp
bad "sox -r 22050 then 16 kHz features without the option" 1 \
	"vpaudit features: error: p/wav.scp:1: '$G/in44k.wav' is at 22050 Hz, expected 16000 Hz: resample it with --allow-downsample" \
	-- features fbank p
t_ok "the line is echoed" bash -c "sed -n 2p $ERR | grep -qxF '  in44k sox $G/in44k.wav -t wav -r 22050 - |'"
SOXR_USE_SIMD=0 t_run "SOXR_USE_SIMD set: refused" 1 -- features fbank --allow-downsample "$G/in44k.wav" -o e.ark
t_ok "SOXR_USE_SIMD: message" grep -qxF "vpaudit features: error: $G/in44k.wav: the environment variable SOXR_USE_SIMD is set: it changes libsoxr's resampling arithmetic; unset it for reproducible results" "$ERR"
t_ok "SOXR_USE_SIMD: no output" test ! -e e.ark

# embed: the same options (tests/golden/embed/ecapa.onnx: 20 mel bins, random weights)
E=$OLDPWD/tests/golden/embed/ecapa.onnx
bad "embed: 44.1 kHz without --allow-downsample" 1 \
	"vpaudit embed: error: '$G/in44k.wav' is at 44100 Hz, expected 16000 Hz: resample it with --allow-downsample" \
	-- embed "$E" --num-mel-bins=20 "$G/in44k.wav"
t_run "embed --allow-downsample, 1 thread" 0 -- embed "$E" --num-mel-bins=20 --allow-downsample "$G/in44k.wav" "$G/in8k.wav" --allow-upsample -o e1.ark --text --threads=1
t_run "embed, 2 threads" 0 -- embed "$E" --num-mel-bins=20 --allow-downsample "$G/in44k.wav" "$G/in8k.wav" --allow-upsample -o e2.ark --text --threads=2
t_ok "embed: identical for 1 and 2 threads, two embeddings" bash -c "cmp -s e1.ark e2.ark && test \$(grep -c '\[' e1.ark) = 2"
printf 'in44k sox %s -t wav -r 16000 - |\n' "$G/in44k.wav" > p/wav.scp
t_run "embed of the sox -r pipe form" 0 -- embed "$E" --num-mel-bins=20 p -o e3.ark --text
t_ok "= embed --allow-downsample of the file" bash -c "grep -q '^in44k' e3.ark && diff <(grep '^in44k' e3.ark) <(grep '^in44k' e1.ark)"
t_run "embed --raw-format" 0 -- embed "$E" --num-mel-bins=20 --raw-format=s16le:16000 "$G/pcm16k.raw" -o e4.ark --text
t_run "embed of the WAV" 0 -- embed "$E" --num-mel-bins=20 "$G/in16k.wav" -o e5.ark --text
t_ok "embed: raw = WAV" bash -c "diff <(sed 's/^[^ ]*//' e4.ark) <(sed 's/^[^ ]*//' e5.ark)"
t_run "embed --channel=1 of the stereo file" 0 -- embed "$E" --num-mel-bins=20 --channel=1 "$G/stereo.wav" -o e6.ark --text
t_run "embed of channel 1 as mono" 0 -- embed "$E" --num-mel-bins=20 "$G/mono1.wav" -o e7.ark --text
t_ok "embed: --channel 1 = channel 1" bash -c "diff <(sed 's/^[^ ]*//' e6.ark) <(sed 's/^[^ ]*//' e7.ark)"

# --- raw PCM ------------------------------------------------------------------------
mkdir r
printf 'raw sox -t raw -r 16000 -e signed -b 16 -c 1 %s -t wav - |\nwav %s\n' "$G/pcm16k.raw" "$G/in16k.wav" > r/wav.scp
t_run "sox -t raw pipe form" 0 -- features fbank r -o r.ark --text
t_ok "raw = the same samples in a WAV" bash -c "diff <(body raw r.ark) <(body wav r.ark)"
t_run "--raw-format s16le:16000" 0 -- features fbank --raw-format s16le:16000 "$G/pcm16k.raw" -o ro.ark --text
t_ok "--raw-format = the WAV" bash -c "diff <(tail -n +2 ro.ark) <(body wav r.ark)"
printf 'raw sox -t raw -r 16000 -e signed-integer -b 16 -c 1 %s -t wav -r 8000 - |\n' "$G/pcm16k.raw" > r/wav.scp
t_run "raw input and -r output: read and resampled" 0 -- features fbank --sample-frequency=8000 r -o r8.ark --text
t_ok "0.25 s at 8 kHz: 23 frames" test "$(($(wc -l < r8.ark) - 1))" = 23
printf 'raw sox -t raw -r 16000 -e mu-law -b 8 %s -t wav - |\n' "$G/pcm16k.raw" > r/wav.scp
bad "unknown raw encoding in the pipe" 1 \
	"vpaudit features: error: r/wav.scp:1: sox -t raw -e mu-law -b 8: expected -e signed-integer, unsigned-integer or floating-point" \
	-- features fbank r
printf 'raw sox -t raw -r 16000 -e signed -b 12 %s -t wav - |\n' "$G/pcm16k.raw" > r/wav.scp
bad "12-bit raw" 1 "vpaudit features: error: r/wav.scp:1: sox -t raw -e signed -b 12: signed raw PCM is -b 8, 16, 24 or 32" -- features fbank r
printf 'raw sox -t raw -e signed -b 16 %s -t wav - |\n' "$G/pcm16k.raw" > r/wav.scp
bad "raw without a rate" 1 "vpaudit features: error: r/wav.scp:1: sox -t raw input needs -r RATE, -e ENCODING and -b BITS before the file" -- features fbank r
printf 'x sox -v 0.5 %s -t wav - |\n' "$G/in16k.wav" > r/wav.scp
bad "sox input option not implemented (-v)" 1 \
	"vpaudit features: error: r/wav.scp:1: sox input option '-v' is not supported (sox is not executed): expected 'sox [-t raw -r N -e ENC -b BITS [-c N] [-L|-B]] FILE -t wav [-r N] - |'" \
	-- features fbank r
printf 'x sox %s -t wav - rate 16000 |\n' "$G/in44k.wav" > r/wav.scp
bad "sox effect not implemented (rate)" 1 \
	"vpaudit features: error: r/wav.scp:1: sox effect 'rate' is not supported (sox is not executed): expected 'sox FILE -t wav [-r N] [-b 16] [-e signed-integer] [-c 1] - |'" \
	-- features fbank r
printf 'x sox -r 8000 %s -t wav - |\n' "$G/in16k.wav" > r/wav.scp
bad "input -r on a file with a header" 1 \
	"vpaudit features: error: r/wav.scp:1: sox -r/-e/-b/-c/-L/-B before the input file apply to '-t raw' input only (a file with a header gives its own)" \
	-- features fbank r
bad "--raw-format: unknown encoding" 2 \
	"vpaudit features: error: --raw-format 'mulaw:8000': unknown encoding 'mulaw': expected ENCODING:RATE[:CHANNELS] with ENCODING one of s8 u8 s16le s16be s24le s24be s32le s32be f32le f32be f64le f64be (see 'vpaudit features --help')" \
	-- features fbank --raw-format mulaw:8000 "$G/pcm16k.raw"
printf 'wav %s\n' "$G/in16k.wav" > r/wav.scp
bad "--raw-format with a data directory" 1 \
	"vpaudit features: error: --raw-format applies to audio files given directly; in r write 'sox -t raw -r RATE -e ENC -b BITS FILE -t wav - |'" \
	-- features fbank --raw-format s16le:16000 r
head -c 7999 "$G/pcm16k.raw" > odd.raw
bad "raw file cut inside a sample" 1 "vpaudit features: error: odd.raw: 7999 bytes is not a whole number of s16le frames of 1 channel" \
	-- features fbank --raw-format s16le:16000 odd.raw

# --- channels -----------------------------------------------------------------------
t_run "stereo --channel 1" 0 -- features fbank --channel=1 "$G/stereo.wav" -o c1.ark --text
t_run "its channel 1 as a mono file" 0 -- features fbank "$G/mono1.wav" -o m1.ark --text
t_ok "--channel 1 = channel 1" bash -c "diff <(tail -n +2 c1.ark) <(tail -n +2 m1.ark)"
t_ok "embed --help lists --channel, --allow-downsample, --raw-format" bash -c \
	"'$VPAUDIT' embed --help | grep -q -- '--channel=N' && '$VPAUDIT' embed --help | grep -q -- '--allow-downsample' && '$VPAUDIT' embed --help | grep -q -- '--raw-format'"
mkdir st mo
printf 'u1 %s\n' "$G/stereo.wav" > st/wav.scp; printf 'u1 s1\n' > st/utt2spk
printf 'u1 %s\n' "$G/mono1.wav" > mo/wav.scp; printf 'u1 s1\n' > mo/utt2spk
t_run "anonymise without --channel on stereo" 1 -- anonymise mcadams st st_out
t_ok "the message names --channel" grep -qF "2 channels: pick one with --channel N (0-based)" "$ERR"
t_run "anonymise mcadams --channel 1" 0 -- anonymise mcadams --channel 1 st st_out
t_run "anonymise mcadams of channel 1 as mono" 0 -- anonymise mcadams mo mo_out
t_ok "same anonymised audio" bash -c "cmp -s \"\$(awk '{print \$2}' st_out/wav.scp)\" \"\$(awk '{print \$2}' mo_out/wav.scp)\""

# --- warping at 44.1 kHz ----------------------------------------------------------------
mkdir w
printf 'u1 %s\n' "$G/in44k.wav" > w/wav.scp; printf 'u1 s1\n' > w/utt2spk
t_run "anonymise warp at 44.1 kHz (32 ms = 1411.2 samples -> 1412)" 0 -- anonymise warp --alpha 0.1 w w_out
t_ok "output at 44.1 kHz, as long as the input" bash -c \
	"soxi -r \"\$(awk '{print \$2}' w_out/wav.scp)\" | grep -qx 44100 && test \"\$(soxi -s \"\$(awk '{print \$2}' w_out/wav.scp)\")\" = 22050"
t_run "--win-ms too short for the rate" 1 -- anonymise warp --alpha 0.1 --win-ms 0.3 --shift-ms 0.1 w w_out2
t_ok "the message speaks of --win-ms" grep -qxF "vpaudit anonymise: error: utterance 'u1': --win-ms 0.3 at 44100 Hz is 14 samples: at least 16 are needed (--win-ms >= 0.341)" "$ERR"
t_ok "no output" test ! -e w_out2
t_run "--shift-ms over half the window" 1 -- anonymise warp --alpha 0.1 --win-ms 0.5 w w_out2
t_ok "the message speaks of --shift-ms" grep -qxF "vpaudit anonymise: error: utterance 'u1': --shift-ms 8 at 44100 Hz: the shift must be at least one sample and at most half of --win-ms (0.25 ms)" "$ERR"
t_done
