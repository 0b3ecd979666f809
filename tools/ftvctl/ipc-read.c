// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel to model: the device and peer attributes of a dump, and the
 * events of the "peers" group, read into struct device and struct peer;
 * the reply to a probe step, into struct probe_reply.
 * Every attribute is checked against a policy first; a message that does
 * not fit is MALFORMED, never half read.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "drop-names.h"
#include "ipc-private.h"
#include "settings.h"
#include "util.h"


/*
 * Attributes are read with the inline helpers below, not libnl's: at 10^5
 * peers its calls for each attribute (parse, type, length, data, next and
 * each getter, every one through the PLT) were a fifth of what show took.
 * The checks are libnl's: each attribute whole inside its parent, no
 * shorter than its type and its policy's minimum, no longer than the
 * policy's maximum, a string NUL-terminated. A message that fails one is
 * MALFORMED, as before.
 */
static const uint16_t attr_type_minlen[NLA_TYPE_MAX + 1] = {
	[NLA_U8] = sizeof(uint8_t),
	[NLA_U16] = sizeof(uint16_t),
	[NLA_U32] = sizeof(uint32_t),
	[NLA_U64] = sizeof(uint64_t),
	[NLA_STRING] = 1,
};

static inline int attr_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

static inline void *attr_data(const struct nlattr *a)
{
	return (char *)a + NLA_HDRLEN;
}

static inline uint8_t attr_u8(const struct nlattr *a)
{
	return *(const uint8_t *)attr_data(a);
}

static inline uint16_t attr_u16(const struct nlattr *a)
{
	uint16_t v;

	memcpy(&v, attr_data(a), sizeof(v));
	return v;
}

static inline uint32_t attr_u32(const struct nlattr *a)
{
	uint32_t v;

	memcpy(&v, attr_data(a), sizeof(v));
	return v;
}

static inline uint64_t attr_u64(const struct nlattr *a)
{
	uint64_t v;

	memcpy(&v, attr_data(a), sizeof(v));
	return v;
}

static bool attr_valid(const struct nlattr *a, const struct nla_policy *pt)
{
	int len = attr_len(a), minlen = pt->minlen;

	if (!minlen && pt->type <= NLA_TYPE_MAX)
		minlen = attr_type_minlen[pt->type];
	if (len < minlen || (pt->maxlen && len > pt->maxlen))
		return false;
	return pt->type != NLA_STRING ||
	       ((char *)attr_data(a))[len - 1] == '\0';
}

/* Whether @a lies whole within the @rem bytes from it. */
static inline bool attr_ok(const struct nlattr *a, int rem)
{
	return rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= rem;
}

/* The attribute after @a, with @rem less what @a took. */
static inline struct nlattr *attr_next(const struct nlattr *a, int *rem)
{
	*rem -= NLA_ALIGN(a->nla_len);
	return (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
}

/* Each attribute @pos in the nest @nest; @rem: the bytes left. */
#define attr_for_each_nested(pos, nest, rem)				\
	for (pos = attr_data(nest), rem = attr_len(nest);		\
	     attr_ok(pos, rem); pos = attr_next(pos, &rem))

/* The attributes in @len bytes at @head into @tb, by type up to @max. */
static int attrs_parse(struct nlattr **tb, int max, void *head, int len,
		       const struct nla_policy *policy)
{
	struct nlattr *a;
	int type;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	for (a = head; attr_ok(a, len); a = attr_next(a, &len)) {
		type = a->nla_type & NLA_TYPE_MASK;
		if (type > max)
			continue;
		if (policy && !attr_valid(a, &policy[type]))
			return -EBADMSG;
		tb[type] = a;
	}
	/* A header left over that does not fit: cut short, or lying. */
	return len >= NLA_HDRLEN ? -EBADMSG : 0;
}

static inline int attrs_nested(struct nlattr **tb, int max,
			       const struct nlattr *nest,
			       const struct nla_policy *policy)
{
	return attrs_parse(tb, max, attr_data(nest), attr_len(nest), policy);
}

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
	[FTV_PEER_A_FLOWS_UP] = { .type = NLA_U8 },
	[FTV_PEER_A_ROTATIONS] = { .type = NLA_U64 },
	[FTV_PEER_A_ENDPOINTS] = { .type = NLA_NESTED },
	[FTV_PEER_A_RESETS] = { .type = NLA_NESTED },
	[FTV_PEER_A_PROBE] = { .type = NLA_NESTED },
};

static const struct nla_policy resets_policy[FTV_RESETS_A_MAX + 1] = {
	[FTV_RESETS_A_TTL] = { .type = NLA_U8 },
	[FTV_RESETS_A_IP_ID] = { .type = NLA_U16 },
	[FTV_RESETS_A_PEER_TTL] = { .type = NLA_U8 },
	[FTV_RESETS_A_PEER_IP_ID] = { .type = NLA_U16 },
};

static const struct nla_policy probe_policy[FTV_PROBE_A_MAX + 1] = {
	[FTV_PROBE_A_NONCE] = { .type = NLA_U32 },
	[FTV_PROBE_A_TELL] = { .type = NLA_NESTED },
	[FTV_PROBE_A_CONNS] = { .type = NLA_NESTED },
	[FTV_PROBE_A_JOINED] = { .type = NLA_U32 },
	[FTV_PROBE_A_JOINS_UP] = { .type = NLA_U32 },
};

static const struct nla_policy probe_tell_policy[FTV_PROBE_TELL_A_MAX + 1] = {
	[FTV_PROBE_TELL_A_NONCE] = { .type = NLA_U32 },
	[FTV_PROBE_TELL_A_STEP] = { .type = NLA_U8 },
	[FTV_PROBE_TELL_A_LENGTH] = { .type = NLA_U32 },
	[FTV_PROBE_TELL_A_INDEX] = { .type = NLA_U32 },
	[FTV_PROBE_TELL_A_BYTES] = { .type = NLA_U32 },
	[FTV_PROBE_TELL_A_RESETS] = { .type = NLA_NESTED },
	[FTV_PROBE_TELL_A_LEFT] = { .type = NLA_U32 },
};

static const struct nla_policy probe_conn_policy[FTV_PROBE_CONN_A_MAX + 1] = {
	[FTV_PROBE_CONN_A_INDEX] = { .type = NLA_U32 },
	[FTV_PROBE_CONN_A_RX_BYTES] = { .type = NLA_U64 },
	[FTV_PROBE_CONN_A_PATH_MTU] = { .type = NLA_U32 },
	[FTV_PROBE_CONN_A_RX_STREAM] = { .type = NLA_U64 },
};

static const struct nla_policy endpoint_policy[FTV_ENDPOINT_A_MAX + 1] = {
	[FTV_ENDPOINT_A_IPV4] = { .minlen = 4, .maxlen = 4 },
	[FTV_ENDPOINT_A_IPV6] = { .minlen = 16, .maxlen = 16 },
	[FTV_ENDPOINT_A_PORT] = { .type = NLA_U16 },
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

/* A message's own attributes, after its genetlink header. */
static int msg_parse(struct nlmsghdr *nlh, struct nlattr **tb)
{
	struct genlmsghdr *ghdr;

	if (!genlmsg_valid_hdr(nlh, 0))
		return -EBADMSG;
	ghdr = nlmsg_data(nlh);
	return attrs_parse(tb, FTV_A_MAX, genlmsg_attrdata(ghdr, 0),
			   genlmsg_attrlen(ghdr, 0), device_policy);
}

/* Every reason drop-names.h knows, each a u64; others are skipped. */
static int read_drops(struct drops *drops, struct nlattr *nest)
{
	struct nlattr *tb[FTV_DROPS_A_MAX + 1];
	int i;

	if (attrs_nested(tb, FTV_DROPS_A_MAX, nest, NULL) < 0)
		return -EBADMSG;
	for (i = 0; i <= FTV_DROPS_A_MAX; i++) {
		if (!drop_names[i] || !tb[i])
			continue;
		if (attr_len(tb[i]) != sizeof(uint64_t))
			return -EBADMSG;
		drops->count[i] = attr_u64(tb[i]);
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

	if (attrs_nested(tb, FTV_ALLOWEDIP_A_MAX, nest, allowedip_policy) < 0 ||
	    !tb[FTV_ALLOWEDIP_A_FAMILY] || !tb[FTV_ALLOWEDIP_A_IPADDR] ||
	    !tb[FTV_ALLOWEDIP_A_CIDR_MASK])
		return -EBADMSG;
	family = attr_u16(tb[FTV_ALLOWEDIP_A_FAMILY]);
	len = attr_len(tb[FTV_ALLOWEDIP_A_IPADDR]);
	cidr = attr_u8(tb[FTV_ALLOWEDIP_A_CIDR_MASK]);
	if (!(family == AF_INET && len == 4 && cidr <= 32) &&
	    !(family == AF_INET6 && len == 16 && cidr <= 128))
		return -EBADMSG;
	ip = calloc(1, sizeof(*ip));
	if (!ip)
		return -ENOMEM;
	ip->family = family;
	/* ip4 and ip6 share the start of the union */
	memcpy(&ip->ip6, attr_data(tb[FTV_ALLOWEDIP_A_IPADDR]), len);
	ip->cidr = cidr;
	peer_add_allowedip(peer, ip);
	return 0;
}

static int read_allowedips(struct peer *peer, struct nlattr *list)
{
	struct nlattr *nest;
	int rem, ret;

	attr_for_each_nested(nest, list, rem) {
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
		ep->addr4.sin_port = htons(attr_u16(port));
		memcpy(&ep->addr4.sin_addr, attr_data(tb[FTV_PEER_A_ENDPOINT_IPV4]),
		       sizeof(ep->addr4.sin_addr));
	} else if (tb[FTV_PEER_A_ENDPOINT_IPV6]) {
		ep->addr6.sin6_family = AF_INET6;
		ep->addr6.sin6_port = htons(attr_u16(port));
		memcpy(&ep->addr6.sin6_addr, attr_data(tb[FTV_PEER_A_ENDPOINT_IPV6]),
		       sizeof(ep->addr6.sin6_addr));
	} else {
		return;
	}
	peer->flags |= PEER_HAS_ENDPOINT;
}

/* One nest of the endpoints list, into @ep. */
static int read_list_entry(union endpoint *ep, struct nlattr *nest)
{
	struct nlattr *tb[FTV_ENDPOINT_A_MAX + 1];
	struct nlattr *port;

	if (attrs_nested(tb, FTV_ENDPOINT_A_MAX, nest, endpoint_policy) < 0 ||
	    !tb[FTV_ENDPOINT_A_PORT])
		return -EBADMSG;
	port = tb[FTV_ENDPOINT_A_PORT];
	memset(ep, 0, sizeof(*ep));
	if (tb[FTV_ENDPOINT_A_IPV4]) {
		ep->addr4.sin_family = AF_INET;
		ep->addr4.sin_port = htons(attr_u16(port));
		memcpy(&ep->addr4.sin_addr, attr_data(tb[FTV_ENDPOINT_A_IPV4]),
		       sizeof(ep->addr4.sin_addr));
	} else if (tb[FTV_ENDPOINT_A_IPV6]) {
		ep->addr6.sin6_family = AF_INET6;
		ep->addr6.sin6_port = htons(attr_u16(port));
		memcpy(&ep->addr6.sin6_addr, attr_data(tb[FTV_ENDPOINT_A_IPV6]),
		       sizeof(ep->addr6.sin6_addr));
	} else {
		return -EBADMSG;
	}
	return 0;
}

/* The configured endpoints, if the kernel reports them (none: NULL). */
static int read_endpoints(struct peer *peer, struct nlattr *list)
{
	struct endpoint_list *eps;
	struct nlattr *nest;
	int rem, ret = 0;

	if (!list)
		return 0;
	eps = calloc(1, sizeof(*eps));
	if (!eps)
		return -ENOMEM;
	attr_for_each_nested(nest, list, rem) {
		if (eps->count == FTV_MAX_ENDPOINTS) {
			ret = -EBADMSG;
			break;
		}
		ret = read_list_entry(&eps->ep[eps->count++], nest);
		if (ret)
			break;
	}
	if (ret) {
		free(eps);
		return ret;
	}
	/* An empty list: a peer that only answers. */
	free(peer->endpoints);
	peer->endpoints = eps->count ? eps : NULL;
	if (!eps->count)
		free(eps);
	peer->flags |= PEER_HAS_ENDPOINTS;
	return 0;
}

/* K and M come with a fixed setting only. */
static void read_fec(struct peer *peer, struct nlattr **tb)
{
	if (!tb[FTV_PEER_A_FEC_MODE])
		return;
	peer->fec.mode = attr_u8(tb[FTV_PEER_A_FEC_MODE]);
	if (tb[FTV_PEER_A_FEC_DATA])
		peer->fec.data = attr_u8(tb[FTV_PEER_A_FEC_DATA]);
	if (tb[FTV_PEER_A_FEC_REPAIR])
		peer->fec.repair = attr_u8(tb[FTV_PEER_A_FEC_REPAIR]);
	peer->flags |= PEER_HAS_FEC;
}

static int read_fec_stats(struct peer *peer, struct nlattr *nest)
{
	struct nlattr *tb[FTV_FEC_A_MAX + 1];
	struct fec_stats *st = &peer->fec_stats;

	if (attrs_nested(tb, FTV_FEC_A_MAX, nest, fec_stats_policy) < 0)
		return -EBADMSG;
	if (tb[FTV_FEC_A_ACTIVE])
		st->active = attr_u8(tb[FTV_FEC_A_ACTIVE]);
	if (tb[FTV_FEC_A_DATA])
		st->data = attr_u8(tb[FTV_FEC_A_DATA]);
	if (tb[FTV_FEC_A_REPAIR])
		st->repair = attr_u8(tb[FTV_FEC_A_REPAIR]);
	if (tb[FTV_FEC_A_LOSS_PPM])
		st->loss_ppm = attr_u32(tb[FTV_FEC_A_LOSS_PPM]);
	if (tb[FTV_FEC_A_REPAIR_SENT])
		st->repair_sent = attr_u64(tb[FTV_FEC_A_REPAIR_SENT]);
	if (tb[FTV_FEC_A_REBUILT])
		st->rebuilt = attr_u64(tb[FTV_FEC_A_REBUILT]);
	if (tb[FTV_FEC_A_GROUPS_LOST])
		st->groups_lost = attr_u64(tb[FTV_FEC_A_GROUPS_LOST]);
	peer->flags |= PEER_HAS_FEC_STATS;
	return 0;
}

/* A resets nest: a peer's, or the one a probe's answer carries. */
static int read_resets(struct resets *r, struct nlattr *nest)
{
	struct nlattr *tb[FTV_RESETS_A_MAX + 1];

	if (attrs_nested(tb, FTV_RESETS_A_MAX, nest, resets_policy) < 0 ||
	    !tb[FTV_RESETS_A_TTL])
		return -EBADMSG;
	r->ttl = attr_u8(tb[FTV_RESETS_A_TTL]);
	r->has_ip_id = tb[FTV_RESETS_A_IP_ID];
	if (r->has_ip_id)
		r->ip_id = attr_u16(tb[FTV_RESETS_A_IP_ID]);
	r->has_peer_ttl = tb[FTV_RESETS_A_PEER_TTL];
	if (r->has_peer_ttl)
		r->peer_ttl = attr_u8(tb[FTV_RESETS_A_PEER_TTL]);
	r->has_peer_ip_id = tb[FTV_RESETS_A_PEER_IP_ID];
	if (r->has_peer_ip_id)
		r->peer_ip_id = attr_u16(tb[FTV_RESETS_A_PEER_IP_ID]);
	return 0;
}

/* The session's connections up and replaced: in dumps and in events. */
static void read_flow_counts(struct peer *peer, struct nlattr **tb)
{
	if (tb[FTV_PEER_A_FLOWS_UP]) {
		peer->flows_up = attr_u8(tb[FTV_PEER_A_FLOWS_UP]);
		peer->flags |= PEER_HAS_FLOWS_UP;
	}
	if (tb[FTV_PEER_A_ROTATIONS]) {
		peer->rotations = attr_u64(tb[FTV_PEER_A_ROTATIONS]);
		peer->flags |= PEER_HAS_ROTATIONS;
	}
}

/* The settings that are one number each (settings.c), each of its size
 * or more: their policy is the table, not peer_policy.
 */
static int read_numbers(struct peer *peer, struct nlattr **tb)
{
	const struct setting_number *n;
	size_t i;

	for (i = 0; (n = setting_number(i)); i++) {
		const struct nlattr *a = tb[n->attr];

		if (!a)
			continue;
		if (attr_len(a) < n->size)
			return -EBADMSG;
		if (n->size == 1)
			setting_number_set(n, peer, attr_u8(a));
		else if (n->size == 2)
			setting_number_set(n, peer, attr_u16(a));
		else
			setting_number_set(n, peer, attr_u32(a));
	}
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
		       attr_data(tb[FTV_PEER_A_PRESHARED_KEY]), FTV_KEY_LEN);
		peer->flags |= PEER_HAS_PRESHARED_KEY;
	}
	if (read_numbers(peer, tb))
		return -EBADMSG;
	if (tb[FTV_PEER_A_LAST_HANDSHAKE])
		peer->last_handshake = attr_u64(tb[FTV_PEER_A_LAST_HANDSHAKE]);
	if (tb[FTV_PEER_A_RX_BYTES])
		peer->rx_bytes = attr_u64(tb[FTV_PEER_A_RX_BYTES]);
	if (tb[FTV_PEER_A_TX_BYTES])
		peer->tx_bytes = attr_u64(tb[FTV_PEER_A_TX_BYTES]);
	if (tb[FTV_PEER_A_STATE])
		peer->state = attr_u8(tb[FTV_PEER_A_STATE]);
	read_fec(peer, tb);
	read_flow_counts(peer, tb);
	if (tb[FTV_PEER_A_FEC_STATS] &&
	    read_fec_stats(peer, tb[FTV_PEER_A_FEC_STATS]))
		return -EBADMSG;
	if (tb[FTV_PEER_A_RESETS]) {
		if (read_resets(&peer->resets, tb[FTV_PEER_A_RESETS]))
			return -EBADMSG;
		peer->flags |= PEER_HAS_RESETS;
	}
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

	if (attrs_nested(tb, FTV_PEER_A_MAX, nest, peer_policy) < 0 ||
	    !tb[FTV_PEER_A_PUBLIC_KEY])
		return -EBADMSG;
	peer = peer_for_key(dev, attr_data(tb[FTV_PEER_A_PUBLIC_KEY]));
	if (!peer)
		return -ENOMEM;
	read_endpoint(peer, tb);
	ret = read_endpoints(peer, tb[FTV_PEER_A_ENDPOINTS]);
	if (!ret)
		ret = read_peer_state(peer, tb);
	if (!ret && tb[FTV_PEER_A_ALLOWEDIPS])
		ret = read_allowedips(peer, tb[FTV_PEER_A_ALLOWEDIPS]);
	return ret;
}

static int read_peers(struct device *dev, struct nlattr *list)
{
	struct nlattr *nest;
	int rem, ret;

	attr_for_each_nested(nest, list, rem) {
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
		memcpy(dev->private_key, attr_data(tb[FTV_A_PRIVATE_KEY]),
		       FTV_KEY_LEN);
		dev->flags |= DEVICE_HAS_PRIVATE_KEY;
	}
	if (tb[FTV_A_PUBLIC_KEY]) {
		memcpy(dev->public_key, attr_data(tb[FTV_A_PUBLIC_KEY]),
		       FTV_KEY_LEN);
		dev->flags |= DEVICE_HAS_PUBLIC_KEY;
	}
	if (tb[FTV_A_LISTEN_PORT]) {
		dev->listen_port = attr_u16(tb[FTV_A_LISTEN_PORT]);
		dev->flags |= DEVICE_HAS_LISTEN_PORT;
	}
	if (tb[FTV_A_FWMARK]) {
		dev->fwmark = attr_u32(tb[FTV_A_FWMARK]);
		dev->flags |= DEVICE_HAS_FWMARK;
	}
	if (tb[FTV_A_SHAPE]) {
		dev->shape = attr_u8(tb[FTV_A_SHAPE]);
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

/* A dump's message: the device, and its peers, merged into the reply. */
int ipc_read_device_msg(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[FTV_A_MAX + 1];
	struct reply *reply = arg;
	struct device *dev;
	int ret;

	if (msg_parse(nlmsg_hdr(msg), tb) < 0 ||
	    !tb[FTV_A_IFINDEX])
		return reply_fail(reply, -EBADMSG, MALFORMED);
	dev = reply_device(reply, attr_u32(tb[FTV_A_IFINDEX]));
	if (!dev)
		return reply_fail(reply, -ENOMEM, NULL);
	ret = read_device(dev, tb);
	if (!ret && tb[FTV_A_PEERS])
		ret = read_peers(dev, tb[FTV_A_PEERS]);
	if (ret)
		return reply_fail(reply, ret, ret == -EBADMSG ? MALFORMED : NULL);
	return NL_OK;
}

/* The peer's last answer; a nonce it must have, the rest may be 0. */
static int read_probe_tell(struct probe_tell *tell, struct nlattr *nest)
{
	struct nlattr *tb[FTV_PROBE_TELL_A_MAX + 1];

	if (attrs_nested(tb, FTV_PROBE_TELL_A_MAX, nest, probe_tell_policy) < 0 ||
	    !tb[FTV_PROBE_TELL_A_NONCE])
		return -EBADMSG;
	tell->nonce = attr_u32(tb[FTV_PROBE_TELL_A_NONCE]);
	if (tb[FTV_PROBE_TELL_A_STEP])
		tell->step = attr_u8(tb[FTV_PROBE_TELL_A_STEP]);
	if (tb[FTV_PROBE_TELL_A_LENGTH])
		tell->length = attr_u32(tb[FTV_PROBE_TELL_A_LENGTH]);
	if (tb[FTV_PROBE_TELL_A_INDEX])
		tell->index = attr_u32(tb[FTV_PROBE_TELL_A_INDEX]);
	if (tb[FTV_PROBE_TELL_A_BYTES])
		tell->bytes = attr_u32(tb[FTV_PROBE_TELL_A_BYTES]);
	if (tb[FTV_PROBE_TELL_A_LEFT])
		tell->left = attr_u32(tb[FTV_PROBE_TELL_A_LEFT]);
	if (tb[FTV_PROBE_TELL_A_RESETS]) {
		if (read_resets(&tell->resets, tb[FTV_PROBE_TELL_A_RESETS]))
			return -EBADMSG;
		tell->has_resets = true;
	}
	return 0;
}

/* An indexed array: each entry a nest, whatever its type says. */
static int read_probe_conns(struct probe_reply *probe, struct nlattr *list)
{
	struct nlattr *tb[FTV_PROBE_CONN_A_MAX + 1], *nest;
	struct probe_conn *conn;
	int rem;

	attr_for_each_nested(nest, list, rem) {
		if (probe->n_conns == PROBE_CONNS_MAX ||
		    attrs_nested(tb, FTV_PROBE_CONN_A_MAX, nest,
				 probe_conn_policy) < 0 ||
		    !tb[FTV_PROBE_CONN_A_INDEX] || !tb[FTV_PROBE_CONN_A_RX_BYTES])
			return -EBADMSG;
		conn = &probe->conns[probe->n_conns++];
		conn->index = attr_u32(tb[FTV_PROBE_CONN_A_INDEX]);
		conn->rx_bytes = attr_u64(tb[FTV_PROBE_CONN_A_RX_BYTES]);
		conn->path_mtu = tb[FTV_PROBE_CONN_A_PATH_MTU] ?
				 attr_u32(tb[FTV_PROBE_CONN_A_PATH_MTU]) : 0;
		conn->has_rx_stream = tb[FTV_PROBE_CONN_A_RX_STREAM];
		if (conn->has_rx_stream)
			conn->rx_stream = attr_u64(tb[FTV_PROBE_CONN_A_RX_STREAM]);
	}
	return 0;
}

/* FTV_PROBE_A_JOINS_UP comes once per join: the parse kept only the last. */
static void read_probe_joins(struct probe_reply *probe, struct nlattr *nest)
{
	struct nlattr *a;
	int rem;

	attr_for_each_nested(a, nest, rem)
		if ((a->nla_type & NLA_TYPE_MASK) == FTV_PROBE_A_JOINS_UP &&
		    probe->n_joins_up < PROBE_JOINS_MAX)
			probe->joins_up[probe->n_joins_up++] = attr_u32(a);
}

static int read_probe(struct probe_reply *probe, struct nlattr *nest)
{
	struct nlattr *tb[FTV_PROBE_A_MAX + 1];

	memset(probe, 0, sizeof(*probe));
	if (attrs_nested(tb, FTV_PROBE_A_MAX, nest, probe_policy) < 0)
		return -EBADMSG;
	if (tb[FTV_PROBE_A_NONCE])
		probe->nonce = attr_u32(tb[FTV_PROBE_A_NONCE]);
	if (tb[FTV_PROBE_A_JOINED])
		probe->joined = attr_u32(tb[FTV_PROBE_A_JOINED]);
	if (tb[FTV_PROBE_A_JOINS_UP])
		read_probe_joins(probe, nest);
	if (tb[FTV_PROBE_A_TELL]) {
		if (read_probe_tell(&probe->tell, tb[FTV_PROBE_A_TELL]))
			return -EBADMSG;
		probe->told = true;
	}
	if (tb[FTV_PROBE_A_CONNS])
		return read_probe_conns(probe, tb[FTV_PROBE_A_CONNS]);
	return 0;
}

/* The reply to a probe step: the peer's key, and what the probe holds. */
int ipc_read_probe_msg(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[FTV_A_MAX + 1], *ptb[FTV_PEER_A_MAX + 1];
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct reply *reply = arg;

	if (msg_parse(nlh, tb) < 0 ||
	    genlmsg_hdr(nlh)->cmd != FTV_CMD_PROBE || reply->probed ||
	    !tb[FTV_A_IFINDEX] || !tb[FTV_A_PEER] ||
	    attrs_nested(ptb, FTV_PEER_A_MAX, tb[FTV_A_PEER], peer_policy) < 0 ||
	    !ptb[FTV_PEER_A_PUBLIC_KEY] || !ptb[FTV_PEER_A_PROBE] ||
	    read_probe(reply->probe, ptb[FTV_PEER_A_PROBE]))
		return reply_fail(reply, -EBADMSG, MALFORMED);
	reply->probed = true;
	return NL_OK;
}

/* -ENOENT: not an event (nothing else is sent to the group today). */
int ipc_read_event(struct peer_event *ev, struct nl_msg *msg)
{
	struct nlattr *tb[FTV_A_MAX + 1], *ptb[FTV_PEER_A_MAX + 1];
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	if (genlmsg_hdr(nlh)->cmd != FTV_CMD_PEER_EVENT)
		return -ENOENT;
	if (msg_parse(nlh, tb) < 0 ||
	    !tb[FTV_A_IFINDEX] || !tb[FTV_A_EVENT] || !tb[FTV_A_PEER] ||
	    attrs_nested(ptb, FTV_PEER_A_MAX, tb[FTV_A_PEER],
			 peer_policy) < 0 ||
	    !ptb[FTV_PEER_A_PUBLIC_KEY])
		return -EBADMSG;
	memset(ev, 0, sizeof(*ev));
	ev->ifindex = attr_u32(tb[FTV_A_IFINDEX]);
	if (tb[FTV_A_IFNAME])
		nla_strlcpy(ev->ifname, tb[FTV_A_IFNAME], sizeof(ev->ifname));
	else if (!if_indextoname(ev->ifindex, ev->ifname))
		snprintf(ev->ifname, sizeof(ev->ifname), "#%u", ev->ifindex);
	ev->event = attr_u8(tb[FTV_A_EVENT]);
	memcpy(ev->peer.public_key, attr_data(ptb[FTV_PEER_A_PUBLIC_KEY]),
	       FTV_KEY_LEN);
	ev->peer.flags = PEER_HAS_PUBLIC_KEY;
	read_endpoint(&ev->peer, ptb);
	read_flow_counts(&ev->peer, ptb);
	return 0;
}

