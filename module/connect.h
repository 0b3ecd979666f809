/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Opening connections: an initiator's, with its key exchange; the joins
 * of a session, at either end; a probe's joins; and giving up a flow so
 * that another replaces it.
 */

#ifndef _FTV_CONNECT_H
#define _FTV_CONNECT_H

#include <linux/types.h>

struct ftv_conn;
struct ftv_device;
struct ftv_peer;
struct ftv_segment;

void ftv_conn_open(struct ftv_peer *peer);
void ftv_conn_open_joins(struct ftv_peer *peer);
int ftv_conn_probe_join(struct ftv_peer *peer, u32 endpoint, int shape,
			u32 *index);
void ftv_conn_probe_join_up(struct ftv_conn *conn);
bool ftv_conn_join_take(struct ftv_device *fdev, const struct ftv_segment *seg);
void ftv_conn_join_up(struct ftv_conn *conn, u8 flags, u32 ack);
void ftv_conn_join_opened(struct ftv_conn *conn);
void ftv_conn_join_gone(struct ftv_conn *conn, u32 index);
void ftv_conn_join_gone_again(struct ftv_conn *conn);
void ftv_conn_stalled(struct ftv_conn *conn);
void ftv_conn_spent(struct ftv_conn *conn);
#ifdef DEBUG
bool ftv_conn_debug_join_wait(unsigned int ms);
void ftv_conn_debug_installed(void);
#else
static inline void ftv_conn_debug_installed(void)
{
}
#endif

#endif /* _FTV_CONNECT_H */
