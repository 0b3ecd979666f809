#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_transfer6.sh with IPv6 inside and IPv4 outside: A dials
# 10.0.0.2:51820 and 10 MB go to fd09::2. Same topology, see
# test_transfer6.sh.
# run.sh: shares the VM

UNDERLAY=4 INNER=6 exec bash "$(dirname "$0")/test_transfer6.sh"
