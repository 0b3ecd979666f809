/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The writers of a connection's state that conn.c, which owns the state
 * machine, lends to connect.c, which opens connections. Nothing else
 * includes this file: every other room changes a connection's state
 * through the functions conn.h and connect.h declare, which say what
 * happened rather than which state follows.
 */

#ifndef _FTV_CONN_STATE_H
#define _FTV_CONN_STATE_H

#include "conn.h"

void ftv_conn_set_state(struct ftv_conn *conn, enum ftv_conn_state state);
bool ftv_conn_publish_locked(struct ftv_conn *conn, enum ftv_conn_state state);
void ftv_conn_retire_join_locked(struct ftv_conn *conn);

#endif /* _FTV_CONN_STATE_H */
