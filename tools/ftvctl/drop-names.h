/* SPDX-License-Identifier: GPL-2.0 */
/* Generated from docs/netlink/ftv.yaml by gen-drop-names.py: do not edit. */

#ifndef FTVCTL_DROP_NAMES_H
#define FTVCTL_DROP_NAMES_H

#include <stdbool.h>

#include <linux/ftv.h>

/* The names users see, in text and JSON alike; NULL for no reason. */
static const char *const drop_names[FTV_DROPS_A_MAX + 1] = {
	[FTV_DROPS_A_BAD_AUTH] = "bad_auth",
	[FTV_DROPS_A_REPLAY] = "replay",
	[FTV_DROPS_A_MALFORMED] = "malformed",
	[FTV_DROPS_A_NO_SESSION] = "no_session",
	[FTV_DROPS_A_NOT_ALLOWED] = "not_allowed",
	[FTV_DROPS_A_RATELIMITED] = "ratelimited",
	[FTV_DROPS_A_ICMP_IGNORED] = "icmp_ignored",
	[FTV_DROPS_A_SYN_REFUSED] = "syn_refused",
	[FTV_DROPS_A_BACKLOG] = "backlog",
	[FTV_DROPS_A_OUT_OF_WINDOW] = "out_of_window",
	[FTV_DROPS_A_JOIN_REPLAYED] = "join_replayed",
	[FTV_DROPS_A_FLOWS_REFUSED] = "flows_refused",
	[FTV_DROPS_A_RST] = "rst",
	[FTV_DROPS_A_FIN] = "fin",
	[FTV_DROPS_A_PROBE_LIMITED] = "probe_limited",
};

/* Reasons only a device counts: no peer is to blame. */
static const bool drop_device_only[FTV_DROPS_A_MAX + 1] = {
	[FTV_DROPS_A_ICMP_IGNORED] = true,
	[FTV_DROPS_A_SYN_REFUSED] = true,
	[FTV_DROPS_A_JOIN_REPLAYED] = true,
};

#endif /* FTVCTL_DROP_NAMES_H */
