#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ftv in five minutes: two hosts (network namespaces) joined by a cable
# (veth), an ftv tunnel between them set up with ftvctl, a ping through it,
# what the cable carries meanwhile, and an iperf3 run. Run by `make demo`
# in a VM, or on any machine with the module loaded.
#
#   alice                                        bob
#   +------------------------------+            +------------------------------+
#   | ftv0 10.9.0.1/24  (tunnel)   |            | ftv0 10.9.0.2/24  (tunnel)   |
#   | veth0 10.0.0.1/24 (cable)    |------------| veth0 10.0.0.2/24 (cable)    |
#   +------------------------------+            +------------------------------+
#   knows bob's endpoint 10.0.0.2:51820         listens on 51820

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

heading()
{
	echo
	echo "=== $* ==="
	echo
}

# run HOST CMD... : show the command as typed on HOST, then run it there
run()
{
	local host=$1 ns
	shift
	case $host in
	alice) ns=$ALICE ;;
	bob) ns=$BOB ;;
	esac
	if [ "$1" = sh ] && [ "$2" = -c ]; then
		echo "$host# $3"
	else
		echo "$host# $*"
	fi
	ip netns exec "$ns" "$@"
}

die()
{
	echo "demo: $*" >&2
	exit 1
}

ftv_module_loaded || ftv_load_module || die "cannot load the ftv module"
[ -x "$FTVCTL" ] || die "ftvctl not built (make tools)"
ns_create ALICE BOB || die "cannot create namespaces"
tmpdir
# Key files are named relative to here in the transcript.
cd "$FTV_TMP" || die "no temporary directory"
# Let run show plain "ftvctl" in the transcript.
PATH="$(dirname "$FTVCTL"):$PATH"
export PATH

heading "1. Two hosts and a cable"
ip link add name veth0 netns "$ALICE" type veth peer name veth0 netns "$BOB"
run alice ip addr add 10.0.0.1/24 dev veth0
run alice ip link set veth0 up
run bob ip addr add 10.0.0.2/24 dev veth0
run bob ip link set veth0 up

heading "2. Keys (the private keys stay in files; only public keys are shown)"
run alice sh -c "umask 077; ftvctl genkey > alice.key"
run alice sh -c "ftvctl pubkey < alice.key | tee alice.pub"
run bob sh -c "umask 077; ftvctl genkey > bob.key"
run bob sh -c "ftvctl pubkey < bob.key | tee bob.pub"

heading "3. The tunnel devices"
for host in alice bob; do
	n=1
	[ "$host" = bob ] && n=2
	run "$host" ip link add ftv0 type ftv || die "ip link add failed"
	run "$host" ip addr add "10.9.0.$n/24" dev ftv0
	run "$host" ip link set ftv0 up
done
run alice ip -d link show ftv0
run alice ftvctl set ftv0 private-key alice.key listen-port 51820 ||
	die "ftvctl set failed"
run alice ftvctl peer add ftv0 "$(cat bob.pub)" \
	endpoint 10.0.0.2:51820 allowed-ips 10.9.0.2/32 || die "ftvctl peer add failed"
run bob ftvctl set ftv0 private-key bob.key listen-port 51820 ||
	die "ftvctl set failed"
run bob ftvctl peer add ftv0 "$(cat alice.pub)" \
	allowed-ips 10.9.0.1/32 || die "ftvctl peer add failed"

heading "4. Configuration as ftvctl shows it"
run alice ftvctl show ftv0
echo
run bob ftvctl show ftv0

heading "5. A ping through the tunnel, and what the cable carries meanwhile"
ip netns exec "$ALICE" tcpdump -n -l -i veth0 -c 10 tcp \
	>"$FTV_TMP/tcpdump.out" 2>"$FTV_TMP/tcpdump.err" &
tpid=$!
bg_track "$tpid"
capturing()
{
	grep -q "listening on" "$FTV_TMP/tcpdump.err"
}
wait_for 10 capturing || die "tcpdump did not start"
run alice ping -c 5 -i 0.5 -W 5 10.9.0.2
ping_rc=$?
done_capturing()
{
	! kill -0 "$tpid" 2>/dev/null
}
# The ping made more than 10 segments; if not, more traffic finishes it.
wait_for 5 done_capturing ||
	ip netns exec "$ALICE" ping -q -c 5 -i 0.2 10.9.0.2 >/dev/null
wait_for 10 done_capturing || kill "$tpid" 2>/dev/null
echo
echo "alice# tcpdump -n -i veth0 -c 10 tcp    (the first 10 segments on the cable)"
cat "$FTV_TMP/tcpdump.out"
echo
echo "Only TCP between 10.0.0.1 and 10.0.0.2 port 51820: SYN, SYN-ACK, ACK, then data."

heading "6. Throughput (iperf3 -t 5 through the tunnel; emulated CPUs are slow)"
ip netns exec "$BOB" iperf3 -s -1 >"$FTV_TMP/iperf3-server.out" 2>&1 &
bg_track $!
iperf_listening()
{
	ip netns exec "$BOB" ss -Hltn 'sport = :5201' | grep -q .
}
wait_for 10 iperf_listening || die "iperf3 server did not start"
run alice iperf3 -c 10.9.0.2 -t 5 -f m
iperf_rc=$?

heading "7. Counters after the traffic"
run alice ftvctl show ftv0
echo
run bob ftvctl show ftv0
echo
run alice ip -s link show ftv0

heading "Done"
if [ "$ping_rc" -eq 0 ] && [ "$iperf_rc" -eq 0 ]; then
	echo "The tunnel works."
	exit 0
fi
echo "Something failed above (ping exit $ping_rc, iperf3 exit $iperf_rc)."
exit 1
