/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_ICMP_H
#define _FTV_ICMP_H

struct list_head;
struct sk_buff;

void ftv_icmp_receive(struct list_head *devices, struct sk_buff *skb);

#endif /* _FTV_ICMP_H */
