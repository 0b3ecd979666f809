// SPDX-License-Identifier: GPL-2.0
/*
 * Every setting that both the command line and a configuration file
 * take, with the parser they share: a value is spelled the same way in
 * both places, except for keys, which the command line reads from a file
 * (so that they stay out of the process list) and a file has in base64.
 */
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

static bool set_keepalive(void *obj, const char *value,
			  enum setting_from from)
{
	struct peer *peer = obj;

	(void)from;
	peer->flags |= PEER_HAS_PERSISTENT_KEEPALIVE;
	return parse_keepalive(&peer->persistent_keepalive, value);
}

static bool set_fec(void *obj, const char *value, enum setting_from from)
{
	struct peer *peer = obj;

	(void)from;
	peer->flags |= PEER_HAS_FEC;
	return parse_fec(&peer->fec, value);
}

static bool set_flows(void *obj, const char *value, enum setting_from from)
{
	struct peer *peer = obj;

	(void)from;
	peer->flags |= PEER_HAS_FLOWS;
	return parse_flows(&peer->flows, value);
}

static bool set_rotate(void *obj, const char *value, enum setting_from from)
{
	struct peer *peer = obj;

	(void)from;
	peer->flags |= PEER_HAS_ROTATE;
	return parse_rotate(&peer->rotate, value);
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

static void write_keepalive(FILE *f, const struct setting *s,
			    const void *obj)
{
	const struct peer *peer = obj;

	if (peer->persistent_keepalive)
		fprintf(f, "%s = %u\n", s->key, peer->persistent_keepalive);
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

static void write_flows(FILE *f, const struct setting *s, const void *obj)
{
	const struct peer *peer = obj;

	if (peer_flows(peer) != FLOWS_DEFAULT)
		fprintf(f, "%s = %u\n", s->key, peer->flows);
}

static void write_rotate(FILE *f, const struct setting *s, const void *obj)
{
	const struct peer *peer = obj;
	char rotate[ROTATE_STRLEN];

	if (peer_rotate(peer) != ROTATE_DEFAULT) {
		rotate_to_string(rotate, peer->rotate);
		fprintf(f, "%s = %s\n", s->key, rotate);
	}
}

static const struct setting settings[SETTING_COUNT] = {
	{ "private-key", "PrivateKey", SETTING_DEVICE, false,
	  set_private_key, write_private_key },
	{ "listen-port", "ListenPort", SETTING_DEVICE, false,
	  set_listen_port, write_listen_port },
	{ "fwmark", "FwMark", SETTING_DEVICE, false, set_fwmark,
	  write_fwmark },
	{ "shape", "Shape", SETTING_DEVICE, false, set_shape, write_shape },
	/* On the command line, the peer's key is where its name goes. */
	{ NULL, "PublicKey", SETTING_PEER, false, set_public_key,
	  write_public_key },
	{ "preshared-key", "PresharedKey", SETTING_PEER, false,
	  set_preshared_key, write_preshared_key },
	/* Several lines add up, as several entries on one line do. */
	{ "allowed-ips", "AllowedIPs", SETTING_PEER, true, set_allowedips,
	  write_allowedips },
	{ "endpoint", "Endpoint", SETTING_PEER, false, set_endpoint,
	  write_endpoints },
	{ "persistent-keepalive", "PersistentKeepalive", SETTING_PEER, false,
	  set_keepalive, write_keepalive },
	{ "fec", "FEC", SETTING_PEER, false, set_fec, write_fec },
	{ "flows", "Flows", SETTING_PEER, false, set_flows, write_flows },
	{ "rotate", "Rotate", SETTING_PEER, false, set_rotate, write_rotate },
};

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

void settings_write(FILE *f, enum setting_of of, const void *obj)
{
	size_t i;

	for (i = 0; i < SETTING_COUNT; i++)
		if (settings[i].of == of && settings[i].write)
			settings[i].write(f, &settings[i], obj);
}
