/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsers for the values that appear both on the command line and (later)
 * in configuration files. Each one prints its own error, quoting the
 * offending text, and returns false.
 */
#ifndef FTVCTL_PARSE_H
#define FTVCTL_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "containers.h"

/* Digits alone (no sign, blank or base prefix) in @base, up to @max;
 * prints nothing.
 */
bool parse_ulong(unsigned long *out, const char *s, int base,
		 unsigned long max);

enum {
	PARSE_OFF = 1 << 0,	/* "off" stands for 0 */
	PARSE_HEX = 1 << 1,	/* 0x... */
};

/* A decimal number up to @max, or what @allow adds; if not, says that
 * @value is not @what ("a port number (0 to 65535)").
 */
bool parse_number(unsigned long *n, const char *value, unsigned long max,
		  int allow, const char *what);

bool parse_ifname(char name[IFNAMSIZ], const char *value);
bool parse_port(uint16_t *port, const char *value);
bool parse_fwmark(uint32_t *fwmark, const char *value);
/* "off", "auto" or "K:M" */
bool parse_fec(struct fec *fec, const char *value);
/* "on" or "off" */
bool parse_shape(bool *shape, const char *value);
bool parse_endpoint(union endpoint *ep, const char *value);
/* "HOST:PORT[,HOST:PORT...]", 1 to FTV_MAX_ENDPOINTS of them */
bool parse_endpoints(struct peer *peer, const char *value);
bool parse_allowedips(struct peer *peer, const char *value);
bool parse_public_key(uint8_t key[FTV_KEY_LEN], const char *value);
bool read_key_file(uint8_t key[FTV_KEY_LEN], const char *path);

#endif
