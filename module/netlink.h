/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_NETLINK_H
#define _FTV_NETLINK_H

int ftv_genetlink_init(void);
void ftv_genetlink_uninit(void);

#endif /* _FTV_NETLINK_H */
