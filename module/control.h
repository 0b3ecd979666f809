/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sealed control messages: those that carry no inner packet
 * (enum ftv_control_type in messages.h, which has their layouts).
 */

#ifndef _FTV_CONTROL_H
#define _FTV_CONTROL_H

#include "fec.h"

#include <linux/types.h>

struct ftv_conn;
struct ftv_msg_probe_tell;
struct sk_buff;

/**
 * struct ftv_control_rx - what a received control message comes with
 * @counter: its message counter, which the replay window passed
 * @rebuilt: where a packet that a repair message rebuilt goes
 * @arg: @rebuilt's argument
 */
struct ftv_control_rx {
	u64 counter;
	ftv_fec_rebuilt_t rebuilt;
	void *arg;
};

void ftv_control_accept(struct ftv_conn *conn, struct sk_buff *skb,
			const struct ftv_control_rx *rx);
void ftv_control_send_hello(struct ftv_conn *conn);
void ftv_control_send_keepalive(struct ftv_conn *conn);
void ftv_control_send_ask(struct ftv_conn *conn);
void ftv_control_send_session_keepalive(struct ftv_conn *conn);
void ftv_control_send_opening(struct ftv_conn *conn);
void ftv_control_send_join_gone(struct ftv_conn *about, u32 index);
void ftv_control_send_join_gone_here(struct ftv_conn *join);
void ftv_control_send_budget(struct ftv_conn *conn);
void ftv_control_send_probe_tell(struct ftv_conn *conn,
				 const struct ftv_msg_probe_tell *tell);
void ftv_control_send_padded(struct ftv_conn *conn, const void *msg,
			     unsigned int msg_len, unsigned int len);
void ftv_control_send_loss(struct ftv_conn *conn, u32 loss_ppm);

#endif /* _FTV_CONTROL_H */
