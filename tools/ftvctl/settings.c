// SPDX-License-Identifier: GPL-2.0
/*
 * Every setting that both the command line and a configuration file
 * take, with the parser they share: a value is spelled the same way in
 * both places, except for keys, which the command line reads from a file
 * (so that they stay out of the process list) and a file has in base64.
 */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "encoding.h"
#include "parse.h"
#include "settings.h"
#include "util.h"

/* A key from @value: a file to read, or base64 (quoted back never). */
static bool parse_key(uint8_t key[FTV_KEY_LEN], const char *value,
		      enum setting_from from, const char *name)
{
	if (from == SETTING_FROM_ARG)
		return read_key_file(key, value);
	if (!key_from_base64(key, value)) {
		print_error("%s is not a base64 key (%d characters)", name,
			    KEY_B64_LEN);
		return false;
	}
	return true;
}

static bool set_private_key(void *obj, const char *value,
			    enum setting_from from)
{
	struct device *dev = obj;

	dev->flags |= DEVICE_HAS_PRIVATE_KEY;
	return parse_key(dev->private_key, value, from, "PrivateKey");
}

static bool set_listen_port(void *obj, const char *value,
			    enum setting_from from)
{
	struct device *dev = obj;

	(void)from;
	dev->flags |= DEVICE_HAS_LISTEN_PORT;
	return parse_port(&dev->listen_port, value);
}

static bool set_fwmark(void *obj, const char *value, enum setting_from from)
{
	struct device *dev = obj;

	(void)from;
	dev->flags |= DEVICE_HAS_FWMARK;
	return parse_fwmark(&dev->fwmark, value);
}

static bool set_shape(void *obj, const char *value, enum setting_from from)
{
	struct device *dev = obj;

	(void)from;
	dev->flags |= DEVICE_HAS_SHAPE;
	return parse_shape(&dev->shape, value);
}

static bool set_public_key(void *obj, const char *value,
			   enum setting_from from)
{
	struct peer *peer = obj;

	(void)from;
	peer->flags |= PEER_HAS_PUBLIC_KEY;
	return parse_public_key(peer->public_key, value);
}

static bool set_preshared_key(void *obj, const char *value,
			      enum setting_from from)
{
	struct peer *peer = obj;

	peer->flags |= PEER_HAS_PRESHARED_KEY;
	return parse_key(peer->preshared_key, value, from, "PresharedKey");
}

static bool set_endpoint(void *obj, const char *value, enum setting_from from)
{
	(void)from;
	return parse_endpoints(obj, value);
}

static bool set_allowedips(void *obj, const char *value,
			   enum setting_from from)
{
	(void)from;
	return parse_allowedips(obj, value);
}

static bool set_fec(void *obj, const char *value, enum setting_from from)
{
	struct peer *peer = obj;

	(void)from;
	peer->flags |= PEER_HAS_FEC;
	return parse_fec(&peer->fec, value);
}

static void write_key(FILE *f, const char *name, const uint8_t *key)
{
	char b64[KEY_B64_LEN + 1];

	key_to_base64(b64, key);
	fprintf(f, "%s = %s\n", name, b64);
	sodium_memzero(b64, sizeof(b64));
}

static void write_private_key(FILE *f, const struct setting *s,
			      const void *obj)
{
	const struct device *dev = obj;

	if ((dev->flags & DEVICE_HAS_PRIVATE_KEY) &&
	    !sodium_is_zero(dev->private_key, FTV_KEY_LEN))
		write_key(f, s->key, dev->private_key);
}

static void write_listen_port(FILE *f, const struct setting *s,
			      const void *obj)
{
	const struct device *dev = obj;

	if (dev->listen_port)
		fprintf(f, "%s = %u\n", s->key, dev->listen_port);
}

static void write_fwmark(FILE *f, const struct setting *s, const void *obj)
{
	const struct device *dev = obj;

	if (dev->fwmark)
		fprintf(f, "%s = 0x%x\n", s->key, dev->fwmark);
}

/* Always, when known: setconf leaves an [Interface] key the file lacks
 * as it is, so "on" must be said to be restored.
 */
static void write_shape(FILE *f, const struct setting *s, const void *obj)
{
	const struct device *dev = obj;

	if (dev->flags & DEVICE_HAS_SHAPE)
		fprintf(f, "%s = %s\n", s->key, dev->shape ? "on" : "off");
}

static void write_public_key(FILE *f, const struct setting *s,
			     const void *obj)
{
	const struct peer *peer = obj;

	write_key(f, s->key, peer->public_key);
}

static void write_preshared_key(FILE *f, const struct setting *s,
				const void *obj)
{
	const struct peer *peer = obj;

	if ((peer->flags & PEER_HAS_PRESHARED_KEY) &&
	    !sodium_is_zero(peer->preshared_key, FTV_KEY_LEN))
		write_key(f, s->key, peer->preshared_key);
}

static void write_allowedips(FILE *f, const struct setting *s,
			     const void *obj)
{
	const struct peer *peer = obj;
	char buf[ALLOWEDIP_STRLEN];
	const struct allowedip *ip;

	for (ip = peer->first_allowedip; ip; ip = ip->next) {
		allowedip_to_string(buf, ip);
		if (ip == peer->first_allowedip)
			fprintf(f, "%s = %s", s->key, buf);
		else
			fprintf(f, ", %s", buf);
	}
	if (peer->first_allowedip)
		fprintf(f, "\n");
}

/* The configured list if known, else the endpoint (showconf of a peer
 * that only answers, or of a module that reports no list).
 */
static void write_endpoints(FILE *f, const struct setting *s,
			    const void *obj)
{
	const struct peer *peer = obj;
	char buf[ENDPOINT_STRLEN];
	unsigned int i;

	if ((peer->flags & PEER_HAS_ENDPOINTS) && peer->endpoints) {
		for (i = 0; i < peer->endpoints->count; i++) {
			endpoint_to_string(buf, &peer->endpoints->ep[i]);
			if (i)
				fprintf(f, ", %s", buf);
			else
				fprintf(f, "%s = %s", s->key, buf);
		}
		fprintf(f, "\n");
	} else if (peer->flags & PEER_HAS_ENDPOINT) {
		endpoint_to_string(buf, &peer->endpoint);
		fprintf(f, "%s = %s\n", s->key, buf);
	}
}

static void write_fec(FILE *f, const struct setting *s, const void *obj)
{
	const struct peer *peer = obj;
	char fec[FEC_STRLEN];

	if (!fec_equal(peer_fec(peer), FEC_DEFAULT)) {
		fec_to_string(fec, peer->fec);
		fprintf(f, "%s = %s\n", s->key, fec);
	}
}

/* A number's field in @peer, as a pointer of its size. */
static void *number_field(const struct setting_number *n,
			  const struct peer *peer)
{
	return (char *)peer + n->offset;
}

uint32_t setting_number_get(const struct setting_number *n,
			    const struct peer *peer)
{
	const void *field = number_field(n, peer);

	switch (n->size) {
	case 1:
		return *(const uint8_t *)field;
	case 2:
		return *(const uint16_t *)field;
	default:
		return *(const uint32_t *)field;
	}
}

void setting_number_set(const struct setting_number *n, struct peer *peer,
			uint32_t v)
{
	void *field = number_field(n, peer);

	switch (n->size) {
	case 1:
		*(uint8_t *)field = v;
		break;
	case 2:
		*(uint16_t *)field = v;
		break;
	default:
		*(uint32_t *)field = v;
	}
	peer->flags |= n->has;
}

uint32_t setting_number_value(const struct setting_number *n,
			      const struct peer *peer)
{
	return peer->flags & n->has ? setting_number_get(n, peer) : n->dflt;
}

void setting_number_format(const struct setting_number *n,
			   char buf[SETTING_STRLEN], uint32_t v)
{
	if (n->format)
		n->format(buf, v);
	else
		snprintf(buf, SETTING_STRLEN, "%u", v);
}

static bool set_number(void *obj, const struct setting_number *n,
		       const char *value)
{
	uint32_t v;

	if (!n->parse(&v, value))
		return false;
	setting_number_set(n, obj, v);
	return true;
}

/* Written when not the default, which a file leaves out. */
static void write_number(FILE *f, const struct setting *s, const void *obj)
{
	uint32_t v = setting_number_value(s->number, obj);
	char buf[SETTING_STRLEN];

	if (v == s->number->dflt)
		return;
	setting_number_format(s->number, buf, v);
	fprintf(f, "%s = %s\n", s->key, buf);
}

static void format_rotate(char buf[SETTING_STRLEN], uint32_t v)
{
	rotate_to_string(buf, v);
}

/* "auto" and "off" are words in JSON too; a budget is its bytes. */
static bool rotate_json_string(uint32_t v)
{
	return v == FTV_ROTATE_AUTO || v == FTV_ROTATE_OFF;
}

/* Where a number lives in struct peer, and its size (the attribute's). */
#define PEER_FIELD(f) \
	.offset = offsetof(struct peer, f), .size = sizeof(((struct peer *)0)->f)

/* show.c prints keepalive and flows itself (flows with its counts). */
static const struct setting_number numbers[] = {
	{ .attr = FTV_PEER_A_PERSISTENT_KEEPALIVE,
	  PEER_FIELD(persistent_keepalive),
	  .has = PEER_HAS_PERSISTENT_KEEPALIVE, .dflt = 0,
	  .parse = parse_keepalive },
	{ .attr = FTV_PEER_A_FLOWS, PEER_FIELD(flows), .has = PEER_HAS_FLOWS,
	  .dflt = FLOWS_DEFAULT, .parse = parse_flows },
	{ .attr = FTV_PEER_A_ROTATE, PEER_FIELD(rotate), .has = PEER_HAS_ROTATE,
	  .dflt = ROTATE_DEFAULT, .parse = parse_rotate,
	  .format = format_rotate, .show = "rotate",
	  .json_string = rotate_json_string },
};

#define NUMBER_COUNT (sizeof(numbers) / sizeof(numbers[0]))

const struct setting_number *setting_number(size_t i)
{
	return i < NUMBER_COUNT ? &numbers[i] : NULL;
}

#define ROW(w, k, o, p, wr) \
	{ .word = (w), .key = (k), .of = (o), .parse = (p), .write = (wr) }
#define NUMBER_ROW(w, k, i) \
	{ .word = (w), .key = (k), .of = SETTING_PEER, .write = write_number, \
	  .number = &numbers[i] }

static const struct setting settings[] = {
	ROW("private-key", "PrivateKey", SETTING_DEVICE, set_private_key,
	    write_private_key),
	ROW("listen-port", "ListenPort", SETTING_DEVICE, set_listen_port,
	    write_listen_port),
	ROW("fwmark", "FwMark", SETTING_DEVICE, set_fwmark, write_fwmark),
	ROW("shape", "Shape", SETTING_DEVICE, set_shape, write_shape),
	/* On the command line, the peer's key is where its name goes. */
	ROW(NULL, "PublicKey", SETTING_PEER, set_public_key, write_public_key),
	ROW("preshared-key", "PresharedKey", SETTING_PEER, set_preshared_key,
	    write_preshared_key),
	/* Several lines add up, as several entries on one line do. */
	{ .word = "allowed-ips", .key = "AllowedIPs", .of = SETTING_PEER,
	  .repeatable = true, .parse = set_allowedips,
	  .write = write_allowedips },
	ROW("endpoint", "Endpoint", SETTING_PEER, set_endpoint, write_endpoints),
	NUMBER_ROW("persistent-keepalive", "PersistentKeepalive", 0),
	ROW("fec", "FEC", SETTING_PEER, set_fec, write_fec),
	NUMBER_ROW("flows", "Flows", 1),
	NUMBER_ROW("rotate", "Rotate", 2),
};

#define SETTING_COUNT (sizeof(settings) / sizeof(settings[0]))

/* config.c marks the keys a section has given in a 32-bit mask. */
_Static_assert(SETTING_COUNT <= 32, "a setting's index is a bit of a mask");

const struct setting *setting_by_word(enum setting_of of, const char *word)
{
	size_t i;

	for (i = 0; i < SETTING_COUNT; i++)
		if (settings[i].of == of && settings[i].word &&
		    !strcmp(settings[i].word, word))
			return &settings[i];
	return NULL;
}

const struct setting *setting_by_key(const char *key)
{
	size_t i;

	for (i = 0; i < SETTING_COUNT; i++)
		if (!strcasecmp(settings[i].key, key))
			return &settings[i];
	return NULL;
}

size_t setting_index(const struct setting *s)
{
	return (size_t)(s - settings);
}

bool setting_parse(const struct setting *s, void *obj, const char *value,
		   enum setting_from from)
{
	if (s->number)
		return set_number(obj, s->number, value);
	return s->parse(obj, value, from);
}

void settings_write(FILE *f, enum setting_of of, const void *obj)
{
	size_t i;

	for (i = 0; i < SETTING_COUNT; i++)
		if (settings[i].of == of && settings[i].write)
			settings[i].write(f, &settings[i], obj);
}
