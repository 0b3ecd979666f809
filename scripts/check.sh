#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What `make check` and `make demo` do: install dependencies, build ftv.ko
# for the test kernel and ftvctl, boot that kernel with virtme-ng and run
# the selftests (or the demo) inside it.
#
#	scripts/check.sh [check|demo]
#
# Environment: KVER or FTV_KERNEL picks the kernel (a version or prefix
# for scripts/kernel.sh, default 6.1); FTV_NO_VM=1 runs on this host with
# its running kernel instead; FTV_SKIP_DEPS=1 skips scripts/deps.sh;
# TEST_PROGS limits which selftests run; MAKE is the make to use.
#
# Two modules are built: the one users run, which the selftests exercise,
# and a debug build (FTV_DEBUG=1), whose self-tests run when it loads;
# test_module_selftests.sh loads that one ($FTV_DEBUG_KO) and reads them.
#
# For check, the last line printed is always "N passed, N failed", over
# the selftests in the VM and ftvctl's own tests on the host; a build that
# fails or a VM that dies before reporting counts as one failure.

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
	kver=$(uname -r)
else
	kver=$(scripts/kernel.sh "${KVER:-${FTV_KERNEL:-6.1}}") || {
		[ "$what" = check ] && summary 0 1
		exit 1
	}
fi

# ftv.ko is built from a copy of the sources in .cache/build/KVER, so
# that a check never races with a build someone runs in the tree at the
# same time, and builds for different kernels do not overwrite each other.
# tar keeps the timestamps, so kbuild rebuilds only what changed.
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
		Kbuild module | tar -C "$dir" -xf - &&
	$MAKE --no-print-directory -C "/lib/modules/$kver/build" M="$dir" \
		FTV_VERSION="$(scripts/version.sh)" "$@" modules
}

build=$ROOT/.cache/build/$kver
step "build ftv.ko for $kver (in ${build#"$ROOT"/}, and a debug build)"
if ! build_module "$build" ||
   ! build_module "$build-debug" FTV_DEBUG=1; then
	echo "check: building the module failed; nothing to test"
	[ "$what" = check ] && summary 0 1
	exit 1
fi
ko=$build/module/ftv.ko
export FTV_DEBUG_KO=$build-debug/module/ftv.ko

step "build ftvctl"
if ! $MAKE --no-print-directory tools; then
	# The module's own tests can still run; the ones that need ftvctl bail.
	echo "check: building ftvctl failed"
	failed=1
fi

# ftvctl's own tests and the dkms packaging's need no module and run
# here, on the host; their cases count like the selftests'.
host_pass=0
host_fail=0
if [ "$what" = check ] && [ "$failed" = 0 ] &&
   grep -q '^check:' tools/ftvctl/Makefile 2>/dev/null; then
	step "ftvctl's and dkms's tests (host, no module needed)"
	log=$ROOT/.cache/ftvctl-check.log
	{
		$MAKE --no-print-directory -C tools/ftvctl check </dev/null
		r1=$?
		# dkms add/build/install for every installed 6.x kernel.
		tools/packaging/dkms.sh </dev/null
		exit $((r1 | $?))
	} 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	host_pass=$(grep -cE '^ok [0-9]+' "$log")
	host_fail=$(grep -cE '^not ok [0-9]+' "$log")
	if [ "$rc" -ne 0 ] && [ "$host_fail" -eq 0 ]; then
		host_fail=1
	fi
fi

if [ "$what" = demo ]; then
	step "demo in a VM running $kver"
	scripts/vm.sh -k "$kver" -m "$ko" -- selftests/demo.sh
	exit
fi

step "selftests in a VM running $kver"
scripts/vm.sh -k "$kver" -m "$ko" -- selftests/run.sh
rc=$?

out=.vm-out/output.log
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" 2>/dev/null | tail -n 1)
if [ -n "$last" ]; then
	pass=${last%% passed*}
	fail=${last#*passed, }
	fail=${fail%% failed}
else
	# The run did not get to its summary: count what it reported.
	echo "check: the selftests did not finish (exit $rc); counting what they reported"
	pass=$(grep -cE '^# ok [0-9]+' "$out" 2>/dev/null)
	fail=$(grep -cE '^# not ok [0-9]+' "$out" 2>/dev/null)
	fail=$((${fail:-0} + 1))
fi
pass=${pass:-0}
if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
	fail=1
fi
echo "check: selftests in the VM: $pass passed, $fail failed;" \
	"ftvctl's tests on the host: $host_pass passed, $host_fail failed"
echo "check: logs in .vm-out/ (output.log, logs/*.log, dmesg.log, kernel.log)"
summary $((pass + host_pass)) $((fail + failed + host_fail))
