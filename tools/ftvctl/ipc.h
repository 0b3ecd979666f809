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

/* One step of a probe of the path to a peer (the netlink probe command). */
/* How a probe's join opens: as the device's shape setting says, shaped,
 * or as it is.
 */
enum probe_shape {
	PROBE_SHAPE_DEVICE,
	PROBE_SHAPE_ON,
	PROBE_SHAPE_OFF,
};

struct probe_step {
	uint8_t step;		/* enum ftv_probe_step */
	uint32_t index;		/* the connection; FTV_PROBE_INDEX_ALL: a pad on all */
	/* Each sent only when not 0: a pad's bytes and rate (kbit/s), an
	 * echo's length (0: the ask's own).
	 */
	uint32_t bytes, rate, length;
	enum probe_shape shape;	/* a join's opening */
};

/* The peer's last answer to one of this end's asks. */
struct probe_tell {
	uint32_t nonce;		/* of the ask it answers */
	uint8_t step;
	uint32_t length;	/* the ask's length when it arrived */
	uint32_t index;		/* the connection the ask arrived on */
	uint32_t bytes;		/* padding granted; 0 over the peer's budget */
	uint32_t left;		/* padding the peer had still to send */
	/* The last RST or FIN the peer ignored on this end's connections:
	 * peer_ttl and peer_ip_id are this end's segments, as it saw them.
	 */
	bool has_resets;
	struct resets resets;
};

struct probe_conn {
	uint32_t index;		/* its number in the session, 0: the opener */
	uint64_t rx_bytes;	/* authenticated payload that came on it */
	uint32_t path_mtu;	/* its outer route's MTU; 0: not told */
	bool has_rx_stream;
	uint64_t rx_stream;	/* the peer's stream that came on it in order */
};

/* Room for the connections of a session: the opener and a responder's
 * 16 joins, with some to spare.
 */
#define PROBE_CONNS_MAX 32
/* The joins of join steps that came up, as the module remembers them. */
#define PROBE_JOINS_MAX 16

/* What the probe holds after a step. */
struct probe_reply {
	uint32_t nonce;		/* of the ask sent; 0 for a read */
	bool told;		/* @tell holds an answer */
	struct probe_tell tell;
	unsigned int n_conns;	/* the session's connections that are up */
	struct probe_conn conns[PROBE_CONNS_MAX];
	uint32_t joined;	/* the join a join step opened; 0: none */
	/* The last joins of join steps that came up, oldest first. */
	unsigned int n_joins_up;
	uint32_t joins_up[PROBE_JOINS_MAX];
};

/*
 * Sends @step to the peer @key of @ifname and reads what the probe holds
 * into @reply. The peer's answer comes later: read steps show it once its
 * tell.nonce is the step's nonce. -ENOENT: no such peer; -ENOTCONN: no
 * session, or the connection named is not up. A join step's errors
 * (EOPNOTSUPP, EBUSY, ERANGE: the uapi header says which is which) are
 * returned and not printed: the caller says what they mean for it.
 */
int ipc_probe(const char *ifname, const uint8_t key[FTV_KEY_LEN],
	      const struct probe_step *step, struct probe_reply *reply);

/*
 * A peer whose allowed IPs do not fit one request is sent in several:
 * the first with its settings and flags, the others with its key and
 * the rest of the list.
 */
int ipc_add_peer(const char *ifname, const struct peer *peer);
int ipc_set_peer(const char *ifname, const struct peer *peer);
int ipc_del_peer(const char *ifname, const struct peer *peer);

/* The device's MTU, 0 if it cannot be read; and setting it (0, or -1
 * with the error printed).
 */
unsigned int ipc_get_mtu(const char *ifname);
int ipc_set_mtu(const char *ifname, unsigned int mtu);

/*
 * Requests share one socket, opened by the first; this closes it (a
 * later request opens another).
 */
void ipc_close(void);

#endif
