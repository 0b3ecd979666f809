#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What `make build-all` does: build ftv.ko with W=1 against every kernel's
# headers there are - this machine's (Debian's 6.1, bookworm-backports'
# 6.12) and the chroots' (trixie's 6.12, sid's 7.2, trixie-backports' 7.3;
# scripts/chroot.sh makes them first) - both the module users run and the
# debug build (FTV_DEBUG=1, with the self-tests), and sparse (C=2) on
# this machine's kernels. Any warning or error fails it; the last line is "build-all: N built, N failed".
#
#	scripts/build-all.sh [RELEASE...]   only these (as kbuild.sh takes them)
#
# Each build is in .cache/build-all/RELEASE{,-debug}, from a copy of the
# sources; its log beside it (RELEASE.log).

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=$ROOT/.cache/build-all
JOBS=$(nproc 2>/dev/null || echo 2)

if [ $# -eq 0 ]; then
	scripts/chroot.sh setup || exit 1
	# shellcheck disable=SC2046 # one release per word
	set -- $(scripts/kbuild.sh --host)
	while read -r rel _; do
		set -- "$@" "$rel"
	done < <(scripts/chroot.sh headers)
fi

mkdir -p "$OUT"
[ -f "$ROOT/.cache/.gitignore" ] || echo '*' >"$ROOT/.cache/.gitignore"
built=0
failed=0
for rel in "$@"; do
	for kind in "" -debug; do
		dir=$OUT/$rel$kind
		log=$dir.log
		rm -rf "$dir"
		scripts/kbuild.sh --copy "$dir" || exit 1
		args=(M="$dir" W=1 FTV_VERSION="$(scripts/version.sh)" -j"$JOBS")
		[ -n "$kind" ] && args+=(FTV_DEBUG=1)
		# sparse too, where this machine's headers are (Debian's
		# sparse 0.6.4 is older than the 7.x headers).
		[ -z "$kind" ] && scripts/kbuild.sh --host | grep -qxF "$rel" &&
			args+=(C=2)
		start=$SECONDS
		scripts/kbuild.sh "$rel" "${args[@]}" modules >"$log" 2>&1
		rc=$?
		# The compiler's and kbuild's warnings, and modpost's.
		warn=$(grep -cE 'warning:|WARNING:|error:' "$log")
		if [ "$rc" -eq 0 ] && [ "$warn" -eq 0 ] && [ -f "$dir/module/ftv.ko" ]; then
			echo "ok   $rel$kind ($((SECONDS - start)) s)"
			built=$((built + 1))
		else
			echo "FAIL $rel$kind (exit $rc, $warn warnings or errors; $log):"
			grep -E 'warning:|WARNING:|error:' "$log" | head -n 20 | sed 's/^/    /'
			failed=$((failed + 1))
		fi
	done
done
echo "build-all: $built built, $failed failed"
[ "$failed" -eq 0 ]
