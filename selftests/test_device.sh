#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ftv net_device: creation, its link attributes, deletion, moving
# between namespaces, namespace teardown and module unload.
#
#   ns A                           ns B
#   +--------------+  link set    +--------------+
#   | ftv0 (type   |  netns B     | ftv0 (moved) |
#   |  ftv, no L2) | -----------> |              |
#   +--------------+              +--------------+
#
# No traffic flows. The module's pr_debug "created"/"destroyed" lines (it
# is loaded with dyndbg=+p) are counted to show that every device and peer
# made here is freed again.

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # SC2317: helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

ktap_plan 19
ftv_require_module

# Module parameters are test hooks of the debug build only: a normal
# build exposes no knob that changes how sessions behave.
writable=$(find /sys/module/ftv/parameters -type f -perm /222 2>/dev/null)
ktap_eq "the module has no writable parameters" "" "$writable"

mark=$(kmsg_mark)

# link_json NS DEV PYEXPR : PYEXPR over l, the device in `ip -j -d link show`
link_json()
{
	nsx "$1" ip -j -d link show dev "$2" |
		"$PYTHON" -c '
import json, sys
l = json.load(sys.stdin)[0]
print(eval(sys.argv[1]))
' "$3"
}

# count_log KIND WHAT : pr_debug lines since the start, e.g. device created
count_log()
{
	dmesg_since "$mark" | grep -ciE "ftv.*$1.*$2"
}

balanced()
{
	local kind
	for kind in device peer; do
		[ "$(count_log "$kind" created)" -eq "$(count_log "$kind" destroyed)" ] ||
			return 1
	done
}

show_counts()
{
	local kind
	for kind in device peer; do
		ktap_diag "$kind: $(count_log "$kind" created) created," \
			"$(count_log "$kind" destroyed) destroyed"
	done
}

ns_create A B || ktap_bail "cannot create namespaces"

ktap_check "ip link add ftv0 type ftv" \
	nsx "$A" ip link add name ftv0 type ftv ||
	ktap_bail "cannot create an ftv device"

ktap_eq "link kind is ftv" ftv "$(link_json "$A" ftv0 'l["linkinfo"]["info_kind"]')"

flags=" $(link_json "$A" ftv0 '" ".join(l["flags"])') "
if [[ "$flags" == *" POINTOPOINT "* && "$flags" == *" NOARP "* ]]; then
	ktap_ok "flags include POINTOPOINT and NOARP"
else
	ktap_fail "flags include POINTOPOINT and NOARP"
	ktap_diag "flags:$flags"
fi

ktap_eq "link/none (no link-layer header or address)" none \
	"$(link_json "$A" ftv0 'l["link_type"]')"

# 1500 - 40 (IPv6) - 32 (TCP with timestamps) - 8 (counter) - 16 (tag)
ktap_eq "default MTU is 1400" 1400 "$(link_json "$A" ftv0 'l["mtu"]')"

ktap_check "device goes up" nsx "$A" ip link set ftv0 up
# A peer, added over raw netlink so this test does not need ftvctl, to
# check that peers are freed with their device.
ktap_check "a peer can be added" \
	ftvnl_in "$A" new_peer ifname=ftv0 'peer{' public_key=rand:32 '}'

ktap_check "ip link del ftv0" nsx "$A" ip link del ftv0
ktap_check_fails "deleted device is gone" nsx "$A" ip link show dev ftv0

nsx "$A" ip link add name ftv0 type ftv
ftvnl_in "$A" new_peer ifname=ftv0 'peer{' public_key=rand:32 '}' >/dev/null
ktap_check "ip link set ftv0 netns B" nsx "$A" ip link set ftv0 netns "$B"
ktap_check "moved device shows up in B" nsx "$B" ip link show dev ftv0
ktap_check_fails "moved device is gone from A" nsx "$A" ip link show dev ftv0

# Deleting B deletes the device in it; namespaces are torn down
# asynchronously, so wait for the destroyed messages.
ip netns del "$B"
if wait_for 30 balanced; then
	ktap_ok "deleting namespace B destroys the device and its peer"
else
	ktap_fail "deleting namespace B destroys the device and its peer"
	show_counts
fi

# The creating namespace goes away while the device lives on in another
# one: the device must survive or be destroyed cleanly, and B must stay
# usable either way.
ns_create C D || ktap_bail "cannot create namespaces"
nsx "$C" ip link add name ftv0 type ftv
nsx "$C" ip link set ftv0 netns "$D"
ip netns del "$C"
ktap_check "after its creating namespace is deleted the device can be deleted" \
	bash -c "! ip -n '$D' link show dev ftv0 >/dev/null 2>&1 || ip -n '$D' link del ftv0"
ip netns del "$D"
if wait_for 30 balanced; then
	ktap_ok "every device and peer created was destroyed"
else
	ktap_fail "every device and peer created was destroyed"
	show_counts
fi
if [ "$(count_log device created)" -gt 0 ]; then
	ktap_ok "pr_debug messages are visible (dyndbg=+p)"
else
	ktap_fail "pr_debug messages are visible (dyndbg=+p)"
	ktap_diag "no 'device created' lines in dmesg since $mark"
fi

# Unloading the module takes its devices with it.
ns_create E || ktap_bail "cannot create namespaces"
nsx "$E" ip link add name ftv0 type ftv
nsx "$E" ip link add name ftv1 type ftv
if ftv_unload_module && ! nsx "$E" ip link show dev ftv0 >/dev/null 2>&1; then
	ktap_ok "rmmod with devices present removes them"
else
	ktap_fail "rmmod with devices present removes them"
fi
ktap_check "module loads again" ftv_load_module

ktap_finish
