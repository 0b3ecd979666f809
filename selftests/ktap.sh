#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tree's one KTAP library: sourced by selftests/lib.sh (the selftests
# in the VM) and by the tools' own tests on the host (tools/*/tests,
# tools/ftvctl/fuzz, tools/packaging/dkms.sh), after `set -u` or not.
#
# With a plan up front (selftests):
#	ktap_plan N ... ktap_finish		exit code 0 pass, 1 fail, 4 skip
# Or counting as it goes (tools' tests), the plan printed at the end:
#	... ktap_done				false if any case failed
# Cases: ktap_ok, ktap_fail, ktap_skip DESC REASON, ktap_result DESC RC,
# ktap_rc RC DESC, ktap_check DESC CMD..., ktap_check_fails DESC CMD...,
# ktap_fails_with DESC PATTERN CMD... (CMD exits 1 and its stderr matches
# PATTERN), ktap_eq DESC EXPECTED ACTUAL; ktap_diag, ktap_bail,
# ktap_skip_all.

# kselftest exit codes
KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

KTAP_PLANNED=0
KTAP_COUNT=0
KTAP_FAILED=0
KTAP_SKIPPED=0

# ---------------------------------------------------------------- KTAP

ktap_plan()
{
	KTAP_PLANNED=$1
	echo "TAP version 13"
	echo "1..$1"
}

# ktap_diag MSG... : a diagnostic line; with no argument, stdin line by line
ktap_diag()
{
	if [ $# -gt 0 ]; then
		echo "# $*"
	else
		sed 's/^/# /'
	fi
}

ktap_ok()
{
	KTAP_COUNT=$((KTAP_COUNT + 1))
	echo "ok $KTAP_COUNT $*"
}

ktap_fail()
{
	KTAP_COUNT=$((KTAP_COUNT + 1))
	KTAP_FAILED=$((KTAP_FAILED + 1))
	echo "not ok $KTAP_COUNT $*"
}

# ktap_skip DESC REASON
ktap_skip()
{
	KTAP_COUNT=$((KTAP_COUNT + 1))
	KTAP_SKIPPED=$((KTAP_SKIPPED + 1))
	echo "ok $KTAP_COUNT $1 # SKIP ${2:-}"
}

# ktap_result DESC RC : ok if RC is 0
ktap_result()
{
	if [ "$2" -eq 0 ]; then
		ktap_ok "$1"
	else
		ktap_fail "$1"
	fi
}

# ktap_expect WANT DESC CMD... : run CMD; ok if it did what WANT says
# ("succeeds" or "fails"), otherwise not ok followed by CMD's output as
# diagnostics. Returns CMD's status.
ktap_expect()
{
	local want=$1 desc=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if { [ "$want" = succeeds ] && [ "$rc" -eq 0 ]; } ||
	   { [ "$want" = fails ] && [ "$rc" -ne 0 ]; }; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc"
		ktap_diag "expected to ${want%s}: $*"
		ktap_diag "exit code: $rc"
		[ -n "$out" ] && ktap_diag <<<"$out"
	fi
	return "$rc"
}

# ktap_check DESC CMD... : ok if CMD succeeds; returns CMD's status
ktap_check()
{
	ktap_expect succeeds "$@"
}

# ktap_check_fails DESC CMD... : ok if CMD fails; returns 0 then
ktap_check_fails()
{
	ktap_expect fails "$@" && return 1
	return 0
}

# ktap_eq DESC EXPECTED ACTUAL
ktap_eq()
{
	if [ "$2" = "$3" ]; then
		ktap_ok "$1"
		return 0
	fi
	ktap_fail "$1"
	ktap_diag "expected: '$2'"
	ktap_diag "actual:   '$3'"
	return 1
}

# ktap_bail REASON : setup failed; the remaining planned tests are not run
# (run.sh counts them as failed).
ktap_bail()
{
	echo "Bail out! $*"
	exit "$KSFT_FAIL"
}

# ktap_skip_all REASON : the whole script cannot run here.
ktap_skip_all()
{
	echo "TAP version 13"
	echo "1..0 # SKIP $*"
	exit "$KSFT_SKIP"
}

# ktap_finish : totals and exit code. Call at the end of every script.
ktap_finish()
{
	local pass=$((KTAP_COUNT - KTAP_FAILED - KTAP_SKIPPED))

	if [ "$KTAP_COUNT" -ne "$KTAP_PLANNED" ]; then
		ktap_diag "planned $KTAP_PLANNED tests but ran $KTAP_COUNT"
		KTAP_FAILED=$((KTAP_FAILED + 1))
	fi
	echo "# Totals: pass:$pass fail:$KTAP_FAILED xfail:0 xpass:0 skip:$KTAP_SKIPPED error:0"
	if [ "$KTAP_FAILED" -gt 0 ]; then
		exit "$KSFT_FAIL"
	elif [ "$KTAP_SKIPPED" -gt 0 ] && [ "$pass" -eq 0 ]; then
		exit "$KSFT_SKIP"
	fi
	exit "$KSFT_PASS"
}

# ktap_rc RC DESC : ok if RC is 0 (the status first, as it comes)
ktap_rc()
{
	ktap_result "$2" "$1"
}

# ktap_fails_with DESC PATTERN CMD... : ok if CMD, with no stdin, exits 1
# and its stderr matches PATTERN (grep)
ktap_fails_with()
{
	local desc=$1 pattern=$2 err rc=0

	shift 2
	err=$("$@" 2>&1 >/dev/null </dev/null) || rc=$?
	if [ "$rc" = 1 ] && grep -q -- "$pattern" <<<"$err"; then
		ktap_ok "$desc"
		return 0
	fi
	ktap_fail "$desc"
	ktap_diag "rc=$rc, stderr: $err"
	return 1
}

# ktap_done : for scripts without a plan: the plan and the totals now;
# false if any case failed
ktap_done()
{
	echo "1..$KTAP_COUNT"
	echo "# $((KTAP_COUNT - KTAP_FAILED)) passed, $KTAP_FAILED failed"
	[ "$KTAP_FAILED" = 0 ]
}
