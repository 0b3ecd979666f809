#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms.sh: the dkms packaging, as a user would use it, on the host (dkms
# builds and installs; nothing is loaded). For every supported kernel whose
# headers are installed, `dkms add`, `build` and `install` a clean copy of
# the checkout and then a `make dist` tarball, and check what modinfo says
# of the installed module. dkms works in temporary trees (--dkmstree,
# --sourcetree, --installtree), so /usr/src, /var/lib/dkms and /lib/modules
# stay as they were. KTAP on stdout.
#
# The 7.x kernels whose headers are in the trixie chroot
# (scripts/chroot.sh, if it has been made) are built there, by the
# chroot's dkms and gcc-14, as on a trixie machine with backports.
#
#	tools/packaging/dkms.sh [KVER...]

set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../selftests/ktap.sh
. "$ROOT/selftests/ktap.sh"
# Under the repository: the chroot sees it at the same path.
mkdir -p "$ROOT/.cache"
TMP=$(mktemp -d "$ROOT/.cache/dkms.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

if ! command -v dkms >/dev/null; then
	echo "1..0 # SKIP dkms is not installed"
	exit 0
fi

# in_chroot KVER : the chroot whose dkms builds for KVER, or nothing
in_chroot()
{
	case $1 in
	7.*) "$ROOT/scripts/chroot.sh" --built &&
		"$ROOT/scripts/chroot.sh" headers |
		grep -q "^$1 .*/chroot/trixie/" && echo trixie ;;
	esac
}

kernels=("$@")
if [ ${#kernels[@]} -eq 0 ]; then
	for d in /lib/modules/6.*/build; do
		[ -d "$d" ] || continue
		k=${d#/lib/modules/}
		kernels+=("${k%/build}")
	done
	if "$ROOT/scripts/chroot.sh" --built; then
		while read -r k _; do
			[ -n "$(in_chroot "$k")" ] && kernels+=("$k")
		done < <("$ROOT/scripts/chroot.sh" headers)
	fi
fi

# A clean copy: what a user clones, without our build products.
git -C "$ROOT" -c safe.directory='*' archive --format=tar --prefix=ftv/ HEAD |
	tar -C "$TMP" -xf - || { echo "Bail out! git archive failed"; exit 1; }
cp -a "$ROOT/.git" "$TMP/ftv/.git"
want=$("$TMP/ftv/scripts/version.sh")
ktap_rc "$([ "$want" = "$("$ROOT/scripts/version.sh" | sed 's/\.dirty$//')" ]; echo $?)" \
	"the version of a checkout comes from git: $want"

# diag TEXT : TEXT as KTAP diagnostics
diag() { printf '%s\n' "$1" | sed 's/^/# /'; }

# dkms_in NAME ARGS... : dkms with its trees under $TMP/NAME, run by
# "${runner[@]}" (nothing: here; or the chroot's)
runner=()
dkms_in()
{
	local t=$TMP/$1

	shift
	"${runner[@]}" dkms --dkmstree "$t/tree" --sourcetree "$t/src" \
		--installtree "$t/inst" "$@"
}

# try_with NAME SRC VERSION KVER... : add SRC, then build and install for
# each kernel
try_with()
{
	local name=$1 src=$2 version=$3 k out ko rc

	shift 3
	mkdir -p "$TMP/$name/tree" "$TMP/$name/src"
	out=$(cd "$src" && dkms_in "$name" add . 2>&1)
	rc=$?
	[ "$rc" = 0 ] || diag "$out"
	ktap_rc "$rc" "$name: dkms add . registers ftv/$version"
	for k in "$@"; do
		mkdir -p "$TMP/$name/inst/$k"
		# Where the headers are, said: trixie's dkms looks for them
		# under --installtree.
		out=$(dkms_in "$name" build "ftv/$version" -k "$k" \
			--kernelsourcedir "/lib/modules/$k/build" 2>&1 &&
		      dkms_in "$name" install "ftv/$version" -k "$k" \
			--kernelsourcedir "/lib/modules/$k/build" 2>&1)
		rc=$?
		ko=$(find "$TMP/$name/inst/$k" -name 'ftv.ko*' | head -n 1)
		[ "$rc" = 0 ] && [ -n "$ko" ] &&
			[ "$(modinfo -F version "$ko" 2>/dev/null)" = "$version" ] &&
			[ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$k" ]
		rc=$?
		[ "$rc" = 0 ] || diag "$(tail -n 20 <<<"$out")"
		ktap_rc "$rc" "$name: dkms build and install for $k, modinfo says $version"
	done
	dkms_in "$name" remove "ftv/$version" --all >/dev/null 2>&1
}

# try SRC NAME VERSION : try_with for this machine's kernels, then for
# each chroot's
try()
{
	local k here=() there=()

	for k in "${kernels[@]}"; do
		if [ -n "$(in_chroot "$k")" ]; then
			there+=("$k")
		else
			here+=("$k")
		fi
	done
	runner=()
	[ ${#here[@]} -gt 0 ] && try_with "$2" "$1" "$3" "${here[@]}"
	if [ ${#there[@]} -gt 0 ]; then
		runner=("$ROOT/scripts/chroot.sh" run trixie)
		try_with "$2-trixie" "$1" "$3" "${there[@]}"
		runner=()
	fi
}

try "$TMP/ftv" checkout "$want"

# A release: make dist's tarball carries VERSION instead of .git.
if out=$(make -s -C "$TMP/ftv" dist 2>&1); then
	tarball=$TMP/ftv/$(echo "$out" | tail -n 1)
	mkdir "$TMP/release"
	tar -C "$TMP/release" -xJf "$tarball"
	rel=$(echo "$TMP"/release/ftv-*)
	ktap_rc "$([ "$(cat "$rel/VERSION" 2>/dev/null)" = "$want" ]; echo $?)" \
		"make dist: ${tarball##*/} carries VERSION $want"
	try "$rel" release "$want"
else
	diag "$out"
	ktap_rc 1 "make dist"
fi

ktap_done
