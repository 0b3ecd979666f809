#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the ftv selftests, sourced by every test_*.sh:
#  - KTAP output (ktap_plan, ktap_ok, ktap_fail, ktap_skip, ktap_check,
#    ktap_bail, ktap_finish) with kselftest exit codes 0 pass, 1 fail, 4 skip
#  - network namespaces with names unique to the sourcing script ($$)
#  - wait_for: poll a condition with a deadline instead of sleeping
#  - cleanup: one EXIT trap that undoes everything the helpers set up
#  - ftv_load_module: load ftv.ko and its dependencies (also used by
#    scripts/vm-guest.sh before the tests run)
#
# A test script looks like:
#	. "$(dirname "$0")/lib.sh"
#	trap cleanup EXIT
#	ktap_plan 3
#	ns_create A; ...
#	ktap_check "device can be created" nsx "$A" ip link add ...
#	ktap_finish

FTV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FTV_KO=${FTV_KO:-$FTV_ROOT/module/ftv.ko}
# The debug build (make FTV_DEBUG=1): self-tests at load, and module
# parameters for session lifetimes that tests may shorten or stretch.
FTV_DEBUG_KO=${FTV_DEBUG_KO:-$FTV_ROOT/module/ftv-debug.ko}
FTVCTL=${FTVCTL:-$FTV_ROOT/tools/ftvctl/ftvctl}
FTVNL=${FTVNL:-$FTV_ROOT/selftests/lib/ftvnl.py}
# Debian's python3 has the packages the tests use (cryptography, yaml);
# a python3 earlier in PATH (pyenv, a venv) may not.
if [ -z "${PYTHON:-}" ]; then
	PYTHON=python3
	[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
fi

# KTAP output: ktap.sh, the one KTAP library of the tree
# shellcheck source-path=SCRIPTDIR source=ktap.sh
. "$(dirname "${BASH_SOURCE[0]}")/ktap.sh"

# ---------------------------------------------------------------- waiting

# wait_for TIMEOUT CMD... : run CMD every 0.1 s until it succeeds or
# TIMEOUT seconds (may be fractional) have passed. Returns 0 if it
# succeeded in time, 1 if not.
wait_for()
{
	local timeout=$1 now deadline
	shift
	# $EPOCHREALTIME is "seconds.microseconds"; compare in microseconds.
	now=${EPOCHREALTIME/./}
	deadline=$((now + $(awk -v t="$timeout" 'BEGIN { printf "%d", t * 1000000 }')))
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		now=${EPOCHREALTIME/./}
		[ "$now" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# ---------------------------------------------------------------- cleanup

FTV_NAMESPACES=()
# The namespaces' inode numbers (/proc/PID/ns/net's "net:[N]"), which the
# module's kernel log lines about a device carry: this script's own, that
# it keeps the lines of (ftv_log_ours). The first is the one it runs in.
FTV_NETNS_INUMS=("$(stat -L -c %i /proc/self/ns/net 2>/dev/null)")
FTV_PIDS=()
FTV_DEFERRED=()
FTV_TMP=

# defer CMD... : run CMD (a single string, eval'd) at cleanup, last
# deferred first.
defer()
{
	FTV_DEFERRED+=("$*")
}

# netlink_subscribed NS : a generic netlink socket in NS joined a
# multicast group, as `ftvctl monitor` does once it listens
# (/proc/net/netlink shows groups 1 to 32; with a later one, a wait for
# it is only lost time)
netlink_subscribed()
{
	nsx "$1" cat /proc/net/netlink |
		awk 'NR > 1 && $2 == 16 && $4 != "00000000" { f = 1 } END { exit !f }'
}

# bg_track PID : kill PID at cleanup if it is still running
bg_track()
{
	FTV_PIDS+=("$1")
}

cleanup()
{
	local i pid ns

	for ((i = ${#FTV_DEFERRED[@]} - 1; i >= 0; i--)); do
		eval "${FTV_DEFERRED[$i]}" >/dev/null 2>&1
	done
	for pid in "${FTV_PIDS[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	for ns in "${FTV_NAMESPACES[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	[ -n "$FTV_TMP" ] && rm -rf "$FTV_TMP"
	return 0
}

# tmpdir : a private directory removed at cleanup; sets FTV_TMP
tmpdir()
{
	[ -n "$FTV_TMP" ] || FTV_TMP=$(mktemp -d /tmp/ftv-selftest.XXXXXX)
}

# ---------------------------------------------------------------- netns

# ns_create VAR... : for each VAR, create a namespace named
# ftv-<script>-<var>-<pid>, store its name in $VAR, bring lo up.
ns_create()
{
	local var name base

	base=$(basename "$0" .sh)
	base=${base#test_}
	for var in "$@"; do
		name="ftv-$base-$var-$$"
		ip netns add "$name" || return 1
		FTV_NAMESPACES+=("$name")
		FTV_NETNS_INUMS+=("$(stat -L -c %i "/run/netns/$name")")
		ip -n "$name" link set lo up || return 1
		printf -v "$var" '%s' "$name"
	done
}

# nsx NS CMD... : run CMD in namespace NS
nsx()
{
	local ns=$1
	shift
	ip netns exec "$ns" "$@"
}

# veth_pair NS1 IF1 NS2 IF2 : a veth pair between two namespaces, both up
veth_pair()
{
	ip link add name "$2" netns "$1" type veth peer name "$4" netns "$3" &&
		ip -n "$1" link set "$2" up &&
		ip -n "$3" link set "$4" up
}

# ---------------------------------------------------------------- ftv

# ftv_load_module : (re)load $FTV_KO after the modules it depends on, with
# its pr_debug messages enabled.
ftv_load_module()
{
	local ko=$FTV_KO dep deps

	if [ ! -f "$ko" ]; then
		echo "ftv_load_module: $ko does not exist (make module?)" >&2
		return 1
	fi
	# Unloading takes every ftv device away, the other script's too.
	if [ "${FTV_SHARED:-0}" = 1 ]; then
		echo "ftv_load_module: this script shares the VM (run.sh)," \
			"it may not load the module" >&2
		return 1
	fi
	ftv_unload_module || return 1
	deps=$(modinfo -F depends "$ko") || return 1
	for dep in ${deps//,/ }; do
		modprobe "$dep" || return 1
	done
	insmod "$ko" dyndbg=+p
}

# ftv_use_debug_module : run this test on the debug build, whose
# parameters (/sys/module/ftv/parameters) it may change; the module under
# test is loaded again at cleanup. The normal build has no writable
# parameters at all.
ftv_use_debug_module()
{
	[ -f "$FTV_DEBUG_KO" ] ||
		ktap_bail "no debug build of the module at $FTV_DEBUG_KO"
	FTV_KO=$FTV_DEBUG_KO ftv_load_module >/dev/null 2>&1 ||
		ktap_bail "cannot load the debug module $FTV_DEBUG_KO"
	defer ftv_load_module
}

ftv_unload_module()
{
	[ -d /sys/module/ftv ] || return 0
	rmmod ftv
}

ftv_module_loaded()
{
	[ -d /sys/module/ftv ]
}

# ftv_require_module : bail out unless the module is loaded. A missing
# module is a failure, not a skip: it is what is being tested.
ftv_require_module()
{
	ftv_module_loaded && return 0
	ftv_load_module >/dev/null 2>&1 ||
		ktap_bail "ftv module is not loaded and could not be loaded from $FTV_KO"
}

# require_tools TOOL... : skip the whole script (KTAP) unless every TOOL
# is installed
require_tools()
{
	local tool

	for tool in "$@"; do
		command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
	done
}

# ftv_require : the module and ftvctl
ftv_require()
{
	ftv_require_module
	[ -x "$FTVCTL" ] || ktap_bail "ftvctl not found at $FTVCTL (make tools?)"
}

# ftvnl_in NS ARGS... : the raw netlink client in namespace NS
ftvnl_in()
{
	local ns=$1
	shift
	nsx "$ns" "$PYTHON" -S "$FTVNL" "$@"
}

# ftv_keypair NAME : NAME.key (private) and NAME.pub in $FTV_TMP; echoes
# nothing, sets nothing: read "$FTV_TMP/NAME.pub".
ftv_keypair()
{
	tmpdir
	(umask 077 && "$FTVCTL" genkey >"$FTV_TMP/$1.key") || return 1
	"$FTVCTL" pubkey <"$FTV_TMP/$1.key" >"$FTV_TMP/$1.pub" || return 1
	[ -s "$FTV_TMP/$1.pub" ]
}

pubkey_of()
{
	cat "$FTV_TMP/$1.pub"
}

# ftv_json NS DEV PYEXPR : evaluate PYEXPR over `ftvctl show DEV --json`
# parsed as j (d is j[DEV]) and print the result.
ftv_json()
{
	local ns=$1 dev=$2 expr=$3

	nsx "$ns" "$FTVCTL" show "$dev" --json |
		"$PYTHON" -S -c '
import json, sys
j = json.load(sys.stdin)
d = j[sys.argv[1]]
print(eval(sys.argv[2]))
' "$dev" "$expr"
}

# ftv_peer_json NS DEV PUBKEY PYEXPR : PYEXPR over the peer object p
ftv_peer_json()
{
	local ns=$1 dev=$2 pub=$3 expr=$4

	nsx "$ns" "$FTVCTL" show "$dev" --json |
		"$PYTHON" -S -c '
import json, sys
j = json.load(sys.stdin)
p = [p for p in j[sys.argv[1]]["peers"] if p["public_key"] == sys.argv[2]][0]
print(eval(sys.argv[3]))
' "$dev" "$pub" "$expr"
}

# kmsg_mark : write a marker into the kernel log; prints the marker text
kmsg_mark()
{
	local mark
	mark="ftv-selftest: $(basename "$0") $$ mark $RANDOM$RANDOM"
	echo "$mark" >/dev/kmsg
	echo "$mark"
}

# capture NS IFACE FILE [TCPDUMP-ARGS...] FILTER : tcpdump on IFACE in NS
# into FILE, in the background, from the moment it listens. Sets
# CAPTURE_PID (tcpdump itself, not a shell); capture_stop ends it.
capture()
{
	local ns=$1 iface=$2 file=$3

	shift 3
	# Not through nsx, so that $! is tcpdump itself.
	ip netns exec "$ns" tcpdump -n -U -i "$iface" -w "$file" "$@" 2>"$file.err" &
	CAPTURE_PID=$!
	bg_track "$CAPTURE_PID"
	wait_for 10 grep -q "listening on" "$file.err"
}

# capture_stop : end the last capture, everything written
capture_stop()
{
	kill -INT "$CAPTURE_PID" 2>/dev/null
	wait "$CAPTURE_PID" 2>/dev/null
}

# answered_in FILE HOST : whether HOST sent anything in capture FILE
answered_in()
{
	[ "$(tcpdump -n -r "$1" "src host $2" 2>/dev/null | wc -l)" -ge 1 ]
}

# answers_in FILE HOST : "RSTS SYNACKS", what HOST sent in capture FILE:
# how a SYN somebody replayed was answered
answers_in()
{
	local rst synack

	rst=$(tcpdump -n -r "$1" \
		"src host $2 and tcp[tcpflags] & tcp-rst != 0" 2>/dev/null | wc -l)
	synack=$(tcpdump -n -r "$1" \
		"src host $2 and tcp[tcpflags] & (tcp-syn|tcp-ack) == (tcp-syn|tcp-ack)" 2>/dev/null | wc -l)
	echo "$rst $synack"
}

# The objects whose pr_debug "created" and "destroyed" lines must pair up.
FTV_OBJECTS=(device peer connection session "FEC state")

# objects_counted MARK : at least as many devices, peers, connections,
# sessions and FEC receive states destroyed as created after MARK (the
# pr_debug pairs). At least: the test before may have left objects that
# the kernel tears down with its namespaces after MARK (ip netns del
# returns before the namespace is gone). A double free is SLUB's and
# KASAN's to find, in the kernel log run.sh reads.
objects_counted()
{
	local kind

	# A log that no longer holds the mark proves nothing.
	dmesg | grep -qF "$1" || return 1
	for kind in "${FTV_OBJECTS[@]}"; do
		[ "$(dmesg_since "$1" | grep -c "ftv: .*$kind.* created")" -le \
		  "$(dmesg_since "$1" | grep -c "ftv: .*$kind.* destroyed")" ] ||
			return 1
	done
}

# objects_balanced MARK TIMEOUT : one KTAP case: within TIMEOUT seconds,
# every device, peer, connection, session and FEC receive state created
# after MARK was destroyed; the counts go to the diagnostics either way
objects_balanced()
{
	local kind

	if wait_for "$2" objects_counted "$1"; then
		ktap_ok "every device, peer and connection created was destroyed"
	else
		ktap_fail "every device, peer and connection created was destroyed"
	fi
	for kind in "${FTV_OBJECTS[@]}"; do
		ktap_diag "$kind: $(dmesg_since "$1" | grep -c "ftv: .*$kind.* created") created," \
			"$(dmesg_since "$1" | grep -c "ftv: .*$kind.* destroyed") destroyed"
	done
}

# dmesg_since MARK : the kernel log after MARK, without the module's lines
# about other scripts' devices (ftv_log_ours)
dmesg_since()
{
	dmesg | awk -v m="$1" 'found { print } index($0, m) { found = 1 }' |
		ftv_log_ours
}

# ftv_log_ours : filters kernel log lines: the module's lines about a
# device in a namespace of another script (run.sh may run two at once)
# go; the others stay, those about this script's devices without their
# namespace ("ftv: ftv0 net:[N]: peer 1 created" becomes "ftv: ftv0: peer
# 1 created"). Lines of no device (a KASAN report, say) stay: they may be
# the other script's, and fail this one too.
ftv_log_ours()
{
	awk -v ours=" ${FTV_NETNS_INUMS[*]} " '
		match($0, / net:\[[0-9]+\]: /) {
			n = substr($0, RSTART + 6, RLENGTH - 9)
			if (!index(ours, " " n " "))
				next
			$0 = substr($0, 1, RSTART - 1) ": " substr($0, RSTART + RLENGTH)
		}
		{ print }'
}

# freed_memory_checked : whether this kernel catches writes into freed
# memory: KASAN (the debug kernel), or SLUB poisoning of the kmalloc
# caches (slub_debug, which make check gives the stock kernels)
freed_memory_checked()
{
	grep -qw kasan_report /proc/kallsyms 2>/dev/null ||
		[ "$(cat /sys/kernel/slab/kmalloc-1k/poison 2>/dev/null)" = 1 ]
}

# freed_memory_reports MARK : the kernel's reports, since MARK, of writes
# into freed memory or past an object. SLUB's poisoned objects are
# validated first, so that one written to is reported now, not only when
# it is next handed out.
freed_memory_reports()
{
	local f

	for f in /sys/kernel/slab/kmalloc-*/validate; do
		echo 1 >"$f" 2>/dev/null
	done
	dmesg | grep -qF "$1" ||
		echo "the kernel log no longer holds $1: nothing can be told"
	dmesg_since "$1" | grep -E 'KASAN|Poison overwritten|Redzone overwritten|Padding overwritten|Object already free|Freepointer corrupt|BUG [^ ]+ \(' |
		head -n 5
}

# ---------------------------------------------------------------- topologies

FTV_PORT=${FTV_PORT:-51820}

# pair_underlay [4|6] : namespaces A and B joined by veth0 <-> veth0,
# 10.0.0.1/24 + fd00::1/64 in A, 10.0.0.2/24 + fd00::2/64 in B. Sets
# $A, $B and $B_ENDPOINT (B's address and $FTV_PORT, in the family given,
# default 4) for A's peer entry.
pair_underlay()
{
	local fam=${1:-4}

	ns_create A B || return 1
	veth_pair "$A" veth0 "$B" veth0 || return 1
	ip -n "$A" addr add 10.0.0.1/24 dev veth0 || return 1
	ip -n "$B" addr add 10.0.0.2/24 dev veth0 || return 1
	ip -n "$A" -6 addr add fd00::1/64 dev veth0 nodad || return 1
	ip -n "$B" -6 addr add fd00::2/64 dev veth0 nodad || return 1
	if [ "$fam" = 6 ]; then
		B_ENDPOINT="[fd00::2]:$FTV_PORT"
	else
		B_ENDPOINT="10.0.0.2:$FTV_PORT"
	fi
}

# ftv_dev NS N : ftv0 in NS with 10.9.0.N/24 and fd09::N/64, up
ftv_dev()
{
	ip -n "$1" link add name ftv0 type ftv || return 1
	ip -n "$1" addr add "10.9.0.$2/24" dev ftv0 || return 1
	ip -n "$1" -6 addr add "fd09::$2/64" dev ftv0 nodad || return 1
	ip -n "$1" link set ftv0 up
}

# pair_ftv : ftv0 in A (10.9.0.1, fd09::1) and B
# (10.9.0.2, fd09::2), keys a and b from ftvctl genkey. Both listen on
# $FTV_PORT; A knows B's endpoint (A initiates), B does not (B responds).
# $B_PEER_KEY, if set, replaces A's public key in B's peer entry.
pair_ftv()
{
	ftv_keypair a && ftv_keypair b || return 1
	ftv_dev "$A" 1 && ftv_dev "$B" 2 || return 1
	nsx "$A" "$FTVCTL" set ftv0 private-key "$FTV_TMP/a.key" \
		listen-port "$FTV_PORT" || return 1
	nsx "$B" "$FTVCTL" set ftv0 private-key "$FTV_TMP/b.key" \
		listen-port "$FTV_PORT" || return 1
	nsx "$A" "$FTVCTL" peer add ftv0 "$(pubkey_of b)" \
		endpoint "$B_ENDPOINT" allowed-ips 10.9.0.2/32,fd09::2/128 ||
		return 1
	nsx "$B" "$FTVCTL" peer add ftv0 "${B_PEER_KEY:-$(pubkey_of a)}" \
		allowed-ips 10.9.0.1/32,fd09::1/128
}

# ping_ok NS ADDR : one echo answered within a second
ping_ok()
{
	ip netns exec "$1" ping -q -c 1 -W 1 "$2" >/dev/null 2>&1
}

# connect_ping NS ADDR [TIMEOUT] : ping until the first answer; the first
# packets wait for the fake TCP connection and the key exchange.
connect_ping()
{
	wait_for "${3:-30}" ping_ok "$1" "$2"
}
