// SPDX-License-Identifier: GPL-2.0
/*
 * Peer events: what the ftv family sends unasked, to its "peers"
 * multicast group, when a peer's session comes up, moves, fails over,
 * gains a flow or is lost. Any room may send one; so this file calls no
 * other room's functions and reads only what a peer keeps under its own
 * lock, and the command handlers of netlink.c, which call into every
 * room, are called by none of them.
 */

#include "event.h"
#include "conn.h"
#include "device.h"
#include "peer.h"

#include <linux/ftv.h>
#include <net/genetlink.h>
#include <net/netlink.h>

/**
 * ftv_event_put_endpoint - an endpoint's attributes, as events and replies
 *	carry them
 * @skb: the message
 * @ep: the endpoint; one of no family puts nothing
 *
 * Return: 0, or nonzero if @skb is full.
 */
int ftv_event_put_endpoint(struct sk_buff *skb, const struct ftv_endpoint *ep)
{
	if (ep->addr.sa_family == AF_INET)
		return nla_put_in_addr(skb, FTV_PEER_A_ENDPOINT_IPV4,
				       ep->addr4.sin_addr.s_addr) ||
		       nla_put_u16(skb, FTV_PEER_A_ENDPOINT_PORT,
				   ntohs(ep->addr4.sin_port));
	if (ep->addr.sa_family == AF_INET6)
		return nla_put_in6_addr(skb, FTV_PEER_A_ENDPOINT_IPV6,
					&ep->addr6.sin6_addr) ||
		       nla_put_u16(skb, FTV_PEER_A_ENDPOINT_PORT,
				   ntohs(ep->addr6.sin6_port));
	return 0;
}

/**
 * ftv_event_flows_up - the connections of @peer's current session that
 *	are up, as events and replies count them
 * @peer: the peer, its lock held
 *
 * Return: 0 to U8_MAX.
 */
u8 ftv_event_flows_up(struct ftv_peer *peer)
{
	struct ftv_conn *conn;

	lockdep_assert_held(&peer->lock);
	conn = rcu_dereference_protected(peer->conn,
					 lockdep_is_held(&peer->lock));
	return conn ? min(ftv_conn_flows_up(conn), U8_MAX) : 0;
}

static int event_fill(struct sk_buff *skb, struct ftv_peer *peer, u8 event)
{
	struct net_device *dev = peer->device->dev;
	struct ftv_endpoint ep;
	struct nlattr *nest;
	u8 flows_up;

	spin_lock_bh(&peer->lock);
	ep = peer->endpoint;
	flows_up = ftv_event_flows_up(peer);
	spin_unlock_bh(&peer->lock);
	if (nla_put_u32(skb, FTV_A_IFINDEX, dev->ifindex) ||
	    nla_put_string(skb, FTV_A_IFNAME, dev->name) ||
	    nla_put_u8(skb, FTV_A_EVENT, event))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, FTV_A_PEER);
	if (!nest ||
	    nla_put(skb, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, peer->public_key) ||
	    ftv_event_put_endpoint(skb, &ep) ||
	    nla_put_u8(skb, FTV_PEER_A_FLOWS_UP, flows_up) ||
	    nla_put_u64_64bit(skb, FTV_PEER_A_ROTATIONS,
			      atomic64_read(&peer->rotations), FTV_PEER_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/**
 * ftv_event_notify - tell the "peers" group's listeners about @peer
 * @peer: the peer
 * @event: an FTV_EVENT_*; FTV_EVENT_UNSPEC sends nothing
 *
 * Sends nothing if nobody listens in the device's namespace; a message
 * that cannot be allocated is not sent (listeners see a gap, as on an
 * overrun socket).
 */
void ftv_event_notify(struct ftv_peer *peer, u8 event)
{
	struct net_device *dev = peer->device->dev;
	struct sk_buff *skb;
	void *hdr;

	lockdep_assert_not_held(&peer->lock);
	lockdep_assert_not_held(&peer->device->conn_lock);
	if (event == FTV_EVENT_UNSPEC ||
	    !genl_has_listeners(&ftv_genl_family, dev_net(dev), 0))
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &ftv_genl_family, 0, FTV_CMD_PEER_EVENT);
	if (!hdr || event_fill(skb, peer, event)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast_netns(&ftv_genl_family, dev_net(dev), skb, 0, 0,
				GFP_ATOMIC);
}
