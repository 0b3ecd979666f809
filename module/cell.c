// SPDX-License-Identifier: GPL-2.0
/*
 * Delivery cells: a NAPI context per possible CPU of a device, through
 * which opened packets reach the inner stack, in the order they were
 * queued, by GRO. Each connection delivers through its sending CPU's cell
 * (conn.c), whichever CPU opened its packets (queue.c, open.c).
 */

#include "cell.h"

#include <linux/netdevice.h>
#include <linux/percpu.h>

static int cell_poll(struct napi_struct *napi, int budget)
{
	struct ftv_cell *cell = container_of(napi, struct ftv_cell,
						napi);
	struct sk_buff_head batch;
	struct sk_buff *skb;
	int done = 0;

	__skb_queue_head_init(&batch);
	spin_lock(&cell->queue.lock);
	while (done + skb_queue_len(&batch) < budget &&
	       (skb = __skb_dequeue(&cell->queue)) != NULL)
		__skb_queue_tail(&batch, skb);
	spin_unlock(&cell->queue.lock);
	while ((skb = __skb_dequeue(&batch)) != NULL) {
		napi_gro_receive(napi, skb);
		++done;
	}
	/* A packet queued after we looked sets NAPI's missed bit, and
	 * napi_complete_done() then schedules us again.
	 */
	if (done < budget)
		napi_complete_done(napi, done);
	return done;
}

/**
 * ftv_cells_init - a delivery cell per possible CPU
 * @cells: receives them
 * @dev: the device they deliver to
 *
 * Return: 0 or -ENOMEM.
 */
int ftv_cells_init(struct ftv_cell __percpu **cells,
		   struct net_device *dev)
{
	int cpu;

	*cells = alloc_percpu(struct ftv_cell);
	if (!*cells)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct ftv_cell *cell = per_cpu_ptr(*cells, cpu);

		skb_queue_head_init(&cell->queue);
		netif_napi_add(dev, &cell->napi, cell_poll);
		napi_enable(&cell->napi);
	}
	return 0;
}

/**
 * ftv_cells_uninit - stop and free the cells
 * @cells: cells nothing delivers to any more
 */
void ftv_cells_uninit(struct ftv_cell __percpu *cells)
{
	int cpu;

	if (!cells)
		return;
	for_each_possible_cpu(cpu) {
		struct ftv_cell *cell = per_cpu_ptr(cells, cpu);

		napi_disable(&cell->napi);
		__netif_napi_del(&cell->napi);
		skb_queue_purge(&cell->queue);
	}
	/* __netif_napi_del() leaves the wait for NAPI's RCU readers to us. */
	synchronize_net();
	free_percpu(cells);
}

/**
 * ftv_cell_deliver - queue opened packets for delivery, in order
 * @cell: the connection's cell
 * @list: the packets; emptied
 *
 * One cell's packets are delivered in the order they were queued,
 * whichever CPU its NAPI runs on. A cell polls one budget at a time on
 * one CPU while every CPU's workers may feed it, so it is bounded: at
 * FTV_CELL_BACKLOGS times net.core.netdev_max_backlog packets. One CPU's
 * backlog (what gro_cells allows) is too little here: a connection
 * releases everything queued behind a slow job at once when that job is
 * done, up to its whole queue (3,072 segments), and dropping that burst
 * would be loss ftv made itself; at 1,000, four streams over a 200 ms
 * path lost enough to fall to 0.6 of WireGuard. What would go past the
 * bound is dropped, the newest first, and left to the caller to count.
 *
 * Return: how many packets were dropped.
 */
unsigned int ftv_cell_deliver(struct ftv_cell *cell,
			      struct sk_buff_head *list)
{
	unsigned int room, dropped = 0;
	struct sk_buff *skb;

	if (skb_queue_empty(list))
		return 0;
	spin_lock_bh(&cell->queue.lock);
	room = FTV_CELL_BACKLOGS * ftv_compat_max_backlog();
	room = room > skb_queue_len(&cell->queue) ?
	       room - skb_queue_len(&cell->queue) : 0;
	while (skb_queue_len(list) > room) {
		skb = __skb_dequeue_tail(list);
		kfree_skb(skb);
		++dropped;
	}
	skb_queue_splice_tail_init(list, &cell->queue);
	spin_unlock(&cell->queue.lock);
	/* With bottom halves still off, so that the poll runs as they come
	 * back on, here, rather than at the next interrupt.
	 */
	napi_schedule(&cell->napi);
	local_bh_enable();
	return dropped;
}
