// SPDX-License-Identifier: GPL-2.0
/*
 * The data path of received segments: a job of them is opened on some
 * CPU (queue.c), then, in the connection's order, each message is checked
 * against the replay window, what it says of both TCP streams is noted,
 * FEC keeps it or rebuilds from it, and the inner packet, its source
 * checked against the peer's allowed-ips, goes to the device's NAPI cell.
 *
 * Nothing a segment says is believed before it authenticates: only
 * authenticated data moves the acknowledgment numbers, timestamps and
 * endpoint that later segments are judged by.
 */

#include "open.h"
#include "allowedips.h"
#include "cell.h"
#include "conn.h"
#include "connect.h"
#include "control.h"
#include "crypto.h"
#include "device.h"
#include "fec.h"
#include "flow.h"
#include "peer.h"
#include "probe.h"
#include "segment.h"
#include "send.h"
#include "shape.h"
#include "timers.h"

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/tcp.h>

/**
 * ftv_open_track - note what an authenticated segment says of both streams
 * @conn: its connection
 * @seg: the segment: its sequence, acknowledgment and timestamp
 */
void ftv_open_track(struct ftv_conn *conn, const struct ftv_segment *seg)
{
	unsigned long now = jiffies;

	/* A gap given up as a keepalive came past it: the peer asked
	 * (flow.c) for what it cannot know we will never get, and only a
	 * message of ours on @conn tells it. Until 2026-12-01 only the
	 * session's tick, when the gap was still there to give up, made us
	 * owe one: a gap that the ask's own arrival gave up went unanswered,
	 * and the peer took the connection for stalled.
	 */
	if (ftv_faketcp_rcv_data(&conn->rcv, seg->seq,
				 seg->seq + seg->payload_len, now) &&
	    !READ_ONCE(conn->owes))
		WRITE_ONCE(conn->owes, true);
	if (READ_ONCE(conn->heard_at) != now)
		WRITE_ONCE(conn->heard_at, now);
	if (seg->flags & TCPHDR_ACK)
		ftv_conn_acked(conn, seg->ack);
	if (seg->opts.has_ts)
		atomic_set(&conn->ts_recent, seg->opts.tsval);
}

/* Pure ACKs keep a stateful firewall's view of our window moving when we
 * receive much and send little. With joins up, the acknowledgment is
 * sealed (a keepalive): the sender chooses among the connections by what
 * each has had acknowledged (flow.c), and believes only sealed segments.
 */
static void maybe_ack(struct ftv_conn *conn)
{
	int state = READ_ONCE(conn->state);

	/* A join that has not acknowledged its SYN-ACK gets nothing more:
	 * its address may not be the peer's (ftv_conn_join_up()). Nor does
	 * a dead connection, which may be such a join that the gc gave up
	 * on while this message was being opened: until 2026-12-02 that
	 * sent a pure ACK to an address the peer never proved its own
	 * (test_join_reflect.sh, once in a few runs).
	 */
	if (ftv_faketcp_rcv_nxt(&conn->rcv) - (u32)atomic_read(&conn->acked) <
	    FTV_ACK_EVERY_BYTES ||
	    state == FTV_CONN_JOIN_RECEIVED || state == FTV_CONN_DEAD)
		return;
	/* A probe's padding goes only where it is acknowledged in
	 * authenticated segments (probe.c): a sealed one here too.
	 */
	if (!READ_ONCE(conn->session->joins_up) && !READ_ONCE(conn->budget) &&
	    !READ_ONCE(conn->peer->probe.padding_asked))
		ftv_send_ack(conn);
	else if (ftv_flow_may_send(conn, 0))
		ftv_control_send_keepalive(conn);
}

/* The opener of a session also renews it when it mostly receives. */
static void maybe_rekey(struct ftv_conn *conn)
{
	struct ftv_session *s = conn->session;

	if (conn->is_initiator && READ_ONCE(conn->state) ==
	    FTV_CONN_ESTABLISHED &&
	    ftv_session_rekey_due(s, atomic64_read(&s->send_counter)))
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
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_MALFORMED, dev, skb);
		return false;
	}
	if (unlikely(ftv_allowedips_lookup(&fdev->allowedips, family,
					   saddr) != peer)) {
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_NOT_ALLOWED, dev, skb);
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
	s32 off = seg->seq - ftv_faketcp_rcv_nxt(&conn->rcv);

	return off > -2 * FTV_TCP_WINDOW && off < 2 * FTV_TCP_WINDOW;
}

/*
 * A join's first message, its opening, may come shaped (shape.c; the
 * sender's ftv_control_send_opening()): if it is, read it back where it
 * lies.
 * The segment's sequence numbers stay those of what was on the wire.
 * Return: false if it could not be made writable.
 */
static bool read_opening(struct sk_buff *skb, const struct ftv_segment *seg,
			 struct ftv_cb *cb)
{
	int len;

	if (skb_ensure_writable(skb, seg->payload_off + seg->payload_len))
		return false;
	len = ftv_shape_decode(skb->data + seg->payload_off, seg->payload_len,
			       skb->data + seg->payload_off);
	if (len < 0)
		return true;
	if (len < FTV_DATA_OVERHEAD)
		return false;
	cb->rx.payload_len = len;
	cb->rx.shaped = true;
	return true;
}

/**
 * ftv_open_stash - ready a data segment to be opened
 * @conn: its connection
 * @skb: the segment
 * @seg: what was parsed of it
 *
 * Checks that the connection is keyed, that the payload can be a sealed
 * message and that it lies in the window, and notes in the skb's cb what
 * the serial step will need.
 *
 * Return: true if it is to be opened (ftv_open_queue()); if not, it was
 * dropped and counted.
 */
bool ftv_open_stash(struct ftv_conn *conn, struct sk_buff *skb,
		    const struct ftv_segment *seg)
{
	struct ftv_peer *peer = conn->peer;
	struct net_device *dev = conn->device->dev;
	struct ftv_cb *cb = FTV_CB(skb);

	if (unlikely(!ftv_session_keyed(conn->session))) {
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_NO_SESSION, dev, skb);
		return false;
	}
	if (unlikely(seg->payload_len < FTV_DATA_OVERHEAD)) {
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_MALFORMED, dev, skb);
		return false;
	}
	if (unlikely(!in_window(conn, seg))) {
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_OUT_OF_WINDOW, dev, skb);
		return false;
	}
	cb->rx.payload_len = seg->payload_len;
	cb->rx.shaped = false;
	if (unlikely(seg->seq == conn->rcv_first && conn->join_index) &&
	    !read_opening(skb, seg, cb)) {
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_MALFORMED, dev, skb);
		return false;
	}
	cb->rx.seq = seg->seq;
	cb->rx.ack = seg->ack;
	cb->rx.flags = seg->flags;
	cb->rx.payload_off = seg->payload_off;
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
		  ftv_crypto_counter_mask(&conn->session->recv_hp, msg->sealed);
	if (unlikely(ftv_session_expired(conn->session, counter)))
		return FTV_OPEN_NO_SESSION;
	/* The AEAD request is the CPU's own: no softirq may take it. */
	local_bh_disable();
	ret = ftv_crypto_open(conn->session->recv_tfm, counter, msg->sealed,
			      sealed_len, conn->join_index);
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

/* Where FEC hands the messages it rebuilds: the connection's delivery. */
struct rebuilt_to {
	struct ftv_conn *conn;
	struct sk_buff_head *deliver;
};

/* A data message FEC rebuilt: delivered behind those that came. */
static void rebuilt(void *arg, u64 counter, struct sk_buff *skb)
{
	struct rebuilt_to *to = arg;

	/* Its original may still come: the window refuses it then. */
	if (!ftv_replay_check(&to->conn->session->replay, counter)) {
		consume_skb(skb);
		return;
	}
	if (!ready_inner(to->conn, skb))
		skb = NULL;
	ftv_session_deliver(to->conn->session, counter, skb, to->deliver);
}

/* An opened message that carries no packet (control.c). */
static void accept_control(struct ftv_conn *conn, u64 counter,
			   struct sk_buff *skb, struct sk_buff_head *deliver)
{
	struct rebuilt_to to = { .conn = conn, .deliver = deliver };
	struct ftv_control_rx rx = {
		.counter = counter,
		.rebuilt = rebuilt,
		.arg = &to,
	};

	/* What a probe's padding brought (probe.c); packets are not counted,
	 * so data pays nothing for it.
	 */
	WRITE_ONCE(conn->rx_sealed, conn->rx_sealed + skb->len +
		   FTV_DATA_OVERHEAD);
	ftv_control_accept(conn, skb, &rx);
	consume_skb(skb);
	/* Its counter may fill a gap that packets behind it wait at. */
	ftv_session_deliver(conn->session, counter, NULL, deliver);
}

/* What an opened segment, with its message's @counter, says of both TCP
 * streams, and what came on @conn by what authenticated (not by what the
 * header says).
 */
static void track_opened(struct ftv_conn *conn, const struct ftv_cb *cb,
			 u64 counter)
{
	struct ftv_segment seg;

	/* Only what the tracker reads: this runs for every segment. */
	seg.seq = cb->rx.seq;
	seg.ack = cb->rx.ack;
	seg.flags = cb->rx.flags;
	seg.payload_len = cb->rx.shaped ? FTV_SHAPED_LEN(cb->rx.payload_len) :
					  cb->rx.payload_len;
	seg.opts.has_ts = cb->rx.has_ts;
	seg.opts.tsval = cb->rx.tsval;
	ftv_open_track(conn, &seg);
	WRITE_ONCE(conn->rx_auth, conn->rx_auth + seg.payload_len);
	if (counter >= conn->rx_high)
		WRITE_ONCE(conn->rx_high, counter + 1);
}

/*
 * The serial step for one opened segment, in the connection's order: the
 * replay check, what it says of both TCP streams (and, for a job's @head,
 * of its sender's IP header), and the inner packet, which joins @deliver.
 * Return: whether it carried a packet.
 */
static bool accept_segment(struct ftv_conn *conn, struct sk_buff *skb,
			   bool head, struct sk_buff_head *deliver)
{
	struct rebuilt_to to = { .conn = conn, .deliver = deliver };
	struct ftv_fec_conn *fec = &conn->session->fec;
	struct ftv_peer *peer = conn->peer;
	struct net_device *dev = conn->device->dev;
	struct ftv_cb *cb = FTV_CB(skb);
	struct ftv_msg_data *msg;
	unsigned int due;
	u64 counter;

	if (unlikely(cb->rx.result != FTV_OPEN_OK)) {
		ftv_drops_skb(&peer->drops, open_drop[cb->rx.result], dev, skb);
		return false;
	}
	msg = (struct ftv_msg_data *)(skb->data + cb->rx.payload_off);
	counter = le64_to_cpu(msg->counter);
	if (unlikely(!ftv_replay_check(&conn->session->replay, counter))) {
		ftv_drops_skb(&peer->drops, FTV_DROPS_A_REPLAY, dev, skb);
		return false;
	}
	/* Only a job's first segment keeps its outer IP header. */
	if (head)
		WRITE_ONCE(conn->heard_ip, ftv_segment_ip_mark(skb));
	if (unlikely(!READ_ONCE(conn->session->confirmed)))
		ftv_peer_confirm(peer, conn);
	if (unlikely(READ_ONCE(conn->state) == FTV_CONN_JOIN_RECEIVED))
		ftv_conn_join_up(conn, cb->rx.flags, cb->rx.ack);
	else if (unlikely(READ_ONCE(conn->state) == FTV_CONN_RETIRED))
		ftv_conn_join_gone_again(conn);
	else if (unlikely(READ_ONCE(conn->answer_due) &&
			  READ_ONCE(conn->opening)))
		ftv_conn_probe_join_up(conn);
	due = ftv_fec_received(fec, counter, ftv_conn_tsval(conn),
			       cb->rx.tsecr, cb->rx.has_ts);
	if (due & FTV_FEC_DUE_HELLO)
		ftv_control_send_hello(conn);
	if (due & FTV_FEC_DUE_LOSS)
		ftv_control_send_loss(conn, ftv_fec_loss_to_report(fec));
	track_opened(conn, cb, counter);
	skb_pull(skb, cb->rx.payload_off + sizeof(*msg));
	skb_trim(skb, cb->rx.payload_len - FTV_DATA_OVERHEAD);
	if (!skb->len || !(skb->data[0] >> 4)) {
		/* No packet: a keepalive's padding, or FEC's messages. */
		accept_control(conn, counter, skb, deliver);
		return false;
	}
	/* What we send on @conn next acknowledges it, and our next
	 * keepalive there reports it (flow.c).
	 */
	if (!READ_ONCE(conn->owes))
		WRITE_ONCE(conn->owes, true);
	ftv_conn_report_due(conn);
	ftv_fec_keep(&conn->session->fec, counter, skb, rebuilt, &to);
	if (!ready_inner(conn, skb))
		skb = NULL;
	ftv_session_deliver(conn->session, counter, skb, deliver);
	return true;
}

/**
 * ftv_open_finish_job - deliver one receive job, after its crypto, in
 *	order
 * @head: the job, off its connection's serial queue (queue.c)
 *
 * Each message passes the replay check and updates both TCP streams'
 * state before its packet goes to the connection's cell; what failed is
 * dropped and counted. Drops the job's holds on its connection and on
 * its session.
 */
void ftv_open_finish_job(struct sk_buff *head)
{
	struct ftv_cb *cb = FTV_CB(head);
	struct ftv_conn *conn = cb->conn;
	struct ftv_session *s = conn->session;
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
			ftv_fec_dropped_here(&conn->session->fec, 1);
			kfree_skb(skb);
			continue;
		}
		if (FTV_CB(skb)->rx.result == FTV_OPEN_OK)
			got = true;
		data |= accept_segment(conn, skb, skb == head, &deliver);
	}
	ftv_fec_expire(&conn->session->fec);
	ftv_session_deliver_done(s);
	dropped = ftv_cell_deliver(conn->session->cell, &deliver);
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
	/* The session outlives the connection's last hold by its own. */
	ftv_job_release(&conn->jobs);
	ftv_job_release(&s->jobs);
}

/**
 * ftv_open_crypt - the crypto step of a receive job, for a crypt worker
 * @head: the job
 *
 * Each segment's own result is in its cb for the serial step.
 *
 * Return: FTV_JOB_DONE.
 */
enum ftv_job_state ftv_open_crypt(struct sk_buff *head)
{
	open_job(head);
	return FTV_JOB_DONE;
}

/**
 * ftv_open_serial - the serial queue a receive job is in
 * @head: the job
 *
 * Return: its connection's receive queue.
 */
struct ftv_serial *ftv_open_serial(struct sk_buff *head)
{
	return &FTV_CB(head)->conn->session->rx_queue;
}

/**
 * ftv_open_queue - queue a receive job to be opened and delivered in order
 * @conn: its connection
 * @head: the job's first segment, readied by ftv_open_stash(); the others
 *	are chained in its cb; consumed
 * @segs: how many segments the job has
 */
void ftv_open_queue(struct ftv_conn *conn, struct sk_buff *head,
		    unsigned int segs)
{
	struct ftv_serial *serial = &conn->session->rx_queue;
	struct ftv_device *fdev = conn->device;
	unsigned int len = head->len;
	enum ftv_crypt_where where;
	enum ftv_queued queued;

	/* The job holds its connection; its queue holds the session. */
	ftv_job_hold(&conn->jobs);
	queued = ftv_serial_add(serial, head, conn, segs, NULL);
	if (unlikely(queued == FTV_QUEUE_FULL)) {
		DEV_STATS_ADD(fdev->dev, rx_dropped, segs);
		ftv_fec_dropped_here(&conn->session->fec, segs);
		kfree_skb_list(FTV_CB(head)->more);
		kfree_skb(head);
		ftv_job_release(&conn->jobs);
		return;
	}
	where = ftv_queue_where(serial, queued, segs, len, true);
	if (where == FTV_CRYPT_INLINE) {
		open_job(head);
		ftv_job_done(head, FTV_JOB_DONE);
	} else {
		if (likely(ftv_crypt_queue_submit(&fdev->decrypt_queue, serial,
						  head, where)))
			return;
		/* The ring is full: ftv_open_finish_job() counts the drop. */
		ftv_job_done(head, FTV_JOB_DEAD);
	}
	ftv_serial_hand_on(serial);
}
