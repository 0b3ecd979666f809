#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Junk on one peer's tuple. An attacker who knows the addresses and ports
# of A1's connection, but not its sequence numbers, sends B segments on it
# as fast as a raw socket goes (random sequence numbers, 1,200 to 1,400
# random bytes, correct checksums) for 8 s, while A2 pings B. B refuses
# a segment whose sequence number lies more than twice the window from
# what has arrived before any decryption (out_of_window), and no one
# connection may hold more than half of the device's crypt queue. Checked:
# nearly all the junk is refused that way (at most 2 % reaches the AEAD
# and fails as bad_auth), A2 loses none of 200 pings, and A1's tunnel
# still works afterwards.
#
#   ns A1 (initiator + attacker)  ns A2 (initiator)       ns B (responder)
#   +------------------------+   +-------------------+   +------------------+
#   | ftv0 10.9.0.11         |   | ftv0 10.9.0.12    |   | ftv0 10.9.0.2    |
#   | junk_send.py on A1's     |   | ping 10.9.0.2     |   |   :51820         |
#   |   connection's tuple   |   |                   |   |                  |
#   | veth0 10.0.1.1 --------|---|-------------------|---| veth1 10.0.1.2   |
#   |                        |   | veth0 10.0.2.1 ---|---| veth2 10.0.2.2   |
#   +------------------------+   +-------------------+   +------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

JUNK="$FTV_ROOT/selftests/lib/junk_send.py"
JUNK_S=8
PINGS=200

ktap_plan 4
ftv_require

star_ftv 2 || ktap_bail "cannot set up A1, A2 and B"
pub_a1=$(pubkey_of a1)
endpoint=$(ftv_peer_json "$B" ftv0 "$pub_a1" 'p["endpoint"]')
port=${endpoint##*:}
[[ "$port" =~ ^[0-9]+$ ]] || ktap_bail "no endpoint of A1's at B ($endpoint)"
ktap_diag "A1's connection: 10.0.1.1:$port -> 10.0.1.2:$FTV_PORT"

drop_count() { ftv_peer_json "$B" ftv0 "$pub_a1" "p[\"drops\"].get(\"$1\", 0)"; }
window0=$(drop_count out_of_window)
auth0=$(drop_count bad_auth)

nsx "$A1" "$PYTHON" "$JUNK" 10.0.1.1 10.0.1.2 "$port" "$FTV_PORT" "$JUNK_S" \
	>"$FTV_TMP/junk.out" 2>&1 &
junk=$!
bg_track "$junk"
out=$(nsx "$A2" ping -q -c "$PINGS" -i 0.02 -W 1 10.9.0.2 2>&1)
wait "$junk"
sent=$(cat "$FTV_TMP/junk.out")
[[ "$sent" =~ ^[0-9]+$ ]] || ktap_bail "junk_send.py failed: $sent"
window=$(($(drop_count out_of_window) - window0))
auth=$(($(drop_count bad_auth) - auth0))
ktap_diag "junk sent: $sent; refused out of window: $window; failed authentication: $auth"

ktap_result "junk on A1's tuple is refused before decryption ($window of $sent out of window)" \
	"$([ "$window" -ge $((sent * 95 / 100)) ]; echo $?)"
ktap_result "at most 2 % of it reaches the AEAD ($auth failed authentication)" \
	"$([ "$auth" -le $((sent / 50 + 1)) ]; echo $?)"
lost=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' <<<"$out")
ktap_eq "A2 loses none of $PINGS pings meanwhile" 0 "${lost:-?}"
ktap_check "A1's tunnel still works" connect_ping "$A1" 10.9.0.2 10

ktap_finish
