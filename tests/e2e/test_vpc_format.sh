#!/bin/bash
# tests/e2e/test_vpc_format.sh - the VoicePrivacy text files of a run
# (issue 17 item 5: result_for_rank.txt, vpc2022_results.txt) and the
# per-gender linkage records they show (item 3, `per_gender: true`), on a
# simulated anonymised_speech target: the numbers in the files are the
# results.json numbers, the female and male records split the pooled trials,
# the files follow the output folder's rules (written with the other report
# files, removed when a later run in the folder does not write them), and
# `vpaudit report` renders the same files from results.json.
. tests/e2e/lib.sh
scn() { # $1 file, $2 report list, $3 extra attack keys
	cat > "$1" <<YAML
name: vpc-format
seed: 1
report: $2
targets:
  - id: sim
    kind: anonymised_speech
    simulate: {train_speakers: 100, pool_speakers: 400, test_speakers: 20}
attacks:
  - {id: link, kind: linkage, target: sim$3}
YAML
}
# the metric M of the record with sub S in results.json $1
val() { awk -v s="\"sub\": \"$2\"," -v m="\"$3\":" '$0 ~ s { on = 1 } on && $1 == m { sub(/,$/, "", $2); print $2; exit }' "$1"; }
pct() { awk -v x="$1" -v f="$2" 'BEGIN { printf f, 100 * x }'; }

scn "$T/a.yaml" "[json, junit, vpc]" ", per_gender: true"
cat >> "$T/a.yaml" <<'YAML'
gates:
  - {attack: link.baseline/trials_f, metric: eer, max: 0.2, allow_unreliable: true}
  - {attack: link.ignorant/trials_m, metric: eer, min: 0.3, allow_unreliable: true}
YAML
t_run "run with per_gender and vpc" 0 -- run "$T/a.yaml" -o "$T/out" --quiet
O=$T/out
R=$O/results.json
t_ok "both VPC files written" test -s "$O/result_for_rank.txt" -a -s "$O/vpc2022_results.txt"
t_ok "two per-gender gates pass" test "$(grep -c '"pass": true' "$R")" = 2
t_ok "15 records: 5 attackers x (pooled, f, m)" test "$(grep -c '"sub": "' "$R")" = 15
t_ok "a per-gender record names its list and gender" \
	test "$(val "$R" semi_informed/trials_m trials) $(val "$R" semi_informed/trials_m gender)" = '"trials_m" "m"'
nt=$(val "$R" baseline n_target); nf=$(val "$R" baseline/trials_f n_target); nm=$(val "$R" baseline/trials_m n_target)
t_ok "female + male target trials = pooled ($nf + $nm = $nt)" test $((nf + nm)) = "$nt"
nn=$(val "$R" informed n_nontarget); nnf=$(val "$R" informed/trials_f n_nontarget); nnm=$(val "$R" informed/trials_m n_nontarget)
t_ok "female + male non-target trials = pooled" test $((nnf + nnm)) = "$nn"
# result_for_rank: the pooled baseline row and the female ignorant row
e=$(pct "$(val "$R" baseline eer)" "%.3f")
t_ok "rank: pooled baseline EER $e" grep -Eq "^0 +sim +link +all +original +original +$e\$" "$O/result_for_rank.txt"
e=$(pct "$(val "$R" ignorant/trials_f eer)" "%.3f")
t_ok "rank: female ignorant EER $e" grep -Eq "^4 +sim +link +f +original +anon +$e\$" "$O/result_for_rank.txt"
e=$(pct "$(val "$R" informed/trials_m eer)" "%.3f")
t_ok "rank: ASV_eval^anon, male informed EER $e" \
	bash -c "sed -n '/ASV_eval^anon/,\$p' '$O/result_for_rank.txt' | grep -Eq '^5 +sim +link +m +informed +anon +$e\$'"
# vpc2022: the female lazy-informed block, every line from results.json
V=$O/vpc2022_results.txt
blk=$(grep -A6 -x 'ASV-link_enrolls_anon-link_trials_f_anon' "$V")
s=lazy_informed/trials_f
want="ASV-link_enrolls_anon-link_trials_f_anon
  EER: $(pct "$(val "$R" $s eer_sweep)" "%.4g")%
  Cllr (min/act): $(awk -v a="$(val "$R" $s cllr_min)" -v b="$(val "$R" $s cllr)" 'BEGIN { printf "%.3f/%.3f", a, b }')
  ROCCH-EER: $(pct "$(val "$R" $s eer)" "%.3f")%
  linkability: $(awk -v a="$(val "$R" $s linkability)" 'BEGIN { printf "%.6f", a }')
  Population: $(awk -v a="$(val "$R" $s dece)" 'BEGIN { printf "%.3f", a }') bit
  Individual: $(awk -v a="$(val "$R" $s log10_lr_worst)" 'BEGIN { printf "%.3f", a }') ($(val "$R" $s category | tr -d '"'))"
t_ok "vpc2022: the female lazy-informed block is results.json's" test "$blk" = "$want"
t_ok "vpc2022: 15 condition blocks" test "$(grep -c '^ASV' "$V")" = 15
g=$(awk -v a="$(val "$R" lazy_informed/trials_m gvd)" 'BEGIN { printf "%.6f", a }')
t_ok "vpc2022: G_VD of trials_m ($g)" bash -c "grep -A1 -x 'link_trials_m' '$V' | grep -qx '  Gain of voice distinctiveness : $g'"
t_ok "no NaN in the VPC files" bash -c "! grep -qi nan '$V' '$O/result_for_rank.txt'"
# vpaudit report renders the same files from results.json
t_run "vpaudit report into another folder" 0 -- report "$R" -o "$T/re" --no-plots
t_ok "report: the same result_for_rank.txt" cmp -s "$O/result_for_rank.txt" "$T/re/result_for_rank.txt"
t_ok "report: the same vpc2022_results.txt" cmp -s "$V" "$T/re/vpc2022_results.txt"
# the output folder's rules: a later run without vpc leaves none of them
scn "$T/b.yaml" "[json]" ""
t_run "a run without vpc into the same folder" 0 -- run "$T/b.yaml" -o "$T/out" --quiet
t_ok "its VPC files are gone" test ! -e "$O/result_for_rank.txt" -a ! -e "$O/vpc2022_results.txt"
scn "$T/c.yaml" "[json, vpc]" ", per_gender: true"
t_run "vpc again" 0 -- run "$T/c.yaml" -o "$T/out" --quiet
t_ok "written again" test -s "$O/vpc2022_results.txt"
cat > "$T/d.yaml" <<'YAML'
name: no-linkage
report: [json, vpc]
targets:
  - id: vpc
    kind: scores
    sets:
      - {name: ign, scores: SCORES}
attacks:
  - {id: eval, kind: evaluate, target: vpc}
YAML
sed -i "s#SCORES#$PWD/scenarios/data/ignorant.txt#" "$T/d.yaml"
t_run "vpc asked for, no linkage attack" 0 -- run "$T/d.yaml" -o "$T/out" --quiet
t_ok "no VPC file (none to write, the earlier run's removed)" \
	test ! -e "$O/result_for_rank.txt" -a ! -e "$O/vpc2022_results.txt" -a -s "$R"
# a gate on a per-gender sub of an attack without per_gender
scn "$T/e.yaml" "[json]" ""
printf 'gates:\n  - {attack: link.baseline/trials_f, metric: eer, max: 0.2}\n' >> "$T/e.yaml"
t_run "per-gender gate without per_gender" 1 -- validate "$T/e.yaml"
t_ok "the subs are named" grep -q "attack 'link' has no sub 'baseline/trials_f'" "$ERR"
t_done
