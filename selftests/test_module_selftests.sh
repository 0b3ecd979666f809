#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's own self-tests, which a debug build (make FTV_DEBUG=1) runs
# when it loads: replay window, allowed-ips trie (from reserved nodes
# too), TCP option codec, SYN tokens, the erasure code, shaping, outer
# segment lengths (padding, an IP length past the packet, BIG TCP
# superpackets whose IP length is 0, IPv4 and IPv6 with or without the
# jumbo header GRO adds), join tokens taken, passed over and replayed
# (module/selftest/join.c), a session's messages put back in order
# (module/selftest/reorder.c), when a connection's unanswered data is
# asked for and when it counts as stalled (module/selftest/flow.c), FEC's
# loss estimate leaving out what this end dropped itself, even when its
# gap shows an interval later (module/selftest/fec.c), and
# one full key exchange against known
# answers. Those answers must still be what
# selftests/lib/noise_vectors.py, an independent implementation on Python's
# cryptography package, computes. No topology: this loads the debug module
# ($FTV_DEBUG_KO, built by make check), reads its verdicts, and puts the
# normal module back.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
trap 'ftv_load_module >/dev/null 2>&1; cleanup' EXIT

VECTORS="$FTV_ROOT/selftests/lib/noise_vectors.py"
TABLES="$FTV_ROOT/module/selftest/noise.c"
DEBUG_KO=${FTV_DEBUG_KO:-$FTV_ROOT/module/ftv-debug.ko}

ktap_plan 14
"$PYTHON" -c 'import cryptography' 2>/dev/null ||
	ktap_skip_all "python3-cryptography is not installed"

ktap_check "known answers in the module match noise_vectors.py" \
	"$PYTHON" "$VECTORS" --check "$TABLES"

[ -f "$DEBUG_KO" ] || ktap_bail "no debug build of the module at $DEBUG_KO"
mark=$(kmsg_mark)
if FTV_KO=$DEBUG_KO ftv_load_module; then
	ktap_ok "the debug module loads (its self-tests passed)"
else
	ktap_fail "the debug module loads (its self-tests passed)"
fi
log=$(dmesg_since "$mark")
for t in replay allowedips faketcp noise token fec shape segment join reorder \
	flow loss; do
	if grep -q "ftv: $t self-tests: pass" <<<"$log"; then
		ktap_ok "$t self-tests pass"
	else
		ktap_fail "$t self-tests pass"
		grep "ftv:" <<<"$log" | ktap_diag
	fi
done

ktap_finish
