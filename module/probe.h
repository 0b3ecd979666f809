/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probes of the path to a peer: the asks a probe sends, the answers, and
 * the padding a responder sends within its limits (probe.c).
 */

#ifndef _FTV_PROBE_H
#define _FTV_PROBE_H

#include "messages.h"

#include <linux/ktime.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct ftv_conn;
struct ftv_peer;
struct sk_buff;

enum ftv_probe_limits {
	/* The window of a peer's probe limits: FTV_PROBE_MAX_BYTES of
	 * padding and FTV_PROBE_ANSWERS answers in it.
	 */
	FTV_PROBE_WINDOW_S = 60,
	FTV_PROBE_ANSWERS = 200,
	/* Padding goes in bursts of at most this much, or 20 ms of the
	 * rate asked, whichever is more.
	 */
	FTV_PROBE_BURST = 65536,
	/* The probe's joins that came up, remembered by number: the last. */
	FTV_PROBE_JOINS = 16,
	/* Padding goes only on a connection whose peer acknowledged all
	 * but FTV_PROBE_UNHEARD_MAX of what went on it, or all but
	 * FTV_PROBE_UNACKED_MAX and was heard within FTV_PROBE_HEARD_MS:
	 * one whose peer stopped answering gets no more than that. The
	 * first allows for a keepalive of ours the peer has not yet
	 * answered on a connection it has been quiet on for a while: until
	 * 2026-12-04 any byte unacknowledged there kept a spread pad off it.
	 */
	FTV_PROBE_HEARD_MS = 1000,
	FTV_PROBE_UNHEARD_MAX = 64 << 10,
	FTV_PROBE_UNACKED_MAX = 2 << 20,
};

/**
 * struct ftv_probe - a peer's probe state, at both ends
 * @lock: guards everything below
 * @stopped: the peer is going; nothing arms @pad_work again
 * @told: @tell holds the peer's last answer
 * @tell: that answer, as it came
 * @answers_at: theoretical arrival time (ns) of the answer limit
 * @bytes_at: theoretical arrival time (ns) of the padding limit
 * @pad_index: the connection, by number in the session, padding goes on
 * @pad_left: padding bytes still to send (0: none is being sent)
 * @pad_rate: its rate, bytes per second
 * @pad_credit: bytes the rate allowed and that have not gone yet
 * @pad_at: ktime when @pad_credit was last brought up to date
 * @pad_work: sends the padding that is due
 * @padding_asked: as the asker: a pad was asked for since the last stop
 * @loss_before: as the asker: the session's loss estimate before that
 *	first pad (ftv_fec_forget_loss() goes back to it at the stop)
 * @joins_up: the numbers of the last FTV_PROBE_JOINS probe joins that
 *	came up, the latest at (@n_joins_up - 1) % FTV_PROBE_JOINS
 * @n_joins_up: how many came up since the peer was created
 */
struct ftv_probe {
	spinlock_t lock; /* the fields below */
	bool stopped;
	bool told;
	struct ftv_msg_probe_tell tell;
	u64 answers_at;
	u64 bytes_at;
	u32 pad_index;
	u32 pad_left;
	u32 pad_rate;
	u32 pad_credit;
	ktime_t pad_at;
	struct delayed_work pad_work;
	bool padding_asked;
	u32 loss_before;
	u32 joins_up[FTV_PROBE_JOINS];
	unsigned int n_joins_up;
};

/**
 * struct ftv_probe_request - one step a probe request asks the module to send
 * @step: enum ftv_probe_step
 * @index: the connection's number in the session
 * @bytes: padding asked for (a pad step)
 * @rate: its rate in kbit/s
 * @length: the plaintext length to pad the ask to (an echo)
 * @shape: a join's opening goes shaped (1) or as it is (0); -1: as the
 *	device's shape setting says
 */
struct ftv_probe_request {
	u8 step;
	u32 index;
	u32 bytes;
	u32 rate;
	u32 length;
	int shape;
};

/**
 * struct ftv_probe_conn - a connection of a session, as a probe reads it
 * @index: its number in the session
 * @rx_bytes: the payload of the messages without a packet that came on it
 * @path_mtu: the MTU of the outer route its segments take now (0 if it
 *	has none): below the link's once an ICMP error told a smaller one
 * @rx_stream: the bytes of the peer's stream that arrived on it in order
 *	since it came up, whatever they carried
 */
struct ftv_probe_conn {
	u32 index;
	u64 rx_bytes;
	u32 path_mtu;
	u32 rx_stream;
};

void ftv_probe_init(struct ftv_probe *probe);
void ftv_probe_stop(struct ftv_probe *probe);
int ftv_probe_send(struct ftv_peer *peer, const struct ftv_probe_request *step,
		   u32 *nonce);
bool ftv_probe_told(struct ftv_peer *peer, struct ftv_msg_probe_tell *tell);
void ftv_probe_asked(struct ftv_conn *conn, struct sk_buff *skb);
void ftv_probe_answered(struct ftv_conn *conn, struct sk_buff *skb);
unsigned int ftv_probe_conns(struct ftv_peer *peer,
			     struct ftv_probe_conn *conns, unsigned int max);
void ftv_probe_join_up(struct ftv_probe *probe, u32 index);
unsigned int ftv_probe_joins_up(struct ftv_probe *probe,
				u32 joins[FTV_PROBE_JOINS]);

#endif /* _FTV_PROBE_H */
