// SPDX-License-Identifier: GPL-2.0
/*
 * The transport of the netlink layer: the socket, one request and its
 * answer at a time, the kernel's errors and extack messages, the
 * interface of ipc.h, and the events of the "peers" group. What the
 * messages say is ipc-read.c's and ipc-write.c's.
 *
 * One socket serves every request of a run: setconf of a large file makes
 * a request per peer, and opening a socket and resolving the family for
 * each would cost more than the request itself.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <net/if.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "ipc-private.h"
#include "util.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

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
	if (reply->err && reply->quiet)
		return reply->err;
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

/* ---- the socket --------------------------------------------------------- */

/* Room for any message the module sends: a reply of at most 64 KiB. */
#define FTV_MSG_BUF_SIZE (64 * 1024)

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
	/*
	 * One read per message into a buffer that holds the largest there
	 * is (a do request's reply is at most 64 KiB; the kernel sizes dump
	 * messages by the largest read, capped at 32 KiB), not a peek to
	 * size the buffer and a second read of the same bytes: at 10^5
	 * peers show's dump is tens of megabytes.
	 */
	nl_socket_disable_msg_peek(sk);
	nl_socket_set_msg_buf_size(sk, FTV_MSG_BUF_SIZE);
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
	/* A probe step's reply is its own; every other is a device's. */
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM,
		  reply->probe ? ipc_read_probe_msg : ipc_read_device_msg, reply);
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
	ret = ipc_request_build(req, conn_family, &msg);
	if (ret) {
		fprintf(stderr, "%s: unable to build the request: %s\n",
			PROG_NAME, strerror(-ret));
		return ret;
	}
	ret = exchange(conn_sk, msg, reply);
	ipc_request_free(msg);
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

	ipc_request_peer_first(&req, cmd, ifname, peer);
	do {
		memset(&reply, 0, sizeof(reply));
		ret = transact(&req, &reply);
	} while (!ret && ipc_request_peer_next(&req));
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

/*
 * A do request with a reply: the reply message, then the ack. A kernel
 * that acks without the message sent nothing to read.
 */
int ipc_probe(const char *ifname, const uint8_t key[FTV_KEY_LEN],
	      const struct probe_step *step, struct probe_reply *out)
{
	struct peer peer = { .flags = PEER_HAS_PUBLIC_KEY };
	struct request req = {
		.cmd = FTV_CMD_PROBE,
		.ifname = ifname,
		.peer = &peer,
		.probe = step,
	};
	struct reply reply = {
		.probe = out,
		.quiet = step->step == FTV_PROBE_JOIN,
	};
	int ret;

	memcpy(peer.public_key, key, FTV_KEY_LEN);
	memset(out, 0, sizeof(*out));
	ret = transact(&req, &reply);
	if (!ret && !reply.probed) {
		fprintf(stderr, "%s: %s\n", PROG_NAME, MALFORMED);
		ret = -EBADMSG;
	}
	return ret;
}

/* ---- the link ----------------------------------------------------------- */

/* The MTU is the link's, not the family's: the ioctls every tool uses. */
static int link_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -1;
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	ret = ioctl(fd, req, ifr);
	close(fd);
	return ret;
}

unsigned int ipc_get_mtu(const char *ifname)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	if (link_ioctl(ifname, SIOCGIFMTU, &ifr) || ifr.ifr_mtu <= 0)
		return 0;
	return (unsigned int)ifr.ifr_mtu;
}

int ipc_set_mtu(const char *ifname, unsigned int mtu)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_mtu = (int)mtu;
	if (link_ioctl(ifname, SIOCSIFMTU, &ifr)) {
		fprintf(stderr, "%s: cannot set the MTU of %s to %u: %s\n",
			PROG_NAME, ifname, mtu, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- events ------------------------------------------------------------- */

struct monitor {
	ipc_event_fn fn;
	void *arg;
	int ret;
};

static int on_event(struct nl_msg *msg, void *arg)
{
	struct monitor *m = arg;
	struct peer_event ev;
	int ret = ipc_read_event(&ev, msg);

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

