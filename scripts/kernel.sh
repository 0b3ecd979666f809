#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the newest installed kernel version that matches a pattern and has
# both an image in /boot and headers in /lib/modules/VER/build.
#
#	scripts/kernel.sh [PATTERN]
#
# PATTERN is a version prefix taken at a dot or dash boundary ("6.1"
# matches 6.1.0-56-amd64 but not 6.12.95+deb12-amd64; "6.12" matches the
# latter) or a full version. The default is 6.1, Debian bookworm's kernel.

set -eu

pattern=${1:-6.1}

best=
for img in /boot/vmlinuz-*; do
	[ -e "$img" ] || continue
	ver=${img#/boot/vmlinuz-}
	case $ver in
	"$pattern" | "$pattern".* | "$pattern"-* | "$pattern"+*) ;;
	*) continue ;;
	esac
	[ -d "/lib/modules/$ver/build" ] || continue
	best="$best$ver"$'\n'
done

ver=$(printf '%s' "$best" | sort -V | tail -n 1)
if [ -z "$ver" ]; then
	echo "kernel.sh: no kernel matching '$pattern' with an image in /boot" \
		"and headers in /lib/modules/*/build (run scripts/deps.sh)" >&2
	exit 1
fi
echo "$ver"
