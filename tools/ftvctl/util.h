/* SPDX-License-Identifier: GPL-2.0 */
/* What every subcommand needs, apart from the model. */
#ifndef FTVCTL_UTIL_H
#define FTVCTL_UTIL_H

#include <stdbool.h>

/* The name every message starts with. */
extern const char *PROG_NAME;

/* True when the arguments after the subcommand ask for its usage. */
bool wants_help(int argc, char **argv);

/*
 * Gives stdout one large buffer, before anything is printed: 10^5 peers
 * then go out in few large writes, also to a terminal, where each line
 * would otherwise be a write of its own. finish_output() flushes it.
 */
void buffer_output(void);

/* Flushes stdout: 0, or 1 after saying why the output was lost. */
int finish_output(void);

/*
 * Prints "ftvctl: " and the message on stderr, with "FILE:LINE: " in
 * between while a configuration file is being read, so that the value
 * parsers shared with the command line point at the right place.
 */
void print_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* @file NULL: messages no longer name a place. */
void error_location_set(const char *file, unsigned int line);

/* Cuts the blanks off both ends of @s, in place; returns its new start. */
char *trim(char *s);

#endif
