/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_NETLINK_H
#define _FTV_NETLINK_H

#include <linux/types.h>

struct ftv_peer;

int ftv_genetlink_init(void);
void ftv_genetlink_uninit(void);
void ftv_netlink_notify(struct ftv_peer *peer, u8 event);

#endif /* _FTV_NETLINK_H */
