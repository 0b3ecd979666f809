/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ftv wire format: what travels in the payload of the fake TCP
 * segments, and the sizes the rest of the module derives from it.
 * docs/protocol.md is the prose version of this file.
 */

#ifndef _FTV_MESSAGES_H
#define _FTV_MESSAGES_H

#include <crypto/curve25519.h>
#include <crypto/chacha20poly1305.h>
#include <linux/ftv.h>
#include <linux/ipv6.h>
#include <net/tcp.h>
#include <linux/types.h>

enum ftv_noise_lengths {
	FTV_KEY_SIZE = CURVE25519_KEY_SIZE,
	FTV_HASH_SIZE = 32,
	FTV_TAG_SIZE = CHACHA20POLY1305_AUTHTAG_SIZE,
	FTV_TIMESTAMP_SIZE = 12,
};

/* Keys cross the netlink interface at their own size. */
static_assert(FTV_KEY_LEN == FTV_KEY_SIZE);

#define ftv_sealed_len(plain_len) ((plain_len) + FTV_TAG_SIZE)

/*
 * The first payload the initiator sends on a new connection. There is no
 * type field: the receiver knows from the connection's state that the first
 * bytes of the stream are this message. Random padding follows.
 */
struct ftv_msg_init {
	u8 ephemeral[FTV_KEY_SIZE];
	u8 sealed_static[ftv_sealed_len(FTV_KEY_SIZE)];
	u8 sealed_timestamp[ftv_sealed_len(FTV_TIMESTAMP_SIZE)];
} __packed;

/* The responder's first payload on the connection; random padding follows. */
struct ftv_msg_resp {
	u8 ephemeral[FTV_KEY_SIZE];
	u8 sealed_nothing[ftv_sealed_len(0)];
} __packed;

/* Every later payload: a counter that is also the nonce, masked with a
 * keyed hash of the sealed bytes, then the sealed IP packet (or, for a
 * keepalive, struct ftv_msg_ack and zero padding). On a join (a
 * connection numbered n >= 1 in its session) the associated data is
 * le64(n); on the session's opener there is none (crypto.c).
 */
struct ftv_msg_data {
	__le64 counter;
	u8 sealed[];
} __packed;

/* The associated data sits where the counter goes, while it is sealed. */
#define FTV_BIND_SIZE sizeof_field(struct ftv_msg_data, counter)

/*
 * A sealed plaintext that is not an IP packet starts with a byte below
 * 0x10 (an IP version of 0). A module without FEC takes any such message
 * for a keepalive's padding and ignores it.
 */
enum ftv_control_type {
	FTV_CONTROL_PAD = 0x00,		/* a keepalive: zero bytes */
	FTV_CONTROL_REPAIR = 0x01,	/* struct ftv_msg_repair */
	FTV_CONTROL_LOSS = 0x02,	/* struct ftv_msg_loss, zero padding */
	FTV_CONTROL_HELLO = 0x03,	/* struct ftv_msg_hello, zero padding */
	FTV_CONTROL_JOIN_GONE = 0x04,	/* struct ftv_msg_join_gone, zero
					 * padding
					 */
	FTV_CONTROL_BUDGET = 0x05,	/* struct ftv_msg_budget, zero
					 * padding
					 */
	FTV_CONTROL_PROBE_ASK = 0x06,	/* struct ftv_msg_probe_ask, zero
					 * padding (probe.c)
					 */
	FTV_CONTROL_PROBE_TELL = 0x07,	/* struct ftv_msg_probe_tell, zero
					 * padding
					 */
	FTV_CONTROL_ACK = 0x08,		/* struct ftv_msg_ack, zero padding:
					 * a keepalive
					 */
};

/* What the sender of a struct ftv_msg_hello can do. */
enum ftv_hello_flags {
	FTV_HELLO_F_FEC = 0x01,		/* takes repair messages and loss
					 * reports, and sends them
					 */
	FTV_HELLO_F_JOINS = 0x02,	/* a responder: takes connections
					 * that join a session; an initiator:
					 * will open some (join.c)
					 */
	FTV_HELLO_F_OPENINGS = 0x04,	/* reads a join's first message
					 * shaped or not, and answers each
					 * join it takes with a message at
					 * once (send.c)
					 */
	FTV_HELLO_F_BOUND = 0x08,	/* seals a join's messages bound to
					 * its number (crypto.c), brings a
					 * join up only once its SYN-ACK is
					 * acknowledged, and sends struct
					 * ftv_msg_ack (flow.c): joins are
					 * opened only with such a peer
					 */
};

/*
 * Each end's first sealed message on a connection, repeated while the
 * peer has not shown that it heard (fec.c): what it can do, where nobody
 * on the path can strip or forge it. Zero padding follows. A module that
 * predates it takes it for a keepalive.
 */
struct ftv_msg_hello {
	u8 type;
	u8 flags;
	u8 zero[2];
} __packed;

/*
 * The initiator gave up the join numbered @index of the session this is
 * sealed in (it stalled); the responder retires its side of it.
 */
struct ftv_msg_join_gone {
	u8 type;
	u8 zero[3];
	__le32 index;
} __packed;

/*
 * The initiator's budget for the connection numbered @index of the
 * session this is sealed in (0: its opener): the responder sends no more
 * than @bytes on it, and takes @bytes for its connections that have no
 * budget of their own yet (flow.c).
 */
struct ftv_msg_budget {
	u8 type;
	u8 zero[3];
	__le32 index;
	__le32 bytes;
} __packed;

/*
 * A probe's request (probe.c): @step is enum ftv_probe_step. An echo is
 * answered with what arrived of it; padding asks for @bytes of padding
 * on the connection numbered @index of the session (0: its opener), at
 * @rate kbit/s. Its sender pads it to the length it wants to learn about.
 */
struct ftv_msg_probe_ask {
	u8 type;
	u8 step;
	u8 zero[2];
	__le32 nonce;
	__le32 index;
	__le32 bytes;
	__le32 rate;
} __packed;

/*
 * The answer to the ask with @nonce: the length its plaintext arrived
 * with, the connection it came on, the padding granted (0: none, over the
 * responder's limits or none asked), and the responder's evidence of the
 * last reset it ignored (ftv_segment_ip_mark() of the reset and of the
 * asker's own segment before it; 0: none), and the padding it has still
 * to send.
 */
struct ftv_msg_probe_tell {
	u8 type;
	u8 step;
	u8 zero[2];
	__le32 nonce;
	__le32 length;
	__le32 index;
	__le32 bytes;
	__le32 reset;
	__le32 reset_heard;
	__le32 left;
} __packed;

/*
 * A keepalive: what its sender has of the connection it is sealed for,
 * which neither end takes from the TCP header, where anyone on the path
 * could change it. @high is one past the greatest counter of the peer's
 * that opened on this connection (0: none yet); @tsval its sender's clock
 * in milliseconds; @echo the @tsval of the peer's last keepalive that
 * came on it (0: none), which arrived @held milliseconds ago. The peer's
 * round trip is its clock now, less @echo, less @held (flow.c). @flags
 * (enum ftv_ack_flags) says whether it asks for an answer, which then
 * goes at once; every other message but a keepalive gets one on the
 * receiver's next tick.
 */
struct ftv_msg_ack {
	u8 type;
	u8 flags;
	u8 zero[2];
	__le32 tsval;
	__le32 echo;
	__le32 held;
	__le64 high;
} __packed;

/*
 * A repair message of a group of @data messages and @repair repair
 * messages: repair block @index of the group, whose data messages have the
 * @data counters just before this group's first repair message.
 */
struct ftv_msg_repair {
	u8 type;
	u8 data;
	u8 repair;
	u8 index;
	u8 block[];
} __packed;

/* The loss its sender sees on what it receives; zero padding follows. */
struct ftv_msg_loss {
	u8 type;
	u8 zero[3];
	__be32 loss_ppm;
} __packed;

/* What a struct ftv_msg_ack asks. */
enum ftv_ack_flags {
	FTV_ACK_F_ASK = 0x01,		/* report what came here, now */
};

enum ftv_message_limits {
	FTV_HANDSHAKE_PAD_MIN = 8,
	FTV_HANDSHAKE_PAD_MAX = 64,
	FTV_KEEPALIVE_PAD_MAX = 63,
	FTV_DATA_OVERHEAD = sizeof(struct ftv_msg_data) + FTV_TAG_SIZE,
	FTV_FEC_REPAIR_HLEN = sizeof(struct ftv_msg_repair),
	/* The longest packet a group takes. */
	FTV_FEC_MAX_LEN = 1500,
	/* The longest handshake messages, padding included, before they
	 * are shaped (shape.c).
	 */
	FTV_INIT_MAX = sizeof(struct ftv_msg_init) + FTV_HANDSHAKE_PAD_MAX,
	FTV_RESP_MAX = sizeof(struct ftv_msg_resp) + FTV_HANDSHAKE_PAD_MAX,
};

/* The fake TCP header: 20 bytes plus NOP, NOP, timestamps on every segment
 * after the SYNs, as Linux sends them.
 */
enum ftv_tcp_lengths {
	FTV_TCP_HLEN = sizeof(struct tcphdr) + TCPOLEN_TSTAMP_ALIGNED,
	/* MSS(4) + SACK_PERM(2) + TS(10) + NOP(1) + WS(3) */
	FTV_TCP_SYN_HLEN = sizeof(struct tcphdr) + 20,
	FTV_TCP_WSCALE = 7,
};

#define FTV_OUTER_MAX_HLEN (sizeof(struct ipv6hdr) + FTV_TCP_HLEN)

/* The largest inner packet that fits a 1500-byte path even with an IPv6
 * outer header, with room for a repair message's header when the packet
 * is FEC's longest in its group: 1500 - 40 - 32 - 8 - 16 - 4 = 1400.
 */
#define FTV_DEFAULT_MTU (1500 - FTV_OUTER_MAX_HLEN - FTV_DATA_OVERHEAD - \
			 FTV_FEC_REPAIR_HLEN)

/* Counters stop well before 2^64 so that the nonce never wraps. */
#define FTV_REJECT_AFTER_MESSAGES (U64_MAX - 8192)

/* The opener renews a session this often, or after this many messages. */
#define FTV_REKEY_AFTER_MESSAGES BIT_ULL(60)

enum ftv_session_limits {
	FTV_REKEY_AFTER_S = 120,
	/* Nobody uses a session older than this. */
	FTV_REJECT_AFTER_S = 180,
	FTV_CONNECT_TIMEOUT_MS = 5000,
	FTV_SYN_RETRANSMIT_MS = 1000,
	/* Data unanswered this long: the path is dead, dial again. */
	FTV_DEAD_AFTER_MS = 5000,
	/* Data received and not answered this long: send a keepalive. */
	FTV_REPLY_AFTER_MS = 2000,
	FTV_RETIRED_KEYS_MS = 15000,
	FTV_LINGER_MS = 60000,
	/* A join whose SYN-ACK, or whose first sealed message, has not
	 * come by then is given up.
	 */
	FTV_JOIN_TIMEOUT_MS = 3000,
	/* A retired join the peer still sends on tells it again that it
	 * is gone at most this often (connect.c).
	 */
	FTV_JOIN_RETELL_MS = 200,
	/* A gap in a session's counters, with a join up, is waited for
	 * this long before what came after it is delivered (reorder.c).
	 */
	FTV_REORDER_HOLD_MS = 10,
	FTV_COOKIE_PERIOD_S = 64,
	FTV_STAGED_MAX = 128,
	FTV_EARLY_MAX = 16,
	FTV_HANDSHAKE_QUEUE_MAX = 4096,
	/* Receive this much without sending and we send a pure ACK. */
	FTV_ACK_EVERY_BYTES = 64 * 1024,
	/* Advertised receive window, before scaling. */
	FTV_TCP_WINDOW = 4 << 20,
	/* ftv never retransmits, so a gap in the peer's data that has not
	 * filled in this long, or that this much data has overtaken, never
	 * will: our ACKs move past it.
	 */
	FTV_TCP_GAP_MS = 200,
	FTV_TCP_GAP_BYTES = FTV_TCP_WINDOW / 4,
};

#endif /* _FTV_MESSAGES_H */
