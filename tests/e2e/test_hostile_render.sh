# tests/e2e/test_hostile_render.sh - hostile inputs against the renderers
# (issue 26): a long word in free text (item 4), the PDF typeset in a child
# process whose death is one error line (item 5), a gnuplot that closes its
# output and stays alive (item 11).  Run from the repository top.  Timing
# bounds are generous on purpose (a loaded CI machine): they separate "seconds"
# from "minutes or forever", nothing finer.
. tests/e2e/lib.sh
G=$PWD/tests/golden/reports/results.json
has() { grep -q -- "$2" "$1"; }
now() { date +%s.%N; }
elapsed_lt() { awk -v a="$1" -v b="$2" -v lim="$3" 'BEGIN { exit !(b - a < lim) }'; }

# ---- item 4: a long word in free text ----
# A word of 100,000 characters took 32-51 s to typeset (quadratic in Pango).
# The scenario's description is capped at 1000 characters by validate and by
# report; any other text (here a warning of the run) gets break opportunities.
S=$PWD/scenarios/data
word() { head -c "$1" /dev/zero | tr '\0' "$2"; }
scenario() { # $1 = description
	printf 'name: long\ndescription: %s\ntargets:\n  - {id: t, kind: scores, sets: [{name: s, scores: %s}]}\nattacks:\n  - {id: e, kind: evaluate, target: t}\n' \
		"$1" "$S/ignorant.txt"
}
scenario "$(word 100000 x)" > "$T/long.yaml"
t0=$(now)
t_run "validate: a description of 100,000 characters is refused" 1 -- validate "$T/long.yaml"
t1=$(now)
t_ok "validate: in < 20 s" elapsed_lt "$t0" "$t1" 20
t_ok "validate: the error names the file, the key and the limit" test "$(head -n 1 "$ERR")" = \
	"vpaudit validate: error: $T/long.yaml:2:14: 'description' must be at most 1000 characters, got 100000"
t_ok "validate: the offending line is echoed shortened (< 300 characters)" \
	sh -c "test \$(wc -L < '$ERR') -lt 300"
scenario "$(word 1000 x)" > "$T/max.yaml"
t_run "validate: a description of 1000 characters is fine" 0 -- validate "$T/max.yaml"
scenario "$(printf '\303\251%.0s' $(seq 1000))" > "$T/max8.yaml"
t_run "validate: 1000 characters are counted as characters, not bytes" 0 -- validate "$T/max8.yaml"

# the same caps in a results file given to `report`
jq --indent 1 '.scenario.description = ("x" * 100000)' "$G" > "$T/desc100k.json"
jq --indent 1 '.scenario.description = ("x" * 1000)' "$G" > "$T/desc1000.json"
jq --indent 1 '.warnings += ["y" * 100000]' "$G" > "$T/warn100k.json"
jq --indent 1 '.warnings += ["y" * 1048577]' "$G" > "$T/warn1m.json"
t0=$(now)
t_run "report: a description of 100,000 characters is refused" 1 -- report "$T/desc100k.json" -o "$T/d100k"
t1=$(now)
t_ok "report: in < 20 s" elapsed_lt "$t0" "$t1" 20
t_ok "report: the error names the file, the place and the limit" test "$(cat "$ERR")" = \
	"vpaudit report: error: $T/desc100k.json:6:18: scenario: 'description' must be at most 1000 characters, got 100000"
t_ok "report: nothing written" test ! -e "$T/d100k"
t_run "report: a description of 1000 characters is typeset" 3 -- report "$T/desc1000.json" -o "$T/d1000"
t_ok "report: ... on the title page with the verdict" sh -c \
	"pdftotext -f 1 -l 1 '$T/d1000/report.pdf' - | grep -q 'FAIL: 2 of 3 gates failed'"
t0=$(now)
t_run "report: a warning of one word of 100,000 characters" 3 -- report "$T/warn100k.json" -o "$T/w100k"
t1=$(now)
t_ok "report: the 100,000-character word is typeset in < 20 s (was 32 s)" elapsed_lt "$t0" "$t1" 20
# a paragraph taller than a page continues on the next pages (it was cut at
# the page's end: 3,578 of the 100,000 characters were on paper)
t_ok "report: the whole word is in the PDF" sh -c \
	"test \$(pdftotext '$T/w100k/report.pdf' - | tr -cd y | wc -c) -ge 100000"
t_run "report: a string over 1 MiB is refused" 1 -- report "$T/warn1m.json" -o "$T/w1m"
t_ok "report: ... with one line naming the place" sh -c \
	"test \$(wc -l < '$ERR') = 1 && grep -qx 'vpaudit report: error: $T/warn1m.json:[0-9]*:[0-9]*: a string of 1048577 bytes (at most 1048576 in a results file)' '$ERR'"
t_ok "report: ... nothing written" test ! -e "$T/w1m"

# ---- item 5: out of memory while typesetting the PDF ----
# GLib aborts the process when an allocation fails (SIGTRAP, exit 133, two
# lines of GLib's own); the PDF is now typeset in a child process whose death
# is one error line.  VPAUDIT_TEST_PDF_HEADROOM_MB=N lets that child's address
# space grow by N MiB only; where it then dies (our allocator, GLib, librsvg,
# fontconfig) depends on the machine, so every outcome is checked for the
# rule: exit 1 with one error line about report.pdf and nothing written, or
# the complete reports.
ONE_LINE='^vpaudit report: error: (out of memory \(allocating [0-9 *]+ bytes\) while typesetting report\.pdf|out of memory while typesetting report\.pdf: .*|report\.pdf: the typesetter .*)$'
VPAUDIT_TEST_PDF_HEADROOM_MB=0 t_run "PDF without memory: exit 1" 1 -- report "$G" -o "$T/oom"
t_ok "PDF without memory: one error line" sh -c "test \$(wc -l < '$ERR') = 1 && grep -Eq '$ONE_LINE' '$ERR'"
head -n 1 "$ERR" | sed 's/^/# headroom 0: /'
t_ok "PDF without memory: nothing written" test ! -e "$T/oom"
bad=0; failed=0
for mb in 0 1 2 4 8 16 24 32 40 48 56 64 96 128; do
	rm -rf "$T/scan"
	VPAUDIT_TEST_PDF_HEADROOM_MB=$mb "$VPAUDIT" report "$G" -o "$T/scan" > /dev/null 2> "$T/scan.err"; rc=$?
	if [ $rc = 1 ]; then
		failed=$((failed + 1))
		if [ "$(wc -l < "$T/scan.err")" != 1 ] || ! grep -Eq "$ONE_LINE" "$T/scan.err" || [ -e "$T/scan" ]; then
			bad=$((bad + 1)); echo "# headroom $mb MiB: exit 1 but:"; head -n 3 "$T/scan.err" | sed 's/^/#   /'
		fi
	elif [ $rc = 3 ]; then
		if [ ! -s "$T/scan/report.pdf" ] || [ ! -s "$T/scan/report.html" ]; then
			bad=$((bad + 1)); echo "# headroom $mb MiB: exit 3 without the reports"
		fi
	else
		bad=$((bad + 1)); echo "# headroom $mb MiB: exit $rc"; head -n 3 "$T/scan.err" | sed 's/^/#   /'
	fi
done
echo "# $failed of 14 headrooms ran out of memory"
t_ok "PDF memory from 0 to 128 MiB: one error line or complete reports, never an abort" test $bad = 0
# all or nothing: a failed re-render leaves the previous reports as they were
t_run "complete reports first" 3 -- report "$G" -o "$T/keep"
(cd "$T/keep" && sha256sum * > "$T/keep.sums")
VPAUDIT_TEST_PDF_HEADROOM_MB=0 t_run "PDF without memory over earlier reports: exit 1" 1 -- report "$G" -o "$T/keep"
t_ok "... the earlier reports unchanged" sh -c "cd '$T/keep' && sha256sum -c --quiet '$T/keep.sums'"
t_ok "... and no temporaries" test "$(ls "$T/keep" | wc -l)" = "$(wc -l < "$T/keep.sums")"
# `run` writes its reports the same way
VPAUDIT_TEST_PDF_HEADROOM_MB=0 t_run "run: PDF without memory: exit 1" 1 -- run scenarios/scores-example.yaml -o "$T/run0" --quiet
t_ok "run: one error line (after the run's warnings)" sh -c \
	"test \$(grep -vc '^vpaudit: warning: ' '$ERR') = 1 && grep -v '^vpaudit: warning: ' '$ERR' | sed 's/^vpaudit run:/vpaudit report:/' | grep -Eq '$ONE_LINE'"
t_ok "run: no results.json, report.html or report.pdf" \
	test ! -e "$T/run0/results.json" -a ! -e "$T/run0/report.html" -a ! -e "$T/run0/report.pdf"

# ---- item 11: a gnuplot that closes its output and stays alive ----
# The fake gnuplot closes stdout and stderr, then sleeps as the same process
# (exec), so its pid file names the process vpaudit must kill.  Before the fix
# vpaudit waited for it (60 s here, forever in general).
mkdir -p "$T/lingering"
cat > "$T/lingering/gnuplot" <<EOS
#!/bin/sh
echo \$\$ >> "$T/lingering.pid"
exec >&- 2>&-
exec sleep 60
EOS
chmod +x "$T/lingering/gnuplot"
t0=$(now)
PATH=$T/lingering:$PATH t_run "a lingering gnuplot: exit 1" 1 -- report "$G" -o "$T/ling"
t1=$(now)
t_ok "a lingering gnuplot: given up in < 40 s (the limit is 10 s)" elapsed_lt "$t0" "$t1" 40
t_ok "a lingering gnuplot: one error line" test "$(cat "$ERR")" = \
	"vpaudit report: error: gnuplot did not exit within 10 s of closing its output: killed it"
t_ok "a lingering gnuplot: nothing written" test ! -e "$T/ling"
alive=0
for pid in $(cat "$T/lingering.pid" 2>/dev/null); do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
t_ok "a lingering gnuplot: started and killed (none alive)" sh -c "test -s '$T/lingering.pid' && test $alive = 0"

t_done
