// SPDX-License-Identifier: GPL-2.0
/*
 * The "ftv" generic netlink family, as specified in docs/netlink/ftv.yaml.
 * The policies below carry the spec's checks, so handlers only verify what
 * spans several attributes; every refusal says why through extack.
 *
 * Code generated from the spec needs 6.2's split ops; this hand-written
 * table works on every kernel ftv supports.
 */

#include "netlink.h"
#include "allowedips.h"
#include "conn.h"
#include "connect.h"
#include "device.h"
#include "event.h"
#include "fec.h"
#include "peer.h"
#include "probe.h"
#include "segment.h"
#include "session.h"
#include "token.h"

#include <linux/ftv.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

static const struct nla_policy allowedip_policy[FTV_ALLOWEDIP_A_MAX + 1] = {
	[FTV_ALLOWEDIP_A_FAMILY] = { .type = NLA_U16 },
	[FTV_ALLOWEDIP_A_IPADDR] = NLA_POLICY_RANGE(NLA_BINARY, 4, 16),
	[FTV_ALLOWEDIP_A_CIDR_MASK] = NLA_POLICY_MAX(NLA_U8, 128),
};

static const struct nla_policy endpoint_policy[FTV_ENDPOINT_A_MAX + 1] = {
	[FTV_ENDPOINT_A_IPV4] = NLA_POLICY_EXACT_LEN(4),
	[FTV_ENDPOINT_A_IPV6] = NLA_POLICY_EXACT_LEN(16),
	[FTV_ENDPOINT_A_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
};

static const struct nla_policy probe_policy[FTV_PROBE_A_MAX + 1] = {
	[FTV_PROBE_A_STEP] = NLA_POLICY_MAX(NLA_U8, FTV_PROBE_JOIN),
	[FTV_PROBE_A_INDEX] = { .type = NLA_U32 },
	[FTV_PROBE_A_BYTES] = { .type = NLA_U32 },
	[FTV_PROBE_A_RATE] = { .type = NLA_U32 },
	[FTV_PROBE_A_LENGTH] = NLA_POLICY_MAX(NLA_U32, FTV_PROBE_MAX_LENGTH),
	[FTV_PROBE_A_NONCE] = { .type = NLA_REJECT },
	[FTV_PROBE_A_TELL] = { .type = NLA_REJECT },
	[FTV_PROBE_A_CONNS] = { .type = NLA_REJECT },
	[FTV_PROBE_A_JOINED] = { .type = NLA_REJECT },
	[FTV_PROBE_A_JOINS_UP] = { .type = NLA_REJECT },
	[FTV_PROBE_A_SHAPE] = NLA_POLICY_MAX(NLA_U8, 1),
};

static const struct nla_policy peer_policy[FTV_PEER_A_MAX + 1] = {
	[FTV_PEER_A_PUBLIC_KEY] = NLA_POLICY_EXACT_LEN(FTV_KEY_LEN),
	[FTV_PEER_A_PRESHARED_KEY] = NLA_POLICY_EXACT_LEN(FTV_KEY_LEN),
	[FTV_PEER_A_FLAGS] = NLA_POLICY_MASK(NLA_U32, __FTV_PEER_F_ALL),
	[FTV_PEER_A_ENDPOINT_IPV4] = NLA_POLICY_EXACT_LEN(4),
	[FTV_PEER_A_ENDPOINT_IPV6] = NLA_POLICY_EXACT_LEN(16),
	[FTV_PEER_A_ENDPOINT_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
	[FTV_PEER_A_PERSISTENT_KEEPALIVE] = { .type = NLA_U16 },
	[FTV_PEER_A_ALLOWEDIPS] = NLA_POLICY_NESTED_ARRAY(allowedip_policy),
	[FTV_PEER_A_ALLOWEDIP] = { .type = NLA_REJECT },
	[FTV_PEER_A_LAST_HANDSHAKE] = { .type = NLA_REJECT },
	[FTV_PEER_A_RX_BYTES] = { .type = NLA_REJECT },
	[FTV_PEER_A_TX_BYTES] = { .type = NLA_REJECT },
	[FTV_PEER_A_DROPS] = { .type = NLA_REJECT },
	[FTV_PEER_A_STATE] = { .type = NLA_REJECT },
	[FTV_PEER_A_FEC_MODE] = NLA_POLICY_MAX(NLA_U8, FTV_FEC_FIXED),
	[FTV_PEER_A_FEC_DATA] = NLA_POLICY_RANGE(NLA_U8, 1, FTV_FEC_MAX_DATA),
	[FTV_PEER_A_FEC_REPAIR] =
		NLA_POLICY_RANGE(NLA_U8, 1, FTV_FEC_MAX_REPAIR),
	[FTV_PEER_A_FEC_STATS] = { .type = NLA_REJECT },
	[FTV_PEER_A_FLOWS] = NLA_POLICY_RANGE(NLA_U8, 1, FTV_MAX_FLOWS),
	[FTV_PEER_A_FLOWS_UP] = { .type = NLA_REJECT },
	[FTV_PEER_A_ROTATIONS] = { .type = NLA_REJECT },
	[FTV_PEER_A_ROTATE] = { .type = NLA_U32 },
	[FTV_PEER_A_ENDPOINTS] = NLA_POLICY_NESTED_ARRAY(endpoint_policy),
	[FTV_PEER_A_RESETS] = { .type = NLA_REJECT },
	[FTV_PEER_A_PROBE] = NLA_POLICY_NESTED(probe_policy),
};

static const struct nla_policy device_policy[FTV_A_MAX + 1] = {
	[FTV_A_IFINDEX] = { .type = NLA_U32 },
	[FTV_A_IFNAME] = { .type = NLA_NUL_STRING, .len = IFNAMSIZ - 1 },
	[FTV_A_PRIVATE_KEY] = NLA_POLICY_EXACT_LEN(FTV_KEY_LEN),
	[FTV_A_PUBLIC_KEY] = { .type = NLA_REJECT },
	[FTV_A_LISTEN_PORT] = { .type = NLA_U16 },
	[FTV_A_FWMARK] = { .type = NLA_U32 },
	[FTV_A_FLAGS] = NLA_POLICY_MASK(NLA_U32, __FTV_DEVICE_F_ALL),
	[FTV_A_DROPS] = { .type = NLA_REJECT },
	[FTV_A_PEERS] = { .type = NLA_REJECT },
	[FTV_A_PEER] = NLA_POLICY_NESTED(peer_policy),
	[FTV_A_EVENT] = { .type = NLA_REJECT },
	[FTV_A_SHAPE] = NLA_POLICY_MAX(NLA_U8, 1),
};

/* The device a request names, with a reference held. */
static struct ftv_device *lookup_device(struct net *net, struct nlattr **attrs,
					struct netlink_ext_ack *extack)
{
	struct net_device *dev = NULL;

	if (attrs[FTV_A_IFINDEX]) {
		dev = dev_get_by_index(net, nla_get_u32(attrs[FTV_A_IFINDEX]));
	} else if (attrs[FTV_A_IFNAME]) {
		dev = dev_get_by_name(net, nla_data(attrs[FTV_A_IFNAME]));
	} else {
		NL_SET_ERR_MSG_MOD(extack,
				   "device missing: give FTV_A_IFINDEX or FTV_A_IFNAME");
		return ERR_PTR(-EINVAL);
	}
	if (!dev) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[FTV_A_IFINDEX] ?:
				    attrs[FTV_A_IFNAME], "no such device");
		return ERR_PTR(-ENODEV);
	}
	if (!ftv_device_is_ftv(dev)) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[FTV_A_IFINDEX] ?:
				    attrs[FTV_A_IFNAME],
				    "device is not an ftv device");
		dev_put(dev);
		return ERR_PTR(-EOPNOTSUPP);
	}
	return netdev_priv(dev);
}

static int put_drops(struct sk_buff *skb, int attr,
		     const struct ftv_drops *drops)
{
	struct nlattr *nest = nla_nest_start(skb, attr);
	int i;

	if (!nest)
		return -EMSGSIZE;
	/* Zero counters stay out (docs/netlink/ftv.yaml): most are zero. */
	for (i = FTV_DROPS_A_UNSPEC + 1; i <= FTV_DROPS_A_MAX; ++i) {
		u64 count = atomic64_read(&drops->count[i]);

		if (i != FTV_DROPS_A_PAD && count &&
		    nla_put_u64_64bit(skb, i, count, FTV_DROPS_A_PAD))
			goto err;
	}
	nla_nest_end(skb, nest);
	return 0;
err:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/* One nest of the endpoints list. */
static int put_list_entry(struct sk_buff *skb, int index,
			  const struct ftv_endpoint *ep)
{
	struct nlattr *entry = nla_nest_start(skb, index);

	if (!entry)
		return -EMSGSIZE;
	if ((ep->addr.sa_family == AF_INET &&
	     (nla_put_in_addr(skb, FTV_ENDPOINT_A_IPV4,
			      ep->addr4.sin_addr.s_addr) ||
	      nla_put_u16(skb, FTV_ENDPOINT_A_PORT,
			  ntohs(ep->addr4.sin_port)))) ||
	    (ep->addr.sa_family == AF_INET6 &&
	     (nla_put_in6_addr(skb, FTV_ENDPOINT_A_IPV6,
			       &ep->addr6.sin6_addr) ||
	      nla_put_u16(skb, FTV_ENDPOINT_A_PORT,
			  ntohs(ep->addr6.sin6_port))))) {
		nla_nest_cancel(skb, entry);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, entry);
	return 0;
}

/* The configured endpoints, @n of them: an empty list for a peer that
 * only answers, so that a reader tells it from a module without lists.
 */
static int put_endpoints(struct sk_buff *skb, const struct ftv_endpoint *eps,
			 unsigned int n)
{
	struct nlattr *list;
	unsigned int i;

	list = nla_nest_start(skb, FTV_PEER_A_ENDPOINTS);
	if (!list)
		return -EMSGSIZE;
	/* Indexed from 1, as ynl's indexed arrays are. */
	for (i = 0; i < n; i++) {
		if (put_list_entry(skb, i + 1, &eps[i])) {
			nla_nest_cancel(skb, list);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, list);
	return 0;
}

/* A copy of the peer's configured endpoints into @eps. Return: how many
 * (0 for a peer that only answers).
 */
static unsigned int copy_endpoints(struct ftv_peer *peer,
				   struct ftv_endpoint eps[FTV_MAX_ENDPOINTS])
{
	lockdep_assert_held(&peer->lock);
	if (!peer->endpoint_configured)
		return 0;
	if (!peer->endpoints) {
		eps[0] = peer->endpoint;
		return 1;
	}
	memcpy(eps, peer->endpoints->ep,
	       peer->endpoints->count * sizeof(*eps));
	return peer->endpoints->count;
}

static int put_allowedip(struct sk_buff *skb,
			 const struct ftv_allowedips_node *node)
{
	struct nlattr *entry;
	u8 addr[16], cidr;
	int family;

	family = ftv_allowedips_read_node(node, addr, &cidr);
	entry = nla_nest_start(skb, FTV_PEER_A_ALLOWEDIP);
	if (!entry)
		return -EMSGSIZE;
	if (nla_put_u16(skb, FTV_ALLOWEDIP_A_FAMILY, family) ||
	    nla_put(skb, FTV_ALLOWEDIP_A_IPADDR, family == AF_INET ? 4 : 16,
		    addr) ||
	    nla_put_u8(skb, FTV_ALLOWEDIP_A_CIDR_MASK, cidr)) {
		nla_nest_cancel(skb, entry);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, entry);
	return 0;
}

/*
 * The peer's allowed-ips from the @*next-th on, as many as fit; @*next
 * becomes the index of the first one left out. Return: 0 if all went in,
 * -EMSGSIZE if some are left for the next message.
 */
static int put_allowedips(struct sk_buff *skb, struct ftv_peer *peer,
			  long *next)
{
	struct ftv_allowedips_node *node;
	struct nlattr *list;
	long idx = 0;
	int ret = 0;

	lockdep_assert_held(&peer->device->device_update_lock);
	list = nla_nest_start(skb, FTV_PEER_A_ALLOWEDIPS);
	if (!list)
		return -EMSGSIZE;
	list_for_each_entry(node, &peer->allowedips_list, peer_list) {
		if (idx++ < *next)
			continue;
		ret = put_allowedip(skb, node);
		if (ret)
			break;
		*next = idx;
	}
	nla_nest_end(skb, list);
	return ret;
}

static u8 peer_state(struct ftv_peer *peer)
{
	struct ftv_conn *conn;

	lockdep_assert_held(&peer->lock);
	conn = rcu_dereference_protected(peer->conn,
					 lockdep_is_held(&peer->lock));
	if (conn && READ_ONCE(conn->session->confirmed))
		return FTV_PEER_STATE_ESTABLISHED;
	if (conn)
		return FTV_PEER_STATE_CONNECTING;
	return peer->pending ? FTV_PEER_STATE_CONNECTING : FTV_PEER_STATE_IDLE;
}

static int put_nonzero_u64(struct sk_buff *skb, int attr, u64 value)
{
	return value ? nla_put_u64_64bit(skb, attr, value, FTV_FEC_A_PAD) : 0;
}

/* The peer's FEC counters, and what its current connection uses. */
static int put_fec_stats(struct sk_buff *skb, struct ftv_peer *peer,
			 u32 setting)
{
	struct ftv_fec_snapshot snap;
	struct ftv_conn *conn;
	struct nlattr *nest;

	rcu_read_lock_bh();
	conn = rcu_dereference_bh(peer->conn);
	ftv_fec_snapshot(conn ? &conn->session->fec : NULL, setting,
			 &peer->fec_stats, &snap);
	rcu_read_unlock_bh();
	nest = nla_nest_start(skb, FTV_PEER_A_FEC_STATS);
	if (!nest)
		return -EMSGSIZE;
	/* Zero values stay out, as in the drops nest: most peers have
	 * sent no repair and rebuilt nothing.
	 */
	if (nla_put_u8(skb, FTV_FEC_A_ACTIVE, snap.active) ||
	    (snap.active &&
	     (nla_put_u8(skb, FTV_FEC_A_DATA, snap.k) ||
	      nla_put_u8(skb, FTV_FEC_A_REPAIR, snap.m) ||
	      nla_put_u32(skb, FTV_FEC_A_LOSS_PPM, snap.loss_ppm))) ||
	    put_nonzero_u64(skb, FTV_FEC_A_REPAIR_SENT, snap.repair_sent) ||
	    put_nonzero_u64(skb, FTV_FEC_A_REBUILT, snap.rebuilt) ||
	    put_nonzero_u64(skb, FTV_FEC_A_GROUPS_LOST, snap.groups_lost)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int put_fec(struct sk_buff *skb, struct ftv_peer *peer)
{
	u32 setting = READ_ONCE(peer->fec_setting);
	struct ftv_fec_config fec = ftv_fec_unpack(setting);

	if (nla_put_u8(skb, FTV_PEER_A_FEC_MODE, fec.mode) ||
	    (fec.mode == FTV_FEC_FIXED &&
	     (nla_put_u8(skb, FTV_PEER_A_FEC_DATA, fec.data) ||
	      nla_put_u8(skb, FTV_PEER_A_FEC_REPAIR, fec.repair))))
		return -EMSGSIZE;
	return put_fec_stats(skb, peer, setting);
}

/* One side of a reset's evidence: a TTL and, for IPv4, an IP ID. */
static int put_ip_mark(struct sk_buff *skb, int ttl_attr, int id_attr,
		       u32 mark)
{
	if (!(mark & FTV_IP_MARK_SEEN))
		return 0;
	if (nla_put_u8(skb, ttl_attr, mark & 0xff))
		return -EMSGSIZE;
	return mark & FTV_IP_MARK_IPV4 ?
	       nla_put_u16(skb, id_attr, (mark >> 8) & 0xffff) : 0;
}

/* A reset's evidence as @attr, if there is any: ftv_segment_ip_mark() of
 * the reset in the low half of @seen, of the peer's segment in the high.
 */
static int put_resets(struct sk_buff *skb, int attr, u64 seen)
{
	struct nlattr *nest;

	if (!seen)
		return 0;
	nest = nla_nest_start(skb, attr);
	if (!nest ||
	    put_ip_mark(skb, FTV_RESETS_A_TTL, FTV_RESETS_A_IP_ID, seen) ||
	    put_ip_mark(skb, FTV_RESETS_A_PEER_TTL, FTV_RESETS_A_PEER_IP_ID,
			seen >> 32)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* Everything about the peer but its allowed-ips. */
static int put_peer_attrs(struct sk_buff *skb, struct ftv_peer *peer)
{
	struct ftv_endpoint ep, eps[FTV_MAX_ENDPOINTS];
	u8 psk[FTV_KEY_LEN], state, flows_up;
	unsigned int n_eps;
	time64_t handshake;
	int ret;

	spin_lock_bh(&peer->lock);
	ep = peer->endpoint;
	n_eps = copy_endpoints(peer, eps);
	handshake = peer->last_handshake;
	state = peer_state(peer);
	flows_up = ftv_event_flows_up(peer);
	memcpy(psk, peer->preshared_key, FTV_KEY_LEN);
	spin_unlock_bh(&peer->lock);
	/* Only CAP_NET_ADMIN gets here (docs/threat-model.md): showconf
	 * needs the pre-shared key.
	 */
	ret = memchr_inv(psk, 0, FTV_KEY_LEN) ?
	      nla_put(skb, FTV_PEER_A_PRESHARED_KEY, FTV_KEY_LEN, psk) : 0;
	memzero_explicit(psk, sizeof(psk));
	if (ret || ftv_event_put_endpoint(skb, &ep) ||
	    put_endpoints(skb, eps, n_eps) ||
	    nla_put_u16(skb, FTV_PEER_A_PERSISTENT_KEEPALIVE,
			peer->persistent_keepalive) ||
	    nla_put_u64_64bit(skb, FTV_PEER_A_LAST_HANDSHAKE, handshake,
			      FTV_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, FTV_PEER_A_RX_BYTES,
			      atomic64_read(&peer->rx_bytes), FTV_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, FTV_PEER_A_TX_BYTES,
			      atomic64_read(&peer->tx_bytes), FTV_PEER_A_PAD) ||
	    nla_put_u8(skb, FTV_PEER_A_STATE, state) ||
	    nla_put_u8(skb, FTV_PEER_A_FLOWS, READ_ONCE(peer->flows)) ||
	    nla_put_u8(skb, FTV_PEER_A_FLOWS_UP, flows_up) ||
	    nla_put_u64_64bit(skb, FTV_PEER_A_ROTATIONS,
			      atomic64_read(&peer->rotations), FTV_PEER_A_PAD) ||
	    nla_put_u32(skb, FTV_PEER_A_ROTATE, READ_ONCE(peer->rotate)) ||
	    put_drops(skb, FTV_PEER_A_DROPS, &peer->drops) ||
	    put_resets(skb, FTV_PEER_A_RESETS, READ_ONCE(peer->reset_seen)) ||
	    put_fec(skb, peer))
		return -EMSGSIZE;
	return 0;
}

/*
 * One peer, or the part of it that fits. A peer whose allowed-ips do not
 * fit one message goes on in the next ones, which repeat only its public
 * key: @*aip_next counts the allowed-ips already sent (0 for a peer not
 * started). Return: 0 when the peer is complete, -EMSGSIZE if more is
 * left, with @*aip_next updated (unchanged if nothing of it went in).
 */
static int put_peer(struct sk_buff *skb, struct ftv_peer *peer,
		    long *aip_next)
{
	struct nlattr *nest = nla_nest_start(skb, FTV_A_PEER);
	long next = *aip_next;
	int ret;

	if (!nest)
		return -EMSGSIZE;
	if (nla_put(skb, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, peer->public_key) ||
	    (!next && put_peer_attrs(skb, peer))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	ret = put_allowedips(skb, peer, &next);
	if (ret && next == *aip_next) {
		/* Not one allowed-ip fitted: go on with the peer later. */
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	*aip_next = ret ? next : 0;
	return ret;
}

static int put_device_attrs(struct sk_buff *skb, struct ftv_device *fdev)
{
	struct ftv_identity identity;
	int ret = 0;

	/* Only CAP_NET_ADMIN gets here (docs/threat-model.md): showconf
	 * needs the private key.
	 */
	if (ftv_device_copy_identity(fdev, &identity)) {
		ret = nla_put(skb, FTV_A_PUBLIC_KEY, FTV_KEY_LEN,
			      identity.public_key) ?:
		      nla_put(skb, FTV_A_PRIVATE_KEY, FTV_KEY_LEN,
			      identity.private_key);
		memzero_explicit(&identity, sizeof(identity));
	}
	if (ret || nla_put_u16(skb, FTV_A_LISTEN_PORT, fdev->listen_port) ||
	    nla_put_u32(skb, FTV_A_FWMARK, fdev->fwmark) ||
	    nla_put_u8(skb, FTV_A_SHAPE, fdev->shape) ||
	    put_drops(skb, FTV_A_DROPS, &fdev->drops))
		return -EMSGSIZE;
	return 0;
}

/**
 * struct dump_ctx - where a dump of devices stands between its messages
 * @ifindex: the device being dumped, -1 once finished
 * @peer_idx: peers of it already sent
 * @aip_idx: allowed-ips of the next peer already sent
 * @single: 0 for every device, 1 for the one at @ifindex, or
 *	DUMP_SINGLE_UNRESOLVED for one that is named but not looked up yet
 * @next: the next peer, or NULL; only a hint, see below
 * @next_gen: the device's generation when @next was taken
 *
 * @next saves a resumed message the walk from the list's head (which made
 * a dump of 10^5 peers quadratic). It is used only while @next_gen equals
 * the device's generation: generations come from one 64-bit counter for
 * every device (device.c), so an equal one means the same device with its
 * peer list unchanged, @next still on it and the list's reference keeping
 * it alive. Nothing else about @next is trusted: it may have been freed.
 * With a 32-bit generation, 2^32 cheap requests between two messages of a
 * dump made a removed peer's generation come round again, and the dump
 * walked freed memory. After a change the dump falls back to @peer_idx;
 * it is marked interrupted anyway.
 */
struct dump_ctx {
	long ifindex;
	long peer_idx;
	long aip_idx;
	long single;
	struct ftv_peer *next;
	u64 next_gen;
};

enum { DUMP_SINGLE_UNRESOLVED = 2 };

static struct dump_ctx *dump_ctx(struct netlink_callback *cb)
{
	BUILD_BUG_ON(sizeof(struct dump_ctx) > sizeof(cb->ctx));
	return (struct dump_ctx *)cb->ctx;
}

/*
 * The peer at index @ctx->peer_idx of @fdev's list: the saved cursor
 * while the generation it was taken in holds, else a walk from the head.
 * Return: the peer, or the list head's container if none is left.
 */
static struct ftv_peer *dump_first_peer(struct ftv_device *fdev,
					const struct dump_ctx *ctx)
{
	struct ftv_peer *peer;
	long idx = 0;

	lockdep_assert_held(&fdev->device_update_lock);
	if (ctx->next && ctx->next_gen == fdev->generation)
		return ctx->next;
	list_for_each_entry(peer, &fdev->peer_list, peer_list)
		if (idx++ == ctx->peer_idx)
			break;
	return peer;
}

/*
 * The device in one message: its own attributes unless resuming, then as
 * many peers as fit, from peer @ctx->peer_idx and its allowed-ip
 * @ctx->aip_idx on; both positions and the cursor advance past what went
 * in. Return: 1 if the device is complete, 0 if more messages are needed,
 * or -EMSGSIZE if nothing of what is left fitted.
 */
static int fill_device(struct sk_buff *skb, struct ftv_device *fdev,
		       struct dump_ctx *ctx)
{
	long skip = ctx->peer_idx, aip = ctx->aip_idx;
	long idx = skip;
	struct nlattr *peers;
	struct ftv_peer *peer;
	int done = 1;

	lockdep_assert_held(&fdev->device_update_lock);
	if (nla_put_u32(skb, FTV_A_IFINDEX, fdev->dev->ifindex) ||
	    nla_put_string(skb, FTV_A_IFNAME, fdev->dev->name) ||
	    (!skip && !aip && put_device_attrs(skb, fdev)))
		return -EMSGSIZE;
	peers = nla_nest_start(skb, FTV_A_PEERS);
	if (!peers)
		return -EMSGSIZE;
	peer = dump_first_peer(fdev, ctx);
	list_for_each_entry_from(peer, &fdev->peer_list, peer_list) {
		if (put_peer(skb, peer, &aip)) {
			done = 0;
			break;
		}
		ctx->peer_idx = ++idx;
	}
	nla_nest_end(skb, peers);
	/* Without progress the caller drops the message: in an empty skb,
	 * a dump then fails instead of asking for the same part forever.
	 */
	if (!done && ctx->peer_idx == skip && aip == ctx->aip_idx)
		return -EMSGSIZE;
	ctx->aip_idx = aip;
	ctx->next = done ? NULL : peer;
	ctx->next_gen = fdev->generation;
	return done;
}

/* The device's position in the past: what changes when it changes. */
static unsigned int dump_seq(const struct ftv_device *fdev)
{
	return lower_32_bits(fdev->generation) ^
	       upper_32_bits(fdev->generation);
}

/*
 * One dump message for @fdev. Return: 1 if the device is finished, 0 if
 * more messages are needed, or a negative errno.
 */
static int dump_device(struct sk_buff *skb, struct netlink_callback *cb,
		       struct ftv_device *fdev)
{
	void *hdr;
	int ret;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &ftv_genl_family, NLM_F_MULTI, FTV_CMD_GET_DEVICE);
	if (!hdr)
		return -EMSGSIZE;
	mutex_lock(&fdev->device_update_lock);
	/* Changes between two parts of a dump mark it interrupted. */
	cb->seq = dump_seq(fdev);
	genl_dump_check_consistent(cb, hdr);
	ret = fill_device(skb, fdev, dump_ctx(cb));
	mutex_unlock(&fdev->device_update_lock);
	if (ret < 0) {
		genlmsg_cancel(skb, hdr);
		return ret;
	}
	genlmsg_end(skb, hdr);
	return ret;
}

/*
 * The largest reply of a do request: the peers nest in it cannot exceed
 * the 64 KiB an attribute's 16-bit length can say.
 */
#define FTV_GET_MAX_SIZE U16_MAX

/* One device in one reply, tried small first, then as large as it gets. */
static int get_device_do(struct sk_buff *skb, struct genl_info *info)
{
	size_t size = NLMSG_GOODSIZE;
	struct ftv_device *fdev;
	struct sk_buff *msg;
	void *hdr;
	int ret;

	fdev = lookup_device(genl_info_net(info), info->attrs, info->extack);
	if (IS_ERR(fdev))
		return PTR_ERR(fdev);
	for (;;) {
		struct dump_ctx ctx = {};

		msg = genlmsg_new(size, GFP_KERNEL);
		if (!msg) {
			ret = -ENOMEM;
			break;
		}
		hdr = genlmsg_put_reply(msg, info, &ftv_genl_family, 0,
					FTV_CMD_GET_DEVICE);
		ret = -EMSGSIZE;
		if (hdr) {
			mutex_lock(&fdev->device_update_lock);
			ret = fill_device(msg, fdev, &ctx);
			mutex_unlock(&fdev->device_update_lock);
		}
		/* The skb may have more room than asked for: measure. */
		if (ret == 1 && msg->len <= FTV_GET_MAX_SIZE) {
			genlmsg_end(msg, hdr);
			ret = genlmsg_reply(msg, info);
			break;
		}
		nlmsg_free(msg);
		if (size >= FTV_GET_MAX_SIZE) {
			NL_SET_ERR_MSG_MOD(info->extack,
					   "device does not fit one message: dump it");
			ret = -EMSGSIZE;
			break;
		}
		size = FTV_GET_MAX_SIZE;
	}
	dev_put(fdev->dev);
	return ret;
}

/* The next ftv device at or after @ifindex, with a reference held. */
static struct ftv_device *next_device(struct net *net, long ifindex)
{
	struct net_device *dev, *found = NULL;

	rcu_read_lock();
	for_each_netdev_rcu(net, dev) {
		if (dev->ifindex >= ifindex && ftv_device_is_ftv(dev) &&
		    (!found || dev->ifindex < found->ifindex))
			found = dev;
	}
	if (found)
		dev_hold(found);
	rcu_read_unlock();
	return found ? netdev_priv(found) : NULL;
}

static int get_device_start(struct netlink_callback *cb)
{
	struct nlattr **attrs = ftv_compat_dump_attrs(cb);
	struct dump_ctx *ctx = dump_ctx(cb);

	memset(ctx, 0, sizeof(*ctx));
	ctx->single = attrs && (attrs[FTV_A_IFINDEX] || attrs[FTV_A_IFNAME]) ?
		      DUMP_SINGLE_UNRESOLVED : 0;
	return 0;
}

/*
 * The device a dump asks for is looked up in the first dump call, not in
 * start: Linux 6.1 gives start no extack, and a rejection there would
 * carry no message.
 */
static int resolve_single(struct netlink_callback *cb, struct net *net)
{
	struct dump_ctx *ctx = dump_ctx(cb);
	struct ftv_device *fdev;

	fdev = lookup_device(net, ftv_compat_dump_attrs(cb), cb->extack);
	if (IS_ERR(fdev))
		return PTR_ERR(fdev);
	ctx->ifindex = fdev->dev->ifindex;
	ctx->single = 1;
	dev_put(fdev->dev);
	return 0;
}

static int get_device_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct net *net = sock_net(cb->skb->sk);
	struct dump_ctx *ctx = dump_ctx(cb);
	struct ftv_device *fdev;
	int ret;

	if (ctx->single == DUMP_SINGLE_UNRESOLVED) {
		ret = resolve_single(cb, net);
		if (ret)
			return ret;
	}

	while (ctx->ifindex >= 0) {
		fdev = next_device(net, ctx->ifindex);
		if (!fdev || (ctx->single &&
			      fdev->dev->ifindex != ctx->ifindex)) {
			if (fdev)
				dev_put(fdev->dev);
			break;
		}
		ctx->ifindex = fdev->dev->ifindex;
		ret = dump_device(skb, cb, fdev);
		dev_put(fdev->dev);
		if (ret == -EMSGSIZE && skb->len)
			return skb->len;
		if (ret < 0)
			return ret;
		if (!ret)
			return skb->len;
		ctx->peer_idx = 0;
		ctx->aip_idx = 0;
		ctx->next = NULL;
		ctx->ifindex = ctx->single ? -1 : fdev->dev->ifindex + 1;
	}
	ctx->ifindex = -1;
	return skb->len;
}

/* Whether @port can be the device's listen port; its replay cache ready. */
static int check_listen_port(struct ftv_device *fdev, struct nlattr *attr,
			     struct netlink_ext_ack *extack)
{
	u16 port = nla_get_u16(attr);
	struct net *net = fdev->creating_net;

	ASSERT_RTNL();
	lockdep_assert_held(&fdev->device_update_lock);
	if (port && net && ftv_device_port_in_use(net, port, fdev)) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "listen port already used by another ftv device");
		return -EADDRINUSE;
	}
	if (port && ftv_token_cache_enable(fdev)) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "no memory for the SYN replay cache");
		return -ENOMEM;
	}
	return 0;
}

/* The new key pair, if the request has one: made before anything changes. */
static struct ftv_identity *prepare_identity(struct nlattr *attr,
					     struct netlink_ext_ack *extack)
{
	struct ftv_identity *identity = ftv_identity_new(nla_data(attr));

	if (PTR_ERR_OR_ZERO(identity) == -ENOMEM)
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "no memory for the new private key");
	else if (IS_ERR(identity))
		NL_SET_ERR_MSG_ATTR(extack, attr, "private key is not usable");
	return identity;
}

/*
 * Everything that can fail (the listen port's checks and replay cache,
 * the new key pair) is done before anything changes, so that a failed
 * request leaves the device as it was.
 */
static int set_device(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct ftv_identity *identity = NULL;
	struct ftv_device *fdev;
	int ret = 0;

	fdev = lookup_device(genl_info_net(info), attrs, info->extack);
	if (IS_ERR(fdev))
		return PTR_ERR(fdev);
	rtnl_lock();
	mutex_lock(&fdev->device_update_lock);
	if (attrs[FTV_A_LISTEN_PORT]) {
		ret = check_listen_port(fdev, attrs[FTV_A_LISTEN_PORT],
					info->extack);
		if (ret)
			goto out;
	}
	if (attrs[FTV_A_PRIVATE_KEY]) {
		identity = prepare_identity(attrs[FTV_A_PRIVATE_KEY],
					    info->extack);
		ret = PTR_ERR_OR_ZERO(identity);
		if (ret)
			goto out;
	}
	if (attrs[FTV_A_LISTEN_PORT])
		WRITE_ONCE(fdev->listen_port,
			   nla_get_u16(attrs[FTV_A_LISTEN_PORT]));
	if (attrs[FTV_A_FLAGS] &&
	    (nla_get_u32(attrs[FTV_A_FLAGS]) & FTV_DEVICE_F_REPLACE_PEERS))
		ftv_peer_remove_all(fdev);
	if (attrs[FTV_A_FWMARK] &&
	    fdev->fwmark != nla_get_u32(attrs[FTV_A_FWMARK])) {
		WRITE_ONCE(fdev->fwmark, nla_get_u32(attrs[FTV_A_FWMARK]));
		ftv_conn_reset_routes(fdev);
	}
	if (attrs[FTV_A_SHAPE])
		WRITE_ONCE(fdev->shape, nla_get_u8(attrs[FTV_A_SHAPE]));
	if (attrs[FTV_A_PRIVATE_KEY]) {
		ret = ftv_device_set_identity(fdev, identity);
		if (ret)
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[FTV_A_PRIVATE_KEY],
					    "key set, but no memory for the SYN tokens of some peers with a preshared key");
	}
	ftv_device_changed(fdev);
out:
	mutex_unlock(&fdev->device_update_lock);
	rtnl_unlock();
	dev_put(fdev->dev);
	return ret;
}

static int check_allowedip(struct nlattr *attr, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[FTV_ALLOWEDIP_A_MAX + 1];
	u16 family;
	int ret;

	if (nla_type(attr) != FTV_PEER_A_ALLOWEDIP) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "allowed-ips may only hold FTV_PEER_A_ALLOWEDIP");
		return -EINVAL;
	}
	ret = nla_parse_nested(tb, FTV_ALLOWEDIP_A_MAX, attr, allowedip_policy,
			       extack);
	if (ret)
		return ret;
	if (!tb[FTV_ALLOWEDIP_A_FAMILY] || !tb[FTV_ALLOWEDIP_A_IPADDR] ||
	    !tb[FTV_ALLOWEDIP_A_CIDR_MASK]) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "allowed-ip needs family, address and prefix length");
		return -EINVAL;
	}
	family = nla_get_u16(tb[FTV_ALLOWEDIP_A_FAMILY]);
	if (family != AF_INET && family != AF_INET6) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_ALLOWEDIP_A_FAMILY],
				    "allowed-ip family must be AF_INET or AF_INET6");
		return -EINVAL;
	}
	if (nla_len(tb[FTV_ALLOWEDIP_A_IPADDR]) != (family == AF_INET ? 4 : 16)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_ALLOWEDIP_A_IPADDR],
				    "allowed-ip address length does not match its family");
		return -EINVAL;
	}
	if (nla_get_u8(tb[FTV_ALLOWEDIP_A_CIDR_MASK]) >
	    (family == AF_INET ? 32 : 128)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_ALLOWEDIP_A_CIDR_MASK],
				    "allowed-ip prefix length exceeds the address length");
		return -EINVAL;
	}
	return 0;
}

static int check_allowedips(struct nlattr *list, struct netlink_ext_ack *extack)
{
	struct nlattr *attr;
	unsigned int n = 0;
	int rem, ret;

	nla_for_each_nested(attr, list, rem) {
		if (++n > FTV_MAX_ALLOWEDIPS) {
			NL_SET_ERR_MSG_ATTR(extack, list,
					    "too many allowed-ips for one peer");
			return -E2BIG;
		}
		ret = check_allowedip(attr, extack);
		if (ret)
			return ret;
	}
	return 0;
}

/* K:M comes with the mode that uses it, and only with it. */
static int check_fec(struct nlattr **tb, struct netlink_ext_ack *extack)
{
	struct nlattr *mode = tb[FTV_PEER_A_FEC_MODE];
	bool fixed = mode && nla_get_u8(mode) == FTV_FEC_FIXED;
	struct nlattr *k = tb[FTV_PEER_A_FEC_DATA];
	struct nlattr *m = tb[FTV_PEER_A_FEC_REPAIR];

	if (fixed && (!k || !m)) {
		NL_SET_ERR_MSG_ATTR(extack, mode,
				    "fixed FEC needs data (K) and repair (M) counts");
		return -EINVAL;
	}
	if (!fixed && (k || m)) {
		NL_SET_ERR_MSG_ATTR(extack, k ?: m,
				    "FEC K:M given without fixed FEC mode");
		return -EINVAL;
	}
	return 0;
}

/*
 * Off, auto or a byte budget: a policy cannot say "0, 1 or a range", so
 * the spec gives rotate no checks (the policy only its type) and this
 * does them.
 */
static int check_rotate(struct nlattr **tb, struct netlink_ext_ack *extack)
{
	struct nlattr *attr = tb[FTV_PEER_A_ROTATE];
	u32 rotate;

	if (!attr)
		return 0;
	rotate = nla_get_u32(attr);
	if (rotate == FTV_ROTATE_OFF || rotate == FTV_ROTATE_AUTO ||
	    (rotate >= FTV_ROTATE_MIN && rotate <= FTV_ROTATE_MAX))
		return 0;
	NL_SET_ERR_MSG_ATTR(extack, attr,
			    "rotate must be 0 (off), 1 (auto) or a budget of 4096 bytes to 1 GiB");
	return -EINVAL;
}

/* One nest of an endpoints list: one address and a port. */
static int check_list_entry(struct nlattr *attr,
			    struct netlink_ext_ack *extack)
{
	struct nlattr *tb[FTV_ENDPOINT_A_MAX + 1];
	int ret;

	ret = nla_parse_nested(tb, FTV_ENDPOINT_A_MAX, attr, endpoint_policy,
			       extack);
	if (ret)
		return ret;
	if (!tb[FTV_ENDPOINT_A_IPV4] && !tb[FTV_ENDPOINT_A_IPV6]) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "endpoint without an IPv4 or IPv6 address");
		return -EINVAL;
	}
	if (tb[FTV_ENDPOINT_A_IPV4] && tb[FTV_ENDPOINT_A_IPV6]) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_ENDPOINT_A_IPV6],
				    "endpoint has both an IPv4 and an IPv6 address");
		return -EINVAL;
	}
	if (!tb[FTV_ENDPOINT_A_PORT]) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "endpoint port missing");
		return -EINVAL;
	}
	return 0;
}

/* 1 to FTV_MAX_ENDPOINTS endpoints, each complete. */
static int check_endpoints(struct nlattr *list, struct netlink_ext_ack *extack)
{
	unsigned int n = 0;
	struct nlattr *attr;
	int rem, ret;

	nla_for_each_nested(attr, list, rem) {
		if (++n > FTV_MAX_ENDPOINTS) {
			NL_SET_ERR_MSG_ATTR(extack, attr,
					    "more than 8 endpoints");
			return -E2BIG;
		}
		ret = check_list_entry(attr, extack);
		if (ret)
			return ret;
	}
	if (!n) {
		NL_SET_ERR_MSG_ATTR(extack, list,
				    "endpoints list is empty (remove-endpoint forgets the endpoint)");
		return -EINVAL;
	}
	return 0;
}

/* The endpoint as one attribute or as a list, not both; given or removed. */
static int check_endpoint_list(struct nlattr **tb, u32 flags,
			       struct netlink_ext_ack *extack)
{
	struct nlattr *list = tb[FTV_PEER_A_ENDPOINTS];

	if (!list)
		return 0;
	if (tb[FTV_PEER_A_ENDPOINT_PORT] || tb[FTV_PEER_A_ENDPOINT_IPV4] ||
	    tb[FTV_PEER_A_ENDPOINT_IPV6]) {
		NL_SET_ERR_MSG_ATTR(extack, list,
				    "endpoint and endpoints given at once");
		return -EINVAL;
	}
	if (flags & FTV_PEER_F_REMOVE_ENDPOINT) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PEER_A_FLAGS],
				    "endpoints given and removed at once");
		return -EINVAL;
	}
	return check_endpoints(list, extack);
}

/* Rules that span several peer attributes; the policy checked the rest. */
static int check_peer(struct nlattr **tb, struct netlink_ext_ack *extack)
{
	u32 flags = tb[FTV_PEER_A_FLAGS] ? nla_get_u32(tb[FTV_PEER_A_FLAGS]) : 0;
	struct nlattr *addr = tb[FTV_PEER_A_ENDPOINT_IPV4] ?:
			      tb[FTV_PEER_A_ENDPOINT_IPV6];
	int ret;

	if (tb[FTV_PEER_A_ENDPOINT_IPV4] && tb[FTV_PEER_A_ENDPOINT_IPV6]) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PEER_A_ENDPOINT_IPV6],
				    "endpoint has both an IPv4 and an IPv6 address");
		return -EINVAL;
	}
	if (addr && !tb[FTV_PEER_A_ENDPOINT_PORT]) {
		NL_SET_ERR_MSG_ATTR(extack, addr, "endpoint port missing");
		return -EINVAL;
	}
	if (!addr && tb[FTV_PEER_A_ENDPOINT_PORT]) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PEER_A_ENDPOINT_PORT],
				    "endpoint port given without an address");
		return -EINVAL;
	}
	if (addr && (flags & FTV_PEER_F_REMOVE_ENDPOINT)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PEER_A_FLAGS],
				    "endpoint given and removed at once");
		return -EINVAL;
	}
	if (tb[FTV_PEER_A_PRESHARED_KEY] &&
	    (flags & FTV_PEER_F_REMOVE_PRESHARED_KEY)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PEER_A_FLAGS],
				    "preshared key given and removed at once");
		return -EINVAL;
	}
	if (tb[FTV_PEER_A_ALLOWEDIPS]) {
		ret = check_allowedips(tb[FTV_PEER_A_ALLOWEDIPS], extack);
		if (ret)
			return ret;
	}
	ret = check_endpoint_list(tb, flags, extack);
	if (ret)
		return ret;
	return check_fec(tb, extack) ?: check_rotate(tb, extack);
}

static void endpoint_from_attrs(struct ftv_endpoint *ep, struct nlattr **tb)
{
	__be16 port = htons(nla_get_u16(tb[FTV_PEER_A_ENDPOINT_PORT]));

	memset(ep, 0, sizeof(*ep));
	if (tb[FTV_PEER_A_ENDPOINT_IPV4]) {
		ep->addr4.sin_family = AF_INET;
		ep->addr4.sin_addr.s_addr =
			nla_get_in_addr(tb[FTV_PEER_A_ENDPOINT_IPV4]);
		ep->addr4.sin_port = port;
	} else {
		ep->addr6.sin6_family = AF_INET6;
		ep->addr6.sin6_addr =
			nla_get_in6_addr(tb[FTV_PEER_A_ENDPOINT_IPV6]);
		ep->addr6.sin6_port = port;
	}
}

/* Nodes for every prefix in @list, so that applying it cannot fail. */
static int reserve_allowedips(struct ftv_allowedips_reserve *reserve,
			      struct nlattr *list,
			      struct netlink_ext_ack *extack)
{
	struct nlattr *attr;
	unsigned int n = 0;
	int rem;

	if (list)
		nla_for_each_nested(attr, list, rem)
			n++;
	if (ftv_allowedips_reserve(reserve, n)) {
		NL_SET_ERR_MSG_ATTR(extack, list, "no memory for the allowed-ips");
		return -ENOMEM;
	}
	return 0;
}

/* check_allowedips() has vetted @list, and @reserve holds its nodes. */
static void apply_allowedips(struct ftv_peer *peer, struct nlattr *list,
			     bool replace,
			     struct ftv_allowedips_reserve *reserve)
{
	struct nlattr *tb[FTV_ALLOWEDIP_A_MAX + 1], *attr;
	struct ftv_device *fdev = peer->device;
	int rem;

	if (replace)
		ftv_allowedips_remove_by_peer(&fdev->allowedips, peer);
	if (!list)
		return;
	nla_for_each_nested(attr, list, rem) {
		if (nla_parse_nested(tb, FTV_ALLOWEDIP_A_MAX, attr,
				     allowedip_policy, NULL))
			continue;
		WARN_ON(ftv_allowedips_insert(&fdev->allowedips,
					      nla_get_u16(tb[FTV_ALLOWEDIP_A_FAMILY]),
					      nla_data(tb[FTV_ALLOWEDIP_A_IPADDR]),
					      nla_get_u8(tb[FTV_ALLOWEDIP_A_CIDR_MASK]),
					      peer, reserve));
	}
}

/* check_endpoints() vetted @attr: one address and a port. */
static void list_entry_from_attr(struct ftv_endpoint *ep, struct nlattr *attr)
{
	struct nlattr *tb[FTV_ENDPOINT_A_MAX + 1];
	__be16 port;

	memset(ep, 0, sizeof(*ep));
	if (nla_parse_nested(tb, FTV_ENDPOINT_A_MAX, attr, endpoint_policy,
			     NULL))
		return;
	port = htons(nla_get_u16(tb[FTV_ENDPOINT_A_PORT]));
	if (tb[FTV_ENDPOINT_A_IPV4]) {
		ep->addr4.sin_family = AF_INET;
		ep->addr4.sin_addr.s_addr =
			nla_get_in_addr(tb[FTV_ENDPOINT_A_IPV4]);
		ep->addr4.sin_port = port;
	} else {
		ep->addr6.sin6_family = AF_INET6;
		ep->addr6.sin6_addr = nla_get_in6_addr(tb[FTV_ENDPOINT_A_IPV6]);
		ep->addr6.sin6_port = port;
	}
}

/*
 * The endpoints of @list (check_endpoints() vetted it), allocated ahead so
 * that applying them cannot fail; NULL without a list, or an ERR_PTR.
 */
static struct ftv_endpoints *prepare_endpoints(struct nlattr *list,
					       struct netlink_ext_ack *extack)
{
	struct ftv_endpoints *eps;
	struct nlattr *attr;
	int rem;

	if (!list)
		return NULL;
	eps = kzalloc(sizeof(*eps), GFP_KERNEL);
	if (!eps) {
		NL_SET_ERR_MSG_ATTR(extack, list, "no memory for the endpoints");
		return ERR_PTR(-ENOMEM);
	}
	nla_for_each_nested(attr, list, rem) {
		if (eps->count == FTV_MAX_ENDPOINTS)
			break;
		list_entry_from_attr(&eps->ep[eps->count++], attr);
	}
	return eps;
}

/* @eps, from prepare_endpoints(), passes to the peer. */
static void apply_endpoint(struct ftv_peer *peer, struct nlattr **tb,
			   u32 flags, struct ftv_endpoints *eps)
{
	struct ftv_endpoint ep;

	if (eps) {
		ftv_peer_set_endpoints(peer, eps);
	} else if (tb[FTV_PEER_A_ENDPOINT_PORT]) {
		endpoint_from_attrs(&ep, tb);
		ftv_peer_set_endpoint(peer, &ep);
	} else if (flags & FTV_PEER_F_REMOVE_ENDPOINT) {
		memset(&ep, 0, sizeof(ep));
		ftv_peer_set_endpoint(peer, &ep);
	}
}

/*
 * What can fail (the endpoints' list, the preshared key's token, the
 * allowed-ips' nodes) is done first: a request that fails leaves the peer
 * as it was.
 */
static int apply_peer(struct ftv_peer *peer, struct nlattr **tb,
		      struct netlink_ext_ack *extack)
{
	u32 flags = tb[FTV_PEER_A_FLAGS] ? nla_get_u32(tb[FTV_PEER_A_FLAGS]) : 0;
	struct ftv_allowedips_reserve reserve;
	struct ftv_endpoints *eps;
	int ret;

	eps = prepare_endpoints(tb[FTV_PEER_A_ENDPOINTS], extack);
	if (IS_ERR(eps))
		return PTR_ERR(eps);
	ret = reserve_allowedips(&reserve, tb[FTV_PEER_A_ALLOWEDIPS], extack);
	if (ret) {
		kfree(eps);
		return ret;
	}
	if (tb[FTV_PEER_A_PRESHARED_KEY] ||
	    (flags & FTV_PEER_F_REMOVE_PRESHARED_KEY)) {
		ret = ftv_peer_set_psk(peer, tb[FTV_PEER_A_PRESHARED_KEY] ?
					     nla_data(tb[FTV_PEER_A_PRESHARED_KEY]) :
					     NULL);
		if (ret) {
			NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PEER_A_PRESHARED_KEY],
					    "no memory for the SYN token of the preshared key");
			kfree(eps);
			goto out;
		}
	}
	apply_endpoint(peer, tb, flags, eps);
	if (tb[FTV_PEER_A_PERSISTENT_KEEPALIVE])
		ftv_peer_set_keepalive(peer,
				       nla_get_u16(tb[FTV_PEER_A_PERSISTENT_KEEPALIVE]));
	if (tb[FTV_PEER_A_FEC_MODE])
		ftv_peer_set_fec(peer, nla_get_u8(tb[FTV_PEER_A_FEC_MODE]),
				 tb[FTV_PEER_A_FEC_DATA] ?
				 nla_get_u8(tb[FTV_PEER_A_FEC_DATA]) : 0,
				 tb[FTV_PEER_A_FEC_REPAIR] ?
				 nla_get_u8(tb[FTV_PEER_A_FEC_REPAIR]) : 0);
	if (tb[FTV_PEER_A_FLOWS])
		ftv_peer_set_flows(peer, nla_get_u8(tb[FTV_PEER_A_FLOWS]));
	if (tb[FTV_PEER_A_ROTATE])
		ftv_peer_set_rotate(peer, nla_get_u32(tb[FTV_PEER_A_ROTATE]));
	apply_allowedips(peer, tb[FTV_PEER_A_ALLOWEDIPS],
			 flags & FTV_PEER_F_REPLACE_ALLOWEDIPS, &reserve);
out:
	ftv_allowedips_unreserve(&reserve);
	return ret;
}

static int parse_peer(struct genl_info *info, struct nlattr **tb)
{
	int ret;

	if (!info->attrs[FTV_A_PEER]) {
		NL_SET_ERR_MSG_MOD(info->extack, "FTV_A_PEER missing");
		return -EINVAL;
	}
	ret = nla_parse_nested(tb, FTV_PEER_A_MAX, info->attrs[FTV_A_PEER],
			       peer_policy, info->extack);
	if (ret)
		return ret;
	if (!tb[FTV_PEER_A_PUBLIC_KEY]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[FTV_A_PEER],
				    "peer public key missing");
		return -EINVAL;
	}
	return 0;
}

static bool is_own_key(struct ftv_device *fdev, const u8 *public_key)
{
	struct ftv_identity identity;
	bool own;

	if (!ftv_device_copy_identity(fdev, &identity))
		return false;
	own = !memcmp(identity.public_key, public_key, FTV_KEY_LEN);
	memzero_explicit(&identity, sizeof(identity));
	return own;
}

static int create_peer(struct ftv_device *fdev, struct nlattr **tb,
		       struct netlink_ext_ack *extack, struct ftv_peer **out)
{
	const u8 *key = nla_data(tb[FTV_PEER_A_PUBLIC_KEY]);
	struct ftv_peer *peer;

	if (is_own_key(fdev, key)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PEER_A_PUBLIC_KEY],
				    "peer public key is the device's own");
		return -EINVAL;
	}
	peer = ftv_peer_create(fdev, key);
	if (IS_ERR(peer)) {
		if (PTR_ERR(peer) == -ENOSPC)
			NL_SET_ERR_MSG_MOD(extack, "too many peers");
		else
			NL_SET_ERR_MSG_MOD(extack, "no memory for the peer");
		return PTR_ERR(peer);
	}
	*out = ftv_peer_get(peer);
	return 0;
}

/* NEW_PEER, SET_PEER or DEL_PEER, under the device's update lock. */
static int change_peer(struct ftv_device *fdev, u8 cmd, struct nlattr **tb,
		       struct netlink_ext_ack *extack)
{
	struct ftv_peer *peer;
	int ret = 0;

	lockdep_assert_held(&fdev->device_update_lock);
	peer = ftv_peer_lookup(fdev, nla_data(tb[FTV_PEER_A_PUBLIC_KEY]));
	if (cmd == FTV_CMD_NEW_PEER && peer) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PEER_A_PUBLIC_KEY],
				    "peer already exists");
		ret = -EEXIST;
	} else if (cmd == FTV_CMD_NEW_PEER) {
		ret = create_peer(fdev, tb, extack, &peer);
	} else if (!peer) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PEER_A_PUBLIC_KEY],
				    "no such peer");
		ret = -ENOENT;
	}
	if (!ret && cmd == FTV_CMD_DEL_PEER) {
		ftv_peer_remove(peer);
	} else if (!ret) {
		ret = apply_peer(peer, tb, extack);
		/* A peer added without all it was given is not added. */
		if (ret && cmd == FTV_CMD_NEW_PEER)
			ftv_peer_remove(peer);
	}
	ftv_device_changed(fdev);
	ftv_peer_put(peer);
	return ret;
}

static int do_peer(struct genl_info *info, u8 cmd)
{
	struct nlattr *tb[FTV_PEER_A_MAX + 1];
	struct ftv_device *fdev;
	int ret;

	ret = parse_peer(info, tb);
	if (!ret && tb[FTV_PEER_A_PROBE]) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[FTV_PEER_A_PROBE],
				    "a probe step goes in the probe command");
		ret = -EINVAL;
	}
	if (!ret && cmd != FTV_CMD_DEL_PEER)
		ret = check_peer(tb, info->extack);
	if (ret)
		return ret;
	fdev = lookup_device(genl_info_net(info), info->attrs, info->extack);
	if (IS_ERR(fdev))
		return PTR_ERR(fdev);
	mutex_lock(&fdev->device_update_lock);
	ret = change_peer(fdev, cmd, tb, info->extack);
	mutex_unlock(&fdev->device_update_lock);
	dev_put(fdev->dev);
	return ret;
}

static int new_peer(struct sk_buff *skb, struct genl_info *info)
{
	return do_peer(info, FTV_CMD_NEW_PEER);
}

static int set_peer(struct sk_buff *skb, struct genl_info *info)
{
	return do_peer(info, FTV_CMD_SET_PEER);
}

static int del_peer(struct sk_buff *skb, struct genl_info *info)
{
	return do_peer(info, FTV_CMD_DEL_PEER);
}

/* The peer's last answer to a probe's ask, once one came. */
static int put_probe_tell(struct sk_buff *skb, struct ftv_peer *peer)
{
	struct ftv_msg_probe_tell tell;
	struct nlattr *nest;

	if (!ftv_probe_told(peer, &tell))
		return 0;
	nest = nla_nest_start(skb, FTV_PROBE_A_TELL);
	if (!nest ||
	    nla_put_u32(skb, FTV_PROBE_TELL_A_NONCE, le32_to_cpu(tell.nonce)) ||
	    nla_put_u8(skb, FTV_PROBE_TELL_A_STEP, tell.step) ||
	    nla_put_u32(skb, FTV_PROBE_TELL_A_LENGTH,
			le32_to_cpu(tell.length)) ||
	    nla_put_u32(skb, FTV_PROBE_TELL_A_INDEX, le32_to_cpu(tell.index)) ||
	    nla_put_u32(skb, FTV_PROBE_TELL_A_BYTES, le32_to_cpu(tell.bytes)) ||
	    nla_put_u32(skb, FTV_PROBE_TELL_A_LEFT, le32_to_cpu(tell.left)) ||
	    put_resets(skb, FTV_PROBE_TELL_A_RESETS,
		       le32_to_cpu(tell.reset) |
		       (u64)le32_to_cpu(tell.reset_heard) << 32))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* The connections of the peer's session that are up, by number. */
static int put_probe_conns(struct sk_buff *skb, struct ftv_peer *peer)
{
	struct ftv_probe_conn conns[FTV_SESSION_FLOWS];
	struct nlattr *list, *entry;
	unsigned int i, n;

	n = ftv_probe_conns(peer, conns, ARRAY_SIZE(conns));
	list = nla_nest_start(skb, FTV_PROBE_A_CONNS);
	if (!list)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		entry = nla_nest_start(skb, i);
		if (!entry ||
		    nla_put_u32(skb, FTV_PROBE_CONN_A_INDEX, conns[i].index) ||
		    nla_put_u64_64bit(skb, FTV_PROBE_CONN_A_RX_BYTES,
				      conns[i].rx_bytes, FTV_PROBE_CONN_A_PAD) ||
		    (conns[i].path_mtu &&
		     nla_put_u32(skb, FTV_PROBE_CONN_A_PATH_MTU,
				 conns[i].path_mtu)) ||
		    nla_put_u64_64bit(skb, FTV_PROBE_CONN_A_RX_STREAM,
				      conns[i].rx_stream, FTV_PROBE_CONN_A_PAD))
			return -EMSGSIZE;
		nla_nest_end(skb, entry);
	}
	nla_nest_end(skb, list);
	return 0;
}

/* The joins of join steps that came up, by number. */
static int put_probe_joins(struct sk_buff *skb, struct ftv_peer *peer)
{
	u32 joins[FTV_PROBE_JOINS];
	unsigned int i, n;

	n = ftv_probe_joins_up(&peer->probe, joins);
	for (i = 0; i < n; i++)
		if (nla_put_u32(skb, FTV_PROBE_A_JOINS_UP, joins[i]))
			return -EMSGSIZE;
	return 0;
}

/* @joined: the join a join step opened, 0 for none */
static int probe_reply(struct genl_info *info, struct ftv_peer *peer,
		       u32 nonce, u32 joined)
{
	struct nlattr *nest, *probe;
	struct sk_buff *skb;
	void *hdr;

	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	hdr = genlmsg_put(skb, info->snd_portid, info->snd_seq,
			  &ftv_genl_family, 0, FTV_CMD_PROBE);
	if (!hdr)
		goto err;
	if (nla_put_u32(skb, FTV_A_IFINDEX, peer->device->dev->ifindex))
		goto err;
	nest = nla_nest_start(skb, FTV_A_PEER);
	if (!nest ||
	    nla_put(skb, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, peer->public_key))
		goto err;
	probe = nla_nest_start(skb, FTV_PEER_A_PROBE);
	if (!probe || (nonce && nla_put_u32(skb, FTV_PROBE_A_NONCE, nonce)) ||
	    (joined && nla_put_u32(skb, FTV_PROBE_A_JOINED, joined)) ||
	    put_probe_tell(skb, peer) || put_probe_conns(skb, peer) ||
	    put_probe_joins(skb, peer))
		goto err;
	nla_nest_end(skb, probe);
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return genlmsg_reply(skb, info);
err:
	nlmsg_free(skb);
	return -EMSGSIZE;
}

static u32 get_u32_or(struct nlattr *attr, u32 absent)
{
	return attr ? nla_get_u32(attr) : absent;
}

static void probe_step_from_attrs(struct ftv_probe_request *step,
				  struct nlattr **tb)
{
	step->step = tb[FTV_PROBE_A_STEP] ? nla_get_u8(tb[FTV_PROBE_A_STEP]) :
		     FTV_PROBE_READ;
	step->index = get_u32_or(tb[FTV_PROBE_A_INDEX], 0);
	step->bytes = get_u32_or(tb[FTV_PROBE_A_BYTES], 0);
	step->rate = get_u32_or(tb[FTV_PROBE_A_RATE], 0);
	step->length = get_u32_or(tb[FTV_PROBE_A_LENGTH], 0);
	step->shape = tb[FTV_PROBE_A_SHAPE] ? nla_get_u8(tb[FTV_PROBE_A_SHAPE]) :
		      -1;
}

static int check_probe_step(const struct ftv_probe_request *step,
			    struct nlattr **tb, struct netlink_ext_ack *extack)
{
	if (step->step == FTV_PROBE_PAD &&
	    (!tb[FTV_PROBE_A_BYTES] || !tb[FTV_PROBE_A_RATE])) {
		NL_SET_ERR_MSG_MOD(extack, "a pad step needs bytes and rate");
		return -EINVAL;
	}
	if (step->index == FTV_PROBE_INDEX_ALL && step->step != FTV_PROBE_PAD) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PROBE_A_INDEX],
				    "only a pad goes on every connection");
		return -EINVAL;
	}
	if (tb[FTV_PROBE_A_SHAPE] && step->step != FTV_PROBE_JOIN) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PROBE_A_SHAPE],
				    "only a join step has an opening to shape");
		return -EINVAL;
	}
	if (tb[FTV_PROBE_A_BYTES] &&
	    (!step->bytes || step->bytes > FTV_PROBE_MAX_BYTES)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PROBE_A_BYTES],
				    "probe bytes must be 1 to 5242880");
		return -EINVAL;
	}
	if (tb[FTV_PROBE_A_RATE] &&
	    (!step->rate || step->rate > FTV_PROBE_MAX_RATE)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PROBE_A_RATE],
				    "probe rate must be 1 to 100000 kbit/s");
		return -EINVAL;
	}
	return 0;
}

/* A join step: open the join, or say why not. */
static int probe_join(struct ftv_peer *peer,
		      const struct ftv_probe_request *step, struct nlattr **tb,
		      struct netlink_ext_ack *extack, u32 *joined)
{
	int ret = ftv_conn_probe_join(peer, step->index, step->shape, joined);

	switch (ret) {
	case -EOPNOTSUPP:
		NL_SET_ERR_MSG_MOD(extack,
				   "the peer takes no joins, or it opened the session");
		break;
	case -EBUSY:
		NL_SET_ERR_MSG_MOD(extack,
				   "the session takes no more joins (it has all the peer takes, or lost 16 in a row)");
		break;
	case -EAGAIN:
		NL_SET_ERR_MSG_MOD(extack,
				   "joins open at most 50 a second: try again");
		break;
	case -ERANGE:
		NL_SET_ERR_MSG_ATTR(extack, tb[FTV_PROBE_A_INDEX],
				    "the peer has no endpoint of that number");
		break;
	case -ENOMEM:
		NL_SET_ERR_MSG_MOD(extack, "no port or memory for a join");
		break;
	}
	return ret;
}

static int probe(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[FTV_PEER_A_MAX + 1];
	struct nlattr *ptb[FTV_PROBE_A_MAX + 1] = {};
	struct ftv_probe_request step;
	struct ftv_device *fdev;
	struct ftv_peer *peer;
	u32 nonce = 0, joined = 0;
	int ret;

	ret = parse_peer(info, tb);
	if (ret)
		return ret;
	if (tb[FTV_PEER_A_PROBE]) {
		ret = nla_parse_nested(ptb, FTV_PROBE_A_MAX,
				       tb[FTV_PEER_A_PROBE], probe_policy,
				       info->extack);
		if (ret)
			return ret;
	}
	probe_step_from_attrs(&step, ptb);
	ret = check_probe_step(&step, ptb, info->extack);
	if (ret)
		return ret;
	fdev = lookup_device(genl_info_net(info), info->attrs, info->extack);
	if (IS_ERR(fdev))
		return PTR_ERR(fdev);
	peer = ftv_peer_lookup(fdev, nla_data(tb[FTV_PEER_A_PUBLIC_KEY]));
	if (!peer) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[FTV_PEER_A_PUBLIC_KEY],
				    "no such peer");
		ret = -ENOENT;
		goto out;
	}
	if (step.step == FTV_PROBE_JOIN)
		ret = probe_join(peer, &step, ptb, info->extack, &joined);
	else
		ret = ftv_probe_send(peer, &step, &nonce);
	if (ret == -ENOTCONN)
		NL_SET_ERR_MSG_ATTR(info->extack, tb[FTV_PEER_A_PROBE] ?:
				    info->attrs[FTV_A_PEER],
				    "the peer's session or that connection is not up");
	if (!ret)
		ret = probe_reply(info, peer, nonce, joined);
	ftv_peer_put(peer);
out:
	dev_put(fdev->dev);
	return ret;
}

/* Events name peers and endpoints: only for who may configure them. */
static const struct genl_multicast_group ftv_mcgrps[] = {
	{ .name = FTV_MCGRP_PEERS, .flags = GENL_MCAST_CAP_NET_ADMIN },
};

static const struct genl_ops ftv_genl_ops[] = {
	{
		.cmd = FTV_CMD_GET_DEVICE,
		.doit = get_device_do,
		.start = get_device_start,
		.dumpit = get_device_dump,
		.flags = GENL_UNS_ADMIN_PERM,
	}, {
		.cmd = FTV_CMD_SET_DEVICE,
		.doit = set_device,
		.flags = GENL_UNS_ADMIN_PERM,
	}, {
		.cmd = FTV_CMD_NEW_PEER,
		.doit = new_peer,
		.flags = GENL_UNS_ADMIN_PERM,
	}, {
		.cmd = FTV_CMD_SET_PEER,
		.doit = set_peer,
		.flags = GENL_UNS_ADMIN_PERM,
	}, {
		.cmd = FTV_CMD_DEL_PEER,
		.doit = del_peer,
		.flags = GENL_UNS_ADMIN_PERM,
	}, {
		.cmd = FTV_CMD_PROBE,
		.doit = probe,
		.flags = GENL_UNS_ADMIN_PERM,
	}
};

struct genl_family ftv_genl_family __ro_after_init = {
	.ops = ftv_genl_ops,
	.n_ops = ARRAY_SIZE(ftv_genl_ops),
	.mcgrps = ftv_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ftv_mcgrps),
	.resv_start_op = FTV_CMD_PEER_EVENT + 1,
	.name = FTV_GENL_NAME,
	.version = FTV_GENL_VERSION,
	.maxattr = FTV_A_MAX,
	.policy = device_policy,
	.module = THIS_MODULE,
	.netnsok = true,
};

/**
 * ftv_genetlink_init - register the "ftv" family
 *
 * Return: 0 or a negative errno.
 */
int __init ftv_genetlink_init(void)
{
	return genl_register_family(&ftv_genl_family);
}

/**
 * ftv_genetlink_uninit - unregister the family
 */
void ftv_genetlink_uninit(void)
{
	genl_unregister_family(&ftv_genl_family);
}
