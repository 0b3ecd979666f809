#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What FEC's receive state costs, and for whom. Keeping received messages
# for rebuilding takes about 194 KB per connection, so it is allocated only
# when a valid repair message arrives on a live connection that negotiated
# FEC with a peer this side lets use it, and freed once the connection
# retires, not a minute later with the connection. Sessions are renewed
# every 3,000 messages (the debug module's rekey_after_messages), so a
# transfer goes through many connections, while A sends repair messages
# with every group (fec 8:2):
#  1. B has "fec off" for A: not one FEC receive state is created on B,
#     however many repair messages A sends;
#  2. B has "fec auto": B keeps states for A's connections, and within
#     30 s of the transfer's end all but the live connection's are freed;
#  3. every object created was destroyed once the devices go (the
#     pr_debug pairs, FEC states among them; run.sh's kmemleak too).
# The "created"/"destroyed" lines of the module's pr_debug count them.
#
#   ns A (initiator, renews)                     ns B (responder)
#   +---------------------------+               +---------------------------+
#   | nc -N 10.9.0.2 5001       |               | nc -l 5001                |
#   | ftv0 10.9.0.1/24, fec 8:2 |               | ftv0 10.9.0.2/24          |
#   | veth0 10.0.0.1/24         |---------------| veth0 10.0.0.2/24 :51820  |
#   +---------------------------+               +---------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

PARAMS=/sys/module/ftv/parameters
SIZE_MB=16
REKEY_MESSAGES=3000

ktap_plan 7
ftv_require
ftv_use_debug_module
command -v nc >/dev/null || ktap_skip_all "nc (netcat-openbsd) is not installed"

orig=$(cat "$PARAMS/rekey_after_messages")
defer "echo $orig >$PARAMS/rekey_after_messages"
echo "$REKEY_MESSAGES" >"$PARAMS/rekey_after_messages"

mark=$(kmsg_mark)
pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
pub_a=$(pubkey_of a)
pub_b=$(pubkey_of b)
nsx "$A" "$FTVCTL" peer set ftv0 "$pub_b" fec 8:2 || ktap_bail "cannot set fec 8:2 on A"
nsx "$B" "$FTVCTL" peer set ftv0 "$pub_a" fec off || ktap_bail "cannot set fec off on B"
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"
random_file data "$SIZE_MB"

# count SINCE WHAT : kernel log lines since SINCE that say WHAT of B's
# (the responder's connections are on the listen port locally)
count()
{
	dmesg_since "$1" | grep -c "ftv: ftv0: $2 of $FTV_PORT:[0-9]* $3"
}
# opened SINCE : connections A opened since SINCE
opened()
{
	dmesg_since "$1" | grep -c "connection [0-9]*:$FTV_PORT created"
}
repairs() { ftv_peer_json "$A" ftv0 "$pub_b" 'p["fec_stats"].get("repair_sent", 0)'; }

# ---- 1. fec off on B
m1=$(kmsg_mark)
sent0=$(repairs)
if transfer "$A" "$B" 10.9.0.2 5001 "$FTV_TMP/data" 300; then
	ktap_ok "fec off on B: $SIZE_MB MB arrive intact"
else
	ktap_fail "fec off on B: $SIZE_MB MB arrive intact"
fi
ktap_diag "A opened $(opened "$m1") connections and sent $(($(repairs) - sent0)) repair messages"
ktap_result "fec off on B: A renewed the session several times ($(opened "$m1") connections)" \
	"$([ "$(opened "$m1")" -ge 2 ]; echo $?)"
ktap_eq "fec off on B: B created no FEC receive state" 0 \
	"$(count "$m1" "FEC state" created)"

# ---- 2. fec auto on B
nsx "$B" "$FTVCTL" peer set ftv0 "$pub_a" fec auto || ktap_bail "cannot set fec auto on B"
m2=$(kmsg_mark)
if transfer "$A" "$B" 10.9.0.2 5001 "$FTV_TMP/data" 300; then
	ktap_ok "fec auto on B: $SIZE_MB MB arrive intact"
else
	ktap_fail "fec auto on B: $SIZE_MB MB arrive intact"
fi
created=$(count "$m2" "FEC state" created)
ktap_result "fec auto on B: B kept received messages for A's connections ($created states)" \
	"$([ "$created" -ge 2 ]; echo $?)"
# live : FEC states of B's that exist now (those created since m2 and
# not destroyed, plus any from before)
live()
{
	echo $(($(count "$mark" "FEC state" created) - $(count "$mark" "FEC state" destroyed)))
}
at_most_one() { [ "$(live)" -le 1 ]; }
if wait_for 30 at_most_one; then
	ktap_ok "fec auto on B: the states of retired connections are freed ($(live) left)"
else
	ktap_fail "fec auto on B: the states of retired connections are freed ($(live) left)"
fi

# ---- 3. everything goes with the devices
nsx "$A" ip link del ftv0
nsx "$B" ip link del ftv0
objects_balanced "$mark" 30

ktap_finish
