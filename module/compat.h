/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels ftv supports (Debian's 6.1 and 6.12),
 * named by feature. This is the only file allowed to look at
 * LINUX_VERSION_CODE; everything else uses the names below.
 */

#ifndef _FTV_COMPAT_H
#define _FTV_COMPAT_H

/* Every message the module prints names it. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/version.h>
#include <linux/netdevice.h>
#include <net/genetlink.h>

/* 6.5 moved skb_gso_segment() and friends to a header of their own. */
#if KERNEL_VERSION(6, 5, 0) <= LINUX_VERSION_CODE
#include <net/gso.h>
#endif

#if KERNEL_VERSION(6, 1, 0) > LINUX_VERSION_CODE
#error "ftv needs Linux 6.1 or newer"
#endif

/* 6.10 turned NETIF_F_LLTX into the dev->lltx bit. */
#if KERNEL_VERSION(6, 10, 0) > LINUX_VERSION_CODE
#define COMPAT_LLTX_IS_A_FEATURE
#endif

static inline void ftv_compat_set_lltx(struct net_device *dev)
{
#ifdef COMPAT_LLTX_IS_A_FEATURE
	dev->features |= NETIF_F_LLTX;
#else
	dev->lltx = true;
#endif
}

/* 6.6 moved the parsed dump attributes into genl_dumpit_info::info. */
#if KERNEL_VERSION(6, 6, 0) > LINUX_VERSION_CODE
#define COMPAT_DUMPIT_INFO_HAS_NO_INFO
#endif

static inline struct nlattr **ftv_compat_dump_attrs(struct netlink_callback *cb)
{
#ifdef COMPAT_DUMPIT_INFO_HAS_NO_INFO
	return genl_dumpit_info(cb)->attrs;
#else
	return genl_info_dump(cb)->attrs;
#endif
}

/* 6.9 moved netdev_max_backlog into net_hotdata. */
#if KERNEL_VERSION(6, 9, 0) > LINUX_VERSION_CODE
#define COMPAT_MAX_BACKLOG_IS_A_GLOBAL
#else
#include <net/hotdata.h>
#endif

/* net.core.netdev_max_backlog: what one CPU's backlog holds. */
static inline unsigned int ftv_compat_max_backlog(void)
{
#ifdef COMPAT_MAX_BACKLOG_IS_A_GLOBAL
	return READ_ONCE(netdev_max_backlog);
#else
	return READ_ONCE(net_hotdata.max_backlog);
#endif
}

#endif /* _FTV_COMPAT_H */
