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
# vpaudit features: one shared vpa_feat (FFT plan, mel banks) over the utterances
g=$top/tests/golden/audio
printf 'u1 %s\nu2 %s\nu3 %s\n' "$g/g16.wav" "$g/g16.wav" "$g/g16.wav" > "$T/wav.scp"
printf 'a1 u1 0 0.3\na2 u1 0.2 0.5\nb1 u2 0 -1\nc1 u3 0.1 0.45\n' > "$T/segments"
mkdir -p "$T/fd" && cp "$T/wav.scp" "$T/segments" "$T/fd/"
for t in 1 2; do
	"$VPAUDIT" features mfcc --cmvn=sliding --vad --dither=1 "$T/fd" -o "$T/f$t.ark" --threads=$t > /dev/null 2>&1
done
t_ok "features: archives written for 1 and 2 threads" test -s "$T/f1.ark" -a -s "$T/f2.ark"
t_ok "features: identical archives with 1 and 2 threads" cmp -s "$T/f1.ark" "$T/f2.ark"
# vpaudit embed: one ONNX model shared by the threads; equal chunks have one
# shape, so the parallel runs replay one static memory plan (onnx/plan.c)
e=$top/tests/golden/embed
for t in 1 2; do
	"$VPAUDIT" embed $e/ecapa.onnx $e/data -o "$T/emb$t.ark" --num-mel-bins=20 --chunk=30 --threads=$t > /dev/null 2>&1
done
t_ok "embed: archives written for 1 and 2 threads" test -s "$T/emb1.ark" -a -s "$T/emb2.ark"
t_ok "embed: identical archives with 1 and 2 threads" cmp -s "$T/emb1.ark" "$T/emb2.ark"
t_done
