/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_FAKETCP_H
#define _FTV_FAKETCP_H

#include <linux/atomic.h>
#include <linux/in6.h>
#include <linux/spinlock.h>
#include <linux/tcp.h>
#include <linux/types.h>

/**
 * struct ftv_tuple - the outer 4-tuple of a connection, seen from this side
 * @local: our address (IPv4 in @local.s6_addr32[0] when @family is AF_INET)
 * @remote: the peer's address
 * @local_port: our TCP port, network order
 * @remote_port: the peer's TCP port, network order
 * @family: AF_INET or AF_INET6
 * @zero: always zero: the whole tuple is the connection table's key, so
 *	it has no padding of unknown value
 */
struct ftv_tuple {
	struct in6_addr local;
	struct in6_addr remote;
	__be16 local_port;
	__be16 remote_port;
	u8 family;
	u8 zero[3];
};

/**
 * struct ftv_tcp_params - what goes into one fake TCP header
 * @seq: sequence number
 * @ack: acknowledgment number (used when @flags has ACK)
 * @flags: TCPHDR_* flags
 * @window: window field as sent (already scaled down)
 * @tsval: timestamp value
 * @tsecr: timestamp echo reply
 * @mss: MSS option; SYN and SYN-ACK only: the most to announce (the
 *	sending path announces less where the route's MTU is smaller)
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

/* Gaps in the peer's data we remember at once; one more and the oldest is
 * given up.
 */
#define FTV_TCP_RCV_RANGES 4

/**
 * struct ftv_tcp_rcv - how much of the peer's byte stream we acknowledge
 * @lock: serialises updates; one connection's segments can be received on
 *	several CPUs at once, and out of order
 * @nxt: end of what arrived without a gap: the ACK number of everything
 *	we send (read without @lock)
 * @gap_since: jiffies when the oldest gap still open was seen
 * @nr: number of @ranges in use
 * @ranges: data that arrived past a gap after @nxt: sorted, disjoint and
 *	not touching
 */
struct ftv_tcp_rcv {
	spinlock_t lock; /* updates come from several CPUs */
	atomic_t nxt;
	unsigned long gap_since;
	unsigned int nr;
	struct {
		u32 start;
		u32 end;
	} ranges[FTV_TCP_RCV_RANGES];
};

static inline u32 ftv_faketcp_rcv_nxt(const struct ftv_tcp_rcv *rcv)
{
	return atomic_read(&rcv->nxt);
}

void ftv_faketcp_rcv_init(struct ftv_tcp_rcv *rcv);
void ftv_faketcp_rcv_reset(struct ftv_tcp_rcv *rcv, u32 nxt);
bool ftv_faketcp_rcv_data(struct ftv_tcp_rcv *rcv, u32 seq, u32 end,
			  unsigned long now);
bool ftv_faketcp_rcv_expire(struct ftv_tcp_rcv *rcv, unsigned long now);

unsigned int ftv_faketcp_hlen(u8 flags);
void ftv_faketcp_write(struct tcphdr *th, __be16 sport, __be16 dport,
		       const struct ftv_tcp_params *params);
int ftv_faketcp_parse_options(const struct tcphdr *th,
			      struct ftv_tcp_options *opts);

#ifdef DEBUG
bool ftv_faketcp_selftest(void);
#endif

#endif /* _FTV_FAKETCP_H */
