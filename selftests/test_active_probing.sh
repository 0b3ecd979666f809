#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Probing resistance (issue 8): B's listen port takes only SYNs that carry
# a valid, fresh token (module/token.c) and the segments of connections it
# accepted; everything else goes to B's own TCP stack.
#  - With nothing listening, a plain connect from a stranger is refused by
#    the host (RST), as at any closed port.
#  - With an HTTP server on the same port, curl gets its page while the
#    tunnel, opened after the server started, carries a transfer.
#  - A genuine SYN of A's, replayed from the stranger's address or from
#    A's own, opens no ftv connection; from the stranger it gets the host's
#    RST, not a SYN-ACK.
#  - B counts each SYN to its listen port that it left to the host
#    (syn_refused): the stranger's, and the replay from the stranger's
#    address (the replay from A's own address lands on A's live
#    connection, which ignores a SYN).
#  - A's SYNs carry tokens that selftests/lib/ftvtoken.py (written from
#    docs/protocol.md) finds valid under B's public key, and the ISNs and
#    timestamp values of many SYNs look random bit by bit.
#
#   ns A (initiator)                             ns B (responder)
#   +-------------------------------+            +-------------------------------+
#   | ftv0 10.9.0.1/24              |            | ftv0 10.9.0.2/24              |
#   | veth0 10.0.0.1/24: tunnel     |------------| veth0 10.0.0.2/24 :51820      |
#   |       10.0.0.3/24: stranger   |            |  python3 -m http.server 51820 |
#   |  curl, nc, ftvpkt.py          |            |  tcpdump                      |
#   +-------------------------------+            +-------------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

PKT="$FTV_ROOT/selftests/lib/ftvpkt.py"
TOKEN="$FTV_ROOT/selftests/lib/ftvtoken.py"
FAKE_PEERS=48

ktap_plan 11
ftv_require
for tool in nc curl tcpdump; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done

pair_underlay 4 || ktap_bail "cannot set up the underlay"
ip -n "$A" addr add 10.0.0.3/24 dev veth0 || ktap_bail "no stranger address"
tmpdir

# ---- a closed port: B's ftv0 is configured, nothing else listens
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
if ! out=$(nsx "$A" nc -z -v -w 3 -s 10.0.0.3 10.0.0.2 "$FTV_PORT" 2>&1) &&
   grep -q "refused" <<<"$out"; then
	ktap_ok "a stranger's connect to the listen port is refused by the host"
else
	ktap_fail "a stranger's connect to the listen port is refused by the host"
	ktap_diag "$out"
fi
# refused : B's count of SYNs it left to the host (a zero is left out)
refused() { ftv_json "$B" ftv0 'd["drops"].get("syn_refused", 0)'; }
refused_connect=$(refused)
ktap_result "B counts the stranger's SYN as refused (syn_refused $refused_connect)" \
	"$([ "${refused_connect:-0}" -ge 1 ]; echo $?)"

# ---- an HTTP server on the same port, started before the tunnel opens
mkdir -p "$FTV_TMP/www"
echo "hello from B's web server $RANDOM" >"$FTV_TMP/www/index.html"
ip netns exec "$B" "$PYTHON" -m http.server "$FTV_PORT" --bind 10.0.0.2 \
	--directory "$FTV_TMP/www" >"$FTV_TMP/http.log" 2>&1 &
http=$!
bg_track "$http"
serving() { nsx "$B" ss -Hltn "sport = :$FTV_PORT" | grep -q .; }
wait_for 30 serving || ktap_bail "the HTTP server did not start"

capture "$B" veth0 "$FTV_TMP/b.pcap" "tcp port $FTV_PORT" ||
	ktap_bail "tcpdump did not start"

connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel with a web server on the port"
ktap_ok "the tunnel opens on a port a web server listens on"

random_file data 8
transfer "$A" "$B" 10.9.0.2 5001 "$FTV_TMP/data" 120 >"$FTV_TMP/transfer.out" &
xpid=$!
pages=0
for i in 1 2 3 4 5; do
	page=$(nsx "$A" curl -s --max-time 5 --interface 10.0.0.3 \
		"http://10.0.0.2:$FTV_PORT/index.html")
	[ "$page" = "$(cat "$FTV_TMP/www/index.html")" ] && pages=$((pages + 1))
done
ktap_eq "curl gets the web server's page (5 of 5) during the transfer" 5 "$pages"
if wait "$xpid"; then
	ktap_ok "the transfer through the tunnel arrived intact meanwhile"
else
	ktap_fail "the transfer through the tunnel arrived intact meanwhile"
	ktap_diag <"$FTV_TMP/transfer.out"
fi

capture_stop
kill "$http"
wait "$http" 2>/dev/null
# A's SYNs (curl's come from 10.0.0.3), checked against B's key.
tcpdump -n -r "$FTV_TMP/b.pcap" -w "$FTV_TMP/a-syn.pcap" \
	"src host 10.0.0.1 and tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn" 2>/dev/null
"$PYTHON" -S "$PKT" synfields "$FTV_TMP/a-syn.pcap" >"$FTV_TMP/a-syns" 2>/dev/null
n=$(wc -l <"$FTV_TMP/a-syns")
valid=$("$PYTHON" -S "$TOKEN" check "$(pubkey_of b)" <"$FTV_TMP/a-syns" | grep -c '^ok')
if [ "$n" -ge 1 ] && [ "$valid" -eq "$n" ]; then
	ktap_ok "A's SYNs carry tokens that ftvtoken.py finds valid under B's key ($valid of $n)"
else
	ktap_fail "A's SYNs carry tokens that ftvtoken.py finds valid under B's key ($valid of $n)"
fi

# ---- replayed SYNs
kmark=$(kmsg_mark)
refused_before=$(refused)
created() { dmesg_since "$kmark" | grep -c "ftv: ftv0: connection 51820:.* created"; }
capture "$B" veth0 "$FTV_TMP/replay.pcap" "host 10.0.0.3 and tcp port $FTV_PORT" ||
	ktap_bail "tcpdump did not start"
tcpdump -n -r "$FTV_TMP/b.pcap" -w "$FTV_TMP/a-syn.pcap" \
	"src host 10.0.0.1 and tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn" 2>/dev/null
nsx "$A" "$PYTHON" -S "$PKT" syn "$FTV_TMP/a-syn.pcap" veth0 ||
	ktap_diag "could not replay A's SYN"
nsx "$A" "$PYTHON" -S "$PKT" syn "$FTV_TMP/a-syn.pcap" veth0 10.0.0.3 ||
	ktap_diag "could not replay A's SYN from 10.0.0.3"
wait_for 10 answered_in "$FTV_TMP/replay.pcap" 10.0.0.2
capture_stop
ktap_eq "the SYN replayed from the stranger gets the host's RST, no SYN-ACK" \
	"1 0" "$(answers_in "$FTV_TMP/replay.pcap" 10.0.0.2)"
ktap_eq "no replayed SYN opened an ftv connection on B" 0 "$(created)"
refused_replay=$(refused)
ktap_result "B counts the stranger's replayed SYN as refused (syn_refused $refused_before, then $refused_replay)" \
	"$([ "${refused_replay:-0}" -ge $((refused_before + 1)) ]; echo $?)"

# ---- many SYNs: peers that never get an answer, each with a packet to
# send, dial anew every second
ip -n "$A" route add 10.77.0.0/16 dev ftv0 || ktap_bail "no route for the fake peers"
for ((i = 0; i < FAKE_PEERS; i++)); do
	echo "peer $("$FTVCTL" genkey | "$FTVCTL" pubkey) endpoint 10.0.0.2:$FTV_PORT allowed-ips 10.77.$i.1/32"
done >"$FTV_TMP/fake-peers"
capture "$B" veth0 "$FTV_TMP/syns.pcap" -c 300 \
	"src host 10.0.0.1 and tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn" ||
	ktap_bail "tcpdump did not start"
while read -r _ key rest; do
	# shellcheck disable=SC2086 # the options are words
	nsx "$A" "$FTVCTL" peer add ftv0 "$key" $rest || break
done <"$FTV_TMP/fake-peers"
for ((i = 0; i < FAKE_PEERS; i++)); do
	ip netns exec "$A" ping -q -c 1 -W 1 "10.77.$i.1" >/dev/null 2>&1 &
done
have_all() { ! kill -0 "$CAPTURE_PID" 2>/dev/null; }
wait_for 60 have_all
capture_stop
"$PYTHON" -S "$PKT" synfields "$FTV_TMP/syns.pcap" >"$FTV_TMP/syn-fields"
n=$(wc -l <"$FTV_TMP/syn-fields")
read -r isn_bits ts_bits < <("$PYTHON" -S "$TOKEN" randomness <"$FTV_TMP/syn-fields")
ktap_diag "$n SYNs: the least balanced bit is 1 in $isn_bits (ISN), $ts_bits (TSval) of them"
balanced() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { exit !(n >= 200 && a >= 0.35 && b >= 0.35) }'; }
if balanced "${isn_bits:-0}" "${ts_bits:-0}" "${n:-0}"; then
	ktap_ok "ISN and TSval of $n SYNs: every bit 1 in 35 % to 65 % of them"
else
	ktap_fail "ISN and TSval of ${n:-0} SYNs: every bit 1 in 35 % to 65 % of them"
fi
distinct=$(cut -d' ' -f1 "$FTV_TMP/syn-fields" | sort -u | wc -l)
ktap_eq "no two of those SYNs share an ISN" "$n" "$distinct"

ktap_finish
