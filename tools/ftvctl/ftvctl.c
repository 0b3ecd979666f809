// SPDX-License-Identifier: GPL-2.0
/*
 * ftvctl: configures ftv devices over the "ftv" generic netlink family.
 *
 * Layers, from the user inwards: a subcommand (one file each) parses its
 * arguments into the model (containers.h); the netlink layer turns the
 * model into requests (ipc-write.c), the kernel's answers back into the
 * model (ipc-read.c) and carries both (ipc.c); show.c renders what the
 * kernel reported.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "ipc.h"
#include "subcommands.h"
#include "util.h"

#ifndef FTV_VERSION
#define FTV_VERSION "0.1"
#endif

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *description;
} subcommands[] = {
	{ "show", show_main, "Print devices and their peers, state and counters" },
	{ "showconf", showconf_main, "Print a device's configuration as a file" },
	{ "set", set_main, "Change a device's private key, listening port or fwmark" },
	{ "setconf", setconf_main, "Replace a device's configuration with a file's" },
	{ "syncconf", syncconf_main, "Apply a file's configuration, keeping live sessions" },
	{ "peer", peer_main, "Add, change or remove one peer of a device" },
	{ "monitor", monitor_main, "Print peer events as they happen" },
	{ "probe", probe_main, "Find what the path does to a peer, and what to set" },
	{ "genkey", genkey_main, "Print a new random private key" },
	{ "genpsk", genpsk_main, "Print a new random pre-shared key" },
	{ "pubkey", pubkey_main, "Derive the public key of the private key on stdin" },
};

#define SUBCOMMAND_COUNT (sizeof(subcommands) / sizeof(subcommands[0]))

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "Usage: %s <command> [<arguments>]\n\n", PROG_NAME);
	fprintf(out, "Configures ftv tunnel devices. Commands:\n");
	for (i = 0; i < SUBCOMMAND_COUNT; i++)
		fprintf(out, "  %-9s %s\n", subcommands[i].name,
			subcommands[i].description);
	fprintf(out, "\nWithout a command, \"show\" runs. \"%s <command> --help\" lists a command's arguments.\n",
		PROG_NAME);
}

int main(int argc, char **argv)
{
	static char *show_all[] = { "show", NULL };
	size_t i;
	int ret;

	if (sodium_init() < 0) {
		fprintf(stderr, "%s: unable to initialise libsodium\n", PROG_NAME);
		return 1;
	}
	if (argc == 1) {
		ret = show_main(1, show_all);
		ipc_close();
		return ret;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--complete"))
		return complete_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version")) {
		printf("%s %s\n", PROG_NAME, FTV_VERSION);
		return 0;
	}
	for (i = 0; i < SUBCOMMAND_COUNT; i++) {
		if (!strcmp(argv[1], subcommands[i].name)) {
			ret = subcommands[i].main(argc - 1, argv + 1);
			ipc_close();
			return ret;
		}
	}
	print_error("unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 1;
}
