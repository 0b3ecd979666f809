/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_RECEIVE_H
#define _FTV_RECEIVE_H

#include <linux/netfilter.h>

struct sk_buff;
struct work_struct;

unsigned int ftv_receive_hook(void *priv, struct sk_buff *skb,
			      const struct nf_hook_state *state);
void ftv_receive_handshake_worker(struct work_struct *work);
void ftv_receive_worker(struct work_struct *work);
void ftv_receive_finish_job(struct sk_buff *head);

#endif /* _FTV_RECEIVE_H */
