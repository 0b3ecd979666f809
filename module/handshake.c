// SPDX-License-Identifier: GPL-2.0
/*
 * The initiator's side of a connection's opening: the SYN-ACK, which must
 * acknowledge our SYN token, and the response, which finishes the key
 * exchange and starts the session. The responder's side is the listen
 * port's (listen.c).
 */

#include "handshake.h"
#include "conn.h"
#include "connect.h"
#include "control.h"
#include "device.h"
#include "noise.h"
#include "open.h"
#include "peer.h"
#include "segment.h"
#include "send.h"
#include "shape.h"
#include "timers.h"

#include <linux/skbuff.h>
#include <net/tcp.h>

/**
 * ftv_handshake_synack - the SYN-ACK arrived: acknowledge it and send the
 *	initiation, or, on a join, its first message
 * @conn: a connection in SYN_SENT
 * @skb: the segment; consumed
 * @seg: what was parsed of it
 */
void ftv_handshake_synack(struct ftv_conn *conn, struct sk_buff *skb,
			  const struct ftv_segment *seg)
{
	bool ours = (seg->flags & TCPHDR_SYN) &&
		    ftv_conn_synack(conn, seg->ack, seg->seq, &seg->opts);

	consume_skb(skb);
	if (!ours)
		return;
	ftv_send_ack(conn);
	if (!conn->join_index) {
		ftv_send_payload(conn, conn->session->init_msg,
				 conn->session->init_len);
		return;
	}
	/* A join is up: its first sealed message brings the responder's
	 * side up too. Where the responder answers joins, data waits for
	 * that answer (open.c); if not, the join is up now.
	 */
	ftv_control_send_opening(conn);
	if (READ_ONCE(conn->answer_due))
		return;
	ftv_conn_join_opened(conn);
	if (conn->probe_join)
		ftv_conn_probe_join_up(conn);
}

/* Open what arrived before the response, now that the keys are known. */
static void receive_early(struct ftv_conn *conn)
{
	struct ftv_segment seg;
	struct sk_buff *skb;
	unsigned int thoff;

	while ((skb = skb_dequeue(&conn->session->early)) != NULL) {
		if (!ftv_segment_parse(skb, &seg, &thoff) ||
		    ftv_segment_parse_tcp(skb, &seg, thoff))
			kfree_skb(skb);
		else if (ftv_open_stash(conn, skb, &seg))
			ftv_open_queue(conn, skb, 1);
	}
}

static void hold_early(struct ftv_conn *conn, struct sk_buff *skb)
{
	if (skb_queue_len(&conn->session->early) >= FTV_EARLY_MAX) {
		ftv_drops_skb(&conn->peer->drops, FTV_DROPS_A_NO_SESSION,
			      conn->device->dev, skb);
		return;
	}
	skb_queue_tail(&conn->session->early, skb);
	/* The response may have been installed on another CPU meanwhile,
	 * after it emptied the queue.
	 */
	if (READ_ONCE(conn->state) != FTV_CONN_HANDSHAKE_SENT)
		receive_early(conn);
}

/* The handshake state of the initiation @conn is waiting to hear about. */
static bool pending_handshake(struct ftv_conn *conn, struct ftv_handshake *hs)
{
	struct ftv_peer *peer = conn->peer;
	bool ok;

	spin_lock_bh(&peer->lock);
	ok = peer->pending == conn &&
	     READ_ONCE(conn->state) == FTV_CONN_HANDSHAKE_SENT;
	if (ok)
		*hs = conn->session->handshake;
	spin_unlock_bh(&peer->lock);
	return ok;
}

/* The response authenticated: the session starts. */
static void response_done(struct ftv_conn *conn)
{
	struct ftv_peer *peer = conn->peer;

	memzero_explicit(&conn->session->handshake,
			 sizeof(conn->session->handshake));
	ftv_timers_connected(peer);
	/* The first sealed message: what we can do. It is also data for
	 * the responder, which counts the session only once some arrives.
	 */
	ftv_control_send_hello(conn);
	ftv_peer_flush_staged(peer);
	receive_early(conn);
}

/**
 * ftv_handshake_response - the response arrived: finish the key exchange
 * @conn: a connection in HANDSHAKE_SENT
 * @skb: a segment with payload; consumed
 * @seg: what was parsed of it
 *
 * Data the responder sent right after its response can arrive first: it
 * is held until the keys are known, then opened.
 */
void ftv_handshake_response(struct ftv_conn *conn, struct sk_buff *skb,
			    const struct ftv_segment *seg)
{
	struct ftv_peer *peer = conn->peer;
	struct ftv_device *fdev = conn->device;
	struct ftv_identity *identity;
	struct ftv_session_keys keys;
	u8 msg[FTV_SHAPED_LEN(FTV_RESP_MAX)];
	struct ftv_handshake hs;
	struct ftv_msg_resp resp;
	unsigned int len;
	bool ok;

	/* The response is the first byte of the responder's stream; with
	 * several CPUs, data it sent just after can arrive first: hold a few
	 * such payloads until the keys are known.
	 */
	if (seg->seq != conn->rcv_first) {
		hold_early(conn, skb);
		return;
	}
	len = min_t(unsigned int, seg->payload_len, sizeof(msg));
	if (!skb_copy_bits(skb, seg->payload_off, msg, len))
		len = ftv_shape_read(msg, len, FTV_RESP_MAX);
	else
		len = 0;
	if (len < sizeof(resp)) {
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_MALFORMED, fdev->dev, skb);
		return;
	}
	memcpy(&resp, msg, sizeof(resp));
	identity = rcu_dereference(fdev->identity);
	if (!pending_handshake(conn, &hs) || !identity) {
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_NO_SESSION, fdev->dev, skb);
		goto out;
	}
	/* Two X25519 operations, here in softirq: whoever sees the tuple
	 * and the sequence number can make us do them, as with
	 * initiations, and is held to the same rate.
	 */
	if (!ftv_ratelimiter_allow(&fdev->ratelimiter, &seg->tuple.remote)) {
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_RATELIMITED, fdev->dev, skb);
		goto out;
	}
	if (ftv_noise_consume_resp(peer, identity, &hs, &resp, &keys)) {
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_BAD_AUTH, fdev->dev, skb);
		goto out;
	}
	ok = !ftv_session_set_keys(conn->session, &keys);
	ftv_open_track(conn, seg);
	consume_skb(skb);
	if (ok && ftv_peer_install_conn(peer, conn, false))
		response_done(conn);
out:
	memzero_explicit(&keys, sizeof(keys));
	memzero_explicit(&hs, sizeof(hs));
}
