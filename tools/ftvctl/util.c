// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

const char *PROG_NAME = "ftvctl";

bool wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help"))
			return true;
	return false;
}

int finish_output(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: unable to write the output: %s\n",
			PROG_NAME, strerror(errno));
		return 1;
	}
	return 0;
}
