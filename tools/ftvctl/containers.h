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

/* Why received segments were dropped; indexes struct drops.count. */
enum drop_reason {
	DROP_BAD_AUTH,
	DROP_REPLAY,
	DROP_MALFORMED,
	DROP_NO_SESSION,
	DROP_NOT_ALLOWED,
	DROP_RATELIMITED,
	DROP_REASONS
};

struct drops {
	uint64_t count[DROP_REASONS];
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
};

union endpoint {
	struct sockaddr addr;
	struct sockaddr_in addr4;
	struct sockaddr_in6 addr6;
};

struct peer {
	struct peer *next;
	uint32_t flags;
	uint8_t public_key[FTV_KEY_LEN];
	uint8_t preshared_key[FTV_KEY_LEN];
	union endpoint endpoint;
	uint16_t persistent_keepalive;
	struct allowedip *first_allowedip, *last_allowedip;

	/* State, only ever read back from the kernel. */
	uint64_t last_handshake;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint8_t state;
	struct drops drops;
};

enum {
	DEVICE_HAS_PRIVATE_KEY = 1U << 0,
	DEVICE_HAS_PUBLIC_KEY = 1U << 1,
	DEVICE_HAS_LISTEN_PORT = 1U << 2,
	DEVICE_HAS_FWMARK = 1U << 3,
	/* Peers not named in the request go away (setconf). */
	DEVICE_REPLACE_PEERS = 1U << 4,
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
/*
 * Whether two peers route the same prefixes, in any order, host bits
 * ignored as the kernel ignores them. Returns -ENOMEM, or 1 or 0.
 */
int peer_allowedips_equal(const struct peer *a, const struct peer *b);
void devices_free(struct device *dev);

#endif
