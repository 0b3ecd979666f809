#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run kbuild against one kernel's headers, wherever they are: this
# machine's (/lib/modules/*/build), or those in a chroot that
# scripts/chroot.sh made for kernels that want a newer compiler; there
# make runs inside the chroot, which sees this repository at the same
# path, so M= and output paths mean the same on both sides.
#
#	scripts/kbuild.sh KVER [MAKE-ARGS...]   make -C HEADERS MAKE-ARGS...
#	scripts/kbuild.sh --which KVER          print "RELEASE HEADERS-DIR
#	                                        CHROOT" (CHROOT "-": none)
#	scripts/kbuild.sh --host                this machine's own releases
#	scripts/kbuild.sh --copy DIR            copy Kbuild and module/ there,
#	                                        build products left out
#
# KVER is a release or a prefix at a dot, dash or plus ("7.3", "6.12",
# "6.12.117"); the newest match among this machine's headers is taken,
# else the newest in the chroots. A chroot kernel that is not made yet
# makes the chroots first (scripts/chroot.sh, a few minutes, once).
# M= must be under this repository when the headers are in a chroot.

set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHROOTS=$ROOT/.cache/chroot

matches()	# matches RELEASE PATTERN
{
	case $1 in
	"$2" | "$2".* | "$2"-* | "$2"+*) return 0 ;;
	esac
	return 1
}

# in_a_chroot DIR : DIR is inside a root scripts/chroot.sh made, this
# repository's or another clone's (whose mark, .ftv-ready, is at its top)
in_a_chroot()
{
	local d=$1
	while [ "$d" != / ] && [ -n "$d" ]; do
		[ -e "$d/.ftv-ready" ] && return 0
		d=$(dirname "$d")
	done
	return 1
}

# candidates: "RELEASE DIR" for every set of headers, this machine's first
candidates()
{
	local b rel real
	for b in /lib/modules/*/build; do
		[ -d "$b" ] || continue
		real=$(realpath "$b")
		# A chroot's kernel linked into /lib/modules is a chroot's:
		# its headers want the chroot's compiler and paths. Another
		# clone's link is not ours to follow (this one's chroot.sh
		# setup links its own).
		case $real in "$CHROOTS"/*) continue ;; esac
		in_a_chroot "$real" && continue
		rel=${b%/build}
		echo "host ${rel##*/} $real"
	done
	if [ -d "$CHROOTS" ]; then
		"$ROOT/scripts/chroot.sh" headers | sed 's/^/chroot /'
	fi
}

# pick PATTERN : "RELEASE DIR CHROOT" of the newest match, host first
pick()
{
	local where rel dir best='' from
	for from in host chroot; do
		while read -r where rel dir; do
			if [ "$where" = "$from" ] && matches "$rel" "$1"; then
				best="$best$rel $dir"$'\n'
			fi
		done < <(candidates)
		[ -n "$best" ] && break
	done
	[ -n "$best" ] || return 1
	best=$(printf '%s' "$best" | sort -V -k1,1 | tail -n 1)
	rel=${best%% *}
	dir=${best#* }
	case $dir in
	"$CHROOTS"/*)
		local name=${dir#"$CHROOTS"/}
		echo "$rel ${dir#"$CHROOTS/${name%%/*}"} ${name%%/*}"
		;;
	*) echo "$rel $dir -" ;;
	esac
}

# The chroots hold 6.12 (trixie's), 7.2 and 7.3: a pattern of one of
# those makes them when nothing matches yet.
resolve()
{
	pick "$1" && return
	case $1 in
	6.12* | 7.*) ;;
	*) return 1 ;;
	esac
	"$ROOT/scripts/chroot.sh" setup >&2 || return 1
	pick "$1"
}

# A copy of the module's sources in DIR, without build products (tar
# keeps the timestamps, so kbuild rebuilds only what changed).
if [ "${1:-}" = --copy ]; then
	[ $# -eq 2 ] || { echo "usage: kbuild.sh --copy DIR" >&2; exit 2; }
	mkdir -p "$2"
	tar -C "$ROOT" -cf - --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude=modules.order \
		--exclude=Module.symvers --exclude='*.a' --exclude='.*.d' \
		Kbuild module | tar -C "$2" -xf -
	exit
fi
if [ "${1:-}" = --host ]; then
	candidates | while read -r where rel _; do
		[ "$where" = host ] && echo "$rel"
	done
	exit 0
fi
if [ "${1:-}" = --which ]; then
	[ $# -eq 2 ] || { echo "usage: kbuild.sh --which KVER" >&2; exit 2; }
	resolve "$2" || { echo "kbuild.sh: no headers for '$2'" >&2; exit 1; }
	exit 0
fi
[ $# -ge 1 ] || { echo "usage: kbuild.sh KVER [MAKE-ARGS...]" >&2; exit 2; }
kver=$1
shift
read -r rel dir chroot < <(resolve "$kver") || {
	echo "kbuild.sh: no headers for '$kver' here or in the chroots" >&2
	exit 1
}
if [ "$chroot" = - ]; then
	exec make -C "$dir" "$@"
fi
# A chroot made by an older scripts/chroot.sh is made again first.
"$ROOT/scripts/chroot.sh" --built || "$ROOT/scripts/chroot.sh" setup >&2 ||
	exit 1
exec "$ROOT/scripts/chroot.sh" run "$chroot" make -C "$dir" "$@"
