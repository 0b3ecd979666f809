#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# SYN tokens at a rate, and with many pre-shared keys. The
# security review of 891c642 found the SYN replay cache full at about 29
# SYNs a second, after which genuine reconnects were refused, and a SYN's
# check costing one SipHash per distinct pre-shared key and clock step.
# Now the cache remembers a token only while it can pass the clock check,
# in 1 MiB, and a SYN of a PSK peer names its key by a masked tag. Here B
# has one peer without a pre-shared key and 500 with one each:
#
#  1. 3,000 SYNs with tokens, from 3,000 ports, at 1,000 a second: every
#     one gets a SYN-ACK, and each of 300 of them sent again gets none;
#  2. SYNs with the token of one of the 500 pre-shared keys get SYN-ACKs,
#     and SYNs with a token for a key B does not have get none;
#  3. once the only peer without a pre-shared key is gone, SYNs with a
#     token made without one get none: knowing B's public key is no longer
#     enough to make B's module answer.
#
#   ns A (sends SYNs: syn_rate_sender.py)     ns B (ftv0 listens on 51820)
#   +---------------------------+    +-------------------------------+
#   | veth0 10.0.0.1            |----| veth0 10.0.0.2                |
#   +---------------------------+    | 1 peer without PSK, 500 with  |
#                                    +-------------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

SYN="$FTV_ROOT/selftests/lib/syn_rate_sender.py"
PSK_PEERS=500

ktap_plan 7
ftv_require

pair_underlay 4 || ktap_bail "cannot set up the underlay"
{ ftv_keypair b && ftv_keypair a; } || ktap_bail "cannot make keys"
ftv_dev "$B" 2 || ktap_bail "cannot create B's ftv0"
tmpdir
# B's configuration: A without a PSK, then 500 peers with one each.
"$PYTHON" - "$FTV_TMP" "$(pubkey_of a)" "$PSK_PEERS" <<'PY' ||
import base64, os, sys
tmp, a, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(os.path.join(tmp, "b.key")) as f:
    priv = f.read().strip()
lines = ["[Interface]", "PrivateKey = " + priv, "ListenPort = 51820", "",
         "[Peer]", "PublicKey = " + a, "AllowedIPs = 10.9.0.1/32"]
for i in range(n):
    psk = base64.b64encode(os.urandom(32)).decode()
    if i == n // 2:
        with open(os.path.join(tmp, "psk"), "w") as f:
            f.write(psk + "\n")
    lines += ["", "[Peer]",
              "PublicKey = " + base64.b64encode(os.urandom(32)).decode(),
              "PresharedKey = " + psk]
with open(os.path.join(tmp, "b.conf"), "w") as f:
    f.write("\n".join(lines) + "\n")
with open(os.path.join(tmp, "other.psk"), "w") as f:
    f.write(base64.b64encode(os.urandom(32)).decode() + "\n")
PY
	ktap_bail "cannot write B's configuration"
nsx "$B" "$FTVCTL" setconf ftv0 "$FTV_TMP/b.conf" ||
	ktap_bail "cannot configure B"
pub_b=$(pubkey_of b)

# syns N RATE [ARGS...] : "sent N in T s answered A replayed R answered X"
syns()
{
	nsx "$A" "$PYTHON" "$SYN" 10.0.0.1 10.0.0.2 "$FTV_PORT" "$pub_b" "$@"
}
field()
{
	awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' <<<"$2"
}

# where_lost : what could have kept a SYN from ftv or its answer from A:
# the CPUs' backlog drops (softnet_stat), B's cable, B's ftv drop counters
where_lost()
{
	local drops=0 col

	while read -r _ col _; do
		drops=$((drops + 16#$col))
	done </proc/net/softnet_stat
	echo "backlog drops $drops;" \
		"B's veth0 rx dropped $(nsx "$B" cat /sys/class/net/veth0/statistics/rx_dropped);" \
		"B's ftv0 drops $(ftv_json "$B" ftv0 'd.get("drops", {})')"
}

ktap_diag "before: $(where_lost)"
out=$(syns 3000 1000 replay=300)
ktap_diag "$out"
ktap_diag "after: $(where_lost)"
sent_in=$(field in "$out")
read -r answered replayed_answered < <(awk '{ print $7, $11 }' <<<"$out")
ktap_eq "all 3000 SYNs at 1000 a second get a SYN-ACK (sent in ${sent_in} s)" 3000 "$answered"
ktap_eq "none of the 300 sent again gets one" 0 "$replayed_answered"

out=$(syns 50 100 psk="$FTV_TMP/psk")
ktap_diag "$out"
ktap_eq "SYNs with one of the $PSK_PEERS pre-shared keys get SYN-ACKs" 50 \
	"$(awk '{ print $7 }' <<<"$out")"
out=$(syns 50 100 psk="$FTV_TMP/other.psk")
ktap_eq "SYNs with a pre-shared key B does not have get none" 0 \
	"$(awk '{ print $7 }' <<<"$out")"

out=$(syns 50 100)
ktap_eq "while A has no pre-shared key, SYNs without one get SYN-ACKs" 50 \
	"$(awk '{ print $7 }' <<<"$out")"
ktap_check "B removes A, its only peer without a pre-shared key" \
	nsx "$B" "$FTVCTL" peer del ftv0 "$(pubkey_of a)"
out=$(syns 50 100)
ktap_eq "then SYNs without a pre-shared key get none" 0 \
	"$(awk '{ print $7 }' <<<"$out")"

ktap_finish
