#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Rejections of the ftv generic netlink family: every bad request must
# fail with the right errno and an extack message that names the problem.
# Requests are built by ftvnl.py, which can also send what ftvctl never
# would (wrong lengths, unknown types, truncated attributes).
#
#   ns N
#   +-----------------------------------------+
#   |  lo            ftv0            ftv1     |
#   |  (not ftv)     (under test)    (holds   |
#   |                                 port    |
#   |                                 4000)   |
#   +-----------------------------------------+
#
# No traffic flows. Messages are matched on a key word, case-insensitive;
# errnos exactly.

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

ktap_plan 70
ftv_require

# nl_expect DESC ERRNO WORD ARG... : run ftvnl.py ARG... in N as root and
# expect ERRNO (0 for success; "A|B" for either) and, for errors, a message containing WORD
# (any non-empty message if WORD is "", no message needed if WORD is "-").
nl_expect()
{
	nl_expect_as root "$@"
}

# nl_expect_as USER DESC ERRNO WORD ARG... : the same, as USER
nl_expect_as()
{
	local user=$1 desc=$2 want=$3 word=$4 out got msg
	local runas=()
	shift 4

	if [ "$user" = root ]; then
		out=$(nl_batch "$@")
	else
		runas=(setpriv --reuid="$user" --regid="$user" --clear-groups)
		out=$(nsx "$N" "${runas[@]}" "$PYTHON" -S "$FTVNL" "$@" 2>&1)
	fi
	got=$(sed -n 's/^errno=//p' <<<"$out")
	msg=$(sed -n 's/^msg=//p' <<<"$out")
	LAST_OUT=$out
	if ! [[ "|$want|" == *"|$got|"* ]] || [ -z "$got" ]; then
		ktap_fail "$desc"
		ktap_diag "expected errno $want, got ${got:-nothing}"
	elif [ "$want" != 0 ] && [ "$word" != - ] && [ -z "$msg" ]; then
		ktap_fail "$desc"
		ktap_diag "$got without an extack message"
	elif [ "$want" != 0 ] && [ "$word" != - ] && [ -n "$word" ] &&
	     ! grep -qiF -- "$word" <<<"$msg"; then
		ktap_fail "$desc"
		ktap_diag "extack message does not mention '$word'"
	else
		ktap_ok "$desc"
		return 0
	fi
	ktap_diag "ftvnl.py $*"
	ktap_diag <<<"$out"
	return 1
}

ns_create N || ktap_bail "cannot create namespace"
# One ftvnl.py in N answers root's requests (a python start takes a
# second or more under emulation); nl_batch ARG... : what a call of
# ftvnl.py ARG... prints
coproc NL { nsx "$N" "$PYTHON" -S "$FTVNL" --batch 2>&1; }
bg_track "$NL_PID"
nl_batch()
{
	local line

	printf '%s\0' $# "$@" >&"${NL[1]}"
	while IFS= read -r line <&"${NL[0]}"; do
		[[ "$line" == "--end "* ]] && return 0
		printf '%s\n' "$line"
	done
	echo "ftvnl.py --batch ended"
	return 1
}
nsx "$N" ip link add name ftv0 type ftv || ktap_bail "cannot create ftv0"
nsx "$N" ip link add name ftv1 type ftv || ktap_bail "cannot create ftv1"
nsx "$N" ip link set ftv0 up

rand_key()
{
	head -c 32 /dev/urandom | base64
}
PEER=$(rand_key)
OTHER=$(rand_key)

# ---- device selection
nl_expect "set on a non-ftv device: EOPNOTSUPP" EOPNOTSUPP "not an ftv device" \
	set_device ifname=lo listen_port=1
nl_expect "set without ifindex or ifname: EINVAL" EINVAL "device" \
	set_device listen_port=1
nl_expect "set on a nonexistent device: ENODEV" ENODEV "" \
	set_device ifname=nosuch0 listen_port=1
nl_expect "set on a nonexistent ifindex: ENODEV" ENODEV "" \
	set_device ifindex=999999 listen_port=1

# ---- device attributes
# Length and range violations are caught by the netlink policy, which
# answers ERANGE ("binary attribute size out of range", "integer out of
# range") for exact-length and range checks; EINVAL is allowed too.
nl_expect "31-byte private key: ERANGE or EINVAL (policy)" "ERANGE|EINVAL" "" \
	set_device ifname=ftv0 private_key=rand:31
if grep -q '^offs=.* attr=private_key$' <<<"$LAST_OUT"; then
	ktap_ok "policy rejection points at the private key (extack offset)"
else
	ktap_fail "policy rejection points at the private key (extack offset)"
	ktap_diag <<<"$LAST_OUT"
fi
nl_expect "32-byte private key and listen port are accepted" 0 "" \
	set_device ifname=ftv0 private_key=rand:32 listen_port=5000
nl_expect "listen port as u32 instead of u16: EINVAL (policy)" EINVAL "" \
	set_device ifname=ftv0 listen_port:u32=5001
nl_expect "unknown device flag: EINVAL or EOPNOTSUPP" "EINVAL|EOPNOTSUPP" "" \
	set_device ifname=ftv0 flags=0x80000000
nl_expect "ftv1 takes listen port 4000" 0 "" \
	set_device ifname=ftv1 listen_port=4000
nl_expect "listen port used by another ftv device: EADDRINUSE" EADDRINUSE "port" \
	set_device ifname=ftv0 listen_port=4000

# ---- peers
nl_expect "peer add without a public key: EINVAL" EINVAL "public key" \
	new_peer ifname=ftv0 'peer{' endpoint_port=1 '}'
nl_expect "peer add" 0 "" \
	new_peer ifname=ftv0 'peer{' public_key="b64:$PEER" '}'
nl_expect "peer add twice: EEXIST" EEXIST "exists" \
	new_peer ifname=ftv0 'peer{' public_key="b64:$PEER" '}'
nl_expect "peer set on an unknown peer: ENOENT" ENOENT "no such peer" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$OTHER" persistent_keepalive=5 '}'
nl_expect "peer del on an unknown peer: ENOENT" ENOENT "no such peer" \
	del_peer ifname=ftv0 'peer{' public_key="b64:$OTHER" '}'

own=$(ftvnl_in "$N" --dump get_device ifname=ftv0 | sed -n 's/^  public_key: b64://p')
if [ -n "$own" ]; then
	nl_expect "peer add with the device's own public key: EINVAL" EINVAL "own" \
		new_peer ifname=ftv0 'peer{' public_key="b64:$own" '}'
else
	ktap_fail "peer add with the device's own public key: EINVAL"
	ktap_diag "could not read ftv0's public key back"
	ktap_diag < <(ftvnl_in "$N" --dump get_device ifname=ftv0 2>&1)
fi

nl_expect "allowed-ip 10.9.0.0/33: EINVAL" EINVAL "prefix" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 'allowedips{' \
	'allowedip{' family=inet ipaddr=10.9.0.0 cidr_mask=33 '}' '}' '}'
nl_expect "allowed-ip fd09::/129: ERANGE (policy) or EINVAL" "ERANGE|EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 'allowedips{' \
	'allowedip{' family=inet6 ipaddr=fd09:: cidr_mask=129 '}' '}' '}'
nl_expect "allowed-ip AF_INET with a 16-byte address: EINVAL" EINVAL "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 'allowedips{' \
	'allowedip{' family=inet ipaddr=fd09::1 cidr_mask=32 '}' '}' '}'
nl_expect "endpoint with both IPv4 and IPv6: EINVAL" EINVAL "endpoint" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" \
	endpoint_ipv4=10.0.0.1 endpoint_ipv6=fd00::1 endpoint_port=4000 '}'
nl_expect "endpoint address without a port: EINVAL" EINVAL "port" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" endpoint_ipv4=10.0.0.1 '}'

# ---- endpoints (issue 27): 1 to FTV_MAX_ENDPOINTS (8), each one address
# and a port; not with the lone endpoint attributes, nor removed at once
# eps N : an endpoints nest of N IPv4 entries, 10.0.0.1:4001 on
eps()
{
	local i

	echo 'endpoints{'
	for ((i = 1; i <= $1; i++)); do
		echo "entry$i{" "ipv4=10.0.0.$i" "port=$((4000 + i))" '}'
	done
	echo '}'
}
# shellcheck disable=SC2046 # one word per argument
nl_expect "endpoints: 9 entries: E2BIG" E2BIG "more than 8" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" $(eps 9) '}'
nl_expect "endpoints: an empty list: EINVAL" EINVAL "empty" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 'endpoints{' '}' '}'
nl_expect "endpoints: an entry without an address: EINVAL" EINVAL "address" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 'endpoints{' \
	'entry1{' port=4000 '}' '}' '}'
nl_expect "endpoints: an entry with IPv4 and IPv6: EINVAL" EINVAL "both" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 'endpoints{' \
	'entry1{' ipv4=10.0.0.1 ipv6=fd00::1 port=4000 '}' '}' '}'
nl_expect "endpoints: an entry without a port: EINVAL" EINVAL "port" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 'endpoints{' \
	'entry1{' ipv6=fd00::1 '}' '}' '}'
nl_expect "endpoints: port 0: ERANGE (policy)" "ERANGE|EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 'endpoints{' \
	'entry1{' ipv4=10.0.0.1 port=0 '}' '}' '}'
nl_expect "endpoints: a 5-byte address: ERANGE (policy)" "ERANGE|EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 'endpoints{' \
	'entry1{' ipv4:bin=hex:0102030405 port=1 '}' '}' '}'
nl_expect "endpoints with endpoint_port: EINVAL" EINVAL "at once" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" endpoint_ipv4=10.0.0.1 \
	endpoint_port=1 'endpoints{' 'entry1{' ipv4=10.0.0.2 port=2 '}' '}' '}'
nl_expect "endpoints with remove-endpoint: EINVAL" EINVAL "removed" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" flags=2 \
	'endpoints{' 'entry1{' ipv4=10.0.0.2 port=2 '}' '}' '}'
# shellcheck disable=SC2046
nl_expect "endpoints: 8 entries are accepted" 0 "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" $(eps 8) '}'
nl_expect "endpoints: IPv4 and IPv6 mixed are accepted" 0 "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 'endpoints{' \
	'entry1{' ipv6=fd00::7 port=443 '}' 'entry2{' ipv4=10.0.0.7 port=8443 '}' '}' '}'
# endpoints_now : the current endpoint and the list, as show --json says
endpoints_now()
{
	ftv_peer_json "$N" ftv0 "$PEER" 'p["endpoint"] + " " + ",".join(p["endpoints"])'
}
ktap_eq "endpoints read back in order, the first current (show --json)" \
	"[fd00::7]:443 [fd00::7]:443,10.0.0.7:8443" "$(endpoints_now)"
nl_expect "endpoint (one) replaces the list" 0 "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" \
	endpoint_ipv4=10.0.0.9 endpoint_port=9 '}'
ktap_eq "one endpoint is read back as a list of one" "10.0.0.9:9 10.0.0.9:9" \
	"$(endpoints_now)"
nl_expect "remove-endpoint forgets it" 0 "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" flags=2 '}'
ktap_eq "a peer without an endpoint has an empty list" "[]" \
	"$(ftv_peer_json "$N" ftv0 "$PEER" 'p["endpoints"]')"

# ---- FEC (issue 15): K:M limits and the rules between the attributes
nl_expect "fec K 65: ERANGE (policy)" "ERANGE|EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" fec_mode=2 \
	fec_data=65 fec_repair=1 '}'
nl_expect "fec K 0: ERANGE (policy)" "ERANGE|EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" fec_mode=2 \
	fec_data=0 fec_repair=1 '}'
nl_expect "fec M 17: ERANGE (policy)" "ERANGE|EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" fec_mode=2 \
	fec_data=4 fec_repair=17 '}'
nl_expect "fec mode 3: ERANGE (policy)" "ERANGE|EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" fec_mode=3 '}'
nl_expect "fixed fec without M: EINVAL" EINVAL "repair" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" fec_mode=2 \
	fec_data=4 '}'
nl_expect "fec K:M with auto: EINVAL" EINVAL "fixed" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" fec_mode=1 \
	fec_data=4 fec_repair=1 '}'
nl_expect "fec 8:2 is accepted" 0 "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" fec_mode=2 \
	fec_data=8 fec_repair=2 '}'

# ---- flows: 1 to FTV_MAX_FLOWS (8)
nl_expect "flows 0: ERANGE (policy)" "ERANGE|EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" flows=0 '}'
nl_expect "flows 9: ERANGE (policy)" "ERANGE|EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" flows=9 '}'
nl_expect "flows 8 is accepted" 0 "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" flows=8 '}'
nl_expect "flows_up is get only: EINVAL (policy)" "EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" flows_up=1 '}'
nl_expect "rotations is get only: EINVAL (policy)" "EINVAL" "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" rotations=1 '}'

# ---- rotate: 0 (off), 1 (auto) or FTV_ROTATE_MIN (4096) to _MAX (1 GiB),
# checked in code (a policy cannot say it), with an extack message

# rotate_now : the rotate the kernel reports for $PEER, ftv0's only peer
rotate_now()
{
	ftvnl_in "$N" --dump get_device ifname=ftv0 | sed -n 's/^ *rotate: //p'
}

nl_expect "rotate 12288 is accepted" 0 "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" rotate=12288 '}'
ktap_eq "rotate 12288 is read back" 12288 "$(rotate_now)"
nl_expect "rotate 1 (auto) is accepted" 0 "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" rotate=1 '}'
ktap_eq "rotate 1 is read back" 1 "$(rotate_now)"
nl_expect "rotate 100: EINVAL, a budget too small" EINVAL "rotate" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" rotate=100 '}'
nl_expect "rotate 1 GiB + 1: EINVAL, a budget too large" EINVAL "1 GiB" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" rotate=1073741825 '}'

# ---- a peer too big for one dump message (review of 891c642: the dump
# restarted such a peer forever); ftvctl sends the list in parts
aips=$("$PYTHON" -c 'print(",".join("10.%d.%d.%d/32" % (i >> 16, (i >> 8) & 255, i & 255) for i in range(1, 5001)))')
ktap_check "ftvctl adds a peer with 5000 allowed-ips" \
	nsx "$N" "$FTVCTL" peer set ftv0 "$PEER" allowed-ips "$aips"
n=$(nsx "$N" timeout 60 "$FTVCTL" show ftv0 --json |
	"$PYTHON" -S -c 'import json, sys; j = json.load(sys.stdin); print(sum(len(p["allowed_ips"]) for p in j["ftv0"]["peers"]))')
ktap_eq "the dump ends and shows all 5000 of them" 5000 "$n"
nl_expect "the peer's list is replaced by an empty one" 0 "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" flags=1 \
	'allowedips{' '}' '}'

# ---- malformed messages
nl_expect "unknown top-level attribute type: EINVAL" EINVAL "" \
	set_device ifname=ftv0 200:u32=1
nl_expect "unknown attribute type inside the peer nest: EINVAL" EINVAL "" \
	set_peer ifname=ftv0 'peer{' public_key="b64:$PEER" 99:u32=1 '}'
nl_expect "peer attribute that is not a nest: EINVAL" EINVAL "" \
	new_peer ifname=ftv0 peer:u32=1
# An attribute header claiming 200 bytes with 4 left: truncated.
nl_expect "truncated attribute: EINVAL" EINVAL "" \
	--tail c8000200 set_device ifname=ftv0

# ---- permissions
nl_expect_as 65534 "set without CAP_NET_ADMIN: EPERM" EPERM - \
	set_device ifname=ftv0 listen_port=6000
nl_expect_as 65534 "get without CAP_NET_ADMIN: EPERM" EPERM - \
	--dump get_device ifname=ftv0
# Events name peers and endpoints: subscribing needs CAP_NET_ADMIN too.
out=$(nsx "$N" setpriv --reuid=65534 --regid=65534 --clear-groups \
	timeout 10 "$FTVCTL" monitor 2>&1)
rc=$?
if [ "$rc" = 1 ] && grep -qi "not permitted" <<<"$out"; then
	ktap_ok "ftvctl monitor without CAP_NET_ADMIN is refused (EPERM)"
else
	ktap_fail "ftvctl monitor without CAP_NET_ADMIN is refused (EPERM)"
	ktap_diag "exit $rc: $out"
fi
nsx "$N" timeout 2 "$FTVCTL" monitor >/dev/null 2>&1
ktap_eq "ftvctl monitor as root subscribes (still running after 2 s)" 124 "$?"

# ---- ftvctl passes the kernel's message on
out=$(nsx "$N" "$FTVCTL" set lo listen-port 7000 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 0 ] && grep -qiF "not an ftv device" <<<"$out"; then
	ktap_ok "ftvctl set on lo: non-zero exit, kernel message on stderr"
else
	ktap_fail "ftvctl set on lo: non-zero exit, kernel message on stderr"
	ktap_diag "exit $rc, stderr: $out"
fi
out=$(nsx "$N" "$FTVCTL" peer del ftv0 "$OTHER" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 0 ] && grep -qiF "no such peer" <<<"$out"; then
	ktap_ok "ftvctl peer del of an unknown peer: non-zero exit, kernel message on stderr"
else
	ktap_fail "ftvctl peer del of an unknown peer: non-zero exit, kernel message on stderr"
	ktap_diag "exit $rc, stderr: $out"
fi

nl_expect "peer del" 0 "" \
	del_peer ifname=ftv0 'peer{' public_key="b64:$PEER" '}'

ktap_finish
