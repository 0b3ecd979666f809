#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Session renewal. With the limits lowered through the module's
# parameters: an inner TCP transfer that spans many renewals by message
# count arrives intact; renewal by age happens on its own while traffic
# flows; and with a hard message limit below the renewal one, no key ever
# carries more than that many messages, yet traffic goes on.
#
#   ns A (initiator: renews)                     ns B (responder)
#   +---------------------------+               +---------------------------+
#   | nc -N 10.9.0.2 5001       |               | nc -l 5001                |
#   | ftv0 10.9.0.1/24          |               | ftv0 10.9.0.2/24          |
#   | veth0 10.0.0.1/24         |---------------| veth0 10.0.0.2/24 :51820  |
#   +---------------------------+               +---------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

PARAMS=/sys/module/ftv/parameters
SIZE_MB=${FTV_REKEY_MB:-20}
TCP_PORT=5001

ktap_plan 8
ftv_require
ftv_use_debug_module
command -v nc >/dev/null || ktap_skip_all "nc (netcat-openbsd) is not installed"
command -v tcpdump >/dev/null || ktap_skip_all "tcpdump is not installed"

declare -A orig
for p in rekey_after_seconds reject_after_seconds rekey_after_messages \
	 reject_after_messages; do
	orig[$p]=$(cat "$PARAMS/$p")
	defer "echo ${orig[$p]} >$PARAMS/$p"
done
setp() { echo "$2" >"$PARAMS/$1"; }
restore() { setp "$1" "${orig[$1]}"; }

pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"

# A's connections are the ones whose remote port is B's listen port.
opened()
{
	dmesg_since "$1" | grep -c "connection [0-9]*:$FTV_PORT created"
}

# 1. By message count, under a transfer.
setp rekey_after_messages 2000
head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom >"$FTV_TMP/send"
ip netns exec "$B" nc -l "$TCP_PORT" >"$FTV_TMP/recv" &
rpid=$!
bg_track "$rpid"
listening() { nsx "$B" ss -Hltn "sport = :$TCP_PORT" | grep -q .; }
wait_for 10 listening || ktap_bail "nc does not listen in B"
mark=$(kmsg_mark)
nsx "$A" timeout 300 nc -N 10.9.0.2 "$TCP_PORT" <"$FTV_TMP/send"
done_rx() { ! kill -0 "$rpid" 2>/dev/null; }
wait_for 60 done_rx
ktap_eq "$SIZE_MB MB across renewals arrive intact" \
	"$(sha256sum <"$FTV_TMP/send" | cut -d' ' -f1)" \
	"$(sha256sum <"$FTV_TMP/recv" | cut -d' ' -f1)"
n=$(opened "$mark")
if [ "$n" -ge 3 ]; then
	ktap_ok "the session was renewed during the transfer ($n times)"
else
	ktap_fail "the session was renewed during the transfer ($n times)"
fi
restore rekey_after_messages

# 2. By age: renewals come by themselves while a ping runs.
setp rekey_after_seconds 2
setp reject_after_seconds 30
mark=$(kmsg_mark)
nsx "$A" ping -q -c 40 -i 0.2 -W 1 10.9.0.2 >"$FTV_TMP/ping" 2>&1
n=$(opened "$mark")
if [ "$n" -ge 2 ]; then
	ktap_ok "the session was renewed by age ($n times in 8 s)"
else
	ktap_fail "the session was renewed by age ($n times in 8 s)"
fi
loss=$(grep -o '[0-9.]*% packet loss' "$FTV_TMP/ping")
ktap_eq "no ping lost across renewals by age" "0% packet loss" "$loss"
restore rekey_after_seconds
restore reject_after_seconds

# 3. Hard limit below the renewal limit.
setp reject_after_messages 100
ip netns exec "$B" tcpdump -n -U -i veth0 -w "$FTV_TMP/hard.pcap" \
	"src host 10.0.0.1 and tcp dst port $FTV_PORT" 2>/dev/null &
tpid=$!
bg_track "$tpid"
mark=$(kmsg_mark)
nsx "$A" ping -q -c 300 -i 0.02 -W 1 10.9.0.2 >"$FTV_TMP/ping" 2>&1
kill "$tpid"
wait "$tpid" 2>/dev/null
received=$(grep -o '[0-9]* received' "$FTV_TMP/ping" | cut -d' ' -f1)
if [ "${received:-0}" -ge 250 ]; then
	ktap_ok "traffic goes on past the hard limit ($received of 300 answered)"
else
	ktap_fail "traffic goes on past the hard limit (${received:-0} of 300 answered)"
fi
n=$(opened "$mark")
if [ "$n" -ge 2 ]; then
	ktap_ok "new sessions replaced the exhausted ones ($n)"
else
	ktap_fail "new sessions replaced the exhausted ones ($n)"
fi
# Count A's sealed messages per connection (its source port); one extra
# per connection is the initiation.
most=$(tcpdump -n -r "$FTV_TMP/hard.pcap" 'tcp[tcpflags] & tcp-push != 0' 2>/dev/null |
	awk '{ split($3, a, "."); n[a[5]]++ } END { m = 0; for (p in n) if (n[p] > m) m = n[p]; print m }')
if [ "${most:-0}" -gt 0 ] && [ "$most" -le 101 ]; then
	ktap_ok "no key sealed more than 100 messages (most: $((most - 1)))"
else
	ktap_fail "no key sealed more than 100 messages (most: $((${most:-1} - 1)))"
fi
restore reject_after_messages

ktap_check "the tunnel still works with default limits" ping_ok "$A" 10.9.0.2

ktap_finish
