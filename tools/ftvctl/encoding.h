/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Conversions between the binary values of the model and their text form:
 * keys in base64, endpoints and allowed-ips as the user writes them.
 */
#ifndef FTVCTL_ENCODING_H
#define FTVCTL_ENCODING_H

#include <stdbool.h>
#include <stdint.h>

#include "containers.h"

/* A 32-byte key in padded base64: 43 characters and one '='. */
#define KEY_B64_LEN 44

/* "[" + IPv6 + "]:" + port + NUL */
#define ENDPOINT_STRLEN (INET6_ADDRSTRLEN + 9)
/* address + "/128" + NUL */
#define ALLOWEDIP_STRLEN (INET6_ADDRSTRLEN + 5)

void key_to_base64(char b64[KEY_B64_LEN + 1], const uint8_t key[FTV_KEY_LEN]);
bool key_from_base64(uint8_t key[FTV_KEY_LEN], const char *b64);
/* Writes @key in base64 and a newline to stdout. */
void key_print(const uint8_t key[FTV_KEY_LEN]);

void endpoint_to_string(char buf[ENDPOINT_STRLEN], const union endpoint *ep);
/* @v in decimal at @p, without printf and unterminated; returns the end. */
char *put_decimal(char *p, uint64_t v);

void allowedip_to_string(char buf[ALLOWEDIP_STRLEN],
			 const struct allowedip *ip);

#endif
