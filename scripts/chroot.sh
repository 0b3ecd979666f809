#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian chroots, made here from Debian's own packages, for the kernels
# whose headers want a newer compiler than bookworm's gcc-12:
#
#	trixie  gcc-14; trixie's 6.12 headers and trixie-backports' 7.3
#	        headers and image (the image is what make check boots);
#	        dkms and git
#	sid     gcc-16; sid's newest headers (7.2)
#
#	scripts/chroot.sh [setup]          make them (or find them made)
#	scripts/chroot.sh setup-arm64      also arm64: a cross compiler and
#	                                   Debian's arm64 6.12 headers in
#	                                   trixie, and an arm64 trixie root
#	                                   (.cache/chroot/arm64) with the
#	                                   selftests' tools and the arm64 6.12
#	                                   image, for make check-arm64
#	scripts/chroot.sh --built          exit 0 if both are made
#	scripts/chroot.sh headers          list "RELEASE HEADERS-DIR" of
#	                                   every kernel they hold
#	scripts/chroot.sh run NAME CMD...  run CMD in chroot NAME, with /proc
#	                                   and this repository mounted at the
#	                                   same paths as outside
#
# They live in .cache/chroot/NAME (about 1.3 GB in all). The first setup
# takes about four minutes: two debootstraps and the kernel packages.
# A kernel with an image (7.3) is also linked into this machine's /boot
# and /lib/modules, as an installed kernel would be, so that
# scripts/kernel.sh finds it and a VM boots it with its own modules;
# /lib/modules/RELEASE/build then leads into the chroot, and
# scripts/kbuild.sh builds there.
#
# Mounts are made in a mount namespace of their own (unshare), so nothing
# stays mounted after a command, whatever happens to it.

set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$ROOT/.cache/chroot
MIRROR=${FTV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Raised when what the chroots hold changes: they are then made again.
VERSION=3
NAMES="trixie sid"

export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -y -q -o Dpkg::Use-Pty=0 --no-install-recommends)

# What every chroot holds besides the base system: what kbuild runs.
BASE=gcc,make,libc6-dev,libelf-dev,bc,bison,flex,libssl-dev,kmod,xz-utils,python3,perl,dwarves,ca-certificates

ready()
{
	[ "$(cat "$DIR/$1/.ftv-ready" 2>/dev/null)" = "$VERSION" ]
}

# inside NAME CMD... : CMD in chroot NAME, with /proc and ROOT mounted,
# in the same directory if that is under ROOT (else in /)
inside()
{
	local c=$DIR/$1
	shift
	mkdir -p "$c$ROOT" "$c/proc"
	# shellcheck disable=SC2016 # the inner shell expands these
	unshare --mount --pid --fork /bin/sh -c '
		c=$1 root=$2; shift 2
		mount --make-rprivate / &&
		mount --bind "$root" "$c$root" &&
		mount -t proc proc "$c/proc" &&
		exec chroot "$c" /bin/sh -c "cd \"\$0\" 2>/dev/null || cd /
			exec \"\$@\"" "$@"' sh "$c" "$ROOT" "$PWD" "$@"
}

# versioned SUITE NAME META : the versioned package that metapackage META
# of SUITE depends on, asked in chroot NAME (linux-headers-amd64 of
# trixie-backports -> linux-headers-7.3.4+deb13-amd64)
versioned()
{
	inside "$2" apt-cache show "$3/$1" 2>/dev/null |
		sed -n 's/^Depends: //p' | tr ',' '\n' | sed 's/^ *//; s/ .*//' |
		grep -m 1 -E '^linux-(headers|image)-[0-9]'
}

make_one()
{
	local name=$1 c=$DIR/$1 suite
	suite=$name
	echo "chroot.sh: making .cache/chroot/$name (debootstrap $suite)"
	rm -rf "$c"
	mkdir -p "$DIR"
	debootstrap --variant=minbase --include="$BASE" "$suite" "$c" "$MIRROR" \
		>"$DIR/$name.log" 2>&1 || {
		echo "chroot.sh: debootstrap $suite failed; see $DIR/$name.log" >&2
		tail -n 5 "$DIR/$name.log" >&2
		return 1
	}
	cp /etc/resolv.conf "$c/etc/resolv.conf" 2>/dev/null || true
	case $name in
	trixie)
		cat >"$c/etc/apt/sources.list" <<-SRC
		deb $MIRROR trixie main
		deb $MIRROR trixie-backports main
		SRC
		;;
	sid)
		# sid's Release file is often past its Valid-Until here.
		echo "deb [check-valid-until=no] $MIRROR sid main" \
			>"$c/etc/apt/sources.list"
		;;
	esac
	inside "$name" apt-get -q update >>"$DIR/$name.log" 2>&1
	local pkgs
	case $name in
	trixie)
		# dkms and git (the version of a checkout), for
		# tools/packaging/dkms.sh's builds for 7.3.
		pkgs=(dkms git "$(versioned trixie "$name" linux-headers-amd64)"
		      "$(versioned trixie-backports "$name" linux-headers-amd64)"
		      "$(versioned trixie-backports "$name" linux-image-amd64)")
		# The image's linux-base must come from backports too.
		inside "$name" "${APT[@]}" -t trixie-backports install "${pkgs[@]}" \
			>>"$DIR/$name.log" 2>&1
		;;
	sid)
		pkgs=("$(versioned sid "$name" linux-headers-amd64)")
		inside "$name" "${APT[@]}" install "${pkgs[@]}" >>"$DIR/$name.log" 2>&1
		;;
	esac || {
		echo "chroot.sh: installing ${pkgs[*]} in $name failed; see $DIR/$name.log" >&2
		tail -n 5 "$DIR/$name.log" >&2
		return 1
	}
	# An initramfs is for booting from disk; virtme-ng makes its own.
	rm -f "$c"/boot/initrd.img-*
	inside "$name" apt-get clean
	echo "$VERSION" >"$c/.ftv-ready"
}

# Link the chroots' 7.x kernel images and modules into this machine, as
# if installed; not over a real installation of the same release. (The
# chroot has trixie's 6.12 image too, which its headers' dependencies
# bring: left there, so that "6.12" keeps meaning bookworm-backports'.)
link_kernels()
{
	local img rel
	for img in "$DIR"/*/boot/vmlinuz-7.*; do
		[ -e "$img" ] || continue
		rel=${img##*/vmlinuz-}
		if [ -e "/lib/modules/$rel" ] && [ ! -L "/lib/modules/$rel" ]; then
			continue
		fi
		ln -sfn "${img%/boot/*}/lib/modules/$rel" "/lib/modules/$rel"
		ln -sfn "$img" "/boot/vmlinuz-$rel"
	done
}

setup()
{
	local name
	if [ "$(id -u)" != 0 ]; then
		echo "chroot.sh: must run as root (debootstrap, chroot)" >&2
		return 1
	fi
	if ! command -v debootstrap >/dev/null; then
		apt-get -y -q install debootstrap >/dev/null
	fi
	mkdir -p "$ROOT/.cache"
	[ -f "$ROOT/.cache/.gitignore" ] || echo '*' >"$ROOT/.cache/.gitignore"
	for name in $NAMES; do
		ready "$name" || make_one "$name"
	done
	link_kernels
}

# What the arm64 root holds: the tools the core selftests drive, and what
# ftvctl builds with (it is built there, under emulation). debootstrap
# does not resolve virtual packages: python3-cryptography's
# python3-cffi-backend-api-* come from python3-cffi-backend, named here.
ARM64_VERSION=1
ARM64_TOOLS=python3-cryptography,python3-cffi-backend,iproute2,iputils-ping,iperf3,tcpdump,nftables,conntrack,kmod,procps,python3,ethtool,netcat-openbsd,util-linux,busybox-static,gcc,make,libc6-dev,pkg-config,libnl-3-dev,libnl-genl-3-dev,libsodium-dev

# Running arm64 programs here (debootstrap's second stage, ftvctl's
# build) takes qemu-user through binfmt_misc.
arm64_binfmt()
{
	[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && return
	[ -e /proc/sys/fs/binfmt_misc/register ] ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
	[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || {
		echo "chroot.sh: cannot run arm64 programs (qemu-user-static," \
			"binfmt-support and binfmt_misc needed)" >&2
		return 1
	}
}

setup_arm64()
{
	local t=$DIR/trixie c=$DIR/arm64 rel

	setup || return
	rel=$(versioned trixie trixie linux-headers-amd64)
	rel=${rel#linux-headers-}
	rel=${rel%-amd64}
	if [ "$(cat "$t/.ftv-arm64" 2>/dev/null)" != "$ARM64_VERSION" ]; then
		echo "chroot.sh: a cross compiler and the arm64 $rel headers in trixie"
		{
			inside trixie dpkg --add-architecture arm64 &&
			inside trixie apt-get -q update &&
			inside trixie "${APT[@]}" install \
				gcc-14-aarch64-linux-gnu binutils-aarch64-linux-gnu &&
			# Their dependencies are a native arm64 gcc; the
			# kbuild of the amd64 headers serves them, and the
			# cross compiler builds (the headers ask for it).
			inside trixie sh -c "cd /tmp &&
				apt-get -q download linux-headers-$rel-arm64:arm64 &&
				dpkg-deb -x linux-headers-$rel-arm64_*_arm64.deb / &&
				rm -f linux-headers-$rel-arm64_*_arm64.deb"
		} >>"$DIR/trixie.log" 2>&1 || {
			echo "chroot.sh: that failed; see $DIR/trixie.log" >&2
			return 1
		}
		echo "$ARM64_VERSION" >"$t/.ftv-arm64"
	fi
	ready arm64 && [ -e "$c/boot/vmlinuz-$rel-arm64" ] && return
	arm64_binfmt || return
	echo "chroot.sh: making .cache/chroot/arm64 (debootstrap --arch=arm64" \
		"trixie, its second stage emulated: about ten minutes)"
	rm -rf "$c"
	debootstrap --arch=arm64 --variant=minbase \
		--include="$ARM64_TOOLS,linux-image-$rel-arm64" trixie "$c" \
		"$MIRROR" >"$DIR/arm64.log" 2>&1 || {
		echo "chroot.sh: debootstrap --arch=arm64 failed; see $DIR/arm64.log" >&2
		tail -n 5 "$DIR/arm64.log" >&2
		return 1
	}
	rm -f "$c"/boot/initrd.img-*
	inside arm64 apt-get clean
	echo "$VERSION" >"$c/.ftv-ready"
}

headers()
{
	local d rel
	for d in "$DIR"/*/usr/src/linux-headers-*; do
		[ -f "$d/Module.symvers" ] || continue
		rel=${d##*/linux-headers-}
		echo "$rel $d"
	done
}

case ${1:-setup} in
setup) setup ;;
setup-arm64) setup_arm64 ;;
--built)
	for name in $NAMES; do
		ready "$name" || exit 1
	done
	;;
headers) headers ;;
run)
	[ $# -ge 3 ] || { echo "usage: chroot.sh run NAME CMD..." >&2; exit 2; }
	name=$2
	shift 2
	ready "$name" || {
		echo "chroot.sh: .cache/chroot/$name is not made (or is out of" \
			"date): run scripts/chroot.sh setup" >&2
		exit 1
	}
	inside "$name" "$@"
	;;
-h | --help) sed -n '3,/^$/s/^# \{0,1\}//p' "$0" ;;
*) echo "chroot.sh: unknown command $1" >&2; exit 2 ;;
esac
