#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_icmp.sh with the outer connection over IPv6: ICMPv6 "packet too
# big", forged and genuine, and the fwmark's route. Same topology, see
# test_icmp.sh.
# run.sh: shares the VM

UNDERLAY=6 exec bash "$(dirname "$0")/test_icmp.sh"
