/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels ftv supports (6.1 to 7.3; Debian's 6.1,
 * 6.12, 7.2 and 7.3 are built and tested), named by feature. This is the
 * only file allowed to look at LINUX_VERSION_CODE; everything else uses
 * the names below, or the kernel's newest names, which this file provides
 * where an older kernel lacks them.
 *
 * Each entry says in which release the interface changed. Those releases
 * ftv is not built against (6.13 to 7.1) rest on that record, not on a
 * build.
 */

#ifndef _FTV_COMPAT_H
#define _FTV_COMPAT_H

/* Every message the module prints names it. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/version.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/timer.h>
#include <crypto/sha2.h>
#include <net/genetlink.h>
#include <net/ipv6.h>
#include <net/rtnetlink.h>

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

/* 6.16 renamed from_timer() to timer_container_of() (and 6.17 removed
 * the old name); the tree uses the new one.
 */
#ifndef timer_container_of
#define timer_container_of(var, callback_timer, timer_fieldname) \
	from_timer(var, callback_timer, timer_fieldname)
#endif

/* 6.17 added WQ_PERCPU, the default a workqueue without WQ_UNBOUND had
 * always had; later kernels (7.3 does) warn at alloc_workqueue() about
 * one that names neither. It is an enum, so the version says whether it
 * is there (some 6.12 stable kernels have it too, and do not warn).
 */
#if KERNEL_VERSION(6, 17, 0) <= LINUX_VERSION_CODE
#define FTV_WQ_PERCPU WQ_PERCPU
#else
#define FTV_WQ_PERCPU 0
#endif

/* 6.17 named the per-CPU system workqueue system_percpu_wq; later
 * kernels (7.3 does) log each work queued on system_wq as deprecated.
 * The tree uses the new name.
 */
#if KERNEL_VERSION(6, 17, 0) > LINUX_VERSION_CODE
#define system_percpu_wq system_wq
#endif

/* 6.15 packed rtnl_link_ops::newlink()'s arguments into a struct. */
#if KERNEL_VERSION(6, 15, 0) > LINUX_VERSION_CODE
#define COMPAT_NEWLINK_TAKES_ATTRS
#endif

/*
 * FTV_COMPAT_NEWLINK(name, fn) defines name, an rtnl_link_ops::newlink()
 * for this kernel, which calls
 *	int fn(struct net *src_net, struct net_device *dev,
 *	       struct netlink_ext_ack *extack)
 * with the namespace of the socket that asked for the link.
 */
#ifdef COMPAT_NEWLINK_TAKES_ATTRS
#define FTV_COMPAT_NEWLINK(name, fn)					\
static int name(struct net *src_net, struct net_device *dev,		\
		struct nlattr *tb[], struct nlattr *data[],		\
		struct netlink_ext_ack *extack)				\
{									\
	return fn(src_net, dev, extack);				\
}
#else
#define FTV_COMPAT_NEWLINK(name, fn)					\
static int name(struct net_device *dev,					\
		struct rtnl_newlink_params *params,			\
		struct netlink_ext_ack *extack)				\
{									\
	return fn(params->src_net, dev, extack);			\
}
#endif

/* 6.17 gave the SHA-256 library a context type of its own. */
#if KERNEL_VERSION(6, 17, 0) > LINUX_VERSION_CODE
#define COMPAT_SHA256_STATE
#endif

/* struct ftv_compat_sha256: what sha256_init/update/final() take. */
#ifdef COMPAT_SHA256_STATE
#define ftv_compat_sha256 sha256_state
#else
#define ftv_compat_sha256 sha256_ctx
#endif

/* 6.19 made kernel_bind() take a struct sockaddr_unsized. */
#if KERNEL_VERSION(6, 19, 0) > LINUX_VERSION_CODE
#define COMPAT_BIND_TAKES_SOCKADDR
#endif

static inline int ftv_compat_kernel_bind(struct socket *sock, void *addr,
					 int addrlen)
{
#ifdef COMPAT_BIND_TAKES_SOCKADDR
	return kernel_bind(sock, (struct sockaddr *)addr, addrlen);
#else
	return kernel_bind(sock, (struct sockaddr_unsized *)addr, addrlen);
#endif
}

/*
 * 6.19 stopped IPv6 GRO (BIG TCP) from putting a hop-by-hop jumbo header
 * in front of the TCP header of a merged packet past 64 KiB, and dropped
 * struct hop_jumbo_hdr. FTV_COMPAT_HOP_JUMBO says whether this kernel's
 * GRO makes one; where it does not, the struct (RFC 2675's layout) is
 * defined here and no received packet is taken to carry one.
 */
#if KERNEL_VERSION(6, 19, 0) > LINUX_VERSION_CODE
#define FTV_COMPAT_HOP_JUMBO true
#else
#define FTV_COMPAT_HOP_JUMBO false

struct hop_jumbo_hdr {
	u8 nexthdr;
	u8 hdrlen;
	u8 tlv_type;
	u8 tlv_len;
	__be32 jumbo_payload_len;
};

static inline bool ipv6_has_hopopt_jumbo(const struct sk_buff *skb)
{
	return false;
}
#endif

/*
 * 7.x made IPv6 part of every kernel and dropped ipv6_stub, the table
 * through which code outside the IPv6 module called into it. Told by the
 * header itself: which release dropped it is not on record here.
 * (Debian's sparse 0.6.4 knows no __has_include; it checks the
 * direct call, which every kernel declares.)
 */
#if defined(__has_include)
#if __has_include("net/ipv6_stubs.h")
#include <net/ipv6_stubs.h>
#define COMPAT_IPV6_STUB
#endif
#endif

static inline struct dst_entry *
ftv_compat_ip6_dst_lookup_flow(struct net *net, struct flowi6 *fl6)
{
#ifdef COMPAT_IPV6_STUB
	return ipv6_stub->ipv6_dst_lookup_flow(net, NULL, fl6, NULL);
#else
	return ip6_dst_lookup_flow(net, NULL, fl6, NULL);
#endif
}

#endif /* _FTV_COMPAT_H */
