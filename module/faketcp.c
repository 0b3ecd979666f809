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

#include <linux/jiffies.h>
#include <linux/lockdep.h>
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

/**
 * ftv_faketcp_rcv_init - prepare a connection's receive tracker
 * @rcv: tracker in a zeroed connection
 */
void ftv_faketcp_rcv_init(struct ftv_tcp_rcv *rcv)
{
	spin_lock_init(&rcv->lock);
}

/**
 * ftv_faketcp_rcv_reset - acknowledge the peer's stream from @nxt on
 * @rcv: the connection's tracker
 * @nxt: first sequence number of the peer's data, known from the handshake
 */
void ftv_faketcp_rcv_reset(struct ftv_tcp_rcv *rcv, u32 nxt)
{
	spin_lock_bh(&rcv->lock);
	rcv->nr = 0;
	atomic_set(&rcv->nxt, nxt);
	spin_unlock_bh(&rcv->lock);
}

/* Everything up to @nxt has arrived: fold in the ranges that now join. */
static u32 rcv_join(struct ftv_tcp_rcv *rcv, u32 nxt)
{
	unsigned int n = 0;

	lockdep_assert_held(&rcv->lock);
	while (n < rcv->nr && !after(rcv->ranges[n].start, nxt)) {
		if (after(rcv->ranges[n].end, nxt))
			nxt = rcv->ranges[n].end;
		n++;
	}
	rcv->nr -= n;
	memmove(rcv->ranges, rcv->ranges + n, rcv->nr * sizeof(rcv->ranges[0]));
	return nxt;
}

/* Remember [@seq, @end), which lies past a gap. False if that needs a new
 * range and all are in use.
 */
static bool rcv_insert(struct ftv_tcp_rcv *rcv, u32 seq, u32 end)
{
	unsigned int i = 0, j;

	lockdep_assert_held(&rcv->lock);
	while (i < rcv->nr && before(rcv->ranges[i].end, seq))
		i++;
	/* Ranges i to j - 1 overlap or touch the new data and merge with it. */
	for (j = i; j < rcv->nr && !after(rcv->ranges[j].start, end); j++) {
		if (before(rcv->ranges[j].start, seq))
			seq = rcv->ranges[j].start;
		if (after(rcv->ranges[j].end, end))
			end = rcv->ranges[j].end;
	}
	if (j == i) {
		if (rcv->nr == FTV_TCP_RCV_RANGES)
			return false;
		memmove(rcv->ranges + i + 1, rcv->ranges + i,
			(rcv->nr - i) * sizeof(rcv->ranges[0]));
		rcv->nr++;
	} else {
		memmove(rcv->ranges + i + 1, rcv->ranges + j,
			(rcv->nr - j) * sizeof(rcv->ranges[0]));
		rcv->nr -= j - i - 1;
	}
	rcv->ranges[i].start = seq;
	rcv->ranges[i].end = end;
	return true;
}

/* Move @nxt past the gaps that are FTV_TCP_GAP_MS old, or that
 * FTV_TCP_GAP_BYTES arrived past. Return: the new ACK number.
 */
static u32 rcv_give_up(struct ftv_tcp_rcv *rcv, u32 nxt, unsigned long now)
{
	unsigned long max_age = msecs_to_jiffies(FTV_TCP_GAP_MS);

	lockdep_assert_held(&rcv->lock);
	while (rcv->nr &&
	       (time_after_eq(now, rcv->gap_since + max_age) ||
		rcv->ranges[rcv->nr - 1].end - nxt > FTV_TCP_GAP_BYTES)) {
		nxt = rcv_join(rcv, rcv->ranges[0].start);
		rcv->gap_since = now;
	}
	return nxt;
}

/**
 * ftv_faketcp_rcv_data - account for authenticated data from the peer
 * @rcv: the connection's tracker
 * @seq: sequence number of the segment's first byte
 * @end: sequence number after its last byte
 * @now: jiffies
 *
 * The ACK number only moves over data without a gap, as a real receiver's
 * does: acknowledging past a gap tells a middlebox or an analyser on the
 * way that data it has not seen yet arrived. Most gaps are reordering
 * (two CPUs receiving one connection) and fill within microseconds. A gap
 * left by loss never fills, because ftv does not retransmit; once it is
 * %FTV_TCP_GAP_MS old, or %FTV_TCP_GAP_BYTES have arrived past it, the ACK
 * moves past it, as a real stack's would after the retransmission.
 *
 * Return: true if a gap was given up: the ACK number moved past data that
 * never came, and the peer, which cannot know, waits to hear it.
 */
bool ftv_faketcp_rcv_data(struct ftv_tcp_rcv *rcv, u32 seq, u32 end,
			  unsigned long now)
{
	unsigned int had_gap;
	bool gave_up = false;
	u32 nxt, old, kept;

	spin_lock_bh(&rcv->lock);
	old = atomic_read(&rcv->nxt);
	nxt = old;
	had_gap = rcv->nr;
	while (after(end, nxt)) {
		if (!after(seq, nxt)) {
			nxt = rcv_join(rcv, end);
			break;
		}
		if (rcv_insert(rcv, seq, end))
			break;
		/* No room for one more gap: give up the oldest. */
		nxt = rcv_join(rcv, rcv->ranges[0].start);
		gave_up = true;
	}
	/* The gap at nxt is new unless it is the one open before. */
	if (rcv->nr && (!had_gap || nxt != old))
		rcv->gap_since = now;
	kept = nxt;
	nxt = rcv_give_up(rcv, nxt, now);
	atomic_set(&rcv->nxt, nxt);
	spin_unlock_bh(&rcv->lock);
	return gave_up || nxt != kept;
}

/**
 * ftv_faketcp_rcv_expire - give up a gap that is old enough, with no new
 *	data to prompt it (the peer sent its last segments past the gap)
 * @rcv: the connection's tracker
 * @now: jiffies
 *
 * Return: true if the ACK number moved.
 */
bool ftv_faketcp_rcv_expire(struct ftv_tcp_rcv *rcv, unsigned long now)
{
	u32 old, nxt;

	if (!READ_ONCE(rcv->nr))
		return false;
	spin_lock_bh(&rcv->lock);
	old = atomic_read(&rcv->nxt);
	nxt = rcv_give_up(rcv, old, now);
	atomic_set(&rcv->nxt, nxt);
	spin_unlock_bh(&rcv->lock);
	return nxt != old;
}

#ifdef DEBUG
#include "selftest/faketcp.c"
#endif
