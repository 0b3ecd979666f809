// SPDX-License-Identifier: GPL-2.0
/*
 * Model to kernel: a request's attributes from struct device and struct
 * peer (or a probe step), and a peer whose allowed IPs do not fit one
 * request cut into several. Buffers that held a key are wiped before they
 * are freed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <sodium.h>

#include "ipc-private.h"
#include "settings.h"
#include "util.h"

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

/* One nest of the endpoints list, numbered from 1 as ynl does. */
static int put_list_entry(struct nl_msg *msg, int index,
			  const union endpoint *ep)
{
	struct nlattr *nest = nest_start(msg, index);

	if (!nest)
		return -EMSGSIZE;
	if (ep->addr.sa_family == AF_INET) {
		NLA_PUT(msg, FTV_ENDPOINT_A_IPV4, sizeof(ep->addr4.sin_addr),
			&ep->addr4.sin_addr);
		NLA_PUT_U16(msg, FTV_ENDPOINT_A_PORT, ntohs(ep->addr4.sin_port));
	} else {
		NLA_PUT(msg, FTV_ENDPOINT_A_IPV6, sizeof(ep->addr6.sin6_addr),
			&ep->addr6.sin6_addr);
		NLA_PUT_U16(msg, FTV_ENDPOINT_A_PORT, ntohs(ep->addr6.sin6_port));
	}
	return nest_end(msg, nest);
nla_put_failure:
	return -EMSGSIZE;
}

/* A list of more than one endpoint; a module older than lists refuses it. */
static int put_endpoints(struct nl_msg *msg, const struct endpoint_list *eps)
{
	struct nlattr *nest = nest_start(msg, FTV_PEER_A_ENDPOINTS);
	unsigned int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < eps->count; i++)
		if (put_list_entry(msg, i + 1, &eps->ep[i]))
			return -EMSGSIZE;
	return nest_end(msg, nest);
}

/* The peer's settings that are one number each, those it was given. */
static int put_numbers(struct nl_msg *msg, const struct peer *peer)
{
	const struct setting_number *n;
	size_t i;
	int ret;

	for (i = 0; (n = setting_number(i)); i++) {
		uint32_t v = setting_number_get(n, peer);

		if (!(peer->flags & n->has))
			continue;
		if (n->size == 1)
			ret = nla_put_u8(msg, n->attr, v);
		else if (n->size == 2)
			ret = nla_put_u16(msg, n->attr, v);
		else
			ret = nla_put_u32(msg, n->attr, v);
		if (ret)
			return ret;
	}
	return 0;
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

/* A probe step: the key says which peer, the probe nest what to ask. */
static int put_peer_probe(struct nl_msg *msg, const struct request *req)
{
	const struct probe_step *step = req->probe;
	struct nlattr *nest, *probe;

	nest = nest_start(msg, FTV_A_PEER);
	if (!nest)
		goto nla_put_failure;
	NLA_PUT(msg, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, req->peer->public_key);
	probe = nest_start(msg, FTV_PEER_A_PROBE);
	if (!probe)
		goto nla_put_failure;
	NLA_PUT_U8(msg, FTV_PROBE_A_STEP, step->step);
	NLA_PUT_U32(msg, FTV_PROBE_A_INDEX, step->index);
	/* The kernel refuses a 0 it was given; absent is "not asked". */
	if (step->bytes)
		NLA_PUT_U32(msg, FTV_PROBE_A_BYTES, step->bytes);
	if (step->rate)
		NLA_PUT_U32(msg, FTV_PROBE_A_RATE, step->rate);
	if (step->length)
		NLA_PUT_U32(msg, FTV_PROBE_A_LENGTH, step->length);
	if (step->shape != PROBE_SHAPE_DEVICE)
		NLA_PUT_U8(msg, FTV_PROBE_A_SHAPE, step->shape == PROBE_SHAPE_ON);
	if (nest_end(msg, probe))
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

	if (req->probe)
		return put_peer_probe(msg, req);
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
	if ((peer->flags & PEER_HAS_ENDPOINTS) && peer->endpoints &&
	    peer->endpoints->count > 1) {
		if (put_endpoints(msg, peer->endpoints))
			goto nla_put_failure;
	} else if ((peer->flags & PEER_HAS_ENDPOINT) &&
		   put_endpoint(msg, &peer->endpoint)) {
		goto nla_put_failure;
	}
	if (put_numbers(msg, peer))
		goto nla_put_failure;
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
void ipc_request_free(struct nl_msg *msg)
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
 * the first of its allowed IPs. ipc_request_peer_next() makes the others.
 * A removal needs only the key.
 */
void ipc_request_peer_first(struct request *req, uint8_t cmd,
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
bool ipc_request_peer_next(struct request *req)
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
int ipc_request_build(const struct request *req, int family,
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
		ipc_request_free(msg);
		return -EMSGSIZE;
	}
	*msgp = msg;
	return 0;
}
