#!/bin/bash
# tests/e2e/test_reversed.sh - reversed scores (issue 25 item 1). The ROCCH-EER
# cannot exceed 50%, so scores where higher means a *different* speaker read
# EER 50% ("no leak"). Three cases made from the shipped synthetic score sets
# (scenarios/data): the semi-informed scores with their sign flipped
# (anti-correlated: sweep EER 87%, its 95% interval above 50%), the same
# scores as shipped (normal), and a borderline set: scores that do not depend
# on identity (a Weyl sequence, every 11th trial a target) whose sweep EER is
# 51% with an interval of 47.2-54.6%, which reaches 50%. And the linkage
# attack's ignorant attacker on the quickstart's simulated anonymiser, whose
# finding the chance_expected exception used to hide.
. tests/e2e/lib.sh
top=$PWD
S=$top/scenarios/data
cp "$S/semi_informed.trials" "$T/semi.trials"
cp "$S/semi_informed.scores" "$T/semi.scores"
awk '/^#/ { print; next } { $3 = -$3; print }' "$S/semi_informed.scores" > "$T/flipped.scores"
awk 'BEGIN { for (i = 1; i <= 2200; i++) { x = i * 0.4142135623; x -= int(x)
	printf "%.6f %s\n", x, i % 11 == 0 ? "target" : "nontarget" } }' > "$T/weyl.txt"
scen() { # FILE SETS-LINE GATES...
	local f=$1 sets=$2; shift 2
	{
		echo "name: rev"
		echo "seed: 1"
		echo "report: [html, json, junit]"
		echo "targets:"
		echo "  - {id: anon, kind: scores, sets: [$sets]}"
		echo "attacks:"
		echo "  - {id: asv, kind: evaluate, target: anon}"
		[ $# -gt 0 ] && echo "gates:"
		for g in "$@"; do echo "  - $g"; done
	} > "$f"
}
# rec FILE FILTER: true when FILTER holds, with $x the first record
rec() { jqt '.records[0] as $x | '"$2" "$1"; }
FL='{name: semi_informed, scores: flipped.scores, key: semi.trials}'
NM='{name: semi_informed, scores: semi.scores, key: semi.trials}'
BL='{name: weyl, scores: weyl.txt}'

# ---- reversed: the shipped semi-informed scores, sign flipped ------------------
scen "$T/flip.yaml" "$FL" "{attack: asv.semi_informed, metric: eer, min: 0.30}"
t_run "reversed: gate eer >= 0.30 fails closed (it passed at EER 0.5)" 3 -- run "$T/flip.yaml" -o "$T/flip" --no-plots
FAILLINE='FAIL asv.semi_informed eer = 0.5 fails closed, anti-correlated: the scores are anti-correlated with identity (threshold-sweep EER 87.0%, 95% interval 80.9-90.2%, above 50%): an attacker who reverses them reaches EER 12.2%'
t_ok "reversed: the FAIL line gives the finding" grep -qxF "$FAILLINE" "$OUT"
R=$T/flip/results.json
t_ok "reversed: anti_correlated true" rec "$R" '$x.anti_correlated == true'
t_ok "reversed: eer 0.5, eer_sweep 0.87" rec "$R" '$x.metrics.eer == 0.5 and $x.metrics.eer_sweep == 0.87'
t_ok "reversed: eer_flipped 0.1225 (the shipped scores' EER)" rec "$R" '$x.metrics.eer_flipped == 0.1225'
t_ok "reversed: cllr_min_flipped < 0.5 < cllr_min = 1" rec "$R" '$x.metrics.cllr_min_flipped < 0.5 and 0.5 < $x.metrics.cllr_min and $x.metrics.cllr_min == 1'
t_ok "reversed: min_dcf_flipped < min_dcf = 1" rec "$R" '$x.metrics.min_dcf_flipped < $x.metrics.min_dcf and $x.metrics.min_dcf == 1'
t_ok "reversed: the interval, by identities" rec "$R" '$x.anti_correlation | ((.eer_sweep_ci[0] * 1000) | round) == 809 and .level == 0.95 and .method == "bootstrap-identities"'
t_ok "reversed: gate object names the finding" rec "$R" '.gates[0].anti_correlated | startswith("the scores are anti-correlated")'
t_ok "reversed: warning" grep -qF 'vpaudit: warning: asv.semi_informed: the scores are anti-correlated with identity (threshold-sweep EER 87.0%, 95% interval 80.9-90.2%, above 50%): an attacker who reverses them reaches EER 12.2%' "$ERR"
t_ok "reversed: no weaker 'may be reversed' hint" eval "! grep -q 'may be reversed' '$ERR'"
H=$T/flip/report.html
t_ok "reversed: summary sentence" grep -qF 'The scores are anti-correlated with identity: an attacker who reverses them reaches EER 12.2% (the EER above reads a higher score as the same speaker).' "$H"
t_ok "reversed: no 'learns little'" eval "! grep -q 'learns little' '$H'"
t_ok "reversed: limitations item" grep -qF 'asv (sub semi_informed): the scores are anti-correlated with identity (threshold-sweep EER 87.0%, 95% interval 80.9-90.2%, above 50%): an attacker who reverses them reaches EER 12.2%. Its EER, Cllr_min and min DCF read a higher score as the same speaker' "$H"
t_ok "reversed: junit failure names it" grep -q 'message="eer = 0.5, bound &gt;= 0.3, anti-correlated: the scores are anti-correlated' "$T/flip/junit.xml"
t_run "reversed: vpaudit gate on the results fails the same way" 3 -- gate "$R"
t_ok "reversed: vpaudit gate's line" grep -qxF "$FAILLINE" "$OUT"
# every direction-reading metric fails closed; linkability and eer_flipped do not
scen "$T/flip2.yaml" "$FL" "{attack: asv, metric: cllr_min, min: 0.9}" "{attack: asv, metric: min_dcf, min: 0.9}" \
	"{attack: asv, metric: zebra.dece, max: 0.1}" "{attack: asv, metric: eer_sweep, min: 0.3}" \
	"{attack: asv, metric: linkability, max: 0.9}" "{attack: asv, metric: eer_flipped, min: 0.1}"
t_run "reversed: cllr_min, min_dcf, zebra, eer_sweep gates fail" 3 -- run "$T/flip2.yaml" -o "$T/flip2" --no-plots
t_ok "reversed: 4 fail closed, anti-correlated" test "$(grep -c '^FAIL asv .* fails closed, anti-correlated: the scores are anti-correlated' "$OUT")" = 4
t_ok "reversed: linkability passes" grep -qx 'PASS asv linkability = 0.681259 <= 0.9' "$OUT"
t_ok "reversed: eer_flipped passes" grep -qx 'PASS asv eer_flipped = 0.1225 >= 0.1' "$OUT"
# opting in
scen "$T/opt.yaml" "$FL" "{attack: asv.semi_informed, metric: eer, min: 0.30, allow_anti_correlated: true}" \
	"{attack: asv.semi_informed, metric: eer_flipped, min: 0.30}"
t_run "reversed: allow_anti_correlated: the bound decides; eer_flipped fails" 3 -- run "$T/opt.yaml" -o "$T/opt" --no-plots
t_ok "reversed: opted-in gate passes" grep -qx 'PASS asv.semi_informed eer = 0.5 >= 0.3' "$OUT"
t_ok "reversed: the reversing attacker breaks the bound" grep -qx 'FAIL asv.semi_informed eer_flipped = 0.1225 < 0.3' "$OUT"
t_ok "reversed: the opt-in is echoed" rec "$T/opt/results.json" '.gates[0].allow_anti_correlated == true'
t_run "validate: allow_anti_correlated is a gate key" 0 -- validate "$T/opt.yaml"
scen "$T/bad.yaml" "$FL" "{attack: asv.semi_informed, metric: eer, min: 0.3, allow_anti_correlated: 1}"
t_run "validate: allow_anti_correlated must be a boolean" 1 -- validate "$T/bad.yaml"

# ---- vpaudit metrics on the same files -----------------------------------------
t_run "metrics: reversed scores" 0 -- metrics "$T/flipped.scores" --key "$T/semi.trials"
t_ok "metrics: EER of the reversed scores" grep -qx 'EER (reversed)   12.2500 %   the scores negated: what an attacker who reverses them reaches' "$OUT"
t_ok "metrics: ANTI-CORRELATED line" grep -q '^ANTI-CORRELATED with identity: sweep EER 95% interval \[8[0-9.]* %, 9[0-9.]* %\] above 50%$' "$OUT"
t_ok "metrics: the finding on stderr" grep -q 'flipped.scores: the scores are anti-correlated with identity (threshold-sweep EER 87.0%, 95% interval 8.*): an attacker who reverses them reaches EER 12.2%$' "$ERR"
t_run "metrics --json: shipped scores" 0 -- metrics "$T/semi.scores" --key "$T/semi.trials" --json
t_ok "metrics --json: not anti-correlated, eer_flipped 0.5" jqt '.anti_correlated == false and .eer_flipped == 0.5 and (.anti_correlation | has("eer_sweep_ci")) and .anti_correlation.eer_sweep_ci == null' "$OUT"

# ---- normal: the same scores as shipped ---------------------------------------
scen "$T/norm.yaml" "$NM" "{attack: asv.semi_informed, metric: eer, min: 0.10}"
t_run "normal: gate eer >= 0.10 passes" 0 -- run "$T/norm.yaml" -o "$T/norm" --no-plots
R=$T/norm/results.json
t_ok "normal: anti_correlated false, no interval needed" rec "$R" '$x.anti_correlated == false and ($x.anti_correlation | has("eer_sweep_ci")) and $x.anti_correlation.eer_sweep_ci == null'
t_ok "normal: eer_flipped 0.5 (reversing gains nothing)" rec "$R" '$x.metrics.eer_flipped == 0.5'
# (the glossary defines the term in every report: look for the finding's words)
t_ok "normal: no sentence" eval "! grep -q 'reverses them reaches' '$T/norm/report.html'"
t_ok "normal: no warning" eval "! grep -q 'anti-correlated\|may be reversed' '$ERR'"

# ---- borderline: the ignorant scores flipped, the interval reaches 50% --------
scen "$T/bord.yaml" "$BL" "{attack: asv.weyl, metric: eer, min: 0.30}"
t_run "borderline: gate eer >= 0.30 passes" 0 -- run "$T/bord.yaml" -o "$T/bord" --no-plots
R=$T/bord/results.json
t_ok "borderline: sweep EER above 50%" rec "$R" '$x.metrics.eer_sweep > 0.5'
t_ok "borderline: its interval reaches 50%" rec "$R" '$x.anti_correlation.eer_sweep_ci | .[0] <= 0.5 and 0.5 < .[1]'
t_ok "borderline: not anti-correlated" rec "$R" '$x.anti_correlated == false'
t_ok "borderline: no sentence in the report" eval "! grep -q 'reverses them reaches' '$T/bord/report.html'"
t_ok "borderline: the hint only" grep -qF 'asv.weyl: EER (threshold sweep) above 50% (51.0%): scores may be reversed' "$ERR"
t_ok "borderline: no finding on stderr" eval "! grep -q 'anti-correlated' '$ERR'"

# ---- the linkage attack's ignorant attacker (chance_expected) ------------------
cat > "$T/link.yaml" <<'EOF2'
name: link
seed: 1
report: [html, json]
targets:
  - id: anon-sim
    kind: anonymised_speech
    source: simulate
    simulate: {train_speakers: 200, pool_speakers: 400, test_speakers: 20, population: 300}
    anonymiser: {distance: plda, proximity: far, gender: same, assignment: speaker, n: 100, n_star: 50}
attacks:
  - {id: vpc, kind: linkage, target: anon-sim, attackers: [ignorant, semi_informed]}
gates:
  - {attack: vpc.ignorant, metric: eer, min: 0.30}
EOF2
t_run "linkage: the ignorant attacker's eer gate fails closed" 3 -- run "$T/link.yaml" -o "$T/link" --no-plots
t_ok "linkage: the finding is said for the ignorant attacker" grep -qF 'vpaudit: warning: vpc.ignorant: the scores are anti-correlated with identity (threshold-sweep EER 68.2%, 95% interval 62.4-71.4%, above 50%): an attacker who reverses them reaches EER 31.0%' "$ERR"
t_ok "linkage: summary sentence" grep -qF 'The scores are anti-correlated with identity: an attacker who reverses them reaches EER 31.0%' "$T/link/report.html"
t_ok "linkage: the semi-informed attacker is not anti-correlated" jqt '[.records[] | .anti_correlated] == [true, false]' "$T/link/results.json"
t_done
