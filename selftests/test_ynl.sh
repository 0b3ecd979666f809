#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The netlink spec drives the live module: the kernel's own ynl CLI
# (tools/net/ynl of Linux 6.12, `make ynl`), given only
# docs/netlink/ftv.yaml, dumps and gets devices, sees its requests
# rejected with the module's extack message, and receives peer events.
#
#   ns A                                    ns B
#   ftv0 10.9.0.1  -- veth0 10.0.0.1/.2 --  ftv0 10.9.0.2
#   peers: B (2 allowed-ips), C (2, no endpoint)
#
# A second device, ftv1 in A, has two peers of its own, so that a dump
# covers two devices.

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # SC2317: helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

YNL_CLI=${FTV_YNL_CLI:-$FTV_ROOT/.cache/linux-source-6.12/tools/net/ynl/cli.py}
SPEC=$FTV_ROOT/docs/netlink/ftv.yaml
SCHEMA=${YNL_CLI%/tools/net/ynl/cli.py}/Documentation/netlink/genetlink-legacy.yaml

ktap_plan 9
ftv_require
[ -f "$YNL_CLI" ] ||
	ktap_bail "no ynl CLI at $YNL_CLI: make ynl (scripts/deps.sh installs linux-source-6.12)"
tmpdir

# ynl NS ARGS... : the kernel's CLI on our spec, JSON out
ynl()
{
	local ns=$1
	shift
	nsx "$ns" "$PYTHON" "$YNL_CLI" --spec "$SPEC" --schema "$SCHEMA" \
		--output-json "$@"
}

# json_eval FILE PYEXPR : PYEXPR over the JSON in FILE as r; E(list)
# unwraps an indexed array, which ynl shows as [{type: nest}, ...]
json_eval()
{
	"$PYTHON" -c '
import json, sys
def E(items):
    return [next(iter(x.values())) for x in items]
r = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))
' "$1" "$2"
}

setup()
{
	pair_underlay 4 && pair_ftv || return 1
	ftv_keypair c && ftv_keypair d && ftv_keypair e || return 1
	nsx "$A" "$FTVCTL" peer add ftv0 "$(pubkey_of c)" \
		allowed-ips 10.9.0.3/32,fd09::3/128 || return 1
	nsx "$A" ip link add name ftv1 type ftv || return 1
	nsx "$A" "$FTVCTL" peer add ftv1 "$(pubkey_of d)" \
		allowed-ips 10.8.0.4/32,10.8.1.0/24 || return 1
	nsx "$A" "$FTVCTL" peer add ftv1 "$(pubkey_of e)" \
		allowed-ips 10.8.0.5/32,fd08::5/128
}
setup || ktap_bail "cannot set up the namespaces, devices and peers"

# The spec's names for what ftvctl set up; keys as ynl shows binary, hex.
b_hex=$(base64 -d <<<"$(pubkey_of b)" | od -An -tx1 | tr -d ' \n')

# 1-2: a dump of every device, both with both their peers and every
# allowed-ip (a spec without multi-attr or an indexed array shows one).
ynl "$A" --dump get-device >"$FTV_TMP/dump.json" 2>"$FTV_TMP/dump.err"
ktap_eq "dump: two devices, two peers each" "ftv0:2 ftv1:2" \
	"$(json_eval "$FTV_TMP/dump.json" \
		"' '.join(sorted(f\"{d['ifname']}:{len(d['peers'])}\" for d in r))" \
		2>&1 | tail -n 1)" || ktap_diag <"$FTV_TMP/dump.err"
ktap_eq "dump: every peer with its two allowed-ips" "2 2 2 2" \
	"$(json_eval "$FTV_TMP/dump.json" \
		"' '.join(str(len(p['allowedips'])) for d in r for p in E(d['peers']))" \
		2>&1 | tail -n 1)"

# 3-4: do of one device by name, its peer B with the endpoint ftvctl gave
ynl "$A" --do get-device --json '{"ifname": "ftv0"}' \
	>"$FTV_TMP/do.json" 2>"$FTV_TMP/do.err"
ktap_eq "do: ftv0 with its two peers" "ftv0 2" \
	"$(json_eval "$FTV_TMP/do.json" "r['ifname'], len(r['peers'])" \
		2>&1 | tail -n 1 | tr -d "()',")" || ktap_diag <"$FTV_TMP/do.err"
ktap_eq "do: peer B's endpoint and allowed-ips as the spec names them" \
	"10.0.0.2 $FTV_PORT 10.9.0.2/32 fd09::2/128" \
	"$(json_eval "$FTV_TMP/do.json" "[' '.join(
[p['endpoint-ipv4'], str(p['endpoint-port'])] +
sorted(f\"{a['ipaddr']}/{a['cidr-mask']}\" for a in E(p['allowedips'])))
for p in E(r['peers']) if p['public-key'] == '$b_hex'][0]" 2>&1 | tail -n 1)"

# 5-6: a rejected request comes back with the module's extack message
out=$(ynl "$A" --do new-peer --json \
	"{\"ifname\": \"ftv0\", \"peer\": {\"public-key\": \"$b_hex\", \"endpoint-port\": 1}}" 2>&1)
rc=$?
ktap_eq "new-peer with a port and no address fails" 1 "$((rc != 0))"
if grep -q "endpoint port given without an address" <<<"$out"; then
	ktap_ok "the failure carries the extack message"
else
	ktap_fail "the failure carries the extack message"
	ktap_diag <<<"$out"
fi

# 7: do of a device that is not there: ENODEV and the message
out=$(ynl "$A" --do get-device --json '{"ifname": "nosuch0"}' 2>&1)
if grep -q "no such device" <<<"$out"; then
	ktap_ok "get of a missing device says 'no such device'"
else
	ktap_fail "get of a missing device says 'no such device'"
	ktap_diag <<<"$out"
fi

# 8-9: a subscriber to the peers group hears A's session with B come up.
# It joins the group before it starts sleeping, and the ping comes after.
subscribed()
{
	local pid
	pid=$(pgrep -f -- "--subscribe peers --sleep") || return 1
	grep -q sleep "/proc/$pid/wchan"
}
ynl "$A" --subscribe peers --sleep 30 >"$FTV_TMP/events.json" \
	2>"$FTV_TMP/events.err" &
bg_track $!
events_pid=$!
wait_for 20 subscribed || ktap_diag "the subscriber did not join in 20 s"
ktap_check "ping through the tunnel" connect_ping "$A" 10.9.0.2
wait "$events_pid"
if grep -q '"established"' "$FTV_TMP/events.json" &&
   grep -q "$b_hex" "$FTV_TMP/events.json"; then
	ktap_ok "the subscriber received B's 'established' event"
else
	ktap_fail "the subscriber received B's 'established' event"
	ktap_diag <"$FTV_TMP/events.json"
	ktap_diag <"$FTV_TMP/events.err"
fi

ktap_finish
