#!/bin/sh
# tests/e2e/audio/espeak_corpus.sh OUT [N_TRAIN_SPK] [N_TEST_SPK] - a small SYNTHETIC
# multi-speaker corpus from espeak-ng (voice variants m1-m7 / f1-f5, each speaker a
# variant with its own pitch and rate), 16 kHz, as Kaldi data directories
# OUT/{train,enroll,trial} (wav.scp, utt2spk, spk2gender), plus anonymised copies
# OUT/{train,enroll,trial}_anon made by a speaker-level pitch shift with sox
# (a stand-in anonymiser for the tests, not McAdams) with the same utterance ids.
# Deterministic (no random draws). Used by tests/e2e/test_anon_audio.sh.
set -eu
out=$1; ntr=${2:-24}; nte=${3:-8}
mkdir -p "$out"
sent() {
	case $1 in
	0) echo "The fulton county grand jury said friday an investigation took place.";;
	1) echo "Only a relative handful of such reports was received by the jury.";;
	2) echo "The jury further said that the city executive committee deserves praise.";;
	3) echo "It urged that the next legislature provide enabling funds for the plan.";;
	4) echo "The grand jury took a swipe at the state welfare department handling.";;
	5) echo "Nevertheless we feel that in the future fulton county should receive some money.";;
	6) echo "Four additional deputies will be employed at the county jail.";;
	7) echo "This is one of the major items in the budget for next year.";;
	esac
}
mkset() { # set first_spk n_spk first_utt n_utt
	d="$out/$1"; a="$out/$1_anon"
	mkdir -p "$d/wav" "$a/wav"
	: > "$d/wav.scp"; : > "$d/utt2spk"; : > "$d/spk2gender"; : > "$d/text"
	s=$2
	while [ $s -lt $(($2 + $3)) ]; do
		if [ $((s % 2)) -eq 0 ]; then g=m; v=m$((s / 2 % 7 + 1)); p=$((20 + (s * 7) % 35))
		else g=f; v=f$((s / 2 % 5 + 1)); p=$((55 + (s * 11) % 40)); fi
		r=$((140 + (s * 13) % 50))
		spk=$(printf 'spk%03d' $s)
		echo "$spk $g" >> "$d/spk2gender"
		shift_c=$(( (s % 5) * 60 + 240 ))
		u=$4
		while [ $u -lt $(($4 + $5)) ]; do
			utt="$spk-u$u"
			espeak-ng -v "en+$v" -p $p -s $r -w "$d/wav/$utt.22k.wav" "$(sent $((u % 8)))"
			sox -R "$d/wav/$utt.22k.wav" -r 16000 -b 16 "$d/wav/$utt.wav"
			rm "$d/wav/$utt.22k.wav"
			sox -R "$d/wav/$utt.wav" "$a/wav/$utt.wav" pitch "-$shift_c"
			echo "$utt $d/wav/$utt.wav" >> "$d/wav.scp"
			echo "$utt $a/wav/$utt.wav" >> "$a/wav.scp"
			echo "$utt $spk" >> "$d/utt2spk"
			echo "$utt $(sent $((u % 8)) | tr -d '.,' | tr 'A-Z' 'a-z')" >> "$d/text"
			u=$((u + 1))
		done
		s=$((s + 1))
	done
	cp "$d/utt2spk" "$d/spk2gender" "$d/text" "$a/"
}
mkset train 0 "$ntr" 0 6
mkset enroll "$ntr" "$nte" 0 2
mkset trial "$ntr" "$nte" 2 4
