#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The probe primitives (module/probe.c), driven through the netlink spec
# as ftvctl will drive them, over a router with delay and every offload
# at its default:
#  - a read sends nothing and lists the session's one connection;
#  - an echo padded to 1000 bytes is answered with the length it arrived
#    with and the connection it came on; one padded to 3000 bytes, more
#    than the 1500-byte path carries with DF set, gets no answer, and the
#    session goes on;
#  - a pad step gets its bytes granted and that much padding comes on the
#    connection named, none of it delivered as a packet;
#  - the responder's limits: a pad the rest of its 5 MiB budget does not
#    cover gets nothing, and a burst of asks past its 200 answers is not
#    all answered; both count probe_limited; a stop ends the padding;
#  - bad requests get the errno and the message: no such peer, a pad step
#    without its rate, bytes over the limit, an echo on every connection,
#    a connection not up, a peer without a session, a join to an
#    endpoint the peer does not have, a join from the end that did not
#    open the session, a probe step in set-peer;
#  - the peer removed while it sends padding is freed (pr_debug pairs; on
#    the debug kernel, KASAN sees no use after free).
#
#   ns C (initiator)         ns R (router)              ns S (responder)
#   ftv0 10.9.0.1   --- netem delay 10ms each way ---   ftv0 10.9.0.2 :51820

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

PROBE="$FTV_ROOT/selftests/lib/ftvprobe.py"
YNL_DIR=${FTV_YNL_CLI:-$FTV_ROOT/.cache/linux-source-6.12/tools/net/ynl/cli.py}
YNL_DIR=${YNL_DIR%/cli.py}

ktap_plan 23
ftv_require
[ -d "$YNL_DIR/lib" ] ||
	ktap_bail "no ynl library at $YNL_DIR: make ynl (scripts/deps.sh installs linux-source-6.12)"

kmark=$(kmsg_mark)
paths_censor 10ms || ktap_bail "cannot set up the namespaces and R"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
C_KEY=$(pubkey_of c)
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"

# probe NS KEY STEP ARGS... : ftvprobe.py on ftv0 in NS, for peer KEY
probe() { nsx "$1" "$PYTHON" "$PROBE" --ynl "$YNL_DIR" ftv0 "$2" "${@:3}"; }
# jq_ JSON PYEXPR : PYEXPR over the JSON object r
jq_()
{
	"$PYTHON" -S -c 'import json, sys; r = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' \
		"$1" "$2" 2>/dev/null
}
# rx0 : what came on C's connection 0, by C's probe
rx0() { jq_ "$(probe "$C" "$S_KEY" read)" '[c["rx-bytes"] for c in r["conns"] if c["index"] == 0][0]'; }
rx0_at_least() { [ "$(rx0)" -ge "$1" ]; }
limited() { ftv_peer_json "$S" ftv0 "$C_KEY" 'p["drops"].get("probe_limited", 0)'; }
rx_packets() { nsx "$C" cat /sys/class/net/ftv0/statistics/rx_packets; }

# 1: a read
out=$(probe "$C" "$S_KEY" read)
ktap_eq "read: no ask sent, no answer held, connection 0 up" "None False [0]" \
	"$(jq_ "$out" 'r.get("nonce"), "tell" in r, [c["index"] for c in r["conns"]]' | tr -d "(),")" ||
	ktap_diag "$out"

# 2-3: an echo
out=$(probe "$C" "$S_KEY" echo --length 1000 --wait 5)
ktap_eq "echo: answered" 0 "$?" || ktap_diag "$out"
ktap_eq "echo: the answer says 1000 bytes came on connection 0" "echo 1000 0" \
	"$(jq_ "$out" 'r["tell"]["step"], r["tell"]["length"], r["tell"]["index"]' | tr -d "(),'")" ||
	ktap_diag "$out"

# 4-5: an echo longer than the path (veth MTU 1500, DF set) is lost
out=$(probe "$C" "$S_KEY" echo --length 3000 --wait 3)
ktap_eq "echo of 3000 bytes on a 1500-byte path: no answer" 2 "$?" ||
	ktap_diag "$out"
out=$(probe "$C" "$S_KEY" echo --length 1200 --wait 5)
ktap_eq "an echo of 1200 bytes after it: answered" 1200 \
	"$(jq_ "$out" 'r["tell"]["length"]')" || ktap_diag "$out"

# 6-8: padding
before=$(rx0)
pkts=$(rx_packets)
out=$(probe "$C" "$S_KEY" pad --bytes 300000 --rate 20000 --wait 5)
ktap_eq "pad: 300000 bytes granted" 300000 "$(jq_ "$out" 'r["tell"]["bytes"]')" ||
	ktap_diag "$out"
if wait_for 10 rx0_at_least $((before + 300000)); then
	ktap_ok "pad: at least 300000 bytes came on connection 0"
else
	ktap_fail "pad: at least 300000 bytes came on connection 0"
	ktap_diag "before $before, now $(rx0)"
fi
ktap_eq "pad: none of it reached C's ftv0 as a packet" 1 \
	"$(($(rx_packets) - pkts < 20))" || ktap_diag "rx_packets $pkts -> $(rx_packets)"

# 9-12: the limits, and stop. 300000 of the 5 MiB used: a pad of 4 MB
# at 4 Mbit/s (about 8 s of it) is granted, the same again at once is
# not; the stop ends the first, and the two echoes after it see no more
# come.
out=$(probe "$C" "$S_KEY" pad --bytes 4000000 --rate 4000 --count 2 --wait 5)
ktap_eq "limits: a second pad of 4 MB at once gets nothing, and S counts probe_limited" \
	"0 1" "$(jq_ "$out" 'r["tell"]["bytes"]') $(limited)" || ktap_diag "$out"
wait_for 5 rx0_at_least $((before + 300000 + 100000))
out=$(probe "$C" "$S_KEY" stop --wait 5)
ktap_eq "stop: answered" 0 "$?" || ktap_diag "$out"
probe "$C" "$S_KEY" echo --wait 5 >/dev/null
a=$(rx0)
probe "$C" "$S_KEY" echo --wait 5 >/dev/null
probe "$C" "$S_KEY" echo --wait 5 >/dev/null
b=$(rx0)
ktap_eq "stop: no padding came after it" 1 "$((b - a < 20000))" ||
	ktap_diag "connection 0 got $((b - a)) bytes over two echoes"
was=$(limited)
probe "$C" "$S_KEY" echo --count 220 >/dev/null
wait_for 5 test "$(limited)" -gt "$was"
ktap_eq "limits: of 220 asks in a burst, some over 200 in 60 s go unanswered" 1 \
	"$(($(limited) - was >= 5))" || ktap_diag "probe_limited $was -> $(limited)"

# 13-21: bad requests
ftv_keypair x
X_KEY=$(pubkey_of x)
expect_error()
{
	local name=$1 want=$2 out
	shift 2
	out=$(probe "$@")
	if grep -q "^errno=${want%% *}$" <<<"$out" &&
	   grep -q "^msg=.*${want#* }" <<<"$out"; then
		ktap_ok "$name"
	else
		ktap_fail "$name"
		ktap_diag "$out"
	fi
}
expect_error "no such peer: ENOENT" "ENOENT no such peer" "$C" "$X_KEY" echo
expect_error "a pad without its rate: EINVAL" \
	"EINVAL a pad step needs bytes and rate" "$C" "$S_KEY" pad --bytes 1000
expect_error "bytes over 5 MiB: EINVAL" \
	"EINVAL probe bytes must be 1 to 5242880" "$C" "$S_KEY" pad \
	--bytes 6000000 --rate 1000
expect_error "an echo on every connection: EINVAL" \
	"EINVAL only a pad goes on every connection" "$C" "$S_KEY" echo --index -1
expect_error "a connection that is not up: ENOTCONN" \
	"ENOTCONN the peer's session or that connection is not up" \
	"$C" "$S_KEY" echo --index 5
nsx "$C" "$FTVCTL" peer add ftv0 "$X_KEY" allowed-ips 10.9.0.99/32 ||
	ktap_diag "cannot add a peer without endpoint"
expect_error "a peer without a session: ENOTCONN" \
	"ENOTCONN the peer's session or that connection is not up" \
	"$C" "$X_KEY" echo

expect_error "a join to an endpoint the peer does not have: ERANGE" \
	"ERANGE the peer has no endpoint of that number" \
	"$C" "$S_KEY" join --index 1
# EOPNOTSUPP, which Python's errno module names ENOTSUP (the same value).
expect_error "a join from the end that did not open the session: EOPNOTSUPP" \
	"ENOTSUP the peer takes no joins, or it opened the session" \
	"$S" "$C_KEY" join

s_hex=$(base64 -d <<<"$S_KEY" | od -An -tx1 | tr -d ' \n')
out=$(nsx "$C" "$PYTHON" "$YNL_DIR/cli.py" --spec "$FTV_ROOT/docs/netlink/ftv.yaml" \
	--no-schema --do set-peer --json \
	"{\"ifname\": \"ftv0\", \"peer\": {\"public-key\": \"$s_hex\", \"probe\": {\"step\": \"echo\"}}}" 2>&1)
if grep -q "a probe step goes in the probe command" <<<"$out"; then
	ktap_ok "a probe step in set-peer: rejected with its message"
else
	ktap_fail "a probe step in set-peer: rejected with its message"
	ktap_diag "$out"
fi

# 22-23: S asks C for 1 MB at 1 Mbit/s; C's peer S goes while C pads.
out=$(probe "$S" "$C_KEY" pad --bytes 1000000 --rate 1000 --wait 5)
[ "$(jq_ "$out" 'r["tell"]["bytes"]')" = 1000000 ] ||
	ktap_diag "S's ask was not granted: $out"
nsx "$C" "$FTVCTL" peer del ftv0 "$S_KEY" || ktap_diag "peer del failed"
nsx "$C" "$FTVCTL" peer del ftv0 "$X_KEY"
nsx "$S" "$FTVCTL" peer del ftv0 "$C_KEY"
ip -n "$C" link del ftv0
ip -n "$S" link del ftv0
objects_balanced "$kmark" 30
ktap_eq "no kernel report of a write into freed memory" "" "$(freed_memory_reports "$kmark")"

ktap_finish
