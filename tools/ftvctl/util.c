// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

const char *PROG_NAME = "ftvctl";

static const char *error_file;
static unsigned int error_line;

bool wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help"))
			return true;
	return false;
}

#define OUTPUT_BUFFER_SIZE (1 << 20)

void buffer_output(void)
{
	static char buf[OUTPUT_BUFFER_SIZE];

	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
}

int finish_output(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		print_error("unable to write the output: %s", strerror(errno));
		return 1;
	}
	return 0;
}

void print_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", PROG_NAME);
	if (error_file)
		fprintf(stderr, "%s:%u: ", error_file, error_line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void error_location_set(const char *file, unsigned int line)
{
	error_file = file;
	error_line = line;
}

char *trim(char *s)
{
	char *end = s + strlen(s);

	while (isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}
