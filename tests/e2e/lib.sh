# tests/e2e/lib.sh - helpers for e2e scripts (source it).
#   t_run NAME EXPECTED_STATUS -- vpaudit args...  (stdout/stderr in $OUT/$ERR)
#   t_ok NAME CONDITION-COMMAND...
t_pass=0; t_fail=0
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
OUT=$T/stdout; ERR=$T/stderr
VPAUDIT=${VPAUDIT:-$PWD/vpaudit}
t_ok() {
	local name=$1; shift
	if "$@"; then echo "ok - $name"; t_pass=$((t_pass + 1))
	else echo "not ok - $name"; t_fail=$((t_fail + 1)); fi
}
t_run() {
	local name=$1 want=$2; shift 3
	${VPA_WRAP:-} "$VPAUDIT" "$@" > "$OUT" 2> "$ERR"; local rc=$?
	if [ "$rc" = "$want" ]; then echo "ok - $name"; t_pass=$((t_pass + 1))
	else echo "not ok - $name (exit $rc, expected $want)"; head -n 5 "$ERR" | sed 's/^/#   /'
		t_fail=$((t_fail + 1)); fi
}
t_done() { echo "suite: $t_pass passed, $t_fail failed"; }
# jqt FILTER FILE...: true when jq's FILTER gives true (exit 1 on false or null,
# 2-5 on a jq or JSON error): the scripts' checks of results.json (jq, not
# Python: no Python in the test run)
jqt() { jq -e "$@" > /dev/null; }
