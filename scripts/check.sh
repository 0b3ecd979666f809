#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What `make check` and `make demo` do: install dependencies, build ftv.ko
# for the test kernel and ftvctl, boot that kernel with virtme-ng and run
# the selftests (or the demo) inside it.
#
#	scripts/check.sh [check|check-debug|demo]
#
# FTV_CHECK_SECONDS, a time budget for this script (CI sets one): the
# first kernel runs the whole suite; each one after it runs the whole
# suite if that fits in what is left at this machine's pace, else its
# core subset (CORE_TESTS, or DEBUG_CORE_TESTS for the debug kernel) if
# that fits with FTV_CHECK_SLACK seconds more (default 480: the core
# subsets matter more than ending on time), else nothing, and the
# summary line says which. No VM may run more than five minutes past the
# budget and its slack, so a hang fails the run instead of outlasting
# CI's limit. With a budget, what the kernels after the first need (the
# debug kernel's build, ftv.ko for each) is built at nice 19 while the
# first suite runs: an emulated suite leaves a core idle now and then,
# and the build takes only that.
#
# check-debug does what check does with the debug kernel that
# scripts/debug-kernel.sh builds (KASAN, lockdep, kmemleak, ...), and
# leaves out the host's tests, which do not touch the kernel. In KVER the
# word "debug" stands for that kernel, so check can take it as well.
#
# Environment: KVER or FTV_KERNEL picks the kernels, by version or prefix
# for scripts/kernel.sh, separated by spaces (check's default "6.1 6.12",
# Debian's and bookworm-backports'; check-debug's "debug"; demo's 6.1);
# 7.3, trixie-backports', comes from the chroot scripts/chroot.sh makes;
# FTV_NO_VM=1 runs on this host with its running kernel instead;
# FTV_SKIP_DEPS=1 skips scripts/deps.sh; TEST_PROGS limits which
# selftests run; MAKE is the make to use.
#
# Two modules are built: the one users run, which the selftests exercise,
# and a debug build (FTV_DEBUG=1), whose self-tests run when it loads;
# test_module_selftests.sh loads that one ($FTV_DEBUG_KO) and reads them.
#
# For check, the last line printed is always "N passed, N failed", over
# the selftests in each kernel's VM and the host's own tests (ftvctl,
# ftv-quick, dkms); a build that fails or a VM that dies before reporting
# counts as one failure. Each kernel's VM logs stay in .vm-out/KVER/.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
MAKE=${MAKE:-make}
what=${1:-check}
failed=0

summary()
{
	echo "$1 passed, $2 failed"
	[ "$2" -eq 0 ]
	exit
}

step()
{
	echo
	echo "==== $* ===="
}

if [ "${FTV_SKIP_DEPS:-0}" != 1 ]; then
	step "dependencies (scripts/deps.sh)"
	if ! scripts/deps.sh; then
		echo "check: scripts/deps.sh failed"
		[ "$what" = check ] && summary 0 1
		exit 1
	fi
fi

if [ "${FTV_NO_VM:-0}" = 1 ]; then
	kvers=$(uname -r)
else
	if [ "$what" = check ]; then
		want=${KVER:-${FTV_KERNEL:-6.1 6.12}}
	elif [ "$what" = check-debug ]; then
		want=${KVER:-${FTV_KERNEL:-debug}}
	else
		want=${KVER:-${FTV_KERNEL:-6.1}}
	fi
	kvers=
	for k in $want; do
		v=debug
		# Debian's 7.x kernels come from a chroot (scripts/chroot.sh,
		# made once, a few minutes), which also has the gcc they need.
		# Set up even when /boot has the kernel: that may be another
		# clone's chroot, linked there; setup links this one's.
		case $k in
		7*) scripts/chroot.sh setup || summary 0 1 ;;
		esac
		[ "$k" = debug ] || v=$(scripts/kernel.sh "$k") || {
			[ "$what" != demo ] && summary 0 1
			exit 1
		}
		kvers="$kvers $v"
	done
fi

# ftv.ko is built from a copy of the sources in .cache/build/KVER, so
# that a check never races with a build someone runs in the tree at the
# same time, and builds for different kernels do not overwrite each other.
# tar keeps the timestamps, so kbuild rebuilds only what changed.
mkdir -p "$ROOT/.cache"
[ -f "$ROOT/.cache/.gitignore" ] || echo '*' >"$ROOT/.cache/.gitignore"

# build_module DIR [MAKE-ARGS...] : copy the sources to DIR and build there
build_module()
{
	local dir=$1
	shift
	mkdir -p "$dir"
	tar -C "$ROOT" -cf - --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude=modules.order \
		--exclude=Module.symvers --exclude='*.a' --exclude='.*.d' \
		Kbuild module | tar -C "$dir" -xf - || return
	set -- M="$dir" FTV_VERSION="$(scripts/version.sh)" "$@" modules
	# A kernel from a chroot is built in it (scripts/kbuild.sh).
	if [ "$kver" = debug ]; then
		$MAKE --no-print-directory -C "$kdir" "$@"
	else
		scripts/kbuild.sh "$kver" --no-print-directory "$@"
	fi
}

# build_for KVER : the module users run and the debug build, for KVER;
# sets kdir, build and vm (how scripts/vm.sh boots that kernel). For the
# debug kernel, builds that first (or finds it built).
build_for()
{
	build=$ROOT/.cache/build/$kver
	kdir=/lib/modules/$kver/build
	vm=(-k "$kver")
	if [ "$kver" = debug ]; then
		step "the debug kernel (scripts/debug-kernel.sh)"
		kdir=$(scripts/debug-kernel.sh) || return 1
		vm=(-i "$kdir/arch/x86/boot/bzImage")
	fi
	step "build ftv.ko for $kver (in ${build#"$ROOT"/}, and a debug build)"
	build_module "$build" && build_module "$build-debug" FTV_DEBUG=1
}

# The debug kernel takes about 450 s of both cores to build. With a
# budget, and the debug kernel after another, it builds from here at
# nice 19, beside the host's tests, and stops (SIGSTOP) when the first
# suite's VM starts: it goes on, at full speed, when the debug kernel's
# turn comes. Not beside any suite: even at nice 19 it made an emulated
# guest's tests a quarter slower (2026-11-29, test_censor.sh's FEC policy,
# which judges by time, failed twice), and on 2026-11-30 beside the
# scripts that share the VM they took 1.7 to 2 times as long, and
# test_shape.sh ran out of its 600 s.
debug_pid=
first=${kvers# }
first=${first%% *}
if [ "${FTV_CHECK_SECONDS:-0}" -gt 0 ] && [ "$first" != debug ] &&
   [[ " $kvers " = *" debug "* ]] && [ -z "${TEST_PROGS:-}" ] &&
   ! scripts/debug-kernel.sh --built; then
	echo "check: building the debug kernel at nice 19 until $first's" \
		"suite starts (.cache/debug-build.log)"
	# Its own process group (setsid), so that one signal stops it all.
	setsid nice -n 19 scripts/debug-kernel.sh \
		>"$ROOT/.cache/debug-build.log" 2>&1 </dev/null &
	debug_pid=$!
	trap 'kill -TERM -- -"$debug_pid" 2>/dev/null; kill -CONT -- -"$debug_pid" 2>/dev/null' EXIT
fi

# debug_build SIGNAL : sends SIGNAL to the early debug kernel build, if any
debug_build()
{
	[ -n "$debug_pid" ] && kill -"$1" -- -"$debug_pid" 2>/dev/null
	return 0
}

step "build ftvctl and the selftests' programs"
if ! $MAKE --no-print-directory tools; then
	# The module's own tests can still run; the ones that need ftvctl bail.
	echo "check: building ftvctl failed"
	failed=1
fi
if ! $MAKE --no-print-directory -C selftests; then
	echo "check: building selftests/ftvfuzz failed"
	failed=1
fi
# The kernel's ynl tools, for ynl_check.py here and test_ynl.sh in the VM.
if ! $MAKE --no-print-directory ynl; then
	echo "check: unpacking tools/net/ynl from linux-source-6.12 failed"
	failed=1
fi

# ftvctl's own tests and the dkms packaging's need no module and run
# here, on the host; their cases count like the selftests'.
host_pass=0
host_fail=0
if [ "$what" = check ] && [ "$failed" = 0 ] &&
   grep -q '^check:' tools/ftvctl/Makefile 2>/dev/null; then
	step "ftvctl's, dkms's, the netlink spec's and wirecheck's tests (host, no module needed)"
	log=$ROOT/.cache/ftvctl-check.log
	{
		$MAKE --no-print-directory -C tools/ftvctl check </dev/null
		r1=$?
		# dkms add/build/install for every installed 6.x kernel.
		tools/packaging/dkms.sh </dev/null
		r2=$?
		# The netlink spec against the kernel's schema and ynl-gen-c,
		# the uapi header and the module's policies.
		/usr/bin/python3 selftests/lib/ynl_check.py </dev/null
		r3=$?
		# test_wire.sh's checker, on captures written for it.
		/usr/bin/python3 selftests/lib/wirecheck_test.py </dev/null
		exit $((r1 | r2 | r3 | $?))
	} 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	host_pass=$(grep -cE '^ok [0-9]+' "$log" 2>/dev/null)
	host_fail=$(grep -cE '^not ok [0-9]+' "$log" 2>/dev/null)
	host_pass=${host_pass:-0}
	host_fail=${host_fail:-1}
	if [ "$rc" -ne 0 ] && [ "$host_fail" -eq 0 ]; then
		host_fail=1
	fi
fi

if [ "$what" = demo ]; then
	kver=${kvers# }
	kver=${kver%% *}
	build_for || exit 1
	step "demo in a VM running $kver"
	scripts/vm.sh "${vm[@]}" -m "$build/module/ftv.ko" -- selftests/demo.sh
	exit
fi

# run_suite : the selftests in a VM running $kver; sets pass and fail
run_suite()
{
	local out=.vm-out/$kver rc last env limit

	pass=0
	fail=1
	if ! build_for; then
		echo "check: building the module for $kver failed; nothing to test there"
		return
	fi
	env=(FTV_DEBUG_KO="$build-debug/module/ftv.ko")
	# KASAN, lockdep and kmemleak make everything slower, emulated or not.
	# FTV_CHECKERS=1 has run.sh fail if lockdep or kmemleak is missing
	# there, rather than leave them out. These settings are for this run
	# only: a stock kernel after the debug one has neither checker.
	# 6.1's whole suite took 2,700 s and more on a slow day
	# (2026-11-28); on the second of 2026-11-29, with the probe tests,
	# it had not finished at 3,300 s, locally and in CI. With room for
	# a machine as slow, the plan gives the kernels after it what is
	# left, and none runs past the budget's end by more than its slack
	# and five minutes. On 2026-12-02, with the third review's five
	# scripts, a CI-like run here reached the old limit of 3,900 s with
	# seven scripts still to go (all 632 cases until then passed): a
	# suite cut off fails the run, while one that ends late only leaves
	# the later kernels less, so the limit is 4,500 s (CI's 90 minutes
	# still hold: dependencies, host tests and this come to 85 at most).
	limit=${FTV_VM_TIMEOUT:-4500}
	if [ "$kver" = debug ]; then
		limit=${FTV_VM_TIMEOUT:-9000}
		env+=(FTV_TEST_TIMEOUT="${FTV_TEST_TIMEOUT:-1500}"
		      FTV_CHECKERS=1)
	else
		# The stock kernels have no KASAN: SLUB's own debugging poisons
		# freed kmalloc objects (peers and connections are among them),
		# so that a write into one is reported when the slab is checked
		# (test_peer_removal.sh validates them) or reused; run.sh reads
		# the reports in the kernel log.
		env+=(FTV_VM_APPEND="${FTV_VM_APPEND:-slub_debug=FZPU,kmalloc-*}")
	fi
	# With a budget, a VM that hangs must not take the whole run past
	# it: five minutes over is the most it may take.
	if [ "${budget:-0}" -gt 0 ] && [ $((budget + slack - SECONDS + 300)) -lt "$limit" ]; then
		limit=$((budget + slack - SECONDS + 300))
		[ "$limit" -lt 120 ] && limit=120
	fi
	env+=(FTV_VM_TIMEOUT="$limit")
	step "selftests in a VM running $kver (for at most ${limit}s)"
	debug_build STOP
	env "${env[@]}" scripts/vm.sh "${vm[@]}" -o "$out" \
		-m "$build/module/ftv.ko" -- selftests/run.sh
	rc=$?
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/output.log" 2>/dev/null | tail -n 1)
	if [ -n "$last" ]; then
		pass=${last%% passed*}
		fail=${last#*passed, }
		fail=${fail%% failed}
	else
		# The run did not get to its summary: count what it reported.
		echo "check: the selftests did not finish on $kver (exit $rc); counting what they reported"
		pass=$(grep -cE '^# ok [0-9]+' "$out/output.log" 2>/dev/null)
		fail=$(grep -cE '^# not ok [0-9]+' "$out/output.log" 2>/dev/null)
		fail=$((${fail:-0} + 1))
	fi
	pass=${pass:-0}
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
	fi
	echo "check: selftests on $kver: $pass passed, $fail failed; logs in $out/" \
		"(output.log, logs/*.log, dmesg.log, kernel.log)"
}

# The core subset: what talks to the kernel's interfaces, which change
# between versions - the in-module self-tests, the device, netlink,
# IPv6 and IPv4 inside and out, MTU and ICMP, the wire image, forged
# RSTs, a 200 ms path through a router with offloads on, pacing, and a
# session over four connections (a listening socket per device,
# conntrack on the router), and addresses and routes that change under a
# session (route lookups by source, IPv6 source selection), and a small
# link with ICMP dropped (the MSS a SYN announces comes from the route,
# and R's nftables clamp it); about nine minutes under emulation.
# test_conf.sh (ftvctl's configuration files, over the netlink that
# test_netlink.sh covers) left it on 2026-11-30 for the debug kernel's
# subset to fit. The rest exercises the module's own logic, which is the
# same on every kernel: 6.1 runs all of it.
CORE_TESTS="test_module_selftests.sh test_device.sh test_netlink.sh
	test_ping6.sh test_transfer.sh test_transfer6.sh test_mtu.sh
	test_wire.sh test_rst.sh test_longpath.sh test_pacing.sh
	test_flows.sh test_addr.sh test_blackhole.sh"

# Under the debug kernel's checkers: the in-module self-tests (the
# replay window's among them), a removed peer's old connections hit by
# junk (the review's use after free), peer removal and device deletion
# with packets in the crypt queues, a dump whose cursor peer goes, every
# allocation of the control operations failed in turn (with failslab on
# the data path), and joins of a session taken, refused and freed with
# their peer, given up and replaced as they carry their budget, and a
# renewal's new session with its old keys freed (test_flows.sh), and a
# join's SYN held while an opener is published on its tuple, which until
# 2026-12-02 left a peer pointing at a freed connection
# (test_join_race.sh, which needs KASAN to show it); about nine minutes. The plain transfers and key renewal of test_transfer.sh
# and test_rekey.sh are in those already. The rest is make
# check-debug's; CI's 90 minutes do not hold more beside 6.1's whole
# suite and 6.12's core subset: teardown under load (test_lifecycle.sh)
# and FEC's rebuilding on a lossy path (test_fec.sh) left this subset on
# 2026-11-30, and test_censor.sh and test_freeze.sh, which replace
# connections by the hundred, were never in it.
DEBUG_CORE_TESTS="test_module_selftests.sh test_peer_removal.sh
	test_inflight.sh test_dump.sh test_faults.sh test_flows.sh
	test_join_race.sh"

# What each part took on the reference machine (two cores, software
# emulation), in seconds, VM boot and ftv.ko's build included. On
# 2026-11-29 (the later kernels built beside the first suite): 6.1's
# whole suite about 2650 (its tests 2459); the debug kernel's core subset
# 777, counted as 850; 6.12's core subset 241 s of tests without
# test_rst.sh and test_flows.sh (101 more), counted as 420 with its boot
# (a padded figure only makes the plan skip it sooner); the
# debug build 450, when it was not built beside the first suite; the
# debug kernel's whole suite scaled from an older count. The probe
# tests of the same day added about 200 s to the whole suite (170 and
# 55 s run alone), counted in REF_FULL. The budget scales them by how
# long this machine's first whole suite took against REF_FULL. Later
# the same day the suite lost about a sixth of its time (the packet
# tools without scapy, python without site, test_netlink.sh's requests
# through one process), which REF_FULL counted as 2300 without a whole
# run to measure it. Measured on 2026-11-30 (with the scripts that share
# the VM two at a time, slub_debug on, .ci/run from a fresh clone): about
# 3550, the shared ones about 1000 of that. Later that day ten more
# scripts came to share the VM (the module's log lines name their
# namespace): the shared part took 1611 s, about 150 s less than before
# with those ten alone; REF_FULL stays as it was until a whole run
# measures it. The core subsets as they are since then: 6.12's was measured at
# 536 with test_conf.sh (66 s), now counted as 470; the debug kernel's,
# without test_lifecycle.sh and test_fec.sh (211 s on 6.1, and the debug
# kernel takes about half as long again as 6.1), as 500. The debug
# build's 450 held when it was built beside the first suite; since it
# gets only the few minutes of the host's tests at nice 19 (stopped while
# a suite runs), most of its half hour on two cores is left at its turn:
# a fresh clone on 2026-11-30 found it barely begun after 6.1's suite
# (3540 s, REF_FULL confirmed) and the plan, counting 450, sent it on to
# a build that would have taken CI past 90 minutes. Counted as 1500.
# On 2026-12-02 the third review's five scripts came (about 250 s on
# 6.1, test_join_flood.sh's minute of flood the most), counted in
# REF_FULL, and test_join_race.sh joined the debug kernel's subset (40 s
# on 6.1), counted in REF_DEBUG_CORE. Later that day test_addr.sh came
# (40 s on 6.1), in 6.12's core subset too: 40 more in each; and
# test_jitter.sh (35 s on 6.1), in the whole suite only. On 2026-12-03
# test_blackhole.sh came (38 s on a machine that ran the whole suite in
# 2,220 s, about 1.75 times the reference pace: 65 counted), in 6.12's
# core subset too.
REF_FULL=3950
REF_CORE=575
REF_DEBUG_BUILD=1500
REF_DEBUG_FULL=6000
REF_DEBUG_CORE=560

# core_cost KVER : what KVER's core subset takes at the reference pace,
# its build included if the debug kernel is not built yet
core_cost()
{
	if [ "$1" = debug ]; then
		if scripts/debug-kernel.sh --built; then
			echo "$REF_DEBUG_CORE"
		else
			echo $((REF_DEBUG_BUILD + REF_DEBUG_CORE))
		fi
	else
		echo "$REF_CORE"
	fi
}

# plan KVER : prints full, core or skip: the whole suite if it fits in
# what is left of the budget with the core subsets of the kernels after
# it, the core subset if it fits in that and the slack, at the pace the
# first suite showed
plan()
{
	local left=$((budget - SECONDS - 60)) build=0 full=$REF_FULL core
	local after reserve=0 k

	after=${kvers#*" $1"}
	for k in $after; do
		reserve=$((reserve + $(core_cost "$k")))
	done
	if [ "$1" = debug ]; then
		full=$REF_DEBUG_FULL
		scripts/debug-kernel.sh --built || build=$REF_DEBUG_BUILD
	fi
	core=$(core_cost "$1")
	full=$(((build + full + reserve) * pace / REF_FULL))
	core=$((core * pace / REF_FULL))
	if [ "$full" -le "$left" ]; then
		echo full
	elif [ "$core" -le $((left + slack)) ]; then
		echo core
	else
		echo skip
	fi
}

total_pass=$host_pass
total_fail=$((failed + host_fail))
report="host: $host_pass passed, $host_fail failed"
budget=${FTV_CHECK_SECONDS:-0}
slack=${FTV_CHECK_SLACK:-480}
pace=0
later=${kvers#*"$first"}
prebuild_pid=
# The stock kernels' modules build beside the first suite (a minute at
# most); the debug kernel's build is the early one above, stopped while
# any suite runs.
if [ "$budget" -gt 0 ] && [ -n "${later// /}" ]; then
	echo "check: building for${later/ debug/} at nice 19 beside $first's suite" \
		"(.cache/prebuild.log)"
	(
		renice -n 19 -p "$BASHPID" >/dev/null
		for kver in $later; do
			[ "$kver" = debug ] && continue
			build_for || echo "check: building for $kver failed"
		done
	) >"$ROOT/.cache/prebuild.log" 2>&1 </dev/null &
	prebuild_pid=$!
fi
for kver in $kvers; do
	subset=
	if [ "$kver" != "$first" ] && [ -n "$prebuild_pid" ]; then
		wait "$prebuild_pid"
		prebuild_pid=
	fi
	# The early build is finished only if the plan, counting a whole
	# build still to do, gives the debug kernel its core subset at
	# least: waiting for it would take from 6.12's time otherwise.
	if [ "$kver" = debug ] && [ -n "$debug_pid" ] && [ "$pace" -gt 0 ] &&
	   [ "$(plan debug)" = skip ]; then
		debug_build TERM
		debug_build CONT
		debug_pid=
		trap - EXIT
	fi
	if [ "$kver" = debug ] && [ -n "$debug_pid" ]; then
		echo "check: finishing the debug kernel's build at full speed"
		renice -n 0 -g "$debug_pid" >/dev/null 2>&1
		debug_build CONT
		wait "$debug_pid" || echo "check: the early debug kernel build failed" \
			"(.cache/debug-build.log); building it again"
		debug_pid=
		trap - EXIT
	fi
	if [ "$budget" -gt 0 ] && [ -z "${TEST_PROGS:-}" ] && [ "$pace" -gt 0 ]; then
		p=$(plan "$kver")
		# The debug kernel's build is counted at its reference time;
		# once built, the plan is made again with what it really took,
		# so that a slow build makes the suite shrink or go rather
		# than run into its VM's limit.
		if [ "$p" != skip ] && [ "$kver" = debug ] &&
		   ! scripts/debug-kernel.sh --built; then
			build_for || echo "check: building for debug failed"
			p=$(plan "$kver")
		fi
		if [ "$p" = skip ]; then
			echo "check: $((budget - SECONDS))s left of FTV_CHECK_SECONDS;" \
				"not enough for $kver's core subset: skipped"
			report="$report; $kver: skipped (no time left)"
			continue
		elif [ "$p" = core ]; then
			echo "check: $((budget - SECONDS))s left of FTV_CHECK_SECONDS;" \
				"$kver runs its core subset"
			subset=" (core subset)"
			if [ "$kver" = debug ]; then
				export TEST_PROGS=${DEBUG_CORE_TESTS//[$'\n\t']/ }
			else
				export TEST_PROGS=${CORE_TESTS//[$'\n\t']/ }
			fi
		fi
	fi
	start=$SECONDS
	run_suite
	# The pace is set by the first whole suite on a stock kernel.
	[ "$pace" = 0 ] && [ -z "${TEST_PROGS:-}" ] && [ "$kver" != debug ] &&
		pace=$((SECONDS - start))
	[ -n "$subset" ] && unset TEST_PROGS
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	report="$report; $kver$subset: $pass passed, $fail failed"
done
echo
echo "check: $report"
summary "$total_pass" "$total_fail"
