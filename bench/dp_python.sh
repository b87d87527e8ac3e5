#!/bin/bash
# bench/dp_python.sh - issue 28's ratios against a Python reference run in the
# same bench (bench/dp_numpy.py, NumPy/SciPy; Debian's python3-numpy/-scipy):
#  - the PLD accountant: `vpaudit dp epsilon --accountant pld` against a NumPy PLD
#    built as dp_accounting builds it (losses rounded up to the grid, FFT
#    composition), same mechanism, steps and interval.  Both are upper bounds;
#    rounding up loses about steps x interval / 2 (0.7 here), connect-the-dots
#    (vpaudit) at most the printed bracket, so both epsilons are printed.  The
#    MNIST setting (14,063 steps): the NumPy PLD's support outgrows memory at
#    100,000 steps on this machine (the C accountant takes those in bench_pld).
#  - the audit from 10M scores: `vpaudit dp audit --in --out` against NumPy (sort,
#    searchsorted counts) + scipy.stats.beta.ppf for every threshold; the same
#    Bonferroni correction, so the same bound.
set -eu
BUILD=${BUILD:-build}
DATA=${BENCH_DATA:-bench/data}
PY=/usr/bin/python3
mkdir -p "$DATA"
best() { # best wall seconds of 3 runs of "$@" (output to $DATA/dp_out.txt)
	local b=1e9 w
	for _ in 1 2 3; do
		/usr/bin/time -f "%e" -o "$DATA/dp_time.txt" "$@" > "$DATA/dp_out.txt"
		w=$(cat "$DATA/dp_time.txt")
		b=$(awk -v a="$w" -v b="$b" 'BEGIN { print (a < b) ? a : b }')
	done
	echo "$b"
}
echo "== PLD accountant against a NumPy PLD (MNIST DP-SGD: q 256/60000, sigma 1.1, 14063 steps, delta 1e-5, interval 1e-4)"
t_c=$(best ./vpaudit dp epsilon --q 256/60000 --sigma 1.1 --steps 14063 --delta 1e-5 --accountant pld --json)
e_c=$(grep -o '"epsilon":[0-9.e+-]*' "$DATA/dp_out.txt" | cut -d: -f2)
read -r t_py e_py < <($PY bench/dp_numpy.py pld 0.0042666666666666667 1.1 14063 1e-5 1e-4)
printf '%-52s %8.3f s  epsilon <= %s (whole process)\n' "vpaudit dp epsilon --accountant pld" "$t_c" "$e_c"
printf '%-52s %8.3f s  epsilon <= %s (accountant only)\n' "baseline: NumPy PLD, rounding up" "$t_py" "$e_py"
awk -v a="$t_c" -v b="$t_py" -v e="$e_c" -v f="$e_py" 'BEGIN {
	printf "ratio: NumPy / vpaudit = %.2fx at the same interval; vpaudit bound %.4f tighter\n", b / a, f - e }'

echo "== dp audit from 10M scores against NumPy/SciPy (Clopper-Pearson, Bonferroni over thresholds)"
if [ ! -f "$DATA/audit_in.npy" ]; then
	$PY -c "
import numpy as np
r = np.random.default_rng(1)
np.save('$DATA/audit_in.npy', r.normal(0.3, 1, 5_000_000))
np.save('$DATA/audit_out.npy', r.normal(0.0, 1, 5_000_000))"
fi
t_c=$(best ./vpaudit dp audit --in "$DATA/audit_in.npy" --out "$DATA/audit_out.npy" --json)
e_c=$(grep -o '"epsilon_lower_bound":[0-9.e+-]*' "$DATA/dp_out.txt" | cut -d: -f2)
read -r t_py e_py < <($PY bench/dp_numpy.py audit "$DATA/audit_in.npy" "$DATA/audit_out.npy" 0.05)
printf '%-52s %8.3f s  epsilon >= %s (whole process)\n' "vpaudit dp audit --in --out (5M + 5M)" "$t_c" "$e_c"
printf '%-52s %8.3f s  epsilon >= %s (after loading)\n' "baseline: NumPy + scipy.stats.beta.ppf" "$t_py" "$e_py"
awk -v a="$t_c" -v b="$t_py" 'BEGIN { printf "ratio: NumPy / vpaudit = %.2fx\n", b / a }'
