#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print ftv's version, for the module, ftvctl, dkms.conf and `make dist`:
#  1. the VERSION file, which release tarballs carry (make dist);
#  2. else, in a git checkout, BASE+N.gHASH (N commits, .dirty if the work
#     tree has changes), so that every build says which source it is;
#  3. else the name of a directory called ftv-VERSION: `dkms add` copies the
#     tree to /usr/src/ftv-VERSION without .git, and reads dkms.conf there
#     again for every build;
#  4. else BASE+unknown.
BASE=0.1

dir=$(cd "$(dirname "$0")/.." && pwd -P) || exit 1
if [ -r "$dir/VERSION" ]; then
	head -n 1 "$dir/VERSION"
	exit 0
fi
if [ -e "$dir/.git" ] && command -v git >/dev/null 2>&1; then
	# dkms runs as root in a tree someone else may own.
	g() { git -C "$dir" -c safe.directory='*' "$@" 2>/dev/null; }
	if count=$(g rev-list --count HEAD) && hash=$(g rev-parse --short=7 HEAD); then
		dirty=
		g update-index -q --refresh >/dev/null
		g diff-index --quiet HEAD -- || dirty=.dirty
		echo "$BASE+$count.g$hash$dirty"
		exit 0
	fi
fi
case ${dir##*/} in
ftv-?*)
	echo "${dir##*/ftv-}"
	exit 0
	;;
esac
echo "$BASE+unknown"
