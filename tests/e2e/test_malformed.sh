#!/bin/bash
# tests/e2e/test_malformed.sh - malformed inputs across the importers (issue
# 20 section 7): each broken copy of a valid import must give exactly one
# error line (the first stderr line, pinned here), exit status 1, nothing on
# stdout and no output folder.  Importers: Kaldi lists (utt2spk, spk2gender,
# utt2dur, trials, enrolls, ids), Kaldi text and binary archives, .npy,
# ARPA models, candidate lists, tagger confidences, FL activation folders,
# model folders, and score files / keys through `vpaudit metrics`.
. tests/e2e/lib.sh
top=$PWD
D=$top/tests/e2e/data

# no report file of a failed run (the folder may hold junit.xml with the <error> case)
no_report() { [ ! -e "$1/results.json" ] && [ ! -e "$1/report.html" ] && [ ! -e "$1/report.pdf" ]; }

# bad NAME SRCDIR YAML 'corruption (shell, run in the copy)' 'expected first stderr line'
bad() {
	local name=$1 src=$2 yaml=$3 corrupt=$4 want=$5
	rm -rf "$T/w" && cp -r "$src" "$T/w" && (cd "$T/w" && eval "$corrupt")
	(cd "$T/w" && ${VPA_WRAP:-} "$VPAUDIT" run "$yaml" -o out --no-plots --quiet > "$OUT" 2> "$ERR"); local rc=$?
	local got; got=$(head -n 1 "$ERR")
	if [ "$rc" = 1 ] && [ "$got" = "vpaudit run: error: $want" ] && [ ! -s "$OUT" ] && no_report "$T/w/out" &&
	   [ "$(grep -c '^vpaudit run: error:' "$ERR")" = 1 ]; then
		echo "ok - $name"; t_pass=$((t_pass + 1))
	else
		echo "not ok - $name (exit $rc)"; echo "#   got:  $got"; echo "#   want: vpaudit run: error: $want"
		t_fail=$((t_fail + 1))
	fi
}

A=$D/anon; Y=import.yaml; I="import.yaml:10:5: target 'imp'"
bad "utt2spk: duplicate utterance" $A $Y 'sed -i "2s/.*/train-s0001-u001 train-s0002/" train.utt2spk' \
	"train.utt2spk:2: duplicate utterance 'train-s0001-u001' (first on line 1)"
bad "utt2spk: three columns" $A $Y 'sed -i "2s/$/ x/" train.utt2spk' "train.utt2spk:2: expected 2 columns, found 3"
bad "utt2spk: empty" $A $Y ': > train.utt2spk' "$I: train.utt2spk: no entries"
bad "utt2spk: NUL byte" $A $Y 'printf "a\0b c\n" >> train.utt2spk' "train.utt2spk:241: unexpected NUL byte"
bad "spk2gender: unknown gender" $A $Y 'sed -i "1s/ f$/ x/" test.spk2gender' "test.spk2gender:1: unknown gender 'x': expected m or f"
bad "spk2gender: duplicate speaker" $A $Y 'sed -i "2s/test-s0002/test-s0001/" test.spk2gender' \
	"test.spk2gender:2: duplicate speaker 'test-s0001' (first on line 1)"
bad "utt2dur: negative" $A $Y 'sed -i "1s/ 3.05/ -3/" trial.utt2dur' "trial.utt2dur:1: expected a positive duration in seconds, got '-3'"
bad "utt2dur: nan" $A $Y 'sed -i "1s/ 3.05/ nan/" trial.utt2dur' "trial.utt2dur:1: expected a positive duration in seconds, got 'nan'"
bad "trials: unknown label" $A $Y 'sed -i "1s/target$/maybe/" trials' "trials:1: unknown label 'maybe': expected target or nontarget"
bad "trials: duplicate trial" $A $Y 'sed -i "2s/.*/test-s0001 test-s0001-u004 target/" trials' \
	"trials:2: duplicate trial 'test-s0001' 'test-s0001-u004' (first on line 1)"
bad "enrolls: unknown utterance" $A $Y 'sed -i "1s/u001/u999/" enrolls' "enrolls:1: unknown utterance 'test-s0001-u999'"
bad "enrolls: empty" $A $Y ': > enrolls' "$I: enrolls: no entries"
bad "text archive: nan" $A $Y 'sed -i "1s/0.699081858/nan/" trial.ark' \
	"trial.ark:1:20: value is not finite: 'nan' (utterance 'test-s0001-u004')"
bad "text archive: inf" $A $Y 'sed -i "1s/0.699081858/1e999/" trial.ark' \
	"trial.ark:1:20: value is not finite: '1e999' (utterance 'test-s0001-u004')"
bad "text archive: dimension" $A $Y 'sed -i "1s/0.699081858 //" trial.ark' \
	"trial.ark:2: utterance 'test-s0001-u005' has dimension 16, expected 15 as 'test-s0001-u004'"
bad "text archive: duplicate key" $A $Y 'head -1 trial.ark >> trial.ark' "trial.ark:81: duplicate utterance 'test-s0001-u004' (first on line 1)"
bad "text archive: a folder" $A $Y 'rm trial.ark && mkdir trial.ark' "import.yaml:20:24: 'trial.ark' is a folder, expected a file"
bad "binary archive: truncated" $A $Y 'head -c 300 trial_anon.ark > x && mv x trial_anon.ark' \
	"$I: trial_anon.ark: byte 180: truncated binary archive: vector 'test-s0001-u005' needs 128 bytes, 120 left"
bad "binary archive: huge dimension" $A $Y 'printf "u1 \0BFV \004\377\377\377\177" > trial_anon.ark' \
	"$I: trial_anon.ark: byte 13: truncated binary archive: vector 'u1' needs 8589934588 bytes, 0 left"
bad "binary archive: negative length" $A $Y 'printf "u1 \0BFV \004\377\377\377\377" > trial_anon.ark' \
	"$I: trial_anon.ark: byte 8: negative length -1 for 'u1'"
bad ".npy: Fortran order" $A $Y 'sed -i "s/.fortran_order.: False/\x27fortran_order\x27: True /" enroll.npy' \
	"$I: enroll.npy: Fortran-order arrays are not supported: save a C-order array (np.ascontiguousarray)"
bad ".npy: truncated" $A $Y 'head -c 200 enroll.npy > x && mv x enroll.npy' "$I: enroll.npy: truncated: expected 1920 bytes of data, found 72"
bad "ids: one short" $A $Y 'sed -i "\$d" enroll.ids' "$I: enroll.ids: 29 ids for 30 rows of enroll.npy"
bad "ids: duplicate" $A $Y 'sed -i "2s/.*/test-s0001-u001 test-s0001/" enroll.ids' \
	"enroll.ids:2: duplicate utterance 'test-s0001-u001' (first on line 1)"

L=$D/lm
bad "ARPA: nan probability" $L arpa-import.yaml 'sed -i "s/^-0.6\ta\t-0.3/nan\ta\t-0.3/" small.arpa' \
	"small.arpa:9: expected a log10 probability, got 'nan'"
bad "ARPA: count larger than the n-grams" $L arpa-import.yaml 'sed -i "s/ngram 1=5/ngram 1=6/" small.arpa' \
	"small.arpa:13: the header declares 6 1-grams (line 3), found 5"
bad "ARPA: huge count" $L arpa-import.yaml 'sed -i "s/ngram 1=5/ngram 1=99999999999999999999/" small.arpa' \
	"small.arpa:3: expected 'ngram 1=COUNT', found 'ngram 1=99999999999999999999'"
bad "ARPA: negative count" $L arpa-import.yaml 'sed -i "s/ngram 1=5/ngram 1=-5/" small.arpa' \
	"small.arpa:3: expected 'ngram 1=COUNT', found 'ngram 1=-5'"
bad "ARPA: duplicate n-gram" $L arpa-import.yaml 'sed -i "s/^-0.7\tb a$/-0.7\ta b/" small.arpa' "small.arpa:18: duplicate 2-gram"
bad "ARPA: binary" $L arpa-import.yaml 'printf "\0\1\2" > small.arpa' "small.arpa:1: NUL byte in an ARPA file"
bad "ARPA: no \\end\\" $L arpa-import.yaml 'sed -i "s/^.end.$//" small.arpa' "small.arpa:24: unexpected end of file: expected '\\end\\'"
bad "candidates: nan" $L cands-import.yaml 'sed -i "1s/.*/nan/" candidates.txt' "candidates.txt:1:1: score is not finite: 'nan'"
bad "candidates: empty" $L cands-import.yaml ': > candidates.txt' "cands-import.yaml:7:5: target 'own': candidates.txt: no scores"

G=$D/tagger
bad "confidences: nan" $G import.yaml 'sed -i "2s/\t[^\t]*$/\tnan/" conf.tsv' "conf.tsv:2:8: confidence must be a number in [0, 1], got 'nan'"
bad "confidences: duplicate word" $G import.yaml 'sed -n 2p conf.tsv >> conf.tsv' "conf.tsv:19: duplicate word 's' for class 'NOUN' (first on line 2)"

# FL acoustic models: a model folder whose model.yaml asks for 2^24 x 2^24
# weights (allocated before any check before: out of memory), a models.txt
# with a duplicate model, an Indicator file with NaN
M=$T/am
mkdir -p "$M" && (cd "$M" && "$VPAUDIT" run "$D/am/sim.yaml" -o sim --no-plots --quiet --allow-writes-outside > /dev/null 2>&1)
cp "$D/am/models.yaml" "$D/am/acts.yaml" "$M/"
t_ok "FL dumps for the malformed cases" test -s "$M/am-models/models.txt" -a -s "$M/am-acts/models.txt"
bad "model folder: huge dimension" $M models.yaml 'sed -i "s/out: 24/out: 16777216/" am-models/global/model.yaml' \
	"models.yaml:6:5: target 'fl': am-models/global/model.yaml: the layers need 1688853467365388 parameters but the tensor files (*.npy) of the folder hold 70048 bytes: missing or truncated tensor files, or a wrong size in model.yaml"
bad "models.txt: duplicate model" $M acts.yaml 'sed -i "3s/^[^ ]*/p1spk000-m1/" am-acts/models.txt' \
	"am-acts/models.txt:3: duplicate model 'p1spk000-m1' (first on line 2)"

# score files and keys through `vpaudit metrics`
printf 'a b 1.0\n' > "$T/k.scores"; printf 'a b maybe\n' > "$T/k.trials"
t_run "metrics: unknown key label" 1 -- metrics "$T/k.scores" --key "$T/k.trials"
t_ok "metrics: unknown key label, one line" test "$(cat "$ERR")" = "vpaudit metrics: error: $T/k.trials:1:5: unknown label 'maybe': expected target, nontarget, tar, non, 1 or 0"
printf 'a b target\na b nontarget\n' > "$T/k2.trials"
t_run "metrics: duplicate key pair" 1 -- metrics "$T/k.scores" --key "$T/k2.trials"
t_ok "metrics: duplicate key pair, one line" test "$(cat "$ERR")" = "vpaudit metrics: error: $T/k2.trials:2: duplicate pair 'a' 'b' (first on line 1)"
printf '1e999 target\n' > "$T/inf.txt"
t_run "metrics: infinite score" 1 -- metrics "$T/inf.txt"
t_ok "metrics: infinite score, one line" test "$(head -n 1 "$ERR")" = "vpaudit metrics: error: $T/inf.txt:1:1: score is not finite: '1e999'"
: > "$T/empty.txt"
t_run "metrics: empty file" 1 -- metrics "$T/empty.txt"
t_ok "metrics: empty file, one line" test "$(cat "$ERR")" = "vpaudit metrics: error: $T/empty.txt: no trials"
t_done
