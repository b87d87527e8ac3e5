#!/bin/bash
# tests/e2e/test_hostile_files.sh - issue 26 items 3, 6, 8, 9: links planted at
# the predictable names of temporaries (PATH.tmp.PID, the output folder's
# probe, OUT.tmp.PID folders) are never followed; SIGTERM/SIGINT remove the
# temporaries ($TMPDIR/vpaudit-audio-*, OUT.tmp.PID) and the process still
# dies by the signal; a run removes the reports of an earlier run when it
# starts; every command removes the temporaries of killed runs; regular input
# files are capped at 1 GiB; low free space is warned about up front; the
# JUnit fallback's warning keeps its reason on a full disk; a failed
# `features -o dir/` removes the folder it made; a read-only output folder
# gives one error line; a 5,000-character name fails at validate; lines
# echoed from data files have their control characters escaped.
# Mount-based checks (a read-only or a 1 MiB tmpfs) need root and are skipped
# with a '# skip' line otherwise.
. tests/e2e/lib.sh
trap 'umount "$T/small" "$T/ro" 2> /dev/null; rm -rf "$T"' EXIT
not() { ! "$@"; }
top=$PWD
G=$top/tests/golden/audio
S=$top/scenarios/data
cd "$T"
sed "s|: data/|: $S/|g" "$top/scenarios/scores-example.yaml" > scores.yaml
mkdir d
for u in u1 u2 u3 u4; do cp "$G/g16.wav" d/$u.wav; done
printf 'u1 d/u1.wav\nu2 d/u2.wav\nu3 d/u3.wav\nu4 d/u4.wav\n' > d/wav.scp
printf 'u1 s1\nu2 s1\nu3 s2\nu4 s2\n' > d/utt2spk
printf 's1 u1 u2\ns2 u3 u4\n' > d/spk2utt
echo "precious" > victim
mkdir victim_dir
echo "precious" > victim_dir/keep
unchanged() { test "$(cat victim)" = precious && test "$(ls victim_dir)" = keep && test "$(cat victim_dir/keep)" = precious; }
# run "$@" as a process whose PID is known beforehand: $$ of the shell that execs it
as_pid() { bash -c "$1"' exec "$@"' _ "${@:2}"; }

# ---- item 3: planted links at predictable names -----------------------------------
mkdir o3
as_pid 'for f in results.json report.html junit.xml; do ln -s "$PWD/victim" o3/$f.tmp.$$; done;' \
	"$VPAUDIT" run scores.yaml -o o3 --no-plots --quiet > "$OUT" 2> "$ERR"; rc=$?
t_ok "run with links planted at OUT/REPORT.tmp.PID: exit 0" test "$rc" = 0
t_ok "... the link targets are untouched" unchanged
t_ok "... the reports are written" test -s o3/results.json -a -s o3/junit.xml -a ! -L o3/results.json
t_ok "... no link or temporary left" test -z "$(ls o3 | grep tmp)"

as_pid 'ln -s "$PWD/victim" f3.ark.tmp.$$;' "$VPAUDIT" features fbank d -o f3.ark > "$OUT" 2> "$ERR"; rc=$?
t_ok "features with a link planted at OUT.tmp.PID: exit 0, target untouched" \
	sh -c "test $rc = 0 && test -s f3.ark && test ! -L f3.ark" && t_ok "... victim untouched" unchanged

mkdir f3d
as_pid 'ln -s "$PWD/victim_dir" f3d/.features.tmp.$$;' "$VPAUDIT" features fbank d -o f3d/ > "$OUT" 2> "$ERR"; rc=$?
t_ok "features -o DIR/ with a link planted at DIR/.features.tmp.PID: exit 0" test "$rc" = 0
t_ok "... the linked folder gets no .npy" unchanged
t_ok "... DIR gets the .npy files" test -s f3d/u1.npy

as_pid 'ln -s "$PWD/victim_dir" a3.tmp.$$;' "$VPAUDIT" anonymise mcadams --alpha 0.8 --threads 1 d a3 > "$OUT" 2> "$ERR"; rc=$?
t_ok "anonymise with a link planted at OUT.tmp.PID: exit 0" test "$rc" = 0
t_ok "... the linked folder is untouched" unchanged
t_ok "... OUT is a folder with the data" test -d a3 -a ! -L a3 -a -s a3/wav.scp

as_pid 'ln -s "$PWD/victim" j3.xml.tmp.$$;' "$VPAUDIT" gate o3/results.json --junit j3.xml > "$OUT" 2> "$ERR"; rc=$?
t_ok "gate --junit with a link planted at FILE.tmp.PID: exit 0, target untouched" \
	sh -c "test $rc = 0 && grep -q testsuite j3.xml" && t_ok "... victim untouched" unchanged

# ---- item 6: interrupted runs -------------------------------------------------------
# a run on a synthetic audio corpus (slow enough to be killed in the middle)
if command -v espeak-ng > /dev/null && [ -d "$top/data/brown" ]; then
	cat > sig.yaml <<YAML
name: sig
report: [json, junit]
targets:
  - id: audio
    kind: anonymised_speech
    source: audio
    audio:
      synthetic: {speakers: 12, utts: 4, brown: $top/data/brown}
      anonymise: {method: mcadams, low: 0.5, high: 0.9}
      level: anon_level_spk
      extractor: {cmvn: none, epochs: 2, hidden: 16, emb_dim: 8, chunk: 100, batch: 16}
    backend: {lda_dim: 0, scoring: cosine}
attacks:
  - {id: l, kind: linkage, target: audio, attackers: [baseline, ignorant]}
YAML
	mkdir -p tmp6 o6
	echo '<testsuite name="sig" tests="1" failures="0"><testcase name="old"/></testsuite>' > o6/junit.xml
	echo '{"records": []}' > o6/results.json
	TMPDIR=$T/tmp6 "$VPAUDIT" run sig.yaml -o o6 --quiet --threads 1 > "$OUT" 2> "$ERR" & pid=$!
	for i in $(seq 1 600); do ls tmp6 | grep -q vpaudit-audio && break; sleep 0.05; done
	t_ok "run made its temporary folder in \$TMPDIR" test -n "$(ls tmp6)"
	kill -TERM $pid; wait $pid; rc=$?
	t_ok "run killed by SIGTERM: exit status 143 (128 + 15)" test "$rc" = 143
	t_ok "... \$TMPDIR/vpaudit-audio-* removed" test -z "$(ls -A tmp6)"
	t_ok "... the earlier run's junit.xml and results.json are gone" test -z "$(ls -A o6)"
else
	echo "# skip: SIGTERM during run (needs espeak-ng and data/brown)"
fi

# features and anonymise blocked on a FIFO (no writer) are killed mid-way
mkdir fifo
mkfifo fifo/a.wav
printf 'a fifo/a.wav\n' > fifo/wav.scp
printf 'a s1\n' > fifo/utt2spk
printf 's1 a\n' > fifo/spk2utt
wait_for() { for i in $(seq 1 200); do ls -A "$1" | grep -q -- "$2" && return 0; sleep 0.05; done; return 1; }
"$VPAUDIT" features fbank fifo -o k.ark 2> "$ERR" & pid=$!
wait_for . 'k.ark.tmp'
t_ok "features: its temporary exists while it runs" test -n "$(ls | grep k.ark.tmp)"
kill -TERM $pid; wait $pid; rc=$?
t_ok "features killed by SIGTERM: exit 143, no OUT.tmp.PID left" sh -c "test $rc = 143 && ! ls | grep -q k.ark"
mkdir kd
"$VPAUDIT" features fbank fifo -o kd/ 2> "$ERR" & pid=$!
wait_for kd '.features.tmp'
kill -TERM $pid; wait $pid; rc=$?
t_ok "features -o DIR/ killed by SIGTERM: exit 143, DIR/.features.tmp.PID removed" \
	sh -c "test $rc = 143 && test -z \"\$(ls -A kd)\""
"$VPAUDIT" anonymise mcadams fifo ka 2> "$ERR" & pid=$!
wait_for . 'ka.tmp'
t_ok "anonymise: its OUT.tmp.PID exists while it runs" test -n "$(ls | grep ka.tmp)"
kill -TERM $pid; wait $pid; rc=$?
t_ok "anonymise killed by SIGTERM: exit 143, no OUT.tmp.PID left" sh -c "test $rc = 143 && ! ls | grep -q ka"
# a background job of a script has SIGINT ignored: restore it, as a terminal's Ctrl-C finds it
# (coreutils' env --default-signal)
env --default-signal=INT "$VPAUDIT" anonymise mcadams fifo ki 2> "$ERR" & pid=$!
wait_for . 'ki.tmp'
kill -INT $pid; wait $pid; rc=$?
t_ok "anonymise stopped by SIGINT: exit 130, no OUT.tmp.PID left" sh -c "test $rc = 130 && ! ls | grep -q ki"
# a signal ignored by whoever started vpaudit (nohup) stays ignored
( trap '' TERM; exec "$VPAUDIT" features fbank fifo -o ig.ark 2> /dev/null ) & pid=$!
wait_for . 'ig.ark.tmp'
kill -TERM $pid; sleep 0.2
t_ok "an ignored SIGTERM stays ignored" kill -0 $pid
kill -KILL $pid; wait $pid 2> /dev/null
rm -f ig.ark.tmp.*

# stale temporaries of killed runs (PID 999999999: no such process) removed by every command
touch f6.ark.tmp.999999999
t_run "features removes OUT.tmp.PID of a killed run" 0 -- features fbank d -o f6.ark
t_ok "... gone, with a warning" sh -c "! ls | grep -q f6.ark.tmp && grep -q 'removed 1 temporary left by a killed run' '$ERR'"
mkdir -p a6.tmp.999999999/wav
touch a6.tmp.999999999/wav/u1.wav
t_run "anonymise removes OUT.tmp.PID/ of a killed run" 0 -- anonymise mcadams --alpha 0.8 --threads 1 d a6
t_ok "... gone" sh -c "! ls | grep -q a6.tmp"
touch j6.xml.tmp.999999999
t_run "gate --junit removes FILE.tmp.PID of a killed run" 0 -- gate o3/results.json --junit j6.xml
t_ok "... gone" sh -c "! ls | grep -q j6.xml.tmp"
mkdir r6
touch r6/report.html.tmp.999999999 r6/results.json.tmp.999999999
t_run "report removes REPORT.tmp.PID of a killed run" 0 -- report o3/results.json -o r6 --no-plots
t_ok "... gone" sh -c "! ls r6 | grep -q tmp"
ln -s "$T/victim_dir" e6.tmp.999999999
t_run "a stale temporary that is a link: the link is removed, not its target" 0 -- \
	anonymise mcadams --alpha 0.8 --threads 1 d e6
t_ok "... target untouched" unchanged

# a run removes the reports of an earlier run when it starts: a run whose score
# file is a FIFO without a writer waits after the start, then is killed
mkfifo sc.fifo
sed "s|scores: .*/ignorant.txt|scores: $T/sc.fifo|" scores.yaml > fifo.yaml
mkdir o6b
cp o3/results.json o3/junit.xml o6b/
"$VPAUDIT" run fifo.yaml -o o6b --no-plots --quiet > "$OUT" 2> "$ERR" & pid=$!
for i in $(seq 1 200); do test -e o6b/junit.xml || break; sleep 0.05; done
t_ok "a started run has removed the earlier run's junit.xml and results.json" \
	sh -c "test ! -e o6b/junit.xml && test ! -e o6b/results.json"
kill -TERM $pid; wait $pid; rc=$?
t_ok "... killed by SIGTERM: exit 143, the folder empty" sh -c "test $rc = 143 && test -z \"\$(ls -A o6b)\""

# ---- item 8 -------------------------------------------------------------------------------
truncate -s 1025M big.txt
t_run "a 1025 MiB score file: exit 1" 1 -- metrics big.txt
t_ok "... 'larger than 1 GiB'" grep -qx "vpaudit metrics: error: big.txt: larger than 1 GiB (1074790400 bytes)" "$ERR"
mkdir bigd
cp d/wav.scp bigd/
truncate -s 1025M bigd/utt2spk
t_run "a 1025 MiB utt2spk (read whole): exit 1" 1 -- features fbank bigd -o big.ark
t_ok "... 'larger than 1 GiB'" grep -q "bigd/utt2spk: larger than 1 GiB (1074790400 bytes)" "$ERR"
rm -rf big.txt bigd

mkdir -p f8/existing
printf 'u1 d/nothere.wav\n' > d8.scp
t_run "features -o new/folder/ on a failing input: exit 1" 1 -- features fbank d8.scp -o f8/new/sub/
t_ok "... the folders it made are removed" test "$(ls f8)" = existing
t_run "features -o existing/ on a failing input: exit 1" 1 -- features fbank d8.scp -o f8/existing/
t_ok "... an existing folder stays" test -d f8/existing

if mkdir -p small && mount -t tmpfs -o size=1M tmpfs small 2> /dev/null; then
	t_run "a run into a folder with 1 MiB free" 0 -- run scores.yaml -o small/o --no-plots --quiet
	t_ok "... warns before computing" grep -q "^vpaudit: warning: small/o: only 1.0 MiB free: the report may not fit" "$ERR"
	rm -rf small/o
	sed 's|scores: .*/ignorant.txt|scores: missing.txt|' scores.yaml > bad8.yaml
	mkdir small/o
	dd if=/dev/zero of=small/fill bs=4k 2> /dev/null
	t_run "a failing run on a full disk: exit 1" 1 -- run bad8.yaml -o small/o --no-plots --quiet
	t_ok "... the JUnit fallback's warning says why" \
		grep -q "warning: cannot write the error report small/o/junit.xml: write error: No space left on device" "$ERR"
	umount small
else
	echo "# skip: low free space and a full disk (mounting a tmpfs needs root)"
fi

# ---- item 9 -------------------------------------------------------------------------------
if mkdir -p ro && mount -t tmpfs -o ro,size=1M tmpfs ro 2> /dev/null; then
	t_run "a read-only output folder: exit 1" 1 -- run scores.yaml -o ro --no-plots
	t_ok "... exactly one line on stderr" test "$(wc -l < "$ERR")" = 1
	t_ok "... the error names the folder" grep -qx "vpaudit run: error: ro: cannot write in the output folder: Read-only file system" "$ERR"
	umount ro
else
	echo "# skip: read-only output folder (mounting a tmpfs needs root)"
fi
# a folder without write permission (as root, checked as the user nobody)
mkdir -p nw/o
chmod 555 nw/o
if [ "$(id -u)" != 0 ]; then
	t_run "an output folder without write permission: exit 1" 1 -- run scores.yaml -o nw/o --no-plots
	t_ok "... exactly one line on stderr" test "$(wc -l < "$ERR")" = 1
elif command -v setpriv > /dev/null && chmod 755 "$T" && setpriv --reuid=65534 --regid=65534 --clear-groups true 2> /dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$VPAUDIT" run scores.yaml -o nw/o --no-plots > "$OUT" 2> "$ERR"; rc=$?
	t_ok "an output folder without write permission (user nobody): exit 1" test "$rc" = 1
	t_ok "... exactly one line on stderr" test "$(wc -l < "$ERR")" = 1
else
	echo "# skip: an output folder without write permission (root without setpriv)"
fi
chmod 755 nw/o

N=$(head -c 5000 /dev/zero | tr '\0' a)
sed "s/^name: .*/name: $N/" scores.yaml > long.yaml
t_run "a 5,000-character name: validate exits 1" 1 -- validate long.yaml
t_ok "... says the cap" grep -q "long.yaml:[0-9]*:[0-9]*: 'name' must be at most 100 characters, got 5000" "$ERR"
t_ok "... one error line and the offending line (cut)" test "$(wc -l < "$ERR")" -le 3
sed "s/^name: .*/name: $(head -c 100 /dev/zero | tr '\0' a)/" scores.yaml > name100.yaml
t_run "a 100-character name is valid" 0 -- validate name100.yaml

ESC=$(printf '\033')
printf '1.0 target\n\033[2J\033]0;pwned\007 target\n' > esc.txt
t_run "metrics: a score line with terminal controls: exit 1" 1 -- metrics esc.txt
t_ok "... no raw ESC/BEL on stderr" not grep -q "[$ESC$(printf '\007')]" "$ERR"
t_ok "... shown as \\x1b" grep -qF "'\\x1b[2J\\x1b]0;pwned\\x07'" "$ERR"
printf 'name: x\ntargets: \033[2J\n' > esc.yaml
t_run "validate: a YAML line with terminal controls: exit 1" 1 -- validate esc.yaml
t_ok "... the echoed line escaped" grep -qF '    2 | targets: \x1b[2J' "$ERR"
t_ok "... the caret under the shown column" grep -qx '      |          ^' "$ERR"
t_ok "... no raw ESC" not grep -q "$ESC" "$ERR"
printf 'u1 d/u1.wav\nbad\033[2J\033]0;pwned\007\n' > esc.scp
t_run "features: a wav.scp line with terminal controls: exit 1" 1 -- features fbank esc.scp -o esc.ark
t_ok "... the echoed line escaped" grep -qxF '  bad\x1b[2J\x1b]0;pwned\x07' "$ERR"
t_ok "... no raw ESC" not grep -q "$ESC" "$ERR"

t_done
