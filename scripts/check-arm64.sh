#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What `make check-arm64` does: ftv's core selftests on arm64, in an
# arm64 VM that qemu emulates (no KVM across architectures), booting
# Debian trixie's arm64 6.12 kernel with an arm64 trixie root.
#
#	scripts/check-arm64.sh
#
# scripts/chroot.sh setup-arm64 makes what it needs once: a cross
# compiler and Debian's arm64 headers in the trixie chroot (ftv.ko is
# cross-built there, W=1) and the arm64 root (.cache/chroot/arm64, its
# debootstrap's second stage emulated), where ftvctl is built, also
# emulated. The root is the VM's /, with this repository mounted at the
# same path (in a mount namespace of this script's own).
#
# TEST_PROGS picks the selftests (default: the module's self-tests, the
# device, netlink, ping, a 50 MB transfer, the wire image and forged
# RSTs); FTV_VM_TIMEOUT bounds the VM (default 5400 s). The last line is
# "N passed, N failed"; logs in .vm-out/RELEASE/.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
TESTS=${TEST_PROGS:-test_module_selftests.sh test_device.sh test_netlink.sh test_ping.sh test_transfer.sh test_wire.sh test_rst.sh}
ARM=$ROOT/.cache/chroot/arm64

fail()
{
	echo "check-arm64: $*"
	echo "0 passed, 1 failed"
	exit 1
}

# What only this needs, so not in scripts/deps.sh: the arm64 system
# emulator, and qemu-user for running arm64 programs in the arm64 root.
if ! command -v qemu-system-aarch64 >/dev/null ||
   ! command -v qemu-aarch64-static >/dev/null ||
   ! command -v update-binfmts >/dev/null; then
	echo "check-arm64: installing qemu-system-arm, qemu-user-static, binfmt-support"
	DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends \
		install qemu-system-arm qemu-user-static binfmt-support >/dev/null ||
		fail "installing qemu-system-arm, qemu-user-static and binfmt-support failed"
fi
scripts/chroot.sh setup-arm64 || fail "making the arm64 chroots failed"
img=$(find "$ARM/boot" -name 'vmlinuz-*-arm64' 2>/dev/null | sort -V | tail -n 1)
[ -n "$img" ] || fail "no arm64 kernel image in $ARM/boot"
rel=${img##*/vmlinuz-}
build=$ROOT/.cache/build/$rel
out=$ROOT/.vm-out/$rel
version=$(scripts/version.sh)

# ftv.ko and its debug build, cross-built in the trixie chroot.
for kind in "" -debug; do
	dir=$build$kind
	scripts/kbuild.sh --copy "$dir" || fail "copying the sources failed"
	args=(M="$dir" W=1 FTV_VERSION="$version" -j"$(nproc)")
	[ -n "$kind" ] && args+=(FTV_DEBUG=1)
	echo "check-arm64: building ftv.ko$kind for $rel"
	scripts/kbuild.sh "$rel" --no-print-directory "${args[@]}" modules \
		>"$dir.log" 2>&1 || { tail -n 20 "$dir.log"; fail "building ftv.ko$kind failed"; }
done

# ftvctl, built in the arm64 root from a copy (the tree's own ftvctl is
# this machine's).
src=$build-ftvctl
mkdir -p "$src/tools" "$src/module"
rm -rf "$src/tools/ftvctl" "$src/module/uapi"
cp -a tools/ftvctl "$src/tools/ftvctl"
cp -a module/uapi "$src/module/uapi"
make -s -C "$src/tools/ftvctl" clean >/dev/null 2>&1
echo "check-arm64: building ftvctl for arm64 (emulated)"
scripts/chroot.sh run arm64 make -s -C "$src/tools/ftvctl" FTV_VERSION="$version" \
	ftvctl >"$src.log" 2>&1 || { tail -n 20 "$src.log"; fail "building ftvctl failed"; }

mkdir -p "$out"
rm -rf "$out/logs" "$out/rc" "$out/output.log"
mkdir -p "$out/logs"
[ -f "$out/.gitignore" ] || echo '*' >"$out/.gitignore"
guest=$(printf '%q ' env FTVCTL="$src/tools/ftvctl/ftvctl" TEST_PROGS="$TESTS" \
	FTV_DEBUG_KO="$build-debug/module/ftv.ko" \
	"$ROOT/scripts/vm-guest.sh" "$out" 1 "$build/module/ftv.ko" selftests/run.sh)

exec 9>"${FTV_VM_LOCK:-/tmp/ftv-vm.lock}"
if ! flock -n 9; then
	echo "check-arm64: another VM is running here; waiting for it to end"
	flock 9
fi
echo "check-arm64: booting $rel (arm64, emulated) with $TESTS"
start=$SECONDS
mkdir -p "$ARM$ROOT"
# shellcheck disable=SC2016 # the inner shell expands these
timeout -k 10 "${FTV_VM_TIMEOUT:-5400}" unshare --mount /bin/sh -c '
	arm=$1 root=$2; shift 2
	mount --make-rprivate / && mount --bind "$root" "$arm$root" &&
	exec "$@"' sh "$ARM" "$ROOT" \
	vng -r "$img" --arch arm64 --root "$ARM" --disable-kvm --cpus 2 \
	--memory 2G --cwd "$ARM$ROOT" --rwdir="$out=$out" \
	--append "loglevel=7 log_buf_len=8M slub_debug=FZPU,kmalloc-*" \
	-- "$guest" </dev/null >"$out/console.log" 2>&1
echo "check-arm64: the VM took $((SECONDS - start)) s"
grep -E '^(ok|not ok) ' "$out/output.log" 2>/dev/null
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/output.log" 2>/dev/null | tail -n 1)
if [ -z "$last" ] || [ "$(cat "$out/rc" 2>/dev/null)" != 0 ]; then
	tail -n 30 "$out/console.log"
	[ -n "$last" ] || last="0 passed, 1 failed"
fi
echo "$last"
[ "$(cat "$out/rc" 2>/dev/null)" = 0 ]
