#!/bin/sh
# tests/golden/audio/make_audio.sh - the two short test recordings (SYNTHETIC speech
# from Debian's synthesisers; no real speaker).  Run once; the outputs are committed.
#   g16.wav  espeak-ng 1.51 voice en+f3 "Speech privacy audit.", 16 kHz, 0.5 s from 0.3 s
#   g8.wav   flite 2.2 voice slt "Privacy matters.", 8 kHz, 0.5 s from 0.3 s
# Needs espeak-ng, flite, sox (not needed by the tests).
set -eu
cd "$(dirname "$0")"
t=$(mktemp -d)
espeak-ng -v en+f3 -w "$t/e.wav" "Speech privacy audit."
sox "$t/e.wav" -r 16000 -b 16 -e signed-integer g16.wav trim 0.3 0.5
flite -voice slt -t "Privacy matters." -o "$t/f.wav"
sox "$t/f.wav" -r 8000 -b 16 -e signed-integer g8.wav trim 0.3 0.5
rm -rf "$t"
