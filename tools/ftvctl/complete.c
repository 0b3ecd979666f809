// SPDX-License-Identifier: GPL-2.0
/*
 * ftvctl --complete: what the bash completion offers, from the settings
 * table, so that a new setting is completed without editing the script.
 * Not a command for people; its output is one line of words.
 */
#include <stdio.h>
#include <string.h>

#include "settings.h"
#include "subcommands.h"
#include "util.h"

static void usage(FILE *out)
{
	fprintf(out, "Usage: %s --complete set|peer [<option>]\n", PROG_NAME);
}

/* argv: --complete set|peer [OPTION] */
int complete_main(int argc, char **argv)
{
	enum setting_of of;

	if (argc < 2 || argc > 3) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "set")) {
		of = SETTING_DEVICE;
	} else if (!strcmp(argv[1], "peer")) {
		of = SETTING_PEER;
	} else {
		print_error("--complete: no settings for '%s'", argv[1]);
		return 1;
	}
	if (!settings_complete(stdout, of, argc == 3 ? argv[2] : NULL)) {
		print_error("--complete: %s has no option '%s'", argv[1],
			    argv[2]);
		return 1;
	}
	return 0;
}
