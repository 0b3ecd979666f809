#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything ftv needs to build, boot its test VM and run its
# selftests on Debian bookworm: the 6.1 kernel image and headers, the 6.12
# ones from bookworm-backports, qemu, virtme-ng and the userspace tools the
# selftests drive. Safe to run again; it only installs what is missing.

set -eu

STAMP=${FTV_DEPS_STAMP:-/var/lib/ftv-deps.stamp}
VERSION=16

[ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: must run as root (apt-get)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
export NEEDRESTART_MODE=a
APT="apt-get -y -q -o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-confdef
	-o Dpkg::Options::=--force-confold --no-install-recommends"

if ! grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		cat >/etc/apt/sources.list.d/bookworm-backports.sources <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	else
		echo 'deb http://deb.debian.org/debian bookworm-backports main' \
			>/etc/apt/sources.list.d/bookworm-backports.list
	fi
fi

apt-get update -q

# Build and userspace tools.
$APT install build-essential pkg-config libnl-3-dev libnl-genl-3-dev \
	libsodium-dev python3 python3-pip python3-venv iproute2 iputils-ping \
	iperf3 tcpdump netcat-openbsd nftables conntrack kmod procps \
	coreutils util-linux busybox-static qemu-system-x86 xz-utils \
	linux-source-6.1 sparse mandoc shellcheck \
	python3-cryptography wireguard-tools openvpn ethtool python3-matplotlib \
	clang libclang-rt-14-dev tshark dkms curl flex bison bc libelf-dev \
	bash-completion linux-source-6.12 python3-yaml python3-jsonschema \
	debootstrap

# The 6.1 kernel (bookworm) and the 6.12 kernel (bookworm-backports), side
# by side. They are installed by their versioned names, taken from what the
# linux-image-amd64 metapackage of each series depends on: that works
# whichever metapackage is installed already, and marks both as manually
# installed so that neither is autoremoved when the other is upgraded.
newest_abi()	# newest_abi META VERSION_PREFIX -> e.g. linux-image-6.1.0-56-amd64
{
	apt-cache show "$1" | awk -v p="$2" '
		/^Version:/ { v = $2 }
		/^Depends:/ && index(v, p) == 1 { print v, $2 }' |
		sort -V | tail -n 1 | awk '{ print $2 }'
}
kernel_pkgs=
for series in 6.1. 6.12.; do
	for meta in linux-image-amd64 linux-headers-amd64; do
		pkg=$(newest_abi "$meta" "$series")
		if [ -z "$pkg" ]; then
			echo "deps.sh: no $meta for Linux $series* in the archive" >&2
			exit 1
		fi
		kernel_pkgs="$kernel_pkgs $pkg"
	done
done
# shellcheck disable=SC2086 # word splitting wanted
$APT install -t bookworm-backports $kernel_pkgs

# virtme-ng boots the installed kernels with the host's root file system.
# The version scripts/vm.sh was written against; its options do change.
VNG_VERSION=1.42
if ! command -v vng >/dev/null 2>&1; then
	pip3 install --break-system-packages -q "virtme-ng==$VNG_VERSION"
fi

echo "$VERSION" >"$STAMP"
