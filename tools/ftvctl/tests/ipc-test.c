// SPDX-License-Identifier: GPL-2.0
/*
 * Offline tests of the netlink layer: no kernel with the ftv module is
 * needed. The netlink layer (ipc.c, ipc-read.c, ipc-write.c) is included
 * whole so that its static encoders and decoders can be fed hand-made
 * messages, the way the kernel would send them.
 *
 *   ipc-test            run the checks, print KTAP, exit 0 if all pass
 *   ipc-test --json     print `show --json` of a made-up dump
 *   ipc-test --text     print `show` of the same dump
 *   ipc-test --events [--json]
 *                       print `monitor` of made-up events
 */
#include "../ipc.c"
#include "../ipc-read.c"
#include "../ipc-write.c"
#include "../monitor.c"

#include <time.h>

#include "../show.h"

#define FAMILY_ID 0x42

static int failures, tests;

static void check(bool ok, const char *what)
{
	tests++;
	if (!ok)
		failures++;
	printf("%sok %d %s\n", ok ? "" : "not ", tests, what);
}

static void fill_key(uint8_t key[FTV_KEY_LEN], uint8_t seed)
{
	int i;

	for (i = 0; i < FTV_KEY_LEN; i++)
		key[i] = seed + i;
}

static struct nl_msg *dump_msg(uint32_t ifindex)
{
	struct nl_msg *msg = nlmsg_alloc();

	genlmsg_put(msg, 1, 1, FAMILY_ID, 0, NLM_F_MULTI, FTV_CMD_GET_DEVICE,
		    FTV_GENL_VERSION);
	nla_put_u32(msg, FTV_A_IFINDEX, ifindex);
	return msg;
}

static void put_drops(struct nl_msg *msg, int type, uint64_t bad_auth,
		      uint64_t replay)
{
	struct nlattr *nest = nest_start(msg, type);

	nla_put_u64(msg, FTV_DROPS_A_BAD_AUTH, bad_auth);
	nla_put_u64(msg, FTV_DROPS_A_REPLAY, replay);
	nla_put_u64(msg, FTV_DROPS_A_MALFORMED, 0);
	if (type == FTV_A_DROPS)
		nla_put_u64(msg, FTV_DROPS_A_ICMP_IGNORED, 7);
	nla_nest_end(msg, nest);
}

static void put_fec_stats(struct nl_msg *msg, bool active, uint8_t k,
			  uint8_t m)
{
	struct nlattr *nest = nest_start(msg, FTV_PEER_A_FEC_STATS);

	nla_put_u8(msg, FTV_FEC_A_ACTIVE, active);
	nla_put_u8(msg, FTV_FEC_A_DATA, k);
	nla_put_u8(msg, FTV_FEC_A_REPAIR, m);
	nla_put_u32(msg, FTV_FEC_A_LOSS_PPM, active ? 8000 : 0);
	nla_put_u64(msg, FTV_FEC_A_REPAIR_SENT, active ? 1234 : 0);
	nla_put_u64(msg, FTV_FEC_A_REBUILT, active ? 56 : 0);
	nla_put_u64(msg, FTV_FEC_A_GROUPS_LOST, 0);
	nla_nest_end(msg, nest);
}

static void put_test_allowedip(struct nl_msg *msg, int family,
			       const char *addr, uint8_t cidr)
{
	struct allowedip ip = { .family = family, .cidr = cidr };

	inet_pton(family, addr, &ip.ip6);
	put_allowedip(msg, &ip);
}

/* Peer A's list (the current one first, then fd00::9), or an empty one. */
static void put_test_endpoints(struct nl_msg *msg, bool two)
{
	uint8_t v4[4] = { 10, 0, 0, 2 }, v6[16] = { 0xfd, [15] = 9 };
	struct nlattr *list, *e;

	/* libnl's nla_nest_end() trims an empty nest; the kernel's keeps it. */
	if (!two) {
		nla_put(msg, NLA_F_NESTED | FTV_PEER_A_ENDPOINTS, 0, NULL);
		return;
	}
	list = nest_start(msg, FTV_PEER_A_ENDPOINTS);
	e = nest_start(msg, 1);
	nla_put(msg, FTV_ENDPOINT_A_IPV4, 4, v4);
	nla_put_u16(msg, FTV_ENDPOINT_A_PORT, 51820);
	nla_nest_end(msg, e);
	e = nest_start(msg, 2);
	nla_put(msg, FTV_ENDPOINT_A_IPV6, 16, v6);
	nla_put_u16(msg, FTV_ENDPOINT_A_PORT, 443);
	nla_nest_end(msg, e);
	nla_nest_end(msg, list);
}

/* A reset's evidence; @peer_ttl 0 leaves out the peer's, @ip_id 0 the IDs */
static void put_resets(struct nl_msg *msg, uint8_t ttl, uint16_t ip_id,
		       uint8_t peer_ttl, uint16_t peer_ip_id)
{
	struct nlattr *nest = nest_start(msg, FTV_PEER_A_RESETS);

	nla_put_u8(msg, FTV_RESETS_A_TTL, ttl);
	if (ip_id)
		nla_put_u16(msg, FTV_RESETS_A_IP_ID, ip_id);
	if (peer_ttl) {
		nla_put_u8(msg, FTV_RESETS_A_PEER_TTL, peer_ttl);
		if (ip_id)
			nla_put_u16(msg, FTV_RESETS_A_PEER_IP_ID, peer_ip_id);
	}
	nla_nest_end(msg, nest);
}

static void put_peer_a(struct nl_msg *msg, time_t handshake)
{
	struct nlattr *peer = nest_start(msg, FTV_A_PEER), *ips;
	uint8_t key[FTV_KEY_LEN], v4[4] = { 10, 0, 0, 2 };

	fill_key(key, 1);
	nla_put(msg, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, key);
	nla_put(msg, FTV_PEER_A_ENDPOINT_IPV4, 4, v4);
	nla_put_u16(msg, FTV_PEER_A_ENDPOINT_PORT, 51820);
	nla_put_u16(msg, FTV_PEER_A_PERSISTENT_KEEPALIVE, 25);
	ips = nest_start(msg, FTV_PEER_A_ALLOWEDIPS);
	put_test_allowedip(msg, AF_INET, "10.9.0.2", 32);
	nla_nest_end(msg, ips);
	nla_put_u64(msg, FTV_PEER_A_LAST_HANDSHAKE, handshake);
	nla_put_u64(msg, FTV_PEER_A_RX_BYTES, 1289748);
	nla_put_u64(msg, FTV_PEER_A_TX_BYTES, 4781506);
	put_drops(msg, FTV_PEER_A_DROPS, 3, 1);
	nla_put_u8(msg, FTV_PEER_A_STATE, FTV_PEER_STATE_ESTABLISHED);
	nla_put_u8(msg, FTV_PEER_A_FEC_MODE, FTV_FEC_AUTO);
	put_fec_stats(msg, true, 16, 2);
	nla_put_u8(msg, FTV_PEER_A_FLOWS, 4);
	nla_put_u8(msg, FTV_PEER_A_FLOWS_UP, 3);
	nla_put_u64(msg, FTV_PEER_A_ROTATIONS, 2);
	nla_put_u32(msg, FTV_PEER_A_ROTATE, 12288);
	put_resets(msg, 40, 4242, 63, 17);
	put_test_endpoints(msg, true);
	nla_nest_end(msg, peer);
}

/* Peer B is split: its second allowed IP comes in the next message. */
static void put_peer_b(struct nl_msg *msg, bool first_part)
{
	struct nlattr *peer = nest_start(msg, FTV_A_PEER), *ips;
	uint8_t key[FTV_KEY_LEN], v6[16] = { 0xfd, [15] = 1 };

	fill_key(key, 2);
	nla_put(msg, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, key);
	if (first_part) {
		nla_put(msg, FTV_PEER_A_ENDPOINT_IPV6, 16, v6);
		nla_put_u16(msg, FTV_PEER_A_ENDPOINT_PORT, 443);
		nla_put_u8(msg, FTV_PEER_A_STATE, FTV_PEER_STATE_CONNECTING);
		nla_put_u8(msg, FTV_PEER_A_FEC_MODE, FTV_FEC_FIXED);
		nla_put_u8(msg, FTV_PEER_A_FEC_DATA, 8);
		nla_put_u8(msg, FTV_PEER_A_FEC_REPAIR, 4);
		put_fec_stats(msg, false, 0, 0);
		nla_put_u8(msg, FTV_PEER_A_FLOWS, 1);
		nla_put_u8(msg, FTV_PEER_A_FLOWS_UP, 0);
		nla_put_u64(msg, FTV_PEER_A_ROTATIONS, 0);
		nla_put_u32(msg, FTV_PEER_A_ROTATE, FTV_ROTATE_AUTO);
		put_resets(msg, 9, 0, 0, 0);
		put_test_endpoints(msg, false);
	}
	ips = nest_start(msg, FTV_PEER_A_ALLOWEDIPS);
	if (first_part)
		put_test_allowedip(msg, AF_INET6, "fd00::2", 128);
	else
		put_test_allowedip(msg, AF_INET, "10.9.0.3", 32);
	nla_nest_end(msg, ips);
	nla_nest_end(msg, peer);
}

static void put_peer_c(struct nl_msg *msg)
{
	struct nlattr *peer = nest_start(msg, FTV_A_PEER);
	uint8_t key[FTV_KEY_LEN];

	fill_key(key, 3);
	nla_put(msg, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, key);
	nla_nest_end(msg, peer);
}

static void feed(struct reply *reply, struct nl_msg *msg)
{
	ipc_read_device_msg(msg, reply);
	nlmsg_free(msg);
}

/*
 * Three messages: ftv0 with its attributes and peers A and B (first part),
 * ftv0 again with the rest of B and peer C, then ftv"1 with nothing set.
 */
static struct device *fake_dump(time_t handshake)
{
	struct reply reply = { 0 };
	struct nl_msg *msg;
	struct nlattr *peers;
	uint8_t key[FTV_KEY_LEN];

	msg = dump_msg(7);
	fill_key(key, 100);
	nla_put_string(msg, FTV_A_IFNAME, "ftv0");
	nla_put(msg, FTV_A_PUBLIC_KEY, FTV_KEY_LEN, key);
	nla_put_u16(msg, FTV_A_LISTEN_PORT, 51820);
	nla_put_u32(msg, FTV_A_FWMARK, 0x1);
	nla_put_u8(msg, FTV_A_SHAPE, 1);
	put_drops(msg, FTV_A_DROPS, 0, 2);
	peers = nest_start(msg, FTV_A_PEERS);
	put_peer_a(msg, handshake);
	put_peer_b(msg, true);
	nla_nest_end(msg, peers);
	feed(&reply, msg);

	msg = dump_msg(7);
	peers = nest_start(msg, FTV_A_PEERS);
	put_peer_b(msg, false);
	put_peer_c(msg);
	nla_nest_end(msg, peers);
	feed(&reply, msg);

	msg = dump_msg(9);
	nla_put_string(msg, FTV_A_IFNAME, "ftv\"1");
	nla_put_u16(msg, FTV_A_LISTEN_PORT, 0);
	feed(&reply, msg);

	if (reply.err)
		fprintf(stderr, "fake dump rejected: %s\n", reply.msg);
	return reply.first;
}

static int peer_ip_count(const struct peer *peer)
{
	const struct allowedip *ip;
	int n = 0;

	for (ip = peer->first_allowedip; ip; ip = ip->next)
		n++;
	return n;
}

static void test_dump_merge(void)
{
	struct device *devs = fake_dump(1700000000), *dev = devs;
	struct peer *a, *b, *c;

	check(dev && !strcmp(dev->name, "ftv0") && dev->ifindex == 7,
	      "dump: first device read");
	if (!dev)
		return;
	check(dev->next && dev->next->ifindex == 9 && !dev->next->next &&
	      !(dev->next->flags & DEVICE_HAS_PUBLIC_KEY),
	      "dump: messages of two devices kept apart");
	a = dev->first_peer;
	b = a ? a->next : NULL;
	c = b ? b->next : NULL;
	check(a && b && c && !c->next, "dump: peers merged over messages");
	if (!c)
		return;
	check(peer_ip_count(b) == 2 && b->state == FTV_PEER_STATE_CONNECTING &&
	      (b->flags & PEER_HAS_ENDPOINT),
	      "dump: split peer continued, not duplicated");
	check((a->flags & PEER_HAS_ENDPOINTS) && a->endpoints &&
	      a->endpoints->count == 2 &&
	      a->endpoints->ep[1].addr6.sin6_family == AF_INET6 &&
	      a->endpoints->ep[1].addr6.sin6_port == htons(443) &&
	      (b->flags & PEER_HAS_ENDPOINTS) && !b->endpoints &&
	      !(c->flags & PEER_HAS_ENDPOINTS),
	      "dump: endpoint lists read, an empty one and none told apart");
	check(a->endpoint.addr4.sin_port == htons(51820) &&
	      a->drops.count[FTV_DROPS_A_BAD_AUTH] == 3 && a->rx_bytes == 1289748 &&
	      a->persistent_keepalive == 25,
	      "dump: peer attributes read");
	check(dev->fwmark == 1 && dev->drops.count[FTV_DROPS_A_REPLAY] == 2 &&
	      dev->drops.count[FTV_DROPS_A_ICMP_IGNORED] == 7 &&
	      (dev->flags & DEVICE_HAS_SHAPE) && dev->shape,
	      "dump: device attributes read");
	check((a->flags & PEER_HAS_FEC) && a->fec.mode == FTV_FEC_AUTO &&
	      (a->flags & PEER_HAS_FEC_STATS) && a->fec_stats.active &&
	      a->fec_stats.data == 16 && a->fec_stats.repair == 2 &&
	      a->fec_stats.loss_ppm == 8000 && a->fec_stats.repair_sent == 1234 &&
	      a->fec_stats.rebuilt == 56 && !a->fec_stats.groups_lost &&
	      fec_equal(b->fec, (struct fec){ FTV_FEC_FIXED, 8, 4 }) &&
	      !b->fec_stats.active && !(c->flags & (PEER_HAS_FEC | PEER_HAS_FEC_STATS)),
	      "dump: FEC settings and statistics read");
	check((a->flags & PEER_HAS_ROTATE) && a->rotate == 12288 &&
	      (b->flags & PEER_HAS_ROTATE) && b->rotate == FTV_ROTATE_AUTO &&
	      !(c->flags & PEER_HAS_ROTATE),
	      "dump: rotate read, absent from an older module");
	devices_free(devs);
}

static void test_dump_malformed(void)
{
	struct reply reply = { 0 };
	struct nl_msg *msg = dump_msg(7);
	struct nlattr *peers = nest_start(msg, FTV_A_PEERS);
	struct nlattr *peer = nest_start(msg, FTV_A_PEER), *state;
	uint8_t key[FTV_KEY_LEN];

	nla_put(msg, FTV_PEER_A_PUBLIC_KEY, 31, "short key, one byte too short!");
	nla_nest_end(msg, peer);
	nla_nest_end(msg, peers);
	check(ipc_read_device_msg(msg, &reply) == NL_STOP && reply.err == -EBADMSG &&
	      !strcmp(reply.msg, MALFORMED), "dump: short key refused");
	nlmsg_free(msg);
	devices_free(reply.first);

	/* An attribute that says it is longer than its nest. */
	memset(&reply, 0, sizeof(reply));
	msg = dump_msg(7);
	peers = nest_start(msg, FTV_A_PEERS);
	peer = nest_start(msg, FTV_A_PEER);
	fill_key(key, 1);
	nla_put(msg, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, key);
	state = nlmsg_tail(nlmsg_hdr(msg));
	nla_put_u8(msg, FTV_PEER_A_STATE, FTV_PEER_STATE_IDLE);
	nla_nest_end(msg, peer);
	nla_nest_end(msg, peers);
	state->nla_len += 8;
	check(ipc_read_device_msg(msg, &reply) == NL_STOP &&
	      reply.err == -EBADMSG && !strcmp(reply.msg, MALFORMED),
	      "dump: attribute past the end of its nest refused");
	nlmsg_free(msg);
	devices_free(reply.first);
}

/* An NLMSG_ERROR as the kernel builds it, optionally echoing a request. */
static struct nl_msg *error_msg(int err, int flags, size_t echo, const char *text)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlmsghdr *nlh;
	struct nlmsgerr *e;

	nlh = nlmsg_put(msg, 1, 1, NLMSG_ERROR, sizeof(*e) + echo, flags);
	e = nlmsg_data(nlh);
	e->error = err;
	e->msg.nlmsg_len = sizeof(e->msg) + echo;
	e->msg.nlmsg_type = FAMILY_ID;
	if (text)
		nla_put_string(msg, NLMSGERR_ATTR_MSG, text);
	nla_put_u32(msg, NLMSGERR_ATTR_OFFS, 20);
	return msg;
}

static void test_extack(const char *what, int flags, size_t echo)
{
	struct nl_msg *msg = error_msg(-ENODEV, flags, echo,
				       "Unable to access interface ftv9");
	struct reply reply = { 0 };

	on_error(NULL, nlmsg_data(nlmsg_hdr(msg)), &reply);
	check(reply.done && reply.err == -ENODEV &&
	      !strcmp(reply.msg, "Unable to access interface ftv9"), what);
	nlmsg_free(msg);
}

static void test_extack_absent(void)
{
	struct nl_msg *msg = error_msg(-EPERM, 0, 0, NULL);
	struct reply reply = { 0 };

	on_error(NULL, nlmsg_data(nlmsg_hdr(msg)), &reply);
	check(reply.err == -EPERM && !reply.msg[0], "extack: none, errno kept");
	nlmsg_free(msg);
}

static void test_done_error(void)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlmsghdr *nlh;
	struct reply reply = { 0 };
	int err = -ENOENT;

	nlh = nlmsg_put(msg, 1, 1, NLMSG_DONE, sizeof(err),
			NLM_F_MULTI | NLM_F_ACK_TLVS);
	memcpy(nlmsg_data(nlh), &err, sizeof(err));
	nla_put_string(msg, NLMSGERR_ATTR_MSG, "Peer vanished during dump");
	on_finish(msg, &reply);
	check(reply.done && reply.err == -ENOENT &&
	      !strcmp(reply.msg, "Peer vanished during dump"),
	      "extack: failed dump reported in NLMSG_DONE");
	nlmsg_free(msg);
}

static struct nlattr *request_peer(struct nl_msg *msg, struct nlattr **tb)
{
	struct nlattr *top[FTV_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, top, FTV_A_MAX, NULL) < 0 ||
	    !top[FTV_A_PEER] || !(top[FTV_A_PEER]->nla_type & NLA_F_NESTED) ||
	    !top[FTV_A_IFNAME] || strcmp(nla_get_string(top[FTV_A_IFNAME]), "ftv0"))
		return NULL;
	if (nla_parse_nested(tb, FTV_PEER_A_MAX, top[FTV_A_PEER], NULL) < 0)
		return NULL;
	return top[FTV_A_PEER];
}

static void test_request_peer_add(void)
{
	struct peer peer = { .flags = PEER_HAS_PUBLIC_KEY | PEER_HAS_ENDPOINT |
				      PEER_HAS_PRESHARED_KEY |
				      PEER_HAS_PERSISTENT_KEEPALIVE |
				      PEER_HAS_FEC | PEER_HAS_FLOWS |
				      PEER_HAS_ROTATE,
			     .fec = { FTV_FEC_FIXED, 16, 2 }, .flows = 3,
			     .rotate = 1U << 20 };
	struct nlattr *tb[FTV_PEER_A_MAX + 1];
	struct allowedip ip4 = { .family = AF_INET, .cidr = 24 };
	struct allowedip ip6 = { .family = AF_INET6, .cidr = 64 };
	struct nl_msg *msg = NULL;
	struct request req;
	int ips = 0, rem;
	struct nlattr *pos;

	fill_key(peer.public_key, 5);
	fill_key(peer.preshared_key, 6);
	peer.endpoint.addr6.sin6_family = AF_INET6;
	peer.endpoint.addr6.sin6_port = htons(51820);
	peer.persistent_keepalive = 25;
	peer_add_allowedip(&peer, &ip4);
	peer_add_allowedip(&peer, &ip6);
	ipc_request_peer_first(&req, FTV_CMD_NEW_PEER, "ftv0", &peer);
	ipc_request_build(&req, FAMILY_ID, &msg);
	check(msg && request_peer(msg, tb) && tb[FTV_PEER_A_ENDPOINT_IPV6] &&
	      nla_get_u16(tb[FTV_PEER_A_ENDPOINT_PORT]) == 51820 &&
	      nla_len(tb[FTV_PEER_A_PRESHARED_KEY]) == FTV_KEY_LEN &&
	      nla_get_u16(tb[FTV_PEER_A_PERSISTENT_KEEPALIVE]) == 25 &&
	      nla_get_u8(tb[FTV_PEER_A_FEC_MODE]) == FTV_FEC_FIXED &&
	      nla_get_u8(tb[FTV_PEER_A_FEC_DATA]) == 16 &&
	      nla_get_u8(tb[FTV_PEER_A_FEC_REPAIR]) == 2 &&
	      nla_get_u8(tb[FTV_PEER_A_FLOWS]) == 3 &&
	      nla_get_u32(tb[FTV_PEER_A_ROTATE]) == 1U << 20 &&
	      !tb[FTV_PEER_A_FLAGS] && tb[FTV_PEER_A_ALLOWEDIPS],
	      "request: peer add carries every option, no flags");
	if (msg && tb[FTV_PEER_A_ALLOWEDIPS])
		nla_for_each_nested(pos, tb[FTV_PEER_A_ALLOWEDIPS], rem)
			ips += nla_type(pos) == FTV_PEER_A_ALLOWEDIP;
	check(ips == 2, "request: allowed IPs nested one by one");
	if (msg)
		ipc_request_free(msg);
}

/* A list of two goes as the endpoints nest, entries numbered from 1; the
 * lone endpoint attributes stay out.
 */
static void test_request_peer_list(void)
{
	struct endpoint_list eps = { .count = 2 };
	struct peer peer = { .flags = PEER_HAS_PUBLIC_KEY | PEER_HAS_ENDPOINT |
				      PEER_HAS_ENDPOINTS, .endpoints = &eps };
	struct nlattr *tb[FTV_PEER_A_MAX + 1], *pos, *e[FTV_ENDPOINT_A_MAX + 1];
	struct nl_msg *msg = NULL;
	struct request req;
	int n = 0, ok = 0, rem;

	fill_key(peer.public_key, 8);
	eps.ep[0].addr4.sin_family = AF_INET;
	eps.ep[0].addr4.sin_port = htons(443);
	eps.ep[1].addr6.sin6_family = AF_INET6;
	eps.ep[1].addr6.sin6_port = htons(8443);
	peer.endpoint = eps.ep[0];
	ipc_request_peer_first(&req, FTV_CMD_SET_PEER, "ftv0", &peer);
	ipc_request_build(&req, FAMILY_ID, &msg);
	if (msg && request_peer(msg, tb) && tb[FTV_PEER_A_ENDPOINTS])
		nla_for_each_nested(pos, tb[FTV_PEER_A_ENDPOINTS], rem) {
			n++;
			if (nla_type(pos) == n &&
			    !nla_parse_nested(e, FTV_ENDPOINT_A_MAX, pos, NULL) &&
			    e[FTV_ENDPOINT_A_PORT] &&
			    !!e[FTV_ENDPOINT_A_IPV4] == (n == 1) &&
			    !!e[FTV_ENDPOINT_A_IPV6] == (n == 2))
				ok++;
		}
	check(msg && n == 2 && ok == 2 && !tb[FTV_PEER_A_ENDPOINT_PORT] &&
	      !tb[FTV_PEER_A_ENDPOINT_IPV4],
	      "request: an endpoint list goes as the endpoints nest only");
	if (msg)
		ipc_request_free(msg);
}

static void test_request_peer_clear(void)
{
	struct peer peer = { .flags = PEER_HAS_PUBLIC_KEY |
				      PEER_REPLACE_ALLOWEDIPS };
	struct nlattr *tb[FTV_PEER_A_MAX + 1];
	struct nl_msg *msg = NULL;
	struct request req;

	ipc_request_peer_first(&req, FTV_CMD_SET_PEER, "ftv0", &peer);
	ipc_request_build(&req, FAMILY_ID, &msg);

	check(msg && request_peer(msg, tb) &&
	      nla_get_u32(tb[FTV_PEER_A_FLAGS]) == FTV_PEER_F_REPLACE_ALLOWEDIPS &&
	      tb[FTV_PEER_A_ALLOWEDIPS] && !nla_len(tb[FTV_PEER_A_ALLOWEDIPS]) &&
	      !tb[FTV_PEER_A_ENDPOINT_PORT] && !tb[FTV_PEER_A_FEC_MODE] &&
	      !tb[FTV_PEER_A_FLOWS] && !tb[FTV_PEER_A_ROTATE],
	      "request: peer set allowed-ips \"\" replaces with nothing");
	if (msg)
		ipc_request_free(msg);
}

#define SPLIT_IPS 100000

/* Entry i of a long list: 10.0.0.0 + i/32 if i is even, fd00::i/128 if odd. */
static void split_ip(struct allowedip *ip, uint32_t i)
{
	uint32_t be = htonl(i);

	memset(ip, 0, sizeof(*ip));
	if (i % 2) {
		ip->family = AF_INET6;
		ip->ip6.s6_addr[0] = 0xfd;
		memcpy(&ip->ip6.s6_addr[12], &be, 4);
		ip->cidr = 128;
	} else {
		ip->family = AF_INET;
		ip->ip4.s_addr = htonl(0x0a000000 + i);
		ip->cidr = 32;
	}
}

/* The i of split_ip(), or -1 if @nest is not one of its entries. */
static long split_index(struct nlattr *nest)
{
	struct nlattr *tb[FTV_ALLOWEDIP_A_MAX + 1];
	struct allowedip want;
	uint32_t be;
	long i;

	if (nla_type(nest) != FTV_PEER_A_ALLOWEDIP ||
	    nla_parse_nested(tb, FTV_ALLOWEDIP_A_MAX, nest, allowedip_policy) < 0 ||
	    !tb[FTV_ALLOWEDIP_A_FAMILY] || !tb[FTV_ALLOWEDIP_A_IPADDR] ||
	    !tb[FTV_ALLOWEDIP_A_CIDR_MASK])
		return -1;
	if (nla_get_u16(tb[FTV_ALLOWEDIP_A_FAMILY]) == AF_INET6 &&
	    nla_len(tb[FTV_ALLOWEDIP_A_IPADDR]) == 16) {
		memcpy(&be, (uint8_t *)nla_data(tb[FTV_ALLOWEDIP_A_IPADDR]) + 12, 4);
		i = ntohl(be);
	} else if (nla_len(tb[FTV_ALLOWEDIP_A_IPADDR]) == 4) {
		memcpy(&be, nla_data(tb[FTV_ALLOWEDIP_A_IPADDR]), 4);
		i = (long)ntohl(be) - 0x0a000000;
	} else {
		return -1;
	}
	if (i < 0 || i >= SPLIT_IPS)
		return -1;
	split_ip(&want, i);
	return nla_get_u16(tb[FTV_ALLOWEDIP_A_FAMILY]) == want.family &&
	       !memcmp(nla_data(tb[FTV_ALLOWEDIP_A_IPADDR]), &want.ip6,
		       nla_len(tb[FTV_ALLOWEDIP_A_IPADDR])) &&
	       nla_get_u8(tb[FTV_ALLOWEDIP_A_CIDR_MASK]) == want.cidr ? i : -1;
}

/* The peer nest's attributes other than the key and the allowed IPs. */
static int split_extras(struct nlattr *peer)
{
	struct nlattr *pos;
	int rem, n = 0;

	nla_for_each_nested(pos, peer, rem)
		n += nla_type(pos) != FTV_PEER_A_PUBLIC_KEY &&
		     nla_type(pos) != FTV_PEER_A_ALLOWEDIPS;
	return n;
}

struct split_result {
	int requests, too_big, bad_first, bad_later, bad_entries;
	long next;		/* the entry expected next, in order */
};

static void split_check_request(struct split_result *r, struct nl_msg *msg,
				uint8_t first_cmd, uint32_t first_flags,
				unsigned char *seen)
{
	struct nlattr *tb[FTV_PEER_A_MAX + 1], *peer, *pos;
	uint8_t cmd = genlmsg_hdr(nlmsg_hdr(msg))->cmd;
	uint32_t flags;
	int rem;
	long i;

	if (nlmsg_hdr(msg)->nlmsg_len > 0xffff)
		r->too_big++;
	peer = request_peer(msg, tb);
	if (!peer || !tb[FTV_PEER_A_PUBLIC_KEY] || !tb[FTV_PEER_A_ALLOWEDIPS]) {
		r->bad_later++;
		return;
	}
	flags = tb[FTV_PEER_A_FLAGS] ? nla_get_u32(tb[FTV_PEER_A_FLAGS]) : 0;
	if (!r->requests++)
		r->bad_first += cmd != first_cmd || flags != first_flags ||
				!tb[FTV_PEER_A_ENDPOINT_PORT] ||
				!tb[FTV_PEER_A_PRESHARED_KEY] ||
				!tb[FTV_PEER_A_PERSISTENT_KEEPALIVE] ||
				!tb[FTV_PEER_A_FEC_MODE];
	else
		r->bad_later += cmd != FTV_CMD_SET_PEER || split_extras(peer);
	nla_for_each_nested(pos, tb[FTV_PEER_A_ALLOWEDIPS], rem) {
		i = split_index(pos);
		if (i < 0 || i != r->next) {
			r->bad_entries++;
			continue;
		}
		seen[i]++;
		r->next++;
	}
}

/*
 * A list far over the 64 KiB of an attribute is sent in requests that each
 * fit, carry every entry once and in order, the first with the peer's
 * settings and flags, the others a SET_PEER with only the key and entries.
 */
static void test_request_split(uint8_t cmd, bool replace, const char *what)
{
	struct peer peer = { .flags = PEER_HAS_PUBLIC_KEY | PEER_HAS_ENDPOINT |
				      PEER_HAS_PRESHARED_KEY |
				      PEER_HAS_PERSISTENT_KEEPALIVE |
				      PEER_HAS_FEC,
			     .fec = { FTV_FEC_OFF, 0, 0 } };
	struct allowedip *ips = calloc(SPLIT_IPS, sizeof(*ips));
	unsigned char *seen = calloc(SPLIT_IPS, 1);
	struct split_result r = { 0 };
	struct nl_msg *msg;
	struct request req;
	long i, once = 0;
	char desc[200];

	fill_key(peer.public_key, 7);
	peer.endpoint.addr4.sin_family = AF_INET;
	peer.endpoint.addr4.sin_port = htons(443);
	peer.persistent_keepalive = 25;
	if (replace)
		peer.flags |= PEER_REPLACE_ALLOWEDIPS;
	for (i = 0; i < SPLIT_IPS; i++) {
		split_ip(&ips[i], i);
		peer_add_allowedip(&peer, &ips[i]);
	}
	ipc_request_peer_first(&req, cmd, "ftv0", &peer);
	do {
		if (ipc_request_build(&req, FAMILY_ID, &msg)) {
			r.too_big++;
			break;
		}
		split_check_request(&r, msg, cmd,
				    replace ? FTV_PEER_F_REPLACE_ALLOWEDIPS : 0,
				    seen);
		ipc_request_free(msg);
	} while (ipc_request_peer_next(&req));
	for (i = 0; i < SPLIT_IPS; i++)
		once += seen[i] == 1;
	printf("# %s: %d requests, %ld of %d entries sent once\n", what,
	       r.requests, once, SPLIT_IPS);
	snprintf(desc, sizeof(desc), "split: %s: %d entries in %d requests of at most %d",
		 what, SPLIT_IPS, r.requests, ALLOWEDIPS_PER_REQUEST);
	check(r.requests == SPLIT_IPS / ALLOWEDIPS_PER_REQUEST && !r.too_big &&
	      !r.bad_first && !r.bad_later && !r.bad_entries &&
	      once == SPLIT_IPS, desc);
	free(ips);
	free(seen);
}

/* Exactly ALLOWEDIPS_PER_REQUEST is one request; one more makes two. */
static void test_request_split_edges(void)
{
	struct allowedip *ips = calloc(ALLOWEDIPS_PER_REQUEST + 1, sizeof(*ips));
	struct peer peer = { .flags = PEER_HAS_PUBLIC_KEY };
	struct request req;
	int i, one, two;

	for (i = 0; i < ALLOWEDIPS_PER_REQUEST; i++) {
		split_ip(&ips[i], i);
		peer_add_allowedip(&peer, &ips[i]);
	}
	ipc_request_peer_first(&req, FTV_CMD_NEW_PEER, "ftv0", &peer);
	for (one = 1; ipc_request_peer_next(&req); one++)
		;
	split_ip(&ips[i], i);
	peer_add_allowedip(&peer, &ips[i]);
	ipc_request_peer_first(&req, FTV_CMD_NEW_PEER, "ftv0", &peer);
	for (two = 1; ipc_request_peer_next(&req); two++)
		;
	check(one == 1 && two == 2 && req.ips == &ips[i] && !req.ips_end,
	      "split: a full request is one, one entry more makes two");
	ipc_request_peer_first(&req, FTV_CMD_DEL_PEER, "ftv0", &peer);
	check(!req.ips && !ipc_request_peer_next(&req),
	      "split: a removal is one request, with no allowed IPs");
	free(ips);
}

/* What does not fit is an error, never a list quietly left out. */
static void test_request_too_big(void)
{
	struct allowedip *ips = calloc(3000, sizeof(*ips));
	struct peer peer = { .flags = PEER_HAS_PUBLIC_KEY };
	struct nl_msg *msg = NULL;
	struct request req;
	int i, ret;

	for (i = 0; i < 3000; i++) {
		split_ip(&ips[i], i);
		peer_add_allowedip(&peer, &ips[i]);
	}
	ipc_request_peer_first(&req, FTV_CMD_NEW_PEER, "ftv0", &peer);
	req.ips_end = NULL;	/* all 3000 in one, as ftvctl once did */
	ret = ipc_request_build(&req, FAMILY_ID, &msg);
	check(ret == -EMSGSIZE && !msg,
	      "split: a list over 64 KiB in one request is refused, not dropped");
	free(ips);
}

static void test_request_device(void)
{
	struct device dev = { .name = "ftv0",
			      .flags = DEVICE_HAS_PRIVATE_KEY |
				       DEVICE_HAS_FWMARK | DEVICE_HAS_SHAPE,
			      .fwmark = 0x1f, .shape = false };
	struct request req = { .cmd = FTV_CMD_SET_DEVICE, .ifname = dev.name,
			       .dev = &dev };
	struct nlattr *tb[FTV_A_MAX + 1];
	struct nl_msg *msg = NULL;

	ipc_request_build(&req, FAMILY_ID, &msg);

	check(msg && genlmsg_parse(nlmsg_hdr(msg), 0, tb, FTV_A_MAX, NULL) >= 0 &&
	      genlmsg_hdr(nlmsg_hdr(msg))->cmd == FTV_CMD_SET_DEVICE &&
	      nla_len(tb[FTV_A_PRIVATE_KEY]) == FTV_KEY_LEN &&
	      nla_get_u32(tb[FTV_A_FWMARK]) == 0x1f && !tb[FTV_A_LISTEN_PORT] &&
	      tb[FTV_A_SHAPE] && nla_get_u8(tb[FTV_A_SHAPE]) == 0 &&
	      !tb[FTV_A_FLAGS],
	      "request: set sends only the given device attributes");
	if (msg)
		ipc_request_free(msg);
}

/*
 * The real kernel's side of extended acks, without ftv: the same request
 * sent to the ethtool family is invalid there (ftv's attribute 2 is not a
 * string for ethtool), and the kernel explains why. Covers the socket
 * options and both paths: a plain request, and a dump refused at its start.
 */
static void test_live_extack(const char *what, uint8_t cmd, int flags,
			     bool echo_request)
{
	struct request req = { .cmd = cmd, .flags = flags, .ifname = "ftv0" };
	struct reply reply = { 0 };
	struct nl_sock *sk = socket_open();
	int family = sk ? genl_ctrl_resolve(sk, "ethtool") : -1;
	int zero = 0;
	struct nl_msg *msg = NULL;

	/* ftvctl caps acks; undo that to see the TLVs found past the echo. */
	if (sk && echo_request)
		setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK,
			   &zero, sizeof(zero));

	if (family < 0) {
		printf("ok %d %s # SKIP no ethtool netlink family\n", ++tests, what);
	} else {
		ipc_request_build(&req, family, &msg);
		exchange(sk, msg, &reply);
		ipc_request_free(msg);
		printf("# kernel said: \"%s\" (%s)\n", reply.msg,
		       strerror(-reply.err));
		check(reply.err < 0 && reply.msg[0], what);
	}
	if (sk)
		nl_socket_free(sk);
}

/* The probe nest of a probe request, parsed; NULL if it is not one. */
static struct nlattr *request_probe(struct nl_msg *msg, struct nlattr **ptb)
{
	struct nlattr *tb[FTV_PEER_A_MAX + 1];
	uint8_t key[FTV_KEY_LEN];

	fill_key(key, 1);
	if (genlmsg_hdr(nlmsg_hdr(msg))->cmd != FTV_CMD_PROBE ||
	    !request_peer(msg, tb) || !tb[FTV_PEER_A_PUBLIC_KEY] ||
	    memcmp(nla_data(tb[FTV_PEER_A_PUBLIC_KEY]), key, FTV_KEY_LEN) ||
	    !tb[FTV_PEER_A_PROBE] ||
	    !(tb[FTV_PEER_A_PROBE]->nla_type & NLA_F_NESTED) ||
	    tb[FTV_PEER_A_FLAGS] || tb[FTV_PEER_A_ALLOWEDIPS] ||
	    nla_parse_nested(ptb, FTV_PROBE_A_MAX, tb[FTV_PEER_A_PROBE],
			     NULL) < 0)
		return NULL;
	return tb[FTV_PEER_A_PROBE];
}

static void test_request_probe(void)
{
	struct peer peer = { .flags = PEER_HAS_PUBLIC_KEY };
	struct probe_step step = {
		.step = FTV_PROBE_PAD,
		.index = FTV_PROBE_INDEX_ALL,
		.bytes = 1000000,
		.rate = 8000,
	};
	struct request req = {
		.cmd = FTV_CMD_PROBE,
		.ifname = "ftv0",
		.peer = &peer,
		.probe = &step,
	};
	struct nlattr *ptb[FTV_PROBE_A_MAX + 1];
	struct nl_msg *msg = NULL;

	fill_key(peer.public_key, 1);
	ipc_request_build(&req, FAMILY_ID, &msg);
	check(msg && request_probe(msg, ptb) && ptb[FTV_PROBE_A_STEP] &&
	      nla_get_u8(ptb[FTV_PROBE_A_STEP]) == FTV_PROBE_PAD &&
	      nla_get_u32(ptb[FTV_PROBE_A_INDEX]) == FTV_PROBE_INDEX_ALL &&
	      ptb[FTV_PROBE_A_BYTES] &&
	      nla_get_u32(ptb[FTV_PROBE_A_BYTES]) == 1000000 &&
	      ptb[FTV_PROBE_A_RATE] &&
	      nla_get_u32(ptb[FTV_PROBE_A_RATE]) == 8000 &&
	      !ptb[FTV_PROBE_A_LENGTH],
	      "request: probe pad, key and step in nests");
	if (msg)
		ipc_request_free(msg);

	/* An echo: what is 0 is not sent, for the kernel refuses a 0. */
	step = (struct probe_step){ .step = FTV_PROBE_ECHO, .index = 3 };
	msg = NULL;
	ipc_request_build(&req, FAMILY_ID, &msg);
	check(msg && request_probe(msg, ptb) &&
	      nla_get_u8(ptb[FTV_PROBE_A_STEP]) == FTV_PROBE_ECHO &&
	      nla_get_u32(ptb[FTV_PROBE_A_INDEX]) == 3 &&
	      !ptb[FTV_PROBE_A_BYTES] && !ptb[FTV_PROBE_A_RATE] &&
	      !ptb[FTV_PROBE_A_LENGTH],
	      "request: probe echo, no bytes, rate or length");
	if (msg)
		ipc_request_free(msg);
}

/*
 * A probe's reply as the kernel builds it. @bad: 1 a connection without
 * its bytes, 2 a tell's nonce of one byte, 3 no probe nest at all.
 */
static struct nl_msg *probe_reply_msg(int bad)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlattr *peer, *probe, *tell, *resets, *conns, *conn;
	uint8_t key[FTV_KEY_LEN];

	genlmsg_put(msg, 1, 1, FAMILY_ID, 0, 0, FTV_CMD_PROBE,
		    FTV_GENL_VERSION);
	nla_put_u32(msg, FTV_A_IFINDEX, 7);
	peer = nest_start(msg, FTV_A_PEER);
	fill_key(key, 1);
	nla_put(msg, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, key);
	if (bad == 3) {
		nla_nest_end(msg, peer);
		return msg;
	}
	probe = nest_start(msg, FTV_PEER_A_PROBE);
	nla_put_u32(msg, FTV_PROBE_A_NONCE, 0x12345679);
	tell = nest_start(msg, FTV_PROBE_A_TELL);
	if (bad == 2)
		nla_put_u8(msg, FTV_PROBE_TELL_A_NONCE, 1);
	else
		nla_put_u32(msg, FTV_PROBE_TELL_A_NONCE, 0x12345679);
	nla_put_u8(msg, FTV_PROBE_TELL_A_STEP, FTV_PROBE_PAD);
	nla_put_u32(msg, FTV_PROBE_TELL_A_LENGTH, 20);
	nla_put_u32(msg, FTV_PROBE_TELL_A_INDEX, 0);
	nla_put_u32(msg, FTV_PROBE_TELL_A_BYTES, 1000000);
	nla_put_u32(msg, FTV_PROBE_TELL_A_LEFT, 999000);
	resets = nest_start(msg, FTV_PROBE_TELL_A_RESETS);
	nla_put_u8(msg, FTV_RESETS_A_TTL, 50);
	nla_put_u8(msg, FTV_RESETS_A_PEER_TTL, 61);
	nla_nest_end(msg, resets);
	nla_nest_end(msg, tell);
	conns = nest_start(msg, FTV_PROBE_A_CONNS);
	conn = nest_start(msg, 0);
	nla_put_u32(msg, FTV_PROBE_CONN_A_INDEX, 0);
	nla_put_u64(msg, FTV_PROBE_CONN_A_RX_BYTES, 123456);
	nla_nest_end(msg, conn);
	conn = nest_start(msg, 1);
	nla_put_u32(msg, FTV_PROBE_CONN_A_INDEX, 3);
	if (bad != 1)
		nla_put_u64(msg, FTV_PROBE_CONN_A_RX_BYTES, 1ULL << 40);
	nla_nest_end(msg, conn);
	nla_nest_end(msg, conns);
	nla_nest_end(msg, probe);
	nla_nest_end(msg, peer);
	return msg;
}

static void test_probe_reply(void)
{
	static const char *const what[] = {
		"probe reply: a connection without its bytes refused",
		"probe reply: a tell's nonce of the wrong size refused",
		"probe reply: none of a probe's nest refused",
	};
	struct probe_reply out;
	struct reply reply = { .probe = &out };
	struct nl_msg *msg = probe_reply_msg(0);
	int bad;

	check(ipc_read_probe_msg(msg, &reply) == NL_OK && reply.probed &&
	      !reply.err && out.nonce == 0x12345679 && out.told &&
	      out.tell.nonce == 0x12345679 && out.tell.step == FTV_PROBE_PAD &&
	      out.tell.length == 20 && out.tell.bytes == 1000000 &&
	      out.tell.left == 999000 && out.tell.has_resets &&
	      out.tell.resets.ttl == 50 && out.tell.resets.has_peer_ttl &&
	      out.tell.resets.peer_ttl == 61 && !out.tell.resets.has_ip_id &&
	      out.n_conns == 2 && out.conns[0].rx_bytes == 123456 &&
	      out.conns[1].index == 3 && out.conns[1].rx_bytes == 1ULL << 40,
	      "probe reply: nonce, the peer's answer and the connections read");
	nlmsg_free(msg);

	for (bad = 1; bad <= 3; bad++) {
		memset(&reply, 0, sizeof(reply));
		reply.probe = &out;
		msg = probe_reply_msg(bad);
		check(ipc_read_probe_msg(msg, &reply) == NL_STOP &&
		      reply.err == -EBADMSG && !strcmp(reply.msg, MALFORMED) &&
		      !reply.probed, what[bad - 1]);
		nlmsg_free(msg);
	}

	/* A dump's message where a probe's reply was awaited. */
	memset(&reply, 0, sizeof(reply));
	reply.probe = &out;
	msg = dump_msg(7);
	check(ipc_read_probe_msg(msg, &reply) == NL_STOP &&
	      reply.err == -EBADMSG, "probe reply: another command's refused");
	nlmsg_free(msg);
}

/* An event; @flows_up < 0 leaves out it and @rotations (an older module) */
static struct nl_msg *event_msg(uint8_t event, const char *ifname,
				bool endpoint, int flows_up, uint64_t rotations)
{
	struct nl_msg *msg = nlmsg_alloc();
	uint8_t key[FTV_KEY_LEN], v4[4] = { 10, 0, 0, 1 };
	struct nlattr *peer;

	genlmsg_put(msg, 0, 0, FAMILY_ID, 0, 0, FTV_CMD_PEER_EVENT,
		    FTV_GENL_VERSION);
	nla_put_u32(msg, FTV_A_IFINDEX, 7);
	if (ifname)
		nla_put_string(msg, FTV_A_IFNAME, ifname);
	nla_put_u8(msg, FTV_A_EVENT, event);
	peer = nest_start(msg, FTV_A_PEER);
	fill_key(key, 1);
	nla_put(msg, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, key);
	if (endpoint) {
		nla_put(msg, FTV_PEER_A_ENDPOINT_IPV4, 4, v4);
		nla_put_u16(msg, FTV_PEER_A_ENDPOINT_PORT, 51820);
	}
	if (flows_up >= 0) {
		nla_put_u8(msg, FTV_PEER_A_FLOWS_UP, flows_up);
		nla_put_u64(msg, FTV_PEER_A_ROTATIONS, rotations);
	}
	nla_nest_end(msg, peer);
	return msg;
}

/* Each event through the same path as a received one, ftv1's filtered. */
static void feed_events(bool json)
{
	struct monitor_opts opts = { .json = json };
	struct monitor m = { .fn = print_event, .arg = &opts };
	static const struct {
		uint8_t event;
		const char *ifname;
		bool endpoint;
		int flows_up;
		uint64_t rotations;
	} list[] = {
		{ FTV_EVENT_ESTABLISHED, "ftv0", true, 1, 0 },
		{ FTV_EVENT_REKEYED, "ftv0", true, 1, 0 },
		{ FTV_EVENT_ENDPOINT_CHANGED, "ftv0", true, 1, 0 },
		{ FTV_EVENT_LOST, "ftv\"0", false, -1, 0 },
		{ 99, "ftv0", false, -1, 0 },
		{ FTV_EVENT_FLOW_UP, "ftv0", true, 4, 0 },
		{ FTV_EVENT_FLOW_STALLED, "ftv0", false, 3, 7 },
		{ FTV_EVENT_FLOW_ROTATED, "ftv0", true, 1, 1ULL << 40 },
		{ FTV_EVENT_FAILOVER, "ftv0", true, 0, 1 },
		{ FTV_EVENT_LOST, "ftv1", false, 0, 8 },
	};
	struct nl_msg *msg;
	size_t i;

	opts.ifname = getenv("IPC_TEST_IFNAME");
	for (i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
		msg = event_msg(list[i].event, list[i].ifname, list[i].endpoint,
				list[i].flows_up, list[i].rotations);
		on_event(msg, &m);
		nlmsg_free(msg);
	}
}

static void test_event_read(void)
{
	struct nl_msg *msg = event_msg(FTV_EVENT_REKEYED, NULL, true, -1, 0);
	struct peer_event ev;
	struct nlattr *nest;

	check(!ipc_read_event(&ev, msg) && ev.event == FTV_EVENT_REKEYED &&
	      ev.ifindex == 7 && ev.ifname[0] &&
	      (ev.peer.flags & PEER_HAS_ENDPOINT) &&
	      ev.peer.endpoint.addr4.sin_port == htons(51820) &&
	      !(ev.peer.flags & (PEER_HAS_FLOWS_UP | PEER_HAS_ROTATIONS)),
	      "event: read, a name found for an ifindex without one");
	nlmsg_free(msg);

	msg = event_msg(FTV_EVENT_FLOW_ROTATED, "ftv0", false, 3, 1ULL << 40);
	check(!ipc_read_event(&ev, msg) && ev.event == FTV_EVENT_FLOW_ROTATED &&
	      !(ev.peer.flags & PEER_HAS_ENDPOINT) &&
	      (ev.peer.flags & PEER_HAS_FLOWS_UP) && ev.peer.flows_up == 3 &&
	      (ev.peer.flags & PEER_HAS_ROTATIONS) &&
	      ev.peer.rotations == 1ULL << 40,
	      "event: flows up and rotations read");
	nlmsg_free(msg);

	msg = dump_msg(7);
	check(ipc_read_event(&ev, msg) == -ENOENT, "event: other commands ignored");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	genlmsg_put(msg, 0, 0, FAMILY_ID, 0, 0, FTV_CMD_PEER_EVENT,
		    FTV_GENL_VERSION);
	nla_put_u32(msg, FTV_A_IFINDEX, 7);
	nla_put_u8(msg, FTV_A_EVENT, FTV_EVENT_LOST);
	nest = nest_start(msg, FTV_A_PEER);
	nla_put_u16(msg, FTV_PEER_A_ENDPOINT_PORT, 1);
	nla_nest_end(msg, nest);
	check(ipc_read_event(&ev, msg) == -EBADMSG, "event: no public key, refused");
	nlmsg_free(msg);
}


static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * --bench N: a dump of one device with N peers (one /32 each, counters
 * set), in messages of about the size the kernel sends; the time taken
 * to read it and to render it as text and as JSON (on stdout, which the
 * caller sends to /dev/null) goes to stderr.
 */
static int bench(unsigned long n)
{
	struct reply reply = { 0 };
	struct nlattr *peers = NULL, *peer, *ips;
	struct nl_msg *msg = NULL, **msgs;
	uint8_t key[FTV_KEY_LEN] = { 0 }, v4[4] = { 192, 0, 2, 1 };
	size_t count = 0, i;
	unsigned long p;
	double t0, t1, t2, t3;

	msgs = calloc(n / 16 + 2, sizeof(*msgs));
	for (p = 0; p < n; p++) {
		if (!msg) {
			msg = dump_msg(7);
			if (!count)
				nla_put_string(msg, FTV_A_IFNAME, "ftv0");
			peers = nest_start(msg, FTV_A_PEERS);
		}
		memcpy(key, &p, sizeof(p));
		peer = nest_start(msg, FTV_A_PEER);
		nla_put(msg, FTV_PEER_A_PUBLIC_KEY, FTV_KEY_LEN, key);
		nla_put(msg, FTV_PEER_A_ENDPOINT_IPV4, 4, v4);
		nla_put_u16(msg, FTV_PEER_A_ENDPOINT_PORT, 443);
		ips = nest_start(msg, FTV_PEER_A_ALLOWEDIPS);
		put_test_allowedip(msg, AF_INET, "10.0.0.1", 32);
		nla_nest_end(msg, ips);
		nla_put_u64(msg, FTV_PEER_A_LAST_HANDSHAKE, 1700000000);
		nla_put_u64(msg, FTV_PEER_A_RX_BYTES, p * 1000);
		nla_put_u64(msg, FTV_PEER_A_TX_BYTES, p * 2000);
		put_drops(msg, FTV_PEER_A_DROPS, p & 1, 0);
		nla_put_u8(msg, FTV_PEER_A_STATE, FTV_PEER_STATE_ESTABLISHED);
		nla_put_u8(msg, FTV_PEER_A_FEC_MODE, FTV_FEC_AUTO);
		put_fec_stats(msg, p & 1, 16, 2);
		nla_nest_end(msg, peer);
		if ((p + 1) % 16 == 0 || p + 1 == n) {
			nla_nest_end(msg, peers);
			msgs[count++] = msg;
			msg = NULL;
		}
	}
	t0 = now_seconds();
	for (i = 0; i < count; i++)
		ipc_read_device_msg(msgs[i], &reply);
	t1 = now_seconds();
	buffer_output();	/* as show_main() does */
	show_devices(reply.first, false);
	fflush(stdout);
	t2 = now_seconds();
	show_devices(reply.first, true);
	fflush(stdout);
	t3 = now_seconds();
	fprintf(stderr, "%lu peers: read %.3f s, text %.3f s, json %.3f s\n",
		n, t1 - t0, t2 - t1, t3 - t2);
	for (i = 0; i < count; i++)
		nlmsg_free(msgs[i]);
	free(msgs);
	devices_free(reply.first);
	return reply.err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct device *devs;

	if (argc == 3 && !strcmp(argv[1], "--bench"))
		return bench(strtoul(argv[2], NULL, 10));
	if (argc >= 2 && !strcmp(argv[1], "--events")) {
		feed_events(argc == 3 && !strcmp(argv[2], "--json"));
		return 0;
	}

	if (argc == 2 && (!strcmp(argv[1], "--json") || !strcmp(argv[1], "--text"))) {
		devs = fake_dump(time(NULL) - 65);
		show_devices(devs, !strcmp(argv[1], "--json"));
		devices_free(devs);
		return 0;
	}
	printf("TAP version 13\n");
	test_dump_merge();
	test_dump_malformed();
	test_extack("extack: capped error", NLM_F_ACK_TLVS | NLM_F_CAPPED, 0);
	test_extack("extack: error echoing the request",
		    NLM_F_ACK_TLVS, 36);
	test_extack_absent();
	test_done_error();
	test_request_peer_add();
	test_request_peer_list();
	test_request_peer_clear();
	test_request_device();
	test_request_split(FTV_CMD_NEW_PEER, false, "peer add");
	test_request_split(FTV_CMD_SET_PEER, true, "peer set, replacing");
	test_request_split_edges();
	test_request_too_big();
	test_event_read();
	test_request_probe();
	test_probe_reply();
	test_live_extack("live: extack of a refused request",
			 FTV_CMD_SET_DEVICE, 0, false);
	test_live_extack("live: extack after the echoed request",
			 FTV_CMD_SET_DEVICE, 0, true);
	test_live_extack("live: extack of a refused dump",
			 FTV_CMD_GET_DEVICE, NLM_F_DUMP, false);
	printf("1..%d\n# %d passed, %d failed\n", tests, tests - failures,
	       failures);
	return failures ? 1 : 0;
}
