// SPDX-License-Identifier: GPL-2.0
/*
 * showconf: the device as a configuration file that setconf takes back.
 * Unlike show, it prints the private and pre-shared keys: its output is a
 * secret, as the file it recreates is.
 */
#include <stdio.h>

#include "config.h"
#include "ipc.h"
#include "parse.h"
#include "subcommands.h"
#include "util.h"

int showconf_main(int argc, char **argv)
{
	struct device *dev = NULL;
	char name[IFNAMSIZ];
	int ret;

	if (wants_help(argc, argv) || argc != 2) {
		fprintf(argc == 2 ? stdout : stderr,
			"Usage: %s showconf <interface>\n", PROG_NAME);
		return argc == 2 ? 0 : 1;
	}
	if (!parse_ifname(name, argv[1]) || ipc_get_devices(&dev, name))
		return 1;
	/* A public key means there is a private key the kernel kept back. */
	if ((dev->flags & DEVICE_HAS_PUBLIC_KEY) &&
	    !(dev->flags & DEVICE_HAS_PRIVATE_KEY))
		print_error("warning: the kernel did not report the private key, so the output lacks PrivateKey and any PresharedKey");
	buffer_output();
	config_write(stdout, dev);
	ret = finish_output();
	devices_free(dev);
	return ret;
}
