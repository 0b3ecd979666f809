#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A censor on the path acts on each TCP connection; one session spread
# over four ("flows 4") outlasts it. R, between C and S, delays each way
# by 20 ms (a 40 ms round trip), keeps strict conntrack, and plays the
# censor with nftables; every offload stays at its default.
#  - a policer of 2 Mbit/s on each connection, each way (a dynamic set
#    keyed by the 4-tuple, as deployed censors do), a third of what one
#    connection carries here under emulation, first on the one
#    connection of "flows 1": 2 MB each way arrive intact, and FEC's
#    repair messages, which such drops take with the data they were to
#    rebuild, are found futile by each receiving end (kernel log) and
#    held back: both ends together send fewer than two for every three
#    data segments, where repairs sized to the loss they see would be
#    more than two for each and slow the transfer to a quarter of the
#    rate. Held back, they are still about 0.3 for each: each hold ends
#    into repairs at the full ratio until the next verdict;
#  - then on the four connections of "flows 4": 8 MB from C to S and
#    8 MB back arrive intact, spread over the four connections (each at
#    least a tenth), and no policed connection is taken for a stalled
#    one (rotations stays 0). The rate is printed, not judged: make
#    bench measures it against four times the policed rate.
#    The policer was of 8 Mbit/s until 2026-11-30: a slow machine's
#    emulated connections stayed under it (5.9 Mbit/s for one; none of
#    the four had a segment dropped), so the first part's repairs were
#    judged too seldom to be held back in time, and the second part,
#    with the guest's CPU the bottleneck, once took a connection whose
#    answers were late for a stalled one;
#  - the connection that opened the session black-holed in both
#    directions in the middle of a transfer: the transfer arrives intact,
#    C gives the connection up (rotations 1) and sends nothing more on
#    it; its key exchange cannot be redone on a join, so C makes a new
#    session, which has four connections up again within 10 s, as R's
#    conntrack sees them;
#  - the same for one of the new session's joins, which had carried a
#    few hundred kilobytes towards C: C replaces it alone (rotations +1);
#  - rotate auto (the default) learned no budget from any of these
#    stalls: a single stall is not a freeze (test_freeze.sh has those);
#  - no message failed authentication and none was taken for a replay.
#
#   ns C (initiator)          ns R (router, censor)              ns S (responder)
#   +--------------------+   +--------------------------------+  +--------------------+
#   | ftv0 10.9.0.1      |   | netem delay 20ms each way      |  | ftv0 10.9.0.2      |
#   |   flows 4          |   | ct state invalid drop          |  |   :51820           |
#   | veth0 192.168.10.2 |---| per-connection policer, or     |--| veth0 198.51.100.2 |
#   +--------------------+   | one 4-tuple dropped            |  +--------------------+
#                            +--------------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

ktap_plan 18
ftv_require
for tool in conntrack nc tc nft; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done

kmark=$(kmsg_mark)
paths_censor 20ms || ktap_bail "cannot set up the namespaces and R"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
C_KEY=$(pubkey_of c)

# established : connections to S's listen port that R's conntrack has as
# established
established()
{
	nsx "$R" conntrack -L -p tcp --dport "$FTV_PORT" --state ESTABLISHED 2>/dev/null |
		grep -c "dport=$FTV_PORT"
}
flows_up() { ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]'; }
rotations() { ftv_peer_json "$C" ftv0 "$S_KEY" 'p["rotations"]'; }
# four_up : C has four flows up and R's conntrack sees four established
# connections that are not black-holed ($HOLED_PORT, if set)
four_up()
{
	[ "$(flows_up)" = 4 ] || return 1
	[ "$(nsx "$R" conntrack -L -p tcp --dport "$FTV_PORT" --state ESTABLISHED 2>/dev/null |
		grep "dport=$FTV_PORT" | grep -vc "sport=${HOLED_PORT:-0} ")" -ge 4 ]
}
# shares : bytes per connection to S's listen port in R's conntrack, both
# directions, as a share of their sum, smallest first
shares()
{
	nsx "$R" conntrack -L -p tcp --dport "$FTV_PORT" 2>/dev/null |
		awk '{ n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^bytes=/) { split($i, a, "="); n += a[2] } b[NR] = n; t += n }
		     END { for (i = 1; i <= NR; i++) printf "%.2f\n", t ? b[i] / t : 0 }' |
		sort -n | tr '\n' ' '
}
each_tenth()
{
	awk -v s="$1" 'BEGIN { n = split(s, a, " "); ok = n == 4; for (i = 1; i <= n; i++) if (a[i] < 0.10) ok = 0; exit !ok }'
}
# auth_drops : messages C and S dropped as forged or replayed
auth_drops()
{
	local ns key sum=0 n

	for ns in C S; do
		key=$S_KEY
		[ "$ns" = S ] && key=$C_KEY
		n=$(ftv_peer_json "${!ns}" ftv0 "$key" \
			'sum(p["drops"].get(k, 0) for k in ("bad_auth", "replay"))')
		sum=$((sum + n))
	done
	echo "$sum"
}

# repairs_sent : FEC repair messages C and S have sent each other
repairs_sent()
{
	echo $(($(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["fec_stats"]["repair_sent"]') +
		$(ftv_peer_json "$S" ftv0 "$C_KEY" 'p["fec_stats"]["repair_sent"]')))
}

# both_ways WHAT NAME MB : $FTV_TMP/NAME, MB megabytes, from C to S and
# back, each checked
both_ways()
{
	local ns1 ns2 addr port

	for ns1 in C S; do
		ns2=S addr=10.9.0.2 port=5001
		[ "$ns1" = S ] && ns2=C addr=10.9.0.1 port=5002
		if transfer "${!ns1}" "${!ns2}" "$addr" "$port" "$FTV_TMP/$2" 120; then
			ktap_ok "$1: $3 MB from $ns1 to $ns2 arrive intact"
		else
			ktap_fail "$1: $3 MB from $ns1 to $ns2 arrive intact"
		fi
	done
}

connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"

# ---- a policer on each connection, each way
paths_police "256 kbytes/second" "32 kbytes" ||
	ktap_bail "cannot set up R's policer"
# ---- one connection policed
random_file small 2
repairs0=$(repairs_sent)
both_ways "one connection policed at 2 Mbit/s" small 2
repairs=$(($(repairs_sent) - repairs0))
# 2 MB each way, in segments of at most 1400 bytes of the tunnel's MTU.
# Six runs here sent 661 to 1,184 repairs (and 1,433 for 3 MB each way);
# not held back they would be over 6,000.
ktap_result "one connection policed: repairs held back ($repairs sent, under 2000: two thirds of about 3000 data segments)" \
	"$([ "$repairs" -lt 2000 ]; echo $?)"
futile=$(dmesg_since "$kmark" | grep "groups that lost data: none asked for")
ktap_diag "${futile:-no end found repairs futile}"
ktap_result "one connection policed: both ends found the repairs futile (kernel log)" \
	"$(grep -q "repairs on $FTV_PORT:" <<<"$futile" &&
	   grep -q "repairs on [0-9]*:$FTV_PORT " <<<"$futile"; echo $?)"

# ---- four connections policed
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 4 ||
	ktap_bail "ftvctl peer set ... flows 4 failed"
wait_for 20 four_up || ktap_bail "flows 4 did not get four connections up"
nsx "$R" conntrack -Z >/dev/null 2>&1
random_file data 8
repairs0=$(repairs_sent)
both_ways "four connections policed at 2 Mbit/s each" data 8
share=$(shares)
ktap_diag "shares of the bytes per connection: $share"
ktap_result "policed: the transfers went over all four connections (each at least 0.10)" \
	"$(each_tenth "$share"; echo $?)"
ktap_diag "R's policer dropped $(nft_packets "$R" "ip censor") segments; repair messages: $(($(repairs_sent) - repairs0))"
ktap_eq "policed: no connection taken for a stalled one (rotations)" 0 "$(rotations)"
ktap_diag "$(dmesg_since "$kmark" | grep ' stalled: ' || echo "no stall in the kernel log")"
nsx "$R" nft delete table ip censor

# ---- hole PORT : R drops everything of C's connection from local port PORT
hole()
{
	HOLED_PORT=$1
	nsx "$R" nft -f - <<NFT
table ip censor {
	chain forward {
		type filter hook forward priority filter - 10; policy accept;
		ip saddr $C_LAN4 tcp sport $1 tcp dport $FTV_PORT counter drop
		ip daddr $C_LAN4 tcp dport $1 tcp sport $FTV_PORT counter drop
	}
}
NFT
}
# holed : segments R dropped in the hole so far
holed() { nft_packets "$R" "ip censor"; }
# c_sent_into_hole : segments C sent into the hole, from C to S
c_sent_into_hole() { nft_packets "$R" "ip censor" "ip saddr"; }
# one_hole WHAT PORT : black-hole C's connection from PORT one second into
# a 16 MB transfer, and report
one_hole()
{
	local what=$1 port=$2 before after rot

	rot=$(rotations)
	random_file big 16
	(sleep 1; hole "$port") &
	bg_track "$!"
	if transfer "$C" "$S" 10.9.0.2 5003 "$FTV_TMP/big" 120; then
		ktap_ok "$what black-holed mid-transfer: 16 MB arrive intact"
	else
		ktap_fail "$what black-holed mid-transfer: 16 MB arrive intact"
	fi
	ktap_diag "R dropped $(holed) segments in the hole"
	before=$(c_sent_into_hole)
	ping_ok "$C" 10.9.0.2
	ping_ok "$C" 10.9.0.2
	after=$(c_sent_into_hole)
	ktap_eq "$what: C gave it up (rotations +1) and sends nothing more on it" \
		"$((rot + 1)) $before" "$(rotations) $after"
	if wait_for 10 four_up; then
		ktap_ok "$what: four connections up again within 10 s"
	else
		ktap_fail "$what: four connections up again within 10 s"
		ktap_diag "flows_up $(flows_up); R's conntrack:"
		nsx "$R" conntrack -L -p tcp --dport "$FTV_PORT" 2>/dev/null | ktap_diag
	fi
	nsx "$R" nft delete table ip censor
	HOLED_PORT=
}

# live_ports : C's ports of the connections C made since the mark that
# R's conntrack has as established, oldest first: the opener, then its
# joins
live_ports()
{
	local live port

	live=$(nsx "$R" conntrack -L -p tcp --dport "$FTV_PORT" --state ESTABLISHED 2>/dev/null |
		sed -n 's/.* sport=\([0-9]*\) dport='"$FTV_PORT"' .*/\1/p')
	for port in $(paths_client_ports "$kmark"); do
		grep -qx "$port" <<<"$live" && echo "$port"
	done
}
# opener_port : C's port of the current session's opener, from the last
# session C made. Not the oldest connection R's conntrack has as
# established: an opener C gave up stays there, and black-holing it
# takes nothing from C (seen in a CI-like run on 8e8f21a, after the
# policed part's false stall had given the first opener up).
opener_port()
{
	dmesg_since "$kmark" |
		sed -n "s/.*ftv0: session \([0-9]*\):$FTV_PORT created.*/\1/p" |
		tail -n 1
}
# The opener first: the new session's joins then carry only a few
# hundred kilobytes towards C before one of them is black-holed, which
# rotate auto could mistake for a freeze.
one_hole "the opener" "$(opener_port)"
ktap_eq "S made a second session once the opener was given up" yes \
	"$([ "$(dmesg_since "$kmark" | grep -c "ftv: ftv0: session $FTV_PORT:[0-9]* created")" -ge 2 ] && echo yes || echo no)"
ports=$(live_ports)
one_hole "a join" "$(tail -n 1 <<<"$ports")"
ktap_eq "rotate auto learned no budget from single stalls (kernel log)" 0 \
	"$(dmesg_since "$kmark" | grep -c "connections froze after")"

ktap_eq "no message failed authentication or was taken for a replay" 0 "$(auth_drops)"
ip -n "$C" link del ftv0
ip -n "$S" link del ftv0
objects_balanced "$kmark" 30
ktap_finish
