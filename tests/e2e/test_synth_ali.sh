#!/bin/bash
# tests/e2e/test_synth_ali.sh - synth-corpus's phone alignments (issue 32
# item 2: phones.seg, ali.txt, phones.txt from the synthesisers' own timing)
# checked against values that do not come from that timing:
#  (a) the phone sequence of every utterance (SIL left out) is the one the
#      synthesiser prints by itself: `espeak-ng -x -q --sep=' '` (stress and
#      length marks ' , % = : removed, pauses "_..." left out: the corpus's
#      rule, done here by tr) or `flite -ps` (pau left out), same voice/text;
#  (b) the boundaries against the audio's energy (MFCC C0 = the frame's raw
#      log energy): per utterance, the mean of the SIL frames' energy is at
#      least 20 dB below the vowel frames' mean; for the utterances that
#      start with a sonorant (vowel, nasal, liquid, glide: its energy rises
#      at its start; a plosive starts with a silent closure, a weak fricative
#      under any fixed threshold), the leading SIL ends within 30 ms of the
#      energy onset (the centre of the first 5 ms frame, every 1 ms, within
#      40 dB of the utterance's loudest), checked on at least 5 of them and
#      on both synthesisers;
#  (c) ali.txt has as many labels per utterance as `vpaudit features` gives
#      frames (25 ms / 10 ms, snip-edges), and phones.seg is contiguous from
#      0 to utt2dur;
#  (d) the same files for --threads 1 and 2.
. tests/e2e/lib.sh
if [ -n "${VPA_SKIP_BROWN:-}" ] || [ ! -f "$PWD/data/brown/ca01" ] || ! command -v espeak-ng > /dev/null || ! command -v flite > /dev/null; then
	echo "# skip - synth-corpus alignments: data/brown, espeak-ng or flite is missing (run \`sh .ci/deps\`); not counted as passed"
	t_done
	exit 0
fi
B=$PWD/data/brown
cd "$T"

t_run "synth-corpus 8 speakers x 3, 2 threads" 0 -- synth-corpus c2 --speakers 8 --utts 3 --seed 1 --brown "$B" --threads 2
t_run "synth-corpus, 1 thread" 0 -- synth-corpus c1 --speakers 8 --utts 3 --seed 1 --brown "$B" --threads 1
t_ok "(d) phones.txt, phones.seg, ali.txt identical for 1 and 2 threads" bash -c \
	'cmp c1/phones.txt c2/phones.txt && for s in train enrol trials; do cmp c1/$s/phones.seg c2/$s/phones.seg && cmp c1/$s/ali.txt c2/$s/ali.txt || exit 1; done'
t_ok "phones.txt: SIL 0, then ids 1.. in byte order, no repeat" bash -c \
	'head -1 c1/phones.txt | grep -qx "SIL 0" && tail -n +2 c1/phones.txt | LC_ALL=C sort -c && awk "NR > 1 && \$2 != NR - 1 { exit 1 }" c1/phones.txt && test $(cut -d" " -f1 c1/phones.txt | sort -u | wc -l) = $(wc -l < c1/phones.txt)'
t_ok "every set has one phones.seg/ali.txt line set per utterance, in wav.scp order" bash -c \
	'for s in train enrol trials; do cmp <(cut -d" " -f1 c1/$s/wav.scp) <(cut -d" " -f1 c1/$s/ali.txt) && cmp <(cut -d" " -f1 c1/$s/wav.scp) <(cut -d" " -f1 c1/$s/phones.seg | uniq) || exit 1; done'
# (c) contiguity: each line starts where the one before ended, from 0 to utt2dur
t_ok "(c) phones.seg contiguous from 0 to the utterance's length (utt2dur)" bash -c \
	'for s in train enrol trials; do awk "FNR == 1 { f++ } f == 1 { d[\$1] = \$2; next }
		\$1 != u { if (u != \"\" && sprintf(\"%.4f\", e) != d[u]) exit 1; u = \$1; if (\$3 != 0) exit 1 }
		\$1 == u && NR > 1 && p == u && \$3 != e { exit 1 } { p = \$1; e = \$4; if (\$4 < \$3) exit 1 }
		END { if (sprintf(\"%.4f\", e) != d[u]) exit 1 }" c1/$s/utt2dur c1/$s/phones.seg || exit 1; done'
for s in train enrol trials; do
	t_run "features of $s (MFCC, C0 = log energy; default framing)" 0 -- features mfcc --text c1/$s -o e$s.ark
	t_run "features of $s, 5 ms frames every 1 ms (onsets)" 0 -- features mfcc --text --frame-length=5 --frame-shift=1 c1/$s -o o$s.ark
done
# (c) frame counts: rows of each utterance's matrix against ali.txt's labels
t_ok "(c) ali.txt: as many labels as feature frames, every utterance (24)" bash -c \
	'for s in train enrol trials; do awk "\$2 == \"[\" { u = \$1; n[u] = 0; next } { n[u]++ } END { for (u in n) print u, n[u] }" e$s.ark | sort > nf; awk "{ print \$1, NF - 1 }" c1/$s/ali.txt | sort > na; cmp nf na || exit 1; done; test $(cat c1/*/ali.txt | wc -l) = 24'
t_ok "(c) ali.txt's labels are the phones.seg phone covering each frame's centre" bash -c \
	'for s in train enrol trials; do awk "FNR == 1 { f++ } f == 1 { id[\$1] = \$2; next }
		f == 2 { k = ++m[\$1]; ph[\$1, k] = \$2; t1[\$1, k] = int(\$4 * 16000 + 0.5); next }
		{ k = 1; for (i = 2; i <= NF; i++) { c = (i - 2) * 160 + 200; while (t1[\$1, k] <= c) k++; if (id[ph[\$1, k]] != \$i) exit 1 } }" \
		c1/phones.txt c1/$s/phones.seg c1/$s/ali.txt || exit 1; done'

# (a) the phone sequences against the synthesisers' own phone strings
seq_check() {
	local bad=0 n_es=0 n_fl=0 u spk line text want got
	for s in train enrol trials; do
		while read -r u text; do
			spk=${u%-*}
			line=$(grep "^$spk " c1/speakers.txt)
			set -- $line
			if [ "$4" = espeak-ng ]; then
				want=$(espeak-ng -v "$6" -p "$8" -s "${10%,}" -x -q --sep=' ' -- "$text" | tr -d "',%=:" | tr ' ' '\n' | grep -v '^_' | grep -v '^$' | tr '\n' ' ')
				n_es=$((n_es + 1))
			else
				want=$(flite -voice "$6" --setf "$8" --setf "${10%,}" -ps -t "$text" -o none | tr ' ' '\n' | grep -v '^pau$' | grep -v '^$' | tr '\n' ' ')
				n_fl=$((n_fl + 1))
			fi
			got=$(awk -v u="$u" '$1 == u && $2 != "SIL" { printf "%s ", $2 }' c1/$s/phones.seg)
			if [ "$want" != "$got" ]; then
				echo "#   $u: synthesiser '$want'"
				echo "#   $u: phones.seg  '$got'"
				bad=1
			fi
		done < c1/$s/text
	done
	echo "#   compared $n_es espeak-ng and $n_fl flite utterances"
	test $bad = 0 && test $n_es -ge 5 && test $n_fl -ge 5
}
t_ok "(a) phone sequences = espeak-ng -x / flite -ps, all 24 utterances (>= 5 of each)" seq_check

# (b) energy of SIL vs vowel frames (dB = 10 log10 of the energy = 4.343 C0)
t_ok "(b) SIL frames' mean energy >= 20 dB below the vowel frames', every utterance" bash -c \
	'for s in train enrol trials; do awk -v MIN=20 "FNR == 1 { f++ } f == 1 { name[\$2] = \$1; next }
		f == 2 { for (i = 2; i <= NF; i++) lab[\$1, i - 2] = \$i; next }
		\$2 == \"[\" { u = \$1; k = 0; us[u] = 1; next }
		{ p = name[lab[u, k++]]; db = 10 * \$1 / log(10)
		  if (p == \"SIL\") { ss[u] += db; sn[u]++ } else if (p ~ /^[@30aAeEiIoOuUV]/) { vs[u] += db; vn[u]++ } }
		END { for (u in us) { if (!sn[u] || !vn[u]) exit 1; d = vs[u] / vn[u] - ss[u] / sn[u]
		      printf \"#   %s SIL %.1f dB below vowels\n\", u, d; if (d < MIN) exit 1 } }" \
		c1/phones.txt c1/$s/ali.txt e$s.ark || exit 1; done'
onset_check() {
	local s
	for s in train enrol trials; do
		awk 'FNR == 1 { f++ }
			f == 1 { if (!($1 in lead) && $2 != "SIL") { lead[$1] = $3; first[$1] = $2 } next }
			f == 2 { fl[$1] = ($4 == "flite"); next }
			$2 == "[" { u = $1; k = 0; mx[u] = -1e30; us[u] = 1; next }
			{ e[u, k++] = $1; if ($1 > mx[u]) mx[u] = $1 }
			END { for (u in us) {
				if (first[u] !~ /^([@30aAeEiIoOuUV]|(m|n|N|ng|l|r|w|j|y)$)/) continue
				for (k = 0; 10 * (mx[u] - e[u, k]) / log(10) > 40; k++) ;
				on = k * 0.001 + 0.0025; d = 1000 * (on - lead[u])
				spk = u; sub(/-[0-9]+$/, "", spk)
				printf "%s %s %s %.1f\n", u, fl[spk] ? "flite" : "espeak", first[u], d } }' \
			c1/$s/phones.seg c1/speakers.txt o$s.ark
	done > onsets
	sed 's/^/#   onset - leading SIL end (ms): /' onsets
	awk '{ if ($4 > 30 || $4 < -30) exit 1 }' onsets && test $(wc -l < onsets) -ge 5 &&
		grep -q ' flite ' onsets && grep -q ' espeak ' onsets
}
t_ok "(b) leading SIL ends within 30 ms of the energy onset (sonorant-initial utterances)" onset_check

# the helper and its sample check, by hand
printf 'he said it was too late' > txt
espeak-ng -v en-us+f3 -p 50 -s 160 -w p.wav -- "he said it was too late"
HELPER=$(dirname "$VPAUDIT")/vpaudit-espeak-phones
t_ok "vpaudit-espeak-phones: phone lines and END, library samples = the program's" bash -c \
	'"$0" en-us+f3 50 160 p.wav < txt > ph && grep -q "^h 0$\|^h [0-9]" ph && tail -1 ph | grep -q "^END [0-9]* 22050$"' "$HELPER"
t_ok "vpaudit-espeak-phones: other settings than the file's fail with one line (sample check)" bash -c \
	'! "$0" en-us+f3 51 160 p.wav < txt > ph2 && test $(wc -l < ph2) = 1 && grep -q "^error: libespeak-ng.s samples differ from espeak-ng.s file at sample" ph2' "$HELPER"
t_ok "vpaudit does not link libespeak-ng (GPL-3+): only its helper does" bash -c \
	'! ldd "$0" | grep -q espeak && ldd "$1" | grep -q libespeak-ng' "$VPAUDIT" "$HELPER"
mkdir -p nohelper && cp "$VPAUDIT" nohelper/vpaudit
VPAUDIT=$PWD/nohelper/vpaudit t_run "synth-corpus without the helper beside vpaudit" 1 -- synth-corpus nh --speakers 8 --utts 3 --brown "$B"
t_ok "... says where it looked and how to build it" grep -q "nohelper/vpaudit-espeak-phones: No such file or directory (the espeak-ng voices' phone timing; \`make\` builds it next to vpaudit, or set VPAUDIT_ESPEAK_PHONES)" "$ERR"
t_ok "... and writes nothing" test ! -e nh

t_done
