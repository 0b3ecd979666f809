// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"
#include "parse.h"
#include "settings.h"
#include "subcommands.h"
#include "util.h"

struct peer_op {
	const char *name;
	int (*apply)(const char *ifname, const struct peer *peer);
	bool takes_options;
	/* On "set", allowed-ips says what the list is, not what to add. */
	bool replaces_allowedips;
};

static const struct peer_op peer_ops[] = {
	{ "add", ipc_add_peer, true, false },
	{ "set", ipc_set_peer, true, true },
	{ "del", ipc_del_peer, false, false },
};

static void usage(FILE *out)
{
	int col;

	col = fprintf(out, "Usage: %s peer add <interface> <public-key>",
		      PROG_NAME);
	settings_usage(out, SETTING_PEER, col, 11);
	fprintf(out,
		"\n       %1$s peer set <interface> <public-key> [the options of add]\n"
		"       %1$s peer del <interface> <public-key>\n",
		PROG_NAME);
}

static const struct peer_op *find_op(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(peer_ops) / sizeof(peer_ops[0]); i++)
		if (!strcmp(peer_ops[i].name, name))
			return &peer_ops[i];
	return NULL;
}

static bool peer_option(struct peer *peer, const struct peer_op *op,
			const char *option, const char *value)
{
	const struct setting *s = setting_by_word(SETTING_PEER, option);

	if (!s) {
		print_error("peer %s: unknown option '%s'", op->name, option);
		usage(stderr);
		return false;
	}
	if (!strcmp(option, "allowed-ips") && op->replaces_allowedips)
		peer->flags |= PEER_REPLACE_ALLOWEDIPS;
	return setting_parse(s, peer, value, SETTING_FROM_ARG);
}

/* argv: peer OP DEV PUBKEY [option value]... */
static bool parse_peer_args(struct peer *peer, char ifname[IFNAMSIZ],
			    const struct peer_op *op, int argc, char **argv)
{
	int i;

	if ((!op->takes_options && argc > 4) || argc % 2) {
		usage(stderr);
		return false;
	}
	if (!parse_ifname(ifname, argv[2]) ||
	    !parse_public_key(peer->public_key, argv[3]))
		return false;
	peer->flags |= PEER_HAS_PUBLIC_KEY;
	for (i = 4; i < argc; i += 2)
		if (!peer_option(peer, op, argv[i], argv[i + 1]))
			return false;
	return true;
}

int peer_main(int argc, char **argv)
{
	const struct peer_op *op;
	char ifname[IFNAMSIZ];
	struct peer *peer;
	int ret = 1;

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	op = argc >= 2 ? find_op(argv[1]) : NULL;
	if (!op || argc < 4) {
		if (argc >= 2 && !op)
			print_error("peer: unknown action '%s'", argv[1]);
		usage(stderr);
		return 1;
	}
	peer = calloc(1, sizeof(*peer));
	if (!peer) {
		perror(PROG_NAME);
		return 1;
	}
	if (parse_peer_args(peer, ifname, op, argc, argv))
		ret = op->apply(ifname, peer) ? 1 : 0;
	peer_free(peer);	/* also wipes the pre-shared key */
	return ret;
}
