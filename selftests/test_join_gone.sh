#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A JOIN_GONE that is lost does not leave the responder counting a join
# the initiator gave up. The initiator tells the responder once, in a
# sealed JOIN_GONE; until 2026-12-04 that went on whichever connection of
# the session would take a small message, and a censor that had blocked
# that one (a join whose opening it judged, which looks up to the
# initiator until data on it goes unanswered) lost it: the responder
# counted the join up, against its cap, and sent on it, until the session
# ended (a CI run's test_pathprobe_open.sh saw S at 4 flows up with C at
# 3). Now a probe's join is told of on itself, the connection that just
# carried the responder's answer; the responder asks, once a second,
# about a join that heard nothing while the rest of its session did; and
# a retired join that hears from the responder tells it again there, at
# most every 200 ms.
#  - flows 2, up on both ends; the debug build's join_gone_lose makes it
#    lose the next four JOIN_GONEs, the first tell of each of the four
#    joins ftvctl probe opens (two shaped, two as they are);
#  - all four come up and four JOIN_GONEs are lost;
#  - with C pinging S, within 5 s S counts 2 flows up again, as C does,
#    and pings pass.
#
#   ns C (initiator)          ns R (router)              ns S (responder)
#   +--------------------+   +------------------------+  +--------------------+
#   | ftv0 10.9.0.1      |   | netem delay 10ms       |  | ftv0 10.9.0.2      |
#   |   flows 2          |   |   each way             |  |   :51820           |
#   | veth0 192.168.10.2 |---|                        |--| veth0 198.51.100.2 |
#   +--------------------+   +------------------------+  +--------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

ktap_plan 3
ftv_require
command -v tc >/dev/null || ktap_skip_all "tc is not installed"
ftv_use_debug_module

kmark=$(kmsg_mark)
paths_topology || ktap_bail "cannot set up the namespaces"
netem "$R" vethc delay 10ms
netem "$R" veths delay 10ms
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
C_KEY=$(pubkey_of c)
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 2 ||
	ktap_bail "ftvctl peer set ... flows 2 failed"
c_flows() { ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]'; }
s_flows() { ftv_peer_json "$S" ftv0 "$C_KEY" 'p["flows_up"]'; }
both_up() { [ "$(c_flows) $(s_flows)" = "2 2" ]; }
wait_for 20 both_up || ktap_bail "the join did not come up on both ends"

echo 4 >/sys/module/ftv/parameters/join_gone_lose
out=$(nsx "$C" "$FTVCTL" probe ftv0 "$S_KEY" --json 2>"$FTV_TMP/err")
ktap_diag "$(cat "$FTV_TMP/err")"
lost=$(dmesg_since "$kmark" | grep -c "JOIN_GONE for join [0-9]* lost")
ktap_eq "the probe's four joins came up, and their four JOIN_GONEs were lost" \
	"2/2 2/2 4" \
	"$(probe_field '"%d/%d %d/%d" % (m["openings"]["shaped"]["up"], m["openings"]["shaped"]["tried"], m["openings"]["as_is"]["up"], m["openings"]["as_is"]["tried"])') $lost"
echo 0 >/sys/module/ftv/parameters/join_gone_lose

# The responder asks about a join only while the peer speaks on another.
bg_ping "$C" 10.9.0.2 c
if wait_for 5 both_up; then
	ktap_ok "S hears again that they are gone: 2 flows up on each end within 5 s"
else
	ktap_fail "S hears again that they are gone: 2 flows up on each end within 5 s"
	ktap_diag "flows up: C $(c_flows), S $(s_flows)"
fi
bg_ping_stop c
ktap_diag "C's pings: $PING_GOT of $PING_SENT answered"
ktap_eq "pings pass" "ok" \
	"$(nsx "$C" ping -q -n -c 10 -i 0.2 -W 2 10.9.0.2 2>/dev/null | grep -q " 0% packet loss" && echo ok)"

ktap_finish
