#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Segments that look like a connection's but are not. The
# security review of 891c642 found that unauthenticated segments could
# change state used later (a pure ACK's timestamp became what ftv echoed),
# that the connection lookup did not look at the destination address, and
# that checksums of incoming segments were never verified. From R, on the
# path, forgetcp.py catches one of C's data segments to S and sends S:
#
#  1. a pure ACK with the next sequence number and TSval 0x5eed1e55:
#     S never echoes that value (its TSecr comes from authenticated
#     segments only);
#  2. the caught segment again, to S's second address: S's host answers
#     it with a RST, as for any port without a socket there, since no ftv
#     connection has that destination;
#  3. a data segment with a wrong TCP checksum: S counts it as malformed,
#     and the tunnel goes on (one lost on its way, as S's capture shows,
#     is forged again, three times at most).
#
#   ns C (initiator)          ns R (router, no NAT)          ns S (responder)
#   +---------------------+  +--------------------------+   +-------------------------+
#   | ftv0 10.9.0.1       |  |                          |   | ftv0 10.9.0.2 :51820    |
#   | veth0 192.168.10.2  |--| vethc 192.168.10.1       |   |                         |
#   |                     |  | veths 198.51.100.1       |---| veth0 198.51.100.2      |
#   |                     |  |   forgetcp.py, tcpdump   |   |       198.51.100.3 too  |
#   +---------------------+  +--------------------------+   +-------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

FORGE="$FTV_ROOT/selftests/lib/forgetcp.py"
S_OTHER=198.51.100.3
TSVAL=1592598101	# 0x5eed1e55

ktap_plan 7
ftv_require
command -v tcpdump >/dev/null || ktap_skip_all "tcpdump is not installed"

paths_topology || ktap_bail "cannot set up the namespaces"
ip -n "$S" addr add "$S_OTHER/24" dev veth0 || ktap_bail "cannot add S's second address"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
tmpdir
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"
# Both ends keep sending: S's segments between C's show what S echoes.
ip netns exec "$C" ping -q -i 0.2 10.9.0.2 >/dev/null 2>&1 &
bg_track $!
ip netns exec "$S" ping -q -i 0.05 10.9.0.1 >/dev/null 2>&1 &
bg_track $!
pub_c=$(pubkey_of c)

capture "$R" veths "$FTV_TMP/wire.pcap" "tcp" || ktap_bail "cannot capture on R"
# What reaches S, for the diagnostics of case 6; capture_stop ends R's.
r_cap=$CAPTURE_PID
capture "$S" veth0 "$FTV_TMP/s.pcap" "tcp and src host $C_LAN4" ||
	ktap_bail "cannot capture on S"
s_cap=$CAPTURE_PID
CAPTURE_PID=$r_cap

# 1. A forged pure ACK's timestamp
ktap_check "R forges a pure ACK with TSval $TSVAL into C's connection to S" \
	nsx "$R" "$PYTHON" "$FORGE" veths ack src="$C_LAN4" dport="$FTV_PORT" \
	tsval="$TSVAL"
# s_sent N : S has sent N segments in the capture
s_sent()
{
	local n
	n=$(tcpdump -n -r "$FTV_TMP/wire.pcap" "src host $S_PUB4" 2>/dev/null | wc -l)
	[ "$n" -ge "$1" ]
}
before=$(tcpdump -n -r "$FTV_TMP/wire.pcap" "src host $S_PUB4" 2>/dev/null | wc -l)
wait_for 10 s_sent $((before + 20))
echoed=$(tcpdump -n -v -r "$FTV_TMP/wire.pcap" "src host $S_PUB4" 2>/dev/null |
	grep -c "ecr $TSVAL")
ktap_eq "S never echoes the forged TSval" 0 "$echoed"

# 2. The same tuple but another destination address
ktap_check "R sends one of C's segments again, to S's second address" \
	nsx "$R" "$PYTHON" "$FORGE" veths redirect src="$C_LAN4" \
	dport="$FTV_PORT" to="$S_OTHER"
rst_from_other()
{
	tcpdump -n -r "$FTV_TMP/wire.pcap" \
		"src host $S_OTHER and tcp[tcpflags] & tcp-rst != 0" 2>/dev/null |
		grep -q .
}
if wait_for 5 rst_from_other; then
	ktap_ok "S's host answers it with a RST: no ftv connection has that destination"
else
	ktap_fail "S's host answers it with a RST: no ftv connection has that destination"
fi

# 3. A wrong checksum. The forged segment can be lost on its way like
# any other (a CPU's backlog that another script's transfer filled, in
# the VM): what S's capture shows tells that from a segment S got and did
# not count. One lost is forged again, three times at most; one that S
# got and did not count is the failure.
malformed()
{
	ftv_peer_json "$S" ftv0 "$pub_c" 'p["drops"]["malformed"]'
}
counted()
{
	[ "$(malformed)" -gt "$before" ]
}
# s_got SEQ : S's capture holds the forged segment (its sequence number,
# its checksum wrong)
s_got()
{
	tcpdump -n -vv -S -r "$FTV_TMP/s.pcap" "tcp and src host $C_LAN4" 2>/dev/null |
		grep -A1 "incorrect" | grep -q "seq $1[,:]"
}
before=$(malformed)
sent=0
verdict=lost
for try in 1 2 3; do
	if ! nsx "$R" "$PYTHON" "$FORGE" veths badsum src="$C_LAN4" \
		dport="$FTV_PORT" >"$FTV_TMP/forged" 2>&1; then
		ktap_diag "forgetcp: $(cat "$FTV_TMP/forged")"
		continue
	fi
	sent=$((sent + 1))
	seq=$(sed -n 's/.* seq \([0-9]*\) len [0-9]*, bad checksum.*/\1/p' "$FTV_TMP/forged")
	if wait_for 5 counted; then
		verdict=counted
		break
	fi
	if wait_for 2 s_got "$seq"; then
		verdict=uncounted
		break
	fi
	ktap_diag "forged segment $try (seq $seq) never reached S: forged again"
done
if [ "$sent" -gt 0 ]; then
	ktap_ok "R sends S a data segment with a wrong TCP checksum"
else
	ktap_fail "R sends S a data segment with a wrong TCP checksum"
fi
if [ "$verdict" = counted ]; then
	ktap_ok "S counts it as malformed ($before -> $(malformed))"
else
	ktap_fail "S counts it as malformed"
	ktap_diag "$verdict; malformed: $before before, $(malformed) after; the device's: $(ftv_json "$S" ftv0 'd["drops"].get("malformed", 0)')"
	ktap_diag "forgetcp: $(cat "$FTV_TMP/forged")"
	ktap_diag "S's last segments from C:"
	tcpdump -n -vv -S -r "$FTV_TMP/s.pcap" 2>/dev/null | tail -n 8 | ktap_diag
	nsx "$S" "$FTVCTL" show ftv0 | ktap_diag
fi
kill -INT "$s_cap" 2>/dev/null
wait "$s_cap" 2>/dev/null
capture_stop
if connect_ping "$C" 10.9.0.2 10; then
	ktap_ok "the tunnel still works"
else
	ktap_fail "the tunnel still works"
fi

ktap_finish
