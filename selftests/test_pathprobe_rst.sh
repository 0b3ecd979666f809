#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ftvctl probe against a censor that injects resets (docs/design-probe.md,
# resets): R lets a connection to S's listen port carry 40 segments, then
# sends an in-window RST to each end, as the peer would (forgetcp.py: the
# tunnel's 4-tuple and next sequence number, caught on the wire), with
# its own TTL (40 to S, 41 to C, where the real segments arrive with 63)
# and out of its interfaces, so that its own conntrack never sees them.
# ftv ignores both and counts them; the probe must say "injected resets"
# and nothing else, with the TTLs that show something on the path sent
# them, recommend no setting for it, and take at most 30 s and 5 MB. The
# tunnel goes on meanwhile on the connection it had. A second round
# without the injector (a new session, counters at 0) must give no
# verdict at all.
#
#   ns C (initiator)          ns R (router, censor)              ns S (responder)
#   ftv0 10.9.0.1  ---  netem 20 ms each way; after 40    ---  ftv0 10.9.0.2
#                             segments to :51820, a RST to           :51820
#                             S (TTL 40) and one to C (TTL 41)

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

FORGE="$FTV_ROOT/selftests/lib/forgetcp.py"
AFTER=40

ktap_plan 8
ftv_require
require_tools nft conntrack

paths_censor 20ms || ktap_bail "cannot set up the namespaces and R"
nsx "$R" nft -f - <<NFT || ktap_bail "cannot count the tunnel's segments on R"
table ip watch {
	chain forward {
		type filter hook forward priority filter - 10; policy accept;
		ip daddr $S_PUB4 tcp dport $FTV_PORT counter
	}
}
NFT
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
C_KEY=$(pubkey_of c)
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"

# ftvctl_probe : ftvctl probe --json on C for S
ftvctl_probe() { nsx "$C" "$FTVCTL" probe ftv0 "$S_KEY" --json; }
segments() { nft_packets "$R" "ip watch"; }
past() { [ "$(segments)" -ge "$1" ]; }

# ---- the injector: after $AFTER segments, a RST to each end
mark=$(kmsg_mark)
bg_ping "$C" 10.9.0.2 injected
if wait_for 30 past "$AFTER" &&
   sent_s=$(nsx "$R" "$PYTHON" "$FORGE" veths rst src="$C_LAN4" \
	dst="$S_PUB4" dport="$FTV_PORT" ttl=40 ipid=4242 2>&1) &&
   sent_c=$(nsx "$R" "$PYTHON" "$FORGE" vethc rst src="$S_PUB4" \
	sport="$FTV_PORT" ttl=41 ipid=4243 2>&1); then
	ktap_ok "after $AFTER segments R injected a RST to S and one to C"
else
	ktap_fail "after $AFTER segments R injected a RST to S and one to C"
fi
ktap_diag "$(segments) segments; ${sent_s:-} ${sent_c:-}"
ignored() { [ "$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["drops"].get("rst", 0)')" -ge 1 ]; }
wait_for 5 ignored || ktap_diag "C did not count the RST it ignored"
bg_ping_stop injected
# Before the probe, whose reach step opens joins of its own.
ports=$(paths_client_ports "$mark" | tr '\n' ' ')

# ---- the probe
out=$(ftvctl_probe)
ktap_diag "$out"
ktap_eq "the probe says injected resets, alone" "injected resets" "$(verdicts)"
ktap_eq "its evidence: a RST at each end, TTLs unlike the peer's segments" \
	"this end counted 1 RST, the last with TTL 41 where the peer's segments come with 63: something on the path sent it; the peer saw one on this end's connections, with TTL 40 where this end's segments come with 63: something on the path sent it" \
	"$(probe_field '[v["evidence"] for v in r["verdicts"] if v["name"] == "injected resets"][0]')"
ktap_eq "it recommends no setting for them" "" "$(probe_field 'r["recommended"] or ""')"
ktap_eq "within 30 s and 5 MB" True \
	"$(probe_field 'r["seconds"] <= 30 and r["bytes"] < 5000000')"
ktap_eq "no ping lost meanwhile, and C opened no new connection" \
	"0 " "$((PING_SENT - PING_GOT > 1 ? PING_SENT - PING_GOT - 1 : 0)) $ports"

# ---- without the injector: a new session, its counters at 0
if ! { nsx "$C" "$FTVCTL" peer del ftv0 "$S_KEY" &&
	nsx "$S" "$FTVCTL" peer del ftv0 "$C_KEY" && paths_ftv_server &&
	nsx "$C" "$FTVCTL" peer add ftv0 "$S_KEY" endpoint "$(paths_endpoint 4)" \
		allowed-ips 10.9.0.2/32; }; then
	ktap_bail "cannot add the peers again"
fi
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel the second time"
out=$(ftvctl_probe)
ktap_diag "clean: $out"
ktap_eq "clean: no verdict" none "$(verdicts)"
ktap_eq "clean: within 30 s and 5 MB" True \
	"$(probe_field 'r["seconds"] <= 30 and r["bytes"] < 5000000')"

ktap_finish
