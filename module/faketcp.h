/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_FAKETCP_H
#define _FTV_FAKETCP_H

#include <linux/tcp.h>
#include <linux/types.h>

/**
 * struct ftv_tcp_params - what goes into one fake TCP header
 * @seq: sequence number
 * @ack: acknowledgment number (used when @flags has ACK)
 * @flags: TCPHDR_* flags
 * @window: window field as sent (already scaled down)
 * @tsval: timestamp value
 * @tsecr: timestamp echo reply
 * @mss: MSS option; SYN and SYN-ACK only
 */
struct ftv_tcp_params {
	u32 seq;
	u32 ack;
	u8 flags;
	u16 window;
	u32 tsval;
	u32 tsecr;
	u16 mss;
};

/**
 * struct ftv_tcp_options - options parsed from a received header
 * @mss: MSS option or 0
 * @wscale: window scale option, or -1 if absent
 * @sack_ok: SACK-permitted seen
 * @has_ts: timestamps seen
 * @tsval: timestamp value
 * @tsecr: timestamp echo reply
 */
struct ftv_tcp_options {
	u16 mss;
	s8 wscale;
	bool sack_ok;
	bool has_ts;
	u32 tsval;
	u32 tsecr;
};

unsigned int ftv_faketcp_hlen(u8 flags);
void ftv_faketcp_write(struct tcphdr *th, __be16 sport, __be16 dport,
		       const struct ftv_tcp_params *params);
int ftv_faketcp_parse_options(const struct tcphdr *th,
			      struct ftv_tcp_options *opts);

#ifdef DEBUG
bool ftv_faketcp_selftest(void);
#endif

#endif /* _FTV_FAKETCP_H */
