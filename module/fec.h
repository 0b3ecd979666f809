/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_FEC_H
#define _FTV_FEC_H

#include <linux/skbuff.h>
#include <linux/types.h>

struct ftv_peer;

/**
 * struct ftv_fec_config - a peer's FEC setting
 * @mode: enum ftv_fec_mode
 * @data: K, data segments per group (FTV_FEC_FIXED only)
 * @repair: M, repair segments per group (FTV_FEC_FIXED only)
 */
struct ftv_fec_config {
	u8 mode;
	u8 data;
	u8 repair;
};

struct ftv_fec_config ftv_fec_config(struct ftv_peer *peer);
void ftv_fec_configure(struct ftv_peer *peer, u8 mode, u8 data, u8 repair);
int ftv_fec_put_stats(struct sk_buff *skb, struct ftv_peer *peer, int attr);

#endif /* _FTV_FEC_H */
