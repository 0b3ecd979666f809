#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What each end can do is not taken from bytes anyone on the path can
# change. R rewrites the first 8 bytes of the padding of both handshake
# messages to zeros (nftables on R's forward path, shaping off on both
# ends so that the padding lies where it was put): the initiation is C's
# third segment of the connection, the response S's second. The handshake
# authenticates nothing in the padding, so the tunnel comes up as always;
# and forward error correction is still negotiated on both ends, because
# each says it knows FEC in its first sealed message (its hello), not in
# the padding, where an earlier version put a tag that this rewriting
# took away.
#
# Then C opens a new connection and R drops both hellos: C's fourth
# segment of the connection (after SYN, ACK and the initiation) and S's
# third (after SYN-ACK and the response). Nothing acknowledges a sealed
# message, so each end says it again with its loss reports' rhythm until
# the peer shows that it heard; after a few hundred pings both ends' FEC
# is active. (An earlier version said it once: a lossy path that lost a
# hello left that connection without repairs for its whole life.)
#
#   ns C (initiator)         ns R (router)                  ns S (responder)
#   +--------------------+  +--------------------------+   +--------------------+
#   | ftv0 10.9.0.1      |  | forward: zero the first  |   | ftv0 10.9.0.2      |
#   |   shape off        |  |   8 bytes of padding of  |   |   :51820, shape off|
#   |                    |  |   the initiation and the |   |                    |
#   |                    |  |   response               |   |                    |
#   | veth0 192.168.10.2 |--| vethc 192.168.10.1       |   |                    |
#   |                    |  | veths 198.51.100.1       |---| veth0 198.51.100.2 |
#   +--------------------+  +--------------------------+   +--------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

# Bits into the TCP header where each message's padding starts: a 32-byte
# header (timestamps), then the 108-byte initiation or 48-byte response.
INIT_PAD_BIT=$(((32 + 108) * 8))
RESP_PAD_BIT=$(((32 + 48) * 8))

command -v nft >/dev/null || ktap_skip_all "nft is not installed"
ktap_plan 7
ftv_require

paths_topology || ktap_bail "cannot set up the namespaces"
nsx "$R" sysctl -qw net.netfilter.nf_conntrack_acct=1 2>/dev/null
nsx "$R" nft -f - <<NFT || ktap_bail "cannot load R's rules"
table inet strip {
	chain forward {
		type filter hook forward priority mangle; policy accept;
		tcp dport $FTV_PORT ct original packets 3 @th,$INIT_PAD_BIT,64 set 0 counter
		tcp sport $FTV_PORT ct reply packets 2 @th,$RESP_PAD_BIT,64 set 0 counter
	}
}
NFT
# The accounting sysctl exists once nft's ct expression loaded conntrack.
nsx "$R" sysctl -qw net.netfilter.nf_conntrack_acct=1 ||
	ktap_bail "cannot turn on conntrack accounting on R"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
for ns in "$C" "$S"; do
	nsx "$ns" "$FTVCTL" set ftv0 shape off || ktap_bail "cannot turn shaping off"
done
pub_c=$(pubkey_of c)
pub_s=$(pubkey_of s)
# counted TABLE : packets the counters of R's nft table TABLE counted
counted()
{
	nsx "$R" nft list table inet "$1" |
		awk '/counter/ { for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }'
}

if connect_ping "$C" 10.9.0.2; then
	ktap_ok "the tunnel comes up through the rewriting router"
else
	ktap_fail "the tunnel comes up through the rewriting router"
	ktap_bail "no tunnel"
fi
rewritten=$(counted strip)
ktap_result "R rewrote the padding of both handshake messages ($rewritten)" \
	"$([ "$rewritten" -ge 2 ]; echo $?)"
# active NS PUBKEY : NS's FEC toward that peer is on
active() { [ "$(ftv_peer_json "$1" ftv0 "$2" 'p["fec_stats"]["active"]')" = True ]; }
ktap_check "C's FEC toward S is active" wait_for 5 active "$C" "$pub_s"
ktap_check "S's FEC toward C is active" wait_for 5 active "$S" "$pub_c"

# ---- both hellos lost
nsx "$R" nft -f - <<NFT || ktap_bail "cannot load R's dropping rules"
delete table inet strip
table inet lose {
	chain forward {
		type filter hook forward priority mangle; policy accept;
		tcp dport $FTV_PORT ct original packets 4 counter drop
		tcp sport $FTV_PORT ct reply packets 3 counter drop
	}
}
NFT
nsx "$C" "$FTVCTL" peer del ftv0 "$pub_s" || ktap_bail "cannot remove S on C"
nsx "$C" "$FTVCTL" peer add ftv0 "$pub_s" endpoint "$(paths_endpoint 4)" \
	allowed-ips 10.9.0.2/32 || ktap_bail "cannot add S back on C"
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel after the peer came back"
dropped=$(counted lose)
ktap_result "R dropped both hellos of the new connection ($dropped)" \
	"$([ "$dropped" -ge 2 ]; echo $?)"
# Loss intervals end on what arrives: some hundreds of messages each way.
nsx "$C" ping -q -f -c 600 10.9.0.2 >/dev/null ||
	ktap_diag "the pings did not all come back"
ktap_check "C's FEC toward S is active, its hello lost" wait_for 5 active "$C" "$pub_s"
ktap_check "S's FEC toward C is active, its hello lost" wait_for 5 active "$S" "$pub_c"

ktap_finish
