#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_transfer.sh over the other mixes of families: by default
# the outer connection runs over IPv6 (A dials [fd00::2]:51820) and
# 10 MB go through the tunnel inside IPv4 and then inside IPv6, each
# compared by sha256 on both ends. UNDERLAY (4 or 6) picks the outer
# family and INNER the inner ones; test_transfer6in4.sh runs IPv6 inside
# IPv4.
#
#   ns A (initiator)                           ns B (responder)
#   +----------------------------+            +----------------------------+
#   | nc -N 10.9.0.2 | fd09::2   |            | nc -l 5001 | sha256sum     |
#   | ftv0 10.9.0.1 fd09::1      |            | ftv0 10.9.0.2 fd09::2      |
#   | veth0 10.0.0.1 fd00::1     |------------| veth0 10.0.0.2 fd00::2     |
#   +----------------------------+            +----------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

UNDERLAY=${UNDERLAY:-6}
INNER=${INNER:-4 6}
SIZE_MB=10

command -v nc >/dev/null || ktap_skip_all "nc (netcat-openbsd) is not installed"
# shellcheck disable=SC2086 # count the words
set -- $INNER
ktap_plan $((2 + $#))
ftv_require

pair_underlay "$UNDERLAY" || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"

if connect_ping "$A" 10.9.0.2; then
	ktap_ok "the tunnel is up over IPv$UNDERLAY"
else
	ktap_fail "the tunnel is up over IPv$UNDERLAY"
	nsx "$A" "$FTVCTL" show ftv0 2>&1 | ktap_diag
	ktap_bail "no tunnel, nothing to transfer over"
fi
if [ "$UNDERLAY" = 6 ]; then want='^\[fd00::1\]:[0-9]+$'; else want='^10\.0\.0\.1:[0-9]+$'; fi
ep=$(paths_endpoint_of "$B" ftv0 "$(pubkey_of a)" 2>&1)
if [[ "$ep" =~ $want ]]; then
	ktap_ok "B sees A's IPv$UNDERLAY address ($ep)"
else
	ktap_fail "B sees A's IPv$UNDERLAY address"
	ktap_diag "endpoint: $ep"
fi

random_file data "$SIZE_MB"
port=5001
for inner in $INNER; do
	if [ "$inner" = 6 ]; then addr=fd09::2; else addr=10.9.0.2; fi
	if transfer "$A" "$B" "$addr" "$port" "$FTV_TMP/data"; then
		ktap_ok "$SIZE_MB MB of IPv$inner-in-IPv$UNDERLAY arrive intact"
	else
		ktap_fail "$SIZE_MB MB of IPv$inner-in-IPv$UNDERLAY arrive intact"
	fi
	port=$((port + 1))
done

ktap_finish
