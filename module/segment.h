/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_SEGMENT_H
#define _FTV_SEGMENT_H

#include "faketcp.h"

#include <linux/bits.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>

struct nf_hook_state;

/* What ftv_segment_ip_mark() packs, besides the TTL (bits 0-7) and the
 * IP ID (bits 8-23).
 */
#define FTV_IP_MARK_SEEN	BIT(24)
#define FTV_IP_MARK_IPV4	BIT(25)

/**
 * ftv_segment_ip_mark - what a received segment's IP header says of its
 *	sender
 * @skb: the segment, its network header the outer IPv4 or IPv6 header
 *
 * An injector on the path sends with its own distance and IP ID counter,
 * not the peer's: this is what gets compared (receive.c, open.c).
 *
 * Return: the TTL or hop limit, the IPv4 IP ID, FTV_IP_MARK_SEEN and, for
 * IPv4, FTV_IP_MARK_IPV4.
 */
static inline u32 ftv_segment_ip_mark(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return ip_hdr(skb)->ttl | ntohs(ip_hdr(skb)->id) << 8 |
		       FTV_IP_MARK_SEEN | FTV_IP_MARK_IPV4;
	return ipv6_hdr(skb)->hop_limit | FTV_IP_MARK_SEEN;
}

/**
 * struct ftv_segment - a parsed outer segment
 * @tuple: its 4-tuple, seen from this side
 * @th: its TCP header, linear in the skb
 * @opts: its TCP options
 * @seq: sequence number
 * @ack: acknowledgment number
 * @flags: TCPHDR_* flags
 * @payload_off: offset of the payload from skb->data
 * @payload_len: payload length
 */
struct ftv_segment {
	struct ftv_tuple tuple;
	struct tcphdr *th;
	struct ftv_tcp_options opts;
	u32 seq;
	u32 ack;
	u8 flags;
	unsigned int payload_off;
	unsigned int payload_len;
};

bool ftv_segment_parse(struct sk_buff *skb, struct ftv_segment *seg,
		       unsigned int *thoff);
int ftv_segment_parse_tcp(struct sk_buff *skb, struct ftv_segment *seg,
			  unsigned int thoff);
int ftv_segment_strip_jumbo(struct sk_buff *skb, unsigned int *thoff);
int ftv_segment_check(struct sk_buff *skb, struct ftv_segment *seg,
		      unsigned int thoff, const struct nf_hook_state *state);

#ifdef DEBUG
bool ftv_segment_selftest(void);
#endif

#endif /* _FTV_SEGMENT_H */
