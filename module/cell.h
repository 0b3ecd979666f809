/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_CELL_H
#define _FTV_CELL_H

#include <linux/netdevice.h>
#include <linux/skbuff.h>

/* A cell holds this many times net.core.netdev_max_backlog packets: at
 * the default, about one connection's whole receive queue
 * (FTV_QUEUE_MAX_SEGS in queue.h), which it may release at once.
 */
#define FTV_CELL_BACKLOGS 3

/**
 * struct ftv_cell - a NAPI context that delivers opened packets
 * @queue: packets to deliver, in order; its lock guards it
 * @napi: delivers them through GRO
 */
struct ftv_cell {
	struct sk_buff_head queue;
	struct napi_struct napi;
};

int ftv_cells_init(struct ftv_cell __percpu **cells, struct net_device *dev);
void ftv_cells_uninit(struct ftv_cell __percpu *cells);
unsigned int ftv_cell_deliver(struct ftv_cell *cell, struct sk_buff_head *list);

#endif /* _FTV_CELL_H */
