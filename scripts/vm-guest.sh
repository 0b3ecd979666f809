#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM started by scripts/vm.sh (or on the host with
# FTV_NO_VM=1): loads ftv.ko, runs the command, and leaves the results in
# OUTDIR, the directory the host can read back.
#
#	scripts/vm-guest.sh OUTDIR LOAD KO CMD [ARG...]
#
# LOAD is 1 to load KO first; KO is exported as FTV_KO for the tests.

set -u

out=$1
load=$2
export FTV_KO=$3
shift 3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1

# shellcheck source-path=SCRIPTDIR source=../selftests/lib.sh
. "$ROOT/selftests/lib.sh"

echo "vm-guest: kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1024 " MB" }' /proc/meminfo)"

if [ "$load" = 1 ]; then
	if [ -f "$FTV_KO" ]; then
		vermagic=$(modinfo -F vermagic "$FTV_KO" | awk '{ print $1 }')
		if [ "$vermagic" != "$(uname -r)" ]; then
			echo "vm-guest: $FTV_KO was built for $vermagic, this is $(uname -r)" |
				tee -a "$out/load.log"
		fi
	fi
	mark="vm-guest: loading ftv $$"
	echo "$mark" >/dev/kmsg
	# run.sh checks the kernel log from here: what loading the module
	# made the kernel say (a warning from an interface that changed)
	# counts as much as what the tests did.
	export FTV_LOAD_MARK=$mark
	if ftv_load_module >>"$out/load.log" 2>&1; then
		echo "vm-guest: ftv loaded ($(cat /sys/module/ftv/version 2>/dev/null || echo "no version"))"
		dmesg_since "$mark" | sed 's/^/vm-guest:   /'
	else
		dmesg_since "$mark" >>"$out/load.log"
		echo "vm-guest: loading ftv failed; the tests will report it:"
		sed 's/^/vm-guest:   /' "$out/load.log"
	fi
fi

export FTV_LOG_DIR=$out/logs
"$@" 2>&1 | tee "$out/output.log"
rc=${PIPESTATUS[0]}

dmesg >"$out/dmesg.log" 2>&1
echo "$rc" >"$out/rc"
sync
exit "$rc"
