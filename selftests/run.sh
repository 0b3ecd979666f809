#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the ftv selftests and count their KTAP results.
#
#	selftests/run.sh [TEST...]
#
# Without arguments it runs TEST_PROGS from the environment, or every
# selftests/test_*.sh. Each script's own KTAP output is printed indented
# with "# " (as the kselftest runner does), followed by one "ok"/"not ok"
# line per script. The count is over the test cases inside the scripts:
# a planned case that never reported (a crash or a "Bail out!") counts as
# failed, and so does a script that failed without reporting a failure.
# After the scripts, the kernel log is checked for warnings, oopses and
# the reports of the debug kernel's checkers (KASAN, lockdep, RCU,
# might_sleep, debugobjects, stalls) and of SLUB's debugging (slub_debug:
# poisoned freed objects written to); that check counts as one more case.
# On a kernel with kmemleak, a last case has it scan for leaks. The last
# line is always "N passed, N failed"; the exit status is 1 if anything
# failed.
#
# Environment: TEST_PROGS (list of scripts), FTV_TEST_TIMEOUT (seconds per
# script, default 900), FTV_TEST_JOBS (how many of the scripts that say
# they may share the VM run at once, default 3; 1 runs every script
# alone), FTV_LOG_DIR (if set, each script's output is also saved there
# as NAME.log), FTV_CHECKERS=1 (the kernel must have lockdep and
# kmemleak: make check-debug's, where their absence would pass
# everything unchecked).

set -u

cd "$(dirname "$0")" || exit 1

TIMEOUT=${FTV_TEST_TIMEOUT:-900}
JOBS=${FTV_TEST_JOBS:-3}
LOG_DIR=${FTV_LOG_DIR:-}

if [ $# -gt 0 ]; then
	tests=("$@")
elif [ -n "${TEST_PROGS:-}" ]; then
	read -r -a tests <<<"$TEST_PROGS"
else
	tests=(test_*.sh)
fi

total_pass=0
total_fail=0
total_skip=0

# known_failures SCRIPT : the "regex<TAB>reason" lines of known-failures
known_failures()
{
	[ -r known-failures ] || return 0
	awk -F '\t' -v s="$1" '$1 == s { print $2 "\t" $3 }' known-failures
}

# count_results FILE RC SCRIPT : prints "pass fail skip" for one script's
# output; a failed case listed in known-failures is an expected failure
# (counted in none of the three) and is reported by the caller.
count_results()
{
	known_failures "$3" >"$1.known"
	awk -v rc="$2" -v known="$1.known" '
		BEGIN {
			FS = "\t"
			while ((getline line < known) > 0) {
				split(line, f, "\t"); k++; re[k] = f[1]
			}
			FS = " "
		}
		/^1\.\.[0-9]+/ && !plan { plan = substr($1, 4) + 0; have_plan = 1 }
		/^ok [0-9]+/ {
			n++
			if ($0 ~ /# *SKIP/) skip++; else pass++
		}
		/^not ok [0-9]+/ {
			n++
			desc = $0; sub(/^not ok [0-9]+ /, "", desc)
			for (j = 1; j <= k; j++)
				if (desc ~ re[j]) { xfail++; next }
			fail++
		}
		END {
			if (have_plan && n < plan) fail += plan - n
			if (rc == 4 && n == 0) skip++
			else if (rc != 0 && rc != 4 && fail == 0 && !xfail) fail++
			else if (!have_plan && n == 0 && rc == 0) fail++
			printf "%d %d %d\n", pass, fail, skip
		}' "$1"
}

# The kernel log is checked from here on, and kmemleak forgets what it
# suspected before (boot-time allocations are none of ours).
mark="ftv-selftest-run: start $$ $RANDOM"
echo "$mark" >/dev/kmsg 2>/dev/null
kmemleak=/sys/kernel/debug/kmemleak
[ -e "$kmemleak" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -w "$kmemleak" ] && echo clear >"$kmemleak" 2>/dev/null || kmemleak=
extra=1
if [ -n "$kmemleak" ] || [ "${FTV_CHECKERS:-0}" = 1 ]; then
	extra=2
fi

# Packet timestamps stay on for the whole run. Under software emulation
# the kernel's live code patching can race with the other vCPU: when
# tcpdump turned timestamps on or off (a static key in the receive path)
# 6.12 and 7.3 guests died on the int3 left in netif_rx_internal() or
# __netif_receive_skb_core() while its jump was being rewritten. One
# socket that asks for timestamps from the start keeps that key on, so
# it is never patched during the tests. Python's socket module has no
# SO_TIMESTAMP: 29 is its number on every architecture ftv runs on (the
# hold used the name, died at once, and the guests still crashed). It
# says "held" once the option is set; the kernel-log case below fails
# if it is not running by then.
exec {stamps_fd}< <(exec python3 -c '
import signal, socket
SO_TIMESTAMP = 29
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMP, 1)
print("held", flush=True)
signal.pause()' </dev/null 2>&1)
stamps=$!
trap 'kill "$stamps" 2>/dev/null' EXIT
read -r -t 60 stamps_said <&"$stamps_fd" || stamps_said="nothing in 60 s"

echo "TAP version 13"
echo "1..$((${#tests[@]} + extra))"

# Options from ./config the running kernel lacks (a note, not a failure:
# the tests that need them will say so).
kconfig=/boot/config-$(uname -r)
if [ -r "$kconfig" ] && [ -r config ]; then
	while IFS= read -r opt; do
		[ -n "$opt" ] || continue
		name=${opt%%=*}
		grep -qE "^$name=[ym]" "$kconfig" ||
			echo "# kernel config lacks $opt"
	done <config
fi

# vm_share SCRIPT : prints the script's "run.sh: shares the VM" line, if
# it has one: it says the script may run beside another one (it reads no
# kernel log that others write into, sets no module parameter, loads
# nothing, and judges nothing by time or rate). It then runs with
# FTV_SHARED=1, under which lib.sh's ftv_load_module refuses (an unload
# takes every ftv device away, the other script's too). The others run
# alone. The longest of them says "shares the VM, starts first", so that
# it does not run on alone at the end.
vm_share()
{
	grep -m 1 '^# run.sh: shares the VM' "$1"
}

# run_one SCRIPT DIR : runs one script with its timeout; its output goes
# to DIR/SCRIPT.out, its exit status and seconds to DIR/SCRIPT.rc
run_one()
{
	local start=$SECONDS rc

	timeout --foreground -k 10 "$TIMEOUT" bash "./$1" </dev/null >"$2/$1.out" 2>&1
	rc=$?
	echo "$rc $((SECONDS - start))" >"$2/$1.rc"
}

# report SCRIPT DIR : prints what run_one left in DIR as KTAP and adds it
# to the totals
report()
{
	local name=$1 out=$2/$1.out rc secs p f s

	i=$((i + 1))
	read -r rc secs <"$2/$name.rc"
	echo "# selftests: ftv: $name"
	sed 's/^/# /' "$out"
	[ -n "$LOG_DIR" ] && cp "$out" "$LOG_DIR/${name%.sh}.log"
	read -r p f s < <(count_results "$out" "$rc" "$name")
	# Known failures, said out loud every time.
	while IFS=$'\t' read -r re why; do
		grep -E "^not ok [0-9]+ " "$out" | sed -E 's/^not ok [0-9]+ //' |
			grep -E -- "$re" | while IFS= read -r c; do
				echo "# $name: not ok \"$c\" # TODO known failure: $why"
			done
		grep -E "^ok [0-9]+ " "$out" | sed -E 's/^ok [0-9]+ //' |
			grep -E -- "$re" | while IFS= read -r c; do
				echo "# $name: \"$c\" passes: remove it from known-failures"
			done
	done < <(known_failures "$name")
	rm -f "$out" "$out.known" "$2/$name.rc"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
	echo "# $name: $p passed, $f failed, $s skipped, exit $rc, ${secs}s"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "# $name: TIMEOUT after ${TIMEOUT}s"
	fi
	if [ "$rc" -eq 4 ] && [ "$f" -eq 0 ]; then
		echo "ok $i selftests: ftv: $name # SKIP"
	elif [ "$f" -eq 0 ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then
		echo "not ok $i selftests: ftv: $name # TODO only known failures"
	elif [ "$rc" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "ok $i selftests: ftv: $name"
	else
		echo "not ok $i selftests: ftv: $name"
	fi
}

# With FTV_TEST_JOBS above 1 the scripts that share the VM run first, that
# many at a time, and are reported as they end; then the others, one at
# a time. Under emulation a script spends most of its time starting
# processes on one vCPU, so two of them take little longer than one, and
# with two the guest still left a third of its two vCPUs idle: on
# 2026-12-03 the 40 scripts that share the VM took 17.5 minutes two at a
# time and 14.3 three at a time (each about 1.3 times as long), all 450
# cases passing. The longest of them (test_shape.sh, 282 s then) would
# come near 600 s on a machine half as fast: scripts get 900 s.
rundir=$(mktemp -d /tmp/ftv-run.XXXXXX)
shared=()
alone=()
for t in "${tests[@]}"; do
	t=$(basename "$t")
	share=
	[ "$JOBS" -gt 1 ] && share=$(vm_share "$t")
	case $share in
	*"starts first") shared=("$t" "${shared[@]}") ;;
	?*) shared+=("$t") ;;
	*) alone+=("$t") ;;
	esac
done
i=0
declare -A running=()
for t in "${shared[@]}"; do
	while [ "${#running[@]}" -ge "$JOBS" ]; do
		wait -n -p ended "${!running[@]}"
		report "${running[$ended]}" "$rundir"
		unset "running[$ended]"
	done
	FTV_SHARED=1 run_one "$t" "$rundir" &
	running[$!]=$t
done
while [ "${#running[@]}" -gt 0 ]; do
	wait -n -p ended "${!running[@]}"
	report "${running[$ended]}" "$rundir"
	unset "running[$ended]"
done
for t in "${alone[@]}"; do
	run_one "$t" "$rundir"
	report "$t" "$rundir"
done
rm -rf "$rundir"

# Anything the tests made the kernel complain about is a failure even if
# every script passed; so is anything loading the module did, when
# scripts/vm-guest.sh loaded it (FTV_LOAD_MARK is its line in the log).
i=$((i + 1))
echo "# selftests: ftv: kernel log"
# Between test_faults.sh's markers the kernel's own code dumps its stack
# for the allocations failed on purpose (sysctl registration does, with
# no WARNING): those call traces alone are not counted.
bad=$(dmesg 2>/dev/null | awk -v m="${FTV_LOAD_MARK:-$mark}" '
	index($0, "ftv-selftest: fault injection on") { inj = 1 }
	index($0, "ftv-selftest: fault injection off") { inj = 0 }
	found && !(inj && /Call Trace/) { print }
	index($0, m) { found = 1 }' |
	grep -E 'BUG:|BUG [^ ]+ \(|Poison overwritten|Redzone overwritten|Padding overwritten|Object already free|Freepointer corrupt|WARNING:|Oops|general protection|Call Trace|refcount_t:|UBSAN|KASAN|possible circular locking|possible recursive locking|inconsistent lock state|lock held when returning|suspicious RCU usage|sleeping function called|stack-protector|list_(add|del) corruption|ODEBUG:|INFO: task .* blocked|rcu_.*detected stall|soft lockup|hard LOCKUP|Workqueue: .* hogged|kmemleak: .*(leak|error)|turning off the locking correctness validator' |
	head -n 40)
if [ "$stamps_said" != held ] || ! kill -0 "$stamps" 2>/dev/null; then
	bad="${bad:+$bad
}the socket that holds packet timestamps on is gone (it said: $stamps_said)"
fi
# A lockdep that switched itself off (a report during boot, or its tables
# full) would pass everything from then on without looking.
if [ -r /proc/lockdep_stats ] && grep -qE 'debug_locks: +0' /proc/lockdep_stats; then
	bad="${bad:+$bad
}lockdep is off (debug_locks 0): nothing after that was checked"
elif [ "${FTV_CHECKERS:-0}" = 1 ] && [ ! -r /proc/lockdep_stats ]; then
	bad="${bad:+$bad
}FTV_CHECKERS=1, but this kernel has no lockdep"
fi
if [ -z "$bad" ]; then
	echo "ok $i selftests: ftv: kernel log has no warnings or oopses"
	total_pass=$((total_pass + 1))
else
	while IFS= read -r line; do echo "# $line"; done <<<"$bad"
	echo "not ok $i selftests: ftv: kernel log has no warnings or oopses"
	total_fail=$((total_fail + 1))
fi

# kmemleak reports an object once two scans found no pointer to it; what
# the tests freed late (an RCU grace period, a work item) is not yet one.
if [ "$extra" = 2 ]; then
	i=$((i + 1))
	echo "# selftests: ftv: kmemleak"
	if [ -z "$kmemleak" ]; then
		leaks="FTV_CHECKERS=1, but this kernel has no kmemleak"
	else
		echo scan >"$kmemleak"
		echo scan >"$kmemleak"
		leaks=$(cat "$kmemleak")
	fi
	if [ -z "$leaks" ]; then
		echo "ok $i selftests: ftv: kmemleak finds no leaked object"
		total_pass=$((total_pass + 1))
	else
		if [ -n "$kmemleak" ]; then
			echo "# $(grep -c '^unreferenced object' <<<"$leaks") unreferenced objects; the first:"
			leaks=$(awk '/^unreferenced object/ { n++ } n == 1' <<<"$leaks")
		fi
		head -n 30 <<<"$leaks" | sed 's/^/# /'
		echo "not ok $i selftests: ftv: kmemleak finds no leaked object"
		total_fail=$((total_fail + 1))
	fi
fi

echo "# Totals: pass:$total_pass fail:$total_fail skip:$total_skip"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
