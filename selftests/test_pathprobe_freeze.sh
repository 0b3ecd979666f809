#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ftvctl probe's freeze step (docs/design-probe.md, section 3) against a
# censor that freezes every TCP connection once 16 KB have gone from the
# server to the client (R drops what S sends on a connection whose reply
# direction carried more, by conntrack's byte count), as Russia's does.
# C has four connections and rotate off, as a user who finds the tunnel
# stalling might.
#  - the probe pads 500 kB on connection 1, then 2 and 3 as each froze:
#    "byte-budget freeze", after about as many bytes towards C on each
#    (12 to 17 KB of stream: 16 KB of IP packets less their headers; 14.2
#    to 15.0 KB measured), and it recommends rotate at three quarters of
#    the least (9k to 12k; 10k measured),
#    within 30 s and 5 MB; the policing step is not run (its pad on the
#    first connection would freeze it);
#  - --apply sets that budget; then 1 MB from S to C arrive intact, and
#    no connection opened since carried 16 KB towards C.
# The clean path's "not seen" is test_pathprobe_police.sh's.
#
#   ns C (initiator)          ns R (router, censor)              ns S (responder)
#   ftv0 10.9.0.1  ---  netem 20 ms each way; S->C dropped  ---  ftv0 10.9.0.2
#   flows 4, rotate off       once a connection carried 16 KB        :51820
#                             towards C

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

FREEZE=16384

ktap_plan 7
ftv_require
require_tools conntrack nc nft

paths_censor 20ms || ktap_bail "cannot set up the namespaces and R"
paths_freeze "$FREEZE" || ktap_bail "cannot set up R's freeze"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 4 rotate off ||
	ktap_bail "ftvctl peer set ... flows 4 rotate off failed"
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"
four_up() { [ "$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]')" = 4 ]; }
wait_for 20 four_up || ktap_bail "flows 4 did not get four connections up"

# crossed : connections in R's conntrack that carried more than the freeze
# towards C
crossed() { paths_crossed "$FREEZE"; }
# probe_field EXPR : EXPR over ftvctl probe's JSON r (f: its freeze part)
probe_field()
{
	"$PYTHON" -c '
import json, sys
r = json.loads(sys.argv[1])
f = r["measurements"]["freeze"]
print(eval(sys.argv[2]))' "$out" "$1" 2>/dev/null
}

# ---- the probe
out=$(nsx "$C" "$FTVCTL" probe ftv0 "$S_KEY" --json --apply 2>"$FTV_TMP/apply.err")
ktap_diag "$out"
ktap_diag "$(cat "$FTV_TMP/apply.err")"
ktap_eq "the probe says byte-budget freeze, alone" "byte-budget freeze" \
	"$(probe_field '",".join(v["name"] for v in r["verdicts"]) or "none"')"
ktap_eq "two or three connections froze, each after 12 to 17 KB towards C" True \
	"$(probe_field 'sum(c["froze"] for c in f["connections"]) >= 2 and all(12000 <= c["carried"] <= 17000 for c in f["connections"] if c["froze"])')"
rec=$(probe_field 'r["recommended"]')
ktap_eq "it recommends rotate 9k to 12k, and does not pad the first connection" \
	"True False" \
	"$(probe_field 'r["recommended"] in ("rotate 9k", "rotate 10k", "rotate 11k", "rotate 12k"), r["measurements"]["policing"]["measured"]' | tr -d '(),')"
ktap_eq "within 30 s and 5 MB" True \
	"$(probe_field 'r["seconds"] <= 30 and r["bytes"] < 5000000')"

# ---- applied
budget=${rec#rotate }
ktap_eq "--apply: C's peer has rotate $budget" "$((${budget%k} * 1024))" \
	"$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["rotate"]')"
random_file data 1
crossed0=$(crossed)
if transfer "$S" "$C" 10.9.0.1 5001 "$FTV_TMP/data" 120; then
	ktap_ok "applied: 1 MB from S to C arrive intact through the freeze"
else
	ktap_fail "applied: 1 MB from S to C arrive intact through the freeze"
fi
ktap_diag "C's peer: rotations $(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["rotations"]'), flows up $(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]'); FEC at S $(ftv_peer_json "$S" ftv0 "$(pubkey_of c)" 'p["fec_stats"]'), at C $(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["fec_stats"]'); S's tx_dropped $(ip -n "$S" -s -j link show ftv0 | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["dropped"])')"
ktap_eq "applied: no connection opened since carried 16 KB towards C" \
	"$crossed0" "$(crossed)" ||
	{ ktap_diag "C's peer: rotations $(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["rotations"]'), R dropped $(nft_packets "$R" "ip freeze") segments for the freeze; R's conntrack:"
	  nsx "$R" conntrack -L -p tcp --dport "$FTV_PORT" 2>/dev/null | ktap_diag
	  nsx "$S" "$FTVCTL" show ftv0 | ktap_diag; }

ktap_finish
