#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A path that reorders but loses nothing: 10 +- 3 ms of jitter on each of
# the router's cables (netem reorders under jitter, as Wi-Fi, link
# aggregation and multipath links do), every offload at its default.
# A transfer each way arrives intact, and FEC's loss estimate on each end
# takes the reordering for what it is: the estimate stays under 1 % and
# fewer than 2 % of the segments each end sent were repairs. Until
# 2026-12-02 each loss interval counted the messages still on their way
# as lost and the next one could not take them back: the estimate reached
# 25 % on this path, and each end sent as many repairs as data (16:16),
# which halved what the inner TCP carried.
#
#   ns C (initiator)        ns R (router)                  ns S (responder)
#   +------------------+   +---------------------------+   +------------------+
#   | ftv0 10.9.0.1    |   | netem delay 10ms 3ms on   |   | ftv0 10.9.0.2    |
#   | veth0            |---| vethc and on veths        |---| veth0 :51820     |
#   +------------------+   +---------------------------+   +------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

SIZE_MB=8
JITTER="delay 10ms 3ms"

for tool in nc tc; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 6
ftv_require

paths_topology || ktap_bail "cannot set up the namespaces"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
pub_c=$(pubkey_of c)
pub_s=$(pubkey_of s)
for dev in vethc veths; do
	# shellcheck disable=SC2086 # the netem options are words
	netem "$R" "$dev" $JITTER || ktap_bail "cannot set up netem on $dev"
done
ktap_diag "netem on both of R's cables: $JITTER"
connect_ping "$C" 10.9.0.2 || ktap_bail "the tunnel does not come up"
random_file data "$SIZE_MB"

ktap_check "$SIZE_MB MB from C to S arrive intact" \
	transfer "$C" "$S" 10.9.0.2 5001 "$FTV_TMP/data" 120
ktap_check "$SIZE_MB MB from S to C arrive intact" \
	transfer "$S" "$C" 10.9.0.1 5002 "$FTV_TMP/data" 120

# Each transfer is about this many data segments; a fiftieth of it in
# repairs is already more than a clean path warrants.
most_repairs=$((SIZE_MB * 1048576 / 1400 / 50))

# judged NS PUB NAME : NS's loss estimate of the peer PUB, and the repairs
# it sent, within the bounds
judged()
{
	local ppm sent

	ppm=$(ftv_peer_json "$1" ftv0 "$2" 'p["fec_stats"]["loss_ppm"]')
	sent=$(ftv_peer_json "$1" ftv0 "$2" 'p["fec_stats"]["repair_sent"]')
	ktap_diag "$3: loss estimate $ppm ppm, $sent repairs sent"
	if [ "${ppm:-1000000}" -lt 10000 ]; then
		ktap_ok "$3 does not take reordering for loss (estimate under 1 %)"
	else
		ktap_fail "$3 does not take reordering for loss (estimate under 1 %)"
	fi
	if [ "${sent:-1000000}" -lt "$most_repairs" ]; then
		ktap_ok "$3 sent fewer than $most_repairs repairs"
	else
		ktap_fail "$3 sent fewer than $most_repairs repairs"
		nsx "$1" "$FTVCTL" show ftv0 2>&1 | ktap_diag
	fi
}

judged "$C" "$pub_s" C
judged "$S" "$pub_c" S

ktap_finish
