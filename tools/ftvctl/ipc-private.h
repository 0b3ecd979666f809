/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the three parts of the netlink layer share: ipc-read.c turns the
 * kernel's messages into the model, ipc-write.c the model into requests,
 * and ipc.c carries them over the socket and reports what the kernel said.
 * Nothing outside them includes this.
 */
#ifndef FTVCTL_IPC_PRIVATE_H
#define FTVCTL_IPC_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "ipc.h"

#define MALFORMED "the kernel sent a malformed reply"

struct reply {
	bool done;
	int err;			/* negative errno, 0 on success */
	char msg[256];			/* the kernel's extack text, or "" */
	struct device *first, *last;	/* what a dump returned, merged */
	/* A probe's reply goes here, not into devices; @probed once read. */
	struct probe_reply *probe;
	bool probed;
	bool quiet;			/* an error is returned, not printed */
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
	/* A probe step for @peer, which gives only its key. */
	const struct probe_step *probe;
};

/* Ends the exchange with @err, and @why if the kernel gave no reason. */
static inline int reply_fail(struct reply *reply, int err, const char *why)
{
	reply->err = err;
	if (why)
		snprintf(reply->msg, sizeof(reply->msg), "%s", why);
	reply->done = true;
	return NL_STOP;
}

/* ipc-read.c */
int ipc_read_device_msg(struct nl_msg *msg, void *arg);
int ipc_read_probe_msg(struct nl_msg *msg, void *arg);
int ipc_read_event(struct peer_event *ev, struct nl_msg *msg);

/* ipc-write.c */
int ipc_request_build(const struct request *req, int family,
		      struct nl_msg **msgp);
void ipc_request_free(struct nl_msg *msg);
void ipc_request_peer_first(struct request *req, uint8_t cmd,
			    const char *ifname, const struct peer *peer);
bool ipc_request_peer_next(struct request *req);

#endif
