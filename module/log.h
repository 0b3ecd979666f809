/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _FTV_LOG_H
#define _FTV_LOG_H

#include <linux/netdevice.h>
#include <net/net_namespace.h>

/*
 * The kernel log's lines about a device give its name and the network
 * namespace it is in, as the inode number that /proc/PID/ns/net shows
 * ("net:[4026531840]"): every namespace may have an ftv0, and selftests
 * that run side by side tell theirs apart by it (selftests/lib.sh,
 * dmesg_since). A device moved to another namespace is named by the new
 * one from then on.
 */
#define ftv_dev_dbg(dev, fmt, ...)					\
	do {								\
		const struct net_device *__dev = (dev);			\
									\
		pr_debug("%s net:[%u]: " fmt, __dev->name,		\
			 dev_net(__dev)->ns.inum, ##__VA_ARGS__);	\
	} while (0)
#define ftv_dev_dbg_ratelimited(dev, fmt, ...)				\
	do {								\
		const struct net_device *__dev = (dev);			\
									\
		net_dbg_ratelimited("%s net:[%u]: " fmt, __dev->name,	\
				    dev_net(__dev)->ns.inum,		\
				    ##__VA_ARGS__);			\
	} while (0)

#endif /* _FTV_LOG_H */
