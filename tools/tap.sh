# SPDX-License-Identifier: GPL-2.0
#
# KTAP helpers for the tools' own tests (tools/*/tests, tools/ftvctl/fuzz),
# sourced after `set -u`:
#	result RC DESCRIPTION		ok if RC is 0, else not ok
#	skip DESCRIPTION REASON
#	fails DESCRIPTION PATTERN CMD...
#					ok if CMD exits 1 and its stderr
#					matches PATTERN (grep)
#	tap_done			the plan and totals; false if any failed
# It makes $TMP, a directory that is removed on exit.

n=0
failed=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

result()
{
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

skip()
{
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

fails()
{
	local what=$1 pattern=$2 rc=0

	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
	if [ "$rc" = 1 ] && grep -q -- "$pattern" "$TMP/err"; then
		result 0 "$what"
	else
		echo "# rc=$rc, stderr: $(cat "$TMP/err")"
		result 1 "$what"
	fi
}

tap_done()
{
	echo "1..$n"
	echo "# $((n - failed)) passed, $failed failed"
	[ "$failed" = 0 ]
}
