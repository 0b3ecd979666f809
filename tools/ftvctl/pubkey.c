// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>

#include <sodium.h>

#include "encoding.h"
#include "parse.h"
#include "subcommands.h"
#include "util.h"

int pubkey_main(int argc, char **argv)
{
	uint8_t private_key[FTV_KEY_LEN], public_key[FTV_KEY_LEN];
	bool help = wants_help(argc, argv);
	int ret = 1;

	if (argc != 1) {
		fprintf(help ? stdout : stderr,
			"Usage: %s pubkey < private.key\n", PROG_NAME);
		return help ? 0 : 1;
	}
	if (!read_key_file(private_key, "-"))
		return 1;
	/* libsodium clamps the scalar itself, as X25519 prescribes. */
	if (crypto_scalarmult_base(public_key, private_key)) {
		fprintf(stderr, "%s: unable to derive the public key\n", PROG_NAME);
	} else {
		key_print(public_key);
		ret = finish_output();
	}
	sodium_memzero(private_key, sizeof(private_key));
	return ret;
}
