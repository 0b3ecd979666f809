#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_ping.sh with the outer connection over IPv6: A's peer endpoint is
# [fd00::2]:51820. Same topology, see test_ping.sh.
# run.sh: shares the VM

UNDERLAY=6 exec bash "$(dirname "$0")/test_ping.sh"
