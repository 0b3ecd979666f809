/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_SEGMENT_H
#define _FTV_SEGMENT_H

#include "faketcp.h"

#include <linux/skbuff.h>

struct nf_hook_state;

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
