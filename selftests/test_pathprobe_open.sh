#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ftvctl probe, and the joins of a session, against a censor that judges
# each connection by its first message (docs/design-probe.md, openings;
# docs/protocol.md, shaped openings): R, 20 ms each way and strict
# conntrack, blocks a new connection to S's listen port both ways unless
# the first segment with payload C sends on it starts with twelve
# printable characters (paths_fet: the published rule reads six, which a
# random opening passes once in about 380). Connections open before it came are left alone.
#  - clean first: the probe's fresh-port joins, two opened shaped and two
#    as they are, all come up, and it finds nothing;
#  - the censor, C with shape on: a join that flows 2 asks for comes up
#    on both ends (S counts it up once its first message opened), and R
#    blocks nothing: a join's first message goes shaped, each way;
#  - the probe says "openings filtered" alone, the shaped joins up and
#    the others not (R blocked exactly those two), with nothing to change
#    (shape is on), within 30 s and 5 MB;
#  - C with shape off: a third join (flows 3) never comes up at S (C
#    finds each stalled and tries another), and the probe
#    recommends shape on, which --apply sets; a transfer finds the
#    blocked join stalled, and the next opens shaped and comes up on
#    both ends, and pings pass.
#
#   ns C (initiator)          ns R (router, censor)              ns S (responder)
#   ftv0 10.9.0.1  ---  netem 20 ms each way; later: a      ---  ftv0 10.9.0.2
#                       connection whose first payload from        :51820
#                       C does not start printable is dropped

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

ktap_plan 9
ftv_require
require_tools nft conntrack

paths_censor 20ms || ktap_bail "cannot set up the namespaces and R"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
C_KEY=$(pubkey_of c)
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"

# ftvctl_probe [ARG] : ftvctl probe --json on C for S; stderr to $FTV_TMP/err
ftvctl_probe() { nsx "$C" "$FTVCTL" probe ftv0 "$S_KEY" --json "$@" 2>"$FTV_TMP/err"; }
# openings : the probe's shaped and as-is joins, "up/tried" each
openings() { probe_field '"%d/%d %d/%d" % (m["openings"]["shaped"]["up"], m["openings"]["shaped"]["tried"], m["openings"]["as_is"]["up"], m["openings"]["as_is"]["tried"])'; }
# s_flows N : S counts N connections of the session up
s_flows() { [ "$(ftv_peer_json "$S" ftv0 "$C_KEY" 'p["flows_up"]')" = "$1" ]; }
pings_pass() { ip netns exec "$C" ping -q -n -c 10 -i 0.2 -W 2 10.9.0.2 2>/dev/null | grep -q " 0% packet loss"; }

# ---- clean
out=$(ftvctl_probe)
ktap_diag "clean: $out"
ktap_eq "clean: shaped and as-is joins all up, no verdict, within 30 s and 5 MB" \
	"2/2 2/2 none True" "$(openings) $(verdicts) $(cost_ok)"

# ---- the censor; C shapes
paths_fet || ktap_bail "cannot set up the censor on R"
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 2 ||
	ktap_bail "ftvctl peer set ... flows 2 failed"
wait_for 10 s_flows 2
ktap_eq "flows 2 through it: the join is up at S, R blocked nothing, pings pass" \
	"2 0 ok" \
	"$(ftv_peer_json "$S" ftv0 "$C_KEY" 'p["flows_up"]') $(paths_fet_blocked) $(pings_pass && echo ok)"

out=$(ftvctl_probe)
ktap_diag "shape on: $out"
ktap_eq "shape on: openings filtered alone, shaped joins up and as-is not; nothing to change" \
	"openings filtered 2/2 0/2 None None" \
	"$(verdicts) $(openings) $(probe_field 'r["recommended"], r["recommended_shape"]' | tr -d '(),')"
evidence=$(probe_field '[v["evidence"] for v in r["verdicts"]][0]')
if [[ $evidence =~ ^2\ of\ 2\ joins\ whose\ first\ message\ went\ shaped\ came\ up\ \(the\ first\ in\ [0-9]+\ ms\)\;\ none\ of\ 2\ whose\ first\ went\ as\ it\ is\ did\ in\ 2\.5\ s\;\ this\ end\'s\ shape\ is\ on\ already$ ]]; then
	ktap_ok "shape on: the evidence counts the joins of each kind"
else
	ktap_fail "shape on: the evidence counts the joins of each kind"
	ktap_diag "$evidence"
fi
ktap_eq "shape on: R blocked the two as-is joins; within 30 s and 5 MB" \
	"2 True" "$(paths_fet_blocked) $(cost_ok)"

# ---- C does not shape
nsx "$C" "$FTVCTL" set ftv0 shape off || ktap_bail "ftvctl set ftv0 shape off failed"
blocked=$(paths_fet_blocked)
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 3 ||
	ktap_bail "ftvctl peer set ... flows 3 failed"
more_blocked() { [ "$(paths_fet_blocked)" -gt "$blocked" ]; }
wait_for 10 more_blocked
ktap_eq "shape off: the third join is blocked, S still counts 2 up" \
	"True 2" \
	"$([ "$(paths_fet_blocked)" -gt "$blocked" ] && echo True) $(ftv_peer_json "$S" ftv0 "$C_KEY" 'p["flows_up"]')"

out=$(ftvctl_probe --apply)
ktap_diag "shape off: $out"
ktap_diag "$(cat "$FTV_TMP/err")"
# The joins C opens meanwhile, blocked, take a message each that S never
# sees: it may report loss too.
ktap_eq "shape off: openings filtered; it recommends shape on" \
	"True on" \
	"$(probe_field '"openings filtered" in [v["name"] for v in r["verdicts"]]') $(probe_field 'r["recommended_shape"]')"
ktap_eq "--apply set shape on" "ftvctl: applied: ftvctl set ftv0 shape on True" \
	"$(grep applied "$FTV_TMP/err") $(ftv_json "$C" ftv0 'd["shape"]')"
# The join blocked before looks up to C until data on it goes unanswered
# (the stall check): a transfer finds it, and its successor opens shaped.
random_file data 2
sent=lost
transfer "$C" "$S" 10.9.0.2 5001 "$FTV_TMP/data" 60 && sent=intact
wait_for 15 s_flows 3
ktap_eq "shape on again: 2 MB cross, the third join comes up at S, pings pass" \
	"intact 3 ok" \
	"$sent $(ftv_peer_json "$S" ftv0 "$C_KEY" 'p["flows_up"]') $(pings_pass && echo ok)"

ktap_finish
