#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The measurements of `make bench`, run inside the VM that bench/run.sh
# boots (ftv.ko already loaded by scripts/vm-guest.sh). It measures and
# records; bench/report.py, on the host, turns the records into figures.
#
#	bench/guest.sh OUTDIR
#
#   A (client, sender A->B)                      B (iperf3 server)
#   +----------------------------------+        +----------------------------------+
#   | wg0  10.8.0.1  | ftv0 10.9.0.1   |        | wg0  10.8.0.2  | ftv0 10.9.0.2   |
#   | tun0 10.7.0.1 (OpenVPN over TCP) |        | tun0 10.7.0.2                    |
#   | veth0 10.0.0.1 (the cable) ------|--------|- veth0 10.0.0.2                  |
#   +----------------------------------+        +----------------------------------+
#
# Each configuration has namespaces of its own (A1/B1, A2/B2, ...), made
# afresh for every repeat, with only its own tunnel:
#   veth             the cable itself, offloads as they come (TSO/GSO/GRO on)
#   veth-nooffload   the cable with TSO, GSO, GRO and tx checksumming off
#   wireguard        WireGuard over the cable
#   ftv              ftv over the cable, set up as selftests/lib.sh does
#                    (forward error correction "auto", the default)
#   ftv-fecoff       the same with "fec off" on both ends (loss tests only)
#   ftv-shapeoff     the same with "shape off" on both ends (TCP tests only;
#                    not in the default set)
#   openvpn-tcp      userspace OpenVPN 2.6 over TCP (loss tests only)
# and, for the path and flows tests only, the same over a router R$IDX
# between A$IDX and B$IDX (as users test a tunnel: a delaying hop,
# offloads as they come):
#   path-tcp         plain TCP from A to B through R
#   path-wireguard   WireGuard, A's endpoint B's 10.0.1.2
#   path-ftv         ftv (fec auto), A's endpoint B's 10.0.1.2
#   path-ftv-fecoff  the same with "fec off" (1 stream A->B at 100 ms only)
#   path-ftv4        path-ftv with "flows 4" on A's peer (the session over
#                    four connections; in the path matrix at 40 ms without
#                    loss only, and in the flows test)
# and each repeat interleaves them: for every measurement, every
# configuration in turn.
#
#   A veth0 10.0.0.1 --- vethA 10.0.0.254  R  10.0.1.254 vethB --- veth0 10.0.1.2 B
#                        (netem: RTT/2, loss)   (netem: RTT/2, loss)
#
# R forwards; A and B route through it by default. R's two veths each
# delay what they send by half the round trip (and drop the loss given),
# so delay and loss apply each way. No offload is changed anywhere: veth's
# defaults stay (TSO and GSO on, GRO off). This is how users test, and the
# setup in which ftv once fell to 3 Mbit/s while WireGuard carried 150,
# which no short-path test built.
#
# Tests (BENCH_TESTS picks some): tcp1 and tcp4 (one and four TCP streams,
# A->B and B->A), pps and pps256 (64-byte and 256-byte UDP payloads
# as fast as iperf3 sends them; packets counted as received by B's tunnel
# device), rtt (idle ping round trips through each configuration), loss
# (one stream A->B with netem delay 10 ms and 0/0.1/0.5/1/5 %
# loss on both ends of the cable, cable offloads off so that netem drops
# wire packets, not GSO batches), path (the round-trip matrix through
# the router above: for every RTT in BENCH_RTTS and loss in
# BENCH_PATH_LOSS, 1 and 4 streams A->B and B->A, and 1 stream A->B at
# 100 ms for every loss in BENCH_PATH_FEC_LOSS; units named
# path_RTT_LOSS_pSTREAMS_DIR, e.g. path_100_1_p1_fwd; ftv's repair
# counts recorded beside each run), jitter (one stream A->B and B->A,
# units path_jitter_p1_fwd and _rev, through the same router with
# BENCH_JITTER, "10ms 3ms", of netem delay and jitter on each of its
# veths and no loss: a path that reorders, as Wi-Fi, link aggregation
# and multipath links do; ftv's repair counts recorded as for the path
# units), flows (one session over one
# connection, path-ftv, and over four, path-ftv4, through the router at
# 40 ms without loss: one stream A->B and B->A on the clean path, units
# flows_clean_p1_fwd and _rev, then the same with a censor's policer on
# R, flows_police_p1_fwd and _rev: nftables dropping what exceeds
# BENCH_POLICE_MBIT on each TCP connection, each way, installed for each
# policed run and removed after it; the sender's inner TCP retransmits
# are in iperf3's JSON, and A's count of connections replaced after
# stalling, ftvctl show's "rotations", is recorded after each run; then,
# path-ftv4 alone, against a censor, each on a tunnel made anew (both
# peers removed and added again, R's conntrack flushed): flows_hole_p1_fwd
# and _rev, one stream for BENCH_PATH_TIME + 6 s (12 at least) reported
# every 0.5 s, R dropping both ways of one of A's four connections (a
# join, never the opener) from 40 % of it on, and A's flows_up and
# rotations polled every 0.2 s until four are up again with one more
# replaced (10 s at most); flows_freeze_auto and flows_freeze_12k, R
# dropping what B sends on any connection that carried 16 KB towards A
# (conntrack accounting, as a censor freezes connections), A's peer with
# rotate auto, given 20 s of download to learn first (recorded as
# flows_freeze_auto_learning), or rotate 12k, then iperf3 -R for
# BENCH_PATH_TIME s with pings from A every 0.1 s beside it; the pings
# answered, the freeze's drops and the connections past 16 KB in R's
# conntrack are recorded after each run), aead
# (once a repeat, not per
# configuration: the kernel's ChaCha20-Poly1305 sealing and opening
# 1420-byte messages on one CPU, as tcrypt measures it: the ceiling the
# two CPUs' crypto puts on a stream whose every byte is sealed once and
# opened once). Through every run, /proc/stat and the receiving
# device's counters are sampled every half second (CPU per GB, packets per
# second). After the repeats, unless BENCH_WIRE=0: one and four ftv
# streams captured where each side sends, for tshark's view of the outer
# stream (out-of-order segments, retransmissions). After each repeat, both
# ends' ftvctl show --json, for the drop counters (replays above all).
# probe (not by default; after the repeats): ftvctl probe against each
# censor of bench/probe.sh, each one's selftest BENCH_PROBE_RUNS times
# (10), with the probe's time, bytes and the VM's CPU while it ran.
# With BENCH_PEERS=N, last: one device with N peers, ftv and WireGuard in
# turn (bench/peers.sh: setconf, show, kernel memory per peer, removing one
# peer, deleting the device, a ping through a real peer among them;
# BENCH_PEERS_REPEATS rounds, 1 by default).
#
# Written to OUTDIR: samples.jsonl (one line per measurement: the sampled
# counters and the name of iperf3's JSON output in OUTDIR/logs), guest/
# (kernel, CPU, /proc/crypto, modules, load average, device details).
# Nothing here judges a number: benchmarks are not tests.
#
# Environment: BENCH_QUICK=1 (1 repeat, 5 s runs), BENCH_REPEATS (3),
# BENCH_TIME (15 s per TCP run, after BENCH_OMIT=2 s not counted),
# BENCH_LOSS_TIME (8 s per loss step, after the same omission),
# BENCH_PPS_TIME (6 s), BENCH_PATH_TIME (10 s per path run, after
# BENCH_PATH_OMIT=3 s; 5 and 2 with BENCH_QUICK; BENCH_PATH_WARMUP=3 s of
# traffic, not measured, whenever a router's delay or loss changes),
# BENCH_TESTS ("tcp1 tcp4 pps pps256 rtt aead loss path jitter flows"),
# BENCH_JITTER ("10ms 3ms"), BENCH_CONFIGS
# ("veth veth-nooffload wireguard ftv ftv-fecoff openvpn-tcp path-tcp
# path-wireguard path-ftv path-ftv-fecoff path-ftv4"), BENCH_LOSS
# ("0 0.1 0.5 1 5"), BENCH_RTTS ("10 40 100 200", round trips in ms),
# BENCH_PATH_LOSS ("0 1", % each way), BENCH_PATH_FEC_LOSS ("0.1 0.5 5":
# the extra 1-stream rows at 100 ms; the three path lists may be set
# empty for none), BENCH_POLICE_MBIT (8: the flows test's policer, per
# TCP connection and direction, in Mbit/s of 2^20 bits, as nft counts:
# 8 is nft's "1 mbytes/second", outer headers included),
# BENCH_FLOWS_UNITS ("clean police hole freeze": the kinds of flows units
# run when BENCH_TESTS has flows, in that order whatever the order given),
# BENCH_FREEZE_ROTATE (12k: the budgets the freeze unit runs after rotate
# auto, one run each),
# BENCH_DELAY (10ms), BENCH_PROFILE (1, or 0 with BENCH_QUICK: an
# ftrace profile of one stream, and of the pps load, through WireGuard
# and ftv, after the measurements).

# The setups are called by name (cfg_CONFIG), wait_for calls its command,
# and pair_underlay's optional argument is not this script's.
# shellcheck disable=SC2317,SC2119

set -u

out=${1:?usage: bench/guest.sh OUTDIR}
out=$(cd "$out" && pwd) || exit 1
# shellcheck source-path=SCRIPTDIR source=../selftests/lib.sh
. "$(dirname "$0")/../selftests/lib.sh"
trap cleanup EXIT

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	: "${BENCH_REPEATS:=1}" "${BENCH_TIME:=5}" "${BENCH_OMIT:=1}"
	: "${BENCH_LOSS_TIME:=5}" "${BENCH_PPS_TIME:=4}"
	: "${BENCH_PATH_TIME:=5}" "${BENCH_PATH_OMIT:=2}"
fi
REPEATS=${BENCH_REPEATS:-3}
T=${BENCH_TIME:-15}
OMIT=${BENCH_OMIT:-2}
LOSS_T=${BENCH_LOSS_TIME:-8}
PPS_T=${BENCH_PPS_TIME:-6}
DELAY=${BENCH_DELAY:-10ms}
PATH_T=${BENCH_PATH_TIME:-10}
PATH_OMIT=${BENCH_PATH_OMIT:-3}
# The flows test's policer: POLICE_MBIT as a JSON number, POLICE_KB the
# same in nft's kbytes (2^10 bytes) per second: 8 -> 1024, "1 mbytes".
POLICE_MBIT=${BENCH_POLICE_MBIT:-8}
if ! [[ $POLICE_MBIT =~ ^[0-9]*\.?[0-9]+$ ]] ||
   ! POLICE_KB=$(awk -v p="$POLICE_MBIT" 'BEGIN { k = int(p * 128 + 0.5); print k; exit !(k > 0) }'); then
	echo "bench: BENCH_POLICE_MBIT must be a positive number of Mbit/s, not '$POLICE_MBIT'; using 8" >&2
	POLICE_MBIT=8 POLICE_KB=1024
fi
POLICE_MBIT=$(awk -v p="$POLICE_MBIT" 'BEGIN { printf "%g", p }')
# The kinds of flows units: clean, police, hole, freeze.
read -r -a FLOWS_KINDS <<<"${BENCH_FLOWS_UNITS:-clean police hole freeze}"
for kind in "${FLOWS_KINDS[@]}"; do
	case $kind in
	clean | police | hole | freeze) ;;
	*) echo "bench: BENCH_FLOWS_UNITS: no flows unit of kind '$kind' (clean, police, hole, freeze)" >&2 ;;
	esac
done
read -r -a TESTS <<<"${BENCH_TESTS:-tcp1 tcp4 pps pps256 rtt aead loss path jitter flows}"
read -r -a CONFIGS <<<"${BENCH_CONFIGS:-veth veth-nooffload wireguard ftv ftv-fecoff openvpn-tcp path-tcp path-wireguard path-ftv path-ftv-fecoff path-ftv4}"
read -r -a LOSSES <<<"${BENCH_LOSS:-0 0.1 0.5 1 5}"
# Set but empty, a path list means none (BENCH_PATH_FEC_LOSS="" drops the
# FEC rows), hence "-" and not ":-".
read -r -a RTTS <<<"${BENCH_RTTS-10 40 100 200}"
read -r -a PATH_LOSSES <<<"${BENCH_PATH_LOSS-0 1}"
read -r -a FEC_LOSSES <<<"${BENCH_PATH_FEC_LOSS-0.1 0.5 5}"

LOGS=$out/logs
GUEST=$out/guest
SAMPLES=$out/samples.jsonl
# Nothing of an earlier run: the report reads every file left here.
rm -rf "$LOGS" "$GUEST"
mkdir -p "$LOGS" "$GUEST"
: >"$SAMPLES"

say()
{
	echo "bench: $*"
}

# ---------------------------------------------------------------- records

# A process that stays in each namespace while a configuration is up:
# its /proc/PID/net/dev is the namespace's, read with no fork or exec,
# which would cost CPU time inside the measurement.
ANCHOR_A=
ANCHOR_B=

anchor_in()	# anchor_in NS : starts the anchor, prints its pid
{
	ip netns exec "$1" sleep 1d >/dev/null 2>&1 &
	echo $!
}

anchors()
{
	ANCHOR_A=$(anchor_in "$A")
	ANCHOR_B=$(anchor_in "$B")
	bg_track "$ANCHOR_A"
	bg_track "$ANCHOR_B"
	wait_for 10 grep -q veth0: "/proc/$ANCHOR_A/net/dev" &&
		wait_for 10 grep -q veth0: "/proc/$ANCHOR_B/net/dev"
}

# sample PID DEV : append [time, the 8 first CPU fields of /proc/stat
# (user nice system idle iowait irq softirq steal, all CPUs: the VM holds
# both ends of every test), DEV's rx_bytes, rx_packets] to SERIES, where
# DEV is in the namespace of process PID
SERIES=
FIRST=()
LAST=()
sample()
{
	local t=$EPOCHREALTIME name rest cpu=() rx=()

	read -r -a cpu </proc/stat
	while IFS=: read -r name rest; do
		if [ "${name//[[:space:]]/}" = "$2" ]; then
			read -r -a rx <<<"$rest"
			break
		fi
	done <"/proc/$1/net/dev"
	SERIES+="${SERIES:+,}[$t,$(IFS=,; echo "${cpu[*]:1:8}"),${rx[0]:-0},${rx[1]:-0}]"
	LAST=("${t/./}" "${rx[0]:-0}" "${rx[1]:-0}")
	[ ${#FIRST[@]} -gt 0 ] || FIRST=("${LAST[@]}")
}

# record REPEAT CONFIG TEST IPERF-JSON RC [EXTRA-JSON] : one line of
# samples.jsonl, with SERIES
record()
{
	printf '{"repeat":%d,"config":"%s","test":"%s","iperf":"%s","rc":%d,"series":[%s]%s}\n' \
		"$1" "$2" "$3" "${4#"$out"/}" "$5" "$SERIES" "${6:+,$6}" >>"$SAMPLES"
}

# progress RC IPERF-JSON : a line for the log, from the first and last
# samples (the whole run, as the receiving device counted it), with no
# process started but in failure
progress()
{
	local us=$((LAST[0] - FIRST[0])) bits pkts

	[ "$us" -gt 0 ] || us=1
	bits=$(((LAST[1] - FIRST[1]) * 80 / us))
	pkts=$(((LAST[2] - FIRST[2]) * 10000 / us))
	echo "$((bits / 10)).$((bits % 10)) Mbit/s, $((pkts / 10)).$((pkts % 10)) kpps" \
		"received (device, whole run)"
	if [ "$1" -ne 0 ]; then
		echo "  iperf3 exit $1: $(grep -m1 '"error"' "$2" 2>/dev/null)"
	fi
}

# ---------------------------------------------------------------- runs

# Set by each configuration's setup: the address B's iperf3 server
# listens on through the thing measured, and the devices that receive.
ADDR_B=
DEV_A=
DEV_B=

# iperf_server_up : B has a TCP socket listening on 5201 (0x1451), read
# from its /proc/net/tcp*, with no process started
iperf_server_up()
{
	local f local_addr st rest

	for f in "/proc/$ANCHOR_B/net/tcp" "/proc/$ANCHOR_B/net/tcp6"; do
		while read -r _ local_addr _ st rest; do
			[ "${local_addr##*:}" = 1451 ] && [ "$st" = 0A ] && return 0
		done <"$f"
	done
	return 1
}

# measure REPEAT CONFIG TEST SECONDS OMIT RX-ANCHOR RXDEV IPERF-ARGS... :
# iperf3 in A against B's server, with the counters sampled every half
# second from just before it starts until it has ended. With DURING set,
# the command DURING runs in the background beside iperf3, given the
# EPOCHREALTIME iperf3 was started at, and the run is recorded once both
# have ended.
measure()
{
	local r=$1 cfg=$2 test=$3 secs=$4 omit=$5 anchor=$6 rxdev=$7 pid rc t0
	local json=$LOGS/r$1-$2-$3.json during=
	shift 7

	wait_for 10 iperf_server_up || say "iperf3 server in B is not listening"
	SERIES=''
	FIRST=()
	LAST=()
	sample "$anchor" "$rxdev"
	t0=$EPOCHREALTIME
	timeout -k 5 $((secs + omit + 60)) ip netns exec "$A" \
		iperf3 -c "$ADDR_B" -J -t "$secs" -O "$omit" "$@" >"$json" 2>&1 &
	pid=$!
	if [ -n "${DURING:-}" ]; then
		"$DURING" "$t0" &
		during=$!
	fi
	while kill -0 "$pid" 2>/dev/null; do
		sleep 0.5
		sample "$anchor" "$rxdev"
	done
	wait "$pid"
	rc=$?
	[ -z "$during" ] || wait "$during"
	record "$r" "$cfg" "$test" "$json" "$rc" "${EXTRA:-}"
	say "r$r $cfg $test: $(progress "$rc" "$json")"
	# The server takes a moment to be ready for the next client.
	sleep 0.5
}

# rtt REPEAT CONFIG : 30 pings from A to B through CONFIG, 0.1 s apart,
# with nothing else running; the median round trip in ms
rtt()
{
	local r=$1 cfg=$2 log=$LOGS/r$1-$2-rtt.log med

	ip netns exec "$A" ping -n -c 30 -i 0.1 "$ADDR_B" >"$log" 2>&1
	med=$(sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' "$log" | sort -g |
		awk '{ v[NR] = $1 }
			END {
				if (NR % 2) m = v[(NR + 1) / 2]
				else if (NR) m = (v[NR / 2] + v[NR / 2 + 1]) / 2
				if (NR) print m
			}')
	printf '{"repeat":%d,"config":"%s","test":"rtt","rc":%d,"rtt_ms":%s}\n' \
		"$r" "$cfg" "$([ -n "$med" ]; echo $?)" "${med:-null}" >>"$SAMPLES"
	say "r$r $cfg rtt: median ${med:-?} ms"
}

# aead_ceiling REPEAT : tcrypt's speed test of the kernel's ChaCha20-Poly1305
# AEAD on the CPU it runs on (mode 213: rfc7539esp(chacha20,poly1305),
# which seals as ftv's rfc7539 does, with 8 more bytes of associated
# data), one second per message size; the 1420-byte sealing and opening
# figures are kept. A stream's bytes are each sealed once and opened once:
# on two CPUs that caps it at 2 / (1/seal + 1/open) (report.py).
# tcrypt always refuses to stay loaded, so modprobe "fails".
aead_ceiling()
{
	local r=$1 mark bytes secs obytes osecs

	mark="ftv-bench-aead-$r-$$"
	echo "$mark" >/dev/kmsg
	taskset -c 0 modprobe tcrypt mode=213 sec=1 >/dev/null 2>&1
	dmesg | sed -n "/$mark/,\$p" >"$LOGS/r$r-aead.log"
	# "... (256 bit key, 1420 byte blocks): 12345 operations in 1 seconds (17529900 bytes)"
	read -r bytes secs < <(aead_figures encryption "$LOGS/r$r-aead.log")
	read -r obytes osecs < <(aead_figures decryption "$LOGS/r$r-aead.log")
	printf '{"repeat":%d,"config":"aead","test":"aead","rc":%d,"bytes":%s,"seconds":%s,"open_bytes":%s,"open_seconds":%s}\n' \
		"$r" "$([ -n "$bytes" ]; echo $?)" "${bytes:-null}" "${secs:-null}" \
		"${obytes:-null}" "${osecs:-null}" >>"$SAMPLES"
	say "r$r aead: ${bytes:-?} bytes sealed in ${secs:-?} s, ${obytes:-?} opened in ${osecs:-?} s (1420-byte messages, one CPU)"
}

# aead_figures encryption|decryption LOG : "BYTES SECONDS" of tcrypt's
# 1420-byte line in that part of LOG, or nothing
aead_figures()
{
	awk -v want="$1" '/testing speed of / { on = index($0, want) > 0 }
		on && / 1420 byte blocks/ {
			if (match($0, /in [0-9]+ seconds/))
				secs = substr($0, RSTART + 3, RLENGTH - 11)
			if (match($0, /\([0-9]+ bytes\)/))
				bytes = substr($0, RSTART + 1, RLENGTH - 8)
			print bytes, secs
			exit
		}' "$2"
}

# netem NS DEV LOSS [DELAY] : delay (default $DELAY) and loss on DEV's
# egress
netem()
{
	local loss=()

	[ "$3" != 0 ] && loss=(loss "$3%")
	ip -n "$1" link set "$2" txqueuelen 10000
	tc -n "$1" qdisc replace dev "$2" root netem delay "${4:-$DELAY}" \
		"${loss[@]}" limit 100000
}

# path_netem RTT LOSS : the round trip RTT (ms) and LOSS (%, each way)
# on the current configuration's router: half the delay on each of R's
# veths, each delaying and dropping what it sends on
path_netem()
{
	local half

	half=$(awk -v r="$1" 'BEGIN { printf "%gms", r / 2 }')
	netem "$R" vethA "$2" "$half" && netem "$R" vethB "$2" "$half"
}

offloads_off()
{
	local ns
	for ns in "$A" "$B"; do
		ip netns exec "$ns" ethtool -K veth0 tso off gso off gro off tx off \
			>/dev/null 2>&1 || return 1
	done
}

# run REPEAT CONFIG UNIT : one measurement, with CONFIG in use
run()
{
	local r=$1 cfg=$2 unit=$3 loss

	case $unit in
	tcp?_fwd)
		measure "$r" "$cfg" "$unit" "$T" "$OMIT" "$ANCHOR_B" "$DEV_B" \
			-P "${unit:3:1}" ;;
	tcp?_rev)
		measure "$r" "$cfg" "$unit" "$T" "$OMIT" "$ANCHOR_A" "$DEV_A" \
			-P "${unit:3:1}" -R ;;
	pps)
		measure "$r" "$cfg" pps "$PPS_T" 0 "$ANCHOR_B" "$DEV_B" \
			-u -l 64 -b 0 ;;
	pps256)
		measure "$r" "$cfg" pps256 "$PPS_T" 0 "$ANCHOR_B" "$DEV_B" \
			-u -l 256 -b 0 ;;
	rtt)
		rtt "$r" "$cfg" ;;
	loss_*)
		loss=${unit#loss_}
		if [ -z "${LOSSY[$cfg]:-}" ]; then
			offloads_off || say "$cfg: could not turn offloads off on the cable"
			LOSSY[$cfg]=1
		fi
		if ! netem "$A" veth0 "$loss" || ! netem "$B" veth0 "$loss"; then
			say "$cfg: netem failed"
			return 1
		fi
		case $cfg in ftv*) read -r rep0 pkt0 < <(fec_counts) ;; esac
		EXTRA="\"loss\":$loss,\"delay\":\"$DELAY\"" \
			measure "$r" "$cfg" "$unit" "$LOSS_T" "$OMIT" "$ANCHOR_B" "$DEV_B"
		case $cfg in
		ftv*)
			read -r rep1 pkt1 < <(fec_counts)
			fec_record "$r" "$cfg" "$unit" $((rep1 - rep0)) $((pkt1 - pkt0))
			;;
		esac ;;
	path_jitter_*)
		run_jitter "$r" "$cfg" "$unit" ;;
	path_*)
		run_path "$r" "$cfg" "$unit" ;;
	flows_hole_*)
		run_hole "$r" "$cfg" "$unit" ;;
	flows_freeze_*)
		run_freeze "$r" "$cfg" "$unit" ;;
	flows_*)
		run_flows "$r" "$cfg" "$unit" ;;
	esac
}

# fec_record REPEAT CONFIG UNIT REPAIRS PACKETS : the repair messages the
# sender's ftv sent during UNIT, and all the packets it sent
fec_record()
{
	printf '{"repeat":%d,"config":"%s","test":"fec_%s","rc":0,"repairs":%d,"packets":%d}\n' \
		"$@" >>"$SAMPLES"
}

# path_warmup : BENCH_PATH_WARMUP seconds (default 3, 0 for none) of one
# stream each way, not measured, each time a router's path changes: a
# tunnel in use has seen its path before a new flow starts. For ftv that
# is what fec auto needs to learn the loss (each end measures what
# arrives, and the other hears of it a few hundred messages later) and to
# forget it on a clean path; without it the first flow on a path that
# turned lossy that very moment takes its slow-start losses unprotected,
# and the one after a lossy step pays for repair messages it no longer
# needs. Both ways, since each direction's estimate learns only from
# what travels that way. Every configuration gets the same.
path_warmup()
{
	local secs=${BENCH_PATH_WARMUP:-3} dir

	[ "$secs" -gt 0 ] || return 0
	for dir in "" -R; do
		wait_for 10 iperf_server_up || return 0
		# shellcheck disable=SC2086 # no option, or one
		timeout -k 5 $((secs + 30)) ip netns exec "$A" \
			iperf3 -c "$ADDR_B" -t "$secs" $dir >/dev/null 2>&1
		sleep 0.5
	done
}

# run_path REPEAT CONFIG UNIT : one run of the path matrix. UNIT is
# path_RTT_LOSS_pSTREAMS_DIR; the router's netem is set when the last run
# of this configuration had another RTT or loss.
run_path()
{
	local r=$1 cfg=$2 unit=$3 rtt loss p dir rep0 pkt0 rep1 pkt1
	local side=A anchor=$ANCHOR_B dev=$DEV_B rev=()

	IFS=_ read -r _ rtt loss p dir <<<"$unit"
	if [ "${NETEM[$cfg]:-}" != "$rtt $loss" ]; then
		if ! path_netem "$rtt" "$loss"; then
			say "$cfg: netem failed"
			NETEM[$cfg]=
			return 1
		fi
		NETEM[$cfg]="$rtt $loss"
		path_warmup
	fi
	# B->A: B sends, A's device receives (and B's ftv sends the repairs).
	[ "$dir" = rev ] && side=B anchor=$ANCHOR_A dev=$DEV_A rev=(-R)
	case $cfg in path-ftv*) read -r rep0 pkt0 < <(fec_counts "$side") ;; esac
	EXTRA="\"rtt_ms\":$rtt,\"loss\":$loss" \
		measure "$r" "$cfg" "$unit" "$PATH_T" "$PATH_OMIT" "$anchor" "$dev" \
		-P "${p#p}" "${rev[@]}"
	case $cfg in
	path-ftv*)
		read -r rep1 pkt1 < <(fec_counts "$side")
		fec_record "$r" "$cfg" "$unit" $((rep1 - rep0)) $((pkt1 - pkt0))
		;;
	esac
}

# The jitter test's path: each of R's veths delays what it sends by
# BENCH_JITTER (netem's delay and jitter, "10ms 3ms": a 20 ms round trip
# whose packets come out of order, as netem reorders under jitter), no
# loss.
JITTER=${BENCH_JITTER:-10ms 3ms}

# run_jitter REPEAT CONFIG UNIT : one stream through the jittery path,
# UNIT path_jitter_p1_fwd (A->B) or _rev; the router's netem is set when
# this configuration's last run had another path
run_jitter()
{
	local r=$1 cfg=$2 unit=$3 dev side=A anchor=$ANCHOR_B rdev=$DEV_B
	local rev=() rep0 pkt0 rep1 pkt1

	if [ "${NETEM[$cfg]:-}" != jitter ]; then
		for dev in vethA vethB; do
			# shellcheck disable=SC2086 # delay and jitter are words
			if ! tc -n "$R" qdisc replace dev "$dev" root netem \
				delay $JITTER limit 100000; then
				say "$cfg: netem failed"
				NETEM[$cfg]=
				return 1
			fi
		done
		NETEM[$cfg]=jitter
		path_warmup
	fi
	[ "${unit##*_}" = rev ] && side=B anchor=$ANCHOR_A rdev=$DEV_A rev=(-R)
	case $cfg in path-ftv*) read -r rep0 pkt0 < <(fec_counts "$side") ;; esac
	EXTRA="\"jitter\":\"$JITTER\"" \
		measure "$r" "$cfg" "$unit" "$PATH_T" "$PATH_OMIT" "$anchor" \
		"$rdev" "${rev[@]}"
	case $cfg in
	path-ftv*)
		read -r rep1 pkt1 < <(fec_counts "$side")
		fec_record "$r" "$cfg" "$unit" $((rep1 - rep0)) $((pkt1 - pkt0))
		;;
	esac
}

# The flows test's path: 40 ms round trip, no loss.
FLOWS_RTT=40

# flows_path CONFIG : the current configuration's router at FLOWS_RTT
# without loss, its netem set (and the path warmed up) when this
# configuration's last run had another
flows_path()
{
	if [ "${NETEM[$1]:-}" != "$FLOWS_RTT 0" ]; then
		if ! path_netem "$FLOWS_RTT" 0; then
			say "$1: netem failed"
			NETEM[$1]=
			return 1
		fi
		NETEM[$1]="$FLOWS_RTT 0"
		path_warmup
	fi
}

# police_on : on the current configuration's router, a censor's policer:
# every TCP connection to or from ftv's port, each direction apart (a
# dynamic set keyed by the 4-tuple), dropped beyond POLICE_KB kbytes a
# second
police_on()
{
	nsx "$R" nft -f - <<NFT
table ip censor {
	set policed {
		type ipv4_addr . inet_service . ipv4_addr . inet_service
		flags dynamic
		timeout 5m
	}
	chain forward {
		type filter hook forward priority filter - 10; policy accept;
		tcp dport $FTV_PORT update @policed { ip saddr . tcp sport . ip daddr . tcp dport limit rate over $POLICE_KB kbytes/second burst 64 kbytes } counter drop
		tcp sport $FTV_PORT update @policed { ip saddr . tcp sport . ip daddr . tcp dport limit rate over $POLICE_KB kbytes/second burst 64 kbytes } counter drop
	}
}
NFT
}

# police_off : the policer gone (a no-op without it)
police_off()
{
	nsx "$R" nft delete table ip censor 2>/dev/null
	return 0
}

# rotations_now : "ROTATIONS FLOWS_UP" of A's only peer, each a number or
# null (a module or ftvctl without them; show failing)
rotations_now()
{
	local v

	v=$(ftv_json "$A" ftv0 '" ".join(json.dumps(d["peers"][0].get(k)) for k in ("rotations", "flows_up"))' 2>/dev/null)
	[[ $v =~ ^([0-9]+|null)\ ([0-9]+|null)$ ]] || v="null null"
	echo "$v"
}

# run_flows REPEAT CONFIG UNIT : one run of the flows test. UNIT is
# flows_KIND_pSTREAMS_DIR, KIND clean or police; the router's netem is
# set to FLOWS_RTT without loss when this configuration's last run had
# another, and with KIND police R polices each connection for this run
# only. After it, a line "rotations_UNIT" with A's count of its peer's
# connections replaced after stalling, before and after the run, and
# its connections up after it.
run_flows()
{
	local r=$1 cfg=$2 unit=$3 kind p dir rot0 up0 rot1 up1 flows=1 extra
	local anchor=$ANCHOR_B dev=$DEV_B rev=()

	IFS=_ read -r _ kind p dir <<<"$unit"
	flows_path "$cfg" || return 1
	[ "$dir" = rev ] && anchor=$ANCHOR_A dev=$DEV_A rev=(-R)
	[ "$cfg" = path-ftv4 ] && flows=4
	extra="\"rtt_ms\":$FLOWS_RTT,\"loss\":0,\"flows\":$flows"
	read -r rot0 up0 < <(rotations_now)
	if [ "$kind" = police ]; then
		if ! police_on; then
			say "$cfg: cannot set up R's policer (nft)"
			police_off
			return 1
		fi
		extra+=",\"police_mbit\":$POLICE_MBIT,\"police_kbytes\":$POLICE_KB"
	fi
	EXTRA=$extra measure "$r" "$cfg" "$unit" "$PATH_T" "$PATH_OMIT" \
		"$anchor" "$dev" -P "${p#p}" "${rev[@]}"
	[ "$kind" = police ] && police_off
	read -r rot1 up1 < <(rotations_now)
	printf '{"repeat":%d,"config":"%s","test":"rotations_%s","rc":0,"rotations_before":%s,"rotations":%s,"flows_up_before":%s,"flows_up":%s}\n' \
		"$r" "$cfg" "$unit" "$rot0" "$rot1" "$up0" "$up1" >>"$SAMPLES"
	say "r$r $cfg $unit: connections replaced ${rot0/null/?} -> ${rot1/null/?}," \
		"up ${up0/null/?} -> ${up1/null/?}"
}

# ------------------------------------------------ flows: against a censor

# The censor's units run on path-ftv4 alone, with its four connections.
CENSOR_FLOWS=4
# R's view of A and B in the path configurations (path_underlay).
PATH_A4=10.0.0.1
PATH_B4=10.0.1.2
# The freeze: what a connection may carry towards A (the client) before
# R drops what B sends on it, in bytes as conntrack counts them (IP
# headers included); and rotate auto's download to learn from, in s.
FREEZE_BYTES=16384
FREEZE_LEARN=20

# us_s MICROSECONDS : the same in seconds, to the millisecond ("1.234")
us_s()
{
	local us=$1

	[ "$us" -ge 0 ] || us=0
	printf '%d.%03d' $((us / 1000000)) $((us % 1000000 / 1000))
}

# jnum VALUE : VALUE if it is a number, else null (for a JSON line)
jnum()
{
	if [[ ${1:-} =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
		echo "$1"
	else
		echo null
	fi
}

# flows_now : "FLOWS_UP ROTATIONS" of A's only peer, each a number or
# null, read from ftvctl's JSON by bash alone: no Python started five
# times a second beside a measurement
flows_now()
{
	local j up=null rot=null
	local re_up='"flows_up": ([0-9]+)' re_rot='"rotations": ([0-9]+)'

	j=$(nsx "$A" "$FTVCTL" show ftv0 --json 2>/dev/null)
	[[ $j =~ $re_up ]] && up=${BASH_REMATCH[1]}
	[[ $j =~ $re_rot ]] && rot=${BASH_REMATCH[1]}
	echo "$up $rot"
}

# nft_drops TABLE : the packets the drop rules of R's table ip TABLE
# dropped so far (0 without the table)
nft_drops()
{
	nsx "$R" nft list table ip "$1" 2>/dev/null |
		awk '/ drop/ { for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) }
			END { print n + 0 }'
}

# conn_ports : A's ports of the established connections from A to B's
# ftv port in R's conntrack, one a line (none while R tracks nothing).
# conntrack -L prints the original direction's src=, dst=, sport= and
# dport= first, then the reply's.
conn_ports()
{
	nsx "$R" conntrack -L -p tcp --dport "$FTV_PORT" 2>/dev/null |
		awk -v a="$PATH_A4" -v b="$PATH_B4" '
			/ ESTABLISHED / {
				split("", f)
				for (i = 1; i <= NF; i++)
					if (split($i, kv, "=") == 2 && !(kv[1] in f))
						f[kv[1]] = kv[2]
				if (f["src"] == a && f["dst"] == b && f["sport"] != "")
					print f["sport"]
			}'
}

# flows_fresh REPEAT CONFIG UNIT ROTATE FLOWS : the current
# configuration's tunnel made anew, for a unit that must see its
# connections from their SYN on, or a rotate auto that has learned
# nothing yet: both ends' show --json kept first (guest/CONFIG-A-rREPEAT-
# UNIT.json and -B-, whose drop counters report.py adds to the
# repeat's), both peers removed, R's conntrack flushed once what was in
# flight has gone, the peers added again as pair_ftv added them, A's
# with "flows FLOWS rotate ROTATE", and the tunnel up with FLOWS
# connections. Sets FRESH_KEY, B's key, A's peer.
FRESH_KEY=
flows_fresh()
{
	local r=$1 cfg=$2 unit=$3 rot=$4 flows=$5 a b kb ep aips ka bips

	a=$(ftv_json "$A" ftv0 '" ".join([d["peers"][0]["public_key"], d["peers"][0]["endpoint"] or "-", ",".join(d["peers"][0]["allowed_ips"])])') &&
		b=$(ftv_json "$B" ftv0 '" ".join([d["peers"][0]["public_key"], ",".join(d["peers"][0]["allowed_ips"])])') ||
		return 1
	read -r kb ep aips <<<"$a"
	read -r ka bips <<<"$b"
	[ -n "$aips" ] && [ -n "$bips" ] && [ "$ep" != - ] || return 1
	FRESH_KEY=$kb
	nsx "$A" "$FTVCTL" show ftv0 --json >"$GUEST/$cfg-A-r$r-$unit.json" 2>&1
	nsx "$B" "$FTVCTL" show ftv0 --json >"$GUEST/$cfg-B-r$r-$unit.json" 2>&1
	nsx "$A" "$FTVCTL" peer del ftv0 "$kb" &&
		nsx "$B" "$FTVCTL" peer del ftv0 "$ka" || return 1
	# netem holds 20 ms each way: nothing of the old connections is left
	# in flight to be picked up after the flush
	sleep 0.5
	nsx "$R" conntrack -F >/dev/null 2>&1
	nsx "$B" "$FTVCTL" peer add ftv0 "$ka" allowed-ips "$bips" &&
		nsx "$A" "$FTVCTL" peer add ftv0 "$kb" endpoint "$ep" \
			allowed-ips "$aips" flows "$flows" rotate "$rot" || return 1
	connect_ping "$A" "$ADDR_B" && wait_for 30 flows_up_is "$kb" "$flows"
}

# hole_prepare : R's table for the black hole, with no hole yet: a rule
# on conntrack's state, which makes R track connections (conntrack runs
# in a namespace only once a rule there needs it), so that A's can be
# found in R's conntrack
hole_prepare()
{
	nsx "$R" nft -f - <<NFT
table ip hole {
	chain forward {
		type filter hook forward priority filter - 10; policy accept;
		ct state invalid counter
	}
}
NFT
}

# hole_on PORT : R drops both ways of A's connection from PORT to B
hole_on()
{
	nsx "$R" nft -f - <<NFT
add rule ip hole forward ip saddr $PATH_A4 tcp sport $1 ip daddr $PATH_B4 tcp dport $FTV_PORT counter drop
add rule ip hole forward ip saddr $PATH_B4 tcp sport $FTV_PORT ip daddr $PATH_A4 tcp dport $1 counter drop
NFT
}

# hole_off : the hole's table gone (a no-op without it)
hole_off()
{
	nsx "$R" nft delete table ip hole 2>/dev/null
	return 0
}

# hole_during T0 : beside a run of the hole test, started with iperf3 (T0
# its EPOCHREALTIME): HOLE_AT_US after T0, R drops both ways of one of
# A's connections, the established one with the highest port of A's but
# the opener's (HOLE_OPENER); then every 0.2 s A's flows_up and
# rotations (to HOLE_POLLS) until CENSOR_FLOWS are up again with more
# replaced than when the hole was made, or 10 s have passed. Writes
# "HOLE_AT_S PORT UP_AGAIN_S ROTATIONS_AT_HOLE" to HOLE_OUT, the times in
# s from T0 and from the hole, each a number or null.
hole_during()
{
	local t0=${1/./} th now wait port up rot rot0=null up_again=null

	echo "null null null null" >"$HOLE_OUT"
	now=${EPOCHREALTIME/./}
	wait=$((t0 + HOLE_AT_US - now))
	[ "$wait" -le 0 ] || sleep "$(us_s "$wait")"
	port=$(conn_ports | grep -vxF -e "${HOLE_OPENER:-none}" | sort -n | tail -n 1)
	[ -n "$port" ] || return 0
	read -r _ rot0 < <(flows_now)
	hole_on "$port" || return 0
	th=${EPOCHREALTIME/./}
	: >"$HOLE_POLLS"
	now=$th
	while [ $((now - th)) -lt 10000000 ]; do
		sleep 0.2
		read -r up rot < <(flows_now)
		now=${EPOCHREALTIME/./}
		echo "$(us_s $((now - th))) $up $rot" >>"$HOLE_POLLS"
		if [[ $up =~ ^[0-9]+$ && $rot =~ ^[0-9]+$ && $rot0 =~ ^[0-9]+$ ]] &&
		   [ "$up" -ge "$CENSOR_FLOWS" ] && [ "$rot" -gt "$rot0" ]; then
			up_again=$(us_s $((now - th)))
			break
		fi
	done
	echo "$(us_s $((th - t0))) $port $up_again $rot0" >"$HOLE_OUT"
}

# run_hole REPEAT CONFIG UNIT : one run of the hole test, UNIT
# flows_hole_pSTREAMS_DIR. R tracks connections; the tunnel is made anew
# with flows 1, so that the only connection R finds is the opener (whose
# loss would take a new session, not a new connection: not this test),
# then flows 4; iperf3 runs PATH_T + 6 s (12 at least), reporting every
# 0.5 s, nothing omitted, hole_during beside it; the hole goes after
# both. Then a line "extra_UNIT": when the hole was made (s after iperf3
# started), the port of A's it cut, the opener's, the segments it
# dropped, when four connections were up again (s after the hole, null
# if not within 10 s), A's rotations when it was made and after the run,
# and its connections up.
run_hole()
{
	local r=$1 cfg=$2 unit=$3 p dir secs opener n drops up rot line
	local hole_at=null port=null up_again=null rot0=null
	local anchor=$ANCHOR_B dev=$DEV_B rev=()

	IFS=_ read -r _ _ p dir <<<"$unit"
	flows_path "$cfg" || return 1
	secs=$((PATH_T + 6))
	[ "$secs" -ge 12 ] || secs=12
	if ! hole_prepare; then
		say "$cfg: cannot set up R's table for the hole (nft)"
		hole_off
		return 1
	fi
	if ! flows_fresh "$r" "$cfg" "$unit" auto 1; then
		say "$cfg: the tunnel made anew for $unit did not come up"
		hole_off
		return 1
	fi
	opener=$(conn_ports)
	n=$(grep -c . <<<"$opener")
	if [ "$n" != 1 ]; then
		say "$cfg: $n connections of A's in R's conntrack with flows 1:" \
			"which is the opener is not known, and it may be cut"
		opener=
	fi
	if ! nsx "$A" "$FTVCTL" peer set ftv0 "$FRESH_KEY" flows "$CENSOR_FLOWS" ||
	   ! wait_for 30 flows_up_is "$FRESH_KEY" "$CENSOR_FLOWS"; then
		say "$cfg: A does not have $CENSOR_FLOWS connections up for $unit"
		hole_off
		return 1
	fi
	[ "$dir" = rev ] && anchor=$ANCHOR_A dev=$DEV_A rev=(-R)
	HOLE_AT_US=$((secs * 400000)) HOLE_OPENER=$opener
	HOLE_OUT=$LOGS/r$r-$cfg-$unit-hole.txt
	HOLE_POLLS=$LOGS/r$r-$cfg-$unit-polls.txt
	EXTRA="\"rtt_ms\":$FLOWS_RTT,\"loss\":0,\"flows\":$CENSOR_FLOWS,\"seconds\":$secs" \
		DURING=hole_during measure "$r" "$cfg" "$unit" "$secs" 0 \
		"$anchor" "$dev" -P "${p#p}" -i 0.5 "${rev[@]}"
	drops=$(nft_drops hole)
	hole_off
	read -r hole_at port up_again rot0 <"$HOLE_OUT"
	read -r up rot < <(flows_now)
	line=$(printf '{"repeat":%d,"config":"%s","test":"extra_%s","rc":0,"hole_at_s":%s,"hole_port":%s,"opener_port":%s,"hole_drops":%s,"up_again_s":%s,"rotations_at_hole":%s,"rotations":%s,"flows_up":%s}' \
		"$r" "$cfg" "$unit" "$(jnum "$hole_at")" "$(jnum "$port")" \
		"$(jnum "$opener")" "$(jnum "$drops")" "$(jnum "$up_again")" \
		"$(jnum "$rot0")" "$(jnum "$rot")" "$(jnum "$up")")
	echo "$line" >>"$SAMPLES"
	say "r$r $cfg $unit: hole at ${hole_at/null/?} s on A's port" \
		"${port/null/?} (${drops:-?} segments dropped); $CENSOR_FLOWS up" \
		"again after ${up_again/null/more than 10} s"
}

# freeze_on : on the current configuration's router, a censor that
# freezes every TCP connection from B's ftv port once its reply direction
# (B to A, towards the client) carried FREEZE_BYTES: what B sends on it
# is dropped. Conntrack accounting counts the bytes; the connections
# made from here on are counted.
freeze_on()
{
	nsx "$R" nft -f - <<NFT || return 1
table ip freeze {
	chain forward {
		type filter hook forward priority filter - 10; policy accept;
		ip saddr $PATH_B4 tcp sport $FTV_PORT ct reply bytes > $FREEZE_BYTES counter drop
	}
}
NFT
	# The sysctl exists once the rule's ct expression has loaded conntrack.
	nsx "$R" sysctl -qw net.netfilter.nf_conntrack_acct=1
}

# freeze_off : the freeze gone (a no-op without it), accounting off
freeze_off()
{
	nsx "$R" nft delete table ip freeze 2>/dev/null
	nsx "$R" sysctl -qw net.netfilter.nf_conntrack_acct=0 2>/dev/null
	return 0
}

# crossed : connections in R's conntrack that carried more than
# FREEZE_BYTES towards A (the second bytes= of a line is the reply
# direction's)
crossed()
{
	nsx "$R" conntrack -L -p tcp --dport "$FTV_PORT" 2>/dev/null |
		awk -v f="$FREEZE_BYTES" '{
			n = 0
			for (i = 1; i <= NF; i++)
				if ($i ~ /^bytes=/ && ++n == 2) {
					split($i, a, "=")
					if (a[2] + 0 > f)
						c++
				}
		} END { print c + 0 }'
}

# ping_during T0 : beside a measured download of the freeze test, pings
# from A to B's tunnel address every 0.1 s for PATH_T s, to PING_LOG
ping_during()
{
	timeout -k 5 $((PATH_T + 30)) ip netns exec "$A" \
		ping -n -i 0.1 -c $((PATH_T * 10)) "$ADDR_B" >"$PING_LOG" 2>&1
}

# ping_figures LOG : "SENT ANSWERED GAP_S" of ping's output in LOG: the
# summary's counts, and the longest run of sequence numbers (1 to SENT)
# with no answer, times 0.1 s; "null null null" without a summary
ping_figures()
{
	if [ ! -s "$1" ]; then
		echo "null null null"
		return
	fi
	awk '
		/ bytes from / && !/DUP!/ {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^icmp_[rs]eq=/) {
					split($i, kv, "=")
					got[kv[2] + 0] = 1
				}
		}
		/ packets transmitted, / { sent = $1; answered = $4 }
		END {
			if (sent == "") {
				print "null null null"
				exit
			}
			for (s = 1; s <= sent; s++)
				if (s in got)
					run = 0
				else if (++run > max)
					max = run
			printf "%d %d %.1f\n", sent, answered, max / 10
		}' "$1"
}

# run_freeze REPEAT CONFIG UNIT : one run of the freeze test, UNIT
# flows_freeze_ROTATE (auto, or a budget: 12k). R freezes (freeze_on);
# the tunnel is made anew with A's "rotate ROTATE"; with rotate auto,
# FREEZE_LEARN s of download first, for it to learn from (recorded as
# UNIT_learning); then the download measured, iperf3 -R for PATH_T s
# with nothing omitted, and ping_during beside it. Then a line
# "extra_UNIT": the pings sent and answered, the longest run unanswered
# (s), the segments the freeze dropped during the measured download (and
# during the learning, with A's rotations after it), the connections in
# R's conntrack past FREEZE_BYTES towards A after the run, A's rotations
# and its connections up. The freeze goes, and A's peer is back at rotate
# auto.
run_freeze()
{
	local r=$1 cfg=$2 unit=$3 rot=${3#flows_freeze_} extra l0 d0 drops
	local ldrops=null lrot=null sent answered gap cross up rot1 line

	flows_path "$cfg" || return 1
	if ! freeze_on; then
		say "$cfg: cannot set up R's freeze (nft, conntrack accounting)"
		freeze_off
		return 1
	fi
	if ! flows_fresh "$r" "$cfg" "$unit" "$rot" "$CENSOR_FLOWS"; then
		say "$cfg: the tunnel made anew for $unit (rotate $rot) did not come up"
		freeze_off
		return 1
	fi
	extra="\"rtt_ms\":$FLOWS_RTT,\"loss\":0,\"flows\":$CENSOR_FLOWS,\"rotate\":\"$rot\",\"freeze_bytes\":$FREEZE_BYTES"
	if [ "$rot" = auto ]; then
		l0=$(nft_drops freeze)
		EXTRA="$extra,\"seconds\":$FREEZE_LEARN" \
			measure "$r" "$cfg" "${unit}_learning" "$FREEZE_LEARN" 0 \
			"$ANCHOR_A" "$DEV_A" -R
		ldrops=$(($(nft_drops freeze) - l0))
		read -r _ lrot < <(flows_now)
	fi
	d0=$(nft_drops freeze)
	PING_LOG=$LOGS/r$r-$cfg-$unit-ping.log
	EXTRA="$extra,\"seconds\":$PATH_T" DURING=ping_during \
		measure "$r" "$cfg" "$unit" "$PATH_T" 0 "$ANCHOR_A" "$DEV_A" -R
	drops=$(($(nft_drops freeze) - d0))
	cross=$(crossed)
	read -r up rot1 < <(flows_now)
	freeze_off
	nsx "$A" "$FTVCTL" peer set ftv0 "$FRESH_KEY" rotate auto ||
		say "$cfg: A's peer could not be set back to rotate auto"
	read -r sent answered gap < <(ping_figures "$PING_LOG")
	line=$(printf '{"repeat":%d,"config":"%s","test":"extra_%s","rc":0,"ping_sent":%s,"ping_received":%s,"gap_s":%s,"freeze_drops":%s,"learning_drops":%s,"learning_rotations":%s,"crossed":%s,"rotations":%s,"flows_up":%s}' \
		"$r" "$cfg" "$unit" "$(jnum "$sent")" "$(jnum "$answered")" \
		"$(jnum "$gap")" "$(jnum "$drops")" "$(jnum "$ldrops")" \
		"$(jnum "$lrot")" "$(jnum "$cross")" "$(jnum "$rot1")" "$(jnum "$up")")
	echo "$line" >>"$SAMPLES"
	say "r$r $cfg $unit: pings ${answered:-?} of ${sent:-?} answered," \
		"longest gap ${gap:-?} s; the freeze dropped $drops segments," \
		"${cross:-?} connections past $FREEZE_BYTES bytes; ${rot1/null/?} replaced"
}

# ---------------------------------------------------------------- setups

# underlay : namespaces A$IDX and B$IDX (set $A and $B) joined by
# veth0 <-> veth0, 10.0.0.1/24 and 10.0.0.2/24, as pair_underlay in
# selftests/lib.sh makes them, but under names of their own, so that every
# configuration can be up at the same time
underlay()
{
	local a=A$IDX b=B$IDX

	ns_create "$a" "$b" || return 1
	A=${!a} B=${!b}
	veth_pair "$A" veth0 "$B" veth0 &&
		ip -n "$A" addr add 10.0.0.1/24 dev veth0 &&
		ip -n "$B" addr add 10.0.0.2/24 dev veth0 || return 1
	B_ENDPOINT=10.0.0.2:$FTV_PORT
}

# path_underlay : namespaces A$IDX, R$IDX and B$IDX (set $A, $R and $B):
# A's veth0 10.0.0.1/24 to R's vethA 10.0.0.254/24, R's vethB
# 10.0.1.254/24 to B's veth0 10.0.1.2/24, R forwarding, A and B routing
# through it. Offloads as veth has them. A and B may buffer 32 MB per TCP
# socket (tcp_rmem and tcp_wmem are per namespace on 6.1; the defaults,
# 6 MB and 4 MB at most, would cap one stream at 200 ms to a little over
# 100 Mbit/s, the window and not the tunnel). net.core.rmem_max is not per
# namespace and is left alone: it bounds only what SO_RCVBUF asks, and
# iperf3 asks nothing.
path_underlay()
{
	local a=A$IDX b=B$IDX r=R$IDX ns

	ns_create "$a" "$b" "$r" || return 1
	A=${!a} B=${!b} R=${!r}
	veth_pair "$A" veth0 "$R" vethA &&
		veth_pair "$R" vethB "$B" veth0 &&
		ip -n "$A" addr add 10.0.0.1/24 dev veth0 &&
		ip -n "$R" addr add 10.0.0.254/24 dev vethA &&
		ip -n "$R" addr add 10.0.1.254/24 dev vethB &&
		ip -n "$B" addr add 10.0.1.2/24 dev veth0 &&
		ip -n "$A" route add default via 10.0.0.254 &&
		ip -n "$B" route add default via 10.0.1.254 &&
		nsx "$R" sysctl -qw net.ipv4.ip_forward=1 || return 1
	for ns in "$A" "$B"; do
		nsx "$ns" sysctl -qw net.ipv4.tcp_rmem="4096 131072 33554432" \
			net.ipv4.tcp_wmem="4096 16384 33554432" || return 1
	done
	B_ENDPOINT=10.0.1.2:$FTV_PORT
}

cfg_veth()
{
	underlay || return 1
	ADDR_B=10.0.0.2 DEV_A=veth0 DEV_B=veth0
}

cfg_veth_nooffload()
{
	cfg_veth && offloads_off
}

# wg_pair ENDPOINT : wg0 in A (10.8.0.1) and B (10.8.0.2); A knows B's
# underlay address ENDPOINT, B learns A's
wg_pair()
{
	local ns

	tmpdir
	(umask 077 && wg genkey >"$FTV_TMP/wa.key" && wg genkey >"$FTV_TMP/wb.key") ||
		return 1
	for ns in "$A" "$B"; do
		ip -n "$ns" link add wg0 type wireguard || return 1
	done
	ip -n "$A" addr add 10.8.0.1/24 dev wg0 || return 1
	ip -n "$B" addr add 10.8.0.2/24 dev wg0 || return 1
	# A knows B's endpoint, B learns A's, as with ftv.
	nsx "$A" wg set wg0 private-key "$FTV_TMP/wa.key" listen-port 51821 \
		peer "$(wg pubkey <"$FTV_TMP/wb.key")" endpoint "$1:51821" \
		allowed-ips 10.8.0.2/32 || return 1
	nsx "$B" wg set wg0 private-key "$FTV_TMP/wb.key" listen-port 51821 \
		peer "$(wg pubkey <"$FTV_TMP/wa.key")" allowed-ips 10.8.0.1/32 ||
		return 1
	for ns in "$A" "$B"; do
		ip -n "$ns" link set wg0 up || return 1
	done
	ADDR_B=10.8.0.2 DEV_A=wg0 DEV_B=wg0
	connect_ping "$A" 10.8.0.2
}

cfg_wireguard()
{
	underlay && wg_pair 10.0.0.2
}

# ftv_up : ftv between $A and $B as selftests/lib.sh's pair_ftv makes it
# (A's peer entry names $B_ENDPOINT), connected
ftv_up()
{
	pair_ftv || return 1
	ADDR_B=10.9.0.2 DEV_A=ftv0 DEV_B=ftv0
	connect_ping "$A" 10.9.0.2
}

cfg_ftv()
{
	underlay && ftv_up
}

# fec_off : forward error correction off on both ends of ftv_up's pair
fec_off()
{
	nsx "$A" "$FTVCTL" peer set ftv0 "$(pubkey_of b)" fec off &&
		nsx "$B" "$FTVCTL" peer set ftv0 "$(pubkey_of a)" fec off
}

cfg_ftv_fecoff()
{
	cfg_ftv && fec_off
}

cfg_path_tcp()
{
	path_underlay || return 1
	ADDR_B=10.0.1.2 DEV_A=veth0 DEV_B=veth0
	connect_ping "$A" 10.0.1.2 5
}

cfg_path_wireguard()
{
	path_underlay && wg_pair 10.0.1.2
}

cfg_path_ftv()
{
	path_underlay && ftv_up
}

cfg_path_ftv_fecoff()
{
	cfg_path_ftv && fec_off
}

# flows_up_is KEY N : A's peer KEY has N connections up
flows_up_is()
{
	[ "$(ftv_peer_json "$A" ftv0 "$1" 'p.get("flows_up")')" = "$2" ]
}

# One session over four connections: A, the initiator, keeps four up.
cfg_path_ftv4()
{
	local key

	cfg_path_ftv || return 1
	key=$(pubkey_of b)
	nsx "$A" "$FTVCTL" peer set ftv0 "$key" flows 4 || return 1
	if ! wait_for 30 flows_up_is "$key" 4; then
		say "path-ftv4: A has $(ftv_peer_json "$A" ftv0 "$key" \
			'p.get("flows_up")' 2>/dev/null) flows up, not 4"
		return 1
	fi
}

# Openings sent as they are: what shaping costs bulk traffic (nothing is
# expected: only a connection's two opening messages are shaped).
cfg_ftv_shapeoff()
{
	underlay && pair_ftv || return 1
	nsx "$A" "$FTVCTL" set ftv0 shape off &&
		nsx "$B" "$FTVCTL" set ftv0 shape off || return 1
	ADDR_B=10.9.0.2 DEV_A=ftv0 DEV_B=ftv0
	connect_ping "$A" 10.9.0.2
}

# fec_counts [SIDE] : "REPAIRS PACKETS": repair messages SIDE (A, the
# default, or B) has sent to the other end, and packets SIDE's ftv0 has
# sent, so far
fec_counts()
{
	local side=${1:-A} anchor repairs name rest f=()

	anchor=ANCHOR_$side
	# SIDE's only peer: the key files in $FTV_TMP are the last
	# configuration's, ftv-fecoff's when both are up.
	repairs=$(ftv_json "${!side}" ftv0 \
		'd["peers"][0]["fec_stats"]["repair_sent"]' 2>/dev/null)
	while IFS=: read -r name rest; do
		if [ "${name//[[:space:]]/}" = ftv0 ]; then
			read -r -a f <<<"$rest"
			break
		fi
	done <"/proc/${!anchor}/net/dev"
	# tx_packets is the tenth number after the name
	echo "${repairs:-0} ${f[9]:-0}"
}

OVPN_DIR=
ovpn_certs()
{
	local who
	[ -n "$OVPN_DIR" ] && return 0
	OVPN_DIR=$(mktemp -d /tmp/ftv-bench-ovpn.XXXXXX)
	for who in server client; do
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
			-nodes -days 30 -subj "/CN=$who" -keyout "$OVPN_DIR/$who.key" \
			-out "$OVPN_DIR/$who.crt" >/dev/null 2>&1 || return 1
		openssl x509 -in "$OVPN_DIR/$who.crt" -noout -fingerprint -sha256 |
			cut -d= -f2 >"$OVPN_DIR/$who.fp" || return 1
	done
}

# OpenVPN 2.6 point to point over TCP, TLS with pinned self-signed
# certificates, ChaCha20-Poly1305 for data like ftv and WireGuard. No DCO:
# Debian's openvpn-dco-dkms does not build for every kernel we use.
cfg_openvpn_tcp()
{
	local ns role peer me them n common

	command -v openvpn >/dev/null || { say "openvpn not installed"; return 1; }
	underlay && ovpn_certs || return 1
	common=(--dev tun0 --dev-type tun --data-ciphers CHACHA20-POLY1305
		--disable-dco --verb 3 --daemon)
	for role in server client; do
		if [ "$role" = server ]; then
			ns=$B n=2 peer=client me=10.7.0.2 them=10.7.0.1
			set -- --proto tcp-server --local 10.0.0.2 --lport 1194 --tls-server \
				--dh none
		else
			ns=$A n=1 peer=server me=10.7.0.1 them=10.7.0.2
			set -- --proto tcp-client --remote 10.0.0.2 1194 --tls-client \
				--connect-retry 1
		fi
		nsx "$ns" openvpn "${common[@]}" "$@" --ifconfig "$me" "$them" \
			--cert "$OVPN_DIR/$role.crt" --key "$OVPN_DIR/$role.key" \
			--peer-fingerprint "$(cat "$OVPN_DIR/$peer.fp")" \
			--writepid "$OVPN_DIR/$role.pid" \
			--log "$LOGS/openvpn-$role-$n.log" || return 1
		defer "kill \$(cat '$OVPN_DIR/$role.pid')"
	done
	ADDR_B=10.7.0.2 DEV_A=tun0 DEV_B=tun0
	connect_ping "$A" 10.7.0.2 60
}

# units : the measurements of one repeat, in order
units()
{
	local t loss
	for t in "${TESTS[@]}"; do
		case $t in
		tcp1 | tcp4) echo "${t}_fwd" "${t}_rev" ;;
		pps | pps256 | rtt) echo "$t" ;;
		aead) ;;
		loss) for loss in "${LOSSES[@]}"; do echo "loss_$loss"; done ;;
		path) path_units ;;
		jitter) echo path_jitter_p1_fwd path_jitter_p1_rev ;;
		flows) flows_units ;;
		probe) ;;
		*) say "unknown test $t" >&2 ;;
		esac
	done | tr ' ' '\n'
}

# flows_units : the flows test's units, of the kinds BENCH_FLOWS_UNITS
# names, always in this order (the censor's last: each makes the tunnel
# anew)
flows_units()
{
	local rot

	if in_list clean "${FLOWS_KINDS[@]}"; then
		echo flows_clean_p1_fwd flows_clean_p1_rev
	fi
	if in_list police "${FLOWS_KINDS[@]}"; then
		echo flows_police_p1_fwd flows_police_p1_rev
	fi
	if in_list hole "${FLOWS_KINDS[@]}"; then
		echo flows_hole_p1_fwd flows_hole_p1_rev
	fi
	if in_list freeze "${FLOWS_KINDS[@]}"; then
		echo flows_freeze_auto
		for rot in ${BENCH_FREEZE_ROTATE:-12k}; do
			echo "flows_freeze_$rot"
		done
	fi
}

# in_list WORD LIST... : whether WORD is one of LIST
in_list()
{
	local w=$1
	shift
	printf '%s\n' "$@" | grep -qxF -- "$w"
}

# path_losses RTT : the losses measured at RTT, increasing, each once: the
# matrix's if RTT is among BENCH_RTTS, and at 100 ms the FEC rows' too
path_losses()
{
	{
		if [ ${#PATH_LOSSES[@]} -gt 0 ] && in_list "$1" "${RTTS[@]}"; then
			printf '%s\n' "${PATH_LOSSES[@]}"
		fi
		if [ ${#FEC_LOSSES[@]} -gt 0 ] && [ "$1" = 100 ]; then
			printf '%s\n' "${FEC_LOSSES[@]}"
		fi
	} | sort -gu
}

# path_units : the path matrix, grouped by RTT and loss so that each
# router's netem changes once a group: every RTT and loss of the matrix
# with 1 and 4 streams each way, and at 100 ms the FEC rows, one stream
# A->B (a unit already in the matrix only once)
path_units()
{
	local rtt loss p dir rtts=()

	[ ${#RTTS[@]} -gt 0 ] && rtts=("${RTTS[@]}")
	if [ ${#FEC_LOSSES[@]} -gt 0 ] && ! in_list 100 "${rtts[@]}"; then
		rtts+=(100)
	fi
	for rtt in "${rtts[@]}"; do
		for loss in $(path_losses "$rtt"); do
			for p in 1 4; do
				for dir in fwd rev; do
					if [ "$p$dir" = 1fwd ] ||
					   { in_list "$rtt" "${RTTS[@]}" &&
					     in_list "$loss" "${PATH_LOSSES[@]}"; }; then
						echo "path_${rtt}_${loss}_p${p}_$dir"
					fi
				done
			done
		done
	done
}

# takes CONFIG UNIT : whether CONFIG is measured in UNIT. The loss steps
# run with the cable's offloads off, so veth with offloads is not in them;
# OpenVPN over TCP is there only to show what loss does to TCP over TCP.
# The path units are the path configurations' and theirs alone; fec off
# runs in the 1-stream A->B ones at 100 ms, beside fec auto, and flows 4
# in those at 40 ms without loss (flows 1 against 4 on a clean path). The
# flows units are path-ftv's and path-ftv4's, those against a censor
# (hole, freeze) path-ftv4's alone.
takes()
{
	case $1:$2 in
	path-ftv-fecoff:path_100_*_p1_fwd) return 0 ;;
	path-ftv4:path_jitter_* | path-ftv-fecoff:path_jitter_*) return 1 ;;
	path-ftv-fecoff:*) return 1 ;;
	path-ftv4:path_40_0_*) return 0 ;;
	path-ftv:flows_hole_* | path-ftv:flows_freeze_*) return 1 ;;
	path-ftv:flows_* | path-ftv4:flows_*) return 0 ;;
	path-ftv4:* | *:flows_*) return 1 ;;
	path-*:path_*) return 0 ;;
	path-*:* | *:path_*) return 1 ;;
	veth:loss_*) return 1 ;;
	openvpn-tcp:loss_*) return 0 ;;
	openvpn-tcp:*) return 1 ;;
	ftv-fecoff:loss_*) return 0 ;;
	ftv-fecoff:*) return 1 ;;
	ftv-shapeoff:tcp*) return 0 ;;
	ftv-shapeoff:*) return 1 ;;
	esac
	return 0
}

# wanted CONFIG : whether any measurement takes CONFIG
wanted()
{
	local unit
	for unit in "${UNITS[@]}"; do
		takes "$1" "$unit" && return 0
	done
	return 1
}

# Each configuration's namespaces, devices and anchors while it is up.
# R is the router of a path configuration, empty for the others; NETEM
# is "RTT LOSS" as each router's netem has it.
declare -A UP=() C_A=() C_B=() C_R=() C_ADDR=() C_DEVA=() C_DEVB=() C_ANCA=() C_ANCB=()
declare -A LOSSY=() NETEM=()
R=

setup()	# setup REPEAT CONFIG
{
	local r=$1 cfg=$2

	R=
	if ! "cfg_${cfg//-/_}"; then
		say "$cfg: setup failed; it is not measured in repeat $r"
		SERIES=''
		record "$r" "$cfg" setup "" 1 '"error":"setup failed"'
		return 1
	fi
	anchors || say "$cfg: the namespaces' anchor processes did not start"
	ip -n "$A" -d link show "$DEV_A" >"$GUEST/link-$cfg" 2>&1
	ip netns exec "$A" ethtool -k veth0 >"$GUEST/offloads-$cfg" 2>&1
	if [ -n "$R" ]; then
		ip netns exec "$R" ethtool -k vethB >"$GUEST/offloads-$cfg-R" 2>&1
	fi
	ip netns exec "$B" iperf3 -s >>"$LOGS/iperf3-server-$cfg.log" 2>&1 &
	bg_track $!
	UP[$cfg]=1 C_A[$cfg]=$A C_B[$cfg]=$B C_R[$cfg]=$R C_ADDR[$cfg]=$ADDR_B
	C_DEVA[$cfg]=$DEV_A C_DEVB[$cfg]=$DEV_B
	C_ANCA[$cfg]=$ANCHOR_A C_ANCB[$cfg]=$ANCHOR_B
}

use()	# use CONFIG : make CONFIG's state the current one
{
	A=${C_A[$1]} B=${C_B[$1]} R=${C_R[$1]} ADDR_B=${C_ADDR[$1]}
	DEV_A=${C_DEVA[$1]} DEV_B=${C_DEVB[$1]}
	ANCHOR_A=${C_ANCA[$1]} ANCHOR_B=${C_ANCB[$1]}
}

teardown()
{
	local cfg r=$1

	for cfg in "${!UP[@]}"; do
		use "$cfg"
		case $cfg in
		ftv)
			nsx "$A" "$FTVCTL" show ftv0 >"$GUEST/ftvctl-show-r$r" 2>&1
			nsx "$A" "$FTVCTL" show ftv0 --json >"$GUEST/ftv-A-r$r.json" 2>&1
			nsx "$B" "$FTVCTL" show ftv0 --json >"$GUEST/ftv-B-r$r.json" 2>&1
			;;
		path-ftv | path-ftv4)
			# path-*, not ftv-*: report.py sums these apart (and
			# path-ftv4-* not with path-ftv-*)
			nsx "$A" "$FTVCTL" show ftv0 --json >"$GUEST/$cfg-A-r$r.json" 2>&1
			nsx "$B" "$FTVCTL" show ftv0 --json >"$GUEST/$cfg-B-r$r.json" 2>&1
			;;
		wireguard) nsx "$A" wg show wg0 >"$GUEST/wg-show-r$r" 2>&1 ;;
		esac
	done
	cleanup
	FTV_NAMESPACES=() FTV_PIDS=() FTV_DEFERRED=() FTV_TMP=''
	UP=() LOSSY=() NETEM=()
}

# ---------------------------------------------------------------- run

{
	uname -r >"$GUEST/kernel"
	grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //' >"$GUEST/cpu-model"
	grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //' >"$GUEST/cpu-flags"
	nproc >"$GUEST/nproc"
	cat /proc/loadavg >"$GUEST/loadavg-start"
	iperf3 --version | head -n 1 >"$GUEST/iperf3-version"
	cat /sys/module/ftv/version >"$GUEST/ftv-version" 2>/dev/null
	cat /sys/module/ftv/srcversion >"$GUEST/ftv-srcversion" 2>/dev/null
	modinfo -F vermagic "$FTV_KO" >"$GUEST/ftv-vermagic" 2>/dev/null
	printf '%s\n' "$REPEATS" "$T" "$OMIT" "$LOSS_T" "$PPS_T" "$DELAY" \
		"$PATH_T" "$PATH_OMIT" >"$GUEST/parameters"
} 2>/dev/null
# vm-guest.sh loads ftv with its debug messages on; a benchmark wants the
# module as users run it.
if [ -w /proc/dynamic_debug/control ]; then
	echo 'module ftv -p' >/proc/dynamic_debug/control 2>/dev/null
fi
modprobe wireguard 2>/dev/null
# OpenVPN needs /dev/net/tun, which appears when tun is loaded.
modprobe tun 2>/dev/null

# Only the sections after the repeats (probe, say): no configuration to
# set up.
mapfile -t UNITS < <(units)
if [ "${#UNITS[@]}" = 0 ] && ! in_list aead "${TESTS[@]}"; then
	REPEATS=0
fi
say "kernel $(cat "$GUEST/kernel"), $(nproc) CPUs: $(cat "$GUEST/cpu-model")"
say "$REPEATS repeats of: ${CONFIGS[*]}; tests: ${TESTS[*]}; TCP runs ${T}s after ${OMIT}s"
if in_list path "${TESTS[@]}"; then
	say "path: RTTs ${RTTS[*]:-none} ms, losses ${PATH_LOSSES[*]:-none} %," \
		"FEC rows at 100 ms ${FEC_LOSSES[*]:-none} %; runs ${PATH_T}s after ${PATH_OMIT}s"
fi
if in_list flows "${TESTS[@]}"; then
	if in_list clean "${FLOWS_KINDS[@]}" || in_list police "${FLOWS_KINDS[@]}"; then
		say "flows: flows 1 and 4 at ${FLOWS_RTT} ms without loss, clean and" \
			"policed at $POLICE_MBIT Mbit/s ($POLICE_KB kbytes/s) per connection" \
			"and direction; runs ${PATH_T}s after ${PATH_OMIT}s"
	fi
	if in_list hole "${FLOWS_KINDS[@]}" || in_list freeze "${FLOWS_KINDS[@]}"; then
		say "flows against a censor, flows $CENSOR_FLOWS alone: one of the" \
			"connections black-holed at 40 % of a $((PATH_T + 6 < 12 ? 12 : PATH_T + 6))s run;" \
			"every connection frozen after $FREEZE_BYTES bytes towards A, rotate" \
			"auto after ${FREEZE_LEARN}s of learning and rotate 12k, ${PATH_T}s runs"
	fi
fi

# Every configuration is up at once, each in its own namespaces, and the
# repeats interleave them measurement by measurement (the order rotating
# from one repeat to the next), so that what the host's load does to the
# VM over the minutes of a run falls on all of them alike.
start=$SECONDS
for ((r = 1; r <= REPEATS; r++)); do
	say "repeat $r/$REPEATS: setting up ($((SECONDS - start)) s so far)"
	order=()
	for ((i = 0; i < ${#CONFIGS[@]}; i++)); do
		cfg=${CONFIGS[$(((i + r - 1) % ${#CONFIGS[@]}))]}
		wanted "$cfg" || continue
		order+=("$cfg")
		IDX=$i
		setup "$r" "$cfg"
	done
	for t in "${TESTS[@]}"; do
		[ "$t" = aead ] && aead_ceiling "$r"
	done
	for unit in "${UNITS[@]}"; do
		for cfg in "${order[@]}"; do
			if [ -z "${UP[$cfg]:-}" ] || ! takes "$cfg" "$unit"; then
				continue
			fi
			use "$cfg"
			run "$r" "$cfg" "$unit"
		done
	done
	teardown "$r"
done
# Where the time goes: after the measurements, so that tracing costs no
# figure, one stream A->B through WireGuard and through ftv with ftrace's
# function_graph tracer on the tunnel's own functions and the AEAD code it
# calls, for 2 s; then the same for 64-byte UDP datagrams sent as fast as
# iperf3 can (the pps test's load). (perf record is no use here: under
# emulation its sampling timer fires when the vCPU idles, and 99 % of
# samples land in native_safe_halt.) Per function: calls, mean and total
# time, to guest/profile-CONFIG.txt and guest/profile-pps-CONFIG.txt.
# Tracing slows every traced call alike; read the times against each
# other, not as absolute costs.
TRACEFS=/sys/kernel/tracing
# profile CONFIG KIND : KIND is bulk (one TCP stream) or pps
profile()
{
	local cfg=$1 kind=$2 mods f name=profile-$1
	local load=()

	[ "$kind" = pps ] && name=profile-pps-$cfg load=(-u -l 64 -b 0)

	case $cfg in
	ftv) mods="ftv chacha20poly1305 chacha_generic poly1305_x86_64" ;;
	wireguard) mods="wireguard libchacha20poly1305 libchacha chacha_x86_64 poly1305_x86_64" ;;
	esac
	IDX=0
	setup 0 "$cfg" || return 1
	use "$cfg"
	wait_for 10 iperf_server_up || return 1
	echo 0 >"$TRACEFS/tracing_on"
	echo nop >"$TRACEFS/current_tracer"
	: >"$TRACEFS/set_ftrace_filter"
	for f in $mods; do
		echo "*:mod:$f" >>"$TRACEFS/set_ftrace_filter" 2>/dev/null
	done
	for f in __skb_gso_segment ip_local_out ip6_local_out udp_tunnel_xmit_skb \
		 napi_gro_receive gro_cells_receive netif_rx skb_checksum_help; do
		echo "$f" >>"$TRACEFS/set_ftrace_filter" 2>/dev/null
	done
	echo 16384 >"$TRACEFS/buffer_size_kb"
	echo funcgraph-tail >"$TRACEFS/trace_options"
	echo function_graph >"$TRACEFS/current_tracer"
	: >"$TRACEFS/trace"
	nsx "$A" iperf3 -c "$ADDR_B" -t 6 "${load[@]}" >"$LOGS/$name-iperf3.log" 2>&1 &
	bg_track $!
	sleep 2 # past slow start
	echo 1 >"$TRACEFS/tracing_on"
	sleep 2
	echo 0 >"$TRACEFS/tracing_on"
	awk '
		# " 1)   3.456 us    |  name();" or " 1)   3.456 us    |  } /* name */"
		match($0, /[0-9.]+ us +\|/) {
			us = substr($0, RSTART, RLENGTH) + 0
			rest = substr($0, RSTART + RLENGTH)
			# a module function is "name [module]"
			if (match(rest, /\/\* [^*]+ \*\//))
				name = substr(rest, RSTART + 3, RLENGTH - 6)
			else if (match(rest, /[A-Za-z0-9_.]+( \[[A-Za-z0-9_]+\])?\(\);/))
				name = substr(rest, RSTART, RLENGTH - 3)
			else
				next
			sub(/ \[/, "[", name)
			n[name]++; t[name] += us
		}
		END {
			for (f in n)
				printf "%-48s %9d %10.2f %10.1f\n", f, n[f], t[f] / n[f], t[f] / 1000
		}' "$TRACEFS/trace" | sort -k4,4nr >/tmp/profile.txt
	{
		printf '%-48s %9s %10s %10s\n' function calls mean_us total_ms
		cat /tmp/profile.txt
	} >"$GUEST/$name.txt"
	echo nop >"$TRACEFS/current_tracer"
	: >"$TRACEFS/set_ftrace_filter"
	echo 1408 >"$TRACEFS/buffer_size_kb"
	teardown profile
}
if [ "${BENCH_PROFILE:-$([ "${BENCH_QUICK:-0}" = 1 ] && echo 0 || echo 1)}" = 1 ] &&
   [ -w "$TRACEFS/current_tracer" ]; then
	for kind in bulk pps; do
		for cfg in wireguard ftv; do
			say "profile ($kind): $cfg"
			profile "$cfg" "$kind" || say "profile ($kind): $cfg failed"
		done
	done
fi

# The outer stream as it leaves each sender: one and four ftv streams
# A->B for 5 s, tcpdump (headers only) on A's veth0 for A's segments and
# on B's veth0 for B's, each capturing only what its own side sends, and
# tshark's TCP analysis of every segment. Sealing on several CPUs must not
# show as segments out of order or sent twice. (A capture of both
# directions on one end would also see the cable's own reordering: veth
# hands each packet to the backlog of the CPU that sent it, so two
# segments sent from two CPUs may arrive swapped.)
wire_check()
{
	local p side ns cap total ooo retx lost pids

	IDX=0
	setup 0 ftv || return 1
	use ftv
	wait_for 10 iperf_server_up || return 1
	for p in 1 4; do
		pids=()
		for side in A B; do
			ns=${!side}
			cap=$LOGS/wire-ftv-$p-$side.pcap
			ip netns exec "$ns" tcpdump -i veth0 -Q out -n -s 100 \
				-B 32768 -w "$cap" tcp \
				>"$LOGS/wire-tcpdump-$p-$side.log" 2>&1 &
			pids+=($!)
			wait_for 10 grep -q "listening on" \
				"$LOGS/wire-tcpdump-$p-$side.log"
		done
		nsx "$A" iperf3 -c "$ADDR_B" -t 5 -P "$p" \
			>"$LOGS/wire-iperf3-$p.log" 2>&1
		kill -INT "${pids[@]}"
		wait "${pids[@]}"
		for side in A B; do
			cap=$LOGS/wire-ftv-$p-$side.pcap
			count()
			{
				tshark -r "$cap" ${1:+-Y "$1"} -T fields \
					-e frame.number 2>/dev/null | wc -l
			}
			total=$(count)
			ooo=$(count tcp.analysis.out_of_order)
			retx=$(count "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.spurious_retransmission")
			lost=$(count tcp.analysis.lost_segment)
			printf '{"repeat":0,"config":"ftv","test":"wire%d%s","rc":0,"frames":%d,"out_of_order":%d,"retransmissions":%d,"lost_segment":%d}\n' \
				"$p" "$side" "$total" "$ooo" "$retx" "$lost" >>"$SAMPLES"
			say "wire, $p stream(s), sent by $side: $total frames," \
				"$ooo out of order, $retx retransmitted," \
				"$lost after a segment not captured"
			rm -f "$cap"
		done
	done
	teardown wire
}
if [ "${BENCH_WIRE:-$([ "${BENCH_QUICK:-0}" = 1 ] && echo 0 || echo 1)}" = 1 ] &&
   command -v tshark >/dev/null; then
	say "wire check: ftv"
	wire_check || say "wire check failed"
fi

# ftvctl probe against each censor, BENCH_PROBE_RUNS times.
if in_list probe "${TESTS[@]}"; then
	# shellcheck source-path=SCRIPTDIR source=probe.sh
	. "$(dirname "$0")/probe.sh"
	say "probe: each censor's selftest ${BENCH_PROBE_RUNS:-10} times"
	probe_bench "${BENCH_PROBE_RUNS:-10}"
fi

# Many peers: setconf, show, memory and deletion at BENCH_PEERS peers.
if [ -n "${BENCH_PEERS:-}" ]; then
	# shellcheck source-path=SCRIPTDIR source=peers.sh
	. "$(dirname "$0")/peers.sh"
	say "peers: $BENCH_PEERS, ftv and WireGuard"
	peers_bench "$BENCH_PEERS" "${BENCH_PEERS_REPEATS:-1}"
fi

say "done in $((SECONDS - start)) s"

{
	cat /proc/loadavg >"$GUEST/loadavg-end"
	cat /proc/crypto >"$GUEST/crypto"
	lsmod >"$GUEST/lsmod"
} 2>/dev/null
[ -n "$OVPN_DIR" ] && rm -rf "$OVPN_DIR"
exit 0
