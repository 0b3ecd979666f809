#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the configuration parser's libFuzzer harness with clang and runs
# it for a bounded time, seeded with the example configurations.
# Usage: fuzz/run.sh [SECONDS]   (default $FTV_FUZZ_TIME, else 30)
# Output: KTAP. Exit: 0 pass or ktap_skip (no clang), 1 fail.

set -u

cd "$(dirname "$0")/.." || exit 1
SECONDS_MAX=${1:-${FTV_FUZZ_TIME:-30}}
MAKE=${MAKE:-make}
FUZZER=fuzz/config-fuzz
# shellcheck source-path=SCRIPTDIR source=../../../selftests/ktap.sh
. ../../selftests/ktap.sh
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "TAP version 13"
if ! command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1; then
	echo "1..0 # SKIP ${FUZZ_CC:-clang} is not installed (scripts/deps.sh installs it)"
	exit 0
fi

if $MAKE --no-print-directory -s "$FUZZER" >"$TMP/build" 2>&1; then
	ktap_rc 0 "fuzz: the harness builds (clang, libFuzzer, ASan, UBSan)"
else
	sed 's/^/# /' "$TMP/build"
	ktap_rc 1 "fuzz: the harness builds (clang, libFuzzer, ASan, UBSan)"
fi

if [ -x "$FUZZER" ] && [ "$KTAP_FAILED" = 0 ]; then
	# New inputs go to a scratch corpus, not into the tree; a crash
	# leaves its input in $TMP, printed below.
	mkdir "$TMP/corpus"
	seeds=(tests/conf)
	[ -d ../ftv-quick/examples ] && seeds+=(../ftv-quick/examples)
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	"$FUZZER" -max_total_time="$SECONDS_MAX" -timeout=10 -rss_limit_mb=1024 \
		-max_len=4096 -dict=fuzz/config.dict -artifact_prefix="$TMP/" \
		-print_final_stats=1 "$TMP/corpus" "${seeds[@]}" >"$TMP/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
	if [ "$rc" = 0 ]; then
		ktap_rc 0 "fuzz: config parser, ${SECONDS_MAX}s, ${runs:-?} inputs, no crash, leak or round-trip mismatch"
	else
		tail -n 40 "$TMP/log" | sed 's/^/# /'
		for crash in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-* "$TMP"/oom-*; do
			[ -f "$crash" ] || continue
			echo "# input ($crash), base64:"
			base64 -w 76 "$crash" | sed 's/^/#   /'
		done
		ktap_rc 1 "fuzz: config parser, ${SECONDS_MAX}s (exit $rc)"
	fi
fi

ktap_done
