#!/bin/bash
# tests/e2e/test_linkage.sh - the anonymised_speech target end to end:
# import from every format (tests/e2e/data/anon/, made by gen_fixtures.c:
# Kaldi text and binary archives, .npy float32/float64 with id lists,
# utt2spk, spk2gender, utt2dur, enrolls, trials) with the linkage,
# identification and slicing attacks; error cases pinned exactly (exit 1,
# nothing written); the simulate path (exit codes, files, one <svg per figure).
. tests/e2e/lib.sh
top=$PWD
D=$top/tests/e2e/data/anon
nfig() { grep -c '"type": "\(det\|linkability\|lines\|bars\)"' "$1"; }
nsvg() { grep -o '<svg' "$1" | wc -l; }
# records of an attack sub at the given layers: nrec REGEX-OF-LAYERS FILE
nrec() { grep -oz '"sub": "[a-z_]*",[[:space:]]*"layer": \('"$1"'\),' "$2" | tr '\0' '\n' | grep -c layer; }
no_nan() { ! grep -Eqi ': -?(nan|inf|infinity),?$' "$1"; }
# the fixture scenario with absolute paths, so that variants live in $T
abs() {
	sed -e "s#: \([a-z_0-9]*\.\(ark\|npy\|ids\|utt2spk\|spk2gender\|utt2dur\)\)#: $D/\1#g" \
		-e "s#enrolls: enrolls#enrolls: $D/enrolls#" -e "s#trials: trials#trials: $D/trials#" \
		"$D/import.yaml"
}

# ---- import: validate and run the shipped fixture scenario -------------------
t_run "validate import.yaml" 0 -- validate "$D/import.yaml"
t_ok "validate is silent" test ! -s "$OUT" -a ! -s "$ERR"
t_run "run import.yaml as shipped" 0 -- run "$D/import.yaml" -o "$T/shipped" --quiet
t_ok "shipped: results.json and report.html" test -s "$T/shipped/results.json" -a -s "$T/shipped/report.html"
# without allow_unreliable the fixture's gate fails closed: 80 target trials
abs | sed 's/, allow_unreliable: true//' > "$T/strict.yaml"
t_run "fixture gate without allow_unreliable fails closed" 3 -- run "$T/strict.yaml" -o "$T/strict" --quiet
t_ok "fails closed: the reason" grep -q 'link.baseline eer = [0-9.]* fails closed, unreliable: 80 target trials (fewer than 100)' "$ERR"

# gates pin what the numbers must show on the fixture
abs | sed '/^gates:/,$d' > "$T/gates.yaml"
cat >> "$T/gates.yaml" <<'EOF'
gates:
  - {attack: link.baseline, metric: eer, max: 0.05, allow_unreliable: true}
  - {attack: link.ignorant, metric: eer, min: 0.3, allow_unreliable: true}
  - {attack: link.informed, metric: eer, max: 0.05, allow_unreliable: true}
  - {attack: link.baseline, metric: linkability, min: 0.3, allow_unreliable: true}
  - {attack: ident.baseline, metric: mean_norm_rank, max: 0.15, allow_unreliable: true}
  - {attack: ident.ignorant, metric: mean_norm_rank, min: 0.2, layer: 40, allow_unreliable: true}
  - {attack: ident.baseline, metric: top1, min: 0.5, layer: 10, allow_unreliable: true}
  - {attack: slice.baseline, metric: eer, max: 0.05, layer: 1, allow_unreliable: true}
  - {attack: slice.ignorant, metric: eer, min: 0.3, allow_unreliable: true}
EOF
t_run "run the imported fixture with gates" 0 -- run "$T/gates.yaml" -o "$T/imp" --quiet
O=$T/imp
t_ok "results.json written" test -s "$O/results.json"
t_ok "report.html written" test -s "$O/report.html"
t_ok "status pass (every gate holds)" grep -q '"status": "pass"' "$O/results.json"
t_ok "nine gates, all pass" test "$(grep -c '"pass": true' "$O/results.json")" = 9
t_ok "not simulated" grep -q '"simulated": false' "$O/results.json"
t_ok "no NaN or infinity in results" no_nan "$O/results.json"
# every set was read, with its size
t_ok "train: 240 utterances of 40 speakers, d = 16" \
	grep -qz '"train": {[^}]*"utterances": 240,[^}]*"speakers": 40,[^}]*"dim": 16' "$O/results.json"
t_ok "train: 20 female and 20 male speakers (spk2gender)" \
	grep -qz '"train": {[^}]*"speakers": 40,[^}]*"female": 20,[^}]*"male": 20,' "$O/results.json"
t_ok "the report's set sizes have the female / male column" grep -q 'female / male' "$O/report.html"
t_ok "enrolls keeps 2 of 3 enrolment utterances" \
	grep -qz '"enroll": {[^}]*"utterances": 20,[^}]*"speakers": 10' "$O/results.json"
t_ok "trials list: 80 target, 320 non-target" grep -qz '"n_target": 80,[^}]*"n_nontarget": 320' "$O/results.json"
t_ok "population of 30 speakers" grep -qz '"population": {[^}]*"speakers": 30' "$O/results.json"
# records: 5 linkage attackers, 5 x 3 identification sizes (10, 20, 40), 2 x 2 slices
t_ok "24 records" test "$(grep -c '"attack": "\(link\|ident\|slice\)"' "$O/results.json")" = 24
t_ok "identification sizes 10, 20, 40" test "$(nrec '10\|20\|40' "$O/results.json")" = 15
t_ok "slices of 1 and 4 s" test "$(nrec '1\|4' "$O/results.json")" = 4
t_ok "chance rank of 40 speakers" grep -q '"chance_rank": 20.5' "$O/results.json"
t_ok "one <svg per figure" test "$(nsvg "$O/report.html")" = "$(nfig "$O/results.json")"
# DET + 5 linkability + bar chart + pi_link and pi_sing (issue 29), 2 per
# identification attacker, 2 slicing
t_ok "21 figures" test "$(nfig "$O/results.json")" = 21

# ---- import: bad input, exit 1, no report file --------------------------------
fails() { # NAME YAML-FILE EXPECTED-FIRST-STDERR-LINE
	t_run "$1: exit 1" 1 -- run "$2" -o "$T/bad"
	t_ok "$1: message" test "$(grep -m 1 '^vpaudit run: error: ' "$ERR")" = "$3"
	t_ok "$1: no report file" test ! -e "$T/bad/results.json" -a ! -e "$T/bad/report.html" -a ! -e "$T/bad/report.pdf"
	rm -rf "$T/bad"
	t_ok "$1: nothing on stdout" test ! -s "$OUT"
}
abs > "$T/abs.yaml"
t_run "absolute-path variant validates" 0 -- validate "$T/abs.yaml"

abs | sed "s#trials: $D/trials#trials: $D/trials_unknown#" > "$T/e1.yaml"
fails "unknown trial utterance" "$T/e1.yaml" \
	"vpaudit run: error: $D/trials_unknown:401: unknown test utterance 'test-s0001-u999'"

abs | sed "s#trial_anon.ark#trial_anon_d15.ark#" > "$T/e2.yaml"
fails "dimension mismatch" "$T/e2.yaml" \
	"vpaudit run: error: $T/e2.yaml:10:5: target 'imp': dimension mismatch: set 'trial_anon' has dimension 15, 'train' has 16"

abs | grep -v "trial_anon: {vectors" > "$T/e3.yaml"
fails "missing anonymised set" "$T/e3.yaml" \
	"vpaudit run: error: $T/e3.yaml:27:5: attacker 'ignorant' needs the imported set 'trial_anon' (target import: trial_anon: {vectors: ...})"
t_run "missing anonymised set: validate exits 1" 1 -- validate "$T/e3.yaml"

abs | grep -v "^      trials:" | sed "s#test.spk2gender#test_partial.spk2gender#" > "$T/e4.yaml"
fails "missing gender (same-gender trials need it)" "$T/e4.yaml" \
	"vpaudit run: error: $T/e4.yaml:10:5: target 'imp': $D/test_partial.spk2gender: no gender for speaker 'test-s0003' (needed for gender selection)"

abs | grep -v "population" > "$T/e5.yaml"
fails "identification without population" "$T/e5.yaml" \
	"vpaudit run: error: $T/e5.yaml:26:5: identification by attacker 'baseline' needs the imported set 'population' (extra enrolment speakers: target import: population: {vectors: ...})"

abs | sed "s#trial_anon_4s.ark#trial_anon_d15.ark#" > "$T/e6.yaml"
fails "slice of another dimension" "$T/e6.yaml" \
	"vpaudit run: error: $T/e6.yaml:30:5: attack 'slice': dimension mismatch: slice of 4 s, set 'trial_anon' has dimension 15, 'trial' has 16"

abs | sed "s#vectors: $D/trial_1s.ark, utt2spk: $D/test.utt2spk#vectors: $D/pop.ark, utt2spk: $D/pop.utt2spk#" > "$T/e7.yaml"
fails "slice without the trial utterances" "$T/e7.yaml" \
	"vpaudit run: error: $T/e7.yaml:30:5: attack 'slice': slice of 1 s: set 'trial' has no embedding for trial utterance 'test-s0001-u004'"

abs | sed "s#attackers: \[baseline, ignorant\]#attackers: [baseline, ignorant]\n    durations: [1, 2]#" > "$T/e8.yaml"
t_run "durations on an imported target: exit 1" 1 -- validate "$T/e8.yaml"
t_ok "durations on an imported target: message" grep -q "e8.yaml:[0-9]*:[0-9]*: an imported target cannot be cut by vpaudit" "$ERR"

# ---- simulate: a small target with the three attacks ---------------------------
cat > "$T/sim.yaml" <<'EOF'
name: anon-sim
seed: 2
targets:
  - id: sim
    kind: anonymised_speech
    simulate: {train_speakers: 150, pool_speakers: 300, test_speakers: 10, population: 70}
    anonymiser: {n: 60, n_star: 30}
attacks:
  - {id: link, kind: linkage, target: sim, attackers: [baseline, ignorant, semi_informed]}
  - {id: ident, kind: identification, target: sim, attackers: [baseline, ignorant], repeats: 3}
  - {id: slice, kind: slicing, target: sim, attackers: [baseline, ignorant], durations: [1, 4]}
gates:
  - {attack: link.baseline, metric: eer, max: 0.1}
  - {attack: ident.baseline, metric: mean_norm_rank, max: 0.2}
  - {attack: ident.ignorant, metric: eer, min: 0.2, layer: 80}
EOF
t_run "validate the simulate scenario" 0 -- validate "$T/sim.yaml"
t_run "run the simulate scenario" 0 -- run "$T/sim.yaml" -o "$T/sim"
for f in results.json report.html report.pdf junit.xml; do
	t_ok "simulate writes $f" test -s "$T/sim/$f"
done
t_ok "simulated target labelled" grep -q '"simulated": true' "$T/sim/results.json"
t_ok "SIMULATED banner in report.html" grep -q 'SIMULATED' "$T/sim/report.html"
t_ok "three PASS lines" test "$(grep -c '^PASS ' "$OUT")" = 3
t_ok "identification sizes 10, 20, 40, 80" test "$(nrec '10\|20\|40\|80' "$T/sim/results.json")" = 8
# DET + 3 linkability + bar chart + pi_link and pi_sing (issue 29), 2 x 2
# identification, 2 slicing
t_ok "13 figures" test "$(nfig "$T/sim/results.json")" = 13
t_ok "one <svg per figure (simulate)" test "$(nsvg "$T/sim/report.html")" = 13
t_ok "junit: 3 gates and 1 skipped case for slice, which no gate checks" grep -q 'tests="4" failures="0" errors="0" skipped="1"' "$T/sim/junit.xml"
# a failing gate: exit 3, files still written
sed 's/metric: eer, max: 0.1}/metric: eer, max: 0.0001}/' "$T/sim.yaml" > "$T/sim3.yaml"
t_run "a broken gate exits 3" 3 -- run "$T/sim3.yaml" -o "$T/sim3" --quiet
t_ok "a broken gate still writes results.json" grep -q '"status": "fail"' "$T/sim3/results.json"
# backend key plda_normalize_length (ivector-plda-scoring --normalize-length,
# default true): false gives the plain two-covariance LLR (much larger
# magnitudes here), true and the default give the same records
for v in false true default; do
	{ echo "name: k$v"; echo "report: [json]"; echo "targets:"; echo "  - id: anon"
	  echo "    kind: anonymised_speech"; echo "    source: simulate"
	  echo "    simulate: {train_speakers: 60, pool_speakers: 100, test_speakers: 12, population: 50}"
	  echo "    anonymiser: {n: 20, n_star: 10}"
	  if [ $v = default ]; then echo "    backend: {lda_dim: 0, length_norm: false}"
	  else echo "    backend: {lda_dim: 0, length_norm: false, plda_normalize_length: $v}"; fi
	  echo "attacks:"; echo "  - {id: vpc, kind: linkage, target: anon, attackers: [baseline], gvd: false}"
	} > "$T/k$v.yaml"
	t_run "plda_normalize_length $v runs" 0 -- run "$T/k$v.yaml" -o "$T/k$v" --quiet
done
cllr() { grep -m1 '"cllr"' "$1" | sed -E 's/.*: *//; s/,$//'; }
t_ok "plda_normalize_length false changes the scores" \
	test "$(cllr "$T/kfalse/results.json")" != "$(cllr "$T/ktrue/results.json")"
t_ok "plda_normalize_length defaults to true" \
	test "$(cllr "$T/kdefault/results.json")" = "$(cllr "$T/ktrue/results.json")"
t_ok "without the scaling the LLRs are larger (Cllr > 5 bits)" \
	awk -v c="$(cllr "$T/kfalse/results.json")" 'BEGIN { exit !(c > 5) }'
# identification with 8 probes: linkability undefined at every population
# size, said in one line (not one line per size)
{ echo "name: id"; echo "report: [json]"; echo "targets:"; echo "  - id: anon"
  echo "    kind: anonymised_speech"; echo "    source: simulate"
  echo "    simulate: {train_speakers: 60, pool_speakers: 100, test_speakers: 4, trial_utts: 2, population: 50}"
  echo "    anonymiser: {n: 20, n_star: 10}"; echo "attacks:"
  echo "  - {id: ident, kind: identification, target: anon, attackers: [baseline], repeats: 2}"
} > "$T/id.yaml"
t_run "identification with 8 probes" 0 -- run "$T/id.yaml" -o "$T/id" --quiet
t_ok "one line for the undefined linkability" \
	test "$(grep -c 'fewer than 10 probes' "$ERR")" = 1
t_ok "it counts the population sizes" \
	grep -q 'ident.baseline: fewer than 10 probes: linkability is undefined at 5 population sizes' "$ERR"
t_ok "identification records carry linkability_reliable" \
	grep -q '"linkability_reliable": false' "$T/id/results.json"
t_done
