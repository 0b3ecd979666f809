#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer configured with the wrong public key gets nowhere: B expects a
# random key instead of A's, so A's key exchange must fail and nothing
# reaches B's inner network.
#
#   ns A (initiator, real key a)               ns B (responder)
#   +----------------------------+            +----------------------------+
#   | ftv0 10.9.0.1/24           |            | ftv0 10.9.0.2/24           |
#   |  peer B: key b, endpoint   |            |  peer "A": some other key  |
#   | veth0 10.0.0.1/24          |------------| veth0 10.0.0.2/24 :51820   |
#   +----------------------------+            +----------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

ktap_plan 6
ftv_require

pair_underlay 4 || ktap_bail "cannot set up the underlay"
ftv_keypair wrong || ktap_bail "ftvctl genkey/pubkey failed"
B_PEER_KEY=$(pubkey_of wrong)
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"

out=$(nsx "$A" ping -c 3 -W 1 10.9.0.2 2>&1)
if grep -q "100% packet loss" <<<"$out"; then
	ktap_ok "ping A -> B: 100% loss"
else
	ktap_fail "ping A -> B: 100% loss"
	ktap_diag <<<"$out"
fi

pub_b=$(pubkey_of b)
ktap_eq "A's peer shows no handshake" 0 \
	"$(ftv_peer_json "$A" ftv0 "$pub_b" 'p["last_handshake"]' 2>&1)"
ktap_eq "B's peer shows no handshake" 0 \
	"$(ftv_peer_json "$B" ftv0 "$B_PEER_KEY" 'p["last_handshake"]' 2>&1)"
ktap_eq "A's peer received no data (rx_bytes 0)" 0 \
	"$(ftv_peer_json "$A" ftv0 "$pub_b" 'p["rx_bytes"]' 2>&1)"
rx=$(nsx "$B" cat /sys/class/net/ftv0/statistics/rx_packets)
ktap_eq "nothing came out of B's ftv0 (rx_packets 0)" 0 "$rx"
# What fails authentication is counted somewhere.
drops=$(ftv_json "$B" ftv0 'sum(d["drops"].values()) + sum(sum(p["drops"].values()) for p in d["peers"])' 2>&1)
if [[ "$drops" =~ ^[0-9]+$ ]] && [ "$drops" -gt 0 ]; then
	ktap_ok "B counts the rejected key exchange in its drops"
else
	ktap_fail "B counts the rejected key exchange in its drops"
	ktap_diag "total drops on B: $drops"
	nsx "$B" "$FTVCTL" show ftv0 2>&1 | ktap_diag
fi

ktap_finish
