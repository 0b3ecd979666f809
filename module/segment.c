// SPDX-License-Identifier: GPL-2.0
/*
 * Outer segments as they arrive: where their IP and TCP headers are, what
 * their TCP header says, and whether their lengths and checksum hold.
 * Nothing here knows connections or devices.
 */

#include "segment.h"

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/tcp.h>

/**
 * ftv_segment_parse - find the IP and TCP headers of a packet
 * @skb: a packet, skb->data at its network header (as in PRE_ROUTING)
 * @seg: receives its tuple and TCP header
 * @thoff: receives the TCP header's offset
 *
 * Return: false if this is not a TCP segment ftv could own.
 */
bool ftv_segment_parse(struct sk_buff *skb, struct ftv_segment *seg,
		       unsigned int *thoff)
{
	memset(&seg->tuple, 0, sizeof(seg->tuple));
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		if (iph->protocol != IPPROTO_TCP || ip_is_fragment(iph))
			return false;
		*thoff = iph->ihl * 4;
		seg->tuple.family = AF_INET;
		seg->tuple.local.s6_addr32[0] = iph->daddr;
		seg->tuple.remote.s6_addr32[0] = iph->saddr;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		/* ftv never sends extension headers, but IPv6 GRO past
		 * 64 KiB (BIG TCP) puts a hop-by-hop jumbo header in front
		 * of the TCP header (ftv_segment_strip_jumbo() takes it
		 * out). GRO ends a merge at a segment with PSH, as each of
		 * ftv's superpackets ends, so only a peer's superpacket
		 * past 64 KiB, or a device that merges more eagerly, makes
		 * one.
		 */
		if (ip6h->nexthdr == IPPROTO_TCP)
			*thoff = sizeof(*ip6h);
		else if (skb_is_gso(skb) && ipv6_has_hopopt_jumbo(skb))
			*thoff = sizeof(*ip6h) + sizeof(struct hop_jumbo_hdr);
		else
			return false;
		seg->tuple.family = AF_INET6;
		seg->tuple.local = ip6h->daddr;
		seg->tuple.remote = ip6h->saddr;
	} else {
		return false;
	}
	if (!pskb_may_pull(skb, *thoff + sizeof(struct tcphdr)))
		return false;
	seg->th = (struct tcphdr *)(skb->data + *thoff);
	seg->tuple.local_port = seg->th->dest;
	seg->tuple.remote_port = seg->th->source;
	return true;
}

/**
 * ftv_segment_parse_tcp - the rest of the TCP header
 * @skb: the segment
 * @seg: from ftv_segment_parse(); gets options, numbers, payload bounds
 * @thoff: the TCP header's offset
 *
 * Return: 0 or -EINVAL.
 */
int ftv_segment_parse_tcp(struct sk_buff *skb, struct ftv_segment *seg,
			  unsigned int thoff)
{
	unsigned int doff = seg->th->doff * 4;

	if (doff < sizeof(struct tcphdr) || !pskb_may_pull(skb, thoff + doff))
		return -EINVAL;
	seg->th = (struct tcphdr *)(skb->data + thoff);
	if (ftv_faketcp_parse_options(seg->th, &seg->opts))
		return -EINVAL;
	seg->seq = ntohl(seg->th->seq);
	seg->ack = ntohl(seg->th->ack_seq);
	seg->flags = tcp_flag_byte(seg->th);
	seg->payload_off = thoff + doff;
	if (skb->len < seg->payload_off)
		return -EINVAL;
	seg->payload_len = skb->len - seg->payload_off;
	return 0;
}

/**
 * ftv_segment_strip_jumbo - take out the jumbo header IPv6 GRO put in
 * @skb: a superpacket from ftv_segment_parse(), skb->data at its network
 *	header, which nobody else holds any more
 * @thoff: the TCP header's offset; moves back with skb->data
 *
 * IPv6 GRO past 64 KiB puts a hop-by-hop jumbo header (the kernel checked
 * it on the way in) between the IPv6 and the TCP header. The rest of ftv,
 * and 6.1's segmentation of a received packet (ipv6_gso_segment() assumes
 * an Ethernet header in front and would move the wrong bytes), want the
 * TCP header right behind the IPv6 one: the IP headers move up over the
 * jumbo header, the TCP header and what follows stay where they are.
 * Anything else is left alone.
 *
 * Return: 0 or -ENOMEM.
 */
int ftv_segment_strip_jumbo(struct sk_buff *skb, unsigned int *thoff)
{
	const unsigned int hop = sizeof(struct hop_jumbo_hdr);
	unsigned int front;

	if (skb->protocol != htons(ETH_P_IPV6) ||
	    *thoff != sizeof(struct ipv6hdr) + hop)
		return 0;
	if (skb_cow_head(skb, 0))
		return -ENOMEM;
	/* The headers keep their 16-bit alignment (8 bytes): a checksum
	 * over them loses the jumbo header's share and nothing else.
	 */
	if (skb->ip_summed == CHECKSUM_COMPLETE)
		skb->csum = csum_sub(skb->csum,
				     csum_partial(skb->data + sizeof(struct ipv6hdr),
						  hop, 0));
	front = sizeof(struct ipv6hdr);
	if (skb_mac_header_was_set(skb))
		front += skb_network_header(skb) - skb_mac_header(skb);
	memmove(skb->data + sizeof(struct ipv6hdr) - front + hop,
		skb->data + sizeof(struct ipv6hdr) - front, front);
	__skb_pull(skb, hop);
	skb->network_header += hop;
	if (skb_mac_header_was_set(skb))
		skb->mac_header += hop;
	ipv6_hdr(skb)->nexthdr = IPPROTO_TCP;
	*thoff -= hop;
	return 0;
}

/* Trim link-layer padding and check the IP length, before anything else
 * trusts skb->len.
 */
static int trim_to_ip_len(struct sk_buff *skb)
{
	unsigned int len;

	/* A BIG TCP superpacket (GRO past 64 KiB) says 0: the stack
	 * checked its length (and an IPv6 one's jumbo option) already.
	 */
	if (skb->protocol == htons(ETH_P_IP))
		len = ntohs(ip_hdr(skb)->tot_len);
	else if (ipv6_hdr(skb)->payload_len)
		len = ntohs(ipv6_hdr(skb)->payload_len) +
		      sizeof(struct ipv6hdr);
	else
		len = 0;
	if (!len && skb_is_gso(skb))
		len = skb->len;
	if (!len || len > skb->len)
		return -EINVAL;
	return pskb_trim_rcsum(skb, len);
}

/*
 * The TCP checksum, unless the device (or GRO, or the sender on this
 * host) already vouched for it. A segment that fails it was damaged on the
 * way, and is treated as a real stack would: as if it never arrived.
 */
static bool checksum_ok(struct sk_buff *skb, unsigned int thoff,
			const struct nf_hook_state *state)
{
	if (skb_csum_unnecessary(skb))
		return true;
	return !nf_checksum(skb, state->hook, thoff, IPPROTO_TCP, state->pf);
}

/**
 * ftv_segment_check - everything a segment needs before it is looked at
 * @skb: the segment
 * @seg: from ftv_segment_parse()
 * @thoff: the TCP header's offset
 * @state: the hook's state; NULL for the segments of a superpacket that
 *	GRO or the sender on this host already checksummed
 *
 * Sane lengths, options, checksum.
 *
 * Return: 0, -EINVAL or -EBADMSG (the checksum).
 */
int ftv_segment_check(struct sk_buff *skb, struct ftv_segment *seg,
		      unsigned int thoff, const struct nf_hook_state *state)
{
	if (trim_to_ip_len(skb) || ftv_segment_parse_tcp(skb, seg, thoff))
		return -EINVAL;
	if (state && !checksum_ok(skb, thoff, state))
		return -EBADMSG;
	return 0;
}

#ifdef DEBUG
#include "selftest/segment.c"
#endif
