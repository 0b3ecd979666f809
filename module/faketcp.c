// SPDX-License-Identifier: GPL-2.0
/*
 * The fake TCP header codec. Segments are laid out the way Linux lays out
 * its own: SYN and SYN-ACK carry MSS, SACK-permitted, timestamps, NOP and
 * window scale in that order; every other segment carries NOP, NOP,
 * timestamps. Matching a real stack byte for byte keeps ftv from standing
 * out to middleboxes that fingerprint option layouts.
 */

#include "faketcp.h"
#include "messages.h"

#include <net/tcp.h>

/**
 * ftv_faketcp_hlen - header length for a segment with @flags
 * @flags: TCPHDR_* flags
 *
 * Return: FTV_TCP_SYN_HLEN for SYN and SYN-ACK, FTV_TCP_HLEN otherwise.
 */
unsigned int ftv_faketcp_hlen(u8 flags)
{
	return flags & TCPHDR_SYN ? FTV_TCP_SYN_HLEN : FTV_TCP_HLEN;
}

static u8 *write_timestamps(u8 *p, const struct ftv_tcp_params *params)
{
	*p++ = TCPOPT_TIMESTAMP;
	*p++ = TCPOLEN_TIMESTAMP;
	put_unaligned_be32(params->tsval, p);
	put_unaligned_be32(params->tsecr, p + 4);
	return p + 8;
}

static void write_syn_options(u8 *p, const struct ftv_tcp_params *params)
{
	*p++ = TCPOPT_MSS;
	*p++ = TCPOLEN_MSS;
	put_unaligned_be16(params->mss, p);
	p += 2;
	*p++ = TCPOPT_SACK_PERM;
	*p++ = TCPOLEN_SACK_PERM;
	p = write_timestamps(p, params);
	*p++ = TCPOPT_NOP;
	*p++ = TCPOPT_WINDOW;
	*p++ = TCPOLEN_WINDOW;
	*p = FTV_TCP_WSCALE;
}

/**
 * ftv_faketcp_write - fill in a TCP header and its options
 * @th: room for ftv_faketcp_hlen(@params->flags) bytes
 * @sport: source port, network order
 * @dport: destination port, network order
 * @params: the header's values
 *
 * The checksum field is left zero for the caller.
 */
void ftv_faketcp_write(struct tcphdr *th, __be16 sport, __be16 dport,
		       const struct ftv_tcp_params *params)
{
	unsigned int hlen = ftv_faketcp_hlen(params->flags);
	u8 *opts = (u8 *)(th + 1);

	memset(th, 0, sizeof(*th));
	th->source = sport;
	th->dest = dport;
	th->seq = htonl(params->seq);
	th->ack_seq = params->flags & TCPHDR_ACK ? htonl(params->ack) : 0;
	th->doff = hlen / 4;
	tcp_flag_byte(th) = params->flags;
	th->window = htons(params->window);
	if (params->flags & TCPHDR_SYN) {
		write_syn_options(opts, params);
	} else {
		*opts++ = TCPOPT_NOP;
		*opts++ = TCPOPT_NOP;
		write_timestamps(opts, params);
	}
}

static int parse_one(u8 kind, const u8 *p, u8 len, struct ftv_tcp_options *o)
{
	switch (kind) {
	case TCPOPT_MSS:
		if (len != TCPOLEN_MSS)
			return -EINVAL;
		o->mss = get_unaligned_be16(p);
		break;
	case TCPOPT_WINDOW:
		if (len != TCPOLEN_WINDOW)
			return -EINVAL;
		o->wscale = min_t(u8, *p, TCP_MAX_WSCALE);
		break;
	case TCPOPT_SACK_PERM:
		if (len != TCPOLEN_SACK_PERM)
			return -EINVAL;
		o->sack_ok = true;
		break;
	case TCPOPT_TIMESTAMP:
		if (len != TCPOLEN_TIMESTAMP)
			return -EINVAL;
		o->has_ts = true;
		o->tsval = get_unaligned_be32(p);
		o->tsecr = get_unaligned_be32(p + 4);
		break;
	}
	return 0;
}

/**
 * ftv_faketcp_parse_options - read the options of a received header
 * @th: header whose doff * 4 bytes are linear and already bounds-checked
 * @opts: receives what was found
 *
 * Return: 0, or -EINVAL if an option is truncated or has a bad length.
 */
int ftv_faketcp_parse_options(const struct tcphdr *th,
			      struct ftv_tcp_options *opts)
{
	const u8 *p = (const u8 *)(th + 1);
	const u8 *end = (const u8 *)th + th->doff * 4;
	u8 kind, len;

	memset(opts, 0, sizeof(*opts));
	opts->wscale = -1;
	while (p < end) {
		kind = *p++;
		if (kind == TCPOPT_EOL)
			break;
		if (kind == TCPOPT_NOP)
			continue;
		if (p >= end)
			return -EINVAL;
		len = *p++;
		if (len < 2 || len - 2 > end - p)
			return -EINVAL;
		if (parse_one(kind, p, len, opts))
			return -EINVAL;
		p += len - 2;
	}
	return 0;
}

#ifdef DEBUG
#include "selftest/faketcp.c"
#endif
