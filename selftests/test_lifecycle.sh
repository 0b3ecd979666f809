#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lifecycle under load: while traffic flows, 1,000 peers are
# added and removed on the receiving device, that device is moved to
# another namespace (its outer segments stay in the namespace it was
# created in) and used from there, that namespace is deleted, and finally
# the module is unloaded under a running iperf3. Afterwards every device,
# peer and connection the module created has been destroyed (its pr_debug
# lines balance) and the module loads again.
#
#   ns A (initiator)                  ns B (responder; creates ftv0)
#   +--------------------+           +--------------------+    ns C
#   | ftv0 10.9.0.1/24   |           | ftv0 10.9.0.2/24 --+--> (ftv0 moved
#   | veth0 10.0.0.1/24  |-----------| veth0 10.0.0.2/24  |     here, then
#   +--------------------+           +--------------------+     C deleted)

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap 'cleanup; ftv_module_loaded || ftv_load_module >/dev/null 2>&1' EXIT

PEERS=${FTV_LIFECYCLE_PEERS:-1000}

ktap_plan 9
ftv_require
command -v iperf3 >/dev/null || ktap_skip_all "iperf3 is not installed"

mark=$(kmsg_mark)
pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
ns_create C || ktap_bail "cannot create namespace C"
tmpdir
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"

# ---- 1. peers come and go while A pings B
ip netns exec "$A" ping -q -i 0.05 -W 1 -w 600 10.9.0.2 >"$FTV_TMP/ping1" 2>&1 &
ppid=$!
bg_track "$ppid"
# One process adds and removes them over netlink: forking ftvctl and
# entering the namespace thousands of times would take many minutes here.
churn_ok=0
nsx "$B" "$PYTHON" "$FTV_ROOT/selftests/lib/lifecycle_churn.py" ftv0 "$PEERS" >"$FTV_TMP/churn" 2>&1 ||
	churn_ok=1
ktap_diag "peers added, failures: $(cat "$FTV_TMP/churn")"
kill -INT "$ppid"
wait "$ppid" 2>/dev/null
ktap_result "$PEERS peers added and removed under traffic" "$churn_ok"
ktap_eq "B has only A left" 1 "$(ftv_json "$B" ftv0 'len(d["peers"])')"
sent=$(grep -o '[0-9]* packets transmitted' "$FTV_TMP/ping1" | cut -d' ' -f1)
got=$(grep -o '[0-9]* received' "$FTV_TMP/ping1" | cut -d' ' -f1)
if [ "${got:-0}" -gt 0 ] && [ $((got * 100)) -ge $((${sent:-1} * 95)) ]; then
	ktap_ok "A's traffic flowed during the churn ($got of $sent answered)"
else
	ktap_fail "A's traffic flowed during the churn (${got:-0} of ${sent:-0} answered)"
fi

# ---- 2. move B's ftv0 to C under traffic; it keeps working from there
ip netns exec "$A" ping -q -i 0.05 -W 1 -w 600 10.9.0.2 >/dev/null 2>&1 &
ppid=$!
bg_track "$ppid"
moved=1
if ip -n "$B" link set ftv0 netns "$C" &&
   ip -n "$C" addr add 10.9.0.2/24 dev ftv0 &&
   ip -n "$C" link set ftv0 up; then
	moved=0
fi
ktap_result "B's ftv0 moved to C while A sends to it" "$moved"
ktap_check "A reaches ftv0 in C; its outer segments still use B's veth" \
	connect_ping "$A" 10.9.0.2 20

# ---- 3. delete C, with the device in it, while A keeps sending
ip netns del "$C"
gone() { ! ip -n "$B" link show ftv0 >/dev/null 2>&1 && ! [ -e "/run/netns/$C" ]; }
ktap_check "namespace C and its ftv0 are gone under traffic" wait_for 20 gone
kill -INT "$ppid"
wait "$ppid" 2>/dev/null

# ---- 4. unload the module while iperf3 runs between two fresh devices
if ! { ftv_dev "$B" 2 &&
	nsx "$B" "$FTVCTL" set ftv0 private-key "$FTV_TMP/b.key" listen-port "$FTV_PORT" &&
	nsx "$B" "$FTVCTL" peer add ftv0 "$(pubkey_of a)" allowed-ips 10.9.0.1/32,fd09::1/128; }; then
	ktap_bail "cannot recreate B's ftv0"
fi
connect_ping "$A" 10.9.0.2 30 || ktap_bail "no tunnel to the new ftv0"
nsx "$B" iperf3 -s -D -1 >/dev/null 2>&1
iperf_up() { nsx "$B" ss -Hltn "sport = :5201" | grep -q .; }
wait_for 10 iperf_up || ktap_bail "iperf3 does not listen in B"
ip netns exec "$A" iperf3 -c 10.9.0.2 -t 60 >/dev/null 2>&1 &
ipid=$!
bg_track "$ipid"
moving() { [ "$(nsx "$A" cat /sys/class/net/ftv0/statistics/tx_bytes)" -gt 2000000 ]; }
wait_for 30 moving || ktap_diag "iperf3 did not get going"
ktap_check "rmmod ftv succeeds while iperf3 runs" timeout 60 rmmod ftv

objects_balanced "$mark" 10
ktap_check "the module loads again" ftv_load_module

ktap_finish
