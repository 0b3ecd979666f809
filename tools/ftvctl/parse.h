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

bool parse_ifname(char name[IFNAMSIZ], const char *value);
bool parse_port(uint16_t *port, const char *value);
bool parse_fwmark(uint32_t *fwmark, const char *value);
bool parse_keepalive(uint32_t *seconds, const char *value);
/* "off", "auto" or "K:M" */
bool parse_fec(struct fec *fec, const char *value);
bool parse_flows(uint32_t *flows, const char *value);
/* "off", "auto" or bytes, with k, m or g for KiB, MiB or GiB */
bool parse_rotate(uint32_t *rotate, const char *value);
/* "on" or "off" */
bool parse_shape(bool *shape, const char *value);
bool parse_endpoint(union endpoint *ep, const char *value);
/* "HOST:PORT[,HOST:PORT...]", 1 to FTV_MAX_ENDPOINTS of them */
bool parse_endpoints(struct peer *peer, const char *value);
bool parse_allowedips(struct peer *peer, const char *value);
bool parse_public_key(uint8_t key[FTV_KEY_LEN], const char *value);
bool read_key_file(uint8_t key[FTV_KEY_LEN], const char *path);

#endif
