// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include <sodium.h>

#include "containers.h"

void device_add_peer(struct device *dev, struct peer *peer)
{
	if (dev->last_peer)
		dev->last_peer->next = peer;
	else
		dev->first_peer = peer;
	dev->last_peer = peer;
}

void peer_add_allowedip(struct peer *peer, struct allowedip *ip)
{
	if (peer->last_allowedip)
		peer->last_allowedip->next = ip;
	else
		peer->first_allowedip = ip;
	peer->last_allowedip = ip;
}

/* Keys are wiped before the memory goes back to the allocator. */
void peer_free(struct peer *peer)
{
	struct allowedip *ip, *next_ip;

	if (!peer)
		return;
	for (ip = peer->first_allowedip; ip; ip = next_ip) {
		next_ip = ip->next;
		free(ip);
	}
	sodium_memzero(peer, sizeof(*peer));
	free(peer);
}

/* Frees @dev and every device chained after it. */
void devices_free(struct device *dev)
{
	struct device *next_dev;
	struct peer *peer, *next_peer;

	for (; dev; dev = next_dev) {
		next_dev = dev->next;
		for (peer = dev->first_peer; peer; peer = next_peer) {
			next_peer = peer->next;
			peer_free(peer);
		}
		sodium_memzero(dev, sizeof(*dev));
		free(dev);
	}
}
