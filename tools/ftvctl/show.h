/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FTVCTL_SHOW_H
#define FTVCTL_SHOW_H

#include <stdbool.h>

#include "containers.h"

/* Prints @devices (a list) for people, or as one JSON object. */
void show_devices(const struct device *devices, bool json);

/* @s between double quotes, escaped for JSON. */
void print_json_string(const char *s);

#endif
