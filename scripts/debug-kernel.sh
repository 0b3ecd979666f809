#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the debug kernel of `make check-debug` from Debian's kernel source
# package, once, and print its build directory.
#
#	scripts/debug-kernel.sh [--built]
#
# With --built it builds nothing and only says, by its exit status,
# whether the build tree is there and up to date.
#
# The config is allnoconfig plus scripts/debug-kernel.config: small enough
# to build in about half an hour on two cores, with KASAN, lockdep (with
# RCU checking), might_sleep checks, kmemleak and debugobjects. The build
# tree stays in .cache/debug-kernel/build-VER with a stamp of the source
# tarball and the config fragment, so a second run reuses it; change
# either and the next run reconfigures and rebuilds incrementally.
#
# Environment: LINUX_SOURCE_TAR (default /usr/src/linux-source-6.1.tar.xz),
# FTV_DEBUG_JOBS (make -j, default the number of CPUs).

set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
tar=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.1.tar.xz}
frag=$ROOT/scripts/debug-kernel.config
cache=$ROOT/.cache/debug-kernel
jobs=${FTV_DEBUG_JOBS:-$(nproc)}

if [ ! -f "$tar" ]; then
	echo "debug-kernel.sh: $tar not found (apt-get install linux-source-6.1," \
		"or run scripts/deps.sh --debug)" >&2
	exit 1
fi

name=$(basename "$tar" .tar.xz)
src=$cache/$name
build=$cache/build-${name#linux-source-}
stamp=$(cat "$tar.sha256" 2>/dev/null || stat -c '%s %Y' "$tar")
stamp="$name $stamp $(sha256sum <"$frag" | cut -d' ' -f1)"

if [ -f "$build/arch/x86/boot/bzImage" ] &&
   [ "$(cat "$build/.ftv-stamp" 2>/dev/null)" = "$stamp" ]; then
	[ "${1:-}" = --built ] || echo "$build"
	exit 0
fi
[ "${1:-}" = --built ] && exit 1

mkdir -p "$cache"
if [ ! -f "$src/Makefile" ]; then
	echo "debug-kernel.sh: unpacking $tar" >&2
	rm -rf "$src"
	tar -C "$cache" -xf "$tar"
fi

mkdir -p "$build"
rm -f "$build/.ftv-stamp"
kmake=(make -C "$src" O="$build" LOCALVERSION=-ftv-debug)

echo "debug-kernel.sh: configuring (allnoconfig + $(basename "$frag"))" >&2
"${kmake[@]}" -s allnoconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" "$frag" >&2
"${kmake[@]}" -s olddefconfig >&2

# merge_config.sh only warns when Kconfig overrides a request; a checker
# that silently fell out of the config would make the whole run pointless.
missing=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) ;;
	*) continue ;;
	esac
	sym=${line%%=*}
	want=${line#*=}
	got=$(grep -E "^$sym=" "$build/.config" | cut -d= -f2- || true)
	if [ "$got" != "$want" ]; then
		echo "debug-kernel.sh: $sym: asked for $want, got '${got:-unset}'" >&2
		missing=1
	fi
done <"$frag"
[ "$missing" = 0 ] || exit 1

echo "debug-kernel.sh: building in $build with -j$jobs (slow: KASAN, lockdep)" >&2
start=$SECONDS
"${kmake[@]}" -s -j"$jobs" bzImage modules >&2
echo "debug-kernel.sh: built in $(((SECONDS - start) / 60)) min" >&2
echo "$stamp" >"$build/.ftv-stamp"
echo "$build"
