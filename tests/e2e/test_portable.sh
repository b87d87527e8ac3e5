#!/bin/bash
# tests/e2e/test_portable.sh - issue 25 item 2: results that do not depend on
# the CPU.  A small scenario (PLDA linkage on simulated x-vectors, A1 on the
# ONNX acoustic models; about 1 s a run) under two OpenBLAS kernels forced
# with OPENBLAS_CORETYPE (Sandybridge and Prescott: every AVX2 CPU runs both):
# without --portable the numbers differ (the defect: the baseline EER moves
# by 0.007); with --portable, or the scenario key `portable: true`, the two
# results.json are identical but for the timing fields; results.json
# `machine` and the report name the CPU, the OpenBLAS kernel and the mode;
# `gate --baseline` warns when the two files come from other arithmetic.
. tests/e2e/lib.sh
G=$PWD/tests/golden
if ! grep -qw avx2 /proc/cpuinfo || ! grep -qw fma /proc/cpuinfo; then
	echo "# skip - portable mode pins the Haswell kernel: this CPU has no AVX2/FMA"
	t_done; exit 0
fi

scn() { # $1 file, $2 extra top-level YAML
	cat > "$1" <<YAML
name: portable
seed: 7
report: [json, html]
targets:
  - id: anon-sim
    kind: anonymised_speech
    source: simulate
    simulate: {train_speakers: 100, pool_speakers: 200, test_speakers: 20, population: 100}
    anonymiser: {distance: plda, proximity: far, gender: same, assignment: speaker, n: 50, n_star: 25}
  - id: fl_am_onnx
    kind: fl_acoustic_models
    source: import
    import: {models: $G/flam/models.txt, model_dir: $G/flam,
             onnx_layers: [/mods.1/Relu_output_0, /mods.3/Relu_output_0, /mods.5/Relu_output_0],
             indicator: $G/embed/data, feature_options: [--num-mel-bins=40]}
attacks:
  - {id: vpc, kind: linkage, target: anon-sim}
  - {id: footprint-onnx, kind: a1_footprint, target: fl_am_onnx}
$2
YAML
}
scn "$T/s.yaml" ""
scn "$T/key.yaml" "portable: true"
# the lines of two results.json that differ, timing fields (reports/README.md) aside
# (this scenario writes only those of wall_time; the others are listed for safety)
differ() {
	diff "$1" "$2" | grep '^[<>]' | grep -Ev '^[<>] +"(started|total|load|targets|attacks|report|[a-z_]*_secs|train_seconds|tokens_per_s|tokens_per_second|global|personalisation)": '
}
same() { ! differ "$1" "$2" > "$T/diff.txt"; }
has() { grep -qF -- "$2" "$1"; }

# ---- without --portable: the kernel OpenBLAS runs decides the last bits -----
OPENBLAS_CORETYPE=Sandybridge t_run "Sandybridge kernel: exit 0" 0 -- run "$T/s.yaml" -o "$T/sb" --quiet --no-plots
OPENBLAS_CORETYPE=Prescott t_run "Prescott kernel: exit 0" 0 -- run "$T/s.yaml" -o "$T/pr" --quiet --no-plots
if ! grep -q DYNAMIC_ARCH "$T/sb/results.json"; then
	echo "# skip - this OpenBLAS is not DYNAMIC_ARCH: OPENBLAS_CORETYPE cannot choose a kernel"
	t_done; exit 0
fi
t_ok "machine: the kernel OpenBLAS was told to choose" has "$T/sb/results.json" '"blas_kernel": "Sandybridge"'
t_ok "machine: the other kernel" has "$T/pr/results.json" '"blas_kernel": "Prescott"'
t_ok "machine: not portable" has "$T/sb/results.json" '"portable": false'
t_ok "two kernels, no --portable: the numbers differ" bash -c "differ() { $(declare -f differ | tail -n +2); }; differ '$T/sb/results.json' '$T/pr/results.json' | grep -q ."

# ---- --portable: the same results.json under any kernel ------------------------
OPENBLAS_CORETYPE=Sandybridge t_run "--portable under Sandybridge: exit 0" 0 -- run "$T/s.yaml" -o "$T/p1" --quiet --no-plots --portable
OPENBLAS_CORETYPE=Prescott t_run "--portable under Prescott: exit 0" 0 -- run "$T/s.yaml" -o "$T/p2" --quiet --no-plots --portable
t_ok "--portable: identical results.json under two kernels (timing aside)" same "$T/p1/results.json" "$T/p2/results.json"
[ -s "$T/diff.txt" ] && head -n 5 "$T/diff.txt" | sed 's/^/#   /'
P=$T/p1/results.json
t_ok "machine: the pinned kernel" has "$P" '"blas_kernel": "Haswell"'
t_ok "machine: portable" has "$P" '"portable": true'
t_ok "machine: libm without FMA variants" has "$P" '"libm_fma": false'
t_ok "machine: vpaudit's generic paths" has "$P" '"simd": "generic"'
t_ok "machine: the OpenBLAS version" grep -qE '"blas": "OpenBLAS [0-9]+\.[0-9]+' "$P"
t_ok "machine: the OpenBLAS build" has "$P" '"blas_config": "OpenBLAS '
model=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//; s/ *$//')
t_ok "machine: the CPU model of /proc/cpuinfo" has "$P" "\"cpu\": \"$model\""
t_ok "the report says the arithmetic" has "$T/p1/report.html" "Arithmetic: OpenBLAS"
t_ok "the report says the kernel and the mode" bash -c "grep -q 'kernel Haswell' '$T/p1/report.html' && grep -q 'portable mode' '$T/p1/report.html'"
OPENBLAS_CORETYPE=Prescott t_run "scenario key portable: true: exit 0" 0 -- run "$T/key.yaml" -o "$T/k" --quiet --no-plots
t_ok "portable: true: machine says portable" has "$T/k/results.json" '"portable": true'
# (the files differ in the scenario's name, echo and hash: compare every metric)
t_run "portable: true gives the metrics of --portable (gate at tolerance 0)" 0 -- gate "$T/k/results.json" --baseline "$P" --tolerance 0 --strict
t_ok "portable: true: no regression, no warning" bash -c "! grep -q '^REGRESSION\|^WARNING' '$OUT'"
t_run "... and the other way round (a move is leaky in one of the two)" 0 -- gate "$P" --baseline "$T/k/results.json" --tolerance 0 --strict
t_ok "... no regression, no warning" bash -c "! grep -q '^REGRESSION\|^WARNING' '$OUT'"

# ---- gate --baseline says when the arithmetic differs ---------------------------
t_run "gate, portable runs under two kernels: exit 0 at tolerance 0" 0 -- gate "$T/p2/results.json" --baseline "$P" --tolerance 0 --strict
t_ok "gate, same arithmetic: no warning" bash -c "! grep -q '^WARNING' '$OUT'"
t_ok "gate, same arithmetic: no regression" bash -c "! grep -q '^REGRESSION' '$OUT'"
t_run "gate, portable against a Sandybridge baseline" 0 -- gate "$P" --baseline "$T/sb/results.json" --tolerance 1
t_ok "gate: a WARNING line names the two kernels" grep -q '^WARNING baseline and results were computed with different arithmetic (.*OpenBLAS kernel Sandybridge -> Haswell' "$OUT"
t_ok "gate: and the remedy" grep -q '^WARNING .*run both with `vpaudit run --portable`' "$OUT"
sed 's/"blas_kernel": "[^"]*",//' "$T/sb/results.json" > "$T/old.json"
t_run "gate against a baseline without a kernel" 0 -- gate "$P" --baseline "$T/old.json" --tolerance 1
t_ok "gate: says the baseline does not record it" grep -q '^WARNING the baseline does not record its CPU and BLAS kernel' "$OUT"

# ---- no loop: a re-executed process that is still not pinned stops -------------
VPAUDIT_PORTABLE_EXEC=1 OPENBLAS_CORETYPE=Prescott t_run "re-executed but not pinned: exit 1" 1 -- run "$T/s.yaml" -o "$T/x" --quiet --no-plots --portable
t_ok "re-executed but not pinned: the reason" grep -q "vpaudit run: error: portable mode: re-executed with OPENBLAS_CORETYPE=Haswell and GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4, but OpenBLAS runs its Prescott kernel" "$ERR"
t_run "run --help: --portable" 0 -- run --help
t_ok "run --help names --portable" grep -q -- '--portable' "$OUT"
t_done
