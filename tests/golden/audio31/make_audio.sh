#!/bin/sh
# tests/golden/audio31/make_audio.sh - the committed files of issue 31's audio tests,
# made with Debian 12's sox 14.4.2 (package 14.4.2+git20190427-3.5), 2026-11-28.  Run from
# this folder.  -D (no dither) everywhere: the files are the same on every run.
#   in44k.wav   0.5 s at 44.1 kHz, 16-bit: a 100 Hz - 20 kHz sweep (crosses 8 kHz,
#               the new Nyquist, so the anti-aliasing filter shows) plus a 440 Hz tone
#   in8k.wav    0.5 s at 8 kHz, 16-bit: a 100 - 3900 Hz sweep plus 440 Hz
#   sox44k_16k.wav, sox8k_16k.wav: sox's own `rate` (its default, -h: high quality,
#               linear phase) to 16 kHz, written as 32-bit float so that sox's
#               output quantisation and dither do not enter the comparison
#   stereo.wav  0.25 s at 16 kHz, 16-bit, 2 channels: channel 0 = 300 Hz, channel 1 = 1 kHz
#   mono1.wav   channel 1 of stereo.wav (sox remix 2)
#   pcm16k.raw  in16k.wav's samples without a header (s16le); in16k.wav 0.25 s of 16 kHz
set -eu
sox -D -n -r 44100 -b 16 -c 1 in44k.wav synth 0.5 sine 100-20000 sine 440 remix 1,2 gain -6
sox -D -n -r 8000 -b 16 -c 1 in8k.wav synth 0.5 sine 100-3900 sine 440 remix 1,2 gain -6
sox -D in44k.wav -e floating-point -b 32 sox44k_16k.wav rate 16000
sox -D in8k.wav -e floating-point -b 32 sox8k_16k.wav rate 16000
sox -D -n -r 16000 -b 16 -c 2 stereo.wav synth 0.25 sine 300 sine 1000 gain -6
sox -D stereo.wav mono1.wav remix 2
sox -D -n -r 16000 -b 16 -c 1 in16k.wav synth 0.25 sine 200-3000 gain -6
sox -D in16k.wav -t raw -e signed-integer -b 16 -L pcm16k.raw
