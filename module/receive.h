/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_RECEIVE_H
#define _FTV_RECEIVE_H

#include <linux/netfilter.h>

struct sk_buff;

unsigned int ftv_receive_hook(void *priv, struct sk_buff *skb,
			      const struct nf_hook_state *state);

#endif /* _FTV_RECEIVE_H */
