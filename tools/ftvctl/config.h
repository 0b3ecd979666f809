/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration file: an [Interface] section and [Peer] sections of
 * "Key = Value" lines, read into the model and written back from it.
 */
#ifndef FTVCTL_CONFIG_H
#define FTVCTL_CONFIG_H

#include <stdio.h>

#include "containers.h"

/*
 * Reads a whole file. @name is what error messages call it ("wg0.conf:12:
 * unknown key 'Foo'"). Returns a device whose flags say which interface
 * keys were given, with one peer per [Peer], or NULL after printing what
 * is wrong. The caller frees it with devices_free().
 */
struct device *config_read(FILE *f, const char *name);

/* config_read() of @path, or of standard input if @path is "-". */
struct device *config_read_file(const char *path);

/*
 * Writes @dev in the format config_read() takes, private and pre-shared
 * keys included: only for showconf, whose output is a secret.
 */
void config_write(FILE *f, const struct device *dev);

#endif
