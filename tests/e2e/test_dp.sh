#!/bin/bash
# tests/e2e/test_dp.sh - `vpaudit dp` end to end: the published accountant
# values, JSON shapes, round trips, monotonicity, bad input.
. tests/e2e/lib.sh

# jnum KEY: the number at "KEY": in the one-line JSON on $OUT
jnum() { sed -E "s/.*\"$1\":([^,}]*).*/\1/" "$OUT"; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; }
rel() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t * (b < 0 ? -b : b)) }'; }

# dp_accounting's RdpAccountant (its unsigned fractional series: --series
# unsigned) at q = 0.01, 1000 steps, delta = 1e-5 prints 252.9998 / 15.4721 /
# 1.01295 (Liu et al.'s Table 5 settings; the paper's 248.6 / 14.2 / 0.9 use
# an approximate device count, see metrics/DP.md).
for c in "0.2 252.9998 5e-5" "0.5 15.4721 5e-5" "1.5 1.01295 5e-6"; do
	set -- $c
	t_run "dp epsilon sigma $1" 0 -- dp epsilon --q 0.01 --sigma "$1" --steps 1000 --delta 1e-5 --json --series unsigned
	t_ok "sigma $1: epsilon $2 to half a printed digit" near "$(jnum epsilon)" "$2" "$3"
	t_ok "sigma $1: within 0.1%" rel "$(jnum epsilon)" "$2" 1e-3
	t_ok "sigma $1: JSON has exactly epsilon and order" grep -Eq '^\{"epsilon":[0-9.e+-]+,"order":[0-9.]+\}$' "$OUT"
	t_ok "sigma $1: nothing on stderr" test ! -s "$ERR"
done
t_run "order at sigma 1.5" 0 -- dp epsilon --q 0.01 --sigma 1.5 --steps 1000 --delta 1e-5 --json
t_ok "optimal order 17" test "$(jnum order)" = 17

# issue 25 item 5: the default series keeps the signs of the binomial
# coefficients (exact: tests/golden/dp/rdp.txt, an mpmath integral, gives
# 6.09011836 here); --series unsigned is today's dp_accounting upper bound
t_run "signed series by default" 0 -- dp epsilon --q 0.1 --sigma 0.9 --steps 20 --delta 1e-6
t_ok "signed: epsilon 6.0901184 at order 3.7" grep -qx 'epsilon           6.0901184' "$OUT"
t_ok "signed: the accountant line names no series" grep -qx 'accountant        RDP, Poisson-sampled Gaussian (dp_accounting order grid)' "$OUT"
t_run "--series signed is the default" 0 -- dp epsilon --q 0.1 --sigma 0.9 --steps 20 --delta 1e-6 --series signed
t_ok "--series signed: epsilon 6.0901184" grep -qx 'epsilon           6.0901184' "$OUT"
t_run "--series unsigned" 0 -- dp epsilon --q 0.1 --sigma 0.9 --steps 20 --delta 1e-6 --series unsigned
t_ok "unsigned: epsilon 6.0922744" grep -qx 'epsilon           6.0922744' "$OUT"
t_ok "unsigned: said on the accountant line" grep -q '; unsigned fractional series (upper bound)$' "$OUT"
t_run "sigma with --series unsigned" 0 -- dp sigma --q 0.1 --epsilon 6.0901184 --steps 20 --delta 1e-6 --series unsigned --json
t_ok "unsigned needs more noise for the same epsilon" awk -v s="$(jnum sigma)" 'BEGIN { exit !(s > 0.9) }'

# Monotone: more noise, less epsilon; more steps, more epsilon.
prev=1e300
for s in 0.6 0.8 1.1 1.6 2.5 4; do
	t_run "epsilon at sigma $s" 0 -- dp epsilon --q 0.02 --sigma $s --steps 500 --delta 1e-6 --json
	e=$(jnum epsilon)
	t_ok "epsilon decreases (sigma $s: $e)" awk -v a="$e" -v b="$prev" 'BEGIN { exit !(a < b) }'
	prev=$e
done
prev=0
for t in 1 10 100 1000 10000; do
	t_run "epsilon at $t steps" 0 -- dp epsilon --q 0.02 --sigma 1.2 --steps $t --delta 1e-6 --json
	e=$(jnum epsilon)
	t_ok "epsilon increases ($t steps: $e)" awk -v a="$e" -v b="$prev" 'BEGIN { exit !(a > b) }'
	prev=$e
done
t_run "steps as 1e3" 0 -- dp epsilon --q 0.01 --sigma 1.5 --steps 1e3 --delta 1e-5 --json
t_ok "1e3 steps = 1000 steps" near "$(jnum epsilon)" 1.01295 5e-6

# sigma <-> epsilon round trip through the CLI.
t_run "epsilon of sigma 0.7" 0 -- dp epsilon --q 0.005 --sigma 0.7 --steps 2000 --delta 1e-5 --json
e=$(jnum epsilon)
t_run "sigma for that epsilon" 0 -- dp sigma --q 0.005 --epsilon "$e" --steps 2000 --delta 1e-5 --json
t_ok "round trip gives sigma 0.7" rel "$(jnum sigma)" 0.7 1e-8
t_ok "sigma JSON shape" grep -Eq '^\{"sigma":[0-9.e+-]+\}$' "$OUT"
t_run "sigma for epsilon 1 (published settings)" 0 -- dp sigma --q 0.01 --epsilon 1 --steps 1000 --delta 1e-5 --json
t_ok "between 1.5 (eps 1.013) and 1.6" awk -v s="$(jnum sigma)" 'BEGIN { exit !(s > 1.5 && s < 1.6) }'
t_run "sigma table" 0 -- dp sigma --q 0.01 --epsilon 1 --steps 1000 --delta 1e-5
t_ok "table names the noise multiplier" grep -q "^noise multiplier  1.51" "$OUT"

# Gaussian mechanism: Balle & Wang's Theorem 8 solved in mpmath (50 digits).
t_run "gaussian eps 1" 0 -- dp gaussian --epsilon 1 --delta 1e-5 --json
t_ok "analytic sigma 3.7306316348" rel "$(jnum sigma)" 3.7306316348159418 1e-10
t_ok "classic sigma sqrt(2 ln 125000)" rel "$(jnum sigma_classic)" 4.844805262605389 1e-12
t_ok "classic not valid at eps 1" test "$(jnum classic_valid)" = false
t_run "gaussian eps 0.5, sensitivity 2" 0 -- dp gaussian --epsilon 0.5 --delta 0.01 --sensitivity 2 --json
t_ok "analytic sigma 6.29382619721" rel "$(jnum sigma)" 6.2938261972133605 1e-10
t_ok "classic valid below 1" test "$(jnum classic_valid)" = true
t_ok "analytic below classic" awk -v a="$(jnum sigma)" -v c="$(jnum sigma_classic)" 'BEGIN { exit !(a < c) }'
t_run "gaussian table at eps 2" 0 -- dp gaussian --epsilon 2 --delta 1e-5
t_ok "table warns that the classical bound is not valid" grep -q "NOT VALID: Dwork & Roth Thm 3.22 needs epsilon < 1" "$OUT"

# Help, usage errors (exit 2), nothing on stdout when failing.
t_run "vpaudit help dp" 0 -- help dp
t_ok "help on stdout" grep -q "^usage: vpaudit dp epsilon" "$OUT"
t_run "dp epsilon --help" 0 -- dp epsilon --help
t_ok "sub help on stdout" grep -q "^usage: vpaudit dp" "$OUT"
bad() { # name, args...
	local name=$1; shift
	t_run "$name exits 2" 2 -- "$@"
	t_ok "$name: nothing on stdout" test ! -s "$OUT"
	t_ok "$name: one line on stderr" test "$(wc -l < "$ERR")" = 1
}
bad "missing --q" dp epsilon --sigma 1 --steps 10 --delta 1e-5
bad "missing --epsilon" dp sigma --q 0.1 --steps 10 --delta 1e-5
bad "missing --delta" dp gaussian --epsilon 1
bad "q > 1" dp epsilon --q 1.01 --sigma 1 --steps 10 --delta 1e-5
bad "q negative" dp sigma --q -0.1 --epsilon 1 --steps 10 --delta 1e-5
bad "q not a number" dp epsilon --q 0.1x --sigma 1 --steps 10 --delta 1e-5
bad "sigma nan" dp epsilon --q 0.1 --sigma nan --steps 10 --delta 1e-5
bad "sigma inf" dp epsilon --q 0.1 --sigma inf --steps 10 --delta 1e-5
bad "delta 0" dp epsilon --q 0.1 --sigma 1 --steps 10 --delta 0
bad "delta empty" dp epsilon --q 0.1 --sigma 1 --steps 10 --delta ""
bad "steps negative" dp epsilon --q 0.1 --sigma 1 --steps -3 --delta 1e-5
bad "steps fractional" dp sigma --q 0.1 --epsilon 1 --steps 10.5 --delta 1e-5
bad "epsilon 0" dp sigma --q 0.1 --epsilon 0 --steps 10 --delta 1e-5
bad "sensitivity 0" dp gaussian --epsilon 1 --delta 1e-5 --sensitivity 0
bad "sensitivity on epsilon" dp epsilon --q 0.1 --sigma 1 --steps 10 --delta 1e-5 --sensitivity 2
bad "sigma on gaussian" dp gaussian --epsilon 1 --delta 1e-5 --sigma 2
bad "stray argument" dp epsilon --q 0.1 --sigma 1 --steps 10 --delta 1e-5 extra
bad "unknown subcommand" dp rdp
t_run "unbounded epsilon is an error, not inf" 1 -- dp epsilon --q 0.5 --sigma 1e-300 --steps 1 --delta 1e-5 --json
t_ok "unbounded: nothing on stdout" test ! -s "$OUT"
# names from DP libraries: --noise-multiplier, --rounds, --cohort/--population, --q A/B
ref() { "$VPAUDIT" dp epsilon --q 0.06 --sigma 1.1 --steps 100 --delta 1e-5 --json; }
t_run "aliases: --noise-multiplier --rounds" 0 -- dp epsilon --q 0.06 --noise-multiplier 1.1 --rounds 100 --delta 1e-5 --json
t_ok "aliases: same epsilon as --sigma --steps" test "$(cat "$OUT")" = "$(ref)"
t_run "aliases: --q as a fraction" 0 -- dp epsilon --q 300/5000 --sigma 1.1 --steps 100 --delta 1e-5 --json
t_ok "aliases: 300/5000 is q 0.06" test "$(cat "$OUT")" = "$(ref)"
t_run "aliases: --cohort --population" 0 -- dp epsilon --cohort 300 --population 5000 --sigma 1.1 --steps 100 --delta 1e-5 --json
t_ok "aliases: cohort/population is q 0.06" test "$(cat "$OUT")" = "$(ref)"
t_run "aliases: sigma from --cohort" 0 -- dp sigma --cohort 300 --population 5000 --epsilon 2 --rounds 100 --delta 1e-5 --json
bad "cohort without population" dp epsilon --cohort 300 --sigma 1 --steps 10 --delta 1e-5
bad "cohort and q" dp epsilon --cohort 3 --population 5 --q 0.1 --sigma 1 --steps 10 --delta 1e-5
bad "cohort above population" dp epsilon --cohort 6 --population 5 --sigma 1 --steps 10 --delta 1e-5
bad "q fraction above 1" dp epsilon --q 6/5 --sigma 1 --steps 10 --delta 1e-5
bad "q fraction over 0" dp epsilon --q 1/0 --sigma 1 --steps 10 --delta 1e-5
bad "sigma twice" dp epsilon --q 0.1 --sigma 1 --noise-multiplier 2 --steps 10 --delta 1e-5
bad "steps twice" dp epsilon --q 0.1 --sigma 1 --rounds 3 --steps 10 --delta 1e-5
# --table K: epsilon after K, 2K, ... steps; each line equals its own `dp epsilon` run
t_run "--table" 0 -- dp epsilon --q 0.06 --sigma 1.1 --steps 100 --delta 1e-5 --table 30
t_ok "--table: header" grep -qE '^ +steps +epsilon +order$' "$OUT"
t_ok "--table: rows 30, 60, 90 and the last step" test "$(awk '/^ +steps/{f=1;next} f{printf "%s ", $1}' "$OUT")" = "30 60 90 100 "
e60=$("$VPAUDIT" dp epsilon --q 0.06 --sigma 1.1 --steps 60 --delta 1e-5 | awk '/^epsilon/{print $2}')
t_ok "--table: the row at 60 is dp epsilon --steps 60" test "$(awk '$1 == 60 {print $2}' "$OUT")" = "$e60"
t_ok "--table: the last row is the epsilon printed above" test "$(awk '$1 == 100 {print $2}' "$OUT")" = "$(awk '/^epsilon/{print $2}' "$OUT")"
t_ok "--table: epsilon grows with the steps" bash -c "awk '/^ +steps/{f=1;next} f{ if (\$2 < p) exit 1; p = \$2 }' '$OUT'"
t_run "--table --json" 0 -- dp epsilon --q 0.06 --sigma 1.1 --steps 100 --delta 1e-5 --table 50 --json --series unsigned
t_ok "--table --json: rows" grep -q '"table":\[{"steps":50,"epsilon":3.04104750643' "$OUT"
t_run "--table --json, signed" 0 -- dp epsilon --q 0.06 --sigma 1.1 --steps 100 --delta 1e-5 --table 50 --json
t_ok "--table --json, signed: rows" grep -q '"table":\[{"steps":50,"epsilon":3.04093220836' "$OUT"
bad "--series other" dp epsilon --q 0.1 --sigma 1 --steps 10 --delta 1e-5 --series exact
bad "--series on gaussian" dp gaussian --epsilon 1 --delta 1e-5 --series signed
bad "--table on sigma" dp sigma --q 0.1 --epsilon 1 --steps 10 --delta 1e-5 --table 2
bad "--table too long" dp epsilon --q 0.1 --sigma 1 --steps 1e6 --delta 1e-5 --table 1
bad "--table 0" dp epsilon --q 0.1 --sigma 1 --steps 10 --delta 1e-5 --table 0
t_done
