#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Through a strict stateful middlebox. R masquerades C's traffic
# and drops what its conntrack finds invalid; it does not pick up
# connections mid-stream. C and S drop "ct state invalid" in input and
# output too. 100 MB go through the tunnel each way, intact, and none of
# those rules drops a packet. Then, with R's conntrack timeout for
# established TCP cut to 10 s and the module's renewal pushed out of the
# way, the tunnel is left idle for 30 s: an idle plain TCP
# connection's mapping expires on R meanwhile, the tunnel's does not
# (C's persistent keepalive every 4 s, S answering each), so S can reach
# C at once afterwards, over the same connection.
#
#   ns C (initiator)         ns R (router)                  ns S (responder)
#   +--------------------+  +--------------------------+   +--------------------+
#   | nc <-> 10.9.0.2    |  | forward: ct state        |   | nc <-> 10.9.0.1    |
#   | ftv0 10.9.0.1      |  |   invalid drop           |   | ftv0 10.9.0.2      |
#   |  keepalive 4 s     |  | postrouting: masquerade  |   |   :51820           |
#   | in/out: ct state   |  |   out of veths           |   | in/out: ct state   |
#   |   invalid drop     |  | tcp_loose=0, established |   |   invalid drop     |
#   |                    |  |   timeout 10 s           |   |                    |
#   | veth0 192.168.10.2 |--| vethc 192.168.10.1       |   |                    |
#   |                    |  | veths 198.51.100.1       |---| veth0 198.51.100.2 |
#   +--------------------+  +--------------------------+   +--------------------+
#
# UNDERLAY=6 (test_nat6.sh) dials S at [2001:db8:100::2]:51820 (R masquerades
# IPv6 the same way). NAT_MB (default 100) sets the transfer size and
# NAT_IDLE (default 30) the idle time in seconds; 0 leaves the idle part
# out.

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

UNDERLAY=${UNDERLAY:-4}
SIZE_MB=${NAT_MB:-100}
IDLE=${NAT_IDLE:-30}
CT_TIMEOUT=10
KEEPALIVE=4
PARAMS=/sys/module/ftv/parameters
U="(IPv$UNDERLAY underlay)"

for tool in nc nft conntrack; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
if [ "$IDLE" -gt 0 ]; then ktap_plan 11; else ktap_plan 6; fi
ftv_require
# The idle part moves the module's renewal out of the way; without it
# (test_nat6.sh) the module under test stays loaded, so that the script
# can run beside others.
[ "$IDLE" -gt 0 ] && ftv_use_debug_module

if [ "$UNDERLAY" = 6 ]; then
	r_pub=$R_PUB6
	ep_re='^\[2001:db8:100::1\]:[0-9]+$'
else
	r_pub=$R_PUB4
	ep_re='^198\.51\.100\.1:[0-9]+$'
fi

paths_topology || ktap_bail "cannot set up the namespaces"
paths_nat || ktap_bail "cannot set up NAT on R"
paths_strict_router || ktap_bail "cannot set up R's conntrack rules"
paths_strict_endpoints "$C" "$S" || ktap_bail "cannot set up the endpoints' rules"
nsx "$R" sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_established=$CT_TIMEOUT ||
	ktap_bail "cannot shorten R's conntrack timeout"
paths_ftv "$UNDERLAY" || ktap_bail "cannot configure ftv with ftvctl"
pub_c=$(pubkey_of c)

# R's conntrack entries for TCP to PORT, one per line
ct_entries()
{
	nsx "$R" conntrack -L -f "ipv$UNDERLAY" -p tcp --dport "$1" 2>/dev/null
}

# R's mapping of the tunnel: "C's port -> R's port", from its entry
tunnel_mapping()
{
	ct_entries "$FTV_PORT" |
		awk '{ n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^(sport|dport)=/) p[++n] = substr($i, 7); if (n >= 4) print p[1] " -> " p[4] }'
}

show_state()
{
	ktap_diag "R's conntrack:"
	nsx "$R" conntrack -L -f "ipv$UNDERLAY" 2>&1 | ktap_diag
	nsx "$C" "$FTVCTL" show ftv0 2>&1 | ktap_diag
	nsx "$S" "$FTVCTL" show ftv0 2>&1 | ktap_diag
}

if connect_ping "$C" 10.9.0.2; then
	ktap_ok "C reaches S through the NAT router with strict conntrack $U"
else
	ktap_fail "C reaches S through the NAT router with strict conntrack $U"
	show_state
	ktap_bail "no tunnel"
fi

ep=$(paths_endpoint_of "$S" ftv0 "$pub_c" 2>&1)
if [[ "$ep" =~ $ep_re ]]; then
	ktap_ok "S sees C at the router's public address ($ep)"
else
	ktap_fail "S sees C at the router's public address"
	ktap_diag "endpoint: $ep, expected $r_pub:port"
fi

# The router saw SYN, SYN-ACK and ACK and then data both ways: an entry
# in ESTABLISHED that conntrack has marked ASSURED (seen replies).
entry=$(ct_entries "$FTV_PORT")
if grep -q "ESTABLISHED.*\[ASSURED\]" <<<"$entry"; then
	ktap_ok "R tracks the tunnel as an established, assured TCP connection"
else
	ktap_fail "R tracks the tunnel as an established, assured TCP connection"
	ktap_diag "R's entries for port $FTV_PORT:"
	ktap_diag <<<"${entry:-(none)}"
fi

random_file data "$SIZE_MB"
if transfer "$C" "$S" 10.9.0.2 5001 "$FTV_TMP/data"; then
	ktap_ok "$SIZE_MB MB from C to S arrive intact"
else
	ktap_fail "$SIZE_MB MB from C to S arrive intact"
	show_state
fi
if transfer "$S" "$C" 10.9.0.1 5001 "$FTV_TMP/data"; then
	ktap_ok "$SIZE_MB MB from S to C arrive intact"
else
	ktap_fail "$SIZE_MB MB from S to C arrive intact"
	show_state
fi
rm -f "$FTV_TMP/data"

drops="R $(paths_invalid_drops "$R"), C $(paths_invalid_drops "$C"), S $(paths_invalid_drops "$S")"
ktap_eq "no packet dropped as invalid (router, client, server)" \
	"R 0, C 0, S 0" "$drops"
ktap_diag "ftv segments sent untracked: C $(paths_untracked "$C"), S $(paths_untracked "$S")"

[ "$IDLE" -gt 0 ] || ktap_finish

# ---- idle
# Renewal would open a new connection, and with it a new mapping, during
# the idle time; pushed out of the way, what keeps the mapping alive can
# only be the keepalives.
for p in reject_after_seconds rekey_after_seconds; do
	defer "echo $(cat "$PARAMS/$p") >$PARAMS/$p"
done
# The session began after this script did: it is at most $SECONDS old
# (past the transfers, on a slow debug kernel, more than IDLE * 5).
renew=$((SECONDS + IDLE * 5))
echo $((renew * 2)) >"$PARAMS/reject_after_seconds"
echo "$renew" >"$PARAMS/rekey_after_seconds"

# The control: a plain TCP connection from C to S outside the tunnel,
# left idle (nc -d reads nothing, so sends nothing). Once R has
# forgotten it, its FINs at the end are invalid to R: with few orphan
# retries its sockets, and so C's and S's namespaces, go away soon after.
for ns in "$C" "$S"; do
	nsx "$ns" sysctl -qw net.ipv4.tcp_orphan_retries=1
done
if [ "$UNDERLAY" = 6 ]; then s_pub=$S_PUB6; else s_pub=$S_PUB4; fi
ip netns exec "$S" nc -d -l 5002 >/dev/null 2>&1 &
bg_track $!
wait_for 10 transfer_listening "$S" 5002
ip netns exec "$C" nc -d "$s_pub" 5002 >/dev/null 2>&1 &
bg_track $!
control_up() { ct_entries 5002 | grep -q ESTABLISHED; }
wait_for 10 control_up || ktap_diag "the control connection did not come up"

before=$(tunnel_mapping)
ktap_diag "tunnel mapping on R before the idle: ${before:-none}"
mark=$(kmsg_mark)
ktap_diag "idle for $IDLE s; R forgets established TCP after $CT_TIMEOUT s"
# The idle time is what is being tested; there is nothing to poll.
sleep "$IDLE"

control=$(ct_entries 5002)
if [ -z "$control" ]; then
	ktap_ok "the idle control connection's mapping expired on R"
else
	ktap_fail "the idle control connection's mapping expired on R"
	ktap_diag "still there: $control"
fi

after=$(tunnel_mapping)
if [ -n "$after" ] && [ "$after" = "$before" ]; then
	ktap_ok "the tunnel's mapping survived the idle ($after)"
else
	ktap_fail "the tunnel's mapping survived the idle"
	ktap_diag "before: ${before:-none}, after: ${after:-none}"
	show_state
fi

# S's pings go to the mapping C's keepalives kept open.
ktap_check "S reaches C right after the idle" \
	nsx "$S" ping -c 3 -i 0.5 -W 2 10.9.0.1
ktap_check "C reaches S right after the idle" \
	nsx "$C" ping -c 3 -i 0.5 -W 2 10.9.0.2
ktap_eq "no new connection was needed" "" "$(paths_client_ports "$mark" | tr '\n' ' ')"

ktap_finish
