// SPDX-License-Identifier: GPL-2.0
/*
 * genkey and genpsk: both print 32 random bytes, a private key merely has
 * the bits X25519 fixes cleared and set, so they share this file.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "encoding.h"
#include "subcommands.h"
#include "util.h"

/* Redirecting a key into a file that everyone can read gives it away. */
static void warn_if_world_readable(void)
{
	struct stat st;

	if (!fstat(STDOUT_FILENO, &st) && S_ISREG(st.st_mode) &&
	    (st.st_mode & S_IROTH))
		fprintf(stderr, "%s: warning: writing a secret key to a file other users can read (try umask 077)\n",
			PROG_NAME);
}

/* RFC 7748, section 5: the scalar is a multiple of 8 below 2^255. */
static void clamp(uint8_t key[FTV_KEY_LEN])
{
	key[0] &= 248;
	key[31] &= 127;
	key[31] |= 64;
}

static int print_random_key(int argc, char **argv, bool private_key)
{
	bool help = wants_help(argc, argv);
	uint8_t key[FTV_KEY_LEN];
	int ret;

	if (argc != 1) {
		fprintf(help ? stdout : stderr, "Usage: %s %s\n", PROG_NAME, argv[0]);
		return help ? 0 : 1;
	}
	warn_if_world_readable();
	randombytes_buf(key, sizeof(key));
	if (private_key)
		clamp(key);
	key_print(key);
	ret = finish_output();
	sodium_memzero(key, sizeof(key));
	return ret;
}

int genkey_main(int argc, char **argv)
{
	return print_random_key(argc, argv, true);
}

int genpsk_main(int argc, char **argv)
{
	return print_random_key(argc, argv, false);
}
