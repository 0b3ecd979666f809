#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ftvctl probe against a censor that blocks the destination port the
# session rides (docs/design-probe.md, reach): R, 20 ms each way and
# strict conntrack, drops every SYN to S's address and listen port once
# the tunnel is up, so the connections the session has go on and no new
# one gets through, as a censor does that blocks a tuple for new flows.
#  - clean first: the probe's four joins from fresh source ports (two
#    opened shaped, two as they are) come up, and it finds nothing,
#    within 30 s and 5 MB;
#  - S has a second address A2, and C's peer both in its endpoint list
#    (which keeps a join up to the first); then the block: "port
#    blocked" alone, with the joins and the endpoint as evidence, the
#    join to A2 up; it recommends A2 as the endpoint, which --apply makes
#    current; no ping is lost meanwhile;
#  - C's peer back to the first address alone: "port blocked", and as
#    no other endpoint came up, "rotate off" (flows is 1 already), which
#    --apply sets; C then opens no connection and sends no SYN;
#  - the block lifted: the joins come up again, no verdict. By then the
#    session had lost eight joins in a row, more than the four numbers S
#    once expected ahead, after which no join came up any more (a
#    session's joins were spent until the next session); S now expects
#    sixteen.
#
#   ns C (initiator)          ns R (router, censor)              ns S (responder)
#   ftv0 10.9.0.1  ---  netem 20 ms each way; later:      ---  ftv0 10.9.0.2 :51820
#                       SYNs to 198.51.100.2:51820 dropped       A2 198.51.100.3

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

A2=198.51.100.3

ktap_plan 10
ftv_require
require_tools nft conntrack

paths_censor 20ms || ktap_bail "cannot set up the namespaces and R"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"

# ftvctl_probe [ARG] : ftvctl probe --json on C for S; stderr to $FTV_TMP/err
ftvctl_probe() { nsx "$C" "$FTVCTL" probe ftv0 "$S_KEY" --json "$@" 2>"$FTV_TMP/err"; }
joins() { probe_field '" ".join("%s:%s" % (j["endpoint"], j["up"]) for j in r["measurements"]["reach"]["joins"])'; }

# ---- clean
out=$(ftvctl_probe)
ktap_diag "clean: $out"
# fresh UP : the reach step's four joins to A1 from fresh ports, all UP
fresh() { echo "$S_PUB4:$FTV_PORT:$1 $S_PUB4:$FTV_PORT:$1 $S_PUB4:$FTV_PORT:$1 $S_PUB4:$FTV_PORT:$1"; }
ktap_eq "clean: the joins from fresh ports came up, no verdict" \
	"$(fresh True) none" "$(joins) $(verdicts)"
ktap_eq "clean: within 30 s and 5 MB" True "$(cost_ok)"

# ---- a list of two addresses, the first blocked for new connections
ip -n "$S" addr add "$A2/24" dev veth0 || ktap_bail "cannot give S a second address"
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" \
	endpoint "$S_PUB4:$FTV_PORT, $A2:$FTV_PORT" ||
	ktap_bail "ftvctl peer set ... endpoint A1,A2 failed"
two_up() { [ "$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]')" = 2 ]; }
wait_for 10 two_up || ktap_diag "the list's join did not come up"
nsx "$R" nft -f - <<NFT || ktap_bail "cannot block the port on R"
table ip block {
	chain forward {
		type filter hook forward priority filter - 10; policy accept;
		ip daddr $S_PUB4 tcp dport $FTV_PORT tcp flags & (syn | ack) == syn counter drop
	}
}
NFT
bg_ping "$C" 10.9.0.2 list
out=$(ftvctl_probe --apply)
bg_ping_stop list
ktap_diag "list: $out"
ktap_diag "$(cat "$FTV_TMP/err")"
ktap_eq "list: port blocked alone, the join to A2 up; it recommends A2" \
	"port blocked $A2:$FTV_PORT:True $(fresh False) endpoint $A2:$FTV_PORT" \
	"$(verdicts) $(joins) $(probe_field 'r["recommended"]')"
evidence=$(probe_field '[v["evidence"] for v in r["verdicts"]][0]')
if [[ $evidence =~ ^4\ joins\ from\ fresh\ source\ ports\ to\ $S_PUB4:$FTV_PORT\ got\ no\ answer\ in\ 2\.5\ s,\ while\ the\ session\'s\ connection\ answered\ in\ [0-9]+\ ms\;\ one\ to\ $A2:$FTV_PORT\ came\ up\ in\ [0-9]+\ ms$ ]]; then
	ktap_ok "list: its evidence names the joins, the endpoints and the answer"
else
	ktap_fail "list: its evidence names the joins, the endpoints and the answer"
	ktap_diag "$evidence"
fi
ktap_eq "list: --apply made A2 the current endpoint" "$A2:$FTV_PORT" \
	"$(paths_endpoint_of "$C" ftv0 "$S_KEY")"
ktap_eq "list: within 30 s and 5 MB, no ping lost" "True 0" \
	"$(cost_ok) $((PING_SENT - PING_GOT > 1 ? PING_SENT - PING_GOT - 1 : 0))"

# ---- the first address alone: no other endpoint to go to
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" endpoint "$S_PUB4:$FTV_PORT" ||
	ktap_bail "ftvctl peer set ... endpoint A1 failed"
mark=$(kmsg_mark)
out=$(ftvctl_probe --apply)
ktap_diag "alone: $out"
ktap_diag "$(cat "$FTV_TMP/err")"
ktap_eq "alone: port blocked, no other endpoint; it recommends rotate off, and --apply set it" \
	"port blocked rotate off off" \
	"$(verdicts) $(probe_field 'r["recommended"]') $(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["rotate"]')"
evidence=$(probe_field '[v["evidence"] for v in r["verdicts"]][0]')
ktap_eq "alone: the evidence says why nothing else is recommended" True \
	"$([[ $evidence == *"; the peer has no other endpoint: a new session needs a new connection too" ]] && echo True)"

# The probe's joins, never answered, are given up 3 s after they went.
joins_gone()
{
	local port log
	log=$(dmesg_since "$mark")
	for port in $(paths_client_ports "$mark"); do
		grep -q "connection $port:$FTV_PORT destroyed" <<<"$log" || return 1
	done
}
wait_for 15 joins_gone || ktap_diag "the probe's joins are still there"
syns=$(nft_packets "$R" "ip block")
mark=$(kmsg_mark)
pings_pass() { ip netns exec "$C" ping -q -n -c 10 -i 0.2 -W 2 10.9.0.2 2>/dev/null | grep -q " 0% packet loss"; }
ktap_eq "alone: after the apply 10 pings pass, and C sends no SYN" \
	"ok $syns 0" \
	"$(pings_pass && echo ok) $(nft_packets "$R" "ip block") $(paths_client_ports "$mark" | wc -l)"

# ---- the block lifted
nsx "$R" nft delete table ip block || ktap_diag "cannot lift the block"
out=$(ftvctl_probe)
ktap_diag "unblocked: $out"
ktap_eq "unblocked: the joins from fresh ports come up again, no verdict" \
	"$(fresh True) none" "$(joins) $(verdicts)"

ktap_finish
