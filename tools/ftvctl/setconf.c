// SPDX-License-Identifier: GPL-2.0
/*
 * setconf and syncconf: both make a device what a file says. setconf
 * starts from nothing (every peer, and with it every session, goes);
 * syncconf compares the file with what the kernel reports and asks only for
 * the differences, so that a peer the file leaves as it is keeps its
 * session. Interface keys the file leaves out keep their values in both.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "config.h"
#include "ipc.h"
#include "parse.h"
#include "subcommands.h"
#include "settings.h"
#include "util.h"

static void usage(FILE *out, const char *cmd)
{
	fprintf(out, "Usage: %s %s <interface> <configuration file>\n",
		PROG_NAME, cmd);
}

/*
 * Reads argv[2] for the device named argv[1]. NULL, with the exit code in
 * @ret, after the usage or an error.
 */
static struct device *read_args(int argc, char **argv, int *ret)
{
	struct device *dev;
	char name[IFNAMSIZ];

	*ret = 1;
	if (wants_help(argc, argv)) {
		usage(stdout, argv[0]);
		*ret = 0;
		return NULL;
	}
	if (argc != 3) {
		usage(stderr, argv[0]);
		return NULL;
	}
	if (!parse_ifname(name, argv[1]))
		return NULL;
	dev = config_read_file(argv[2]);
	if (dev)
		memcpy(dev->name, name, sizeof(name));
	return dev;
}

int setconf_main(int argc, char **argv)
{
	const struct peer *peer;
	struct device *dev;
	int ret;

	dev = read_args(argc, argv, &ret);
	if (!dev)
		return ret;
	ret = 1;
	dev->flags |= DEVICE_REPLACE_PEERS;
	if (ipc_set_device(dev))
		goto out;
	for (peer = dev->first_peer; peer; peer = peer->next)
		if (ipc_add_peer(dev->name, peer))
			goto out;
	ret = 0;
out:
	devices_free(dev);
	return ret;
}

/* ---- syncconf ----------------------------------------------------------- */

/*
 * The interface keys of @want that differ from @have. The private key is
 * compared through its public key, which every kernel reports: setting it
 * again, even to the same value, would end every session.
 */
static void device_changes(struct device *change, const struct device *want,
			   const struct device *have)
{
	uint8_t public_key[FTV_KEY_LEN];

	memcpy(change->name, want->name, sizeof(change->name));
	if (want->flags & DEVICE_HAS_PRIVATE_KEY) {
		crypto_scalarmult_base(public_key, want->private_key);
		if (!(have->flags & DEVICE_HAS_PUBLIC_KEY) ||
		    memcmp(public_key, have->public_key, FTV_KEY_LEN)) {
			memcpy(change->private_key, want->private_key,
			       FTV_KEY_LEN);
			change->flags |= DEVICE_HAS_PRIVATE_KEY;
		}
	}
	if ((want->flags & DEVICE_HAS_LISTEN_PORT) &&
	    want->listen_port != have->listen_port) {
		change->listen_port = want->listen_port;
		change->flags |= DEVICE_HAS_LISTEN_PORT;
	}
	if ((want->flags & DEVICE_HAS_FWMARK) && want->fwmark != have->fwmark) {
		change->fwmark = want->fwmark;
		change->flags |= DEVICE_HAS_FWMARK;
	}
	if ((want->flags & DEVICE_HAS_SHAPE) &&
	    (!(have->flags & DEVICE_HAS_SHAPE) || want->shape != have->shape)) {
		change->shape = want->shape;
		change->flags |= DEVICE_HAS_SHAPE;
	}
}

/*
 * A kernel that reports pre-shared keys is compared with; one that does
 * not is given the file's key every time (which does not disturb a
 * session), and a key the file drops cannot be noticed there.
 */
static void psk_changes(struct peer *change, const struct peer *want,
			const struct peer *have, bool keys_reported)
{
	static const uint8_t zero[FTV_KEY_LEN];
	const uint8_t *want_psk = zero, *have_psk = zero;

	if (want->flags & PEER_HAS_PRESHARED_KEY)
		want_psk = want->preshared_key;
	if (have->flags & PEER_HAS_PRESHARED_KEY)
		have_psk = have->preshared_key;
	if (keys_reported && !memcmp(want_psk, have_psk, FTV_KEY_LEN))
		return;
	if (!sodium_is_zero(want_psk, FTV_KEY_LEN)) {
		memcpy(change->preshared_key, want_psk, FTV_KEY_LEN);
		change->flags |= PEER_HAS_PRESHARED_KEY;
	} else if (keys_reported) {
		change->flags |= PEER_REMOVE_PRESHARED_KEY;
	}
}

/*
 * A peer without FEC in the file has the default, as one that setconf
 * adds would. A kernel that reports no setting (a module without FEC) is
 * only given one the file names, and may refuse it.
 */
static void fec_changes(struct peer *change, const struct peer *want,
			const struct peer *have)
{
	if (!(have->flags & PEER_HAS_FEC)) {
		if (!(want->flags & PEER_HAS_FEC))
			return;
	} else if (fec_equal(peer_fec(want), have->fec)) {
		return;
	}
	change->fec = peer_fec(want);
	change->flags |= PEER_HAS_FEC;
}

/*
 * The settings that are one number each (settings.c), as FEC: left out
 * of the file, the default; a kernel that reports one not (an older
 * module) is only given it if the file names it.
 */
static void number_changes(struct peer *change, const struct peer *want,
			   const struct peer *have)
{
	const struct setting_number *n;
	size_t i;

	for (i = 0; (n = setting_number(i)); i++) {
		if (!(have->flags & n->has)) {
			if (!(want->flags & n->has))
				continue;
		} else if (setting_number_value(n, want) ==
			   setting_number_get(n, have)) {
			continue;
		}
		setting_number_set(n, change, setting_number_value(n, want));
	}
}

/*
 * A list in the file is compared with the kernel's configured list; one
 * endpoint, with that list if the kernel reports one (it may have several
 * now), else with the endpoint it reports. The list is borrowed.
 */
static void endpoint_changes(struct peer *change, const struct peer *want,
			     const struct peer *have)
{
	const struct endpoint_list *have_list =
		have->flags & PEER_HAS_ENDPOINTS ? have->endpoints : NULL;
	bool same;

	if (!(want->flags & PEER_HAS_ENDPOINT))
		return;
	if (want->flags & PEER_HAS_ENDPOINTS)
		same = endpoint_list_equal(want->endpoints, have_list);
	else if (have_list)
		same = have_list->count == 1 &&
		       endpoint_equal(&want->endpoint, &have_list->ep[0]);
	else
		same = (have->flags & PEER_HAS_ENDPOINT) &&
		       endpoint_equal(&want->endpoint, &have->endpoint);
	if (same)
		return;
	change->endpoint = want->endpoint;
	change->flags |= want->flags & (PEER_HAS_ENDPOINT | PEER_HAS_ENDPOINTS);
	change->endpoints = want->endpoints;
}

/*
 * What of @want differs from @have, in @change. An endpoint is only set
 * when the file gives one: the kernel reports the address a peer last
 * spoke from, which for a peer that only answers is not configuration.
 * The allowed IPs of @want are borrowed, not copied. Returns whether
 * there is anything to send, or -ENOMEM.
 */
static int peer_changes(struct peer *change, const struct peer *want,
			const struct peer *have, bool keys_reported)
{
	int same_ips = peer_allowedips_equal(want, have);

	if (same_ips < 0)
		return same_ips;
	memcpy(change->public_key, want->public_key, FTV_KEY_LEN);
	change->flags = PEER_HAS_PUBLIC_KEY;
	endpoint_changes(change, want, have);
	if (!same_ips) {
		change->first_allowedip = want->first_allowedip;
		change->last_allowedip = want->last_allowedip;
		change->flags |= PEER_REPLACE_ALLOWEDIPS;
	}
	fec_changes(change, want, have);
	number_changes(change, want, have);
	psk_changes(change, want, have, keys_reported);
	return change->flags != PEER_HAS_PUBLIC_KEY;
}

static int sync_peer(const char *ifname, const struct peer *want,
		     const struct peer *have, bool keys_reported)
{
	struct peer change = { 0 };
	int ret;

	ret = peer_changes(&change, want, have, keys_reported);
	if (ret > 0)
		ret = ipc_set_peer(ifname, &change);
	else if (ret < 0)
		print_error("%s", strerror(-ret));
	sodium_memzero(&change, sizeof(change));
	return ret;
}

/* Only the key: the rest of what the kernel reported has no place in it. */
static int del_peer(const char *ifname, const struct peer *old)
{
	struct peer gone = { .flags = PEER_HAS_PUBLIC_KEY };

	memcpy(gone.public_key, old->public_key, FTV_KEY_LEN);
	return ipc_del_peer(ifname, &gone);
}

/*
 * Removals come first and additions last, so that an allowed IP moving
 * from one peer to another is never claimed by both at once.
 */
static int sync_peers(const struct device *want, const struct device *have,
		      const struct peer_index *wanted,
		      const struct peer_index *had)
{
	bool keys_reported = have->flags & DEVICE_HAS_PRIVATE_KEY;
	const struct peer *peer, *old;
	int ret = 0;

	for (old = have->first_peer; !ret && old; old = old->next)
		if (!peer_index_find(wanted, old->public_key))
			ret = del_peer(want->name, old);
	for (peer = want->first_peer; !ret && peer; peer = peer->next) {
		old = peer_index_find(had, peer->public_key);
		if (old)
			ret = sync_peer(want->name, peer, old, keys_reported);
	}
	for (peer = want->first_peer; !ret && peer; peer = peer->next)
		if (!peer_index_find(had, peer->public_key))
			ret = ipc_add_peer(want->name, peer);
	return ret;
}

static int sync_device(const struct device *want, const struct device *have)
{
	struct peer_index wanted, had;
	struct device change = { 0 };
	int ret = 0;

	device_changes(&change, want, have);
	if (change.flags)
		ret = ipc_set_device(&change);
	sodium_memzero(&change, sizeof(change));
	if (ret)
		return ret;
	if (peer_index_build(&wanted, want)) {
		print_error("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	if (peer_index_build(&had, have)) {
		peer_index_free(&wanted);
		print_error("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = sync_peers(want, have, &wanted, &had);
	peer_index_free(&wanted);
	peer_index_free(&had);
	return ret;
}

int syncconf_main(int argc, char **argv)
{
	struct device *want, *have = NULL;
	int ret = 1;

	want = read_args(argc, argv, &ret);
	if (!want)
		return ret;
	if (!ipc_get_devices(&have, want->name) && !sync_device(want, have))
		ret = 0;
	devices_free(have);
	devices_free(want);
	return ret;
}
