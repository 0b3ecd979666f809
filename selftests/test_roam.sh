#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Roaming: the initiator's outside address changes and the
# responder follows. Two changes, one after the other:
#  1. the NAT's public address changes (198.51.100.1 -> .3) and R loses
#     its state (conntrack flushed), as when a home router reconnects or
#     a CGNAT reassigns;
#  2. C's own address on its LAN changes (192.168.10.2 -> .3), as when a
#     laptop moves or its DHCP lease changes.
#
# How ftv roams: by reconnecting. A fake TCP connection is tied to its
# 4-tuple in every middlebox on the path, so a segment from a new address
# or port would be invalid state to them (R here drops mid-stream
# segments it has no state for, tcp_loose=0). After either change C's
# data goes unanswered; after 5 s C takes the path for dead and dials a
# new connection from where it is now (new source port, new handshake,
# new session). When S installs that session, its peer's endpoint becomes
# the address and port the new connection came from, and S's own traffic
# to C goes there. Checked: traffic flows again by itself, S's endpoint
# (`ftvctl show`, and "endpoint" in its JSON) is the new place, and S
# reaches C through it. A responder that moves is not covered: the
# initiator's configured endpoint is where it dials.
#
#   ns C (initiator)         ns R (router)                  ns S (responder)
#   +--------------------+  +--------------------------+   +--------------------+
#   | ftv0 10.9.0.1      |  | forward: ct state        |   | ftv0 10.9.0.2      |
#   |                    |  |   invalid drop           |   |   :51820           |
#   |                    |  | masquerade out of veths  |   |  peer C: endpoint  |
#   |                    |  | tcp_loose=0              |   |   learnt           |
#   | veth0 192.168.10.2 |--| vethc 192.168.10.1       |   |                    |
#   |   then .3 (2.)     |  | veths 198.51.100.1       |---| veth0 198.51.100.2 |
#   |                    |  |   then .3 (1.)           |   |                    |
#   +--------------------+  +--------------------------+   +--------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

for tool in nft conntrack; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 9
ftv_require

paths_topology || ktap_bail "cannot set up the namespaces"
paths_nat || ktap_bail "cannot set up NAT on R"
paths_strict_router || ktap_bail "cannot set up R's conntrack rules"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
pub_c=$(pubkey_of c)

show_state()
{
	ktap_diag "R's conntrack:"
	nsx "$R" conntrack -L 2>&1 | ktap_diag
	nsx "$C" "$FTVCTL" show ftv0 2>&1 | ktap_diag
	nsx "$S" "$FTVCTL" show ftv0 2>&1 | ktap_diag
}

elapsed()
{
	awk -v s="$1" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", e - s }'
}

# mapping SRC : the public address:port R maps C's connection from SRC to
mapping()
{
	nsx "$R" conntrack -L -p tcp -s "$1" --dport "$FTV_PORT" 2>/dev/null |
		awk '/ESTABLISHED/ { n = 0; for (i = 1; i <= NF; i++) { if ($i ~ /^dst=/) d[++n] = substr($i, 5); if ($i ~ /^dport=/) p[n] = substr($i, 7) } print d[2] ":" p[2] }' |
		tail -n 1
}

# moved DESC WANT : S follows C to its new place; WANT prints a regex
# for the endpoint S should show, once traffic flows again
moved()
{
	local desc=$1 wantfn=$2 start=$EPOCHREALTIME mark ep text want

	mark=$(kmsg_mark)
	if connect_ping "$C" 10.9.0.2 20; then
		ktap_ok "$desc: traffic flows again by itself"
		ktap_diag "after $(elapsed "$start"), C's new ports: $(paths_client_ports "$mark" | tr '\n' ' ')"
	else
		ktap_fail "$desc: traffic flows again by itself"
		show_state
	fi
	want=$($wantfn)
	ep=$(paths_endpoint_of "$S" ftv0 "$pub_c" 2>&1)
	if [[ "$ep" =~ $want ]]; then
		ktap_ok "$desc: S's endpoint for C is the new place ($ep)"
	else
		ktap_fail "$desc: S's endpoint for C is the new place"
		ktap_diag "endpoint: $ep, expected to match $want"
	fi
	text=$(nsx "$S" "$FTVCTL" show ftv0 2>&1)
	if grep -qx "  endpoint: $ep" <<<"$text"; then
		ktap_ok "$desc: ftvctl show prints it"
	else
		ktap_fail "$desc: ftvctl show prints it"
		ktap_diag <<<"$text"
	fi
	ktap_check "$desc: S reaches C there" \
		nsx "$S" ping -c 3 -i 0.2 -W 1 10.9.0.1
}

if connect_ping "$C" 10.9.0.2; then
	ktap_ok "C reaches S through the NAT ($(paths_endpoint_of "$S" ftv0 "$pub_c"))"
else
	ktap_fail "C reaches S through the NAT"
	show_state
	ktap_bail "no tunnel"
fi

# 1. The NAT's public address changes and its state is gone.
{ ip -n "$R" addr del "$R_PUB4/24" dev veths &&
	ip -n "$R" addr add 198.51.100.3/24 dev veths &&
	nsx "$R" conntrack -F 2>/dev/null; } ||
	ktap_bail "cannot change R's public address"
nat_address() { echo '^198\.51\.100\.3:[0-9]+$'; }
moved "the NAT's address changed" nat_address

# 2. C's own address changes.
{ ip -n "$C" addr del "$C_LAN4/24" dev veth0 &&
	ip -n "$C" addr add 192.168.10.3/24 dev veth0 &&
	ip -n "$C" route replace default via "$R_LAN4"; } ||
	ktap_bail "cannot change C's address"
# What S should see: R's mapping of the connection C opened from .3.
new_mapping()
{
	local m

	m=$(mapping 192.168.10.3)
	echo "^${m//./\\.}\$"
	[ -n "$m" ]
}
moved "C's address changed" new_mapping

ktap_finish
