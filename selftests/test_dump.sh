#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A dump's cursor against a removed peer. Between two messages of a dump
# the kernel keeps a pointer to the peer the next message starts with,
# trusted while the device's configuration generation is the one it was
# taken in. dump_cursor.py removes that peer (and every other the first
# message did not hold) between two messages and, through the debug
# module's "generation" parameter, moves the counter of generations on by
# 2^32, which is what as many cheap requests (from any user with
# CAP_NET_ADMIN in a user namespace) would do. Checked: the dump still
# ends, says it was interrupted (NLM_F_DUMP_INTR), holds only peers that
# existed, and the kernel log has no report (KASAN, on the debug kernel,
# reports a walk through freed memory; run.sh checks the log after every
# script as well).
#
#   ns A
#   +---------------------------------------------+
#   | ftv0, 600 peers, 2 allowed IPs each          |
#   | dump_cursor.py: dump, remove, move the counter   |
#   +---------------------------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

DUMP="$FTV_ROOT/selftests/lib/dump_cursor.py"
PARAMS=/sys/module/ftv/parameters
PEERS=600

ktap_plan 4
ftv_require
ftv_use_debug_module
[ -w "$PARAMS/generation" ] ||
	ktap_bail "the debug module has no writable generation parameter"

ns_create A || ktap_bail "cannot create the namespace"
nsx "$A" ip link add ftv0 type ftv || ktap_bail "cannot create ftv0"
mark=$(kmsg_mark)

out=$(nsx "$A" "$PYTHON" "$DUMP" ftv0 "$PEERS" "$PARAMS" 2>&1)
rc=$?
ktap_diag "dump_cursor.py: $out"
if [ "$rc" -eq 0 ] && [[ "$out" == *"parts="* ]]; then
	ktap_ok "the dump ends after its cursor peer was removed"
else
	ktap_fail "the dump ends after its cursor peer was removed"
fi
ktap_eq "the dump says it was interrupted" 1 \
	"$(sed -n 's/.*intr=\([0-9]\).*/\1/p' <<<"$out")"
seen=$(sed -n 's/.*peers_seen=\([0-9]*\).*/\1/p' <<<"$out")
ktap_result "the dump held no more peers than there were ($seen of $PEERS)" \
	"$([ -n "$seen" ] && [ "$seen" -le "$PEERS" ]; echo $?)"
reports=$(dmesg_since "$mark" | grep -c "BUG:\|KASAN\|general protection\|Oops")
ktap_eq "no memory-safety report in the kernel log" 0 "$reports"

ktap_finish
