// SPDX-License-Identifier: GPL-2.0
/*
 * ICMP errors about ftv's own segments: the path MTU they report, when
 * they prove they saw a segment of ours in flight.
 */

#include "icmp.h"
#include "conn.h"
#include "device.h"
#include "peer.h"
#include "send.h"

#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/tcp.h>

/**
 * struct ftv_icmp_quote - what an ICMP error says about one of our segments
 * @tuple: the segment's tuple, seen from this side
 * @seq: its sequence number
 * @mtu: the MTU the error reports
 */
struct ftv_icmp_quote {
	struct ftv_tuple tuple;
	u32 seq;
	u32 mtu;
};

/* Fill @q from the IP header and first 8 TCP bytes quoted at @off. */
static bool read_quote(struct sk_buff *skb, unsigned int off,
		       unsigned int ip_len, struct ftv_icmp_quote *q)
{
	const __be16 *ports;

	if (!pskb_may_pull(skb, off + ip_len + 8))
		return false;
	ports = (const __be16 *)(skb->data + off + ip_len);
	q->tuple.local_port = ports[0];
	q->tuple.remote_port = ports[1];
	q->seq = get_unaligned_be32(ports + 2);
	return true;
}

static bool quote4(struct sk_buff *skb, struct ftv_icmp_quote *q)
{
	const struct iphdr *iph = ip_hdr(skb), *inner;
	const struct icmphdr *icmph;
	unsigned int off = iph->ihl * 4;

	if (iph->protocol != IPPROTO_ICMP ||
	    !pskb_may_pull(skb, off + sizeof(*icmph) + sizeof(*inner)))
		return false;
	icmph = (struct icmphdr *)(skb->data + off);
	if (icmph->type != ICMP_DEST_UNREACH || icmph->code != ICMP_FRAG_NEEDED)
		return false;
	q->mtu = ntohs(icmph->un.frag.mtu);
	off += sizeof(*icmph);
	inner = (struct iphdr *)(skb->data + off);
	if (inner->protocol != IPPROTO_TCP || inner->ihl < 5)
		return false;
	q->tuple.family = AF_INET;
	q->tuple.local.s6_addr32[0] = inner->saddr;
	q->tuple.remote.s6_addr32[0] = inner->daddr;
	return read_quote(skb, off, inner->ihl * 4, q);
}

static bool quote6(struct sk_buff *skb, struct ftv_icmp_quote *q)
{
	const struct ipv6hdr *ip6h = ipv6_hdr(skb), *inner;
	const struct icmp6hdr *icmp6h;
	unsigned int off = sizeof(*ip6h);

	if (ip6h->nexthdr != IPPROTO_ICMPV6 ||
	    !pskb_may_pull(skb, off + sizeof(*icmp6h) + sizeof(*inner)))
		return false;
	icmp6h = (struct icmp6hdr *)(skb->data + off);
	if (icmp6h->icmp6_type != ICMPV6_PKT_TOOBIG)
		return false;
	q->mtu = ntohl(icmp6h->icmp6_mtu);
	off += sizeof(*icmp6h);
	inner = (struct ipv6hdr *)(skb->data + off);
	if (inner->nexthdr != IPPROTO_TCP)
		return false;
	q->tuple.family = AF_INET6;
	q->tuple.local = inner->saddr;
	q->tuple.remote = inner->daddr;
	return read_quote(skb, off, sizeof(*inner), q);
}

/*
 * Note a smaller path MTU on the very route our segments take (the
 * device's fwmark, the tuple's addresses; both families), as TCP does for
 * its sockets. The route's update function reads the flow from a packet:
 * we give it a header of our own segment, marked as we mark them.
 */
static void lower_path_mtu(struct ftv_device *fdev, struct ftv_conn *conn,
			   u32 mtu)
{
	struct ftv_tuple tuple = conn->tuple;
	struct dst_entry *dst;
	struct sk_buff *probe;

	dst = ftv_send_conn_route(conn, &tuple);
	if (IS_ERR(dst))
		return;
	probe = alloc_skb(sizeof(struct ipv6hdr), GFP_ATOMIC);
	if (probe) {
		skb_reset_network_header(probe);
		if (tuple.family == AF_INET) {
			struct iphdr *iph = skb_put_zero(probe, sizeof(*iph));

			iph->version = 4;
			iph->ihl = 5;
			iph->protocol = IPPROTO_TCP;
			iph->saddr = tuple.local.s6_addr32[0];
			iph->daddr = tuple.remote.s6_addr32[0];
			probe->protocol = htons(ETH_P_IP);
		} else {
			struct ipv6hdr *ip6h = skb_put_zero(probe,
							    sizeof(*ip6h));

			ip6h->version = 6;
			ip6h->nexthdr = IPPROTO_TCP;
			ip6h->saddr = tuple.local;
			ip6h->daddr = tuple.remote;
			probe->protocol = htons(ETH_P_IPV6);
		}
		probe->dev = dst->dev;
		probe->mark = READ_ONCE(fdev->fwmark);
		if (dst->ops->update_pmtu)
			dst->ops->update_pmtu(dst, NULL, probe, mtu, false);
		kfree_skb(probe);
	}
	dst_release(dst);
	dst_cache_reset(&conn->dst_cache);
}

/**
 * ftv_icmp_receive - learn a smaller path MTU from an ICMP error
 * @devices: the creating namespace's ftv devices
 * @skb: a packet that is not a TCP segment; only read
 *
 * An ICMP "fragmentation needed" or "packet too big" about one of our
 * segments: no socket exists for the host to note the smaller path MTU
 * with, so note it here. As Linux TCP does, it is believed only if it
 * quotes a live connection and a byte we sent that is not acknowledged
 * yet: an off-path forger would have to guess both. The sending path then
 * tells inner senders the size that fits. The ICMP message itself
 * continues to the host stack.
 */
void ftv_icmp_receive(struct list_head *devices, struct sk_buff *skb)
{
	struct ftv_icmp_quote q = { };
	struct ftv_device *fdev;
	struct ftv_conn *conn;
	bool ok;

	if (skb->protocol == htons(ETH_P_IP))
		ok = quote4(skb, &q);
	else if (skb->protocol == htons(ETH_P_IPV6))
		ok = quote6(skb, &q);
	else
		ok = false;
	if (!ok || !ftv_device_find_owner(devices, &q.tuple, &fdev, &conn) ||
	    !conn)
		return;
	ok = READ_ONCE(conn->state) >= FTV_CONN_SYN_SENT &&
	     READ_ONCE(conn->state) <= FTV_CONN_ESTABLISHED &&
	     ftv_conn_sent_seq(conn, q.seq);
	if (!ok) {
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_ICMP_IGNORED);
		return;
	}
	lower_path_mtu(fdev, conn, q.mtu);
}
