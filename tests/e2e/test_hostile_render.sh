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
