// SPDX-License-Identifier: GPL-2.0
/*
 * The file is read a line at a time: a '#' starts a comment, blank lines
 * are skipped, "[Name]" opens a section and everything else must be
 * "Key = Value". Section and key names are case-insensitive. The values
 * go through the same parsers as the command line's, so they are spelled
 * the same way in both places.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "config.h"
#include "encoding.h"
#include "parse.h"
#include "util.h"

enum section {
	SECTION_NONE,
	SECTION_INTERFACE,
	SECTION_PEER,
};

struct reader {
	const char *name;		/* of the file, for messages */
	struct device *dev;
	struct peer *peer;		/* the [Peer] being read, not yet added */
	enum section section;
	unsigned int section_line;	/* where the current section started */
	bool seen_interface;
	uint32_t seen_keys;		/* bit i: keys[i] given in this section */
	struct peer_index peers;	/* of dev, to find a second [Peer] */
};

struct key {
	const char *name;
	enum section section;
	bool (*parse)(struct reader *r, const char *value);
	bool repeatable;
};

static bool parse_private_key(struct reader *r, const char *value)
{
	/* The value is a secret: it is not quoted back. */
	if (!key_from_base64(r->dev->private_key, value)) {
		print_error("PrivateKey is not a base64 key (%d characters)",
			    KEY_B64_LEN);
		return false;
	}
	r->dev->flags |= DEVICE_HAS_PRIVATE_KEY;
	return true;
}

static bool parse_listen_port(struct reader *r, const char *value)
{
	r->dev->flags |= DEVICE_HAS_LISTEN_PORT;
	return parse_port(&r->dev->listen_port, value);
}

static bool parse_mark(struct reader *r, const char *value)
{
	r->dev->flags |= DEVICE_HAS_FWMARK;
	return parse_fwmark(&r->dev->fwmark, value);
}

static bool parse_interface_shape(struct reader *r, const char *value)
{
	r->dev->flags |= DEVICE_HAS_SHAPE;
	return parse_shape(&r->dev->shape, value);
}

static bool parse_peer_key(struct reader *r, const char *value)
{
	r->peer->flags |= PEER_HAS_PUBLIC_KEY;
	return parse_public_key(r->peer->public_key, value);
}

static bool parse_psk(struct reader *r, const char *value)
{
	if (!key_from_base64(r->peer->preshared_key, value)) {
		print_error("PresharedKey is not a base64 key (%d characters)",
			    KEY_B64_LEN);
		return false;
	}
	r->peer->flags |= PEER_HAS_PRESHARED_KEY;
	return true;
}

static bool parse_peer_endpoint(struct reader *r, const char *value)
{
	return parse_endpoints(r->peer, value);
}

static bool parse_peer_allowedips(struct reader *r, const char *value)
{
	return parse_allowedips(r->peer, value);
}

static bool parse_peer_keepalive(struct reader *r, const char *value)
{
	r->peer->flags |= PEER_HAS_PERSISTENT_KEEPALIVE;
	return parse_keepalive(&r->peer->persistent_keepalive, value);
}

static bool parse_peer_fec(struct reader *r, const char *value)
{
	r->peer->flags |= PEER_HAS_FEC;
	return parse_fec(&r->peer->fec, value);
}

static bool parse_peer_flows(struct reader *r, const char *value)
{
	r->peer->flags |= PEER_HAS_FLOWS;
	return parse_flows(&r->peer->flows, value);
}

static bool parse_peer_rotate(struct reader *r, const char *value)
{
	r->peer->flags |= PEER_HAS_ROTATE;
	return parse_rotate(&r->peer->rotate, value);
}

static const struct key keys[] = {
	{ "PrivateKey", SECTION_INTERFACE, parse_private_key, false },
	{ "ListenPort", SECTION_INTERFACE, parse_listen_port, false },
	{ "FwMark", SECTION_INTERFACE, parse_mark, false },
	{ "Shape", SECTION_INTERFACE, parse_interface_shape, false },
	{ "PublicKey", SECTION_PEER, parse_peer_key, false },
	{ "PresharedKey", SECTION_PEER, parse_psk, false },
	{ "Endpoint", SECTION_PEER, parse_peer_endpoint, false },
	/* Several lines add up, as several entries on one line do. */
	{ "AllowedIPs", SECTION_PEER, parse_peer_allowedips, true },
	{ "PersistentKeepalive", SECTION_PEER, parse_peer_keepalive, false },
	{ "FEC", SECTION_PEER, parse_peer_fec, false },
	{ "Flows", SECTION_PEER, parse_peer_flows, false },
	{ "Rotate", SECTION_PEER, parse_peer_rotate, false },
};

#define KEY_COUNT (sizeof(keys) / sizeof(keys[0]))

/* [Interface] keys that ftv-quick(8) acts on and strips before ftvctl. */
static const char *const quick_keys[] = {
	"Address", "DNS", "MTU", "Table", "PreUp", "PostUp", "PreDown",
	"PostDown", "SaveConfig",
};

static const char *const section_names[] = {
	[SECTION_INTERFACE] = "[Interface]",
	[SECTION_PEER] = "[Peer]",
};

static bool is_quick_key(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(quick_keys) / sizeof(quick_keys[0]); i++)
		if (!strcasecmp(name, quick_keys[i]))
			return true;
	return false;
}

/* The [Peer] that ends here joins the device, if it is complete. */
static bool end_section(struct reader *r)
{
	char key[KEY_B64_LEN + 1];

	if (r->section != SECTION_PEER)
		return true;
	error_location_set(r->name, r->section_line);
	if (!(r->peer->flags & PEER_HAS_PUBLIC_KEY)) {
		print_error("[Peer] without a PublicKey");
		return false;
	}
	if (peer_index_find(&r->peers, r->peer->public_key)) {
		key_to_base64(key, r->peer->public_key);
		print_error("a second [Peer] with PublicKey '%s'", key);
		return false;
	}
	if (peer_index_add(&r->peers, r->peer)) {
		print_error("%s", strerror(ENOMEM));
		return false;
	}
	device_add_peer(r->dev, r->peer);
	r->peer = NULL;
	return true;
}

static bool begin_section(struct reader *r, char *header, unsigned int line)
{
	size_t len = strlen(header);
	char *name;

	if (header[len - 1] != ']') {
		print_error("malformed section header '%s'", header);
		return false;
	}
	header[len - 1] = '\0';
	name = trim(header + 1);
	if (!end_section(r))
		return false;
	error_location_set(r->name, line);
	r->seen_keys = 0;
	r->section_line = line;
	if (!strcasecmp(name, "Interface")) {
		if (r->seen_interface) {
			print_error("a second [Interface] section");
			return false;
		}
		r->seen_interface = true;
		r->section = SECTION_INTERFACE;
		return true;
	}
	if (!strcasecmp(name, "Peer")) {
		r->peer = calloc(1, sizeof(*r->peer));
		if (!r->peer) {
			print_error("%s", strerror(ENOMEM));
			return false;
		}
		r->section = SECTION_PEER;
		return true;
	}
	print_error("unknown section '[%s]'", name);
	return false;
}

static bool read_key(struct reader *r, const char *name, const char *value)
{
	size_t i;

	for (i = 0; i < KEY_COUNT; i++)
		if (!strcasecmp(name, keys[i].name))
			break;
	if (i == KEY_COUNT) {
		if (r->section != SECTION_PEER && is_quick_key(name))
			print_error("'%s' is a key of ftv-quick(8), not of ftvctl (ftv-quick strip removes such keys)",
				    name);
		else if (r->section == SECTION_NONE)
			print_error("unknown key '%s'", name);
		else
			print_error("unknown key '%s' in %s", name,
				    section_names[r->section]);
		return false;
	}
	if (r->section == SECTION_NONE) {
		print_error("'%s' before any section ([Interface] or [Peer])",
			    name);
		return false;
	}
	if (keys[i].section != r->section) {
		print_error("'%s' belongs in %s, not in %s", keys[i].name,
			    section_names[keys[i].section],
			    section_names[r->section]);
		return false;
	}
	if (!keys[i].repeatable && (r->seen_keys & (1U << i))) {
		print_error("'%s' given twice in one section", keys[i].name);
		return false;
	}
	r->seen_keys |= 1U << i;
	return keys[i].parse(r, value);
}

static bool read_line(struct reader *r, char *line, size_t len,
		      unsigned int lineno)
{
	char *comment, *eq;

	if (strlen(line) != len) {
		print_error("a NUL byte in the line");
		return false;
	}
	/* A byte order mark, as some editors write. */
	if (lineno == 1 && !strncmp(line, "\xef\xbb\xbf", 3))
		line += 3;
	comment = strchr(line, '#');
	if (comment)
		*comment = '\0';
	line = trim(line);
	if (!*line)
		return true;
	if (*line == '[')
		return begin_section(r, line, lineno);
	eq = strchr(line, '=');
	if (!eq) {
		print_error("'%s' is neither a [Section] nor 'Key = Value'",
			    line);
		return false;
	}
	*eq = '\0';
	if (!*trim(line)) {
		print_error("a value without a key");
		return false;
	}
	return read_key(r, trim(line), trim(eq + 1));
}

struct device *config_read(FILE *f, const char *name)
{
	struct reader r = { .name = name };
	unsigned int lineno = 0;
	char *line = NULL;
	size_t size = 0;
	bool ok = true;
	ssize_t len;

	r.dev = calloc(1, sizeof(*r.dev));
	if (!r.dev) {
		print_error("%s", strerror(ENOMEM));
		return NULL;
	}
	peer_index_init(&r.peers);
	do {
		errno = 0;
		len = getline(&line, &size, f);
		if (len < 0)
			break;
		error_location_set(name, ++lineno);
		ok = read_line(&r, line, len, lineno);
	} while (ok);
	if (len < 0) {
		error_location_set(NULL, 0);
		ok = !ferror(f);
		if (!ok)
			print_error("%s: %s", name,
				    strerror(errno ? errno : EIO));
	}
	error_location_set(name, lineno);
	if (ok)
		ok = end_section(&r);
	error_location_set(NULL, 0);
	peer_index_free(&r.peers);
	if (line) {
		/* It may have held a key. */
		sodium_memzero(line, size);
		free(line);
	}
	if (!ok) {
		peer_free(r.peer);
		devices_free(r.dev);
		return NULL;
	}
	return r.dev;
}

struct device *config_read_file(const char *path)
{
	struct device *dev;
	FILE *f;

	if (!strcmp(path, "-"))
		return config_read(stdin, "stdin");
	f = fopen(path, "r");
	if (!f) {
		print_error("%s: %s", path, strerror(errno));
		return NULL;
	}
	dev = config_read(f, path);
	fclose(f);
	return dev;
}

static void write_key(FILE *f, const char *name, const uint8_t *key)
{
	char b64[KEY_B64_LEN + 1];

	key_to_base64(b64, key);
	fprintf(f, "%s = %s\n", name, b64);
	sodium_memzero(b64, sizeof(b64));
}

/* The configured list if known, else the endpoint (showconf of a peer
 * that only answers, or of a module that reports no list).
 */
static void write_endpoints(FILE *f, const struct peer *peer)
{
	char buf[ENDPOINT_STRLEN];
	unsigned int i;

	if ((peer->flags & PEER_HAS_ENDPOINTS) && peer->endpoints) {
		for (i = 0; i < peer->endpoints->count; i++) {
			endpoint_to_string(buf, &peer->endpoints->ep[i]);
			fprintf(f, "%s%s", i ? ", " : "Endpoint = ", buf);
		}
		fprintf(f, "\n");
	} else if (peer->flags & PEER_HAS_ENDPOINT) {
		endpoint_to_string(buf, &peer->endpoint);
		fprintf(f, "Endpoint = %s\n", buf);
	}
}

static void write_peer(FILE *f, const struct peer *peer)
{
	char buf[ALLOWEDIP_STRLEN > ENDPOINT_STRLEN ? ALLOWEDIP_STRLEN
						    : ENDPOINT_STRLEN];
	const struct allowedip *ip;
	char rotate[ROTATE_STRLEN];
	char fec[FEC_STRLEN];

	fprintf(f, "\n[Peer]\n");
	write_key(f, "PublicKey", peer->public_key);
	if ((peer->flags & PEER_HAS_PRESHARED_KEY) &&
	    !sodium_is_zero(peer->preshared_key, FTV_KEY_LEN))
		write_key(f, "PresharedKey", peer->preshared_key);
	for (ip = peer->first_allowedip; ip; ip = ip->next) {
		allowedip_to_string(buf, ip);
		fprintf(f, "%s%s", ip == peer->first_allowedip ?
			"AllowedIPs = " : ", ", buf);
	}
	if (peer->first_allowedip)
		fprintf(f, "\n");
	write_endpoints(f, peer);
	if (peer->persistent_keepalive)
		fprintf(f, "PersistentKeepalive = %u\n",
			peer->persistent_keepalive);
	/* Left out, it is the default: setconf and syncconf read it so. */
	if (!fec_equal(peer_fec(peer), FEC_DEFAULT)) {
		fec_to_string(fec, peer->fec);
		fprintf(f, "FEC = %s\n", fec);
	}
	if (peer_flows(peer) != FLOWS_DEFAULT)
		fprintf(f, "Flows = %u\n", peer->flows);
	if (peer_rotate(peer) != ROTATE_DEFAULT) {
		rotate_to_string(rotate, peer->rotate);
		fprintf(f, "Rotate = %s\n", rotate);
	}
}

void config_write(FILE *f, const struct device *dev)
{
	const struct peer *peer;

	fprintf(f, "[Interface]\n");
	if ((dev->flags & DEVICE_HAS_PRIVATE_KEY) &&
	    !sodium_is_zero(dev->private_key, FTV_KEY_LEN))
		write_key(f, "PrivateKey", dev->private_key);
	if (dev->listen_port)
		fprintf(f, "ListenPort = %u\n", dev->listen_port);
	if (dev->fwmark)
		fprintf(f, "FwMark = 0x%x\n", dev->fwmark);
	/*
	 * Always, when known: setconf leaves an [Interface] key the file
	 * lacks as it is, so "on" must be said to be restored.
	 */
	if (dev->flags & DEVICE_HAS_SHAPE)
		fprintf(f, "Shape = %s\n", dev->shape ? "on" : "off");
	for (peer = dev->first_peer; peer; peer = peer->next)
		write_peer(f, peer);
}
