/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_SHAPE_H
#define _FTV_SHAPE_H

#include <linux/types.h>

/* What @len bytes become when shaped: four characters for every three. */
#define FTV_SHAPED_LEN(len) (((len) * 4 + 2) / 3)

unsigned int ftv_shape_encode(const u8 *in, unsigned int len, u8 *out);
int ftv_shape_decode(const u8 *in, unsigned int len, u8 *out);
unsigned int ftv_shape_read(u8 *buf, unsigned int len, unsigned int room);

#ifdef DEBUG
bool ftv_shape_selftest(void);
#endif

#endif /* _FTV_SHAPE_H */
