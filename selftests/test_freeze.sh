#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A censor that freezes every TCP connection once 16 KB have gone from
# the server to the client (R drops what S sends on a connection whose
# reply direction carried more, by conntrack's byte count), as Russia's
# does. ftv replaces each connection before it gets there.
#  - rotate 12k, flows 4: 1 MB from S to C arrive intact, with pings
#    beside; C replaced connections (rotations), and no connection ever
#    crossed the freeze: R dropped nothing, and no connection in R's
#    conntrack carried more than 16 KB towards C;
#  - rotate auto (the default), flows 4: the first download teaches C
#    where connections freeze (some are frozen, and given up, and two
#    that froze after about as many bytes teach a budget, which the
#    kernel log says); the second crosses it far less often than the
#    first, and both arrive intact;
#  - nothing failed authentication or was taken for a replay, and every
#    connection and session was freed.
# R delays 20 ms each way and keeps strict conntrack; offloads stay at
# their defaults.
#
#   ns C (initiator)          ns R (router, censor)              ns S (responder)
#   +--------------------+   +--------------------------------+  +--------------------+
#   | ftv0 10.9.0.1      |   | netem delay 20ms each way      |  | ftv0 10.9.0.2      |
#   |   flows 4          |   | ct state invalid drop          |  |   :51820           |
#   | veth0 192.168.10.2 |---| S->C dropped once a connection |--| veth0 198.51.100.2 |
#   +--------------------+   |   carried 16 KB towards C      |  +--------------------+
#                            +--------------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

FREEZE=16384

ktap_plan 12
ftv_require
for tool in conntrack nc tc nft; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done

kmark=$(kmsg_mark)
paths_censor 20ms || ktap_bail "cannot set up the namespaces and R"
paths_freeze "$FREEZE" || ktap_bail "cannot set up R's freeze"

# frozen : segments R dropped for the freeze so far
frozen() { nft_packets "$R" "ip freeze"; }
# crossed : connections in R's conntrack that carried more than the freeze
# towards C
crossed() { paths_crossed "$FREEZE"; }
rotations() { ftv_peer_json "$C" ftv0 "$S_KEY" 'p["rotations"]'; }
flows_up_is() { [ "$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]')" = "$1" ]; }
# auth_drops : messages C and S dropped as forged or replayed
auth_drops()
{
	echo $(($(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["drops"].get("bad_auth", 0) + p["drops"].get("replay", 0)') +
		$(ftv_peer_json "$S" ftv0 "$C_KEY" 'p["drops"].get("bad_auth", 0) + p["drops"].get("replay", 0)')))
}
# setup ROTATE : ftv0 on both ends afresh, C's peer with flows 4 and
# rotate ROTATE, the tunnel up
setup()
{
	ip -n "$C" link del ftv0 2>/dev/null
	ip -n "$S" link del ftv0 2>/dev/null
	nsx "$R" conntrack -F >/dev/null 2>&1
	paths_ftv 4 || return 1
	S_KEY=$(pubkey_of s)
	C_KEY=$(pubkey_of c)
	nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 4 rotate "$1" || return 1
	connect_ping "$C" 10.9.0.2 && wait_for 20 flows_up_is 4
}

# download PORT WHAT : 1 MB from S to C, with pings from C beside it
# (PING_SENT, PING_GOT); one case, WHAT
download()
{
	bg_ping "$C" 10.9.0.2 "dl$1"
	if transfer "$S" "$C" 10.9.0.1 "$1" "$FTV_TMP/data" 120; then
		ktap_ok "$2"
	else
		ktap_fail "$2"
	fi
	bg_ping_stop "dl$1"
}

random_file data 1

# ---- rotate 12k
setup 12k || ktap_bail "no tunnel with rotate 12k"
frozen0=$(frozen)
download 5001 "rotate 12k: 1 MB from S to C arrive intact through the freeze"
ktap_diag "pings: $PING_GOT of $PING_SENT answered"
ktap_eq "rotate 12k: R dropped nothing, and no connection carried 16 KB towards C" \
	"0 0" "$(($(frozen) - frozen0)) $(crossed)"
ktap_result "rotate 12k: C replaced connections as they carried their budget (rotations $(rotations))" \
	"$([ "$(rotations)" -ge 8 ]; echo $?)"
ktap_eq "rotate 12k: nothing failed authentication or was taken for a replay" 0 "$(auth_drops)"

# ---- rotate auto
setup auto || ktap_bail "no tunnel with rotate auto"
frozen0=$(frozen)
download 5002 "rotate auto: the first 1 MB from S to C arrive intact"
first=$(($(frozen) - frozen0))
rot=$(rotations)
ktap_diag "the first download: R dropped $first segments for the freeze; $rot connections replaced"
ktap_result "rotate auto: connections froze and C gave them up" \
	"$([ "$first" -gt 0 ] && [ "$rot" -ge 1 ]; echo $?)"
learned=$(dmesg_since "$kmark" | grep -o "connections froze after .*" | tail -n 1)
ktap_diag "C's log: ${learned:-nothing learned}"
ktap_result "rotate auto: C learned a budget from connections that froze (kernel log)" \
	"$([ -n "$learned" ]; echo $?)"
frozen0=$(frozen)
download 5003 "rotate auto: the second 1 MB arrive intact"
second=$(($(frozen) - frozen0))
ktap_diag "the second download: R dropped $second segments for the freeze; pings: $PING_GOT of $PING_SENT answered"
ktap_result "rotate auto: having learned, the second download met the freeze less than the first" \
	"$([ "$second" -lt "$first" ]; echo $?)"
ktap_eq "rotate auto: nothing failed authentication or was taken for a replay" 0 "$(auth_drops)"

ip -n "$C" link del ftv0
ip -n "$S" link del ftv0
objects_balanced "$kmark" 30
ktap_eq "no kernel report of a write into freed memory" "" "$(freed_memory_reports "$kmark")"
ktap_finish
