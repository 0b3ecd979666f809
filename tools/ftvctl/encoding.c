// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "encoding.h"

void key_to_base64(char b64[KEY_B64_LEN + 1], const uint8_t key[FTV_KEY_LEN])
{
	sodium_bin2base64(b64, KEY_B64_LEN + 1, key, FTV_KEY_LEN,
			  sodium_base64_VARIANT_ORIGINAL);
}

/*
 * Only the canonical form is accepted: exactly 44 characters that decode to
 * exactly 32 bytes (libsodium also refuses stray bits in the last symbol),
 * so one key has one spelling and can be compared as text.
 */
bool key_from_base64(uint8_t key[FTV_KEY_LEN], const char *b64)
{
	const char *end;
	size_t len;

	if (strlen(b64) != KEY_B64_LEN)
		return false;
	if (sodium_base642bin(key, FTV_KEY_LEN, b64, KEY_B64_LEN, NULL, &len,
			      &end, sodium_base64_VARIANT_ORIGINAL))
		return false;
	return len == FTV_KEY_LEN && *end == '\0';
}

void key_print(const uint8_t key[FTV_KEY_LEN])
{
	char b64[KEY_B64_LEN + 1];

	key_to_base64(b64, key);
	printf("%s\n", b64);
	sodium_memzero(b64, sizeof(b64));
}

void endpoint_to_string(char buf[ENDPOINT_STRLEN], const union endpoint *ep)
{
	char addr[INET6_ADDRSTRLEN];

	if (ep->addr.sa_family == AF_INET) {
		inet_ntop(AF_INET, &ep->addr4.sin_addr, addr, sizeof(addr));
		snprintf(buf, ENDPOINT_STRLEN, "%s:%u", addr,
			 ntohs(ep->addr4.sin_port));
	} else if (ep->addr.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &ep->addr6.sin6_addr, addr, sizeof(addr));
		snprintf(buf, ENDPOINT_STRLEN, "[%s]:%u", addr,
			 ntohs(ep->addr6.sin6_port));
	} else {
		snprintf(buf, ENDPOINT_STRLEN, "(none)");
	}
}

char *put_decimal(char *p, uint64_t v)
{
	char digits[20];
	int n = 0;

	do
		digits[n++] = '0' + v % 10;
	while (v /= 10);
	while (n)
		*p++ = digits[--n];
	return p;
}

/*
 * Without printf, which glibc's inet_ntop also uses for IPv4: show --json
 * of 10^5 peers spent a tenth of its time formatting their /32s.
 */
void allowedip_to_string(char buf[ALLOWEDIP_STRLEN], const struct allowedip *ip)
{
	const uint8_t *b = (const uint8_t *)&ip->ip4;
	char *p = buf;
	int i;

	if (ip->family == AF_INET) {
		for (i = 0; i < 4; i++) {
			p = put_decimal(p, b[i]);
			*p++ = i < 3 ? '.' : '/';
		}
	} else {
		inet_ntop(AF_INET6, &ip->ip6, buf, INET6_ADDRSTRLEN);
		p = buf + strlen(buf);
		*p++ = '/';
	}
	p = put_decimal(p, ip->cidr);
	*p = '\0';
}
