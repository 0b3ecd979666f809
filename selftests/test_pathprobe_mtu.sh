#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ftvctl probe's path MTU step (docs/design-probe.md, section 3): echoes
# padded to the device's MTU and, when those are lost twice, a binary
# search for the longest that comes; then the outer route's MTU, which
# only an ICMP error that quotes one of ftv's segments lowers.
#  - on a clean path an echo of the device's MTU comes: no verdict;
#  - with a 1280-byte link between R and S and R's ICMP errors dropped,
#    it says "path MTU black hole" and recommends the device MTU that
#    fits (1280 less an echo's 76 bytes of outer headers, counter and
#    tag, to within the search's 4 bytes), each run within 30 s and 5 MB;
#  - --apply sets that MTU, and a ping of the full MTU with DF set then
#    crosses the tunnel both ways;
#  - with R's ICMP errors let through, C's route learns 1280 and it says
#    "path MTU below the device's" instead.
#
#   ns C (initiator)            ns R (router)                  ns S (responder)
#   ftv0 10.9.0.1  ---  netem 10 ms each way; veths  ---  veth0  ftv0 10.9.0.2
#                       mtu 1280; ICMP errors dropped           mtu 1280
#                       (first part)

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

ktap_plan 11
ftv_require
command -v nft >/dev/null || ktap_skip_all "nft is not installed"

paths_censor 10ms || ktap_bail "cannot set up the namespaces and R"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"

mtu_of() { ip -n "$1" -o link show dev "$2" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'; }
DEVICE_MTU=$(mtu_of "$C" ftv0)

# ftvctl_probe [OPTION] : ftvctl probe --json on C for S
ftvctl_probe() { nsx "$C" "$FTVCTL" probe ftv0 "$S_KEY" --json "$@"; }
# probe_field EXPR : EXPR over ftvctl probe's JSON r (m: its MTU part)
probe_field()
{
	"$PYTHON" -c '
import json, sys
r = json.loads(sys.argv[1])
m = r["measurements"]["mtu"]
print(eval(sys.argv[2]))' "$out" "$1" 2>/dev/null
}
verdicts() { probe_field '",".join(v["name"] for v in r["verdicts"]) or "none"'; }
# within_limits WHAT : the run took at most 30 s and under 5 MB
within_limits()
{
	ktap_eq "$1: within 30 s and 5 MB" True \
		"$(probe_field 'r["seconds"] <= 30 and r["bytes"] < 5000000')"
}

# ---- a clean path
out=$(ftvctl_probe)
ktap_diag "clean: $out"
ktap_eq "clean: an echo of the device's MTU came; no verdict" \
	"$DEVICE_MTU $DEVICE_MTU none" \
	"$(probe_field 'm["device"], m["fits"]' | tr -d '(),') $(verdicts)"
within_limits "clean"

# ---- a 1280-byte link between R and S, R's ICMP errors dropped
{ ip -n "$R" link set veths mtu 1280 && ip -n "$S" link set veth0 mtu 1280; } ||
	ktap_bail "cannot set the 1280-byte link"
nsx "$R" nft -f - <<'NFT' || ktap_bail "cannot drop R's ICMP errors"
table ip nopmtu {
	chain out {
		type filter hook output priority filter; policy accept;
		icmp type destination-unreachable counter drop
	}
}
NFT
# small_path WHAT SAYS EXPECTED : a probe of the 1280-byte path: its
# verdict, whether ICMP came and C's route MTU are EXPECTED (the case says
# SAYS), and it recommends 1280 less an echo's 76 bytes of outer headers,
# counter and tag; three cases
small_path()
{
	out=$(ftvctl_probe)
	ktap_diag "$1: $out"
	ktap_eq "$1: $2" "$3" \
		"$(verdicts) $(probe_field 'm["icmp"], m["route_mtu"]' | tr -d '(),')"
	rec=$(probe_field 'r["recommended_mtu"]')
	ktap_eq "$1: recommends an MTU of 1200 to 1204 (1280 less 76)" True \
		"$([ "${rec:-0}" -ge 1200 ] && [ "${rec:-0}" -le 1204 ] && echo True)"
	within_limits "$1"
}

# Full-size packets die at R now: the tunnel's own traffic sees the hole.
small_path "black hole" \
	"path MTU black hole, no ICMP came, C's route still 1500" \
	"path MTU black hole False 1500"
ktap_diag "R dropped $(nft_packets "$R" "ip nopmtu") ICMP errors"

# ---- --apply sets it, and full-size packets cross
out=$(ftvctl_probe --apply 2>"$FTV_TMP/apply.err")
ktap_diag "$(cat "$FTV_TMP/apply.err")"
rec=$(probe_field 'r["recommended_mtu"]')
ktap_eq "--apply: C's ftv0 has the recommended MTU" "${rec:-none}" \
	"$(mtu_of "$C" ftv0)"
ip -n "$S" link set ftv0 mtu "${rec:-1200}"
ktap_check "--apply: a ping of $((${rec:-1200} - 28)) bytes with DF set crosses both ways" \
	nsx "$C" ping -q -c 3 -W 2 -M "do" -s "$((${rec:-1200} - 28))" 10.9.0.2
out=$(ftvctl_probe)
ktap_eq "--apply: probed again, no verdict" none "$(verdicts)"

# ---- R's ICMP errors let through
nsx "$R" nft delete table ip nopmtu
ip -n "$C" link set ftv0 mtu "$DEVICE_MTU"
ip -n "$S" link set ftv0 mtu "$DEVICE_MTU"
small_path "ICMP let through" \
	"path MTU below the device's, C's route learnt 1280" \
	"path MTU below the device's True 1280"

ktap_finish
