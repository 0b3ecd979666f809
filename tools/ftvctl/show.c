// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE		/* fwrite_unlocked() */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "drop-names.h"
#include "encoding.h"
#include "ipc.h"
#include "parse.h"
#include "settings.h"
#include "show.h"
#include "subcommands.h"
#include "util.h"

static const char *state_name(uint8_t state)
{
	switch (state) {
	case FTV_PEER_STATE_IDLE:
		return "idle";
	case FTV_PEER_STATE_CONNECTING:
		return "connecting";
	case FTV_PEER_STATE_ESTABLISHED:
		return "established";
	}
	return "unknown";
}

/* ---- text --------------------------------------------------------------- */

static void print_plural(bool *first, uint64_t n, const char *unit)
{
	if (!n)
		return;
	printf("%s%" PRIu64 " %s%s", *first ? "" : ", ", n, unit,
	       n == 1 ? "" : "s");
	*first = false;
}

static void print_ago(uint64_t then)
{
	time_t now = time(NULL);
	uint64_t secs;
	bool first = true;

	if (now < 0 || then > (uint64_t)now) {
		printf("in the future (clock skew?)\n");
		return;
	}
	secs = (uint64_t)now - then;
	if (!secs) {
		printf("now\n");
		return;
	}
	print_plural(&first, secs / (365 * 86400), "year");
	print_plural(&first, secs / 86400 % 365, "day");
	print_plural(&first, secs / 3600 % 24, "hour");
	print_plural(&first, secs / 60 % 60, "minute");
	print_plural(&first, secs % 60, "second");
	printf(" ago\n");
}

static void print_bytes(uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double value = bytes;
	int i = -1;

	if (bytes < 1024) {
		printf("%" PRIu64 " B", bytes);
		return;
	}
	while (value >= 1024 && i < 3) {
		value /= 1024;
		i++;
	}
	printf("%.2f %s", value, units[i]);
}

static void print_drops_text(const struct drops *drops)
{
	bool first = true;
	int i;

	for (i = 0; i <= FTV_DROPS_A_MAX; i++) {
		if (!drop_names[i] || !drops->count[i])
			continue;
		printf("%s%s %" PRIu64, first ? "  drops: " : ", ",
		       drop_names[i], drops->count[i]);
		first = false;
	}
	if (!first)
		printf("\n");
}

/* Separated by commas, each between @quote: "" for text, "\"" for JSON. */
static void print_allowedip_list(const struct peer *peer, const char *quote)
{
	char buf[ALLOWEDIP_STRLEN];
	const struct allowedip *ip;

	for (ip = peer->first_allowedip; ip; ip = ip->next) {
		allowedip_to_string(buf, ip);
		printf("%s%s%s%s", quote, buf, quote, ip->next ? ", " : "");
	}
}

static void print_fec_counters(const struct fec_stats *st, bool always)
{
	if (!always && !st->repair_sent && !st->rebuilt && !st->groups_lost)
		return;
	printf(", %" PRIu64 " repair sent, %" PRIu64 " rebuilt, %" PRIu64
	       " group%s lost", st->repair_sent, st->rebuilt, st->groups_lost,
	       st->groups_lost == 1 ? "" : "s");
}

/*
 * Said only when not the default, or when more than one is up; the
 * connections replaced only when there were some.
 */
static void print_flows_text(const struct peer *peer)
{
	bool up = peer->flags & PEER_HAS_FLOWS_UP;

	if (!(peer->flags & PEER_HAS_FLOWS) ||
	    (peer->flows == FLOWS_DEFAULT && (!up || peer->flows_up <= 1)))
		return;
	printf("  flows: %u", peer->flows);
	if (up)
		printf(", %u up", peer->flows_up);
	if ((peer->flags & PEER_HAS_ROTATIONS) && peer->rotations)
		printf(", %" PRIu64 " replaced", peer->rotations);
	printf("\n");
}

/* "rotate: 12k": the settings of one number that show.c does not print
 * itself, each when known and not the default.
 */
static void print_numbers_text(const struct peer *peer)
{
	const struct setting_number *n;
	char buf[SETTING_STRLEN];
	size_t i;

	for (i = 0; (n = setting_number(i)); i++) {
		uint32_t v = setting_number_get(n, peer);

		if (!n->show || !(peer->flags & n->has) || v == n->dflt)
			continue;
		setting_number_format(n, buf, v);
		printf("  %s: %s\n", n->show, buf);
	}
}

/* "fec: auto (16:2 now, loss 0.8 %), 1234 repair sent, 56 rebuilt, ..." */
static void print_fec_text(const struct peer *peer)
{
	const struct fec_stats *st = &peer->fec_stats;
	char fec[FEC_STRLEN];

	if (!(peer->flags & PEER_HAS_FEC))
		return;
	fec_to_string(fec, peer->fec);
	printf("  fec: %s", fec);
	if (!(peer->flags & PEER_HAS_FEC_STATS)) {
		printf("\n");
		return;
	}
	if (st->active && st->data)
		printf(" (%u:%u now, loss %.1f %%)", st->data, st->repair,
		       st->loss_ppm / 1e4);
	else if (st->active)
		printf(" (no repair now, loss %.1f %%)", st->loss_ppm / 1e4);
	else if (peer->fec.mode != FTV_FEC_OFF)
		printf(" (peer has no FEC)");
	print_fec_counters(st, st->active);
	printf("\n");
}

/* A list of more than one: the endpoint above is which of them is current. */
static void print_endpoints_text(const struct peer *peer)
{
	const struct endpoint_list *eps = peer->endpoints;
	char ep[ENDPOINT_STRLEN];
	unsigned int i;

	if (!(peer->flags & PEER_HAS_ENDPOINTS) || !eps || eps->count < 2)
		return;
	printf("  endpoints: ");
	for (i = 0; i < eps->count; i++) {
		endpoint_to_string(ep, &eps->ep[i]);
		printf("%s%s", i ? ", " : "", ep);
	}
	printf("\n");
}

/*
 * "  last reset: TTL 40, IP ID 4242; the peer's: TTL 63, IP ID 17": an
 * injector on the path sends with its own, which differ.
 */
static void print_resets_text(const struct peer *peer)
{
	const struct resets *r = &peer->resets;

	if (!(peer->flags & PEER_HAS_RESETS))
		return;
	printf("  last reset: TTL %u", r->ttl);
	if (r->has_ip_id)
		printf(", IP ID %u", r->ip_id);
	if (r->has_peer_ttl) {
		printf("; the peer's: TTL %u", r->peer_ttl);
		if (r->has_peer_ip_id)
			printf(", IP ID %u", r->peer_ip_id);
	}
	printf("\n");
}

static void print_peer_text(const struct peer *peer)
{
	char key[KEY_B64_LEN + 1], ep[ENDPOINT_STRLEN];

	key_to_base64(key, peer->public_key);
	printf("\npeer: %s\n", key);
	if ((peer->flags & PEER_HAS_PRESHARED_KEY) &&
	    !sodium_is_zero(peer->preshared_key, FTV_KEY_LEN))
		printf("  preshared key: (hidden)\n");
	if (peer->flags & PEER_HAS_ENDPOINT) {
		endpoint_to_string(ep, &peer->endpoint);
		printf("  endpoint: %s\n", ep);
	}
	print_endpoints_text(peer);
	printf("  allowed ips: ");
	if (peer->first_allowedip)
		print_allowedip_list(peer, "");
	else
		printf("(none)");
	printf("\n");
	printf("  state: %s\n", state_name(peer->state));
	if (peer->last_handshake) {
		printf("  latest handshake: ");
		print_ago(peer->last_handshake);
	}
	printf("  transfer: ");
	print_bytes(peer->rx_bytes);
	printf(" received, ");
	print_bytes(peer->tx_bytes);
	printf(" sent\n");
	if (peer->persistent_keepalive)
		printf("  persistent keepalive: every %u second%s\n",
		       peer->persistent_keepalive,
		       peer->persistent_keepalive == 1 ? "" : "s");
	print_fec_text(peer);
	print_flows_text(peer);
	print_numbers_text(peer);
	print_drops_text(&peer->drops);
	print_resets_text(peer);
}

/* The kernel never returns the private key; a public key implies one. */
static void print_device_text(const struct device *dev)
{
	char key[KEY_B64_LEN + 1];
	const struct peer *peer;

	printf("interface: %s\n", dev->name);
	if (dev->flags & DEVICE_HAS_PUBLIC_KEY) {
		key_to_base64(key, dev->public_key);
		printf("  public key: %s\n", key);
		printf("  private key: (hidden)\n");
	} else {
		printf("  public key: (none)\n");
	}
	printf("  listening port: %u\n", dev->listen_port);
	if (dev->fwmark)
		printf("  fwmark: 0x%x\n", dev->fwmark);
	if (dev->flags & DEVICE_HAS_SHAPE)
		printf("  shape: %s\n", dev->shape ? "on" : "off");
	print_drops_text(&dev->drops);
	for (peer = dev->first_peer; peer; peer = peer->next)
		print_peer_text(peer);
}

/* ---- JSON --------------------------------------------------------------- */

/*
 * A peer's JSON line is built in memory and written with one fwrite: at
 * 10^5 peers, printf's format parsing and stream locking were half of
 * what show --json cost, and then the calls for each piece a third.
 */
static struct {
	char *buf;
	size_t len, cap;
} line;

/* Room for @n more bytes of the line; out of memory ends the program. */
static char *line_room(size_t n)
{
	char *buf;

	if (line.len + n <= line.cap)
		return line.buf + line.len;
	buf = realloc(line.buf, (line.len + n) * 2);
	if (!buf) {
		print_error("out of memory for the JSON output");
		exit(1);
	}
	line.buf = buf;
	line.cap = (line.len + n) * 2;
	return line.buf + line.len;
}

static void out_mem(const char *s, size_t n)
{
	memcpy(line_room(n), s, n);
	line.len += n;
}

#define out_lit(s) out_mem(s, sizeof(s) - 1)

static void out(const char *s)
{
	out_mem(s, strlen(s));
}

static void out_u64(uint64_t v)
{
	line.len = put_decimal(line_room(20), v) - line.buf;
}

/* ", \"NAME\": VALUE", without the comma when @first */
static void out_field(bool first, const char *name, uint64_t value)
{
	if (first)
		out_lit("\"");
	else
		out_lit(", \"");
	out(name);
	out_lit("\": ");
	out_u64(value);
}

static void line_flush(void)
{
	fwrite_unlocked(line.buf, 1, line.len, stdout);
	line.len = 0;
}

/* @s quoted, with '"', '\\' and control characters escaped */
static void out_json_string(const char *s)
{
	static const char hex[] = "0123456789abcdef";

	out_lit("\"");
	for (; *s; s++) {
		unsigned char c = *s;
		char *p;

		if (c == '"' || c == '\\') {
			p = line_room(2);
			p[0] = '\\';
			p[1] = c;
			line.len += 2;
		} else if (c < 0x20) {
			p = line_room(6);
			memcpy(p, "\\u00", 4);
			p[4] = hex[c >> 4];
			p[5] = hex[c & 0xf];
			line.len += 6;
		} else {
			*line_room(1) = c;
			line.len++;
		}
	}
	out_lit("\"");
}

void print_json_string(const char *s)
{
	out_json_string(s);
	line_flush();
}

/* A peer's drops leave out the reasons only a device counts. */
static void print_drops_json(const struct drops *drops, bool device)
{
	static const struct drops none;
	static char *quiet;	/* a peer's drops when all are zero */
	static size_t quiet_len;
	size_t start = line.len;
	bool first = true;
	int i;

	/* Most peers of a large device never dropped anything. */
	if (!device && quiet && !memcmp(drops, &none, sizeof(none))) {
		out_mem(quiet, quiet_len);
		return;
	}
	out_lit("{");
	for (i = 0; i <= FTV_DROPS_A_MAX; i++) {
		if (!drop_names[i] || (!device && drop_device_only[i]))
			continue;
		out_field(first, drop_names[i], drops->count[i]);
		first = false;
	}
	out_lit("}");
	if (!device && !quiet && !memcmp(drops, &none, sizeof(none))) {
		quiet_len = line.len - start;
		quiet = malloc(quiet_len);
		if (quiet)
			memcpy(quiet, line.buf + start, quiet_len);
	}
}

/* ", \"NAME\": VALUE", or null when @has is false */
static void out_field_or_null(const char *name, bool has, uint64_t value)
{
	if (has) {
		out_field(false, name, value);
		return;
	}
	out_lit(", \"");
	out(name);
	out_lit("\": null");
}

/* null until a RST or FIN was ignored on the peer's connections */
static void print_resets_json(const struct peer *peer)
{
	const struct resets *r = &peer->resets;

	if (!(peer->flags & PEER_HAS_RESETS)) {
		out_lit(", \"resets\": null");
		return;
	}
	out_lit(", \"resets\": {");
	out_field(true, "ttl", r->ttl);
	out_field_or_null("ip_id", r->has_ip_id, r->ip_id);
	out_field_or_null("peer_ttl", r->has_peer_ttl, r->peer_ttl);
	out_field_or_null("peer_ip_id", r->has_peer_ip_id, r->peer_ip_id);
	out_lit("}");
}

/* The setting and the statistics; null for a module without FEC. */
static void print_fec_json(const struct peer *peer)
{
	const struct fec_stats *st = &peer->fec_stats;
	char fec[FEC_STRLEN];

	if (peer->flags & PEER_HAS_FEC) {
		fec_to_string(fec, peer->fec);
		out_lit("\"");
		out(fec);
		out_lit("\"");
	} else {
		out_lit("null");
	}
	if (!(peer->flags & PEER_HAS_FEC_STATS)) {
		out_lit(", \"fec_stats\": null");
		return;
	}
	if (!st->active && !st->data && !st->repair && !st->loss_ppm &&
	    !st->repair_sent && !st->rebuilt && !st->groups_lost) {
		out_lit(", \"fec_stats\": {\"active\": false, \"data\": 0, \"repair\": 0, \"loss_ppm\": 0, \"repair_sent\": 0, \"rebuilt\": 0, \"groups_lost\": 0}");
		return;
	}
	out_lit(", \"fec_stats\": {\"active\": ");
	out(st->active ? "true" : "false");
	out_field(false, "data", st->data);
	out_field(false, "repair", st->repair);
	out_field(false, "loss_ppm", st->loss_ppm);
	out_field(false, "repair_sent", st->repair_sent);
	out_field(false, "rebuilt", st->rebuilt);
	out_field(false, "groups_lost", st->groups_lost);
	out_lit("}");
}

/*
 * The same in JSON, always: a number, or a string where the setting
 * spells it as a word (rotate's "auto" and "off"); null from a module
 * that does not report it.
 */
static void print_numbers_json(const struct peer *peer)
{
	const struct setting_number *n;
	char buf[SETTING_STRLEN];
	size_t i;

	for (i = 0; (n = setting_number(i)); i++) {
		uint32_t v = setting_number_get(n, peer);

		if (!n->show)
			continue;
		if (!(peer->flags & n->has)) {
			out_field_or_null(n->show, false, 0);
		} else if (n->json_string && n->json_string(v)) {
			setting_number_format(n, buf, v);
			out_lit(", \"");
			out(n->show);
			out_lit("\": ");
			out_json_string(buf);
		} else {
			out_field(false, n->show, v);
		}
	}
}

/*
 * The configured list, [] for a peer that only answers; null from a module
 * that reports no lists (it reports an endpoint, but no list, for a peer
 * it dials).
 */
static void print_endpoints_json(const struct peer *peer)
{
	const struct endpoint_list *eps = peer->endpoints;
	char buf[ENDPOINT_STRLEN];
	unsigned int i;

	out_lit(", \"endpoints\": ");
	if (!(peer->flags & PEER_HAS_ENDPOINTS)) {
		out_lit("null");
		return;
	}
	out_lit("[");
	for (i = 0; eps && i < eps->count; i++) {
		endpoint_to_string(buf, &eps->ep[i]);
		out(i ? ", \"" : "\"");
		out(buf);
		out_lit("\"");
	}
	out_lit("]");
}

/* One line per peer: 10^5 peers stay greppable and half the size. */
static void print_peer_json(const struct peer *peer)
{
	char key[KEY_B64_LEN + 1], buf[ALLOWEDIP_STRLEN + ENDPOINT_STRLEN];
	const struct allowedip *ip;

	key_to_base64(key, peer->public_key);
	out_lit("      {\"public_key\": \"");
	out(key);
	out_lit("\", \"endpoint\": ");
	if (peer->flags & PEER_HAS_ENDPOINT) {
		endpoint_to_string(buf, &peer->endpoint);
		out_lit("\"");
		out(buf);
		out_lit("\"");
	} else {
		out_lit("null");
	}
	print_endpoints_json(peer);
	out_lit(", \"allowed_ips\": [");
	for (ip = peer->first_allowedip; ip; ip = ip->next) {
		allowedip_to_string(buf, ip);
		out_lit("\"");
		out(buf);
		out(ip->next ? "\", " : "\"");
	}
	out_lit("]");
	out_field(false, "persistent_keepalive", peer->persistent_keepalive);
	out_field(false, "last_handshake", peer->last_handshake);
	out_field(false, "rx_bytes", peer->rx_bytes);
	out_field(false, "tx_bytes", peer->tx_bytes);
	out_lit(", \"drops\": ");
	print_drops_json(&peer->drops, false);
	out_lit(", \"state\": \"");
	out(state_name(peer->state));
	out_lit("\", \"fec\": ");
	print_fec_json(peer);
	/* null from a module that does not report it */
	out_field_or_null("flows", peer->flags & PEER_HAS_FLOWS, peer->flows);
	out_field_or_null("flows_up", peer->flags & PEER_HAS_FLOWS_UP,
			  peer->flows_up);
	out_field_or_null("rotations", peer->flags & PEER_HAS_ROTATIONS,
			  peer->rotations);
	print_numbers_json(peer);
	print_resets_json(peer);
	out(peer->next ? "},\n" : "}\n");
	line_flush();
}

static void print_device_json(const struct device *dev)
{
	char key[KEY_B64_LEN + 1] = "";
	const struct peer *peer;

	if (dev->flags & DEVICE_HAS_PUBLIC_KEY)
		key_to_base64(key, dev->public_key);
	out_lit("  ");
	out_json_string(dev->name);
	out_lit(": {\n    \"public_key\": \"");
	out(key);
	out_lit("\",\n    \"listen_port\": ");
	out_u64(dev->listen_port);
	out_lit(",\n    \"fwmark\": ");
	out_u64(dev->fwmark);
	out_lit(",\n    \"shape\": ");
	if (dev->flags & DEVICE_HAS_SHAPE)
		out(dev->shape ? "true" : "false");
	else
		out_lit("null");
	out_lit(",\n    \"drops\": ");
	print_drops_json(&dev->drops, true);
	out_lit(",\n    \"peers\": [");
	out(dev->first_peer ? "\n" : "");
	line_flush();
	for (peer = dev->first_peer; peer; peer = peer->next)
		print_peer_json(peer);
	out(dev->first_peer ? "    ]\n  }" : "]\n  }");
	out(dev->next ? ",\n" : "\n");
	line_flush();
}

void show_devices(const struct device *devices, bool json)
{
	const struct device *dev;

	if (json)
		printf("{%s", devices ? "\n" : "");
	for (dev = devices; dev; dev = dev->next) {
		if (json)
			print_device_json(dev);
		else
			print_device_text(dev);
		if (!json && dev->next)
			printf("\n");
	}
	if (json)
		printf("}\n");
}

/* ---- the subcommand ----------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out, "Usage: %s show [<interface> | all] [--json]\n", PROG_NAME);
}

int show_main(int argc, char **argv)
{
	struct device *devices = NULL;
	const char *ifname = NULL;
	char name[IFNAMSIZ];
	bool json = false;
	int i, ret;

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!ifname) {
			ifname = argv[i];
		} else {
			usage(stderr);
			return 1;
		}
	}
	if (ifname && !strcmp(ifname, "all"))
		ifname = NULL;
	if (ifname && !parse_ifname(name, ifname))
		return 1;
	ret = ipc_get_devices(&devices, ifname);
	if (ret)
		return 1;
	buffer_output();
	show_devices(devices, json);
	devices_free(devices);
	return finish_output();
}
