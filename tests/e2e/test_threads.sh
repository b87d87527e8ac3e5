#!/bin/bash
# tests/e2e/test_threads.sh - results do not depend on --threads (DESIGN.md):
# a trained target (FL acoustic models: a global model, personalised models,
# A1; A2 on every layer, the layers in parallel), a simulated anonymiser with
# a sweep and the d_exposure training runs of a tagger (with DP-SGD and
# overfitting) give the same records with 1 and 2 threads.
. tests/e2e/lib.sh
top=$PWD
strip() { # results.json without the run's clock (stage and training times)
	grep -v -E '"started": "|"(total|load|targets|attacks|report|global|personalisation|train_seconds|tokens_per_s)": ([0-9.eE+-]+|null),?$' "$1"
}
for s in tests/e2e/data/am/sim.yaml tests/e2e/data/am/a2.yaml tests/e2e/data/sweep/proximity.yaml \
	tests/e2e/data/tagger/train.yaml; do
	n=$(basename "$s" .yaml)
	for t in 1 2; do
		# sim.yaml dumps models next to the current directory (outside the
		# output folder: --allow-writes-outside): run inside $T
		(cd "$T" && "$VPAUDIT" run "$top/$s" -o "$T/$n-$t" --threads $t --quiet --no-plots --allow-writes-outside \
			> /dev/null 2>&1)
	done
	t_ok "$n: results.json written for 1 and 2 threads" test -s "$T/$n-1/results.json" -a -s "$T/$n-2/results.json"
	strip "$T/$n-1/results.json" > "$T/a"; strip "$T/$n-2/results.json" > "$T/b"
	t_ok "$n: identical records with 1 and 2 threads" cmp -s "$T/a" "$T/b"
	t_ok "$n: the comparison saw records" grep -q '"records"' "$T/a"
done
t_done
