// SPDX-License-Identifier: GPL-2.0
/*
 * The listen port, the responder's side of a connection's opening: SYNs
 * answered with a stateless SYN-ACK whose sequence number is a cookie
 * (and carries the SYN's MSS),
 * SYN tokens checked, and initiations authenticated, answered and
 * installed as sessions in process context. Nothing is kept for a
 * stranger until its initiation authenticates.
 */

#include "listen.h"
#include "conn.h"
#include "connect.h"
#include "control.h"
#include "device.h"
#include "noise.h"
#include "peer.h"
#include "segment.h"
#include "send.h"
#include "shape.h"
#include "timers.h"
#include "token.h"

#include <linux/moduleparam.h>
#include <linux/siphash.h>
#include <linux/skbuff.h>
#include <net/tcp.h>

static u32 cookie(struct ftv_device *fdev, const struct ftv_tuple *tuple,
		  u32 salt)
{
	const struct {
		struct in6_addr local, remote;
		__be16 local_port, remote_port;
		u32 salt;
	} in = {
		.local = tuple->local,
		.remote = tuple->remote,
		.local_port = tuple->local_port,
		.remote_port = tuple->remote_port,
		.salt = salt,
	};

	return siphash(&in, sizeof(in), &fdev->cookie_key);
}

/* The MSS values a SYN-ACK's ISN carries in its low three bits, as the
 * host's own SYN cookies carry one: the largest not above the SYN's option
 * (which a router may have lowered) is what the connection made on the
 * initiation honours when it sizes its segments.
 */
static const u16 cookie_mss_table[] = {
	536, 1220, 1280, 1360, 1400, 1420, 1440, 1460,
};

#define COOKIE_MSS_MASK ((u32)ARRAY_SIZE(cookie_mss_table) - 1)

static u32 cookie_mss_index(u16 mss)
{
	u32 i = COOKIE_MSS_MASK;

	if (!mss)
		return i;
	while (i && cookie_mss_table[i] > mss)
		--i;
	return i;
}

/* The MSS the initiation's acknowledgment of our SYN-ACK carries back. */
static u16 cookie_mss(const struct ftv_segment *seg)
{
	return cookie_mss_table[(seg->ack - 1) & COOKIE_MSS_MASK];
}

static u32 cookie_epoch(void)
{
	return ktime_get_seconds() / FTV_COOKIE_PERIOD_S;
}

/* Our timestamp clock for a connection accepted on the listen port. */
static u32 listen_ts_offset(struct ftv_device *fdev,
			    const struct ftv_tuple *tuple)
{
	return cookie(fdev, tuple, U32_MAX);
}

static bool cookie_valid(struct ftv_device *fdev,
			 const struct ftv_segment *seg)
{
	u32 epoch = cookie_epoch(), isn = seg->ack - 1;

	isn &= ~COOKIE_MSS_MASK;
	return isn == (cookie(fdev, &seg->tuple, epoch) & ~COOKIE_MSS_MASK) ||
	       isn == (cookie(fdev, &seg->tuple, epoch - 1) &
		       ~COOKIE_MSS_MASK);
}

/* Answer a SYN without keeping any state: the sequence number we choose is
 * a keyed hash of the tuple and the time, checked when the initiation
 * arrives.
 */
static void answer_syn(struct ftv_device *fdev, const struct ftv_segment *seg)
{
	struct ftv_tcp_params params = {
		.seq = (cookie(fdev, &seg->tuple, cookie_epoch()) &
			~COOKIE_MSS_MASK) | cookie_mss_index(seg->opts.mss),
		.ack = seg->seq + 1,
		.flags = TCPHDR_SYN | TCPHDR_ACK,
		.window = 65160,
		.tsval = jiffies_to_msecs(jiffies) +
			 listen_ts_offset(fdev, &seg->tuple),
		.tsecr = seg->opts.tsval,
		.mss = seg->tuple.family == AF_INET ? 1460 : 1440,
	};

	ftv_send_synack(fdev, &seg->tuple, &params);
}

/* A SYN whose token is valid, and new. */
static bool syn_claimed(struct ftv_device *fdev, const struct ftv_segment *seg)
{
	struct ftv_identity *identity = rcu_dereference(fdev->identity);
	struct ftv_token_cache *cache;
	u32 step;

	/* Pairs with the release in ftv_token_cache_enable(). */
	cache = smp_load_acquire(&fdev->token_cache);
	return seg->opts.has_ts && identity && cache &&
	       ftv_token_check(fdev, identity, seg->seq, seg->opts.tsval,
			       &step) &&
	       !ftv_token_cache_seen(cache, seg->seq, seg->opts.tsval, step);
}

/*
 * A SYN: one that joins a session is taken and answered by the session
 * it names (conn.c), one with a valid, new token is answered without
 * state. Return: whether it was taken; the rest is the host's, which
 * answers as it would any SYN, and the count shows the probing.
 */
static bool listen_syn(struct ftv_device *fdev, const struct ftv_segment *seg)
{
	if (ftv_conn_join_take(fdev, seg))
		return true;
	if (!syn_claimed(fdev, seg)) {
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_SYN_REFUSED);
		return false;
	}
	answer_syn(fdev, seg);
	return true;
}

/*
 * The initiator's ACK, or its initiation, on the tuple our SYN-ACK's
 * cookie names: an initiation is queued for the handshake worker, within
 * the handshake rate limit.
 */
static void listen_ack(struct ftv_device *fdev, struct sk_buff *skb,
		       const struct ftv_segment *seg)
{
	if (!seg->payload_len) {
		/* The initiator's ACK: nothing to do. */
		consume_skb(skb);
		return;
	}
	if (!ftv_ratelimiter_allow(&fdev->ratelimiter, &seg->tuple.remote)) {
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_RATELIMITED);
		kfree_skb(skb);
		return;
	}
	if (skb_queue_len(&fdev->handshake_queue) >= FTV_HANDSHAKE_QUEUE_MAX) {
		DEV_STATS_INC(fdev->dev, rx_dropped);
		kfree_skb(skb);
		return;
	}
	skb_queue_tail(&fdev->handshake_queue, skb);
	queue_work(ftv_wq, &fdev->handshake_work);
}

/**
 * ftv_listen_receive - a segment to the listen port, of no connection
 * @fdev: the device
 * @skb: the segment; consumed if taken
 * @seg: from ftv_segment_parse(); the rest is parsed here
 * @thoff: its TCP header's offset
 * @state: the hook's state
 *
 * ftv takes only a SYN that joins a session (join.c) or whose token
 * (token.c) is valid and new, and the initiator's segments that carry
 * our SYN-ACK's cookie. Everything else is the host's, checksum failures
 * included: a prober finds whatever the host runs on the port, or a
 * closed port, as anywhere else. Each SYN is judged once, here, so that
 * what ftv does not take is what the host answers.
 *
 * Return: true if ftv took it (NF_STOLEN); false leaves it to the host.
 */
bool ftv_listen_receive(struct ftv_device *fdev, struct sk_buff *skb,
			struct ftv_segment *seg, unsigned int thoff,
			const struct nf_hook_state *state)
{
	if (skb_is_gso(skb) || ftv_segment_check(skb, seg, thoff, state))
		return false;
	switch (seg->flags & (TCPHDR_SYN | TCPHDR_ACK | TCPHDR_RST)) {
	case TCPHDR_SYN:
		if (!listen_syn(fdev, seg))
			return false;
		consume_skb(skb);
		return true;
	case TCPHDR_ACK:
		if (!cookie_valid(fdev, seg))
			return false;
		listen_ack(fdev, skb, seg);
		return true;
	default:
		return false;
	}
}

/* The peer an initiation's static key names, with a reference, if the
 * initiation authenticates as that peer's and is newer than its last.
 */
static struct ftv_peer *authenticate_initiation(struct ftv_device *fdev,
						const struct ftv_identity *identity,
						const struct ftv_msg_init *init,
						struct ftv_handshake *hs)
{
	u8 initiator[FTV_KEY_SIZE];
	struct ftv_peer *peer;

	if (!ftv_noise_consume_init(identity, init, hs, initiator))
		return NULL;
	peer = ftv_peer_lookup(fdev, initiator);
	if (peer && !ftv_noise_consume_init_peer(peer, identity, init, hs)) {
		ftv_peer_put(peer);
		peer = NULL;
	}
	return peer;
}

/*
 * Parse and authenticate an initiation, read back into @init
 * (FTV_INIT_MAX bytes) if it came shaped; @len says how much of it there
 * is. The peer comes with a reference.
 */
static struct ftv_peer *open_initiation(struct ftv_device *fdev,
					struct sk_buff *skb,
					struct ftv_segment *seg,
					struct ftv_handshake *hs,
					bool *prefer_pending, u8 *init,
					unsigned int *len)
{
	u8 buf[FTV_SHAPED_LEN(FTV_INIT_MAX)];
	struct ftv_identity *identity;
	struct ftv_peer *peer = NULL;
	unsigned int thoff;

	if (skb_linearize(skb) || !ftv_segment_parse(skb, seg, &thoff) ||
	    ftv_segment_parse_tcp(skb, seg, thoff)) {
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_MALFORMED);
		return NULL;
	}
	*len = min_t(unsigned int, seg->payload_len, sizeof(buf));
	memcpy(buf, skb->data + seg->payload_off, *len);
	*len = ftv_shape_read(buf, *len, FTV_INIT_MAX);
	memcpy(init, buf, *len);
	if (*len < sizeof(struct ftv_msg_init)) {
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_MALFORMED);
		return NULL;
	}
	rcu_read_lock_bh();
	identity = rcu_dereference_bh(fdev->identity);
	if (identity) {
		peer = authenticate_initiation(fdev, identity, (void *)init,
					       hs);
		*prefer_pending = peer && memcmp(identity->public_key,
						 peer->public_key,
						 FTV_KEY_SIZE) < 0;
	}
	rcu_read_unlock_bh();
	if (!peer)
		ftv_drops_inc(&fdev->drops, identity ? FTV_DROPS_A_BAD_AUTH :
				FTV_DROPS_A_NO_SESSION);
	return peer;
}

/*
 * A keyed responder connection and its response (FTV_SHAPED_LEN(
 * FTV_RESP_MAX) bytes of room), not yet published. The response is
 * shaped if this device shapes, whatever the initiation was: answering
 * in kind would tell a censor who strips an initiation's shaping, by a
 * random-looking answer, that the server is ftv. Every initiator reads a
 * shaped response, whatever its own setting.
 */
static struct ftv_conn *make_responder(struct ftv_device *fdev,
				       struct ftv_peer *peer,
				       const struct ftv_segment *seg,
				       struct ftv_handshake *hs, u8 *resp,
				       unsigned int *resp_len)
{
	struct ftv_session_keys keys;
	u8 msg[FTV_RESP_MAX];
	struct ftv_conn *conn;
	unsigned int pad;

	conn = ftv_conn_create(fdev, peer, &seg->tuple, NULL, GFP_KERNEL);
	if (!conn)
		return NULL;
	atomic_set(&conn->snd_nxt, seg->ack);
	atomic_set(&conn->snd_una, seg->ack);
	ftv_faketcp_rcv_reset(&conn->rcv, seg->seq + seg->payload_len);
	atomic_set(&conn->ts_recent, seg->opts.tsval);
	atomic_set(&conn->ip_id, get_random_u32());
	conn->ts_offset = listen_ts_offset(fdev, &seg->tuple);
	conn->peer_mss = cookie_mss(seg);
	pad = ftv_noise_pad(msg + sizeof(struct ftv_msg_resp));
	if (ftv_noise_create_resp(peer, hs, (struct ftv_msg_resp *)msg,
				  &keys) ||
	    ftv_session_set_keys(conn->session, &keys)) {
		memzero_explicit(&keys, sizeof(keys));
		ftv_conn_free(conn);
		return NULL;
	}
	*resp_len = sizeof(struct ftv_msg_resp) + pad;
	if (READ_ONCE(fdev->shape))
		*resp_len = ftv_shape_encode(msg, *resp_len, resp);
	else
		memcpy(resp, msg, *resp_len);
	return conn;
}

#ifdef DEBUG
/*
 * Debug builds let a test have the handshake worker wait, up to this
 * long, for a join's SYN held between finding its token and taking it
 * (connect.c, join_take_delay_ms) before it installs a session: what a
 * join may meet published in between is then made to happen.
 */
static unsigned int handshake_hold_ms;
module_param(handshake_hold_ms, uint, 0644);
MODULE_PARM_DESC(handshake_hold_ms,
		 "Wait up to this long for a held join SYN before installing");

static void debug_handshake_hold(void)
{
	unsigned int ms = min(READ_ONCE(handshake_hold_ms), 10000U);

	if (ms)
		ftv_conn_debug_join_wait(ms);
}
#else
static inline void debug_handshake_hold(void)
{
}
#endif

/* Responder: authenticate an initiation, answer it, install the session. */
static void handle_initiation(struct ftv_device *fdev, struct sk_buff *skb)
{
	bool prefer_pending = false, installed = false;
	u8 resp[FTV_SHAPED_LEN(FTV_RESP_MAX)];
	unsigned int resp_len, init_len;
	u8 init[FTV_INIT_MAX];
	struct ftv_segment seg;
	struct ftv_handshake hs;
	struct ftv_peer *peer;
	struct ftv_conn *conn;

	peer = open_initiation(fdev, skb, &seg, &hs, &prefer_pending, init,
			       &init_len);
	if (!peer)
		goto out;
	conn = make_responder(fdev, peer, &seg, &hs, resp, &resp_len);
	if (!conn)
		goto out;
	debug_handshake_hold();
	/* Once installed, @conn is only used under RCU: a newer session or
	 * the peer's removal may free it as soon as the peer's lock is
	 * dropped.
	 */
	rcu_read_lock_bh();
	installed = ftv_peer_install_conn(peer, conn, prefer_pending);
	if (installed) {
		ftv_send_payload(conn, resp, resp_len);
		ftv_conn_responded(conn);
		ftv_control_send_hello(conn);
		ftv_timers_connected(peer);
		ftv_peer_flush_staged(peer);
	}
	rcu_read_unlock_bh();
	if (installed)
		ftv_conn_debug_installed();
	else
		ftv_conn_free(conn);
out:
	memzero_explicit(&hs, sizeof(hs));
	memzero_explicit(resp, sizeof(resp));
	ftv_peer_put(peer);
	kfree_skb(skb);
}

/**
 * ftv_listen_handshake_worker - process queued initiations
 * @work: the device's handshake_work
 */
void ftv_listen_handshake_worker(struct work_struct *work)
{
	struct ftv_device *fdev = container_of(work, struct ftv_device,
					       handshake_work);
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&fdev->handshake_queue)) != NULL) {
		handle_initiation(fdev, skb);
		cond_resched();
	}
}
