// SPDX-License-Identifier: GPL-2.0
/*
 * config-test FILE: reads FILE as setconf would and writes it back as
 * showconf would, so that the parser and the writer can be tested without
 * a kernel. Exit 1 (after the parser's message) if FILE is refused.
 */
#include <stdio.h>

#include <sodium.h>

#include "../config.h"
#include "../containers.h"

int main(int argc, char **argv)
{
	struct device *dev;

	if (argc != 2 || sodium_init() < 0) {
		fprintf(stderr, "Usage: %s FILE\n", argv[0]);
		return 2;
	}
	dev = config_read_file(argv[1]);
	if (!dev)
		return 1;
	config_write(stdout, dev);
	devices_free(dev);
	return fflush(stdout) ? 1 : 0;
}
