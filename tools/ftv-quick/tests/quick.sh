#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of ftv-quick that need no ftv kernel module: the file it reads and
# what it strips, its errors, and the lint of the scripts, man pages and
# unit that ship with it. Bringing tunnels up and down is tested in the VM
# (selftests/test_quick.sh).
# Usage: tests/quick.sh [CONFIG-TEST]   CONFIG-TEST: ftvctl's
# tests/config-test, to check that stripped files are ftvctl's.
# Output: KTAP. Exit: 0 pass, 1 fail.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
QUICK=$HERE/../ftv-quick
TOOLS=$HERE/../..
CONFIG_TEST=${1:-$TOOLS/ftvctl/tests/config-test}
# shellcheck source-path=SCRIPTDIR source=../../../selftests/ktap.sh
. "$TOOLS/../selftests/ktap.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# refused DESCRIPTION PATTERN ARGS... : ftv-quick ARGS exits 1 and says so
refused() {
	local what=$1 pattern=$2
	shift 2
	ktap_fails_with "$what" "$pattern" "$QUICK" "$@"
}

echo "TAP version 13"

# ---- strip

mkdir "$TMP/etc"
cp "$HERE/../examples/server.conf" "$TMP/etc/ftvq0.conf"
chmod 600 "$TMP/etc/ftvq0.conf"
"$QUICK" strip "$TMP/etc/ftvq0.conf" >"$TMP/stripped" 2>"$TMP/err"
grep -v '^Address = ' "$TMP/etc/ftvq0.conf" | cmp -s - "$TMP/stripped"
ktap_rc $? "strip: the file less its Address line, the rest byte for byte"
[ ! -s "$TMP/err" ]
ktap_rc $? "strip: no warning about a file of mode 600"

if [ -x "$CONFIG_TEST" ]; then
	ok=0
	for f in "$HERE"/../examples/*.conf; do
		"$QUICK" strip "$f" 2>/dev/null >"$TMP/s.conf"
		if ! "$CONFIG_TEST" "$TMP/s.conf" >/dev/null; then
			echo "# ftvctl refuses the stripped $f"
			ok=1
		fi
	done
	ktap_rc "$ok" "strip: ftvctl takes every stripped example"
else
	ktap_skip "strip: ftvctl takes every stripped example" "no $CONFIG_TEST (make -C tools/ftvctl tests/config-test)"
fi

cat >"$TMP/etc/all.conf" <<'EOF'
[Interface]   # every key of ftv-quick, in any case
address = 10.9.0.1/24,fd09::1/64
Address=10.9.1.1/24
MTU = 1380
DNS = 10.9.0.53, fd09::53, example.org
Table = off
PreUp = echo pre-up %i
PostUp = echo post-up %i
PreDown = echo pre-down
postdown = echo post-down
SaveConfig = false
ListenPort = 443
[Peer]
PublicKey = 3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=
Address = 10.0.0.1/32
EOF
printf '[Interface]   # every key of ftv-quick, in any case\nListenPort = 443\n[Peer]\nPublicKey = 3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=\nAddress = 10.0.0.1/32\n' >"$TMP/want"
"$QUICK" strip "$TMP/etc/all.conf" 2>/dev/null | cmp -s "$TMP/want" -
ktap_rc $? "strip: every ftv-quick key of [Interface] goes, a [Peer]'s Address stays for ftvctl to refuse"

chmod 644 "$TMP/etc/ftvq0.conf"
"$QUICK" strip "$TMP/etc/ftvq0.conf" 2>&1 >/dev/null | grep -q "other users can read it"
ktap_rc $? "strip: a warning when other users can read the file"

# ---- errors

bad() {
	printf '[Interface]\nPrivateKey = x\n%s\n' "$1" >"$TMP/etc/ftvq1.conf"
}
bad "Address = 10.9.0.1/24, 10.9.0.300/24x"
refused "an address that is none: file and line" "ftvq1.conf:3: '10.9.0.300/24x' is not an address" \
	strip "$TMP/etc/ftvq1.conf"
bad "MTU = big"
refused "a bad MTU" "ftvq1.conf:3: 'big' is not an MTU" strip "$TMP/etc/ftvq1.conf"
bad "SaveConfig = yes"
refused "a bad SaveConfig" "ftvq1.conf:3: SaveConfig is 'true' or 'false', not 'yes'" \
	strip "$TMP/etc/ftvq1.conf"
bad "Table = main table"
refused "a bad Table" "ftvq1.conf:3: 'main table' is not a table" strip "$TMP/etc/ftvq1.conf"

cp "$TMP/etc/ftvq0.conf" "$TMP/etc/not an interface.conf"
refused "a file name that is no interface name" "must be called INTERFACE.conf" \
	strip "$TMP/etc/not an interface.conf"
cp "$TMP/etc/ftvq0.conf" "$TMP/etc/ftvq0.txt"
refused "a file name without .conf" "must be called INTERFACE.conf" strip "$TMP/etc/ftvq0.txt"
refused "a missing file" "$TMP/none.conf: no such configuration file" strip "$TMP/none.conf"
refused "an interface name means /etc/ftv/NAME.conf" "/etc/ftv/ftvq9zz.conf: no such" strip ftvq9zz
refused "no arguments: usage" "Usage: ftv-quick \[ up | down | save | strip \]"
refused "an unknown command: usage" "Usage:" sideways "$TMP/etc/ftvq0.conf"
chmod 600 "$TMP/etc/ftvq0.conf"
if [ "$(id -u)" = 0 ]; then
	refused "down: an interface that does not exist" "ftvq0 is not an ftv interface" \
		down "$TMP/etc/ftvq0.conf"
else
	refused "down: needs root" "down needs root" down "$TMP/etc/ftvq0.conf"
fi
"$QUICK" --help | grep -q "^Usage: ftv-quick"
ktap_rc $? "--help: usage on stdout, exit 0"

# ---- lint

if command -v shellcheck >/dev/null 2>&1; then
	shellcheck "$QUICK" | sed 's/^/# /'
	ktap_rc "${PIPESTATUS[0]}" "shellcheck: ftv-quick"
	shellcheck -s bash "$TOOLS"/completion/*.bash | sed 's/^/# /'
	ktap_rc "${PIPESTATUS[0]}" "shellcheck: bash completion"
else
	ktap_skip "shellcheck: ftv-quick" "no shellcheck"
	ktap_skip "shellcheck: bash completion" "no shellcheck"
fi

if command -v mandoc >/dev/null 2>&1; then
	for page in "$HERE/../ftv-quick.8" "$TOOLS/ftvctl/man/ftvctl.8"; do
		mandoc -Tlint "$page" 2>&1 | sed 's/^/# /'
		ktap_rc "${PIPESTATUS[0]}" "mandoc -Tlint: $(basename "$page")"
	done
else
	ktap_skip "mandoc -Tlint: ftv-quick.8" "no mandoc"
	ktap_skip "mandoc -Tlint: ftvctl.8" "no mandoc"
fi

if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$TMP/bin" "$TMP/unit"
	ln -s "$QUICK" "$TMP/bin/ftv-quick"
	ln -s /bin/true "$TMP/bin/ftvctl"
	sed "s|@BINDIR@|$TMP/bin|g" "$HERE/../ftv-quick@.service" \
		>"$TMP/unit/ftv-quick@.service"
	SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no \
		"$TMP/unit/ftv-quick@ftvq0.service" >"$TMP/verify" 2>&1
	rc=$?
	sed 's/^/# /' "$TMP/verify"
	# Outside a booted systemd it may not load at all; that is no failure.
	if grep -qi "failed to \(connect\|initialize\)\|not booted" "$TMP/verify"; then
		ktap_skip "systemd-analyze verify: ftv-quick@.service" "systemd cannot run here"
	else
		ktap_rc "$rc" "systemd-analyze verify: ftv-quick@.service"
	fi
else
	ktap_skip "systemd-analyze verify: ftv-quick@.service" "no systemd-analyze"
fi

# ftvctl's completion asks ftvctl (--complete) for the options of set and
# peer and for their values: the one built beside this script.
if [ ! -x "$TOOLS/ftvctl/ftvctl" ]; then
	echo "# no $TOOLS/ftvctl/ftvctl: build it first"
	ktap_fail "bash completion: commands and options"
elif [ -r /usr/share/bash-completion/bash_completion ]; then
	PATH="$TOOLS/ftvctl:$PATH" bash -c '
		. /usr/share/bash-completion/bash_completion
		. "$1/completion/ftvctl.bash"
		. "$1/completion/ftv-quick.bash"
		comp() {
			local fn=$1
			shift
			COMP_WORDS=("$@")
			COMP_CWORD=$(($# - 1))
			COMP_LINE="$*"
			COMP_POINT=${#COMP_LINE}
			COMPREPLY=()
			"$fn"
			echo "${COMPREPLY[*]}"
		}
		[ "$(comp _ftvctl ftvctl sy)" = syncconf ] &&
		[ "$(comp _ftvctl ftvctl peer set ftv0 KEY pe)" = persistent-keepalive ] &&
		[ "$(comp _ftvctl ftvctl monitor --j)" = --json ] &&
		[ "$(comp _ftvctl ftvctl peer add ftv0 KEY f)" = "fec flows" ] &&
		[ "$(comp _ftvctl ftvctl peer add ftv0 KEY flows 4)" = 4 ] &&
		[ "$(comp _ftvctl ftvctl peer add ftv0 KEY r)" = rotate ] &&
		[ "$(comp _ftvctl ftvctl peer set ftv0 KEY rotate a)" = auto ] &&
		[ "$(comp _ftvctl ftvctl peer set ftv0 KEY fec a)" = auto ] &&
		[ "$(comp _ftvctl ftvctl set ftv0 sh)" = shape ] &&
		[ "$(comp _ftvctl ftvctl set ftv0 shape o)" = "on off" ] &&
		[ "$(comp _ftvctl ftvctl pr)" = probe ] &&
		[ "$(comp _ftvctl ftvctl probe ftv0 KEY --q)" = --quick ] &&
		[ "$(comp _ftv_quick ftv-quick s)" = "save strip" ]
	' _ "$TOOLS"
	ktap_rc $? "bash completion: commands and options"
else
	ktap_skip "bash completion: commands and options" "no bash-completion"
fi

ktap_done
