// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"
#include "parse.h"
#include "settings.h"
#include "subcommands.h"
#include "util.h"

static void usage(FILE *out)
{
	int col = fprintf(out, "Usage: %s set <interface>", PROG_NAME);

	settings_usage(out, SETTING_DEVICE, col, 11);
	fprintf(out, "\n");
}

static bool set_option(struct device *dev, const char *option,
		       const char *value)
{
	const struct setting *s = setting_by_word(SETTING_DEVICE, option);

	if (!s) {
		print_error("set: unknown option '%s'", option);
		usage(stderr);
		return false;
	}
	return setting_parse(s, dev, value, SETTING_FROM_ARG);
}

int set_main(int argc, char **argv)
{
	struct device *dev;
	int i, ret = 1;

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	if (argc < 2 || argc % 2) {
		usage(stderr);
		return 1;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		perror(PROG_NAME);
		return 1;
	}
	if (!parse_ifname(dev->name, argv[1]))
		goto out;
	for (i = 2; i < argc; i += 2)
		if (!set_option(dev, argv[i], argv[i + 1]))
			goto out;
	ret = ipc_set_device(dev) ? 1 : 0;
out:
	devices_free(dev);	/* also wipes the private key */
	return ret;
}
