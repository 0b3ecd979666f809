#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Allocation failures, everywhere. On a kernel with fault injection (make
# check-debug's; elsewhere the test is skipped, for it cannot run):
#
#  1. Control operations: faults_failnth.py fails every allocation of each in
#     turn through /proc/thread-self/fail-nth (device create and delete;
#     set private key, listen port, shape; peer add with allowed IPs and
#     FEC; peer set; setconf of three peers; a dump). After each, the
#     operation took effect whole or not at all, GET_DEVICE works, and the
#     same request without a fault succeeds. One case per operation, with
#     how many allocation points it walked.
#  2. The data path: with failslab failing 5 % of the allocations that
#     may not sleep (softirq, the crypt workers, GFP_ATOMIC: the default
#     ignore-gfp-wait keeps the test's own processes out of it), 30 s of
#     traffic both ways with FEC, sessions renewed every 2,000 messages
#     and a device deleted and created again in the middle. Then, once
#     injection stops: the tunnel comes back by itself and 4 MB arrive
#     intact.
#  3. Every device, peer, connection and FEC state created was destroyed;
#     run.sh then has kmemleak scan, and checks the log (KASAN, lockdep).
#
#   ns A (initiator)                             ns B (responder)
#   +---------------------------+               +---------------------------+
#   | ftv0 10.9.0.1/24          |               | ftv0 10.9.0.2/24 :51820   |
#   | veth0 10.0.0.1/24         |---------------| veth0 10.0.0.2/24         |
#   +---------------------------+               +---------------------------+
#   ns F: faults_failnth.py's own device ftvf0

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

FAIL="$FTV_ROOT/selftests/lib/faults_failnth.py"
DBG=/sys/kernel/debug
PARAMS=/sys/module/ftv/parameters
OPS="link_add link_del set_private_key set_listen_port set_shape peer_add peer_set setconf dump"
INJECT_S=30
PERCENT=5

[ -e /proc/self/fail-nth ] ||
	ktap_skip_all "this kernel has no fault injection (make check-debug's has)"
mountpoint -q "$DBG" || mount -t debugfs none "$DBG" 2>/dev/null
if [ ! -d "$DBG/failslab" ] || [ ! -d "$DBG/fail_page_alloc" ]; then
	ktap_skip_all "no failslab or fail_page_alloc in $DBG"
fi
command -v nc >/dev/null || ktap_skip_all "nc (netcat-openbsd) is not installed"

read -r -a ops <<<"$OPS"
ktap_plan $((${#ops[@]} + 4))
ftv_require
ftv_use_debug_module

# fault_set NAME FILE VALUE : set a fault attribute, put back at cleanup
fault_set()
{
	local f="$DBG/$1/$2"

	defer "echo '$(cat "$f")' >'$f'"
	echo "$3" >"$f"
}
for f in failslab fail_page_alloc; do
	# The walk fails allocations that may sleep too; no stack traces in
	# the log, which run.sh reads.
	fault_set "$f" ignore-gfp-wait N
	fault_set "$f" verbose 0
done

mark=$(kmsg_mark)
# run.sh does not count the call traces the kernel's own code prints for
# the failures injected between these two lines (nothing else is waived).
injection_log() { echo "ftv-selftest: fault injection $1" >/dev/kmsg; }
defer "echo 'ftv-selftest: fault injection off' >/dev/kmsg"
injection_log on

# ---- 1. every allocation of every control operation
ns_create F || ktap_bail "cannot create the namespace"
tmpdir
nsx "$F" "$PYTHON" "$FAIL" >"$FTV_TMP/walk" 2>&1
rc=$?
ktap_diag <"$FTV_TMP/walk"
for op in "${ops[@]}"; do
	line=$(grep "^$op: [0-9]* points" "$FTV_TMP/walk")
	if [ -n "$line" ] && ! grep -q "^FAIL: $op:" "$FTV_TMP/walk"; then
		ktap_ok "$line"
	else
		ktap_fail "$op: each allocation failed in turn leaves nothing half-done, and a retry succeeds"
	fi
done
[ "$rc" -le 1 ] || ktap_diag "faults_failnth.py stopped with status $rc"

# ---- 2. the data path under random failures
for f in failslab fail_page_alloc; do
	echo Y >"$DBG/$f/ignore-gfp-wait"
done
defer "echo $(cat "$PARAMS/rekey_after_messages") >$PARAMS/rekey_after_messages"
echo 2000 >"$PARAMS/rekey_after_messages"
pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
pub_a=$(pubkey_of a)
pub_b=$(pubkey_of b)
nsx "$A" "$FTVCTL" peer set ftv0 "$pub_b" fec 8:2
nsx "$B" "$FTVCTL" peer set ftv0 "$pub_a" fec 8:2
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"

# stream FROM TO ADDR PORT : bytes through the tunnel until killed
stream()
{
	ip netns exec "$2" sh -c "nc -l $4 >/dev/null" &
	bg_track $!
	wait_for 10 transfer_listening "$2" "$4"
	ip netns exec "$1" sh -c "cat /dev/zero | nc $3 $4" >/dev/null 2>&1 &
	bg_track $!
}
stream "$A" "$B" 10.9.0.2 5001
stream "$B" "$A" 10.9.0.1 5002

fault_set failslab probability "$PERCENT"
fault_set failslab interval 1
fault_set failslab times -1
fault_set failslab task-filter N
start=$SECONDS
recreated=0
while [ $((SECONDS - start)) -lt "$INJECT_S" ]; do
	ping_ok "$A" 10.9.0.2
	if [ "$recreated" = 0 ] && [ $((SECONDS - start)) -ge $((INJECT_S / 2)) ]; then
		# Teardown and setup under failures: B's device goes and
		# comes back with the same key (a retry on failure).
		nsx "$B" ip link del ftv0
		for _ in 1 2 3 4 5; do
			ftv_dev "$B" 2 && break
			nsx "$B" ip link del ftv0 2>/dev/null
		done
		for _ in 1 2 3 4 5; do
			nsx "$B" "$FTVCTL" set ftv0 private-key "$FTV_TMP/b.key" \
				listen-port "$FTV_PORT" &&
				nsx "$B" "$FTVCTL" peer add ftv0 "$pub_a" \
					allowed-ips 10.9.0.1/32 fec 8:2 && break
		done
		recreated=1
	fi
	sleep 0.5
done
echo 0 >"$DBG/failslab/probability"
injection_log off
ktap_diag "failslab at $PERCENT % for $INJECT_S s (B's device re-created midway)"
ktap_check "injection off: the tunnel comes back by itself" connect_ping "$A" 10.9.0.2 60

random_file data 4
if transfer "$A" "$B" 10.9.0.2 5003 "$FTV_TMP/data" 120; then
	ktap_ok "injection off: 4 MB arrive intact"
else
	ktap_fail "injection off: 4 MB arrive intact"
fi

# ---- 3. nothing left
for ns in "$A" "$B"; do
	nsx "$ns" ip link del ftv0 2>/dev/null
done
objects_balanced "$mark" 60
ktap_eq "faults_failnth.py found nothing wrong" 0 "$(grep -c '^FAIL' "$FTV_TMP/walk")"

ktap_finish
