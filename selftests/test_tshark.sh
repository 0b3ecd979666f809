#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# To a protocol analyser the tunnel is an ordinary TCP connection. A
# capture of the underlay during the connection's setup and a 5 MB
# transfer (lossless path) is read by tshark, whose TCP sequence analysis
# is what middleboxes' own tracking resembles. It must report none of
# the problems a stateful middlebox would act on:
#  - an ACK for data that was never sent (tcp.analysis.ack_lost_segment;
#    conntrack: "ACK is over the upper bound");
#  - a zero window or zero-window probes;
#  - data beyond the window the receiver advertised (tshark has no flag
#    for it; computed here from its fields as conntrack does: seq + len
#    <= the receiver's highest ack + window);
#  - a bad IP or TCP checksum. Checksum offload is accounted for by
#    turning it off on both veths (ethtool -K veth0 tx off), so that the
#    captured segments carry the checksums a wire would see. That also
#    makes the module checksum its segments itself: about one in 65536
#    comes to 0x0000, which the stack's fallback would write as 0xffff.
# Whatever else tshark flags (lost or out-of-order segments,
# retransmissions, duplicate ACKs) is listed as a note.
#
#   ns A (initiator)                             ns B (responder)
#   +---------------------------+               +---------------------------+
#   | nc -N 10.9.0.2 5001       |               | nc -l 5001 | sha256sum    |
#   | ftv0 10.9.0.1/24          |               | ftv0 10.9.0.2/24          |
#   | veth0 10.0.0.1/24 tx off  |---------------| veth0 10.0.0.2/24 tx off  |
#   |  tcpdump (full packets)   |               |   :51820                  |
#   +---------------------------+               +---------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

SIZE_MB=5
FLAGS="ack_lost_segment zero_window zero_window_probe lost_segment
	out_of_order retransmission fast_retransmission spurious_retransmission
	duplicate_ack reused_ports window_full keep_alive"

for tool in tshark tcpdump ethtool nc; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 8
ftv_require

pair_underlay 4 || ktap_bail "cannot set up the underlay"
for ns in "$A" "$B"; do
	nsx "$ns" ethtool -K veth0 tx off >/dev/null ||
		ktap_bail "cannot turn off checksum offload on veth0"
done
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir

capture "$A" veth0 "$FTV_TMP/wire.pcap" -B 16384 "tcp port $FTV_PORT" ||
	ktap_bail "tcpdump did not start: $(cat "$FTV_TMP/wire.pcap.err")"

ktap_check "the tunnel comes up" connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"
random_file data "$SIZE_MB"
if transfer "$A" "$B" 10.9.0.2 5001 "$FTV_TMP/data"; then
	ktap_ok "$SIZE_MB MB arrive intact"
else
	ktap_fail "$SIZE_MB MB arrive intact"
fi
nsx "$B" ping -q -c 3 -i 0.2 -W 1 10.9.0.1 >/dev/null 2>&1

capture_stop
ktap_eq "the capture is complete (tcpdump)" "0 packets dropped by kernel" \
	"$(grep -o '[0-9]* packets dropped by kernel' "$FTV_TMP/wire.pcap.err")"

fields=(-e tcp.stream -e ip.src -e tcp.srcport -e tcp.flags.ack
	-e tcp.seq_raw -e tcp.ack_raw -e tcp.len -e tcp.window_size
	-e tcp.checksum.status -e ip.checksum.status -e tcp.checksum)
for f in $FLAGS; do
	fields+=(-e "tcp.analysis.$f")
done
# The payload is random bytes: decode it as data, not as whatever a
# heuristic dissector might take it for.
tshark -n -r "$FTV_TMP/wire.pcap" -d "tcp.port==$FTV_PORT,data" \
	-o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE \
	-T fields -E separator=/t "${fields[@]}" >"$FTV_TMP/fields" \
	2>"$FTV_TMP/tshark.err" || ktap_diag "tshark: $(tail -n 3 "$FTV_TMP/tshark.err")"

result=$("$PYTHON" - "$FTV_TMP/fields" "$FLAGS" <<'PY'
import sys

flags = sys.argv[2].split()
counts = dict.fromkeys(flags, 0)
first = dict.fromkeys(flags, 0)
n = bad_csum = zero_csum = 0
first_bad = ""
beyond = []
edge = {}       # (stream, receiver) -> highest ack + window it advertised
for line in open(sys.argv[1]):
    cols = line.rstrip("\n").split("\t")
    if len(cols) < 11 + len(flags):
        continue
    n += 1
    stream, src, sport, has_ack, seq, ack, length, win, tcp_ok, ip_ok = cols[:10]
    frame = n
    if tcp_ok != "1" or ip_ok != "1":
        bad_csum += 1
        first_bad = first_bad or "frame %d: TCP %s, IP %s" % (
            frame, tcp_ok or "-", ip_ok or "-")
    # Once in 65536 segments the checksum is 0x0000, which Linux's
    # software fallback would have written as 0xffff.
    if cols[10] == "0x0000" and tcp_ok == "1":
        zero_csum += 1
    for f, v in zip(flags, cols[11:]):
        if v:
            counts[f] += 1
            first[f] = first[f] or frame
    me = (stream, src + ":" + sport)
    seq, length = int(seq), int(length or 0)
    if has_ack == "1" and ack and win:
        # What this side lets the other send up to (tshark scales the
        # window once it has seen the handshake).
        e = (int(ack) + int(win)) % 2**32
        if me not in edge or (e - edge[me]) % 2**32 < 2**31:
            edge[me] = e
    if length:
        peer = [k for k in edge if k[0] == stream and k != me]
        if peer:
            limit = edge[peer[0]]
            end = (seq + length) % 2**32
            if (end - limit) % 2**32 < 2**31 and end != limit:
                beyond.append("frame %d: data to %d, window ends at %d"
                              % (frame, end, limit))
print("segments %d" % n)
print("bad_checksums %d %s" % (bad_csum, first_bad))
print("zero_checksums %d" % zero_csum)
print("beyond_window %d %s" % (len(beyond), "; ".join(beyond[:3])))
for f in flags:
    print("flag %s %d%s" % (f, counts[f],
                            " (first in frame %d)" % first[f] if counts[f] else ""))
PY
)
segments=$(awk '$1 == "segments" { print $2 }' <<<"$result")
if [ "${segments:-0}" -gt 0 ]; then
	ktap_ok "tshark reads the capture as TCP ($segments segments)"
else
	ktap_fail "tshark reads the capture as TCP"
	ktap_diag "$(tail -n 5 "$FTV_TMP/tshark.err")"
fi
flag() { awk -v f="$1" '$1 == "flag" && $2 == f { print $3 }' <<<"$result"; }
# around FLAG : the capture around the first frame tshark flagged so
around()
{
	local n

	n=$(awk -v f="$1" '$1 == "flag" && $2 == f { gsub(/[^0-9]/, "", $NF); print $NF }' <<<"$result")
	[ -n "$n" ] || return 0
	ktap_diag "frames $((n - 8)) to $((n + 4)): frame src:port seq ack len flags (raw numbers)"
	tshark -n -r "$FTV_TMP/wire.pcap" -d "tcp.port==$FTV_PORT,data" \
		-Y "frame.number >= $((n - 8)) && frame.number <= $((n + 4))" \
		-T fields -e frame.number -e ip.src -e tcp.srcport -e tcp.seq_raw \
		-e tcp.ack_raw -e tcp.len -e _ws.expert.message 2>/dev/null | ktap_diag
}
ktap_eq "no ACK of unseen data (ack_lost_segment)" 0 "$(flag ack_lost_segment)" ||
	around ack_lost_segment
ktap_eq "no zero window, no zero-window probe" "0 0" \
	"$(flag zero_window) $(flag zero_window_probe)"
beyond=$(awk '$1 == "beyond_window" { print $2 }' <<<"$result")
ktap_eq "no data beyond the receiver's window" 0 "${beyond:-none}" ||
	grep '^beyond_window' <<<"$result" | ktap_diag
# tshark's checksum status: 1 good, 0 bad, 2 not verified
if ! ktap_eq "no bad IP or TCP checksum" 0 "$(awk '$1 == "bad_checksums" { print $2 }' <<<"$result")"; then
	grep '^bad_checksums' <<<"$result" | ktap_diag
	n=$(sed -n 's/^bad_checksums [0-9]* frame \([0-9]*\):.*/\1/p' <<<"$result")
	[ -n "$n" ] && tshark -n -r "$FTV_TMP/wire.pcap" -d "tcp.port==$FTV_PORT,data" \
		-o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE \
		-Y "frame.number == $n" -V 2>/dev/null |
		grep -E "^(Frame|Internet|Transmission)|[Cc]hecksum|Flags:|Sequence Number \(raw|Acknowledgment number \(raw|TCP Segment Len" |
		ktap_diag
fi
ktap_diag "good TCP checksums of 0x0000: $(awk '$1 == "zero_checksums" { print $2 }' <<<"$result")"
ktap_diag "other tshark analysis flags:"
grep '^flag' <<<"$result" | grep -vE ' (ack_lost_segment|zero_window|zero_window_probe) ' |
	sed 's/^flag /  /' | ktap_diag

ktap_finish
