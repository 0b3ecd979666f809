// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving: a netfilter hook at PRE_ROUTING, ahead of defragmentation and
 * conntrack, takes every TCP segment that belongs to an ftv connection or
 * arrives at a device's listen port with a valid SYN token, so the host
 * stack never sees (or answers) them. What the message is follows from the
 * connection's state, not from any byte in the payload: the initiator's
 * first payload is the initiation, the responder's first is the response,
 * everything after is sealed data.
 *
 * Nothing a segment says is believed before it authenticates: only
 * authenticated data moves the acknowledgment numbers, timestamps and
 * endpoint that later segments are judged by (the SYN-ACK, which must
 * acknowledge our SYN token, is the one exception).
 */

#include "receive.h"
#include "conn.h"
#include "crypto.h"
#include "device.h"
#include "faketcp.h"
#include "fec.h"
#include "noise.h"
#include "peer.h"
#include "token.h"
#include "send.h"
#include "shape.h"
#include "timers.h"

#include <crypto/aead.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/siphash.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/netfilter.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/tcp.h>

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

/* Find the IP and TCP headers; false if this is not a TCP segment we could
 * own. skb->data is at the network header in PRE_ROUTING.
 */
static bool parse_addresses(struct sk_buff *skb, struct ftv_segment *seg,
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

/* The rest of the TCP header: options, numbers, payload bounds. */
static int parse_tcp(struct sk_buff *skb, struct ftv_segment *seg,
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

/* Everything a segment needs before it is looked at: sane lengths,
 * options, checksum.
 */
static int check_segment(struct sk_buff *skb, struct ftv_segment *seg,
			 unsigned int thoff, const struct nf_hook_state *state)
{
	if (trim_to_ip_len(skb) || parse_tcp(skb, seg, thoff))
		return -EINVAL;
	if (state && !checksum_ok(skb, thoff, state))
		return -EBADMSG;
	return 0;
}

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

	return isn == cookie(fdev, &seg->tuple, epoch) ||
	       isn == cookie(fdev, &seg->tuple, epoch - 1);
}

/* Answer a SYN without keeping any state: the sequence number we choose is
 * a keyed hash of the tuple and the time, checked when the initiation
 * arrives.
 */
static void answer_syn(struct ftv_device *fdev, const struct ftv_segment *seg)
{
	struct ftv_tcp_params params = {
		.seq = cookie(fdev, &seg->tuple, cookie_epoch()),
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

static void receive_listen(struct ftv_device *fdev, struct sk_buff *skb,
			   const struct ftv_segment *seg)
{
	if ((seg->flags & (TCPHDR_SYN | TCPHDR_ACK | TCPHDR_RST)) ==
	    TCPHDR_SYN) {
		answer_syn(fdev, seg);
		consume_skb(skb);
		return;
	}
	if (!seg->payload_len || (seg->flags & (TCPHDR_SYN | TCPHDR_RST))) {
		/* The initiator's ACK, or noise: nothing to do. */
		consume_skb(skb);
		return;
	}
	if (!(seg->flags & TCPHDR_ACK) || !cookie_valid(fdev, seg)) {
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_NO_SESSION);
		kfree_skb(skb);
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

static void drop(struct ftv_drops *drops, enum ftv_drops_attr reason,
		 struct net_device *dev, struct sk_buff *skb)
{
	ftv_drops_inc(drops, reason);
	DEV_STATS_INC(dev, rx_errors);
	kfree_skb(skb);
}

/* Record what an authenticated segment says of both sides' streams. */
static void track_peer(struct ftv_conn *conn, const struct ftv_segment *seg)
{
	ftv_tcp_rcv_data(&conn->rcv, seg->seq, seg->seq + seg->payload_len,
			 jiffies);
	if (seg->flags & TCPHDR_ACK)
		ftv_conn_acked(conn, seg->ack);
	if (seg->opts.has_ts)
		atomic_set(&conn->ts_recent, seg->opts.tsval);
}

/* Pure ACKs keep a stateful firewall's view of our window moving when we
 * receive much and send little.
 */
static void maybe_ack(struct ftv_conn *conn)
{
	if (ftv_tcp_rcv_nxt(&conn->rcv) - (u32)atomic_read(&conn->acked) >=
	    FTV_ACK_EVERY_BYTES)
		ftv_send_ack(conn);
}

/* The opener of a session also renews it when it mostly receives. */
static void maybe_rekey(struct ftv_conn *conn)
{
	if (conn->is_initiator && READ_ONCE(conn->state) ==
	    FTV_CONN_ESTABLISHED &&
	    ftv_conn_rekey_due(conn, atomic64_read(&conn->send_counter)))
		ftv_timers_want_connection(conn->peer);
}

static int inner_source(struct sk_buff *skb, int *family, const void **saddr)
{
	unsigned int len;

	if (skb->len < sizeof(struct iphdr))
		return -EINVAL;
	switch (skb->data[0] >> 4) {
	case 4: {
		struct iphdr *iph = (struct iphdr *)skb->data;

		len = ntohs(iph->tot_len);
		if (iph->ihl < 5 || len < iph->ihl * 4)
			return -EINVAL;
		skb->protocol = htons(ETH_P_IP);
		*family = AF_INET;
		*saddr = &iph->saddr;
		break;
	}
	case 6: {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)skb->data;

		if (skb->len < sizeof(*ip6h))
			return -EINVAL;
		len = ntohs(ip6h->payload_len) + sizeof(*ip6h);
		skb->protocol = htons(ETH_P_IPV6);
		*family = AF_INET6;
		*saddr = &ip6h->saddr;
		break;
	}
	default:
		return -EINVAL;
	}
	if (len > skb->len)
		return -EINVAL;
	return pskb_trim(skb, len);
}

/* Ready a decrypted inner packet for the ftv device; false if dropped. */
static bool ready_inner(struct ftv_conn *conn, struct sk_buff *skb)
{
	struct ftv_device *fdev = conn->device;
	struct ftv_peer *peer = conn->peer;
	struct net_device *dev = fdev->dev;
	const void *saddr;
	int family;

	if (unlikely(inner_source(skb, &family, &saddr))) {
		drop(&peer->drops, FTV_DROPS_A_MALFORMED, dev, skb);
		return false;
	}
	if (unlikely(ftv_allowedips_lookup(&fdev->allowedips, family,
					   saddr) != peer)) {
		drop(&peer->drops, FTV_DROPS_A_NOT_ALLOWED, dev, skb);
		return false;
	}
	skb_scrub_packet(skb, true);
	skb->dev = dev;
	skb->pkt_type = PACKET_HOST;
	skb_reset_mac_header(skb);
	skb_reset_network_header(skb);
	skb_probe_transport_header(skb);
	/* The AEAD tag covered every byte: nothing can have been corrupted
	 * since the sender checksummed it.
	 */
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb->csum_level = ~0;
	atomic64_add(skb->len, &peer->rx_bytes);
	dev_sw_netstats_rx_add(dev, skb->len);
	return true;
}

/*
 * Whether @seg's data lies where the peer's can: within twice the window
 * we advertise of what has arrived, either way (the peer sends no further
 * ahead than the window; what lags comes from reordering across CPUs and
 * paths, far less). Junk sent on a connection's tuple by someone who does
 * not see its segments passes with odds of 1 in 256 and so costs no
 * decryption, and cannot fill the device's crypt queue, which the peers
 * share (RFC 5961 treats RSTs the same way).
 */
static bool in_window(const struct ftv_conn *conn,
		      const struct ftv_segment *seg)
{
	s32 off = seg->seq - ftv_tcp_rcv_nxt(&conn->rcv);

	return off > -2 * FTV_TCP_WINDOW && off < 2 * FTV_TCP_WINDOW;
}

/*
 * Data on a keyed connection: note what the serial step will need in the
 * skb's cb. Return: true if it is to be opened; if not, it was dropped.
 */
static bool stash_data(struct ftv_conn *conn, struct sk_buff *skb,
		       const struct ftv_segment *seg)
{
	struct ftv_peer *peer = conn->peer;
	struct net_device *dev = conn->device->dev;
	struct ftv_cb *cb = FTV_CB(skb);

	if (unlikely(!ftv_conn_keyed(conn))) {
		drop(&peer->drops, FTV_DROPS_A_NO_SESSION, dev, skb);
		return false;
	}
	if (unlikely(seg->payload_len < FTV_DATA_OVERHEAD)) {
		drop(&peer->drops, FTV_DROPS_A_MALFORMED, dev, skb);
		return false;
	}
	if (unlikely(!in_window(conn, seg))) {
		drop(&peer->drops, FTV_DROPS_A_OUT_OF_WINDOW, dev, skb);
		return false;
	}
	cb->rx.seq = seg->seq;
	cb->rx.ack = seg->ack;
	cb->rx.flags = seg->flags;
	cb->rx.payload_off = seg->payload_off;
	cb->rx.payload_len = seg->payload_len;
	cb->rx.has_ts = seg->opts.has_ts;
	cb->rx.tsval = seg->opts.tsval;
	cb->rx.tsecr = seg->opts.tsecr;
	cb->more = NULL;
	return true;
}

/* The crypto step for one segment: unmask the counter, authenticate and
 * decrypt. The counter goes back in its place on the wire, in the clear,
 * for the serial step.
 */
static enum ftv_open_result open_segment(struct ftv_conn *conn,
					 struct sk_buff *skb)
{
	struct ftv_cb *cb = FTV_CB(skb);
	struct ftv_msg_data *msg;
	unsigned int sealed_len;
	u64 counter;
	int ret;

	/* Decrypting in place must not change what a packet tap's clone
	 * of this skb sees.
	 */
	if (unlikely(skb_linearize_cow(skb)))
		return FTV_OPEN_MALFORMED;
	msg = (struct ftv_msg_data *)(skb->data + cb->rx.payload_off);
	sealed_len = cb->rx.payload_len - sizeof(*msg);
	counter = le64_to_cpu(msg->counter) ^
		  ftv_crypto_counter_mask(&conn->recv_hp, msg->sealed);
	if (unlikely(ftv_conn_expired(conn, counter)))
		return FTV_OPEN_NO_SESSION;
	/* The AEAD request is the CPU's own: no softirq may take it. */
	local_bh_disable();
	ret = ftv_crypto_open(conn->recv_tfm, counter, msg->sealed,
			      sealed_len);
	local_bh_enable();
	if (unlikely(ret))
		return FTV_OPEN_BAD_AUTH;
	msg->counter = cpu_to_le64(counter);
	return FTV_OPEN_OK;
}

static void open_job(struct sk_buff *head)
{
	struct ftv_conn *conn = FTV_CB(head)->conn;
	struct sk_buff *skb;

	for (skb = head; skb; skb = ftv_job_next(head, skb))
		FTV_CB(skb)->rx.result = open_segment(conn, skb);
}

static const enum ftv_drops_attr open_drop[] = {
	[FTV_OPEN_MALFORMED] = FTV_DROPS_A_MALFORMED,
	[FTV_OPEN_NO_SESSION] = FTV_DROPS_A_NO_SESSION,
	[FTV_OPEN_BAD_AUTH] = FTV_DROPS_A_BAD_AUTH,
};

/* A data message FEC rebuilt: delivered behind those that came. */
static void rebuilt(struct ftv_conn *conn, u64 counter, struct sk_buff *skb,
		    void *deliver)
{
	/* Its original may still come: the window refuses it then. */
	if (!ftv_replay_check(&conn->replay, counter)) {
		consume_skb(skb);
		return;
	}
	if (ready_inner(conn, skb))
		__skb_queue_tail(deliver, skb);
}

/* An opened message that carries no packet (enum ftv_control_type). */
static void accept_control(struct ftv_conn *conn, u64 counter,
			   struct sk_buff *skb, struct sk_buff_head *deliver)
{
	u8 type = skb->len ? skb->data[0] : FTV_CONTROL_PAD;

	if (type == FTV_CONTROL_REPAIR)
		ftv_fec_rebuild(conn, counter, skb, rebuilt, deliver);
	else if (type == FTV_CONTROL_LOSS)
		ftv_fec_loss_report(conn, skb);
	else if (type == FTV_CONTROL_HELLO)
		ftv_fec_hello(conn, skb);
	consume_skb(skb);
}

/*
 * The serial step for one opened segment, in the connection's order: the
 * replay check, what it says of both TCP streams, and the inner packet,
 * which joins @deliver. Return: whether it carried a packet.
 */
static bool accept_segment(struct ftv_conn *conn, struct sk_buff *skb,
			   struct sk_buff_head *deliver)
{
	struct ftv_peer *peer = conn->peer;
	struct net_device *dev = conn->device->dev;
	struct ftv_cb *cb = FTV_CB(skb);
	struct ftv_msg_data *msg;
	struct ftv_segment seg;
	u64 counter;

	if (unlikely(cb->rx.result != FTV_OPEN_OK)) {
		drop(&peer->drops, open_drop[cb->rx.result], dev, skb);
		return false;
	}
	msg = (struct ftv_msg_data *)(skb->data + cb->rx.payload_off);
	counter = le64_to_cpu(msg->counter);
	if (unlikely(!ftv_replay_check(&conn->replay, counter))) {
		drop(&peer->drops, FTV_DROPS_A_REPLAY, dev, skb);
		return false;
	}
	if (unlikely(!READ_ONCE(conn->confirmed)))
		ftv_peer_confirm(peer, conn);
	if (ftv_fec_received(conn, counter, cb->rx.tsecr, cb->rx.has_ts))
		ftv_send_loss_report(conn, READ_ONCE(conn->fec.loss_ppm));
	seg.seq = cb->rx.seq;
	seg.ack = cb->rx.ack;
	seg.flags = cb->rx.flags;
	seg.payload_len = cb->rx.payload_len;
	seg.opts.has_ts = cb->rx.has_ts;
	seg.opts.tsval = cb->rx.tsval;
	track_peer(conn, &seg);
	skb_pull(skb, cb->rx.payload_off + sizeof(*msg));
	skb_trim(skb, cb->rx.payload_len - FTV_DATA_OVERHEAD);
	if (!skb->len || !(skb->data[0] >> 4)) {
		/* No packet: a keepalive's padding, or FEC's messages. */
		accept_control(conn, counter, skb, deliver);
		return false;
	}
	ftv_fec_keep(conn, counter, skb, rebuilt, deliver);
	if (ready_inner(conn, skb))
		__skb_queue_tail(deliver, skb);
	return true;
}

/**
 * ftv_receive_finish_job - deliver one receive job, after its crypto, in
 *	order
 * @head: the job, off its connection's serial queue (queue.c)
 *
 * Each message passes the replay check and updates both TCP streams'
 * state before its packet goes to the connection's cell; what failed is
 * dropped and counted. Drops the job's hold on its connection.
 */
void ftv_receive_finish_job(struct sk_buff *head)
{
	struct ftv_cb *cb = FTV_CB(head);
	struct ftv_conn *conn = cb->conn;
	bool ok = atomic_read(&cb->state) == FTV_JOB_DONE &&
		  READ_ONCE(conn->state) != FTV_CONN_DEAD;
	struct sk_buff *skb, *next = cb->more;
	struct sk_buff_head deliver;
	bool got = false, data = false;
	unsigned int dropped;

	__skb_queue_head_init(&deliver);
	for (skb = head; skb; skb = next) {
		next = skb == head ? next : skb->next;
		skb->next = NULL;
		if (!ok) {
			DEV_STATS_INC(conn->device->dev, rx_dropped);
			kfree_skb(skb);
			continue;
		}
		if (FTV_CB(skb)->rx.result == FTV_OPEN_OK)
			got = true;
		data |= accept_segment(conn, skb, &deliver);
	}
	ftv_fec_expire(conn);
	dropped = ftv_rx_cell_deliver(conn->rx_cell, &deliver);
	if (unlikely(dropped)) {
		atomic64_add(dropped,
			     &conn->peer->drops.count[FTV_DROPS_A_BACKLOG]);
		DEV_STATS_ADD(conn->device->dev, rx_dropped, dropped);
	}
	if (got) {
		ftv_timers_received(conn->peer, data);
		maybe_ack(conn);
		maybe_rekey(conn);
	}
	ftv_conn_job_put(conn);
}

/**
 * ftv_receive_worker - open receive jobs on this CPU, and deliver those
 *	that are next in their connection's order
 * @work: the CPU's worker of the device's decrypt queue
 */
void ftv_receive_worker(struct work_struct *work)
{
	struct ftv_crypt_queue *queue = ftv_crypt_queue_of(work);
	struct ftv_conn *conn;
	struct sk_buff *head;

	while ((head = ftv_crypt_queue_next(queue)) != NULL) {
		conn = FTV_CB(head)->conn;
		/* Once it is marked, another CPU may deliver the job and
		 * drop its hold on the connection.
		 */
		ftv_conn_job_get(conn);
		open_job(head);
		ftv_job_done(head, FTV_JOB_DONE);
		ftv_serial_hand_on(&conn->rx_queue);
		ftv_conn_job_put(conn);
	}
}

/*
 * Queue a job of @segs segments (@head, and those chained in its cb) to be
 * opened on some CPU and delivered in order.
 */
static void queue_open(struct ftv_conn *conn, struct sk_buff *head,
		       unsigned int segs)
{
	struct ftv_device *fdev = conn->device;
	enum ftv_queued queued;

	queued = ftv_serial_add(&conn->rx_queue, head, conn, segs, NULL);
	if (unlikely(queued == FTV_QUEUE_FULL)) {
		DEV_STATS_ADD(fdev->dev, rx_dropped, segs);
		kfree_skb_list(FTV_CB(head)->more);
		kfree_skb(head);
		return;
	}
	if (ftv_queue_inline(queued, segs)) {
		open_job(head);
		ftv_job_done(head, FTV_JOB_DONE);
	} else {
		if (likely(ftv_crypt_queue_submit(&fdev->decrypt_queue, head)))
			return;
		/* The ring is full: finish_job() counts the drop. */
		ftv_job_done(head, FTV_JOB_DEAD);
	}
	ftv_serial_hand_on(&conn->rx_queue);
}

/* Initiator: the SYN-ACK arrived; acknowledge it and send the initiation. */
static void receive_synack(struct ftv_conn *conn, struct sk_buff *skb,
			   const struct ftv_segment *seg)
{
	bool ours = (seg->flags & TCPHDR_SYN) &&
		    ftv_conn_synack(conn, seg->ack, seg->seq, &seg->opts);

	consume_skb(skb);
	if (!ours)
		return;
	ftv_send_ack(conn);
	ftv_send_payload(conn, conn->init_msg, conn->init_len);
}

/* Open what arrived before the response, now that the keys are known. */
static void receive_early(struct ftv_conn *conn)
{
	struct ftv_segment seg;
	struct sk_buff *skb;
	unsigned int thoff;

	while ((skb = skb_dequeue(&conn->early)) != NULL) {
		if (!parse_addresses(skb, &seg, &thoff) ||
		    parse_tcp(skb, &seg, thoff))
			kfree_skb(skb);
		else if (stash_data(conn, skb, &seg))
			queue_open(conn, skb, 1);
	}
}

static void hold_early(struct ftv_conn *conn, struct sk_buff *skb)
{
	if (skb_queue_len(&conn->early) >= FTV_EARLY_MAX) {
		drop(&conn->peer->drops, FTV_DROPS_A_NO_SESSION,
		     conn->device->dev, skb);
		return;
	}
	skb_queue_tail(&conn->early, skb);
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
		*hs = conn->handshake;
	spin_unlock_bh(&peer->lock);
	return ok;
}

/* The response authenticated: the session starts. */
static void response_done(struct ftv_conn *conn)
{
	struct ftv_peer *peer = conn->peer;

	memzero_explicit(&conn->handshake, sizeof(conn->handshake));
	ftv_timers_connected(peer);
	/* The first sealed message: what we can do. It is also data for
	 * the responder, which counts the session only once some arrives.
	 */
	ftv_send_hello(conn);
	ftv_peer_flush_staged(peer);
	receive_early(conn);
}

/*
 * A handshake message, read back in place if it came shaped (shape.c):
 * @buf holds the first @len bytes of the payload (those that fit), and
 * gets at most @room bytes of the message. Return: its length.
 */
static unsigned int read_opening(u8 *buf, unsigned int len,
				 unsigned int room)
{
	int n = -EINVAL;

	/* Each character read is written back at or before its place, and
	 * nothing is written unless all of @buf is shaped.
	 */
	if (len <= FTV_SHAPED_LEN(room))
		n = ftv_shape_decode(buf, len, buf);
	return n >= 0 ? n : min(len, room);
}

/* Initiator: the response arrived; finish the key exchange. */
static void receive_response(struct ftv_conn *conn, struct sk_buff *skb,
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
	if (seg->seq != conn->resp_seq) {
		hold_early(conn, skb);
		return;
	}
	len = min_t(unsigned int, seg->payload_len, sizeof(msg));
	if (!skb_copy_bits(skb, seg->payload_off, msg, len))
		len = read_opening(msg, len, FTV_RESP_MAX);
	else
		len = 0;
	if (len < sizeof(resp)) {
		drop(&peer->drops, FTV_DROPS_A_MALFORMED, fdev->dev, skb);
		return;
	}
	memcpy(&resp, msg, sizeof(resp));
	identity = rcu_dereference(fdev->identity);
	if (!pending_handshake(conn, &hs) || !identity) {
		drop(&peer->drops, FTV_DROPS_A_NO_SESSION, fdev->dev, skb);
		goto out;
	}
	/* Two X25519 operations, here in softirq: whoever sees the tuple
	 * and the sequence number can make us do them, as with
	 * initiations, and is held to the same rate.
	 */
	if (!ftv_ratelimiter_allow(&fdev->ratelimiter, &seg->tuple.remote)) {
		drop(&peer->drops, FTV_DROPS_A_RATELIMITED, fdev->dev, skb);
		goto out;
	}
	if (ftv_noise_consume_resp(peer, identity, &hs, &resp, &keys)) {
		drop(&peer->drops, FTV_DROPS_A_BAD_AUTH, fdev->dev, skb);
		goto out;
	}
	ok = !ftv_conn_set_keys(conn, &keys);
	track_peer(conn, seg);
	consume_skb(skb);
	if (ok && ftv_peer_install_conn(peer, conn, false))
		response_done(conn);
out:
	memzero_explicit(&keys, sizeof(keys));
	memzero_explicit(&hs, sizeof(hs));
}

/*
 * A segment of @conn's. Return: true for data to open (stash_data() has
 * readied it); anything else is handled, and @skb consumed, here.
 */
static bool receive_conn(struct ftv_conn *conn, struct sk_buff *skb,
			 const struct ftv_segment *seg)
{
	int state = READ_ONCE(conn->state);

	if (state == FTV_CONN_LINGER || state == FTV_CONN_DEAD ||
	    (seg->flags & (TCPHDR_RST | TCPHDR_FIN))) {
		/* Nobody but a peer's key can end a session: a RST or FIN
		 * is ignored, whoever sent it.
		 */
		consume_skb(skb);
		return false;
	}
	if (state == FTV_CONN_SYN_SENT) {
		receive_synack(conn, skb, seg);
		return false;
	}
	if (!seg->payload_len || (seg->flags & TCPHDR_SYN)) {
		/* A pure ACK or a stray SYN proves nothing: it changes
		 * nothing either.
		 */
		consume_skb(skb);
		return false;
	}
	if (state == FTV_CONN_HANDSHAKE_SENT) {
		receive_response(conn, skb, seg);
		return false;
	}
	return stash_data(conn, skb, seg);
}

/* @state is NULL for the segments of a superpacket that GRO or the sender
 * on this host already checksummed.
 */
static void receive_segment(struct ftv_device *fdev, struct ftv_conn *conn,
			    struct sk_buff *skb, struct ftv_segment *seg,
			    unsigned int thoff,
			    const struct nf_hook_state *state)
{
	struct ftv_drops *drops = conn ? &conn->peer->drops : &fdev->drops;

	if (check_segment(skb, seg, thoff, state)) {
		drop(drops, FTV_DROPS_A_MALFORMED, fdev->dev, skb);
		return;
	}
	if (!conn)
		receive_listen(fdev, skb, seg);
	else if (receive_conn(conn, skb, seg))
		queue_open(conn, skb, 1);
}

/* The device (and connection, if any) a segment to @tuple belongs to. */
static bool find_owner(struct list_head *devices,
		       const struct ftv_tuple *tuple,
		       struct ftv_device **fdev, struct ftv_conn **conn)
{
	struct ftv_device *dev;
	u16 port;

	list_for_each_entry_rcu(dev, devices, device_list) {
		*conn = ftv_conn_lookup(dev, tuple);
		port = READ_ONCE(dev->listen_port);
		if (*conn || (port && tuple->local_port == htons(port))) {
			*fdev = dev;
			return true;
		}
	}
	return false;
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
 * On the listen port, without a connection, take only a SYN whose token
 * (token.c) is valid and new, and the initiator's segments that carry our
 * SYN-ACK's cookie. Everything else is the host's, checksum failures
 * included: a prober finds whatever the host runs on the port, or a closed
 * port, as anywhere else.
 */
static bool listen_claims(struct ftv_device *fdev, struct sk_buff *skb,
			  struct ftv_segment *seg, unsigned int thoff,
			  const struct nf_hook_state *state)
{
	if (skb_is_gso(skb) || check_segment(skb, seg, thoff, state))
		return false;
	switch (seg->flags & (TCPHDR_SYN | TCPHDR_ACK | TCPHDR_RST)) {
	case TCPHDR_SYN:
		if (syn_claimed(fdev, seg))
			return true;
		/* The host answers it; the count shows the probing. */
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_SYN_REFUSED);
		return false;
	case TCPHDR_ACK:
		return cookie_valid(fdev, seg);
	default:
		return false;
	}
}

/**
 * struct ftv_job_list - a receive job being put together
 * @head: its first segment
 * @tail: its last, if it has more than one
 * @n: its number of segments
 */
struct ftv_job_list {
	struct sk_buff *head;
	struct sk_buff *tail;
	unsigned int n;
};

/* Add @skb to the job @j is building. */
static void job_add(struct ftv_job_list *j, struct sk_buff *skb)
{
	if (!j->head)
		j->head = skb;
	else if (!j->tail)
		FTV_CB(j->head)->more = skb;
	else
		j->tail->next = skb;
	if (skb != j->head)
		j->tail = skb;
	++j->n;
}

/*
 * Whether a superpacket is laid out as our sender builds it (send.c,
 * chain()) and as veth, or GRO, hands it on: the headers and the first
 * message in the head, each later message alone in a linear buffer on
 * the frag list, none of them shared with anyone (a packet tap's clone).
 */
static bool splittable(const struct sk_buff *skb,
		       const struct ftv_segment *seg)
{
	unsigned int mss = skb_shinfo(skb)->gso_size;
	const struct sk_buff *m;

	if (!skb_has_frag_list(skb) || skb_shinfo(skb)->nr_frags ||
	    skb_cloned(skb) || skb_headlen(skb) != seg->payload_off + mss ||
	    (seg->flags & (TCPHDR_SYN | TCPHDR_RST | TCPHDR_FIN)))
		return false;
	skb_walk_frags(skb, m) {
		if (skb_shared(m) || skb_cloned(m) || skb_is_nonlinear(m) ||
		    m->len > mss || (m->next && m->len != mss))
			return false;
	}
	return true;
}

/*
 * Take such a superpacket apart where it lies: the head keeps the first
 * message, each buffer of the frag list becomes a message of its own,
 * with the sequence number its place gives it and the rest of the
 * head's header. No copy, no checksum: the sender on this host or GRO
 * vouched for them.
 */
static void split_in_place(struct ftv_conn *conn, struct sk_buff *skb,
			   struct ftv_segment *seg, struct ftv_job_list *j)
{
	struct sk_buff *m = skb_shinfo(skb)->frag_list, *next;
	unsigned int mss = skb_shinfo(skb)->gso_size;
	struct ftv_segment one = *seg;

	skb_shinfo(skb)->frag_list = NULL;
	skb->len = skb_headlen(skb);
	skb->data_len = 0;
	skb_gso_reset(skb);
	one.payload_len = mss;
	if (stash_data(conn, skb, &one))
		job_add(j, skb);
	one.payload_off = 0;
	for (; m; m = next) {
		next = m->next;
		m->next = NULL;
		/* A sender on this host hands its socket's charge to the
		 * head (send.c), which let go of it already; another's
		 * segments may still carry their own.
		 */
		skb_orphan(m);
		one.seq += one.payload_len;
		one.payload_len = m->len;
		if (stash_data(conn, m, &one))
			job_add(j, m);
	}
}

/*
 * GRO on the underlay, or our own sender, may have merged several of our
 * segments into one superpacket; each carries a message of its own, so
 * split them back, into one job. GRO merges only segments of one flow,
 * so all of them are @conn's.
 */
static void receive_gso(struct ftv_device *fdev, struct ftv_conn *conn,
			struct sk_buff *skb, struct ftv_segment *seg,
			unsigned int thoff)
{
	struct ftv_job_list j = { };
	struct sk_buff *segs, *next, *one;
	int state = READ_ONCE(conn->state);

	if (!check_segment(skb, seg, thoff, NULL) && ftv_conn_keyed(conn) &&
	    (state == FTV_CONN_ESTABLISHED || state == FTV_CONN_RETIRED) &&
	    splittable(skb, seg)) {
		split_in_place(conn, skb, seg, &j);
		goto queue;
	}
	/* The checksums were checked or are the local sender's to fill in,
	 * and the data is opened where it lies: ask for neither a copy nor
	 * a checksum.
	 */
	segs = skb_gso_segment(skb, NETIF_F_SG | NETIF_F_HW_CSUM);
	if (IS_ERR_OR_NULL(segs)) {
		drop(&conn->peer->drops, FTV_DROPS_A_MALFORMED, fdev->dev, skb);
		return;
	}
	consume_skb(skb);
	/* The data segments make one job; the rest is handled here. */
	skb_list_walk_safe(segs, one, next) {
		unsigned int off;

		skb_mark_not_on_list(one);
		if (!parse_addresses(one, seg, &off) ||
		    check_segment(one, seg, off, NULL)) {
			drop(&conn->peer->drops, FTV_DROPS_A_MALFORMED,
			     fdev->dev, one);
			continue;
		}
		if (receive_conn(conn, one, seg))
			job_add(&j, one);
	}
queue:
	if (j.head)
		queue_open(conn, j.head, j.n);
}

/**
 * struct ftv_icmp_quote - what an ICMP error says about one of our segments
 * @tuple: the segment's tuple, seen from this side
 * @seq: its sequence number
 * @mtu: the MTU the error reports
 */
struct ftv_icmp_quote {
	struct ftv_tuple tuple;
	u32 seq;
	u32 mtu;
};

/* Fill @q from the IP header and first 8 TCP bytes quoted at @off. */
static bool read_quote(struct sk_buff *skb, unsigned int off,
		       unsigned int ip_len, struct ftv_icmp_quote *q)
{
	const __be16 *ports;

	if (!pskb_may_pull(skb, off + ip_len + 8))
		return false;
	ports = (const __be16 *)(skb->data + off + ip_len);
	q->tuple.local_port = ports[0];
	q->tuple.remote_port = ports[1];
	q->seq = get_unaligned_be32(ports + 2);
	return true;
}

static bool quote4(struct sk_buff *skb, struct ftv_icmp_quote *q)
{
	const struct iphdr *iph = ip_hdr(skb), *inner;
	const struct icmphdr *icmph;
	unsigned int off = iph->ihl * 4;

	if (iph->protocol != IPPROTO_ICMP ||
	    !pskb_may_pull(skb, off + sizeof(*icmph) + sizeof(*inner)))
		return false;
	icmph = (struct icmphdr *)(skb->data + off);
	if (icmph->type != ICMP_DEST_UNREACH || icmph->code != ICMP_FRAG_NEEDED)
		return false;
	q->mtu = ntohs(icmph->un.frag.mtu);
	off += sizeof(*icmph);
	inner = (struct iphdr *)(skb->data + off);
	if (inner->protocol != IPPROTO_TCP || inner->ihl < 5)
		return false;
	q->tuple.family = AF_INET;
	q->tuple.local.s6_addr32[0] = inner->saddr;
	q->tuple.remote.s6_addr32[0] = inner->daddr;
	return read_quote(skb, off, inner->ihl * 4, q);
}

static bool quote6(struct sk_buff *skb, struct ftv_icmp_quote *q)
{
	const struct ipv6hdr *ip6h = ipv6_hdr(skb), *inner;
	const struct icmp6hdr *icmp6h;
	unsigned int off = sizeof(*ip6h);

	if (ip6h->nexthdr != IPPROTO_ICMPV6 ||
	    !pskb_may_pull(skb, off + sizeof(*icmp6h) + sizeof(*inner)))
		return false;
	icmp6h = (struct icmp6hdr *)(skb->data + off);
	if (icmp6h->icmp6_type != ICMPV6_PKT_TOOBIG)
		return false;
	q->mtu = ntohl(icmp6h->icmp6_mtu);
	off += sizeof(*icmp6h);
	inner = (struct ipv6hdr *)(skb->data + off);
	if (inner->nexthdr != IPPROTO_TCP)
		return false;
	q->tuple.family = AF_INET6;
	q->tuple.local = inner->saddr;
	q->tuple.remote = inner->daddr;
	return read_quote(skb, off, sizeof(*inner), q);
}

/*
 * Note a smaller path MTU on the very route our segments take (the
 * device's fwmark, the tuple's addresses; both families), as TCP does for
 * its sockets. The route's update function reads the flow from a packet:
 * we give it a header of our own segment, marked as we mark them.
 */
static void lower_path_mtu(struct ftv_device *fdev, struct ftv_conn *conn,
			   u32 mtu)
{
	struct ftv_tuple tuple = conn->tuple;
	struct dst_entry *dst;
	struct sk_buff *probe;

	dst = ftv_send_route(fdev, READ_ONCE(fdev->creating_net), &tuple,
			     &conn->dst_cache);
	if (IS_ERR(dst))
		return;
	probe = alloc_skb(sizeof(struct ipv6hdr), GFP_ATOMIC);
	if (probe) {
		skb_reset_network_header(probe);
		if (tuple.family == AF_INET) {
			struct iphdr *iph = skb_put_zero(probe, sizeof(*iph));

			iph->version = 4;
			iph->ihl = 5;
			iph->protocol = IPPROTO_TCP;
			iph->saddr = tuple.local.s6_addr32[0];
			iph->daddr = tuple.remote.s6_addr32[0];
			probe->protocol = htons(ETH_P_IP);
		} else {
			struct ipv6hdr *ip6h = skb_put_zero(probe,
							    sizeof(*ip6h));

			ip6h->version = 6;
			ip6h->nexthdr = IPPROTO_TCP;
			ip6h->saddr = tuple.local;
			ip6h->daddr = tuple.remote;
			probe->protocol = htons(ETH_P_IPV6);
		}
		probe->dev = dst->dev;
		probe->mark = READ_ONCE(fdev->fwmark);
		if (dst->ops->update_pmtu)
			dst->ops->update_pmtu(dst, NULL, probe, mtu, false);
		kfree_skb(probe);
	}
	dst_release(dst);
	dst_cache_reset(&conn->dst_cache);
}

/*
 * An ICMP "fragmentation needed" or "packet too big" about one of our
 * segments: no socket exists for the host to note the smaller path MTU
 * with, so note it here. As Linux TCP does, it is believed only if it
 * quotes a live connection and a byte we sent that is not acknowledged
 * yet: an off-path forger would have to guess both. The sending path then
 * tells inner senders the size that fits. The ICMP message itself
 * continues to the host stack.
 */
static void learn_path_mtu(struct list_head *devices, struct sk_buff *skb)
{
	struct ftv_icmp_quote q = { };
	struct ftv_device *fdev;
	struct ftv_conn *conn;
	bool ok;

	if (skb->protocol == htons(ETH_P_IP))
		ok = quote4(skb, &q);
	else if (skb->protocol == htons(ETH_P_IPV6))
		ok = quote6(skb, &q);
	else
		ok = false;
	if (!ok || !find_owner(devices, &q.tuple, &fdev, &conn) || !conn)
		return;
	ok = READ_ONCE(conn->state) >= FTV_CONN_SYN_SENT &&
	     READ_ONCE(conn->state) <= FTV_CONN_ESTABLISHED &&
	     ftv_conn_sent_seq(conn, q.seq);
	if (!ok) {
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_ICMP_IGNORED);
		return;
	}
	lower_path_mtu(fdev, conn, q.mtu);
}

/**
 * ftv_receive_hook - take the segments that belong to ftv
 * @priv: the creating namespace's list of ftv devices
 * @skb: a packet entering the creating namespace
 * @state: hook state
 *
 * Return: NF_STOLEN for ftv's segments (consumed here), else NF_ACCEPT.
 */
unsigned int ftv_receive_hook(void *priv, struct sk_buff *skb,
			      const struct nf_hook_state *state)
{
	struct list_head *devices = priv;
	struct ftv_device *fdev = NULL;
	struct ftv_conn *conn = NULL;
	struct ftv_segment seg;
	unsigned int thoff;

	if (!parse_addresses(skb, &seg, &thoff)) {
		learn_path_mtu(devices, skb);
		return NF_ACCEPT;
	}
	if (!find_owner(devices, &seg.tuple, &fdev, &conn) ||
	    (!conn && !listen_claims(fdev, skb, &seg, thoff, state)))
		return NF_ACCEPT;
	/* skb is ours from here on, whatever happens. */
	if (unlikely(skb_is_gso(skb)))
		receive_gso(fdev, conn, skb, &seg, thoff);
	else
		receive_segment(fdev, conn, skb, &seg, thoff, state);
	return NF_STOLEN;
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

	if (skb_linearize(skb) || !parse_addresses(skb, seg, &thoff) ||
	    parse_tcp(skb, seg, thoff)) {
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_MALFORMED);
		return NULL;
	}
	*len = min_t(unsigned int, seg->payload_len, sizeof(buf));
	memcpy(buf, skb->data + seg->payload_off, *len);
	*len = read_opening(buf, *len, FTV_INIT_MAX);
	memcpy(init, buf, *len);
	if (*len < sizeof(struct ftv_msg_init)) {
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_MALFORMED);
		return NULL;
	}
	rcu_read_lock_bh();
	identity = rcu_dereference_bh(fdev->identity);
	if (identity) {
		peer = ftv_noise_consume_init(fdev, identity, (void *)init,
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

	conn = ftv_conn_create(fdev, peer, &seg->tuple, GFP_KERNEL);
	if (!conn)
		return NULL;
	atomic_set(&conn->snd_nxt, seg->ack);
	atomic_set(&conn->snd_una, seg->ack);
	ftv_tcp_rcv_reset(&conn->rcv, seg->seq + seg->payload_len);
	atomic_set(&conn->ts_recent, seg->opts.tsval);
	atomic_set(&conn->ip_id, get_random_u32());
	conn->ts_offset = listen_ts_offset(fdev, &seg->tuple);
	pad = ftv_noise_pad(msg + sizeof(struct ftv_msg_resp));
	if (ftv_noise_create_resp(peer, hs, (struct ftv_msg_resp *)msg,
				  &keys) ||
	    ftv_conn_set_keys(conn, &keys)) {
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
	/* Once installed, @conn is only used under RCU: a newer session or
	 * the peer's removal may free it as soon as the peer's lock is
	 * dropped.
	 */
	rcu_read_lock_bh();
	installed = ftv_peer_install_conn(peer, conn, prefer_pending);
	if (installed) {
		ftv_send_payload(conn, resp, resp_len);
		ftv_conn_responded(conn);
		ftv_send_hello(conn);
		ftv_timers_connected(peer);
		ftv_peer_flush_staged(peer);
	}
	rcu_read_unlock_bh();
	if (!installed)
		ftv_conn_free(conn);
out:
	memzero_explicit(&hs, sizeof(hs));
	memzero_explicit(resp, sizeof(resp));
	ftv_peer_put(peer);
	kfree_skb(skb);
}

/**
 * ftv_receive_handshake_worker - process queued initiations
 * @work: the device's handshake_work
 */
void ftv_receive_handshake_worker(struct work_struct *work)
{
	struct ftv_device *fdev = container_of(work, struct ftv_device,
					       handshake_work);
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&fdev->handshake_queue)) != NULL) {
		handle_initiation(fdev, skb);
		cond_resched();
	}
}
