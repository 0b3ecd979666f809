// SPDX-License-Identifier: GPL-2.0
/*
 * Sending: inner packets are sealed in place, on whichever CPU's worker
 * takes them (queue.c), and wrapped, in order, in a TCP header and an IPv4
 * or IPv6 header that the module builds itself. The sealed segments of one
 * inner GSO superpacket leave as one outer superpacket where the device
 * cuts them itself. Segments leave through ip_local_out() in the namespace
 * the device was created in, so the host's routing, netfilter and qdiscs
 * apply to them as to any locally generated packet.
 */

#include "send.h"
#include "log.h"
#include "conn.h"
#include "crypto.h"
#include "device.h"
#include "faketcp.h"
#include "fec.h"
#include "fec_code.h"
#include "flow.h"
#include "peer.h"
#include "shape.h"
#include "timers.h"

#include <linux/ip.h>
#include <linux/moduleparam.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/icmp.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/tcp.h>

/* Whether the source @fl4 names is no longer the one its route takes. */
static bool source_moved4(struct net *net, const struct flowi4 *fl4)
{
	struct flowi4 now = *fl4;
	struct rtable *rt;

	now.saddr = 0;
	rt = ip_route_output_key(net, &now);
	if (IS_ERR(rt))
		return false;
	ip_rt_put(rt);
	return now.saddr != fl4->saddr;
}

/* The same for IPv6, where a route does not check its source: gone from
 * the host, or not the one source address selection prefers now.
 */
static bool source_moved6(struct net *net, const struct flowi6 *fl6)
{
	struct flowi6 now = *fl6;
	struct dst_entry *dst;

	if (!ipv6_chk_addr(net, &fl6->saddr, NULL, 0))
		return true;
	now.saddr = in6addr_any;
	dst = ftv_compat_ip6_dst_lookup_flow(net, &now);
	if (IS_ERR(dst))
		return false;
	dst_release(dst);
	return !ipv6_addr_equal(&now.saddr, &fl6->saddr);
}

/*
 * Route lookups for outer segments, with the fwmark and ports of the tuple
 * so that policy routing sees them as it would see a real connection. A
 * connection passes its dst_cache; while the cached route holds, the
 * lookup costs a per-CPU read.
 *
 * A tuple keeps the local address it was opened from, while the host's
 * addresses and routes may change under it: the address removed (a new
 * DHCP lease, a move from Wi-Fi to LTE), or a better route come up that
 * leaves from another address. Any such change invalidates the cached
 * route, so on a miss, when @moved is given (the side that dials), the
 * lookup also asks which source the route would take now; if the tuple's
 * address is gone or is not that one, *@moved is set, and the caller
 * dials anew from there.
 */
static struct dst_entry *route4(struct ftv_device *fdev, struct net *net,
				struct ftv_tuple *tuple,
				struct dst_cache *cache, bool *moved)
{
	struct flowi4 fl4 = {
		.daddr = tuple->remote.s6_addr32[0],
		.saddr = tuple->local.s6_addr32[0],
		.flowi4_mark = READ_ONCE(fdev->fwmark),
		.flowi4_proto = IPPROTO_TCP,
		.fl4_sport = tuple->local_port,
		.fl4_dport = tuple->remote_port,
	};
	struct rtable *rt;
	__be32 saddr;

	if (cache) {
		rt = dst_cache_get_ip4(cache, &saddr);
		if (rt && saddr == fl4.saddr)
			return &rt->dst;
		if (rt)
			ip_rt_put(rt);
	}
	if (moved && fl4.saddr)
		*moved = source_moved4(net, &fl4);
	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt))
		return ERR_CAST(rt);
	if (unlikely(rt->dst.dev == fdev->dev)) {
		/* The outer route leads back into the tunnel. */
		ip_rt_put(rt);
		return ERR_PTR(-ELOOP);
	}
	tuple->local.s6_addr32[0] = fl4.saddr;
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, fl4.saddr);
	return &rt->dst;
}

static struct dst_entry *route6(struct ftv_device *fdev, struct net *net,
				struct ftv_tuple *tuple,
				struct dst_cache *cache, bool *moved)
{
	struct flowi6 fl6 = {
		.daddr = tuple->remote,
		.saddr = tuple->local,
		.flowi6_mark = READ_ONCE(fdev->fwmark),
		.flowi6_proto = IPPROTO_TCP,
		.fl6_sport = tuple->local_port,
		.fl6_dport = tuple->remote_port,
	};
	struct dst_entry *dst;
	struct in6_addr saddr;

	if (!ipv6_mod_enabled())
		return ERR_PTR(-EAFNOSUPPORT);
	if (cache) {
		dst = dst_cache_get_ip6(cache, &saddr);
		if (dst && ipv6_addr_equal(&saddr, &fl6.saddr))
			return dst;
		dst_release(dst);
	}
	if (moved && !ipv6_addr_any(&fl6.saddr))
		*moved = source_moved6(net, &fl6);
	dst = ftv_compat_ip6_dst_lookup_flow(net, &fl6);
	if (IS_ERR(dst))
		return dst;
	if (unlikely(dst->dev == fdev->dev)) {
		dst_release(dst);
		return ERR_PTR(-ELOOP);
	}
	tuple->local = fl6.saddr;
	if (cache)
		dst_cache_set_ip6(cache, dst, &fl6.saddr);
	return dst;
}

static struct dst_entry *route(struct ftv_device *fdev, struct net *net,
			       struct ftv_tuple *tuple,
			       struct dst_cache *cache, bool *moved)
{
	if (!net)
		return ERR_PTR(-ENETDOWN);
	if (tuple->family == AF_INET)
		return route4(fdev, net, tuple, cache, moved);
	return route6(fdev, net, tuple, cache, moved);
}

/**
 * ftv_send_route - the outer route of @tuple, as the segments take it
 * @fdev: the device
 * @net: its creating namespace (NULL: -ENETDOWN)
 * @tuple: the tuple; a local address of any is filled in
 * @cache: the connection's route cache, or NULL
 *
 * Return: the route, with a reference, or an ERR_PTR.
 */
struct dst_entry *ftv_send_route(struct ftv_device *fdev, struct net *net,
				 struct ftv_tuple *tuple,
				 struct dst_cache *cache)
{
	return route(fdev, net, tuple, cache, NULL);
}

/**
 * ftv_send_conn_route - the outer route of @conn's segments
 * @conn: the connection, under RCU
 * @tuple: a copy of its tuple
 *
 * Through the connection's route cache. On the side that dialled, a route
 * that no longer leaves from the tuple's address (see route4()) makes the
 * peer dial anew from where it does.
 *
 * Return: the route, with a reference, or an ERR_PTR.
 */
struct dst_entry *ftv_send_conn_route(struct ftv_conn *conn,
				      struct ftv_tuple *tuple)
{
	struct ftv_device *fdev = conn->device;
	bool moved = false, *ask = NULL;
	struct dst_entry *dst;

	/* Once the peer dials anew, no second lookup per segment. */
	if (conn->is_initiator && !READ_ONCE(conn->peer->path_dead))
		ask = &moved;
	dst = route(fdev, READ_ONCE(fdev->creating_net), tuple,
		    &conn->dst_cache, ask);
	if (unlikely(moved))
		ftv_timers_path_moved(conn->peer);
	return dst;
}

/**
 * ftv_send_pick_source - fill in the local address a new tuple will use
 * @fdev: the device
 * @net: its creating namespace, held by the caller
 * @tuple: remote address and port set, local address any
 *
 * Return: 0 or the routing error.
 */
int ftv_send_pick_source(struct ftv_device *fdev, struct net *net,
			 struct ftv_tuple *tuple)
{
	struct dst_entry *dst;

	dst = ftv_send_route(fdev, net, tuple, NULL);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	dst_release(dst);
	return 0;
}

static void untrack(struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
	nf_ct_set(skb, NULL, IP_CT_UNTRACKED);
#endif
}

static bool can_checksum(const struct net_device *dev, sa_family_t family)
{
	netdev_features_t mask = NETIF_F_HW_CSUM;

	mask |= family == AF_INET ? NETIF_F_IP_CSUM : NETIF_F_IPV6_CSUM;
	return dev->features & mask;
}

static __sum16 tcp_check(const struct ftv_tuple *tuple, unsigned int len,
			 __wsum base)
{
	if (tuple->family == AF_INET)
		return tcp_v4_check(len, tuple->local.s6_addr32[0],
				    tuple->remote.s6_addr32[0], base);
	return tcp_v6_check(len, &tuple->local, &tuple->remote, base);
}

/*
 * A device that checksums leaves us only the pseudo-header's sum to write.
 * For one that does not, we checksum the segment here rather than leave it
 * to skb_checksum_help(), which writes 0xffff where the checksum comes to
 * 0x0000. That is right for UDP, where zero means "none", but a TCP checksum
 * computed over the data is never 0xffff (RFC 1624, section 3), and
 * analysers on the path flag it: once in about 65536 segments.
 */
static void push_tcp(struct sk_buff *skb, const struct ftv_tuple *tuple,
		     const struct ftv_tcp_params *params,
		     const struct net_device *dev)
{
	unsigned int hlen = ftv_faketcp_hlen(params->flags);
	struct tcphdr *th;

	th = skb_push(skb, hlen);
	skb_reset_transport_header(skb);
	ftv_faketcp_write(th, tuple->local_port, tuple->remote_port, params);

	if (unlikely(!can_checksum(dev, tuple->family))) {
		skb->ip_summed = CHECKSUM_NONE;
		th->check = tcp_check(tuple, skb->len,
				      skb_checksum(skb, 0, skb->len, 0));
		return;
	}
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct tcphdr, check);
	th->check = ~tcp_check(tuple, skb->len, 0);
}

static void push_ipv4(struct sk_buff *skb, const struct ftv_tuple *tuple,
		      u16 id)
{
	struct iphdr *iph = skb_push(skb, sizeof(*iph));

	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = 0;
	iph->id = htons(id);
	iph->frag_off = htons(IP_DF);
	iph->ttl = ip4_dst_hoplimit(skb_dst(skb));
	iph->protocol = IPPROTO_TCP;
	iph->saddr = tuple->local.s6_addr32[0];
	iph->daddr = tuple->remote.s6_addr32[0];
	skb->protocol = htons(ETH_P_IP);
}

static void push_ipv6(struct sk_buff *skb, const struct ftv_tuple *tuple)
{
	struct ipv6hdr *ip6h = skb_push(skb, sizeof(*ip6h));

	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, 0, 0);
	ip6h->nexthdr = IPPROTO_TCP;
	ip6h->hop_limit = ip6_dst_hoplimit(skb_dst(skb));
	ip6h->saddr = tuple->local;
	ip6h->daddr = tuple->remote;
	skb->protocol = htons(ETH_P_IPV6);
}

/* What an MSS option leaves out of the MTU it stands for: the IP header
 * and a TCP header without options.
 */
static unsigned int mss_hlen(sa_family_t family)
{
	return (family == AF_INET ? sizeof(struct iphdr) :
		sizeof(struct ipv6hdr)) + sizeof(struct tcphdr);
}

/*
 * Wrap @skb's payload in TCP and IP headers for @tuple and send it along
 * @dst (or an error from looking it up). Consumes @skb and @dst.
 */
static int send_segment(struct ftv_device *fdev, const struct ftv_tuple *tuple,
			struct sk_buff *skb, struct dst_entry *dst,
			const struct ftv_tcp_params *params, u16 ip_id)
{
	struct net *net = READ_ONCE(fdev->creating_net);
	struct ftv_tcp_params syn;
	int ret;

	if (IS_ERR(dst) || unlikely(!net)) {
		ret = IS_ERR(dst) ? PTR_ERR(dst) : -ENETDOWN;
		if (!IS_ERR(dst))
			dst_release(dst);
		goto err;
	}
	skb_scrub_packet(skb, !net_eq(net, dev_net(fdev->dev)));
	memset(skb->cb, 0, sizeof(skb->cb));
	skb->mark = READ_ONCE(fdev->fwmark);
	skb->ignore_df = 0;
	/* The endpoint's conntrack only ever sees our side of the
	 * connection (we take the peer's segments before it), so it would
	 * call ours invalid: keep them out of it.
	 */
	untrack(skb);
	if (unlikely(params->flags & TCPHDR_SYN)) {
		/* As a host announces its MSS: what its route takes. */
		syn = *params;
		syn.mss = min_t(unsigned int, syn.mss,
				dst_mtu(dst) - mss_hlen(tuple->family));
		params = &syn;
	}
	push_tcp(skb, tuple, params, dst->dev);
	skb_dst_set(skb, dst);
	if (tuple->family == AF_INET) {
		push_ipv4(skb, tuple, ip_id);
		return ip_local_out(net, NULL, skb);
	}
	push_ipv6(skb, tuple);
	return ip6_local_out(net, NULL, skb);

err:
	ftv_dev_dbg_ratelimited(fdev->dev, "cannot send to %pI6c: %d\n",
				&tuple->remote, ret);
	DEV_STATS_INC(fdev->dev, tx_carrier_errors);
	kfree_skb(skb);
	return ret;
}

static int conn_route_and_send(struct ftv_conn *conn, struct sk_buff *skb,
			       struct dst_entry *dst,
			       const struct ftv_tcp_params *params)
{
	struct ftv_tuple tuple = conn->tuple;
	unsigned int segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;

	if (!dst)
		dst = ftv_send_conn_route(conn, &tuple);
	/* A superpacket's segments take the IDs after the first. */
	return send_segment(conn->device, &tuple, skb, dst, params,
			    atomic_add_return(segs, &conn->ip_id) - segs + 1);
}

static void conn_params(struct ftv_conn *conn, struct ftv_tcp_params *params,
			u8 flags, unsigned int payload_len)
{
	u32 rcv_nxt = ftv_faketcp_rcv_nxt(&conn->rcv);

	params->flags = flags;
	params->seq = atomic_add_return(payload_len, &conn->snd_nxt) -
		      payload_len;
	params->ack = rcv_nxt;
	params->window = FTV_TCP_WINDOW >> FTV_TCP_WSCALE;
	params->tsval = ftv_conn_tsval(conn);
	params->tsecr = atomic_read(&conn->ts_recent);
	params->mss = 0;
	atomic_set(&conn->acked, rcv_nxt);
	if (READ_ONCE(conn->owes))
		WRITE_ONCE(conn->owes, false);
}

/*
 * Segments of one connection leave in the order of their sequence numbers,
 * even when several CPUs send. Otherwise the peer may acknowledge a segment
 * that a middlebox (or a capture) on our side has not seen leave yet, and
 * conntrack calls such an ACK invalid ("ACK is over the upper bound"). The
 * lock covers numbering and handing over to the stack, not the sealing.
 * Finding it held by this very CPU means the segment went round a routing
 * loop through another device and came back here: it is dropped.
 */
static int conn_send(struct ftv_conn *conn, struct sk_buff *skb, u8 flags,
		     struct dst_entry *dst)
{
	struct ftv_tcp_params params;
	int cpu, ret;

	local_bh_disable();
	cpu = smp_processor_id();
	if (!spin_trylock(&conn->xmit_lock)) {
		if (unlikely(READ_ONCE(conn->xmit_cpu) == cpu)) {
			local_bh_enable();
			if (dst && !IS_ERR(dst))
				dst_release(dst);
			DEV_STATS_INC(conn->device->dev, tx_errors);
			kfree_skb(skb);
			return -ELOOP;
		}
		spin_lock(&conn->xmit_lock);
	}
	WRITE_ONCE(conn->xmit_cpu, cpu);
	conn_params(conn, &params, flags, skb->len);
	ret = conn_route_and_send(conn, skb, dst, &params);
	WRITE_ONCE(conn->xmit_cpu, -1);
	spin_unlock(&conn->xmit_lock);
	local_bh_enable();
	return ret;
}

static struct sk_buff *alloc_control(unsigned int payload_len)
{
	struct sk_buff *skb;

	skb = alloc_skb(FTV_SEND_HEADROOM + FTV_TCP_SYN_HLEN + payload_len,
			GFP_ATOMIC);
	if (likely(skb))
		skb_reserve(skb, FTV_SEND_HEADROOM + FTV_TCP_SYN_HLEN);
	return skb;
}

/* Make room to seal in place: headers in front, the tag behind. */
static int make_room(struct sk_buff *skb)
{
	unsigned int tail = skb_tailroom(skb);

	if (unlikely(skb_linearize(skb)))
		return -ENOMEM;
	if (tail < FTV_TAG_SIZE || skb_cloned(skb) ||
	    skb_headroom(skb) < FTV_SEND_HEADROOM)
		return pskb_expand_head(skb,
					max_t(int, 0, FTV_SEND_HEADROOM -
						      skb_headroom(skb)),
					max_t(int, 0, FTV_TAG_SIZE - tail),
					GFP_ATOMIC);
	return 0;
}

/*
 * The largest inner packet that fits the outer path, or 0: the route's
 * MTU, or less if the peer's MSS says so. The peer announces what its own
 * route takes, and a router with a smaller link behind it (PPPoE, a
 * tunnel) often lowers the option in SYNs and drops ICMP: honouring it
 * is how such a path costs no black hole.
 */
static unsigned int path_room(struct ftv_conn *conn, struct dst_entry *dst)
{
	unsigned int outer = conn->tuple.family == AF_INET ?
			     sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	unsigned int mtu = dst_mtu(dst), mss = READ_ONCE(conn->peer_mss);

	if (mss && mss + mss_hlen(conn->tuple.family) < mtu)
		mtu = mss + mss_hlen(conn->tuple.family);
	outer += FTV_TCP_HLEN + FTV_DATA_OVERHEAD;
	return mtu > outer ? mtu - outer : 0;
}

/*
 * Whether an inner packet (every segment of it, for a GSO superpacket)
 * fits the outer path once wrapped; if not, the sender is told the size
 * that fits, as a router would, so that a smaller path MTU than the
 * device's (a lower underlay MTU, or one learned from ICMP on the outer
 * path) costs no black hole.
 */
static bool fits_path(struct ftv_conn *conn, struct sk_buff *skb,
		      struct dst_entry *dst)
{
	unsigned int mtu = path_room(conn, dst);

	if (likely(skb_is_gso(skb) ? skb_gso_validate_network_len(skb, mtu) :
				     skb->len <= mtu))
		return true;
	/* As IP tunnels do: note the size on the inner route, which a sender
	 * on this host reads directly, then tell whoever sent it.
	 */
	skb_dst_update_pmtu_no_confirm(skb, mtu);
	if (skb->protocol == htons(ETH_P_IP)) {
		if (ip_hdr(skb)->frag_off & htons(IP_DF))
			icmp_ndo_send(skb, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED,
				      htonl(mtu));
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		icmpv6_ndo_send(skb, ICMPV6_PKT_TOOBIG, 0,
				max_t(u32, mtu, IPV6_MIN_MTU));
	}
	return false;
}

/*
 * Whether FEC may protect @skb: each segment of a superpacket, or a lone
 * packet, and a repair message as long as the longest, fit the path, and
 * the longest fits a FEC group. A lone packet shorter than
 * FTV_FEC_LONE_MIN is not worth it: that is a bare TCP acknowledgment,
 * whose loss the next one makes good.
 */
static bool fits_fec(struct ftv_conn *conn, struct sk_buff *skb,
		     struct dst_entry *dst)
{
	unsigned int room = path_room(conn, dst);

	room = room > FTV_FEC_REPAIR_HLEN ? room - FTV_FEC_REPAIR_HLEN : 0;
	room = min_t(unsigned int, room, FTV_FEC_MAX_LEN);
	if (!skb_is_gso(skb))
		return skb->len >= FTV_FEC_LONE_MIN && skb->len <= room;
	return skb_gso_validate_network_len(skb, room);
}

/* Ready @skb's plaintext for sealing in place: its inner checksum done
 * (we advertise checksum offload, so it is ours to finish), linear, with
 * room for the headers in front and the tag behind.
 */
static int prepare(struct sk_buff *skb)
{
	int ret;

	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		ret = skb_checksum_help(skb);
		if (unlikely(ret))
			return ret;
	}
	return make_room(skb);
}

/* Seal a prepared plaintext in place as message @counter. */
static int seal_prepared(struct ftv_conn *conn, struct sk_buff *skb,
			 u64 counter)
{
	struct ftv_session *s = conn->session;
	unsigned int plain_len = skb->len;
	struct ftv_msg_data *msg;
	int ret;

	if (unlikely(ftv_session_expired(s, counter)))
		return -EKEYEXPIRED;
	skb_put(skb, FTV_TAG_SIZE);
	/* The AEAD request is the CPU's own: no softirq may take it. */
	local_bh_disable();
	ret = ftv_crypto_seal(s->send_tfm, counter, skb->data, plain_len,
			      conn->join_index);
	local_bh_enable();
	if (unlikely(ret))
		return ret;
	msg = skb_push(skb, sizeof(*msg));
	msg->counter = cpu_to_le64(counter ^
				   ftv_crypto_counter_mask(&s->send_hp,
							   msg->sealed));
	return 0;
}

static int seal(struct ftv_conn *conn, struct sk_buff *skb, u64 counter)
{
	return prepare(skb) ?: seal_prepared(conn, skb, counter);
}

/*
 * One FEC group: its @kg data segments from @first on, sealed with the
 * counters from @counter on, then its @mg repair messages, built from the
 * plaintexts and sealed with the counters that follow, linked in after
 * the group. Return: the segment after the group, or an ERR_PTR.
 */
static struct sk_buff *seal_group(struct ftv_conn *conn, struct sk_buff *first,
				  unsigned int kg, unsigned int mg,
				  u64 counter)
{
	struct sk_buff *members[FTV_FEC_CODE_MAX_DATA], *rep, *next;
	unsigned int i;
	int ret;

	for (i = 0, next = first; i < kg; ++i, next = next->next) {
		if (!next)
			return ERR_PTR(-EINVAL);
		ret = prepare(next);
		if (ret)
			return ERR_PTR(ret);
		members[i] = next;
	}
	/* Repair message j goes behind the group as counter + kg + j: the
	 * list keeps counter order, so the last is linked in first.
	 */
	for (i = mg; i-- > 0;) {
		rep = ftv_fec_repair(members, kg, mg, i, FTV_SEND_HEADROOM);
		if (!rep)
			return ERR_PTR(-ENOMEM);
		rep->next = members[kg - 1]->next;
		members[kg - 1]->next = rep;
		ret = seal_prepared(conn, rep, counter + kg + i);
		if (ret)
			return ERR_PTR(ret);
	}
	for (i = 0; i < kg; ++i) {
		ret = seal_prepared(conn, members[i], counter + i);
		if (ret)
			return ERR_PTR(ret);
	}
	atomic64_add(mg, &conn->peer->fec_stats.repair_sent);
	return next;
}

/*
 * A lone packet, and its repair messages if FEC protects it: a group of
 * one. The job's head stays on its serial queue until sent, so the
 * repair messages wait on cb->more, not behind it.
 */
static int seal_lone(struct ftv_conn *conn, struct sk_buff *head)
{
	struct ftv_cb *cb = FTV_CB(head);
	unsigned int i, mg;
	struct sk_buff *rep;
	int ret;

	if (!cb->fec_k)
		return seal(conn, head, cb->tx.counter);
	mg = ftv_fec_group_repair(1, cb->fec_k, cb->fec_m);
	if (1 + mg > cb->segs)
		return -EOVERFLOW;
	ret = prepare(head);
	if (ret)
		return ret;
	for (i = mg; i-- > 0;) {
		rep = ftv_fec_repair(&head, 1, mg, i, FTV_SEND_HEADROOM);
		if (!rep)
			return -ENOMEM;
		rep->next = cb->more;
		cb->more = rep;
		ret = seal_prepared(conn, rep, cb->tx.counter + 1 + i);
		if (ret)
			return ret;
	}
	atomic64_add(mg, &conn->peer->fec_stats.repair_sent);
	return seal_prepared(conn, head, cb->tx.counter);
}

/* Seal a job's segments in FEC groups; return the segments it took. */
static int seal_groups(struct ftv_conn *conn, struct ftv_cb *cb,
		       unsigned int n)
{
	unsigned int k = cb->fec_k, m = cb->fec_m, g, kg, mg, used = 0;
	struct sk_buff *skb = cb->more;
	u64 counter = cb->tx.counter;

	for (g = 0; skb; ++g) {
		kg = ftv_fec_group_size(n, k, g);
		mg = ftv_fec_group_repair(kg, k, m);
		if (used + kg + mg > cb->segs)
			return -EOVERFLOW;
		skb = seal_group(conn, skb, kg, mg, counter + used);
		if (IS_ERR(skb))
			return PTR_ERR(skb);
		used += kg + mg;
	}
	return 0;
}

/* The longest message a join's opening is: a keepalive. */
#define FTV_OPENING_MAX (sizeof(struct ftv_msg_ack) + FTV_KEEPALIVE_PAD_MAX + \
			 FTV_DATA_OVERHEAD)

/*
 * Shape a sealed join opening in place (shape.c): a censor that judges
 * each connection's first message sees printable text, as it does at the
 * opening of a session.
 */
static int shape_sealed(struct sk_buff *skb)
{
	unsigned int len = skb->len, shaped = FTV_SHAPED_LEN(len);
	u8 sealed[FTV_OPENING_MAX];
	int ret;

	if (WARN_ON_ONCE(len > sizeof(sealed) || skb_is_nonlinear(skb)))
		return -EINVAL;
	if (skb_tailroom(skb) < shaped - len) {
		ret = pskb_expand_head(skb, 0, shaped - len, GFP_ATOMIC);
		if (ret)
			return ret;
	}
	memcpy(sealed, skb->data, len);
	skb_put(skb, shaped - len);
	ftv_shape_encode(sealed, len, skb->data);
	return 0;
}

/*
 * The crypto step of a transmit job: split a GSO superpacket into its
 * segments (the copy also finishes their checksums) and seal each with
 * the next of the job's nonces, in FEC groups with their repair messages
 * if the job has any. Return: FTV_JOB_DONE or FTV_JOB_DEAD.
 */
static enum ftv_job_state seal_job(struct sk_buff *head)
{
	struct ftv_cb *cb = FTV_CB(head);
	u64 counter = cb->tx.counter;
	struct ftv_conn *conn = cb->conn;
	unsigned int n = 0, bytes = 0;
	struct sk_buff *segs, *skb;
	int ret = 0;

	if (!skb_is_gso(head)) {
		ret = seal_lone(conn, head);
		if (!ret && unlikely(cb->tx.shape))
			ret = shape_sealed(head);
		return ret ? FTV_JOB_DEAD : FTV_JOB_DONE;
	}
	/* This writes the GSO part of skb->cb, from tx.bytes on. */
	segs = skb_gso_segment(head, 0);
	if (IS_ERR_OR_NULL(segs))
		return FTV_JOB_DEAD;
	cb->more = segs;
	for (skb = segs; skb; skb = skb->next) {
		bytes += skb->len;
		++n;
	}
	cb->tx.bytes = bytes;
	/* More segments than the stack said: no nonce for them. */
	if (unlikely(n > cb->segs))
		return FTV_JOB_DEAD;
	if (cb->fec_k) {
		ret = seal_groups(conn, cb, n);
	} else {
		for (skb = segs, n = 0; skb && !ret; skb = skb->next)
			ret = seal(conn, skb, counter + n++);
	}
	if (unlikely(ret)) {
		ftv_dev_dbg_ratelimited(conn->device->dev,
					"cannot seal message: %d\n", ret);
		return FTV_JOB_DEAD;
	}
	return FTV_JOB_DONE;
}

/* Whether @dev takes TCP superpackets of @family and cuts them itself. */
static bool can_tso(const struct net_device *dev, sa_family_t family)
{
	return dev->features & (family == AF_INET ? NETIF_F_TSO : NETIF_F_TSO6);
}

/* The payload bytes one superpacket may carry through @dev. */
static unsigned int tso_room(const struct net_device *dev)
{
	unsigned int hlen = sizeof(struct ipv6hdr) + FTV_TCP_HLEN;

	return min_t(unsigned int, READ_ONCE(dev->gso_max_size), IP_MAX_MTU) -
	       hlen;
}

/*
 * Make @first, the head of a superpacket, answer for what @skb, a segment
 * going onto its frag list, costs its sending socket.
 *
 * The segments of a split inner superpacket each carry the inner socket's
 * write-memory charge (tcp_gso_segment() and the UDP one share it out as
 * tcp_wfree or sock_wfree, each returning its own truesize). Whatever lets
 * a sender go on before a packet is freed acts on the head alone: netem
 * orphans it (skb_orphan_partial()) when it starts its delay, a router or
 * container namespace orphans it on receipt (ip_rcv_core()). A charge left
 * on a frag-list segment lasts until the far end frees the superpacket, so
 * TCP small queues would count the whole path's delay as queued on this
 * host and hold the inner sender to a few segments per one-way delay (3
 * Mbit/s at a 40 ms round trip). Moved to the head, it goes when the head's
 * does, as for any packet. A segment owned some other way is let go here.
 *
 * Only the segments of one split carry the same owner and destructor, so
 * a destructor is moved only between two of those.
 */
static void chain_charge(struct sk_buff *first, struct sk_buff *skb)
{
	if (!skb->destructor) {
		if (!first->destructor)
			first->truesize += skb->truesize;
		return;
	}
	if (skb->destructor == first->destructor && skb->sk == first->sk) {
		first->truesize += skb->truesize;
		skb->destructor = NULL;
		skb->sk = NULL;
		return;
	}
	skb_orphan(skb);
	if (!first->destructor)
		first->truesize += skb->truesize;
}

/*
 * Chain sealed segments after @first into one superpacket, for as long
 * as each is as long as @first (the last may be shorter) and the device
 * takes more. The segments keep their own buffers, on the frag list: a
 * device that cuts superpackets itself (veth, or a NIC with TSO) sends
 * each message as one segment, and the stack's GSO does the same for one
 * that does not. Return: what is left of the list.
 */
static struct sk_buff *chain(struct sk_buff *first, const struct net_device *dev,
			     sa_family_t family, unsigned int unit)
{
	unsigned int mss = first->len, room = tso_room(dev), segs = 1;
	unsigned int max_segs = min_t(unsigned int,
				      READ_ONCE(dev->gso_max_segs), unit);
	struct sk_buff *rest = first->next, *tail = NULL;

	first->next = NULL;
	while (rest && segs < max_segs && rest->len <= mss &&
	       first->len + rest->len <= room) {
		struct sk_buff *skb = rest;

		rest = skb->next;
		skb->next = NULL;
		if (tail)
			tail->next = skb;
		else
			skb_shinfo(first)->frag_list = skb;
		tail = skb;
		chain_charge(first, skb);
		first->len += skb->len;
		first->data_len += skb->len;
		++segs;
		if (skb->len < mss)
			break;
	}
	if (segs > 1) {
		skb_shinfo(first)->gso_size = mss;
		skb_shinfo(first)->gso_segs = segs;
		skb_shinfo(first)->gso_type = family == AF_INET ?
					      SKB_GSO_TCPV4 : SKB_GSO_TCPV6;
	}
	return rest;
}

/*
 * Send a job's sealed segments, as superpackets of at most @unit segments
 * where the device can. A hop that handles a superpacket whole (netem, a
 * virtual switch, a policer) also loses it whole, so a job with repair
 * messages leaves as single wire packets (@unit 1): a repair message lost
 * with the very group it is for rebuilds nothing. Superpackets of a
 * third of a group's repair messages, or of all of them, were tried: at
 * a 100 ms round trip and 1 % loss through a router they carried 71-84
 * and 51-75 Mbit/s and lost groups, which cost the inner TCP half its
 * window each; single packets carried 84-87 and lost none.
 */
static void send_sealed(struct ftv_conn *conn, struct sk_buff *segs,
			unsigned int count, unsigned int bytes,
			unsigned int unit, u64 end)
{
	struct ftv_device *fdev = conn->device;
	struct ftv_tuple tuple = conn->tuple;
	struct dst_entry *dst;
	struct sk_buff *skb;
	bool tso;

	/* Even if it cannot leave: data that goes nowhere goes unanswered,
	 * and that is how a path that died (our address went away, say)
	 * is noticed and replaced.
	 */
	ftv_timers_sent(conn->peer, bytes);
	dst = ftv_send_conn_route(conn, &tuple);
	if (IS_ERR(dst)) {
		ftv_dev_dbg_ratelimited(fdev->dev, "cannot send to %pI6c: %ld\n",
					&tuple.remote, PTR_ERR(dst));
		DEV_STATS_ADD(fdev->dev, tx_carrier_errors, count);
		kfree_skb_list(segs);
		return;
	}
	if (bytes) {
		atomic64_add(bytes, &conn->peer->tx_bytes);
		dev_sw_netstats_tx_add(fdev->dev, count, bytes);
	}
	tso = unit > 1 && count > 1 && can_tso(dst->dev, tuple.family);
	while (segs) {
		skb = segs;
		if (tso) {
			segs = chain(skb, dst->dev, tuple.family, unit);
		} else {
			segs = skb->next;
			skb->next = NULL;
		}
		conn_send(conn, skb, TCPHDR_ACK | TCPHDR_PSH, dst_clone(dst));
	}
	dst_release(dst);
	if (bytes)
		ftv_flow_data_sent(conn, end);
}

/**
 * ftv_send_finish_job - send one transmit job, after its crypto, in order
 * @head: the job, off its connection's serial queue (queue.c)
 *
 * Or drop it, if sealing failed or the connection is gone. Drops the
 * job's holds on its connection and on its session.
 */
void ftv_send_finish_job(struct sk_buff *head)
{
	struct ftv_cb *cb = FTV_CB(head);
	bool done = atomic_read(&cb->state) == FTV_JOB_DONE;
	struct sk_buff *sealed = cb->more ?: head;
	unsigned int segs = cb->segs, bytes = cb->tx.bytes;
	struct ftv_conn *conn = cb->conn;
	struct ftv_session *s = conn->session;
	int state = READ_ONCE(conn->state);
	unsigned int unit = cb->fec_k ? 1 : U16_MAX;
	/* One past the job's last counter; its cb goes with a split head. */
	u64 end = cb->tx.counter + segs;

	if (sealed != head) {
		if (skb_is_gso(head)) {
			/* The original of a split superpacket; its cb goes
			 * with it.
			 */
			consume_skb(head);
		} else {
			/* A lone packet, off its queue, then its repair
			 * messages.
			 */
			head->next = sealed;
			sealed = head;
		}
	}
	/* A retired connection still sends what was sealed for it. */
	if (likely(done && (state == FTV_CONN_ESTABLISHED ||
			    state == FTV_CONN_RETIRED))) {
		send_sealed(conn, sealed, segs, bytes, unit, end);
	} else {
		DEV_STATS_ADD(conn->device->dev, tx_dropped, segs);
		kfree_skb_list(sealed);
	}
	/* Sent, or never will be: in snd_nxt now, or nowhere. */
	atomic_sub(segs, &conn->queued);
	/* The session outlives the connection's last hold by its own. */
	ftv_job_release(&conn->jobs);
	ftv_job_release(&s->jobs);
}

/**
 * ftv_send_crypt - the crypto step of a transmit job, for a crypt worker
 * @head: the job
 *
 * Return: FTV_JOB_DONE, or FTV_JOB_DEAD if it could not be sealed.
 */
enum ftv_job_state ftv_send_crypt(struct sk_buff *head)
{
	return seal_job(head);
}

/**
 * ftv_send_serial - the serial queue a transmit job is in
 * @head: the job
 *
 * Return: its connection's transmit queue.
 */
struct ftv_serial *ftv_send_serial(struct sk_buff *head)
{
	return &FTV_CB(head)->conn->session->tx_queue;
}

#ifdef DEBUG
/*
 * Debug builds let a test make the next message sealed, by whichever
 * session seals one first, jump its counter by this much, as a peer that
 * skips counters may: the receiver must pay no more for it than for any
 * message (reorder.c, fec.c).
 */
static unsigned long long counter_jump;
module_param(counter_jump, ullong, 0644);
MODULE_PARM_DESC(counter_jump,
		 "Add this to the counter of the next message sealed, once");

static void debug_counter_jump(struct ftv_conn *conn)
{
	u64 jump = xchg(&counter_jump, 0);

	if (!jump)
		return;
	atomic64_add(jump, &conn->session->send_counter);
	ftv_dev_dbg(conn->device->dev, "connection %u:%u: counter jumped by %llu\n",
		    ntohs(conn->tuple.local_port),
		    ntohs(conn->tuple.remote_port), jump);
}
#else
static inline void debug_counter_jump(struct ftv_conn *conn)
{
}
#endif

/* Queue @skb (a packet, or a GSO superpacket) to be sealed and sent on
 * @conn. @data: it carries inner bytes (a keepalive does not). @k:@m:
 * the FEC it goes with (0 for none).
 */
static void queue_data(struct ftv_conn *conn, struct sk_buff *skb, bool data,
		       u8 k, u8 m)
{
	struct ftv_serial *serial = &conn->session->tx_queue;
	struct ftv_device *fdev = conn->device;
	struct ftv_cb *cb = FTV_CB(skb);
	enum ftv_crypt_where where;
	unsigned int segs = 1, len = skb->len;
	enum ftv_queued queued;

	if (skb_is_gso(skb)) {
		segs = skb_shinfo(skb)->gso_segs;
		if (!segs)
			segs = DIV_ROUND_UP(skb->len,
					    skb_shinfo(skb)->gso_size);
	}
	segs += ftv_fec_repairs(segs, k, m);
	cb->more = NULL;
	cb->fec_k = k;
	cb->fec_m = m;
	cb->tx.bytes = data ? skb->len : 0;
	/* The job holds its connection; its queue holds the session. */
	ftv_job_hold(&conn->jobs);
	atomic_add(segs, &conn->queued);
	debug_counter_jump(conn);
	queued = segs > U16_MAX ? FTV_QUEUE_FULL :
		 ftv_serial_add(serial, skb, conn, segs,
				&conn->session->send_counter);
	if (unlikely(queued == FTV_QUEUE_FULL)) {
		DEV_STATS_ADD(fdev->dev, tx_dropped, segs);
		atomic_sub(segs, &conn->queued);
		kfree_skb(skb);
		ftv_job_release(&conn->jobs);
		return;
	}
	where = ftv_queue_where(serial, queued, segs, len, false);
	if (where == FTV_CRYPT_INLINE) {
		ftv_job_done(skb, seal_job(skb));
	} else {
		if (likely(ftv_crypt_queue_submit(&fdev->encrypt_queue, serial,
						  skb, where)))
			return;
		/* The ring is full: ftv_send_finish_job() counts the drop. */
		ftv_job_done(skb, FTV_JOB_DEAD);
	}
	ftv_serial_hand_on(serial);
}

/*
 * Send inner data on @conn: check that it fits the path (once per
 * superpacket), then queue it for sealing. @data: it carries inner bytes.
 */
static void send_data(struct ftv_conn *conn, struct sk_buff *skb, bool data)
{
	struct ftv_device *fdev = conn->device;
	struct ftv_tuple tuple = conn->tuple;
	struct dst_entry *dst;
	u8 k = 0, m = 0;

	FTV_CB(skb)->tx.shape = false;
	if (data) {
		dst = ftv_send_conn_route(conn, &tuple);
		if (!IS_ERR(dst)) {
			bool fits = fits_path(conn, skb, dst);

			/* Planned first: the budget counts the repairs it
			 * goes with.
			 */
			if (fits && fits_fec(conn, skb, dst))
				ftv_fec_plan(&conn->session->fec, 1, &k, &m);
			if (!ftv_flow_repairs_fit(conn, skb->len, k, m)) {
				k = 0;
				m = 0;
			}
			dst_release(dst);
			if (unlikely(!fits)) {
				DEV_STATS_INC(fdev->dev, tx_dropped);
				kfree_skb(skb);
				return;
			}
		}
	}
	queue_data(conn, skb, data, k, m);
}

/**
 * ftv_send_packet - send an inner packet to @peer, or hold it for later
 * @peer: the peer chosen by allowed-ips
 * @skb: the inner IP packet, or a GSO superpacket of them; consumed
 */
void ftv_send_packet(struct ftv_peer *peer, struct sk_buff *skb)
{
	struct ftv_conn *conn, *via;
	u64 next;

	rcu_read_lock_bh();
	conn = rcu_dereference_bh(peer->conn);
	if (unlikely(!conn || READ_ONCE(conn->state) != FTV_CONN_ESTABLISHED))
		goto stage;
	next = atomic64_read(&conn->session->send_counter);
	if (unlikely(ftv_session_expired(conn->session, next)))
		goto stage;
	/* Keep sending on this session until the next one is up. */
	if (unlikely(ftv_session_rekey_due(conn->session, next)) &&
	    !READ_ONCE(peer->pending))
		ftv_timers_want_connection(peer);
	via = ftv_flow_pick(conn, skb->len);
	if (unlikely(!via)) {
		/* Every connection carried its budget; new ones are on
		 * their way.
		 */
		DEV_STATS_INC(peer->device->dev, tx_dropped);
		kfree_skb(skb);
	} else {
		send_data(via, skb, true);
	}
	rcu_read_unlock_bh();
	return;

stage:
	ftv_peer_stage_packet(peer, skb);
	rcu_read_unlock_bh();
}

/**
 * ftv_send_message_alloc - an skb for a sealed message that carries no
 *	packet
 * @len: its plaintext length
 *
 * Return: the skb, with room for the outer headers and the tag, or NULL.
 */
struct sk_buff *ftv_send_message_alloc(unsigned int len)
{
	return alloc_control(len + FTV_DATA_OVERHEAD);
}

/**
 * ftv_send_message - seal and send a message that carries no packet
 * @conn: the connection it goes on, under RCU
 * @skb: its plaintext (ftv_send_message_alloc()); consumed
 * @shape: it goes shaped (shape.c), as a join's first message may
 *
 * Queued behind what @conn's session queued before, as data is.
 */
void ftv_send_message(struct ftv_conn *conn, struct sk_buff *skb, bool shape)
{
	FTV_CB(skb)->tx.shape = shape;
	queue_data(conn, skb, false, 0, 0);
}

/**
 * ftv_send_syn - open the connection
 * @conn: a connection in SYN_SENT
 *
 * The ISN and the timestamp value are the SYN token (token.c).
 */
void ftv_send_syn(struct ftv_conn *conn)
{
	struct ftv_tcp_params params = {
		.seq = atomic_read(&conn->snd_nxt) - 1,
		.flags = TCPHDR_SYN,
		.window = 64240,
		.tsval = conn->syn_tsval,
		.mss = conn->tuple.family == AF_INET ? 1460 : 1440,
	};
	struct sk_buff *skb = alloc_control(0);

	if (likely(skb))
		conn_route_and_send(conn, skb, NULL, &params);
}

/**
 * ftv_send_join_synack - answer the SYN of a join
 * @conn: the responder's join, in JOIN_RECEIVED
 *
 * As the listen port answers any SYN, from the join's own numbers.
 */
void ftv_send_join_synack(struct ftv_conn *conn)
{
	struct ftv_tcp_params params = {
		.seq = atomic_read(&conn->snd_nxt) - 1,
		.ack = ftv_faketcp_rcv_nxt(&conn->rcv),
		.flags = TCPHDR_SYN | TCPHDR_ACK,
		.window = 65160,
		.tsval = ftv_conn_tsval(conn),
		.tsecr = atomic_read(&conn->ts_recent),
		.mss = conn->tuple.family == AF_INET ? 1460 : 1440,
	};
	struct sk_buff *skb = alloc_control(0);

	if (likely(skb))
		conn_route_and_send(conn, skb, NULL, &params);
}

/**
 * ftv_send_synack - answer a SYN on the listen port
 * @fdev: the device
 * @tuple: the SYN's tuple as seen from here
 * @params: the SYN-ACK's sequence, acknowledgment and timestamps
 */
void ftv_send_synack(struct ftv_device *fdev, const struct ftv_tuple *tuple,
		     const struct ftv_tcp_params *params)
{
	struct sk_buff *skb = alloc_control(0);
	struct ftv_tuple local = *tuple;

	if (likely(skb))
		send_segment(fdev, &local, skb,
			     ftv_send_route(fdev, READ_ONCE(fdev->creating_net),
					    &local, NULL),
			     params, 0);
}

/**
 * ftv_send_ack - send a segment without payload
 * @conn: the connection
 */
void ftv_send_ack(struct ftv_conn *conn)
{
	struct sk_buff *skb = alloc_control(0);

	if (likely(skb))
		conn_send(conn, skb, TCPHDR_ACK, NULL);
}

/**
 * ftv_send_payload - send bytes as they are, for the handshake messages
 * @conn: the connection
 * @data: the payload
 * @len: its length
 */
void ftv_send_payload(struct ftv_conn *conn, const void *data,
		      unsigned int len)
{
	struct sk_buff *skb = alloc_control(len);

	if (likely(skb)) {
		skb_put_data(skb, data, len);
		conn_send(conn, skb, TCPHDR_ACK | TCPHDR_PSH, NULL);
	}
}
