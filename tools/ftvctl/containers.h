/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-memory model of a device: what a subcommand or a config file
 * wants to change, and what the kernel reports back.
 * The HAS_* flags record which fields were actually given, so that a request
 * touches only what the user named and leaves the rest alone.
 */
#ifndef FTVCTL_CONTAINERS_H
#define FTVCTL_CONTAINERS_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <linux/ftv.h>

struct allowedip {
	struct allowedip *next;
	uint16_t family;
	union {
		struct in_addr ip4;
		struct in6_addr ip6;
	};
	uint8_t cidr;
};

/* Indexed by the reason's attribute (enum ftv_drops_attr); drop-names.h
 * names the reasons there are.
 */
struct drops {
	uint64_t count[FTV_DROPS_A_MAX + 1];
};

enum {
	PEER_HAS_PUBLIC_KEY = 1U << 0,
	PEER_HAS_PRESHARED_KEY = 1U << 1,
	PEER_HAS_ENDPOINT = 1U << 2,
	PEER_HAS_PERSISTENT_KEEPALIVE = 1U << 3,
	/* The allowed-ips list replaces the kernel's instead of adding. */
	PEER_REPLACE_ALLOWEDIPS = 1U << 4,
	/* The kernel forgets the peer's pre-shared key. */
	PEER_REMOVE_PRESHARED_KEY = 1U << 5,
	PEER_HAS_FEC = 1U << 6,
	/* Read back only: the kernel reported FTV_PEER_A_FEC_STATS. */
	PEER_HAS_FEC_STATS = 1U << 7,
	PEER_HAS_FLOWS = 1U << 8,
	/* Read back only: the kernel reported FTV_PEER_A_FLOWS_UP. */
	PEER_HAS_FLOWS_UP = 1U << 9,
	/* Read back only: the kernel reported FTV_PEER_A_ROTATIONS. */
	PEER_HAS_ROTATIONS = 1U << 10,
	PEER_HAS_ROTATE = 1U << 11,
	/*
	 * endpoints holds a list: in a request, of more than one endpoint
	 * (one goes as endpoint alone, which every module takes); read
	 * back, the kernel's configured list (endpoint is the current one).
	 */
	PEER_HAS_ENDPOINTS = 1U << 12,
	/* Read back only: the kernel reported FTV_PEER_A_RESETS. */
	PEER_HAS_RESETS = 1U << 13,
};

/* The flows of a peer that was never given a setting. */
#define FLOWS_DEFAULT 1

/* The rotate setting of a peer that was never given one. */
#define ROTATE_DEFAULT FTV_ROTATE_AUTO

/* Forward error correction: a setting, and what it does now. */
struct fec {
	uint8_t mode;		/* enum ftv_fec_mode */
	uint8_t data;		/* K, for FTV_FEC_FIXED */
	uint8_t repair;		/* M, for FTV_FEC_FIXED */
};

/* The default of a peer that was never given a setting. */
#define FEC_DEFAULT ((struct fec){ .mode = FTV_FEC_AUTO })

/* "off", "auto", "K:M" or (from a newer kernel) "mode N", and a NUL */
#define FEC_STRLEN 12

struct fec_stats {
	bool active;		/* both ends use FEC */
	uint8_t data, repair;	/* K:M in use now; K 0 when none */
	uint32_t loss_ppm;
	uint64_t repair_sent;
	uint64_t rebuilt;
	uint64_t groups_lost;
};

/*
 * The last RST or FIN the kernel ignored on a peer's connections, and the
 * peer's own last segment there before it. An IP ID is there for IPv4
 * only, the peer's figures only if one of its segments had come.
 */
struct resets {
	uint8_t ttl, peer_ttl;
	uint16_t ip_id, peer_ip_id;
	bool has_ip_id, has_peer_ttl, has_peer_ip_id;
};

union endpoint {
	struct sockaddr addr;
	struct sockaddr_in addr4;
	struct sockaddr_in6 addr6;
};

/* The endpoints a peer dials, in the order they are tried. */
struct endpoint_list {
	uint8_t count;		/* 1 to FTV_MAX_ENDPOINTS */
	union endpoint ep[FTV_MAX_ENDPOINTS];
};

struct peer {
	struct peer *next;
	uint32_t flags;
	uint8_t public_key[FTV_KEY_LEN];
	uint8_t preshared_key[FTV_KEY_LEN];
	union endpoint endpoint;
	/* With PEER_HAS_ENDPOINTS (NULL: none); owned, freed by peer_free() */
	struct endpoint_list *endpoints;
	uint16_t persistent_keepalive;
	struct fec fec;
	uint8_t flows;		/* 1 to FTV_MAX_FLOWS */
	uint32_t rotate;	/* FTV_ROTATE_OFF, FTV_ROTATE_AUTO or bytes */
	struct allowedip *first_allowedip, *last_allowedip;

	/* State, only ever read back from the kernel. */
	uint64_t last_handshake;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint8_t state;
	uint8_t flows_up;	/* connections of the session that are up */
	uint64_t rotations;	/* connections replaced, having stalled */
	struct drops drops;
	struct fec_stats fec_stats;
	struct resets resets;
};

enum {
	DEVICE_HAS_PRIVATE_KEY = 1U << 0,
	DEVICE_HAS_PUBLIC_KEY = 1U << 1,
	DEVICE_HAS_LISTEN_PORT = 1U << 2,
	DEVICE_HAS_FWMARK = 1U << 3,
	/* Peers not named in the request go away (setconf). */
	DEVICE_REPLACE_PEERS = 1U << 4,
	DEVICE_HAS_SHAPE = 1U << 5,
};

struct device {
	struct device *next;
	char name[IFNAMSIZ];
	uint32_t ifindex;
	uint32_t flags;
	uint8_t private_key[FTV_KEY_LEN];
	uint8_t public_key[FTV_KEY_LEN];
	uint16_t listen_port;
	uint32_t fwmark;
	bool shape;		/* shape connection openings; on by default */
	struct drops drops;
	struct peer *first_peer, *last_peer;
};

/*
 * Peers by public key: files and devices of 10^5 peers are compared and
 * checked for duplicates through this, not by walking the list for each
 * peer. An open addressing table kept at most half full; the hash is
 * SipHash under a random key, so no choice of keys makes it slow.
 */
struct peer_index {
	struct peer **slots;
	size_t mask;		/* the number of slots, a power of two, less 1 */
	size_t count;
	uint8_t hash_key[16];
};

void device_add_peer(struct device *dev, struct peer *peer);
/* An empty index, which grows as peers are added. */
void peer_index_init(struct peer_index *idx);
/* Indexes every peer of @dev. Returns 0 or -ENOMEM. */
int peer_index_build(struct peer_index *idx, const struct device *dev);
/* Returns 0, or -ENOMEM. The caller makes sure the key is not there yet. */
int peer_index_add(struct peer_index *idx, struct peer *peer);
struct peer *peer_index_find(const struct peer_index *idx,
			     const uint8_t public_key[FTV_KEY_LEN]);
void peer_index_free(struct peer_index *idx);
void peer_add_allowedip(struct peer *peer, struct allowedip *ip);
void peer_free(struct peer *peer);
bool endpoint_equal(const union endpoint *a, const union endpoint *b);
/* Same endpoints in the same order; NULL is an empty list. */
bool endpoint_list_equal(const struct endpoint_list *a,
			 const struct endpoint_list *b);
/* The setting of @peer: the one it was given, or FEC_DEFAULT. */
struct fec peer_fec(const struct peer *peer);
bool fec_equal(struct fec a, struct fec b);
/* "off", "auto" or "K:M" */
void fec_to_string(char buf[FEC_STRLEN], struct fec fec);
/*
 * Whether two peers route the same prefixes, in any order, host bits
 * ignored as the kernel ignores them. Returns -ENOMEM, or 1 or 0.
 */
int peer_allowedips_equal(const struct peer *a, const struct peer *b);
void devices_free(struct device *dev);

#endif
