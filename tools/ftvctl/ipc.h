/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The only code that speaks generic netlink (ipc.c, ipc-read.c,
 * ipc-write.c): it turns the model into "ftv" family requests and the
 * kernel's replies back into the model. Failures are reported here, on
 * stderr, because only this layer sees the kernel's explanation (the
 * extack message); callers just get a negative errno.
 */
#ifndef FTVCTL_IPC_H
#define FTVCTL_IPC_H

#include "containers.h"

/*
 * Reads the device called @ifname, or every ftv device of the namespace if
 * @ifname is NULL, into a list the caller frees with devices_free().
 */
int ipc_get_devices(struct device **devices, const char *ifname);

/* Applies the fields of @dev flagged DEVICE_HAS_*; peers are left alone. */
int ipc_set_device(const struct device *dev);

/* One notification from the kernel's "peers" multicast group. */
struct peer_event {
	uint32_t ifindex;
	char ifname[IFNAMSIZ];
	uint8_t event;		/* enum ftv_event */
	/*
	 * The public key; the endpoint if known; flows_up and rotations
	 * from a module that sends them (PEER_HAS_* says which).
	 */
	struct peer peer;
};

typedef int (*ipc_event_fn)(const struct peer_event *event, void *arg);

/*
 * Joins the "peers" group and calls @fn for every event, until @fn returns
 * non-zero (which is returned) or receiving fails (a negative errno).
 */
int ipc_monitor(ipc_event_fn fn, void *arg);

/*
 * A peer whose allowed IPs do not fit one request is sent in several:
 * the first with its settings and flags, the others with its key and
 * the rest of the list.
 */
int ipc_add_peer(const char *ifname, const struct peer *peer);
int ipc_set_peer(const char *ifname, const struct peer *peer);
int ipc_del_peer(const char *ifname, const struct peer *peer);

/*
 * Requests share one socket, opened by the first; this closes it (a
 * later request opens another).
 */
void ipc_close(void);

#endif
