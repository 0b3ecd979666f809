/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_EVENT_H
#define _FTV_EVENT_H

#include <linux/types.h>

struct ftv_endpoint;
struct ftv_peer;
struct sk_buff;

/* The family whose "peers" group events go to: netlink.c's. */
extern struct genl_family ftv_genl_family;

int ftv_event_put_endpoint(struct sk_buff *skb, const struct ftv_endpoint *ep);
u8 ftv_event_flows_up(struct ftv_peer *peer);
void ftv_event_notify(struct ftv_peer *peer, u8 event);

#endif /* _FTV_EVENT_H */
