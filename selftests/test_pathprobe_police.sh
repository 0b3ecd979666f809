#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ftvctl probe against a policer per connection, over the probe
# primitives of module/probe.c (docs/design-probe.md, policing): it asks
# S for 1 MB of padding at 8 Mbit/s on one connection and, if that came
# short, for a pad as long at half the rate on each of the session's four
# connections, and counts what came on each.
#  - on a clean path it finds nothing, within 30 s and 5 MB;
#  - with R policing each connection (nft's limit of 1 Mbit/s, which
#    let about twice that through in this VM: 3.9 Mbit/s were measured
#    for a limit of 2), one connection brings
#    less than half its pad, four bring at least 2.5 times what one did,
#    each of the other three about what the one did alone (within a
#    third; nft's allowance for the one is still low then), and it
#    says "per-connection policer" and recommends flows 4.
# The two runs take 4 MB of S's 5 MiB a minute for C's probes.
#
#   ns C (initiator, flows 4)   ns R (router)                  ns S (responder)
#   ftv0 10.9.0.1  ---  netem 10 ms each way; nftables  ---  ftv0 10.9.0.2 :51820
#                       policer per connection (2nd part)

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT


ktap_plan 9
ftv_require
command -v nft >/dev/null || ktap_skip_all "nft is not installed"

kmark=$(kmsg_mark)
paths_censor 10ms || ktap_bail "cannot set up the namespaces and R"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
C_KEY=$(pubkey_of c)
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 4 ||
	ktap_bail "ftvctl peer set ... flows 4 failed"
four_up() { [ "$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]')" = 4 ]; }
if wait_for 20 four_up; then
	ktap_ok "flows 4: four connections up"
else
	ktap_bail "flows 4 did not get four connections up"
fi

# ftvctl_probe : ftvctl probe --json on C for S; the JSON or nothing
ftvctl_probe() { nsx "$C" "$FTVCTL" probe ftv0 "$S_KEY" --json; }
# verdicts JSON : the names of the verdicts in ftvctl probe's JSON
verdicts()
{
	"$PYTHON" -c '
import json, sys
r = json.loads(sys.argv[1])
print(",".join(v["name"] for v in r["verdicts"]) or "none")' "$1" 2>/dev/null
}

# ---- a clean path: ftvctl probe finds nothing
out=$(ftvctl_probe)
ktap_diag "clean: $out"
ktap_eq "clean: ftvctl probe answered, no verdict" "True none" \
	"$("$PYTHON" -S -c 'import json, sys; print(json.loads(sys.argv[1])["answered"])' "$out" 2>/dev/null) $(verdicts "$out")"
ktap_eq "clean: within 30 s and 5 MB" 1 \
	"$("$PYTHON" -S -c 'import json, sys; r = json.loads(sys.argv[1]); print(int(r["seconds"] <= 30 and r["bytes"] < 5000000))' "$out" 2>/dev/null)"

# ---- each connection policed (1 Mbit/s by nft's count)
paths_police "125 kbytes/second" "16 kbytes" to-client ||
	ktap_bail "cannot set up R's policer"
out=$(ftvctl_probe)
ktap_diag "policed: $out"
ktap_diag "R's policer dropped $(nft_packets "$R" "ip censor") segments"
# policing FIELD : FIELD of ftvctl probe's policing measurement
policing()
{
	"$PYTHON" -c '
import json, sys
p = json.loads(sys.argv[1])["measurements"]["policing"]
print(eval(sys.argv[2]))' "$out" "$1" 2>/dev/null
}
ktap_eq "policed: one connection brought less than half its pad" True \
	"$(policing 'p["one"]["came"] * 2 < p["one"]["granted"]')"
ktap_eq "policed: four brought at least 2.5 times what one did" True \
	"$(policing 'p["all"]["came"] * 2 >= p["one"]["came"] * 5')"
ktap_eq "policed: each of the other three brought what one did alone, within a third" True \
	"$(policing 'all(3 * c["came"] >= 2 * p["one"]["came"] and 3 * c["came"] <= 4 * p["one"]["came"] for c in p["all"]["connections"] if c["index"] != 0)')"
ktap_eq "policed: ftvctl probe says per-connection policer, recommends flows 4" \
	"per-connection policer flows 4" \
	"$(verdicts "$out") $("$PYTHON" -S -c 'import json, sys; print(json.loads(sys.argv[1])["recommended"])' "$out" 2>/dev/null)"
nsx "$R" nft delete table ip censor

nsx "$C" "$FTVCTL" peer del ftv0 "$S_KEY"
nsx "$S" "$FTVCTL" peer del ftv0 "$C_KEY"
ip -n "$C" link del ftv0
ip -n "$S" link del ftv0
objects_balanced "$kmark" 30
ktap_eq "no kernel report of a write into freed memory" "" "$(freed_memory_reports "$kmark")"

ktap_finish
