// SPDX-License-Identifier: GPL-2.0
/*
 * Every setting that both the command line and a configuration file
 * take, with the parser they share: a value is spelled the same way in
 * both places, except for keys, which the command line reads from a file
 * (so that they stay out of the process list) and a file has in base64.
 */
#include <ctype.h>
#include <limits.h>
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

/* The parsers and formatters of the numbers' rows. */

static bool parse_keepalive(uint32_t *seconds, const char *value)
{
	unsigned long n;

	if (!parse_number(&n, value, UINT16_MAX, PARSE_OFF,
			   "a keepalive interval (0 to 65535 seconds, or \"off\")"))
		return false;
	*seconds = n;
	return true;
}

static bool parse_flows(uint32_t *flows, const char *value)
{
	unsigned long n;

	if (!parse_ulong(&n, value, 10, FTV_MAX_FLOWS) || !n) {
		print_error("'%s' is not a number of flows (1 to %d)", value,
			    FTV_MAX_FLOWS);
		return false;
	}
	*flows = n;
	return true;
}

/*
 * "off", "auto", or a byte budget: decimal digits and maybe k, m or g (or
 * K, M, G), which multiply by 1024, 1024^2, 1024^3.
 */
static bool parse_rotate(uint32_t *rotate, const char *value)
{
	static const char suffixes[] = "kmg";
	size_t len = strlen(value);
	unsigned int shift = 0;
	const char *suffix;
	unsigned long n;
	char buf[24];

	if (!strcmp(value, "off")) {
		*rotate = FTV_ROTATE_OFF;
		return true;
	}
	if (!strcmp(value, "auto")) {
		*rotate = FTV_ROTATE_AUTO;
		return true;
	}
	suffix = len ? strchr(suffixes, tolower((unsigned char)value[len - 1]))
		     : NULL;
	if (suffix && *suffix) {
		shift = 10 * (suffix - suffixes + 1);
		len--;
	}
	if (!len || len >= sizeof(buf))
		goto bad;
	memcpy(buf, value, len);
	buf[len] = '\0';
	if (!parse_ulong(&n, buf, 10, ULONG_MAX))
		goto bad;
	if (n > FTV_ROTATE_MAX >> shift || n << shift < FTV_ROTATE_MIN) {
		print_error("rotate '%s': a budget must be %d bytes (4k) to %u (1g)",
			    value, FTV_ROTATE_MIN, FTV_ROTATE_MAX);
		return false;
	}
	*rotate = n << shift;
	return true;
bad:
	print_error("'%s' is not a rotate setting (off, auto, or a budget in bytes, with k, m or g for KiB, MiB or GiB)",
		    value);
	return false;
}


/* "off", "auto", or the bytes with the largest k, m or g that divides
 * them
 */
static void format_rotate(char buf[SETTING_STRLEN], uint32_t rotate)
{
	static const char suffixes[] = "kmg";
	int i = 0;

	if (rotate == FTV_ROTATE_OFF) {
		strcpy(buf, "off");
		return;
	}
	if (rotate == FTV_ROTATE_AUTO) {
		strcpy(buf, "auto");
		return;
	}
	while (rotate >= 1024 && !(rotate % 1024) && suffixes[i]) {
		rotate /= 1024;
		i++;
	}
	if (i)
		snprintf(buf, SETTING_STRLEN, "%u%c", rotate, suffixes[i - 1]);
	else
		snprintf(buf, SETTING_STRLEN, "%u", rotate);
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

const struct setting_number *setting_number_of(uint16_t attr)
{
	size_t i;

	for (i = 0; i < NUMBER_COUNT; i++)
		if (numbers[i].attr == attr)
			return &numbers[i];
	return NULL;
}

uint32_t peer_number(const struct peer *peer, uint16_t attr)
{
	return setting_number_value(setting_number_of(attr), peer);
}

#define ROW(w, k, o, p, wr, syn, val) \
	{ .word = (w), .key = (k), .of = (o), .parse = (p), .write = (wr), \
	  .syntax = (syn), .values = (val) }
#define NUMBER_ROW(w, k, i, syn, val) \
	{ .word = (w), .key = (k), .of = SETTING_PEER, .write = write_number, \
	  .number = &numbers[i], .syntax = (syn), .values = (val) }

/* The values offered to complete a fec or rotate are examples: K:M is
 * any ratio and a budget any size.
 */
static const struct setting settings[] = {
	ROW("private-key", "PrivateKey", SETTING_DEVICE, set_private_key,
	    write_private_key, "<file>", "@file"),
	ROW("listen-port", "ListenPort", SETTING_DEVICE, set_listen_port,
	    write_listen_port, "<port>", NULL),
	ROW("fwmark", "FwMark", SETTING_DEVICE, set_fwmark, write_fwmark,
	    "<mark>", NULL),
	ROW("shape", "Shape", SETTING_DEVICE, set_shape, write_shape,
	    "on|off", "on off"),
	/* On the command line, the peer's key is where its name goes. */
	ROW(NULL, "PublicKey", SETTING_PEER, set_public_key, write_public_key,
	    NULL, NULL),
	ROW("preshared-key", "PresharedKey", SETTING_PEER, set_preshared_key,
	    write_preshared_key, "<file>", "@file"),
	/* Several lines add up, as several entries on one line do. */
	{ .word = "allowed-ips", .key = "AllowedIPs", .of = SETTING_PEER,
	  .repeatable = true, .parse = set_allowedips,
	  .write = write_allowedips, .syntax = "<cidr>[,<cidr>...]" },
	ROW("endpoint", "Endpoint", SETTING_PEER, set_endpoint, write_endpoints,
	    "<host>:<port>[,...]", NULL),
	NUMBER_ROW("persistent-keepalive", "PersistentKeepalive", 0,
		   "<seconds> | off", "off 25"),
	ROW("fec", "FEC", SETTING_PEER, set_fec, write_fec,
	    "off | auto | <K>:<M>", "off auto 16:2 8:2"),
	NUMBER_ROW("flows", "Flows", 1, "<1-8>", "1 2 3 4 5 6 7 8"),
	NUMBER_ROW("rotate", "Rotate", 2, "off | auto | <bytes>[k|m|g]",
		   "off auto 12k 1m"),
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

/* Usage lines end before this column. */
#define USAGE_WIDTH 79

void settings_usage(FILE *out, enum setting_of of, size_t col, size_t indent)
{
	size_t i, len;

	for (i = 0; i < SETTING_COUNT; i++) {
		if (settings[i].of != of || !settings[i].word)
			continue;
		/* " [" word " " syntax "]" */
		len = 4 + strlen(settings[i].word) + strlen(settings[i].syntax);
		if (col + len > USAGE_WIDTH) {
			fprintf(out, "\n%*s", (int)indent - 1, "");
			col = indent - 1;
		}
		fprintf(out, " [%s %s]", settings[i].word, settings[i].syntax);
		col += len;
	}
}

bool settings_complete(FILE *out, enum setting_of of, const char *word)
{
	const struct setting *s;
	const char *sep = "";
	size_t i;

	if (word) {
		s = setting_by_word(of, word);
		if (!s)
			return false;
		fprintf(out, "%s\n", s->values ? s->values : "");
		return true;
	}
	for (i = 0; i < SETTING_COUNT; i++) {
		if (settings[i].of == of && settings[i].word) {
			fprintf(out, "%s%s", sep, settings[i].word);
			sep = " ";
		}
	}
	fprintf(out, "\n");
	return true;
}
