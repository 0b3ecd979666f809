#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Netlink fuzzing: four processes send random requests of the ftv
# family (selftests/lib/nlfuzz_requests.py: random attribute trees, wrong types and
# lengths, unknown attributes, nests that are not nests, thousands of
# allowed-ips, dumps, peers added and removed) at two devices while a fifth
# dumps with ftvctl and adds and removes peers, for a minute
# (FTV_NLFUZZ_SECONDS). Every rejection must carry an extack message; ftvctl
# show must never fail; and once the devices are deleted, every device,
# peer and connection created must have been destroyed, with nothing in
# the kernel log.
#
#   ns A
#   +--------------------------------------------------------------+
#   | ftv0, ftv1 (keys, listen ports 51820 and 51821)              |
#   | nlfuzz_requests.py x 4 (seeds 1-4), ftvctl show / peer add / del   |
#   +--------------------------------------------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

FUZZ="$FTV_ROOT/selftests/lib/nlfuzz_requests.py"
SECONDS_FUZZ=${FTV_NLFUZZ_SECONDS:-60}

ktap_plan 6
ftv_require

ns_create A || ktap_bail "cannot create a namespace"
tmpdir
# Every kernel message from here on, read as it comes: a minute of peers
# created and destroyed can overrun the ring buffer before dmesg reads it.
cat /dev/kmsg >"$FTV_TMP/kmsg" 2>/dev/null &
kpid=$!
bg_track "$kpid"
mark=$(kmsg_mark)

for i in 0 1; do
	ftv_keypair "k$i" || ktap_bail "ftvctl genkey failed"
	ip -n "$A" link add "ftv$i" type ftv || ktap_bail "cannot create ftv$i"
	nsx "$A" "$FTVCTL" set "ftv$i" private-key "$FTV_TMP/k$i.key" \
		listen-port $((51820 + i)) || ktap_bail "cannot configure ftv$i"
done

pids=()
for seed in 1 2 3 4; do
	dev=ftv$((seed % 2))
	ip netns exec "$A" "$PYTHON" "$FUZZ" "$dev" "$SECONDS_FUZZ" "$seed" \
		>"$FTV_TMP/fuzz$seed" 2>&1 &
	pids+=($!)
	bg_track "$!"
done
(
	end=$((SECONDS + SECONDS_FUZZ))
	fails=0
	n=0
	while [ "$SECONDS" -lt "$end" ]; do
		key=$("$FTVCTL" genkey | "$FTVCTL" pubkey)
		nsx "$A" "$FTVCTL" peer add ftv0 "$key" allowed-ips "10.$((n % 250)).0.0/16" \
			endpoint 192.0.2.1:1 >/dev/null 2>&1
		nsx "$A" "$FTVCTL" show >/dev/null 2>&1 || fails=$((fails + 1))
		nsx "$A" "$FTVCTL" show ftv1 --json >/dev/null 2>&1 || fails=$((fails + 1))
		nsx "$A" "$FTVCTL" peer del ftv0 "$key" >/dev/null 2>&1
		n=$((n + 1))
	done
	echo "$n $fails" >"$FTV_TMP/churn"
) &
churn=$!
bg_track "$churn"

requests=0
silent=0
finished=0
for i in "${!pids[@]}"; do
	wait "${pids[$i]}"
	rc=$?
	read -r word r _ _ _ _ _ s <"$FTV_TMP/fuzz$((i + 1))"
	if [ "$rc" -le 1 ] && [ "$word" = requests ]; then
		finished=$((finished + 1))
		requests=$((requests + r))
		silent=$((silent + s))
	else
		ktap_diag "fuzzer $((i + 1)): exit $rc: $(head -c 500 "$FTV_TMP/fuzz$((i + 1))")"
	fi
done
wait "$churn"
ktap_eq "4 fuzzers ran for ${SECONDS_FUZZ} s ($requests requests)" 4 "$finished"
if [ "$silent" -eq 0 ]; then
	ktap_ok "every rejection carried an extack message"
else
	ktap_fail "every rejection carried an extack message ($silent did not)"
	grep -h '^silent' "$FTV_TMP"/fuzz? | head -n 10 | ktap_diag
fi
read -r churned show_fails <"$FTV_TMP/churn"
ktap_eq "ftvctl show never failed meanwhile ($churned peers added and removed)" \
	0 "${show_fails:-1}"

ktap_check "both devices can be deleted" \
	sh -c "ip -n '$A' link del ftv0 && ip -n '$A' link del ftv1"
since()
{
	awk -v m="$mark" 'found { print } index($0, m) { found = 1 }' "$FTV_TMP/kmsg" |
		ftv_log_ours
}
# unmatched : objects created since the mark and not destroyed (objects of
# earlier tests destroyed meanwhile do not count)
unmatched()
{
	since | sed -n 's/.*ftv: \(.*\) \(created\|destroyed\)$/\2 \1/p' | awk '
		$1 == "created" { sub(/^created /, ""); live[$0]++ }
		$1 == "destroyed" { sub(/^destroyed /, ""); if (live[$0] > 0) live[$0]-- }
		END { for (o in live) if (live[o] > 0) print o }'
}
balanced() { [ -z "$(unmatched)" ]; }
if wait_for 20 balanced; then
	ktap_ok "every device, peer and connection created was destroyed"
else
	ktap_fail "every device, peer and connection created was destroyed"
	unmatched | head -n 10 | ktap_diag
fi
for kind in device peer connection; do
	ktap_diag "$kind: $(since | grep -c "ftv: .*$kind.* created") created," \
		"$(since | grep -c "ftv: .*$kind.* destroyed") destroyed"
done
kill "$kpid" 2>/dev/null
ktap_eq "the kernel reported nothing" "" \
	"$(since | grep -E "BUG|WARNING|Oops|KASAN|kmemleak|refcount_t|lockdep|general protection")"

ktap_finish
