#!/bin/bash
# tests/e2e/test_fl_speaker.sh - the FL vocal classifier end to end: a small
# simulated run (records per regime, the accountant's noise multiplier
# cross-checked with `vpaudit dp sigma`, the paper's SNR and accuracy order,
# attacks at chance under local DP), an imported population, bad input, and
# the shipped scenario validates.
. tests/e2e/lib.sh

D=tests/e2e/data/fls
# jrec ATTACK SUB KEY FILE: the number at "KEY": in the record (ATTACK, SUB)
jrec() {
	awk -v a="\"$1\"," -v s="\"$2\"," -v k="\"$3\":" '
		$1 == "\"attack\":" { at = ($2 == a) }
		$1 == "\"sub\":" { sb = ($2 == s) }
		at && sb && $1 == k { v = $2; sub(/,$/, "", v); print v; exit }' "$4"
}
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }'; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; }

t_run "small scenario runs" 0 -- run $D/small.yaml -o "$T/small" --threads 2 --quiet
R=$T/small/results.json
t_ok "results.json written" test -s "$R"
for s in none local central central_local; do
	t_ok "train record for $s" grep -q "\"sub\": \"$s\"" "$R"
done
t_ok "one lines figure of accuracy against rounds" grep -q '"id": "train-accuracy"' "$R"
t_ok "gates hold" grep -q '"status": "pass"' "$R"

# the accountant: q = 100 / 1e8, 15 rounds, (2, 1e-5)
z=$(jrec train central noise_multiplier "$R")
"$VPAUDIT" dp sigma --q 1e-6 --epsilon 2 --steps 15 --delta 1e-5 --json > "$T/sigma.json"
zc=$(sed -E 's/.*"sigma":([^,}]*).*/\1/' "$T/sigma.json")
t_ok "noise multiplier $z = vpaudit dp sigma $zc" near "$z" "$zc" 1e-12
t_ok "central_local uses the same multiplier" near "$(jrec train central_local noise_multiplier "$R")" "$zc" 1e-12
t_ok "deployment epsilon <= 2" lt "$(jrec train central epsilon_deployment "$R")" 2.0000001
t_ok "q_deployment = 100 / 1e8" near "$(jrec train central q_deployment "$R")" 1e-6 1e-18
# the run's own epsilon: cohorts of 100 from 1200 - 200 - 100 - 60 = 840 training users
t_ok "q of the run = 100 / 840" near "$(jrec train central q "$R")" 0.11904761904761904 1e-15
"$VPAUDIT" dp epsilon --q 0.11904761904761904 --sigma "$z" --steps 15 --delta 1e-5 --json > "$T/eps.json"
er=$(sed -E 's/.*"epsilon":([^,}]*).*/\1/' "$T/eps.json")
t_ok "epsilon of the run $(jrec train central epsilon "$R") = vpaudit dp epsilon $er" \
	near "$(jrec train central epsilon "$R")" "$er" 1e-9
t_ok "the run's epsilon is far above the deployment's" lt 10 "$(jrec train central epsilon "$R")"
t_ok "target info labels both" grep -q '"deployment_population": 100000000' "$R"
# local DP: the run's epsilon composes a user's k participations (sensitivity
# 2C sqrt k); checked through the inverse, vpaudit dp gaussian
k=$(jrec train local max_participations "$R"); el=$(jrec train local epsilon "$R")
t_ok "local: a user took part $k > 1 times" lt 1 "$k"
t_ok "local: the run's epsilon $el > 2 per release" lt 2 "$el"
"$VPAUDIT" dp gaussian --epsilon "$el" --delta 1e-5 --sensitivity "$(awk -v k="$k" 'BEGIN { printf "%.17g", 2 * sqrt(k) }')" --json > "$T/g.json"
t_ok "local: sigma for that epsilon at sensitivity 2 sqrt k = the release's sigma" \
	near "$(sed -E 's/.*"sigma":([^,}]*).*/\1/' "$T/g.json")" "$(jrec train local sigma_local "$R")" 1e-6
t_ok "central_local: the local part composed k times" \
	near "$(jrec train central_local epsilon_local_run "$R")" "$(awk -v k="$(jrec train central_local max_participations "$R")" 'BEGIN { print 25.7 * k }')" 1e-9
t_ok "no noise: SNR undefined (null)" test "$(jrec train none snr "$R")" = null
t_ok "central_local local epsilon 25.7" near "$(jrec train central_local epsilon_local "$R")" 25.7 1e-9

# the paper's order: local < central + weak local < central (SNR and accuracy)
for m in snr accuracy; do
	l=$(jrec train local $m "$R"); cl=$(jrec train central_local $m "$R"); c=$(jrec train central $m "$R")
	t_ok "$m: local $l < central_local $cl" lt "$l" "$cl"
	t_ok "$m: central_local $cl < central $c" lt "$cl" "$c"
done

# update attacks: linkable without local noise, at chance with local DP at eps 2
t_ok "linkage none: EER < 0.2" lt "$(jrec link none eer "$R")" 0.2
t_ok "linkage local: EER > 0.4" lt 0.4 "$(jrec link local eer "$R")"
t_ok "attribute none: well above chance" lt 0.5 "$(jrec attr none advantage "$R")"
t_ok "attribute local: advantage < 0.15" lt "$(jrec attr local advantage "$R")" 0.15

# jsw ATTACK SWEEP KEY FILE: KEY of the record (ATTACK, sweep value)
jsw() {
	awk -v a="\"$1\"," -v w="$2," -v k="\"$3\":" '
		$1 == "\"attack\":" { at = ($2 == a) }
		$1 == "\"sweep\":" { sw = ($2 == w) }
		at && sw && $1 == k { v = $2; sub(/,$/, "", v); print v; exit }' "$4"
}
# local DP: attacks at chance at epsilon 1, successful at epsilon 1e5
t_run "epsilon sweep runs" 0 -- run $D/sweep.yaml -o "$T/sw" --quiet
W=$T/sw/results.json
t_ok "linkage EER falls as noise shrinks" lt "$(jsw link 100000 eer "$W")" "$(jsw link 1 eer "$W")"
t_ok "linkage at epsilon 1 near chance (EER > 0.4)" lt 0.4 "$(jsw link 1 eer "$W")"
t_ok "linkage at epsilon 1e5 (EER < 0.1)" lt "$(jsw link 100000 eer "$W")" 0.1
t_ok "attribute accuracy at epsilon 1 near chance" lt "$(jsw attr 1 advantage "$W")" 0.1
t_ok "attribute accuracy at epsilon 1e5 well above chance" lt 0.5 "$(jsw attr 100000 advantage "$W")"

# the paper's central set-up: 100M users, cohort 300, 60 rounds, (2, 1e-5)
t_run "paper set-up runs" 0 -- run $D/paper_accounting.yaml -o "$T/paper" --quiet
zp=$(jrec train central noise_multiplier "$T/paper/results.json")
t_run "paper set-up: dp sigma" 0 -- dp sigma --q 3e-6 --epsilon 2 --steps 60 --delta 1e-5 --json
t_ok "paper set-up: target's multiplier $zp = vpaudit dp sigma" near "$zp" "$(sed -E 's/.*"sigma":([^,}]*).*/\1/' "$OUT")" 1e-12
t_ok "paper set-up: multiplier 0.44148" near "$zp" 0.4414763859 1e-9
t_run "paper set-up: dp epsilon at that multiplier" 0 -- dp epsilon --q 3e-6 --sigma "$zp" --steps 60 --delta 1e-5 --json
t_ok "paper set-up: epsilon 2" near "$(sed -E 's/.*"epsilon":([^,}]*).*/\1/' "$OUT")" 2 1e-6
t_ok "paper set-up: epsilon_deployment 2" near "$(jrec train central epsilon_deployment "$T/paper/results.json")" 2 1e-6

# no stated population: the noise is calibrated for the run itself (q = cohort /
# training users = 300 / 350), epsilon is 2, and nothing is called deployment
sed -e '/population: 1e8/d' -e 's/^name: fls-paper-accounting/name: fls-run-accounting/' \
	$D/paper_accounting.yaml > "$T/run_acc.yaml"
t_run "run accounting runs" 0 -- run "$T/run_acc.yaml" -o "$T/runacc" --quiet
RA=$T/runacc/results.json
t_ok "run accounting: q = 300 / 350" near "$(jrec train central q "$RA")" 0.8571428571428571 1e-15
t_ok "run accounting: epsilon 2" near "$(jrec train central epsilon "$RA")" 2 1e-6
zr=$(jrec train central noise_multiplier "$RA")
"$VPAUDIT" dp sigma --q 0.8571428571428571 --epsilon 2 --steps 60 --delta 1e-5 --json > "$T/sr.json"
t_ok "run accounting: multiplier = vpaudit dp sigma" near "$zr" "$(sed -E 's/.*"sigma":([^,}]*).*/\1/' "$T/sr.json")" 1e-12
t_ok "run accounting: no deployment numbers" bash -c "! grep -q -E '\"(epsilon_deployment|q_deployment|deployment_population)\"' '$RA'"

# same results with one thread (bit-identical)
t_run "small scenario, one thread" 0 -- run $D/small.yaml -o "$T/small1" --threads 1 --quiet
t_ok "records identical for 1 and 2 threads" bash -c \
	"diff <(sed -n '/\"records\"/,/\"sweep\"/p' '$R') <(sed -n '/\"records\"/,/\"sweep\"/p' '$T/small1/results.json') > /dev/null"

# import: a Kaldi archive, utt2user and labels
t_run "import runs" 0 -- run $D/import.yaml -o "$T/imp" --quiet
t_ok "import: not simulated" grep -q '"simulated": false' "$T/imp/results.json"
t_ok "import: 2 classes, 20 dims" bash -c "grep -q '\"classes\": 2' '$T/imp/results.json' && grep -q '\"dim\": 20' '$T/imp/results.json'"
# the same supervectors as an (n, d) float32 .npy (rows in utt2user order):
# the same population, so the same records and figures (timings aside)
t_run "import .npy runs" 0 -- run $D/import_npy.yaml -o "$T/impn" --quiet
t_ok "import .npy: users and dims as the archive" bash -c "grep -q '\"users\": 60' '$T/impn/results.json' && grep -q '\"dim\": 20' '$T/impn/results.json'"
# (up to "inputs": the input files differ by design, an .ark and an .npy)
t_ok "import .npy: records identical to the Kaldi archive's" \
	bash -c "diff <(awk '/\"records\": \[/{p=1} /\"inputs\": \[/{p=0} p' '$T/imp/results.json' | grep -v '_secs\|seconds\|_per_s\|\"total\"\|\"started\"\|fls-import') <(awk '/\"records\": \[/{p=1} /\"inputs\": \[/{p=0} p' '$T/impn/results.json' | grep -v '_secs\|seconds\|_per_s\|\"total\"\|\"started\"\|fls-import') > /dev/null"
t_ok "import .npy: inputs list the .npy with its SHA-256" \
	grep -q "\"sha256\": \"$(sha256sum $D/sv.npy | cut -c1-64)\"" "$T/impn/results.json"
mkdir -p "$T/npyb" && cp $D/labels $D/import_npy.yaml "$T/npyb/"
head -n 179 $D/utt2user > "$T/npyb/utt2user"; cp $D/sv.npy "$T/npyb/"
t_run "import .npy: one id short" 1 -- run "$T/npyb/import_npy.yaml" -o "$T/npyb/o" --quiet
t_ok "import .npy: the count named" grep -q "utt2user: 179 ids for 180 rows of .*sv.npy" "$ERR"
t_ok "import .npy: no report file (the folder is checked before the run)" test ! -e "$T/npyb/o/results.json" -a ! -e "$T/npyb/o/report.html" -a ! -e "$T/npyb/o/report.pdf"
cp $D/utt2user "$T/npyb/"; head -c 3000 $D/sv.npy > "$T/npyb/sv.npy"
t_run "import .npy: truncated" 1 -- run "$T/npyb/import_npy.yaml" -o "$T/npyb/o" --quiet
t_ok "import .npy: truncation named" grep -q "sv.npy: truncated: expected 14400 bytes of data, found 2872" "$ERR"
t_run "import: a user without a class" 1 -- run $D/import_bad.yaml -o "$T/bad" --quiet
t_ok "import: one clear error line" grep -q "labels_missing: no class for user 'user59'" "$ERR"

# the shipped scenario
t_run "apple-fl-dp.yaml validates" 0 -- validate scenarios/apple-fl-dp.yaml
t_done
