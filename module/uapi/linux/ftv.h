/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/*
 * ftv: an encrypted layer-3 tunnel carried in fake TCP segments.
 *
 * Generic netlink interface, family "ftv". docs/netlink/ftv.yaml is the
 * authoritative description; selftests/lib/ynl_check.py proves that this header
 * holds what ynl-gen-c makes of it, value for value.
 *
 * FTV_CMD_GET_DEVICE (do and dump)
 *   Request: FTV_A_IFINDEX or FTV_A_IFNAME selects one device; a dump with
 *   neither covers every ftv device in the caller's network namespace.
 *   Reply: the device attributes (FTV_A_IFINDEX, FTV_A_IFNAME,
 *   FTV_A_PUBLIC_KEY, FTV_A_LISTEN_PORT, FTV_A_FWMARK, FTV_A_SHAPE,
 *   FTV_A_DROPS, and FTV_A_PRIVATE_KEY when set) and FTV_A_PEERS. A dump
 *   splits a device over several messages with the same FTV_A_IFINDEX,
 *   which userspace merges; a do fails with EMSGSIZE if the device does not
 *   fit one message. Like every command this needs CAP_NET_ADMIN, which is
 *   why keys may be returned (for showconf); ftvctl show never prints them.
 *
 * FTV_CMD_SET_DEVICE
 *   FTV_A_IFINDEX or FTV_A_IFNAME, then any of FTV_A_PRIVATE_KEY (32 bytes,
 *   all zero removes it), FTV_A_LISTEN_PORT, FTV_A_FWMARK, FTV_A_FLAGS,
 *   FTV_A_SHAPE.
 *
 * FTV_CMD_PEER_EVENT (notification only, multicast group FTV_MCGRP_PEERS)
 *   FTV_A_IFINDEX, FTV_A_IFNAME, FTV_A_EVENT (enum ftv_event) and an
 *   FTV_A_PEER nest with FTV_PEER_A_PUBLIC_KEY, the current endpoint
 *   (FTV_PEER_A_ENDPOINT_IPV4/IPV6 + FTV_PEER_A_ENDPOINT_PORT) if known,
 *   FTV_PEER_A_FLOWS_UP and FTV_PEER_A_ROTATIONS, as they are once the
 *   event happened (for FTV_EVENT_FAILOVER, the endpoint moved to).
 *   Sent in the namespace the device is in; joining the group needs
 *   CAP_NET_ADMIN there.
 *
 * FTV_PEER_A_ENDPOINTS lists the endpoints a dialling side tries in turn;
 * FTV_PEER_A_ENDPOINT_IPV4/IPV6 + _PORT in a request set a list of one, and
 * in a reply say which endpoint is current.
 *
 * A peer whose allowed-ips do not fit one dump message goes on in the next,
 * which repeats only its FTV_PEER_A_PUBLIC_KEY. FTV_PEER_F_REPLACE_ALLOWEDIPS
 * without FTV_PEER_A_ALLOWEDIPS (or with an empty one) clears the list.
 *
 * FTV_CMD_NEW_PEER / FTV_CMD_SET_PEER / FTV_CMD_DEL_PEER
 *   FTV_A_IFINDEX or FTV_A_IFNAME, and one FTV_A_PEER nest holding
 *   FTV_PEER_A_PUBLIC_KEY and, for NEW and SET, any of the writable peer
 *   attributes. NEW fails with EEXIST if the peer exists, SET and DEL with
 *   ENOENT if it does not.
 *
 * FTV_CMD_PROBE
 *   FTV_A_IFINDEX or FTV_A_IFNAME, and an FTV_A_PEER nest holding
 *   FTV_PEER_A_PUBLIC_KEY and an FTV_PEER_A_PROBE nest: the step to send
 *   the peer (enum ftv_probe_attr). The reply holds FTV_A_IFINDEX and an
 *   FTV_A_PEER nest with the public key and an FTV_PEER_A_PROBE nest:
 *   the ask's nonce, the peer's last answer and the session's
 *   connections. ENOENT if there is no such peer, ENOTCONN if it has no
 *   session or the connection named is not up. A join step asks the peer
 *   nothing: it opens a join to the endpoint numbered FTV_PROBE_A_INDEX,
 *   whose number the reply's FTV_PROBE_A_JOINED gives; EOPNOTSUPP if the
 *   peer takes no joins or opened the session, EBUSY if the session takes
 *   no more joins, ERANGE if there is no such endpoint. FTV_PROBE_A_SHAPE
 *   says whether the join's first message goes shaped.
 */

#ifndef _UAPI_LINUX_FTV_H
#define _UAPI_LINUX_FTV_H

#define FTV_GENL_NAME		"ftv"
#define FTV_GENL_VERSION	1

#define FTV_KEY_LEN		32
#define FTV_MAX_PEERS		1048576	/* peers one device holds */
#define FTV_MAX_ALLOWEDIPS	65536	/* allowed-ips of a peer per request */

#define FTV_MCGRP_PEERS		"peers"

enum ftv_cmd {
	FTV_CMD_UNSPEC,
	FTV_CMD_GET_DEVICE,
	FTV_CMD_SET_DEVICE,
	FTV_CMD_NEW_PEER,
	FTV_CMD_SET_PEER,
	FTV_CMD_DEL_PEER,
	FTV_CMD_PEER_EVENT,
	FTV_CMD_PROBE,

	__FTV_CMD_MAX,
	FTV_CMD_MAX = (__FTV_CMD_MAX - 1)
};

/* FTV_A_FLAGS */
enum ftv_device_flag {
	/* Remove every existing peer before applying this request */
	FTV_DEVICE_F_REPLACE_PEERS = 1U << 0,
	__FTV_DEVICE_F_ALL = FTV_DEVICE_F_REPLACE_PEERS
};

enum ftv_device_attr {
	FTV_A_UNSPEC,
	FTV_A_IFINDEX,		/* u32 */
	FTV_A_IFNAME,		/* string, < IFNAMSIZ */
	FTV_A_PRIVATE_KEY,	/* binary, FTV_KEY_LEN */
	FTV_A_PUBLIC_KEY,	/* binary, FTV_KEY_LEN; get only */
	FTV_A_LISTEN_PORT,	/* u16, host order; 0 = none */
	FTV_A_FWMARK,		/* u32; 0 = none */
	FTV_A_FLAGS,		/* u32, enum ftv_device_flag */
	FTV_A_DROPS,		/* nest, enum ftv_drops_attr; get only */
	FTV_A_PEERS,		/* nest of FTV_A_PEER; get only */
	FTV_A_PEER,		/* nest, enum ftv_peer_attr */
	FTV_A_EVENT,		/* u8, enum ftv_event; notifications only */
	FTV_A_SHAPE,		/* u8, 0 or 1: shape connection openings */

	__FTV_A_LAST,
	FTV_A_MAX = (__FTV_A_LAST - 1)
};

/* FTV_PEER_A_FLAGS */
enum ftv_peer_flag {
	/* Replace the peer's allowed-ips instead of adding to them */
	FTV_PEER_F_REPLACE_ALLOWEDIPS = 1U << 0,
	/* Forget the endpoint (the peer then only answers) */
	FTV_PEER_F_REMOVE_ENDPOINT = 1U << 1,
	/* Forget the pre-shared key */
	FTV_PEER_F_REMOVE_PRESHARED_KEY = 1U << 2,
	__FTV_PEER_F_ALL = FTV_PEER_F_REPLACE_ALLOWEDIPS |
			   FTV_PEER_F_REMOVE_ENDPOINT |
			   FTV_PEER_F_REMOVE_PRESHARED_KEY
};

/* FTV_A_EVENT */
enum ftv_event {
	FTV_EVENT_UNSPEC,
	FTV_EVENT_ESTABLISHED,		/* first session with the peer is up */
	FTV_EVENT_REKEYED,		/* a new session replaced the old one */
	FTV_EVENT_ENDPOINT_CHANGED,	/* the peer now talks from elsewhere */
	FTV_EVENT_LOST,			/* the path died or the session expired */
	FTV_EVENT_FLOW_UP,		/* a join of the session came up */
	FTV_EVENT_FLOW_STALLED,		/* a flow went unanswered: given up */
	FTV_EVENT_FLOW_ROTATED,		/* a flow used its budget: given up */
	FTV_EVENT_FAILOVER,		/* the initiator moved to its next endpoint */
};

/* FTV_PEER_A_STATE */
enum ftv_peer_state {
	FTV_PEER_STATE_IDLE,		/* no connection, nothing under way */
	FTV_PEER_STATE_CONNECTING,	/* TCP handshake or key exchange */
	FTV_PEER_STATE_ESTABLISHED,	/* session keys in use */
};

enum ftv_peer_attr {
	FTV_PEER_A_UNSPEC,
	FTV_PEER_A_PUBLIC_KEY,		/* binary, FTV_KEY_LEN */
	FTV_PEER_A_PRESHARED_KEY,	/* binary, FTV_KEY_LEN */
	FTV_PEER_A_FLAGS,		/* u32, enum ftv_peer_flag; set only */
	FTV_PEER_A_ENDPOINT_IPV4,	/* binary, 4 bytes, network order */
	FTV_PEER_A_ENDPOINT_IPV6,	/* binary, 16 bytes, network order */
	FTV_PEER_A_ENDPOINT_PORT,	/* u16, host order */
	FTV_PEER_A_PERSISTENT_KEEPALIVE, /* u16, seconds; 0 = off */
	FTV_PEER_A_ALLOWEDIPS,		/* nest of FTV_PEER_A_ALLOWEDIP */
	FTV_PEER_A_ALLOWEDIP,		/* nest, enum ftv_allowedip_attr */
	FTV_PEER_A_LAST_HANDSHAKE,	/* u64, unix seconds; get only */
	FTV_PEER_A_RX_BYTES,		/* u64; get only */
	FTV_PEER_A_TX_BYTES,		/* u64; get only */
	FTV_PEER_A_DROPS,		/* nest, enum ftv_drops_attr; get only */
	FTV_PEER_A_STATE,		/* u8, enum ftv_peer_state; get only */
	FTV_PEER_A_PAD,
	FTV_PEER_A_FEC_MODE,		/* u8, enum ftv_fec_mode */
	FTV_PEER_A_FEC_DATA,		/* u8, K: data segments per group */
	FTV_PEER_A_FEC_REPAIR,		/* u8, M: repair segments per group */
	FTV_PEER_A_FEC_STATS,		/* nest, enum ftv_fec_stats_attr; get only */
	FTV_PEER_A_FLOWS,		/* u8, 1 to FTV_MAX_FLOWS */
	FTV_PEER_A_FLOWS_UP,		/* u8, get only; in events too */
	FTV_PEER_A_ROTATIONS,		/* u64, get only; in events too */
	FTV_PEER_A_ROTATE,		/* u32: FTV_ROTATE_OFF, FTV_ROTATE_AUTO or bytes */
	FTV_PEER_A_ENDPOINTS,		/* nest of enum ftv_endpoint_attr nests */
	FTV_PEER_A_RESETS,		/* nest, enum ftv_resets_attr; get only */
	FTV_PEER_A_PROBE,		/* nest, enum ftv_probe_attr; probe only */

	__FTV_PEER_A_LAST,
	FTV_PEER_A_MAX = (__FTV_PEER_A_LAST - 1)
};

/* FTV_PEER_A_FEC_MODE */
enum ftv_fec_mode {
	FTV_FEC_OFF,			/* never send repair segments */
	FTV_FEC_AUTO,			/* K:M chosen from the loss measured */
	FTV_FEC_FIXED,			/* FTV_PEER_A_FEC_DATA:_REPAIR */
};

/* Limits of FTV_PEER_A_FEC_DATA and FTV_PEER_A_FEC_REPAIR */
#define FTV_FEC_MAX_DATA	64
#define FTV_FEC_MAX_REPAIR	16

/* Limit of FTV_PEER_A_FLOWS */
#define FTV_MAX_FLOWS		8

/* Limit of FTV_PEER_A_ENDPOINTS */
#define FTV_MAX_ENDPOINTS	8

/* FTV_PEER_A_ROTATE: never, learned, or a byte budget in [MIN, MAX] */
#define FTV_ROTATE_OFF		0
#define FTV_ROTATE_AUTO		1
#define FTV_ROTATE_MIN		4096
#define FTV_ROTATE_MAX		1073741824U	/* 1 GiB */

/*
 * FTV_PEER_A_RESETS: the last RST or FIN ignored on the peer's connections,
 * and the peer's own last authenticated segment there before it
 */
enum ftv_resets_attr {
	FTV_RESETS_A_UNSPEC,
	FTV_RESETS_A_TTL,		/* u8, TTL or hop limit it came with */
	FTV_RESETS_A_IP_ID,		/* u16, its IP ID (IPv4 only) */
	FTV_RESETS_A_PEER_TTL,		/* u8, the peer's segment's TTL */
	FTV_RESETS_A_PEER_IP_ID,	/* u16, its IP ID (IPv4 only) */

	__FTV_RESETS_A_LAST,
	FTV_RESETS_A_MAX = (__FTV_RESETS_A_LAST - 1)
};

/* FTV_PROBE_A_STEP */
enum ftv_probe_step {
	FTV_PROBE_READ,			/* ask nothing, read the probe */
	FTV_PROBE_ECHO,			/* what arrived of this ask? */
	FTV_PROBE_PAD,			/* send padding on one connection */
	FTV_PROBE_STOP,			/* stop sending padding */
	FTV_PROBE_JOIN,			/* open a join to an endpoint */
};

/* Limits of a probe step's FTV_PROBE_A_BYTES, _RATE and _LENGTH */
#define FTV_PROBE_MAX_BYTES	5242880	/* also per peer in 60 s */
#define FTV_PROBE_MAX_RATE	100000	/* kbit/s */
#define FTV_PROBE_MAX_LENGTH	9000
/* FTV_PROBE_A_INDEX of a pad spread over every connection that is up */
#define FTV_PROBE_INDEX_ALL	4294967295U

/* FTV_PEER_A_PROBE: a step in a request, what the probe holds in a reply */
enum ftv_probe_attr {
	FTV_PROBE_A_UNSPEC,
	FTV_PROBE_A_STEP,		/* u8, enum ftv_probe_step */
	FTV_PROBE_A_INDEX,		/* u32, the connection's number (an
					 * endpoint's, for a join step)
					 */
	FTV_PROBE_A_BYTES,		/* u32, padding a pad step asks for */
	FTV_PROBE_A_RATE,		/* u32, kbit/s of a pad step */
	FTV_PROBE_A_LENGTH,		/* u32, an echo's ask's length */
	FTV_PROBE_A_NONCE,		/* u32, the ask's nonce; reply only */
	FTV_PROBE_A_TELL,		/* nest, enum ftv_probe_tell_attr */
	FTV_PROBE_A_CONNS,		/* nest of enum ftv_probe_conn_attr
					 * nests
					 */
	FTV_PROBE_A_PAD,
	FTV_PROBE_A_JOINED,		/* u32, the join a join step opened;
					 * reply only
					 */
	FTV_PROBE_A_JOINS_UP,		/* u32, once per join a join step
					 * opened that came up (the last 16);
					 * reply only
					 */
	FTV_PROBE_A_SHAPE,		/* u8, a join step: 1 its opening
					 * goes shaped, 0 as it is (the
					 * device's setting if absent)
					 */

	__FTV_PROBE_A_LAST,
	FTV_PROBE_A_MAX = (__FTV_PROBE_A_LAST - 1)
};

/* FTV_PROBE_A_TELL: the peer's last answer */
enum ftv_probe_tell_attr {
	FTV_PROBE_TELL_A_UNSPEC,
	FTV_PROBE_TELL_A_NONCE,		/* u32, of the ask it answers */
	FTV_PROBE_TELL_A_STEP,		/* u8, that ask's step */
	FTV_PROBE_TELL_A_LENGTH,	/* u32, length the ask arrived with */
	FTV_PROBE_TELL_A_INDEX,		/* u32, connection it arrived on */
	FTV_PROBE_TELL_A_BYTES,		/* u32, padding granted */
	FTV_PROBE_TELL_A_RESETS,	/* nest, enum ftv_resets_attr */
	FTV_PROBE_TELL_A_LEFT,		/* u32, padding still to send */

	__FTV_PROBE_TELL_A_LAST,
	FTV_PROBE_TELL_A_MAX = (__FTV_PROBE_TELL_A_LAST - 1)
};

/* FTV_PROBE_A_CONNS: one connection that is up */
enum ftv_probe_conn_attr {
	FTV_PROBE_CONN_A_UNSPEC,
	FTV_PROBE_CONN_A_INDEX,		/* u32, its number in the session */
	FTV_PROBE_CONN_A_RX_BYTES,	/* u64, payload of the messages
					 * without a packet received since
					 * it came up
					 */
	FTV_PROBE_CONN_A_PAD,
	FTV_PROBE_CONN_A_PATH_MTU,	/* u32, the MTU of its outer route */
	FTV_PROBE_CONN_A_RX_STREAM,	/* u64, the peer's stream that arrived
					 * on it in order since it came up
					 */

	__FTV_PROBE_CONN_A_LAST,
	FTV_PROBE_CONN_A_MAX = (__FTV_PROBE_CONN_A_LAST - 1)
};

/* FTV_PEER_A_FEC_STATS */
enum ftv_fec_stats_attr {
	FTV_FEC_A_UNSPEC,
	FTV_FEC_A_ACTIVE,		/* u8, 1 if both ends use FEC */
	FTV_FEC_A_DATA,			/* u8, K in use now (0: none) */
	FTV_FEC_A_REPAIR,		/* u8, M in use now */
	FTV_FEC_A_LOSS_PPM,		/* u32, loss the peer reports, ppm */
	FTV_FEC_A_REPAIR_SENT,		/* u64, repair segments sent */
	FTV_FEC_A_REBUILT,		/* u64, segments rebuilt from repair */
	FTV_FEC_A_GROUPS_LOST,		/* u64, groups given up incomplete */
	FTV_FEC_A_PAD,

	__FTV_FEC_A_LAST,
	FTV_FEC_A_MAX = (__FTV_FEC_A_LAST - 1)
};

/* Each nest of FTV_PEER_A_ENDPOINTS */
enum ftv_endpoint_attr {
	FTV_ENDPOINT_A_UNSPEC,
	FTV_ENDPOINT_A_IPV4,		/* binary, 4 bytes, network order */
	FTV_ENDPOINT_A_IPV6,		/* binary, 16 bytes, network order */
	FTV_ENDPOINT_A_PORT,		/* u16, host order, 1 to 65535 */

	__FTV_ENDPOINT_A_LAST,
	FTV_ENDPOINT_A_MAX = (__FTV_ENDPOINT_A_LAST - 1)
};

enum ftv_allowedip_attr {
	FTV_ALLOWEDIP_A_UNSPEC,
	FTV_ALLOWEDIP_A_FAMILY,		/* u16, AF_INET or AF_INET6 */
	FTV_ALLOWEDIP_A_IPADDR,		/* binary, 4 or 16 bytes */
	FTV_ALLOWEDIP_A_CIDR_MASK,	/* u8, prefix length */

	__FTV_ALLOWEDIP_A_LAST,
	FTV_ALLOWEDIP_A_MAX = (__FTV_ALLOWEDIP_A_LAST - 1)
};

/* Why a received segment was dropped; each a u64 counter. */
enum ftv_drops_attr {
	FTV_DROPS_A_UNSPEC,
	FTV_DROPS_A_BAD_AUTH,		/* failed authentication */
	FTV_DROPS_A_REPLAY,		/* counter replayed or too old */
	FTV_DROPS_A_MALFORMED,		/* could not be parsed */
	FTV_DROPS_A_NO_SESSION,		/* no session to open it with */
	FTV_DROPS_A_NOT_ALLOWED,	/* inner source outside allowed-ips */
	FTV_DROPS_A_PAD,
	FTV_DROPS_A_RATELIMITED,	/* handshake over the rate limit */
	FTV_DROPS_A_ICMP_IGNORED,	/* ICMP about no live segment of ours */
	FTV_DROPS_A_SYN_REFUSED,	/* SYN with a bad or used token */
	FTV_DROPS_A_BACKLOG,		/* delivery queue to the stack full */
	FTV_DROPS_A_OUT_OF_WINDOW,	/* sequence far outside the window */
	FTV_DROPS_A_JOIN_REPLAYED,	/* SYN with a join token used before */
	FTV_DROPS_A_FLOWS_REFUSED,	/* join over a session's cap */
	FTV_DROPS_A_RST,		/* RST on a connection, ignored */
	FTV_DROPS_A_FIN,		/* FIN on a connection, ignored */
	FTV_DROPS_A_PROBE_LIMITED,	/* probe asks over the peer's limits */

	__FTV_DROPS_A_LAST,
	FTV_DROPS_A_MAX = (__FTV_DROPS_A_LAST - 1)
};

#endif /* _UAPI_LINUX_FTV_H */
