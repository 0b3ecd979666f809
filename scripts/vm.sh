#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot an installed kernel with virtme-ng and run a command in it, as root,
# in the repository directory, with ftv.ko loaded first.
#
#	scripts/vm.sh [-k KERNEL | -i IMAGE] [-o OUTDIR] [-m KO] [--no-load]
#		[--] CMD [ARG...]
#
# -k KERNEL   version or prefix, resolved by scripts/kernel.sh (default
#             $KVER, else $FTV_KERNEL, else 6.1)
# -i IMAGE    boot this kernel image instead of an installed one (the
#             debug kernel's arch/x86/boot/bzImage, from its build tree)
# -o OUTDIR   where the guest writes its results (default .vm-out); the
#             only directory the guest can write back to the host:
#               output.log  the command's stdout and stderr
#               rc          its exit code
#               load.log    what loading the module printed
#               dmesg.log   the guest's kernel log at the end
#               console.log everything the VM printed (host side)
#               kernel.log  the guest's kernel console (loglevel 7), written
#                           by qemu, so an oops or panic is kept even when
#                           the guest dies
# -m KO       the ftv.ko to load (default module/ftv.ko); the tests see it
#             as $FTV_KO
# --no-load   do not load ftv.ko before running CMD
#
# The guest's / is the host's, read-only; /tmp is a throwaway overlay.
# The exit status is CMD's, or 125 if the VM did not get to report one.
#
# TEST_PROGS, FTV_TEST_TIMEOUT, FTV_TEST_JOBS, FTV_TRANSFER_MB, FTV_PORT,
# FTV_DEBUG_KO and FTV_CHECKERS are passed on to the guest. Other
# environment: FTV_KVM (auto, 0 or 1; default auto: use KVM if a probe
# boot with it works), FTV_VM_CPUS (2), FTV_VM_MEMORY (2G),
# FTV_VM_TIMEOUT (seconds for the whole boot, default 2700),
# FTV_VM_APPEND (more kernel command line, after vm.sh's own), FTV_VM_LOCK
# (the lock file that keeps VMs on this machine one at a time),
# FTV_VM_QEMU_OPTS (more qemu options, appended last, so "-cpu qemu64"
# overrides vng's own -cpu), FTV_NO_VM=1 (run CMD on this host instead,
# loading the module into the running kernel).

set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
kernel=${KVER:-${FTV_KERNEL:-6.1}}
out=$ROOT/.vm-out
load=1
ko=$ROOT/module/ftv.ko
image=

while [ $# -gt 0 ]; do
	case $1 in
	-k) kernel=$2; shift 2 ;;
	-i) image=$(realpath "$2"); shift 2 ;;
	-o) out=$2; shift 2 ;;
	-m) ko=$(realpath "$2"); shift 2 ;;
	--no-load) load=0; shift ;;
	--) shift; break ;;
	-h | --help) sed -n '3,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "vm.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -eq 0 ]; then
	echo "vm.sh: no command given" >&2
	exit 2
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/output.log" "$out/rc" "$out/load.log" "$out/dmesg.log" \
	"$out/console.log" "$out/kernel.log"
rm -rf "$out/logs"
mkdir -p "$out/logs"
# Keep the results out of git status without touching .gitignore.
[ -f "$out/.gitignore" ] || echo '*' >"$out/.gitignore"

# The guest does not inherit this environment; pass on what the tests read.
envs=()
for v in TEST_PROGS FTV_TEST_TIMEOUT FTV_TEST_JOBS FTV_TRANSFER_MB FTV_PORT \
	FTV_DEBUG_KO FTV_CHECKERS; do
	[ -n "${!v:-}" ] && envs+=("$v=${!v}")
done
guest_cmd=$(printf '%q ' env "${envs[@]}" "$ROOT/scripts/vm-guest.sh" "$out" "$load" "$ko" "$@")

if [ "${FTV_NO_VM:-0}" = 1 ]; then
	echo "vm.sh: FTV_NO_VM=1, running on this host ($(uname -r))"
	set +e
	bash -c "$guest_cmd" 2>&1 | tee "$out/console.log"
	rc=${PIPESTATUS[0]}
	exit "$rc"
fi

if [ -n "$image" ]; then
	# A kernel build tree: its release string is next to the image.
	ver=$(cat "${image%/arch/*}/include/config/kernel.release" 2>/dev/null ||
		basename "$image")
else
	ver=$("$ROOT/scripts/kernel.sh" "$kernel")
	image=/boot/vmlinuz-$ver
fi

if ! command -v vng >/dev/null 2>&1; then
	echo "vm.sh: vng (virtme-ng) not found; run scripts/deps.sh" >&2
	exit 125
fi

# vng sends the serial console to /dev/null unless --verbose, and then it
# floods the terminal; a virtio console into a file keeps what matters
# when the guest crashes (panic=-1 makes qemu exit at once). The kernel
# log holds 8 MB: the selftests count objects by their pr_debug lines
# since a mark, and a test that replaces connections by the hundred
# writes many.
vng_args=(-r "$image" --cpus "${FTV_VM_CPUS:-2}"
	--memory "${FTV_VM_MEMORY:-2G}" --cwd "$ROOT" --rwdir="$out"
	--qemu-opts="-chardev file,id=ftvklog,path=$out/kernel.log -device virtconsole,chardev=ftvklog"
	--append "console=hvc0 loglevel=7 log_buf_len=8M${FTV_VM_APPEND:+ $FTV_VM_APPEND}")
if [ -n "${FTV_VM_QEMU_OPTS:-}" ]; then
	vng_args+=(--qemu-opts="$FTV_VM_QEMU_OPTS")
fi

# One VM at a time per machine: two emulated guests on two cores starve
# each other, which times tests out and skews every figure a bench takes.
# A second vm.sh waits here (FTV_VM_LOCK, default /tmp/ftv-vm.lock).
exec 9>"${FTV_VM_LOCK:-/tmp/ftv-vm.lock}"
if ! flock -n 9; then
	echo "vm.sh: another VM is running here; waiting for it to end"
	flock 9
fi

# KVM is used only when a short probe boot with it succeeds: /dev/kvm can
# exist and still fail in qemu (nested virtualisation without the MSRs
# qemu wants, for example). Where it fails the probe hangs until its
# timeout, so its answer is kept for this boot of the machine: make check
# boots three kernels, and each probe cost two minutes before 2026-12-03.
kvm=${FTV_KVM:-auto}
if [ "$kvm" = auto ]; then
	kvm=0
	probe=$ROOT/.cache/kvm-probe
	boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
	if [ ! -w /dev/kvm ]; then
		:
	elif [ -n "$boot" ] && [ "$(sed -n 1p "$probe" 2>/dev/null)" = "$boot" ]; then
		kvm=$(sed -n 2p "$probe")
	else
		timeout -k 5 30 vng -r "$image" --cpus 1 --memory 512M -- true \
			</dev/null >/dev/null 2>&1 && kvm=1
		mkdir -p "$ROOT/.cache"
		[ -f "$ROOT/.cache/.gitignore" ] || echo '*' >"$ROOT/.cache/.gitignore"
		printf '%s\n%s\n' "$boot" "$kvm" >"$probe"
	fi
fi
[ "$kvm" = 1 ] || vng_args+=(--disable-kvm)

echo "vm.sh: booting $ver ($([ "$kvm" = 1 ] && echo KVM || echo "software emulation, no KVM"))"
set +e
# timeout signals its whole process group, so qemu goes down with vng.
timeout -k 10 "${FTV_VM_TIMEOUT:-2700}" vng "${vng_args[@]}" -- "$guest_cmd" \
	</dev/null 2>&1 | tee "$out/console.log"
vng_rc=${PIPESTATUS[0]}
set -e

if [ ! -f "$out/rc" ]; then
	if [ "$vng_rc" -eq 124 ] || [ "$vng_rc" -eq 137 ]; then
		echo "vm.sh: the VM did not finish within ${FTV_VM_TIMEOUT:-2700}s" >&2
	fi
	echo "vm.sh: the guest did not report an exit code (vng exit $vng_rc);" \
		"it probably crashed. The end of its kernel log ($out/kernel.log):" >&2
	tail -n 60 "$out/kernel.log" 2>/dev/null | sed 's/^/vm.sh:   /' >&2
	# The end of the log may be the middle of a report: its first line
	# (what warned or oopsed, where) and the top of its stack come last,
	# where a reader of CI's output sees them.
	# Not only warnings and oopses: an RCU stall, a lockup and a SLUB
	# report ("BUG kmalloc-1k (...)") have their own words; a bare
	# dump_stack() (a checksum fault, say) has none, and then the first
	# "Call Trace:" is shown with the lines before it.
	first=$(grep -n -m 1 -E 'WARNING:|BUG:|BUG [^ ]+ \(|Oops|general protection|Kernel panic|refcount_t:|rcu_.*detected stall|soft lockup|hard LOCKUP' \
		"$out/kernel.log" 2>/dev/null | cut -d: -f1)
	[ -n "$first" ] || first=$(grep -n -m 1 'Call Trace' "$out/kernel.log" \
		2>/dev/null | cut -d: -f1)
	if [ -n "$first" ]; then
		during=$(head -n "$first" "$out/kernel.log" |
			grep -o 'ftv-selftest: [^ ]*' | tail -n 1)
		echo "vm.sh: the first report in the kernel log (line $first," \
			"during ${during#ftv-selftest: }):" >&2
		sed -n "$((first > 15 ? first - 15 : 1)),$((first + 40))p" \
			"$out/kernel.log" | sed 's/^/vm.sh:   /' >&2
	fi
	# A guest that ends with no panic printed: qemu may say why.
	echo "vm.sh: the end of what vng and qemu printed:" >&2
	grep -v '^\[ *[0-9]*\.[0-9]*\]' "$out/console.log" 2>/dev/null |
		tail -n 10 | sed 's/^/vm.sh:   /' >&2
	exit 125
fi
exit "$(cat "$out/rc")"
