// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving: a netfilter hook at PRE_ROUTING, ahead of defragmentation and
 * conntrack, takes every TCP segment that belongs to an ftv connection or
 * arrives at a device's listen port with a valid SYN token, so the host
 * stack never sees (or answers) them. This file owns the hook: which
 * segments are ftv's, and what each is, which follows from its
 * connection's state, not from any byte in the payload: the initiator's
 * first payload is the initiation (listen.c), the responder's first is the
 * response (handshake.c), everything after is sealed data (open.c). A
 * superpacket of ours, from GRO or a sender on this host, is taken apart
 * here into one job. ICMP errors go to icmp.c.
 *
 * Nothing a segment says is believed before it authenticates (the
 * SYN-ACK, which must acknowledge our SYN token, is the one exception).
 */

#include "receive.h"
#include "conn.h"
#include "device.h"
#include "handshake.h"
#include "icmp.h"
#include "listen.h"
#include "open.h"
#include "peer.h"
#include "segment.h"

#include <linux/netfilter.h>
#include <linux/skbuff.h>
#include <net/tcp.h>

/*
 * Nobody but a peer's key can end a session, and ftv sends neither RST nor
 * FIN: one on @conn is ignored, whoever sent it, and counted with what its
 * IP header says beside the peer's own last one there, for ftvctl show to
 * tell an injector on the path from the peer's host.
 */
static void receive_reset(struct ftv_conn *conn, struct sk_buff *skb,
			  const struct ftv_segment *seg)
{
	struct ftv_peer *peer = conn->peer;

	ftv_drops_inc(&peer->drops, seg->flags & TCPHDR_RST ?
		      FTV_DROPS_A_RST : FTV_DROPS_A_FIN);
	WRITE_ONCE(peer->reset_seen, ftv_segment_ip_mark(skb) |
		   (u64)READ_ONCE(conn->heard_ip) << 32);
	consume_skb(skb);
}

/*
 * A segment of @conn's. Return: true for data to open (ftv_open_stash() has
 * readied it); anything else is handled, and @skb consumed, here.
 */
static bool receive_conn(struct ftv_conn *conn, struct sk_buff *skb,
			 const struct ftv_segment *seg)
{
	int state = READ_ONCE(conn->state);

	if (seg->flags & (TCPHDR_RST | TCPHDR_FIN)) {
		receive_reset(conn, skb, seg);
		return false;
	}
	if (state == FTV_CONN_LINGER || state == FTV_CONN_DEAD) {
		consume_skb(skb);
		return false;
	}
	if (state == FTV_CONN_SYN_SENT) {
		ftv_handshake_synack(conn, skb, seg);
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
		ftv_handshake_response(conn, skb, seg);
		return false;
	}
	return ftv_open_stash(conn, skb, seg);
}

/* @state is NULL for the segments of a superpacket that GRO or the sender
 * on this host already checksummed.
 */
static void receive_segment(struct ftv_device *fdev, struct ftv_conn *conn,
			    struct sk_buff *skb, struct ftv_segment *seg,
			    unsigned int thoff,
			    const struct nf_hook_state *state)
{
	if (ftv_segment_check(skb, seg, thoff, state)) {
		ftv_drops_skb(&conn->peer->drops, FTV_DROPS_A_MALFORMED,
			      fdev->dev, skb);
		return;
	}
	if (receive_conn(conn, skb, seg))
		ftv_open_queue(conn, skb, 1);
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
	if (ftv_open_stash(conn, skb, &one))
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
		if (ftv_open_stash(conn, m, &one))
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

	if (ftv_segment_strip_jumbo(skb, &thoff)) {
		ftv_drops_skb(&conn->peer->drops, FTV_DROPS_A_MALFORMED, fdev->dev, skb);
		return;
	}
	if (!ftv_segment_check(skb, seg, thoff, NULL) &&
	    ftv_session_keyed(conn->session) &&
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
		ftv_drops_skb(&conn->peer->drops, FTV_DROPS_A_MALFORMED, fdev->dev, skb);
		return;
	}
	consume_skb(skb);
	/* The data segments make one job; the rest is handled here. */
	skb_list_walk_safe(segs, one, next) {
		unsigned int off;

		skb_mark_not_on_list(one);
		if (!ftv_segment_parse(one, seg, &off) ||
		    ftv_segment_check(one, seg, off, NULL)) {
			ftv_drops_skb(&conn->peer->drops, FTV_DROPS_A_MALFORMED,
				      fdev->dev, one);
			continue;
		}
		if (receive_conn(conn, one, seg))
			job_add(&j, one);
	}
queue:
	if (j.head)
		ftv_open_queue(conn, j.head, j.n);
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

	if (!ftv_segment_parse(skb, &seg, &thoff)) {
		ftv_icmp_receive(devices, skb);
		return NF_ACCEPT;
	}
	if (!ftv_device_find_owner(devices, &seg.tuple, &fdev, &conn))
		return NF_ACCEPT;
	if (!conn)
		return ftv_listen_receive(fdev, skb, &seg, thoff, state) ?
		       NF_STOLEN : NF_ACCEPT;
	/* skb is ours from here on, whatever happens. */
	if (unlikely(skb_is_gso(skb)))
		receive_gso(fdev, conn, skb, &seg, thoff);
	else
		receive_segment(fdev, conn, skb, &seg, thoff, state);
	return NF_STOLEN;
}
