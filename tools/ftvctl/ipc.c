// SPDX-License-Identifier: GPL-2.0
/*
 * One socket serves every request of a run: setconf of a large file makes
 * a request per peer, and opening a socket and resolving the family for
 * each would cost more than the request itself.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <sodium.h>

#include "drop-names.h"
#include "ipc.h"
#include "util.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Room for a request without allowed IPs; each of those adds its own. */
#define REQUEST_BASE_SIZE 512
/* nest header + family + address + prefix length, with padding */
#define ALLOWEDIP_REQUEST_SIZE 48
/*
 * An attribute, and so the list of a peer's allowed IPs, holds at most
 * 64 KiB; a longer list is sent in several requests of this many entries
 * (about 40 KiB of IPv6 ones), as wg(8) does.
 */
#define ALLOWEDIPS_PER_REQUEST 1000

#define MALFORMED "the kernel sent a malformed reply"

struct reply {
	bool done;
	int err;			/* negative errno, 0 on success */
	char msg[256];			/* the kernel's extack text, or "" */
	struct device *first, *last;	/* what a dump returned, merged */
};

struct request {
	uint8_t cmd;
	int flags;
	const char *ifname;		/* NULL: every device (dumps only) */
	const struct device *dev;	/* device attributes to set */
	const struct peer *peer;	/* the peer to add, change or remove */
	/* The allowed IPs of @peer this request carries: [ips, ips_end) */
	const struct allowedip *ips, *ips_end;
	/* A later part of @peer's change: its key and allowed IPs only. */
	bool continued;
};

static const struct nla_policy device_policy[FTV_A_MAX + 1] = {
	[FTV_A_IFINDEX] = { .type = NLA_U32 },
	[FTV_A_IFNAME] = { .type = NLA_STRING, .maxlen = IFNAMSIZ },
	[FTV_A_PRIVATE_KEY] = { .minlen = FTV_KEY_LEN, .maxlen = FTV_KEY_LEN },
	[FTV_A_PUBLIC_KEY] = { .minlen = FTV_KEY_LEN, .maxlen = FTV_KEY_LEN },
	[FTV_A_LISTEN_PORT] = { .type = NLA_U16 },
	[FTV_A_FWMARK] = { .type = NLA_U32 },
	[FTV_A_DROPS] = { .type = NLA_NESTED },
	[FTV_A_PEERS] = { .type = NLA_NESTED },
	[FTV_A_PEER] = { .type = NLA_NESTED },
	[FTV_A_EVENT] = { .type = NLA_U8 },
	[FTV_A_SHAPE] = { .type = NLA_U8 },
};

static const struct nla_policy peer_policy[FTV_PEER_A_MAX + 1] = {
	[FTV_PEER_A_PUBLIC_KEY] = { .minlen = FTV_KEY_LEN, .maxlen = FTV_KEY_LEN },
	[FTV_PEER_A_PRESHARED_KEY] = { .minlen = FTV_KEY_LEN, .maxlen = FTV_KEY_LEN },
	[FTV_PEER_A_ENDPOINT_IPV4] = { .minlen = 4, .maxlen = 4 },
	[FTV_PEER_A_ENDPOINT_IPV6] = { .minlen = 16, .maxlen = 16 },
	[FTV_PEER_A_ENDPOINT_PORT] = { .type = NLA_U16 },
	[FTV_PEER_A_PERSISTENT_KEEPALIVE] = { .type = NLA_U16 },
	[FTV_PEER_A_ALLOWEDIPS] = { .type = NLA_NESTED },
	[FTV_PEER_A_LAST_HANDSHAKE] = { .type = NLA_U64 },
	[FTV_PEER_A_RX_BYTES] = { .type = NLA_U64 },
	[FTV_PEER_A_TX_BYTES] = { .type = NLA_U64 },
	[FTV_PEER_A_DROPS] = { .type = NLA_NESTED },
	[FTV_PEER_A_STATE] = { .type = NLA_U8 },
	[FTV_PEER_A_FEC_MODE] = { .type = NLA_U8 },
	[FTV_PEER_A_FEC_DATA] = { .type = NLA_U8 },
	[FTV_PEER_A_FEC_REPAIR] = { .type = NLA_U8 },
	[FTV_PEER_A_FEC_STATS] = { .type = NLA_NESTED },
};

static const struct nla_policy fec_stats_policy[FTV_FEC_A_MAX + 1] = {
	[FTV_FEC_A_ACTIVE] = { .type = NLA_U8 },
	[FTV_FEC_A_DATA] = { .type = NLA_U8 },
	[FTV_FEC_A_REPAIR] = { .type = NLA_U8 },
	[FTV_FEC_A_LOSS_PPM] = { .type = NLA_U32 },
	[FTV_FEC_A_REPAIR_SENT] = { .type = NLA_U64 },
	[FTV_FEC_A_REBUILT] = { .type = NLA_U64 },
	[FTV_FEC_A_GROUPS_LOST] = { .type = NLA_U64 },
};

static const struct nla_policy allowedip_policy[FTV_ALLOWEDIP_A_MAX + 1] = {
	[FTV_ALLOWEDIP_A_FAMILY] = { .type = NLA_U16 },
	[FTV_ALLOWEDIP_A_IPADDR] = { .minlen = 4, .maxlen = 16 },
	[FTV_ALLOWEDIP_A_CIDR_MASK] = { .type = NLA_U8 },
};

/* ---- kernel -> model ---------------------------------------------------- */

/* Every reason drop-names.h knows, each a u64; others are skipped. */
static int read_drops(struct drops *drops, struct nlattr *nest)
{
	struct nlattr *tb[FTV_DROPS_A_MAX + 1];
	int i;

	if (nla_parse_nested(tb, FTV_DROPS_A_MAX, nest, NULL) < 0)
		return -EBADMSG;
	for (i = 0; i <= FTV_DROPS_A_MAX; i++) {
		if (!drop_names[i] || !tb[i])
			continue;
		if (nla_len(tb[i]) != sizeof(uint64_t))
			return -EBADMSG;
		drops->count[i] = nla_get_u64(tb[i]);
	}
	return 0;
}

static int read_allowedip(struct peer *peer, struct nlattr *nest)
{
	struct nlattr *tb[FTV_ALLOWEDIP_A_MAX + 1];
	struct allowedip *ip;
	uint16_t family;
	uint8_t cidr;
	int len;

	if (nla_parse_nested(tb, FTV_ALLOWEDIP_A_MAX, nest, allowedip_policy) < 0 ||
	    !tb[FTV_ALLOWEDIP_A_FAMILY] || !tb[FTV_ALLOWEDIP_A_IPADDR] ||
	    !tb[FTV_ALLOWEDIP_A_CIDR_MASK])
		return -EBADMSG;
	family = nla_get_u16(tb[FTV_ALLOWEDIP_A_FAMILY]);
	len = nla_len(tb[FTV_ALLOWEDIP_A_IPADDR]);
	cidr = nla_get_u8(tb[FTV_ALLOWEDIP_A_CIDR_MASK]);
	if (!(family == AF_INET && len == 4 && cidr <= 32) &&
	    !(family == AF_INET6 && len == 16 && cidr <= 128))
		return -EBADMSG;
	ip = calloc(1, sizeof(*ip));
	if (!ip)
		return -ENOMEM;
	ip->family = family;
	/* ip4 and ip6 share the start of the union */
	memcpy(&ip->ip6, nla_data(tb[FTV_ALLOWEDIP_A_IPADDR]), len);
	ip->cidr = cidr;
	peer_add_allowedip(peer, ip);
	return 0;
}

static int read_allowedips(struct peer *peer, struct nlattr *list)
{
	struct nlattr *nest;
	int rem, ret;

	nla_for_each_nested(nest, list, rem) {
		ret = read_allowedip(peer, nest);
		if (ret)
			return ret;
	}
	return 0;
}

static void read_endpoint(struct peer *peer, struct nlattr **tb)
{
	struct nlattr *port = tb[FTV_PEER_A_ENDPOINT_PORT];
	union endpoint *ep = &peer->endpoint;

	if (!port)
		return;
	if (tb[FTV_PEER_A_ENDPOINT_IPV4]) {
		ep->addr4.sin_family = AF_INET;
		ep->addr4.sin_port = htons(nla_get_u16(port));
		memcpy(&ep->addr4.sin_addr, nla_data(tb[FTV_PEER_A_ENDPOINT_IPV4]),
		       sizeof(ep->addr4.sin_addr));
	} else if (tb[FTV_PEER_A_ENDPOINT_IPV6]) {
		ep->addr6.sin6_family = AF_INET6;
		ep->addr6.sin6_port = htons(nla_get_u16(port));
		memcpy(&ep->addr6.sin6_addr, nla_data(tb[FTV_PEER_A_ENDPOINT_IPV6]),
		       sizeof(ep->addr6.sin6_addr));
	} else {
		return;
	}
	peer->flags |= PEER_HAS_ENDPOINT;
}

/* K and M come with a fixed setting only. */
static void read_fec(struct peer *peer, struct nlattr **tb)
{
	if (!tb[FTV_PEER_A_FEC_MODE])
		return;
	peer->fec.mode = nla_get_u8(tb[FTV_PEER_A_FEC_MODE]);
	if (tb[FTV_PEER_A_FEC_DATA])
		peer->fec.data = nla_get_u8(tb[FTV_PEER_A_FEC_DATA]);
	if (tb[FTV_PEER_A_FEC_REPAIR])
		peer->fec.repair = nla_get_u8(tb[FTV_PEER_A_FEC_REPAIR]);
	peer->flags |= PEER_HAS_FEC;
}

static int read_fec_stats(struct peer *peer, struct nlattr *nest)
{
	struct nlattr *tb[FTV_FEC_A_MAX + 1];
	struct fec_stats *st = &peer->fec_stats;

	if (nla_parse_nested(tb, FTV_FEC_A_MAX, nest, fec_stats_policy) < 0)
		return -EBADMSG;
	if (tb[FTV_FEC_A_ACTIVE])
		st->active = nla_get_u8(tb[FTV_FEC_A_ACTIVE]);
	if (tb[FTV_FEC_A_DATA])
		st->data = nla_get_u8(tb[FTV_FEC_A_DATA]);
	if (tb[FTV_FEC_A_REPAIR])
		st->repair = nla_get_u8(tb[FTV_FEC_A_REPAIR]);
	if (tb[FTV_FEC_A_LOSS_PPM])
		st->loss_ppm = nla_get_u32(tb[FTV_FEC_A_LOSS_PPM]);
	if (tb[FTV_FEC_A_REPAIR_SENT])
		st->repair_sent = nla_get_u64(tb[FTV_FEC_A_REPAIR_SENT]);
	if (tb[FTV_FEC_A_REBUILT])
		st->rebuilt = nla_get_u64(tb[FTV_FEC_A_REBUILT]);
	if (tb[FTV_FEC_A_GROUPS_LOST])
		st->groups_lost = nla_get_u64(tb[FTV_FEC_A_GROUPS_LOST]);
	peer->flags |= PEER_HAS_FEC_STATS;
	return 0;
}

/*
 * Only what is present is taken, so a continued peer keeps what it had.
 * A kernel that reports keys (for showconf) is believed; show never
 * prints them.
 */
static int read_peer_state(struct peer *peer, struct nlattr **tb)
{
	if (tb[FTV_PEER_A_PRESHARED_KEY]) {
		memcpy(peer->preshared_key,
		       nla_data(tb[FTV_PEER_A_PRESHARED_KEY]), FTV_KEY_LEN);
		peer->flags |= PEER_HAS_PRESHARED_KEY;
	}
	if (tb[FTV_PEER_A_PERSISTENT_KEEPALIVE]) {
		peer->persistent_keepalive =
			nla_get_u16(tb[FTV_PEER_A_PERSISTENT_KEEPALIVE]);
		peer->flags |= PEER_HAS_PERSISTENT_KEEPALIVE;
	}
	if (tb[FTV_PEER_A_LAST_HANDSHAKE])
		peer->last_handshake = nla_get_u64(tb[FTV_PEER_A_LAST_HANDSHAKE]);
	if (tb[FTV_PEER_A_RX_BYTES])
		peer->rx_bytes = nla_get_u64(tb[FTV_PEER_A_RX_BYTES]);
	if (tb[FTV_PEER_A_TX_BYTES])
		peer->tx_bytes = nla_get_u64(tb[FTV_PEER_A_TX_BYTES]);
	if (tb[FTV_PEER_A_STATE])
		peer->state = nla_get_u8(tb[FTV_PEER_A_STATE]);
	read_fec(peer, tb);
	if (tb[FTV_PEER_A_FEC_STATS] &&
	    read_fec_stats(peer, tb[FTV_PEER_A_FEC_STATS]))
		return -EBADMSG;
	if (tb[FTV_PEER_A_DROPS])
		return read_drops(&peer->drops, tb[FTV_PEER_A_DROPS]);
	return 0;
}

static struct peer *peer_for_key(struct device *dev, const uint8_t *key)
{
	struct peer *peer = dev->last_peer;

	/* A peer too big for one message goes on in the next one. */
	if (peer && !memcmp(peer->public_key, key, FTV_KEY_LEN))
		return peer;
	peer = calloc(1, sizeof(*peer));
	if (!peer)
		return NULL;
	memcpy(peer->public_key, key, FTV_KEY_LEN);
	peer->flags = PEER_HAS_PUBLIC_KEY;
	device_add_peer(dev, peer);
	return peer;
}

static int read_peer(struct device *dev, struct nlattr *nest)
{
	struct nlattr *tb[FTV_PEER_A_MAX + 1];
	struct peer *peer;
	int ret;

	if (nla_parse_nested(tb, FTV_PEER_A_MAX, nest, peer_policy) < 0 ||
	    !tb[FTV_PEER_A_PUBLIC_KEY])
		return -EBADMSG;
	peer = peer_for_key(dev, nla_data(tb[FTV_PEER_A_PUBLIC_KEY]));
	if (!peer)
		return -ENOMEM;
	read_endpoint(peer, tb);
	ret = read_peer_state(peer, tb);
	if (!ret && tb[FTV_PEER_A_ALLOWEDIPS])
		ret = read_allowedips(peer, tb[FTV_PEER_A_ALLOWEDIPS]);
	return ret;
}

static int read_peers(struct device *dev, struct nlattr *list)
{
	struct nlattr *nest;
	int rem, ret;

	nla_for_each_nested(nest, list, rem) {
		ret = read_peer(dev, nest);
		if (ret)
			return ret;
	}
	return 0;
}

static int read_device(struct device *dev, struct nlattr **tb)
{
	if (tb[FTV_A_IFNAME])
		nla_strlcpy(dev->name, tb[FTV_A_IFNAME], sizeof(dev->name));
	if (tb[FTV_A_PRIVATE_KEY]) {
		memcpy(dev->private_key, nla_data(tb[FTV_A_PRIVATE_KEY]),
		       FTV_KEY_LEN);
		dev->flags |= DEVICE_HAS_PRIVATE_KEY;
	}
	if (tb[FTV_A_PUBLIC_KEY]) {
		memcpy(dev->public_key, nla_data(tb[FTV_A_PUBLIC_KEY]),
		       FTV_KEY_LEN);
		dev->flags |= DEVICE_HAS_PUBLIC_KEY;
	}
	if (tb[FTV_A_LISTEN_PORT]) {
		dev->listen_port = nla_get_u16(tb[FTV_A_LISTEN_PORT]);
		dev->flags |= DEVICE_HAS_LISTEN_PORT;
	}
	if (tb[FTV_A_FWMARK]) {
		dev->fwmark = nla_get_u32(tb[FTV_A_FWMARK]);
		dev->flags |= DEVICE_HAS_FWMARK;
	}
	if (tb[FTV_A_SHAPE]) {
		dev->shape = nla_get_u8(tb[FTV_A_SHAPE]);
		dev->flags |= DEVICE_HAS_SHAPE;
	}
	if (tb[FTV_A_DROPS])
		return read_drops(&dev->drops, tb[FTV_A_DROPS]);
	return 0;
}

/* The kernel may spread one device over several messages. */
static struct device *reply_device(struct reply *reply, uint32_t ifindex)
{
	struct device *dev;

	for (dev = reply->first; dev; dev = dev->next)
		if (dev->ifindex == ifindex)
			return dev;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->ifindex = ifindex;
	if (reply->last)
		reply->last->next = dev;
	else
		reply->first = dev;
	reply->last = dev;
	return dev;
}

static int reply_fail(struct reply *reply, int err, const char *why)
{
	reply->err = err;
	if (why)
		snprintf(reply->msg, sizeof(reply->msg), "%s", why);
	reply->done = true;
	return NL_STOP;
}

static int on_device_msg(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[FTV_A_MAX + 1];
	struct reply *reply = arg;
	struct device *dev;
	int ret;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, FTV_A_MAX, device_policy) < 0 ||
	    !tb[FTV_A_IFINDEX])
		return reply_fail(reply, -EBADMSG, MALFORMED);
	dev = reply_device(reply, nla_get_u32(tb[FTV_A_IFINDEX]));
	if (!dev)
		return reply_fail(reply, -ENOMEM, NULL);
	ret = read_device(dev, tb);
	if (!ret && tb[FTV_A_PEERS])
		ret = read_peers(dev, tb[FTV_A_PEERS]);
	if (ret)
		return reply_fail(reply, ret, ret == -EBADMSG ? MALFORMED : NULL);
	return NL_OK;
}

/* ---- errors and acknowledgements ---------------------------------------- */

/* @offset: where the extack TLVs start, counted from the start of @nlh. */
static void read_extack(struct reply *reply, const struct nlmsghdr *nlh,
			size_t offset)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	const char *text;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || offset >= nlh->nlmsg_len)
		return;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)nlh + offset),
		      nlh->nlmsg_len - offset, NULL) < 0 ||
	    !tb[NLMSGERR_ATTR_MSG])
		return;
	text = nla_data(tb[NLMSGERR_ATTR_MSG]);
	snprintf(reply->msg, sizeof(reply->msg), "%.*s",
		 (int)strnlen(text, nla_len(tb[NLMSGERR_ATTR_MSG])), text);
}

/*
 * In an NLMSG_ERROR the TLVs follow the struct nlmsgerr and, for a failure
 * the kernel did not cap (NETLINK_CAP_ACK), the rest of our request.
 */
static size_t ack_tlv_offset(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = nlmsg_data(nlh);
	size_t echoed = sizeof(e->msg);

	if (e->error && !(nlh->nlmsg_flags & NLM_F_CAPPED))
		echoed = e->msg.nlmsg_len;
	return NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(e->error) + echoed);
}

static int on_error(struct sockaddr_nl *from, struct nlmsgerr *e, void *arg)
{
	/* libnl passes the payload; its header sits just before it. */
	const struct nlmsghdr *nlh = (const void *)((char *)e - NLMSG_HDRLEN);
	struct reply *reply = arg;

	(void)from;
	read_extack(reply, nlh, ack_tlv_offset(nlh));
	return reply_fail(reply, e->error < 0 ? e->error : -e->error, NULL);
}

/* A success can carry a message too (a warning), so it is read as well. */
static int on_ack(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct reply *reply = arg;

	read_extack(reply, nlh, ack_tlv_offset(nlh));
	reply->done = true;
	return NL_STOP;
}

/*
 * A dump that fails after it started reports the errno (and extack) in its
 * NLMSG_DONE, which libnl would otherwise take for a plain end.
 */
static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct reply *reply = arg;
	int err = 0;

	if (nlmsg_datalen(nlh) >= (int)sizeof(err))
		memcpy(&err, nlmsg_data(nlh), sizeof(err));
	if (err < 0) {
		read_extack(reply, nlh, NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(err)));
		return reply_fail(reply, err, NULL);
	}
	reply->done = true;
	return NL_STOP;
}

static int reply_report(const struct reply *reply)
{
	if (!reply->err) {
		if (reply->msg[0])
			fprintf(stderr, "%s: warning: %s\n", PROG_NAME, reply->msg);
	} else if (reply->msg[0]) {
		fprintf(stderr, "%s: %s (%s)\n", PROG_NAME, reply->msg,
			strerror(-reply->err));
	} else {
		fprintf(stderr, "%s: %s\n", PROG_NAME, strerror(-reply->err));
	}
	return reply->err;
}

/* ---- model -> kernel ---------------------------------------------------- */

/* Strictly validated families refuse nests without NLA_F_NESTED. */
static struct nlattr *nest_start(struct nl_msg *msg, int type)
{
	return nla_nest_start(msg, NLA_F_NESTED | type);
}

static int put_device(struct nl_msg *msg, const struct device *dev)
{
	if (dev->flags & DEVICE_HAS_PRIVATE_KEY)
		NLA_PUT(msg, FTV_A_PRIVATE_KEY, FTV_KEY_LEN, dev->private_key);
	if (dev->flags & DEVICE_HAS_LISTEN_PORT)
		NLA_PUT_U16(msg, FTV_A_LISTEN_PORT, dev->listen_port);
	if (dev->flags & DEVICE_HAS_FWMARK)
		NLA_PUT_U32(msg, FTV_A_FWMARK, dev->fwmark);
	if (dev->flags & DEVICE_HAS_SHAPE)
		NLA_PUT_U8(msg, FTV_A_SHAPE, dev->shape);
	if (dev->flags & DEVICE_REPLACE_PEERS)
		NLA_PUT_U32(msg, FTV_A_FLAGS, FTV_DEVICE_F_REPLACE_PEERS);
	return 0;
nla_put_failure:
	return -EMSGSIZE;
}

static int put_endpoint(struct nl_msg *msg, const union endpoint *ep)
{
	if (ep->addr.sa_family == AF_INET) {
		NLA_PUT(msg, FTV_PEER_A_ENDPOINT_IPV4, sizeof(ep->addr4.sin_addr),
			&ep->addr4.sin_addr);
		NLA_PUT_U16(msg, FTV_PEER_A_ENDPOINT_PORT, ntohs(ep->addr4.sin_port));
	} else {
		NLA_PUT(msg, FTV_PEER_A_ENDPOINT_IPV6, sizeof(ep->addr6.sin6_addr),
			&ep->addr6.sin6_addr);
		NLA_PUT_U16(msg, FTV_PEER_A_ENDPOINT_PORT, ntohs(ep->addr6.sin6_port));
	}
	return 0;
nla_put_failure:
	return -EMSGSIZE;
}

/*
 * libnl's nla_nest_end() drops a nest that outgrew 64 KiB and says so
 * only in its return value: never ignore it, or a list vanishes unsaid.
 */
static int nest_end(struct nl_msg *msg, struct nlattr *nest)
{
	return nla_nest_end(msg, nest) < 0 ? -EMSGSIZE : 0;
}

static int put_fec(struct nl_msg *msg, const struct fec *fec)
{
	NLA_PUT_U8(msg, FTV_PEER_A_FEC_MODE, fec->mode);
	if (fec->mode == FTV_FEC_FIXED) {
		NLA_PUT_U8(msg, FTV_PEER_A_FEC_DATA, fec->data);
		NLA_PUT_U8(msg, FTV_PEER_A_FEC_REPAIR, fec->repair);
	}
	return 0;
nla_put_failure:
	return -EMSGSIZE;
}

static int put_allowedip(struct nl_msg *msg, const struct allowedip *ip)
{
	struct nlattr *nest = nest_start(msg, FTV_PEER_A_ALLOWEDIP);

	if (!nest)
		goto nla_put_failure;
	NLA_PUT_U16(msg, FTV_ALLOWEDIP_A_FAMILY, ip->family);
	if (ip->family == AF_INET)
		NLA_PUT(msg, FTV_ALLOWEDIP_A_IPADDR, sizeof(ip->ip4), &ip->ip4);
	else
		NLA_PUT(msg, FTV_ALLOWEDIP_A_IPADDR, sizeof(ip->ip6), &ip->ip6);
	NLA_PUT_U8(msg, FTV_ALLOWEDIP_A_CIDR_MASK, ip->cidr);
	return nest_end(msg, nest);
nla_put_failure:
	return -EMSGSIZE;
}

static int put_allowedips(struct nl_msg *msg, const struct request *req)
{
	const struct allowedip *ip;
	struct nlattr *nest;

	/* nla_nest_end() would drop an empty nest; "none" must still be said. */
	if (req->ips == req->ips_end)
		return nla_put(msg, NLA_F_NESTED | FTV_PEER_A_ALLOWEDIPS, 0, NULL) ?
		       -EMSGSIZE : 0;
	nest = nest_start(msg, FTV_PEER_A_ALLOWEDIPS);
	if (!nest)
		return -EMSGSIZE;
	for (ip = req->ips; ip != req->ips_end; ip = ip->next)
		if (put_allowedip(msg, ip))
			return -EMSGSIZE;
	return nest_end(msg, nest);
}

/* A later part: the key says which peer, and the next allowed IPs. */
static int put_peer_continued(struct nl_msg *msg, const struct request *req)
{
	struct nlattr *nest = nest_start(msg, FTV_A_PEER);

	if (!nest)
		goto nla_put_failure;
	NLA_PUT(msg, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, req->peer->public_key);
	if (put_allowedips(msg, req))
		goto nla_put_failure;
	return nest_end(msg, nest);
nla_put_failure:
	return -EMSGSIZE;
}

static int put_peer(struct nl_msg *msg, const struct request *req)
{
	const struct peer *peer = req->peer;
	struct nlattr *nest;
	uint32_t flags = 0;

	if (req->continued)
		return put_peer_continued(msg, req);
	nest = nest_start(msg, FTV_A_PEER);
	if (!nest)
		goto nla_put_failure;
	NLA_PUT(msg, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, peer->public_key);
	if (peer->flags & PEER_HAS_PRESHARED_KEY)
		NLA_PUT(msg, FTV_PEER_A_PRESHARED_KEY, FTV_KEY_LEN,
			peer->preshared_key);
	if (peer->flags & PEER_REPLACE_ALLOWEDIPS)
		flags |= FTV_PEER_F_REPLACE_ALLOWEDIPS;
	if (peer->flags & PEER_REMOVE_PRESHARED_KEY)
		flags |= FTV_PEER_F_REMOVE_PRESHARED_KEY;
	if (flags)
		NLA_PUT_U32(msg, FTV_PEER_A_FLAGS, flags);
	if ((peer->flags & PEER_HAS_ENDPOINT) &&
	    put_endpoint(msg, &peer->endpoint))
		goto nla_put_failure;
	if (peer->flags & PEER_HAS_PERSISTENT_KEEPALIVE)
		NLA_PUT_U16(msg, FTV_PEER_A_PERSISTENT_KEEPALIVE,
			    peer->persistent_keepalive);
	if ((peer->flags & PEER_HAS_FEC) && put_fec(msg, &peer->fec))
		goto nla_put_failure;
	/* With the replace flag an empty list means "none", so send it too. */
	if ((req->ips != req->ips_end || (flags & FTV_PEER_F_REPLACE_ALLOWEDIPS)) &&
	    put_allowedips(msg, req))
		goto nla_put_failure;
	return nest_end(msg, nest);
nla_put_failure:
	return -EMSGSIZE;
}

/* The buffer may hold a private or pre-shared key. */
static void request_free(struct nl_msg *msg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	sodium_memzero(nlh, nlh->nlmsg_len);
	nlmsg_free(msg);
}

/* The allowed IP after the at most ALLOWEDIPS_PER_REQUEST from @ip on. */
static const struct allowedip *chunk_end(const struct allowedip *ip)
{
	int n;

	for (n = 0; ip && n < ALLOWEDIPS_PER_REQUEST; n++)
		ip = ip->next;
	return ip;
}

/*
 * The first request of a change of @peer: its settings, its flags and
 * the first of its allowed IPs. request_peer_next() makes the others.
 * A removal needs only the key.
 */
static void request_peer_first(struct request *req, uint8_t cmd,
			       const char *ifname, const struct peer *peer)
{
	memset(req, 0, sizeof(*req));
	req->cmd = cmd;
	req->ifname = ifname;
	req->peer = peer;
	if (cmd == FTV_CMD_DEL_PEER)
		return;
	req->ips = peer->first_allowedip;
	req->ips_end = chunk_end(req->ips);
}

/*
 * Turns @req into the next part of its peer's change, if allowed IPs are
 * left: a SET_PEER that adds them (the first part replaced the list if
 * asked to), without the settings, which were sent already.
 */
static bool request_peer_next(struct request *req)
{
	if (!req->ips_end)
		return false;
	req->cmd = FTV_CMD_SET_PEER;
	req->continued = true;
	req->ips = req->ips_end;
	req->ips_end = chunk_end(req->ips);
	return true;
}

static size_t request_size(const struct request *req)
{
	const struct allowedip *ip;
	size_t size = REQUEST_BASE_SIZE;

	for (ip = req->ips; ip != req->ips_end; ip = ip->next)
		size += ALLOWEDIP_REQUEST_SIZE;
	return size;
}

/* Returns 0 with the message in @msgp, or a negative errno. */
static int request_build(const struct request *req, int family,
			 struct nl_msg **msgp)
{
	struct nl_msg *msg = nlmsg_alloc_size(request_size(req));

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, req->flags,
			 req->cmd, FTV_GENL_VERSION) ||
	    (req->ifname && nla_put_string(msg, FTV_A_IFNAME, req->ifname) < 0) ||
	    (req->dev && put_device(msg, req->dev)) ||
	    (req->peer && put_peer(msg, req))) {
		request_free(msg);
		return -EMSGSIZE;
	}
	*msgp = msg;
	return 0;
}

/* ---- the socket --------------------------------------------------------- */

static struct nl_sock *socket_open(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1, ret;

	if (!sk) {
		fprintf(stderr, "%s: %s\n", PROG_NAME, strerror(ENOMEM));
		return NULL;
	}
	ret = genl_connect(sk);
	if (ret < 0) {
		fprintf(stderr, "%s: unable to open a generic netlink socket: %s\n",
			PROG_NAME, nl_geterror(ret));
		nl_socket_free(sk);
		return NULL;
	}
	/*
	 * Ask for the kernel's reason with every error (extack), but not for a
	 * copy of our request, private key and all, attached to it. A kernel
	 * without these options still works, only with terser errors.
	 */
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));
	/* Lets libnl grow its buffer to fit the largest dump message. */
	nl_socket_enable_msg_peek(sk);
	return sk;
}

static int resolve_family(struct nl_sock *sk)
{
	int family = genl_ctrl_resolve(sk, FTV_GENL_NAME);

	if (family == -NLE_OBJ_NOTFOUND)
		fprintf(stderr, "%s: the ftv kernel module is not loaded\n",
			PROG_NAME);
	else if (family < 0)
		fprintf(stderr, "%s: unable to look up the \"%s\" netlink family: %s\n",
			PROG_NAME, FTV_GENL_NAME, nl_geterror(family));
	return family;
}

/* Our callbacks go on a copy of the socket's, so NLCB=debug still works. */
static struct nl_cb *reply_callbacks(struct nl_sock *sk, struct reply *reply)
{
	struct nl_cb *base = nl_socket_get_cb(sk);
	struct nl_cb *cb = nl_cb_clone(base);

	nl_cb_put(base);
	if (!cb)
		return NULL;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_device_msg, reply);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, reply);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, reply);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, reply);
	return cb;
}

static int exchange(struct nl_sock *sk, struct nl_msg *msg, struct reply *reply)
{
	struct nl_cb *cb = reply_callbacks(sk, reply);
	int ret;

	if (!cb) {
		fprintf(stderr, "%s: %s\n", PROG_NAME, strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = nl_send_auto(sk, msg);
	while (ret >= 0 && !reply->done)
		ret = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	if (ret < 0 && !reply->done) {
		fprintf(stderr, "%s: netlink: %s\n", PROG_NAME, nl_geterror(ret));
		return -EIO;
	}
	return reply_report(reply);
}

/* The socket of every request of the run, and the family's id on it. */
static struct nl_sock *conn_sk;
static int conn_family;

static int conn_open(void)
{
	if (conn_sk)
		return 0;
	conn_sk = socket_open();
	if (!conn_sk)
		return -ENOTCONN;
	conn_family = resolve_family(conn_sk);
	if (conn_family < 0) {
		ipc_close();
		return -ENOENT;
	}
	return 0;
}

void ipc_close(void)
{
	if (conn_sk)
		nl_socket_free(conn_sk);
	conn_sk = NULL;
}

static int transact(const struct request *req, struct reply *reply)
{
	struct nl_msg *msg;
	int ret;

	ret = conn_open();
	if (ret)
		return ret;
	ret = request_build(req, conn_family, &msg);
	if (ret) {
		fprintf(stderr, "%s: unable to build the request: %s\n",
			PROG_NAME, strerror(-ret));
		return ret;
	}
	ret = exchange(conn_sk, msg, reply);
	request_free(msg);
	/*
	 * What is left of a failed dump would be taken for the answer to
	 * the next request: the next one gets a new socket.
	 */
	if (ret)
		ipc_close();
	return ret;
}

/* ---- the interface ------------------------------------------------------ */

int ipc_get_devices(struct device **devices, const char *ifname)
{
	struct request req = {
		.cmd = FTV_CMD_GET_DEVICE,
		.flags = NLM_F_DUMP,
		.ifname = ifname,
	};
	struct reply reply = { 0 };
	int ret = transact(&req, &reply);

	/* A kernel that answers an unknown name with nothing is an error too. */
	if (!ret && ifname && !reply.first) {
		fprintf(stderr, "%s: %s: %s\n", PROG_NAME, ifname,
			strerror(ENODEV));
		ret = -ENODEV;
	}
	if (ret) {
		devices_free(reply.first);
		return ret;
	}
	*devices = reply.first;
	return 0;
}

int ipc_set_device(const struct device *dev)
{
	struct request req = {
		.cmd = FTV_CMD_SET_DEVICE,
		.ifname = dev->name,
		.dev = dev,
	};
	struct reply reply = { 0 };

	return transact(&req, &reply);
}

static size_t count_allowedips(const struct allowedip *ip,
			       const struct allowedip *end)
{
	size_t n = 0;

	for (; ip != end; ip = ip->next)
		n++;
	return n;
}

/*
 * A peer with more allowed IPs than fit one request gets several; if a
 * later one fails, the peer is left with part of its list, and the user
 * is told how much.
 */
static int change_peer(uint8_t cmd, const char *ifname, const struct peer *peer)
{
	struct request req;
	struct reply reply;
	int ret;

	request_peer_first(&req, cmd, ifname, peer);
	do {
		memset(&reply, 0, sizeof(reply));
		ret = transact(&req, &reply);
	} while (!ret && request_peer_next(&req));
	if (ret && req.continued)
		fprintf(stderr, "%s: the peer got only the first %zu of its %zu allowed IPs\n",
			PROG_NAME, count_allowedips(peer->first_allowedip, req.ips),
			count_allowedips(peer->first_allowedip, NULL));
	return ret;
}

int ipc_add_peer(const char *ifname, const struct peer *peer)
{
	return change_peer(FTV_CMD_NEW_PEER, ifname, peer);
}

int ipc_set_peer(const char *ifname, const struct peer *peer)
{
	return change_peer(FTV_CMD_SET_PEER, ifname, peer);
}

int ipc_del_peer(const char *ifname, const struct peer *peer)
{
	return change_peer(FTV_CMD_DEL_PEER, ifname, peer);
}

/* ---- events ------------------------------------------------------------- */

struct monitor {
	ipc_event_fn fn;
	void *arg;
	int ret;
};

/* -ENOENT: not an event (nothing else is sent to the group today). */
static int read_event(struct peer_event *ev, struct nl_msg *msg)
{
	struct nlattr *tb[FTV_A_MAX + 1], *ptb[FTV_PEER_A_MAX + 1];
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	if (genlmsg_hdr(nlh)->cmd != FTV_CMD_PEER_EVENT)
		return -ENOENT;
	if (genlmsg_parse(nlh, 0, tb, FTV_A_MAX, device_policy) < 0 ||
	    !tb[FTV_A_IFINDEX] || !tb[FTV_A_EVENT] || !tb[FTV_A_PEER] ||
	    nla_parse_nested(ptb, FTV_PEER_A_MAX, tb[FTV_A_PEER],
			     peer_policy) < 0 ||
	    !ptb[FTV_PEER_A_PUBLIC_KEY])
		return -EBADMSG;
	memset(ev, 0, sizeof(*ev));
	ev->ifindex = nla_get_u32(tb[FTV_A_IFINDEX]);
	if (tb[FTV_A_IFNAME])
		nla_strlcpy(ev->ifname, tb[FTV_A_IFNAME], sizeof(ev->ifname));
	else if (!if_indextoname(ev->ifindex, ev->ifname))
		snprintf(ev->ifname, sizeof(ev->ifname), "#%u", ev->ifindex);
	ev->event = nla_get_u8(tb[FTV_A_EVENT]);
	memcpy(ev->peer.public_key, nla_data(ptb[FTV_PEER_A_PUBLIC_KEY]),
	       FTV_KEY_LEN);
	ev->peer.flags = PEER_HAS_PUBLIC_KEY;
	read_endpoint(&ev->peer, ptb);
	return 0;
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct monitor *m = arg;
	struct peer_event ev;
	int ret = read_event(&ev, msg);

	if (ret == -EBADMSG)
		fprintf(stderr, "%s: the kernel sent a malformed event\n",
			PROG_NAME);
	if (ret)
		return NL_SKIP;
	m->ret = m->fn(&ev, m->arg);
	return m->ret ? NL_STOP : NL_OK;
}

static int join_events(struct nl_sock *sk)
{
	int family = resolve_family(sk), group, ret;

	if (family < 0)
		return -ENOENT;
	group = genl_ctrl_resolve_grp(sk, FTV_GENL_NAME, FTV_MCGRP_PEERS);
	if (group < 0) {
		fprintf(stderr, "%s: the ftv module sends no events (no \"%s\" multicast group): %s\n",
			PROG_NAME, FTV_MCGRP_PEERS, nl_geterror(group));
		return -ENOENT;
	}
	ret = nl_socket_add_membership(sk, group);
	if (ret < 0) {
		fprintf(stderr, "%s: unable to join the \"%s\" group: %s\n",
			PROG_NAME, FTV_MCGRP_PEERS, nl_geterror(ret));
		return -EIO;
	}
	/* Events carry no sequence number of ours; a burst needs room. */
	nl_socket_disable_seq_check(sk);
	nl_socket_set_buffer_size(sk, 1 << 20, 0);
	return 0;
}

int ipc_monitor(ipc_event_fn fn, void *arg)
{
	struct monitor m = { .fn = fn, .arg = arg };
	struct nl_sock *sk = socket_open();
	struct nl_cb *base, *cb = NULL;
	int ret;

	if (!sk)
		return -ENOTCONN;
	ret = join_events(sk);
	if (!ret) {
		base = nl_socket_get_cb(sk);
		cb = nl_cb_clone(base);
		nl_cb_put(base);
		if (cb) {
			nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_event, &m);
		} else {
			fprintf(stderr, "%s: %s\n", PROG_NAME, strerror(ENOMEM));
			ret = -ENOMEM;
		}
	}
	while (!ret && !m.ret) {
		ret = nl_recvmsgs(sk, cb);
		/* An overrun loses events but not the subscription. */
		if (ret == -NLE_NOMEM) {
			fprintf(stderr, "%s: warning: events were lost (the receive buffer overflowed)\n",
				PROG_NAME);
			ret = 0;
		} else if (ret < 0) {
			fprintf(stderr, "%s: netlink: %s\n", PROG_NAME,
				nl_geterror(ret));
			ret = -EIO;
		} else {
			ret = 0;
		}
	}
	if (cb)
		nl_cb_put(cb);
	nl_socket_free(sk);
	return ret ? ret : m.ret;
}
