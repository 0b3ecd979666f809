/* SPDX-License-Identifier: GPL-2.0 */
/* What every subcommand needs, apart from the model. */
#ifndef FTVCTL_UTIL_H
#define FTVCTL_UTIL_H

#include <stdbool.h>

/* The name every message starts with. */
extern const char *PROG_NAME;

/* True when the arguments after the subcommand ask for its usage. */
bool wants_help(int argc, char **argv);

/* Flushes stdout: 0, or 1 after saying why the output was lost. */
int finish_output(void);

#endif
