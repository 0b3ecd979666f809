#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_mtu.sh with the outer connection over IPv6: C dials S at
# [2001:db8:100::2]:51820, so 1400 bytes inside make 1496 outside.
# Same topology, see test_mtu.sh.
# run.sh: shares the VM

UNDERLAY=6 exec bash "$(dirname "$0")/test_mtu.sh"
