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
#include <stdint.h>
#include <stdio.h>

struct peer;

/* The longest value a setting_number's format writes, and a NUL. */
#define SETTING_STRLEN 24

enum setting_of {
	SETTING_DEVICE,		/* set; [Interface] */
	SETTING_PEER,		/* peer add|set; [Peer] */
};

enum setting_from {
	SETTING_FROM_ARG,	/* the command line: keys are files */
	SETTING_FROM_FILE,	/* a configuration file: keys in base64 */
};

/*
 * A peer setting that is one number, on the wire (a u8, u16 or u32
 * attribute, as @size says) and in struct peer (a field of that size at
 * @offset, given or reported when @has is in the peer's flags). Requests
 * (ipc-write.c), replies (ipc-read.c), setconf's and syncconf's
 * comparison and show take it from here, so that a new one is a row.
 */
struct setting_number {
	uint16_t attr;		/* FTV_PEER_A_* */
	uint8_t size;		/* bytes: 1, 2 or 4 */
	size_t offset;		/* of its field in struct peer */
	uint32_t has;		/* its PEER_HAS_* flag */
	uint32_t dflt;		/* a peer's that was never given one */
	bool (*parse)(uint32_t *v, const char *value);
	/* @v as a file and show spell it; NULL: decimal */
	void (*format)(char buf[SETTING_STRLEN], uint32_t v);
	/* show's label ("  rotate: 12k" when not @dflt) and JSON key, with
	 * the value as a JSON string if @json_string says so (else a
	 * number); NULL: show.c prints it among what it prints itself
	 */
	const char *show;
	bool (*json_string)(uint32_t v);
};

struct setting {
	const char *word;	/* the command line's option; NULL: none */
	const char *key;	/* the configuration file's key */
	enum setting_of of;
	bool repeatable;	/* in a file: several lines add up */
	/* @obj: a struct device or struct peer, as @of says; NULL for a
	 * @number, whose own parser is used
	 */
	bool (*parse)(void *obj, const char *value, enum setting_from from);
	/* Its "Key = value" line, when a file is to have one (left out,
	 * a peer's setting is its default: setconf and syncconf read it
	 * so); NULL: never written
	 */
	void (*write)(FILE *f, const struct setting *s, const void *obj);
	/* A number: then @parse and @write are the table's own. */
	const struct setting_number *number;
	/* Its value as the usage line spells it ("<1-8>"). */
	const char *syntax;
	/* What completion offers for its value, separated by spaces
	 * ("@file": a file name); NULL: nothing, it is the user's to type
	 */
	const char *values;
};

/* The one whose option is @word, or NULL. */
const struct setting *setting_by_word(enum setting_of of, const char *word);
/* The one whose key is @key (any case), or NULL. */
const struct setting *setting_by_key(const char *key);
/* @value into @obj (a struct device or struct peer, as @s->of says),
 * marked given; false, with a message, if it is not one.
 */
bool setting_parse(const struct setting *s, void *obj, const char *value,
		   enum setting_from from);
/* The lines of @obj's settings, in the table's order. */
void settings_write(FILE *f, enum setting_of of, const void *obj);
/* " [word syntax]" for each of @of's options, @col being where the
 * cursor is on the line: lines are broken before 80 columns and go on
 * @indent columns in.
 */
void settings_usage(FILE *out, enum setting_of of, size_t col, size_t indent);
/* One line: @of's option words, or with @word the values completion
 * offers for that option's value; false if there is no such option.
 */
bool settings_complete(FILE *out, enum setting_of of, const char *word);
/* Its place in the table: below 32, a bit in a mask. */
size_t setting_index(const struct setting *s);

/* The @i-th peer setting that is a number, or NULL past the last. */
const struct setting_number *setting_number(size_t i);
/* The one of attribute @attr (FTV_PEER_A_*), or NULL. */
const struct setting_number *setting_number_of(uint16_t attr);
/* The number of attribute @attr that @peer was given, or its default;
 * @attr must be a row's.
 */
uint32_t peer_number(const struct peer *peer, uint16_t attr);
/* Its field in @peer, given or not. */
uint32_t setting_number_get(const struct setting_number *n,
			    const struct peer *peer);
/* Its field, and its flag: given. */
void setting_number_set(const struct setting_number *n, struct peer *peer,
			uint32_t v);
/* The value @peer was given, or the default. */
uint32_t setting_number_value(const struct setting_number *n,
			      const struct peer *peer);
/* @v as a file and show spell it. */
void setting_number_format(const struct setting_number *n,
			   char buf[SETTING_STRLEN], uint32_t v);

#endif
