// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving: a netfilter hook at PRE_ROUTING, ahead of defragmentation and
 * conntrack, takes every TCP segment that belongs to an ftv connection or
 * arrives at a device's listen port, so the host stack never sees (or
 * answers) them. What the message is follows from the connection's state,
 * not from any byte in the payload: the initiator's first payload is the
 * initiation, the responder's first is the response, everything after is
 * sealed data.
 */

#include "receive.h"
#include "conn.h"
#include "crypto.h"
#include "device.h"
#include "faketcp.h"
#include "noise.h"
#include "peer.h"
#include "token.h"
#include "send.h"
#include "timers.h"

#include <crypto/aead.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/siphash.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
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
		len = ntohs(ip_hdr(skb)->tot_len);
	else
		len = ntohs(ipv6_hdr(skb)->payload_len) +
		      sizeof(struct ipv6hdr);
	if (len > skb->len)
		return -EINVAL;
	return pskb_trim_rcsum(skb, len);
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
		ftv_drops_inc(&fdev->drops, FTV_DROP_NO_SESSION);
		kfree_skb(skb);
		return;
	}
	if (!ftv_ratelimiter_allow(&fdev->ratelimiter, &seg->tuple.remote)) {
		ftv_drops_inc(&fdev->drops, FTV_DROP_RATELIMITED);
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

static void drop(struct ftv_drops *drops, enum ftv_drop_reason reason,
		 struct net_device *dev, struct sk_buff *skb)
{
	ftv_drops_inc(drops, reason);
	DEV_STATS_INC(dev, rx_errors);
	kfree_skb(skb);
}

/* Record what we saw of the peer's side of the TCP connection. */
static void track_peer(struct ftv_conn *conn, const struct ftv_segment *seg)
{
	ftv_tcp_rcv_data(&conn->rcv, seg->seq, seg->seq + seg->payload_len,
			 jiffies);
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

/* Hand a decrypted inner packet to the ftv device. */
static void deliver(struct ftv_conn *conn, struct sk_buff *skb)
{
	struct ftv_device *fdev = conn->device;
	struct ftv_peer *peer = conn->peer;
	struct net_device *dev = fdev->dev;
	const void *saddr;
	int family;

	if (unlikely(inner_source(skb, &family, &saddr))) {
		drop(&peer->drops, FTV_DROP_MALFORMED, dev, skb);
		return;
	}
	if (unlikely(ftv_allowedips_lookup(&fdev->allowedips, family,
					   saddr) != peer)) {
		drop(&peer->drops, FTV_DROP_NOT_ALLOWED, dev, skb);
		return;
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
	gro_cells_receive(&fdev->gro_cells, skb);
}

static void receive_data(struct ftv_conn *conn, struct sk_buff *skb,
			 const struct ftv_segment *seg)
{
	struct ftv_peer *peer = conn->peer;
	struct net_device *dev = conn->device->dev;
	struct ftv_msg_data *msg;
	unsigned int sealed_len;
	u64 counter;

	if (unlikely(seg->payload_len < FTV_DATA_OVERHEAD)) {
		drop(&peer->drops, FTV_DROP_MALFORMED, dev, skb);
		return;
	}
	/* Decrypting in place must not change what a packet tap's clone
	 * of this skb sees.
	 */
	if (unlikely(skb_linearize_cow(skb))) {
		DEV_STATS_INC(dev, rx_dropped);
		kfree_skb(skb);
		return;
	}
	msg = (struct ftv_msg_data *)(skb->data + seg->payload_off);
	sealed_len = seg->payload_len - sizeof(*msg);
	counter = le64_to_cpu(msg->counter) ^
		  ftv_send_counter_mask(&conn->recv_hp, msg->sealed);
	if (unlikely(ftv_conn_expired(conn, counter))) {
		drop(&peer->drops, FTV_DROP_NO_SESSION, dev, skb);
		return;
	}
	if (unlikely(ftv_crypto_open(conn->recv_tfm, counter, msg->sealed,
				     sealed_len))) {
		drop(&peer->drops, FTV_DROP_BAD_AUTH, dev, skb);
		return;
	}
	if (unlikely(!ftv_replay_check(&conn->replay, counter))) {
		drop(&peer->drops, FTV_DROP_REPLAY, dev, skb);
		return;
	}
	if (unlikely(!READ_ONCE(conn->confirmed)))
		ftv_peer_confirm(peer, conn);
	track_peer(conn, seg);
	maybe_ack(conn);
	maybe_rekey(conn);
	skb_pull(skb, seg->payload_off + sizeof(*msg));
	skb_trim(skb, sealed_len - FTV_TAG_SIZE);
	if (!skb->len || !(skb->data[0] >> 4)) {
		/* A keepalive: padding, no packet. */
		ftv_timers_received(peer, false);
		consume_skb(skb);
		return;
	}
	ftv_timers_received(peer, true);
	deliver(conn, skb);
}

/* Initiator: the SYN-ACK arrived; acknowledge it and send the initiation. */
static void receive_synack(struct ftv_conn *conn, struct sk_buff *skb,
			   const struct ftv_segment *seg)
{
	struct ftv_peer *peer = conn->peer;
	bool ours;

	spin_lock_bh(&peer->lock);
	ours = READ_ONCE(conn->state) == FTV_CONN_SYN_SENT &&
	       seg->ack == (u32)atomic_read(&conn->snd_nxt) &&
	       (seg->flags & TCPHDR_SYN);
	if (ours) {
		conn->resp_seq = seg->seq + 1;
		ftv_tcp_rcv_reset(&conn->rcv, seg->seq + 1);
		if (seg->opts.has_ts)
			atomic_set(&conn->ts_recent, seg->opts.tsval);
		WRITE_ONCE(conn->state, FTV_CONN_HANDSHAKE_SENT);
	}
	spin_unlock_bh(&peer->lock);
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
		if (parse_addresses(skb, &seg, &thoff) &&
		    !parse_tcp(skb, &seg, thoff))
			receive_data(conn, skb, &seg);
		else
			kfree_skb(skb);
	}
}

static void hold_early(struct ftv_conn *conn, struct sk_buff *skb)
{
	if (skb_queue_len(&conn->early) >= FTV_EARLY_MAX) {
		drop(&conn->peer->drops, FTV_DROP_NO_SESSION,
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

/* Initiator: the response arrived; finish the key exchange. */
static void receive_response(struct ftv_conn *conn, struct sk_buff *skb,
			     const struct ftv_segment *seg)
{
	struct ftv_peer *peer = conn->peer;
	struct ftv_device *fdev = conn->device;
	struct ftv_identity *identity;
	struct ftv_session_keys keys;
	struct ftv_handshake hs;
	struct ftv_msg_resp resp;
	bool ok;

	/* The response is the first byte of the responder's stream; with
	 * several CPUs, data it sent just after can arrive first: hold a few
	 * such payloads until the keys are known.
	 */
	if (seg->seq != conn->resp_seq) {
		hold_early(conn, skb);
		return;
	}
	if (seg->payload_len < sizeof(resp) ||
	    skb_copy_bits(skb, seg->payload_off, &resp, sizeof(resp))) {
		drop(&peer->drops, FTV_DROP_MALFORMED, fdev->dev, skb);
		return;
	}
	spin_lock_bh(&peer->lock);
	ok = peer->pending == conn &&
	     READ_ONCE(conn->state) == FTV_CONN_HANDSHAKE_SENT;
	if (ok)
		hs = conn->handshake;
	spin_unlock_bh(&peer->lock);
	identity = rcu_dereference(fdev->identity);
	if (!ok || !identity) {
		drop(&peer->drops, FTV_DROP_NO_SESSION, fdev->dev, skb);
		goto out;
	}
	if (ftv_noise_consume_resp(peer, identity, &hs, &resp, &keys)) {
		drop(&peer->drops, FTV_DROP_BAD_AUTH, fdev->dev, skb);
		goto out;
	}
	ok = !ftv_conn_set_keys(conn, &keys);
	track_peer(conn, seg);
	consume_skb(skb);
	if (!ok || !ftv_peer_install_conn(peer, conn, false))
		goto out;
	memzero_explicit(&conn->handshake, sizeof(conn->handshake));
	ftv_timers_connected(peer);
	/* The responder counts the session only once data arrives on it. */
	if (skb_queue_empty_lockless(&peer->staged))
		ftv_send_keepalive(conn);
	ftv_peer_flush_staged(peer);
	receive_early(conn);
out:
	memzero_explicit(&keys, sizeof(keys));
	memzero_explicit(&hs, sizeof(hs));
}

static void receive_conn(struct ftv_conn *conn, struct sk_buff *skb,
			 const struct ftv_segment *seg)
{
	int state = READ_ONCE(conn->state);

	if (state == FTV_CONN_LINGER ||
	    (seg->flags & (TCPHDR_RST | TCPHDR_FIN))) {
		/* Nobody but a peer's key can end a session: a RST or FIN
		 * is ignored, whoever sent it.
		 */
		consume_skb(skb);
		return;
	}
	if (state == FTV_CONN_SYN_SENT) {
		receive_synack(conn, skb, seg);
		return;
	}
	if (state == FTV_CONN_RETIRED && !conn->keyed) {
		/* An attempt that never completed. */
		consume_skb(skb);
		return;
	}
	if (!seg->payload_len || (seg->flags & TCPHDR_SYN)) {
		if (seg->opts.has_ts)
			atomic_set(&conn->ts_recent, seg->opts.tsval);
		consume_skb(skb);
		return;
	}
	if (state == FTV_CONN_HANDSHAKE_SENT)
		receive_response(conn, skb, seg);
	else
		receive_data(conn, skb, seg);
}

static void receive_segment(struct ftv_device *fdev, struct ftv_conn *conn,
			    struct sk_buff *skb, struct ftv_segment *seg,
			    unsigned int thoff)
{
	struct ftv_drops *drops = conn ? &conn->peer->drops : &fdev->drops;

	if (trim_to_ip_len(skb) || parse_tcp(skb, seg, thoff)) {
		drop(drops, FTV_DROP_MALFORMED, fdev->dev, skb);
		return;
	}
	if (conn)
		receive_conn(conn, skb, seg);
	else
		receive_listen(fdev, skb, seg);
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

/*
 * On the listen port, without a connection, take only a SYN whose token
 * (token.c) is valid and new, and the initiator's segments that carry our
 * SYN-ACK's cookie. Everything else is the host's: a prober finds whatever
 * the host runs on the port, or a closed port, as anywhere else.
 */
static bool listen_claims(struct ftv_device *fdev, struct sk_buff *skb,
			  struct ftv_segment *seg, unsigned int thoff)
{
	const struct ftv_token_keys *keys;

	if (skb_is_gso(skb) || trim_to_ip_len(skb) ||
	    parse_tcp(skb, seg, thoff))
		return false;
	switch (seg->flags & (TCPHDR_SYN | TCPHDR_ACK | TCPHDR_RST)) {
	case TCPHDR_SYN:
		keys = rcu_dereference(fdev->token_keys);
		return seg->opts.has_ts && keys &&
		       ftv_token_check(keys, seg->seq, seg->opts.tsval) &&
		       !ftv_token_cache_seen(fdev->token_cache, seg->seq,
					     seg->opts.tsval);
	case TCPHDR_ACK:
		return cookie_valid(fdev, seg);
	default:
		return false;
	}
}

/*
 * GRO on the underlay may have merged several of our segments into one
 * superpacket; each carries a message of its own, so split them back.
 */
static void receive_gso(struct list_head *devices, struct sk_buff *skb)
{
	struct sk_buff *segs, *next, *one;
	struct ftv_device *fdev;
	struct ftv_conn *conn;
	struct ftv_segment seg;
	unsigned int thoff;

	segs = skb_gso_segment(skb, 0);
	consume_skb(skb);
	if (IS_ERR_OR_NULL(segs))
		return;
	skb_list_walk_safe(segs, one, next) {
		skb_mark_not_on_list(one);
		if (parse_addresses(one, &seg, &thoff) &&
		    find_owner(devices, &seg.tuple, &fdev, &conn))
			receive_segment(fdev, conn, one, &seg, thoff);
		else
			kfree_skb(one);
	}
}

/*
 * An ICMP "fragmentation needed" or "packet too big" about one of our
 * segments: no socket exists for the host to note the smaller path MTU
 * with, so note it here, on the route the connection uses. The sending
 * path then tells inner senders the size that fits. The ICMP message
 * itself continues to the host stack.
 */
static void learn_path_mtu(struct list_head *devices, struct sk_buff *skb,
			   struct net *net)
{
	unsigned int off, inner_len;
	struct ftv_tuple tuple = { };
	struct ftv_device *fdev;
	struct ftv_conn *conn;
	__be16 *ports;
	u32 mtu;

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb), *inner;
		const struct icmphdr *icmph;

		off = iph->ihl * 4;
		if (iph->protocol != IPPROTO_ICMP ||
		    !pskb_may_pull(skb, off + sizeof(*icmph) + sizeof(*inner)))
			return;
		icmph = (struct icmphdr *)(skb->data + off);
		if (icmph->type != ICMP_DEST_UNREACH ||
		    icmph->code != ICMP_FRAG_NEEDED)
			return;
		mtu = ntohs(icmph->un.frag.mtu);
		off += sizeof(*icmph);
		inner = (struct iphdr *)(skb->data + off);
		inner_len = inner->ihl * 4;
		if (inner->protocol != IPPROTO_TCP ||
		    !pskb_may_pull(skb, off + inner_len + 4))
			return;
		inner = (struct iphdr *)(skb->data + off);
		tuple.family = AF_INET;
		tuple.local.s6_addr32[0] = inner->saddr;
		tuple.remote.s6_addr32[0] = inner->daddr;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb), *inner;
		const struct icmp6hdr *icmp6h;

		off = sizeof(*ip6h);
		if (ip6h->nexthdr != IPPROTO_ICMPV6 ||
		    !pskb_may_pull(skb, off + sizeof(*icmp6h) + sizeof(*inner) + 4))
			return;
		icmp6h = (struct icmp6hdr *)(skb->data + off);
		if (icmp6h->icmp6_type != ICMPV6_PKT_TOOBIG)
			return;
		mtu = ntohl(icmp6h->icmp6_mtu);
		off += sizeof(*icmp6h);
		inner = (struct ipv6hdr *)(skb->data + off);
		inner_len = sizeof(*inner);
		if (inner->nexthdr != IPPROTO_TCP)
			return;
		tuple.family = AF_INET6;
		tuple.local = inner->saddr;
		tuple.remote = inner->daddr;
	} else {
		return;
	}
	ports = (__be16 *)(skb->data + off + inner_len);
	tuple.local_port = ports[0];
	tuple.remote_port = ports[1];
	if (!find_owner(devices, &tuple, &fdev, &conn) || !conn)
		return;
	/* The update functions read the quoted header at skb->data. */
	__skb_pull(skb, off);
	if (tuple.family == AF_INET)
		ipv4_update_pmtu(skb, net, mtu, 0, IPPROTO_TCP);
	else
		ip6_update_pmtu(skb, net, htonl(mtu), 0,
				READ_ONCE(fdev->fwmark), sock_net_uid(net, NULL));
	__skb_push(skb, off);
	dst_cache_reset(&conn->dst_cache);
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
		learn_path_mtu(devices, skb, state->net);
		return NF_ACCEPT;
	}
	if (!find_owner(devices, &seg.tuple, &fdev, &conn) ||
	    (!conn && !listen_claims(fdev, skb, &seg, thoff)))
		return NF_ACCEPT;
	/* skb is ours from here on, whatever happens. */
	if (unlikely(skb_is_gso(skb)))
		receive_gso(devices, skb);
	else
		receive_segment(fdev, conn, skb, &seg, thoff);
	return NF_STOLEN;
}

/* Responder: authenticate an initiation, answer it, install the session. */
static void handle_initiation(struct ftv_device *fdev, struct sk_buff *skb)
{
	struct ftv_peer *peer = NULL;
	struct ftv_identity *identity;
	struct ftv_session_keys keys;
	struct ftv_segment seg;
	struct ftv_handshake hs;
	struct ftv_conn *conn;
	u8 resp[sizeof(struct ftv_msg_resp) + FTV_HANDSHAKE_PAD_MAX];
	unsigned int thoff, resp_len;
	bool prefer_pending = false;

	if (skb_linearize(skb) || !parse_addresses(skb, &seg, &thoff) ||
	    parse_tcp(skb, &seg, thoff) ||
	    seg.payload_len < sizeof(struct ftv_msg_init)) {
		ftv_drops_inc(&fdev->drops, FTV_DROP_MALFORMED);
		goto out;
	}
	rcu_read_lock_bh();
	identity = rcu_dereference_bh(fdev->identity);
	if (identity) {
		peer = ftv_noise_consume_init(fdev, identity,
					      (void *)skb->data +
					      seg.payload_off, &hs);
		prefer_pending = peer && memcmp(identity->public_key,
						peer->public_key,
						FTV_KEY_SIZE) < 0;
	}
	rcu_read_unlock_bh();
	if (!peer) {
		ftv_drops_inc(&fdev->drops, identity ? FTV_DROP_BAD_AUTH :
				FTV_DROP_NO_SESSION);
		goto out;
	}

	conn = ftv_conn_create(fdev, peer, &seg.tuple, GFP_KERNEL);
	if (!conn)
		goto out;
	atomic_set(&conn->snd_nxt, seg.ack);
	ftv_tcp_rcv_reset(&conn->rcv, seg.seq + seg.payload_len);
	atomic_set(&conn->ts_recent, seg.opts.tsval);
	atomic_set(&conn->ip_id, get_random_u32());
	conn->ts_offset = listen_ts_offset(fdev, &seg.tuple);
	if (ftv_noise_create_resp(peer, &hs, (struct ftv_msg_resp *)resp,
				  &keys) ||
	    ftv_conn_set_keys(conn, &keys))
		goto err_conn;
	resp_len = sizeof(struct ftv_msg_resp) +
		   get_random_u32() % (FTV_HANDSHAKE_PAD_MAX + 1);
	get_random_bytes(resp + sizeof(struct ftv_msg_resp),
			 resp_len - sizeof(struct ftv_msg_resp));
	if (!ftv_peer_install_conn(peer, conn, prefer_pending))
		goto err_conn;

	local_bh_disable();
	ftv_send_payload(conn, resp, resp_len);
	/* Unless a newer session already replaced it. */
	cmpxchg(&conn->state, FTV_CONN_RESPONDING, FTV_CONN_ESTABLISHED);
	ftv_timers_connected(peer);
	ftv_peer_flush_staged(peer);
	local_bh_enable();
	goto out;

err_conn:
	ftv_conn_free(conn);
out:
	memzero_explicit(&hs, sizeof(hs));
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
