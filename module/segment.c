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

		/* ftv never sends extension headers. */
		if (ip6h->nexthdr != IPPROTO_TCP)
			return false;
		*thoff = sizeof(*ip6h);
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

/* Trim link-layer padding and check the IP length, before anything else
 * trusts skb->len.
 */
static int trim_to_ip_len(struct sk_buff *skb)
{
	unsigned int len;

	if (skb->protocol == htons(ETH_P_IP))
		/* A BIG TCP superpacket (GRO past 64 KiB) says 0. */
		len = ntohs(ip_hdr(skb)->tot_len) ?:
		      (skb_is_gso(skb) ? skb->len : 0);
	else
		len = ntohs(ipv6_hdr(skb)->payload_len) +
		      sizeof(struct ipv6hdr);
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
