// SPDX-License-Identifier: GPL-2.0
/*
 * Offline test of setconf and syncconf: setconf.c is included whole and
 * the ipc layer replaced by one that prints each request it is given and
 * that answers a dump with a configuration file, as if the kernel held it.
 *
 *   sync-test setconf WANT.conf
 *   sync-test syncconf HAVE.conf WANT.conf [--hidden-keys]
 *
 * --hidden-keys: the "kernel" reports no private or pre-shared keys.
 * --no-fec: it reports no FEC setting, no flows, no rotate, no endpoint
 * lists and no shaping (an older module);
 * otherwise it reports both for every peer and the device, defaults
 * included, as a module that has them does.
 */
#include "../setconf.c"

#include <errno.h>

#include "../encoding.h"

static const char *have_path;
static bool hidden_keys, no_fec;

static void print_key(const char *what, const uint8_t *key)
{
	char b64[KEY_B64_LEN + 1];

	key_to_base64(b64, key);
	printf(" %s=%.8s", what, b64);
}

static void print_peer(const char *cmd, const struct peer *peer)
{
	char buf[ENDPOINT_STRLEN > ALLOWEDIP_STRLEN ? ENDPOINT_STRLEN
						     : ALLOWEDIP_STRLEN];
	const struct allowedip *ip;
	unsigned int i;

	printf("%s", cmd);
	print_key("key", peer->public_key);
	if (peer->flags & PEER_HAS_PRESHARED_KEY)
		print_key("psk", peer->preshared_key);
	if (peer->flags & PEER_REMOVE_PRESHARED_KEY)
		printf(" remove-psk");
	if ((peer->flags & PEER_HAS_ENDPOINTS) && peer->endpoints) {
		for (i = 0; i < peer->endpoints->count; i++) {
			endpoint_to_string(buf, &peer->endpoints->ep[i]);
			printf("%s%s", i ? "," : " endpoints=", buf);
		}
	} else if (peer->flags & PEER_HAS_ENDPOINT) {
		endpoint_to_string(buf, &peer->endpoint);
		printf(" endpoint=%s", buf);
	}
	if (peer->flags & PEER_HAS_PERSISTENT_KEEPALIVE)
		printf(" keepalive=%u", peer->persistent_keepalive);
	if (peer->flags & PEER_HAS_FEC) {
		fec_to_string(buf, peer->fec);
		printf(" fec=%s", buf);
	}
	if (peer->flags & PEER_HAS_FLOWS)
		printf(" flows=%u", peer->flows);
	if (peer->flags & PEER_HAS_ROTATE) {
		setting_number_format(setting_number_of(FTV_PEER_A_ROTATE),
				      buf, peer->rotate);
		printf(" rotate=%s", buf);
	}
	if (peer->flags & PEER_REPLACE_ALLOWEDIPS)
		printf(" replace-ips");
	for (ip = peer->first_allowedip; ip; ip = ip->next) {
		allowedip_to_string(buf, ip);
		printf("%s%s", ip == peer->first_allowedip ? " ips=" : ",", buf);
	}
	printf("\n");
}

/* A module with lists reports one of one for a single configured endpoint. */
static void report_list(struct peer *peer)
{
	if (!(peer->flags & PEER_HAS_ENDPOINT) ||
	    (peer->flags & PEER_HAS_ENDPOINTS))
		return;
	peer->endpoints = calloc(1, sizeof(*peer->endpoints));
	if (!peer->endpoints)
		return;
	peer->endpoints->count = 1;
	peer->endpoints->ep[0] = peer->endpoint;
	peer->flags |= PEER_HAS_ENDPOINTS;
}

int ipc_get_devices(struct device **devices, const char *ifname)
{
	struct device *dev = config_read_file(have_path);
	struct peer *peer;

	if (!dev)
		return -EINVAL;
	memcpy(dev->name, ifname, strlen(ifname) + 1);
	if (dev->flags & DEVICE_HAS_PRIVATE_KEY) {
		crypto_scalarmult_base(dev->public_key, dev->private_key);
		dev->flags |= DEVICE_HAS_PUBLIC_KEY;
	}
	if (hidden_keys) {
		dev->flags &= ~DEVICE_HAS_PRIVATE_KEY;
		for (peer = dev->first_peer; peer; peer = peer->next)
			peer->flags &= ~PEER_HAS_PRESHARED_KEY;
	}
	/* A kernel with FEC and shaping reports them, defaults included. */
	if (!no_fec) {
		if (!(dev->flags & DEVICE_HAS_SHAPE))
			dev->shape = true;
		dev->flags |= DEVICE_HAS_SHAPE;
		for (peer = dev->first_peer; peer; peer = peer->next) {
			peer->fec = peer_fec(peer);
			peer->flows = peer_number(peer, FTV_PEER_A_FLOWS);
			peer->rotate = peer_number(peer, FTV_PEER_A_ROTATE);
			peer->flags |= PEER_HAS_FEC | PEER_HAS_FLOWS |
				       PEER_HAS_ROTATE;
			report_list(peer);
		}
	}
	*devices = dev;
	return 0;
}

int ipc_set_device(const struct device *dev)
{
	printf("set_device %s", dev->name);
	if (dev->flags & DEVICE_HAS_PRIVATE_KEY)
		print_key("private-key", dev->private_key);
	if (dev->flags & DEVICE_HAS_LISTEN_PORT)
		printf(" listen-port=%u", dev->listen_port);
	if (dev->flags & DEVICE_HAS_FWMARK)
		printf(" fwmark=0x%x", dev->fwmark);
	if (dev->flags & DEVICE_HAS_SHAPE)
		printf(" shape=%s", dev->shape ? "on" : "off");
	if (dev->flags & DEVICE_REPLACE_PEERS)
		printf(" replace-peers");
	printf("\n");
	return 0;
}

int ipc_add_peer(const char *ifname, const struct peer *peer)
{
	(void)ifname;
	print_peer("new_peer", peer);
	return 0;
}

int ipc_set_peer(const char *ifname, const struct peer *peer)
{
	(void)ifname;
	print_peer("set_peer", peer);
	return 0;
}

int ipc_del_peer(const char *ifname, const struct peer *peer)
{
	(void)ifname;
	print_peer("del_peer", peer);
	return 0;
}

int main(int argc, char **argv)
{
	char *args[] = { argv[1], "ftv0", NULL, NULL };

	if (sodium_init() < 0)
		return 1;
	if (argc == 3 && !strcmp(argv[1], "setconf")) {
		args[2] = argv[2];
		return setconf_main(3, args);
	}
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "syncconf")) {
		have_path = argv[2];
		args[2] = argv[3];
		hidden_keys = argc == 5 && !strcmp(argv[4], "--hidden-keys");
		no_fec = argc == 5 && !strcmp(argv[4], "--no-fec");
		return syncconf_main(3, args);
	}
	fprintf(stderr, "Usage: %s setconf WANT | syncconf HAVE WANT [--hidden-keys | --no-fec]\n",
		argv[0]);
	return 2;
}
