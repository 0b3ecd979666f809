#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Pre-shared keys: with different pre-shared keys on the two ends
# there is no session on either side. The pre-shared key is part of the
# SYN token (module/token.c), so B's ftv does not even take A's SYNs: they
# fall through to B's host, which resets them, as for any stranger. With
# the same key the tunnel comes up.
#
#   ns A (initiator, psk 1 then 2)             ns B (responder, psk 2)
#   +---------------------------+             +---------------------------+
#   | ftv0 10.9.0.1/24          |             | ftv0 10.9.0.2/24          |
#   | veth0 10.0.0.1/24         |-------------| veth0 10.0.0.2/24 :51820  |
#   +---------------------------+             +---------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

ktap_plan 6
ftv_require
command -v tcpdump >/dev/null || ktap_skip_all "tcpdump is not installed"

pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir
(umask 077 && "$FTVCTL" genpsk >"$FTV_TMP/psk1" && "$FTVCTL" genpsk >"$FTV_TMP/psk2") ||
	ktap_bail "ftvctl genpsk failed"
pub_a=$(pubkey_of a)
pub_b=$(pubkey_of b)
{ nsx "$A" "$FTVCTL" peer set ftv0 "$pub_b" preshared-key "$FTV_TMP/psk1" &&
	nsx "$B" "$FTVCTL" peer set ftv0 "$pub_a" preshared-key "$FTV_TMP/psk2"; } ||
	ktap_bail "cannot set the pre-shared keys"

capture "$B" veth0 "$FTV_TMP/b.pcap" "tcp port $FTV_PORT" ||
	ktap_bail "tcpdump did not start"
nsx "$A" ping -q -c 1 -W 1 10.9.0.2 >/dev/null 2>&1
count() { tcpdump -n -r "$FTV_TMP/b.pcap" "$1" 2>/dev/null | wc -l; }
reset() { [ "$(count 'src host 10.0.0.2 and tcp[tcpflags] & tcp-rst != 0')" -gt 0 ]; }
if wait_for 20 reset; then
	ktap_eq "B's host, not ftv, answers A's SYNs made with another pre-shared key: RST, no SYN-ACK" \
		0 "$(count 'src host 10.0.0.2 and tcp[tcpflags] & (tcp-syn|tcp-ack) == (tcp-syn|tcp-ack)')"
else
	ktap_fail "B's host, not ftv, answers A's SYNs made with another pre-shared key: RST, no SYN-ACK"
	tcpdump -n -r "$FTV_TMP/b.pcap" 2>&1 | tail -n 5 | ktap_diag
fi
capture_stop
ktap_check_fails "no ping gets through with mismatched keys" \
	nsx "$A" ping -q -c 3 -W 1 10.9.0.2
ktap_eq "no handshake on either side" "0 0" \
	"$(ftv_peer_json "$A" ftv0 "$pub_b" 'p["last_handshake"]') $(ftv_peer_json "$B" ftv0 "$pub_a" 'p["last_handshake"]')"
ktap_eq "nothing came out of B's ftv0" 0 \
	"$(nsx "$B" cat /sys/class/net/ftv0/statistics/rx_packets)"

nsx "$A" "$FTVCTL" peer set ftv0 "$pub_b" preshared-key "$FTV_TMP/psk2" ||
	ktap_bail "cannot change A's pre-shared key"
ktap_check "with the same pre-shared key the tunnel comes up" \
	connect_ping "$A" 10.9.0.2
handshake=$(ftv_peer_json "$B" ftv0 "$pub_a" 'p["last_handshake"]')
if [ "${handshake:-0}" -gt 0 ]; then
	ktap_ok "B now shows a handshake"
else
	ktap_fail "B now shows a handshake"
fi

ktap_finish
