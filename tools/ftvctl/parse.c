// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "encoding.h"
#include "parse.h"
#include "util.h"

/* A key file holds one key and maybe a newline; anything longer is wrong. */
#define KEY_FILE_MAX 256

#define DEFAULT_RESOLUTION_RETRIES 15

/* The fuzzer (fuzz/config.c) must never wait on a resolver. */
#ifdef FTV_FUZZING
#define RESOLVE_ONLY_NUMERIC AI_NUMERICHOST
#else
#define RESOLVE_ONLY_NUMERIC 0
#endif

/*
 * strtoul() alone would also take signs, leading blanks and, with base 0,
 * octal; none of those belong in a port or a mark.
 */
bool parse_ulong(unsigned long *out, const char *s, int base,
		 unsigned long max)
{
	char *end;

	if (base == 16 ? !isxdigit((unsigned char)s[0])
		       : !isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	*out = strtoul(s, &end, base);
	return !errno && !*end && *out <= max;
}

bool parse_ifname(char name[IFNAMSIZ], const char *value)
{
	size_t len = strlen(value);

	if (!len || len >= IFNAMSIZ) {
		print_error("'%s' is not an interface name (1 to %d characters)",
			    value, IFNAMSIZ - 1);
		return false;
	}
	memcpy(name, value, len + 1);
	return true;
}

bool parse_number(unsigned long *n, const char *value, unsigned long max,
		  int allow, const char *what)
{
	bool ok;

	*n = 0;
	if ((allow & PARSE_OFF) && !strcmp(value, "off"))
		return true;
	if ((allow & PARSE_HEX) && value[0] == '0' &&
	    (value[1] == 'x' || value[1] == 'X'))
		ok = parse_ulong(n, value + 2, 16, max);
	else
		ok = parse_ulong(n, value, 10, max);
	if (!ok)
		print_error("'%s' is not %s", value, what);
	return ok;
}

bool parse_port(uint16_t *port, const char *value)
{
	unsigned long n;

	if (!parse_number(&n, value, UINT16_MAX, 0,
			   "a port number (0 to 65535)"))
		return false;
	*port = n;
	return true;
}

bool parse_fwmark(uint32_t *fwmark, const char *value)
{
	unsigned long n;

	if (!parse_number(&n, value, UINT32_MAX, PARSE_OFF | PARSE_HEX,
			   "a firewall mark (a 32-bit number, 0x for hex, or \"off\")"))
		return false;
	*fwmark = n;
	return true;
}

/* Whether @value is "K:M", two decimal numbers. */
static bool split_fec_ratio(unsigned long *k, unsigned long *m,
			    const char *value)
{
	const char *colon = strchr(value, ':');
	char buf[8];
	size_t len;

	len = colon ? (size_t)(colon - value) : 0;
	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, value, len);
	buf[len] = '\0';
	return parse_ulong(k, buf, 10, ULONG_MAX) &&
	       parse_ulong(m, colon + 1, 10, ULONG_MAX);
}

bool parse_fec(struct fec *fec, const char *value)
{
	unsigned long k, m;

	memset(fec, 0, sizeof(*fec));
	if (!strcmp(value, "off")) {
		fec->mode = FTV_FEC_OFF;
		return true;
	}
	if (!strcmp(value, "auto")) {
		fec->mode = FTV_FEC_AUTO;
		return true;
	}
	if (!split_fec_ratio(&k, &m, value)) {
		print_error("'%s' is not a FEC setting (off, auto, or K:M for K data and M repair segments per group)",
			    value);
		return false;
	}
	if (!k || k > FTV_FEC_MAX_DATA) {
		print_error("FEC '%s': K, the data segments per group, must be 1 to %d",
			    value, FTV_FEC_MAX_DATA);
		return false;
	}
	if (!m || m > FTV_FEC_MAX_REPAIR) {
		print_error("FEC '%s': M, the repair segments per group, must be 1 to %d",
			    value, FTV_FEC_MAX_REPAIR);
		return false;
	}
	fec->mode = FTV_FEC_FIXED;
	fec->data = k;
	fec->repair = m;
	return true;
}

bool parse_shape(bool *shape, const char *value)
{
	if (!strcmp(value, "on") || !strcmp(value, "off")) {
		*shape = !strcmp(value, "on");
		return true;
	}
	print_error("'%s' is not a shape setting (on or off)", value);
	return false;
}

/*
 * Splits "host:port" or "[v6-address]:port". A bare IPv6 address would be
 * ambiguous (which colon starts the port?), so it must be bracketed.
 */
static bool split_endpoint(char *host, size_t size, const char **port,
			   const char *value)
{
	const char *start = value, *end, *colon;

	if (value[0] == '[') {
		start = value + 1;
		end = strchr(start, ']');
		if (!end || end[1] != ':')
			return false;
		colon = end + 1;
	} else {
		colon = strrchr(value, ':');
		if (!colon || memchr(value, ':', colon - value))
			return false;
		end = colon;
	}
	if (end == start || (size_t)(end - start) >= size)
		return false;
	memcpy(host, start, end - start);
	host[end - start] = '\0';
	*port = colon + 1;
	return true;
}

static int resolution_retries(void)
{
	const char *env = getenv("FTV_ENDPOINT_RESOLUTION_RETRIES");
	unsigned long n;

	if (!env || !parse_ulong(&n, env, 10, INT_MAX))
		return DEFAULT_RESOLUTION_RETRIES;
	return n;
}

/*
 * At boot the resolver may not be reachable yet: a temporary failure is
 * worth waiting for, an unknown name is not.
 */
static int resolve(struct addrinfo **res, const char *host, const char *port,
		   bool numeric_v6)
{
	struct addrinfo hints = {
		.ai_family = numeric_v6 ? AF_INET6 : AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV | RESOLVE_ONLY_NUMERIC |
			    (numeric_v6 ? AI_NUMERICHOST : 0),
	};
	int retries = resolution_retries();
	int ret;

	while ((ret = getaddrinfo(host, port, &hints, res)) == EAI_AGAIN &&
	       retries-- > 0)
		sleep(1);
	return ret;
}

static bool endpoint_is_usable(const union endpoint *ep, const char *value)
{
	const char *problem = NULL;

	if (ep->addr.sa_family != AF_INET && ep->addr.sa_family != AF_INET6)
		problem = "not an IPv4 or IPv6 address";
	/* The netlink interface has no room for a scope: refuse, not drop. */
	else if (ep->addr.sa_family == AF_INET6 && ep->addr6.sin6_scope_id)
		problem = "scoped IPv6 addresses are not supported";
	if (problem)
		print_error("endpoint '%s': %s", value, problem);
	return !problem;
}

bool parse_endpoint(union endpoint *ep, const char *value)
{
	struct addrinfo *res;
	unsigned long n;
	char host[256];
	const char *port;
	int ret;

	if (!split_endpoint(host, sizeof(host), &port, value) ||
	    !parse_ulong(&n, port, 10, UINT16_MAX) || !n) {
		print_error("'%s' is not an endpoint (HOST:PORT, [IPv6]:PORT, port 1 to 65535)",
			    value);
		return false;
	}
	ret = resolve(&res, host, port, value[0] == '[');
	if (ret) {
		print_error("unable to resolve endpoint '%s': %s", value,
			    gai_strerror(ret));
		return false;
	}
	memset(ep, 0, sizeof(*ep));
	if (res->ai_addrlen <= sizeof(*ep))
		memcpy(ep, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return endpoint_is_usable(ep, value);
}

/*
 * "HOST:PORT[,HOST:PORT...]", at most FTV_MAX_ENDPOINTS, blanks around the
 * commas allowed. The first goes into @peer->endpoint, as a lone endpoint
 * always has; a list of more also into @peer->endpoints.
 */
bool parse_endpoints(struct peer *peer, const char *value)
{
	char *copy = strdup(value), *rest, *token;
	struct endpoint_list *list = calloc(1, sizeof(*list));
	bool ok = copy && list;

	if (!ok)
		print_error("%s", strerror(ENOMEM));
	rest = copy;
	while (ok && (token = strsep(&rest, ","))) {
		token = trim(token);
		if (!*token) {
			print_error("endpoints '%s': empty entry", value);
			ok = false;
		} else if (list->count == FTV_MAX_ENDPOINTS) {
			print_error("endpoints '%s': more than %d", value,
				    FTV_MAX_ENDPOINTS);
			ok = false;
		} else {
			ok = parse_endpoint(&list->ep[list->count++], token);
		}
	}
	free(copy);
	free(peer->endpoints);
	peer->endpoints = NULL;
	peer->flags &= ~PEER_HAS_ENDPOINTS;
	if (ok) {
		peer->endpoint = list->ep[0];
		peer->flags |= PEER_HAS_ENDPOINT;
		if (list->count > 1) {
			peer->endpoints = list;
			peer->flags |= PEER_HAS_ENDPOINTS;
			list = NULL;
		}
	}
	free(list);
	return ok;
}

/* Returns NULL on success, or what is wrong with @token. */
static const char *prefix_from_string(struct allowedip *ip, const char *token)
{
	const char *slash = strchr(token, '/');
	size_t len = slash ? (size_t)(slash - token) : strlen(token);
	char addr[INET6_ADDRSTRLEN];
	unsigned long cidr, max;

	if (len >= sizeof(addr))
		return "not an IPv4 or IPv6 address";
	memcpy(addr, token, len);
	addr[len] = '\0';
	if (inet_pton(AF_INET, addr, &ip->ip4) == 1) {
		ip->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, &ip->ip6) == 1) {
		ip->family = AF_INET6;
		max = 128;
	} else {
		return "not an IPv4 or IPv6 address";
	}
	cidr = max;
	if (slash && !parse_ulong(&cidr, slash + 1, 10, max))
		return max == 32 ? "the prefix length must be 0 to 32"
				 : "the prefix length must be 0 to 128";
	ip->cidr = cidr;
	return NULL;
}

static bool add_allowedip(struct peer *peer, const char *token)
{
	struct allowedip *ip = calloc(1, sizeof(*ip));
	const char *problem;

	if (!ip) {
		print_error("%s", strerror(ENOMEM));
		return false;
	}
	problem = prefix_from_string(ip, token);
	if (problem) {
		print_error("allowed IP '%s': %s", token, problem);
		free(ip);
		return false;
	}
	peer_add_allowedip(peer, ip);
	return true;
}

/* An empty (or blank) list is valid: with replace it clears the peer's. */
bool parse_allowedips(struct peer *peer, const char *value)
{
	char *copy = strdup(value), *rest, *token;
	bool ok = true;

	if (!copy) {
		print_error("%s", strerror(ENOMEM));
		return false;
	}
	rest = trim(copy);
	if (!*rest)
		rest = NULL;	/* nothing to split; strsep() then stops at once */
	while (ok && (token = strsep(&rest, ","))) {
		token = trim(token);
		if (!*token) {
			print_error("allowed IPs '%s': empty entry", value);
			ok = false;
		} else {
			ok = add_allowedip(peer, token);
		}
	}
	free(copy);
	return ok;
}

bool parse_public_key(uint8_t key[FTV_KEY_LEN], const char *value)
{
	if (key_from_base64(key, value))
		return true;
	print_error("'%s' is not a base64 public key (%d characters)", value,
		    KEY_B64_LEN);
	return false;
}

/* Secrets come from files (or stdin), never from argv, where ps shows them. */
bool read_key_file(uint8_t key[FTV_KEY_LEN], const char *path)
{
	bool from_stdin = !strcmp(path, "-") || !strcmp(path, "/dev/stdin");
	const char *name = from_stdin ? "stdin" : path;
	FILE *f = from_stdin ? stdin : fopen(path, "r");
	char buf[KEY_FILE_MAX];
	bool ok = false;
	size_t len;

	if (!f) {
		print_error("%s: %s", path, strerror(errno));
		return false;
	}
	len = fread(buf, 1, sizeof(buf) - 1, f);
	if (ferror(f)) {
		print_error("%s: read error", name);
		goto out;
	}
	buf[len] = '\0';
	ok = len < sizeof(buf) - 1 && key_from_base64(key, trim(buf));
	if (!ok)
		print_error("%s: not a base64 key (%d characters)", name,
			    KEY_B64_LEN);
out:
	sodium_memzero(buf, sizeof(buf));
	if (!from_stdin)
		fclose(f);
	return ok;
}
