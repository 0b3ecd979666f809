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
#include "settings.h"
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
	uint32_t seen_keys;		/* bit i: setting i given in this section */
	struct peer_index peers;	/* of dev, to find a second [Peer] */
};

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
	const struct setting *s = setting_by_key(name);
	enum section section;
	size_t i;

	if (!s) {
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
	section = s->of == SETTING_DEVICE ? SECTION_INTERFACE : SECTION_PEER;
	if (section != r->section) {
		print_error("'%s' belongs in %s, not in %s", s->key,
			    section_names[section], section_names[r->section]);
		return false;
	}
	i = setting_index(s);
	if (!s->repeatable && (r->seen_keys & (1U << i))) {
		print_error("'%s' given twice in one section", s->key);
		return false;
	}
	r->seen_keys |= 1U << i;
	return setting_parse(s, section == SECTION_INTERFACE ? (void *)r->dev :
			     (void *)r->peer, value, SETTING_FROM_FILE);
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

void config_write(FILE *f, const struct device *dev)
{
	const struct peer *peer;

	fprintf(f, "[Interface]\n");
	settings_write(f, SETTING_DEVICE, dev);
	for (peer = dev->first_peer; peer; peer = peer->next) {
		fprintf(f, "\n[Peer]\n");
		settings_write(f, SETTING_PEER, peer);
	}
}
