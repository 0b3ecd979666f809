#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_nat.sh with the outer connection over IPv6 through the same strict
# router (R masquerades IPv6 too, and drops what conntrack finds invalid;
# so do C and S): C dials [2001:db8:100::2]:51820 and 10 MB go each way.
# test_nat.sh's idle time (NAT_IDLE, 30 s) is left out here: what keeps
# the mapping is C's keepalive timer, which is the same whatever the
# outer family.
# run.sh: shares the VM

NAT_MB=10 NAT_IDLE=0 UNDERLAY=6 exec bash "$(dirname "$0")/test_nat.sh"
