#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What `make bench` does: install dependencies, build ftv.ko for the
# test kernel and ftvctl, boot that kernel with virtme-ng and a pinned
# CPU model, run bench/guest.sh in it (ftv beside plain veth,
# WireGuard and OpenVPN over TCP, interleaved, in one boot; and through
# a router that delays and drops, beside plain TCP and WireGuard), then
# bench/report.py on the host: a Markdown table, a JSON file with every
# raw sample and a PNG chart under bench/results/, and the ratios
# ftv/WireGuard and ftv/veth at the end.
#
#	bench/run.sh
#
# Environment: BENCH_CPU (qemu model, default qemu64: software emulation
# of AVX2 would distort what crypto costs), BENCH_CPUS (vCPUs, default 2;
# another count writes its results under a name ending in -Ncpu),
# BENCH_QUICK=1 (1 repeat, 5 s runs, for trying things), BENCH_TESTS,
# BENCH_CONFIGS and the other
# BENCH_* knobs of bench/guest.sh (among them the path matrix's:
# BENCH_RTTS, BENCH_PATH_LOSS, BENCH_PATH_FEC_LOSS, BENCH_PATH_TIME,
# BENCH_PATH_OMIT, BENCH_PATH_WARMUP; the jitter test's BENCH_JITTER,
# netem's delay and jitter on each of the router's cables, default
# "10ms 3ms"; the flows test's policer,
# BENCH_POLICE_MBIT, and its kinds of units, BENCH_FLOWS_UNITS, default
# "clean police hole freeze", the last two against a censor, and the
# budgets the freeze unit tries beside rotate auto, BENCH_FREEZE_ROTATE
# (12k; what ftvctl probe recommended, say); the probe
# section's BENCH_PROBE_RUNS and BENCH_PROBE_CENSORS, make bench
# BENCH_TESTS=probe running it alone; a BENCH_*
# variable set empty reaches the guest empty, which for the path lists
# means none); KVER or FTV_KERNEL (default
# 6.1), FTV_SKIP_DEPS=1, FTV_VM_TIMEOUT (default 10800 s), MAKE.
#
# A full run (3 repeats) takes about two hours under emulation (40
# minutes without the path matrix, BENCH_TESTS="tcp1 tcp4 pps rtt aead
# loss") and writes bench/results/latest.{md,json,png} and
# latest-path.png; a quick run or one limited by BENCH_TESTS or
# BENCH_CONFIGS writes quick.*. Each also leaves a copy named by its
# date. The exit status says whether the harness ran, never whether a
# number was good: benchmarks are not tests.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
MAKE=${MAKE:-make}
OUT=$ROOT/.vm-out-bench
# Debian's python3 has matplotlib; a python3 earlier in PATH may not.
PYTHON=python3
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3

step()
{
	echo
	echo "==== $* ===="
}

die()
{
	echo "bench: $*" >&2
	exit 1
}

# given VAR : whether VAR was given: a BENCH_* variable even set empty
# (BENCH_PATH_FEC_LOSS="" means no FEC rows), any other only if not empty
# (the Makefile passes KVER and FTV_KERNEL empty when they are not set)
given()
{
	case $1 in
	BENCH_*) [ -n "${!1+set}" ] ;;
	*) [ -n "${!1:-}" ] ;;
	esac
}

# The guest's knobs (bench/guest.sh), passed into the VM as they are given.
GUEST_VARS=(BENCH_QUICK BENCH_TESTS BENCH_CONFIGS BENCH_REPEATS BENCH_TIME
	BENCH_OMIT BENCH_LOSS_TIME BENCH_PPS_TIME BENCH_LOSS BENCH_DELAY
	BENCH_RTTS BENCH_PATH_LOSS BENCH_PATH_FEC_LOSS BENCH_PATH_TIME
	BENCH_PATH_OMIT BENCH_PATH_WARMUP BENCH_JITTER BENCH_POLICE_MBIT
	BENCH_FLOWS_UNITS
	BENCH_PROFILE BENCH_WIRE BENCH_PEERS BENCH_PEERS_REPEATS
	BENCH_PEERS_WG_LINKDEL BENCH_PROBE_RUNS BENCH_PROBE_CENSORS
	BENCH_FREEZE_ROTATE)

if [ "${FTV_SKIP_DEPS:-0}" != 1 ]; then
	step "dependencies (scripts/deps.sh)"
	scripts/deps.sh || die "scripts/deps.sh failed"
fi

kver=$(scripts/kernel.sh "${KVER:-${FTV_KERNEL:-6.1}}") || exit 1

# The module is built from a copy of the sources, as make check does, so
# that a build in the tree at the same time does not race with this one.
build=$ROOT/.cache/build-bench/$kver
step "build ftv.ko for $kver (in ${build#"$ROOT"/})"
mkdir -p "$build"
[ -f "$ROOT/.cache/.gitignore" ] || echo '*' >"$ROOT/.cache/.gitignore"
tar -C "$ROOT" -cf - --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
	--exclude='*.mod' --exclude='*.mod.c' --exclude=modules.order \
	--exclude=Module.symvers --exclude='*.a' --exclude='.*.d' Kbuild module |
	tar -C "$build" -xf - ||
	die "cannot copy the sources to $build"
$MAKE --no-print-directory -C "/lib/modules/$kver/build" M="$build" \
	FTV_VERSION="$(scripts/version.sh)" modules ||
	die "building the module failed"

step "build ftvctl"
$MAKE --no-print-directory tools || die "building ftvctl failed"

name=latest
if [ "${BENCH_QUICK:-0}" = 1 ] || [ -n "${BENCH_TESTS:-}" ] ||
   [ -n "${BENCH_CONFIGS:-}" ] || [ -n "${BENCH_REPEATS:-}" ]; then
	name=quick
fi
cpus=${BENCH_CPUS:-2}
case $cpus in
'' | *[!0-9]* | 0) die "BENCH_CPUS must be a number of vCPUs, not '$cpus'" ;;
2) ;;
*) name=$name-${cpus}cpu ;;
esac

# What the host was doing and what was measured, for the report.
mkdir -p "$OUT"
rm -rf "$OUT/host"
mkdir -p "$OUT/host"
cpu=${BENCH_CPU:-qemu64}
{
	date '+%Y-%m-%d %H:%M %Z' >"$OUT/host/date"
	cmd="make bench"
	for v in "${GUEST_VARS[@]}" BENCH_CPU BENCH_CPUS KVER FTV_KERNEL; do
		given "$v" && cmd="$cmd $v=\"${!v}\""
	done
	echo "$cmd" >"$OUT/host/command"
	echo "$cpu" >"$OUT/host/qemu-cpu"
	git log -1 --format='%h %s' >"$OUT/host/git"
	git status --porcelain -- Kbuild module >"$OUT/host/module-changes"
	grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- |
		sed "s/^ //; s/\$/, $(nproc) CPUs/" >"$OUT/host/cpu-model"
	qemu-system-x86_64 --version | head -n 1 >"$OUT/host/qemu"
	pgrep -c qemu-system >"$OUT/host/other-vms-start"
	cat /proc/loadavg >"$OUT/host/loadavg-start"
} 2>/dev/null

# Other VMs on this machine disturb the figures: keep the load average.
(
	while :; do
		echo "$(date +%s) $(cat /proc/loadavg)"
		sleep 15
	done
) >"$OUT/host/load-samples" 2>/dev/null &
sampler=$!

guest_env=()
for v in "${GUEST_VARS[@]}"; do
	given "$v" && guest_env+=("$v=${!v}")
done

step "benchmarks in a VM running $kver (-cpu $cpu)"
FTV_VM_CPUS=$cpus FTV_VM_QEMU_OPTS="-cpu $cpu" FTV_VM_TIMEOUT=${FTV_VM_TIMEOUT:-10800} \
	scripts/vm.sh -k "$kver" -o "$OUT" -m "$build/module/ftv.ko" -- \
	env "${guest_env[@]}" bench/guest.sh "$OUT"
rc=$?
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
cat /proc/loadavg >"$OUT/host/loadavg-end"
if [ "$rc" -ne 0 ]; then
	echo "bench: the VM run ended with status $rc; reporting what it recorded"
fi
[ -s "$OUT/samples.jsonl" ] || die "no measurements recorded (see $OUT/)"

step "report"
"$PYTHON" bench/report.py report "$OUT" bench/results "$name"
