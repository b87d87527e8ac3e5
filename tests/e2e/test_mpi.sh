#!/bin/bash
# tests/e2e/test_mpi.sh - ./vpaudit-mpi under `mpirun -n 3` (issue 19,
# base/dist.c): one small scenario that runs every distributed loop (A1
# footprints and A2 layers of simulated FL acoustic models, identification
# blocks, evaluation score sets under a sweep, two d-exposure training runs,
# an FL training run's clients; sweep points with 2 ranks, inner loops with 3;
# a swept target) gives the records and warnings of the one-process run;
# a job that fails on rank 2 only gives one error line naming the rank and
# the job, exit 1 on every rank and no output; the audio loops (a tiny
# synthetic corpus) and ONNX acoustic models give the one-process results
# too; an error outside any loop on rank 2 only (a fault injected at each
# stage of `run`) ends every rank with one error line, no hang.  VPAUDIT_MPI is the MPI build:
# `make test` builds it (make mpi) and sets it, and the test fails when the
# binary is missing; without it (make asan, make valgrind: sanitizers do not
# cover mpirun's ranks) the whole script is reported as skipped, not passed.
. tests/e2e/lib.sh
top=$PWD
if [ -z "${VPAUDIT_MPI:-}" ]; then
	echo "# skip - MPI tests: VPAUDIT_MPI is not set (make test sets it); not counted as passed"
	t_done
	exit 0
fi
MPI=$VPAUDIT_MPI
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
	OMPI_MCA_rmaps_base_oversubscribe=1
mpi() { # N ARGS... : mpirun with N ranks, status in $?
	local n=$1; shift
	timeout -k 5 300 mpirun --oversubscribe --allow-run-as-root -n "$n" "$MPI" "$@"
}
strip() { # results.json without the run's clock (stage and training times)
	grep -v -E '"started": "|"(total|load|targets|attacks|report|global|personalisation|train_seconds|tokens_per_s|[a-z_]*_secs)": ([0-9.eE+-]+|null),?$' "$1"
}
t_ok "vpaudit-mpi is built (make mpi)" test -x "$MPI"
t_ok "vpaudit-mpi version says mpi: yes" bash -c "'$MPI' version | grep -qx 'mpi: yes'"
t_ok "vpaudit version says mpi: no" bash -c "'$VPAUDIT' version | grep -qx 'mpi: no'"
t_ok "help says whether MPI is built in" bash -c "'$MPI' help | grep -q '^MPI: built in' && '$VPAUDIT' help | grep -q '^MPI: not built in'"

D=$top/tests/e2e/data
mkdir -p "$T/w" && cp "$D"/tagger/ca0? "$T/w/"
cat > "$T/w/all.yaml" <<EOF2
name: mpi-all
seed: 7
report: [json]
targets:
  - id: am
    kind: fl_acoustic_models
    simulate: {train_speakers: 20, train_utts: 5, part1_speakers: 6, part2_speakers: 6,
               two_models: 1, adapt_utts: 10, indicator_speakers: 3, indicator_utts: 2,
               hidden_layers: 3, hidden_dim: 24, states: 12, utt_frames: 60}
    dump_activations: am-acts
    dump_models: am-models
  - id: imp
    kind: anonymised_speech
    source: import
    backend: {lda_dim: 12}
    import:
      train: {vectors: $D/anon/train.ark, utt2spk: $D/anon/train.utt2spk, spk2gender: $D/anon/train.spk2gender}
      enroll: {vectors: $D/anon/enroll.npy, ids: $D/anon/enroll.ids, spk2gender: $D/anon/test.spk2gender}
      enroll_anon: {vectors: $D/anon/enroll_anon.npy, ids: $D/anon/enroll_anon.ids, utt2spk: $D/anon/test.utt2spk}
      trial: {vectors: $D/anon/trial.ark, utt2spk: $D/anon/test.utt2spk, spk2gender: $D/anon/test.spk2gender}
      trial_anon: {vectors: $D/anon/trial_anon.ark, utt2spk: $D/anon/test.utt2spk}
      population: {vectors: $D/anon/pop.ark, utt2spk: $D/anon/pop.utt2spk, spk2gender: $D/anon/pop.spk2gender}
      population_anon: {vectors: $D/anon/pop_anon.ark, utt2spk: $D/anon/pop.utt2spk}
  - id: sc
    kind: scores
    sets:
      - {name: a, scores: $D/tiny.txt}
      - {name: b, scores: $D/tiny4.txt}
      - {name: c, scores: $D/tiny.txt}
  - {id: tg, kind: tagger, corpus: ., test_fraction: 0.25, vocab_size: 100, embedding: 16,
     hidden: 16, dropout: 0, lr: 0.02, batch: 8, epochs: 2}
  - {id: fl, kind: fl_speaker_classifier, users: 300, test_users: 60, sv_train_users: 40,
     sv_test_users: 20, cohort: 7, rounds: 2, eval_every: 1, emb_epochs: 2, emb_hidden: 16,
     emb_dim: 8}
attacks:
  - {id: a1, kind: a1_footprint, target: am}
  - {id: a2, kind: a2_footprint, target: am, hidden: 16, embedding_dim: 8, epochs: 2}
  - {id: ident, kind: identification, target: imp, repeats: 2, top_k: 5,
     attackers: [baseline, ignorant, lazy_informed]}
  - {id: ev, kind: evaluate, target: sc}
  - {id: dx, kind: d_exposure, target: tg, canary: fly, label: ADJ,
     context: "Mary they like the ___ dog .", repetitions: [0, 32], epoch_table: false}
  - {id: train, kind: fl_training, target: fl}
sweep: {param: attacks.ev.omega, values: [1, 2]}
EOF2
(cd "$T/w" && "$VPAUDIT" run all.yaml --allow-writes-outside -o "$T/one" --threads 1 --quiet --no-plots > /dev/null 2> "$T/one.err")
t_ok "one process: results.json" test -s "$T/one/results.json"
(cd "$T/w" && mpi 3 run all.yaml --allow-writes-outside -o "$T/three" --threads 1 --quiet --no-plots > "$T/three.out" 2> "$T/three.err")
t_ok "3 ranks: exit 0" test $? = 0
t_ok "3 ranks: results.json" test -s "$T/three/results.json"
strip "$T/one/results.json" > "$T/a"; strip "$T/three/results.json" > "$T/b"
t_ok "3 ranks: the records of the one-process run (byte for byte but the clock)" cmp -s "$T/a" "$T/b"
for a in a1 a2 ident ev dx train; do
	t_ok "the comparison saw records of $a" grep -q "\"attack\": \"$a\"" "$T/a"
done
t_ok "3 ranks: the warnings once (rank 0 only)" cmp -s "$T/one.err" "$T/three.err"
(cd "$T/w" && mpi 2 run all.yaml --allow-writes-outside -o "$T/two" --threads 2 --quiet --no-plots > /dev/null 2> "$T/two.err")
strip "$T/two/results.json" > "$T/c"
t_ok "2 ranks x 2 threads: the same records" cmp -s "$T/a" "$T/c"

# a swept target with as many values as ranks: the sweep points are the jobs
# (scenarios/run.c), each rank builds its values' targets; the gate fails (3)
P=$top/tests/e2e/data/sweep/proximity.yaml
"$VPAUDIT" run "$P" -o "$T/p1" --threads 1 --quiet --no-plots > /dev/null 2> "$T/p1.err"
mpi 3 run "$P" -o "$T/p3" --threads 1 --quiet --no-plots > /dev/null 2> "$T/p3.err"
t_ok "sweep points over 3 ranks: exit 3 (its gate fails)" test $? = 3
strip "$T/p1/results.json" > "$T/a"; strip "$T/p3/results.json" > "$T/b"
t_ok "sweep points over 3 ranks: the records of the one-process run" cmp -s "$T/a" "$T/b"
t_ok "sweep points: the comparison saw the three values" \
	test "$(grep -c '"sweep": "\(far\|near\|random\)"' "$T/a")" -ge 3
t_ok "sweep points over 3 ranks: the same warnings, in order" \
	cmp -s "$T/p1.err" <(grep '^vpaudit: ' "$T/p3.err")
t_ok "2 ranks x 2 threads (sweep points shared out): the same warnings" \
	cmp -s "$T/one.err" "$T/two.err"

# a job failing on rank 2 only: A1 on imported activations, the 6th model's
# (job 5: 5 mod 3 = 2) file truncated; only rank 2 reads it
cat > "$T/w/acts.yaml" <<EOF2
name: mpi-fail
seed: 7
report: [json]
targets:
  - {id: fl, kind: fl_acoustic_models, source: import,
     import: {models: am-acts/models.txt, activations: am-acts}}
attacks:
  - {id: a1, kind: a1_footprint, target: fl, models: all}
EOF2
# models.txt: the global model, then the personalised ones (every one in a trial)
m=$(sed -n 7p "$T/w/am-acts/models.txt" | awk '{print $1}')
f=$(ls "$T/w/am-acts/$m"/layer1/*.npy | head -n 1)
t_ok "the 6th model has activation files" test -n "$m" -a -s "$f"
head -c 100 "$f" > "$T/trunc" && cp "$T/trunc" "$f"
(cd "$T/w" && "$VPAUDIT" run acts.yaml -o "$T/f1" --quiet > /dev/null 2> "$T/f1.err")
t_ok "one process: exit 1 on the truncated file" test $? = 1
(cd "$T/w" && mpi 3 run acts.yaml -o "$T/f3" --quiet > "$T/f3.out" 2> "$T/f3.err")
t_ok "3 ranks: exit 1" test $? = 1
t_ok "3 ranks: one error line from rank 0, naming rank 2 and the job" \
	test "$(grep -c '^vpaudit run: error: ' "$T/f3.err")" = 1 -a \
	"$(grep '^vpaudit run: error: ' "$T/f3.err")" = "$(cat "$T/f1.err" | grep '^vpaudit run: error: ') (rank 2, a1 footprints job 5)"
t_ok "3 ranks: no output (no report file; the folder holds only junit.xml's error case)" test ! -e "$T/f3/results.json" -a ! -e "$T/f3/report.html" -a ! -e "$T/f3/report.pdf" -a ! -s "$T/f3.out"
# imported networks: every rank checks its share of the models and keeps
# none; A1 and A2 load a model where their job runs (base/dist.c)
cat > "$T/w/nets.yaml" <<EOF2
name: mpi-nets
seed: 7
report: [json]
targets:
  - {id: fl, kind: fl_acoustic_models, source: import,
     import: {models: am-models/models.txt, model_dir: am-models, indicator: am-models/indicator}}
attacks:
  - {id: a1, kind: a1_footprint, target: fl, models: all}
  - {id: a2, kind: a2_footprint, target: fl, hidden: 16, embedding_dim: 8, epochs: 2}
EOF2
(cd "$T/w" && "$VPAUDIT" run nets.yaml -o "$T/n1" --quiet --no-plots > /dev/null 2>&1)
(cd "$T/w" && mpi 3 run nets.yaml -o "$T/n3" --quiet --no-plots > /dev/null 2>&1)
t_ok "imported networks, 3 ranks: exit 0" test $? = 0
strip "$T/n1/results.json" > "$T/a"; strip "$T/n3/results.json" > "$T/b"
t_ok "imported networks, 3 ranks: the records of the one-process run" cmp -s "$T/a" "$T/b"
t_ok "imported networks: the comparison saw A1 and A2 records" \
	grep -q '"attack": "a2"' "$T/a"
# the 6th personalised model's weights truncated: only rank 2 reads them
m=$(sed -n 7p "$T/w/am-models/models.txt" | awk '{print $1}')
f=$T/w/am-models/$m/layer1.weight.npy
t_ok "the 6th model has a weight file" test -s "$f"
head -c 100 "$f" > "$T/trunc" && cp "$T/trunc" "$f"
(cd "$T/w" && "$VPAUDIT" run nets.yaml -o "$T/g1" --quiet > /dev/null 2> "$T/g1.err")
t_ok "truncated model, one process: exit 1" test $? = 1
(cd "$T/w" && mpi 3 run nets.yaml -o "$T/g3" --quiet > "$T/g3.out" 2> "$T/g3.err")
t_ok "truncated model, 3 ranks: exit 1" test $? = 1
t_ok "truncated model, 3 ranks: one error line naming rank 2 and the model's job" \
	test "$(grep -c '^vpaudit run: error: ' "$T/g3.err")" = 1 -a \
	"$(grep '^vpaudit run: error: ' "$T/g3.err")" = "$(grep '^vpaudit run: error: ' "$T/g1.err") (rank 2, models job 5)"
t_ok "truncated model, 3 ranks: no output (no report file)" test ! -e "$T/g3/results.json" -a ! -e "$T/g3/report.html" -a ! -e "$T/g3/report.pdf" -a ! -s "$T/g3.out"

# audio (anonymised_speech, source: audio): a tiny synthetic corpus, McAdams,
# extractors trained in C; features, embeddings, rho_F0 and the anonymisation
# are shared out over the ranks (the anonymised samples travel, each rank
# writes the whole directory into its own temporary folder)
cat > "$T/w/audio.yaml" <<EOF2
name: mpi-audio
seed: 7
report: [json]
targets:
  - id: audio
    kind: anonymised_speech
    source: audio
    audio:
      synthetic: {speakers: 8, utts: 3, brown: $top/data/brown}
      anonymise: {method: mcadams, low: 0.5, high: 0.9}
      level: anon_level_spk
      extractor: {epochs: 2, hidden: 8, emb_dim: 4, chunk: 50, batch: 4}
    backend: {lda_dim: 2, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: audio, attackers: [baseline, ignorant, lazy_informed, semi_informed]}
EOF2
(cd "$T/w" && "$VPAUDIT" run audio.yaml -o "$T/au1" --threads 1 --quiet --no-plots > /dev/null 2> "$T/au1.err")
t_ok "audio, one process: results.json" test -s "$T/au1/results.json"
strip "$T/au1/results.json" > "$T/a"
for n in 2 3; do
	(cd "$T/w" && mpi $n run audio.yaml -o "$T/au$n" --threads $((4 - n)) --quiet --no-plots > /dev/null 2> "$T/au$n.err")
	t_ok "audio, $n ranks: exit 0" test $? = 0
	strip "$T/au$n/results.json" > "$T/b"
	t_ok "audio, $n ranks: the records of the one-process run (inputs included)" cmp -s "$T/a" "$T/b"
	t_ok "audio, $n ranks: the warnings once" cmp -s "$T/au1.err" "$T/au$n.err"
done
t_ok "audio: the comparison saw the four attackers' records and rho_F0" \
	test "$(grep -c '"sub": "\(baseline\|ignorant\|lazy_informed\|semi_informed\)"' "$T/a")" = 4 -a \
	"$(grep -c '"rho_f0": [0-9.-]' "$T/a")" = 5 # the target's, and each record's copy (issue 30: gateable)
t_ok "audio: no temporary folder is an input" bash -c "! grep -q vpaudit-audio- '$T/a'"
# the extractors' training shared over the ranks (issue 33, audio/xvector_train.c):
# batches of 16 chunks in 2 shards (one per rank with 2 ranks; with 3, rank 2 has
# none), the shard gradients exchanged and summed in shard order: the saved
# extractors (weights, batch-norm statistics, final loss) are the same bytes as the
# one-process run's, and so are the records
sed -e 's/utts: 3,/utts: 8,/' -e 's/chunk: 50, batch: 4}/chunk: 50, batch: 16}/' \
	"$T/w/audio.yaml" > "$T/w/shards.yaml"
t_ok "shards: the scenario asks for batches of 16" grep -q 'batch: 16}' "$T/w/shards.yaml"
(cd "$T/w" && "$VPAUDIT" run shards.yaml -o "$T/sh1" --threads 1 --quiet --no-plots > /dev/null 2>&1)
t_ok "shards, one process: extractors saved" test -s "$T/sh1/extractors/asv_eval/extractor.yaml"
strip "$T/sh1/results.json" > "$T/a"
for n in 2 3; do
	(cd "$T/w" && mpi $n run shards.yaml -o "$T/sh$n" --threads $((4 - n)) --quiet --no-plots > /dev/null 2>&1)
	t_ok "shards, $n ranks: exit 0" test $? = 0
	t_ok "shards, $n ranks: the extractors are the one-process run's bytes" \
		diff -r "$T/sh1/extractors" "$T/sh$n/extractors"
	strip "$T/sh$n/results.json" > "$T/b"
	t_ok "shards, $n ranks: the records of the one-process run" cmp -s "$T/a" "$T/b"
done

# FL acoustic models trained from audio (fl_acoustic_models, source: audio, issue
# 32): the built-in corpus (its synthesis, the features) and the personalised
# models shared out over the ranks; the same records as one process
cat > "$T/w/am.yaml" <<EOF2
name: mpi-am-audio
seed: 9
report: [json]
targets:
  - id: am
    kind: fl_acoustic_models
    source: audio
    audio: {speakers: 14, utts: 4, brown: $top/data/brown, part1_speakers: 2, part2_speakers: 2,
            indicator_speakers: 1, heldout_utts: 1, two_models: 1, hidden_layers: 2, hidden_dim: 16,
            global_epochs: 2, adapt_epochs: 2}
attacks:
  - {id: a1, kind: a1_footprint, target: am}
EOF2
(cd "$T/w" && "$VPAUDIT" run am.yaml -o "$T/am1" --threads 1 --quiet --no-plots > /dev/null 2> "$T/am1.err")
t_ok "FL audio, one process: results.json" test -s "$T/am1/results.json"
strip "$T/am1/results.json" > "$T/a"
for n in 2 3; do
	(cd "$T/w" && mpi $n run am.yaml -o "$T/am$n" --threads $((4 - n)) --quiet --no-plots > /dev/null 2> "$T/am$n.err")
	t_ok "FL audio, $n ranks: exit 0" test $? = 0
	strip "$T/am$n/results.json" > "$T/b"
	t_ok "FL audio, $n ranks: the records of the one-process run" cmp -s "$T/a" "$T/b"
done
t_ok "FL audio: the comparison saw A1 records" test "$(grep -c '"attack": "a1"' "$T/a")" -gt 0
t_ok "FL audio: no temporary folder is an input" bash -c "! grep -q vpaudit-am- '$T/a'"

# ... and with frame labels from a CTC model (audio.aligner): the alignment
# jobs shared out over the ranks give the one-process labels
mkdir -p "$T/dal"
for i in 1 2 3 4 5 6; do for c in a b c; do echo "s$i$c $top/tests/golden/embed/data/wav/u$i.wav"; done; done | sort > "$T/dal/wav.scp"
awk '{ print $1, "spk" substr($1, 2, 1) }' "$T/dal/wav.scp" > "$T/dal/utt2spk"
awk 'BEGIN { split("THE CAT|A DOG|MY HAT|SO BIG|WE RAN|GO", w, "|") } { print $1, w[substr($1, 2, 1)] }' "$T/dal/wav.scp" > "$T/dal/text"
cat > "$T/w/amc.yaml" <<EOF2
name: mpi-am-ctc
seed: 9
report: [json]
targets:
  - id: am
    kind: fl_acoustic_models
    source: audio
    audio: {data: $T/dal, aligner: {model: $top/tests/golden/ctc/small_ctc.onnx, tokens: $top/tests/golden/ctc/tokens.txt},
            part1_speakers: 2, part2_speakers: 2, indicator_speakers: 1, heldout_utts: 1, two_models: 1,
            hidden_layers: 2, hidden_dim: 16, global_epochs: 2, adapt_epochs: 2}
attacks:
  - {id: a1, kind: a1_footprint, target: am}
EOF2
(cd "$T/w" && "$VPAUDIT" run amc.yaml -o "$T/amc1" --threads 1 --quiet --no-plots > /dev/null 2> "$T/amc1.err")
t_ok "FL audio, CTC labels, one process: results.json" test -s "$T/amc1/results.json"
strip "$T/amc1/results.json" > "$T/a"
(cd "$T/w" && mpi 3 run amc.yaml -o "$T/amc3" --threads 1 --quiet --no-plots > /dev/null 2> "$T/amc3.err")
t_ok "FL audio, CTC labels, 3 ranks: exit 0" test $? = 0
strip "$T/amc3/results.json" > "$T/b"
t_ok "FL audio, CTC labels, 3 ranks: the records of the one-process run" cmp -s "$T/a" "$T/b"

# VoicePrivacy's trials_f / trials_m directories as one set (audio.trial a
# list): every rank merges them into its own temporary folder; the same records
"$VPAUDIT" synth-corpus "$T/sc" --speakers 8 --utts 3 --seed 5 --brown "$top/data/brown" --threads 2 > /dev/null 2>&1
for g in f m; do
	d=$T/sc/trials_$g; mkdir "$d"
	awk -v g=$g '$2 == g { print $1 }' "$T/sc/trials/spk2gender" > "$d/.spk"
	awk 'NR == FNR { s[$1] = 1; next } s[$2] { print $1 }' "$d/.spk" "$T/sc/trials/utt2spk" > "$d/.utt"
	for f in wav.scp utt2spk text; do
		awk 'NR == FNR { u[$1] = 1; next } u[$1]' "$d/.utt" "$T/sc/trials/$f" > "$d/$f"
	done
	awk 'NR == FNR { s[$1] = 1; next } s[$1]' "$d/.spk" "$T/sc/trials/spk2gender" > "$d/spk2gender"
	rm "$d/.spk" "$d/.utt"
done
t_ok "trial lists: the synthetic trials split by gender" test -s "$T/sc/trials_f/wav.scp" -a -s "$T/sc/trials_m/wav.scp"
cat > "$T/w/lists.yaml" <<EOF2
name: mpi-lists
seed: 7
report: [json]
targets:
  - id: audio
    kind: anonymised_speech
    source: audio
    audio:
      train: $T/sc/train
      enroll: $T/sc/enrol
      trial: [$T/sc/trials_f, $T/sc/trials_m]
      anonymise: {method: mcadams, low: 0.5, high: 0.9}
      extractor: {epochs: 2, hidden: 8, emb_dim: 4, chunk: 50, batch: 4}
    backend: {lda_dim: 2, scoring: cosine}
attacks:
  - {id: link, kind: linkage, target: audio, attackers: [baseline, ignorant, lazy_informed, semi_informed], per_gender: true}
EOF2
(cd "$T/w" && "$VPAUDIT" run lists.yaml -o "$T/li1" --threads 1 --quiet --no-plots > /dev/null 2> "$T/li1.err")
t_ok "trial lists, one process: results.json" test -s "$T/li1/results.json"
strip "$T/li1/results.json" > "$T/a"
(cd "$T/w" && mpi 3 run lists.yaml -o "$T/li3" --threads 1 --quiet --no-plots > /dev/null 2> "$T/li3.err")
t_ok "trial lists, 3 ranks: exit 0" test $? = 0
strip "$T/li3/results.json" > "$T/b"
t_ok "trial lists, 3 ranks: the records of the one-process run" cmp -s "$T/a" "$T/b"
t_ok "trial lists: per-gender records named after the directories" \
	test "$(grep -c '"sub": "[a-z_]*/trials_[fm]"' "$T/a")" = 8

# ONNX acoustic models (tests/golden/flam) with the Indicator set as audio:
# the Indicator features are shared out; a personalised model is checked by
# one rank and loaded only where an A1 job uses it (A1 only, so that rank 0
# reads a third of the models: results.json's inputs are merged over ranks)
G=$top/tests/golden/flam
cp -r "$G" "$T/flam"
L=$(paste -sd, "$G/layers.txt" | sed 's/,/, /g')
cat > "$T/w/onnx.yaml" <<EOF2
name: mpi-onnx
seed: 7
report: [json]
targets:
  - {id: fl, kind: fl_acoustic_models, source: import,
     import: {models: $T/flam/models.txt, model_dir: $T/flam, onnx_layers: [$L],
              indicator: $top/tests/golden/embed/data, feature_options: [--num-mel-bins=40]}}
attacks:
  - {id: a1, kind: a1_footprint, target: fl, models: all}
EOF2
# (wav.scp paths are relative to the current folder, Kaldi's convention)
"$VPAUDIT" run "$T/w/onnx.yaml" -o "$T/o1" --threads 1 --quiet --no-plots > /dev/null 2>&1
mpi 3 run "$T/w/onnx.yaml" -o "$T/o3" --threads 1 --quiet --no-plots > /dev/null 2>&1
t_ok "ONNX models, 3 ranks: exit 0" test $? = 0
strip "$T/o1/results.json" > "$T/a"; strip "$T/o3/results.json" > "$T/b"
t_ok "ONNX models, 3 ranks: the records of the one-process run (inputs included)" cmp -s "$T/a" "$T/b"
t_ok "ONNX models: the comparison saw A1 records and every model file among the inputs" \
	test "$(grep -c '"attack": "a1"' "$T/a")" -ge 3 -a "$(grep -c '"path": ".*flam/.*\.onnx"' "$T/a")" = 25
# an error outside any loop on rank 2 only (VPAUDIT_TEST_FAULT, base/dist.h),
# in the ONNX scenario: the other ranks must not wait for it in their next
# collective (the Indicator features, the models' check, A1, the agreement
# before the report); a hang is cut by timeout (exit 124) and fails the test
for st in scenario targets attacks report; do
	rm -rf "$T/x3"
	VPAUDIT_TEST_FAULT=2:$st timeout -k 5 120 mpirun --oversubscribe --allow-run-as-root -n 3 "$MPI" \
		run "$T/w/onnx.yaml" -o "$T/x3" --threads 1 --quiet --no-plots > "$T/x3.out" 2> "$T/x3.err"
	t_ok "fault on rank 2 at '$st': exit 1 (no hang)" test $? = 1
	t_ok "fault on rank 2 at '$st': one error line from rank 0 naming rank 2" \
		test "$(grep -c '^vpaudit run: error: ' "$T/x3.err")" = 1 -a \
		"$(grep '^vpaudit run: error: ' "$T/x3.err")" = "vpaudit run: error: $st: fault injected (VPAUDIT_TEST_FAULT) (rank 2)"
	t_ok "fault on rank 2 at '$st': no output" test ! -e "$T/x3/results.json" -a ! -s "$T/x3.out"
done
# the 6th personalised model truncated: only rank 2 reads it
m=$(sed -n 7p "$T/flam/models.txt" | awk '{print $1}')
head -c 100 "$G/$m.onnx" > "$T/flam/$m.onnx"
"$VPAUDIT" run "$T/w/onnx.yaml" -o "$T/p1" --quiet > /dev/null 2> "$T/p1.err"
t_ok "truncated ONNX model, one process: exit 1" test $? = 1
mpi 3 run "$T/w/onnx.yaml" -o "$T/p3" --quiet > "$T/p3.out" 2> "$T/p3.err"
t_ok "truncated ONNX model, 3 ranks: exit 1" test $? = 1
t_ok "truncated ONNX model, 3 ranks: one error line naming rank 2 and the model's job" \
	test "$(grep -c '^vpaudit run: error: ' "$T/p3.err")" = 1 -a \
	"$(grep '^vpaudit run: error: ' "$T/p3.err")" = "$(grep '^vpaudit run: error: ' "$T/p1.err") (rank 2, models job 5)"

(cd "$T/w" && VPAUDIT_TEST_FAULT=0:attacks "$VPAUDIT" run all.yaml --allow-writes-outside -o "$T/x1" --quiet --no-plots > /dev/null 2> "$T/x1.err")
t_ok "the fault hook without MPI: exit 1, the line without a rank" test $? = 1 -a \
	"$(grep '^vpaudit run: error: ' "$T/x1.err")" = "vpaudit run: error: attacks: fault injected (VPAUDIT_TEST_FAULT)"
t_ok "validate needs no MPI (no mpirun, no MPI start)" bash -c "cd '$T/w' && OMPI_MCA_ess_singleton_isolated=0 '$MPI' validate acts.yaml"
t_done
