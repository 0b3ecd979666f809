/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The settings ftvctl takes on its command line (set, peer add|set) and
 * in a configuration file, each declared once: its option word, its key,
 * whose setting it is, one parser for both places, which also marks it
 * given (the DEVICE_HAS_* or PEER_HAS_* flag), and how a file (showconf,
 * and what setconf and syncconf compare) says it.
 */
#ifndef FTVCTL_SETTINGS_H
#define FTVCTL_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum setting_of {
	SETTING_DEVICE,		/* set; [Interface] */
	SETTING_PEER,		/* peer add|set; [Peer] */
};

enum setting_from {
	SETTING_FROM_ARG,	/* the command line: keys are files */
	SETTING_FROM_FILE,	/* a configuration file: keys in base64 */
};

struct setting {
	const char *word;	/* the command line's option; NULL: none */
	const char *key;	/* the configuration file's key */
	enum setting_of of;
	bool repeatable;	/* in a file: several lines add up */
	/* @obj: a struct device or struct peer, as @of says */
	bool (*parse)(void *obj, const char *value, enum setting_from from);
	/* Its "Key = value" line, when a file is to have one (left out,
	 * a peer's setting is its default: setconf and syncconf read it
	 * so); NULL: never written
	 */
	void (*write)(FILE *f, const struct setting *s, const void *obj);
};

/* The one whose option is @word, or NULL. */
const struct setting *setting_by_word(enum setting_of of, const char *word);
/* The one whose key is @key (any case), or NULL. */
const struct setting *setting_by_key(const char *key);
/* The lines of @obj's settings, in the table's order. */
void settings_write(FILE *f, enum setting_of of, const void *obj);
/* Its place in the table, below SETTING_COUNT. */
size_t setting_index(const struct setting *s);

#define SETTING_COUNT 12

#endif
