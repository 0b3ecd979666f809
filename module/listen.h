/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_LISTEN_H
#define _FTV_LISTEN_H

#include <linux/types.h>

struct ftv_device;
struct ftv_segment;
struct nf_hook_state;
struct sk_buff;
struct work_struct;

bool ftv_listen_receive(struct ftv_device *fdev, struct sk_buff *skb,
			struct ftv_segment *seg, unsigned int thoff,
			const struct nf_hook_state *state);
void ftv_listen_handshake_worker(struct work_struct *work);

#endif /* _FTV_LISTEN_H */
